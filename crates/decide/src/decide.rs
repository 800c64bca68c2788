//! The per-element decision procedure (docs/semantics.md §5): `proved`,
//! `refuted` with a counterexample, or `unknown` with the residual.
//!
//! [`decide`] is the one entry point the verdicts pass calls, once per
//! output element pair:
//! 1. the normal form ([`crate::normal`]) is asked for an exact identity
//!    (constant recovery included: see [`decide_with_report`] for the
//!    recoveries it used);
//! 2. when that fails, sampled inputs (several deterministic
//!    distributions) look for a point where the terms differ; a
//!    difference counts only once *confirmed*: by exact rational
//!    evaluation for `exp`/function-free terms, otherwise by disjoint
//!    rigorous interval enclosures (`decide/interval.rs`) — never on ±inf or
//!    rounding noise. One NaN side counts only when that term is *certainly*
//!    undefined there (`ln`/`sqrt` of a certainly negative value carried by
//!    arithmetic to the root) and the other has a finite enclosure: one
//!    kernel outputs a real number, the other NaN;
//! 3. otherwise `max`/`min`/`select` atoms of the residual are case-split
//!    ([`Normalizer::split_equal`]); proved only if every feasible case
//!    proves. A case whose residual survives is sampled once more with
//!    its inputs held at a point satisfying the case's linear facts
//!    (`x > 6` for a dropped relu6 clamp), confirmed as in step 2.
//!
//! Nothing is ever proved by sampling: sampling can only refute.

#[cfg(test)]
mod constant_tests;
mod exact;
mod interval;
mod presample;
#[cfg(test)]
mod presample_tests;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

pub use exact::{eval_exact, is_algebraic};
pub use interval::{Enclosure, Interval, eval_enclosures, eval_intervals, eval_intervals_with};
pub use presample::{PRESAMPLE_POINTS, Presampler};

use crate::normal::{self, Decision, Normalizer, Recovery, SplitOutcome};
use crate::{Node, TermId, Terms};

/// Knobs of [`decide`].
#[derive(Clone, Debug)]
pub struct DecideOptions {
    /// Sample points tried when looking for a counterexample.
    pub samples: u32,
    /// Seed of the deterministic sampler (same seed, same witness).
    pub seed: u64,
    /// Most leaf cases a `max`/`min`/`select` case split may explore
    /// before the element is `unknown` (a resource limit).
    pub max_cases: u32,
    /// Input tensors (by number) whose elements hold a float format
    /// narrower than the sampled dyadics (fp8): sampled values are
    /// rounded onto the format's grid, so a witness is an input the
    /// tensor can hold.
    pub input_grids: Vec<(u32, InputGrid)>,
}

/// The finite values of a narrow float format, as the sampler needs
/// them: `mant_bits` stored mantissa bits, normal exponents from
/// `min_exp` (subnormals below, on the grid `2^(min_exp − mant_bits)`),
/// magnitudes up to `max`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputGrid {
    pub mant_bits: u32,
    pub min_exp: i32,
    pub max: f64,
}

impl InputGrid {
    /// `x` rounded to a value of the format (to nearest, ties away from
    /// zero; clamped to ±`max`). Exact in `f64`.
    pub fn round(&self, x: f64) -> f64 {
        if x == 0.0 || !x.is_finite() {
            return x;
        }
        let a = x.abs().min(self.max);
        let e = (a.log2().floor() as i32).max(self.min_exp);
        let q = 2f64.powi(e - self.mant_bits as i32);
        let r = ((a / q).round() * q).min(self.max);
        r.copysign(x)
    }
}

