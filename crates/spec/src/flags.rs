//! The CLI flag form of a spec (`ptxeq check REF.ptx CAND.ptx --block 128
//! --tensor x:f32[128]:in --scalar n=128`). Flags are turned into the same
//! raw structure as a TOML file and validated by the same code, so both
//! forms accept exactly the same specs.
//!
//! Every spec key has a flag (issue 14, item 12): `[launch]` keys are
//! `--block/--grid/--ctas/--dynamic-shared`, a kernel's own
//! `[reference.launch]` / `[candidate.launch]` keys are the same flags with
//! `--ref-` / `--cand-` in front ([`LaunchFlags`]), a tensor's `compare`
//! is `--compare NAME=LO:HI,...`, a symbolic scalar `--scalar alpha:f32`.
//! A new spec key gets its flag here, next to its TOML reading.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use toml::Spanned;

use crate::bindings::{
    RawField, RawGlobal, RawGlobalTable, RawParam, RawStruct, RawValues, RawValuesFile,
};
use crate::dtype::{DType, Role};
use crate::error::{SpecError, SpecErrorKind};
use crate::model::{CheckSpec, ScalarValue, TensorSpec};
use crate::raw::{RawCtas, RawDims, RawKernel, RawLaunch, RawScalar, RawSpec, RawTensor};
use crate::validate;

/// The spec-related CLI flags, as the strings the user typed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecFlags {
    /// One PTX file (a single-kernel check) or two (reference, candidate).
    pub ptx: Vec<PathBuf>,
    /// `--entry`: the entry of every kernel (needed when a file has several).
    pub entry: Option<String>,
    /// `--candidate-entry`: overrides `entry` for the candidate.
    pub candidate_entry: Option<String>,
    /// `--params x,y,n,_`: the binding of every kernel's params. Default:
    /// the `--tensor` names in flag order, then the `--scalar` names.
    pub params: Option<String>,
    /// `--candidate-params`: overrides `params` for the candidate.
    pub candidate_params: Option<String>,
    /// `--tensor name:dtype[d0,d1,...]:role`, role `in` | `out` | `inout`.
    pub tensors: Vec<String>,
    /// `--scalar name=value`.
    pub scalars: Vec<String>,
    /// `--block 128` | `128,1,1` | `16x16`.
    pub block: Option<String>,
    /// `--grid 4` | `4,2,1` | `4x2`.
    pub grid: Option<String>,
    /// `--ctas first` | `all` | `0,0,0;1,0,0`.
    pub ctas: Option<String>,
    /// `--dynamic-shared BYTES`.
    pub dynamic_shared: Option<u32>,
    /// `--cluster 2` | `2,1,1` | `2x2`: `[launch] cluster` (CTAs per
    /// thread-block cluster).
    pub cluster: Option<String>,
    /// `--auto-scan-limit N`: `[launch] auto_scan_limit`.
    pub auto_scan_limit: Option<u64>,
    /// `--ref-block`, `--ref-grid`, ...: the reference's `[reference.launch]`.
    pub ref_launch: LaunchFlags,
    /// `--cand-block`, `--cand-grid`, ...: the candidate's `[candidate.launch]`.
    pub cand_launch: LaunchFlags,
    /// `--compare NAME=LO:HI,LO:HI`: a tensor's `compare` region.
    pub compares: Vec<String>,
    /// `--values name=iota|zeros|v0,v1,…|@FILE`: concrete tensor contents.
    pub values: Vec<String>,
    /// `--function name=exp|…|uninterpreted`: `[functions]`.
    pub functions: Vec<String>,
    /// `--global NAME=VALUES[:DTYPE]` or `NAME=input[:DTYPE]`: `[globals]`.
    pub globals: Vec<String>,
    /// `--formula TEXT`: with one PTX file, the reference is this formula
    /// and the kernel is the candidate (`[reference] formula`).
    pub formula: Option<String>,
}

/// The launch keys of one kernel as flags (each `None` when not given).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchFlags {
    pub block: Option<String>,
    pub grid: Option<String>,
    pub ctas: Option<String>,
    pub dynamic_shared: Option<u32>,
}

impl LaunchFlags {
    /// Whether any key is given.
    pub fn is_empty(&self) -> bool {
        self.block.is_none()
            && self.grid.is_none()
            && self.ctas.is_none()
            && self.dynamic_shared.is_none()
    }

