//! Normal form "rational function of exp-polynomials over exact
//! rationals" (design.md §5, issue 5): groundwork for the decision
//! procedure.
//!
//! Every real term is mapped to `N/D`, where `N` and `D` are
//! [`ExpPoly`]s — sums `Σ c·m·e^h` with `c` rational, `m` a monomial over
//! [`Atom`]s and `h` an exp-free polynomial exponent. Inputs are atoms;
//! `max`, `min`, `select` and uninterpreted functions are opaque atoms
//! named by their hash-consed id (their arguments are already canonical by
//! construction). `exp(u)` with `u` polynomial becomes `e^u`, so
//! `e^a·e^b = e^{a+b}`; `ex2(u)` becomes `e^{u·ln2}` with `ln2` an
//! unknown atom, so the same laws hold in base 2.
//!
//! [`equal`] proves `f = g` only by exact polynomial identity of
//! `N_f·D_g` and `N_g·D_f` (or of the numerators after a single-term
//! denominator factor) — sound wherever both sides are defined, never by
//! sampling. It answers [`Decision::NotProved`] otherwise: the residual
//! may still vanish for reasons the normal form does not see (`max`
//! case splits, constant recovery), which is the caller's next step.
//!
//! Sizes are bounded by a term budget ([`DEFAULT_BUDGET`]): a product or
//! sum that would exceed it is [`NormalizeError::TooLarge`], so the
//! procedure never hangs on a blow-up.

mod poly;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

pub use poly::{Atom, ExpKey, ExpPoly, Monomial, TermKey};

use crate::{Func, Node, Rat, TermId, Terms};

/// Default bound on the number of terms of any intermediate exp-polynomial.
pub const DEFAULT_BUDGET: usize = 20_000;

/// How many term products one multiplication may perform, per unit of
/// budget: products collapse (like terms), so the pre-check is looser
/// than the bound on the result, but still finite.
const WORK_PER_BUDGET: usize = 16;

/// Why a term has no normal form (the decision is then "unknown").
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum NormalizeError {
    /// An intermediate exp-polynomial would exceed the term budget.
    #[error("normal form too large ({terms} terms, budget {budget})")]
    TooLarge { terms: usize, budget: usize },
    /// The term (or a sub-term) is not a finite real: `±inf`, a boolean.
    #[error("term {0} is not a finite real")]
    NotReal(TermId),
    /// A reciprocal of a term whose normal form is `0`.
    #[error("term {0} divides by zero")]
    DivisionByZero(TermId),
}

/// `num / den`; `den` is never zero. After every operation it is tidied:
/// a zero fraction is `0/1`, a denominator `c·e^h` is moved into the
/// numerator, and otherwise the denominator's leading coefficient is `1`,
/// so equal denominators compare equal cheaply.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RatFn {
    pub num: ExpPoly,
    pub den: ExpPoly,
}

impl RatFn {
    /// A polynomial (`den = 1`).
    pub fn poly(num: ExpPoly) -> RatFn {
        RatFn {
            num,
            den: ExpPoly::constant(Rat::ONE),
        }
    }

    /// Whether the denominator is `1`.
    pub fn is_poly(&self) -> bool {
        self.den.as_constant().is_some_and(|c| c.is_one())
    }

    fn tidy(mut self) -> RatFn {
        if self.num.is_zero() {
            self.den = ExpPoly::constant(Rat::ONE);
            return self;
        }
        let Some(((m, h), c)) = self.den.lead() else {
            return self;
        };
        let (m, h, c) = (m.clone(), h.clone(), c.clone());
        let Some(ci) = c.recip() else { return self };
        if self.den.num_terms() == 1 && m.is_one() {
            // 1/(c·e^h) = (1/c)·e^{-h}: exact, and keeps `exp(a)/exp(b)`
            // and `exp(a-b)` the same polynomial.
            self.num = self.num.mul(&ExpPoly::term(m, h.neg(), ci));
            self.den = ExpPoly::constant(Rat::ONE);
        } else if !c.is_one() {
            self.num = self.num.scale(&ci);
            self.den = self.den.scale(&ci);
        }
        self
    }
}

/// Memoised normaliser over one term store. Normal forms are cached per
/// node, so sub-terms shared between outputs (or between the reference
/// and candidate kernels) are normalised once.
pub struct Normalizer<'t> {
    terms: &'t Terms,
    memo: HashMap<TermId, RatFn>,
    budget: usize,
}

