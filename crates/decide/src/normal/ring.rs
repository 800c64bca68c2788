//! The ring normal form of integer terms: polynomials over Z/2^w.
//!
//! An integer term of width `w` is mapped to a [`RingPoly`]: a sum of
//! monomials over *integer variables* with coefficients modulo 2^w. A
//! variable ([`RingVar`]) denotes one definite integer with a known range:
//! an integer input (its value, in its type's range), or an application of
//! an operation the ring cannot look into (`and`, `div`, a `select`, an
//! extension that may wrap, ...) over the normal forms of its arguments,
//! whose value is its unsigned result (a sign-extension's value is its
//! signed result). A term of width `w` is the polynomial's value modulo
//! 2^w at the variables' values.
//!
//! `+` and `·` are exact; truncation to a narrower width is a ring map
//! (coefficients reduced); a sign or zero extension is exact when the
//! polynomial's integer range provably fits the source width's signed or
//! unsigned range (an `s8` input sign-extended to 32 bits is that input),
//! otherwise a variable.
//!
//! Two polynomials can differ and still be the same function modulo 2^w
//! (`2^(w−1)·x·(x+1) = 0`). [`RingPoly::canonical`] removes exactly that
//! freedom: in the falling-factorial basis `x^(j) = x(x−1)…(x−j+1) =
//! j!·C(x, j)` a term `c·x^(J)` vanishes for every integer `x` exactly when
//! `2^w | c·J!`, so each coefficient is reduced modulo `2^(w − v₂(J!))`.
//! The binomial polynomials are a basis of the integer-valued polynomials,
//! so two polynomials are the same function of integer variables exactly
//! when their canonical forms are equal: equality of canonical forms is
//! sound always, and complete when every variable ranges over enough
//! integers (more than the degree; inputs of 8 bits and wider do).
//!
//! A real conversion (`IntToReal`, `cvt.rn.f32.s32` of integer data) of a
//! polynomial whose integer range fits the signed or unsigned range is
//! that polynomial over the reals, in the variables' real atoms
//! ([`super::AppOp::IntVar`]): the sum of 256 `s8` inputs converted to a
//! float is the real sum of the inputs. Otherwise it is an atom over the
//! canonical polynomial ([`super::AppOp::IntReal`]), since the integer may
//! have wrapped.

use std::collections::BTreeMap;

use hashbrown::HashMap;
use smallvec::SmallVec;

use super::{AppOp, ExpKey, ExpPoly, Monomial, NormalizeError, Normalizer, RatFn};
use crate::intop::{IntCmpOp, IntFn, IntTy, mask, read};
use crate::{Node, Rat, TermId};

/// Index of an integer variable in the normaliser's table.
pub type RVar = u32;

/// A product of variables with positive exponents, sorted by variable;
/// empty is `1`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct RMono(SmallVec<[(RVar, u32); 2]>);

impl RMono {
    fn one() -> RMono {
        RMono(SmallVec::new())
    }

    fn var(v: RVar) -> RMono {
        let mut m = SmallVec::new();
        m.push((v, 1));
        RMono(m)
    }

    fn mul(&self, o: &RMono) -> RMono {
        let (a, b) = (&self.0, &o.0);
        let mut out = SmallVec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    out.push((x.0, x.1 + y.1));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.0 < y.0 => {
                    out.push(*x);
                    i += 1;
                }
                (Some(_), Some(y)) => {
                    out.push(*y);
                    j += 1;
                }
                (Some(x), None) => {
                    out.push(*x);
                    i += 1;
                }
                (None, Some(y)) => {
                    out.push(*y);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        RMono(out)
    }

    /// `self · v^e` (`e > 0`).
    fn with(&self, v: RVar, e: u32) -> RMono {
        let mut m = SmallVec::new();
        m.push((v, e));
        self.mul(&RMono(m))
    }

    /// The `(variable, exponent)` factors.
    pub fn factors(&self) -> &[(RVar, u32)] {
        &self.0
    }
}

/// A polynomial over integer variables with coefficients modulo 2^w
/// (nonzero ones only, sorted by monomial), so the derived `Eq` is formal
/// identity.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RingPoly {
    w: u8,
    terms: BTreeMap<RMono, u64>,
}

impl RingPoly {
    pub fn zero(w: u8) -> RingPoly {
        RingPoly {
            w,
            terms: BTreeMap::new(),
        }
    }

    pub fn constant(w: u8, c: u64) -> RingPoly {
        let mut p = RingPoly::zero(w);
        p.add_term(RMono::one(), c);
        p
    }

