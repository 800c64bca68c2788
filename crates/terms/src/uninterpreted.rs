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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::{DecideOptions, ElementDecision, check_counterexample, decide};
    use crate::normal::Normalizer;
    use crate::{Node, TermId, Terms};

    fn run(t: &Terms, a: TermId, b: TermId) -> ElementDecision {
        decide(&mut Normalizer::new(t), a, b, &DecideOptions::default())
    }

    /// `f` is an atom over its arguments' normal forms: equal arguments
    /// (up to algebra) prove, anything that needs a property of `f` is
    /// refuted with the fixed interpretation, which the witness names.
    #[test]
    fn applications_are_atoms_over_normal_forms() {
        let mut t = Terms::new();
        let (x, y) = (t.input(0, 0), t.input(0, 1));
        let two = t.int(2);
        // f(2·(x + y)) = f(2x + 2y): the arguments' normal forms agree.
        let s = t.add(x, y);
        let s2 = t.mul(two, s);
        let x2 = t.mul(two, x);
        let y2 = t.mul(two, y);
        let s2b = t.add(x2, y2);
        let fa = t.apply("f", &[s2]);
        let fb = t.apply("f", &[s2b]);
        assert!(matches!(run(&t, fa, fb), ElementDecision::Proved { .. }));
        // f(x)·f(y) + 1 = 1 + f(y)·f(x).
        let (fx, fy) = (t.apply("f", &[x]), t.apply("f", &[y]));
        let p = t.mul(fx, fy);
        let one = t.int(1);
        let l = t.add(p, one);
        let q = t.mul(fy, fx);
        let r = t.add(one, q);
        assert!(matches!(run(&t, l, r), ElementDecision::Proved { .. }));
        // Refuted: f(2x) vs 2·f(x), f vs g, f vs exp, f(x, y) vs f(y, x).
        let f2x = t.apply("f", &[x2]);
        let tfx = t.mul(two, fx);
        let gx = t.apply("g", &[x]);
        let ex = t.exp(x);
        let fxy = t.apply("f", &[x, y]);
        let fyx = t.apply("f", &[y, x]);
        for (a, b) in [(f2x, tfx), (fx, gx), (fx, ex), (fxy, fyx)] {
            let ElementDecision::Refuted(cx) = run(&t, a, b) else {
                panic!("{} vs {} not refuted", t.display(a), t.display(b));
            };
            assert!(check_counterexample(&t, a, b, &cx));
            assert!(!cx.functions.is_empty(), "{cx:?}");
            assert!(cx.functions.iter().all(|f| f.contains(")/16, and ")));
        }
        assert_eq!(t.display(fxy).to_string(), "f(x0[0], x0[1])");
    }

    #[test]
    fn graphs_and_smt_keep_the_name() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let f = t.apply("my exp|", &[x]);
        let g = t.export(&[f]);
        let mut u = Terms::new();
        let r = u.import(&g);
        assert_eq!(u.hash128(r[0]), t.hash128(f));
        assert!(matches!(u.node(r[0]), Node::Apply(a) if &*a.name == "my exp|"));
        let e = t.exp(x);
        let smt = crate::smt::smtlib(&t, f, e);
        assert!(
            smt.contains("(declare-fun |u_my exp_| (Real) Real)"),
            "{smt}"
        );
        // Different names hash differently.
        let h = t.apply("my exp", &[x]);
        assert_ne!(t.hash128(f), t.hash128(h));
    }

    #[test]
    fn deterministic_nonzero_and_consistent() {
        let a = Interpretation::of("my_exp", 1);
        assert_eq!(a, Interpretation::of("my_exp", 1));
        assert_ne!(a, Interpretation::of("my_log", 1));
        for i in [&a, &Interpretation::of("g", 3)] {
            assert!(i.constant != 0 && i.square != 0 && i.linear.iter().all(|&l| l != 0));
            let args = [0.5, -1.25, 3.0];
            let n = i.linear.len();
            let exact = i
                .eval_rat(
                    &args[..n]
                        .iter()
                        .map(|&x| crate::normal::rat_of_f64(x).unwrap())
                        .collect::<Vec<_>>(),
                )
                .to_f64();
            assert_eq!(exact, i.eval_f64(&args[..n]));
        }
        let s = Interpretation::of("g", 2).to_string();
        assert!(
            s.starts_with("g(a1, a2) = (") && s.ends_with("/16 where an argument is ±inf"),
            "{s}"
        );
    }
}
