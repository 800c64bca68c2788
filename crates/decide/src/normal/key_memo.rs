//! A per-thread memo of exponent sums (`e^a·e^b = e^{a+b}`,
//! [`ExpKey::add`]).
//!
//! Why: in attention every output element of a row multiplies the same
//! exponentials — a tile's `e^{s_j − m̃}` by the rescaling `e^{m̃ − m_new}`,
//! a whole sum by the single-term factor between two denominators — and
//! each exponent is a 64-term dot product, so the same two exponents are
//! added once per head-dimension column (64 times per row) and the merge,
//! allocation and hashing of the 65-term result dominated the decision
//! procedure. Memoising the sum by its two operands makes the repeats a
//! lookup, and the results shared (`Arc`), which in turn makes the next
//! step's lookups hit.
//!
//! Soundness: the memo maps an operand pair to the sum computed from
//! exactly those operands; a hit is only taken when both stored operands
//! are *equal* (content equality, [`ExpKey`]'s `Eq`) to the asked ones, so
//! a hash collision is a miss. It is a cache of a pure function: clearing
//! it, or which rayon worker thread fills it, never changes a result.
//!
//! Memory: the memo holds its keys and sums alive. It has two
//! generations: lookups try the current one, then the previous one (a hit
//! there is moved forward); once the sums of the current generation hold
//! [`KEY_MEMO_TERMS`] exponent terms it becomes the previous one and the
//! oldest is dropped. So what a row of elements keeps reusing stays, and
//! at most twice the bound is held (a time/memory trade only — a dropped
//! sum is recomputed). The operands are not counted: they are parts of
//! live normal forms, shared, not copies.

use std::cell::RefCell;

use hashbrown::HashMap;

use super::poly::ExpKey;

/// Exponent terms the sums of one generation of a thread's memo hold
/// before the generation is retired: about 64 bytes a term, so at most
/// ≈ 130 MiB per thread (two generations), less where the sums are shared
/// with live normal forms.
pub const KEY_MEMO_TERMS: usize = 1 << 20;

/// Keyed by the two operands' content hashes (smaller first: the sum
/// commutes); the entry holds both operands and their sum.
type Generation = HashMap<(u64, u64), [ExpKey; 3]>;

#[derive(Default)]
struct KeyMemo {
    current: Generation,
    previous: Generation,
    /// Terms of the sums in `current`.
    terms: usize,
    hits: u64,
    misses: u64,
}

impl KeyMemo {
    fn get(&mut self, key: (u64, u64), a: &ExpKey, b: &ExpKey) -> Option<ExpKey> {
        let matches = |e: &[ExpKey; 3]| e[0] == *a && e[1] == *b;
        if let Some(e) = self.current.get(&key).filter(|e| matches(e)) {
            return Some(e[2].clone());
        }
        let e = self.previous.remove(&key).filter(|e| matches(e))?;
        let s = e[2].clone();
        self.insert(key, e);
        Some(s)
    }

    fn insert(&mut self, key: (u64, u64), e: [ExpKey; 3]) {
        if self.terms >= KEY_MEMO_TERMS {
            self.previous = std::mem::take(&mut self.current);
            self.terms = 0;
        }
        self.terms += e[2].terms().len();
        if let Some(old) = self.current.insert(key, e) {
            // A colliding pair replaced: its sum no longer counts.
            self.terms -= old[2].terms().len();
        }
    }
}

thread_local! {
    static MEMO: RefCell<KeyMemo> = RefCell::default();
}

/// `a + b` (both nonzero), from this thread's memo or by `compute`.
pub(super) fn sum(a: &ExpKey, b: &ExpKey, compute: impl FnOnce() -> ExpKey) -> ExpKey {
    let (a, b) = if a.content_hash() <= b.content_hash() {
        (a, b)
    } else {
        (b, a)
    };
    let key = (a.content_hash(), b.content_hash());
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(s) = m.get(key, a, b) {
            m.hits += 1;
            return s;
        }
        m.misses += 1;
        let s = compute();
        m.insert(key, [a.clone(), b.clone(), s.clone()]);
        s
    })
}

