//! Hopper warpgroup matrix instructions: `wgmma.mma_async`, `wgmma.fence`,
//! `wgmma.commit_group`, `wgmma.wait_group N`.
//!
//! Semantics (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-
//! Accumulate"; docs/semantics.md, "wgmma and the async proxy"):
//!
//! - Every `wgmma.*` is `.sync.aligned` over a *warpgroup* (four
//!   consecutive warps, threads `128g .. 128g+127`): all 128 threads must
//!   reach the same instruction. ptxeq models each as a rendezvous of the
//!   128 threads; a missing or exited thread, or threads waiting at
//!   different `wgmma` instructions, is a divergence.
//! - `mma_async` computes `D = A·B + D` (`scale-d` true) or `D = A·B`
//!   over the reals (f16/bf16/tf32 rounding is the identity, as for
//!   `mma`, docs/semantics.md §2), `A` is 64×K, `B` is K×N. `A` comes from
//!   a shared-memory matrix descriptor or from registers (the `mma`
//!   m16n8kK A fragment, warp `w` holding rows `16w..16w+15`), `B` from a
//!   descriptor. `D` is the accumulator fragment: register `i` of lane `l`
//!   of warp `w` holds row `16w + l/4 + 8·((i%4)/2)`, column
//!   `8·(i/4) + 2·(l%4) + i%2` (two f16 elements per register for f16
//!   accumulators). `imm-scale-a/b = -1` negates the operand.
//! - Descriptors (64-bit): start address, leading and stride byte
//!   offsets (bits 0–13, 16–29, 32–45, each `>> 4`), base offset (49–51),
//!   swizzle (62–63: none, 128B, 64B, 32B). Element `(mn, k)` of a K-major
//!   operand (row `mn` of A, column `mn` of B) lies, without swizzle, at
//!   `start + (mn%8)·16 + (mn/8)·SBO + (k/T)·LBO + (k%T)·size` with
//!   `T = 16/size` elements per core-matrix row; with a swizzle of `P`
//!   bytes (32/64/128) the core-matrix rows are `P` bytes apart,
//!   `start + (mn%8)·P + (mn/8)·SBO + k·size`, and the address's 16-byte
//!   chunk bits 4.. are XORed with its bits 7.. (1, 2 or 3 bits). With
//!   `imm-trans` = 1 (f16/bf16) the operand is MN-major: a `P`-byte row
//!   holds `P/size` consecutive `mn` of one `k`, `start + mn·size +
//!   (k%8)·P + (k/8)·SBO`, then the same XOR (the layout of a TMA tile
//!   whose rows run along M/N, e.g. V in attention). The unswizzled
//!   MN-major layout, an MN-major operand wider than one swizzle row (the
//!   LBO step between atoms), a non-zero base offset, a descriptor
//!   that is not a concrete, warpgroup-uniform value and the sparse form
//!   are reported unsupported by name.
//! - fp8 inputs (`.e4m3`/`.e5m2`, A and B may differ, `k32` shapes, f32
//!   or f16 accumulators): elements are one byte, decoded exactly
//!   (`crate::narrow`); the layouts are the K-major ones above with
//!   `size = 1` (16 elements per core-matrix row); the A register
//!   fragment is the `mma.m16n8k32` 8-bit one (four elements per
//!   register, lowest byte first). The products are exact reals, like
//!   the f16 ones.
//! - Asynchrony: the shared-memory operands are read at some moment
//!   between the `mma_async` and the `wait_group` that retires its group.
//!   ptxeq reads the values at the rendezvous (as thread `128g`, the
//!   warpgroup's first thread, for race judgement) and keeps the bytes in
//!   flight (`async_copy.rs`, as a read) until the retiring wait: a write
//!   to them meanwhile by any thread is a race. The read is also an
//!   async-proxy read (`proxy.rs`): generic writes of those bytes need a
//!   `fence.proxy.async` ordered before it. The accumulator (and A)
//!   registers of an unretired `mma_async` must not be accessed by other
//!   instructions (undefined per the ISA; a further `mma_async` chaining
//!   on the same accumulators is allowed): reported as a register race.
//! - `setmaxnreg.{inc,dec}.sync.aligned` goes through the same
//!   rendezvous (all 128 threads of the warpgroup must execute the same
//!   one); it has no effect on values.
//! - A kernel that exits with unretired groups: nothing observes their
//!   results, so this alone is not reported; their operand bytes stay in
//!   flight to the end of the run (later writes by other threads race).
//! - `wgmma.fence`: a D or A register of an `mma_async` written by
//!   another instruction of the thread since the warpgroup's last
//!   `wgmma.fence` is reported as a register race (the ISA requires the
//!   fence between them; chained `mma_async` on the same accumulators need
//!   none). Reads of those registers before an `mma_async` are not
//!   tracked, and neither is the fence required between `mma_async` of
//!   different shapes on the same registers.

use std::collections::VecDeque;

use ptxeq_ir::{
    AddrBase, Address, Instr, InstrData, KernelIr, Operand, ScalarType, Shape, StateSpace, WgmmaOp,
};

use super::fragments::{self, MmaKind, Operand as MOp};
use super::mem::Target;
use super::values::{IntArg, PredArg};
use super::{Engine, Flow, R, Status, Wait, unpack_instr};
use crate::domain::{Domain, Fmt, UnOp};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, WaitGroup, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::value::Value;

/// Threads per warpgroup.
const WG: u32 = 128;

/// Where a wgmma kernel's shared variables start (their addresses fit the
/// descriptor's 18 address bits: `start = SHARED_PACK_BASE | field << 4`).
pub(crate) const SHARED_PACK_BASE: u64 = 1 << 20;
/// Size of the window descriptors address.
const DESC_WINDOW: u64 = 1 << 18;
/// Alignment of packed shared variables (the 128B swizzle repeats every
/// 1024 bytes) and the gap after each (catches small overruns).
const PACK_ALIGN: u64 = 1024;
const PACK_GAP: u64 = 1024;

