//! The template library: which kernel of which template file is which
//! function, and what its recognition assumes.
//!
//! Adding a form = adding a `y[i] = f(x[i])` kernel to a template file
//! (regenerated from `templates/libm.cu` or copied from Triton output)
//! and a row here; `tests/agreement.rs` then proves the form computes the
//! function (bit-exact runs of the template PTX against libm).

use std::sync::OnceLock;

use ptxeq_ir::IdiomFn;

use crate::template::{Template, extract};

/// nvcc 13.5.37 `-arch=sm_80` (sm_90 identical), default flags.
pub const NVCC_DEFAULT: &str = include_str!("../templates/nvcc-default.ptx");
/// The same with `-use_fast_math`.
pub const NVCC_FAST: &str = include_str!("../templates/nvcc-fast.ptx");
/// Triton 3.9 forms.
pub const TRITON: &str = include_str!("../templates/triton.ptx");

const LOG2E: &str = "log2(e) recovered from its f32 rounding 0f3FB8AA3B (ex2(x·log2 e) = e^x)";
const LN2: &str = "ln(2) recovered from its f32 rounding 0f3F317218 (lg2(x)·ln 2 = ln x)";
const LIBM: &str = "an inlined libm expansion is replaced by the real function it approximates \
                    (within a few ulp, checked bit-exactly on the expansion's PTX)";

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
    let lowered = ptxeq_lower::lower_source(text);
    let k = lowered
        .module
        .kernels
        .iter()
        .find(|k| k.name == kernel)
        .ok_or_else(|| format!("{name}: no kernel {kernel}"))?;
    extract(k, name, func, assumptions).map_err(|e| format!("{name}: {e}"))
}

/// Every template, longest first (a longer expansion may contain a
/// shorter one's instructions, e.g. tanh's `ex2`).
pub fn templates() -> &'static [Template] {
    static ALL: OnceLock<Vec<Template>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v: Vec<Template> = ROWS.iter().filter_map(|r| build(r).ok()).collect();
        let fused: Vec<Template> = v
            .iter()
            .filter(|t| t.func == IdiomFn::Exp)
            .filter_map(|t| t.fused(FUSED_NAMES.iter().find(|(n, _)| *n == t.name)?.1))
            .collect();
        v.extend(fused);
        v.sort_by_key(|t| std::cmp::Reverse(t.len()));
        v
    })
}
