//! The verdict words shared by `[expect] verdict`, the JSON report's
//! top-level `"verdict"` and the CLI's exit codes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a check concludes. The serde names are the exact words used in
/// `check.toml` and in JSON reports (docs/semantics.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Verdict {
    /// Pair only: every output element is equal over the reals.
    #[serde(rename = "equivalent")]
    Equivalent,
    /// Pair only: some input makes an output element differ.
    #[serde(rename = "not-equivalent")]
    NotEquivalent,
    /// Single kernel only: no race, deadlock, divergence or bad access.
    #[serde(rename = "race-free")]
    RaceFree,
    #[serde(rename = "race")]
    Race,
    /// No data race, but the result depends on the schedule: unordered
    /// atomics whose returned values are used or whose updates do not
    /// commute.
    #[serde(rename = "order-dependent")]
    OrderDependent,
    #[serde(rename = "deadlock")]
    Deadlock,
    #[serde(rename = "divergence")]
    Divergence,
    #[serde(rename = "out-of-bounds")]
    OutOfBounds,
    #[serde(rename = "uninitialised")]
    Uninitialised,
    /// The tool cannot decide (unsupported construct, limit, unknown).
    #[serde(rename = "unsupported")]
    Unsupported,
}

/// Whether a case compares two kernels or checks one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaseKind {
    Pair,
    Single,
}

impl Verdict {
    /// Every verdict, in documentation order.
    pub const ALL: [Verdict; 10] = [
        Verdict::Equivalent,
        Verdict::NotEquivalent,
        Verdict::RaceFree,
        Verdict::Race,
        Verdict::OrderDependent,
        Verdict::Deadlock,
        Verdict::Divergence,
        Verdict::OutOfBounds,
        Verdict::Uninitialised,
        Verdict::Unsupported,
    ];

    /// The exact spec / report word.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::NotEquivalent => "not-equivalent",
            Verdict::RaceFree => "race-free",
            Verdict::Race => "race",
            Verdict::OrderDependent => "order-dependent",
            Verdict::Deadlock => "deadlock",
            Verdict::Divergence => "divergence",
            Verdict::OutOfBounds => "out-of-bounds",
            Verdict::Uninitialised => "uninitialised",
            Verdict::Unsupported => "unsupported",
        }
    }

    /// Whether a case of this kind can reach this verdict: `equivalent` and
    /// `not-equivalent` need two kernels, `race-free` is the single-kernel
    /// success; the error verdicts apply to both.
    pub fn valid_for(self, kind: CaseKind) -> bool {
        match self {
            Verdict::Equivalent | Verdict::NotEquivalent => kind == CaseKind::Pair,
            Verdict::RaceFree => kind == CaseKind::Single,
            _ => true,
        }
    }

    /// The verdicts valid for `kind`, for error messages.
    pub fn valid_words(kind: CaseKind) -> Vec<&'static str> {
        Verdict::ALL
            .into_iter()
            .filter(|v| v.valid_for(kind))
            .map(Verdict::as_str)
            .collect()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                let words: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
                format!(
                    "unknown verdict `{s}`, expected one of {}",
                    words.join(", ")
                )
            })
    }
}

impl fmt::Display for CaseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CaseKind::Pair => "a kernel pair",
            CaseKind::Single => "a single kernel",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_serde_and_from_str() {
        for v in Verdict::ALL {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json.as_str(), Some(v.as_str()));
            assert_eq!(v.to_string().parse::<Verdict>(), Ok(v));
        }
        let err = "uninitialized".parse::<Verdict>().unwrap_err();
        assert!(err.contains("uninitialised"), "{err}");
    }

    #[test]
    fn validity_by_kind() {
        assert!(Verdict::Equivalent.valid_for(CaseKind::Pair));
        assert!(!Verdict::Equivalent.valid_for(CaseKind::Single));
        assert!(!Verdict::RaceFree.valid_for(CaseKind::Pair));
        assert!(Verdict::Race.valid_for(CaseKind::Pair));
        assert!(Verdict::Race.valid_for(CaseKind::Single));
        assert_eq!(Verdict::valid_words(CaseKind::Pair).len(), 9);
        assert_eq!(Verdict::valid_words(CaseKind::Single).len(), 8);
        assert!(Verdict::OrderDependent.valid_for(CaseKind::Pair));
        assert!(Verdict::OrderDependent.valid_for(CaseKind::Single));
    }
}
