//! Thread-block clusters (issue 15 item 4): the cluster coordinates,
//! `barrier.cluster.arrive/wait`, `mapa` and `getctarank`, and the
//! cooperative-groups grid workspace (`%envreg1/2`, item 5).
//!
//! What is modelled (docs/semantics.md, "Clusters and grid-wide
//! synchronisation"):
//!
//! - The cluster special registers (`%cluster_ctarank`, `%clusterid`, …)
//!   are exact for any cluster shape (`CtaInput::cluster`; no explicit
//!   cluster is a cluster of one CTA).
//! - In a cluster of **one CTA** every cluster operation is exact:
//!   `barrier.cluster` is a split barrier over the CTA's non-exited
//!   threads (per the PTX ISA each thread arrives once per phase, then
//!   waits; `arrive` releases unless `.relaxed`, `wait` acquires), `mapa`
//!   to rank 0 is the identity (the `.shared::cta` window lies inside the
//!   `.shared::cluster` window) and to any other rank an out-of-bounds
//!   access, `getctarank` is 0.
//! - In a cluster of **several CTAs** the CTAs are co-scheduled in one
//!   engine (a scheduling unit, `unit.rs`) when the run holds the whole
//!   cluster (a grid run of whole clusters, `crate::grid`): the barrier
//!   counts every non-exited thread of every CTA of the cluster, an
//!   arrival releases its thread's clock (`Clocks::release`, the CTA's
//!   and what it knows of others) and a wait acquires the join of the
//!   phase's releases; `mapa` tags the address with the target CTA
//!   ([`tag`]); an access through a tagged address reaches the target's
//!   instance of the shared region ([`Engine::dsmem_address`]). A run
//!   that holds only part of a multi-CTA cluster (one CTA alone) reports
//!   `barrier.cluster`, `mapa` and `getctarank` `unsupported` by name —
//!   never approximated.
//!
//! Checked (each names the thread and instruction): a second arrival in a
//! phase before the thread's wait (divergence), a wait with no arrival
//! before it (deadlock: the phase counts the waiting thread itself), lanes
//! of a warp at different `.aligned` cluster barriers (divergence), a phase
//! that never completes (deadlock, through the stuck-CTA analysis, which
//! lists the threads waiting here).

use ptxeq_ir::{Instr, InstrData, MemSem, Operand, SpecialReg, StateSpace};

