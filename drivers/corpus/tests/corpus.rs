//! The data-driven corpus test: one test per case, named by its path
//! (`cargo test -p ptxeq-corpus --test corpus -- softmax` runs a family).
//!
//! Each case must pass today's consistency checks (spec valid, PTX parses,
//! spec agrees with the PTX). Pending cases are checked the same way and
//! shown with the `[pending]` kind. No checker exists yet, so no verdict
//! is computed: a consistent case counts as "spec-consistent, verdict not
//! checked", never as passed.
//!
//! Environment:
//! - `PTXEQ_CORPUS_DIR`: the corpus root (default: the repository's `corpus/`).
//! - `PTXEQ_CORPUS_MIN`: the fewest cases the corpus must hold (default 80);
//!   enforced by the `corpus-size` test, which a name filter skips like
//!   any other test. `PTXEQ_CORPUS_MIN=0` disables it.
//!
//! Full-size cases (`expect.heavy = true`: minutes of CPU and GiBs each)
//! are listed as ignored; `-- --include-ignored` runs everything,
//! `-- --ignored` only them.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use libtest_mimic::{Arguments, Failed, Trial};
use ptxeq_corpus::{CaseDir, Outcome, check_case, discover};
use ptxeq_spec::{CheckSpec, Status};

const DEFAULT_MIN_CASES: usize = 80;

#[derive(Default)]
struct Counts {
    /// Verdict reached as expected.
    passed: AtomicUsize,
    /// Consistent, but the checker did not run.
    active: AtomicUsize,
    pending: AtomicUsize,
    failed: AtomicUsize,
}

fn corpus_root() -> PathBuf {
    let root = std::env::var_os("PTXEQ_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus"));
    root.canonicalize().unwrap_or(root)
}

fn min_cases() -> Result<usize, String> {
    match std::env::var("PTXEQ_CORPUS_MIN") {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("PTXEQ_CORPUS_MIN={v:?} is not a number")),
        Err(_) => Ok(DEFAULT_MIN_CASES),
    }
}

/// Reads only the status, to label the trial before it runs; a spec that
/// does not load is labelled active and fails in the trial itself.
fn is_pending(case: &CaseDir) -> bool {
    CheckSpec::load(&case.spec_path())
        .ok()
        .and_then(|s| s.expect)
        .is_some_and(|e| e.status == Status::Pending)
}

/// A full-size case (`expect.heavy`): ignored unless asked for
/// (`-- --include-ignored` or `-- --ignored`).
fn is_heavy(case: &CaseDir) -> bool {
    CheckSpec::load(&case.spec_path())
        .ok()
        .and_then(|s| s.expect)
        .is_some_and(|e| e.heavy)
}

fn case_trial(case: CaseDir, counts: Arc<Counts>) -> Trial {
    let pending = is_pending(&case);
    let heavy = is_heavy(&case);
    let name = case.name.clone();
    let trial = Trial::test(name, move || {
        let report = check_case(&case);
        let pending = report.status == Status::Pending;
        match report.outcome() {
            // A pending case is counted apart, whatever the checker says:
            // never as passing.
            Outcome::Consistent | Outcome::Pass | Outcome::Mismatch { .. } if pending => {
                counts.pending.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Outcome::Pass => {
                counts.passed.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Outcome::Consistent => {
                counts.active.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Outcome::Mismatch { expected, got } => {
                counts.failed.fetch_add(1, Ordering::Relaxed);
                Err(Failed::from(format!("expected `{expected}`, got `{got}`")))
            }
            Outcome::Problems(problems) => {
                counts.failed.fetch_add(1, Ordering::Relaxed);
                let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
                Err(Failed::from(format!(
                    "{} problem(s):\n{}",
                    problems.len(),
                    lines.join("\n")
                )))
            }
        }
    });
    let trial = trial.with_ignored_flag(heavy);
    match (pending, heavy) {
        (true, _) => trial.with_kind("pending"),
        (false, true) => trial.with_kind("heavy"),
        (false, false) => trial,
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = corpus_root();
    let counts = Arc::new(Counts::default());
    let mut trials = Vec::new();

    match discover(&root) {
        Ok(cases) => {
            let found = cases.len();
            trials.push(Trial::test("corpus-size", move || {
                let min = min_cases()?;
                if found < min {
                    return Err(format!(
                        "the corpus holds {found} cases, fewer than {min} \
                         (PTXEQ_CORPUS_MIN overrides the minimum)"
                    )
                    .into());
                }
                Ok(())
            }));
            trials.extend(cases.into_iter().map(|c| case_trial(c, counts.clone())));
        }
        Err(e) => {
            let msg = format!("cannot read the corpus at {}: {e}", root.display());
            trials.push(Trial::test("corpus-discovery", move || Err(msg.into())));
        }
    }

    let conclusion = libtest_mimic::run(&args, trials);
    let run = counts.passed.load(Ordering::Relaxed)
        + counts.active.load(Ordering::Relaxed)
        + counts.pending.load(Ordering::Relaxed)
        + counts.failed.load(Ordering::Relaxed);
    if run > 0 {
        println!(
            "corpus: {run} cases: {} verdict as expected, {} consistent but not run, \
             {} pending (not counted as passing), {} failed",
            counts.passed.load(Ordering::Relaxed),
            counts.active.load(Ordering::Relaxed),
            counts.pending.load(Ordering::Relaxed),
            counts.failed.load(Ordering::Relaxed),
        );
    }
    conclusion.exit();
}
