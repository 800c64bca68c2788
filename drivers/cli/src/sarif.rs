//! `--format sarif`: race-check findings as SARIF 2.1.0, the format code
//! scanning services (GitHub, GitLab, IDEs) read.
//!
//! One result per finding. `ruleId` is the verdict word (`race`,
//! `deadlock`, `divergence`, `out-of-bounds`, `uninitialised`,
//! `unsupported`); `locations` holds the PTX line of the first access (or
//! waiting / offending instruction), `relatedLocations` the other access(es)
//! and, where the PTX has `.loc` line info, the CUDA/Python line of each.
//! A bug is level `error`; "could not decide" is a `warning`. A failing
//! output element is located at the candidate's store of it (its
//! CUDA/Python line when the PTX has `.loc` info, else its PTX line), with
//! the reference's store among the related locations, followed by the
//! instructions that built the sub-terms where the two formulas first
//! differ.

use clap::ValueEnum;
use ptxeq_check::Verdict;
use ptxeq_db::{CheckReport, Database, KernelRaceReport, Slot};
use ptxeq_exec::{Finding, FindingKind, format_ranges};
use ptxeq_verdicts::Failure;
use serde_json::{Value, json};

use crate::positions::{Position, Resolver};

/// Output formats of `ptxeq race` and `ptxeq check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Readable text: the verdict line first, then the details.
    Human,
    /// JSON with a versioned `"schema"` and the corpus verdict words.
    Json,
    /// SARIF 2.1.0 (one result per finding, for code-scanning tools).
    Sarif,
}

/// The rules ptxeq reports, with what they mean.
const RULES: &[(Verdict, &str)] = &[
    (
        Verdict::Race,
        "Two accesses to the same memory, at least one a write, not ordered by any synchronisation and not both strong (atomic) accesses of a common scope",
    ),
    (
        Verdict::OrderDependent,
        "Two unordered atomics whose outcome depends on their order: a returned value that is used, or updates that do not commute",
    ),
    (
        Verdict::Deadlock,
        "Every live thread is blocked and no barrier can complete",
    ),
    (
        Verdict::Divergence,
        "A barrier completes with threads that disagree on its count or generation, or waits at different barriers",
    ),
    (
        Verdict::OutOfBounds,
        "An access outside every memory region",
    ),
    (
        Verdict::Uninitialised,
        "A read of shared or local memory never written",
    ),
    (
        Verdict::NotEquivalent,
        "An output element differs between the reference and the candidate for a concrete input (the counterexample)",
    ),
    (
        Verdict::Unsupported,
        "ptxeq could not decide: an unmodelled instruction, a data-dependent branch or address, or a resource limit",
    ),
];

/// The verdict word a finding counts as ([`FindingKind::verdict`], as
/// `ptxeq race` ranks them).
fn rule_of(kind: FindingKind) -> Verdict {
    kind.verdict()
}

/// The SARIF log of `reports`.
pub fn render(db: &Database, reports: &[KernelRaceReport]) -> Value {
    log(race_results(db, reports))
}

