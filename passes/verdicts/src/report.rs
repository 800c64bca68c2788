//! The artifact of the verdicts pass: per output tensor, how many elements
//! were proved, refuted or left unknown, and the failing elements with
//! their formulas and witnesses.

use ptxeq_decide::decide::Counterexample;
use ptxeq_exec::StoreSite;
use serde::{Deserialize, Serialize};

/// Failing elements kept per tensor (the rest are counted only).
pub const MAX_FAILURES_KEPT: usize = 32;

/// Why one element is not proved.
///
/// Serialised tagged (`{"kind": "refuted", …}`) in human-readable formats
/// (the JSON report) and externally tagged in binary ones (the disk cache:
/// bincode cannot read internally tagged enums back).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(from = "Stored", into = "Stored")]
pub enum Failure {
    /// The two terms differ at a concrete, confirmed input.
    Refuted { counterexample: Counterexample },
    /// One kernel writes the element and the other leaves it unwritten
    /// (an `output` tensor): different for every input.
    WrittenByOne { writer: String },
    /// Both kernels write a concrete bit pattern, and the patterns differ
    /// (an integer output, or a float constant): different for every input.
    BitsDiffer { reference: u64, candidate: u64 },
    /// Neither proved nor refuted; `residual` is the nonzero difference of
    /// the normal forms when there was one.
    Unknown {
        reason: String,
        residual: Option<String>,
    },
    /// An element's value could not be modelled in one of the kernels.
    Unsupported { reason: String },
}

/// [`Failure`]'s serialised form (see there).
#[derive(Clone)]
struct Stored(Failure);

impl From<Stored> for Failure {
    fn from(s: Stored) -> Failure {
        s.0
    }
}

impl From<Failure> for Stored {
    fn from(f: Failure) -> Stored {
        Stored(f)
    }
}

/// The variants of [`Failure`], once per tagging.
macro_rules! failure_mirror {
    ($name:ident $(, $attr:meta)?) => {
        #[derive(Serialize, Deserialize)]
        $(#[$attr])?
        enum $name {
            Refuted { counterexample: Counterexample },
            WrittenByOne { writer: String },
            BitsDiffer { reference: u64, candidate: u64 },
            Unknown { reason: String, residual: Option<String> },
            Unsupported { reason: String },
        }

        impl From<Failure> for $name {
            fn from(f: Failure) -> $name {
                match f {
                    Failure::Refuted { counterexample } => $name::Refuted { counterexample },
                    Failure::WrittenByOne { writer } => $name::WrittenByOne { writer },
                    Failure::BitsDiffer { reference, candidate } => {
                        $name::BitsDiffer { reference, candidate }
                    }
                    Failure::Unknown { reason, residual } => $name::Unknown { reason, residual },
                    Failure::Unsupported { reason } => $name::Unsupported { reason },
                }
            }
        }

        impl From<$name> for Failure {
            fn from(f: $name) -> Failure {
                match f {
                    $name::Refuted { counterexample } => Failure::Refuted { counterexample },
                    $name::WrittenByOne { writer } => Failure::WrittenByOne { writer },
                    $name::BitsDiffer { reference, candidate } => {
                        Failure::BitsDiffer { reference, candidate }
                    }
                    $name::Unknown { reason, residual } => Failure::Unknown { reason, residual },
                    $name::Unsupported { reason } => Failure::Unsupported { reason },
                }
            }
        }
    };
}

failure_mirror!(Tagged, serde(tag = "kind", rename_all = "kebab-case"));
failure_mirror!(Plain);

impl Serialize for Stored {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            Tagged::from(self.0.clone()).serialize(s)
        } else {
            Plain::from(self.0.clone()).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Stored(if d.is_human_readable() {
            Tagged::deserialize(d)?.into()
        } else {
            Plain::deserialize(d)?.into()
        }))
    }
}

impl Failure {
    /// Whether this failure is a refutation (a real difference).
    pub fn is_refutation(&self) -> bool {
        matches!(
            self,
            Failure::Refuted { .. } | Failure::WrittenByOne { .. } | Failure::BitsDiffer { .. }
        )
    }
}

