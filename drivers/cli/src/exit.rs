//! Exit codes (docs/semantics.md §1), one place so every subcommand agrees.

use std::process::ExitCode;

/// The outcome classes a command can end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: proved / parsed / race-free.
    Ok = 0,
    /// 1: refuted — a real bug was found.
    Refuted = 1,
    /// 2: undecided — unsupported construct, resource limit, unknown.
    Undecided = 2,
    /// 3: invalid input — malformed PTX, bad spec, missing file.
    Invalid = 3,
    /// 4: order-dependent — no data race, but the result depends on the
    /// schedule (unordered atomics whose outcome depends on their order).
    OrderDependent = 4,
}

impl Exit {
    /// The exit of a verdict: [`ptxeq_check::Verdict::exit_code`], the one
    /// verdict-to-exit mapping.
    pub fn of_verdict(verdict: ptxeq_check::Verdict) -> Exit {
        match verdict.exit_code() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_verdict_exits_with_its_code() {
        for v in ptxeq_check::Verdict::ALL {
            assert_eq!(Exit::of_verdict(v) as u8, v.exit_code(), "{v}");
        }
    }
}
