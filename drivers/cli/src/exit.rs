//! Exit codes (docs/semantics.md §1), one place so every subcommand agrees.

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
    /// 4: order-dependent — no data race, but the result depends on the
    /// schedule (unordered atomics whose outcome depends on their order).
    OrderDependent = 4,
}

impl Exit {
    /// The exit of a verdict's class (`RaceVerdict::exit_class`,
    /// `CheckVerdict::exit_class`).
    pub fn of_class(class: u8) -> Exit {
        match class {
            0 => Exit::Ok,
            1 => Exit::Refuted,
            3 => Exit::Invalid,
            4 => Exit::OrderDependent,
            _ => Exit::Undecided,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}
