//! f64 `pow` (nvcc): a call of `.func __internal_accurate_pow` with the
//! special cases inline and, with both arguments variable, after `ret`
//! (returning onto the final `x == 1 || y == 0` select). Recognition,
//! near misses, and agreement with libm of the templates' own PTX run in
//! the bit-exact IEEE domain.

use std::sync::Arc;

use ptxeq_exec::{CtaInput, IVal, Ieee, Limits, OutputValue, ParamValue, TensorInfo, run_cta};
mod common;

use common::{edit_kernel, loads, pow_args};
use ptxeq_exec::Role;
use ptxeq_idioms::{NVCC_POWF, POW_F64, build, recognise_in};
use ptxeq_ir::{IdiomFn, Instr, KernelIr};
use ptxeq_spec::DType;

const BLOCK: u32 = 256;

fn module(ptx: &str) -> (Vec<KernelIr>, Vec<KernelIr>) {
    let m = ptxeq_lower::lower_source(ptx).module;
    (m.kernels, m.funcs)
}

fn corpus(file: &str) -> String {
    let p = format!(
        "{}/../../corpus/math/common/{file}.ptx",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).expect("corpus PTX")
}

fn kernel(ks: &[KernelIr], name: &str) -> KernelIr {
    ks.iter()
        .find(|k| k.name == name)
        .cloned()
        .unwrap_or_else(|| panic!("no kernel {name}"))
}

#[test]
fn templates_build_and_are_recognised() {
    let (ks, fs) = module(NVCC_POWF);
    for row in POW_F64 {
        let t = build(row).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.len() > 40, "{}: {}", row.2, t.len());
        let k = kernel(&ks, row.1);
        let r = recognise_in(&k, &fs);
        assert_eq!(r.found.len(), 1, "{}: {:?}", row.2, r.found);
        assert_eq!(r.found[0].form, row.2);
        assert_eq!(
            (r.found[0].func, r.found[0].ty),
            (IdiomFn::Pow, ptxeq_ir::ScalarType::F64)
        );
        // pow(x, y): x is the first parameter's load (nvcc loads it
        // first), y the second's; pow(x, x) reads its one load twice.
        let l = loads(&k);
        let want = if l.len() == 2 {
            vec![l[0].clone(), l[1].clone()]
        } else {
            vec![l[0].clone(), l[0].clone()]
        };
        assert_eq!(pow_args(&k, &fs), vec![want], "{}", row.2);
        // Every branch (the tail's included) is absorbed; nothing calls
        // the function any more.
        assert!(
            !r.ir
                .instrs
                .iter()
                .any(|d| matches!(d.instr, Instr::Bra { .. } | Instr::Call { .. })),
            "{}",
            row.2
        );
    }
}

#[test]
fn pow_x_x_in_the_bounds_checked_corpus_kernel() {
    // `if (i < n) y[i] = pow(v, v)`, sm_80 and sm_90 (identical code).
    for file in ["default_sm80", "default_sm90"] {
        let (ks, fs) = module(&corpus(file));
        let k = kernel(&ks, "m_pow_f64");
        let l = loads(&k);
        assert_eq!(pow_args(&k, &fs), vec![vec![l[0].clone(), l[0].clone()]]);
    }
}

#[test]
fn pow_xy_in_the_bounds_checked_corpus_kernels() {
    // `if (i < n) y[i] = pow(x[i], z[i])`, and the arguments swapped: the
    // general form, its tail after the kernel's `ret`; the idiom's
    // arguments in order (nvcc loads the base first: `x[i]`, then
    // `z[i]` first in the swapped kernel).
    for file in ["default_sm80", "default_sm90"] {
        let (ks, fs) = module(&corpus(file));
        for (name, base_param) in [("m_powxy_f64", "param_0"), ("m_powyx_f64", "param_1")] {
            let k = kernel(&ks, name);
            let text = corpus(file);
            let body = &text[text.find(&format!(".entry {name}(")).expect("kernel")..];
            // The first global load's address comes from the base's
            // parameter: its `cvta` precedes the other's.
            let first_cvta = body.find("cvta.to.global").expect("cvta");
            let line = body[first_cvta..].split(';').next().expect("line");
            let param_reg = line.split(", ").nth(1).expect("operand");
            assert!(
                body.contains(&format!("{param_reg}, [{name}_{base_param}]")),
                "{file} {name}: the first load is not the base's"
            );
            let l = loads(&k);
            assert_eq!(
                pow_args(&k, &fs),
                vec![vec![l[0].clone(), l[1].clone()]],
                "{file} {name}"
            );
        }
    }
}

