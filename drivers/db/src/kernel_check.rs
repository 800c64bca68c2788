//! The checking queries of one kernel of a spec: `cta_input` → `structured`
//! → `unrolled` (per CTA) → `symbolic`, and [`race_check`],
//! which runs them for every kernel and CTA a spec names and sums them up
//! into a single-kernel verdict (race-free / race / deadlock / divergence /
//! out-of-bounds / uninitialised / unsupported).

use std::path::PathBuf;
use std::sync::Arc;

use ptxeq_exec::{CtaInput, Finding, FindingKind, Stats};
use ptxeq_spec::{CheckSpec, Ctas, KernelRef, Launch};
use ptxeq_symex::SymbolicState;
use ptxeq_unroll::{UnrolledCta, UnrolledGrid};
use ptxeq_validate::StructuredReport;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::{Db, SourceFile, lowered_module};

/// A check spec as an input (one per check).
#[salsa::input(debug)]
pub struct SpecInput {
    #[returns(ref)]
    pub path: PathBuf,
    #[returns(ref)]
    pub spec: CheckSpec,
}

/// Which kernel of a spec.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Slot {
    Reference,
    Candidate,
    Kernel,
}

impl Slot {
    pub fn word(self) -> &'static str {
        match self {
            Slot::Reference => "reference",
            Slot::Candidate => "candidate",
            Slot::Kernel => "kernel",
        }
    }

    /// The slot of a spec table name (`reference`, `candidate`, `kernel`),
    /// as `CheckSpec::kernels.iter()` names them.
    pub fn of(word: &str) -> Slot {
        match word {
            "reference" => Slot::Reference,
            "candidate" => Slot::Candidate,
            _ => Slot::Kernel,
        }
    }
}

/// One kernel of one spec, with the PTX file it lives in.
#[salsa::interned(debug)]
pub struct KernelSlot<'db> {
    #[returns(copy)]
    pub spec: SpecInput,
    #[returns(copy)]
    pub slot: Slot,
    #[returns(copy)]
    pub file: SourceFile,
}

/// One CTA of one kernel.
#[salsa::interned(debug)]
pub struct CtaKey<'db> {
    #[returns(copy)]
    pub kernel: KernelSlot<'db>,
    #[returns(copy)]
    pub cta: [u32; 3],
}

pub(crate) fn kernel_ref(spec: &CheckSpec, slot: Slot) -> Option<&KernelRef> {
    spec.kernels
        .iter()
        .into_iter()
        .find(|(w, _)| Slot::of(w) == slot)
        .map(|(_, k)| k)
}

/// The kernel bound to the spec's tensors and scalars. Position-free (IR
/// plus spec), so an edit that leaves the kernel's IR alone is cut off here.
#[salsa::tracked(returns(ref))]
pub fn cta_input<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Result<Arc<CtaInput>, String> {
    // Math idioms are recognised first (crate::idioms).
    crate::idioms::recognised(db, k)
        .as_ref()
        .map(|r| r.input.clone())
        .map_err(Clone::clone)
}

/// The kernel bound to the spec, as lowered (before idiom recognition).
pub(crate) fn bind<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Result<CtaInput, String> {
    let _span = tracing::info_span!("bind").entered();
    let spec = k.spec(db).spec(db);
    let kref = kernel_ref(spec, k.slot(db))
        .ok_or_else(|| format!("the spec has no {} kernel", k.slot(db).word()))?;
    let lowered = lowered_module(db, k.file(db));
    ptxeq_bind::cta_input(spec, kref, &lowered.module).map_err(|e| e.message)
}

