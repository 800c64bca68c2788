//! The state of one CTA: its threads (registers, frames, status, tracer),
//! its `bar.sync` barriers and warp collectives, its mbarriers and its
//! asynchronous units (`cp.async` groups, `wgmma` warpgroups, wmma layout
//! tags, generic→async proxy fences).
//!
//! Everything here belongs to exactly one CTA. The engine runs one CTA at
//! a time today; a scheduling unit of several CTAs (a multi-CTA cluster,
//! `grid.sync`) holds one `CtaState` per CTA next to one global memory
//! and one race detector (see ARCHITECTURE.md, "Engine state").

use super::{
    Barrier, Status, Thread, WarpState, async_copy, budget, mbarrier, proxy, wgmma, wmma_check,
};
use crate::funcinfo::FuncInfo;
use crate::input::CtaInput;
use crate::memory::PRIVATE_START;
use crate::trace::ThreadTracer;

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
}

impl<V: Copy> CtaState<V> {
    /// CTA `id` of the launch `input` before its first instruction: every
    /// thread ready with no frame yet (the engine pushes the kernel's
    /// frames), barriers and async units empty. The caller has checked
    /// the thread count (1 to 1024).
    pub(super) fn new(input: &CtaInput, funcs: &[FuncInfo], id: [u32; 3]) -> Self {
        let nthreads = input.threads() as u32;
        let nwarps = nthreads.div_ceil(32);
        let [bx, by, _] = input.block;
        let threads = (0..nthreads)
            .map(|l| Thread {
                tid: [l % bx, (l / bx) % by, l / (bx * by)],
                linear: l,
                frames: Vec::new(),
                status: Status::Ready,
                carry: false,
                private: Vec::new(),
                cursor_local: PRIVATE_START,
                cursor_param: PRIVATE_START,
                last_arrival: [None; 16],
                tracer: ThreadTracer::start(0, 0),
                back_edges: budget::BackEdges::default(),
            })
            .collect();
        let mut live = vec![u32::MAX; nwarps as usize];
        if !nthreads.is_multiple_of(32) {
            live[nwarps as usize - 1] = (1u32 << (nthreads % 32)) - 1;
        }
        let async_readers = funcs.iter().any(|f| proxy::has_async_proxy_reads(&f.ir));
        CtaState {
            id,
            nthreads,
            nwarps,
            threads,
            bars: (0..16).map(|_| Barrier::new(nwarps as usize)).collect(),
            warps: (0..nwarps).map(|_| WarpState::default()).collect(),
            live,
            mbars: mbarrier::Mbarriers::default(),
            asyncs: async_copy::AsyncCopies::new(nthreads as usize),
            wg: wgmma::WgmmaState::new(nthreads as usize, funcs.iter().map(|f| &*f.ir)),
            wmma: wmma_check::WmmaState::new(nwarps as usize),
            proxy: proxy::ProxyState::new(async_readers, nthreads as usize),
        }
    }
}
