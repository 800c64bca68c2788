//! Exact rational constants with a small fast path.
//!
//! Almost every constant a kernel produces (float literals, small integers,
//! folded sums of them) fits a pair of machine words, and constant folding
//! sits on the hot path of term construction. `Rat` therefore keeps values
//! whose reduced numerator and denominator fit in `i64` inline, and falls
//! back to [`BigRational`] only when they do not. The representation is
//! canonical — a value that fits is *always* `Small`, and both forms are
//! fully reduced with a positive denominator — so the derived `Eq`/`Hash`
//! are value equality, which hash-consing relies on.

use std::cmp::Ordering;
use std::fmt;
use std::num::NonZeroI64;

use num_bigint::{BigInt, Sign};
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use serde::{Deserialize, Serialize};

/// An exact rational number (see the module docs for the invariants).
/// Opaque, so that every value is canonical by construction.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(try_from = "RatRepr", into = "RatRepr")]
pub struct Rat(Repr);

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Repr {
    /// `num / den`, reduced, `den > 0`, `num != i64::MIN` (so negation is
    /// always representable). The denominator's niche (zero) tells this
    /// variant from `Big`, so a `Rat` is two words (16 bytes) and a term
    /// node holding one stays at 24 bytes.
    Small { num: i64, den: NonZeroI64 },
    /// Anything that does not fit `Small`; reduced, positive denominator.
    Big(Box<BigRational>),
}

/// The serialized shape of a [`Rat`]: deserialization re-establishes the
/// invariants (reduces, moves into the right variant, rejects a zero
/// denominator), so a foreign or corrupted value cannot break hash-consing.
#[derive(Clone, Serialize, Deserialize)]
enum RatRepr {
    Small { num: i64, den: i64 },
    Big(BigRational),
}

impl From<Rat> for RatRepr {
    fn from(r: Rat) -> Self {
        match r.0 {
            Repr::Small { num, den } => RatRepr::Small {
                num,
                den: den.get(),
            },
            Repr::Big(b) => RatRepr::Big(*b),
        }
    }
}

impl TryFrom<RatRepr> for Rat {
    type Error = String;
    fn try_from(r: RatRepr) -> Result<Self, String> {
        match r {
            RatRepr::Small { num, den } => {
                if den == 0 {
                    return Err("rational constant with zero denominator".into());
                }
                Ok(Rat::from_i128_parts(i128::from(num), i128::from(den)))
            }
            RatRepr::Big(b) => {
                if b.denom().is_zero() {
                    return Err("rational constant with zero denominator".into());
                }
                // `Ratio`'s own deserializer does not reduce: do it here.
                Ok(Rat::from_big(BigRational::new(
                    b.numer().clone(),
                    b.denom().clone(),
                )))
            }
        }
    }
}

/// Binary GCD on `u128` (both operands may be zero; `gcd(0, 0) = 0`).
fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// The denominator `1`.
const DEN_ONE: NonZeroI64 = NonZeroI64::new(1).unwrap();

/// The small representation `num / den` (`den > 0`, reduced, `num !=
/// i64::MIN`: callers guarantee it).
fn small(num: i64, den: i64) -> Repr {
    match NonZeroI64::new(den) {
        Some(den) => Repr::Small { num, den },
        // Unreachable for reduced values (den > 0); stay total.
        None => Repr::Big(Box::new(BigRational::new_raw(
            BigInt::from(num),
            BigInt::from(den),
        ))),
    }
}

impl Rat {
    pub const ZERO: Rat = Rat(Repr::Small {
        num: 0,
        den: DEN_ONE,
    });
    pub const ONE: Rat = Rat(Repr::Small {
        num: 1,
        den: DEN_ONE,
    });
    pub const MINUS_ONE: Rat = Rat(Repr::Small {
        num: -1,
        den: DEN_ONE,
    });

    /// The integer `v`.
    pub fn from_i64(v: i64) -> Rat {
        if v == i64::MIN {
            Rat(Repr::Big(Box::new(BigRational::from_integer(
                BigInt::from(v),
            ))))
        } else {
            Rat(Repr::Small {
                num: v,
                den: DEN_ONE,
            })
        }
    }

