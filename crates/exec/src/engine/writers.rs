//! Store provenance: for every element of a written (output / inout)
//! tensor, the instruction and thread whose store or atomic wrote its
//! final value. A refuted element's report names that store in both
//! kernels (PTX line, source line); the table is filled on the store path
//! (`Engine::store_with`, `Engine::finish_atomic`) and read once when the
//! outputs are collected.
//!
//! Cost: one hash-map insert per store into an output tensor (stores are
//! a small share of the instructions a kernel executes; the hot paths —
//! arithmetic, hash-consing — are untouched).

use rustc_hash::FxHashMap;

use crate::result::StoreSite;

/// Per CTA-wide region, the last writer of each element (only for the
/// regions of written tensors).
#[derive(Default)]
pub(crate) struct Writers {
    /// By region index: the element size in bytes and, per element, the
    /// store that last wrote it. A grid-level run hands the table from CTA
    /// to CTA with the global memory (`crate::grid`).
    regions: Vec<Option<(u64, FxHashMap<u64, StoreSite>)>>,
}

impl Writers {
    /// A table for the tensors of `input`: region `i` is tensor `i`.
    pub fn new(input: &crate::input::CtaInput) -> Self {
        Writers {
            regions: input
                .tensors
                .iter()
                .map(|t| {
                    t.role
                        .is_written()
                        .then(|| (t.dtype.size_bytes().max(1), FxHashMap::default()))
                })
                .collect(),
        }
    }

    /// Whether stores into region `region` are recorded.
    #[inline]
    pub fn wants(&self, region: u32) -> bool {
        matches!(self.regions.get(region as usize), Some(Some(_)))
    }

    /// Records that `site` wrote bytes `[off, off + width)` of region
    /// `region`.
    pub fn note(&mut self, region: u32, off: u64, width: u64, site: StoreSite) {
        let Some(Some((es, map))) = self.regions.get_mut(region as usize) else {
            return;
        };
        let es = *es;
        for e in off / es..(off + width.max(1)).div_ceil(es) {
            map.insert(e, site);
        }
    }

    /// The writers of tensor `tensor`'s elements, sorted by index.
    pub fn of(&self, tensor: usize) -> Vec<(u64, StoreSite)> {
        let Some(Some((_, map))) = self.regions.get(tensor) else {
            return Vec::new();
        };
        let mut out: Vec<(u64, StoreSite)> = map.iter().map(|(&e, &s)| (e, s)).collect();
        out.sort_unstable_by_key(|w| w.0);
        out
    }
}
