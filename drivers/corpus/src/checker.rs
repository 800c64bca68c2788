//! Running the checker on a case: the verdict the tool reaches.
//!
//! A single-kernel case runs the race checker (`ptxeq race`); a pair runs
//! the full equivalence check (`ptxeq check`): both kernels are
//! race-checked first, then every output element is decided. An
//! undecided pair (an unknown element, an unsupported value) is
//! `unsupported`, which passes only where the corpus expects exactly that.

use ptxeq_db::{CheckVerdict, Database, RaceVerdict, Slot, SpecInput};
use ptxeq_spec::{CheckSpec, Verdict};

/// What the checker concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Checked {
    /// A verdict in the corpus vocabulary.
    Verdict(Verdict),
}

fn word_to_verdict(v: RaceVerdict) -> Verdict {
    match v {
        RaceVerdict::RaceFree => Verdict::RaceFree,
        RaceVerdict::Race => Verdict::Race,
        RaceVerdict::OrderDependent => Verdict::OrderDependent,
        RaceVerdict::Deadlock => Verdict::Deadlock,
        RaceVerdict::Divergence => Verdict::Divergence,
        RaceVerdict::OutOfBounds => Verdict::OutOfBounds,
        RaceVerdict::Uninitialised => Verdict::Uninitialised,
        RaceVerdict::Unsupported => Verdict::Unsupported,
    }
}

/// Runs the checker on `spec` (at `spec_path`): the equivalence check for
/// a pair (or a kernel against a formula), the race checker for a single
/// kernel.
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
    // A pair, or a candidate against a formula reference.
    if files.len() == 2 || spec.kernels.formula().is_some() {
        let report = ptxeq_db::check(&db, input, &files);
        return Ok(Checked::Verdict(match report.verdict {
            CheckVerdict::Equivalent => Verdict::Equivalent,
            CheckVerdict::NotEquivalent => Verdict::NotEquivalent,
            CheckVerdict::Undecided => Verdict::Unsupported,
            CheckVerdict::Kernel { verdict, .. } => word_to_verdict(verdict),
            CheckVerdict::InvalidInput(e) => return Err(e),
        }));
    }
    let reports = ptxeq_db::race_check(&db, input, &files);
    if let Some(e) = reports.iter().find_map(|r| r.input_error.clone()) {
        return Err(format!("the spec does not fit the kernel: {e}"));
    }
    let worst = RaceVerdict::most_telling(reports.iter().map(|r| r.verdict));
    Ok(Checked::Verdict(match worst {
        Some(v) => word_to_verdict(v),
        None => Verdict::Unsupported,
    }))
}
