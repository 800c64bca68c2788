//! The salsa database: PTX files are inputs, every pass is a tracked query.
//!
//! Design (ARCHITECTURE.md, "drivers/db"): each derived artifact is `Eq + Hash`, so when an
//! edit leaves an artifact equal, salsa backdates it and nothing downstream
//! re-runs ("early cutoff"). Two choices here make that cutoff effective:
//!
//! * [`kernel_ir`] is per entry: editing one kernel of a file does not
//!   invalidate the IR of the others.
//! * The kernel IR carries no byte offsets; the PTX spans of instructions live
//!   in a separate [`source_map`] query. Adding a comment or blank line shifts
//!   every offset but leaves the IR (and everything derived from it) equal.
//!
//! Parallel work: salsa 0.28 has no `par_map`; clone the database
//! (`db.clone()`, cheap: a handle on shared storage) once per rayon worker.

mod check;
pub mod counts;
mod ctas;
mod disk;
mod formula_check;
mod idioms;
mod kernel_check;
mod lift;
mod queries;

pub use kernel_check::{
    CtaKey, KernelRaceReport, KernelSlot, RaceVerdict, Slot, SpecInput, cta_input,
    cta_limit_finding, cta_limit_finding_n, ctas_of, grid_unrolled, race_check, structured,
    symbolic, term_origins, unrolled,
};

pub use ctas::{CtaPlan, compare_regions, kernel_ctas};

pub use check::{
    CheckReport, CheckVerdict, DecisionStore, PairKey, check, check_with, emit_smt, pair_verdicts,
};
pub use formula_check::{check_formula, emit_smt_formula, formula_context, formula_context_of};
pub use idioms::{RecognisedInput, VerifyFailure, recognised};
pub use lift::{LiftReport, LiftedTensor, lift, lifted_text};
pub use ptxeq_verdicts::{DEFAULT_MAX_REFUTED, FormulaOptions, StopRule};

pub use disk::{
    SYMBOLIC_VERSION, UNROLL_VERSION, default_cache, input_digest, set_default_cache,
    with_thread_cache,
};
pub use ptxeq_cache::DiskCache;

pub use queries::{
    Diagnostic, EntryKey, KernelSummary, LoweredModule, UnknownInstruction, entry_names, kernel_ir,
    kernel_summary, lowered_module, parse, source_map,
};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One PTX file: the pipeline's only input today (a `CheckSpec` input comes
/// with the check milestone).
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub text: String,
}

/// The database trait every query takes (`&dyn Db`).
#[salsa::db]
pub trait Db: salsa::Database {
    /// Element decisions keyed by the two terms' structural hashes,
    /// shared by every handle of the database (see [`check::DecisionStore`]).
    fn decision_memo(&self) -> &dyn ptxeq_verdicts::DecisionMemo;

    /// The disk cache the expensive queries read and fill, if any
    /// (see [`disk`]).
    fn disk_cache(&self) -> Option<&DiskCache> {
        None
    }
}

/// A record of which queries salsa executed, for `--timings` and for tests
/// that prove incrementality from the event log rather than from timing.
#[derive(Clone, Default)]
pub struct ExecutionLog {
    executed: Arc<Mutex<Vec<String>>>,
}

impl ExecutionLog {
    /// Takes the names (`query(key)`) of queries executed since the last call.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.executed.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The concrete database. Cloning gives another handle on the same storage
/// (for parallel workers).
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<ExecutionLog>,
    decisions: Arc<check::DecisionStore>,
    /// Shared by every handle; `None`: no disk cache.
    cache: Option<Arc<DiskCache>>,
}

impl Default for Database {
    fn default() -> Self {
        let events: Option<Box<dyn Fn(salsa::Event) + Send + Sync + 'static>> = if counts::enabled()
        {
            Some(Box::new(|e: salsa::Event| counts::on_event(&e)))
        } else {
            None
        };
        Self {
            storage: salsa::Storage::new(events),
            log: None,
            decisions: Arc::default(),
            cache: disk::default_cache(),
        }
    }
}

impl Database {
    /// A database that records every query execution in the returned log.
    pub fn with_execution_log() -> (Self, ExecutionLog) {
        let log = ExecutionLog::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if counts::enabled() {
                counts::on_event(&event);
            }
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                sink.executed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(format!("{database_key:?}"));
            }
        })));
        (
            Self {
                storage,
                log: Some(log.clone()),
                decisions: Arc::default(),
                cache: disk::default_cache(),
            },
            log,
        )
    }

    /// The execution log, when the database was built with one.
    pub fn execution_log(&self) -> Option<&ExecutionLog> {
        self.log.as_ref()
    }

    /// This database, reading and filling `cache` (or none: `None`)
    /// in the expensive queries instead of the process-wide default.
    pub fn with_cache(mut self, cache: Option<Arc<DiskCache>>) -> Self {
        self.cache = cache;
        self
    }

    /// Registers a file read from disk (or from an editor buffer).
    pub fn add_file(&self, path: impl AsRef<Path>, text: String) -> SourceFile {
        SourceFile::new(self, path.as_ref().to_path_buf(), text)
    }
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn decision_memo(&self) -> &dyn ptxeq_verdicts::DecisionMemo {
        &*self.decisions
    }

    fn disk_cache(&self) -> Option<&DiskCache> {
        self.cache.as_deref()
    }
}
