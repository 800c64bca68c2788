//! Finding the cases: a directory is a case exactly when it holds a
//! `check.toml` (corpus/README.md).

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The spec file that makes a directory a case.
pub const SPEC_FILE: &str = "check.toml";

/// One case directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct CaseDir {
    /// The path relative to the corpus root with `/` separators, e.g.
    /// `softmax/online-n128`; also the test name.
    pub name: String,
    /// The directory itself.
    pub dir: PathBuf,
}

impl CaseDir {
    /// The case's `check.toml`.
    pub fn spec_path(&self) -> PathBuf {
        self.dir.join(SPEC_FILE)
    }
}

/// Every case under `root`, sorted by name. Hidden directories (a stray
/// `.venv`, `.git`) are skipped; symlinks are not followed, so a link
/// cannot make a case appear twice.
pub fn discover(root: &Path) -> io::Result<Vec<CaseDir>> {
    let mut cases = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walk {
        let entry = entry.map_err(io::Error::other)?;
        if !entry.file_type().is_file() || entry.file_name() != SPEC_FILE {
            continue;
        }
        let Some(dir) = entry.path().parent() else {
            continue;
        };
        cases.push(CaseDir {
            name: case_name(root, dir),
            dir: dir.to_path_buf(),
        });
    }
    cases.sort();
    Ok(cases)
}

/// `dir` relative to `root`, joined with `/` whatever the platform.
fn case_name(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).unwrap_or(dir);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_case_dirs_sorted_and_skips_hidden_and_common() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for d in ["b/two", "a/one", "a/common", ".hidden/x", "a/one/nested"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for d in ["b/two", "a/one", ".hidden/x", "a/one/nested"] {
            std::fs::write(root.join(d).join(SPEC_FILE), "").unwrap();
        }
        std::fs::write(root.join("a/common/ref.ptx"), "").unwrap();
        let names: Vec<String> = discover(root)
            .unwrap()
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["a/one", "a/one/nested", "b/two"]);
        assert_eq!(
            discover(root).unwrap()[0].spec_path(),
            root.join("a/one/check.toml")
        );
    }

    #[test]
    fn missing_root_is_an_error() {
        assert!(discover(Path::new("/nonexistent/ptxeq-corpus")).is_err());
    }
}
