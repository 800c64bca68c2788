//! The formula language: the intended math of an ML operator in index
//! notation, as a reference for a kernel.
//!
//! ```text
//! let m[i] = max(j in 0..N, x[i, j]);
//! y[i, j] = exp(x[i, j] - m[i]) / sum(k in 0..N, exp(x[i, k] - m[i]));
//! ```
//!
//! A formula names the spec's tensors and scalars. [`compile`] parses it
//! (with the [`PRELUDE`]'s operators: `softmax`, `layernorm`, `gelu`, …),
//! resolves every name and checks kinds, reporting located
//! [`Diagnostic`]s; an [`Instance`] then turns each output element into a
//! term over the input symbols — the same terms the symbolic executor
//! builds for a kernel — so kernel-vs-formula checks use the same
//! decision procedure as kernel-vs-kernel ones.
//!
//! Pipeline: `lexer` (tokens with spans) → `parser` (`ast`, error
//! recovery at `;`) → `resolve` (`hir`: names bound, kinds checked, free
//! variables per node) → `eval` (instantiation, memoised).

pub mod ast;
mod diag;
mod eval;
pub mod hir;
pub mod lexer;
pub mod lift;
pub mod lifted;
pub mod named;
pub mod parser;
pub mod recognise;
mod resolve;
pub mod span;

use num_rational::BigRational;
use ptxeq_terms::Terms;

pub use diag::{Diagnostic, render};
pub use eval::{DEFAULT_MAX_STEPS, Instance};
pub use span::Span;

/// The prelude's source (operators defined in the language itself).
pub const PRELUDE: &str = include_str!("prelude.ptxf");

/// A tensor the formula may name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDecl {
    pub name: String,
    /// The tensor number of its input symbols in the term store.
    pub id: u32,
    pub shape: Vec<u64>,
    /// Input or inout: the formula may read its values at launch.
    pub readable: bool,
    /// Output or inout: the formula may define it.
    pub writable: bool,
}

/// A scalar's value as the formula sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScalarValue {
    /// Usable in subscripts and ranges.
    Int(i64),
    Real(BigRational),
    /// A free real symbol: element 0 of input tensor `tensor`.
    Symbol {
        tensor: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarDecl {
    pub name: String,
    pub value: ScalarValue,
}

/// What a formula can refer to (from the check spec).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Context {
    pub tensors: Vec<TensorDecl>,
    pub scalars: Vec<ScalarDecl>,
}

/// A checked formula, ready to instantiate.
#[derive(Clone, Debug)]
pub struct Compiled {
    hir: hir::Hir,
    ctx: Context,
}

impl Compiled {
    /// The tensors the formula defines (context tensor numbers), in the
    /// order of their definitions; the index is what [`Instance::element`]
    /// takes.
    pub fn outputs(&self) -> Vec<u32> {
        self.hir
            .outs
            .iter()
            .map(|o| self.ctx.tensors[o.tensor as usize].id)
            .collect()
    }

    /// The definition index of tensor `name`.
    pub fn output_of(&self, name: &str) -> Option<usize> {
        self.hir
            .outs
            .iter()
            .position(|o| self.ctx.tensors[o.tensor as usize].name == name)
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// An instantiator writing into `terms`.
    pub fn instance<'a>(&'a self, terms: &'a mut Terms) -> Instance<'a> {
        Instance::new(&self.hir, &self.ctx, terms)
    }
}

/// Parses and checks `text` against `ctx`. Every syntax error is reported
/// (the parser recovers at `;`); name and kind errors follow when the
/// syntax is clean.
pub fn compile(text: &str, ctx: &Context) -> Result<Compiled, Vec<Diagnostic>> {
    let (prelude, pdiags) = parser::parse(PRELUDE, span::PRELUDE);
    debug_assert!(pdiags.is_empty(), "prelude: {pdiags:?}");
    let (prog, diags) = parser::parse(text, span::USER);
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut r = resolve::Resolver::new(ctx);
    r.prelude(&prelude);
    if !r.diags.is_empty() {
        return Err(r.diags);
    }
    r.program(&prog);
    if r.hir.outs.is_empty() && r.diags.is_empty() {
        r.diags.push(
            Diagnostic::new(Span::new(span::USER, 0, 0), "the formula defines no output")
                .note("write `y[i] = …;` for an output tensor `y` of the spec"),
        );
    }
    if !r.diags.is_empty() {
        return Err(r.diags);
    }
    Ok(Compiled {
        hir: r.hir,
        ctx: ctx.clone(),
    })
}
