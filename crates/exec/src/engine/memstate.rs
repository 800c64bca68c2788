//! The memory the engine lays out for a run: the CTA-wide regions
//! (tensors, module and function variables in global / shared / const
//! space, the kernel-param block), their byte contents, race shadows and
//! footprints, the address lookup and the meter of touched-memory state.
//!
//! Per-thread regions (`.local`, call params) live with their thread
//! ([`super::Thread::private`]). Addresses are resolved and accesses made
//! by `mem.rs`; this struct only owns the state.

use crate::footprint::FootprintBuilder;
use crate::memory::{Region, Slots};
use crate::race::ShadowMem;
use crate::sparse::Meter;

/// The CTA-wide memory regions and the per-byte state kept for them.
pub(crate) struct MemState<V: Copy> {
    /// CTA-wide regions, by region index.
    pub regions: Vec<Region>,
    /// Per region: its bytes.
    pub slots: Vec<Slots<V>>,
    /// Per region: the race shadow (global and shared regions that can
    /// be written).
    pub shadows: Vec<Option<ShadowMem>>,
    /// Per region: the footprint (written tensors).
    pub footprints: Vec<Option<FootprintBuilder>>,
    /// Per space (global, shared, const, param): sorted `(base, end, region)`.
    pub lookup: [Vec<(u64, u64, u32)>; 4],
    /// Per function: VarId → CTA-wide region.
    pub var_region: Vec<Vec<Option<u32>>>,
    /// The kernel-param region and each param's offset in it.
    pub param_region: u32,
    pub param_offsets: Vec<u64>,
    /// Heap bytes of the per-byte state of touched memory (contents,
    /// shadows, footprints), checked against `max_memory_state_bytes`.
    pub meter: Meter,
}
