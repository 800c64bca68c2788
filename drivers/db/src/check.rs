//! `ptxeq check` over the database: race-check both kernels, then compare
//! their final output tensors over the CTAs checked ([`pair_verdicts`];
//! element decisions inside it run in parallel and are memoised per
//! element pair, in memory and in the disk cache under the `vc_verdict`
//! key).
//!
//! Order matters (docs/semantics.md §1, "Order of findings"): a race,
//! deadlock or bad access in either kernel is the verdict, reported before
//! any verification condition — the output terms of a racy run depend on the schedule and mean nothing.
//!
//! Reuse: [`pair_verdicts`] depends only on the `symbolic` artifacts,
//! which salsa backdates, so an edit that leaves a kernel's outputs equal
//! re-decides nothing. Below that, element decisions are memoised by the
//! structural hashes of the two terms ([`DecisionStore`], shared by every
//! handle of the database), so an edit that changes a few output formulas
//! re-decides only those elements.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ptxeq_cache::{DiskCache, Key};
use ptxeq_decide::decide::DecideOptions;
use ptxeq_verdicts::{Decided, DecisionMemo, MemoKey, Scope, StopRule, Verdicts};
use rayon::prelude::*;

use crate::ctas::{compare_regions, kernel_ctas};
use crate::kernel_check::{
    CtaKey, KernelRaceReport, KernelSlot, RaceVerdict, Slot, SpecInput, cta_input, race_check,
    race_check_then, symbolic,
};
use crate::{Database, Db, SourceFile};

/// The in-process decision memo of a database.
#[derive(Default)]
pub struct DecisionStore {
    map: Mutex<HashMap<MemoKey, Decided>>,
}

impl DecisionStore {
    /// Decisions stored.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl DecisionMemo for DecisionStore {
    fn get(&self, key: MemoKey) -> Option<Decided> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned()
    }

    fn put(&self, key: MemoKey, decided: &Decided) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, decided.clone());
    }
}

/// Version of the element decisions stored on disk; bump when their
/// meaning changes in a way the source fingerprint cannot see.
pub const VERDICT_VERSION: u32 = 1;

/// The in-process memo, backed by the database's disk cache when it has
/// one: a second process re-checking the same kernels decides nothing.
/// Keys cover the two terms' structural hashes and the passes' source
/// fingerprint (`build.rs`), so a changed decision procedure never reads
/// an old decision.
pub(crate) struct LayeredMemo<'a> {
    pub(crate) mem: &'a dyn DecisionMemo,
    pub(crate) disk: Option<&'a DiskCache>,
}

impl LayeredMemo<'_> {
    fn key(key: MemoKey) -> Key {
        let mut h = Key::hasher("vc_verdict", VERDICT_VERSION);
        h.update(crate::disk::SOURCE_FINGERPRINT.as_bytes());
        h.update(&key.0.to_le_bytes());
        h.update(&key.1.to_le_bytes());
        h.finish()
    }
}

impl DecisionMemo for LayeredMemo<'_> {
    fn get(&self, key: MemoKey) -> Option<Decided> {
        if let Some(d) = self.mem.get(key) {
            return Some(d);
        }
        let d: Decided = self.disk?.get_value(&Self::key(key))?;
        self.mem.put(key, &d);
        Some(d)
    }

    fn put(&self, key: MemoKey, decided: &Decided) {
        self.mem.put(key, decided);
        if let Some(disk) = self.disk {
            // A failed write only costs a recomputation later.
            let _ = disk.put_value(&Self::key(key), decided);
        }
    }
}

/// A reference/candidate pair of one check, and when its deciding stops
/// (part of the key: a check that decides every element is another
/// artifact than one that stopped at the first refutations).
#[salsa::interned(debug)]
pub struct PairKey<'db> {
    pub reference: KernelSlot<'db>,
    pub candidate: KernelSlot<'db>,
    pub stop: StopRule,
}

/// The symbolic states of both kernels over each kernel's own CTAs, and
/// what the comparison covers (`None` when a CTA of either kernel has no
/// symbolic state).
struct PairStates {
    refs: Vec<Arc<ptxeq_symex::SymbolicState>>,
    cands: Vec<Arc<ptxeq_symex::SymbolicState>>,
    input: Arc<ptxeq_exec::CtaInput>,
    regions: Vec<Option<Vec<[u64; 2]>>>,
    complete: [bool; 2],
}

