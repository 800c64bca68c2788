//! Happens-before tracking: vector clocks per thread and a shadow per
//! memory unit, judging data races and order-dependent strong accesses.
//!
//! The rules are those of `docs/semantics.md` ("Memory model: races,
//! atomics, fences"), after the PTX ISA memory consistency model:
//!
//! - every access is *plain* (a weak `ld`/`st`, `.volatile` included, see
//!   the docs) or *strong* (`atom`, `red`, `ld`/`st` with `.relaxed`,
//!   `.acquire`, `.release`, `.mmio`); a strong access has a scope, and two
//!   strong accesses are *morally strong* when each scope includes the
//!   other thread (within one CTA always; across CTAs only when neither is
//!   `.cta`/`.cluster` scoped);
//! - two accesses to the same byte by different threads that are not
//!   ordered by happens-before are a **data race** when at least one
//!   writes and they are not morally strong — except two plain stores by
//!   the same instruction writing the same content (benign same-value
//!   stores, corpus/README.md);
//! - two unordered morally strong accesses are **order-dependent** when
//!   one of them returns a value that is used while the other modifies
//!   the location, or both modify it with updates that do not commute
//!   (different operations, or `exch`/`cas`/`inc`/`dec` with different
//!   operands; `add`/`min`/`max`/`and`/`or`/`xor` of one operation
//!   commute with any operands, and identical updates always commute).
//!
//! Vector clocks give happens-before with cost independent of threads ×
//! addresses:
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
//!   O(distinct bases × threads), not O(threads²);
//! - in the grid-level mode (`crate::grid`) CTAs run one after the other
//!   over one global memory; a thread's knowledge of other CTAs' accesses
//!   (acquired through release/acquire patterns) is a map CTA → vector
//!   clock over that CTA's threads, joined like the base.
//!
//! The shadow of a unit keeps every access that can still take part in a
//! race or an order dependence with a future access, and drops an earlier
//! access `E` only when a later access `N` ordered after it conflicts, at
//! least as severely, with every future access that `E` conflicts with
//! (the *keeper rule*, [`subsumes`]). A plain store that drops an earlier
//! access of its own thread that it does not cover for benign same-value
//! stores keeps that access's epoch (`strict`), so a later store that is
//! benign with it is still checked against it. The property test at the
//! end compares this shadow with a reference that keeps every access and
//! checks every pair.

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use crate::sparse::{Meter, SparseVec};

/// Other CTAs' clocks known to a thread (grid-level mode): CTA → that
/// CTA's vector clock over its threads.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct Foreign(FxHashMap<u32, Rc<[u32]>>);

impl Foreign {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The clock of CTA `cta`'s thread `tid` as known here.
    fn get(&self, cta: u32, tid: u32) -> u32 {
        self.0
            .get(&cta)
            .and_then(|v| v.get(tid as usize).copied())
            .unwrap_or(0)
    }

    /// Pointwise maximum with `other`.
    pub(crate) fn join(&mut self, other: &Foreign) {
        for (c, v) in &other.0 {
            match self.0.get_mut(c) {
                None => {
                    self.0.insert(*c, v.clone());
                }
                Some(mine) if Rc::ptr_eq(mine, v) => {}
                Some(mine) => {
                    let j: Vec<u32> = mine
                        .iter()
                        .zip(v.iter())
                        .map(|(a, b)| *a.max(b))
                        .chain(v.iter().skip(mine.len()).copied())
                        .collect();
                    *mine = j.into();
                }
            }
        }
    }

    /// Adds (joins) CTA `cta`'s clock `vc`.
    pub(crate) fn add(&mut self, cta: u32, vc: Rc<[u32]>) {
        let mut one = Foreign::default();
        one.0.insert(cta, vc);
        self.join(&one);
    }

    /// The CTAs known (tests).
    #[cfg(test)]
    pub(crate) fn ctas(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.keys().copied()
    }
}

