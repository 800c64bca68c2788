//! The store-address slice against whole runs, over every corpus kernel:
//! for the first and the last CTA of each kernel's grid, the slice must
//! write exactly the global bytes the kernel writes (the selection of
//! `ctas = "auto"` rests on this). Kernels whose whole run reports a
//! finding (a race, an unsupported construct, ...) are skipped: their
//! writes are not a complete reference. Math idioms are recognised first,
//! as the checker does.

use std::path::PathBuf;
use std::sync::Arc;

use ptxeq_ctas::slice::slice;
use ptxeq_exec::{AccessKind, CtaInput, Opaque, run_cta};
use ptxeq_spec::CheckSpec;
use rayon::prelude::*;

fn corpus_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    root.canonicalize().unwrap_or(root)
}

type Writes = (Vec<(u32, u64, u64)>, u64);

/// Written byte ranges per tensor, merged, and the thread-instructions
/// executed; `Err` when the run reported anything.
/// Stored values are not compared (a sliced run stores undefined ones).
/// With `sliced`, a race is not a difference either: the benign
/// same-value store rule (two stores of one instruction writing the same
/// value) needs the values the slice drops, so a slice may report a race
/// its kernel does not have; the scan then selects that CTA anyway
/// (`scan_one`: any finding counts as a write), which is sound.
fn writes(input: &CtaInput, cta: [u32; 3], sliced: bool) -> Result<Writes, String> {
    let mut input = input.clone();
    input.limits.report_undefined_outputs = false;
    let (run, _) = run_cta(&input, cta, Opaque::new());
    if let Some(f) = run
        .findings
        .iter()
        .find(|f| !(sliced && f.kind == ptxeq_exec::FindingKind::Race))
    {
        return Err(f.message.clone());
    }
    let steps = run.stats.instructions_executed;
    let mut out: Vec<(u32, u64, u64)> = run
        .footprint
        .tensors
        .iter()
        .flat_map(|t| {
            t.intervals
                .iter()
                .filter(|i| i.kind != AccessKind::Read)
                .map(move |i| (t.tensor, i.start, i.end))
        })
        .collect();
    out.sort_unstable();
    let mut merged: Vec<(u32, u64, u64)> = Vec::new();
    for w in out {
        match merged.last_mut() {
            Some(m) if m.0 == w.0 && m.2 >= w.1 => m.2 = m.2.max(w.2),
            _ => merged.push(w),
        }
    }
    Ok((merged, steps))
}

enum Outcome {
    /// Equal writes; thread-instructions of the kernel and of the slice.
    Same(u64, u64),
    Skipped,
    NotSliced,
    Differs(String),
}

fn check_kernel(spec: &CheckSpec, role: &str, kref: &ptxeq_spec::KernelRef) -> Vec<Outcome> {
    let Ok(text) = std::fs::read_to_string(&kref.ptx) else {
        return vec![Outcome::Skipped];
    };
    let lowered = ptxeq_lower::lower_source(&text);
    let Ok(mut input) = ptxeq_bind::cta_input(spec, kref, &lowered.module) else {
        return vec![Outcome::Skipped];
    };
    let funcs: Vec<_> = input.funcs.iter().map(|f| (**f).clone()).collect();
    input.kernel = Arc::new(ptxeq_idioms::recognise_in(&input.kernel, &funcs).ir);
    let Ok(s) = slice(&input.kernel) else {
        return vec![Outcome::NotSliced];
    };
    let mut sliced = input.clone();
    sliced.kernel = Arc::new(s.kernel);
    let g = input.grid;
    let last = [g[0] - 1, g[1] - 1, g[2] - 1];
    let ctas = if last == [0, 0, 0] {
        vec![[0, 0, 0]]
    } else {
        vec![[0, 0, 0], last]
    };
    ctas.into_iter()
        .map(|cta| match writes(&input, cta, false) {
            Err(_) => Outcome::Skipped,
            Ok((whole, steps)) => match writes(&sliced, cta, true) {
                Ok((w, sliced_steps)) if w == whole => Outcome::Same(steps, sliced_steps),
                Ok(w) => Outcome::Differs(format!(
                    "{role} {} CTA {cta:?}: slice writes {w:?}, kernel {whole:?}",
                    kref.ptx.display()
                )),
                Err(m) => Outcome::Differs(format!(
                    "{role} {} CTA {cta:?}: the slice reports `{m}`, the kernel nothing",
                    kref.ptx.display()
                )),
            },
        })
        .collect()
}

/// Every case but the full-size ones (`expect.heavy`).
#[test]
fn slices_write_what_their_kernels_write() {
    let same = compare_slices(false);
    // The corpus has ~200 cases: most kernels must have been compared.
    assert!(same >= 200, "only {same} CTA runs compared");
}

/// The full-size cases (`expect.heavy`: K = 4096 GEMMs, 512-key
/// attention): minutes of opaque runs, so on request
/// (`cargo test --release -p ptxeq-ctas --test corpus_slices -- --ignored`),
/// like the corpus test's heavy cases.
#[test]
#[ignore = "full-size cases: minutes; run with --ignored"]
fn slices_of_full_size_cases_write_what_their_kernels_write() {
    let same = compare_slices(true);
    assert!(same >= 10, "only {same} CTA runs compared");
}

/// Compares the slice with the whole kernel over the cases whose
/// `expect.heavy` is `heavy`; the number of equal CTA runs.
fn compare_slices(heavy: bool) -> usize {
    let specs: Vec<PathBuf> = walkdir::WalkDir::new(corpus_root())
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "check.toml")
        .map(|e| e.path().to_path_buf())
        .collect();
    let outcomes: Vec<Outcome> = specs
        .par_iter()
        .flat_map_iter(|p| {
            let Ok(spec) = CheckSpec::load(p) else {
                return Vec::new();
            };
            if spec.expect.as_ref().is_some_and(|e| e.heavy) != heavy {
                return Vec::new();
            }
            spec.kernels
                .iter()
                .into_iter()
                .flat_map(|(role, k)| check_kernel(&spec, role, k))
                .collect::<Vec<_>>()
        })
        .collect();
    let same = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Same(..)))
        .count();
    let (whole_steps, slice_steps) = outcomes.iter().fold((0, 0), |(a, b), o| match o {
        Outcome::Same(x, y) => (a + x, b + y),
        _ => (a, b),
    });
    let not_sliced = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::NotSliced))
        .count();
    let differs: Vec<&String> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Differs(m) => Some(m),
            _ => None,
        })
        .collect();
    eprintln!(
        "{same} CTA runs equal ({whole_steps} thread-instructions whole, {slice_steps} sliced), \
         {not_sliced} kernels not sliced, {} skipped",
        outcomes.len() - same - not_sliced - differs.len()
    );
    assert!(differs.is_empty(), "{differs:#?}");
    same
}
