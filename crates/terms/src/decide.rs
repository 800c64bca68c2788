//! The per-element decision procedure (design.md §5): `proved`,
//! `refuted` with a counterexample, or `unknown` with the residual.
//!
//! [`decide`] is the one entry point the verdicts pass calls, once per
//! output element pair. It first asks the normal form ([`crate::normal`])
//! for an exact identity; when that fails it looks for a counterexample by
//! evaluating both terms at sampled inputs, and reports it only once the
//! difference is confirmed by a second evaluation. Nothing is ever proved
//! by sampling: sampling can only refute.

use serde::{Deserialize, Serialize};

use crate::normal::{self, Decision, Normalizer};
use crate::{Node, TermId, Terms};

/// Knobs of [`decide`].
#[derive(Clone, Debug)]
pub struct DecideOptions {
    /// Sample points tried when looking for a counterexample.
    pub samples: u32,
    /// Seed of the deterministic sampler (same seed, same witness).
    pub seed: u64,
}

impl Default for DecideOptions {
    fn default() -> Self {
        DecideOptions {
            samples: 16,
            seed: 0x5eed_ba5e,
        }
    }
}

/// One input element's value in a counterexample.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct WitnessInput {
    pub tensor: u32,
    pub index: u64,
    pub value: f64,
}

/// Concrete inputs at which the two terms evaluate differently.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Counterexample {
    /// Every input symbol either term reads, with its value.
    pub inputs: Vec<WitnessInput>,
    /// The reference term's value at `inputs`.
    pub reference: f64,
    /// The candidate term's value at `inputs`.
    pub candidate: f64,
}

/// Verdict for one output element.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub enum ElementDecision {
    /// Equal as real functions, by exact normal-form identity (after
    /// `case_splits` case splits over `max`/`min`/`select` orderings).
    Proved { case_splits: u32 },
    /// Different, with a confirmed witness.
    Refuted(Counterexample),
    /// Neither: `reason` says why; `residual` is the nonzero difference of
    /// the normal forms when there was one.
    Unknown {
        reason: String,
        residual: Option<String>,
    },
}

/// Decide `reference = candidate` (see the module docs).
pub fn decide(
    n: &mut Normalizer<'_>,
    reference: TermId,
    candidate: TermId,
    opts: &DecideOptions,
) -> ElementDecision {
    match normal::equal(n, reference, candidate) {
        Decision::Proved => ElementDecision::Proved { case_splits: 0 },
        Decision::NotProved { residual } => {
            match find_counterexample(n.terms(), reference, candidate, opts) {
                Some(cx) => ElementDecision::Refuted(cx),
                None => ElementDecision::Unknown {
                    reason: "the normal forms differ and no sampled input separates them".into(),
                    residual: Some(residual),
                },
            }
        }
        Decision::Unknown(e) => match find_counterexample(n.terms(), reference, candidate, opts) {
            Some(cx) => ElementDecision::Refuted(cx),
            None => ElementDecision::Unknown {
                reason: e.to_string(),
                residual: None,
            },
        },
    }
}

/// The input symbols `t` reads, sorted and de-duplicated.
pub fn inputs_of(terms: &Terms, roots: &[TermId]) -> Vec<(u32, u64)> {
    let mut seen = hashbrown::HashSet::new();
    let mut stack: Vec<TermId> = roots.to_vec();
    let mut out = Vec::new();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        let node = terms.node(t);
        if let Node::Input { tensor, index } = node {
            out.push((*tensor, *index));
        }
        stack.extend(node.children());
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// SplitMix64: a tiny, deterministic generator for sample points.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether two finite evaluations differ by more than evaluation error
/// could explain.
fn clearly_different(a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return false;
    }
    if a.is_infinite() || b.is_infinite() {
        return a != b;
    }
    (a - b).abs() > 1e-6 * (1.0 + a.abs().max(b.abs()))
}

/// Sample inputs (small dyadic values in [-2, 2]) until the two terms
/// evaluate clearly differently, then confirm at the same point.
fn find_counterexample(
    terms: &Terms,
    reference: TermId,
    candidate: TermId,
    opts: &DecideOptions,
) -> Option<Counterexample> {
    let inputs = inputs_of(terms, &[reference, candidate]);
    let mut state = opts.seed;
    for _ in 0..opts.samples {
        let values: hashbrown::HashMap<(u32, u64), f64> = inputs
            .iter()
            .map(|&k| {
                let r = splitmix(&mut state);
                (k, ((r % 33) as f64 - 16.0) / 8.0)
            })
            .collect();
        let f = |k: u32, i: u64| values.get(&(k, i)).copied().unwrap_or(0.0);
        let v = terms.eval_many_f64(&[reference, candidate], &f);
        if clearly_different(v[0], v[1]) {
            let again = terms.eval_many_f64(&[reference, candidate], &f);
            if again == v {
                return Some(Counterexample {
                    inputs: inputs
                        .iter()
                        .map(|&(tensor, index)| WitnessInput {
                            tensor,
                            index,
                            value: f(tensor, index),
                        })
                        .collect(),
                    reference: v[0],
                    candidate: v[1],
                });
            }
        }
    }
    None
}
