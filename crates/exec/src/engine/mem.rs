//! Memory instructions: address resolution, loads, stores and atomics,
//! with bounds, initialisation and race checks.

use ptxeq_ir::{AddrBase, Address, AtomMods, AtomOp, MemSem, Operand, Scope, StateSpace};

use super::values::IntArg;
use super::{Engine, Halt, R, pack_instr, space_of, unpack_instr};
use crate::domain::{BinOp, Domain, Fmt};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, InstrRef, MemLocation};
use crate::funcinfo::FuncInfo;
use crate::int;
use crate::memory::{Region, Slot, Space, holds_same, load_value, store_value};
use crate::race::{Acc, Conflict, Kind, OP_COMMUTES, Rank};
use crate::value::Value;

/// The memory-model side of a load or store (`docs/semantics.md`,
/// "Memory model"): weak (plain) or strong, with a scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ordering {
    /// `.relaxed`, `.acquire`, `.release`, `.acq_rel`, `.sc` or `.mmio`.
    pub strong: bool,
    /// A `.cta` or `.cluster` scope.
    pub narrow: bool,
    /// The scope is `.cluster` (`race::Acc::cluster`).
    pub cluster: bool,
    /// A strong load whose destination is read.
    pub used: bool,
}

impl Ordering {
    /// The ordering of an `ld`/`st` with semantics `sem` and scope `scope`.
    /// `.volatile` is weak here: see `docs/semantics.md` (ptxeq judges
    /// it as CUDA C++ does, stricter than PTX's `relaxed.sys`).
    pub(crate) fn of(sem: Option<MemSem>, scope: Option<Scope>) -> Ordering {
        let strong = matches!(
            sem,
            Some(
                MemSem::Relaxed
                    | MemSem::Acquire
                    | MemSem::Release
                    | MemSem::AcqRel
                    | MemSem::Sc
                    | MemSem::Mmio
            )
        );
        Ordering {
            strong,
            narrow: strong && matches!(scope, Some(Scope::Cta | Scope::Cluster)),
            cluster: strong && scope == Some(Scope::Cluster),
            used: false,
        }
    }
}

/// The update code of an atomic operation on type `ty` (equal codes: the
/// same operation on the same type), with [`OP_COMMUTES`] for operations
/// that commute with themselves whatever their operands.
pub(crate) fn update_code(op: AtomOp, ty: ptxeq_ir::ScalarType) -> u8 {
    let ix = match op {
        AtomOp::Add => 1,
        AtomOp::Min => 2,
        AtomOp::Max => 3,
        AtomOp::And => 4,
        AtomOp::Or => 5,
        AtomOp::Xor => 6,
        AtomOp::Exch => 7,
        AtomOp::Cas => 8,
        AtomOp::Inc => 9,
        AtomOp::Dec => 10,
    };
    let size = match ty.size_bytes() {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => 3,
    };
    // Signed min/max are other operations than unsigned ones.
    let ix = if ty.is_signed() && matches!(op, AtomOp::Min | AtomOp::Max) {
        ix + 9
    } else {
        ix
    };
    let float = u8::from(Fmt::of(ty).is_some());
    let commutes = if matches!(
        op,
        AtomOp::Add | AtomOp::Min | AtomOp::Max | AtomOp::And | AtomOp::Or | AtomOp::Xor
    ) {
        OP_COMMUTES
    } else {
        0
    };
    ix | size << 4 | float << 6 | commutes
}

/// Reason of an unsupported branch on an atomic's returned value.
pub(crate) const REASON_ATOMIC_BRANCH: &str = "branch depends on an atomic's returned value";
/// Reason of an unsupported address computed from an atomic's result.
pub(crate) const REASON_ATOMIC_ADDRESS: &str = "address depends on an atomic's returned value";
/// Reason of an unsupported guard computed from an atomic's result.
pub(crate) const REASON_ATOMIC_GUARD: &str = "predicate depends on an atomic's returned value";
/// `Finding::reason` of an order dependence through a returned value.
pub(crate) const REASON_OD_USED: &str = "returned value used";
/// `Finding::reason` of an order dependence through non-commuting updates.
pub(crate) const REASON_OD_COMMUTE: &str = "updates do not commute";

/// An order-dependent finding through a returned value whose atomic's
/// value also steered control flow or an address (an unsupported
/// finding names it) says nothing about the outputs: the run stopped
/// there, and the verdict is that unsupported finding. Drops those.
pub(crate) fn drop_control_only_od(findings: &mut Vec<Finding>) {
    let steered: Vec<InstrRef> = findings
        .iter()
        .filter(|f| {
            f.kind == FindingKind::Unsupported
                && [
                    REASON_ATOMIC_BRANCH,
                    REASON_ATOMIC_ADDRESS,
                    REASON_ATOMIC_GUARD,
                ]
                .contains(&f.reason.as_str())
        })
        .flat_map(|f| f.accesses.iter().map(|a| a.instr))
        .collect();
    if steered.is_empty() {
        return;
    }
    findings.retain(|f| {
        !(f.kind == FindingKind::OrderDependent
            && f.reason == REASON_OD_USED
            && f.accesses.iter().any(|a| steered.contains(&a.instr)))
    });
}

