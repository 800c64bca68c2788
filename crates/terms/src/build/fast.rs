//! Fast paths for binary `add` and `mul`.
//!
//! Most constructions are `a + b` or `a · b` of two non-constant terms, or
//! one more operand joining an accumulated sum (`acc = acc + x`,
//! `acc = fma(a, b, acc)`). For those shapes the general constructors'
//! work — flattening, classifying every operand, two sorts — reduces to
//! "no folding applies; insert the new operand in canonical position".
//! These functions recognise exactly those shapes and otherwise return
//! `None`, so the result is always the node the general constructor would
//! build (a property test checks that).

use super::FLATTEN_LIMIT;
use crate::node::{Node, Operands, TermId};
use crate::store::{FLAG_BOOL, FLAG_CONST, FLAG_MAYBE_INF, Terms};

impl Terms {
    /// A real, finite, non-constant term that is not of node kind `kind`
    /// (an n-ary kind that would be flattened).
    pub(super) fn plain(&self, t: TermId, flattens: fn(&Node) -> bool) -> bool {
        self.flags[t.index()] & (FLAG_BOOL | FLAG_MAYBE_INF) == 0 && {
            let n = &self.nodes[t.index()];
            !matches!(n, Node::Const(_)) && !flattens(n)
        }
    }

    pub(super) fn add_fast(&mut self, a: TermId, b: TermId) -> Option<TermId> {
        let is_add = |n: &Node| matches!(n, Node::Add(_));
        // `c + x` with a non-zero constant: `Add([c, x])`.
        if let Some(t) = self.const_and_plain(a, b, is_add, true) {
            return Some(t);
        }
        if self.plain(a, is_add) && self.plain(b, is_add) {
            // Like terms (including a == b) need the general path.
            if self.base_key(a) == self.base_key(b) {
                return None;
            }
            let ops = self.sorted_pair(a, b);
            return Some(self.intern(Node::Add(ops)));
        }
        let (sum, t) = if self.plain(b, is_add) {
            (a, b)
        } else if self.plain(a, is_add) {
            (b, a)
        } else {
            return None;
        };
        self.extend_nary(sum, t, true)
    }

    pub(super) fn mul_fast(&mut self, a: TermId, b: TermId) -> Option<TermId> {
        let is_mul = |n: &Node| matches!(n, Node::Mul(_));
        // `c · x` with a constant other than 0 and 1: `Mul([c, x])`.
        if let Some(t) = self.const_and_plain(a, b, is_mul, false) {
            return Some(t);
        }
        if self.plain(a, is_mul) && self.plain(b, is_mul) {
            let ops = self.sorted_pair(a, b);
            return Some(self.intern(Node::Mul(ops)));
        }
        let (prod, t) = if self.plain(b, is_mul) {
            (a, b)
        } else if self.plain(a, is_mul) {
            (b, a)
        } else {
            return None;
        };
        self.extend_nary(prod, t, false)
    }

    /// One operand a constant that is not the identity or (for products)
    /// zero, the other plain: the general constructor builds
    /// `[constant, other]`.
    fn const_and_plain(
        &mut self,
        a: TermId,
        b: TermId,
        flattens: fn(&Node) -> bool,
        is_add: bool,
    ) -> Option<TermId> {
        let is_const = |t: TermId| matches!(self.nodes[t.index()], Node::Const(_));
        let (k, x) = if is_const(a) {
            (a, b)
        } else if is_const(b) {
            (b, a)
        } else {
            return None;
        };
        let Node::Const(c) = &self.nodes[k.index()] else {
            return None;
        };
        if c.is_zero() || (!is_add && c.is_one()) || !self.plain(x, flattens) {
            return None;
        }
        let ops = Operands::from_slice(&[k, x]);
        Some(self.intern(if is_add {
            Node::Add(ops)
        } else {
            Node::Mul(ops)
        }))
    }

    fn sorted_pair(&self, a: TermId, b: TermId) -> Operands {
        if self.key(a) <= self.key(b) {
            Operands::from_slice(&[a, b])
        } else {
            Operands::from_slice(&[b, a])
        }
    }

    /// `node + t` (`is_add`) or `node · t` where `node` is a finite sum
    /// (product) whose only constant, if any, leads, and `t` is plain: the
    /// general constructor would splice `node`'s operands and insert `t`.
    /// For a sum, `t` must not be a like term of any operand.
    fn extend_nary(&mut self, node: TermId, t: TermId, is_add: bool) -> Option<TermId> {
        if self.flags[node.index()] & (FLAG_BOOL | FLAG_MAYBE_INF) != 0 {
            return None;
        }
        let ops = match (&self.nodes[node.index()], is_add) {
            (Node::Add(ops), true) | (Node::Mul(ops), false) => ops,
            _ => return None,
        };
        if ops.len() + 1 > FLATTEN_LIMIT {
            return None;
        }
        let is_const = |o: &TermId| self.flags[o.index()] & FLAG_CONST != 0;
        let lead = usize::from(is_const(&ops[0]));
        if ops[lead..].iter().any(is_const) {
            // Unfolded (oversized) constants: leave it to the general path.
            return None;
        }
        if is_add {
            let tk = self.base_key(t);
            if ops[lead..].iter().any(|&o| self.base_key(o) == tk) {
                return None;
            }
        }
        let key = self.key(t);
        let pos = lead + ops[lead..].partition_point(|&o| self.key(o) < key);
        let mut new_ops = Operands::with_capacity(ops.len() + 1);
        new_ops.extend_from_slice(&ops[..pos]);
        new_ops.push(t);
        new_ops.extend_from_slice(&ops[pos..]);
        Some(self.intern(if is_add {
            Node::Add(new_ops)
        } else {
            Node::Mul(new_ops)
        }))
    }
}
