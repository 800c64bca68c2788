//! What the spec's binding keys mean for one kernel's run (the spec side
//! is `ptxeq_spec::bindings`; the semantics are in `docs/semantics.md`,
//! "Bindings"), resolved here into the engine's plain
//! [`ptxeq_exec::Bindings`]:
//!
//! - concrete tensor `values`: the tensor's bytes hold those values at
//!   launch (input, inout and scratch tensors); loads of them are concrete,
//!   so an index tensor gives concrete addresses;
//! - by-value struct params: the aggregate's bytes, field by field;
//! - `[functions]`: calls of a bound `.func` compute the bound real
//!   function, or apply an uninterpreted function symbol;
//! - `[globals]`: a module-scope `.global`/`.const` variable holds given
//!   values, or symbolic inputs (an input tensor of its own, numbered after
//!   the spec's tensors), instead of its initialiser.

use ptxeq_exec::{
    BinOp, Bindings, BoundFunction, BoundGlobal, BoundOp, FieldKind, FieldValue, Fmt,
    GlobalContents, TensorInfo, UnOp,
};
use ptxeq_ir::{KernelIr, ModuleIr, ScalarType, StateSpace, VarDecl};
use ptxeq_spec::{
    CheckSpec, DType, FieldBinding, FunctionBinding, KnownFn, Role, ScalarValue, StructField,
    Values,
};

/// The bits of `v` stored as one element of `dtype` (floats rounded to
/// nearest, as a host would store the decimal).
pub fn value_bits(v: ScalarValue, dtype: DType) -> Result<u64, String> {
    let w = dtype.size_bytes() * 8;
    let mask = |x: u64| if w >= 64 { x } else { x & ((1u64 << w) - 1) };
    match (Fmt::of_dtype(dtype), v) {
        // A symbolic scalar is a term, never bits (the spec rejects one
        // among values).
        (_, ScalarValue::Symbolic { .. }) => Err("a symbolic scalar has no bits".into()),
        (None, ScalarValue::Int(i)) => Ok(mask(i as u64)),
        (None, ScalarValue::Float(f)) => Err(format!(
            "{} is not an integer, but the dtype is {dtype}",
            f.get()
        )),
        // fp8: round to nearest even, saturating (what cuda_fp8.h's
        // conversions store).
        (Some(fmt), v) if fmt.narrow().is_some() => {
            let x = match v {
                ScalarValue::Int(i) => i as f64,
                ScalarValue::Float(f) if f.get().is_nan() => {
                    return Err("NaN has no real value".into());
                }
                ScalarValue::Float(f) => f.get(),
                ScalarValue::Symbolic { .. } => return Err("a symbolic scalar has no bits".into()),
            };
            fmt.narrow()
                .and_then(|n| n.encode_rn_satfinite(x))
                .ok_or_else(|| format!("{x} has no {dtype} encoding"))
        }
        (Some(fmt), v) => match v {
            ScalarValue::Int(i) => Ok(ptxeq_exec::round_int(fmt, i128::from(i))),
            ScalarValue::Float(f) => {
                if f.get().is_nan() {
                    return Err("NaN has no real value".into());
                }
                Ok(ptxeq_exec::round_f64(fmt, f.get()))
            }
            ScalarValue::Symbolic { .. } => Err("a symbolic scalar has no bits".into()),
        },
    }
}

/// The bytes of `count` elements of `dtype` holding `values`.
fn encode(values: &Values, dtype: DType, count: u64) -> Result<Vec<u8>, String> {
    let es = dtype.size_bytes() as usize;
    if let Some(n) = values.len()
        && n != count
    {
        return Err(format!(
            "{n} value(s) given but there are {count} elements of {dtype}"
        ));
    }
    let mut out = Vec::with_capacity(es * count as usize);
    for i in 0..count {
        let v = values.get(i).unwrap_or(ScalarValue::Int(0));
        let bits = value_bits(v, dtype).map_err(|m| format!("element {i}: {m}"))?;
        if let (Values::Iota, Some(fmt)) = (values, Fmt::of_dtype(dtype))
            && ptxeq_exec::float_bits_to_f64(fmt, bits) != i as f64
        {
            return Err(format!(
                "\"iota\": element {i} is not exactly representable as {dtype}"
            ));
        }
        out.extend((0..es).map(|k| (bits >> (8 * k)) as u8));
    }
    Ok(out)
}

