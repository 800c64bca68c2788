//! `cp.async` (Ampere asynchronous global → shared copies) with
//! `cp.async.commit_group`, `cp.async.wait_group N` and
//! `cp.async.wait_all`.
//!
//! Semantics (docs/semantics.md §12): the copy reads global memory and writes
//! shared memory at some moment between the `cp.async` and the wait that
//! covers its group in the issuing thread. So, per copy, the destination
//! bytes are "in flight" over that whole interval: any access to them by
//! any thread — the issuing one included — while the copy is pending is a
//! race with the `cp.async` (in every schedule the access and the copy are
//! unordered: happens-before respects the schedule, and nothing can be
//! ordered after a wait that has not executed yet). Conservatively, the
//! source bytes are in flight too: a write to them while pending races.
//! The accesses themselves are judged like any other: at issue against
//! what came before (as a write of the destination and a read of the
//! source), and at the wait they are recorded again at the issuing
//! thread's clock, so later accesses must be ordered after the wait (for
//! other threads: a barrier after it).
//!
//! The data is placed at issue (any read that could see the difference is
//! a reported race). `src-size` below `cp-size` zero-fills the rest, an
//! `ignore-src` predicate that is true fills zeros; a guard works as for
//! any instruction (a tensor-data guard is unsupported). Commit groups
//! are per thread; `wait_group N` completes the oldest groups until at
//! most `N` are pending; `wait_all` commits and waits for everything.
//! Copies never waited for stay in flight until the end of the run.
//! `cp.async.mbarrier.arrive` completes a thread's outstanding copies on
//! an mbarrier phase instead (`mbarrier.rs`, stamped by the thread's
//! async agent). Bulk copies and TMA (`mbarrier.rs`, `tma.rs`) reuse the
//! in-flight tracking here; their bulk async-groups are kept apart from
//! the `cp.async` groups.

use std::collections::VecDeque;

use ptxeq_ir::{CacheHint, Instr, InstrData, Operand, StateSpace};
use rustc_hash::FxHashMap;

use super::mem::Target;
use super::values::PredArg;
use super::{Engine, Flow, R, unpack_instr};
use crate::domain::Domain;
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};
use crate::funcinfo::FuncInfo;
use crate::race::{Acc, Kind};
use crate::value::Value;

/// Bytes of a region: (region, offset, length).
pub(crate) type Span = (u32, u64, u64);

/// Bytes per bucket of the in-flight index (copies are at most 16 bytes).
const CHUNK: u64 = 16;

/// One issued copy.
#[derive(Clone, Debug)]
struct Copy {
    tid: u32,
    instr: u32,
    /// Destination: region, offset, length.
    dst: (u32, u64, u64),
    /// Source (none when nothing is read).
    src: Option<(u32, u64, u64)>,
    /// A `wgmma.mma_async` operand read (no destination; `wgmma.rs`).
    wgmma: bool,
    /// The issuing operation in words when it is not a copy (`tcgen05.mma`,
    /// `tcgen05.st`: `tmem.rs`), and what completes it.
    label: Option<(&'static str, &'static str)>,
    /// A bulk reduction (`cp.reduce.async.bulk`, `tma.rs`): its destination
    /// is a strong read-modify-write with this update code and operand
    /// fingerprint, which does not race with other strong RMWs.
    strong: Option<(u8, u64)>,
}

/// Outstanding copies of all threads.
pub(crate) struct AsyncCopies {
    /// Per thread: issued, not yet committed.
    uncommitted: Vec<Vec<u32>>,
    /// Per thread: committed groups, oldest first.
    groups: Vec<VecDeque<Vec<u32>>>,
    copies: FxHashMap<u32, Copy>,
    next: u32,
    /// In-flight index: (region, chunk) → copies touching it (dst or src).
    inflight: FxHashMap<(u32, u64), Vec<u32>>,
    /// Per thread: bulk copies (`.bulk_group`) issued, not yet committed
    /// (`tma.rs`).
    pub(crate) bulk_uncommitted: Vec<Vec<u32>>,
    /// Per thread: committed bulk async-groups, oldest first.
    pub(crate) bulk_groups: Vec<VecDeque<Vec<u32>>>,
}