/// Whether a kernel needs the packed shared layout (it has matrix
/// descriptors).
pub(crate) fn uses_descriptors(ir: &KernelIr) -> bool {
    super::proxy::has_async_proxy_reads(ir)
}

/// Places a shared variable of `size` bytes in the packed window.
pub(crate) fn pack_shared(next: &mut u64, size: u64) -> Option<u64> {
    let base = next.div_ceil(PACK_ALIGN) * PACK_ALIGN;
    let end = base.checked_add(size)?;
    if end > SHARED_PACK_BASE + DESC_WINDOW {
        return None;
    }
    *next = end + PACK_GAP;
    Some(base)
}

/// A decoded shared-memory matrix descriptor.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Desc {
    /// Shared address (in the engine's packed window).
    pub start: u64,
    pub lbo: u64,
    pub sbo: u64,
    pub base_offset: u8,
    /// Swizzle width in bytes (0: none).
    pub swizzle: u64,
}

impl Desc {
    pub(crate) fn decode(d: u64) -> Desc {
        let field = |lo: u32| ((d >> lo) & 0x3FFF) << 4;
        Desc {
            start: SHARED_PACK_BASE | field(0),
            lbo: field(16),
            sbo: field(32),
            base_offset: ((d >> 49) & 7) as u8,
            swizzle: match d >> 62 {
                1 => 128,
                2 => 64,
                3 => 32,
                _ => 0,
            },
        }
    }

    /// Shared address of element `(mn, k)` of a transposed (MN-major)
    /// operand (`imm-trans` = 1) whose elements have `size` bytes, or
    /// `None` where the layout is not modelled. With a swizzle of `P`
    /// bytes, a `P`-byte row holds `P/size` consecutive `mn` of one `k`,
    /// eight rows (`k % 8`) form the swizzle atom and atoms along K are
    /// SBO apart: `start + mn·size + (k%8)·P + (k/8)·SBO`, then the same
    /// chunk XOR as the K-major layouts. An `mn` beyond one row (the LBO
    /// step between atoms along M/N) and the unswizzled MN-major layout
    /// are not modelled (`None`: reported unsupported by the caller).
    pub(crate) fn mnmajor(&self, mn: u64, k: u64, size: u64) -> Option<u64> {
        if self.swizzle == 0 || mn * size >= self.swizzle {
            return None;
        }
        let a = self.start + mn * size + (k % 8) * self.swizzle + (k / 8) * self.sbo;
        let bits = self.swizzle.trailing_zeros() as u64 - 4;
        let mask = ((1u64 << bits) - 1) << 4;
        Some(a ^ ((a >> 3) & mask))
    }

    /// Shared address of element `(mn, k)` of a K-major operand whose
    /// elements have `size` bytes.
    pub(crate) fn kmajor(&self, mn: u64, k: u64, size: u64) -> u64 {
        if self.swizzle == 0 {
            let t = 16 / size;
            self.start + (mn % 8) * 16 + (mn / 8) * self.sbo + (k / t) * self.lbo + (k % t) * size
        } else {
            let a = self.start + (mn % 8) * self.swizzle + (mn / 8) * self.sbo + k * size;
            // Swizzle<B,4,3>: B = 3, 2, 1 bits of the 16-byte chunk index
            // XORed with the bits of the row index within the atom.
            let bits = self.swizzle.trailing_zeros() as u64 - 4;
            let mask = ((1u64 << bits) - 1) << 4;
            a ^ ((a >> 3) & mask)
        }
    }
}

/// The modelled form of an `mma_async`: input format, element size,
/// accumulator format, N, K, and the A-register fragment kind.
#[derive(Clone, Copy, Debug)]
struct Form {
    ab: Fmt,
    /// B's format where it differs from A's (fp8 allows `.e4m3` × `.e5m2`).
    b: Fmt,
    size: u64,
    acc: Fmt,
    n: usize,
    k: usize,
    a_frag: MmaKind,
}

fn form(
    shape: Shape,
    d_ty: ScalarType,
    a_ty: ScalarType,
    b_ty: ScalarType,
) -> Result<Form, String> {
    let fp8 = Fmt::fp8_of(a_ty).is_some() && Fmt::fp8_of(b_ty).is_some();
    if a_ty != b_ty && !fp8 {
        return Err(format!("mixed A/B types .{a_ty}/.{b_ty}"));
    }
    let (ab, size, k, a_frag) = match a_ty {
        ScalarType::F16 => (Fmt::F16, 2, 16, MmaKind::M16n8k16Half),
        ScalarType::Bf16 => (Fmt::Bf16, 2, 16, MmaKind::M16n8k16Half),
        ScalarType::Tf32 => (Fmt::F32, 4, 8, MmaKind::M16n8k8Tf32),
        // fp8: exact values (crate::narrow), K-major only (no imm-trans).
        ScalarType::E4m3 => (Fmt::E4m3, 1, 32, MmaKind::M16n8k32Byte),
        ScalarType::E5m2 => (Fmt::E5m2, 1, 32, MmaKind::M16n8k32Byte),
        other => {
            return Err(format!(
                ".{other} inputs (integer and sub-byte wgmma are not modelled)"
            ));
        }
    };
    let b = Fmt::fp8_of(b_ty).unwrap_or(ab);
    let acc = match d_ty {
        ScalarType::F32 => Fmt::F32,
        ScalarType::F16 if a_ty == ScalarType::F16 || fp8 => Fmt::F16,
        other => return Err(format!(".{other} accumulators with .{a_ty} inputs")),
    };
    let n = shape.n as usize;
    if shape.m != 64 || shape.k as usize != k || n == 0 || n > 256 || !n.is_multiple_of(8) {
        return Err(format!("shape .{shape} with .{a_ty} inputs"));
    }
    Ok(Form {
        ab,
        b,
        size,
        acc,
        n,
        k,
        a_frag,
    })
}

