//! The disk cache behind `unrolled` and `symbolic`: a second database (as a
//! second process would build) reads every artifact back instead of
//! simulating, gets identical results, and a damaged cache only costs a
//! recomputation.

use std::path::PathBuf;
use std::sync::Arc;

use ptxeq_db::{CtaKey, Database, DiskCache, KernelSlot, Slot, SourceFile, SpecInput};

struct Case {
    spec: SpecInput,
    kernels: Vec<(Slot, SourceFile)>,
}

fn load(db: &Database, case: &str) -> Case {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(case)
        .join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).unwrap();
    let kernels = spec
        .kernels
        .iter()
        .into_iter()
        .map(|(w, k)| {
            let text = std::fs::read_to_string(&k.ptx).unwrap();
            (Slot::of(w), db.add_file(&k.ptx, text))
        })
        .collect();
    Case {
        spec: SpecInput::new(db, path, spec),
        kernels,
    }
}

/// What a race check reports, without database ids.
fn summary(db: &Database, c: &Case) -> Vec<String> {
    ptxeq_db::race_check(db, c.spec, &c.kernels)
        .iter()
        .map(|r| format!("{:?} {:?} {:?}", r.verdict, r.ctas, r.cross_cta))
        .collect()
}

fn cache(dir: &std::path::Path) -> Arc<DiskCache> {
    Arc::new(DiskCache::open(dir, u64::MAX).unwrap())
}

const PAIR: &str = "softmax/naive-vs-online-n128";

/// Hits, misses, rejects and puts, without the math-idiom catalogue's
/// entry: a database looks it up only while its process has none (once
/// per test process, whichever test runs first), and stores it after a
/// miss or a reject.
fn counts(s: &ptxeq_cache::Stats) -> (u64, u64, u64, u64) {
    let cat = s
        .by_query
        .get("idiom_catalogue")
        .cloned()
        .unwrap_or_default();
    (
        s.hits - cat.hits,
        s.misses - cat.misses,
        s.rejects - cat.rejects,
        s.puts - cat.misses - cat.rejects,
    )
}

#[test]
fn a_second_database_reads_unrolled_ctas_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let first_cache = cache(dir.path());
    let first = Database::default().with_cache(Some(first_cache.clone()));
    let c1 = load(&first, PAIR);
    let expected = summary(&first, &c1);
    let s = first_cache.stats();
    let (hits, misses, _, puts) = counts(&s);
    assert_eq!((hits, misses, puts), (0, 2, 2), "{s:?}");

    let second_cache = cache(dir.path());
    let second = Database::default().with_cache(Some(second_cache.clone()));
    let c2 = load(&second, PAIR);
    assert_eq!(summary(&second, &c2), expected);
    let s = second_cache.stats();
    let (hits, misses, _, puts) = counts(&s);
    assert_eq!((hits, misses, puts), (2, 0, 0), "{s:?}");
    assert_eq!(s.by_query["unrolled"].hits, 2);
}

#[test]
fn symbolic_states_are_cached_too() {
    let dir = tempfile::tempdir().unwrap();
    let run = |c: &Arc<DiskCache>| {
        let db = Database::default().with_cache(Some(c.clone()));
        let case = load(&db, PAIR);
        let (slot, file) = case.kernels[1];
        let k = KernelSlot::new(&db, case.spec, slot, file);
        let key = CtaKey::new(&db, k, [0, 0, 0]);
        ptxeq_db::symbolic(&db, key)
            .clone()
            .expect("race-free kernel")
    };
    let a = cache(dir.path());
    let first = run(&a);
    let b = cache(dir.path());
    let second = run(&b);
    assert_eq!(first, second);
    assert_eq!(b.stats().by_query["symbolic"].hits, 1);
    assert_eq!(b.stats().by_query["unrolled"].hits, 1);
}

#[test]
fn a_corrupted_cache_is_recomputed_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let first = Database::default().with_cache(Some(cache(dir.path())));
    let c1 = load(&first, PAIR);
    let expected = summary(&first, &c1);
    // Flip a byte near the end of every entry (inside the payload).
    let mut n = 0;
    for sub in std::fs::read_dir(dir.path()).unwrap().flatten() {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let mut bytes = std::fs::read(f.path()).unwrap();
            let i = bytes.len() - 5;
            bytes[i] ^= 0x10;
            std::fs::write(f.path(), bytes).unwrap();
            n += 1;
        }
    }
    // Two unrolled CTAs, and the idiom catalogue when this test was the
    // first to need it.
    assert!((2..=3).contains(&n), "{n}");
    let c = cache(dir.path());
    let second = Database::default().with_cache(Some(c.clone()));
    let c2 = load(&second, PAIR);
    assert_eq!(summary(&second, &c2), expected);
    let s = c.stats();
    let (hits, _, rejects, puts) = counts(&s);
    assert_eq!((hits, rejects, puts), (0, 2, 2), "{s:?}");
}

