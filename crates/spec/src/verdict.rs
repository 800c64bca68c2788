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
    /// The input is unusable: the spec does not fit the kernels (param
    /// kinds, a missing entry, no candidate). Never an expected verdict of
    /// a case (`valid_for` is false for both kinds); a report's word only.
    #[serde(rename = "invalid-input")]
    InvalidInput,
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
    pub const ALL: [Verdict; 11] = [
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
        Verdict::InvalidInput,
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
            Verdict::InvalidInput => "invalid-input",
        }
    }

    /// The process exit code of a command that ends in this verdict (the
    /// only exit mapping; `ptxeq` uses it for check, race, terms, watch):
    /// 0 proved (equivalent, race-free), 1 refuted (a bug with a witness),
    /// 2 undecided, 3 invalid input, 4 the result depends on the schedule.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Equivalent | Verdict::RaceFree => 0,
            Verdict::NotEquivalent
            | Verdict::Race
            | Verdict::Deadlock
            | Verdict::Divergence
            | Verdict::OutOfBounds
            | Verdict::Uninitialised => 1,
            Verdict::Unsupported => 2,
            Verdict::InvalidInput => 3,
            Verdict::OrderDependent => 4,
        }
    }

    /// How telling this verdict is when several are reached (findings of
    /// one kernel, the kernels of a pair): lower outranks higher. Input
    /// that does not fit outranks everything; a real bug (a proof of
    /// misbehaviour, in declaration order) outranks "could not decide",
    /// which outranks a proof of correctness.
    pub fn rank(self) -> u8 {
        match self {
            Verdict::InvalidInput => 0,
            Verdict::Race => 1,
            Verdict::OrderDependent => 2,
            Verdict::Deadlock => 3,
            Verdict::Divergence => 4,
            Verdict::OutOfBounds => 5,
            Verdict::Uninitialised => 6,
            Verdict::NotEquivalent => 7,
            Verdict::Unsupported => 100,
            Verdict::Equivalent | Verdict::RaceFree => 200,
        }
    }

    /// The most telling of several verdicts by [`Verdict::rank`]; `None`
    /// for an empty list.
    pub fn most_telling(vs: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
        vs.into_iter().min_by_key(|v| v.rank())
    }

    /// Whether this verdict proves the property checked.
    pub fn is_proof(self) -> bool {
        self.exit_code() == 0
    }

    /// Whether a case of this kind can reach this verdict: `equivalent` and
    /// `not-equivalent` need two kernels, `race-free` is the single-kernel
    /// success; the error verdicts apply to both.
    pub fn valid_for(self, kind: CaseKind) -> bool {
        match self {
            Verdict::Equivalent | Verdict::NotEquivalent => kind == CaseKind::Pair,
            Verdict::RaceFree => kind == CaseKind::Single,
            Verdict::InvalidInput => false,
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
        assert!(!Verdict::InvalidInput.valid_for(CaseKind::Single));
    }

    #[test]
    fn ranking_and_exit_codes() {
        use Verdict::*;
        assert_eq!(
            Verdict::most_telling([RaceFree, Unsupported, RaceFree]),
            Some(Unsupported)
        );
        assert_eq!(
            Verdict::most_telling([Unsupported, Deadlock, RaceFree]),
            Some(Deadlock)
        );
        assert_eq!(Verdict::most_telling([Uninitialised, Race]), Some(Race));
        assert_eq!(Verdict::most_telling([OrderDependent, Race]), Some(Race));
        assert_eq!(Verdict::most_telling([]), None);
        let codes: Vec<u8> = Verdict::ALL.iter().map(|v| v.exit_code()).collect();
        assert_eq!(codes, [0, 1, 0, 1, 4, 1, 1, 1, 1, 2, 3]);
        assert!(Equivalent.is_proof() && RaceFree.is_proof() && !Unsupported.is_proof());
    }
}
