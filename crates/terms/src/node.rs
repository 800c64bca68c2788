//! The node set of the term DAG.
//!
//! The operators are those of docs/semantics.md §5: rational constants, ±inf,
//! input symbols, n-ary `+`/`·`, reciprocal, `exp`, uninterpreted
//! function atoms, n-ary `max`/`min`, and a small boolean layer
//! (constants, comparisons, connectives) that exists to express piecewise
//! values (`select`) — plus C's `pow(x, y)`, the one binary function (a
//! recognised `powf`). Negation and subtraction are not nodes: `-a` is `(-1)·a`,
//! `a - b` is `a + (-1)·b`, `a / b` is `a · recip(b)` — fewer node kinds
//! mean fewer spellings of the same value.
//!
//! Children are [`TermId`]s of the same store. In an interned node they are
//! in canonical order (see `Terms` for the invariants), which is what makes
//! structural equality of nodes coincide with equality up to the
//! canonicalisations the store performs.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::intop::{IntCmpOp, IntFn, IntTy};
use crate::rat::Rat;

/// Handle of an interned term. Only meaningful for the store that made it
/// (or, inside a [`crate::TermGraph`], as an index into its node list).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TermId(pub(crate) u32);

impl TermId {
    /// Dense index (0-based, in creation order) — for side tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The raw number.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The id with raw number `raw` — meaningful only for a store that
    /// has made that many terms (a placeholder origin, a side table).
    pub const fn from_raw(raw: u32) -> TermId {
        TermId(raw)
    }
}

impl fmt::Display for TermId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// Operand list of an n-ary node; three fit inline, which covers the
/// overwhelmingly common binary/ternary nodes without a heap allocation
/// (see `operands.rs`: 16 bytes, so that a `Node` is 24).
pub use crate::operands::Operands;

/// Comparison over the extended reals (a total order: no NaN).
///
/// Interned `Cmp` nodes only use `Eq`, `Ne`, `Lt`, `Le`: `a > b` is stored
/// as `b < a` and `a >= b` as `b <= a`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The infix spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Whether `a op b` holds, given `a.cmp(b)`.
    pub fn holds(self, ord: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            CmpOp::Eq => ord == Equal,
            CmpOp::Ne => ord != Equal,
            CmpOp::Lt => ord == Less,
            CmpOp::Le => ord != Greater,
            CmpOp::Gt => ord == Greater,
            CmpOp::Ge => ord != Less,
        }
    }
}

/// Uninterpreted function atoms (docs/semantics.md §5). `Log` is the natural
/// logarithm; `Ex2`/`Lg2` are base-2 and kept as their own atoms for now
/// (rewriting `ex2(y)` to `exp(y·ln 2)` with constant recovery is the
/// decision procedure's job).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Func {
    Log,
    Sqrt,
    Sin,
    Cos,
    Tanh,
    Erf,
    Ex2,
    Lg2,
}

impl Func {
    pub fn name(self) -> &'static str {
        match self {
            Func::Log => "log",
            Func::Sqrt => "sqrt",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tanh => "tanh",
            Func::Erf => "erf",
            Func::Ex2 => "ex2",
            Func::Lg2 => "lg2",
        }
    }

    /// Evaluation in `f64` (used by `eval_f64`).
    pub fn eval_f64(self, x: f64) -> f64 {
        match self {
            Func::Log => x.ln(),
            Func::Sqrt => x.sqrt(),
            Func::Sin => x.sin(),
            Func::Cos => x.cos(),
            Func::Tanh => x.tanh(),
            Func::Erf => libm::erf(x),
            Func::Ex2 => x.exp2(),
            Func::Lg2 => x.log2(),
        }
    }
}

