//! Booleans and piecewise values: comparisons, connectives, `select`.
//!
//! These exist so that `setp` on data and predicated moves (`selp`,
//! `@p mov`) are data flow, not branches (docs/semantics.md §3). Comparisons are
//! over the extended reals, a total order, so `!(a < b)` is `b <= a`.
//!
//! Canonical forms:
//! - `Cmp`: only `Eq`/`Ne`/`Lt`/`Le` (`a > b` is `b < a`); `Eq`/`Ne`
//!   operands sorted; constant/constant, `a op a`, and finite-vs-infinity
//!   comparisons folded.
//! - `Not`: never of a constant, a `Not` or a comparison (comparisons are
//!   negated in place).
//! - `And`/`Or`: flattened, identities dropped, absorbing constants and
//!   complementary pairs (`p`, `!p`) folded, duplicates removed, sorted.
//! - `Xor`: flattened, negations (`Not`, and `!=`/`<=` comparisons, which
//!   are negations of `==`/`<`) and constants pulled out as a parity, equal
//!   pairs cancelled (so `p ^ !p` is `true`), sorted; `Not(Xor)` carries
//!   an odd parity.
//! - `Select`: the condition is never a constant, a `Not`, an `Ne` or an
//!   `Le` comparison (those swap the branches); equal branches collapse; a
//!   branch that is itself a `select` on the same condition is resolved;
//!   boolean branches with a constant become connectives.

use super::{ExtVal, List};
use crate::intop::IntCmpOp;
use crate::node::{CmpOp, Node, Operands, TermId};
use crate::rat::Rat;
use crate::store::Terms;

fn and_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::And(ops) => Some(ops),
        _ => None,
    }
}

fn or_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Or(ops) => Some(ops),
        _ => None,
    }
}

fn xor_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Xor(ops) => Some(ops),
        _ => None,
    }
}

impl Terms {
    /// `a op b` over the extended reals (booleans compare as 0/1).
    pub fn cmp(&mut self, op: CmpOp, a: TermId, b: TermId) -> TermId {
        let a = self.as_real(a);
        let b = self.as_real(b);
        // Canonical operators: swap the strict/non-strict "greater" forms.
        let (op, a, b) = match op {
            CmpOp::Gt => (CmpOp::Lt, b, a),
            CmpOp::Ge => (CmpOp::Le, b, a),
            _ => (op, a, b),
        };
        if a == b {
            return self.bool_const(op.holds(std::cmp::Ordering::Equal));
        }
        let folded = match (self.ext_val(a), self.ext_val(b)) {
            (Some(x), Some(y)) => Some(op.holds(x.cmp(&y))),
            // A term that cannot be infinite lies strictly between the
            // infinities.
            (None, Some(v @ (ExtVal::PosInf | ExtVal::NegInf))) if !self.maybe_infinite(a) => {
                Some(op.holds(if v == ExtVal::PosInf {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                }))
            }
            (Some(v @ (ExtVal::PosInf | ExtVal::NegInf)), None) if !self.maybe_infinite(b) => {
                Some(op.holds(if v == ExtVal::PosInf {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                }))
            }
            _ => None,
        };
        if let Some(v) = folded {
            return self.bool_const(v);
        }
        let (a, b) = match op {
            CmpOp::Eq | CmpOp::Ne if self.key(b) < self.key(a) => (b, a),
            _ => (a, b),
        };
        self.intern(Node::Cmp(op, a, b))
    }