/// This thread's memo: (hits, misses) so far. For tests and measurement.
pub fn stats() -> (u64, u64) {
    MEMO.with(|m| {
        let m = m.borrow();
        (m.hits, m.misses)
    })
}

/// Empties this thread's memo (results never depend on it: for tests and
/// for a caller that wants the memory back).
pub fn clear() {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        m.current.clear();
        m.previous.clear();
        m.terms = 0;
    });
}

#[cfg(test)]
mod tests {
    use super::super::poly::{Atom, ExpPoly};
    use super::*;
    use crate::{Rat, Terms};
    use proptest::prelude::*;

    /// `Σ c·x_i·x_j` over inputs of a fresh store, as an exponent.
    fn key(t: &mut Terms, items: &[(i64, u64, u64)]) -> ExpKey {
        let mut p = ExpPoly::zero();
        for &(c, i, j) in items {
            let (xi, xj) = (t.input(0, i), t.input(0, j));
            let m = ExpPoly::atom(Atom::Term(xi)).mul(&ExpPoly::atom(Atom::Term(xj)));
            p.add_assign(&m.scale(&Rat::from_i64(c)));
        }
        p.to_key().expect("exp-free")
    }

    fn items() -> impl Strategy<Value = Vec<(i64, u64, u64)>> {
        prop::collection::vec((-3i64..4, 0u64..5, 0u64..5), 0..8)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Memoised sums (first computed, then hit, from either operand
        /// order, after a clear) equal the plain merge; the hash order is
        /// a total order consistent with equality.
        #[test]
        fn memoised_sums_agree_with_fresh_ones(a in items(), b in items(), c in items()) {
            let mut t = Terms::new();
            let (ka, kb, kc) = (key(&mut t, &a), key(&mut t, &b), key(&mut t, &c));
            let fresh = |x: &ExpKey, y: &ExpKey| {
                if x.is_zero() { y.clone() } else if y.is_zero() { x.clone() } else { x.add_uncached(y) }
            };
            let want = fresh(&ka, &kb);
            prop_assert_eq!(ka.add(&kb), want.clone());
            prop_assert_eq!(ka.add(&kb), want.clone());
            prop_assert_eq!(kb.add(&ka), want.clone());
            // A structurally equal but separately built operand hits too.
            let ka2 = key(&mut t, &a);
            prop_assert_eq!(ka2.add(&kb), want.clone());
            // Associativity through the memo.
            prop_assert_eq!(ka.add(&kb).add(&kc), ka.add(&kb.add(&kc)));
            clear();
            prop_assert_eq!(ka.add(&kb), want);
            for (x, y) in [(&ka, &kb), (&kb, &kc), (&ka, &kc), (&ka, &ka2)] {
                prop_assert_eq!(x == y, x.cmp(y) == std::cmp::Ordering::Equal);
                prop_assert_eq!(x.cmp(y), y.cmp(x).reverse());
                prop_assert_eq!(x == y, x.terms() == y.terms());
            }
        }
    }

    /// The rescaling pattern of attention: one sum per column, the same
    /// exponents in every column, so all but the first column hit.
    #[test]
    fn repeated_sums_hit() {
        let mut t = Terms::new();
        let h = key(&mut t, &[(1, 0, 1), (2, 1, 2)]);
        let r = key(&mut t, &[(-1, 3, 3), (1, 4, 4)]);
        clear();
        let (h0, m0) = stats();
        let first = h.add(&r);
        for _ in 0..63 {
            assert_eq!(h.add(&r), first);
        }
        let (h1, m1) = stats();
        assert_eq!((h1 - h0, m1 - m0), (63, 1));
    }
}
