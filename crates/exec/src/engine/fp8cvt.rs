//! `cvt` to and from the packed fp8 formats (`.e4m3x2`, `.e5m2x2`).
//!
//! PTX ISA, `cvt`: `cvt.rn.f16x2.{e4m3x2,e5m2x2} d, a` widens the two
//! bytes of the 16-bit `a` (low byte → low half of `d`) to f16 — exact,
//! every fp8 value is an f16 value. `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32
//! d, a, b` rounds `a` into the upper and `b` into the lower byte of `d`,
//! `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 d, a` the two halves of `a`.
//!
//! Values: concrete bits convert exactly ([`crate::narrow`]: round to
//! nearest even, saturate to the largest finite value, NaN stays NaN). A
//! real (tensor-derived) value keeps its value, as every other rounding
//! does over the reals (docs/semantics.md §2; here that includes the
//! saturation, which the reals convention takes as the identity too).
//! `.relu` is reported unsupported by name.

use ptxeq_ir::{Operand, ScalarType};

use super::{Engine, Flow, R};
use crate::domain::{Domain, Fmt};
use crate::funcinfo::FuncInfo;
use crate::value::Value;

/// The fp8 lane format of a packed fp8 type.
fn fp8x2(ty: ScalarType) -> Option<Fmt> {
    match ty {
        ScalarType::E4m3x2 => Some(Fmt::E4m3),
        ScalarType::E5m2x2 => Some(Fmt::E5m2),
        _ => None,
    }
}

