//! Exp-polynomials over exact rationals: finite sums `Σ c·m·e^h`.
//!
//! A term is a rational coefficient `c`, a [`Monomial`] `m` (a product of
//! [`Atom`]s with positive integer exponents) and an [`ExpKey`] `h` (an
//! exp-free polynomial used as the exponent, `e^0 = 1` being the empty
//! key). Every container is kept sorted with zero entries removed, so the
//! derived `Eq` is polynomial identity: two [`ExpPoly`]s are equal exactly
//! when they are the same formal sum. That is the only equality the
//! decision procedure ever reports as proved.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{Rat, TermId, Terms};

/// An indivisible factor of a monomial.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Atom {
    /// An input, or an opaque node (`max`, `min`, `select`, an
    /// uninterpreted function, an `exp` whose exponent is not a
    /// polynomial) identified by its hash-consed id, so structurally equal
    /// arguments give the same atom.
    Term(TermId),
    /// `ln 2`, an unknown real used only inside exponents so that
    /// `ex2(u) = e^{u·ln2}` obeys the exp laws.
    Ln2,
}

/// A product of atoms with exponents ≥ 1, sorted by atom; empty is `1`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Monomial(Vec<(Atom, u32)>);

impl Monomial {
    /// The empty product.
    pub fn one() -> Monomial {
        Monomial(Vec::new())
    }

    /// A single atom.
    pub fn atom(a: Atom) -> Monomial {
        Monomial(vec![(a, 1)])
    }

    /// Whether this is the empty product.
    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// The `(atom, exponent)` factors, sorted by atom.
    pub fn factors(&self) -> &[(Atom, u32)] {
        &self.0
    }

    /// Product (exponents add).
    pub fn mul(&self, o: &Monomial) -> Monomial {
        Monomial(merge(&self.0, &o.0, |a, b| Some(a + b)))
    }

    /// `self / o` when it is again a monomial (no negative exponent).
    pub fn div(&self, o: &Monomial) -> Option<Monomial> {
        let mut out = self.0.clone();
        for (atom, e) in &o.0 {
            let i = out.binary_search_by(|(a, _)| a.cmp(atom)).ok()?;
            match out[i].1.cmp(e) {
                Ordering::Less => return None,
                Ordering::Equal => {
                    out.remove(i);
                }
                Ordering::Greater => out[i].1 -= e,
            }
        }
        Some(Monomial(out))
    }

    /// Lexicographic order of exponent vectors: compatible with
    /// multiplication, so it picks the same leading term of `k·P` as of
    /// `P` (see [`ExpPoly::lead`]).
    fn cmp_order(&self, o: &Monomial) -> Ordering {
        lex_cmp(&self.0, &o.0, |_| Ordering::Greater, |a, b| a.cmp(b))
    }
}

/// An exp-free polynomial used as an exponent: sorted `(monomial, coef)`
/// pairs with nonzero coefficients; empty is `0` (so `e^0 = 1`).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct ExpKey(Vec<(Monomial, Rat)>);

impl ExpKey {
    /// The zero exponent.
    pub fn zero() -> ExpKey {
        ExpKey(Vec::new())
    }

    /// Whether the exponent is `0`.
    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// The `(monomial, coefficient)` terms, sorted by monomial.
    pub fn terms(&self) -> &[(Monomial, Rat)] {
        &self.0
    }

    /// Sum (`e^a·e^b = e^{a+b}`).
    pub fn add(&self, o: &ExpKey) -> ExpKey {
        ExpKey(merge(&self.0, &o.0, |a, b| {
            let s = a.add(b);
            (!s.is_zero()).then_some(s)
        }))
    }

    /// Negation.
    pub fn neg(&self) -> ExpKey {
        ExpKey(self.0.iter().map(|(m, c)| (m.clone(), c.neg())).collect())
    }

