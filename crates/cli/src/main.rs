//! `ptxeq`: the command-line front of the checker.
//!
//! Each subcommand lives in its own module; this file only parses arguments
//! and maps outcomes to exit codes (design.md §6).

mod cmd_ir;
mod cmd_parse;
mod diagnostics;
mod exit;
mod input;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Formal checking of NVIDIA PTX kernels.
///
/// ptxeq reads PTX as emitted by nvcc (`nvcc -ptx`, `-lineinfo`, `-G`) or
/// Triton, and works on it as a compiler would: a lossless syntax tree, a
/// lowered kernel IR, and (in later milestones) symbolic execution of one CTA
/// to prove two kernels equivalent over the reals or find races, deadlocks and
/// counterexamples.
///
/// Exit codes: 0 success, 1 a real bug was found, 2 undecided (unsupported
/// construct, resource limit), 3 invalid input (malformed PTX, bad spec,
/// missing file).
#[derive(Parser, Debug)]
#[command(name = "ptxeq", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse PTX files and report syntax errors with source excerpts.
    ///
    /// Prints one summary line per file (entries, functions, instructions,
    /// instructions ptxeq does not decode). Exit code 3 if any file is missing
    /// or has a syntax error.
    Parse {
        /// PTX files (`.ptx`), e.g. from `nvcc -ptx -arch=sm_80 -lineinfo k.cu`.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Also warn about every instruction ptxeq does not decode.
        #[arg(long)]
        unknown: bool,
    },
    /// Print the lowered kernel IR of a PTX file.
    ///
    /// Shows params, declarations and registers, then one line per
    /// instruction: its index, the decoded instruction (printed from the
    /// decoded form, so it is what ptxeq understood, not an echo of the
    /// source) and its position: the PTX line and, with `-lineinfo`, the
    /// CUDA/Python source line from `.loc`.
    Ir {
        /// The PTX file.
        file: PathBuf,
        /// The kernel (`.entry`) to print; default: every entry in the file.
        /// Accepts the mangled PTX name.
        #[arg(long, short)]
        entry: Option<String>,
        /// Also print `.func` device functions.
        #[arg(long)]
        funcs: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Parse { files, unknown } => cmd_parse::run(&files, unknown),
        Command::Ir { file, entry, funcs } => cmd_ir::run(&file, entry.as_deref(), funcs),
    };
    code.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
