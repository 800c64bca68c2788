//! Per-instruction semantics (everything but memory, calls and sync,
//! which live in their own modules).

use ptxeq_ir::{
    BoolOp as IrBoolOp, Carry, CmpOp, Guard, IdiomFn, Instr, InstrData, MathFn, MulMode, Operand,
    ScalarType,
};

use super::values::{IntArg, PredArg};
use super::{Engine, Flow, Halt, R, space_of};
use crate::domain::{BinOp, BoolOp, Cmp, Domain, Fmt, IntOp, UnOp};
use crate::finding::{FindingKind, InstrRef};
use crate::funcinfo::FuncInfo;
use crate::int;
use crate::memory::Space;
use crate::value::{Value, mask_bits};

/// Operand `k`, or the sink when the instruction has fewer (malformed IR
/// reads as undefined instead of panicking).
fn opnd(ops: &[Operand], k: usize) -> &Operand {
    static SINK: Operand = Operand::Sink;
    ops.get(k).unwrap_or(&SINK)
}

/// A per-lane real operation.
type LaneFn<'a, E, V> = dyn FnMut(&mut E, &[V]) -> V + 'a;

fn bool_op(op: IrBoolOp) -> BoolOp {
    match op {
        IrBoolOp::And => BoolOp::And,
        IrBoolOp::Or => BoolOp::Or,
        IrBoolOp::Xor => BoolOp::Xor,
    }
}

/// A PTX float comparison operator as the data domain evaluates it.
#[derive(Clone, Copy)]
enum FloatCmp {
    /// `eq ne lt le gt ge`: false when an operand is NaN.
    Ordered(Cmp),
    /// `equ neu ltu leu gtu geu`: true when an operand is NaN. Over the
    /// reals (no NaN) the same as ordered; see [`Domain::cmp_unordered`].
    Unordered(Cmp),
    /// `num` (`true`: neither operand is NaN) and `nan` (`false`: one
    /// is). Constant over the reals; see [`Domain::unordered`].
    Num(bool),
}

/// The float comparison of a PTX comparison operator; `None` for the
/// unsigned integer spellings.
fn float_cmp(c: CmpOp) -> Option<FloatCmp> {
    use FloatCmp::{Ordered, Unordered};
    Some(match c {
        CmpOp::Eq => Ordered(Cmp::Eq),
        CmpOp::Ne => Ordered(Cmp::Ne),
        CmpOp::Lt => Ordered(Cmp::Lt),
        CmpOp::Le => Ordered(Cmp::Le),
        CmpOp::Gt => Ordered(Cmp::Gt),
        CmpOp::Ge => Ordered(Cmp::Ge),
        CmpOp::Equ => Unordered(Cmp::Eq),
        CmpOp::Neu => Unordered(Cmp::Ne),
        CmpOp::Ltu => Unordered(Cmp::Lt),
        CmpOp::Leu => Unordered(Cmp::Le),
        CmpOp::Gtu => Unordered(Cmp::Gt),
        CmpOp::Geu => Unordered(Cmp::Ge),
        CmpOp::Num => FloatCmp::Num(true),
        CmpOp::Nan => FloatCmp::Num(false),
        CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs => return None,
    })
}

/// Integer comparison; `signed` from the type unless the operator says.
fn int_cmp(c: CmpOp, a: u64, b: u64, w: u32, signed: bool) -> Option<bool> {
    let (x, y) = (int::read(a, w, signed), int::read(b, w, signed));
    let (ux, uy) = (int::read(a, w, false), int::read(b, w, false));
    Some(match c {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
        CmpOp::Lo => ux < uy,
        CmpOp::Ls => ux <= uy,
        CmpOp::Hi => ux > uy,
        CmpOp::Hs => ux >= uy,
        _ => return None,
    })
}

fn tainted2<V: Copy>(a: IntArg<V>, b: IntArg<V>) -> Option<IntArg<V>> {
    match (a, b) {
        (IntArg::Undef, _) | (_, IntArg::Undef) => Some(IntArg::Undef),
        (IntArg::Tainted(o), _) | (_, IntArg::Tainted(o)) => Some(IntArg::Tainted(o)),
        _ => None,
    }
}

/// Whether any operand is integer data.
fn any_data<V>(args: &[IntArg<V>]) -> bool {
    args.iter().any(|a| matches!(a, IntArg::Data(_)))
}

/// Instructions that must not run under a predicate computed from tensor
/// data (the engine cannot follow both outcomes): control and barriers,
/// collectives (which threads take part changes every result) and async
/// copies. The classification is `ptxeq_ir::facts`.
fn is_control(i: &Instr) -> bool {
    i.control().is_some() || i.collective().is_some() || i.is_async()
}