#[test]
fn another_spec_over_the_same_kernel_is_another_key() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    let db = Database::default().with_cache(Some(c.clone()));
    let case = load(&db, PAIR);
    summary(&db, &case);
    // The same files, a different launch (grid), as its own spec.
    let mut spec = case.spec.spec(&db).clone();
    spec.launch.grid = [2, 1, 1];
    // Each kernel carries its resolved launch (the shared one here).
    if let ptxeq_spec::Kernels::Pair {
        reference,
        candidate,
    } = &mut spec.kernels
    {
        reference.launch.grid = [2, 1, 1];
        candidate.launch.grid = [2, 1, 1];
    }
    let other = Case {
        spec: SpecInput::new(&db, "other.toml".into(), spec),
        kernels: case.kernels.clone(),
    };
    summary(&db, &other);
    let s = c.stats();
    let (hits, misses, _, _) = counts(&s);
    assert_eq!((hits, misses), (0, 4), "{s:?}");
}

/// A refuted pair: its failures carry counterexamples.
const REFUTED: &str = "bugs/misc-linear-bias-added-twice";

#[test]
fn a_second_database_reads_the_pair_result_not_the_symbolic_states() {
    let dir = tempfile::tempdir().unwrap();
    let run = |c: &Arc<DiskCache>, stop: ptxeq_db::StopRule| {
        let db = Database::default().with_cache(Some(c.clone()));
        let case = load(&db, REFUTED);
        ptxeq_db::check_with(&db, case.spec, &case.kernels, stop)
    };
    let a = cache(dir.path());
    let first = run(&a, ptxeq_db::StopRule::DEFAULT);
    let v1 = first.verdicts.clone().expect("compared");
    assert!(v1.refuted() > 0, "{v1:?}");
    assert!(v1.stats.decided > 0);
    assert_eq!(a.stats().by_query["pair_result"].misses, 1);

    let b = cache(dir.path());
    let second = run(&b, ptxeq_db::StopRule::DEFAULT);
    let v2 = second.verdicts.clone().expect("compared");
    assert_eq!(second.verdict, first.verdict);
    assert_eq!(second.problems, first.problems);
    // The same tensors and failures (counterexamples included); every
    // decision now counts as from the store.
    assert_eq!(v2.tensors, v1.tensors);
    assert_eq!(v2.stats.decided, 0);
    assert_eq!(v2.stats.memo_hits, v1.stats.decided + v1.stats.memo_hits);
    let s = b.stats();
    assert_eq!(s.by_query["pair_result"].hits, 1);
    assert!(!s.by_query.contains_key("symbolic"), "{s:?}");

    // Another stop rule is another key.
    let c = cache(dir.path());
    let all = run(&c, ptxeq_db::StopRule::ALL);
    assert_eq!(all.verdict, first.verdict);
    assert_eq!(c.stats().by_query["pair_result"].misses, 1);
}

/// A pair whose candidate races (the verdict comes from the race gate).
const RACY_PAIR: &str = "races/missing-barrier-reverse-pair";

/// The entries under `dir` whose header names `query`.
fn entries_of(dir: &std::path::Path, query: &str) -> usize {
    let mut n = 0;
    for sub in std::fs::read_dir(dir).unwrap().flatten() {
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let bytes = std::fs::read(f.path()).unwrap();
            if bytes.windows(query.len()).any(|w| w == query.as_bytes()) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn a_racy_pair_is_marked_so_a_second_database_replays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = |c: &Arc<DiskCache>| {
        let db = Database::default().with_cache(Some(c.clone()));
        let case = load(&db, RACY_PAIR);
        ptxeq_db::check_with(&db, case.spec, &case.kernels, ptxeq_db::StopRule::DEFAULT)
    };
    let a = cache(dir.path());
    let first = run(&a);
    assert!(first.verdicts.is_none(), "stopped at the race gate");
    // The check stopped at the gate: that is marked (the clean
    // reference's replay may have started early in this cold run).
    assert_eq!(entries_of(dir.path(), "pair_gated"), 1);
    assert!(!a.stats().by_query.contains_key("pair_result"));

    // A second database finds the mark: no replay starts early, so no
    // symbolic state is looked up (or loaded) for a verdict the race
    // gate gives.
    let b = cache(dir.path());
    let second = run(&b);
    assert_eq!(second.verdict, first.verdict);
    let s = b.stats();
    assert!(!s.by_query.contains_key("symbolic"), "{s:?}");
    assert!(!s.by_query.contains_key("pair_result"), "{s:?}");
    assert_eq!(s.by_query["unrolled"].misses, 0, "{s:?}");
}