impl<'t> Normalizer<'t> {
    /// A normaliser with [`DEFAULT_BUDGET`].
    pub fn new(terms: &'t Terms) -> Self {
        Self::with_budget(terms, DEFAULT_BUDGET)
    }

    /// A normaliser whose intermediate exp-polynomials have at most
    /// `budget` terms.
    pub fn with_budget(terms: &'t Terms, budget: usize) -> Self {
        Normalizer {
            terms,
            memo: HashMap::new(),
            budget,
        }
    }

    /// The store this normaliser reads.
    pub fn terms(&self) -> &'t Terms {
        self.terms
    }

    /// The normal form of `t`. Iterative (post-order over the arithmetic
    /// children), so deep accumulation chains cannot overflow the stack.
    pub fn normalize(&mut self, t: TermId) -> Result<RatFn, NormalizeError> {
        let mut stack = vec![(t, false)];
        while let Some((u, ready)) = stack.pop() {
            if self.memo.contains_key(&u) {
                continue;
            }
            if ready {
                let r = self.step(u)?;
                self.memo.insert(u, r);
            } else {
                stack.push((u, true));
                for c in self.arith_children(u) {
                    if !self.memo.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
            }
        }
        Ok(self.memo[&t].clone())
    }

    /// Children whose normal forms `step` needs (opaque atoms need none).
    fn arith_children(&self, t: TermId) -> Vec<TermId> {
        match self.terms.node(t) {
            Node::Add(ops) | Node::Mul(ops) => ops.to_vec(),
            Node::Recip(a) | Node::Exp(a) | Node::Func(Func::Ex2, a) => vec![*a],
            _ => Vec::new(),
        }
    }

    fn get(&self, t: TermId) -> &RatFn {
        &self.memo[&t]
    }

    /// One node, its arithmetic children already normalised.
    fn step(&self, t: TermId) -> Result<RatFn, NormalizeError> {
        let atom = || RatFn::poly(ExpPoly::atom(Atom::Term(t)));
        Ok(match self.terms.node(t) {
            Node::Const(r) => RatFn::poly(ExpPoly::constant(r.clone())),
            Node::Input { .. } | Node::Max(_) | Node::Min(_) | Node::Select(..) => atom(),
            Node::Func(Func::Ex2, a) => match self.exponent(*a) {
                Some(h) => exp_of(h.mul_monomial(&Monomial::atom(Atom::Ln2))),
                None => atom(),
            },
            Node::Func(..) => atom(),
            Node::Exp(a) => match self.exponent(*a) {
                Some(h) => exp_of(h),
                None => atom(),
            },
            Node::Add(ops) => {
                // Polynomial operands (the common case) are summed in
                // place; only fractions go through `add`.
                let mut poly = ExpPoly::zero();
                let mut acc: Option<RatFn> = None;
                for o in ops {
                    let r = self.get(*o);
                    if r.is_poly() {
                        poly.add_assign(&r.num);
                        self.check(poly.num_terms())?;
                    } else {
                        acc = Some(match acc {
                            None => r.clone(),
                            Some(a) => self.add(&a, r)?,
                        });
                    }
                }
                match acc {
                    None => RatFn::poly(poly),
                    Some(a) => self.add(&a, &RatFn::poly(poly))?,
                }
            }
            Node::Mul(ops) => {
                let mut acc = self.get(ops[0]).clone();
                for o in &ops[1..] {
                    acc = self.mul(&acc, self.get(*o))?;
                }
                acc
            }
            Node::Recip(a) => {
                let r = self.get(*a);
                if r.num.is_zero() {
                    return Err(NormalizeError::DivisionByZero(t));
                }
                RatFn {
                    num: r.den.clone(),
                    den: r.num.clone(),
                }
                .tidy()
            }
            Node::PosInf
            | Node::NegInf
            | Node::BoolConst(_)
            | Node::Cmp(..)
            | Node::Not(_)
            | Node::And(_)
            | Node::Or(_)
            | Node::Xor(_) => return Err(NormalizeError::NotReal(t)),
        })
    }

    /// `a`'s normal form as an exponent, if it is an exp-free polynomial
    /// (the denominator is `1` after tidying whenever it is constant).
    fn exponent(&self, a: TermId) -> Option<ExpKey> {
        let r = self.get(a);
        if r.is_poly() { r.num.to_key() } else { None }
    }

    fn check(&self, n: usize) -> Result<(), NormalizeError> {
        if n > self.budget {
            Err(NormalizeError::TooLarge {
                terms: n,
                budget: self.budget,
            })
        } else {
            Ok(())
        }
    }

    /// Bounded product of exp-polynomials.
    fn pmul(&self, a: &ExpPoly, b: &ExpPoly) -> Result<ExpPoly, NormalizeError> {
        let work = a.num_terms().saturating_mul(b.num_terms());
        if work > self.budget.saturating_mul(WORK_PER_BUDGET) {
            return Err(NormalizeError::TooLarge {
                terms: work,
                budget: self.budget,
            });
        }
        let p = a.mul(b);
        self.check(p.num_terms())?;
        Ok(p)
    }

    /// Bounded sum of exp-polynomials.
    fn padd(&self, a: &ExpPoly, b: &ExpPoly) -> Result<ExpPoly, NormalizeError> {
        let p = a.add(b);
        self.check(p.num_terms())?;
        Ok(p)
    }

    /// `a + b`: same denominator → add numerators; denominators equal up
    /// to a single-term factor → scale one numerator; else cross-multiply.
    fn add(&self, a: &RatFn, b: &RatFn) -> Result<RatFn, NormalizeError> {
        let r = if a.den == b.den {
            RatFn {
                num: self.padd(&a.num, &b.num)?,
                den: a.den.clone(),
            }
        } else if let Some(k) = a.den.factor_to(&b.den) {
            RatFn {
                num: self.padd(&self.pmul(&a.num, &k)?, &b.num)?,
                den: b.den.clone(),
            }
        } else if let Some(k) = b.den.factor_to(&a.den) {
            RatFn {
                num: self.padd(&a.num, &self.pmul(&b.num, &k)?)?,
                den: a.den.clone(),
            }
        } else {
            let num = self.padd(&self.pmul(&a.num, &b.den)?, &self.pmul(&b.num, &a.den)?)?;
            RatFn {
                num,
                den: self.pmul(&a.den, &b.den)?,
            }
        };
        Ok(r.tidy())
    }

    /// `a · b`.
    fn mul(&self, a: &RatFn, b: &RatFn) -> Result<RatFn, NormalizeError> {
        if a.num.is_zero() || b.num.is_zero() {
            return Ok(RatFn::poly(ExpPoly::zero()));
        }
        let num = self.pmul(&a.num, &b.num)?;
        let den = if a.is_poly() {
            b.den.clone()
        } else if b.is_poly() {
            a.den.clone()
        } else {
            self.pmul(&a.den, &b.den)?
        };
        Ok(RatFn { num, den }.tidy())
    }
}

