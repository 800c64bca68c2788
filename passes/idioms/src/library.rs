//! The template library: which kernel of which template file is which
//! function, and what its recognition assumes.
//!
//! Adding a form = adding a `y[i] = f(x[i])` kernel to a template file
//! (regenerated from `templates/libm.cu` or copied from Triton output)
//! and a row here; `tests/agreement.rs` then proves the form computes the
//! function (bit-exact runs of the template PTX against libm).

use std::sync::OnceLock;

use ptxeq_ir::IdiomFn;

pub use crate::constarg::PowClass;
use crate::template::{Template, extract};

/// nvcc 13.5.37 `-arch=sm_80` (sm_90 identical), default flags.
pub const NVCC_DEFAULT: &str = include_str!("../templates/nvcc-default.ptx");
/// The same with `-use_fast_math`.
pub const NVCC_FAST: &str = include_str!("../templates/nvcc-fast.ptx");
/// Triton 3.9 forms.
pub const TRITON: &str = include_str!("../templates/triton.ptx");
/// nvcc 13.5.37 `-arch=sm_80` (sm_90 identical), default flags:
/// `powf(x, c)` for constant exponents (`templates/powf.cu`).
pub const NVCC_POWF: &str = include_str!("../templates/nvcc-powf.ptx");
/// Triton 3.9 `libdevice.pow` (fp32).
pub const TRITON_POW: &str = include_str!("../templates/triton-pow.ptx");

const POW_CONST: &str = "powf with a constant exponent: the code of the exponent's class \
                         (immediates equal to y and y·0.5 checked against y) is replaced by \
                         x^y; checked bit-exactly on compiled kernels for many exponents";

const TRITON_POW_ACC: &str = "Triton's inlined __nv_powf is replaced by pow(x, y); it approximates \
                              it within 2 + |y·log2 x| ulp (FP fusion contracts the log's \
                              error compensation), checked bit-exactly on the expansion's PTX";

/// One constant-exponent class: template file, form name, class, and the
/// template kernels with the exponent each was compiled for.
pub type PowRow = (
    &'static str,
    &'static str,
    PowClass,
    &'static [(&'static str, f32)],
);

pub const POW_CLASSES: &[PowRow] = &[
    (
        NVCC_POWF,
        "powf(x, c), c > 0 not an integer (nvcc, default flags)",
        PowClass::PosFrac,
        &[
            ("t_powf_pfrac_a", 1.5),
            ("t_powf_pfrac_b", 0.75),
            ("t_powf_pfrac_c", 2.5),
        ],
    ),
    (
        NVCC_POWF,
        "powf(x, c), c < 0 not an integer (nvcc, default flags)",
        PowClass::NegFrac,
        &[
            ("t_powf_nfrac_a", -0.5),
            ("t_powf_nfrac_b", -1.5),
            ("t_powf_nfrac_c", -2.5),
        ],
    ),
    (
        NVCC_POWF,
        "powf(x, n), integer n >= 3 (nvcc, default flags)",
        PowClass::PosInt,
        &[
            ("t_powf_pint_a", 3.0),
            ("t_powf_pint_b", 4.0),
            ("t_powf_pint_c", 5.0),
        ],
    ),
    (
        NVCC_POWF,
        "powf(x, n), integer n <= -1 (nvcc, default flags)",
        PowClass::NegInt,
        &[
            ("t_powf_nint_a", -1.0),
            ("t_powf_nint_b", -2.0),
            ("t_powf_nint_c", -3.0),
        ],
    ),
    (
        NVCC_POWF,
        "powf(x, 1) (nvcc, default flags)",
        PowClass::Fixed(1.0),
        &[("t_powf_one", 1.0)],
    ),
    (
        NVCC_POWF,
        "powf(x, 2) (nvcc, default flags)",
        PowClass::Fixed(2.0),
        &[("t_powf_two", 2.0)],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, c), c > 0 not an integer (Triton)",
        PowClass::PosFrac,
        &[
            ("t_tpow_pfrac_a", 1.5),
            ("t_tpow_pfrac_b", 0.75),
            ("t_tpow_pfrac_c", 2.5),
        ],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, c), c < 0 not an integer (Triton)",
        PowClass::NegFrac,
        &[
            ("t_tpow_nfrac_a", -0.5),
            ("t_tpow_nfrac_b", -1.5),
            ("t_tpow_nfrac_c", -2.5),
        ],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, n), integer n >= 3 (Triton)",
        PowClass::PosInt,
        &[
            ("t_tpow_pint_a", 3.0),
            ("t_tpow_pint_b", 4.0),
            ("t_tpow_pint_c", 5.0),
        ],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, n), integer n <= -1 (Triton)",
        PowClass::NegInt,
        &[
            ("t_tpow_nint_a", -1.0),
            ("t_tpow_nint_b", -2.0),
            ("t_tpow_nint_c", -3.0),
        ],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, 1) (Triton)",
        PowClass::Fixed(1.0),
        &[("t_tpow_one", 1.0)],
    ),
    (
        TRITON_POW,
        "libdevice.pow(x, 2) (Triton)",
        PowClass::Fixed(2.0),
        &[("t_tpow_two", 2.0)],
    ),
];

