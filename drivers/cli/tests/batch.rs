//! End-to-end tests of the batch and build-system commands: `ptxeq cache`,
//! `ptxeq corpus`, `--format sarif`, `--timings`, and `ptxeq watch` on a real
//! file edit. Every run gets its own cache directory.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

mod support;
use support::{ptxeq_with_cache as ptxeq, repo};

#[test]
fn a_second_run_reads_the_disk_cache() {
    let cache = tempfile::tempdir().unwrap();
    let spec = "corpus/races/missing-barrier-reverse-fixed/check.toml";
    let (code, _, err) = ptxeq(cache.path(), &["race", spec, "--timings"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("0 hits, 1 misses"), "{err}");
    assert!(err.contains("unroll "), "{err}");
    let (code, _, err) = ptxeq(cache.path(), &["race", spec, "--timings"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("1 hits, 0 misses"), "{err}");
    // The unroll pass itself did not run.
    assert!(!err.contains("\n  unroll "), "{err}");

    // The unrolled CTA and the math-idiom template catalogue.
    let (code, out, _) = ptxeq(cache.path(), &["cache", "stats"]);
    assert_eq!(code, 0);
    assert!(out.contains("entries:   2"), "{out}");
    let (code, out, _) = ptxeq(cache.path(), &["cache", "path"]);
    assert_eq!(code, 0);
    assert_eq!(Path::new(out.trim()), cache.path());
    let (code, out, _) = ptxeq(cache.path(), &["cache", "clear"]);
    assert_eq!(code, 0);
    assert!(out.contains("removed 2 entries"), "{out}");
    // --no-cache leaves the directory alone.
    let (code, _, _) = ptxeq(cache.path(), &["race", spec, "--no-cache"]);
    assert_eq!(code, 0);
    let (_, out, _) = ptxeq(cache.path(), &["cache", "stats"]);
    assert!(out.contains("entries:   0"), "{out}");
}

/// A cache whose writes fail (every shard directory's name is taken by a
/// plain file, which stops even root) still gives the verdict; `--timings`
/// says how many results could not be stored, and they are not counted as
/// written.
#[test]
fn timings_count_failed_cache_writes() {
    let cache = tempfile::tempdir().unwrap();
    for b in 0..=255u8 {
        std::fs::write(cache.path().join(format!("{b:02x}")), b"in the way").unwrap();
    }
    let spec = "corpus/races/missing-barrier-reverse-fixed/check.toml";
    let (code, _, err) = ptxeq(cache.path(), &["race", spec, "--timings"]);
    assert_eq!(code, 0, "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("disk cache ("))
        .unwrap_or_else(|| panic!("{err}"));
    // The unrolled CTA and the idiom catalogue: two results, neither stored.
    assert!(
        line.contains("0 written (0 bytes), 2 write(s) failed"),
        "{line}"
    );
    // A later process sees it in `cache stats`.
    let (code, out, _) = ptxeq(cache.path(), &["cache", "stats"]);
    assert_eq!(code, 0);
    assert!(out.contains("writable:  no ("), "{out}");
    // A run whose writes work says nothing about failures.
    let fine = tempfile::tempdir().unwrap();
    let (_, _, err) = ptxeq(fine.path(), &["race", spec, "--timings"]);
    assert!(!err.contains("failed"), "{err}");
    let (_, out, _) = ptxeq(fine.path(), &["cache", "stats"]);
    assert!(out.contains("writable:  yes"), "{out}");
}

#[test]
fn corpus_runs_report_and_exit_for_ci() {
    let cache = tempfile::tempdir().unwrap();
    let reports = tempfile::tempdir().unwrap();
    let junit = reports.path().join("j.xml");
    let json = reports.path().join("r.json");
    let (code, out, err) = ptxeq(
        cache.path(),
        &[
            "corpus",
            "corpus",
            "--filter",
            "races/missing-barrier-reverse",
            "--junit",
            junit.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("races/missing-barrier-reverse-fixed"), "{out}");
    assert!(out.contains("0 failed"), "{out}");
    // Not a terminal: one plain progress line per case.
    assert!(err.contains("] pass"), "{err}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite name=\"ptxeq corpus\""), "{xml}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "ptxeq.corpus/1");
    assert_eq!(v["summary"]["failed"], 0);

    // A case expecting the wrong verdict fails the run.
    let bad = tempfile::tempdir().unwrap();
    let case = bad.path().join("races/wrong");
    std::fs::create_dir_all(&case).unwrap();
    let src = repo().join("corpus/races/missing-barrier-reverse");
    std::fs::copy(src.join("k.ptx"), case.join("k.ptx")).unwrap();
    let spec = std::fs::read_to_string(src.join("check.toml")).unwrap();
    std::fs::write(
        case.join("check.toml"),
        spec.replace("verdict = \"race\"", "verdict = \"race-free\""),
    )
    .unwrap();
    let (code, out, _) = ptxeq(cache.path(), &["corpus", bad.path().to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL"), "{out}");
    // No case at all: invalid input.
    let empty = tempfile::tempdir().unwrap();
    let (code, _, _) = ptxeq(cache.path(), &["corpus", empty.path().to_str().unwrap()]);
    assert_eq!(code, 3);
}

#[test]
fn sarif_output_of_a_race() {
    let cache = tempfile::tempdir().unwrap();
    let (code, out, err) = ptxeq(
        cache.path(),
        &[
            "race",
            "corpus/races/missing-barrier-reverse/check.toml",
            "--format",
            "sarif",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["runs"][0]["results"][0]["ruleId"], "race");
}

/// Best effort: a real `ptxeq watch` process sees a file saved on disk.
/// Waits at most 60 s for each report.
#[test]
fn watch_rechecks_on_save() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let src = repo().join("corpus/races/missing-barrier-reverse");
    for f in ["check.toml", "k.ptx"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptxeq"))
        .args(["watch", "check.toml"])
        .env("PTXEQ_CACHE_DIR", cache.path())
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |prefix: &str| -> Option<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return Some(l),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    };
    let first = wait_for("== race");
    let fixed =
        std::fs::read_to_string(repo().join("corpus/races/missing-barrier-reverse-fixed/k.ptx"))
            .unwrap();
    std::fs::write(dir.path().join("k.ptx"), fixed).unwrap();
    let changed = wait_for("== changed:");
    let second = wait_for("== race-free");
    let _ = child.kill();
    let _ = child.wait();
    assert!(first.is_some(), "no first report");
    assert!(
        changed.is_some_and(|l| l.contains("k.ptx")),
        "no change seen"
    );
    assert!(second.is_some(), "no re-check after the save");
}
