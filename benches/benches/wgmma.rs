//! Hopper wgmma GEMM tiles (issue 15): a cold equivalence check (fresh
//! database, no disk cache) of the 64×64×64 f16 → f32 tile, every one of
//! its 4096 output elements, against the scalar reference — operands
//! staged by bulk copies + mbarrier (`wgmma-bulk-gemm-tn`), by generic
//! stores (`wgmma-ld-gemm-tn`) and in the 128-byte-swizzle layout
//! (`wgmma-sw128-gemm-tn`), and the warp-specialised pipelined tile
//! (`tma-wgmma-pipeline-gemm-tn`: 64×64, K = 256 through a 2-stage
//! TMA + full/empty mbarrier ring, producer and consumer warpgroups), and
//! its CUTLASS-style form (`tma-wgmma-pipeline-elected-overlap-k6`: one
//! elected thread releases each stage after `wait_group 1`, K = 384).
//! `unroll` times the candidate's opaque run
//! alone (rendezvous, descriptor decoding, in-flight and proxy checks).
//!
//! `cargo bench -p ptxeq-benches --bench wgmma`.

use divan::Bencher;
use ptxeq_db::{Database, Slot, SpecInput};

fn main() {
    divan::main();
}

const CASES: &[&str] = &[
    "hopper/wgmma-bulk-gemm-tn",
    "hopper/wgmma-ld-gemm-tn",
    "hopper/wgmma-sw128-gemm-tn",
    "hopper/tma-wgmma-pipeline-gemm-tn",
    "hopper/tma-wgmma-pipeline-elected-overlap-k6",
];

#[divan::bench(args = CASES, sample_count = 5)]
fn check_cold(bencher: Bencher<'_, '_>, case: &str) {
    let path = ptxeq_benches::repo_root()
        .join("corpus")
        .join(case)
        .join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("corpus spec loads");
    bencher.bench(|| {
        let db = Database::default().with_cache(None);
        let kernels: Vec<_> = spec
            .kernels
            .iter()
            .into_iter()
            .map(|(word, kref)| {
                let text = std::fs::read_to_string(&kref.ptx).expect("corpus PTX reads");
                (Slot::of(word), db.add_file(&kref.ptx, text))
            })
            .collect();
        let input = SpecInput::new(&db, path.clone(), spec.clone());
        let report = ptxeq_db::check(&db, input, &kernels);
        assert!(
            report
                .verdicts
                .is_some_and(|v| v.refuted() == 0 && v.unknown() == 0),
            "{case}: not proved"
        );
    });
}

#[divan::bench(args = CASES, sample_count = 10)]
fn unroll_candidate(bencher: Bencher<'_, '_>, case: &str) {
    let inputs = ptxeq_benches::case_inputs(case);
    let cand = inputs.last().expect("a candidate kernel");
    bencher.bench(|| divan::black_box(ptxeq_unroll::unroll(cand, [0, 0, 0])));
}
