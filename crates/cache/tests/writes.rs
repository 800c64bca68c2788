//! Writes that fail, and who can read what is written: a failed write is
//! never counted as written, a directory that cannot be written warns once
//! (plain text, however many writes fail), and entries and directories get
//! the permissions the umask gives any new file, so a cache shared between
//! users hits.

use std::fs;
use std::path::Path;

use ptxeq_cache::{DiskCache, Key};

fn cache(dir: &Path) -> DiskCache {
    DiskCache::open(dir, 1 << 30).unwrap()
}

fn key(n: u32) -> Key {
    Key::new("unrolled", 1, &n.to_le_bytes())
}

/// Opens a cache, then makes its directory unwritable in a way that holds
/// even for root (which ignores permission bits): the root path becomes a
/// plain file, so no subdirectory can be created under it.
fn unwritable_cache(dir: &Path) -> DiskCache {
    let root = dir.join("cache");
    let c = cache(&root);
    fs::remove_dir_all(&root).unwrap();
    fs::write(&root, b"not a directory").unwrap();
    c
}

#[test]
fn a_failed_write_is_not_counted_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    // Something that is not an entry sits where the entry goes: the rename
    // fails even though the path exists. (It used to count as written.)
    fs::create_dir_all(c.entry_path(&key(1))).unwrap();
    assert!(c.put(&key(1), b"payload").is_err());
    let s = c.stats();
    assert_eq!((s.puts, s.bytes_written, s.put_errors), (0, 0, 1), "{s:?}");
    // A write that works is counted.
    c.put(&key(2), b"payload").unwrap();
    let s = c.stats();
    assert_eq!((s.puts, s.put_errors), (1, 1), "{s:?}");
    assert!(s.bytes_written > 0);
}

/// `probe_write` tells a writable cache from one whose writes fail, the
/// way a later process (`ptxeq cache stats`) can check it.
#[test]
fn a_write_probe_tells_an_unwritable_directory() {
    let dir = tempfile::tempdir().unwrap();
    let ok = cache(&dir.path().join("ok"));
    ok.probe_write().unwrap();
    assert_eq!(ok.usage().unwrap().entries, 0, "the probe leaves no entry");
    let bad = unwritable_cache(dir.path());
    assert!(bad.probe_write().is_err());
}

#[test]
fn an_unwritable_directory_warns_once() {
    let dir = tempfile::tempdir().unwrap();
    let c = unwritable_cache(dir.path());
    let scoped = c.scoped();
    for n in 0..16 {
        assert!(c.put(&key(n), b"x").is_err());
        assert!(scoped.put(&key(100 + n), b"x").is_err());
    }
    assert_eq!(c.stats().put_errors, 32);
    assert_eq!(c.stats().puts, 0);
    assert_eq!(c.write_warnings(), 1);
    assert_eq!(
        scoped.write_warnings(),
        1,
        "handles on one directory share the warning"
    );
}

/// The warning as a user sees it: run [`child_unwritable`] in a child
/// process and read its stderr (a pipe, not a terminal).
#[test]
fn the_one_warning_is_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_unwritable",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("PTXEQ_CACHE_TEST_DIR", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("cannot write the cache directory"))
        .collect();
    assert_eq!(warnings.len(), 1, "stderr:\n{stderr}");
    assert!(warnings[0].starts_with("warning: "), "{}", warnings[0]);
    assert!(
        !stderr.contains('\x1b'),
        "colour codes on a pipe: {stderr:?}"
    );
}

#[test]
#[ignore = "helper process of the_one_warning_is_plain_text"]
fn child_unwritable() {
    let Some(dir) = std::env::var_os("PTXEQ_CACHE_TEST_DIR") else {
        return;
    };
    let c = unwritable_cache(Path::new(&dir));
    for n in 0..16 {
        assert!(c.put(&key(n), b"x").is_err());
    }
}

#[cfg(unix)]
#[test]
fn entries_and_directories_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let c = cache(dir.path());
    c.put(&key(7), b"payload").unwrap();
    let entry = c.entry_path(&key(7));
    // What this process's umask gives a new file and a new directory.
    let probe_file = dir.path().join("probe-file");
    fs::File::create(&probe_file).unwrap();
    let probe_dir = dir.path().join("probe-dir");
    fs::create_dir(&probe_dir).unwrap();
    assert_eq!(
        mode(&entry),
        mode(&probe_file),
        "an entry has the mode of any new file (tempfile's private 0o600 would make a \
         cache restored under another user id miss)"
    );
    assert_eq!(mode(entry.parent().unwrap()), mode(&probe_dir));
    // And the entry is readable back.
    assert_eq!(c.get(&key(7)).as_deref(), Some(&b"payload"[..]));
}
