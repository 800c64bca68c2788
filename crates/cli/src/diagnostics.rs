//! Rustc-style rendering of diagnostics against PTX source text.
//!
//! Diagnostics are rendered into strings (no colour) so the same text goes to
//! a terminal, a log file or a snapshot test.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};
use ptxeq_syntax::TextRange;

/// Severity of one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One message about a range of a source file.
#[derive(Clone, Debug)]
pub struct Message {
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    pub label: String,
    pub notes: Vec<String>,
}

/// Renders `messages` about `text` (shown as `path`) in rustc style: the
/// message, `--> path:line:col`, the source excerpt with a caret label.
pub fn render(path: &str, text: &str, messages: &[Message]) -> String {
    let file = SimpleFile::new(path, text);
    let config = Config::default();
    let mut out = String::new();
    for m in messages {
        let start = usize::from(m.range.start()).min(text.len());
        let end = usize::from(m.range.end()).clamp(start, text.len());
        let diag = match m.severity {
            Severity::Error => Diagnostic::error(),
            Severity::Warning => Diagnostic::warning(),
        }
        .with_message(&m.message)
        .with_labels(vec![Label::primary((), start..end).with_message(&m.label)])
        .with_notes(m.notes.clone());
        if let Err(e) = term::emit_to_string(&mut out, &config, &file, &diag) {
            // Rendering only fails on an out-of-range span; still say what went wrong.
            out.push_str(&format!(
                "error: {} (at byte {start}; could not render: {e})\n",
                m.message
            ));
        }
    }
    out
}
