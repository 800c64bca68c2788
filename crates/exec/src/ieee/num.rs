//! Exact IEEE-754 arithmetic on decoded numbers, with rounding to any of
//! the four modelled formats in any PTX rounding mode.
//!
//! Why exact big-integer arithmetic instead of host floats: PTX needs
//! directed rounding (`fma.rm.f32` is the heart of nvcc's `expf`), single
//! rounding for `fma` in every mode, and f16/bf16 results; host floats
//! only round to nearest and would double-round through f64. Every finite
//! value is `(-1)^neg · mag · 2^exp` with an unbounded `mag`, so `+ − × fma`
//! are exact and `÷ √` are exact up to a sticky bit, then [`round`] rounds
//! once. Speed is irrelevant here (tests and counterexample replay).

use num_bigint::BigUint;
use num_traits::{One, Zero};

use crate::domain::Fmt;

/// A PTX rounding mode of a float result.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Rnd {
    /// To nearest, ties to even (the default of every float op).
    #[default]
    Rn,
    /// Toward zero.
    Rz,
    /// Toward −∞.
    Rm,
    /// Toward +∞.
    Rp,
}

/// A decoded IEEE value.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Num {
    Nan,
    Inf {
        neg: bool,
    },
    /// `(-1)^neg · mag · 2^exp`; zero is `mag = 0` (signed).
    Fin {
        neg: bool,
        mag: BigUint,
        exp: i64,
    },
}

/// Precision (with the hidden bit), exponent range and exponent width.
#[derive(Clone, Copy)]
struct Spec {
    p: u32,
    emin: i64,
    emax: i64,
    ebits: u32,
}

fn spec(fmt: Fmt) -> Spec {
    match fmt {
        Fmt::F16 => Spec {
            p: 11,
            emin: -14,
            emax: 15,
            ebits: 5,
        },
        Fmt::Bf16 => Spec {
            p: 8,
            emin: -126,
            emax: 127,
            ebits: 8,
        },
        Fmt::F32 => Spec {
            p: 24,
            emin: -126,
            emax: 127,
            ebits: 8,
        },
        // Not float formats: the engine never hands integer data to the IEEE
        // domain (its integer inputs are concrete bits); read as f64.
        // fp8 values never reach this domain's arithmetic in their own
        // format (`Ieee::float_const` carries them as f32).
        Fmt::F64 | Fmt::I8 | Fmt::I16 | Fmt::I32 | Fmt::I64 | Fmt::E4m3 | Fmt::E5m2 => Spec {
            p: 53,
            emin: -1022,
            emax: 1023,
            ebits: 11,
        },
    }
}

impl Spec {
    fn width(self) -> u32 {
        self.ebits + self.p
    }
    fn bias(self) -> i64 {
        (1i64 << (self.ebits - 1)) - 1
    }
}

/// The canonical NaN PTX produces (`0x7FFFFFFF` for f32).
pub fn nan_bits(fmt: Fmt) -> u64 {
    let s = spec(fmt);
    (1u64 << (s.width() - 1)) - 1
}

/// An f64 NaN (bits `x`) stored in `fmt`, as a format conversion does:
/// the sign and the leading payload bits kept, the quiet bit set (f64
/// itself: unchanged). Inputs keep their NaN pattern this way, so both
/// signs of NaN can be fed to a kernel.
pub fn nan_from_f64(fmt: Fmt, x: u64) -> u64 {
    let s = spec(fmt);
    if fmt == Fmt::F64 {
        return x;
    }
    let frac = s.p - 1;
    let payload = (x & ((1u64 << 52) - 1)) >> (52 - frac);
    let sign = (x >> 63) << (s.width() - 1);
    let exp = ((1u64 << s.ebits) - 1) << frac;
    sign | exp | payload | 1u64 << (frac - 1)
}

fn sign_bit(fmt: Fmt) -> u64 {
    1u64 << (spec(fmt).width() - 1)
}