/// `structured`: the static structured-CTA check (ARCHITECTURE.md, `passes/validate`).
#[salsa::tracked(returns(ref))]
pub fn structured<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Option<StructuredReport> {
    let input = cta_input(db, k).as_ref().ok()?;
    let _span = tracing::info_span!("validate").entered();
    // A tensor holds data the kernel reads when it is an input or inout
    // without concrete `values` (concrete contents are not data: an index
    // tensor with values gives concrete addresses).
    let data_tensor = |t: u32| {
        input
            .tensors
            .get(t as usize)
            .is_some_and(|i| i.role.is_read())
            && input.bindings.tensor_bytes(t).is_none()
    };
    let tensor_params: Vec<bool> = input
        .params
        .iter()
        .map(|p| match p {
            ptxeq_exec::ParamValue::Tensor { tensor } => data_tensor(*tensor),
            ptxeq_exec::ParamValue::Struct { index } => input
                .bindings
                .structs
                .get(*index as usize)
                .into_iter()
                .flatten()
                .any(|f| matches!(f.what, ptxeq_exec::FieldKind::Tensor { tensor } if data_tensor(tensor))),
            _ => false,
        })
        .collect();
    // A bound function's body (if any) never runs: a black box.
    let funcs = |name: &str| {
        input
            .funcs
            .iter()
            .find(|f| f.name == name && input.bindings.function(name).is_none())
            .map(|f| &**f)
    };
    Some(ptxeq_validate::validate(
        &input.kernel,
        &funcs,
        &tensor_params,
    ))
}

/// A cache key for the CTA list of a grid run (the disk cache keys
/// artifacts by CTA coordinates): its length and a hash of the list.
fn grid_key(ctas: &[[u32; 3]]) -> [u32; 3] {
    let mut h = ptxeq_cache::Key::hasher("grid_ctas", 0);
    for c in ctas {
        for x in c {
            h.update(&x.to_le_bytes());
        }
    }
    let d = h.finish().hash;
    [
        u32::MAX - ctas.len() as u32,
        u32::from_le_bytes([d[0], d[1], d[2], d[3]]),
        u32::from_le_bytes([d[4], d[5], d[6], d[7]]),
    ]
}

/// `unroll` of every CTA the spec selects, together over one global
/// memory (`ptxeq_unroll::unroll_grid`); `None` when it selects one CTA
/// (then each CTA runs alone, [`unrolled`]).
#[salsa::tracked(returns(ref))]
pub fn grid_unrolled<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Option<Arc<UnrolledGrid>> {
    let input = cta_input(db, k).as_ref().ok()?;
    // The kernel's own CTAs (its launch, an `auto` selection).
    let ctas = crate::ctas::kernel_ctas(db, k).ctas.clone();
    if ctas.len() < 2 {
        return None;
    }
    let compute = || {
        let _span = tracing::info_span!("unroll", ctas = ctas.len()).entered();
        ptxeq_unroll::unroll_grid(input, &ctas)
    };
    let versions = [crate::disk::UNROLL_VERSION];
    let artifact = crate::disk::cached(db, "grid_unrolled", &versions, k, grid_key(&ctas), compute);
    Some(Arc::new(artifact))
}

/// `unroll`: one CTA run with opaque data: paths, schedule, findings. When
/// the spec selects several CTAs, the CTA's part of their run together
/// ([`grid_unrolled`]).
#[salsa::tracked(returns(ref))]
pub fn unrolled<'db>(db: &'db dyn Db, key: CtaKey<'db>) -> Option<Arc<UnrolledCta>> {
    let input = cta_input(db, key.kernel(db)).as_ref().ok()?;
    let (k, cta) = (key.kernel(db), key.cta(db));
    if let Some(g) = grid_unrolled(db, k)
        && let Some(u) = g.ctas.iter().find(|u| u.cta == cta)
    {
        return Some(Arc::new(u.clone()));
    }
    let compute = || {
        let _span = tracing::info_span!("unroll", ?cta).entered();
        ptxeq_unroll::unroll(input, cta)
    };
    let versions = [crate::disk::UNROLL_VERSION];
    let artifact = crate::disk::cached(db, "unrolled", &versions, k, cta, compute);
    Some(Arc::new(artifact))
}

