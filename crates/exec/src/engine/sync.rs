//! CTA barriers (`bar`/`barrier` `.sync/.arrive/.red`), warp collectives
//! (`shfl/vote/match/redux/elect.sync`, `bar.warp.sync`), exits and the
//! analysis of a stuck CTA.
//!
//! Barrier semantics follow the PTX ISA: 16 barriers per CTA; a barrier
//! instruction makes the executing thread wait for the non-exited threads
//! of its warp and then marks the *warp's* arrival; the thread count `b`
//! (a multiple of the warp size; all threads of the CTA by default) counts
//! warps × 32; `.sync`/`.red` then wait for the generation to complete,
//! `.arrive` does not. Exited threads count as arrived for their warp, and
//! a fully exited warp counts as arrived for a default-count barrier.
//!
//! Checked along the way (each a divergence finding): the thread count of
//! every arrival in a generation must agree; for a default-count barrier
//! (`__syncthreads()`) all blocking arrivals of a generation must be at the
//! same instruction; for an aligned barrier all lanes of a warp must be at
//! the same instruction; a thread must not arrive at a barrier again
//! before the generation its previous non-blocking arrival joined is known
//! (by happens-before) to have completed — otherwise some schedule counts
//! it twice in one generation (recycling).

use ptxeq_ir::{BarKind, BarRedOp, Instr, InstrData, Operand, ShflMode, VoteMode};

use super::values::{IntArg, PredArg};
use super::{Engine, Flow, Halt, LastArrival, R, Status, Wait, unpack_instr};
use crate::domain::Domain;
use crate::finding::{Finding, FindingKind, WaitGroup, format_ranges, thread_ranges};
use crate::funcinfo::FuncInfo;
use crate::race::Snapshot;
use crate::value::{Value, mask_bits};

/// A collective's result for one lane: lane, destination, predicate output.
type LaneResult<V> = (u32, Value<V>, Option<Value<V>>);

/// The state of one named barrier.
pub(crate) struct Barrier<V> {
    pub generation: u32,
    pub any: bool,
    pub expected: u32,
    pub default_count: bool,
    /// Who set the expectation (thread, instruction).
    pub first: (u32, u32),
    pub arrived: Vec<u32>,
    pub done: Vec<bool>,
    pub ndone: u32,
    /// Blocking participants (`.sync`, `.red`) with their predicate.
    pub waiters: Vec<(u32, Option<PredArg<V>>)>,
    /// `.arrive` threads waiting for the rest of their warp.
    pub warp_waiters: Vec<u32>,
    /// `.arrive` threads of this generation with their released clocks.
    pub arrivers: Vec<(u32, Snapshot)>,
    pub sync_instr: Option<u32>,
    pub warp_instr: Vec<Option<u32>>,
    pub red_op: Option<BarRedOp>,
}

impl<V> Barrier<V> {
    pub(crate) fn new(nwarps: usize) -> Self {
        Barrier {
            generation: 0,
            any: false,
            expected: 0,
            default_count: true,
            first: (0, 0),
            arrived: vec![0; nwarps],
            done: vec![false; nwarps],
            ndone: 0,
            waiters: Vec::new(),
            warp_waiters: Vec::new(),
            arrivers: Vec::new(),
            sync_instr: None,
            warp_instr: vec![None; nwarps],
            red_op: None,
        }
    }
}

/// Argument a lane brings to a warp collective.
#[derive(Clone, Debug)]
pub(crate) enum CollArg<V> {
    None,
    Shfl {
        a: Value<V>,
        b: u32,
        c: u32,
    },
    Pred(PredArg<V>),
    Val(Value<V>),
    /// A matrix instruction's lane contribution (`matrix.rs`).
    Regs(Vec<Value<V>>),
}

/// A warp collective waiting for its members.
pub(crate) struct Coll<V> {
    /// Instruction (or `u32::MAX` for `bar.warp.sync`, where members may
    /// use different instructions) and member mask.
    pub key: (u32, u32),
    pub arrived: u32,
    pub args: Vec<(u32, CollArg<V>)>,
    pub what: String,
    pub first_instr: u32,
}

/// Pending collectives of one warp.
pub(crate) struct WarpState<V> {
    pub pending: Vec<Coll<V>>,
    /// Shuffles whose lanes read an exited, missing or non-member lane
    /// (their result is undefined): `(instruction, reader lanes, source
    /// lanes)`, merged per instruction. Named when an undefined value
    /// reaches an output, an address or a branch.
    pub undefined: Vec<(u32, u32, u32)>,
}

impl<V> Default for WarpState<V> {
    fn default() -> Self {
        WarpState {
            pending: Vec::new(),
            undefined: Vec::new(),
        }
    }
}

impl<V> WarpState<V> {
    fn note_undefined(&mut self, instr: u32, readers: u32, sources: u32) {
        match self.undefined.iter_mut().find(|u| u.0 == instr) {
            Some(u) => {
                u.1 |= readers;
                u.2 |= sources;
            }
            None => self.undefined.push((instr, readers, sources)),
        }
    }
}

