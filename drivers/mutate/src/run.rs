//! Running mutants of one corpus case and classifying each.
//!
//! One salsa database per case holds the reference and the candidate as
//! two inputs; each mutant replaces the candidate's text, so the
//! reference's unrolled and symbolic states and every element decision
//! already made are reused (only the mutant's kernel is recomputed).
//!
//! Per mutant:
//! 1. the mutant is bound (`cta_input`, idioms recognised) and every
//!    checked CTA is run once with the opaque domain and coverage on,
//!    under a step budget (a multiple of the original's steps): a mutant
//!    that loops far longer than the original is `undecided` (step
//!    budget) without a full check;
//! 2. the full check (`ptxeq_db::check`, exactly what `ptxeq check` runs)
//!    on a worker thread, panics caught, under a wall-clock budget;
//! 3. the verdict and the coverage of step 1 give the class ([`Outcome`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ptxeq_corpus::CaseDir;
use ptxeq_db::{CheckVerdict, Database, KernelSlot, RaceVerdict, Slot, SourceFile, SpecInput};
use ptxeq_exec::{
    Coverage, CtaInput, Finding, FindingKind, InstrRef, OVal, Opaque, TensorOutput, Trace,
    run_cta_with_coverage,
};
use ptxeq_ir::Instr;
use ptxeq_spec::{CheckSpec, Status, Verdict};
use ptxeq_verdicts::Failure;
use salsa::Setter;
use serde::Serialize;

use crate::allow::AllowList;
use crate::mutants::{Mutant, Probe, enumerate};
use crate::sample::pick;
use crate::site::Kernel;

/// How a mutant (or rewrite) ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "class", rename_all = "kebab-case")]
pub enum Outcome {
    /// A mutation refuted: `by` is the verdict word.
    Killed { by: String },
    /// A mutation proved equivalent whose instruction never ran in the
    /// checked CTAs, or whose result nobody read (from the run's coverage).
    EquivalentByConstruction { why: String },
    /// A mutation proved equivalent although its instruction ran and its
    /// result was read. `allowed`: the reviewed reason, if listed.
    SurvivedLive {
        allowed: Option<String>,
        /// The mutated instruction was absorbed into a recognised math
        /// idiom (the recogniser accepted the changed expansion).
        in_idiom: bool,
    },
    /// Neither proved nor refuted; `reason` is a short category.
    Undecided { reason: String },
    /// A panic or the wall-clock budget.
    Crash { what: String },
    /// A rewrite still proved equivalent.
    Preserved,
    /// A rewrite refuted: a false refutation (a bug).
    FalseRefutation { by: String },
    /// A rewrite no longer decided; `reason` as for `Undecided`.
    Lost { reason: String },
}

impl Outcome {
    /// The class name used in tables and JSON.
    pub fn class(&self) -> &'static str {
        match self {
            Outcome::Killed { .. } => "killed",
            Outcome::EquivalentByConstruction { .. } => "equivalent-by-construction",
            Outcome::SurvivedLive {
                allowed: Some(_), ..
            } => "survived-live-allowed",
            Outcome::SurvivedLive { .. } => "survived-live",
            Outcome::Undecided { .. } => "undecided",
            Outcome::Crash { .. } => "crash",
            Outcome::Preserved => "preserved",
            Outcome::FalseRefutation { .. } => "false-refutation",
            Outcome::Lost { .. } => "lost",
        }
    }

    /// Whether the harness must fail on this outcome: a survivor nobody
    /// reviewed, a crash, a false refutation.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::SurvivedLive { allowed: None, .. }
                | Outcome::Crash { .. }
                | Outcome::FalseRefutation { .. }
        )
    }
}

/// One mutant's result.
#[derive(Clone, Debug, Serialize)]
pub struct MutantResult {
    #[serde(flatten)]
    pub mutant: Mutant,
    pub outcome: Outcome,
    /// The check's verdict word (`equivalent`, `not-equivalent`, `race`,
    /// ...; `-` when no check ran).
    pub verdict: String,
    /// The first line of what the checker said (the undecided reason in
    /// full, the first finding, ...).
    pub detail: String,
    pub millis: u64,
}