/// powf with both arguments variable (two-argument rows: not in
/// [`ROWS`], whose kernels are `y = f(x)`; `tests/powf.rs` checks them).
pub const POW_GENERAL: &[Row] = &[
    (
        NVCC_POWF,
        "t_powf_xy",
        "powf (nvcc, default flags)",
        IdiomFn::Pow,
        &[LIBM],
    ),
    (
        TRITON_POW,
        "t_pow_libdevice",
        "libdevice.pow (Triton)",
        IdiomFn::Pow,
        &[TRITON_POW_ACC],
    ),
];

/// f64 `pow` (nvcc, sm_80 and sm_90 alike): the core is a call of
/// `__internal_accurate_pow` (matched by body, see `calls`), the special
/// cases inline and (both arguments variable) after `ret`, returning to
/// the final `x == 1 || y == 0` select (`Template::rejoin`).
/// `tests/pow_f64.rs` checks them.
pub const POW_F64: &[Row] = &[
    (
        NVCC_POWF,
        "t_pow_xy",
        "pow, f64 (nvcc)",
        IdiomFn::Pow,
        &[LIBM],
    ),
    // `pow(x, x)`: one argument loaded, passed as both (see [`build`]).
    (
        NVCC_POWF,
        "t_pow_xx",
        "pow(x, x), f64 (nvcc)",
        IdiomFn::Pow,
        &[LIBM],
    ),
];

/// Builds the template of one constant-exponent class.
pub fn build_pow_class(row: &PowRow) -> Result<Template, String> {
    let (text, name, class, kernels) = *row;
    let lowered = lowered_template(text);
    let mut samples = Vec::new();
    for (kernel, y) in kernels {
        let k = lowered
            .module
            .kernels
            .iter()
            .find(|k| k.name == *kernel)
            .ok_or_else(|| format!("{name}: no kernel {kernel}"))?;
        let assumptions: &'static [&'static str] = if text == TRITON_POW {
            &[POW_CONST, TRITON_POW_ACC]
        } else {
            &[POW_CONST]
        };
        let t = extract(k, name, IdiomFn::Pow, assumptions).map_err(|e| format!("{name}: {e}"))?;
        samples.push((t, *y));
    }
    crate::constarg::derive(&samples, class, name)
}

const LOG2E: &str = "log2(e) recovered from its f32 rounding 0f3FB8AA3B (ex2(x·log2 e) = e^x)";
const LN2: &str = "ln(2) recovered from its f32 rounding 0f3F317218 (lg2(x)·ln 2 = ln x)";
const LIBM: &str = "an inlined libm expansion is replaced by the real function it approximates \
                    (within a few ulp, checked bit-exactly on the expansion's PTX)";

const SCRATCH: &str = "the expansion's local-memory scratch array (Payne–Hanek reduction) is \
                       private to it: nothing else reads it, so its absorbed stores are dead";

const TABLES: &str = "the expansion's module tables (__cudart_sin_cos_coeffs, and \
                      __cudart_i2opi_d in the called __internal_trig_reduction_slowpathd, \
                      whose body equals the template's) hold their initialisers: internal \
                      to the module and read with ld.global.nc (read-only while the kernel runs)";

const TABLE_F32: &str = "the module table __cudart_i2opi_f (bits of 2/π) holds its initialiser: \
                         internal to the module and read with ld.global.nc (read-only while \
                         the kernel runs)";

/// One row: template file text, kernel, form name, function, assumptions.
pub type Row = (
    &'static str,
    &'static str,
    &'static str,
    IdiomFn,
    &'static [&'static str],
);

