//! Decision procedure: case splits, constant recovery, confirmed
//! counterexamples, the seed paper's softmax pair, and property tests
//! (equal by construction → proved; single perturbations → refuted with a
//! witness that really separates the terms).

use super::*;
use crate::{CmpOp, Func, Rat};

fn run(t: &Terms, a: TermId, b: TermId) -> ElementDecision {
    decide(&mut Normalizer::new(t), a, b, &DecideOptions::default())
}

fn assert_proved(t: &Terms, a: TermId, b: TermId) -> u32 {
    match run(t, a, b) {
        ElementDecision::Proved { case_splits } => case_splits,
        d => panic!("{} vs {}: {d:?}", t.display(a), t.display(b)),
    }
}

/// Refuted, and the witness separates the terms under plain `f64`
/// evaluation as well as under the confirming evaluation.
fn assert_refuted(t: &Terms, a: TermId, b: TermId) -> Counterexample {
    let ElementDecision::Refuted(cx) = run(t, a, b) else {
        panic!("not refuted: {} vs {}", t.display(a), t.display(b));
    };
    assert_witness(t, a, b, &cx);
    cx
}

fn assert_witness(t: &Terms, a: TermId, b: TermId, cx: &Counterexample) {
    let inputs = inputs_of(t, &[a, b]);
    assert_eq!(
        cx.inputs
            .iter()
            .map(|w| (w.tensor, w.index))
            .collect::<Vec<_>>(),
        inputs,
        "the witness names every input either term reads"
    );
    let f = |k: u32, i: u64| {
        cx.inputs
            .iter()
            .find(|w| (w.tensor, w.index) == (k, i))
            .map_or(f64::NAN, |w| w.value)
    };
    let (va, vb) = (t.eval_f64(a, &f), t.eval_f64(b, &f));
    assert!(va.is_finite() && vb.is_finite() && va != vb, "{va} vs {vb}");
    assert_eq!((va, vb), (cx.reference, cx.candidate));
    assert!(check_counterexample(t, a, b, cx));
}

#[test]
fn max_against_select_needs_a_case_split() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let m = t.max(a, b);
    let c = t.cmp(CmpOp::Lt, a, b);
    let s = t.select(c, b, a);
    assert!(assert_proved(&t, m, s) >= 2);
    // The other tie-breaking: select(a <= b, b, a).
    let c = t.cmp(CmpOp::Le, a, b);
    let s = t.select(c, b, a);
    assert!(assert_proved(&t, m, s) >= 2);
    // relu
    let zero = t.int(0);
    let r = t.relu(a);
    let c = t.cmp(CmpOp::Lt, zero, a);
    let s = t.select(c, a, zero);
    assert!(assert_proved(&t, r, s) >= 2);
}

#[test]
fn max_plus_min_is_the_sum() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let mx = t.max(a, b);
    let mn = t.min(a, b);
    let lhs = t.add(mx, mn);
    let rhs = t.add(a, b);
    assert!(assert_proved(&t, lhs, rhs) >= 2);
    // ... and `max - min = |a - b|` through a select.
    let d = t.sub(mx, mn);
    let c = t.cmp(CmpOp::Lt, a, b);
    let ba = t.sub(b, a);
    let ab = t.sub(a, b);
    let abs = t.select(c, ba, ab);
    assert_proved(&t, d, abs);
}

#[test]
fn max_reassociation_is_canonical() {
    let mut t = Terms::new();
    let [a, b, c] = [0, 1, 2].map(|i| t.input(0, i));
    let ab = t.max(a, b);
    let l = t.max(ab, c);
    let bc = t.max(b, c);
    let r = t.max(a, bc);
    assert_eq!(assert_proved(&t, l, r), 0);
}

