//! Semantic validation: turns a [`RawSpec`] into a [`CheckSpec`], or names
//! the first inconsistency with the span of the offending value.
//!
//! Checks that need the PTX (param counts, `.reqntid`) live in the corpus
//! crate and the CLI; everything decidable from the spec alone is here.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use crate::bindings::{self, FieldBinding, RawParam};
use crate::dtype::Role;
use crate::model::{
    CheckSpec, Ctas, Expect, FormulaRef, KernelRef, Kernels, Launch, ParamBinding, RunLimits,
    ScalarValue, Status, TensorSpec,
};
use crate::raw::{
    RawCtas, RawDims, RawExpect, RawKernel, RawLaunch, RawLimits, RawScalar, RawSpec,
};
use crate::verdict::{CaseKind, Verdict};

/// Most threads a CTA may have (every architecture since sm_20).
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
const MAX_BLOCK: [i64; 3] = [1024, 1024, 64];
const MAX_GRID: [i64; 3] = [(1 << 31) - 1, 65535, 65535];

/// A validation failure: a message naming the key, and where it is.
#[derive(Debug)]
pub(crate) struct Invalid {
    pub message: String,
    pub span: Option<Range<usize>>,
}

pub(crate) type R<T> = Result<T, Invalid>;

/// The span of a value; empty spans (values built from CLI flags) are none.
pub(crate) fn span_of<T>(s: &Spanned<T>) -> Option<Range<usize>> {
    let r = s.span();
    (!r.is_empty()).then_some(r)
}

pub(crate) fn fail<T, S>(at: &Spanned<S>, message: impl Into<String>) -> R<T> {
    Err(Invalid {
        message: message.into(),
        span: span_of(at),
    })
}

fn fail_nowhere<T>(message: impl Into<String>) -> R<T> {
    Err(Invalid {
        message: message.into(),
        span: None,
    })
}

