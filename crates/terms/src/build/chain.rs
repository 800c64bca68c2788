//! Deferred accumulation chains: `acc = acc + x` without a node per
//! partial sum.
//!
//! An accumulation loop (`acc = fma(a, b, acc)`, `acc = acc + x`) builds,
//! through [`Terms::add`]'s fast path, one new `Add` node per step: the
//! previous sum's operands with the new addend inserted in canonical
//! order, until the sum holds [`FLATTEN_LIMIT`] operands (then the next
//! sum nests it). Of those partial sums only the last of each run of
//! [`FLATTEN_LIMIT`] is ever reachable from an output — on a K = 4096
//! GEMM tile that is 1 in 31 of half the store, every one of them a hash,
//! an intern-table miss and a heap-allocated operand list.
//!
//! [`SumChains`] defers exactly those steps. A [`Sum`] is either an
//! interned term or a *pending* sum: a slot of the chains' arena holding
//! the operands the fast path would have put in the node, in insertion
//! order, and a length (the handle names a prefix of its slot, so copies
//! of a handle stay valid when one of them is extended: the first
//! extension appends in place, a later one from the same prefix copies
//! it). A pending sum becomes a term — [`SumChains::force`] — when
//! anything other than another fast-path addition reads it; forcing sorts
//! the operands into canonical order and interns the `Add` node, which is
//! exactly the node the eager steps would have built last (the fast path
//! inserts each addend in canonical position of an already canonical
//! list, so the final list is the sorted multiset; property-tested below
//! against [`Terms::add`]). Every step that the fast path would not take
//! — a constant or a sum as the addend, a like term, a full list — forces
//! the pending operand first and then calls [`Terms::add`], so the
//! general constructor sees exactly the node it saw before.
//!
//! Term identity is therefore unchanged for every observed value; only
//! the partial sums nobody observes are never built (their ids, which are
//! creation-ordered, shift — ids were never part of a term's meaning or
//! of its hash).

use smallvec::SmallVec;

use super::FLATTEN_LIMIT;
use crate::node::{Node, Operands, TermId};
use crate::store::{FLAG_BOOL, FLAG_CONST, FLAG_MAYBE_INF, Terms};

/// Bits of a [`PendingSum`] handle that hold the prefix length (up to
/// [`FLATTEN_LIMIT`] = 32 operands).
const LEN_BITS: u32 = 6;
const _: () = assert!(FLATTEN_LIMIT < (1 << LEN_BITS));
/// Most slots the arena hands out; past it additions are built eagerly
/// (the handle has 32 − [`LEN_BITS`] bits for the slot).
const MAX_SLOTS: usize = 1 << (32 - LEN_BITS);

/// A real value of a [`SumChains`]-backed computation: an interned term,
/// or a sum not interned yet. Eight bytes, `Copy`.
///
/// Equality of two `Sum`s is equality of handles: equal handles are
/// equal values, but two different handles may be the same term (use
/// [`SumChains::same`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Sum {
    Term(TermId),
    Pending(PendingSum),
}

/// Handle of a pending sum: slot `raw >> LEN_BITS`, the first
/// `raw & (2^LEN_BITS − 1)` operands of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PendingSum(u32);

impl PendingSum {
    fn new(slot: usize, len: usize) -> PendingSum {
        PendingSum(((slot as u32) << LEN_BITS) | len as u32)
    }

    fn slot(self) -> usize {
        (self.0 >> LEN_BITS) as usize
    }

    fn len(self) -> usize {
        (self.0 & ((1 << LEN_BITS) - 1)) as usize
    }
}

/// One arena slot: the operands of a growing sum, in insertion order (a
/// leading constant, if any, first).
#[derive(Clone)]
struct Slot {
    ops: [TermId; FLATTEN_LIMIT],
    len: u8,
    /// The last forcing of this slot: (prefix length, its term).
    forced: Option<(u8, TermId)>,
}

