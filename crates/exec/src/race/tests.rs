//! Unit tests of the shadow and the property test against a reference
//! detector that keeps every access and checks every pair.

use proptest::prelude::*;

use super::*;

fn acc(tid: u32, clocks: &Clocks, instr: u32, kind: Kind) -> Acc {
    Acc {
        tid,
        cta: clocks.cta(),
        epoch: clocks.epoch(tid),
        instr,
        kind,
        used: false,
        narrow: false,
        cluster: false,
        rmw: false,
        op: 0,
        operands: 0,
    }
}

fn pw(tid: u32, c: &Clocks, instr: u32) -> Acc {
    acc(tid, c, instr, Kind::PlainWrite)
}

fn pr(tid: u32, c: &Clocks, instr: u32) -> Acc {
    acc(tid, c, instr, Kind::PlainRead)
}

/// `atom.add` (result unused).
fn add(tid: u32, c: &Clocks) -> Acc {
    Acc {
        op: 1 | OP_COMMUTES,
        ..acc(tid, c, 7, Kind::StrongWrite)
    }
}

fn race(c: Option<Conflict>) -> bool {
    c.is_some_and(|c| c.rank == Rank::Race)
}

#[test]
fn unsynchronised_write_read_races() {
    let c = Clocks::new(2);
    let mut m = ShadowMem::new(4);
    assert!(m.access(&c, 0, pw(0, &c, 1), false).is_none());
    let r = m.access(&c, 0, pr(1, &c, 2), false).expect("race");
    assert_eq!(r.prev.tid, 0);
    assert!(r.prev_is_write());
    // Same thread: program order.
    assert!(m.access(&c, 0, pr(0, &c, 3), false).is_none());
}

#[test]
fn barrier_orders() {
    let mut c = Clocks::new(3);
    let mut m = ShadowMem::new(1);
    m.access(&c, 0, pw(0, &c, 1), false);
    c.sync(&[0, 1, 2], &[]);
    assert!(m.access(&c, 0, pr(1, &c, 2), false).is_none());
    assert!(m.access(&c, 0, pr(2, &c, 2), false).is_none());
    // Two unordered reads, then a write by thread 0 without a barrier:
    // races with the reads.
    let w = m.access(&c, 0, pw(0, &c, 3), false).expect("war race");
    assert!(!w.prev_is_write());
}

#[test]
fn partial_sync_does_not_order_others() {
    let mut c = Clocks::new(3);
    let mut m = ShadowMem::new(1);
    m.access(&c, 0, pw(0, &c, 1), false);
    c.sync(&[0, 1], &[]);
    assert!(m.access(&c, 0, pr(1, &c, 2), false).is_none());
    assert!(m.access(&c, 0, pr(2, &c, 2), false).is_some());
}

/// `learn` hands one slot's knowledge to another (the tcgen05 fences):
/// threads 0 and 1 with agent slots 2 and 3. Agent 2's write is known to
/// thread 1 only after thread 0 learned it before the barrier; agent 3
/// knows the barrier only after it learned thread 1's clock.
#[test]
fn learn_hands_knowledge_between_slots() {
    let mut c = Clocks::new(4);
    let mut m = ShadowMem::new(2);
    m.access(&c, 0, pw(2, &c, 1), false);
    m.access(&c, 1, pw(2, &c, 1), false);
    // Without the hand-over, the barrier of threads 0 and 1 does not
    // order agent 2's write before thread 1.
    let mut c2 = Clocks::new(4);
    let mut m2 = ShadowMem::new(1);
    m2.access(&c2, 0, pw(2, &c2, 1), false);
    c2.sync(&[0, 1], &[]);
    assert!(race(m2.access(&c2, 0, pr(1, &c2, 2), false)));
    // With it (thread 0 learns agent 2, barrier), thread 1 is ordered
    // after the write, but agent 3 is not until it learns thread 1.
    c.learn(0, 2);
    c.sync(&[0, 1], &[]);
    assert!(m.access(&c, 0, pr(1, &c, 2), false).is_none());
    assert!(race(m.access(&c, 1, pw(3, &c, 3), false)));
    c.learn(3, 1);
    assert!(m.access(&c, 0, pw(3, &c, 3), false).is_none());
    // Agent 2's later accesses are a new epoch: not covered by what
    // thread 0 learned.
    let e = c.epoch(2);
    assert!(!c.knows(0, 2, e));
    assert!(c.knows(0, 2, e - 1));
}

