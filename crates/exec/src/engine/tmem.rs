//! Blackwell (sm_100a) Tensor Memory and the `tcgen05` instructions,
//! `.cta_group::1`.
//!
//! Semantics (PTX ISA, "TensorCore 5th Generation Family Instructions";
//! docs/semantics.md, "Tensor Memory and tcgen05"):
//!
//! - Tensor Memory (TMEM) is per CTA: 128 lanes × 512 columns of 32-bit
//!   cells. An address is `lane << 16 | column`. The cells live in one
//!   CTA-wide region of the engine's memory (`TmemState::region`, in no
//!   address lookup: no `ld`/`st` can name it), so the race shadow,
//!   in-flight tracking and uninitialised-read detection of ordinary
//!   memory apply to it unchanged. Cell `(lane, col)` is bytes
//!   `4·(lane·512 + col)` of that region.
//! - `tcgen05.alloc` (warp-collective) allocates `ncols` columns (a power
//!   of two, 32 to 512), at the lowest free `ncols`-aligned column, and
//!   writes the address (lane 0) to the shared-memory word `[dst]`;
//!   `dealloc` frees exactly allocated columns; after
//!   `relinquish_alloc_permit` by any warp the CTA may not allocate.
//!   `dealloc` writes (invalidates) every cell of the columns, so a TMEM
//!   access by another thread not ordered before it is a race. An
//!   invalid count, an allocation that can never be satisfied, a double
//!   or foreign `dealloc`, an `alloc` after the permit was given up, and
//!   columns still allocated when the CTA's threads have all exited are
//!   findings naming the instruction; a TMEM access outside the allocated
//!   columns is out of bounds. Allocated cells start uninitialised.
//! - `tcgen05.mma.cta_group::1` (one thread) computes `D = A·B (+ D)` over
//!   the reals for `.kind::f16` (f16/bf16), `.kind::tf32` and
//!   `.kind::f8f6f4` with e4m3/e5m2, f32 accumulators, M = 128: row `i` of
//!   D is TMEM lane `i`, column `j` is column `d.col + j`. A (M×K) and B
//!   (N×K) come from shared-memory descriptors (the wgmma canonical
//!   layouts, `wgmma::Desc`; the tcgen05 descriptor has a 3-bit swizzle
//!   field at bits 61–63 and the fixed version `0b001` at 46–48). The
//!   32-bit instruction descriptor gives the formats, negation, transposes
//!   (MN-major operands), N and M ([`IDesc::decode`]).
//! - Asynchrony: the MMA reads its shared operands and writes D at some
//!   moment between issue and the completion that `tcgen05.commit`
//!   reports as an arrive-on of an mbarrier (the thread's async agent,
//!   exactly as `cp.async.mbarrier.arrive`). The values are computed at
//!   issue; the D cells are in flight as an asynchronous write and the
//!   operand bytes as an asynchronous read until that phase completes
//!   (`async_copy.rs`), so a `tcgen05.ld` of D or a write of an operand
//!   not ordered after the phase is a race naming both instructions. MMAs
//!   of one thread execute in issue order (a chained MMA accumulating on
//!   D is not a race).
//! - The `.sync.aligned` forms (`alloc`, `dealloc`, `relinquish`, `ld`,
//!   `st`, `wait`) are warp meetings (`tmem_meet`): all 32 lanes at the
//!   same instruction, or a divergence.
//! - `tcgen05.ld/st` `.32x32b`, `.16x64b`, `.16x128b`, `.16x256b`
//!   (warp-collective): only lanes `32·(w % 4) ..+32` are open to warp
//!   `w`; register `i` of lane `l` holds the cell [`frag_cell`] gives
//!   (`.32x32b`: lane `taddr.lane + l`, column `taddr.col + i`). The loaded
//!   registers are not valid before `tcgen05.wait::ld` (an access before
//!   it is a register race); stored cells are in flight until
//!   `tcgen05.wait::st`.
//! - Ordering (PTX ISA, "Memory consistency model for 5th generation of
//!   TensorCore operations"): the asynchronous tcgen05 operations (`ld`,
//!   `st`, `mma`) are not ordered with the thread's other operations by
//!   program order. Their Tensor Memory accesses are stamped by the
//!   thread's *tcgen05 agent* (clock slot `t + 2·nthreads`), which learns
//!   what the thread knows only at `tcgen05.fence::after_thread_sync`, and
//!   whose operations the thread learns (so releases at its later
//!   synchronisation) only at `tcgen05.fence::before_thread_sync` — or at
//!   `tcgen05.commit`, which performs that fence implicitly, and at a
//!   `dealloc`, a synchronous instruction ordered after its own thread's
//!   earlier tcgen05 operations. A thread's MMAs are pipelined: the
//!   accumulator of a later one is judged at issue with the thread's
//!   earlier MMAs exempt. `ld` reads stay in flight until `wait::ld`,
//!   `st` writes until `wait::st`.
//!
//! Every other form (`.cta_group::2`, `tcgen05.cp`, `.shift`, block
//! scaling, `.sp`, `.ws`, multicast commit) stops in the decoder as
//! unsupported by name; modelled instructions with unmodelled operands
//! (M = 64, A in TMEM, `.16x32bx2`, `.pack::16b`, fp6/fp4, f16
//! accumulators) are unsupported here, by name.

use ptxeq_ir::{
    AddrBase, Address, InstrData, KernelIr, Operand, StateSpace, Tcgen05Kind, Tcgen05Op, TmemShape,
};

use super::mem::Target;
use super::values::{IntArg, PredArg};
use super::wgmma::{Desc, SHARED_PACK_BASE};
use super::{Engine, Flow, R, Status, Wait, unpack_instr};
use crate::domain::{Domain, Fmt, UnOp};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, WaitGroup, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::memory::{Init, Region, Space};
use crate::race::{Acc, Kind};
use crate::value::Value;

/// TMEM lanes per CTA.
pub(crate) const LANES: u64 = 128;
/// TMEM 32-bit columns per lane.
pub(crate) const COLS: u64 = 512;

/// Race-message labels of the in-flight operations (`async_copy.rs`).
const MMA_LABEL: (&str, &str) = (
    "tcgen05.mma",
    "the mbarrier phase a later tcgen05.commit of that thread arrives on completes",
);
const ST_LABEL: (&str, &str) = ("tcgen05.st", "that thread's tcgen05.wait::st");
const LD_LABEL: (&str, &str) = ("tcgen05.ld", "that thread's tcgen05.wait::ld");

/// Clock-slot blocks per thread: the thread itself, its async agent
/// (`t + nthreads`: copies and commits completing on an mbarrier) and, in a
/// kernel that uses Tensor Memory, its tcgen05 agent (`t + 2·nthreads`:
/// the Tensor Memory accesses of its asynchronous tcgen05 operations);
/// then, with `multicast`, a block for the multicast copies other CTAs'
/// threads land here (`tma.rs`) and, with `exec`, a last block of
/// execution slots (`exec_order.rs`).
pub(crate) fn clock_blocks(mbar_agents: bool, tmem: bool, multicast: bool, exec: bool) -> usize {
    let agents = if tmem {
        3
    } else if mbar_agents {
        2
    } else {
        1
    };
    agents + usize::from(multicast) + usize::from(exec)
}

/// Byte offset of cell `(lane, col)` in the TMEM region.
pub(crate) fn cell(lane: u64, col: u64) -> u64 {
    (lane * COLS + col) * 4
}