/// Counters of a [`SumChains`] (for profiles and benches).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct ChainStats {
    /// Additions taken as a deferred step (no node built).
    pub deferred: u64,
    /// Pending sums interned (each one node).
    pub forced: u64,
    /// Extensions of a prefix that had been extended already (a copy).
    pub copies: u64,
}

/// The arena of pending sums (see the module docs). One per run; handles
/// are meaningful only to the arena that made them and the store they
/// were built against.
#[derive(Default)]
pub struct SumChains {
    slots: Vec<Slot>,
    stats: ChainStats,
    /// Which tag (a caller's instruction number) made each pending sum,
    /// when asked for ([`SumChains::record_tags`]).
    tags: Option<Tags>,
}

/// The tags of [`SumChains::record_tags`]: per slot and prefix length, the
/// tag current when the addition that made that handle ran (`u32::MAX`:
/// none).
#[derive(Default)]
struct Tags {
    current: u32,
    by_slot: Vec<[u32; FLATTEN_LIMIT]>,
}

impl SumChains {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stats(&self) -> ChainStats {
        self.stats
    }

    /// Arena slots in use (each holds up to [`FLATTEN_LIMIT`] operands).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// `a + b`: the value [`Terms::add`] gives for the forced operands,
    /// deferred when it is one more operand joining a sum on the fast path.
    pub fn add(&mut self, terms: &mut Terms, a: Sum, b: Sum) -> Sum {
        if let Some(s) = self.extend(terms, a, b) {
            return s;
        }
        let a = self.force(terms, a);
        let b = self.force(terms, b);
        Sum::Term(terms.add(a, b))
    }

    /// `a + b` as a deferred step, when it is one (else `None`, and
    /// [`SumChains::add`] would force both and call [`Terms::add`]): for a
    /// caller that forces through its own bookkeeping.
    pub fn extend(&mut self, terms: &Terms, a: Sum, b: Sum) -> Option<Sum> {
        let s = self.try_extend(terms, a, b)?;
        self.stats.deferred += 1;
        if let (Some(tags), Sum::Pending(p)) = (&mut self.tags, s) {
            if tags.by_slot.len() <= p.slot() {
                tags.by_slot.resize(p.slot() + 1, [u32::MAX; FLATTEN_LIMIT]);
            }
            tags.by_slot[p.slot()][p.len() - 1] = tags.current;
        }
        Some(s)
    }

    /// Records from now on which tag ([`SumChains::set_tag`]) made each
    /// pending sum, for [`SumChains::tag`]: a replay that names the
    /// instruction behind each term attributes a sum interned late (when
    /// it is read) to the addition that completed it.
    pub fn record_tags(&mut self) {
        self.tags.get_or_insert_with(Tags::default);
    }

    /// The tag of the additions that follow (when tags are recorded).
    #[inline]
    pub fn set_tag(&mut self, tag: u32) {
        if let Some(t) = &mut self.tags {
            t.current = tag;
        }
    }

    /// The tag current when the addition that made the pending sum `s`
    /// ran (`None`: a term, or tags not recorded then).
    pub fn tag(&self, s: Sum) -> Option<u32> {
        let Sum::Pending(p) = s else { return None };
        let tag = self.tags.as_ref()?.by_slot.get(p.slot())?[p.len() - 1];
        (tag != u32::MAX).then_some(tag)
    }

    /// The interned term of `s` (building it if pending).
    pub fn force(&mut self, terms: &mut Terms, s: Sum) -> TermId {
        let p = match s {
            Sum::Term(t) => return t,
            Sum::Pending(p) => p,
        };
        let slot = &self.slots[p.slot()];
        if let Some((len, t)) = slot.forced
            && usize::from(len) == p.len()
        {
            return t;
        }
        let ops = Operands::from_slice(&slot.ops[..p.len()]);
        let t = terms.intern_extended_sum(ops);
        self.slots[p.slot()].forced = Some((p.len() as u8, t));
        self.stats.forced += 1;
        t
    }

