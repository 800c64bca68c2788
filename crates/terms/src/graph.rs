//! Self-contained, serializable term DAGs (`TermGraph`).
//!
//! `export` copies the nodes reachable from some roots out of a store into
//! a list in a canonical topological order (depth-first post-order from the
//! roots in order, children in stored order). Since stored orders are
//! store-independent (operands sorted by hash), the same terms exported
//! from two different stores give the *same* graph, byte for byte — which
//! is what lets the store pass content-address it.
//!
//! `import` rebuilds each node through the canonicalising constructors, so
//! a graph from another store merges with equal sub-terms already present,
//! and even a hand-made or foreign graph can only produce well-formed,
//! canonical nodes. Deserialization validates the graph (children before
//! parents, roots in range, rationals normalised), so `import` is total.

mod same;

use serde::{Deserialize, Serialize};

use crate::node::{Node, TermId};

use crate::store::Terms;
pub use same::SameTerms;

/// A DAG of terms independent of any store: `nodes[i]`'s children are
/// indices `< i` (as [`TermId`]s local to the graph); `roots` index
/// `nodes`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(try_from = "RawGraph")]
pub struct TermGraph {
    nodes: Vec<Node>,
    roots: Vec<TermId>,
}

/// The unvalidated serialized shape.
#[derive(Deserialize)]
struct RawGraph {
    nodes: Vec<Node>,
    roots: Vec<TermId>,
}

/// Why bytes are not a valid `TermGraph`.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum GraphError {
    #[error("node {node} refers to node {child}, which does not come before it")]
    ForwardReference { node: usize, child: u32 },
    #[error("root {root} is out of range ({len} nodes)")]
    RootOutOfRange { root: u32, len: usize },
    #[error("cannot decode term graph: {0}")]
    Decode(String),
}

impl TryFrom<RawGraph> for TermGraph {
    type Error = GraphError;
    fn try_from(raw: RawGraph) -> Result<Self, GraphError> {
        for (i, n) in raw.nodes.iter().enumerate() {
            if let Some(c) = n.children().find(|c| c.index() >= i) {
                return Err(GraphError::ForwardReference {
                    node: i,
                    child: c.0,
                });
            }
        }
        if let Some(r) = raw.roots.iter().find(|r| r.index() >= raw.nodes.len()) {
            return Err(GraphError::RootOutOfRange {
                root: r.0,
                len: raw.nodes.len(),
            });
        }
        Ok(TermGraph {
            nodes: raw.nodes,
            roots: raw.roots,
        })
    }
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

impl TermGraph {
    /// The nodes, children before parents; child ids index this list.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The exported roots, in the order given to `export`, as indices into
    /// `nodes`.
    pub fn roots(&self) -> &[TermId] {
        &self.roots
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Canonical bytes: bincode 2 (standard configuration) of the serde
    /// form.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Encoding plain data into a Vec cannot fail (no I/O, every length
        // is known); the fallback keeps this total without a panic path.
        bincode::serde::encode_to_vec(self, bincode_config()).unwrap_or_default()
    }

    /// Decodes and validates bytes made by [`TermGraph::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<TermGraph, GraphError> {
        let (g, used) = bincode::serde::decode_from_slice(bytes, bincode_config())
            .map_err(|e| GraphError::Decode(e.to_string()))?;
        if used != bytes.len() {
            return Err(GraphError::Decode(format!(
                "{} trailing bytes",
                bytes.len() - used
            )));
        }
        Ok(g)
    }

    /// BLAKE3 of [`TermGraph::to_bytes`]: the content address.
    pub fn content_hash(&self) -> [u8; 32] {
        blake3::hash(&self.to_bytes()).into()
    }
}

