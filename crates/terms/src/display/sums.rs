//! How a sum is laid out for reading: operands in index order, and runs of
//! operands that differ only by an affine shift of their input coordinates
//! folded into one `Σ_{k<n} …`.
//!
//! A sum's operands are stored in the store's canonical order (by hash),
//! which reads as a shuffle: `x[402] + x[656] + x[403] + …`. Sorting them by
//! the first input element each reads gives `x[0] + x[1] + … + x[63]`; a
//! run of at least [`MIN_FOLD`] operands of the same shape whose input
//! coordinates advance by the same step from one operand to the next is
//! printed once, with `k` in place of the varying coordinates:
//! `Σ_{k<64} (a[3,k] * b[k,5])` (`max_{k<n} …` for a maximum). Folding is only a way of printing: the
//! sum it stands for is exactly the listed operands, nothing is inferred.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::node::{Node, TermId};
use crate::store::Terms;

/// Fewest operands printed as one `Σ`.
pub(super) const MIN_FOLD: usize = 4;

/// Nodes of an operand looked at for its shape (larger operands are
/// neither folded nor ordered beyond their first inputs).
const SHAPE_NODES: usize = 256;

/// The associative, commutative operations laid out this way.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Add,
    Max,
    Min,
}

impl Kind {
    /// The operands of `n` when it is an operation of this kind.
    fn operands(self, n: &Node) -> Option<&[TermId]> {
        match (self, n) {
            (Kind::Add, Node::Add(ops))
            | (Kind::Max, Node::Max(ops))
            | (Kind::Min, Node::Min(ops)) => Some(ops),
            _ => None,
        }
    }
}

/// One printed part of a sum.
pub(super) enum Part {
    /// An operand printed as it is.
    One(TermId),
    /// `Σ_{k<count} body`, where `labels` gives the text of each input of
    /// `body` whose coordinates vary with `k`.
    Fold {
        body: TermId,
        count: usize,
        labels: HashMap<TermId, String>,
    },
}

/// The shape of a small operand: its nodes in pre-order with the inputs
/// abstracted (`skeleton`), and the inputs in the same order with their
/// coordinates.
struct Shape {
    skeleton: Vec<u64>,
    inputs: Vec<(TermId, u32, Vec<u64>)>,
}

/// Lays out the operands of a sum (`fold`: whether runs may be folded).
/// Lays out the operands of a sum (or maximum, minimum). `outer`: inside
/// the body of an enclosing fold, the labels it gives (a nested fold may
/// not vary an input the enclosing one varies); `k`: this fold's index.
pub(super) fn arrange(
    terms: &Terms,
    leads: &mut Leads,
    kind: Kind,
    ops: &[TermId],
    outer: Option<&HashMap<TermId, String>>,
    k: &str,
) -> Vec<Part> {
    let mut ops: Vec<_> = splice(terms, kind, ops)
        .into_iter()
        .map(|o| (order_key(terms, leads, o), o))
        .collect();
    // Operands without inputs (constants) go last; the sort is stable.
    ops.sort_by(|(a, _), (b, _)| (a.is_empty(), a).cmp(&(b.is_empty(), b)));
    let ops: Vec<TermId> = ops.into_iter().map(|(_, o)| o).collect();
    if ops.len() < MIN_FOLD {
        return ops.into_iter().map(Part::One).collect();
    }
    let shapes: Vec<Option<Shape>> = ops.iter().map(|&o| shape(terms, leads, o)).collect();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ops.len() {
        let end = run_end(&shapes, i);
        if end - i >= MIN_FOLD
            && let Some(labels) = labels(terms, &shapes, i, k)
            && outer.is_none_or(|o| labels.keys().all(|id| !o.contains_key(id)))
        {
            parts.push(Part::Fold {
                body: ops[i],
                count: end - i,
                labels,
            });
            i = end;
        } else {
            parts.push(Part::One(ops[i]));
            i += 1;
        }
    }
    parts
}

