//! The narrow float formats of fp8/fp6/fp4 tensor-core kernels, decoded
//! to exact values and encoded with the conversions' rounding.
//!
//! PTX ISA, "Alternate Floating Point Data Formats": every format is
//! sign, `E` exponent bits with bias `2^(E-1) - 1`, `M` mantissa bits,
//! with subnormals (exponent field 0: `0.m · 2^(1-bias)`). They differ in
//! what the all-ones exponent field means:
//!
//! | format | E | M | bias | specials                                  | largest finite |
//! |--------|---|---|------|-------------------------------------------|----------------|
//! | e4m3   | 4 | 3 | 7    | no infinity; `S.1111.111` is the one NaN  | 448            |
//! | e5m2   | 5 | 2 | 15   | IEEE: `S.11111.00` ±∞, other mantissas NaN | 57344          |
//! | e2m3   | 2 | 3 | 1    | none (fp6)                                | 7.5            |
//! | e3m2   | 3 | 2 | 3    | none (fp6)                                | 28             |
//! | e2m1   | 2 | 1 | 1    | none (fp4)                                | 6              |
//!
//! Every value of these formats is exactly an f16, an f32 and an f64
//! value, so a decoded element is an exact real: symbolic inputs of these
//! dtypes enter the terms as reals like f16 ones, and constants decode
//! exactly ([`Narrow::decode`]).
//!
//! Encoding ([`Narrow::encode_rn_satfinite`]) is what `cvt.rn.satfinite`
//! to these formats does: round to nearest, ties to an even mantissa;
//! magnitudes beyond the largest finite value (and ±∞) become ± that
//! value; NaN stays NaN in the formats that have one (e4m3, e5m2) and
//! has no encoding in the others (`None`).

/// One narrow float format.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Narrow {
    E4m3,
    E5m2,
    E2m3,
    E3m2,
    E2m1,
}

/// A decoded narrow value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NarrowVal {
    Nan,
    Inf {
        neg: bool,
    },
    /// `(-1)^neg · mag · 2^exp` (zero is `mag = 0`, signed).
    Fin {
        neg: bool,
        mag: u32,
        exp: i32,
    },
}

impl Narrow {
    /// Every format, for tables and tests.
    pub const ALL: [Narrow; 5] = [
        Narrow::E4m3,
        Narrow::E5m2,
        Narrow::E2m3,
        Narrow::E3m2,
        Narrow::E2m1,
    ];

