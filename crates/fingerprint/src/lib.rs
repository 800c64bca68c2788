//! Fingerprints of source trees, for build scripts.
//!
//! Two artifacts are keyed by a hash of the sources they are made from:
//! the disk cache's entries (`drivers/db/build.rs`: any edit of the engine,
//! IR, terms, … gives new cache keys) and the stored idiom catalogue
//! (`passes/idioms/build.rs`: an edit of the templates, the matcher or the
//! front end never installs a stale catalogue). Both hash a fixed list of
//! input paths (files, or directories walked recursively) with [`of`].
//!
//! A listed input that no longer exists (a crate moved, a directory
//! renamed) would silently drop out of the hash, and the artifact would
//! stay "fresh" across edits of the moved code; so would a file that cannot
//! be read. Both are errors here, and [`emit`] fails the build with them.
//!
//! The hash is FNV-1a over every file's path (as reached from the input
//! path given) and bytes, files in sorted path order: no dependency, and
//! it guards against accidents, not attacks.

use std::path::{Path, PathBuf};

/// Every regular file at or under `p` (a file, or a directory walked
/// recursively).
fn files(p: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    if p.is_dir() {
        let rd = std::fs::read_dir(p)
            .map_err(|e| format!("cannot list fingerprint input {}: {e}", p.display()))?;
        for e in rd {
            let e = e.map_err(|e| format!("cannot list {}: {e}", p.display()))?;
            files(&e.path(), out)?;
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
    Ok(())
}

/// The fingerprint of `inputs`, each a path relative to `base` (a build
/// script's crate directory). `Err` names the first input that does not
/// exist, or a file that cannot be read.
pub fn of(base: &Path, inputs: &[&str]) -> Result<u64, String> {
    let mut all = Vec::new();
    for i in inputs {
        let p = base.join(i);
        if !p.exists() {
            return Err(format!(
                "fingerprint input `{i}` does not exist ({}; moved or renamed? update the build script's list)",
                p.display()
            ));
        }
        let before = all.len();
        files(&p, &mut all)?;
        // Paths are hashed as the list names them (relative to `base`),
        // so the fingerprint does not depend on where the checkout is.
        for f in &mut all[before..] {
            if let Ok(rel) = f.strip_prefix(base) {
                *f = rel.to_path_buf();
            }
        }
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
        let bytes = std::fs::read(base.join(f))
            .map_err(|e| format!("cannot read fingerprint input {}: {e}", f.display()))?;
        eat(f.to_string_lossy().as_bytes());
        eat(&[0]);
        eat(&bytes);
        eat(&[0xff]);
    }
    Ok(h)
}

/// For a build script: asks cargo to rerun it when any input changes and
/// sets the compile-time environment variable `var` to the fingerprint of
/// `inputs` (relative to the crate being built) as 16 hex digits. Panics —
/// failing the build with the message of [`of`] — when an input is missing.
pub fn emit(var: &str, inputs: &[&str]) {
    for i in inputs {
        println!("cargo:rerun-if-changed={i}");
    }
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    match of(&base, inputs) {
        Ok(h) => println!("cargo:rustc-env={var}={h:016x}"),
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(d.path().join("src/sub")).unwrap();
        std::fs::write(d.path().join("src/a.rs"), "fn a() {}").unwrap();
        std::fs::write(d.path().join("src/sub/b.rs"), "fn b() {}").unwrap();
        std::fs::write(d.path().join("Cargo.lock"), "lock").unwrap();
        d
    }

    #[test]
    fn a_missing_input_is_an_error_naming_it() {
        let d = tree();
        let e = of(d.path(), &["src", "moved/src", "Cargo.lock"]).unwrap_err();
        assert!(e.contains("`moved/src` does not exist"), "{e}");
        assert!(of(d.path(), &["src", "Cargo.lock"]).is_ok());
    }

    #[test]
    fn any_edit_rename_or_new_file_changes_the_fingerprint() {
        let d = tree();
        let inputs = ["src", "Cargo.lock"];
        let h0 = of(d.path(), &inputs).unwrap();
        assert_eq!(of(d.path(), &inputs).unwrap(), h0, "deterministic");
        std::fs::write(d.path().join("src/sub/b.rs"), "fn b() { }").unwrap();
        let h1 = of(d.path(), &inputs).unwrap();
        assert_ne!(h1, h0, "an edit of a nested file");
        std::fs::rename(d.path().join("src/a.rs"), d.path().join("src/c.rs")).unwrap();
        let h2 = of(d.path(), &inputs).unwrap();
        assert_ne!(h2, h1, "a rename");
        std::fs::write(d.path().join("src/new.rs"), "").unwrap();
        assert_ne!(of(d.path(), &inputs).unwrap(), h2, "a new (empty) file");
    }

    #[test]
    fn the_fingerprint_does_not_depend_on_the_checkout_location() {
        let (a, b) = (tree(), tree());
        assert_eq!(
            of(a.path(), &["src", "Cargo.lock"]).unwrap(),
            of(b.path(), &["src", "Cargo.lock"]).unwrap()
        );
    }
}