/// `raise` gives execution-slot knowledge only: threads 0 and 1 with
/// execution slots 2 and 3. Thread 1 learning that thread 0 reached its
/// epoch (slot 2) orders none of thread 0's accesses before thread 1's,
/// and the knowledge travels along a later synchronisation like any
/// clock entry.
#[test]
fn raise_gives_execution_knowledge_without_ordering_memory() {
    let mut c = Clocks::new(4);
    let mut m = ShadowMem::new(1);
    m.access(&c, 0, pw(0, &c, 1), false);
    let e0 = c.epoch(0);
    c.raise(1, 2, &[e0]);
    assert!(c.knows(1, 2, e0));
    assert!(!c.knows(1, 0, e0));
    assert!(race(m.access(&c, 0, pr(1, &c, 2), false)));
    // Already known: no change.
    let before = c.snapshot(1);
    c.raise(1, 2, &[e0]);
    assert!(Rc::ptr_eq(&before.base, &c.snapshot(1).base));
    // Passed on by a release/acquire pair (thread 1 releases to 0 via
    // a barrier of both): thread 0 now knows slot 2 too.
    c.sync(&[0, 1], &[]);
    assert!(c.knows(0, 2, e0));
}

#[test]
fn arrive_releases_to_waiters_only() {
    let mut c = Clocks::new(3);
    let mut m = ShadowMem::new(1);
    // thread 0 writes, then bar.arrive; thread 1 waits (sync); thread 2 not involved.
    m.access(&c, 0, pw(0, &c, 1), false);
    let snap = c.snapshot(0);
    c.tick(0);
    c.sync(&[1], &[snap]);
    assert!(m.access(&c, 0, pr(1, &c, 2), false).is_none());
    // thread 0 writes again after its arrive: unordered with thread 1's read.
    assert!(m.access(&c, 0, pw(0, &c, 3), false).is_some());
}

#[test]
fn atomics_coexist_and_race_with_plain_reads() {
    let mut c = Clocks::new(3);
    let mut m = ShadowMem::new(1);
    assert!(m.access(&c, 0, add(0, &c), false).is_none());
    assert!(m.access(&c, 0, add(1, &c), false).is_none());
    // A plain read by thread 2 without sync races with both atomics.
    assert!(race(m.access(&c, 0, pr(2, &c, 9), false)));
    // After a barrier, reads are fine.
    c.sync(&[0, 1, 2], &[]);
    assert!(m.access(&c, 0, pr(2, &c, 9), false).is_none());
}

/// Issue 13, item 1: thread 0 stores `acc = 0`, then every warp leader,
/// thread 0 included, does `atomicAdd(&acc, v)` with no barrier between.
/// Thread 0's own atomic must not hide its plain store from the others.
#[test]
fn own_atomic_does_not_hide_own_plain_store() {
    let c = Clocks::new(64);
    let mut m = ShadowMem::new(4);
    assert!(m.access(&c, 0, pw(0, &c, 1), false).is_none());
    assert!(m.access(&c, 0, add(0, &c), false).is_none());
    let r = m.access(&c, 0, add(32, &c), false).expect("race");
    assert_eq!(r.rank, Rank::Race);
    assert_eq!((r.prev.tid, r.prev.kind), (0, Kind::PlainWrite));
}

/// A plain read followed by the reader's own atomic: another thread's
/// unordered atomic races with the read.
#[test]
fn own_atomic_does_not_hide_own_plain_read() {
    let c = Clocks::new(2);
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, pr(0, &c, 1), false);
    m.access(&c, 0, add(0, &c), false);
    assert!(race(m.access(&c, 0, add(1, &c), false)));
}

#[test]
fn order_dependent_atomics() {
    let c = Clocks::new(2);
    let exch = |t: u32, v: u64, used: bool| Acc {
        op: 2,
        operands: v,
        used,
        ..acc(t, &c, 8, Kind::StrongWrite)
    };
    // Two exchanges of different values: the final value depends on order.
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, exch(0, 1, false), false);
    let r = m.access(&c, 0, exch(1, 2, false), false).expect("od");
    assert_eq!(r.rank, Rank::OrderDependent);
    // Identical exchanges commute.
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, exch(0, 1, false), false);
    assert!(m.access(&c, 0, exch(1, 1, false), false).is_none());
    // A used result of an identical exchange: order-dependent.
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, exch(0, 1, true), false);
    let r = m.access(&c, 0, exch(1, 1, false), false).expect("od");
    assert_eq!(r.rank, Rank::OrderDependent);
}

