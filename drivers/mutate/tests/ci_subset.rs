//! The CI subset of the mutation harness: a fixed, seeded sample of
//! mutants and rewrites of small corpus cases from every family with
//! `equivalent` cases, run with the full check. It fails on a survivor
//! nobody reviewed (not in `allow.toml`), on a crash and on a false
//! refutation of an equivalence-preserving rewrite. With the default
//! counts and seed it is exactly the full run (`ptxeq-mutate corpus/`)
//! restricted to these cases, so both share one allow-list. Under a
//! minute in a release build on two cores.

use std::path::Path;
use std::time::Duration;

use ptxeq_mutate::{AllowList, Options, default_allow_path, run_corpus};

/// Small cases (each proved in well under a second), one or more per
/// family with `equivalent` cases, among them the cases with reviewed
/// survivors (so the allow-list is exercised).
const CASES: &[&str] = &[
    "attention/fa1-q4-kv32-d16",
    "attention/splitkv-q4-kv32-d16",
    "bugs/misc-relu6-vectorized",
    "bugs/misc-transpose-tiled-padded",
    "bugs/reduce-4way-split-accumulators",
    "bugs/reduce-left-to-right-vs-tree",
    "bugs/softmax-max-init-zero",
    "conv2d/implicit-gemm-valid",
    "math/expf-default-vs-fast-sm80",
    "math/powf-two-vs-square-sm80",
    "math/logf-default-vs-fast-sm90",
    "math/sinf-default-vs-fast-sm80",
    "math/tanh-f64-sm80-vs-sm90",
    "math/rope-default-vs-fast-sm80",
    "races/global-atomic-pool-pair",
    "reduction/complete-unroll-syncwarp",
    "reduction/strided-index-b256",
    "reduction/shared-atomic-warp-partials",
    "reduction/multi-element-per-thread",
    "reduction/cg-reduce",
    "reduction/warp-shuffle-block-reduce",
    "sgemm/smem-epilogue-32",
    "sgemm/warptiling-32",
    "sgemm/coalesce-32",
    "softmax/naive-vs-online-n4",
    "softmax/naive-vs-online-n32",
    "softmax/warp-shuffle-vs-naive-n128",
    "softmax/triton-fused-1warp-vs-cuda-n100",
    "softmax/warp-multirow-vs-naive-rows",
    "tc-gemm/mma-m16n8k8-f16-32",
    "tc-gemm/mma-tf32-32",
    "triton/rmsnorm-f16",
    "triton/vector-add-masked",
    "triton/softmax-rows",
    "triton/sigmoid-vs-cuda-fast",
    "triton/gelu-erf-vs-cuda",
    "unsupported/contrast-select-on-data",
    "warp-specialized/pc-double-buffer-gemv",
    "warp-specialized/two-groups-literal-bar",
    "warp-specialized/pc-single-buffer-stencil",
];

#[test]
fn ci_subset_has_no_unreviewed_survivor_crash_or_false_refutation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let allow = AllowList::load(&default_allow_path()).expect("allow.toml");
    let opts = Options {
        timeout: Duration::from_secs(300),
        ..Options::default()
    };
    assert_eq!(
        (opts.mutants, opts.rewrites, opts.seed),
        (Some(4), Some(2), 1)
    );
    let filters: Vec<String> = CASES.iter().map(|c| c.to_string()).collect();
    let summary =
        run_corpus(&root, &filters, &[], &opts, &allow, |_| {}).expect("the corpus is readable");
    println!("{}", summary.table());

    let names: Vec<&str> = summary.cases.iter().map(|c| c.case.as_str()).collect();
    for c in CASES {
        assert!(
            names.contains(c),
            "{c} was not run (renamed? no longer `equivalent`?)"
        );
    }
    assert_eq!(
        names.len(),
        CASES.len(),
        "a filter matched another case: {names:?}"
    );
    for c in &summary.cases {
        assert!(c.skipped.is_none(), "{}: skipped: {:?}", c.case, c.skipped);
        assert!(!c.results.is_empty(), "{}: no mutant", c.case);
    }
    let failures = summary.failures();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures
            .iter()
            .map(|(c, id, w)| format!("{c} {id}: {w}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The sample is not trivial: mutants are killed, rewrites still prove.
    let t = &summary.total;
    assert!(t.killed >= 80, "only {} killed", t.killed);
    assert!(t.preserved >= 40, "only {} rewrites preserved", t.preserved);
    assert!(t.survived_allowed >= 1, "the allow-list was not exercised");
    assert_eq!(t.crash, 0);
}
