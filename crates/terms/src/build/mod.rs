//! Term constructors with light, local canonicalisation.
//!
//! Each constructor folds what is cheap and exact (constants, identities,
//! infinities where the extended-real result is defined) and puts the rest
//! in canonical order, so that terms equal up to those rewrites are one
//! node. Nothing here is a decision procedure: products of sums are never
//! expanded, `x·recip(x)` is not cancelled, `e^a·e^b` is not merged —
//! normal forms are the decision procedure's job (docs/semantics.md §5).
//!
//! Every constructor is total. Sorts are coerced, never rejected: a boolean
//! used as a real is `select(b, 1, 0)`, a real used as a boolean is `x ≠ 0`
//! (the PTX meaning of a predicate produced from data).
//!
//! Two bounds keep construction cheap on adversarial input:
//! - [`FLATTEN_LIMIT`]: nested sums/products/extrema/connectives are merged
//!   into one n-ary node only while the merged node keeps at most this many
//!   operands (all nested operands or none). Otherwise an accumulation
//!   chain `acc = acc + x` would cost quadratic time and memory. Below the
//!   limit, any association of the same operands gives the same node.
//! - [`MAX_CONST_BITS`]: a constant fold whose result would exceed this
//!   size is not performed (the constants stay separate operands, which is
//!   exact, only less canonical). Repeated squaring of a literal would
//!   otherwise grow without bound.

mod arith;
mod chain;
mod extremum;
mod fast;
mod int;
mod leaves;
mod logic;

use smallvec::SmallVec;

use crate::node::{Node, Operands, TermId};
use crate::rat::Rat;
use crate::store::{FLAG_BOOL, FLAG_INT, Terms};

pub use chain::{ChainStats, PendingSum, Sum, SumChains};
pub use leaves::IeeeFormat;

/// Most operands a node gets by flattening (see the module docs).
pub const FLATTEN_LIMIT: usize = 32;

/// Largest constant (numerator + denominator bits) a fold may produce.
pub const MAX_CONST_BITS: u64 = 1 << 16;

/// Working operand list.
pub(crate) type List = SmallVec<[TermId; 8]>;

/// An extended-real constant.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ExtVal<'a> {
    NegInf,
    Fin(&'a Rat),
    PosInf,
}

impl Ord for ExtVal<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        match (self, o) {
            (ExtVal::Fin(a), ExtVal::Fin(b)) => a.cmp(b),
            (ExtVal::NegInf, ExtVal::NegInf) | (ExtVal::PosInf, ExtVal::PosInf) => Equal,
            (ExtVal::NegInf, _) | (_, ExtVal::PosInf) => Less,
            (ExtVal::PosInf, _) | (_, ExtVal::NegInf) => Greater,
        }
    }
}

impl PartialOrd for ExtVal<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Terms {
    /// A real-valued view of `t` (`select(t, 1, 0)` for a boolean, the
    /// unsigned value for an integer).
    pub(crate) fn as_real(&mut self, t: TermId) -> TermId {
        let f = self.flags[t.index()];
        if f & FLAG_INT != 0 {
            return self.int_to_real(false, t);
        }
        if f & FLAG_BOOL == 0 {
            return t;
        }
        let one = self.konst(Rat::ONE);
        let zero = self.konst(Rat::ZERO);
        self.select(t, one, zero)
    }

    /// A boolean view of `t` (`t ≠ 0` for a real or an integer).
    pub(crate) fn as_boolean(&mut self, t: TermId) -> TermId {
        if self.flags[t.index()] & FLAG_BOOL != 0 {
            return t;
        }
        if let Some(w) = self.int_width(t) {
            let zero = self.int_const(w, 0);
            return self.int_cmp(crate::IntCmpOp::Ne, t, zero);
        }
        let zero = self.konst(Rat::ZERO);
        self.cmp(crate::CmpOp::Ne, t, zero)
    }

    /// The extended-real constant value of `t`, if it is one.
    pub(crate) fn ext_val(&self, t: TermId) -> Option<ExtVal<'_>> {
        match &self.nodes[t.index()] {
            Node::Const(r) => Some(ExtVal::Fin(r)),
            Node::PosInf => Some(ExtVal::PosInf),
            Node::NegInf => Some(ExtVal::NegInf),
            _ => None,
        }
    }

    /// Splices the operands of nested nodes of the same kind into `list` —
    /// all of them or none, whichever keeps the list within
    /// [`FLATTEN_LIMIT`] (deterministic in the multiset of operands, which
    /// keeps constructors idempotent).
    pub(crate) fn flatten(&self, list: &mut List, same: fn(&Node) -> Option<&Operands>) {
        let mut total = 0usize;
        let mut nested = false;
        for &t in list.iter() {
            match same(&self.nodes[t.index()]) {
                Some(ops) => {
                    nested = true;
                    total += ops.len();
                }
                None => total += 1,
            }
        }
        if !nested || total > FLATTEN_LIMIT {
            return;
        }
        let mut out = List::with_capacity(total);
        for &t in list.iter() {
            match same(&self.nodes[t.index()]) {
                Some(ops) => out.extend_from_slice(ops),
                None => out.push(t),
            }
        }
        *list = out;
    }
}

/// Folds a sequence of constants with `op`, refusing results larger than
/// [`MAX_CONST_BITS`] (`None`).
pub(crate) fn fold_consts<'a>(
    init: Rat,
    vals: impl Iterator<Item = &'a Rat>,
    op: fn(&Rat, &Rat) -> Rat,
) -> Option<Rat> {
    let mut acc = init;
    for v in vals {
        acc = op(&acc, v);
        if acc.bits() > MAX_CONST_BITS {
            return None;
        }
    }
    Some(acc)
}
