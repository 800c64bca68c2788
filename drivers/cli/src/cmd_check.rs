//! `ptxeq check`: prove a candidate kernel equivalent to a reference over
//! the reals, or show the bug (docs/semantics.md §1).
//!
//! The verdict line comes first. A race, deadlock or bad access in either
//! kernel is reported as such (with both accesses), before any
//! verification condition. Otherwise, per output tensor: proved / refuted /
//! unknown counts, then the first failing elements with both formulas and
//! the counterexample, then the modelling assumptions.

use std::path::PathBuf;

use ptxeq_check::{Checker, Mode, Outcome, Request, SmtKind, Verdict, schema};
use ptxeq_db::{CheckReport, Database, Slot};
use ptxeq_spec::CheckSpec;
use ptxeq_verdicts::{ElementFailure, Failure, TensorVerdicts};

use crate::exit::Exit;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, LoadedSpec, PairLaunchArgs, SpecFlagArgs};

/// JSON report schema (documented in README "JSON reports").
pub use ptxeq_check::schema::CHECK as SCHEMA;

/// Command-line options of `check` beyond the spec.
pub struct CheckOptions {
    pub format: ReportFormat,
    /// Failing elements printed per tensor (human output).
    pub show: usize,
    /// Write every verification condition as SMT-LIB2 here.
    pub emit_smt: Option<PathBuf>,
    /// `--formula`: the reference is this formula (text or `@FILE`).
    pub formula: Option<String>,
    /// `--formula-max-steps`.
    pub formula_max_steps: Option<u64>,
    /// `--max-refuted N`, or `None` with `--all-elements`.
    pub max_refuted: Option<u64>,
    /// `--json-formula-chars N`: whole formulas in JSON as text up to N
    /// characters, as a DAG beyond.
    pub json_formula_chars: usize,
    /// `--json-dag-nodes N`: DAG nodes a JSON report carries in all.
    pub json_dag_nodes: usize,
    /// `--origins-max-steps N`.
    pub origins_max_steps: u64,
}

pub fn run(
    targets: &[PathBuf],
    args: &SpecFlagArgs,
    pair: &PairLaunchArgs,
    candidate_entry: Option<String>,
    candidate_params: Option<String>,
    opts: &CheckOptions,
) -> Exit {
    let checker = Checker::new();
    let db = checker.db();
    let loaded = match targets {
        [_, _] if opts.formula.is_some() => {
            eprintln!(
                "error: --formula is the reference: give one PTX file (the candidate) with it"
            );
            None
        }
        [one] if opts.formula.is_some() && one.extension().is_some_and(|e| e == "toml") => {
            eprintln!(
                "error: {} is a spec; write the formula in its [reference] table (`formula = \"…\"`)",
                one.display()
            );
            None
        }
        [one]
            if pair.is_empty()
                && let Some(f) = &opts.formula =>
        {
            spec_args::load_formula(db, one, args, f)
        }
        [_] if !pair.is_empty() => {
            eprintln!(
                "error: --ref-* / --cand-* launch flags go with two PTX files (the flag form); \
                 a spec sets them in [reference.launch] / [candidate.launch]"
            );
            None
        }
        [one] => spec_args::load_checked(db, one, args),
        [reference, candidate] => spec_args::load_pair(
            db,
            reference,
            candidate,
            args,
            pair,
            candidate_entry,
            candidate_params,
        ),
        _ => {
            eprintln!("error: give a spec (`check.toml`) or two PTX files (reference, candidate)");
            None
        }
    };
    let Some(loaded) = loaded else {
        return Exit::Invalid;
    };
    let req = Request {
        formula_max_steps: opts.formula_max_steps,
        max_refuted: opts.max_refuted,
        ..Request::new(&loaded, Mode::Check)
    };
    let outcome = checker.run(&req);
    if let Some(why) = &outcome.invalid {
        eprintln!("error: {why}");
        return Exit::Invalid;
    }
    let Some(report) = outcome.check_report() else {
        return Exit::of_verdict(outcome.verdict);
    };
    match opts.format {
        ReportFormat::Human => {
            print_human(db, &loaded, &outcome, opts.show, opts.origins_max_steps)
        }
        ReportFormat::Json => print_json(
            db,
            &loaded,
            &outcome,
            JsonOptions {
                formula_chars: opts.json_formula_chars,
                dag_nodes: opts.json_dag_nodes,
                show: opts.show,
                origins_max_steps: opts.origins_max_steps,
            },
        ),
        ReportFormat::Sarif => {
            let names = InputNames::of(db, &loaded, report);
            let log = crate::sarif::render_check(
                db,
                &loaded,
                report,
                &names,
                opts.show,
                opts.origins_max_steps,
            );
            outln!("{}", serde_json::to_string_pretty(&log).unwrap_or_default());
        }
    }
    if let Some(dir) = &opts.emit_smt
        && report.verdicts.is_some()
    {
        match checker.emit_smt(&req, dir) {
            Ok((n, SmtKind::Formula)) => eprintln!(
                "wrote {n} verification condition(s) (formula = candidate) as SMT-LIB2 to {}",
                dir.display()
            ),
            Ok((n, SmtKind::Pair)) => eprintln!(
                "wrote {n} verification condition(s) as SMT-LIB2 to {} (elements whose two formulas are the same term need none)",
                dir.display()
            ),
            Err(e) => {
                eprintln!("error: cannot write SMT-LIB2 to {}: {e}", dir.display());
                return Exit::Invalid;
            }
        }
    }
    Exit::of_verdict(outcome.verdict)
}

