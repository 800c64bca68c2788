//! Pass: the symbolic state of one CTA.
//!
//! [`symbolic_state`] replays a CTA that `unroll` already ran, this time
//! with the [`TermDomain`]: every float value becomes a real-valued term
//! (docs/semantics.md §3, §5) and the final contents of the output
//! tensors are the output terms. The replay follows the unrolled trace (same per-thread
//! paths, same schedule) and says so if it does not; races, deadlocks and
//! bounds were judged by `unroll` and are not judged again here.
//!
//! The artifact is self-contained and position-free: the terms are
//! exported as a [`TermGraph`] (only what the outputs reach), and each
//! output element names a root of that graph. That makes it `Eq + Hash`
//! (salsa backdating) and serializable (the db's disk cache stores it
//! under the `symbolic` key).

mod domain;
mod input_ids;
pub mod replay_memory;

pub use domain::{TermDomain, TermOrigins};

use ptxeq_exec::{CtaInput, Finding, FindingKind, OutputValue, Stats, TensorOutput};
use ptxeq_terms::{Sum, TermGraph, TermId, Terms};
use ptxeq_unroll::UnrolledCta;
use serde::{Deserialize, Serialize};

/// The output terms of one CTA.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct SymbolicState {
    pub cta: [u32; 3],
    /// Per output / inout tensor, the written elements; `Data(i)` is root
    /// `i` of `graph`.
    pub outputs: Vec<TensorOutput<u32>>,
    /// Every term the outputs refer to.
    pub graph: TermGraph,
    /// Findings of the replay itself: a replay that left the unrolled path
    /// (`Unsupported`, internal), or whatever the term run reported that
    /// the opaque run did not.
    pub findings: Vec<Finding>,
    pub stats: Stats,
}

impl SymbolicState {
    /// The terms of output elements `wanted` (tensor, flat index),
    /// imported into `terms` with only the sub-terms they reach (not the
    /// whole graph, as [`SymbolicState::import_into`] does): one pass over
    /// the graph for all of them. `None` for an element this CTA wrote no
    /// real value to.
    pub fn import_elements(&self, terms: &mut Terms, wanted: &[(u32, u64)]) -> Vec<Option<TermId>> {
        let root_of = |tensor: u32, index: u64| {
            self.outputs
                .iter()
                .filter(|t| t.tensor == tensor)
                .flat_map(|t| &t.elements)
                .find_map(|(i, v)| match v {
                    OutputValue::Data(r) if *i == index => Some(*r as usize),
                    _ => None,
                })
        };
        let roots: Vec<Option<usize>> = wanted.iter().map(|&(t, i)| root_of(t, i)).collect();
        let present: Vec<usize> = roots.iter().flatten().copied().collect();
        let mut ids = terms.import_roots(&self.graph, &present).into_iter();
        roots
            .iter()
            .map(|r| r.and_then(|_| ids.next().flatten()))
            .collect()
    }

    /// [`SymbolicState::import_elements`] of one element.
    pub fn import_element(&self, terms: &mut Terms, tensor: u32, index: u64) -> Option<TermId> {
        self.import_elements(terms, &[(tensor, index)])
            .pop()
            .flatten()
    }

    /// The output terms, imported into `terms` (which may already hold the
    /// other kernel's terms: shared sub-terms become one node). Returns,
    /// per tensor, `(element index, term)` for every real-valued element.
    pub fn import_into(&self, terms: &mut Terms) -> Vec<(u32, Vec<(u64, TermId)>)> {
        let roots = terms.import(&self.graph);
        self.outputs
            .iter()
            .map(|t| {
                let elems = t
                    .elements
                    .iter()
                    .filter_map(|(i, v)| match v {
                        OutputValue::Data(r) => roots.get(*r as usize).map(|&id| (*i, id)),
                        _ => None,
                    })
                    .collect();
                (t.tensor, elems)
            })
            .collect()
    }
}

