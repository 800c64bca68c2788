//! Rustc-style rendering of diagnostics against PTX source text.
//!
//! Diagnostics are rendered into strings (no colour) so the same text goes to
//! a terminal, a log file or a snapshot test.

use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Messages rendered per file by default (`--max-diagnostics`): a broken
/// file can produce one error per line (a 10,000-deep nesting gave about
/// 20,000), and the first few say what is wrong.
pub const DEFAULT_MAX_DIAGNOSTICS: usize = 20;

static MAX_SHOWN: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_DIAGNOSTICS);

/// Sets how many messages [`render`] shows per file (the global
/// `--max-diagnostics` flag; 0 shows none, only the count).
pub fn set_max_shown(n: usize) {
    MAX_SHOWN.store(n, Ordering::Relaxed);
}

/// Renders `messages` about `text` (shown as `path`) in rustc style: the
/// message, `--> path:line:col`, the source excerpt with a caret label.
/// At most [`set_max_shown`] messages are rendered; a last line counts the
/// rest.
pub fn render(path: &str, text: &str, messages: &[Message]) -> String {
    render_capped(path, text, messages, MAX_SHOWN.load(Ordering::Relaxed))
}

/// [`render`] with an explicit cap.
fn render_capped(path: &str, text: &str, messages: &[Message], max: usize) -> String {
    let mut out = render_all(path, text, &messages[..messages.len().min(max)]);
    if messages.len() > max {
        out.push_str(&format!(
            "note: {} more diagnostic(s) in {path} not shown (--max-diagnostics N shows more)\n",
            messages.len() - max
        ));
    }
    out
}

fn render_all(path: &str, text: &str, messages: &[Message]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ptxeq_syntax::{TextRange, TextSize};

    fn messages(n: u32) -> Vec<Message> {
        (0..n)
            .map(|i| Message {
                severity: Severity::Error,
                message: format!("problem {i}"),
                range: TextRange::new(TextSize::from(2 * i), TextSize::from(2 * i + 1)),
                label: "here".into(),
                notes: vec![],
            })
            .collect()
    }

    #[test]
    fn messages_beyond_the_cap_are_counted_not_rendered() {
        let text = "a\nb\nc\nd\ne\n";
        let out = render_capped("f.ptx", text, &messages(5), 2);
        assert!(out.contains("problem 0") && out.contains("problem 1"));
        assert!(!out.contains("problem 2"), "{out}");
        assert!(
            out.ends_with(
                "note: 3 more diagnostic(s) in f.ptx not shown (--max-diagnostics N shows more)\n"
            ),
            "{out}"
        );
        let all = render_capped("f.ptx", text, &messages(5), 5);
        assert!(all.contains("problem 4") && !all.contains("not shown"));
    }
}