#[test]
fn rescaling_by_a_running_max() {
    // exp(m_old - m_new)·exp(x0 - m_old) = exp(x0 - m_new) for
    // m_new = max(m_old, x2): exact without any split.
    let mut t = Terms::new();
    let [x0, x1, x2] = [0, 1, 2].map(|i| t.input(0, i));
    let m_old = t.max(x0, x1);
    let m_new = t.max(m_old, x2);
    let d = t.sub(m_old, m_new);
    let scale = t.exp(d);
    let d = t.sub(x0, m_old);
    let e = t.exp(d);
    let lhs = t.mul(scale, e);
    let d = t.sub(x0, m_new);
    let rhs = t.exp(d);
    assert_eq!(assert_proved(&t, lhs, rhs), 0);
}

/// A branchy online softmax (`if x > m { s = s·e^{m-x} + 1; m = x } else
/// { s += e^{x-m} }`, predicated moves, not branches) against the naive
/// one: needs case splits over the select chain.
#[test]
fn branchy_online_softmax() {
    let n = 4;
    let mut t = Terms::new();
    let xs: Vec<TermId> = (0..n).map(|j| t.input(0, j)).collect();
    let mut m = xs[0];
    let mut s = t.int(1);
    for &x in &xs[1..] {
        let c = t.cmp(CmpOp::Lt, m, x);
        let d = t.sub(m, x);
        let e = t.exp(d);
        let se = t.mul(s, e);
        let one = t.int(1);
        let up = t.add(se, one);
        let d = t.sub(x, m);
        let e = t.exp(d);
        let keep = t.add(s, e);
        s = t.select(c, up, keep);
        m = t.select(c, x, m);
    }
    let mx = t.max_many(&xs);
    let e: Vec<TermId> = xs
        .iter()
        .map(|&x| {
            let d = t.sub(x, mx);
            t.exp(d)
        })
        .collect();
    let den = t.add_many(&e);
    let pairs: Vec<(TermId, TermId)> = (0..n as usize)
        .map(|i| {
            let d = t.sub(xs[i], m);
            let top = t.exp(d);
            (t.div(top, s), t.div(e[i], den))
        })
        .collect();
    let mut norm = Normalizer::new(&t);
    for (online, naive) in pairs {
        let d = decide(&mut norm, online, naive, &DecideOptions::default());
        assert!(
            matches!(d, ElementDecision::Proved { case_splits } if case_splits >= 4),
            "{d:?}"
        );
    }
}

#[test]
fn too_many_cases_is_unknown_not_proved() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let m = t.max(a, b);
    let c = t.cmp(CmpOp::Lt, a, b);
    let s = t.select(c, b, a);
    let opts = DecideOptions {
        max_cases: 1,
        ..DecideOptions::default()
    };
    let d = decide(&mut Normalizer::new(&t), m, s, &opts);
    assert!(
        matches!(&d, ElementDecision::Unknown { reason, .. } if reason.contains("more than 1")),
        "{d:?}"
    );
}

#[test]
fn a_wrong_branch_is_refuted() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let m = t.max(a, b);
    let c = t.cmp(CmpOp::Lt, a, b);
    let s = t.select(c, a, b); // min, not max
    assert_refuted(&t, m, s);
    assert_refuted(&t, m, a);
}

#[test]
fn equal_where_defined_but_unprovable_stays_unknown() {
    // sqrt(x)² = x wherever sqrt is real, which the normal form does not
    // know: no proof. At x ≥ 0 no sample separates them; at x < 0 the
    // left side is undefined (NaN on hardware) while x is a real number,
    // which is a real difference — so the only witness has x < 0.
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let s = t.sqrt(x);
    let ss = t.mul(s, s);
    match run(&t, ss, x) {
        ElementDecision::Refuted(cx) => {
            assert!(cx.inputs[0].value < 0.0 && cx.reference.is_nan(), "{cx:?}");
            assert!(check_counterexample(&t, ss, x, &cx));
        }
        d => panic!("{d:?}"),
    }
    // Restricted to where both are defined (sqrt(x²)² vs x²), unknown.
    let x2 = t.mul(x, x);
    let s2 = t.sqrt(x2);
    let ss2 = t.mul(s2, s2);
    let d = run(&t, ss2, x2);
    assert!(
        matches!(&d, ElementDecision::Unknown { residual: Some(r), .. } if r.contains("sqrt")),
        "{d:?}"
    );
}