#[test]
fn cluster_scoped_atomics_are_morally_strong_within_their_cluster_only() {
    // CTAs 0 and 1 form a cluster, CTA 2 is alone.
    let table: Rc<[u32]> = vec![0, 0, 1].into();
    let clocks = |c: u32| {
        let mut k = Clocks::in_cta(2, c);
        k.set_clusters(Some(table.clone()));
        k
    };
    let (c0, c1, c2) = (clocks(0), clocks(1), clocks(2));
    let scoped = |t: u32, c: &Clocks, cluster: bool| Acc {
        narrow: true,
        cluster,
        ..add(t, c)
    };
    // .cluster with .cluster of the other CTA of the cluster: no race.
    let mut m = ShadowMem::new(4);
    m.access(&c0, 0, scoped(0, &c0, true), false);
    assert!(m.access(&c1, 0, scoped(0, &c1, true), false).is_none());
    // .cluster with a gpu-scoped one of the cluster: no race.
    assert!(m.access(&c1, 0, add(1, &c1), false).is_none());
    // .cluster of another cluster's CTA: a race.
    assert!(race(m.access(&c2, 0, scoped(0, &c2, true), false)));
    // A gpu-scoped atomic of CTA 2 against the .cluster ones: its scope
    // includes them, theirs does not include CTA 2: a race.
    let mut m = ShadowMem::new(4);
    m.access(&c0, 0, scoped(0, &c0, true), false);
    assert!(race(m.access(&c2, 0, add(0, &c2), false)));
    // .cta of the other CTA of the cluster: a race (its scope is its CTA).
    let mut m = ShadowMem::new(4);
    m.access(&c0, 0, scoped(0, &c0, true), false);
    assert!(race(m.access(&c1, 0, scoped(0, &c1, false), false)));
    // Without a cluster table every CTA is its own cluster.
    let (d0, d1) = (Clocks::in_cta(2, 0), Clocks::in_cta(2, 1));
    let mut m = ShadowMem::new(4);
    m.access(&d0, 0, scoped(0, &d0, true), false);
    assert!(race(m.access(&d1, 0, scoped(0, &d1, true), false)));
}

#[test]
fn cta_scoped_atomics_of_different_ctas_race() {
    let mut c0 = Clocks::in_cta(2, 0);
    let c1 = Clocks::in_cta(2, 1);
    let mut m = ShadowMem::new(4);
    let narrow = |t: u32, c: &Clocks| Acc {
        narrow: true,
        ..add(t, c)
    };
    m.access(&c0, 0, narrow(0, &c0), false);
    assert!(m.access(&c0, 0, narrow(1, &c0), false).is_none());
    assert!(race(m.access(&c1, 0, narrow(0, &c1), false)));
    // gpu-scoped ones do not race.
    let mut m = ShadowMem::new(4);
    m.access(&c0, 0, add(0, &c0), false);
    assert!(m.access(&c1, 0, add(0, &c1), false).is_none());
    c0.tick(0);
}

#[test]
fn benign_same_value_stores() {
    let mut c = Clocks::new(3);
    let mut m = ShadowMem::new(1);
    assert!(m.access(&c, 0, pw(0, &c, 5), false).is_none());
    // Same instruction, same value, different thread: benign.
    assert!(m.access(&c, 0, pw(1, &c, 5), true).is_none());
    // Same instruction, different value: race.
    assert!(m.access(&c, 0, pw(2, &c, 5), false).is_some());
    // Different instruction, same value: race.
    let mut m = ShadowMem::new(1);
    m.access(&c, 0, pw(0, &c, 5), false);
    assert!(m.access(&c, 0, pw(1, &c, 6), true).is_some());
    // Thread 2 syncs only with thread 1 after two benign stores by 0
    // and 1: its write still races with thread 0's store.
    let mut m = ShadowMem::new(1);
    m.access(&c, 0, pw(0, &c, 5), false);
    m.access(&c, 0, pw(1, &c, 5), true);
    c.sync(&[1, 2], &[]);
    let r = m
        .access(&c, 0, pw(2, &c, 8), false)
        .expect("race with thread 0");
    assert_eq!(r.prev.tid, 0);
}

/// A store benign with another thread's latest store still races with
/// that thread's earlier, different store.
#[test]
fn benign_store_checked_against_dropped_predecessor() {
    let c = Clocks::new(2);
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, pw(0, &c, 1), false); // thread 0: A, value 1
    m.access(&c, 0, pw(0, &c, 2), false); // thread 0: B, value 2
    assert_eq!(m.kept(0), 1);
    let r = m.access(&c, 0, pw(1, &c, 2), true).expect("race with A");
    assert_eq!(r.prev.instr, 1);
}

