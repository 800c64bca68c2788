//! Pass: which CTAs of a grid write into the compared elements
//! (`ctas = "auto"`, issue 14).
//!
//! A check with `compare` regions needs, per kernel, every CTA that writes
//! a compared element — and, to stay affordable on a 64×64 grid of
//! 512-thread GEMM CTAs with a K = 4096 loop, not the others. [`select`]
//! runs every CTA of the grid on the kernel's store-address slice
//! ([`slice`]: the instructions that decide where global memory is
//! written, with the K loop, shared-memory staging and all float
//! arithmetic removed) with the opaque domain, and keeps the CTAs whose
//! global writes meet a compared region. The selection is exact for CTAs
//! whose sliced run completes, and over-approximates the rest: a CTA whose
//! sliced run reports anything (an unsupported construct, a resource
//! limit, a race between the slice's stores) is selected, with the reason.
//! A kernel the slice does not cover (calls, mbarriers, ...) is scanned
//! whole, which is exact but costs a full address-level run per CTA; a
//! grid over the scan limit is not scanned (every CTA is selected, and the
//! run is bounded as any "all" run).
//!
//! What the selection assumes is returned with it (the caller prints it):
//! CTAs not selected are not run, so they are neither race-checked nor
//! compared, and values they might write that selected CTAs read are not
//! modelled.

pub mod slice;

use std::sync::Arc;

use ptxeq_exec::{AccessKind, CtaInput, Opaque, run_cta};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use slice::{NotSliced, Slice};

/// Bounds of the selection scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScanLimits {
    /// CTAs a scan may run (each a sliced address-level run); a larger grid
    /// is not scanned and every CTA is selected.
    pub max_ctas: u64,
}

/// Default [`ScanLimits::max_ctas`]: a 1024×1024 grid.
pub const DEFAULT_MAX_SCAN_CTAS: u64 = 1 << 20;

impl Default for ScanLimits {
    fn default() -> Self {
        ScanLimits {
            max_ctas: DEFAULT_MAX_SCAN_CTAS,
        }
    }
}

/// How the CTAs were found.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Method {
    /// Every CTA ran the store-address slice.
    Sliced {
        /// Instructions of the entry kept, of `total`.
        kept: usize,
        total: usize,
    },
    /// Every CTA ran the whole kernel (the slice does not cover it).
    Whole { why: String },
    /// The grid is over the scan limit: every CTA is selected.
    NotScanned { grid_ctas: u64, limit: u64 },
}

/// The CTAs of one kernel whose global writes meet a compared region.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Selection {
    /// Sorted by (z, y, x).
    pub ctas: Vec<[u32; 3]>,
    pub method: Method,
    /// CTAs scanned.
    pub scanned: u64,
    /// CTAs selected because their scan did not complete, with the first
    /// finding's message (at most [`UNSURE_KEPT`] listed).
    pub unsure: Vec<([u32; 3], String)>,
    /// How many CTAs were selected that way.
    pub unsure_count: u64,
}

/// CTAs with an incomplete scan listed by name in a [`Selection`].
pub const UNSURE_KEPT: usize = 8;

impl Selection {
    /// One line for the report: how many CTAs, of how many, found how.
    pub fn describe(&self, grid: [u32; 3]) -> String {
        let total = grid_ctas(grid);
        let how = match &self.method {
            Method::Sliced { kept, total } => format!(
                "found by running every CTA's store-address slice ({kept} of {total} \
                 instructions kept)"
            ),
            Method::Whole { why } => {
                format!("found by an address-level run of every CTA (no slice: {why})")
            }
            Method::NotScanned { grid_ctas, limit } => format!(
                "not scanned: the grid has {grid_ctas} CTAs, over the scan limit of {limit} \
                 (--auto-scan-limit), so every CTA is selected"
            ),
        };
        let mut s = format!(
            "ctas = \"auto\": {} of {total} CTAs write into the compared elements ({how})",
            self.ctas.len()
        );
        if self.unsure_count > 0 {
            s.push_str(&format!(
                "; {} CTA(s) selected because their scan did not complete",
                self.unsure_count
            ));
        }
        s
    }
}

/// The number of CTAs of a grid.
pub fn grid_ctas(grid: [u32; 3]) -> u64 {
    grid.iter().map(|&d| u64::from(d)).product()
}

