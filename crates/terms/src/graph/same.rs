//! Structural equality of terms across two graphs, without a store.
//!
//! The verdicts used to import both kernels' term graphs into one store
//! (every node rebuilt and interned: on a K = 4096 GEMM tens of millions of
//! products, one hash-table miss each) only to find, for most elements,
//! that the two output terms are one node. [`SameTerms`] answers that
//! question on the graphs themselves: two roots whose sub-DAGs have the
//! same structure — node by node the same kind, the same payload
//! (constants, widths, operators) and the same children in the same
//! order — import as the same node, because `Terms::import` rebuilds each
//! node from its payload and its children's ids alone. So a matched pair
//! is exactly an identical-terms pair of the import path.
//!
//! The converse is not claimed: a pair the walk does not match may still
//! be the same term after import (a hand-made or foreign graph whose nodes
//! are not canonical, or a graph with two structurally equal nodes). The
//! caller treats "not matched" as "not known", never as "different".

use std::mem::discriminant;

use super::TermGraph;
use crate::node::TermId;

/// Matches roots of one graph (`a`) against roots of others, remembering
/// every sub-term matched so that shared sub-terms (the products of a
/// GEMM's accumulation chains, an attention row's sum) are walked once.
pub struct SameTerms<'g> {
    a: &'g TermGraph,
    /// Per node of `a`: `0` = not matched, else `(tag << 32) | (b + 1)`:
    /// matched to node `b` of the graph the caller calls `tag`.
    memo: Vec<u64>,
    stack: Vec<(TermId, TermId, bool)>,
    /// Children scratch lists of the two nodes compared.
    cx: Vec<TermId>,
    cy: Vec<TermId>,
}

impl<'g> SameTerms<'g> {
    /// A matcher for roots of `a`; allocates nothing until the first
    /// comparison (then 8 bytes per node of `a`).
    pub fn new(a: &'g TermGraph) -> Self {
        SameTerms {
            a,
            memo: Vec::new(),
            stack: Vec::new(),
            cx: Vec::new(),
            cy: Vec::new(),
        }
    }