/// What one thread brings to a rendezvous.
#[derive(Clone)]
struct Arrival<V> {
    a_regs: Vec<Value<V>>,
    d_regs: Vec<Value<V>>,
    desc_a: Option<u64>,
    desc_b: u64,
    scale_d: bool,
    /// imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b.
    imms: [i64; 4],
    /// `wait_group N`.
    keep: u64,
}

impl<V> Default for Arrival<V> {
    fn default() -> Self {
        Arrival {
            a_regs: Vec::new(),
            d_regs: Vec::new(),
            desc_a: None,
            desc_b: 0,
            scale_d: false,
            imms: [0; 4],
            keep: 0,
        }
    }
}

struct Rendezvous<V> {
    instr: u32,
    arrived: u128,
    args: Vec<Option<Arrival<V>>>,
}

/// One issued `mma_async`.
#[derive(Clone, Debug)]
struct Op {
    id: u32,
    /// In-flight read ids (`async_copy.rs`).
    reads: Vec<u32>,
    /// The epochs of the warpgroup's threads at issue, in kernels with
    /// execution slots (`exec_order.rs`): the retiring `wait_group`
    /// returns after all of them.
    issued: Option<std::rc::Rc<[u32]>>,
}

/// Per-warpgroup and per-thread wgmma state.
pub(crate) struct WgmmaState<V> {
    pending: Vec<Option<Rendezvous<V>>>,
    uncommitted: Vec<Vec<Op>>,
    groups: Vec<VecDeque<Vec<Op>>>,
    /// Per thread: (register slot, op id, instr) of unretired mma_async.
    busy: Vec<Vec<(usize, u32, u32)>>,
    /// Threads with a non-empty `busy` (the fast path of every step).
    pub(crate) busy_threads: u32,
    next_op: u32,
    /// Whether the kernel has `mma_async` (register writes are tracked for
    /// the `wgmma.fence` rule).
    pub(crate) fence_track: bool,
    /// Per function: registers used as D or A operands of an `mma_async`.
    operand_regs: Vec<Vec<bool>>,
    /// Per thread: (slot, writing instr) of such registers written by
    /// other instructions since the warpgroup's last `wgmma.fence`.
    unfenced: Vec<Vec<(usize, u32)>>,
}

