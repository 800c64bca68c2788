//! Normal form "rational function of exp-polynomials over exact
//! rationals" (docs/semantics.md §5, issue 5): the core of the decision
//! procedure.
//!
//! Every real term is mapped to `N/D`, where `N` and `D` are
//! [`ExpPoly`]s — sums `Σ c·m·e^h` with `c` rational, `m` a monomial over
//! [`Atom`]s and `h` an exp-free polynomial exponent. Inputs are atoms;
//! `exp(u)` with `u` polynomial becomes `e^u`, so `e^a·e^b = e^{a+b}`;
//! `ex2(u)` becomes `e^{u·ln2}`, `lg2(u)` is `log(u)·ln2⁻¹`, `tanh(u)` is
//! `(e^{2u} − 1)/(e^{2u} + 1)`, `log(e^u)` is `u` — all exact.
//! `max`/`min` and uninterpreted functions are application atoms over the
//! *normal forms* of their arguments ([`Atom::App`]: `max` arguments
//! sorted and de-duplicated), so arguments equal only up to algebra still
//! give one atom; `select` is an opaque atom named by its node.
//!
//! Rounded irrational constants (`0f3FB8AA3B` = f32 `log2 e`, ...) are
//! read as the exact constant over the invertible atoms `ln2`, `√π`, `√2`
//! (`consts.rs`; `ln2·log2e = 1` holds because `log2 e` *is* `ln2⁻¹`);
//! each recovery is recorded ([`Normalizer::recoveries`]).
//!
//! [`equal`] proves `f = g` only by exact polynomial identity of
//! `N_f·D_g` and `N_g·D_f` (or of the numerators after a single-term
//! denominator factor) — sound wherever both sides are defined, never by
//! sampling. It answers [`Decision::NotProved`] otherwise; the residual
//! may still vanish under case splits over `max`/`min`/`select`
//! ([`Normalizer::split_equal`], `cases.rs`), the caller's next step.
//!
//! Sizes are bounded by a term budget ([`DEFAULT_BUDGET`]): a product or
//! sum that would exceed it is [`NormalizeError::TooLarge`], so the
//! procedure never hangs on a blow-up.

mod cases;
mod consts;
pub mod key_memo;
mod linear;
mod poly;
mod ring;
/// `(ln2, k)` when `arg` is the constant `2^k`, `(ln10, k)` when it is
/// `10^k` (`k ≠ 0`, either sign); else `None`.
fn log_of_constant(arg: &RatFn) -> Option<(Atom, i64)> {
    if !arg.is_poly() {
        return None;
    }
    let c = arg.num.as_constant()?;
    if c.signum() <= 0 || c.is_one() {
        return None;
    }
    if let Some(k) = c.log2_exact() {
        return Some((Atom::Ln2, k));
    }
    let tenth = Rat::new(1, 10).expect("nonzero");
    let (mut v, inv) = if c > Rat::ONE {
        (c.clone(), false)
    } else {
        (c.recip()?, true)
    };
    let mut k = 0i64;
    while v > Rat::ONE && k < 64 {
        v = v.mul(&tenth);
        k += 1;
    }
    v.is_one().then_some((Atom::Ln10, if inv { -k } else { k }))
}

#[cfg(test)]
mod tests;

use hashbrown::{HashMap, HashSet};

pub use cases::SplitOutcome;
pub use consts::Recovery;
pub(crate) use consts::rat_of_f64;
/// Whether a constant's value is one constant recovery reads as exact
/// (by its value alone, wherever it occurs), for the presampler's hulls.
pub(crate) use consts::recover as recoverable_constant;
pub use poly::{Atom, ExpKey, ExpPoly, Monomial, TermKey};
pub use ring::{CondKey, RMono, RVar, RingArg, RingPoly, RingVar};

use crate::{Func, Node, Rat, TermId, Terms};

/// Default bound on the number of terms of any intermediate exp-polynomial.
pub const DEFAULT_BUDGET: usize = 50_000;

/// How many term products one multiplication may perform, per unit of
/// budget: products collapse (like terms), so the pre-check is looser
/// than the bound on the result, but still finite.
const WORK_PER_BUDGET: usize = 16;

/// Default bound on the terms held by the memo of one [`Normalizer`]
/// (numerators plus denominators): past it the memo is cleared between
/// (or, once, during) `normalize` calls instead of growing without bound.
pub const DEFAULT_MEMO_CAP: usize = 1_000_000;

/// Why a term has no normal form (the decision is then "unknown").
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum NormalizeError {
    /// An intermediate exp-polynomial would exceed the term budget.
    #[error("normal form too large ({terms} terms, budget {budget})")]
    TooLarge { terms: usize, budget: usize },
    /// The term (or a sub-term) is not a finite real: `±inf`, a boolean.
    #[error("term {0} is not a finite real")]
    NotReal(TermId),
    /// A reciprocal of a term whose normal form is `0`.
    #[error("term {0} divides by zero")]
    DivisionByZero(TermId),
}

