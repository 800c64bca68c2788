//! `[tensor_maps]`: the TMA tensor maps (`CUtensorMap`) a kernel receives,
//! as spec objects. A `CUtensorMap` is an opaque 128-byte descriptor the
//! host builds with `cuTensorMapEncodeTiled`; the checker cannot decode
//! one, so the spec states what it describes — a tiled view of one of
//! the spec's global tensors — and the TMA copies of the kernel
//! (`cp.async.bulk.tensor`) then have concrete addresses.
//!
//! ```toml
//! [tensor_maps.tm]
//! tensor = "a"          # the global tensor viewed (its dtype is the element type)
//! dims = [64, 32]       # globalDim, innermost dimension first (elements)
//! strides = [256]       # globalStrides of dims 1.. in bytes (default: packed)
//! box = [16, 16]        # boxDim, innermost first
//! element_strides = [1, 1] # default: all 1
//! swizzle = "none"      # "none", "32B", "64B", "128B"
//! oob_fill = "zero"     # "zero", or "nan" (float tensors)
//! interleave = "none"   # only "none" is modelled
//! ```
//!
//! The map is bound to a kernel param in one of two ways: a by-value
//! param (`const __grid_constant__ CUtensorMap tm`, PTX
//! `.param .align 64 .b8 name[128]`) is bound by writing the map's name
//! in `params`; a map passed by pointer is described by giving the map
//! the name of the `[tensors]` entry (≥ 128 bytes) that holds it.
//! The limits below are `cuTensorMapEncodeTiled`'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::model::TensorSpec;
use crate::validate::{R, fail};

/// Shared-memory swizzle of a tensor map (what it does to addresses is
/// the engine's: `ptxeq_exec::Swizzle::apply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Swizzle {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "32B")]
    B32,
    #[serde(rename = "64B")]
    B64,
    #[serde(rename = "128B")]
    B128,
}

impl Swizzle {
    /// The span in bytes of one swizzled row (`None` for no swizzle).
    pub fn span(self) -> Option<u64> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
}

/// What out-of-bounds elements of a loaded box become.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OobFill {
    Zero,
    Nan,
}

/// One validated tensor map.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorMapSpec {
    /// The `[tensors]` entry it views.
    pub tensor: String,
    /// `globalDim`, innermost first.
    pub dims: Vec<u64>,
    /// `globalStrides` in bytes, of dims 1.. (`dims.len() - 1` entries).
    pub strides: Vec<u64>,
    /// `boxDim`, innermost first.
    pub box_dims: Vec<u32>,
    /// `elementStrides`, innermost first.
    pub element_strides: Vec<u32>,
    pub swizzle: Swizzle,
    pub oob_fill: OobFill,
}

impl TensorMapSpec {
    /// Elements of the box along dimension `d` (`ceil(box / stride)`).
    pub fn box_extent(&self, d: usize) -> u64 {
        u64::from(self.box_dims[d]).div_ceil(u64::from(self.element_strides[d]))
    }