/// Per-thread vector clocks of one CTA.
pub(crate) struct Clocks {
    own: Vec<u32>,
    base: Vec<Rc<[u32]>>,
    /// Per thread: what it knows of other CTAs (grid-level mode only).
    foreign: Vec<Rc<Foreign>>,
    /// Per thread: releases made through `fence.sc` that a later
    /// `fence.sc` of this thread acquires (grid-level ticket mode; passed
    /// along happens-before like `foreign`, see `crate::grid`).
    pending_sc: Vec<Rc<Foreign>>,
    /// The CTA these threads belong to, as stamped into accesses (0 outside
    /// the grid-level mode).
    cta: u32,
    /// What every thread of this CTA knows (the clock of the last
    /// synchronisation of all threads): an access below it is ordered
    /// before every future access of the CTA.
    floor: Rc<[u32]>,
    /// By CTA stamp: the index of the CTA's thread-block cluster (grid
    /// runs with clusters of several CTAs); `None`: every CTA is a
    /// cluster of its own. Decides whether `.cluster`-scoped strong
    /// accesses of two CTAs are morally strong ([`Acc::cluster`]).
    clusters: Option<Rc<[u32]>>,
}

/// A thread's clock as released by `bar.arrive`.
#[derive(Clone)]
pub(crate) struct Snapshot {
    base: Rc<[u32]>,
    own: u32,
    tid: u32,
    foreign: Rc<Foreign>,
    pending_sc: Rc<Foreign>,
}

impl Clocks {
    pub(crate) fn new(n: usize) -> Self {
        Clocks::in_cta(n, 0)
    }

    /// Clocks for `n` threads of CTA `cta` (grid-level mode).
    pub(crate) fn in_cta(n: usize, cta: u32) -> Self {
        let zero: Rc<[u32]> = vec![0u32; n].into();
        let none = Rc::new(Foreign::default());
        Clocks {
            own: vec![1; n],
            base: vec![zero.clone(); n],
            foreign: vec![none.clone(); n],
            pending_sc: vec![none; n],
            cta,
            floor: zero,
            clusters: None,
        }
    }

    /// Sets the cluster of every CTA stamp (see [`Clocks::same_cluster`]).
    pub(crate) fn set_clusters(&mut self, clusters: Option<Rc<[u32]>>) {
        self.clusters = clusters;
    }

    /// The cluster table (to hand to the clocks of another CTA of the run).
    pub(crate) fn clusters(&self) -> Option<Rc<[u32]>> {
        self.clusters.clone()
    }

    /// Whether the CTAs stamped `a` and `b` are in one thread-block
    /// cluster (a CTA is in its own).
    #[inline]
    pub(crate) fn same_cluster(&self, a: u32, b: u32) -> bool {
        a == b
            || self.clusters.as_ref().is_some_and(
                |c| matches!((c.get(a as usize), c.get(b as usize)), (Some(x), Some(y)) if x == y),
            )
    }

    /// The CTA stamped into this CTA's accesses.
    pub(crate) fn cta(&self) -> u32 {
        self.cta
    }

    /// The current epoch of `t`.
    pub(crate) fn epoch(&self, t: u32) -> u32 {
        self.own[t as usize]
    }

    /// Whether `(u, e)` of this CTA happens before `t`'s current point.
    #[inline]
    pub(crate) fn knows(&self, t: u32, u: u32, e: u32) -> bool {
        t == u || self.base[t as usize][u as usize] >= e
    }

    /// Whether access `a` happens before every future access of this CTA.
    #[inline]
    pub(crate) fn known_by_all(&self, a: &Acc) -> bool {
        a.cta == self.cta && self.floor[a.tid as usize] >= a.epoch
    }

    /// Whether access `a` (of any CTA) happens before `t`'s current point.
    #[inline]
    pub(crate) fn knows_acc(&self, t: u32, a: &Acc) -> bool {
        self.knows_at(t, a.cta, a.tid, a.epoch)
    }

