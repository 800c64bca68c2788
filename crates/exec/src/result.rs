//! The result of one CTA run.

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, FindingKind, InstrRef, ThreadRef};
use crate::footprint::GlobalFootprint;
use crate::trace::Trace;

/// Counters of a run (deterministic: no wall-clock time; the caller times
/// the run).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    pub threads: u32,
    /// Thread-instructions stepped (predicated-off ones included).
    pub instructions_executed: u64,
    pub barriers_completed: u64,
    pub warp_collectives: u64,
    /// Bytes of shared and global memory holding a written value at the end
    /// of the run.
    pub max_live_cells: u64,
    /// Peak heap bytes of the engine's state for touched memory (see
    /// `Limits::max_memory_state_bytes`).
    pub peak_memory_state_bytes: u64,
}

/// The final content of one element of an output or inout tensor.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum OutputValue<V> {
    /// A real value (float tensors).
    Data(V),
    /// Concrete bits (integer tensors, or bits the domain could not turn
    /// into a real value).
    Bits(u64),
    /// The element cannot be given a value; the reason says why (mixed
    /// widths, undefined bytes, a NaN constant, an integer depending on
    /// tensor data).
    Unsupported(String),
}

/// The written elements of one output / inout tensor, sorted by index
/// (unwritten elements are absent: for an inout tensor they keep their
/// input value, for an output tensor they are unwritten).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct TensorOutput<V> {
    pub tensor: u32,
    pub name: String,
    pub elements: Vec<(u64, OutputValue<V>)>,
    /// Per written element (sorted by index), the store that wrote its
    /// final value: the provenance a refuted element's report names
    /// (`engine/writers.rs`). An element whose writer was not recorded
    /// (written by an earlier CTA of a grid-level run) is absent.
    #[serde(default)]
    pub writers: Vec<(u64, StoreSite)>,
}

/// The store (or atomic) that wrote an element's final value: which
/// instruction, executed by which thread of which CTA.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct StoreSite {
    pub instr: InstrRef,
    pub thread: ThreadRef,
    pub cta: [u32; 3],
}

impl<V> TensorOutput<V> {
    /// The store that wrote element `index`, when recorded.
    pub fn writer(&self, index: u64) -> Option<StoreSite> {
        self.writers
            .binary_search_by_key(&index, |w| w.0)
            .ok()
            .map(|i| self.writers[i].1)
    }
}

/// Everything one CTA run produced.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct CtaRun<V> {
    pub cta: [u32; 3],
    pub findings: Vec<Finding>,
    /// Findings dropped per kind beyond `Limits::max_findings_per_kind`.
    pub dropped_findings: u64,
    pub stats: Stats,
    pub outputs: Vec<TensorOutput<V>>,
    pub footprint: GlobalFootprint,
    pub trace: Trace,
}

impl<V> CtaRun<V> {
    /// Whether some finding of `kind` was reported.
    pub fn has(&self, kind: FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == kind)
    }

    /// The findings of `kind`.
    pub fn of(&self, kind: FindingKind) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.kind == kind)
    }
}