/// The data-path shapes of `tcgen05.ld/st` that are modelled, with their
/// geometry: (TMEM lanes a warp touches, 32-bit columns per `.xN` repeat,
/// registers per thread per repeat).
fn shape_geometry(shape: TmemShape) -> Option<(u64, u64, u64)> {
    match shape {
        TmemShape::S32x32b => Some((32, 1, 1)),
        TmemShape::S16x64b => Some((16, 2, 1)),
        TmemShape::S16x128b => Some((16, 4, 2)),
        TmemShape::S16x256b => Some((16, 8, 4)),
        TmemShape::S16x32bx2 => None,
    }
}

/// The Tensor Memory cell, as (lane, column) offsets from the access's
/// first lane and column, that register `i` of lane `l` (0..32) of the
/// warp holds in a `tcgen05.ld/st` of `shape` (PTX ISA, "Matrix fragments
/// for tcgen05.ld/st"; the ISA draws these layouts as figures):
///
/// - `.32x32b`: lane `l`, column `i`.
/// - `.16x256b` (per repeat `r = i / 4`, `j = i % 4`): lane `l / 4` for
///   `j < 2` and `l / 4 + 8` for `j ≥ 2`, column `8r + 2·(l % 4) + j % 2`
///   — the `mma.m16n8` f32 accumulator fragment, repeated along columns.
/// - `.16x128b` (`r = i / 2`): lane `l / 4 + 8·(i % 2)`, column
///   `4r + l % 4`.
/// - `.16x64b`: lane `8·(l % 2) + l / 4`, column `2i + (l / 2) % 2`.
///
/// `None` for `.16x32bx2` (not modelled).
pub(crate) fn frag_cell(shape: TmemShape, l: u64, i: u64) -> Option<(u64, u64)> {
    Some(match shape {
        TmemShape::S32x32b => (l, i),
        TmemShape::S16x256b => {
            let (r, j) = (i / 4, i % 4);
            (l / 4 + 8 * (j / 2), 8 * r + 2 * (l % 4) + j % 2)
        }
        TmemShape::S16x128b => (l / 4 + 8 * (i % 2), 4 * (i / 2) + l % 4),
        TmemShape::S16x64b => (8 * (l % 2) + l / 4, 2 * i + (l / 2) % 2),
        TmemShape::S16x32bx2 => return None,
    })
}

/// Runs of consecutive cells of one lane: (lane, first column, count).
fn cell_runs(cells: &[(u64, u64)]) -> Vec<(u64, u64, u64)> {
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    for &(lane, col) in cells {
        match out.last_mut() {
            Some(r) if r.0 == lane && r.1 + r.2 == col => r.2 += 1,
            _ => out.push((lane, col, 1)),
        }
    }
    out
}

/// Whether a kernel uses tcgen05 (it then gets a TMEM region).
pub(crate) fn uses_tmem(ir: &KernelIr) -> bool {
    ir.instrs
        .iter()
        .any(|i| matches!(i.instr, ptxeq_ir::Instr::Tcgen05(_)))
}

/// The TMEM region: cells start uninitialised, in no address lookup.
pub(crate) fn region() -> Region {
    Region {
        name: "tensor memory (TMEM, cell = lane·512 + column)".into(),
        space: Space::Shared,
        base: 0,
        size: LANES * COLS * 4,
        elem: 4,
        init: Init::Uninit,
        tensor: None,
    }
}

/// A decoded tcgen05 instruction descriptor (`.kind::f16`, `.kind::tf32`,
/// `.kind::f8f6f4`; PTX ISA table "Instruction descriptor format").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct IDesc {
    pub m: u32,
    pub n: u32,
    pub a: Fmt,
    pub b: Fmt,
    /// Bytes per A/B element.
    pub size: u64,
    /// K of one MMA.
    pub k: u32,
    pub neg_a: bool,
    pub neg_b: bool,
    /// MN-major A / B (bits 15, 16).
    pub trans_a: bool,
    pub trans_b: bool,
}

impl IDesc {
    /// Decodes `raw` for `kind`; `Err` names what is not modelled (or
    /// invalid) in words.
    pub(crate) fn decode(kind: Tcgen05Kind, raw: u32) -> Result<IDesc, String> {
        let bit = |i: u32| raw >> i & 1 == 1;
        if bit(2) {
            return Err("sparsity (instruction descriptor bit 2) is not modelled".into());
        }
        if raw & 3 != 0 {
            return Err("a sparsity selector (bits 0-1) without sparsity".into());
        }
        if bit(3) {
            return Err("saturation (bit 3) applies to .kind::i8 only".into());
        }
        for r in [6, 23, 29] {
            if bit(r) {
                return Err(format!("reserved bit {r} is set"));
            }
        }
        if raw >> 30 != 0 {
            return Err("a maximum B shift (bits 30-31) is for .ws only".into());
        }
        match raw >> 4 & 3 {
            1 => {}
            0 => return Err("f16 accumulators (D type F16) are not modelled".into()),
            d => return Err(format!("D type {d} is not valid for this .kind")),
        }
        let fmt = |code: u32| -> Result<(Fmt, u64, u32), String> {
            match (kind, code) {
                (Tcgen05Kind::F16, 0) => Ok((Fmt::F16, 2, 16)),
                (Tcgen05Kind::F16, 1) => Ok((Fmt::Bf16, 2, 16)),
                (Tcgen05Kind::Tf32, 2) => Ok((Fmt::F32, 4, 8)),
                (Tcgen05Kind::F8f6f4, 0) => Ok((Fmt::E4m3, 1, 32)),
                (Tcgen05Kind::F8f6f4, 1) => Ok((Fmt::E5m2, 1, 32)),
                (Tcgen05Kind::F8f6f4, 3..=5) => {
                    Err("fp6/fp4 inputs (E2M3, E3M2, E2M1) are not modelled".into())
                }
                (Tcgen05Kind::I8, _) => Err(".kind::i8 (integer MMA) is not modelled".into()),
                (k, c) => Err(format!(
                    "A/B type code {c} is not valid for .{}",
                    k.as_str()
                )),
            }
        };
        let (a, size, k) = fmt(raw >> 7 & 7)?;
        let (b, bsize, _) = fmt(raw >> 10 & 7)?;
        if bsize != size {
            return Err("A and B of different sizes".into());
        }
        let m = (raw >> 24 & 0x1f) << 4;
        let n = (raw >> 17 & 0x3f) << 3;
        let (trans_a, trans_b) = (bit(15), bit(16));
        if (trans_a || trans_b) && size != 2 {
            return Err("transposed (MN-major) operands are modelled for f16/bf16 only".into());
        }
        Ok(IDesc {
            m,
            n,
            a,
            b,
            size,
            k,
            neg_a: bit(13),
            neg_b: bit(14),
            trans_a,
            trans_b,
        })
    }
}

/// Decodes a tcgen05 shared-memory matrix descriptor into the wgmma
/// layout description (the canonical layouts agree; the encodings
/// differ in the swizzle field and the version bits).
pub(crate) fn smem_desc(raw: u64) -> Result<Desc, String> {
    let field = |lo: u32| ((raw >> lo) & 0x3FFF) << 4;
    if raw >> 46 & 7 != 1 {
        return Err(format!(
            "descriptor {raw:#x}: bits 46-48 must hold the fixed value 0b001 (a wgmma-style descriptor?)"
        ));
    }
    if raw >> 52 & 1 == 1 {
        return Err(format!(
            "descriptor {raw:#x}: the absolute leading-dimension mode (bit 52) is not modelled"
        ));
    }
    let base_offset = ((raw >> 49) & 7) as u8;
    if base_offset != 0 {
        return Err(format!(
            "descriptor {raw:#x}: matrix base offset {base_offset} (only 0 is modelled)"
        ));
    }
    let swizzle = match raw >> 61 {
        0 => 0,
        2 => 128,
        4 => 64,
        6 => 32,
        1 => {
            return Err(format!(
                "descriptor {raw:#x}: 128-byte swizzle with 32-byte atoms is not modelled"
            ));
        }
        s => {
            return Err(format!(
                "descriptor {raw:#x}: swizzle mode {s} is not valid"
            ));
        }
    };
    Ok(Desc {
        start: SHARED_PACK_BASE | field(0),
        lbo: field(16),
        sbo: field(32),
        base_offset,
        swizzle,
    })
}

