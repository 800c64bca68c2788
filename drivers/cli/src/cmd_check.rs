//! `ptxeq check`: prove a candidate kernel equivalent to a reference over
//! the reals, or show the bug (docs/semantics.md §1).
//!
//! The verdict line comes first. A race, deadlock or bad access in either
//! kernel is reported as such (with both accesses), before any
//! verification condition. Otherwise, per output tensor: proved / refuted /
//! unknown counts, then the first failing elements with both formulas and
//! the counterexample, then the modelling assumptions.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ptxeq_db::{CheckReport, CheckVerdict, Database};
use ptxeq_spec::CheckSpec;
use ptxeq_verdicts::{ElementFailure, Failure, TensorVerdicts};
use serde_json::json;

use crate::exit::Exit;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, LoadedSpec, PairLaunchArgs, SpecFlagArgs};

/// JSON report schema (documented in README "JSON reports").
pub const SCHEMA: &str = "ptxeq.check/1";

/// What every equivalence verdict rests on (printed with every result).
pub const ASSUMPTIONS: &[&str] = &[
    "real arithmetic: rounding modes, .ftz, .sat and f16/bf16/tf32 precision are the identity on real values (fast-math convention)",
    "input tensor elements are arbitrary finite reals; distinct pointer params do not alias",
    "all thread schedules: both kernels are race-free, so one schedule gives every schedule's outputs",
    "an element written by one kernel and not the other is a difference (an inout element left unwritten keeps its input value)",
];

/// What a verdict over integer tensor data rests on (printed when the
/// spec has an integer tensor).
pub const INT_ASSUMPTION: &str = "integer tensor data: exact arithmetic modulo 2^w at each register width (s32/u32 share Z/2^32); an integer converted to a float is its exact value (rounding ignored, as above); division by zero gives the same unspecified value in both kernels";

/// The standing assumptions of a check of `spec`'s kind (kernel or
/// formula reference), plus [`INT_ASSUMPTION`] when `spec` has an integer
/// tensor.
pub(crate) fn assumptions(spec: &CheckSpec) -> Vec<&'static str> {
    let mut v = if spec.kernels.formula().is_some() {
        FORMULA_ASSUMPTIONS.to_vec()
    } else {
        ASSUMPTIONS.to_vec()
    };
    if spec
        .tensors
        .values()
        .any(|t| !t.dtype.is_float() && t.dtype != ptxeq_spec::DType::Pred)
    {
        v.push(INT_ASSUMPTION);
    }
    v
}

/// Command-line options of `check` beyond the spec.
pub struct CheckOptions {
    pub format: ReportFormat,
    /// Failing elements printed per tensor (human output).
    pub show: usize,
    /// Write every verification condition as SMT-LIB2 here.
    pub emit_smt: Option<PathBuf>,
    /// `--formula`: the reference is this formula (text or `@FILE`).
    pub formula: Option<String>,
    /// `--formula-max-steps`.
    pub formula_max_steps: Option<u64>,
}

/// What a verdict against a formula reference rests on (replacing the
/// kernel-pair lines of [`ASSUMPTIONS`]).
pub const FORMULA_ASSUMPTIONS: &[&str] = &[
    "real arithmetic: rounding modes, .ftz, .sat and f16/bf16/tf32 precision are the identity on real values (fast-math convention)",
    "input tensor elements are arbitrary finite reals; distinct pointer params do not alias",
    "all thread schedules: the candidate is race-free, so one schedule gives every schedule's outputs",
    "the formula is the reference: every element of a tensor it defines (in the compared region) must be written by the candidate with that value (an inout element left unwritten keeps its input value); a tensor the candidate writes and the formula does not define is a difference",
    "float scalars take the value the candidate's param receives (the spec's decimal rounded to the param's type)",
];

