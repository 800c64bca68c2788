//! The state of one CTA: its threads (registers, frames, status, tracer),
//! its `bar.sync` barriers and warp collectives, its mbarriers and its
//! asynchronous units (`cp.async` groups, `wgmma` warpgroups, wmma layout
//! tags, generic→async proxy fences).
//!
//! Everything here belongs to exactly one CTA. The engine runs one CTA at
//! a time today; a scheduling unit of several CTAs (a multi-CTA cluster,
//! `grid.sync`) holds one `CtaState` per CTA next to one global memory
//! and one race detector (see ARCHITECTURE.md, "Engine state").

use super::{Barrier, Thread, WarpState, async_copy, mbarrier, proxy, wgmma, wmma_check};

/// One CTA's threads, barriers, collectives and async units.
pub(crate) struct CtaState<V: Copy> {
    /// The CTA's id in the grid.
    pub id: [u32; 3],
    pub nthreads: u32,
    pub nwarps: u32,
    /// Per thread, by linear index: registers, frames, status, tracer.
    pub threads: Vec<Thread<V>>,
    /// The 16 `bar.sync` / `barrier` named barriers.
    pub bars: Vec<Barrier<V>>,
    /// Per warp: pending warp collectives (`sync.rs`).
    pub warps: Vec<WarpState<V>>,
    /// Per warp: lanes that have not exited.
    pub live: Vec<u32>,
    /// mbarrier objects (`mbarrier.rs`).
    pub mbars: mbarrier::Mbarriers,
    /// Outstanding `cp.async` copies (`async_copy.rs`).
    pub asyncs: async_copy::AsyncCopies,
    /// `wgmma` warpgroup rendezvous, groups and busy registers.
    pub wg: wgmma::WgmmaState<V>,
    /// wmma instances per warp (layout tags, `wmma_check`).
    pub wmma: wmma_check::WmmaState,
    /// Generic-proxy writes awaiting `fence.proxy.async` (`proxy.rs`).
    pub proxy: proxy::ProxyState,
}
