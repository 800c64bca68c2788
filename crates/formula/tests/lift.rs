//! The generaliser against the formula language itself: a formula is
//! instantiated at every element, the element terms are lifted, and the
//! lifted text must parse, compile and be proved equal, element by
//! element, to the original (the decision procedure of the checker).

use ptxeq_decide::decide::{DecideOptions, ElementDecision, decide};
use ptxeq_decide::normal::Normalizer;
use ptxeq_formula::lift::{Naming, lift_tensor};
use ptxeq_formula::{Context, ScalarDecl, ScalarValue, TensorDecl, compile, render};
use ptxeq_terms::Terms;

fn t(name: &str, id: u32, shape: &[u64], input: bool) -> TensorDecl {
    TensorDecl {
        name: name.into(),
        id,
        shape: shape.to_vec(),
        readable: input,
        writable: !input,
    }
}

fn elements(shape: &[u64]) -> Vec<Vec<u64>> {
    let n: u64 = shape.iter().product();
    (0..n)
        .map(|flat| {
            let mut idx = vec![0u64; shape.len()];
            let mut r = flat;
            for k in (0..idx.len()).rev() {
                idx[k] = r % shape[k];
                r /= shape[k];
            }
            idx
        })
        .collect()
}

/// Lifts `src`'s output `y` and proves the lifted formula equal to it.
fn round_trip(src: &str, ctx: &Context) -> String {
    let y = ctx.tensors.iter().find(|t| t.name == "y").expect("y");
    let c = compile(src, ctx).unwrap_or_else(|d| panic!("{}", render(&d, "src", src)));
    let mut terms = Terms::new();
    let idx = elements(&y.shape);
    let originals: Vec<_> = {
        let mut inst = c.instance(&mut terms);
        idx.iter()
            .map(|i| inst.element(0, i).expect("instantiates"))
            .collect()
    };
    let names: Vec<String> = ctx.tensors.iter().map(|t| t.name.clone()).collect();
    let shapes: Vec<Vec<u64>> = ctx.tensors.iter().map(|t| t.shape.clone()).collect();
    let naming = Naming {
        names: &names,
        shapes: &shapes,
        first_symbol: names.len() as u32,
    };
    let elems: Vec<(Vec<u64>, _)> = idx.iter().cloned().zip(originals.iter().copied()).collect();
    let lifted = lift_tensor(&terms, "y", y.shape.len(), &elems, &naming)
        .unwrap_or_else(|why| panic!("{src}: not lifted: {why}"))
        .text();
    let lc = compile(&lifted, ctx).unwrap_or_else(|d| panic!("{}", render(&d, "lifted", &lifted)));
    let again: Vec<_> = {
        let mut inst = lc.instance(&mut terms);
        idx.iter()
            .map(|i| inst.element(0, i).expect("instantiates"))
            .collect()
    };
    let mut n = Normalizer::new(&terms);
    for ((i, a), b) in idx.iter().zip(&originals).zip(&again) {
        let d = decide(&mut n, *a, *b, &DecideOptions::default());
        assert!(
            matches!(d, ElementDecision::Proved { .. }),
            "{src} → {lifted}: element {i:?}: {d:?}"
        );
    }
    lifted
}

fn ctx(tensors: Vec<TensorDecl>) -> Context {
    Context {
        tensors,
        scalars: vec![ScalarDecl {
            name: "K".into(),
            value: ScalarValue::Int(5),
        }],
    }
}

#[test]
fn elementwise_maps_round_trip() {
    let c = ctx(vec![
        t("x", 0, &[3, 4], true),
        t("w", 1, &[4], true),
        t("y", 2, &[3, 4], false),
    ]);
    round_trip("y[i, j] = exp(x[i, j]) * 2 + w[j];", &c);
    round_trip("y[i, j] = tanh(x[i, j]) / (1 + x[i, j]^2);", &c);
    round_trip("y[i, j] = min(max(x[i, j], 0), 6);", &c);
    round_trip("y[i, j] = gelu(x[i, j]);", &c);
}

