//! The store-address slice of a kernel: the instructions that decide
//! *where* (and whether) global memory is written, and nothing else.
//!
//! Run on every CTA of a large grid, the slice answers "which CTAs write
//! into the compared region" for the price of the address arithmetic: the
//! K loop of a GEMM, its shared-memory staging and every floating-point
//! instruction drop out. The rewrite keeps instruction indices (dropped
//! instructions become [`Instr::Absorbed`] no-ops, dropped conditional
//! transfers become jumps to their immediate post-dominator), so a
//! footprint of the slice names the kernel's own instructions.
//!
//! Soundness (the slice's global writes are exactly the kernel's, for a
//! run that terminates; an over-approximation otherwise):
//! - seeds: every instruction that may write global memory (`st`, `atom`,
//!   `red`, `wmma.store` in the global or generic space) keeps its guard
//!   and the registers of its address (not its value — except `wmma.store`,
//!   whose fragment the engine requires to come from wmma: it is kept
//!   whole, with the fragment's computation);
//! - data: an instruction whose result a kept instruction reads is kept
//!   whole — flow-insensitively (every definition of a read register),
//!   which over-approximates reaching definitions; the carry flag is a
//!   register of its own;
//! - memory: a kept load from a space keeps every write to that space
//!   (generic meets every space) whole, and then every barrier and
//!   `cp.async` group instruction, so values passed through memory arrive
//!   as in the kernel;
//! - control: a conditional branch / guarded `ret`/`exit`/`trap` is kept
//!   when a kept instruction is control-dependent on it (post-dominator
//!   frontier); a dropped one jumps to its immediate post-dominator, the
//!   first point every path from it reaches, so kept instructions run
//!   exactly as often as in the kernel. A kernel with a block that cannot
//!   reach the exit keeps every conditional transfer.
//!
//! Kernels the slice does not cover (calls, `brx`, mbarriers, bulk copies,
//! `wgmma`, cluster barriers, undecoded instructions) are reported as
//! [`NotSliced`]; the caller then scans with the whole kernel.

use std::collections::VecDeque;

use ptxeq_ir::{
    Guard, Instr, InstrData, KernelIr, Label, LabelId, Memory, Operand, StateSpace, WmmaOp,
};
use ptxeq_validate::cfg::Cfg;

/// Why a kernel was not sliced (the whole kernel is scanned instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotSliced(pub String);

/// A sliced kernel and how much of it is kept.
#[derive(Clone, Debug)]
pub struct Slice {
    pub kernel: KernelIr,
    /// Instructions kept unchanged.
    pub kept: usize,
    /// Conditional transfers turned into jumps to their post-dominator.
    pub bypassed: usize,
    /// Whether every conditional transfer was kept (a block cannot reach
    /// the exit, so control dependence is not computed).
    pub all_control_kept: bool,
}

/// How an instruction touches memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mem {
    None,
    Read(StateSpace),
    Write(StateSpace),
    ReadWrite(StateSpace),
    /// `cp.async`: reads global, writes shared.
    Copy,
}

fn mem_of(i: &Instr) -> Mem {
    match i.memory() {
        Some(Memory::Load(s)) => Mem::Read(s),
        Some(Memory::Store(s)) => Mem::Write(s),
        Some(Memory::Atomic(s)) => Mem::ReadWrite(s),
        // `cp.async` (bulk copies are unsliceable).
        Some(Memory::AsyncCopy { .. }) => Mem::Copy,
        Some(Memory::Fence | Memory::BarrierObject(_) | Memory::AsyncGroup) | None => Mem::None,
    }
}

/// Whether a read of `read` may see a write to `write`.
fn meets(read: StateSpace, write: StateSpace) -> bool {
    read == write || read == StateSpace::Generic || write == StateSpace::Generic
}

fn writes_global(m: Mem) -> bool {
    matches!(m, Mem::Write(s) | Mem::ReadWrite(s) if matches!(s, StateSpace::Global | StateSpace::Generic))
}

/// Destination operands: `0..n` of the operand list (`ptxeq_ir::facts`;
/// an undecoded instruction is unsliceable, so its 0 is never used).
fn n_dsts(i: &Instr) -> usize {
    i.dst_count().unwrap_or(0)
}

