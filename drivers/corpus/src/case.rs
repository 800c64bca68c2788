//! Checking one case: the spec loads and validates, its PTX files parse,
//! and the spec agrees with what the PTX declares.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use ptxeq_spec::{CheckSpec, SpecError, Status};

use crate::checks::{check_corpus_fields, check_params, check_tensors, find_entry, resolve_block};
use crate::discover::CaseDir;
use crate::ptx::{FunctionInfo, PtxSummary, summarize};
use crate::report::{CaseReport, Problem};

/// How many syntax errors of one file are listed before "and N more".
const MAX_SYNTAX_ERRORS: usize = 3;

/// Runs every consistency check on `case`. Never panics; everything wrong
/// is a [`Problem`] in the report.
pub fn check_case(case: &CaseDir) -> CaseReport {
    let spec_path = tidy(&case.spec_path());
    let mut report = CaseReport {
        name: case.name.clone(),
        spec: None,
        status: Status::Active,
        block: None,
        problems: Vec::new(),
        checked: None,
    };
    let spec = match CheckSpec::load(&spec_path) {
        Ok(spec) => spec,
        Err(e) => {
            report.problems.push(spec_problem(&e));
            return report;
        }
    };
    report.status = spec.expect.as_ref().map_or(Status::Active, |e| e.status);
    let in_spec = |m: String| Problem::in_file(&spec_path, m);
    // A problem about one key points at the line that key was written on
    // (as `ptxeq check` does); keys the spec does not record stay
    // file-level.
    let at_key = |key: &str, m: String| {
        let p = Problem::in_file(&spec_path, m);
        match spec.locations.keys.get(key) {
            Some(lc) => p.at(
                u32::try_from(lc.line).unwrap_or(u32::MAX),
                u32::try_from(lc.col).unwrap_or(u32::MAX),
            ),
            None => p,
        }
    };
    report
        .problems
        .extend(check_corpus_fields(&spec).into_iter().map(in_spec));

    let mut files: BTreeMap<PathBuf, Option<PtxSummary>> = BTreeMap::new();
    let mut found: Vec<(&str, FunctionInfo)> = Vec::new();
    let kernels = spec.kernels.iter();
    for &(table, k) in &kernels {
        let path = tidy(&k.ptx);
        let summary = files
            .entry(path.clone())
            .or_insert_with(|| load_ptx(&path, &mut report.problems));
        let Some(summary) = summary else { continue };
        match find_entry(table, k, summary) {
            Ok(f) => {
                report.problems.extend(
                    check_params(table, k, f, &spec)
                        .into_iter()
                        .map(|(key, m)| at_key(&key, m)),
                );
                found.push((table, f.clone()));
            }
            // At the `entry` key, or at the kernel's table when it names
            // no entry.
            Err(m) => {
                let key = match k.entry {
                    Some(_) => format!("{table}.entry"),
                    None => table.to_string(),
                };
                report.problems.push(at_key(&key, m));
            }
        }
    }
    // The block needs every entry; a missing one was reported above. Each
    // kernel has its own launch (`[reference.launch]` over `[launch]`);
    // kernels sharing a block are resolved together, as one launch.
    if found.len() == kernels.len() {
        type Group<'a> = (Option<[u32; 3]>, Vec<(&'a str, &'a FunctionInfo)>);
        let mut groups: Vec<Group<'_>> = Vec::new();
        for ((table, f), (_, k)) in found.iter().zip(&kernels) {
            let block = k.launch.block;
            match groups.iter_mut().find(|g| g.0 == block) {
                Some(g) => g.1.push((*table, f)),
                None => groups.push((block, vec![(*table, f)])),
            }
        }
        for (i, (spec_block, refs)) in groups.iter().enumerate() {
            let (block, problems) = resolve_block(*spec_block, refs);
            if i == 0 {
                report.block = block;
            }
            report.problems.extend(
                problems
                    .into_iter()
                    .map(|m| Problem::in_file(&spec_path, m)),
            );
        }
    }
    report
        .problems
        .extend(check_tensors(&spec).into_iter().map(|(key, m)| match key {
            Some(key) => at_key(&key, m),
            None => in_spec(m),
        }));
    if report.problems.is_empty() {
        match crate::checker::run_checker(&spec_path, &spec) {
            Ok(c) => report.checked = Some(c),
            Err(m) => report.problems.push(Problem::in_file(&spec_path, m)),
        }
    }
    report.spec = Some(spec);
    report
}

fn spec_problem(e: &SpecError) -> Problem {
    let mut p = Problem::new(e.message.clone());
    p.file = e.path.clone();
    p.location = e.location.map(|l| {
        (
            u32::try_from(l.line).unwrap_or(u32::MAX),
            u32::try_from(l.col).unwrap_or(u32::MAX),
        )
    });
    p
}

/// Reads and summarises a PTX file, recording read and syntax errors.
fn load_ptx(path: &Path, problems: &mut Vec<Problem>) -> Option<PtxSummary> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            problems.push(Problem::in_file(
                path,
                format!("cannot read the PTX file: {e}"),
            ));
            return None;
        }
    };
    let summary = summarize(&text);
    for e in summary.errors.iter().take(MAX_SYNTAX_ERRORS) {
        problems
            .push(Problem::in_file(path, format!("syntax error: {}", e.message)).at(e.line, e.col));
    }
    if summary.errors.len() > MAX_SYNTAX_ERRORS {
        problems.push(Problem::in_file(
            path,
            format!(
                "… and {} more syntax errors",
                summary.errors.len() - MAX_SYNTAX_ERRORS
            ),
        ));
    }
    Some(summary)
}

/// Removes `.` and `name/..` pairs lexically, so messages show
/// `corpus/attention/common/ref.ptx` rather than `…/case/../common/ref.ptx`
/// (and two spellings of one file share a parse).
fn tidy(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