/// `num / den`; `den` is never zero. After every operation it is tidied:
/// a zero fraction is `0/1`, a single-term denominator `c·m·e^h` whose
/// monomial is a known nonzero constant is moved into the numerator, and
/// otherwise the denominator's leading coefficient is `1`, so equal
/// denominators compare equal cheaply.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RatFn {
    pub num: ExpPoly,
    pub den: ExpPoly,
}

impl RatFn {
    /// A polynomial (`den = 1`).
    pub fn poly(num: ExpPoly) -> RatFn {
        RatFn {
            num,
            den: ExpPoly::constant(Rat::ONE),
        }
    }

    /// Whether the denominator is `1`.
    pub fn is_poly(&self) -> bool {
        self.den.is_one()
    }

    /// The single atom this is (`1·a`), if it is one.
    pub fn as_atom(&self) -> Option<Atom> {
        if !self.is_poly() || self.num.num_terms() != 1 {
            return None;
        }
        let ((m, h), c) = self.num.terms().next()?;
        match m.factors() {
            [(a, 1)] if h.is_zero() && c.is_one() => Some(*a),
            _ => None,
        }
    }

    fn tidy(mut self) -> RatFn {
        if self.num.is_zero() {
            self.den = ExpPoly::constant(Rat::ONE);
            return self;
        }
        let Some(((m, h), c)) = self.den.lead() else {
            return self;
        };
        let (m, h, c) = (m.clone(), h.clone(), c.clone());
        let Some(ci) = c.recip() else { return self };
        if self.den.num_terms() == 1 && m.is_invertible() {
            // 1/(c·m·e^h) = (1/c)·m⁻¹·e^{-h}: exact (m is a product of
            // nonzero constants), and keeps `exp(a)/exp(b)` and `exp(a-b)`
            // the same polynomial.
            if let Some((mi, k)) = Monomial::one().div(&m) {
                self.num = self.num.mul(&ExpPoly::term(mi, h.neg(), ci.mul(&k)));
                self.den = ExpPoly::constant(Rat::ONE);
                return self;
            }
        }
        if !c.is_one() {
            self.num = self.num.scale(&ci);
            self.den = self.den.scale(&ci);
        }
        self
    }
}

/// What an [`Atom::App`] applies to its normal-form arguments.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AppOp {
    /// An uninterpreted function.
    Func(Func),
    /// `exp` of an argument that is not an exp-free polynomial.
    Exp,
    /// `pow(x, y)` (C's `pow`) over the normal forms of base and exponent:
    /// what `Terms::pow` left (neither an integer nor a rational constant
    /// exponent, nor a positive constant base). Not `exp(y·log x)`: for a
    /// negative base and an integer exponent `pow` is real and that is
    /// undefined, so they are different functions (fast math's `__powf`
    /// is the latter).
    Pow,
    /// `max` of the (sorted, de-duplicated) arguments.
    Max,
    /// `min` of the (sorted, de-duplicated) arguments.
    Min,
    /// A node whose value depends on the current case split and that the
    /// normal form cannot look into: fresh per case (node, case number).
    Opaque(TermId, u32),
    /// An uninterpreted function symbol (`Node::Apply`), by its index in
    /// the normaliser's name table: equal names and equal argument normal
    /// forms are one atom, nothing else is known.
    Named(u32),
    /// The exact integer value of integer variable `v` (`ring.rs`).
    IntVar(ring::RVar),
    /// The signed or unsigned reading of an integer polynomial that may
    /// wrap ([`Normalizer::int_real`]).
    IntReal(u32),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct AppKey {
    op: AppOp,
    args: Vec<RatFn>,
}

/// The assumptions of one case of a case split: nodes replaced by other
/// nodes (a `max` by its chosen operand, a `select` by its branch, an input
/// by an input or constant it equals), the nodes whose value that changes
/// (`dirty`), and their normal forms in this case.
struct Case {
    id: u32,
    assign: HashMap<TermId, TermId>,
    dirty: HashSet<TermId>,
    memo: HashMap<TermId, Result<RatFn, NormalizeError>>,
}

/// Memoised normaliser over one term store. Normal forms are cached per
/// node, so sub-terms shared between outputs (or between the reference
/// and candidate kernels) are normalised once.
///
/// Memory: an accumulation chain (`acc_j = acc_{j-1}·r_j + x_j`, one per
/// output column of attention) has `O(j)`-term normal forms at step `j`,
/// so memoising every node costs `O(n²)` terms per chain. A node with a
/// single parent in the store can never be asked for again once that
/// parent is computed (unless it is a root of [`Normalizer::normalize`],
/// which stays pinned), so its entry is dropped then; and the memo as a
/// whole is capped ([`DEFAULT_MEMO_CAP`]).
pub struct Normalizer<'t> {
    terms: &'t Terms,
    memo: HashMap<TermId, Result<RatFn, NormalizeError>>,
    /// Parents of each node in the store (saturating; distinct parents
    /// per operand list are not distinguished, so a repeated operand
    /// counts twice — conservative). Computed on the first `normalize`.
    parents: Vec<u32>,
    /// Roots asked for by `normalize`: never dropped by the parent rule.
    pinned: HashSet<TermId>,
    /// Terms held by `memo` (numerators plus denominators).
    memo_terms: usize,
    memo_cap: usize,
    budget: usize,
    apps: HashMap<AppKey, u32>,
    app_table: Vec<(AppKey, TermId)>,
    /// Names of uninterpreted functions (`AppOp::Named`).
    fn_names: Vec<Box<str>>,
    recovered: HashMap<TermId, (Recovery, f64)>,
    recover_constants: bool,
    case: Option<Case>,
    cases_made: u32,
    /// The ring normal form of integer terms (`ring.rs`).
    ring: ring::RingState,
    /// `normalize` calls in progress inside another's step (an integer
    /// rounding of a real): those never clear the memo.
    nesting: u32,
}