fn exp_of(h: ExpKey) -> RatFn {
    RatFn::poly(ExpPoly::term(Monomial::one(), h, Rat::ONE))
}

/// Outcome of [`equal`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Decision {
    /// The normal forms are identical as formal expressions.
    Proved,
    /// The normal forms differ; `residual` is the nonzero difference of
    /// the compared numerators (not necessarily a counterexample).
    NotProved { residual: String },
    /// No normal form within budget (or not a finite real term).
    Unknown(NormalizeError),
}

/// Terms printed in a residual before it is truncated.
const RESIDUAL_TERMS: usize = 8;

/// Decide `a = b` by normal forms (see the module docs).
///
/// Same node → proved at once. Otherwise with `f = N_f/D_f`, `g =
/// N_g/D_g`: equal denominators compare numerators; `D_g = k·D_f` for a
/// single term `k` (softmax with and without the max subtracted) compares
/// `N_f·k` with `N_g` without multiplying two sums; else `N_f·D_g` is
/// compared with `N_g·D_f`.
pub fn equal(n: &mut Normalizer<'_>, a: TermId, b: TermId) -> Decision {
    if a == b {
        return Decision::Proved;
    }
    let res = (|| {
        let f = n.normalize(a)?;
        let g = n.normalize(b)?;
        if f.den == g.den {
            Ok(f.num.sub(&g.num))
        } else if let Some(k) = f.den.factor_to(&g.den) {
            Ok(n.pmul(&f.num, &k)?.sub(&g.num))
        } else if let Some(k) = g.den.factor_to(&f.den) {
            Ok(f.num.sub(&n.pmul(&g.num, &k)?))
        } else {
            Ok(n.pmul(&f.num, &g.den)?.sub(&n.pmul(&g.num, &f.den)?))
        }
    })();
    match res {
        Ok(r) if r.is_zero() => Decision::Proved,
        Ok(r) => Decision::NotProved {
            residual: r.describe(n.terms, RESIDUAL_TERMS),
        },
        Err(e) => Decision::Unknown(e),
    }
}
