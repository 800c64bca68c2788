//! Hash-consed real-valued terms (docs/semantics.md §5).
//!
//! The symbolic executor turns every float value a kernel computes into a
//! term over the real numbers: input symbols `x[i]`, exact rational
//! constants, `+`, `·`, reciprocal, `exp`, `max`/`min`, piecewise
//! `select`, and uninterpreted function atoms. [`Terms`] stores them as a
//! DAG in which every distinct term is one node ([`TermId`]), so the
//! reference and candidate kernels share sub-terms and comparing two
//! terms for structural equality is comparing two integers.
//!
//! Construction canonicalises lightly (see `build/`): exact constant
//! folding, flattening and sorting of associative-commutative operators,
//! identities, like terms, negation/comparison normalisation. Terms equal
//! up to those rewrites are the same node; deciding equality in general
//! (normal forms, case splits) is the decision procedure's job: the
//! `ptxeq-decide` crate (`crates/decide`), built on top of this one. This
//! crate is terms as data: store, nodes, construction, evaluation,
//! printing, hashing, serialisation, and the one DAG traversal
//! ([`Terms::reachable`], [`Terms::post_order`]), and the one table of
//! math functions ([`MathFn`]).
//!
//! Semantics: the real numbers extended with ±inf. Inputs are finite reals.
//! Arithmetic with an infinite operand folds where the extended-real
//! result is defined (`inf + 3 = inf`, `2·-inf = -inf`, `exp(-inf) = 0`)
//! and is kept as a node otherwise (`inf - inf`, `0·inf`). Division by
//! zero is undefined and never folded (`recip(0)` is a node); identities
//! such as `x·0 = 0` and `recip(recip(a)) = a` hold wherever the term is
//! defined. Floating-point rounding, `.ftz` and `.sat` are not modelled
//! (docs/semantics.md §2: real arithmetic).
//!
//! Each node carries a structural 128-bit hash ([`Terms::hash128`]),
//! computed when interned, that depends only on the term — not on ids or
//! on the store — and serves as its cache key. [`TermGraph`] is the
//! serializable, content-addressed form of a set of terms.

mod build;
mod display;
mod eval;
mod graph;
mod hash;
pub mod intop;
mod math;
mod node;
mod operands;
mod rat;
mod store;
mod table;
pub mod uninterpreted;
mod walk;

pub use build::{
    ChainStats, FLATTEN_LIMIT, IeeeFormat, MAX_CONST_BITS, PendingSum, Sum, SumChains,
};
pub use display::{DEFAULT_DISPLAY_LIMIT, Display};
pub use eval::F64Memo;
pub use graph::{GraphError, SameTerms, TermGraph};
pub use intop::{IntCmpOp, IntFn, IntRound, IntTy};
pub use math::MathFn;
pub use node::{Application, Children, CmpOp, Func, Node, Operands, TermId};
pub use rat::Rat;
pub use store::Terms;
pub use walk::Reachable;

/// Re-exported so callers name the same rational type.
pub use num_rational::BigRational;
