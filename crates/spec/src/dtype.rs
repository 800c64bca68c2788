//! Element types of tensors and the roles tensors play in a check.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The element type of a tensor, named as in PTX (`f32`, `s32`, ...).
///
/// `pred` is a boolean tensor; it is stored one byte per element, as nvcc
/// and Triton lay out `bool` arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F16,
    Bf16,
    F32,
    F64,
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
    Pred,
    /// fp8 e4m3 (no infinities, one NaN encoding; largest finite 448).
    F8e4m3,
    /// fp8 e5m2 (IEEE-like; largest finite 57344).
    F8e5m2,
}

impl DType {
    /// Every dtype, in the order the spec documentation lists them.
    pub const ALL: [DType; 15] = [
        DType::F16,
        DType::Bf16,
        DType::F32,
        DType::F64,
        DType::S8,
        DType::U8,
        DType::S16,
        DType::U16,
        DType::S32,
        DType::U32,
        DType::S64,
        DType::U64,
        DType::Pred,
        DType::F8e4m3,
        DType::F8e5m2,
    ];

    /// Bytes one element occupies in global memory.
    pub fn size_bytes(self) -> u64 {
        match self {
            DType::S8 | DType::U8 | DType::Pred | DType::F8e4m3 | DType::F8e5m2 => 1,
            DType::F16 | DType::Bf16 | DType::S16 | DType::U16 => 2,
            DType::F32 | DType::S32 | DType::U32 => 4,
            DType::F64 | DType::S64 | DType::U64 => 8,
        }
    }

    /// Whether elements are floating point (their values become real terms).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::F16 | DType::Bf16 | DType::F32 | DType::F64 | DType::F8e4m3 | DType::F8e5m2
        )
    }

    /// The spec word for this dtype.
    pub fn as_str(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::S8 => "s8",
            DType::U8 => "u8",
            DType::S16 => "s16",
            DType::U16 => "u16",
            DType::S32 => "s32",
            DType::U32 => "u32",
            DType::S64 => "s64",
            DType::U64 => "u64",
            DType::Pred => "pred",
            DType::F8e4m3 => "f8e4m3",
            DType::F8e5m2 => "f8e5m2",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| {
                let words: Vec<&str> = DType::ALL.iter().map(|d| d.as_str()).collect();
                format!("unknown dtype `{s}`, expected one of {}", words.join(", "))
            })
    }
}

/// How a kernel uses a tensor: read only, written (its final contents are
/// compared), or both (initial contents are symbolic inputs, final contents
/// are compared) — or scratch: a workspace either kernel may read and
/// write, whose contents are never compared (initially unwritten unless
/// the spec gives `values`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Input,
    Output,
    InOut,
    Scratch,
}

impl Role {
    /// The spec word for this role.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::InOut => "inout",
            Role::Scratch => "scratch",
        }
    }

    /// Whether the tensor's initial contents are symbolic inputs.
    pub fn is_read(self) -> bool {
        matches!(self, Role::Input | Role::InOut)
    }

    /// Whether the tensor's final contents are part of the result.
    pub fn is_written(self) -> bool {
        matches!(self, Role::Output | Role::InOut)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;

    /// Accepts the spec words and the short flag forms `in` / `out`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "input" | "in" => Ok(Role::Input),
            "output" | "out" => Ok(Role::Output),
            "inout" => Ok(Role::InOut),
            "scratch" => Ok(Role::Scratch),
            _ => Err(format!(
                "unknown role `{s}`, expected input (in), output (out), inout or scratch"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_words_round_trip() {
        for d in DType::ALL {
            assert_eq!(d.as_str().parse::<DType>(), Ok(d));
            let json = serde_json_word(&d);
            assert_eq!(json, d.as_str());
        }
        assert_eq!(DType::Bf16.size_bytes(), 2);
        assert_eq!(DType::Pred.size_bytes(), 1);
        assert_eq!("f8e4m3".parse::<DType>(), Ok(DType::F8e4m3));
        assert_eq!(DType::F8e5m2.size_bytes(), 1);
        assert!(DType::F8e4m3.is_float());
        assert!("f8".parse::<DType>().unwrap_err().contains("bf16"));
    }

    fn serde_json_word<T: Serialize>(v: &T) -> String {
        serde_json::to_value(v)
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn roles() {
        assert_eq!("in".parse::<Role>(), Ok(Role::Input));
        assert_eq!("inout".parse::<Role>(), Ok(Role::InOut));
        assert_eq!(serde_json_word(&Role::InOut), "inout");
        assert!(Role::InOut.is_read() && Role::InOut.is_written());
        assert!("rw".parse::<Role>().is_err());
    }
}