/// One case's results.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub case: String,
    pub family: String,
    /// Set when the case was not mutated, with why.
    pub skipped: Option<String>,
    /// Mutants and rewrites the operators could produce (before sampling).
    pub available: usize,
    pub baseline_millis: u64,
    /// Thread-instructions of the original candidate over the CTAs checked.
    pub baseline_steps: u64,
    /// Listed in [`Options::heavy`]: fewer mutants were run.
    pub heavy: bool,
    pub results: Vec<MutantResult>,
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Mutations per case (`None`: all).
    pub mutants: Option<usize>,
    /// Rewrites per case (`None`: all).
    pub rewrites: Option<usize>,
    pub seed: u64,
    /// Wall-clock budget of one mutant's check.
    pub timeout: Duration,
    /// The coverage pre-run's step budget: this many times the original's
    /// steps (per CTA), plus [`STEP_SLACK`].
    pub step_factor: u64,
    /// Only these operators (empty: all).
    pub ops: Vec<crate::mutants::Op>,
    /// Cases whose mutants take minutes each (every element of a refuted
    /// attention output is decided and confirmed): at most this many
    /// mutations and rewrites for a case whose name contains the pattern.
    pub heavy: Vec<Heavy>,
}

/// A case pattern with reduced mutant counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heavy {
    pub pattern: String,
    pub mutants: usize,
    pub rewrites: usize,
}

/// The corpus cases whose original check alone takes ten seconds or more
/// on the development machine, and the counts they get by default. The
/// 512-key FlashAttention pair (minutes per refuted mutant) gets rewrites
/// only.
pub fn default_heavy() -> Vec<Heavy> {
    let h = |p: &str, mutants, rewrites| Heavy {
        pattern: p.to_string(),
        mutants,
        rewrites,
    };
    vec![
        h("attention/fa2-q16-kv512", 0, 1),
        h("attention/fa2-q16-kv128", 1, 1),
        h("attention/causal-mask-q64-kv64", 1, 1),
        h("attention/causal-skip-q64-kv64", 1, 1),
        h("attention/fa1-libm-q16-kv64", 1, 1),
        h("attention/fa1-q16-kv64", 1, 1),
        h("attention/fa2-mma-f16-q16-kv64", 2, 1),
        h("triton/layernorm-fwd", 1, 1),
    ]
}

/// Added to the scaled step budget, so tiny kernels are not cut short.
pub const STEP_SLACK: u64 = 1_000_000;

impl Default for Options {
    fn default() -> Self {
        Options {
            mutants: Some(4),
            rewrites: Some(2),
            seed: 1,
            timeout: Duration::from_secs(1200),
            step_factor: 8,
            ops: Vec::new(),
            heavy: default_heavy(),
        }
    }
}

/// The database of one case: reference and candidate as two inputs (two
/// inputs even when both kernels live in one PTX file, so only the
/// candidate's copy is mutated).
struct Session {
    db: Database,
    spec: SpecInput,
    rf: SourceFile,
    cf: SourceFile,
    spec_path: PathBuf,
    spec_value: CheckSpec,
    ref_text: String,
    cand_text: String,
    /// Lowering diagnostics of the original candidate.
    cand_problems: usize,
}

/// What one check said, extracted on the worker thread.
struct Said {
    verdict: CheckVerdict,
    /// Short category of an undecided verdict.
    reason: String,
    detail: String,
}

impl Session {
    fn new(spec_path: &Path, spec: &CheckSpec, ref_text: String, cand_text: String) -> Self {
        let (ref_path, cand_path) = match &spec.kernels {
            ptxeq_spec::Kernels::Pair {
                reference,
                candidate,
            } => (reference.ptx.clone(), candidate.ptx.clone()),
            ptxeq_spec::Kernels::Single(k) => (k.ptx.clone(), k.ptx.clone()),
            // Not selected (pairs of kernels only, `select_cases`).
            ptxeq_spec::Kernels::Formula { candidate, .. } => {
                (candidate.ptx.clone(), candidate.ptx.clone())
            }
        };
        let db = Database::default().with_cache(None);
        let rf = db.add_file(&ref_path, ref_text.clone());
        let cf = db.add_file(&cand_path, cand_text.clone());
        let si = SpecInput::new(&db, spec_path.to_path_buf(), spec.clone());
        let cand_problems = ptxeq_db::lowered_module(&db, cf).diagnostics.len();
        Session {
            db,
            spec: si,
            rf,
            cf,
            spec_path: spec_path.to_path_buf(),
            spec_value: spec.clone(),
            ref_text,
            cand_text,
            cand_problems,
        }
    }

