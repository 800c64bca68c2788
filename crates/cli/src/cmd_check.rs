//! `ptxeq check`: prove a candidate kernel equivalent to a reference over
//! the reals, or show the bug (design.md §6).
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
use crate::spec_args::{self, LoadedSpec, SpecFlagArgs};

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

/// [`ASSUMPTIONS`], plus [`INT_ASSUMPTION`] when `spec` has an integer
/// tensor.
fn assumptions(spec: &CheckSpec) -> Vec<&'static str> {
    let mut v = ASSUMPTIONS.to_vec();
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
}

pub fn run(
    targets: &[PathBuf],
    args: &SpecFlagArgs,
    candidate_entry: Option<String>,
    candidate_params: Option<String>,
    opts: &CheckOptions,
) -> Exit {
    let db = Database::default();
    let loaded = match targets {
        [one] => spec_args::load_checked(&db, one, args),
        [reference, candidate] => spec_args::load_pair(
            &db,
            reference,
            candidate,
            args,
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
    let report = ptxeq_db::check(&db, loaded.spec, &loaded.kernels);
    let elapsed = start.elapsed();
    if let CheckVerdict::InvalidInput(why) = &report.verdict {
        eprintln!("error: {why}");
        return Exit::Invalid;
    }
    match opts.format {
        ReportFormat::Human => print_human(&db, &loaded, &report, opts.show, elapsed),
        ReportFormat::Json => print_json(&db, &loaded, &report, elapsed),
        ReportFormat::Sarif => {
            let spec = loaded.spec.spec(&db);
            let names = spec.input_names();
            let log = crate::sarif::render_check(&db, &report, &names);
            outln!("{}", serde_json::to_string_pretty(&log).unwrap_or_default());
        }
    }
    if let Some(dir) = &opts.emit_smt
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
    match report.verdict.exit_class() {
        0 => Exit::Ok,
        1 => Exit::Refuted,
        3 => Exit::Invalid,
        _ => Exit::Undecided,
    }
}

/// The CTAs the verdict covers, in words.
fn ctas_line(spec: &CheckSpec, report: &CheckReport) -> String {
    let g = spec.launch.grid;
    let total = u64::from(g[0]) * u64::from(g[1]) * u64::from(g[2]);
    let ctas = report
        .verdicts
        .as_ref()
        .map(|v| v.ctas.clone())
        .unwrap_or_default();
    let list: Vec<String> = ctas
        .iter()
        .take(4)
        .map(|c| format!("({},{},{})", c[0], c[1], c[2]))
        .collect();
    let more = ctas.len().saturating_sub(4);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "CTAs checked: {}{more} of a {}x{}x{} grid ({} of {total}{})",
        list.join(", "),
        g[0],
        g[1],
        g[2],
        ctas.len(),
        if ctas.len() as u64 == total {
            ""
        } else {
            "; elements the other CTAs write are not compared"
        }
    )
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
    let names = spec.input_names();
    for t in tensors(report) {
        outln!(
            "output {}: {} element(s): {} proved ({} identical terms), {} refuted, {} unknown",
            t.name,
            t.compared,
            t.proved,
            t.identical,
            t.refuted,
            t.unknown
        );
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
    for p in &report.problems {
        outln!("unsupported: {p}");
    }
    outln!();
    outln!("assumptions:");
    for a in assumptions(spec) {
        outln!("  - {a}");
    }
    outln!("  - {}", ctas_line(spec, report));
    for r in recoveries(report) {
        outln!("  - constant recovered: {r}");
    }
    for a in crate::cmd_race::idiom_assumptions(&report.kernels) {
        outln!("  - math idiom: {a}");
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

fn print_failure(name: &str, names: &[&str], f: &ElementFailure) {
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
            let inputs: Vec<String> = cx
                .inputs
                .iter()
                .take(WITNESS_SHOWN)
                .map(|w| format!("{} = {}", input_name(names, w.tensor, w.index), w.value))
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

/// `x[i]` for an input element (tensors are numbered in name order).
fn input_name(names: &[&str], tensor: u32, index: u64) -> String {
    match names.get(tensor as usize) {
        Some(n) => format!("{n}[{index}]"),
        None => format!("tensor#{tensor}[{index}]"),
    }
}

fn print_json(db: &Database, loaded: &LoadedSpec, report: &CheckReport, elapsed: Duration) {
    let spec = loaded.spec.spec(db);
    let names = spec.input_names();
    let slot = match &report.verdict {
        CheckVerdict::Kernel { slot, .. } => Some(slot.word()),
        _ => None,
    };
    let out = json!({
        "schema": SCHEMA,
        "verdict": report.verdict.word(),
        "undecided": matches!(report.verdict, CheckVerdict::Undecided),
        "failing_kernel": slot,
        "kernels": crate::cmd_race::kernels_json(db, &report.kernels),
        "tensor_numbers": names,
        "outputs": tensors(report),
        "ctas": report.verdicts.as_ref().map(|v| &v.ctas),
        "all_ctas_checked": report.verdicts.as_ref().map(|v| v.complete),
        "stats": report.verdicts.as_ref().map(|v| v.stats),
        "problems": report.problems,
        "assumptions": assumptions(spec),
        "ctas_checked": ctas_line(spec, report),
        "constant_recoveries": recoveries(report),
        "idiom_assumptions": crate::cmd_race::idiom_assumptions(&report.kernels),
        "binding_assumptions": crate::cmd_race::binding_assumptions(&report.kernels),
        "time_ms": elapsed.as_secs_f64() * 1e3,
    });
    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}
