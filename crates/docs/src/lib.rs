//! The repository's documentation, kept true by tests.
//!
//! This crate has no code of its own: its tests (`tests/`) read the
//! workspace from disk and fail when the docs and the code disagree —
//!
//! * `code_map`: every workspace crate has a heading in ARCHITECTURE.md's
//!   code map, no heading names a crate that does not exist, and every
//!   crate's normal dependencies respect the layering rule of
//!   ARCHITECTURE.md's "Layout" (`crates/` < `passes/` < `drivers/` <
//!   `benches`);
//! * `references`: no tracked text file points to a document outside the
//!   repository (the semantic contract is `docs/semantics.md`);
//! * `readme_spec`: the README's annotated `check.toml` parses with
//!   `ptxeq-spec` and names every key the spec format accepts.
//!
//! The tests find the workspace root from `CARGO_MANIFEST_DIR`; they read
//! the workspace's own `Cargo.toml` rather than a list of crates, so a crate
//! added or removed is checked without editing them.

use std::path::PathBuf;

/// The workspace root (two levels above this crate's manifest).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists")
}
