//! Hand-derived equalities and non-equalities of the normal form.

use super::*;

fn check(t: &Terms, a: TermId, b: TermId) -> Decision {
    equal(&mut Normalizer::new(t), a, b)
}

fn proved(t: &Terms, a: TermId, b: TermId) {
    let d = check(t, a, b);
    assert_eq!(d, Decision::Proved, "{} vs {}", t.display(a), t.display(b));
}

fn not_proved(t: &Terms, a: TermId, b: TermId) {
    let d = check(t, a, b);
    assert!(matches!(d, Decision::NotProved { .. }), "{d:?}");
}

#[test]
fn commutativity() {
    let mut t = Terms::new();
    let (x, y) = (t.input(0, 0), t.input(0, 1));
    let a = t.add(x, y);
    let b = t.add(y, x);
    proved(&t, a, b);
}

#[test]
fn difference_of_squares() {
    let mut t = Terms::new();
    let (x, y) = (t.input(0, 0), t.input(0, 1));
    let s = t.add(x, y);
    let d = t.sub(x, y);
    let lhs = t.mul(s, d);
    let xx = t.mul(x, x);
    let yy = t.mul(y, y);
    let rhs = t.sub(xx, yy);
    proved(&t, lhs, rhs);
}

#[test]
fn exp_of_sum() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let (ea, eb) = (t.exp(a), t.exp(b));
    let lhs = t.mul(ea, eb);
    let s = t.add(a, b);
    let rhs = t.exp(s);
    proved(&t, lhs, rhs);
    // exp(a)/exp(b) = exp(a - b): a single-term denominator moves up.
    let q = t.div(ea, eb);
    let d = t.sub(a, b);
    let e = t.exp(d);
    proved(&t, q, e);
}

#[test]
fn ex2_of_sum() {
    let mut t = Terms::new();
    let (a, b) = (t.input(0, 0), t.input(0, 1));
    let ea = t.func(Func::Ex2, a);
    let eb = t.func(Func::Ex2, b);
    let lhs = t.mul(ea, eb);
    let s = t.add(a, b);
    let rhs = t.func(Func::Ex2, s);
    proved(&t, lhs, rhs);
    // ex2 is not exp.
    let e = t.exp(s);
    not_proved(&t, rhs, e);
}

#[test]
fn double_reciprocal() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let r = t.recip(x);
    let rr = t.recip(r);
    proved(&t, rr, x);
    // Also through a node the builder does not fold.
    let one = t.int(1);
    let q = t.div(one, x);
    let s = t.add(x, q);
    let rs = t.recip(s);
    let back = t.recip(rs);
    proved(&t, back, s);
}

#[test]
fn fraction_sum() {
    let mut t = Terms::new();
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| t.input(0, i));
    let ab = t.div(a, b);
    let cd = t.div(c, d);
    let lhs = t.add(ab, cd);
    let ad = t.mul(a, d);
    let bc = t.mul(b, c);
    let n = t.add(ad, bc);
    let bd = t.mul(b, d);
    let rhs = t.div(n, bd);
    proved(&t, lhs, rhs);
}

#[test]
fn different_sums() {
    let mut t = Terms::new();
    let (x, y) = (t.input(0, 0), t.input(0, 1));
    let two = t.int(2);
    let a = t.add(x, y);
    let y2 = t.mul(two, y);
    let b = t.add(x, y2);
    not_proved(&t, a, b);
}

/// `exp(x_i - m) / Σ_j exp(x_j - m)` and `exp(x_i) / Σ_j exp(x_j)`, with
/// `m = max_j x_j` (an opaque atom) — or `exp(m - x_i)` when `flip`.
fn softmax(t: &mut Terms, n: u64, i: u64, flip: bool) -> (TermId, TermId) {
    let xs: Vec<TermId> = (0..n).map(|j| t.input(0, j)).collect();
    let m = t.max_many(&xs);
    let shifted: Vec<TermId> = xs
        .iter()
        .map(|&x| {
            let d = t.sub(x, m);
            t.exp(d)
        })
        .collect();
    let den = t.add_many(&shifted);
    let top = if flip {
        let d = t.sub(m, xs[i as usize]);
        t.exp(d)
    } else {
        shifted[i as usize]
    };
    let lhs = t.div(top, den);
    let plain: Vec<TermId> = xs.iter().map(|&x| t.exp(x)).collect();
    let den2 = t.add_many(&plain);
    let rhs = t.div(plain[i as usize], den2);
    (lhs, rhs)
}

#[test]
fn softmax_seed_example() {
    let mut t = Terms::new();
    for i in 0..4 {
        let (lhs, rhs) = softmax(&mut t, 4, i, false);
        assert_ne!(lhs, rhs, "distinct nodes: the normal form does the work");
        proved(&t, lhs, rhs);
    }
}

#[test]
fn softmax_128_without_cross_multiplying() {
    // Budget far below 128·128: only the single-term factor path fits.
    let mut t = Terms::new();
    let (lhs, rhs) = softmax(&mut t, 128, 5, false);
    assert_eq!(
        equal(&mut Normalizer::with_budget(&t, 1000), lhs, rhs),
        Decision::Proved
    );
}

#[test]
fn perturbed_softmax() {
    let mut t = Terms::new();
    let (lhs, rhs) = softmax(&mut t, 4, 0, true);
    let Decision::NotProved { residual } = check(&t, lhs, rhs) else {
        panic!("proved")
    };
    assert!(residual.contains("e^("), "{residual}");
    println!("{residual}");
}

