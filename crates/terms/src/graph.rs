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

use std::fmt;

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::node::{CmpOp, Func, Node, Operands, TermId};

use crate::store::Terms;
pub use same::SameTerms;

/// A DAG of terms independent of any store: node `i`'s children are
/// indices `< i` (as [`TermId`]s local to the graph); `roots` index the
/// nodes.
///
/// Stored compactly (a graph of a full-size GEMM holds tens of millions
/// of nodes, and both kernels' graphs live until the verdicts are done):
/// one 12-byte record per node; the common kinds (`+`, `·`, `max`, `min`,
/// reciprocal, `exp`, functions, comparisons, `not`, `select`, `pow`)
/// keep their children in the record or, beyond two, in a shared operand
/// list, and every other node (constants, inputs, integer and boolean
/// nodes, applications) is kept whole in a side list. The serialized form
/// is the plain node list (`nodes`, `roots`), unchanged by the compact
/// representation; equal node lists have equal representations, so the
/// derived equality and hash are those of the node lists.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TermGraph {
    nodes: Nodes,
    roots: Vec<TermId>,
}

/// The compact node list of a [`TermGraph`].
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
struct Nodes {
    recs: Vec<Rec>,
    /// Operand lists of records with more than two children.
    ops: Vec<TermId>,
    /// Nodes kept whole (record kind `K_OTHER`).
    other: Vec<Node>,
}

/// One node: `head` is the kind (low 8 bits) and a kind-specific number
/// (the operand count of an n-ary kind, the function or operator code);
/// `a`, `b` are children, or an offset into `ops` / `other`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Rec {
    head: u32,
    a: u32,
    b: u32,
}

const K_OTHER: u32 = 0;
const K_ADD: u32 = 1;
const K_MUL: u32 = 2;
const K_MAX: u32 = 3;
const K_MIN: u32 = 4;
const K_RECIP: u32 = 5;
const K_EXP: u32 = 6;
const K_NOT: u32 = 7;
const K_FUNC: u32 = 8;
const K_CMP: u32 = 9;
const K_POW: u32 = 10;
const K_SELECT: u32 = 11;

/// Codes of `K_FUNC` / `K_CMP` records: positions in these lists.
const FUNCS: [Func; 8] = [
    Func::Log,
    Func::Sqrt,
    Func::Sin,
    Func::Cos,
    Func::Tanh,
    Func::Erf,
    Func::Ex2,
    Func::Lg2,
];
const CMPS: [CmpOp; 6] = [
    CmpOp::Eq,
    CmpOp::Ne,
    CmpOp::Lt,
    CmpOp::Le,
    CmpOp::Gt,
    CmpOp::Ge,
];

/// Operand counts an n-ary record can hold in its head.
const MAX_LEN: usize = (1 << 24) - 1;

/// The code of `f`: its position in `FUNCS` (an exhaustive match, so a new
/// function cannot be left out of the list unnoticed; a test checks the
/// two agree).
fn func_code(f: Func) -> u32 {
    match f {
        Func::Log => 0,
        Func::Sqrt => 1,
        Func::Sin => 2,
        Func::Cos => 3,
        Func::Tanh => 4,
        Func::Erf => 5,
        Func::Ex2 => 6,
        Func::Lg2 => 7,
    }
}

/// The code of `op`: its position in `CMPS` (exhaustive, as `func_code`).
fn cmp_code(op: CmpOp) -> u32 {
    match op {
        CmpOp::Eq => 0,
        CmpOp::Ne => 1,
        CmpOp::Lt => 2,
        CmpOp::Le => 3,
        CmpOp::Gt => 4,
        CmpOp::Ge => 5,
    }
}

impl Nodes {
    /// Room for `n` records, so that a graph exported from a store of `n`
    /// nodes never copies its record column while growing (the part no
    /// record reaches stays unused address space).
    fn with_capacity(n: usize) -> Self {
        Nodes {
            recs: Vec::with_capacity(n),
            ..Nodes::default()
        }
    }

    fn len(&self) -> usize {
        self.recs.len()
    }

    fn head(kind: u32, sub: u32) -> u32 {
        kind | (sub << 8)
    }

