//! The term store: hash-consing and inspection.
//!
//! Every node is interned once: `nodes[i]` is the node of `TermId(i)`,
//! `hashes[i]` its structural hash (computed at intern time from the
//! children's hashes), `flags[i]` derived facts (is it boolean, may it
//! be infinite, is it a constant, is it a constant-led product). A raw
//! hash table keyed by the structural hash maps a node to its id; lookups
//! compare candidate nodes structurally, so equal ids mean equal terms and
//! a hash collision can never merge two different terms.
//!
//! Canonical-form invariants of interned nodes (upheld by the constructors
//! in `build/`, relied on by equality-by-construction and by `import`):
//! - n-ary operands are sorted by `(hash, id)`, except that the single
//!   folded constant of an `Add`/`Mul`/`Max`/`Min` (if any) comes first;
//! - `Cmp` only uses `Eq`/`Ne`/`Lt`/`Le`, and `Eq`/`Ne` operands are sorted;
//! - constructors are idempotent: rebuilding an interned node from its own
//!   children through the matching constructor returns the same id.

use hashbrown::HashMap;
use num_rational::BigRational;

use crate::hash::hash_node;
use crate::node::{Node, TermId};
use crate::rat::Rat;
use crate::table::{IdTable, Probe};

pub(crate) const FLAG_BOOL: u8 = 1;
pub(crate) const FLAG_MAYBE_INF: u8 = 2;
/// The node is a `Const` (lets operand scans skip loading the node).
pub(crate) const FLAG_CONST: u8 = 4;
/// The node is a finite `Mul` whose first operand is a constant: a
/// summand `c · base` with its own base key (see `base_key`).
pub(crate) const FLAG_SCALED: u8 = 8;
/// The node is integer-valued (`IntConst`, `IntInput`, `IntAdd`, ..., or
/// a `Select` of integers): an element of Z/2^w for its width `w`.
pub(crate) const FLAG_INT: u8 = 16;

/// The store of hash-consed terms. Single-threaded (build on one thread,
/// share `&Terms` for reading); `Clone` copies everything.
#[derive(Clone, Default)]
pub struct Terms {
    pub(crate) nodes: Vec<Node>,
    pub(crate) hashes: Vec<u128>,
    pub(crate) flags: Vec<u8>,
    /// Ids keyed by their structural hash (`table.rs`): a probe is one
    /// cache line and rejects almost every non-matching candidate by 32
    /// further hash bits kept in the slot, without loading its node.
    table: IdTable,
    /// The `BigRational` value of every small `Const` node, so that
    /// `as_rational` can hand out a reference (big constants hold theirs).
    small_bigs: HashMap<u32, BigRational>,
    pub(crate) tensor_names: Vec<String>,
    /// Shapes of the input tensors, by tensor number, so that `display`
    /// prints an element by its coordinates (`x[0,41]`, not `x[41]`).
    pub(crate) tensor_shapes: Vec<Vec<u64>>,
    /// Input numbers from here on are scalars (symbolic spec scalars such
    /// as `alpha`): they print without an index. `None`: no scalars.
    pub(crate) first_scalar: Option<u32>,
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terms")
            .field("nodes", &self.nodes.len())
            .field("tensor_names", &self.tensor_names)
            .finish_non_exhaustive()
    }
}

/// The most entries [`Terms::reserve`] sizes the intern table for up front
/// (2^25 slots, 256 MiB, at its 3/4 load).
const TABLE_RESERVE_CAP: usize = 1 << 24;

