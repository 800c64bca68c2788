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

use std::sync::Arc;

use smallvec::{SmallVec, smallvec};

use crate::{Rat, TermId, Terms};

/// An indivisible factor of a monomial.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Atom {
    /// An input, or an opaque node (a `select`, or any node the normal
    /// form cannot look into) identified by its hash-consed id, so
    /// structurally equal terms give the same atom.
    Term(TermId),
    /// `ln 2` (a nonzero constant: negative powers allowed, so the
    /// recovered `log2 e` is `ln2^-1` and `ex2(u) = e^{u·ln2}` obeys the exp
    /// laws).
    Ln2,
    /// `√π` (nonzero: negative powers allowed; `π = √π²`).
    SqrtPi,
    /// `ln 10` (nonzero: negative powers allowed, so `log10 x = log x ·
    /// ln10⁻¹` and the recovered `log2 10 = ln10·ln2⁻¹`).
    Ln10,
    /// `√2`, kept at power 0 or 1: `√2² = 2` moves into the coefficient.
    Sqrt2,
    /// An application over normal-form arguments (`log`, `sqrt`, `max`,
    /// ...): index into the normaliser's table (`Normalizer::app`), so
    /// arguments equal as normal forms give the same atom.
    App(u32),
}

impl Atom {
    /// Whether the atom is a known nonzero constant, so that negative
    /// powers of it are exact.
    pub fn invertible(self) -> bool {
        matches!(self, Atom::Ln2 | Atom::SqrtPi | Atom::Sqrt2 | Atom::Ln10)
    }
}

/// A product of atoms with nonzero exponents, sorted by atom; empty is
/// `1`. Exponents are negative only for [`Atom::invertible`] atoms, and
/// `Sqrt2`'s is `1` when present.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Monomial(SmallVec<[(Atom, i32); 2]>);

impl Monomial {
    /// The empty product.
    pub fn one() -> Monomial {
        Monomial(SmallVec::new())
    }

    /// A single atom.
    pub fn atom(a: Atom) -> Monomial {
        Monomial(smallvec![(a, 1)])
    }

    /// Whether this is the empty product.
    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// The `(atom, exponent)` factors, sorted by atom.
    pub fn factors(&self) -> &[(Atom, i32)] {
        &self.0
    }

    /// A monomial from factors (any order, repeats allowed) with the
    /// rational factor its reduction produced (`√2² = 2`); `None` when a
    /// non-invertible atom would get a negative power.
    pub fn from_factors(mut v: Vec<(Atom, i32)>) -> Option<(Monomial, Rat)> {
        v.sort_by_key(|f| f.0);
        let mut out: Vec<(Atom, i32)> = Vec::with_capacity(v.len());
        for (a, e) in v {
            match out.last_mut() {
                Some(l) if l.0 == a => l.1 += e,
                _ => out.push((a, e)),
            }
        }
        reduce(out)
    }

    /// Product (exponents add) and the rational factor of the reduction.
    pub fn mul(&self, o: &Monomial) -> (Monomial, Rat) {
        let v = merge(self.0.as_slice(), o.0.as_slice(), |a, b| {
            let s = a + b;
            (s != 0).then_some(s)
        });
        reduce(v).expect("a product of valid monomials is valid")
    }

    /// `self / o` when it is again a monomial, with its rational factor.
    pub fn div(&self, o: &Monomial) -> Option<(Monomial, Rat)> {
        let neg: Vec<(Atom, i32)> = o.0.iter().map(|(a, e)| (*a, -e)).collect();
        reduce(merge(self.0.as_slice(), &neg, |a, b| {
            let s = a + b;
            (s != 0).then_some(s)
        }))
    }

    /// Lexicographic order of exponent vectors: compatible with
    /// multiplication, so it picks the same leading term of `k·P` as of
    /// `P` (see [`ExpPoly::lead`]).
    fn cmp_order(&self, o: &Monomial) -> Ordering {
        lex_cmp(
            self.0.as_slice(),
            o.0.as_slice(),
            |e| e.cmp(&0),
            |a, b| a.cmp(b),
        )
    }

