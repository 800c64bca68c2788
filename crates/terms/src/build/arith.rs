//! Real arithmetic: `+`, `·`, negation, reciprocal, division, `fma`,
//! `exp` and the function atoms.
//!
//! Canonical forms produced here:
//! - `Add`: flattened (up to `FLATTEN_LIMIT`), constants folded into one
//!   leading constant (dropped when 0), like terms merged (`c·t + d·t =
//!   (c+d)·t`, dropped when the coefficient is 0) unless `t` may be
//!   infinite, remaining operands sorted.
//! - `Mul`: flattened, constants folded into one leading coefficient
//!   (dropped when 1), `x·0 = 0` when no factor may be infinite, signed
//!   infinities absorb the coefficient, factors sorted. Sums are never
//!   distributed.
//! - `Recip`: never of a constant (except 0), an infinity, a `Recip`, an
//!   `Exp` (`1/e^a = e^-a`) or a product without nested products (the
//!   reciprocal is distributed over its factors).
//!
//! Division by zero is undefined over the reals; the store does not fold
//! it (`recip(0)` stays a node) and does not track where a denominator may
//! vanish: identities used here (`x·0 = 0`, `recip(recip a) = a`) hold
//! wherever the term is defined.

use smallvec::SmallVec;

use super::{List, fold_consts};
use crate::hash::{hash_nary, tag};
use crate::node::{Func, Node, Operands, TermId};

/// Largest integer exponent `pow` multiplies out (a larger one stays a
/// [`Node::Pow`] atom).
pub const POW_UNROLL: u64 = 64;
use crate::rat::Rat;
use crate::store::{FLAG_MAYBE_INF, FLAG_SCALED, Terms};

/// One operand of a sum, seen as `coef · base`.
struct Summand {
    /// Hash of the base (equal bases have equal keys).
    key: u128,
    /// `None` = 1.
    coef: Option<Rat>,
    /// The operand as given.
    orig: TermId,
    /// Whether the base is `orig`'s factors after its leading constant.
    split: bool,
}

/// A summand's base: a single term, or the product of several factors.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Base<'a> {
    One(TermId),
    Prod(&'a [TermId]),
}

fn add_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Add(ops) => Some(ops),
        _ => None,
    }
}

fn mul_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Mul(ops) => Some(ops),
        _ => None,
    }
}

/// Outcome of one canonicalisation pass over a sum.
enum Step {
    Done(TermId),
    /// Merging produced a nested sum that should be flattened: go again.
    Again(List),
}

impl Terms {
    pub(super) fn maybe_inf(&self, t: TermId) -> bool {
        self.flags[t.index()] & FLAG_MAYBE_INF != 0
    }