/// One node of the DAG. See the module docs for what is (not) a node, and
/// `Terms` for the canonical-form invariants of interned nodes.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Node {
    /// An exact rational constant.
    Const(Rat),
    /// `+inf` of the extended reals.
    PosInf,
    /// `-inf` of the extended reals.
    NegInf,
    /// Element `index` (flat, row-major) of input tensor number `tensor`:
    /// an unknown finite real.
    Input { tensor: u32, index: u64 },
    /// Sum of at least two operands.
    Add(Operands),
    /// Product of at least two operands.
    Mul(Operands),
    /// `1 / a` (undefined at 0 — see the crate docs).
    Recip(TermId),
    /// `e^a`.
    Exp(TermId),
    /// An uninterpreted function of one argument.
    Func(Func, TermId),
    /// `base^exponent`, C's `pow` over the reals: for a negative base
    /// real only at integer exponents. Interned only when neither
    /// operand is a rational constant the constructor rewrites (see
    /// `Terms::pow`); the normal form treats the rest as an atom.
    Pow(TermId, TermId),
    /// Maximum of at least two operands.
    Max(Operands),
    /// Minimum of at least two operands.
    Min(Operands),
    /// `true` / `false`.
    BoolConst(bool),
    /// A comparison of two real terms (only `Eq`, `Ne`, `Lt`, `Le` occur).
    Cmp(CmpOp, TermId, TermId),
    /// Boolean negation (never of a comparison or a constant).
    Not(TermId),
    /// Conjunction of at least two booleans.
    And(Operands),
    /// Disjunction of at least two booleans.
    Or(Operands),
    /// Exclusive or (parity) of at least two booleans.
    Xor(Operands),
    /// `cond ? then : else` — `cond` is boolean; the branches are both real,
    /// both boolean, or both integers of one width.
    Select(TermId, TermId, TermId),
    /// An uninterpreted function symbol applied to real arguments (in
    /// call order; see [`crate::uninterpreted`]). Boxed: rare, and it
    /// keeps `Node` small.
    Apply(Box<Application>),

    // Integer data (`intop.rs`): an integer term of width `w` (1..=64) is
    // an element of the ring Z/2^w, the value of a `w`-bit register.
    /// An integer constant `v < 2^w`.
    IntConst { w: u8, v: u64 },
    /// Element `index` of integer input tensor number `tensor`: an
    /// integer in `ty`'s range, as an element of Z/2^(ty.bits).
    IntInput { tensor: u32, index: u64, ty: IntTy },
    /// Sum modulo 2^w of at least two operands of width `w`.
    IntAdd(u8, Operands),
    /// Product modulo 2^w of at least two operands of width `w`.
    IntMul(u8, Operands),
    /// Any other integer operation, with a result of width `w` (its
    /// operands' widths are their own; see [`IntFn`]).
    IntOp(IntFn, u8, Operands),
    /// A comparison of two integers of one width (only `Eq`, `Ne`, `Lt`,
    /// `Le` occur; signedness is part of the operator).
    IntCmp(IntCmpOp, TermId, TermId),
    /// The real value of an integer read as signed (`true`) or unsigned
    /// two's complement: `cvt.rn.f32.s32` of integer data.
    IntToReal(bool, TermId),
}

/// The payload of [`Node::Apply`]: `name(args…)`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Application {
    pub name: Box<str>,
    pub args: Operands,
}

