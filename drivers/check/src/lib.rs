//! The one check facade: what every front end calls to check a spec.
//!
//! `ptxeq check`, `race`, `terms`, `lift`, `watch`, the corpus runner and
//! the Python bindings all do the same thing — take a loaded spec, run a
//! check or a race check on the database, and interpret the result — and
//! they do it here, once:
//!
//! * a [`Request`] is the loaded spec ([`Loaded`]) and the options that
//!   change what is computed ([`Mode`], limits overrides); how a result is
//!   printed (human, JSON, SARIF) is not part of it;
//! * a [`Checker`] owns the salsa [`Database`] (and through it the disk
//!   cache), so a long-lived front end (`watch`, Python) reuses everything
//!   an edit does not reach;
//! * an [`Outcome`] carries the one [`Verdict`] (its word, exit code and
//!   ranking are methods of that type, spelled once in `ptxeq_spec`), which
//!   kernel decided it, the reports the renderers print (findings,
//!   per-tensor results), the assumptions it rests on and the time taken.
//!
//! The front ends are renderers over an [`Outcome`]; the versioned JSON
//! report types live in [`schema`].

pub mod assumptions;
pub mod schema;

use std::time::{Duration, Instant};

pub use ptxeq_db::DEFAULT_MAX_REFUTED;
use ptxeq_db::{
    CheckReport, CheckVerdict, Database, FormulaOptions, KernelRaceReport, LiftReport, Slot,
    SourceFile, SpecInput, StopRule,
};
pub use ptxeq_spec::Verdict;

/// A spec registered in a database, with the PTX file of each kernel it
/// names (reference first for a pair; one kernel for a race check; the
/// candidate alone against a formula reference).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub spec: SpecInput,
    pub kernels: Vec<(Slot, SourceFile)>,
}

impl Loaded {
    /// Whether the spec names a kernel in `slot`.
    pub fn has(&self, slot: Slot) -> bool {
        self.kernels.iter().any(|(s, _)| *s == slot)
    }

    /// Whether this spec is an equivalence check: a reference and a
    /// candidate kernel, or a candidate against a formula reference.
    pub fn is_pair(&self, db: &Database) -> bool {
        (self.has(Slot::Reference) && self.has(Slot::Candidate))
            || self.spec.spec(db).kernels.formula().is_some()
    }
}

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `ptxeq check`: race-check both kernels, then prove every output
    /// element equal (against the reference kernel or formula).
    Check,
    /// `ptxeq race`: race-check every kernel the spec names.
    Race,
    /// `ptxeq terms`: race-check, so that the output terms the renderer
    /// prints mean something (a racy run's terms depend on the schedule).
    Terms,
    /// `ptxeq lift`: each output tensor as one verified formula.
    Lift,
    /// `watch`, the corpus runner: [`Mode::Check`] for a pair (or a
    /// formula reference), [`Mode::Race`] for a single kernel.
    Auto,
}

/// One check to run: the loaded spec and the options that change the
/// result (not how it is printed).
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub loaded: &'a Loaded,
    pub mode: Mode,
    /// `--formula-max-steps`: the step budget of a check against a formula
    /// and of `lift` (default [`FormulaOptions::default`]).
    pub formula_max_steps: Option<u64>,
    /// `--max-refuted N` / `--all-elements` (`None`): an equivalence check
    /// stops deciding elements once this many are refuted — the verdict
    /// is then final — and reports how many it decided (default
    /// [`DEFAULT_MAX_REFUTED`]). `lift` always decides every element.
    pub max_refuted: Option<u64>,
}

impl<'a> Request<'a> {
    pub fn new(loaded: &'a Loaded, mode: Mode) -> Self {
        Request {
            loaded,
            mode,
            formula_max_steps: None,
            max_refuted: Some(DEFAULT_MAX_REFUTED),
        }
    }

    /// When an equivalence check stops deciding.
    pub fn stop(&self) -> StopRule {
        StopRule {
            max_refuted: self.max_refuted,
        }
    }

    /// The formula options of `lift` (every element decided).
    fn formula_options(&self) -> FormulaOptions {
        let mut fopts = FormulaOptions::default();
        if let Some(n) = self.formula_max_steps {
            fopts.max_steps = n;
        }
        fopts
    }

    /// The formula options of a check against a formula reference.
    fn check_formula_options(&self) -> FormulaOptions {
        FormulaOptions {
            stop: self.stop(),
            ..self.formula_options()
        }
    }
}

