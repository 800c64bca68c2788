//! Incremental re-checking (issue 8): the race check (`race_*`) and the
//! equivalence check (`check_*`) of a corpus pair, each
//!
//! * `*_cold`: a fresh database (no disk cache): parse, lower, bind,
//!   validate, unroll (and for `check`: symbolic states, element verdicts);
//! * `*_warm`: the same database again, nothing changed (goal ≤ 100 ms);
//! * `*_edit`: after a one-instruction edit of the candidate (a float op's
//!   rounding mode, so the IR changes but the kernel stays valid): only
//!   the candidate's queries re-run (goal ≤ 10% of cold);
//! * `*_second_process`: a fresh database over a disk cache another
//!   database filled (what a second `ptxeq` process sees): parse and lower
//!   again, unrolled CTAs and symbolic states read from disk (element
//!   decisions are not on disk: they are recomputed).
//!
//! `cargo bench -p ptxeq-benches --bench incremental`.

use std::path::PathBuf;
use std::sync::Arc;

use divan::Bencher;
use ptxeq_db::{Database, DiskCache, Slot, SourceFile, SpecInput};
use salsa::Setter;

fn main() {
    divan::main();
}

const CASES: &[&str] = &[
    "softmax/naive-vs-online-n128",
    "sgemm/warptiling-64",
    "tc-gemm/mma-ldmatrix-f16-64",
    "attention/fa2-q16-kv512",
];

/// A case registered in a database.
struct Loaded {
    spec: SpecInput,
    kernels: Vec<(Slot, SourceFile)>,
    /// The candidate (or single kernel) file and its entry.
    edit_target: (SourceFile, Option<String>),
}

fn load(db: &Database, case: &str) -> Loaded {
    let path = ptxeq_benches::repo_root()
        .join("corpus")
        .join(case)
        .join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("corpus spec loads");
    let mut kernels = Vec::new();
    let mut edit_target = None;
    for (word, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx).expect("corpus PTX reads");
        let file = db.add_file(&kref.ptx, text);
        let slot = Slot::of(word);
        if slot != Slot::Reference {
            edit_target = Some((file, kref.entry.clone()));
        }
        kernels.push((slot, file));
    }
    let spec = SpecInput::new(db, path, spec);
    Loaded {
        spec,
        kernels,
        edit_target: edit_target.expect("a candidate or kernel"),
    }
}

/// Which report a benchmark runs.
#[derive(Clone, Copy)]
enum Report {
    Race,
    Check,
}

fn run(db: &Database, l: &Loaded, report: Report) -> usize {
    match report {
        Report::Race => ptxeq_db::race_check(db, l.spec, &l.kernels)
            .iter()
            .map(|r| r.ctas.len())
            .sum(),
        Report::Check => ptxeq_db::check(db, l.spec, &l.kernels).kernels.len(),
    }
}

/// `text` with one float instruction of `entry` (or of the first entry)
/// given an explicit round-toward-zero mode: a different instruction for
/// the IR, the same kernel over the reals.
pub fn one_instruction_edit(text: &str, entry: Option<&str>) -> String {
    let start = entry
        .and_then(|e| text.find(&format!(".entry {e}(")))
        .or_else(|| text.find(".entry "))
        .unwrap_or(0);
    let end = text[start + 1..]
        .find(".entry ")
        .map_or(text.len(), |i| start + 1 + i);
    for (from, to) in [
        ("fma.rn.ftz.f32", "fma.rz.ftz.f32"),
        ("fma.rn.f32", "fma.rz.f32"),
        ("add.f32", "add.rz.f32"),
        ("mul.f32", "mul.rz.f32"),
        ("add.rn.f32", "add.rz.f32"),
        // No float op outside the tensor-core instructions: an integer add
        // changes type but not value (wrapping add is sign-agnostic).
        ("add.s32", "add.u32"),
    ] {
        if let Some(i) = text[start..end].find(from) {
            let at = start + i;
            return format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
        }
    }
    panic!("no float instruction to edit in the kernel");
}

fn cold(bencher: Bencher<'_, '_>, case: &str, report: Report) {
    bencher.bench(|| {
        let db = Database::default().with_cache(None);
        let l = load(&db, case);
        divan::black_box(run(&db, &l, report))
    });
}

fn warm(bencher: Bencher<'_, '_>, case: &str, report: Report) {
    let db = Database::default().with_cache(None);
    let l = load(&db, case);
    run(&db, &l, report);
    bencher.bench_local(|| divan::black_box(run(&db, &l, report)));
}

fn edit(bencher: Bencher<'_, '_>, case: &str, report: Report) {
    let mut db = Database::default().with_cache(None);
    let l = load(&db, case);
    run(&db, &l, report);
    let (file, entry) = l.edit_target.clone();
    let original = file.text(&db).clone();
    let edited = one_instruction_edit(&original, entry.as_deref());
    let mut flip = false;
    bencher.bench_local(|| {
        // Alternate between the two texts: every sample is a real edit.
        flip = !flip;
        let text = if flip { &edited } else { &original };
        file.set_text(&mut db).to(text.clone());
        divan::black_box(run(&db, &l, report))
    });
}

fn second_process(bencher: Bencher<'_, '_>, case: &str, report: Report) {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = Arc::new(DiskCache::open(dir.path(), u64::MAX).expect("cache opens"));
    {
        let first = Database::default().with_cache(Some(cache.clone()));
        let l = load(&first, case);
        run(&first, &l, report);
    }
    let dir_path: PathBuf = dir.path().to_path_buf();
    bencher.bench(|| {
        // A new handle (as a new process would open), a new database.
        let cache = Arc::new(DiskCache::open(&dir_path, u64::MAX).expect("cache opens"));
        let db = Database::default().with_cache(Some(cache));
        let l = load(&db, case);
        divan::black_box(run(&db, &l, report))
    });
}

#[divan::bench(args = CASES, sample_count = 3)]
fn race_cold(b: Bencher<'_, '_>, case: &str) {
    cold(b, case, Report::Race);
}

#[divan::bench(args = CASES, sample_count = 10)]
fn race_warm(b: Bencher<'_, '_>, case: &str) {
    warm(b, case, Report::Race);
}

#[divan::bench(args = CASES, sample_count = 5)]
fn race_edit(b: Bencher<'_, '_>, case: &str) {
    edit(b, case, Report::Race);
}

#[divan::bench(args = CASES, sample_count = 5)]
fn race_second_process(b: Bencher<'_, '_>, case: &str) {
    second_process(b, case, Report::Race);
}

#[divan::bench(args = CASES, sample_count = 2)]
fn check_cold(b: Bencher<'_, '_>, case: &str) {
    cold(b, case, Report::Check);
}

#[divan::bench(args = CASES, sample_count = 10)]
fn check_warm(b: Bencher<'_, '_>, case: &str) {
    warm(b, case, Report::Check);
}

#[divan::bench(args = CASES, sample_count = 3)]
fn check_edit(b: Bencher<'_, '_>, case: &str) {
    edit(b, case, Report::Check);
}

#[divan::bench(args = CASES, sample_count = 3)]
fn check_second_process(b: Bencher<'_, '_>, case: &str) {
    second_process(b, case, Report::Check);
}
