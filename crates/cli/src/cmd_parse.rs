//! `ptxeq parse FILE…`: syntax check with rustc-style diagnostics.

use std::path::{Path, PathBuf};

use ptxeq_db::Database;

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
    let text = file.text(db);
    let parse = ptxeq_db::parse(db, file);
    let lowered = ptxeq_db::lowered_module(db, file);

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
    let syntax_errors = messages.len();
    // Lowering problems (undeclared register, unknown label) are errors in
    // the PTX too: ptxas would reject them.
    if syntax_errors == 0 {
        messages.extend(lowered.diagnostics.iter().map(|d| Message {
            severity: Severity::Error,
            message: d.message.clone(),
            range: d.range,
            label: "here".into(),
            notes: vec![],
        }));
    }
    let unknown = lowered.unknown_instructions();
    if show_unknown {
        messages.extend(unknown.iter().map(|u| Message {
            severity: Severity::Warning,
            message: format!("instruction not decoded by ptxeq: {}", u.reason),
            range: u.range,
            label: "later passes report this instruction as unsupported".into(),
            notes: vec![],
        }));
    }
    eprint!("{}", diagnostics::render(&shown, text, &messages));

    let errors = messages.iter().filter(|m| m.severity == Severity::Error).count();
    if errors > 0 {
        println!("{shown}: {errors} error(s)");
        return Exit::Invalid;
    }
    let m = &lowered.module;
    println!(
        "{shown}: ok: {} entr{} ({}), {} function(s), {} instructions, {} not decoded",
        m.kernels.len(),
        if m.kernels.len() == 1 { "y" } else { "ies" },
        m.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", "),
        m.funcs.len(),
        m.kernels.iter().chain(&m.funcs).map(|k| k.instrs.len()).sum::<usize>(),
        unknown.len(),
    );
    Exit::Ok
}
