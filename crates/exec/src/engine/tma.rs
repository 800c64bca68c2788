//! TMA: `cp.async.bulk.tensor.{1..5}d` tile copies through a tensor map
//! (`[tensor_maps]` in the spec), plain `cp.async.bulk` shared → global
//! with `.bulk_group`, and the bulk async-groups
//! (`cp.async.bulk.commit_group`, `cp.async.bulk.wait_group{.read} N`).
//!
//! Semantics (docs/semantics.md, "TMA tensor copies"):
//!
//! - A load `cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//!   [dst], [tmap, {c0, ...}], [mbar]` copies the box at coordinates `c`
//!   (element strides applied) into shared memory at `dst`, densely,
//!   innermost dimension first, each byte moved to its swizzled address;
//!   an element outside the tensor's dims is filled (zero or NaN) and
//!   nothing is read for it. The whole box's bytes complete transaction
//!   bytes on the barrier's current phase; the copy is in flight until
//!   that phase completes (the machinery of `cp.async.bulk`, `mbarrier.rs`).
//! - A store `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group
//!   [tmap, {c0, ...}], [src]` reads the box from shared memory (same
//!   layout) and writes the in-bounds elements to the tensor; the others
//!   are not written. Its source reads are in flight until a
//!   `wait_group.read` (or `wait_group`) retires its group, its writes
//!   until a `wait_group` without `.read` does.
//! - Data is placed at issue, like every asynchronous copy here: any
//!   access that could see the difference is a reported race. A shared
//!   tile still being read by a store when the CTA exits is reported (the
//!   memory is released while the copy reads it).
//!
//! - `.L2::cache_hint` and its policy operand (from `createpolicy`, an
//!   opaque value) are hints: accepted, no effect on values.
//!   `cp.async.bulk.prefetch{.tensor}` has no memory effect; its operands
//!   are checked (tensor map declared, coordinates and size concrete).
//!
//! - `.multicast::cluster` loads (tensor and plain) land at the same
//!   shared offset in every CTA of the 16-bit `ctaMask` and complete their
//!   bytes on each destination CTA's mbarrier at the same offset
//!   (`Engine::tma_multicast`; the part landing in another CTA:
//!   `mbarrier/remote.rs`, `Engine::mbar_multicast_land`).
//! - `cp.reduce.async.bulk{.tensor}` shared::cta → global with
//!   `.bulk_group`: per element a strong read-modify-write of the async
//!   proxy, in flight until the bulk group's wait.
//!
//! `.im2col`, the other `cp.reduce.async.bulk` forms and the remaining
//! bulk forms are reported unsupported by name.

use ptxeq_ir::{
    AddrBase, Address, AtomOp, Completion, Instr, InstrData, Operand, ScalarType, StateSpace,
};

use crate::memory::store_value;
use crate::race::{Acc, Kind};

use super::mem::{Target, update_code};
use super::values::IntArg;
use super::{Engine, Flow, Halt, R, unpack_instr};
use crate::bindings::{OobFill, TensorMapBinding, TensorMapHolder};
use crate::domain::{BinOp, Domain, Fmt, IntOp};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};
use crate::funcinfo::FuncInfo;
use crate::value::Value;

/// One piece of a copy into shared memory: absolute `.shared` address,
/// value, where it was read (region, offset, width) and width.
type Landing<V> = (u64, Value<V>, Option<(u32, u64, u64)>, u64);

/// A gathered copy: its pieces and its bytes.
type Gathered<V> = (Vec<Landing<V>>, u64);

/// Why a TMA form is not modelled.
const REASON: &str = "bulk copy form not modelled";

/// The operands `[dst], [src], size` of a plain (non-tensor) bulk copy or
/// reduction, resolved: absolute addresses, where the source lies and
/// the byte count.
struct BulkSpan {
    dst: u64,
    src: u64,
    /// (region, offset) of the source.
    src_at: (u32, u64),
    size: u64,
}

fn abs(a: u64) -> Address {
    Address {
        base: AddrBase::Imm(a),
        offset: 0,
    }
}

