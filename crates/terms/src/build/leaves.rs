//! Leaves: constants (exact, from integers, rationals or IEEE bit
//! patterns), infinities, input symbols, boolean constants.

use num_rational::BigRational;
use num_traits::Zero;

use crate::node::{Node, TermId};
use crate::rat::Rat;
use crate::store::Terms;

/// An IEEE-754-style binary format: exponent and stored-mantissa widths
/// (all-ones exponent = infinities and NaNs, zero exponent = subnormals).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct IeeeFormat {
    exp_bits: u32,
    mant_bits: u32,
}

impl IeeeFormat {
    pub const F16: IeeeFormat = IeeeFormat {
        exp_bits: 5,
        mant_bits: 10,
    };
    pub const BF16: IeeeFormat = IeeeFormat {
        exp_bits: 8,
        mant_bits: 7,
    };
    /// TensorFloat-32 (19 significant bits, stored in 32-bit containers;
    /// pass the top 19 bits).
    pub const TF32: IeeeFormat = IeeeFormat {
        exp_bits: 8,
        mant_bits: 10,
    };
    pub const F32: IeeeFormat = IeeeFormat {
        exp_bits: 8,
        mant_bits: 23,
    };
    pub const F64: IeeeFormat = IeeeFormat {
        exp_bits: 11,
        mant_bits: 52,
    };

    /// A format with `exp_bits` in 2..=15 and `mant_bits` in 1..=52
    /// (`None` otherwise).
    pub fn new(exp_bits: u32, mant_bits: u32) -> Option<IeeeFormat> {
        ((2..=15).contains(&exp_bits) && (1..=52).contains(&mant_bits)).then_some(IeeeFormat {
            exp_bits,
            mant_bits,
        })
    }
}

/// The exact value of an IEEE bit pattern: `Ok(Some(v))` finite,
/// `Ok(None)` NaN, `Err(sign)` an infinity (`true` = negative).
fn decode_ieee(bits: u64, fmt: IeeeFormat) -> Result<Option<Rat>, bool> {
    let IeeeFormat {
        exp_bits,
        mant_bits,
    } = fmt;
    let negative = (bits >> (exp_bits + mant_bits)) & 1 == 1;
    let exp_field = (bits >> mant_bits) & ((1u64 << exp_bits) - 1);
    let frac = bits & ((1u64 << mant_bits) - 1);
    let bias = (1i32 << (exp_bits - 1)) - 1;
    if exp_field == (1u64 << exp_bits) - 1 {
        return if frac == 0 { Err(negative) } else { Ok(None) };
    }
    let (mant, exp) = if exp_field == 0 {
        // Subnormal (or zero): no implicit bit, minimum exponent.
        (frac, 1 - bias - mant_bits as i32)
    } else {
        (
            frac | (1u64 << mant_bits),
            exp_field as i32 - bias - mant_bits as i32,
        )
    };
    let m = if negative {
        -(mant as i128)
    } else {
        mant as i128
    };
    Ok(Some(Rat::from_mantissa_exp(m, exp)))
}

impl Terms {
    /// Interns a constant.
    pub(crate) fn konst(&mut self, r: Rat) -> TermId {
        self.intern(Node::Const(r))
    }

    /// The exact rational `r`.
    pub fn rational(&mut self, r: BigRational) -> TermId {
        // `Ratio` arithmetic keeps values reduced, but a value built with
        // `new_raw` may not be: normalise before canonicalising.
        let r = if r.denom().is_zero() {
            // Zero denominators are unrepresentable as rationals; the value
            // is undefined, which the store spells `recip(0)`.
            let zero = self.konst(Rat::ZERO);
            return self.intern(Node::Recip(zero));
        } else {
            BigRational::new(r.numer().clone(), r.denom().clone())
        };
        self.konst(Rat::from_big(r))
    }

    /// The constant `r`.
    pub fn constant(&mut self, r: Rat) -> TermId {
        self.konst(r)
    }

    /// The integer `v`.
    pub fn int(&mut self, v: i64) -> TermId {
        self.konst(Rat::from_i64(v))
    }

    /// The exact value of an IEEE bit pattern of format `fmt` (`bits` in
    /// the low bits): finite → rational, ±inf → `pos_inf`/`neg_inf`,
    /// NaN → `None`.
    pub fn from_ieee_bits(&mut self, bits: u64, fmt: IeeeFormat) -> Option<TermId> {
        match decode_ieee(bits, fmt) {
            Ok(Some(r)) => Some(self.konst(r)),
            Ok(None) => None,
            Err(true) => Some(self.neg_inf()),
            Err(false) => Some(self.pos_inf()),
        }
    }

    /// Exact value of an `f32` (`0f3DCCCCCD` is 13421773/134217728).
    pub fn from_f32_bits(&mut self, bits: u32) -> Option<TermId> {
        self.from_ieee_bits(u64::from(bits), IeeeFormat::F32)
    }

    pub fn from_f64_bits(&mut self, bits: u64) -> Option<TermId> {
        self.from_ieee_bits(bits, IeeeFormat::F64)
    }

    pub fn from_f16_bits(&mut self, bits: u16) -> Option<TermId> {
        self.from_ieee_bits(u64::from(bits), IeeeFormat::F16)
    }