#[test]
fn online_softmax_denominator() {
    // s1 = e^{x0-m1}, m1 = x0; s2 = s1·e^{m1-m2} + e^{x1-m2}: equals
    // (e^{x0} + e^{x1})·e^{-m2}.
    let mut t = Terms::new();
    let (x0, x1) = (t.input(0, 0), t.input(0, 1));
    let m2 = t.max(x0, x1);
    let d = t.sub(x0, m2);
    let lhs_a = t.exp(d);
    let d = t.sub(x1, m2);
    let lhs_b = t.exp(d);
    let lhs = t.add(lhs_a, lhs_b);
    let (e0, e1) = (t.exp(x0), t.exp(x1));
    let s = t.add(e0, e1);
    let nm = t.neg(m2);
    let f = t.exp(nm);
    let rhs = t.mul(s, f);
    proved(&t, lhs, rhs);
}

#[test]
fn budget_is_an_error_not_a_hang() {
    let mut t = Terms::new();
    let xs: Vec<TermId> = (0..50).map(|j| t.input(0, j)).collect();
    let s = t.add_many(&xs);
    let p = t.mul(s, s);
    let p4 = t.mul(p, p);
    let d = check(&t, p4, s);
    assert!(
        matches!(d, Decision::Unknown(NormalizeError::TooLarge { .. })),
        "{d:?}"
    );
}

#[test]
fn non_reals_and_division_by_zero() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let inf = t.pos_inf();
    let d = check(&t, inf, x);
    assert!(
        matches!(d, Decision::Unknown(NormalizeError::NotReal(_))),
        "{d:?}"
    );
    let z = t.sub(x, x);
    let r = t.recip(z);
    let d = check(&t, r, x);
    assert!(matches!(d, Decision::Unknown(_)), "{d:?}");
}

/// The seed paper's pair: online softmax (running max `m_k`, running sum
/// rescaled by `e^{m_{k-1} - m_k}`) against the naive one; the
/// exponentials telescope to `Σ_j e^{x_j - m_n}`.
#[test]
fn online_vs_naive_softmax() {
    let n = 32;
    let mut t = Terms::new();
    let (naive, plain) = softmax(&mut t, n, 7, false);
    let xs: Vec<TermId> = (0..n).map(|j| t.input(0, j)).collect();
    let mut m = t.neg_inf();
    let mut s = t.int(0);
    for &x in &xs {
        let m2 = t.max(m, x);
        let d = t.sub(m, m2);
        let scale = t.exp(d);
        let d = t.sub(x, m2);
        let e = t.exp(d);
        let rescaled = t.mul(s, scale);
        s = t.add(rescaled, e);
        m = m2;
    }
    let d = t.sub(xs[7], m);
    let top = t.exp(d);
    let online = t.div(top, s);
    proved(&t, online, naive);
    proved(&t, online, plain);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// `Σ c_i·exp(x_a + x_b)/(x_d + 2)` against the same sum reversed,
    /// each term rewritten as `exp(x_a)·exp(x_b)·c_i·recip(x_d + 2)`; and
    /// a single changed coefficient, which must not be proved.
    fn build(t: &mut Terms, items: &[(i64, u64, u64, u64)], rewrite: bool) -> TermId {
        let two = t.int(2);
        let mut parts = Vec::new();
        for &(c, a, b, d) in items {
            let (xa, xb, xd) = (t.input(0, a), t.input(0, b), t.input(0, d));
            let c = t.int(c);
            let den = t.add(xd, two);
            let part = if rewrite {
                let (ea, eb) = (t.exp(xa), t.exp(xb));
                let r = t.recip(den);
                t.mul_many(&[r, eb, c, ea])
            } else {
                let s = t.add(xa, xb);
                let e = t.exp(s);
                let ce = t.mul(c, e);
                t.div(ce, den)
            };
            parts.push(part);
        }
        if rewrite {
            parts.reverse();
        }
        t.add_many(&parts)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn rewrites_proved_perturbations_not(
            items in prop::collection::vec((1i64..5, 0u64..4, 0u64..4, 0u64..3), 1..6),
            which in any::<prop::sample::Index>(),
        ) {
            let mut t = Terms::new();
            let lhs = build(&mut t, &items, false);
            let rhs = build(&mut t, &items, true);
            prop_assert_eq!(check(&t, lhs, rhs), Decision::Proved);
            let mut bad = items.clone();
            bad[which.index(items.len())].0 += 5;
            let off = build(&mut t, &bad, true);
            let d = check(&t, lhs, off);
            prop_assert!(matches!(d, Decision::NotProved { .. }), "{:?}", d);
        }
    }
}

#[test]
fn long_dot_product_is_linear() {
    // A GEMM-shaped element: Σ_k a_k·b_k, 4096 terms, summed two ways.
    let mut t = Terms::new();
    let prods: Vec<TermId> = (0..4096)
        .map(|k| {
            let (a, b) = (t.input(0, k), t.input(1, k));
            t.mul(a, b)
        })
        .collect();
    let flat = t.add_many(&prods);
    let mut chain = t.int(0);
    for &p in prods.iter().rev() {
        chain = t.add(p, chain);
    }
    let start = std::time::Instant::now();
    let mut n = Normalizer::new(&t);
    assert_eq!(n.normalize(flat).unwrap().num.num_terms(), 4096);
    assert_eq!(equal(&mut n, flat, chain), Decision::Proved);
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}