impl Node {
    /// The children, in stored order (`Cmp`: lhs, rhs; `Select`: cond,
    /// then, else).
    pub fn children(&self) -> Children<'_> {
        let none = TermId(0);
        let (fixed, fixed_len, rest): ([TermId; 3], u8, &[TermId]) = match self {
            Node::Const(_)
            | Node::PosInf
            | Node::NegInf
            | Node::Input { .. }
            | Node::BoolConst(_)
            | Node::IntConst { .. }
            | Node::IntInput { .. } => ([none; 3], 0, &[]),
            Node::IntAdd(_, ops) | Node::IntMul(_, ops) | Node::IntOp(_, _, ops) => {
                ([none; 3], 0, ops)
            }
            Node::IntCmp(_, a, b) => ([*a, *b, none], 2, &[]),
            Node::IntToReal(_, a) => ([*a, none, none], 1, &[]),
            Node::Add(ops)
            | Node::Mul(ops)
            | Node::Max(ops)
            | Node::Min(ops)
            | Node::And(ops)
            | Node::Or(ops)
            | Node::Xor(ops) => ([none; 3], 0, ops),
            Node::Apply(app) => ([none; 3], 0, &app.args),
            Node::Recip(a) | Node::Exp(a) | Node::Func(_, a) | Node::Not(a) => {
                ([*a, none, none], 1, &[])
            }
            Node::Cmp(_, a, b) | Node::Pow(a, b) => ([*a, *b, none], 2, &[]),
            Node::Select(c, a, b) => ([*c, *a, *b], 3, &[]),
        };
        Children {
            fixed,
            fixed_len,
            pos: 0,
            rest: rest.iter(),
        }
    }

    /// The same node with every child replaced by `f(child)`.
    pub fn map_children(&self, mut f: impl FnMut(TermId) -> TermId) -> Node {
        let map = |ops: &Operands, f: &mut dyn FnMut(TermId) -> TermId| -> Operands {
            ops.iter().map(|&t| f(t)).collect()
        };
        match self {
            Node::Const(_)
            | Node::PosInf
            | Node::NegInf
            | Node::Input { .. }
            | Node::BoolConst(_)
            | Node::IntConst { .. }
            | Node::IntInput { .. } => self.clone(),
            Node::IntAdd(w, ops) => Node::IntAdd(*w, map(ops, &mut f)),
            Node::IntMul(w, ops) => Node::IntMul(*w, map(ops, &mut f)),
            Node::IntOp(g, w, ops) => Node::IntOp(*g, *w, map(ops, &mut f)),
            Node::IntCmp(op, a, b) => {
                let a = f(*a);
                Node::IntCmp(*op, a, f(*b))
            }
            Node::IntToReal(s, a) => Node::IntToReal(*s, f(*a)),
            Node::Add(ops) => Node::Add(map(ops, &mut f)),
            Node::Mul(ops) => Node::Mul(map(ops, &mut f)),
            Node::Max(ops) => Node::Max(map(ops, &mut f)),
            Node::Min(ops) => Node::Min(map(ops, &mut f)),
            Node::And(ops) => Node::And(map(ops, &mut f)),
            Node::Or(ops) => Node::Or(map(ops, &mut f)),
            Node::Xor(ops) => Node::Xor(map(ops, &mut f)),
            Node::Apply(app) => Node::Apply(Box::new(Application {
                name: app.name.clone(),
                args: map(&app.args, &mut f),
            })),
            Node::Recip(a) => Node::Recip(f(*a)),
            Node::Exp(a) => Node::Exp(f(*a)),
            Node::Func(g, a) => Node::Func(*g, f(*a)),
            Node::Not(a) => Node::Not(f(*a)),
            Node::Pow(a, b) => {
                let a = f(*a);
                Node::Pow(a, f(*b))
            }
            Node::Cmp(op, a, b) => {
                let a = f(*a);
                Node::Cmp(*op, a, f(*b))
            }
            Node::Select(c, a, b) => {
                let c = f(*c);
                let a = f(*a);
                Node::Select(c, a, f(*b))
            }
        }
    }
}

impl Node {
    /// Replaces every child by `f(child)` in place (no allocation: the
    /// operand lists are reused), visiting children in stored order.
    pub(crate) fn map_children_in_place(&mut self, mut f: impl FnMut(TermId) -> TermId) {
        match self {
            Node::Const(_)
            | Node::PosInf
            | Node::NegInf
            | Node::Input { .. }
            | Node::BoolConst(_)
            | Node::IntConst { .. }
            | Node::IntInput { .. } => {}
            Node::IntAdd(_, ops)
            | Node::IntMul(_, ops)
            | Node::IntOp(_, _, ops)
            | Node::Add(ops)
            | Node::Mul(ops)
            | Node::Max(ops)
            | Node::Min(ops)
            | Node::And(ops)
            | Node::Or(ops)
            | Node::Xor(ops) => ops.iter_mut().for_each(|t| *t = f(*t)),
            Node::Apply(app) => app.args.iter_mut().for_each(|t| *t = f(*t)),
            Node::IntToReal(_, a)
            | Node::Recip(a)
            | Node::Exp(a)
            | Node::Func(_, a)
            | Node::Not(a) => *a = f(*a),
            Node::IntCmp(_, a, b) | Node::Cmp(_, a, b) | Node::Pow(a, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Node::Select(c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
            }
        }
    }
}

/// Iterator over a node's children (see [`Node::children`]).
#[derive(Clone, Debug)]
pub struct Children<'a> {
    fixed: [TermId; 3],
    fixed_len: u8,
    pos: u8,
    rest: std::slice::Iter<'a, TermId>,
}

impl Iterator for Children<'_> {
    type Item = TermId;

    fn next(&mut self) -> Option<TermId> {
        if self.pos < self.fixed_len {
            let t = self.fixed[self.pos as usize];
            self.pos += 1;
            return Some(t);
        }
        self.rest.next().copied()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.fixed_len - self.pos) as usize + self.rest.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Children<'_> {}
