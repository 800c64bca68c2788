//! powf: recognition and agreement of the constant-exponent class
//! templates (`templates/powf.cu`, `library::POW_CLASSES`).
//!
//! The class templates are derived from three exponents each; these tests
//! use kernels compiled for *other* exponents (`tests/data/powf-consts.cu`,
//! one kernel per exponent, named by its bits): each must be recognised
//! as `pow(x, c)` with exactly its `c`, and its original PTX, run in the
//! bit-exact IEEE domain at thousands of `x` (negative, zero, subnormal,
//! huge, ±inf), must agree with libm's `pow` — the proof that the
//! class code computes `x^c` for exponents it was not built from.

mod common;

use std::sync::Arc;

use common::{edit_kernel, loads, pow_args};

use ptxeq_exec::Role;
use ptxeq_exec::{CtaInput, IVal, Ieee, Limits, OutputValue, ParamValue, TensorInfo, run_cta};
use ptxeq_idioms::{NVCC_POWF, POW_CLASSES, POW_GENERAL, build, build_pow_class, recognise};
use ptxeq_ir::{IdiomFn, Imm, Instr, KernelIr, Operand};
use ptxeq_spec::DType;

const TESTS: &str = include_str!("data/powf-consts.ptx");
/// powf in other contexts (`tests/data/powf-contexts.cu`).
const CONTEXTS: &str = include_str!("data/powf-contexts.ptx");
/// Triton's own kernels for `libdevice.pow(x, c)`, other exponents.
const TRITON_TESTS: &str = include_str!("data/triton-powc-kernels.ptx");
const BLOCK: u32 = 512;

fn kernels(ptx: &str) -> Vec<KernelIr> {
    let l = ptxeq_lower::lower_source(ptx);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    l.module.kernels
}

/// The exponent a test kernel was compiled for (its name is `p_<bits>`).
fn exponent_of(k: &KernelIr) -> f32 {
    let hex = k.name.strip_prefix("p_").expect("p_<bits>");
    f32::from_bits(u32::from_str_radix(hex, 16).expect("hex bits"))
}

/// The recognised exponent of the kernel's single `pow` idiom.
fn recognised_exponent(k: &KernelIr) -> Option<f32> {
    let r = recognise(k);
    let pows: Vec<_> =
        r.ir.instrs
            .iter()
            .filter(|d| {
                matches!(
                    d.instr,
                    Instr::Idiom {
                        func: IdiomFn::Pow,
                        ..
                    }
                )
            })
            .collect();
    if r.found.len() != 1 || pows.len() != 1 {
        return None;
    }
    match pows[0].operands.as_slice() {
        [
            Operand::Reg(_),
            Operand::Reg(_),
            Operand::Imm(Imm::F32Bits(b)),
        ] => Some(f32::from_bits(*b)),
        _ => None,
    }
}

#[test]
fn every_class_builds() {
    for row in POW_CLASSES {
        if let Err(e) = build_pow_class(row) {
            panic!("{e}");
        }
    }
}

#[test]
fn template_kernels_are_recognised_with_their_exponent() {
    for (text, name, _, samples) in POW_CLASSES {
        let ks = kernels(text);
        for (kernel, y) in *samples {
            let k = ks.iter().find(|k| k.name == *kernel).expect("kernel");
            assert_eq!(recognised_exponent(k), Some(*y), "{name}: {kernel}");
        }
    }
}

#[test]
fn other_exponents_are_recognised_with_their_exponent() {
    let ks = kernels(TESTS);
    assert!(ks.len() >= 30);
    let triton = kernels(TRITON_TESTS);
    assert!(triton.len() >= 13);
    for k in ks.iter().chain(&triton) {
        let y = exponent_of(k);
        assert_eq!(recognised_exponent(k), Some(y), "{}", k.name);
        // Nothing but the pow is left of the expansion: no branch.
        let r = recognise(k);
        assert!(
            !r.ir
                .instrs
                .iter()
                .any(|d| matches!(d.instr, Instr::Bra { .. })),
            "{}: a branch survived",
            k.name
        );
    }
}

