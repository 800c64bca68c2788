//! Constant recovery (docs/semantics.md §5): compilers multiply by rounded
//! irrational constants (`ex2(x · 0f3FB8AA3B)` is Triton's and `__expf`'s
//! `exp(x)`); the normal form reads such a rational as the exact constant
//! it rounds, expressed over the invertible atoms `ln2`, `ln10`, `√π`,
//! `√2`.
//!
//! A constant is recovered only when it is *exactly* the nearest f64 or f32
//! of a table entry (and, for the two base-2 constants half-precision code
//! uses, the nearest f16 or bf16), ± a power of two times one, or an exact
//! product of a float with an f32/f64 rounding (see [`recover`]). This
//! changes the function (rounded → exact), which is the real-valued
//! convention of docs/semantics.md §2; every recovery is recorded by the
//! normaliser and listed in the report.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::poly::{Atom, Monomial};
use crate::Rat;

/// One recovery: which constant, and the literal it was read from.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Recovery {
    /// The exact constant, e.g. `log2 e`.
    pub name: String,
    /// The rational seen in the term, e.g. `12102203/8388608`.
    pub value_seen: String,
    /// The format whose rounding it is: `f64`, `f32`, `f16` or `bf16`.
    pub format: String,
}

/// A recognised constant: its name, its `f64` value, its exact form
/// `coef · Π atom^e`, and whether half-precision roundings count.
struct Known {
    name: &'static str,
    value: f64,
    coef: (i64, i64),
    atoms: &'static [(Atom, i32)],
    half: bool,
}

use std::f64::consts as c;

const TABLE: &[Known] = &[
    Known {
        name: "log2 e",
        value: c::LOG2_E,
        coef: (1, 1),
        atoms: &[(Atom::Ln2, -1)],
        half: true,
    },
    Known {
        name: "ln 2",
        value: c::LN_2,
        coef: (1, 1),
        atoms: &[(Atom::Ln2, 1)],
        half: true,
    },
    Known {
        name: "log10 2",
        value: c::LOG10_2,
        coef: (1, 1),
        atoms: &[(Atom::Ln2, 1), (Atom::Ln10, -1)],
        half: false,
    },
    Known {
        name: "log2 10",
        value: c::LOG2_10,
        coef: (1, 1),
        atoms: &[(Atom::Ln2, -1), (Atom::Ln10, 1)],
        half: false,
    },
    Known {
        name: "ln 10",
        value: c::LN_10,
        coef: (1, 1),
        atoms: &[(Atom::Ln10, 1)],
        half: false,
    },
    Known {
        name: "log10 e",
        value: c::LOG10_E,
        coef: (1, 1),
        atoms: &[(Atom::Ln10, -1)],
        half: false,
    },
    Known {
        name: "π",
        value: c::PI,
        coef: (1, 1),
        atoms: &[(Atom::SqrtPi, 2)],
        half: false,
    },
    Known {
        name: "1/π",
        value: c::FRAC_1_PI,
        coef: (1, 1),
        atoms: &[(Atom::SqrtPi, -2)],
        half: false,
    },
    Known {
        name: "√2",
        value: c::SQRT_2,
        coef: (1, 1),
        atoms: &[(Atom::Sqrt2, 1)],
        half: false,
    },
    Known {
        name: "1/√2",
        value: c::FRAC_1_SQRT_2,
        coef: (1, 2),
        atoms: &[(Atom::Sqrt2, 1)],
        half: false,
    },
    Known {
        name: "√(2/π)",
        value: 0.797_884_560_802_865_4,
        coef: (1, 1),
        atoms: &[(Atom::Sqrt2, 1), (Atom::SqrtPi, -1)],
        half: false,
    },
    Known {
        name: "2/√π",
        value: c::FRAC_2_SQRT_PI,
        coef: (2, 1),
        atoms: &[(Atom::SqrtPi, -1)],
        half: false,
    },
    Known {
        name: "1/√(2π)",
        value: 0.398_942_280_401_432_7,
        coef: (1, 2),
        atoms: &[(Atom::Sqrt2, 1), (Atom::SqrtPi, -1)],
        half: false,
    },
];

/// `v` rounded to nearest-even with a `p`-bit significand (normal range).
fn round_to_bits(v: f64, p: i32) -> f64 {
    let e = v.abs().log2().floor() as i32;
    let scale = 2f64.powi(p - 1 - e);
    (v * scale).round_ties_even() / scale
}

/// The exact rational value of a finite `f64` ([`Rat::of_f64`]).
pub(crate) fn rat_of_f64(v: f64) -> Option<Rat> {
    Rat::of_f64(v)
}

/// Rounded value → (table index, format name).
fn index() -> &'static HashMap<Rat, (usize, &'static str)> {
    static INDEX: OnceLock<HashMap<Rat, (usize, &'static str)>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut m = HashMap::new();
        for (i, k) in TABLE.iter().enumerate() {
            let mut formats = vec![("f64", k.value), ("f32", round_to_bits(k.value, 24))];
            if k.half {
                formats.push(("f16", round_to_bits(k.value, 11)));
                formats.push(("bf16", round_to_bits(k.value, 8)));
            }
            for (name, v) in formats {
                if let Some(r) = rat_of_f64(v) {
                    m.entry(r).or_insert((i, name));
                }
            }
        }
        m
    })
}