impl Terms {
    /// The sub-DAG reachable from `roots`, self-contained, in canonical
    /// order (see the module docs). Roots may repeat.
    pub fn export(&self, roots: &[TermId]) -> TermGraph {
        // Dense side table: store id -> graph id (`NONE` = not exported yet).
        const NONE: u32 = u32::MAX;
        let mut local: Vec<u32> = vec![NONE; self.nodes.len()];
        let mut nodes: Vec<Node> = Vec::new();
        let mut stack: Vec<(TermId, bool)> = Vec::new();
        let mut out_roots = Vec::with_capacity(roots.len());
        for &r in roots {
            stack.push((r, false));
            while let Some((t, expanded)) = stack.pop() {
                if local[t.index()] != NONE {
                    continue;
                }
                let node = self.node(t);
                if !expanded {
                    stack.push((t, true));
                    // Reverse, so the first child is visited (and numbered)
                    // first.
                    let at = stack.len();
                    stack.extend(
                        node.children()
                            .filter(|c| local[c.index()] == NONE)
                            .map(|c| (c, false)),
                    );
                    stack[at..].reverse();
                    continue;
                }
                let id = nodes.len() as u32;
                nodes.push(node.map_children(|c| TermId(local[c.index()])));
                local[t.index()] = id;
            }
            out_roots.push(TermId(local[r.index()]));
        }
        TermGraph {
            nodes,
            roots: out_roots,
        }
    }

    /// Like [`Terms::export`], consuming the store: its hash table, hashes
    /// and flags are freed before the graph is built and each exported
    /// node's store copy is dropped once copied, so the peak is the nodes plus the graph
    /// rather than the whole store plus the graph (a symbolic run of a
    /// large GEMM holds tens of millions of nodes, half of them partial
    /// sums no output reaches). Gives the same graph as `export`.
    pub fn into_graph(self, roots: &[TermId]) -> TermGraph {
        let Terms { mut nodes, .. } = self;
        const NONE: u32 = u32::MAX;
        let mut local: Vec<u32> = vec![NONE; nodes.len()];
        let mut out: Vec<Node> = Vec::new();
        let mut stack: Vec<(TermId, bool)> = Vec::new();
        let mut out_roots = Vec::with_capacity(roots.len());
        for &r in roots {
            stack.push((r, false));
            while let Some((t, expanded)) = stack.pop() {
                if local[t.index()] != NONE {
                    continue;
                }
                if !expanded {
                    stack.push((t, true));
                    let at = stack.len();
                    stack.extend(
                        nodes[t.index()]
                            .children()
                            .filter(|c| local[c.index()] == NONE)
                            .map(|c| (c, false)),
                    );
                    stack[at..].reverse();
                    continue;
                }
                // Every child is numbered already, and an exported node is
                // never visited again: its store copy is dropped here.
                let mut node = std::mem::replace(&mut nodes[t.index()], Node::PosInf);
                node.map_children_in_place(|c| TermId(local[c.index()]));
                let id = out.len() as u32;
                out.push(node);
                local[t.index()] = id;
            }
            out_roots.push(TermId(local[r.index()]));
        }
        TermGraph {
            nodes: out,
            roots: out_roots,
        }
    }

    /// Interns the graph's terms into this store, returning its roots as
    /// ids of this store (in order).
    ///
    /// Each node is rebuilt through its constructor, except one this store
    /// holds already: a constructor returns an interned node unchanged
    /// when rebuilt from it (the store's invariant), so looking it up
    /// gives the same id for the cost of a hash and one probe. (Into an
    /// empty store — the first of a pair's graphs — nothing can be found,
    /// so no lookup is tried.)
    pub fn import(&mut self, g: &TermGraph) -> Vec<TermId> {
        let mut ids: Vec<TermId> = Vec::with_capacity(g.nodes.len());
        let look = !self.is_empty();
        for node in &g.nodes {
            // Children are earlier nodes (validated), so `ids` has them.
            let n = node.map_children(|c| ids[c.index()]);
            let id = match look.then(|| self.lookup(&n)).flatten() {
                Some(id) => id,
                None => self.rebuild(&n),
            };
            ids.push(id);
        }
        g.roots.iter().map(|r| ids[r.index()]).collect()
    }