/// Where an access lands.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Target {
    /// A CTA-wide region.
    Cta(u32),
    /// One of the thread's private regions.
    Private(usize),
}

impl<D: Domain> Engine<'_, D> {
    fn region_of(&self, t: u32, target: Target) -> &Region {
        match target {
            Target::Cta(r) => &self.mem.regions[r as usize],
            Target::Private(p) => &self.cta.threads[t as usize].private[p].region,
        }
    }

    pub(crate) fn location(&self, t: u32, target: Target, off: u64) -> MemLocation {
        let r = self.region_of(t, target);
        MemLocation {
            region: r.name.clone(),
            space: r.space.name().into(),
            byte_offset: off,
            element: (r.elem > 0).then(|| off / u64::from(r.elem)),
        }
    }

    /// Resolves `[addr]` of an instruction in state space `space` to a
    /// region and offset; `width` bytes must fit. Out-of-bounds accesses
    /// are reported (non-fatal) and give `None`.
    pub(crate) fn resolve(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        width: u64,
    ) -> R<Option<(Target, u64)>> {
        let f = self.cta.threads[t as usize].frames.last().ok_or(Halt)?.func as usize;
        let (sp, a) = match &addr.base {
            AddrBase::Symbol(ptxeq_ir::Symbol::Var(v)) => {
                if let Some(Some(r)) = self.mem.var_region.get(f).and_then(|m| m.get(v.index())) {
                    let off = addr.offset;
                    if self.unit.as_ref().is_some_and(|u| u.remote.is_some())
                        && self.mem.regions[*r as usize].space == Space::Shared
                    {
                        // The running CTA's own variable while another
                        // CTA's shared memory is swapped in.
                        let r = *r;
                        self.dsmem_address(t, space, 0)?;
                        return self.bounds(t, Target::Cta(r), off, width);
                    }
                    return self.bounds(t, Target::Cta(*r), off, width);
                }
                if let Some(p) = self.private_of_var(t, info, v.index()) {
                    return self.bounds(t, Target::Private(p), addr.offset, width);
                }
                return Err(self.unsupported(
                    t,
                    "access to an unallocated variable",
                    info.ir
                        .vars
                        .get(v.index())
                        .map(|v| v.name.clone())
                        .unwrap_or_default(),
                ));
            }
            AddrBase::Symbol(ptxeq_ir::Symbol::Param(p)) => {
                if f == 0 {
                    let off = (self.mem.param_offsets.get(p.index()).copied().unwrap_or(0) as i64)
                        .saturating_add(addr.offset);
                    return self.bounds(t, Target::Cta(self.mem.param_region), off, width);
                }
                match self.private_of_param(t, info, p.index()) {
                    Some(i) => return self.bounds(t, Target::Private(i), addr.offset, width),
                    None => {
                        return Err(self.unsupported(
                            t,
                            "memory access to a register parameter",
                            String::new(),
                        ));
                    }
                }
            }
            AddrBase::Symbol(ptxeq_ir::Symbol::Func(n)) => {
                return Err(self.unsupported(t, "memory access to a function address", n.clone()));
            }
            AddrBase::Imm(a) => (space, a.wrapping_add(addr.offset as u64)),
            AddrBase::Reg(r) => {
                let v = self.read(t, info, &Operand::Reg(*r), 64)?;
                match v {
                    Value::Bits(b) => (space, b.wrapping_add(addr.offset as u64)),
                    Value::Undef => return Err(self.uninit_register(t, "the address register")),
                    Value::Tainted(o) if self.atomic_origin(o).is_some() => {
                        let a = self.atomic_origin(o).unwrap_or(InstrRef::kernel(0));
                        if let Some(g) = self.grid.as_mut() {
                            g.halt_atomic = Some(o);
                        }
                        return Err(self.atomic_use_unsupported(
                            t,
                            REASON_ATOMIC_ADDRESS,
                            format!(
                                "the address is computed from the value returned by the atomic or strong load at {a}, which depends on the order of the accesses to that word"
                            ),
                            a,
                        ));
                    }
                    Value::Tainted(_) | Value::Data { .. } | Value::Bool(_) | Value::Pack(_) => {
                        let reason = match space_of(space) {
                            Some(Space::Shared) => "shared-memory address depends on tensor data",
                            Some(Space::Local) => "local-memory address depends on tensor data",
                            _ => "global-memory address depends on tensor data",
                        };
                        let reason = if space == StateSpace::Generic {
                            "address depends on tensor data"
                        } else {
                            reason
                        };
                        return Err(self.unsupported(t, reason, String::new()));
                    }
                }
            }
        };
        let (sp, a) = if sp == StateSpace::Generic {
            let s = Space::of_generic(a);
            (s, a.wrapping_sub(s.window()))
        } else {
            match space_of(sp) {
                Some(s) => (s, a),
                None => {
                    return Err(self.unsupported(t, "state space not supported", format!(".{sp}")));
                }
            }
        };
        // In a unit of several CTAs (a cluster), a shared address may
        // name another CTA's shared memory (`cluster.rs`).
        let a = if sp == Space::Shared && self.unit.is_some() {
            match self.dsmem_address(t, space, a)? {
                Some(a) => a,
                None => return Ok(None),
            }
        } else {
            a
        };
        // Look the address up.
        let found = if sp == Space::Local || sp == Space::Param {
            let th = &self.cta.threads[t as usize];
            let private = th
                .private
                .iter()
                .rposition(|p| {
                    p.region.space == sp
                        && p.region.base <= a
                        && a < p.region.base + p.region.size.max(1)
                })
                .map(Target::Private);
            private.or_else(|| {
                if sp == Space::Param {
                    let r = &self.mem.regions[self.mem.param_region as usize];
                    (r.base <= a && a < r.base + r.size.max(1))
                        .then_some(Target::Cta(self.mem.param_region))
                } else {
                    None
                }
            })
        } else {
            let k = match sp {
                Space::Global => 0,
                Space::Shared => 1,
                Space::Const => 2,
                _ => 3,
            };
            let table = &self.mem.lookup[k];
            let i = table.partition_point(|&(b, _, _)| b <= a);
            (i > 0)
                .then(|| table[i - 1])
                .filter(|&(b, e, _)| a < e.max(b + 1))
                .map(|(_, _, r)| Target::Cta(r))
        };
        match found {
            Some(target) => {
                let base = self.region_of(t, target).base;
                self.bounds(t, target, (a - base) as i64, width)
            }
            None => {
                let (msg, loc) = self.describe_wild(t, sp, a, width);
                self.note(t, FindingKind::OutOfBounds, msg, loc);
                Ok(None)
            }
        }
    }

    /// A message for an address in no region: names the nearest region.
    fn describe_wild(
        &self,
        t: u32,
        sp: Space,
        a: u64,
        width: u64,
    ) -> (String, Option<MemLocation>) {
        let candidates = self
            .mem
            .regions
            .iter()
            .chain(
                self.cta.threads[t as usize]
                    .private
                    .iter()
                    .map(|p| &p.region),
            )
            .filter(|r| r.space == sp);
        let mut best: Option<(u64, &Region, bool)> = None;
        for r in candidates {
            let (dist, after) = if a >= r.base + r.size {
                (a - (r.base + r.size), true)
            } else if a < r.base {
                (r.base - a, false)
            } else {
                (0, true)
            };
            if best.is_none_or(|(d, _, _)| dist < d) {
                best = Some((dist, r, after));
            }
        }
        match best {
            Some((d, r, true)) => {
                let off = a.wrapping_sub(r.base);
                let loc = MemLocation {
                    region: r.name.clone(),
                    space: sp.name().into(),
                    byte_offset: off,
                    element: (r.elem > 0).then(|| off / u64::from(r.elem)),
                };
                (
                    format!(
                        "{width}-byte {} access at byte offset {off} of `{}`, {d} bytes past its end ({} bytes): out of bounds",
                        sp.name(),
                        r.name,
                        r.size
                    ),
                    Some(loc),
                )
            }
            Some((d, r, false)) => (
                format!(
                    "{width}-byte {} access {d} bytes before the start of `{}`: out of bounds",
                    sp.name(),
                    r.name
                ),
                None,
            ),
            None => (
                format!(
                    "{width}-byte {} access at address {a:#x}, which is in no {} region: out of bounds",
                    sp.name(),
                    sp.name()
                ),
                None,
            ),
        }
    }

    fn bounds(&mut self, t: u32, target: Target, off: i64, width: u64) -> R<Option<(Target, u64)>> {
        let r = self.region_of(t, target);
        let size = r.size;
        if off < 0 || (off as u64).checked_add(width).is_none_or(|e| e > size) {
            let name = r.name.clone();
            let space = r.space.name();
            let loc = self.location(t, target, off.max(0) as u64);
            let msg = if off < 0 {
                format!(
                    "{width}-byte {space} access {} bytes before the start of `{name}`: out of bounds",
                    -off
                )
            } else {
                format!(
                    "{width}-byte {space} access at byte offset {off} of `{name}`, which has {size} bytes: out of bounds"
                )
            };
            self.note(t, FindingKind::OutOfBounds, msg, Some(loc));
            return Ok(None);
        }
        Ok(Some((target, off as u64)))
    }

    /// Race check and footprint of an access of `width` bytes: `a` says
    /// how it touches memory (its thread, epoch and instruction are filled
    /// in here); `stored` is the value of a plain store (benign same-value
    /// stores are judged per unit against the current content).
    pub(crate) fn track(
        &mut self,
        t: u32,
        target: Target,
        off: u64,
        width: u64,
        a: Acc,
        stored: Option<&Value<D::Val>>,
    ) {
        let Target::Cta(r) = target else {
            return;
        };
        let ri = r as usize;
        let instr = self.cur_instr;
        let kind = access_kind(&a);
        if self.cta.asyncs.any() {
            self.async_check(t, r, off, width, kind);
        }
        if self.cta.mbars.any() || self.unit.as_ref().is_some_and(|u| u.remote.is_some()) {
            self.mbar_access(t, r, off, width);
        }
        if self.cta.proxy.on
            && kind != AccessKind::Read
            && self.mem.regions[ri].space == crate::memory::Space::Shared
        {
            self.proxy_note_write(t, r, off, width);
        }
        if let Some(fp) = self.mem.footprints[ri].as_mut() {
            fp.touch(off as usize, width as usize, kind, instr, t);
        }
        if self.mem.shadows[ri].is_none() {
            return;
        }
        // The new content of a plain store, to compare per unit (all units
        // at once when the whole store leaves the content as it is).
        let all_same = stored.is_some_and(|v| {
            holds_same(&self.mem.slots[ri], off as usize, v, width as u8, &self.d)
        });
        let new: Option<crate::memory::Slots<D::Val>> = stored.filter(|_| !all_same).map(|v| {
            let mut tmp = crate::memory::Slots::new(width as usize, Slot::Unwritten);
            store_value(&mut tmp, 0, v, width as u8);
            tmp
        });
        // A tcgen05 operation's Tensor Memory access is stamped by the
        // thread's tcgen05 agent (`tmem.rs`), everything else by the thread.
        let slot = self.cta.tmem.stamp.unwrap_or(t);
        let acc = Acc {
            tid: slot,
            cta: self.clocks.cta(),
            epoch: self.clocks.epoch(slot),
            instr,
            ..a
        };
        if let Some(g) = self.grid.as_mut()
            && self.mem.regions[ri].space == Space::Global
        {
            let v = stored.map_or(u64::from(a.op) << 32 | a.operands & 0xffff_ffff, |v| {
                use std::hash::{Hash, Hasher};
                let mut h = rustc_hash::FxHasher::default();
                v.hash(&mut h);
                h.finish()
            });
            g.mix_effect([u64::from(r), off, width << 8 | kind as u64, v]);
        }
        let mut first: Option<(u64, Conflict)> = None;
        let wmma = self.cta.wmma.cur_view.is_some();
        if wmma && t.is_multiple_of(32) {
            self.cta.wmma.record(instr, r, off, width);
        }
        let Some(sh) = self.mem.shadows[ri].as_mut() else {
            return;
        };
        let gran = sh.gran;
        // A tcgen05.mma's accumulator at issue: the thread's earlier MMAs,
        // completed by its async agent, are pipelined before it.
        let pipelined = self.cta.tmem.pipelined.map(|(_, agent)| agent);
        for u in sh.units(off as usize, width as usize) {
            let same = all_same
                || new.as_ref().is_some_and(|n| {
                    let (lo, hi) = (u * sh.gran, (u + 1) * sh.gran);
                    let cur = &self.mem.slots[ri];
                    (lo..hi).all(|b| {
                        let k = b.wrapping_sub(off as usize);
                        k < n.len() && same_slot(&n[k], &cur[b], &self.d)
                    })
                });
            let byte = (u * gran) as u64;
            let st = &self.cta.wmma;
            let exempt = |e: &Acc| (wmma && st.same_view(r, byte, e)) || pipelined == Some(e.tid);
            if let Some(c) = sh.access_ex(&self.clocks, u, acc, same, exempt)
                && first.is_none_or(|(_, f)| c.rank > f.rank)
            {
                first = Some(((u * gran) as u64, c));
            }
        }
        if let Some((b, c)) = first {
            self.race(t, target, b, c, &acc);
        }
    }

    /// Reports a conflict found by the shadow: a data race or an order
    /// dependence between strong accesses.
    fn race(&mut self, t: u32, target: Target, byte: u64, c: Conflict, cur: &Acc) {
        let kind = access_kind(cur);
        let Target::Cta(r) = target else {
            return;
        };
        let (a, b) = (
            c.prev.instr.min(self.cur_instr),
            c.prev.instr.max(self.cur_instr),
        );
        if !self.log.first_report((r, a, b)) {
            return;
        }
        let loc = self.location(t, target, byte);
        let other_cta = c.prev.cta != self.clocks.cta();
        let first = AccessRef {
            thread: self.thread_ref(c.prev.tid),
            instr: unpack_instr(c.prev.instr),
            kind: access_kind(&c.prev),
            cta: other_cta.then(|| self.cta_of(c.prev.cta)),
        };
        let second = AccessRef {
            thread: self.thread_ref(t),
            instr: unpack_instr(self.cur_instr),
            kind,
            cta: other_cta.then_some(self.cta.id),
        };
        let who = |a: &AccessRef| match a.cta {
            Some([x, y, z]) => format!("{} of CTA ({x},{y},{z})", a.thread),
            None => a.thread.to_string(),
        };
        let mut reason = "";
        let (fk, msg) = if c.rank == Rank::Race {
            (
                FindingKind::Race,
                format!(
                    "data race on {loc}: {} by {} at {} and {} by {} at {} are not ordered by any synchronisation{}",
                    first.kind.word(),
                    who(&first),
                    first.instr,
                    second.kind.word(),
                    who(&second),
                    second.instr,
                    race_why(&c.prev, cur),
                ) + &self.tmem_race_hint(r),
            )
        } else {
            let why = if c.prev.used || cur.used {
                reason = REASON_OD_USED;
                "a returned value that is used depends on which runs first"
            } else {
                reason = REASON_OD_COMMUTE;
                "their updates do not commute, so the final value depends on which runs first"
            };
            (
                FindingKind::OrderDependent,
                format!(
                    "order-dependent result on {loc}: {} by {} at {} and {} by {} at {} are not ordered by any synchronisation and {why}",
                    first.kind.word(),
                    who(&first),
                    first.instr,
                    second.kind.word(),
                    who(&second),
                    second.instr,
                ),
            )
        };
        let mut f = Finding::new(fk, msg)
            .at(Some(second.thread), Some(second.instr))
            .with_location(loc)
            .with_reason(reason);
        f.accesses = vec![first, second];
        self.report(f);
    }

    /// Reads `width` bytes at `off` of a resolved target (a CTA-wide region
    /// or thread `t`'s private one), without race tracking: the one read
    /// path shared by loads, guarded stores (the old value) and atomics.
    pub(crate) fn read_target(
        &mut self,
        t: u32,
        target: Target,
        off: u64,
        width: u8,
    ) -> (Value<D::Val>, crate::memory::LoadInfo) {
        let origin = self.cur_instr;
        match target {
            Target::Cta(r) => {
                let ri = r as usize;
                load_value(
                    &self.mem.slots[ri],
                    &self.mem.regions[ri],
                    off as usize,
                    width,
                    &mut self.d,
                    origin,
                )
            }
            Target::Private(p) => {
                let pr = &self.cta.threads[t as usize].private[p];
                let region = pr.region.clone();
                load_value(&pr.slots, &region, off as usize, width, &mut self.d, origin)
            }
        }
    }

    /// Loads `width` bytes (a plain load); `None` when the access was out
    /// of bounds.
    pub(crate) fn load(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        width: u8,
    ) -> R<Option<Value<D::Val>>> {
        self.load_with(t, info, space, addr, width, Ordering::default())
    }

    /// Loads `width` bytes with ordering `ord` (`ld.relaxed` …).
    pub(crate) fn load_with(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        width: u8,
        ord: Ordering,
    ) -> R<Option<Value<D::Val>>> {
        let Some((target, off)) = self.resolve(t, info, space, addr, u64::from(width))? else {
            return Ok(None);
        };
        self.cov_access(t, target, off, width, AccessKind::Read, None);
        let a = Acc {
            kind: if ord.strong {
                Kind::StrongRead
            } else {
                Kind::PlainRead
            },
            used: ord.strong && ord.used,
            narrow: ord.narrow,
            cluster: ord.cluster,
            ..Acc::default()
        };
        self.track(t, target, off, u64::from(width), a, None);
        let (v, li) = self.read_target(t, target, off, width);
        if li.unused_param {
            return Err(self.unsupported(
                t,
                "read of a parameter bound to `_`",
                "the spec marks this kernel parameter unused, but the kernel reads it".into(),
            ));
        }
        if li.uninit {
            let loc = self.location(t, target, off);
            let region = self.region_of(t, target);
            let scratch = region.tensor.is_some_and(|k| {
                self.input.tensors.get(k as usize).map(|i| i.role)
                    == Some(crate::input::Role::Scratch)
            });
            let what = match region.space {
                Space::Global if scratch => {
                    "scratch-tensor memory that no thread has written yet (scratch starts \
                     uninitialised; give it `values` if the host initialises it)"
                }
                Space::Global => "output-tensor memory that no thread has written yet",
                Space::Shared => "shared memory that was never written",
                Space::Local => "local memory that was never written",
                _ => "memory that was never written",
            };
            self.note(
                t,
                FindingKind::Uninitialised,
                format!("{width}-byte read of {loc}: {what}"),
                Some(loc),
            );
        }
        // The value of a strong load of memory other threads can write
        // depends on the order of the accesses, like an atomic's result:
        // an integer is kept opaque (judged where it is used).
        let v = match (&v, target) {
            (Value::Bits(_), Target::Cta(_)) if ord.strong => Value::Tainted(self.cur_instr),
            _ => v,
        };
        Ok(Some(v))
    }

    /// Stores `v` as `width` bytes (a plain store; under a data guard:
    /// `guard ? v : old`).
    pub(crate) fn store(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        v: Value<D::Val>,
        width: u8,
    ) -> R<()> {
        self.store_with(t, info, space, addr, v, width, Ordering::default())
    }

    /// Stores with ordering `ord` (`st.relaxed` …: a strong store is an
    /// exchange whose result is unused).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store_with(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        v: Value<D::Val>,
        width: u8,
        ord: Ordering,
    ) -> R<()> {
        let Some((target, off)) = self.resolve(t, info, space, addr, u64::from(width))? else {
            return Ok(());
        };
        self.check_writable(t, target)?;
        let v = match self.guard {
            Some(c) => {
                let (old, li) = self.read_target(t, target, off, width);
                if li.uninit {
                    let loc = self.location(t, target, off);
                    self.note(
                        t,
                        FindingKind::Uninitialised,
                        format!("store guarded by a tensor-data predicate into {loc}, which holds no value to keep when the predicate is false"),
                        Some(loc),
                    );
                }
                self.merge(t, c, v, old, u32::from(width) * 8)?
            }
            None => v,
        };
        self.cov_access(t, target, off, width, AccessKind::Write, Some(&v));
        if let Target::Cta(_) = target {
            self.layout_escape(t, &v, "stored to shared or global memory")?;
        }
        if ord.strong {
            let ty = match width {
                1 => ptxeq_ir::ScalarType::B8,
                2 => ptxeq_ir::ScalarType::B16,
                4 => ptxeq_ir::ScalarType::B32,
                _ => ptxeq_ir::ScalarType::B64,
            };
            let a = Acc {
                kind: Kind::StrongWrite,
                narrow: ord.narrow,
                cluster: ord.cluster,
                op: update_code(AtomOp::Exch, ty),
                operands: self.fingerprint(t, &[&v]),
                ..Acc::default()
            };
            self.track(t, target, off, u64::from(width), a, None);
        } else {
            let a = Acc {
                kind: Kind::PlainWrite,
                ..Acc::default()
            };
            self.track(t, target, off, u64::from(width), a, Some(&v));
        }
        if let Target::Cta(r) = target {
            self.note_writer(t, r, off, width);
        }
        match target {
            Target::Cta(r) => store_value(&mut self.mem.slots[r as usize], off as usize, &v, width),
            Target::Private(p) => store_value(
                &mut self.cta.threads[t as usize].private[p].slots,
                off as usize,
                &v,
                width,
            ),
        }
        Ok(())
    }

    /// Records an access in the coverage fingerprint, when coverage is on.
    #[inline]
    fn cov_access(
        &mut self,
        t: u32,
        target: Target,
        off: u64,
        width: u8,
        kind: AccessKind,
        stored: Option<&Value<D::Val>>,
    ) {
        if let Some(c) = self.cov.as_deref_mut() {
            let place = match target {
                Target::Cta(r) => (0u8, r as usize),
                Target::Private(p) => (1u8, p),
            };
            c.access(t, (self.cur_instr, place, off, width, kind, stored));
        }
    }

    /// Stores go nowhere read-only: input-only tensors (their reads are not
    /// race-tracked, see `Engine::new`), `.const` and kernel params.
    pub(crate) fn check_writable(&mut self, t: u32, target: Target) -> R<()> {
        let Target::Cta(r) = target else {
            return Ok(());
        };
        if let Some(ti) = self.mem.regions[r as usize].tensor
            && self.input.tensors[ti as usize].role == crate::input::Role::Input
        {
            let name = self.input.tensors[ti as usize].name.clone();
            return Err(self.unsupported(
                t,
                "store to an input-only tensor",
                format!(
                    "the kernel writes tensor `{name}`, which the spec declares as an input (declare it inout)"
                ),
            ));
        }
        let space = self.mem.regions[r as usize].space;
        if matches!(space, Space::Const | Space::Param) {
            return Err(self.unsupported(
                t,
                "store to read-only memory",
                format!("a store into .{} space", space.name()),
            ));
        }
        Ok(())
    }

    /// `atom` / `red`.
    pub(crate) fn atomic(
        &mut self,
        t: u32,
        info: &FuncInfo,
        pc: u32,
        m: &AtomMods,
        ops: &[Operand],
        is_red: bool,
    ) -> R<()> {
        if m.vector.is_some() {
            return Err(self.unsupported(t, "vector atomics not supported", String::new()));
        }
        let (dst, addr, b, c) = if is_red {
            (None, ops.first(), ops.get(1), None)
        } else {
            (ops.first(), ops.get(1), ops.get(2), ops.get(3))
        };
        let Some(Operand::Addr(addr)) = addr else {
            return Err(self.unsupported(t, "atomic without an address", String::new()));
        };
        let Some(b) = b else {
            return Err(self.unsupported(t, "atomic without an operand", String::new()));
        };
        let used = !is_red && !info.dead_dest.get(pc as usize).copied().unwrap_or(false);
        let width = m.ty.size_bytes() as u8;
        let Some((target, off)) = self.resolve(t, info, m.space, addr, u64::from(width))? else {
            return Ok(());
        };
        if self.guard.is_some() {
            return Err(self.unsupported(
                t,
                "atomic guarded by a tensor-data predicate",
                String::new(),
            ));
        }
        self.check_writable(t, target)?;
        // The update and its operands decide whether two unordered atomics
        // commute (race.rs); read them before the memory changes.
        let mut operand_vals = Vec::with_capacity(2);
        for o in [Some(b), c].into_iter().flatten() {
            operand_vals.push(self.read(t, info, o, m.ty.bit_width())?);
        }
        // The ticket word of a grid-level exploration: its returned value
        // is explored (crate::grid), not order-dependent.
        let ticket = matches!(target, Target::Cta(r) if self.is_ticket_word(r, off));
        let a = Acc {
            kind: Kind::StrongWrite,
            rmw: true,
            used: used && !ticket,
            narrow: matches!(m.scope, Some(Scope::Cta | Scope::Cluster)),
            cluster: m.scope == Some(Scope::Cluster),
            op: update_code(m.op, m.ty),
            operands: self.fingerprint(t, &operand_vals.iter().collect::<Vec<_>>()),
            ..Acc::default()
        };
        self.track(t, target, off, u64::from(width), a, None);
        let (old, li) = self.read_target(t, target, off, width);
        if li.uninit {
            let loc = self.location(t, target, off);
            self.note(
                t,
                FindingKind::Uninitialised,
                format!("atomic update of {loc}, which was never written"),
                Some(loc),
            );
        }
        if ticket {
            let operand = match operand_vals.first() {
                Some(Value::Bits(b)) => Some(*b),
                _ => None,
            };
            self.ticket_rmw(t, m.op, m.sem, m.scope, &old, operand)?;
        }
        self.keep_result = ticket;
        let wbits = m.ty.bit_width();
        let new = if let Some(fmt) = Fmt::of(m.ty) {
            let op = match m.op {
                AtomOp::Add => BinOp::Add,
                AtomOp::Min => BinOp::Min,
                AtomOp::Max => BinOp::Max,
                AtomOp::Exch => {
                    let v = self.read(t, info, b, wbits)?;
                    self.finish_atomic(t, info, dst, target, off, old, v, width)?;
                    return Ok(());
                }
                _ => {
                    return Err(self.unsupported(
                        t,
                        "float atomic operation not supported",
                        format!("atom.{}", m.op),
                    ));
                }
            };
            let x = self.as_real(t, &old, fmt)?;
            let y = self.read_real(t, info, b, fmt)?;
            match (x, y) {
                (Some(x), Some(y)) => Value::data(self.d.binary(op, x, y), fmt),
                _ => Value::Undef,
            }
        } else {
            let signed = m.ty.is_signed();
            let x = self.int_of(t, &old, wbits)?;
            let y = self.read_int(t, info, b, wbits)?;
            let z = match c {
                Some(c) => self.read_int(t, info, c, wbits)?,
                None => IntArg::Known(0),
            };
            match (x, y, z) {
                (IntArg::Known(x), IntArg::Known(y), IntArg::Known(z)) => Value::Bits(match m.op {
                    AtomOp::Add => int::add(x, y, wbits),
                    AtomOp::Min => int::min(x, y, wbits, signed),
                    AtomOp::Max => int::max(x, y, wbits, signed),
                    AtomOp::And => x & y,
                    AtomOp::Or => x | y,
                    AtomOp::Xor => x ^ y,
                    AtomOp::Exch => y,
                    AtomOp::Cas => {
                        if x == y {
                            z
                        } else {
                            x
                        }
                    }
                    AtomOp::Inc => {
                        if x >= y {
                            0
                        } else {
                            int::add(x, 1, wbits)
                        }
                    }
                    AtomOp::Dec => {
                        if x == 0 || x > y {
                            y
                        } else {
                            int::sub(x, 1, wbits)
                        }
                    }
                }),
                (IntArg::Tainted(o), _, _)
                | (_, IntArg::Tainted(o), _)
                | (_, _, IntArg::Tainted(o)) => Value::Tainted(o),
                // A compare-and-swap of known values storing data.
                (IntArg::Known(x), IntArg::Known(y), z @ IntArg::Data(_)) => {
                    if m.op == AtomOp::Cas && x == y {
                        self.int_result(t, z, wbits)?
                    } else {
                        Value::Bits(x)
                    }
                }
                (x, y, _) if [x, y].iter().any(|a| matches!(a, IntArg::Data(_))) => {
                    // Integer data: the commutative updates in the domain
                    // (`add` is the ring sum, so any order of the atomics
                    // gives the same polynomial).
                    use crate::domain::IntOp;
                    let o = match m.op {
                        AtomOp::Add => IntOp::Add,
                        AtomOp::Min => IntOp::Min { signed },
                        AtomOp::Max => IntOp::Max { signed },
                        AtomOp::And => IntOp::And,
                        AtomOp::Or => IntOp::Or,
                        AtomOp::Xor => IntOp::Xor,
                        AtomOp::Exch => {
                            let v = self.read(t, info, b, wbits)?;
                            self.finish_atomic(t, info, dst, target, off, old, v, width)?;
                            return Ok(());
                        }
                        // inc/dec/cas on integer data: not a ring
                        // operation; the new content is an opaque integer
                        // that depends on tensor data (as without integer
                        // data: any branch, address or output made of it
                        // is unsupported where it is used).
                        _ => {
                            self.finish_atomic(
                                t,
                                info,
                                dst,
                                target,
                                off,
                                old,
                                Value::Tainted(self.cur_instr),
                                width,
                            )?;
                            return Ok(());
                        }
                    };
                    let r = self.int_data_op(t, o, wbits, &[(x, wbits), (y, wbits)])?;
                    self.int_result(t, r, wbits)?
                }
                _ => Value::Undef,
            }
        };
        self.finish_atomic(t, info, dst, target, off, old, new, width)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish_atomic(
        &mut self,
        t: u32,
        info: &FuncInfo,
        dst: Option<&Operand>,
        target: Target,
        off: u64,
        old: Value<D::Val>,
        new: Value<D::Val>,
        width: u8,
    ) -> R<()> {
        self.cov_access(t, target, off, width, AccessKind::Atomic, Some(&new));
        if let Target::Cta(_) = target {
            self.layout_escape(t, &new, "combined into memory by an atomic")?;
        }
        if let Target::Cta(r) = target {
            self.note_writer(t, r, off, width);
        }
        match target {
            Target::Cta(r) => {
                store_value(&mut self.mem.slots[r as usize], off as usize, &new, width)
            }
            Target::Private(p) => store_value(
                &mut self.cta.threads[t as usize].private[p].slots,
                off as usize,
                &new,
                width,
            ),
        }
        if let Some(d) = dst {
            // The returned value of an atomic on memory other threads can
            // update depends on the order of the atomics: an integer is
            // kept opaque (a branch or address computed from it is
            // unsupported, docs/semantics.md); a real value is a value
            // like any other (it can never steer control flow).
            let keep = std::mem::take(&mut self.keep_result);
            let old = match (&old, target) {
                (Value::Bits(_) | Value::Tainted(_), Target::Cta(r)) if !keep => {
                    if self.mem.regions[r as usize].space == Space::Global
                        && let Some(g) = self.grid.as_mut()
                    {
                        g.note_atomic(self.cur_instr, r, off, width);
                    }
                    Value::Tainted(self.cur_instr)
                }
                _ => old,
            };
            self.write(t, info, d, old)?;
        }
        Ok(())
    }

    /// An unsupported use of atomic `a`'s returned value; the finding names
    /// the atomic as its access.
    pub(crate) fn atomic_use_unsupported(
        &mut self,
        t: u32,
        reason: &str,
        detail: String,
        a: InstrRef,
    ) -> super::Halt {
        let n = self.log.len();
        let h = self.unsupported(t, reason, detail);
        let thread = self.thread_ref(t);
        if let Some(f) = self.log.get_mut(n) {
            f.accesses = vec![AccessRef {
                thread,
                instr: a,
                kind: AccessKind::Atomic,
                cta: None,
            }];
        }
        h
    }

    /// The atomic that produced a tainted integer with origin `o`, if an
    /// atomic did (not a tensor-data load).
    pub(crate) fn atomic_origin(&self, o: u32) -> Option<InstrRef> {
        let i = unpack_instr(o);
        let f = self.funcs.get(i.func as usize)?;
        match &f.ir.instrs.get(i.index as usize)?.instr {
            ptxeq_ir::Instr::Atom(_) => Some(i),
            ptxeq_ir::Instr::Ld(m) if Ordering::of(m.sem, m.scope).strong => Some(i),
            _ => None,
        }
    }

    /// A fingerprint of operand values for comparing updates: equal for
    /// equal concrete bits or equal data values, unique per access for
    /// anything unknown (tensor-data integers, undefined values).
    pub(crate) fn fingerprint(&self, t: u32, vals: &[&Value<D::Val>]) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        for v in vals {
            match v {
                Value::Bits(b) => (1u8, *b).hash(&mut h),
                Value::Data { v, fmt, lo, len } => (2u8, v, *fmt as u8, *lo, *len).hash(&mut h),
                _ => (
                    3u8,
                    self.cur_instr,
                    t,
                    self.clocks.cta(),
                    self.clocks.epoch(t),
                )
                    .hash(&mut h),
            }
        }
        h.finish()
    }

    /// The packed id of the instruction at `pc` of the current frame.
    #[allow(dead_code)]
    pub(crate) fn instr_id(&self, t: u32, pc: u32) -> u32 {
        let f = self.cta.threads[t as usize]
            .frames
            .last()
            .map_or(0, |f| f.func);
        pack_instr(f, pc)
    }
}