impl AsyncCopies {
    pub(crate) fn new(threads: usize) -> Self {
        AsyncCopies {
            uncommitted: vec![Vec::new(); threads],
            groups: vec![VecDeque::new(); threads],
            copies: FxHashMap::default(),
            next: 0,
            inflight: FxHashMap::default(),
            bulk_uncommitted: vec![Vec::new(); threads],
            bulk_groups: vec![VecDeque::new(); threads],
        }
    }

    /// Whether any copy is in flight (the fast path of every access).
    #[inline]
    pub(crate) fn any(&self) -> bool {
        !self.copies.is_empty()
    }

    fn index(&mut self, id: u32, (r, off, len): (u32, u64, u64), add: bool) {
        if len == 0 {
            return;
        }
        for ch in off / CHUNK..=(off + len - 1) / CHUNK {
            if add {
                self.inflight.entry((r, ch)).or_default().push(id);
            } else if let Some(v) = self.inflight.get_mut(&(r, ch)) {
                v.retain(|&x| x != id);
                if v.is_empty() {
                    self.inflight.remove(&(r, ch));
                }
            }
        }
    }

    /// The first in-flight copy an access conflicts with: `(copy, the
    /// copy's side is its destination, first overlapping byte)`. The
    /// in-flight `tcgen05.mma`s of thread `pipelined` are skipped (a later
    /// MMA of that thread is pipelined after them, `tmem.rs`).
    fn conflict(
        &self,
        r: u32,
        off: u64,
        len: u64,
        write: bool,
        atomic: bool,
        pipelined: Option<u32>,
    ) -> Option<(Copy, bool, u64)> {
        if len == 0 {
            return None;
        }
        for ch in off / CHUNK..=(off + len - 1) / CHUNK {
            let Some(ids) = self.inflight.get(&(r, ch)) else {
                continue;
            };
            for id in ids {
                let Some(c) = self.copies.get(id) else {
                    continue;
                };
                if pipelined == Some(c.tid) && c.label.is_some_and(|l| l.0 == "tcgen05.mma") {
                    continue;
                }
                // A bulk reduction's destination and another strong
                // read-modify-write are morally strong: no race.
                let strong_dst = atomic && c.strong.is_some();
                let overlap = |(cr, co, cl): (u32, u64, u64)| {
                    (cr == r && co < off + len && off < co + cl).then(|| co.max(off))
                };
                if !strong_dst && let Some(b) = overlap(c.dst) {
                    return Some((c.clone(), true, b));
                }
                if write && let Some(b) = c.src.and_then(overlap) {
                    return Some((c.clone(), false, b));
                }
            }
        }
        None
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Called for every tracked access of region `r` (`mem.rs`): an access
    /// overlapping an in-flight copy races with it.
    pub(crate) fn async_check(&mut self, t: u32, r: u32, off: u64, len: u64, kind: AccessKind) {
        let write = kind != AccessKind::Read;
        let pipelined = self.cta.tmem.pipelined.map(|(t, _)| t);
        let atomic = kind == AccessKind::Atomic;
        let Some((c, dst, byte)) = self
            .cta
            .asyncs
            .conflict(r, off, len, write, atomic, pipelined)
        else {
            return;
        };
        let first = AccessRef {
            thread: self.thread_ref(c.tid),
            instr: unpack_instr(c.instr),
            kind: if dst {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            cta: None,
        };
        let second = AccessRef {
            thread: self.thread_ref(t),
            instr: unpack_instr(self.cur_instr),
            kind,
            cta: None,
        };
        let side = if dst { "writes" } else { "reads" };
        if let Some((what, until)) = c.label {
            let why = format!(
                "the {what} by {} at {} {side} these bytes asynchronously until {until}, and the {} by {} at {} is not ordered after that",
                first.thread,
                first.instr,
                kind.word(),
                second.thread,
                second.instr
            );
            self.async_race(r, byte, first, second, why);
            return;
        }
        if c.wgmma {
            let why = format!(
                "the wgmma.mma_async of {}'s warpgroup at {} reads its shared-memory operands asynchronously until the wgmma.wait_group that retires its group, and the {} by {} at {} happened before that wait",
                first.thread,
                first.instr,
                kind.word(),
                second.thread,
                second.instr
            );
            self.async_race(r, byte, first, second, why);
            return;
        }
        let why = format!(
            "the asynchronous copy by {} at {} {side} these bytes at some moment until the wait that covers it (cp.async.wait_group / wait_all of that thread, or the mbarrier phase it completes on), and none had when the {} by {} at {} happened",
            first.thread,
            first.instr,
            kind.word(),
            second.thread,
            second.instr
        );
        self.async_race(r, byte, first, second, why);
    }

    fn async_race(&mut self, r: u32, byte: u64, first: AccessRef, second: AccessRef, why: String) {
        let a = pack(first.instr).min(pack(second.instr));
        let b = pack(first.instr).max(pack(second.instr));
        if !self.log.first_report((r, a, b)) {
            return;
        }
        let reg = &self.mem.regions[r as usize];
        let loc = MemLocation {
            region: reg.name.clone(),
            space: reg.space.name().into(),
            byte_offset: byte,
            element: (reg.elem > 0).then(|| byte / u64::from(reg.elem)),
        };
        let msg = format!("data race on {loc}: {why}");
        let mut f = Finding::new(FindingKind::Race, msg)
            .at(Some(second.thread), Some(second.instr))
            .with_location(loc);
        f.accesses = vec![first, second];
        self.report(f);
    }

    /// `cp.async` — `[dst], [src], cp-size{, src-size | ignore-src}{, policy}`.
    pub(crate) fn cp_async(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let ops = &ins.operands;
        let (Some(Operand::Addr(dst)), Some(Operand::Addr(src)), Some(size_op)) =
            (ops.first(), ops.get(1), ops.get(2))
        else {
            return Err(self.unsupported(t, "cp.async operands", String::new()));
        };
        let (dst, src) = (dst.clone(), src.clone());
        let cg =
            matches!(&ins.instr, Instr::CpAsync { cache, .. } if *cache == ptxeq_ir::CacheOp::Cg);
        let policy = matches!(&ins.instr, Instr::CpAsync { hints, .. } if hints.contains(&CacheHint::L2CacheHint));
        let cp = self.matrix_u32(t, info, size_op, "the cp.async size")?;
        if !matches!(cp, 4 | 8 | 16) || (cg && cp != 16) {
            return Err(self.unsupported(
                t,
                "invalid cp.async size",
                format!("cp-size {cp} (4, 8 or 16 bytes; .cg only 16)"),
            ));
        }
        // The fourth operand is src-size, or the ignore-src predicate;
        // with an L2 cache hint and four operands it is the policy.
        let extra = match ops.get(3) {
            Some(o) if !(policy && ops.len() == 4) => Some(o.clone()),
            _ => None,
        };
        let src_size = match extra {
            None => cp,
            Some(o) if self.operand_width(info, &o) == Some(1) => {
                let v = self.read(t, info, &o, 1)?;
                match self.pred_of(t, &v)? {
                    PredArg::Known(true) => 0,
                    PredArg::Known(false) => cp,
                    PredArg::Undef => {
                        return Err(self.uninit_register(t, "the ignore-src predicate"));
                    }
                    _ => {
                        return Err(self.unsupported(
                            t,
                            "address depends on tensor data",
                            "the cp.async ignore-src predicate is computed from tensor values"
                                .into(),
                        ));
                    }
                }
            }
            Some(o) => self.matrix_u32(t, info, &o, "the cp.async src-size")?,
        };
        if src_size > cp {
            return Err(self.unsupported(
                t,
                "invalid cp.async size",
                format!("src-size {src_size} exceeds cp-size {cp} (undefined in PTX)"),
            ));
        }
        let Some((Target::Cta(dr), doff)) =
            self.resolve(t, info, StateSpace::Shared, &dst, u64::from(cp))?
        else {
            return Ok(Flow::Next);
        };
        let mut src_at = None;
        let data = if src_size > 0 {
            match self.resolve(t, info, StateSpace::Global, &src, u64::from(src_size))? {
                Some((Target::Cta(sr), soff)) => src_at = Some((sr, soff, u64::from(src_size))),
                _ => return Ok(Flow::Next),
            }
            match self.load(t, info, StateSpace::Global, &src, src_size as u8)? {
                Some(v) => v,
                None => return Ok(Flow::Next),
            }
        } else {
            Value::Bits(0)
        };
        let v = if src_size < cp {
            Value::concat(&[
                (data, src_size as u8),
                (Value::Bits(0), (cp - src_size) as u8),
            ])
        } else {
            data
        };
        self.store(t, info, StateSpace::Shared, &dst, v, cp as u8)?;
        // Input-only tensors are never written: no in-flight source.
        let src_at = src_at.filter(|(r, _, _)| self.mem.shadows[*r as usize].is_some());
        let id = self.cta.asyncs.next;
        self.cta.asyncs.next += 1;
        let c = Copy {
            tid: t,
            instr: self.cur_instr,
            dst: (dr, doff, u64::from(cp)),
            src: src_at,
            wgmma: false,
            label: None,
            strong: None,
        };
        self.cta.asyncs.index(id, c.dst, true);
        if let Some(s) = c.src {
            self.cta.asyncs.index(id, s, true);
        }
        self.cta.asyncs.copies.insert(id, c);
        self.cta.asyncs.uncommitted[t as usize].push(id);
        Ok(Flow::Next)
    }

    /// One 16-byte chunk of a bulk copy global → shared: placed at issue
    /// (judged as a write of the destination and a read of the source, like
    /// `cp.async`) and kept in flight; returns the copy id (none when an
    /// address was out of bounds, already reported).
    pub(crate) fn bulk_chunk(
        &mut self,
        t: u32,
        info: &FuncInfo,
        dst: &ptxeq_ir::Address,
        src: &ptxeq_ir::Address,
    ) -> R<Option<u32>> {
        let Some((Target::Cta(dr), doff)) = self.resolve(t, info, StateSpace::Shared, dst, 16)?
        else {
            return Ok(None);
        };
        let src_at = match self.resolve(t, info, StateSpace::Global, src, 16)? {
            Some((Target::Cta(sr), soff)) => (sr, soff, 16u64),
            _ => return Ok(None),
        };
        let Some(v) = self.load(t, info, StateSpace::Global, src, 16)? else {
            return Ok(None);
        };
        // The bulk copy writes through the async proxy (`proxy.rs`).
        self.cta.proxy.async_store = true;
        let stored = self.store(t, info, StateSpace::Shared, dst, v, 16);
        self.cta.proxy.async_store = false;
        stored?;
        let src_at = Some(src_at).filter(|(r, _, _)| self.mem.shadows[*r as usize].is_some());
        let id = self.cta.asyncs.next;
        self.cta.asyncs.next += 1;
        let c = Copy {
            tid: t,
            instr: self.cur_instr,
            dst: (dr, doff, 16),
            src: src_at,
            wgmma: false,
            label: None,
            strong: None,
        };
        self.cta.asyncs.index(id, c.dst, true);
        if let Some(s) = c.src {
            self.cta.asyncs.index(id, s, true);
        }
        self.cta.asyncs.copies.insert(id, c);
        Ok(Some(id))
    }

    /// Registers an asynchronous copy already placed by thread `t` (its
    /// accesses judged at issue): its destination bytes, and its source
    /// bytes when some thread can write them, stay in flight until it
    /// completes. Returns the copy id.
    pub(crate) fn track_async_copy(
        &mut self,
        t: u32,
        dst: (u32, u64, u64),
        src: Option<(u32, u64, u64)>,
    ) -> u32 {
        let src = src.filter(|(r, _, _)| self.mem.shadows[*r as usize].is_some());
        let id = self.cta.asyncs.next;
        self.cta.asyncs.next += 1;
        let c = Copy {
            tid: t,
            instr: self.cur_instr,
            dst,
            src,
            wgmma: false,
            label: None,
            strong: None,
        };
        self.cta.asyncs.index(id, c.dst, true);
        if let Some(s) = c.src {
            self.cta.asyncs.index(id, s, true);
        }
        self.cta.asyncs.copies.insert(id, c);
        id
    }

    /// [`Engine::track_async_copy`] for an asynchronous operation that is
    /// not a copy: `label` says what it is and what completes it, for the
    /// race messages (`tmem.rs`).
    pub(crate) fn track_async_op(
        &mut self,
        t: u32,
        dst: (u32, u64, u64),
        src: Option<(u32, u64, u64)>,
        label: (&'static str, &'static str),
    ) -> u32 {
        let id = self.track_async_copy(t, dst, src);
        if let Some(c) = self.cta.asyncs.copies.get_mut(&id) {
            c.label = Some(label);
        }
        id
    }

    /// An asynchronous read of `(region, offset, length)` by the
    /// `wgmma.mma_async` at the current instruction, attributed to thread
    /// `t`: in flight until [`Engine::complete_copy_as`] (a write to the
    /// bytes meanwhile races). Returns its id.
    pub(crate) fn track_wgmma_read(&mut self, t: u32, src: (u32, u64, u64)) -> u32 {
        let id = self.cta.asyncs.next;
        self.cta.asyncs.next += 1;
        let c = Copy {
            tid: t,
            instr: self.cur_instr,
            dst: (src.0, src.1, 0),
            src: Some(src),
            wgmma: true,
            label: None,
            strong: None,
        };
        self.cta.asyncs.index(id, src, true);
        self.cta.asyncs.copies.insert(id, c);
        id
    }

    /// Marks in-flight copy `id` as a bulk reduction whose destination is a
    /// strong read-modify-write (update code `op`, operand fingerprint
    /// `operands`): recorded as such when it completes.
    pub(crate) fn mark_async_reduce(&mut self, id: u32, op: u8, operands: u64) {
        if let Some(c) = self.cta.asyncs.copies.get_mut(&id) {
            c.strong = Some((op, operands));
        }
    }

    /// The issuing thread and instruction of in-flight copy `id`, and its
    /// source when it still reads one.
    pub(crate) fn async_copy_info(&self, id: u32) -> Option<(u32, u32, Option<Span>)> {
        self.cta
            .asyncs
            .copies
            .get(&id)
            .map(|c| (c.tid, c.instr, c.src))
    }

    /// The source reads of copy `id` complete (`cp.async.bulk.wait_group.read`):
    /// recorded again at the issuing thread's clock and no longer in
    /// flight; its destination writes stay in flight.
    pub(crate) fn complete_copy_reads(&mut self, id: u32) {
        let Some(c) = self.cta.asyncs.copies.get(&id).cloned() else {
            return;
        };
        let Some(src) = c.src else {
            return;
        };
        // Complete a copy of the source side alone (an empty destination,
        // so the destination's index entries stay), then keep the rest.
        let only_src = Copy {
            dst: (src.0, src.1, 0),
            ..c.clone()
        };
        self.cta.asyncs.copies.insert(id, only_src);
        self.complete_copy_as(id, c.tid);
        self.cta.asyncs.copies.insert(id, Copy { src: None, ..c });
    }

    /// A copy completes: its accesses are recorded at the issuing thread's
    /// clock.
    pub(crate) fn complete_async_copy(&mut self, id: u32) {
        self.complete_copy(id);
    }

    /// `cp.async.commit_group`: the uncommitted copies form a group (an
    /// empty one when there are none, per PTX).
    pub(crate) fn cp_async_commit(&mut self, t: u32) -> R<Flow> {
        let g = std::mem::take(&mut self.cta.asyncs.uncommitted[t as usize]);
        self.cta.asyncs.groups[t as usize].push_back(g);
        Ok(Flow::Next)
    }

    /// `cp.async.wait_group N` (`n = Some(N)`) or `cp.async.wait_all`.
    pub(crate) fn cp_async_wait(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let keep = match &ins.instr {
            Instr::CpAsyncWaitGroup => {
                let Some(op) = ins.operands.first() else {
                    return Err(self.unsupported(
                        t,
                        "cp.async.wait_group without N",
                        String::new(),
                    ));
                };
                self.matrix_u32(t, info, op, "the wait_group count")? as usize
            }
            _ => {
                self.cp_async_commit(t)?;
                0
            }
        };
        while self.cta.asyncs.groups[t as usize].len() > keep {
            let Some(g) = self.cta.asyncs.groups[t as usize].pop_front() else {
                break;
            };
            for id in g {
                self.complete_copy(id);
            }
        }
        Ok(Flow::Next)
    }

    /// The copies thread `t` issued that have not completed.
    pub(crate) fn async_outstanding(&self, t: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.cta.asyncs.groups[t as usize]
            .iter()
            .flatten()
            .copied()
            .collect();
        v.extend(self.cta.asyncs.uncommitted[t as usize].iter().copied());
        v.retain(|id| self.cta.asyncs.copies.contains_key(id));
        v
    }

    /// A copy lands: it leaves the in-flight index and its accesses are
    /// recorded again at the issuing thread's current clock.
    fn complete_copy(&mut self, id: u32) {
        let Some(tid) = self.cta.asyncs.copies.get(&id).map(|c| c.tid) else {
            return;
        };
        self.complete_copy_as(id, tid);
    }

    /// A copy lands, its accesses stamped by clock slot `slot` (the
    /// issuing thread, or its async agent when an mbarrier phase completes
    /// it).
    pub(crate) fn complete_copy_as(&mut self, id: u32, slot: u32) {
        let Some(c) = self.cta.asyncs.copies.remove(&id) else {
            return;
        };
        self.cta.asyncs.index(id, c.dst, false);
        if let Some(s) = c.src {
            self.cta.asyncs.index(id, s, false);
        }
        let acc = Acc {
            tid: slot,
            cta: self.clocks.cta(),
            epoch: self.clocks.epoch(slot),
            instr: c.instr,
            ..Acc::default()
        };
        for (side, write) in [(Some(c.dst), true), (c.src, false)] {
            let Some((r, off, len)) = side.filter(|s| s.2 > 0) else {
                continue;
            };
            let Some(sh) = self.mem.shadows[r as usize].as_mut() else {
                continue;
            };
            let mut first = None;
            let kind = if write {
                Kind::PlainWrite
            } else {
                Kind::PlainRead
            };
            let rec = match (write, c.strong) {
                (true, Some((op, operands))) => Acc {
                    kind: Kind::StrongWrite,
                    rmw: true,
                    op,
                    operands,
                    ..acc
                },
                _ => Acc { kind, ..acc },
            };
            for u in sh.units(off as usize, len as usize) {
                // The copy's bytes were placed at issue: recorded again
                // here, its store leaves the content as it is.
                let k = sh.access(&self.clocks, u, rec, write);
                if first.is_none()
                    && let Some(k) = k
                {
                    first = Some(((u * sh.gran) as u64, k));
                }
            }
            if let Some((byte, k)) = first {
                let prev = AccessRef {
                    thread: self.thread_ref(k.prev.tid),
                    instr: unpack_instr(k.prev.instr),
                    kind: super::mem::access_kind(&k.prev),
                    cta: (k.prev.cta != self.clocks.cta()).then(|| self.cta_of(k.prev.cta)),
                };
                let copy = AccessRef {
                    thread: self.thread_ref(c.tid),
                    instr: unpack_instr(c.instr),
                    kind: if write {
                        AccessKind::Write
                    } else {
                        AccessKind::Read
                    },
                    cta: None,
                };
                let why = format!(
                    "the {} by {} at {} and the {} by {} at {} (in flight until its wait) are not ordered by any synchronisation",
                    prev.kind.word(),
                    prev.thread,
                    prev.instr,
                    match c.label {
                        Some((what, _)) => what,
                        None if c.wgmma => "wgmma.mma_async operand read",
                        None if c.strong.is_some() => "cp.reduce.async.bulk",
                        None => "cp.async",
                    },
                    copy.thread,
                    copy.instr
                );
                self.async_race(r, byte, prev, copy, why);
            }
        }
    }
}

fn pack(i: crate::finding::InstrRef) -> u32 {
    super::pack_instr(i.func, i.index)
}
