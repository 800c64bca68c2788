//! The CI subset of the mutation harness: a fixed, seeded sample of
//! mutants and rewrites of small corpus cases from every family with
//! `equivalent` cases, run with the full check. It fails on a survivor
//! nobody reviewed (not in `allow.toml`), on a crash and on a false
//! refutation of an equivalence-preserving rewrite. About a minute in a
//! release build on two cores; the full run is `ptxeq-mutate corpus/`.

use std::path::Path;
use std::time::Duration;

use ptxeq_mutate::{AllowList, Options, default_allow_path, run_corpus};

/// Small cases, one or more per family that has `equivalent` cases.
const CASES: &[&str] = &[
    "attention/fa1-q4-kv32-d16",
    "bugs/misc-relu6-vectorized",
    "conv2d/implicit-gemm-valid",
    "math/expf-default-vs-fast-sm80",
    "math/powf-two-vs-square-sm80",
    "races/global-atomic-pool-pair",
    "reduction/complete-unroll-syncwarp",
    "reduction/strided-index-b256",
    "sgemm/smem-epilogue-32",
    "softmax/naive-vs-online-n4",
    "softmax/warp-shuffle-vs-naive-n128",
    "tc-gemm/mma-m16n8k8-f16-32",
    "triton/rmsnorm-f16",
    "triton/vector-add-masked",
    "unsupported/contrast-select-on-data",
    "warp-specialized/pc-double-buffer-gemv",
    "warp-specialized/two-groups-literal-bar",
];

#[test]
fn ci_subset_has_no_unreviewed_survivor_crash_or_false_refutation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let allow = AllowList::load(&default_allow_path()).expect("allow.toml");
    let opts = Options {
        mutants: Some(4),
        rewrites: Some(2),
        seed: 1,
        timeout: Duration::from_secs(120),
        ..Options::default()
    };
    let filters: Vec<String> = CASES.iter().map(|c| c.to_string()).collect();
    let summary =
        run_corpus(&root, &filters, &[], &opts, &allow, |_| {}).expect("the corpus is readable");
    println!("{}", summary.table());

    let names: Vec<&str> = summary.cases.iter().map(|c| c.case.as_str()).collect();
    for c in CASES {
        assert!(names.contains(c), "{c} was not run (renamed? no longer `equivalent`?)");
    }
    assert_eq!(names.len(), CASES.len(), "a filter matched another case: {names:?}");
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
    assert!(t.killed >= 30, "only {} killed", t.killed);
    assert!(t.preserved >= 10, "only {} rewrites preserved", t.preserved);
    assert_eq!(t.crash, 0);
}