impl Default for DecideOptions {
    fn default() -> Self {
        DecideOptions {
            samples: 24,
            seed: 0x5eed_ba5e,
            max_cases: 64,
            input_grids: Vec::new(),
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
    /// The interpretation used for each uninterpreted function symbol
    /// either term applies (`f(a1) = (9 + 3·a1 + 2·a1²)/16`): the witness
    /// holds for these functions.
    #[serde(default)]
    pub functions: Vec<String>,
    /// When the two values are too close for `f64` to tell apart (the
    /// normal forms differ by a tiny constant such as 2⁻¹⁴⁹): how they
    /// differ, exactly.
    #[serde(default)]
    pub exact_difference: Option<String>,
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

/// A verdict with the constant recoveries its normal forms used.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct DecideReport {
    pub decision: ElementDecision,
    /// Rounded constants read as the exact constant (docs/semantics.md §5); to be
    /// listed in the report.
    pub recoveries: Vec<Recovery>,
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
            let recovered = n.recovered_values_in(&[reference, candidate]);
            if let Some(cx) =
                find_counterexample(n.terms(), reference, candidate, &recovered, opts, &[])
            {
                return ElementDecision::Refuted(cx);
            }
            if n.terms().is_int(reference) || n.terms().is_int(candidate) {
                // Canonical polynomials modulo 2^w are equal exactly when
                // the functions are (for variables of 8 bits or more), but
                // atoms over different arguments may still agree.
                return ElementDecision::Unknown {
                    reason: "the integer normal forms (polynomials modulo 2^w) differ and no \
                             sampled integer input separates them"
                        .into(),
                    residual: Some(residual),
                };
            }
            // A nonzero constant residual: the terms differ wherever both
            // are defined, by an amount sampling in f64 may never see.
            // Literal constants only: a recovered constant changes the
            // function, and the difference must hold for the kernel's own.
            if recovered.is_empty()
                && let Some(c) = n.constant_residual(reference, candidate)
                && let Some(cx) = constant_witness(n.terms(), reference, candidate, &c, opts)
            {
                return ElementDecision::Refuted(cx);
            }
            match n.split_equal(reference, candidate, opts.max_cases) {
                SplitOutcome::Proved { cases } => ElementDecision::Proved { case_splits: cases },
                SplitOutcome::NotProved {
                    case,
                    residual,
                    point,
                } => {
                    // The residual survives in this case: look inside it
                    // (its linear facts' point), which plain sampling may
                    // never reach (`x > 6` for a dropped relu6 clamp).
                    let fixed = fixed_inputs(n.terms(), &point);
                    if !fixed.is_empty()
                        && let Some(cx) = find_counterexample(
                            n.terms(),
                            reference,
                            candidate,
                            &recovered,
                            opts,
                            &fixed,
                        )
                    {
                        return ElementDecision::Refuted(cx);
                    }
                    ElementDecision::Unknown {
                        reason: format!(
                            "the normal forms differ (in the case {case}) and no sampled input separates them"
                        ),
                        residual: Some(residual),
                    }
                }
                SplitOutcome::Unknown(why) => ElementDecision::Unknown {
                    reason: format!(
                        "the normal forms differ and no sampled input separates them ({why})"
                    ),
                    residual: Some(residual),
                },
            }
        }
        Decision::Unknown(e) => match find_counterexample(
            n.terms(),
            reference,
            candidate,
            &n.recovered_values_in(&[reference, candidate]),
            opts,
            &[],
        ) {
            Some(cx) => ElementDecision::Refuted(cx),
            None => ElementDecision::Unknown {
                reason: e.to_string(),
                residual: None,
            },
        },
    }
}

/// [`decide`], plus the constant recoveries the two terms' normal forms
/// used.
pub fn decide_with_report(
    n: &mut Normalizer<'_>,
    reference: TermId,
    candidate: TermId,
    opts: &DecideOptions,
) -> DecideReport {
    let decision = decide(n, reference, candidate, opts);
    DecideReport {
        decision,
        recoveries: n.recoveries_in(&[reference, candidate]),
    }
}

/// [`decide_with_report`] after a look for a gross, confirmed difference
/// at `presampler`'s fixed points ([`Presampler`]): a refutation found
/// there costs no normal form and rests on no constant recovery (its
/// `recoveries` are empty). The verdicts pass decides every element this
/// way, one presampler per worker.
pub fn decide_presampled(
    n: &mut Normalizer<'_>,
    presampler: &mut Presampler,
    reference: TermId,
    candidate: TermId,
    opts: &DecideOptions,
) -> DecideReport {
    match presampler.refute(n.terms(), reference, candidate) {
        Some(cx) => DecideReport {
            decision: ElementDecision::Refuted(cx),
            recoveries: Vec::new(),
        },
        None => decide_with_report(n, reference, candidate, opts),
    }
}