/// Held while a replay's store is exported (see `symbolic_state`).
static EXPORT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Replays `unrolled` with terms. Call only on an unrolled CTA without
/// blocking findings (races, deadlocks, unsupported constructs): the
/// output of a racy run is schedule-dependent and has no meaning.
pub fn symbolic_state(input: &CtaInput, unrolled: &UnrolledCta) -> SymbolicState {
    // Held until the store is exported (the end of this function).
    let _admitted = replay_memory::admit(replay_memory::estimate(unrolled));
    let mut terms = Terms::new();
    terms.set_tensor_names(input.input_names());
    terms.set_tensor_shapes(input.tensors.iter().map(|t| t.shape.clone()).collect());
    terms.set_scalar_inputs(input.first_symbol());
    // The scalar corpus kernels build at most about one node per two
    // executed instructions; reserving that up front saves growing
    // (rehashing) the store's table step by step. A matrix instruction
    // builds thousands of products per thread-instruction, so the node
    // columns are reserved for the opaque run's count of data values
    // when that is larger: a column of tens of millions of nodes copied
    // by `realloc` while it grows is briefly resident twice. Capped at
    // 2^26 nodes (1.5 GiB of node column): untouched capacity is only
    // address space (`Terms::reserve` bounds the table, the part touched
    // at random), but a huge integer-heavy run must not ask for more.
    const CAP: u64 = 1 << 26;
    let estimate = (unrolled.stats.instructions_executed / 2).min(CAP);
    let columns = unrolled.values_built.min(CAP).max(estimate);
    terms.reserve_split(columns as usize, estimate as usize);
    let domain = TermDomain::new(terms);
    match ptxeq_exec::replay(input, unrolled.cta, &unrolled.trace, domain) {
        Ok((run, mut domain)) => {
            let (outputs, roots) = number_roots(run.outputs, &mut domain);
            // Findings the opaque run already reported are not repeated.
            let findings = run
                .findings
                .into_iter()
                .filter(|f| !unrolled.findings.contains(f))
                .collect();
            // The store (often half partial sums no output reaches) is
            // consumed: it never coexists whole with the exported graph.
            // The rest of the domain (the pending-sum arena, the input
            // cache) is freed first, and one export runs at a time in the
            // process: the two kernels of a pair often finish their
            // replays together, and two exports at once hold both stores
            // and both growing graphs (about 0.5 GiB more at the peak of a
            // K = 4096 GEMM pair). The other replay waits about a second.
            let terms = domain.into_terms();
            tracing::debug!(
                values_built = unrolled.values_built,
                instructions = unrolled.stats.instructions_executed,
                nodes = terms.len(),
                "replay store"
            );
            let graph = {
                let _one = EXPORT.lock().unwrap_or_else(|e| e.into_inner());
                terms.into_graph(&roots)
            };
            SymbolicState {
                cta: unrolled.cta,
                outputs,
                graph,
                findings,
                stats: run.stats,
            }
        }
        Err(mismatch) => SymbolicState {
            cta: unrolled.cta,
            outputs: Vec::new(),
            graph: Terms::new().export(&[]),
            findings: vec![replay_finding(&mismatch)],
            stats: unrolled.stats,
        },
    }
}

/// The replay of [`symbolic_state`] again, keeping the whole store and
/// which instruction first built each term — for a report that names the
/// instructions behind a refuted element's differing sub-terms. Run on
/// demand (only when a refutation is reported), never in the pipeline:
/// the pipeline's replay keeps no such table. Partial sums are deferred
/// as in the pipeline's replay (a sum interned when read, or at the end
/// for an output, is attributed to the addition that completed it).
/// `None` when the replay leaves the unrolled path.
pub fn term_origins(input: &CtaInput, unrolled: &UnrolledCta) -> Option<(Terms, TermOrigins)> {
    let mut terms = Terms::new();
    terms.set_tensor_names(input.input_names());
    terms.set_tensor_shapes(input.tensors.iter().map(|t| t.shape.clone()).collect());
    terms.set_scalar_inputs(input.first_symbol());
    let domain = TermDomain::with_origins(terms);
    let (run, mut domain) =
        ptxeq_exec::replay(input, unrolled.cta, &unrolled.trace, domain).ok()?;
    // The outputs' pending sums, interned as the pipeline's replay does
    // (the roots themselves are not needed).
    number_roots(run.outputs, &mut domain);
    let mut origins = domain.origins?;
    origins.finish(domain.terms.len());
    Some((domain.terms, origins))
}