/// A store benign with a later store must not hide a read before it.
#[test]
fn benign_store_races_with_read_before_it() {
    let c = Clocks::new(2);
    let mut m = ShadowMem::new(4);
    m.access(&c, 0, pr(0, &c, 1), false);
    m.access(&c, 0, pw(0, &c, 2), false);
    let r = m
        .access(&c, 0, pw(1, &c, 2), true)
        .expect("race with the read");
    assert_eq!((r.prev.instr, r.prev.kind), (1, Kind::PlainRead));
}

#[test]
fn loops_keep_the_shadow_small() {
    let mut c = Clocks::new(4);
    let mut m = ShadowMem::new(4);
    for i in 0..100 {
        for t in 0..4 {
            m.access(&c, 0, pr(t, &c, 1), false);
        }
        assert!(m.kept(0) <= 5, "{}", m.kept(0));
        c.sync(&[0, 1, 2, 3], &[]);
        m.access(&c, 0, pw(i % 4, &c, 2 + i), false);
        c.sync(&[0, 1, 2, 3], &[]);
    }
    assert!(m.kept(0) <= 5, "{}", m.kept(0));
}

#[test]
fn grid_release_acquire_orders_ctas() {
    // CTA 0 thread 0 writes, releases; CTA 1 thread 0 acquires, reads.
    let mut c0 = Clocks::in_cta(2, 0);
    let mut c1 = Clocks::in_cta(2, 1);
    let mut m = ShadowMem::new(4);
    m.access(&c0, 0, pw(0, &c0, 1), false);
    let rel = c0.release(0);
    c0.tick(0);
    // Thread 1 of CTA 1 has not acquired: race.
    assert!(race(m.access(&c1, 0, pr(1, &c1, 2), false)));
    c1.acquire(0, &rel);
    assert!(m.access(&c1, 0, pr(0, &c1, 2), false).is_none());
    // Its barrier passes the knowledge on.
    c1.sync(&[0, 1], &[]);
    let mut m2 = ShadowMem::new(4);
    m2.access(&c0, 0, pw(1, &c0, 1), false);
    assert!(race(m2.access(&c1, 0, pr(1, &c1, 2), false)));
    assert_eq!(c1.snapshot(1).foreign.ctas().collect::<Vec<_>>(), vec![0]);
}

// ---- property test: the shadow against a reference detector ----------

/// Keeps every access; checks every pair under the same clocks.
#[derive(Default)]
struct Naive {
    accs: Vec<(Acc, Option<u8>)>,
}

impl Naive {
    fn access(&mut self, clocks: &Clocks, cur: Acc, value: Option<u8>) -> Rank {
        let mut worst = Rank::None;
        for (e, v) in &self.accs {
            if clocks.knows_acc(cur.tid, e) {
                continue;
            }
            let benign = e.kind == Kind::PlainWrite
                && cur.kind == Kind::PlainWrite
                && e.instr == cur.instr
                && *v == value;
            worst = worst.max(rank(e, &cur, benign, clocks.same_cluster(e.cta, cur.cta)));
        }
        self.accs.push((cur, value));
        worst
    }
}

#[derive(Clone, Debug)]
enum Ev {
    Access {
        cta: u32,
        t: u32,
        kind: Kind,
        instr: u32,
        used: bool,
        /// 0: `.cta`, 1: `.cluster`, 2: wider.
        scope: u8,
        op: u8,
        operands: u64,
        value: u8,
    },
    /// A barrier among `mask` of CTA `cta`, releasing the pending
    /// `bar.arrive` snapshots of that CTA.
    Sync { cta: u32, mask: u8 },
    /// `bar.arrive` of thread `t`.
    Arrive { cta: u32, t: u32 },
    /// A release by `t` of CTA `cta` (grid-level mode).
    Release { cta: u32, t: u32 },
    /// `t` of CTA `cta` acquires the latest release of CTA `from`.
    Acquire { cta: u32, t: u32, from: u32 },
}

const THREADS: u32 = 3;
/// CTAs 0 and 1 form a cluster, CTA 2 is alone.
const CTAS: u32 = 3;

