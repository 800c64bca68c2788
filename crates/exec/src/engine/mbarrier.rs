//! `mbarrier` objects in shared memory with exact phase tracking, and
//! `cp.async.mbarrier.arrive{.noinc}` (Ampere copies completing on an
//! mbarrier).
//!
//! Semantics (PTX ISA, "Parallel synchronization and communication:
//! mbarrier"; docs/semantics.md, "mbarrier and asynchronous copies"):
//!
//! - `init [a], n` creates the object in phase 0 with `n` expected
//!   arrivals; each phase completes when its pending arrival count and its
//!   transaction count (`expect_tx` adds, `complete_tx` subtracts) are
//!   both zero; the next phase starts with the expected count (reduced for
//!   good by `arrive_drop`) and a zero transaction count.
//! - A wait tests a phase: with `.parity P` the phase whose parity is `P`
//!   among the current and the immediately preceding phase (the ISA's
//!   definition: the wait returns true iff the current phase's parity is
//!   not `P`); with a state from `arrive`, the phase that arrive joined.
//!
//! The engine runs one schedule. What it concludes holds for every
//! schedule only when the phase every event belongs to, and the phase
//! every wait observes, is the same in all of them; happens-before (the
//! race detector's vector clocks) decides that:
//!
//! - an event (arrival, `expect_tx`, `complete_tx`) that joins phase `k`
//!   must be ordered after the completion of phase `k - 1` (after `init`
//!   for phase 0); otherwise some schedule counts it in phase `k - 1`
//!   (an over-arrival) — reported with the event and the last arrival of
//!   the earlier phase;
//! - a wait that targets phase `k` must be ordered after the completion
//!   of phase `k - 1` (otherwise it can see phase `k - 1` pending, whose
//!   parity differs, and pass at once), and phase `k + 1` must contain an
//!   event ordered after the wait returned (otherwise some schedule
//!   completes phase `k + 1` too before the waiter polls, the parity is
//!   `P` again and the waiter waits for phase `k + 2`: a waiter a whole
//!   phase behind). Both are reported as races on the barrier with both
//!   threads and instructions.
//!
//! A phase completion orders everything its events released (arrivals are
//! `.release` unless `.relaxed`) before whatever its waiters do after
//! the wait (`.acquire` unless `.relaxed`). A completed copy tracked by
//! `cp.async.mbarrier.arrive` is stamped by the issuing thread's *async
//! agent* (a second vector-clock slot per thread): only the phase's
//! waiters learn about it, the issuing thread included.
//!
//! Waits are modelled as blocking: the thread parks until its target
//! phase completes, which is exact for polling loops (`spin.rs`); a wait
//! whose false result leads anywhere else is unsupported.

use std::collections::VecDeque;
use std::rc::Rc;

use ptxeq_ir::{Instr, InstrData, MbarrierOp, MemSem, Operand, StateSpace};
use rustc_hash::FxHashMap;

mod remote;

use super::mem::Target;
use super::spin::{self, Spin};
use super::{Engine, Flow, Halt, R, Status, Wait, pack_instr, unpack_instr};
use crate::domain::Domain;
use crate::finding::{
    AccessKind, AccessRef, Finding, FindingKind, MemLocation, WaitGroup, thread_ranges,
};
use crate::funcinfo::FuncInfo;
use crate::race::{Foreign, Snapshot};
use crate::value::Value;

/// The largest arrival count and transaction count (PTX: 2^20 - 1).
const MAX_COUNT: i64 = (1 << 20) - 1;

/// Tag of the opaque `state` values the engine hands out (high bits).
const STATE_TAG: u64 = 0x5EA7_0000_0000_0000;

/// An event of a phase: who, at which epoch, which instruction.
#[derive(Clone, Copy, Debug)]
struct Event {
    /// Clock slot: a thread, or a thread's async agent.
    slot: u32,
    epoch: u32,
    instr: u32,
    /// The CTA stamp of the slot's clocks (`race::Clocks::cta`): another
    /// CTA of the cluster for a remote arrival (`remote.rs`).
    cta: u32,
}

/// A (clock slot, instruction) pair a finding names; `cta`: the clock
/// stamp of the slot's CTA when it may be another CTA of the cluster.
#[derive(Clone, Copy, Debug)]
struct Who {
    slot: u32,
    instr: u32,
    cta: Option<u32>,
}

impl From<(u32, u32)> for Who {
    fn from((slot, instr): (u32, u32)) -> Self {
        Who {
            slot,
            instr,
            cta: None,
        }
    }
}

impl From<Event> for Who {
    fn from(e: Event) -> Self {
        Who {
            slot: e.slot,
            instr: e.instr,
            cta: Some(e.cta),
        }
    }
}

/// What happened in one phase.
#[derive(Clone, Default)]
struct PhaseLog {
    events: Vec<Event>,
    releases: Vec<Snapshot>,
    /// Releases of arrivals from other CTAs of the cluster (`remote.rs`),
    /// joined: what a waiter of the phase acquires besides `releases`.
    remote: Foreign,
}

/// A wait that returned: phase `target + 1` needs an event ordered after
/// it.
#[derive(Clone, Copy, Debug)]
struct Passed {
    tid: u32,
    epoch: u32,
    instr: u32,
    target: i64,
}

/// A parked waiter.
#[derive(Clone, Debug)]
struct Parked {
    tid: u32,
    target: i64,
    instr: u32,
    acquire: bool,
    /// The acquire's scope includes the cluster (`.acquire.cluster`):
    /// it also acquires other CTAs' arrivals (`PhaseLog::remote`).
    cluster: bool,
}

/// An arrive-on triggered by the completion of a thread's `cp.async`s.
#[derive(Clone)]
struct AsyncArrive {
    tid: u32,
    instr: u32,
    snap: Snapshot,
    copies: Vec<u32>,
    /// Arrivals it makes (1 for `cp.async.mbarrier.arrive`, 0 for a bulk
    /// copy) and transaction bytes it completes (a bulk copy's size).
    count: i64,
    tx: i64,
    /// The clock slot that stamps the landing when not the thread's async
    /// agent (a multicast copy from another CTA, `remote.rs`).
    agent: Option<u32>,
}

