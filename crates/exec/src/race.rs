//! Happens-before tracking: vector clocks per thread and a shadow per byte.
//!
//! The structured-CTA race semantics (design.md §4) judge, per byte, the
//! last writer(s) and the readers since, against the set of threads that
//! have not synchronised with them. Vector clocks give exactly that with
//! cost independent of threads × addresses:
//!
//! - every thread `t` has an epoch `own[t]`; an access is stamped
//!   `(t, own[t])`; an access `(u, e)` happens before `t`'s current point
//!   iff `u == t` (program order) or `VC_t[u] ≥ e`;
//! - a synchronisation among participants `P` (barrier completion,
//!   `bar.warp.sync`) joins their clocks (plus the snapshots released by
//!   `bar.arrive` into that barrier generation), gives the join to every
//!   participant and advances their epochs;
//! - `VC_t` is stored as a shared base vector plus `own[t]`: after a
//!   CTA-wide barrier all threads share one base, so a barrier costs
//!   O(distinct bases × threads), not O(threads²).
//!
//! Shadow entries keep the last write (a set when several unordered writes
//! are allowed to coexist: atomics, or benign same-value stores of the same
//! instruction) and the reads since (FastTrack-style: a read ordered after
//! all earlier reads replaces them).

use std::rc::Rc;

use rustc_hash::FxHashSet;

use crate::sparse::{Meter, SparseVec};

/// Per-thread vector clocks.
pub(crate) struct Clocks {
    own: Vec<u32>,
    base: Vec<Rc<[u32]>>,
}

/// A thread's clock as released by `bar.arrive`.
#[derive(Clone)]
pub(crate) struct Snapshot {
    base: Rc<[u32]>,
    own: u32,
    tid: u32,
}

impl Clocks {
    pub(crate) fn new(n: usize) -> Self {
        let zero: Rc<[u32]> = vec![0u32; n].into();
        Clocks {
            own: vec![1; n],
            base: vec![zero; n],
        }
    }

    /// The current epoch of `t`.
    pub(crate) fn epoch(&self, t: u32) -> u32 {
        self.own[t as usize]
    }

    /// Whether `(u, e)` happens before `t`'s current point.
    #[inline]
    pub(crate) fn knows(&self, t: u32, u: u32, e: u32) -> bool {
        t == u || self.base[t as usize][u as usize] >= e
    }

    pub(crate) fn snapshot(&self, t: u32) -> Snapshot {
        Snapshot {
            base: self.base[t as usize].clone(),
            own: self.own[t as usize],
            tid: t,
        }
    }

    /// Starts a new epoch for `t` (after a release).
    pub(crate) fn tick(&mut self, t: u32) {
        self.own[t as usize] += 1;
    }

    /// Joins the clocks of `participants` and the `releases`, gives the
    /// join to every participant and advances their epochs.
    pub(crate) fn sync(&mut self, participants: &[u32], releases: &[Snapshot]) {
        let n = self.own.len();
        let mut j = vec![0u32; n];
        let mut seen: FxHashSet<usize> = FxHashSet::default();
        let mut join_base = |j: &mut Vec<u32>, b: &Rc<[u32]>| {
            if seen.insert(Rc::as_ptr(b) as *const u32 as usize) {
                for (x, y) in j.iter_mut().zip(b.iter()) {
                    if *y > *x {
                        *x = *y;
                    }
                }
            }
        };
        for &p in participants {
            join_base(&mut j, &self.base[p as usize]);
        }
        for s in releases {
            join_base(&mut j, &s.base);
        }
        for s in releases {
            let x = &mut j[s.tid as usize];
            *x = (*x).max(s.own);
        }
        for &p in participants {
            let x = &mut j[p as usize];
            *x = (*x).max(self.own[p as usize]);
        }
        let shared: Rc<[u32]> = j.into();
        for &p in participants {
            self.base[p as usize] = shared.clone();
            self.own[p as usize] += 1;
        }
    }
}

/// One access in a shadow: thread, epoch, packed instruction id, atomic.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Acc {
    pub tid: u32,
    pub epoch: u32,
    pub instr: u32,
    pub atomic: bool,
}

const NONE: u32 = u32::MAX;

impl Acc {
    const EMPTY: Acc = Acc {
        tid: NONE,
        epoch: 0,
        instr: 0,
        atomic: false,
    };

    fn is_some(&self) -> bool {
        self.tid != NONE
    }
}

/// Per-byte race state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shadow {
    w: Acc,
    r: Acc,
    /// Index + 1 into the pool of extra writes / reads (0: none).
    wx: u32,
    rx: u32,
}