/// Decodes `bits` of `fmt`; with `ftz`, subnormals read as signed zero.
pub fn decode(fmt: Fmt, bits: u64, ftz: bool) -> Num {
    let s = spec(fmt);
    let w = s.width();
    let bits = if w == 64 {
        bits
    } else {
        bits & ((1u64 << w) - 1)
    };
    let neg = bits & sign_bit(fmt) != 0;
    let frac_bits = s.p - 1;
    let frac = bits & ((1u64 << frac_bits) - 1);
    let biased = ((bits >> frac_bits) & ((1u64 << s.ebits) - 1)) as i64;
    if biased == (1i64 << s.ebits) - 1 {
        return if frac == 0 {
            Num::Inf { neg }
        } else {
            Num::Nan
        };
    }
    if biased == 0 {
        let mag = if ftz { 0 } else { frac };
        return Num::Fin {
            neg,
            mag: BigUint::from(mag),
            exp: s.emin - i64::from(frac_bits),
        };
    }
    Num::Fin {
        neg,
        mag: BigUint::from(frac | (1u64 << frac_bits)),
        exp: biased - s.bias() - i64::from(frac_bits),
    }
}

fn zero_bits(fmt: Fmt, neg: bool) -> u64 {
    if neg { sign_bit(fmt) } else { 0 }
}

fn inf_bits(fmt: Fmt, neg: bool) -> u64 {
    let s = spec(fmt);
    zero_bits(fmt, neg) | (((1u64 << s.ebits) - 1) << (s.p - 1))
}

fn max_bits(fmt: Fmt, neg: bool) -> u64 {
    inf_bits(fmt, neg) - 1
}

/// Encodes a number exactly representable... or not: rounds
/// `(-1)^neg · (mag + sticky·ε) · 2^exp` (ε: some positive amount below one
/// unit of `mag`'s last place) to `fmt` in mode `rnd`. With `ftz`, a
/// subnormal result becomes a zero of the same sign.
pub fn round(
    fmt: Fmt,
    neg: bool,
    mag: &BigUint,
    exp: i64,
    sticky: bool,
    rnd: Rnd,
    ftz: bool,
) -> u64 {
    let s = spec(fmt);
    let p = i64::from(s.p);
    if mag.is_zero() {
        // Only a sticky remainder below any representable step.
        if !sticky {
            return zero_bits(fmt, neg);
        }
    }
    let nb = mag.bits() as i64;
    // Exponent of the leading bit; the quantum of the result.
    let lead = if mag.is_zero() {
        i64::MIN / 4
    } else {
        exp + nb - 1
    };
    let q = lead.max(s.emin) - (p - 1);
    let (mut m, rbit, st) = if q > exp {
        let sh = (q - exp) as u64;
        let m = mag >> sh;
        let rbit = sh >= 1 && mag.bit(sh - 1);
        let below = if sh >= 2 {
            let mask = (BigUint::one() << (sh - 1)) - BigUint::one();
            !(mag & mask).is_zero()
        } else {
            false
        };
        (m, rbit, below || sticky)
    } else {
        (mag << ((exp - q) as u64), false, sticky)
    };
    let inexact = rbit || st;
    let up = match rnd {
        Rnd::Rn => rbit && (st || m.bit(0)),
        Rnd::Rz => false,
        Rnd::Rm => neg && inexact,
        Rnd::Rp => !neg && inexact,
    };
    let mut q = q;
    if up {
        m += 1u32;
        if m.bits() as i64 > p {
            m >>= 1;
            q += 1;
        }
    }
    if q + p - 1 > s.emax {
        let to_inf = match rnd {
            Rnd::Rn => true,
            Rnd::Rz => false,
            Rnd::Rm => neg,
            Rnd::Rp => !neg,
        };
        return if to_inf {
            inf_bits(fmt, neg)
        } else {
            max_bits(fmt, neg)
        };
    }
    let m: u64 = m.iter_u64_digits().next().unwrap_or(0);
    let hidden = 1u64 << (s.p - 1);
    if m < hidden {
        if ftz && m != 0 {
            return zero_bits(fmt, neg);
        }
        return zero_bits(fmt, neg) | m;
    }
    let biased = (q + p - 1 + s.bias()) as u64;
    zero_bits(fmt, neg) | (biased << (s.p - 1)) | (m - hidden)
}

