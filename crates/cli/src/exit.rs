//! Exit codes (design.md §6), one place so every subcommand agrees.

use std::process::ExitCode;

/// The outcome classes a command can end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: proved / parsed / race-free.
    Ok = 0,
    /// 1: refuted — a real bug was found.
    #[allow(dead_code)] // used by `check`/`race` (later milestones)
    Refuted = 1,
    /// 2: undecided — unsupported construct, resource limit, unknown.
    #[allow(dead_code)]
    Undecided = 2,
    /// 3: invalid input — malformed PTX, bad spec, missing file.
    Invalid = 3,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}
