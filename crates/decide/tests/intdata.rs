//! Integer data (issue 14 item 5): the ring normal form decides
//! reductions in any order, refutes a dropped element with a confirmed
//! integer witness, and handles conversions to reals (exact when the
//! integer cannot have wrapped, an atom when it can).

use ptxeq_decide::decide::{
    Counterexample, DecideOptions, ElementDecision, check_counterexample, decide,
};
use ptxeq_decide::normal::Normalizer;
use ptxeq_terms::{IntCmpOp, IntFn, IntTy, TermId, Terms};

const S32: IntTy = IntTy {
    bits: 32,
    signed: true,
};
const S8: IntTy = IntTy {
    bits: 8,
    signed: true,
};
const U8: IntTy = IntTy {
    bits: 8,
    signed: false,
};

fn run(t: &Terms, a: TermId, b: TermId) -> ElementDecision {
    decide(&mut Normalizer::new(t), a, b, &DecideOptions::default())
}

fn proved(t: &Terms, a: TermId, b: TermId) {
    match run(t, a, b) {
        ElementDecision::Proved { .. } => {}
        d => panic!("{} vs {}: {d:?}", t.display(a), t.display(b)),
    }
}

/// Refuted with a witness of integers in each input's range, which
/// re-checks.
fn refuted(t: &Terms, a: TermId, b: TermId) -> Counterexample {
    let ElementDecision::Refuted(cx) = run(t, a, b) else {
        panic!("not refuted: {} vs {}", t.display(a), t.display(b));
    };
    for w in &cx.inputs {
        assert_eq!(w.value.fract(), 0.0, "integer witness: {cx:?}");
    }
    assert!(check_counterexample(t, a, b, &cx), "{cx:?}");
    assert_ne!(cx.reference, cx.candidate);
    cx
}

/// `Σ x[i]` modulo 2^32 as a left-to-right chain.
fn chain(t: &mut Terms, xs: &[TermId]) -> TermId {
    let mut acc = xs[0];
    for &x in &xs[1..] {
        acc = t.int_add(32, acc, x);
    }
    acc
}

/// Tree reduction with stride halving (CUDA's "sequential addressing").
fn tree(t: &mut Terms, xs: &[TermId]) -> TermId {
    let mut v = xs.to_vec();
    while v.len() > 1 {
        let half = v.len() / 2;
        for i in 0..half {
            v[i] = t.int_add(32, v[i], v[i + half]);
        }
        v.truncate(half);
    }
    v[0]
}

fn inputs(t: &mut Terms, tensor: u32, n: u64, ty: IntTy) -> Vec<TermId> {
    (0..n).map(|i| t.int_input(tensor, i, ty)).collect()
}

#[test]
fn reductions_in_any_order_are_equal() {
    let mut t = Terms::new();
    let xs = inputs(&mut t, 0, 256, S32);
    let a = chain(&mut t, &xs);
    let b = tree(&mut t, &xs);
    let mut rev = xs.clone();
    rev.reverse();
    let c = chain(&mut t, &rev);
    proved(&t, a, b);
    proved(&t, a, c);
}

#[test]
fn a_dropped_element_is_refuted_with_an_integer_witness() {
    let mut t = Terms::new();
    let xs = inputs(&mut t, 0, 64, S32);
    let a = tree(&mut t, &xs);
    let b = chain(&mut t, &xs[..63]);
    let cx = refuted(&t, a, b);
    assert!(cx.inputs.iter().any(|w| w.index == 63 && w.value != 0.0));
    // A wrong initial value (sum starting at 1).
    let one = t.int_const(32, 1);
    let c = t.int_add(32, a, one);
    refuted(&t, a, c);
}

