//! Uninterpreted function symbols (a spec's `[functions] f =
//! "uninterpreted"`): `f(a, b, …)` is a [`crate::Node::Apply`] over
//! canonical argument terms, an atom to the normal form, so an equivalence
//! proved with it holds for *every* function `f` could be.
//!
//! A counterexample needs one function, though: it is evaluated with a
//! fixed, deterministic [`Interpretation`] per name and arity — a
//! quadratic polynomial with small dyadic coefficients taken from a hash
//! of the name — so a witness can be replayed and is printed with the
//! interpretation it used. Two different names almost always get
//! different polynomials; where a chosen interpretation happens to make
//! two different terms equal, the element is `unknown`, never `proved`.
//!
//! Arguments may be ±inf (FlashAttention's `exp(-inf - m)` for an empty
//! running max): the interpretation is then the constant `c/16`, a value
//! like any other — the normal form still keeps `f(-inf)` an atom of its
//! own, so no proof depends on that choice.

use std::fmt;

use xxhash_rust::xxh3::xxh3_64;

use crate::Rat;

/// Coefficients are multiples of `1/DENOMINATOR`.
pub const DENOMINATOR: i64 = 16;

/// `f(x₁…xₙ) = (c + Σ lᵢ·xᵢ + q·(Σ xᵢ)²) / 16`, the function a
/// counterexample uses for the uninterpreted symbol `name`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Interpretation {
    pub name: String,
    /// `c` (never 0).
    pub constant: i64,
    /// `lᵢ`, one per argument (never 0).
    pub linear: Vec<i64>,
    /// `q` (never 0).
    pub square: i64,
}

impl Interpretation {
    /// The interpretation of `name` with `arity` arguments.
    pub fn of(name: &str, arity: usize) -> Interpretation {
        let h = xxh3_64(name.as_bytes());
        let pick = |shift: u32, modulus: u64| ((h.rotate_right(shift) % modulus) + 1) as i64;
        let linear = (0..arity)
            .map(|i| {
                let v = pick(8 + 5 * (i as u32 % 11), 15);
                if (h >> (i % 64)) & 1 == 1 { -v } else { v }
            })
            .collect();
        Interpretation {
            name: name.to_owned(),
            constant: 8 + pick(0, 8),
            linear,
            square: pick(3, 5),
        }
    }

    /// Its value where an argument is ±inf: `c/16`.
    pub fn at_infinity(&self) -> Rat {
        Rat::from_i64(self.constant).mul(&Rat::from_i64(DENOMINATOR).recip().expect("nonzero"))
    }

    /// Its value at `args` in `f64`.
    pub fn eval_f64(&self, args: &[f64]) -> f64 {
        let d = DENOMINATOR as f64;
        if args.iter().any(|x| x.is_infinite()) && !args.iter().any(|x| x.is_nan()) {
            return self.constant as f64 / d;
        }
        let s: f64 = args.iter().sum();
        let lin: f64 = self
            .linear
            .iter()
            .zip(args)
            .map(|(&l, &x)| l as f64 * x)
            .sum();
        (self.constant as f64 + lin + self.square as f64 * s * s) / d
    }

    /// Its exact value at `args`.
    pub fn eval_rat(&self, args: &[Rat]) -> Rat {
        let mut s = Rat::ZERO;
        let mut acc = Rat::from_i64(self.constant);
        for (&l, x) in self.linear.iter().zip(args) {
            s = s.add(x);
            acc = acc.add(&Rat::from_i64(l).mul(x));
        }
        acc = acc.add(&Rat::from_i64(self.square).mul(&s.mul(&s)));
        acc.mul(&Rat::from_i64(DENOMINATOR).recip().expect("nonzero"))
    }
}

impl fmt::Display for Interpretation {
    /// `f(a1, a2) = (9 + 3·a1 − 5·a2 + 2·(a1 + a2)²)/16`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let vars: Vec<String> = (1..=self.linear.len()).map(|i| format!("a{i}")).collect();
        write!(f, "{}({}) = ({}", self.name, vars.join(", "), self.constant)?;
        for (l, v) in self.linear.iter().zip(&vars) {
            let sign = if *l < 0 { '−' } else { '+' };
            write!(f, " {sign} {}·{v}", l.abs())?;
        }
        if !vars.is_empty() {
            let sum = if vars.len() == 1 {
                vars[0].clone()
            } else {
                format!("({})", vars.join(" + "))
            };
            write!(f, " + {}·{sum}²", self.square)?;
        }
        write!(f, ")/{DENOMINATOR}")?;
        if !vars.is_empty() {
            write!(
                f,
                ", and {}/{DENOMINATOR} where an argument is ±inf",
                self.constant
            )?;
        }
        Ok(())
    }
}
