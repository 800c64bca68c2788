//! `ptxeq corpus DIR`: every case under DIR, in parallel, against its
//! expected verdict — the batch regression run for CI.
//!
//! Each case goes through `ptxeq_corpus::check_case` (spec consistency,
//! then the checker) on a rayon worker. A progress bar shows on a
//! terminal; otherwise one plain line per finished case goes to stderr (CI
//! logs). The summary table goes to stdout, `--junit` and `--json` write
//! reports. Pending cases are counted apart and never fail the run; a case
//! whose checker reached no verdict to compare is "undecided", which does
//! not fail the run either (it is not a pass). Exit code: 1 when any case
//! failed, 3 when DIR holds no case, else 0.
//!
//! Disk-cache hits are counted per case: each case's databases use a
//! scoped handle of the run's cache (`ptxeq_db::with_thread_cache`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use ptxeq_corpus::{CaseDir, CaseReport, Outcome, Shard, check_case, discover};
use ptxeq_spec::Status;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::exit::Exit;
use crate::junit::{self, JunitCase, JunitStatus};

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct CorpusOptions {
    pub filter: Vec<String>,
    /// Run only this part of the cases (`--shard i/n`).
    pub shard: Option<Shard>,
    /// Print the selected cases instead of running them (`--list`).
    pub list: Option<ListFormat>,
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub jobs: Option<usize>,
}

/// How a case counts in the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// The expected verdict was reached.
    Pass,
    /// Another verdict, an inconsistent case, or a crash.
    Fail,
    /// Consistent, but no verdict to compare.
    Undecided,
    /// `[expect] status = "pending"`: reported, never failing.
    Pending,
}

impl Class {
    fn word(self) -> &'static str {
        match self {
            Class::Pass => "pass",
            Class::Fail => "FAIL",
            Class::Undecided => "undecided",
            Class::Pending => "pending",
        }
    }
}

/// How `--list` prints the cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// One case name per line.
    Text,
    /// A JSON document (schema `ptxeq.corpus-list/1`): each case with its
    /// directory, shard key and, under `--shard`, its part.
    Json,
}

/// One case's line of the summary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    pub name: String,
    pub class: Class,
    /// The expected verdict word (`[expect] verdict`), when the spec loads.
    pub expected: Option<String>,
    /// What the checker reached, or why there is nothing to compare.
    pub got: String,
    /// The outcome's label (`verdict as expected`, `verdict mismatch`, ...).
    pub outcome: String,
    /// Problems, mismatch details or a crash message.
    pub details: Vec<String>,
    pub time_ms: f64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Of the hits, those the remote layer (`--cache-url`) supplied.
    #[serde(default)]
    pub remote_hits: u64,
}

pub fn run(dir: &Path, opts: &CorpusOptions) -> Exit {
    let mut cases = match discover(dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read the corpus at {}: {e}", dir.display());
            return Exit::Invalid;
        }
    };
    if !opts.filter.is_empty() {
        cases.retain(|c| opts.filter.iter().any(|f| c.name.contains(f.as_str())));
    }
    let corpus_cases = cases.len();
    if let Some(shard) = opts.shard {
        cases.retain(|c| shard.contains(&c.name));
    }
    if let Some(format) = opts.list {
        print_list(&cases, opts.shard, format);
        return Exit::Ok;
    }
    if corpus_cases == 0 {
        eprintln!(
            "error: no case (a directory with check.toml) under {}{}",
            dir.display(),
            if opts.filter.is_empty() {
                ""
            } else {
                " matches the filter"
            }
        );
        return Exit::Invalid;
    }
    if let Some(shard) = opts.shard {
        eprintln!(
            "shard {shard}: {} of {corpus_cases} cases (assigned by a hash of the case name)",
            cases.len()
        );
    }
    let start = Instant::now();
    let results = match run_cases(&cases, opts.jobs) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Exit::Invalid;
        }
    };
    let wall = start.elapsed();
    let meta = RunMeta {
        shard: opts.shard,
        corpus_cases,
    };
    finish(
        &results,
        wall,
        &meta,
        opts.junit.as_deref(),
        opts.json.as_deref(),
    )
}

