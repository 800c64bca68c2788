//! Operand reads and writes, and the conversions between register
//! [`Value`]s and what an instruction needs: integers, reals, predicates.

use ptxeq_ir::{Imm, Operand, SpecialReg};

use super::{Engine, Halt, R};
use crate::domain::{Domain, Fmt, IntOp};
use crate::finding::FindingKind;
use crate::funcinfo::FuncInfo;
use crate::memory::{FUNC_WINDOW, Space};
use crate::value::{Value, mask_bits};

/// What an unrecognised bit manipulation of a real value usually is, and
/// what to do about it (`passes/idioms` recognises the known expansions).
pub(crate) const LIBM_HINT: &str = "this looks like an inlined libm routine ptxeq does not \
     recognise; compile with -use_fast_math or report it";

/// An integer operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntArg<V> {
    Known(u64),
    Undef,
    /// Depends on tensor data in a way the domain does not model (origin
    /// instruction).
    Tainted(u32),
    /// Integer data of the domain, of the width it was read at.
    Data(V),
}

/// Whether a value holds integer data (whole, a slice, or in a pack).
pub(crate) fn has_int_data<V: Copy + Eq>(v: &Value<V>) -> bool {
    match v {
        Value::Data { fmt, .. } => fmt.is_int(),
        Value::Pack(parts) => parts
            .iter()
            .any(|p| matches!(p.val, Value::Data { fmt, .. } if fmt.is_int())),
        _ => false,
    }
}

/// A predicate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PredArg<V> {
    Known(bool),
    Data(V),
    Tainted(u32),
    Undef,
}

