//! Memory instructions: address resolution, loads, stores and atomics,
//! with bounds, initialisation and race checks.

use ptxeq_ir::{AddrBase, Address, AtomMods, AtomOp, Operand, StateSpace};

use super::values::IntArg;
use super::{Engine, Halt, R, pack_instr, space_of, unpack_instr};
use crate::domain::{BinOp, Domain, Fmt};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};
use crate::funcinfo::FuncInfo;
use crate::int;
use crate::memory::{Region, Space, holds_same, load_value, store_value};
use crate::race::{Acc, Conflict};
use crate::value::Value;

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
            Target::Cta(r) => &self.regions[r as usize],
            Target::Private(p) => &self.threads[t as usize].private[p].region,
        }
    }

    fn location(&self, t: u32, target: Target, off: u64) -> MemLocation {
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
        let f = self.threads[t as usize].frames.last().ok_or(Halt)?.func as usize;
        let (sp, a) = match &addr.base {
            AddrBase::Symbol(ptxeq_ir::Symbol::Var(v)) => {
                if let Some(Some(r)) = self.var_region.get(f).and_then(|m| m.get(v.index())) {
                    let off = addr.offset;
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
                    let off = (self.param_offsets.get(p.index()).copied().unwrap_or(0) as i64)
                        .saturating_add(addr.offset);
                    return self.bounds(t, Target::Cta(self.param_region), off, width);
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
        // Look the address up.
        let found = if sp == Space::Local || sp == Space::Param {
            let th = &self.threads[t as usize];
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
                    let r = &self.regions[self.param_region as usize];
                    (r.base <= a && a < r.base + r.size.max(1))
                        .then_some(Target::Cta(self.param_region))
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
            let table = &self.lookup[k];
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
            .regions
            .iter()
            .chain(self.threads[t as usize].private.iter().map(|p| &p.region))
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

    /// Race check and footprint of an access of `width` bytes.
    fn track(&mut self, t: u32, target: Target, off: u64, width: u64, kind: AccessKind) {
        let Target::Cta(r) = target else {
            return;
        };
        let ri = r as usize;
        let instr = self.cur_instr;
        if self.asyncs.any() {
            self.async_check(t, r, off, width, kind);
        }
        if let Some(fp) = self.footprints[ri].as_mut() {
            fp.touch(off as usize, width as usize, kind, instr, t);
        }
        if self.shadows[ri].is_none() {
            return;
        }
        let acc = Acc {
            tid: t,
            epoch: self.clocks.epoch(t),
            instr,
            atomic: kind == AccessKind::Atomic,
        };
        let mut first: Option<(u64, Conflict)> = None;
        let wmma = self.wmma.cur_view.is_some();
        if wmma && t.is_multiple_of(32) {
            self.wmma.record(instr, r, off, width);
        }
        let Some(sh) = self.shadows[ri].as_mut() else {
            return;
        };
        for u in sh.units(off as usize, width as usize) {
            let byte = (u * sh.gran) as u64;
            let st = &self.wmma;
            let exempt = |a: &Acc| wmma && st.same_view(r, byte, a);
            let c = if kind == AccessKind::Read {
                sh.read_ex(&self.clocks, u, acc, exempt)
            } else {
                sh.write_ex(&self.clocks, u, acc, false, exempt)
            };
            if first.is_none()
                && let Some(c) = c
            {
                first = Some(((u * sh.gran) as u64, c));
            }
        }
        if let Some((b, c)) = first {
            self.race(t, target, b, c, kind);
        }
    }

    /// Like [`Self::track`] for a plain store, with the benign same-value
    /// judgement per byte.
    fn track_store(&mut self, t: u32, target: Target, off: u64, v: &Value<D::Val>, width: u8) {
        let Target::Cta(r) = target else {
            return;
        };
        let ri = r as usize;
        let instr = self.cur_instr;
        if self.asyncs.any() {
            self.async_check(t, r, off, u64::from(width), AccessKind::Write);
        }
        if let Some(fp) = self.footprints[ri].as_mut() {
            fp.touch(off as usize, width as usize, AccessKind::Write, instr, t);
        }
        if self.shadows[ri].is_none() {
            return;
        }
        let same = holds_same(&self.slots[ri], off as usize, v, width, &self.d);
        let acc = Acc {
            tid: t,
            epoch: self.clocks.epoch(t),
            instr,
            atomic: false,
        };
        let mut first = None;
        let wmma = self.wmma.cur_view.is_some();
        if wmma && t.is_multiple_of(32) {
            self.wmma.record(instr, r, off, u64::from(width));
        }
        if let Some(sh) = self.shadows[ri].as_mut() {
            for u in sh.units(off as usize, usize::from(width)) {
                let byte = (u * sh.gran) as u64;
                let st = &self.wmma;
                let exempt = |a: &Acc| wmma && st.same_view(r, byte, a);
                if let Some(c) = sh.write_ex(&self.clocks, u, acc, same, exempt)
                    && first.is_none()
                {
                    first = Some(((u * sh.gran) as u64, c));
                }
            }
        }
        if let Some((b, c)) = first {
            self.race(t, target, b, c, AccessKind::Write);
        }
    }

    fn race(&mut self, t: u32, target: Target, byte: u64, c: Conflict, kind: AccessKind) {
        let Target::Cta(r) = target else {
            return;
        };
        let (a, b) = (
            c.prev.instr.min(self.cur_instr),
            c.prev.instr.max(self.cur_instr),
        );
        if !self.reported.insert((r, a, b)) {
            return;
        }
        let loc = self.location(t, target, byte);
        let prev_kind = if c.prev.atomic {
            AccessKind::Atomic
        } else if c.prev_is_write {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let first = AccessRef {
            thread: self.thread_ref(c.prev.tid),
            instr: unpack_instr(c.prev.instr),
            kind: prev_kind,
            cta: None,
        };
        let second = AccessRef {
            thread: self.thread_ref(t),
            instr: unpack_instr(self.cur_instr),
            kind,
            cta: None,
        };
        let msg = format!(
            "data race on {loc}: {} by {} at {} and {} by {} at {} are not ordered by any synchronisation",
            first.kind.word(),
            first.thread,
            first.instr,
            second.kind.word(),
            second.thread,
            second.instr,
        );
        let mut f = Finding::new(FindingKind::Race, msg)
            .at(Some(second.thread), Some(second.instr))
            .with_location(loc);
        f.accesses = vec![first, second];
        self.report(f);
    }

    /// Reads `width` bytes at `off` of a resolved target (a CTA-wide region
    /// or thread `t`'s private one), without race tracking: the one read
    /// path shared by loads, guarded stores (the old value) and atomics.
    fn read_target(
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
                    &self.slots[ri],
                    &self.regions[ri],
                    off as usize,
                    width,
                    &mut self.d,
                    origin,
                )
            }
            Target::Private(p) => {
                let pr = &self.threads[t as usize].private[p];
                let region = pr.region.clone();
                load_value(&pr.slots, &region, off as usize, width, &mut self.d, origin)
            }
        }
    }

    /// Loads `width` bytes; `None` when the access was out of bounds.
    pub(crate) fn load(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        width: u8,
    ) -> R<Option<Value<D::Val>>> {
        let Some((target, off)) = self.resolve(t, info, space, addr, u64::from(width))? else {
            return Ok(None);
        };
        self.track(t, target, off, u64::from(width), AccessKind::Read);
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
                    == Some(ptxeq_spec::Role::Scratch)
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
        Ok(Some(v))
    }

    /// Stores `v` as `width` bytes (under a data guard: `guard ? v : old`).
    pub(crate) fn store(
        &mut self,
        t: u32,
        info: &FuncInfo,
        space: StateSpace,
        addr: &Address,
        v: Value<D::Val>,
        width: u8,
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
                self.merge(t, c, v, old)?
            }
            None => v,
        };
        if let Target::Cta(_) = target {
            self.layout_escape(t, &v, "stored to shared or global memory")?;
        }
        self.track_store(t, target, off, &v, width);
        match target {
            Target::Cta(r) => store_value(&mut self.slots[r as usize], off as usize, &v, width),
            Target::Private(p) => store_value(
                &mut self.threads[t as usize].private[p].slots,
                off as usize,
                &v,
                width,
            ),
        }
        Ok(())
    }

    /// Stores go nowhere read-only: input-only tensors (their reads are not
    /// race-tracked, see `Engine::new`), `.const` and kernel params.
    fn check_writable(&mut self, t: u32, target: Target) -> R<()> {
        let Target::Cta(r) = target else {
            return Ok(());
        };
        if let Some(ti) = self.regions[r as usize].tensor
            && self.input.tensors[ti as usize].role == ptxeq_spec::Role::Input
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
        let space = self.regions[r as usize].space;
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
        let order_dependent =
            matches!(m.op, AtomOp::Exch | AtomOp::Cas | AtomOp::Inc | AtomOp::Dec);
        if used || order_dependent {
            let why = if used {
                "its returned old value is used, so the result depends on the order of the atomics"
            } else {
                "exchange / compare-and-swap / wrapping increment results depend on the order of the atomics"
            };
            self.note(
                t,
                FindingKind::OrderDependentAtomic,
                format!("atom.{}: {why}", m.op),
                None,
            );
        }
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
        self.track(t, target, off, u64::from(width), AccessKind::Atomic);
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
                _ => Value::Undef,
            }
        };
        self.finish_atomic(t, info, dst, target, off, old, new, width)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_atomic(
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
        if let Target::Cta(_) = target {
            self.layout_escape(t, &new, "combined into memory by an atomic")?;
        }
        match target {
            Target::Cta(r) => store_value(&mut self.slots[r as usize], off as usize, &new, width),
            Target::Private(p) => store_value(
                &mut self.threads[t as usize].private[p].slots,
                off as usize,
                &new,
                width,
            ),
        }
        if let Some(d) = dst {
            self.write(t, info, d, old)?;
        }
        Ok(())
    }

    /// The packed id of the instruction at `pc` of the current frame.
    #[allow(dead_code)]
    pub(crate) fn instr_id(&self, t: u32, pc: u32) -> u32 {
        let f = self.threads[t as usize].frames.last().map_or(0, |f| f.func);
        pack_instr(f, pc)
    }
}
