//! Property tests: canonicalisation is invariant under commutativity and
//! associativity, preserves values, is idempotent, and hashes/graphs are
//! store-independent.

use proptest::prelude::*;
use ptxeq_terms::{CmpOp, TermId, Terms};

/// A random expression over a few inputs and small constants.
#[derive(Clone, Debug)]
enum E {
    In(u64),
    C(i64),
    Add(Vec<E>),
    Mul(Vec<E>),
    Max(Vec<E>),
    Min(Vec<E>),
    Neg(Box<E>),
    Recip(Box<E>),
    Exp(Box<E>),
    Select(Box<E>, Box<E>, Box<E>, Box<E>),
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![(0u64..4).prop_map(E::In), (-3i64..4).prop_map(E::C)];
    leaf.prop_recursive(4, 24, 4, |inner| {
        let list = prop::collection::vec(inner.clone(), 2..4);
        prop_oneof![
            list.clone().prop_map(E::Add),
            list.clone().prop_map(E::Mul),
            list.clone().prop_map(E::Max),
            list.prop_map(E::Min),
            inner.clone().prop_map(|e| E::Neg(Box::new(e))),
            inner.clone().prop_map(|e| E::Recip(Box::new(e))),
            inner.clone().prop_map(|e| E::Exp(Box::new(e))),
            (inner.clone(), inner.clone(), inner.clone(), inner).prop_map(|(a, b, c, d)| {
                E::Select(Box::new(a), Box::new(b), Box::new(c), Box::new(d))
            }),
        ]
    })
}

fn leaves(e: &E) -> usize {
    match e {
        E::In(_) | E::C(_) => 1,
        E::Add(v) | E::Mul(v) | E::Max(v) | E::Min(v) => v.iter().map(leaves).sum(),
        E::Neg(a) | E::Recip(a) | E::Exp(a) => leaves(a) + 1,
        E::Select(a, b, c, d) => leaves(a) + leaves(b) + leaves(c) + leaves(d),
    }
}

/// Tiny deterministic generator for the "other way" of building.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

#[derive(Clone, Copy)]
enum Ac {
    Add,
    Mul,
    Max,
    Min,
}

fn combine(t: &mut Terms, op: Ac, a: TermId, b: TermId) -> TermId {
    match op {
        Ac::Add => t.add(a, b),
        Ac::Mul => t.mul(a, b),
        Ac::Max => t.max(a, b),
        Ac::Min => t.min(a, b),
    }
}

/// Builds `e`; with `rng`, AC operands are shuffled and associated as a
/// random binary tree, otherwise folded left to right.
fn build(t: &mut Terms, e: &E, rng: &mut Option<Rng>) -> TermId {
    let ac = |t: &mut Terms, op: Ac, v: &[E], rng: &mut Option<Rng>| {
        let mut ids: Vec<TermId> = v.iter().map(|x| build(t, x, rng)).collect();
        match rng {
            None => {
                let mut acc = ids[0];
                for &x in &ids[1..] {
                    acc = combine(t, op, acc, x);
                }
                acc
            }
            Some(r) => {
                // Random permutation, then random pairwise combination.
                for i in (1..ids.len()).rev() {
                    let j = (r.next() % (i as u64 + 1)) as usize;
                    ids.swap(i, j);
                }
                while ids.len() > 1 {
                    let i = (r.next() % (ids.len() as u64 - 1)) as usize;
                    let (a, b) = (ids[i], ids[i + 1]);
                    let c = if r.next() % 2 == 0 {
                        combine(t, op, a, b)
                    } else {
                        combine(t, op, b, a)
                    };
                    ids.splice(i..i + 2, [c]);
                }
                ids[0]
            }
        }
    };
    match e {
        E::In(i) => t.input(0, *i),
        E::C(c) => t.int(*c),
        E::Add(v) => ac(t, Ac::Add, v, rng),
        E::Mul(v) => ac(t, Ac::Mul, v, rng),
        E::Max(v) => ac(t, Ac::Max, v, rng),
        E::Min(v) => ac(t, Ac::Min, v, rng),
        E::Neg(a) => {
            let a = build(t, a, rng);
            t.neg(a)
        }
        E::Recip(a) => {
            let a = build(t, a, rng);
            t.recip(a)
        }
        E::Exp(a) => {
            let a = build(t, a, rng);
            t.exp(a)
        }
        E::Select(a, b, c, d) => {
            let (a, b) = (build(t, a, rng), build(t, b, rng));
            let cond = t.cmp(CmpOp::Lt, a, b);
            let (c, d) = (build(t, c, rng), build(t, d, rng));
            t.select(cond, c, d)
        }
    }
}