#[test]
fn near_misses_are_not_recognised() {
    let ptx = NVCC_POWF;
    let cases = [
        // The special case's constant (x = 1 gives 1) changed.
        (
            "t_pow_xy",
            "setp.eq.f64 \t%p28, %fd1, 0d3FF0000000000000",
            "setp.eq.f64 \t%p28, %fd1, 0d4000000000000000",
            0,
        ),
        // A tail block returns elsewhere (onto the store, skipping the
        // final select).
        (
            "t_pow_xy",
            "bra.uni \t$L__BB15_13;",
            "bra.uni \t$L__BB15_5;",
            1,
        ),
        // The NaN case's `add.rn` made `add.rz`.
        (
            "t_pow_xy",
            "add.rn.f64 \t%fd20, %fd1, %fd2",
            "add.rz.f64 \t%fd20, %fd1, %fd2",
            0,
        ),
        // pow(x, x)'s sign test of the result negated.
        ("t_pow_xx", "neg.f64", "abs.f64", 0),
        // Another function called.
        (
            "t_pow_xx",
            "__internal_accurate_pow, ",
            "__internal_other_pow, ",
            0,
        ),
    ];
    for (name, from, to, n) in cases {
        let edited = edit_kernel(ptx, name, from, to, n);
        let edited = if to.contains("other_pow") {
            // The same body under another name: a call matches a
            // function by name and body.
            edited.replace(
                ".func  (.param .b64 func_retval0) __internal_accurate_pow(",
                ".func  (.param .b64 func_retval0) __internal_other_pow(",
            )
        } else {
            edited
        };
        let (ks, fs) = module(&edited);
        let k = kernel(&ks, name);
        assert!(
            pow_args(&k, &fs).is_empty(),
            "{name}: `{from}` -> `{to}` recognised"
        );
    }
    // A callee whose body differs (one rounding mode changed).
    let body_at = ptx
        .find(".func  (.param .b64 func_retval0) __internal_accurate_pow(")
        .expect("callee");
    let fma = body_at
        + ptx[body_at..]
            .find("fma.rn.f64")
            .expect("an fma in the callee");
    let edited = format!(
        "{}fma.rz.f64{}",
        &ptx[..fma],
        &ptx[fma + "fma.rn.f64".len()..]
    );
    let (ks, fs) = module(&edited);
    for row in POW_F64 {
        assert!(pow_args(&kernel(&ks, row.1), &fs).is_empty(), "{}", row.2);
    }
}