impl<V> WgmmaState<V> {
    pub(crate) fn new<'a>(threads: usize, funcs: impl Iterator<Item = &'a KernelIr>) -> Self {
        let groups = threads.div_ceil(WG as usize);
        let operand_regs: Vec<Vec<bool>> = funcs
            .map(|ir| {
                let mut v = vec![false; ir.regs.len()];
                for i in &ir.instrs {
                    if let Instr::Wgmma(WgmmaOp::MmaAsync { .. }) = i.instr {
                        let mut rs = Vec::new();
                        i.operands
                            .first()
                            .unwrap_or(&Operand::Sink)
                            .collect_regs(&mut rs);
                        if let Some(a @ Operand::Vector(_)) = i.operands.get(1) {
                            a.collect_regs(&mut rs);
                        }
                        for r in rs {
                            if let Some(x) = v.get_mut(r.index()) {
                                *x = true;
                            }
                        }
                    }
                }
                v
            })
            .collect();
        let fence_track = operand_regs.iter().any(|v| v.iter().any(|&b| b));
        WgmmaState {
            fence_track,
            operand_regs,
            unfenced: vec![Vec::new(); if fence_track { threads } else { 0 }],
            pending: (0..groups).map(|_| None).collect(),
            uncommitted: vec![Vec::new(); groups],
            groups: vec![VecDeque::new(); groups],
            busy: vec![Vec::new(); threads],
            busy_threads: 0,
            next_op: 0,
        }
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Entry point for every `wgmma.*` instruction, and for `setmaxnreg`
    /// (passed as `WgmmaOp::Fence`: a warpgroup rendezvous with no effect
    /// on values, which checks that the whole warpgroup executes it).
    pub(crate) fn wgmma(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        op: &WgmmaOp,
    ) -> R<Flow> {
        let g = t / WG;
        let base = g * WG;
        let what = ins.instr.mnemonic();
        if base + WG > self.cta.nthreads {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "{what} is a warpgroup collective (128 threads), but the CTA has only {} threads, so warpgroup {g} is incomplete",
                    self.cta.nthreads
                ),
            ));
        }
        for w in (base / 32)..(base / 32 + 4) {
            if self.cta.live[w as usize] != u32::MAX {
                return Err(self.fail(
                    t,
                    FindingKind::Divergence,
                    "",
                    format!(
                        "{what} is a warpgroup collective, but threads of warp {w} (warpgroup {g}) have exited, so it can never complete"
                    ),
                ));
            }
        }
        let arg = self.wgmma_arrive(t, info, ins, op)?;
        let instr = self.cur_instr;
        let gi = g as usize;
        if let Some(p) = &self.cta.wg.pending[gi]
            && p.instr != instr
        {
            let other = unpack_instr(p.instr);
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "{what} is a warpgroup collective, but other threads of warpgroup {g} wait at the wgmma instruction at {other}"
                ),
            ));
        }
        let p = self.cta.wg.pending[gi].get_or_insert_with(|| Rendezvous {
            instr,
            arrived: 0,
            args: (0..WG).map(|_| None).collect(),
        });
        let idx = (t - base) as usize;
        p.arrived |= 1u128 << idx;
        p.args[idx] = Some(arg);
        if p.arrived != u128::MAX {
            self.cta.threads[t as usize].status = Status::Blocked(Wait::Collective);
            return Ok(Flow::Block);
        }
        let Some(p) = self.cta.wg.pending[gi].take() else {
            return Ok(Flow::Next);
        };
        self.stats.warp_collectives += 1;
        let args: Vec<Arrival<D::Val>> =
            p.args.into_iter().map(Option::unwrap_or_default).collect();
        self.wgmma_complete(base, info, ins, op, args)?;
        for x in base..base + WG {
            if x != t && self.cta.threads[x as usize].status == Status::Blocked(Wait::Collective) {
                self.wake(x);
            }
        }
        Ok(Flow::Next)
    }

    /// A concrete integer operand of a wgmma.
    fn wg_int(&mut self, t: u32, info: &FuncInfo, op: &Operand, w: u32, what: &str) -> R<u64> {
        match self.read_int(t, info, op, w)? {
            IntArg::Known(v) => Ok(v),
            IntArg::Undef => Err(self.uninit_register(t, what)),
            _ => Err(self.unsupported(
                t,
                "wgmma operand not a concrete value",
                format!("{what} is computed from tensor values"),
            )),
        }
    }

    fn wgmma_arrive(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        op: &WgmmaOp,
    ) -> R<Arrival<D::Val>> {
        let ops = &ins.operands;
        let sink = Operand::Sink;
        let o = |i: usize| ops.get(i).unwrap_or(&sink);
        let mut a = Arrival::default();
        match *op {
            WgmmaOp::Fence | WgmmaOp::CommitGroup => {}
            WgmmaOp::WaitGroup => {
                a.keep = self.wg_int(t, info, o(0), 32, "the wait_group count")?
            }
            WgmmaOp::MmaAsync {
                shape,
                d_ty,
                a_ty,
                b_ty,
                sparse,
                ..
            } => {
                if sparse {
                    return Err(self.unsupported(
                        t,
                        "wgmma form not modelled",
                        "sparse wgmma.mma_async.sp".into(),
                    ));
                }
                let f = match form(shape, d_ty, a_ty, b_ty) {
                    Ok(f) => f,
                    Err(e) => return Err(self.unsupported(t, "wgmma form not modelled", e)),
                };
                let a_reg = matches!(o(1), Operand::Vector(_));
                let half = f.size == 2;
                let want = 6 + usize::from(half) * (1 + usize::from(!a_reg));
                if ops.len() != want {
                    return Err(self.unsupported(
                        t,
                        "wgmma operands",
                        format!("{} operands, expected {want} for this form", ops.len()),
                    ));
                }
                self.wgmma_fence_check(t, info, ins, a_reg);
                for p in o(0).parts() {
                    let v = self.read(t, info, p, 32)?;
                    a.d_regs.push(v);
                }
                if a_reg {
                    for p in o(1).parts() {
                        let v = self.read(t, info, p, 32)?;
                        a.a_regs.push(v);
                    }
                } else {
                    a.desc_a = Some(self.wg_int(t, info, o(1), 64, "the A matrix descriptor")?);
                }
                a.desc_b = self.wg_int(t, info, o(2), 64, "the B matrix descriptor")?;
                let sd = self.read(t, info, o(3), 1)?;
                a.scale_d = match self.pred_of(t, &sd)? {
                    PredArg::Known(b) => b,
                    PredArg::Undef => return Err(self.uninit_register(t, "the scale-d predicate")),
                    _ => {
                        return Err(self.unsupported(
                            t,
                            "wgmma operand not a concrete value",
                            "the scale-d predicate is computed from tensor values".into(),
                        ));
                    }
                };
                let imm = |i: usize| match ops.get(i) {
                    Some(Operand::Imm(ptxeq_ir::Imm::Int(v))) => i64::try_from(*v).ok(),
                    _ => None,
                };
                a.imms[0] = imm(4).unwrap_or(1);
                a.imms[1] = imm(5).unwrap_or(1);
                if half {
                    if a_reg {
                        a.imms[3] = imm(6).unwrap_or(-9);
                    } else {
                        a.imms[2] = imm(6).unwrap_or(-9);
                        a.imms[3] = imm(7).unwrap_or(-9);
                    }
                }
                if !matches!(a.imms[0], 1 | -1) || !matches!(a.imms[1], 1 | -1) {
                    return Err(self.unsupported(
                        t,
                        "wgmma operands",
                        "imm-scale-a / imm-scale-b must be the immediates 1 or -1".into(),
                    ));
                }
                // imm-trans = 1 selects the transposed (MN-major) layout,
                // decoded by `Desc::mnmajor` (swizzled layouts only).
                if !matches!(a.imms[2], 0 | 1) || !matches!(a.imms[3], 0 | 1) {
                    return Err(self.unsupported(
                        t,
                        "wgmma form not modelled",
                        format!(
                            "imm-trans-a {} / imm-trans-b {}: the immediates 0 or 1 expected",
                            a.imms[2], a.imms[3]
                        ),
                    ));
                }
            }
        }
        Ok(a)
    }

    fn wgmma_complete(
        &mut self,
        base: u32,
        info: &FuncInfo,
        ins: &InstrData,
        op: &WgmmaOp,
        args: Vec<Arrival<D::Val>>,
    ) -> R<()> {
        let g = (base / WG) as usize;
        if matches!(ins.instr, Instr::Setmaxnreg { .. }) {
            // No effect on values: the rendezvous checked the warpgroup.
            return Ok(());
        }
        match *op {
            WgmmaOp::Fence => {
                if self.cta.wg.fence_track {
                    for x in base..base + WG {
                        self.cta.wg.unfenced[x as usize].clear();
                    }
                }
                Ok(())
            }
            WgmmaOp::CommitGroup => {
                let ops = std::mem::take(&mut self.cta.wg.uncommitted[g]);
                self.cta.wg.groups[g].push_back(ops);
                Ok(())
            }
            WgmmaOp::WaitGroup => {
                let keep = args[0].keep;
                if args.iter().any(|a| a.keep != keep) {
                    return Err(self.unsupported(
                        base,
                        "wgmma operands differ across the warpgroup",
                        "the wait_group count".into(),
                    ));
                }
                let mut reached: Vec<u32> = Vec::new();
                while self.cta.wg.groups[g].len() as u64 > keep {
                    let Some(ops) = self.cta.wg.groups[g].pop_front() else {
                        break;
                    };
                    for o in ops {
                        if let Some(ep) = &o.issued {
                            reached.resize(ep.len(), 0);
                            for (r, e) in reached.iter_mut().zip(ep.iter()) {
                                *r = (*r).max(*e);
                            }
                        }
                        for id in &o.reads {
                            self.complete_copy_as(*id, base);
                        }
                        for x in base..base + WG {
                            let b = &mut self.cta.wg.busy[x as usize];
                            let was = !b.is_empty();
                            b.retain(|e| e.1 != o.id);
                            if was && b.is_empty() {
                                self.cta.wg.busy_threads -= 1;
                            }
                        }
                    }
                }
                if !reached.is_empty() {
                    self.learn_issues(base, &reached);
                }
                Ok(())
            }
            WgmmaOp::MmaAsync {
                shape,
                d_ty,
                a_ty,
                b_ty,
                ..
            } => {
                let f = match form(shape, d_ty, a_ty, b_ty) {
                    Ok(f) => f,
                    Err(e) => return Err(self.unsupported(base, "wgmma form not modelled", e)),
                };
                self.mma_async(base, info, ins, f, args)
            }
        }
    }

    #[allow(clippy::too_many_lines)]
    fn mma_async(
        &mut self,
        base: u32,
        info: &FuncInfo,
        ins: &InstrData,
        f: Form,
        args: Vec<Arrival<D::Val>>,
    ) -> R<()> {
        let first = &args[0];
        let uniform = args.iter().all(|a| {
            a.desc_a == first.desc_a
                && a.desc_b == first.desc_b
                && a.scale_d == first.scale_d
                && a.imms == first.imms
        });
        if !uniform {
            return Err(self.unsupported(
                base,
                "wgmma operands differ across the warpgroup",
                "descriptors, scale-d and the immediates must be the same in all 128 threads"
                    .into(),
            ));
        }
        let (desc_a, desc_b, scale_d, imms) =
            (first.desc_a, first.desc_b, first.scale_d, first.imms);
        let (m, n, k) = (64usize, f.n, f.k);
        let d_per_reg = if f.acc == Fmt::F16 { 2 } else { 1 };
        let d_count = n / 2 / d_per_reg;
        let a_count = 4;
        if args
            .iter()
            .any(|a| a.d_regs.len() != d_count || (desc_a.is_none() && a.a_regs.len() != a_count))
        {
            return Err(self.unsupported(
                base,
                "wgmma operand register counts do not match the shape",
                format!("D needs {d_count} registers, A {a_count}"),
            ));
        }
        let mut ranges: Vec<(u32, u64, u64)> = Vec::new();
        // A: 64 x K.
        let mut a_tile: Vec<Option<D::Val>> = vec![None; m * k];
        if let Some(da) = desc_a {
            let d = self.wg_desc(base, da, "A")?;
            for r in 0..m {
                for c in 0..k {
                    let v =
                        self.wg_load(base, info, &d, r, c, f, &mut ranges, "A", imms[2] == 1)?;
                    a_tile[r * k + c] = Some(v);
                }
            }
        } else {
            // Elements per 32-bit register: 2 (f16/bf16), 4 (fp8), 1 (tf32).
            let per = (4 / f.size) as usize;
            for (x, a) in args.iter().enumerate() {
                let (w, l) = (x / 32, x % 32);
                for i in 0..f.a_frag.per_lane(MOp::A) {
                    let reg = a.a_regs[i / per].clone();
                    let v = if per > 1 {
                        reg.slice((f.size as usize * (i % per)) as u8, f.size as u8, 4)
                    } else {
                        reg
                    };
                    self.fp8_format_check(base + x as u32, &v, f.ab)?;
                    let Some(v) = self.as_real(base + x as u32, &v, f.ab)? else {
                        return Err(self.uninit_register(base + x as u32, "a wgmma A register"));
                    };
                    let (r, c) = fragments::mma_element(f.a_frag, MOp::A, l, i);
                    a_tile[(16 * w + r) * k + c] = Some(v);
                }
            }
        }
        // B: K x N, column `c` of B is row `c` of the K-major operand.
        let db = self.wg_desc(base, desc_b, "B")?;
        let mut b_tile: Vec<Option<D::Val>> = vec![None; k * n];
        for c in 0..n {
            for r in 0..k {
                let v = self.wg_load(base, info, &db, c, r, f, &mut ranges, "B", imms[3] == 1)?;
                b_tile[r * n + c] = Some(v);
            }
        }
        if imms[0] == -1 {
            for v in a_tile.iter_mut().flatten() {
                *v = self.d.unary(UnOp::Neg, *v);
            }
        }
        if imms[1] == -1 {
            for v in b_tile.iter_mut().flatten() {
                *v = self.d.unary(UnOp::Neg, *v);
            }
        }
        // C: the accumulators, or zero.
        let zero = self.d.float_const(Fmt::F32, 0);
        let mut c_tile: Vec<Option<D::Val>> = vec![zero; m * n];
        if scale_d {
            for (x, a) in args.iter().enumerate() {
                let (w, l) = (x / 32, x % 32);
                for i in 0..n / 2 {
                    let reg = a.d_regs[i / d_per_reg].clone();
                    let v = if d_per_reg == 2 {
                        reg.slice(2 * (i % 2) as u8, 2, 4)
                    } else {
                        reg
                    };
                    let Some(v) = self.as_real(base + x as u32, &v, f.acc)? else {
                        return Err(self.uninit_register(
                            base + x as u32,
                            "a wgmma accumulator register (scale-d is true)",
                        ));
                    };
                    let (r, c) = d_element(w, l, i);
                    c_tile[r * n + c] = Some(v);
                }
            }
        }
        let mut d_tile: Vec<Option<D::Val>> = vec![None; m * n];
        for r in 0..m {
            for c in 0..n {
                let mut acc = c_tile[r * n + c];
                for kk in 0..k {
                    acc = match (acc, a_tile[r * k + kk], b_tile[kk * n + c]) {
                        (Some(s), Some(x), Some(y)) => Some(self.d.fma(x, y, s)),
                        _ => None,
                    };
                }
                d_tile[r * n + c] = acc;
            }
        }
        // Write the accumulators back.
        let dop = ins.operands.first().cloned().unwrap_or(Operand::Sink);
        let dparts = dop.parts().to_vec();
        for x in 0..WG as usize {
            let (w, l) = (x / 32, x % 32);
            let mut vals = Vec::with_capacity(n / 2);
            for i in 0..n / 2 {
                let (r, c) = d_element(w, l, i);
                match d_tile[r * n + c] {
                    Some(v) => vals.push(Value::data(v, f.acc)),
                    None => {
                        return Err(self.unsupported(
                            base,
                            "wgmma fragment does not fit its shape",
                            String::new(),
                        ));
                    }
                }
            }
            let regs: Vec<Value<D::Val>> = if d_per_reg == 2 {
                vals.chunks(2)
                    .map(|p| Value::concat(&p.iter().map(|v| (v.clone(), 2u8)).collect::<Vec<_>>()))
                    .collect()
            } else {
                vals
            };
            for (p, v) in dparts.iter().zip(regs) {
                self.write(base + x as u32, info, p, v)?;
            }
        }
        // Asynchrony: the operand bytes stay in flight, the registers busy.
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u64, u64)> = Vec::new();
        for (r, off, len) in ranges {
            match merged.last_mut() {
                Some(l) if l.0 == r && off <= l.1 + l.2 => l.2 = l.2.max(off + len - l.1),
                _ => merged.push((r, off, len)),
            }
        }
        let mut reads = Vec::with_capacity(merged.len());
        for &(r, off, len) in &merged {
            self.check_async_proxy_read(base, r, off, len);
            reads.push(self.track_wgmma_read(base, (r, off, len)));
        }
        let id = self.cta.wg.next_op;
        self.cta.wg.next_op += 1;
        let issued = self.issue_epochs(base, WG);
        self.cta.wg.uncommitted[(base / WG) as usize].push(Op { id, reads, issued });
        let mut busy_regs: Vec<ptxeq_ir::RegId> = Vec::new();
        dop.collect_regs(&mut busy_regs);
        if desc_a.is_none()
            && let Some(a) = ins.operands.get(1)
        {
            a.collect_regs(&mut busy_regs);
        }
        let slots: Vec<usize> = busy_regs.iter().map(|r| Self::slot(info, *r)).collect();
        let instr = self.cur_instr;
        for x in base..base + WG {
            let b = &mut self.cta.wg.busy[x as usize];
            if b.is_empty() {
                self.cta.wg.busy_threads += 1;
            }
            b.extend(slots.iter().map(|&s| (s, id, instr)));
        }
        Ok(())
    }

    fn wg_desc(&mut self, t: u32, raw: u64, which: &str) -> R<Desc> {
        let d = Desc::decode(raw);
        if d.base_offset != 0 {
            return Err(self.unsupported(
                t,
                "wgmma descriptor not modelled",
                format!(
                    "the {which} descriptor {raw:#x} has matrix base offset {} (only 0 is modelled)",
                    d.base_offset
                ),
            ));
        }
        Ok(d)
    }

    /// Loads element `(mn, k)` of a descriptor operand as thread `t`,
    /// recording its bytes.
    #[allow(clippy::too_many_arguments)]
    fn wg_load(
        &mut self,
        t: u32,
        info: &FuncInfo,
        d: &Desc,
        mn: usize,
        k: usize,
        f: Form,
        ranges: &mut Vec<(u32, u64, u64)>,
        which: &str,
        trans: bool,
    ) -> R<D::Val> {
        let at = if trans {
            match d.mnmajor(mn as u64, k as u64, f.size) {
                Some(at) => at,
                None => {
                    return Err(self.unsupported(
                        t,
                        "wgmma form not modelled",
                        format!(
                            "the transposed (MN-major, imm-trans = 1) {which} operand: element ({mn}, {k}) needs the {} layout, which is not modelled (only swizzled MN-major operands whose M/N extent fits one swizzle row are)",
                            if d.swizzle == 0 {
                                "unswizzled MN-major".to_string()
                            } else {
                                format!("LBO step between {}-byte swizzle atoms along M/N of the", d.swizzle)
                            }
                        ),
                    ));
                }
            }
        } else {
            d.kmajor(mn as u64, k as u64, f.size)
        };
        let addr = Address {
            base: AddrBase::Imm(at),
            offset: 0,
        };
        let Some((Target::Cta(r), off)) =
            self.resolve(t, info, StateSpace::Shared, &addr, f.size)?
        else {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "",
                format!("wgmma {which} operand element ({mn}, {k}) at shared address {at:#x} is outside every shared variable"),
            ));
        };
        ranges.push((r, off, f.size));
        let v = self
            .load(t, info, StateSpace::Shared, &addr, f.size as u8)?
            .unwrap_or(Value::Undef);
        let fmt = if which == "B" { f.b } else { f.ab };
        self.fp8_format_check(t, &v, fmt)?;
        match self.as_real(t, &v, fmt)? {
            Some(x) => Ok(x),
            None => Err(self.fail(
                t,
                FindingKind::Uninitialised,
                "",
                format!(
                    "wgmma {which} operand element ({mn}, {k}) at `{}`+{off} holds no value",
                    self.mem.regions[r as usize].name
                ),
            )),
        }
    }

    /// An fp8 operand must hold a value of its own format: reading an
    /// e4m3 byte as e5m2 (or an f16 half as fp8) reinterprets the bits,
    /// which is another real number — reported unsupported, never
    /// silently taken as the same value.
    pub(crate) fn fp8_format_check(&mut self, t: u32, v: &Value<D::Val>, fmt: Fmt) -> R<()> {
        if let Value::Data { fmt: f, .. } = v
            && *f != fmt
            && (f.narrow().is_some() || fmt.narrow().is_some())
        {
            return Err(self.unsupported(
                t,
                "real value read in another format",
                format!(
                    "a .{} value is a matrix .{} operand (a bit reinterpretation, not a conversion)",
                    f.name(),
                    fmt.name()
                ),
            ));
        }
        Ok(())
    }

    /// Before every instruction of a thread with unretired `mma_async`
    /// registers: an access to them (other than a chained `mma_async`) is
    /// undefined per the ISA, reported as a register race.
    pub(crate) fn wgmma_busy_check(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) {
        if matches!(ins.instr, Instr::Wgmma(_)) {
            return;
        }
        let mut regs = Vec::new();
        for o in &ins.operands {
            o.collect_regs(&mut regs);
        }
        for r in regs {
            let s = Self::slot(info, r);
            let Some(&(_, _, instr)) = self.cta.wg.busy[t as usize].iter().find(|e| e.0 == s)
            else {
                continue;
            };
            self.report_register_race(t, info, r, (u32::MAX, instr), |name, first, second| {
                format!(
                    "register race on {name} of {}: it is an accumulator or A register of the wgmma.mma_async at {}, which has not been retired by a wgmma.wait_group when {} accesses it (undefined behaviour per the PTX ISA)",
                    first.thread, first.instr, second.instr
                )
            });
            return;
        }
    }

    /// Reports a register race of thread `t` on `r` between the earlier
    /// instruction `earlier.1` and the current one, once per
    /// (`earlier`, current instruction) — `earlier.0` tells the rules apart
    /// in the `reported` set. `describe` words it from the register's name
    /// and the two accesses.
    fn report_register_race(
        &mut self,
        t: u32,
        info: &FuncInfo,
        r: ptxeq_ir::RegId,
        earlier: (u32, u32),
        describe: impl FnOnce(&str, &AccessRef, &AccessRef) -> String,
    ) {
        if !self
            .log
            .first_report((earlier.0, earlier.1, self.cur_instr))
        {
            return;
        }
        let first = AccessRef {
            thread: self.thread_ref(t),
            instr: unpack_instr(earlier.1),
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
            .get(r.index())
            .map(|x| x.name.clone())
            .unwrap_or_default();
        let msg = describe(&name, &first, &second);
        let mut fnd =
            Finding::new(FindingKind::Race, msg).at(Some(second.thread), Some(second.instr));
        fnd.accesses = vec![first, second];
        self.report(fnd);
    }

    /// After every non-wgmma instruction of a kernel with `mma_async`:
    /// notes the writes of registers that an `mma_async` uses as D or A
    /// (they need a `wgmma.fence` before that `mma_async` reads them).
    pub(crate) fn wgmma_note_writes(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) {
        if matches!(ins.instr, Instr::Wgmma(_)) {
            return;
        }
        let Some(f) = self.cta.threads[t as usize]
            .frames
            .last()
            .map(|f| f.func as usize)
        else {
            return;
        };
        let n = ins.instr.dst_count().unwrap_or(0);
        let mut rs = Vec::new();
        for op in ins.operands.iter().take(n) {
            if !matches!(op, Operand::Addr(_)) {
                op.collect_regs(&mut rs);
            }
        }
        let instr = self.cur_instr;
        for r in rs {
            if !self
                .cta
                .wg
                .operand_regs
                .get(f)
                .and_then(|v| v.get(r.index()))
                .copied()
                .unwrap_or(false)
            {
                continue;
            }
            let s = Self::slot(info, r);
            let u = &mut self.cta.wg.unfenced[t as usize];
            match u.iter_mut().find(|e| e.0 == s) {
                Some(e) => e.1 = instr,
                None => u.push((s, instr)),
            }
        }
    }

    /// At an `mma_async` arrival: a D or A register written by another
    /// instruction since the warpgroup's last `wgmma.fence` is read by the
    /// tensor core without the ordering the ISA requires (reported as a
    /// register race with both instructions).
    fn wgmma_fence_check(&mut self, t: u32, info: &FuncInfo, ins: &InstrData, a_reg: bool) {
        if !self.cta.wg.fence_track || self.cta.wg.unfenced[t as usize].is_empty() {
            return;
        }
        let mut rs = Vec::new();
        ins.operands
            .first()
            .unwrap_or(&Operand::Sink)
            .collect_regs(&mut rs);
        if a_reg && let Some(a) = ins.operands.get(1) {
            a.collect_regs(&mut rs);
        }
        for r in rs {
            let s = Self::slot(info, r);
            let Some(&(_, w)) = self.cta.wg.unfenced[t as usize].iter().find(|e| e.0 == s) else {
                continue;
            };
            self.report_register_race(t, info, r, (u32::MAX - 1, w), |name, first, second| {
                format!(
                    "register race on {name} of {}: written at {} and read as an accumulator or A register by the wgmma.mma_async at {} with no wgmma.fence in between (the PTX ISA requires one)",
                    first.thread, first.instr, second.instr
                )
            });
            return;
        }
    }

    /// Warpgroups waiting at a wgmma rendezvous (for `check_stuck`).
    pub(crate) fn wgmma_wait_groups(&self) -> Vec<WaitGroup> {
        let mut out = Vec::new();
        for (g, p) in self.cta.wg.pending.iter().enumerate() {
            let Some(p) = p else { continue };
            let base = g as u32 * WG;
            let ts: Vec<u32> = (0..WG)
                .filter(|i| p.arrived & (1u128 << i) != 0)
                .map(|i| base + i)
                .collect();
            out.push(WaitGroup {
                what: format!("warpgroup collective of warpgroup {g} (128 threads)"),
                instr: unpack_instr(p.instr),
                threads: thread_ranges(ts),
                arrived: p.arrived.count_ones(),
                expected: WG,
            });
        }
        out
    }
}