impl<D: Domain> Engine<'_, D> {
    #[inline]
    pub(crate) fn slot(info: &FuncInfo, r: ptxeq_ir::RegId) -> usize {
        info.reg_slot.get(r.index()).copied().unwrap_or(0) as usize
    }

    /// Reads an operand as a raw value; immediates are masked to `w` bits.
    #[inline]
    pub(crate) fn read(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        w: u32,
    ) -> R<Value<D::Val>> {
        if let Operand::Reg(r) = op {
            let s = Self::slot(info, *r);
            return match self.cta.threads[t as usize].frames.last() {
                Some(fr) => {
                    if let Some(c) = self.cov.as_deref_mut() {
                        c.read_from(fr.prov.get(s));
                    }
                    Ok(fr.regs.get(s).cloned().unwrap_or(Value::Undef))
                }
                None => Err(Halt),
            };
        }
        self.read_other(t, info, op, w)
    }

    fn read_other(&mut self, t: u32, info: &FuncInfo, op: &Operand, w: u32) -> R<Value<D::Val>> {
        match op {
            Operand::Reg(r) => {
                let s = Self::slot(info, *r);
                let fr = self.cta.threads[t as usize].frames.last().ok_or(Halt)?;
                if let Some(c) = self.cov.as_deref_mut() {
                    c.read_from(fr.prov.get(s));
                }
                Ok(fr.regs.get(s).cloned().unwrap_or(Value::Undef))
            }
            Operand::RegLane { reg, lane } => {
                let s = Self::slot(info, *reg) + usize::from(*lane);
                let fr = self.cta.threads[t as usize].frames.last().ok_or(Halt)?;
                if let Some(c) = self.cov.as_deref_mut() {
                    c.read_from(fr.prov.get(s));
                }
                Ok(fr.regs.get(s).cloned().unwrap_or(Value::Undef))
            }
            Operand::Imm(Imm::Int(i)) => Ok(Value::Bits(mask_bits(*i as u64, w))),
            Operand::Imm(Imm::F32Bits(b)) => Ok(Value::Bits(u64::from(*b))),
            Operand::Imm(Imm::F64Bits(b)) => Ok(Value::Bits(*b)),
            // Timers read only for the back-off of a recognised mbarrier
            // polling loop (whose timer-dependent path the engine never
            // executes, `spin.rs`), or whose value nothing observes
            // (`spin::timer_dead`): an undefined value. Any other use
            // stays unsupported (`special`).
            Operand::Special(
                SpecialReg::Clock
                | SpecialReg::ClockHi
                | SpecialReg::Clock64
                | SpecialReg::Globaltimer
                | SpecialReg::GlobaltimerLo
                | SpecialReg::GlobaltimerHi,
            ) if self.timer_in_spin_only(info) => Ok(Value::Undef),
            Operand::Special(s) => Ok(Value::Bits(mask_bits(self.special(t, *s)?, w.max(32)))),
            Operand::Symbol { sym, offset } => {
                let a = self
                    .symbol_address(t, info, sym)?
                    .wrapping_add(*offset as u64);
                Ok(Value::Bits(mask_bits(a, w)))
            }
            Operand::Not(inner) => {
                let v = self.read(t, info, inner, 1)?;
                match self.pred_of(t, &v)? {
                    PredArg::Known(b) => Ok(Value::Bits(u64::from(!b))),
                    PredArg::Data(x) => {
                        let n = self.d.not(x);
                        Ok(Value::Bool(n))
                    }
                    PredArg::Tainted(o) => Ok(Value::Tainted(o)),
                    PredArg::Undef => Ok(Value::Undef),
                }
            }
            Operand::Vector(parts) => {
                // A brace vector used as a source: concatenate the parts at
                // their registers' widths.
                let mut vals = Vec::with_capacity(parts.len());
                for p in parts {
                    let pw = self
                        .operand_width(info, p)
                        .unwrap_or(w / parts.len().max(1) as u32);
                    vals.push((self.read(t, info, p, pw)?, (pw / 8).max(1) as u8));
                }
                Ok(Value::concat(&vals))
            }
            Operand::Sink => Ok(Value::Undef),
            other => {
                Err(self.unsupported(t, "operand form not supported here", format!("{other:?}")))
            }
        }
    }

    /// The declared width in bits of a register operand.
    pub(crate) fn operand_width(&self, info: &FuncInfo, op: &Operand) -> Option<u32> {
        match op {
            Operand::Reg(r) | Operand::RegLane { reg: r, .. } => {
                info.reg_width.get(r.index()).copied()
            }
            _ => None,
        }
    }

    /// Writes a destination operand; under a data guard the register
    /// receives `guard ? new : old`.
    #[inline]
    pub(crate) fn write(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        v: Value<D::Val>,
    ) -> R<()> {
        let v = if D::BIT_EXACT { self.concretize(v) } else { v };
        if let (Operand::Reg(r), None) = (op, &self.guard) {
            let s = Self::slot(info, *r);
            let v = match v {
                Value::Bits(b) => Value::Bits(mask_bits(
                    b,
                    info.reg_width.get(r.index()).copied().unwrap_or(64),
                )),
                v => v,
            };
            let fr = self.cta.threads[t as usize].frames.last_mut().ok_or(Halt)?;
            if let Some(slot) = fr.regs.get_mut(s) {
                *slot = v;
            }
            if let Some(c) = self.cov.as_deref_mut() {
                c.wrote_at(self.cur_instr);
                if let Some(p) = fr.prov.get_mut(s) {
                    *p = self.cur_instr + 1;
                }
            }
            return Ok(());
        }
        self.write_other(t, info, op, v)
    }

    fn write_other(&mut self, t: u32, info: &FuncInfo, op: &Operand, v: Value<D::Val>) -> R<()> {
        let s = match op {
            Operand::Reg(r) => Self::slot(info, *r),
            Operand::RegLane { reg, lane } => Self::slot(info, *reg) + usize::from(*lane),
            Operand::Sink => return Ok(()),
            Operand::Vector(parts) if parts.len() == 1 => return self.write(t, info, &parts[0], v),
            other => {
                return Err(self.unsupported(
                    t,
                    "destination operand form not supported",
                    format!("{other:?}"),
                ));
            }
        };
        // Keep predicates and narrow registers canonical.
        let v = match (v, op) {
            (Value::Bits(b), Operand::Reg(r)) => {
                let w = info.reg_width.get(r.index()).copied().unwrap_or(64);
                Value::Bits(mask_bits(b, w))
            }
            (v, _) => v,
        };
        let v = match self.guard {
            Some(c) => {
                let fr = self.cta.threads[t as usize].frames.last();
                // The old value survives where the data guard is false.
                if let Some(cov) = self.cov.as_deref_mut() {
                    cov.read_from(fr.and_then(|f| f.prov.get(s)));
                }
                let old = fr
                    .and_then(|f| f.regs.get(s).cloned())
                    .unwrap_or(Value::Undef);
                let w = match op {
                    Operand::Reg(r) | Operand::RegLane { reg: r, .. } => {
                        info.reg_width.get(r.index()).copied().unwrap_or(64)
                    }
                    _ => 64,
                };
                self.merge(t, c, v, old, w)?
            }
            None => v,
        };
        let fr = self.cta.threads[t as usize].frames.last_mut().ok_or(Halt)?;
        if let Some(slot) = fr.regs.get_mut(s) {
            *slot = v;
        }
        if let Some(c) = self.cov.as_deref_mut() {
            c.wrote_at(self.cur_instr);
            if let Some(p) = fr.prov.get_mut(s) {
                *p = self.cur_instr + 1;
            }
        }
        Ok(())
    }

    /// `c ? new : old` for register contents of `w` bits.
    pub(crate) fn merge(
        &mut self,
        t: u32,
        c: D::Val,
        new: Value<D::Val>,
        old: Value<D::Val>,
        w: u32,
    ) -> R<Value<D::Val>> {
        if new == old {
            return Ok(new);
        }
        Ok(match (&new, &old) {
            (Value::Undef, _) | (_, Value::Undef) => Value::Undef,
            (Value::Bool(a), Value::Bool(b)) => Value::Bool(self.d.select(c, *a, *b)),
            (Value::Bool(a), Value::Bits(b)) => {
                let bb = self.d.bool_const(b & 1 != 0);
                Value::Bool(self.d.select(c, *a, bb))
            }
            (Value::Bits(a), Value::Bool(b)) => {
                let ab = self.d.bool_const(a & 1 != 0);
                Value::Bool(self.d.select(c, ab, *b))
            }
            _ if has_int_data(&new) || has_int_data(&old) => {
                match self.int_select(t, c, &new, &old, w)? {
                    Some(v) => v,
                    None => Value::Tainted(self.cur_instr),
                }
            }
            _ => {
                if let Some(fmt) = new
                    .whole_data()
                    .map(|x| x.1)
                    .or(old.whole_data().map(|x| x.1))
                {
                    let a = self.as_real(t, &new, fmt)?;
                    let b = self.as_real(t, &old, fmt)?;
                    match (a, b) {
                        (Some(a), Some(b)) => Value::data(self.d.select(c, a, b), fmt),
                        _ => Value::Undef,
                    }
                } else if let (Value::Tainted(o), _) | (_, Value::Tainted(o)) = (&new, &old) {
                    Value::Tainted(*o)
                } else if matches!((&new, &old), (Value::Bits(_), Value::Bits(_))) {
                    self.layout_escape_bool(t, c, "selecting an integer")?;
                    // An integer chosen by a tensor-data predicate: integer
                    // data when the domain models it.
                    let v = if self.models_int_data() {
                        self.int_select(t, c, &new, &old, w)?
                    } else {
                        None
                    };
                    v.unwrap_or(Value::Tainted(self.cur_instr))
                } else {
                    return Err(self.unsupported(
                        t,
                        "mixed-width access to a real value",
                        "a packed or partial value selected by a tensor-data predicate".into(),
                    ));
                }
            }
        })
    }

    /// `c ? a : b` of two integers read at `w` bits, as integer data of
    /// that width; `None` when `w` is not an integer register width or an
    /// operand depends on data the domain does not model.
    pub(crate) fn int_select(
        &mut self,
        t: u32,
        c: D::Val,
        a: &Value<D::Val>,
        b: &Value<D::Val>,
        w: u32,
    ) -> R<Option<Value<D::Val>>> {
        let Some(fmt) = Fmt::int(w) else {
            return Ok(None);
        };
        let x = self.int_of(t, a, w)?;
        let y = self.int_of(t, b, w)?;
        let (Some(x), Some(y)) = (self.int_val(t, x, w)?, self.int_val(t, y, w)?) else {
            return Ok(match (x, y) {
                (IntArg::Undef, _) | (_, IntArg::Undef) => Some(Value::Undef),
                _ => None,
            });
        };
        Ok(Some(Value::data(self.d.select(c, x, y), fmt)))
    }

    /// Whether the domain models integer data (it makes integer constants).
    pub(crate) fn models_int_data(&mut self) -> bool {
        self.d.int_lit(32, 0).is_some()
    }

    /// An integer operand as integer data (`None`: undefined or tainted).
    pub(crate) fn int_val(&mut self, t: u32, a: IntArg<D::Val>, w: u32) -> R<Option<D::Val>> {
        Ok(match a {
            IntArg::Data(v) => Some(v),
            IntArg::Known(b) => match self.d.int_lit(w as u8, mask_bits(b, w)) {
                Some(v) => Some(v),
                None => return Err(self.no_int_data(t)),
            },
            IntArg::Undef | IntArg::Tainted(_) => None,
        })
    }

    /// A value as a real of format `fmt` (`None`: undefined).
    #[inline]
    pub(crate) fn as_real(&mut self, t: u32, v: &Value<D::Val>, fmt: Fmt) -> R<Option<D::Val>> {
        if let Value::Data {
            v,
            fmt: f,
            lo: 0,
            len,
        } = v
            && *len == f.size()
            && !f.is_int()
        {
            return Ok(Some(*v));
        }
        self.as_real_other(t, v, fmt)
    }

    fn as_real_other(&mut self, t: u32, v: &Value<D::Val>, fmt: Fmt) -> R<Option<D::Val>> {
        match v {
            Value::Data { fmt: f, .. } if f.is_int() => Err(self.unsupported(
                t,
                "integer tensor data used as a real value",
                format!(
                    "the bits of an integer are read as .{} (a bit reinterpretation, not a \
                     conversion: convert with cvt)",
                    fmt.name()
                ),
            )),
            Value::Bits(b) => match self.d.float_const(fmt, *b) {
                Some(x) => Ok(Some(x)),
                None => Err(self.unsupported(
                    t,
                    "NaN constant",
                    format!(
                        "the .{} bit pattern {b:#x} is NaN, which has no real value",
                        fmt.name()
                    ),
                )),
            },
            Value::Data {
                v,
                fmt: f,
                lo: 0,
                len,
            } if *len == f.size() => Ok(Some(*v)),
            // f32 → bf16 by keeping the high half: a round-toward-zero
            // conversion, the identity on the real value (docs/semantics.md §2).
            Value::Data {
                v,
                fmt: Fmt::F32,
                lo: 2,
                len: 2,
            } if fmt == Fmt::Bf16 => Ok(Some(*v)),
            Value::Data { .. } | Value::Pack(_) => Err(self.unsupported(
                t,
                "mixed-width access to a real value",
                "part of a real value used as a whole one".into(),
            )),
            Value::Undef => Ok(None),
            Value::Bool(_) => Err(self.unsupported(
                t,
                "tensor-data predicate used as a real value",
                String::new(),
            )),
            Value::Tainted(o) => Err(self.unsupported(
                t,
                "integer that depends on tensor data used as a real value",
                format!("from {}", super::unpack_instr(*o)),
            )),
        }
    }

    /// A float operand of format `fmt`, decoding immediates exactly (a
    /// `0d` literal in an f32 instruction keeps its double value).
    #[inline]
    pub(crate) fn read_real(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        fmt: Fmt,
    ) -> R<Option<D::Val>> {
        if let Operand::Reg(r) = op {
            let s = Self::slot(info, *r);
            let fr = self.cta.threads[t as usize].frames.last().ok_or(Halt)?;
            if let Some(c) = self.cov.as_deref_mut() {
                c.read_from(fr.prov.get(s));
            }
            if let Some(Value::Data {
                v,
                fmt: f,
                lo: 0,
                len,
            }) = fr.regs.get(s)
                && *len == f.size()
                && !f.is_int()
            {
                return Ok(Some(*v));
            }
        }
        match op {
            Operand::Imm(Imm::F64Bits(b)) if fmt != Fmt::F64 => {
                self.const_real(t, Fmt::F64, *b).map(Some)
            }
            Operand::Imm(Imm::F32Bits(b)) if fmt != Fmt::F32 => {
                self.const_real(t, Fmt::F32, u64::from(*b)).map(Some)
            }
            _ => {
                let v = self.read(t, info, op, u32::from(fmt.size()) * 8)?;
                self.as_real(t, &v, fmt)
            }
        }
    }

    pub(crate) fn const_real(&mut self, t: u32, fmt: Fmt, bits: u64) -> R<D::Val> {
        match self.d.float_const(fmt, bits) {
            Some(x) => Ok(x),
            None => Err(self.unsupported(t, "NaN constant", format!("{bits:#x}"))),
        }
    }

    /// A value as an integer of `w` bits.
    pub(crate) fn int_of(&mut self, t: u32, v: &Value<D::Val>, w: u32) -> R<IntArg<D::Val>> {
        match v {
            Value::Bits(b) => Ok(IntArg::Known(mask_bits(*b, w))),
            Value::Undef => Ok(IntArg::Undef),
            Value::Tainted(o) => Ok(IntArg::Tainted(*o)),
            // A data boolean read as an integer is 1 or 0 (integer data
            // when the domain models it).
            Value::Bool(c) if self.models_int_data() => {
                let c = *c;
                self.layout_escape_bool(t, c, "used as an integer")?;
                match self.int_select(t, c, &Value::Bits(1), &Value::Bits(0), w)? {
                    Some(v) => self.int_of(t, &v, w),
                    None => Ok(IntArg::Tainted(self.cur_instr)),
                }
            }
            Value::Bool(c) => {
                self.layout_escape_bool(t, *c, "used as an integer")?;
                Ok(IntArg::Tainted(self.cur_instr))
            }
            Value::Data {
                v: x,
                fmt,
                lo: 0,
                len,
            } if fmt.is_int() && *len == fmt.size() => {
                let x = *x;
                self.resize_int(t, x, fmt.bits(), w).map(IntArg::Data)
            }
            Value::Data { fmt, .. } if fmt.is_int() => self.int_from_pieces(t, v, w),
            Value::Data { v, .. } => {
                let desc = self.d.describe(*v);
                Err(self.unsupported(
                    t,
                    "bit-level manipulation of a real value",
                    format!("integer operation on the real value {desc}; {LIBM_HINT}"),
                ))
            }
            Value::Pack(parts) => {
                let mut any_undef = false;
                let mut any_int = false;
                for p in parts.iter() {
                    match &p.val {
                        Value::Data { fmt, .. } if fmt.is_int() => any_int = true,
                        Value::Data { .. } | Value::Bool(_) => {
                            return Err(self.unsupported(
                                t,
                                "bit-level manipulation of a real value",
                                format!("integer operation on packed real values; {LIBM_HINT}"),
                            ));
                        }
                        Value::Tainted(o) => return Ok(IntArg::Tainted(*o)),
                        Value::Undef => any_undef = true,
                        _ => {}
                    }
                }
                if any_undef {
                    return Ok(IntArg::Undef);
                }
                if any_int {
                    return self.int_from_pieces(t, v, w);
                }
                // A >64-bit all-concrete value, which no integer
                // instruction takes.
                Ok(IntArg::Undef)
            }
        }
    }

    /// Integer data `x` of `from` bits as `to` bits (truncated or
    /// zero-extended, as a register read at another width).
    pub(crate) fn resize_int(&mut self, t: u32, x: D::Val, from: u32, to: u32) -> R<D::Val> {
        use std::cmp::Ordering::*;
        let op = match from.cmp(&to) {
            Equal => return Ok(x),
            Greater => IntOp::Trunc,
            Less => IntOp::Zext { from: from as u8 },
        };
        self.int_op(t, op, to, &[(x, from)])
    }

    /// `op(args)` in the domain (`w`-bit result); unsupported when the
    /// domain does not model integer data.
    pub(crate) fn int_op(
        &mut self,
        t: u32,
        op: IntOp,
        w: u32,
        args: &[(D::Val, u32)],
    ) -> R<D::Val> {
        let a: smallvec::SmallVec<[(D::Val, u8); 4]> =
            args.iter().map(|&(v, b)| (v, b as u8)).collect();
        match self.d.int_op(op, w as u8, &a) {
            Some(r) => Ok(r),
            None => Err(self.no_int_data(t)),
        }
    }

    /// A concrete `w`-bit integer as integer data.
    pub(crate) fn int_lit(&mut self, t: u32, w: u32, bits: u64) -> R<D::Val> {
        match self.d.int_lit(w as u8, mask_bits(bits, w)) {
            Some(r) => Ok(r),
            None => Err(self.no_int_data(t)),
        }
    }

    #[cold]
    pub(crate) fn no_int_data(&mut self, t: u32) -> Halt {
        self.unsupported(
            t,
            "integer that depends on tensor data",
            "this data domain does not model integer data".into(),
        )
    }

    /// The integer a concatenation of concrete bytes and slices of integer
    /// data denotes, read at `w` bits: `Σ 2^(8·offset)·part` (the parts
    /// do not overlap, so the sum is their bitwise union).
    fn int_from_pieces(&mut self, t: u32, v: &Value<D::Val>, w: u32) -> R<IntArg<D::Val>> {
        let bytes = w.div_ceil(8).max(1) as u8;
        let total = u32::from(bytes) * 8;
        let mut acc: Option<D::Val> = None;
        let mut known = 0u64;
        let mut at = 0u32;
        for p in v.pieces(bytes).into_iter() {
            let n = u32::from(p.len()) * 8;
            match p {
                crate::value::Piece::Bits(b, _) => {
                    known |= mask_bits(b, n) << at;
                }
                crate::value::Piece::Data { v: x, fmt, lo, len } if fmt.is_int() => {
                    // Bytes lo..lo+len of x: (x >> 8·lo) truncated.
                    let mut part = x;
                    let fb = fmt.bits();
                    if lo > 0 {
                        let k = self.int_lit(t, 32, u64::from(lo) * 8)?;
                        part = self.int_op(
                            t,
                            IntOp::Shr { signed: false },
                            fb,
                            &[(part, fb), (k, 32)],
                        )?;
                    }
                    let pw = u32::from(len) * 8;
                    part = self.resize_int(t, part, fb, pw)?;
                    part = self.resize_int(t, part, pw, total)?;
                    if at > 0 {
                        let k = self.int_lit(t, total, 1u64 << at)?;
                        part = self.int_op(t, IntOp::Mul, total, &[(k, total), (part, total)])?;
                    }
                    acc = Some(match acc {
                        None => part,
                        Some(a) => {
                            self.int_op(t, IntOp::Add, total, &[(a, total), (part, total)])?
                        }
                    });
                }
                crate::value::Piece::Tainted(o, _) => return Ok(IntArg::Tainted(o)),
                crate::value::Piece::Undef(_) => return Ok(IntArg::Undef),
                _ => {
                    return Err(self.unsupported(
                        t,
                        "bit-level manipulation of a real value",
                        format!("integer operation on packed real values; {LIBM_HINT}"),
                    ));
                }
            }
            at += n;
        }
        let Some(mut x) = acc else {
            return Ok(IntArg::Known(mask_bits(known, w)));
        };
        if known != 0 {
            let k = self.int_lit(t, total, known)?;
            x = self.int_op(t, IntOp::Add, total, &[(x, total), (k, total)])?;
        }
        self.resize_int(t, x, total, w).map(IntArg::Data)
    }

    /// Reads an integer operand of `w` bits.
    pub(crate) fn read_int(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        w: u32,
    ) -> R<IntArg<D::Val>> {
        let v = self.read(t, info, op, w)?;
        self.int_of(t, &v, w)
    }

    /// A value as a predicate.
    pub(crate) fn pred_of(&mut self, t: u32, v: &Value<D::Val>) -> R<PredArg<D::Val>> {
        Ok(match v {
            Value::Bits(b) => PredArg::Known(b & 1 != 0),
            Value::Bool(x) => match self.d.as_bool(*x) {
                Some(b) => PredArg::Known(b),
                None => PredArg::Data(*x),
            },
            Value::Tainted(o) => PredArg::Tainted(*o),
            Value::Undef => PredArg::Undef,
            Value::Data { .. } | Value::Pack(_) => {
                return Err(self.unsupported(
                    t,
                    "bit-level manipulation of a real value",
                    "a real value used as a predicate".into(),
                ));
            }
        })
    }

    pub(crate) fn read_pred(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
    ) -> R<PredArg<D::Val>> {
        let v = self.read(t, info, op, 1)?;
        self.pred_of(t, &v)
    }

    /// A predicate as a register value (constant data booleans become bits).
    pub(crate) fn pred_value(&mut self, p: PredArg<D::Val>) -> Value<D::Val> {
        match p {
            PredArg::Known(b) => Value::Bits(u64::from(b)),
            PredArg::Data(x) => match self.d.as_bool(x) {
                Some(b) => Value::Bits(u64::from(b)),
                None => Value::Bool(x),
            },
            PredArg::Tainted(o) => Value::Tainted(o),
            PredArg::Undef => Value::Undef,
        }
    }

    /// A predicate as a domain boolean (for combining with data ones).
    pub(crate) fn pred_as_bool(&mut self, p: PredArg<D::Val>) -> Option<D::Val> {
        match p {
            PredArg::Known(b) => Some(self.d.bool_const(b)),
            PredArg::Data(x) => Some(x),
            _ => None,
        }
    }

    /// `a op b` on predicates.
    pub(crate) fn pred_op(
        &mut self,
        op: crate::domain::BoolOp,
        a: PredArg<D::Val>,
        b: PredArg<D::Val>,
    ) -> PredArg<D::Val> {
        use crate::domain::BoolOp as B;
        match (a, b) {
            (PredArg::Known(x), PredArg::Known(y)) => PredArg::Known(match op {
                B::And => x && y,
                B::Or => x || y,
                B::Xor => x ^ y,
            }),
            (PredArg::Undef, _) | (_, PredArg::Undef) => PredArg::Undef,
            (PredArg::Tainted(o), _) | (_, PredArg::Tainted(o)) => PredArg::Tainted(o),
            _ => {
                let x = self.pred_as_bool(a);
                let y = self.pred_as_bool(b);
                match (x, y) {
                    (Some(x), Some(y)) => {
                        let r = self.d.bool_op(op, x, y);
                        match self.d.as_bool(r) {
                            Some(k) => PredArg::Known(k),
                            None => PredArg::Data(r),
                        }
                    }
                    _ => PredArg::Undef,
                }
            }
        }
    }

    pub(crate) fn pred_not(&mut self, a: PredArg<D::Val>) -> PredArg<D::Val> {
        match a {
            PredArg::Known(b) => PredArg::Known(!b),
            PredArg::Data(x) => PredArg::Data(self.d.not(x)),
            other => other,
        }
    }

    /// The address a symbol denotes (in its own space, for `mov`).
    pub(crate) fn symbol_address(
        &mut self,
        t: u32,
        info: &FuncInfo,
        sym: &ptxeq_ir::Symbol,
    ) -> R<u64> {
        use ptxeq_ir::Symbol as S;
        let f = self.cta.threads[t as usize].frames.last().ok_or(Halt)?.func as usize;
        match sym {
            S::Var(v) => {
                if let Some(Some(r)) = self.mem.var_region.get(f).and_then(|m| m.get(v.index())) {
                    let reg = &self.mem.regions[*r as usize];
                    // Global variables are addressed generically.
                    return Ok(reg.base);
                }
                match self.private_of_var(t, info, v.index()) {
                    Some(p) => Ok(self.cta.threads[t as usize].private[p].region.base),
                    None => Err(self.unsupported(
                        t,
                        "address of an unallocated variable",
                        info.ir
                            .vars
                            .get(v.index())
                            .map(|v| v.name.clone())
                            .unwrap_or_default(),
                    )),
                }
            }
            S::Param(p) => {
                if f == 0 {
                    let off = self.mem.param_offsets.get(p.index()).copied().unwrap_or(0);
                    Ok(self.mem.regions[self.mem.param_region as usize].base + off)
                } else {
                    match self.private_of_param(t, info, p.index()) {
                        Some(i) => Ok(self.cta.threads[t as usize].private[i].region.base),
                        None => Err(self.unsupported(
                            t,
                            "address of a register parameter",
                            String::new(),
                        )),
                    }
                }
            }
            S::Func(name) => {
                let names: Vec<&str> = self.funcs.iter().map(|f| f.ir.name.as_str()).collect();
                match names.iter().position(|n| n == name) {
                    Some(k) => Ok(FUNC_WINDOW + 16 * k as u64),
                    None => {
                        Err(self.unsupported(t, "address of an unknown function", name.clone()))
                    }
                }
            }
        }
    }

    /// The current frame's private region of function variable `var`.
    pub(crate) fn private_of_var(&self, t: u32, info: &FuncInfo, var: usize) -> Option<usize> {
        let fr = self.cta.threads[t as usize].frames.last()?;
        let pos = info.private_vars.iter().position(|&v| v as usize == var)?;
        Some(fr.private_base + pos)
    }

    /// The current frame's private region of `.param` parameter `p`.
    pub(crate) fn private_of_param(&self, t: u32, info: &FuncInfo, p: usize) -> Option<usize> {
        let fr = self.cta.threads[t as usize].frames.last()?;
        let pos = info
            .ir
            .params
            .iter()
            .take(p + 1)
            .enumerate()
            .filter(|(_, d)| d.space == ptxeq_ir::StateSpace::Param)
            .position(|(i, _)| i == p)?;
        Some(fr.private_base + info.private_vars.len() + pos)
    }

    /// A special register's value.
    pub(crate) fn special(&mut self, t: u32, s: SpecialReg) -> R<u64> {
        use SpecialReg as S;
        use ptxeq_ir::Dim;
        let th = &self.cta.threads[t as usize];
        let dim = |d: Dim| match d {
            Dim::X => 0,
            Dim::Y => 1,
            Dim::Z => 2,
        };
        let lane = th.linear % 32;
        Ok(match s {
            S::Tid(d) => u64::from(th.tid[dim(d)]),
            S::Ntid(d) => u64::from(self.input.block[dim(d)]),
            S::Ctaid(d) => u64::from(self.cta.id[dim(d)]),
            S::Nctaid(d) => u64::from(self.input.grid[dim(d)]),
            // Cluster coordinates (`engine/cluster.rs`): exact for any
            // cluster shape; no explicit cluster is a cluster of one.
            S::ClusterId(d) => u64::from(self.cta.id[dim(d)] / self.cluster_shape()[dim(d)]),
            S::NclusterId(d) => u64::from(self.input.grid[dim(d)] / self.cluster_shape()[dim(d)]),
            S::ClusterCtaid(d) => u64::from(self.cta.id[dim(d)] % self.cluster_shape()[dim(d)]),
            S::ClusterNctaid(d) => u64::from(self.cluster_shape()[dim(d)]),
            S::ClusterCtarank => u64::from(self.cluster_rank()),
            S::ClusterNctarank => u64::from(self.cluster_ctas()),
            S::IsExplicitCluster => u64::from(self.input.cluster.is_some()),
            S::Laneid => u64::from(lane),
            S::Warpid => u64::from(th.linear / 32),
            S::Nwarpid => u64::from(self.cta.nwarps),
            S::LanemaskEq => 1u64 << lane,
            S::LanemaskLe => mask_bits(u64::MAX, lane + 1),
            S::LanemaskLt => mask_bits(u64::MAX, lane),
            S::LanemaskGe => mask_bits(!mask_bits(u64::MAX, lane), 32),
            S::LanemaskGt => mask_bits(!mask_bits(u64::MAX, lane + 1), 32),
            S::DynamicSmemSize => u64::from(self.input.dynamic_shared),
            S::TotalSmemSize | S::AggrSmemSize => self
                .mem
                .regions
                .iter()
                .filter(|r| r.space == Space::Shared)
                .map(|r| r.size)
                .sum(),
            S::ReservedSmemBegin
            | S::ReservedSmemEnd
            | S::ReservedSmemCap
            | S::ReservedSmemOffset(_) => {
                return Err(self.unsupported(
                    t,
                    "reserved shared memory",
                    format!(
                        "{} locates the shared memory reserved for NVIDIA system software \
                         (cooperative groups use it for multi-warp tiles); the driver sets it and \
                         the PTX ISA does not define its value or layout",
                        s.name()
                    ),
                ));
            }
            S::Envreg(1 | 2) => self.envreg(t, s)?,
            other => {
                return Err(self.unsupported(
                    t,
                    "timing/hardware-dependent value",
                    format!("{} is not determined by the kernel's inputs", other.name()),
                ));
            }
        })
    }

    /// Reports a register read before any write where that matters
    /// (branches, addresses, synchronisation operands).
    #[cold]
    #[inline(never)]
    pub(crate) fn uninit_register(&mut self, t: u32, what: &str) -> Halt {
        let origin = match self.undefined_origin(Some(t)) {
            Some((_, why)) => format!(" or holds an undefined value ({why})"),
            None => String::new(),
        };
        self.fail(
            t,
            FindingKind::Uninitialised,
            "",
            format!("{what} is read before it is written{origin}"),
        )
    }
}
