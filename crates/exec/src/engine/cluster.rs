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
//! - In a cluster of **several CTAs** the CTAs must be co-scheduled (they
//!   wait for each other and read each other's shared memory); the engine
//!   runs one CTA at a time, so `barrier.cluster`, `mapa` and `getctarank`
//!   are reported `unsupported` by name — never approximated.
//!
//! Checked (each names the thread and instruction): a second arrival in a
//! phase before the thread's wait (divergence), a wait with no arrival
//! before it (deadlock: the phase counts the waiting thread itself), lanes
//! of a warp at different `.aligned` cluster barriers (divergence), a phase
//! that never completes (deadlock, through the stuck-CTA analysis, which
//! lists the threads waiting here).

use ptxeq_ir::{Instr, InstrData, MemSem, Operand, SpecialReg};

use super::values::IntArg;
use super::{Engine, Flow, R, Status, Wait, unpack_instr};
use crate::domain::Domain;
use crate::finding::{FindingKind, WaitGroup, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::race::Snapshot;

/// The cluster barrier of a one-CTA cluster.
#[derive(Default)]
pub(crate) struct ClusterBarrier {
    /// Completed phases.
    pub phase: u32,
    /// Per thread: the phase of its arrival not yet followed by its wait,
    /// with the arriving instruction.
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
    /// Threads blocked in `barrier.cluster.wait`, with their instruction.
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
                 and an ld.acquire.gpu spin); a grid barrier needs every CTA of the grid co-scheduled, and \
                 the engine runs CTAs one at a time",
                s.name()
            ),
        )
    }

    /// `barrier.cluster.*`, `mapa`, `getctarank`.
    pub(crate) fn cluster_op(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        if self.cluster_ctas() > 1 {
            let shape = self.cluster_shape();
            return Err(self.unsupported(
                t,
                "clusters of several CTAs",
                format!(
                    "{}: the launch has clusters of {} CTAs ({shape:?}), whose CTAs wait for each other and \
                     read each other's shared memory; co-scheduling the CTAs of a cluster is not modelled \
                     (one-CTA clusters are)",
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
            Instr::Mapa { .. } => self.mapa(t, info, &ins.operands),
            Instr::Getctarank { .. } => {
                // The one CTA of the cluster: every address maps to rank 0.
                let d = ins.operands.first().cloned().unwrap_or(Operand::Sink);
                self.write(t, info, &d, crate::value::Value::Bits(0))?;
                Ok(Flow::Next)
            }
            _ => Err(self.unsupported(t, "not a cluster instruction", ins.instr.mnemonic())),
        }
    }

    fn cluster_state(&mut self) -> &mut ClusterBarrier {
        let n = self.cta.nthreads as usize;
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
        let w = t / 32;
        let c = self.cluster_state();
        let phase = if arrive {
            c.phase
        } else {
            // A wait belongs to the phase of the thread's arrival (a wait
            // without one is reported by `cluster_wait`).
            c.pending[t as usize].map_or(c.phase, |(p, _)| p)
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
        let c = self.cluster_state();
        if let Some((p, i)) = c.pending[t as usize] {
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
        c.pending[t as usize] = Some((c.phase, instr));
        c.arrived += 1;
        if release {
            let snap = self.clocks.snapshot(t);
            self.clocks.tick(t);
            self.cluster.releases.push(snap);
        }
        self.cluster_try_complete();
        Ok(Flow::Next)
    }

    fn cluster_wait(&mut self, t: u32) -> R<Flow> {
        let instr = self.cur_instr;
        let c = self.cluster_state();
        let Some((p, _)) = c.pending[t as usize] else {
            return Err(self.fail(
                t,
                FindingKind::Deadlock,
                "",
                "deadlock: barrier.cluster.wait with no barrier.cluster.arrive before it; the phase waits for every non-exited thread of the cluster to arrive, this one included, so it never completes".into(),
            ));
        };
        if p < c.phase {
            // The phase completed already: acquire it and go on.
            c.pending[t as usize] = None;
            let snaps = c.completed.clone();
            self.clocks.sync(&[t], &snaps);
            return Ok(Flow::Next);
        }
        c.waiters.push((t, instr));
        self.cta.threads[t as usize].status = Status::Blocked(Wait::Cluster);
        Ok(Flow::Block)
    }

    /// Completes the current phase once every non-exited thread arrived:
    /// the waiters acquire the phase's releases and wake.
    fn cluster_try_complete(&mut self) {
        let live = (0..self.cta.nthreads)
            .filter(|&x| self.cta.threads[x as usize].status != Status::Exited)
            .count() as u32;
        let c = self.cluster_state();
        if c.arrived == 0 || c.arrived < live {
            return;
        }
        c.phase += 1;
        c.arrived = 0;
        c.completed = std::mem::take(&mut c.releases);
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
        let mut by_instr: Vec<(u32, Vec<u32>)> = Vec::new();
        for &(t, i) in &c.waiters {
            match by_instr.iter_mut().find(|(k, _)| *k == i) {
                Some((_, v)) => v.push(t),
                None => by_instr.push((i, vec![t])),
            }
        }
        let live = (0..self.cta.nthreads)
            .filter(|&x| self.cta.threads[x as usize].status != Status::Exited)
            .count() as u32;
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
    fn mapa(&mut self, t: u32, info: &FuncInfo, ops: &[Operand]) -> R<Flow> {
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
        let v = self.read(t, info, a, w)?;
        self.write(t, info, d, v)?;
        Ok(Flow::Next)
    }
}