    pub fn from_bf16_bits(&mut self, bits: u16) -> Option<TermId> {
        self.from_ieee_bits(u64::from(bits), IeeeFormat::BF16)
    }

    pub fn pos_inf(&mut self) -> TermId {
        self.intern(Node::PosInf)
    }

    pub fn neg_inf(&mut self) -> TermId {
        self.intern(Node::NegInf)
    }

    /// The symbol `x[index]` of input tensor number `tensor` (flat index):
    /// an unknown finite real.
    pub fn input(&mut self, tensor: u32, index: u64) -> TermId {
        self.intern(Node::Input { tensor, index })
    }

    pub fn bool_const(&mut self, b: bool) -> TermId {
        self.intern(Node::BoolConst(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    fn rat(t: &Terms, id: TermId) -> (BigInt, BigInt) {
        let r = t.as_rational(id).unwrap();
        (r.numer().clone(), r.denom().clone())
    }

    #[test]
    fn f32_point_one_is_exact() {
        let mut t = Terms::new();
        let c = t.from_f32_bits(0x3DCC_CCCD).unwrap();
        assert_eq!(
            rat(&t, c),
            (BigInt::from(13_421_773), BigInt::from(134_217_728))
        );
    }

    #[test]
    fn f32_specials() {
        let mut t = Terms::new();
        assert_eq!(t.from_f32_bits(0x7F80_0000), Some(t.pos_inf()));
        assert_eq!(t.from_f32_bits(0xFF80_0000), Some(t.neg_inf()));
        assert_eq!(t.from_f32_bits(0x7FC0_0000), None);
        // +0 and -0 are the same real.
        assert_eq!(t.from_f32_bits(0x8000_0000), t.from_f32_bits(0));
        assert_eq!(t.from_f32_bits(0x3F80_0000), Some(t.int(1)));
        assert_eq!(t.from_f32_bits(0xC040_0000), Some(t.int(-3)));
        // Smallest subnormal: 2^-149.
        let tiny = t.from_f32_bits(1).unwrap();
        assert_eq!(
            rat(&t, tiny),
            (BigInt::from(1), BigInt::from(1u8) << 149usize)
        );
        // Largest finite: (2^24 - 1) · 2^104.
        let max = t.from_f32_bits(0x7F7F_FFFF).unwrap();
        assert_eq!(
            rat(&t, max),
            (BigInt::from((1u64 << 24) - 1) << 104usize, BigInt::from(1))
        );
    }

    #[test]
    fn f64_f16_bf16() {
        let mut t = Terms::new();
        // 0.1 in f64 is 3602879701896397 / 2^55.
        let c = t.from_f64_bits(0x3FB9_9999_9999_999A).unwrap();
        assert_eq!(
            rat(&t, c),
            (
                BigInt::from(3_602_879_701_896_397u64),
                BigInt::from(1u8) << 55usize
            )
        );
        // f16 0x3555 = 0.333251953125 = 1365/4096.
        let h = t.from_f16_bits(0x3555).unwrap();
        assert_eq!(rat(&t, h), (BigInt::from(1365), BigInt::from(4096)));
        // f16 subnormal 0x0001 = 2^-24.
        let hs = t.from_f16_bits(0x0001).unwrap();
        assert_eq!(rat(&t, hs), (BigInt::from(1), BigInt::from(1u32 << 24)));
        assert_eq!(t.from_f16_bits(0xFC00), Some(t.neg_inf()));
        assert_eq!(t.from_f16_bits(0x7E00), None);
        // bf16 0x3E4D = 0.2001953125 = 205/1024.
        let b = t.from_bf16_bits(0x3E4D).unwrap();
        assert_eq!(rat(&t, b), (BigInt::from(205), BigInt::from(1024)));
        assert_eq!(t.from_bf16_bits(0x7F80), Some(t.pos_inf()));
    }

    #[test]
    fn custom_formats() {
        assert_eq!(IeeeFormat::new(8, 23), Some(IeeeFormat::F32));
        assert_eq!(IeeeFormat::new(0, 3), None);
        assert_eq!(IeeeFormat::new(8, 64), None);
        let mut t = Terms::new();
        // e5m2 (fp8) 0x3C = 0 01111 00 = 1.0; 0x7B = 0 11110 11 = 57344.
        let e5m2 = IeeeFormat::new(5, 2).unwrap();
        assert_eq!(t.from_ieee_bits(0x3C, e5m2), Some(t.int(1)));
        assert_eq!(t.from_ieee_bits(0x7B, e5m2), Some(t.int(57344)));
        assert_eq!(t.from_ieee_bits(0x7C, e5m2), Some(t.pos_inf()));
    }

    #[test]
    fn leaves_are_interned_once() {
        let mut t = Terms::new();
        let a = t.input(0, 3);
        let b = t.input(0, 3);
        let c = t.input(1, 3);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            t.int(7),
            t.rational(BigRational::new(BigInt::from(14), BigInt::from(2)))
        );
        assert_eq!(t.bool_const(true), t.bool_const(true));
        let (tt, ff) = (t.bool_const(true), t.bool_const(false));
        assert!(t.is_bool(ff));
        assert!(!t.is_bool(a));
        assert_eq!(t.as_bool(tt), Some(true));
    }
}