fn show(d: &[u32; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

pub(crate) fn validate(raw: RawSpec, base_dir: &Path) -> R<CheckSpec> {
    let kernels = kernel_form(&raw)?;
    let no_launch = RawLaunch::default();
    let shared = raw.launch.as_ref().map_or(&no_launch, |l| l.get_ref());
    let launch = launch(shared)?;

    let tensors = tensors(&raw, base_dir)?;
    let scalars = scalars(&raw)?;
    for name in raw.scalars.keys() {
        if tensors.contains_key(name.get_ref()) {
            return fail(
                name,
                format!("`{name}` is declared both in [tensors] and in [scalars]"),
            );
        }
    }

    let tensor_maps = crate::tensor_map::tensor_maps(&raw.tensor_maps, &tensors)?;
    for name in raw.tensor_maps.keys() {
        if scalars.contains_key(name.get_ref()) {
            return fail(
                name,
                format!("`{name}` is declared both in [tensor_maps] and in [scalars]"),
            );
        }
    }
    let maps = &tensor_maps;
    let mut used = BTreeSet::new();
    let kernels = match kernels {
        Form::Pair(r, c) => Kernels::Pair {
            reference: kernel(
                "reference",
                r,
                shared,
                &tensors,
                &scalars,
                maps,
                base_dir,
                &mut used,
            )?,
            candidate: kernel(
                "candidate",
                c,
                shared,
                &tensors,
                &scalars,
                maps,
                base_dir,
                &mut used,
            )?,
        },
        Form::Single(k) => Kernels::Single(kernel(
            "kernel", k, shared, &tensors, &scalars, maps, base_dir, &mut used,
        )?),
        Form::Formula(r, c) => Kernels::Formula {
            formula: formula_ref(r, base_dir)?,
            candidate: kernel(
                "candidate",
                c,
                shared,
                &tensors,
                &scalars,
                maps,
                base_dir,
                &mut used,
            )?,
        },
    };
    // A tensor viewed through a bound tensor map is used (a TMA-only
    // kernel takes no pointer to it).
    for (name, m) in &tensor_maps {
        if used.contains(name) {
            used.insert(m.tensor.clone());
        }
    }
    for (name, what) in raw
        .tensors
        .keys()
        .map(|n| (n, "tensor"))
        .chain(raw.scalars.keys().map(|n| (n, "scalar")))
    {
        // A formula reference may name a scalar no kernel param takes
        // (`eps`, a size); compiling the formula reports unknown names.
        if what == "scalar" && matches!(kernels, Kernels::Formula { .. }) {
            continue;
        }
        if !used.contains(name.get_ref()) {
            return fail(
                name,
                format!(
                    "{what} `{name}` is declared but no kernel's `params` use it \
                     (remove it, or bind it to a param)"
                ),
            );
        }
    }

    for name in raw.tensor_maps.keys() {
        if !used.contains(name.get_ref()) {
            return fail(
                name,
                format!(
                    "tensor map `{name}` is declared but no kernel's `params` use it (bind it \
                     by name to a by-value CUtensorMap param, or give it the name of the \
                     tensor that holds it and bind that tensor to a pointer param)"
                ),
            );
        }
    }

    let expect = match &raw.expect {
        Some(e) => Some(expect(e.get_ref(), kernels.kind())?),
        None => None,
    };
    let functions = bindings::functions(&raw.functions)?;
    let globals = bindings::globals(&raw.globals, base_dir)?;
    for name in raw.globals.keys() {
        if tensors.contains_key(name.get_ref()) || scalars.contains_key(name.get_ref()) {
            return fail(
                name,
                format!(
                    "[globals] `{name}` has the name of a tensor or scalar; the names of \
                     witnesses would be ambiguous (rename the tensor or scalar)"
                ),
            );
        }
    }

    let limits = match &raw.limits {
        Some(l) => limits(l.get_ref())?,
        None => RunLimits::default(),
    };

    Ok(CheckSpec {
        note: raw.note.map(Spanned::into_inner),
        launch,
        kernels,
        tensors,
        scalars,
        expect,
        functions,
        globals,
        limits,
        tensor_maps,
        locations: Default::default(),
    })
}

/// `[limits]`: every bound is a positive count; a missing one keeps its
/// default.
fn limits(raw: &RawLimits) -> R<RunLimits> {
    let mut out = RunLimits::default();
    let positive = |key: &str, v: &Spanned<i64>| -> R<u64> {
        match u64::try_from(*v.get_ref()) {
            Ok(n) if n > 0 => Ok(n),
            _ => fail(
                v,
                format!(
                    "`limits.{key}` is {}; expected a positive count",
                    v.get_ref()
                ),
            ),
        }
    };
    if let Some(v) = &raw.max_steps {
        out.max_steps = positive("max_steps", v)?;
    }
    if let Some(v) = &raw.max_ctas {
        out.max_ctas = positive("max_ctas", v)?;
    }
    Ok(out)
}

enum Form<'a> {
    Pair(&'a Spanned<RawKernel>, &'a Spanned<RawKernel>),
    Single(&'a Spanned<RawKernel>),
    /// `[reference]` is a formula.
    Formula(&'a Spanned<RawKernel>, &'a Spanned<RawKernel>),
}

/// Whether a kernel table is a formula reference (`formula` or
/// `formula_file`).
fn is_formula(k: &Spanned<RawKernel>) -> bool {
    let k = k.get_ref();
    k.formula.is_some() || k.formula_file.is_some()
}

/// A spec is either `[reference]` + `[candidate]` or `[kernel]`.
fn kernel_form(raw: &RawSpec) -> R<Form<'_>> {
    match (&raw.reference, &raw.candidate, &raw.kernel) {
        (Some(r), Some(c), None) if is_formula(r) => Ok(Form::Formula(r, c)),
        (Some(r), Some(c), None) => Ok(Form::Pair(r, c)),
        (None, None, Some(k)) => Ok(Form::Single(k)),
        (_, _, Some(k)) => fail(
            k,
            "[kernel] (a single-kernel check) cannot be combined with \
             [reference]/[candidate] (a pair); use one form",
        ),
        (Some(r), None, None) => fail(
            r,
            "[reference] without [candidate]: a pair needs both \
             (a single-kernel check uses [kernel] instead)",
        ),
        (None, Some(c), None) => fail(
            c,
            "[candidate] without [reference]: a pair needs both \
             (a single-kernel check uses [kernel] instead)",
        ),
        (None, None, None) => fail_nowhere(
            "no kernels: give [reference] and [candidate] for a pair, \
             or [kernel] for a single-kernel check",
        ),
    }
}

/// Converts 1 to 3 written dimensions into a triple, padding with `pad`,
/// each at least `min`.
fn triple(key: &str, dims: &Spanned<RawDims>, min: i64, pad: u32) -> R<[u32; 3]> {
    let v = &dims.get_ref().0;
    if v.is_empty() || v.len() > 3 {
        return fail(
            dims,
            format!(
                "`{key}` has {} dimensions; give 1 to 3 (missing ones are {pad})",
                v.len()
            ),
        );
    }
    let mut out = [pad; 3];
    for (i, &d) in v.iter().enumerate() {
        if d < min {
            return fail(
                dims,
                format!("`{key}` dimension {i} is {d}; every dimension must be ≥ {min}"),
            );
        }
        out[i] = u32::try_from(d).map_err(|_| Invalid {
            message: format!("`{key}` dimension {i} is {d}, too large"),
            span: span_of(dims),
        })?;
    }
    Ok(out)
}

/// The shared `[launch]` table.
fn launch(raw: &RawLaunch) -> R<Launch> {
    resolve_launch(raw, None, "")
}

/// A kernel's launch: the keys of its own `[<table>.launch]` over those of
/// the shared `[launch]`. Every key is checked where it is written (errors
/// name `reference.launch.block` or `launch.block`); a CTA list is checked
/// against the grid this kernel is launched with.
fn resolve_launch(shared: &RawLaunch, own: Option<&RawLaunch>, table: &str) -> R<Launch> {
    fn pick<'a, T>(
        own: Option<&'a RawLaunch>,
        shared: &'a RawLaunch,
        table: &str,
        key: &str,
        get: impl Fn(&'a RawLaunch) -> Option<&'a T>,
    ) -> Option<(&'a T, String)> {
        if let Some(v) = own.and_then(&get) {
            return Some((v, format!("{table}.launch.{key}")));
        }
        get(shared).map(|v| (v, format!("launch.{key}")))
    }
    let block = match pick(own, shared, table, "block", |l| l.block.as_ref()) {
        Some((b, key)) => Some(block(&key, b)?),
        None => None,
    };
    let grid = match pick(own, shared, table, "grid", |l| l.grid.as_ref()) {
        Some((g, key)) => grid(&key, g)?,
        None => [1, 1, 1],
    };
    let ctas = match pick(own, shared, table, "ctas", |l| l.ctas.as_ref()) {
        None => Ctas::First,
        Some((c, key)) => ctas(&key, c, &grid, table)?,
    };
    let dynamic_shared = match pick(own, shared, table, "dynamic_shared", |l| {
        l.dynamic_shared.as_ref()
    }) {
        None => 0,
        Some((d, key)) => u32::try_from(*d.get_ref()).map_err(|_| Invalid {
            message: format!(
                "`{key}` is {}; expected a byte count from 0 to {}",
                d.get_ref(),
                u32::MAX
            ),
            span: span_of(d),
        })?,
    };
    let cluster = match pick(own, shared, table, "cluster", |l| l.cluster.as_ref()) {
        None => None,
        Some((c, key)) => Some(cluster(&key, c, &grid)?),
    };
    let auto_scan_limit = match pick(own, shared, table, "auto_scan_limit", |l| {
        l.auto_scan_limit.as_ref()
    }) {
        None => None,
        Some((v, key)) => Some(
            u64::try_from(*v.get_ref())
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| Invalid {
                    message: format!(
                        "`{key}` is {}; expected a positive number of CTAs",
                        v.get_ref()
                    ),
                    span: span_of(v),
                })?,
        ),
    };
    Ok(Launch {
        block,
        grid,
        ctas,
        dynamic_shared,
        cluster,
        auto_scan_limit,
    })
}

