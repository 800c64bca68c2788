//! Verdicts do not depend on how a kernel is written (issue 13, item 9
//! and the harness's "reverse direction"): for every active pair case of
//! the math and Triton families (math-library idioms and constant
//! recovery live there), the candidate is rewritten in three
//! equivalence-preserving ways (`ptxeq_corpus::rewrite`: commutative
//! operands swapped, registers renumbered, independent neighbours
//! reordered) and must reach the case's expected verdict again. One test
//! per case and rewrite, named `rewrite/<kind>/<family>/<case>`; a rewrite
//! that changes nothing in a case is skipped (ignored), not passed.
//!
//! `PTXEQ_REWRITE_FAMILIES` (comma-separated) replaces the default
//! families, e.g. `PTXEQ_REWRITE_FAMILIES=softmax,reduction`;
//! `PTXEQ_REWRITE_DUMP=DIR` writes each rewritten candidate there (as
//! `<kind>--<family>--<case>.ptx`) to replay a failure with `ptxeq check`.

use std::path::PathBuf;

use libtest_mimic::{Arguments, Failed, Trial};
use ptxeq_corpus::{CaseDir, discover, rewrite};
use ptxeq_db::{CheckVerdict, Database, Slot, SpecInput};
use ptxeq_spec::{CheckSpec, Kernels, Status, Verdict};

const DEFAULT_FAMILIES: &[&str] = &["math", "triton"];

type Rewrite = fn(&str) -> (String, usize);

const REWRITES: &[(&str, Rewrite)] = &[
    ("swap-commutative", rewrite::swap_commutative),
    ("permute-registers", rewrite::permute_registers),
    ("reorder-independent", rewrite::reorder_independent),
];

fn corpus_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    root.canonicalize().unwrap_or(root)
}

fn families() -> Vec<String> {
    match std::env::var("PTXEQ_REWRITE_FAMILIES") {
        Ok(v) => v.split(',').map(|s| s.trim().to_owned()).collect(),
        Err(_) => DEFAULT_FAMILIES.iter().map(|s| s.to_string()).collect(),
    }
}

/// The verdict word of a check, in the corpus vocabulary.
fn verdict_of(v: &CheckVerdict) -> Result<Verdict, String> {
    match v {
        CheckVerdict::InvalidInput(e) => Err(e.clone()),
        v => Ok(v.verdict()),
    }
}

/// Checks `spec` with the candidate's PTX text replaced by `candidate`.
fn check_with(
    spec_path: &std::path::Path,
    spec: &CheckSpec,
    candidate: String,
) -> Result<Verdict, String> {
    let Kernels::Pair {
        reference,
        candidate: cref,
    } = &spec.kernels
    else {
        return Err("not a pair".into());
    };
    let db = Database::default();
    let rtext = std::fs::read_to_string(&reference.ptx).map_err(|e| e.to_string())?;
    let files = [
        (Slot::Reference, db.add_file(&reference.ptx, rtext)),
        (Slot::Candidate, db.add_file(&cref.ptx, candidate)),
    ];
    let input = SpecInput::new(&db, spec_path.to_path_buf(), spec.clone());
    verdict_of(&ptxeq_db::check(&db, input, &files).verdict)
}

fn trial(case: &CaseDir, kind: &'static str, f: Rewrite) -> Option<Trial> {
    let spec = CheckSpec::load(&case.spec_path()).ok()?;
    let expect = spec.expect.clone()?;
    if expect.status != Status::Active {
        return None;
    }
    let Kernels::Pair { candidate, .. } = &spec.kernels else {
        return None;
    };
    // A candidate that is also the reference (same file) would rewrite
    // both sides' text in the database: skip it.
    if spec
        .kernels
        .iter()
        .iter()
        .filter(|(_, k)| k.ptx == candidate.ptx)
        .count()
        > 1
    {
        return None;
    }
    let text = std::fs::read_to_string(&candidate.ptx).ok()?;
    let (rewritten, changed) = f(&text);
    let name = format!("rewrite/{kind}/{}", case.name);
    if changed == 0 {
        return Some(Trial::test(name, || Ok(())).with_ignored_flag(true));
    }
    if let Some(dir) = std::env::var_os("PTXEQ_REWRITE_DUMP") {
        let file = format!("{kind}--{}.ptx", case.name.replace('/', "--"));
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(PathBuf::from(dir).join(file), &rewritten);
    }
    let spec_path = case.spec_path();
    Some(Trial::test(name, move || {
        let got = check_with(&spec_path, &spec, rewritten).map_err(Failed::from)?;
        if got == expect.verdict {
            Ok(())
        } else {
            Err(format!(
                "expected {} (as the case expects) after {changed} rewrite(s) of kind {kind}, got {got}",
                expect.verdict
            )
            .into())
        }
    }))
}

fn main() {
    let args = Arguments::from_args();
    let root = corpus_root();
    let cases = discover(&root).unwrap_or_default();
    let fams = families();
    let mut trials = Vec::new();
    for case in &cases {
        let family = case.name.split('/').next().unwrap_or("");
        if !fams.iter().any(|f| f == family) {
            continue;
        }
        for &(kind, f) in REWRITES {
            if let Some(t) = trial(case, kind, f) {
                trials.push(t);
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