pub fn run(
    targets: &[PathBuf],
    args: &SpecFlagArgs,
    pair: &PairLaunchArgs,
    candidate_entry: Option<String>,
    candidate_params: Option<String>,
    opts: &CheckOptions,
) -> Exit {
    let db = Database::default();
    let loaded = match targets {
        [_, _] if opts.formula.is_some() => {
            eprintln!(
                "error: --formula is the reference: give one PTX file (the candidate) with it"
            );
            None
        }
        [one] if opts.formula.is_some() && one.extension().is_some_and(|e| e == "toml") => {
            eprintln!(
                "error: {} is a spec; write the formula in its [reference] table (`formula = \"…\"`)",
                one.display()
            );
            None
        }
        [one]
            if pair.is_empty()
                && let Some(f) = &opts.formula =>
        {
            spec_args::load_formula(&db, one, args, f)
        }
        [_] if !pair.is_empty() => {
            eprintln!(
                "error: --ref-* / --cand-* launch flags go with two PTX files (the flag form); \
                 a spec sets them in [reference.launch] / [candidate.launch]"
            );
            None
        }
        [one] => spec_args::load_checked(&db, one, args),
        [reference, candidate] => spec_args::load_pair(
            &db,
            reference,
            candidate,
            args,
            pair,
            candidate_entry,
            candidate_params,
        ),
        _ => {
            eprintln!("error: give a spec (`check.toml`) or two PTX files (reference, candidate)");
            None
        }
    };
    let Some(loaded) = loaded else {
        return Exit::Invalid;
    };
    let start = Instant::now();
    let formula = loaded.spec.spec(&db).kernels.formula().cloned();
    let report = crate::api::check_report(&db, &loaded, opts.formula_max_steps);
    let elapsed = start.elapsed();
    if let CheckVerdict::InvalidInput(why) = &report.verdict {
        eprintln!("error: {why}");
        return Exit::Invalid;
    }
    match opts.format {
        ReportFormat::Human => print_human(&db, &loaded, &report, opts.show, elapsed),
        ReportFormat::Json => print_json(&db, &loaded, &report, elapsed),
        ReportFormat::Sarif => {
            let names = InputNames::of(&db, &loaded, &report);
            let log = crate::sarif::render_check(&db, &report, &names);
            outln!("{}", serde_json::to_string_pretty(&log).unwrap_or_default());
        }
    }
    if let (Some(dir), Some(f), Some(&(_, candidate))) =
        (&opts.emit_smt, &formula, loaded.kernels.first())
        && report.verdicts.is_some()
    {
        let mut fopts = ptxeq_db::FormulaOptions::default();
        if let Some(n) = opts.formula_max_steps {
            fopts.max_steps = n;
        }
        match ptxeq_db::emit_smt_formula(&db, loaded.spec, candidate, f, fopts, dir) {
            Ok(n) => eprintln!(
                "wrote {n} verification condition(s) (formula = candidate) as SMT-LIB2 to {}",
                dir.display()
            ),
            Err(e) => {
                eprintln!("error: cannot write SMT-LIB2 to {}: {e}", dir.display());
                return Exit::Invalid;
            }
        }
    } else if let Some(dir) = &opts.emit_smt
        && report.verdicts.is_some()
    {
        match ptxeq_db::emit_smt(&db, loaded.spec, &loaded.kernels, dir) {
            Ok(n) => eprintln!(
                "wrote {n} verification condition(s) as SMT-LIB2 to {} (elements whose two formulas are the same term need none)",
                dir.display()
            ),
            Err(e) => {
                eprintln!("error: cannot write SMT-LIB2 to {}: {e}", dir.display());
                return Exit::Invalid;
            }
        }
    }
    Exit::of_class(report.verdict.exit_class())
}

/// The names of every input number (tensors, then symbolic scalars), as
/// witnesses and `tensor_numbers` use them.
pub struct InputNames {
    pub names: Vec<String>,
    /// Numbers from here on are symbolic scalars (printed without index).
    pub first_symbol: u32,
}