/// `symbolic_state`: the CTA replayed with terms (only for a run without
/// findings: the outputs of a racy or stuck run mean nothing).
#[salsa::tracked(returns(ref))]
pub fn symbolic<'db>(db: &'db dyn Db, key: CtaKey<'db>) -> Option<Arc<SymbolicState>> {
    let input = cta_input(db, key.kernel(db)).as_ref().ok()?;
    let u = unrolled(db, key).as_ref()?;
    if !u.findings.is_empty() {
        return None;
    }
    let (k, cta) = (key.kernel(db), key.cta(db));
    let versions = [crate::disk::SYMBOLIC_VERSION, crate::disk::UNROLL_VERSION];
    if let Some(g) = grid_unrolled(db, k)
        && g.explored
    {
        // CTAs synchronised through a ticket: the grid's outputs are one
        // state, the first CTA's (ptxeq_symex::symbolic_grid_state).
        if g.ctas.first().map(|u| u.cta) != Some(cta) {
            return Some(Arc::new(SymbolicState {
                cta,
                outputs: Vec::new(),
                graph: ptxeq_terms::Terms::new().export(&[]),
                findings: Vec::new(),
                stats: Stats::default(),
            }));
        }
        if !g.cross.is_empty() || g.ctas.iter().any(|u| !u.findings.is_empty()) {
            return None;
        }
        let ctas: Vec<[u32; 3]> = g.ctas.iter().map(|u| u.cta).collect();
        let compute = || {
            let _span = tracing::info_span!("symbolic_state", ctas = g.ctas.len()).entered();
            ptxeq_symex::symbolic_grid_state(input, g)
        };
        let artifact =
            crate::disk::cached(db, "symbolic_grid", &versions, k, grid_key(&ctas), compute);
        return Some(Arc::new(artifact));
    }
    let compute = || {
        let _span = tracing::info_span!("symbolic_state", ?cta).entered();
        ptxeq_symex::symbolic_state(input, u)
    };
    let artifact = crate::disk::cached(db, "symbolic", &versions, k, cta, compute);
    Some(Arc::new(artifact))
}

/// The CTA's replay with terms again, keeping the whole store and which
/// instruction first built each term (`ptxeq_symex::term_origins`): on
/// demand for a report, not memoised (`None` for a CTA without a
/// symbolic state, or one of a grid-level run).
pub fn term_origins(
    db: &dyn Db,
    key: CtaKey<'_>,
) -> Option<(ptxeq_terms::Terms, ptxeq_symex::TermOrigins)> {
    let input = cta_input(db, key.kernel(db)).as_ref().ok()?;
    let u = unrolled(db, key).as_ref()?;
    if !u.findings.is_empty()
        || grid_unrolled(db, key.kernel(db))
            .as_ref()
            .is_some_and(|g| g.explored)
    {
        return None;
    }
    ptxeq_symex::term_origins(input, u)
}

/// The `ResourceLimit` finding of a kernel whose launch asks for more CTAs
/// than the spec's `max_ctas` bound, refused before any CTA is listed or
/// runs (`None` within bounds).
pub fn cta_limit_finding(spec: &CheckSpec, launch: &Launch) -> Option<Finding> {
    cta_limit_finding_n(spec, launch, launch.asked_ctas())
}

/// [`cta_limit_finding`] for a kernel that would run `n` CTAs.
pub fn cta_limit_finding_n(spec: &CheckSpec, launch: &Launch, n: u64) -> Option<Finding> {
    let max = spec.limits.max_ctas;
    if n <= max {
        return None;
    }
    let [x, y, z] = launch.grid;
    Some(Finding {
        kind: FindingKind::ResourceLimit,
        message: format!(
            "CTA limit: the spec asks for {n} CTAs (grid {x}x{y}x{z}, ctas = {}), more than the \
             limit of {max} (raise it with --max-ctas or [limits] max_ctas, or name fewer CTAs \
             with ctas = \"first\" or a list); nothing was run",
            match launch.ctas {
                Ctas::First => "\"first\"",
                Ctas::All => "\"all\"",
                Ctas::Auto => "\"auto\"",
                Ctas::List(_) => "a list",
            }
        ),
        reason: "CTA limit".into(),
        thread: None,
        instr: None,
        location: None,
        accesses: Vec::new(),
        waiting: Vec::new(),
    })
}

