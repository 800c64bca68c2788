//! Diagnostics with spans, rendered rustc-style (line, column, excerpt).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config};

use crate::span::{PRELUDE, Span};

/// A problem in a formula: a message, where, and optional notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    pub span: Span,
    /// Text under the caret (may be empty).
    pub label: String,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
            label: String::new(),
            notes: Vec::new(),
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// `line:col` (1-based) of the start in `text`.
    pub fn line_col(&self, text: &str) -> (usize, usize) {
        let mut off = (self.span.start as usize).min(text.len());
        while !text.is_char_boundary(off) {
            off -= 1;
        }
        let before = &text[..off];
        let line = before.matches('\n').count() + 1;
        let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
            .chars()
            .count()
            + 1;
        (line, col)
    }
}

/// Renders diagnostics against the user's text (named `name`) and the
/// prelude, without colour.
pub fn render(diags: &[Diagnostic], name: &str, text: &str) -> String {
    let mut files = SimpleFiles::new();
    let user = files.add(name.to_string(), text.to_string());
    let prelude = files.add("<prelude>".to_string(), crate::PRELUDE.to_string());
    let mut out = String::new();
    let config = Config::default();
    for d in diags {
        let (fid, len) = if d.span.file == PRELUDE {
            (prelude, crate::PRELUDE.len())
        } else {
            (user, text.len())
        };
        let start = (d.span.start as usize).min(len);
        let end = (d.span.end as usize).clamp(start, len);
        let cs = CsDiagnostic::error()
            .with_message(&d.message)
            .with_labels(vec![Label::primary(fid, start..end).with_message(&d.label)])
            .with_notes(d.notes.clone());
        // Rendering into memory cannot fail on I/O; a span that is not on
        // a character boundary falls back to the plain message.
        if term::emit_to_string(&mut out, &config, &files, &cs).is_err() {
            let (l, c) = d.line_col(text);
            out.push_str(&format!("error: {} at {name}:{l}:{c}\n", d.message));
        }
    }
    out
}