/// What a witness names, from one walk over the terms two roots reach:
/// the input symbols (sorted, de-duplicated), the integer ones with their
/// types, and the interpretations of the uninterpreted functions applied
/// (the walk over a refuted attention element's 10^5 nodes costs more
/// than its presampled refutation, so it is done once).
struct Reads {
    inputs: Vec<(u32, u64)>,
    ints: Vec<((u32, u64), crate::IntTy)>,
    functions: Vec<String>,
}

impl Reads {
    /// The witness at `point`: every input these reads name, with its
    /// value, and the two terms' values there.
    fn witness(
        self,
        point: &dyn Fn(u32, u64) -> f64,
        reference: f64,
        candidate: f64,
    ) -> Counterexample {
        Counterexample {
            inputs: self
                .inputs
                .iter()
                .map(|&(tensor, index)| WitnessInput {
                    tensor,
                    index,
                    value: point(tensor, index),
                })
                .collect(),
            reference,
            candidate,
            functions: self.functions,
            exact_difference: None,
        }
    }

    fn of(terms: &Terms, roots: &[TermId]) -> Reads {
        let mut inputs = Vec::new();
        let mut ints = Vec::new();
        let mut apps = std::collections::BTreeSet::new();
        for (_, node) in terms.reachable(roots) {
            match node {
                Node::Input { tensor, index } => inputs.push((*tensor, *index)),
                Node::IntInput { tensor, index, ty } => {
                    inputs.push((*tensor, *index));
                    ints.push(((*tensor, *index), *ty));
                }
                Node::Apply(app) => {
                    apps.insert((app.name.to_string(), app.args.len()));
                }
                _ => {}
            }
        }
        inputs.sort_unstable();
        inputs.dedup();
        ints.sort_unstable();
        ints.dedup();
        let functions = apps
            .into_iter()
            .map(|(n, k)| crate::uninterpreted::Interpretation::of(&n, k).to_string())
            .collect();
        Reads {
            inputs,
            ints,
            functions,
        }
    }
}

/// The input symbols `t` reads, sorted and de-duplicated.
pub fn inputs_of(terms: &Terms, roots: &[TermId]) -> Vec<(u32, u64)> {
    Reads::of(terms, roots).inputs
}

/// The interpretations of the uninterpreted functions `roots` apply
/// (sorted by name and arity), as printed with a witness.
pub fn interpretations_of(terms: &Terms, roots: &[TermId]) -> Vec<String> {
    Reads::of(terms, roots).functions
}

/// A value of integer type `ty` for sample round `round`, exact in `f64`
/// (64-bit values are a 53-bit mantissa times a power of two). The
/// distributions: small values; the whole range; the extremes and their
/// neighbours; powers of two and their neighbours; the whole range again;
/// values in ±1000 (those cycle with [`sample`]'s).
fn sample_int(round: u32, ty: crate::IntTy, state: &mut u64) -> f64 {
    let (lo, hi) = (ty.lowest(), ty.highest());
    let r = splitmix(state);
    let clamp = |v: i128| v.clamp(lo, hi);
    let whole = |r: u64| -> i128 {
        let span = (hi - lo) as u128;
        if ty.bits <= 52 {
            lo + (u128::from(r) % (span + 1)) as i128
        } else {
            // m·2^k with m < 2^53: exact in f64, any magnitude.
            let m = (r >> 11) as i128;
            let k = (r & 63) as u32 % (u32::from(ty.bits) - 52);
            let v = m << k;
            let v = if ty.signed && (r >> 10) & 1 == 1 {
                -v
            } else {
                v
            };
            v.clamp(lo, hi)
        }
    };
    let v = match round % DISTRIBUTIONS {
        0 => clamp((r % 9) as i128 - if ty.signed { 4 } else { 0 }),
        1 | 4 => whole(r),
        2 => {
            let d = (r % 3) as i128;
            if (r >> 8) & 1 == 1 { hi - d } else { lo + d }
        }
        3 => {
            let k = (r % u64::from(ty.bits.min(63))) as u32;
            let p = 1i128 << k;
            let v = p + ((r >> 8) % 3) as i128 - 1;
            clamp(if ty.signed && (r >> 16) & 1 == 1 {
                -v
            } else {
                v
            })
        }
        _ => clamp((r % 2001) as i128 - if ty.signed { 1000 } else { 0 }),
    };
    v as f64
}