/// What one thread's lane of a `tcgen05.ld` / `tcgen05.st` touches
/// ([`Engine::tmem_access`]).
struct TmemAccess {
    region: u32,
    /// The registers of the vector operand.
    regs: Vec<Operand>,
    /// Per register: its TMEM (lane, column) ([`frag_cell`]).
    cells: Vec<(u64, u64)>,
}

/// A warp rendezvous of `alloc` / `dealloc` / `relinquish_alloc_permit`.
struct Rdv {
    instr: u32,
    arrived: u32,
    /// Per lane: the two scalar operands (address / column count).
    args: Vec<(u64, u64)>,
}

/// Per-CTA Tensor Memory state.
pub(crate) struct TmemState {
    /// The TMEM region in `MemState` (kernels without tcgen05 have none).
    pub(crate) region: Option<u32>,
    /// Per column: the `alloc` that holds it (packed instruction).
    cols: Vec<Option<u32>>,
    /// The `relinquish_alloc_permit` executed, if any.
    relinquished: Option<u32>,
    /// Per warp: pending rendezvous.
    pending: Vec<Option<Rdv>>,
    /// Per thread: in-flight copies of its MMAs (`async_copy.rs` ids).
    mmas: Vec<Vec<u32>>,
    /// Per thread: (register slot, instr) loaded by a `tcgen05.ld` not yet
    /// waited for.
    ld_busy: Vec<Vec<(usize, u32)>>,
    /// Threads with a non-empty `ld_busy` (the fast path of every step).
    pub(crate) ld_threads: u32,
    /// Per thread: in-flight `tcgen05.st` copies.
    st_pending: Vec<Vec<u32>>,
    /// Per thread: in-flight `tcgen05.ld` reads of Tensor Memory.
    ld_pending: Vec<Vec<u32>>,
    /// While a tcgen05 operation's Tensor Memory access is tracked: the
    /// clock slot that stamps it (the thread's tcgen05 agent; `mem.rs`).
    pub(crate) stamp: Option<u32>,
    /// While a `tcgen05.mma`'s accumulator is tracked at issue: the
    /// issuing thread and its async agent, whose earlier MMAs are
    /// pipelined with this one (ordered before it without a fence).
    pub(crate) pipelined: Option<(u32, u32)>,
}