    /// A fresh database (after a timeout or a panic: the abandoned worker
    /// may still hold the old one).
    fn reset(&mut self) {
        *self = Session::new(
            &self.spec_path.clone(),
            &self.spec_value.clone(),
            self.ref_text.clone(),
            self.cand_text.clone(),
        );
    }

    fn set_candidate(&mut self, text: &str) {
        self.cf.set_text(&mut self.db).to(text.to_string());
    }

    fn candidate_input(&self) -> Result<Arc<CtaInput>, String> {
        let k = KernelSlot::new(&self.db, self.spec, Slot::Candidate, self.cf);
        ptxeq_db::cta_input(&self.db, k).clone()
    }

    /// The full check on a worker thread under `timeout`.
    fn check(&mut self, timeout: Duration) -> Result<Said, String> {
        let db = self.db.clone();
        let spec = self.spec;
        let files = [(Slot::Reference, self.rf), (Slot::Candidate, self.cf)];
        let (tx, rx) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .name("mutant-check".into())
            .spawn(move || {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    let report = ptxeq_db::check(&db, spec, &files);
                    said(&report)
                }));
                let _ = tx.send(r.map_err(|p| panic_message(&*p)));
            });
        if let Err(e) = worker {
            return Err(format!("cannot start a worker thread: {e}"));
        }
        match rx.recv_timeout(timeout) {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(p)) => {
                self.reset();
                Err(format!("panic: {p}"))
            }
            Err(_) => {
                // The worker keeps running to its end on the old database.
                self.reset();
                Err(format!("timeout: over {} s", timeout.as_secs()))
            }
        }
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".into()
    }
}

fn first_line(s: &str) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.len() > 300 {
        let mut end = 300;
        while !l.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &l[..end])
    } else {
        l.to_string()
    }
}

/// The verdict, a short reason category and a one-line detail.
fn said(r: &ptxeq_db::CheckReport) -> Said {
    let (reason, detail) = match &r.verdict {
        CheckVerdict::Kernel { slot, verdict } => {
            let k = r.kernels.iter().find(|k| k.slot == *slot);
            let finding = k.and_then(|k| {
                let all = k.ctas.iter().flat_map(|(_, f, _)| f).chain(&k.cross_cta);
                let want = |f: &&ptxeq_exec::Finding| match verdict {
                    RaceVerdict::Unsupported => matches!(
                        f.kind,
                        FindingKind::Unsupported
                            | FindingKind::ResourceLimit
                            | FindingKind::Trap
                            | FindingKind::DivisionByZero
                    ),
                    _ => true,
                };
                all.into_iter().find(want).cloned()
            });
            let structured = k
                .and_then(|k| k.structured.as_ref())
                .filter(|s| !s.is_structured());
            match (finding, structured) {
                (Some(f), _) => {
                    let cat = if !f.reason.is_empty() {
                        f.reason.clone()
                    } else {
                        format!("{:?}", f.kind).to_lowercase()
                    };
                    (cat, format!("{}: {}", slot.word(), first_line(&f.message)))
                }
                (None, Some(s)) => {
                    let (cat, msg) = match (s.first(), &s.skipped) {
                        (Some(p), _) => (
                            format!("not structured: {:?}", p.kind).to_lowercase(),
                            p.message.clone(),
                        ),
                        (None, Some(w)) => ("validation skipped".into(), w.clone()),
                        (None, None) => ("not structured".into(), String::new()),
                    };
                    (cat, format!("{}: {}", slot.word(), first_line(&msg)))
                }
                (None, None) => (verdict.as_str().to_string(), String::new()),
            }
        }
        CheckVerdict::Undecided => {
            let failure = r.verdicts.as_ref().and_then(|v| {
                v.tensors
                    .iter()
                    .flat_map(|t| &t.failures)
                    .find(|f| !f.failure.is_refutation())
            });
            match (failure, r.problems.first()) {
                (Some(f), _) => match &f.failure {
                    Failure::Unknown { reason, .. } => (
                        format!("unknown element: {}", short(reason)),
                        format!("element {}: {}", f.index, first_line(reason)),
                    ),
                    Failure::Unsupported { reason } => (
                        format!("unsupported element: {}", short(reason)),
                        format!("element {}: {}", f.index, first_line(reason)),
                    ),
                    _ => ("undecided".into(), String::new()),
                },
                (None, Some(p)) => ("no comparison".into(), first_line(p)),
                (None, None) => ("undecided".into(), String::new()),
            }
        }
        CheckVerdict::InvalidInput(e) => ("invalid input".into(), first_line(e)),
        CheckVerdict::NotEquivalent => {
            let f = r.verdicts.as_ref().and_then(|v| {
                v.tensors
                    .iter()
                    .flat_map(|t| t.failures.iter().map(move |f| (t, f)))
                    .find(|(_, f)| f.failure.is_refutation())
            });
            let d = f.map_or(String::new(), |(t, f)| {
                format!("{}[{}] differs", t.name, f.index)
            });
            (String::new(), d)
        }
        CheckVerdict::Equivalent => (String::new(), String::new()),
    };
    Said {
        verdict: r.verdict.clone(),
        reason,
        detail,
    }
}