    /// `!a`.
    pub fn not(&mut self, a: TermId) -> TermId {
        let a = self.as_boolean(a);
        match self.nodes[a.index()] {
            Node::BoolConst(v) => self.bool_const(!v),
            Node::Not(x) => x,
            Node::Cmp(CmpOp::Eq, x, y) => self.cmp(CmpOp::Ne, x, y),
            Node::Cmp(CmpOp::Ne, x, y) => self.cmp(CmpOp::Eq, x, y),
            Node::Cmp(CmpOp::Lt, x, y) => self.cmp(CmpOp::Le, y, x),
            Node::Cmp(CmpOp::Le, x, y) => self.cmp(CmpOp::Lt, y, x),
            // Not produced by `cmp`, but stay total on hand-built graphs.
            Node::Cmp(CmpOp::Gt, x, y) => self.cmp(CmpOp::Le, x, y),
            Node::Cmp(CmpOp::Ge, x, y) => self.cmp(CmpOp::Lt, x, y),
            Node::IntCmp(op, x, y) => match op {
                IntCmpOp::Eq => self.int_cmp(IntCmpOp::Ne, x, y),
                IntCmpOp::Ne => self.int_cmp(IntCmpOp::Eq, x, y),
                IntCmpOp::Lt { signed } => self.int_cmp(IntCmpOp::Le { signed }, y, x),
                IntCmpOp::Le { signed } => self.int_cmp(IntCmpOp::Lt { signed }, y, x),
                IntCmpOp::Gt { signed } => self.int_cmp(IntCmpOp::Le { signed }, x, y),
                IntCmpOp::Ge { signed } => self.int_cmp(IntCmpOp::Lt { signed }, x, y),
            },
            _ => self.intern(Node::Not(a)),
        }
    }

    /// Whether `a` and `b` are each other's negation in a form recognisable
    /// without interning anything (`x` / `Not(x)`, `a == b` / `a != b`,
    /// `a < b` / `b <= a`).
    fn complement_of(&self, a: TermId, b: TermId) -> bool {
        match (&self.nodes[a.index()], &self.nodes[b.index()]) {
            (Node::Not(x), _) if *x == b => true,
            (_, Node::Not(y)) if *y == a => true,
            (Node::Cmp(p, x1, y1), Node::Cmp(q, x2, y2)) => match (p, q) {
                (CmpOp::Eq, CmpOp::Ne) | (CmpOp::Ne, CmpOp::Eq) => x1 == x2 && y1 == y2,
                (CmpOp::Lt, CmpOp::Le) | (CmpOp::Le, CmpOp::Lt) => x1 == y2 && y1 == x2,
                _ => false,
            },
            _ => false,
        }
    }

    pub fn and(&mut self, a: TermId, b: TermId) -> TermId {
        self.connective(true, &[a, b])
    }

    pub fn or(&mut self, a: TermId, b: TermId) -> TermId {
        self.connective(false, &[a, b])
    }

    /// Conjunction of `ops` (`true` when empty).
    pub fn and_many(&mut self, ops: &[TermId]) -> TermId {
        self.connective(true, ops)
    }

    /// Disjunction of `ops` (`false` when empty).
    pub fn or_many(&mut self, ops: &[TermId]) -> TermId {
        self.connective(false, ops)
    }

    /// `and` (`is_and`) or `or` of `ops`.
    fn connective(&mut self, is_and: bool, ops: &[TermId]) -> TermId {
        let mut list: List = ops.iter().map(|&t| self.as_boolean(t)).collect();
        self.flatten(&mut list, if is_and { and_ops } else { or_ops });
        // identity: true for and, false for or; absorbing: the other.
        let identity = is_and;
        let mut rest = List::with_capacity(list.len());
        for &t in &list {
            match self.nodes[t.index()] {
                Node::BoolConst(v) if v == identity => {}
                Node::BoolConst(_) => return self.bool_const(!identity),
                _ => rest.push(t),
            }
        }
        self.sort_canonical(&mut rest);
        rest.dedup();
        // Complementary pairs (quadratic; only for short lists).
        if rest.len() <= 16 {
            for i in 0..rest.len() {
                for j in i + 1..rest.len() {
                    if self.complement_of(rest[i], rest[j]) {
                        return self.bool_const(!identity);
                    }
                }
            }
        }
        match rest.len() {
            0 => self.bool_const(identity),
            1 => rest[0],
            _ => {
                let ops: Operands = rest.into_iter().collect();
                self.intern(if is_and {
                    Node::And(ops)
                } else {
                    Node::Or(ops)
                })
            }
        }
    }

    /// `a xor b`.
    pub fn xor(&mut self, a: TermId, b: TermId) -> TermId {
        self.xor_many(&[a, b])
    }