impl InputNames {
    pub fn of(db: &Database, loaded: &LoadedSpec, report: &CheckReport) -> InputNames {
        match report.kernels.iter().find_map(|k| k.input.as_ref()) {
            Some(input) => InputNames {
                names: input.input_names(),
                first_symbol: input.first_symbol(),
            },
            // No kernel bound: the spec's own numbering (tensors, `[globals]`
            // inputs), then its symbolic scalars.
            None => {
                let spec = loaded.spec.spec(db);
                let mut names: Vec<String> =
                    spec.input_names().into_iter().map(str::to_owned).collect();
                let first_symbol = names.len() as u32;
                names.extend(
                    spec.scalars
                        .iter()
                        .filter(|(_, v)| v.symbolic().is_some())
                        .map(|(n, _)| n.clone()),
                );
                InputNames {
                    names,
                    first_symbol,
                }
            }
        }
    }

    /// `x[i]` for a tensor element, `alpha` for a symbolic scalar.
    pub(crate) fn label(&self, tensor: u32, index: u64) -> String {
        match self.names.get(tensor as usize) {
            Some(n) if tensor >= self.first_symbol => n.clone(),
            Some(n) => format!("{n}[{index}]"),
            None => format!("tensor#{tensor}[{index}]"),
        }
    }

    /// The symbolic scalars' names.
    fn symbols(&self) -> &[String] {
        self.names
            .get(self.first_symbol as usize..)
            .unwrap_or_default()
    }
}

/// CTA ids in words: `(0,0,0), (1,0,0) and 6 more`.
pub(crate) fn cta_list(ctas: &[[u32; 3]], shown: usize) -> String {
    if ctas.is_empty() {
        return "none".into();
    }
    let list: Vec<String> = ctas
        .iter()
        .take(shown)
        .map(|c| format!("({},{},{})", c[0], c[1], c[2]))
        .collect();
    let more = ctas.len().saturating_sub(shown);
    if more > 0 {
        format!("{} and {more} more", list.join(", "))
    } else {
        list.join(", ")
    }
}

/// Per kernel, the CTAs the verdict covers, in words.
fn ctas_lines(report: &CheckReport) -> Vec<String> {
    report
        .kernels
        .iter()
        .map(|k| {
            let p = &k.plan;
            let g = p.launch.grid;
            let total = p.grid_ctas();
            format!(
                "{}: CTAs checked: {} of a {}x{}x{} grid ({} of {total}; {})",
                k.slot.word(),
                cta_list(&p.ctas, 4),
                g[0],
                g[1],
                g[2],
                p.ctas.len(),
                p.how
            )
        })
        .collect()
}

/// Every assumption about CTAs, compared regions and symbolic scalars.
fn scope_assumptions(spec: &CheckSpec, report: &CheckReport, names: &InputNames) -> Vec<String> {
    let mut out = ctas_lines(report);
    for k in &report.kernels {
        for a in k.plan.assumptions() {
            out.push(format!("{}: {a}", k.slot.word()));
        }
    }
    for (name, t) in &spec.tensors {
        if let Some(r) = &t.compare {
            out.push(format!(
                "tensor {name}: only the region {} is compared (half-open ranges); elements \
                 outside it are not compared",
                ptxeq_spec::show_region(r)
            ));
        }
    }
    let symbols = names.symbols();
    if !symbols.is_empty() {
        let described: Vec<String> = symbols
            .iter()
            .map(|n| match spec.scalars.get(n).and_then(|v| v.symbolic()) {
                Some(d) => format!("{n} ({d})"),
                None => n.clone(),
            })
            .collect();
        out.push(format!(
            "symbolic scalars {}: free real symbols, the same in both kernels (any finite value)",
            described.join(", ")
        ));
    }
    out
}

fn tensors(report: &CheckReport) -> &[TensorVerdicts] {
    report.verdicts.as_ref().map_or(&[], |v| &v.tensors)
}

fn recoveries(report: &CheckReport) -> Vec<String> {
    report
        .verdicts
        .as_ref()
        .map(|v| v.recoveries.clone())
        .unwrap_or_default()
}