/// Rounds the sampled values of narrow-format tensors onto their grids.
fn on_input_grids(values: &mut hashbrown::HashMap<(u32, u64), f64>, grids: &[(u32, InputGrid)]) {
    if grids.is_empty() {
        return;
    }
    for ((tensor, _), v) in values.iter_mut() {
        if let Some((_, g)) = grids.iter().find(|(k, _)| k == tensor) {
            *v = g.round(*v);
        }
    }
}

/// SplitMix64: a tiny, deterministic generator for sample points.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Number of sample distributions [`sample`] cycles through.
const DISTRIBUTIONS: u32 = 6;

/// Values for `n` inputs at sample round `round`; every value is a small
/// dyadic rational, exact in `f64`. The distributions: dyadics in
/// [-2, 2]; distinct values (a shuffled ramp: no ties, so every
/// `max`/`select` branch order shows up); small integers; positive values
/// (domains of `log`/`sqrt`); larger magnitudes; tiny magnitudes.
fn sample(round: u32, n: usize, state: &mut u64) -> Vec<f64> {
    let mut r = || splitmix(state);
    match round % DISTRIBUTIONS {
        0 => (0..n).map(|_| ((r() % 33) as f64 - 16.0) / 8.0).collect(),
        1 => {
            let mut perm: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                let j = (r() % (i as u64 + 1)) as usize;
                perm.swap(i, j);
            }
            perm.into_iter()
                .map(|p| (p as f64 - (n / 2) as f64) / 4.0)
                .collect()
        }
        2 => (0..n).map(|_| (r() % 7) as f64 - 3.0).collect(),
        3 => (0..n).map(|_| (1 + r() % 32) as f64 / 8.0).collect(),
        4 => (0..n)
            .map(|_| {
                let v = r();
                let m = (1 + v % 64) as f64 + ((v >> 8) % 16) as f64 / 16.0;
                if (v >> 16) & 1 == 1 { -m } else { m }
            })
            .collect(),
        _ => (0..n)
            .map(|_| {
                let v = r();
                let m = (1 + v % 16) as f64 / 256.0;
                if (v >> 16) & 1 == 1 { -m } else { m }
            })
            .collect(),
    }
}

/// Whether the two terms really differ at `point`: exact rational
/// evaluation when both are `exp`/function-free and defined there,
/// otherwise disjoint interval enclosures. With recovered constants the
/// difference must hold both for the literal constants and for the exact
/// ones they were read as, so the witness is valid under either reading.
fn confirmed(
    terms: &Terms,
    roots: [TermId; 2],
    algebraic: bool,
    point: &dyn Fn(u32, u64) -> f64,
    recovered: &hashbrown::HashMap<TermId, f64>,
) -> bool {
    if !recovered.is_empty() {
        let v = eval_intervals_with(terms, &roots, point, recovered);
        if !matches!((v[0], v[1]), (Some(a), Some(b)) if a.disjoint(&b)) {
            return false;
        }
    }
    if algebraic {
        let exact = |k: u32, i: u64| crate::normal::rat_of_f64(point(k, i));
        let v = eval_exact(terms, &roots, &exact);
        if let (Some(a), Some(b)) = (&v[0], &v[1]) {
            return a != b;
        }
    }
    let v = eval_intervals(terms, &roots, point);
    matches!((v[0], v[1]), (Some(a), Some(b)) if a.disjoint(&b))
}