/// The first clause of a reason (a stable category for the summary).
fn short(reason: &str) -> String {
    let s = first_line(reason);
    let s = ["reference: ", "candidate: "]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .map_or(s.clone(), str::to_string);
    let cut = s
        .find([':', '(', ';', ','])
        .map_or(s.as_str(), |i| &s[..i])
        .trim();
    cut.to_string()
}

/// Coverage of every checked CTA of `input`, under a step budget, with
/// what makes a run observable: paths and schedule, findings, outputs.
struct Covered {
    cov: Coverage,
    /// Per CTA: trace, findings and output values of the opaque run.
    runs: Vec<(Trace, Vec<Finding>, Vec<TensorOutput<OVal>>)>,
    /// The most thread-instructions any CTA ran.
    steps: u64,
    /// Thread-instructions of all CTAs.
    total_steps: u64,
    /// The step budget was hit.
    over_budget: bool,
}

impl Covered {
    /// Whether the two runs are the same to everything the checker judges:
    /// equal paths and schedule, findings, output values and memory
    /// accesses (addresses and stored values) in every thread.
    fn same_run(&self, other: &Covered) -> bool {
        self.runs == other.runs && self.cov.accesses() == other.cov.accesses()
    }
}

fn cover(input: &CtaInput, ctas: &[[u32; 3]], max_steps: Option<u64>) -> Covered {
    let mut inp = input.clone();
    if let Some(m) = max_steps {
        inp.limits.max_steps = inp.limits.max_steps.min(m);
    }
    let mut cov = Coverage::default();
    let mut runs = Vec::with_capacity(ctas.len());
    let (mut steps, mut total_steps, mut over) = (0, 0u64, false);
    for &cta in ctas {
        let (run, _, c) = run_cta_with_coverage(&inp, cta, Opaque::new());
        cov.merge(&c);
        steps = steps.max(run.stats.instructions_executed);
        total_steps = total_steps.saturating_add(run.stats.instructions_executed);
        over |= max_steps.is_some()
            && run
                .findings
                .iter()
                .any(|f| f.kind == FindingKind::ResourceLimit && f.reason == "step limit");
        runs.push((run.trace, run.findings, run.outputs));
    }
    Covered {
        cov,
        runs,
        steps,
        total_steps,
        over_budget: over,
    }
}

/// Whether `i` of the recognised kernel was absorbed into an idiom.
fn in_idiom(input: &CtaInput, i: u32) -> bool {
    matches!(
        input.kernel.instrs.get(i as usize).map(|d| &d.instr),
        Some(Instr::Absorbed { .. } | Instr::Idiom { .. })
    )
}

/// Whether a case is mutated: an active pair expected `equivalent`.
pub fn is_target(spec: &CheckSpec) -> bool {
    matches!(&spec.expect, Some(e) if e.verdict == Verdict::Equivalent && e.status == Status::Active)
        && matches!(spec.kernels, ptxeq_spec::Kernels::Pair { .. })
}

