//! Tensor-core matrix instructions and asynchronous copies.

use super::{FamilyResult, Mods, check_ops};
use crate::instr::{
    AtomOp, BulkCopy, BulkReduce, Completion, Frag, Instr, Layout, MatrixMods, MatrixNum, MmaMods,
    Shape, WgmmaOp, WmmaOp,
};
use crate::operand::Operand;
use crate::types::{BoolOp, CacheHint, CacheOp, Rounding, ScalarType, StateSpace};

fn sync_aligned(m: &mut Mods<'_>) -> Result<(), String> {
    m.require("sync")?;
    m.require("aligned")
}

fn shared_space(s: &str) -> Option<StateSpace> {
    StateSpace::parse(s).filter(|s| *s == StateSpace::Shared)
}

/// `m8n8` (no `k`) as used by ldmatrix/stmatrix/movmatrix.
fn mn_shape(s: &str) -> Option<(u16, u16)> {
    let rest = s.strip_prefix('m')?;
    let (m, n) = rest.split_once('n')?;
    let num = |t: &str| -> Option<u16> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    Some((num(m)?, num(n)?))
}

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> FamilyResult {
    let instr = match opcode {
        "mma" => {
            let sparse = m.flag("sp");
            sync_aligned(m)?;
            let shape = m.take_req("shape", Shape::parse)?;
            let a_layout = m.take_req("A layout", Layout::parse)?;
            let b_layout = m.take_req("B layout", Layout::parse)?;
            let satfinite = m.flag("satfinite");
            let b1_op = m.take(|s| BoolOp::parse(s).filter(|b| *b != BoolOp::Or));
            if b1_op.is_some() {
                m.require("popc")?;
            }
            let tys = m.n_types(4)?;
            if sparse {
                check_ops(&ops, &["****vv"])?;
            } else {
                check_ops(&ops, &["****"])?;
            }
            Instr::Mma(MmaMods {
                shape,
                a_layout,
                b_layout,
                d_ty: tys[0],
                a_ty: tys[1],
                b_ty: tys[2],
                c_ty: tys[3],
                satfinite,
                b1_op,
                sparse,
            })
        }
        "wmma" => wmma(m, &ops)?,
        "ldmatrix" | "stmatrix" => {
            sync_aligned(m)?;
            let shape = m.take_req("shape", mn_shape)?;
            let num = m.take_req("`.x1`/`.x2`/`.x4`", MatrixNum::parse)?;
            let trans = m.flag("trans");
            let space = m.take(shared_space).unwrap_or(StateSpace::Shared);
            let ty = m.one_type(|t| matches!(t, ScalarType::B16 | ScalarType::B8))?;
            let mods = MatrixMods {
                shape,
                num,
                trans,
                space,
                ty,
            };
            let regs = if opcode == "ldmatrix" {
                check_ops(&ops, &["da"])?;
                &ops[0]
            } else {
                check_ops(&ops, &["av"])?;
                &ops[1]
            };
            // One 32-bit register per 8x8 matrix of 16-bit elements.
            if shape == (8, 8)
                && regs.as_vector().map(<[Operand]>::len) != Some(usize::from(num.count()))
            {
                return Err(format!(
                    "operands: `.{num}` needs {} registers in braces",
                    num.count()
                ));
            }
            if opcode == "ldmatrix" {
                Instr::Ldmatrix(mods)
            } else {
                Instr::Stmatrix(mods)
            }
        }
        "movmatrix" => {
            sync_aligned(m)?;
            if m.take(mn_shape) != Some((8, 8)) {
                return Err("`movmatrix` needs `.m8n8`".into());
            }
            let trans = m.flag("trans");
            let ty = m.one_type(|t| t == ScalarType::B16)?;
            check_ops(&ops, &["dv"])?;
            Instr::Movmatrix { trans, ty }
        }
        "cp" => {
            // `cp.reduce.async.bulk`, `cp.async...`: the family is the first word.
            if m.first() == Some("reduce") {
                m.require("reduce")?;
                m.require("async")?;
                m.require("bulk")?;
                let i = bulk_reduce(m, &ops)?;
                return Ok(Some((i, ops)));
            }
            if m.first() != Some("async") || !m.flag("async") {
                return Ok(None);
            }
            match cp_async(m, &ops)? {
                Some(i) => i,
                None => return Ok(None),
            }
        }
        "wgmma" => wgmma(m, &ops)?,
        _ => return Ok(None),
    };
    Ok(Some((instr, ops)))
}

