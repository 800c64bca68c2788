//! Fingerprints the source of the passes whose artifacts the disk cache
//! stores (docs/semantics.md §15: keys include a pass version). A manual version
//! constant is easy to forget to bump; hashing the sources means any edit
//! of the engine, IR, terms, unroll or symex code gives new cache keys, so
//! a stale artifact from an older build is never served. The hash is FNV-1a
//! (no build dependency needed): it guards against accidents, not attacks.

use std::path::{Path, PathBuf};

/// Sources (relative to this crate) that determine cached artifacts.
const INPUTS: &[&str] = &[
    "../../crates/ir/src",
    "../../crates/exec/src",
    "../../crates/terms/src",
    "../../crates/decide/src",
    "../../crates/spec/src",
    "../../passes/unroll/src",
    "../../passes/symex/src",
    "../../passes/verdicts/src",
    "src/disk.rs",
    "../../Cargo.lock",
];

fn files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        if let Ok(rd) = std::fs::read_dir(p) {
            for e in rd.flatten() {
                files(&e.path(), out);
            }
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

fn main() {
    let mut all = Vec::new();
    for i in INPUTS {
        println!("cargo:rerun-if-changed={i}");
        // A moved input would silently drop out of the fingerprint (stale
        // artifacts served after engine edits): fail the build instead.
        assert!(
            Path::new(i).exists(),
            "drivers/db/build.rs: fingerprint input `{i}` does not exist (moved?)"
        );
        files(Path::new(i), &mut all);
    }
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for f in &all {
        eat(f.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&std::fs::read(f).unwrap_or_default());
        eat(&[0xff]);
    }
    println!("cargo:rustc-env=PTXEQ_PASS_FINGERPRINT={h:016x}");
}