/// Encodes a number in `fmt` (rounding per `rnd`).
pub fn encode(fmt: Fmt, n: &Num, rnd: Rnd, ftz: bool) -> u64 {
    match n {
        Num::Nan => nan_bits(fmt),
        Num::Inf { neg } => inf_bits(fmt, *neg),
        Num::Fin { neg, mag, exp } => round(fmt, *neg, mag, *exp, false, rnd, ftz),
    }
}

fn fin(neg: bool, mag: BigUint, exp: i64) -> Num {
    Num::Fin { neg, mag, exp }
}

/// Signed sum of two finite numbers, exact; the sign of an exact zero
/// follows IEEE (−0 only for `-0 + -0`, or in round-toward-−∞).
fn add_fin(a: (bool, &BigUint, i64), b: (bool, &BigUint, i64), rnd: Rnd) -> Num {
    let e = a.2.min(b.2);
    let ma = a.1 << ((a.2 - e) as u64);
    let mb = b.1 << ((b.2 - e) as u64);
    if a.0 == b.0 {
        let m = ma + mb;
        return fin(a.0, m, e);
    }
    // Opposite signs.
    match ma.cmp(&mb) {
        std::cmp::Ordering::Greater => fin(a.0, ma - mb, e),
        std::cmp::Ordering::Less => fin(b.0, mb - ma, e),
        std::cmp::Ordering::Equal => fin(rnd == Rnd::Rm, BigUint::zero(), 0),
    }
}

/// Exact `a + b` (before rounding).
pub fn add(a: &Num, b: &Num, rnd: Rnd) -> Num {
    match (a, b) {
        (Num::Nan, _) | (_, Num::Nan) => Num::Nan,
        (Num::Inf { neg: x }, Num::Inf { neg: y }) => {
            if x == y {
                Num::Inf { neg: *x }
            } else {
                Num::Nan
            }
        }
        (Num::Inf { neg }, _) | (_, Num::Inf { neg }) => Num::Inf { neg: *neg },
        (
            Num::Fin {
                neg: na,
                mag: ma,
                exp: ea,
            },
            Num::Fin {
                neg: nb,
                mag: mb,
                exp: eb,
            },
        ) => {
            if ma.is_zero() && mb.is_zero() {
                let neg = if na == nb { *na } else { rnd == Rnd::Rm };
                return fin(neg, BigUint::zero(), 0);
            }
            add_fin((*na, ma, *ea), (*nb, mb, *eb), rnd)
        }
    }
}

pub fn neg(a: &Num) -> Num {
    match a {
        Num::Nan => Num::Nan,
        Num::Inf { neg } => Num::Inf { neg: !neg },
        Num::Fin { neg, mag, exp } => fin(!neg, mag.clone(), *exp),
    }
}

/// Exact `a · b`.
pub fn mul(a: &Num, b: &Num) -> Num {
    match (a, b) {
        (Num::Nan, _) | (_, Num::Nan) => Num::Nan,
        (Num::Inf { neg: x }, Num::Inf { neg: y }) => Num::Inf { neg: x != y },
        (Num::Inf { neg: x }, Num::Fin { neg: y, mag, .. })
        | (Num::Fin { neg: y, mag, .. }, Num::Inf { neg: x }) => {
            if mag.is_zero() {
                Num::Nan
            } else {
                Num::Inf { neg: x != y }
            }
        }
        (
            Num::Fin {
                neg: x,
                mag: ma,
                exp: ea,
            },
            Num::Fin {
                neg: y,
                mag: mb,
                exp: eb,
            },
        ) => fin(x != y, ma * mb, ea + eb),
    }
}