/// Most CTAs in one cluster: 8 is the portable size, 16 the largest any
/// GPU allows (sm_90 with the non-portable cluster size attribute).
const MAX_CLUSTER_CTAS: u64 = 16;

/// `launch.cluster`: CTAs per cluster, each extent dividing the grid's
/// (the CUDA launch rejects a grid that is not a whole number of
/// clusters).
fn cluster(key: &str, c: &Spanned<RawDims>, grid: &[u32; 3]) -> R<[u32; 3]> {
    let cluster = triple(key, c, 1, 1)?;
    let ctas: u64 = cluster.iter().map(|&d| u64::from(d)).product();
    if ctas > MAX_CLUSTER_CTAS {
        return fail(
            c,
            format!(
                "`{key}` {} has {ctas} CTAs; a cluster has at most {MAX_CLUSTER_CTAS}",
                show(&cluster)
            ),
        );
    }
    if let Some(i) = (0..3).find(|&i| !grid[i].is_multiple_of(cluster[i])) {
        return fail(
            c,
            format!(
                "`{key}` {}: dimension {i} does not divide the grid {} (a grid is a whole number of clusters)",
                show(&cluster),
                show(grid)
            ),
        );
    }
    Ok(cluster)
}

fn block(key: &str, b: &Spanned<RawDims>) -> R<[u32; 3]> {
    let block = triple(key, b, 1, 1)?;
    for (i, (&d, &max)) in block.iter().zip(&MAX_BLOCK).enumerate() {
        if i64::from(d) > max {
            return fail(
                b,
                format!(
                    "`{key}` {}: dimension {i} exceeds the hardware limit {max}",
                    show(&block)
                ),
            );
        }
    }
    let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
    if threads > MAX_THREADS_PER_BLOCK {
        return fail(
            b,
            format!(
                "`{key}` {} has {threads} threads; a CTA has at most {MAX_THREADS_PER_BLOCK}",
                show(&block)
            ),
        );
    }
    Ok(block)
}