pub const ROWS: &[Row] = &[
    (
        NVCC_DEFAULT,
        "t_expf",
        "expf (nvcc, default flags)",
        IdiomFn::Exp,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_logf",
        "logf (nvcc, default flags)",
        IdiomFn::Log,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_log2f",
        "log2f (nvcc, default flags)",
        IdiomFn::Log2,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_tanhf",
        "tanhf (nvcc, default flags)",
        IdiomFn::Tanh,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_exp",
        "exp, f64 (nvcc)",
        IdiomFn::Exp,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_sinf",
        "sinf (nvcc, default flags)",
        IdiomFn::Sin,
        &[LIBM, SCRATCH],
    ),
    (
        NVCC_DEFAULT,
        "t_cosf",
        "cosf (nvcc, default flags)",
        IdiomFn::Cos,
        &[LIBM, SCRATCH],
    ),
    (
        NVCC_DEFAULT,
        "t_log",
        "log, f64 (nvcc)",
        IdiomFn::Log,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_tanh",
        "tanh, f64 (nvcc)",
        IdiomFn::Tanh,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_sin",
        "sin, f64 (nvcc)",
        IdiomFn::Sin,
        &[LIBM, TABLES],
    ),
    (
        NVCC_DEFAULT,
        "t_cos",
        "cos, f64 (nvcc)",
        IdiomFn::Cos,
        &[LIBM, TABLES],
    ),
    (
        NVCC_FAST,
        "t_expf",
        "expf / __expf (nvcc -use_fast_math)",
        IdiomFn::Exp,
        &[LOG2E],
    ),
    (
        NVCC_FAST,
        "t_logf",
        "logf / __logf (nvcc -use_fast_math)",
        IdiomFn::Log,
        &[LN2],
    ),
    (
        TRITON,
        "t_exp_triton",
        "tl.exp (Triton)",
        IdiomFn::Exp,
        &[LOG2E],
    ),
    (
        TRITON,
        "t_tanh_libdevice",
        "libdevice.tanh (Triton)",
        IdiomFn::Tanh,
        &[LIBM],
    ),
    (
        TRITON,
        "t_sin_triton",
        "tl.sin / libdevice.sin (Triton)",
        IdiomFn::Sin,
        &[LIBM, SCRATCH, TABLE_F32],
    ),
    (
        TRITON,
        "t_cos_triton",
        "tl.cos (Triton)",
        IdiomFn::Cos,
        &[LIBM, SCRATCH, TABLE_F32],
    ),
    // erff is a branch between two polynomials, the larger one through
    // `ex2` and a copysign; `-use_fast_math` only adds `.ftz`.
    (
        NVCC_DEFAULT,
        "t_erff",
        "erff (nvcc, default flags)",
        IdiomFn::Erf,
        &[LIBM],
    ),
    (
        NVCC_FAST,
        "t_erff",
        "erff (nvcc -use_fast_math)",
        IdiomFn::Erf,
        &[LIBM],
    ),
    (
        TRITON,
        "t_erf_triton",
        "tl.math.erf / libdevice.erf (Triton)",
        IdiomFn::Erf,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_expm1f",
        "expm1f (nvcc, default flags)",
        IdiomFn::Expm1,
        &[LIBM],
    ),
    (
        NVCC_FAST,
        "t_expm1f",
        "expm1f (nvcc -use_fast_math)",
        IdiomFn::Expm1,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_log1pf",
        "log1pf (nvcc, default flags)",
        IdiomFn::Log1p,
        &[LIBM],
    ),
    (
        NVCC_FAST,
        "t_log1pf",
        "log1pf (nvcc -use_fast_math)",
        IdiomFn::Log1p,
        &[LIBM],
    ),
    (
        TRITON,
        "t_log_triton",
        "tl.log / libdevice.log (Triton)",
        IdiomFn::Log,
        &[LIBM],
    ),
    (
        TRITON,
        "t_log2_triton",
        "tl.log2 (Triton)",
        IdiomFn::Log2,
        &[LIBM],
    ),
    (
        TRITON,
        "t_exp_libdevice",
        "libdevice.exp (Triton)",
        IdiomFn::Exp,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_log10f",
        "log10f (nvcc, default flags)",
        IdiomFn::Log10,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_exp10f",
        "exp10f (nvcc, default flags)",
        IdiomFn::Exp10,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_sinhf",
        "sinhf (nvcc, default flags)",
        IdiomFn::Sinh,
        &[LIBM],
    ),
    (
        NVCC_FAST,
        "t_sinhf",
        "sinhf (nvcc -use_fast_math)",
        IdiomFn::Sinh,
        &[LIBM],
    ),
    (
        NVCC_DEFAULT,
        "t_coshf",
        "coshf (nvcc, default flags)",
        IdiomFn::Cosh,
        &[LIBM],
    ),
    (
        NVCC_FAST,
        "t_coshf",
        "coshf (nvcc -use_fast_math)",
        IdiomFn::Cosh,
        &[LIBM],
    ),
];