pub(crate) fn print_human(
    db: &Database,
    loaded: &LoadedSpec,
    report: &CheckReport,
    show: usize,
    elapsed: Duration,
) {
    let spec = loaded.spec.spec(db);
    let verdict_line = match &report.verdict {
        CheckVerdict::Kernel { slot, verdict } => {
            format!("{} (in the {} kernel)", verdict.word(), slot.word())
        }
        CheckVerdict::Undecided => "unsupported (undecided: see below)".to_string(),
        v => v.word().to_string(),
    };
    outln!("{verdict_line}");
    if let Some(f) = spec.kernels.formula() {
        outln!("reference: the formula {}", f.origin());
        for line in f.text.trim_end().lines() {
            outln!("  | {line}");
        }
    }
    crate::cmd_race::print_kernels(db, &report.kernels);
    if matches!(report.verdict, CheckVerdict::Kernel { .. }) {
        outln!();
        outln!(
            "no verification condition was checked: the outputs of a kernel that is not race-free depend on the schedule"
        );
        outln!("time: {:.1} ms", elapsed.as_secs_f64() * 1e3);
        return;
    }
    outln!();
    let names = InputNames::of(db, loaded, report);
    for t in tensors(report) {
        let region = match &t.compare_region {
            Some(r) => format!(
                " in the region {} ({} written element(s) outside it not compared)",
                ptxeq_spec::show_region(r),
                t.outside
            ),
            None => String::new(),
        };
        outln!(
            "output {}: {} element(s){region}: {} proved ({} identical terms), {} refuted, {} unknown",
            t.name,
            t.compared,
            t.proved,
            t.identical,
            t.refuted,
            t.unknown
        );
        if t.compared == 0 && t.compare_region.is_some() {
            outln!(
                "  note: neither kernel writes any element of {}'s compared region (is the region right?)",
                t.name
            );
        }
        for f in t.failures.iter().take(show) {
            print_failure(&t.name, &names, f);
        }
        let failing = (t.refuted + t.unknown) as usize;
        let shown = t.failures.len().min(show);
        if failing > shown {
            outln!(
                "  … {} more failing element(s) (--show N prints up to {}; --format json lists them)",
                failing - shown,
                ptxeq_verdicts::MAX_FAILURES_KEPT
            );
        }
    }
    if report.verdicts.is_some() {
        for (name, t) in &spec.tensors {
            let listed = tensors(report).iter().any(|v| &v.name == name);
            if let Some(r) = &t.compare
                && !listed
            {
                outln!(
                    "output {name}: 0 element(s) in the region {}: neither kernel writes the tensor in the CTAs run (is the region right?)",
                    ptxeq_spec::show_region(r)
                );
            }
        }
    }
    for p in &report.problems {
        outln!("unsupported: {p}");
    }
    outln!();
    outln!("assumptions:");
    for a in assumptions(spec) {
        outln!("  - {a}");
    }
    for a in scope_assumptions(spec, report, &names) {
        outln!("  - {a}");
    }
    for r in recoveries(report) {
        outln!("  - constant recovered: {r}");
    }
    for a in crate::cmd_race::idiom_assumptions(&report.kernels) {
        outln!("  - math idiom: {a}");
    }
    for n in crate::cmd_race::grid_notes(&report.kernels) {
        outln!("  - grid: {n}");
    }
    for a in crate::cmd_race::binding_assumptions(&report.kernels) {
        outln!("  - binding: {a}");
    }
    let stats = report
        .verdicts
        .as_ref()
        .map(|v| v.stats)
        .unwrap_or_default();
    let (decided, hits) = (stats.decided, stats.memo_hits);
    outln!(
        "time: {:.1} ms ({decided} element pair(s) decided, {hits} from the memo)",
        elapsed.as_secs_f64() * 1e3
    );
}

/// Inputs of a counterexample printed before eliding.
const WITNESS_SHOWN: usize = 12;