/// Whether exactly one of the two terms is certainly undefined at `point`
/// (NaN on hardware: e.g. `e^{z·ln x}` at `x < 0`) while the other has a
/// finite enclosure — a real difference, since one kernel outputs a real
/// number and the other none. Must hold with recovered constants read
/// either way, as in [`confirmed`].
fn confirmed_undefined(
    terms: &Terms,
    roots: [TermId; 2],
    point: &dyn Fn(u32, u64) -> f64,
    recovered: &hashbrown::HashMap<TermId, f64>,
) -> bool {
    let none = hashbrown::HashMap::new();
    let readings: &[&hashbrown::HashMap<TermId, f64>] = if recovered.is_empty() {
        &[&none]
    } else {
        &[&none, recovered]
    };
    let mut side = None;
    for consts in readings {
        let s = match eval_enclosures(terms, &roots, point, consts)[..] {
            [Enclosure::Undefined, Enclosure::Real(_)] => 0,
            [Enclosure::Real(_), Enclosure::Undefined] => 1,
            _ => return false,
        };
        if *side.get_or_insert(s) != s {
            return false;
        }
    }
    side.is_some()
}

/// The `(tensor, index, value)` of each input node of a case point, its
/// value rounded to the nearest `f64` (confirmation re-checks the
/// difference at exactly that value).
fn fixed_inputs(terms: &Terms, point: &[(TermId, crate::Rat)]) -> Vec<((u32, u64), f64)> {
    point
        .iter()
        .filter_map(|(t, v)| match terms.node(*t) {
            Node::Input { tensor, index } => {
                let x = v.to_f64();
                x.is_finite().then_some(((*tensor, *index), x))
            }
            _ => None,
        })
        .collect()
}

/// Samples inputs (see [`sample`]), with the inputs in `fixed` held at
/// their given values, until the two terms evaluate differently in `f64`
/// and [`confirmed`] agrees; the witness lists every input either term
/// reads.
fn find_counterexample(
    terms: &Terms,
    reference: TermId,
    candidate: TermId,
    recovered: &hashbrown::HashMap<TermId, f64>,
    opts: &DecideOptions,
    fixed: &[((u32, u64), f64)],
) -> Option<Counterexample> {
    let reads = Reads::of(terms, &[reference, candidate]);
    let (inputs, ints) = (&reads.inputs, &reads.ints);
    let int_roots = terms.is_int(reference) || terms.is_int(candidate);
    let algebraic = is_algebraic(terms, &[reference, candidate]);
    let mut state = opts.seed;
    for round in 0..opts.samples {
        let vals = sample(round, inputs.len(), &mut state);
        let mut values: hashbrown::HashMap<(u32, u64), f64> =
            inputs.iter().copied().zip(vals.iter().copied()).collect();
        on_input_grids(&mut values, &opts.input_grids);
        for (k, ty) in ints {
            values.insert(*k, sample_int(round, *ty, &mut state));
        }
        for (k, v) in fixed {
            if let Some(x) = values.get_mut(k) {
                *x = *v;
            }
        }
        let f = |k: u32, i: u64| values.get(&(k, i)).copied().unwrap_or(0.0);
        if int_roots {
            // Integers: exact evaluation is the test and the confirmation.
            if let Some(cx) = int_counterexample(terms, [reference, candidate], inputs, &f) {
                return Some(cx);
            }
            continue;
        }
        let v = terms.eval_many_f64(&[reference, candidate], &f);
        let one_nan = v[0].is_nan() != v[1].is_nan() && (v[0].is_finite() || v[1].is_finite());
        if !one_nan && (!(v[0].is_finite() && v[1].is_finite()) || v[0] == v[1]) {
            continue;
        }
        let ok = if one_nan {
            confirmed_undefined(terms, [reference, candidate], &f, recovered)
        } else {
            confirmed(terms, [reference, candidate], algebraic, &f, recovered)
        };
        if ok {
            return Some(reads.witness(&f, v[0], v[1]));
        }
    }
    None
}

/// Rationals printed in a witness before they are cut.
const EXACT_SHOWN: usize = 120;

