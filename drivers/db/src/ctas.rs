//! `kernel_ctas`: the CTAs one kernel of a spec runs — from its own
//! launch (`[reference.launch]` / `[candidate.launch]` over `[launch]`) —
//! and what they cover. `ctas = "auto"` selects, per kernel, the CTAs
//! whose global writes meet the compared elements (`ptxeq-ctas`: every
//! CTA's store-address slice), so kernels with different tilings of the
//! same region run different CTAs; the verdict pass merges each kernel's
//! outputs over its own CTAs.

use std::sync::Arc;

use ptxeq_ctas::{ScanLimits, Selection};
use ptxeq_spec::{CheckSpec, Ctas, Launch};

use crate::Db;
use crate::kernel_check::{KernelSlot, cta_input, kernel_ref};

/// The CTAs a kernel runs and what they cover.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CtaPlan {
    /// The kernel's launch (shared `[launch]` with its own keys over it).
    pub launch: Launch,
    pub ctas: Vec<[u32; 3]>,
    /// Whether `ctas` include every CTA of this kernel that writes a
    /// compared element (the whole grid, or an `auto` selection).
    pub covers: bool,
    /// The `auto` selection, when one was made.
    pub selection: Option<Selection>,
    /// How the CTAs were chosen, in words (for the report).
    pub how: String,
    /// The number of CTAs the launch asks for when it is over the spec's
    /// `max_ctas` bound: nothing was listed or runs (`ctas` is empty).
    pub refused: Option<u64>,
}

impl CtaPlan {
    /// CTAs in the grid.
    pub fn grid_ctas(&self) -> u64 {
        self.launch.grid_ctas()
    }

    /// What the verdict assumes about the CTAs not run (empty when every
    /// CTA ran).
    pub fn assumptions(&self) -> Vec<String> {
        let total = self.grid_ctas();
        let run = self.ctas.len() as u64;
        if run >= total {
            return Vec::new();
        }
        let mut out = vec![format!(
            "the other {} CTA(s) of the grid were not run: not race-checked, their writes not \
             compared",
            total - run
        )];
        if let Some(sel) = &self.selection {
            out.push(match &sel.method {
                ptxeq_ctas::Method::Sliced { .. } => {
                    "ctas = \"auto\" selected the CTAs whose store-address slice (every \
                     instruction a global store's address or execution depends on) writes a \
                     compared element: exact for a run that terminates"
                        .into()
                }
                ptxeq_ctas::Method::Whole { .. } => {
                    "ctas = \"auto\" selected the CTAs whose address-level run writes a compared \
                     element"
                        .into()
                }
                ptxeq_ctas::Method::NotScanned { .. } => {
                    "ctas = \"auto\" did not scan the grid (over the scan limit): every CTA runs"
                        .into()
                }
            });
            for (cta, why) in &sel.unsure {
                out.push(format!(
                    "CTA ({},{},{}) is run because its scan did not complete: {why}",
                    cta[0], cta[1], cta[2]
                ));
            }
            out.push(
                "the CTAs not run are assumed to write nothing the CTAs run read (CTAs do not \
                 synchronise; a write they read would be a cross-CTA race, not checked for CTAs \
                 not run)"
                    .into(),
            );
        }
        out
    }
}

/// Per tensor number, its `compare` box (`None`: the whole tensor).
pub fn compare_regions(spec: &CheckSpec) -> Vec<Option<Vec<[u64; 2]>>> {
    spec.tensors.values().map(|t| t.compare.clone()).collect()
}

/// `ctas` with every CTA of their clusters of `shape` (the clusters in
/// the order of their first selected CTA, each in rank order).
/// CTAs outside `grid` are not added.
fn whole_clusters(ctas: &[[u32; 3]], shape: [u32; 3], grid: [u32; 3]) -> Vec<[u32; 3]> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(ctas.len());
    for c in ctas {
        let base = [0, 1, 2].map(|d| c[d] / shape[d] * shape[d]);
        if !seen.insert(base) {
            continue;
        }
        for z in 0..shape[2] {
            for y in 0..shape[1] {
                for x in 0..shape[0] {
                    let m = [base[0] + x, base[1] + y, base[2] + z];
                    if (0..3).all(|d| m[d] < grid[d]) || m == *c {
                        out.push(m);
                    }
                }
            }
        }
    }
    out
}

