//! The disk cache against a real directory: round trips, every way an
//! entry can go bad, concurrent writers (threads and processes), LRU
//! eviction, `clear`, and no temporaries left behind.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use ptxeq_cache::{DiskCache, Key};

fn cache(dir: &Path) -> DiskCache {
    DiskCache::open(dir, 1 << 30).unwrap()
}

fn key(n: u32) -> Key {
    Key::new("unrolled", 1, &n.to_le_bytes())
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn no_temporaries(dir: &Path) {
    for f in files(dir) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.ends_with(".entry"), "left behind: {}", f.display());
    }
}

#[test]
fn round_trip_and_typed_values() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    assert_eq!(c.get(&key(1)), None);
    c.put(&key(1), b"hello").unwrap();
    assert_eq!(c.get(&key(1)).as_deref(), Some(&b"hello"[..]));
    c.put_value(&key(2), &(7u64, vec!["a".to_string()]))
        .unwrap();
    let v: Option<(u64, Vec<String>)> = c.get_value(&key(2));
    assert_eq!(v, Some((7, vec!["a".to_string()])));
    // A second handle (as another process would) sees the same entries.
    let c2 = cache(dir.path());
    assert_eq!(c2.get(&key(1)).as_deref(), Some(&b"hello"[..]));
    let s = c.stats();
    assert_eq!((s.hits, s.misses, s.puts, s.rejects), (2, 1, 2, 0));
    assert_eq!(s.by_query["unrolled"].hits, 2);
    assert_eq!(c.usage().unwrap().entries, 2);
    no_temporaries(dir.path());
}

#[test]
fn keys_separate_query_version_and_input() {
    let a = Key::new("unrolled", 1, b"x");
    assert_ne!(a, Key::new("symbolic", 1, b"x"));
    assert_ne!(a.hash, Key::new("unrolled", 2, b"x").hash);
    assert_ne!(a.hash, Key::new("unrolled", 1, b"y").hash);
    // Length-prefixed name: moving bytes between name and input changes the key.
    assert_ne!(Key::new("ab", 1, b"c").hash, Key::new("a", 1, b"bc").hash);
    let mut h = Key::hasher("unrolled", 1);
    h.update(b"x");
    assert_eq!(h.finish(), a);
}

#[test]
fn a_corrupt_byte_is_a_miss_and_the_entry_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(1), b"payload that matters").unwrap();
    let path = c.entry_path(&key(1));
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 1;
    fs::write(&path, &bytes).unwrap();
    assert_eq!(c.get(&key(1)), None);
    assert_eq!(c.stats().rejects, 1);
    assert!(!path.exists(), "a rejected entry is deleted");
    // Recomputed and stored again, it is a hit.
    c.put(&key(1), b"payload that matters").unwrap();
    assert!(c.get(&key(1)).is_some());
}

#[test]
fn truncated_foreign_and_misplaced_entries_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(1), b"0123456789").unwrap();
    let path = c.entry_path(&key(1));
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    assert_eq!(c.get(&key(1)), None, "truncated");

    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"not a cache entry at all").unwrap();
    assert_eq!(c.get(&key(1)), None, "foreign");

    // Key 2's (valid) entry copied to key 3's place: header names key 2.
    c.put(&key(2), b"two").unwrap();
    let p3 = c.entry_path(&key(3));
    fs::create_dir_all(p3.parent().unwrap()).unwrap();
    fs::copy(c.entry_path(&key(2)), &p3).unwrap();
    assert_eq!(c.get(&key(3)), None, "misplaced");
    assert_eq!(c.stats().rejects, 3);
}

#[test]
fn another_pass_version_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&Key::new("unrolled", 1, b"in"), b"old").unwrap();
    assert_eq!(c.get(&Key::new("unrolled", 2, b"in")), None);
    assert_eq!(
        c.get(&Key::new("unrolled", 1, b"in")).as_deref(),
        Some(&b"old"[..])
    );
}

