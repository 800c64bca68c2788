//! `max` / `min` over the extended reals.
//!
//! Canonical form: flattened (up to `FLATTEN_LIMIT`), constants folded to
//! the single extreme one (which leads), duplicates removed, the identity
//! infinity dropped (`-inf` from `max`, `+inf` from `min`), the absorbing
//! one returned (`max(.., +inf) = +inf`), remaining operands sorted.

use super::{ExtVal, List};
use crate::node::{Node, Operands, TermId};
use crate::rat::Rat;
use crate::store::Terms;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Max,
    Min,
}

fn max_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Max(ops) => Some(ops),
        _ => None,
    }
}

fn min_ops(n: &Node) -> Option<&Operands> {
    match n {
        Node::Min(ops) => Some(ops),
        _ => None,
    }
}

impl Terms {
    pub fn max(&mut self, a: TermId, b: TermId) -> TermId {
        self.extremum(Kind::Max, &[a, b])
    }

    pub fn min(&mut self, a: TermId, b: TermId) -> TermId {
        self.extremum(Kind::Min, &[a, b])
    }

    /// `max` of `ops` (`-inf` when empty).
    pub fn max_many(&mut self, ops: &[TermId]) -> TermId {
        self.extremum(Kind::Max, ops)
    }

    /// `min` of `ops` (`+inf` when empty).
    pub fn min_many(&mut self, ops: &[TermId]) -> TermId {
        self.extremum(Kind::Min, ops)
    }

    fn extremum(&mut self, kind: Kind, ops: &[TermId]) -> TermId {
        let mut list: List = ops.iter().map(|&t| self.as_real(t)).collect();
        self.flatten(&mut list, if kind == Kind::Max { max_ops } else { min_ops });
        // `better(a, b)`: a is the more extreme of the two.
        let better = |a: ExtVal<'_>, b: ExtVal<'_>| match kind {
            Kind::Max => a > b,
            Kind::Min => a < b,
        };
        let mut best: Option<TermId> = None;
        let mut rest = List::with_capacity(list.len());
        for &t in &list {
            match self.ext_val(t) {
                Some(v) => {
                    let replace = match best {
                        None => true,
                        Some(b) => better(v, self.ext_val(b).unwrap_or(v)),
                    };
                    if replace {
                        best = Some(t);
                    }
                }
                None => rest.push(t),
            }
        }
        let (absorbing, identity) = match kind {
            Kind::Max => (Node::PosInf, Node::NegInf),
            Kind::Min => (Node::NegInf, Node::PosInf),
        };
        let lead = match best {
            Some(b) if self.nodes[b.index()] == absorbing => return b,
            Some(b) if self.nodes[b.index()] == identity => None,
            other => other,
        };
        self.sort_canonical(&mut rest);
        rest.dedup();
        match (lead, rest.len()) {
            (None, 0) => self.intern(identity),
            (Some(c), 0) => c,
            (None, 1) => rest[0],
            (lead, _) => {
                let mut ops = Operands::with_capacity(rest.len() + 1);
                ops.extend(lead);
                ops.extend_from_slice(&rest);
                self.intern(match kind {
                    Kind::Max => Node::Max(ops),
                    Kind::Min => Node::Min(ops),
                })
            }
        }
    }

    /// `max(a, 0)` — a convenience for ReLU-style idioms.
    pub fn relu(&mut self, a: TermId) -> TermId {
        let zero = self.konst(Rat::ZERO);
        self.max(a, zero)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Node, Terms};

    #[test]
    fn constants_and_infinities() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let (two, five) = (t.int(2), t.int(5));
        let (inf, ninf) = (t.pos_inf(), t.neg_inf());
        assert_eq!(t.max(two, five), five);
        assert_eq!(t.min(two, five), two);
        assert_eq!(t.max(x, ninf), x);
        assert_eq!(t.max(x, inf), inf);
        assert_eq!(t.min(x, inf), x);
        assert_eq!(t.min(x, ninf), ninf);
        assert_eq!(t.max(ninf, ninf), ninf);
        assert_eq!(t.max_many(&[]), ninf);
        assert_eq!(t.min_many(&[]), inf);
        assert_eq!(t.max(inf, ninf), inf);
        // max(x, 2, 5) keeps only 5, leading.
        let m = t.max_many(&[x, two, five]);
        assert_eq!(t.node(m), &Node::Max([five, x].into_iter().collect()));
    }

    #[test]
    fn flattened_sorted_deduplicated() {
        let mut t = Terms::new();
        let x: Vec<_> = (0..3).map(|i| t.input(0, i)).collect();
        let a = t.max(x[0], x[1]);
        let b = t.max(x[2], x[0]);
        let ab = t.max(a, b);
        assert_eq!(t.node(ab).children().count(), 3);
        let c = t.max(x[1], x[2]);
        let d = t.max(c, x[0]);
        assert_eq!(ab, d);
        assert_eq!(t.max(x[0], x[0]), x[0]);
        // max and min do not mix.
        let mn = t.min(x[0], x[1]);
        let mm = t.max(mn, x[2]);
        assert_eq!(t.node(mm).children().count(), 2);
    }
}