    /// Every monomial multiplied by `m` (used for `u·ln2`).
    pub fn mul_monomial(&self, m: &Monomial) -> ExpKey {
        let mut v: Vec<_> = self.0.iter().map(|(x, c)| (x.mul(m), c.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        ExpKey(v)
    }

    /// Lexicographic order of coefficient vectors: compatible with
    /// addition (an ordered group), hence with multiplying `e^h` terms.
    fn cmp_order(&self, o: &ExpKey) -> Ordering {
        lex_cmp(&self.0, &o.0, |c| c.signum().cmp(&0), |a, b| a.cmp(b))
    }
}

/// The key of one term: monomial and exponent.
pub type TermKey = (Monomial, ExpKey);

/// A finite sum `Σ c·m·e^h` in canonical form (see the module docs).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ExpPoly {
    terms: BTreeMap<TermKey, Rat>,
}

impl ExpPoly {
    /// `0`.
    pub fn zero() -> ExpPoly {
        ExpPoly::default()
    }

    /// A rational constant.
    pub fn constant(c: Rat) -> ExpPoly {
        ExpPoly::term(Monomial::one(), ExpKey::zero(), c)
    }

    /// A single atom.
    pub fn atom(a: Atom) -> ExpPoly {
        ExpPoly::term(Monomial::atom(a), ExpKey::zero(), Rat::ONE)
    }

    /// `c·m·e^h` (zero if `c` is).
    pub fn term(m: Monomial, h: ExpKey, c: Rat) -> ExpPoly {
        let mut terms = BTreeMap::new();
        if !c.is_zero() {
            terms.insert((m, h), c);
        }
        ExpPoly { terms }
    }

    /// Number of terms.
    pub fn num_terms(&self) -> usize {
        self.terms.len()
    }

    /// Whether this is `0`.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms, in canonical (storage) order.
    pub fn terms(&self) -> impl Iterator<Item = (&TermKey, &Rat)> {
        self.terms.iter()
    }

    /// The value if this is a constant (`0` included).
    pub fn as_constant(&self) -> Option<Rat> {
        match self.terms.len() {
            0 => Some(Rat::ZERO),
            1 => {
                let ((m, h), c) = self.terms.iter().next()?;
                (m.is_one() && h.is_zero()).then(|| c.clone())
            }
            _ => None,
        }
    }

    /// This polynomial as an exponent, if no term carries an `e^h`.
    pub fn to_key(&self) -> Option<ExpKey> {
        self.terms
            .iter()
            .map(|((m, h), c)| h.is_zero().then(|| (m.clone(), c.clone())))
            .collect::<Option<Vec<_>>>()
            .map(ExpKey)
    }

    /// Sum.
    pub fn add(&self, o: &ExpPoly) -> ExpPoly {
        let mut terms = self.terms.clone();
        for (k, c) in &o.terms {
            add_into(&mut terms, k.clone(), c.clone());
        }
        ExpPoly { terms }
    }

    /// In-place sum (no copy of `self`: long sums stay linear).
    pub fn add_assign(&mut self, o: &ExpPoly) {
        for (k, c) in &o.terms {
            add_into(&mut self.terms, k.clone(), c.clone());
        }
    }

    /// Difference.
    pub fn sub(&self, o: &ExpPoly) -> ExpPoly {
        self.add(&o.scale(&Rat::MINUS_ONE))
    }

    /// Every coefficient multiplied by `c`.
    pub fn scale(&self, c: &Rat) -> ExpPoly {
        if c.is_zero() {
            return ExpPoly::zero();
        }
        let terms = self
            .terms
            .iter()
            .map(|(k, x)| (k.clone(), x.mul(c)))
            .collect();
        ExpPoly { terms }
    }

    /// Product. Cost is `len·len'` term products; callers bound it.
    pub fn mul(&self, o: &ExpPoly) -> ExpPoly {
        let mut terms = BTreeMap::new();
        for ((m1, h1), c1) in &self.terms {
            for ((m2, h2), c2) in &o.terms {
                add_into(&mut terms, (m1.mul(m2), h1.add(h2)), c1.mul(c2));
            }
        }
        ExpPoly { terms }
    }

    /// The leading term under a multiplication-compatible order
    /// (lex on monomial exponents, then lex on exponent coefficients), so
    /// that `lead(k·P) = k·lead(P)` for a single term `k`: one division of
    /// leading terms finds the only candidate factor between two sums.
    pub fn lead(&self) -> Option<(&TermKey, &Rat)> {
        self.terms
            .iter()
            .max_by(|(a, _), (b, _)| a.0.cmp_order(&b.0).then_with(|| a.1.cmp_order(&b.1)))
    }