#[test]
fn an_undecodable_payload_is_a_reject() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(1), &[0xff; 3]).unwrap();
    let v: Option<String> = c.get_value(&key(1));
    assert_eq!(v, None);
    let s = c.stats();
    assert_eq!((s.hits, s.rejects), (0, 1));
    assert!(!c.entry_path(&key(1)).exists());
}

#[test]
fn concurrent_threads_writing_and_reading_the_same_keys() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    let payload = |n: u32| vec![n as u8; 10_000 + n as usize];
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for round in 0..20 {
                    for n in 0..8 {
                        if round % 2 == 0 {
                            c.put(&key(n), &payload(n)).unwrap();
                        } else if let Some(got) = c.get(&key(n)) {
                            assert_eq!(got, payload(n), "torn read of key {n}");
                        }
                    }
                }
            });
        }
    });
    for n in 0..8 {
        assert_eq!(c.get(&key(n)), Some(payload(n)));
    }
    assert_eq!(c.stats().rejects, 0);
    no_temporaries(dir.path());
}

/// Several processes hammer one directory: the child is this test binary
/// re-run on the ignored test below.
#[test]
fn concurrent_processes() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--ignored", "--exact", "child_writer", "--test-threads=1"])
                .env("PTXEQ_CACHE_TEST_DIR", dir.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut ch in children {
        assert!(ch.wait().unwrap().success(), "a writer process failed");
    }
    let c = cache(dir.path());
    for n in 0..16 {
        assert_eq!(c.get(&key(n)), Some(child_payload(n)), "key {n}");
    }
    assert_eq!(c.stats().rejects, 0);
    no_temporaries(dir.path());
}

fn child_payload(n: u32) -> Vec<u8> {
    (0..50_000u32).map(|i| (i ^ n) as u8).collect()
}

#[test]
#[ignore = "helper process of concurrent_processes"]
fn child_writer() {
    let Some(dir) = std::env::var_os("PTXEQ_CACHE_TEST_DIR") else {
        return;
    };
    let c = cache(Path::new(&dir));
    for round in 0..10 {
        for n in 0..16 {
            if let Some(got) = c.get(&key(n)) {
                assert_eq!(got, child_payload(n), "torn read");
            }
            if (n + round) % 3 == 0 {
                c.put(&key(n), &child_payload(n)).unwrap();
            }
        }
    }
    for n in 0..16 {
        c.put(&key(n), &child_payload(n)).unwrap();
    }
    assert_eq!(c.stats().rejects, 0);
}

fn set_age(path: &Path, secs_ago: u64) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

#[test]
fn eviction_removes_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    for n in 0..4 {
        c.put(&key(n), &[n as u8; 1000]).unwrap();
    }
    // Written long ago in the order 0, 1, 2, 3 ...
    for n in 0..4 {
        set_age(&c.entry_path(&key(n)), 1000 - u64::from(n) * 100);
    }
    // ... then 0 is used again: it becomes the most recent.
    assert!(c.get(&key(0)).is_some());
    let one = fs::metadata(c.entry_path(&key(0))).unwrap().len();
    // Cap for three entries: down to 3/4 of it keeps two.
    let evicted = c.evict_to(one * 3).unwrap();
    assert_eq!(evicted, 2);
    let alive: Vec<u32> = (0..4).filter(|&n| c.entry_path(&key(n)).exists()).collect();
    assert_eq!(alive, vec![0, 3]);
    assert_eq!(c.stats().evictions, 2);
}

#[test]
fn puts_over_the_cap_evict_automatically() {
    let dir = tempfile::tempdir().unwrap();
    let c = DiskCache::open(dir.path(), 10_000).unwrap();
    for n in 0..30 {
        c.put(&key(n), &[0u8; 1000]).unwrap();
    }
    let u = c.usage().unwrap();
    assert!(u.bytes <= 10_000, "{u:?}");
    assert!(c.stats().evictions > 0);
    // The newest entry survived.
    assert!(c.get(&key(29)).is_some());
}

