//! The corpus as the oracle for static validation.
//!
//! - Every case whose expected verdict is `unsupported` with a reason about
//!   tensor data (branch / loop bound / address) must be flagged, and the
//!   first problem of the flagged kernel must have the kind the reason names.
//! - No kernel of any other case may be flagged at all: those kernels are in
//!   the structured class by construction (their notes say why), so any
//!   problem there is a false positive.
//!
//! Expected answers come from `check.toml`, written with the kernels.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ptxeq_ir::KernelIr;
use ptxeq_spec::{CheckSpec, KernelRef, ParamBinding, Verdict};
use ptxeq_validate::{ProblemKind, StructuredReport, validate};

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// Every `corpus/<family>/<case>/check.toml`, sorted.
fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let root = corpus_root();
    let families = std::fs::read_dir(&root).expect("corpus directory");
    for fam in families.flatten() {
        let Ok(entries) = std::fs::read_dir(fam.path()) else {
            continue;
        };
        for case in entries.flatten() {
            let spec = case.path().join("check.toml");
            if spec.is_file() {
                out.push(spec);
            }
        }
    }
    out.sort();
    out
}

struct Checked {
    role: &'static str,
    entry: String,
    report: StructuredReport,
    time: Duration,
}

/// Validates every kernel of a case.
fn check_case(spec: &CheckSpec) -> Result<Vec<Checked>, String> {
    let mut out = Vec::new();
    for (role, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx)
            .map_err(|e| format!("{}: {e}", kref.ptx.display()))?;
        let parse = ptxeq_syntax::parse(&text);
        let lowered = ptxeq_lower::lower_module(&parse);
        let module = &lowered.module;
        let kernel: &KernelIr = match &kref.entry {
            Some(name) => module.kernel(name),
            None => module.kernels.first(),
        }
        .ok_or_else(|| format!("{role}: entry not found in {}", kref.ptx.display()))?;
        let tensors = tensor_params(spec, kref);
        // As in the pipeline (the db's `recognised` query), inlined math
        // idioms are replaced before validation: their internal branches
        // on data are part of a recognised function, not kernel control.
        let (kernel, funcs) = ptxeq_idioms::recognise_all(kernel, &module.funcs);
        let kernel = &kernel.ir;
        let funcs: Vec<KernelIr> = funcs.into_iter().map(|f| f.ir).collect();
        let start = Instant::now();
        let report = validate(kernel, &|n| funcs.iter().find(|f| f.name == n), &tensors);
        out.push(Checked {
            role,
            entry: kernel.name.clone(),
            report,
            time: start.elapsed(),
        });
    }
    Ok(out)
}

/// `true` for params bound to tensors the kernel reads (input / inout)
/// as data: not those with concrete `values` (their loads are concrete, as
/// the db's `structured` query has it).
fn tensor_params(spec: &CheckSpec, kref: &KernelRef) -> Vec<bool> {
    kref.params
        .iter()
        .map(|b| match b {
            ParamBinding::Tensor(name) => spec
                .tensors
                .get(name)
                .is_some_and(|t| t.role.is_read() && t.values.is_none()),
            _ => false,
        })
        .collect()
}

fn expected_kind(reason: &str) -> Option<ProblemKind> {
    if reason.contains("loop bound") {
        Some(ProblemKind::LoopBound)
    } else if reason.contains("address depends on tensor data") {
        Some(ProblemKind::Address)
    } else if reason.contains("branch depends on tensor data") {
        Some(ProblemKind::Branch)
    } else {
        None
    }
}

fn describe(report: &StructuredReport) -> String {
    report
        .problems
        .iter()
        .map(|p| format!("\n      [{:?}] {}", p.kind, p.message))
        .collect::<String>()
        + &report
            .skipped
            .as_ref()
            .map(|s| format!("\n      skipped: {s}"))
            .unwrap_or_default()
}

#[test]
fn corpus_verdicts_match_static_validation() {
    let cases = cases();
    assert!(cases.len() >= 100, "corpus not found: {}", cases.len());
    let mut failures = Vec::new();
    let mut flagged_unsupported = 0;
    let mut kernels = 0;
    let mut slowest: Vec<(Duration, String)> = Vec::new();
    for path in &cases {
        let name = path
            .parent()
            .and_then(|p| p.strip_prefix(corpus_root()).ok())
            .map_or_else(|| path.display().to_string(), |p| p.display().to_string());
        let spec = match CheckSpec::load(path) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: bad spec: {e:?}"));
                continue;
            }
        };
        let checked = match check_case(&spec) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        kernels += checked.len();
        for c in &checked {
            slowest.push((c.time, format!("{name} {} {}", c.role, c.entry)));
        }
        let expect = spec.expect.as_ref();
        let verdict = expect.map(|e| e.verdict);
        let kind = expect
            .and_then(|e| e.reason.as_deref())
            .and_then(expected_kind);
        match (verdict, kind) {
            (Some(Verdict::Unsupported), Some(kind)) => {
                let flagged: Vec<&Checked> = checked
                    .iter()
                    .filter(|c| !c.report.problems.is_empty())
                    .collect();
                if flagged.is_empty() {
                    failures.push(format!(
                        "{name}: expected a {kind:?} problem, every kernel validated as structured"
                    ));
                }
                for c in flagged {
                    let first = &c.report.problems[0];
                    if first.kind != kind {
                        failures.push(format!(
                            "{name} {}: first problem is {:?}, expected {kind:?}:{}",
                            c.role,
                            first.kind,
                            describe(&c.report)
                        ));
                    }
                }
                flagged_unsupported += 1;
            }
            (Some(Verdict::Unsupported), None) => {}
            _ => {
                for c in &checked {
                    if !c.report.is_structured() {
                        failures.push(format!(
                            "{name} {} `{}`: false positive:{}",
                            c.role,
                            c.entry,
                            describe(&c.report)
                        ));
                    }
                }
            }
        }
    }
    slowest.sort();
    slowest.reverse();
    for (t, what) in slowest.iter().take(3) {
        eprintln!("validate {what}: {t:?}");
    }
    eprintln!(
        "{} cases, {kernels} kernels, {flagged_unsupported} unsupported cases flagged",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        flagged_unsupported, 7,
        "the seven data-dependent cases (five in unsupported/, bindings/values-gather-unbound, intdata/int-data-loop-bound)"
    );
}

/// Every entry of every PTX file in the repository (corpus and the parser's
/// test data, Hopper and tensor-core kernels included), with every param
/// marked as a tensor input: validation never panics and terminates.
#[test]
fn every_ptx_entry_validates_without_panicking() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut stack = vec![root.join("corpus"), root.join("crates/syntax/testdata")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 100, "found {} PTX files", files.len());
    let mut entries = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read PTX");
        let lowered = ptxeq_lower::lower_module(&ptxeq_syntax::parse(&text));
        let module = &lowered.module;
        for k in module.kernels.iter().chain(&module.funcs) {
            let all = vec![true; k.params.len()];
            let report = validate(k, &|n| module.func(n), &all);
            assert!(
                report.skipped.is_none(),
                "{}: {:?}",
                path.display(),
                report.skipped
            );
            entries += 1;
        }
    }
    eprintln!("{} files, {entries} functions validated", files.len());
}
