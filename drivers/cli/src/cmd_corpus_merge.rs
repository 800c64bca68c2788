//! `ptxeq corpus merge REPORT...`: the shard reports of one corpus run
//! (`ptxeq corpus DIR --shard i/n --json FILE`) combined into the summary,
//! reports and exit code that the unsharded run would have given.
//!
//! The merge refuses (exit 3, invalid input) whatever would make the
//! combined summary a lie: a report that is not `ptxeq.corpus/1`, shards of
//! different counts or corpus sizes, a shard missing or given twice, a
//! case in two reports, or case totals that do not add up to the corpus.
//! A failed case in any shard makes the merge exit 1, as the whole run
//! would.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ptxeq_corpus::Shard;
use serde::Deserialize;

use crate::cmd_corpus::{CaseResult, RunMeta, finish};
use crate::exit::Exit;

/// One shard report as read back.
#[derive(Deserialize)]
struct Report {
    schema: String,
    shard: Option<Shard>,
    corpus_cases: Option<usize>,
    cases: Vec<CaseResult>,
    summary: Summary,
}

#[derive(Deserialize)]
struct Summary {
    time_ms: f64,
}

pub fn run(reports: &[PathBuf], junit: Option<&Path>, json: Option<&Path>) -> Exit {
    match merge(reports) {
        Ok((results, wall, meta, sum)) => {
            eprintln!(
                "merged {} report(s): {} cases; slowest shard {:.1} s, shards together {:.1} s",
                reports.len(),
                results.len(),
                wall.as_secs_f64(),
                sum.as_secs_f64()
            );
            finish(&results, wall, &meta, junit, json)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Exit::Invalid
        }
    }
}

