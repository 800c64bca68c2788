//! The CUDA / Python line behind a PTX instruction, when the source file
//! is on disk.
//!
//! `.file` paths are whatever the compiler was given: relative to the
//! directory it ran in, or absolute on the machine that ran it. Both are
//! tried relative to the PTX file's directory and as written, then the
//! bare file name beside the PTX (a corpus case keeps `k.cu` next to
//! `k.ptx`). A missing or unreadable file just means no excerpt.

use std::path::{Path, PathBuf};

/// The candidate locations of `source` (a `.file` path) for a PTX file at
/// `ptx`, most specific first.
fn candidates(ptx: &Path, source: &str) -> Vec<PathBuf> {
    let dir = ptx.parent().unwrap_or(Path::new(""));
    let src = Path::new(source);
    let mut v = Vec::new();
    if src.is_absolute() {
        v.push(src.to_path_buf());
    } else {
        v.push(dir.join(src));
    }
    if let Some(name) = src.file_name() {
        v.push(dir.join(name));
    }
    v
}

/// The file on disk that `source` (a `.file` path) names for the PTX file
/// at `ptx`, if any.
pub fn locate(ptx: &Path, source: &str) -> Option<PathBuf> {
    candidates(ptx, source).into_iter().find(|p| p.is_file())
}

/// Line `line` (1-based) of the source file, trimmed, with the path it was
/// read from; `None` when no candidate file exists or it is too short.
pub fn source_line(ptx: &Path, source: &str, line: u32) -> Option<(PathBuf, String)> {
    let idx = usize::try_from(line).ok()?.checked_sub(1)?;
    for path in candidates(ptx, source) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        return text
            .lines()
            .nth(idx)
            .map(|l| (path.clone(), l.trim().to_string()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_line_beside_the_ptx() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), "a\n  s[t] = x[t];\n").unwrap();
        let ptx = dir.path().join("k.ptx");
        let (p, l) = source_line(&ptx, "k.cu", 2).unwrap();
        assert_eq!(l, "s[t] = x[t];");
        assert!(p.ends_with("k.cu"));
        // An absolute path from another machine falls back to the file name.
        assert!(source_line(&ptx, "/nonexistent/build/k.cu", 1).is_some());
        assert_eq!(source_line(&ptx, "k.cu", 9), None);
        assert_eq!(source_line(&ptx, "k.cu", 0), None);
        assert_eq!(source_line(&ptx, "other.cu", 1), None);
    }
}