/// Direct `f64` evaluation of the expression tree (no canonicalisation),
/// also returning the largest magnitude met (to scale the tolerance).
fn naive(e: &E, x: &[f64]) -> (f64, f64) {
    let many = |v: &[E], f: fn(f64, f64) -> f64| {
        let mut big = 0f64;
        let mut acc: Option<f64> = None;
        for item in v {
            let (y, b) = naive(item, x);
            big = big.max(b);
            acc = Some(match acc {
                None => y,
                Some(a) => f(a, y),
            });
        }
        let r = acc.unwrap_or(f64::NAN);
        (r, big.max(r.abs()))
    };
    match e {
        E::In(i) => (x[*i as usize], x[*i as usize].abs()),
        E::C(c) => (*c as f64, (*c as f64).abs()),
        E::Add(v) => many(v, |a, b| a + b),
        E::Mul(v) => many(v, |a, b| a * b),
        E::Max(v) => many(v, f64::max),
        E::Min(v) => many(v, f64::min),
        E::Neg(a) => {
            let (y, b) = naive(a, x);
            (-y, b)
        }
        E::Recip(a) => {
            let (y, b) = naive(a, x);
            (1.0 / y, b.max((1.0 / y).abs()))
        }
        E::Exp(a) => {
            let (y, b) = naive(a, x);
            (y.exp(), b.max(y.exp().abs()))
        }
        E::Select(a, b, c, d) => {
            let (ya, ba) = naive(a, x);
            let (yb, bb) = naive(b, x);
            let (yc, bc) = naive(c, x);
            let (yd, bd) = naive(d, x);
            let r = if ya < yb { yc } else { yd };
            // A comparison of two values within rounding of each other is
            // ill-conditioned in f64 (`x + 3 - 3 < x` can hold after
            // rounding, never over the reals): an infinite scale makes the
            // property reject the input instead of trusting the f64 branch.
            let tie = (ya - yb).abs() <= 1e-9 * (1.0 + ba.max(bb));
            let scale = if tie {
                f64::INFINITY
            } else {
                ba.max(bb).max(bc).max(bd)
            };
            (r, scale)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Commuted and reassociated builds are the same node (while every
    /// AC node stays within the flattening limit).
    #[test]
    fn ac_variants_are_one_node(e in expr(), seed in any::<u64>()) {
        prop_assume!(leaves(&e) <= ptxeq_terms::FLATTEN_LIMIT);
        let mut t = Terms::new();
        let a = build(&mut t, &e, &mut None);
        let b = build(&mut t, &e, &mut Some(Rng(seed)));
        prop_assert_eq!(a, b, "{} vs {}", t.display(a), t.display(b));
        // And in a second store, built the other way first: same hash.
        let mut u = Terms::new();
        let b2 = build(&mut u, &e, &mut Some(Rng(seed ^ 0x5555)));
        prop_assert_eq!(t.hash128(a), u.hash128(b2));
        prop_assert_eq!(t.export(&[a]), u.export(&[b2]));
    }

    /// Canonicalisation preserves the value (where the naive evaluation is
    /// well-conditioned), so semantically different terms stay different.
    #[test]
    fn construction_preserves_value(e in expr(), xs in prop::collection::vec(0.5f64..2.0, 4)) {
        let mut t = Terms::new();
        let id = build(&mut t, &e, &mut None);
        let (want, scale) = naive(&e, &xs);
        let got = t.eval_f64(id, &|_, i| xs[i as usize]);
        prop_assume!(want.is_finite() && scale.is_finite() && scale < 1e12);
        prop_assert!(
            (got - want).abs() <= 1e-9 * (1.0 + scale),
            "{} = {} but naive = {} (scale {})", t.display(id), got, want, scale
        );
    }

    /// Every interned node is a fixed point of its constructor, distinct
    /// nodes have distinct hashes, and export/import is lossless.
    #[test]
    fn store_invariants(es in prop::collection::vec(expr(), 1..6)) {
        let mut t = Terms::new();
        let roots: Vec<TermId> = es.iter().map(|e| build(&mut t, e, &mut None)).collect();
        let mut seen = std::collections::HashSet::new();
        let all: Vec<TermId> = t.ids().collect();
        for id in all {
            let node = t.node(id).clone();
            let rebuilt = t.rebuild(&node);
            prop_assert_eq!(rebuilt, id, "not idempotent: {:?}", node);
            prop_assert!(seen.insert(t.hash128(id)));
        }
        // The binary fast paths build exactly what the general
        // constructors build, for every pair of terms in the store.
        let reals: Vec<TermId> = t.ids().filter(|&i| !t.is_bool(i)).collect();
        for (k, &a) in reals.iter().enumerate() {
            for &b in reals.iter().skip(k % 3).step_by(3) {
                let fast = t.add(a, b);
                prop_assert_eq!(fast, t.add_many(&[a, b]));
                let fast = t.mul(a, b);
                prop_assert_eq!(fast, t.mul_many(&[a, b]));
            }
        }
        let g = t.export(&roots);
        let mut fresh = Terms::new();
        let r2 = fresh.import(&g);
        for (&a, &b) in roots.iter().zip(&r2) {
            prop_assert_eq!(t.hash128(a), fresh.hash128(b));
        }
        prop_assert_eq!(fresh.export(&r2).content_hash(), g.content_hash());
    }
}