/// One mbarrier object.
struct Mbar {
    name: String,
    init: Event,
    init_tid: u32,
    valid: bool,
    /// Expected arrivals of the next phase.
    expected: i64,
    /// The current (incomplete) phase.
    phase: i64,
    pending: i64,
    tx: i64,
    cur: PhaseLog,
    /// Logs of the last two completed phases (back: `phase - 1`).
    done: VecDeque<PhaseLog>,
    parked: Vec<Parked>,
    passed: Vec<Passed>,
    asyncs: Vec<AsyncArrive>,
    /// Per (CTA stamp, thread): the last operation on the object (epoch,
    /// instruction); other CTAs' threads use it through remote arrivals.
    users: FxHashMap<(u32, u32), (u32, u32)>,
}

/// The mbarrier objects of a CTA, by (region, offset).
#[derive(Default)]
pub(crate) struct Mbarriers {
    objects: FxHashMap<(u32, u64), Mbar>,
    /// Opaque states handed out by `arrive`: (object, phase, pending).
    states: Vec<((u32, u64), i64, i64)>,
    /// Spin-loop recognition per wait instruction.
    spins: FxHashMap<u32, Result<Rc<Spin>, String>>,
    /// Per timer-reading `mov`: whether its value is read only on spin
    /// paths (`spin::timer_only_in_spins`).
    timers: FxHashMap<u32, bool>,
}

impl Mbarriers {
    /// Whether any object exists (the fast path of every memory access).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.objects.is_empty()
    }
}

/// How a phase is named in messages (`-1`: the state right after
/// `init`, whose "preceding phase" parity 1 counts as complete).
fn phase_word(k: i64) -> String {
    if k < 0 {
        "the phase before phase 0 (parity 1, complete from init)".into()
    } else {
        format!("phase {k}")
    }
}

fn loc_of(name: &str, off: u64) -> String {
    format!("`{name}`+{off}")
}

