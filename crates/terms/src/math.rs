//! The math-function vocabulary, declared once: every real function a
//! kernel can compute through a PTX instruction (`ex2`, `lg2`, `sqrt`,
//! `rsqrt`, `rcp`, `sin`, `cos`, `tanh`), a recognised math-library
//! expansion (`passes/idioms`: `expf`, `expm1f`, `powf`, ...) or a
//! `.func` bound to a known function in the spec (`[functions]`).
//!
//! For each: its C name (without the `f` suffix), its arity, its value in
//! `f64` (the reference the concrete engine and the bit-exact domain
//! round from), and its exact meaning as a term ([`MathFn::term`]) in the
//! term language, which has fewer atoms (`expm1 x` is `exp(x) − 1`,
//! `log10 x` is `log x / log 10`, `sinh x` is `(eˣ − e⁻ˣ)/2`). The engine's
//! operation enum, the idiom names (`ptxeq_ir::IdiomFn`) and the spec's
//! known functions (`ptxeq_spec::KnownFn`) map to it by name, and tests
//! keep those vocabularies inside this one.

use crate::node::{Func, TermId};
use crate::rat::Rat;
use crate::store::Terms;

macro_rules! math_fns {
    ($( $(#[$m:meta])* $var:ident = $name:literal / $arity:literal ),+ $(,)?) => {
        /// One function of the vocabulary (see the module doc).
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
        pub enum MathFn {
            $( $(#[$m])* $var, )+
        }

        impl MathFn {
            /// Every function, in declaration order.
            pub const ALL: &'static [MathFn] = &[$( MathFn::$var, )+];

            /// The C name without the `f` suffix (`expm1`).
            pub fn name(self) -> &'static str {
                match self {
                    $( MathFn::$var => $name, )+
                }
            }

            /// How many real arguments it takes.
            pub fn arity(self) -> usize {
                match self {
                    $( MathFn::$var => $arity, )+
                }
            }
        }
    };
}

math_fns! {
    /// `eˣ`.
    Exp = "exp" / 1,
    /// `2ˣ` (PTX `ex2`).
    Exp2 = "exp2" / 1,
    /// `10ˣ`.
    Exp10 = "exp10" / 1,
    /// `eˣ − 1`.
    Expm1 = "expm1" / 1,
    /// Natural logarithm.
    Log = "log" / 1,
    /// `log₂ x` (PTX `lg2`).
    Log2 = "log2" / 1,
    /// `log₁₀ x`.
    Log10 = "log10" / 1,
    /// `ln(1 + x)`.
    Log1p = "log1p" / 1,
    Sqrt = "sqrt" / 1,
    /// `1/√x`.
    Rsqrt = "rsqrt" / 1,
    /// `1/x` (PTX `rcp`).
    Recip = "recip" / 1,
    Sin = "sin" / 1,
    Cos = "cos" / 1,
    Tanh = "tanh" / 1,
    Sinh = "sinh" / 1,
    Cosh = "cosh" / 1,
    /// The error function.
    Erf = "erf" / 1,
    /// C's `pow(x, y)`: real for negative `x` and integer `y`, undefined
    /// for negative `x` and non-integer `y`.
    Pow = "pow" / 2,
}

impl MathFn {
    /// The function named `name` (as [`MathFn::name`] spells it).
    pub fn named(name: &str) -> Option<MathFn> {
        MathFn::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// Its value at `args` in `f64` (NaN where undefined; missing
    /// arguments read as NaN).
    pub fn eval_f64(self, args: &[f64]) -> f64 {
        let x = args.first().copied().unwrap_or(f64::NAN);
        match self {
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::Exp10 => libm::exp10(x),
            MathFn::Expm1 => x.exp_m1(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Log10 => x.log10(),
            MathFn::Log1p => x.ln_1p(),
            MathFn::Sqrt => x.sqrt(),
            MathFn::Rsqrt => 1.0 / x.sqrt(),
            MathFn::Recip => 1.0 / x,
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tanh => x.tanh(),
            MathFn::Sinh => x.sinh(),
            MathFn::Cosh => x.cosh(),
            MathFn::Erf => libm::erf(x),
            MathFn::Pow => x.powf(args.get(1).copied().unwrap_or(f64::NAN)),
        }
    }

    /// Its exact value at `args` as a term of `t`. `args` must have
    /// [`MathFn::arity`] elements (a missing one is a programming error
    /// and panics on the index).
    pub fn term(self, t: &mut Terms, args: &[TermId]) -> TermId {
        let a = args[0];
        match self {
            MathFn::Exp => t.exp(a),
            MathFn::Exp2 => t.func(Func::Ex2, a),
            MathFn::Log2 => t.func(Func::Lg2, a),
            MathFn::Log => t.func(Func::Log, a),
            MathFn::Sqrt => t.sqrt(a),
            MathFn::Rsqrt => t.rsqrt(a),
            MathFn::Recip => t.recip(a),
            MathFn::Sin => t.func(Func::Sin, a),
            MathFn::Cos => t.func(Func::Cos, a),
            MathFn::Tanh => t.func(Func::Tanh, a),
            MathFn::Erf => t.func(Func::Erf, a),
            // The normal form has no expm1/log1p/log10/... atoms: their
            // exact definitions.
            MathFn::Expm1 => {
                let (e, one) = (t.exp(a), t.constant(Rat::ONE));
                t.sub(e, one)
            }
            MathFn::Log1p => {
                let one = t.constant(Rat::ONE);
                let s = t.add(a, one);
                t.func(Func::Log, s)
            }
            // log(10) kept symbolic: log10 x = log x / log 10.
            MathFn::Log10 => {
                let ten = t.constant(Rat::from_i64(10));
                let (l, l10) = (t.func(Func::Log, a), t.func(Func::Log, ten));
                t.div(l, l10)
            }
            MathFn::Exp10 => {
                let ten = t.constant(Rat::from_i64(10));
                let l10 = t.func(Func::Log, ten);
                let p = t.mul(a, l10);
                t.exp(p)
            }
            MathFn::Sinh | MathFn::Cosh => {
                let na = t.neg(a);
                let (e, en) = (t.exp(a), t.exp(na));
                let s = if self == MathFn::Sinh {
                    t.sub(e, en)
                } else {
                    t.add(e, en)
                };
                let half = t.constant(Rat::new(1, 2).expect("1/2"));
                t.mul(s, half)
            }
            MathFn::Pow => t.pow(a, args[1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_arities() {
        for &f in MathFn::ALL {
            assert_eq!(MathFn::named(f.name()), Some(f));
            let args = vec![0.5; f.arity()];
            assert!(f.eval_f64(&args).is_finite(), "{f:?} at 0.5");
        }
        assert_eq!(MathFn::named("expf"), None);
    }

    /// The term and the `f64` value agree at a point (through the terms'
    /// own evaluator).
    #[test]
    fn term_and_value_agree() {
        for &f in MathFn::ALL {
            let mut t = Terms::new();
            let args: Vec<TermId> = (0..f.arity() as u64).map(|i| t.input(0, i)).collect();
            let term = f.term(&mut t, &args);
            let point = [0.375, 1.25];
            let got = t.eval_f64(term, &|_, i| point[i as usize]);
            let want = f.eval_f64(&point[..f.arity()]);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{f:?}: term {got} vs value {want}"
            );
        }
    }
}
