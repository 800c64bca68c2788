//! Operations on another CTA's mbarrier (issue 15): in a cluster of
//! several CTAs co-scheduled as one unit (`engine/unit.rs`), a thread may
//! `mbarrier.arrive` (also `arrive_drop`, `arrive.expect_tx`,
//! `expect_tx`, `complete_tx`) on the mbarrier of another CTA through a
//! `.shared::cluster` address from `mapa` (CUTLASS's
//! `ClusterBarrier::arrive(cta_id)`).
//!
//! Semantics (PTX ISA, "mbarrier": only these operations take a
//! `.shared::cluster` address of another CTA, and an arrive on one returns
//! no state — its destination must be the sink `_`; `init`, `inval`,
//! `test_wait`/`try_wait` and `pending_count` work on the executing CTA's
//! own mbarriers only):
//!
//! - the event joins the current phase of the target CTA's object, with
//!   the same checks as a local one, judged with the arriving thread's
//!   clocks: the object exists and is valid, its `init` is ordered before
//!   the arrival (a cluster barrier after the init does that), the
//!   previous phase's completion is ordered before it (otherwise another
//!   schedule counts it in that phase: an over-arrival), the count fits
//!   the pending arrivals;
//! - ordering across CTAs follows the scopes of the memory model: an
//!   arrival releases to another CTA's waiters only when it is `.release`
//!   (the default) at `.cluster` scope or wider, and a waiter acquires
//!   other CTAs' releases only when its wait is `.acquire` at `.cluster`
//!   scope or wider (`mbarrier.try_wait.acquire.cluster`); the default
//!   scope `.cta` does not include another CTA's threads. The releases
//!   are kept joined per phase (`PhaseLog::remote`);
//! - the arrival is an access to the target's shared memory: it must be
//!   ordered before the exit of the target CTA's threads (as for
//!   `ld/st.shared::cluster`, `Unit::remote_reads`).

use ptxeq_ir::{Instr, InstrData, MbarrierOp, MemSem, Operand, Scope};

use super::{Event, MAX_COUNT, Who, loc_of};
use crate::domain::Domain;
use crate::engine::{Engine, Flow, Halt, R};
use crate::finding::FindingKind;
use crate::funcinfo::FuncInfo;
use crate::race::Foreign;

/// What the checks of a remote operation read of the target's object
/// (copied out of the parked CTA's state).
struct View {
    name: String,
    init: Event,
    valid: bool,
    phase: i64,
    pending: i64,
    tx: i64,
    asyncs: bool,
    /// The events of the last completed phase.
    prev: Vec<Event>,
    /// The last event of the current phase.
    last: Option<Event>,
    /// Waits that returned: (thread, epoch, target phase).
    passed: Vec<(u32, u32, i64)>,
}

impl View {
    fn of(m: &super::Mbar) -> View {
        View {
            name: m.name.clone(),
            init: m.init,
            valid: m.valid,
            phase: m.phase,
            pending: m.pending,
            tx: m.tx,
            asyncs: !m.asyncs.is_empty(),
            prev: m.done.back().map(|l| l.events.clone()).unwrap_or_default(),
            last: m.cur.events.last().copied(),
            passed: m
                .passed
                .iter()
                .map(|p| (p.tid, p.epoch, p.target))
                .collect(),
        }
    }
}

/// Whether a scope includes the threads of other CTAs of the cluster.
pub(super) fn cluster_scope(scope: Option<Scope>) -> bool {
    matches!(scope, Some(Scope::Cluster | Scope::Gpu | Scope::Sys))
}