/// Operands of a sum with nested sums spliced in: `(a + b) + (c + d)` is
/// laid out as `a + b + c + d` (the same real number, and what the infix
/// text says anyway); likewise `max(max(a, b), c)` as `max(a, b, c)`. A reduction tree then reads as one sum in index
/// order. Splicing stops at [`SPLICE_LIMIT`] operands (a shared sub-sum
/// can repeat exponentially often; the printer cuts long output anyway).
fn splice(terms: &Terms, kind: Kind, ops: &[TermId]) -> Vec<TermId> {
    let mut flat = Vec::with_capacity(ops.len());
    let mut stack: Vec<TermId> = ops.iter().rev().copied().collect();
    while let Some(o) = stack.pop() {
        match kind.operands(terms.node(o)) {
            Some(inner) if flat.len() + stack.len() + inner.len() <= SPLICE_LIMIT => {
                stack.extend(inner.iter().rev());
            }
            _ => flat.push(o),
        }
    }
    flat
}

/// Operands a sum is spliced into for printing, at most.
const SPLICE_LIMIT: usize = 1 << 20;

/// The first input element (by tensor, then flat index) each term reads:
/// the key that puts a sum's operands in index order. Memoised per printed
/// term, so a deep or shared term is walked once.
#[derive(Default)]
pub(super) struct Leads(HashMap<TermId, Option<(u32, u64)>>, HashMap<TermId, u64>);

impl Leads {
    /// Nodes of `t` counted as a tree (shared sub-terms as often as they
    /// occur), saturating.
    fn tree_size(&mut self, terms: &Terms, t: TermId) -> u64 {
        if let Some(&n) = self.1.get(&t) {
            return n;
        }
        let mut stack = vec![(t, false)];
        while let Some((u, ready)) = stack.pop() {
            if self.1.contains_key(&u) {
                continue;
            }
            let node = terms.node(u);
            if ready {
                let n = node
                    .children()
                    .fold(1u64, |a, c| a.saturating_add(self.1[&c]));
                self.1.insert(u, n);
            } else {
                stack.push((u, true));
                stack.extend(
                    node.children()
                        .filter(|c| !self.1.contains_key(c))
                        .map(|c| (c, false)),
                );
            }
        }
        self.1[&t]
    }

    pub(super) fn of(&mut self, terms: &Terms, t: TermId) -> Option<(u32, u64)> {
        match terms.node(t) {
            // Leaves need no memo (most operands of a long sum are these).
            Node::Input { tensor, index } | Node::IntInput { tensor, index, .. } => {
                return Some((*tensor, *index));
            }
            n if n.children().next().is_none() => return None,
            _ => {}
        }
        if let Some(&l) = self.0.get(&t) {
            return l;
        }
        // Iterative post-order: a node's lead is the least of its
        // children's (an input is its own).
        let mut stack = vec![(t, false)];
        while let Some((u, ready)) = stack.pop() {
            if self.0.contains_key(&u) {
                continue;
            }
            let node = terms.node(u);
            if ready {
                let l = node.children().filter_map(|c| self.lookup(terms, c)).min();
                self.0.insert(u, l);
            } else {
                stack.push((u, true));
                stack.extend(
                    node.children()
                        .filter(|&c| terms.node(c).children().next().is_some())
                        .filter(|c| !self.0.contains_key(c))
                        .map(|c| (c, false)),
                );
            }
        }
        self.0[&t]
    }

    /// The lead of a leaf, or of an inner node already walked.
    fn lookup(&self, terms: &Terms, c: TermId) -> Option<(u32, u64)> {
        match terms.node(c) {
            Node::Input { tensor, index } | Node::IntInput { tensor, index, .. } => {
                Some((*tensor, *index))
            }
            n if n.children().next().is_none() => None,
            _ => self.0[&c],
        }
    }
}

