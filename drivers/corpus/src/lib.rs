//! The corpus (corpus/README.md): discovery of case directories and the
//! per-case consistency checks that the data-driven test
//! (`tests/corpus.rs`) and `ptxeq corpus` run.
//!
//! A case is consistent when its `check.toml` validates, carries a one-line
//! `note` and an `[expect]` verdict, every PTX file parses without errors,
//! and the spec agrees with the PTX (entry names, param count and kinds,
//! `.reqntid`/`.maxntid`, tensor sizes). A consistent case is then run by
//! [`run_checker`] (the equivalence check for a pair, the race check for
//! one kernel) and [`compare_verdict`] judges the verdict against the
//! expected one: [`Outcome::Pass`] when they agree; a case that is only
//! consistent (not run) is [`Outcome::Consistent`], never a pass.

mod case;
mod checker;
pub mod checks;
mod discover;
pub mod ptx;
mod report;
pub mod rewrite;
pub mod shard;

pub use case::check_case;
pub use checker::{Checked, run_checker};
pub use discover::{CaseDir, SPEC_FILE, discover};
pub use report::{CaseReport, Outcome, Problem, compare_verdict};
pub use shard::{Shard, shard_key, shard_of};