/// The SARIF log of an equivalence check: the kernels' race-class findings,
/// then one result per failing output element (a refutation is an error
/// located at the candidate's PTX file, with the counterexample in the
/// message; an unknown element is a warning).
///
/// The first `show` failures of each tensor of a pair check also list,
/// among the related locations, the instructions that built the sub-terms
/// where the two formulas first differ (the human report's "built in the
/// … by" lines), at their CUDA/Python line when the PTX has line info and
/// at their PTX line.
pub fn render_check(
    db: &Database,
    loaded: &crate::spec_args::LoadedSpec,
    report: &CheckReport,
    names: &crate::cmd_check::InputNames,
    show: usize,
    origins_max_steps: u64,
) -> Value {
    let mut origins = crate::formula_diff::Origins::new(origins_max_steps);
    let mut results = race_results(db, &report.kernels);
    let stores = crate::stores::Stores::new(db, &report.kernels);
    let cand = report
        .kernels
        .iter()
        .find(|k| k.slot == Slot::Candidate)
        .map(|k| {
            (
                k.file.path(db).to_string_lossy().into_owned(),
                k.entry.clone(),
            )
        })
        .unwrap_or_default();
    for t in report.verdicts.iter().flat_map(|v| &v.tensors) {
        for (i, f) in t.failures.iter().enumerate() {
            let coords: Vec<String> = f.coords.iter().map(|c| c.to_string()).collect();
            let (rule, detail) = match &f.failure {
                Failure::Refuted { counterexample: cx } => (
                    Verdict::NotEquivalent,
                    format!(
                        "counterexample {} gives reference = {}, candidate = {}",
                        crate::cmd_check::witness_shown(cx, names),
                        cx.reference,
                        cx.candidate
                    ),
                ),
                Failure::WrittenByOne { writer } => (
                    Verdict::NotEquivalent,
                    format!("written only by the {writer}"),
                ),
                Failure::BitsDiffer {
                    reference,
                    candidate,
                } => (
                    Verdict::NotEquivalent,
                    format!("bits {reference:#x} vs {candidate:#x} for every input"),
                ),
                Failure::Unknown { reason, .. } => (Verdict::Unsupported, reason.clone()),
                Failure::Unsupported { reason } => (Verdict::Unsupported, reason.clone()),
            };
            let text = format!(
                "{}[{}]: {detail}; reference = {}; candidate = {}",
                t.name,
                coords.join(","),
                f.reference,
                f.candidate
            );
            let level = if rule == Verdict::Unsupported {
                "warning"
            } else {
                "error"
            };
            // Located at the candidate's store of the element: its
            // CUDA/Python line when the PTX has line info (what a code
            // scanner shows beside the user's code), its PTX line
            // otherwise; the other lines are related locations.
            let mut sites: Vec<Value> = Vec::new();
            for (slot, site) in [
                (Slot::Candidate, f.candidate_store),
                (Slot::Reference, f.reference_store),
            ] {
                let Some(st) = stores.name(slot, site) else {
                    continue;
                };
                let what = format!(
                    "the {} stores {}[{}]: `{}`",
                    slot.word(),
                    t.name,
                    coords.join(","),
                    st.pos.text
                );
                if let (Some(file), Some(line)) = (&st.pos.source_file, st.pos.source_line) {
                    let found = crate::source_lines::locate(std::path::Path::new(&st.ptx), file)
                        .map(|p| p.to_string_lossy().into_owned());
                    sites.push(location(
                        found.as_deref().unwrap_or(file),
                        Some(line),
                        &st.pos.function,
                        &what,
                    ));
                }
                sites.push(location(&st.ptx, st.pos.ptx_line, &st.pos.function, &what));
            }
            if sites.is_empty() {
                sites.push(location(&cand.0, None, &cand.1, "the candidate kernel"));
            }
            let diff = (i < show
                && matches!(f.failure, Failure::Refuted { .. } | Failure::Unknown { .. }))
            .then(|| {
                crate::formula_diff::describe(
                    db,
                    loaded.spec,
                    &loaded.kernels,
                    names,
                    t.tensor,
                    f.index,
                    DIFF_WIDTH,
                    &mut origins,
                )
            })
            .flatten();
            for b in diff.iter().flat_map(|d| &d.built) {
                let what = format!(
                    "where the formulas of {}[{}] first differ, the {} builds {}: `{}`",
                    t.name,
                    coords.join(","),
                    b.slot.word(),
                    b.term.as_deref().unwrap_or("its sub-term"),
                    b.pos.text
                );
                if let (Some(file), Some(line)) = (&b.pos.source_file, b.pos.source_line) {
                    let found = crate::source_lines::locate(std::path::Path::new(&b.ptx), file)
                        .map(|p| p.to_string_lossy().into_owned());
                    sites.push(location(
                        found.as_deref().unwrap_or(file),
                        Some(line),
                        &b.pos.function,
                        &what,
                    ));
                }
                sites.push(location(&b.ptx, b.pos.ptx_line, &b.pos.function, &what));
            }
            let first = sites.remove(0);
            let mut v = json!({
                "ruleId": rule,
                "level": level,
                "message": { "text": text },
                "locations": [first],
            });
            if !sites.is_empty() {
                v["relatedLocations"] = Value::Array(
                    sites
                        .into_iter()
                        .zip(1..)
                        .map(|(l, id)| with_id(l, id))
                        .collect(),
                );
            }
            results.push(v);
        }
    }
    log(results)
}

/// Characters of a differing sub-term named in a message.
const DIFF_WIDTH: usize = 160;

/// The results of the race-class findings of `reports`.
fn race_results(db: &Database, reports: &[KernelRaceReport]) -> Vec<Value> {
    let mut results = Vec::new();
    for r in reports {
        let res = Resolver::new(db, r.file, r.input.as_deref());
        let ptx = r.file.path(db).to_string_lossy().into_owned();
        if let Some(s) = &r.structured {
            for p in &s.problems {
                let pos = res.resolve_named(&p.function, p.instr);
                results.push(result(
                    Verdict::Unsupported,
                    &format!("{} `{}`: {}", r.slot.word(), r.entry, p.message),
                    &ptx,
                    &[(pos, "the instruction".to_string())],
                ));
            }
        }
        let findings = r
            .ctas
            .iter()
            .flat_map(|(c, fs, _)| fs.iter().map(move |f| (Some(*c), f)))
            .chain(r.cross_cta.iter().map(|f| (None, f)));
        for (cta, f) in findings {
            let at = cta
                .filter(|c| *c != [0, 0, 0])
                .map(|c| format!(" [CTA ({},{},{})]", c[0], c[1], c[2]))
                .unwrap_or_default();
            let mut text = format!("{} `{}`{at}: {}", r.slot.word(), r.entry, f.message);
            if let Some(loc) = &f.location {
                text.push_str(&format!(" (memory: {loc})"));
            }
            results.push(result(rule_of(f.kind), &text, &ptx, &sites(&res, f)));
        }
    }
    results
}