fn ev() -> impl Strategy<Value = Ev> {
    let kind = prop_oneof![
        Just(Kind::PlainRead),
        Just(Kind::PlainWrite),
        Just(Kind::StrongRead),
        Just(Kind::StrongWrite),
    ];
    let op = prop_oneof![Just(1 | OP_COMMUTES), Just(2u8)];
    let scope = prop_oneof![3 => Just(2u8), 1 => Just(0u8), 1 => Just(1u8)];
    let access = (
        0..CTAS,
        0..THREADS,
        kind,
        0..3u32,
        any::<bool>(),
        scope,
        op,
        0..2u64,
        0..2u8,
    )
        .prop_map(
            |(cta, t, kind, instr, used, scope, op, operands, value)| Ev::Access {
                cta,
                t,
                kind,
                instr,
                used,
                scope,
                op,
                operands,
                value,
            },
        );
    prop_oneof![
        6 => access,
        2 => (0..CTAS, 1..(1u8 << THREADS)).prop_map(|(cta, mask)| Ev::Sync { cta, mask }),
        1 => (0..CTAS, 0..THREADS).prop_map(|(cta, t)| Ev::Arrive { cta, t }),
        1 => (0..CTAS, 0..THREADS).prop_map(|(cta, t)| Ev::Release { cta, t }),
        1 => (0..CTAS, 0..THREADS, 0..CTAS).prop_map(|(cta, t, from)| Ev::Acquire { cta, t, from }),
    ]
}

/// Runs `evs` through both detectors on one unit; returns the worst rank
/// each saw.
fn run_both(evs: &[Ev], single: bool) -> (Rank, Rank) {
    let table: Rc<[u32]> = vec![0, 0, 1].into();
    let mut clocks: Vec<Clocks> = (0..CTAS)
        .map(|c| {
            let mut k = Clocks::in_cta(THREADS as usize, c);
            k.set_clusters(Some(table.clone()));
            k
        })
        .collect();
    let mut pending: [Vec<Snapshot>; CTAS as usize] = Default::default();
    let mut released: [Option<Foreign>; CTAS as usize] = Default::default();
    let mut shadow = ShadowMem::new(4);
    // With one CTA the shadow may drop what every thread knows.
    shadow.private = single;
    let mut naive = Naive::default();
    // The unit's content: the value of the last plain store, `None` after
    // a strong write (an update's result) or before any write.
    let mut content: Option<u8> = None;
    let (mut opt, mut reference) = (Rank::None, Rank::None);
    for e in evs {
        match *e {
            Ev::Access {
                cta,
                t,
                kind,
                instr,
                used,
                scope,
                op,
                operands,
                value,
            } => {
                let cta = if single { 0 } else { cta };
                let c = &clocks[cta as usize];
                let strong = kind.is_strong();
                let a = Acc {
                    tid: t,
                    cta,
                    epoch: c.epoch(t),
                    instr,
                    kind,
                    used: strong && used,
                    narrow: strong && scope < 2,
                    cluster: strong && scope == 1,
                    rmw: kind == Kind::StrongWrite,
                    op: if kind == Kind::StrongWrite { op } else { 0 },
                    operands: if kind == Kind::StrongWrite {
                        operands
                    } else {
                        0
                    },
                };
                let v = (kind == Kind::PlainWrite).then_some(value);
                let same = v.is_some() && content == v;
                if let Some(k) = shadow.access(c, 0, a, same) {
                    opt = opt.max(k.rank);
                }
                reference = reference.max(naive.access(c, a, v));
                match kind {
                    Kind::PlainWrite => content = v,
                    Kind::StrongWrite => content = None,
                    _ => {}
                }
            }
            Ev::Sync { cta, mask } => {
                let cta = if single { 0 } else { cta };
                let ps: Vec<u32> = (0..THREADS).filter(|t| mask & (1 << t) != 0).collect();
                let snaps = std::mem::take(&mut pending[cta as usize]);
                clocks[cta as usize].sync(&ps, &snaps);
            }
            Ev::Arrive { cta, t } => {
                let cta = if single { 0 } else { cta };
                let c = &mut clocks[cta as usize];
                pending[cta as usize].push(c.snapshot(t));
                c.tick(t);
            }
            Ev::Release { cta, t } => {
                let c = &mut clocks[cta as usize];
                released[cta as usize] = Some(c.release(t));
                c.tick(t);
            }
            Ev::Acquire { cta, t, from } => {
                let cta = if single { 0 } else { cta };
                if from != cta
                    && let Some(r) = released[from as usize].clone()
                {
                    clocks[cta as usize].acquire(t, &r);
                }
            }
        }
    }
    (opt, reference)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20000))]

    /// The shadow reports the same verdict (race, order-dependent, or
    /// neither) as the reference that keeps every access.
    #[test]
    fn shadow_agrees_with_reference(evs in prop::collection::vec(ev(), 1..40)) {
        let (opt, reference) = run_both(&evs, false);
        prop_assert_eq!(opt, reference);
    }

    /// The same with one CTA, where the shadow also drops accesses every
    /// thread knows.
    #[test]
    fn private_shadow_agrees_with_reference(evs in prop::collection::vec(ev(), 1..40)) {
        let (opt, reference) = run_both(&evs, true);
        prop_assert_eq!(opt, reference);
    }
}
