//! Running the checker on a case: the verdict the tool reaches.
//!
//! A single-kernel case runs the race checker (`ptxeq race`); a pair runs
//! the full equivalence check (`ptxeq check`): both kernels are
//! race-checked first, then every output element is decided. An
//! undecided pair (an unknown element, an unsupported value) is
//! `unsupported`, which passes only where the corpus expects exactly that.

use ptxeq_check::{Checker, Loaded, Mode, Request};
use ptxeq_db::{Slot, SpecInput};
use ptxeq_spec::{CheckSpec, Verdict};

/// What the checker concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Checked {
    /// A verdict in the corpus vocabulary.
    Verdict(Verdict),
}

/// Runs the checker on `spec` (at `spec_path`) through the facade
/// ([`Mode::Auto`]): the equivalence check for a pair (or a kernel against
/// a formula), the race checker for a single kernel. Input that does not
/// fit is an error, never a verdict.
pub fn run_checker(spec_path: &std::path::Path, spec: &CheckSpec) -> Result<Checked, String> {
    let checker = Checker::new();
    let db = checker.db();
    let mut kernels = Vec::new();
    for (word, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx)
            .map_err(|e| format!("cannot read {}: {e}", kref.ptx.display()))?;
        kernels.push((Slot::of(word), db.add_file(&kref.ptx, text)));
    }
    let loaded = Loaded {
        spec: SpecInput::new(db, spec_path.to_path_buf(), spec.clone()),
        kernels,
    };
    let outcome = checker.run(&Request::new(&loaded, Mode::Auto));
    match outcome.invalid {
        Some(why) => Err(why),
        None => Ok(Checked::Verdict(outcome.verdict)),
    }
}