    /// Parity of `ops` (`false` when empty).
    pub fn xor_many(&mut self, ops: &[TermId]) -> TermId {
        let mut list: List = ops.iter().map(|&t| self.as_boolean(t)).collect();
        self.flatten(&mut list, xor_ops);
        let mut parity = false;
        let mut rest = List::with_capacity(list.len());
        for &t in &list {
            match self.nodes[t.index()] {
                Node::BoolConst(v) => parity ^= v,
                // xor(!x, y) = !xor(x, y)
                Node::Not(x) => {
                    parity ^= true;
                    rest.push(x);
                }
                // Comparisons enter in their positive polarity (`==`, `<`),
                // like `select` conditions, so `p ^ !q` and `!(p ^ q)`
                // meet.
                Node::Cmp(CmpOp::Ne | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, ..) => {
                    parity ^= true;
                    let positive = self.not(t);
                    rest.push(positive);
                }
                _ => rest.push(t),
            }
        }
        self.sort_canonical(&mut rest);
        // x xor x = false: cancel equal neighbours in pairs.
        let mut kept = List::with_capacity(rest.len());
        for t in rest {
            if kept.last() == Some(&t) {
                kept.pop();
            } else {
                kept.push(t);
            }
        }
        let core = match kept.len() {
            0 => return self.bool_const(parity),
            1 => kept[0],
            _ => self.intern(Node::Xor(kept.into_iter().collect())),
        };
        if parity { self.not(core) } else { core }
    }

    /// `cond ? then : else_`. The branches should have the same sort; a
    /// boolean branch next to a real one is used as 0/1.
    pub fn select(&mut self, cond: TermId, then: TermId, else_: TermId) -> TermId {
        let mut c = self.as_boolean(cond);
        let (mut a, mut b) = (then, else_);
        match (self.int_width(a), self.int_width(b)) {
            (Some(wa), Some(wb)) if wa != wb => b = self.as_int(b, wa),
            (Some(wa), None) => b = self.as_int(b, wa),
            (None, Some(wb)) => a = self.as_int(a, wb),
            _ => {}
        }
        if self.is_bool(a) != self.is_bool(b) {
            a = self.as_real(a);
            b = self.as_real(b);
        }
        // Negative conditions swap the branches.
        if matches!(
            self.nodes[c.index()],
            Node::Not(_)
                | Node::Cmp(CmpOp::Ne | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, ..)
                | Node::IntCmp(
                    IntCmpOp::Ne | IntCmpOp::Le { .. } | IntCmpOp::Gt { .. } | IntCmpOp::Ge { .. },
                    ..
                )
        ) {
            c = self.not(c);
            std::mem::swap(&mut a, &mut b);
        }
        if let Node::BoolConst(v) = self.nodes[c.index()] {
            return if v { a } else { b };
        }
        // A branch selecting on the same condition is already decided.
        if let Node::Select(c2, x, _) = self.nodes[a.index()]
            && c2 == c
        {
            a = x;
        }
        if let Node::Select(c2, _, y) = self.nodes[b.index()]
            && c2 == c
        {
            b = y;
        }
        if a == b {
            return a;
        }
        if self.is_bool(a) {
            match (self.as_bool(a), self.as_bool(b)) {
                (Some(true), Some(false)) => return c,
                (Some(false), Some(true)) => return self.not(c),
                (Some(true), None) => return self.or(c, b),
                (Some(false), None) => {
                    let nc = self.not(c);
                    return self.and(nc, b);
                }
                (None, Some(true)) => {
                    let nc = self.not(c);
                    return self.or(nc, a);
                }
                (None, Some(false)) => return self.and(c, a),
                _ => {}
            }
        }
        self.intern(Node::Select(c, a, b))
    }

    /// `cond ? 1 : 0` (a boolean as a real).
    pub fn bool_to_real(&mut self, cond: TermId) -> TermId {
        let one = self.konst(Rat::ONE);
        let zero = self.konst(Rat::ZERO);
        self.select(cond, one, zero)
    }
}

#[cfg(test)]
mod tests {
    use crate::{CmpOp, Node, Terms};

