//! `ptxeq parse FILE…`: syntax check with rustc-style diagnostics.

use std::path::{Path, PathBuf};

use ptxeq_db::{Database, SourceFile};

use crate::diagnostics::{self, Message, Severity};
use crate::exit::Exit;
use crate::input;

pub fn run(files: &[PathBuf], show_unknown: bool) -> Exit {
    let db = Database::default();
    let mut worst = Exit::Ok;
    for path in files {
        worst = worst.max(check_file(&db, path, show_unknown));
    }
    worst
}

fn check_file(db: &Database, path: &Path, show_unknown: bool) -> Exit {
    let Some(file) = input::load(db, path) else {
        return Exit::Invalid;
    };
    let shown = path.display().to_string();
    let lowered = ptxeq_db::lowered_module(db, file);
    let mut messages = error_messages(db, file);
    let unknown = lowered.unknown_instructions();
    if show_unknown {
        messages.extend(unknown.iter().map(|u| Message {
            severity: Severity::Warning,
            message: format!("instruction not decoded by ptxeq: {}", u.reason),
            range: u.range,
            label: "later passes report this instruction as unsupported".into(),
            notes: vec![format!("in `{}`, instruction #{}", u.function, u.index)],
        }));
    }
    eprint!("{}", diagnostics::render(&shown, file.text(db), &messages));

    let errors = messages
        .iter()
        .filter(|m| m.severity == Severity::Error)
        .count();
    if errors > 0 {
        outln!("{shown}: {errors} error(s)");
        return Exit::Invalid;
    }
    let m = &lowered.module;
    outln!(
        "{shown}: ok: {} entr{} ({}), {} function(s), {} instructions, {} not decoded",
        m.kernels.len(),
        if m.kernels.len() == 1 { "y" } else { "ies" },
        m.kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        m.funcs.len(),
        m.kernels
            .iter()
            .chain(&m.funcs)
            .map(|k| k.instrs.len())
            .sum::<usize>(),
        unknown.len(),
    );
    Exit::Ok
}

/// Renders the file's syntax and lowering errors to stderr; returns how many.
pub fn report_errors(db: &Database, file: SourceFile, path: &Path) -> usize {
    let (n, text) = rendered_errors(db, file, path);
    if n > 0 {
        eprint!("{text}");
    }
    n
}

/// The file's syntax and lowering errors rendered with source excerpts
/// (empty when there are none), and how many there are.
pub fn rendered_errors(db: &Database, file: SourceFile, path: &Path) -> (usize, String) {
    let messages = error_messages(db, file);
    if messages.is_empty() {
        return (0, String::new());
    }
    let mut text = diagnostics::render(&path.display().to_string(), file.text(db), &messages);
    text.push_str(&format!(
        "{}: {} error(s)\n",
        path.display(),
        messages.len()
    ));
    (messages.len(), text)
}

/// Syntax errors, then (only for a file that parsed cleanly) lowering errors
/// such as an undeclared register or label, which ptxas would reject too.
fn error_messages(db: &Database, file: SourceFile) -> Vec<Message> {
    let parse = ptxeq_db::parse(db, file);
    let mut messages: Vec<Message> = parse
        .errors()
        .iter()
        .map(|e| Message {
            severity: Severity::Error,
            message: e.message.clone(),
            range: e.range,
            label: "here".into(),
            notes: vec![],
        })
        .collect();
    if messages.is_empty() {
        messages.extend(
            ptxeq_db::lowered_module(db, file)
                .diagnostics
                .iter()
                .map(|d| Message {
                    severity: Severity::Error,
                    message: d.message.clone(),
                    range: d.range,
                    label: "here".into(),
                    notes: vec![],
                }),
        );
    }
    messages
}