impl<D: Domain> Engine<'_, D> {
    /// `cp.async.bulk{.tensor}` forms other than the plain global → shared
    /// mbarrier copy (`mbarrier.rs`).
    pub(crate) fn tma_copy(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpAsyncBulk(b) = &ins.instr else {
            return Err(Halt);
        };
        let name = ins.instr.mnemonic();
        // `.L2::cache_hint` (its trailing policy operand) is a hint with no
        // effect on values: accepted.
        if b.im2col {
            return Err(self.unsupported(t, REASON, format!("{name}: .im2col is not modelled")));
        }
        if b.multicast {
            return self.tma_multicast(t, info, ins);
        }
        let load = matches!(b.dst, StateSpace::Shared | StateSpace::SharedCluster)
            && b.src == StateSpace::Global
            && b.completion == Completion::MbarrierCompleteTx;
        let store = b.dst == StateSpace::Global
            && matches!(b.src, StateSpace::Shared)
            && b.completion == Completion::BulkGroup;
        match (b.tensor_dims, load, store) {
            (Some(_), true, _) => self.tma_load(t, info, ins),
            (Some(_), _, true) => self.tma_store(t, info, ins),
            (None, _, true) => self.bulk_store(t, info, ins),
            _ => Err(self.unsupported(
                t,
                REASON,
                format!(
                    "{name}: modelled are the tensor tile loads global → shared with mbarrier::complete_tx::bytes, the tensor tile stores and plain copies shared::cta → global with .bulk_group, and the plain copy global → shared with an mbarrier"
                ),
            )),
        }
    }

    /// The tensor map a `[tmap, {coords}]` operand names, and its
    /// coordinates.
    fn tensor_map_of(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
    ) -> R<Option<(TensorMapBinding, Vec<i64>)>> {
        let Operand::TensorAddr { tmap, coords } = op else {
            return Err(self.unsupported(t, REASON, "expected [tmap, {coords}]".into()));
        };
        let Some(Operand::Vector(cs)) = coords.first() else {
            return Err(self.unsupported(t, REASON, "tensor coordinates".into()));
        };
        let mut c = Vec::with_capacity(cs.len());
        for o in cs {
            c.push(i64::from(
                self.matrix_u32(t, info, o, "a tensor coordinate")? as i32,
            ));
        }
        let Some((target, off)) = self.resolve(t, info, StateSpace::Generic, tmap, 128)? else {
            return Ok(None);
        };
        let Target::Cta(r) = target else {
            return Err(self.no_tensor_map(t, "a thread-private address"));
        };
        let found = self
            .input
            .bindings
            .tensor_maps
            .iter()
            .find(|m| match m.holder {
                TensorMapHolder::Param { index } => {
                    r == self.mem.param_region
                        && self.mem.param_offsets.get(index as usize).copied() == Some(off)
                }
                TensorMapHolder::Tensor { tensor } => r == tensor && off == 0,
            });
        match found {
            Some(m) => {
                let m = m.clone();
                if m.geometry.dims.len() != c.len() {
                    return Err(self.unsupported(
                        t,
                        "tensor map does not fit the copy",
                        format!(
                            "tensor map `{}` has {} dims but the copy gives {} coordinates",
                            m.name,
                            m.geometry.dims.len(),
                            c.len()
                        ),
                    ));
                }
                Ok(Some((m, c)))
            }
            None => {
                let name = self.mem.regions[r as usize].name.clone();
                Err(self.no_tensor_map(t, &format!("`{name}`+{off}")))
            }
        }
    }

    fn no_tensor_map(&mut self, t: u32, at: &str) -> Halt {
        self.unsupported(
            t,
            "no tensor map declared",
            format!(
                "the tensor-map operand points at {at}, where the spec declares no [tensor_maps] entry (bind a by-value CUtensorMap param by the map's name, or name the map like the tensor that holds it)"
            ),
        )
    }

    /// Every element of the box: its dense byte offset in shared memory
    /// and its global byte offset in the viewed tensor (`None` when out of
    /// bounds).
    fn box_elements(m: &TensorMapBinding, esize: u64, c: &[i64]) -> Vec<(u64, Option<u64>)> {
        let s = &m.geometry;
        let n = s.dims.len();
        let ext: Vec<u64> = (0..n).map(|d| s.box_extent(d)).collect();
        let total: u64 = ext.iter().product();
        let mut out = Vec::with_capacity(total as usize);
        let mut idx = vec![0u64; n];
        for k in 0..total {
            let mut inb = true;
            let mut g: i64 = 0;
            for d in 0..n {
                let x = c[d] + (idx[d] * u64::from(s.element_strides[d])) as i64;
                if x < 0 || x >= s.dims[d] as i64 {
                    inb = false;
                }
                let stride = if d == 0 { esize } else { s.strides[d - 1] };
                g = g.saturating_add(x.saturating_mul(stride as i64));
            }
            out.push((k * esize, inb.then_some(g as u64)));
            for d in 0..n {
                idx[d] += 1;
                if idx[d] < ext[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        out
    }

    /// The shared address of a box (`[smem]` operand): absolute `.shared`
    /// address, 128-byte aligned, the region holding all `bytes`.
    fn box_smem(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: Option<&Operand>,
        bytes: u64,
    ) -> R<Option<u64>> {
        let Some(Operand::Addr(a)) = op else {
            return Err(self.unsupported(t, REASON, "expected a [shared] address".into()));
        };
        let a = a.clone();
        let Some((Target::Cta(r), off)) = self.resolve(t, info, StateSpace::Shared, &a, bytes)?
        else {
            return Ok(None);
        };
        let base = self.mem.regions[r as usize].base + off;
        if !base.is_multiple_of(128) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "misaligned bulk copy",
                format!(
                    "the shared-memory box of a tensor copy in `{}` is not 128-byte aligned",
                    self.mem.regions[r as usize].name
                ),
            ));
        }
        Ok(Some(base))
    }

    /// Region and offset of an absolute address in `space`.
    fn locate(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        a: u64,
        w: u64,
    ) -> R<Option<(u32, u64)>> {
        Ok(match self.resolve(t, info, space, &abs(a), w)? {
            Some((Target::Cta(r), off)) => Some((r, off)),
            _ => None,
        })
    }

    /// The box of a tensor load at `[tmap, {coords}]` (operand `op`) into
    /// the shared box at operand `dst`: per element, its swizzled absolute
    /// `.shared` address, the value it loads (read from global memory at
    /// issue, or the out-of-bounds fill), where it was read, and its width;
    /// and the box's bytes. `None` when an address was out of bounds
    /// (reported).
    fn gather_box(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        dst: Option<&Operand>,
    ) -> R<Option<Gathered<D::Val>>> {
        let Some((m, c)) = self.tensor_map_of(t, info, op)? else {
            return Ok(None);
        };
        let esize = self.input.tensors[m.tensor as usize].dtype.size_bytes();
        let elems = Self::box_elements(&m, esize, &c);
        let bytes = elems.len() as u64 * esize;
        let Some(sbase) = self.box_smem(t, info, dst, bytes)? else {
            return Ok(None);
        };
        let gbase = self.mem.regions[m.tensor as usize].base;
        let fill = match m.geometry.oob_fill {
            OobFill::Zero => 0,
            OobFill::Nan => match esize {
                2 => 0x7fff,
                4 => 0x7fff_ffff,
                _ => 0x7fff_ffff_ffff_ffff,
            },
        };
        let mut out = Vec::with_capacity(elems.len());
        for (dense, g) in elems {
            let sa = m.geometry.swizzle.apply(sbase + dense);
            let (v, src) = match g {
                Some(g) => {
                    let Some(v) =
                        self.load(t, info, StateSpace::Global, &abs(gbase + g), esize as u8)?
                    else {
                        return Ok(None);
                    };
                    (
                        v,
                        self.locate(t, info, StateSpace::Global, gbase + g, esize)?,
                    )
                }
                None => (Value::Bits(fill), None),
            };
            out.push((sa, v, src.map(|(r, o)| (r, o, esize)), esize));
        }
        Ok(Some((out, bytes)))
    }

    /// Places a gathered copy in the running CTA's shared memory, each
    /// piece written through the async proxy and kept in flight; returns
    /// the copy ids (`None` when an address was out of bounds).
    fn land_local(
        &mut self,
        t: u32,
        info: &FuncInfo,
        land: Vec<Landing<D::Val>>,
    ) -> R<Option<Vec<u32>>> {
        let mut copies = Vec::with_capacity(land.len());
        for (sa, v, src, w) in land {
            // The copy lands through the async proxy: not a generic write.
            self.cta.proxy.async_store = true;
            let r = self.store(t, info, StateSpace::Shared, &abs(sa), v, w as u8);
            self.cta.proxy.async_store = false;
            r?;
            let Some((dr, doff)) = self.locate(t, info, StateSpace::Shared, sa, w)? else {
                return Ok(None);
            };
            copies.push(self.track_async_copy(t, (dr, doff, w), src));
        }
        Ok(Some(copies))
    }

    fn tma_load(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = ins.operands.clone();
        // The tensor map and coordinates first, then the mbarrier.
        if self
            .tensor_map_of(t, info, ops.get(1).ok_or(Halt)?)?
            .is_none()
        {
            return Ok(Flow::Next);
        }
        let Some(key) = self.mbar_for_async_tx(t, info, ops.get(2), "cp.async.bulk.tensor")? else {
            return Ok(Flow::Next);
        };
        let Some((land, bytes)) = self.gather_box(t, info, ops.get(1).ok_or(Halt)?, ops.first())?
        else {
            return Ok(Flow::Next);
        };
        let Some(copies) = self.land_local(t, info, land)? else {
            return Ok(Flow::Next);
        };
        self.mbar_async_tx(t, key, copies, bytes as i64)?;
        Ok(Flow::Next)
    }

    /// The clock slot that stamps, in this CTA, the multicast copies
    /// landing here from thread `t` of another CTA of the cluster: the
    /// block after the thread's agents (`tmem::clock_blocks`).
    pub(crate) fn mcast_slot(&self, t: u32) -> u32 {
        t + self.agent_blocks() as u32 * self.cta.nthreads
    }

    /// One piece of a multicast copy of thread `t` (of another CTA) landing
    /// in this CTA's shared memory at `(r, off)`: written through the async
    /// proxy, judged as a write stamped by clock slot `slot`, and kept in
    /// flight. Returns the copy id.
    pub(crate) fn land_async(
        &mut self,
        t: u32,
        slot: u32,
        r: u32,
        off: u64,
        w: u64,
        v: Value<D::Val>,
    ) -> u32 {
        self.cta.proxy.async_store = true;
        let saved = self.cta.tmem.stamp.replace(slot);
        let a = Acc {
            kind: Kind::PlainWrite,
            ..Acc::default()
        };
        self.track(t, Target::Cta(r), off, w, a, Some(&v));
        self.cta.tmem.stamp = saved;
        self.cta.proxy.async_store = false;
        self.note_writer(t, r, off, w as u8);
        store_value(&mut self.mem.slots[r as usize], off as usize, &v, w as u8);
        self.track_async_copy(t, (r, off, w), None)
    }

    /// `cp.async.bulk{.tensor.Nd}.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes.multicast::cluster
    /// [dst], [src|tmap, {coords}]{, size}, [mbar], ctaMask`: the data is read
    /// once and lands at the same shared-memory offset in every CTA of the
    /// cluster whose rank bit is set in the 16-bit `ctaMask`, each
    /// destination CTA's mbarrier at the offset of `mbar` receiving the
    /// complete-tx of the bytes landing there (docs/semantics.md §12).
    fn tma_multicast(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpAsyncBulk(b) = &ins.instr else {
            return Err(Halt);
        };
        let b = *b;
        let name = ins.instr.mnemonic();
        let ops = ins.operands.clone();
        let load = b.dst == StateSpace::SharedCluster
            && b.src == StateSpace::Global
            && b.completion == Completion::MbarrierCompleteTx;
        if !load {
            return Err(self.unsupported(
                t,
                REASON,
                format!("{name}: .multicast::cluster is modelled for the loads global → shared::cluster completing on an mbarrier"),
            ));
        }
        let (mbar_at, mask_at) = if b.tensor_dims.is_some() {
            (2, 3)
        } else {
            (3, 4)
        };
        if ops.len() != mask_at + 1 + usize::from(b.cache_hint) {
            return Err(self.unsupported(t, "bulk copy operands", format!("{name}: operands")));
        }
        let mask = self.matrix_u32(t, info, &ops[mask_at], "the multicast ctaMask")? & 0xffff;
        let n = self.cluster_ctas();
        if mask == 0 {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "multicast to no CTA",
                format!(
                    "{name} with ctaMask 0: the copy lands in no CTA and completes no transaction"
                ),
            ));
        }
        if n < 16 && mask >> n != 0 {
            let r = 31 - (mask >> n << n).leading_zeros();
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "",
                format!(
                    "{name}: ctaMask {mask:#06x} names CTA rank {r}, but the cluster has {n} CTA{}",
                    if n == 1 { "" } else { "s" }
                ),
            ));
        }
        let own = self.cluster_rank();
        let others = mask & !(1 << own);
        if others != 0
            && !self
                .unit
                .as_ref()
                .is_some_and(|u| u.complete && !u.grid && u.len() == n)
        {
            return Err(self.unsupported(
                t,
                "multicast into a CTA outside the run",
                format!(
                    "{name}: ctaMask {mask:#06x} names other CTAs of the cluster, which run together only when the run holds the whole cluster"
                ),
            ));
        }
        // The mbarrier (region, offset): the same in every destination.
        let Some(key) = self.mbar_key(t, info, StateSpace::Shared, ops.get(mbar_at))? else {
            return Ok(Flow::Next);
        };
        let local = mask & (1 << own) != 0;
        let local_key = if local {
            match self.mbar_for_async_tx(
                t,
                info,
                ops.get(mbar_at),
                "cp.async.bulk .multicast::cluster",
            )? {
                Some(k) => Some(k),
                None => return Ok(Flow::Next),
            }
        } else {
            None
        };
        let gathered = if b.tensor_dims.is_some() {
            self.gather_box(t, info, ops.get(1).ok_or(Halt)?, ops.first())?
        } else {
            self.gather_bulk(t, info, &ops)?
        };
        let Some((land, bytes)) = gathered else {
            return Ok(Flow::Next);
        };
        // Region and offset of every piece (shared regions are instantiated
        // per CTA at the same index).
        let mut remote = Vec::with_capacity(land.len());
        if others != 0 {
            for (sa, v, _, w) in &land {
                let Some((r, off)) = self.locate(t, info, StateSpace::Shared, *sa, *w)? else {
                    return Ok(Flow::Next);
                };
                remote.push((r, off, *w, v.clone()));
            }
        }
        if let Some(k) = local_key {
            let Some(copies) = self.land_local(t, info, land)? else {
                return Ok(Flow::Next);
            };
            self.mbar_async_tx(t, k, copies, bytes as i64)?;
        }
        for k in 0..n.min(16) {
            if others & (1 << k) != 0 {
                self.mbar_multicast_land(t, k, key, &remote, bytes as i64)?;
            }
        }
        Ok(Flow::Next)
    }

    /// The size operand of a plain bulk copy or reduction `name`:
    /// concrete, a positive multiple of 16 (PTX ISA, cp.async.bulk).
    pub(crate) fn bulk_size(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        name: &str,
    ) -> R<u64> {
        let size = self.matrix_u32(t, info, op, "the bulk copy size")?;
        if size == 0 || !size.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "invalid bulk copy size",
                format!("{name} of {size} bytes (a positive multiple of 16)"),
            ));
        }
        Ok(u64::from(size))
    }

    /// `[dst], [src], size` of a plain bulk copy or reduction `name`, the
    /// destination in `spaces.0`, the source in `spaces.1`: the size
    /// checked ([`Engine::bulk_size`]), both ranges resolved in bounds and
    /// both addresses 16-byte aligned. `None` when an address was reported
    /// out of bounds.
    fn bulk_operands(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        name: &str,
        spaces: (StateSpace, StateSpace),
    ) -> R<Option<BulkSpan>> {
        let (Some(Operand::Addr(dst)), Some(Operand::Addr(src)), Some(n)) =
            (ops.first(), ops.get(1), ops.get(2))
        else {
            return Err(self.unsupported(t, "bulk copy operands", format!("{name}: operands")));
        };
        let size = self.bulk_size(t, info, n, name)?;
        let (Some((Target::Cta(dr), doff)), Some((Target::Cta(sr), soff))) = (
            self.resolve(t, info, spaces.0, dst, size)?,
            self.resolve(t, info, spaces.1, src, size)?,
        ) else {
            return Ok(None);
        };
        let (dst, src) = (
            self.mem.regions[dr as usize].base + doff,
            self.mem.regions[sr as usize].base + soff,
        );
        if !dst.is_multiple_of(16) || !src.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "misaligned bulk copy",
                format!("a {name} address is not 16-byte aligned"),
            ));
        }
        Ok(Some(BulkSpan {
            dst,
            src,
            src_at: (sr, soff),
            size,
        }))
    }

    /// A plain bulk load `[dst], [src], size, …` gathered in 16-byte pieces
    /// (size a positive multiple of 16, both addresses 16-byte aligned).
    fn gather_bulk(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
    ) -> R<Option<Gathered<D::Val>>> {
        let Some(BulkSpan {
            dst: da,
            src: ga,
            src_at: (sr, soff),
            size,
        }) = self.bulk_operands(
            t,
            info,
            ops,
            "cp.async.bulk",
            (StateSpace::Shared, StateSpace::Global),
        )?
        else {
            return Ok(None);
        };
        let mut out = Vec::new();
        for k in 0..size / 16 {
            let Some(v) = self.load(t, info, StateSpace::Global, &abs(ga + 16 * k), 16)? else {
                return Ok(None);
            };
            out.push((da + 16 * k, v, Some((sr, soff + 16 * k, 16)), 16));
        }
        Ok(Some((out, size)))
    }

    fn tma_store(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = ins.operands.clone();
        let Some((m, c)) = self.tensor_map_of(t, info, ops.first().ok_or(Halt)?)? else {
            return Ok(Flow::Next);
        };
        let esize = self.input.tensors[m.tensor as usize].dtype.size_bytes();
        let elems = Self::box_elements(&m, esize, &c);
        let bytes = elems.len() as u64 * esize;
        let Some(sbase) = self.box_smem(t, info, ops.get(1), bytes)? else {
            return Ok(Flow::Next);
        };
        let gbase = self.mem.regions[m.tensor as usize].base;
        for (dense, g) in elems {
            let Some(g) = g else { continue };
            let sa = m.geometry.swizzle.apply(sbase + dense);
            if !self.bulk_store_bytes(t, info, sa, gbase + g, esize)? {
                return Ok(Flow::Next);
            }
        }
        Ok(Flow::Next)
    }

    /// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size`.
    fn bulk_store(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let hint = matches!(&ins.instr, Instr::CpAsyncBulk(b) if b.cache_hint);
        if ins.operands.len() != 3 + usize::from(hint) {
            return Err(self.unsupported(t, "bulk copy operands", String::new()));
        }
        let Some(BulkSpan {
            dst: da,
            src: sa,
            size,
            ..
        }) = self.bulk_operands(
            t,
            info,
            &ins.operands,
            "cp.async.bulk",
            (StateSpace::Global, StateSpace::Shared),
        )?
        else {
            return Ok(Flow::Next);
        };
        for k in 0..size / 16 {
            if !self.bulk_store_bytes(t, info, sa + 16 * k, da + 16 * k, 16)? {
                break;
            }
        }
        Ok(Flow::Next)
    }

    /// One piece of a bulk store: `w` bytes read from shared memory at
    /// `sa` by the async proxy, written to global memory at `ga`; joins
    /// thread `t`'s uncommitted bulk group. `false` when an address was
    /// out of bounds (reported).
    fn bulk_store_bytes(&mut self, t: u32, info: &FuncInfo, sa: u64, ga: u64, w: u64) -> R<bool> {
        let Some(v) = self.tma_async_proxy_read(t, info, sa, w)? else {
            return Ok(false);
        };
        self.store(t, info, StateSpace::Global, &abs(ga), v, w as u8)?;
        let (Some((dr, doff)), Some((sr, soff))) = (
            self.locate(t, info, StateSpace::Global, ga, w)?,
            self.locate(t, info, StateSpace::Shared, sa, w)?,
        ) else {
            return Ok(false);
        };
        let id = self.track_async_copy(t, (dr, doff, w), Some((sr, soff, w)));
        self.cta.asyncs.bulk_uncommitted[t as usize].push(id);
        Ok(true)
    }

    /// Reads `w` bytes of shared memory at absolute `.shared` address `sa`
    /// for a bulk / TMA store. These are **async-proxy reads** of shared
    /// memory: the PTX memory model orders generic-proxy writes (`st.shared`)
    /// before them only through `fence.proxy.async`, which `proxy.rs`
    /// checks (`check_async_proxy_read`). Every TMA-store source read goes
    /// through this one function. The read is also judged like an ordinary
    /// read at issue and kept in flight until its bulk group's
    /// `wait_group.read`.
    pub(crate) fn tma_async_proxy_read(
        &mut self,
        t: u32,
        info: &FuncInfo,
        sa: u64,
        w: u64,
    ) -> R<Option<Value<D::Val>>> {
        if let Some((r, off)) = self.locate(t, info, StateSpace::Shared, sa, w)? {
            self.check_async_proxy_read(t, r, off, w);
        }
        self.load(t, info, StateSpace::Shared, &abs(sa), w as u8)
    }

    /// `createpolicy.*`: an L2 cache-eviction policy, an opaque 64-bit
    /// value that only `.L2::cache_hint` operands consume (as a hint, with
    /// no effect on values). Its value operands must be defined; the
    /// policy itself is opaque: any use other than a cache-hint operand
    /// (a branch, an address, a stored value) is reported where it happens.
    pub(crate) fn create_policy(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = ins.operands.clone();
        for o in ops.iter().skip(1) {
            if matches!(o, Operand::Addr(_)) {
                // The range form's base address is not dereferenced.
                continue;
            }
            let w = self.operand_width(info, o).unwrap_or(64);
            if matches!(self.read(t, info, o, w)?, Value::Undef) {
                return Err(self.uninit_register(t, "a createpolicy operand"));
            }
        }
        let d = ops.first().ok_or(Halt)?;
        self.write(t, info, d, Value::Tainted(self.cur_instr))?;
        Ok(Flow::Next)
    }

    /// `cp.async.bulk.prefetch{.tensor.Nd}.L2.global`: a hint to bring data
    /// into the L2 cache, with no memory effect. Its operands are checked:
    /// the plain form's address and size concrete (size a positive multiple
    /// of 16, address 16-byte aligned, in global memory), the tensor form's
    /// tensor map declared in the spec and its coordinates concrete.
    pub(crate) fn bulk_prefetch(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpAsyncBulkPrefetch {
            tensor_dims,
            im2col,
            ..
        } = ins.instr
        else {
            return Err(Halt);
        };
        let ops = ins.operands.clone();
        if im2col {
            return Err(self.unsupported(
                t,
                REASON,
                format!("{}: .im2col is not modelled", ins.instr.mnemonic()),
            ));
        }
        if tensor_dims.is_some() {
            self.tensor_map_of(t, info, ops.first().ok_or(Halt)?)?;
            return Ok(Flow::Next);
        }
        let (Some(Operand::Addr(src)), Some(n)) = (ops.first(), ops.get(1)) else {
            return Err(self.unsupported(t, "bulk prefetch operands", String::new()));
        };
        let size = self.matrix_u32(t, info, n, "the bulk prefetch size")?;
        if size == 0 || !size.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "invalid bulk copy size",
                format!("cp.async.bulk.prefetch of {size} bytes (a positive multiple of 16)"),
            ));
        }
        let a = match &src.base {
            AddrBase::Reg(r) => {
                let v = self.read(t, info, &Operand::Reg(*r), 64)?;
                match v {
                    Value::Bits(b) => Some(b.wrapping_add(src.offset as u64)),
                    Value::Undef => return Err(self.uninit_register(t, "the prefetch address")),
                    _ => {
                        return Err(self.unsupported(
                            t,
                            "address depends on tensor data",
                            "the bulk prefetch address is computed from tensor values".into(),
                        ));
                    }
                }
            }
            AddrBase::Imm(b) => Some(b.wrapping_add(src.offset as u64)),
            // A variable: aligned as declared, plus the offset.
            _ => None,
        };
        if let Some(a) = a
            && !a.is_multiple_of(16)
        {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "misaligned bulk copy",
                format!("the cp.async.bulk.prefetch address {a:#x} is not 16-byte aligned"),
            ));
        }
        Ok(Flow::Next)
    }

    /// `cp.reduce.async.bulk{.tensor.Nd}.global.shared::cta{.tile}.bulk_group.op`:
    /// every element of the shared source (a plain range of `size` bytes of
    /// `.type`, or a tensor box, whose in-bounds elements only are reduced)
    /// is combined into global memory by a strong read-modify-write of the
    /// async proxy (relaxed, `.gpu` scope: morally strong with other
    /// atomics and reductions). The source reads are async-proxy reads; the
    /// reads and the global updates join the thread's bulk async-group and
    /// are in flight until `wait_group.read` / `wait_group` retire it.
    pub(crate) fn bulk_reduce(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpReduceAsyncBulk(b) = ins.instr else {
            return Err(Halt);
        };
        let name = ins.instr.mnemonic();
        let ops = ins.operands.clone();
        if !(b.dst == StateSpace::Global
            && b.src == StateSpace::Shared
            && b.completion == Completion::BulkGroup
            && !b.im2col)
        {
            return Err(self.unsupported(
                t,
                REASON,
                format!(
                    "{name}: modelled are the reductions shared::cta → global with .bulk_group (plain, and tensor .tile)"
                ),
            ));
        }
        // (absolute shared address, absolute global address) per element.
        let mut elems: Vec<(u64, u64)> = Vec::new();
        let ty = match b.tensor_dims {
            Some(_) => {
                let Some((m, c)) = self.tensor_map_of(t, info, ops.first().ok_or(Halt)?)? else {
                    return Ok(Flow::Next);
                };
                let dt = self.input.tensors[m.tensor as usize].dtype;
                let esize = dt.size_bytes();
                let boxed = Self::box_elements(&m, esize, &c);
                let bytes = boxed.len() as u64 * esize;
                let Some(sbase) = self.box_smem(t, info, ops.get(1), bytes)? else {
                    return Ok(Flow::Next);
                };
                let gbase = self.mem.regions[m.tensor as usize].base;
                for (dense, g) in boxed {
                    if let Some(g) = g {
                        elems.push((m.geometry.swizzle.apply(sbase + dense), gbase + g));
                    }
                }
                scalar_of(dt)
            }
            None => {
                let Some(BulkSpan {
                    dst: da,
                    src: sa,
                    size,
                    ..
                }) = self.bulk_operands(
                    t,
                    info,
                    &ops,
                    &name,
                    (StateSpace::Global, StateSpace::Shared),
                )?
                else {
                    return Ok(Flow::Next);
                };
                let ty = b.ty.ok_or(Halt)?;
                let w = ty.size_bytes();
                for k in 0..size / w {
                    elems.push((sa + k * w, da + k * w));
                }
                Some(ty)
            }
        };
        let Some(ty) = ty else {
            return Err(self.unsupported(t, REASON, format!("{name}: the element type")));
        };
        let ok = match (ty.is_float(), b.op) {
            (true, AtomOp::Add | AtomOp::Min | AtomOp::Max) => true,
            (true, _) => false,
            (false, _) => !matches!(b.op, AtomOp::Exch | AtomOp::Cas),
        };
        if !ok
            || (b.op == AtomOp::Add
                && ty.is_float()
                && ty.size_bytes() == 2
                && !b.noftz
                && b.tensor_dims.is_none())
        {
            return Err(self.unsupported(
                t,
                REASON,
                format!(
                    "{name}: .{} on .{ty} is not a bulk reduction the PTX ISA defines",
                    b.op
                ),
            ));
        }
        for (sa, ga) in elems {
            if !self.reduce_elem(t, info, sa, ga, b.op, ty)? {
                break;
            }
        }
        Ok(Flow::Next)
    }

    /// One element of a bulk reduction: `ty` at shared `sa` read by the
    /// async proxy and combined with `op` into global memory at `ga`;
    /// joins thread `t`'s uncommitted bulk group. `false` when an address
    /// was out of bounds (reported).
    fn reduce_elem(
        &mut self,
        t: u32,
        info: &FuncInfo,
        sa: u64,
        ga: u64,
        op: AtomOp,
        ty: ScalarType,
    ) -> R<bool> {
        let w = ty.size_bytes();
        let Some(v) = self.tma_async_proxy_read(t, info, sa, w)? else {
            return Ok(false);
        };
        let Some((target, off)) = self.resolve(t, info, StateSpace::Global, &abs(ga), w)? else {
            return Ok(false);
        };
        self.check_writable(t, target)?;
        let code = update_code(op, ty);
        let operands = self.fingerprint(t, &[&v]);
        let a = Acc {
            kind: Kind::StrongWrite,
            rmw: true,
            op: code,
            operands,
            ..Acc::default()
        };
        self.track(t, target, off, w, a, None);
        let (old, li) = self.read_target(t, target, off, w as u8);
        if li.uninit {
            let loc = self.location(t, target, off);
            self.note(
                t,
                FindingKind::Uninitialised,
                format!("bulk reduction into {loc}, which was never written"),
                Some(loc),
            );
        }
        let wbits = ty.bit_width();
        let new = if let Some(fmt) = Fmt::of(ty) {
            let bop = match op {
                AtomOp::Add => BinOp::Add,
                AtomOp::Min => BinOp::Min,
                _ => BinOp::Max,
            };
            let x = self.as_real(t, &old, fmt)?;
            let y = self.as_real(t, &v, fmt)?;
            match (x, y) {
                (Some(x), Some(y)) => Value::data(self.d.binary(bop, x, y), fmt),
                _ => Value::Undef,
            }
        } else {
            let signed = ty.is_signed();
            let x = self.int_of(t, &old, wbits)?;
            let y = self.int_of(t, &v, wbits)?;
            match (x, y) {
                (IntArg::Known(x), IntArg::Known(y)) => Value::Bits(match op {
                    AtomOp::Add => crate::int::add(x, y, wbits),
                    AtomOp::Min => crate::int::min(x, y, wbits, signed),
                    AtomOp::Max => crate::int::max(x, y, wbits, signed),
                    AtomOp::And => x & y,
                    AtomOp::Or => x | y,
                    AtomOp::Xor => x ^ y,
                    AtomOp::Inc => {
                        if x >= y {
                            0
                        } else {
                            crate::int::add(x, 1, wbits)
                        }
                    }
                    _ => {
                        if x == 0 || x > y {
                            y
                        } else {
                            crate::int::sub(x, 1, wbits)
                        }
                    }
                }),
                (IntArg::Tainted(o), _) | (_, IntArg::Tainted(o)) => Value::Tainted(o),
                (x, y) if [&x, &y].iter().any(|a| matches!(a, IntArg::Data(_))) => {
                    let o = match op {
                        AtomOp::Add => IntOp::Add,
                        AtomOp::Min => IntOp::Min { signed },
                        AtomOp::Max => IntOp::Max { signed },
                        AtomOp::And => IntOp::And,
                        AtomOp::Or => IntOp::Or,
                        AtomOp::Xor => IntOp::Xor,
                        _ => {
                            self.finish_atomic(
                                t,
                                info,
                                None,
                                target,
                                off,
                                old,
                                Value::Tainted(self.cur_instr),
                                w as u8,
                            )?;
                            return self.reduce_tracked(t, info, sa, ga, w, code, operands);
                        }
                    };
                    let r = self.int_data_op(t, o, wbits, &[(x, wbits), (y, wbits)])?;
                    self.int_result(t, r, wbits)?
                }
                _ => Value::Undef,
            }
        };
        self.finish_atomic(t, info, None, target, off, old, new, w as u8)?;
        self.reduce_tracked(t, info, sa, ga, w, code, operands)
    }

    /// Keeps a bulk reduction element in flight in thread `t`'s bulk group.
    #[allow(clippy::too_many_arguments)]
    fn reduce_tracked(
        &mut self,
        t: u32,
        info: &FuncInfo,
        sa: u64,
        ga: u64,
        w: u64,
        code: u8,
        operands: u64,
    ) -> R<bool> {
        let (Some((dr, doff)), Some((sr, soff))) = (
            self.locate(t, info, StateSpace::Global, ga, w)?,
            self.locate(t, info, StateSpace::Shared, sa, w)?,
        ) else {
            return Ok(false);
        };
        let id = self.track_async_copy(t, (dr, doff, w), Some((sr, soff, w)));
        self.mark_async_reduce(id, code, operands);
        self.cta.asyncs.bulk_uncommitted[t as usize].push(id);
        Ok(true)
    }

    /// `cp.async.bulk.commit_group`: thread `t`'s uncommitted bulk copies
    /// form a group (possibly empty).
    pub(crate) fn bulk_commit(&mut self, t: u32) -> R<Flow> {
        let g = std::mem::take(&mut self.cta.asyncs.bulk_uncommitted[t as usize]);
        self.cta.asyncs.bulk_groups[t as usize].push_back(g);
        Ok(Flow::Next)
    }

    /// `cp.async.bulk.wait_group{.read} N`: all but the newest `N` groups
    /// complete their source reads (`.read`) or complete entirely.
    pub(crate) fn bulk_wait(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpAsyncBulkWaitGroup { read } = ins.instr else {
            return Err(Halt);
        };
        let Some(op) = ins.operands.first() else {
            return Err(self.unsupported(t, "cp.async.bulk.wait_group without N", String::new()));
        };
        let keep = self.matrix_u32(t, info, op, "the wait_group count")? as usize;
        let groups = &mut self.cta.asyncs.bulk_groups[t as usize];
        let n = groups.len().saturating_sub(keep);
        if read {
            let ids: Vec<u32> = groups.iter().take(n).flatten().copied().collect();
            for id in ids {
                self.complete_copy_reads(id);
            }
        } else {
            let done: Vec<Vec<u32>> = groups.drain(..n).collect();
            for id in done.into_iter().flatten() {
                self.complete_async_copy(id);
            }
        }
        Ok(Flow::Next)
    }

    /// At the end of the CTA: a bulk store still reading shared memory
    /// reads memory the exiting CTA releases (no `wait_group.read` retired
    /// it). One finding per store instruction.
    pub(crate) fn tma_exit_check(&mut self) {
        let mut seen = Vec::new();
        for t in 0..self.cta.asyncs.bulk_groups.len() {
            let ids: Vec<u32> = self.cta.asyncs.bulk_groups[t]
                .iter()
                .flatten()
                .chain(self.cta.asyncs.bulk_uncommitted[t].iter())
                .copied()
                .collect();
            for id in ids {
                let Some((tid, instr, Some((r, off, _)))) = self.async_copy_info(id) else {
                    continue;
                };
                if self.mem.regions[r as usize].space != crate::memory::Space::Shared
                    || seen.contains(&instr)
                {
                    continue;
                }
                seen.push(instr);
                let reg = &self.mem.regions[r as usize];
                let loc = MemLocation {
                    region: reg.name.clone(),
                    space: reg.space.name().into(),
                    byte_offset: off,
                    element: (reg.elem > 0).then(|| off / u64::from(reg.elem)),
                };
                let th = self.thread_ref(tid);
                let at = unpack_instr(instr);
                let msg = format!(
                    "data race on {loc}: the bulk store by {th} at {at} may still be reading this shared memory when the CTA exits and releases it: no cp.async.bulk.wait_group.read (or wait_group) of {th} retired its bulk group"
                );
                let mut f = Finding::new(FindingKind::Race, msg)
                    .at(Some(th), Some(at))
                    .with_location(loc)
                    .with_reason("shared memory released during a bulk store");
                f.accesses = vec![AccessRef {
                    thread: th,
                    instr: at,
                    kind: AccessKind::Read,
                    cta: None,
                }];
                self.report(f);
            }
        }
    }
}

/// The PTX scalar type of a tensor's elements (`None` for types without a
/// bulk reduction).
fn scalar_of(d: ptxeq_spec::DType) -> Option<ScalarType> {
    use ptxeq_spec::DType as T;
    Some(match d {
        T::F16 => ScalarType::F16,
        T::Bf16 => ScalarType::Bf16,
        T::F32 => ScalarType::F32,
        T::F64 => ScalarType::F64,
        T::S32 => ScalarType::S32,
        T::U32 => ScalarType::U32,
        T::S64 => ScalarType::S64,
        T::U64 => ScalarType::U64,
        _ => return None,
    })
}