    fn base(&self, s: &Summand) -> Base<'_> {
        match &self.nodes[s.orig.index()] {
            Node::Mul(ops) => {
                let f: &[TermId] = if s.split { &ops[1..] } else { ops };
                if f.len() == 1 {
                    Base::One(f[0])
                } else {
                    Base::Prod(f)
                }
            }
            _ => Base::One(s.orig),
        }
    }

    /// Hash of `t`'s base when seen as `coef · base` (see `Summand`).
    pub(super) fn base_key(&self, t: TermId) -> u128 {
        // `FLAG_SCALED`: a finite `Mul` led by a constant (checking the
        // dense flags first spares loading every other node).
        if self.flags[t.index()] & FLAG_SCALED != 0
            && let Node::Mul(ops) = &self.nodes[t.index()]
        {
            let rest = &ops[1..];
            return if rest.len() == 1 {
                self.hashes[rest[0].index()]
            } else {
                hash_nary(tag::MUL, rest, &self.hashes)
            };
        }
        self.hashes[t.index()]
    }

    fn summand(&self, t: TermId) -> Summand {
        let key = self.base_key(t);
        if let Node::Mul(ops) = &self.nodes[t.index()]
            && !self.maybe_inf(t)
            && let Node::Const(c) = &self.nodes[ops[0].index()]
        {
            return Summand {
                key,
                coef: Some(c.clone()),
                orig: t,
                split: true,
            };
        }
        Summand {
            key,
            coef: None,
            orig: t,
            split: false,
        }
    }

    /// `a + b`.
    pub fn add(&mut self, a: TermId, b: TermId) -> TermId {
        if let Some(t) = self.add_fast(a, b) {
            return t;
        }
        self.add_many(&[a, b])
    }

    /// `a - b` = `a + (-1)·b`.
    pub fn sub(&mut self, a: TermId, b: TermId) -> TermId {
        let nb = self.neg(b);
        self.add(a, nb)
    }

    /// `-a` = `(-1)·a`.
    pub fn neg(&mut self, a: TermId) -> TermId {
        let m1 = self.konst(Rat::MINUS_ONE);
        self.mul_many(&[m1, a])
    }

    /// `a · b`.
    pub fn mul(&mut self, a: TermId, b: TermId) -> TermId {
        if let Some(t) = self.mul_fast(a, b) {
            return t;
        }
        self.mul_many(&[a, b])
    }

    /// `a / b` = `a · recip(b)`.
    pub fn div(&mut self, a: TermId, b: TermId) -> TermId {
        let rb = self.recip(b);
        self.mul(a, rb)
    }

    /// `a·b + c` (exact: fused or not is the same real).
    pub fn fma(&mut self, a: TermId, b: TermId, c: TermId) -> TermId {
        let p = self.mul(a, b);
        self.add(p, c)
    }

    /// The sum of `ops` (0 when empty).
    pub fn add_many(&mut self, ops: &[TermId]) -> TermId {
        let mut list: List = ops.iter().map(|&t| self.as_real(t)).collect();
        // Each `Again` flattens a nested sum that merging exposed; a few
        // rounds always suffice in practice. The last round may not ask
        // for another (`allow_again == false` always finishes), which keeps
        // the loop obviously finite.
        let mut round = 0;
        loop {
            self.flatten(&mut list, add_ops);
            match self.add_step(&list, round < 3) {
                Step::Done(t) => return t,
                Step::Again(next) => {
                    list = next;
                    round += 1;
                }
            }
        }
    }

    fn add_step(&mut self, list: &List, allow_again: bool) -> Step {
        let mut consts: List = List::new();
        let (mut pos_inf, mut neg_inf) = (None, None);
        let mut sums: SmallVec<[Summand; 8]> = SmallVec::new();
        for &t in list {
            match &self.nodes[t.index()] {
                Node::Const(_) => consts.push(t),
                Node::PosInf => pos_inf = Some(t),
                Node::NegInf => neg_inf = Some(t),
                _ => sums.push(self.summand(t)),
            }
        }

        // Infinities: inf + (finite) = inf; inf + -inf is undefined (kept).
        let summand_inf = sums.iter().any(|s| self.maybe_inf(s.orig));
        match (pos_inf, neg_inf) {
            (Some(i), None) | (None, Some(i)) if !summand_inf => return Step::Done(i),
            _ => {}
        }

        // Constants.
        let folded = match consts.len() {
            0 => Some(Rat::ZERO),
            1 => Some(self.const_rat(consts[0]).clone()),
            _ => fold_consts(
                Rat::ZERO,
                consts.iter().map(|&c| self.const_rat(c)),
                Rat::add,
            ),
        };

        // Like terms: sort by base, merge runs of equal bases.
        if sums.len() > 1 {
            sums.sort_by(|x, y| {
                x.key
                    .cmp(&y.key)
                    .then_with(|| self.base(x).cmp(&self.base(y)))
            });
        }
        let mut out = List::with_capacity(sums.len() + 3);
        let mut again = false;
        let mut i = 0;
        while i < sums.len() {
            let mut j = i + 1;
            while j < sums.len()
                && sums[j].key == sums[i].key
                && self.base(&sums[j]) == self.base(&sums[i])
            {
                j += 1;
            }
            let group = &sums[i..j];
            let merged = if group.len() > 1 && !group.iter().any(|s| self.maybe_inf(s.orig)) {
                fold_consts(
                    Rat::ZERO,
                    group.iter().map(|s| s.coef.as_ref().unwrap_or(&Rat::ONE)),
                    Rat::add,
                )
            } else {
                None
            };
            match merged {
                None => out.extend(group.iter().map(|s| s.orig)),
                Some(c) if c.is_zero() => {}
                Some(c) => {
                    let factors: List = match self.base(&group[0]) {
                        Base::One(t) => SmallVec::from_slice(&[t]),
                        Base::Prod(f) => SmallVec::from_slice(f),
                    };
                    let term = if c.is_one() {
                        if factors.len() == 1 {
                            factors[0]
                        } else {
                            self.mul_many(&factors)
                        }
                    } else {
                        let k = self.konst(c);
                        let mut all = List::with_capacity(factors.len() + 1);
                        all.push(k);
                        all.extend_from_slice(&factors);
                        self.mul_many(&all)
                    };
                    again |= matches!(self.nodes[term.index()], Node::Add(_));
                    out.push(term);
                }
            }
            i = j;
        }
        out.extend(pos_inf);
        out.extend(neg_inf);

        let lead = match &folded {
            Some(c) if c.is_zero() => None,
            Some(c) => Some(self.konst(c.clone())),
            None => {
                // Too large to fold: the constants stay separate operands.
                out.extend_from_slice(&consts);
                None
            }
        };

        if again && allow_again {
            out.extend(lead);
            return Step::Again(out);
        }

        self.sort_canonical(&mut out);
        match (lead, out.len()) {
            (None, 0) => Step::Done(self.konst(Rat::ZERO)),
            (Some(c), 0) => Step::Done(c),
            (None, 1) => Step::Done(out[0]),
            (lead, _) => {
                let mut ops = Operands::with_capacity(out.len() + 1);
                ops.extend(lead);
                ops.extend_from_slice(&out);
                Step::Done(self.intern(Node::Add(ops)))
            }
        }
    }

    fn const_rat(&self, t: TermId) -> &Rat {
        match &self.nodes[t.index()] {
            Node::Const(r) => r,
            // Only called on operands classified as constants.
            _ => &Rat::ZERO,
        }
    }

    /// The product of `ops` (1 when empty).
    pub fn mul_many(&mut self, ops: &[TermId]) -> TermId {
        let mut list: List = ops.iter().map(|&t| self.as_real(t)).collect();
        self.flatten(&mut list, mul_ops);

        let mut consts = List::new();
        let mut infs = List::new();
        let mut negative_infs = 0usize;
        let mut factors = List::with_capacity(list.len());
        for &t in &list {
            match &self.nodes[t.index()] {
                Node::Const(_) => consts.push(t),
                Node::PosInf => infs.push(t),
                Node::NegInf => {
                    infs.push(t);
                    negative_infs += 1;
                }
                _ => factors.push(t),
            }
        }
        let folded = match consts.len() {
            0 => Some(Rat::ONE),
            1 => Some(self.const_rat(consts[0]).clone()),
            _ => fold_consts(
                Rat::ONE,
                consts.iter().map(|&c| self.const_rat(c)),
                Rat::mul,
            ),
        };
        let Some(coef) = folded else {
            // Unfoldable constants: keep every operand as is.
            return self.mul_node(list, None);
        };

        if coef.is_zero() {
            if infs.is_empty() && !factors.iter().any(|&f| self.maybe_inf(f)) {
                return self.konst(Rat::ZERO);
            }
            // 0·inf is undefined: keep the product.
            factors.extend_from_slice(&infs);
            let zero = self.konst(Rat::ZERO);
            return self.mul_node(factors, Some(zero));
        }

        if !infs.is_empty() {
            // (±inf)·(±inf)·c with c ≠ 0 is a signed infinity.
            let negative = (coef.signum() < 0) ^ (negative_infs % 2 == 1);
            let inf = if negative {
                self.neg_inf()
            } else {
                self.pos_inf()
            };
            if factors.is_empty() {
                return inf;
            }
            factors.push(inf);
            return self.mul_node(factors, None);
        }

        if factors.is_empty() {
            return self.konst(coef);
        }
        if coef.is_one() {
            if factors.len() == 1 {
                return factors[0];
            }
            return self.mul_node(factors, None);
        }
        let k = self.konst(coef);
        self.mul_node(factors, Some(k))
    }

    /// Interns a product of `factors` (sorted here) with an optional
    /// leading constant.
    fn mul_node(&mut self, mut factors: List, lead: Option<TermId>) -> TermId {
        self.sort_canonical(&mut factors);
        let mut ops = Operands::with_capacity(factors.len() + 1);
        ops.extend(lead);
        ops.extend_from_slice(&factors);
        match ops.len() {
            0 => self.konst(Rat::ONE),
            1 => ops[0],
            _ => self.intern(Node::Mul(ops)),
        }
    }

    /// `1 / a`.
    pub fn recip(&mut self, a: TermId) -> TermId {
        let a = self.as_real(a);
        match &self.nodes[a.index()] {
            Node::Const(r) => match r.recip() {
                Some(q) => self.konst(q),
                None => self.intern(Node::Recip(a)),
            },
            Node::PosInf | Node::NegInf => self.konst(Rat::ZERO),
            Node::Recip(x) => *x,
            Node::Exp(x) => {
                let x = *x;
                let nx = self.neg(x);
                self.exp(nx)
            }
            Node::Mul(ops) => {
                let ops = ops.clone();
                if ops
                    .iter()
                    .any(|o| matches!(self.nodes[o.index()], Node::Mul(_)))
                {
                    // A product past the flattening limit: distributing
                    // would recurse once per nesting level.
                    return self.intern(Node::Recip(a));
                }
                let inv: List = ops.iter().map(|&o| self.recip(o)).collect();
                self.mul_many(&inv)
            }
            _ => self.intern(Node::Recip(a)),
        }
    }

    /// `e^a`.
    pub fn exp(&mut self, a: TermId) -> TermId {
        let a = self.as_real(a);
        match &self.nodes[a.index()] {
            Node::Const(r) if r.is_zero() => self.konst(Rat::ONE),
            Node::NegInf => self.konst(Rat::ZERO),
            Node::PosInf => a,
            _ => self.intern(Node::Exp(a)),
        }
    }

    /// `sqrt(a)` (folded only for exact squares of rationals).
    pub fn sqrt(&mut self, a: TermId) -> TermId {
        self.func(Func::Sqrt, a)
    }

    /// `1 / sqrt(a)`.
    pub fn rsqrt(&mut self, a: TermId) -> TermId {
        let s = self.sqrt(a);
        self.recip(s)
    }

    /// `|a|` = `max(a, -a)`.
    pub fn abs(&mut self, a: TermId) -> TermId {
        let n = self.neg(a);
        self.max(a, n)
    }

    /// `f(a)`. Folds only exact values: `sqrt` of a rational square,
    /// `log 1`, `sin 0`, `cos 0`, `tanh 0`, `erf 0`, `ex2` of an integer
    /// (|n| ≤ 16384), `lg2` of a power of two, and the limits at ±inf
    /// (`sqrt`, `log`, `lg2`, `ex2` at +inf; `ex2 -inf = 0`; `tanh`, `erf`
    /// at ±inf = ±1).
    pub fn func(&mut self, f: Func, a: TermId) -> TermId {
        let a = self.as_real(a);
        let folded: Option<Rat> = match (&self.nodes[a.index()], f) {
            (Node::Const(r), Func::Sqrt) => r.exact_sqrt(),
            (Node::Const(r), Func::Log) if r.is_one() => Some(Rat::ZERO),
            (Node::Const(r), Func::Sin | Func::Tanh | Func::Erf) if r.is_zero() => Some(Rat::ZERO),
            (Node::Const(r), Func::Cos) if r.is_zero() => Some(Rat::ONE),
            (Node::Const(r), Func::Ex2) => match r.to_i64() {
                Some(n) if n.unsigned_abs() <= 16384 => Some(Rat::from_mantissa_exp(1, n as i32)),
                _ => None,
            },
            (Node::Const(r), Func::Lg2) => r.log2_exact().map(Rat::from_i64),
            (Node::PosInf, Func::Sqrt | Func::Log | Func::Lg2 | Func::Ex2) => return a,
            (Node::NegInf, Func::Ex2) => Some(Rat::ZERO),
            (Node::PosInf, Func::Tanh | Func::Erf) => Some(Rat::ONE),
            (Node::NegInf, Func::Tanh | Func::Erf) => Some(Rat::MINUS_ONE),
            _ => None,
        };
        match folded {
            Some(r) => self.konst(r),
            None => self.intern(Node::Func(f, a)),
        }
    }

    /// `x^y`, C's `pow` over the reals. Rewrites, each an identity of C's
    /// `pow` over the reals (so exact for every domain the terms model):
    /// - `y` an integer constant `n` (|n| ≤ [`POW_UNROLL`]): `x·…·x`
    ///   (`n` factors; `1/(x·…·x)` for `n < 0`; `1` for `n = 0` — C
    ///   defines `pow(x, 0) = 1` for every `x`). For `n < 0` at `x = 0`
    ///   C gives ±inf and the reciprocal is undefined: the term semantics'
    ///   usual treatment of a pole.
    /// - `y` a non-integer rational constant `c`: `exp(c·log x)`. For
    ///   `x < 0` both sides are undefined (C: NaN; `log` of a negative
    ///   real: undefined); for `x > 0` they are equal; at `x = 0` they
    ///   agree as limits (`0` for `c > 0`, `+inf` for `c < 0`, with
    ///   `log 0 = -inf`).
    /// - `x = 1`: `1` (C: for every `y`); `x` a positive rational constant
    ///   `b`: `exp(y·log b)` (equal for every real `y`).
    ///
    /// Anything else is a [`Node::Pow`] atom.
    pub fn pow(&mut self, x: TermId, y: TermId) -> TermId {
        let x = self.as_real(x);
        let y = self.as_real(y);
        if let Node::Const(c) = &self.nodes[y.index()] {
            let c = c.clone();
            if let Some(n) = c.to_i64().filter(|n| n.unsigned_abs() <= POW_UNROLL) {
                let factors: List = std::iter::repeat_n(x, n.unsigned_abs() as usize).collect();
                let p = match factors.len() {
                    0 => return self.konst(Rat::ONE),
                    1 => x,
                    _ => self.mul_many(&factors),
                };
                return if n < 0 { self.recip(p) } else { p };
            }
            if !c.is_integer() {
                let l = self.func(Func::Log, x);
                let e = self.mul(y, l);
                return self.exp(e);
            }
        }
        if let Node::Const(b) = &self.nodes[x.index()] {
            if b.is_one() {
                return x;
            }
            if b.signum() > 0 {
                let l = self.func(Func::Log, x);
                let e = self.mul(y, l);
                return self.exp(e);
            }
        }
        self.intern(Node::Pow(x, y))
    }

    /// `name(args…)`: an uninterpreted function symbol applied to real
    /// arguments in call order (no rewrite at all: nothing is known about
    /// the function; see [`crate::uninterpreted`]).
    pub fn apply(&mut self, name: &str, args: &[TermId]) -> TermId {
        let args: crate::Operands = args.iter().map(|&a| self.as_real(a)).collect();
        self.intern(Node::Apply(Box::new(crate::node::Application {
            name: name.into(),
            args,
        })))
    }

    /// Compares two summands' bases (used by tests of the merge order).
    #[cfg(test)]
    pub(crate) fn base_order(&self, a: TermId, b: TermId) -> std::cmp::Ordering {
        let (x, y) = (self.summand(a), self.summand(b));
        x.key
            .cmp(&y.key)
            .then_with(|| self.base(&x).cmp(&self.base(&y)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Node;

    fn ops(t: &Terms, id: TermId) -> Vec<TermId> {
        t.node(id).children().collect()
    }

    #[test]
    fn constants_fold_exactly() {
        let mut t = Terms::new();
        // 1/3 + 1/6 = 1/2; (1/2)·6 = 3.
        let a = t.int(1);
        let b = t.int(3);
        let third = t.div(a, b);
        let six = t.int(6);
        let sixth = t.div(a, six);
        let half = t.add(third, sixth);
        let two = t.int(2);
        assert_eq!(half, t.div(a, two));
        assert_eq!(t.mul(half, six), b);
        // 0.1f + 0.1f is exactly 13421773/67108864 (not 0.2).
        let p1 = t.from_f32_bits(0x3DCC_CCCD).unwrap();
        let s = t.add(p1, p1);
        let r = t.as_rational(s).unwrap();
        assert_eq!(r.numer().to_string(), "13421773");
        assert_eq!(r.denom().to_string(), "67108864");
    }

    #[test]
    fn identities_drop() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let zero = t.int(0);
        let one = t.int(1);
        assert_eq!(t.add(x, zero), x);
        assert_eq!(t.mul(x, one), x);
        assert_eq!(t.mul(x, zero), zero);
        let nx = t.neg(x);
        assert_eq!(t.neg(nx), x);
        assert_eq!(t.sub(x, x), zero);
        let rx = t.recip(x);
        assert_eq!(t.recip(rx), x);
        assert_eq!(t.add_many(&[]), zero);
        assert_eq!(t.mul_many(&[]), one);
    }

    #[test]
    fn like_terms_merge() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let xy = t.mul(x, y);
        // x + x = 2x
        let two = t.int(2);
        let two_x = t.mul(two, x);
        assert_eq!(t.add(x, x), two_x);
        // 3xy - xy = 2xy
        let three = t.int(3);
        let three_xy = t.mul(three, xy);
        let lhs = t.sub(three_xy, xy);
        let rhs = t.mul(two, xy);
        assert_eq!(lhs, rhs);
        // (x + y) - y = x, through the Again round.
        let s = t.add(x, y);
        assert_eq!(t.sub(s, y), x);
        // 2(x + y) - (x + y) + z = x + y + z: merging yields the sum
        // x + y, which is flattened into the outer sum (the Again round).
        let z = t.input(0, 2);
        let p = t.mul(two, s);
        let q = t.neg(s);
        let merged = t.add_many(&[p, q, z]);
        let xyz = t.add_many(&[x, y, z]);
        assert_eq!(merged, xyz);
        assert_eq!(ops(&t, merged).len(), 3);
    }

    #[test]
    fn sums_are_flat_and_sorted() {
        let mut t = Terms::new();
        let x: Vec<TermId> = (0..4).map(|i| t.input(0, i)).collect();
        let a = t.add(x[0], x[1]);
        let b = t.add(x[2], x[3]);
        let ab = t.add(a, b);
        assert_eq!(ops(&t, ab).len(), 4);
        let c = t.add(x[3], x[1]);
        let d = t.add(c, x[2]);
        let e = t.add(x[0], d);
        assert_eq!(ab, e);
        // The constant leads.
        let five = t.int(5);
        let s = t.add(ab, five);
        assert_eq!(ops(&t, s)[0], five);
        let seven = t.int(7);
        let two = t.int(2);
        let s2 = t.add(s, two);
        assert_eq!(ops(&t, s2)[0], seven);
    }

    #[test]
    fn products_do_not_distribute() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let two = t.int(2);
        let s = t.add(x, y);
        let p = t.mul(two, s);
        assert!(matches!(t.node(p), Node::Mul(_)));
        let two_x = t.mul(two, x);
        let two_y = t.mul(two, y);
        assert_ne!(p, t.add(two_x, two_y));
    }

    #[test]
    fn pow_rewrites() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let (zero, one, two, m2) = (t.int(0), t.int(1), t.int(2), t.int(-2));
        // Integer exponents multiply out; pow(x, 0) = 1 for every x.
        assert_eq!(t.pow(x, zero), one);
        assert_eq!(t.pow(x, one), x);
        let sq = t.mul(x, x);
        assert_eq!(t.pow(x, two), sq);
        let rsq = t.recip(sq);
        assert_eq!(t.pow(x, m2), rsq);
        // A non-integer constant: exp(c·log x).
        let h = t.rational(num_rational::BigRational::new(3.into(), 2.into()));
        let l = t.func(Func::Log, x);
        let hl = t.mul(h, l);
        let e = t.exp(hl);
        assert_eq!(t.pow(x, h), e);
        // A positive constant base: exp(y·log b); base 1: 1.
        let l2 = t.func(Func::Log, two);
        let yl = t.mul(y, l2);
        let e2 = t.exp(yl);
        assert_eq!(t.pow(two, y), e2);
        assert_eq!(t.pow(one, y), one);
        // Otherwise an atom, rebuilt unchanged, and C's pow in f64
        // (a negative base with an integer exponent is real).
        let p = t.pow(x, y);
        assert!(matches!(t.node(p), Node::Pow(a, b) if *a == x && *b == y));
        let n = t.node(p).clone();
        assert_eq!(t.rebuild(&n), p);
        let v = t.eval_f64(p, &|_, i| if i == 0 { -2.0 } else { 3.0 });
        assert_eq!(v, -8.0);
        // Too large an integer exponent stays an atom.
        let big = t.int(65);
        let pb = t.pow(x, big);
        assert!(matches!(t.node(pb), Node::Pow(..)));
        // A negative base with a large integer: still an atom.
        let m3 = t.int(-3);
        let pm = t.pow(m3, y);
        assert!(matches!(t.node(pm), Node::Pow(..)));
    }

    #[test]
    fn division_and_reciprocals() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let two = t.int(2);
        let half = t.rational(num_rational::BigRational::new(1.into(), 2.into()));
        // x / 2 = (1/2)·x
        let d = t.div(x, two);
        assert_eq!(d, t.mul(half, x));
        // 1/(2xy) = (1/2)·(1/x)·(1/y)
        let p = t.mul_many(&[two, x, y]);
        let rp = t.recip(p);
        let rx = t.recip(x);
        let ry = t.recip(y);
        assert_eq!(rp, t.mul_many(&[half, rx, ry]));
        // recip(e^x) = e^-x
        let ex = t.exp(x);
        let nx = t.neg(x);
        assert_eq!(t.recip(ex), t.exp(nx));
        // recip(0) stays a node
        let zero = t.int(0);
        let r0 = t.recip(zero);
        assert!(matches!(t.node(r0), Node::Recip(_)));
    }

    #[test]
    fn infinities() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let inf = t.pos_inf();
        let ninf = t.neg_inf();
        let three = t.int(3);
        let m3 = t.int(-3);
        let zero = t.int(0);
        assert_eq!(t.add(inf, three), inf);
        assert_eq!(t.add(inf, x), inf);
        let undefined = t.add(inf, ninf);
        assert!(matches!(t.node(undefined), Node::Add(_)));
        assert_eq!(t.mul(inf, three), inf);
        assert_eq!(t.mul(inf, m3), ninf);
        assert_eq!(t.mul(ninf, ninf), inf);
        let zi = t.mul(inf, zero);
        assert!(matches!(t.node(zi), Node::Mul(_)));
        let ix = t.mul(inf, x);
        assert!(matches!(t.node(ix), Node::Mul(_)));
        assert!(t.maybe_infinite(ix));
        // 2·(inf·x) keeps the infinite product, absorbing the coefficient.
        let two = t.int(2);
        assert_eq!(t.mul(two, ix), ix);
        // 0·(inf·x) is kept.
        let z = t.mul(zero, ix);
        assert!(matches!(t.node(z), Node::Mul(_)));
        // exp(-inf) = 0, exp(inf) = inf, exp(0) = 1.
        assert_eq!(t.exp(ninf), zero);
        assert_eq!(t.exp(inf), inf);
        let one = t.int(1);
        assert_eq!(t.exp(zero), one);
        // recip(±inf) = 0
        assert_eq!(t.recip(ninf), zero);
        // (-inf - x)·log2e → -inf, ex2(-inf) = 0: the online-softmax
        // start value.
        let m = t.sub(ninf, x);
        assert_eq!(m, ninf);
        assert_eq!(t.func(Func::Ex2, m), zero);
    }

    #[test]
    fn functions_fold_only_exact_values() {
        let mut t = Terms::new();
        let four = t.int(4);
        let two = t.int(2);
        assert_eq!(t.sqrt(four), two);
        let s2 = t.sqrt(two);
        assert!(matches!(t.node(s2), Node::Func(Func::Sqrt, _)));
        let half = t.rational(num_rational::BigRational::new(1.into(), 2.into()));
        assert_eq!(t.rsqrt(four), half);
        let m3 = t.int(-3);
        let eighth = t.rational(num_rational::BigRational::new(1.into(), 8.into()));
        assert_eq!(t.func(Func::Ex2, m3), eighth);
        assert_eq!(t.func(Func::Lg2, eighth), m3);
        let one = t.int(1);
        let zero = t.int(0);
        assert_eq!(t.func(Func::Log, one), zero);
        assert_eq!(t.func(Func::Cos, zero), one);
        assert_eq!(t.func(Func::Tanh, zero), zero);
        let l2 = t.func(Func::Log, two);
        assert!(matches!(t.node(l2), Node::Func(Func::Log, _)));
        let x = t.input(0, 0);
        let nx = t.neg(x);
        let a = t.abs(x);
        assert_eq!(a, t.abs(nx));
        assert_eq!(t.abs(m3), t.int(3));
    }

    #[test]
    fn huge_constant_folds_are_refused() {
        let mut t = Terms::new();
        // Repeated squaring of 3 stops folding once the result would
        // exceed MAX_CONST_BITS: 3^(2^k) has about 1.58·2^k bits, so the
        // fold is refused at k = 16 (2^16 · 1.58 > 2^16).
        let mut c = t.int(3);
        let mut k = 0;
        while t.as_rational(c).is_some() && k < 30 {
            c = t.mul(c, c);
            k += 1;
        }
        assert_eq!(k, 16);
        assert!(matches!(t.node(c), Node::Mul(_)));
        // The unfolded product still evaluates (to +inf in f64).
        assert_eq!(t.eval_f64(c, &|_, _| 0.0), f64::INFINITY);
    }

    #[test]
    fn base_order_is_total_on_equal_keys() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let three = t.int(3);
        let three_x = t.mul(three, x);
        assert_eq!(t.base_order(x, three_x), std::cmp::Ordering::Equal);
    }
}
