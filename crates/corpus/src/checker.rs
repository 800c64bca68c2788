//! Running the checker on a case: what verdict the tool reaches today.
//!
//! Today's checker is the race checker (`ptxeq race`): a single-kernel case
//! gets its full verdict; a pair gets a verdict when either kernel has a
//! finding (race, deadlock, divergence, bounds, unsupported...). When both
//! kernels of a pair are clean, equivalence is the check milestone's job:
//! the case is then [`Checked::PairRaceFree`], which can refute an expected
//! race but never passes an expected (not-)equivalence.

use ptxeq_db::{Database, RaceVerdict, Slot, SpecInput};
use ptxeq_spec::{CheckSpec, Verdict};

/// What the checker concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Checked {
    /// A verdict in the corpus vocabulary.
    Verdict(Verdict),
    /// Both kernels of a pair are race-free (and in the supported class);
    /// equivalence was not decided.
    PairRaceFree,
}

fn word_to_verdict(v: RaceVerdict) -> Verdict {
    match v {
        RaceVerdict::RaceFree => Verdict::RaceFree,
        RaceVerdict::Race => Verdict::Race,
        RaceVerdict::Deadlock => Verdict::Deadlock,
        RaceVerdict::Divergence => Verdict::Divergence,
        RaceVerdict::OutOfBounds => Verdict::OutOfBounds,
        RaceVerdict::Uninitialised => Verdict::Uninitialised,
        RaceVerdict::Unsupported => Verdict::Unsupported,
    }
}

/// Runs the race checker over every kernel of `spec` (at `spec_path`).
pub fn run_checker(spec_path: &std::path::Path, spec: &CheckSpec) -> Result<Checked, String> {
    let db = Database::default();
    let mut files = Vec::new();
    for (word, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx)
            .map_err(|e| format!("cannot read {}: {e}", kref.ptx.display()))?;
        let slot = Slot::of(word);
        files.push((slot, db.add_file(&kref.ptx, text)));
    }
    let input = SpecInput::new(&db, spec_path.to_path_buf(), spec.clone());
    let reports = ptxeq_db::race_check(&db, input, &files);
    if let Some(e) = reports.iter().find_map(|r| r.input_error.clone()) {
        return Err(format!("the spec does not fit the kernel: {e}"));
    }
    let worst = RaceVerdict::most_telling(reports.iter().map(|r| r.verdict));
    Ok(match (worst, reports.len()) {
        (Some(RaceVerdict::RaceFree), n) if n > 1 => Checked::PairRaceFree,
        (Some(v), _) => Checked::Verdict(word_to_verdict(v)),
        (None, _) => Checked::Verdict(Verdict::Unsupported),
    })
}
