//! The proof that each template computes its function: the template's
//! original PTX (no recognition) runs in the bit-exact IEEE domain at
//! thousands of inputs — negatives, tiny, huge, subnormal, the overflow
//! and underflow edges — and every result must agree with the f64 libm
//! value of the function within the form's error bound.
//!
//! The bound is a few ulp for the default-flag expansions (the hardware's
//! `ex2.approx`/`rcp.approx` are modelled as correctly rounded, so this
//! checks the expansion's algorithm, not the MUFU unit), and for the
//! fast-math forms the bound CUDA documents for `__expf`
//! (2 + ⌊1.173·|x|⌋ ulp) and `__logf` (2^-21.41 absolute on [0.5, 2]).

use std::sync::Arc;

use ptxeq_exec::Role;
use ptxeq_exec::{CtaInput, IVal, Ieee, Limits, OutputValue, ParamValue, TensorInfo, run_cta};
use ptxeq_idioms::{ROWS, recognise};
use ptxeq_ir::IdiomFn;
use ptxeq_spec::DType;

const BLOCK: u32 = 512;

fn input(k: ptxeq_ir::KernelIr, funcs: &[ptxeq_ir::KernelIr], dtype: DType) -> CtaInput {
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype,
        shape: vec![u64::from(BLOCK)],
    };
    CtaInput {
        kernel: Arc::new(k),
        funcs: funcs.iter().cloned().map(Arc::new).collect(),
        block: [BLOCK, 1, 1],
        grid: [1, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params: vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
        tensors: vec![t("x", Role::Input), t("y", Role::Output)],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    }
}

/// Runs the kernel on `xs` (one block at a time); the results as f64.
fn run(k: &ptxeq_ir::KernelIr, f64_data: bool, xs: &[f64]) -> Vec<f64> {
    run_in(k, &[], f64_data, xs)
}

/// [`run`] with the module's functions (f64 sin calls one).
fn run_in(
    k: &ptxeq_ir::KernelIr,
    funcs: &[ptxeq_ir::KernelIr],
    f64_data: bool,
    xs: &[f64],
) -> Vec<f64> {
    let dtype = if f64_data { DType::F64 } else { DType::F32 };
    let inp = input(k.clone(), funcs, dtype);
    let mut out = Vec::new();
    for chunk in xs.chunks(BLOCK as usize) {
        let mut x = chunk.to_vec();
        x.resize(BLOCK as usize, 1.0);
        let (r, _) = run_cta(&inp, [0, 0, 0], Ieee::new(vec![x, vec![]]));
        assert!(r.findings.is_empty(), "{}: {:?}", k.name, r.findings);
        let y = r.outputs.iter().find(|o| o.tensor == 1).expect("output");
        let mut ys = vec![f64::NAN; BLOCK as usize];
        for (i, e) in &y.elements {
            ys[*i as usize] = match e {
                OutputValue::Data(v) => IVal::to_f64(*v),
                other => panic!("{}: element {i}: {other:?}", k.name),
            };
        }
        out.extend_from_slice(&ys[..chunk.len()]);
    }
    out
}

/// A deterministic spread of inputs over `[lo, hi]`, plus edge values.
fn points(lo: f64, hi: f64, n: usize, extra: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = (0..n)
        .map(|i| lo + (hi - lo) * (i as f64) / (n as f64 - 1.0))
        .collect();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v.push(lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64));
    }
    v.extend_from_slice(extra);
    v
}

/// Both quiet NaN patterns, sign clear and set (as f64; the IEEE domain
/// stores them in f32 keeping sign and payload: `0x7FC00000`,
/// `0xFFC00000`). Every form gets them: a template must give NaN exactly
/// where libm does, which exercises the expansions' unordered compares
/// and `testp`s.
const NANS: [f64; 2] = [
    f64::from_bits(0x7FF8_0000_0000_0000),
    f64::from_bits(0xFFF8_0000_0000_0000),
];

