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
//! Consistency with the PTX itself (param counts, param types, entries,
//! `.reqntid`) needs the parser and is checked where the spec is bound to
//! a kernel (`ptxeq_bind::cta_input`, the corpus runner);
//! those errors point at the spec line through [`SpecLocations`].
//! [`CheckSpec::load`] also checks that every `ptx` file exists.

mod bindings;
mod dtype;
mod error;
mod flags;
mod locations;
mod model;
mod raw;
mod tensor_map;
mod validate;
mod verdict;

use std::path::Path;

pub use bindings::{FieldBinding, FunctionBinding, GlobalBinding, KnownFn, StructField, Values};
pub use dtype::{DType, Role};
pub use error::{LineCol, SpecError, SpecErrorKind};
pub use flags::{
    LaunchFlags, SpecFlags, parse_compare_flag, parse_dims, parse_param_list, parse_scalar_flag,
};
pub use locations::SpecLocations;
pub use model::{
    CheckSpec, Ctas, DEFAULT_AUTO_SCAN_LIMIT, DEFAULT_MAX_CTAS, DEFAULT_MAX_STEPS, Expect, F64,
    FormulaRef, KernelRef, Kernels, Launch, ParamBinding, RunLimits, ScalarValue, Status,
    TensorSpec, in_region, show_region,
};
pub use tensor_map::{OobFill, Swizzle, TensorMapSpec};
pub use validate::MAX_THREADS_PER_BLOCK;
pub use verdict::{CaseKind, Verdict};

impl CheckSpec {
    /// Parses and validates a spec; relative `ptx` paths are resolved
    /// against `base_dir` (the directory of the spec file).
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<CheckSpec, SpecError> {
        let raw: raw::RawSpec = toml::from_str(text).map_err(|e| {
            SpecError::new(SpecErrorKind::Syntax, e.message().trim_end()).at(e.span(), text)
        })?;
        let locations = locations::SpecLocations::of(&raw, text);
        let mut spec = validate::validate(raw, base_dir)
            .map_err(|e| SpecError::new(SpecErrorKind::Invalid, e.message).at(e.span, text))?;
        spec.locations = locations;
        Ok(spec)
    }

    /// Reads, parses and validates the spec file at `path`, and checks
    /// that every kernel's `ptx` file exists: a missing one is an error at
    /// the `ptx` key that names the path it resolved to (a relative path is
    /// relative to the spec's directory, not the working directory).
    pub fn load(path: &Path) -> Result<CheckSpec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SpecError::new(SpecErrorKind::Io, format!("cannot read the spec: {e}")).with_path(path)
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let mut spec = CheckSpec::from_toml_str(&text, base).map_err(|e| e.with_path(path))?;
        spec.locations = std::mem::take(&mut spec.locations).with_file(path);
        for (role, k) in spec.kernels.iter() {
            if !k.ptx.is_file() {
                let resolved = lexical(&std::path::absolute(&k.ptx).unwrap_or(k.ptx.clone()));
                let mut e = SpecError::new(
                    SpecErrorKind::Io,
                    format!(
                        "`{role}.ptx`: no such file: {} (a relative `ptx` is resolved against \
                         the spec's directory)",
                        resolved.display()
                    ),
                )
                .with_path(path);
                e.location = spec.locations.keys.get(&format!("{role}.ptx")).copied();
                return Err(e);
            }
        }
        Ok(spec)
    }
}

/// `path` with `.` and `dir/..` removed, without touching the file system
/// (a missing file has no canonical path): `/a/case/../common/k.ptx` is
/// `/a/common/k.ptx`.
fn lexical(path: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_launch;

#[cfg(test)]
mod tests_formula;