/// The merged cases (by name), the slowest shard's wall time, the merged
/// run's metadata and the shards' summed time.
fn merge(paths: &[PathBuf]) -> Result<(Vec<CaseResult>, Duration, RunMeta, Duration), String> {
    if paths.is_empty() {
        return Err("no report to merge".into());
    }
    let mut count: Option<u64> = None;
    let mut corpus: Option<usize> = None;
    let mut seen: BTreeMap<u64, PathBuf> = BTreeMap::new();
    let mut cases: BTreeMap<String, (CaseResult, PathBuf)> = BTreeMap::new();
    let mut wall = Duration::ZERO;
    let mut sum = Duration::ZERO;
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let r: Report = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a `ptxeq corpus --json` report: {e}",
                path.display()
            )
        })?;
        if r.schema != "ptxeq.corpus/1" {
            return Err(format!(
                "{}: schema `{}`, expected `ptxeq.corpus/1`",
                path.display(),
                r.schema
            ));
        }
        let shard = r.shard.unwrap_or(Shard { index: 0, count: 1 });
        let n_corpus = r.corpus_cases.unwrap_or(r.cases.len());
        match count {
            None => count = Some(shard.count),
            Some(c) if c != shard.count => {
                return Err(format!(
                    "{}: shard {shard}, but an earlier report is one of {c} shards",
                    path.display()
                ));
            }
            Some(_) => {}
        }
        match corpus {
            None => corpus = Some(n_corpus),
            Some(c) if c != n_corpus => {
                return Err(format!(
                    "{}: a run over {n_corpus} corpus cases, an earlier report over {c} \
                     (different corpus or --filter)",
                    path.display()
                ));
            }
            Some(_) => {}
        }
        if let Some(other) = seen.insert(shard.index, path.clone()) {
            return Err(format!(
                "shard {shard} given twice: {} and {}",
                other.display(),
                path.display()
            ));
        }
        for c in r.cases {
            if !shard.contains(&c.name) {
                return Err(format!(
                    "{}: case {} does not belong to shard {shard}",
                    path.display(),
                    c.name
                ));
            }
            if let Some((_, other)) = cases.get(&c.name) {
                return Err(format!(
                    "case {} is in two reports: {} and {}",
                    c.name,
                    other.display(),
                    path.display()
                ));
            }
            cases.insert(c.name.clone(), (c, path.clone()));
        }
        let t = Duration::from_secs_f64(r.summary.time_ms.max(0.0) / 1e3);
        wall = wall.max(t);
        sum += t;
    }
    let count = count.unwrap_or(1);
    let missing: Vec<String> = (0..count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing shard report(s): {}", missing.join(", ")));
    }
    let corpus = corpus.unwrap_or(0);
    if cases.len() != corpus {
        return Err(format!(
            "the reports hold {} cases, the corpus they ran over {corpus}",
            cases.len()
        ));
    }
    let results: Vec<CaseResult> = cases.into_values().map(|(c, _)| c).collect();
    let meta = RunMeta {
        shard: None,
        corpus_cases: corpus,
    };
    Ok((results, wall, meta, sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd_corpus::Class;

    fn case(name: &str, class: Class) -> serde_json::Value {
        serde_json::json!({
            "name": name, "class": class, "expected": "race", "got": "race",
            "outcome": "verdict as expected", "details": [], "time_ms": 1.0,
            "cache_hits": 0, "cache_misses": 0,
        })
    }

    /// Writes the shard reports of `names` split `n` ways; returns paths.
    fn shards(dir: &Path, names: &[&str], n: u64, fail: &str) -> Vec<PathBuf> {
        (0..n)
            .map(|i| {
                let shard = Shard { index: i, count: n };
                let cases: Vec<_> = names
                    .iter()
                    .filter(|c| shard.contains(c))
                    .map(|c| case(c, if *c == fail { Class::Fail } else { Class::Pass }))
                    .collect();
                let doc = serde_json::json!({
                    "schema": "ptxeq.corpus/1", "shard": shard, "corpus_cases": names.len(),
                    "cases": cases, "summary": { "time_ms": 10.0 * (i + 1) as f64 },
                });
                let p = dir.join(format!("s{i}.json"));
                std::fs::write(&p, doc.to_string()).unwrap();
                p
            })
            .collect()
    }

    const NAMES: [&str; 9] = [
        "a/1", "a/2", "a/3", "b/1", "b/2", "c/x", "c/y", "d/z", "e/w",
    ];

    #[test]
    fn shards_merge_back_into_the_whole_run() {
        let dir = tempfile::tempdir().unwrap();
        let paths = shards(dir.path(), &NAMES, 4, "");
        let (results, wall, meta, sum) = merge(&paths).unwrap();
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, NAMES);
        assert_eq!(meta.corpus_cases, 9);
        assert_eq!(wall, Duration::from_millis(40));
        assert_eq!(sum, Duration::from_millis(100));
        assert_eq!(run(&paths, None, None), Exit::Ok);
        let failing = shards(dir.path(), &NAMES, 4, "c/x");
        assert_eq!(run(&failing, None, None), Exit::Refuted);
    }

    #[test]
    fn incomplete_or_inconsistent_sets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let paths = shards(dir.path(), &NAMES, 3, "");
        let e = merge(&paths[..2]).err().unwrap();
        assert!(e.contains("missing shard report(s): 2/3"), "{e}");
        let twice = vec![paths[0].clone(), paths[0].clone(), paths[1].clone()];
        assert!(merge(&twice).err().unwrap().contains("given twice"));
        let d2 = dir.path().join("four");
        std::fs::create_dir_all(&d2).unwrap();
        let other = shards(&d2, &NAMES, 4, "");
        let mixed = vec![paths[0].clone(), other[1].clone()];
        assert!(merge(&mixed).err().unwrap().contains("one of 3 shards"));
        let d3 = dir.path().join("fewer");
        std::fs::create_dir_all(&d3).unwrap();
        let fewer = shards(&d3, &NAMES[..5], 3, "");
        let mixed = vec![paths[0].clone(), fewer[1].clone(), paths[2].clone()];
        assert!(merge(&mixed).err().unwrap().contains("corpus cases"));
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{}").unwrap();
        assert!(
            merge(&[junk])
                .err()
                .unwrap()
                .contains("not a `ptxeq corpus --json` report")
        );
        assert_eq!(run(&[], None, None), Exit::Invalid);
    }
}