#[test]
fn nan_and_infinity_are_never_witnesses() {
    // log(x) vs log(x) + select(x < 0, 1, 0): differ only where log is
    // undefined (x < 0), so no witness may be reported.
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let l = t.func(Func::Log, x);
    let zero = t.int(0);
    let one = t.int(1);
    let c = t.cmp(CmpOp::Lt, x, zero);
    let bump = t.select(c, one, zero);
    let l2 = t.add(l, bump);
    let d = run(&t, l, l2);
    assert!(!matches!(d, ElementDecision::Refuted(_)), "{d:?}");
}

#[test]
fn a_tiny_real_difference_is_confirmed_exactly() {
    // x + 2^-40 vs x: f64 sees the difference, exact evaluation confirms.
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let eps = t.constant(Rat::from_mantissa_exp(1, -40));
    let y = t.add(x, eps);
    assert_refuted(&t, x, y);
}

#[test]
fn triton_exp_is_exp_with_a_recovery() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let e = t.exp(x);
    let log2e = t.from_f32_bits(0x3FB8_AA3B).unwrap();
    let y = t.mul(x, log2e);
    let e2 = t.func(Func::Ex2, y);
    let mut n = Normalizer::new(&t);
    let r = decide_with_report(&mut n, e, e2, &DecideOptions::default());
    assert_eq!(r.decision, ElementDecision::Proved { case_splits: 0 });
    assert_eq!(r.recoveries.len(), 1);
    assert_eq!(r.recoveries[0].name, "log2 e");
    assert_eq!(r.recoveries[0].value_seen, "12102203/8388608");
    assert_eq!(r.recoveries[0].format, "f32");
    // Without recovery the rounded constant is a different function, and
    // the difference is real: refuted.
    let mut n = Normalizer::new(&t);
    n.set_constant_recovery(false);
    let d = decide(&mut n, e, e2, &DecideOptions::default());
    let ElementDecision::Refuted(cx) = d else {
        panic!("{d:?}")
    };
    assert_witness(&t, e, e2, &cx);
}

#[test]
fn a_constant_close_to_log2e_is_not_recovered() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let e = t.exp(x);
    let c = t.constant(Rat::new(14427, 10000).unwrap());
    let y = t.mul(x, c);
    let e2 = t.func(Func::Ex2, y);
    assert_refuted(&t, e, e2);
}

#[test]
fn other_recovered_constants() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    // x · (f32 1/√2) = x · rsqrt(2)
    let c = t.from_f32_bits(0x3F35_04F3).unwrap();
    let l = t.mul(x, c);
    let two = t.int(2);
    let r2 = t.rsqrt(two);
    let r = t.mul(x, r2);
    assert_proved(&t, l, r);
    // ex2(x)·ln2-based: lg2(x)·(f64 ln 2) = log(x)
    let ln2 = t.from_f64_bits(std::f64::consts::LN_2.to_bits()).unwrap();
    let l2 = t.func(Func::Lg2, x);
    let l = t.mul(l2, ln2);
    let r = t.func(Func::Log, x);
    assert_proved(&t, l, r);
    // tanh in exp form.
    let th = t.func(Func::Tanh, x);
    let x2 = t.mul(two, x);
    let e = t.exp(x2);
    let one = t.int(1);
    let em = t.sub(e, one);
    let ep = t.add(e, one);
    let q = t.div(em, ep);
    assert_proved(&t, th, q);
    // Triton's tanh: 1 - 2/(ex2(x · f32(2·log2 e)) + 1).
    let c = t.from_f32_bits(0x4038_AA3B).unwrap();
    let y = t.mul(x, c);
    let e = t.func(Func::Ex2, y);
    let ep = t.add(e, one);
    let q = t.div(two, ep);
    let tri = t.sub(one, q);
    let mut n = Normalizer::new(&t);
    let r = decide_with_report(&mut n, th, tri, &DecideOptions::default());
    assert_eq!(r.decision, ElementDecision::Proved { case_splits: 0 });
    assert_eq!(r.recoveries[0].name, "2 · log2 e");
    // Triton attention: ex2(s · (sm_scale · 1.44269504f)) with the scale
    // product computed in the kernel (folded exactly) is exp(s · sm_scale).
    let sm = t.from_f32_bits(0.102_062_07_f32.to_bits()).unwrap();
    let l2e = t.from_f32_bits(0x3FB8_AA3B).unwrap();
    let k = t.mul(sm, l2e);
    let y = t.mul(x, k);
    let lhs = t.func(Func::Ex2, y);
    let xs = t.mul(x, sm);
    let rhs = t.exp(xs);
    assert_proved(&t, lhs, rhs);
}

