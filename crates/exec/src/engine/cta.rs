//! The state of one CTA: its threads (registers, frames, status, tracer),
//! its `bar.sync` barriers and warp collectives, its mbarriers and its
//! asynchronous units (`cp.async` groups, `wgmma` warpgroups, wmma layout
//! tags, generic→async proxy fences).
//!
//! Everything here belongs to exactly one CTA. The engine runs one CTA at
//! a time today; a scheduling unit of several CTAs (a multi-CTA cluster,
//! `grid.sync`) holds one `CtaState` per CTA next to one global memory
//! and one race detector (see ARCHITECTURE.md, "Engine state").

use super::{Barrier, Thread, WarpState, async_copy, mbarrier, proxy, tmem, wgmma, wmma_check};

/// One CTA's threads, barriers, collectives and async units.
pub(crate) struct CtaState<V: Copy> {
    /// The CTA's id in the grid.
    pub(super) id: [u32; 3],
    pub(super) nthreads: u32,
    pub(super) nwarps: u32,
    /// Per thread, by linear index: registers, frames, status, tracer.
    pub(super) threads: Vec<Thread<V>>,
    /// The 16 `bar.sync` / `barrier` named barriers.
    pub(super) bars: Vec<Barrier<V>>,
    /// Per warp: pending warp collectives (`sync.rs`).
    pub(super) warps: Vec<WarpState<V>>,
    /// Per warp: lanes that have not exited.
    pub(super) live: Vec<u32>,
    /// mbarrier objects (`mbarrier.rs`).
    pub(super) mbars: mbarrier::Mbarriers,
    /// Outstanding `cp.async` copies (`async_copy.rs`).
    pub(super) asyncs: async_copy::AsyncCopies,
    /// `wgmma` warpgroup rendezvous, groups and busy registers.
    pub(super) wg: wgmma::WgmmaState<V>,
    /// wmma instances per warp (layout tags, `wmma_check`).
    pub(super) wmma: wmma_check::WmmaState,
    /// Generic-proxy writes awaiting `fence.proxy.async` (`proxy.rs`).
    pub(super) proxy: proxy::ProxyState,
    /// Tensor Memory allocation and tcgen05 state (`tmem.rs`).
    pub(super) tmem: tmem::TmemState,
}
