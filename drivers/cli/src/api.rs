//! Checks for front ends other than the command line (the Python bindings
//! in `drivers/python`): the same spec loading, the same
//! [`ptxeq_db::check`] / [`ptxeq_db::race_check`] calls and the same JSON
//! reports as `ptxeq check --format json` / `ptxeq race --format json`,
//! with every usage error returned as its message instead of printed.
//!
//! A kernel may be given as PTX text instead of a file: [`load`] takes a
//! map from the spec's `ptx` path to the text registered under that path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ptxeq_db::{CheckReport, CheckVerdict, Database, RaceVerdict, Slot, SpecInput};
use ptxeq_spec::CheckSpec;

use crate::spec_args::LoadedSpec;

/// Which command's report to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `ptxeq check`: schema `ptxeq.check/1`.
    Check,
    /// `ptxeq race`: schema `ptxeq.race/1`.
    Race,
    /// `ptxeq lift`: schema `ptxeq.lift/1`.
    Lift,
}

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

/// The check of a loaded spec, as `ptxeq check` runs it: against the
/// reference kernel, or against the reference formula when the spec has one
/// (`formula_max_steps`: `--formula-max-steps`).
pub fn check_report(
    db: &Database,
    loaded: &LoadedSpec,
    formula_max_steps: Option<u64>,
) -> CheckReport {
    let formula = loaded.spec.spec(db).kernels.formula().cloned();
    match (&formula, loaded.kernels.first()) {
        (Some(f), Some(&(_, candidate))) => {
            let mut fopts = ptxeq_db::FormulaOptions::default();
            if let Some(n) = formula_max_steps {
                fopts.max_steps = n;
            }
            ptxeq_db::check_formula(db, loaded.spec, candidate, f, fopts)
        }
        _ => ptxeq_db::check(db, loaded.spec, &loaded.kernels),
    }
}

/// Options of [`run_json`] beyond the spec (the CLI's flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// `--formula-max-steps` (a check against a formula, and `lift`).
    pub formula_max_steps: Option<u64>,
}

/// Runs `mode` on a loaded spec and returns its JSON report; `Err` is a
/// usage error (the spec does not fit the kernels), never a verdict.
pub fn run_json(
    db: &Database,
    mode: Mode,
    loaded: &LoadedSpec,
    opts: RunOptions,
) -> Result<serde_json::Value, String> {
    let start = Instant::now();
    match mode {
        Mode::Lift => {
            let mut fopts = ptxeq_db::FormulaOptions::default();
            if let Some(n) = opts.formula_max_steps {
                fopts.max_steps = n;
            }
            let reports: Vec<_> = loaded
                .kernels
                .iter()
                .map(|&(slot, file)| ptxeq_db::lift(db, loaded.spec, slot, file, fopts))
                .collect();
            Ok(crate::cmd_lift::report_json(&reports))
        }
        Mode::Check => {
            let report = check_report(db, loaded, opts.formula_max_steps);
            let elapsed = start.elapsed();
            if let CheckVerdict::InvalidInput(why) = &report.verdict {
                return Err(why.clone());
            }
            Ok(crate::cmd_check::report_json(db, loaded, &report, elapsed))
        }
        Mode::Race => {
            let reports = ptxeq_db::race_check(db, loaded.spec, &loaded.kernels);
            let elapsed = start.elapsed();
            if let Some(e) = reports.iter().find_map(|r| r.input_error.as_ref()) {
                return Err(format!("the spec does not fit the kernel: {e}"));
            }
            let verdict = RaceVerdict::most_telling(reports.iter().map(|r| r.verdict))
                .unwrap_or(RaceVerdict::Unsupported);
            Ok(crate::cmd_race::report_json(db, &reports, verdict, elapsed))
        }
    }
}
