//! Mutation testing of ptxeq: the harness that keeps the checker honest.
//!
//! For every corpus case whose expected verdict is `equivalent`, the
//! candidate kernel is mutated ([`mutants`]: change an immediate, swap
//! operands, `add`↔`sub`, `mul`→`add`, `fma`→`add`, `max`↔`min`, flip a
//! comparison, delete a barrier, change a shuffle lane, an address
//! offset or a store's source register) and each mutant — ordinary PTX
//! text — gets the full check ([`run`]). A sound and useful checker
//! refutes every mutant whose change matters; the harness classifies
//! each automatically:
//!
//! - **killed**: any refuting verdict (not-equivalent, race, deadlock,
//!   divergence, out-of-bounds, uninitialised);
//! - **equivalent by construction**: proved, and the changed instruction
//!   never ran in the checked CTAs or its result was never read — decided
//!   from the engine's coverage record of the mutant's own run
//!   (`ptxeq_exec::run_cta_with_coverage`), never by hand;
//! - **survived-live**: proved although the instruction ran and its
//!   result was read — a checker bug unless reviewed and listed with a
//!   reason in `allow.toml` ([`allow`]);
//! - **undecided** (with a reason) and **crash** (a panic, or over the
//!   wall-clock budget).
//!
//! The reverse direction: equivalence-preserving rewrites (consistent
//! register renaming, swapping two independent instructions, `mul x, 2`
//! ↔ `add x, x`, commuted operands) must stay `equivalent`; a refutation
//! there is a false refutation (a bug), an undecided one is "lost".
//!
//! Mutants are chosen per case by a seeded, deterministic sample spread
//! over the operators ([`sample`]). `ptxeq-mutate corpus/` runs it all
//! and prints a summary ([`report`]); `tests/ci_subset.rs` runs a small
//! fixed subset as a normal test.

pub mod allow;
pub mod edit;
pub mod mutants;
pub mod report;
pub mod run;
pub mod sample;
pub mod site;

use std::path::Path;

pub use allow::AllowList;
pub use mutants::{Mutant, Op, Probe, enumerate};
pub use report::{Summary, Tally};
pub use run::{CaseResult, MutantResult, Options, Outcome, run_case};
pub use site::Kernel;

/// The allow-list shipped with the crate.
pub fn default_allow_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("allow.toml")
}

/// Whether case `name` is selected: it contains one of `filters` (any
/// name with no filter) and none of `excludes`.
pub fn selected(name: &str, filters: &[String], excludes: &[String]) -> bool {
    (filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        && !excludes.iter().any(|f| name.contains(f.as_str()))
}

/// Runs every [`selected`] case under `root`, calling `progress` after
/// each case.
///
/// Cases run side by side, one per available core, each on its own
/// database; `progress` sees them in the order they finish, the summary
/// lists them in corpus order. No outcome depends on the order: the step
/// budget is counted per mutant, and the wall-clock timeout
/// ([`Options::timeout`], 20 minutes by default) is far above any case.
/// The case workers are plain threads, not rayon's: a check waits for
/// its worker thread ([`run_case`]'s timeout), and a rayon worker
/// blocked in that wait could not run the check's own parallel work.
pub fn run_corpus(
    root: &Path,
    filters: &[String],
    excludes: &[String],
    opts: &Options,
    allow: &AllowList,
    progress: impl Fn(&CaseResult) + Sync,
) -> Result<Summary, String> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cases = ptxeq_corpus::discover(root)
        .map_err(|e| format!("cannot read the corpus at {}: {e}", root.display()))?;
    let targets: Vec<_> = cases
        .into_iter()
        .filter(|case| selected(&case.name, filters, excludes))
        .filter(|case| {
            ptxeq_spec::CheckSpec::load(&case.spec_path())
                .map(|s| run::is_target(&s))
                .unwrap_or(true) // a broken spec is reported by run_case
        })
        .collect();
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, CaseResult)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(targets.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = targets.get(i) else { break };
                    let r = run_case(case, opts, allow);
                    progress(&r);
                    done.lock().unwrap_or_else(|e| e.into_inner()).push((i, r));
                }
            });
        }
    });
    let mut results = done.into_inner().unwrap_or_else(|e| e.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let results = results.into_iter().map(|(_, r)| r).collect();
    Ok(Summary::new(opts.seed, results, allow))
}