/// The CTAs kernel `k` runs.
#[salsa::tracked(returns(ref))]
pub fn kernel_ctas<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Arc<CtaPlan> {
    let spec = k.spec(db).spec(db);
    let launch =
        kernel_ref(spec, k.slot(db)).map_or_else(|| spec.launch.clone(), |r| r.launch.clone());
    let total = launch.grid_ctas();
    let max = spec.limits.max_ctas;
    let all = || ptxeq_ctas::all_ctas(launch.grid);
    // The CTAs of a multi-CTA cluster run co-scheduled (they wait for
    // each other and read each other's shared memory): a selected CTA
    // brings its whole cluster.
    let cluster = cta_input(db, k).as_ref().ok().and_then(|i| i.cluster);
    let plan = |ctas: Vec<[u32; 3]>, selection: Option<Selection>, how: String| {
        let (ctas, how) = match cluster {
            Some(shape) if shape.iter().product::<u32>() > 1 => {
                let whole = whole_clusters(&ctas, shape, launch.grid);
                if whole.len() == ctas.len() {
                    (whole, how)
                } else {
                    let n = whole.len() - ctas.len();
                    let how =
                        format!("{how}, with the {n} other CTA(s) of their clusters of {shape:?}");
                    if whole.len() as u64 > max {
                        // The clusters took the run over the CTA bound.
                        return Arc::new(CtaPlan {
                            launch: launch.clone(),
                            ctas: Vec::new(),
                            covers: false,
                            selection: None,
                            how: format!("{how}: {} CTAs, over the limit of {max}", whole.len()),
                            refused: Some(whole.len() as u64),
                        });
                    }
                    (whole, how)
                }
            }
            _ => (ctas, how),
        };
        let covers = selection.is_some() || ctas.len() as u64 == total;
        Arc::new(CtaPlan {
            launch: launch.clone(),
            ctas,
            covers,
            selection,
            how,
            refused: None,
        })
    };
    // Refused before anything is listed: a launch over the CTA bound.
    let refuse = |n: u64, how: &str| {
        Arc::new(CtaPlan {
            launch: launch.clone(),
            ctas: Vec::new(),
            covers: false,
            selection: None,
            how: format!("{how}: {n} CTAs, over the limit of {max}"),
            refused: Some(n),
        })
    };
    let asked = launch.asked_ctas();
    let auto_takes_all = matches!(launch.ctas, Ctas::Auto)
        && (compare_regions(spec).iter().all(Option::is_none) || total > launch.scan_limit());
    if asked > max && (!matches!(launch.ctas, Ctas::Auto) || auto_takes_all) {
        return refuse(asked, "refused");
    }
    match &launch.ctas {
        Ctas::First => plan(vec![[0, 0, 0]], None, "ctas = \"first\"".into()),
        Ctas::All => plan(all(), None, "ctas = \"all\"".into()),
        Ctas::List(l) => plan(
            l.clone(),
            None,
            format!("ctas = a list of {} CTA id(s)", l.len()),
        ),
        Ctas::Auto => {
            let regions = compare_regions(spec);
            if regions.iter().all(Option::is_none) {
                return plan(
                    all(),
                    None,
                    "ctas = \"auto\" without a `compare` region: every CTA".into(),
                );
            }
            let Ok(input) = cta_input(db, k) else {
                // The binding error is the verdict; nothing runs.
                return plan(
                    all(),
                    None,
                    "ctas = \"auto\" (the spec does not bind)".into(),
                );
            };
            let _span = tracing::info_span!("select_ctas").entered();
            let sel = ptxeq_ctas::select(
                input,
                &regions,
                ScanLimits {
                    max_ctas: launch.scan_limit(),
                },
            );
            let how = sel.describe(launch.grid);
            let ctas = sel.ctas.clone();
            if ctas.len() as u64 > max {
                return refuse(ctas.len() as u64, "ctas = \"auto\" selected too many");
            }
            // No CTA writes the region: this kernel runs nothing (the report
            // lists no CTA, and the other kernel's writes there are
            // differences).
            if ctas.is_empty() {
                return Arc::new(CtaPlan {
                    launch: launch.clone(),
                    ctas: Vec::new(),
                    covers: true,
                    selection: Some(sel),
                    how,
                    refused: None,
                });
            }
            plan(ctas, Some(sel), how)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::whole_clusters;

    #[test]
    fn a_selected_cta_brings_its_whole_cluster_in_rank_order() {
        // 2x2 clusters on a 4x2 grid: CTA (3,1) is rank 3 of the cluster
        // based at (2,0); (0,0) and (1,0) share one cluster.
        let got = whole_clusters(&[[3, 1, 0], [0, 0, 0], [1, 0, 0]], [2, 2, 1], [4, 2, 1]);
        assert_eq!(
            got,
            vec![
                [2, 0, 0],
                [3, 0, 0],
                [2, 1, 0],
                [3, 1, 0],
                [0, 0, 0],
                [1, 0, 0],
                [0, 1, 0],
                [1, 1, 0],
            ]
        );
        // Clusters of one CTA change nothing.
        assert_eq!(
            whole_clusters(&[[1, 0, 0]], [1, 1, 1], [4, 1, 1]),
            vec![[1, 0, 0]]
        );
    }
}
