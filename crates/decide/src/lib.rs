//! The decision procedure over hash-consed terms (`ptxeq-terms`): is
//! `reference = candidate` over the reals, for one output element?
//!
//! - [`normal`]: the normal form (rational functions of exp-polynomials
//!   over exact rationals, constant recovery, case splits over
//!   `max`/`min`/`select`) with an exact equality check;
//! - [`decide`]: the per-element procedure — normal form, then confirmed
//!   refutation by sampling (exact or interval evaluation), then case
//!   splits — answering proved, refuted with a counterexample, or unknown;
//! - [`smt`]: SMT-LIB2 export of one verification condition.
//!
//! Terms as data (store, nodes, construction, evaluation, printing) live
//! in `ptxeq-terms`; this crate only reads them.

// The modules were written inside `ptxeq-terms`; these names keep their
// `crate::` paths meaning what they meant there.
pub(crate) use ptxeq_terms::{
    CmpOp, Func, IntCmpOp, IntFn, IntTy, Node, Rat, TermId, Terms, intop, uninterpreted,
};

pub mod decide;
pub mod normal;
pub mod smt;

#[cfg(test)]
mod uninterpreted_tests;
