//! The binding keys of a spec: concrete tensor `values`, by-value struct
//! params, `[functions]` (a `.func` bound to a known real function or to
//! an uninterpreted function symbol) and `[globals]` (module-scope
//! `.global`/`.const` variables given values or declared inputs).
//!
//! Each key has its raw form as written (spans kept for messages), its
//! validated model and its validation here, apart from the launch and
//! tensor core in `validate.rs`, which only calls in. What the bindings
//! *mean* for a run (memory contents, calls, symbols) is `ptxeq-exec`'s
//! business (`input.rs`) and is documented in `docs/semantics.md`.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::dtype::DType;
use crate::model::ScalarValue;
use crate::raw::RawScalar;
use crate::validate::{R, fail};

// ───────────────────────────── model ─────────────────────────────

/// Concrete contents of a tensor (`values = …`) or of a module variable
/// (`[globals]`): the elements hold these values at launch, in every
/// input the verdict covers ("for these values").
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Values {
    /// Element `i` holds `i` (flat, row-major).
    Iota,
    /// Every element holds 0.
    Zeros,
    /// Element `i` holds the `i`-th value.
    List(Vec<ScalarValue>),
}

impl Values {
    /// The value of flat element `i` (`None` past the end of a list).
    pub fn get(&self, i: u64) -> Option<ScalarValue> {
        match self {
            Values::Iota => Some(ScalarValue::Int(i64::try_from(i).ok()?)),
            Values::Zeros => Some(ScalarValue::Int(0)),
            Values::List(v) => usize::try_from(i).ok().and_then(|i| v.get(i)).copied(),
        }
    }

    /// Number of values of a list (`None`: as many as the elements).
    pub fn len(&self) -> Option<u64> {
        match self {
            Values::List(v) => Some(v.len() as u64),
            _ => None,
        }
    }

    /// Whether this is an empty list.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

/// Values shown in a report before eliding.
const SHOWN_VALUES: usize = 8;

impl fmt::Display for Values {
    /// `iota`, `zeros` or `[3, 1, 2, … (100 values)]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Values::Iota => f.write_str("iota"),
            Values::Zeros => f.write_str("zeros"),
            Values::List(v) => {
                let shown: Vec<String> =
                    v.iter().take(SHOWN_VALUES).map(|x| x.to_string()).collect();
                if v.len() > SHOWN_VALUES {
                    write!(f, "[{}, … ({} values)]", shown.join(", "), v.len())
                } else {
                    write!(f, "[{}]", shown.join(", "))
                }
            }
        }
    }
}

/// One field of a by-value struct param (`.param .align A .b8 s[N]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StructField {
    /// Byte offset of the field in the aggregate.
    pub offset: u64,
    pub bind: FieldBinding,
}

/// What a struct field receives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldBinding {
    /// The base address of this tensor (8 bytes).
    Tensor(String),
    /// The value of this scalar, stored as `dtype` (the aggregate has no
    /// field types, so the spec gives it).
    Scalar { name: String, dtype: DType },
}

impl FieldBinding {
    /// The tensor or scalar name.
    pub fn name(&self) -> &str {
        match self {
            FieldBinding::Tensor(n) | FieldBinding::Scalar { name: n, .. } => n,
        }
    }

    /// Bytes the field occupies.
    pub fn size(&self) -> u64 {
        match self {
            FieldBinding::Tensor(_) => 8,
            FieldBinding::Scalar { dtype, .. } => dtype.size_bytes(),
        }
    }
}

/// A known real function a `.func` may be bound to. The words are the C
/// names without the `f` suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KnownFn {
    Exp,
    Exp2,
    Exp10,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sqrt,
    Rsqrt,
    Recip,
    Tanh,
    Sinh,
    Cosh,
    Sin,
    Cos,
    Erf,
    Abs,
    Pow,
    Min,
    Max,
}

