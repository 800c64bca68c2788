//! `fence.proxy.async`: ordering generic-proxy writes of shared memory
//! before asynchronous-proxy reads of it (`wgmma` shared-memory operands;
//! TMA stores call the same check).
//!
//! Semantics (PTX ISA, "Memory consistency model: proxies" and
//! "fence.proxy"; docs/semantics.md, "wgmma and the async proxy"):
//! ordinary loads and stores act through the *generic proxy*; the
//! tensor-core and bulk-copy units read shared memory through the *async
//! proxy*. A write through one proxy is ordered before an access through
//! the other only with a proxy fence in between. ptxeq's rule, stated on
//! the race detector's vector clocks: an async-proxy read by thread `R`
//! of a byte whose last generic-proxy write `W` was made by thread `X` is
//! ordered only if `X` executed a `fence.proxy.async` *after* `W`, and
//! that fence happens-before `R`'s read. Recording the fence at `X`'s
//! epoch `e` when it executes, "happens-before" is `R` knowing epoch `e`
//! of `X` (`Clocks::knows`): a barrier (or any release/acquire) after
//! the fence in `X` and before the read in `R` gives it; a fence placed
//! after that synchronisation does not (the classic bug of fencing on
//! the wrong side of `__syncthreads`). A write with no fence after it, or
//! whose fence is not ordered before the read, is reported as a race
//! with both instructions. The usual data-race rule (the write itself
//! must happen-before the read) is judged separately by the race
//! detector; this check adds the proxy requirement on top of it.
//!
//! Bookkeeping is per 4-byte unit of shared memory and only in kernels
//! that contain an async-proxy reader, so other kernels pay one flag test
//! per access. Writes by the async proxy itself (`cp.async.bulk` landing
//! in shared memory) are not generic writes: the copy code sets
//! [`ProxyState::async_store`] around its stores.

use ptxeq_ir::{Instr, KernelIr, WgmmaOp};
use rustc_hash::FxHashMap;

use super::{Engine, unpack_instr};
use crate::domain::Domain;
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};

/// Bookkeeping unit in bytes.
const UNIT: u64 = 4;

/// The last generic-proxy write of one unit.
#[derive(Clone, Copy, Debug)]
struct GenericWrite {
    tid: u32,
    instr: u32,
    /// The writer's `fence.proxy.async` after the write: (epoch, instr).
    fence: Option<(u32, u32)>,
}

/// Generic-proxy writes of shared memory and the fences after them.
pub(crate) struct ProxyState {
    /// Whether the kernel has async-proxy reads (otherwise nothing is kept).
    pub(crate) on: bool,
    /// Set while the async proxy itself stores (bulk copies landing).
    pub(crate) async_store: bool,
    /// (region, unit) → its last generic write.
    last: FxHashMap<(u32, u64), GenericWrite>,
    /// Per thread: units written since its last `fence.proxy.async`.
    unfenced: Vec<Vec<(u32, u64)>>,
}

/// Whether `ir` contains an instruction that reads shared memory through
/// the async proxy (today: `wgmma.mma_async`).
pub(crate) fn has_async_proxy_reads(ir: &KernelIr) -> bool {
    ir.instrs.iter().any(|i| match &i.instr {
        Instr::Wgmma(WgmmaOp::MmaAsync { .. }) => true,
        // tcgen05.mma reads its descriptor operands through the async proxy.
        Instr::Tcgen05(ptxeq_ir::Tcgen05Op::Mma { .. }) => true,
        // Bulk / TMA stores read shared memory through the async proxy
        // (`tma.rs`, `tma_async_proxy_read`).
        Instr::CpAsyncBulk(b) => {
            b.dst == ptxeq_ir::StateSpace::Global && b.src != ptxeq_ir::StateSpace::Global
        }
        // Bulk reductions read their shared source the same way.
        Instr::CpReduceAsyncBulk(b) => b.src != ptxeq_ir::StateSpace::Global,
        _ => false,
    })
}