impl Default for Shadow {
    fn default() -> Self {
        Shadow {
            w: Acc::EMPTY,
            r: Acc::EMPTY,
            wx: 0,
            rx: 0,
        }
    }
}

/// The access that conflicts with the current one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conflict {
    pub prev: Acc,
    pub prev_is_write: bool,
}

/// Shadows of one region plus the pool of access sets.
///
/// A region starts in word mode (one shadow per aligned 4 bytes) when its
/// size allows, and switches to byte mode for good at the first access
/// that is not a whole number of aligned words; word mode is exact as
/// long as every access covers whole words, and 4× cheaper. Shadows are a
/// sparse array (`crate::sparse`): a shadow exists only for the bytes some
/// access touched.
pub(crate) struct ShadowMem {
    pub shadows: SparseVec<Shadow>,
    /// Bytes per shadow: 4 or 1.
    pub gran: usize,
    pool: Vec<Vec<Acc>>,
    free: Vec<u32>,
}

impl ShadowMem {
    #[cfg(test)]
    pub(crate) fn new(size: usize) -> Self {
        Self::with_storage(size, |n| SparseVec::new(n, Shadow::default()))
    }

    /// Like [`ShadowMem::new`], counting the shadows' storage on `meter`.
    pub(crate) fn metered(size: usize, meter: &Meter) -> Self {
        Self::with_storage(size, |n| SparseVec::metered(n, Shadow::default(), meter))
    }