impl KnownFn {
    pub const ALL: [KnownFn; 21] = [
        KnownFn::Exp,
        KnownFn::Exp2,
        KnownFn::Exp10,
        KnownFn::Expm1,
        KnownFn::Log,
        KnownFn::Log2,
        KnownFn::Log10,
        KnownFn::Log1p,
        KnownFn::Sqrt,
        KnownFn::Rsqrt,
        KnownFn::Recip,
        KnownFn::Tanh,
        KnownFn::Sinh,
        KnownFn::Cosh,
        KnownFn::Sin,
        KnownFn::Cos,
        KnownFn::Erf,
        KnownFn::Abs,
        KnownFn::Pow,
        KnownFn::Min,
        KnownFn::Max,
    ];

    /// The spec word.
    pub fn word(self) -> &'static str {
        match self {
            KnownFn::Exp => "exp",
            KnownFn::Exp2 => "exp2",
            KnownFn::Exp10 => "exp10",
            KnownFn::Expm1 => "expm1",
            KnownFn::Log => "log",
            KnownFn::Log2 => "log2",
            KnownFn::Log10 => "log10",
            KnownFn::Log1p => "log1p",
            KnownFn::Sqrt => "sqrt",
            KnownFn::Rsqrt => "rsqrt",
            KnownFn::Recip => "recip",
            KnownFn::Tanh => "tanh",
            KnownFn::Sinh => "sinh",
            KnownFn::Cosh => "cosh",
            KnownFn::Sin => "sin",
            KnownFn::Cos => "cos",
            KnownFn::Erf => "erf",
            KnownFn::Abs => "abs",
            KnownFn::Pow => "pow",
            KnownFn::Min => "min",
            KnownFn::Max => "max",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            KnownFn::Pow | KnownFn::Min | KnownFn::Max => 2,
            _ => 1,
        }
    }
}

/// What a `[functions]` entry binds a `.func` to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionBinding {
    /// The exact real function.
    Known(KnownFn),
    /// A function symbol of the `.func`'s arity about which nothing is
    /// known: an equivalence holds for every interpretation.
    Uninterpreted,
}

impl FunctionBinding {
    /// The spec word.
    pub fn word(self) -> &'static str {
        match self {
            FunctionBinding::Known(k) => k.word(),
            FunctionBinding::Uninterpreted => "uninterpreted",
        }
    }

    /// Every word a binding can be, for messages.
    pub fn words() -> Vec<&'static str> {
        let mut w: Vec<&str> = KnownFn::ALL.iter().map(|k| k.word()).collect();
        w.push("uninterpreted");
        w
    }
}

impl FromStr for FunctionBinding {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uninterpreted" {
            return Ok(FunctionBinding::Uninterpreted);
        }
        KnownFn::ALL
            .into_iter()
            .find(|k| k.word() == s)
            .map(FunctionBinding::Known)
            .ok_or_else(|| {
                format!(
                    "unknown function `{s}`; expected one of {}",
                    FunctionBinding::words().join(", ")
                )
            })
    }
}

/// What a `[globals]` entry says about a module-scope variable.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GlobalBinding {
    /// The element type; `None`: the variable's declared type (which must
    /// then be a typed, not a `.bN`, type).
    pub dtype: Option<DType>,
    /// Concrete contents; `None`: the contents are symbolic inputs, like
    /// an input tensor's (`role = "input"`).
    pub values: Option<Values>,
}

impl crate::model::CheckSpec {
    /// The names of the input symbols' tensor numbers: the tensors in name
    /// order, then the `[globals]` declared inputs (no `values`) in name
    /// order — the numbering `ptxeq-exec` gives them.
    pub fn input_names(&self) -> Vec<&str> {
        self.tensors
            .keys()
            .map(String::as_str)
            .chain(
                self.globals
                    .iter()
                    .filter(|(_, g)| g.values.is_none())
                    .map(|(n, _)| n.as_str()),
            )
            .collect()
    }
}

// ───────────────────────────── raw ─────────────────────────────

