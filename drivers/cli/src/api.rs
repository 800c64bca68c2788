//! Checks for front ends other than the command line (the Python bindings
//! in `drivers/python`): the same spec loading, the same facade
//! ([`ptxeq_check::Checker`]) and the same JSON reports as `ptxeq check
//! --format json` / `ptxeq race --format json`, with every usage error
//! returned as its message instead of printed.
//!
//! A kernel may be given as PTX text instead of a file: [`load`] takes a
//! map from the spec's `ptx` path to the text registered under that path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptxeq_check::{Checker, Report, Request};
use ptxeq_db::{Database, Slot, SpecInput};
use ptxeq_spec::CheckSpec;

use crate::spec_args::LoadedSpec;

/// Which command's report to produce (`Mode::Auto`: check for a pair,
/// race for a single kernel).
pub use ptxeq_check::Mode;

/// Registers every kernel `spec` names — from `texts` when its `ptx` path
/// is a key there, else read from disk — and rejects PTX with syntax or
/// lowering errors (the message is the rendered diagnostics, as `ptxeq
/// check` prints them).
pub fn load(
    db: &Database,
    spec: CheckSpec,
    spec_path: &Path,
    texts: &BTreeMap<PathBuf, String>,
) -> Result<LoadedSpec, String> {
    let mut kernels = Vec::new();
    for (word, kref) in spec.kernels.iter() {
        let text = match texts.get(&kref.ptx) {
            Some(t) => t.clone(),
            None => crate::input::read(&kref.ptx)?,
        };
        let file = db.add_file(&kref.ptx, text);
        let (errors, rendered) = crate::cmd_parse::rendered_errors(db, file, &kref.ptx);
        if errors > 0 {
            return Err(rendered.trim_end().to_owned());
        }
        kernels.push((Slot::of(word), file));
    }
    if kernels.is_empty() {
        return Err(format!("{} names no kernel", spec_path.display()));
    }
    let spec = SpecInput::new(db, spec_path.to_path_buf(), spec);
    Ok(LoadedSpec { spec, kernels })
}

/// Options of [`run_json`] beyond the spec (the CLI's flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// `--formula-max-steps` (a check against a formula, and `lift`).
    pub formula_max_steps: Option<u64>,
    /// `--json-formula-chars` and `--show` of a check's report.
    pub json: crate::cmd_check::JsonOptions,
}

/// Runs `mode` on a loaded spec and returns its JSON report; `Err` is a
/// usage error (the spec does not fit the kernels), never a verdict.
pub fn run_json(
    checker: &Checker,
    mode: Mode,
    loaded: &LoadedSpec,
    opts: RunOptions,
) -> Result<serde_json::Value, String> {
    let outcome = run(checker, mode, loaded, opts)?;
    let db = checker.db();
    Ok(match &outcome.report {
        Report::Lift(reports) => crate::cmd_lift::report_json(reports),
        Report::Check(_) => crate::cmd_check::report_json_with(db, loaded, &outcome, opts.json),
        Report::Race(_) => crate::cmd_race::report_json(db, &outcome),
    })
}

/// [`run_json`]'s report as compact JSON text. A check's report is
/// serialised straight from its typed form, never built as a tree of
/// JSON values first (a refuted attention row's witness names tens of
/// thousands of inputs): the same JSON as [`run_json`]'s value.
pub fn run_json_text(
    checker: &Checker,
    mode: Mode,
    loaded: &LoadedSpec,
    opts: RunOptions,
) -> Result<String, String> {
    let outcome = run(checker, mode, loaded, opts)?;
    let db = checker.db();
    let value = match &outcome.report {
        Report::Lift(reports) => crate::cmd_lift::report_json(reports),
        Report::Check(_) => {
            return Ok(crate::cmd_check::report_json_text(
                db, loaded, &outcome, opts.json,
            ));
        }
        Report::Race(_) => crate::cmd_race::report_json(db, &outcome),
    };
    serde_json::to_string(&value).map_err(|e| format!("cannot serialise the report: {e}"))
}

/// Runs `mode`; `Err` is a usage error.
fn run(
    checker: &Checker,
    mode: Mode,
    loaded: &LoadedSpec,
    opts: RunOptions,
) -> Result<ptxeq_check::Outcome, String> {
    let req = Request {
        formula_max_steps: opts.formula_max_steps,
        ..Request::new(loaded, mode)
    };
    let outcome = checker.run(&req);
    if let (Some(why), false) = (&outcome.invalid, outcome.mode == Mode::Lift) {
        return Err(why.clone());
    }
    Ok(outcome)
}
