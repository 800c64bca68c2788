//! Exact linear feasibility of a case's order facts (issue 5): Fourier–
//! Motzkin elimination over [`Rat`], with strictness tracked.
//!
//! A case of a split (`cases.rs`) is skipped only when its facts cannot
//! hold together. The syntactic check there sees cycles such as `a < b <
//! a`; facts like `0 < x` and `x ≤ x/8` contradict each other only by
//! linear arithmetic. Here every fact whose two sides have linear normal
//! forms over atoms becomes `Σ cᵢ·aᵢ + c₀ > 0` (or `≥ 0`); the atoms are
//! treated as independent real variables — a relaxation (atoms such as
//! `max(..)` or `ln2` are in fact constrained), so *infeasible* here means
//! infeasible for the real facts, which is the only answer that skips a
//! case. Nonlinear facts are left out (kept as feasible), and a system
//! whose elimination grows past a cap is reported as unknown (feasible).
//!
//! A feasible system also yields a rational point satisfying every linear
//! fact (by back-substitution), which the decision procedure uses to look
//! for a counterexample inside a case whose residual does not vanish.

use super::{Atom, ExpKey, ExpPoly, Monomial};
use crate::Rat;

/// Most constraints any elimination step may hold before giving up.
const MAX_CONSTRAINTS: usize = 400;

/// `Σ coefs·atoms + c0 > 0` (strict) or `≥ 0`; `coefs` sorted by atom,
/// no zero coefficient.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct LinCon {
    pub coefs: Vec<(Atom, Rat)>,
    pub c0: Rat,
    pub strict: bool,
}

impl LinCon {
    /// `p > 0` (strict) or `p ≥ 0`, when `p` is linear in its atoms (no
    /// `e^h` factor, every monomial `1` or a single atom to the power 1).
    pub fn from_poly(p: &ExpPoly, strict: bool) -> Option<LinCon> {
        let mut coefs = Vec::new();
        let mut c0 = Rat::ZERO;
        for ((m, h), c) in p.terms() {
            if !h.is_zero() {
                return None;
            }
            match m.factors() {
                [] => c0 = c.clone(),
                [(a, 1)] => coefs.push((*a, c.clone())),
                _ => return None,
            }
        }
        coefs.sort_by_key(|x| x.0);
        Some(LinCon { coefs, c0, strict })
    }

    fn coef(&self, a: Atom) -> Rat {
        self.coefs
            .binary_search_by_key(&a, |x| x.0)
            .map_or(Rat::ZERO, |i| self.coefs[i].1.clone())
    }

    /// `Σ coefs·point + c0` with the atoms of `point` substituted; the
    /// remaining coefficient of `x` (if any) is returned separately.
    fn split_at(&self, x: Atom, point: &[(Atom, Rat)]) -> (Rat, Rat) {
        let mut rest = self.c0.clone();
        let mut cx = Rat::ZERO;
        for (a, c) in &self.coefs {
            if *a == x {
                cx = c.clone();
            } else if let Some((_, v)) = point.iter().find(|p| p.0 == *a) {
                rest = rest.add(&c.mul(v));
            }
        }
        (cx, rest)
    }

    /// `self·s + o·t` (both scales positive), dropping zero coefficients.
    fn combine(&self, s: &Rat, o: &LinCon, t: &Rat) -> LinCon {
        let mut coefs: Vec<(Atom, Rat)> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.coefs.len() || j < o.coefs.len() {
            let a = self.coefs.get(i).map(|x| x.0);
            let b = o.coefs.get(j).map(|x| x.0);
            let (atom, c) = match (a, b) {
                (Some(a), Some(b)) if a == b => {
                    let c = self.coefs[i].1.mul(s).add(&o.coefs[j].1.mul(t));
                    i += 1;
                    j += 1;
                    (a, c)
                }
                (Some(a), Some(b)) if a < b => {
                    i += 1;
                    (a, self.coefs[i - 1].1.mul(s))
                }
                (Some(a), None) => {
                    i += 1;
                    (a, self.coefs[i - 1].1.mul(s))
                }
                (_, Some(b)) => {
                    j += 1;
                    (b, o.coefs[j - 1].1.mul(t))
                }
                (None, None) => break,
            };
            if !c.is_zero() {
                coefs.push((atom, c));
            }
        }
        LinCon {
            coefs,
            c0: self.c0.mul(s).add(&o.c0.mul(t)),
            strict: self.strict || o.strict,
        }
    }

