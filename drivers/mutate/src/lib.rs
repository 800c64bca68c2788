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
pub fn run_corpus(
    root: &Path,
    filters: &[String],
    excludes: &[String],
    opts: &Options,
    allow: &AllowList,
    mut progress: impl FnMut(&CaseResult),
) -> Result<Summary, String> {
    let cases = ptxeq_corpus::discover(root)
        .map_err(|e| format!("cannot read the corpus at {}: {e}", root.display()))?;
    let mut results = Vec::new();
    for case in cases {
        if !selected(&case.name, filters, excludes) {
            continue;
        }
        let target = ptxeq_spec::CheckSpec::load(&case.spec_path())
            .map(|s| run::is_target(&s))
            .unwrap_or(true); // a broken spec is reported by run_case
        if !target {
            continue;
        }
        let r = run_case(&case, opts, allow);
        progress(&r);
        results.push(r);
    }
    Ok(Summary::new(opts.seed, results, allow))
}