    fn with_storage(size: usize, make: impl FnOnce(usize) -> SparseVec<Shadow>) -> Self {
        let gran = if size.is_multiple_of(4) { 4 } else { 1 };
        ShadowMem {
            shadows: make(size / gran),
            gran,
            pool: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Heap bytes of the shadows (access-set pool excluded).
    pub(crate) fn bytes(&self) -> u64 {
        self.shadows.bytes()
    }

    /// The shadow units covering `[off, off + width)`, switching to byte
    /// mode when the access splits a word.
    pub(crate) fn units(&mut self, off: usize, width: usize) -> std::ops::Range<usize> {
        if self.gran == 4 && (!off.is_multiple_of(4) || !width.is_multiple_of(4)) {
            self.split_words();
        }
        off / self.gran..(off + width).div_ceil(self.gran)
    }

    fn split_words(&mut self) {
        let mut new = self.shadows.empty_like(self.shadows.len() * 4);
        let old = std::mem::replace(&mut self.shadows, SparseVec::new(0, Shadow::default()));
        for (start, page) in old.allocated() {
            for (j, &sh) in page.iter().enumerate() {
                for k in 0..4 {
                    let mut c = sh;
                    if k > 0 {
                        for ix in [&mut c.wx, &mut c.rx] {
                            if *ix != 0 {
                                let list = self.pool[*ix as usize - 1].clone();
                                let n = self.alloc();
                                self.pool[n as usize - 1] = list;
                                *ix = n;
                            }
                        }
                    }
                    new.set((start + j) * 4 + k, c);
                }
            }
        }
        self.shadows = new;
        self.gran = 1;
    }

    fn list(&self, ix: u32) -> &[Acc] {
        if ix == 0 {
            &[]
        } else {
            &self.pool[ix as usize - 1]
        }
    }

    fn alloc(&mut self) -> u32 {
        if let Some(i) = self.free.pop() {
            i
        } else {
            self.pool.push(Vec::new());
            self.pool.len() as u32
        }
    }

    fn release(&mut self, ix: u32) {
        if ix != 0 {
            self.pool[ix as usize - 1].clear();
            self.free.push(ix);
        }
    }

    /// A read of byte `b` by `cur` (atomic for the read half of an RMW).
    pub(crate) fn read(&mut self, clocks: &Clocks, b: usize, cur: Acc) -> Option<Conflict> {
        self.read_ex(clocks, b, cur, |_| false)
    }

    /// [`ShadowMem::read`], where an earlier access for which `exempt`
    /// holds counts as ordered before this one (one warp's wmma accesses
    /// through one view, `engine/wmma_check.rs`).
    pub(crate) fn read_ex(
        &mut self,
        clocks: &Clocks,
        b: usize,
        cur: Acc,
        exempt: impl Fn(&Acc) -> bool,
    ) -> Option<Conflict> {
        let t = cur.tid;
        let sh = self.shadows[b];
        let mut conflict = None;
        let unordered = |w: &Acc| {
            if !w.is_some() || (w.atomic && cur.atomic) {
                return false;
            }
            !(clocks.knows(t, w.tid, w.epoch) || exempt(w))
        };
        if unordered(&sh.w) {
            conflict = Some(Conflict {
                prev: sh.w,
                prev_is_write: true,
            });
        } else if let Some(w) = self.list(sh.wx).iter().find(|w| unordered(w)) {
            conflict = Some(Conflict {
                prev: *w,
                prev_is_write: true,
            });
        }
        // Record the read.
        let sh = &mut self.shadows[b];
        if sh.rx == 0 {
            if !sh.r.is_some() || sh.r.tid == t || clocks.knows(t, sh.r.tid, sh.r.epoch) {
                // Ordered after the only earlier read: it subsumes it.
                sh.r = cur;
                return conflict;
            }
            // A second, concurrent reader: keep both in a list.
            let first = sh.r;
            sh.r = Acc::EMPTY;
            let ix = self.alloc();
            self.shadows[b].rx = ix;
            let list = &mut self.pool[ix as usize - 1];
            list.push(first);
            list.push(cur);
            return conflict;
        }
        let list = &mut self.pool[sh.rx as usize - 1];
        // Amortised pruning: entries this reader already knows are implied
        // by its own read (a later writer ordered after this read is
        // ordered after them; one that is not races with this read).
        if list.len() >= 8 && list.len().is_power_of_two() {
            list.retain(|e| e.tid != t && !clocks.knows(t, e.tid, e.epoch));
        }
        list.push(cur);
        conflict
    }

    /// A write of byte `b` by `cur`. `same_value` says the byte's new
    /// content equals what the last write stored (benign same-value stores
    /// of one instruction are not a race).
    pub(crate) fn write(
        &mut self,
        clocks: &Clocks,
        b: usize,
        cur: Acc,
        same_value: bool,
    ) -> Option<Conflict> {
        self.write_ex(clocks, b, cur, same_value, |_| false)
    }

    /// [`ShadowMem::write`] with exempt earlier accesses, as
    /// [`ShadowMem::read_ex`].
    pub(crate) fn write_ex(
        &mut self,
        clocks: &Clocks,
        b: usize,
        cur: Acc,
        same_value: bool,
        exempt: impl Fn(&Acc) -> bool,
    ) -> Option<Conflict> {
        let t = cur.tid;
        let sh = self.shadows[b];
        let mut conflict = None;
        let unordered = |a: &Acc| {
            if !a.is_some() || (a.atomic && cur.atomic) {
                return false;
            }
            !(clocks.knows(t, a.tid, a.epoch) || exempt(a))
        };
        // Reads since the last write.
        if unordered(&sh.r) {
            conflict = Some(Conflict {
                prev: sh.r,
                prev_is_write: false,
            });
        } else if let Some(r) = self.list(sh.rx).iter().find(|r| unordered(r)) {
            conflict = Some(Conflict {
                prev: *r,
                prev_is_write: false,
            });
        }
        // Earlier writes.
        let benign = |w: &Acc| !cur.atomic && !w.atomic && w.instr == cur.instr && same_value;
        let mut keep_benign = false;
        for w in std::iter::once(&sh.w).chain(self.list(sh.wx).iter()) {
            if unordered(w) {
                if benign(w) {
                    keep_benign = true;
                } else if conflict.is_none() {
                    conflict = Some(Conflict {
                        prev: *w,
                        prev_is_write: true,
                    });
                }
            }
        }
        // Reads are all judged now.
        self.release(sh.rx);
        {
            let s = &mut self.shadows[b];
            s.r = Acc::EMPTY;
            s.rx = 0;
        }
        if cur.atomic || keep_benign {
            // Keep the unordered compatible writes beside this one.
            let mut set: Vec<Acc> = std::iter::once(sh.w)
                .chain(self.list(sh.wx).iter().copied())
                .filter(|w| {
                    w.is_some()
                        && w.tid != t
                        && !clocks.knows(t, w.tid, w.epoch)
                        && ((cur.atomic && w.atomic) || benign(w))
                })
                .collect();
            self.release(sh.wx);
            let first = set.first().copied().unwrap_or(cur);
            let s = &mut self.shadows[b];
            s.w = first;
            s.wx = 0;
            if !set.is_empty() {
                set.remove(0);
                set.push(cur);
                let ix = self.alloc();
                self.pool[ix as usize - 1].extend(set);
                self.shadows[b].wx = ix;
            }
        } else {
            self.release(sh.wx);
            let s = &mut self.shadows[b];
            s.w = cur;
            s.wx = 0;
        }
        conflict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(tid: u32, clocks: &Clocks, instr: u32) -> Acc {
        Acc {
            tid,
            epoch: clocks.epoch(tid),
            instr,
            atomic: false,
        }
    }

    #[test]
    fn unsynchronised_write_read_races() {
        let c = Clocks::new(2);
        let mut m = ShadowMem::new(4);
        assert!(m.write(&c, 0, acc(0, &c, 1), false).is_none());
        let r = m.read(&c, 0, acc(1, &c, 2)).expect("race");
        assert_eq!(r.prev.tid, 0);
        assert!(r.prev_is_write);
        // Same thread: program order.
        assert!(m.read(&c, 0, acc(0, &c, 3)).is_none());
    }

    #[test]
    fn barrier_orders() {
        let mut c = Clocks::new(3);
        let mut m = ShadowMem::new(1);
        m.write(&c, 0, acc(0, &c, 1), false);
        c.sync(&[0, 1, 2], &[]);
        assert!(m.read(&c, 0, acc(1, &c, 2)).is_none());
        assert!(m.read(&c, 0, acc(2, &c, 2)).is_none());
        // Two unordered reads, then a write by thread 0 without a barrier:
        // races with the reads.
        let w = m.write(&c, 0, acc(0, &c, 3), false).expect("war race");
        assert!(!w.prev_is_write);
    }

    #[test]
    fn partial_sync_does_not_order_others() {
        let mut c = Clocks::new(3);
        let mut m = ShadowMem::new(1);
        m.write(&c, 0, acc(0, &c, 1), false);
        c.sync(&[0, 1], &[]);
        assert!(m.read(&c, 0, acc(1, &c, 2)).is_none());
        assert!(m.read(&c, 0, acc(2, &c, 2)).is_some());
    }

    #[test]
    fn arrive_releases_to_waiters_only() {
        let mut c = Clocks::new(3);
        let mut m = ShadowMem::new(1);
        // thread 0 writes, then bar.arrive; threads 1 wait (sync); thread 2 not involved.
        m.write(&c, 0, acc(0, &c, 1), false);
        let snap = c.snapshot(0);
        c.tick(0);
        c.sync(&[1], &[snap]);
        assert!(m.read(&c, 0, acc(1, &c, 2)).is_none());
        // thread 0 writes again after its arrive: unordered with thread 1's read.
        assert!(m.write(&c, 0, acc(0, &c, 3), false).is_some());
    }

    #[test]
    fn atomics_coexist_and_race_with_plain_reads() {
        let mut c = Clocks::new(3);
        let mut m = ShadowMem::new(1);
        let a = |t: u32, c: &Clocks| Acc {
            atomic: true,
            ..acc(t, c, 7)
        };
        assert!(m.read(&c, 0, a(0, &c)).is_none());
        assert!(m.write(&c, 0, a(0, &c), false).is_none());
        assert!(m.read(&c, 0, a(1, &c)).is_none());
        assert!(m.write(&c, 0, a(1, &c), false).is_none());
        // A plain read by thread 2 without sync races with both atomics.
        assert!(m.read(&c, 0, acc(2, &c, 9)).is_some());
        // After a barrier, reads are fine.
        c.sync(&[0, 1, 2], &[]);
        assert!(m.read(&c, 0, acc(2, &c, 9)).is_none());
    }

    #[test]
    fn benign_same_value_stores() {
        let mut c = Clocks::new(3);
        let mut m = ShadowMem::new(1);
        assert!(m.write(&c, 0, acc(0, &c, 5), false).is_none());
        // Same instruction, same value, different thread: benign.
        assert!(m.write(&c, 0, acc(1, &c, 5), true).is_none());
        // Same instruction, different value: race.
        assert!(m.write(&c, 0, acc(2, &c, 5), false).is_some());
        // Different instruction, same value: race.
        let mut m = ShadowMem::new(1);
        m.write(&c, 0, acc(0, &c, 5), false);
        assert!(m.write(&c, 0, acc(1, &c, 6), true).is_some());
        // Thread 2 syncs only with thread 1 after two benign stores by 0
        // and 1: its write still races with thread 0's store.
        let mut m = ShadowMem::new(1);
        m.write(&c, 0, acc(0, &c, 5), false);
        m.write(&c, 0, acc(1, &c, 5), true);
        c.sync(&[1, 2], &[]);
        let r = m
            .write(&c, 0, acc(2, &c, 8), false)
            .expect("race with thread 0");
        assert_eq!(r.prev.tid, 0);
    }
}
