//! A cheap look for a gross difference before any normal form is built
//! (issue 20).
//!
//! A wrong element's normal form does not cancel, and building it is the
//! dearest thing the decision procedure does (on an edited attention
//! kernel, seconds and gigabytes per element), only for sampling to find
//! the difference afterwards. [`Presampler`] evaluates both terms at a few
//! fixed points first and refutes when they differ *grossly* and rigorous
//! interval enclosures confirm it.
//!
//! Soundness does not depend on what the normal form would have recovered:
//! every constant that constant recovery could read as an exact constant
//! (`consts::recover`, by its value alone) is enclosed by the hull of its
//! literal value and that exact constant, so disjoint enclosures mean the
//! terms differ at the point under *every* reading of the constants — the
//! literal one, the recovered one, and any mix. Such a refutation rests on
//! no recovery, and none is reported with it.
//!
//! The points are fixed per input element (a hash of seed, round, tensor
//! and index), not per element pair, so one memo of node values per point
//! serves every element a worker decides: the sub-terms a row shares (its
//! scores, its maximum and sum) are evaluated once. Whether an element is
//! refuted, and its witness, depend only on its two terms.

use ptxeq_terms::F64Memo;

use super::interval::{EnclosureMemo, Interval};
use super::{Counterexample, DecideOptions, Enclosure, InputGrid};
use crate::{Node, TermId, Terms};

/// Points tried before a normal form is built: dyadics in [-2, 2], then
/// positive values (the domains of `log` and `sqrt`).
pub const PRESAMPLE_POINTS: u32 = 2;

/// Relative difference of the two `f64` values below which a point is not
/// worth confirming: two evaluation orders of equal terms differ by
/// rounding far below it, a wrong element by far more.
const GROSS: f64 = 1.0 / 4096.0;

/// Ulps by which a recoverable constant's hull is widened beyond its
/// literal and exact values (the exact value is a product of two rounded
/// `f64`s for scaled constants).
const HULL_ULPS: u32 = 4;

/// One worker's presampling state: per point, the memos of node values.
pub struct Presampler {
    seed: u64,
    grids: Vec<(u32, InputGrid)>,
    points: Vec<Point>,
}

struct Point {
    round: u32,
    values: F64Memo,
    /// Built on the first element that differs grossly at this point.
    enclosures: Option<EnclosureMemo>,
}

impl Presampler {
    /// A presampler for the elements of one store, sampled as `opts` says
    /// (its seed and the narrow input formats' grids).
    pub fn new(opts: &DecideOptions) -> Presampler {
        Presampler {
            seed: opts.seed,
            grids: opts.input_grids.clone(),
            points: (0..PRESAMPLE_POINTS)
                .map(|round| Point {
                    round,
                    values: F64Memo::default(),
                    enclosures: None,
                })
                .collect(),
        }
    }

    /// A confirmed counterexample for `reference = candidate` at one of the
    /// fixed points, or `None` (which says nothing: the full procedure
    /// decides). Integer-valued roots and terms that read integer inputs
    /// are left to the full procedure, which samples integers in their
    /// types' ranges.
    pub fn refute(
        &mut self,
        terms: &Terms,
        reference: TermId,
        candidate: TermId,
    ) -> Option<Counterexample> {
        if terms.is_int(reference) || terms.is_int(candidate) {
            return None;
        }
        let (seed, grids) = (self.seed, &self.grids);
        for p in &mut self.points {
            let round = p.round;
            let f = |k: u32, i: u64| point_value(seed, round, k, i, grids);
            let a = p.values.eval(terms, reference, &f);
            let b = p.values.eval(terms, candidate, &f);
            if !(a.is_finite() && b.is_finite()) || (a - b).abs() <= GROSS * a.abs().max(b.abs()) {
                continue;
            }
            let enc = p.enclosures.get_or_insert_with(EnclosureMemo::default);
            let hull = |_: TermId, node: &Node| recoverable_hull(node);
            let x = enc.enclosure(terms, reference, &f, &hull);
            let y = enc.enclosure(terms, candidate, &f, &hull);
            let (Enclosure::Real(x), Enclosure::Real(y)) = (x, y) else {
                continue;
            };
            if !x.disjoint(&y) {
                continue;
            }
            let reads = super::Reads::of(terms, &[reference, candidate]);
            if !reads.ints.is_empty() {
                return None;
            }
            return Some(reads.witness(&f, a, b));
        }
        None
    }
}

/// The enclosure of a constant that constant recovery could read as an
/// exact constant: the hull of its literal value and that constant.
/// `None` for every other node (read as usual).
fn recoverable_hull(node: &Node) -> Option<Option<Interval>> {
    let Node::Const(r) = node else {
        return None;
    };
    let (_, _, _, exact) = crate::normal::recoverable_constant(r)?;
    let lit = r.to_f64();
    Some(Interval::widened(lit.min(exact), lit.max(exact), HULL_ULPS))
}

/// The value of input element `index` of tensor `tensor` at point
/// `round`: a small dyadic rational (exact in `f64`), rounded onto the
/// tensor's grid when it holds a narrow format.
fn point_value(seed: u64, round: u32, tensor: u32, index: u64, grids: &[(u32, InputGrid)]) -> f64 {
    let mut state =
        seed ^ (u64::from(round) << 56) ^ u64::from(tensor).wrapping_mul(0xA24B_AED4_963E_E407);
    super::splitmix(&mut state);
    state ^= index.wrapping_mul(0x9FB2_1C65_1E98_DF25);
    let r = super::splitmix(&mut state);
    let v = match round {
        0 => ((r % 33) as f64 - 16.0) / 8.0,
        _ => (1 + r % 32) as f64 / 8.0,
    };
    match grids.iter().find(|(k, _)| *k == tensor) {
        Some((_, g)) => g.round(v),
        None => v,
    }
}