impl PairStates {
    fn scope(&self) -> Scope<'_> {
        Scope {
            tensors: &self.input.tensors,
            input_names: self.input.input_names(),
            first_symbol: self.input.first_symbol(),
            regions: self.regions.clone(),
            complete: self.complete,
        }
    }
}

fn pair_states(db: &dyn Db, key: PairKey<'_>) -> Option<PairStates> {
    let (rk, ck) = (*key.reference(db), *key.candidate(db));
    let spec = rk.spec(db).spec(db);
    let states = |k: KernelSlot<'_>| -> Option<Vec<Arc<ptxeq_symex::SymbolicState>>> {
        kernel_ctas(db, k)
            .ctas
            .iter()
            .map(|&cta| symbolic(db, CtaKey::new(db, k, cta)).clone())
            .collect()
    };
    let refs = states(rk)?;
    let cands = states(ck)?;
    let input = cta_input(db, rk).as_ref().ok()?.clone();
    Some(PairStates {
        refs,
        cands,
        input,
        regions: compare_regions(spec),
        complete: [kernel_ctas(db, rk).covers, kernel_ctas(db, ck).covers],
    })
}

/// The element verdicts of a pair over each kernel's CTAs (`None` when a
/// CTA of either kernel has no symbolic state: it was not race-free or not
/// supported).
#[salsa::tracked(returns(ref), no_eq)]
pub fn pair_verdicts<'db>(db: &'db dyn Db, key: PairKey<'db>) -> Option<Arc<Verdicts>> {
    let states = pair_states(db, key)?;
    let refs: Vec<&ptxeq_symex::SymbolicState> = states.refs.iter().map(|s| &**s).collect();
    let cands: Vec<&ptxeq_symex::SymbolicState> = states.cands.iter().map(|s| &**s).collect();
    let _span = tracing::info_span!("verdicts").entered();
    let memo = LayeredMemo {
        mem: db.decision_memo(),
        disk: db.disk_cache(),
    };
    Some(Arc::new(ptxeq_verdicts::compare_scoped(
        &refs,
        &cands,
        &states.scope(),
        &memo,
        &DecideOptions::default(),
        *key.stop(db),
    )))
}

/// Writes every verification condition of a checked pair as SMT-LIB2
/// under `dir` (`ptxeq check --emit-smt DIR`); the number written.
pub fn emit_smt(
    db: &Database,
    spec: SpecInput,
    files: &[(Slot, SourceFile)],
    dir: &std::path::Path,
) -> std::io::Result<usize> {
    let find = |s: Slot| files.iter().find(|(slot, _)| *slot == s).map(|&(_, f)| f);
    let (Some(rf), Some(cf)) = (find(Slot::Reference), find(Slot::Candidate)) else {
        return Ok(0);
    };
    let rk = KernelSlot::new(db, spec, Slot::Reference, rf);
    let ck = KernelSlot::new(db, spec, Slot::Candidate, cf);
    let Some(states) = pair_states(db, PairKey::new(db, rk, ck, StopRule::ALL)) else {
        return Ok(0);
    };
    let refs: Vec<&ptxeq_symex::SymbolicState> = states.refs.iter().map(|s| &**s).collect();
    let cands: Vec<&ptxeq_symex::SymbolicState> = states.cands.iter().map(|s| &**s).collect();
    ptxeq_verdicts::emit_smt(&refs, &cands, &states.scope(), dir)
}

/// The overall conclusion of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckVerdict {
    /// Every output element of every CTA checked is proved equal.
    Equivalent,
    /// Some element differs, with a witness.
    NotEquivalent,
    /// Neither: an element is unknown, or a CTA could not be compared.
    Undecided,
    /// A kernel is not race-free (or not supported): that is the verdict.
    Kernel { slot: Slot, verdict: RaceVerdict },
    /// The spec does not fit (no candidate, param kinds, ...).
    InvalidInput(String),
}

impl CheckVerdict {
    /// The verdict this conclusion is (its word, exit code and ranking
    /// live on [`ptxeq_spec::Verdict`], the one verdict type); what
    /// `CheckVerdict` adds is which kernel decided it and why input is
    /// invalid.
    pub fn verdict(&self) -> ptxeq_spec::Verdict {
        use ptxeq_spec::Verdict;
        match self {
            CheckVerdict::Equivalent => Verdict::Equivalent,
            CheckVerdict::NotEquivalent => Verdict::NotEquivalent,
            CheckVerdict::Undecided => Verdict::Unsupported,
            CheckVerdict::Kernel { verdict, .. } => *verdict,
            CheckVerdict::InvalidInput(_) => Verdict::InvalidInput,
        }
    }
}