    /// Scaled so the first coefficient is `±1` (for de-duplication).
    fn normalized(mut self) -> LinCon {
        if let Some(k) = self.coefs.first().and_then(|c| c.1.abs().recip()) {
            for c in &mut self.coefs {
                c.1 = c.1.mul(&k);
            }
            self.c0 = self.c0.mul(&k);
        }
        self
    }
}

/// Outcome of [`feasible`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Feasibility {
    /// No real point satisfies the constraints.
    Infeasible,
    /// A rational point (one value per atom occurring) satisfying all.
    Point(Vec<(Atom, Rat)>),
    /// The elimination grew past its cap: no answer (treat as feasible).
    Unknown,
}

/// Fourier–Motzkin: eliminates the atoms one by one, keeping each
/// level's system for back-substitution.
pub(crate) fn feasible(cons: &[LinCon]) -> Feasibility {
    let mut vars: Vec<Atom> = cons
        .iter()
        .flat_map(|c| c.coefs.iter().map(|x| x.0))
        .collect();
    vars.sort_unstable();
    vars.dedup();
    let mut levels: Vec<Vec<LinCon>> = Vec::with_capacity(vars.len() + 1);
    let mut cur: Vec<LinCon> = cons.iter().cloned().map(LinCon::normalized).collect();
    cur.dedup();
    for &x in &vars {
        let (mut lower, mut upper, mut next) = (Vec::new(), Vec::new(), Vec::new());
        for c in &cur {
            match c.coef(x).signum() {
                1 => lower.push(c),
                -1 => upper.push(c),
                _ => next.push(c.clone()),
            }
        }
        if next.len() + lower.len() * upper.len() > MAX_CONSTRAINTS {
            return Feasibility::Unknown;
        }
        for l in &lower {
            for u in &upper {
                // l: a·x + L ⋈ 0 (a > 0), u: -b·x + U ⋈ 0 (b > 0):
                // b·l + a·u eliminates x.
                let (a, b) = (l.coef(x), u.coef(x).neg());
                let c = l.combine(&b, u, &a).normalized();
                if !next.contains(&c) {
                    next.push(c);
                }
            }
        }
        levels.push(std::mem::replace(&mut cur, next));
    }
    for c in &cur {
        let s = c.c0.signum();
        if s < 0 || (s == 0 && c.strict) {
            return Feasibility::Infeasible;
        }
    }
    // Back-substitution, last eliminated first.
    let mut point: Vec<(Atom, Rat)> = Vec::with_capacity(vars.len());
    for (k, &x) in vars.iter().enumerate().rev() {
        let mut lo: Option<(Rat, bool)> = None;
        let mut hi: Option<(Rat, bool)> = None;
        for c in &levels[k] {
            let (cx, rest) = c.split_at(x, &point);
            let Some(inv) = cx.recip() else { continue };
            // cx·x + rest ⋈ 0  ⇔  x ⋈' -rest/cx.
            let bound = rest.neg().mul(&inv);
            if cx.signum() > 0 {
                if lo
                    .as_ref()
                    .is_none_or(|(v, s)| bound > *v || (bound == *v && c.strict && !s))
                {
                    lo = Some((bound, c.strict));
                }
            } else if hi
                .as_ref()
                .is_none_or(|(v, s)| bound < *v || (bound == *v && c.strict && !s))
            {
                hi = Some((bound, c.strict));
            }
        }
        let v = match (lo, hi) {
            (None, None) => Rat::ZERO,
            (Some((l, _)), None) => floor(&l).add(&Rat::ONE),
            (None, Some((h, _))) => floor(&h).add(&Rat::MINUS_ONE),
            (Some((l, ls)), Some((h, hs))) => {
                if l == h && !ls && !hs {
                    l
                } else if l < h {
                    // An integer strictly inside when there is one.
                    let f = floor(&l).add(&Rat::ONE);
                    if f < h {
                        f
                    } else {
                        l.add(&h).mul(&Rat::new(1, 2).expect("nonzero"))
                    }
                } else {
                    // Cannot happen for a feasible system; no point.
                    return Feasibility::Unknown;
                }
            }
        };
        point.push((x, v));
    }
    point.sort_by_key(|p| p.0);
    Feasibility::Point(point)
}