    /// `num / den` from wide parts (`den != 0`; callers guarantee it).
    fn from_i128_parts(num: i128, den: i128) -> Rat {
        debug_assert!(den != 0);
        let (mut num, mut den) = if den < 0 {
            // `-i128::MIN` overflows; such inputs cannot arise from i64
            // products, but stay total: fall back to big arithmetic.
            match (num.checked_neg(), den.checked_neg()) {
                (Some(n), Some(d)) => (n, d),
                _ => {
                    return Rat::from_big(BigRational::new(BigInt::from(num), BigInt::from(den)));
                }
            }
        } else {
            (num, den)
        };
        let g = gcd_u128(num.unsigned_abs(), den.unsigned_abs());
        if g > 1 {
            // g divides both, and g <= |num|, |den| <= i128::MAX here.
            let g = g as i128;
            num /= g;
            den /= g;
        }
        match (i64::try_from(num), i64::try_from(den)) {
            (Ok(n), Ok(d)) if n != i64::MIN => Rat(small(n, d)),
            _ => Rat(Repr::Big(Box::new(BigRational::new_raw(
                BigInt::from(num),
                BigInt::from(den),
            )))),
        }
    }

    /// Canonicalises a big rational (it must be reduced with a positive
    /// denominator, as every `Ratio` built with `new` or arithmetic is).
    pub fn from_big(r: BigRational) -> Rat {
        if let (Some(n), Some(d)) = (r.numer().to_i64(), r.denom().to_i64())
            && n != i64::MIN
            && d > 0
        {
            return Rat(small(n, d));
        }
        Rat(Repr::Big(Box::new(r)))
    }

    /// The value as a [`BigRational`].
    pub fn to_big(&self) -> BigRational {
        match &self.0 {
            Repr::Small { num, den } => {
                BigRational::new_raw(BigInt::from(*num), BigInt::from(den.get()))
            }
            Repr::Big(b) => (**b).clone(),
        }
    }

    /// `m · 2^e` exactly.
    pub fn from_mantissa_exp(m: i128, e: i32) -> Rat {
        if m == 0 {
            return Rat::ZERO;
        }
        // Strip common factors of two first so small values stay small.
        let tz = m.trailing_zeros().min(e.unsigned_abs()) as i32;
        let (m, e) = if e < 0 { (m >> tz, e + tz) } else { (m, e) };
        if e >= 0 {
            if e < 64
                && let Some(v) = m.checked_mul(1i128 << e)
            {
                return Rat::from_i128_parts(v, 1);
            }
            Rat::from_big(BigRational::from_integer(BigInt::from(m) << e as usize))
        } else {
            let k = e.unsigned_abs();
            if k < 63 {
                return Rat::from_i128_parts(m, 1i128 << k);
            }
            Rat::from_big(BigRational::new_raw(
                BigInt::from(m),
                BigInt::from(1u8) << k as usize,
            ))
        }
    }

    /// `num / den` (`None` when `den == 0`).
    pub fn new(num: i64, den: i64) -> Option<Rat> {
        (den != 0).then(|| Rat::from_i128_parts(i128::from(num), i128::from(den)))
    }

    /// The big value when the representation is big (small values have
    /// none stored).
    pub(crate) fn big_ref(&self) -> Option<&BigRational> {
        match &self.0 {
            Repr::Big(b) => Some(b),
            Repr::Small { .. } => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self.0, Repr::Small { num: 0, .. })
    }

    pub fn is_one(&self) -> bool {
        matches!(self.0, Repr::Small { num: 1, den } if den.get() == 1)
    }

    pub fn is_integer(&self) -> bool {
        match &self.0 {
            Repr::Small { den, .. } => den.get() == 1,
            Repr::Big(b) => b.is_integer(),
        }
    }

    /// `-1`, `0` or `1`.
    pub fn signum(&self) -> i32 {
        match &self.0 {
            Repr::Small { num, .. } => num.signum() as i32,
            Repr::Big(b) => match b.numer().sign() {
                Sign::Minus => -1,
                Sign::NoSign => 0,
                Sign::Plus => 1,
            },
        }
    }

    /// The value as an `i64` when it is an integer in range.
    pub fn to_i64(&self) -> Option<i64> {
        match &self.0 {
            Repr::Small { num, den } if den.get() == 1 => Some(*num),
            Repr::Small { .. } => None,
            Repr::Big(b) if b.is_integer() => b.numer().to_i64(),
            Repr::Big(_) => None,
        }
    }

    /// Size of the value in bits (numerator plus denominator), used to
    /// refuse constant folds that would blow up (see `MAX_CONST_BITS`).
    pub fn bits(&self) -> u64 {
        match &self.0 {
            Repr::Small { num, den } => {
                u64::from(128 - num.unsigned_abs().leading_zeros() - den.get().leading_zeros())
            }
            Repr::Big(b) => b.numer().bits() + b.denom().bits(),
        }
    }

    pub fn neg(&self) -> Rat {
        match &self.0 {
            // `num != i64::MIN`, so this cannot overflow.
            Repr::Small { num, den } => Rat(Repr::Small {
                num: -*num,
                den: *den,
            }),
            Repr::Big(b) => Rat::from_big(-(**b).clone()),
        }
    }