/// Every CTA id of `grid`, x fastest.
pub fn all_ctas(grid: [u32; 3]) -> Vec<[u32; 3]> {
    let mut v = Vec::with_capacity(grid_ctas(grid).min(1 << 24) as usize);
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                v.push([x, y, z]);
            }
        }
    }
    v
}

/// The CTAs of `input`'s grid whose global writes meet the compared
/// elements: for every output / inout tensor `t`, the box `regions[t]`
/// (one half-open range per dimension), or the whole tensor when it has
/// none (`None` or a missing entry).
pub fn select(
    input: &CtaInput,
    regions: &[Option<Vec<[u64; 2]>>],
    limits: ScanLimits,
) -> Selection {
    let total = grid_ctas(input.grid);
    if total > limits.max_ctas {
        return Selection {
            ctas: all_ctas(input.grid),
            method: Method::NotScanned {
                grid_ctas: total,
                limit: limits.max_ctas,
            },
            scanned: 0,
            unsure: Vec::new(),
            unsure_count: 0,
        };
    }
    let (scan_input, method) = match slice::slice(&input.kernel) {
        Ok(s) => {
            let method = Method::Sliced {
                kept: s.kept,
                total: input.kernel.instrs.len(),
            };
            let mut i = input.clone();
            i.kernel = Arc::new(s.kernel);
            (i, method)
        }
        Err(NotSliced(why)) => (input.clone(), Method::Whole { why }),
    };
    // Only addresses matter to the scan: values stored are not checked.
    let mut scan_input = scan_input;
    scan_input.limits.report_undefined_outputs = false;
    let ctas = all_ctas(input.grid);
    let verdicts: Vec<(bool, Option<String>)> = ctas
        .par_iter()
        .map(|&cta| scan_one(&scan_input, cta, regions))
        .collect();
    let mut out = Selection {
        ctas: Vec::new(),
        method,
        scanned: total,
        unsure: Vec::new(),
        unsure_count: 0,
    };
    for (cta, (hit, unsure)) in ctas.into_iter().zip(verdicts) {
        if let Some(why) = unsure {
            out.unsure_count += 1;
            if out.unsure.len() < UNSURE_KEPT {
                out.unsure.push((cta, why));
            }
            out.ctas.push(cta);
        } else if hit {
            out.ctas.push(cta);
        }
    }
    out
}

/// Whether CTA `cta` writes a compared element; `Some(why)` when its run
/// did not complete (then it counts as writing one).
fn scan_one(
    input: &CtaInput,
    cta: [u32; 3],
    regions: &[Option<Vec<[u64; 2]>>],
) -> (bool, Option<String>) {
    let (run, _) = run_cta(input, cta, Opaque::new());
    if let Some(f) = run.findings.first() {
        return (true, Some(f.message.clone()));
    }
    for fp in &run.footprint.tensors {
        let Some(t) = input.tensors.get(fp.tensor as usize) else {
            continue;
        };
        if !t.role.is_written() {
            continue;
        }
        let region = regions.get(fp.tensor as usize).and_then(|r| r.as_deref());
        let esize = t.dtype.size_bytes().max(1);
        for iv in &fp.intervals {
            if iv.kind == AccessKind::Read {
                continue;
            }
            let (first, end) = (iv.start / esize, iv.end.div_ceil(esize));
            if range_meets_box(first, end, &t.shape, region) {
                return (true, None);
            }
        }
    }
    (false, None)
}

/// Whether some flat (row-major) element index in `[first, end)` of a
/// tensor of `shape` lies in `region` (`None`: the whole tensor). Walks
/// the range one innermost row at a time.
pub fn range_meets_box(first: u64, end: u64, shape: &[u64], region: Option<&[[u64; 2]]>) -> bool {
    if first >= end {
        return false;
    }
    let Some(region) = region else {
        return true;
    };
    let (Some(&inner), Some(last)) = (shape.last(), region.last()) else {
        return false;
    };
    if inner == 0 {
        return false;
    }
    let mut at = first;
    while at < end {
        let row = at / inner;
        let col = at % inner;
        let row_end = ((row + 1) * inner).min(end);
        let col_end = col + (row_end - at);
        // The row's outer coordinates must all lie in the box.
        let outer = &shape[..shape.len() - 1];
        let outer_ok = ptxeq_spec::in_region(Some(&region[..region.len() - 1]), outer, row);
        if outer_ok && col < last[1] && col_end > last[0] {
            return true;
        }
        at = row_end;
    }
    false
}

#[cfg(test)]
mod tests;