    pub fn var(w: u8, v: RVar) -> RingPoly {
        let mut p = RingPoly::zero(w);
        p.add_term(RMono::var(v), 1);
        p
    }

    /// The width `w` of the ring Z/2^w.
    pub fn width(&self) -> u8 {
        self.w
    }

    pub fn num_terms(&self) -> usize {
        self.terms.len()
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// `(monomial, coefficient)` pairs in order.
    pub fn terms(&self) -> impl Iterator<Item = (&RMono, u64)> {
        self.terms.iter().map(|(m, c)| (m, *c))
    }

    /// The constant this is, if it is one.
    pub fn as_const(&self) -> Option<u64> {
        match self.terms.len() {
            0 => Some(0),
            1 => self
                .terms
                .iter()
                .next()
                .and_then(|(m, c)| m.0.is_empty().then_some(*c)),
            _ => None,
        }
    }

    /// The variable this is (`1·v`), if it is one.
    pub fn as_var(&self) -> Option<RVar> {
        let mut it = self.terms.iter();
        match (it.next(), it.next()) {
            (Some((m, 1)), None) if m.0.len() == 1 && m.0[0].1 == 1 => Some(m.0[0].0),
            _ => None,
        }
    }

    fn add_term(&mut self, m: RMono, c: u64) {
        use std::collections::btree_map::Entry;
        let c = mask(c, self.w);
        if c == 0 {
            return;
        }
        match self.terms.entry(m) {
            Entry::Vacant(v) => {
                v.insert(c);
            }
            Entry::Occupied(mut o) => {
                let s = mask(o.get().wrapping_add(c), self.w);
                if s == 0 {
                    o.remove();
                } else {
                    *o.get_mut() = s;
                }
            }
        }
    }

    /// `self += o` (same width).
    pub fn add_assign(&mut self, o: &RingPoly) {
        for (m, c) in &o.terms {
            self.add_term(m.clone(), *c);
        }
    }

    pub fn add(&self, o: &RingPoly) -> RingPoly {
        let (mut big, small) = if self.terms.len() >= o.terms.len() {
            (self.clone(), o)
        } else {
            (o.clone(), self)
        };
        big.add_assign(small);
        big
    }

    pub fn scale(&self, k: u64) -> RingPoly {
        let mut p = RingPoly::zero(self.w);
        for (m, c) in &self.terms {
            p.add_term(m.clone(), c.wrapping_mul(k));
        }
        p
    }

    pub fn neg(&self) -> RingPoly {
        self.scale(u64::MAX)
    }

    pub fn sub(&self, o: &RingPoly) -> RingPoly {
        self.add(&o.neg())
    }

    /// `self · o`, or `None` when it would need more than `budget` term
    /// products.
    pub fn mul(&self, o: &RingPoly, budget: usize) -> Option<RingPoly> {
        if self.terms.len().saturating_mul(o.terms.len()) > budget {
            return None;
        }
        let mut p = RingPoly::zero(self.w);
        for (m, c) in &self.terms {
            for (n, d) in &o.terms {
                p.add_term(m.mul(n), c.wrapping_mul(*d));
            }
        }
        Some(p)
    }

    /// The same polynomial modulo 2^w for a smaller `w` (truncation is a
    /// ring map).
    pub fn reduce(&self, w: u8) -> RingPoly {
        let mut p = RingPoly::zero(w);
        for (m, c) in &self.terms {
            p.add_term(m.clone(), *c);
        }
        p
    }

    /// The integer polynomial whose coefficients are the signed readings
    /// of these, taken modulo 2^w for a larger `w`: exact when the
    /// polynomial's value never leaves the range it was computed in (see
    /// [`RingPoly::range`]).
    fn lift(&self, w: u8) -> RingPoly {
        let mut p = RingPoly::zero(w);
        for (m, c) in &self.terms {
            p.add_term(m.clone(), read(*c, self.w, true) as u64);
        }
        p
    }

    /// The range of the integer polynomial with the signed readings of the
    /// coefficients, for variables in the ranges `range(v)`; `None` on
    /// overflow of `i128`.
    pub fn range(&self, range: &dyn Fn(RVar) -> (i128, i128)) -> Option<(i128, i128)> {
        let (mut lo, mut hi) = (0i128, 0i128);
        for (m, c) in &self.terms {
            let c = read(*c, self.w, true);
            let (mut ml, mut mh) = (1i128, 1i128);
            for &(v, e) in &m.0 {
                let (a, b) = pow_range(range(v), e)?;
                let p = [
                    ml.checked_mul(a)?,
                    ml.checked_mul(b)?,
                    mh.checked_mul(a)?,
                    mh.checked_mul(b)?,
                ];
                ml = *p.iter().min()?;
                mh = *p.iter().max()?;
            }
            let (tl, th) = if c >= 0 {
                (ml.checked_mul(c)?, mh.checked_mul(c)?)
            } else {
                (mh.checked_mul(c)?, ml.checked_mul(c)?)
            };
            lo = lo.checked_add(tl)?;
            hi = hi.checked_add(th)?;
        }
        Some((lo, hi))
    }

    /// The canonical representative of this polynomial's function on the
    /// integers (see the module docs); within `budget` term expansions,
    /// else the polynomial unchanged (still the same function).
    pub fn canonical(&self, budget: usize) -> RingPoly {
        if self.terms.keys().all(|m| m.0.iter().all(|&(_, e)| e <= 1)) {
            // Falling and power bases agree up to degree 1 per variable,
            // and 1! = 1 reduces nothing.
            return self.clone();
        }
        let max_e = self
            .terms
            .keys()
            .flat_map(|m| m.0.iter().map(|f| f.1))
            .max()
            .unwrap_or(1) as usize;
        let tables = Stirling::new(max_e);
        let Some(falling) = expand(&self.terms, |k, j| tables.second(k, j), budget) else {
            return self.clone();
        };
        let mut reduced: BTreeMap<RMono, u64> = BTreeMap::new();
        for (m, c) in falling {
            let e: u32 = m.0.iter().map(|&(_, j)| v2_factorial(j)).sum();
            if e >= u32::from(self.w) {
                continue;
            }
            let c = mask(c, self.w - e as u8);
            if c != 0 {
                reduced.insert(m, c);
            }
        }
        let Some(power) = expand(&reduced, |j, k| tables.first(j, k), budget) else {
            return self.clone();
        };
        let mut p = RingPoly::zero(self.w);
        for (m, c) in power {
            p.add_term(m, c);
        }
        p
    }

    /// Printed with `name` for each variable, at most `max_terms` terms.
    pub fn describe(&self, max_terms: usize, name: &dyn Fn(RVar) -> String) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut out = String::new();
        for (i, (m, c)) in self.terms.iter().enumerate() {
            if i == max_terms {
                out.push_str(" + …");
                break;
            }
            let c = read(*c, self.w, true);
            if i > 0 {
                out.push_str(if c < 0 { " - " } else { " + " });
            } else if c < 0 {
                out.push('-');
            }
            let mag = c.unsigned_abs();
            let factors: Vec<String> =
                m.0.iter()
                    .map(|&(v, e)| {
                        if e == 1 {
                            name(v)
                        } else {
                            format!("{}^{e}", name(v))
                        }
                    })
                    .collect();
            if factors.is_empty() {
                out.push_str(&mag.to_string());
            } else {
                if mag != 1 {
                    out.push_str(&format!("{mag}·"));
                }
                out.push_str(&factors.join("·"));
            }
        }
        out.push_str(&format!(" (mod 2^{})", self.w));
        out
    }
}