    /// Whether every factor is an invertible constant atom.
    pub fn is_invertible(&self) -> bool {
        self.0.iter().all(|(a, _)| a.invertible())
    }
}

/// Canonicalises sorted factors: drops zero powers, rejects negative
/// powers of non-invertible atoms, reduces `√2^e` to `√2^(e mod 2)`.
fn reduce(mut v: Vec<(Atom, i32)>) -> Option<(Monomial, Rat)> {
    v.retain(|f| f.1 != 0);
    let mut coef = Rat::ONE;
    for f in v.iter_mut() {
        if f.1 < 0 && !f.0.invertible() {
            return None;
        }
        if f.0 == Atom::Sqrt2 {
            let r = f.1.rem_euclid(2);
            coef = Rat::from_mantissa_exp(1, (f.1 - r) / 2);
            f.1 = r;
        }
    }
    v.retain(|f| f.1 != 0);
    Some((Monomial(SmallVec::from_vec(v)), coef))
}

/// An exp-free polynomial used as an exponent: sorted `(monomial, coef)`
/// pairs with nonzero coefficients; empty is `0` (so `e^0 = 1`).
///
/// Shared (`Arc`) and carrying a hash of its contents computed once at
/// construction: exponents are long (an attention score is a 64-term dot
/// product) and an [`ExpPoly`] orders its terms by them, so comparing two
/// exponents must not walk both vectors. Equality is content equality (a
/// pointer or hash mismatch only short-cuts it); the order ([`Ord`]) is
/// by hash first and contents second — a total order consistent with
/// equality, but not a mathematical one (that is [`Self::cmp_order`]).
#[derive(Clone, Debug, Default)]
pub struct ExpKey(Arc<KeyData>);

#[derive(Debug, Default)]
struct KeyData {
    /// [`key_hash`] of `terms` (`0` for the empty exponent).
    hash: u64,
    terms: Vec<(Monomial, Rat)>,
}

impl PartialEq for ExpKey {
    fn eq(&self, o: &ExpKey) -> bool {
        Arc::ptr_eq(&self.0, &o.0) || (self.0.hash == o.0.hash && self.0.terms == o.0.terms)
    }
}

impl Eq for ExpKey {}

impl Ord for ExpKey {
    fn cmp(&self, o: &ExpKey) -> Ordering {
        if Arc::ptr_eq(&self.0, &o.0) {
            return Ordering::Equal;
        }
        self.0
            .hash
            .cmp(&o.0.hash)
            .then_with(|| self.0.terms.cmp(&o.0.terms))
    }
}

impl PartialOrd for ExpKey {
    fn partial_cmp(&self, o: &ExpKey) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl std::hash::Hash for ExpKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

/// A deterministic hash of an exponent's terms (the same in every process
/// of one build, so term order and printed residuals do not vary between
/// runs); `0` for no terms.
fn key_hash(terms: &[(Monomial, Rat)]) -> u64 {
    use std::hash::Hash;
    let mut h = KeyHasher(0);
    for (m, c) in terms {
        m.hash(&mut h);
        c.hash(&mut h);
    }
    h.0
}

/// A small multiply-rotate hasher (FxHash's mixing step) with a fixed
/// start: [`key_hash`] must not depend on a per-process random seed.
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_i32(&mut self, x: i32) {
        self.write_u64(x as u32 as u64);
    }

