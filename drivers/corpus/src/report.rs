//! What checking a case produces, and how it maps to a test outcome.

use std::fmt;
use std::path::PathBuf;

use ptxeq_spec::{CheckSpec, Expect, Status, Verdict};

use crate::checker::Checked;
use serde::Serialize;

/// One thing wrong with a case, located where possible.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file at fault (the spec or a PTX file), when there is one.
    pub file: Option<PathBuf>,
    /// 1-based line and column in `file`.
    pub location: Option<(u32, u32)>,
    pub message: String,
}

impl Problem {
    pub fn new(message: impl Into<String>) -> Self {
        Problem {
            file: None,
            location: None,
            message: message.into(),
        }
    }

    pub fn in_file(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Problem {
            file: Some(file.into()),
            ..Problem::new(message)
        }
    }

    pub fn at(mut self, line: u32, col: u32) -> Self {
        self.location = Some((line, col));
        self
    }
}

impl fmt::Display for Problem {
    /// `file:line:col: message`, leaving out what is unknown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}:", file.display())?;
            if let Some((line, col)) = self.location {
                write!(f, "{line}:{col}:")?;
            }
            f.write_str(" ")?;
        }
        f.write_str(&self.message)
    }
}

/// The result of the consistency checks on one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseReport {
    /// The case name (`softmax/online-n128`).
    pub name: String,
    /// The spec, when it loaded.
    pub spec: Option<CheckSpec>,
    /// Whether the case is pending (from `[expect] status`; active when the
    /// spec did not load).
    pub status: Status,
    /// The block size the check would use: `launch.block`, or the entry's
    /// `.reqntid` / `.maxntid`.
    pub block: Option<[u32; 3]>,
    /// Everything wrong, in the order found; empty when consistent.
    pub problems: Vec<Problem>,
    /// What the checker concluded (`None` when the case is inconsistent,
    /// so the checker did not run).
    pub checked: Option<Checked>,
}

impl CaseReport {
    /// Whether every consistency check passed.
    pub fn is_consistent(&self) -> bool {
        self.problems.is_empty()
    }

    /// The case's outcome: inconsistent, or the checker's conclusion
    /// compared with the expected verdict.
    pub fn outcome(&self) -> Outcome {
        if !self.problems.is_empty() {
            return Outcome::Problems(self.problems.clone());
        }
        match self.spec.as_ref().and_then(|s| s.expect.as_ref()) {
            Some(expect) => compare_verdict(expect, self.checked),
            None => Outcome::Problems(vec![Problem::new("no [expect] section")]),
        }
    }
}

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Outcome {
    /// The case is consistent; the checker reached no verdict to compare
    /// (not run).
    Consistent,
    /// The checker reached a different verdict than the spec expects.
    Mismatch { expected: Verdict, got: Verdict },
    /// The checker reached the expected verdict.
    Pass,
    /// The case itself is broken (spec, PTX, or their consistency).
    Problems(Vec<Problem>),
}

impl Outcome {
    /// A short word for summaries.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Consistent => "spec-consistent, verdict not checked",
            Outcome::Mismatch { .. } => "verdict mismatch",
            Outcome::Pass => "verdict as expected",
            Outcome::Problems(_) => "inconsistent case",
        }
    }
}

/// Compares what the checker concluded with the expected verdict.
///
/// `None`: the checker did not run. Whether a pending case's mismatch
/// fails the run is the runner's decision. An `unsupported` case's
/// `reason` is not compared.
pub fn compare_verdict(expect: &Expect, got: Option<Checked>) -> Outcome {
    match got {
        None => Outcome::Consistent,
        Some(Checked::Verdict(got)) if got == expect.verdict => Outcome::Pass,
        Some(Checked::Verdict(got)) => Outcome::Mismatch {
            expected: expect.verdict,
            got,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expect(verdict: Verdict) -> Expect {
        Expect {
            verdict,
            reason: None,
            status: Status::Active,
            pending: None,
            heavy: false,
        }
    }

    #[test]
    fn comparing_verdicts() {
        let e = expect(Verdict::Equivalent);
        assert_eq!(compare_verdict(&e, None), Outcome::Consistent);
        assert_eq!(
            compare_verdict(&e, Some(Checked::Verdict(Verdict::Equivalent))),
            Outcome::Pass
        );
        assert_eq!(
            compare_verdict(&e, Some(Checked::Verdict(Verdict::Race))),
            Outcome::Mismatch {
                expected: Verdict::Equivalent,
                got: Verdict::Race
            }
        );
    }

    #[test]
    fn problem_display() {
        let p = Problem::in_file("a/ref.ptx", "bad").at(3, 7);
        assert_eq!(p.to_string(), "a/ref.ptx:3:7: bad");
        assert_eq!(Problem::new("bad").to_string(), "bad");
    }
}