/// The names of every input number (tensors, then symbolic scalars), as
/// witnesses and `tensor_numbers` use them.
pub struct InputNames {
    pub names: Vec<String>,
    /// Numbers from here on are symbolic scalars (printed without index).
    pub first_symbol: u32,
    /// Each tensor's shape (empty where unknown), for coordinates.
    pub shapes: Vec<Vec<u64>>,
}

impl InputNames {
    pub fn of(db: &Database, loaded: &LoadedSpec, report: &CheckReport) -> InputNames {
        match report.kernels.iter().find_map(|k| k.input.as_ref()) {
            Some(input) => InputNames {
                names: input.input_names(),
                first_symbol: input.first_symbol(),
                shapes: input.tensors.iter().map(|t| t.shape.clone()).collect(),
            },
            // No kernel bound: the spec's own numbering (tensors, `[globals]`
            // inputs), then its symbolic scalars.
            None => {
                let spec = loaded.spec.spec(db);
                let mut names: Vec<String> =
                    spec.input_names().into_iter().map(str::to_owned).collect();
                let first_symbol = names.len() as u32;
                let shapes = names
                    .iter()
                    .map(|n| {
                        spec.tensors
                            .get(n)
                            .map(|t| t.shape.clone())
                            .unwrap_or_default()
                    })
                    .collect();
                names.extend(
                    spec.scalars
                        .iter()
                        .filter(|(_, v)| v.symbolic().is_some())
                        .map(|(n, _)| n.clone()),
                );
                InputNames {
                    names,
                    first_symbol,
                    shapes,
                }
            }
        }
    }

    /// `x[0,41]` for a tensor element (coordinates in its declared shape,
    /// row-major; the flat index where the shape is unknown), `alpha` for
    /// a symbolic scalar.
    pub(crate) fn label(&self, tensor: u32, index: u64) -> String {
        let at = coordinates(self.shapes.get(tensor as usize).map_or(&[], |s| s), index);
        match self.names.get(tensor as usize) {
            Some(n) if tensor >= self.first_symbol => n.clone(),
            Some(n) => format!("{n}[{at}]"),
            None => format!("tensor#{tensor}[{at}]"),
        }
    }

    /// The symbolic scalars' names.
    fn symbols(&self) -> &[String] {
        self.names
            .get(self.first_symbol as usize..)
            .unwrap_or_default()
    }
}