/// Naive softmax as a shared-memory kernel builds it (tree reductions of
/// the max and of the sum) and online softmax (per-thread running max and
/// rescaled sum over a chunk, then a tree combine of `(m, s)` pairs).
fn softmax_pair(t: &mut Terms, n: usize, threads: usize, i: usize) -> (TermId, TermId) {
    let xs: Vec<TermId> = (0..n as u64).map(|j| t.input(0, j)).collect();
    let tree = |t: &mut Terms, v: &[TermId], f: &dyn Fn(&mut Terms, TermId, TermId) -> TermId| {
        let mut v = v.to_vec();
        while v.len() > 1 {
            v = v
                .chunks(2)
                .map(|p| if p.len() == 2 { f(t, p[0], p[1]) } else { p[0] })
                .collect();
        }
        v[0]
    };
    let m = tree(t, &xs, &|t, a, b| t.max(a, b));
    let es: Vec<TermId> = xs
        .iter()
        .map(|&x| {
            let d = t.sub(x, m);
            t.exp(d)
        })
        .collect();
    let sum = tree(t, &es, &|t, a, b| t.add(a, b));
    let naive = t.div(es[i], sum);

    let chunk = n / threads;
    let mut pairs: Vec<(TermId, TermId)> = (0..threads)
        .map(|k| {
            let mut m = t.neg_inf();
            let mut s = t.int(0);
            for &x in &xs[k * chunk..(k + 1) * chunk] {
                let m2 = t.max(m, x);
                let d = t.sub(m, m2);
                let scale = t.exp(d);
                let d = t.sub(x, m2);
                let e = t.exp(d);
                let rescaled = t.mul(s, scale);
                s = t.add(rescaled, e);
                m = m2;
            }
            (m, s)
        })
        .collect();
    while pairs.len() > 1 {
        pairs = pairs
            .chunks(2)
            .map(|p| {
                let ((m1, s1), (m2, s2)) = (p[0], p[1]);
                let m = t.max(m1, m2);
                let d1 = t.sub(m1, m);
                let e1 = t.exp(d1);
                let d2 = t.sub(m2, m);
                let e2 = t.exp(d2);
                let a = t.mul(s1, e1);
                let b = t.mul(s2, e2);
                (m, t.add(a, b))
            })
            .collect();
    }
    let (m, s) = pairs[0];
    let d = t.sub(xs[i], m);
    let top = t.exp(d);
    (naive, t.div(top, s))
}

#[test]
fn seed_example_naive_vs_online_softmax() {
    for n in [4usize, 32, 128] {
        let mut t = Terms::new();
        let elems: Vec<(TermId, TermId)> = [0, n / 3, n - 1]
            .iter()
            .map(|&i| softmax_pair(&mut t, n, 4, i))
            .collect();
        let mut norm = Normalizer::new(&t);
        for (naive, online) in elems {
            assert_ne!(naive, online);
            let d = decide(&mut norm, naive, online, &DecideOptions::default());
            assert_eq!(d, ElementDecision::Proved { case_splits: 0 }, "N = {n}");
        }
    }
}