#[test]
fn inconsistent_or_foreign_exponents_are_not_recognised() {
    // powf(x, 1.5): y = 1.5 (0f3FC00000) in three places, y/2 = 0.75
    // (0f3F400000) in one.
    let name = "t_powf_pfrac_a";
    let find = |ptx: &str| {
        kernels(ptx)
            .into_iter()
            .find(|k| k.name == name)
            .expect("kernel")
    };
    assert_eq!(recognised_exponent(&find(NVCC_POWF)), Some(1.5));
    // y/2 no longer half of y.
    let bad = edit_kernel(NVCC_POWF, name, "0f3F400000", "0f3F000000", 0);
    assert_eq!(recognised_exponent(&find(&bad)), None);
    // One y changed: the y positions disagree.
    let bad = edit_kernel(NVCC_POWF, name, "0f3FC00000", "0f40200000", 1);
    assert_eq!(recognised_exponent(&find(&bad)), None);
    // Every y and y/2 changed consistently to an integer (2 and 1): the
    // non-integer class's code is not the code for y = 2.
    let mut two = NVCC_POWF.to_string();
    for i in (0..3).rev() {
        two = edit_kernel(&two, name, "0f3FC00000", "0f40000000", i);
    }
    two = edit_kernel(&two, name, "0f3F400000", "0f3F800000", 0);
    assert_eq!(recognised_exponent(&find(&two)), None);
    // Consistently to 3.5 (and 1.75): still the class, recognised as 3.5.
    let mut s = NVCC_POWF.to_string();
    for i in (0..3).rev() {
        s = edit_kernel(&s, name, "0f3FC00000", "0f40600000", i);
    }
    s = edit_kernel(&s, name, "0f3F400000", "0f3FE00000", 0);
    assert_eq!(recognised_exponent(&find(&s)), Some(3.5));
}

/// One block of `y[i] = f(x[i])` (Triton's kernels: their `.reqntid`
/// and hidden parameters).
fn input(k: KernelIr) -> CtaInput {
    let block = block_of(&k);
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![u64::from(block)],
    };
    let mut params = vec![
        ParamValue::Tensor { tensor: 0 },
        ParamValue::Tensor { tensor: 1 },
    ];
    params.resize(k.params.len().max(2), ParamValue::Unused);
    CtaInput {
        kernel: Arc::new(k),
        funcs: Vec::new(),
        block: [block, 1, 1],
        grid: [1, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params,
        tensors: vec![t("x", Role::Input), t("y", Role::Output)],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    }
}

fn block_of(k: &KernelIr) -> u32 {
    k.reqntid.map_or(BLOCK, |r| r[0])
}

/// The kernel's original PTX run bit-exactly on `xs`.
fn run(k: &KernelIr, xs: &[f64]) -> Vec<f64> {
    let inp = input(k.clone());
    let block = block_of(k) as usize;
    let mut out = Vec::new();
    for chunk in xs.chunks(block) {
        let mut x = chunk.to_vec();
        x.resize(block, 1.0);
        let (r, _) = run_cta(&inp, [0, 0, 0], Ieee::new(vec![x, vec![]]));
        assert!(r.findings.is_empty(), "{}: {:?}", k.name, r.findings);
        let y = r.outputs.iter().find(|o| o.tensor == 1).expect("output");
        let mut ys = vec![f64::NAN; block];
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

/// `x` values: a log-spaced spread over the f32 range of both signs,
/// integers, edge values, and both quiet NaNs (sign clear and set): the
/// bit-exact domain evaluates the expansion's unordered comparisons
/// exactly (`setp.gtu` is true on NaN), so NaN takes its NaN path and
/// must give libm's answer (`pow(NaN, 0) = 1`, else NaN).
fn xs() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e-45,
        -1e-45,
        1e-40,
        -1e-40,
        1.17549435e-38,
        3.4028235e38,
        -3.4028235e38,
    ];
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..1500 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let e = -150.0 + 280.0 * ((s >> 11) as f64 / (1u64 << 53) as f64);
        let m = 2f64.powf(e);
        v.push(if i % 2 == 0 { m } else { -m });
    }
    for i in 1..200 {
        v.push(1.0 + f64::from(i) * 1e-3);
        v.push(f64::from(i) * 0.37);
        v.push(-f64::from(i));
    }
    // Round to f32 (the kernel's inputs are f32).
    let mut v: Vec<f64> = v.iter().map(|x| f64::from(*x as f32)).collect();
    v.extend(NANS);
    v
}

/// Both quiet NaN patterns (f32 `0x7FC00000` and `0xFFC00000` once the
/// IEEE domain stores them).
const NANS: [f64; 2] = [
    f64::from_bits(0x7FF8_0000_0000_0000),
    f64::from_bits(0xFFF8_0000_0000_0000),
];