fn grid(key: &str, g: &Spanned<RawDims>) -> R<[u32; 3]> {
    let grid = triple(key, g, 1, 1)?;
    for (i, (&d, &max)) in grid.iter().zip(&MAX_GRID).enumerate() {
        if i64::from(d) > max {
            return fail(
                g,
                format!(
                    "`{key}` {}: dimension {i} exceeds the hardware limit {max}",
                    show(&grid)
                ),
            );
        }
    }
    Ok(grid)
}

fn ctas(key: &str, c: &Spanned<RawCtas>, grid: &[u32; 3], table: &str) -> R<Ctas> {
    match c.get_ref() {
        RawCtas::Word(w) if w == "first" => Ok(Ctas::First),
        RawCtas::Word(w) if w == "all" => Ok(Ctas::All),
        RawCtas::Word(w) if w == "auto" => Ok(Ctas::Auto),
        RawCtas::Word(w) => fail(
            c,
            format!(
                "`{key}` is \"{w}\"; expected \"first\", \"all\", \"auto\" or a list \
                 of CTA ids like [[0, 0, 0], [1, 0, 0]]"
            ),
        ),
        RawCtas::List(list) => ctas_list(key, c, list, grid, table),
    }
}

fn ctas_list<S>(
    key: &str,
    at: &Spanned<S>,
    list: &[Spanned<RawDims>],
    grid: &[u32; 3],
    table: &str,
) -> R<Ctas> {
    if list.is_empty() {
        return fail(
            at,
            format!(
                "`{key}` is an empty list; give at least one CTA id, or \"first\" / \"all\" / \
                 \"auto\""
            ),
        );
    }
    // A shared list checked against one kernel's own grid says whose.
    let whose = if table.is_empty() || key.starts_with(table) {
        String::new()
    } else {
        format!(" of the {table} kernel")
    };
    let mut seen = BTreeSet::new();
    let mut ids = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let id = triple(&format!("{key}[{i}]"), item, 0, 0)?;
        if id.iter().zip(grid).any(|(c, g)| c >= g) {
            return fail(
                item,
                format!(
                    "`{key}[{i}]` {} is outside the grid {}{whose} (ids count from 0)",
                    show(&id),
                    show(grid)
                ),
            );
        }
        if !seen.insert(id) {
            return fail(item, format!("`{key}` lists {} twice", show(&id)));
        }
        ids.push(id);
    }
    Ok(Ctas::List(ids))
}

/// Tensor and scalar names appear in `params` lists and in `--tensor
/// name:...` flags, so they are restricted to identifier-like words.
fn check_name(what: &str, name: &Spanned<String>) -> R<()> {
    let n = name.get_ref();
    if n == "_" {
        return fail(
            name,
            format!("`_` marks an unused param and cannot name a {what}"),
        );
    }
    if n.is_empty()
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return fail(
            name,
            format!(
                "{what} name `{n}`: use letters, digits, `_`, `.` and `-` only \
                 (names appear in `params` lists and CLI flags)"
            ),
        );
    }
    Ok(())
}