/// The reports behind a verdict, for the renderers.
#[derive(Clone, Debug)]
pub enum Report {
    /// An equivalence check: both kernels' race reports, the element
    /// verdicts per output tensor, the problems that left it undecided.
    Check(CheckReport),
    /// A race check (also `terms`): each kernel's race report.
    Race(Vec<KernelRaceReport>),
    /// `lift`: per kernel, the lifted formulas.
    Lift(Vec<LiftReport>),
}

/// What a check concluded.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The one verdict: its word ([`Verdict::as_str`]), exit code
    /// ([`Verdict::exit_code`]) and ranking ([`Verdict::rank`]).
    pub verdict: Verdict,
    /// The mode that ran ([`Mode::Auto`] resolved).
    pub mode: Mode,
    /// The kernel whose race check decided an equivalence check (it is not
    /// race-free), or the most telling kernel of a race check.
    pub decided_by: Option<Slot>,
    /// Why the input is invalid (verdict [`Verdict::InvalidInput`]): the
    /// spec does not fit the kernels.
    pub invalid: Option<String>,
    pub report: Report,
    /// The standing assumptions the verdict rests on
    /// ([`assumptions`]; the renderers add the per-kernel ones: CTAs
    /// checked, idioms, bindings).
    pub assumptions: Vec<&'static str>,
    /// Wall time of the check (loading excluded).
    pub elapsed: Duration,
}

impl Outcome {
    /// The process exit code of this outcome.
    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code()
    }

    /// The kernels' race reports (both kernels of a check, each kernel of
    /// a race check or lift).
    pub fn kernels(&self) -> Vec<&KernelRaceReport> {
        match &self.report {
            Report::Check(r) => r.kernels.iter().collect(),
            Report::Race(r) => r.iter().collect(),
            Report::Lift(r) => r.iter().map(|l| &l.kernel).collect(),
        }
    }

    /// The equivalence report, for a check.
    pub fn check_report(&self) -> Option<&CheckReport> {
        match &self.report {
            Report::Check(r) => Some(r),
            _ => None,
        }
    }

    /// The race reports, for a race check.
    pub fn race_reports(&self) -> &[KernelRaceReport] {
        match &self.report {
            Report::Race(r) => r,
            _ => &[],
        }
    }

    /// The per-tensor element verdicts of a check that compared outputs.
    pub fn tensors(&self) -> &[ptxeq_verdicts::TensorVerdicts] {
        self.check_report()
            .and_then(|r| r.verdicts.as_ref())
            .map_or(&[], |v| &v.tensors)
    }

    /// Whether the equivalence check stopped at a kernel that is not
    /// race-free (no verification condition was checked).
    pub fn stopped_at_kernel(&self) -> bool {
        matches!(
            self.check_report().map(|r| &r.verdict),
            Some(CheckVerdict::Kernel { .. })
        )
    }
}

/// The facade: owns the database every check of a front end runs on.
#[derive(Clone, Default)]
pub struct Checker {
    db: Database,
}

impl Checker {
    /// A checker over a fresh database with the process's default disk
    /// cache (`ptxeq_db::set_default_cache`).
    pub fn new() -> Self {
        Checker::default()
    }

    /// A checker over `db` (a database built with its own cache).
    pub fn with_database(db: Database) -> Self {
        Checker { db }
    }

    /// A checker whose database reads and fills `cache` (`None`: no disk
    /// cache).
    pub fn with_cache(cache: Option<std::sync::Arc<ptxeq_cache::DiskCache>>) -> Self {
        Checker {
            db: Database::default().with_cache(cache),
        }
    }

    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The database, to update inputs between checks (`watch`).
    pub fn db_mut(&mut self) -> &mut Database {
        &mut self.db
    }