/// A row-major flat `index` as coordinates of `shape` (`0,41` for index
/// 41 of an `[2, 64]` tensor); the flat index when the shape is unknown or
/// the index lies outside it.
pub(crate) fn coordinates(shape: &[u64], index: u64) -> String {
    let total = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
    if shape.len() < 2 || shape.contains(&0) || total.is_none_or(|t| index >= t) {
        return index.to_string();
    }
    let mut rest = index;
    let mut coords = vec![0u64; shape.len()];
    for (c, &d) in coords.iter_mut().zip(shape).rev() {
        *c = rest % d;
        rest /= d;
    }
    coords
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// CTA ids in words: `(0,0,0), (1,0,0) and 6 more`.
pub(crate) fn cta_list(ctas: &[[u32; 3]], shown: usize) -> String {
    if ctas.is_empty() {
        return "none".into();
    }
    let list: Vec<String> = ctas
        .iter()
        .take(shown)
        .map(|c| format!("({},{},{})", c[0], c[1], c[2]))
        .collect();
    let more = ctas.len().saturating_sub(shown);
    if more > 0 {
        format!("{} and {more} more", list.join(", "))
    } else {
        list.join(", ")
    }
}

/// Per kernel, the CTAs the verdict covers, in words.
fn ctas_lines(report: &CheckReport) -> Vec<String> {
    report
        .kernels
        .iter()
        .map(|k| {
            let p = &k.plan;
            let g = p.launch.grid;
            let total = p.grid_ctas();
            format!(
                "{}: CTAs checked: {} of a {}x{}x{} grid ({} of {total}; {})",
                k.slot.word(),
                cta_list(&p.ctas, 4),
                g[0],
                g[1],
                g[2],
                p.ctas.len(),
                p.how
            )
        })
        .collect()
}

/// Every assumption about CTAs, compared regions and symbolic scalars.
fn scope_assumptions(spec: &CheckSpec, report: &CheckReport, names: &InputNames) -> Vec<String> {
    let mut out = ctas_lines(report);
    for k in &report.kernels {
        for a in k.plan.assumptions() {
            out.push(format!("{}: {a}", k.slot.word()));
        }
    }
    for (name, t) in &spec.tensors {
        if let Some(r) = &t.compare {
            out.push(format!(
                "tensor {name}: only the region {} is compared (half-open ranges); elements \
                 outside it are not compared",
                ptxeq_spec::show_region(r)
            ));
        }
    }
    let symbols = names.symbols();
    if !symbols.is_empty() {
        let described: Vec<String> = symbols
            .iter()
            .map(|n| match spec.scalars.get(n).and_then(|v| v.symbolic()) {
                Some(d) => format!("{n} ({d})"),
                None => n.clone(),
            })
            .collect();
        out.push(format!(
            "symbolic scalars {}: free real symbols, the same in both kernels (any finite value)",
            described.join(", ")
        ));
    }
    out
}

fn tensors(report: &CheckReport) -> &[TensorVerdicts] {
    report.verdicts.as_ref().map_or(&[], |v| &v.tensors)
}

fn recoveries(report: &CheckReport) -> Vec<String> {
    report
        .verdicts
        .as_ref()
        .map(|v| v.recoveries.clone())
        .unwrap_or_default()
}

/// The human report of an equivalence check (`ptxeq check`, `watch`).
/// The terms of the first `per_tensor` failures of every output tensor
/// of `report`, imported again from both kernels' symbolic states (only
/// the sub-terms those elements reach).
fn failure_terms(
    db: &Database,
    loaded: &LoadedSpec,
    report: &CheckReport,
    names: &InputNames,
    per_tensor: usize,
) -> crate::full_formulas::ElementTerms {
    let wanted: Vec<(u32, u64)> = tensors(report)
        .iter()
        .flat_map(|t| {
            t.failures
                .iter()
                .take(per_tensor)
                .map(|f| (t.tensor, f.index))
        })
        .collect();
    crate::full_formulas::ElementTerms::import(db, loaded.spec, &loaded.kernels, names, &wanted)
}

pub(crate) fn print_human(
    db: &Database,
    loaded: &LoadedSpec,
    outcome: &Outcome,
    show: usize,
    origins_max_steps: u64,
) {
    let Some(report) = outcome.check_report() else {
        return;
    };
    let elapsed = outcome.elapsed;
    let spec = loaded.spec.spec(db);
    let verdict_line = match (outcome.decided_by, outcome.verdict) {
        (Some(slot), v) => format!("{v} (in the {} kernel)", slot.word()),
        (None, Verdict::Unsupported) => "unsupported (undecided: see below)".to_string(),
        (None, v) => v.to_string(),
    };
    outln!("{verdict_line}");
    if let Some(f) = spec.kernels.formula() {
        outln!("reference: the formula {}", f.origin());
        for line in f.text.trim_end().lines() {
            outln!("  | {line}");
        }
    }
    crate::cmd_race::print_kernels(db, &report.kernels);
    if outcome.stopped_at_kernel() {
        outln!();
        outln!(
            "no verification condition was checked: the outputs of a kernel that is not race-free depend on the schedule"
        );
        outln!("time: {:.1} ms", elapsed.as_secs_f64() * 1e3);
        return;
    }
    outln!();
    let names = InputNames::of(db, loaded, report);
    let stores = crate::stores::Stores::new(db, &report.kernels);
    let mut origins = crate::formula_diff::Origins::new(origins_max_steps);
    // The element terms, imported again to measure the formulas that were
    // cut (only then).
    let any_cut = tensors(report)
        .iter()
        .flat_map(|t| t.failures.iter().take(show))
        .any(|f| was_cut(&f.reference) || was_cut(&f.candidate));
    let full = any_cut.then(|| failure_terms(db, loaded, report, &names, show));
    for t in tensors(report) {
        let region = match &t.compare_region {
            Some(r) => format!(
                " in the region {} ({} written element(s) outside it not compared)",
                ptxeq_spec::show_region(r),
                t.outside
            ),
            None => String::new(),
        };
        outln!(
            "output {}: {} element(s){region}: {} proved ({} identical terms), {} refuted, {} unknown{}",
            t.name,
            t.compared,
            t.proved,
            t.identical,
            t.refuted,
            t.unknown,
            if t.not_decided > 0 {
                format!(
                    ", {} not decided (the verdict was already final)",
                    t.not_decided
                )
            } else {
                String::new()
            }
        );
        if t.compared == 0 && t.compare_region.is_some() {
            outln!(
                "  note: neither kernel writes any element of {}'s compared region (is the region right?)",
                t.name
            );
        }
        for f in t.failures.iter().take(show) {
            let diff = matches!(f.failure, Failure::Refuted { .. } | Failure::Unknown { .. })
                .then(|| {
                    crate::formula_diff::describe(
                        db,
                        loaded.spec,
                        &loaded.kernels,
                        &names,
                        t.tensor,
                        f.index,
                        DIFF_WIDTH,
                        &mut origins,
                    )
                })
                .flatten();
            let cut = [
                (Slot::Reference, &f.reference),
                (Slot::Candidate, &f.candidate),
            ]
            .map(|(slot, text)| {
                let e = full.as_ref().filter(|_| was_cut(text))?;
                let len = e.length(e.get(slot, t.tensor, f.index)?, TEXT_CHARS);
                Some(format!(
                    "      (cut at {} of {len}; --format json carries the whole formula)",
                    ptxeq_verdicts::FORMULA_WIDTH
                ))
            });
            print_failure(&t.name, &names, f, diff, cut, store_lines(&stores, f));
        }
        let failing = (t.refuted + t.unknown) as usize;
        let shown = t.failures.len().min(show);
        if failing > shown {
            outln!(
                "  … {} more failing element(s) (--show N prints up to {}; --format json lists them)",
                failing - shown,
                ptxeq_verdicts::MAX_FAILURES_KEPT
            );
        }
    }
    for n in origins.skipped_notes() {
        outln!("  note: {n}");
    }
    if report.verdicts.is_some() {
        for (name, t) in &spec.tensors {
            let listed = tensors(report).iter().any(|v| &v.name == name);
            if let Some(r) = &t.compare
                && !listed
            {
                outln!(
                    "output {name}: 0 element(s) in the region {}: neither kernel writes the tensor in the CTAs run (is the region right?)",
                    ptxeq_spec::show_region(r)
                );
            }
        }
    }
    for p in &report.problems {
        outln!("unsupported: {p}");
    }
    outln!();
    outln!("assumptions:");
    for a in &outcome.assumptions {
        outln!("  - {a}");
    }
    for a in scope_assumptions(spec, report, &names) {
        outln!("  - {a}");
    }
    for r in recoveries(report) {
        outln!("  - constant recovered: {r}");
    }
    for a in crate::cmd_race::idiom_assumptions(&report.kernels) {
        outln!("  - math idiom: {a}");
    }
    for n in crate::cmd_race::grid_notes(&report.kernels) {
        outln!("  - grid: {n}");
    }
    for a in crate::cmd_race::binding_assumptions(&report.kernels) {
        outln!("  - binding: {a}");
    }
    let stats = report
        .verdicts
        .as_ref()
        .map(|v| v.stats)
        .unwrap_or_default();
    let (decided, hits) = (stats.decided, stats.memo_hits);
    if stats.not_decided > 0 {
        outln!(
            "stopped early: {} element pair(s) not decided — {} refuted element(s) already make the verdict final (--max-refuted {}; --all-elements decides every element)",
            stats.not_decided,
            report.verdicts.as_ref().map_or(0, |v| v.refuted()),
            stats.max_refuted.unwrap_or(0)
        );
    }
    outln!(
        "time: {:.1} ms ({decided} element pair(s) decided, {hits} from the memo)",
        elapsed.as_secs_f64() * 1e3
    );
}

/// Inputs of a counterexample printed before eliding.
const WITNESS_SHOWN: usize = 12;

/// A counterexample's inputs as the human report and SARIF messages show
/// them: symbolic scalars first (few, and what a reader looks for), then
/// the first [`WITNESS_SHOWN`] in all, and how many more the JSON report
/// lists (an attention row's witness names tens of thousands).
pub(crate) fn witness_shown(
    cx: &ptxeq_decide::decide::Counterexample,
    names: &InputNames,
) -> String {
    let mut ordered: Vec<_> = cx.inputs.iter().collect();
    ordered.sort_by_key(|w| w.tensor < names.first_symbol);
    let inputs: Vec<String> = ordered
        .into_iter()
        .take(WITNESS_SHOWN)
        .map(|w| format!("{} = {}", names.label(w.tensor, w.index), w.value))
        .collect();
    let more = cx.inputs.len().saturating_sub(WITNESS_SHOWN);
    let more = if more > 0 {
        format!(", … ({more} more in --format json)")
    } else {
        String::new()
    };
    format!("{}{more}", inputs.join(", "))
}

/// How far the length of a cut formula is counted (the human report's
/// note; JSON uses `--json-formula-chars`).
const TEXT_CHARS: usize = crate::full_formulas::DEFAULT_TEXT_CHARS;

/// Characters of each differing sub-term printed.
const DIFF_WIDTH: usize = 160;

/// The lines naming the store that wrote a failing element's value in
/// each kernel, with its source line (`k.cu:11 | y[i] = acc;`) when the PTX has line info.
fn store_lines(stores: &crate::stores::Stores<'_>, f: &ElementFailure) -> Vec<String> {
    let mut out = Vec::new();
    for (slot, site) in [
        (Slot::Reference, f.reference_store),
        (Slot::Candidate, f.candidate_store),
    ] {
        if let Some(st) = stores.name(slot, site) {
            out.push(format!("    stored by the {}: {}", slot.word(), st.line()));
            if let Some(e) = &st.excerpt {
                out.push(format!("      {e}"));
            }
        }
    }
    out
}

/// One failing element: both formulas, where they first differ (`diff`,
/// reference then candidate) and the witness.
fn print_failure(
    name: &str,
    names: &InputNames,
    f: &ElementFailure,
    diff: Option<crate::formula_diff::Described>,
    cut: [Option<String>; 2],
    stores: Vec<String>,
) {
    let coords: Vec<String> = f.coords.iter().map(|c| c.to_string()).collect();
    let what = match &f.failure {
        Failure::Refuted { .. } => "refuted".to_string(),
        Failure::WrittenByOne { writer } => format!("refuted: written only by the {writer}"),
        Failure::BitsDiffer { .. } => "refuted: different bit patterns".to_string(),
        Failure::Unknown { reason, .. } => format!("unknown: {reason}"),
        Failure::Unsupported { reason } => format!("unsupported: {reason}"),
    };
    outln!("  {name}[{}]: {what}", coords.join(","));
    outln!("    reference: {}", f.reference);
    if let Some(note) = &cut[0] {
        outln!("{note}");
    }
    outln!("    candidate: {}", f.candidate);
    if let Some(note) = &cut[1] {
        outln!("{note}");
    }
    if let Some(d) = diff {
        let [r, c] = &d.sides;
        outln!("    first difference: the reference has {r}");
        outln!("                      where the candidate has {c}");
        for l in d.built.iter().flat_map(|b| b.lines()) {
            outln!("      {l}");
        }
    }
    for l in &stores {
        outln!("{l}");
    }
    match &f.failure {
        Failure::Refuted { counterexample: cx } => {
            outln!("    counterexample: {}", witness_shown(cx, names));
            outln!(
                "    gives reference = {}, candidate = {}",
                cx.reference,
                cx.candidate
            );
            for f in &cx.functions {
                outln!("    with the uninterpreted function {f}");
            }
            if let Some(d) = &cx.exact_difference {
                outln!("    {d}");
            }
        }
        Failure::BitsDiffer {
            reference,
            candidate,
        } => outln!("    for every input: reference {reference:#x}, candidate {candidate:#x}"),
        Failure::Unknown {
            residual: Some(r), ..
        } => outln!("    residual (reference - candidate, normal form): {r}"),
        _ => {}
    }
}

/// What the reference is: a kernel, or a formula (its text and file).
fn reference_json(spec: &CheckSpec) -> schema::Reference {
    match spec.kernels.formula() {
        Some(f) => schema::Reference::Formula {
            formula: f.text.clone(),
            file: f.file.as_ref().map(|p| p.display().to_string()),
        },
        None => schema::Reference::Kernel,
    }
}

/// Whether a formula of a failure was cut at the display width.
fn was_cut(formula: &str) -> bool {
    formula.ends_with('…')
}

/// Default of `--show`: failing elements printed per output tensor (and,
/// in JSON, given a `first_difference`).
pub const DEFAULT_SHOW: usize = 3;

/// What a `ptxeq.check/1` report carries beyond the verdicts (the CLI's
/// flags; the Python call's keywords).
#[derive(Clone, Copy, Debug)]
pub struct JsonOptions {
    /// `--json-formula-chars`: whole formulas as text up to this many
    /// characters, as a DAG beyond.
    pub formula_chars: usize,
    /// `--json-dag-nodes`: the DAG nodes all failures carry together.
    pub dag_nodes: usize,
    /// `--show`: the first this many failures of each tensor get a
    /// `first_difference` (each costs a replay of the CTA that wrote the
    /// element in both kernels, once per CTA).
    pub show: usize,
    /// `--origins-max-steps`.
    pub origins_max_steps: u64,
}

impl Default for JsonOptions {
    fn default() -> Self {
        JsonOptions {
            formula_chars: crate::full_formulas::DEFAULT_TEXT_CHARS,
            dag_nodes: crate::full_formulas::DEFAULT_DAG_NODES,
            show: DEFAULT_SHOW,
            origins_max_steps: crate::formula_diff::DEFAULT_ORIGINS_MAX_STEPS,
        }
    }
}

/// What the failures of a JSON report are rendered with.
struct JsonContext<'a> {
    db: &'a Database,
    loaded: &'a LoadedSpec,
    stores: crate::stores::Stores<'a>,
    /// The element terms, when some formula was cut or some failure gets
    /// a first difference.
    terms: Option<crate::full_formulas::ElementTerms>,
    origins: crate::formula_diff::Origins,
    /// What is left of `--json-dag-nodes`.
    dag_nodes: crate::full_formulas::DagBudget,
    /// A pair of kernels (not a formula reference): first differences
    /// exist.
    pair: bool,
    opts: JsonOptions,
}