impl<D: Domain> Engine<'_, D> {
    /// The CTA id of clock stamp `stamp` when it is another CTA of the
    /// unit than the running one.
    pub(crate) fn foreign_cta_id(&self, stamp: u32) -> Option<[u32; 3]> {
        if stamp == self.clocks.cta() {
            return None;
        }
        let u = self.unit.as_ref()?;
        u.parked
            .iter()
            .flatten()
            .find(|p| p.clocks.cta() == stamp)
            .map(|p| p.cta.id)
    }

    /// The slot of the CTA whose mbarrier the current instruction's
    /// address names, when that is another CTA (set by
    /// `Engine::dsmem_address`), cleared.
    pub(crate) fn take_mbar_target(&mut self) -> Option<u32> {
        self.unit.as_mut().and_then(|u| u.mbar_target.take())
    }

    /// An mbarrier operation of thread `t` on the object `key` of the
    /// CTA in slot `k` of the unit.
    pub(super) fn mbar_remote(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        k: u32,
        key: (u32, u64),
    ) -> R<Flow> {
        let Instr::Mbarrier { op, sem, scope, .. } = &ins.instr else {
            return Err(Halt);
        };
        let ops = &ins.operands;
        let mnemonic = ins.instr.mnemonic();
        let (count, tx, drop, no_complete) = match *op {
            MbarrierOp::Arrive {
                drop,
                no_complete,
                expect_tx,
            } => {
                if !matches!(ops.first(), Some(Operand::Sink)) {
                    return Err(self.unsupported(
                        t,
                        "mbarrier state of another CTA's mbarrier",
                        format!(
                            "{mnemonic}: an arrive on another CTA's mbarrier returns no state (the PTX ISA requires the sink `_` as its destination)"
                        ),
                    ));
                }
                let (count, tx) = match (expect_tx, ops.get(2)) {
                    (true, Some(o)) => (1, self.matrix_u32(t, info, o, "the transaction count")?),
                    (false, Some(o)) => (self.matrix_u32(t, info, o, "the arrival count")?, 0),
                    (_, None) => (1, 0),
                };
                if count == 0 || i64::from(count) > MAX_COUNT {
                    return Err(self.fail(
                        t,
                        FindingKind::Divergence,
                        "mbarrier count out of range",
                        format!("arrival count {count} (1 to 2^20 - 1)"),
                    ));
                }
                (i64::from(count), i64::from(tx), drop, no_complete)
            }
            MbarrierOp::ExpectTx | MbarrierOp::CompleteTx => {
                let n = self.matrix_u32(t, info, &ops[1], "the transaction count")?;
                let n = i64::from(n);
                let tx = if *op == MbarrierOp::ExpectTx { n } else { -n };
                (0, tx, false, false)
            }
            MbarrierOp::Init
            | MbarrierOp::Inval
            | MbarrierOp::Wait { .. }
            | MbarrierOp::PendingCount => {
                return Err(self.unsupported(
                    t,
                    "mbarrier operation on another CTA's mbarrier",
                    format!(
                        "{mnemonic} through a .shared::cluster address of another CTA: the PTX ISA allows only arrive, \
                         arrive_drop, expect_tx and complete_tx on another CTA's mbarrier"
                    ),
                ));
            }
        };
        let release = *sem != Some(MemSem::Relaxed) && cluster_scope(*scope);
        let instr = self.cur_instr;
        let stamp = self.clocks.cta();
        let me = Who {
            slot: t,
            instr,
            cta: Some(stamp),
        };
        let target_stamp = {
            let u = self.unit.as_ref().ok_or(Halt)?;
            u.parked[k as usize].as_ref().ok_or(Halt)?.clocks.cta()
        };
        let (m, name) = self.remote_view(t, k, key, &mnemonic, "joins", tx)?;
        let phase = m.phase;
        if count > m.pending {
            let lw: Who = m.last.map_or(me, Into::into);
            let pending = m.pending;
            return Err(self.mbar_finding(
                FindingKind::Divergence,
                "mbarrier over-arrival",
                key,
                lw,
                me,
                format!(
                    "over-arrival on mbarrier {name}: this arrive-on of count {count} exceeds the {pending} pending arrivals of phase {phase}"
                ),
            ));
        }
        if no_complete && m.pending == count && m.tx + tx == 0 && !m.asyncs {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "mbarrier noComplete arrival completes the phase",
                format!(
                    "this {mnemonic} completes phase {phase} of mbarrier {name} (undefined in PTX)"
                ),
            ));
        }
        // The target's waiters of the previous phase this event is
        // ordered after (no longer a phase behind).
        let passed: Vec<bool> = m
            .passed
            .iter()
            .map(|&(tid, ep, target)| {
                target == phase - 1 && self.knows_reached(t, target_stamp, tid, ep)
            })
            .collect();
        let epoch = self.clocks.epoch(t);
        let ev = Event {
            slot: t,
            epoch,
            instr,
            cta: stamp,
        };
        let released: Option<Foreign> = release.then(|| {
            let f = self.clocks.release(t);
            self.clocks.tick(t);
            f
        });
        let id = self.cta.id;
        if let Some(u) = self.unit.as_mut() {
            u.remote_reads.insert((k, stamp, t), (epoch, instr, id));
        }
        self.in_slot(k, |e| {
            let m = e.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
            let mut gone = passed.into_iter();
            m.passed.retain(|_| !gone.next().unwrap_or(false));
            m.cur.events.push(ev);
            m.pending -= count;
            m.tx += tx;
            if drop {
                m.expected -= count;
            }
            if let Some(f) = &released {
                m.cur.remote.join(f);
            }
            m.users.insert((stamp, t), (epoch, instr));
            e.try_complete_phase(key)
        })?;
        Ok(Flow::Next)
    }
}