    pub fn add(&self, o: &Rat) -> Rat {
        match (&self.0, &o.0) {
            (Repr::Small { num: a, den: b }, Repr::Small { num: c, den: d }) => {
                let (a, b, c, d) = (*a as i128, b.get() as i128, *c as i128, d.get() as i128);
                // |a·d|, |c·b| < 2^126, so neither the sum nor b·d overflows.
                Rat::from_i128_parts(a * d + c * b, b * d)
            }
            _ => Rat::from_big(self.to_big() + o.to_big()),
        }
    }

    pub fn mul(&self, o: &Rat) -> Rat {
        match (&self.0, &o.0) {
            (Repr::Small { num: a, den: b }, Repr::Small { num: c, den: d }) => {
                let (a, b, c, d) = (*a as i128, b.get() as i128, *c as i128, d.get() as i128);
                Rat::from_i128_parts(a * c, b * d)
            }
            _ => Rat::from_big(self.to_big() * o.to_big()),
        }
    }

    /// `1 / self`; `None` for zero (undefined over the reals).
    pub fn recip(&self) -> Option<Rat> {
        match &self.0 {
            Repr::Small { num: 0, .. } => None,
            Repr::Small { num, den } => Some(Rat::from_i128_parts(den.get() as i128, *num as i128)),
            Repr::Big(b) => Some(Rat::from_big(b.recip())),
        }
    }

    /// The exact rational value of a finite `f64` (`None` for ±inf, NaN).
    pub fn of_f64(v: f64) -> Option<Rat> {
        if !v.is_finite() {
            return None;
        }
        if v == 0.0 {
            return Some(Rat::ZERO);
        }
        let bits = v.to_bits();
        let sign = if bits >> 63 == 1 { -1i128 } else { 1 };
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as i128;
        let (m, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1i128 << 52), exp - 1075)
        };
        Some(Rat::from_mantissa_exp(sign * m, e))
    }

    /// Nearest `f64` (±inf / 0 outside the range).
    pub fn to_f64(&self) -> f64 {
        match &self.0 {
            Repr::Small { num, den } => {
                const EXACT: u64 = 1 << 53;
                let den = den.get();
                if num.unsigned_abs() <= EXACT && (den as u64) <= EXACT {
                    // Both exactly representable: one correctly rounded division.
                    *num as f64 / den as f64
                } else {
                    self.to_big().to_f64().unwrap_or(f64::NAN)
                }
            }
            Repr::Big(b) => b.to_f64().unwrap_or(f64::NAN),
        }
    }

    /// The exact square root when `self` is the square of a rational.
    pub fn exact_sqrt(&self) -> Option<Rat> {
        if self.signum() < 0 {
            return None;
        }
        let b = self.to_big();
        let n = b.numer().sqrt();
        let d = b.denom().sqrt();
        if &(&n * &n) == b.numer() && &(&d * &d) == b.denom() {
            Some(Rat::from_big(BigRational::new_raw(n, d)))
        } else {
            None
        }
    }

    /// `k` when `self == 2^k` exactly (k may be negative).
    pub fn log2_exact(&self) -> Option<i64> {
        if self.signum() <= 0 {
            return None;
        }
        let b = self.to_big();
        let (n, d) = (b.numer().magnitude(), b.denom().magnitude());
        let is_pow2 = |x: &num_bigint::BigUint| x.count_ones() == 1;
        if d.is_one() && is_pow2(n) {
            Some(n.bits() as i64 - 1)
        } else if n.is_one() && is_pow2(d) {
            Some(-(d.bits() as i64 - 1))
        } else {
            None
        }
    }

    /// Canonical bytes for the structural hash (independent of platform).
    pub(crate) fn hash_bytes(&self, out: &mut impl Extend<u8>) {
        match &self.0 {
            Repr::Small { num, den } => {
                out.extend([0u8]);
                out.extend(num.to_le_bytes());
                out.extend(den.get().to_le_bytes());
            }
            Repr::Big(b) => {
                out.extend([1u8, b.numer().sign() as u8]);
                for part in [b.numer().magnitude(), b.denom().magnitude()] {
                    let bytes = part.to_bytes_le();
                    out.extend((bytes.len() as u64).to_le_bytes());
                    out.extend(bytes);
                }
            }
        }
    }
}