#[test]
fn softmax_with_a_wrong_max_is_refuted() {
    // Subtracting the max of all but the last element is still exact
    // (any shift cancels); dividing by a sum that misses a term is not.
    let mut t = Terms::new();
    let (naive, _) = softmax_pair(&mut t, 8, 2, 3);
    let xs: Vec<TermId> = (0..8).map(|j| t.input(0, j)).collect();
    let es: Vec<TermId> = xs.iter().map(|&x| t.exp(x)).collect();
    let short = t.add_many(&es[..7]);
    let bad = t.div(es[3], short);
    assert_refuted(&t, naive, bad);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Basis element `kind` over inputs `a, b, c` (of tensor 0), spelled
    /// plainly or (`alt`) rewritten into an equal form.
    fn basis(t: &mut Terms, kind: u8, p: [u64; 3], alt: bool, swap: bool) -> TermId {
        let a = t.input(0, if swap { 7 } else { p[0] });
        let b = t.input(0, p[1]);
        let c = t.input(0, p[2]);
        let b2 = if p[1] == p[0] {
            t.input(0, (p[0] + 1) % 4)
        } else {
            b
        };
        match kind {
            0 => {
                if alt {
                    t.mul(b, a)
                } else {
                    t.mul(a, b)
                }
            }
            1 => {
                let three = t.int(3);
                if alt {
                    let ab = t.mul(a, b);
                    let a3 = t.mul(three, a);
                    t.add(ab, a3)
                } else {
                    let s = t.add(b, three);
                    t.mul(a, s)
                }
            }
            2 => {
                if alt {
                    let (ea, eb) = (t.exp(a), t.exp(b));
                    t.mul(ea, eb)
                } else {
                    let s = t.add(a, b);
                    t.exp(s)
                }
            }
            3 => {
                if alt {
                    let ba = t.max(b, a);
                    t.max(c, ba)
                } else {
                    let ab = t.max(a, b);
                    t.max(ab, c)
                }
            }
            4 => {
                let (one, two) = (t.int(1), t.int(2));
                let bb = t.mul(b, b);
                let d1 = t.add(bb, one);
                let aa = t.mul(a, a);
                let d2 = t.add(aa, two);
                if alt {
                    let n1 = t.mul(a, d2);
                    let n2 = t.mul(c, d1);
                    let n = t.add(n1, n2);
                    let d = t.mul(d1, d2);
                    t.div(n, d)
                } else {
                    let q1 = t.div(a, d1);
                    let q2 = t.div(c, d2);
                    t.add(q1, q2)
                }
            }
            5 => {
                let (ea, eb) = (t.exp(a), t.exp(b2));
                if alt {
                    let s = t.add(ea, eb);
                    t.div(ea, s)
                } else {
                    let m = t.max(a, b2);
                    let da = t.sub(a, m);
                    let db = t.sub(b2, m);
                    let (fa, fb) = (t.exp(da), t.exp(db));
                    let s = t.add(fa, fb);
                    t.div(fa, s)
                }
            }
            6 => {
                if alt {
                    let cnd = t.cmp(CmpOp::Lt, a, b);
                    t.select(cnd, b, a)
                } else {
                    t.max(a, b)
                }
            }
            _ => {
                if alt {
                    let log2e = t.from_f32_bits(0x3FB8_AA3B).expect("finite");
                    let y = t.mul(a, log2e);
                    t.func(Func::Ex2, y)
                } else {
                    t.exp(a)
                }
            }
        }
    }

    #[derive(Clone, Debug)]
    struct Item {
        coef: i64,
        kind: u8,
        p: [u64; 3],
    }

    fn items() -> impl Strategy<Value = Vec<Item>> {
        prop::collection::vec(
            (1i64..6, 0u8..8, [0u64..4, 0u64..4, 0u64..4]).prop_map(|(coef, kind, p)| Item {
                coef,
                kind,
                p,
            }),
            1..6,
        )
        .prop_map(|mut v| {
            // At most one select-vs-max element: each multiplies the cases.
            let mut seen = false;
            for it in &mut v {
                if it.kind == 6 {
                    if seen {
                        it.kind = 0;
                    }
                    seen = true;
                }
            }
            v
        })
    }

    #[derive(Clone, Copy, Debug)]
    enum Perturb {
        None,
        Coef(usize),
        Drop(usize),
        Swap(usize),
    }

    /// `Σ c_k·u_k` in order (`alt`: rewritten elements, reversed, summed as
    /// a right-leaning chain), with one perturbation.
    fn build(t: &mut Terms, items: &[Item], alt: bool, perturb: Perturb) -> TermId {
        let mut parts = Vec::new();
        for (k, it) in items.iter().enumerate() {
            let mut coef = it.coef;
            match perturb {
                Perturb::Drop(j) if j == k => continue,
                Perturb::Coef(j) if j == k => coef += 1,
                _ => {}
            }
            let swap = matches!(perturb, Perturb::Swap(j) if j == k);
            let u = basis(t, it.kind, it.p, alt, swap);
            let c = t.int(coef);
            parts.push(if alt { t.mul(u, c) } else { t.mul(c, u) });
        }
        if !alt {
            return t.add_many(&parts);
        }
        let mut acc = t.int(0);
        for &p in parts.iter() {
            acc = t.add(p, acc);
        }
        acc
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn equal_by_construction_is_proved(items in items()) {
            let mut t = Terms::new();
            let lhs = build(&mut t, &items, false, Perturb::None);
            let rhs = build(&mut t, &items, true, Perturb::None);
            let d = run(&t, lhs, rhs);
            prop_assert!(matches!(d, ElementDecision::Proved { .. }), "{:?}", d);
            let p = Presampler::new(&DecideOptions::default()).refute(&t, lhs, rhs);
            prop_assert!(p.is_none(), "presampled a refutation of equal terms: {:?}", p);
        }

        #[test]
        fn single_perturbations_are_refuted(
            items in items(),
            which in any::<prop::sample::Index>(),
            how in 0u8..3,
        ) {
            let mut t = Terms::new();
            let k = which.index(items.len());
            let perturb = match how {
                0 => Perturb::Coef(k),
                1 => Perturb::Drop(k),
                _ => Perturb::Swap(k),
            };
            let lhs = build(&mut t, &items, false, Perturb::None);
            let rhs = build(&mut t, &items, true, perturb);
            let d = run(&t, lhs, rhs);
            let ElementDecision::Refuted(cx) = d else {
                return Err(TestCaseError::fail(format!("{perturb:?}: {d:?}")));
            };
            assert_witness(&t, lhs, rhs, &cx);
            if let Some(cx) = Presampler::new(&DecideOptions::default()).refute(&t, lhs, rhs) {
                assert_witness(&t, lhs, rhs, &cx);
            }
        }
    }
}