/// Names of the forms with the scratch array's address computed outside
/// the expansion (in a loop: hoisted out of it), by the plain form's name.
const HOISTED_NAMES: &[(&str, &str)] = &[
    (
        "sinf (nvcc, default flags)",
        "sinf (nvcc, default flags), scratch address hoisted",
    ),
    (
        "cosf (nvcc, default flags)",
        "cosf (nvcc, default flags), scratch address hoisted",
    ),
    (
        "sincosf (nvcc, default flags)",
        "sincosf (nvcc, default flags), scratch address hoisted",
    ),
    (
        "sinf and cosf of one argument (nvcc, default flags)",
        "sinf and cosf of one argument (nvcc, default flags), scratch address hoisted",
    ),
    (
        "sinf and cosf of one argument, in a loop (nvcc, default flags)",
        "sinf and cosf of one argument, in a loop (nvcc, default flags), scratch address hoisted",
    ),
];

/// Names of the hoisted forms with the loads' address reassociated (one
/// scratch array shared by several expansions: `sinf(a) + sinf(b)`), by
/// the hoisted form's name.
const REASSOCIATED_NAMES: &[(&str, &str)] = &[
    (
        "sinf (nvcc, default flags), scratch address hoisted",
        "sinf (nvcc, default flags), scratch array shared",
    ),
    (
        "cosf (nvcc, default flags), scratch address hoisted",
        "cosf (nvcc, default flags), scratch array shared",
    ),
    (
        "sincosf (nvcc, default flags), scratch address hoisted",
        "sincosf (nvcc, default flags), scratch array shared",
    ),
    (
        "sinf and cosf of one argument (nvcc, default flags), scratch address hoisted",
        "sinf and cosf of one argument (nvcc, default flags), scratch array shared",
    ),
];

/// Names of the fused forms (`acc + f(x)` contracted into the final
/// `fma`), by the name of the plain form.
const FUSED_NAMES: &[(&str, &str)] = &[(
    "expf (nvcc, default flags)",
    "expf (nvcc, default flags) + addend, contracted into fma",
)];

/// Builds the template of one row.
pub fn build(row: &Row) -> Result<Template, String> {
    let (text, kernel, name, func, assumptions) = *row;
    let lowered = lowered_template(text);
    let k = lowered
        .module
        .kernels
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| format!("{name}: no kernel {kernel}"))?;
    let mut t = extract(k, name, func, assumptions).map_err(|e| format!("{name}: {e}"))?;
    attach_callees(&mut t, &lowered.module.funcs)?;
    // A pow kernel that loads one value passes it as both arguments
    // (`pow(x, x)`: nvcc merges the special cases of equal arguments, so
    // it is a form of its own); the idiom reads it twice.
    if func == IdiomFn::Pow && t.args.is_empty() {
        t.args.push(t.leaf);
    }
    if t.second.is_some() {
        return Err(format!("{name}: two results; a PAIR_ROWS row"));
    }
    Ok(t)
}

/// Records the body of every function the template calls (a template
/// calling a function its module lacks is an error).
fn attach_callees(t: &mut Template, funcs: &[ptxeq_ir::KernelIr]) -> Result<(), String> {
    let bodies = crate::calls::bodies(funcs);
    for n in t.steps.iter().flat_map(crate::calls::callees) {
        let b = bodies
            .get(&n)
            .ok_or_else(|| format!("{}: calls {n}, not in the module", t.name))?;
        t.callees.insert(n, b.clone());
    }
    Ok(())
}

/// An expansion with two results: template file text, kernel, form, the
/// function of the result stored first, of the one stored last, and
/// assumptions.
pub type PairRow = (
    &'static str,
    &'static str,
    &'static str,
    IdiomFn,
    IdiomFn,
    &'static [&'static str],
);

