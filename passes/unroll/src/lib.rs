//! Pass: per-thread unrolling of one CTA.
//!
//! [`unroll`] runs the execution engine (`ptxeq-exec`) with the opaque data
//! domain — no terms are built — and keeps what does not depend on the
//! values of tensor data: every thread's control-flow path (compact:
//! run-length encoded segments plus a path hash), the schedule, the global
//! footprint, and the findings (races, deadlocks, divergence, bounds,
//! uninitialised reads, unsupported constructs, resource limits).
//!
//! A later pass replays the same CTA with the term domain through
//! `ptxeq_exec::replay`: the engine is deterministic, so the replay
//! follows the same paths and interleaving, and the trace recorded here
//! is what it is checked against (see `ptxeq_exec::Trace::check_replay`).
//! Because control flow and addresses may only depend on concrete values,
//! the paths cannot differ unless the two domains decide a constant
//! comparison differently, which the check reports.

use ptxeq_exec::{CtaInput, Finding, GlobalFootprint, Opaque, Stats, Trace, run_cta, run_grid};
use serde::{Deserialize, Serialize};

/// The unrolled form of one CTA.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct UnrolledCta {
    pub cta: [u32; 3],
    pub findings: Vec<Finding>,
    /// Findings dropped beyond the per-kind cap.
    pub dropped_findings: u64,
    pub stats: Stats,
    pub footprint: GlobalFootprint,
    pub trace: Trace,
    /// Non-constant data values the opaque run built
    /// (`ptxeq_exec::Opaque::values_built`; for CTAs unrolled together,
    /// the whole run's): what the symbolic replay sizes its term store by.
    pub values_built: u64,
}

impl UnrolledCta {
    /// Whether some finding of `kind` was reported.
    pub fn has(&self, kind: ptxeq_exec::FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == kind)
    }
}

/// Unrolls CTA `cta` with opaque data.
pub fn unroll(input: &CtaInput, cta: [u32; 3]) -> UnrolledCta {
    let (run, domain) = run_cta(input, cta, Opaque::new());
    UnrolledCta {
        cta,
        findings: run.findings,
        dropped_findings: run.dropped_findings,
        stats: run.stats,
        footprint: run.footprint,
        trace: run.trace,
        values_built: domain.values_built(),
    }
}

/// Several CTAs unrolled together over one global memory
/// (`ptxeq_exec::run_grid`): accesses of different CTAs are judged like
/// those of threads of one CTA.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct UnrolledGrid {
    /// Per CTA, in the order asked for: its own findings, counters, trace.
    pub ctas: Vec<UnrolledCta>,
    /// Findings between two CTAs.
    pub cross: Vec<Finding>,
    /// What the verdict rests on (the grid-level ticket exploration).
    pub notes: Vec<String>,
    /// The ticket exploration ran: the traces are those of one order of
    /// the atomics, which a CTA replayed alone does not reproduce.
    pub explored: bool,
}

/// Unrolls `ctas` together with opaque data.
pub fn unroll_grid(input: &CtaInput, ctas: &[[u32; 3]]) -> UnrolledGrid {
    let (g, domain) = run_grid(input, ctas, Opaque::new());
    let values_built = domain.values_built();
    UnrolledGrid {
        ctas: g
            .runs
            .into_iter()
            .map(|run| UnrolledCta {
                cta: run.cta,
                findings: run.findings,
                dropped_findings: run.dropped_findings,
                stats: run.stats,
                footprint: run.footprint,
                trace: run.trace,
                values_built,
            })
            .collect(),
        cross: g.cross,
        notes: g.notes,
        explored: g.explored,
    }
}

/// Unrolls several CTAs: one alone, several together ([`unroll_grid`]);
/// findings between CTAs are returned separately.
pub fn unroll_ctas(input: &CtaInput, ctas: &[[u32; 3]]) -> (Vec<UnrolledCta>, Vec<Finding>) {
    if ctas.len() > 1 {
        let g = unroll_grid(input, ctas);
        (g.ctas, g.cross)
    } else {
        (ctas.iter().map(|&c| unroll(input, c)).collect(), Vec::new())
    }
}

/// The CTA ids a spec's `ctas` selects. `auto` is every CTA here: the
/// selection by compared region is the checker's (`ptxeq-ctas`), and every
/// CTA over-approximates it.
pub fn select_ctas(ctas: &ptxeq_spec::Ctas, grid: [u32; 3]) -> Vec<[u32; 3]> {
    match ctas {
        ptxeq_spec::Ctas::First => vec![[0, 0, 0]],
        ptxeq_spec::Ctas::List(l) => l.clone(),
        ptxeq_spec::Ctas::All | ptxeq_spec::Ctas::Auto => {
            let mut v = Vec::new();
            for z in 0..grid[2] {
                for y in 0..grid[1] {
                    for x in 0..grid[0] {
                        v.push([x, y, z]);
                    }
                }
            }
            v
        }
    }
}