/// The CTAs a spec asks for (callers first refuse a spec over its CTA
/// bound: [`cta_limit_finding`]).
pub fn ctas_of(spec: &CheckSpec) -> Vec<[u32; 3]> {
    let [gx, gy, gz] = spec.launch.grid;
    match &spec.launch.ctas {
        Ctas::First => vec![[0, 0, 0]],
        Ctas::All | Ctas::Auto => {
            let mut v = Vec::new();
            for z in 0..gz {
                for y in 0..gy {
                    for x in 0..gx {
                        v.push([x, y, z]);
                    }
                }
            }
            v
        }
        Ctas::List(l) => l.clone(),
    }
}

/// The verdict of a single-kernel run: the one verdict type
/// ([`ptxeq_spec::Verdict`]: its word, exit code and ranking), of which a
/// race check reaches race-free, the bug verdicts and unsupported.
pub type RaceVerdict = ptxeq_spec::Verdict;

/// Everything `ptxeq race` reports for one kernel.
#[derive(Clone, Debug)]
pub struct KernelRaceReport {
    pub slot: Slot,
    pub ptx: PathBuf,
    pub entry: String,
    pub file: SourceFile,
    /// The kernel bound to the spec (for naming instructions in reports).
    pub input: Option<Arc<CtaInput>>,
    /// The spec did not fit the kernel (param kinds, missing entry).
    pub input_error: Option<String>,
    pub structured: Option<StructuredReport>,
    /// Math-library expansions replaced by exact functions (function name,
    /// what was recognised and what that assumes).
    pub idioms: Vec<(String, ptxeq_idioms::Recognition)>,
    /// The CTAs this kernel runs (its launch, the `auto` selection).
    pub plan: Arc<crate::ctas::CtaPlan>,
    /// Per CTA checked: its findings and counters.
    pub ctas: Vec<([u32; 3], Vec<Finding>, Stats)>,
    /// Grid-level findings: conflicts between CTAs (several CTAs run
    /// together), or a launch refused for asking for more CTAs than its
    /// bound.
    pub cross_cta: Vec<Finding>,
    /// What a run of several CTAs rests on (the grid-level ticket
    /// exploration, start values).
    pub grid_notes: Vec<String>,
    /// The grid-level ticket exploration ran (an equivalence check of the
    /// kernel is not supported then).
    pub grid_explored: bool,
    pub verdict: RaceVerdict,
}

/// Race-checks every kernel of `spec` (each CTA the spec asks for), the
/// kernels and their CTAs in parallel on cloned database handles: the
/// two kernels of a pair are unrolled side by side, so a scalar
/// reference's long opaque run does not delay the candidate's. `files`
/// maps each kernel to its registered PTX file; the reports come back in
/// its order.
pub fn race_check(
    db: &crate::Database,
    spec: SpecInput,
    files: &[(Slot, SourceFile)],
) -> Vec<KernelRaceReport> {
    race_check_then(db, spec, files, &|_, _, _, _| {})
}

/// What [`race_check_then`] runs on each kernel's report as soon as that
/// kernel is checked: the database handle of its task, the kernel's slot
/// and file, its report.
pub type AfterKernel<'a> =
    dyn Fn(&crate::Database, Slot, SourceFile, &KernelRaceReport) + Sync + 'a;