    /// Elements one copy moves.
    pub fn box_elements(&self) -> u64 {
        (0..self.box_dims.len())
            .map(|d| self.box_extent(d))
            .product()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTensorMap {
    pub tensor: Spanned<String>,
    pub dims: Spanned<Vec<Spanned<i64>>>,
    pub strides: Option<Spanned<Vec<Spanned<i64>>>>,
    #[serde(rename = "box")]
    pub box_dims: Spanned<Vec<Spanned<i64>>>,
    pub element_strides: Option<Spanned<Vec<Spanned<i64>>>>,
    pub swizzle: Option<Spanned<Swizzle>>,
    pub oob_fill: Option<Spanned<OobFill>>,
    pub interleave: Option<Spanned<String>>,
}

/// Validates every `[tensor_maps]` entry against the spec's tensors.
pub(crate) fn tensor_maps(
    raw: &BTreeMap<Spanned<String>, Spanned<RawTensorMap>>,
    tensors: &BTreeMap<String, TensorSpec>,
) -> R<BTreeMap<String, TensorMapSpec>> {
    let mut out = BTreeMap::new();
    for (name, m) in raw {
        let v = one(name.get_ref(), m.get_ref(), tensors)?;
        if let Some(t) = tensors.get(name.get_ref())
            && t.byte_size().unwrap_or(0) < 128
        {
            return fail(
                name,
                format!(
                    "tensor map `{name}` has the name of tensor `{name}`, so that tensor holds \
                     the 128-byte CUtensorMap passed by pointer; it has only {} bytes",
                    t.byte_size().unwrap_or(0)
                ),
            );
        }
        out.insert(name.get_ref().clone(), v);
    }
    Ok(out)
}

fn list(name: &str, key: &str, v: &Spanned<Vec<Spanned<i64>>>, lo: i64, hi: i64) -> R<Vec<u64>> {
    let mut out = Vec::new();
    for (i, x) in v.get_ref().iter().enumerate() {
        let n = *x.get_ref();
        if n < lo || n > hi {
            return fail(
                x,
                format!("tensor map `{name}`: {key}[{i}] is {n}; expected {lo} ..= {hi}"),
            );
        }
        out.push(n as u64);
    }
    Ok(out)
}

fn one(name: &str, m: &RawTensorMap, tensors: &BTreeMap<String, TensorSpec>) -> R<TensorMapSpec> {
    let Some(t) = tensors.get(m.tensor.get_ref()) else {
        return fail(
            &m.tensor,
            format!(
                "tensor map `{name}` views `{}`, which is not a declared tensor",
                m.tensor.get_ref()
            ),
        );
    };
    let esize = t.dtype.size_bytes();
    let dims = list(name, "dims", &m.dims, 1, 1 << 32)?;
    let rank = dims.len();
    if !(1..=5).contains(&rank) {
        return fail(
            &m.dims,
            format!("tensor map `{name}`: {rank} dims; a tiled tensor map has 1 to 5"),
        );
    }
    let strides = match &m.strides {
        Some(s) => list(name, "strides", s, 16, (1 << 40) - 1)?,
        None => {
            let mut v = Vec::new();
            let mut acc = esize;
            for d in &dims[..rank - 1] {
                acc *= d;
                v.push(acc);
            }
            v
        }
    };
    if strides.len() != rank - 1 {
        let at = m.strides.as_ref().map_or(&m.dims, |s| s);
        return fail(
            at,
            format!(
                "tensor map `{name}`: {} strides for {rank} dims; give one byte stride per \
                 dimension after the innermost ({})",
                strides.len(),
                rank - 1
            ),
        );
    }
    for (i, s) in strides.iter().enumerate() {
        if !s.is_multiple_of(16) {
            let at = m.strides.as_ref().map_or(&m.dims, |s| s);
            return fail(
                at,
                format!(
                    "tensor map `{name}`: stride of dim {} is {s} bytes; cuTensorMapEncodeTiled \
                     needs a multiple of 16",
                    i + 1
                ),
            );
        }
    }
    let box_dims = list(name, "box", &m.box_dims, 1, 256)?;
    if box_dims.len() != rank {
        return fail(
            &m.box_dims,
            format!(
                "tensor map `{name}`: box has {} entries for {rank} dims",
                box_dims.len()
            ),
        );
    }
    let element_strides = match &m.element_strides {
        Some(e) => {
            let v = list(name, "element_strides", e, 1, 8)?;
            if v.len() != rank {
                return fail(
                    e,
                    format!(
                        "tensor map `{name}`: element_strides has {} entries for {rank} dims",
                        v.len()
                    ),
                );
            }
            v
        }
        None => vec![1; rank],
    };
    let swizzle = m.swizzle.as_ref().map_or(Swizzle::None, |s| *s.get_ref());
    let oob_fill = m.oob_fill.as_ref().map_or(OobFill::Zero, |s| *s.get_ref());
    if let Some(i) = &m.interleave
        && i.get_ref() != "none"
    {
        return fail(
            i,
            format!(
                "tensor map `{name}`: interleave `{}` is not modelled; only \"none\"",
                i.get_ref()
            ),
        );
    }
    if oob_fill == OobFill::Nan
        && !t.dtype.is_float()
        && let Some(f) = &m.oob_fill
    {
        return fail(
            f,
            format!(
                "tensor map `{name}`: oob_fill = \"nan\" needs a float tensor; `{}` is {}",
                m.tensor.get_ref(),
                t.dtype
            ),
        );
    }
    let spec = TensorMapSpec {
        tensor: m.tensor.get_ref().clone(),
        dims: dims.clone(),
        strides: strides.clone(),
        box_dims: box_dims.iter().map(|&b| b as u32).collect(),
        element_strides: element_strides.iter().map(|&b| b as u32).collect(),
        swizzle,
        oob_fill,
    };
    // The inner row of the box in shared memory.
    let row = spec.box_extent(0) * esize;
    if !row.is_multiple_of(16) {
        return fail(
            &m.box_dims,
            format!(
                "tensor map `{name}`: the box's innermost row is {row} bytes; \
                 cuTensorMapEncodeTiled needs a multiple of 16"
            ),
        );
    }
    if let Some(span) = swizzle.span()
        && row > span
    {
        return fail(
            &m.box_dims,
            format!(
                "tensor map `{name}`: the box's innermost row is {row} bytes, more than the \
                 {span}-byte span of its swizzle"
            ),
        );
    }
    // No two coordinates may name one byte: taken in stride order (a view
    // may list its dimensions in any order, e.g. a K-chunked 3-D view of a
    // row-major matrix whose chunk dimension has the smaller stride), each
    // stride must reach past what the dimensions of smaller strides span.
    // And the whole view must lie inside the tensor.
    let mut order: Vec<usize> = (0..strides.len()).collect();
    order.sort_by_key(|&i| strides[i]);
    let mut extent = dims[0] * esize;
    for i in order {
        let s = strides[i];
        if s < extent {
            let at = m.strides.as_ref().map_or(&m.dims, |s| s);
            return fail(
                at,
                format!(
                    "tensor map `{name}`: stride of dim {} is {s} bytes, less than the {extent} \
                     bytes the dimensions of smaller strides span (the view would overlap itself)",
                    i + 1
                ),
            );
        }
        extent = s.saturating_mul(dims[i + 1]);
    }
    let last: u64 = (dims[0] - 1) * esize
        + strides
            .iter()
            .zip(&dims[1..])
            .map(|(s, d)| s.saturating_mul(d - 1))
            .sum::<u64>()
        + esize;
    let size = t.byte_size().unwrap_or(u64::MAX);
    if last > size {
        return fail(
            &m.dims,
            format!(
                "tensor map `{name}`: the view spans {last} bytes but tensor `{}` has {size}",
                m.tensor.get_ref()
            ),
        );
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::OobFill;
    use crate::{CheckSpec, ParamBinding};

    const BASE: &str = r#"
[kernel]
ptx = "k.ptx"
params = ["tm", "out"]
[launch]
block = 64
[tensors]
a = { role = "input", dtype = "f32", shape = [64, 32] }
out = { role = "output", dtype = "f32", shape = [32] }
"#;

    fn spec(map: &str) -> Result<CheckSpec, String> {
        CheckSpec::from_toml_str(&format!("{BASE}[tensor_maps.tm]\n{map}"), ".".as_ref())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_by_value_map_binds_its_param() {
        let s =
            spec("tensor = \"a\"\ndims = [32, 64]\nbox = [32, 16]\noob_fill = \"nan\"").unwrap();
        let m = &s.tensor_maps["tm"];
        assert_eq!(m.strides, vec![128]);
        assert_eq!(m.element_strides, vec![1, 1]);
        assert_eq!(m.oob_fill, OobFill::Nan);
        assert_eq!(m.box_elements(), 512);
        let k = match &s.kernels {
            crate::Kernels::Single(k) => k,
            _ => panic!("single kernel"),
        };
        assert_eq!(k.params[0], ParamBinding::TensorMap("tm".into()));
    }

    /// A K-chunked 3-D view of the row-major 64x32 matrix: dim 0 is 8
    /// floats of a row, dim 1 the 64 rows (stride 128), dim 2 the four
    /// 8-float chunks of a row (stride 32, smaller than dim 1's). It does not
    /// overlap itself in stride order, so it is accepted; with chunks 16
    /// bytes apart it overlaps and is refused.
    #[test]
    fn views_are_checked_for_overlap_in_stride_order() {
        let s = spec("tensor = \"a\"\ndims = [8, 64, 4]\nstrides = [128, 32]\nbox = [8, 16, 4]")
            .unwrap();
        assert_eq!(s.tensor_maps["tm"].strides, vec![128, 32]);
        let e = spec("tensor = \"a\"\ndims = [8, 64, 4]\nstrides = [128, 16]\nbox = [8, 16, 4]")
            .unwrap_err();
        assert!(e.contains("overlap itself"), "{e}");
    }

    #[test]
    fn bad_maps_are_refused_at_their_key() {
        for (map, says) in [
            (
                "tensor = \"b\"\ndims = [32]\nbox = [32]",
                "not a declared tensor",
            ),
            (
                "tensor = \"a\"\ndims = [32, 65]\nbox = [32, 16]",
                "the view spans",
            ),
            (
                "tensor = \"a\"\ndims = [32, 64]\nstrides = [64]\nbox = [32, 16]",
                "less than",
            ),
            (
                "tensor = \"a\"\ndims = [32, 64]\nbox = [2, 16]",
                "multiple of 16",
            ),
            (
                "tensor = \"a\"\ndims = [32, 64]\nbox = [32, 16]\nswizzle = \"32B\"",
                "span",
            ),
            (
                "tensor = \"a\"\ndims = [32, 64]\nbox = [32, 16]\ninterleave = \"16B\"",
                "interleave",
            ),
        ] {
            let e = spec(map).unwrap_err();
            assert!(e.contains(says), "{map}: {e}");
            assert!(e.contains(':'), "no location: {e}");
        }
    }
}
