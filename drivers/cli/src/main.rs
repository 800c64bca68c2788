//! `ptxeq`: the command-line front of the checker.
//!
//! Each subcommand lives in its own module; this file only parses arguments
//! and maps outcomes to exit codes (docs/semantics.md §1).

use ptxeq_cli::{
    cmd_cache, cmd_check, cmd_corpus, cmd_corpus_merge, cmd_eval, cmd_ir, cmd_lift, cmd_parse,
    cmd_race, cmd_terms, cmd_watch, diagnostics, exit::Exit, global, sarif, spec_args, timings,
};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Formal checking of NVIDIA PTX kernels.
///
/// ptxeq reads PTX as emitted by nvcc (`nvcc -ptx`, `-lineinfo`, `-G`) or
/// Triton, and works on it as a compiler would: a lossless syntax tree, a
/// lowered kernel IR, and symbolic execution of the CTAs a spec names, to
/// prove two kernels (or a kernel and a formula) equivalent over the reals
/// for all inputs and schedules, or to find races, deadlocks, bad accesses
/// and confirmed counterexamples. The semantics are in docs/semantics.md.
///
/// Exit codes: 0 proved (equivalent, race-free), 1 a real bug was found, 2
/// undecided (unsupported construct, resource limit, unknown element), 3
/// invalid input (malformed PTX, bad spec, missing file), 4
/// order-dependent.
#[derive(Parser, Debug)]
#[command(name = "ptxeq", version, about, long_about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: global::GlobalArgs,
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
    /// Prove a candidate kernel equivalent to a reference over the reals,
    /// for all inputs and all thread schedules — or show the bug.
    ///
    /// `ptxeq check SPEC.toml`, or the flag form `ptxeq check REF.ptx
    /// CAND.ptx --block 128 --tensor x:f32[128]:in --tensor y:f32[128]:out
    /// --scalar n=128`. Both kernels are race-checked first (a race,
    /// deadlock or bad access is the verdict); then every output element
    /// is decided: proved (normal-form identity), refuted (a confirmed
    /// counterexample input) or unknown (the residual is printed).
    /// Exit code 0 equivalent, 1 not equivalent or a bug, 2 undecided, 3
    /// bad input, 4 order-dependent.
    #[command(after_long_help = CHECK_EXAMPLES)]
    Check {
        /// `check.toml`, or two PTX files: reference then candidate.
        #[arg(required = true, num_args = 1..=2, value_name = "SPEC.toml | REF.ptx CAND.ptx")]
        targets: Vec<PathBuf>,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        #[command(flatten)]
        pair: Box<spec_args::PairLaunchArgs>,
        /// The candidate's `.entry` when it differs from `--entry`.
        #[arg(long)]
        candidate_entry: Option<String>,
        /// The candidate's param binding when it differs from `--params`.
        #[arg(long)]
        candidate_params: Option<String>,
        /// Check the one PTX file (the candidate) against this formula
        /// instead of a reference kernel: `--formula 'y[i] = exp(x[i]);'`,
        /// or `--formula @FILE` to read it from a file (spec: `[reference]
        /// formula` / `formula_file`).
        #[arg(long, value_name = "FORMULA | @FILE")]
        formula: Option<String>,
        /// Bound on the formula's instantiation steps over all elements
        /// (default 2000000000, about a minute).
        #[arg(long, value_name = "N")]
        formula_max_steps: Option<u64>,
        /// Stop deciding output elements once N are refuted: the verdict is
        /// then `not-equivalent` whatever the rest are, and the report says
        /// how many were not decided.
        #[arg(long, value_name = "N", default_value_t = ptxeq_check::DEFAULT_MAX_REFUTED, value_parser = clap::value_parser!(u64).range(1..))]
        max_refuted: u64,
        /// Decide every output element, however many are refuted (overrides
        /// `--max-refuted`).
        #[arg(long)]
        all_elements: bool,
        /// Trace which instructions built a refuted element's differing
        /// sub-terms (the report's "built in … by" lines) only for CTAs that
        /// executed at most N thread-instructions: the trace replays the CTA
        /// again keeping its whole store (on a K = 4096 GEMM tens of
        /// seconds and a GiB or more); past the bound the report says it
        /// was not traced.
        #[arg(long, value_name = "N", default_value_t = ptxeq_cli::formula_diff::DEFAULT_ORIGINS_MAX_STEPS)]
        origins_max_steps: u64,
        /// Failing elements printed per output tensor (`--format json` /
        /// `sarif`: the first N failures of each tensor also get where the
        /// two formulas first differ and the instructions that built it).
        #[arg(long, default_value_t = ptxeq_cli::cmd_check::DEFAULT_SHOW)]
        show: usize,
        /// Write every verification condition (reference ≠ candidate, per
        /// element) as an SMT-LIB2 file into DIR, to replay in another solver.
        #[arg(long, value_name = "DIR")]
        emit_smt: Option<PathBuf>,
        /// Output format (`sarif`: race-class findings and failing elements,
        /// for code-scanning tools).
        #[arg(long, value_enum, default_value = "human")]
        format: sarif::ReportFormat,
        /// `--format json`: a failing element's whole formula is carried as
        /// text up to N characters, as a DAG with sharing beyond (bounds
        /// the report's size; README "JSON reports").
        #[arg(long, value_name = "N", default_value_t = ptxeq_cli::full_formulas::DEFAULT_TEXT_CHARS)]
        json_formula_chars: usize,
        /// `--format json`: the most DAG nodes all failures' whole formulas
        /// carry together; a failure past it gets `full.omitted` (the
        /// reason) instead (bounds the report's size and memory).
        #[arg(long, value_name = "N", default_value_t = ptxeq_cli::full_formulas::DEFAULT_DAG_NODES)]
        json_dag_nodes: usize,
    },
    /// Check one kernel for data races, deadlocks, barrier divergence,
    /// out-of-bounds and uninitialised accesses, over all thread schedules.
    ///
    /// TARGET is a check spec (`check.toml`: every kernel it names is
    /// checked), or a PTX file with `--spec S.toml` or with launch flags:
    /// `ptxeq race k.ptx --block 128 --tensor x:f32[128]:in --tensor
    /// y:f32[128]:out --scalar n=128`. Prints the verdict first
    /// (race-free, race, order-dependent, deadlock, divergence,
    /// out-of-bounds, uninitialised, unsupported), then both accesses of
    /// every race with threads, instructions, PTX and source lines and the
    /// address. Exit code 0 race-free, 1 a bug found, 2 unsupported, 3 bad
    /// input, 4 order-dependent.
    Race {
        /// `check.toml`, or a `.ptx` file.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        /// Output format (`sarif`: SARIF 2.1.0 for code-scanning tools).
        #[arg(long, value_enum, default_value = "human")]
        format: sarif::ReportFormat,
    },
    /// Run one kernel concretely on given inputs and write its outputs: to
    /// replay a counterexample, or to compare with a real GPU run
    /// (docs/hardware-validation.md).
    ///
    /// Reads `INPUTS/<tensor>.bin` (raw little-endian elements of the
    /// spec's dtype, row-major) for every read tensor and
    /// `INPUTS/<scalar>.bin` for every symbolic scalar; runs the CTAs the
    /// spec selects as one grid with real arithmetic approximated by f64
    /// (no f32/f16 rounding); writes `OUT/<tensor>.f64` (every element,
    /// NaN where not written), `OUT/<tensor>.mask` (0 not written, 1
    /// written, 2 written without a value) and `OUT/eval.json`. Exit code 0
    /// when the run reported nothing, 1 a bug finding, 2 unsupported or a
    /// limit, 3 bad input.
    Eval {
        /// `check.toml`, or a `.ptx` file.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        /// Which kernel: reference, candidate or kernel.
        #[arg(long, default_value = "kernel")]
        kernel: String,
        /// Folder with the input files.
        #[arg(long)]
        inputs: PathBuf,
        /// Folder the outputs are written to (created).
        #[arg(long)]
        out: PathBuf,
    },
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
    /// Lift each output tensor of a kernel to one formula in the formula
    /// language (the README's "Formula references"), printed only when
    /// verified: the formula is instantiated at every element the kernel
    /// writes and proved equal to the element's term. Elementwise maps and
    /// sums, products, max and min over affine index ranges lift; what does
    /// not (selects, data-dependent indices, irregular operands) is named.
    /// Takes the same TARGET and launch flags as `race`. Exit code 0 when
    /// every output lifted, 2 when some did not, 3 bad input.
    Lift {
        /// `check.toml`, or a `.ptx` file.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
        /// Output format (`json`: per kernel, each tensor's formula or why not).
        #[arg(long, value_enum, default_value = "human")]
        format: sarif::ReportFormat,
    },
    /// Run every case of a corpus directory against its expected verdict.
    ///
    /// A case is a directory with a `check.toml` (expected verdict in
    /// `[expect]`). Cases run in parallel; a progress bar shows on a
    /// terminal, plain lines otherwise; then a summary table (expected vs
    /// got, time, disk-cache hits). Pending cases are counted apart and never
    /// fail. Exit code 1 when any case failed, 3 when DIR holds no case.
    ///
    /// At scale: `--shard i/n` runs one of n disjoint parts (by a hash of
    /// the case name), `ptxeq corpus merge` combines the parts' `--json`
    /// reports (README "Running at scale").
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Corpus {
        #[command(subcommand)]
        action: Option<CorpusAction>,
        /// The corpus root, e.g. `corpus/` (a directory named `merge`:
        /// write `./merge`).
        #[arg(required = true)]
        dir: Option<PathBuf>,
        /// Run only part INDEX of COUNT (0-based, e.g. `0/4` .. `3/4`): a
        /// case's part is a hash of its name, stable when cases are added.
        #[arg(long, value_name = "INDEX/COUNT")]
        shard: Option<ptxeq_corpus::Shard>,
        /// Print the selected cases (after --filter and --shard) instead of
        /// running them.
        #[arg(long)]
        list: bool,
        /// Output of --list: names, or JSON with each case's shard key.
        #[arg(long, value_enum, default_value = "text", requires = "list")]
        format: cmd_corpus::ListFormat,
        /// Only cases whose name (`family/case`) contains this; repeatable.
        #[arg(long, value_name = "SUBSTR")]
        filter: Vec<String>,
        /// Write a JUnit XML report.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Write a JSON report (schema `ptxeq.corpus/1`).
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
        /// Worker threads (default: one per core).
        #[arg(long, short)]
        jobs: Option<usize>,
    },
    /// Re-check a spec every time one of its files is saved.
    ///
    /// Keeps one database alive: an edit re-runs only what it reaches (a
    /// comment stops after lowering; an edit of one kernel leaves the other
    /// alone). Prints which files changed, the verdict and the time. The
    /// report is that of `ptxeq check` for a spec with a reference and a
    /// candidate, and of `ptxeq race` for a single kernel.
    Watch {
        /// `check.toml`, or a `.ptx` file with `--spec` or launch flags.
        target: PathBuf,
        #[command(flatten)]
        spec: spec_args::SpecFlagArgs,
    },
    /// Inspect or empty the disk cache (`--cache-dir` or the default).
    Cache {
        #[command(subcommand)]
        action: cmd_cache::CacheAction,
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

/// `ptxeq corpus merge`.
#[derive(Subcommand, Debug)]
enum CorpusAction {
    /// Combine the `--json` reports of the shards of one run (`--shard
    /// i/n`, every i once) into the summary, exit code and reports of the
    /// whole run.
    Merge {
        /// The shard reports.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// Write the merged JUnit XML report.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Write the merged JSON report.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
}

/// `ptxeq check --help`: one example per spec feature, each flag next to
/// the `check.toml` key it stands for (README "The check spec" documents
/// every key).
const CHECK_EXAMPLES: &str = "\
Examples (every check.toml key has a flag; README \"The check spec\" lists them):

  A spec file:
    ptxeq check corpus/softmax/naive-vs-online-n128/check.toml

  The flag form ([launch] block, [tensors], [scalars]; params default to the
  tensors in flag order, then the scalars):
    ptxeq check ref.ptx cand.ptx --block 128 --tensor x:f32[128]:in \\
      --tensor y:f32[128]:out --scalar n=128

  Entries and param order per kernel (entry, params):
    ptxeq check ref.ptx cand.ptx --entry ref_kernel --candidate-entry cand_kernel \\
      --params x,y,n --candidate-params y,x,n,_ --tensor x:f32[128]:in \\
      --tensor y:f32[128]:out --scalar n=128

  Per-kernel launch ([reference.launch] / [candidate.launch] over [launch]):
    ptxeq check ref.ptx cand.ptx --ref-block 16x16 --ref-grid 8x8 \\
      --cand-block 64 --cand-grid 4x4 --cand-dynamic-shared 4096 ...

  Grid, CTAs and dynamic shared memory ([launch] grid, ctas, dynamic_shared):
    ptxeq check ref.ptx cand.ptx --grid 4x2 --ctas '0,0;3,1' --dynamic-shared 16 ...

  Compare a region, run only the CTAs that write it (compare = [[0, 32], [0, 64]],
  ctas = \"auto\"; the report lists the CTAs run):
    ptxeq check ref.ptx cand.ptx --tensor C:f32[128,128]:inout \\
      --compare C=0:32,0:64 --ctas auto ...

  Symbolic float scalars (alpha = { dtype = \"f32\" }: a free real symbol;
  integer scalars always need a value):
    ptxeq check ref.ptx cand.ptx --scalar alpha:f32 --scalar beta:f32 --scalar n=128 ...

  Concrete input values, scratch tensors, struct params by value (values = …,
  role = \"scratch\", a params entry { struct = [{ offset = 0, bind = \"a\" }, …] }):
    ptxeq check ref.ptx cand.ptx --tensor idx:s32[4]:in --values idx=3,1,2,0 \\
      --tensor ws:f32[128]:scratch --params 'x,idx,ws,{a@0,n:s32@8}' ...

  Extern functions and module variables ([functions], [globals]):
    ptxeq check ref.ptx cand.ptx --function my_exp=exp --global MAX_KEY=32 \\
      --global c_weights=input:f32 ...

  Reports: --format json | sarif, --show 10, --emit-smt DIR.
";

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are successes; every usage error is
            // invalid input (exit 3), never 2, which means "undecided".
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Invalid.into()
            } else {
                Exit::Ok.into()
            };
        }
    };
    cli.global.init_tracing();
    cli.global.apply_process_settings();
    diagnostics::set_max_shown(cli.global.max_diagnostics);
    if cli.global.timings {
        ptxeq_db::counts::enable();
    }
    let start = std::time::Instant::now();
    let cache = match cli.command {
        Command::Cache { .. }
        | Command::Corpus {
            action: Some(_), ..
        } => None,
        _ => cli.global.open_cache(),
    };
    ptxeq_db::set_default_cache(cache.clone());
    let code = match cli.command {
        Command::Cache { action } => cmd_cache::run(action, &cli.global),
        Command::Corpus {
            action:
                Some(CorpusAction::Merge {
                    reports,
                    junit,
                    json,
                }),
            ..
        } => cmd_corpus_merge::run(&reports, junit.as_deref(), json.as_deref()),
        Command::Corpus {
            action: None,
            dir,
            shard,
            list,
            format,
            filter,
            junit,
            json,
            jobs,
        } => cmd_corpus::run(
            dir.as_deref().unwrap_or(std::path::Path::new(".")),
            &cmd_corpus::CorpusOptions {
                filter,
                shard,
                list: list.then_some(format),
                junit,
                json,
                jobs,
            },
        ),
        Command::Watch { target, spec } => cmd_watch::run(&target, &spec, cli.global.timings),
        Command::Parse { files, unknown } => cmd_parse::run(&files, unknown),
        Command::Ir { file, entry, funcs } => cmd_ir::run(&file, entry.as_deref(), funcs),
        Command::Check {
            targets,
            spec,
            pair,
            candidate_entry,
            candidate_params,
            formula,
            formula_max_steps,
            max_refuted,
            all_elements,
            origins_max_steps,
            show,
            emit_smt,
            format,
            json_formula_chars,
            json_dag_nodes,
        } => cmd_check::run(
            &targets,
            &spec,
            &pair,
            candidate_entry,
            candidate_params,
            &cmd_check::CheckOptions {
                format,
                show,
                emit_smt,
                formula,
                formula_max_steps,
                max_refuted: (!all_elements).then_some(max_refuted),
                json_formula_chars,
                json_dag_nodes,
                origins_max_steps,
            },
        ),
        Command::Race {
            target,
            spec,
            format,
        } => cmd_race::run(&target, &spec, format),
        Command::Lift {
            target,
            spec,
            format,
        } => cmd_lift::run(&target, &spec, format),
        Command::Eval {
            target,
            spec,
            kernel,
            inputs,
            out,
        } => cmd_eval::run(&target, &spec, &kernel, &inputs, &out),
        Command::Terms {
            target,
            spec,
            limit,
            width,
        } => cmd_terms::run(&target, &spec, limit, width),
    };
    if cli.global.timings {
        eprint!(
            "{}",
            timings::report(&timings::totals(), start.elapsed(), cache.as_deref())
        );
        eprint!("{}", timings::queries(&ptxeq_db::counts::query_counts()));
    }
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