/// The f32 and f64 roundings of every table entry: (entry, format, value).
fn roundings() -> &'static [(usize, &'static str, Rat)] {
    static LIST: OnceLock<Vec<(usize, &'static str, Rat)>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut v = Vec::new();
        for (i, k) in TABLE.iter().enumerate() {
            for (name, x) in [("f64", k.value), ("f32", round_to_bits(k.value, 24))] {
                if let Some(r) = rat_of_f64(x) {
                    v.push((i, name, r));
                }
            }
        }
        v
    })
}

/// Whether `q` is a binary floating-point value (dyadic) whose odd part
/// has at most 53 bits.
fn is_float_value(q: &Rat) -> bool {
    let (n, d) = q.parts();
    if n.sign() == num_bigint::Sign::NoSign {
        return false;
    }
    let d_pow2 = d.magnitude().count_ones() == 1;
    let n = n.magnitude();
    let odd_bits = n.bits() - n.trailing_zeros().unwrap_or(0);
    d_pow2 && odd_bits <= 53
}

/// The exact form of `r` if it is a recognised rounded constant, up to
/// sign and a power-of-two factor `2^k`, `|k| ≤ 6` (scaling by a power of
/// two is exact in binary floating point, so `2·log2 e` rounded is
/// `2·round(log2 e)`; f32/f64 only), or, failing that, an exact product
/// `q · round(C)` of a float `q` with an f32/f64-rounded constant (what
/// real arithmetic makes of `sm_scale · 1.44269504f` computed in the
/// kernel; an odd 24- or 53-bit mantissa divides a literal's mantissa
/// only by accident, so a literal is not misread): coefficient, monomial,
/// the recovery record, and the exact constant's nearest `f64`.
pub(crate) fn recover(r: &Rat) -> Option<(Rat, Monomial, Recovery, f64)> {
    if r.is_zero() {
        return None;
    }
    scaled_by_power_of_two(r).or_else(|| scaled_by_float(r))
}

fn scaled_by_float(r: &Rat) -> Option<(Rat, Monomial, Recovery, f64)> {
    // Both factors rounded constants (`c1·(c2·x)` folded, whichever
    // operand order the kernel wrote: GELU's `-2·√(2/π)` times `log2 e`):
    // read both, rather than one of them literally.
    for (i, format, v) in roundings() {
        let q = r.mul(&v.recip()?);
        let Some((qc, qm, qrec, qv)) = scaled_by_power_of_two(&q) else {
            continue;
        };
        let k = &TABLE[*i];
        let (m, f) = Monomial::from_factors(k.atoms.to_vec())?;
        let (m, g) = m.mul(&qm);
        let coef = Rat::new(k.coef.0, k.coef.1)?.mul(&f).mul(&g).mul(&qc);
        return Some((
            coef,
            m,
            Recovery {
                name: format!("{} · {}", qrec.name, k.name),
                value_seen: r.to_string(),
                format: if qrec.format == *format {
                    (*format).into()
                } else {
                    format!("{}·{format}", qrec.format)
                },
            },
            qv * k.value,
        ));
    }
    for (i, format, v) in roundings() {
        let q = r.mul(&v.recip()?);
        if !is_float_value(&q) {
            continue;
        }
        let k = &TABLE[*i];
        let (m, f) = Monomial::from_factors(k.atoms.to_vec())?;
        let coef = Rat::new(k.coef.0, k.coef.1)?.mul(&f).mul(&q);
        return Some((
            coef,
            m,
            Recovery {
                name: format!("{q} · {}", k.name),
                value_seen: r.to_string(),
                format: (*format).into(),
            },
            q.to_f64() * k.value,
        ));
    }
    None
}