/// A SARIF 2.1.0 log holding `results`.
fn log(results: Vec<Value>) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "ptxeq",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://example.invalid/ptxeq",
                    "rules": RULES.iter().map(|(id, text)| json!({
                        "id": id,
                        "shortDescription": { "text": text },
                    })).collect::<Vec<_>>(),
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// The instructions a finding names, each with what happened there.
fn sites(res: &Resolver<'_>, f: &Finding) -> Vec<(Position, String)> {
    let mut out: Vec<(Position, String)> = f
        .accesses
        .iter()
        .map(|a| {
            let cta = a
                .cta
                .map(|c| format!(" of CTA ({},{},{})", c[0], c[1], c[2]))
                .unwrap_or_default();
            (
                res.resolve(a.instr),
                format!("{} by {}{cta}", a.kind.word(), a.thread),
            )
        })
        .collect();
    if out.is_empty()
        && let Some(i) = f.instr
    {
        let who = f.thread.map(|t| format!("by {t}")).unwrap_or_default();
        out.push((res.resolve(i), who));
    }
    for w in &f.waiting {
        out.push((
            res.resolve(w.instr),
            format!(
                "threads {} waiting on {} ({} of {} arrived)",
                format_ranges(&w.threads),
                w.what,
                w.arrived,
                w.expected
            ),
        ));
    }
    out
}

fn result(rule: Verdict, text: &str, ptx: &str, sites: &[(Position, String)]) -> Value {
    let level = if rule == Verdict::Unsupported {
        "warning"
    } else {
        "error"
    };
    let mut locations = Vec::new();
    let mut related = Vec::new();
    let mut id = 0;
    for (i, (pos, what)) in sites.iter().enumerate() {
        let msg = if what.is_empty() {
            format!("`{}`", pos.text)
        } else {
            format!("{what}: `{}`", pos.text)
        };
        let ptx_loc = location(ptx, pos.ptx_line, &pos.function, &msg);
        if i == 0 {
            locations.push(ptx_loc);
        } else {
            id += 1;
            related.push(with_id(ptx_loc, id));
        }
        if let (Some(file), Some(line)) = (&pos.source_file, pos.source_line) {
            id += 1;
            // nvcc's `.file` path is relative to where it ran (beside the
            // PTX) or absolute: the file found on disk, else as written.
            let found = crate::source_lines::locate(std::path::Path::new(ptx), file)
                .map(|p| p.to_string_lossy().into_owned());
            let src = location(
                found.as_deref().unwrap_or(file),
                Some(line),
                &pos.function,
                &format!("source of {msg}"),
            );
            related.push(with_id(src, id));
        }
    }
    let mut v = json!({
        "ruleId": rule,
        "level": level,
        "message": { "text": text },
        "locations": locations,
    });
    if !related.is_empty() {
        v["relatedLocations"] = Value::Array(related);
    }
    v
}

/// A SARIF `artifactLocation` for a file path: relative to the checkout
/// (`uriBaseId` `%SRCROOT%`, which code-scanning tools set to the
/// repository root) when the path is relative or lies under the current
/// directory, else an absolute `file://` URI.
fn artifact(path: &str) -> Value {
    let p = std::path::Path::new(path);
    let relative = if p.is_absolute() {
        std::env::current_dir()
            .ok()
            .and_then(|cwd| p.strip_prefix(cwd).ok().map(|r| r.to_path_buf()))
    } else {
        Some(lexically_normal(p))
    };
    match relative {
        Some(r) => json!({
            "uri": uri(&r.to_string_lossy()),
            "uriBaseId": "%SRCROOT%",
        }),
        None => json!({ "uri": format!("file://{}", uri(path)) }),
    }
}

/// `a/b/../c` → `a/c` without touching the file system (a `.file` path
/// nvcc wrote relative to the PTX's directory: `case/../other/k.cuh`).
/// A leading `..` stays.
fn lexically_normal(p: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.iter().collect()
}