/// Runs a template kernel (with the module's functions) on `xs` (and
/// `ys` for pow(x, y)); the results.
fn run(k: &KernelIr, funcs: &[KernelIr], xs: &[f64], ys: Option<&[f64]>) -> Vec<f64> {
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F64,
        shape: vec![u64::from(BLOCK)],
    };
    let n_in = if ys.is_some() { 2 } else { 1 };
    let mut tensors: Vec<TensorInfo> = ["x", "y"][..n_in]
        .iter()
        .map(|n| t(n, Role::Input))
        .collect();
    tensors.push(t("z", Role::Output));
    let inp = CtaInput {
        kernel: Arc::new(k.clone()),
        funcs: funcs.iter().cloned().map(Arc::new).collect(),
        block: [BLOCK, 1, 1],
        grid: [1, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params: (0..=n_in as u32)
            .map(|tensor| ParamValue::Tensor { tensor })
            .collect(),
        tensors,
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    };
    let mut out = Vec::new();
    for (c, cx) in xs.chunks(BLOCK as usize).enumerate() {
        let pad = |v: &[f64]| {
            let mut v = v.to_vec();
            v.resize(BLOCK as usize, 1.0);
            v
        };
        let mut data = vec![pad(cx)];
        if let Some(ys) = ys {
            data.push(pad(&ys[c * BLOCK as usize..(c * BLOCK as usize + cx.len())]));
        }
        data.push(vec![]);
        let (r, _) = run_cta(&inp, [0, 0, 0], Ieee::new(data));
        assert!(r.findings.is_empty(), "{}: {:?}", k.name, r.findings);
        let z = r
            .outputs
            .iter()
            .find(|o| o.tensor as usize == n_in)
            .expect("output");
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

/// Distance in ulp (representable doubles between); NaN agrees only with
/// NaN, and values of opposite sign (zeros aside) are infinitely apart.
fn ulps(got: f64, want: f64) -> f64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let key = |v: f64| {
        let b = v.to_bits() as i64;
        if b < 0 { i64::MIN - b } else { b }
    };
    (key(got) as i128 - key(want) as i128).unsigned_abs() as f64
}

const SPECIAL: &[f64] = &[
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
    1e-310,
    -1e-310,
    5e-324,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN_POSITIVE,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

/// x: a log-spaced spread over the whole range, both signs.
fn xs() -> Vec<f64> {
    let mut v: Vec<f64> = SPECIAL.to_vec();
    for i in 0..60 {
        let e = -1070.0 + 2090.0 * f64::from(i) / 59.0;
        let m = 1.0 + f64::from(i % 7) / 7.0;
        v.push(m * e.exp2());
        v.push(-m * (e * 0.37).exp2());
    }
    v.extend((0..40).map(|i| 0.9 + 0.2 * f64::from(i) / 39.0));
    v
}

/// y: integers (odd and even), halves, fractions, large, both signs.
fn ys() -> Vec<f64> {
    let mut v: Vec<f64> = SPECIAL.to_vec();
    v.extend((-12..=12).map(f64::from));
    v.extend([
        0.25,
        -0.25,
        1.5,
        -1.5,
        2.5,
        -2.5,
        1.0 / 3.0,
        0.1,
        -0.1,
        7.7,
        -7.7,
    ]);
    v.extend([
        53.0,
        1e10,
        -1e10,
        1e300,
        -1e300,
        4503599627370497.0,
        9007199254740993.0,
    ]);
    v
}

/// libm's pow agrees within 2 ulp (CUDA documents 2 for pow; glibc's is
/// below 1).
const BOUND: f64 = 2.0;

#[test]
fn pow_xy_agrees_with_libm() {
    let (ks, fs) = module(NVCC_POWF);
    let k = kernel(&ks, "t_pow_xy");
    let (mut px, mut py) = (Vec::new(), Vec::new());
    for &x in &xs() {
        for &y in &ys() {
            px.push(x);
            py.push(y);
        }
    }
    assert!(px.len() > 8000);
    let got = run(&k, &fs, &px, Some(&py));
    let mut worst = (0.0, 0.0, 0.0);
    for ((&x, &y), &g) in px.iter().zip(&py).zip(&got) {
        let u = ulps(g, x.powf(y));
        assert!(
            u <= BOUND,
            "pow({x:e}, {y:e}) = {g:e}, libm {:e}: {u} ulp",
            x.powf(y)
        );
        if u > worst.0 {
            worst = (u, x, y);
        }
    }
    eprintln!(
        "pow, f64: worst {} ulp at pow({:e}, {:e}) over {} points",
        worst.0,
        worst.1,
        worst.2,
        px.len()
    );
}

#[test]
fn pow_xx_agrees_with_libm() {
    let (ks, fs) = module(NVCC_POWF);
    let k = kernel(&ks, "t_pow_xx");
    let mut px = xs();
    px.extend((0..3000).map(|i| -200.0 + 400.0 * f64::from(i) / 2999.0));
    px.extend((0..1000).map(|i| -(f64::from(i) * 0.37).exp2()));
    let got = run(&k, &fs, &px, None);
    let mut worst = (0.0, 0.0);
    for (&x, &g) in px.iter().zip(&got) {
        let u = ulps(g, x.powf(x));
        assert!(
            u <= BOUND,
            "pow({x:e}, {x:e}) = {g:e}, libm {:e}: {u} ulp",
            x.powf(x)
        );
        if u > worst.0 {
            worst = (u, x);
        }
    }
    eprintln!(
        "pow(x, x), f64: worst {} ulp at x = {:e} over {} points",
        worst.0,
        worst.1,
        px.len()
    );
}
