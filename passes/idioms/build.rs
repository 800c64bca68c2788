//! Fingerprints the sources the template catalogue is built from
//! (`src/catalogue.rs`): a stored catalogue is keyed by this hash, so an
//! edit of the templates, the matcher's code or the front end that lowers
//! the template PTX never installs a stale one. FNV-1a, no dependency: it
//! guards against accidents, not attacks.

use std::path::{Path, PathBuf};

/// Sources (relative to this crate) that determine the catalogue.
const INPUTS: &[&str] = &[
    "src",
    "templates",
    "../lower/src",
    "../../crates/ir/src",
    "../../crates/syntax/src",
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
    println!("cargo:rustc-env=PTXEQ_IDIOMS_FINGERPRINT={h:016x}");
}