/// `a / b` rounded to `fmt` in mode `rnd` (correctly rounded).
pub fn div(fmt: Fmt, a: &Num, b: &Num, rnd: Rnd, ftz: bool) -> u64 {
    match (a, b) {
        (Num::Nan, _) | (_, Num::Nan) | (Num::Inf { .. }, Num::Inf { .. }) => nan_bits(fmt),
        (Num::Inf { neg: x }, Num::Fin { neg: y, .. }) => inf_bits(fmt, x != y),
        (Num::Fin { neg: x, .. }, Num::Inf { neg: y }) => zero_bits(fmt, x != y),
        (
            Num::Fin {
                neg: x,
                mag: ma,
                exp: ea,
            },
            Num::Fin {
                neg: y,
                mag: mb,
                exp: eb,
            },
        ) => {
            let neg = x != y;
            match (ma.is_zero(), mb.is_zero()) {
                (true, true) => nan_bits(fmt),
                (false, true) => inf_bits(fmt, neg),
                (true, false) => zero_bits(fmt, neg),
                (false, false) => {
                    let k =
                        (i64::from(spec(fmt).p) + 3 + mb.bits() as i64 - ma.bits() as i64).max(0);
                    let num = ma << (k as u64);
                    let q = &num / mb;
                    let sticky = !(num - &q * mb).is_zero();
                    round(fmt, neg, &q, ea - eb - k, sticky, rnd, ftz)
                }
            }
        }
    }
}

/// `√a` rounded to `fmt` in mode `rnd` (correctly rounded).
pub fn sqrt(fmt: Fmt, a: &Num, rnd: Rnd, ftz: bool) -> u64 {
    match a {
        Num::Nan | Num::Inf { neg: true } => nan_bits(fmt),
        Num::Inf { neg: false } => inf_bits(fmt, false),
        Num::Fin { neg, mag, exp } => {
            if mag.is_zero() {
                return zero_bits(fmt, *neg);
            }
            if *neg {
                return nan_bits(fmt);
            }
            // mag·2^exp = (mag·2^(2k+odd))·2^(exp−2k−odd), the exponent even.
            let want = 2 * (i64::from(spec(fmt).p) + 3);
            let k = ((want - mag.bits() as i64) / 2 + 1).max(0);
            let odd = (exp - 2 * k).rem_euclid(2);
            let m = mag << ((2 * k + odd) as u64);
            let e = exp - 2 * k - odd;
            let r = m.sqrt();
            let sticky = &r * &r != m;
            round(fmt, false, &r, e / 2, sticky, rnd, ftz)
        }
    }
}

/// The exact `f64` of a decoded number when it has one (every f16, bf16,
/// f32 and f64 value does).
pub fn to_f64(n: &Num) -> f64 {
    f64::from_bits(encode(Fmt::F64, n, Rnd::Rn, false))
}