use super::values::IntArg;
use super::{Engine, Flow, R, Status, Wait, unpack_instr};
use crate::domain::Domain;
use crate::finding::{Finding, FindingKind, WaitGroup, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::memory::SHARED_WINDOW;
use crate::race::{Foreign, Snapshot};

/// The bit at which a `.shared::cluster` address produced by `mapa` in a
/// multi-CTA cluster holds its target: bits `TAG_SHIFT..32` are the
/// target's rank + 1 (0: the accessing CTA's own `.shared::cta` window,
/// which lies inside the cluster window). Shared regions lie below it
/// (checked when a unit is built), so the tagged address also fits the
/// 32-bit `.shared::cluster` registers nvcc uses.
pub(crate) const TAG_SHIFT: u32 = 27;

/// The `.shared::cluster` address of shared offset `off` in CTA `rank`.
pub(crate) fn tag(off: u64, rank: u32) -> u64 {
    (off & ((1 << TAG_SHIFT) - 1)) | (u64::from(rank) + 1) << TAG_SHIFT
}

/// The cluster barrier: of a one-CTA cluster, or shared by the CTAs of a
/// scheduling unit. Threads are numbered across the unit: slot ×
/// threads per CTA + linear index ([`Engine::unit_thread`]).
#[derive(Default)]
pub(crate) struct ClusterBarrier {
    /// Completed phases.
    pub phase: u32,
    /// Per thread of the unit: the phase of its arrival not yet followed
    /// by its wait, with the arriving instruction.
    pub pending: Vec<Option<(u32, u32)>>,
    /// Threads arrived in the current phase.
    pub arrived: u32,
    /// Releasing arrivals of the current phase (`.relaxed` ones release
    /// nothing).
    pub releases: Vec<Snapshot>,
    /// The releases of the last completed phase: what a wait on it
    /// acquires (a thread lags at most one phase: it cannot arrive again
    /// before its wait).
    pub completed: Vec<Snapshot>,
    /// In a unit of several CTAs: the releasing arrivals of the current
    /// phase (each CTA's clock as the arriving thread knows it).
    pub unit_releases: Vec<Foreign>,
    /// In a unit: the join of the last completed phase's releases.
    pub unit_completed: Foreign,
    /// Threads (of the unit) blocked in `barrier.cluster.wait`, with their
    /// instruction.
    pub waiters: Vec<(u32, u32)>,
    /// The `.aligned` cluster-barrier instruction the lanes of a warp
    /// reached, by (warp, phase, arrive): its lanes must agree.
    pub aligned: rustc_hash::FxHashMap<(u32, u32, bool), u32>,
}

impl<D: Domain> Engine<'_, D> {
    /// The cluster shape (`[1, 1, 1]` without explicit clusters).
    pub(crate) fn cluster_shape(&self) -> [u32; 3] {
        self.input.cluster.unwrap_or([1, 1, 1])
    }

    /// CTAs per cluster.
    pub(crate) fn cluster_ctas(&self) -> u32 {
        self.cluster_shape().iter().product()
    }

    /// This CTA's rank in its cluster (x fastest).
    pub(crate) fn cluster_rank(&self) -> u32 {
        let c = self.cluster_shape();
        let r = |d: usize| self.cta.id[d] % c[d];
        r(0) + c[0] * (r(1) + c[1] * r(2))
    }

    /// `%envreg1`/`%envreg2`: the grid workspace of a cooperative launch.
    pub(crate) fn grid_sync_unsupported(&mut self, t: u32, s: SpecialReg) -> super::Halt {
        self.unsupported(
            t,
            "grid-wide synchronisation (cooperative groups grid.sync())",
            format!(
                "{} is the grid-synchronisation workspace pointer of a cooperative launch: nvcc lowers \
                 cooperative_groups grid.sync() to a barrier protocol on that workspace (atom.add.release.gpu \
                 and an ld.acquire.gpu spin); the grid barrier is modelled only when every CTA of the grid \
                 runs together (ctas = \"all\", no multi-CTA clusters), and this run does not hold the whole grid",
                s.name()
            ),
        )
    }

    /// `barrier.cluster.*`, `mapa`, `getctarank`.
    pub(crate) fn cluster_op(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        if self.unit.as_ref().is_some_and(|u| u.grid) {
            return Err(self.unsupported(
                t,
                "cluster operations in a grid-synchronised kernel",
                format!(
                    "{}: the kernel's CTAs run as one grid-wide unit for grid.sync(); cluster barriers and \
                     distributed shared memory in such a unit are not modelled",
                    ins.instr.mnemonic()
                ),
            ));
        }
        if self.cluster_ctas() > 1 && !self.unit.as_ref().is_some_and(|u| u.complete) {
            let shape = self.cluster_shape();
            return Err(self.unsupported(
                t,
                "clusters of several CTAs",
                format!(
                    "{}: the launch has clusters of {} CTAs ({shape:?}), whose CTAs wait for each other and \
                     read each other's shared memory; they are co-scheduled only in a run of several CTAs \
                     that holds the whole cluster (this run does not)",
                    ins.instr.mnemonic(),
                    self.cluster_ctas()
                ),
            ));
        }
        match &ins.instr {
            Instr::BarrierCluster {
                arrive,
                sem,
                aligned,
            } => {
                if *aligned {
                    self.cluster_aligned(t, *arrive)?;
                }
                if *arrive {
                    self.cluster_arrive(t, *sem != Some(MemSem::Relaxed))
                } else {
                    self.cluster_wait(t)
                }
            }
            Instr::Mapa { space, .. } => self.mapa(t, info, *space, &ins.operands),
            Instr::Getctarank { space, .. } => {
                let d = ins.operands.first().cloned().unwrap_or(Operand::Sink);
                let rank = if self.unit.is_some() {
                    let a = ins.operands.get(1).cloned().unwrap_or(Operand::Sink);
                    let w = self.operand_width(info, &a).unwrap_or(64);
                    let a = self.known_int(t, info, &a, w, "the getctarank address")?;
                    let off = if *space == StateSpace::Generic {
                        a.wrapping_sub(SHARED_WINDOW)
                    } else {
                        a
                    };
                    match off >> TAG_SHIFT {
                        0 => self.cluster_rank(),
                        k => (k - 1) as u32,
                    }
                } else {
                    // The one CTA of the cluster: every address maps to
                    // rank 0.
                    0
                };
                self.write(t, info, &d, crate::value::Value::Bits(u64::from(rank)))?;
                Ok(Flow::Next)
            }
            _ => Err(self.unsupported(t, "not a cluster instruction", ins.instr.mnemonic())),
        }
    }

    /// Thread `t` of the running CTA numbered across the unit.
    pub(crate) fn unit_thread(&self, t: u32) -> u32 {
        self.cta_slot() * self.cta.nthreads + t
    }

    fn cluster_state(&mut self) -> &mut ClusterBarrier {
        let n = (self.cta.nthreads * self.unit_len()) as usize;
        let c = &mut self.cluster;
        if c.pending.len() != n {
            c.pending = vec![None; n];
        }
        c
    }

    /// Lanes of a warp must reach one `.aligned` cluster arrive (wait)
    /// per phase.
    fn cluster_aligned(&mut self, t: u32, arrive: bool) -> R<()> {
        let instr = self.cur_instr;
        let w = self.cta_slot() * self.cta.nwarps + t / 32;
        let g = self.unit_thread(t) as usize;
        let c = self.cluster_state();
        let phase = if arrive {
            c.phase
        } else {
            // A wait belongs to the phase of the thread's arrival (a wait
            // without one is reported by `cluster_wait`).
            c.pending[g].map_or(c.phase, |(p, _)| p)
        };
        let what = if arrive { "arrive" } else { "wait" };
        match c.aligned.get(&(w, phase, arrive)) {
            Some(&i) if i != instr => Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "barrier divergence: lanes of warp {w} reach different .aligned barrier.cluster.{what} instructions in phase {phase} ({} and {})",
                    unpack_instr(i),
                    unpack_instr(instr)
                ),
            )),
            _ => {
                c.aligned.insert((w, phase, arrive), instr);
                Ok(())
            }
        }
    }

    fn cluster_arrive(&mut self, t: u32, release: bool) -> R<Flow> {
        let instr = self.cur_instr;
        let g = self.unit_thread(t) as usize;
        let c = self.cluster_state();
        if let Some((p, i)) = c.pending[g] {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "cluster barrier: this thread arrives again (its arrival at {} in phase {p} has no barrier.cluster.wait yet), so one phase would count it twice",
                    unpack_instr(i)
                ),
            ));
        }
        c.pending[g] = Some((c.phase, instr));
        c.arrived += 1;
        if release && self.unit.is_some() {
            let f = self.clocks.release(t);
            self.clocks.tick(t);
            self.cluster.unit_releases.push(f);
        } else if release {
            let snap = self.clocks.snapshot(t);
            self.clocks.tick(t);
            self.cluster.releases.push(snap);
        }
        self.cluster_try_complete();
        Ok(Flow::Next)
    }

    fn cluster_wait(&mut self, t: u32) -> R<Flow> {
        let instr = self.cur_instr;
        let g = self.unit_thread(t);
        let unit = self.unit.is_some();
        let c = self.cluster_state();
        let Some((p, _)) = c.pending[g as usize] else {
            return Err(self.fail(
                t,
                FindingKind::Deadlock,
                "",
                "deadlock: barrier.cluster.wait with no barrier.cluster.arrive before it; the phase waits for every non-exited thread of the cluster to arrive, this one included, so it never completes".into(),
            ));
        };
        if p < c.phase {
            // The phase completed already: acquire it and go on.
            c.pending[g as usize] = None;
            if unit {
                let f = c.unit_completed.clone();
                self.clocks.acquire(t, &f);
            } else {
                let snaps = c.completed.clone();
                self.clocks.sync(&[t], &snaps);
            }
            return Ok(Flow::Next);
        }
        c.waiters.push((g, instr));
        self.cta.threads[t as usize].status = Status::Blocked(Wait::Cluster);
        Ok(Flow::Block)
    }

    /// Completes the current phase once every non-exited thread arrived:
    /// the waiters acquire the phase's releases and wake.
    fn cluster_try_complete(&mut self) {
        let live = self.live_in_unit();
        let c = self.cluster_state();
        if c.arrived == 0 || c.arrived < live {
            return;
        }
        c.phase += 1;
        c.arrived = 0;
        c.completed = std::mem::take(&mut c.releases);
        if self.unit.is_some() {
            self.cluster_complete_unit();
            return;
        }
        let c = &mut self.cluster;
        // Waits may still come for the phase just completed, nothing for
        // older ones.
        let keep = c.phase - 1;
        c.aligned.retain(|&(_, p, _), _| p >= keep);
        let waiters = std::mem::take(&mut c.waiters);
        let snaps = c.completed.clone();
        for &(w, _) in &waiters {
            self.cluster.pending[w as usize] = None;
            self.clocks.sync(&[w], &snaps);
        }
        self.stats.barriers_completed += 1;
        for (w, _) in waiters {
            self.wake(w);
        }
    }

    /// Completes a phase of a unit's cluster barrier: every waiter, in
    /// whichever CTA, acquires the join of the phase's releases and wakes.
    fn cluster_complete_unit(&mut self) {
        let c = &mut self.cluster;
        let mut joined = Foreign::default();
        for f in std::mem::take(&mut c.unit_releases) {
            joined.join(&f);
        }
        c.unit_completed = joined.clone();
        let keep = c.phase - 1;
        c.aligned.retain(|&(_, p, _), _| p >= keep);
        let waiters = std::mem::take(&mut c.waiters);
        let n = self.cta.nthreads;
        for &(g, _) in &waiters {
            self.cluster.pending[g as usize] = None;
        }
        self.stats.barriers_completed += 1;
        for (g, _) in waiters {
            let (k, w) = (g / n, g % n);
            self.in_slot(k, |e| {
                e.clocks.acquire(w, &joined);
                e.wake(w);
            });
        }
    }

    /// A thread exited: a phase waiting only for it completes.
    pub(crate) fn cluster_after_exit(&mut self) {
        if self.cluster.arrived > 0 {
            self.cluster_try_complete();
        }
    }

    /// The threads stuck in `barrier.cluster.wait`, for the stuck-CTA
    /// analysis.
    pub(crate) fn cluster_wait_groups(&self) -> Vec<WaitGroup> {
        let c = &self.cluster;
        let n = self.cta.nthreads;
        let slot = self.cta_slot();
        let mut by_instr: Vec<(u32, Vec<u32>)> = Vec::new();
        for &(g, i) in &c.waiters {
            if g / n != slot {
                continue;
            }
            let t = g % n;
            match by_instr.iter_mut().find(|(k, _)| *k == i) {
                Some((_, v)) => v.push(t),
                None => by_instr.push((i, vec![t])),
            }
        }
        let live = self.live_in_unit();
        by_instr
            .into_iter()
            .map(|(i, ts)| WaitGroup {
                what: format!("cluster barrier (phase {})", c.phase),
                instr: unpack_instr(i),
                threads: thread_ranges(ts),
                arrived: c.arrived,
                expected: live,
            })
            .collect()
    }

    /// `mapa{.space}.type d, a, rank`: the address `a` of this CTA's
    /// shared memory as seen in CTA `rank` of the cluster.
    fn mapa(&mut self, t: u32, info: &FuncInfo, space: StateSpace, ops: &[Operand]) -> R<Flow> {
        let sink = Operand::Sink;
        let (d, a, b) = (
            ops.first().unwrap_or(&sink),
            ops.get(1).unwrap_or(&sink),
            ops.get(2).unwrap_or(&sink),
        );
        let rank = match self.read_int(t, info, b, 32)? {
            IntArg::Known(v) => v as u32,
            IntArg::Undef => return Err(self.uninit_register(t, "the mapa target rank")),
            IntArg::Tainted(_) | IntArg::Data(_) => {
                return Err(self.unsupported(
                    t,
                    "synchronisation depends on tensor data",
                    "the mapa target rank is computed from tensor values".into(),
                ));
            }
        };
        let n = self.cluster_ctas();
        if rank >= n {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "",
                format!(
                    "mapa to CTA rank {rank} of a cluster of {n} CTA{}: no such CTA, so every access through the address is out of bounds",
                    if n == 1 { "" } else { "s" }
                ),
            ));
        }
        let w = self.operand_width(info, a).unwrap_or(64);
        if self.unit.is_none() {
            // A one-CTA cluster: rank 0 is this CTA, whose `.shared::cta`
            // window lies inside the cluster window.
            let v = self.read(t, info, a, w)?;
            self.write(t, info, d, v)?;
            return Ok(Flow::Next);
        }
        let generic = space == StateSpace::Generic;
        let addr = self.known_int(t, info, a, w, "the mapa address")?;
        let off = if generic {
            addr.wrapping_sub(SHARED_WINDOW)
        } else {
            addr
        };
        if off >> 32 != 0 {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "",
                format!(
                    "mapa of address {addr:#x}, which is not a shared-memory address of this CTA"
                ),
            ));
        }
        let tagged = tag(off, rank);
        let v = if generic {
            tagged + SHARED_WINDOW
        } else {
            tagged
        };
        let v = if w < 64 { v & ((1u64 << w) - 1) } else { v };
        self.write(t, info, d, crate::value::Value::Bits(v))?;
        Ok(Flow::Next)
    }

    /// An integer operand that must be known (an address, a rank).
    fn known_int(&mut self, t: u32, info: &FuncInfo, op: &Operand, w: u32, what: &str) -> R<u64> {
        match self.read_int(t, info, op, w)? {
            IntArg::Known(v) => Ok(v),
            IntArg::Undef => Err(self.uninit_register(t, what)),
            IntArg::Tainted(_) | IntArg::Data(_) => Err(self.unsupported(
                t,
                "synchronisation depends on tensor data",
                format!("{what} is computed from tensor values"),
            )),
        }
    }

    /// Resolves a shared-space offset `a` of an access in a unit of
    /// several CTAs (`space`: the instruction's state space): an address
    /// tagged by `mapa` with another CTA's rank swaps that CTA's shared
    /// memory in for this instruction ([`Engine::begin_remote`]). `None`
    /// when the access is out of bounds (reported here).
    pub(crate) fn dsmem_address(&mut self, t: u32, space: StateSpace, a: u64) -> R<Option<u64>> {
        let Some(u) = self.unit.as_ref() else {
            return Ok(Some(a));
        };
        let (running, remote, n) = (u.running, u.remote, u.len());
        let off = a & ((1 << TAG_SHIFT) - 1);
        let target = match a >> TAG_SHIFT {
            0 => running,
            k => (k - 1) as u32,
        };
        let mine = if target == running {
            None
        } else {
            Some(target)
        };
        if remote != mine && remote.is_some() {
            return Err(self.unsupported(
                t,
                "an instruction accessing the shared memory of two CTAs",
                "one instruction reads or writes the shared memory of two CTAs of the cluster"
                    .into(),
            ));
        }
        let Some(k) = mine else {
            return Ok(Some(off));
        };
        if a >> 32 != 0 || k >= n {
            self.note(
                t,
                FindingKind::OutOfBounds,
                format!(
                    "shared-memory access at address {a:#x}: no CTA of this cluster of {n} has that .shared::cluster address, so the access is out of bounds"
                ),
                None,
            );
            return Ok(None);
        }
        if space == StateSpace::Shared {
            self.note(
                t,
                FindingKind::OutOfBounds,
                format!(
                    "a .shared::cta access through the .shared::cluster address {a:#x} of CTA rank {k}: a .shared::cta access reaches only the executing CTA's shared memory"
                ),
                None,
            );
            return Ok(None);
        }
        if self.live_in_slot(k) == 0 {
            return Err(self.fail(
                t,
                FindingKind::OutOfBounds,
                "distributed shared memory of an exited CTA",
                format!(
                    "access to the shared memory of CTA rank {k} of the cluster after all its threads exited: a CTA's shared memory exists only while the CTA runs (a cluster barrier before the exit keeps it alive)"
                ),
            ));
        }
        let i = super::unpack_instr(self.cur_instr);
        let x = self
            .funcs
            .get(i.func as usize)
            .and_then(|f| f.ir.instrs.get(i.index as usize));
        if x.is_some_and(|x| matches!(x.instr, Instr::Mbarrier { .. })) {
            // Another CTA's mbarrier: the object is the target's, at the
            // same (region, offset) (`mbarrier/remote.rs`).
            if let Some(u) = self.unit.as_mut() {
                u.mbar_target = Some(k);
            }
            return Ok(Some(off));
        }
        let plain = x.is_some_and(|x| {
            matches!(
                x.instr,
                Instr::Ld(_) | Instr::St(_) | Instr::Atom(_) | Instr::Red(_)
            )
        });
        if !plain {
            return Err(self.unsupported(
                t,
                "distributed shared memory through this instruction",
                "only ld, st, atom and red reach another CTA's shared memory (mbarrier objects, copies and \
                 matrix loads in another CTA are not modelled)"
                    .into(),
            ));
        }
        // mbarriers alone are fine (an ordinary access overlapping one of
        // the target's is checked against the target's, `mbar_access`);
        // in-flight copies and async-proxy readers are not.
        let busy = |c: &super::cta::CtaState<D::Val>| c.asyncs.any() || c.proxy.on;
        let target_busy = self
            .unit
            .as_ref()
            .and_then(|u| u.parked[k as usize].as_ref())
            .is_some_and(|p| busy(&p.cta));
        if busy(&self.cta) || target_busy {
            return Err(self.unsupported(
                t,
                "distributed shared memory with asynchronous units",
                "an access to another CTA's shared memory in a kernel with cp.async copies or async-proxy \
                 (TMA, wgmma) reads: the remote access is not checked against the target CTA's asynchronous units"
                    .into(),
            ));
        }
        self.begin_remote(k);
        let key = (k, self.clocks.cta(), t);
        let val = (self.clocks.epoch(t), self.cur_instr, self.cta.id);
        if let Some(u) = self.unit.as_mut() {
            u.remote_reads.insert(key, val);
        }
        Ok(Some(off))
    }

    /// Thread `t` of the running CTA exited (in a unit): the remote
    /// accesses to this CTA's shared memory it knows of are ordered before
    /// the CTA's exit; when it was the CTA's last thread, any other one
    /// may run after the CTA's shared memory is gone: reported.
    pub(crate) fn dsmem_after_exit(&mut self, t: u32) {
        let slot = self.cta_slot();
        let Some(u) = self.unit.as_mut() else { return };
        if u.remote_reads.is_empty() {
            return;
        }
        let clocks = &self.clocks;
        u.remote_reads
            .retain(|&(k, stamp, tid), &mut (epoch, instr, _)| {
                k != slot || {
                    let a = crate::race::Acc {
                        tid,
                        cta: stamp,
                        epoch,
                        instr,
                        ..Default::default()
                    };
                    !clocks.knows_acc(t, &a)
                }
            });
        if self.live_in_slot(slot) != 0 {
            return;
        }
        let mut left: Vec<_> = self
            .unit
            .as_ref()
            .map(|u| {
                u.remote_reads
                    .iter()
                    .filter(|((k, _, _), _)| *k == slot)
                    .map(|(&(_, _, tid), &(_, instr, cta))| (cta, tid, instr))
                    .collect()
            })
            .unwrap_or_default();
        left.sort_unstable();
        let Some(&(cta, tid, instr)) = left.first() else {
            return;
        };
        let rank = self.cluster_rank();
        let access = crate::finding::AccessRef {
            thread: self.thread_ref(tid),
            instr: unpack_instr(instr),
            kind: crate::finding::AccessKind::Read,
            cta: Some(cta),
        };
        let [x, y, z] = cta;
        let msg = format!(
            "{} of CTA ({x},{y},{z}) accesses the shared memory of CTA rank {rank} of its cluster at {}, and \
             nothing orders that access before the exit of any of CTA rank {rank}'s threads: the CTA may exit, \
             and its shared memory cease to exist, before the access (a cluster barrier before the exit keeps \
             it alive){}",
            access.thread,
            access.instr,
            if left.len() > 1 {
                format!(" ({} more such threads)", left.len() - 1)
            } else {
                String::new()
            }
        );
        let mut f = Finding::new(FindingKind::OutOfBounds, msg)
            .at(Some(access.thread), Some(access.instr))
            .with_reason("distributed shared memory of an exited CTA");
        f.accesses = vec![access];
        self.report(f);
    }
}
