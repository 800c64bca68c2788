//! The check spec (README, "The check spec"): which kernels to compare or check, how
//! they are launched, what each kernel param is bound to, and — in the
//! corpus — the verdict the check must reach.
//!
//! A spec comes from a `check.toml` ([`CheckSpec::load`],
//! [`CheckSpec::from_toml_str`]) or from CLI flags ([`CheckSpec::from_flags`]).
//! Both paths run the same validation, so a [`CheckSpec`] value is always
//! internally consistent: launch dimensions in range, every param name
//! declared, every declared tensor/scalar used, an expected verdict that
//! fits the kind of case. Reading never panics; every failure is a
//! [`SpecError`] naming the key and, for TOML, its line and column.
//!
//! Consistency with the PTX itself (param counts, `.reqntid`) needs the
//! parser and is checked by the callers (`ptxeq-corpus`, the CLI).

mod bindings;
mod dtype;
mod error;
mod flags;
mod model;
mod raw;
mod validate;
mod verdict;

use std::path::Path;

pub use bindings::{FieldBinding, FunctionBinding, GlobalBinding, KnownFn, StructField, Values};
pub use dtype::{DType, Role};
pub use error::{LineCol, SpecError, SpecErrorKind};
pub use flags::{
    LaunchFlags, SpecFlags, parse_compare_flag, parse_dims, parse_param_list, parse_scalar_flag,
};
pub use model::{
    CheckSpec, Ctas, DEFAULT_AUTO_SCAN_LIMIT, DEFAULT_MAX_CTAS, DEFAULT_MAX_STEPS, Expect, F64,
    FormulaRef, KernelRef, Kernels, Launch, ParamBinding, RunLimits, ScalarValue, Status,
    TensorSpec, in_region, show_region,
};
pub use validate::MAX_THREADS_PER_BLOCK;
pub use verdict::{CaseKind, Verdict};

impl CheckSpec {
    /// Parses and validates a spec; relative `ptx` paths are resolved
    /// against `base_dir` (the directory of the spec file).
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<CheckSpec, SpecError> {
        let raw: raw::RawSpec = toml::from_str(text).map_err(|e| {
            SpecError::new(SpecErrorKind::Syntax, e.message().trim_end()).at(e.span(), text)
        })?;
        validate::validate(raw, base_dir)
            .map_err(|e| SpecError::new(SpecErrorKind::Invalid, e.message).at(e.span, text))
    }

    /// Reads, parses and validates the spec file at `path`.
    pub fn load(path: &Path) -> Result<CheckSpec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SpecError::new(SpecErrorKind::Io, format!("cannot read the spec: {e}")).with_path(path)
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        CheckSpec::from_toml_str(&text, base).map_err(|e| e.with_path(path))
    }
}

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_launch;

#[cfg(test)]
mod tests_formula;