fn wmma(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Instr, String> {
    let which = m.take_req("`.load`, `.store` or `.mma`", |s| {
        ["load", "store", "mma"].into_iter().find(|n| *n == s)
    })?;
    let space = |m: &mut Mods<'_>| {
        m.take(|s| {
            StateSpace::parse(s).filter(|s| matches!(s, StateSpace::Global | StateSpace::Shared))
        })
        .unwrap_or(StateSpace::Generic)
    };
    Ok(match which {
        "load" => {
            let frag = m.take_req("fragment `.a`/`.b`/`.c`", Frag::parse)?;
            sync_aligned(m)?;
            let layout = m.take_req("layout", Layout::parse)?;
            let shape = m.take_req("shape", Shape::parse)?;
            let space = space(m);
            let ty = m.one_type(|_| true)?;
            check_ops(ops, &["Va", "Vav"])?;
            Instr::Wmma(WmmaOp::Load {
                frag,
                layout,
                shape,
                space,
                ty,
            })
        }
        "store" => {
            m.require("d")?;
            sync_aligned(m)?;
            let layout = m.take_req("layout", Layout::parse)?;
            let shape = m.take_req("shape", Shape::parse)?;
            let space = space(m);
            let ty = m.one_type(|_| true)?;
            check_ops(ops, &["aV", "aVv"])?;
            Instr::Wmma(WmmaOp::Store {
                layout,
                shape,
                space,
                ty,
            })
        }
        _ => {
            sync_aligned(m)?;
            let a_layout = m.take_req("A layout", Layout::parse)?;
            let b_layout = m.take_req("B layout", Layout::parse)?;
            let shape = m.take_req("shape", Shape::parse)?;
            let rnd = m.take(Rounding::parse);
            let satfinite = m.flag("satfinite");
            let tys = m.types();
            let (d_ty, a_ty, b_ty, c_ty, ab_explicit) = match tys.as_slice() {
                [d, c] => (*d, ScalarType::F16, ScalarType::F16, *c, false),
                [d, a, b, c] => (*d, *a, *b, *c, true),
                _ => {
                    return Err(format!(
                        "`wmma.mma` expects 2 or 4 types, found {}",
                        tys.len()
                    ));
                }
            };
            check_ops(ops, &["VVVV"])?;
            Instr::Wmma(WmmaOp::Mma {
                a_layout,
                b_layout,
                shape,
                d_ty,
                a_ty,
                b_ty,
                c_ty,
                ab_explicit,
                rnd,
                satfinite,
            })
        }
    })
}