/// Distance in units in the last place of the result format; infinite
/// when exactly one of the two is NaN.
fn ulps(got: f64, want: f64, f64_data: bool) -> f64 {
    if got.is_nan() && want.is_nan() || got == want {
        return 0.0;
    }
    if got.is_nan() || want.is_nan() {
        return f64::INFINITY;
    }
    if f64_data {
        if want.is_infinite() || got.is_infinite() {
            return f64::INFINITY;
        }
        let (a, b) = (got.to_bits() as i64, want.to_bits() as i64);
        return (a - b).unsigned_abs() as f64;
    }
    // Compare in f32 units of the exact reference; beyond the f32 range
    // the result must be the infinity it rounds to.
    let w = want as f32;
    if w.is_infinite() {
        return if got == f64::from(w) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let ulp = if w.is_infinite() || w == 0.0 {
        f64::from(f32::from_bits(1))
    } else {
        let e = f64::from(w).abs().log2().floor().max(-126.0);
        2f64.powf(e - 23.0)
    };
    ((got - want) / ulp).abs()
}

fn reference(func: IdiomFn, x: f64) -> f64 {
    match func {
        IdiomFn::Exp => x.exp(),
        IdiomFn::Log => x.ln(),
        IdiomFn::Log2 => x.log2(),
        IdiomFn::Tanh => x.tanh(),
        IdiomFn::Sin => x.sin(),
        IdiomFn::Cos => x.cos(),
        IdiomFn::Erf => libm::erf(x),
        IdiomFn::Expm1 => x.exp_m1(),
        IdiomFn::Log1p => x.ln_1p(),
        IdiomFn::Log10 => x.log10(),
        IdiomFn::Exp10 => libm::exp10(x),
        IdiomFn::Sinh => x.sinh(),
        IdiomFn::Cosh => x.cosh(),
        // Two arguments: not a `y = f(x)` row of this table.
        IdiomFn::Pow => f64::NAN,
    }
}

struct Case {
    inputs: Vec<f64>,
    /// Allowed error at `x` in ulp (`None`: absolute bound).
    bound: fn(f64) -> Bound,
}

enum Bound {
    Ulp(f64),
    Abs(f64),
}

fn case(form: &str, func: IdiomFn, f64_data: bool) -> Case {
    let sub = [1e-40, -1e-40, 1.4e-45, 1e-38, 0.0, -0.0];
    match (
        func,
        form.contains("fast") || form.contains("tl.exp") && func == IdiomFn::Exp,
    ) {
        (IdiomFn::Exp, _) if f64_data => Case {
            inputs: points(
                -750.0,
                712.0,
                3000,
                &[0.0, 1e-300, -1e-300, 709.78, -745.1, 708.0],
            ),
            bound: |_| Bound::Ulp(2.0),
        },
        (IdiomFn::Exp, false) => Case {
            inputs: points(
                -104.0,
                89.0,
                3000,
                &[0.0, 88.72, 88.73, -87.3, -103.97, 1e-30, -1e-30],
            ),
            bound: |_| Bound::Ulp(2.0),
        },
        (IdiomFn::Exp, true) => Case {
            inputs: points(-87.0, 88.0, 3000, &[0.0, 1e-30, -1e-30]),
            bound: |x| Bound::Ulp(2.0 + (1.173 * x.abs()).floor()),
        },
        // f64: the whole positive range incl. subnormals (the expansion
        // rescales them), zero, negatives, inf; reference f64 libm.
        (IdiomFn::Log, _) if f64_data => {
            let mut inputs = points(1e-6, 4.0, 2000, &[0.0, -0.0, -1.0, 1.0, 2.0]);
            inputs.extend(points(4.0, 1.7e308, 1000, &[f64::INFINITY, 1e-320]));
            inputs.extend(
                (0..1000)
                    .map(|i| f64::from_bits(0x0000_0000_0000_0001 + i * 0x0021_0000_0000_0000)),
            );
            inputs.extend_from_slice(&[5e-324, 2.2e-308, 2.3e-308, 1.0 + 1e-15, 1.0 - 1e-16]);
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        (IdiomFn::Tanh, _) if f64_data => Case {
            inputs: points(
                -25.0,
                25.0,
                3000,
                &[
                    0.6558, -0.6558, 0.6559, 1e-300, -1e-300, 5e-324, 0.0, -0.0, 40.0, -40.0,
                ],
            ),
            bound: |_| Bound::Ulp(2.0),
        },
        // f64 sin/cos: the Cody–Waite range, the slow path's call for
        // |x| ≥ 2^31 in every binade up to the largest double, both
        // signs, the edges, ±0, subnormals, ±inf (NaN, as libm).
        (IdiomFn::Sin | IdiomFn::Cos, _) if f64_data => {
            let e31 = 2f64.powi(31);
            let mut inputs = points(
                -100.0,
                100.0,
                2000,
                &[
                    0.0,
                    -0.0,
                    5e-324,
                    1e-300,
                    -1e-300,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                ],
            );
            inputs.extend(points(
                -e31 * 2.0,
                e31 * 2.0,
                500,
                &[e31, -e31, e31 * (1.0 - 1e-16)],
            ));
            inputs.extend(points(1e10, 1.7e308, 500, &[f64::MAX, -f64::MAX]));
            inputs.extend((31..1024).flat_map(|e| {
                [1.0, 1.2345678901234, 1.5, 1.9999999]
                    .map(|m| m * 2f64.powi(e) * if e % 2 == 0 { 1.0 } else { -1.0 })
            }));
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        // sinf/cosf: the Cody–Waite range, the Payne–Hanek range up to
        // the largest float (|x| ≥ 105615), both signs, the branch edge,
        // ±0, subnormals and ±inf (NaN, as libm).
        (IdiomFn::Sin | IdiomFn::Cos, false) if !f64_data => {
            let mut inputs = points(-120.0, 120.0, 2000, &sub);
            inputs.extend(points(-2e5, 2e5, 1000, &[105614.99, 105615.0, -105615.0]));
            inputs.extend(points(1e5, 3.4e38, 1000, &[3.4028235e38, -3.4028235e38]));
            inputs.extend(points(
                -3.4e38,
                -1e5,
                1000,
                &[f64::INFINITY, f64::NEG_INFINITY],
            ));
            // Every binade of the slow path, at a few mantissas.
            inputs.extend((17..128).flat_map(|e| {
                [1.0, 1.2345, 1.5, 1.999]
                    .map(|m| m * 2f64.powi(e) * if e % 2 == 0 { 1.0 } else { -1.0 })
            }));
            // Triton's form flushes subnormal arguments (`.ftz`): outside
            // its domain, as docs/semantics.md §2 treats `.ftz`.
            if form.contains("Triton") {
                inputs.retain(|x| *x == 0.0 || x.abs() >= f64::from(f32::MIN_POSITIVE));
            }
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        (IdiomFn::Log | IdiomFn::Log2, fast) => {
            let mut inputs = points(1e-6, 4.0, 2000, &[0.0, -0.0, 1.2e-38]);
            inputs.extend(points(4.0, 3e38, 1000, &[f64::INFINITY, -1.0, 1.0, 2.0]));
            // Fast math flushes subnormal arguments (`.ftz`): they are
            // outside its domain, as docs/semantics.md §2 treats `.ftz`.
            if !fast {
                inputs.extend_from_slice(&sub);
            }
            Case {
                inputs,
                bound: if fast {
                    |x| {
                        if (0.5..=2.0).contains(&x) {
                            Bound::Abs(2f64.powf(-21.41))
                        } else {
                            Bound::Ulp(3.0)
                        }
                    }
                } else {
                    |_| Bound::Ulp(2.0)
                },
            }
        }
        (IdiomFn::Tanh, _) => Case {
            inputs: points(
                -12.0,
                12.0,
                3000,
                &[0.6, -0.6, 0.59999, 9.01, -9.01, 1e-30, 30.0, -30.0],
            ),
            bound: |_| Bound::Ulp(3.0),
        },
        // erff: both polynomials, the branch edge (nvcc 1.00376, Triton
        // 1.00295), saturation to ±1, ±0, ±inf; subnormals only where
        // the form does not flush them (`.ftz`, docs/semantics.md §2).
        (IdiomFn::Erf, _) => {
            let mut inputs = points(
                -10.0,
                10.0,
                3000,
                &[
                    1.00376,
                    -1.00376,
                    1.003_76_f32.next_up() as f64,
                    1.00295,
                    -1.00295,
                    0.0,
                    -0.0,
                    1e-30,
                    -1e-30,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    3.9,
                    4.0,
                ],
            );
            inputs.extend(points(-1e-3, 1e-3, 500, &[]));
            if !form.contains("fast") && !form.contains("Triton") {
                inputs.extend_from_slice(&sub);
            }
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        // expm1f: the whole range up to overflow, the small arguments
        // where e^x − 1 cancels, ±0, ±inf.
        (IdiomFn::Expm1, _) => {
            let mut inputs = points(
                -104.0,
                89.0,
                3000,
                &[
                    0.0,
                    -0.0,
                    88.72,
                    88.73,
                    1e-30,
                    -1e-30,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                ],
            );
            inputs.extend(points(-1e-2, 1e-2, 1000, &[1e-7, -1e-7, 0.34657, -0.34657]));
            if !form.contains("fast") {
                inputs.extend_from_slice(&sub);
            }
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        // log1pf: (−1, 3e38], the small arguments, −1 (−inf), below −1
        // (NaN), ±0, inf.
        (IdiomFn::Log1p, _) => {
            let mut inputs = points(-0.999_999, 4.0, 2000, &[-1.0, -1.5, 0.0, -0.0]);
            inputs.extend(points(4.0, 3e38, 1000, &[f64::INFINITY, 1e-30, -1e-30]));
            inputs.extend(points(-1e-2, 1e-2, 1000, &[1e-7, -1e-7, -0.5, 1.0]));
            if !form.contains("fast") {
                inputs.extend_from_slice(&sub);
            }
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        // log10f: the positive range incl. subnormals, 0 (−inf), negatives
        // (NaN), inf, exact powers of ten. CUDA documents 2 ulp (of the
        // rounded result); measured 2.02 ulp of the exact value.
        (IdiomFn::Log10, _) => {
            let mut inputs = points(1e-6, 4.0, 2000, &[0.0, -0.0, -1.0, 1.0, 10.0, 100.0]);
            inputs.extend(points(4.0, 3e38, 1000, &[f64::INFINITY, 1e-30, 1e-38]));
            inputs.extend_from_slice(&sub);
            Case {
                inputs,
                bound: |_| Bound::Ulp(3.0),
            }
        }
        // exp10f / sinhf / coshf: up to overflow and underflow, around 0.
        (IdiomFn::Exp10 | IdiomFn::Sinh | IdiomFn::Cosh, _) => {
            let (lo, hi) = if func == IdiomFn::Exp10 {
                (-46.0, 39.0)
            } else {
                (-90.0, 90.0)
            };
            let mut inputs = points(
                lo,
                hi,
                3000,
                &[0.0, -0.0, 1e-30, -1e-30, 38.53, 89.41, -89.41, 1.0, 2.0],
            );
            inputs.extend(points(-1e-2, 1e-2, 500, &[]));
            if !form.contains("fast") {
                inputs.extend_from_slice(&sub);
            }
            Case {
                inputs,
                bound: |_| Bound::Ulp(2.0),
            }
        }
        _ => unreachable!("no template of {func:?}"),
    }
}

/// The templates' original PTX agrees with the function.
#[test]
fn every_template_computes_its_function() {
    let mut report = Vec::new();
    for row in ROWS {
        let (text, name, form, func, _) = *row;
        let module = ptxeq_lower::lower_source(text).module;
        let k = module.kernel(name).expect("kernel");
        let f64_data = form.contains("f64");
        let mut c = case(form, func, f64_data);
        c.inputs.extend(NANS);
        let ys = run_in(k, &module.funcs, f64_data, &c.inputs);
        let mut worst = 0f64;
        for (x, y) in c.inputs.iter().zip(&ys) {
            // The input as the kernel saw it.
            let x = if f64_data { *x } else { f64::from(*x as f32) };
            let want = reference(func, x);
            let ok = match (c.bound)(x) {
                _ if want.is_nan() => y.is_nan(),
                Bound::Ulp(b) => {
                    let u = ulps(*y, want, f64_data);
                    worst = worst.max(u);
                    u <= b
                }
                Bound::Abs(b) => (y - want).abs() <= b,
            };
            assert!(ok, "{form}: f({x:e}) = {y:e}, libm {want:e}");
        }
        report.push(format!(
            "{form}: {} points, worst {worst:.2} ulp",
            c.inputs.len()
        ));
    }
    eprintln!("{}", report.join("\n"));
}

/// After recognition the kernel computes the function itself (the idiom
/// instruction, correctly rounded in this domain).
#[test]
fn recognised_kernels_compute_the_function() {
    for row in ROWS {
        let (text, name, form, func, _) = *row;
        let module = ptxeq_lower::lower_source(text).module;
        let k = module.kernel(name).expect("kernel");
        let r = ptxeq_idioms::recognise_in(k, &module.funcs);
        let f64_data = form.contains("f64");
        let xs = points(0.01, 20.0, 256, &[]);
        let ys = run(&r.ir, f64_data, &xs);
        for (x, y) in xs.iter().zip(&ys) {
            let x = if f64_data { *x } else { f64::from(*x as f32) };
            let want = reference(func, x);
            assert!(
                ulps(*y, want, f64_data) <= 0.5 + f64::EPSILON,
                "{form}: {x} → {y}, want {want}"
            );
        }
    }
}

/// Two-result templates (`sincosf`): both results of the template's
/// original PTX agree with libm at the sinf/cosf inputs, and after
/// recognition the two idioms compute them.
#[test]
fn pair_templates_compute_both_functions() {
    use ptxeq_idioms::PAIR_ROWS;
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![u64::from(BLOCK)],
    };
    let run2 = |k: &ptxeq_ir::KernelIr, xs: &[f64]| -> [Vec<f64>; 2] {
        let inp = CtaInput {
            kernel: Arc::new(k.clone()),
            funcs: Vec::new(),
            block: [BLOCK, 1, 1],
            grid: [1, 1, 1],
            dynamic_shared: 0,
            cluster: None,
            params: (0..3).map(|t| ParamValue::Tensor { tensor: t }).collect(),
            tensors: vec![
                t("x", Role::Input),
                t("s", Role::Output),
                t("c", Role::Output),
            ],
            symbols: Vec::new(),
            limits: Limits::default(),
            bindings: Default::default(),
        };
        let mut out = [Vec::new(), Vec::new()];
        for chunk in xs.chunks(BLOCK as usize) {
            let mut x = chunk.to_vec();
            x.resize(BLOCK as usize, 1.0);
            let (r, _) = run_cta(&inp, [0, 0, 0], Ieee::new(vec![x, vec![], vec![]]));
            assert!(r.findings.is_empty(), "{}: {:?}", k.name, r.findings);
            for (n, o) in out.iter_mut().enumerate() {
                let y = r
                    .outputs
                    .iter()
                    .find(|o| o.tensor as usize == n + 1)
                    .expect("output");
                let mut ys = vec![f64::NAN; BLOCK as usize];
                for (i, e) in &y.elements {
                    ys[*i as usize] = match e {
                        OutputValue::Data(v) => IVal::to_f64(*v),
                        other => panic!("{}: element {i}: {other:?}", k.name),
                    };
                }
                o.extend_from_slice(&ys[..chunk.len()]);
            }
        }
        out
    };
    for row in PAIR_ROWS {
        let (text, name, form, f1, f2, _) = *row;
        let k = ptxeq_lower::lower_source(text)
            .module
            .kernels
            .into_iter()
            .find(|k| k.name == name)
            .expect("kernel");
        let mut c = case(form, f1, false);
        c.inputs.extend(NANS);
        let ys = run2(&k, &c.inputs);
        let mut worst = [0f64; 2];
        for (n, func) in [f1, f2].into_iter().enumerate() {
            for (x, y) in c.inputs.iter().zip(&ys[n]) {
                let x = f64::from(*x as f32);
                let want = reference(func, x);
                let Bound::Ulp(b) = (c.bound)(x) else {
                    unreachable!()
                };
                let u = if want.is_nan() {
                    if y.is_nan() { 0.0 } else { f64::INFINITY }
                } else {
                    ulps(*y, want, false)
                };
                worst[n] = worst[n].max(u);
                assert!(u <= b, "{form}: {func:?}({x:e}) = {y:e}, libm {want:e}");
            }
        }
        eprintln!(
            "{form}: {} points, worst {:.2} ulp ({f1:?}), {:.2} ulp ({f2:?})",
            c.inputs.len(),
            worst[0],
            worst[1]
        );
        // Recognised: the idioms, correctly rounded in this domain.
        let r = recognise(&k);
        let xs = points(0.01, 20.0, 256, &[]);
        let ys = run2(&r.ir, &xs);
        for (n, func) in [f1, f2].into_iter().enumerate() {
            for (x, y) in xs.iter().zip(&ys[n]) {
                let x = f64::from(*x as f32);
                assert!(ulps(*y, reference(func, x), false) <= 0.5 + f64::EPSILON);
            }
        }
    }
}