/// `sincosf(x, &s, &c)` shares one reduction between the two results, so
/// neither the sinf nor the cosf template matches it; this template
/// replaces it by two idioms.
pub const PAIR_ROWS: &[PairRow] = &[
    (
        NVCC_DEFAULT,
        "t_sincosf",
        "sincosf (nvcc, default flags)",
        IdiomFn::Sin,
        IdiomFn::Cos,
        &[LIBM, SCRATCH],
    ),
    // `sinf(v)` and `cosf(v)` written apart: one fast reduction, two
    // Payne–Hanek paths through one scratch array; sin is final (and
    // stored) before cos is computed.
    (
        NVCC_DEFAULT,
        "t_sin_cos",
        "sinf and cosf of one argument (nvcc, default flags)",
        IdiomFn::Sin,
        IdiomFn::Cos,
        &[LIBM, SCRATCH],
    ),
    // The same in a loop (RoPE over a sequence): the slow paths address
    // their loads from the hoisted `base + 8`.
    (
        NVCC_DEFAULT,
        "t_sin_cos_loop",
        "sinf and cosf of one argument, in a loop (nvcc, default flags)",
        IdiomFn::Sin,
        IdiomFn::Cos,
        &[LIBM, SCRATCH],
    ),
];

/// The lowered module of a template file, parsed once per process: many
/// rows share one file, and parsing it per row made template building
/// (paid once by every `ptxeq` process) several times slower than needed.
fn lowered_template(text: &'static str) -> &'static ptxeq_lower::LowerResult {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static CACHE: OnceLock<Mutex<HashMap<usize, &'static ptxeq_lower::LowerResult>>> =
        OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = text.as_ptr() as usize;
    if let Some(l) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return l;
    }
    // Parsed outside the lock; a racing thread may parse the same file
    // once more, and one of the two results is kept.
    let l: &'static ptxeq_lower::LowerResult = Box::leak(Box::new(ptxeq_lower::lower_source(text)));
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    let kept: &'static ptxeq_lower::LowerResult = map.entry(key).or_insert(l);
    kept
}

/// Builds the template of a two-result row.
pub fn build_pair(row: &PairRow) -> Result<Template, String> {
    let (text, kernel, name, first, last, assumptions) = *row;
    let k = lowered_template(text)
        .module
        .kernels
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| format!("{name}: no kernel {kernel}"))?;
    let mut t = extract(k, name, last, assumptions).map_err(|e| format!("{name}: {e}"))?;
    match &mut t.second {
        Some((_, f)) => *f = first,
        None => return Err(format!("{name}: one result")),
    }
    Ok(t)
}

/// The built catalogue of this process: built on first use, or installed
/// from a stored copy ([`crate::catalogue`]) before that.
static ALL: OnceLock<Vec<Template>> = OnceLock::new();

/// Every template, longest first (a longer expansion may contain a
/// shorter one's instructions, e.g. tanh's `ex2`).
pub fn templates() -> &'static [Template] {
    ALL.get_or_init(build_all)
}

/// Installs a stored catalogue (see [`crate::catalogue`]); false (and
/// nothing changes) when this process already has one.
pub(crate) fn install(v: Vec<Template>) -> bool {
    ALL.set(v).is_ok()
}

/// Whether this process has its catalogue already.
pub(crate) fn is_built() -> bool {
    ALL.get().is_some()
}

/// Builds every template from the template PTX, longest first (what
/// [`templates`] holds; about 30 ms, paid once per process unless a
/// stored catalogue is installed).
pub fn build_all() -> Vec<Template> {
    {
        let mut v: Vec<Template> = ROWS.iter().filter_map(|r| build(r).ok()).collect();
        v.extend(POW_CLASSES.iter().filter_map(|r| build_pow_class(r).ok()));
        v.extend(POW_GENERAL.iter().filter_map(|r| build(r).ok()));
        v.extend(POW_F64.iter().filter_map(|r| build(r).ok()));
        v.extend(PAIR_ROWS.iter().filter_map(|r| build_pair(r).ok()));
        let hoisted: Vec<Template> = v
            .iter()
            .filter_map(|t| t.hoisted(HOISTED_NAMES.iter().find(|(n, _)| *n == t.name)?.1))
            .collect();
        let shared: Vec<Template> = hoisted
            .iter()
            .filter_map(|t| {
                t.reassociated(REASSOCIATED_NAMES.iter().find(|(n, _)| *n == t.name)?.1)
            })
            .collect();
        v.extend(hoisted);
        v.extend(shared);
        let fused: Vec<Template> = v
            .iter()
            .filter(|t| t.func == IdiomFn::Exp)
            .filter_map(|t| t.fused(FUSED_NAMES.iter().find(|(n, _)| *n == t.name)?.1))
            .collect();
        v.extend(fused);
        v.sort_by_key(|t| std::cmp::Reverse(t.len()));
        v
    }
}