/// The element type of a module variable: the spec's `dtype`, else its
/// declared type. An untyped `.bN` variable (nvcc declares every
/// initialised array `.b8`) holds unsigned integers when given values;
/// as an input it needs the spec's `dtype` (floats or integers?).
fn var_dtype(v: &VarDecl, given: Option<DType>, input: bool) -> Result<DType, String> {
    if let Some(d) = given {
        return Ok(d);
    }
    use ScalarType as T;
    if input && v.ty.is_bits() {
        return Err(format!(
            "the variable is declared .{} (untyped bytes); give its element type, e.g. dtype = \"f32\"",
            v.ty
        ));
    }
    Ok(match v.ty {
        T::F16 => DType::F16,
        T::Bf16 => DType::Bf16,
        T::F32 => DType::F32,
        T::F64 => DType::F64,
        T::S8 => DType::S8,
        T::U8 | T::B8 => DType::U8,
        T::S16 => DType::S16,
        T::U16 | T::B16 => DType::U16,
        T::S32 => DType::S32,
        T::U32 | T::B32 => DType::U32,
        T::S64 => DType::S64,
        T::U64 | T::B64 => DType::U64,
        t => return Err(format!("its type .{t} has no dtype; give `dtype`")),
    })
}

/// Resolves the spec's binding keys for `kernel` in `module`.
/// `tensors` is the tensor table (spec tensors; `[globals]` inputs are
/// appended to it here). Tensor maps and struct params are added per
/// param by [`crate::cta_input`].
pub fn bindings(
    spec: &CheckSpec,
    module: &ModuleIr,
    kernel: &KernelIr,
    tensors: &mut Vec<TensorInfo>,
) -> Result<Bindings, String> {
    let mut b = Bindings {
        first_global_tensor: tensors.len() as u32,
        ..Bindings::default()
    };
    for (name, t) in &spec.tensors {
        if t.role == Role::Scratch {
            b.assumptions.push(format!(
                "tensor `{name}` is scratch: a workspace either kernel may read and write; its \
                 contents are never compared (a read before any write is uninitialised unless \
                 it has values)"
            ));
        }
    }
    // Concrete tensor contents.
    for (i, (name, t)) in spec.tensors.iter().enumerate() {
        let bytes = match &t.values {
            Some(v) => {
                let n = t.elements().ok_or("tensor too large")?;
                Some(encode(v, t.dtype, n).map_err(|m| format!("tensor `{name}`: values: {m}"))?)
            }
            None => None,
        };
        if bytes.is_some() {
            b.tensor_bytes.resize(i + 1, None);
            b.tensor_bytes[i] = bytes;
            b.assumptions.push(format!(
                "tensor `{name}` holds the given values {} at launch: the verdict holds for these values only",
                t.values.as_ref().map(ToString::to_string).unwrap_or_default()
            ));
        }
    }
    // Module variables.
    for (name, g) in &spec.globals {
        let decl = module.globals.iter().find(|v| &v.name == name);
        let (dtype, contents) = match (decl, &g.values) {
            (Some(v), _) if !matches!(v.space, StateSpace::Global | StateSpace::Const) => {
                return Err(format!(
                    "[globals] `{name}`: the variable is .{}; only .global and .const variables can be bound",
                    v.space
                ));
            }
            (Some(v), Some(values)) => {
                let dtype =
                    var_dtype(v, g.dtype, false).map_err(|m| format!("[globals] `{name}`: {m}"))?;
                let size = v.size_bytes.unwrap_or(0);
                if size % dtype.size_bytes() != 0 {
                    return Err(format!(
                        "[globals] `{name}`: the variable has {size} bytes, not a whole number of {dtype} elements"
                    ));
                }
                let bytes = encode(values, dtype, size / dtype.size_bytes())
                    .map_err(|m| format!("[globals] `{name}`: {m}"))?;
                b.assumptions.push(format!(
                    "module variable `{name}` holds the given values {values} at launch (not its initialiser): the verdict holds for these values only"
                ));
                (dtype, GlobalContents::Bytes(bytes))
            }
            (decl, None) => {
                let dtype = match decl {
                    Some(v) => var_dtype(v, g.dtype, true)
                        .map_err(|m| format!("[globals] `{name}`: {m}"))?,
                    None => g.dtype.unwrap_or(DType::U8),
                };
                let size = decl
                    .and_then(|v| v.size_bytes)
                    .unwrap_or(dtype.size_bytes());
                if size % dtype.size_bytes() != 0 {
                    return Err(format!(
                        "[globals] `{name}`: the variable has {size} bytes, not a whole number of {dtype} elements"
                    ));
                }
                let tensor = tensors.len() as u32;
                tensors.push(TensorInfo {
                    name: name.clone(),
                    role: ptxeq_exec::Role::Input,
                    dtype,
                    shape: vec![(size / dtype.size_bytes()).max(1)],
                });
                b.assumptions.push(format!(
                    "module variable `{name}` is an input: its {dtype} elements are arbitrary at launch (its initialiser is not used)"
                ));
                (dtype, GlobalContents::Input { tensor })
            }
            (None, Some(_)) => continue,
        };
        let _ = dtype;
        b.globals.push(BoundGlobal {
            name: name.clone(),
            contents,
        });
    }
    // Functions.
    for f in &module.funcs {
        let key = if spec.functions.contains_key(&f.name) {
            f.name.clone()
        } else if let Some(u) =
            ptxeq_exec::unmangled(&f.name).filter(|u| spec.functions.contains_key(*u))
        {
            u.to_owned()
        } else {
            continue;
        };
        let binding = spec.functions[&key];
        let fmt_of = |p: &ptxeq_ir::ParamDecl, what: &str| -> Result<Fmt, String> {
            let fmt = match (Fmt::of(p.ty), p.ty.bit_width()) {
                (Some(f), _) => Some(f),
                // `.b32`/`.b64` params (nvcc's `.param .b32 retval0`)
                // carry f32/f64 bits.
                (None, 32) if p.ty.is_bits() => Some(Fmt::F32),
                (None, 64) if p.ty.is_bits() => Some(Fmt::F64),
                (None, 16) if p.ty.is_bits() => Some(Fmt::F16),
                _ => None,
            };
            match fmt {
                Some(f) if p.dims.is_empty() && p.vector.is_none() => Ok(f),
                _ => Err(format!(
                    "[functions] `{key}`: {what} `{}` of `{}` is .{}; a bound function takes and returns floats",
                    p.name, f.name, p.ty
                )),
            }
        };
        let args = f
            .args()
            .map(|(_, p)| fmt_of(p, "param"))
            .collect::<Result<Vec<_>, _>>()?;
        let rets: Vec<_> = f.params.iter().filter(|p| p.is_return).collect();
        let [ret] = rets.as_slice() else {
            return Err(format!(
                "[functions] `{key}`: `{}` has {} return values; a bound function returns one",
                f.name,
                rets.len()
            ));
        };
        let ret = fmt_of(ret, "return value")?;
        if let FunctionBinding::Known(k) = binding
            && k.arity() != args.len()
        {
            return Err(format!(
                "[functions] `{key}` = \"{}\" takes {} argument(s) but `{}` has {}",
                k.word(),
                k.arity(),
                f.name,
                args.len()
            ));
        }
        let op = match binding {
            FunctionBinding::Uninterpreted => BoundOp::Uninterpreted,
            FunctionBinding::Known(k) => known_op(k).ok_or_else(|| {
                format!(
                    "[functions] `{key}` = \"{}\": the engine has no operation computing it",
                    k.word()
                )
            })?,
        };
        let shown = if key == f.name {
            format!("`{key}`")
        } else {
            format!("`{key}` (`{}`)", f.name)
        };
        b.assumptions.push(match binding {
            FunctionBinding::Known(k) => format!(
                "function {shown} computes `{}` of its argument(s) exactly, over the reals \
                 (spec [functions]; its body, if any, is not run)",
                k.word()
            ),
            FunctionBinding::Uninterpreted => format!(
                "function {shown} is an uninterpreted function of {} argument(s): an equivalence holds for every function it could be; a counterexample names the interpretation it uses",
                args.len()
            ),
        });
        b.functions.push(BoundFunction {
            func: f.name.clone(),
            key,
            binding: op,
            args,
            ret,
        });
    }
    let _ = kernel;
    Ok(b)
}