/// Whether a failure is explained by a first difference.
fn has_difference(f: &ElementFailure) -> bool {
    matches!(f.failure, Failure::Refuted { .. } | Failure::Unknown { .. })
}

/// The schema form of an output tensor's element verdicts, each failure
/// as the verdicts' typed [`Failure`] (serialised as the schema's
/// `failure` object).
fn output_json<'t>(t: &'t TensorVerdicts, cx: &mut JsonContext<'_>) -> schema::Output<&'t Failure> {
    let mut failures = Vec::with_capacity(t.failures.len());
    for (i, f) in t.failures.iter().enumerate() {
        let e = cx.terms.as_ref();
        let full = e
            .filter(|_| was_cut(&f.reference) || was_cut(&f.candidate))
            .map(|e| {
                e.full(
                    e.get(Slot::Reference, t.tensor, f.index),
                    e.get(Slot::Candidate, t.tensor, f.index),
                    cx.opts.formula_chars,
                    &mut cx.dag_nodes,
                )
            });
        let first_difference = e
            .filter(|_| cx.pair && i < cx.opts.show && has_difference(f))
            .and_then(|e| {
                let a = e.get_at(Slot::Reference, t.tensor, f.index)?;
                let b = e.get_at(Slot::Candidate, t.tensor, f.index)?;
                crate::formula_diff::describe_terms(
                    cx.db,
                    cx.loaded.spec,
                    &cx.loaded.kernels,
                    &e.terms,
                    [a, b],
                    DIFF_WIDTH,
                    &mut cx.origins,
                )
            })
            .map(|d| d.json());
        failures.push(schema::ElementFailure {
            index: f.index,
            coords: f.coords.clone(),
            reference: f.reference.clone(),
            candidate: f.candidate.clone(),
            failure: &f.failure,
            reference_store: cx
                .stores
                .name(Slot::Reference, f.reference_store)
                .map(|s| s.json()),
            candidate_store: cx
                .stores
                .name(Slot::Candidate, f.candidate_store)
                .map(|s| s.json()),
            full,
            first_difference,
        });
    }
    schema::Output {
        tensor: t.tensor,
        name: t.name.clone(),
        shape: t.shape.clone(),
        compare_region: t.compare_region.clone(),
        outside: t.outside,
        compared: t.compared,
        proved: t.proved,
        refuted: t.refuted,
        unknown: t.unknown,
        identical: t.identical,
        not_decided: t.not_decided,
        failures,
    }
}