/// `[lo, hi]^e` for integers.
fn pow_range((lo, hi): (i128, i128), e: u32) -> Option<(i128, i128)> {
    let a = lo.checked_pow(e)?;
    let b = hi.checked_pow(e)?;
    Some(if e % 2 == 1 || lo >= 0 {
        (a.min(b), a.max(b))
    } else if hi <= 0 {
        (b, a)
    } else {
        (0, a.max(b))
    })
}

/// `v₂(j!)`, the power of 2 in `j!` (Legendre: `j − popcount(j)`).
fn v2_factorial(j: u32) -> u32 {
    j - j.count_ones()
}

/// Stirling numbers modulo 2^64 (enough for any width ≤ 64): `second(k,
/// j)` writes `x^k = Σ_j S(k, j)·x^(j)`, `first(j, k)` writes `x^(j) = Σ_k
/// s(j, k)·x^k` (signed, as two's complement).
struct Stirling {
    s1: Vec<Vec<u64>>,
    s2: Vec<Vec<u64>>,
}

impl Stirling {
    fn new(n: usize) -> Stirling {
        let mut s1 = vec![vec![0u64; n + 1]; n + 1];
        let mut s2 = vec![vec![0u64; n + 1]; n + 1];
        s1[0][0] = 1;
        s2[0][0] = 1;
        for i in 1..=n {
            for k in 1..=i {
                // s(i, k) = s(i−1, k−1) − (i−1)·s(i−1, k)
                s1[i][k] = s1[i - 1][k - 1].wrapping_sub((i as u64 - 1).wrapping_mul(s1[i - 1][k]));
                // S(i, k) = k·S(i−1, k) + S(i−1, k−1)
                s2[i][k] = (k as u64)
                    .wrapping_mul(s2[i - 1][k])
                    .wrapping_add(s2[i - 1][k - 1]);
            }
        }
        Stirling { s1, s2 }
    }