/// `select(0 < x, x, x/8)` against `max(x/8, x)`: the case "0 < x and
/// max = x/8" needs `x ≤ x/8` with `x > 0`, infeasible only by linear
/// arithmetic (no syntactic cycle); every feasible case proves.
#[test]
fn linearly_infeasible_case_is_skipped() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let zero = t.int(0);
    let eighth = t.rational(num_rational::BigRational::new(1.into(), 8.into()));
    let x8 = t.mul(x, eighth);
    let c = t.cmp(CmpOp::Lt, zero, x);
    let leaky = t.select(c, x, x8);
    let mx = t.max(x8, x);
    assert!(assert_proved(&t, leaky, mx) >= 2);
    // Not vacuous: with slope 2 the max is the other operand for x > 0.
    let two = t.int(2);
    let x2 = t.mul(x, two);
    let leaky2 = t.select(c, x, x2);
    let mx2 = t.max(x2, x);
    assert!(!matches!(
        run(&t, leaky2, mx2),
        ElementDecision::Proved { .. }
    ));
}

/// `min(6, max(0, x))` against `max(0, x)`: they differ only for `x > 6`,
/// which no sampling distribution reaches; the case whose residual
/// `6 − x` survives has the linear facts `x ≥ 0`, `6 < x`, and their
/// point is the witness.
#[test]
fn relu6_dropped_clamp_is_refuted_inside_its_case() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let zero = t.int(0);
    let six = t.int(6);
    let relu = t.max(zero, x);
    let relu6 = t.min(six, relu);
    let opts = DecideOptions {
        samples: 4,
        ..DecideOptions::default()
    };
    let ElementDecision::Refuted(cx) = decide(&mut Normalizer::new(&t), relu6, relu, &opts) else {
        panic!("not refuted")
    };
    assert_witness(&t, relu6, relu, &cx);
    assert!(cx.inputs[0].value > 6.0, "{cx:?}");
}