/// The engine operation computing known function `k`: the math
/// functions by name through the one table (`ptxeq_terms::MathFn`, via
/// [`UnOp::named`]); `abs`, `min`, `max` and `pow` are arithmetic. A test
/// keeps every spec word mapped.
fn known_op(k: KnownFn) -> Option<BoundOp> {
    match k {
        KnownFn::Abs => Some(BoundOp::Unary(UnOp::Abs)),
        KnownFn::Pow => Some(BoundOp::Binary(BinOp::Pow)),
        KnownFn::Min => Some(BoundOp::Binary(BinOp::Min)),
        KnownFn::Max => Some(BoundOp::Binary(BinOp::Max)),
        k => UnOp::named(k.word()).map(BoundOp::Unary),
    }
}

/// Resolves the fields of a struct param bound to `fields`, for a
/// param of `size` bytes, into `b.structs`; returns its index.
pub fn struct_param(
    b: &mut Bindings,
    what: &str,
    size: u64,
    fields: &[StructField],
    spec: &CheckSpec,
    tensors: &[TensorInfo],
) -> Result<u32, String> {
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let end = f.offset + f.bind.size();
        if end > size {
            return Err(format!(
                "{what}: field `{}` at offset {} ends at byte {end}, past the {size}-byte param",
                f.bind.name(),
                f.offset
            ));
        }
        let kind = match &f.bind {
            FieldBinding::Tensor(name) => FieldKind::Tensor {
                tensor: tensors
                    .iter()
                    .position(|t| &t.name == name)
                    .ok_or_else(|| format!("{what}: no tensor `{name}`"))?
                    as u32,
            },
            FieldBinding::Scalar { name, dtype } => {
                let v = spec
                    .scalars
                    .get(name)
                    .ok_or_else(|| format!("{what}: no scalar `{name}`"))?;
                let bits =
                    value_bits(*v, *dtype).map_err(|m| format!("{what}: field `{name}`: {m}"))?;
                FieldKind::Scalar {
                    bits,
                    bytes: dtype.size_bytes() as u8,
                }
            }
        };
        out.push(FieldValue {
            offset: f.offset,
            what: kind,
        });
    }
    b.structs.push(out);
    Ok(b.structs.len() as u32 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_encodings() {
        assert_eq!(
            value_bits(ScalarValue::Int(-1), DType::S32),
            Ok(0xFFFF_FFFF)
        );
        assert_eq!(value_bits(ScalarValue::Int(3), DType::U8), Ok(3));
        assert_eq!(value_bits(ScalarValue::Int(2), DType::F32), Ok(0x4000_0000));
        assert_eq!(value_bits(ScalarValue::float(0.5), DType::F16), Ok(0x3800));
        assert_eq!(value_bits(ScalarValue::float(1.0), DType::F8e4m3), Ok(0x38));
        assert_eq!(value_bits(ScalarValue::Int(-2), DType::F8e5m2), Ok(0xC0));
        assert_eq!(
            value_bits(ScalarValue::float(1000.0), DType::F8e4m3),
            Ok(0x7E)
        );
        assert!(encode(&Values::Iota, DType::F8e4m3, 64).is_err());
        assert!(encode(&Values::Iota, DType::F8e4m3, 16).is_ok());
        assert_eq!(
            value_bits(ScalarValue::float(0.1), DType::F32),
            Ok(u64::from(0.1f32.to_bits()))
        );
        assert!(value_bits(ScalarValue::float(0.5), DType::S32).is_err());
        let bytes = encode(&Values::Iota, DType::S16, 3).unwrap();
        assert_eq!(bytes, vec![0, 0, 1, 0, 2, 0]);
        assert!(encode(&Values::Iota, DType::F16, 4096).is_err());
        assert!(encode(&Values::List(vec![ScalarValue::Int(1)]), DType::S32, 2).is_err());
    }

    /// Every function word the spec accepts has an engine operation of its
    /// arity, so a bound known function always computes.
    #[test]
    fn every_known_function_has_an_operation() {
        for k in KnownFn::ALL {
            let op = known_op(k);
            let arity = match op {
                Some(BoundOp::Unary(_)) => 1,
                Some(BoundOp::Binary(_)) => 2,
                _ => 0,
            };
            assert_eq!(arity, k.arity(), "known function {}", k.word());
        }
    }
}
