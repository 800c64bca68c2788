//! The spec as written in TOML, before validation. Every struct denies
//! unknown fields so a typo'd key is an error rather than a silently
//! ignored setting, and values keep their spans so semantic errors can
//! point into the file.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use toml::Spanned;

use crate::bindings::{RawGlobal, RawParam, RawValues};
use crate::dtype::{DType, Role};
use crate::model::Status;
use crate::verdict::Verdict;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSpec {
    pub note: Option<Spanned<String>>,
    pub launch: Option<Spanned<RawLaunch>>,
    pub reference: Option<Spanned<RawKernel>>,
    pub candidate: Option<Spanned<RawKernel>>,
    pub kernel: Option<Spanned<RawKernel>>,
    #[serde(default)]
    pub tensors: BTreeMap<Spanned<String>, Spanned<RawTensor>>,
    #[serde(default)]
    pub scalars: BTreeMap<Spanned<String>, Spanned<RawScalar>>,
    pub expect: Option<Spanned<RawExpect>>,
    /// `[functions]`: `.func` name → binding word (see `bindings.rs`).
    #[serde(default)]
    pub functions: BTreeMap<Spanned<String>, Spanned<String>>,
    /// `[globals]`: module variable name → value or table.
    #[serde(default)]
    pub globals: BTreeMap<Spanned<String>, Spanned<RawGlobal>>,
    pub limits: Option<Spanned<RawLimits>>,
    /// `[tensor_maps]`: TMA tensor maps (`tensor_map.rs`).
    #[serde(default)]
    pub tensor_maps: BTreeMap<Spanned<String>, Spanned<crate::tensor_map::RawTensorMap>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimits {
    pub max_steps: Option<Spanned<i64>>,
    pub max_ctas: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLaunch {
    pub block: Option<Spanned<RawDims>>,
    pub grid: Option<Spanned<RawDims>>,
    pub ctas: Option<Spanned<RawCtas>>,
    pub dynamic_shared: Option<Spanned<i64>>,
    pub cluster: Option<Spanned<RawDims>>,
    pub auto_scan_limit: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawKernel {
    /// Required for a kernel; absent for a formula reference.
    pub ptx: Option<Spanned<String>>,
    pub entry: Option<Spanned<String>>,
    /// Required for a kernel; absent for a formula reference.
    pub params: Option<Spanned<Vec<Spanned<RawParam>>>>,
    /// `[reference.launch]` / `[candidate.launch]`: keys that override the
    /// shared `[launch]` for this kernel.
    pub launch: Option<Spanned<RawLaunch>>,
    /// `[reference] formula = "…"`: the reference is a formula (issue 16),
    /// not a kernel.
    pub formula: Option<Spanned<String>>,
    /// `[reference] formula_file = "…"`: the formula, read from a file
    /// (relative to the spec's directory).
    pub formula_file: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTensor {
    pub role: Spanned<Role>,
    pub dtype: Spanned<DType>,
    pub shape: Spanned<Vec<Spanned<i64>>>,
    /// `compare = [[lo, hi], ...]`, one half-open range per dimension.
    pub compare: Option<Spanned<Vec<Spanned<Vec<i64>>>>>,
    /// Concrete contents (`bindings.rs`).
    pub values: Option<Spanned<RawValues>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawExpect {
    pub verdict: Spanned<Verdict>,
    pub reason: Option<Spanned<String>>,
    pub status: Option<Spanned<Status>>,
    pub pending: Option<Spanned<String>>,
    pub heavy: Option<Spanned<bool>>,
}

/// A dimension triple as written: `128` or `[128]` … `[128, 1, 1]`.
/// Range checks happen in validation, where the span is at hand.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawDims(pub Vec<i64>);

impl<'de> Deserialize<'de> for RawDims {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawDims;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or an array of 1 to 3 integers, e.g. [128, 1, 1]")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDims, E> {
                Ok(RawDims(vec![v]))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDims, E> {
                Ok(RawDims(vec![i64::try_from(v).unwrap_or(i64::MAX)]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawDims, A::Error> {
                let mut dims = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    dims.push(v);
                }
                Ok(RawDims(dims))
            }
        }
        d.deserialize_any(V)
    }
}

/// `ctas` as written: a word or a list of CTA ids.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawCtas {
    Word(String),
    List(Vec<Spanned<RawDims>>),
}

impl<'de> Deserialize<'de> for RawCtas {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCtas;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#""first", "all" or a list of CTA ids like [[0, 0, 0], [1, 0, 0]]"#)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawCtas, E> {
                Ok(RawCtas::Word(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawCtas, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<Spanned<RawDims>>()? {
                    list.push(v);
                }
                Ok(RawCtas::List(list))
            }
        }
        d.deserialize_any(V)
    }
}

/// A scalar value as written: a TOML integer or float, or a table
/// `{ dtype = "f32" }` (no value: a symbolic scalar).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RawScalar {
    Int(i64),
    Float(f64),
    Symbolic(DType),
}

impl<'de> Deserialize<'de> for RawScalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawScalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    r#"an integer or a float, or { dtype = "f32" } for a symbolic float scalar"#,
                )
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawScalar, E> {
                Ok(RawScalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawScalar, E> {
                i64::try_from(v)
                    .map(RawScalar::Int)
                    .map_err(|_| E::custom(format!("integer {v} does not fit in 64 bits")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawScalar, E> {
                Ok(RawScalar::Float(v))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawScalar, A::Error> {
                let mut dtype = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "dtype" if dtype.is_none() => dtype = Some(map.next_value::<DType>()?),
                        "dtype" => return Err(de::Error::duplicate_field("dtype")),
                        other => {
                            return Err(de::Error::custom(format!(
                                "unknown key `{other}` in a scalar table; a scalar is a value \
                                 (n = 128, eps = 1e-5) or {{ dtype = \"f32\" }} for a symbolic \
                                 float"
                            )));
                        }
                    }
                }
                dtype
                    .map(RawScalar::Symbolic)
                    .ok_or_else(|| de::Error::missing_field("dtype"))
            }
        }
        d.deserialize_any(V)
    }
}