fn wgmma(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Instr, String> {
    let which = m.take_req("wgmma operation", |s| {
        ["fence", "commit_group", "wait_group", "mma_async"]
            .into_iter()
            .find(|n| *n == s)
    })?;
    let sparse = which == "mma_async" && m.flag("sp");
    sync_aligned(m)?;
    Ok(Instr::Wgmma(match which {
        "fence" => {
            check_ops(ops, &[""])?;
            WgmmaOp::Fence
        }
        "commit_group" => {
            check_ops(ops, &[""])?;
            WgmmaOp::CommitGroup
        }
        "wait_group" => {
            check_ops(ops, &["v"])?;
            WgmmaOp::WaitGroup
        }
        _ => {
            let shape = m.take_req("shape", Shape::parse)?;
            let satfinite = m.flag("satfinite");
            let tys = m.n_types(3)?;
            if ops.len() < 3 || ops.iter().any(|o| matches!(o, Operand::Pair(..))) {
                return Err("operands: `wgmma.mma_async` needs at least D, A, B".into());
            }
            WgmmaOp::MmaAsync {
                shape,
                d_ty: tys[0],
                a_ty: tys[1],
                b_ty: tys[2],
                satfinite,
                sparse,
            }
        }
    }))
}

/// Everything after `cp.async`. `Ok(None)` for forms outside the decoded set
/// (`cp.async.bulk.prefetch`, ...), reported as unsupported.
fn cp_async(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Option<Instr>, String> {
    if m.flag("bulk") {
        return bulk(m, ops);
    }
    if m.flag("commit_group") {
        check_ops(ops, &[""])?;
        return Ok(Some(Instr::CpAsyncCommitGroup));
    }
    if m.flag("wait_group") {
        check_ops(ops, &["v"])?;
        return Ok(Some(Instr::CpAsyncWaitGroup));
    }
    if m.flag("wait_all") {
        check_ops(ops, &[""])?;
        return Ok(Some(Instr::CpAsyncWaitAll));
    }
    if m.flag("mbarrier") {
        m.require("arrive")?;
        let noinc = m.flag("noinc");
        let space = m.take(shared_space).unwrap_or(StateSpace::Generic);
        m.one_type(|t| t == ScalarType::B64)?;
        check_ops(ops, &["a"])?;
        return Ok(Some(Instr::CpAsyncMbarrierArrive { noinc, space }));
    }
    let cache = m.take_req("`.ca` or `.cg`", |s| {
        CacheOp::parse(s).filter(|c| matches!(c, CacheOp::Ca | CacheOp::Cg))
    })?;
    m.take_req("`.shared` destination", shared_space)?;
    m.require("global")?;
    let mut hints = Vec::new();
    while let Some(h) = m.take(CacheHint::parse) {
        hints.push(h);
    }
    hints.sort();
    check_ops(ops, &["aav", "aavv", "aavvv"])?;
    Ok(Some(Instr::CpAsync { cache, hints }))
}

/// `.tensor.Nd` (`Some(N)`), or nothing (`None`).
fn tensor_dims(m: &mut Mods<'_>) -> Result<Option<u8>, String> {
    Ok(if m.flag("tensor") {
        Some(m.take_req("tensor dimension `.1d`..`.5d`", |s| match s {
            "1d" => Some(1),
            "2d" => Some(2),
            "3d" => Some(3),
            "4d" => Some(4),
            "5d" => Some(5),
            _ => None,
        })?)
    } else {
        None
    })
}

/// Checks a tensor form's operands: `[tmap, {c0, ..}]` at `at` with `n`
/// coordinates, `len` operands in all.
fn tensor_operands(ops: &[Operand], at: usize, n: u8, lens: &[usize]) -> Result<(), String> {
    let ok = lens.contains(&ops.len())
        && match ops.get(at) {
            Some(Operand::TensorAddr { coords, .. }) => {
                matches!(coords.first(), Some(Operand::Vector(c)) if c.len() == usize::from(n))
            }
            _ => false,
        }
        && ops
            .iter()
            .enumerate()
            .all(|(i, o)| i == at || !matches!(o, Operand::TensorAddr { .. }));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "operands: a .{n}d tensor form needs one tensor-map address `[tmap, {{c0, ...}}]` with {n} coordinate(s)"
        ))
    }
}