/// Distance in f32 ulp of `got` from the exact `want` (0 for equal
/// values, both NaN, or the same infinity).
fn ulps(got: f64, want: f64) -> f64 {
    if got.is_nan() && want.is_nan() || got == want {
        return 0.0;
    }
    let w = want as f32;
    if w.is_infinite() {
        // Beyond the f32 range: the infinity it rounds to.
        return if got == f64::from(w) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || got.is_nan() || want.is_nan() {
        return f64::INFINITY;
    }
    let e = f64::from(w).abs().log2().floor().max(-126.0);
    ((got - want) / 2f64.powf(e - 23.0)).abs()
}

/// Worst ulp of a kernel against f64 libm `pow` (rounded to f32 at the
/// ends of the range: an overflow must be the infinity, an underflow the
/// rounded subnormal or zero).
/// With `ftz` (Triton) subnormal arguments are skipped and a result
/// flushed to zero accepted (docs/semantics.md §2 treats `.ftz` so), and the
/// error may grow with `|y·log2|x||` (see [`general_agreement`]): each
/// point's error is returned over its bound, with the worst plain error.
fn worst(k: &KernelIr, y: f32, ftz: bool) -> (f64, f64, f64) {
    let x = xs();
    let got = run(k, &x);
    let tiny = f64::from(f32::MIN_POSITIVE);
    let (mut worst, mut over) = ((0.0, 0.0), 0.0f64);
    for (xi, gi) in x.iter().zip(&got) {
        if ftz && *xi != 0.0 && xi.abs() < tiny {
            continue;
        }
        let want = xi.powf(f64::from(y));
        let flushed = ftz && want.abs() < tiny && *gi == 0.0;
        let u = if flushed { 0.0 } else { ulps(*gi, want) };
        let t = (f64::from(y) * xi.abs().log2()).abs();
        let bound = if ftz && t.is_finite() { 2.0 + t } else { 2.0 };
        over = over.max(u / bound);
        if u > worst.0 {
            worst = (u, *xi);
        }
    }
    (worst.0, worst.1, over)
}

#[test]
fn constant_exponent_kernels_agree_with_libm() {
    let mut report = Vec::new();
    let mut all: Vec<(KernelIr, bool)> = kernels(TESTS).into_iter().map(|k| (k, false)).collect();
    all.extend(kernels(TRITON_TESTS).into_iter().map(|k| (k, true)));
    for (text, _, _, samples) in POW_CLASSES {
        let tpl = kernels(text);
        for (kernel, _) in *samples {
            let mut k = tpl
                .iter()
                .find(|k| k.name == *kernel)
                .expect("kernel")
                .clone();
            let y = samples.iter().find(|(n, _)| n == kernel).expect("sample").1;
            k.name = format!("p_{:08x}", y.to_bits());
            all.push((k, *text != NVCC_POWF));
        }
    }
    let mut overall = [0.0f64; 2];
    for (k, ftz) in &all {
        let y = exponent_of(k);
        let (u, at, over) = worst(k, y, *ftz);
        let form = if *ftz { "libdevice.pow" } else { "powf" };
        report.push(format!("{form}(x, {y:e}): worst {u:.2} ulp at x = {at:e}"));
        overall[usize::from(*ftz)] = overall[usize::from(*ftz)].max(u);
        assert!(over <= 1.0, "{}: {u} ulp at x = {at}", k.name);
    }
    eprintln!(
        "{}\nworst overall: powf {:.2} ulp, libdevice.pow {:.2} ulp",
        report.join("\n"),
        overall[0],
        overall[1]
    );
}

#[test]
fn general_templates_build_and_are_recognised() {
    // (row kernel, which load is x: nvcc loads y first, Triton x)
    for (row, x_load) in POW_GENERAL.iter().zip([1, 0]) {
        let t = build(row).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.len() > 80, "{}", t.len());
        let k = kernels(row.0)
            .into_iter()
            .find(|k| k.name == row.1)
            .expect("kernel");
        let r = recognise(&k);
        assert_eq!(r.found.len(), 1, "{}: {:?}", row.2, r.found);
        assert_eq!(r.found[0].func, IdiomFn::Pow);
        // pow(x, y): x is the first parameter's load, y the second's.
        let l = loads(&k);
        assert_eq!(
            pow_args(&k, &[]),
            vec![vec![l[x_load].clone(), l[1 - x_load].clone()]],
            "{}",
            row.2
        );
        // The tail after `ret` is absorbed; the idiom falls through to
        // the store.
        assert!(
            !r.ir
                .instrs
                .iter()
                .any(|d| matches!(d.instr, Instr::Bra { .. })),
            "{}",
            row.2
        );
    }
}