    /// The raw `[launch]`-shaped table; `prefix` names the flags in errors
    /// (`--`, `--ref-`, `--cand-`).
    fn raw(&self, prefix: &str) -> Result<RawLaunch, SpecError> {
        Ok(RawLaunch {
            block: self
                .block
                .as_deref()
                .map(|b| raw_dims(&format!("{prefix}block"), b).map(nowhere))
                .transpose()?,
            grid: self
                .grid
                .as_deref()
                .map(|g| raw_dims(&format!("{prefix}grid"), g).map(nowhere))
                .transpose()?,
            ctas: self
                .ctas
                .as_deref()
                .map(|c| raw_ctas(&format!("{prefix}ctas"), c))
                .transpose()?
                .map(nowhere),
            dynamic_shared: self.dynamic_shared.map(|d| nowhere(i64::from(d))),
            // `--cluster` is a shared flag (no per-kernel form): set by
            // `CheckSpec::from_flags` on the shared table.
            cluster: None,
            auto_scan_limit: None,
        })
    }
}

fn flag_error(message: String) -> SpecError {
    SpecError::new(SpecErrorKind::Flag, message)
}

/// A value built from a flag has no place in a file: an empty span.
fn nowhere<T>(v: T) -> Spanned<T> {
    Spanned::new(0..0, v)
}