/// [`race_check`], running `then` on each kernel's report in that
/// kernel's task, while the other kernels may still be running (a pair
/// check starts a clean kernel's symbolic replay there). The call
/// returns once every `then` has.
pub fn race_check_then(
    db: &crate::Database,
    spec: SpecInput,
    files: &[(Slot, SourceFile)],
    then: &AfterKernel<'_>,
) -> Vec<KernelRaceReport> {
    let mut out: Vec<KernelRaceReport> = files
        .par_iter()
        .map_with(db.clone(), |db, &(slot, file)| {
            let report = race_check_kernel(db, spec, slot, file);
            then(db, slot, file, &report);
            report
        })
        .collect();
    // A `[functions]`/`[globals]` key that names nothing in any kernel's
    // module is a typo, not a binding: say so (only when every kernel of
    // the spec is checked, since the name may live in another file).
    let sp = spec.spec(db);
    if files.len() == sp.kernels.iter().len()
        && out.iter().all(|r| r.input_error.is_none())
        && let Some(e) = unmatched_binding(db, sp, files)
        && let Some(first) = out.first_mut()
    {
        first.input_error = Some(e);
        first.verdict = RaceVerdict::Unsupported;
    }
    out
}

/// The race report of one kernel of `spec` (see [`race_check`]).
fn race_check_kernel(
    db: &crate::Database,
    spec: SpecInput,
    slot: Slot,
    file: SourceFile,
) -> KernelRaceReport {
    let k = KernelSlot::new(db, spec, slot, file);
    let sp = spec.spec(db);
    let kref = kernel_ref(sp, slot);
    let entry = match cta_input(db, k) {
        Ok(i) => i.kernel.name.clone(),
        Err(_) => kref.and_then(|r| r.entry.clone()).unwrap_or_default(),
    };
    let mut report = KernelRaceReport {
        slot,
        ptx: kref.map(|r| r.ptx.clone()).unwrap_or_default(),
        entry,
        file,
        input: cta_input(db, k).as_ref().ok().cloned(),
        input_error: cta_input(db, k).as_ref().err().cloned(),
        structured: structured(db, k).clone(),
        idioms: crate::idioms::recognised(db, k)
            .as_ref()
            .map(|r| r.found.clone())
            .unwrap_or_default(),
        plan: crate::ctas::kernel_ctas(db, k).clone(),
        ctas: Vec::new(),
        cross_cta: Vec::new(),
        grid_notes: Vec::new(),
        grid_explored: false,
        verdict: RaceVerdict::Unsupported,
    };
    let verify_error = crate::idioms::recognised(db, k)
        .as_ref()
        .ok()
        .and_then(|r| r.verify_error.as_ref());
    if let Some(v) = verify_error {
        // A pass broke the IR: nothing downstream can be trusted.
        report.cross_cta.push(v.finding());
    } else if let Some(f) = report
        .plan
        .refused
        .and_then(|n| cta_limit_finding_n(sp, &report.plan.launch, n))
    {
        // Refused up front: listing or running the CTAs would take
        // unbounded time and memory.
        report.cross_cta.push(f);
    } else if report.input_error.is_none()
        && report
            .structured
            .as_ref()
            .is_some_and(|s| s.is_structured())
    {
        let ctas = report.plan.ctas.clone();
        let runs: Vec<([u32; 3], Arc<UnrolledCta>)> = ctas
            .par_iter()
            .map_with(db.clone(), |db, &cta| {
                let key = CtaKey::new(&*db, k, cta);
                (cta, unrolled(&*db, key).clone())
            })
            .filter_map(|(c, u)| u.map(|u| (c, u)))
            .collect();
        if let Some(g) = grid_unrolled(db, k) {
            report.cross_cta = g.cross.clone();
            report.grid_notes = g.notes.clone();
            report.grid_explored = g.explored;
        }
        report.ctas = runs
            .into_iter()
            .map(|(c, u)| (c, u.findings.clone(), u.stats))
            .collect();
        let findings = report
            .ctas
            .iter()
            .flat_map(|(_, f, _)| f)
            .chain(&report.cross_cta);
        report.verdict = RaceVerdict::most_telling(findings.map(|f| f.kind.verdict()))
            .unwrap_or(RaceVerdict::RaceFree);
    }
    report
}

