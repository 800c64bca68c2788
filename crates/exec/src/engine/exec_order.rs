//! Execution order that is not a memory ordering: which points of other
//! threads a thread is known to have *executed after*, beyond
//! happens-before.
//!
//! Why: the mbarrier phase checks (`mbarrier.rs`) ask an execution-order
//! question — "can this waiter still be polling when the next phase
//! completes?" — and happens-before is a sufficient but too strong
//! answer. The CUTLASS / Hopper-tutorial consumer pattern is
//!
//! ```text
//! all 128 threads: wait full[s]; wgmma.mma_async (reads stage s);
//!                  wgmma.commit_group; wgmma.wait_group 0
//! one thread:      mbarrier.arrive empty[s]      // stage s is free
//! ```
//!
//! The producer refills stage `s` after `empty[s]` completes, so the next
//! phase of `full[s]` is ordered (by happens-before) after the *elected*
//! thread's wait only; the other 127 waits are not in its happens-before
//! past, and the phase-lag check would call them a whole phase behind.
//! They are not: a `wgmma.mma_async` is one operation of the whole
//! warpgroup (its accumulator is spread over the registers of all four
//! warps), so it cannot complete before every thread of the warpgroup
//! issued it, and a `wgmma.wait_group` that retires it returns after that
//! completion. Every thread issued it after its own wait returned.
//!
//! How: in kernels that have both `wgmma.mma_async` and mbarriers, the
//! clocks carry one more slot block, *execution slots* (`t + k·nthreads`,
//! the last block). Slot `X(u)` is never stamped on an access, so knowing
//! it orders no memory; a clock whose entry for `X(u)` is `e` knows that
//! thread `u` reached its epoch `e`. Each issued `mma_async` records the
//! epochs of its 128 threads at issue; the `wait_group` that retires it
//! raises each waiting thread's `X(u)` entries to them; the entries then
//! travel with every release/acquire like any other clock entry. The phase
//! checks accept `(u, e)` as reached when the deciding slot knows `u`'s
//! epoch `e` or `X(u)`'s. Execution knowledge is not transitive here (a
//! thread learns only the issuing threads' own epochs, not what they
//! knew): that can only leave a false alarm, never hide a lag.
//!
//! The assumption (the collective's completion follows every issue) is
//! printed with the verdict of such kernels (`drivers/check`,
//! `assumptions::WGMMA_EXEC`).

use std::rc::Rc;

use ptxeq_ir::{Instr, WgmmaOp};

use super::Engine;
use crate::domain::Domain;
use crate::funcinfo::FuncInfo;

/// Whether a kernel needs execution slots: it has a `wgmma.mma_async`
/// and an mbarrier operation (the only consumers of the order).
pub(crate) fn needs_exec_slots(funcs: &[FuncInfo]) -> bool {
    let has = |p: &dyn Fn(&Instr) -> bool| {
        funcs
            .iter()
            .any(|f| f.ir.instrs.iter().any(|i| p(&i.instr)))
    };
    has(&|i| matches!(i, Instr::Wgmma(WgmmaOp::MmaAsync { .. })))
        && has(&|i| matches!(i, Instr::Mbarrier { .. }))
}

impl<D: Domain> Engine<'_, D> {
    /// The execution slot of thread `t` of this CTA, when the clocks have
    /// them.
    pub(crate) fn exec_slot(&self, t: u32) -> Option<u32> {
        self.exec_slots.then(|| {
            let k = self.clock_blocks() as u32 - 1;
            t + k * self.cta.nthreads
        })
    }

    /// The epochs of threads `base .. base + n` now (an `mma_async`
    /// rendezvous: every one of them has issued it).
    pub(crate) fn issue_epochs(&self, base: u32, n: u32) -> Option<Rc<[u32]>> {
        self.exec_slots
            .then(|| (base..base + n).map(|u| self.clocks.epoch(u)).collect())
    }

    /// Threads `base .. base + epochs.len()` retire operations issued at
    /// `epochs` (their joined issue epochs): each of them learns that every
    /// issuing thread reached its epoch.
    pub(crate) fn learn_issues(&mut self, base: u32, epochs: &[u32]) {
        let Some(x0) = self.exec_slot(base) else {
            return;
        };
        for i in 0..epochs.len() as u32 {
            self.clocks.raise(base + i, x0, epochs);
        }
    }

    /// Whether clock slot `slot` knows that thread `u` of the CTA stamped
    /// `cta` reached epoch `e`: by happens-before, or by execution order
    /// (its execution slot).
    pub(crate) fn knows_reached(&self, slot: u32, cta: u32, u: u32, e: u32) -> bool {
        self.clocks.knows_at(slot, cta, u, e)
            || self
                .exec_slot(u)
                .is_some_and(|x| self.clocks.knows_at(slot, cta, x, e))
    }
}