    fn first(&self, j: u32, k: u32) -> u64 {
        self.s1[j as usize][k as usize]
    }

    fn second(&self, k: u32, j: u32) -> u64 {
        self.s2[k as usize][j as usize]
    }
}

/// Rewrites every `v^k` factor as `Σ_j coef(k, j)·v^j` (a change of
/// basis), coefficients modulo 2^64; `None` past `budget` terms.
fn expand(
    terms: &BTreeMap<RMono, u64>,
    coef: impl Fn(u32, u32) -> u64,
    budget: usize,
) -> Option<BTreeMap<RMono, u64>> {
    let mut out: BTreeMap<RMono, u64> = BTreeMap::new();
    for (m, c) in terms {
        let mut acc: Vec<(RMono, u64)> = vec![(RMono::one(), *c)];
        for &(v, k) in &m.0 {
            let mut next = Vec::with_capacity(acc.len() * k as usize);
            for (mm, cc) in &acc {
                for j in 1..=k {
                    let s = coef(k, j);
                    if s != 0 {
                        next.push((mm.with(v, j), cc.wrapping_mul(s)));
                    }
                }
            }
            if next.len() > budget {
                return None;
            }
            acc = next;
        }
        for (mm, cc) in acc {
            let e = out.entry(mm).or_insert(0);
            *e = e.wrapping_add(cc);
        }
        if out.len() > budget {
            return None;
        }
    }
    out.retain(|_, c| *c != 0);
    Some(out)
}

/// An operand of an integer application: an integer's canonical ring
/// normal form, or a real's normal form (`FromReal`).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum RingArg {
    Int(RingPoly),
    Real(RatFn),
}

/// The condition of an integer `select`: an integer comparison over
/// canonical normal forms, or any other boolean node by its id.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum CondKey {
    IntCmp(IntCmpOp, RingPoly, RingPoly),
    Node(TermId),
}

/// What an integer variable is (see the module docs).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum RingVar {
    /// An integer input element.
    Input { tensor: u32, index: u64, ty: IntTy },
    /// `f(args)` with a result of width `w`.
    App { f: IntFn, w: u8, args: Vec<RingArg> },
    /// `cond ? a : b` of width `w`.
    Select {
        cond: CondKey,
        a: RingPoly,
        b: RingPoly,
    },
    /// A node the ring form cannot look into (its normal form failed).
    Opaque(TermId),
}

/// The ring normal form's tables, part of a [`Normalizer`].
#[derive(Default)]
pub(super) struct RingState {
    memo: HashMap<TermId, Result<RingPoly, NormalizeError>>,
    vars: Vec<(RingVar, (i128, i128), TermId)>,
    index: HashMap<RingVar, RVar>,
    /// `IntToReal` atoms that are not exact polynomials: `(signed, p)`.
    reals: Vec<(bool, RingPoly)>,
    real_index: HashMap<(bool, RingPoly), u32>,
}

/// The range of a `w`-bit value read as signed or unsigned.
fn width_range(w: u8, signed: bool) -> (i128, i128) {
    let ty = IntTy { bits: w, signed };
    (ty.lowest(), ty.highest())
}

fn within(inner: (i128, i128), outer: (i128, i128)) -> bool {
    inner.0 >= outer.0 && inner.1 <= outer.1
}