impl Ord for Rat {
    fn cmp(&self, o: &Rat) -> Ordering {
        match (&self.0, &o.0) {
            (Repr::Small { num: a, den: b }, Repr::Small { num: c, den: d }) => {
                (*a as i128 * d.get() as i128).cmp(&(*c as i128 * b.get() as i128))
            }
            _ => self.to_big().cmp(&o.to_big()),
        }
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, o: &Rat) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Rat {
    /// `3`, `-3/4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Small { num, den } if den.get() == 1 => write!(f, "{num}"),
            Repr::Small { num, den } => write!(f, "{num}/{den}"),
            Repr::Big(b) if b.is_integer() => write!(f, "{}", b.numer()),
            Repr::Big(b) => write!(f, "{}/{}", b.numer(), b.denom()),
        }
    }
}

impl Rat {
    /// Absolute value.
    pub fn abs(&self) -> Rat {
        if self.signum() < 0 {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// Numerator and denominator as big integers (denominator positive).
    pub fn parts(&self) -> (BigInt, BigInt) {
        let b = self.to_big();
        (b.numer().clone(), b.denom().clone())
    }

    pub fn is_negative(&self) -> bool {
        self.signum() < 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: i64, d: i64) -> Rat {
        Rat::from_i128_parts(n as i128, d as i128)
    }

    #[test]
    fn small_values_are_reduced_and_signed_in_numerator() {
        assert_eq!(r(6, -4).0, small(-3, 2));
        assert_eq!(Rat::new(6, -4), Some(r(-3, 2)));
        assert_eq!(Rat::new(1, 0), None);
        assert_eq!(r(0, -7), Rat::ZERO);
        assert_eq!(r(2, 2), Rat::ONE);
    }

    #[test]
    fn arithmetic_is_exact() {
        // 1/3 + 1/6 = 1/2; 2/3 · 9/4 = 3/2.
        assert_eq!(r(1, 3).add(&r(1, 6)), r(1, 2));
        assert_eq!(r(2, 3).mul(&r(9, 4)), r(3, 2));
        assert_eq!(r(-5, 7).recip(), Some(r(-7, 5)));
        assert_eq!(Rat::ZERO.recip(), None);
    }

    #[test]
    fn overflow_moves_to_big_and_back() {
        let big = Rat::from_i64(i64::MAX).add(&Rat::ONE); // 2^63
        assert!(matches!(big, Rat(Repr::Big(_))));
        assert_eq!(
            big.to_big(),
            BigRational::from_integer(BigInt::from(1u64 << 63))
        );
        // 2^63 - 1 fits again.
        assert_eq!(big.add(&Rat::MINUS_ONE), Rat::from_i64(i64::MAX));
        assert!(matches!(Rat::from_i64(i64::MIN), Rat(Repr::Big(_))));
        // -(i64::MIN) = 2^63 round trips through Big.
        assert_eq!(Rat::from_i64(i64::MIN).neg(), big);
    }

    #[test]
    fn ordering_is_by_value() {
        assert!(r(1, 3) < r(1, 2));
        assert!(r(-1, 2) < r(-1, 3));
        let big = Rat::from_mantissa_exp(1, 100);
        assert!(Rat::from_i64(i64::MAX) < big);
        assert!(big.neg() < Rat::from_i64(-5));
    }

    #[test]
    fn mantissa_exponent_values() {
        assert_eq!(Rat::from_mantissa_exp(3, -1), r(3, 2));
        assert_eq!(Rat::from_mantissa_exp(4, -1), r(2, 1));
        assert_eq!(Rat::from_mantissa_exp(5, 3), r(40, 1));
        // 2^-149 is big; the denominator is exactly 2^149.
        let tiny = Rat::from_mantissa_exp(1, -149);
        let (n, d) = tiny.parts();
        assert_eq!(n, BigInt::from(1));
        assert_eq!(d, BigInt::from(1u8) << 149usize);
    }

    #[test]
    fn exact_roots_and_logs() {
        assert_eq!(r(9, 4).exact_sqrt(), Some(r(3, 2)));
        assert_eq!(r(2, 1).exact_sqrt(), None);
        assert_eq!(r(-4, 1).exact_sqrt(), None);
        assert_eq!(r(8, 1).log2_exact(), Some(3));
        assert_eq!(r(1, 8).log2_exact(), Some(-3));
        assert_eq!(Rat::ONE.log2_exact(), Some(0));
        assert_eq!(r(3, 4).log2_exact(), None);
    }

    #[test]
    fn to_f64_rounds() {
        assert_eq!(r(1, 2).to_f64(), 0.5);
        assert_eq!(r(1, 3).to_f64(), 1.0 / 3.0);
        assert_eq!(Rat::from_mantissa_exp(1, -1074).to_f64(), f64::from_bits(1));
    }

    #[test]
    fn bits_measure() {
        assert_eq!(Rat::ONE.bits(), 2);
        assert_eq!(r(3, 4).bits(), 5);
    }
}
