//! The execution core of ptxeq: an interpreter for one CTA of a PTX
//! kernel, generic over a data [`Domain`].
//!
//! Everything concrete — integers, addresses, predicates, control flow,
//! the schedule, barriers, warp collectives — is executed exactly, per
//! PTX; every operation on real-valued tensor data goes to the domain. On
//! the way the engine judges races (vector clocks, docs/semantics.md §10),
//! deadlocks, barrier divergence and recycling, out-of-bounds and
//! uninitialised accesses, and stops with an `Unsupported` finding naming
//! the instruction at anything outside the modelled class (a branch on
//! tensor data, bit manipulation of a real value, Hopper asynchronous
//! and tensor-core instructions, ...). Ampere tensor cores (`mma`,
//! `ldmatrix`, `wmma`, ...) are warp collectives and `cp.async` copies
//! are in flight until their wait (`engine/matrix.rs`,
//! `engine/async_copy.rs`).
//!
//! Entry points: [`run_cta`] (one CTA with any domain),
//! [`run_cta_with_coverage`] (the same, recording [`Coverage`]), [`replay`]
//! (a second run checked against an earlier trace), [`run_grid`] (several
//! CTAs over one global memory, judged like threads of one CTA; the ticket
//! pattern explored), [`check_cross_cta`] (global-memory disjointness of
//! several CTAs' footprints; superseded by `run_grid`, which the db uses).
//!
//! # Conventions (printed with every report by the caller)
//!
//! - Real semantics (docs/semantics.md §2): rounding modes, `.ftz`, `.sat` on
//!   reals, `.satfinite` and f16/bf16/f32/f64 conversions are the identity
//!   on the real value; `.relu` is `max(x, 0)`; unordered comparisons equal
//!   the ordered ones; integer→float conversion gives the exact integer.
//!   bf16↔f32 through register halves (`mov.b32 %f, {0, %h}`, the high
//!   half of an f32) is recognised as the same conversion.
//! - Addresses are integers in a synthetic address map (`memory`): every
//!   region 1 MiB-aligned (64 GiB slots in global space) with gaps, so
//!   address arithmetic and alignment tests behave as on a GPU and a stray
//!   access lands in a gap (out of bounds) unless it strays by more than the
//!   gap. Distinct pointer params never alias.
//! - Schedule: FIFO round-robin, each thread runs until it blocks; races
//!   are judged by happens-before (vector clocks), so the verdict does not
//!   depend on this order; uninitialised reads are judged on this schedule
//!   (and dropped when the reading instruction also races).
//! - `%warpid` = linear thread id / 32, `%nwarpid` = warps in the CTA,
//!   `%total_smem_size` = static + dynamic shared bytes, `%activemask` =
//!   the lanes that reach the same `activemask` before the warp blocks
//!   elsewhere; clusters are 1×1×1.
//! - Barriers count warps (PTX): a warp arrives when all its non-exited
//!   lanes did; exited warps count for default-count barriers;
//!   `bar.arrive` waits for its own warp. Fences order nothing within a
//!   CTA; across CTAs they form release/acquire patterns with a ticket
//!   atomic (`grid`, docs/semantics.md §8).
//! - Input-only tensors are read-only: a store to one is unsupported
//!   (their reads are therefore not race-tracked).

mod bindings;
mod concrete;
mod coverage;
mod domain;
mod engine;
mod finding;
mod footprint;
mod funcinfo;
mod grid;
mod ieee;
mod input;
pub mod int;
mod layout_tags;
mod memory;
pub mod narrow;
mod opaque;
mod race;
mod result;
pub mod sparse;
mod trace;
mod value;

pub use bindings::{
    Bindings, BoundFunction, BoundGlobal, BoundOp, FieldKind, FieldValue, GlobalContents, OobFill,
    Swizzle, TensorMapBinding, TensorMapGeometry, TensorMapHolder, initialised_vars_read,
    unmangled,
};
pub use concrete::{CVal, Concrete, float_bits_to_f64};
pub use coverage::Coverage;
pub use domain::{BinOp, BoolOp, Cmp, Domain, Fmt, IntOp, IntRounding, UnOp};
pub use finding::{
    AccessKind, AccessRef, Finding, FindingKind, InstrRef, MemLocation, ThreadRef, WaitGroup,
    format_ranges, thread_ranges,
};
pub use footprint::{GlobalFootprint, Interval, TensorFootprint, check_cross_cta};
pub use grid::{GridRun, run_grid};
pub use ieee::{FpMode, IVal, Ieee, Rnd, mode_of, round_f64, round_int};
pub use input::{CtaInput, Limits, ParamValue, Role, SymbolInfo, TensorInfo};
pub use layout_tags::LayoutTag;
pub use opaque::{ExtReal, OVal, Opaque, decode_float};
pub use result::{CtaRun, OutputValue, Stats, StoreSite, TensorOutput};
pub use trace::{ReplayMismatch, Segment, ThreadTrace, Trace};
pub use value::{Part, Value, mask_bits};