    /// Appends `node` (children already local ids).
    fn push(&mut self, node: Node) {
        let nary = |kind: u32, ops: &Operands, this: &mut Nodes| -> Option<Rec> {
            if ops.len() > MAX_LEN {
                return None;
            }
            let head = Nodes::head(kind, ops.len() as u32);
            Some(match ops.len() {
                0 => Rec { head, a: 0, b: 0 },
                1 => Rec {
                    head,
                    a: ops[0].0,
                    b: 0,
                },
                2 => Rec {
                    head,
                    a: ops[0].0,
                    b: ops[1].0,
                },
                _ => {
                    let at = u32::try_from(this.ops.len()).ok()?;
                    this.ops.extend_from_slice(ops);
                    Rec { head, a: at, b: 0 }
                }
            })
        };
        let unary = |kind: u32, sub: u32, a: TermId| Rec {
            head: Nodes::head(kind, sub),
            a: a.0,
            b: 0,
        };
        let rec = match &node {
            Node::Add(ops) => nary(K_ADD, ops, self),
            Node::Mul(ops) => nary(K_MUL, ops, self),
            Node::Max(ops) => nary(K_MAX, ops, self),
            Node::Min(ops) => nary(K_MIN, ops, self),
            Node::Recip(a) => Some(unary(K_RECIP, 0, *a)),
            Node::Exp(a) => Some(unary(K_EXP, 0, *a)),
            Node::Not(a) => Some(unary(K_NOT, 0, *a)),
            Node::Func(f, a) => Some(unary(K_FUNC, func_code(*f), *a)),
            Node::Cmp(op, a, b) => Some(Rec {
                head: Nodes::head(K_CMP, cmp_code(*op)),
                a: a.0,
                b: b.0,
            }),
            Node::Pow(a, b) => Some(Rec {
                head: K_POW,
                a: a.0,
                b: b.0,
            }),
            Node::Select(c, a, b) => u32::try_from(self.ops.len()).ok().map(|at| {
                self.ops.extend_from_slice(&[*c, *a, *b]);
                Rec {
                    head: K_SELECT,
                    a: at,
                    b: 0,
                }
            }),
            _ => None,
        };
        let rec = rec.unwrap_or_else(|| {
            let at = self.other.len() as u32;
            self.other.push(node);
            Rec {
                head: K_OTHER,
                a: at,
                b: 0,
            }
        });
        self.recs.push(rec);
    }

    /// The head of record `i` when it is a compact kind (its kind, count
    /// or code: everything but the children), `None` for a node kept whole.
    fn compact_head(&self, i: usize) -> Option<u32> {
        let h = self.recs[i].head;
        (h & 0xff != K_OTHER).then_some(h)
    }

    /// The children of compact record `i`, in stored order, appended to
    /// `out`.
    fn compact_children(&self, i: usize, out: &mut Vec<TermId>) {
        let r = self.recs[i];
        let (kind, sub) = (r.head & 0xff, (r.head >> 8) as usize);
        let (a, b) = (TermId(r.a), TermId(r.b));
        match kind {
            K_ADD | K_MUL | K_MAX | K_MIN => match sub {
                0 => {}
                1 => out.push(a),
                2 => out.extend([a, b]),
                n => out.extend_from_slice(&self.ops[r.a as usize..r.a as usize + n]),
            },
            K_CMP | K_POW => out.extend([a, b]),
            K_SELECT => out.extend_from_slice(&self.ops[r.a as usize..r.a as usize + 3]),
            _ => out.push(a),
        }
    }

    /// Node `i`, rebuilt.
    fn get(&self, i: usize) -> Node {
        let r = self.recs[i];
        let (kind, sub) = (r.head & 0xff, (r.head >> 8) as usize);
        let ops = || -> Operands {
            match sub {
                0 => Operands::new(),
                1 => Operands::from_slice(&[TermId(r.a)]),
                2 => Operands::from_slice(&[TermId(r.a), TermId(r.b)]),
                n => Operands::from_slice(&self.ops[r.a as usize..r.a as usize + n]),
            }
        };
        let (a, b) = (TermId(r.a), TermId(r.b));
        match kind {
            K_ADD => Node::Add(ops()),
            K_MUL => Node::Mul(ops()),
            K_MAX => Node::Max(ops()),
            K_MIN => Node::Min(ops()),
            K_RECIP => Node::Recip(a),
            K_EXP => Node::Exp(a),
            K_NOT => Node::Not(a),
            K_FUNC => Node::Func(FUNCS[sub], a),
            K_CMP => Node::Cmp(CMPS[sub], a, b),
            K_POW => Node::Pow(a, b),
            K_SELECT => {
                let o = &self.ops[r.a as usize..r.a as usize + 3];
                Node::Select(o[0], o[1], o[2])
            }
            _ => self.other[r.a as usize].clone(),
        }
    }
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

impl Serialize for TermGraph {
    /// The plain form: `{ nodes: [Node], roots: [TermId] }`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct All<'a>(&'a Nodes);
        impl Serialize for All<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq((0..self.0.len()).map(|i| self.0.get(i)))
            }
        }
        let mut st = s.serialize_struct("TermGraph", 2)?;
        st.serialize_field("nodes", &All(&self.nodes))?;
        st.serialize_field("roots", &self.roots)?;
        st.end()
    }
}