/// Everything `ptxeq check` reports.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The race report of each kernel (reference first).
    pub kernels: Vec<KernelRaceReport>,
    pub verdict: CheckVerdict,
    /// The element verdicts (absent when the kernels were not compared).
    pub verdicts: Option<Arc<Verdicts>>,
    /// Why a CTA could not be compared (symbolic replay findings, ...).
    pub problems: Vec<String>,
}

/// Checks the reference and candidate kernels of `spec`: race-check both
/// (every CTA the spec asks for), then compare their outputs per CTA in
/// parallel on cloned database handles, deciding every element. A spec
/// whose reference is a formula goes to
/// [`crate::formula_check::check_formula`].
pub fn check(db: &Database, spec: SpecInput, files: &[(Slot, SourceFile)]) -> CheckReport {
    check_with(db, spec, files, StopRule::ALL)
}

/// [`check`], deciding elements until `stop` says the verdict is final
/// (the front ends stop after a few refuted elements by default).
pub fn check_with(
    db: &Database,
    spec: SpecInput,
    files: &[(Slot, SourceFile)],
    stop: StopRule,
) -> CheckReport {
    let find = |s: Slot| files.iter().find(|(slot, _)| *slot == s).map(|&(_, f)| f);
    if let Some(formula) = spec.spec(db).kernels.formula()
        && let Some(cf) = find(Slot::Candidate)
    {
        let formula = formula.clone();
        let fopts = ptxeq_verdicts::FormulaOptions {
            stop,
            ..Default::default()
        };
        return crate::formula_check::check_formula(db, spec, cf, &formula, fopts);
    }
    let (Some(rf), Some(cf)) = (find(Slot::Reference), find(Slot::Candidate)) else {
        return CheckReport {
            kernels: Vec::new(),
            verdict: CheckVerdict::InvalidInput(
                "a check needs a reference and a candidate kernel (use `ptxeq race` to check one \
                 kernel)"
                    .into(),
            ),
            verdicts: None,
            problems: Vec::new(),
        };
    };
    let pair = [(Slot::Reference, rf), (Slot::Candidate, cf)];
    let rk = KernelSlot::new(db, spec, Slot::Reference, rf);
    let ck = KernelSlot::new(db, spec, Slot::Candidate, cf);
    let key = PairKey::new(db, rk, ck, stop);
    let kernels = if replays_may_start_early(db, key) {
        let unclean = AtomicBool::new(false);
        race_check_then(db, spec, &pair, &|db, slot, file, r| {
            replay_early(db, spec, slot, file, r, &unclean)
        })
    } else {
        race_check(db, spec, &pair)
    };
    let mut report = CheckReport {
        kernels,
        verdict: CheckVerdict::Undecided,
        verdicts: None,
        problems: Vec::new(),
    };
    if kernel_gate(&mut report) {
        mark_gated(db, key);
        return report;
    }

    if let Some(hit) = pair_stored(db, key) {
        // A second process: the comparison of these very kernels was
        // stored by an earlier one; no symbolic state is read.
        report.problems = hit.problems.clone();
        report.verdicts = hit.verdicts.as_ref().map(|v| {
            let mut v = (**v).clone();
            // Every decision came from the store.
            v.stats.memo_hits += v.stats.decided;
            v.stats.decided = 0;
            v.stats.micros = 0;
            Arc::new(v)
        });
    } else {
        report.problems = symbolic_problems(db, &[(Slot::Reference, rk), (Slot::Candidate, ck)]);
        report.verdicts = pair_verdicts(db, key).clone();
        store_pair(db, key);
    }
    conclude(&mut report);
    report
}

/// Version of the stored pair results ([`pair_stored`]).
pub const PAIR_VERSION: u32 = 1;

/// What a check of a pair concluded below the race checks: the symbolic
/// replay's problems and the element verdicts. Stored whole on disk so a
/// second process over unchanged kernels reads it instead of loading
/// (and importing into one store) both kernels' term graphs.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct PairResult {
    pub problems: Vec<String>,
    pub verdicts: Option<Arc<Verdicts>>,
}