fn tensors(raw: &RawSpec, base_dir: &Path) -> R<BTreeMap<String, TensorSpec>> {
    let mut out = BTreeMap::new();
    for (name, t) in &raw.tensors {
        check_name("tensor", name)?;
        let t = t.get_ref();
        let dims = t.shape.get_ref();
        if dims.is_empty() {
            return fail(
                &t.shape,
                format!(
                    "tensor `{name}`: `shape` is empty; a single element is shape = [1] \
                     (a by-value param belongs in [scalars])"
                ),
            );
        }
        let mut shape = Vec::with_capacity(dims.len());
        for (i, d) in dims.iter().enumerate() {
            match u64::try_from(*d.get_ref()) {
                Ok(v) if v > 0 => shape.push(v),
                _ => {
                    return fail(
                        d,
                        format!(
                            "tensor `{name}`: shape[{i}] is {}; every extent must be ≥ 1",
                            d.get_ref()
                        ),
                    );
                }
            }
        }
        let role = *t.role.get_ref();
        let compare = match &t.compare {
            Some(c) => Some(compare_region(name.get_ref(), role, &shape, c)?),
            None => None,
        };
        let values = match &t.values {
            None => None,
            Some(v) if role == Role::Output => {
                return fail(
                    v,
                    format!(
                        "tensor `{name}`: `values` on an output tensor; its elements start \
                         unwritten (give values to an input, inout or scratch tensor)"
                    ),
                );
            }
            Some(v) => {
                let n: u64 = shape.iter().product();
                Some(bindings::values(
                    &format!("tensor `{name}`"),
                    Some(*t.dtype.get_ref()),
                    Some(n),
                    v,
                    base_dir,
                )?)
            }
        };
        out.insert(
            name.get_ref().clone(),
            TensorSpec {
                role,
                dtype: *t.dtype.get_ref(),
                shape,
                compare,
                values,
            },
        );
    }
    Ok(out)
}

/// `compare = [[lo, hi], ...]`: one half-open range per dimension, each
/// non-empty and inside the extent; only for tensors whose final contents
/// are compared.
fn compare_region(
    name: &str,
    role: Role,
    shape: &[u64],
    raw: &Spanned<Vec<Spanned<Vec<i64>>>>,
) -> R<Vec<[u64; 2]>> {
    if !role.is_written() {
        return fail(
            raw,
            format!(
                "tensor `{name}`: `compare` selects the compared elements of an output or \
                 inout tensor; `{name}` has role {role} (nothing of it is compared)"
            ),
        );
    }
    let ranges = raw.get_ref();
    if ranges.len() != shape.len() {
        return fail(
            raw,
            format!(
                "tensor `{name}`: `compare` has {} ranges but the shape has {} dimensions; give \
                 one [lo, hi] per dimension, e.g. compare = [[0, 64], [0, 64]]",
                ranges.len(),
                shape.len()
            ),
        );
    }
    let mut out = Vec::with_capacity(ranges.len());
    for (i, (r, &extent)) in ranges.iter().zip(shape).enumerate() {
        let (lo, hi) = match r.get_ref().as_slice() {
            &[lo, hi] => (lo, hi),
            other => {
                return fail(
                    r,
                    format!(
                        "tensor `{name}`: compare[{i}] has {} numbers; give [lo, hi] \
                         (half-open: lo included, hi excluded)",
                        other.len()
                    ),
                );
            }
        };
        let ok = 0 <= lo && lo < hi && u64::try_from(hi).is_ok_and(|h| h <= extent);
        if !ok {
            return fail(
                r,
                format!(
                    "tensor `{name}`: compare[{i}] is [{lo}, {hi}]; need 0 ≤ lo < hi ≤ {extent} \
                     (the extent of dimension {i}; ranges are half-open)"
                ),
            );
        }
        out.push([lo as u64, hi as u64]);
    }
    Ok(out)
}

fn scalars(raw: &RawSpec) -> R<BTreeMap<String, ScalarValue>> {
    let mut out = BTreeMap::new();
    for (name, v) in &raw.scalars {
        check_name("scalar", name)?;
        let value = match *v.get_ref() {
            RawScalar::Int(i) => ScalarValue::Int(i),
            RawScalar::Float(f) => ScalarValue::float(f),
            RawScalar::Symbolic(dtype) if dtype.is_float() => ScalarValue::Symbolic { dtype },
            RawScalar::Symbolic(dtype) => {
                return fail(
                    v,
                    format!(
                        "scalar `{name}` ({dtype}) has no value: integer scalars stay concrete \
                         (they drive control flow and addresses), so give one, e.g. \
                         {name} = 128; only float scalars (f16, bf16, f32, f64) may be symbolic"
                    ),
                );
            }
        };
        out.insert(name.get_ref().clone(), value);
    }
    Ok(out)
}