fn raw_dims(flag: &str, s: &str) -> Result<RawDims, SpecError> {
    let parts: Vec<&str> = s.split([',', 'x']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(flag_error(format!(
            "{flag} `{s}`: give 1 to 3 dimensions, like 128, 128,1,1 or 16x16"
        )));
    }
    parts
        .iter()
        .map(|p| {
            p.parse::<i64>().map_err(|_| {
                flag_error(format!(
                    "{flag} `{s}`: `{p}` is not a number; give dimensions like 128,1,1 or 16x16"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(RawDims)
}

/// Parses a `--block` / `--grid` value (`128`, `128,1,1`, `16x16`) into a
/// triple; missing dimensions are 1 and every dimension must be ≥ 1.
pub fn parse_dims(flag: &str, s: &str) -> Result<[u32; 3], SpecError> {
    let RawDims(v) = raw_dims(flag, s)?;
    let mut out = [1u32; 3];
    for (o, d) in out.iter_mut().zip(&v) {
        *o = u32::try_from(*d)
            .ok()
            .filter(|&d| d >= 1)
            .ok_or_else(|| flag_error(format!("{flag} `{s}`: every dimension must be ≥ 1")))?;
    }
    Ok(out)
}

/// Parses a `--params` list: `x,y,n,_`; a struct param is one item in
/// braces, `{a@0,n:s32@8}` (see [`parse_struct_flag`]).
pub fn parse_param_list(s: &str) -> Result<Vec<String>, SpecError> {
    let names: Vec<String> = split_top(s, ',')
        .into_iter()
        .map(|p| p.trim().to_owned())
        .collect();
    if names.iter().any(String::is_empty) {
        return Err(flag_error(format!(
            "--params `{s}`: an empty name; give names separated by commas, `_` for unused params"
        )));
    }
    Ok(names)
}

/// Parses `--scalar name=value`, or `--scalar name:dtype` for a symbolic
/// float scalar (`alpha:f32`: no value, a free real symbol).
pub fn parse_scalar_flag(s: &str) -> Result<(String, ScalarValue), SpecError> {
    if !s.contains('=')
        && let Some((name, dtype)) = s.split_once(':')
    {
        let name = name.trim();
        check_flag_name("--scalar", s, name)?;
        let dtype = DType::from_str(dtype.trim())
            .map_err(|e| flag_error(format!("--scalar `{s}`: {e}")))?;
        return Ok((name.to_owned(), ScalarValue::Symbolic { dtype }));
    }
    let (name, value) = s.split_once('=').ok_or_else(|| {
        flag_error(format!(
            "--scalar `{s}`: expected name=value (n=128) or name:dtype for a symbolic float \
             (alpha:f32)"
        ))
    })?;
    let name = name.trim();
    check_flag_name("--scalar", s, name)?;
    let value = value
        .parse::<ScalarValue>()
        .map_err(|e| flag_error(format!("--scalar `{s}`: {}", e.message)))?;
    Ok((name.to_owned(), value))
}

fn check_flag_name(flag: &str, whole: &str, name: &str) -> Result<(), SpecError> {
    let ok = !name.is_empty()
        && name != "_"
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if ok {
        Ok(())
    } else {
        Err(flag_error(format!(
            "{flag} `{whole}`: the name `{name}` must be letters, digits, `_`, `.` or `-` \
             (and not `_` alone)"
        )))
    }
}

/// Parses `--compare NAME=LO:HI,LO:HI` (one half-open range per
/// dimension, like the TOML `compare = [[LO, HI], [LO, HI]]`).
pub fn parse_compare_flag(s: &str) -> Result<(String, Vec<[i64; 2]>), SpecError> {
    let usage = "expected NAME=LO:HI,LO:HI (one half-open range per dimension), like \
                 C=0:64,0:64";
    let (name, ranges) = s
        .split_once('=')
        .ok_or_else(|| flag_error(format!("--compare `{s}`: {usage}")))?;
    let name = name.trim();
    check_flag_name("--compare", s, name)?;
    let ranges = ranges
        .split(',')
        .map(|r| {
            let (lo, hi) = r.split_once(':')?;
            Some([
                lo.trim().parse::<i64>().ok()?,
                hi.trim().parse::<i64>().ok()?,
            ])
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| flag_error(format!("--compare `{s}`: {usage}")))?;
    Ok((name.to_owned(), ranges))
}

impl FromStr for ScalarValue {
    type Err = SpecError;

    /// An integer (`128`, `-1`, `0x7f`) or a float (`0.5`, `1e-3`, `inf`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if let Ok(i) = t.parse::<i64>() {
            return Ok(ScalarValue::Int(i));
        }
        let (neg, body) = match t.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, t),
        };
        if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            let v = i64::from_str_radix(hex, 16)
                .map_err(|_| flag_error(format!("`{t}` is not a 64-bit hex integer")))?;
            return Ok(ScalarValue::Int(if neg { -v } else { v }));
        }
        t.parse::<f64>().map(ScalarValue::float).map_err(|_| {
            flag_error(format!(
                "`{t}` is not an integer or a float (like 128, 0x7f, 0.5, 1e-3)"
            ))
        })
    }
}

impl TensorSpec {
    /// Parses `--tensor name:dtype[d0,d1,...]:role`, e.g. `x:f32[128,4]:in`.
    pub fn from_flag(s: &str) -> Result<(String, TensorSpec), SpecError> {
        let usage = "expected name:dtype[dims]:role, like x:f32[128,4]:in";
        let (name, rest) = s
            .split_once(':')
            .ok_or_else(|| flag_error(format!("--tensor `{s}`: {usage}")))?;
        let (ty, role) = rest
            .rsplit_once(':')
            .ok_or_else(|| flag_error(format!("--tensor `{s}`: no role; {usage}")))?;
        let name = name.trim();
        check_flag_name("--tensor", s, name)?;
        let role =
            Role::from_str(role.trim()).map_err(|e| flag_error(format!("--tensor `{s}`: {e}")))?;
        let (dtype, dims) = ty
            .trim()
            .split_once('[')
            .and_then(|(d, rest)| Some((d, rest.strip_suffix(']')?)))
            .ok_or_else(|| flag_error(format!("--tensor `{s}`: no shape in [...]; {usage}")))?;
        let dtype = DType::from_str(dtype.trim())
            .map_err(|e| flag_error(format!("--tensor `{s}`: {e}")))?;
        let shape = dims
            .split(',')
            .map(|d| d.trim().parse::<u64>().ok().filter(|&d| d > 0))
            .collect::<Option<Vec<u64>>>()
            .ok_or_else(|| {
                flag_error(format!(
                    "--tensor `{s}`: the shape must be extents ≥ 1 separated by commas"
                ))
            })?;
        Ok((
            name.to_owned(),
            TensorSpec {
                role,
                dtype,
                shape,
                compare: None,
                values: None,
            },
        ))
    }
}

/// Splits `s` at `sep` outside braces.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Parses a struct param of `--params`: `{a@0,n:s32@8}` — each field
/// `name@offset` (a tensor's address) or `name:dtype@offset` (a scalar).
fn parse_struct_flag(item: &str) -> Result<RawParam, SpecError> {
    let usage = "a struct param is {name@offset,name:dtype@offset,...}, like {a@0,n:s32@8}";
    let body = item
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| flag_error(format!("--params `{item}`: {usage}")))?;
    let mut fields = Vec::new();
    for f in body.split(',') {
        let (left, off) = f.trim().rsplit_once('@').ok_or_else(|| {
            flag_error(format!(
                "--params `{item}`: field `{f}` has no @offset; {usage}"
            ))
        })?;
        let offset = off.trim().parse::<i64>().map_err(|_| {
            flag_error(format!(
                "--params `{item}`: `{off}` is not a byte offset; {usage}"
            ))
        })?;
        let (bind, dtype) = match left.split_once(':') {
            Some((n, d)) => {
                let d = DType::from_str(d.trim())
                    .map_err(|e| flag_error(format!("--params `{item}`: {e}")))?;
                (n.trim(), Some(nowhere(d)))
            }
            None => (left.trim(), None),
        };
        fields.push(nowhere(RawField {
            offset: nowhere(offset),
            bind: nowhere(bind.to_owned()),
            dtype,
        }));
    }
    Ok(RawParam::Struct(RawStruct {
        fields: nowhere(fields),
    }))
}

fn raw_kernel(
    ptx: &Path,
    entry: Option<&String>,
    params: &[String],
    launch: Option<RawLaunch>,
) -> Result<Spanned<RawKernel>, SpecError> {
    let params = params
        .iter()
        .map(|p| {
            if p.starts_with('{') {
                parse_struct_flag(p).map(nowhere)
            } else {
                Ok(nowhere(RawParam::Name(p.clone())))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(nowhere(RawKernel {
        ptx: Some(nowhere(ptx.to_string_lossy().into_owned())),
        entry: entry.map(|e| nowhere(e.clone())),
        params: Some(nowhere(params)),
        launch: launch.map(nowhere),
        formula: None,
        formula_file: None,
    }))
}

/// The value part of `--values` / `--global`: `iota`, `zeros`, `@FILE`
/// or numbers separated by commas.
fn raw_values(flag: &str, whole: &str, v: &str) -> Result<RawValues, SpecError> {
    let v = v.trim();
    if v == "iota" || v == "zeros" {
        return Ok(RawValues::Word(v.to_owned()));
    }
    if let Some(file) = v.strip_prefix('@') {
        return Ok(RawValues::File(RawValuesFile {
            file: nowhere(file.to_owned()),
        }));
    }
    v.split(',')
        .map(|x| {
            x.parse::<ScalarValue>()
                .map(|s| match s {
                    ScalarValue::Int(i) => RawScalar::Int(i),
                    ScalarValue::Float(f) => RawScalar::Float(f.get()),
                    ScalarValue::Symbolic { dtype } => RawScalar::Symbolic(dtype),
                })
                .map_err(|e| flag_error(format!("{flag} `{whole}`: {}", e.message)))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(RawValues::List)
}

/// `--global NAME=input[:DTYPE]` or `NAME=VALUES[:DTYPE]`.
fn raw_global(s: &str) -> Result<(String, RawGlobal), SpecError> {
    let usage =
        "expected NAME=VALUES[:DTYPE] or NAME=input[:DTYPE], like MAX_KEY=32 or w=input:f32";
    let (name, rest) = s
        .split_once('=')
        .ok_or_else(|| flag_error(format!("--global `{s}`: {usage}")))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(flag_error(format!("--global `{s}`: no name; {usage}")));
    }
    let (value, dtype) = match rest.rsplit_once(':') {
        Some((v, d)) => {
            let d = DType::from_str(d.trim())
                .map_err(|e| flag_error(format!("--global `{s}`: {e}")))?;
            (v, Some(nowhere(d)))
        }
        None => (rest, None),
    };
    let table = if value.trim() == "input" {
        RawGlobalTable {
            role: Some(nowhere("input".to_owned())),
            dtype,
            values: None,
        }
    } else {
        RawGlobalTable {
            role: None,
            dtype,
            values: Some(nowhere(raw_values("--global", s, value)?)),
        }
    };
    Ok((name.to_owned(), RawGlobal::Table(table)))
}

fn raw_ctas(flag: &str, s: &str) -> Result<RawCtas, SpecError> {
    match s.trim() {
        w @ ("first" | "all" | "auto") => Ok(RawCtas::Word(w.to_owned())),
        list => list
            .split(';')
            .map(|id| raw_dims(flag, id).map(nowhere))
            .collect::<Result<Vec<_>, _>>()
            .map(RawCtas::List),
    }
}

impl CheckSpec {
    /// Builds a spec from CLI flags; paths are taken as given (relative to
    /// the working directory). Validation errors name the equivalent TOML
    /// key (`launch.block`, `reference.params[2]`, …).
    pub fn from_flags(flags: &SpecFlags) -> Result<CheckSpec, SpecError> {
        let mut tensor_names = Vec::new();
        let mut tensors = BTreeMap::new();
        for t in &flags.tensors {
            let (name, spec) = TensorSpec::from_flag(t)?;
            let raw = RawTensor {
                role: nowhere(spec.role),
                dtype: nowhere(spec.dtype),
                shape: nowhere(
                    spec.shape
                        .iter()
                        .map(|&d| nowhere(i64::try_from(d).unwrap_or(i64::MAX)))
                        .collect(),
                ),
                compare: None,
                values: None,
            };
            if tensors
                .insert(nowhere(name.clone()), nowhere(raw))
                .is_some()
            {
                return Err(flag_error(format!("--tensor `{name}` is given twice")));
            }
            tensor_names.push(name);
        }
        for c in &flags.compares {
            let (name, ranges) = parse_compare_flag(c)?;
            let Some(t) = tensors.iter_mut().find(|(n, _)| n.get_ref() == &name) else {
                return Err(flag_error(format!(
                    "--compare `{c}`: no --tensor `{name}` (declared: {})",
                    if tensor_names.is_empty() {
                        "none".to_owned()
                    } else {
                        tensor_names.join(", ")
                    }
                )));
            };
            let t = t.1.get_mut();
            if t.compare.is_some() {
                return Err(flag_error(format!("--compare `{name}` is given twice")));
            }
            t.compare = Some(nowhere(
                ranges.iter().map(|r| nowhere(r.to_vec())).collect(),
            ));
        }
        for v in &flags.values {
            let usage = "expected name=iota|zeros|v0,v1,...|@FILE, like idx=3,1,2,0";
            let (name, value) = v
                .split_once('=')
                .ok_or_else(|| flag_error(format!("--values `{v}`: {usage}")))?;
            let values = raw_values("--values", v, value)?;
            match tensors.get_mut(&nowhere(name.trim().to_owned())) {
                Some(t) => {
                    let t: &mut RawTensor = t.get_mut();
                    if t.values.is_some() {
                        return Err(flag_error(format!("--values `{name}` is given twice")));
                    }
                    t.values = Some(nowhere(values));
                }
                None => {
                    return Err(flag_error(format!(
                        "--values `{v}`: no --tensor `{}`",
                        name.trim()
                    )));
                }
            }
        }
        let mut functions = BTreeMap::new();
        for f in &flags.functions {
            let (name, word) = f.split_once('=').ok_or_else(|| {
                flag_error(format!(
                    "--function `{f}`: expected name=binding, like my_exp=exp or g=uninterpreted"
                ))
            })?;
            if functions
                .insert(
                    nowhere(name.trim().to_owned()),
                    nowhere(word.trim().to_owned()),
                )
                .is_some()
            {
                return Err(flag_error(format!(
                    "--function `{}` is given twice",
                    name.trim()
                )));
            }
        }
        let mut globals = BTreeMap::new();
        for g in &flags.globals {
            let (name, raw) = raw_global(g)?;
            if globals
                .insert(nowhere(name.clone()), nowhere(raw))
                .is_some()
            {
                return Err(flag_error(format!("--global `{name}` is given twice")));
            }
        }
        let mut scalar_names = Vec::new();
        let mut scalars = BTreeMap::new();
        for s in &flags.scalars {
            let (name, value) = parse_scalar_flag(s)?;
            let raw = match value {
                ScalarValue::Int(i) => RawScalar::Int(i),
                ScalarValue::Float(f) => RawScalar::Float(f.get()),
                ScalarValue::Symbolic { dtype } => RawScalar::Symbolic(dtype),
            };
            if scalars
                .insert(nowhere(name.clone()), nowhere(raw))
                .is_some()
            {
                return Err(flag_error(format!("--scalar `{name}` is given twice")));
            }
            scalar_names.push(name);
        }

        let params = match &flags.params {
            Some(p) => parse_param_list(p)?,
            None => tensor_names.into_iter().chain(scalar_names).collect(),
        };
        let own = |l: &LaunchFlags, prefix: &str| -> Result<Option<RawLaunch>, SpecError> {
            if l.is_empty() {
                Ok(None)
            } else {
                l.raw(prefix).map(Some)
            }
        };
        let (reference, candidate, kernel) = match flags.ptx.as_slice() {
            [_, _] if flags.formula.is_some() => {
                return Err(flag_error(
                    "--formula is the reference: give it with one PTX file (the candidate)"
                        .to_owned(),
                ));
            }
            [single] if flags.formula.is_some() => {
                if flags.candidate_params.is_some() || flags.candidate_entry.is_some() {
                    return Err(flag_error(
                        "--candidate-params / --candidate-entry need two PTX files; with \
                         --formula the one kernel is the candidate (--params, --entry)"
                            .to_owned(),
                    ));
                }
                if !flags.ref_launch.is_empty() || !flags.cand_launch.is_empty() {
                    return Err(flag_error(
                        "--ref-* / --cand-* launch flags need two PTX files; with --formula \
                         the one kernel takes --block, --grid, --ctas, --dynamic-shared"
                            .to_owned(),
                    ));
                }
                let formula = RawKernel {
                    ptx: None,
                    entry: None,
                    params: None,
                    launch: None,
                    formula: flags.formula.clone().map(nowhere),
                    formula_file: None,
                };
                (
                    Some(nowhere(formula)),
                    Some(raw_kernel(single, flags.entry.as_ref(), &params, None)?),
                    None,
                )
            }
            [single] => {
                if flags.candidate_params.is_some() || flags.candidate_entry.is_some() {
                    return Err(flag_error(
                        "--candidate-params / --candidate-entry need two PTX files".to_owned(),
                    ));
                }
                if !flags.ref_launch.is_empty() || !flags.cand_launch.is_empty() {
                    return Err(flag_error(
                        "--ref-* / --cand-* launch flags need two PTX files (reference, \
                         candidate); one kernel takes --block, --grid, --ctas, --dynamic-shared"
                            .to_owned(),
                    ));
                }
                (
                    None,
                    None,
                    Some(raw_kernel(single, flags.entry.as_ref(), &params, None)?),
                )
            }
            [r, c] => {
                let cparams = match &flags.candidate_params {
                    Some(p) => parse_param_list(p)?,
                    None => params.clone(),
                };
                let centry = flags.candidate_entry.as_ref().or(flags.entry.as_ref());
                (
                    Some(raw_kernel(
                        r,
                        flags.entry.as_ref(),
                        &params,
                        own(&flags.ref_launch, "--ref-")?,
                    )?),
                    Some(raw_kernel(
                        c,
                        centry,
                        &cparams,
                        own(&flags.cand_launch, "--cand-")?,
                    )?),
                    None,
                )
            }
            other => {
                return Err(flag_error(format!(
                    "{} PTX files given; give one (a single-kernel check) or two \
                     (reference, candidate)",
                    other.len()
                )));
            }
        };

        let launch = LaunchFlags {
            block: flags.block.clone(),
            grid: flags.grid.clone(),
            ctas: flags.ctas.clone(),
            dynamic_shared: flags.dynamic_shared,
        }
        .raw("--")?;
        let launch = RawLaunch {
            cluster: flags
                .cluster
                .as_deref()
                .map(|c| raw_dims("--cluster", c).map(nowhere))
                .transpose()?,
            auto_scan_limit: flags
                .auto_scan_limit
                .map(|n| nowhere(i64::try_from(n).unwrap_or(i64::MAX))),
            ..launch
        };
        let raw = RawSpec {
            note: None,
            launch: Some(nowhere(launch)),
            reference,
            candidate,
            kernel,
            tensors,
            scalars,
            expect: None,
            limits: None,
            functions,
            globals,
            tensor_maps: Default::default(),
        };
        validate::validate(raw, Path::new(""))
            .map_err(|e| SpecError::new(SpecErrorKind::Invalid, e.message))
    }
}