    /// The PTX type word (`.e4m3`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Narrow::E4m3 => "e4m3",
            Narrow::E5m2 => "e5m2",
            Narrow::E2m3 => "e2m3",
            Narrow::E3m2 => "e3m2",
            Narrow::E2m1 => "e2m1",
        }
    }

    /// (exponent bits, mantissa bits).
    fn em(self) -> (u32, u32) {
        match self {
            Narrow::E4m3 => (4, 3),
            Narrow::E5m2 => (5, 2),
            Narrow::E2m3 => (2, 3),
            Narrow::E3m2 => (3, 2),
            Narrow::E2m1 => (2, 1),
        }
    }

    /// Width of the encoding in bits (8, 6 or 4).
    pub fn width(self) -> u32 {
        let (e, m) = self.em();
        1 + e + m
    }

    fn bias(self) -> i32 {
        (1 << (self.em().0 - 1)) - 1
    }

    /// The exact value of the low [`Narrow::width`] bits of `bits`.
    pub fn decode(self, bits: u64) -> NarrowVal {
        let (e, m) = self.em();
        let bits = bits & ((1u64 << self.width()) - 1);
        let neg = (bits >> (e + m)) & 1 == 1;
        let ef = ((bits >> m) & ((1 << e) - 1)) as i32;
        let mf = (bits & ((1 << m) - 1)) as u32;
        let all_ones = ef == (1 << e) - 1;
        match self {
            Narrow::E5m2 if all_ones => {
                return if mf == 0 {
                    NarrowVal::Inf { neg }
                } else {
                    NarrowVal::Nan
                };
            }
            Narrow::E4m3 if all_ones && mf == (1 << m) - 1 => return NarrowVal::Nan,
            _ => {}
        }
        let (mag, exp) = if ef == 0 {
            (mf, 1 - self.bias() - m as i32)
        } else {
            (mf | (1 << m), ef - self.bias() - m as i32)
        };
        NarrowVal::Fin { neg, mag, exp }
    }

    /// The value as an f64 (exact; NaN and ±∞ as themselves).
    pub fn to_f64(self, bits: u64) -> f64 {
        match self.decode(bits) {
            NarrowVal::Nan => f64::NAN,
            NarrowVal::Inf { neg } => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            NarrowVal::Fin { neg, mag, exp } => {
                let x = f64::from(mag) * 2f64.powi(exp);
                if neg { -x } else { x }
            }
        }
    }

    /// The largest finite value.
    pub fn max_finite(self) -> f64 {
        self.positive_codes()
            .map(|c| self.to_f64(c))
            .fold(0.0, f64::max)
    }

    /// The non-negative finite encodings, in increasing order of value.
    fn positive_codes(self) -> impl Iterator<Item = u64> {
        let n = 1u64 << (self.width() - 1);
        (0..n).filter(move |&c| matches!(self.decode(c), NarrowVal::Fin { .. }))
    }

    /// `cvt.rn.satfinite` of `x` to this format: round to nearest (ties
    /// to the even encoding), saturating at ± the largest finite value;
    /// NaN gives the NaN encoding where the format has one, `None` where
    /// it has none.
    pub fn encode_rn_satfinite(self, x: f64) -> Option<u64> {
        let sign = (x.is_sign_negative() as u64) << (self.width() - 1);
        if x.is_nan() {
            return match self {
                Narrow::E4m3 => Some(0x7F),
                Narrow::E5m2 => Some(0x7F),
                _ => None,
            };
        }
        // Saturation first: beyond the largest finite value (±∞ too) the
        // result is that value.
        let a = x.abs().min(self.max_finite());
        // The formats have at most 128 non-negative encodings: the nearest
        // is found by a scan (values increase with the encoding).
        let mut best = 0u64;
        let mut best_d = f64::INFINITY;
        for c in self.positive_codes() {
            let d = (self.to_f64(c) - a).abs();
            if d < best_d || (d == best_d && c & 1 == 0) {
                best = c;
                best_d = d;
            }
        }
        Some(sign | best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isa_table_values() {
        // e4m3: 0x38 = 0.0111.000 = 1.0; 0x7E = 0.1111.110 = 448 (the
        // largest finite: no infinity); 0x7F NaN; 0x01 = 2^-9.
        let e = Narrow::E4m3;
        assert_eq!(e.to_f64(0x38), 1.0);
        assert_eq!(e.to_f64(0x7E), 448.0);
        assert_eq!(e.to_f64(0xFE), -448.0);
        assert!(e.to_f64(0x7F).is_nan() && e.to_f64(0xFF).is_nan());
        assert_eq!(e.to_f64(0x78), 256.0);
        assert_eq!(e.to_f64(0x01), 2f64.powi(-9));
        assert_eq!(e.to_f64(0x08), 2f64.powi(-6));
        assert_eq!(e.max_finite(), 448.0);
        // e5m2: IEEE-like.
        let e = Narrow::E5m2;
        assert_eq!(e.to_f64(0x3C), 1.0);
        assert_eq!(e.to_f64(0x7B), 57344.0);
        assert_eq!(e.to_f64(0x7C), f64::INFINITY);
        assert_eq!(e.to_f64(0xFC), f64::NEG_INFINITY);
        assert!(e.to_f64(0x7D).is_nan());
        assert_eq!(e.to_f64(0x01), 2f64.powi(-16));
        assert_eq!(e.max_finite(), 57344.0);
        // fp6 / fp4: no specials.
        assert_eq!(Narrow::E2m3.to_f64(0x1F), 7.5);
        assert_eq!(Narrow::E2m3.to_f64(0x01), 0.125);
        assert_eq!(Narrow::E2m3.to_f64(0x3F), -7.5);
        assert_eq!(Narrow::E3m2.to_f64(0x1F), 28.0);
        assert_eq!(Narrow::E3m2.to_f64(0x01), 0.0625);
        assert_eq!(Narrow::E3m2.to_f64(0x0C), 1.0);
        let fp4: Vec<f64> = (0..8).map(|c| Narrow::E2m1.to_f64(c)).collect();
        assert_eq!(fp4, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(Narrow::E2m1.to_f64(0xF), -6.0);
        for f in Narrow::ALL {
            assert!(f.max_finite().is_finite());
        }
    }

    #[test]
    fn decode_is_exact_rational() {
        assert_eq!(
            Narrow::E4m3.decode(0x3F),
            NarrowVal::Fin {
                neg: false,
                mag: 15,
                exp: -3
            }
        );
        assert_eq!(
            Narrow::E4m3.decode(0x80),
            NarrowVal::Fin {
                neg: true,
                mag: 0,
                exp: -9
            }
        );
    }

    #[test]
    fn round_trip_every_finite_code() {
        for f in Narrow::ALL {
            for c in 0..(1u64 << f.width()) {
                let x = f.to_f64(c);
                if x.is_finite() {
                    assert_eq!(f.encode_rn_satfinite(x), Some(c), "{f:?} {c:#x}");
                }
            }
        }
    }

    #[test]
    fn rounding_and_saturation() {
        let e = Narrow::E4m3;
        // 1.0625 is halfway between 1.0 (0x38, even) and 1.125 (0x39).
        assert_eq!(e.encode_rn_satfinite(1.0625), Some(0x38));
        // 1.1875 halfway between 1.125 (0x39) and 1.25 (0x3A, even).
        assert_eq!(e.encode_rn_satfinite(1.1875), Some(0x3A));
        assert_eq!(e.encode_rn_satfinite(1.1), Some(0x39));
        assert_eq!(e.encode_rn_satfinite(1000.0), Some(0x7E));
        assert_eq!(e.encode_rn_satfinite(f64::NEG_INFINITY), Some(0xFE));
        assert_eq!(e.encode_rn_satfinite(f64::NAN), Some(0x7F));
        assert_eq!(e.encode_rn_satfinite(-0.0), Some(0x80));
        assert_eq!(e.encode_rn_satfinite(1e-10), Some(0x00));
        assert_eq!(Narrow::E5m2.encode_rn_satfinite(f64::INFINITY), Some(0x7B));
        assert_eq!(Narrow::E2m1.encode_rn_satfinite(5.0), Some(0x6)); // 4 (even) vs 6
        assert_eq!(Narrow::E2m1.encode_rn_satfinite(2.5), Some(0x4)); // 2 (even) vs 3
        assert_eq!(Narrow::E2m1.encode_rn_satfinite(-7.0), Some(0xF));
        assert_eq!(Narrow::E2m1.encode_rn_satfinite(f64::NAN), None);
    }
}