#[test]
fn pow_general_is_not_exp_of_log() {
    // C's pow(x, y) and fast math's 2^(y·lg2 x) = e^{y·ln x} differ only
    // at x < 0 (an integer y gives a real pow, the other is undefined):
    // never proved; refuted with a witness where the fast form is
    // certainly undefined (NaN on hardware) and pow is a real number.
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let y = t.input(1, 0);
    let p = t.pow(x, y);
    let l = t.func(Func::Lg2, x);
    let e = t.mul(y, l);
    let fast = t.func(Func::Ex2, e);
    let ElementDecision::Refuted(cx) = run(&t, fast, p) else {
        panic!("not refuted");
    };
    assert!(cx.reference.is_nan() && cx.candidate.is_finite(), "{cx:?}");
    let (xv, yv) = (cx.inputs[0].value, cx.inputs[1].value);
    assert!(xv < 0.0 && yv.fract() == 0.0, "{cx:?}");
    assert_eq!(cx.candidate, xv.powf(yv));
    assert!(check_counterexample(&t, fast, p, &cx));
    // The same witness with the sides' NaN-ness not certain is rejected:
    // a finite pair at that point does not separate them.
    let swapped = Counterexample {
        reference: cx.candidate,
        candidate: cx.candidate,
        ..cx.clone()
    };
    assert!(!check_counterexample(&t, fast, p, &swapped) || xv.powf(yv).is_nan());
    // The same pow is proved by identity, a different one is refuted.
    let p2 = t.pow(x, y);
    assert_proved(&t, p, p2);
}

#[test]
fn pow_with_constant_exponents() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    // pow(x, 1.5) = ex2(1.5·lg2 x) (fast math's __powf(x, 1.5f)).
    let c = t.constant(Rat::new(3, 2).expect("nonzero"));
    let p = t.pow(x, c);
    let l = t.func(Func::Lg2, x);
    let e = t.mul(c, l);
    let fast = t.func(Func::Ex2, e);
    assert_proved(&t, p, fast);
    // pow(x, 2) = x·x; pow(x, 3) ≠ x·x, with an exact witness.
    let two = t.int(2);
    let three = t.int(3);
    let sq = t.mul(x, x);
    let p2 = t.pow(x, two);
    assert_proved(&t, p2, sq);
    let p3 = t.pow(x, three);
    assert_refuted(&t, p3, sq);
    // pow(x, -0.5) = 1/sqrt(x) is not known to the normal form: unknown,
    // never refuted (they are equal where both are defined).
    let mh = t.constant(Rat::new(-1, 2).expect("nonzero"));
    let pm = t.pow(x, mh);
    let rs = t.rsqrt(x);
    assert!(!matches!(run(&t, pm, rs), ElementDecision::Refuted(_)));
}

#[test]
fn undefined_only_counts_when_certain_and_carried_by_arithmetic() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let zero = t.int(0);
    // ln x vs 0: at x < 0 the left side is certainly undefined, so a
    // witness exists (ln x = 0 only at x = 1).
    let l = t.func(Func::Log, x);
    let cx = match run(&t, l, zero) {
        ElementDecision::Refuted(cx) => cx,
        d => panic!("{d:?}"),
    };
    assert!(check_counterexample(&t, l, zero, &cx));
    // max(ln x, 0) vs max(ln x, 0) + 0: proved, nothing to refute; and
    // max(ln x, 0) vs 0 is never refuted through NaN (PTX max returns the
    // non-NaN operand), only where ln x > 0 really.
    let m = t.max(l, zero);
    if let ElementDecision::Refuted(cx) = run(&t, m, zero) {
        assert!(
            cx.reference.is_finite() && cx.candidate.is_finite(),
            "{cx:?}"
        );
        assert!(cx.inputs[0].value > 1.0, "{cx:?}");
    }
    // Both sides undefined at the same point: not a difference.
    let s = t.func(Func::Sqrt, x);
    let ls = t.func(Func::Log, s);
    let half = t.constant(Rat::new(1, 2).expect("nonzero"));
    let hl = t.mul(half, l);
    assert!(
        eval_enclosures(&t, &[hl, ls], &|_, _| -4.0, &hashbrown::HashMap::new())
            == [Enclosure::Undefined, Enclosure::Undefined]
    );
    assert!(!matches!(run(&t, hl, ls), ElementDecision::Refuted(cx) if cx.inputs[0].value < 0.0));
}