/// Largest system searched for implied equalities (one elimination per
/// weak fact).
const MAX_EQUALITY_SEARCH: usize = 16;

/// Largest power of a substituted linear form, and largest result.
const MAX_SUBST_POWER: i32 = 8;
const MAX_SUBST_TERMS: usize = 2_000;

/// Substitutions `atom := linear form` implied by a feasible system: each
/// weak fact `p ≥ 0` whose strict form `p > 0` is infeasible together
/// with the rest forces `p = 0`; each such equality is solved for its
/// greatest atom (after the earlier substitutions). A residual that
/// vanishes after substituting is zero on every point of the case (the
/// `0 < x fails, max = x` case of `select(0 < x, x, x/8)` vs `max(x/8, x)`
/// is the single point `x = 0`).
pub(crate) fn implied_substitutions(cons: &[LinCon]) -> Vec<(Atom, ExpPoly)> {
    let mut subs: Vec<(Atom, ExpPoly)> = Vec::new();
    if cons.len() > MAX_EQUALITY_SEARCH {
        return subs;
    }
    for (i, c) in cons.iter().enumerate() {
        if c.strict || c.coefs.is_empty() {
            continue;
        }
        let mut sys = cons.to_vec();
        sys[i].strict = true;
        if feasible(&sys) != Feasibility::Infeasible {
            continue;
        }
        let mut p = c.to_poly();
        for (x, e) in &subs {
            match substitute(&p, *x, e) {
                Some(q) => p = q,
                None => break,
            }
        }
        let Some(l) = LinCon::from_poly(&p, false) else {
            continue;
        };
        let Some((x, cx)) = l.coefs.last().cloned() else {
            continue;
        };
        let Some(inv) = cx.neg().recip() else {
            continue;
        };
        // x = -(p - cx·x)/cx.
        let rest = p.sub(&ExpPoly::term(Monomial::atom(x), ExpKey::zero(), cx));
        subs.push((x, rest.scale(&inv)));
    }
    subs
}

impl LinCon {
    fn to_poly(&self) -> ExpPoly {
        let mut p = ExpPoly::constant(self.c0.clone());
        for (a, c) in &self.coefs {
            p.add_assign(&ExpPoly::term(
                Monomial::atom(*a),
                ExpKey::zero(),
                c.clone(),
            ));
        }
        p
    }
}

/// `p` with atom `x` replaced by the exp-free polynomial `e`, in
/// monomials and in exponents (atoms inside application arguments are
/// left alone: the result is still equal to `p` wherever `x = e`).
/// `None` past the size bounds or for a negative power of `x`.
pub(crate) fn substitute(p: &ExpPoly, x: Atom, e: &ExpPoly) -> Option<ExpPoly> {
    let mut out = ExpPoly::zero();
    for ((m, h), c) in p.terms() {
        let mut rest = Vec::new();
        let mut k = 0;
        for &(a, pw) in m.factors() {
            if a == x {
                k = pw;
            } else {
                rest.push((a, pw));
            }
        }
        if !(0..=MAX_SUBST_POWER).contains(&k) {
            return None;
        }
        let h2 = if h
            .terms()
            .iter()
            .any(|(hm, _)| hm.factors().iter().any(|f| f.0 == x))
        {
            substitute(&h.to_poly(), x, e)?.to_key()?
        } else {
            h.clone()
        };
        let (rm, rc) = Monomial::from_factors(rest)?;
        let mut t = ExpPoly::term(rm, h2, c.mul(&rc));
        for _ in 0..k {
            t = t.mul(e);
            if t.num_terms() > MAX_SUBST_TERMS {
                return None;
            }
        }
        out.add_assign(&t);
        if out.num_terms() > MAX_SUBST_TERMS {
            return None;
        }
    }
    Some(out)
}