    /// Whether epoch `e` of thread `u` of CTA `cta` happens before `t`'s
    /// current point.
    #[inline]
    pub(crate) fn knows_at(&self, t: u32, cta: u32, u: u32, e: u32) -> bool {
        if cta == self.cta {
            self.knows(t, u, e)
        } else {
            let f = &self.foreign[t as usize];
            !f.is_empty() && f.get(cta, u) >= e
        }
    }

    pub(crate) fn snapshot(&self, t: u32) -> Snapshot {
        Snapshot {
            base: self.base[t as usize].clone(),
            own: self.own[t as usize],
            tid: t,
            foreign: self.foreign[t as usize].clone(),
            pending_sc: self.pending_sc[t as usize].clone(),
        }
    }

    /// Adds `what` to the `fence.sc` releases `t` may acquire.
    pub(crate) fn add_pending_sc(&mut self, t: u32, what: &Foreign) {
        if what.is_empty() {
            return;
        }
        let mut f = (*self.pending_sc[t as usize]).clone();
        f.join(what);
        self.pending_sc[t as usize] = Rc::new(f);
    }

    /// `t` executes a `fence.sc`: it acquires the pending `fence.sc`
    /// releases it knows of.
    pub(crate) fn acquire_pending_sc(&mut self, t: u32) {
        let p = self.pending_sc[t as usize].clone();
        if !p.is_empty() {
            self.acquire(t, &p);
        }
    }

    /// Starts a new epoch for `t` (after a release).
    pub(crate) fn tick(&mut self, t: u32) {
        self.own[t as usize] += 1;
    }

    /// What `t` releases (grid-level mode): this CTA's clock as `t` knows
    /// it (its own epoch included) and its knowledge of other CTAs. The
    /// caller ticks `t` afterwards, so later accesses are not covered.
    pub(crate) fn release(&self, t: u32) -> Foreign {
        let mut vc: Vec<u32> = self.base[t as usize].to_vec();
        vc[t as usize] = vc[t as usize].max(self.own[t as usize]);
        let mut f = (*self.foreign[t as usize]).clone();
        f.add(self.cta, vc.into());
        f
    }

    /// `t` acquires `what` (grid-level mode): other CTAs' clocks join its
    /// foreign knowledge, this CTA's own clock joins its base.
    pub(crate) fn acquire(&mut self, t: u32, what: &Foreign) {
        let mut other = Foreign::default();
        for (c, v) in &what.0 {
            if *c == self.cta {
                let b = &self.base[t as usize];
                let j: Vec<u32> = b.iter().zip(v.iter()).map(|(a, b)| *a.max(b)).collect();
                self.base[t as usize] = j.into();
            } else {
                other.0.insert(*c, v.clone());
            }
        }
        if !other.is_empty() {
            let mut f = (*self.foreign[t as usize]).clone();
            f.join(&other);
            self.foreign[t as usize] = Rc::new(f);
        }
    }

    /// Slot `to` learns everything slot `from` knows, `from`'s accesses so
    /// far included, and `from` starts a new epoch (its later accesses are
    /// not covered). Both slots belong to this CTA; knowledge of other
    /// CTAs is not passed (a one-thread hand-over between a thread and one
    /// of its agents: the tcgen05 fences, `engine/tmem.rs`).
    pub(crate) fn learn(&mut self, to: u32, from: u32) {
        let (ti, fi) = (to as usize, from as usize);
        let mut j: Vec<u32> = self.base[ti].to_vec();
        for (x, y) in j.iter_mut().zip(self.base[fi].iter()) {
            *x = (*x).max(*y);
        }
        j[fi] = j[fi].max(self.own[fi]);
        self.base[ti] = j.into();
        self.own[fi] += 1;
    }