impl<'t> Normalizer<'t> {
    /// A normaliser with [`DEFAULT_BUDGET`].
    pub fn new(terms: &'t Terms) -> Self {
        Self::with_budget(terms, DEFAULT_BUDGET)
    }

    /// A normaliser whose intermediate exp-polynomials have at most
    /// `budget` terms.
    pub fn with_budget(terms: &'t Terms, budget: usize) -> Self {
        Normalizer {
            terms,
            memo: HashMap::new(),
            parents: Vec::new(),
            pinned: HashSet::new(),
            memo_terms: 0,
            memo_cap: DEFAULT_MEMO_CAP,
            budget,
            apps: HashMap::new(),
            app_table: Vec::new(),
            fn_names: Vec::new(),
            recovered: HashMap::new(),
            recover_constants: true,
            case: None,
            cases_made: 0,
            ring: ring::RingState::default(),
            nesting: 0,
        }
    }

    /// Turns constant recovery (see [`Recovery`]) on or off (default on).
    /// Call before normalising anything: normal forms are memoised.
    pub fn set_constant_recovery(&mut self, on: bool) {
        self.recover_constants = on;
    }

    /// Sets the bound on the terms the memo holds (see [`DEFAULT_MEMO_CAP`]).
    pub fn set_memo_cap(&mut self, cap: usize) {
        self.memo_cap = cap;
    }

    /// Terms currently held by the (case-free) memo: for tests and
    /// measurements.
    pub fn memo_terms(&self) -> usize {
        self.memo_terms
    }