impl Normalizer<'_> {
    /// The range of variable `v`'s integer value.
    fn var_range(&self, v: RVar) -> (i128, i128) {
        self.ring
            .vars
            .get(v as usize)
            .map_or((0, 0), |(_, r, _)| *r)
    }

    /// What variable `v` is, with the node it was first made for.
    pub fn ring_var(&self, v: RVar) -> Option<(&RingVar, TermId)> {
        self.ring.vars.get(v as usize).map(|(k, _, t)| (k, *t))
    }

    /// The `(signed, polynomial)` of [`AppOp::IntReal`] atom `i`.
    pub fn int_real(&self, i: u32) -> Option<(bool, &RingPoly)> {
        self.ring.reals.get(i as usize).map(|(s, p)| (*s, p))
    }

    fn intern_var(&mut self, key: RingVar, range: (i128, i128), origin: TermId, w: u8) -> RingPoly {
        let v = match self.ring.index.get(&key) {
            Some(&v) => v,
            None => {
                let v = self.ring.vars.len() as RVar;
                self.ring.vars.push((key.clone(), range, origin));
                self.ring.index.insert(key, v);
                v
            }
        };
        RingPoly::var(w, v)
    }

    /// The ring normal form of integer term `t` (memoised; iterative over
    /// the integer children).
    pub fn ring_normalize(&mut self, t: TermId) -> Result<RingPoly, NormalizeError> {
        if self.parents.is_empty() {
            self.parents = super::parent_counts(self.terms);
        }
        let mut stack = vec![(t, false)];
        while let Some((u, ready)) = stack.pop() {
            if self.ring.memo.contains_key(&u) {
                continue;
            }
            if !ready {
                stack.push((u, true));
                for c in self.ring_children(u) {
                    if !self.ring.memo.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let r = self.ring_step(u);
            self.ring.memo.insert(u, r);
            // A single-parent child can never be asked for again.
            for c in self.ring_children(u) {
                if c != t && self.parents.get(c.index()).copied() == Some(1) {
                    self.ring.memo.remove(&c);
                }
            }
        }
        self.ring
            .memo
            .get(&t)
            .cloned()
            .unwrap_or(Err(NormalizeError::NotReal(t)))
    }

    /// Integer children whose normal forms [`Self::ring_step`] reads.
    fn ring_children(&self, t: TermId) -> Vec<TermId> {
        let terms = self.terms;
        match terms.node(t) {
            Node::IntAdd(_, ops) | Node::IntMul(_, ops) => ops.to_vec(),
            Node::IntOp(IntFn::FromReal { .. }, ..) => Vec::new(),
            Node::IntOp(_, _, ops) => ops.to_vec(),
            Node::Select(c, a, b) => {
                let mut v = vec![*a, *b];
                if let Node::IntCmp(_, x, y) = terms.node(*c) {
                    v.push(*x);
                    v.push(*y);
                }
                v
            }
            _ => Vec::new(),
        }
    }

    fn ring_get(&self, t: TermId) -> Result<RingPoly, NormalizeError> {
        self.ring
            .memo
            .get(&t)
            .cloned()
            .unwrap_or(Err(NormalizeError::NotReal(t)))
    }

    /// A node the ring form does not look into: its own variable.
    fn ring_opaque(&mut self, t: TermId, w: u8) -> RingPoly {
        self.intern_var(RingVar::Opaque(t), width_range(w, false), t, w)
    }

    fn ring_step(&mut self, t: TermId) -> Result<RingPoly, NormalizeError> {
        let terms = self.terms;
        let Some(w) = terms.int_width(t) else {
            return Err(NormalizeError::NotReal(t));
        };
        Ok(match terms.node(t) {
            Node::IntConst { v, .. } => RingPoly::constant(w, *v),
            Node::IntInput { tensor, index, ty } => self.intern_var(
                RingVar::Input {
                    tensor: *tensor,
                    index: *index,
                    ty: *ty,
                },
                (ty.lowest(), ty.highest()),
                t,
                w,
            ),
            Node::IntAdd(_, ops) => {
                let mut parts = Vec::with_capacity(ops.len());
                for o in ops.iter() {
                    // A single-parent operand is needed by nothing else:
                    // take its form instead of copying it (an accumulation
                    // chain then costs its new operands only).
                    let single = self.parents.get(o.index()).copied() == Some(1);
                    let p = if single {
                        self.ring
                            .memo
                            .remove(o)
                            .unwrap_or(Err(NormalizeError::NotReal(*o)))
                    } else {
                        self.ring_get(*o)
                    };
                    match p {
                        Ok(p) => parts.push(p),
                        Err(_) => return Ok(self.ring_opaque(t, w)),
                    }
                }
                // Sum into the largest (an accumulation chain then costs
                // its new operands).
                parts.sort_by_key(|p| std::cmp::Reverse(p.num_terms()));
                let mut it = parts.into_iter();
                let mut acc = it.next().unwrap_or_else(|| RingPoly::zero(w));
                for p in it {
                    acc.add_assign(&p);
                }
                self.check(acc.num_terms())?;
                acc
            }
            Node::IntMul(_, ops) => {
                let mut acc = RingPoly::constant(w, 1);
                for o in ops.iter() {
                    let p = match self.ring_get(*o) {
                        Ok(p) => p,
                        Err(_) => return Ok(self.ring_opaque(t, w)),
                    };
                    acc = acc.mul(&p, self.budget.saturating_mul(16)).ok_or(
                        NormalizeError::TooLarge {
                            terms: acc.num_terms().saturating_mul(p.num_terms()),
                            budget: self.budget,
                        },
                    )?;
                    self.check(acc.num_terms())?;
                }
                acc
            }
            Node::IntOp(IntFn::Trunc, _, ops) => match self.ring_get(ops[0]) {
                Ok(p) => p.reduce(w),
                Err(_) => self.ring_opaque(t, w),
            },
            Node::IntOp(f @ (IntFn::Zext { from } | IntFn::Sext { from }), _, ops) => {
                let p = match self.ring_get(ops[0]) {
                    Ok(p) => p,
                    Err(_) => return Ok(self.ring_opaque(t, w)),
                };
                self.ring_extend(t, p, *from, matches!(f, IntFn::Sext { .. }), w)
            }
            // The low k bits, written as a mask, a remainder or a field:
            // the k-bit truncation extended back (`x & 255`, `x % 256`,
            // `bfe.u32 x, 0, 8` and `cvt.u32.u8` are one function).
            Node::IntOp(f, _, ops) if low_bits(terms, *f, ops, w).is_some() => {
                let (x, k, signed) = low_bits(terms, *f, ops, w).expect("checked");
                match self.ring_get(x) {
                    Ok(p) => self.ring_extend(t, p.reduce(k), k, signed, w),
                    Err(_) => self.ring_opaque(t, w),
                }
            }
            Node::IntOp(f, _, ops) => {
                let mut args = Vec::with_capacity(ops.len());
                for o in ops.iter() {
                    if let IntFn::FromReal { .. } = f {
                        match self.normalize_nested(*o) {
                            Ok(r) => args.push(RingArg::Real(r)),
                            Err(_) => return Ok(self.ring_opaque(t, w)),
                        }
                    } else {
                        match self.ring_get(*o) {
                            Ok(p) => args.push(RingArg::Int(p.canonical(self.budget))),
                            Err(_) => return Ok(self.ring_opaque(t, w)),
                        }
                    }
                }
                if f.is_commutative() {
                    args.sort_by(arg_order);
                }
                let range = match f {
                    IntFn::FromReal { signed, .. } => width_range(w, *signed),
                    _ => width_range(w, false),
                };
                self.intern_var(RingVar::App { f: *f, w, args }, range, t, w)
            }
            Node::Select(c, a, b) => {
                let (pa, pb) = match (self.ring_get(*a), self.ring_get(*b)) {
                    (Ok(x), Ok(y)) => (x.canonical(self.budget), y.canonical(self.budget)),
                    _ => return Ok(self.ring_opaque(t, w)),
                };
                if pa == pb {
                    return Ok(pa);
                }
                let cond = match terms.node(*c) {
                    Node::IntCmp(op, x, y) => match (self.ring_get(*x), self.ring_get(*y)) {
                        (Ok(px), Ok(py)) => {
                            let (px, py) = (px.canonical(self.budget), py.canonical(self.budget));
                            if px == py {
                                // Decided by the normal forms.
                                let holds = matches!(op, IntCmpOp::Eq | IntCmpOp::Le { .. });
                                return Ok(if holds { pa } else { pb });
                            }
                            // `x < y ? y : x` is max(x, y), `x < y ? x : y`
                            // min (with `<=` too: at a tie both are x): the
                            // key `max`/`min` instructions get.
                            if let IntCmpOp::Lt { signed } | IntCmpOp::Le { signed } = *op {
                                let pick = if (&pa, &pb) == (&py, &px) {
                                    Some(IntFn::Max { signed })
                                } else if (&pa, &pb) == (&px, &py) {
                                    Some(IntFn::Min { signed })
                                } else {
                                    None
                                };
                                if let Some(f) = pick {
                                    let mut args = vec![RingArg::Int(px), RingArg::Int(py)];
                                    args.sort_by(arg_order);
                                    let key = RingVar::App { f, w, args };
                                    return Ok(self.intern_var(key, width_range(w, false), t, w));
                                }
                            }
                            let (px, py) = match op {
                                IntCmpOp::Eq | IntCmpOp::Ne if py < px => (py, px),
                                _ => (px, py),
                            };
                            CondKey::IntCmp(*op, px, py)
                        }
                        _ => CondKey::Node(*c),
                    },
                    _ => CondKey::Node(*c),
                };
                self.intern_var(
                    RingVar::Select { cond, a: pa, b: pb },
                    width_range(w, false),
                    t,
                    w,
                )
            }
            _ => self.ring_opaque(t, w),
        })
    }

    /// `p` (of `from` bits) sign- or zero-extended to `w` bits: the same
    /// polynomial when its integer range fits the source reading, else a
    /// variable over it.
    fn ring_extend(&mut self, t: TermId, p: RingPoly, from: u8, signed: bool, w: u8) -> RingPoly {
        let p = p.canonical(self.budget);
        let src = width_range(from, signed);
        if let Some(c) = p.as_const() {
            return RingPoly::constant(w, read(c, from, signed) as u64);
        }
        let fits = p
            .range(&|v| self.var_range(v))
            .is_some_and(|r| within(r, src));
        if fits {
            // The integer the polynomial computes never wrapped: extending
            // it is the same integer in the wider ring.
            return p.lift(w);
        }
        let f = if signed {
            IntFn::Sext { from }
        } else {
            IntFn::Zext { from }
        };
        let key = RingVar::App {
            f,
            w,
            args: vec![RingArg::Int(p)],
        };
        self.intern_var(key, src, t, w)
    }

    /// The real normal form of `IntToReal(signed, a)` (see the module
    /// docs): a polynomial in the variables' real atoms when the integer
    /// provably did not wrap, else an atom.
    pub(super) fn int_to_real(&mut self, t: TermId, signed: bool, a: TermId) -> RatFn {
        let p = match self.ring_normalize(a) {
            Ok(p) => p.canonical(self.budget),
            Err(_) => return self.opaque(t),
        };
        let w = p.width();
        if let Some(c) = p.as_const() {
            return RatFn::poly(ExpPoly::constant(int_rat(read(c, w, signed))));
        }
        let fits = p
            .range(&|v| self.var_range(v))
            .is_some_and(|r| within(r, width_range(w, signed)));
        if fits {
            let mut out = ExpPoly::zero();
            for (m, c) in p.terms() {
                let mut factors = Vec::with_capacity(m.0.len());
                for &(v, e) in &m.0 {
                    let atom = self.int_var_atom(v);
                    factors.push((atom, e as i32));
                }
                let Some((mono, k)) = Monomial::from_factors(factors) else {
                    return self.opaque(t);
                };
                let coef = int_rat(read(c, w, true)).mul(&k);
                out.add_assign(&ExpPoly::term(mono, ExpKey::zero(), coef));
            }
            return RatFn::poly(out);
        }
        let key = (signed, p);
        let i = match self.ring.real_index.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.ring.reals.len() as u32;
                self.ring.reals.push(key.clone());
                self.ring.real_index.insert(key, i);
                i
            }
        };
        self.app_atom(AppOp::IntReal(i), Vec::new(), t)
    }

    /// The real atom of integer variable `v` (its exact integer value).
    fn int_var_atom(&mut self, v: RVar) -> super::Atom {
        let origin = self.ring_var(v).map_or(TermId::from_raw(0), |(_, t)| t);
        let r = self.app_atom(AppOp::IntVar(v), Vec::new(), origin);
        r.as_atom().unwrap_or(super::Atom::Term(origin))
    }

    /// `a − b` of two integer terms as a canonical polynomial (zero
    /// exactly when they are the same function of integer variables).
    pub(super) fn ring_difference(
        &mut self,
        a: TermId,
        b: TermId,
    ) -> Result<RingPoly, NormalizeError> {
        let pa = self.ring_normalize(a)?;
        let pb = self.ring_normalize(b)?;
        let w = pa.width().min(pb.width());
        Ok(pa.reduce(w).sub(&pb.reduce(w)).canonical(self.budget))
    }

    /// The name of variable `v` for printing.
    pub(super) fn ring_var_name(&self, v: RVar, depth: u32) -> String {
        let Some((key, origin)) = self.ring_var(v) else {
            return format!("v{v}");
        };
        if depth == 0 {
            return format!("[{}]", self.terms.display_limited(origin, 40));
        }
        match key {
            RingVar::Input { tensor, index, .. } => {
                match self.terms.tensor_names().get(*tensor as usize) {
                    Some(n) => format!("{n}[{index}]"),
                    None => format!("x{tensor}[{index}]"),
                }
            }
            RingVar::App { f, args, .. } => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        RingArg::Int(p) => p.describe(4, &|u| self.ring_var_name(u, depth - 1)),
                        RingArg::Real(_) => "…".into(),
                    })
                    .collect();
                format!("{}({})", f.name(), args.join(", "))
            }
            RingVar::Select { .. } | RingVar::Opaque(_) => {
                format!("[{}]", self.terms.display_limited(origin, 40))
            }
        }
    }
}