/// What a report says about the run beyond its cases: which part of how
/// many cases it covered (what `ptxeq corpus merge` checks).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunMeta {
    pub shard: Option<Shard>,
    /// Cases of the corpus after `--filter`, before `--shard`.
    pub corpus_cases: usize,
}

/// Prints the table, writes the reports, and picks the exit code (the
/// same for a whole run and for a merge of its shards).
pub fn finish(
    results: &[CaseResult],
    wall: Duration,
    meta: &RunMeta,
    junit_path: Option<&Path>,
    json_path: Option<&Path>,
) -> Exit {
    print_table(results, wall);
    let mut io_failed = false;
    if let Some(path) = junit_path {
        let name = match meta.shard {
            Some(s) => format!("ptxeq corpus (shard {s})"),
            None => "ptxeq corpus".to_string(),
        };
        let xml = junit::render(&name, &junit_cases(results), wall);
        io_failed |= write_report(path, &xml);
    }
    if let Some(path) = json_path {
        let json = json_report(results, wall, meta);
        io_failed |= write_report(
            path,
            &serde_json::to_string_pretty(&json).unwrap_or_default(),
        );
    }
    if results.iter().any(|r| r.class == Class::Fail) {
        Exit::Refuted
    } else if io_failed {
        Exit::Invalid
    } else {
        Exit::Ok
    }
}

/// Writes a report file; `true` when that failed (printed).
fn write_report(path: &Path, text: &str) -> bool {
    match std::fs::write(path, text) {
        Ok(()) => false,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            true
        }
    }
}

/// Runs every case on a rayon pool (`jobs` threads, default: all cores),
/// with progress on stderr. Results are in case order.
pub fn run_cases(cases: &[CaseDir], jobs: Option<usize>) -> Result<Vec<CaseResult>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let progress = Progress::new(cases.len());
    let cache = ptxeq_db::default_cache();
    let results = pool.install(|| {
        cases
            .par_iter()
            .map(|case| {
                let r = run_one(case, cache.as_deref());
                progress.done(&r);
                r
            })
            .collect()
    });
    progress.finish();
    Ok(results)
}

/// Checks one case (a panic is caught and reported as a failure of that
/// case, so one bad case cannot take the batch down).
fn run_one(case: &CaseDir, cache: Option<&ptxeq_cache::DiskCache>) -> CaseResult {
    let scoped = cache.map(|c| Arc::new(c.scoped()));
    let start = Instant::now();
    let run = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &scoped {
            Some(s) => ptxeq_db::with_thread_cache(s.clone(), || check_case(case)),
            None => check_case(case),
        }))
    };
    let report = run();
    let time = start.elapsed();
    let (hits, misses, remote_hits) = scoped
        .as_ref()
        .map(|s| {
            let st = s.stats();
            (st.hits, st.misses, st.remote.hits)
        })
        .unwrap_or((0, 0, 0));
    let mut r = match report {
        Ok(report) => classify(&report),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            CaseResult {
                name: case.name.clone(),
                class: Class::Fail,
                expected: None,
                got: "crash".into(),
                outcome: "the checker panicked (a ptxeq bug)".into(),
                details: vec![msg],
                time_ms: 0.0,
                cache_hits: 0,
                cache_misses: 0,
                remote_hits: 0,
            }
        }
    };
    r.time_ms = time.as_secs_f64() * 1e3;
    r.cache_hits = hits;
    r.cache_misses = misses;
    r.remote_hits = remote_hits;
    r
}

