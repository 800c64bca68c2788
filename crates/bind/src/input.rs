//! The spec side of one CTA run: [`cta_input`] binds a kernel of a module
//! to the check spec's launch, tensors, scalars and binding keys, and
//! reports every misfit (wrong kinds, widths, missing entry, missing block
//! size) as an [`InputError`] pointing at the spec key, instead of failing
//! later mid-run.

use std::sync::Arc;

use ptxeq_exec::{
    CtaInput, Limits, OobFill, ParamValue, Swizzle, SymbolInfo, TensorInfo, TensorMapBinding,
    TensorMapGeometry, TensorMapHolder,
};
use ptxeq_ir::{KernelIr, ModuleIr, ScalarType};
use ptxeq_spec::{CheckSpec, DType, KernelRef, ParamBinding, ScalarValue};
use serde::{Deserialize, Serialize};

/// The binding of tensor map `name` held in by-value param `param`.
fn tensor_map_binding(
    spec: &CheckSpec,
    tensors: &[TensorInfo],
    name: &str,
    param: usize,
) -> Result<TensorMapBinding, String> {
    let m = spec
        .tensor_maps
        .get(name)
        .ok_or_else(|| format!("no tensor map `{name}`"))?;
    let tensor = tensors
        .iter()
        .position(|t| t.name == m.tensor)
        .ok_or_else(|| format!("tensor map `{name}`: no tensor `{}`", m.tensor))?;
    Ok(TensorMapBinding {
        name: name.to_owned(),
        tensor: tensor as u32,
        holder: TensorMapHolder::Param {
            index: param as u32,
        },
        geometry: geometry(m),
    })
}

/// The engine's role for a spec tensor role.
pub(crate) fn tensor_role(r: ptxeq_spec::Role) -> ptxeq_exec::Role {
    use ptxeq_exec::Role as E;
    use ptxeq_spec::Role as S;
    match r {
        S::Input => E::Input,
        S::Output => E::Output,
        S::InOut => E::InOut,
        S::Scratch => E::Scratch,
    }
}

/// The engine's view of a validated `[tensor_maps]` entry.
fn geometry(m: &ptxeq_spec::TensorMapSpec) -> TensorMapGeometry {
    use ptxeq_spec::{OobFill as O, Swizzle as S};
    TensorMapGeometry {
        dims: m.dims.clone(),
        strides: m.strides.clone(),
        box_dims: m.box_dims.clone(),
        element_strides: m.element_strides.clone(),
        swizzle: match m.swizzle {
            S::None => Swizzle::None,
            S::B32 => Swizzle::B32,
            S::B64 => Swizzle::B64,
            S::B128 => Swizzle::B128,
        },
        oob_fill: match m.oob_fill {
            O::Zero => OobFill::Zero,
            O::Nan => OobFill::Nan,
        },
    }
}

/// A spec that does not fit the kernel.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct InputError {
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}

fn err<T>(message: String) -> Result<T, InputError> {
    Err(InputError { message })
}

/// The cluster shape of a launch: the spec's `launch.cluster` or the
/// entry's `.reqnctapercluster`, which must agree when both are given; an
/// entry declaring `.explicitcluster` needs one of them. Every extent
/// divides the grid's.
fn cluster_shape(
    kernel: &KernelIr,
    launch: &ptxeq_spec::Launch,
    role: &str,
    at: &dyn Fn(String, String) -> String,
) -> Result<Option<[u32; 3]>, InputError> {
    let mut req: Option<[u32; 3]> = None;
    let mut explicit = false;
    for (name, vals) in &kernel.directives {
        match name.trim_start_matches('.') {
            "reqnctapercluster" => {
                let mut r = [1u32; 3];
                for (i, &v) in vals.iter().take(3).enumerate() {
                    r[i] = u32::try_from(v).unwrap_or(u32::MAX);
                }
                req = Some(r);
            }
            "explicitcluster" => explicit = true,
            _ => {}
        }
    }
    // The key the launch's cluster came from, for the message's location.
    let key = format!("{role}.launch.cluster");
    let key = if at(key.clone(), String::new()).is_empty() {
        "launch.cluster".to_owned()
    } else {
        key
    };
    let fail = |m: String| InputError {
        message: at(key.clone(), m),
    };
    let cluster = match (launch.cluster, req) {
        (Some(c), Some(r)) if c != r => {
            return Err(fail(format!(
                "the launch's cluster {c:?} differs from `{}`'s .reqnctapercluster {r:?}",
                kernel.name
            )));
        }
        (c, r) => c.or(r),
    };
    if explicit && cluster.is_none() {
        return Err(fail(format!(
            "`{}` declares .explicitcluster: give the cluster shape (`launch.cluster`)",
            kernel.name
        )));
    }
    if let Some(c) = cluster
        && c.iter().map(|&d| u64::from(d)).product::<u64>() > 16
    {
        // The spec checks its own key; this is a `.reqnctapercluster`.
        return Err(fail(format!(
            "cluster {c:?} has more than 16 CTAs, the most any GPU allows"
        )));
    }
    if let Some(c) = cluster
        && (c.contains(&0) || (0..3).any(|i| !launch.grid[i].is_multiple_of(c[i])))
    {
        return Err(fail(format!(
            "cluster {c:?} does not divide the grid {:?} (a grid is a whole number of clusters)",
            launch.grid
        )));
    }
    Ok(cluster)
}