impl ProxyState {
    pub(crate) fn new(on: bool, threads: usize) -> Self {
        ProxyState {
            on,
            async_store: false,
            last: FxHashMap::default(),
            unfenced: if on {
                vec![Vec::new(); threads]
            } else {
                Vec::new()
            },
        }
    }
}

impl<D: Domain> Engine<'_, D> {
    /// A generic-proxy write of shared region `r` (called from `track` for
    /// every write to shared memory when [`ProxyState::on`]).
    pub(crate) fn proxy_note_write(&mut self, t: u32, r: u32, off: u64, len: u64) {
        if self.cta.proxy.async_store || len == 0 || t >= self.cta.nthreads {
            return;
        }
        let instr = self.cur_instr;
        for u in off / UNIT..=(off + len - 1) / UNIT {
            self.cta.proxy.last.insert(
                (r, u),
                GenericWrite {
                    tid: t,
                    instr,
                    fence: None,
                },
            );
            self.cta.proxy.unfenced[t as usize].push((r, u));
        }
    }

    /// `fence.proxy.async` by thread `t`: every generic write `t` made
    /// since its previous proxy fence is now fenced, at `t`'s epoch.
    pub(crate) fn proxy_fence(&mut self, t: u32) {
        if !self.cta.proxy.on {
            return;
        }
        let epoch = self.clocks.epoch(t);
        let instr = self.cur_instr;
        let units = std::mem::take(&mut self.cta.proxy.unfenced[t as usize]);
        for k in units {
            if let Some(w) = self.cta.proxy.last.get_mut(&k)
                && w.tid == t
                && w.fence.is_none()
            {
                w.fence = Some((epoch, instr));
            }
        }
    }

    /// An async-proxy read by thread `t` (at the current instruction) of
    /// `len` bytes at `off` of shared region `r`: each unit's last generic
    /// write must be followed by a `fence.proxy.async` of its writer that
    /// happens-before `t`. The first violation is reported as a race with
    /// both instructions (once per pair of instructions).
    pub(crate) fn check_async_proxy_read(&mut self, t: u32, r: u32, off: u64, len: u64) {
        if !self.cta.proxy.on || len == 0 {
            return;
        }
        for u in off / UNIT..=(off + len - 1) / UNIT {
            let Some(w) = self.cta.proxy.last.get(&(r, u)).copied() else {
                continue;
            };
            let why = match w.fence {
                None => "no fence.proxy.async follows the write in the writing thread".to_string(),
                Some((e, fi)) if !self.clocks.knows(t, w.tid, e) => format!(
                    "the writer's fence.proxy.async at {} is not ordered before the read (fence, then synchronise, then read)",
                    unpack_instr(fi)
                ),
                Some(_) => continue,
            };
            let byte = (u * UNIT).max(off);
            self.proxy_race(t, r, byte, w, why);
            return;
        }
    }

    fn proxy_race(&mut self, t: u32, r: u32, byte: u64, w: GenericWrite, why: String) {
        let key = (r | 0x8000_0000, w.instr, self.cur_instr);
        if !self.log.first_report(key) {
            return;
        }
        let first = AccessRef {
            thread: self.thread_ref(w.tid),
            instr: unpack_instr(w.instr),
            kind: AccessKind::Write,
            cta: None,
        };
        let second = AccessRef {
            thread: self.thread_ref(t),
            instr: unpack_instr(self.cur_instr),
            kind: AccessKind::Read,
            cta: None,
        };
        let reg = &self.mem.regions[r as usize];
        let loc = MemLocation {
            region: reg.name.clone(),
            space: reg.space.name().into(),
            byte_offset: byte,
            element: (reg.elem > 0).then(|| byte / u64::from(reg.elem)),
        };
        let msg = format!(
            "data race on {loc} across proxies: the generic-proxy write by {} at {} and the async-proxy read (wgmma / TMA operand) by {} at {} are not ordered: {why}",
            first.thread, first.instr, second.thread, second.instr
        );
        let mut f = Finding::new(FindingKind::Race, msg)
            .at(Some(second.thread), Some(second.instr))
            .with_location(loc);
        f.accesses = vec![first, second];
        self.report(f);
    }
}