/// The canonical order of commutative operands.
fn arg_order(x: &RingArg, y: &RingArg) -> std::cmp::Ordering {
    match (x, y) {
        (RingArg::Int(a), RingArg::Int(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

/// `(x, k, signed)` when `f(ops)` at width `w` is the low `k < w` bits of
/// `x`, zero-extended (or sign-extended): `and(x, 2^k − 1)`, `rem.u(x,
/// 2^k)`, `bfe.u/s(x, 0, k)`.
fn low_bits(terms: &crate::Terms, f: IntFn, ops: &[TermId], w: u8) -> Option<(TermId, u8, bool)> {
    let c = |t: TermId| terms.as_int_const(t).map(|x| x.1);
    let low = |m: u64| (m != 0 && (m & (m + 1)) == 0).then(|| m.count_ones() as u8);
    let (x, k, signed) = match (f, ops) {
        (IntFn::And, [a, b]) => match (c(*a), c(*b)) {
            (_, Some(m)) => (*a, low(m)?, false),
            (Some(m), _) => (*b, low(m)?, false),
            _ => return None,
        },
        (IntFn::Rem { signed: false }, [a, b]) => {
            let m = c(*b)?;
            (
                *a,
                (m.is_power_of_two()).then(|| m.trailing_zeros() as u8)?,
                false,
            )
        }
        (IntFn::Bfe { signed }, [a, p, l]) if c(*p) == Some(0) => {
            (*a, u8::try_from(c(*l)?).ok()?, signed)
        }
        _ => return None,
    };
    (k > 0 && k < w && terms.int_width(x) == Some(w)).then_some((x, k, signed))
}

/// An integer as an exact rational.
fn int_rat(x: i128) -> Rat {
    match i64::try_from(x) {
        Ok(v) => Rat::from_i64(v),
        Err(_) => Rat::from_big(num_rational::BigRational::from_integer(x.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(w: u8, terms: &[(&[(RVar, u32)], u64)]) -> RingPoly {
        let mut r = RingPoly::zero(w);
        for (m, c) in terms {
            r.add_term(RMono(m.iter().copied().collect()), *c);
        }
        r
    }

    #[test]
    fn null_polynomials_vanish() {
        // 2^(w-1)·x·(x+1) = 2^(w-1)·x² + 2^(w-1)·x is 0 for every x.
        let z = p(32, &[(&[(0, 2)], 1 << 31), (&[(0, 1)], 1 << 31)]);
        assert!(z.canonical(1000).is_zero());
        // x² − x is even, so 2^31·(x² − x) vanishes, but 2^30·(x² − x) does not.
        let h = p(
            32,
            &[(&[(0, 2)], 1 << 30), (&[(0, 1)], (1u64 << 32) - (1 << 30))],
        );
        assert!(!h.canonical(1000).is_zero());
        // x(x−1)(x−2)(x−3) is divisible by 4! = 24 (2^3): times 2^29 it
        // vanishes mod 2^32.
        let mut f = RingPoly::constant(32, 1 << 29);
        for k in 0..4u64 {
            let lin = p(32, &[(&[(0, 1)], 1), (&[], (1u64 << 32) - k)]);
            f = f.mul(&lin, 1000).unwrap();
        }
        assert!(f.canonical(1000).is_zero());
        // Canonical forms are the same function: check numerically.
        let g = p(
            8,
            &[(&[(0, 3), (1, 1)], 7), (&[(0, 2)], 200), (&[(1, 2)], 129)],
        );
        let c = g.canonical(1000);
        for x in -20i128..20 {
            for y in -5i128..5 {
                let at = |q: &RingPoly| {
                    let mut s = 0i128;
                    for (m, k) in q.terms() {
                        let mut t = i128::from(k);
                        for &(v, e) in m.factors() {
                            t *= (if v == 0 { x } else { y }).pow(e);
                        }
                        s += t;
                    }
                    s.rem_euclid(256)
                };
                assert_eq!(at(&g), at(&c), "at ({x}, {y})");
            }
        }
    }

    #[test]
    fn ranges() {
        let q = p(32, &[(&[(0, 1)], 1), (&[(1, 1)], u64::from(u32::MAX))]);
        let r = q.range(&|_| (-128, 127)).unwrap();
        assert_eq!(r, (-255, 255));
        let sq = p(32, &[(&[(0, 2)], 1)]);
        assert_eq!(sq.range(&|_| (-3, 2)).unwrap(), (0, 9));
    }
}