/// The disk key of a pair's result: both kernels' input digests (the IR
/// bound to the spec), the CTAs each runs, the compare regions, the stop
/// rule and the passes' source fingerprint — everything the symbolic
/// states and the verdicts are a function of. `None` without a digest.
/// Memoised: a check probes it before the race gate and reads or writes
/// under it after.
#[salsa::tracked]
fn pair_key<'db>(db: &'db dyn Db, key: PairKey<'db>) -> Option<Key> {
    let (rk, ck) = (*key.reference(db), *key.candidate(db));
    let mut h = Key::hasher("pair_result", PAIR_VERSION);
    h.update(crate::disk::SOURCE_FINGERPRINT.as_bytes());
    h.update(
        &[
            crate::disk::SYMBOLIC_VERSION,
            crate::disk::UNROLL_VERSION,
            VERDICT_VERSION,
        ]
        .map(u32::to_le_bytes)
        .concat(),
    );
    for k in [rk, ck] {
        h.update(&(*crate::disk::input_digest(db, k))?);
        let plan = kernel_ctas(db, k);
        h.update_serde(&(&plan.ctas, plan.covers)).ok()?;
    }
    h.update_serde(&compare_regions(rk.spec(db).spec(db)))
        .ok()?;
    h.update_serde(&key.stop(db).max_refuted).ok()?;
    Some(h.finish())
}

/// The stored result of `key` in the disk cache, if one is there
/// (memoised per revision: a warm re-check reads nothing).
#[salsa::tracked(returns(ref), no_eq)]
pub fn pair_stored<'db>(db: &'db dyn Db, key: PairKey<'db>) -> Option<Arc<PairResult>> {
    let cache = db.disk_cache()?;
    let hit: PairResult = cache.get_value(pair_key(db, key).as_ref()?)?;
    tracing::debug!("disk cache hit: pair_result");
    Some(Arc::new(hit))
}

/// Stores the result of `key` (computed) on disk, once per revision.
#[salsa::tracked]
fn store_pair<'db>(db: &'db dyn Db, key: PairKey<'db>) {
    let (Some(cache), Some(k)) = (db.disk_cache(), pair_key(db, key)) else {
        return;
    };
    let (rk, ck) = (*key.reference(db), *key.candidate(db));
    // Already computed by the caller: these are memo reads.
    let mut problems = Vec::new();
    for (slot, kernel) in [(Slot::Reference, rk), (Slot::Candidate, ck)] {
        for &cta in &kernel_ctas(db, kernel).ctas {
            problems.extend(cta_problems(db, slot, kernel, cta));
        }
    }
    let entry = PairResult {
        problems,
        verdicts: pair_verdicts(db, key).clone(),
    };
    if let Err(e) = cache.put_value(k, &entry) {
        tracing::debug!("disk cache write failed: {e}");
    }
}

/// Whether a clean kernel's symbolic replay may start while the other
/// kernel's race check runs ([`replay_early`]). Always without a disk
/// cache. With one, only when this pair was never checked against it:
/// a stored pair result makes the replays moot (a second process reads
/// the result, not the symbolic states), and so does a stored gate mark
/// ([`mark_gated`]: an earlier check stopped at a race or an input
/// error, and a replay would only load a state nobody reads). The probe
/// is [`DiskCache::has_local`], which counts no lookup: the result is
/// looked up (and a miss counted) only after the gate, as before. With
/// a remote layer nothing starts early: its entries are not probed (a
/// round trip per pair), and sharded runs over it are mostly warm.
///
/// [`DiskCache::has_local`]: ptxeq_cache::DiskCache::has_local
fn replays_may_start_early(db: &dyn Db, key: PairKey<'_>) -> bool {
    let Some(cache) = db.disk_cache() else {
        return true;
    };
    if cache.has_remote() {
        return false;
    }
    let Some(k) = pair_key(db, key) else {
        // No input digest: a kernel the spec does not fit, which the
        // race check reports; there is nothing to replay.
        return false;
    };
    !cache.has_local(k) && !cache.has_local(&gated_key(k))
}

/// The disk key of the mark that a check of the pair stopped at the
/// race gate (see [`replays_may_start_early`]).
fn gated_key(pair: &Key) -> Key {
    Key::new("pair_gated", PAIR_VERSION, &pair.hash)
}

/// Stores the gate mark of `key` (a hint only: read by
/// [`replays_may_start_early`], never as a result), once per revision and
/// only where it is read (a local disk cache without a remote layer).
#[salsa::tracked]
fn mark_gated<'db>(db: &'db dyn Db, key: PairKey<'db>) {
    let (Some(cache), Some(k)) = (db.disk_cache(), pair_key(db, key)) else {
        return;
    };
    if cache.has_remote() {
        return;
    }
    if let Err(e) = cache.put_value(&gated_key(k), &true) {
        tracing::debug!("disk cache write failed: {e}");
    }
}