#[test]
fn clear_removes_entries_but_not_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    for n in 0..5 {
        c.put(&key(n), b"x").unwrap();
    }
    fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
    fs::create_dir_all(dir.path().join("zz")).unwrap();
    fs::write(dir.path().join("zz/keep.entry"), b"mine too").unwrap();
    assert_eq!(c.clear().unwrap(), 5);
    assert_eq!(c.usage().unwrap().entries, 0);
    assert!(dir.path().join("notes.txt").exists());
    assert!(dir.path().join("zz/keep.entry").exists());
    assert_eq!(c.get(&key(0)), None);
}

#[test]
fn stale_temporaries_are_swept() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(1), b"x").unwrap();
    let sub = c.entry_path(&key(1)).parent().unwrap().to_path_buf();
    let fresh = sub.join(".tmp-fresh");
    let stale = sub.join(".tmp-stale");
    fs::write(&fresh, b"being written").unwrap();
    fs::write(&stale, b"crashed writer").unwrap();
    set_age(&stale, 7200);
    assert_eq!(c.usage().unwrap().entries, 1);
    assert!(fresh.exists(), "a temporary in use is left alone");
    assert!(!stale.exists(), "a stale temporary is removed");
}

#[test]
fn scoped_handles_count_apart_and_share_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(1), b"x").unwrap();
    let s = c.scoped();
    assert!(s.get(&key(1)).is_some());
    assert_eq!(s.get(&key(2)), None);
    assert_eq!((s.stats().hits, s.stats().misses), (1, 1));
    // A sibling counts apart; the parent counts what its scopes did (the
    // run's totals in --timings).
    let t = c.scoped();
    assert_eq!(t.get(&key(3)), None);
    assert_eq!((t.stats().hits, t.stats().misses), (0, 1));
    assert_eq!((s.stats().hits, s.stats().misses), (1, 1));
    assert_eq!((c.stats().hits, c.stats().misses), (1, 2));
    s.put(&key(2), b"y").unwrap();
    assert_eq!(c.stats().puts, 2);
    assert!(c.get(&key(2)).is_some());
}

/// Two machines' local caches behind one remote (`file://` here; Redis in
/// drivers/cli/tests/remote_cache.rs): what one wrote, the other reads,
/// keeps a local copy of, and never trusts when it does not verify.
#[test]
fn a_remote_layer_shares_entries_between_local_caches() {
    use std::sync::Arc;
    let remote_dir = tempfile::tempdir().unwrap();
    let url = format!("file://{}", remote_dir.path().display());
    let remote =
        Arc::new(ptxeq_cache::Remote::open(&url, ptxeq_cache::remote::DEFAULT_TIMEOUT).unwrap());
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = cache(da.path()).with_remote(remote.clone());
    let b = cache(db.path()).with_remote(remote.clone());
    a.put(&key(1), b"decided").unwrap();
    assert_eq!(a.stats().remote.puts, 1);
    assert_eq!(b.get(&key(1)).as_deref(), Some(&b"decided"[..]));
    let s = b.stats();
    assert_eq!((s.hits, s.misses, s.remote.hits), (1, 0, 1));
    // The copy is local now: the next read does not ask the remote.
    assert!(b.entry_path(&key(1)).exists());
    assert!(b.get(&key(1)).is_some());
    assert_eq!(b.stats().remote.hits, 1);
    // A key nobody wrote: a miss on both layers.
    assert_eq!(b.get(&key(2)), None);
    assert_eq!(b.stats().remote.misses, 1);
    // A corrupted remote entry is a miss (reject), never a hit.
    a.put(&key(3), b"payload").unwrap();
    let remote_file = remote_dir.path().join(ptxeq_cache::Remote::path(&key(3)));
    let mut bytes = fs::read(&remote_file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x20;
    fs::write(&remote_file, &bytes).unwrap();
    let (dc, dd) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let c = cache(dc.path()).with_remote(remote.clone());
    assert_eq!(c.get(&key(3)), None);
    let s = c.stats();
    assert_eq!(
        (s.hits, s.misses, s.rejects, s.remote.rejects),
        (0, 1, 1, 1)
    );
    // The recomputed value's write repairs it.
    c.put(&key(3), b"payload").unwrap();
    let d = cache(dd.path()).with_remote(remote);
    assert_eq!(d.get(&key(3)).as_deref(), Some(&b"payload"[..]));
}