/// Maps a case report to its summary line.
pub fn classify(report: &CaseReport) -> CaseResult {
    let pending = report.status == Status::Pending;
    let expected = report
        .spec
        .as_ref()
        .and_then(|s| s.expect.as_ref())
        .map(|e| e.verdict.as_str().to_string());
    let outcome = report.outcome();
    let (class, got, details) = match &outcome {
        Outcome::Pass => (
            Class::Pass,
            expected.clone().unwrap_or_default(),
            Vec::new(),
        ),
        Outcome::Mismatch { expected, got } => (
            Class::Fail,
            got.as_str().to_string(),
            vec![format!("expected `{expected}`, got `{got}`")],
        ),
        Outcome::Problems(ps) => (
            Class::Fail,
            "inconsistent".to_string(),
            ps.iter().map(|p| p.to_string()).collect(),
        ),
        Outcome::Consistent => (Class::Undecided, "-".to_string(), Vec::new()),
        #[allow(unreachable_patterns)]
        other => (Class::Undecided, other.label().to_string(), Vec::new()),
    };
    // A pending case is reported but never fails, unless the case itself
    // is broken (as in the corpus test).
    let class = match (pending, &outcome) {
        (true, Outcome::Problems(_)) => Class::Fail,
        (true, _) => Class::Pending,
        (false, _) => class,
    };
    CaseResult {
        name: report.name.clone(),
        class,
        expected,
        got,
        outcome: outcome.label().to_string(),
        details,
        time_ms: 0.0,
        cache_hits: 0,
        cache_misses: 0,
        remote_hits: 0,
    }
}

/// Progress on stderr: a bar on a terminal, plain lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    finished: std::sync::atomic::AtomicUsize,
}

