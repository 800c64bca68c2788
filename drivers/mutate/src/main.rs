//! `ptxeq-mutate`: the mutation harness over a corpus (see the crate doc).
//!
//! ```text
//! ptxeq-mutate corpus/ --json report.json          # the full run
//! ptxeq-mutate corpus/ --filter softmax --list      # the mutants, not run
//! ```
//! Exit code 0 when no survivor is unreviewed, nothing crashed and no
//! rewrite was refuted; 1 otherwise; 3 on bad arguments or input.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ptxeq_mutate::run::{Heavy, default_heavy};
use ptxeq_mutate::{AllowList, Kernel, Op, Options, Outcome, enumerate, run_corpus};

#[derive(Parser)]
#[command(
    name = "ptxeq-mutate",
    about = "Mutation testing of ptxeq over a corpus"
)]
struct Args {
    /// The corpus directory.
    #[arg(default_value = "corpus")]
    corpus: PathBuf,
    /// Write the full report (schema ptxeq.mutate/1) here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Mutations per case: a number or `all`.
    #[arg(long, default_value = "4")]
    mutants: String,
    /// Equivalence-preserving rewrites per case: a number or `all`.
    #[arg(long, default_value = "2")]
    rewrites: String,
    /// Seed of the per-case sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Wall-clock budget of one mutant's check, in seconds.
    #[arg(long, default_value_t = 1200)]
    timeout: u64,
    /// Step budget of a mutant's coverage run: this many times the
    /// original's thread-instructions per CTA (plus 10^6).
    #[arg(long, default_value_t = 8)]
    step_factor: u64,
    /// Fewer mutants for slow cases: `PATTERN=MUTANTS,REWRITES`
    /// (repeatable; replaces the built-in list, see `default_heavy`).
    #[arg(long)]
    heavy: Vec<String>,
    /// No reduced counts for slow cases.
    #[arg(long)]
    no_heavy: bool,
    /// Only cases whose name contains this (repeatable).
    #[arg(long)]
    filter: Vec<String>,
    /// Skip cases whose name contains this (repeatable).
    #[arg(long)]
    exclude: Vec<String>,
    /// Only these operators (repeatable; e.g. `flip-cmp`).
    #[arg(long)]
    op: Vec<String>,
    /// The reviewed allow-list.
    #[arg(long)]
    allow: Option<PathBuf>,
    /// List the chosen mutants of each case without running them.
    #[arg(long)]
    list: bool,
}

fn count(s: &str, what: &str) -> Result<Option<usize>, String> {
    if s == "all" {
        return Ok(None);
    }
    s.parse()
        .map(Some)
        .map_err(|_| format!("--{what}: expected a number or `all`, got `{s}`"))
}

fn heavy_list(specs: &[String], none: bool) -> Result<Vec<Heavy>, String> {
    if none {
        return Ok(Vec::new());
    }
    if specs.is_empty() {
        return Ok(default_heavy());
    }
    specs
        .iter()
        .map(|s| {
            let bad = || format!("--heavy: expected PATTERN=MUTANTS,REWRITES, got `{s}`");
            let (pattern, counts) = s.split_once('=').ok_or_else(bad)?;
            let (m, r) = counts.split_once(',').ok_or_else(bad)?;
            Ok(Heavy {
                pattern: pattern.to_string(),
                mutants: m.trim().parse().map_err(|_| bad())?,
                rewrites: r.trim().parse().map_err(|_| bad())?,
            })
        })
        .collect()
}

fn main() -> ExitCode {
    let args = Args::parse();
    match real_main(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(3)
        }
    }
}