#[test]
fn triton_pow_in_tritons_own_kernel() {
    // Triton's output itself: inline-asm loads into `{ %r }` after a
    // `mov %r, 0x0`, the common path in the tail.
    let k = kernels(include_str!("data/triton-pow-kernel.ptx"))
        .into_iter()
        .next()
        .expect("kernel");
    let l = loads(&k);
    let unwrap = |o: &Operand| match o {
        Operand::Vector(v) => v[0].clone(),
        o => o.clone(),
    };
    assert_eq!(pow_args(&k, &[]), vec![vec![unwrap(&l[0]), unwrap(&l[1])]]);
}

fn corpus_ptx() -> String {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/math/common/default_sm80.ptx"
    );
    std::fs::read_to_string(p).expect("corpus PTX")
}

#[test]
fn general_form_in_a_bounds_checked_kernel() {
    // `if (i < n) y[i] = powf(x[i], z[i])`: nvcc hoists the result's
    // initial 1.0 above the bounds check and gives the polynomial its own
    // 1.0 register; the special cases still follow `ret`.
    let k = kernels(&corpus_ptx())
        .into_iter()
        .find(|k| k.name == "m_powfxy")
        .expect("kernel");
    let l = loads(&k);
    assert_eq!(pow_args(&k, &[]), vec![vec![l[1].clone(), l[0].clone()]]);
}

#[test]
fn general_form_near_misses_are_not_recognised() {
    let ptx = corpus_ptx();
    let find = |ptx: &str| {
        kernels(ptx)
            .into_iter()
            .find(|k| k.name == "m_powfxy")
            .expect("kernel")
    };
    // The result's initial value is not 1 (x = 1 or y = 0 would give 2).
    let bad = edit_kernel(
        &ptx,
        "m_powfxy",
        "mov.f32 \t%f88, 0f3F800000",
        "mov.f32 \t%f88, 0f40000000",
        0,
    );
    assert!(pow_args(&find(&bad), &[]).is_empty());
    // A tail block returns somewhere else than the join.
    let bad = edit_kernel(
        &ptx,
        "m_powfxy",
        "bra.uni \t$L__BB23_10;",
        "bra.uni \t$L__BB23_11;",
        1,
    );
    assert!(pow_args(&find(&bad), &[]).is_empty());
    // The code before the tail falls into it.
    let bad = edit_kernel(&ptx, "m_powfxy", "\tret;", "\tmov.u32 \t%r2, 0;", 0);
    assert!(pow_args(&find(&bad), &[]).is_empty());
    // One constant of the special cases changed.
    let bad = edit_kernel(&ptx, "m_powfxy", "2139095040", "2139095041", 0);
    assert!(pow_args(&find(&bad), &[]).is_empty());
    // The original is recognised.
    assert_eq!(pow_args(&find(&ptx), &[]).len(), 1);
}

/// The general template kernel's original PTX run bit-exactly on pairs.
fn run_xy(k: &KernelIr, xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![u64::from(BLOCK)],
    };
    let inp = CtaInput {
        kernel: Arc::new(k.clone()),
        funcs: Vec::new(),
        block: [BLOCK, 1, 1],
        grid: [1, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params: (0..3).map(|tensor| ParamValue::Tensor { tensor }).collect(),
        tensors: vec![
            t("x", Role::Input),
            t("y", Role::Input),
            t("z", Role::Output),
        ],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    };
    let mut out = Vec::new();
    for (cx, cy) in xs.chunks(BLOCK as usize).zip(ys.chunks(BLOCK as usize)) {
        let (mut x, mut y) = (cx.to_vec(), cy.to_vec());
        x.resize(BLOCK as usize, 1.0);
        y.resize(BLOCK as usize, 1.0);
        let (r, _) = run_cta(&inp, [0, 0, 0], Ieee::new(vec![x, y, vec![]]));
        assert!(r.findings.is_empty(), "{}: {:?}", k.name, r.findings);
        let z = r.outputs.iter().find(|o| o.tensor == 2).expect("output");
        let mut zs = vec![f64::NAN; BLOCK as usize];
        for (i, e) in &z.elements {
            zs[*i as usize] = match e {
                OutputValue::Data(v) => IVal::to_f64(*v),
                other => panic!("{}: element {i}: {other:?}", k.name),
            };
        }
        out.extend_from_slice(&zs[..cx.len()]);
    }
    out
}

#[test]
fn general_forms_agree_with_libm() {
    for row in POW_GENERAL {
        let k = kernels(row.0)
            .into_iter()
            .find(|k| k.name == row.1)
            .expect("kernel");
        general_agreement(row.2, &k);
    }
}