/// Element `(row, col)` of accumulator register element `i` of lane `l` of
/// warp `w` of the warpgroup.
fn d_element(w: usize, l: usize, i: usize) -> (usize, usize) {
    let (nt, j) = (i / 4, i % 4);
    (16 * w + l / 4 + 8 * (j / 2), 8 * nt + 2 * (l % 4) + j % 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_fields_decode() {
        // start 0x400, LBO 128, SBO 256, no swizzle.
        let raw = (0x400u64 >> 4) | ((128u64 >> 4) << 16) | ((256u64 >> 4) << 32);
        let d = Desc::decode(raw);
        assert_eq!(d.start, SHARED_PACK_BASE + 0x400);
        assert_eq!((d.lbo, d.sbo, d.base_offset, d.swizzle), (128, 256, 0, 0));
        assert_eq!(Desc::decode(1 << 62).swizzle, 128);
        assert_eq!(Desc::decode(2 << 62).swizzle, 64);
        assert_eq!(Desc::decode(3 << 62).swizzle, 32);
        assert_eq!(Desc::decode(5 << 49).base_offset, 5);
    }

    #[test]
    fn no_swizzle_kmajor_core_matrices() {
        let d = Desc::decode((128u64 >> 4) << 16 | (256u64 >> 4) << 32);
        let s = SHARED_PACK_BASE;
        // Row 0: k 0..7 contiguous, k 8 in the next core matrix (LBO).
        assert_eq!(d.kmajor(0, 0, 2), s);
        assert_eq!(d.kmajor(0, 7, 2), s + 14);
        assert_eq!(d.kmajor(0, 8, 2), s + 128);
        // Row 1 is 16 bytes on, row 8 one SBO on.
        assert_eq!(d.kmajor(1, 0, 2), s + 16);
        assert_eq!(d.kmajor(8, 0, 2), s + 256);
        assert_eq!(d.kmajor(9, 9, 2), s + 256 + 128 + 16 + 2);
        // tf32: four elements per core-matrix row.
        assert_eq!(d.kmajor(0, 4, 4), s + 128);
    }

    #[test]
    fn swizzle_128b_permutes_chunks_within_rows() {
        let d = Desc::decode(1 << 62 | (1024u64 >> 4) << 32);
        let s = SHARED_PACK_BASE;
        // Row 0 is unchanged; row r has its 16-byte chunks XORed with r.
        assert_eq!(d.kmajor(0, 8, 2), s + 16);
        assert_eq!(d.kmajor(1, 0, 2), s + 128 + 16);
        assert_eq!(d.kmajor(3, 8, 2), s + 3 * 128 + (1 ^ 3) * 16);
        // Row 7, chunk 7 (k 56..63) lands in chunk 7 ^ 7 = 0.
        assert_eq!(d.kmajor(7, 63, 2), s + 7 * 128 + 14);
        // The next 8-row group is SBO away and repeats the pattern.
        assert_eq!(d.kmajor(9, 0, 2), s + 1024 + 128 + 16);
        // 32B: one bit, rows 32 bytes apart.
        let d = Desc::decode(3 << 62 | (256u64 >> 4) << 32);
        assert_eq!(d.kmajor(4, 0, 2), s + 4 * 32 + 16);
    }

    #[test]
    fn mn_major_swizzled_rows_run_along_mn() {
        let d = Desc::decode(1 << 62 | (1024u64 >> 4) << 32);
        let s = SHARED_PACK_BASE;
        // A 128-byte row holds mn 0..63 of one k (f16).
        assert_eq!(d.mnmajor(0, 0, 2), Some(s));
        assert_eq!(d.mnmajor(5, 0, 2), Some(s + 10));
        // k selects the row within the 8-row atom; chunks XOR with it:
        // mn 8 (chunk 1) of row 1 lands in chunk 1 ^ 1 = 0, mn 0 in chunk 1.
        assert_eq!(d.mnmajor(8, 1, 2), Some(s + 128));
        assert_eq!(d.mnmajor(0, 1, 2), Some(s + 128 + 16));
        assert_eq!(d.mnmajor(63, 7, 2), Some(s + 7 * 128 + 14));
        // The next eight k are SBO away.
        assert_eq!(d.mnmajor(0, 9, 2), Some(s + 1024 + 128 + 16));
        // Beyond one swizzle row, and unswizzled: not modelled.
        assert_eq!(d.mnmajor(64, 0, 2), None);
        assert_eq!(Desc::decode((256u64 >> 4) << 32).mnmajor(0, 0, 2), None);
        // 64B: 32 f16 per row, two XOR bits taken from address bits 7-8
        // (so rows 2 and 3 share the pattern 1).
        let d = Desc::decode(2 << 62 | (512u64 >> 4) << 32);
        assert_eq!(d.mnmajor(31, 2, 2), Some(s + 2 * 64 + (3 ^ 1) * 16 + 14));
        assert_eq!(d.mnmajor(32, 0, 2), None);
    }

    #[test]
    fn accumulator_layout_covers_the_tile_once() {
        let mut seen = vec![false; 64 * 256];
        for w in 0..4 {
            for l in 0..32 {
                for i in 0..128 {
                    let (r, c) = d_element(w, l, i);
                    assert!(!seen[r * 256 + c]);
                    seen[r * 256 + c] = true;
                }
            }
        }
        assert!(seen.iter().all(|&b| b));
    }

    #[test]
    fn packing_keeps_descriptor_window() {
        let mut next = SHARED_PACK_BASE;
        let a = pack_shared(&mut next, 8192).unwrap();
        let b = pack_shared(&mut next, 8).unwrap();
        assert_eq!(a, SHARED_PACK_BASE);
        assert_eq!(b, SHARED_PACK_BASE + 8192 + 1024);
        assert!(pack_shared(&mut next, DESC_WINDOW).is_none());
    }
}