/// How an access is named in reports.
pub(crate) fn access_kind(a: &Acc) -> AccessKind {
    match a.kind {
        Kind::PlainRead => AccessKind::Read,
        Kind::PlainWrite => AccessKind::Write,
        Kind::StrongRead => AccessKind::StrongRead,
        Kind::StrongWrite if a.rmw => AccessKind::Atomic,
        Kind::StrongWrite => AccessKind::StrongWrite,
    }
}

/// Why a race involving a strong access is one (empty for two plain ones).
fn race_why(a: &Acc, b: &Acc) -> String {
    match (a.kind.is_strong(), b.kind.is_strong()) {
        (false, false) => String::new(),
        (true, true) => " (a .cta-scoped strong access is not morally strong with one of another CTA, nor a .cluster-scoped one with one of another cluster, so the two are not exempt from racing)".into(),
        _ => " (only two strong accesses of a common scope are exempt from racing; a plain access and an atomic or strong one are not)".into(),
    }
}

/// Whether two memory slots certainly hold the same byte.
fn same_slot<D: Domain>(a: &Slot<D::Val>, b: &Slot<D::Val>, d: &D) -> bool {
    match (a, b) {
        (
            Slot::Data {
                v: x,
                fmt: f,
                idx: i,
            },
            Slot::Data {
                v: y,
                fmt: g,
                idx: j,
            },
        ) => f == g && i == j && d.same_value(*x, *y),
        (Slot::Byte(x), Slot::Byte(y)) => x == y,
        _ => false,
    }
}