/// The largest integer `≤ r`.
fn floor(r: &Rat) -> Rat {
    if r.is_integer() {
        return r.clone();
    }
    Rat::from_big(r.to_big().floor())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Terms;

    fn con(t: &[(Atom, i64)], c0: i64, strict: bool) -> LinCon {
        LinCon {
            coefs: t.iter().map(|(a, c)| (*a, Rat::from_i64(*c))).collect(),
            c0: Rat::from_i64(c0),
            strict,
        }
    }

    fn holds(c: &LinCon, p: &[(Atom, Rat)]) -> bool {
        let mut v = c.c0.clone();
        for (a, k) in &c.coefs {
            let x = p.iter().find(|q| q.0 == *a).expect("assigned");
            v = v.add(&k.mul(&x.1));
        }
        v.signum() > 0 || (v.is_zero() && !c.strict)
    }

    #[test]
    fn strict_and_weak_bounds() {
        let mut t = Terms::new();
        let (x, y) = (Atom::Term(t.input(0, 0)), Atom::Term(t.input(0, 1)));
        // x > 0 and -7x ≥ 0 (x ≤ x/8): infeasible.
        let sys = [con(&[(x, 1)], 0, true), con(&[(x, -7)], 0, false)];
        assert_eq!(feasible(&sys), Feasibility::Infeasible);
        // x ≥ 0 and -x ≥ 0: feasible at 0 exactly.
        let sys = [con(&[(x, 1)], 0, false), con(&[(x, -1)], 0, false)];
        assert_eq!(feasible(&sys), Feasibility::Point(vec![(x, Rat::ZERO)]));
        // x > 6, x ≥ 0 (relu6's case): a point above 6.
        let sys = [con(&[(x, 1)], -6, true), con(&[(x, 1)], 0, false)];
        let Feasibility::Point(p) = feasible(&sys) else {
            panic!("feasible")
        };
        assert!(sys.iter().all(|c| holds(c, &p)) && p[0].1 > Rat::from_i64(6));
        // x < y, y < x + 1/2 … as 2y - 2x > 0 and 2x - 2y + 1 > 0.
        let sys = [
            con(&[(x, -2), (y, 2)], 0, true),
            con(&[(x, 2), (y, -2)], 1, true),
        ];
        let Feasibility::Point(p) = feasible(&sys) else {
            panic!("feasible")
        };
        assert!(sys.iter().all(|c| holds(c, &p)));
        // x < y < x: infeasible across two variables.
        let sys = [
            con(&[(x, -1), (y, 1)], 0, true),
            con(&[(x, 1), (y, -1)], 0, false),
        ];
        assert_eq!(feasible(&sys), Feasibility::Infeasible);
    }

    /// `x ≤ 0` and `x/8 ≤ x` leave only `x = 0`: the residual `-7/8·x`
    /// of `select(0 < x, x, x/8)` vs `max(x, x/8)` vanishes there, while
    /// a strict fact or an unrelated residual does not.
    #[test]
    fn implied_equalities_substitute() {
        let mut t = Terms::new();
        let (x, y) = (Atom::Term(t.input(0, 0)), Atom::Term(t.input(0, 1)));
        let sys = [con(&[(x, -1)], 0, false), con(&[(x, 7)], 0, false)];
        let subs = implied_substitutions(&sys);
        assert_eq!(subs, vec![(x, ExpPoly::zero())]);
        let residual = ExpPoly::term(Monomial::atom(x), ExpKey::zero(), Rat::new(-7, 8).unwrap());
        assert_eq!(substitute(&residual, x, &subs[0].1), Some(ExpPoly::zero()));
        // x ≤ 0 alone forces nothing.
        assert!(implied_substitutions(&sys[..1]).is_empty());
        // y ≥ x and x ≥ y: y = x (solved for the greater atom), so
        // (y - x)·e^{y} vanishes but y does not.
        let sys = [
            con(&[(x, -1), (y, 1)], 0, false),
            con(&[(x, 1), (y, -1)], 0, false),
        ];
        let subs = implied_substitutions(&sys);
        assert_eq!(subs.len(), 1);
        let (v, e) = &subs[0];
        let ey = ExpKey::zero().add(&ExpPoly::atom(y).to_key().unwrap());
        let p = ExpPoly::term(Monomial::atom(y), ey.clone(), Rat::ONE).sub(&ExpPoly::term(
            Monomial::atom(x),
            ey,
            Rat::ONE,
        ));
        assert_eq!(substitute(&p, *v, e), Some(ExpPoly::zero()));
        assert_ne!(substitute(&ExpPoly::atom(y), *v, e), Some(ExpPoly::zero()));
    }
}
