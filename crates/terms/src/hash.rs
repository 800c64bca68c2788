//! The structural 128-bit hash of a node.
//!
//! A node's hash is XXH3-128 of a byte string: `HASH_VERSION`, the kind's
//! tag (module `tag`), then the payload —
//! - `Const`: `0`, numerator and denominator as little-endian `i64` (small
//!   representation), or `1`, the numerator's sign, then numerator and
//!   denominator magnitudes each as a little-endian `u64` byte count and
//!   little-endian bytes (big representation);
//! - `Input`: tensor as LE `u32`, index as LE `u64`;
//! - `Func`: a function code byte, then the argument's hash;
//! - `Cmp`: an operator code byte, then both operands' hashes;
//! - `BoolConst`: `0`/`1`;
//! - `IntConst`: width byte, value as LE `u64`; `IntInput`: tensor, index,
//!   the type's bits and signedness bytes;
//! - `IntAdd`/`IntMul`: width byte, then the children's hashes;
//!   `IntOp`: the function's three code bytes (`IntFn::code`), width byte,
//!   children's hashes; `IntCmp`: the operator's two code bytes, both hashes; `IntToReal`: the
//!   signedness byte, the argument's hash;
//! - every other kind: the children's hashes (LE `u128`) in stored order.
//!
//! `tests/hashing.rs` recomputes some of these from this description.
//!
//! Children enter through their *hashes*, never their `TermId`s, so the
//! hash of a term is a function of the term alone: the same term built in
//! two stores, in any order, hashes the same. Because n-ary operands are stored sorted by
//! hash (not by id), the stored order itself is store-independent too.
//!
//! The hash is a cache key (docs/semantics.md §5, §15), not an identity: interning
//! compares nodes structurally, so a collision can cost speed, never
//! soundness. `HASH_VERSION` is mixed in so that a change of the encoding
//! changes every key.

use smallvec::SmallVec;
use xxhash_rust::xxh3::xxh3_128;

use crate::node::{CmpOp, Func, Node, TermId};

/// Bumped whenever the byte encoding below changes.
pub(crate) const HASH_VERSION: u8 = 1;

/// Kind tags. Distinct per node kind; the values are part of the hash
/// definition.
pub(crate) mod tag {
    pub const CONST: u8 = 1;
    pub const POS_INF: u8 = 2;
    pub const NEG_INF: u8 = 3;
    pub const INPUT: u8 = 4;
    pub const ADD: u8 = 5;
    pub const MUL: u8 = 6;
    pub const RECIP: u8 = 7;
    pub const EXP: u8 = 8;
    pub const FUNC: u8 = 9;
    pub const MAX: u8 = 10;
    pub const MIN: u8 = 11;
    pub const BOOL: u8 = 12;
    pub const CMP: u8 = 13;
    pub const NOT: u8 = 14;
    pub const AND: u8 = 15;
    pub const OR: u8 = 16;
    pub const XOR: u8 = 17;
    pub const SELECT: u8 = 18;
    pub const POW: u8 = 19;
    pub const APPLY: u8 = 20;
    pub const INT_CONST: u8 = 21;
    pub const INT_INPUT: u8 = 22;
    pub const INT_ADD: u8 = 23;
    pub const INT_MUL: u8 = 24;
    pub const INT_OP: u8 = 25;
    pub const INT_CMP: u8 = 26;
    pub const INT_TO_REAL: u8 = 27;
}

/// Inline room for a node of up to `FLATTEN_LIMIT + 4` operands (the
/// common maximum), so hashing does not allocate.
type Buf = SmallVec<[u8; 2 + 16 * (crate::FLATTEN_LIMIT + 4)]>;

fn start(kind: u8) -> Buf {
    let mut b = Buf::new();
    b.push(HASH_VERSION);
    b.push(kind);
    b
}

fn push_children(b: &mut Buf, ops: impl Iterator<Item = TermId>, hashes: &[u128]) {
    for t in ops {
        b.extend_from_slice(&hashes[t.index()].to_le_bytes());
    }
}