    /// Raises `t`'s knowledge of slots `from .. from + epochs.len()` to at
    /// least `epochs` (execution slots, `engine/exec_order.rs`: no access
    /// is stamped with them, so this orders no memory).
    pub(crate) fn raise(&mut self, t: u32, from: u32, epochs: &[u32]) {
        let b = &self.base[t as usize];
        let f = from as usize;
        if b[f..f + epochs.len()]
            .iter()
            .zip(epochs)
            .all(|(x, y)| x >= y)
        {
            return;
        }
        let mut j: Vec<u32> = b.to_vec();
        for (x, y) in j[f..f + epochs.len()].iter_mut().zip(epochs) {
            *x = (*x).max(*y);
        }
        self.base[t as usize] = j.into();
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
        // Other CTAs' clocks and pending fence.sc releases (grid-level
        // mode): joined the same way.
        let fj = join_all(
            participants
                .iter()
                .map(|&p| &self.foreign[p as usize])
                .chain(releases.iter().map(|s| &s.foreign)),
        );
        let pj = join_all(
            participants
                .iter()
                .map(|&p| &self.pending_sc[p as usize])
                .chain(releases.iter().map(|s| &s.pending_sc)),
        );
        let shared: Rc<[u32]> = j.into();
        if participants.len() == n {
            self.floor = shared.clone();
        }
        for &p in participants {
            self.base[p as usize] = shared.clone();
            self.own[p as usize] += 1;
            if let Some(f) = &fj {
                self.foreign[p as usize] = f.clone();
            }
            if let Some(f) = &pj {
                self.pending_sc[p as usize] = f.clone();
            }
        }
    }
}

/// The join of several knowledge maps (`None` when all are empty).
fn join_all<'a>(fs: impl Iterator<Item = &'a Rc<Foreign>>) -> Option<Rc<Foreign>> {
    let mut out: Option<Rc<Foreign>> = None;
    for f in fs {
        if f.is_empty() {
            continue;
        }
        out = Some(match out {
            None => f.clone(),
            Some(cur) if Rc::ptr_eq(&cur, f) => cur,
            Some(cur) => {
                let mut m = (*cur).clone();
                m.join(f);
                Rc::new(m)
            }
        });
    }
    out
}

/// How an access touches memory, for the race rules.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub(crate) enum Kind {
    /// A weak (plain) load.
    PlainRead,
    /// A weak (plain) store.
    PlainWrite,
    /// A strong load (`ld.relaxed/.acquire/.mmio`): reads, never modifies.
    StrongRead,
    /// A strong write: `atom`/`red` (a read-modify-write) or a strong
    /// store (`st.relaxed/.release/.mmio`, an `exch` without result).
    StrongWrite,
}

impl Kind {
    pub(crate) fn is_strong(self) -> bool {
        matches!(self, Kind::StrongRead | Kind::StrongWrite)
    }

    pub(crate) fn writes(self) -> bool {
        matches!(self, Kind::PlainWrite | Kind::StrongWrite)
    }
}

/// One access in a shadow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Acc {
    /// Thread (linear id within its CTA).
    pub tid: u32,
    /// CTA (0 outside the grid-level mode).
    pub cta: u32,
    pub epoch: u32,
    /// Packed instruction id.
    pub instr: u32,
    pub kind: Kind,
    /// A strong access whose returned value is used.
    pub used: bool,
    /// A strong access scoped narrower than the GPU (`.cta`, `.cluster`):
    /// not morally strong with accesses of CTAs outside its scope.
    pub narrow: bool,
    /// With `narrow`: the scope is `.cluster` (it includes the other CTAs
    /// of the access's cluster, [`Clocks::same_cluster`]), not `.cta`.
    pub cluster: bool,
    /// A read-modify-write (`atom`/`red`), for reports.
    pub rmw: bool,
    /// [`Kind::StrongWrite`]: the update operation (an opaque code; equal
    /// codes are the same operation on the same type).
    pub op: u8,
    /// [`Kind::StrongWrite`]: a fingerprint of the operand values (equal
    /// fingerprints are equal operands, up to a 64-bit hash collision).
    /// [`Kind::PlainWrite`]: set by the shadow to the unit's content
    /// generation after the store.
    pub operands: u64,
}