/// `values` as written: a word, a list, or `{ file = "…" }`.
#[derive(Debug)]
pub(crate) enum RawValues {
    Word(String),
    List(Vec<RawScalar>),
    File(RawValuesFile),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawValuesFile {
    pub file: Spanned<String>,
}

impl<'de> Deserialize<'de> for RawValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawValues;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#""iota", "zeros", a list of numbers, or { file = "values.txt" }"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawValues, E> {
                Ok(RawValues::Word(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValues, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<RawScalar>()? {
                    list.push(v);
                }
                Ok(RawValues::List(list))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawValues, A::Error> {
                RawValuesFile::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawValues::File)
            }
        }
        d.deserialize_any(V)
    }
}

/// One entry of a kernel's `params`: a name, or a struct param.
#[derive(Debug)]
pub(crate) enum RawParam {
    Name(String),
    Struct(RawStruct),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawStruct {
    #[serde(rename = "struct")]
    pub fields: Spanned<Vec<Spanned<RawField>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawField {
    pub offset: Spanned<i64>,
    pub bind: Spanned<String>,
    pub dtype: Option<Spanned<DType>>,
}

impl<'de> Deserialize<'de> for RawParam {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawParam;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    r#"a tensor/scalar name, "_", or a struct param like { struct = [{ offset = 0, bind = "x" }] }"#,
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawParam, E> {
                Ok(RawParam::Name(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawParam, A::Error> {
                RawStruct::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawParam::Struct)
            }
        }
        d.deserialize_any(V)
    }
}

/// A `[globals]` entry as written: a number, a list, or a table.
#[derive(Debug)]
pub(crate) enum RawGlobal {
    Scalar(RawScalar),
    List(Vec<RawScalar>),
    Table(RawGlobalTable),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGlobalTable {
    pub role: Option<Spanned<String>>,
    pub dtype: Option<Spanned<DType>>,
    pub values: Option<Spanned<RawValues>>,
}

impl<'de> Deserialize<'de> for RawGlobal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawGlobal;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    r#"a number, a list of numbers, or a table like { role = "input" } or { values = [...], dtype = "f32" }"#,
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawGlobal, E> {
                Ok(RawGlobal::Scalar(RawScalar::Int(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawGlobal, E> {
                i64::try_from(v)
                    .map(|v| RawGlobal::Scalar(RawScalar::Int(v)))
                    .map_err(|_| E::custom(format!("integer {v} does not fit in 64 bits")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawGlobal, E> {
                Ok(RawGlobal::Scalar(RawScalar::Float(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawGlobal, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<RawScalar>()? {
                    list.push(v);
                }
                Ok(RawGlobal::List(list))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawGlobal, A::Error> {
                RawGlobalTable::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawGlobal::Table)
            }
        }
        d.deserialize_any(V)
    }
}

// ─────────────────────────── validation ───────────────────────────

fn scalar_of(r: RawScalar) -> ScalarValue {
    match r {
        RawScalar::Int(i) => ScalarValue::Int(i),
        RawScalar::Float(f) => ScalarValue::float(f),
    }
}

/// Whether `v` is a value an element of `dtype` can hold (integers in
/// range, 0/1 for `pred`; floats are rounded to the format when bound).
pub(crate) fn fits(v: ScalarValue, dtype: DType) -> Result<(), String> {
    match (v, dtype) {
        (_, d) if d.is_float() => Ok(()),
        (ScalarValue::Float(f), d) => Err(format!(
            "{} is not an integer, but the dtype is {d}",
            f.get()
        )),
        (ScalarValue::Int(i), DType::Pred) if i == 0 || i == 1 => Ok(()),
        (ScalarValue::Int(i), DType::Pred) => Err(format!("{i} is not 0 or 1 (dtype pred)")),
        (ScalarValue::Int(i), d) => {
            let w = d.size_bytes() * 8;
            let lo = -(1i128 << (w - 1));
            let hi = (1i128 << w) - 1;
            let i = i128::from(i);
            if i < lo || i > hi {
                Err(format!("{i} does not fit {d}"))
            } else {
                Ok(())
            }
        }
    }
}

/// Reads a values file: numbers separated by whitespace or commas, `#`
/// starts a comment.
fn read_values_file(path: &Path) -> Result<Vec<ScalarValue>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the values file {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for word in line.split(|c: char| c.is_whitespace() || c == ',') {
            if word.is_empty() {
                continue;
            }
            let v = word
                .parse::<ScalarValue>()
                .map_err(|_| format!("{}:{}: `{word}` is not a number", path.display(), ln + 1))?;
            out.push(v);
        }
    }
    Ok(out)
}

/// Validates `values` for something of `dtype` with `elements` elements
/// (`None`: not known yet, e.g. a module variable's size comes from the
/// PTX). `what` names the key for messages (`tensor `idx``).
pub(crate) fn values(
    what: &str,
    dtype: Option<DType>,
    elements: Option<u64>,
    raw: &Spanned<RawValues>,
    base_dir: &Path,
) -> R<Values> {
    let list = match raw.get_ref() {
        RawValues::Word(w) if w == "iota" => {
            if let (Some(d), Some(n)) = (dtype, elements)
                && n > 0
            {
                fits(
                    ScalarValue::Int(i64::try_from(n - 1).unwrap_or(i64::MAX)),
                    d,
                )
                .or_else(|m| fail(raw, format!("{what}: `values = \"iota\"`: {m}")))?;
            }
            return Ok(Values::Iota);
        }
        RawValues::Word(w) if w == "zeros" => return Ok(Values::Zeros),
        RawValues::Word(w) => {
            return fail(
                raw,
                format!(
                    "{what}: `values = \"{w}\"`; expected \"iota\", \"zeros\", a list of \
                     numbers or {{ file = \"values.txt\" }}"
                ),
            );
        }
        RawValues::List(l) => l.iter().map(|&r| scalar_of(r)).collect::<Vec<_>>(),
        RawValues::File(f) => read_values_file(&base_dir.join(f.file.get_ref()))
            .or_else(|m| fail(&f.file, format!("{what}: {m}")))?,
    };
    if let Some(n) = elements
        && list.len() as u64 != n
    {
        return fail(
            raw,
            format!(
                "{what}: `values` has {} value(s) but there are {n} elements (give one per element, \
                 or \"iota\" / \"zeros\")",
                list.len()
            ),
        );
    }
    if let Some(d) = dtype {
        for (i, v) in list.iter().enumerate() {
            fits(*v, d).or_else(|m| fail(raw, format!("{what}: values[{i}]: {m}")))?;
        }
    }
    Ok(Values::List(list))
}

/// Validates the fields of a struct param (`table.params[i]`): offsets,
/// overlaps, names, dtypes. `kind_of(name)` says whether a name is a
/// tensor (`Some(true)`), a scalar (`Some(false)`) or undeclared.
pub(crate) fn struct_fields(
    at: &str,
    raw: &Spanned<Vec<Spanned<RawField>>>,
    kind_of: &dyn Fn(&str) -> Option<bool>,
) -> R<Vec<StructField>> {
    if raw.get_ref().is_empty() {
        return fail(
            raw,
            format!("`{at}`: a struct param needs at least one field"),
        );
    }
    let mut out: Vec<(StructField, &Spanned<RawField>)> = Vec::new();
    for (j, f) in raw.get_ref().iter().enumerate() {
        let r = f.get_ref();
        let key = format!("{at}.struct[{j}]");
        let offset = u64::try_from(*r.offset.get_ref())
            .or_else(|_| fail(&r.offset, format!("`{key}.offset` must be ≥ 0")))?;
        let name = r.bind.get_ref();
        let bind = match kind_of(name) {
            Some(true) => {
                if let Some(d) = &r.dtype {
                    return fail(
                        d,
                        format!(
                            "`{key}`: `{name}` is a tensor, bound as its 64-bit address; \
                             `dtype` goes with scalar fields only"
                        ),
                    );
                }
                FieldBinding::Tensor(name.clone())
            }
            Some(false) => match &r.dtype {
                Some(d) => FieldBinding::Scalar {
                    name: name.clone(),
                    dtype: *d.get_ref(),
                },
                None => {
                    return fail(
                        f,
                        format!(
                            "`{key}`: scalar `{name}` needs a `dtype` (the struct's bytes have \
                             no types), e.g. dtype = \"s32\""
                        ),
                    );
                }
            },
            None => {
                return fail(
                    &r.bind,
                    format!("`{key}.bind` is `{name}`, which is not a declared tensor or scalar"),
                );
            }
        };
        let size = bind.size();
        if offset % size != 0 {
            return fail(
                &r.offset,
                format!(
                    "`{key}.offset` {offset} is not a multiple of the field's size {size} \
                     (fields are naturally aligned)"
                ),
            );
        }
        out.push((StructField { offset, bind }, f));
    }
    out.sort_by_key(|(f, _)| f.offset);
    for w in out.windows(2) {
        let (a, b) = (&w[0].0, &w[1].0);
        if a.offset + a.bind.size() > b.offset {
            return fail(
                w[1].1,
                format!(
                    "`{at}`: fields `{}` (offset {}) and `{}` (offset {}) overlap",
                    a.bind.name(),
                    a.offset,
                    b.bind.name(),
                    b.offset
                ),
            );
        }
    }
    Ok(out.into_iter().map(|(f, _)| f).collect())
}

/// Validates `[functions]`.
pub(crate) fn functions(
    raw: &std::collections::BTreeMap<Spanned<String>, Spanned<String>>,
) -> R<std::collections::BTreeMap<String, FunctionBinding>> {
    let mut out = std::collections::BTreeMap::new();
    for (name, b) in raw {
        if name.get_ref().trim().is_empty() {
            return fail(name, "[functions]: an empty function name");
        }
        let binding = b
            .get_ref()
            .parse::<FunctionBinding>()
            .or_else(|m| fail(b, format!("[functions] `{name}`: {m}")))?;
        out.insert(name.get_ref().clone(), binding);
    }
    Ok(out)
}

/// Validates `[globals]`.
pub(crate) fn globals(
    raw: &std::collections::BTreeMap<Spanned<String>, Spanned<RawGlobal>>,
    base_dir: &Path,
) -> R<std::collections::BTreeMap<String, GlobalBinding>> {
    let mut out = std::collections::BTreeMap::new();
    for (name, g) in raw {
        if name.get_ref().trim().is_empty() {
            return fail(name, "[globals]: an empty variable name");
        }
        let what = format!("[globals] `{name}`");
        let binding = match g.get_ref() {
            RawGlobal::Scalar(s) => GlobalBinding {
                dtype: None,
                values: Some(Values::List(vec![scalar_of(*s)])),
            },
            RawGlobal::List(l) => GlobalBinding {
                dtype: None,
                values: Some(Values::List(l.iter().map(|&r| scalar_of(r)).collect())),
            },
            RawGlobal::Table(t) => {
                let dtype = t.dtype.as_ref().map(|d| *d.get_ref());
                if let Some(r) = &t.role
                    && r.get_ref() != "input"
                {
                    return fail(
                        r,
                        format!(
                            "{what}: `role = \"{}\"`; a module variable can only be declared \
                             role = \"input\" (or given `values`)",
                            r.get_ref()
                        ),
                    );
                }
                let values = match &t.values {
                    Some(v) => Some(values(&what, dtype, None, v, base_dir)?),
                    None if t.role.is_some() => None,
                    None => {
                        return fail(
                            g,
                            format!(
                                "{what}: give `values` or role = \"input\" (symbolic contents)"
                            ),
                        );
                    }
                };
                GlobalBinding { dtype, values }
            }
        };
        if let (Some(d), Some(v)) = (binding.dtype, &binding.values)
            && let Values::List(l) = v
        {
            for (i, x) in l.iter().enumerate() {
                fits(*x, d).or_else(|m| fail(g, format!("{what}: values[{i}]: {m}")))?;
            }
        }
        out.insert(name.get_ref().clone(), binding);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "bindings_tests.rs"]
mod tests;
