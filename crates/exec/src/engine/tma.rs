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
//! `.im2col`, `.multicast::cluster`, cache hints, `cp.reduce.async.bulk`
//! and the other forms are reported unsupported by name.

use ptxeq_ir::{AddrBase, Address, Completion, Instr, InstrData, Operand, StateSpace};

use super::mem::Target;
use super::{Engine, Flow, Halt, R, unpack_instr};
use crate::bindings::{OobFill, TensorMapBinding, TensorMapHolder};
use crate::domain::Domain;
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};
use crate::funcinfo::FuncInfo;
use crate::value::Value;

/// Why a TMA form is not modelled.
const REASON: &str = "bulk copy form not modelled";

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
        if b.im2col || b.multicast || b.cache_hint {
            let what = if b.im2col {
                ".im2col"
            } else if b.multicast {
                ".multicast::cluster"
            } else {
                ".L2::cache_hint"
            };
            return Err(self.unsupported(t, REASON, format!("{name}: {what} is not modelled")));
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

    fn tma_load(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = ins.operands.clone();
        let Some((m, c)) = self.tensor_map_of(t, info, ops.get(1).ok_or(Halt)?)? else {
            return Ok(Flow::Next);
        };
        let esize = self.input.tensors[m.tensor as usize].dtype.size_bytes();
        let elems = Self::box_elements(&m, esize, &c);
        let bytes = elems.len() as u64 * esize;
        let Some(key) = self.mbar_for_async_tx(t, info, ops.get(2), "cp.async.bulk.tensor")? else {
            return Ok(Flow::Next);
        };
        let Some(sbase) = self.box_smem(t, info, ops.first(), bytes)? else {
            return Ok(Flow::Next);
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
        let mut copies = Vec::with_capacity(elems.len());
        for (dense, g) in elems {
            let sa = m.geometry.swizzle.apply(sbase + dense);
            let (v, src) = match g {
                Some(g) => {
                    let Some(v) =
                        self.load(t, info, StateSpace::Global, &abs(gbase + g), esize as u8)?
                    else {
                        return Ok(Flow::Next);
                    };
                    (
                        v,
                        self.locate(t, info, StateSpace::Global, gbase + g, esize)?,
                    )
                }
                None => (Value::Bits(fill), None),
            };
            // The box lands through the async proxy: not a generic write.
            self.cta.proxy.async_store = true;
            let r = self.store(t, info, StateSpace::Shared, &abs(sa), v, esize as u8);
            self.cta.proxy.async_store = false;
            r?;
            let Some((dr, doff)) = self.locate(t, info, StateSpace::Shared, sa, esize)? else {
                return Ok(Flow::Next);
            };
            let src = src.map(|(r, o)| (r, o, esize));
            copies.push(self.track_async_copy(t, (dr, doff, esize), src));
        }
        self.mbar_async_tx(t, key, copies, bytes as i64)?;
        Ok(Flow::Next)
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
        let ops = ins.operands.clone();
        let (Some(Operand::Addr(dst)), Some(Operand::Addr(src)), Some(n), 3) =
            (ops.first(), ops.get(1), ops.get(2), ops.len())
        else {
            return Err(self.unsupported(t, "bulk copy operands", String::new()));
        };
        let size = self.matrix_u32(t, info, n, "the bulk copy size")?;
        if size == 0 || !size.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "invalid bulk copy size",
                format!("cp.async.bulk of {size} bytes (a positive multiple of 16)"),
            ));
        }
        let size = u64::from(size);
        let (Some((Target::Cta(dr), doff)), Some((Target::Cta(sr), soff))) = (
            self.resolve(t, info, StateSpace::Global, dst, size)?,
            self.resolve(t, info, StateSpace::Shared, src, size)?,
        ) else {
            return Ok(Flow::Next);
        };
        let (da, sa) = (
            self.mem.regions[dr as usize].base + doff,
            self.mem.regions[sr as usize].base + soff,
        );
        if !da.is_multiple_of(16) || !sa.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "misaligned bulk copy",
                "a cp.async.bulk address is not 16-byte aligned".into(),
            ));
        }
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