#[test]
fn ring_identities_hold_modulo_2w() {
    let mut t = Terms::new();
    let x = t.int_input(0, 0, S32);
    let y = t.int_input(0, 1, S32);
    // (x + y)·(x − y) = x² − y²
    let s = t.int_add(32, x, y);
    let d = t.int_sub(32, x, y);
    let p = t.int_mul(32, s, d);
    let xx = t.int_mul(32, x, x);
    let yy = t.int_mul(32, y, y);
    let q = t.int_sub(32, xx, yy);
    proved(&t, p, q);
    // x << 3 = 8·x; ~x = −1 − x; mul.wide of two s32 = sext·sext.
    let three = t.int_const(32, 3);
    let sh = t.int_op(IntFn::Shl, 32, &[x, three]);
    let eight = t.int_const(32, 8);
    let m8 = t.int_mul(32, eight, x);
    proved(&t, sh, m8);
    // 2^31·x·(x+1) is 0 as a function though not as a polynomial.
    let one = t.int_const(32, 1);
    let x1 = t.int_add(32, x, one);
    let h = t.int_const(32, 1 << 31);
    let z = t.int_mul_many(32, &[h, x, x1]);
    let zero = t.int_const(32, 0);
    proved(&t, z, zero);
    // ... while 2^30·x·(x+1) is not: x = 1 gives 2^31.
    let h2 = t.int_const(32, 1 << 30);
    let nz = t.int_mul_many(32, &[h2, x, x1]);
    refuted(&t, nz, zero);
}

#[test]
fn widths_are_rings_of_their_own() {
    let mut t = Terms::new();
    let x = t.int_input(0, 0, S8);
    let y = t.int_input(0, 1, S8);
    // Sign-extending s8 inputs and adding in 32 bits never wraps; adding
    // in 8 bits and then extending can.
    let xe = t.int_op(IntFn::Sext { from: 8 }, 32, &[x]);
    let ye = t.int_op(IntFn::Sext { from: 8 }, 32, &[y]);
    let wide = t.int_add(32, xe, ye);
    let narrow = t.int_add(8, x, y);
    let narrow_e = t.int_op(IntFn::Sext { from: 8 }, 32, &[narrow]);
    let cx = refuted(&t, wide, narrow_e);
    let sum: f64 = cx.inputs.iter().map(|w| w.value).sum();
    assert!(!(-128.0..=127.0).contains(&sum), "{cx:?}");
    // Truncating the wide sum back to 8 bits is the narrow sum (a ring map).
    let back = t.int_op(IntFn::Trunc, 8, &[wide]);
    proved(&t, back, narrow);
    // A u8 input zero-extended is itself; sign-extended it is not.
    let u = t.int_input(1, 0, U8);
    let uz = t.int_op(IntFn::Zext { from: 8 }, 32, &[u]);
    let us = t.int_op(IntFn::Sext { from: 8 }, 32, &[u]);
    refuted(&t, uz, us);
}

#[test]
fn conversions_to_reals_respect_wrapping() {
    let mut t = Terms::new();
    // s32: the converted integer sum may wrap, the real sum of converted
    // elements does not — different functions.
    let xs = inputs(&mut t, 0, 8, S32);
    let isum = chain(&mut t, &xs);
    let as_real = t.int_to_real(true, isum);
    let reals: Vec<TermId> = xs.iter().map(|&x| t.int_to_real(true, x)).collect();
    let rsum = t.add_many(&reals);
    let cx = refuted(&t, as_real, rsum);
    let exact: f64 = cx.inputs.iter().map(|w| w.value).sum();
    assert!(exact.abs() >= 2f64.powi(31), "the witness wraps: {cx:?}");
    // s8 elements sign-extended to 32 bits: 256 of them cannot wrap, so
    // the converted integer sum is the real sum.
    let bs = inputs(&mut t, 1, 256, S8);
    let wide: Vec<TermId> = bs
        .iter()
        .map(|&b| t.int_op(IntFn::Sext { from: 8 }, 32, &[b]))
        .collect();
    let isum = tree(&mut t, &wide);
    let conv = t.int_to_real(true, isum);
    let reals: Vec<TermId> = bs.iter().map(|&b| t.int_to_real(true, b)).collect();
    let rsum = t.add_many(&reals);
    proved(&t, conv, rsum);
    // Mixed: a float scale times the converted integer.
    let s = t.input(2, 0);
    let l = t.mul(s, conv);
    let r = t.mul(conv, s);
    proved(&t, l, r);
}