    /// The single term `k` with `to = k·self`, if there is one (`self`
    /// nonzero). Cost `O(n log n)`: no cross-multiplication.
    pub fn factor_to(&self, to: &ExpPoly) -> Option<ExpPoly> {
        if self.num_terms() != to.num_terms() {
            return None;
        }
        let ((mf, hf), cf) = self.lead()?;
        let ((mt, ht), ct) = to.lead()?;
        let m = mt.div(mf)?;
        let h = ht.add(&hf.neg());
        let c = ct.mul(&cf.recip()?);
        let k = ExpPoly::term(m, h, c);
        (self.mul(&k) == *to).then_some(k)
    }

    /// Human-readable form, at most `max_terms` terms, atoms printed with
    /// `terms`' own printer.
    pub fn describe(&self, terms: &Terms, max_terms: usize) -> String {
        if self.is_zero() {
            return "0".into();
        }
        let mut s = String::new();
        for (i, ((m, h), c)) in self.terms.iter().enumerate() {
            if i == max_terms {
                let _ = write!(s, " + … ({} terms in all)", self.num_terms());
                break;
            }
            if i > 0 {
                s.push_str(" + ");
            }
            let _ = write!(s, "{c}");
            for (a, e) in m.factors() {
                let _ = write!(s, "·{}", atom_str(terms, *a));
                if *e > 1 {
                    let _ = write!(s, "^{e}");
                }
            }
            if !h.is_zero() {
                let inner = ExpPoly {
                    terms: h
                        .0
                        .iter()
                        .map(|(m, c)| ((m.clone(), ExpKey::zero()), c.clone()))
                        .collect(),
                };
                let _ = write!(s, "·e^({})", inner.describe(terms, max_terms));
            }
        }
        s
    }
}

fn atom_str(terms: &Terms, a: Atom) -> String {
    match a {
        Atom::Term(t) => format!("[{}]", terms.display_limited(t, 60)),
        Atom::Ln2 => "ln2".into(),
    }
}

fn add_into(terms: &mut BTreeMap<TermKey, Rat>, k: TermKey, c: Rat) {
    use std::collections::btree_map::Entry;
    match terms.entry(k) {
        Entry::Vacant(v) => {
            if !c.is_zero() {
                v.insert(c);
            }
        }
        Entry::Occupied(mut o) => {
            let s = o.get().add(&c);
            if s.is_zero() {
                o.remove();
            } else {
                *o.get_mut() = s;
            }
        }
    }
}

/// Merge two sorted sparse vectors, combining equal keys (`None` drops).
fn merge<K: Ord + Clone, V: Clone>(
    a: &[(K, V)],
    b: &[(K, V)],
    combine: impl Fn(&V, &V) -> Option<V>,
) -> Vec<(K, V)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                if let Some(v) = combine(&a[i].1, &b[j].1) {
                    out.push((a[i].0.clone(), v));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Lexicographic comparison of two sparse vectors (absent = zero) over
/// their keys in ascending order; `sign(v)` compares `v` with zero.
fn lex_cmp<K: Ord, V>(
    a: &[(K, V)],
    b: &[(K, V)],
    sign: impl Fn(&V) -> Ordering,
    cmp: impl Fn(&V, &V) -> Ordering,
) -> Ordering {
    let (mut i, mut j) = (0, 0);
    loop {
        let step = match (a.get(i), b.get(j)) {
            (None, None) => return Ordering::Equal,
            (Some((_, v)), None) => {
                i += 1;
                sign(v)
            }
            (None, Some((_, w))) => {
                j += 1;
                sign(w).reverse()
            }
            (Some((ka, v)), Some((kb, w))) => match ka.cmp(kb) {
                Ordering::Less => {
                    i += 1;
                    sign(v)
                }
                Ordering::Greater => {
                    j += 1;
                    sign(w).reverse()
                }
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                    cmp(v, w)
                }
            },
        };
        if step != Ordering::Equal {
            return step;
        }
    }
}
