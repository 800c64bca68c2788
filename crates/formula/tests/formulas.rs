//! The formula language end to end: the README's operators compile, their
//! instantiated terms evaluate to what a direct f64 computation gives, and
//! mistakes are reported with a location.

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

fn int(name: &str, v: i64) -> ScalarDecl {
    ScalarDecl {
        name: name.into(),
        value: ScalarValue::Int(v),
    }
}

/// Deterministic pseudo-random input value of element `i` of tensor `t`.
fn val(t: u32, i: u64) -> f64 {
    let x =
        (u64::from(t) * 0x9E37_79B9_7F4A_7C15).wrapping_add(i.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let x = (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

/// Every element of output `name` evaluated at the `val` inputs.
fn eval(src: &str, ctx: &Context, name: &str) -> Vec<f64> {
    let c = compile(src, ctx).unwrap_or_else(|d| panic!("{}", render(&d, "f", src)));
    let out = c.output_of(name).expect("defined");
    let decl = ctx.tensors.iter().find(|t| t.name == name).unwrap();
    let mut terms = Terms::new();
    let mut roots = Vec::new();
    {
        let mut inst = c.instance(&mut terms);
        let n: u64 = decl.shape.iter().product();
        for flat in 0..n {
            let mut idx = vec![0u64; decl.shape.len()];
            let mut r = flat;
            for k in (0..idx.len()).rev() {
                idx[k] = r % decl.shape[k];
                r /= decl.shape[k];
            }
            roots.push(inst.element(out, &idx).expect("instantiates"));
        }
    }
    terms.eval_many_f64(&roots, &|t, i| val(t, i))
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
            "element {k}: {x} vs {y}"
        );
    }
}

#[test]
fn softmax_explicit_and_prelude_agree_with_f64() {
    let ctx = Context {
        tensors: vec![t("x", 0, &[3, 8], true), t("y", 1, &[3, 8], false)],
        scalars: vec![int("N", 8)],
    };
    let mut want = Vec::new();
    for i in 0..3u64 {
        let row: Vec<f64> = (0..8).map(|j| val(0, i * 8 + j)).collect();
        let m = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        want.extend(row.iter().map(|v| (v - m).exp() / s));
    }
    let explicit = "let m[i] = max(j in 0..N, x[i, j]);\n\
                    y[i, j] = exp(x[i, j] - m[i]) / sum(k in 0..N, exp(x[i, k] - m[i]));";
    close(&eval(explicit, &ctx, "y"), &want);
    close(&eval("y[i, j] = softmax(x[i, :]);", &ctx, "y"), &want);
    close(&eval("y[i, j] = softmax(x[i, :])[j];", &ctx, "y"), &want);
}

#[test]
fn gemm_with_symbolic_alpha_beta() {
    let ctx = Context {
        tensors: vec![
            t("A", 0, &[4, 3], true),
            t("B", 1, &[3, 5], true),
            TensorDecl {
                readable: true,
                writable: true,
                ..t("C", 2, &[4, 5], false)
            },
            t("alpha", 3, &[], true),
            t("beta", 4, &[], true),
        ],
        scalars: vec![int("K", 3)],
    };
    let src = "C[i, j] = alpha * sum(k in 0..K, A[i, k] * B[k, j]) + beta * C[i, j];";
    let got = eval(src, &ctx, "C");
    let mut want = Vec::new();
    for i in 0..4 {
        for j in 0..5 {
            let s: f64 = (0..3).map(|k| val(0, i * 3 + k) * val(1, k * 5 + j)).sum();
            want.push(val(3, 0) * s + val(4, 0) * val(2, i * 5 + j));
        }
    }
    close(&got, &want);
}

#[test]
fn layernorm_rmsnorm_gelu() {
    let ctx = Context {
        tensors: vec![
            t("x", 0, &[2, 6], true),
            t("g", 1, &[6], true),
            t("b", 2, &[6], true),
            t("y", 3, &[2, 6], false),
            t("r", 4, &[2, 6], false),
            t("z", 5, &[2, 6], false),
        ],
        scalars: vec![ScalarDecl {
            name: "eps".into(),
            value: ScalarValue::Real(num_rational::BigRational::new(1.into(), 100000.into())),
        }],
    };
    let ln = eval("y[i, j] = layernorm(x[i, :], g[:], b[:], eps);", &ctx, "y");
    let rms = eval("r[i, j] = rmsnorm(x[i, :], g, eps);", &ctx, "r");
    let ge = eval("z[i, j] = gelu(x[i, j]);", &ctx, "z");
    let (mut wl, mut wr, mut wg) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..2u64 {
        let row: Vec<f64> = (0..6).map(|j| val(0, i * 6 + j)).collect();
        let mean = row.iter().sum::<f64>() / 6.0;
        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 6.0;
        let ms = row.iter().map(|v| v * v).sum::<f64>() / 6.0;
        for j in 0..6u64 {
            let v = row[j as usize];
            wl.push((v - mean) / (var + 1e-5).sqrt() * val(1, j) + val(2, j));
            wr.push(v / (ms + 1e-5).sqrt() * val(1, j));
            wg.push(0.5 * v * (1.0 + libm_erf(v / 2f64.sqrt())));
        }
    }
    close(&ln, &wl);
    close(&rms, &wr);
    close(&ge, &wg);
}

fn libm_erf(x: f64) -> f64 {
    // Abramowitz–Stegun is not exact enough; integrate erf's series.
    let mut sum = 0.0;
    let mut term = x;
    let mut n = 0.0;
    while term.abs() > 1e-17 {
        sum += term / (2.0 * n + 1.0);
        n += 1.0;
        term *= -x * x / n;
    }
    sum * 2.0 / std::f64::consts::PI.sqrt()
}

#[test]
fn causal_attention_and_conv2d() {
    let (n, d) = (5u64, 3u64);
    let ctx = Context {
        tensors: vec![
            t("q", 0, &[n, d], true),
            t("k", 1, &[n, d], true),
            t("v", 2, &[n, d], true),
            t("o", 3, &[n, d], false),
        ],
        scalars: vec![int("N", n as i64), int("D", d as i64)],
    };
    let src = "let s[i in 0..N, j in 0..N] = where(j <= i, sum(c in 0..D, q[i, c] * k[j, c]) * rsqrt(D), -inf);\n\
               o[i, c] = sum(j in 0..N, softmax(s[i, :])[j] * v[j, c]);";
    let got = eval(src, &ctx, "o");
    let mut want = Vec::new();
    for i in 0..n {
        let s: Vec<f64> = (0..=i)
            .map(|j| {
                (0..d)
                    .map(|c| val(0, i * d + c) * val(1, j * d + c))
                    .sum::<f64>()
                    / (d as f64).sqrt()
            })
            .collect();
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = s.iter().map(|x| (x - m).exp()).sum();
        for c in 0..d {
            want.push(
                (0..=i)
                    .map(|j| (s[j as usize] - m).exp() / z * val(2, j * d + c))
                    .sum(),
            );
        }
    }
    close(&got, &want);

    // conv2d, NCHW, valid padding, stride 1.
    let ctx = Context {
        tensors: vec![
            t("x", 0, &[1, 2, 5, 5], true),
            t("w", 1, &[3, 2, 3, 3], true),
            t("y", 2, &[1, 3, 3, 3], false),
        ],
        scalars: vec![int("C", 2), int("R", 3), int("S", 3)],
    };
    let src = "y[b, o, h, w_] = sum(c in 0..C, r in 0..R, s in 0..S, x[b, c, h + r, w_ + s] * w[o, c, r, s]);";
    let got = eval(src, &ctx, "y");
    let mut want = Vec::new();
    for o in 0..3u64 {
        for h in 0..3u64 {
            for ww in 0..3u64 {
                let mut acc = 0.0;
                for c in 0..2u64 {
                    for r in 0..3u64 {
                        for s in 0..3u64 {
                            acc += val(0, c * 25 + (h + r) * 5 + ww + s)
                                * val(1, ((o * 2 + c) * 3 + r) * 3 + s);
                        }
                    }
                }
                want.push(acc);
            }
        }
    }
    close(&got, &want);
}

fn errors(src: &str, ctx: &Context) -> String {
    match compile(src, ctx) {
        Ok(c) => {
            // Compiles: instantiate every element of the first output and
            // report the first error.
            let mut terms = Terms::new();
            let mut inst = c.instance(&mut terms);
            let decl = ctx.tensors.iter().find(|t| t.writable).unwrap();
            let n: u64 = decl.shape.iter().product();
            for flat in 0..n {
                let idx = vec![flat; 1];
                if let Err(d) = inst.element(0, &idx) {
                    return render(&[d], "f", src);
                }
            }
            String::from("ok")
        }
        Err(d) => render(&d, "f", src),
    }
}

#[test]
fn mistakes_are_located() {
    let ctx = Context {
        tensors: vec![t("x", 0, &[4], true), t("y", 1, &[4], false)],
        scalars: vec![int("N", 4)],
    };
    let e = errors("y[i] = x[i + 1];", &ctx);
    assert!(
        e.contains("outside `x`'s shape [4]") && e.contains("f:1:8"),
        "{e}"
    );
    assert!(e.contains("while instantiating y[3]"), "{e}");
    let e = errors("y[i] = z[i];", &ctx);
    assert!(e.contains("unknown name `z`") && e.contains("f:1:8"), "{e}");
    let e = errors("y[i] = x[x[i]];", &ctx);
    assert!(e.contains("expected an integer subscript"), "{e}");
    let e = errors("y[i] = frob(x[i]);", &ctx);
    assert!(e.contains("unknown function `frob`"), "{e}");
    let e = errors("y[i] = x[i] +\n  ;", &ctx);
    assert!(e.contains("f:2:3"), "{e}");
    let e = errors("y[i, j] = x[i];", &ctx);
    assert!(e.contains("has 1 dimensions"), "{e}");
    // A masked read outside the tensor is never made.
    assert_eq!(errors("y[i] = where(i > 0, x[i - 1], 0);", &ctx), "ok");
    let e = errors("x[i] = 1;", &ctx);
    assert!(e.contains("input tensor"), "{e}");
    let e = errors("y[i] = sum(j in 0..N, x[j]) / 0;", &ctx);
    assert!(e.contains("division by zero") || e == "ok", "{e}");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Any text compiles or is rejected with diagnostics; never a panic.
        #[test]
        fn arbitrary_text_never_panics(s in "[ -~\n]{0,120}") {
            let ctx = Context {
                tensors: vec![t("x", 0, &[4, 4], true), t("y", 1, &[4, 4], false)],
                scalars: vec![int("N", 4)],
            };
            let _ = errors(&s, &ctx);
        }

        /// A rejected text's every diagnostic is located in it: its span
        /// lies inside the text and the rendering names its line and
        /// column (`f:LINE:COL`) with the excerpt.
        #[test]
        fn syntax_errors_are_located(s in "[ -~\n]{0,120}") {
            let ctx = Context {
                tensors: vec![t("x", 0, &[4, 4], true), t("y", 1, &[4, 4], false)],
                scalars: vec![int("N", 4)],
            };
            if let Err(diags) = compile(&s, &ctx) {
                prop_assert!(!diags.is_empty());
                for d in &diags {
                    prop_assert_eq!(d.span.file, ptxeq_formula::span::USER, "{:?}", d);
                    prop_assert!(d.span.end as usize <= s.len(), "{:?}", d);
                    let (line, col) = d.line_col(&s);
                    let shown = render(std::slice::from_ref(d), "f", &s);
                    prop_assert!(shown.contains(&format!("f:{line}:{col}")), "{}", shown);
                }
            }
        }

        /// Mutations of a valid formula: same.
        #[test]
        fn mutated_formulas_never_panic(pos in 0usize..80, ch in "[-+*/()\\[\\]:,;.a-z0-9 ]") {
            let base = "let m[i] = max(j in 0..N, x[i, j]); y[i, j] = softmax(x[i, :]) * m[i] - 1;";
            let mut s: String = base.to_string();
            let p = pos.min(s.len());
            s.insert_str(p, &ch);
            let ctx = Context {
                tensors: vec![t("x", 0, &[4, 4], true), t("y", 1, &[4, 4], false)],
                scalars: vec![int("N", 4)],
            };
            let _ = errors(&s, &ctx);
        }
    }
}
