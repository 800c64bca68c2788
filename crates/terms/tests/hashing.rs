//! The structural hash: store- and order-independent, distinguishing, and
//! matching its documented byte encoding (it keys the on-disk cache, so it
//! must not drift silently).

use ptxeq_terms::{CmpOp, Func, Node, TermId, Terms};
use xxhash_rust::xxh3::xxh3_128;

/// Documented encoding (src/hash.rs): version byte 1, kind tag, payload.
const VERSION: u8 = 1;
const TAG_INPUT: u8 = 4;
const TAG_ADD: u8 = 5;
const TAG_CONST: u8 = 1;

fn input_hash(tensor: u32, index: u64) -> u128 {
    let mut b = vec![VERSION, TAG_INPUT];
    b.extend(tensor.to_le_bytes());
    b.extend(index.to_le_bytes());
    xxh3_128(&b)
}

#[test]
fn encoding_matches_the_documentation() {
    let mut t = Terms::new();
    let x = t.input(2, 7);
    assert_eq!(t.hash128(x), input_hash(2, 7));
    // A small constant: tag, 0 (small), numerator, denominator (LE i64).
    let c = t.constant(ptxeq_terms::Rat::new(-3, 4).unwrap());
    let mut b = vec![VERSION, TAG_CONST, 0];
    b.extend((-3i64).to_le_bytes());
    b.extend(4i64.to_le_bytes());
    assert_eq!(t.hash128(c), xxh3_128(&b));
    // A sum: tag, then the children's hashes in stored (hash) order.
    let y = t.input(0, 1);
    let s = t.add(x, y);
    let mut hs = [input_hash(2, 7), input_hash(0, 1)];
    hs.sort();
    let mut b = vec![VERSION, TAG_ADD];
    for h in hs {
        b.extend(h.to_le_bytes());
    }
    assert_eq!(t.hash128(s), xxh3_128(&b));
}

#[test]
fn same_term_same_hash_across_stores_and_orders() {
    // a + b + c in one store, c + (b + a) in another that already holds
    // unrelated terms (so every id differs).
    let mut s1 = Terms::new();
    let (a, b, c) = (s1.input(0, 0), s1.input(0, 1), s1.input(0, 2));
    let ab = s1.add(a, b);
    let abc = s1.add(ab, c);
    let e1 = s1.exp(abc);

    let mut s2 = Terms::new();
    for i in 0..50 {
        let z = s2.input(9, i);
        let _ = s2.exp(z);
    }
    let (c2, b2, a2) = (s2.input(0, 2), s2.input(0, 1), s2.input(0, 0));
    let ba = s2.add(b2, a2);
    let cba = s2.add(c2, ba);
    let e2 = s2.exp(cba);
    assert_ne!(abc, cba, "ids differ between the stores");
    assert_eq!(s1.hash128(abc), s2.hash128(cba));
    assert_eq!(s1.hash128(e1), s2.hash128(e2));
    assert_eq!(s1.export(&[e1]), s2.export(&[e2]));
}

#[test]
fn different_terms_differ() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let y = t.input(0, 1);
    let z = t.input(1, 0);
    let half = t.constant(ptxeq_terms::Rat::new(1, 2).unwrap());
    let two = t.int(2);
    let zero = t.int(0);
    let mut all: Vec<TermId> = vec![x, y, z, half, two, zero];
    let pairs = [(x, y), (y, x), (x, z), (x, two), (x, half)];
    for (a, b) in pairs {
        all.push(t.add(a, b));
        all.push(t.mul(a, b));
        all.push(t.sub(a, b));
        all.push(t.div(a, b));
        all.push(t.max(a, b));
        all.push(t.min(a, b));
        all.push(t.cmp(CmpOp::Lt, a, b));
        all.push(t.cmp(CmpOp::Le, a, b));
        all.push(t.cmp(CmpOp::Eq, a, b));
        let c = t.cmp(CmpOp::Lt, a, zero);
        all.push(t.select(c, a, b));
    }
    for f in [
        Func::Log,
        Func::Sqrt,
        Func::Sin,
        Func::Cos,
        Func::Tanh,
        Func::Erf,
        Func::Ex2,
        Func::Lg2,
    ] {
        all.push(t.func(f, x));
    }
    all.push(t.exp(x));
    all.push(t.recip(x));
    all.push(t.pos_inf());
    all.push(t.neg_inf());
    all.push(t.bool_const(true));
    all.push(t.bool_const(false));
    all.sort();
    all.dedup();
    // Distinct nodes (checked structurally) have distinct hashes.
    let mut hashes: Vec<u128> = all.iter().map(|&a| t.hash128(a)).collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), all.len());
    // Spot checks: terms with different values are not merged.
    let xy = t.add(x, y);
    let x_times_y = t.mul(x, y);
    assert_ne!(xy, x_times_y);
    let x_minus_y = t.sub(x, y);
    let y_minus_x = t.sub(y, x);
    assert_ne!(x_minus_y, y_minus_x);
    assert!(matches!(t.node(x_minus_y), Node::Add(_)));
}

#[test]
fn store_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Terms>();
    assert_send_sync::<ptxeq_terms::TermGraph>();
}

#[test]
fn nodes_stay_small() {
    // Memory per node is what bounds kernel size: keep the node at most
    // five machine words (n-ary operands up to four inline).
    assert!(
        std::mem::size_of::<Node>() <= 40,
        "{}",
        std::mem::size_of::<Node>()
    );
}