/// Instructions the slice does not model; the whole kernel is scanned.
fn unsliceable(i: &Instr) -> Option<&'static str> {
    use Instr::*;
    Some(match i {
        Call { .. } => "a call",
        Brx { .. } => "an indirect branch (brx.idx)",
        Mbarrier { .. } | CpAsyncMbarrierArrive { .. } => "an mbarrier",
        CpAsyncBulk(_)
        | CpReduceAsyncBulk(_)
        | CpAsyncBulkCommitGroup
        | CpAsyncBulkWaitGroup { .. } => "a bulk async copy",
        Wgmma(_) => "wgmma",
        Tcgen05(_) => "tcgen05",
        BarrierCluster { .. } => "a cluster barrier",
        Unknown { .. } => "an undecoded instruction",
        _ => return None,
    })
}

/// Synchronisation that orders values passed through memory.
fn is_sync(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Bar { .. }
            | Instr::BarWarpSync
            | Instr::CpAsyncCommitGroup
            | Instr::CpAsyncWaitGroup
            | Instr::CpAsyncWaitAll
    )
}

/// A terminator that may or may not transfer control.
fn is_conditional_transfer(d: &InstrData) -> bool {
    d.guard.is_some() && d.instr.is_terminator()
}

/// Register slots: registers, then the carry flag.
struct Regs {
    n: usize,
}

impl Regs {
    fn carry(&self) -> usize {
        self.n
    }
}

fn uses_carry_in(i: &Instr) -> bool {
    use ptxeq_ir::Carry;
    matches!(
        i,
        Instr::Add {
            carry: Carry::In | Carry::InOut,
            ..
        } | Instr::Sub {
            carry: Carry::In | Carry::InOut,
            ..
        } | Instr::Mad {
            carry: Carry::In | Carry::InOut,
            ..
        }
    )
}

fn sets_carry(i: &Instr) -> bool {
    use ptxeq_ir::Carry;
    matches!(
        i,
        Instr::Add {
            carry: Carry::Out | Carry::InOut,
            ..
        } | Instr::Sub {
            carry: Carry::Out | Carry::InOut,
            ..
        } | Instr::Mad {
            carry: Carry::Out | Carry::InOut,
            ..
        }
    )
}

/// Slots instruction `d` defines.
fn defs(d: &InstrData, regs: &Regs) -> Vec<usize> {
    let mut out = Vec::new();
    let mut rs = Vec::new();
    for op in d.operands.iter().take(n_dsts(&d.instr)) {
        op.collect_regs(&mut rs);
    }
    out.extend(rs.iter().map(|r| r.index()).filter(|&r| r < regs.n));
    if sets_carry(&d.instr) {
        out.push(regs.carry());
    }
    out
}

/// Slots instruction `d` reads when kept whole.
fn uses_all(d: &InstrData, regs: &Regs) -> Vec<usize> {
    let mut rs = Vec::new();
    for op in d.operands.iter().skip(n_dsts(&d.instr)) {
        op.collect_regs(&mut rs);
    }
    // A register inside a destination address is read, not written.
    for op in d.operands.iter().take(n_dsts(&d.instr)) {
        if let Operand::Addr(_) = op {
            op.collect_regs(&mut rs);
        }
    }
    if let Some(Guard { reg, .. }) = d.guard {
        rs.push(reg);
    }
    let mut out: Vec<usize> = rs
        .iter()
        .map(|r| r.index())
        .filter(|&r| r < regs.n)
        .collect();
    if uses_carry_in(&d.instr) {
        out.push(regs.carry());
    }
    out
}

/// Slots a global-write seed reads to form its address: the registers of
/// its address operands (and a `wmma.store` stride), and its guard.
fn uses_address(d: &InstrData, regs: &Regs) -> Vec<usize> {
    let mut rs = Vec::new();
    for op in &d.operands {
        if let Operand::Addr(_) = op {
            op.collect_regs(&mut rs);
        }
    }
    if let Instr::Wmma(WmmaOp::Store { .. }) = d.instr
        && let Some(stride) = d.operands.get(2)
    {
        stride.collect_regs(&mut rs);
    }
    if let Some(Guard { reg, .. }) = d.guard {
        rs.push(reg);
    }
    rs.iter()
        .map(|r| r.index())
        .filter(|&r| r < regs.n)
        .collect()
}

/// Control structure: per block, the blocks whose conditional transfer it
/// depends on, and each block's immediate post-dominator (`None`: the
/// exit). `None` overall when some reachable block cannot reach the exit.
struct Control {
    /// Per block: blocks it is control-dependent on.
    deps: Vec<Vec<u32>>,
    /// Per block: immediate post-dominator; `nb` is the virtual exit.
    ipdom: Vec<u32>,
}