/// `cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [src], size{, policy}`
/// and `cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile|.im2col}{.L2::cache_hint}
/// [tmap, {coords}]{, im2colOffsets}{, policy}`.
fn bulk_prefetch(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Instr, String> {
    let tensor_dims = tensor_dims(m)?;
    m.require("L2")?;
    m.require("global")?;
    let im2col = if tensor_dims.is_some() {
        let tile = m.flag("tile");
        let im2col = m.flag("im2col");
        if tile && im2col {
            return Err("both `.tile` and `.im2col`".into());
        }
        im2col
    } else {
        false
    };
    let cache_hint = m.flag("L2::cache_hint");
    let extra = usize::from(cache_hint) + usize::from(im2col);
    match tensor_dims {
        None => check_ops(ops, &[if cache_hint { "avv" } else { "av" }])?,
        Some(n) => tensor_operands(ops, 0, n, &[1 + extra])?,
    }
    Ok(Instr::CpAsyncBulkPrefetch {
        tensor_dims,
        im2col,
        cache_hint,
    })
}

/// Everything after `cp.reduce.async.bulk`.
fn bulk_reduce(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Instr, String> {
    let tensor_dims = tensor_dims(m)?;
    let sp = |s: &str| {
        StateSpace::parse(s).filter(|s| {
            matches!(
                s,
                StateSpace::Global | StateSpace::Shared | StateSpace::SharedCluster
            )
        })
    };
    let dst = m.take_req("destination space", sp)?;
    let src = m.take_req("source space", sp)?;
    let op = m.take_req("reduction operation", |s| {
        AtomOp::parse(s).filter(|o| !matches!(o, AtomOp::Exch | AtomOp::Cas))
    })?;
    let im2col = if tensor_dims.is_some() {
        let tile = m.flag("tile");
        let im2col = m.flag("im2col_no_offs");
        if tile && im2col {
            return Err("both `.tile` and `.im2col_no_offs`".into());
        }
        im2col
    } else {
        false
    };
    let completion = m.take_req("completion mechanism", Completion::parse)?;
    let cache_hint = m.flag("L2::cache_hint");
    let noftz = m.flag("noftz");
    let ty = if tensor_dims.is_none() {
        Some(m.one_type(|_| true)?)
    } else {
        None
    };
    match tensor_dims {
        None => {
            let sigs: &[&str] = match (completion, cache_hint) {
                (Completion::MbarrierCompleteTx, _) => &["aava"],
                (Completion::BulkGroup, false) => &["aav"],
                (Completion::BulkGroup, true) => &["aavv"],
            };
            check_ops(ops, sigs)?;
        }
        Some(n) => {
            tensor_operands(ops, 0, n, &[2 + usize::from(cache_hint)])?;
            if !matches!(ops.get(1), Some(Operand::Addr(_))) {
                return Err("operands: the shared-memory source `[src]`".into());
            }
        }
    }
    Ok(Instr::CpReduceAsyncBulk(BulkReduce {
        tensor_dims,
        dst,
        src,
        completion,
        op,
        ty,
        im2col,
        noftz,
        cache_hint,
    }))
}

fn bulk(m: &mut Mods<'_>, ops: &[Operand]) -> Result<Option<Instr>, String> {
    if m.flag("commit_group") {
        check_ops(ops, &[""])?;
        return Ok(Some(Instr::CpAsyncBulkCommitGroup));
    }
    if m.flag("wait_group") {
        let read = m.flag("read");
        check_ops(ops, &["v"])?;
        return Ok(Some(Instr::CpAsyncBulkWaitGroup { read }));
    }
    if m.flag("prefetch") {
        return bulk_prefetch(m, ops).map(Some);
    }
    let tensor_dims = tensor_dims(m)?;
    let sp = |s: &str| {
        StateSpace::parse(s).filter(|s| {
            matches!(
                s,
                StateSpace::Global | StateSpace::Shared | StateSpace::SharedCluster
            )
        })
    };
    let dst = m.take_req("destination space", sp)?;
    let src = m.take_req("source space", sp)?;
    let im2col = if tensor_dims.is_some() {
        let tile = m.flag("tile");
        let im2col = m.flag("im2col");
        if tile && im2col {
            return Err("both `.tile` and `.im2col`".into());
        }
        im2col
    } else {
        false
    };
    let completion = m.take_req("completion mechanism", Completion::parse)?;
    let multicast = m.flag("multicast::cluster");
    let cache_hint = m.flag("L2::cache_hint");
    if ops
        .iter()
        .any(|o| matches!(o, Operand::Pair(..) | Operand::List(_)))
    {
        return Err("operands: a bulk copy takes no `a|b` pair or `(list)`".into());
    }
    let tmaps: Vec<&Vec<Operand>> = ops
        .iter()
        .filter_map(|o| match o {
            Operand::TensorAddr { coords, .. } => Some(coords),
            _ => None,
        })
        .collect();
    match tensor_dims {
        // `[dst], [src], size{, [mbar]}`.
        None => {
            if ops.len() < 3 || !tmaps.is_empty() {
                return Err("operands: bulk copy needs dst, src and size".into());
            }
        }
        // A load `[dst], [tmap, {coords}], [mbar]…` or a store
        // `[tmap, {coords}], [src]`: one tensor-map address whose first
        // vector has one coordinate per dimension.
        Some(n) => {
            let [coords] = tmaps.as_slice() else {
                return Err(
                    "operands: a tensor bulk copy needs one tensor-map address `[tmap, {coords}]`"
                        .into(),
                );
            };
            let dims_ok = match coords.first() {
                Some(Operand::Vector(c)) => c.len() == usize::from(n),
                _ => false,
            };
            if ops.len() < 2 || !dims_ok {
                return Err(format!(
                    "operands: a .{n}d tensor bulk copy needs dst, src and {n} coordinate(s) `{{c0, ...}}`"
                ));
            }
        }
    }
    Ok(Some(Instr::CpAsyncBulk(BulkCopy {
        tensor_dims,
        dst,
        src,
        completion,
        im2col,
        multicast,
        cache_hint,
    })))
}
