//! Fingerprints the source of the passes whose artifacts the disk cache
//! stores (docs/semantics.md §15: keys include a pass version). A manual version
//! constant is easy to forget to bump; hashing the sources means any edit
//! of the engine, spec binding, IR, terms, unroll or symex code gives new cache keys, so
//! a stale artifact from an older build is never served. The hash (FNV-1a)
//! and the missing-input guard are `crates/fingerprint`'s, shared with
//! `passes/idioms/build.rs`.

/// Sources (relative to this crate) that determine cached artifacts.
const INPUTS: &[&str] = &[
    "../../crates/ir/src",
    "../../crates/exec/src",
    // Binds the spec to the engine's inputs (what a cached run computed).
    "../../crates/bind/src",
    "../../crates/terms/src",
    "../../crates/decide/src",
    "../../crates/spec/src",
    "../../passes/unroll/src",
    "../../passes/symex/src",
    "../../passes/verdicts/src",
    "src/disk.rs",
    // A pair's stored result (`pair_result`) is made here.
    "src/check.rs",
    "../../Cargo.lock",
];

fn main() {
    // Fails the build when an input is missing (moved crate, renamed
    // directory): it would silently drop out of the fingerprint.
    ptxeq_fingerprint::emit("PTXEQ_PASS_FINGERPRINT", INPUTS);
}
