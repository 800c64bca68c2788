//! `ptxeq`: the command-line front of the checker.
//!
//! Each subcommand lives in its own module; this file only parses arguments
//! and maps outcomes to exit codes (design.md §6).

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

mod cmd_ir;
mod cmd_parse;
mod cmd_race;
mod cmd_terms;
mod diagnostics;
mod exit;
mod input;
mod positions;
mod spec_args;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

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
    /// Check one kernel for data races, deadlocks, barrier divergence,
    /// out-of-bounds and uninitialised accesses, over all thread schedules.
    ///
    /// TARGET is a check spec (`check.toml`: every kernel it names is
    /// checked), or a PTX file with `--spec S.toml` or with launch flags:
    /// `ptxeq race k.ptx --block 128 --tensor x:f32[128]:in --tensor
    /// y:f32[128]:out --scalar n=128`. Prints the verdict first
    /// (race-free, race, deadlock, divergence, out-of-bounds,
    /// uninitialised, unsupported), then both accesses of every race with
    /// threads, instructions, PTX and source lines and the address.
    /// Exit code 0 race-free, 1 a bug found, 2 unsupported, 3 bad input.
    Race {
        /// `check.toml`, or a `.ptx` file.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
    /// Print the lowered kernel IR of a PTX file.
    ///
    /// Shows params, declarations and registers, then one line per
    /// instruction: its index, the decoded instruction (printed from the
    /// decoded form, so it is what ptxeq understood, not an echo of the
    /// source) and its position: the PTX line and, with `-lineinfo`, the
    /// CUDA/Python source line from `.loc`.
    /// Print the output terms of a kernel: each written output element as
    /// a formula over the input elements (real arithmetic).
    ///
    /// Takes the same TARGET and launch flags as `race`; the kernel must be
    /// race-free (the outputs of a racy run depend on the schedule).
    /// Inputs print as `x[i]` with a flat (row-major) index.
    Terms {
        /// `check.toml`, or a `.ptx` file.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        /// Print at most this many elements per output tensor.
        #[arg(long, default_value_t = 16)]
        limit: usize,
        /// Cut each formula after this many characters.
        #[arg(long, default_value_t = 400)]
        width: usize,
    },
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

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Readable text: the verdict line first, then the details.
    Human,
    /// JSON with a versioned `"schema"` and the corpus verdict words.
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Parse { files, unknown } => cmd_parse::run(&files, unknown),
        Command::Ir { file, entry, funcs } => cmd_ir::run(&file, entry.as_deref(), funcs),
        Command::Race {
            target,
            spec,
            format,
        } => cmd_race::run(&target, &spec, format),
        Command::Terms {
            target,
            spec,
            limit,
            width,
        } => cmd_terms::run(&target, &spec, limit, width),
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
