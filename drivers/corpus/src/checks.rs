//! The per-case consistency rules, as plain functions over a validated
//! spec and the PTX summaries. Each returns messages naming the spec key
//! and the PTX declaration involved, so a corpus author can fix the case
//! without reading this code.

use ptxeq_spec::{CheckSpec, KernelRef, MAX_THREADS_PER_BLOCK, ParamBinding, ScalarValue};

use crate::ptx::{FunctionInfo, PtxSummary};

/// Largest tensor the corpus accepts: 2 GiB, beyond any kernel the checker
/// could simulate, and the limit of 32-bit signed byte offsets.
pub const MAX_TENSOR_BYTES: u64 = 1 << 31;

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// The entry `k` refers to: the named `.entry`, or the only one.
pub fn find_entry<'a>(
    table: &str,
    k: &KernelRef,
    ptx: &'a PtxSummary,
) -> Result<&'a FunctionInfo, String> {
    let entries: Vec<&str> = ptx.entries().map(|f| f.name.as_str()).collect();
    match &k.entry {
        Some(name) => {
            if let Some(f) = ptx.entries().find(|f| &f.name == name) {
                return Ok(f);
            }
            if ptx.functions.iter().any(|f| &f.name == name) {
                return Err(format!(
                    "`{table}.entry`: `{name}` is a .func, not an .entry; entries: {}",
                    list(&entries)
                ));
            }
            Err(format!(
                "`{table}.entry`: no .entry named `{name}`; entries: {}",
                list(&entries)
            ))
        }
        None => match entries.as_slice() {
            [_] => ptx
                .entries()
                .next()
                .ok_or_else(|| "internal: entry vanished".to_owned()),
            [] => Err(format!("`{table}`: the PTX file has no .entry")),
            many => Err(format!(
                "`{table}`: the PTX file has {} entries ({}); name one with `entry`",
                many.len(),
                list(many)
            )),
        },
    }
}

/// Bit width and kind letter of a PTX scalar type (`u32` → ('u', 32)).
fn type_width(ty: &str) -> Option<(char, u32)> {
    let mut chars = ty.chars();
    let kind = chars.next()?;
    let width: u32 = chars.as_str().parse().ok()?;
    matches!(kind, 'u' | 's' | 'b' | 'f')
        .then_some((kind, width))
        .filter(|&(_, w)| matches!(w, 8 | 16 | 32 | 64))
}

/// Whether a scalar value can be passed in a param of type `ty`: integers
/// need an integer or bit type wide enough for the value (an unsigned type
/// needs a non-negative value); floats need a float or bit type of 16 bits
/// or more whose range holds the value. An integer for a float param is
/// rejected rather than guessed at: write `1.0`, not `1`.
pub fn scalar_fits(value: &ScalarValue, ty: &str) -> Result<(), String> {
    let Some((kind, width)) = type_width(ty) else {
        return Err(format!("a scalar cannot be passed in a .{ty} param"));
    };
    match *value {
        ScalarValue::Int(v) => {
            let v = i128::from(v);
            let (lo, hi) = match kind {
                'u' => (0, (1i128 << width) - 1),
                's' => (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1),
                'b' => (-(1i128 << (width - 1)), (1i128 << width) - 1),
                _ => {
                    return Err(format!(
                        "the value {v} is an integer but the param is .{ty}; \
                         write it as a float (e.g. {v}.0)"
                    ));
                }
            };
            if v < lo || v > hi {
                return Err(format!(
                    "the value {v} does not fit a .{ty} param ({lo} to {hi})"
                ));
            }
            Ok(())
        }
        ScalarValue::Float(f) => {
            let f = f.get();
            if !matches!(kind, 'f' | 'b') || width < 16 {
                return Err(format!(
                    "the value {f:?} is a float but the param is .{ty}; \
                     an integer param needs an integer value"
                ));
            }
            let max = match width {
                16 => 65504.0,
                32 => f64::from(f32::MAX),
                _ => f64::MAX,
            };
            if f.is_finite() && f.abs() > max {
                return Err(format!("the value {f:?} overflows a .{ty} param"));
            }
            Ok(())
        }
        // A symbolic float: a float or bit param of its width.
        ScalarValue::Symbolic { dtype } => {
            let bits = dtype.size_bytes() * 8;
            if matches!(kind, 'f' | 'b') && u64::from(width) == bits {
                Ok(())
            } else {
                Err(format!(
                    "a symbolic {dtype} scalar needs a .{dtype} or .b{bits} param, not .{ty}"
                ))
            }
        }
    }
}

fn describe_params(f: &FunctionInfo) -> String {
    let ps: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("{}: .{}", p.name, p.ty))
        .collect();
    ps.join(", ")
}

