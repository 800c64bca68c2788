//! Cooperative-groups `grid.sync()` (issue 15 item 5) as nvcc 13 lowers
//! it: the grid workspace pointer is read from `%envreg1` (high word) and
//! `%envreg2` (low word); after a `bar.sync`, one thread per CTA does
//! `atom.add.release.gpu.u32 old, [ws + 4], inc` (CTA 0 adds
//! `0x80000001 - nctas`, the others 1, so the word's sign bit flips exactly
//! when the last CTA arrives, in any order) and spins
//! `L: ld.acquire.gpu.u32 v, [ws + 4]; xor v, old; setp.gt v, -1; @p bra L`
//! until the sign bit differs from `old`'s; a second `bar.sync` follows.
//!
//! Modelled exactly when every CTA of the grid runs in one scheduling unit
//! (`unit.rs`; a grid run of the whole grid, `crate::grid`): the
//! workspace is a word at [`WORKSPACE`] + 4 (initially 0, as the
//! cooperative launch leaves it), the `atom.add` adds exactly and releases
//! its thread's clock; instead of spinning, the thread blocks until the
//! word's sign bit differs from the value its add returned — exactly the
//! spin's exit condition — and then acquires every release made on the
//! word so far (the adds form one release sequence, so the acquire load
//! that reads the flipped value synchronises with all of them). The
//! `ld.acquire` of the spin then reads the word's value and leaves the
//! loop. The model is used only when the add is followed by that spin (an
//! acquire load of the same address and a branch back to it); any other
//! use of the workspace word is reported `unsupported`. A CTA that never
//! arrives leaves the others blocked: the stuck-CTA analysis reports the
//! deadlock (on hardware they would spin forever).

use ptxeq_ir::{
    AddrBase, AtomOp, Instr, InstrData, MemSem, Operand, ScalarType, Scope, SpecialReg,
};

use super::values::IntArg;
use super::{Engine, Flow, R, Status, Wait};
use crate::domain::Domain;
use crate::finding::{WaitGroup, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::memory::{GLOBAL_SLOT_BITS, SHARED_WINDOW};
use crate::race::Foreign;
use crate::value::Value;

/// The grid workspace's address: the last global slot of the address
/// map, which no region takes in a grid-synchronised run (checked when
/// the unit is built).
pub(crate) const WORKSPACE: u64 = SHARED_WINDOW - (1 << GLOBAL_SLOT_BITS);

/// The grid barrier's state.
#[derive(Default)]
pub(crate) struct GridSync {
    /// The barrier word at `WORKSPACE + 4`.
    pub word: u32,
    /// The join of every release made on the word.
    pub released: Foreign,
    /// Threads blocked after their add: (slot, thread, value the add
    /// returned, instruction).
    pub waiters: Vec<(u32, u32, u32, u32)>,
}

/// Whether a kernel reads the grid workspace (`%envreg1` / `%envreg2`).
pub(crate) fn uses_grid_sync<'a>(funcs: impl IntoIterator<Item = &'a ptxeq_ir::KernelIr>) -> bool {
    funcs.into_iter().any(|f| {
        f.instrs.iter().any(|i| {
            i.operands
                .iter()
                .any(|o| matches!(o, Operand::Special(SpecialReg::Envreg(1 | 2))))
        })
    })
}