    /// Builds `node` (whose children are ids of this store) through the
    /// canonicalising constructor of its kind.
    pub fn rebuild(&mut self, node: &Node) -> TermId {
        match node {
            Node::Const(r) => self.konst(r.clone()),
            Node::PosInf => self.pos_inf(),
            Node::NegInf => self.neg_inf(),
            Node::Input { tensor, index } => self.input(*tensor, *index),
            // Binary: the fast paths (the general constructor's result).
            Node::Add(ops) if ops.len() == 2 => self.add(ops[0], ops[1]),
            Node::Mul(ops) if ops.len() == 2 => self.mul(ops[0], ops[1]),
            Node::Add(ops) => self.add_many(ops),
            Node::Mul(ops) => self.mul_many(ops),
            Node::Recip(a) => self.recip(*a),
            Node::Exp(a) => self.exp(*a),
            Node::Func(f, a) => self.func(*f, *a),
            Node::Pow(a, b) => self.pow(*a, *b),
            Node::Max(ops) => self.max_many(ops),
            Node::Min(ops) => self.min_many(ops),
            Node::BoolConst(b) => self.bool_const(*b),
            Node::Cmp(op, a, b) => self.cmp(*op, *a, *b),
            Node::Not(a) => self.not(*a),
            Node::And(ops) => self.and_many(ops),
            Node::Or(ops) => self.or_many(ops),
            Node::Xor(ops) => self.xor_many(ops),
            Node::Select(c, a, b) => self.select(*c, *a, *b),
            Node::Apply(app) => self.apply(&app.name, &app.args),
            Node::IntConst { w, v } => self.int_const(*w, *v),
            Node::IntInput { tensor, index, ty } => self.int_input(*tensor, *index, *ty),
            Node::IntAdd(w, ops) => self.int_add_many(*w, ops),
            Node::IntMul(w, ops) => self.int_mul_many(*w, ops),
            Node::IntOp(f, w, ops) => self.int_op(*f, *w, ops),
            Node::IntCmp(op, a, b) => self.int_cmp(*op, *a, *b),
            Node::IntToReal(signed, a) => self.int_to_real(*signed, *a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CmpOp, Func};

    /// A small softmax-like term set over inputs of tensor 0.
    fn build(t: &mut Terms) -> Vec<TermId> {
        let x: Vec<_> = (0..4).map(|i| t.input(0, i)).collect();
        let m = t.max_many(&x);
        let e: Vec<_> = x
            .iter()
            .map(|&xi| {
                let d = t.sub(xi, m);
                t.exp(d)
            })
            .collect();
        let s = t.add_many(&e);
        let mut out: Vec<_> = e.iter().map(|&ei| t.div(ei, s)).collect();
        let zero = t.int(0);
        let c = t.cmp(CmpOp::Gt, x[0], zero);
        let l = t.func(Func::Log, s);
        out.push(t.select(c, l, x[1]));
        out
    }

    #[test]
    fn round_trip_preserves_hash_and_value() {
        let mut a = Terms::new();
        let roots = build(&mut a);
        let g = a.export(&roots);
        // Into a fresh store.
        let mut b = Terms::new();
        let rb = b.import(&g);
        // Into a store that already holds other terms (different ids).
        let mut c = Terms::new();
        for i in 0..10 {
            let y = c.input(3, i);
            let z = c.input(0, i);
            let _ = c.mul(y, z);
        }
        let rc = c.import(&g);
        let input = |_: u32, i: u64| (i as f64) * 0.25 - 0.3;
        let va = a.eval_many_f64(&roots, &input);
        for (store, rs) in [(&b, &rb), (&c, &rc)] {
            for (&ra, &r) in roots.iter().zip(rs.iter()) {
                assert_eq!(a.hash128(ra), store.hash128(r));
            }
            assert_eq!(store.eval_many_f64(rs, &input), va);
            // Re-exporting gives the identical graph and content hash.
            let g2 = store.export(rs);
            assert_eq!(g2, g);
            assert_eq!(g2.content_hash(), g.content_hash());
        }
        // Importing twice adds nothing.
        let before = c.len();
        assert_eq!(c.import(&g), rc);
        assert_eq!(c.len(), before);
    }

    #[test]
    fn bytes_round_trip_and_validation() {
        let mut a = Terms::new();
        let roots = build(&mut a);
        let g = a.export(&roots);
        let bytes = g.to_bytes();
        assert_eq!(TermGraph::from_bytes(&bytes), Ok(g.clone()));
        assert!(TermGraph::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        // A forward reference is rejected.
        let bad = TermGraph {
            nodes: vec![Node::Exp(TermId(0))],
            roots: vec![TermId(0)],
        };
        let bytes = bincode::serde::encode_to_vec(&bad, bincode_config()).unwrap();
        // (serde reports `try_from` failures as decode errors.)
        let err = TermGraph::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("node 0 refers to node 0"), "{err}");
        let bad_root = TermGraph {
            nodes: vec![Node::PosInf],
            roots: vec![TermId(1)],
        };
        let bytes = bincode::serde::encode_to_vec(&bad_root, bincode_config()).unwrap();
        let err = TermGraph::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("root 1 is out of range"), "{err}");
        // Constants are validated too: a graph whose serialized constant
        // has a zero denominator is rejected, an unreduced one is reduced.
        // (A mirror of the serde shape writes what `Rat` cannot hold.)
        #[derive(Serialize)]
        enum FakeRat {
            Small { num: i64, den: i64 },
        }
        #[derive(Serialize)]
        enum FakeNode {
            Const(FakeRat),
        }
        #[derive(Serialize)]
        struct FakeGraph {
            nodes: Vec<FakeNode>,
            roots: Vec<u32>,
        }
        let fake = |num, den| FakeGraph {
            nodes: vec![FakeNode::Const(FakeRat::Small { num, den })],
            roots: vec![0],
        };
        let bytes = bincode::serde::encode_to_vec(fake(1, 0), bincode_config()).unwrap();
        let err = TermGraph::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("zero denominator"), "{err}");
        let bytes = bincode::serde::encode_to_vec(fake(4, 2), bincode_config()).unwrap();
        let g = TermGraph::from_bytes(&bytes).unwrap();
        assert_eq!(g.nodes()[0], Node::Const(crate::Rat::from_i64(2)));
    }

