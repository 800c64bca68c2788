//! Re-checking a pair after a one-instruction edit of the candidate: only
//! the candidate's queries re-run (the reference's parse, lowering and
//! unrolled CTA are reused), proved from salsa's execution log.

use std::path::PathBuf;

use ptxeq_db::{CtaKey, Database, KernelSlot, Slot};
use salsa::Setter;
use salsa::plumbing::AsId;

fn names(log: &[String], query: &str) -> Vec<String> {
    log.iter()
        .filter(|e| e.split('(').next() == Some(query))
        .cloned()
        .collect()
}

#[test]
fn editing_the_candidate_reruns_only_the_candidate() {
    let (mut db, log) = Database::with_execution_log();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/softmax/naive-vs-online-n128/check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).unwrap();
    let mut files = Vec::new();
    for (w, k) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&k.ptx).unwrap();
        files.push((Slot::of(w), db.add_file(&k.ptx, text), k.entry.clone()));
    }
    let spec_input = ptxeq_db::SpecInput::new(&db, path, spec);
    let kernels: Vec<_> = files.iter().map(|(s, f, _)| (*s, *f)).collect();
    let before = ptxeq_db::race_check(&db, spec_input, &kernels);
    log.take();

    // Nothing changed: nothing runs.
    ptxeq_db::race_check(&db, spec_input, &kernels);
    assert_eq!(log.take(), Vec::<String>::new());

    // One float instruction of the candidate entry gets another rounding
    // mode: a different IR, the same kernel over the reals.
    let (_, cand, entry) = files
        .iter()
        .find(|(s, _, _)| *s == Slot::Candidate)
        .cloned()
        .unwrap();
    let text = cand.text(&db).clone();
    let entry = entry.unwrap();
    let start = text.find(&format!(".entry {entry}(")).unwrap();
    let (from, to) = ("fma.rn.ftz.f32", "fma.rz.ftz.f32");
    let at = start + text[start..].find(from).unwrap();
    let edited = format!("{}{to}{}", &text[..at], &text[at + from.len()..]);
    cand.set_text(&mut db).to(edited);
    let after = ptxeq_db::race_check(&db, spec_input, &kernels);
    let log = log.take();

    let cand_cta = CtaKey::new(
        &db,
        KernelSlot::new(&db, spec_input, Slot::Candidate, cand),
        [0, 0, 0],
    );
    assert_eq!(
        names(&log, "unrolled"),
        vec![format!("unrolled({:?})", cand_cta.as_id())],
        "{log:#?}"
    );
    assert_eq!(names(&log, "parse").len(), 1, "{log:#?}");
    assert_eq!(names(&log, "lowered_module").len(), 1, "{log:#?}");
    assert_eq!(
        before.iter().map(|r| r.verdict).collect::<Vec<_>>(),
        after.iter().map(|r| r.verdict).collect::<Vec<_>>()
    );
}