fn general_agreement(form: &str, k: &KernelIr) {
    let special_x = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        -0.5,
        3.0,
        -3.0,
        10.0,
        -10.0,
        1e-40,
        -1e-40,
        1e-45,
        1e30,
        -1e30,
        3.4e38,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let special_y = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        3.0,
        -3.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        7.0,
        -7.0,
        1e-3,
        100.0,
        -100.0,
        127.0,
        -149.0,
        16777217.0,
        1e10,
        -1e10,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &x in &special_x {
        for &y in &special_y {
            xs.push(x);
            ys.push(y);
        }
    }
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    for i in 0..6000 {
        // x log-spread of both signs; y: integers (negative x gives a
        // real result), halves, and arbitrary reals, up to where the
        // result over- or underflows.
        let m = 2f64.powf(-60.0 + 120.0 * next());
        let x = if i % 3 == 0 { -m } else { m };
        let y = match i % 4 {
            0 => (next() * 60.0 - 30.0).round(),
            1 => (next() * 60.0 - 30.0).round() + 0.5,
            2 => next() * 8.0 - 4.0,
            _ => next() * 300.0 - 150.0,
        };
        xs.push(x);
        ys.push(y);
    }
    let mut xs: Vec<f64> = xs.iter().map(|x| f64::from(*x as f32)).collect();
    let mut ys: Vec<f64> = ys.iter().map(|y| f64::from(*y as f32)).collect();
    // NaN in either argument, against every special value of the other
    // (libm: `pow(1, NaN) = pow(NaN, ±0) = 1`, NaN otherwise).
    let f32_of = |v: f64| if v.is_nan() { v } else { f64::from(v as f32) };
    for nan in NANS {
        for &x in &special_x {
            xs.push(f32_of(x));
            ys.push(nan);
        }
        for &y in special_y.iter().chain(&NANS) {
            xs.push(nan);
            ys.push(f32_of(y));
        }
    }
    let got = run_xy(k, &xs, &ys);
    let mut worst = (0.0, 0.0, 0.0);
    let mut neg_int = 0;
    // Triton's form is built with `.ftz`: subnormal arguments and results
    // are flushed to zero — outside its domain, as docs/semantics.md §2 treats
    // `.ftz` (a flushed result must be the zero of the right sign).
    let ftz = form.contains("Triton");
    let mut over = Vec::new();
    let tiny = f64::from(f32::MIN_POSITIVE);
    for ((x, y), g) in xs.iter().zip(&ys).zip(&got) {
        if ftz && *x != 0.0 && x.abs() < tiny {
            continue;
        }
        let want = x.powf(*y);
        if *x < 0.0 && want.is_finite() && want != 0.0 {
            neg_int += 1;
        }
        let flushed = ftz && want.abs() < tiny && *g == 0.0;
        let u = if flushed { 0.0 } else { ulps(*g, want) };
        // Triton contracts the log's error compensation into fmas (FP
        // fusion), so log2|x| is less accurate and the error grows with
        // |y·log2|x|| (measured up to ~0.7 ulp per unit): allowed
        // 2 + |y·log2|x|| ulp there.
        let t = (y * x.abs().log2()).abs();
        let bound = if ftz && t.is_finite() { 2.0 + t } else { 2.0 };
        if u > bound {
            over.push((u, *x, *y));
        }
        if u > worst.0 {
            worst = (u, *x, *y);
        }
    }
    eprintln!(
        "{form}: {} pairs ({neg_int} with x < 0 and a real result): worst {:.2} ulp at x = {:e}, y = {:e}",
        xs.len(),
        worst.0,
        worst.1,
        worst.2
    );
    assert!(neg_int > 500, "{neg_int}");
    assert!(over.is_empty(), "{form}: beyond the bound: {over:?}");
}

#[test]
fn general_form_in_a_grid_stride_loop() {
    // nvcc puts the special-case blocks before the loop head (jumped over
    // by `bra.uni` into the loop), the result's 1.0 inside the loop.
    let k = kernels(CONTEXTS)
        .into_iter()
        .find(|k| k.name == "pow_loop")
        .expect("kernel");
    let l = loads(&k);
    // nvcc loads z (param 1) first.
    assert_eq!(pow_args(&k, &[]), vec![vec![l[1].clone(), l[0].clone()]]);
    // Only the loop's own conditional branches are left: the entry test
    // and the back edge.
    let r = recognise(&k);
    let guarded =
        r.ir.instrs
            .iter()
            .filter(|d| matches!(d.instr, Instr::Bra { .. }) && d.guard.is_some())
            .count();
    assert_eq!(guarded, 2);
}