/// `k.params` against the entry's declared params: same count, tensors on
/// 64-bit pointer params, scalars on params that hold their value. Each
/// problem comes with the spec key it is about (`reference.params`,
/// `reference.params.2`: keys of [`ptxeq_spec::SpecLocations`]), so the
/// report can point at its line.
pub fn check_params(
    table: &str,
    k: &KernelRef,
    f: &FunctionInfo,
    spec: &CheckSpec,
) -> Vec<(String, String)> {
    if k.params.len() != f.params.len() {
        return vec![(
            format!("{table}.params"),
            format!(
                "`{table}.params` has {} names but entry `{}` has {} params ({})",
                k.params.len(),
                f.name,
                f.params.len(),
                describe_params(f)
            ),
        )];
    }
    let mut keyed = Vec::new();
    for (i, (binding, p)) in k.params.iter().zip(&f.params).enumerate() {
        let mut out = Vec::new();
        let here = format!("`{table}.params[{i}]` (`{}`)", binding.name());
        let decl = format!("param `{}` (.{})", p.name, p.ty);
        match binding {
            ParamBinding::Unused => {}
            ParamBinding::Struct(_) | ParamBinding::TensorMap(_) if p.is_array => {}
            ParamBinding::TensorMap(_) => out.push(format!(
                "{here} is a tensor map, but {decl} is not a by-value CUtensorMap \
                 (.param .align 64 .b8 name[128])"
            )),
            ParamBinding::Struct(_) => out.push(format!(
                "{here} is a struct, but {decl} is not a by-value aggregate (.b8 name[N])"
            )),
            _ if p.is_array => out.push(format!(
                "{here} binds {decl}, a by-value array; bind it to `_` or field by field \
                 ({{ struct = [...] }})"
            )),
            ParamBinding::Tensor(_) => {
                if !matches!(p.ty.as_str(), "u64" | "b64" | "s64") {
                    out.push(format!(
                        "{here} is a tensor, but {decl} is not a 64-bit pointer \
                         (.u64/.b64/.s64)"
                    ));
                }
            }
            ParamBinding::Scalar(name) => {
                if p.is_ptr {
                    out.push(format!("{here} is a scalar, but {decl} is a .ptr"));
                } else if let Some(value) = spec.scalars.get(name)
                    && let Err(why) = scalar_fits(value, &p.ty)
                {
                    out.push(format!("{here} binds {decl}: {why}"));
                }
            }
        }
        keyed.extend(out.into_iter().map(|m| (format!("{table}.params.{i}"), m)));
    }
    keyed
}

/// 1 to 3 extents as a triple, padded with 1.
fn triple(v: &[u64]) -> Option<[u32; 3]> {
    if v.is_empty() || v.len() > 3 {
        return None;
    }
    let mut out = [1u32; 3];
    for (o, &d) in out.iter_mut().zip(v) {
        *o = u32::try_from(d).ok().filter(|&d| d >= 1)?;
    }
    Some(out)
}