/// Writes the report straight to stdout as it is serialised: a report
/// whose refuted elements read tens of thousands of inputs each (an
/// attention row) is never held as a tree of JSON values or as one
/// string. A closed stdout is ignored, as `outln!` does.
fn print_json(db: &Database, loaded: &LoadedSpec, outcome: &Outcome, opts: JsonOptions) {
    use std::io::Write as _;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::new(stdout.lock());
    let written = match report_typed(db, loaded, outcome, opts) {
        Some(report) => serde_json::to_writer_pretty(&mut w, &report).map_err(std::io::Error::from),
        None => w.write_all(b"null"),
    };
    let _ = written.and_then(|()| writeln!(w)).and_then(|()| w.flush());
}

/// The `ptxeq.check/1` JSON report (`--format json` with the default
/// options).
pub fn report_json(db: &Database, loaded: &LoadedSpec, outcome: &Outcome) -> serde_json::Value {
    report_json_with(db, loaded, outcome, JsonOptions::default())
}

/// The `ptxeq.check/1` JSON report (`--format json`; also what the Python
/// bindings convert into a `CheckResult`).
pub fn report_json_with(
    db: &Database,
    loaded: &LoadedSpec,
    outcome: &Outcome,
    opts: JsonOptions,
) -> serde_json::Value {
    report_typed(db, loaded, outcome, opts)
        .and_then(|r| serde_json::to_value(r).ok())
        .unwrap_or_default()
}