    #[test]
    fn comparisons_fold_and_canonicalise() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let (two, three) = (t.int(2), t.int(3));
        let (tt, ff) = (t.bool_const(true), t.bool_const(false));
        assert_eq!(t.cmp(CmpOp::Lt, two, three), tt);
        assert_eq!(t.cmp(CmpOp::Ge, two, three), ff);
        assert_eq!(t.cmp(CmpOp::Eq, two, two), tt);
        assert_eq!(t.cmp(CmpOp::Le, x, x), tt);
        assert_eq!(t.cmp(CmpOp::Ne, x, x), ff);
        // x > y is y < x; x >= y is y <= x.
        assert_eq!(t.cmp(CmpOp::Gt, x, y), t.cmp(CmpOp::Lt, y, x));
        assert_eq!(t.cmp(CmpOp::Ge, x, y), t.cmp(CmpOp::Le, y, x));
        // Eq is symmetric.
        assert_eq!(t.cmp(CmpOp::Eq, x, y), t.cmp(CmpOp::Eq, y, x));
        // Finite terms lie between the infinities.
        let (inf, ninf) = (t.pos_inf(), t.neg_inf());
        assert_eq!(t.cmp(CmpOp::Lt, x, inf), tt);
        assert_eq!(t.cmp(CmpOp::Gt, x, ninf), tt);
        assert_eq!(t.cmp(CmpOp::Eq, x, ninf), ff);
        assert_eq!(t.cmp(CmpOp::Lt, ninf, inf), tt);
        assert_eq!(t.cmp(CmpOp::Le, inf, inf), tt);
    }

    #[test]
    fn negation_flips_comparisons() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let lt = t.cmp(CmpOp::Lt, x, y);
        assert_eq!(t.not(lt), t.cmp(CmpOp::Ge, x, y));
        let eq = t.cmp(CmpOp::Eq, x, y);
        assert_eq!(t.not(eq), t.cmp(CmpOp::Ne, x, y));
        let nlt = t.not(lt);
        assert_eq!(t.not(nlt), lt);
        let tt = t.bool_const(true);
        assert_eq!(t.not(tt), t.bool_const(false));
    }

    #[test]
    fn connectives_fold() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let zero = t.int(0);
        let p = t.cmp(CmpOp::Lt, x, y);
        let q = t.cmp(CmpOp::Lt, x, zero);
        let (tt, ff) = (t.bool_const(true), t.bool_const(false));
        assert_eq!(t.and(p, tt), p);
        assert_eq!(t.and(p, ff), ff);
        assert_eq!(t.or(p, tt), tt);
        assert_eq!(t.or(p, ff), p);
        assert_eq!(t.and(p, p), p);
        assert_eq!(t.and(p, q), t.and(q, p));
        let np = t.not(p);
        assert_eq!(t.and(p, np), ff);
        assert_eq!(t.or(np, p), tt);
        assert_eq!(t.xor(p, p), ff);
        assert_eq!(t.xor(p, tt), np);
        assert_eq!(t.xor(p, np), tt);
        let pq = t.xor(p, q);
        assert_eq!(t.xor(pq, q), p);
        let nq = t.not(q);
        let npq = t.not(pq);
        assert_eq!(t.xor(p, nq), npq);
        assert_eq!(t.and_many(&[]), tt);
        assert_eq!(t.or_many(&[]), ff);
    }

    #[test]
    fn select_folds() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let z = t.input(0, 2);
        let (tt, ff) = (t.bool_const(true), t.bool_const(false));
        assert_eq!(t.select(tt, x, y), x);
        assert_eq!(t.select(ff, x, y), y);
        let c = t.cmp(CmpOp::Lt, x, y);
        assert_eq!(t.select(c, z, z), z);
        // Negated and Ge/Ne conditions swap the branches: one node.
        let s = t.select(c, x, y);
        let ge = t.cmp(CmpOp::Ge, x, y);
        assert_eq!(t.select(ge, y, x), s);
        let nc = t.not(c);
        assert_eq!(t.select(nc, y, x), s);
        // Nested select on the same condition.
        let inner = t.select(c, x, z);
        assert_eq!(t.select(c, inner, y), s);
        // Boolean branches.
        assert_eq!(t.select(c, tt, ff), c);
        assert_eq!(t.select(c, ff, tt), nc);
        let q = t.cmp(CmpOp::Eq, x, z);
        assert_eq!(t.select(c, q, ff), t.and(c, q));
        assert_eq!(t.select(c, tt, q), t.or(c, q));
        // A real used as a condition means "non-zero".
        let zero = t.int(0);
        let nz = t.cmp(CmpOp::Ne, x, zero);
        assert_eq!(t.select(x, y, z), t.select(nz, y, z));
        // A boolean in a real context is 0/1.
        let one = t.int(1);
        let b = t.select(c, one, zero);
        assert_eq!(t.add(c, zero), b);
        assert!(matches!(t.node(b), Node::Select(..)));
    }
}