/// The unvalidated serialized shape (nodes decoded straight into the
/// compact form, checked as they come).
#[derive(Deserialize)]
#[serde(rename = "TermGraph")]
struct RawGraph {
    nodes: Checked,
    roots: Vec<TermId>,
}

/// A node list read from a sequence, with the first forward reference
/// (if any) noted.
struct Checked(Nodes, Option<GraphError>);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Checked;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence of term nodes")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                let mut nodes = Nodes::default();
                // Capped: a corrupt length must not reserve gigabytes.
                nodes
                    .recs
                    .reserve(seq.size_hint().unwrap_or(0).min(1 << 20));
                let mut err = None;
                while let Some(n) = seq.next_element::<Node>()? {
                    let i = nodes.len();
                    if err.is_none()
                        && let Some(c) = n.children().find(|c| c.index() >= i)
                    {
                        err = Some(GraphError::ForwardReference {
                            node: i,
                            child: c.0,
                        });
                    }
                    nodes.push(n);
                }
                Ok(Checked(nodes, err))
            }
        }
        d.deserialize_seq(V)
    }
}

impl TryFrom<RawGraph> for TermGraph {
    type Error = GraphError;
    fn try_from(raw: RawGraph) -> Result<Self, GraphError> {
        let Checked(nodes, err) = raw.nodes;
        if let Some(e) = err {
            return Err(e);
        }
        if let Some(r) = raw.roots.iter().find(|r| r.index() >= nodes.len()) {
            return Err(GraphError::RootOutOfRange {
                root: r.0,
                len: nodes.len(),
            });
        }
        Ok(TermGraph {
            nodes,
            roots: raw.roots,
        })
    }
}

impl<'de> Deserialize<'de> for TermGraph {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawGraph::deserialize(d)?;
        TermGraph::try_from(raw).map_err(serde::de::Error::custom)
    }
}

fn bincode_config() -> bincode::config::Configuration {
    bincode::config::standard()
}

impl TermGraph {
    /// Node `i` (children are indices `< i`), rebuilt from the compact
    /// form. Panics when `i` is out of range.
    pub fn node(&self, i: usize) -> Node {
        self.nodes.get(i)
    }

