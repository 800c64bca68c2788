//! A residual that is a nonzero constant (issue 13 item 8): the terms
//! differ wherever both are defined, even by 2⁻¹⁴⁹, which f64 sampling
//! cannot see; the witness is confirmed by exact evaluation.

use super::*;
use crate::Rat;

/// `x[0] + … + x[n-1]`.
fn sum(t: &mut Terms, n: u64) -> TermId {
    let mut s = t.input(0, 0);
    for i in 1..n {
        let x = t.input(0, i);
        s = t.add(s, x);
    }
    s
}

fn decide_pair(t: &Terms, a: TermId, b: TermId) -> ElementDecision {
    decide(&mut Normalizer::new(t), a, b, &DecideOptions::default())
}

#[test]
fn a_subnormal_offset_is_refuted_with_an_exact_witness() {
    let mut t = Terms::new();
    let s = sum(&mut t, 64);
    // 2^-149, the smallest f32 subnormal (0f00000001).
    let tiny = t.constant(Rat::from_mantissa_exp(1, -149));
    let shifted = t.add(s, tiny);
    let ElementDecision::Refuted(cx) = decide_pair(&t, s, shifted) else {
        panic!("not refuted: {:?}", decide_pair(&t, s, shifted));
    };
    // The f64 values need not differ; the exact difference is -2^-149.
    let diff = cx.exact_difference.as_deref().expect("an exact difference");
    let minus_tiny = Rat::from_mantissa_exp(-1, -149).to_string();
    assert!(diff.contains(&format!("= {minus_tiny} exactly")), "{diff}");
    assert_eq!(cx.inputs.len(), 64);
    // Replaying the witness confirms it (exact evaluation).
    assert!(check_counterexample(&t, s, shifted, &cx));
}

#[test]
fn a_constant_numerator_residual_over_a_denominator_is_refuted_where_defined() {
    // 1/y vs (1 + 2^-100)/y: the numerators differ by the constant 2^-100
    // over the common denominator y, so the terms differ wherever y ≠ 0;
    // f64 rounds both to the same value, and y = 0 (undefined) is no
    // witness.
    let mut t = Terms::new();
    let y = t.input(0, 1);
    let one = t.int(1);
    let a = t.div(one, y);
    let c = t.constant(Rat::from_mantissa_exp(1, 0).add(&Rat::from_mantissa_exp(1, -100)));
    let b = t.div(c, y);
    let ElementDecision::Refuted(cx) = decide_pair(&t, a, b) else {
        panic!("{:?}", decide_pair(&t, a, b));
    };
    assert_eq!(cx.inputs.len(), 1);
    assert_ne!(
        cx.inputs[0].value, 0.0,
        "the witness divides by zero: {cx:?}"
    );
    assert!(cx.exact_difference.is_some(), "{cx:?}");
    assert!(check_counterexample(&t, a, b, &cx));
}

#[test]
fn a_constant_residual_under_exp_stays_unknown_not_refuted_blindly() {
    // exp is not exactly evaluable: the witness could not be confirmed.
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let e = t.exp(x);
    let tiny = t.constant(Rat::from_mantissa_exp(1, -149));
    let shifted = t.add(e, tiny);
    assert!(
        matches!(decide_pair(&t, e, shifted), ElementDecision::Unknown { .. }),
        "{:?}",
        decide_pair(&t, e, shifted)
    );
}