/// Binds `kref`'s kernel in `module` to the spec's tensors and scalars:
/// the input of one CTA run (`ptxeq_exec::run_cta`).
pub fn cta_input(
    spec: &CheckSpec,
    kref: &KernelRef,
    module: &ModuleIr,
) -> Result<CtaInput, InputError> {
    // Errors here are "the spec does not fit the kernel": each points
    // at the spec key it concerns (`check.toml:12:10: …`) when the spec
    // was read from a file.
    let role = spec
        .kernels
        .iter()
        .into_iter()
        .find(|(_, k)| std::ptr::eq(*k, kref))
        .map_or("kernel", |(r, _)| r);
    let at = |key: String, message: String| spec.locations.at(&key, message);
    let entries = || {
        module
            .kernels
            .iter()
            .map(|k| format!("`{}`", k.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let kernel = match &kref.entry {
        Some(name) => match module.kernel(name) {
            Some(k) => k,
            None if module.kernels.is_empty() => {
                return err(at(
                    format!("{role}.entry"),
                    format!(
                        "no .entry `{name}` in {}: it has no entries",
                        kref.ptx.display()
                    ),
                ));
            }
            None => {
                return err(at(
                    format!("{role}.entry"),
                    format!(
                        "no .entry `{name}` in {}; its entries: {}",
                        kref.ptx.display(),
                        entries()
                    ),
                ));
            }
        },
        None => match module.kernels.as_slice() {
            [k] => k,
            [] => {
                return err(at(
                    format!("{role}.ptx"),
                    format!("no .entry in {}", kref.ptx.display()),
                ));
            }
            _ => {
                return err(at(
                    format!("{role}.ptx"),
                    format!(
                        "{} has several entries ({}); name one with `entry`",
                        kref.ptx.display(),
                        entries()
                    ),
                ));
            }
        },
    };
    let mut tensors: Vec<TensorInfo> = spec
        .tensors
        .iter()
        .map(|(name, t)| TensorInfo {
            name: name.clone(),
            role: tensor_role(t.role),
            dtype: t.dtype,
            shape: t.shape.clone(),
        })
        .collect();
    let mut bindings = crate::bindings::bindings(spec, module, kernel, &mut tensors)
        .map_err(|message| InputError { message })?;
    // Symbolic scalars are numbered after every tensor, `[globals]`
    // inputs included (the same count for both kernels of a pair).
    let symbols: Vec<SymbolInfo> = spec
        .scalars
        .iter()
        .filter_map(|(name, v)| {
            v.symbolic().map(|dtype| SymbolInfo {
                name: name.clone(),
                dtype,
            })
        })
        .collect();
    let args: Vec<_> = kernel.args().map(|(_, p)| p).collect();
    if args.len() != kref.params.len() {
        return err(at(
            format!("{role}.params"),
            format!(
                "kernel `{}` has {} params but the spec binds {}",
                kernel.name,
                args.len(),
                kref.params.len()
            ),
        ));
    }
    let mut params = Vec::with_capacity(args.len());
    for (i, (decl, binding)) in args.iter().zip(&kref.params).enumerate() {
        let what = format!("param #{i} `{}` of `{}`", decl.name, kernel.name);
        let here = format!("{role}.params.{i}");
        params.push(match binding {
            ParamBinding::Unused => ParamValue::Unused,
            ParamBinding::Tensor(name) => {
                let Some(t) = tensors.iter().position(|t| &t.name == name) else {
                    return err(format!("{what}: no tensor `{name}`"));
                };
                if decl.ty.bit_width() != 64 || !decl.dims.is_empty() {
                    return err(at(
                        here,
                        format!(
                            "{what} is .{} but tensor `{name}` needs a 64-bit pointer param",
                            decl.ty
                        ),
                    ));
                }
                ParamValue::Tensor { tensor: t as u32 }
            }
            ParamBinding::Scalar(name) => {
                let Some(v) = spec.scalars.get(name) else {
                    return err(format!("{what}: no scalar `{name}`"));
                };
                if !decl.dims.is_empty() || decl.vector.is_some() {
                    return err(at(
                        here,
                        format!("{what} is an aggregate; scalar `{name}` cannot bind it"),
                    ));
                }
                if decl.is_ptr {
                    return err(at(
                        here,
                        format!(
                            "{what} is a pointer (.ptr) but `{name}` is a scalar; bind a \
                             tensor to it"
                        ),
                    ));
                }
                if let Some(dtype) = v.symbolic() {
                    symbol_fits(dtype, decl.ty).map_err(|m| InputError {
                        message: at(
                            format!("scalars.{name}"),
                            format!("{what}: symbolic scalar `{name}` ({dtype}): {m}"),
                        ),
                    })?;
                    let k = symbols.iter().position(|s| &s.name == name).unwrap_or(0);
                    params.push(ParamValue::Symbol {
                        input: (tensors.len() + k) as u32,
                    });
                    continue;
                }
                ParamValue::Scalar {
                    bits: scalar_bits(*v, decl.ty).map_err(|m| InputError {
                        message: at(
                            format!("scalars.{name}"),
                            format!("{what}: scalar `{name}` = {v}: {m}"),
                        ),
                    })?,
                }
            }
            ParamBinding::TensorMap(name) => {
                let size = decl.size_bytes.filter(|_| !decl.dims.is_empty());
                if size.is_none_or(|n| n < 128) {
                    return err(at(
                        here,
                        format!(
                            "{what} is .{} but tensor map `{name}` needs a by-value \
                             CUtensorMap param (.param .align 64 .b8 name[128])",
                            decl.ty
                        ),
                    ));
                }
                let map = tensor_map_binding(spec, &tensors, name, i).map_err(|m| InputError {
                    message: at(format!("tensor_maps.{name}"), m),
                })?;
                bindings.tensor_maps.push(map);
                ParamValue::TensorMap {
                    map: (bindings.tensor_maps.len() - 1) as u32,
                }
            }
            ParamBinding::Struct(fields) => {
                let size = match decl.size_bytes {
                    Some(n) if !decl.dims.is_empty() => n,
                    _ => {
                        return err(format!(
                            "{what} is .{}, not an aggregate (.param .align A .b8 name[N]); \
                             bind it by name, not as a struct",
                            decl.ty
                        ));
                    }
                };
                let index = crate::bindings::struct_param(
                    &mut bindings,
                    &what,
                    size,
                    fields,
                    spec,
                    &tensors,
                )
                .map_err(|message| InputError { message })?;
                ParamValue::Struct { index }
            }
        });
    }
    // Tensor maps passed by pointer: the map named like a tensor this
    // kernel binds lives in that tensor.
    for name in spec.tensor_maps.keys() {
        let bound = kref
            .params
            .iter()
            .any(|p| matches!(p, ParamBinding::Tensor(n) if n == name));
        if !bound {
            continue;
        }
        let mut map = tensor_map_binding(spec, &tensors, name, 0).map_err(|m| InputError {
            message: at(format!("tensor_maps.{name}"), m),
        })?;
        let holder = tensors.iter().position(|t| &t.name == name).unwrap_or(0);
        map.holder = TensorMapHolder::Tensor {
            tensor: holder as u32,
        };
        bindings.tensor_maps.push(map);
    }
    // This kernel's own launch: the shared [launch] with its overrides.
    let launch = &kref.launch;
    let block = match launch.block.or(kernel.reqntid).or(kernel.maxntid) {
        Some(b) => b,
        None => {
            return err(format!(
                "no block size: the spec has no [launch] block and `{}` no .reqntid/.maxntid",
                kernel.name
            ));
        }
    };
    if block.contains(&0) || launch.grid.contains(&0) {
        return err("block and grid extents must be positive".into());
    }
    let cluster = cluster_shape(kernel, launch, role, &at)?;
    let funcs = module.funcs.iter().map(|f| Arc::new(f.clone())).collect();
    Ok(CtaInput {
        kernel: Arc::new(kernel.clone()),
        funcs,
        block,
        grid: launch.grid,
        dynamic_shared: launch.dynamic_shared,
        cluster,
        params,
        tensors,
        symbols,
        limits: Limits {
            max_steps: spec.limits.max_steps,
            ..Limits::default()
        },
        bindings,
    })
}

/// Whether a symbolic scalar of `dtype` can bind a param of type `ty`: the
/// same width, and a float or untyped-bits param (an integer param would
/// reinterpret the real's bits as an integer, which has no term).
fn symbol_fits(dtype: DType, ty: ScalarType) -> Result<(), String> {
    let width_ok = ty.bit_width() as u64 == dtype.size_bytes() * 8;
    let kind_ok = matches!(
        (dtype, ty),
        (DType::F32, ScalarType::F32 | ScalarType::B32)
            | (DType::F64, ScalarType::F64 | ScalarType::B64)
            | (DType::F16, ScalarType::F16 | ScalarType::B16)
            | (DType::Bf16, ScalarType::Bf16 | ScalarType::B16)
    );
    if width_ok && kind_ok {
        Ok(())
    } else {
        Err(format!(
            "the param is .{ty}; a symbolic {dtype} binds a .{dtype} or .b{} param",
            dtype.size_bytes() * 8
        ))
    }
}

/// The bits a scalar param of type `ty` receives.
fn scalar_bits(v: ScalarValue, ty: ScalarType) -> Result<u64, String> {
    let w = ty.bit_width();
    match (v, ty) {
        (ScalarValue::Int(i), t) if t.is_int() || t == ScalarType::Pred => {
            // The value must be one the param's type holds: a signed param
            // its signed range, an unsigned one its unsigned range (the
            // kernel would otherwise see another number: 2147483648 in a
            // .s32 is INT_MIN, and a loop to n runs zero times). Untyped
            // bits take either reading; a predicate is 0 or 1.
            // 2^b, saturated (a .b128 param holds every i64).
            let pow = |b: u32| 1i128.checked_shl(b).filter(|p| *p > 0).unwrap_or(i128::MAX);
            let w = w.max(1);
            let signed = (-pow(w - 1), pow(w - 1) - 1);
            let unsigned = (0, pow(w).saturating_sub(1));
            let (lo, hi) = if t == ScalarType::Pred {
                (0, 1)
            } else if t.is_signed() {
                signed
            } else if t.is_unsigned() {
                unsigned
            } else {
                (signed.0, unsigned.1)
            };
            let i = i128::from(i);
            if i < lo || i > hi {
                return Err(format!("does not fit a .{t} param ({lo} to {hi})"));
            }
            Ok(ptxeq_exec::mask_bits(i as u64, w))
        }
        (ScalarValue::Int(i), ScalarType::F32) => {
            let f = i as f32;
            if f64::from(f) != i as f64 {
                return Err("not exactly representable as f32".into());
            }
            Ok(u64::from(f.to_bits()))
        }
        (ScalarValue::Int(i), ScalarType::F64) => {
            let f = i as f64;
            if f as i64 != i {
                return Err("not exactly representable as f64".into());
            }
            Ok(f.to_bits())
        }
        // The spec's decimal is rounded to f32, as the kernel would see it.
        (ScalarValue::Float(f), ScalarType::F32) => Ok(u64::from((f.get() as f32).to_bits())),
        (ScalarValue::Float(f), ScalarType::F64) => Ok(f.get().to_bits()),
        (ScalarValue::Float(f), ScalarType::F16 | ScalarType::Bf16) => Err(format!(
            "float {} for a .{ty} param is not supported",
            f.get()
        )),
        (ScalarValue::Float(_), t) => Err(format!("a float cannot bind .{t}")),
        (ScalarValue::Symbolic { .. }, _) => Err("a symbolic scalar has no bits".into()),
        (ScalarValue::Int(_), t) => Err(format!("an integer cannot bind .{t}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_widths() {
        assert_eq!(
            scalar_bits(ScalarValue::Int(-1), ScalarType::S32),
            Ok(0xFFFF_FFFF)
        );
        assert_eq!(scalar_bits(ScalarValue::Int(5), ScalarType::U64), Ok(5));
        assert!(scalar_bits(ScalarValue::Int(1 << 40), ScalarType::U32).is_err());
        assert_eq!(
            scalar_bits(ScalarValue::float(0.5), ScalarType::F32),
            Ok(0x3F00_0000)
        );
        assert_eq!(
            scalar_bits(ScalarValue::Int(2), ScalarType::F32),
            Ok(0x4000_0000)
        );
        assert!(scalar_bits(ScalarValue::float(0.5), ScalarType::U32).is_err());
    }
}