impl Default for Acc {
    /// A template: the caller fills in thread, epoch and instruction.
    fn default() -> Self {
        Acc::EMPTY
    }
}

/// The update operations that commute with themselves whatever their
/// operands (`add`, `min`, `max`, `and`, `or`, `xor`); set in the high bit
/// of [`Acc::op`] by the caller.
pub(crate) const OP_COMMUTES: u8 = 0x80;

const NONE: u32 = u32::MAX;

impl Acc {
    const EMPTY: Acc = Acc {
        tid: NONE,
        cta: 0,
        epoch: 0,
        instr: 0,
        kind: Kind::PlainRead,
        used: false,
        narrow: false,
        cluster: false,
        rmw: false,
        op: 0,
        operands: 0,
    };

    fn is_some(&self) -> bool {
        self.tid != NONE
    }

    /// Whether this access's scope includes the threads of CTA `cta`
    /// (`same_cluster`: whether that CTA is in this access's cluster).
    fn reaches(&self, cta: u32, same_cluster: bool) -> bool {
        !self.narrow || self.cta == cta || (self.cluster && same_cluster)
    }

    /// Whether this access and `other` are morally strong relative to each
    /// other (both strong, each scope including the other thread);
    /// `same_cluster`: whether their CTAs are in one cluster.
    fn morally_strong(&self, other: &Acc, same_cluster: bool) -> bool {
        self.kind.is_strong()
            && other.kind.is_strong()
            && self.reaches(other.cta, same_cluster)
            && other.reaches(self.cta, same_cluster)
    }

    /// How wide the scope is: 0 `.cta`, 1 `.cluster`, 2 wider.
    fn breadth(&self) -> u8 {
        match (self.narrow, self.cluster) {
            (false, _) => 2,
            (true, true) => 1,
            (true, false) => 0,
        }
    }
}

/// How two unordered accesses conflict.
#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub(crate) enum Rank {
    /// No conflict.
    None,
    /// Morally strong, but the outcome depends on their order.
    OrderDependent,
    /// A data race.
    Race,
}

/// Whether two strong updates commute (both results unused).
fn commute(a: &Acc, b: &Acc) -> bool {
    a.op == b.op && (a.operands == b.operands || a.op & OP_COMMUTES != 0)
}

/// How unordered accesses `e` and `f` (of different threads) conflict;
/// `benign` says two plain stores are benign same-value stores;
/// `same_cluster` whether their CTAs are in one cluster.
pub(crate) fn rank(e: &Acc, f: &Acc, benign: bool, same_cluster: bool) -> Rank {
    if !e.kind.writes() && !f.kind.writes() {
        return Rank::None;
    }
    if e.morally_strong(f, same_cluster) {
        let od = match (e.kind, f.kind) {
            (Kind::StrongRead, _) => e.used,
            (_, Kind::StrongRead) => f.used,
            _ => e.used || f.used || !commute(e, f),
        };
        return if od { Rank::OrderDependent } else { Rank::None };
    }
    if e.kind == Kind::PlainWrite && f.kind == Kind::PlainWrite && benign {
        return Rank::None;
    }
    Rank::Race
}