    /// Whether node `x` of `a` and node `y` of `b` are the same sub-DAG.
    /// `tag` names `b` among the graphs this matcher is used with (one
    /// tag per graph: the memo stores it beside each match). `true` is a
    /// proof (the two import as one node); `false` means only "not shown".
    /// Ids out of range are not matched.
    pub fn same(&mut self, x: TermId, b: &TermGraph, tag: u32, y: TermId) -> bool {
        let a = self.a;
        if x.index() >= a.nodes.len() || y.index() >= b.nodes.len() {
            return false;
        }
        if self.memo.len() != a.nodes.len() {
            self.memo = vec![0; a.nodes.len()];
        }
        let key = |y: TermId| (u64::from(tag) << 32) | (u64::from(y.0) + 1);
        let stack = &mut self.stack;
        stack.clear();
        stack.push((x, y, false));
        while let Some((x, y, expanded)) = stack.pop() {
            let m = self.memo[x.index()];
            if m == key(y) {
                continue;
            }
            if m != 0 && m >> 32 == u64::from(tag) {
                // `x` is matched to another node of `b`: `b` would hold
                // two structurally equal nodes (not canonical). Not shown.
                return false;
            }
            // Compact records (products, sums, ...): equal heads are the
            // same kind, count and code, so once every child pair matched
            // the nodes are equal; only nodes kept whole are rebuilt.
            if let (Some(hx), Some(hy)) = (
                a.nodes.compact_head(x.index()),
                b.nodes.compact_head(y.index()),
            ) {
                if hx != hy {
                    return false;
                }
                if !expanded {
                    let (cx, cy) = (&mut self.cx, &mut self.cy);
                    cx.clear();
                    cy.clear();
                    a.nodes.compact_children(x.index(), cx);
                    b.nodes.compact_children(y.index(), cy);
                    stack.push((x, y, true));
                    stack.extend(cx.iter().zip(cy.iter()).map(|(&c, &d)| (c, d, false)));
                } else {
                    self.memo[x.index()] = key(y);
                }
                continue;
            }
            let (nx, ny) = (a.node(x.index()), b.node(y.index()));
            if !expanded {
                let (cx, cy) = (nx.children(), ny.children());
                if discriminant(&nx) != discriminant(&ny) || cx.len() != cy.len() {
                    return false;
                }
                stack.push((x, y, true));
                stack.extend(cx.zip(cy).map(|(c, d)| (c, d, false)));
                continue;
            }
            // Every child pair was matched (each was pushed after this
            // entry and a failed one returned): the nodes are equal iff
            // `x` with its children replaced by their matches is `y`.
            let memo = &self.memo;
            let mapped = nx.map_children(|c| TermId((memo[c.index()] as u32).wrapping_sub(1)));
            if mapped != ny {
                return false;
            }
            self.memo[x.index()] = key(y);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CmpOp, Node, Terms};

    /// Dot products `Σ_k x[i,k]·w[k,j]` as a GEMM builds them, in `order`
    /// of `k`, plus a comparison — the shape of the SGEMM pairs.
    fn gemm(t: &mut Terms, order: &[u64], extra: bool) -> Vec<TermId> {
        let mut out = Vec::new();
        for i in 0..3u64 {
            for j in 0..2u64 {
                let mut acc = t.int(0);
                for &k in order {
                    let x = t.input(0, i * 8 + k);
                    let w = t.input(1, k * 2 + j);
                    let p = t.mul(x, w);
                    acc = t.add(acc, p);
                }
                out.push(acc);
            }
        }
        if extra {
            let a = t.input(0, 0);
            let b = t.input(1, 0);
            let c = t.cmp(CmpOp::Lt, a, b);
            out.push(t.select(c, a, b));
        }
        out
    }

    /// Matched exactly when the two stores' terms are the same node after
    /// importing both graphs into one store — on equal terms built in
    /// different orders (different graphs), on different terms, and on
    /// roots of different kinds.
    #[test]
    fn matches_exactly_the_pairs_import_identifies() {
        let mut s1 = Terms::new();
        let r1 = gemm(&mut s1, &[0, 1, 2, 3, 4, 5, 6, 7], true);
        let mut s2 = Terms::new();
        // Another summation order: the same terms (sums are flattened and
        // sorted), built in another order; and one wrong element.
        let mut r2 = gemm(&mut s2, &[7, 3, 5, 1, 0, 2, 6, 4], true);
        let wrong = s2.input(1, 3);
        r2[4] = s2.add(r2[4], wrong);
        let (g1, g2) = (s1.export(&r1), s2.export(&r2));
        assert_ne!(g1, g2);
        let mut both = Terms::new();
        let i1 = both.import(&g1);
        let i2 = both.import(&g2);
        let mut m = SameTerms::new(&g1);
        for (p, &x) in g1.roots().iter().enumerate() {
            for (q, &y) in g2.roots().iter().enumerate() {
                assert_eq!(
                    m.same(x, &g2, 0, y),
                    i1[p] == i2[q],
                    "root {p} of the first graph against root {q} of the second"
                );
            }
        }
        // Against itself under another tag, every root is its own match.
        for &x in g1.roots() {
            assert!(m.same(x, &g1, 1, x));
        }
        // Out of range: not matched, no panic.
        assert!(!m.same(TermId(u32::MAX), &g2, 0, g2.roots()[0]));
    }

    /// A payload difference under equal structure (another constant, another
    /// input index) is not matched.
    #[test]
    fn payloads_are_compared() {
        let mut s = Terms::new();
        let x = s.input(0, 0);
        let y = s.input(0, 1);
        let two = s.int(2);
        let three = s.int(3);
        let a = s.mul(two, x);
        let b = s.mul(three, x);
        let c = s.mul(two, y);
        let g = s.export(&[a, b, c]);
        let mut m = SameTerms::new(&g);
        let r = g.roots();
        // One tag per comparison: each walks the nodes afresh.
        assert!(m.same(r[0], &g, 7, r[0]));
        assert!(!m.same(r[0], &g, 8, r[1]));
        assert!(!m.same(r[0], &g, 9, r[2]));
        assert!(matches!(g.node(r[0].index()), Node::Mul(_)));
    }
}