#[test]
fn comparisons_selects_and_atoms() {
    let mut t = Terms::new();
    let x = t.int_input(0, 0, S32);
    let y = t.int_input(0, 1, S32);
    // max via select over an integer comparison: the same select whatever
    // the operand order of the sums inside.
    let c1 = t.int_cmp(IntCmpOp::Lt { signed: true }, x, y);
    let s1 = t.select(c1, y, x);
    let c2 = t.int_cmp(IntCmpOp::Gt { signed: true }, y, x);
    let s2 = t.select(c2, y, x);
    proved(&t, s1, s2);
    // Signed against unsigned comparison differ (x = -1, y = 0).
    let cu = t.int_cmp(IntCmpOp::Lt { signed: false }, x, y);
    let su = t.select(cu, y, x);
    refuted(&t, s1, su);
    // An uninterpreted atom over equal normal forms: and(x + y, 255).
    let k = t.int_const(32, 255);
    let xy = t.int_add(32, x, y);
    let yx = t.int_add(32, y, x);
    let a1 = t.int_op(IntFn::And, 32, &[xy, k]);
    let a2 = t.int_op(IntFn::And, 32, &[k, yx]);
    proved(&t, a1, a2);
    // and with a different mask: refuted by exact evaluation.
    let k2 = t.int_const(32, 127);
    let a3 = t.int_op(IntFn::And, 32, &[xy, k2]);
    refuted(&t, a1, a3);
}

#[test]
fn one_function_many_spellings() {
    let mut t = Terms::new();
    let x = t.int_input(0, 0, S32);
    let y = t.int_input(0, 1, S32);
    // max.s32 against setp + selp, either tie-breaking.
    let m = t.int_op(IntFn::Max { signed: true }, 32, &[x, y]);
    let lt = t.int_cmp(IntCmpOp::Lt { signed: true }, x, y);
    let s1 = t.select(lt, y, x);
    let le = t.int_cmp(IntCmpOp::Le { signed: true }, y, x);
    let s2 = t.select(le, x, y);
    proved(&t, m, s1);
    proved(&t, m, s2);
    let mn = t.int_op(IntFn::Min { signed: true }, 32, &[y, x]);
    let s3 = t.select(lt, x, y);
    proved(&t, mn, s3);
    refuted(&t, m, mn);
    // The low byte: and with 255, rem.u by 256, bfe.u 0 8, zext of trunc.
    let k255 = t.int_const(32, 255);
    let k256 = t.int_const(32, 256);
    let (zero, eight) = (t.int_const(32, 0), t.int_const(32, 8));
    let a = t.int_op(IntFn::And, 32, &[x, k255]);
    let r = t.int_op(IntFn::Rem { signed: false }, 32, &[x, k256]);
    let b = t.int_op(IntFn::Bfe { signed: false }, 32, &[x, zero, eight]);
    let tr = t.int_op(IntFn::Trunc, 8, &[x]);
    let z = t.int_op(IntFn::Zext { from: 8 }, 32, &[tr]);
    proved(&t, a, r);
    proved(&t, a, b);
    proved(&t, a, z);
    // ... and the low byte of x + 256·y is the low byte of x.
    let sh = t.int_mul(32, k256, y);
    let xs = t.int_add(32, x, sh);
    let a2 = t.int_op(IntFn::And, 32, &[xs, k255]);
    proved(&t, a, a2);
    let k127 = t.int_const(32, 127);
    let a3 = t.int_op(IntFn::And, 32, &[x, k127]);
    refuted(&t, a, a3);
    // Signed field: bfe.s 0 8 is the sign-extended low byte.
    let bs = t.int_op(IntFn::Bfe { signed: true }, 32, &[x, zero, eight]);
    let se = t.int_op(IntFn::Sext { from: 8 }, 32, &[tr]);
    proved(&t, bs, se);
    refuted(&t, bs, b);
}