fn real_main(args: Args) -> Result<ExitCode, String> {
    let mut ops = Vec::new();
    for o in &args.op {
        let op = Op::parse(o).ok_or_else(|| {
            let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
            format!("--op: unknown operator `{o}` (one of {})", names.join(", "))
        })?;
        ops.push(op);
    }
    let opts = Options {
        mutants: count(&args.mutants, "mutants")?,
        rewrites: count(&args.rewrites, "rewrites")?,
        seed: args.seed,
        timeout: Duration::from_secs(args.timeout.max(1)),
        step_factor: args.step_factor.max(1),
        ops,
        heavy: heavy_list(&args.heavy, args.no_heavy)?,
    };
    let allow_path = args.allow.unwrap_or_else(ptxeq_mutate::default_allow_path);
    let allow = AllowList::load(&allow_path)?;
    if args.list {
        return list(&args.corpus, &args.filter, &args.exclude, &opts);
    }
    let summary = run_corpus(
        &args.corpus,
        &args.filter,
        &args.exclude,
        &opts,
        &allow,
        |c| {
            // One write per case: cases finish on several threads.
            use std::fmt::Write as _;
            let mut log = String::new();
            if let Some(why) = &c.skipped {
                let _ = writeln!(log, "{}: skipped: {why}", c.case);
            } else {
                let _ = writeln!(
                    log,
                    "{}: original proved in {} ms, {} thread-instructions{}; {} of {} mutants and \
                 rewrites run",
                    c.case,
                    c.baseline_millis,
                    c.baseline_steps,
                    if c.heavy { " (heavy)" } else { "" },
                    c.results.len(),
                    c.available
                );
            }
            for r in &c.results {
                let extra = match &r.outcome {
                    Outcome::Undecided { reason } | Outcome::Lost { reason } => {
                        format!(" ({reason})")
                    }
                    Outcome::EquivalentByConstruction { why } => format!(" ({why})"),
                    Outcome::Crash { what } => format!(" ({what})"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    log,
                    "{} {} {}{extra} [{}, {} ms] {}",
                    c.case,
                    r.mutant.id,
                    r.outcome.class(),
                    r.verdict,
                    r.millis,
                    r.mutant.desc
                );
            }
            eprint!("{log}");
        },
    )?;
    println!("{}", summary.table());
    if let Some(rate) = summary.total.kill_rate() {
        println!("kill rate over live mutants: {rate:.1} %");
    }
    if !summary.unused_allow.is_empty() {
        println!(
            "{} allow-list entries matched no survivor in this run",
            summary.unused_allow.len()
        );
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let failures = summary.failures();
    for (case, id, what) in &failures {
        println!("FAIL {case} {id}: {what}");
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn list(
    root: &std::path::Path,
    filters: &[String],
    excludes: &[String],
    opts: &Options,
) -> Result<ExitCode, String> {
    let cases = ptxeq_corpus::discover(root).map_err(|e| e.to_string())?;
    for case in cases {
        if !ptxeq_mutate::selected(&case.name, filters, excludes) {
            continue;
        }
        let Ok(spec) = ptxeq_spec::CheckSpec::load(&case.spec_path()) else {
            continue;
        };
        if !ptxeq_mutate::run::is_target(&spec) {
            continue;
        }
        let ptxeq_spec::Kernels::Pair { candidate, .. } = &spec.kernels else {
            continue;
        };
        let text = std::fs::read_to_string(&candidate.ptx).map_err(|e| e.to_string())?;
        let k = Kernel::load(&text, candidate.entry.as_deref())?;
        let all: Vec<_> = enumerate(&k)
            .into_iter()
            .filter(|m| opts.ops.is_empty() || opts.ops.contains(&m.op))
            .collect();
        let n = all.len();
        let (rw, mu): (Vec<_>, Vec<_>) = all.into_iter().partition(|m| m.op.is_rewrite());
        let mut chosen = ptxeq_mutate::sample::pick(mu, opts.mutants, opts.seed, &case.name);
        chosen.extend(ptxeq_mutate::sample::pick(
            rw,
            opts.rewrites,
            opts.seed,
            &case.name,
        ));
        println!("{} ({n} available)", case.name);
        for m in chosen {
            println!("  {} line {}: {}", m.id, m.line, m.desc);
        }
    }
    Ok(ExitCode::SUCCESS)
}
