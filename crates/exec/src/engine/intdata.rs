//! Integer data: integer instructions whose operands depend on tensor data.
//!
//! `exec.rs` computes every integer instruction with concrete operands
//! itself; when an operand is integer data ([`IntArg::Data`]) it comes
//! here, and the domain builds the value ([`Domain::int_op`]): exact ring
//! arithmetic modulo 2^w for `add`/`sub`/`mul.lo`/`mad.lo`/`neg`/`not`/`shl`
//! by a constant, `mul.wide` and widening `cvt` as extensions followed by
//! the ring product, and the other integer and bit instructions as exact
//! but uninterpreted functions. An undefined operand makes the result
//! undefined; an operand the domain does not model (`Tainted`) keeps the
//! result tainted. Integer data that reaches a branch, an address or a
//! synchronisation operand stays unsupported (the callers say so).

use ptxeq_ir::CmpOp;

use super::values::{IntArg, PredArg};
use super::{Engine, R};
use crate::domain::{Cmp, Domain, Fmt, IntOp, IntRounding};
use crate::value::{Value, mask_bits};

/// `Undef` beats `Tainted` beats everything else, as for concrete
/// operands.
fn undefined_or_tainted<V: Copy>(args: &[(IntArg<V>, u32)]) -> Option<IntArg<V>> {
    if args.iter().any(|a| matches!(a.0, IntArg::Undef)) {
        return Some(IntArg::Undef);
    }
    args.iter()
        .find_map(|a| matches!(a.0, IntArg::Tainted(_)).then_some(a.0))
}

