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

use ptxeq_exec::{
    CtaInput, Finding, GlobalFootprint, Opaque, Stats, Trace, check_cross_cta, run_cta,
};
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
}

impl UnrolledCta {
    /// Whether some finding of `kind` was reported.
    pub fn has(&self, kind: ptxeq_exec::FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == kind)
    }
}

/// Unrolls CTA `cta` with opaque data.
pub fn unroll(input: &CtaInput, cta: [u32; 3]) -> UnrolledCta {
    let (run, _) = run_cta(input, cta, Opaque::new());
    UnrolledCta {
        cta,
        findings: run.findings,
        dropped_findings: run.dropped_findings,
        stats: run.stats,
        footprint: run.footprint,
        trace: run.trace,
    }
}

/// Unrolls several CTAs in parallel and checks that their global
/// footprints are disjoint (cross-CTA races are returned separately).
pub fn unroll_ctas(input: &CtaInput, ctas: &[[u32; 3]]) -> (Vec<UnrolledCta>, Vec<Finding>) {
    use rayon::prelude::*;
    let runs: Vec<UnrolledCta> = ctas.par_iter().map(|&c| unroll(input, c)).collect();
    let fps: Vec<GlobalFootprint> = runs.iter().map(|r| r.footprint.clone()).collect();
    let cross = if runs.len() > 1 {
        check_cross_cta(&fps)
    } else {
        Vec::new()
    };
    (runs, cross)
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