/// The first `[functions]` or `[globals]` key that matches no function
/// (by PTX or unmangled name) or module variable of any kernel's module.
fn unmatched_binding(
    db: &dyn Db,
    spec: &CheckSpec,
    files: &[(Slot, SourceFile)],
) -> Option<String> {
    let modules: Vec<&ptxeq_ir::ModuleIr> = files
        .iter()
        .map(|&(_, f)| &lowered_module(db, f).module)
        .collect();
    for name in spec.functions.keys() {
        let found = modules.iter().any(|m| {
            m.funcs
                .iter()
                .any(|f| &f.name == name || ptxeq_exec::unmangled(&f.name) == Some(name.as_str()))
        });
        if !found {
            return Some(format!(
                "[functions] `{name}` names no .func of the kernels' modules (give the PTX name, \
                 e.g. _Z6my_expf, or the unmangled C++ name, e.g. my_exp)"
            ));
        }
    }
    for name in spec.globals.keys() {
        if !modules
            .iter()
            .any(|m| m.globals.iter().any(|v| &v.name == name))
        {
            return Some(format!(
                "[globals] `{name}` names no module-scope variable of the kernels' modules"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptxeq_spec::Verdict::*;

    fn spec(launch: &str, limits: &str) -> CheckSpec {
        let text = format!(
            "[launch]\nblock = 32\n{launch}\n[kernel]\nptx = \"k.ptx\"\nparams = [\"y\"]\n\
             [tensors]\ny = {{ role = \"output\", dtype = \"f32\", shape = [32] }}\n{limits}"
        );
        CheckSpec::from_toml_str(&text, std::path::Path::new("")).unwrap()
    }

    #[test]
    fn cta_bound_counts_without_listing_and_names_itself() {
        let count = |s: &CheckSpec| s.launch.asked_ctas();
        let limit = |s: &CheckSpec| cta_limit_finding(s, &s.launch);
        let huge = spec("grid = [2147483647, 65535, 65535]\nctas = \"all\"", "");
        assert_eq!(count(&huge), 2147483647 * 65535 * 65535);
        let f = limit(&huge).expect("over the default bound");
        assert_eq!(f.kind, FindingKind::ResourceLimit);
        assert!(f.message.contains("limit of 1024"), "{}", f.message);
        assert!(f.message.contains("--max-ctas"), "{}", f.message);
        assert_eq!(count(&spec("grid = [9, 1, 1]", "")), 1);
        let all = spec("grid = [3, 2, 1]\nctas = \"all\"", "");
        assert_eq!(count(&all), 6);
        assert!(limit(&all).is_none());
        let capped = spec(
            "grid = [3, 2, 1]\nctas = \"all\"",
            "[limits]\nmax_ctas = 5\n",
        );
        assert!(limit(&capped).is_some());
        let list = spec("grid = [3, 2, 1]\nctas = [[0, 0, 0], [2, 1, 0]]", "");
        assert_eq!(count(&list), 2);
    }

    #[test]
    fn bugs_outrank_undecided_which_outranks_race_free() {
        assert_eq!(
            RaceVerdict::most_telling([RaceFree, Unsupported, RaceFree]),
            Some(Unsupported)
        );
        assert_eq!(
            RaceVerdict::most_telling([Unsupported, Deadlock, RaceFree]),
            Some(Deadlock)
        );
        assert_eq!(RaceVerdict::most_telling([Uninitialised, Race]), Some(Race));
        assert_eq!(
            RaceVerdict::most_telling([OrderDependent, Race]),
            Some(Race)
        );
        assert_eq!(
            RaceVerdict::most_telling([Unsupported, OrderDependent, RaceFree]),
            Some(OrderDependent)
        );
        assert_eq!(OrderDependent.exit_code(), 4);
        assert_eq!(RaceVerdict::most_telling([RaceFree]), Some(RaceFree));
        assert_eq!(RaceVerdict::most_telling([]), None);
        assert_eq!(Race.exit_code(), 1);
        assert_eq!(Unsupported.exit_code(), 2);
        assert_eq!(RaceFree.exit_code(), 0);
    }
}