/// Collectives that wait only for their non-exited members.
fn partial_ok(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Shfl { .. }
            | Instr::Vote { .. }
            | Instr::Match { .. }
            | Instr::Redux { .. }
            | Instr::BarWarpSync
    )
}

/// `0..7, 24..31` for a lane mask.
pub(crate) fn lane_list(mask: u32) -> String {
    let r = thread_ranges((0..32).filter(|l| mask & (1 << l) != 0));
    let parts: Vec<String> = r
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("{a}")
            } else {
                format!("{a}..{b}")
            }
        })
        .collect();
    parts.join(", ")
}

impl<D: Domain> Engine<'_, D> {
    /// Where an undefined value may come from: a shuffle at which some
    /// lane read a lane that had exited, does not exist or is not a
    /// member. With `t`, only shuffles at which `t` itself was such a
    /// reader. The instruction and a sentence for a message.
    pub(crate) fn undefined_origin(&self, t: Option<u32>) -> Option<(u32, String)> {
        let describe = |w: usize, &(instr, readers, sources): &(u32, u32, u32)| {
            (
                instr,
                format!(
                    "at the shuffle at {}, lanes {} of warp {w} read lanes {}, which had exited, do \
                     not exist or are not in the member mask, and got an undefined value (PTX ISA)",
                    unpack_instr(instr),
                    lane_list(readers),
                    lane_list(sources)
                ),
            )
        };
        match t {
            Some(t) => {
                let w = (t / 32) as usize;
                let u = self
                    .cta
                    .warps
                    .get(w)?
                    .undefined
                    .iter()
                    .find(|u| u.1 & (1 << (t % 32)) != 0)?;
                Some(describe(w, u))
            }
            None => self
                .cta
                .warps
                .iter()
                .enumerate()
                .find_map(|(w, ws)| ws.undefined.first().map(|u| describe(w, u))),
        }
    }

    /// Output tensor `name` ends the run with undefined values at
    /// `elements`: an `Uninitialised` finding, pointing at the shuffle
    /// that produced undefined values when there was one.
    #[cold]
    #[inline(never)]
    pub(crate) fn undefined_outputs(&mut self, name: &str, elements: &[u64]) {
        let shown: Vec<String> = elements
            .iter()
            .take(4)
            .map(|e| format!("{name}[{e}]"))
            .collect();
        let more = if elements.len() > 4 { ", …" } else { "" };
        let (instr, why) = match self.undefined_origin(None) {
            Some((i, why)) => (
                Some(unpack_instr(i)),
                format!("; undefined values arose in this run: {why}"),
            ),
            None => (
                None,
                "; a register read before it was written, or an operation on one, was stored"
                    .to_string(),
            ),
        };
        let f = Finding::new(
            FindingKind::Uninitialised,
            format!(
                "output `{name}`: {} element(s) hold an undefined value at the end of the run ({}{more}){why}",
                elements.len(),
                shown.join(", ")
            ),
        )
        .at(None, instr);
        self.report(f);
    }

    #[cold]
    #[inline(never)]
    fn divergence(&mut self, t: u32, message: String) -> Halt {
        self.fail(t, FindingKind::Divergence, "", message)
    }

    fn concrete_u32(&mut self, t: u32, info: &FuncInfo, op: &Operand, what: &str) -> R<u32> {
        match self.read_int(t, info, op, 32)? {
            IntArg::Known(v) => Ok(v as u32),
            IntArg::Undef => Err(self.uninit_register(t, what)),
            IntArg::Tainted(_) | IntArg::Data(_) => Err(self.unsupported(
                t,
                "synchronisation depends on tensor data",
                format!("{what} is computed from tensor values"),
            )),
        }
    }

    /// `bar`/`barrier` `.sync`, `.arrive`, `.red`.
    pub(crate) fn bar(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        kind: BarKind,
        aligned: bool,
    ) -> R<Flow> {
        let (a_op, b_op, c_op) = match kind {
            BarKind::Sync | BarKind::Arrive => (ops.first(), ops.get(1), None),
            BarKind::Red(_) => {
                if ops.len() >= 4 {
                    (ops.get(1), ops.get(2), ops.get(3))
                } else {
                    (ops.get(1), None, ops.get(2))
                }
            }
        };
        let Some(a_op) = a_op else {
            return Err(self.unsupported(t, "barrier without an id", String::new()));
        };
        let id = self.concrete_u32(t, info, a_op, "the barrier id")?;
        let count = match b_op {
            Some(b) => Some(self.concrete_u32(t, info, b, "the barrier thread count")?),
            None => None,
        };
        let pred = match c_op {
            Some(c) => Some(self.read_pred(t, info, c)?),
            None => None,
        };
        if id >= 16 {
            return Err(self.divergence(t, format!("barrier id {id} is out of range (0..15)")));
        }
        if let Some(c) = count
            && (c == 0 || c % 32 != 0)
        {
            return Err(self.divergence(
                t,
                format!(
                    "barrier {id}: thread count {c} is not a positive multiple of the warp size"
                ),
            ));
        }
        if kind == BarKind::Arrive && count.is_none() {
            return Err(self.unsupported(t, "bar.arrive without a thread count", String::new()));
        }
        let blocking = kind != BarKind::Arrive;
        let red = match kind {
            BarKind::Red(op) => Some(op),
            _ => None,
        };
        self.arrive(t, id as usize, count, blocking, red, pred, aligned)
    }

    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        t: u32,
        id: usize,
        count: Option<u32>,
        blocking: bool,
        red: Option<BarRedOp>,
        pred: Option<PredArg<D::Val>>,
        aligned: bool,
    ) -> R<Flow> {
        let instr = self.cur_instr;
        let w = (t / 32) as usize;
        let lane = t % 32;
        let expected = count.unwrap_or(self.cta.nwarps * 32);
        // Recycling.
        let generation = self.cta.bars[id].generation;
        if let Some(last) = self.cta.threads[t as usize].last_arrival[id] {
            if last.generation == generation
                && self.cta.bars[id].any
                && self.cta.bars[id].arrived[w] & (1 << lane) != 0
            {
                return Err(self.divergence(
                    t,
                    format!(
                        "barrier {id} recycling: this thread already arrived in generation {generation} (at {}) and arrives again before it completed, so the generation counts it twice",
                        unpack_instr(last.instr)
                    ),
                ));
            }
            if !last.blocking && last.generation < generation {
                let known = last
                    .completion
                    .is_some_and(|(u, e)| self.clocks.knows(t, u, e));
                if !known {
                    return Err(self.divergence(
                        t,
                        format!(
                            "barrier {id} recycling: this thread's bar.arrive at {} joined generation {}, and nothing orders that generation's completion before this new arrival, so in another schedule both arrivals fall into one generation",
                            unpack_instr(last.instr),
                            last.generation
                        ),
                    ));
                }
            }
        }
        let b = &mut self.cta.bars[id];
        if b.any {
            if b.expected != expected {
                let (ft, fi) = b.first;
                let msg = format!(
                    "barrier {id} count mismatch: generation {generation} expects {} threads (set by thread {ft} at {}), but this arrival passes {expected}",
                    b.expected,
                    unpack_instr(fi)
                );
                return Err(self.divergence(t, msg));
            }
        } else {
            b.any = true;
            b.expected = expected;
            b.default_count = count.is_none();
            b.first = (t, instr);
            b.red_op = red;
        }
        if blocking && b.default_count {
            match b.sync_instr {
                Some(i) if i != instr => {
                    let msg = format!(
                        "barrier divergence: threads of one generation of barrier {id} wait at different instructions ({} and {})",
                        unpack_instr(i),
                        unpack_instr(instr)
                    );
                    return Err(self.divergence(t, msg));
                }
                _ => b.sync_instr = Some(instr),
            }
        }
        if aligned {
            match b.warp_instr[w] {
                Some(i) if i != instr => {
                    let msg = format!(
                        "barrier divergence: lanes of warp {w} reach aligned barrier {id} at different instructions ({} and {})",
                        unpack_instr(i),
                        unpack_instr(instr)
                    );
                    return Err(self.divergence(t, msg));
                }
                _ => b.warp_instr[w] = Some(instr),
            }
        }
        if b.red_op != red {
            return Err(self.divergence(
                t,
                format!("barrier {id}: bar.red and other barrier kinds mixed in one generation"),
            ));
        }
        b.arrived[w] |= 1 << lane;
        self.cta.threads[t as usize].last_arrival[id] = Some(LastArrival {
            generation,
            blocking,
            completion: None,
            instr,
        });
        if blocking {
            self.cta.bars[id].waiters.push((t, pred));
        } else {
            let snap = self.clocks.snapshot(t);
            self.clocks.tick(t);
            self.cta.bars[id].arrivers.push((t, snap));
        }
        self.try_warp(id, w);
        self.try_complete(id, Some(t))?;
        if blocking {
            if self.cta.bars[id].waiters.iter().any(|(x, _)| *x == t) {
                self.cta.threads[t as usize].status = Status::Blocked(Wait::Barrier(id as u8));
                return Ok(Flow::Block);
            }
            return Ok(Flow::Next);
        }
        let b = &self.cta.bars[id];
        if b.arrived[w] & (1 << lane) != 0 && !b.done[w] {
            self.cta.bars[id].warp_waiters.push(t);
            self.cta.threads[t as usize].status = Status::Blocked(Wait::WarpArrive(id as u8));
            return Ok(Flow::Block);
        }
        Ok(Flow::Next)
    }

    /// Marks warp `w`'s arrival at barrier `id` once all its live lanes
    /// have arrived, releasing its `.arrive` lanes.
    fn try_warp(&mut self, id: usize, w: usize) {
        let live = self.cta.live[w];
        let b = &mut self.cta.bars[id];
        if b.done[w] || b.arrived[w] == 0 || b.arrived[w] & live != live {
            return;
        }
        b.done[w] = true;
        b.ndone += 1;
        let (release, keep): (Vec<u32>, Vec<u32>) = b
            .warp_waiters
            .iter()
            .partition(|&&x| (x / 32) as usize == w);
        b.warp_waiters = keep;
        for x in release {
            if self.cta.threads[x as usize].status == Status::Blocked(Wait::WarpArrive(id as u8)) {
                self.wake(x);
            }
        }
    }

    /// Completes the current generation of barrier `id` if it can.
    /// `current` is the running thread (it is not woken, it continues).
    fn try_complete(&mut self, id: usize, current: Option<u32>) -> R<bool> {
        let nwarps = self.cta.nwarps as usize;
        let b = &self.cta.bars[id];
        if !b.any {
            return Ok(false);
        }
        let complete = if b.default_count {
            b.ndone > 0 && (0..nwarps).all(|w| b.done[w] || self.cta.live[w] == 0)
        } else {
            b.ndone * 32 >= b.expected
        };
        if !complete {
            return Ok(false);
        }
        let funcs = self.funcs.clone();
        let b = &mut self.cta.bars[id];
        let done = b.done.clone();
        let in_done = |x: u32| done[(x / 32) as usize];
        let (participants, carried): (Vec<_>, Vec<_>) =
            b.waiters.drain(..).partition(|(x, _)| in_done(*x));
        let (released, carried_arr): (Vec<_>, Vec<_>) =
            b.arrivers.drain(..).partition(|(x, _)| in_done(*x));
        let red_op = b.red_op;
        let old_generation = b.generation;
        // Reset for the next generation, carrying partial warps.
        b.generation += 1;
        b.ndone = 0;
        b.sync_instr = None;
        b.red_op = None;
        for (w, &d) in done.iter().enumerate() {
            if d {
                b.arrived[w] = 0;
                b.done[w] = false;
                b.warp_instr[w] = None;
            }
        }
        b.waiters = carried;
        b.arrivers = carried_arr;
        b.any = b.arrived.iter().any(|&m| m != 0);
        if !b.any {
            b.default_count = true;
        }
        let new_generation = b.generation;
        let carried_threads: Vec<u32> = b
            .waiters
            .iter()
            .map(|(x, _)| *x)
            .chain(b.arrivers.iter().map(|(x, _)| *x))
            .collect();
        for x in carried_threads {
            if let Some(l) = self.cta.threads[x as usize].last_arrival[id].as_mut() {
                l.generation = new_generation;
            }
        }
        // Happens-before.
        let ptids: Vec<u32> = participants.iter().map(|(x, _)| *x).collect();
        let snaps: Vec<Snapshot> = released.iter().map(|(_, s)| s.clone()).collect();
        self.clocks.sync(&ptids, &snaps);
        let rep = ptids.first().map(|&p| (p, self.clocks.epoch(p)));
        for &(a, _) in &released {
            if let Some(l) = self.cta.threads[a as usize].last_arrival[id].as_mut()
                && l.generation == old_generation
            {
                l.completion = rep;
            }
        }
        for &p in &ptids {
            if let Some(l) = self.cta.threads[p as usize].last_arrival[id].as_mut() {
                l.completion = rep;
            }
        }
        // Reductions.
        if let Some(op) = red_op {
            let mut count = 0u64;
            let mut all = true;
            let mut any = false;
            for (x, p) in &participants {
                match p {
                    Some(PredArg::Known(k)) => {
                        count += u64::from(*k);
                        all &= *k;
                        any |= *k;
                    }
                    _ => {
                        return Err(self.unsupported(
                            *x,
                            "synchronisation depends on tensor data",
                            "bar.red reduces a predicate computed from tensor values".into(),
                        ));
                    }
                }
            }
            let result = match op {
                BarRedOp::Popc => count,
                BarRedOp::And => u64::from(all),
                BarRedOp::Or => u64::from(any),
            };
            for &p in &ptids {
                let (f, pc) = {
                    let fr = self.cta.threads[p as usize].frames.last().ok_or(Halt)?;
                    (fr.func, fr.pc)
                };
                let info = &funcs[f as usize];
                if let Some(d) = info
                    .ir
                    .instrs
                    .get(pc as usize)
                    .and_then(|i| i.operands.first())
                {
                    let d = d.clone();
                    self.write(p, info, &d, Value::Bits(result))?;
                }
            }
        }
        self.stats.barriers_completed += 1;
        for p in ptids {
            if Some(p) != current {
                self.wake(p);
            }
        }
        Ok(true)
    }

    /// A thread has exited: its warp may now count as arrived, collectives
    /// it belongs to can no longer complete.
    pub(crate) fn after_exit(&mut self, t: u32) {
        let w = (t / 32) as usize;
        for id in 0..16 {
            if !self.cta.bars[id].any {
                continue;
            }
            self.try_warp(id, w);
            if self.try_complete(id, None).is_err() {
                return;
            }
        }
        self.cluster_after_exit();
        let lane = t % 32;
        let _ = self.complete_activemask(w, false);
        if self.complete_without_exited(w).is_err() {
            return;
        }
        // What still waits for this lane is a collective every lane must
        // join (`mma`, `ldmatrix`, `wmma`: `.aligned`, the whole warp).
        let funcs = self.funcs.clone();
        let stuck: Option<String> = self.cta.warps[w]
            .pending
            .iter()
            .find(|c| {
                let i = unpack_instr(c.first_instr);
                c.key.1 & (1 << lane) != 0
                    && funcs[i.func as usize]
                        .ir
                        .instrs
                        .get(i.index as usize)
                        .is_none_or(|d| !partial_ok(&d.instr))
            })
            .map(|c| c.what.clone());
        if let Some(what) = stuck {
            let msg = format!(
                "thread {t} exits while the {what} it is a member of waits for it: the collective can never complete"
            );
            let f = Finding::new(FindingKind::Divergence, msg).at(Some(self.thread_ref(t)), None);
            self.report(f);
        }
    }

    /// Warp collectives and `bar.warp.sync`.
    pub(crate) fn warp_collective(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops: &[Operand] = &ins.operands;
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        let w = (t / 32) as usize;
        let lane = t % 32;
        let mask_op = match &ins.instr {
            Instr::Shfl { sync, .. } => sync.then(|| op(5)),
            Instr::Vote { sync, .. } => sync.then(|| op(2)),
            Instr::Match { .. } => Some(op(3)),
            Instr::Redux { .. } => Some(op(2)),
            Instr::Elect => Some(op(2)),
            Instr::BarWarpSync => Some(op(0)),
            Instr::Activemask => None,
            _ => return Err(self.unsupported(t, "unknown collective", String::new())),
        };
        // Built only when needed (messages).
        let what = |mask: u32| {
            let m = ins.instr.mnemonic();
            if matches!(ins.instr, Instr::Activemask) {
                m
            } else {
                format!("{m} (member mask {mask:#010x})")
            }
        };
        let is_activemask = matches!(ins.instr, Instr::Activemask);
        let mask = match mask_op {
            Some(m) => self.concrete_u32(t, info, m, "the member mask")?,
            None => self.cta.live[w],
        };
        if mask & (1 << lane) == 0 {
            return Err(self.divergence(
                t,
                format!(
                    "{} is executed by lane {lane}, which is not in its member mask",
                    what(mask)
                ),
            ));
        }
        // Member lanes that have exited (or do not exist: the last warp of
        // a CTA whose size is not a multiple of 32) do not take part: the
        // collective waits for the non-exited members only (PTX ISA,
        // shfl/vote/match/redux.sync; CUDA's __syncwarp for
        // bar.warp.sync). `elect.sync` has no such rule in the ISA.
        let gone = mask & !self.cta.live[w];
        if gone != 0 && matches!(ins.instr, Instr::Elect) {
            return Err(self.unsupported(
                t,
                "elect.sync with exited member lanes",
                format!(
                    "{}: member lanes {} have exited or do not exist, and the PTX ISA does not say whether elect.sync waits for them",
                    what(mask),
                    lane_list(gone)
                ),
            ));
        }
        let arg = match &ins.instr {
            Instr::Shfl { .. } => {
                let a = self.read(t, info, op(2), 32)?;
                let b = self.concrete_u32(t, info, op(3), "the shuffle lane operand")?;
                let c = self.concrete_u32(t, info, op(4), "the shuffle clamp operand")?;
                CollArg::Shfl { a, b, c }
            }
            Instr::Vote { .. } => CollArg::Pred(self.read_pred(t, info, op(1))?),
            Instr::Match { ty, .. } => CollArg::Val(self.read(t, info, op(2), ty.bit_width())?),
            Instr::Redux { .. } => CollArg::Val(self.read(t, info, op(1), 32)?),
            _ => CollArg::None,
        };
        let key = (
            if matches!(ins.instr, Instr::BarWarpSync) {
                u32::MAX
            } else {
                self.cur_instr
            },
            if is_activemask { 0 } else { mask },
        );
        let first_instr = self.cur_instr;
        let idx = match self.cta.warps[w].pending.iter().position(|c| c.key == key) {
            Some(i) => i,
            None => {
                let what = what(mask);
                let ws = &mut self.cta.warps[w];
                ws.pending.push(Coll {
                    key,
                    arrived: 0,
                    args: Vec::with_capacity(32),
                    what,
                    first_instr,
                });
                ws.pending.len() - 1
            }
        };
        let ws = &mut self.cta.warps[w];
        let c = &mut ws.pending[idx];
        c.arrived |= 1 << lane;
        c.args.push((lane, arg));
        if c.arrived != mask & self.cta.live[w] {
            // activemask also completes when the warp quiesces
            // (`resolve_quiescent`) with the lanes that arrived.
            self.cta.threads[t as usize].status = Status::Blocked(Wait::Collective);
            return Ok(Flow::Block);
        }
        let coll = ws.pending.remove(idx);
        self.complete_collective(t, w, &ins.instr, coll)?;
        Ok(Flow::Next)
    }

    fn complete_collective(
        &mut self,
        current: u32,
        w: usize,
        instr: &Instr,
        c: Coll<D::Val>,
    ) -> R<()> {
        self.stats.warp_collectives += 1;
        let funcs = self.funcs.clone();
        let mask = if matches!(instr, Instr::Activemask) {
            c.arrived
        } else {
            c.key.1
        };
        let base = (w * 32) as u32;
        // The member lanes that took part (exited members do not).
        let present = c.arrived & mask;
        let mut args: Vec<Option<CollArg<D::Val>>> = vec![None; 32];
        for (l, a) in c.args {
            args[l as usize] = Some(a);
        }
        let members: Vec<u32> = (0..32).filter(|l| present & (1 << l) != 0).collect();
        // Shuffle lanes that read a lane outside `present` (undefined).
        let (mut readers, mut sources) = (0u32, 0u32);
        // Results per member lane: (d, p).
        let mut results: Vec<LaneResult<D::Val>> = Vec::with_capacity(members.len());
        match instr {
            Instr::Shfl { mode, .. } => {
                for &i in &members {
                    let Some(CollArg::Shfl { b, c: cv, .. }) = &args[i as usize] else {
                        continue;
                    };
                    let (b, cv) = (*b, *cv);
                    let segmask = (cv >> 8) & 0x1F;
                    let clamp = cv & 0x1F;
                    let max_lane = (i & segmask) | (clamp & !segmask);
                    let min_lane = i & segmask;
                    let bval = b & 0x1F;
                    let (j, pval): (i64, bool) = match mode {
                        ShflMode::Up => {
                            let j = i64::from(i) - i64::from(bval);
                            (j, j >= i64::from(max_lane))
                        }
                        ShflMode::Down => {
                            let j = i64::from(i) + i64::from(bval);
                            (j, j <= i64::from(max_lane))
                        }
                        ShflMode::Bfly => {
                            let j = i64::from(i ^ bval);
                            (j, j <= i64::from(max_lane))
                        }
                        ShflMode::Idx => {
                            let j = i64::from(min_lane | (bval & !segmask));
                            (j, j <= i64::from(max_lane))
                        }
                    };
                    let j = if pval { j as u32 } else { i };
                    // A source lane that is not a member, or a member that
                    // has exited or does not exist: undefined (PTX ISA).
                    let v = match args.get(j as usize).and_then(|a| a.as_ref()) {
                        Some(CollArg::Shfl { a, .. }) if present & (1 << j) != 0 => a.clone(),
                        _ => {
                            readers |= 1 << i;
                            sources |= 1 << (j & 31);
                            Value::Undef
                        }
                    };
                    results.push((i, v, Some(Value::Bits(u64::from(pval)))));
                }
            }
            Instr::Vote { mode, .. } => {
                let preds: Vec<(u32, PredArg<D::Val>)> = members
                    .iter()
                    .filter_map(|&l| match &args[l as usize] {
                        Some(CollArg::Pred(p)) => Some((l, *p)),
                        _ => None,
                    })
                    .collect();
                let r: Value<D::Val> = match mode {
                    VoteMode::All | VoteMode::Any => {
                        let op = if *mode == VoteMode::All {
                            crate::domain::BoolOp::And
                        } else {
                            crate::domain::BoolOp::Or
                        };
                        let mut acc = PredArg::Known(*mode == VoteMode::All);
                        for (_, p) in &preds {
                            acc = self.pred_op(op, acc, *p);
                        }
                        self.pred_value(acc)
                    }
                    VoteMode::Ballot | VoteMode::Uni => {
                        let mut bits = 0u64;
                        for (l, p) in &preds {
                            match p {
                                PredArg::Known(k) => bits |= u64::from(*k) << l,
                                PredArg::Undef => {}
                                _ => {
                                    return Err(self.unsupported(
                                        base + l,
                                        "bit-level manipulation of a real value",
                                        "vote.ballot / vote.uni of a predicate computed from tensor values"
                                            .into(),
                                    ));
                                }
                            }
                        }
                        if *mode == VoteMode::Ballot {
                            Value::Bits(bits)
                        } else {
                            Value::Bits(u64::from(bits == 0 || bits == u64::from(present)))
                        }
                    }
                };
                for &i in &members {
                    results.push((i, r.clone(), None));
                }
            }
            Instr::Match { mode, .. } => {
                let mut vals: Vec<(u32, u64)> = Vec::new();
                for &l in &members {
                    match &args[l as usize] {
                        Some(CollArg::Val(Value::Bits(b))) => vals.push((l, *b)),
                        _ => {
                            return Err(self.unsupported(
                                base + l,
                                "bit-level manipulation of a real value",
                                "match.sync on a value that is not a concrete integer".into(),
                            ));
                        }
                    }
                }
                let all_eq = vals.windows(2).all(|p| p[0].1 == p[1].1);
                for &(l, v) in &vals {
                    let (d, p) = match mode {
                        ptxeq_ir::MatchMode::Any => {
                            let m: u64 = vals
                                .iter()
                                .filter(|(_, x)| *x == v)
                                .fold(0, |acc, (k, _)| acc | (1u64 << k));
                            (m, None)
                        }
                        ptxeq_ir::MatchMode::All => (
                            if all_eq { u64::from(present) } else { 0 },
                            Some(Value::Bits(u64::from(all_eq))),
                        ),
                    };
                    results.push((l, Value::Bits(d), p));
                }
            }
            Instr::Redux { op: rop, ty, .. } => {
                let signed = ty.is_signed();
                let mut acc: Option<u64> = None;
                let mut taint = None;
                let mut data: Vec<IntArg<D::Val>> = Vec::new();
                for &l in &members {
                    match &args[l as usize] {
                        Some(CollArg::Val(Value::Bits(b))) => {
                            let b = mask_bits(*b, 32);
                            acc = Some(match acc {
                                None => b,
                                Some(a) => match rop {
                                    ptxeq_ir::ReduxOp::Add => crate::int::add(a, b, 32),
                                    ptxeq_ir::ReduxOp::Min => crate::int::min(a, b, 32, signed),
                                    ptxeq_ir::ReduxOp::Max => crate::int::max(a, b, 32, signed),
                                    ptxeq_ir::ReduxOp::And => a & b,
                                    ptxeq_ir::ReduxOp::Or => a | b,
                                    ptxeq_ir::ReduxOp::Xor => a ^ b,
                                },
                            });
                        }
                        Some(CollArg::Val(Value::Tainted(o))) => taint = Some(*o),
                        Some(CollArg::Val(Value::Undef)) => {}
                        Some(CollArg::Val(v)) if super::values::has_int_data(v) => {
                            let x = self.int_of(base + l, &v.clone(), 32)?;
                            data.push(x);
                        }
                        _ => {
                            return Err(self.unsupported(
                                base + l,
                                "bit-level manipulation of a real value",
                                "redux.sync of a real value".into(),
                            ));
                        }
                    }
                }
                let r = match (taint, acc) {
                    (Some(o), _) => Value::Tainted(o),
                    // Integer data: the same reduction, in the domain
                    // (lane order; `add` is the ring sum, the others atoms).
                    (None, acc) if !data.is_empty() => {
                        use crate::domain::IntOp;
                        let o = match rop {
                            ptxeq_ir::ReduxOp::Add => IntOp::Add,
                            ptxeq_ir::ReduxOp::Min => IntOp::Min { signed },
                            ptxeq_ir::ReduxOp::Max => IntOp::Max { signed },
                            ptxeq_ir::ReduxOp::And => IntOp::And,
                            ptxeq_ir::ReduxOp::Or => IntOp::Or,
                            ptxeq_ir::ReduxOp::Xor => IntOp::Xor,
                        };
                        let mut it = data.into_iter();
                        let mut x = match acc {
                            Some(a) => IntArg::Known(a),
                            None => it.next().unwrap_or(IntArg::Undef),
                        };
                        for y in it {
                            x = self.int_data_op(base, o, 32, &[(x, 32), (y, 32)])?;
                        }
                        self.int_result(base, x, 32)?
                    }
                    (None, Some(a)) => Value::Bits(a),
                    _ => Value::Undef,
                };
                for &i in &members {
                    results.push((i, r.clone(), None));
                }
            }
            Instr::Elect => {
                let leader = present.trailing_zeros();
                for &i in &members {
                    results.push((
                        i,
                        Value::Bits(u64::from(leader)),
                        Some(Value::Bits(u64::from(i == leader))),
                    ));
                }
            }
            Instr::BarWarpSync => {
                let tids: Vec<u32> = members.iter().map(|l| base + l).collect();
                self.clocks.sync(&tids, &[]);
            }
            Instr::Activemask => {
                for &i in &members {
                    results.push((i, Value::Bits(u64::from(mask)), None));
                }
            }
            _ => {}
        }
        if readers != 0 {
            self.cta.warps[w].note_undefined(c.first_instr, readers, sources);
        }
        for (l, d, p) in results {
            let x = base + l;
            let (f, pc) = {
                let fr = self.cta.threads[x as usize].frames.last().ok_or(Halt)?;
                (fr.func, fr.pc)
            };
            let info = &funcs[f as usize];
            let Some(ins) = info.ir.instrs.get(pc as usize) else {
                continue;
            };
            let ops = ins.operands.clone();
            let dst = match ins.instr {
                Instr::Vote { .. } | Instr::Redux { .. } => ops.first(),
                _ => ops.first(),
            };
            if let Some(dop) = dst {
                self.write(x, info, dop, d)?;
            }
            if let (Some(p), Some(pop)) = (p, ops.get(1))
                && matches!(
                    ins.instr,
                    Instr::Shfl { .. } | Instr::Match { .. } | Instr::Elect
                )
            {
                self.write(x, info, pop, p)?;
            }
        }
        for &l in &members {
            let x = base + l;
            if x != current
                && self.cta.threads[x as usize].status == Status::Blocked(Wait::Collective)
            {
                self.wake(x);
            }
        }
        Ok(())
    }

    /// Completes the pending collectives of warp `w` that waited only for
    /// lanes that have now exited (`shfl/vote/match/redux.sync`,
    /// `bar.warp.sync`: exited members do not take part). Matrix
    /// collectives and `elect.sync` stay pending.
    fn complete_without_exited(&mut self, w: usize) -> R<()> {
        let funcs = self.funcs.clone();
        loop {
            let live = self.cta.live[w];
            let ready = self.cta.warps[w].pending.iter().position(|c| {
                c.key.1 != 0 && c.arrived != 0 && c.arrived == c.key.1 & live && {
                    let i = super::unpack_instr(c.first_instr);
                    funcs[i.func as usize]
                        .ir
                        .instrs
                        .get(i.index as usize)
                        .is_some_and(|d| partial_ok(&d.instr))
                }
            });
            let Some(i) = ready else {
                return Ok(());
            };
            let c = self.cta.warps[w].pending.remove(i);
            let first = super::unpack_instr(c.first_instr);
            let Some(ins) = funcs[first.func as usize]
                .ir
                .instrs
                .get(first.index as usize)
            else {
                return Ok(());
            };
            let ins = ins.instr.clone();
            self.complete_collective(u32::MAX, w, &ins, c)?;
        }
    }

    /// Completes pending `activemask` queries of warp `w`: when every live
    /// lane has arrived, or (`quiescent`) when nothing else can run, with
    /// the lanes that arrived — lanes that reach the same `activemask`
    /// before blocking elsewhere are the converged, active ones.
    fn complete_activemask(&mut self, w: usize, quiescent: bool) -> R<bool> {
        let funcs = self.funcs.clone();
        let mut any = false;
        loop {
            let live = self.cta.live[w];
            let Some(i) = self.cta.warps[w].pending.iter().position(|c| {
                c.key.1 == 0 && c.key.0 != u32::MAX && (quiescent || c.arrived & live == live)
            }) else {
                return Ok(any);
            };
            let c = self.cta.warps[w].pending.remove(i);
            let instr = super::unpack_instr(c.key.0);
            let info = &funcs[instr.func as usize];
            let Some(ins) = info.ir.instrs.get(instr.index as usize) else {
                return Ok(any);
            };
            let ins = ins.instr.clone();
            self.complete_collective(u32::MAX, w, &ins, c)?;
            any = true;
        }
    }

    /// Nothing can run: resolve quiescent `activemask` queries. Returns
    /// whether some thread became runnable.
    pub(crate) fn resolve_quiescent(&mut self) -> bool {
        let mut any = false;
        for w in 0..self.cta.nwarps as usize {
            match self.complete_activemask(w, true) {
                Ok(x) => any |= x,
                Err(_) => return false,
            }
        }
        any
    }

    /// Called when no thread can run: reports a deadlock (or divergence)
    /// listing every waiting group, unless every thread exited.
    pub(crate) fn check_stuck(&mut self) {
        let blocked: Vec<u32> = (0..self.cta.nthreads)
            .filter(|&t| matches!(self.cta.threads[t as usize].status, Status::Blocked(_)))
            .collect();
        if blocked.is_empty() {
            return;
        }
        let mut groups: Vec<WaitGroup> = Vec::new();
        let mut collective = false;
        for id in 0..16 {
            let b = &self.cta.bars[id];
            let waiting: Vec<u32> = b
                .waiters
                .iter()
                .map(|(x, _)| *x)
                .chain(b.warp_waiters.iter().copied())
                .collect();
            if waiting.is_empty() {
                continue;
            }
            let arrived: u32 = b.arrived.iter().map(|m| m.count_ones()).sum();
            // One group per instruction.
            let mut by_instr: Vec<(u32, Vec<u32>)> = Vec::new();
            for x in waiting {
                let i = self.cta.threads[x as usize]
                    .frames
                    .last()
                    .map_or(0, |f| super::pack_instr(f.func, f.pc));
                match by_instr.iter_mut().find(|(k, _)| *k == i) {
                    Some((_, v)) => v.push(x),
                    None => by_instr.push((i, vec![x])),
                }
            }
            for (i, ts) in by_instr {
                groups.push(WaitGroup {
                    what: format!("barrier {id} (generation {})", b.generation),
                    instr: unpack_instr(i),
                    threads: thread_ranges(ts),
                    arrived,
                    expected: b.expected,
                });
            }
        }
        groups.extend(self.mbar_wait_groups());
        groups.extend(self.cluster_wait_groups());
        groups.extend(self.grid_sync_wait_groups());
        let wg = self.wgmma_wait_groups();
        collective |= !wg.is_empty();
        groups.extend(wg);
        for (w, ws) in self.cta.warps.iter().enumerate() {
            for c in &ws.pending {
                collective = true;
                let ts: Vec<u32> = (0..32)
                    .filter(|l| c.arrived & (1 << l) != 0)
                    .map(|l| (w * 32) as u32 + l)
                    .collect();
                groups.push(WaitGroup {
                    what: c.what.clone(),
                    instr: unpack_instr(c.first_instr),
                    threads: thread_ranges(ts),
                    arrived: c.arrived.count_ones(),
                    expected: c.key.1.count_ones(),
                });
            }
        }
        let list: Vec<String> = groups
            .iter()
            .map(|g| {
                format!(
                    "{} at {}: {} ({} of {} arrived)",
                    g.what,
                    g.instr,
                    format_ranges(&g.threads),
                    g.arrived,
                    g.expected
                )
            })
            .collect();
        let live = (0..self.cta.nthreads)
            .filter(|&t| self.cta.threads[t as usize].status != Status::Exited)
            .count();
        let (kind, head) = if collective {
            (
                FindingKind::Divergence,
                "warp divergence at a collective: lanes of a warp wait at different synchronisation points",
            )
        } else {
            (
                FindingKind::Deadlock,
                "deadlock: every live thread is blocked and no barrier can complete",
            )
        };
        let mut f = Finding::new(
            kind,
            format!("{head} ({live} live threads): {}", list.join("; ")),
        );
        f.waiting = groups;
        self.report(f);
    }
}