impl<D: Domain> Engine<'_, D> {
    /// `%envreg1` / `%envreg2`: the workspace address's high and low
    /// words when the grid barrier is modelled, else `unsupported`.
    pub(crate) fn envreg(&mut self, t: u32, s: SpecialReg) -> R<u64> {
        if self.gsync.is_none() {
            return Err(self.grid_sync_unsupported(t, s));
        }
        Ok(match s {
            SpecialReg::Envreg(1) => WORKSPACE >> 32,
            _ => WORKSPACE & 0xffff_ffff,
        })
    }

    /// The workspace offset an `atom` / `ld` touches, if it does.
    fn workspace_offset(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: Option<&Operand>,
    ) -> R<Option<u64>> {
        let Some(Operand::Addr(a)) = op else {
            return Ok(None);
        };
        let AddrBase::Reg(r) = a.base else {
            return Ok(None);
        };
        let Value::Bits(b) = self.read(t, info, &Operand::Reg(r), 64)? else {
            return Ok(None);
        };
        let at = b.wrapping_add(a.offset as u64);
        Ok((WORKSPACE..WORKSPACE + 16)
            .contains(&at)
            .then(|| at - WORKSPACE))
    }

    /// An `atom`/`red`/`ld` on the grid workspace (`None`: not one).
    pub(crate) fn grid_sync_access(
        &mut self,
        t: u32,
        info: &FuncInfo,
        pc: u32,
        ins: &InstrData,
    ) -> R<Option<Flow>> {
        if self.gsync.is_none() {
            return Ok(None);
        }
        let addr_op = match &ins.instr {
            Instr::Atom(_) | Instr::Ld(_) => ins.operands.get(1),
            Instr::Red(_) | Instr::St(_) => ins.operands.first(),
            _ => return Ok(None),
        };
        let Some(off) = self.workspace_offset(t, info, addr_op)? else {
            return Ok(None);
        };
        let outside = |e: &mut Self, why: &str| {
            e.unsupported(
                t,
                "grid workspace used outside grid.sync()",
                format!(
                    "{} at workspace offset {off}: {why}; only nvcc's grid.sync() protocol on the workspace \
                     (atom.add.release.gpu.u32 on offset 4 followed by an ld.acquire spin) is modelled",
                    ins.instr.mnemonic()
                ),
            )
        };
        match &ins.instr {
            Instr::Atom(m)
                if off == 4
                    && m.op == AtomOp::Add
                    && matches!(m.ty, ScalarType::U32 | ScalarType::S32 | ScalarType::B32)
                    && matches!(m.sem, Some(MemSem::Release | MemSem::AcqRel))
                    && matches!(m.scope, Some(Scope::Gpu | Scope::Sys)) =>
            {
                if !Self::spin_follows(info, pc, addr_op) {
                    return Err(outside(
                        self,
                        "the add is not followed by an acquire spin on the word",
                    ));
                }
                let inc = match self.read_int(
                    t,
                    info,
                    ins.operands.get(2).unwrap_or(&Operand::Sink),
                    32,
                )? {
                    IntArg::Known(v) => v as u32,
                    IntArg::Undef => {
                        return Err(self.uninit_register(t, "the grid barrier increment"));
                    }
                    _ => return Err(outside(self, "the increment depends on tensor data")),
                };
                self.grid_arrive(t, info, ins, inc).map(Some)
            }
            Instr::Ld(m)
                if off == 4
                    && matches!(m.ty, ScalarType::U32 | ScalarType::S32 | ScalarType::B32)
                    && m.vector.is_none() =>
            {
                let g = self.gsync.as_ref().map(|g| (g.word, g.released.clone()));
                let (word, rel) = g.unwrap_or_default();
                if m.sem == Some(MemSem::Acquire) {
                    self.clocks.acquire(t, &rel);
                }
                let d = ins.operands.first().unwrap_or(&Operand::Sink);
                self.write(t, info, d, Value::Bits(u64::from(word)))?;
                Ok(Some(Flow::Next))
            }
            _ => Err(outside(self, "not the barrier's add or load")),
        }
    }

    /// The instruction after `pc` is an acquire load of the same address,
    /// and a branch within the next few instructions goes back to it.
    fn spin_follows(info: &FuncInfo, pc: u32, addr: Option<&Operand>) -> bool {
        let instrs = &info.ir.instrs;
        let Some(next) = instrs.get(pc as usize + 1) else {
            return false;
        };
        let load = matches!(&next.instr, Instr::Ld(m) if m.sem == Some(MemSem::Acquire))
            && next.operands.get(1) == addr;
        load && (pc + 2..pc + 8).any(|i| {
            instrs.get(i as usize).is_some_and(|b| {
                matches!(b.instr, Instr::Bra { .. })
                    && matches!(b.operands.first(), Some(Operand::Label(l))
                        if info.ir.labels.get(l.index()).map(|l| l.target) == Some(pc + 1))
            })
        })
    }

    /// A thread's add on the barrier word: exact arithmetic, a release,
    /// then the thread waits until the sign bit flips.
    fn grid_arrive(&mut self, t: u32, info: &FuncInfo, ins: &InstrData, inc: u32) -> R<Flow> {
        let rel = self.clocks.release(t);
        self.clocks.tick(t);
        let slot = self.cta_slot();
        let instr = self.cur_instr;
        let Some(g) = self.gsync.as_mut() else {
            return Ok(Flow::Next);
        };
        let old = g.word;
        g.word = old.wrapping_add(inc);
        g.released.join(&rel);
        let d = ins.operands.first().unwrap_or(&Operand::Sink);
        self.write(t, info, d, Value::Bits(u64::from(old)))?;
        let flipped = |w: u32, o: u32| (w ^ o) >> 31 == 1;
        let Some(g) = self.gsync.as_mut() else {
            return Ok(Flow::Next);
        };
        if !flipped(g.word, old) {
            g.waiters.push((slot, t, old, instr));
            self.cta.threads[t as usize].status = Status::Blocked(Wait::Cluster);
            return Ok(Flow::Block);
        }
        // This add completed the barrier: wake every waiter whose spin
        // now exits.
        let word = g.word;
        let released = g.released.clone();
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut g.waiters)
            .into_iter()
            .partition(|w| flipped(word, w.2));
        g.waiters = keep;
        self.clocks.acquire(t, &released);
        self.stats.barriers_completed += 1;
        for (k, w, _, _) in done {
            self.in_slot(k, |e| {
                e.clocks.acquire(w, &released);
                e.wake(w);
            });
        }
        Ok(Flow::Next)
    }

    /// The running CTA's threads blocked at the grid barrier, for the
    /// stuck-CTA analysis.
    pub(crate) fn grid_sync_wait_groups(&self) -> Vec<WaitGroup> {
        let Some(g) = self.gsync.as_ref() else {
            return Vec::new();
        };
        let slot = self.cta_slot();
        let mut by_instr: Vec<(u32, Vec<u32>)> = Vec::new();
        for &(k, t, _, i) in &g.waiters {
            if k != slot {
                continue;
            }
            match by_instr.iter_mut().find(|(x, _)| *x == i) {
                Some((_, v)) => v.push(t),
                None => by_instr.push((i, vec![t])),
            }
        }
        let arrived = g.waiters.len() as u32;
        let expected = self.unit_len();
        by_instr
            .into_iter()
            .map(|(i, ts)| WaitGroup {
                what: format!(
                    "grid barrier (grid.sync(): {arrived} of the grid's {expected} CTAs wait on the workspace word)"
                ),
                instr: super::unpack_instr(i),
                threads: thread_ranges(ts),
                arrived,
                expected,
            })
            .collect()
    }
}