/// The keeper rule: whether `n`, ordered after `e`, conflicts at least as
/// severely as `e` with every possible future access, except plain
/// stores benign with `n` (the caller handles those for plain stores).
fn subsumes(n: &Acc, e: &Acc) -> bool {
    // Scope: a CTA-scoped strong access of another CTA conflicts
    // differently with third CTAs.
    // (Between two strong accesses: `n` must reach every thread `e`
    // reaches — both wide, or `n` narrow in `e`'s own CTA.)
    let both_strong = e.kind.is_strong() && n.kind.is_strong();
    // In one CTA, a scope at most as wide as `e`'s: every strong access
    // `n` is morally strong with, `e` is too.
    let scope_ok =
        !both_strong || (!e.narrow && !n.narrow) || (e.cta == n.cta && n.breadth() <= e.breadth());
    if !scope_ok {
        return false;
    }
    match (n.kind, e.kind) {
        // A plain store races with everything (benign stores aside).
        (Kind::PlainWrite, _) => true,
        (Kind::PlainRead, Kind::PlainRead | Kind::StrongRead) => {
            // A strong read of another CTA with a narrow scope races with
            // strong writes of third CTAs; a plain read races with all.
            true
        }
        (Kind::StrongRead, Kind::StrongRead) => n.used || !e.used,
        (Kind::StrongWrite, Kind::StrongRead) => n.used || !e.used,
        (Kind::StrongWrite, Kind::StrongWrite) => {
            n.used || (n.op == e.op && n.operands == e.operands && !e.used)
        }
        _ => false,
    }
}

/// One kept access of a unit, with the latest dropped access of the same
/// thread that a benign store with this one would still race with.
#[derive(Clone, Copy, Debug)]
struct Entry {
    acc: Acc,
    /// Epoch of that dropped access (0: none).
    strict_epoch: u32,
    strict_instr: u32,
    strict_kind: Kind,
}

impl Entry {
    /// Keeps the latest of the dropped accesses in `strict`.
    fn fold(&mut self, epoch: u32, instr: u32, kind: Kind) {
        if epoch > self.strict_epoch {
            self.strict_epoch = epoch;
            self.strict_instr = instr;
            self.strict_kind = kind;
        }
    }

    const EMPTY: Entry = Entry {
        acc: Acc::EMPTY,
        strict_epoch: 0,
        strict_instr: 0,
        strict_kind: Kind::PlainRead,
    };

    fn strict(&self) -> Option<Acc> {
        (self.strict_epoch != 0).then_some(Acc {
            epoch: self.strict_epoch,
            instr: self.strict_instr,
            kind: self.strict_kind,
            used: false,
            narrow: false,
            rmw: false,
            op: 0,
            operands: 0,
            ..self.acc
        })
    }
}

/// Per-unit race state: the kept accesses and the content generation
/// (bumped by every write that changes the unit's content).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shadow {
    first: Entry,
    /// Index + 1 into the pool of further entries (0: none).
    more: u32,
    generation: u64,
}

impl Default for Shadow {
    fn default() -> Self {
        Shadow {
            first: Entry::EMPTY,
            more: 0,
            generation: 0,
        }
    }
}

/// The access that conflicts with the current one.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conflict {
    pub prev: Acc,
    pub rank: Rank,
}

impl Conflict {
    #[cfg(test)]
    pub(crate) fn prev_is_write(&self) -> bool {
        self.prev.kind.writes()
    }
}

/// Shadows of one region plus the pool of further entries.
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
    pool: Vec<Vec<Entry>>,
    free: Vec<u32>,
    /// Only this CTA's threads access the region in this run (shared
    /// memory, or any memory when no other CTA is judged with it):
    /// accesses every thread knows are dropped.
    pub private: bool,
}

