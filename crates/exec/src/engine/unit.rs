//! A scheduling unit of several CTAs: the CTAs of one multi-CTA cluster
//! run co-scheduled in one engine (issue 15 item 4).
//!
//! The engine's handlers reach "their" CTA through `Engine::cta`,
//! `Engine::clocks`, `Engine::queue` and the shared-space regions of
//! `Engine::mem`. In a unit these always hold the state of the CTA of the
//! running thread; the other CTAs' state is *parked* here, one
//! [`Parked`] per CTA, and swapped in when the scheduler moves to one of
//! their threads (a swap moves a handful of vectors; nothing is copied).
//! A run of one CTA has no unit (`Engine::unit` is `None`) and pays one
//! `is_some` test per instruction for this.
//!
//! What is per CTA: threads (registers, frames, status, tracer), the 16
//! `bar.sync` barriers, warp collectives, mbarriers, async units, the run
//! queue, the vector clocks (each CTA stamps its accesses with its own
//! index, as in a grid run: `race::Clocks::in_cta`, so the happens-before
//! relation between CTAs goes through release/acquire, `Foreign`
//! knowledge) and one instance of every shared-space region. What is one
//! for the unit: global memory and its shadows, the findings, the
//! cluster barrier (`cluster.rs`), statistics.
//!
//! Distributed shared memory: `mapa` gives an address tagged with the
//! target CTA (`cluster::tag`); an access through a tagged address to
//! another CTA swaps that CTA's shared-region instances in for the
//! duration of the instruction (`Unit::remote`), so the access is judged
//! against the target's shadows with the accessing thread's clocks.

use std::collections::VecDeque;

use super::cta::CtaState;
use super::{Engine, Status};
use crate::domain::Domain;
use crate::memory::{Slot, Slots, Space};
use crate::race::{Clocks, ShadowMem};

/// A remote access's target slot, accessor's stamp and thread.
pub(crate) type RemoteKey = (u32, u32, u32);
/// A remote access's epoch, instruction and accessor's CTA id.
pub(crate) type RemoteAccess = (u32, u32, [u32; 3]);

/// A CTA of the unit that is not running: its state while parked.
pub(crate) struct Parked<V: Copy> {
    pub cta: CtaState<V>,
    pub clocks: Clocks,
    pub queue: VecDeque<u32>,
    /// Its instances of the shared-space regions, in the order of
    /// [`Unit::shared_regions`]: contents and race shadow.
    pub shared: Vec<(Slots<V>, Option<ShadowMem>)>,
}

/// The CTAs of a scheduling unit besides the running one.
pub(crate) struct Unit<V: Copy> {
    /// By slot (the CTA's rank in its cluster): every CTA's parked state,
    /// `None` for the running one.
    pub parked: Vec<Option<Parked<V>>>,
    /// The running CTA's slot.
    pub running: u32,
    /// During one instruction: the slot whose shared-region instances are
    /// swapped into `Engine::mem` for an access to its distributed shared
    /// memory.
    pub remote: Option<u32>,
    /// The shared-space regions (instantiated per CTA), by region index.
    pub shared_regions: Vec<u32>,
    /// Every rank of the cluster is in the unit (a unit that misses one
    /// cannot run a cluster barrier or reach the missing CTA's memory).
    pub complete: bool,
    /// The unit is the whole grid of a `grid.sync()` kernel
    /// (`gridsync.rs`), not a cluster.
    pub grid: bool,
    /// Accesses to another CTA's shared memory not yet known to be
    /// ordered before an exit of one of the target's threads: (target
    /// slot, accessor's stamp, accessor thread) → (epoch, instruction,
    /// accessor's CTA id). A later access of the same thread replaces an
    /// earlier one (program order: if the later is ordered before an
    /// exit, so is the earlier).
    pub remote_reads: rustc_hash::FxHashMap<RemoteKey, RemoteAccess>,
    /// During one `mbarrier` instruction: the slot of the CTA whose
    /// mbarrier its `.shared::cluster` address names, when another CTA
    /// (`mbarrier/remote.rs`).
    pub mbar_target: Option<u32>,
}

