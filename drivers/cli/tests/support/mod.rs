//! What the binary's end-to-end tests share: running `ptxeq` from the
//! repository root with a cache of the test binary's own, and scratch files.
//!
//! Scratch lives under cargo's `CARGO_TARGET_TMPDIR` (inside `target/`), one
//! directory per test binary and process, so tests never touch the user's
//! cache and never leave files in the system temp directory.

#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root (the corpus paths in tests are relative to it).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// This test process's scratch directory `name` (created on first use).
pub fn scratch(name: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ptxeq-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

/// Writes `text` to scratch file `name` and returns its path.
pub fn tmp_file(name: &str, text: &str) -> PathBuf {
    let p = scratch("files").join(name);
    std::fs::write(&p, text).expect("write scratch file");
    p
}

/// Runs `ptxeq ARGS` from the repository root with this process's own
/// disk cache: (exit code, stdout, stderr).
pub fn ptxeq(args: &[&str]) -> (i32, String, String) {
    ptxeq_with_cache(&scratch("cache"), args)
}

/// [`ptxeq`] with the disk cache at `cache`.
pub fn ptxeq_with_cache(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ptxeq"))
        .args(args)
        .env("PTXEQ_CACHE_DIR", cache)
        .current_dir(repo())
        .output()
        .expect("run ptxeq");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
