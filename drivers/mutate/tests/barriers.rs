//! Every barrier deletion (`bar.sync`, `barrier.sync`, `bar.warp.sync`) of
//! every case proved in under a second: each must be killed (a race, or a
//! difference) or be a reviewed redundant barrier in `allow.toml`. About
//! 100 s in release on two cores (cases run side by side).
//!
//! It guards issue 13 item 1: deleting the barrier between thread 0's
//! plain `acc = 0` and the warp leaders' `atomicAdd(&acc, ..)` in
//! `reduction/shared-atomic-warp-partials` (`delete-barrier:8`) is a data
//! race (a plain access and an atomic unordered by synchronisation) that
//! the race detector once missed, proving the pair equivalent.

use std::path::Path;

use ptxeq_mutate::{AllowList, Op, Options, default_allow_path, run_corpus};

#[test]
fn every_barrier_deletion_is_killed_or_reviewed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let allow = AllowList::load(&default_allow_path()).expect("allow.toml");
    let opts = Options {
        mutants: None,
        rewrites: Some(0),
        ops: vec![Op::DeleteBarrier],
        ..Options::default()
    };
    // The slow cases (attention, 64-wide tiles, layernorm, Triton matmul).
    let excludes: Vec<String> = ["attention/", "-64", "layernorm", "matmul-dot"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let summary =
        run_corpus(&root, &[], &excludes, &opts, &allow, |_| {}).expect("the corpus is readable");
    println!("{}", summary.table());
    let failures = summary.failures();
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|(c, id, w)| format!("{c} {id}: {w}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        summary.total.killed >= 150,
        "{} killed",
        summary.total.killed
    );
}
