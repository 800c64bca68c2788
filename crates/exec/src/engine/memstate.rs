//! The memory the engine lays out for a run: the CTA-wide regions
//! (tensors, module and function variables in global / shared / const
//! space, the kernel-param block), their byte contents, race shadows and
//! footprints, the address lookup and the meter of touched-memory state.
//!
//! Per-thread regions (`.local`, call params) live with their thread
//! ([`super::Thread::private`]). Addresses are resolved and accesses made
//! by `mem.rs`; this struct only owns the state.

use crate::footprint::FootprintBuilder;
use crate::memory::{Region, Slot, Slots, Space};
use crate::race::ShadowMem;
use crate::sparse::Meter;

/// The CTA-wide memory regions and the per-byte state kept for them.
pub(crate) struct MemState<V: Copy> {
    /// CTA-wide regions, by region index.
    pub(super) regions: Vec<Region>,
    /// Per region: its bytes.
    pub(super) slots: Vec<Slots<V>>,
    /// Per region: the race shadow (global and shared regions that can
    /// be written).
    pub(super) shadows: Vec<Option<ShadowMem>>,
    /// Per region: the footprint (written tensors).
    pub(super) footprints: Vec<Option<FootprintBuilder>>,
    /// Per space (global, shared, const, param): sorted `(base, end, region)`.
    pub(super) lookup: [Vec<(u64, u64, u32)>; 4],
    /// Per function: VarId → CTA-wide region.
    pub(super) var_region: Vec<Vec<Option<u32>>>,
    /// The kernel-param region and each param's offset in it.
    pub(super) param_region: u32,
    pub(super) param_offsets: Vec<u64>,
    /// Heap bytes of the per-byte state of touched memory (contents,
    /// shadows, footprints), checked against `max_memory_state_bytes`.
    pub(super) meter: Meter,
}

/// A global region's contents and shadow while another CTA's engine does
/// not hold them (a grid-level run hands them from CTA to CTA).
pub(crate) type HeldGlobal<V> = (Slots<V>, Option<ShadowMem>);

impl<V: Copy> MemState<V> {
    /// Region `r` and its bytes.
    pub(crate) fn region(&self, r: usize) -> Option<(&Region, &Slots<V>)> {
        Some((self.regions.get(r)?, self.slots.get(r)?))
    }

    /// The bytes of region `r`, to write them.
    pub(crate) fn slots_mut(&mut self, r: usize) -> Option<&mut Slots<V>> {
        self.slots.get_mut(r)
    }

    /// The race shadow of region `r`, if it has one.
    pub(crate) fn shadow_mut(&mut self, r: usize) -> Option<&mut ShadowMem> {
        self.shadows.get_mut(r)?.as_mut()
    }

    /// Takes over the global regions' contents and shadows in `held` (by
    /// region index; a `None` entry keeps this engine's own). Every
    /// global shadow then keeps what later CTAs can race with.
    pub(crate) fn adopt_globals(&mut self, held: &mut Vec<Option<HeldGlobal<V>>>) {
        if held.is_empty() {
            *held = (0..self.regions.len()).map(|_| None).collect();
        }
        for r in 0..self.regions.len() {
            if self.regions[r].space != Space::Global {
                continue;
            }
            if let Some((s, sh)) = held.get_mut(r).and_then(Option::take) {
                self.slots[r] = s;
                self.shadows[r] = sh;
            }
            if let Some(sh) = self.shadows[r].as_mut() {
                // Later CTAs still come: keep what they can race with.
                sh.private = false;
            }
        }
    }

    /// Gives the global regions' contents and shadows back into `held`.
    pub(crate) fn release_globals(&mut self, held: &mut [Option<HeldGlobal<V>>]) {
        for r in 0..self.regions.len() {
            if self.regions[r].space != Space::Global {
                continue;
            }
            let s = std::mem::replace(&mut self.slots[r], Slots::new(0, Slot::Unwritten));
            let sh = self.shadows[r].take();
            if let Some(x) = held.get_mut(r) {
                *x = Some((s, sh));
            }
        }
    }
}
