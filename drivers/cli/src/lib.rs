//! The library half of the `ptxeq` command: every subcommand's module,
//! so that other front ends (the Python bindings in `drivers/python`) load
//! specs and build reports with exactly the code the CLI runs. The binary
//! (`main.rs`) only parses arguments and maps outcomes to exit codes.

/// `println!` that ignores a closed stdout (`ptxeq race … | head` must not
/// panic on the broken pipe).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

pub mod api;
pub mod cmd_cache;
pub mod cmd_check;
pub mod cmd_corpus;
pub mod cmd_corpus_merge;
pub mod cmd_eval;
pub mod cmd_ir;
pub mod cmd_lift;
pub mod cmd_parse;
pub mod cmd_race;
pub mod cmd_terms;
pub mod cmd_watch;
pub mod diagnostics;
pub mod exit;
pub mod formula_diff;
pub mod full_formulas;
pub mod global;
pub mod input;
pub mod junit;
pub mod names;
pub mod positions;
pub mod sarif;
pub mod source_lines;
pub mod spec_args;
pub mod stores;
pub mod timings;
