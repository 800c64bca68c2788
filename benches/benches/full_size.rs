//! Full-size benchmark shapes (issues 14 and 20): a cold equivalence check
//! (fresh database, no disk cache) of CTA (0, 0) of 4096×4096×4096 GEMMs —
//! the 64×64 SGEMM tile pair (`sgemm/n4096-warptiling-64`: the tile
//! reference against warp tiling, ~110 M thread-instructions and an
//! 18 M-node term graph per kernel) and the TileLang-style f16 mma.sync
//! GEMM with 64×64×32 tiles — and FlashAttention-1 against the attention
//! reference at 16 queries × 512 keys (`attention/fa1-q16-kv512`, 1024
//! elements decided). Minutes per run, so one sample each; peak
//! memory is measured outside divan (`/usr/bin/time -v ptxeq check …`, see
//! the README's benchmark table).
//!
//! `cargo bench -p ptxeq-benches --bench full_size`.

use divan::Bencher;
use ptxeq_db::{Database, Slot, SpecInput};

fn main() {
    divan::main();
}

const CASES: &[&str] = &[
    "sgemm/n4096-warptiling-64",
    "tc-gemm/n4096-mma-f16-64x64-k32",
    "attention/fa1-q16-kv512",
];

#[divan::bench(args = CASES, sample_count = 1, sample_size = 1)]
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