impl TmemState {
    pub(crate) fn new(threads: usize, region: Option<u32>) -> Self {
        let on = region.is_some();
        let per = |n: usize| if on { n } else { 0 };
        TmemState {
            region,
            cols: vec![None; per(COLS as usize)],
            relinquished: None,
            pending: (0..per(threads.div_ceil(32))).map(|_| None).collect(),
            mmas: vec![Vec::new(); per(threads)],
            ld_busy: vec![Vec::new(); per(threads)],
            ld_threads: 0,
            st_pending: vec![Vec::new(); per(threads)],
            ld_pending: vec![Vec::new(); per(threads)],
            stamp: None,
            pipelined: None,
        }
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Entry point for every `tcgen05.*` instruction.
    pub(crate) fn tcgen05(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        op: &Tcgen05Op,
    ) -> R<Flow> {
        match *op {
            Tcgen05Op::Alloc | Tcgen05Op::Dealloc | Tcgen05Op::Relinquish => {
                self.tmem_alloc_op(t, info, ins, op)
            }
            // `.sync.aligned`: each lane's effect happens as it arrives
            // (it concerns only its own TMEM lane and registers), then the
            // warp meets.
            Tcgen05Op::Ld { shape, num, pack } => {
                self.tmem_ld(t, info, ins, shape, num, pack)?;
                self.tmem_meet_after(t, ins)
            }
            Tcgen05Op::St { shape, num, unpack } => {
                self.tmem_st(t, info, ins, shape, num, unpack)?;
                self.tmem_meet_after(t, ins)
            }
            Tcgen05Op::Wait { st: false } => {
                if !self.cta.tmem.ld_busy[t as usize].is_empty() {
                    self.cta.tmem.ld_busy[t as usize].clear();
                    self.cta.tmem.ld_threads -= 1;
                }
                let c = self.tc_slot(t);
                for id in std::mem::take(&mut self.cta.tmem.ld_pending[t as usize]) {
                    self.complete_copy_as(id, c);
                }
                self.tmem_meet_after(t, ins)
            }
            Tcgen05Op::Wait { st: true } => {
                let c = self.tc_slot(t);
                for id in std::mem::take(&mut self.cta.tmem.st_pending[t as usize]) {
                    self.complete_copy_as(id, c);
                }
                self.tmem_meet_after(t, ins)
            }
            Tcgen05Op::Fence { after: false } => {
                self.tc_fence_before(t);
                Ok(Flow::Next)
            }
            Tcgen05Op::Fence { after: true } => {
                self.tc_fence_after(t);
                Ok(Flow::Next)
            }
            Tcgen05Op::Mma { kind, a_tmem } => self.tmem_mma(t, info, ins, kind, a_tmem),
            Tcgen05Op::Commit { .. } => {
                // The commit performs tcgen05.fence::before_thread_sync
                // implicitly (PTX ISA, canonical sync patterns): the MMAs
                // it tracks are released with its arrive-on.
                self.tc_fence_before(t);
                let ids: Vec<u32> = std::mem::take(&mut self.cta.tmem.mmas[t as usize])
                    .into_iter()
                    .filter(|id| self.async_copy_info(*id).is_some())
                    .collect();
                self.mbar_async_arrive(t, info, ins.operands.first(), "tcgen05.commit", ids)?;
                Ok(Flow::Next)
            }
        }
    }

    /// Clock-slot blocks per thread of this engine ([`clock_blocks`]).
    pub(crate) fn clock_blocks(&self) -> usize {
        clock_blocks(
            self.mbar_agents,
            self.cta.tmem.region.is_some(),
            self.multicast,
            self.exec_slots,
        )
    }

    /// Clock-slot blocks of the thread and its agents (the blocks before
    /// the multicast and execution slots).
    pub(crate) fn agent_blocks(&self) -> usize {
        clock_blocks(
            self.mbar_agents,
            self.cta.tmem.region.is_some(),
            false,
            false,
        )
    }

    /// The clock slot of thread `t`'s tcgen05 agent: it stamps the Tensor
    /// Memory accesses of `t`'s asynchronous tcgen05 operations (`ld`,
    /// `st`, `mma`), which are ordered after what `t` knows only from its
    /// last `tcgen05.fence::after_thread_sync`, and known to `t` (so to
    /// whoever synchronises with `t` afterwards) only from its next
    /// `tcgen05.fence::before_thread_sync`.
    fn tc_slot(&self, t: u32) -> u32 {
        t + 2 * self.cta.nthreads
    }

    /// `tcgen05.fence::before_thread_sync` (also implied by
    /// `tcgen05.commit` and by a `dealloc`): the thread learns its tcgen05
    /// agent's operations so far, so its later synchronisation releases
    /// them.
    fn tc_fence_before(&mut self, t: u32) {
        let c = self.tc_slot(t);
        self.clocks.learn(t, c);
    }

    /// `tcgen05.fence::after_thread_sync`: the thread's tcgen05 agent
    /// learns everything the thread knows (what its earlier
    /// synchronisation acquired), so its later tcgen05 operations are
    /// ordered after it.
    fn tc_fence_after(&mut self, t: u32) {
        let c = self.tc_slot(t);
        self.clocks.learn(c, t);
    }

    /// Tracks a Tensor Memory access of an asynchronous tcgen05 operation
    /// of thread `t`, stamped by its tcgen05 agent.
    fn track_tc(
        &mut self,
        t: u32,
        r: u32,
        off: u64,
        len: u64,
        kind: Kind,
        stored: Option<&Value<D::Val>>,
    ) {
        self.cta.tmem.stamp = Some(self.tc_slot(t));
        let a = Acc {
            kind,
            ..Acc::default()
        };
        self.track(t, Target::Cta(r), off, len, a, stored);
        self.cta.tmem.stamp = None;
    }

    /// The clause race messages on Tensor Memory end with (`mem.rs`).
    pub(crate) fn tmem_race_hint(&self, r: u32) -> String {
        if self.cta.tmem.region != Some(r) {
            return String::new();
        }
        " (Tensor Memory accesses of tcgen05 operations are ordered across thread synchronisation only when a tcgen05.fence::before_thread_sync, or a tcgen05.commit, separates the earlier operation from the synchronisation and a tcgen05.fence::after_thread_sync separates the synchronisation from the later operation)".into()
    }

    /// The TMEM region index (every tcgen05 kernel has one).
    fn tmem_region(&mut self, t: u32) -> R<u32> {
        match self.cta.tmem.region {
            Some(r) => Ok(r),
            None => Err(self.unsupported(t, "tcgen05", "no Tensor Memory region".into())),
        }
    }

    /// A concrete integer operand of a tcgen05 instruction (an address in
    /// brackets is read through its base register).
    fn tc_int(&mut self, t: u32, info: &FuncInfo, op: &Operand, w: u32, what: &str) -> R<u64> {
        let (op, off) = match op {
            Operand::Addr(Address {
                base: AddrBase::Reg(r),
                offset,
            }) => (Operand::Reg(*r), *offset),
            Operand::Addr(Address {
                base: AddrBase::Imm(v),
                offset,
            }) => return Ok(v.wrapping_add(*offset as u64)),
            other => (other.clone(), 0),
        };
        match self.read_int(t, info, &op, w)? {
            IntArg::Known(v) => Ok(v.wrapping_add(off as u64) & (u64::MAX >> (64 - w))),
            IntArg::Undef => Err(self.uninit_register(t, what)),
            _ => Err(self.unsupported(
                t,
                "tcgen05 operand not a concrete value",
                format!("{what} is computed from tensor values"),
            )),
        }
    }

    /// Columns `[col, col + n)` must be allocated.
    fn tmem_check_cols(&mut self, t: u32, col: u64, n: u64, what: &str) -> R<()> {
        let bad = (col..col + n).find(|&c| {
            c >= COLS
                || self
                    .cta
                    .tmem
                    .cols
                    .get(c as usize)
                    .is_none_or(Option::is_none)
        });
        if let Some(c) = bad {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "tensor memory out of bounds",
                format!(
                    "{what} accesses Tensor Memory columns {col}..{} but column {c} is not allocated (tcgen05.alloc)",
                    col + n
                ),
            ));
        }
        Ok(())
    }

    /// `alloc` / `dealloc` / `relinquish_alloc_permit`: a warp rendezvous;
    /// the last lane to arrive performs it once.
    fn tmem_alloc_op(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        op: &Tcgen05Op,
    ) -> R<Flow> {
        let ops = &ins.operands;
        let args = match op {
            Tcgen05Op::Alloc => {
                let n = self.tc_int(t, info, &ops[1], 32, "the tcgen05.alloc column count")?;
                (0, n)
            }
            Tcgen05Op::Dealloc => {
                let a = self.tc_int(t, info, &ops[0], 32, "the tcgen05.dealloc address")?;
                let n = self.tc_int(t, info, &ops[1], 32, "the tcgen05.dealloc column count")?;
                (a, n)
            }
            _ => (0, 0),
        };
        if !self.tmem_meet(t, ins, args, true)? {
            return Ok(Flow::Block);
        }
        match op {
            Tcgen05Op::Alloc => self.tmem_do_alloc(t, info, ins, args.1)?,
            Tcgen05Op::Dealloc => self.tmem_do_dealloc(t, args.0, args.1)?,
            _ => {
                let instr = self.cur_instr;
                self.cta.tmem.relinquished.get_or_insert(instr);
            }
        }
        self.tmem_release(t);
        Ok(Flow::Next)
    }

    /// A `.sync.aligned` tcgen05 instruction: all 32 lanes of the warp
    /// meet at it (a lane that has exited, or lanes waiting at another
    /// tcgen05 collective, is a divergence). Returns whether this lane
    /// completes the meeting (the caller then acts once and calls
    /// [`Engine::tmem_release`]); otherwise the lane is parked. With
    /// `uniform`, every lane must bring the same `args`.
    fn tmem_meet(&mut self, t: u32, ins: &InstrData, args: (u64, u64), uniform: bool) -> R<bool> {
        let w = (t / 32) as usize;
        if self.cta.live[w] != u32::MAX {
            let what = ins.instr.mnemonic();
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "{what} is warp-collective (.sync.aligned), but lanes of warp {w} have exited or do not exist"
                ),
            ));
        }
        let instr = self.cur_instr;
        if let Some(p) = &self.cta.tmem.pending[w]
            && p.instr != instr
        {
            let what = ins.instr.mnemonic();
            let other = unpack_instr(p.instr);
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "{what} is warp-collective (.sync.aligned), but other lanes of warp {w} wait at the tcgen05 instruction at {other}"
                ),
            ));
        }
        let p = self.cta.tmem.pending[w].get_or_insert_with(|| Rdv {
            instr,
            arrived: 0,
            args: Vec::new(),
        });
        p.arrived |= 1 << (t % 32);
        if uniform {
            p.args.push(args);
        }
        if p.arrived != u32::MAX {
            self.cta.threads[t as usize].status = Status::Blocked(Wait::Collective);
            return Ok(false);
        }
        let Some(p) = self.cta.tmem.pending[w].take() else {
            return Ok(true);
        };
        self.stats.warp_collectives += 1;
        if p.args.iter().any(|a| *a != args) {
            let what = ins.instr.mnemonic();
            return Err(self.unsupported(
                t,
                "tcgen05 operands differ across the warp",
                format!("the operands of {what} must be the same in all 32 lanes"),
            ));
        }
        Ok(true)
    }

    /// Wakes the lanes of `t`'s warp parked at a completed meeting.
    fn tmem_release(&mut self, t: u32) {
        let base = t / 32 * 32;
        for x in base..base + 32 {
            if x != t && self.cta.threads[x as usize].status == Status::Blocked(Wait::Collective) {
                self.wake(x);
            }
        }
    }

    /// The warp meeting of `tcgen05.ld/st/wait`, whose per-lane effect has
    /// been done: parks the lane or completes the meeting.
    fn tmem_meet_after(&mut self, t: u32, ins: &InstrData) -> R<Flow> {
        if self.tmem_meet(t, ins, (0, 0), false)? {
            self.tmem_release(t);
            Ok(Flow::Next)
        } else {
            Ok(Flow::Block)
        }
    }

    fn tmem_do_alloc(&mut self, t: u32, info: &FuncInfo, ins: &InstrData, n: u64) -> R<()> {
        if let Some(r) = self.cta.tmem.relinquished {
            let at = unpack_instr(r);
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "tcgen05.alloc after relinquish_alloc_permit",
                format!(
                    "tcgen05.alloc after the CTA gave up its allocation permit (tcgen05.relinquish_alloc_permit at {at}): not allowed by the PTX ISA"
                ),
            ));
        }
        if !(32..=COLS).contains(&n) || !n.is_power_of_two() {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "invalid tcgen05.alloc column count",
                format!(
                    "tcgen05.alloc of {n} columns: the count must be a power of two from 32 to 512"
                ),
            ));
        }
        let free = (0..COLS / n).map(|i| i * n).find(|&c| {
            self.cta.tmem.cols[c as usize..(c + n) as usize]
                .iter()
                .all(Option::is_none)
        });
        let Some(col) = free else {
            return Err(self.fail(
                t,
                FindingKind::Deadlock,
                "tcgen05.alloc cannot be satisfied",
                format!(
                    "tcgen05.alloc of {n} columns blocks forever: the CTA already holds the Tensor Memory it would need"
                ),
            ));
        };
        let instr = self.cur_instr;
        for c in col..col + n {
            self.cta.tmem.cols[c as usize] = Some(instr);
        }
        let Some(Operand::Addr(dst)) = ins.operands.first() else {
            return Err(self.unsupported(t, "tcgen05.alloc operands", String::new()));
        };
        let dst = dst.clone();
        self.store(t, info, StateSpace::Shared, &dst, Value::Bits(col), 4)
    }

    fn tmem_do_dealloc(&mut self, t: u32, taddr: u64, n: u64) -> R<()> {
        let (lane, col) = (taddr >> 16, taddr & 0xffff);
        let bad = lane != 0
            || !(32..=COLS).contains(&n)
            || !n.is_power_of_two()
            || col + n > COLS
            || self.cta.tmem.cols[col as usize..(col + n) as usize]
                .iter()
                .any(Option::is_none);
        if bad {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "tcgen05.dealloc of unallocated columns",
                format!(
                    "tcgen05.dealloc of {n} columns at Tensor Memory address {taddr:#x} (lane {lane}, column {col}): not columns this CTA holds (never allocated, already deallocated, or an invalid count)"
                ),
            ));
        }
        // Freeing the columns is a write of all their cells: an access by
        // another thread not ordered before the dealloc races with it, and
        // the cells hold no value afterwards. The dealloc is a synchronous
        // tcgen05 instruction, ordered after the thread's own earlier
        // tcgen05 operations; those of other threads must be released to
        // it (fence::before_thread_sync, then synchronisation).
        self.tc_fence_before(t);
        let r = self.tmem_region(t)?;
        for lane in 0..LANES {
            let off = cell(lane, col);
            let a = Acc {
                kind: Kind::PlainWrite,
                ..Acc::default()
            };
            self.track(t, Target::Cta(r), off, n * 4, a, None);
            let slots = &mut self.mem.slots[r as usize];
            for b in off..off + n * 4 {
                slots.set(b as usize, crate::memory::Slot::Unwritten);
            }
        }
        for c in col..col + n {
            self.cta.tmem.cols[c as usize] = None;
        }
        Ok(())
    }

    /// After the run: columns still allocated when every thread exited.
    pub(crate) fn tmem_finish(&mut self) {
        if self.cta.tmem.region.is_none() {
            return;
        }
        let live =
            (0..self.cta.nthreads).any(|x| self.cta.threads[x as usize].status != Status::Exited);
        if live {
            return;
        }
        let held: Vec<(usize, u32)> = self
            .cta
            .tmem
            .cols
            .iter()
            .enumerate()
            .filter_map(|(c, a)| a.map(|a| (c, a)))
            .collect();
        if let Some(&(c, a)) = held.first() {
            let at = unpack_instr(a);
            let f = Finding::new(
                FindingKind::OutOfBounds,
                format!(
                    "the CTA exits with {} Tensor Memory columns still allocated (from column {c}, by the tcgen05.alloc at {at}): the PTX ISA requires every allocation to be freed with tcgen05.dealloc before the kernel exits",
                    held.len()
                ),
            )
            .at(None, Some(at))
            .with_reason("Tensor Memory not deallocated");
            self.report(f);
        }
    }

    /// Warps blocked at an alloc rendezvous (`check_stuck`).
    pub(crate) fn tmem_wait_groups(&self) -> Vec<WaitGroup> {
        let mut out = Vec::new();
        for (w, p) in self.cta.tmem.pending.iter().enumerate() {
            let Some(p) = p else { continue };
            let ts: Vec<u32> = (0..32)
                .filter(|l| p.arrived & (1 << l) != 0)
                .map(|l| (w * 32) as u32 + l)
                .collect();
            out.push(WaitGroup {
                what: format!("tcgen05 warp-collective of warp {w}"),
                instr: unpack_instr(p.instr),
                threads: thread_ranges(ts),
                arrived: p.arrived.count_ones(),
                expected: 32,
            });
        }
        out
    }

    /// The TMEM cells of thread `t`'s registers in a `tcgen05.ld/st` of
    /// `shape` with `nregs` registers at `taddr`, checked against the
    /// warp's lane window (warp `w` may reach lanes `32·(w % 4)..+32`; a
    /// 16-lane shape starts at either half of it) and the allocation.
    fn tmem_cells(
        &mut self,
        t: u32,
        taddr: u64,
        shape: TmemShape,
        nregs: u64,
        what: &str,
    ) -> R<Vec<(u64, u64)>> {
        let (lane0, col) = (taddr >> 16, taddr & 0xffff);
        let q = u64::from((t / 32) % 4);
        let Some((lanes, width, per)) = shape_geometry(shape) else {
            return Err(self.unsupported(
                t,
                "tcgen05 data-path shape not modelled",
                shape.as_str().into(),
            ));
        };
        if !(32 * q..32 * q + 32).contains(&lane0) {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "tensor memory lane out of bounds",
                format!(
                    "{what} at Tensor Memory address {taddr:#x} starts at lane {lane0}, but warp {} (warp {q} of its warpgroup) may access only lanes {}..{}",
                    t / 32,
                    32 * q,
                    32 * q + 32
                ),
            ));
        }
        if !(lane0 - 32 * q).is_multiple_of(lanes) {
            return Err(self.unsupported(
                t,
                "tcgen05 data-path address not modelled",
                format!(
                    "{what}.{} at Tensor Memory lane {lane0}: a {lanes}-lane access is modelled starting at lane {} or {}",
                    shape.as_str(),
                    32 * q,
                    32 * q + 16
                ),
            ));
        }
        self.tmem_check_cols(t, col, nregs / per * width, what)?;
        let l = u64::from(t % 32);
        Ok((0..nregs)
            .filter_map(|i| frag_cell(shape, l, i))
            .map(|(dl, dc)| (lane0 + dl, col + dc))
            .collect())
    }

    fn tmem_shape_check(&mut self, t: u32, shape: TmemShape, packed: bool) -> R<u64> {
        let Some((_, _, per)) = shape_geometry(shape) else {
            return Err(self.unsupported(
                t,
                "tcgen05 data-path shape not modelled",
                format!(
                    "the .{} shape (.32x32b, .16x64b, .16x128b and .16x256b are modelled)",
                    shape.as_str()
                ),
            ));
        };
        if packed {
            return Err(self.unsupported(
                t,
                "tcgen05 form not modelled",
                ".pack::16b / .unpack::16b".into(),
            ));
        }
        Ok(per)
    }

    /// The prologue `tcgen05.ld` and `tcgen05.st` share: the shape check,
    /// the register vector (`.xN`: N registers), the concrete address and
    /// thread `t`'s TMEM lane and first column.
    #[allow(clippy::too_many_arguments)]
    fn tmem_access(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        shape: TmemShape,
        num: u8,
        packed: bool,
        ld: bool,
    ) -> R<TmemAccess> {
        let (what, regs, addr, role) = if ld {
            (
                "tcgen05.ld",
                ins.operands.first(),
                ins.operands.get(1),
                "destination",
            )
        } else {
            (
                "tcgen05.st",
                ins.operands.last(),
                ins.operands.first(),
                "source",
            )
        };
        let per = self.tmem_shape_check(t, shape, packed)?;
        let region = self.tmem_region(t)?;
        let (Some(regs), Some(addr)) = (regs, addr) else {
            return Err(self.unsupported(
                t,
                "tcgen05 operands",
                format!("{what} needs registers and a Tensor Memory address"),
            ));
        };
        let regs = regs.parts().to_vec();
        let n = u64::from(num) * per;
        if regs.len() as u64 != n || n > 128 {
            return Err(self.unsupported(
                t,
                if ld {
                    "tcgen05.ld operands"
                } else {
                    "tcgen05.st operands"
                },
                format!(
                    "{} {role} registers for .{}.x{num} ({n} expected, at most 128)",
                    regs.len(),
                    shape.as_str()
                ),
            ));
        }
        let taddr = self.tc_int(t, info, addr, 32, &format!("the {what} address"))?;
        let cells = self.tmem_cells(t, taddr, shape, n, what)?;
        Ok(TmemAccess {
            region,
            regs,
            cells,
        })
    }

    /// `tcgen05.ld.sync.aligned.shape.xN.b32 {d..}, [taddr]`.
    fn tmem_ld(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        shape: TmemShape,
        num: u8,
        pack: bool,
    ) -> R<()> {
        let TmemAccess {
            region: r,
            regs: parts,
            cells,
        } = self.tmem_access(t, info, ins, shape, num, pack, true)?;
        for (lane, col, len) in cell_runs(&cells) {
            let off = cell(lane, col);
            self.track_tc(t, r, off, len * 4, Kind::PlainRead, None);
            // The read is in flight until the thread's tcgen05.wait::ld.
            let id = self.track_async_op(t, (r, off, 0), Some((r, off, len * 4)), LD_LABEL);
            self.cta.tmem.ld_pending[t as usize].push(id);
        }
        let mut uninit = None;
        let mut vals = Vec::with_capacity(parts.len());
        for &(lane, col) in &cells {
            let (v, li) = self.read_tmem(r, cell(lane, col));
            if li && uninit.is_none() {
                uninit = Some((lane, col));
            }
            vals.push(v);
        }
        if let Some((lane, c)) = uninit {
            self.note(
                t,
                FindingKind::Uninitialised,
                format!(
                    "tcgen05.ld reads Tensor Memory lane {lane}, column {c}, which holds no value (allocated cells start uninitialised)"
                ),
                None,
            );
        }
        let mut slots = Vec::with_capacity(parts.len());
        for (p, v) in parts.iter().zip(vals) {
            self.write(t, info, p, v)?;
            let mut rs = Vec::new();
            p.collect_regs(&mut rs);
            slots.extend(rs.into_iter().map(|r| Self::slot(info, r)));
        }
        let instr = self.cur_instr;
        let b = &mut self.cta.tmem.ld_busy[t as usize];
        if b.is_empty() {
            self.cta.tmem.ld_threads += 1;
        }
        b.extend(slots.into_iter().map(|s| (s, instr)));
        Ok(())
    }

    /// One 4-byte TMEM cell: its value and whether it was never written.
    fn read_tmem(&mut self, r: u32, off: u64) -> (Value<D::Val>, bool) {
        let origin = self.cur_instr;
        let ri = r as usize;
        let (v, li) = crate::memory::load_value(
            &self.mem.slots[ri],
            &self.mem.regions[ri],
            off as usize,
            4,
            &mut self.d,
            origin,
        );
        (v, li.uninit)
    }

    /// `tcgen05.st.sync.aligned.shape.xN.b32 [taddr], {s..}`.
    fn tmem_st(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        shape: TmemShape,
        num: u8,
        unpack: bool,
    ) -> R<()> {
        let TmemAccess {
            region: r,
            regs: parts,
            cells,
        } = self.tmem_access(t, info, ins, shape, num, unpack, false)?;
        for (p, &(lane, col)) in parts.iter().zip(&cells) {
            let v = self.read(t, info, p, 32)?;
            let off = cell(lane, col);
            self.track_tc(t, r, off, 4, Kind::PlainWrite, Some(&v));
            crate::memory::store_value(&mut self.mem.slots[r as usize], off as usize, &v, 4);
        }
        for (lane, col, len) in cell_runs(&cells) {
            let id = self.track_async_op(t, (r, cell(lane, col), len * 4), None, ST_LABEL);
            self.cta.tmem.st_pending[t as usize].push(id);
        }
        Ok(())
    }

    /// Before every instruction of a thread with `tcgen05.ld` registers
    /// not yet waited for: an access to them is undefined per the ISA,
    /// reported as a register race.
    pub(crate) fn tmem_ld_check(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) {
        if matches!(
            ins.instr,
            ptxeq_ir::Instr::Tcgen05(Tcgen05Op::Wait { st: false })
        ) {
            return;
        }
        let mut regs = Vec::new();
        for o in &ins.operands {
            o.collect_regs(&mut regs);
        }
        for reg in regs {
            let s = Self::slot(info, reg);
            let Some(&(_, instr)) = self.cta.tmem.ld_busy[t as usize].iter().find(|e| e.0 == s)
            else {
                continue;
            };
            if !self.log.first_report((u32::MAX - 1, instr, self.cur_instr)) {
                return;
            }
            let first = AccessRef {
                thread: self.thread_ref(t),
                instr: unpack_instr(instr),
                kind: AccessKind::Write,
                cta: None,
            };
            let second = AccessRef {
                thread: self.thread_ref(t),
                instr: unpack_instr(self.cur_instr),
                kind: AccessKind::Read,
                cta: None,
            };
            let name = info
                .ir
                .regs
                .get(reg.index())
                .map(|x| x.name.clone())
                .unwrap_or_default();
            let msg = format!(
                "register race on {name} of {}: the tcgen05.ld at {} loads it asynchronously, and {} accesses it before a tcgen05.wait::ld (undefined behaviour per the PTX ISA)",
                first.thread, first.instr, second.instr
            );
            let mut f =
                Finding::new(FindingKind::Race, msg).at(Some(second.thread), Some(second.instr));
            f.accesses = vec![first, second];
            self.report(f);
            return;
        }
    }

    /// `tcgen05.mma.cta_group::1.kind [d], a-desc, b-desc, idesc, enable-input-d`.
    #[allow(clippy::too_many_lines)]
    fn tmem_mma(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        kind: Tcgen05Kind,
        a_tmem: bool,
    ) -> R<Flow> {
        if a_tmem {
            return Err(self.unsupported(
                t,
                "tcgen05.mma form not modelled",
                "A in Tensor Memory (`[a-tmem]` operand); only A from a shared-memory descriptor is modelled".into(),
            ));
        }
        let r = self.tmem_region(t)?;
        let ops = &ins.operands;
        let d_addr = self.tc_int(t, info, &ops[0], 32, "the tcgen05.mma D address")?;
        let raw_a = self.tc_int(t, info, &ops[1], 64, "the A matrix descriptor")?;
        let raw_b = self.tc_int(t, info, &ops[2], 64, "the B matrix descriptor")?;
        let raw_i = self.tc_int(t, info, &ops[3], 32, "the instruction descriptor")? as u32;
        let en = self.read(t, info, &ops[4], 1)?;
        let accumulate = match self.pred_of(t, &en)? {
            PredArg::Known(b) => b,
            PredArg::Undef => return Err(self.uninit_register(t, "the enable-input-d predicate")),
            _ => {
                return Err(self.unsupported(
                    t,
                    "tcgen05 operand not a concrete value",
                    "the enable-input-d predicate is computed from tensor values".into(),
                ));
            }
        };
        let id = match IDesc::decode(kind, raw_i) {
            Ok(d) => d,
            Err(e) => {
                return Err(self.unsupported(
                    t,
                    "tcgen05.mma form not modelled",
                    format!("instruction descriptor {raw_i:#x}: {e}"),
                ));
            }
        };
        if id.m != 128 {
            return Err(self.unsupported(
                t,
                "tcgen05.mma form not modelled",
                format!(
                    "M = {} (instruction descriptor {raw_i:#x}); only M = 128 (D row i = TMEM lane i) is modelled",
                    id.m
                ),
            ));
        }
        if id.n < 16 || id.n > 256 || !id.n.is_multiple_of(16) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "invalid tcgen05.mma shape",
                format!(
                    "N = {} in instruction descriptor {raw_i:#x}: with M = 128, N must be a multiple of 16 from 16 to 256",
                    id.n
                ),
            ));
        }
        let (m, n, k) = (id.m as usize, id.n as usize, id.k as usize);
        let (lane0, col0) = (d_addr >> 16, d_addr & 0xffff);
        if lane0 != 0 {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "tensor memory lane out of bounds",
                format!(
                    "tcgen05.mma D at Tensor Memory address {d_addr:#x} starts at lane {lane0}: an M = 128 accumulator occupies lanes 0..128"
                ),
            ));
        }
        self.tmem_check_cols(t, col0, n as u64, "tcgen05.mma D")?;
        // The accumulator, judged at issue as a write by the thread's
        // tcgen05 agent (ordered after earlier accesses of other threads
        // only through fence::after_thread_sync); the thread's earlier
        // MMAs are pipelined with this one (ordered before it).
        self.cta.tmem.pipelined = Some((t, t + self.cta.nthreads));
        for row in 0..m as u64 {
            self.track_tc(t, r, cell(row, col0), n as u64 * 4, Kind::PlainWrite, None);
        }
        self.cta.tmem.pipelined = None;
        let da = match smem_desc(raw_a) {
            Ok(d) => d,
            Err(e) => {
                return Err(self.unsupported(
                    t,
                    "tcgen05 descriptor not modelled",
                    format!("A {e}"),
                ));
            }
        };
        let db = match smem_desc(raw_b) {
            Ok(d) => d,
            Err(e) => {
                return Err(self.unsupported(
                    t,
                    "tcgen05 descriptor not modelled",
                    format!("B {e}"),
                ));
            }
        };
        let mut ranges: Vec<(u32, u64, u64)> = Vec::new();
        let mut a_tile: Vec<D::Val> = Vec::with_capacity(m * k);
        for row in 0..m {
            for c in 0..k {
                let v = self.tc_load(
                    t,
                    info,
                    &da,
                    row,
                    c,
                    &id,
                    id.a,
                    id.trans_a,
                    &mut ranges,
                    "A",
                )?;
                a_tile.push(if id.neg_a {
                    self.d.unary(UnOp::Neg, v)
                } else {
                    v
                });
            }
        }
        let mut b_tile: Vec<D::Val> = Vec::with_capacity(n * k);
        for col in 0..n {
            for c in 0..k {
                let v = self.tc_load(
                    t,
                    info,
                    &db,
                    col,
                    c,
                    &id,
                    id.b,
                    id.trans_b,
                    &mut ranges,
                    "B",
                )?;
                b_tile.push(if id.neg_b {
                    self.d.unary(UnOp::Neg, v)
                } else {
                    v
                });
            }
        }
        let Some(zero) = self.d.float_const(Fmt::F32, 0) else {
            return Err(self.unsupported(t, "tcgen05.mma", "no real zero in this domain".into()));
        };
        for row in 0..m {
            for j in 0..n {
                let off = cell(row as u64, col0 + j as u64);
                let mut acc = if accumulate {
                    let (v, uninit) = self.read_tmem(r, off);
                    if uninit {
                        return Err(self.fail(
                            t,
                            FindingKind::Uninitialised,
                            "",
                            format!(
                                "tcgen05.mma accumulates (enable-input-d is true) onto Tensor Memory lane {row}, column {}, which holds no value",
                                col0 + j as u64
                            ),
                        ));
                    }
                    match self.as_real(t, &v, Fmt::F32)? {
                        Some(x) => x,
                        None => {
                            return Err(self.fail(
                                t,
                                FindingKind::Uninitialised,
                                "",
                                format!(
                                    "tcgen05.mma accumulates onto Tensor Memory lane {row}, column {}, which holds no value",
                                    col0 + j as u64
                                ),
                            ));
                        }
                    }
                } else {
                    zero
                };
                for kk in 0..k {
                    acc = self.d.fma(a_tile[row * k + kk], b_tile[j * k + kk], acc);
                }
                crate::memory::store_value(
                    &mut self.mem.slots[r as usize],
                    off as usize,
                    &Value::data(acc, Fmt::F32),
                    4,
                );
            }
        }
        // Asynchrony: the operand bytes are read and D written until the
        // completion a tcgen05.commit reports.
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u64, u64)> = Vec::new();
        for (rr, off, len) in ranges {
            match merged.last_mut() {
                Some(l) if l.0 == rr && off <= l.1 + l.2 => l.2 = l.2.max(off + len - l.1),
                _ => merged.push((rr, off, len)),
            }
        }
        let mut ids = Vec::with_capacity(merged.len() + m);
        for &(rr, off, len) in &merged {
            self.check_async_proxy_read(t, rr, off, len);
            ids.push(self.track_async_op(t, (rr, off, 0), Some((rr, off, len)), MMA_LABEL));
        }
        for row in 0..m as u64 {
            ids.push(self.track_async_op(t, (r, cell(row, col0), n as u64 * 4), None, MMA_LABEL));
        }
        self.cta.tmem.mmas[t as usize].extend(ids);
        Ok(Flow::Next)
    }

    /// Loads element `(mn, k)` of a descriptor operand as thread `t`,
    /// recording its bytes.
    #[allow(clippy::too_many_arguments)]
    fn tc_load(
        &mut self,
        t: u32,
        info: &FuncInfo,
        d: &Desc,
        mn: usize,
        k: usize,
        id: &IDesc,
        fmt: Fmt,
        trans: bool,
        ranges: &mut Vec<(u32, u64, u64)>,
        which: &str,
    ) -> R<D::Val> {
        let at = if trans {
            match d.mnmajor(mn as u64, k as u64, id.size) {
                Some(at) => at,
                None => {
                    return Err(self.unsupported(
                        t,
                        "tcgen05.mma form not modelled",
                        format!(
                            "the transposed (MN-major) {which} operand: element ({mn}, {k}) needs a layout that is not modelled (only swizzled MN-major operands whose M/N extent fits one swizzle row are)"
                        ),
                    ));
                }
            }
        } else {
            d.kmajor(mn as u64, k as u64, id.size)
        };
        let addr = Address {
            base: AddrBase::Imm(at),
            offset: 0,
        };
        let Some((Target::Cta(r), off)) =
            self.resolve(t, info, StateSpace::Shared, &addr, id.size)?
        else {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "",
                format!(
                    "tcgen05.mma {which} operand element ({mn}, {k}) at shared address {at:#x} is outside every shared variable"
                ),
            ));
        };
        ranges.push((r, off, id.size));
        let v = self
            .load(t, info, StateSpace::Shared, &addr, id.size as u8)?
            .unwrap_or(Value::Undef);
        self.fp8_format_check(t, &v, fmt)?;
        match self.as_real(t, &v, fmt)? {
            Some(x) => Ok(x),
            None => Err(self.fail(
                t,
                FindingKind::Uninitialised,
                "",
                format!(
                    "tcgen05.mma {which} operand element ({mn}, {k}) at `{}`+{off} holds no value",
                    self.mem.regions[r as usize].name
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The corpus kernel's descriptor: f32 D (bit 4), f16 A/B (0), N = 64
    /// (64 >> 3 = 8 at bit 17), M = 128 (128 >> 4 = 8 at bit 24).
    #[test]
    fn instruction_descriptor_f16() {
        let raw = (1 << 4) | (8 << 17) | (8 << 24);
        let d = IDesc::decode(Tcgen05Kind::F16, raw).unwrap();
        assert_eq!((d.m, d.n, d.k, d.size), (128, 64, 16, 2));
        assert_eq!((d.a, d.b), (Fmt::F16, Fmt::F16));
        assert!(!d.neg_a && !d.neg_b && !d.trans_a && !d.trans_b);
        // bf16 A (1 at bit 7), f16 B, negate B (bit 14), transpose A (15).
        let raw2 = raw | (1 << 7) | (1 << 14) | (1 << 15);
        let d2 = IDesc::decode(Tcgen05Kind::F16, raw2).unwrap();
        assert_eq!((d2.a, d2.b), (Fmt::Bf16, Fmt::F16));
        assert!(d2.neg_b && d2.trans_a && !d2.neg_a && !d2.trans_b);
    }

    #[test]
    fn instruction_descriptor_tf32_fp8_and_refusals() {
        // tf32: A/B type 2, K = 8, N = 256 (32 at bit 17).
        let raw = (1 << 4) | (2 << 7) | (2 << 10) | (32 << 17) | (8 << 24);
        let d = IDesc::decode(Tcgen05Kind::Tf32, raw).unwrap();
        assert_eq!((d.n, d.k, d.size, d.a), (256, 8, 4, Fmt::F32));
        // tf32 code under .kind::f16 is invalid.
        assert!(IDesc::decode(Tcgen05Kind::F16, raw).is_err());
        // e4m3 x e5m2 for f8f6f4, K = 32.
        let f8 = (1 << 4) | (1 << 10) | (8 << 17) | (8 << 24);
        let d = IDesc::decode(Tcgen05Kind::F8f6f4, f8).unwrap();
        assert_eq!((d.a, d.b, d.k, d.size), (Fmt::E4m3, Fmt::E5m2, 32, 1));
        let e = IDesc::decode(Tcgen05Kind::F8f6f4, f8 | (5 << 7)).unwrap_err();
        assert!(e.contains("fp6/fp4"), "{e}");
        let e = IDesc::decode(Tcgen05Kind::F16, (8 << 17) | (8 << 24)).unwrap_err();
        assert!(e.contains("f16 accumulators"), "{e}");
        let e = IDesc::decode(Tcgen05Kind::F16, raw_f16() | 4).unwrap_err();
        assert!(e.contains("sparsity"), "{e}");
        let e = IDesc::decode(Tcgen05Kind::F16, raw_f16() | (1 << 23)).unwrap_err();
        assert!(e.contains("reserved bit 23"), "{e}");
    }

    fn raw_f16() -> u32 {
        (1 << 4) | (8 << 17) | (8 << 24)
    }

    /// Shared-memory descriptor: same address fields as wgmma, version
    /// 0b001 at bits 46-48, swizzle at 61-63 (2: 128B, 4: 64B, 6: 32B).
    #[test]
    fn smem_descriptor_fields() {
        let raw: u64 = (0x400 >> 4) | ((128 >> 4) << 16) | ((256u64 >> 4) << 32) | (1 << 46);
        let d = smem_desc(raw).unwrap();
        assert_eq!(d.start, SHARED_PACK_BASE | 0x400);
        assert_eq!((d.lbo, d.sbo, d.swizzle), (128, 256, 0));
        // No-swizzle K-major element (mn, k) of f16: core matrix rows of 16
        // bytes, LBO between core matrices along K, SBO along M/N.
        assert_eq!(d.kmajor(9, 10, 2), d.start + 16 + 256 + 128 + 4);
        for (code, bytes) in [(2u64, 128), (4, 64), (6, 32)] {
            assert_eq!(smem_desc(raw | code << 61).unwrap().swizzle, bytes);
        }
        assert!(
            smem_desc(raw | 1 << 61)
                .unwrap_err()
                .contains("32-byte atoms")
        );
        // A wgmma descriptor (no version bits) is refused.
        assert!(smem_desc(raw & !(1 << 46)).unwrap_err().contains("0b001"));
    }

    /// Every data-path shape covers its block (lanes × columns of `.x2`)
    /// exactly once across the warp's 32 lanes and their registers.
    #[test]
    fn fragments_cover_their_block_once() {
        for shape in [
            TmemShape::S32x32b,
            TmemShape::S16x64b,
            TmemShape::S16x128b,
            TmemShape::S16x256b,
        ] {
            let (lanes, width, per) = shape_geometry(shape).unwrap();
            let regs = 2 * per;
            let mut seen = std::collections::HashSet::new();
            for l in 0..32 {
                for i in 0..regs {
                    let (dl, dc) = frag_cell(shape, l, i).unwrap();
                    assert!(dl < lanes && dc < 2 * width, "{shape:?} {l} {i}");
                    assert!(seen.insert((dl, dc)), "{shape:?}: ({dl}, {dc}) twice");
                }
            }
            assert_eq!(seen.len() as u64, lanes * 2 * width, "{shape:?}");
        }
        assert!(frag_cell(TmemShape::S16x32bx2, 0, 0).is_none());
    }

    /// `.16x256b` holds, per repeat, the `mma.m16n8` f32 accumulator
    /// fragment (rows = TMEM lanes, columns = TMEM columns): the same
    /// layout `fragments::mma_element` gives for C.
    #[test]
    fn fragment_16x256b_is_the_mma_accumulator_layout() {
        use super::super::fragments::{MmaKind, Operand as MOp, mma_element};
        for l in 0..32u64 {
            for i in 0..8u64 {
                let (row, col) =
                    mma_element(MmaKind::M16n8k16Half, MOp::C, l as usize, (i % 4) as usize);
                let want = (row as u64, 8 * (i / 4) + col as u64);
                assert_eq!(
                    frag_cell(TmemShape::S16x256b, l, i),
                    Some(want),
                    "lane {l} reg {i}"
                );
            }
        }
    }

    /// `.16x128b` and `.16x64b` spot values: lane 5 holds, in `.16x128b`,
    /// lanes 1 and 9 of column 1 (then column 5 in the next repeat); in
    /// `.16x64b`, lane 8 + 1 of column 0 (then column 2).
    #[test]
    fn fragment_16x128b_and_16x64b_values() {
        let c = |s, i| frag_cell(s, 5, i).unwrap();
        assert_eq!(c(TmemShape::S16x128b, 0), (1, 1));
        assert_eq!(c(TmemShape::S16x128b, 1), (9, 1));
        assert_eq!(c(TmemShape::S16x128b, 2), (1, 5));
        assert_eq!(c(TmemShape::S16x64b, 0), (9, 0));
        assert_eq!(c(TmemShape::S16x64b, 1), (9, 2));
        assert_eq!(frag_cell(TmemShape::S16x64b, 2, 0), Some((0, 1)));
        assert_eq!(
            cell_runs(&[(0, 0), (0, 1), (0, 2), (8, 0), (0, 5)]),
            vec![(0, 0, 3), (8, 0, 1), (0, 5, 1)]
        );
    }

    /// `.32x32b`: cell (lane, col) is 32-bit word `lane * 512 + col`.
    #[test]
    fn cell_layout() {
        assert_eq!(cell(0, 0), 0);
        assert_eq!(cell(0, 511), 511 * 4);
        assert_eq!(cell(1, 0), 512 * 4);
        assert_eq!(cell(127, 511) + 4, region().size);
    }
}