    /// Whether `a` and `b` are the same term, without interning: both
    /// terms and equal, or both sums of the same operands.
    pub fn same(&self, terms: &Terms, a: Sum, b: Sum) -> bool {
        if let (Sum::Term(x), Sum::Term(y)) = (a, b) {
            return x == y;
        }
        match (self.canonical_ops(terms, a), self.canonical_ops(terms, b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    }

    /// The operands of `s` as the interned `Add` node has (would have)
    /// them; `None` for a term that is not a sum.
    fn canonical_ops(&self, terms: &Terms, s: Sum) -> Option<SmallVec<[TermId; 32]>> {
        match s {
            Sum::Term(t) => match terms.node(t) {
                Node::Add(ops) => Some(ops.iter().copied().collect()),
                _ => None,
            },
            Sum::Pending(p) => {
                let mut ops: SmallVec<[TermId; 32]> =
                    SmallVec::from_slice(&self.slots[p.slot()].ops[..p.len()]);
                terms.sort_sum_operands(&mut ops);
                Some(ops)
            }
        }
    }

    /// The operands of `s` in canonical order, for messages about a value
    /// that is not interned (`None` for a term).
    pub fn pending_operands(&self, terms: &Terms, s: Sum) -> Option<Vec<TermId>> {
        match s {
            Sum::Term(_) => None,
            Sum::Pending(_) => self.canonical_ops(terms, s).map(|o| o.to_vec()),
        }
    }

    /// The deferred step, when `a + b` is a sum (interned or pending)
    /// extended on the fast path by a plain addend.
    fn try_extend(&mut self, terms: &Terms, a: Sum, b: Sum) -> Option<Sum> {
        let (sum, t) = match (a, b) {
            (s, Sum::Term(t)) if terms.plain_addend(t) => (s, t),
            (Sum::Term(t), s) if terms.plain_addend(t) => (s, t),
            _ => return None,
        };
        match sum {
            Sum::Term(s) => {
                let ops = terms.extendable_sum(s)?;
                if !terms.extends_sum(ops, t) || self.slots.len() >= MAX_SLOTS {
                    return None;
                }
                let mut slot = Slot {
                    ops: [TermId(0); FLATTEN_LIMIT],
                    len: 0,
                    forced: None,
                };
                slot.ops[..ops.len()].copy_from_slice(ops);
                slot.ops[ops.len()] = t;
                slot.len = (ops.len() + 1) as u8;
                self.slots.push(slot);
                Some(Sum::Pending(PendingSum::new(
                    self.slots.len() - 1,
                    ops.len() + 1,
                )))
            }
            Sum::Pending(p) => {
                let (i, len) = (p.slot(), p.len());
                if !terms.extends_sum(&self.slots[i].ops[..len], t) {
                    return None;
                }
                if usize::from(self.slots[i].len) == len {
                    let slot = &mut self.slots[i];
                    slot.ops[len] = t;
                    slot.len += 1;
                    return Some(Sum::Pending(PendingSum::new(i, len + 1)));
                }
                // This prefix was extended before (the handle was copied):
                // the other extension keeps the slot, this one copies.
                if self.slots.len() >= MAX_SLOTS {
                    return None;
                }
                let mut slot = self.slots[i].clone();
                slot.ops[len] = t;
                slot.len = (len + 1) as u8;
                slot.forced = None;
                self.slots.push(slot);
                self.stats.copies += 1;
                Some(Sum::Pending(PendingSum::new(self.slots.len() - 1, len + 1)))
            }
        }
    }
}

impl Terms {
    /// Whether `t` may join a sum on `add`'s fast path as the new operand:
    /// real, finite, not a constant, not a sum.
    fn plain_addend(&self, t: TermId) -> bool {
        self.plain(t, |n| matches!(n, Node::Add(_)))
    }

    /// The operands of `s` when `s` is a sum the fast path extends: a
    /// finite real `Add` whose only constant, if any, leads.
    fn extendable_sum(&self, s: TermId) -> Option<&[TermId]> {
        if self.flags[s.index()] & (FLAG_BOOL | FLAG_MAYBE_INF) != 0 {
            return None;
        }
        let Node::Add(ops) = &self.nodes[s.index()] else {
            return None;
        };
        let lead = usize::from(self.flags[ops[0].index()] & FLAG_CONST != 0);
        if ops[lead..]
            .iter()
            .any(|o| self.flags[o.index()] & FLAG_CONST != 0)
        {
            return None;
        }
        Some(ops)
    }

    /// Whether the fast path builds `Add(ops) + t` by inserting the plain
    /// `t` into `ops` (an extendable sum's operands, in any order): room
    /// left under [`FLATTEN_LIMIT`] and no like term of `t` among them.
    fn extends_sum(&self, ops: &[TermId], t: TermId) -> bool {
        if ops.len() + 1 > FLATTEN_LIMIT {
            return false;
        }
        let tk = self.base_key(t);
        !ops.iter()
            .any(|&o| self.flags[o.index()] & FLAG_CONST == 0 && self.base_key(o) == tk)
    }

    /// Canonical order of a sum's operands: its constant (at most one)
    /// first, the rest by key.
    fn sort_sum_operands(&self, ops: &mut [TermId]) {
        ops.sort_by_key(|&o| (self.flags[o.index()] & FLAG_CONST == 0, self.key(o)));
    }

    /// Interns the sum of `ops` — an extendable sum's operands plus plain
    /// addends that passed [`Terms::extends_sum`] one by one, in any
    /// order — as the node the fast path would have built.
    fn intern_extended_sum(&mut self, mut ops: Operands) -> TermId {
        self.sort_sum_operands(&mut ops);
        self.intern(Node::Add(ops))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rat::Rat;

    /// A small deterministic generator (no dependency).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// An addend of the kinds accumulation loops add: products of inputs
    /// (repeats make like terms), scaled inputs, negations, constants,
    /// sums, infinities.
    fn addend(t: &mut Terms, g: &mut Lcg) -> TermId {
        let x = t.input(0, g.next(6));
        let y = t.input(1, g.next(6));
        match g.next(12) {
            0 => t.konst(Rat::from_i64(g.next(3) as i64)),
            1 => t.add(x, y),
            2 => t.neg(x),
            3 => {
                let c = t.konst(Rat::from_i64(3));
                t.mul(c, x)
            }
            4 if g.next(8) == 0 => t.pos_inf(),
            5 => x,
            _ => t.mul(x, y),
        }
    }

    /// With tags recorded, a pending sum names the tag of the addition
    /// that made it, each copy of a handle its own; terms and sums made
    /// before recording have none.
    #[test]
    fn a_pending_sum_carries_the_tag_of_the_addition_that_made_it() {
        let mut t = Terms::new();
        let mut c = SumChains::new();
        let p: Vec<TermId> = (0..6)
            .map(|i| {
                let a = t.input(0, i);
                let b = t.input(1, i);
                t.mul(a, b)
            })
            .collect();
        // Two products make an interned sum; a third joins it deferred.
        let base = Sum::Term(t.add(p[0], p[1]));
        let untagged = c.add(&mut t, base, Sum::Term(p[2]));
        assert!(matches!(untagged, Sum::Pending(_)));
        c.record_tags();
        assert_eq!(c.tag(untagged), None);
        assert_eq!(c.tag(base), None);
        c.set_tag(7);
        let s = c.add(&mut t, untagged, Sum::Term(p[3]));
        c.set_tag(9);
        // Extends the same prefix again: a copy with its own tag.
        let s2 = c.add(&mut t, untagged, Sum::Term(p[4]));
        let s3 = c.add(&mut t, s, Sum::Term(p[4]));
        assert_eq!(
            (c.tag(s), c.tag(s2), c.tag(s3)),
            (Some(7), Some(9), Some(9))
        );
        // `extend` is `add`'s deferred step, and nothing else.
        c.set_tag(11);
        let s4 = c.extend(&t, s3, Sum::Term(p[5])).expect("deferred");
        assert_eq!(c.tag(s4), Some(11));
        assert_eq!(c.extend(&t, Sum::Term(p[0]), Sum::Term(p[1])), None);
    }

    /// Every sequence of additions gives the same terms, deferred or
    /// eager, including after copies of a handle are extended apart and
    /// across the flatten limit.
    #[test]
    fn deferred_chains_force_to_the_eager_terms() {
        for seed in 0..300u64 {
            let mut g = Lcg(seed);
            let mut eager = Terms::new();
            let mut lazy = Terms::new();
            let mut chains = SumChains::new();
            // A few accumulators, each eager and lazy.
            let mut accs_e: Vec<TermId> = vec![eager.konst(Rat::ZERO); 3];
            let zero = lazy.konst(Rat::ZERO);
            let mut accs_l: Vec<Sum> = vec![Sum::Term(zero); 3];
            let steps = 20 + g.next(80);
            for _ in 0..steps {
                let pick = g.next(3) as usize;
                let op = g.next(10);
                let (xe, xl) = {
                    let mut g2 = Lcg(g.0);
                    let xe = addend(&mut eager, &mut g2);
                    let xl = addend(&mut lazy, &mut g);
                    (xe, xl)
                };
                match op {
                    // Copy one accumulator over another (handle copies).
                    0 => {
                        let from = g.next(3) as usize;
                        accs_e[pick] = accs_e[from];
                        accs_l[pick] = accs_l[from];
                    }
                    // Sum of two accumulators.
                    1 => {
                        let other = g.next(3) as usize;
                        accs_e[pick] = eager.add(accs_e[pick], accs_e[other]);
                        accs_l[pick] = chains.add(&mut lazy, accs_l[pick], accs_l[other]);
                    }
                    // Either operand order.
                    2 => {
                        accs_e[pick] = eager.add(xe, accs_e[pick]);
                        accs_l[pick] = chains.add(&mut lazy, Sum::Term(xl), accs_l[pick]);
                    }
                    _ => {
                        accs_e[pick] = eager.add(accs_e[pick], xe);
                        accs_l[pick] = chains.add(&mut lazy, accs_l[pick], Sum::Term(xl));
                    }
                }
                if g.next(16) == 0 {
                    // An observation mid-chain.
                    let t = chains.force(&mut lazy, accs_l[pick]);
                    assert_eq!(lazy.hash128(t), eager.hash128(accs_e[pick]), "seed {seed}");
                }
            }
            for (e, l) in accs_e.iter().zip(&accs_l) {
                let t = chains.force(&mut lazy, *l);
                assert_eq!(lazy.hash128(t), eager.hash128(*e), "seed {seed}");
                assert_eq!(
                    lazy.display(t).to_string(),
                    eager.display(*e).to_string(),
                    "seed {seed}"
                );
            }
            // `same` agrees with forcing.
            for a in &accs_l {
                for b in &accs_l {
                    let same = chains.same(&lazy, *a, *b);
                    let (ta, tb) = (chains.force(&mut lazy, *a), chains.force(&mut lazy, *b));
                    assert_eq!(same, ta == tb, "seed {seed}");
                }
            }
        }
    }

    /// In one store, forcing a chain gives the very node the eager
    /// additions built, and a K-step accumulation builds one node per
    /// [`FLATTEN_LIMIT`] addends instead of one per addend.
    #[test]
    fn accumulation_builds_only_the_reachable_sums() {
        let k = 1000u64;
        let mut t = Terms::new();
        let products: Vec<TermId> = (0..k)
            .map(|i| {
                let a = t.input(0, i);
                let b = t.input(1, i);
                t.mul(a, b)
            })
            .collect();
        let before = t.len();
        let mut chains = SumChains::new();
        let zero = t.konst(Rat::ZERO);
        let mut acc = Sum::Term(zero);
        for &p in &products {
            acc = chains.add(&mut t, Sum::Term(p), acc);
        }
        let lazy = chains.force(&mut t, acc);
        let built = t.len() - before;
        assert!(
            built <= 2 * (k as usize) / (FLATTEN_LIMIT - 1) + 4,
            "{built} nodes"
        );
        let mut eager = zero;
        for &p in &products {
            eager = t.add(p, eager);
        }
        assert_eq!(eager, lazy);
        assert!(chains.stats().deferred > k * 9 / 10);
    }
}