/// Starts the symbolic replay of a kernel of a pair as soon as its own
/// race check came back clean, in that kernel's task, while the other
/// kernel's opaque run may still be going: a scalar reference's long
/// unroll then overlaps the candidate's replay instead of delaying it
/// (the replays are the same salsa queries the comparison reads later,
/// so nothing is computed twice). Only when [`replays_may_start_early`]
/// says so, and not once the other kernel came back unclean (`unclean`,
/// set here). When the other kernel turns out unclean after this replay
/// started, the check still waits for the replay: it is the one cost of
/// starting early.
fn replay_early(
    db: &Database,
    spec: SpecInput,
    slot: Slot,
    file: SourceFile,
    report: &KernelRaceReport,
    unclean: &AtomicBool,
) {
    if report.input_error.is_some() || report.verdict != RaceVerdict::RaceFree {
        unclean.store(true, Ordering::SeqCst);
        return;
    }
    if unclean.load(Ordering::SeqCst) {
        return;
    }
    let k = KernelSlot::new(db, spec, slot, file);
    kernel_ctas(db, k)
        .ctas
        .par_iter()
        .for_each_with(db.clone(), |db, &cta| {
            symbolic(&*db, CtaKey::new(&*db, k, cta));
        });
}

/// Sets the verdict when a kernel's race check decides the check: the
/// spec does not fit it, or it is not race-free (docs/semantics.md §1: that is
/// the verdict, before any verification condition). True when it did.
pub(crate) fn kernel_gate(report: &mut CheckReport) -> bool {
    if let Some(e) = report.kernels.iter().find_map(|k| k.input_error.clone()) {
        report.verdict =
            CheckVerdict::InvalidInput(format!("the spec does not fit the kernel: {e}"));
        return true;
    }
    if let Some(worst) = RaceVerdict::most_telling(
        report
            .kernels
            .iter()
            .map(|k| k.verdict)
            .filter(|&v| v != RaceVerdict::RaceFree),
    ) {
        let slot = report
            .kernels
            .iter()
            .find(|k| k.verdict == worst)
            .map_or(Slot::Reference, |k| k.slot);
        report.verdict = CheckVerdict::Kernel {
            slot,
            verdict: worst,
        };
        return true;
    }
    false
}

/// The findings of the symbolic replay of every CTA of `kernels` (a
/// replay that left the unrolled path, ...), computed in parallel on
/// cloned database handles; each makes the check undecided.
pub(crate) fn symbolic_problems(db: &Database, kernels: &[(Slot, KernelSlot<'_>)]) -> Vec<String> {
    let work: Vec<(Slot, KernelSlot<'_>, [u32; 3])> = kernels
        .iter()
        .flat_map(|&(slot, k)| {
            kernel_ctas(db, k)
                .ctas
                .iter()
                .map(move |&cta| (slot, k, cta))
                .collect::<Vec<_>>()
        })
        .collect();
    work.par_iter()
        .map_with(db.clone(), |db, &(slot, k, cta)| {
            cta_problems(&*db, slot, k, cta)
        })
        .flatten()
        .collect()
}

/// The findings of the symbolic replay of one CTA, as problems.
fn cta_problems(db: &dyn Db, slot: Slot, k: KernelSlot<'_>, cta: [u32; 3]) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(s) = symbolic(db, CtaKey::new(db, k, cta)) {
        for f in &s.findings {
            problems.push(format!(
                "{} CTA ({},{},{}): {}",
                slot.word(),
                cta[0],
                cta[1],
                cta[2],
                f.message
            ));
        }
    }
    problems
}

/// The verdict from the element verdicts and the problems found: refuted
/// if any element is, else undecided if any is unknown or a CTA could not
/// be compared, else equivalent.
pub(crate) fn conclude(report: &mut CheckReport) {
    if report.verdicts.is_none() {
        report
            .problems
            .push("no symbolic state to compare for some CTA".into());
    }
    let refuted = report.verdicts.as_ref().map_or(0, |v| v.refuted());
    let unknown = report.verdicts.as_ref().map_or(0, |v| v.unknown());
    report.verdict = if refuted > 0 {
        CheckVerdict::NotEquivalent
    } else if unknown > 0 || !report.problems.is_empty() {
        CheckVerdict::Undecided
    } else {
        CheckVerdict::Equivalent
    };
}