/// Runs the chosen mutants of one corpus case.
pub fn run_case(case: &CaseDir, opts: &Options, allow: &AllowList) -> CaseResult {
    let family = case.name.split('/').next().unwrap_or("").to_string();
    let mut result = CaseResult {
        case: case.name.clone(),
        family,
        skipped: None,
        available: 0,
        baseline_millis: 0,
        baseline_steps: 0,
        heavy: false,
        results: Vec::new(),
    };
    let skip = |mut r: CaseResult, why: String| {
        r.skipped = Some(why);
        r
    };
    let spec_path = case.spec_path();
    let spec = match CheckSpec::load(&spec_path) {
        Ok(s) => s,
        Err(e) => return skip(result, format!("spec does not load: {e}")),
    };
    if !is_target(&spec) {
        return skip(result, "not an active `equivalent` pair".into());
    }
    let ptxeq_spec::Kernels::Pair {
        reference,
        candidate,
    } = &spec.kernels
    else {
        return skip(result, "not a pair".into());
    };
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let (ref_text, cand_text) = match (read(&reference.ptx), read(&candidate.ptx)) {
        (Ok(r), Ok(c)) => (r, c),
        (Err(e), _) | (_, Err(e)) => return skip(result, e),
    };
    let kernel = match Kernel::load(&cand_text, candidate.entry.as_deref()) {
        Ok(k) => k,
        Err(e) => return skip(result, format!("candidate: {e}")),
    };
    let all: Vec<Mutant> = enumerate(&kernel)
        .into_iter()
        .filter(|m| opts.ops.is_empty() || opts.ops.contains(&m.op))
        .collect();
    result.available = all.len();

    // Heavy cases (a fixed list, so the sample stays deterministic) get
    // fewer mutants.
    let (mut n_mut, mut n_rw) = (opts.mutants, opts.rewrites);
    if let Some(h) = opts.heavy.iter().find(|h| case.name.contains(&h.pattern)) {
        result.heavy = true;
        n_mut = Some(n_mut.map_or(h.mutants, |n| n.min(h.mutants)));
        n_rw = Some(n_rw.map_or(h.rewrites, |n| n.min(h.rewrites)));
    }
    let (rewrites, mutations): (Vec<Mutant>, Vec<Mutant>) =
        all.into_iter().partition(|m| m.op.is_rewrite());
    let mut chosen = pick(mutations, n_mut, opts.seed, &case.name);
    chosen.extend(pick(rewrites, n_rw, opts.seed, &case.name));

    // Nothing to run (no site of the chosen operators): the original's
    // check would decide nothing, so it is not run.
    if chosen.is_empty() {
        return skip(
            result,
            "no mutant or rewrite of the chosen operators".into(),
        );
    }

    let mut s = Session::new(&spec_path, &spec, ref_text, cand_text.clone());
    let ctas = ptxeq_db::ctas_of(&spec);
    let t0 = Instant::now();
    let base = match s.check(opts.timeout) {
        Ok(b) => b,
        Err(e) => return skip(result, format!("the original check failed: {e}")),
    };
    result.baseline_millis = t0.elapsed().as_millis() as u64;
    if base.verdict != CheckVerdict::Equivalent {
        let why = format!(
            "the original is not proved equivalent ({}: {} {})",
            base.verdict.verdict().as_str(),
            base.reason,
            base.detail
        );
        return skip(result, why);
    }
    let original = match s.candidate_input() {
        Ok(i) => i,
        Err(e) => return skip(result, e),
    };
    let orig_cov = cover(&original, &ctas, None);
    let budget = orig_cov
        .steps
        .saturating_mul(opts.step_factor)
        .saturating_add(STEP_SLACK);
    result.baseline_steps = orig_cov.total_steps;

    for m in chosen {
        let r = run_mutant(
            &mut s, &m, &ctas, &orig_cov, budget, opts, allow, &case.name,
        );
        result.results.push(r);
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn run_mutant(
    s: &mut Session,
    m: &Mutant,
    ctas: &[[u32; 3]],
    orig: &Covered,
    budget: u64,
    opts: &Options,
    allow: &AllowList,
    case: &str,
) -> MutantResult {
    let t0 = Instant::now();
    let rewrite = m.op.is_rewrite();
    let undecided = |reason: String| {
        if rewrite {
            Outcome::Lost { reason }
        } else {
            Outcome::Undecided { reason }
        }
    };
    let mut out = MutantResult {
        mutant: m.clone(),
        outcome: Outcome::Crash {
            what: "not run".into(),
        },
        verdict: "-".into(),
        detail: String::new(),
        millis: 0,
    };
    let finish = |mut out: MutantResult, outcome: Outcome| {
        out.outcome = outcome;
        out.millis = t0.elapsed().as_millis() as u64;
        out
    };
    let Some(text) = m.text(&s.cand_text) else {
        return finish(out, undecided("invalid mutant: edits do not apply".into()));
    };
    s.set_candidate(&text);
    // A mutant that lowers with new problems (a name moved out of its
    // scope, ...) is the generator's fault, not a finding.
    let problems = ptxeq_db::lowered_module(&s.db, s.cf).diagnostics.len();
    if problems > s.cand_problems {
        let d = &ptxeq_db::lowered_module(&s.db, s.cf).diagnostics;
        out.detail = d.first().map_or(String::new(), |d| first_line(&d.message));
        return finish(out, undecided("invalid mutant: lowering problems".into()));
    }
    // 1. bind, then the coverage run under the step budget.
    let input = match s.candidate_input() {
        Ok(i) => i,
        Err(e) => {
            out.detail = first_line(&e);
            return finish(out, undecided("invalid mutant: does not bind".into()));
        }
    };
    if let Probe::Mutant(i) = m.probe
        && let Some(Instr::Unknown { reason, .. }) =
            input.kernel.instrs.get(i as usize).map(|d| &d.instr)
    {
        out.detail = first_line(reason);
        return finish(out, undecided("invalid mutant: does not decode".into()));
    }
    let covered = match catch_unwind(AssertUnwindSafe(|| cover(&input, ctas, Some(budget)))) {
        Ok(c) => c,
        Err(p) => {
            s.reset();
            let what = format!("panic in the coverage run: {}", panic_message(&*p));
            return finish(out, Outcome::Crash { what });
        }
    };
    if covered.over_budget {
        out.detail = format!(
            "over {budget} thread-instructions in a CTA ({}× the original's {} plus {STEP_SLACK})",
            opts.step_factor, orig.steps
        );
        return finish(out, undecided("step budget".into()));
    }
    // 2. the full check.
    let said = match s.check(opts.timeout) {
        Ok(x) => x,
        Err(what) => return finish(out, Outcome::Crash { what }),
    };
    out.verdict = said.verdict.verdict().as_str().to_string();
    out.detail = said.detail.clone();
    // 3. classify.
    let refuted = match &said.verdict {
        CheckVerdict::NotEquivalent => Some(said.verdict.verdict().as_str().to_string()),
        CheckVerdict::Kernel { verdict, .. } if *verdict != RaceVerdict::Unsupported => {
            Some(verdict.as_str().to_string())
        }
        _ => None,
    };
    if let Some(by) = refuted {
        let o = if rewrite {
            Outcome::FalseRefutation { by }
        } else {
            Outcome::Killed { by }
        };
        return finish(out, o);
    }
    if said.verdict != CheckVerdict::Equivalent {
        return finish(out, undecided(said.reason));
    }
    if rewrite {
        return finish(out, Outcome::Preserved);
    }
    let outcome = match m.probe {
        Probe::Mutant(i) if in_idiom(&input, i) => Outcome::SurvivedLive {
            allowed: allow.reason(case, &m.id).map(str::to_string),
            in_idiom: true,
        },
        Probe::Mutant(i) if !covered.cov.executed(InstrRef::kernel(i)) => {
            Outcome::EquivalentByConstruction {
                why: "never executed in the checked CTAs".into(),
            }
        }
        Probe::Mutant(i)
            if covered.cov.wrote(InstrRef::kernel(i))
                && !covered.cov.result_read(InstrRef::kernel(i)) =>
        {
            Outcome::EquivalentByConstruction {
                why: "its result is never read".into(),
            }
        }
        Probe::Original(i) if !orig.cov.executed(InstrRef::kernel(i)) => {
            Outcome::EquivalentByConstruction {
                why: "the deleted instruction never executed in the checked CTAs".into(),
            }
        }
        _ if covered.same_run(orig) => Outcome::EquivalentByConstruction {
            why: "same run as the original (paths, schedule, memory accesses, stored values, \
                  outputs)"
                .into(),
        },
        _ => Outcome::SurvivedLive {
            allowed: allow.reason(case, &m.id).map(str::to_string),
            in_idiom: false,
        },
    };
    finish(out, outcome)
}
