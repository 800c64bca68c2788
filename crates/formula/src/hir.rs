//! The resolved program: every name bound to what it denotes, every
//! expression checked for its kind (index integer, real, boolean), ready
//! to be instantiated per output element.
//!
//! Expressions live in one arena ([`Hir::nodes`]); a node knows its span,
//! its kind and the variables free in it (the key under which its value
//! is memoised during instantiation).

use num_rational::BigRational;

use crate::ast::{BinOp, ReduceOp, UnOp};
use crate::span::Span;

pub type NodeId = u32;
pub type VarId = u32;
pub type LetId = u32;
pub type FnId = u32;

/// What an expression evaluates to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer built from index variables, integer literals and integer
    /// scalars: usable as a subscript or bound, and as a real elsewhere.
    Int,
    Real,
    Bool,
}

/// The functions the language knows without a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Exp,
    Exp2,
    Log,
    Log2,
    Sqrt,
    Rsqrt,
    Tanh,
    Erf,
    Sin,
    Cos,
    Abs,
    Pow,
    Max,
    Min,
    Where,
}

impl Builtin {
    pub fn of(name: &str) -> Option<Builtin> {
        Some(match name {
            "exp" => Builtin::Exp,
            "exp2" => Builtin::Exp2,
            "log" => Builtin::Log,
            "log2" => Builtin::Log2,
            "sqrt" => Builtin::Sqrt,
            "rsqrt" => Builtin::Rsqrt,
            "tanh" => Builtin::Tanh,
            "erf" => Builtin::Erf,
            "sin" => Builtin::Sin,
            "cos" => Builtin::Cos,
            "abs" => Builtin::Abs,
            "pow" => Builtin::Pow,
            "max" => Builtin::Max,
            "min" => Builtin::Min,
            "where" => Builtin::Where,
            _ => return None,
        })
    }

    /// `(min, max)` number of arguments.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Pow => (2, 2),
            Builtin::Max | Builtin::Min => (2, usize::MAX),
            Builtin::Where => (3, 3),
            _ => (1, 1),
        }
    }
}

/// What a subscripted name refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Tensor number `k` of the context.
    Tensor(u32),
    Let(LetId),
}

/// A vector argument: a slice of a tensor or binding (one subscript open),
/// or a vector parameter of the enclosing function.
#[derive(Clone, Debug)]
pub enum VecRef {
    Slice {
        target: Target,
        /// `None` at the open axis.
        subs: Vec<Option<NodeId>>,
        /// The open axis and its range: `lo` (None = 0) and `hi` (None =
        /// the axis' extent).
        axis: usize,
        lo: Option<NodeId>,
        hi: Option<NodeId>,
        span: Span,
    },
    Param(VarId),
}

#[derive(Clone, Debug)]
pub enum Arg {
    Scalar(NodeId),
    Vector(VecRef),
}

#[derive(Clone, Debug)]
pub enum Node {
    Num(BigRational),
    /// `inf` (false) or `-inf` written as `-inf` folds through `Neg`.
    Inf,
    /// A variable of the current scope: an index, a reduction variable, a
    /// vector length, a scalar parameter.
    Var(VarId),
    /// Context scalar number `k`.
    Scalar(u32),
    /// `pi` (read through the decision procedure's constant recovery).
    Pi,
    Elem {
        target: Target,
        subs: Vec<NodeId>,
    },
    /// `v[k]` of a vector parameter.
    VecElem {
        var: VarId,
        sub: NodeId,
    },
    Call {
        f: FnId,
        args: Vec<Arg>,
        out: Option<NodeId>,
    },
    Builtin {
        f: Builtin,
        args: Vec<NodeId>,
    },
    Reduce {
        op: ReduceOp,
        var: VarId,
        lo: NodeId,
        hi: NodeId,
        body: NodeId,
    },
    Un(UnOp, NodeId),
    Bin(BinOp, NodeId, NodeId),
}

#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub node: Node,
    pub span: Span,
    pub kind: Kind,
    /// Variables free in the node, sorted (the memo key's parts).
    pub free: Vec<VarId>,
}

#[derive(Clone, Debug)]
pub struct LetDef {
    pub name: String,
    pub idx: Vec<VarId>,
    /// Declared extents (`let s[i in 0..N, …]`), per index; needed only
    /// to slice the binding with `:`.
    pub extents: Vec<Option<u64>>,
    pub body: NodeId,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ParamDef {
    Scalar(VarId),
    Vector { var: VarId, len: VarId },
}

#[derive(Clone, Debug)]
pub struct FnDef {
    pub name: String,
    pub params: Vec<ParamDef>,
    pub out: Option<VarId>,
    pub body: NodeId,
    pub span: Span,
}

/// The definition of one output tensor's elements.
#[derive(Clone, Debug)]
pub struct OutDef {
    pub tensor: u32,
    pub idx: Vec<VarId>,
    pub body: NodeId,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Hir {
    pub nodes: Vec<NodeInfo>,
    pub lets: Vec<LetDef>,
    pub fns: Vec<FnDef>,
    pub outs: Vec<OutDef>,
    /// Name of each variable (for messages).
    pub var_names: Vec<String>,
}

impl Hir {
    pub fn info(&self, n: NodeId) -> &NodeInfo {
        &self.nodes[n as usize]
    }
}
