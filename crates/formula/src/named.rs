//! Named constants (`log2(e)`, `sqrt(2 / pi)`, `1 / pi`, …) on both sides
//! of a formula check.
//!
//! The decision procedure reads a kernel's rounded irrational constants as
//! the exact constants they round (docs/semantics.md §5: the f64 or f32
//! rounding of a table entry, up to sign and a power of two `2^k`,
//! `|k| ≤ 6`). This module is the formula language's half of that
//! convention:
//!
//! - **Folding** ([`fold`]): a closed real sub-expression of a formula
//!   (no index, tensor or scalar in it) that involves `pi`, `e` or a
//!   transcendental function and whose `f64` value lies within a few ulps
//!   of `±2^k·C` for a table constant `C` is instantiated as the `f64`
//!   rounding of `±2^k·C` — the literal the decision procedure recovers as
//!   exactly `±2^k·C`. So a formula's `sqrt(2 / pi)` meets a kernel's
//!   `0.7978845608f` as the same real, where `sqrt` of the rational `2/π₆₄`
//!   would not. The recovery is listed among the report's constant
//!   recoveries like any other.
//! - **Naming** ([`name_of`]): a lifted formula prints a kernel constant
//!   that is such a rounding as its name (`1/16 * log2(e)` for
//!   `12102203/134217728`), not as the rational; the lift verifies the
//!   named text, and falls back to the rationals if that does not verify.
//!
//! The table mirrors `ptxeq_decide`'s (`normal/consts.rs`) and must name
//! only constants that table recovers: a fold to a constant the decision
//! procedure does not recover would replace an exact value by a rounding.

use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};

use std::f64::consts as c;

/// A named constant: its formula text and its `f64` value; `half`: its
/// f16 and bf16 roundings are recovered too.
struct Named {
    text: &'static str,
    value: f64,
    half: bool,
}

const TABLE: &[Named] = &[
    Named {
        text: "log2(e)",
        value: c::LOG2_E,
        half: true,
    },
    Named {
        text: "log(2)",
        value: c::LN_2,
        half: true,
    },
    Named {
        text: "log(2) / log(10)",
        value: c::LOG10_2,
        half: false,
    },
    Named {
        text: "log2(10)",
        value: c::LOG2_10,
        half: false,
    },
    Named {
        text: "log(10)",
        value: c::LN_10,
        half: false,
    },
    Named {
        text: "1 / log(10)",
        value: c::LOG10_E,
        half: false,
    },
    Named {
        text: "pi",
        value: c::PI,
        half: false,
    },
    Named {
        text: "1 / pi",
        value: c::FRAC_1_PI,
        half: false,
    },
    Named {
        text: "sqrt(2)",
        value: c::SQRT_2,
        half: false,
    },
    Named {
        text: "rsqrt(2)",
        value: c::FRAC_1_SQRT_2,
        half: false,
    },
    Named {
        text: "sqrt(2 / pi)",
        value: 0.797_884_560_802_865_4,
        half: false,
    },
    Named {
        text: "2 / sqrt(pi)",
        value: c::FRAC_2_SQRT_PI,
        half: false,
    },
    Named {
        text: "rsqrt(2 * pi)",
        value: 0.398_942_280_401_432_7,
        half: false,
    },
];

/// The power-of-two scalings the decision procedure recovers.
const MAX_SHIFT: i32 = 6;

/// How many ulps a closed sub-expression's `f64` value may be from a
/// table constant to be read as it (its own `f64` evaluation rounds once
/// per operation).
const FOLD_ULPS: f64 = 4.0;

/// `v` rounded to nearest-even with a `p`-bit significand (normal range).
fn round_to_bits(v: f64, p: i32) -> f64 {
    let e = v.abs().log2().floor() as i32;
    let scale = 2f64.powi(p - 1 - e);
    (v * scale).round_ties_even() / scale
}

/// The value a closed sub-expression with `f64` value `x` folds to: the
/// `f64` rounding of `±2^k·C` (exact: scaling by a power of two) when `x`
/// is within [`FOLD_ULPS`] of it.
pub(crate) fn fold(x: f64) -> Option<BigRational> {
    if !x.is_finite() || x == 0.0 {
        return None;
    }
    let ulp = (x.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
    for k in TABLE {
        for shift in -MAX_SHIFT..=MAX_SHIFT {
            let v = x.signum() * k.value * 2f64.powi(shift);
            if (x - v).abs() <= FOLD_ULPS * ulp {
                return BigRational::from_float(v);
            }
        }
    }
    None
}

/// The formula text of `r` when it is exactly a rounding (f64, f32, and
/// for `log2(e)`, `log(2)` f16/bf16) of `±2^k·C` for a table constant `C`:
/// `log2(e)`, `1/16 * log2(e)`, `-2 * sqrt(2 / pi)`.
pub fn name_of(r: &BigRational) -> Option<String> {
    if r.is_zero() {
        return None;
    }
    let x = r.to_f64()?;
    let a = r.abs();
    for k in TABLE {
        let mut roundings = vec![k.value, round_to_bits(k.value, 24)];
        if k.half {
            roundings.push(round_to_bits(k.value, 11));
            roundings.push(round_to_bits(k.value, 8));
        }
        for v in roundings {
            for shift in -MAX_SHIFT..=MAX_SHIFT {
                let s = 2f64.powi(shift);
                if (x.abs() - v * s).abs() > v * s * 1e-6 {
                    continue;
                }
                if BigRational::from_float(v * s).as_ref() != Some(&a) {
                    continue;
                }
                let coef = match shift {
                    0 => String::new(),
                    s if s > 0 => format!("{} * ", 1u64 << s),
                    s => format!("1/{} * ", 1u64 << -s),
                };
                let sign = if r.is_negative() { "-" } else { "" };
                return Some(format!("{sign}{coef}{}", k.text));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rat(n: i64, d: i64) -> BigRational {
        BigRational::new(n.into(), d.into())
    }

    #[test]
    fn kernel_roundings_are_named() {
        // f32 log2 e, and log2 e / 16 (an FA2 kernel's scale · log2 e).
        assert_eq!(name_of(&rat(12102203, 8388608)).as_deref(), Some("log2(e)"));
        assert_eq!(
            name_of(&rat(12102203, 134217728)).as_deref(),
            Some("1/16 * log2(e)")
        );
        // 0.7978845608f: sqrt(2/pi) in f32.
        assert_eq!(
            name_of(&rat(6693141, 8388608)).as_deref(),
            Some("sqrt(2 / pi)")
        );
        // Not a rounding of a named constant: the decimal 0.044715 in f32.
        assert_eq!(name_of(&rat(12003091, 268435456)), None);
        assert_eq!(name_of(&rat(1, 8)), None);
    }

    #[test]
    fn closed_values_fold_to_the_recovered_rounding() {
        let x = (2.0 / c::PI).sqrt();
        assert_eq!(fold(x), BigRational::from_float(0.797_884_560_802_865_4));
        assert_eq!(
            fold(-c::LOG2_E / 16.0),
            BigRational::from_float(-c::LOG2_E / 16.0)
        );
        assert_eq!(fold(0.5), None);
        assert_eq!(fold(c::E), None);
    }
}