/// The shape of `t`, or `None` when it has more than [`SHAPE_NODES`]
/// nodes (counted as a tree) or reads no tensor element.
fn shape(terms: &Terms, leads: &mut Leads, t: TermId) -> Option<Shape> {
    let mut s = Shape {
        skeleton: Vec::new(),
        inputs: Vec::new(),
    };
    let mut stack = vec![t];
    while let Some(u) = stack.pop() {
        if s.skeleton.len() >= SHAPE_NODES {
            return None;
        }
        let mut h = DefaultHasher::new();
        match terms.node(u) {
            Node::Input { tensor, index } | Node::IntInput { tensor, index, .. }
                if !terms.is_scalar_input(*tensor) =>
            {
                (0u8, *tensor, matches!(terms.node(u), Node::IntInput { .. })).hash(&mut h);
                s.inputs
                    .push((u, *tensor, terms.input_coords(*tensor, *index)));
            }
            _ if u != t && leads.tree_size(terms, u) > SUBTREE => {
                (2u8, opaque_identity(terms, u)).hash(&mut h);
            }
            n => {
                (1u8, n.map_children(|_| TermId::from_raw(0))).hash(&mut h);
                // Children pushed in reverse so they pop in order; the
                // operands of a commutative node in index order, so that
                // `a[2,0] * b[0,3]` and `b[1,3] * a[2,1]` (stored by hash)
                // line up.
                let mut kids: Vec<TermId> = n.children().collect();
                if commutative(n) {
                    // By kind first: `x[0] - m` and `x[27] - m` must line
                    // up although `m`'s least input ties with `x[0]`.
                    kids.sort_by_cached_key(|&c| {
                        let l = order_key(terms, leads, c);
                        (kind_of(terms, c), l.is_empty(), l)
                    });
                }
                stack.extend(kids.into_iter().rev());
            }
        }
        s.skeleton.push(h.finish());
    }
    (!s.inputs.is_empty()).then_some(s)
}

/// What a large sub-term is compared by in a fold's shape: its id, except
/// that a sum, maximum or minimum is taken as the set of its spliced
/// operands — the lanes of a butterfly reduction each build the same
/// maximum in a different association order (different nodes, the same
/// printed `max_{k<128} x[k]`).
fn opaque_identity(terms: &Terms, t: TermId) -> Vec<u32> {
    let kind = match terms.node(t) {
        Node::Add(_) => Kind::Add,
        Node::Max(_) => Kind::Max,
        Node::Min(_) => Kind::Min,
        _ => return vec![t.raw()],
    };
    let mut ids: Vec<u32> = splice(terms, kind, &[t]).iter().map(|o| o.raw()).collect();
    ids.sort_unstable();
    ids.push(kind as u32);
    ids
}

/// A node's kind for ordering operands: its variant and own data, not its
/// children (an input: its tensor).
fn kind_of(terms: &Terms, t: TermId) -> u64 {
    let mut h = DefaultHasher::new();
    match terms.node(t) {
        Node::Input { tensor, .. } | Node::IntInput { tensor, .. } => (0u8, *tensor).hash(&mut h),
        n => (1u8, n.map_children(|_| TermId::from_raw(0))).hash(&mut h),
    }
    h.finish()
}

/// Nodes whose operand order is the store's (by hash), not the program's.
fn commutative(n: &Node) -> bool {
    matches!(
        n,
        Node::Add(_)
            | Node::Mul(_)
            | Node::Max(_)
            | Node::Min(_)
            | Node::And(_)
            | Node::Or(_)
            | Node::Xor(_)
            | Node::IntAdd(..)
            | Node::IntMul(..)
    )
}

/// Step of the coordinates of every input from operand `a` to operand `b`
/// (same skeleton and tensors), or `None` when they do not line up.
fn step(a: &Shape, b: &Shape) -> Option<Vec<Vec<i128>>> {
    if a.skeleton != b.skeleton || a.inputs.len() != b.inputs.len() {
        return None;
    }
    a.inputs
        .iter()
        .zip(&b.inputs)
        .map(|((_, ta, ca), (_, tb, cb))| {
            (ta == tb && ca.len() == cb.len()).then(|| {
                ca.iter()
                    .zip(cb)
                    .map(|(&x, &y)| i128::from(y) - i128::from(x))
                    .collect()
            })
        })
        .collect()
}