fn control(f: &KernelIr, cfg: &Cfg) -> Option<Control> {
    let nb = cfg.blocks.len();
    let exit = nb as u32;
    // Forward successors with the virtual exit.
    let mut succs: Vec<Vec<u32>> = cfg.blocks.iter().map(|b| b.succs.clone()).collect();
    for (b, blk) in cfg.blocks.iter().enumerate() {
        let last = &f.instrs[blk.end as usize - 1].instr;
        let leaves = blk.falls_off || matches!(last, Instr::Ret { .. } | Instr::Exit | Instr::Trap);
        if leaves {
            succs[b].push(exit);
        }
    }
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); nb + 1];
    for (b, ss) in succs.iter().enumerate() {
        for &s in ss {
            preds[s as usize].push(b as u32);
        }
    }
    // Reverse-graph post-order from the exit (iterative DFS over preds).
    let mut seen = vec![false; nb + 1];
    let mut post: Vec<u32> = Vec::with_capacity(nb + 1);
    let mut stack: Vec<(u32, usize)> = vec![(exit, 0)];
    seen[exit as usize] = true;
    while let Some(top) = stack.last_mut() {
        let (b, k) = *top;
        if let Some(&p) = preds[b as usize].get(k) {
            top.1 += 1;
            if !seen[p as usize] {
                seen[p as usize] = true;
                stack.push((p, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    // Every block the kernel can reach must reach the exit.
    if cfg.rpo.iter().any(|&b| !seen[b as usize]) {
        return None;
    }
    let rpo: Vec<u32> = post.iter().rev().copied().collect();
    let mut order = vec![u32::MAX; nb + 1];
    for (k, &b) in rpo.iter().enumerate() {
        order[b as usize] = k as u32;
    }
    // Cooper–Harvey–Kennedy on the reverse graph: "predecessors" there are
    // forward successors.
    const NONE: u32 = u32::MAX;
    let mut ipdom = vec![NONE; nb + 1];
    ipdom[exit as usize] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new = NONE;
            for &s in &succs[b as usize] {
                if ipdom[s as usize] == NONE {
                    continue;
                }
                new = if new == NONE {
                    s
                } else {
                    let (mut x, mut y) = (s, new);
                    while x != y {
                        while order[x as usize] > order[y as usize] {
                            x = ipdom[x as usize];
                        }
                        while order[y as usize] > order[x as usize] {
                            y = ipdom[y as usize];
                        }
                    }
                    x
                };
            }
            if new != NONE && ipdom[b as usize] != new {
                ipdom[b as usize] = new;
                changed = true;
            }
        }
    }
    // Control dependence: for an edge b -> s of a block with several
    // successors, s and its post-dominators up to (not including)
    // ipdom(b) depend on b.
    let mut deps: Vec<Vec<u32>> = vec![Vec::new(); nb];
    for (b, ss) in succs.iter().enumerate() {
        if ss.len() < 2 || !seen[b] {
            continue;
        }
        let stop = ipdom[b];
        for &s in ss {
            let mut x = s;
            let mut guard = 0;
            while x != stop && x != exit && guard <= nb {
                if !deps[x as usize].contains(&(b as u32)) {
                    deps[x as usize].push(b as u32);
                }
                x = ipdom[x as usize];
                guard += 1;
            }
        }
    }
    ipdom.truncate(nb);
    Some(Control { deps, ipdom })
}

/// Slices `f` (an entry without calls) down to its global-store addresses.
pub fn slice(f: &KernelIr) -> Result<Slice, NotSliced> {
    if let Some((i, why)) = f
        .instrs
        .iter()
        .enumerate()
        .find_map(|(i, d)| unsliceable(&d.instr).map(|w| (i, w)))
    {
        return Err(NotSliced(format!(
            "the kernel has {why} (instruction {i}: {})",
            f.instrs[i].instr.mnemonic()
        )));
    }
    let n = f.instrs.len();
    let regs = Regs { n: f.regs.len() };
    let cfg = Cfg::build(f);
    let ctl = control(f, &cfg);

    // Definitions of every slot, and the memory writers / sync points.
    let mut defs_of: Vec<Vec<u32>> = vec![Vec::new(); regs.n + 1];
    let mut writers: Vec<(u32, Mem)> = Vec::new();
    let mut syncs: Vec<u32> = Vec::new();
    for (i, d) in f.instrs.iter().enumerate() {
        for s in defs(d, &regs) {
            defs_of[s].push(i as u32);
        }
        let m = mem_of(&d.instr);
        if !matches!(m, Mem::None | Mem::Read(_)) {
            writers.push((i as u32, m));
        }
        if is_sync(&d.instr) {
            syncs.push(i as u32);
        }
    }

    // Kept: 0 no, 1 address only (a seed), 2 whole.
    let mut kept = vec![0u8; n];
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut slot_done = vec![false; regs.n + 1];
    let mut mem_done: Vec<StateSpace> = Vec::new();
    let mut syncs_done = false;
    let mut block_done = vec![false; cfg.blocks.len()];
    let mark = |i: u32, level: u8, kept: &mut Vec<u8>, queue: &mut VecDeque<u32>| {
        if kept[i as usize] < level {
            kept[i as usize] = level;
            queue.push_back(i);
        }
    };
    for (i, d) in f.instrs.iter().enumerate() {
        if writes_global(mem_of(&d.instr)) {
            // A `wmma.store` checks that its fragment was produced by wmma
            // (the fixed-layout guard), so it keeps its value too.
            let level = if matches!(d.instr, Instr::Wmma(_)) {
                2
            } else {
                1
            };
            mark(i as u32, level, &mut kept, &mut queue);
        }
        // Unguarded terminators keep the kernel's shape.
        if d.instr.is_terminator() && d.guard.is_none() {
            mark(i as u32, 2, &mut kept, &mut queue);
        }
    }
    while let Some(i) = queue.pop_front() {
        let d = &f.instrs[i as usize];
        let whole = kept[i as usize] >= 2;
        let used = if whole {
            uses_all(d, &regs)
        } else {
            uses_address(d, &regs)
        };
        for s in used {
            if !slot_done[s] {
                slot_done[s] = true;
                for &j in &defs_of[s] {
                    mark(j, 2, &mut kept, &mut queue);
                }
            }
        }
        if whole {
            let read = match mem_of(&d.instr) {
                Mem::Read(s) | Mem::ReadWrite(s) => Some(s),
                Mem::Copy => Some(StateSpace::Global),
                _ => None,
            };
            if let Some(space) = read
                && !matches!(space, StateSpace::Param | StateSpace::Const)
                && !mem_done.contains(&space)
            {
                mem_done.push(space);
                for &(j, m) in &writers {
                    let hit = match m {
                        Mem::Write(w) | Mem::ReadWrite(w) => meets(space, w),
                        Mem::Copy => meets(space, StateSpace::Shared),
                        _ => false,
                    };
                    if hit {
                        mark(j, 2, &mut kept, &mut queue);
                    }
                }
                if !syncs_done && !matches!(space, StateSpace::Local) {
                    syncs_done = true;
                    for &j in &syncs {
                        mark(j, 2, &mut kept, &mut queue);
                    }
                }
            }
        }
        // The conditional transfers this instruction depends on.
        let b = cfg.block_of[i as usize] as usize;
        if !block_done[b] {
            block_done[b] = true;
            match &ctl {
                Some(c) => {
                    for &p in &c.deps[b] {
                        let t = cfg.blocks[p as usize].end - 1;
                        mark(t, 2, &mut kept, &mut queue);
                    }
                }
                None => {
                    for (t, d) in f.instrs.iter().enumerate() {
                        if is_conditional_transfer(d) {
                            mark(t as u32, 2, &mut kept, &mut queue);
                        }
                    }
                }
            }
        }
    }

    // Rewrite.
    let mut out = f.clone();
    let mut bypassed = 0;
    let mut labels: Vec<Label> = Vec::new();
    for (i, d) in out.instrs.iter_mut().enumerate() {
        if kept[i] > 0 {
            continue;
        }
        if is_conditional_transfer(d) {
            // Without control dependence every transfer is kept (never
            // reached here); keep it unchanged all the same.
            let Some(c) = &ctl else { continue };
            let block = cfg.block_of[i] as usize;
            bypassed += 1;
            let to = c.ipdom[block] as usize;
            d.guard = None;
            d.operands.clear();
            if to >= cfg.blocks.len() {
                d.instr = Instr::Exit;
            } else {
                // A label of its own at the post-dominator's first
                // instruction (labels are resolved indices).
                let id = LabelId((f.labels.len() + labels.len()) as u32);
                labels.push(Label {
                    name: format!("$ptxeq_slice_{i}"),
                    target: cfg.blocks[to].start,
                    prototype: false,
                });
                d.instr = Instr::Bra { uni: false };
                d.operands.push(Operand::Label(id));
            }
            continue;
        }
        d.guard = None;
        d.operands.clear();
        d.instr = Instr::Absorbed { at: i as u32 };
    }
    out.labels.extend(labels);
    Ok(Slice {
        kept: kept.iter().filter(|&&k| k > 0).count(),
        kernel: out,
        bypassed,
        all_control_kept: ctl.is_none(),
    })
}