/// The `ptxeq.check/1` report as compact JSON text, serialised straight
/// from the typed report (no tree of JSON values; see [`print_json`]):
/// what the Python bindings hand to Python.
pub fn report_json_text(
    db: &Database,
    loaded: &LoadedSpec,
    outcome: &Outcome,
    opts: JsonOptions,
) -> String {
    report_typed(db, loaded, outcome, opts)
        .and_then(|r| serde_json::to_string(&r).ok())
        .unwrap_or_else(|| "null".to_string())
}

/// The `ptxeq.check/1` report with each failure still the verdicts'
/// typed [`Failure`]; `None` when the outcome is not a check's.
fn report_typed<'o>(
    db: &Database,
    loaded: &LoadedSpec,
    outcome: &'o Outcome,
    opts: JsonOptions,
) -> Option<schema::CheckReport<&'o Failure>> {
    let report = outcome.check_report()?;
    let spec = loaded.spec.spec(db);
    let names = InputNames::of(db, loaded, report);
    let failing_kernel = outcome.decided_by.map(|s| s.word().to_string());
    let verdicts = report.verdicts.as_ref();
    let pair = spec.kernels.formula().is_none()
        && [Slot::Reference, Slot::Candidate]
            .iter()
            .all(|s| loaded.kernels.iter().any(|(k, _)| k == s));
    // The element terms, imported again only when some formula was cut or
    // some failure gets a first difference.
    let needed = tensors(report).iter().any(|t| {
        t.failures.iter().enumerate().any(|(i, f)| {
            was_cut(&f.reference)
                || was_cut(&f.candidate)
                || (pair && i < opts.show && has_difference(f))
        })
    });
    let mut cx = JsonContext {
        db,
        loaded,
        stores: crate::stores::Stores::new(db, &report.kernels),
        terms: needed.then(|| failure_terms(db, loaded, report, &names, usize::MAX)),
        origins: crate::formula_diff::Origins::new(opts.origins_max_steps),
        dag_nodes: crate::full_formulas::DagBudget::new(opts.dag_nodes),
        pair,
        opts,
    };
    let outputs = tensors(report)
        .iter()
        .map(|t| output_json(t, &mut cx))
        .collect();
    let out = schema::CheckReport {
        schema: SCHEMA.to_string(),
        verdict: outcome.verdict,
        undecided: outcome.verdict == Verdict::Unsupported && failing_kernel.is_none(),
        failing_kernel,
        kernels: crate::cmd_race::kernels_json(db, &report.kernels),
        symbolic_scalars: names.symbols().to_vec(),
        tensor_numbers: names.names.clone(),
        outputs,
        ctas: verdicts.map(|v| v.ctas.clone()),
        candidate_ctas: verdicts.map(|v| v.candidate_ctas.clone()),
        all_ctas_checked: verdicts.map(|v| v.complete),
        stats: verdicts.map(|v| schema::Stats {
            decided: v.stats.decided,
            memo_hits: v.stats.memo_hits,
            not_decided: v.stats.not_decided,
            max_refuted: v.stats.max_refuted,
            stopped_early: v.stopped_early(),
            micros: v.stats.micros,
        }),
        problems: report.problems.clone(),
        reference: reference_json(spec),
        assumptions: outcome.assumptions.iter().map(|a| a.to_string()).collect(),
        ctas_checked: ctas_lines(report).join("; "),
        scope_assumptions: scope_assumptions(spec, report, &names),
        constant_recoveries: recoveries(report),
        idiom_assumptions: crate::cmd_race::idiom_assumptions(&report.kernels),
        binding_assumptions: crate::cmd_race::binding_assumptions(&report.kernels),
        time_ms: outcome.elapsed.as_secs_f64() * 1e3,
    };
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::coordinates;

    #[test]
    fn flat_indices_print_as_coordinates() {
        assert_eq!(coordinates(&[2, 64], 41), "0,41");
        assert_eq!(coordinates(&[2, 64], 105), "1,41");
        assert_eq!(coordinates(&[4, 3, 2], 23), "3,2,1");
        // One dimension, unknown shape, out of range: the flat index.
        assert_eq!(coordinates(&[128], 7), "7");
        assert_eq!(coordinates(&[], 7), "7");
        assert_eq!(coordinates(&[2, 2], 9), "9");
    }
}
