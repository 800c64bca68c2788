//! The intern table: structural hash → id, one cache line per lookup.
//!
//! Interning a node is dominated by memory latency, not by hashing: the
//! store of a full-size GEMM holds tens of millions of nodes, so every
//! probe of the table is a cache miss. A general hash map (hashbrown's
//! SwissTable) keeps control bytes and entries in two arrays, so a lookup
//! that misses and the insert after it touch two unrelated cache lines —
//! profiles of the SGEMM K = 4096 pair showed those two loads as 90 % of
//! `Terms::intern`. This table keeps everything a probe needs in one
//! `u64` slot: the id (plus one, so that 0 means empty) in the low half and
//! 32 further bits of the node's hash (its *check* bits) in the high half.
//! Linear probing keeps a probe sequence inside one or two adjacent cache
//! lines, and the vacant slot a failed lookup ends on is where the insert
//! goes — one miss per new node.
//!
//! The slot index comes from the low 64 bits of the structural hash, the
//! check bits from bits 64..96, so the two are independent. A matching
//! check is only a candidate: the caller compares the nodes, so a hash
//! collision costs a comparison, never a wrong merge.
//!
//! Capacity is a power of two, at most 3/4 full (then it doubles and
//! is rebuilt from the store's hash column, in id order); entries are
//! never removed. Memory: 8 bytes per slot, 10.7–21.3 bytes per entry —
//! what hashbrown's 9 bytes per slot at 7/8 load cost too.

/// Open-addressing table of ids keyed by precomputed structural hashes.
#[derive(Clone, Default)]
pub(crate) struct IdTable {
    /// `0`: empty; else `(check << 32) | (id + 1)`.
    slots: Vec<u64>,
    /// Occupied slots.
    len: usize,
}

/// Outcome of [`IdTable::find`].
pub(crate) enum Probe {
    /// An entry whose node the caller's `eq` accepted.
    Found(u32),
    /// No such entry; inserting belongs in this slot.
    Vacant(usize),
}

/// The bits of a hash a slot keeps next to its id.
fn check_bits(h: u128) -> u32 {
    (h >> 64) as u32
}

impl IdTable {
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Makes room for `additional` more entries without growing during
    /// them; `hashes[id]` is the hash of every id inserted so far (ids
    /// `0..hashes.len()`, all of which are in the table).
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize, hashes: &[u128]) {
        let need = self.len.saturating_add(additional);
        if need.saturating_mul(4) <= self.slots.len() * 3 {
            return;
        }
        // Room for `need` entries at load ≤ 3/4.
        let want = need
            .saturating_add(need / 3)
            .saturating_add(1)
            .next_power_of_two()
            .max(16);
        if want > self.slots.len() {
            self.rebuild(want, hashes);
        }
    }

    /// Replaces the slots by `cap` empty ones and re-inserts every id of
    /// `hashes` (sequential reads of the hash column; one write each).
    fn rebuild(&mut self, cap: usize, hashes: &[u128]) {
        debug_assert_eq!(hashes.len(), self.len);
        self.slots = vec![0; cap];
        let mask = self.mask();
        for (id, &h) in hashes.iter().enumerate() {
            let mut i = (h as u64 as usize) & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot(id as u32, h);
        }
    }

    /// Looks up hash `h`: the first entry with `h`'s check bits whose id
    /// `eq` accepts, or the vacant slot where `h`'s entry belongs. Call
    /// [`IdTable::reserve`] for one more entry first (so that a vacant
    /// slot exists and stays valid for [`IdTable::insert_at`]).
    #[inline]
    pub(crate) fn find(&self, h: u128, mut eq: impl FnMut(u32) -> bool) -> Probe {
        let mask = self.mask();
        let check = u64::from(check_bits(h));
        let mut i = (h as u64 as usize) & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return Probe::Vacant(i);
            }
            if s >> 32 == check {
                let id = (s as u32) - 1;
                if eq(id) {
                    return Probe::Found(id);
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Fills the vacant slot `at` (from [`IdTable::find`] for `h`, with no
    /// insert since) with `id`.
    #[inline]
    pub(crate) fn insert_at(&mut self, at: usize, id: u32, h: u128) {
        debug_assert_eq!(self.slots[at], 0);
        self.slots[at] = slot(id, h);
        self.len += 1;
    }
}

/// The slot of `id` with hash `h`. Ids below `u32::MAX` only (the store
/// refuses to grow further), so `id + 1` does not wrap.
fn slot(id: u32, h: u128) -> u64 {
    (u64::from(check_bits(h)) << 32) | u64::from(id + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inserts `h` as the next id unless an entry with the same full hash
    /// exists (the stand-in for node equality).
    fn intern(t: &mut IdTable, hashes: &mut Vec<u128>, h: u128) -> u32 {
        t.reserve(1, hashes);
        match t.find(h, |id| hashes[id as usize] == h) {
            Probe::Found(id) => id,
            Probe::Vacant(at) => {
                let id = hashes.len() as u32;
                t.insert_at(at, id, h);
                hashes.push(h);
                id
            }
        }
    }

    #[test]
    fn finds_what_it_inserted_across_growth() {
        let (mut t, mut hs) = (IdTable::default(), Vec::new());
        let h = |i: u128| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
        for i in 0..10_000u128 {
            assert_eq!(intern(&mut t, &mut hs, h(i)), i as u32);
        }
        for i in 0..10_000u128 {
            assert_eq!(intern(&mut t, &mut hs, h(i)), i as u32);
        }
        assert_eq!(hs.len(), 10_000);
        assert!(t.slots.len() * 3 >= t.len * 4);
    }

    #[test]
    fn colliding_slots_and_check_bits_stay_distinct() {
        // Same low 64 bits (same home slot) and same check bits: only
        // the caller's comparison tells them apart.
        let (mut t, mut hs) = (IdTable::default(), Vec::new());
        let base = 7u128 | (5u128 << 64);
        let a = intern(&mut t, &mut hs, base);
        let b = intern(&mut t, &mut hs, base | (1u128 << 100));
        let c = intern(&mut t, &mut hs, base | (1u128 << 101));
        assert_eq!((a, b, c), (0, 1, 2));
        assert_eq!(intern(&mut t, &mut hs, base | (1u128 << 100)), 1);
        assert_eq!(intern(&mut t, &mut hs, base), 0);
    }
}