/// End (exclusive) of the run of operands starting at `i` that advance by
/// one constant, nonzero step.
fn run_end(shapes: &[Option<Shape>], i: usize) -> usize {
    let Some(first) = &shapes[i] else {
        return i + 1;
    };
    let Some(Some(next)) = shapes.get(i + 1) else {
        return i + 1;
    };
    let Some(d) = step(first, next) else {
        return i + 1;
    };
    if d.iter().flatten().all(|&x| x == 0) {
        return i + 1;
    }
    let mut end = i + 2;
    while let (Some(Some(a)), Some(Some(b))) = (shapes.get(end - 1), shapes.get(end)) {
        if step(a, b).as_ref() != Some(&d) {
            break;
        }
        end += 1;
    }
    end
}

/// The label of each varying input of operand `i` with `k` in place of its
/// coordinates (`x[3,2 + k]`), or `None` when one input node would need two
/// different labels.
fn labels(
    terms: &Terms,
    shapes: &[Option<Shape>],
    i: usize,
    k: &str,
) -> Option<HashMap<TermId, String>> {
    let (Some(first), Some(next)) = (shapes[i].as_ref(), shapes.get(i + 1)?.as_ref()) else {
        return None;
    };
    let steps = step(first, next)?;
    let mut out: HashMap<TermId, String> = HashMap::new();
    for ((id, tensor, coords), d) in first.inputs.iter().zip(&steps) {
        let at: Vec<String> = coords
            .iter()
            .zip(d)
            .map(|(&c, &e)| affine(c, e, k))
            .collect();
        let name = match terms.tensor_names.get(*tensor as usize) {
            Some(n) => n.clone(),
            None => format!("x{tensor}"),
        };
        let label = format!("{name}[{}]", at.join(","));
        if let Some(old) = out.insert(*id, label.clone())
            && old != label
        {
            return None;
        }
    }
    Some(out)
}

/// The name of the index of a fold nested `depth` folds deep: `k`, `j`,
/// `i`, … skipping names of input tensors (attention kernels have a
/// tensor `k`).
pub(super) fn index_name(terms: &Terms, depth: usize) -> String {
    const NAMES: [&str; 8] = ["k", "j", "i", "l", "m", "n", "p", "r"];
    let free: Vec<&str> = NAMES
        .into_iter()
        .filter(|n| !terms.tensor_names.iter().any(|t| t == n))
        .collect();
    match free.get(depth) {
        Some(n) => (*n).to_string(),
        None => format!("k{depth}"),
    }
}

/// The key that orders a sum's operands: the least input each reads,
/// then (below unary wrappers such as `exp`) the least inputs of the first
/// node with several operands, in order — so `exp(x[27] - m)` comes
/// before `exp(x[99] - m)` although both read all of `m`.
pub(super) fn order_key(terms: &Terms, leads: &mut Leads, t: TermId) -> Vec<(u32, u64)> {
    let Some(first) = leads.of(terms, t) else {
        return Vec::new();
    };
    let mut key = vec![first];
    let mut u = t;
    loop {
        let kids: Vec<TermId> = terms.node(u).children().collect();
        match kids.len() {
            0 => break,
            1 => u = kids[0],
            _ => {
                let mut ls: Vec<(u32, u64)> =
                    kids.iter().filter_map(|&c| leads.of(terms, c)).collect();
                ls.sort_unstable();
                key.extend(ls.into_iter().take(KEY_LEADS));
                break;
            }
        }
    }
    key
}

/// Operand leads an ordering key holds beyond the first.
const KEY_LEADS: usize = 8;

/// Sub-terms larger than this (counted as a tree) are compared by
/// identity in a fold's shape, not walked: a shared `max` over a row is
/// the same node in every operand of a softmax denominator.
const SUBTREE: u64 = 128;

/// `c + e·k` written the short way: `5`, `k`, `4 + k`, `2*k`, `6 - 2*k`.
fn affine(c: u64, e: i128, k: &str) -> String {
    let k = match e.abs() {
        0 => return c.to_string(),
        1 => k.to_string(),
        m => format!("{m}*{k}"),
    };
    match (c, e < 0) {
        (0, false) => k,
        (0, true) => format!("-{k}"),
        (c, false) => format!("{c} + {k}"),
        (c, true) => format!("{c} - {k}"),
    }
}