    /// Runs `req`.
    pub fn run(&self, req: &Request<'_>) -> Outcome {
        let db = &self.db;
        let loaded = req.loaded;
        let mode = match req.mode {
            Mode::Auto if loaded.is_pair(db) => Mode::Check,
            Mode::Auto => Mode::Race,
            m => m,
        };
        let start = Instant::now();
        let mut outcome = match mode {
            Mode::Check => {
                let report = self.check(req);
                let elapsed = start.elapsed();
                let (decided_by, invalid) = match &report.verdict {
                    CheckVerdict::Kernel { slot, .. } => (Some(*slot), None),
                    CheckVerdict::InvalidInput(why) => (None, Some(why.clone())),
                    _ => (None, None),
                };
                Outcome {
                    verdict: report.verdict.verdict(),
                    mode,
                    decided_by,
                    invalid,
                    report: Report::Check(report),
                    assumptions: assumptions::of_check(loaded.spec.spec(db)),
                    elapsed,
                }
            }
            Mode::Race | Mode::Terms | Mode::Auto => {
                let reports = ptxeq_db::race_check(db, loaded.spec, &loaded.kernels);
                let elapsed = start.elapsed();
                let invalid = reports
                    .iter()
                    .find_map(|r| r.input_error.as_ref())
                    .map(|e| does_not_fit(e));
                let verdict = if invalid.is_some() {
                    Verdict::InvalidInput
                } else {
                    Verdict::most_telling(reports.iter().map(|r| r.verdict))
                        .unwrap_or(Verdict::Unsupported)
                };
                let decided_by = reports
                    .iter()
                    .find(|r| r.verdict == verdict)
                    .map(|r| r.slot);
                Outcome {
                    verdict,
                    mode,
                    decided_by,
                    invalid,
                    report: Report::Race(reports),
                    assumptions: assumptions::RACE.to_vec(),
                    elapsed,
                }
            }
            Mode::Lift => {
                let fopts = req.formula_options();
                let reports: Vec<LiftReport> = loaded
                    .kernels
                    .iter()
                    .map(|&(slot, file)| ptxeq_db::lift(db, loaded.spec, slot, file, fopts))
                    .collect();
                let elapsed = start.elapsed();
                let invalid = reports.iter().find_map(|r| {
                    r.problem
                        .as_deref()
                        .filter(|p| p.starts_with(DOES_NOT_FIT))
                        .map(str::to_owned)
                });
                // A lifted formula is verified equal to its kernel at every
                // element written: `equivalent` when every kernel wrote a
                // tensor and every tensor lifted.
                let all = reports.iter().all(|r| {
                    r.problem.is_none()
                        && !r.tensors.is_empty()
                        && r.tensors.iter().all(|t| t.formula.is_some())
                });
                let verdict = if invalid.is_some() {
                    Verdict::InvalidInput
                } else if all {
                    Verdict::Equivalent
                } else {
                    Verdict::Unsupported
                };
                Outcome {
                    verdict,
                    mode,
                    decided_by: None,
                    invalid,
                    report: Report::Lift(reports),
                    assumptions: assumptions::RACE.to_vec(),
                    elapsed,
                }
            }
        };
        if loaded
            .kernels
            .iter()
            .any(|&(_, file)| file.text(db).contains("tcgen05.mma"))
        {
            outcome.assumptions.push(assumptions::TCGEN05);
        }
        if loaded.kernels.iter().any(|&(_, file)| {
            let text = file.text(db);
            text.contains("wgmma.mma_async") && text.contains("mbarrier.")
        }) {
            outcome.assumptions.push(assumptions::WGMMA_EXEC);
        }
        outcome
    }

    /// The equivalence check of a loaded spec: against the reference
    /// kernel, or against the reference formula when the spec has one.
    fn check(&self, req: &Request<'_>) -> CheckReport {
        let db = &self.db;
        let loaded = req.loaded;
        let formula = loaded.spec.spec(db).kernels.formula().cloned();
        match (&formula, loaded.kernels.first()) {
            (Some(f), Some(&(_, candidate))) => {
                ptxeq_db::check_formula(db, loaded.spec, candidate, f, req.check_formula_options())
            }
            _ => ptxeq_db::check_with(db, loaded.spec, &loaded.kernels, req.stop()),
        }
    }

    /// Writes every verification condition of a checked pair as SMT-LIB2
    /// under `dir`; the number written and what was compared (`formula =
    /// candidate` for a formula reference).
    pub fn emit_smt(
        &self,
        req: &Request<'_>,
        dir: &std::path::Path,
    ) -> Result<(usize, SmtKind), String> {
        let db = &self.db;
        let loaded = req.loaded;
        let formula = loaded.spec.spec(db).kernels.formula().cloned();
        match (&formula, loaded.kernels.first()) {
            (Some(f), Some(&(_, candidate))) => ptxeq_db::emit_smt_formula(
                db,
                loaded.spec,
                candidate,
                f,
                req.formula_options(),
                dir,
            )
            .map(|n| (n, SmtKind::Formula)),
            _ => ptxeq_db::emit_smt(db, loaded.spec, &loaded.kernels, dir)
                .map(|n| (n, SmtKind::Pair))
                .map_err(|e| e.to_string()),
        }
    }
}

/// What [`Checker::emit_smt`] compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmtKind {
    Pair,
    Formula,
}

/// How an invalid-input message about the spec and the kernels starts.
pub const DOES_NOT_FIT: &str = "the spec does not fit";

/// The message of a spec that does not fit a kernel.
pub fn does_not_fit(e: &str) -> String {
    format!("{DOES_NOT_FIT} the kernel: {e}")
}
