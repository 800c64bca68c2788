//! `ctas = "auto"` (issue 14): the cost of finding the CTAs that write the
//! compared region. `select` scans every CTA of each kernel's grid on its
//! store-address slice; `sliced_cta` / `whole_cta` compare one CTA's
//! sliced run with its whole address-level run (thread-instructions per
//! run: the slice's count does not grow with K).

use std::sync::Arc;

use divan::Bencher;
use divan::counter::ItemsCount;
use ptxeq_exec::{CtaInput, Opaque, run_cta};

fn main() {
    divan::main();
}

const CASES: &[&str] = &[
    "generality/sgemm-launch-auto-t64",
    "generality/sgemm-auto-whole-t128",
];

fn regions(case: &str) -> Vec<Option<Vec<[u64; 2]>>> {
    let path = ptxeq_benches::repo_root()
        .join("corpus")
        .join(case)
        .join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("corpus spec loads");
    spec.tensors.values().map(|t| t.compare.clone()).collect()
}

#[divan::bench(args = CASES, sample_count = 5)]
fn select(bencher: Bencher<'_, '_>, case: &str) {
    let inputs = ptxeq_benches::case_inputs(case);
    let regions = regions(case);
    let ctas: u64 = inputs.iter().map(|i| ptxeq_ctas::grid_ctas(i.grid)).sum();
    bencher.counter(ItemsCount::new(ctas)).bench(|| {
        for i in &inputs {
            divan::black_box(ptxeq_ctas::select(
                i,
                &regions,
                ptxeq_ctas::ScanLimits::default(),
            ));
        }
    });
}

fn sliced(i: &CtaInput) -> CtaInput {
    let mut s = i.clone();
    s.kernel = Arc::new(
        ptxeq_ctas::slice::slice(&i.kernel)
            .expect("the GEMM kernels slice")
            .kernel,
    );
    s
}

fn steps(i: &CtaInput) -> u64 {
    run_cta(i, [0, 0, 0], Opaque::new())
        .0
        .stats
        .instructions_executed
}

#[divan::bench(args = CASES, sample_count = 5)]
fn sliced_cta(bencher: Bencher<'_, '_>, case: &str) {
    let inputs: Vec<CtaInput> = ptxeq_benches::case_inputs(case)
        .iter()
        .map(sliced)
        .collect();
    let n: u64 = inputs.iter().map(steps).sum();
    bencher.counter(ItemsCount::new(n)).bench(|| {
        for i in &inputs {
            divan::black_box(run_cta(i, [0, 0, 0], Opaque::new()));
        }
    });
}

#[divan::bench(args = CASES, sample_count = 5)]
fn whole_cta(bencher: Bencher<'_, '_>, case: &str) {
    let inputs = ptxeq_benches::case_inputs(case);
    let n: u64 = inputs.iter().map(steps).sum();
    bencher.counter(ItemsCount::new(n)).bench(|| {
        for i in &inputs {
            divan::black_box(run_cta(i, [0, 0, 0], Opaque::new()));
        }
    });
}