impl<D: Domain> Engine<'_, D> {
    /// Evaluates a guard: `Some(b)` when concrete; `None` when it is a
    /// data predicate (then `self.guard` holds it and destinations become
    /// selects).
    pub(crate) fn guard_value(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        g: Guard,
    ) -> R<Option<bool>> {
        let v = self.read(t, info, &Operand::Reg(g.reg), 1)?;
        let p = self.pred_of(t, &v)?;
        let p = if g.negated { self.pred_not(p) } else { p };
        match p {
            PredArg::Known(b) => Ok(Some(b)),
            PredArg::Undef => Err(self.uninit_register(t, "the guard predicate")),
            PredArg::Tainted(o) if self.atomic_origin(o).is_some() => {
                let a = self.atomic_origin(o).unwrap_or(InstrRef::kernel(0));
                if let Some(g) = self.grid.as_mut() {
                    g.halt_atomic = Some(o);
                }
                let (reason, what) =
                    if matches!(ins.instr, Instr::Bra { .. }) || is_control(&ins.instr) {
                        (super::mem::REASON_ATOMIC_BRANCH, "a branch on")
                    } else {
                        (super::mem::REASON_ATOMIC_GUARD, "a guard computed from")
                    };
                Err(self.atomic_use_unsupported(
                    t,
                    reason,
                    format!(
                        "{what} the value returned by the atomic or strong load at {a}, which depends on the order of the accesses to that word; only the grid-level ticket pattern (docs/semantics.md) is explored"
                    ),
                    a,
                ))
            }
            PredArg::Data(_) | PredArg::Tainted(_) => {
                if let Instr::Bra { .. } = ins.instr {
                    let pc = self.cta.threads[t as usize]
                        .frames
                        .last()
                        .map_or(0, |f| f.pc);
                    let target = match ins.operands.first() {
                        Some(Operand::Label(l)) => {
                            info.ir.labels.get(l.index()).map_or(pc, |l| l.target)
                        }
                        _ => pc,
                    };
                    let reason = if info.is_loop_branch(pc, target) {
                        "loop bound depends on tensor data"
                    } else {
                        "branch depends on tensor data"
                    };
                    return Err(self.unsupported(
                        t,
                        reason,
                        "the branch predicate is computed from tensor values".into(),
                    ));
                }
                if is_control(&ins.instr) {
                    return Err(self.unsupported(
                        t,
                        "branch depends on tensor data",
                        "control flow or synchronisation guarded by a predicate computed from tensor values"
                            .into(),
                    ));
                }
                match p {
                    PredArg::Data(x) => {
                        self.guard = Some(x);
                        Ok(None)
                    }
                    _ => Err(self.unsupported(
                        t,
                        "predicate depends on tensor data",
                        "an instruction guarded by a predicate computed from integers read from tensors"
                            .into(),
                    )),
                }
            }
        }
    }

    /// Executes one instruction.
    pub(crate) fn exec(
        &mut self,
        funcs: &[FuncInfo],
        info: &FuncInfo,
        t: u32,
        ins: &InstrData,
    ) -> R<Flow> {
        let ops: &[Operand] = &ins.operands;
        let pc = self.cta.threads[t as usize].frames.last().ok_or(Halt)?.pc;
        let op = |i: usize| ops.get(i).unwrap_or(&Operand::Sink);
        if D::BIT_EXACT {
            self.d.set_mode(crate::ieee::mode_of(&ins.instr));
        }
        if self.gsync.is_some()
            && let Some(f) = self.grid_sync_access(t, info, pc, ins)?
        {
            return Ok(f);
        }
        if self.cta.wg.busy_threads > 0 {
            self.wgmma_busy_check(t, info, ins);
        }
        if self.cta.wg.fence_track {
            self.wgmma_note_writes(t, info, ins);
        }
        if self.cta.tmem.ld_threads > 0 {
            self.tmem_ld_check(t, info, ins);
        }
        match &ins.instr {
            Instr::Add { ty, fp, carry } => self.add_sub(t, info, ops, *ty, fp.sat, *carry, false),
            Instr::Sub { ty, fp, carry } => self.add_sub(t, info, ops, *ty, fp.sat, *carry, true),
            Instr::Mul { ty, mode, .. } => {
                if ty.is_float() {
                    return self.float_bin(t, info, ops, *ty, BinOp::Mul);
                }
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let b = self.read_int(t, info, op(2), w)?;
                let s = ty.is_signed();
                let mode = mode.unwrap_or(MulMode::Lo);
                let rw = if mode == MulMode::Wide { 2 * w } else { w };
                let r = match (a, b) {
                    (IntArg::Known(a), IntArg::Known(b)) => IntArg::Known(match mode {
                        MulMode::Lo => int::mul_lo(a, b, w),
                        MulMode::Hi => int::mul_hi(a, b, w, s),
                        MulMode::Wide => int::mul_wide(a, b, w, s),
                    }),
                    (a, b) if any_data(&[a, b]) => self.int_data_mul(t, mode, s, w, a, b)?,
                    (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, rw)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Mad {
                ty, mode, carry, ..
            } => {
                if ty.is_float() {
                    return self.float_fma(t, info, ops, *ty, false);
                }
                self.int_mad(t, info, ops, *ty, mode.unwrap_or(MulMode::Lo), *carry)
            }
            Instr::Mul24 { ty, hi } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let r = match (a, b) {
                    (IntArg::Known(a), IntArg::Known(b)) => {
                        IntArg::Known(int::mul24(a, b, *hi, ty.is_signed()))
                    }
                    (a, b) if any_data(&[a, b]) => {
                        return Err(self.int_data_unsupported(t, "mul24"));
                    }
                    (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Mad24 { ty, hi, sat } => {
                if *sat {
                    return Err(self.unsupported(t, "mad24.sat not supported", String::new()));
                }
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let c = self.read_int(t, info, op(3), 32)?;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        IntArg::Known(int::add(int::mul24(a, b, *hi, ty.is_signed()), c, 32))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        return Err(self.int_data_unsupported(t, "mad24"));
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Fma { ty, relu, .. } => self.float_fma(t, info, ops, *ty, *relu),
            Instr::Div { ty, .. } => {
                if ty.is_float() {
                    return self.float_bin(t, info, ops, *ty, BinOp::Div);
                }
                self.int_divrem(t, info, ops, *ty, false)
            }
            Instr::Rem { ty } => self.int_divrem(t, info, ops, *ty, true),
            Instr::Neg { ty, .. } | Instr::Abs { ty, .. } => {
                let neg = matches!(ins.instr, Instr::Neg { .. });
                if ty.is_float() {
                    let u = if neg { UnOp::Neg } else { UnOp::Abs };
                    return self.float_un(t, info, ops, *ty, u);
                }
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let r = match a {
                    IntArg::Known(a) => {
                        IntArg::Known(if neg { int::neg(a, w) } else { int::abs(a, w) })
                    }
                    IntArg::Data(_) => {
                        let o = if neg { IntOp::Neg } else { IntOp::Abs };
                        self.int_data_op(t, o, w, &[(a, w)])?
                    }
                    other => other,
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Min { ty, mods } | Instr::Max { ty, mods } => {
                let is_min = matches!(ins.instr, Instr::Min { .. });
                if mods.xorsign_abs {
                    return Err(self.unsupported(
                        t,
                        "min/max .xorsign.abs not supported",
                        String::new(),
                    ));
                }
                if ty.is_float() {
                    let op_ = if is_min { BinOp::Min } else { BinOp::Max };
                    self.float_bin(t, info, ops, *ty, op_)?;
                    if ops.len() == 4 {
                        // Three-input form: fold the third operand in.
                        let three = [op(0).clone(), op(0).clone(), op(3).clone()];
                        self.float_bin(t, info, &three, *ty, op_)?;
                    }
                    if mods.relu {
                        self.relu(t, info, op(0), *ty)?;
                    }
                    return Ok(Flow::Next);
                }
                if ty.is_packed() {
                    return Err(self.unsupported(
                        t,
                        "packed integer min/max not supported",
                        String::new(),
                    ));
                }
                let w = ty.bit_width();
                let s = ty.is_signed();
                let mut acc = self.read_int(t, info, op(1), w)?;
                for k in 2..ops.len() {
                    let b = self.read_int(t, info, op(k), w)?;
                    acc = match (acc, b) {
                        (IntArg::Known(a), IntArg::Known(b)) => IntArg::Known(if is_min {
                            int::min(a, b, w, s)
                        } else {
                            int::max(a, b, w, s)
                        }),
                        (a, b) if any_data(&[a, b]) => {
                            let o = if is_min {
                                IntOp::Min { signed: s }
                            } else {
                                IntOp::Max { signed: s }
                            };
                            self.int_data_op(t, o, w, &[(a, w), (b, w)])?
                        }
                        (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                    };
                }
                if mods.relu {
                    acc = match acc {
                        IntArg::Known(a) => IntArg::Known(int::max(a, 0, w, true)),
                        IntArg::Data(_) => {
                            let z = IntArg::Known(0);
                            self.int_data_op(
                                t,
                                IntOp::Max { signed: true },
                                w,
                                &[(acc, w), (z, w)],
                            )?
                        }
                        other => other,
                    };
                }
                let v = self.int_result(t, acc, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Copysign { ty } => self.copysign(t, info, ops, *ty),
            Instr::Sad { ty } => {
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let b = self.read_int(t, info, op(2), w)?;
                let c = self.read_int(t, info, op(3), w)?;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        let s = ty.is_signed();
                        let d = (int::read(a, w, s) - int::read(b, w, s)).unsigned_abs() as u64;
                        IntArg::Known(int::add(c, d, w))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        return Err(self.int_data_unsupported(t, "sad"));
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Dp4a { a_ty, b_ty } | Instr::Dp2a { a_ty, b_ty, .. } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let c = self.read_int(t, info, op(3), 32)?;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        let mut acc = int::read(c, 32, true);
                        if let Instr::Dp2a { hi, .. } = ins.instr {
                            for i in 0..2u32 {
                                let x = int::read(a >> (16 * i), 16, a_ty.is_signed());
                                let k = i + if hi { 2 } else { 0 };
                                let y = int::read(b >> (8 * k), 8, b_ty.is_signed());
                                acc += x * y;
                            }
                        } else {
                            for i in 0..4u32 {
                                let x = int::read(a >> (8 * i), 8, a_ty.is_signed());
                                let y = int::read(b >> (8 * i), 8, b_ty.is_signed());
                                acc += x * y;
                            }
                        }
                        IntArg::Known(mask_bits(acc as u64, 32))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        let va = self.read(t, info, op(1), 32)?;
                        let vb = self.read(t, info, op(2), 32)?;
                        let hi = match ins.instr {
                            Instr::Dp2a { hi, .. } => Some(hi),
                            _ => None,
                        };
                        let _ = (a, b);
                        self.dot_product_data(
                            t,
                            (&va, a_ty.is_signed()),
                            (&vb, b_ty.is_signed()),
                            c,
                            hi,
                        )?
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Math { func, ty, .. } => {
                let u = match func {
                    MathFn::Rcp => UnOp::Recip,
                    MathFn::Sqrt => UnOp::Sqrt,
                    MathFn::Rsqrt => UnOp::Rsqrt,
                    MathFn::Ex2 => UnOp::Exp2,
                    MathFn::Lg2 => UnOp::Lg2,
                    MathFn::Sin => UnOp::Sin,
                    MathFn::Cos => UnOp::Cos,
                    MathFn::Tanh => UnOp::Tanh,
                };
                self.float_un(t, info, ops, *ty, u)
            }
            Instr::Testp { op: top, ty } => {
                let v = self.read(t, info, op(1), ty.bit_width())?;
                let Value::Bits(b) = v else {
                    return Err(self.unsupported(
                        t,
                        "testp on a real value",
                        "testing the IEEE class of a tensor value".into(),
                    ));
                };
                let x = match ty {
                    ScalarType::F32 => f64::from(f32::from_bits(b as u32)),
                    _ => f64::from_bits(b),
                };
                use ptxeq_ir::TestpOp as T;
                let r = match top {
                    T::Finite => x.is_finite(),
                    T::Infinite => x.is_infinite(),
                    T::Number => !x.is_nan(),
                    T::NotANumber => x.is_nan(),
                    T::Normal => {
                        if *ty == ScalarType::F32 {
                            (x as f32).is_normal()
                        } else {
                            x.is_normal()
                        }
                    }
                    T::Subnormal => {
                        if *ty == ScalarType::F32 {
                            (x as f32).is_subnormal()
                        } else {
                            x.is_subnormal()
                        }
                    }
                };
                self.write(t, info, op(0), Value::Bits(u64::from(r)))?;
                Ok(Flow::Next)
            }
            Instr::And { ty } | Instr::Or { ty } | Instr::Xor { ty } => {
                let bop = match ins.instr {
                    Instr::And { .. } => BoolOp::And,
                    Instr::Or { .. } => BoolOp::Or,
                    _ => BoolOp::Xor,
                };
                if *ty == ScalarType::Pred {
                    let a = self.read_pred(t, info, op(1))?;
                    let b = self.read_pred(t, info, op(2))?;
                    let r = self.pred_op(bop, a, b);
                    let v = self.pred_value(r);
                    self.write(t, info, op(0), v)?;
                    return Ok(Flow::Next);
                }
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let b = self.read_int(t, info, op(2), w)?;
                let r = match (a, b) {
                    (IntArg::Known(a), IntArg::Known(b)) => IntArg::Known(match bop {
                        BoolOp::And => a & b,
                        BoolOp::Or => a | b,
                        BoolOp::Xor => a ^ b,
                    }),
                    (a, b) if any_data(&[a, b]) => {
                        let o = match bop {
                            BoolOp::And => IntOp::And,
                            BoolOp::Or => IntOp::Or,
                            BoolOp::Xor => IntOp::Xor,
                        };
                        self.int_data_op(t, o, w, &[(a, w), (b, w)])?
                    }
                    (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Not { ty } | Instr::Cnot { ty } => {
                if *ty == ScalarType::Pred {
                    let a = self.read_pred(t, info, op(1))?;
                    let r = self.pred_not(a);
                    let v = self.pred_value(r);
                    self.write(t, info, op(0), v)?;
                    return Ok(Flow::Next);
                }
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let cnot = matches!(ins.instr, Instr::Cnot { .. });
                let r = match a {
                    IntArg::Known(a) => IntArg::Known(if cnot {
                        u64::from(a == 0)
                    } else {
                        mask_bits(!a, w)
                    }),
                    IntArg::Data(_) if cnot => {
                        // cnot a = (a == 0 ? 1 : 0).
                        let z = IntArg::Known(0);
                        match self.int_data_pred(t, CmpOp::Eq, false, a, z, w)? {
                            PredArg::Data(c) => {
                                let (one, zero) = (Value::Bits(1), Value::Bits(0));
                                match self.int_select(t, c, &one, &zero, w)? {
                                    Some(v) => {
                                        self.write(t, info, op(0), v)?;
                                        return Ok(Flow::Next);
                                    }
                                    None => IntArg::Undef,
                                }
                            }
                            PredArg::Known(k) => IntArg::Known(u64::from(k)),
                            PredArg::Tainted(o) => IntArg::Tainted(o),
                            PredArg::Undef => IntArg::Undef,
                        }
                    }
                    IntArg::Data(_) => self.int_data_op(t, IntOp::Not, w, &[(a, w)])?,
                    other => other,
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Lop3 { ty } => {
                let w = ty.bit_width();
                let mut args = [IntArg::Undef; 4];
                for (k, a) in args.iter_mut().enumerate() {
                    *a = self.read_int(t, info, op(k + 1), if k == 3 { 32 } else { w })?;
                }
                let r = match args {
                    [
                        IntArg::Known(a),
                        IntArg::Known(b),
                        IntArg::Known(c),
                        IntArg::Known(l),
                    ] => IntArg::Known(int::lop3(a, b, c, l, w)),
                    [a, b, c, IntArg::Known(l)] if any_data(&[a, b, c]) => self.int_data_op(
                        t,
                        IntOp::Lop3 { lut: l as u8 },
                        w,
                        &[(a, w), (b, w), (c, w)],
                    )?,
                    [a, b, c, l] if any_data(&[a, b, c, l]) => {
                        return Err(self.int_data_unsupported(t, "lop3 with a data look-up table"));
                    }
                    [a, b, c, l] => tainted2(a, b).or(tainted2(c, l)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Shl { ty } | Instr::Shr { ty } => {
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let left = matches!(ins.instr, Instr::Shl { .. });
                let r = match (a, b) {
                    (IntArg::Known(a), IntArg::Known(b)) => IntArg::Known(if left {
                        int::shl(a, b, w)
                    } else {
                        int::shr(a, b, w, ty.is_signed())
                    }),
                    (a, b) if any_data(&[a, b]) => {
                        let o = if left {
                            IntOp::Shl
                        } else {
                            IntOp::Shr {
                                signed: ty.is_signed(),
                            }
                        };
                        self.int_data_op(t, o, w, &[(a, w), (b, 32)])?
                    }
                    (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Shf { left, mode, .. } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let c = self.read_int(t, info, op(3), 32)?;
                let clamp = *mode == ptxeq_ir::ShiftMode::Clamp;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        IntArg::Known(int::shf(a, b, c, *left, clamp))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        return Err(self.int_data_unsupported(t, "shf"));
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Bfe { ty } => {
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let p = self.read_int(t, info, op(2), 32)?;
                let l = self.read_int(t, info, op(3), 32)?;
                let r = match (a, p, l) {
                    (IntArg::Known(a), IntArg::Known(p), IntArg::Known(l)) => {
                        IntArg::Known(int::bfe(a, p, l, w, ty.is_signed()))
                    }
                    (a, p, l) if any_data(&[a, p, l]) => self.int_data_op(
                        t,
                        IntOp::Bfe {
                            signed: ty.is_signed(),
                        },
                        w,
                        &[(a, w), (p, 32), (l, 32)],
                    )?,
                    (a, p, l) => tainted2(a, p).or(tainted2(l, l)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Bfi { ty } => {
                let w = ty.bit_width();
                let f = self.read_int(t, info, op(1), w)?;
                let b = self.read_int(t, info, op(2), w)?;
                let p = self.read_int(t, info, op(3), 32)?;
                let l = self.read_int(t, info, op(4), 32)?;
                let r = match (f, b, p, l) {
                    (IntArg::Known(f), IntArg::Known(b), IntArg::Known(p), IntArg::Known(l)) => {
                        IntArg::Known(int::bfi(f, b, p, l, w))
                    }
                    (f, b, p, l) if any_data(&[f, b, p, l]) => {
                        self.int_data_op(t, IntOp::Bfi, w, &[(f, w), (b, w), (p, 32), (l, 32)])?
                    }
                    (f, b, p, l) => tainted2(f, b).or(tainted2(p, l)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Prmt { mode, .. } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let c = self.read_int(t, info, op(3), 32)?;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        IntArg::Known(int::prmt(a, b, c, *mode))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        use ptxeq_ir::PrmtMode as M;
                        let m = match mode {
                            None => 0,
                            Some(M::F4e) => 1,
                            Some(M::B4e) => 2,
                            Some(M::Rc8) => 3,
                            Some(M::Ecl) => 4,
                            Some(M::Ecr) => 5,
                            Some(M::Rc16) => 6,
                        };
                        self.int_data_op(
                            t,
                            IntOp::Prmt { mode: m },
                            32,
                            &[(a, 32), (b, 32), (c, 32)],
                        )?
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Popc { ty }
            | Instr::Clz { ty }
            | Instr::Brev { ty }
            | Instr::Bfind { ty, .. } => {
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                // `brev` keeps the operand's width; the others give a .u32.
                let rw = if matches!(ins.instr, Instr::Brev { .. }) {
                    w
                } else {
                    32
                };
                let r = match a {
                    IntArg::Known(a) => IntArg::Known(match &ins.instr {
                        Instr::Popc { .. } => int::popc(a, w),
                        Instr::Clz { .. } => int::clz(a, w),
                        Instr::Brev { .. } => int::brev(a, w),
                        Instr::Bfind { shiftamt, .. } => {
                            int::bfind(a, w, ty.is_signed(), *shiftamt)
                        }
                        _ => 0,
                    }),
                    IntArg::Data(_) => {
                        let o = match &ins.instr {
                            Instr::Popc { .. } => IntOp::Popc,
                            Instr::Clz { .. } => IntOp::Clz,
                            Instr::Brev { .. } => IntOp::Brev,
                            Instr::Bfind { shiftamt, .. } => IntOp::Bfind {
                                signed: ty.is_signed(),
                                shiftamt: *shiftamt,
                            },
                            _ => IntOp::Popc,
                        };
                        self.int_data_op(t, o, rw, &[(a, w)])?
                    }
                    other => other,
                };
                let v = self.int_result(t, r, rw)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Fns { .. } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let c = self.read_int(t, info, op(3), 32)?;
                let r = match (a, b, c) {
                    (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                        IntArg::Known(int::fns(a, b, c))
                    }
                    (a, b, c) if any_data(&[a, b, c]) => {
                        return Err(self.int_data_unsupported(t, "fns"));
                    }
                    (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Bmsk { mode, .. } | Instr::Szext { mode, .. } => {
                let a = self.read_int(t, info, op(1), 32)?;
                let b = self.read_int(t, info, op(2), 32)?;
                let clamp = *mode == ptxeq_ir::ShiftMode::Clamp;
                let r = match (a, b) {
                    (IntArg::Known(a), IntArg::Known(b)) => IntArg::Known(match &ins.instr {
                        Instr::Bmsk { .. } => int::bmsk(a, b, clamp),
                        Instr::Szext { ty, .. } => int::szext(a, b, clamp, ty.is_signed()),
                        _ => 0,
                    }),
                    (a, b) if any_data(&[a, b]) => {
                        return Err(self.int_data_unsupported(t, "bmsk/szext"));
                    }
                    (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
                };
                let v = self.int_result(t, r, 32)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Setp {
                cmp,
                bool_op: bop,
                ty,
                ..
            } => self.setp(t, info, ops, *cmp, *bop, *ty),
            Instr::Set {
                cmp,
                bool_op: bop,
                dst_ty,
                src_ty,
                ..
            } => self.set(t, info, ops, *cmp, *bop, *dst_ty, *src_ty),
            Instr::Selp { ty } => {
                let w = ty.bit_width();
                let a = self.read(t, info, op(1), w)?;
                let b = self.read(t, info, op(2), w)?;
                let p = self.read_pred(t, info, op(3))?;
                let v = self.select(t, p, a, b, Fmt::of(*ty), w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Slct { src_ty, dst_ty, .. } => {
                let w = dst_ty.bit_width();
                let a = self.read(t, info, op(1), w)?;
                let b = self.read(t, info, op(2), w)?;
                let p = if *src_ty == ScalarType::F32 {
                    match self.read_real(t, info, op(3), Fmt::F32)? {
                        Some(c) => {
                            let zero = self.d.int_const(0);
                            let r = self.d.cmp(Cmp::Ge, c, zero);
                            match self.d.as_bool(r) {
                                Some(b) => PredArg::Known(b),
                                None => PredArg::Data(r),
                            }
                        }
                        None => PredArg::Undef,
                    }
                } else {
                    match self.read_int(t, info, op(3), 32)? {
                        IntArg::Known(c) => PredArg::Known(int::sext(c, 32) >= 0),
                        IntArg::Undef => PredArg::Undef,
                        IntArg::Tainted(o) => PredArg::Tainted(o),
                        c @ IntArg::Data(_) => {
                            self.int_data_pred(t, CmpOp::Ge, true, c, IntArg::Known(0), 32)?
                        }
                    }
                };
                let v = self.select(t, p, a, b, Fmt::of(*dst_ty), w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Mov { ty } => self.mov(t, info, ops, *ty),
            Instr::Cvt {
                dst_ty,
                src_ty,
                rnd,
                relu,
                sat,
                ..
            } => self.cvt(t, info, ops, (*dst_ty, *src_ty), *rnd, *relu, *sat),
            Instr::Cvta { to, space, ty } => {
                let w = ty.bit_width();
                let a = self.read_int(t, info, op(1), w)?;
                let win = space_of(*space).map_or(0, Space::window);
                let r = match a {
                    IntArg::Known(a) => IntArg::Known(mask_bits(
                        if *to {
                            a.wrapping_sub(win)
                        } else {
                            a.wrapping_add(win)
                        },
                        w,
                    )),
                    IntArg::Data(_) => {
                        return Err(self.unsupported(
                            t,
                            "address depends on tensor data",
                            "integer tensor data used as an address (cvta)".into(),
                        ));
                    }
                    other => other,
                };
                let v = self.int_result(t, r, w)?;
                self.write(t, info, op(0), v)?;
                Ok(Flow::Next)
            }
            Instr::Ld(m) | Instr::Ldu(m) => {
                let Some(Operand::Addr(addr)) = ops.get(1) else {
                    return Err(self.unsupported(t, "load without an address", String::new()));
                };
                let es = m.ty.size_bytes() as u8;
                let n = m.vector.unwrap_or(1);
                let dests: &[Operand] = match op(0) {
                    Operand::Vector(v) => v,
                    d => std::slice::from_ref(d),
                };
                let total = u64::from(es) * u64::from(n);
                if total > 255 {
                    return Err(self.unsupported(t, "access too wide", format!("{total} bytes")));
                }
                let mut ord = super::mem::Ordering::of(m.sem, m.scope);
                ord.used = !info.dead_dest.get(pc as usize).copied().unwrap_or(false);
                let Some(v) = self.load_with(t, info, m.space, addr, total as u8, ord)? else {
                    for d in dests {
                        self.write(t, info, d, Value::Undef)?;
                    }
                    return Ok(Flow::Next);
                };
                for (k, d) in dests.iter().enumerate() {
                    let part = if dests.len() == 1 && n == 1 {
                        v.clone()
                    } else {
                        v.slice(es * k as u8, es, total as u8)
                    };
                    let part = self.extend(t, info, d, part, m.ty)?;
                    self.write(t, info, d, part)?;
                }
                Ok(Flow::Next)
            }
            Instr::St(m) => {
                let Some(Operand::Addr(addr)) = ops.first() else {
                    return Err(self.unsupported(t, "store without an address", String::new()));
                };
                let es = m.ty.size_bytes() as u8;
                let srcs: &[Operand] = match op(1) {
                    Operand::Vector(v) => v,
                    s => std::slice::from_ref(s),
                };
                let mut parts: smallvec::SmallVec<[(Value<D::Val>, u8); 4]> =
                    smallvec::SmallVec::new();
                for s in srcs {
                    let v = self.read(t, info, s, u32::from(es) * 8)?;
                    parts.push((v, es));
                }
                let total = u64::from(es) * parts.len() as u64;
                if total > 255 {
                    return Err(self.unsupported(t, "access too wide", format!("{total} bytes")));
                }
                let v = if parts.len() == 1 {
                    let (v, _) = parts.pop().ok_or(Halt)?;
                    v
                } else {
                    Value::concat(&parts)
                };
                let ord = super::mem::Ordering::of(m.sem, m.scope);
                self.store_with(t, info, m.space, addr, v, total as u8, ord)?;
                Ok(Flow::Next)
            }
            Instr::Prefetch { .. } | Instr::Nanosleep | Instr::Griddepcontrol { .. } => {
                Ok(Flow::Next)
            }
            Instr::Fence(k) => {
                if let ptxeq_ir::FenceKind::Proxy {
                    proxy: ptxeq_ir::FenceProxy::Async,
                    ..
                } = k
                {
                    self.proxy_fence(t);
                }
                self.fence(t, k)?;
                Ok(Flow::Next)
            }
            Instr::Setmaxnreg { .. } => self.wgmma(t, info, ins, &ptxeq_ir::WgmmaOp::Fence),
            Instr::Isspacep { space } => {
                let a = self.read_int(t, info, op(1), 64)?;
                let r = match a {
                    IntArg::Known(a) => {
                        let s = Space::of_generic(a);
                        Value::Bits(u64::from(space_of(*space) == Some(s)))
                    }
                    IntArg::Data(_) => {
                        return Err(self.unsupported(
                            t,
                            "address depends on tensor data",
                            "integer tensor data used as an address (isspacep)".into(),
                        ));
                    }
                    other => self.int_result(t, other, 1)?,
                };
                self.write(t, info, op(0), r)?;
                Ok(Flow::Next)
            }
            Instr::Bra { .. } => match ops.first() {
                Some(Operand::Label(l)) => {
                    let target = info.ir.labels.get(l.index()).map(|l| l.target);
                    match target {
                        Some(tg) => Ok(Flow::Jump(tg)),
                        None => {
                            Err(self.unsupported(t, "branch to an unknown label", String::new()))
                        }
                    }
                }
                _ => Err(self.unsupported(t, "indirect branch not supported", String::new())),
            },
            Instr::Brx { .. } => Err(self.unsupported(t, "brx.idx not supported", String::new())),
            Instr::Call { .. } => self.do_call(funcs, info, t, pc),
            Instr::Ret { .. } => self.do_return(funcs, t),
            Instr::Exit => Ok(Flow::Exit),
            Instr::Trap | Instr::Brkpt => Err(self.fail(
                t,
                FindingKind::Trap,
                "trap",
                "the kernel executes `trap` (aborts)".into(),
            )),
            Instr::Bar { kind, aligned, .. } => self.bar(t, info, ops, *kind, *aligned),
            Instr::BarWarpSync => self.warp_collective(t, info, ins),
            Instr::Shfl { .. }
            | Instr::Vote { .. }
            | Instr::Match { .. }
            | Instr::Redux { .. }
            | Instr::Elect => self.warp_collective(t, info, ins),
            Instr::Activemask => self.warp_collective(t, info, ins),
            Instr::Atom(m) => {
                self.atomic(t, info, pc, m, ops, false)?;
                Ok(Flow::Next)
            }
            Instr::Red(m) => {
                self.atomic(t, info, pc, m, ops, true)?;
                Ok(Flow::Next)
            }
            Instr::BarrierCluster { .. } | Instr::Mapa { .. } | Instr::Getctarank { .. } => {
                self.cluster_op(t, info, ins)
            }
            Instr::Mma(_)
            | Instr::Wmma(_)
            | Instr::Ldmatrix(_)
            | Instr::Stmatrix(_)
            | Instr::Movmatrix { .. } => self.matrix(t, info, ins),
            Instr::CpAsync { .. } => self.cp_async(t, info, ins),
            Instr::CpAsyncCommitGroup => self.cp_async_commit(t),
            Instr::CpAsyncWaitGroup | Instr::CpAsyncWaitAll => self.cp_async_wait(t, info, ins),
            Instr::CpAsyncMbarrierArrive { .. } | Instr::Mbarrier { .. } => {
                self.mbarrier(t, info, ins)
            }
            Instr::CpAsyncBulk(b)
                if b.tensor_dims.is_none()
                    && !b.multicast
                    && b.completion == ptxeq_ir::Completion::MbarrierCompleteTx =>
            {
                self.cp_async_bulk(t, info, ins)
            }
            Instr::CpAsyncBulk(_) => self.tma_copy(t, info, ins),
            Instr::CpAsyncBulkPrefetch { .. } => self.bulk_prefetch(t, info, ins),
            Instr::CreatePolicy(_) => self.create_policy(t, info, ins),
            Instr::CpReduceAsyncBulk(_) => self.bulk_reduce(t, info, ins),
            Instr::CpAsyncBulkCommitGroup => self.bulk_commit(t),
            Instr::CpAsyncBulkWaitGroup { .. } => self.bulk_wait(t, info, ins),
            Instr::Wgmma(w) => self.wgmma(t, info, ins, w),
            Instr::Tcgen05(op) => self.tcgen05(t, info, ins, op),
            Instr::Idiom {
                func: IdiomFn::Pow,
                ty,
                ..
            } => self.float_bin(t, info, ops, *ty, BinOp::Pow),
            Instr::Idiom { func, ty, .. } => {
                // By name through the one function table (`MathFn`); a
                // test keeps every idiom name in it.
                let Some(u) = UnOp::named(func.as_str()) else {
                    return Err(self.unsupported(
                        t,
                        "unknown instruction",
                        format!("idiom `{}` names no known function", func.as_str()),
                    ));
                };
                self.float_un(t, info, ops, *ty, u)
            }
            Instr::Absorbed { .. } => Ok(Flow::Next),
            Instr::Unknown { text, reason } => {
                Err(self.unsupported(t, "unknown instruction", format!("`{text}`: {reason}")))
            }
        }
    }

    /// Sign- or zero-extends a narrow loaded integer into a wider register
    /// (PTX: by the load type's signedness; integer data likewise).
    fn extend(
        &mut self,
        t: u32,
        info: &FuncInfo,
        d: &Operand,
        v: Value<D::Val>,
        ty: ScalarType,
    ) -> R<Value<D::Val>> {
        let rw = self.operand_width(info, d).unwrap_or(64);
        let w = ty.bit_width();
        match v {
            Value::Bits(b) => Ok(if rw > w && ty.is_signed() {
                Value::Bits(mask_bits(int::sext(b, w) as u64, rw))
            } else {
                Value::Bits(b)
            }),
            ref x if rw > w && !ty.is_float() && super::values::has_int_data(x) => {
                let a = self.int_of(t, x, w)?;
                let r = self.int_ext(t, a, w, rw, ty.is_signed())?;
                self.int_result(t, r, rw)
            }
            other => Ok(other),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add_sub(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        sat: bool,
        carry: Carry,
        sub: bool,
    ) -> R<Flow> {
        if ty.is_float() {
            return self.float_bin(t, info, ops, ty, if sub { BinOp::Sub } else { BinOp::Add });
        }
        if ty.is_packed() {
            return Err(self.unsupported(
                t,
                "packed integer arithmetic not supported",
                String::new(),
            ));
        }
        let w = ty.bit_width();
        let a = self.read_int(t, info, opnd(ops, 1), w)?;
        let b = self.read_int(t, info, opnd(ops, 2), w)?;
        let (a, b) = match (a, b) {
            (IntArg::Known(a), IntArg::Known(b)) => (a, b),
            (a, b) if any_data(&[a, b]) => {
                if sat || matches!(carry, Carry::Out | Carry::InOut) {
                    if !sat {
                        return Err(self.int_data_unsupported(t, "add.cc/sub.cc (carry out)"));
                    }
                    if ty != ScalarType::S32 {
                        return Err(self.int_data_unsupported(t, "add.sat/sub.sat"));
                    }
                }
                let op = match (sat, sub) {
                    (true, false) => IntOp::AddSat,
                    (true, true) => IntOp::SubSat,
                    (false, false) => IntOp::Add,
                    (false, true) => IntOp::Sub,
                };
                let mut r = self.int_data_op(t, op, w, &[(a, w), (b, w)])?;
                // A carry in (addc/subc) is a concrete bit.
                if matches!(carry, Carry::In | Carry::InOut) && self.cta.threads[t as usize].carry {
                    let o = if sub { IntOp::Sub } else { IntOp::Add };
                    r = self.int_data_op(t, o, w, &[(r, w), (IntArg::Known(1), w)])?;
                }
                let v = self.int_result(t, r, w)?;
                self.write(t, info, opnd(ops, 0), v)?;
                return Ok(Flow::Next);
            }
            (a, b) => {
                let r = tainted2(a, b).unwrap_or(IntArg::Undef);
                let v = self.int_result(t, r, w)?;
                self.write(t, info, opnd(ops, 0), v)?;
                return Ok(Flow::Next);
            }
        };
        let cin = matches!(carry, Carry::In | Carry::InOut) && self.cta.threads[t as usize].carry;
        let cin = u128::from(cin);
        let m = if w >= 64 {
            u128::from(u64::MAX)
        } else {
            (1u128 << w) - 1
        };
        let (r, cout) = if sub {
            let full = u128::from(a).wrapping_sub(u128::from(b)).wrapping_sub(cin);
            (full as u64, u128::from(a) < u128::from(b) + cin)
        } else {
            let full = u128::from(a) + u128::from(b) + cin;
            (full as u64, full > m)
        };
        let r = if sat && ty == ScalarType::S32 {
            if sub {
                int::sub_sat_s32(a, b)
            } else {
                int::add_sat_s32(a, b)
            }
        } else {
            mask_bits(r, w)
        };
        if matches!(carry, Carry::Out | Carry::InOut) {
            self.cta.threads[t as usize].carry = cout;
        }
        self.write(t, info, opnd(ops, 0), Value::Bits(r))?;
        Ok(Flow::Next)
    }

    fn int_mad(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        mode: MulMode,
        carry: Carry,
    ) -> R<Flow> {
        let w = ty.bit_width();
        let s = ty.is_signed();
        let cw = if mode == MulMode::Wide { 2 * w } else { w };
        let a = self.read_int(t, info, opnd(ops, 1), w)?;
        let b = self.read_int(t, info, opnd(ops, 2), w)?;
        let c = self.read_int(t, info, opnd(ops, 3), cw)?;
        let r = match (a, b, c) {
            (IntArg::Known(a), IntArg::Known(b), IntArg::Known(c)) => {
                let p = match mode {
                    MulMode::Lo => int::mul_lo(a, b, w),
                    MulMode::Hi => int::mul_hi(a, b, w, s),
                    MulMode::Wide => int::mul_wide(a, b, w, s),
                };
                let cin = u128::from(
                    matches!(carry, Carry::In | Carry::InOut) && self.cta.threads[t as usize].carry,
                );
                let full = u128::from(p) + u128::from(c) + cin;
                if matches!(carry, Carry::Out | Carry::InOut) {
                    self.cta.threads[t as usize].carry = (full >> cw) & 1 == 1;
                }
                IntArg::Known(mask_bits(full as u64, cw))
            }
            (a, b, c) if any_data(&[a, b, c]) => {
                if matches!(carry, Carry::Out | Carry::InOut) {
                    return Err(self.int_data_unsupported(t, "mad.cc (carry out)"));
                }
                let p = self.int_data_mul(t, mode, s, w, a, b)?;
                let mut r = self.int_data_op(t, IntOp::Add, cw, &[(p, cw), (c, cw)])?;
                if matches!(carry, Carry::In | Carry::InOut) && self.cta.threads[t as usize].carry {
                    r = self.int_data_op(t, IntOp::Add, cw, &[(r, cw), (IntArg::Known(1), cw)])?;
                }
                r
            }
            (a, b, c) => tainted2(a, b).or(tainted2(c, c)).unwrap_or(IntArg::Undef),
        };
        let v = self.int_result(t, r, cw)?;
        self.write(t, info, opnd(ops, 0), v)?;
        Ok(Flow::Next)
    }

    /// `a · b` of `w`-bit integers, one of them data: `.lo` is the ring
    /// product, `.wide` the product of the extended operands in the
    /// `2w`-bit ring, `.hi` an uninterpreted high half.
    fn int_data_mul(
        &mut self,
        t: u32,
        mode: MulMode,
        signed: bool,
        w: u32,
        a: IntArg<D::Val>,
        b: IntArg<D::Val>,
    ) -> R<IntArg<D::Val>> {
        match mode {
            MulMode::Lo => self.int_data_op(t, IntOp::Mul, w, &[(a, w), (b, w)]),
            MulMode::Hi => self.int_data_op(t, IntOp::MulHi { signed }, w, &[(a, w), (b, w)]),
            MulMode::Wide => {
                let x = self.int_ext(t, a, w, 2 * w, signed)?;
                let y = self.int_ext(t, b, w, 2 * w, signed)?;
                self.int_data_op(t, IntOp::Mul, 2 * w, &[(x, 2 * w), (y, 2 * w)])
            }
        }
    }

    fn int_divrem(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        rem: bool,
    ) -> R<Flow> {
        let w = ty.bit_width();
        let a = self.read_int(t, info, opnd(ops, 1), w)?;
        let b = self.read_int(t, info, opnd(ops, 2), w)?;
        let r = match (a, b) {
            (IntArg::Known(a), IntArg::Known(b)) => {
                let s = ty.is_signed();
                let r = if rem {
                    int::rem(a, b, w, s)
                } else {
                    int::div(a, b, w, s)
                };
                match r {
                    Some(r) => IntArg::Known(r),
                    None => {
                        self.note(
                            t,
                            FindingKind::DivisionByZero,
                            format!(
                                "integer {} by zero (result unspecified)",
                                if rem { "remainder" } else { "division" }
                            ),
                            None,
                        );
                        IntArg::Undef
                    }
                }
            }
            (a, b) if any_data(&[a, b]) => {
                if b == IntArg::Known(0) {
                    self.note(
                        t,
                        FindingKind::DivisionByZero,
                        format!(
                            "integer {} by zero (result unspecified)",
                            if rem { "remainder" } else { "division" }
                        ),
                        None,
                    );
                    IntArg::Undef
                } else {
                    let signed = ty.is_signed();
                    let o = if rem {
                        IntOp::Rem { signed }
                    } else {
                        IntOp::Div { signed }
                    };
                    self.int_data_op(t, o, w, &[(a, w), (b, w)])?
                }
            }
            (a, b) => tainted2(a, b).unwrap_or(IntArg::Undef),
        };
        let v = self.int_result(t, r, w)?;
        self.write(t, info, opnd(ops, 0), v)?;
        Ok(Flow::Next)
    }

    /// Applies `f` lane-wise for packed types, or once for scalar floats.
    fn float_lanes(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ty: ScalarType,
        srcs: &[&Operand],
        f: &mut LaneFn<'_, Self, D::Val>,
    ) -> R<Value<D::Val>> {
        if let Some(fmt) = Fmt::of(ty) {
            let mut xs: smallvec::SmallVec<[D::Val; 4]> = smallvec::SmallVec::new();
            for s in srcs {
                match self.read_real(t, info, s, fmt)? {
                    Some(x) => xs.push(x),
                    None => return Ok(Value::Undef),
                }
            }
            return Ok(Value::data(f(self, &xs), fmt));
        }
        if let Some(lf) = Fmt::lane_of(ty) {
            let mut vals: smallvec::SmallVec<[Value<D::Val>; 4]> = smallvec::SmallVec::new();
            for s in srcs {
                vals.push(self.read(t, info, s, 32)?);
            }
            let mut lanes = Vec::with_capacity(2);
            for lane in 0..2u8 {
                let mut xs: smallvec::SmallVec<[D::Val; 4]> = smallvec::SmallVec::new();
                for v in &vals {
                    let part = v.slice(2 * lane, 2, 4);
                    match self.as_real(t, &part, lf)? {
                        Some(x) => xs.push(x),
                        None => return Ok(Value::Undef),
                    }
                }
                lanes.push((Value::data(f(self, &xs), lf), 2u8));
            }
            return Ok(Value::concat(&lanes));
        }
        Err(self.unsupported(
            t,
            "float format not modelled",
            format!(".{ty} arithmetic (tf32 / fp8 / fp6 / fp4 formats are not modelled)"),
        ))
    }

    fn float_bin(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        op: BinOp,
    ) -> R<Flow> {
        let sink = Operand::Sink;
        let srcs = [ops.get(1).unwrap_or(&sink), ops.get(2).unwrap_or(&sink)];
        let v = self.float_lanes(t, info, ty, &srcs, &mut |e, x| e.d.binary(op, x[0], x[1]))?;
        self.write(t, info, opnd(ops, 0), v)?;
        Ok(Flow::Next)
    }

    fn float_un(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        op: UnOp,
    ) -> R<Flow> {
        let sink = Operand::Sink;
        let srcs = [ops.get(1).unwrap_or(&sink)];
        let v = self.float_lanes(t, info, ty, &srcs, &mut |e, x| e.d.unary(op, x[0]))?;
        self.write(t, info, opnd(ops, 0), v)?;
        Ok(Flow::Next)
    }

    fn float_fma(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        ty: ScalarType,
        relu: bool,
    ) -> R<Flow> {
        let sink = Operand::Sink;
        let srcs = [
            ops.get(1).unwrap_or(&sink),
            ops.get(2).unwrap_or(&sink),
            ops.get(3).unwrap_or(&sink),
        ];
        let v = self.float_lanes(t, info, ty, &srcs, &mut |e, x| e.d.fma(x[0], x[1], x[2]))?;
        self.write(t, info, opnd(ops, 0), v)?;
        if relu {
            self.relu(t, info, opnd(ops, 0), ty)?;
        }
        Ok(Flow::Next)
    }

    /// `d = max(d, 0)` (the `.relu` modifier).
    fn relu(&mut self, t: u32, info: &FuncInfo, d: &Operand, ty: ScalarType) -> R<()> {
        let srcs = [d];
        let v = self.float_lanes(t, info, ty, &srcs, &mut |e, x| {
            let z = e.d.int_const(0);
            e.d.binary(BinOp::Max, x[0], z)
        })?;
        self.write(t, info, d, v)
    }

    fn copysign(&mut self, t: u32, info: &FuncInfo, ops: &[Operand], ty: ScalarType) -> R<Flow> {
        let Some(fmt) = Fmt::of(ty) else {
            return Err(self.unsupported(t, "copysign type not supported", String::new()));
        };
        let w = ty.bit_width();
        let a = self.read(t, info, opnd(ops, 1), w)?;
        let b = self.read(t, info, opnd(ops, 2), w)?;
        let sign = 1u64 << (w - 1);
        let v = match (&a, &b) {
            (Value::Bits(a), Value::Bits(b)) => {
                Value::Bits((a & sign) | (b & !sign & mask_bits(u64::MAX, w)))
            }
            (Value::Bits(a), _) => match self.as_real(t, &b, fmt)? {
                Some(x) => {
                    let m = self.d.unary(UnOp::Abs, x);
                    let r = if a & sign != 0 {
                        self.d.unary(UnOp::Neg, m)
                    } else {
                        m
                    };
                    Value::data(r, fmt)
                }
                None => Value::Undef,
            },
            _ => {
                return Err(self.unsupported(
                    t,
                    "bit-level manipulation of a real value",
                    format!(
                        "copysign taking the sign of a tensor value; {}",
                        super::values::LIBM_HINT
                    ),
                ));
            }
        };
        self.write(t, info, opnd(ops, 0), v)?;
        Ok(Flow::Next)
    }

    /// `p ? a : b` for register values.
    fn select(
        &mut self,
        t: u32,
        p: PredArg<D::Val>,
        a: Value<D::Val>,
        b: Value<D::Val>,
        fmt: Option<Fmt>,
        w: u32,
    ) -> R<Value<D::Val>> {
        match p {
            PredArg::Known(true) => Ok(a),
            PredArg::Known(false) => Ok(b),
            PredArg::Undef => Ok(Value::Undef),
            PredArg::Tainted(o) => {
                if a == b || (!D::UNIQUE_HANDLES && self.same_data(&a, &b)) {
                    Ok(a)
                } else if self.atomic_origin(o).is_some()
                    && matches!(a, Value::Bits(_) | Value::Tainted(_))
                    && matches!(b, Value::Bits(_) | Value::Tainted(_))
                {
                    // An integer chosen by an atomic's returned value: as
                    // opaque as that value (judged where it is used).
                    Ok(Value::Tainted(o))
                } else {
                    Err(self.unsupported(
                        t,
                        "predicate depends on tensor data",
                        "a selection by a predicate computed from integers read from tensors"
                            .into(),
                    ))
                }
            }
            PredArg::Data(c) => {
                if let Some(fmt) = fmt
                    && a.whole_data().is_none()
                    && b.whole_data().is_none()
                {
                    // Float constants selected by a data predicate.
                    let x = self.as_real(t, &a, fmt)?;
                    let y = self.as_real(t, &b, fmt)?;
                    return Ok(match (x, y) {
                        (Some(x), Some(y)) => Value::data(self.d.select(c, x, y), fmt),
                        _ => Value::Undef,
                    });
                }
                self.merge(t, c, a, b, w)
            }
        }
    }

    fn compare(
        &mut self,
        t: u32,
        info: &FuncInfo,
        a: &Operand,
        b: &Operand,
        cmp: CmpOp,
        ty: ScalarType,
    ) -> R<PredArg<D::Val>> {
        if let Some(fmt) = Fmt::of(ty) {
            let Some(c) = float_cmp(cmp) else {
                return Err(self.unsupported(t, "unsigned comparison of floats", String::new()));
            };
            if let (FloatCmp::Num(k), false) = (c, D::BIT_EXACT) {
                return Ok(PredArg::Known(k));
            }
            let x = self.read_real(t, info, a, fmt)?;
            let y = self.read_real(t, info, b, fmt)?;
            let (Some(x), Some(y)) = (x, y) else {
                return Ok(PredArg::Undef);
            };
            return Ok(self.float_pred(c, x, y));
        }
        if ty.is_float() {
            return Err(self.unsupported(
                t,
                "float format not modelled",
                format!(".{ty} comparison"),
            ));
        }
        let w = ty.bit_width();
        let x = self.read_int(t, info, a, w)?;
        let y = self.read_int(t, info, b, w)?;
        match (x, y) {
            (IntArg::Known(x), IntArg::Known(y)) => match int_cmp(cmp, x, y, w, ty.is_signed()) {
                Some(k) => Ok(PredArg::Known(k)),
                None => {
                    Err(self.unsupported(t, "comparison not valid for integers", format!(".{cmp}")))
                }
            },
            (x, y) if any_data(&[x, y]) => self.int_data_pred(t, cmp, ty.is_signed(), x, y, w),
            (IntArg::Tainted(o), _) | (_, IntArg::Tainted(o)) => Ok(PredArg::Tainted(o)),
            _ => Ok(PredArg::Undef),
        }
    }

    /// A float comparison of two data values. `num`/`nan` reach here only
    /// in bit-exact domains (over the reals they are constants).
    /// Two data values of one encoding that the domain knows are the same
    /// real ([`Domain::same_value`]: a domain's handles may differ for one
    /// value, the term domain's pending sums).
    fn same_data(&self, a: &Value<D::Val>, b: &Value<D::Val>) -> bool {
        match (a, b) {
            (
                Value::Data { v, fmt, lo, len },
                Value::Data {
                    v: w,
                    fmt: f2,
                    lo: l2,
                    len: n2,
                },
            ) => fmt == f2 && lo == l2 && len == n2 && self.d.same_value(*v, *w),
            _ => false,
        }
    }

    fn float_pred(&mut self, c: FloatCmp, x: D::Val, y: D::Val) -> PredArg<D::Val> {
        let r = match c {
            FloatCmp::Ordered(c) => self.d.cmp(c, x, y),
            FloatCmp::Unordered(c) => self.d.cmp_unordered(c, x, y),
            FloatCmp::Num(num) => {
                let nan = self.d.unordered(x, y);
                if num { self.d.not(nan) } else { nan }
            }
        };
        match self.d.as_bool(r) {
            Some(k) => PredArg::Known(k),
            None => PredArg::Data(r),
        }
    }

    fn setp(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        cmp: CmpOp,
        bop: Option<IrBoolOp>,
        ty: ScalarType,
    ) -> R<Flow> {
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        if let Some(lf) = Fmt::lane_of(ty) {
            // Packed: p gets lane 0's result, q lane 1's.
            let c = float_cmp(cmp);
            let a = self.read(t, info, op(2), 32)?;
            let b = self.read(t, info, op(3), 32)?;
            let extra = match bop {
                Some(_) => Some(self.read_pred(t, info, op(4))?),
                None => None,
            };
            for lane in 0..2u8 {
                let r = match c {
                    Some(FloatCmp::Num(k)) if !D::BIT_EXACT => PredArg::Known(k),
                    Some(c) => {
                        let x = self.as_real(t, &a.slice(2 * lane, 2, 4), lf)?;
                        let y = self.as_real(t, &b.slice(2 * lane, 2, 4), lf)?;
                        match (x, y) {
                            (Some(x), Some(y)) => self.float_pred(c, x, y),
                            _ => PredArg::Undef,
                        }
                    }
                    None => {
                        return Err(self.unsupported(
                            t,
                            "unsigned comparison of floats",
                            String::new(),
                        ));
                    }
                };
                let r = match (bop, extra) {
                    (Some(o), Some(e)) => self.pred_op(bool_op(o), r, e),
                    _ => r,
                };
                let v = self.pred_value(r);
                self.write(t, info, op(usize::from(lane)), v)?;
            }
            return Ok(Flow::Next);
        }
        let r = self.compare(t, info, op(2), op(3), cmp, ty)?;
        let (p, q) = match bop {
            Some(o) => {
                let c = self.read_pred(t, info, op(4))?;
                let nr = self.pred_not(r);
                (
                    self.pred_op(bool_op(o), r, c),
                    self.pred_op(bool_op(o), nr, c),
                )
            }
            None => (r, self.pred_not(r)),
        };
        let pv = self.pred_value(p);
        self.write(t, info, op(0), pv)?;
        if !matches!(op(1), Operand::Sink) {
            let qv = self.pred_value(q);
            self.write(t, info, op(1), qv)?;
        }
        Ok(Flow::Next)
    }

    #[allow(clippy::too_many_arguments)]
    fn set(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        cmp: CmpOp,
        bop: Option<IrBoolOp>,
        dst: ScalarType,
        src: ScalarType,
    ) -> R<Flow> {
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        let mut r = self.compare(t, info, op(1), op(2), cmp, src)?;
        if let Some(o) = bop {
            let c = self.read_pred(t, info, op(3))?;
            r = self.pred_op(bool_op(o), r, c);
        }
        let v = if let Some(fmt) = Fmt::of(dst) {
            let one = self.d.int_const(1);
            let zero = self.d.int_const(0);
            match r {
                PredArg::Known(k) => Value::data(if k { one } else { zero }, fmt),
                PredArg::Data(c) => Value::data(self.d.select(c, one, zero), fmt),
                PredArg::Tainted(o) => Value::Tainted(o),
                PredArg::Undef => Value::Undef,
            }
        } else {
            match r {
                PredArg::Known(k) => Value::Bits(if k {
                    mask_bits(u64::MAX, dst.bit_width())
                } else {
                    0
                }),
                PredArg::Data(c) => {
                    self.layout_escape_bool(t, c, "turned into an integer by set")?;
                    let w = dst.bit_width();
                    let ones = Value::Bits(mask_bits(u64::MAX, w));
                    let v = if self.models_int_data() {
                        self.int_select(t, c, &ones, &Value::Bits(0), w)?
                    } else {
                        None
                    };
                    v.unwrap_or(Value::Tainted(self.cur_instr))
                }
                PredArg::Tainted(o) => Value::Tainted(o),
                PredArg::Undef => Value::Undef,
            }
        };
        self.write(t, info, op(0), v)?;
        Ok(Flow::Next)
    }

    fn mov(&mut self, t: u32, info: &FuncInfo, ops: &[Operand], ty: ScalarType) -> R<Flow> {
        let w = ty.bit_width();
        let (Some(d), Some(a)) = (ops.first(), ops.get(1)) else {
            return Err(self.unsupported(t, "mov without operands", String::new()));
        };
        match d {
            Operand::Vector(parts) if parts.len() > 1 => {
                // Unpack: mov.b64 {lo, hi}, %rd.
                let v = self.read(t, info, a, w)?;
                let total = (w / 8) as u8;
                let mut at = 0u8;
                for p in parts {
                    let pw = self
                        .operand_width(info, p)
                        .map_or(total / parts.len() as u8, |x| (x / 8) as u8);
                    let piece = v.slice(at, pw, total);
                    self.write(t, info, p, piece)?;
                    at += pw;
                }
            }
            _ => {
                let v = self.read(t, info, a, w)?;
                self.write(t, info, d, v)?;
            }
        }
        Ok(Flow::Next)
    }

    #[allow(clippy::too_many_arguments)]
    fn cvt(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        (dst, src): (ScalarType, ScalarType),
        rnd: Option<ptxeq_ir::Rounding>,
        relu: bool,
        sat: bool,
    ) -> R<Flow> {
        use ptxeq_ir::Rounding as Rd;
        if let Some(flow) = self.cvt_fp8(t, info, ops, (dst, src), relu, sat)? {
            return Ok(flow);
        }
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        // `.sat` on reals is the identity (docs/semantics.md §2); on integers it
        // clamps to the destination range.
        let int_round = matches!(rnd, Some(Rd::Rni | Rd::Rzi | Rd::Rmi | Rd::Rpi));
        // Packing conversion: cvt.rn.f16x2.f32 d, a, b (a → upper half).
        if let Some(lf) = Fmt::lane_of(dst) {
            let Some(sf) = Fmt::of(src) else {
                return Err(self.unsupported(
                    t,
                    "float format not modelled",
                    format!("cvt .{dst}.{src}"),
                ));
            };
            let hi = self.read_real(t, info, op(1), sf)?;
            let lo = self.read_real(t, info, op(2), sf)?;
            let v = match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    let (lo, hi) = if relu {
                        let z = self.d.int_const(0);
                        (
                            self.d.binary(BinOp::Max, lo, z),
                            self.d.binary(BinOp::Max, hi, z),
                        )
                    } else {
                        (lo, hi)
                    };
                    Value::concat(&[(Value::data(lo, lf), 2), (Value::data(hi, lf), 2)])
                }
                _ => Value::Undef,
            };
            self.write(t, info, op(0), v)?;
            return Ok(Flow::Next);
        }
        // f32 → tf32 (for `mma .tf32`): rounding is the identity on the
        // real value; the register keeps the f32 encoding.
        if dst == ScalarType::Tf32 && src == ScalarType::F32 {
            let v = match self.read_real(t, info, op(1), Fmt::F32)? {
                Some(x) => Value::data(x, Fmt::F32),
                None => Value::Undef,
            };
            self.write(t, info, op(0), v)?;
            return Ok(Flow::Next);
        }
        let (df, sf) = (Fmt::of(dst), Fmt::of(src));
        if (dst.is_float() && df.is_none()) || (src.is_float() && sf.is_none()) {
            return Err(self.unsupported(
                t,
                "float format not modelled",
                format!("cvt .{dst}.{src}"),
            ));
        }
        let v = match (df, sf) {
            (Some(df), Some(sf)) => {
                let a = self.read(t, info, op(1), src.bit_width())?;
                if int_round {
                    match a {
                        Value::Bits(b) => {
                            let x = crate::concrete::float_bits_to_f64(sf, b);
                            // ±inf, NaN and values of 2^52 or more (already
                            // integers) round to themselves; a zero result
                            // keeps the sign (`cvt.rzi.f32.f32 -0.5` is -0).
                            let y = if !x.is_finite() || x.abs() >= 4_503_599_627_370_496.0 {
                                x
                            } else {
                                let r = int::float_to_int(x, rnd, 64, true);
                                (int::sext(r, 64) as f64).copysign(x)
                            };
                            let bits = match df {
                                Fmt::F64 => y.to_bits(),
                                Fmt::F32 => u64::from((y as f32).to_bits()),
                                _ => {
                                    return Err(self.unsupported(
                                        t,
                                        "float format not modelled",
                                        "rounding to an integer in half precision".into(),
                                    ));
                                }
                            };
                            Value::Bits(bits)
                        }
                        Value::Undef => Value::Undef,
                        _ => {
                            return Err(self.unsupported(
                                t,
                                "rounding a real value to an integer",
                                format!(
                                    "cvt.{}.{dst}.{src} on a tensor value",
                                    rnd.map_or("", |r| r.as_str())
                                ),
                            ));
                        }
                    }
                } else {
                    match self.as_real(t, &a, sf)? {
                        Some(x) => {
                            let x = if relu {
                                let z = self.d.int_const(0);
                                self.d.binary(BinOp::Max, x, z)
                            } else {
                                x
                            };
                            Value::data(x, df)
                        }
                        None => Value::Undef,
                    }
                }
            }
            (Some(df), None) => {
                // integer → float: the exact integer.
                let w = src.bit_width();
                match self.read_int(t, info, op(1), w)? {
                    IntArg::Known(b) => {
                        let x = self.d.int_const(int::read(b, w, src.is_signed()));
                        Value::data(x, df)
                    }
                    IntArg::Undef => Value::Undef,
                    IntArg::Tainted(o) => {
                        return Err(self.unsupported(
                            t,
                            "conversion of a tensor-derived integer to a real value",
                            format!("the integer comes from {}", super::unpack_instr(o)),
                        ));
                    }
                    // The exact integer (rounding is the identity on real
                    // values, docs/semantics.md §2).
                    IntArg::Data(v) => {
                        let x = self.int_data_to_real(t, v, src.is_signed())?;
                        Value::data(x, df)
                    }
                }
            }
            (None, Some(sf)) => {
                let a = self.read(t, info, op(1), src.bit_width())?;
                match a {
                    Value::Bits(b) => {
                        let x = crate::concrete::float_bits_to_f64(sf, b);
                        Value::Bits(int::float_to_int(x, rnd, dst.bit_width(), dst.is_signed()))
                    }
                    Value::Undef => Value::Undef,
                    ref v => match self.as_real(t, v, sf)? {
                        // A concrete domain knows the value: exact bits.
                        Some(x) if self.d.concrete_value(x).is_some() => {
                            let c = self.d.concrete_value(x).unwrap_or(0.0);
                            Value::Bits(int::float_to_int(c, rnd, dst.bit_width(), dst.is_signed()))
                        }
                        Some(x) => {
                            self.real_to_int_data(t, x, rnd, dst.is_signed(), dst.bit_width())?
                        }
                        None => Value::Undef,
                    },
                }
            }
            (None, None) => {
                let sw = src.bit_width();
                let dw = dst.bit_width();
                match self.read_int(t, info, op(1), sw)? {
                    IntArg::Known(b) => Value::Bits(int::convert(
                        b,
                        sw,
                        src.is_signed(),
                        dw,
                        dst.is_signed(),
                        sat,
                    )),
                    other => {
                        let r = self.int_data_convert(
                            t,
                            other,
                            (sw, src.is_signed()),
                            (dw, dst.is_signed()),
                            sat,
                        )?;
                        // A conversion into a wider register than the
                        // type (cvt.u32.u16 %r) zero-extends.
                        let rw = self.operand_width(info, op(0)).unwrap_or(dw).max(dw);
                        let r = self.int_ext(t, r, dw, rw, false)?;
                        self.int_result(t, r, rw)?
                    }
                }
            }
        };
        self.write(t, info, op(0), v)?;
        Ok(Flow::Next)
    }
}