    /// The nodes in order, children before parents; child ids index this
    /// sequence.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = Node> + '_ {
        (0..self.nodes.len()).map(|i| self.nodes.get(i))
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
        self.nodes.len() == 0
    }

    /// A graph of `nodes` (children local, earlier) and `roots`, as is —
    /// for tests that need a graph no store would export.
    #[cfg(test)]
    fn from_parts(nodes: Vec<Node>, roots: Vec<TermId>) -> TermGraph {
        let mut n = Nodes::default();
        nodes.into_iter().for_each(|x| n.push(x));
        TermGraph { nodes: n, roots }
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
        let mut nodes = Nodes::default();
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
        let mut out = Nodes::with_capacity(nodes.len());
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
        for i in 0..g.nodes.len() {
            // Children are earlier nodes (validated), so `ids` has them.
            let id = self.import_node(g, i, &ids, look);
            ids.push(id);
        }
        g.roots.iter().map(|r| ids[r.index()]).collect()
    }

    /// Node `i` of `g` as an id of this store, its children already
    /// imported (`ids`, by graph index): looked up first when `look` (the
    /// store may hold it), else rebuilt through its constructor.
    fn import_node(&mut self, g: &TermGraph, i: usize, ids: &[TermId], look: bool) -> TermId {
        let mut n = g.nodes.get(i);
        n.map_children_in_place(|c| ids[c.index()]);
        match look.then(|| self.lookup(&n)).flatten() {
            Some(id) => id,
            None => self.rebuild(&n),
        }
    }

    /// [`Terms::import`] of only what the graph's roots number `wanted`
    /// reach: those roots as ids of this store, in order (`None` for a
    /// number the graph does not have). For a report that needs a few
    /// elements' terms of a graph of millions of nodes: the cost is one
    /// pass over the graph's records plus the reached nodes, not a
    /// rebuild of every node.
    pub fn import_roots(&mut self, g: &TermGraph, wanted: &[usize]) -> Vec<Option<TermId>> {
        let n = g.nodes.len();
        let mut need = vec![false; n];
        for &w in wanted {
            if let Some(r) = g.roots.get(w) {
                need[r.index()] = true;
            }
        }
        // Children precede their parents (validated), so one sweep from
        // the top marks everything the roots reach.
        for i in (0..n).rev() {
            if need[i] {
                for c in g.nodes.get(i).children() {
                    need[c.index()] = true;
                }
            }
        }
        let mut ids: Vec<TermId> = vec![TermId(u32::MAX); n];
        let look = !self.is_empty();
        for i in (0..n).filter(|&i| need[i]) {
            ids[i] = self.import_node(g, i, &ids, look);
        }
        wanted
            .iter()
            .map(|&w| g.roots.get(w).map(|r| ids[r.index()]))
            .collect()
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
        // The compact representation serializes as the plain node list
        // did (disk cache entries keep their bytes and content hashes).
        #[derive(Serialize)]
        struct Plain {
            nodes: Vec<Node>,
            roots: Vec<TermId>,
        }
        let plain = Plain {
            nodes: g.nodes().collect(),
            roots: g.roots().to_vec(),
        };
        assert_eq!(
            bincode::serde::encode_to_vec(&plain, bincode_config()).unwrap(),
            bytes
        );
        assert!(
            plain
                .nodes
                .iter()
                .any(|n| matches!(n, Node::Add(o) if o.len() > 2))
        );
        assert!(TermGraph::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        // A forward reference is rejected.
        let bad = TermGraph::from_parts(vec![Node::Exp(TermId(0))], vec![TermId(0)]);
        let bytes = bincode::serde::encode_to_vec(&bad, bincode_config()).unwrap();
        // (serde reports `try_from` failures as decode errors.)
        let err = TermGraph::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("node 0 refers to node 0"), "{err}");
        let bad_root = TermGraph::from_parts(vec![Node::PosInf], vec![TermId(1)]);
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
        assert_eq!(g.node(0), Node::Const(crate::Rat::from_i64(2)));
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

    /// Every record kind decodes to the node it encodes: all functions and
    /// comparison operators, n-ary lists of 0 to 5 operands, selects, and
    /// the kinds kept whole.
    #[test]
    fn records_round_trip_every_kind() {
        let t = |i: u32| TermId(i);
        let ops = |n: u32| -> Operands { (0..n).map(t).collect() };
        let mut nodes = vec![Node::PosInf, Node::Const(crate::Rat::from_i64(-3))];
        for (i, f) in FUNCS.iter().enumerate() {
            assert_eq!(func_code(*f), i as u32);
            nodes.push(Node::Func(*f, t(1)));
        }
        for (i, op) in CMPS.iter().enumerate() {
            assert_eq!(cmp_code(*op), i as u32);
            nodes.push(Node::Cmp(*op, t(0), t(1)));
        }
        for n in 0..6 {
            nodes.push(Node::Add(ops(n)));
            nodes.push(Node::Mul(ops(n)));
            nodes.push(Node::Max(ops(n)));
            nodes.push(Node::Min(ops(n)));
            nodes.push(Node::And(ops(n)));
            nodes.push(Node::IntAdd(32, ops(n)));
        }
        nodes.extend([
            Node::Recip(t(1)),
            Node::Exp(t(0)),
            Node::Not(t(1)),
            Node::Pow(t(1), t(0)),
            Node::Select(t(2), t(0), t(1)),
            Node::Input {
                tensor: 7,
                index: 1 << 40,
            },
            Node::IntConst { w: 8, v: 255 },
        ]);
        let g = TermGraph::from_parts(nodes.clone(), vec![TermId(0)]);
        assert_eq!(g.nodes().collect::<Vec<_>>(), nodes);
        assert_eq!(TermGraph::from_bytes(&g.to_bytes()), Ok(g));
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
        let g = TermGraph::from_parts(
            vec![
                Node::Input {
                    tensor: 0,
                    index: 0,
                },
                Node::Const(crate::Rat::ZERO),
                Node::Add([TermId(1), TermId(0)].into_iter().collect()),
            ],
            vec![TermId(2)],
        );
        let mut t = Terms::new();
        let r = t.import(&g);
        assert_eq!(r, vec![t.input(0, 0)]);
    }
}
