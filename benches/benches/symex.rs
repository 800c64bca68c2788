//! Symbolic execution speed (issue 4): `unroll` (opaque data: control flow,
//! schedule, race detection) and `symbolic_state` (the replay with terms)
//! on the largest corpus GEMM and attention kernels, in thread-instructions
//! per second (goal: ≥ 20M per core).

use divan::Bencher;
use divan::counter::ItemsCount;

fn main() {
    divan::main();
}

const CASES: &[&str] = &[
    "attention/fa2-q16-kv512",
    "sgemm/warptiling-64",
    "sgemm/blocktiling-2d-64",
    "softmax/naive-vs-online-n128",
];

#[divan::bench(args = CASES, sample_count = 5)]
fn unroll(bencher: Bencher<'_, '_>, case: &str) {
    let inputs = ptxeq_benches::case_inputs(case);
    let steps: u64 = inputs
        .iter()
        .map(|i| {
            ptxeq_unroll::unroll(i, [0, 0, 0])
                .stats
                .instructions_executed
        })
        .sum();
    bencher.counter(ItemsCount::new(steps)).bench(|| {
        for i in &inputs {
            divan::black_box(ptxeq_unroll::unroll(i, [0, 0, 0]));
        }
    });
}

#[divan::bench(args = CASES, sample_count = 5)]
fn symbolic_state(bencher: Bencher<'_, '_>, case: &str) {
    let inputs = ptxeq_benches::case_inputs(case);
    let unrolled: Vec<_> = inputs
        .iter()
        .map(|i| ptxeq_unroll::unroll(i, [0, 0, 0]))
        .collect();
    let steps: u64 = unrolled.iter().map(|u| u.stats.instructions_executed).sum();
    bencher.counter(ItemsCount::new(steps)).bench(|| {
        for (i, u) in inputs.iter().zip(&unrolled) {
            divan::black_box(ptxeq_symex::symbolic_state(i, u));
        }
    });
}