/// An integer as a number.
pub fn from_int(v: i128) -> Num {
    fin(v < 0, BigUint::from(v.unsigned_abs()), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_round(x: f64, rnd: Rnd) -> u32 {
        round_f64(Fmt::F32, x, rnd) as u32
    }

    fn round_f64(fmt: Fmt, x: f64, rnd: Rnd) -> u64 {
        encode(fmt, &decode(Fmt::F64, x.to_bits(), false), rnd, false)
    }

    #[test]
    fn round_to_nearest_matches_host_casts() {
        let xs = [
            0.1,
            -0.1,
            1.0 / 3.0,
            3.4e38,
            3.5e38,
            -1e-40,
            1e-45,
            7e-46,
            1.5,
            2.5,
            1e300,
            -0.0,
            16777217.0,
            16777219.0,
        ];
        for x in xs {
            assert_eq!(f32_round(x, Rnd::Rn), (x as f32).to_bits(), "{x}");
        }
    }

    #[test]
    fn directed_rounding_brackets_the_value() {
        for x in [0.1f64, -0.1, 1.0 / 3.0, -2.0 / 3.0, 1e-40, 123456.789] {
            let lo = f32::from_bits(f32_round(x, Rnd::Rm));
            let hi = f32::from_bits(f32_round(x, Rnd::Rp));
            let z = f32::from_bits(f32_round(x, Rnd::Rz));
            assert!(f64::from(lo) < x && x < f64::from(hi), "{x}");
            assert!(f64::from(z).abs() <= x.abs());
            assert!(hi.to_bits().abs_diff(lo.to_bits()) == 1 || x < 0.0);
        }
        // Overflow: toward zero keeps the largest finite value.
        assert_eq!(f32_round(1e39, Rnd::Rz), f32::MAX.to_bits());
        assert_eq!(f32_round(1e39, Rnd::Rn), f32::INFINITY.to_bits());
        assert_eq!(f32_round(-1e39, Rnd::Rp), (-f32::MAX).to_bits());
    }

    #[test]
    fn halves_round_like_the_half_crate() {
        for x in [0.1f64, 65504.0, 65520.0, 1e-7, -3.25, 6e-8] {
            assert_eq!(
                round_f64(Fmt::F16, x, Rnd::Rn) as u16,
                half::f16::from_f64(x).to_bits(),
                "{x}"
            );
            assert_eq!(
                round_f64(Fmt::Bf16, x, Rnd::Rn) as u16,
                half::bf16::from_f64(x).to_bits(),
                "{x}"
            );
        }
    }

    #[test]
    fn fma_rounds_once() {
        // a·b + c where the exact result needs more than f64 precision.
        let a = decode(Fmt::F32, 1.0000001f32.to_bits().into(), false);
        let c = decode(Fmt::F32, (-1.0000002f32).to_bits().into(), false);
        let r = add(&mul(&a, &a), &c, Rnd::Rn);
        let got = f32::from_bits(encode(Fmt::F32, &r, Rnd::Rn, false) as u32);
        assert_eq!(got, 1.0000001f32.mul_add(1.0000001, -1.0000002));
        // Exact cancellation gives +0 (−0 when rounding down).
        let one = decode(Fmt::F32, 1f32.to_bits().into(), false);
        let m1 = neg(&one);
        assert_eq!(
            encode(Fmt::F32, &add(&one, &m1, Rnd::Rn), Rnd::Rn, false),
            0
        );
        assert_eq!(
            encode(Fmt::F32, &add(&one, &m1, Rnd::Rm), Rnd::Rm, false),
            0x8000_0000
        );
    }

    #[test]
    fn division_and_sqrt_are_correctly_rounded() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let (a, b) = (
                f32::from_bits((seed >> 32) as u32 & 0x7f7f_ffff),
                f32::from_bits(seed as u32),
            );
            if !a.is_finite() || !b.is_finite() {
                continue;
            }
            let na = decode(Fmt::F32, a.to_bits().into(), false);
            let nb = decode(Fmt::F32, b.to_bits().into(), false);
            let q = f32::from_bits(div(Fmt::F32, &na, &nb, Rnd::Rn, false) as u32);
            assert_eq!(q.to_bits(), (a / b).to_bits(), "{a} / {b}");
            let r = f32::from_bits(sqrt(Fmt::F32, &na, Rnd::Rn, false) as u32);
            assert_eq!(r.to_bits(), a.sqrt().to_bits(), "sqrt {a}");
            let s =
                f32::from_bits(encode(Fmt::F32, &add(&na, &nb, Rnd::Rn), Rnd::Rn, false) as u32);
            assert_eq!(s.to_bits(), (a + b).to_bits(), "{a} + {b}");
        }
    }

    #[test]
    fn flush_to_zero() {
        let tiny = decode(Fmt::F32, 1, true);
        assert_eq!(to_f64(&tiny), 0.0);
        assert!(round_f64(Fmt::F32, 1e-40, Rnd::Rn) & 0x7fff_ffff != 0);
        let n = decode(Fmt::F64, 1e-40f64.to_bits(), false);
        assert_eq!(encode(Fmt::F32, &n, Rnd::Rn, true), 0);
    }
}
