//! `ptxeq ir FILE [--entry E]`: the lowered kernel IR with source positions.

use std::path::Path;

use ptxeq_db::{Database, EntryKey};
use ptxeq_syntax::{LineIndex, TextSize};

use crate::cmd_parse;
use crate::exit::Exit;
use crate::input;

pub fn run(path: &Path, entry: Option<&str>, funcs: bool) -> Exit {
    let db = Database::default();
    let Some(file) = input::load(&db, path) else {
        return Exit::Invalid;
    };
    // Print nothing half-understood: a file with syntax or lowering errors
    // gets the parse diagnostics instead of a dump.
    if cmd_parse::report_errors(&db, file, path) > 0 {
        return Exit::Invalid;
    }
    let lowered = ptxeq_db::lowered_module(&db, file);
    let names: Vec<String> = match entry {
        Some(e) => {
            if !ptxeq_db::entry_names(&db, file).iter().any(|n| n == e) {
                let known = ptxeq_db::entry_names(&db, file).join(", ");
                eprintln!(
                    "error: {}: no `.entry {e}` (entries: {})",
                    path.display(),
                    if known.is_empty() { "none" } else { &known }
                );
                return Exit::Invalid;
            }
            vec![e.to_string()]
        }
        None => ptxeq_db::entry_names(&db, file).clone(),
    };
    let lines = LineIndex::new(file.text(&db));
    let ptx_lines = |map: &ptxeq_ir::SourceMap| -> Vec<u32> {
        map.instrs
            .iter()
            .map(|s| lines.line_col(TextSize::from(s.start)).0)
            .collect()
    };
    let m = &lowered.module;
    outln!(
        "// {}: PTX {} for {} (address size {})",
        path.display(),
        m.version.as_deref().unwrap_or("?"),
        m.targets.join(", "),
        m.address_size.map_or("?".to_string(), |a| a.to_string())
    );
    if funcs {
        for (k, map) in m.funcs.iter().zip(&lowered.func_maps) {
            outln!();
            out!("{}", k.dump_with_ptx_lines(&ptx_lines(map)));
        }
    }
    for name in names {
        let key = EntryKey::new(&db, file, name.clone());
        let (Some(ir), Some(map)) = (
            ptxeq_db::kernel_ir(&db, key),
            ptxeq_db::source_map(&db, key),
        ) else {
            continue;
        };
        outln!();
        out!("{}", ir.dump_with_ptx_lines(&ptx_lines(map)));
    }
    Exit::Ok
}