fn show(d: &[u32; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

fn threads(d: &[u32; 3]) -> u64 {
    d.iter().map(|&x| u64::from(x)).product()
}

/// A kernel's block directives, parsed.
struct Declared<'a> {
    table: &'a str,
    f: &'a FunctionInfo,
    req: Option<[u32; 3]>,
    max: Option<[u32; 3]>,
}

/// The block size a check uses, and what is inconsistent about it:
/// `launch.block` if given, else the first kernel's `.reqntid`, else its
/// `.maxntid`. Every `.reqntid` must equal the block, and the block may
/// not exceed any `.maxntid`.
pub fn resolve_block(
    spec_block: Option<[u32; 3]>,
    kernels: &[(&str, &FunctionInfo)],
) -> (Option<[u32; 3]>, Vec<String>) {
    let mut problems = Vec::new();
    let mut parse = |table: &str, f: &FunctionInfo, what: &str, v: &Option<Vec<u64>>| {
        let v = v.as_ref()?;
        let t = triple(v);
        if t.is_none() {
            problems.push(format!(
                "`{table}`: entry `{}` has a malformed .{what} {v:?}",
                f.name
            ));
        }
        t
    };
    let declared: Vec<Declared<'_>> = kernels
        .iter()
        .map(|&(table, f)| Declared {
            table,
            f,
            req: parse(table, f, "reqntid", &f.reqntid),
            max: parse(table, f, "maxntid", &f.maxntid),
        })
        .collect();

    let block = spec_block
        .or_else(|| declared.iter().find_map(|d| d.req))
        .or_else(|| declared.iter().find_map(|d| d.max));
    let Some(block) = block else {
        problems.push(
            "no block size: set `launch.block`, or the entry needs .reqntid or .maxntid".to_owned(),
        );
        return (None, problems);
    };
    let source = if spec_block.is_some() {
        "`launch.block`"
    } else {
        "the block size (from the first kernel's directives)"
    };
    if threads(&block) > MAX_THREADS_PER_BLOCK {
        problems.push(format!(
            "{source} {} has {} threads; a CTA has at most {MAX_THREADS_PER_BLOCK}",
            show(&block),
            threads(&block)
        ));
    }
    for Declared { table, f, req, max } in declared {
        if let Some(req) = req
            && req != block
        {
            problems.push(format!(
                "`{table}`: entry `{}` declares .reqntid {} but {source} is {}",
                f.name,
                show(&req),
                show(&block)
            ));
        }
        if let Some(max) = max
            && threads(&block) > threads(&max)
        {
            problems.push(format!(
                "`{table}`: entry `{}` declares .maxntid {} ({} threads) but {source} {} \
                 has {}",
                f.name,
                show(&max),
                threads(&max),
                show(&block),
                threads(&block)
            ));
        }
    }
    (Some(block), problems)
}

/// Tensor sizes within limits, and something to compare; each problem with
/// the spec key it is about (`tensors.x`), when it is about one.
pub fn check_tensors(spec: &CheckSpec) -> Vec<(Option<String>, String)> {
    let mut out = Vec::new();
    for (name, t) in &spec.tensors {
        let key = Some(format!("tensors.{name}"));
        match t.byte_size() {
            Some(b) if b > 0 && b <= MAX_TENSOR_BYTES => {}
            Some(b) => out.push((
                key,
                format!("tensor `{name}` is {b} bytes; the corpus allows 1 to 2^31 bytes"),
            )),
            None => out.push((
                key,
                format!("tensor `{name}`: the byte size overflows 64 bits"),
            )),
        }
    }
    if !spec.tensors.values().any(|t| t.role.is_written()) {
        out.push((
            None,
            "no output tensor: at least one tensor needs role = \"output\" or \"inout\"".to_owned(),
        ));
    }
    out
}

/// The fields the corpus requires beyond a valid spec: a one-line note and
/// an expected verdict.
pub fn check_corpus_fields(spec: &CheckSpec) -> Vec<String> {
    let mut out = Vec::new();
    match spec.note.as_deref().map(str::trim) {
        None | Some("") => out.push(
            "no `note`: say in one line what the case exercises and why the verdict is right"
                .to_owned(),
        ),
        Some(n) if n.contains('\n') => {
            out.push("`note` spans several lines; keep it to one line".to_owned())
        }
        Some(_) => {}
    }
    if spec.expect.is_none() {
        out.push("no [expect] section: a corpus case needs an expected `verdict`".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_widths() {
        let int = ScalarValue::Int;
        assert!(scalar_fits(&int(255), "u8").is_ok());
        assert!(scalar_fits(&int(256), "u8").is_err());
        assert!(scalar_fits(&int(-1), "u32").is_err());
        assert!(scalar_fits(&int(-1), "s32").is_ok());
        assert!(scalar_fits(&int(-1), "b32").is_ok());
        assert!(scalar_fits(&int(u32::MAX.into()), "b32").is_ok());
        assert!(scalar_fits(&int(i64::MIN), "s64").is_ok());
        assert!(scalar_fits(&int(1), "f32").unwrap_err().contains("1.0"));
        let f = ScalarValue::float;
        assert!(scalar_fits(&f(0.5), "f32").is_ok());
        assert!(scalar_fits(&f(0.5), "b32").is_ok());
        assert!(scalar_fits(&f(1e300), "f32").is_err());
        assert!(scalar_fits(&f(1e300), "f64").is_ok());
        assert!(scalar_fits(&f(1e5), "f16").is_err());
        assert!(scalar_fits(&f(f64::INFINITY), "f32").is_ok());
        assert!(scalar_fits(&f(0.5), "u32").is_err());
        assert!(scalar_fits(&f(0.5), "b8").is_err());
        assert!(scalar_fits(&int(1), "pred").is_err());
        assert!(scalar_fits(&int(1), "").is_err());
    }

    #[test]
    fn block_resolution() {
        let f = |req: Option<Vec<u64>>, max: Option<Vec<u64>>| FunctionInfo {
            name: "k".into(),
            is_entry: true,
            params: vec![],
            reqntid: req,
            maxntid: max,
        };
        let a = f(Some(vec![128]), None);
        let b = f(Some(vec![256]), None);
        let (block, p) = resolve_block(None, &[("reference", &a), ("candidate", &b)]);
        assert_eq!(block, Some([128, 1, 1]));
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("`candidate`"), "{p:?}");
        let m = f(None, Some(vec![16, 16]));
        assert_eq!(
            resolve_block(None, &[("kernel", &m)]),
            (Some([16, 16, 1]), vec![])
        );
        let bad = f(Some(vec![0]), None);
        let (_, p) = resolve_block(Some([1, 1, 1]), &[("kernel", &bad)]);
        assert!(p[0].contains("malformed .reqntid"), "{p:?}");
    }
}