    /// The store this normaliser reads.
    pub fn terms(&self) -> &'t Terms {
        self.terms
    }

    /// Every constant recovery made so far, sorted and de-duplicated.
    pub fn recoveries(&self) -> Vec<Recovery> {
        let mut v: Vec<Recovery> = self.recovered.values().map(|r| r.0.clone()).collect();
        v.sort_by(|a, b| {
            (&a.name, &a.format, &a.value_seen).cmp(&(&b.name, &b.format, &b.value_seen))
        });
        v.dedup();
        v
    }

    /// The recoveries used by constants reachable from `roots`.
    pub fn recoveries_in(&self, roots: &[TermId]) -> Vec<Recovery> {
        if self.recovered.is_empty() {
            return Vec::new();
        }
        let mut v: Vec<_> = self
            .terms
            .reachable(roots)
            .filter_map(|(t, _)| self.recovered.get(&t).map(|r| r.0.clone()))
            .collect();
        v.sort_by(|a, b| {
            (&a.name, &a.format, &a.value_seen).cmp(&(&b.name, &b.format, &b.value_seen))
        });
        v.dedup();
        v
    }

    /// The recovered constant nodes reachable from `roots`, with the
    /// exact constant's nearest `f64` (for evaluation under the recovery
    /// convention).
    pub fn recovered_values_in(&self, roots: &[TermId]) -> HashMap<TermId, f64> {
        let mut out = HashMap::new();
        if self.recovered.is_empty() {
            return out;
        }
        for (t, _) in self.terms.reachable(roots) {
            if let Some(r) = self.recovered.get(&t) {
                out.insert(t, r.1);
            }
        }
        out
    }

    /// What application atom `i` is: its operator, arguments, and the
    /// node it was first made for.
    pub fn app(&self, i: u32) -> Option<(AppOp, &[RatFn], TermId)> {
        self.app_table
            .get(i as usize)
            .map(|(k, t)| (k.op, k.args.as_slice(), *t))
    }

    /// The normal form of `t`. Iterative (post-order over the arithmetic
    /// children), so deep accumulation chains cannot overflow the stack.
    pub fn normalize(&mut self, t: TermId) -> Result<RatFn, NormalizeError> {
        if self.parents.is_empty() {
            self.parents = parent_counts(self.terms);
        }
        self.pinned.insert(t);
        if self.nesting == 0 && self.memo_terms > self.memo_cap {
            self.clear_memo();
        }
        // One clear inside a call at most, so progress is guaranteed.
        let mut may_clear = self.nesting == 0;
        let mut stack = vec![(t, false)];
        while let Some((u, ready)) = stack.pop() {
            if self.lookup(u).is_some() {
                continue;
            }
            if ready {
                // Before a step, never after: the root just stored must
                // survive until it is returned.
                if may_clear && self.memo_terms > self.memo_cap.saturating_mul(2) {
                    may_clear = false;
                    self.clear_memo();
                }
                let missing: Vec<TermId> = self
                    .arith_children(u)
                    .into_iter()
                    .filter(|&c| self.lookup(c).is_none())
                    .collect();
                if !missing.is_empty() {
                    // Dropped by a memo clear since `u` was expanded.
                    stack.push((u, true));
                    stack.extend(missing.into_iter().map(|c| (c, false)));
                    continue;
                }
                let r = self.step(u);
                self.store(u, r);
                self.release_children(u);
            } else {
                stack.push((u, true));
                for c in self.arith_children(u) {
                    if self.lookup(c).is_none() {
                        stack.push((c, false));
                    }
                }
            }
        }
        self.lookup(t).cloned().expect("normalised above")
    }

    /// [`Self::normalize`] from inside another normalisation's step (the
    /// real operand of an integer rounding): never clears the memo the
    /// outer call is using.
    fn normalize_nested(&mut self, t: TermId) -> Result<RatFn, NormalizeError> {
        self.nesting += 1;
        let r = self.normalize(t);
        self.nesting -= 1;
        r
    }

    fn lookup(&self, u: TermId) -> Option<&Result<RatFn, NormalizeError>> {
        match &self.case {
            Some(c) if c.dirty.contains(&u) => c.memo.get(&u),
            _ => self.memo.get(&u),
        }
    }

    fn store(&mut self, u: TermId, r: Result<RatFn, NormalizeError>) {
        match &mut self.case {
            Some(c) if c.dirty.contains(&u) => {
                c.memo.insert(u, r);
            }
            _ => {
                self.memo_terms += size_of_entry(&r);
                if let Some(old) = self.memo.insert(u, r) {
                    self.memo_terms -= size_of_entry(&old);
                }
            }
        }
    }

    /// Drops the memo entries of `u`'s single-parent children now that
    /// `u` is computed: nothing else can ask for them (roots excepted).
    /// A child is dropped only from the memo `u` itself lives in, so a
    /// case never drops what a later case (or no case) still needs.
    fn release_children(&mut self, u: TermId) {
        let terms = self.terms;
        let dirty = |n: &Self, x: TermId| n.case.as_ref().is_some_and(|c| c.dirty.contains(&x));
        let u_dirty = dirty(self, u);
        for c in terms.node(u).children() {
            if self.parents.get(c.index()).copied() != Some(1)
                || self.pinned.contains(&c)
                || dirty(self, c) != u_dirty
            {
                continue;
            }
            if u_dirty {
                if let Some(case) = &mut self.case {
                    case.memo.remove(&c);
                }
            } else if let Some(old) = self.memo.remove(&c) {
                self.memo_terms -= size_of_entry(&old);
            }
        }
    }

    /// Empties the case-free memo (application atoms and constant
    /// recoveries are kept, so recomputed normal forms are identical).
    fn clear_memo(&mut self) {
        self.memo.clear();
        self.memo_terms = 0;
    }

    /// Children whose normal forms `step` needs (opaque atoms need none).
    fn arith_children(&self, t: TermId) -> Vec<TermId> {
        if let Some(c) = &self.case
            && let Some(&v) = c.assign.get(&t)
        {
            return vec![v];
        }
        match self.terms.node(t) {
            Node::Add(ops) | Node::Mul(ops) | Node::Max(ops) | Node::Min(ops) => ops.to_vec(),
            Node::Recip(a) | Node::Exp(a) | Node::Func(_, a) => vec![*a],
            Node::Pow(a, b) => vec![*a, *b],
            Node::Apply(app) => app.args.to_vec(),
            _ => Vec::new(),
        }
    }

    fn get(&self, t: TermId) -> &Result<RatFn, NormalizeError> {
        self.lookup(t).expect("children are normalised first")
    }

    /// An operand's normal form, or its error.
    fn operand(&self, t: TermId) -> Result<&RatFn, NormalizeError> {
        self.get(t).as_ref().map_err(Clone::clone)
    }

    /// The atom of an application (interned).
    fn app_atom(&mut self, op: AppOp, args: Vec<RatFn>, origin: TermId) -> RatFn {
        let key = AppKey { op, args };
        let i = match self.apps.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.app_table.len() as u32;
                self.app_table.push((key.clone(), origin));
                self.apps.insert(key, i);
                i
            }
        };
        RatFn::poly(ExpPoly::atom(Atom::App(i)))
    }

    /// A node the normal form does not look into: its own atom, or, when
    /// its value depends on the current case, a fresh one for this case.
    fn opaque(&mut self, u: TermId) -> RatFn {
        match &self.case {
            Some(c) if c.dirty.contains(&u) => {
                let id = c.id;
                self.app_atom(AppOp::Opaque(u, id), Vec::new(), u)
            }
            _ => RatFn::poly(ExpPoly::atom(Atom::Term(u))),
        }
    }

    /// One node, its arithmetic children already normalised.
    fn step(&mut self, t: TermId) -> Result<RatFn, NormalizeError> {
        if let Some(c) = &self.case
            && let Some(&v) = c.assign.get(&t)
        {
            return self.get(v).clone();
        }
        let terms = self.terms;
        Ok(match terms.node(t) {
            Node::Const(r) => match consts::recover(r).filter(|_| self.recover_constants) {
                Some((c, m, rec, exact)) => {
                    self.recovered.insert(t, (rec, exact));
                    RatFn::poly(ExpPoly::term(m, ExpKey::zero(), c))
                }
                None => RatFn::poly(ExpPoly::constant(r.clone())),
            },
            Node::Input { .. } => RatFn::poly(ExpPoly::atom(Atom::Term(t))),
            Node::Select(..) => self.opaque(t),
            Node::Max(ops) => self.extremum(t, AppOp::Max, ops),
            Node::Min(ops) => self.extremum(t, AppOp::Min, ops),
            Node::Func(f, a) => self.func(t, *f, *a)?,
            Node::Apply(app) => {
                let mut args = Vec::with_capacity(app.args.len());
                for a in &app.args {
                    match self.get(*a) {
                        Ok(r) => args.push(r.clone()),
                        Err(_) => return Ok(self.opaque(t)),
                    }
                }
                let k = match self.fn_names.iter().position(|n| *n == app.name) {
                    Some(k) => k,
                    None => {
                        self.fn_names.push(app.name.clone());
                        self.fn_names.len() - 1
                    }
                };
                self.app_atom(AppOp::Named(k as u32), args, t)
            }
            Node::Pow(a, b) => match (self.get(*a), self.get(*b)) {
                (Ok(x), Ok(y)) => {
                    let args = vec![x.clone(), y.clone()];
                    self.app_atom(AppOp::Pow, args, t)
                }
                _ => self.opaque(t),
            },
            Node::Exp(a) => match self.get(*a) {
                Ok(r) => match exponent(r) {
                    Some(h) => exp_of(h),
                    None => {
                        let r = r.clone();
                        self.app_atom(AppOp::Exp, vec![r], t)
                    }
                },
                Err(_) => self.opaque(t),
            },
            Node::Add(ops) => {
                // Polynomial operands (the common case) are summed in
                // place, starting from a copy of the largest (an
                // accumulation chain `Add(prefix, x_k, ...)` then costs
                // its new operands, not a re-insertion of the prefix);
                // only fractions go through `add`.
                let largest = ops
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| match self.get(*o) {
                        Ok(r) if r.is_poly() => Some((r.num.num_terms(), i)),
                        _ => None,
                    })
                    .max();
                let mut poly = match largest {
                    Some((_, i)) => self.operand(ops[i])?.num.clone(),
                    None => ExpPoly::zero(),
                };
                let mut acc: Option<RatFn> = None;
                for (i, o) in ops.iter().enumerate() {
                    if largest.is_some_and(|(_, j)| j == i) {
                        continue;
                    }
                    let r = self.operand(*o)?;
                    if r.is_poly() {
                        poly.add_assign(&r.num);
                        self.check(poly.num_terms())?;
                    } else {
                        acc = Some(match acc {
                            None => r.clone(),
                            Some(a) => self.add(&a, r)?,
                        });
                    }
                }
                match acc {
                    None => RatFn::poly(poly),
                    Some(a) => self.add(&a, &RatFn::poly(poly))?,
                }
            }
            Node::Mul(ops) => {
                let first = self.operand(ops[0])?;
                match ops.get(1) {
                    None => first.clone(),
                    Some(_)
                        if ops
                            .iter()
                            .any(|o| self.get(*o).as_ref().is_ok_and(|r| !r.is_poly())) =>
                    {
                        self.mul_cancelling(ops)?
                    }
                    Some(_) => {
                        // Rational constants are applied last, so equal
                        // operands (`c·d·d`) still meet as a square.
                        let mut scale = Rat::ONE;
                        let mut acc: Option<RatFn> = None;
                        for o in ops {
                            let r = self.operand(*o)?;
                            if let Some(c) = r.num.as_constant().filter(|_| r.is_poly()) {
                                scale = scale.mul(&c);
                                continue;
                            }
                            acc = Some(match acc {
                                None => r.clone(),
                                Some(a) => self.mul(&a, r)?,
                            });
                        }
                        let acc = acc.unwrap_or_else(|| RatFn::poly(ExpPoly::constant(Rat::ONE)));
                        if scale.is_one() {
                            acc
                        } else {
                            RatFn {
                                num: acc.num.scale(&scale),
                                den: acc.den,
                            }
                            .tidy()
                        }
                    }
                }
            }
            Node::Recip(a) => {
                let r = self.operand(*a)?;
                if r.num.is_zero() {
                    return Err(NormalizeError::DivisionByZero(t));
                }
                RatFn {
                    num: r.den.clone(),
                    den: r.num.clone(),
                }
                .tidy()
            }
            Node::IntToReal(signed, a) => match &self.case {
                // Its integer depends on this case's choices (a rounded
                // real, a real condition): an atom fresh per case.
                Some(c) if c.dirty.contains(&t) => self.opaque(t),
                _ => self.int_to_real(t, *signed, *a),
            },
            Node::PosInf
            | Node::NegInf
            | Node::BoolConst(_)
            | Node::Cmp(..)
            | Node::Not(_)
            | Node::And(_)
            | Node::Or(_)
            | Node::Xor(_)
            | Node::IntConst { .. }
            | Node::IntInput { .. }
            | Node::IntAdd(..)
            | Node::IntMul(..)
            | Node::IntOp(..)
            | Node::IntCmp(..) => return Err(NormalizeError::NotReal(t)),
        })
    }

    /// `max`/`min`: an atom over the sorted, de-duplicated normal forms of
    /// the operands (`max(a, a) = a`; all-constant operands fold).
    fn extremum(&mut self, t: TermId, op: AppOp, ops: &[TermId]) -> RatFn {
        let mut args = Vec::with_capacity(ops.len());
        for o in ops {
            match self.get(*o) {
                Ok(r) => args.push(r.clone()),
                Err(_) => return self.opaque(t),
            }
        }
        let consts: Option<Vec<Rat>> = args
            .iter()
            .map(|r| r.is_poly().then(|| r.num.as_constant()).flatten())
            .collect();
        if let Some(cs) = consts {
            let best = if op == AppOp::Max {
                cs.into_iter().max()
            } else {
                cs.into_iter().min()
            };
            if let Some(b) = best {
                return RatFn::poly(ExpPoly::constant(b));
            }
        }
        args.sort();
        args.dedup();
        if args.len() == 1 {
            return args.pop().expect("one argument");
        }
        self.app_atom(op, args, t)
    }

    /// An uninterpreted function over its argument's normal form, with
    /// the exact rewrites: `ex2(u) = e^{u·ln2}`, `lg2(u) = log(u)·ln2⁻¹`,
    /// `tanh(u) = (e^{2u} − 1)/(e^{2u} + 1)`, `log(e^u) = u`, and `√c` for
    /// `c = q²/2` as `q·√2/2`.
    fn func(&mut self, t: TermId, f: Func, a: TermId) -> Result<RatFn, NormalizeError> {
        let arg = match self.get(a) {
            Ok(r) => r.clone(),
            Err(_) => return Ok(self.opaque(t)),
        };
        let key = exponent(&arg);
        Ok(match (f, key) {
            (Func::Ex2, Some(h)) => exp_of(h.mul_monomial(&Monomial::atom(Atom::Ln2))),
            (Func::Lg2, _) => {
                let log = self.app_atom(AppOp::Func(Func::Log), vec![arg], t);
                let inv = Monomial::from_factors(vec![(Atom::Ln2, -1)]).expect("invertible");
                let inv = RatFn::poly(ExpPoly::term(inv.0, ExpKey::zero(), inv.1));
                self.mul(&log, &inv)?
            }
            (Func::Tanh, Some(h)) => {
                let e = exp_of(h.scale(&Rat::from_i64(2))).num;
                let one = ExpPoly::constant(Rat::ONE);
                RatFn {
                    num: e.sub(&one),
                    den: e.add(&one),
                }
                .tidy()
            }
            // ln(2^k) = k·ln2 and ln(10^k) = k·ln10: the exact logarithms
            // of the constants log10/exp10 and ex2/lg2 are written with.
            (Func::Log, _) if log_of_constant(&arg).is_some() => {
                let (atom, k) = log_of_constant(&arg).expect("checked");
                RatFn::poly(ExpPoly::term(
                    Monomial::atom(atom),
                    ExpKey::zero(),
                    Rat::from_i64(k),
                ))
            }
            (Func::Log, _) if arg.is_poly() && arg.num.num_terms() == 1 => {
                let ((m, h), c) = arg.num.terms().next().expect("one term");
                if m.is_one() && c.is_one() {
                    RatFn::poly(h.to_poly())
                } else {
                    self.app_atom(AppOp::Func(f), vec![arg], t)
                }
            }
            (Func::Sqrt, _) if arg.num.as_constant().is_some_and(|c| c.signum() > 0) => {
                let c = arg.num.as_constant().expect("constant");
                match c.mul(&Rat::from_i64(2)).exact_sqrt() {
                    // √c = √(2c)/√2 = q·√2/2.
                    Some(q) if arg.is_poly() => RatFn::poly(ExpPoly::term(
                        Monomial::atom(Atom::Sqrt2),
                        ExpKey::zero(),
                        q.mul(&Rat::new(1, 2).expect("nonzero")),
                    )),
                    _ => self.app_atom(AppOp::Func(f), vec![arg], t),
                }
            }
            _ => self.app_atom(AppOp::Func(f), vec![arg], t),
        })
    }

    fn check(&self, n: usize) -> Result<(), NormalizeError> {
        if n > self.budget {
            Err(NormalizeError::TooLarge {
                terms: n,
                budget: self.budget,
            })
        } else {
            Ok(())
        }
    }

    /// Bounded product of exp-polynomials.
    fn pmul(&self, a: &ExpPoly, b: &ExpPoly) -> Result<ExpPoly, NormalizeError> {
        let work = a.num_terms().saturating_mul(b.num_terms());
        if work > self.budget.saturating_mul(WORK_PER_BUDGET) {
            return Err(NormalizeError::TooLarge {
                terms: work,
                budget: self.budget,
            });
        }
        let p = if a.num_terms() > 8 && a == b {
            a.square()
        } else {
            a.mul(b)
        };
        self.check(p.num_terms())?;
        Ok(p)
    }

    /// Bounded sum of exp-polynomials.
    fn padd(&self, a: &ExpPoly, b: &ExpPoly) -> Result<ExpPoly, NormalizeError> {
        let p = a.add(b);
        self.check(p.num_terms())?;
        Ok(p)
    }

    /// `a + b`: same denominator → add numerators; denominators equal up
    /// to a single-term factor → scale one numerator; else cross-multiply.
    fn add(&self, a: &RatFn, b: &RatFn) -> Result<RatFn, NormalizeError> {
        let r = if a.den == b.den {
            RatFn {
                num: self.padd(&a.num, &b.num)?,
                den: a.den.clone(),
            }
        } else if let Some(k) = a.den.factor_to(&b.den) {
            RatFn {
                num: self.padd(&self.pmul(&a.num, &k)?, &b.num)?,
                den: b.den.clone(),
            }
        } else if let Some(k) = b.den.factor_to(&a.den) {
            RatFn {
                num: self.padd(&a.num, &self.pmul(&b.num, &k)?)?,
                den: a.den.clone(),
            }
        } else {
            let num = self.padd(&self.pmul(&a.num, &b.den)?, &self.pmul(&b.num, &a.den)?)?;
            RatFn {
                num,
                den: self.pmul(&a.den, &b.den)?,
            }
        };
        Ok(r.tidy())
    }

    /// `a · b`, cancelling a numerator against the other factor's
    /// denominator when they are equal up to a single-term factor `k`
    /// (`(k·D)·(N/D) = k·N`): FA1's rescaling `l_{j-1}·(N_{j-1}/l_{j-1})`
    /// would otherwise nest one more denominator per step. Exact wherever
    /// the product is defined (there `D ≠ 0`).
    fn mul(&self, a: &RatFn, b: &RatFn) -> Result<RatFn, NormalizeError> {
        if a.num.is_zero() || b.num.is_zero() {
            return Ok(RatFn::poly(ExpPoly::zero()));
        }
        let one = ExpPoly::constant(Rat::ONE);
        let (mut an, mut ad) = (&a.num, &a.den);
        let (mut bn, mut bd) = (&b.num, &b.den);
        let ka = (!b.is_poly()).then(|| b.den.factor_to(&a.num)).flatten();
        if let Some(k) = &ka {
            an = k;
            bd = &one;
        }
        let kb = (!a.is_poly()).then(|| a.den.factor_to(&b.num)).flatten();
        if let Some(k) = &kb {
            bn = k;
            ad = &one;
        }
        let num = self.pmul(an, bn)?;
        let den = if ad.is_one() {
            bd.clone()
        } else if bd.is_one() {
            ad.clone()
        } else {
            self.pmul(ad, bd)?
        };
        Ok(RatFn { num, den }.tidy())
    }

    /// A product with fractional operands (flattened `l·e·(N/l)`): each
    /// denominator is first cancelled against another operand's numerator
    /// equal to it up to a single-term factor, so the product of the two
    /// sums is never formed (see [`Self::mul`]).
    fn mul_cancelling(&self, ops: &[TermId]) -> Result<RatFn, NormalizeError> {
        let mut rs: Vec<RatFn> = Vec::with_capacity(ops.len());
        for o in ops {
            rs.push(self.operand(*o)?.clone());
        }
        for i in 0..rs.len() {
            if rs[i].is_poly() {
                continue;
            }
            for j in 0..rs.len() {
                if i == j {
                    continue;
                }
                if let Some(k) = rs[i].den.factor_to(&rs[j].num) {
                    rs[j].num = k;
                    rs[j] = std::mem::replace(&mut rs[j], RatFn::poly(ExpPoly::zero())).tidy();
                    rs[i].den = ExpPoly::constant(Rat::ONE);
                    break;
                }
            }
        }
        // Small factors first: a long sum is multiplied once, at the end.
        rs.sort_by_key(|r| r.num.num_terms() + r.den.num_terms());
        let mut it = rs.into_iter();
        let mut acc = it
            .next()
            .unwrap_or_else(|| RatFn::poly(ExpPoly::constant(Rat::ONE)));
        for r in it {
            acc = self.mul(&acc, &r)?;
        }
        Ok(acc)
    }

    /// The numerator of `f - g` over a common denominator (zero exactly
    /// when `f = g` formally); single-term denominator factors are
    /// divided out instead of cross-multiplying.
    fn difference(&mut self, a: TermId, b: TermId) -> Result<ExpPoly, NormalizeError> {
        let f = self.normalize(a)?;
        let g = self.normalize(b)?;
        if f.den == g.den {
            Ok(f.num.sub(&g.num))
        } else if let Some(k) = f.den.factor_to(&g.den) {
            Ok(self.pmul(&f.num, &k)?.sub(&g.num))
        } else if let Some(k) = g.den.factor_to(&f.den) {
            Ok(f.num.sub(&self.pmul(&g.num, &k)?))
        } else {
            Ok(self.pmul(&f.num, &g.den)?.sub(&self.pmul(&g.num, &f.den)?))
        }
    }

    /// The residual of `a = b` (see [`equal`]) when it is a nonzero
    /// rational constant `c`: then `a − b = c / (D_a·D_b)` for the normal
    /// forms' denominators, nonzero wherever both terms are defined, so
    /// the terms differ at every such point (`None` otherwise).
    pub fn constant_residual(&mut self, a: TermId, b: TermId) -> Option<Rat> {
        if a == b {
            return None;
        }
        let c = self.difference(a, b).ok()?.as_constant()?;
        (!c.is_zero()).then_some(c)
    }

    /// `p` printed with application atoms spelled out.
    pub fn describe(&self, p: &ExpPoly, max_terms: usize) -> String {
        p.describe_with(max_terms, &|a| self.atom_name(a, 2))
    }

    fn atom_name(&self, a: Atom, depth: u32) -> String {
        let Atom::App(i) = a else {
            return poly::atom_str(self.terms, a);
        };
        let Some((op, args, origin)) = self.app(i) else {
            return format!("f{i}");
        };
        if depth == 0 {
            return format!("[{}]", self.terms.display_limited(origin, 40));
        }
        let name = match op {
            AppOp::Func(f) => f.name(),
            AppOp::Exp => "exp",
            AppOp::Pow => "pow",
            AppOp::Max => "max",
            AppOp::Min => "min",
            AppOp::Named(k) => self.fn_names.get(k as usize).map_or("f?", |n| &**n),
            AppOp::Opaque(..) => return format!("[{}]", self.terms.display_limited(origin, 40)),
            AppOp::IntVar(v) => return self.ring_var_name(v, depth),
            AppOp::IntReal(k) => {
                return match self.int_real(k) {
                    Some((signed, p)) => format!(
                        "{}{}({})",
                        if signed { 's' } else { 'u' },
                        p.width(),
                        p.describe(4, &|v| self.ring_var_name(v, depth - 1))
                    ),
                    None => format!("[{}]", self.terms.display_limited(origin, 40)),
                };
            }
        };
        let args: Vec<String> = args
            .iter()
            .map(|r| {
                let n = r.num.describe_with(4, &|a| self.atom_name(a, depth - 1));
                if r.is_poly() {
                    n
                } else {
                    let d = r.den.describe_with(4, &|a| self.atom_name(a, depth - 1));
                    format!("({n})/({d})")
                }
            })
            .collect();
        format!("{name}({})", args.join(", "))
    }
}