impl<D: Domain> Engine<'_, D> {
    /// `op(args)` with a `w`-bit result, some operand being data; each
    /// operand with the width it was read at.
    pub(crate) fn int_data_op(
        &mut self,
        t: u32,
        op: IntOp,
        w: u32,
        args: &[(IntArg<D::Val>, u32)],
    ) -> R<IntArg<D::Val>> {
        if let Some(r) = undefined_or_tainted(args) {
            return Ok(r);
        }
        let mut vals: smallvec::SmallVec<[(D::Val, u32); 4]> = smallvec::SmallVec::new();
        for &(a, aw) in args {
            match self.int_val(t, a, aw)? {
                Some(v) => vals.push((v, aw)),
                None => return Ok(IntArg::Undef),
            }
        }
        self.int_op(t, op, w, &vals).map(IntArg::Data)
    }

    /// A `w`-bit integer result as a register value.
    pub(crate) fn int_result(&mut self, t: u32, r: IntArg<D::Val>, w: u32) -> R<Value<D::Val>> {
        Ok(match r {
            IntArg::Known(b) => Value::Bits(mask_bits(b, w)),
            IntArg::Undef => Value::Undef,
            IntArg::Tainted(o) => Value::Tainted(o),
            IntArg::Data(v) => match Fmt::int(w) {
                Some(fmt) => Value::data(v, fmt),
                None => {
                    return Err(self.unsupported(
                        t,
                        "integer tensor data of an unsupported width",
                        format!("a {w}-bit integer result"),
                    ));
                }
            },
        })
    }

    /// `a` (`from` bits) sign- or zero-extended to `to` bits.
    pub(crate) fn int_ext(
        &mut self,
        t: u32,
        a: IntArg<D::Val>,
        from: u32,
        to: u32,
        signed: bool,
    ) -> R<IntArg<D::Val>> {
        if from >= to {
            return match a {
                IntArg::Known(b) => Ok(IntArg::Known(mask_bits(b, to))),
                IntArg::Data(_) if from > to => self.int_data_op(t, IntOp::Trunc, to, &[(a, from)]),
                other => Ok(other),
            };
        }
        match a {
            IntArg::Known(b) => Ok(IntArg::Known(mask_bits(
                crate::int::read(b, from, signed) as u64,
                to,
            ))),
            IntArg::Data(_) => {
                let op = if signed {
                    IntOp::Sext { from: from as u8 }
                } else {
                    IntOp::Zext { from: from as u8 }
                };
                self.int_data_op(t, op, to, &[(a, from)])
            }
            other => Ok(other),
        }
    }

    /// The predicate `a cmp b` of two `w`-bit integers, one of them data;
    /// `signed` is the type's (the `lo`/`ls`/`hi`/`hs` spellings are
    /// unsigned whatever the type).
    pub(crate) fn int_data_pred(
        &mut self,
        t: u32,
        cmp: CmpOp,
        signed: bool,
        a: IntArg<D::Val>,
        b: IntArg<D::Val>,
        w: u32,
    ) -> R<PredArg<D::Val>> {
        let (op, signed) = match cmp {
            CmpOp::Eq => (Cmp::Eq, signed),
            CmpOp::Ne => (Cmp::Ne, signed),
            CmpOp::Lt => (Cmp::Lt, signed),
            CmpOp::Le => (Cmp::Le, signed),
            CmpOp::Gt => (Cmp::Gt, signed),
            CmpOp::Ge => (Cmp::Ge, signed),
            CmpOp::Lo => (Cmp::Lt, false),
            CmpOp::Ls => (Cmp::Le, false),
            CmpOp::Hi => (Cmp::Gt, false),
            CmpOp::Hs => (Cmp::Ge, false),
            other => {
                return Err(self.unsupported(
                    t,
                    "comparison not valid for integers",
                    format!(".{other}"),
                ));
            }
        };
        match undefined_or_tainted(&[(a, w), (b, w)]) {
            Some(IntArg::Undef) => return Ok(PredArg::Undef),
            Some(IntArg::Tainted(o)) => return Ok(PredArg::Tainted(o)),
            _ => {}
        }
        let (Some(x), Some(y)) = (self.int_val(t, a, w)?, self.int_val(t, b, w)?) else {
            return Ok(PredArg::Undef);
        };
        let Some(r) = self.d.int_cmp(op, signed, x, y) else {
            return Err(self.no_int_data(t));
        };
        Ok(match self.d.as_bool(r) {
            Some(k) => PredArg::Known(k),
            None => PredArg::Data(r),
        })
    }

    /// `cvt` between integer types with a data operand: truncation,
    /// extension by the source's signedness, and with `.sat` a clamp to the
    /// destination's range (compared in the source's signedness, where
    /// both bounds are representable).
    pub(crate) fn int_data_convert(
        &mut self,
        t: u32,
        a: IntArg<D::Val>,
        (sw, ss): (u32, bool),
        (dw, ds): (u32, bool),
        sat: bool,
    ) -> R<IntArg<D::Val>> {
        let cw = sw.max(dw);
        let mut x = self.int_ext(t, a, sw, cw, ss)?;
        if sat {
            let (lo, hi) = crate::int::range(dw, ds);
            let (slo, shi) = crate::int::range(sw, ss);
            if hi < shi {
                let k = IntArg::Known(mask_bits(hi as u64, cw));
                x = self.int_data_op(t, IntOp::Min { signed: ss }, cw, &[(x, cw), (k, cw)])?;
            }
            if lo > slo {
                let k = IntArg::Known(mask_bits(lo as u64, cw));
                x = self.int_data_op(t, IntOp::Max { signed: ss }, cw, &[(x, cw), (k, cw)])?;
            }
        }
        self.int_ext(t, x, cw, dw, ss)
    }

    /// The real value of integer data read as signed or unsigned.
    pub(crate) fn int_data_to_real(&mut self, t: u32, v: D::Val, signed: bool) -> R<D::Val> {
        match self.d.int_to_real(v, signed) {
            Some(x) => Ok(x),
            None => Err(self.no_int_data(t)),
        }
    }

    /// A real rounded to a `w`-bit integer (saturating), as integer data.
    pub(crate) fn real_to_int_data(
        &mut self,
        t: u32,
        x: D::Val,
        rnd: Option<ptxeq_ir::Rounding>,
        signed: bool,
        w: u32,
    ) -> R<Value<D::Val>> {
        use ptxeq_ir::Rounding as Rd;
        let r = match rnd {
            Some(Rd::Rni | Rd::Rn) => IntRounding::Nearest,
            Some(Rd::Rmi | Rd::Rm) => IntRounding::Down,
            Some(Rd::Rpi | Rd::Rp) => IntRounding::Up,
            _ => IntRounding::Zero,
        };
        let Some(fmt) = Fmt::int(w) else {
            return Err(self.unsupported(
                t,
                "conversion of a real value to an integer",
                format!("a {w}-bit destination"),
            ));
        };
        match self.d.real_to_int(x, r, signed, w as u8) {
            Some(v) => Ok(Value::data(v, fmt)),
            None => Err(self.unsupported(
                t,
                "conversion of a real value to an integer",
                "this data domain does not model integer data".into(),
            )),
        }
    }

    /// `dp4a` (`hi = None`) or `dp2a.lo/hi` with a data operand, exactly:
    /// `c + Σ ext(a_i)·ext(b_i)` over the 8-bit (16-bit for `dp2a`'s `a`)
    /// lanes, each lane read from the register's bytes — so four `s8`
    /// elements loaded as one 32-bit word are the four inputs themselves.
    pub(crate) fn dot_product_data(
        &mut self,
        t: u32,
        (a, a_signed): (&Value<D::Val>, bool),
        (b, b_signed): (&Value<D::Val>, bool),
        c: IntArg<D::Val>,
        hi: Option<bool>,
    ) -> R<IntArg<D::Val>> {
        let lanes: &[(u8, u8, u8)] = match hi {
            // (a's byte offset, a's lane bytes, b's byte offset)
            None => &[(0, 1, 0), (1, 1, 1), (2, 1, 2), (3, 1, 3)],
            Some(false) => &[(0, 2, 0), (2, 2, 1)],
            Some(true) => &[(0, 2, 2), (2, 2, 3)],
        };
        let mut acc = c;
        for &(ao, al, bo) in lanes {
            let aw = u32::from(al) * 8;
            let x = a.slice(ao, al, 4);
            let x = self.int_of(t, &x, aw)?;
            let x = self.int_ext(t, x, aw, 32, a_signed)?;
            let y = b.slice(bo, 1, 4);
            let y = self.int_of(t, &y, 8)?;
            let y = self.int_ext(t, y, 8, 32, b_signed)?;
            let p = match (x, y) {
                (IntArg::Known(x), IntArg::Known(y)) => {
                    IntArg::Known(mask_bits(x.wrapping_mul(y), 32))
                }
                (x, y) => self.int_data_op(t, IntOp::Mul, 32, &[(x, 32), (y, 32)])?,
            };
            acc = match (acc, p) {
                (IntArg::Known(x), IntArg::Known(y)) => {
                    IntArg::Known(mask_bits(x.wrapping_add(y), 32))
                }
                (x, y) => self.int_data_op(t, IntOp::Add, 32, &[(x, 32), (y, 32)])?,
            };
        }
        Ok(acc)
    }

    /// Reports an integer instruction the engine does not model on data.
    pub(crate) fn int_data_unsupported(&mut self, t: u32, what: &str) -> super::Halt {
        self.unsupported(
            t,
            "integer instruction on tensor data not modelled",
            format!("`{what}` with an operand that depends on tensor data"),
        )
    }
}