/// A witness for two terms whose normal forms differ by the nonzero
/// constant `c` (so they differ wherever both are defined): the first
/// sample point where both are defined, the difference confirmed there by
/// exact rational evaluation (so only `exp`/function-free terms: other
/// values cannot be evaluated exactly, and a tiny difference is below what
/// interval enclosures separate).
fn constant_witness(
    terms: &Terms,
    reference: TermId,
    candidate: TermId,
    c: &crate::Rat,
    opts: &DecideOptions,
) -> Option<Counterexample> {
    if !is_algebraic(terms, &[reference, candidate]) {
        return None;
    }
    let inputs = inputs_of(terms, &[reference, candidate]);
    let mut state = opts.seed;
    let cut = |s: String| {
        if s.len() > EXACT_SHOWN {
            format!("{}…", &s[..EXACT_SHOWN])
        } else {
            s
        }
    };
    for round in 0..opts.samples {
        let vals = sample(round, inputs.len(), &mut state);
        let mut values: hashbrown::HashMap<(u32, u64), f64> =
            inputs.iter().copied().zip(vals.iter().copied()).collect();
        on_input_grids(&mut values, &opts.input_grids);
        let f = |k: u32, i: u64| values.get(&(k, i)).copied().unwrap_or(0.0);
        let exact = |k: u32, i: u64| crate::normal::rat_of_f64(f(k, i));
        let exact_difference = match &eval_exact(terms, &[reference, candidate], &exact)[..] {
            [Some(a), Some(b)] if a != b => format!(
                "reference − candidate = {} exactly (the normal forms differ by the constant {})",
                cut(a.add(&b.neg()).to_string()),
                cut(c.to_string())
            ),
            _ => continue,
        };
        let v = terms.eval_many_f64(&[reference, candidate], &f);
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
            functions: interpretations_of(terms, &[reference, candidate]),
            exact_difference: Some(exact_difference),
        });
    }
    None
}

/// The witness at `point` when the two integer terms' exact values differ
/// there (values reported as signed readings).
fn int_counterexample(
    terms: &Terms,
    roots: [TermId; 2],
    inputs: &[(u32, u64)],
    point: &dyn Fn(u32, u64) -> f64,
) -> Option<Counterexample> {
    let exact = |k: u32, i: u64| crate::normal::rat_of_f64(point(k, i));
    let v = eval_exact(terms, &roots, &exact);
    let (Some(a), Some(b)) = (&v[0], &v[1]) else {
        return None;
    };
    if a == b {
        return None;
    }
    let signed = |t: TermId, r: &crate::Rat| {
        let x = r.to_f64();
        match terms.int_width(t) {
            Some(w) if w < 64 && x >= (1u64 << (w - 1)) as f64 => x - (1u64 << w) as f64,
            Some(64) if x >= 9_223_372_036_854_775_808.0 => x - 18_446_744_073_709_551_616.0,
            _ => x,
        }
    };
    Some(Counterexample {
        inputs: inputs
            .iter()
            .map(|&(tensor, index)| WitnessInput {
                tensor,
                index,
                value: point(tensor, index),
            })
            .collect(),
        reference: signed(roots[0], a),
        candidate: signed(roots[1], b),
        functions: interpretations_of(terms, &roots),
        exact_difference: None,
    })
}

/// Whether `cx` really separates the two terms: both values re-evaluated
/// at its inputs, confirmed as in [`decide`] (for tests and replay).
pub fn check_counterexample(
    terms: &Terms,
    reference: TermId,
    candidate: TermId,
    cx: &Counterexample,
) -> bool {
    let values: hashbrown::HashMap<(u32, u64), f64> = cx
        .inputs
        .iter()
        .map(|w| ((w.tensor, w.index), w.value))
        .collect();
    let f = |k: u32, i: u64| values.get(&(k, i)).copied().unwrap_or(f64::NAN);
    if terms.is_int(reference) || terms.is_int(candidate) {
        let inputs = inputs_of(terms, &[reference, candidate]);
        return int_counterexample(terms, [reference, candidate], &inputs, &f).is_some();
    }
    let algebraic = is_algebraic(terms, &[reference, candidate]);
    let none = hashbrown::HashMap::new();
    if cx.reference.is_nan() != cx.candidate.is_nan() {
        return confirmed_undefined(terms, [reference, candidate], &f, &none);
    }
    confirmed(terms, [reference, candidate], algebraic, &f, &none)
}