    /// Importing into a store that already holds some of the terms (the
    /// second graph of a pair: lookups instead of rebuilds) gives the ids
    /// the constructors give there, and leaves no duplicate node.
    #[test]
    fn import_into_a_populated_store_finds_existing_nodes() {
        let mut a = Terms::new();
        let roots = build(&mut a);
        let g = a.export(&roots);
        let mut b = Terms::new();
        let mine = build(&mut b);
        let len = b.len();
        assert_eq!(b.import(&g), mine);
        assert_eq!(b.len(), len);
        // A fresh store (no lookups) gets the same terms.
        let mut c = Terms::new();
        let got = c.import(&g);
        for (x, y) in got.iter().zip(&mine) {
            assert_eq!(c.hash128(*x), b.hash128(*y));
        }
    }

    #[test]
    fn into_graph_equals_export() {
        let mut t = Terms::new();
        let roots = build(&mut t);
        // some nodes no root reaches
        let x = t.input(3, 9);
        let _ = t.exp(x);
        for r in [&roots[..], &roots[1..], &[roots[0], roots[0]]] {
            let g = t.export(r);
            assert_eq!(t.clone().into_graph(r), g);
        }
    }

    /// In-place export over a store where reachable and unreachable nodes
    /// interleave (every third dot product exported, roots out of creation
    /// order, no roots at all): the same graph as `export`.
    #[test]
    fn into_graph_equals_export_interleaved() {
        let mut t = Terms::new();
        let mut dots = Vec::new();
        for i in 0..12u64 {
            let mut acc = t.int(0);
            for k in 0..6u64 {
                let x = t.input(0, i * 6 + k);
                let w = t.input(1, k);
                let p = t.mul(x, w);
                acc = t.add(acc, p);
            }
            dots.push(t.exp(acc));
        }
        let mut picked: Vec<TermId> = dots.iter().copied().step_by(3).collect();
        picked.reverse();
        picked.push(dots[3]);
        for r in [&picked[..], &[], &dots[..]] {
            let g = t.export(r);
            assert_eq!(t.clone().into_graph(r), g);
        }
    }

    #[test]
    fn export_contains_only_reachable_nodes() {
        let mut a = Terms::new();
        let x = a.input(0, 0);
        let y = a.input(0, 1);
        let _unrelated = a.mul(x, y);
        let e = a.exp(x);
        let g = a.export(&[e, e]);
        assert_eq!(g.len(), 2);
        assert_eq!(g.roots(), &[TermId(1), TermId(1)]);
    }

    #[test]
    fn foreign_graph_is_canonicalised_on_import() {
        // A non-canonical graph (x + 0, unsorted) imports as plain x.
        let g = TermGraph {
            nodes: vec![
                Node::Input {
                    tensor: 0,
                    index: 0,
                },
                Node::Const(crate::Rat::ZERO),
                Node::Add([TermId(1), TermId(0)].into_iter().collect()),
            ],
            roots: vec![TermId(2)],
        };
        let mut t = Terms::new();
        let r = t.import(&g);
        assert_eq!(r, vec![t.input(0, 0)]);
    }
}