impl Terms {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reserves room for `additional` more nodes (avoids rehashing while
    /// a large kernel's terms are built, and copying the node columns when
    /// they outgrow their allocation: a column of tens of millions of
    /// nodes copied by `realloc` is briefly resident twice). The columns are written in id
    /// order, so capacity no node reaches stays virtual memory; the intern
    /// table is written at random, so every reserved slot becomes
    /// resident — it is reserved for at most [`TABLE_RESERVE_CAP`] entries
    /// and grows past that by itself.
    pub fn reserve(&mut self, additional: usize) {
        self.reserve_split(additional, additional);
    }

    /// Reserves the node columns for `columns` more nodes and the intern
    /// table for `table` more entries: for a node estimate that may be
    /// generous (column capacity no node reaches stays address space)
    /// beside a tighter one for the table, whose reserved slots become
    /// resident as they are written at random. One call: growing a
    /// column's reservation again copies its whole old capacity (`realloc`
    /// moves the allocation, touched or not), which would make the
    /// untouched capacity resident.
    pub fn reserve_split(&mut self, columns: usize, table: usize) {
        self.nodes.reserve(columns);
        self.hashes.reserve(columns);
        self.flags.reserve(columns);
        self.table
            .reserve(table.min(TABLE_RESERVE_CAP), &self.hashes);
    }

    /// Number of interned nodes (callers enforce their resource limits
    /// against it).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every id of the store, in creation order (children before parents).
    pub fn ids(&self) -> impl ExactSizeIterator<Item = TermId> + use<> {
        (0..self.nodes.len() as u32).map(TermId)
    }

    /// The node of `t`.
    ///
    /// `t` must come from this store (a foreign id is a programming error
    /// and panics on the index).
    pub fn node(&self, t: TermId) -> &Node {
        &self.nodes[t.index()]
    }

    /// Structural 128-bit hash of `t`: a function of the term alone, equal
    /// across stores and build orders (see `hash.rs`).
    pub fn hash128(&self, t: TermId) -> u128 {
        self.hashes[t.index()]
    }

    /// The exact value of a constant term.
    pub fn as_rational(&self, t: TermId) -> Option<&BigRational> {
        match self.node(t) {
            Node::Const(r) => r.big_ref().or_else(|| self.small_bigs.get(&t.0)),
            _ => None,
        }
    }

    /// The exact value of a constant term, in the store's own
    /// representation (no allocation).
    pub fn as_rat(&self, t: TermId) -> Option<&Rat> {
        match self.node(t) {
            Node::Const(r) => Some(r),
            _ => None,
        }
    }

    /// The value of a boolean constant.
    pub fn as_bool(&self, t: TermId) -> Option<bool> {
        match self.node(t) {
            Node::BoolConst(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether `t` is boolean-valued (as opposed to real-valued).
    pub fn is_bool(&self, t: TermId) -> bool {
        self.flags[t.index()] & FLAG_BOOL != 0
    }

    /// Whether `t` is integer-valued (see [`Terms::int_width`]).
    pub fn is_int(&self, t: TermId) -> bool {
        self.flags[t.index()] & FLAG_INT != 0
    }

    /// The width `w` of an integer term (an element of Z/2^w); `None` for
    /// a real or boolean term.
    pub fn int_width(&self, t: TermId) -> Option<u8> {
        let mut t = t;
        // Selects nest only through their branches; each step is a child.
        loop {
            if !self.is_int(t) {
                return None;
            }
            match &self.nodes[t.index()] {
                Node::IntConst { w, .. }
                | Node::IntAdd(w, _)
                | Node::IntMul(w, _)
                | Node::IntOp(_, w, _) => return Some(*w),
                Node::IntInput { ty, .. } => return Some(ty.bits),
                Node::Select(_, a, _) => t = *a,
                _ => return None,
            }
        }
    }

    /// Whether `t` may take the value ±inf: it contains `PosInf`/`NegInf`
    /// somewhere a `max`/`min`/`select` can let through. Inputs are finite
    /// reals, so a term built from inputs and finite constants is never
    /// infinite. Conservative (a `false` is a guarantee).
    pub fn maybe_infinite(&self, t: TermId) -> bool {
        self.flags[t.index()] & FLAG_MAYBE_INF != 0
    }

    /// Names for input tensors, by tensor number, used by `display`
    /// (`x[3]`); tensors without a name print as `x0[3]`, `x1[3]`, ...
    pub fn set_tensor_names(&mut self, names: Vec<String>) {
        self.tensor_names = names;
    }

    pub fn tensor_names(&self) -> &[String] {
        &self.tensor_names
    }

    /// Shapes of the input tensors, by tensor number (row-major): `display`
    /// prints elements of a tensor of two or more dimensions by their
    /// coordinates. A tensor without a shape prints its flat index.
    pub fn set_tensor_shapes(&mut self, shapes: Vec<Vec<u64>>) {
        self.tensor_shapes = shapes;
    }

    /// The coordinates of flat element `index` of input `tensor` (row-major
    /// over its shape), or `[index]` where no shape of two or more
    /// dimensions is known or the index lies outside it.
    pub fn input_coords(&self, tensor: u32, index: u64) -> Vec<u64> {
        let shape = self
            .tensor_shapes
            .get(tensor as usize)
            .map_or(&[][..], |s| s);
        let total = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        if shape.len() < 2 || shape.contains(&0) || total.is_none_or(|t| index >= t) {
            return vec![index];
        }
        let mut rest = index;
        let mut coords = vec![0u64; shape.len()];
        for (c, &d) in coords.iter_mut().zip(shape).rev() {
            *c = rest % d;
            rest /= d;
        }
        coords
    }

    /// Whether input `tensor` is a symbolic scalar (printed by name alone).
    pub(crate) fn is_scalar_input(&self, tensor: u32) -> bool {
        self.first_scalar.is_some_and(|f| tensor >= f)
    }

    /// Input numbers `first..` are scalars, one element each (symbolic spec
    /// scalars): `display` prints them by name alone (`alpha`, not
    /// `alpha[0]`).
    pub fn set_scalar_inputs(&mut self, first: u32) {
        self.first_scalar = Some(first);
    }

    /// How an input element is written: `x[3]`, `alpha` for a scalar,
    /// `x0[3]` for an unnamed tensor.
    pub fn input_label(&self, tensor: u32, index: u64) -> String {
        let at = || {
            let c: Vec<String> = self
                .input_coords(tensor, index)
                .iter()
                .map(u64::to_string)
                .collect();
            c.join(",")
        };
        match self.tensor_names.get(tensor as usize) {
            Some(n) if self.is_scalar_input(tensor) => n.clone(),
            Some(n) => format!("{n}[{}]", at()),
            None => format!("x{tensor}[{}]", at()),
        }
    }

    /// The flags a node gets from its kind and its children.
    fn flags_of(&self, node: &Node) -> u8 {
        let child_inf = |ts: &mut dyn Iterator<Item = TermId>| {
            let mut any = false;
            for t in ts {
                any |= self.flags[t.index()] & FLAG_MAYBE_INF != 0;
            }
            any
        };
        match node {
            Node::PosInf | Node::NegInf => FLAG_MAYBE_INF,
            Node::Const(_) => FLAG_CONST,
            Node::Input { .. } => 0,
            Node::BoolConst(_)
            | Node::Cmp(..)
            | Node::Not(_)
            | Node::And(_)
            | Node::Or(_)
            | Node::Xor(_) => FLAG_BOOL,
            Node::IntConst { .. }
            | Node::IntInput { .. }
            | Node::IntAdd(..)
            | Node::IntMul(..)
            | Node::IntOp(..) => FLAG_INT,
            Node::IntCmp(..) => FLAG_BOOL,
            Node::IntToReal(..) => 0,
            Node::Select(_, a, b) => {
                let mut f = self.flags[a.index()] & (FLAG_BOOL | FLAG_INT);
                if child_inf(&mut [*a, *b].into_iter()) {
                    f |= FLAG_MAYBE_INF;
                }
                f
            }
            Node::Mul(ops) => {
                if child_inf(&mut node.children()) {
                    FLAG_MAYBE_INF
                } else if matches!(self.nodes[ops[0].index()], Node::Const(_)) {
                    FLAG_SCALED
                } else {
                    0
                }
            }
            Node::Add(_)
            | Node::Max(_)
            | Node::Min(_)
            | Node::Recip(_)
            | Node::Exp(_)
            | Node::Func(..)
            | Node::Pow(..)
            | Node::Apply(_) => {
                if child_inf(&mut node.children()) {
                    FLAG_MAYBE_INF
                } else {
                    0
                }
            }
        }
    }

    /// Interns `node` exactly as given (no canonicalisation — that is the
    /// constructors' job) and returns its id.
    pub(crate) fn intern(&mut self, node: Node) -> TermId {
        let h = hash_node(&node, &self.hashes);
        // 2^32 - 1 nodes would need far more memory than any machine this
        // runs on has (> 100 GiB); callers bound the store via `len()`.
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&i| i < u32::MAX)
            .expect("term store exceeds 2^32 - 1 nodes");
        self.table.reserve(1, &self.hashes);
        let nodes = &self.nodes;
        let at = match self.table.find(h, |i| nodes[i as usize] == node) {
            Probe::Found(i) => return TermId(i),
            Probe::Vacant(at) => at,
        };
        self.table.insert_at(at, id, h);
        let flags = self.flags_of(&node);
        if let Node::Const(r) = &node
            && r.big_ref().is_none()
        {
            self.small_bigs.insert(id, r.to_big());
        }
        self.nodes.push(node);
        self.hashes.push(h);
        self.flags.push(flags);
        TermId(id)
    }

    /// The id of `node` (children ids of this store) when it is interned
    /// exactly as given.
    pub(crate) fn lookup(&self, node: &Node) -> Option<TermId> {
        if self.nodes.is_empty() {
            return None;
        }
        let h = hash_node(node, &self.hashes);
        let nodes = &self.nodes;
        match self.table.find(h, |i| nodes[i as usize] == *node) {
            Probe::Found(i) => Some(TermId(i)),
            Probe::Vacant(_) => None,
        }
    }

    /// Sort key of an operand in canonical order.
    pub(crate) fn key(&self, t: TermId) -> (u128, u32) {
        (self.hashes[t.index()], t.0)
    }

    /// Sorts operands into canonical order.
    pub(crate) fn sort_canonical(&self, ops: &mut [TermId]) {
        if ops.len() > 1 {
            ops.sort_by_key(|&t| self.key(t));
        }
    }
}