/// Output values with their terms replaced by root numbers (indices into
/// the returned roots, in output order), as a `SymbolicState` stores them.
fn number_roots(
    outputs: Vec<TensorOutput<Sum>>,
    domain: &mut TermDomain,
) -> (Vec<TensorOutput<u32>>, Vec<TermId>) {
    let mut roots: Vec<TermId> = Vec::new();
    let outputs = outputs
        .into_iter()
        .map(|t| TensorOutput {
            tensor: t.tensor,
            name: t.name,
            writers: t.writers,
            elements: t
                .elements
                .into_iter()
                .map(|(i, v)| {
                    let v = match v {
                        OutputValue::Data(v) => {
                            roots.push(domain.force(v));
                            OutputValue::Data((roots.len() - 1) as u32)
                        }
                        OutputValue::Bits(b) => OutputValue::Bits(b),
                        OutputValue::Unsupported(r) => OutputValue::Unsupported(r),
                    };
                    (i, v)
                })
                .collect(),
        })
        .collect();
    (outputs, roots)
}

/// A replay that left the unrolled path is reported as unsupported: the
/// two domains decided some comparison differently, so no verdict may rest
/// on either run.
fn replay_finding(m: &ptxeq_exec::ReplayMismatch) -> Finding {
    Finding {
        kind: FindingKind::Unsupported,
        message: format!("the symbolic replay left the unrolled path: {}", m.message),
        reason: "symbolic replay diverged from the unrolled trace".into(),
        thread: None,
        instr: None,
        location: None,
        accesses: Vec::new(),
        waiting: Vec::new(),
    }
}

/// The output terms of CTAs that synchronise through a ticket atomic
/// (`ptxeq_exec::run_grid` with terms: the grid-level exploration runs
/// again, and its runs must follow the traces of `unrolled`). The whole
/// grid's outputs are one state, for the first CTA of the run; the outputs
/// of every order of the tickets were found equal by the opaque run (else
/// it reported an order dependence), so one order's outputs are the
/// kernel's.
pub fn symbolic_grid_state(
    input: &CtaInput,
    unrolled: &ptxeq_unroll::UnrolledGrid,
) -> SymbolicState {
    let ctas: Vec<[u32; 3]> = unrolled.ctas.iter().map(|u| u.cta).collect();
    let first = ctas.first().copied().unwrap_or([0, 0, 0]);
    let _admitted = replay_memory::admit(unrolled.ctas.iter().map(replay_memory::estimate).sum());
    let mut terms = Terms::new();
    terms.set_tensor_names(input.tensors.iter().map(|t| t.name.clone()).collect());
    terms.set_tensor_shapes(input.tensors.iter().map(|t| t.shape.clone()).collect());
    // Eager: the grid run compares ticket orders' outputs by handle.
    let (g, mut domain) = ptxeq_exec::run_grid(input, &ctas, TermDomain::eager(terms));
    let mut stats = Stats::default();
    for (run, u) in g.runs.iter().zip(&unrolled.ctas) {
        if let Err(m) = u.trace.check_replay(&run.trace) {
            return SymbolicState {
                cta: first,
                outputs: Vec::new(),
                graph: Terms::new().export(&[]),
                findings: vec![replay_finding(&m)],
                stats: u.stats,
            };
        }
        stats.threads += run.stats.threads;
        stats.instructions_executed += run.stats.instructions_executed;
        stats.barriers_completed += run.stats.barriers_completed;
        stats.warp_collectives += run.stats.warp_collectives;
    }
    let (outputs, roots) = number_roots(g.outputs, &mut domain);
    let known: Vec<&Finding> = unrolled
        .ctas
        .iter()
        .flat_map(|u| &u.findings)
        .chain(&unrolled.cross)
        .collect();
    let findings = g
        .runs
        .into_iter()
        .flat_map(|r| r.findings)
        .chain(g.cross)
        .filter(|f| !known.contains(&f))
        .collect();
    SymbolicState {
        cta: first,
        outputs,
        graph: domain.terms.export(&roots),
        findings,
        stats,
    }
}