impl<D: Domain> Engine<'_, D> {
    /// A `cvt` with an fp8x2 source or destination; `None` for every
    /// other `cvt` (handled by the caller).
    pub(crate) fn cvt_fp8(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        (dst, src): (ScalarType, ScalarType),
        relu: bool,
        sat: bool,
    ) -> R<Option<Flow>> {
        let (dn, sn) = (fp8x2(dst), fp8x2(src));
        if dn.is_none() && sn.is_none() {
            if sat {
                return Ok(None);
            }
            return self.unsigned_cvt_of_real_bytes(t, info, ops, (dst, src));
        }
        if relu {
            return Err(self.unsupported(
                t,
                "float format not modelled",
                format!("cvt.relu .{dst}.{src} (fp8 with .relu)"),
            ));
        }
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        let v = match (dn, sn, dst, src) {
            // Widening: two fp8 bytes → two f16 halves.
            (None, Some(sf), ScalarType::F16x2, _) => {
                let a = self.read(t, info, op(1), 16)?;
                let mut halves = Vec::with_capacity(2);
                for i in 0..2u8 {
                    let byte = a.slice(i, 1, 2);
                    let h = match byte {
                        Value::Bits(b) => {
                            let x = sf.narrow().map_or(f64::NAN, |n| n.to_f64(b));
                            Value::Bits(u64::from(f16_bits_exact(x)))
                        }
                        Value::Undef => Value::Undef,
                        ref other => {
                            self.fp8_same_format(t, other, sf, "source")?;
                            match self.as_real(t, other, sf)? {
                                Some(x) => Value::data(x, Fmt::F16),
                                None => Value::Undef,
                            }
                        }
                    };
                    halves.push((h, 2u8));
                }
                Value::concat(&halves)
            }
            // Narrowing: f32 pair or f16x2 → two fp8 bytes.
            (Some(df), None, _, ScalarType::F32 | ScalarType::F16x2) => {
                let lanes: Vec<(Value<D::Val>, Fmt)> = if src == ScalarType::F32 {
                    // a → upper byte, b → lower byte.
                    let hi = self.read(t, info, op(1), 32)?;
                    let lo = self.read(t, info, op(2), 32)?;
                    vec![(lo, Fmt::F32), (hi, Fmt::F32)]
                } else {
                    let a = self.read(t, info, op(1), 32)?;
                    vec![(a.slice(0, 2, 4), Fmt::F16), (a.slice(2, 2, 4), Fmt::F16)]
                };
                let mut bytes = Vec::with_capacity(2);
                for (lane, lf) in lanes {
                    let b = match lane {
                        Value::Bits(b) => {
                            let x = crate::concrete::float_bits_to_f64(lf, b);
                            let enc = df.narrow().and_then(|n| n.encode_rn_satfinite(x));
                            Value::Bits(enc.unwrap_or(0x7F))
                        }
                        Value::Undef => Value::Undef,
                        ref other => match self.as_real(t, other, lf)? {
                            Some(x) => Value::data(x, df),
                            None => Value::Undef,
                        },
                    };
                    bytes.push((b, 1u8));
                }
                Value::concat(&bytes)
            }
            _ => {
                return Err(self.unsupported(
                    t,
                    "float format not modelled",
                    format!("cvt .{dst}.{src}"),
                ));
            }
        };
        self.write(t, info, op(0), v)?;
        Ok(Some(Flow::Next))
    }

    /// An unsigned integer `cvt` (no `.sat`) of a register holding real
    /// values in whole bytes is a byte move: truncation keeps the low
    /// bytes (`cvt.u16.u32 %rs, %r` taking the low f16 of a
    /// `cvt.rn.f16x2.e4m3x2` result), widening appends zero bytes
    /// (`cvt.u16.u8` of a loaded fp8 byte) — how `cuda_fp8.h` converts
    /// one element. The values keep their byte slices exactly, so a
    /// partial real value stays partial (and is unsupported where used as
    /// a number). `None` for every other integer `cvt`, and where the
    /// source holds no real value.
    fn unsigned_cvt_of_real_bytes(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ops: &[Operand],
        (dst, src): (ScalarType, ScalarType),
    ) -> R<Option<Flow>> {
        let (sw, dw) = (src.bit_width(), dst.bit_width());
        let unsigned = |ty: ScalarType| !ty.is_float() && !ty.is_signed() && ty != ScalarType::Pred;
        let (Some(d), Some(a)) = (ops.first(), ops.get(1)) else {
            return Ok(None);
        };
        if !unsigned(src) || !unsigned(dst) || sw % 8 != 0 || dw % 8 != 0 || sw == 0 || dw == 0 {
            return Ok(None);
        }
        let v = self.read(t, info, a, sw)?;
        let real = |v: &Value<D::Val>| matches!(v, Value::Data { fmt, .. } if !fmt.is_int());
        let has_real = match &v {
            Value::Pack(parts) => parts.iter().any(|p| real(&p.val)),
            other => real(other),
        };
        if !has_real {
            return Ok(None);
        }
        let rw = self.operand_width(info, d).unwrap_or(dw).max(dw);
        let (sb, db, rb) = ((sw / 8) as u8, (dw / 8) as u8, (rw / 8) as u8);
        let kept = v.slice(0, sb.min(db), sb);
        let out = if rb > sb.min(db) {
            Value::concat(&[(kept, sb.min(db)), (Value::Bits(0), rb - sb.min(db))])
        } else {
            kept
        };
        self.write(t, info, d, out)?;
        Ok(Some(Flow::Next))
    }

    /// A real fp8 byte must be of the format the conversion reads.
    fn fp8_same_format(&mut self, t: u32, v: &Value<D::Val>, fmt: Fmt, what: &str) -> R<()> {
        if let Value::Data { fmt: f, .. } = v
            && *f != fmt
        {
            return Err(self.unsupported(
                t,
                "real value read in another format",
                format!(
                    "the cvt {what} byte holds a .{} value, read as .{} (a bit reinterpretation)",
                    f.name(),
                    fmt.name()
                ),
            ));
        }
        Ok(())
    }
}

/// The f16 encoding of `x`, which is exactly an f16 value (every fp8
/// value is); NaN gives the canonical f16 NaN.
fn f16_bits_exact(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7FFF;
    }
    if x.is_infinite() {
        return if x < 0.0 { 0xFC00 } else { 0x7C00 };
    }
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a == 0.0 {
        return sign;
    }
    // a = m · 2^e with the f16 fields: normal for a ≥ 2^-14.
    let e = a.log2().floor() as i32;
    if e >= -14 {
        let man = ((a / 2f64.powi(e) - 1.0) * 1024.0).round() as u16;
        sign | (((e + 15) as u16) << 10) | man
    } else {
        sign | (a / 2f64.powi(-24)).round() as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::narrow::Narrow;

    #[test]
    fn every_fp8_value_is_an_f16_value() {
        for n in [Narrow::E4m3, Narrow::E5m2] {
            for c in 0..256u64 {
                let x = n.to_f64(c);
                let h = f16_bits_exact(x);
                let back = crate::concrete::float_bits_to_f64(Fmt::F16, u64::from(h));
                assert!(
                    (x.is_nan() && back.is_nan()) || back == x,
                    "{n:?} {c:#x}: {x} -> {h:#x} -> {back}"
                );
            }
        }
        assert_eq!(f16_bits_exact(1.0), 0x3C00);
        assert_eq!(f16_bits_exact(-448.0), 0xDF00);
    }
}