impl<V: Copy> Unit<V> {
    /// CTAs in the unit.
    pub(crate) fn len(&self) -> u32 {
        self.parked.len() as u32
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Makes this engine a scheduling unit: `members` (CTA id, access
    /// stamp) join the running CTA, which must be rank 0 of their
    /// cluster; `complete` says whether they are every rank of it. The
    /// ranks of the members are their slots.
    /// With `grid`, the unit is the whole grid of a `grid.sync()` kernel
    /// (`gridsync.rs`) rather than a cluster.
    pub(crate) fn add_unit_ctas(
        &mut self,
        members: &[([u32; 3], u32)],
        complete: bool,
        grid: bool,
    ) {
        let shared_regions: Vec<u32> = (0..self.mem.regions.len() as u32)
            .filter(|&r| self.mem.regions[r as usize].space == Space::Shared)
            .collect();
        let room = 1u64 << super::cluster::TAG_SHIFT;
        if grid {
            let ws = super::gridsync::WORKSPACE;
            if let Some(r) = self.mem.regions.iter().find(|r| {
                r.space == Space::Global && r.base <= ws + 16 && ws < r.base + r.size.max(1)
            }) {
                let name = r.name.clone();
                self.report(
                    crate::finding::Finding::new(
                        crate::finding::FindingKind::ResourceLimit,
                        format!(
                            "global region `{name}` reaches the address the engine gives the grid.sync() \
                             workspace ({ws:#x})"
                        ),
                    )
                    .with_reason("address map"),
                );
                self.log.halt();
                return;
            }
            self.gsync = Some(Box::default());
        } else if let Some(&r) = shared_regions.iter().find(|&&r| {
            self.mem.regions[r as usize].base + self.mem.regions[r as usize].size > room
        }) {
            let name = self.mem.regions[r as usize].name.clone();
            self.report(
                crate::finding::Finding::new(
                    crate::finding::FindingKind::ResourceLimit,
                    format!(
                        "shared variable `{name}` ends beyond {room} bytes of the shared window: the engine tags \
                         .shared::cluster addresses of a multi-CTA cluster above that offset"
                    ),
                )
                .with_reason("address map"),
            );
            self.log.halt();
            return;
        }
        // Other CTAs reach the shared memory: the shadows keep what they
        // can race with.
        for &r in &shared_regions {
            if let Some(sh) = self.mem.shadows[r as usize].as_mut() {
                sh.private = false;
            }
        }
        let n = members.len() + 1;
        let mut parked: Vec<Option<Parked<D::Val>>> = (0..n).map(|_| None).collect();
        let slots = self.clocks_len();
        let clusters = self.clocks.clusters();
        for (k, &(id, stamp)) in members.iter().enumerate() {
            let cta = CtaState::new(self.input, &self.funcs, id, self.cta.tmem.region);
            let shared = shared_regions
                .iter()
                .map(|&r| {
                    let ri = r as usize;
                    let size = self.mem.regions[ri].size as usize;
                    let s = Slots::metered(size, Slot::Unwritten, &self.mem.meter);
                    let sh = self.mem.shadows[ri].as_ref().map(|_| {
                        let mut sh = ShadowMem::metered(size, &self.mem.meter);
                        sh.private = false;
                        sh
                    });
                    (s, sh)
                })
                .collect();
            let mut clocks = Clocks::in_cta(slots, stamp);
            clocks.set_clusters(clusters.clone());
            parked[k + 1] = Some(Parked {
                queue: (0..cta.nthreads).collect(),
                cta,
                clocks,
                shared,
            });
        }
        self.unit = Some(Box::new(Unit {
            parked,
            running: 0,
            remote: None,
            shared_regions,
            complete,
            grid,
            remote_reads: Default::default(),
            mbar_target: None,
        }));
        for k in 1..n as u32 {
            self.switch_to(k);
            for t in 0..self.cta.nthreads {
                if self.push_frame(t, 0, Vec::new()).is_err() {
                    break;
                }
            }
        }
        self.switch_to(0);
    }

    /// Clock slots per CTA (a second per thread for async agents, a
    /// third for tcgen05 agents).
    pub(crate) fn clocks_len(&self) -> usize {
        self.cta.nthreads as usize * self.clock_blocks()
    }

    /// Swaps the shared-region instances in `Engine::mem` with those
    /// parked in slot `k`.
    fn swap_shared(&mut self, k: u32) {
        let Some(u) = self.unit.as_mut() else { return };
        let Some(p) = u.parked[k as usize].as_mut() else {
            return;
        };
        for (i, &r) in u.shared_regions.iter().enumerate() {
            let (s, sh) = &mut p.shared[i];
            std::mem::swap(&mut self.mem.slots[r as usize], s);
            std::mem::swap(&mut self.mem.shadows[r as usize], sh);
        }
    }

    /// Makes the CTA of slot `k` the running one.
    pub(crate) fn switch_to(&mut self, k: u32) {
        self.end_remote();
        let Some(u) = self.unit.as_mut() else { return };
        if u.running == k {
            return;
        }
        let Some(mut p) = u.parked[k as usize].take() else {
            return;
        };
        let old = u.running;
        for (i, &r) in u.shared_regions.iter().enumerate() {
            let (s, sh) = &mut p.shared[i];
            std::mem::swap(&mut self.mem.slots[r as usize], s);
            std::mem::swap(&mut self.mem.shadows[r as usize], sh);
        }
        std::mem::swap(&mut self.cta, &mut p.cta);
        std::mem::swap(&mut self.clocks, &mut p.clocks);
        std::mem::swap(&mut self.queue, &mut p.queue);
        u.parked[old as usize] = Some(p);
        u.running = k;
    }

    /// The running CTA's slot (0 outside a unit).
    pub(crate) fn cta_slot(&self) -> u32 {
        self.unit.as_ref().map_or(0, |u| u.running)
    }

    /// CTAs in the scheduling unit.
    pub(crate) fn unit_len(&self) -> u32 {
        self.unit.as_ref().map_or(1, |u| u.len())
    }

    /// Runs `f` with slot `k` as the running CTA, then switches back.
    pub(crate) fn in_slot<T>(&mut self, k: u32, f: impl FnOnce(&mut Self) -> T) -> T {
        let cur = self.cta_slot();
        self.switch_to(k);
        let r = f(self);
        self.switch_to(cur);
        r
    }

    /// Swaps slot `k`'s shared memory in for the current instruction's
    /// access to its distributed shared memory.
    pub(crate) fn begin_remote(&mut self, k: u32) {
        self.swap_shared(k);
        if let Some(u) = self.unit.as_mut() {
            u.remote = Some(k);
        }
    }

    /// Swaps the running CTA's own shared memory back after a remote
    /// access (at the end of every instruction in a unit).
    pub(crate) fn end_remote(&mut self) {
        if let Some(k) = self.unit.as_mut().and_then(|u| u.remote.take()) {
            self.swap_shared(k);
        }
    }

    /// Threads of slot `k` that have not exited.
    pub(crate) fn live_in_slot(&self, k: u32) -> u32 {
        let count = |c: &CtaState<D::Val>| {
            c.threads
                .iter()
                .filter(|t| t.status != Status::Exited)
                .count() as u32
        };
        match &self.unit {
            Some(u) if u.running != k => u.parked[k as usize].as_ref().map_or(0, |p| count(&p.cta)),
            _ => count(&self.cta),
        }
    }

    /// Threads of the whole unit that have not exited.
    pub(crate) fn live_in_unit(&self) -> u32 {
        (0..self.unit_len()).map(|k| self.live_in_slot(k)).sum()
    }

    /// When the running CTA has nothing to run: moves to the next CTA of
    /// the unit (in slot order after the running one) that has a thread to
    /// run, or whose quiescent collectives complete. `false` when no CTA
    /// of the unit can go on.
    pub(crate) fn next_runnable_slot(&mut self) -> bool {
        let n = self.unit_len();
        let start = self.cta_slot();
        for i in 1..n {
            let k = (start + i) % n;
            self.switch_to(k);
            if !self.queue.is_empty() || self.resolve_quiescent() {
                return true;
            }
        }
        self.switch_to(start);
        false
    }

    /// The end of a unit's run: the stuck analysis and exit checks of
    /// every CTA, then the first CTA is the running one again.
    pub(crate) fn finish_unit_slots(&mut self) {
        for k in 0..self.unit_len() {
            if self.log.halted() {
                break;
            }
            self.switch_to(k);
            self.check_stuck();
            self.tmem_finish();
        }
        self.switch_to(0);
    }

    /// Every CTA's threads in slot order (the trace of a unit's run).
    pub(crate) fn take_unit_threads(&mut self) -> Vec<super::Thread<D::Val>> {
        self.switch_to(0);
        let mut all = std::mem::take(&mut self.cta.threads);
        if let Some(u) = self.unit.as_mut() {
            for p in u.parked.iter_mut().flatten() {
                all.append(&mut p.cta.threads);
            }
        }
        all
    }
}