/// One element that was not proved.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct ElementFailure {
    /// Flat (row-major) element index.
    pub index: u64,
    /// The same index per dimension of the tensor's shape.
    pub coords: Vec<u64>,
    /// The reference kernel's formula (cut at a display limit).
    pub reference: String,
    /// The candidate kernel's formula (cut at a display limit).
    pub candidate: String,
    pub failure: Failure,
    /// The store that wrote the reference kernel's value of the element
    /// (`None`: a formula reference, an unwritten element, or a writer not
    /// recorded).
    pub reference_store: Option<StoreSite>,
    /// The store that wrote the candidate kernel's value.
    pub candidate_store: Option<StoreSite>,
}

/// Verdict counts of one output tensor.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct TensorVerdicts {
    pub tensor: u32,
    pub name: String,
    pub shape: Vec<u64>,
    /// The spec's `compare` box (one half-open range per dimension), when
    /// only part of the tensor is compared.
    pub compare_region: Option<Vec<[u64; 2]>>,
    /// Elements written (by either kernel) outside `compare_region`: not
    /// compared.
    pub outside: u64,
    /// Elements in the compared region written by at least one kernel.
    pub compared: u64,
    pub proved: u64,
    pub refuted: u64,
    pub unknown: u64,
    /// Proved because both kernels built the very same term (no normal
    /// form needed).
    pub identical: u64,
    /// Not decided: the verdict was already final (enough elements were
    /// refuted, [`crate::StopRule`]). Neither proved nor failing.
    pub not_decided: u64,
    /// The first failing elements, by index ([`MAX_FAILURES_KEPT`]).
    pub failures: Vec<ElementFailure>,
}

/// Counters of one comparison.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct VerdictStats {
    /// Element pairs the decision procedure ran on.
    pub decided: u64,
    /// Element pairs answered from the decision memo (same pair of terms
    /// decided before: another element, an earlier run).
    pub memo_hits: u64,
    /// Element pairs left undecided because the verdict was already
    /// final ([`crate::StopRule::max_refuted`] refuted elements found).
    pub not_decided: u64,
    /// The stop rule in force (`None`: every element decided).
    pub max_refuted: Option<u64>,
    /// Wall-clock time of the comparison, in microseconds.
    pub micros: u64,
}

/// The verdicts of a check: every output tensor (merged over the CTAs
/// checked), compared element-wise.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Verdicts {
    /// The reference's CTAs whose writes were compared.
    pub ctas: Vec<[u32; 3]>,
    /// The candidate's CTAs whose writes were compared (its launch may
    /// differ from the reference's).
    pub candidate_ctas: Vec<[u32; 3]>,
    /// Whether, for both kernels, those CTAs include every CTA that writes
    /// a compared element (else elements written by one kernel only are
    /// unknown, not differences).
    pub complete: bool,
    pub tensors: Vec<TensorVerdicts>,
    /// Constant recoveries the decision procedure relied on (`log2 e` for
    /// the rounded `0f3FB8AA3B`, …): part of the modelling assumptions.
    pub recoveries: Vec<String>,
    pub stats: VerdictStats,
}

impl Verdicts {
    pub fn refuted(&self) -> u64 {
        self.tensors.iter().map(|t| t.refuted).sum()
    }

    pub fn unknown(&self) -> u64 {
        self.tensors.iter().map(|t| t.unknown).sum()
    }

    /// Elements not decided because the verdict was already final.
    pub fn not_decided(&self) -> u64 {
        self.tensors.iter().map(|t| t.not_decided).sum()
    }

    /// Whether deciding stopped early (some element was not decided: the
    /// refutations found already make the verdict `not-equivalent`).
    pub fn stopped_early(&self) -> bool {
        self.not_decided() > 0
    }

    pub fn proved(&self) -> u64 {
        self.tensors.iter().map(|t| t.proved).sum()
    }
}