fn location(path: &str, line: Option<u32>, function: &str, message: &str) -> Value {
    let mut phys = json!({ "artifactLocation": artifact(path) });
    if let Some(l) = line.filter(|l| *l >= 1) {
        phys["region"] = json!({ "startLine": l });
    }
    let mut loc = json!({
        "physicalLocation": phys,
        "message": { "text": message },
    });
    if !function.is_empty() {
        loc["logicalLocations"] = json!([{ "name": function, "kind": "function" }]);
    }
    loc
}

fn with_id(mut loc: Value, id: u32) -> Value {
    loc["id"] = json!(id);
    loc
}

/// A file path as a SARIF artifact URI: forward slashes, `%`-escaped
/// spaces and percent signs (relative paths stay relative).
fn uri(path: &str) -> String {
    path.replace('\\', "/")
        .replace('%', "%25")
        .replace(' ', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec_args::{self, SpecFlagArgs};
    use std::path::PathBuf;

    fn sarif_of(case: &str) -> Value {
        let db = Database::default();
        let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus")
            .join(case)
            .join("check.toml");
        let loaded = spec_args::load_checked(&db, &spec, &SpecFlagArgs::default()).unwrap();
        let reports = ptxeq_db::race_check(&db, loaded.spec, &loaded.kernels);
        render(&db, &reports)
    }

    #[test]
    fn relative_uris_are_lexically_normal() {
        let n = |p: &str| lexically_normal(std::path::Path::new(p));
        assert_eq!(n("a/b/../c/k.cuh"), PathBuf::from("a/c/k.cuh"));
        assert_eq!(n("./a/./k.cu"), PathBuf::from("a/k.cu"));
        assert_eq!(n("../x/k.cu"), PathBuf::from("../x/k.cu"));
        assert_eq!(n("a/../../k.cu"), PathBuf::from("../k.cu"));
    }

    /// The fields SARIF 2.1.0 requires (and code-scanning services read).
    fn assert_valid(v: &Value) {
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "ptxeq");
        let rules: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        for r in run["results"].as_array().unwrap() {
            assert!(rules.contains(&r["ruleId"].as_str().unwrap()), "{r}");
            assert!(["error", "warning"].contains(&r["level"].as_str().unwrap()));
            assert!(!r["message"]["text"].as_str().unwrap().is_empty());
            let locs = r["locations"].as_array().unwrap();
            assert_eq!(locs.len(), 1, "{r}");
            for l in locs
                .iter()
                .chain(r["relatedLocations"].as_array().into_iter().flatten())
            {
                let uri = l["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap();
                assert!(!uri.is_empty() && !uri.contains('\\'), "{l}");
                if let Some(line) = l["physicalLocation"]["region"]["startLine"].as_u64() {
                    assert!(line >= 1);
                }
            }
            let ids: Vec<u64> = r["relatedLocations"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| l["id"].as_u64().unwrap())
                .collect();
            let mut dedup = ids.clone();
            dedup.dedup();
            assert_eq!(ids, dedup, "related location ids are unique");
        }
    }

    #[test]
    fn a_race_has_both_accesses() {
        let v = sarif_of("races/missing-barrier-reverse");
        assert_valid(&v);
        let results = v["runs"][0]["results"].as_array().unwrap();
        let race = results
            .iter()
            .find(|r| r["ruleId"] == "race")
            .expect("a race result");
        assert_eq!(race["level"], "error");
        let first = &race["locations"][0]["physicalLocation"];
        assert!(
            first["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .ends_with(".ptx")
        );
        assert!(first["region"]["startLine"].as_u64().unwrap() > 1);
        // The second access is a related PTX location.
        let related = race["relatedLocations"].as_array().unwrap();
        assert!(
            related
                .iter()
                .any(|l| l["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
                    .ends_with(".ptx")),
            "{race}"
        );
    }

    #[test]
    fn a_race_free_kernel_has_no_results() {
        let v = sarif_of("races/missing-barrier-reverse-fixed");
        assert_valid(&v);
        assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 0);
    }

    #[test]
    fn uris() {
        assert_eq!(uri(r"a\b c%.ptx"), "a/b%20c%25.ptx");
        assert_eq!(
            artifact("corpus/a/./k.ptx"),
            json!({ "uri": "corpus/a/k.ptx", "uriBaseId": "%SRCROOT%" })
        );
        let here = std::env::current_dir().unwrap().join("x/k.cu");
        assert_eq!(
            artifact(&here.to_string_lossy()),
            json!({ "uri": "x/k.cu", "uriBaseId": "%SRCROOT%" })
        );
        assert_eq!(
            artifact("/nowhere-else/k.cu")["uri"],
            "file:///nowhere-else/k.cu"
        );
    }
}