/// Runs CTA `cta` of the launch described by `input` with `domain`.
///
/// Returns the run and the domain (which, for the term domain, holds the
/// terms the outputs refer to). A kernel with `wmma` instructions runs in
/// the layout-tagging wrapper of `domain` (`layout_tags`), which checks
/// that its use of fragment elements does not depend on the fragment
/// layout; the run handed back carries the plain values.
pub fn run_cta<D: Domain>(input: &CtaInput, cta: [u32; 3], domain: D) -> (CtaRun<D::Val>, D) {
    run_cta_judging(input, cta, domain, true)
}

/// [`run_cta`]; with `judge_races` false, no race shadows are kept: a
/// replay of a run whose races were already judged (see [`replay`]).
fn run_cta_judging<D: Domain>(
    input: &CtaInput,
    cta: [u32; 3],
    domain: D,
    judge_races: bool,
) -> (CtaRun<D::Val>, D) {
    if uses_wmma(input) {
        let (run, d) = run_engine(input, cta, layout_tags::Tagged::new(domain), judge_races);
        return (layout_tags::untag_run(run), d.inner);
    }
    run_engine(input, cta, domain, judge_races)
}

/// Whether any function of the launch has a `wmma` instruction: those
/// run in the layout-tagging wrapper, which only [`run_cta`] applies (a
/// caller that wants the check runs such a kernel CTA by CTA rather than
/// through [`run_grid`]).
pub fn uses_wmma(input: &CtaInput) -> bool {
    std::iter::once(&*input.kernel)
        .chain(input.funcs.iter().map(|f| &**f))
        .any(|f| {
            f.instrs
                .iter()
                .any(|i| matches!(i.instr, ptxeq_ir::Instr::Wmma(_)))
        })
}

fn run_engine<D: Domain>(
    input: &CtaInput,
    cta: [u32; 3],
    domain: D,
    judge_races: bool,
) -> (CtaRun<D::Val>, D) {
    match engine::Engine::new(input, cta, domain) {
        Ok(mut e) => {
            if !judge_races {
                e.drop_race_shadows();
            }
            e.run();
            let (mut run, d) = e.finish_with_domain();
            engine::drop_control_only_od(&mut run.findings);
            (run, d)
        }
        Err((f, d)) => (empty_run(cta, f, input), d),
    }
}

/// [`run_cta`], also recording which instructions ran, whether their
/// register results were read, and a fingerprint of every thread's memory
/// accesses ([`Coverage`]; off in [`run_cta`], so normal runs pay nothing
/// for it). Used by the mutation harness.
pub fn run_cta_with_coverage<D: Domain>(
    input: &CtaInput,
    cta: [u32; 3],
    domain: D,
) -> (CtaRun<D::Val>, D, Coverage) {
    match engine::Engine::new(input, cta, domain) {
        Ok(mut e) => {
            e.enable_coverage();
            e.run();
            let cov = e.take_coverage().unwrap_or_default();
            let (run, d) = e.finish_with_domain();
            (run, d, cov)
        }
        Err((f, d)) => (empty_run(cta, f, input), d, Coverage::default()),
    }
}

/// The run of a CTA whose work was done by another engine (a member of a
/// co-scheduled cluster): no findings, no trace.
pub(crate) fn empty_run_clean<V>(cta: [u32; 3], input: &CtaInput) -> CtaRun<V> {
    let mut r = empty_run(
        cta,
        Finding::new(FindingKind::Unsupported, String::new()),
        input,
    );
    r.findings.clear();
    r.stats.threads = 0;
    r
}

pub(crate) fn empty_run<V>(cta: [u32; 3], f: Finding, input: &CtaInput) -> CtaRun<V> {
    CtaRun {
        cta,
        findings: vec![f],
        dropped_findings: 0,
        stats: Stats {
            threads: input.threads().min(u64::from(u32::MAX)) as u32,
            ..Stats::default()
        },
        outputs: Vec::new(),
        footprint: GlobalFootprint {
            cta,
            tensors: Vec::new(),
        },
        trace: Trace::default(),
    }
}

/// Runs `cta` again with another domain and checks that it followed
/// `expected` exactly (same per-thread paths, same schedule). The engine
/// is deterministic, so a mismatch means the domains decided a branch
/// differently (e.g. one folded a data comparison to a constant).
///
/// Races are not judged again: the run that made `expected` judged every
/// access of this very schedule (the addresses are concrete and the same
/// in both runs), so the replay keeps no race shadows — on a GEMM's
/// replay their upkeep was about a tenth of the time. Deadlocks, bounds
/// and every other finding are still reported as the engine meets them.
pub fn replay<D: Domain>(
    input: &CtaInput,
    cta: [u32; 3],
    expected: &Trace,
    domain: D,
) -> Result<(CtaRun<D::Val>, D), ReplayMismatch> {
    let (run, d) = run_cta_judging(input, cta, domain, false);
    expected.check_replay(&run.trace)?;
    Ok((run, d))
}