/// Terms one memo entry holds.
fn size_of_entry(r: &Result<RatFn, NormalizeError>) -> usize {
    r.as_ref()
        .map_or(0, |f| f.num.num_terms() + f.den.num_terms())
}

/// How many operand slots of other nodes each node fills (saturating).
fn parent_counts(terms: &Terms) -> Vec<u32> {
    let mut v = vec![0u32; terms.len()];
    for id in terms.ids() {
        for c in terms.node(id).children() {
            if let Some(x) = v.get_mut(c.index()) {
                *x = x.saturating_add(1);
            }
        }
    }
    v
}

/// `r` as an exponent, if it is an exp-free polynomial (the denominator
/// is `1` after tidying whenever it is constant).
fn exponent(r: &RatFn) -> Option<ExpKey> {
    if r.is_poly() { r.num.to_key() } else { None }
}

fn exp_of(h: ExpKey) -> RatFn {
    RatFn::poly(ExpPoly::term(Monomial::one(), h, Rat::ONE))
}

/// Outcome of [`equal`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Decision {
    /// The normal forms are identical as formal expressions.
    Proved,
    /// The normal forms differ; `residual` is the nonzero difference of
    /// the compared numerators (not necessarily a counterexample).
    NotProved { residual: String },
    /// No normal form within budget (or not a finite real term).
    Unknown(NormalizeError),
}