fn scaled_by_power_of_two(r: &Rat) -> Option<(Rat, Monomial, Recovery, f64)> {
    let sign = if r.is_negative() { -1 } else { 1 };
    let mag = r.abs();
    for k in 0..=12i32 {
        // 0, 1, -1, 2, -2, ...
        let e = if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) };
        let scaled = mag.mul(&Rat::from_mantissa_exp(1, -e));
        let Some(&(i, format)) = index().get(&scaled) else {
            continue;
        };
        if e != 0 && !matches!(format, "f32" | "f64") {
            continue;
        }
        let k = &TABLE[i];
        let (m, f) = Monomial::from_factors(k.atoms.to_vec())?;
        let factor = Rat::from_mantissa_exp(i128::from(sign), e);
        let coef = Rat::new(k.coef.0, k.coef.1)?.mul(&f).mul(&factor);
        let name = if factor.is_one() {
            k.name.to_string()
        } else {
            format!("{factor} · {}", k.name)
        };
        return Some((
            coef,
            m,
            Recovery {
                name,
                value_seen: r.to_string(),
                format: format.into(),
            },
            factor.to_f64() * k.value,
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_rat(bits: u32) -> Rat {
        rat_of_f64(f64::from(f32::from_bits(bits))).unwrap()
    }

    #[test]
    fn known_f32_bit_patterns_are_recovered() {
        for (bits, name) in [
            (0x3FB8_AA3B, "log2 e"),
            (0x3F31_7218, "ln 2"),
            (0x4049_0FDB, "π"),
            (0x3F35_04F3, "1/√2"),
            (0x3FB5_04F3, "√2"),
            (0x3F4C_422A, "√(2/π)"),
            (0x40C9_0FDB, "2 · π"),
        ] {
            let (_, _, rec, _) = recover(&f32_rat(bits)).unwrap_or_else(|| panic!("{bits:#x}"));
            assert_eq!(rec.name, name);
            assert_eq!(rec.format, "f32");
        }
        assert_eq!(
            f32_rat(0x3FB8_AA3B),
            Rat::new(12_102_203, 8_388_608).unwrap()
        );
    }

    #[test]
    fn f64_and_half_roundings() {
        let (_, _, rec, _) = recover(&rat_of_f64(c::LOG2_E).unwrap()).unwrap();
        assert_eq!((rec.name.as_str(), rec.format.as_str()), ("log2 e", "f64"));
        // f16 log2 e = 0x3DC5 = 1.4423828125.
        let (_, _, rec, _) = recover(&rat_of_f64(1.442_382_812_5).unwrap()).unwrap();
        assert_eq!(rec.format, "f16");
    }

    #[test]
    fn signs_and_powers_of_two() {
        // Triton's tanh: ex2(x · 2·log2 e) with the folded f32 constant.
        let (c, _, rec, v) = recover(&f32_rat(0x4038_AA3B)).unwrap();
        assert_eq!(rec.name, "2 · log2 e");
        assert_eq!(c, Rat::from_i64(2));
        assert!((v - 2.0 * c::LOG2_E).abs() < 1e-15);
        let (c, _, rec, _) = recover(&f32_rat(0xBFB8_AA3B)).unwrap();
        assert_eq!((rec.name.as_str(), c), ("-1 · log2 e", Rat::MINUS_ONE));
        let (_, _, rec, _) = recover(&f32_rat(0x3F49_0FDB)).unwrap();
        assert_eq!(rec.name, "1/4 · π");
        // bf16 ln 2 scaled is not recovered (8 bits are too few).
        assert!(recover(&rat_of_f64(0.691_406_25 * 2.0).unwrap()).is_none());
    }

    #[test]
    fn exact_products_with_a_float() {
        // sm_scale · 1.44269504f folded exactly (1/√96 as an f32).
        let scale = rat_of_f64(f64::from(0.102_062_07_f32)).unwrap();
        let r = scale.mul(&f32_rat(0x3FB8_AA3B));
        let (c, _, rec, _) = recover(&r).unwrap();
        assert_eq!(c, scale);
        assert!(rec.name.ends_with("· log2 e"), "{}", rec.name);
        // An f32 literal near such a product is not recovered.
        let rounded = rat_of_f64(f64::from(0.102_062_07_f32 * std::f32::consts::LOG2_E)).unwrap();
        assert!(recover(&rounded).is_none());
    }

    #[test]
    fn products_of_two_rounded_constants_read_both() {
        // Triton's GELU: ex2(x · (-2·√(2/π))_f32 · (log2 e)_f32), the two
        // f32 constants folded into one rational whichever operand order
        // the kernel used.
        let a = f32_rat(0xBFCC_422A); // -2·√(2/π) as f32
        let b = f32_rat(0x3FB8_AA3B); // log2 e as f32
        let (c, m, rec, v) = recover(&a.mul(&b)).unwrap();
        assert!(
            rec.name.contains("√(2/π)") && rec.name.contains("log2 e"),
            "{}",
            rec.name
        );
        assert!((v - (-2.0 * 0.797_884_560_802_865_4 * c::LOG2_E)).abs() < 1e-12);
        // The same as recovering the factors one by one and multiplying.
        let (ca, ma, _, _) = recover(&a).unwrap();
        let (cb, mb, _, _) = recover(&b).unwrap();
        let (mab, g) = ma.mul(&mb);
        assert_eq!((c, m), (ca.mul(&cb).mul(&g), mab));
    }

    #[test]
    #[allow(clippy::approx_constant)] // near misses on purpose
    fn ordinary_constants_are_left_alone() {
        for v in [0.044_715, 0.5, 1.0, 3.14, 1.4426950408889, 0.79788456] {
            assert!(recover(&rat_of_f64(v).unwrap()).is_none(), "{v}");
        }
        // GELU's 0.044715 as an f32 literal is not recovered either.
        assert!(recover(&f32_rat(0x3D37_2713)).is_none());
    }
}