#[test]
fn transposes_and_shifts_round_trip() {
    let c = ctx(vec![t("x", 0, &[4, 3], true), t("y", 1, &[3, 4], false)]);
    let f = round_trip("y[i, j] = x[j, i];", &c);
    assert_eq!(f, "y[i0, i1] = x[i1, i0];");
    let c = ctx(vec![t("x", 0, &[10], true), t("y", 1, &[8], false)]);
    let f = round_trip("y[i] = x[i + 2] - x[i];", &c);
    assert!(f.contains("x[i0 + 2]"), "{f}");
}

#[test]
fn reductions_round_trip() {
    let c = ctx(vec![
        t("x", 0, &[3, 5], true),
        t("w", 1, &[5], true),
        t("y", 2, &[3], false),
    ]);
    let f = round_trip("y[i] = sum(k in 0..K, x[i, k] * w[k]);", &c);
    assert!(f.contains("sum(i1 in 0..5"), "{f}");
    round_trip("y[i] = max(k in 0..K, x[i, k]);", &c);
    round_trip("y[i] = log(sum(k in 0..K, exp(x[i, k])));", &c);
    let c = ctx(vec![t("x", 0, &[3, 6], true), t("y", 1, &[3, 6], false)]);
    round_trip("y[i, j] = softmax(x[i, :])[j];", &c);
}

#[test]
fn causal_prefixes_round_trip() {
    // A reduction whose length grows with the row: a prefix range.
    let c = ctx(vec![
        t("x", 0, &[6, 6], true),
        t("v", 1, &[6, 3], true),
        t("y", 2, &[6, 3], false),
    ]);
    let f = round_trip(
        "let m[i] = max(k in 0..i + 1, x[i, k]);
         y[i, c] = sum(j in 0..i + 1, exp(x[i, j] - m[i]) * v[j, c])
                 / sum(j in 0..i + 1, exp(x[i, j] - m[i]));",
        &c,
    );
    assert!(f.contains("in 0..i0 + 1"), "{f}");
    let c = ctx(vec![t("x", 0, &[8], true), t("y", 1, &[8], false)]);
    let f = round_trip("y[i] = sum(j in 0..i + 1, x[j]);", &c);
    assert!(f.contains("sum(i1 in 0..i0 + 1, x[i1])"), "{f}");
}

#[test]
fn zero_padded_borders_round_trip() {
    // Out-of-range taps are absent at the borders: a guarded range whose
    // conditions are the reads' bounds.
    let c = ctx(vec![
        t("x", 0, &[2, 6, 6], true),
        t("w", 1, &[3, 2, 3, 3], true),
        t("y", 2, &[3, 6, 6], false),
    ]);
    let f = round_trip(
        "y[o, h, q] = sum(c in 0..2, r in 0..3, s in 0..3,
           where(h + r >= 1 && h + r <= 6 && q + s >= 1 && q + s <= 6,
                 x[c, h + r - 1, q + s - 1] * w[o, c, r, s], 0));",
        &c,
    );
    assert!(
        f.contains("where(") && f.contains("x[i3, i1 + i4 - 1, i2 + i5 - 1]"),
        "{f}"
    );
    let c = ctx(vec![t("x", 0, &[10], true), t("y", 1, &[10], false)]);
    let f = round_trip(
        "y[i] = sum(r in 0..3, where(i + r >= 1 && i + r <= 10, x[i + r - 1], 0));",
        &c,
    );
    assert!(f.contains("where(i0 + i1 >= 1 && i0 + i1 <= 10"), "{f}");
}

#[test]
fn repeated_reductions_are_bound_once() {
    let c = ctx(vec![t("x", 0, &[3, 6], true), t("y", 1, &[3, 6], false)]);
    let f = round_trip("y[i, j] = softmax(x[i, :])[j];", &c);
    assert!(
        f.starts_with("let y_max1[i0] = max(k0 in 0..6, x[i0, k0]);\n"),
        "{f}"
    );
    assert!(f.contains("(x[i0, i1] - y_max1[i0])"), "{f}");
}