/// Terms printed in a residual before it is truncated.
const RESIDUAL_TERMS: usize = 8;

/// Decide `a = b` by normal forms (see the module docs).
///
/// Same node → proved at once. Otherwise with `f = N_f/D_f`, `g =
/// N_g/D_g`: equal denominators compare numerators; `D_g = k·D_f` for a
/// single term `k` (softmax with and without the max subtracted) compares
/// `N_f·k` with `N_g` without multiplying two sums; else `N_f·D_g` is
/// compared with `N_g·D_f`.
pub fn equal(n: &mut Normalizer<'_>, a: TermId, b: TermId) -> Decision {
    if a == b {
        return Decision::Proved;
    }
    if n.terms.is_int(a) || n.terms.is_int(b) {
        // Integers: identity of canonical polynomials modulo 2^w.
        return match n.ring_difference(a, b) {
            Ok(r) if r.is_zero() => Decision::Proved,
            Ok(r) => Decision::NotProved {
                residual: r.describe(RESIDUAL_TERMS, &|v| n.ring_var_name(v, 2)),
            },
            Err(e) => Decision::Unknown(e),
        };
    }
    match n.difference(a, b) {
        Ok(r) if r.is_zero() => Decision::Proved,
        Ok(r) => Decision::NotProved {
            residual: n.describe(&r, RESIDUAL_TERMS),
        },
        Err(e) => Decision::Unknown(e),
    }
}