#[test]
fn log10_and_exp10_with_recovered_constants() {
    // log10f's default expansion is log x / log 10; fast math writes
    // lg2(x) · fl32(log10 2). exp10f: e^{x·log 10} vs ex2(x · fl32(log2 10)).
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let l = t.func(Func::Log, x);
    let ten = t.int(10);
    let l10 = t.func(Func::Log, ten);
    let r10 = t.recip(l10);
    let default_log10 = t.mul(l, r10);
    let lg = t.func(Func::Lg2, x);
    // 0f3E9A209B, the literal nvcc's fast log10f multiplies by.
    let lit = f32::from_bits(0x3E9A_209B);
    let c = t.constant(crate::normal::rat_of_f64(f64::from(lit)).unwrap());
    let fast_log10 = t.mul(lg, c);
    // The f32 literal nvcc uses is the nearest f32 of log10 2.
    assert_eq!(lit, std::f64::consts::LOG10_2 as f32);
    assert_proved(&t, default_log10, fast_log10);
    let xl = t.mul(x, l10);
    let default_exp10 = t.exp(xl);
    let c2 =
        t.constant(crate::normal::rat_of_f64(f64::from(std::f64::consts::LOG2_10 as f32)).unwrap());
    let xc = t.mul(x, c2);
    let fast_exp10 = t.func(Func::Ex2, xc);
    assert_proved(&t, default_exp10, fast_exp10);
    // ln(100) = 2·ln 10, ln(1/1000) = −3·ln 10, ln(1024) = 10·ln 2.
    let hundred = t.int(100);
    let l100 = t.func(Func::Log, hundred);
    let two_l10 = t.add(l10, l10);
    assert_proved(&t, l100, two_l10);
    let milli = t.constant(Rat::new(1, 1000).expect("nonzero"));
    let lm = t.func(Func::Log, milli);
    let three = t.int(-3);
    let m3 = t.mul(three, l10);
    assert_proved(&t, lm, m3);
    // log10 x is not ln x, and ln 3 is not a multiple of ln 10.
    let d = run(&t, default_log10, l);
    assert!(matches!(d, ElementDecision::Refuted(_)), "{d:?}");
    let three_c = t.int(3);
    let l3 = t.func(Func::Log, three_c);
    assert!(!matches!(run(&t, l3, l10), ElementDecision::Proved { .. }));
}

#[test]
fn input_grids_round_onto_the_fp8_values() {
    // e5m2: 2 mantissa bits, normal exponents from -14, largest 57344.
    let g = InputGrid {
        mant_bits: 2,
        min_exp: -14,
        max: 57344.0,
    };
    assert_eq!(g.round(1.875), 2.0);
    assert_eq!(g.round(1.25), 1.25);
    assert_eq!(g.round(-1.625), -1.75);
    assert_eq!(g.round(1e9), 57344.0);
    assert_eq!(g.round(0.0), 0.0);
    // e4m3 subnormals: multiples of 2^-9 below 2^-6.
    let e4 = InputGrid {
        mant_bits: 3,
        min_exp: -6,
        max: 448.0,
    };
    assert_eq!(e4.round(3.0 / 1024.0), 2.0 / 512.0);
    assert_eq!(e4.round(447.0), 448.0);
    assert_eq!(e4.round(1.1), 1.125);
}
