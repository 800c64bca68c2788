//! The presampler: gross differences refuted before any normal form,
//! never a refutation that a constant recovery would undo, and results
//! that depend only on the element pair (not on what the worker's memos
//! hold).

use super::*;
use crate::Func;

fn presampled(t: &Terms, a: TermId, b: TermId) -> Option<Counterexample> {
    Presampler::new(&DecideOptions::default()).refute(t, a, b)
}

/// `e^{x0} / (e^{x0} + e^{x1})` against the same with `x0` for `x1`.
fn wrong_softmax(t: &mut Terms) -> (TermId, TermId) {
    let x0 = t.input(0, 0);
    let x1 = t.input(0, 1);
    let e0 = t.exp(x0);
    let e1 = t.exp(x1);
    let s = t.add(e0, e1);
    let right = t.div(e0, s);
    let s2 = t.add(e0, e0);
    let wrong = t.div(e0, s2);
    (right, wrong)
}

#[test]
fn a_gross_difference_is_refuted_with_a_replayable_witness() {
    let mut t = Terms::new();
    let (a, b) = wrong_softmax(&mut t);
    let cx = presampled(&t, a, b).expect("refuted at a fixed point");
    assert!(check_counterexample(&t, a, b, &cx));
    let names: Vec<_> = cx.inputs.iter().map(|w| (w.tensor, w.index)).collect();
    assert_eq!(names, inputs_of(&t, &[a, b]));
    // decide_presampled reports it with no recovery.
    let mut n = Normalizer::new(&t);
    let mut p = Presampler::new(&DecideOptions::default());
    let r = decide_presampled(&mut n, &mut p, a, b, &DecideOptions::default());
    assert_eq!(r.decision, ElementDecision::Refuted(cx));
    assert!(r.recoveries.is_empty());
}

#[test]
fn equal_terms_and_rounding_noise_are_not_refuted() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let e = t.exp(x);
    let log2e = t.from_f32_bits(0x3FB8_AA3B).unwrap();
    let y = t.mul(x, log2e);
    let e2 = t.func(Func::Ex2, y);
    assert!(presampled(&t, e, e2).is_none());
}

/// Two roundings of `log2 e` whose literal difference, scaled up, is a
/// gross difference at every point, while constant recovery reads both as
/// `log2 e` and proves the pair: the presampler must not refute it (its
/// hulls enclose both readings).
#[test]
fn a_difference_that_recovery_cancels_is_left_to_the_normal_form() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let f32_log2e = t.from_f32_bits(0x3FB8_AA3B).unwrap();
    let f64_log2e = t.from_f64_bits(std::f64::consts::LOG2_E.to_bits()).unwrap();
    let ya = t.mul(x, f32_log2e);
    let yb = t.mul(x, f64_log2e);
    let a = t.func(Func::Ex2, ya);
    let b = t.func(Func::Ex2, yb);
    let d = t.sub(a, b);
    let big = t.constant(crate::Rat::new(1 << 40, 1).unwrap());
    let scaled = t.mul(d, big);
    let zero = t.int(0);
    // Literally, `scaled` is about 4·10^4 at x = 1: grossly nonzero.
    let v = t.eval_f64(scaled, &|_, _| 1.0);
    assert!(v.abs() > 1.0, "{v}");
    assert!(presampled(&t, zero, scaled).is_none());
    let d = decide(
        &mut Normalizer::new(&t),
        zero,
        scaled,
        &DecideOptions::default(),
    );
    assert_eq!(d, ElementDecision::Proved { case_splits: 0 });
}

#[test]
fn the_result_does_not_depend_on_the_memos() {
    let mut t = Terms::new();
    let (a, b) = wrong_softmax(&mut t);
    let x2 = t.input(0, 2);
    let x3 = t.input(0, 3);
    let other = t.mul(x2, x3);
    let other2 = t.add(x2, x3);
    let fresh = presampled(&t, a, b);
    let mut p = Presampler::new(&DecideOptions::default());
    let _ = p.refute(&t, other, other2);
    let _ = p.refute(&t, b, a);
    assert_eq!(p.refute(&t, a, b), fresh);
}

#[test]
fn integer_roots_are_left_to_the_full_procedure() {
    let mut t = Terms::new();
    let ty = crate::IntTy {
        bits: 32,
        signed: true,
    };
    let x = t.int_input(0, 0, ty);
    let one = t.int_const(32, 1);
    let y = t.int_add(32, x, one);
    assert!(presampled(&t, x, y).is_none());
}