/// `[reference] formula = "…"` / `formula_file = "…"`: exactly one of
/// the two, and no kernel keys beside it. The formula itself is compiled
/// when the check runs (it needs the kernel's tensor table).
fn formula_ref(raw: &Spanned<RawKernel>, base_dir: &Path) -> R<FormulaRef> {
    let k = raw.get_ref();
    let stray = [
        ("ptx", k.ptx.as_ref().map(span_of)),
        ("entry", k.entry.as_ref().map(span_of)),
        ("params", k.params.as_ref().map(span_of)),
        ("launch", k.launch.as_ref().map(span_of)),
    ];
    if let Some((key, span)) = stray.into_iter().find_map(|(k, s)| s.map(|s| (k, s))) {
        return Err(Invalid {
            message: format!(
                "`reference.{key}` goes with a kernel reference; a formula reference has only \
                 `formula` or `formula_file` (the candidate's launch is the spec's)"
            ),
            span,
        });
    }
    match (&k.formula, &k.formula_file) {
        (Some(_), Some(f)) => fail(
            f,
            "give `reference.formula` or `reference.formula_file`, not both",
        ),
        (Some(t), None) if t.get_ref().trim().is_empty() => fail(
            t,
            "`reference.formula` is empty; write the output's formula",
        ),
        (Some(t), None) => Ok(FormulaRef {
            text: t.get_ref().clone(),
            file: None,
        }),
        (None, Some(f)) => {
            let path = base_dir.join(f.get_ref());
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok(FormulaRef {
                    text,
                    file: Some(path),
                }),
                Err(e) => fail(
                    f,
                    format!(
                        "cannot read `reference.formula_file` {}: {e}",
                        path.display()
                    ),
                ),
            }
        }
        (None, None) => fail(raw, "`[reference]` has neither a kernel nor a formula"),
    }
}