impl<D: Domain> Engine<'_, D> {
    /// The clock slot of thread `t`'s async agent (`cp.async` copies
    /// completing on an mbarrier).
    fn agent(&self, t: u32) -> u32 {
        t + self.cta.nthreads
    }

    /// Whether the timer read by the current instruction (a `mov`) only
    /// feeds the back-off of recognised polling loops, or nothing at all
    /// (`spin::timer_dead`).
    pub(crate) fn timer_in_spin_only(&mut self, info: &FuncInfo) -> bool {
        let key = self.cur_instr;
        if let Some(&ok) = self.cta.mbars.timers.get(&key) {
            return ok;
        }
        let pc = unpack_instr(key).index;
        let ok = matches!(
            info.ir.instrs.get(pc as usize),
            Some(i) if matches!(i.instr, Instr::Mov { .. })
        ) && (spin::timer_only_in_spins(&info.ir, pc) || spin::timer_dead(&info.ir, pc));
        self.cta.mbars.timers.insert(key, ok);
        ok
    }

    /// Resolves the mbarrier address operand to (region, offset).
    pub(crate) fn mbar_key(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        op: Option<&Operand>,
    ) -> R<Option<(u32, u64)>> {
        let Some(Operand::Addr(a)) = op else {
            return Err(self.unsupported(t, "mbarrier operand", "expected [address]".into()));
        };
        let a = a.clone();
        let space = match space {
            StateSpace::Generic | StateSpace::Shared | StateSpace::SharedCluster => space,
            other => {
                return Err(self.unsupported(
                    t,
                    "mbarrier outside shared memory",
                    format!("state space {other:?}"),
                ));
            }
        };
        let Some((target, off)) = self.resolve(t, info, space, &a, 8)? else {
            return Ok(None);
        };
        let Target::Cta(r) = target else {
            return Err(self.unsupported(
                t,
                "mbarrier outside shared memory",
                "the address is thread-private".into(),
            ));
        };
        if self.mem.regions[r as usize].space != crate::memory::Space::Shared {
            return Err(self.unsupported(
                t,
                "mbarrier outside shared memory",
                format!(
                    "`{}` is not in shared memory",
                    self.mem.regions[r as usize].name
                ),
            ));
        }
        if !off.is_multiple_of(8) {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "misaligned mbarrier",
                format!(
                    "the mbarrier object at {} is not 8-byte aligned",
                    loc_of(&self.mem.regions[r as usize].name, off)
                ),
            ));
        }
        Ok(Some((r, off)))
    }

    fn access(&self, slot: u32, instr: u32, kind: AccessKind) -> AccessRef {
        AccessRef {
            thread: self.thread_ref(slot),
            instr: unpack_instr(instr),
            kind,
            cta: None,
        }
    }

    /// The access a finding names for `w`, with its CTA when that is
    /// another CTA of the cluster.
    fn access_who(&self, w: Who, kind: AccessKind) -> AccessRef {
        let mut a = self.access(w.slot, w.instr, kind);
        a.cta = w.cta.and_then(|c| self.foreign_cta_id(c));
        a
    }

    /// Whether clock slot `slot` (of the running CTA) knows event `e`
    /// (of this or another CTA of the cluster).
    fn knows_event(&self, slot: u32, e: &Event) -> bool {
        self.clocks.knows_at(slot, e.cta, e.slot, e.epoch)
    }

    /// A thread named in a message, with its CTA when that is another
    /// one than the running CTA.
    fn who_name(&self, w: Who) -> String {
        match w.cta.and_then(|c| self.foreign_cta_id(c)) {
            Some([x, y, z]) => format!("{} of CTA ({x},{y},{z})", self.thread_ref(w.slot)),
            None => self.thread_ref(w.slot).to_string(),
        }
    }

    /// A finding naming two (thread, instruction) pairs; fatal.
    #[allow(clippy::too_many_arguments)]
    fn mbar_finding(
        &mut self,
        kind: FindingKind,
        reason: &str,
        key: (u32, u64),
        first: impl Into<Who>,
        second: impl Into<Who>,
        message: String,
    ) -> Halt {
        let (first, second) = (first.into(), second.into());
        let reg = &self.mem.regions[key.0 as usize];
        let loc = MemLocation {
            region: reg.name.clone(),
            space: reg.space.name().into(),
            byte_offset: key.1,
            element: (reg.elem > 0).then(|| key.1 / u64::from(reg.elem)),
        };
        let a = self.access_who(first, AccessKind::Atomic);
        let b = self.access_who(second, AccessKind::Atomic);
        let th = b.thread;
        let mut f = Finding::new(kind, format!("{th}, {}: {message}", b.instr))
            .at(Some(th), Some(b.instr))
            .with_location(loc)
            .with_reason(reason);
        f.accesses = vec![a, b];
        self.report(f);
        self.log.halt();
        Halt
    }

    /// An over-arrival when an event of clock slot `slot` (thread `t`)
    /// joins the current phase of `key` without being ordered after the
    /// previous phase's completion: in another schedule it would count in
    /// that earlier phase. `joins` names the event ("this arrive-on
    /// joins"); `schedule_note` adds what the other schedule does.
    fn check_joins_after_previous(
        &mut self,
        t: u32,
        slot: u32,
        key: (u32, u64),
        joins: &str,
        schedule_note: bool,
    ) -> R<()> {
        let instr = self.cur_instr;
        let m = &self.cta.mbars.objects[&key];
        let Some(prev) = m.done.back() else {
            return Ok(());
        };
        if self.knows_log(slot, prev) {
            return Ok(());
        }
        let name = m.name.clone();
        let phase = m.phase;
        let last = prev
            .events
            .iter()
            .find(|e| !self.knows_event(slot, e))
            .copied();
        let lw: Who = last.map_or((t, instr).into(), Into::into);
        let note = if schedule_note {
            format!(
                ": in another schedule it counts in phase {} (an over-arrival of that phase)",
                phase - 1
            )
        } else {
            String::new()
        };
        Err(self.mbar_finding(
            FindingKind::Divergence,
            "mbarrier over-arrival",
            key,
            lw,
            (t, instr),
            format!(
                "{joins} phase {phase} of mbarrier {name} only because phase {} completed first, and nothing orders that completion (its event by {} at {}) before it{note}",
                phase - 1,
                self.who_name(lw),
                unpack_instr(lw.instr)
            ),
        ))
    }

    /// Whether clock slot `t` knows every event of `log`.
    fn knows_log(&self, t: u32, log: &PhaseLog) -> bool {
        log.events.iter().all(|e| self.knows_event(t, e))
    }

    /// Checks that the object exists, is valid and its `init` is ordered
    /// before this use by `t` (a thread); records the use.
    fn mbar_use(&mut self, t: u32, key: (u32, u64), what: &str) -> R<()> {
        let instr = self.cur_instr;
        let name = self.mem.regions[key.0 as usize].name.clone();
        let Some(m) = self.cta.mbars.objects.get(&key) else {
            return Err(self.fail(
                t,
                FindingKind::Uninitialised,
                "mbarrier used before init",
                format!(
                    "{what} on {}, where no mbarrier.init has created an mbarrier object",
                    loc_of(&name, key.1)
                ),
            ));
        };
        if !m.valid {
            let (it, ii) = (m.init_tid, m.init.instr);
            return Err(self.mbar_finding(
                FindingKind::Uninitialised,
                "mbarrier used after inval",
                key,
                (it, ii),
                (t, instr),
                format!(
                    "{what} on mbarrier {} after it was invalidated (mbarrier.inval)",
                    loc_of(&name, key.1)
                ),
            ));
        }
        if !self.knows_event(t, &m.init) {
            let (it, ii) = (m.init_tid, m.init.instr);
            return Err(self.mbar_finding(
                FindingKind::Race,
                "mbarrier init not ordered before use",
                key,
                (it, ii),
                (t, instr),
                format!(
                    "the mbarrier.init of {} by {} at {} is not ordered before this {what} (no barrier or fence between them): in another schedule the object is used before it exists",
                    loc_of(&name, key.1),
                    self.thread_ref(it),
                    unpack_instr(ii)
                ),
            ));
        }
        let e = self.clocks.epoch(t);
        let stamp = self.clocks.cta();
        if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
            m.users.insert((stamp, t), (e, instr));
        }
        Ok(())
    }

    /// The mbarrier family and `cp.async.mbarrier.arrive`.
    pub(crate) fn mbarrier(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = &ins.operands;
        match &ins.instr {
            Instr::CpAsyncMbarrierArrive { noinc, space } => {
                let key = self.mbar_key(t, info, *space, ops.first())?;
                match key {
                    Some(k) => self.cp_async_arrive(t, k, *noinc),
                    None => Ok(Flow::Next),
                }
            }
            Instr::Mbarrier { op, sem, space, .. } => {
                let op = *op;
                let relaxed = *sem == Some(MemSem::Relaxed);
                let addr_ix = match op {
                    MbarrierOp::Init
                    | MbarrierOp::Inval
                    | MbarrierOp::ExpectTx
                    | MbarrierOp::CompleteTx => 0,
                    MbarrierOp::Arrive { .. } | MbarrierOp::Wait { .. } => 1,
                    MbarrierOp::PendingCount => return self.pending_count(t, info, ops),
                };
                self.take_mbar_target();
                let Some(key) = self.mbar_key(t, info, *space, ops.get(addr_ix))? else {
                    return Ok(Flow::Next);
                };
                if let Some(k) = self.take_mbar_target() {
                    // Another CTA's mbarrier (a `mapa`'d address).
                    return self.mbar_remote(t, info, ins, k, key);
                }
                match op {
                    MbarrierOp::Init => {
                        let n = self.matrix_u32(t, info, &ops[1], "the mbarrier count")?;
                        self.mbar_init(t, key, i64::from(n))
                    }
                    MbarrierOp::Inval => self.mbar_inval(t, key),
                    MbarrierOp::ExpectTx | MbarrierOp::CompleteTx => {
                        let n = self.matrix_u32(t, info, &ops[1], "the transaction count")?;
                        self.mbar_use(t, key, &ins.instr.mnemonic())?;
                        let delta = if op == MbarrierOp::ExpectTx {
                            i64::from(n)
                        } else {
                            -i64::from(n)
                        };
                        self.phase_event(t, t, key, 0, delta, !relaxed, false)?;
                        self.try_complete_phase(key)?;
                        Ok(Flow::Next)
                    }
                    MbarrierOp::Arrive {
                        drop,
                        no_complete,
                        expect_tx,
                    } => {
                        self.mbar_use(t, key, &ins.instr.mnemonic())?;
                        let (count, tx) = match (expect_tx, ops.get(2)) {
                            (true, Some(o)) => {
                                (1, self.matrix_u32(t, info, o, "the transaction count")?)
                            }
                            (false, Some(o)) => {
                                (self.matrix_u32(t, info, o, "the arrival count")?, 0)
                            }
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
                        let phase = self.cta.mbars.objects[&key].phase;
                        self.phase_event(
                            t,
                            t,
                            key,
                            i64::from(count),
                            i64::from(tx),
                            !relaxed,
                            no_complete,
                        )?;
                        if drop && let Some(m) = self.cta.mbars.objects.get_mut(&key) {
                            m.expected -= i64::from(count);
                        }
                        // The state: which phase this arrival joined.
                        let pending = self.cta.mbars.objects[&key].pending;
                        let ix = self.cta.mbars.states.len() as u64;
                        self.cta.mbars.states.push((key, phase, pending));
                        let d = ops[0].clone();
                        self.write(t, info, &d, Value::Bits(STATE_TAG | ix))?;
                        self.try_complete_phase(key)?;
                        Ok(Flow::Next)
                    }
                    MbarrierOp::Wait { .. } => self.mbar_wait(t, info, ins, key, relaxed),
                    MbarrierOp::PendingCount => unreachable_pending(),
                }
            }
            _ => Err(self.unsupported(t, "not an mbarrier instruction", String::new())),
        }
    }

    fn mbar_init(&mut self, t: u32, key: (u32, u64), n: i64) -> R<Flow> {
        let instr = self.cur_instr;
        let name = self.mem.regions[key.0 as usize].name.clone();
        if n == 0 || n > MAX_COUNT {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "mbarrier count out of range",
                format!("mbarrier.init with count {n} (1 to 2^20 - 1)"),
            ));
        }
        if let Some(m) = self.cta.mbars.objects.get(&key) {
            let (it, ii) = (m.init_tid, m.init.instr);
            if m.valid {
                return Err(self.mbar_finding(
                    FindingKind::Divergence,
                    "mbarrier re-initialised while valid",
                    key,
                    (it, ii),
                    (t, instr),
                    format!(
                        "mbarrier.init of {} while it holds a valid mbarrier object (initialised by {} at {}, phase {}); PTX requires mbarrier.inval first",
                        loc_of(&name, key.1),
                        self.thread_ref(it),
                        unpack_instr(ii),
                        m.phase
                    ),
                ));
            }
            // Re-initialising after inval: every earlier use must be
            // ordered before it.
            let users: Vec<((u32, u32), (u32, u32))> =
                m.users.iter().map(|(k, v)| (*k, *v)).collect();
            for ((c, u), (e, ui)) in users {
                if !self.clocks.knows_at(t, c, u, e) {
                    let w = Who {
                        slot: u,
                        instr: ui,
                        cta: Some(c),
                    };
                    return Err(self.mbar_finding(
                        FindingKind::Race,
                        "mbarrier re-initialised while in use",
                        key,
                        w,
                        (t, instr),
                        format!(
                            "mbarrier.init of {} is not ordered after the use by {} at {}",
                            loc_of(&name, key.1),
                            self.who_name(w),
                            unpack_instr(ui)
                        ),
                    ));
                }
            }
        }
        let ev = Event {
            slot: t,
            epoch: self.clocks.epoch(t),
            instr,
            cta: self.clocks.cta(),
        };
        self.cta.mbars.objects.insert(
            key,
            Mbar {
                name: loc_of(&name, key.1),
                init: ev,
                init_tid: t,
                valid: true,
                expected: n,
                phase: 0,
                pending: n,
                tx: 0,
                cur: PhaseLog::default(),
                done: VecDeque::new(),
                parked: Vec::new(),
                passed: Vec::new(),
                asyncs: Vec::new(),
                users: FxHashMap::default(),
            },
        );
        Ok(Flow::Next)
    }

    fn mbar_inval(&mut self, t: u32, key: (u32, u64)) -> R<Flow> {
        let instr = self.cur_instr;
        self.mbar_use(t, key, "mbarrier.inval")?;
        let m = &self.cta.mbars.objects[&key];
        let name = m.name.clone();
        if let Some(p) = m.parked.first() {
            let (pt, pi) = (p.tid, p.instr);
            return Err(self.mbar_finding(
                FindingKind::Divergence,
                "mbarrier invalidated while in use",
                key,
                (pt, pi),
                (t, instr),
                format!("mbarrier.inval of {name} while a thread waits on it"),
            ));
        }
        let users: Vec<((u32, u32), (u32, u32))> = m.users.iter().map(|(k, v)| (*k, *v)).collect();
        for ((c, u), (e, ui)) in users {
            if !self.clocks.knows_at(t, c, u, e) {
                let w = Who {
                    slot: u,
                    instr: ui,
                    cta: Some(c),
                };
                return Err(self.mbar_finding(
                    FindingKind::Race,
                    "mbarrier invalidated while in use",
                    key,
                    w,
                    (t, instr),
                    format!(
                        "mbarrier.inval of {name} is not ordered after the use by {} at {}",
                        self.who_name(w),
                        unpack_instr(ui)
                    ),
                ));
            }
        }
        if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
            m.valid = false;
        }
        Ok(Flow::Next)
    }

    /// Records an event of the current phase by clock slot `slot` (a
    /// thread, or thread `t`'s async agent): `count` arrivals and `tx`
    /// added to the transaction count. Checks the phase assignment and
    /// the counts.
    #[allow(clippy::too_many_arguments)]
    fn phase_event(
        &mut self,
        t: u32,
        slot: u32,
        key: (u32, u64),
        count: i64,
        tx: i64,
        release: bool,
        no_complete: bool,
    ) -> R<()> {
        let instr = self.cur_instr;
        // Ordered after the previous phase's completion?
        self.check_joins_after_previous(t, slot, key, "this arrive-on joins", true)?;
        let m = &self.cta.mbars.objects[&key];
        let name = m.name.clone();
        let phase = m.phase;
        if count > m.pending {
            let last = m.cur.events.last().copied();
            let lw: Who = last.map_or((t, instr).into(), Into::into);
            let pending = m.pending;
            return Err(self.mbar_finding(
                FindingKind::Divergence,
                "mbarrier over-arrival",
                key,
                lw,
                (t, instr),
                format!(
                    "over-arrival on mbarrier {name}: this arrive-on of count {count} exceeds the {pending} pending arrivals of phase {phase}"
                ),
            ));
        }
        let m = &self.cta.mbars.objects[&key];
        if (m.tx + tx).abs() > MAX_COUNT {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "mbarrier tx-count out of range",
                format!("the transaction count of mbarrier {name} leaves the range ±(2^20 - 1)"),
            ));
        }
        // Waiters of the previous phase that this event is ordered after.
        // (Execution order suffices: the question is whether the waiter
        // can still be polling, `exec_order.rs`.)
        let stamp = self.clocks.cta();
        let epoch = self.clocks.epoch(slot);
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        let mut passed = std::mem::take(&mut m.passed);
        passed.retain(|p| {
            !(p.target == phase - 1 && self.knows_reached(slot, stamp, p.tid, p.epoch))
        });
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        m.passed = passed;
        m.cur.events.push(Event {
            slot,
            epoch,
            instr,
            cta: stamp,
        });
        m.pending -= count;
        m.tx += tx;
        if release {
            let s = self.clocks.snapshot(slot);
            self.clocks.tick(slot);
            if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
                m.cur.releases.push(s);
            }
        }
        let m = &self.cta.mbars.objects[&key];
        if no_complete && m.pending == 0 && m.tx == 0 && m.asyncs.is_empty() {
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "mbarrier noComplete arrival completes the phase",
                format!(
                    "this mbarrier.arrive.noComplete completes phase {phase} of mbarrier {name} (undefined in PTX)"
                ),
            ));
        }
        Ok(())
    }

    /// Fires pending async arrivals once only they are missing, and
    /// completes the current phase when its counts reach zero.
    fn try_complete_phase(&mut self, key: (u32, u64)) -> R<()> {
        loop {
            let m = &self.cta.mbars.objects[&key];
            let ac: i64 = m.asyncs.iter().map(|a| a.count).sum();
            let at: i64 = m.asyncs.iter().map(|a| a.tx).sum();
            if !m.asyncs.is_empty() && m.pending <= ac {
                if m.pending < ac || m.tx < at {
                    let a = m.asyncs[0].clone();
                    let last = m.cur.events.last().copied();
                    let lw: Who = last.map_or((a.tid, a.instr).into(), Into::into);
                    let name = m.name.clone();
                    let phase = m.phase;
                    let what = if m.pending < ac {
                        "the arrive-on of this cp.async.mbarrier.arrive.noinc"
                    } else {
                        "some of the transaction bytes of the asynchronous copies (more bytes than the phase expects)"
                    };
                    return Err(self.mbar_finding(
                        FindingKind::Divergence,
                        "mbarrier over-arrival",
                        key,
                        lw,
                        (a.tid, a.instr),
                        format!(
                            "over-arrival on mbarrier {name}: phase {phase} can complete without {what}, which then fall into a later phase depending on when the copies land"
                        ),
                    ));
                }
                if m.tx > at {
                    // Waits for more expect/complete events.
                    return Ok(());
                }
                // Fire them (as late as possible: the copies stay in
                // flight until the phase needs them).
                let fire =
                    std::mem::take(&mut self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?.asyncs);
                for a in fire {
                    let agent = a.agent.unwrap_or_else(|| self.agent(a.tid));
                    self.clocks.sync(&[agent], std::slice::from_ref(&a.snap));
                    for id in &a.copies {
                        self.complete_copy_as(*id, agent);
                    }
                    let saved = self.cur_instr;
                    self.cur_instr = a.instr;
                    let r = self.phase_event(a.tid, agent, key, a.count, -a.tx, true, false);
                    self.cur_instr = saved;
                    r?;
                }
                continue;
            }
            if m.pending > 0 || m.tx != 0 {
                return Ok(());
            }
            return self.complete_phase(key);
        }
    }

    fn complete_phase(&mut self, key: (u32, u64)) -> R<()> {
        let funcs = self.funcs.clone();
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        let phase = m.phase;
        // Waits on phase - 1 that no event of this phase is ordered after.
        if let Some(p) = m.passed.iter().find(|p| p.target == phase - 1).copied() {
            let last = m.cur.events.last().copied();
            let name = m.name.clone();
            let lw: Who = last.map_or((p.tid, p.instr).into(), Into::into);
            return Err(self.mbar_finding(
                FindingKind::Race,
                "mbarrier waiter a phase behind",
                key,
                lw,
                (p.tid, p.instr),
                format!(
                    "the wait by {} at {} observed {} of mbarrier {name}, but none of the events of phase {phase} (completed by {} at {}) is ordered after that wait: in another schedule phase {phase} completes too before the waiter polls, the parity matches again and the waiter waits for phase {} instead (a waiter a whole phase behind)",
                    self.thread_ref(p.tid),
                    unpack_instr(p.instr),
                    phase_word(phase - 1),
                    self.who_name(lw),
                    unpack_instr(lw.instr),
                    phase + 1
                ),
            ));
        }
        m.passed.retain(|p| p.target != phase - 1);
        let log = std::mem::take(&mut m.cur);
        m.done.push_back(log.clone());
        while m.done.len() > 2 {
            m.done.pop_front();
        }
        m.phase += 1;
        m.pending = m.expected;
        m.tx = 0;
        let (wake, keep): (Vec<Parked>, Vec<Parked>) =
            m.parked.drain(..).partition(|p| p.target == phase);
        m.parked = keep;
        self.stats.barriers_completed += 1;
        for p in wake {
            if p.acquire {
                self.clocks.sync(&[p.tid], &log.releases);
                if p.cluster && !log.remote.is_empty() {
                    self.clocks.acquire(p.tid, &log.remote);
                }
            }
            let epoch = self.clocks.epoch(p.tid);
            if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
                m.passed.push(Passed {
                    tid: p.tid,
                    epoch,
                    instr: p.instr,
                    target: phase,
                });
            }
            let (f, pc) = {
                let fr = self.cta.threads[p.tid as usize].frames.last().ok_or(Halt)?;
                (fr.func, fr.pc)
            };
            let info = &funcs[f as usize];
            let Some(ins) = info.ir.instrs.get(pc as usize) else {
                continue;
            };
            let ins = ins.clone();
            let spin = self.cta.mbars.spins.get(&pack_instr(f, pc)).cloned();
            let saved = self.guard.take();
            let r = self.wait_returns(p.tid, info, &ins, spin);
            self.guard = saved;
            r?;
            self.wake(p.tid);
        }
        Ok(())
    }

    /// The wait returns true: its predicate is set, the registers its
    /// polling loop writes become undefined.
    fn wait_returns(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        spin: Option<Result<Rc<Spin>, String>>,
    ) -> R<()> {
        if let Some(Ok(s)) = spin {
            for r in &s.written {
                let op = Operand::Reg(*r);
                self.write(t, info, &op, Value::Undef)?;
            }
        }
        let d = ins.operands[0].clone();
        self.write(t, info, &d, Value::Bits(1))
    }

    fn mbar_wait(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        key: (u32, u64),
        relaxed: bool,
    ) -> R<Flow> {
        let instr = self.cur_instr;
        let mnemonic = ins.instr.mnemonic();
        self.mbar_use(t, key, &mnemonic)?;
        let Instr::Mbarrier {
            op: MbarrierOp::Wait { parity, .. },
            scope,
            ..
        } = ins.instr
        else {
            return Err(Halt);
        };
        let cluster_scope = remote::cluster_scope(scope);
        // The polling loop.
        let spin = match self.cta.mbars.spins.get(&instr) {
            Some(s) => s.clone(),
            None => {
                let pc = unpack_instr(instr).index;
                let s = spin::analyse(&info.ir, pc, &ins.operands[0]).map(Rc::new);
                self.cta.mbars.spins.insert(instr, s.clone());
                s
            }
        };
        if let Err(why) = &spin {
            return Err(self.unsupported(
                t,
                "mbarrier wait outside a polling loop",
                format!(
                    "{mnemonic}: {why}; only a wait polled until it returns true is modelled (its result is schedule-dependent otherwise)"
                ),
            ));
        }
        let m = &self.cta.mbars.objects[&key];
        let name = m.name.clone();
        let c = m.phase;
        let target = if parity {
            let p = i64::from(self.matrix_u32(t, info, &ins.operands[2], "the phase parity")? & 1);
            if c.rem_euclid(2) == p { c } else { c - 1 }
        } else {
            let v = match self.read_int(t, info, &ins.operands[2], 64)? {
                super::values::IntArg::Known(v) => v,
                super::values::IntArg::Undef => {
                    return Err(self.uninit_register(t, "the mbarrier state"));
                }
                super::values::IntArg::Tainted(_) | super::values::IntArg::Data(_) => {
                    return Err(self.unsupported(
                        t,
                        "synchronisation depends on tensor data",
                        "the mbarrier state is computed from tensor values".into(),
                    ));
                }
            };
            let st = (v & !STATE_TAG) as usize;
            match self.cta.mbars.states.get(st) {
                Some((k, ph, _)) if v & STATE_TAG == STATE_TAG && *k == key => *ph,
                _ => {
                    return Err(self.unsupported(
                        t,
                        "mbarrier state not from an arrive on this object",
                        format!("{mnemonic} on {name} with a state that no mbarrier.arrive on it returned"),
                    ));
                }
            }
        };
        let m = &self.cta.mbars.objects[&key];
        if target < c - 1 {
            let (it, ii) = (m.init_tid, m.init.instr);
            return Err(self.mbar_finding(
                FindingKind::Race,
                "mbarrier waiter a phase behind",
                key,
                (it, ii),
                (t, instr),
                format!(
                    "this wait tests phase {target} of mbarrier {name}, but phase {c} is already current: the waiter is more than a phase behind and the hardware's parity test cannot tell the phases apart"
                ),
            ));
        }
        // The completion of phase target - 1 must be ordered before.
        let prev = if target == c {
            m.done.back()
        } else if m.done.len() >= 2 {
            m.done.front()
        } else {
            None
        };
        let need_init_only = target <= 0;
        if !need_init_only
            && let Some(prev) = prev
            && !self.knows_log(t, prev)
        {
            let e = prev
                .events
                .iter()
                .find(|e| !self.knows_event(t, e))
                .copied();
            let lw: Who = e.map_or((t, instr).into(), Into::into);
            return Err(self.mbar_finding(
                FindingKind::Race,
                "mbarrier wait not ordered after the previous phase",
                key,
                lw,
                (t, instr),
                format!(
                    "this wait (parity {}) targets {} of mbarrier {name}, but nothing orders the completion of {} (its event by {} at {}) before it: in another schedule that phase is still pending, the parity test sees the other parity and the wait returns at once, without waiting for phase {target}",
                    target.rem_euclid(2),
                    phase_word(target),
                    phase_word(target - 1),
                    self.who_name(lw),
                    unpack_instr(lw.instr)
                ),
            ));
        }
        if target < c {
            // Already complete: returns true now.
            if !relaxed && target >= 0 {
                let log = if target == c - 1 {
                    m.done.back().cloned()
                } else {
                    None
                };
                if let Some(log) = log {
                    self.clocks.sync(&[t], &log.releases);
                    if cluster_scope && !log.remote.is_empty() {
                        self.clocks.acquire(t, &log.remote);
                    }
                }
            }
            let epoch = self.clocks.epoch(t);
            if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
                m.passed.push(Passed {
                    tid: t,
                    epoch,
                    instr,
                    target,
                });
            }
            self.wait_returns(t, info, ins, Some(spin))?;
            return Ok(Flow::Next);
        }
        if let Some(m) = self.cta.mbars.objects.get_mut(&key) {
            m.parked.push(Parked {
                tid: t,
                target,
                instr,
                acquire: !relaxed,
                cluster: cluster_scope,
            });
        }
        self.cta.threads[t as usize].status = Status::Blocked(Wait::Mbarrier);
        Ok(Flow::Block)
    }

    fn pending_count(&mut self, t: u32, info: &FuncInfo, ops: &[Operand]) -> R<Flow> {
        let v = match self.read_int(t, info, &ops[1], 64)? {
            super::values::IntArg::Known(v) => v,
            _ => return Err(self.uninit_register(t, "the mbarrier state")),
        };
        let st = (v & !STATE_TAG) as usize;
        let Some((_, _, pending)) = self
            .cta
            .mbars
            .states
            .get(st)
            .copied()
            .filter(|_| v & STATE_TAG == STATE_TAG)
        else {
            return Err(self.unsupported(
                t,
                "mbarrier state not from an arrive",
                "mbarrier.pending_count of a value no mbarrier.arrive returned".into(),
            ));
        };
        let d = ops[0].clone();
        self.write(t, info, &d, Value::Bits(pending.max(0) as u64))?;
        Ok(Flow::Next)
    }

    /// `cp.async.mbarrier.arrive{.noinc}`: an arrive-on triggered when
    /// all of this thread's earlier `cp.async`s have completed.
    fn cp_async_arrive(&mut self, t: u32, key: (u32, u64), noinc: bool) -> R<Flow> {
        let instr = self.cur_instr;
        self.mbar_use(t, key, "cp.async.mbarrier.arrive")?;
        if !self.mbar_agents {
            return Err(self.unsupported(t, "cp.async.mbarrier.arrive", "no async agents".into()));
        }
        // Phase assignment is decided at issue (the arrive-on joins the
        // current phase: the pending count is incremented now unless
        // .noinc, and without .noinc the phase cannot complete first).
        self.check_joins_after_previous(t, t, key, "this cp.async.mbarrier.arrive joins", false)?;
        let copies = self.async_outstanding(t);
        let snap = self.clocks.snapshot(t);
        self.clocks.tick(t);
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        if !noinc {
            m.pending += 1;
        }
        m.asyncs.push(AsyncArrive {
            tid: t,
            instr,
            snap,
            copies,
            count: 1,
            tx: 0,
            agent: None,
        });
        self.try_complete_phase(key)?;
        Ok(Flow::Next)
    }

    /// An arrive-on of thread `t` on the mbarrier at `op`, triggered when
    /// the asynchronous operations `copies` complete (`tcgen05.commit`):
    /// it counts against the phase's expected arrivals (no increment, like
    /// `.noinc`), joins the current phase at issue and fires, stamped by
    /// the thread's async agent, as late as the phase allows.
    pub(crate) fn mbar_async_arrive(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: Option<&Operand>,
        what: &str,
        copies: Vec<u32>,
    ) -> R<()> {
        let Some(key) = self.mbar_key(t, info, StateSpace::Shared, op)? else {
            return Ok(());
        };
        self.mbar_use(t, key, what)?;
        if !self.mbar_agents {
            return Err(self.unsupported(t, what, "no async agents".into()));
        }
        self.check_joins_after_previous(t, t, key, &format!("this {what} joins"), false)?;
        self.mbar_push_async(t, key, copies, 1, 0)
    }

    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
    /// [dst], [src], size, [mbar]`: a copy of `size` bytes (a multiple of
    /// 16, 16-byte aligned) whose completion subtracts `size` from the
    /// transaction count of the barrier's current phase. The bytes are in
    /// flight until that phase completes.
    pub(crate) fn cp_async_bulk(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let Instr::CpAsyncBulk(b) = &ins.instr else {
            return Err(Halt);
        };
        let ops = &ins.operands;
        let plain = b.tensor_dims.is_none()
            && !b.multicast
            && b.completion == ptxeq_ir::Completion::MbarrierCompleteTx
            && matches!(b.dst, StateSpace::SharedCluster | StateSpace::Shared)
            && b.src == StateSpace::Global
            && ops.len() == 4 + usize::from(b.cache_hint);
        if !plain {
            return Err(self.unsupported(
                t,
                "bulk copy form not modelled",
                format!(
                    "{}: only cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{{.L2::cache_hint}} [dst], [src], size, [mbar]{{, policy}} (no tensor or multicast) is",
                    ins.instr.mnemonic()
                ),
            ));
        }
        let (Some(Operand::Addr(dst)), Some(Operand::Addr(src))) = (ops.first(), ops.get(1)) else {
            return Err(self.unsupported(t, "bulk copy operands", String::new()));
        };
        let (dst, src) = (dst.clone(), src.clone());
        let size = self.bulk_size(t, info, &ops[2], "cp.async.bulk")?;
        let Some(key) = self.mbar_key(t, info, StateSpace::Shared, ops.get(3))? else {
            return Ok(Flow::Next);
        };
        let instr = self.cur_instr;
        self.mbar_use(t, key, "cp.async.bulk")?;
        if !self.mbar_agents {
            return Err(self.unsupported(t, "cp.async.bulk", "no async agents".into()));
        }
        // Its complete-tx joins the current phase: must be ordered after
        // the previous one's completion.
        self.check_joins_after_previous(
            t,
            t,
            key,
            "this cp.async.bulk completes transaction bytes of",
            false,
        )?;
        // Alignment of both addresses.
        for (a, sp) in [(&dst, StateSpace::Shared), (&src, StateSpace::Global)] {
            if let Some((Target::Cta(r), off)) = self.resolve(t, info, sp, a, 16)?
                && !(self.mem.regions[r as usize].base + off).is_multiple_of(16)
            {
                return Err(self.fail(
                    t,
                    FindingKind::Divergence,
                    "misaligned bulk copy",
                    format!(
                        "a cp.async.bulk address in `{}` is not 16-byte aligned",
                        self.mem.regions[r as usize].name
                    ),
                ));
            }
        }
        let mut copies = Vec::new();
        for k in 0..size / 16 {
            let mut d = dst.clone();
            let mut s = src.clone();
            d.offset += (16 * k) as i64;
            s.offset += (16 * k) as i64;
            if let Some(id) = self.bulk_chunk(t, info, &d, &s)? {
                copies.push(id);
            }
        }
        let snap = self.clocks.snapshot(t);
        self.clocks.tick(t);
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        m.asyncs.push(AsyncArrive {
            tid: t,
            instr,
            snap,
            copies,
            count: 0,
            tx: size as i64,
            agent: None,
        });
        self.try_complete_phase(key)?;
        Ok(Flow::Next)
    }

    /// The mbarrier a TMA load (`tma.rs`) completes transaction bytes on:
    /// resolved, checked like a `cp.async.bulk`'s (exists, init ordered
    /// before, its complete-tx ordered after the previous phase).
    pub(crate) fn mbar_for_async_tx(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: Option<&Operand>,
        what: &str,
    ) -> R<Option<(u32, u64)>> {
        let Some(key) = self.mbar_key(t, info, StateSpace::Shared, op)? else {
            return Ok(None);
        };
        self.mbar_use(t, key, what)?;
        if !self.mbar_agents {
            return Err(self.unsupported(t, "cp.async.bulk", "no async agents".into()));
        }
        self.check_joins_after_previous(
            t,
            t,
            key,
            &format!("this {what} completes transaction bytes of"),
            false,
        )?;
        Ok(Some(key))
    }

    /// Copies `copies` of thread `t` complete `tx` transaction bytes on the
    /// current phase of `key` when they land (as late as the phase allows).
    pub(crate) fn mbar_async_tx(
        &mut self,
        t: u32,
        key: (u32, u64),
        copies: Vec<u32>,
        tx: i64,
    ) -> R<()> {
        self.mbar_push_async(t, key, copies, 0, tx)
    }

    /// Queues on the current phase of `key` an asynchronous arrival of
    /// thread `t`'s operations `copies` (`count` arrivals, `tx`
    /// transaction bytes), stamped by the thread's clock at issue, and
    /// completes the phase if it can.
    fn mbar_push_async(
        &mut self,
        t: u32,
        key: (u32, u64),
        copies: Vec<u32>,
        count: i64,
        tx: i64,
    ) -> R<()> {
        let instr = self.cur_instr;
        let snap = self.clocks.snapshot(t);
        self.clocks.tick(t);
        let m = self.cta.mbars.objects.get_mut(&key).ok_or(Halt)?;
        m.asyncs.push(AsyncArrive {
            tid: t,
            instr,
            snap,
            copies,
            count,
            tx,
            agent: None,
        });
        self.try_complete_phase(key)
    }

    /// An ordinary access overlapping a live mbarrier object.
    pub(crate) fn mbar_access(&mut self, t: u32, r: u32, off: u64, len: u64) {
        let lo = off & !7;
        let mut o = lo;
        // During an access to another CTA's shared memory: that CTA's
        // mbarriers.
        let remote = self
            .unit
            .as_ref()
            .and_then(|u| u.remote.and_then(|k| u.parked[k as usize].as_ref()));
        let mbars = remote.map_or(&self.cta.mbars, |p| &p.cta.mbars);
        while o < off + len {
            if mbars.objects.get(&(r, o)).is_some_and(|m| m.valid) {
                let name = self.mem.regions[r as usize].name.clone();
                let _ = self.unsupported(
                    t,
                    "ordinary access to an mbarrier object",
                    format!(
                        "a load or store touches the mbarrier object at {} (only mbarrier instructions are modelled on it)",
                        loc_of(&name, o)
                    ),
                );
                return;
            }
            o += 8;
        }
    }

    /// Deadlock groups of parked mbarrier waiters, one per object,
    /// phase and instruction, naming the phase's last event.
    pub(crate) fn mbar_wait_groups(&self) -> Vec<WaitGroup> {
        let mut out = Vec::new();
        let mut keys: Vec<_> = self.cta.mbars.objects.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let m = &self.cta.mbars.objects[&k];
            let mut by: Vec<(i64, u32, Vec<u32>)> = Vec::new();
            for p in &m.parked {
                match by
                    .iter_mut()
                    .find(|(t, i, _)| *t == p.target && *i == p.instr)
                {
                    Some((_, _, v)) => v.push(p.tid),
                    None => by.push((p.target, p.instr, vec![p.tid])),
                }
            }
            for (target, instr, ts) in by {
                let arrived = (m.expected - m.pending).max(0) as u32;
                let last = match m.cur.events.last() {
                    Some(e) => format!(
                        "; its last event: {} at {}",
                        self.who_name((*e).into()),
                        unpack_instr(e.instr)
                    ),
                    None => "; no event yet".into(),
                };
                let inflight: i64 = m.asyncs.iter().map(|a| a.tx).sum();
                let tx = if inflight > 0 {
                    format!(
                        "tx-count {} with {inflight} bytes of asynchronous copies still to land",
                        m.tx
                    )
                } else {
                    format!("tx-count {}", m.tx)
                };
                let what = format!("mbarrier {} phase {target} ({tx}{last})", m.name);
                out.push(WaitGroup {
                    what,
                    instr: unpack_instr(instr),
                    threads: thread_ranges(ts),
                    arrived,
                    expected: m.expected.max(0) as u32,
                });
            }
        }
        out
    }
}

fn unreachable_pending() -> R<Flow> {
    Err(Halt)
}