fn print_failure(name: &str, names: &InputNames, f: &ElementFailure) {
    let coords: Vec<String> = f.coords.iter().map(|c| c.to_string()).collect();
    let what = match &f.failure {
        Failure::Refuted { .. } => "refuted".to_string(),
        Failure::WrittenByOne { writer } => format!("refuted: written only by the {writer}"),
        Failure::BitsDiffer { .. } => "refuted: different bit patterns".to_string(),
        Failure::Unknown { reason, .. } => format!("unknown: {reason}"),
        Failure::Unsupported { reason } => format!("unsupported: {reason}"),
    };
    outln!("  {name}[{}]: {what}", coords.join(","));
    outln!("    reference: {}", f.reference);
    outln!("    candidate: {}", f.candidate);
    match &f.failure {
        Failure::Refuted { counterexample: cx } => {
            // Symbolic scalars first: few, and what a reader looks for.
            let mut ordered: Vec<_> = cx.inputs.iter().collect();
            ordered.sort_by_key(|w| w.tensor < names.first_symbol);
            let inputs: Vec<String> = ordered
                .into_iter()
                .take(WITNESS_SHOWN)
                .map(|w| format!("{} = {}", names.label(w.tensor, w.index), w.value))
                .collect();
            let more = cx.inputs.len().saturating_sub(WITNESS_SHOWN);
            let more = if more > 0 {
                format!(", … ({more} more in --format json)")
            } else {
                String::new()
            };
            outln!("    counterexample: {}{more}", inputs.join(", "));
            outln!(
                "    gives reference = {}, candidate = {}",
                cx.reference,
                cx.candidate
            );
            for f in &cx.functions {
                outln!("    with the uninterpreted function {f}");
            }
            if let Some(d) = &cx.exact_difference {
                outln!("    {d}");
            }
        }
        Failure::BitsDiffer {
            reference,
            candidate,
        } => outln!("    for every input: reference {reference:#x}, candidate {candidate:#x}"),
        Failure::Unknown {
            residual: Some(r), ..
        } => outln!("    residual (reference - candidate, normal form): {r}"),
        _ => {}
    }
}

/// What the reference is: `{"kind": "kernel"}` or `{"kind": "formula",
/// "formula": TEXT, "file": PATH | null}`.
fn reference_json(spec: &CheckSpec) -> serde_json::Value {
    match spec.kernels.formula() {
        Some(f) => json!({
            "kind": "formula",
            "formula": f.text,
            "file": f.file.as_ref().map(|p| p.display().to_string()),
        }),
        None => json!({ "kind": "kernel" }),
    }
}

fn print_json(db: &Database, loaded: &LoadedSpec, report: &CheckReport, elapsed: Duration) {
    let out = report_json(db, loaded, report, elapsed);
    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}

/// The `ptxeq.check/1` JSON report (`--format json`; also what the Python
/// bindings convert into a `CheckResult`).
pub fn report_json(
    db: &Database,
    loaded: &LoadedSpec,
    report: &CheckReport,
    elapsed: Duration,
) -> serde_json::Value {
    let spec = loaded.spec.spec(db);
    let names = InputNames::of(db, loaded, report);
    let slot = match &report.verdict {
        CheckVerdict::Kernel { slot, .. } => Some(slot.word()),
        _ => None,
    };
    json!({
        "schema": SCHEMA,
        "verdict": report.verdict.word(),
        "undecided": matches!(report.verdict, CheckVerdict::Undecided),
        "failing_kernel": slot,
        "kernels": crate::cmd_race::kernels_json(db, &report.kernels),
        "tensor_numbers": names.names,
        "symbolic_scalars": names.symbols(),
        "outputs": tensors(report),
        "ctas": report.verdicts.as_ref().map(|v| &v.ctas),
        "candidate_ctas": report.verdicts.as_ref().map(|v| &v.candidate_ctas),
        "all_ctas_checked": report.verdicts.as_ref().map(|v| v.complete),
        "stats": report.verdicts.as_ref().map(|v| v.stats),
        "problems": report.problems,
        "reference": reference_json(spec),
        "assumptions": assumptions(spec),
        "ctas_checked": ctas_lines(report).join("; "),
        "scope_assumptions": scope_assumptions(spec, report, &names),
        "constant_recoveries": recoveries(report),
        "idiom_assumptions": crate::cmd_race::idiom_assumptions(&report.kernels),
        "binding_assumptions": crate::cmd_race::binding_assumptions(&report.kernels),
        "time_ms": elapsed.as_secs_f64() * 1e3,
    })
}