#[allow(clippy::too_many_arguments)]
fn kernel(
    table: &str,
    raw: &Spanned<RawKernel>,
    shared: &RawLaunch,
    tensors: &BTreeMap<String, TensorSpec>,
    scalars: &BTreeMap<String, ScalarValue>,
    maps: &BTreeMap<String, crate::tensor_map::TensorMapSpec>,
    base_dir: &Path,
    used: &mut BTreeSet<String>,
) -> R<KernelRef> {
    let k = raw.get_ref();
    if let Some(f) = k.formula.as_ref().or(k.formula_file.as_ref()) {
        return fail(
            f,
            format!(
                "`{table}` is a kernel; only `[reference]` may be a formula (`formula` / \
                 `formula_file`)"
            ),
        );
    }
    let Some(ptx) = &k.ptx else {
        return fail(
            raw,
            format!("`[{table}]` has no `ptx`; name the PTX file (`ptx = \"kernel.ptx\"`)"),
        );
    };
    let Some(raw_params) = &k.params else {
        return fail(
            raw,
            format!(
                "`[{table}]` has no `params`; bind each kernel param in order \
                 (`params = [\"x\", \"y\", \"n\"]`)"
            ),
        );
    };
    if ptx.get_ref().trim().is_empty() {
        return fail(ptx, format!("`{table}.ptx` is empty; name the PTX file"));
    }
    if let Some(e) = &k.entry
        && e.get_ref().trim().is_empty()
    {
        return fail(
            e,
            format!("`{table}.entry` is empty; leave it out when the file has exactly one .entry"),
        );
    }
    let mut params = Vec::with_capacity(raw_params.get_ref().len());
    let mut tensor_at: BTreeMap<String, usize> = BTreeMap::new();
    for (i, p) in raw_params.get_ref().iter().enumerate() {
        let name = match p.get_ref() {
            RawParam::Name(n) => n.as_str(),
            RawParam::Struct(st) => {
                let kind_of = |n: &str| {
                    if tensors.contains_key(n) {
                        Some(true)
                    } else if scalars.contains_key(n) {
                        Some(false)
                    } else {
                        None
                    }
                };
                let fields =
                    bindings::struct_fields(&format!("{table}.params[{i}]"), &st.fields, &kind_of)?;
                for (f, raw_f) in fields.iter().zip(st.fields.get_ref()) {
                    if let FieldBinding::Tensor(n) = &f.bind
                        && let Some(first) = tensor_at.insert(n.clone(), i)
                    {
                        return fail(
                            raw_f,
                            format!(
                                "`{table}.params[{i}]`: tensor `{n}` is also bound at param \
                                 {first}; a tensor is bound at most once per kernel"
                            ),
                        );
                    }
                    used.insert(f.bind.name().to_owned());
                }
                params.push(ParamBinding::Struct(fields));
                continue;
            }
        };
        let binding = if name == "_" {
            ParamBinding::Unused
        } else if tensors.contains_key(name) {
            if let Some(first) = tensor_at.insert(name.to_owned(), i) {
                return fail(
                    p,
                    format!(
                        "`{table}.params`: tensor `{name}` is bound to params {first} and {i}; \
                         distinct pointer params are assumed not to alias, so a tensor is \
                         bound at most once per kernel"
                    ),
                );
            }
            ParamBinding::Tensor(name.to_owned())
        } else if scalars.contains_key(name) {
            ParamBinding::Scalar(name.to_owned())
        } else if maps.contains_key(name) {
            ParamBinding::TensorMap(name.to_owned())
        } else {
            let declared: Vec<&str> = tensors
                .keys()
                .chain(scalars.keys())
                .chain(maps.keys())
                .map(String::as_str)
                .collect();
            let declared = if declared.is_empty() {
                "none".to_owned()
            } else {
                declared.join(", ")
            };
            return fail(
                p,
                format!(
                    "`{table}.params[{i}]` is `{name}`, which is not a declared tensor, \
                     scalar or tensor map (declared: {declared}; `_` marks an unused param)"
                ),
            );
        };
        if binding != ParamBinding::Unused {
            used.insert(name.to_owned());
        }
        params.push(binding);
    }
    let launch = resolve_launch(shared, k.launch.as_ref().map(Spanned::get_ref), table)?;
    Ok(KernelRef {
        ptx: base_dir.join(ptx.get_ref()),
        entry: k.entry.as_ref().map(|e| e.get_ref().clone()),
        params,
        launch,
    })
}

fn expect(raw: &RawExpect, kind: CaseKind) -> R<Expect> {
    let verdict = *raw.verdict.get_ref();
    if !verdict.valid_for(kind) {
        return fail(
            &raw.verdict,
            format!(
                "`expect.verdict = \"{verdict}\"` does not apply to {kind}; it can expect: {}",
                Verdict::valid_words(kind).join(", ")
            ),
        );
    }
    if let Some(r) = &raw.reason {
        if verdict != Verdict::Unsupported {
            return fail(
                r,
                format!(
                    "`expect.reason` goes with verdict = \"unsupported\" only \
                     (this case expects \"{verdict}\"); put other explanations in `note`"
                ),
            );
        }
        if r.get_ref().trim().is_empty() {
            return fail(r, "`expect.reason` is empty");
        }
    }
    let status = raw.status.as_ref().map_or(Status::Active, |s| *s.get_ref());
    let pending = match (&raw.pending, status) {
        (Some(p), Status::Pending) if p.get_ref().trim().is_empty() => {
            return fail(
                p,
                "`expect.pending` is empty; say which capability is missing",
            );
        }
        (Some(p), Status::Pending) => Some(p.get_ref().clone()),
        (None, Status::Active) => None,
        (Some(p), Status::Active) => {
            return fail(
                p,
                "`expect.pending` is given but `expect.status` is not \"pending\"; \
                 add status = \"pending\" or remove `pending`",
            );
        }
        (None, Status::Pending) => {
            let at = raw.status.as_ref().map(span_of).unwrap_or_default();
            return Err(Invalid {
                message: "`expect.status = \"pending\"` needs `expect.pending`: \
                          say which capability is missing"
                    .to_owned(),
                span: at,
            });
        }
    };
    Ok(Expect {
        verdict,
        reason: raw.reason.as_ref().map(|r| r.get_ref().clone()),
        status,
        pending,
        heavy: raw.heavy.as_ref().is_some_and(|h| *h.get_ref()),
    })
}
