//! Errors from reading a spec, with a location in the spec file where one
//! is known, so the CLI can print `check.toml:12:9: ...`.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

/// What kind of failure a [`SpecError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SpecErrorKind {
    /// The spec file could not be read.
    Io,
    /// Not valid TOML, an unknown key, or a value of the wrong type.
    Syntax,
    /// Well-formed but inconsistent (a bad block size, an undeclared name…).
    Invalid,
    /// A malformed command-line flag (`--tensor`, `--scalar`, `--block`…).
    Flag,
}

/// A line and column, both 1-based; the column counts characters.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

impl LineCol {
    /// The position of byte `offset` in `text` (clamped to its end).
    pub fn of(text: &str, offset: usize) -> LineCol {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        LineCol {
            line: before.matches('\n').count() + 1,
            col: before[line_start..].chars().count() + 1,
        }
    }
}

impl fmt::Display for LineCol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// An error reading or validating a spec.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub struct SpecError {
    pub kind: SpecErrorKind,
    /// What is wrong, naming the offending key.
    pub message: String,
    /// The spec file, when the spec came from one.
    pub path: Option<PathBuf>,
    /// Byte range in the spec text.
    pub span: Option<Range<usize>>,
    /// Where `span` starts.
    pub location: Option<LineCol>,
}

impl SpecError {
    pub(crate) fn new(kind: SpecErrorKind, message: impl Into<String>) -> Self {
        SpecError {
            kind,
            message: message.into(),
            path: None,
            span: None,
            location: None,
        }
    }

    /// Attaches a span in `text` (and its line:col).
    pub(crate) fn at(mut self, span: Option<Range<usize>>, text: &str) -> Self {
        self.location = span.as_ref().map(|s| LineCol::of(text, s.start));
        self.span = span;
        self
    }

    /// Attaches the spec file's path.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
}

impl fmt::Display for SpecError {
    /// `path:line:col: message`, leaving out what is not known.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
            if let Some(loc) = self.location {
                write!(f, "{loc}:")?;
            }
            f.write_str(" ")?;
        } else if let Some(loc) = self.location {
            write!(f, "{loc}: ")?;
        }
        f.write_str(&self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(LineCol::of(t, 0), LineCol { line: 1, col: 1 });
        assert_eq!(LineCol::of(t, 6), LineCol { line: 2, col: 1 });
        // after the two-byte `é`
        assert_eq!(LineCol::of(t, 9), LineCol { line: 2, col: 3 });
        assert_eq!(LineCol::of(t, 1000), LineCol { line: 3, col: 1 });
    }

    #[test]
    fn display() {
        let e = SpecError::new(SpecErrorKind::Invalid, "bad")
            .at(Some(6..7), "a = 1\nb = 2")
            .with_path("x/check.toml");
        assert_eq!(e.to_string(), "x/check.toml:2:1: bad");
    }
}