fn func_code(f: Func) -> u8 {
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

fn cmp_code(op: CmpOp) -> u8 {
    match op {
        CmpOp::Eq => 0,
        CmpOp::Ne => 1,
        CmpOp::Lt => 2,
        CmpOp::Le => 3,
        CmpOp::Gt => 4,
        CmpOp::Ge => 5,
    }
}

/// Hash of an n-ary node of kind `kind` with operands `ops` (in the given
/// order) — also used to hash a product that is not interned (yet).
pub(crate) fn hash_nary(kind: u8, ops: &[TermId], hashes: &[u128]) -> u128 {
    // The common case on a fixed stack buffer, filled without the
    // per-child capacity checks of `Buf` (same bytes either way).
    const MAX: usize = crate::FLATTEN_LIMIT + 4;
    if ops.len() <= MAX {
        let mut b = [0u8; 2 + 16 * MAX];
        b[0] = HASH_VERSION;
        b[1] = kind;
        for (chunk, t) in b[2..].chunks_exact_mut(16).zip(ops) {
            chunk.copy_from_slice(&hashes[t.index()].to_le_bytes());
        }
        return xxh3_128(&b[..2 + 16 * ops.len()]);
    }
    let mut b = start(kind);
    push_children(&mut b, ops.iter().copied(), hashes);
    xxh3_128(&b)
}

/// Hash of `node`; `hashes` holds the hashes of every existing node.
pub(crate) fn hash_node(node: &Node, hashes: &[u128]) -> u128 {
    let mut b;
    match node {
        Node::Const(r) => {
            b = start(tag::CONST);
            r.hash_bytes(&mut b);
        }
        Node::PosInf => b = start(tag::POS_INF),
        Node::NegInf => b = start(tag::NEG_INF),
        Node::Input { tensor, index } => {
            b = start(tag::INPUT);
            b.extend_from_slice(&tensor.to_le_bytes());
            b.extend_from_slice(&index.to_le_bytes());
        }
        Node::Add(ops) => return hash_nary(tag::ADD, ops, hashes),
        Node::Mul(ops) => return hash_nary(tag::MUL, ops, hashes),
        Node::Max(ops) => return hash_nary(tag::MAX, ops, hashes),
        Node::Min(ops) => return hash_nary(tag::MIN, ops, hashes),
        Node::And(ops) => return hash_nary(tag::AND, ops, hashes),
        Node::Or(ops) => return hash_nary(tag::OR, ops, hashes),
        Node::Xor(ops) => return hash_nary(tag::XOR, ops, hashes),
        Node::Recip(a) => return hash_nary(tag::RECIP, &[*a], hashes),
        Node::Exp(a) => return hash_nary(tag::EXP, &[*a], hashes),
        Node::Not(a) => return hash_nary(tag::NOT, &[*a], hashes),
        Node::Func(f, a) => {
            b = start(tag::FUNC);
            b.push(func_code(*f));
            push_children(&mut b, std::iter::once(*a), hashes);
        }
        Node::BoolConst(v) => {
            b = start(tag::BOOL);
            b.push(u8::from(*v));
        }
        Node::Cmp(op, x, y) => {
            b = start(tag::CMP);
            b.push(cmp_code(*op));
            push_children(&mut b, [*x, *y].into_iter(), hashes);
        }
        Node::Select(c, x, y) => return hash_nary(tag::SELECT, &[*c, *x, *y], hashes),
        Node::Pow(x, y) => return hash_nary(tag::POW, &[*x, *y], hashes),
        Node::Apply(app) => {
            b = start(tag::APPLY);
            b.extend_from_slice(&(app.name.len() as u64).to_le_bytes());
            b.extend_from_slice(app.name.as_bytes());
            push_children(&mut b, app.args.iter().copied(), hashes);
        }
        Node::IntConst { w, v } => {
            b = start(tag::INT_CONST);
            b.push(*w);
            b.extend_from_slice(&v.to_le_bytes());
        }
        Node::IntInput { tensor, index, ty } => {
            b = start(tag::INT_INPUT);
            b.extend_from_slice(&tensor.to_le_bytes());
            b.extend_from_slice(&index.to_le_bytes());
            b.push(ty.bits);
            b.push(u8::from(ty.signed));
        }
        Node::IntAdd(w, ops) | Node::IntMul(w, ops) => {
            b = start(if matches!(node, Node::IntAdd(..)) {
                tag::INT_ADD
            } else {
                tag::INT_MUL
            });
            b.push(*w);
            push_children(&mut b, ops.iter().copied(), hashes);
        }
        Node::IntOp(f, w, ops) => {
            b = start(tag::INT_OP);
            b.extend_from_slice(&f.code());
            b.push(*w);
            push_children(&mut b, ops.iter().copied(), hashes);
        }
        Node::IntCmp(op, x, y) => {
            b = start(tag::INT_CMP);
            b.extend_from_slice(&op.code());
            push_children(&mut b, [*x, *y].into_iter(), hashes);
        }
        Node::IntToReal(signed, x) => {
            b = start(tag::INT_TO_REAL);
            b.push(u8::from(*signed));
            push_children(&mut b, std::iter::once(*x), hashes);
        }
    }
    xxh3_128(&b)
}