type Entries = SmallVec<[Entry; 4]>;

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
            private: true,
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

    /// Byte mode: every byte gets a copy of its word's state (own pool
    /// lists, so later updates of one byte leave the others alone).
    fn split_words(&mut self) {
        let mut new = self.shadows.empty_like(self.shadows.len() * 4);
        let old = std::mem::replace(&mut self.shadows, SparseVec::new(0, Shadow::default()));
        for (start, page) in old.allocated() {
            for (j, &sh) in page.iter().enumerate() {
                for k in 0..4 {
                    let mut c = sh;
                    if k > 0 && c.more != 0 {
                        let list = self.pool[c.more as usize - 1].clone();
                        let n = self.alloc();
                        self.pool[n as usize - 1] = list;
                        c.more = n;
                    }
                    new.set((start + j) * 4 + k, c);
                }
            }
        }
        self.shadows = new;
        self.gran = 1;
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

    fn entries(&self, u: usize) -> Entries {
        let sh = &self.shadows[u];
        let mut out = Entries::new();
        if sh.first.acc.is_some() {
            out.push(sh.first);
        }
        if sh.more != 0 {
            out.extend(self.pool[sh.more as usize - 1].iter().copied());
        }
        out
    }

    fn set_entries(&mut self, u: usize, es: &[Entry]) {
        let more = self.shadows[u].more;
        match es.len() {
            0 | 1 => {
                self.release(more);
                let sh = &mut self.shadows[u];
                sh.first = es.first().copied().unwrap_or(Entry::EMPTY);
                sh.more = 0;
            }
            _ => {
                let ix = if more != 0 { more } else { self.alloc() };
                let list = &mut self.pool[ix as usize - 1];
                list.clear();
                list.extend_from_slice(&es[1..]);
                let sh = &mut self.shadows[u];
                sh.first = es[0];
                sh.more = ix;
            }
        }
    }

    /// Records access `cur` of unit `u` and returns the most severe
    /// conflict with an earlier unordered access. `same` (plain stores):
    /// the stored content equals the unit's current content.
    pub(crate) fn access(
        &mut self,
        clocks: &Clocks,
        u: usize,
        cur: Acc,
        same: bool,
    ) -> Option<Conflict> {
        self.access_ex(clocks, u, cur, same, |_| false)
    }

    /// [`ShadowMem::access`], where an earlier access for which `exempt`
    /// holds counts as ordered before this one for the conflict search
    /// (one warp's wmma accesses through one view,
    /// `engine/wmma_check.rs`); it is still kept as any other access.
    pub(crate) fn access_ex(
        &mut self,
        clocks: &Clocks,
        u: usize,
        mut cur: Acc,
        same: bool,
        exempt: impl Fn(&Acc) -> bool,
    ) -> Option<Conflict> {
        let t = cur.tid;
        let gen_before = self.shadows[u].generation;
        let more = self.shadows[u].more;
        let first = self.shadows[u].first;
        let benign_with = |e: &Acc| {
            cur.kind == Kind::PlainWrite
                && e.kind == Kind::PlainWrite
                && e.instr == cur.instr
                && e.operands == gen_before
                && same
        };
        // Conflicts with the kept accesses (two reads never conflict).
        let mut best: Option<Conflict> = None;
        {
            let list: &[Entry] = if more != 0 {
                &self.pool[more as usize - 1]
            } else {
                &[]
            };
            let firsts: &[Entry] = if first.acc.is_some() {
                std::slice::from_ref(&first)
            } else {
                &[]
            };
            for e in firsts.iter().chain(list) {
                let a = &e.acc;
                if !(a.kind.writes() || cur.kind.writes())
                    || (a.tid == t && a.cta == cur.cta)
                    || clocks.knows_acc(t, a)
                    || exempt(a)
                {
                    continue;
                }
                let benign = benign_with(a);
                let r = rank(a, &cur, benign, clocks.same_cluster(a.cta, cur.cta));
                let c = if r != Rank::None {
                    Some(Conflict { prev: *a, rank: r })
                } else if benign
                    && let Some(s) = e.strict()
                    && !clocks.knows_acc(t, &s)
                {
                    // Benign with the kept store, but not with an earlier
                    // access of its thread that the store dropped.
                    Some(Conflict {
                        prev: s,
                        rank: Rank::Race,
                    })
                } else {
                    None
                };
                if let Some(c) = c
                    && best.is_none_or(|b| c.rank > b.rank)
                {
                    best = Some(c);
                }
            }
        }
        // The new content generation.
        if cur.kind.writes() && !(cur.kind == Kind::PlainWrite && same) {
            self.shadows[u].generation = gen_before.wrapping_add(1);
        }
        if cur.kind == Kind::PlainWrite {
            cur.operands = self.shadows[u].generation;
        }
        // Keep what the new access does not subsume (in place).
        let mut mine = Entry {
            acc: cur,
            ..Entry::EMPTY
        };
        let private = self.private;
        let keep = |e: &Entry, mine: &mut Entry| -> bool {
            let a = &e.acc;
            if private && clocks.known_by_all(a) {
                // Ordered before anything that can still come.
                return false;
            }
            let same_thread = a.tid == t && a.cta == cur.cta;
            if !(same_thread || clocks.knows_acc(t, a)) || !subsumes(&cur, a) {
                return true;
            }
            if cur.kind != Kind::PlainWrite {
                return false;
            }
            // A plain store: a later store benign with it is benign with
            // `e` only when `e` is an equivalent store (same instruction,
            // same content).
            let equivalent = benign_with(a);
            if same_thread {
                if !equivalent {
                    mine.fold(a.epoch, a.instr, a.kind);
                }
                if let Some(s) = e.strict() {
                    mine.fold(s.epoch, s.instr, s.kind);
                }
                false
            } else {
                !(equivalent && e.strict_epoch == 0)
            }
        };
        // A read prunes a long list only now and then (at lengths that are
        // powers of two): keeping an access longer is always sound, it
        // only costs time, and a unit read by every thread (a broadcast)
        // would otherwise be rescanned by each read.
        let lazy = !cur.kind.writes() && more != 0 && {
            let n = self.pool[more as usize - 1].len();
            !(n >= 8 && n.is_power_of_two())
        };
        let keep_first = first.acc.is_some() && (lazy || keep(&first, &mut mine));
        if more != 0 {
            let mut list = std::mem::take(&mut self.pool[more as usize - 1]);
            if !lazy {
                list.retain(|e| keep(e, &mut mine));
            }
            if keep_first {
                list.push(first);
            }
            list.push(mine);
            let sh = &mut self.shadows[u];
            if list.len() == 1 {
                sh.first = list[0];
                sh.more = 0;
                self.pool[more as usize - 1] = list;
                self.release(more);
            } else {
                sh.first = Entry::EMPTY;
                self.pool[more as usize - 1] = list;
            }
        } else if keep_first {
            let ix = self.alloc();
            let list = &mut self.pool[ix as usize - 1];
            list.push(first);
            list.push(mine);
            let sh = &mut self.shadows[u];
            sh.first = Entry::EMPTY;
            sh.more = ix;
        } else {
            self.shadows[u].first = mine;
        }
        best
    }

    /// Re-stamps the kept accesses of unit `u` that `pick` selects as
    /// accesses of `to` (CTA, thread, epoch), keeping what they are. The
    /// grid-level ticket mode uses it for the RMWs that precede the last
    /// one on the ticket word in observation order: they are ordered
    /// before exactly what that last RMW is ordered before (PTX causality
    /// order, docs/semantics.md).
    pub(crate) fn restamp(&mut self, u: usize, pick: impl Fn(&Acc) -> bool, to: (u32, u32, u32)) {
        let mut es = self.entries(u);
        for e in &mut es {
            if pick(&e.acc) {
                e.acc.cta = to.0;
                e.acc.tid = to.1;
                e.acc.epoch = to.2;
                e.strict_epoch = 0;
            }
        }
        self.set_entries(u, &es);
    }

    /// The kept accesses of unit `u` (tests).
    #[cfg(test)]
    fn kept(&self, u: usize) -> usize {
        self.entries(u).len()
    }
}

#[cfg(test)]
mod tests;