impl Progress {
    fn new(total: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
            ) {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            total,
            finished: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    fn done(&self, r: &CaseResult) {
        let n = self
            .finished
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        match &self.bar {
            Some(b) => {
                if r.class == Class::Fail {
                    b.println(format!("FAIL {}: {}", r.name, r.details.join("; ")));
                }
                b.set_message(r.name.clone());
                b.inc(1);
            }
            None => eprintln!(
                "[{n:>w$}/{t}] {:<9} {} ({:.0} ms)",
                r.class.word(),
                r.name,
                r.time_ms,
                w = self.total.to_string().len(),
                t = self.total
            ),
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

fn print_table(results: &[CaseResult], wall: Duration) {
    let w = results
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!(
        "{:<w$}  {:<14}  {:<14}  {:<9}  {:>10}  {:>10}",
        "case",
        "expected",
        "got",
        "result",
        "time",
        "cache hits"
    );
    for r in results {
        outln!(
            "{:<w$}  {:<14}  {:<14}  {:<9}  {:>7.0} ms  {:>10}",
            r.name,
            r.expected.as_deref().unwrap_or("-"),
            r.got,
            r.class.word(),
            r.time_ms,
            r.cache_hits
        );
        for d in &r.details {
            outln!("    {d}");
        }
    }
    let count = |c: Class| results.iter().filter(|r| r.class == c).count();
    let hits: u64 = results.iter().map(|r| r.cache_hits).sum();
    let misses: u64 = results.iter().map(|r| r.cache_misses).sum();
    let remote: u64 = results.iter().map(|r| r.remote_hits).sum();
    outln!();
    outln!(
        "{} cases: {} passed, {} failed, {} undecided, {} pending; disk cache {hits} hits ({remote} remote), {misses} misses; {:.1} s",
        results.len(),
        count(Class::Pass),
        count(Class::Fail),
        count(Class::Undecided),
        count(Class::Pending),
        wall.as_secs_f64()
    );
}

fn junit_cases(results: &[CaseResult]) -> Vec<JunitCase> {
    results
        .iter()
        .map(|r| JunitCase {
            name: r.name.clone(),
            time: Duration::from_secs_f64(r.time_ms / 1e3),
            status: match r.class {
                Class::Pass => JunitStatus::Passed,
                Class::Fail => JunitStatus::Failed {
                    message: r
                        .details
                        .first()
                        .cloned()
                        .unwrap_or_else(|| r.outcome.clone()),
                    details: r.details.join("\n"),
                },
                Class::Pending => JunitStatus::Skipped {
                    message: format!("pending (got {})", r.got),
                },
                Class::Undecided => JunitStatus::Skipped {
                    message: format!("undecided: {}", r.outcome),
                },
            },
            output: format!(
                "expected {}, got {}; disk cache {} hits, {} misses",
                r.expected.as_deref().unwrap_or("-"),
                r.got,
                r.cache_hits,
                r.cache_misses
            ),
        })
        .collect()
}

/// Prints the selected cases (`--list`).
fn print_list(cases: &[CaseDir], shard: Option<Shard>, format: ListFormat) {
    match format {
        ListFormat::Text => {
            for c in cases {
                outln!("{}", c.name);
            }
        }
        ListFormat::Json => {
            let list: Vec<serde_json::Value> = cases
                .iter()
                .map(|c| {
                    let key: String = ptxeq_corpus::shard_key(&c.name)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    serde_json::json!({
                        "name": c.name,
                        "dir": c.dir.display().to_string(),
                        "shard_key": key,
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "schema": "ptxeq.corpus-list/1",
                "shard": shard,
                "shard_rule": "part = u64::from_le_bytes(blake3(\"ptxeq-shard\\0\" + name)[..8]) % count",
                "cases": list,
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
}

fn json_report(results: &[CaseResult], wall: Duration, meta: &RunMeta) -> serde_json::Value {
    let count = |c: Class| results.iter().filter(|r| r.class == c).count();
    serde_json::json!({
        "schema": "ptxeq.corpus/1",
        "shard": meta.shard,
        "corpus_cases": meta.corpus_cases,
        "cases": results,
        "summary": {
            "cases": results.len(),
            "passed": count(Class::Pass),
            "failed": count(Class::Fail),
            "undecided": count(Class::Undecided),
            "pending": count(Class::Pending),
            "cache_hits": results.iter().map(|r| r.cache_hits).sum::<u64>(),
            "cache_misses": results.iter().map(|r| r.cache_misses).sum::<u64>(),
            "remote_hits": results.iter().map(|r| r.remote_hits).sum::<u64>(),
            "time_ms": wall.as_secs_f64() * 1e3,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
    }

    /// A single-kernel race case: the runner reaches the expected verdict
    /// and says so in every report form.
    #[test]
    fn a_known_race_case_passes_and_reports() {
        let cases: Vec<CaseDir> = discover(&corpus())
            .unwrap()
            .into_iter()
            .filter(|c| c.name == "races/missing-barrier-reverse")
            .collect();
        assert_eq!(cases.len(), 1);
        let results = run_cases(&cases, Some(1)).unwrap();
        let r = &results[0];
        assert_eq!(r.class, Class::Pass, "{r:?}");
        assert_eq!(r.expected.as_deref(), Some("race"));
        assert_eq!(r.got, "race");
        let xml = junit::render("t", &junit_cases(&results), Duration::ZERO);
        assert!(xml.contains("name=\"missing-barrier-reverse\""), "{xml}");
        assert!(!xml.contains("<failure"), "{xml}");
        let json = json_report(&results, Duration::ZERO, &RunMeta::default());
        assert_eq!(json["summary"]["passed"], 1);
        assert_eq!(json["cases"][0]["class"], "pass");
    }

    /// A case whose PTX is missing is a failure, not a crash.
    #[test]
    fn a_broken_case_fails() {
        let dir = tempfile::tempdir().unwrap();
        let case = dir.path().join("fam/broken");
        std::fs::create_dir_all(&case).unwrap();
        std::fs::write(
            case.join("check.toml"),
            "note = \"x\"\n[launch]\nblock = [32, 1, 1]\n[kernel]\nptx = \"missing.ptx\"\nparams = []\n[expect]\nverdict = \"race\"\n",
        )
        .unwrap();
        let cases = discover(dir.path()).unwrap();
        let results = run_cases(&cases, Some(1)).unwrap();
        assert_eq!(results[0].class, Class::Fail, "{:?}", results[0]);
        assert!(!results[0].details.is_empty());
    }
}
