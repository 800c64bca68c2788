//! The syntax tree of a formula program, as written (names unresolved).

use num_rational::BigRational;

use crate::span::Span;

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A whole formula text: bindings, function definitions and output
/// definitions, in order.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub items: Vec<Item>,
}

/// One top-level statement.
#[derive(Clone, Debug)]
pub enum Item {
    /// `let m[i] = e;` or `let c = e;`: a named, memoised sub-expression.
    Let {
        name: Ident,
        idx: Vec<Ident>,
        /// `let s[i in 0..M, j in 0..N]`: optional ranges per index (needed
        /// only to slice the binding with `:`).
        ranges: Vec<Option<(Expr, Expr)>>,
        value: Expr,
        span: Span,
    },
    /// `fn softmax(v[n])[j] = e;`: a function over scalars and vectors;
    /// `out` names the element index when it returns a vector.
    Fn {
        name: Ident,
        params: Vec<Param>,
        out: Option<Ident>,
        body: Expr,
        span: Span,
    },
    /// `y[i, j] = e;`: the value of every element of output tensor `y`.
    Def {
        tensor: Ident,
        idx: Vec<Ident>,
        value: Expr,
        span: Span,
    },
}

/// A function parameter: a scalar `a`, or a vector `v[n]` whose length is
/// bound to `n` inside the body.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub len: Option<Ident>,
}

/// An expression with its span.
#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// One subscript: an expression, or `:` (a whole axis: the subscripted
/// thing is then a vector).
#[derive(Clone, Debug)]
pub enum Sub {
    At(Expr),
    All(Span),
    /// `lo..hi`: part of an axis (a vector of `hi - lo` elements).
    Range(Expr, Expr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
}

impl ReduceOp {
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

/// `j in lo..hi` of a reduction.
#[derive(Clone, Debug)]
pub struct Binder {
    pub var: Ident,
    pub lo: Expr,
    pub hi: Expr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Pow => "^",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An exact rational literal (`0.1` is exactly 1/10).
    Num {
        value: BigRational,
        integer: bool,
    },
    Name(Ident),
    /// `base[subs]`: a tensor element, a binding's element, a vector's
    /// element, a slice (with `:`), or the element of a call's vector result.
    Index {
        base: Box<Expr>,
        subs: Vec<Sub>,
    },
    /// `f(args)`: a builtin, a prelude or user function.
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
    /// `sum(j in 0..N, k in 0..M, e)`.
    Reduce {
        op: ReduceOp,
        op_span: Span,
        binders: Vec<Binder>,
        body: Box<Expr>,
    },
    Unary {
        op: UnOp,
        e: Box<Expr>,
    },
    Binary {
        op: BinOp,
        l: Box<Expr>,
        r: Box<Expr>,
    },
}