impl<D: Domain> Engine<'_, D> {
    /// The part of a `.multicast::cluster` bulk copy of thread `t` that
    /// lands in the CTA of slot `k` (not the running one): the bytes
    /// `land` ((region, offset, width, value), at the offsets of the
    /// executing CTA's destination) are written into CTA `k`'s shared
    /// memory and complete `tx` transaction bytes on CTA `k`'s mbarrier
    /// at `key`.
    ///
    /// Checked with the issuing thread's clocks, as for a remote
    /// `complete_tx`: the object exists and is valid, its `init` and the
    /// completion of its previous phase are ordered before the issue. The
    /// landing is stamped in CTA `k` by the multicast slot of `t`
    /// ([`Engine::mcast_slot`]), which knows what the issuer knew (the
    /// copy starts at the issue): the write is judged at issue against
    /// CTA `k`'s earlier accesses, stays in flight there until the phase
    /// it completes, and only that phase's waiters are ordered after it.
    pub(crate) fn mbar_multicast_land(
        &mut self,
        t: u32,
        k: u32,
        key: (u32, u64),
        land: &[(u32, u64, u64, crate::value::Value<D::Val>)],
        tx: i64,
    ) -> R<()> {
        let mnemonic = "cp.async.bulk .multicast::cluster";
        let instr = self.cur_instr;
        let stamp = self.clocks.cta();
        self.remote_view(t, k, key, mnemonic, "completes transaction bytes of", -tx)?;
        let epoch = self.clocks.epoch(t);
        let released = self.clocks.release(t);
        self.clocks.tick(t);
        let id = self.cta.id;
        if let Some(u) = self.unit.as_mut() {
            u.remote_reads.insert((k, stamp, t), (epoch, instr, id));
        }
        self.in_slot(k, |e| {
            let slot = e.mcast_slot(t);
            e.clocks.acquire(slot, &released);
            let mut copies = Vec::with_capacity(land.len());
            for (r, off, w, v) in land {
                copies.push(e.land_async(t, slot, *r, *off, *w, v.clone()));
            }
            let snap = e.clocks.snapshot(slot);
            e.clocks.tick(slot);
            let m = e.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
            m.asyncs.push(super::AsyncArrive {
                tid: t,
                instr,
                snap,
                copies,
                count: 0,
                tx,
                agent: Some(slot),
            });
            m.users.insert((stamp, t), (epoch, instr));
            e.try_complete_phase(key)
        })
    }
}

impl<D: Domain> Engine<'_, D> {
    /// The checks every use of CTA `k`'s mbarrier at `key` by thread `t`
    /// makes (an arrive-on, expect/complete-tx, a multicast landing),
    /// with `t`'s clocks: the object exists and is valid, its `init` and
    /// the completion of its previous phase are ordered before this use
    /// (`joins` names what the use does to the phase in the message), and
    /// adding `tx` keeps its transaction count in range. The object's
    /// state and its name as the report gives it.
    fn remote_view(
        &mut self,
        t: u32,
        k: u32,
        key: (u32, u64),
        mnemonic: &str,
        joins: &str,
        tx: i64,
    ) -> R<(View, String)> {
        let me = Who {
            slot: t,
            instr: self.cur_instr,
            cta: Some(self.clocks.cta()),
        };
        let rank_name = format!("CTA rank {k} of the cluster");
        let region = self.mem.regions[key.0 as usize].name.clone();
        let Some(m) = self
            .unit
            .as_ref()
            .and_then(|u| u.parked[k as usize].as_ref())
            .and_then(|p| p.cta.mbars.objects.get(&key))
            .map(View::of)
        else {
            return Err(self.fail(
                t,
                FindingKind::Uninitialised,
                "mbarrier used before init",
                format!(
                    "{mnemonic} on {} of {rank_name}, where no mbarrier.init has created an mbarrier object",
                    loc_of(&region, key.1)
                ),
            ));
        };
        let name = format!("{} of {rank_name}", m.name);
        let init: Who = m.init.into();
        if !m.valid {
            return Err(self.mbar_finding(
                FindingKind::Uninitialised,
                "mbarrier used after inval",
                key,
                init,
                me,
                format!("{mnemonic} on mbarrier {name} after it was invalidated (mbarrier.inval)"),
            ));
        }
        if !self.knows_event(t, &m.init) {
            return Err(self.mbar_finding(
                FindingKind::Race,
                "mbarrier init not ordered before use",
                key,
                init,
                me,
                format!(
                    "the mbarrier.init of {name} by {} at {} is not ordered before this {mnemonic} from another CTA \
                     (a cluster barrier, barrier.cluster.arrive.release / barrier.cluster.wait.acquire, between them \
                     orders it): in another schedule the object is used before it exists",
                    self.who_name(init),
                    crate::engine::unpack_instr(init.instr)
                ),
            ));
        }
        let phase = m.phase;
        if let Some(e) = m.prev.iter().find(|e| !self.knows_event(t, e)) {
            let lw: Who = (*e).into();
            return Err(self.mbar_finding(
                FindingKind::Divergence,
                "mbarrier over-arrival",
                key,
                lw,
                me,
                format!(
                    "this {mnemonic} {joins} phase {phase} of mbarrier {name} only because phase {} completed first, \
                     and nothing orders that completion (its event by {} at {}) before it: in another schedule it \
                     counts in phase {} (an over-arrival of that phase)",
                    phase - 1,
                    self.who_name(lw),
                    crate::engine::unpack_instr(lw.instr),
                    phase - 1
                ),
            ));
        }
        if (m.tx + tx).abs() > MAX_COUNT {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "mbarrier tx-count out of range",
                format!("the transaction count of mbarrier {name} leaves the range ±(2^20 - 1)"),
            ));
        }
        Ok((m, name))
    }
}