    fn write_i64(&mut self, x: i64) {
        self.write_u64(x as u64);
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

impl ExpKey {
    /// The zero exponent.
    pub fn zero() -> ExpKey {
        ExpKey(Arc::default())
    }

    /// An exponent from sorted terms with nonzero coefficients.
    fn from_sorted(terms: Vec<(Monomial, Rat)>) -> ExpKey {
        ExpKey(Arc::new(KeyData {
            hash: key_hash(&terms),
            terms,
        }))
    }

    /// Whether the exponent is `0`.
    pub fn is_zero(&self) -> bool {
        self.0.terms.is_empty()
    }

    /// The `(monomial, coefficient)` terms, sorted by monomial.
    pub fn terms(&self) -> &[(Monomial, Rat)] {
        &self.0.terms
    }

    /// Sum (`e^a·e^b = e^{a+b}`).
    pub fn add(&self, o: &ExpKey) -> ExpKey {
        if o.is_zero() {
            return self.clone();
        }
        if self.is_zero() {
            return o.clone();
        }
        super::key_memo::sum(self, o, || self.add_uncached(o))
    }

    /// [`Self::add`] without the memo (both nonzero): the merge itself.
    pub(super) fn add_uncached(&self, o: &ExpKey) -> ExpKey {
        ExpKey::from_sorted(merge(self.terms(), o.terms(), |a, b| {
            let s = a.add(b);
            (!s.is_zero()).then_some(s)
        }))
    }

    /// The hash of the contents (equal exponents, equal hashes).
    pub(super) fn content_hash(&self) -> u64 {
        self.0.hash
    }

    /// Negation.
    pub fn neg(&self) -> ExpKey {
        ExpKey::from_sorted(
            self.terms()
                .iter()
                .map(|(m, c)| (m.clone(), c.neg()))
                .collect(),
        )
    }

    /// Every monomial multiplied by `m` (used for `u·ln2`).
    pub fn mul_monomial(&self, m: &Monomial) -> ExpKey {
        let mut v: Vec<_> = self
            .terms()
            .iter()
            .map(|(x, c)| {
                let (p, k) = x.mul(m);
                (p, c.mul(&k))
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        // `m` is a unit for multiplication up to the rational factor, so
        // distinct monomials stay distinct: no terms to combine.
        ExpKey::from_sorted(v)
    }

    /// This exponent as a polynomial (`e^0` terms).
    pub fn to_poly(&self) -> ExpPoly {
        ExpPoly {
            terms: self
                .terms()
                .iter()
                .map(|(m, c)| ((m.clone(), ExpKey::zero()), c.clone()))
                .collect(),
        }
    }

    /// `c·self`.
    pub fn scale(&self, c: &Rat) -> ExpKey {
        if c.is_zero() {
            return ExpKey::zero();
        }
        ExpKey::from_sorted(
            self.terms()
                .iter()
                .map(|(m, x)| (m.clone(), x.mul(c)))
                .collect(),
        )
    }

    /// Lexicographic order of coefficient vectors: compatible with
    /// addition (an ordered group), hence with multiplying `e^h` terms.
    fn cmp_order(&self, o: &ExpKey) -> Ordering {
        lex_cmp(
            self.terms(),
            o.terms(),
            |c| c.signum().cmp(&0),
            |a, b| a.cmp(b),
        )
    }
}

/// The key of one term: monomial and exponent.
pub type TermKey = (Monomial, ExpKey);

/// A finite sum `Σ c·m·e^h` in canonical form (see the module docs).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
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

    /// Whether this is the constant `1` (no clone: asked of every
    /// denominator, [`super::RatFn::is_poly`]).
    pub fn is_one(&self) -> bool {
        self.terms.len() == 1
            && self
                .terms
                .iter()
                .next()
                .is_some_and(|((m, h), c)| m.is_one() && h.is_zero() && c.is_one())
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
            .map(ExpKey::from_sorted)
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
                let (m, k) = m1.mul(m2);
                add_into(&mut terms, (m, h1.add(h2)), c1.mul(c2).mul(&k));
            }
        }
        ExpPoly { terms }
    }

    /// `self²` with half the term products of [`Self::mul`] (cross
    /// terms `2·t_i·t_j`, `i < j`, once each): a variance's squared
    /// deviations are the common case.
    pub fn square(&self) -> ExpPoly {
        let two = Rat::from_i64(2);
        let v: Vec<(&TermKey, &Rat)> = self.terms.iter().collect();
        let mut terms = BTreeMap::new();
        for (i, ((m1, h1), c1)) in v.iter().enumerate() {
            let (m, k) = m1.mul(m1);
            add_into(&mut terms, (m, h1.add(h1)), c1.mul(c1).mul(&k));
            for ((m2, h2), c2) in &v[i + 1..] {
                let (m, k) = m1.mul(m2);
                add_into(&mut terms, (m, h1.add(h2)), c1.mul(c2).mul(&k).mul(&two));
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
    /// nonzero). The leading terms give the only candidate `k`; it is
    /// checked term by term, stopping at the first term of `k·self`
    /// missing from `to` — no product is built, so a failed attempt (the
    /// common case when [`super::Normalizer`] tries every pair of factors
    /// for a cancellation) costs about one term.
    ///
    /// Exact: multiplying by one term maps distinct terms to distinct
    /// terms (monomial exponents and exponent keys shift by a constant;
    /// `√2`'s power stays 0 or 1 and distinct), so `k·self` has exactly
    /// `self`'s number of terms, all nonzero, and equals `to` (of the same
    /// size) exactly when each of them is a term of `to` with the same
    /// coefficient.
    pub fn factor_to(&self, to: &ExpPoly) -> Option<ExpPoly> {
        if self.num_terms() != to.num_terms() {
            return None;
        }
        let ((mf, hf), cf) = self.lead()?;
        let ((mt, ht), ct) = to.lead()?;
        // `mt/mf = k·m` (`k` rational: `√2` powers reduce), so the factor
        // is `(ct/cf)·k·m·e^h`. (It was `(ct/cf)/k`, which missed every
        // factor whose lead division reduced a `√2`.)
        let (m, k) = mt.div(mf)?;
        let h = ht.add(&hf.neg());
        let c = ct.mul(&cf.recip()?).mul(&k);
        for ((m1, h1), c1) in &self.terms {
            let (mm, km) = m1.mul(&m);
            let want = c1.mul(&c).mul(&km);
            if to.terms.get(&(mm, h1.add(&h))) != Some(&want) {
                return None;
            }
        }
        let k = ExpPoly::term(m, h, c);
        debug_assert!(self.mul(&k) == *to, "factor_to: term-wise check disagrees");
        Some(k)
    }

    /// Human-readable form, at most `max_terms` terms, atoms printed with
    /// `terms`' own printer.
    pub fn describe(&self, terms: &Terms, max_terms: usize) -> String {
        self.describe_with(max_terms, &|a| atom_str(terms, a))
    }

    /// Human-readable form with atoms printed by `atom`.
    pub fn describe_with(&self, max_terms: usize, atom: &dyn Fn(Atom) -> String) -> String {
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
                let _ = write!(s, "·{}", atom(*a));
                if *e != 1 {
                    let _ = write!(s, "^{e}");
                }
            }
            if !h.is_zero() {
                let inner = h.to_poly();
                let _ = write!(s, "·e^({})", inner.describe_with(max_terms, atom));
            }
        }
        s
    }

    /// Every atom occurring anywhere (monomials and exponents).
    pub fn atoms(&self, out: &mut Vec<Atom>) {
        for (m, h) in self.terms.keys() {
            out.extend(m.factors().iter().map(|f| f.0));
            for (hm, _) in h.terms() {
                out.extend(hm.factors().iter().map(|f| f.0));
            }
        }
    }
}

/// An atom printed without the normaliser's application table.
pub(crate) fn atom_str(terms: &Terms, a: Atom) -> String {
    match a {
        Atom::Term(t) => format!("[{}]", terms.display_limited(t, 60)),
        Atom::Ln2 => "ln2".into(),
        Atom::SqrtPi => "√π".into(),
        Atom::Ln10 => "ln10".into(),
        Atom::Sqrt2 => "√2".into(),
        Atom::App(i) => format!("f{i}"),
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
