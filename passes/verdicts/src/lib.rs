//! Pass: per-element verification conditions and their verdicts
//! (docs/semantics.md §4, §5; the db memoises each decision, on disk under
//! the `vc_verdict` key).
//!
//! [`compare`] takes the symbolic states of the reference and the
//! candidate kernel for the CTAs checked, merges each kernel's output
//! tensors over its CTAs (the two kernels may split the tensor across CTAs
//! differently: only the final tensor contents are compared), pairs the
//! output elements, and — unless every pair's two terms are the same
//! sub-DAG of the two graphs ([`SameTerms`]: identical, nothing to import)
//! — imports every term graph into one store (so equal sub-terms become
//! one node, and elements whose two formulas are the very same node are
//! proved without any algebra) and decides every remaining pair with
//! [`ptxeq_decide::decide::decide`] — in parallel (rayon), one memoising
//! [`Normalizer`] per chunk of elements so the shared sub-terms of a tensor
//! (a softmax denominator, an attention row sum) are normalised once per
//! worker.
//!
//! Pairing rules (docs/semantics.md §4 "Outputs and pairing"):
//! - an element written by one kernel and not the other is a difference,
//!   except for an `inout` tensor, whose unwritten elements keep their
//!   input value `y[i]` (compared as that term) — but only when every CTA
//!   of the grid was run (`complete`): otherwise the other kernel may write
//!   the element in a CTA that was not checked, and the pair is `unknown`;
//! - two concrete bit patterns are equal or different for every input;
//! - an element one kernel could not model is `unsupported`, never guessed.
//!
//! Decisions are memoised by the structural hashes of the two terms
//! ([`DecisionMemo`]): a re-check after an edit decides only the element
//! pairs whose formulas changed.

mod formula;
mod report;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use ptxeq_decide::decide::{self, DecideOptions, ElementDecision, Presampler};
use ptxeq_decide::normal::Normalizer;
use ptxeq_exec::Role;
use ptxeq_exec::{OutputValue, TensorInfo};
use ptxeq_symex::SymbolicState;
use ptxeq_terms::{SameTerms, TermGraph, TermId, Terms};
use rayon::prelude::*;

pub use formula::{FormulaOptions, compare_formula, emit_smt_formula};
pub use report::{
    ElementFailure, Failure, MAX_FAILURES_KEPT, TensorVerdicts, VerdictStats, Verdicts,
};

/// Characters of a formula shown with a failing element.
pub const FORMULA_WIDTH: usize = 300;

/// When deciding stops (issue 20): once `max_refuted` elements are
/// refuted the verdict is `not-equivalent` whatever the rest decide, so
/// deciding every remaining element (each refutation costs sampling and a
/// confirmation) only adds detail. `None` decides every element.
///
/// The stop is deterministic: elements are decided in rounds of a fixed,
/// growing size in a fixed order (sorted by term id), and the rule is
/// checked between rounds, so the same inputs always decide the same
/// elements; a round may find more than `max_refuted` refutations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct StopRule {
    pub max_refuted: Option<u64>,
}

impl StopRule {
    /// Decide every element.
    pub const ALL: StopRule = StopRule { max_refuted: None };

    /// The front ends' default ([`DEFAULT_MAX_REFUTED`]).
    pub const DEFAULT: StopRule = StopRule {
        max_refuted: Some(DEFAULT_MAX_REFUTED),
    };

    fn reached(self, refuted: u64) -> bool {
        self.max_refuted.is_some_and(|m| refuted >= m)
    }
}

/// Refuted elements after which the front ends (`ptxeq check`, the
/// facade) stop deciding by default (`--max-refuted`, `--all-elements`).
pub const DEFAULT_MAX_REFUTED: u64 = 8;

/// Elements decided in the first round (over all workers) when a
/// [`StopRule`] is in force: the limit itself (at least one element per
/// worker), so a kernel whose every element is wrong stops after one
/// round; each later round is twice the previous one, so the rounds add
/// O(log n) barriers to a check that refutes nothing.
fn first_round(stop: StopRule, workers: usize) -> usize {
    let limit = stop
        .max_refuted
        .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
    limit.max(workers)
}

/// Key of a decision: the structural hashes of the reference and candidate
/// terms (store-independent, so valid across CTAs, runs and processes).
pub type MemoKey = (u128, u128);

/// One element pair's decision and the constant recoveries it rests on
/// (`log2 e ← 12102203/8388608 (f32)`), as memoised.
#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Decided {
    pub decision: ElementDecision,
    pub recoveries: Vec<String>,
}

/// A cache of element decisions keyed by the two terms' hashes.
pub trait DecisionMemo: Sync {
    fn get(&self, key: MemoKey) -> Option<Decided>;
    fn put(&self, key: MemoKey, decided: &Decided);
}

/// No memo: every pair is decided.
pub struct NoMemo;

impl DecisionMemo for NoMemo {
    fn get(&self, _: MemoKey) -> Option<Decided> {
        None
    }
    fn put(&self, _: MemoKey, _: &Decided) {}
}

/// One kernel's value of one output element.
#[derive(Clone, Debug)]
enum Val {
    Term(TermId),
    /// The same term as the other kernel's value of the element (matched
    /// on the two graphs, never imported: see [`pair_elements`]).
    Same,
    Bits(u64),
    Unsupported(String),
    Unwritten,
}

/// One kernel's value of one output element before any graph is
/// imported: a term is root `.1` of the graph of state `.0`.
#[derive(Clone, Debug)]
enum Raw {
    Root(usize, u32),
    Bits(u64),
    Unsupported(String),
    Unwritten,
}

impl Raw {
    /// The value, with `roots[state]` the imported roots of each state.
    fn resolve(self, roots: &[Vec<TermId>]) -> Val {
        match self {
            Raw::Root(s, r) => match roots.get(s).and_then(|rs| rs.get(r as usize)) {
                Some(&id) => Val::Term(id),
                None => Val::Unsupported("internal: a missing output term".into()),
            },
            other => other.plain(),
        }
    }

    /// A value that is not a term.
    fn plain(self) -> Val {
        match self {
            // Callers resolve roots first; never reached.
            Raw::Root(..) => Val::Unsupported("internal: an unimported output term".into()),
            Raw::Bits(b) => Val::Bits(b),
            Raw::Unsupported(r) => Val::Unsupported(r),
            Raw::Unwritten => Val::Unwritten,
        }
    }
}

/// What is compared and what the CTAs run cover (issue 14): the tensor
/// table, the names of every input number (tensors, then symbolic
/// scalars), each tensor's `compare` region, and per kernel whether its
/// CTAs include every CTA that writes a compared element.
#[derive(Clone, Debug)]
pub struct Scope<'a> {
    /// The check's tensor table (both kernels number tensors alike).
    pub tensors: &'a [TensorInfo],
    /// Name of every input number: the tensors, then symbolic scalars.
    pub input_names: Vec<String>,
    /// Input numbers from here on are scalars (printed without an index).
    pub first_symbol: u32,
    /// Per tensor number, the compared box (one half-open range per
    /// dimension); `None` (or a missing entry): the whole tensor.
    pub regions: Vec<Option<Vec<[u64; 2]>>>,
    /// Reference, candidate: whether the CTAs run include every CTA of
    /// that kernel that writes a compared element. An element only the
    /// other kernel writes is then a difference (else unknown), and an
    /// unwritten `inout` element keeps its input value.
    pub complete: [bool; 2],
}

impl<'a> Scope<'a> {
    /// Whole tensors compared, no symbolic scalars, both kernels equally
    /// complete (`complete`: every CTA of the grid ran).
    pub fn whole(tensors: &'a [TensorInfo], complete: bool) -> Scope<'a> {
        Scope {
            tensors,
            input_names: tensors.iter().map(|t| t.name.clone()).collect(),
            first_symbol: tensors.len() as u32,
            regions: Vec::new(),
            complete: [complete; 2],
        }
    }

    fn region(&self, tensor: u32) -> Option<&[[u64; 2]]> {
        self.regions.get(tensor as usize)?.as_deref()
    }
}

/// Compares the final output tensors of the two kernels over the CTAs
/// checked (one symbolic state per CTA, the same CTAs for both kernels).
/// `tensors` is the check's tensor table (both kernels number tensors
/// alike); `complete` says whether those CTAs are the whole grid. See
/// [`compare_scoped`] for compare regions, symbolic scalars and kernels
/// that ran different CTAs.
pub fn compare(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    tensors: &[TensorInfo],
    complete: bool,
    memo: &dyn DecisionMemo,
    opts: &DecideOptions,
) -> Verdicts {
    compare_scoped(
        reference,
        candidate,
        &Scope::whole(tensors, complete),
        memo,
        opts,
        StopRule::ALL,
    )
}

/// Compares the final output tensors of the two kernels, each merged over
/// the CTAs it ran (the kernels may run different CTAs: their launches
/// differ), inside `scope`'s compare regions; deciding stops as `stop`
/// says.
pub fn compare_scoped(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    scope: &Scope<'_>,
    memo: &dyn DecisionMemo,
    opts: &DecideOptions,
    stop: StopRule,
) -> Verdicts {
    let start = Instant::now();
    let mut terms = Terms::new();
    let (numbers, pairs, outside) = pair_elements(reference, candidate, scope, &mut terms);
    let mut verdicts = decide_and_tally(
        &terms,
        Paired {
            numbers,
            pairs,
            outside,
        },
        scope,
        memo,
        opts,
        Tally {
            start,
            ctas: reference.iter().map(|s| s.cta).collect(),
            candidate_ctas: candidate.iter().map(|s| s.cta).collect(),
            reference_unwritten: "(not written)",
            stop,
        },
    );
    attach_stores(&mut verdicts, reference, candidate);
    verdicts
}

/// Names, for every failing element kept, the store that wrote its value
/// in each kernel (`ElementFailure::reference_store`, `candidate_store`):
/// looked up in the kernels' symbolic states, which record the last
/// writer of every output element (`ptxeq_exec::StoreSite`).
fn attach_stores(
    verdicts: &mut Verdicts,
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
) {
    let writer = |states: &[&SymbolicState], tensor: u32, index: u64| {
        states.iter().find_map(|s| {
            s.outputs
                .iter()
                .filter(|t| t.tensor == tensor)
                .find_map(|t| t.writer(index))
        })
    };
    for t in &mut verdicts.tensors {
        for f in &mut t.failures {
            f.reference_store = writer(reference, t.tensor, f.index);
            f.candidate_store = writer(candidate, t.tensor, f.index);
        }
    }
}

/// The element pairs of a comparison ([`pair_elements`],
/// `formula::pair_formula`): the output tensor numbers, per compared
/// element `(tensor, index, reference, candidate)`, and per tensor the
/// written elements outside its compare region.
struct Paired {
    numbers: Vec<u32>,
    pairs: Vec<(u32, u64, Val, Val)>,
    outside: HashMap<u32, u64>,
}

/// What the tally reports beside the element verdicts.
struct Tally {
    start: Instant,
    ctas: Vec<[u32; 3]>,
    candidate_ctas: Vec<[u32; 3]>,
    /// How an element the reference does not define is shown.
    reference_unwritten: &'static str,
    /// When deciding stops.
    stop: StopRule,
}

/// Decides every element pair (identical terms and memoised pairs
/// skipped, the rest in parallel) and counts the verdicts per tensor.
fn decide_and_tally(
    terms: &Terms,
    paired: Paired,
    scope: &Scope<'_>,
    memo: &dyn DecisionMemo,
    opts: &DecideOptions,
    tally: Tally,
) -> Verdicts {
    let tensors = scope.tensors;
    let Paired {
        numbers,
        pairs,
        outside,
    } = paired;
    let start = tally.start;

    // Decide the distinct term pairs that are neither identical nor memoised.
    let mut stats = VerdictStats {
        max_refuted: tally.stop.max_refuted,
        ..VerdictStats::default()
    };
    let mut decided: HashMap<(TermId, TermId), Decided> = HashMap::new();
    let mut todo: Vec<(TermId, TermId)> = Vec::new();
    let mut queued: HashSet<(TermId, TermId)> = HashSet::new();
    // Refutations known before deciding anything: memoised ones and
    // elements whose concrete bits differ.
    let mut refuted: u64 = 0;
    for (_, _, va, vb) in &pairs {
        match (va, vb) {
            (Val::Term(a), Val::Term(b)) => {
                let key = (*a, *b);
                if a == b || decided.contains_key(&key) || queued.contains(&key) {
                    continue;
                }
                match memo.get((terms.hash128(*a), terms.hash128(*b))) {
                    Some(d) => {
                        stats.memo_hits += 1;
                        refuted += u64::from(matches!(d.decision, ElementDecision::Refuted(_)));
                        decided.insert(key, d);
                    }
                    None => {
                        queued.insert(key);
                        todo.push(key);
                    }
                }
            }
            (Val::Bits(a), Val::Bits(b)) if a != b => refuted += 1,
            _ => {}
        }
    }
    todo.sort_unstable();
    // fp8 input tensors: witnesses are sampled on the format's grid.
    let grids = narrow_grids(tensors);
    let with_grids;
    let opts = if grids.is_empty() {
        opts
    } else {
        with_grids = DecideOptions {
            input_grids: grids,
            ..opts.clone()
        };
        &with_grids
    };
    let results = decide_rounds(terms, &todo, refuted, opts, tally.stop);
    stats.decided = results.len() as u64;
    stats.not_decided = (todo.len() - results.len()) as u64;
    for (key, d) in results {
        memo.put((terms.hash128(key.0), terms.hash128(key.1)), &d);
        decided.insert(key, d);
    }

    // Tally per tensor.
    let mut recoveries: BTreeSet<String> = BTreeSet::new();
    let mut out: Vec<TensorVerdicts> = numbers
        .iter()
        .map(|&k| {
            let info = tensors.get(k as usize);
            TensorVerdicts {
                tensor: k,
                name: info.map_or_else(|| format!("tensor#{k}"), |t| t.name.clone()),
                shape: info.map(|t| t.shape.clone()).unwrap_or_default(),
                compare_region: scope.region(k).map(<[_]>::to_vec),
                outside: outside.get(&k).copied().unwrap_or(0),
                compared: 0,
                proved: 0,
                refuted: 0,
                unknown: 0,
                identical: 0,
                not_decided: 0,
                failures: Vec::new(),
            }
        })
        .collect();
    for (k, idx, va, vb) in pairs {
        let pos = numbers.binary_search(&k).unwrap_or(0);
        let tv = &mut out[pos];
        tv.compared += 1;
        let failure = match (&va, &vb) {
            (Val::Term(a), Val::Term(b)) if a == b => {
                tv.identical += 1;
                None
            }
            (Val::Same, Val::Same) => {
                tv.identical += 1;
                None
            }
            // `pair_elements` makes `Same` only in pairs.
            (Val::Same, _) | (_, Val::Same) => Some(Failure::Unknown {
                reason: "internal: a term matched against no term".into(),
                residual: None,
            }),
            (Val::Term(a), Val::Term(b))
                if stats.not_decided > 0 && !decided.contains_key(&(*a, *b)) =>
            {
                tv.not_decided += 1;
                continue;
            }
            (Val::Term(a), Val::Term(b)) => match decided.get(&(*a, *b)).map(|d| {
                recoveries.extend(d.recoveries.iter().cloned());
                &d.decision
            }) {
                Some(ElementDecision::Proved { .. }) => None,
                Some(ElementDecision::Refuted(cx)) => Some(Failure::Refuted {
                    counterexample: as_tensor_values(cx.clone(), tensors.get(k as usize)),
                }),
                Some(ElementDecision::Unknown { reason, residual }) => Some(Failure::Unknown {
                    reason: reason.clone(),
                    residual: residual.clone(),
                }),
                None => Some(Failure::Unknown {
                    reason: "internal: the element was never decided".into(),
                    residual: None,
                }),
            },
            (Val::Bits(a), Val::Bits(b)) if a == b => None,
            (Val::Bits(a), Val::Bits(b)) => Some(Failure::BitsDiffer {
                reference: *a,
                candidate: *b,
            }),
            (Val::Unsupported(r), _) => Some(Failure::Unsupported {
                reason: format!("reference: {r}"),
            }),
            (_, Val::Unsupported(r)) => Some(Failure::Unsupported {
                reason: format!("candidate: {r}"),
            }),
            (Val::Unwritten, _) | (_, Val::Unwritten)
                if !scope.complete[usize::from(!matches!(va, Val::Unwritten))] =>
            {
                let (writer, other) = if matches!(va, Val::Unwritten) {
                    ("candidate", "reference")
                } else {
                    ("reference", "candidate")
                };
                Some(Failure::Unknown {
                    reason: format!(
                        "written only by the {writer} in the CTAs checked; the {other} may \
                         write it in a CTA that was not run (run the CTAs that write it: \
                         ctas = \"auto\" or \"all\")"
                    ),
                    residual: None,
                })
            }
            (Val::Unwritten, _) => Some(Failure::WrittenByOne {
                writer: "candidate".into(),
            }),
            (_, Val::Unwritten) => Some(Failure::WrittenByOne {
                writer: "reference".into(),
            }),
            (Val::Term(_), Val::Bits(_)) | (Val::Bits(_), Val::Term(_)) => Some(Failure::Unknown {
                reason: "one kernel writes a real value, the other a bit pattern that is \
                             not a real number"
                    .into(),
                residual: None,
            }),
        };
        match failure {
            None => tv.proved += 1,
            Some(f) => {
                if f.is_refutation() {
                    tv.refuted += 1;
                } else {
                    tv.unknown += 1;
                }
                if tv.failures.len() < MAX_FAILURES_KEPT {
                    tv.failures.push(ElementFailure {
                        index: idx,
                        coords: unflatten(idx, &tv.shape),
                        reference: match va {
                            Val::Unwritten => tally.reference_unwritten.to_owned(),
                            _ => formula(terms, &va),
                        },
                        candidate: formula(terms, &vb),
                        failure: f,
                        reference_store: None,
                        candidate_store: None,
                    });
                }
            }
        }
    }
    stats.micros = start.elapsed().as_micros() as u64;
    Verdicts {
        ctas: tally.ctas,
        candidate_ctas: tally.candidate_ctas,
        complete: scope.complete[0] && scope.complete[1],
        tensors: out,
        recoveries: recoveries.into_iter().collect(),
        stats,
    }
}

/// Decides `todo` (sorted) in parallel and returns the decisions made:
/// all of them without a stop rule, else in rounds (see [`StopRule`])
/// until `refuted` (those known before) plus the refutations found reach
/// its limit.
///
/// `todo` is split into one contiguous block per worker up front (it is
/// sorted by term id, which keeps elements built together — one row —
/// together), and each worker keeps one [`Normalizer`] for its block
/// across rounds, so the sub-terms a block's elements share (a row's
/// variance, a softmax denominator) are normalised once, as in a single
/// round; a round decides the next slice of every block.
fn decide_rounds(
    terms: &Terms,
    todo: &[(TermId, TermId)],
    mut refuted: u64,
    opts: &DecideOptions,
    stop: StopRule,
) -> Vec<((TermId, TermId), Decided)> {
    let workers = rayon::current_num_threads().max(1);
    let block = todo.len().div_ceil(workers).max(1);
    let blocks: Vec<&[(TermId, TermId)]> = todo.chunks(block).collect();
    let workers_state: Vec<std::sync::Mutex<(Normalizer<'_>, Presampler)>> = blocks
        .iter()
        .map(|_| std::sync::Mutex::new((Normalizer::new(terms), Presampler::new(opts))))
        .collect();
    let mut out = Vec::with_capacity(todo.len());
    let mut done = 0;
    let mut per_block = if stop.max_refuted.is_some() {
        first_round(stop, workers).div_ceil(workers).max(1)
    } else {
        block
    };
    while done < block && !stop.reached(refuted) {
        let range = done..(done + per_block).min(block);
        done = range.end;
        per_block = per_block.saturating_mul(2);
        let results: Vec<((TermId, TermId), Decided)> = blocks
            .par_iter()
            .zip(&workers_state)
            .flat_map_iter(|(b, w)| {
                let mut w = w.lock().unwrap_or_else(|e| e.into_inner());
                let (n, p) = &mut *w;
                let slice = b.get(range.start.min(b.len())..range.end.min(b.len()));
                slice
                    .unwrap_or_default()
                    .iter()
                    .map(|&(a, c)| ((a, c), decide_one(n, p, a, c, opts)))
                    .collect::<Vec<_>>()
            })
            .collect();
        refuted += results
            .iter()
            .filter(|(_, d)| matches!(d.decision, ElementDecision::Refuted(_)))
            .count() as u64;
        out.extend(results);
    }
    out
}

/// One element pair's decision with the constant recoveries it used
/// (presampled first: a grossly wrong element costs no normal form).
fn decide_one(
    n: &mut Normalizer<'_>,
    p: &mut Presampler,
    a: TermId,
    b: TermId,
    opts: &DecideOptions,
) -> Decided {
    let r = decide::decide_presampled(n, p, a, b, opts);
    Decided {
        decision: r.decision,
        recoveries: r
            .recoveries
            .iter()
            .map(|x| format!("{} ← {} ({})", x.name, x.value_seen, x.format))
            .collect(),
    }
}

/// Both kernels' output tensors, merged over CTAs, paired element by
/// element: the output tensor numbers, per compared element either kernel
/// writes `(tensor, index, reference, candidate)`, and per tensor the
/// number of written elements outside its compare region (not compared).
///
/// When every compared pair of terms is the same sub-DAG in the two
/// kernels' graphs ([`SameTerms`]) and no element needs a term of its own
/// (an unwritten `inout` element's input value, a formula shown for a
/// failure), no graph is imported: the pairs are [`Val::Same`] and
/// `terms` stays empty — on a K = 4096 GEMM that saves rebuilding and
/// interning tens of millions of products a second time. Otherwise every
/// graph is imported into `terms` (reference states, then candidate
/// states, in order), as the pairs' decisions need one store.
#[allow(clippy::type_complexity)]
fn pair_elements(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    scope: &Scope<'_>,
    terms: &mut Terms,
) -> (Vec<u32>, Vec<(u32, u64, Val, Val)>, HashMap<u32, u64>) {
    let tensors = scope.tensors;
    terms.set_tensor_names(scope.input_names.clone());
    terms.set_tensor_shapes(tensors.iter().map(|t| t.shape.clone()).collect());
    terms.set_scalar_inputs(scope.first_symbol);
    let ref_out = raw_values_of(reference);
    let cand_out = raw_values_of(candidate);

    // Every output tensor either kernel writes, in tensor order.
    let mut numbers: Vec<u32> = ref_out.keys().chain(cand_out.keys()).copied().collect();
    numbers.sort_unstable();
    numbers.dedup();

    // Pair the elements.
    let mut raw: Vec<(u32, u64, Raw, Raw)> = Vec::new();
    let mut outside: HashMap<u32, u64> = HashMap::new();
    let empty = Vec::new();
    for &k in &numbers {
        let info = tensors.get(k as usize);
        let region = scope.region(k);
        let shape: &[u64] = info.map_or(&[], |t| &t.shape);
        let a = ref_out.get(&k).unwrap_or(&empty);
        let b = cand_out.get(&k).unwrap_or(&empty);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let ia = a.get(i).map(|e| e.0);
            let jb = b.get(j).map(|e| e.0);
            let idx = match (ia, jb) {
                (Some(x), Some(y)) => x.min(y),
                (Some(x), None) => x,
                (None, Some(y)) => y,
                (None, None) => break,
            };
            let take = |side: &Vec<(u64, Raw)>, pos: &mut usize| {
                if side.get(*pos).is_some_and(|e| e.0 == idx) {
                    *pos += 1;
                    side[*pos - 1].1.clone()
                } else {
                    Raw::Unwritten
                }
            };
            let va = take(a, &mut i);
            let vb = take(b, &mut j);
            if !ptxeq_spec::in_region(region, shape, idx) {
                *outside.entry(k).or_default() += 1;
                continue;
            }
            raw.push((k, idx, va, vb));
        }
    }

    let pairs = match without_import(reference, candidate, scope, &raw) {
        Some(pairs) => pairs,
        None => with_import(reference, candidate, scope, terms, raw),
    };
    (numbers, pairs, outside)
}

/// The pairs when no term needs importing (see [`pair_elements`]): every
/// pair of terms matched as the same sub-DAG, and no element that needs a
/// term of its own. `None` otherwise.
fn without_import(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    scope: &Scope<'_>,
    raw: &[(u32, u64, Raw, Raw)],
) -> Option<Vec<(u32, u64, Val, Val)>> {
    let mut matchers: Vec<Option<SameTerms<'_>>> = reference.iter().map(|_| None).collect();
    let mut pairs = Vec::with_capacity(raw.len());
    for (k, idx, va, vb) in raw {
        let inout = scope
            .tensors
            .get(*k as usize)
            .is_some_and(|t| t.role == Role::InOut);
        let (a, b) = match (va, vb) {
            (Raw::Root(sa, ra), Raw::Root(sb, rb)) => {
                let (ga, gb) = (&reference[*sa].graph, &candidate[*sb].graph);
                let m = matchers[*sa].get_or_insert_with(|| SameTerms::new(ga));
                let (x, y) = (ga.roots()[*ra as usize], gb.roots()[*rb as usize]);
                if !m.same(x, gb, *sb as u32, y) {
                    return None;
                }
                (Val::Same, Val::Same)
            }
            // A term against anything else is shown as a formula.
            (Raw::Root(..), _) | (_, Raw::Root(..)) => return None,
            // An unwritten inout element compared as its input value.
            (Raw::Unwritten, _) if inout && scope.complete[0] => return None,
            (_, Raw::Unwritten) if inout && scope.complete[1] => return None,
            (a, b) => (a.clone().plain(), b.clone().plain()),
        };
        pairs.push((*k, *idx, a, b));
    }
    Some(pairs)
}

/// The pairs with every graph imported into `terms` (see
/// [`pair_elements`]); the ids are those the import of all graphs in
/// state order gives, then the inout and integer constants in pair order.
fn with_import(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    scope: &Scope<'_>,
    terms: &mut Terms,
    raw: Vec<(u32, u64, Raw, Raw)>,
) -> Vec<(u32, u64, Val, Val)> {
    let tensors = scope.tensors;
    let mut imported = Vec::new();
    let ref_roots: Vec<Vec<TermId>> = reference
        .iter()
        .map(|s| import_once(&s.graph, terms, &mut imported))
        .collect();
    let cand_roots: Vec<Vec<TermId>> = candidate
        .iter()
        .map(|s| import_once(&s.graph, terms, &mut imported))
        .collect();
    let mut pairs = Vec::with_capacity(raw.len());
    for (k, idx, ra, rb) in raw {
        let info = tensors.get(k as usize);
        let inout = info.is_some_and(|t| t.role == Role::InOut);
        let mut va = ra.resolve(&ref_roots);
        let mut vb = rb.resolve(&cand_roots);
        let int_ty = info.and_then(|t| int_ty(t.dtype));
        if inout {
            // An unwritten inout element keeps its input value — known
            // only when that kernel ran every CTA that could write it.
            for (v, complete) in [(&mut va, scope.complete[0]), (&mut vb, scope.complete[1])] {
                if complete && matches!(v, Val::Unwritten) {
                    *v = Val::Term(match int_ty {
                        Some(ty) => terms.int_input(k, idx, ty),
                        None => terms.input(k, idx),
                    });
                }
            }
        }
        // An integer element: concrete bits against integer data
        // compare as the constant of the tensor's width.
        if let Some(ty) = int_ty
            && matches!(
                (&va, &vb),
                (Val::Term(_), Val::Bits(_)) | (Val::Bits(_), Val::Term(_))
            )
        {
            for v in [&mut va, &mut vb] {
                if let Val::Bits(b) = v {
                    *v = Val::Term(terms.int_const(ty.bits, *b));
                }
            }
        }
        pairs.push((k, idx, va, vb));
    }
    pairs
}

/// The sampling grid of every tensor whose float format is narrower than
/// the sampler's dyadics (by tensor number), so a witness holds only
/// values the tensor can store: e4m3 has 3 mantissa bits, normal
/// exponents from −6 and largest value 448; e5m2 2 bits, from −14, 57344
/// (docs/semantics.md §18); f16 10 bits, from −14, 65504; bf16 7 bits,
/// from −126, (2 − 2⁻⁷)·2¹²⁷. (A shuffled-ramp sample of many inputs
/// reaches magnitudes of thousands in steps of ¼: more significant bits
/// than f16 or bf16 hold.) f32 and wider hold every sampled value.
fn narrow_grids(tensors: &[TensorInfo]) -> Vec<(u32, decide::InputGrid)> {
    use ptxeq_spec::DType as D;
    tensors
        .iter()
        .enumerate()
        .filter_map(|(k, t)| {
            let (mant_bits, min_exp, max) = match t.dtype {
                D::F8e4m3 => (3, -6, 448.0),
                D::F8e5m2 => (2, -14, 57344.0),
                D::F16 => (10, -14, 65504.0),
                D::Bf16 => (7, -126, (2.0 - 2f64.powi(-7)) * 2f64.powi(127)),
                _ => return None,
            };
            Some((
                k as u32,
                decide::InputGrid {
                    mant_bits,
                    min_exp,
                    max,
                },
            ))
        })
        .collect()
}

/// The integer type of an integer tensor dtype (`None` for floats and
/// `pred`).
fn int_ty(d: ptxeq_spec::DType) -> Option<ptxeq_terms::IntTy> {
    use ptxeq_spec::DType as D;
    let (bits, signed) = match d {
        D::S8 => (8, true),
        D::U8 => (8, false),
        D::S16 => (16, true),
        D::U16 => (16, false),
        D::S32 => (32, true),
        D::U32 => (32, false),
        D::S64 => (64, true),
        D::U64 => (64, false),
        _ => return None,
    };
    Some(ptxeq_terms::IntTy { bits, signed })
}

/// A counterexample's output values read as the tensor's type: the
/// decision procedure reports integers as signed readings.
fn as_tensor_values(
    mut cx: ptxeq_decide::decide::Counterexample,
    info: Option<&TensorInfo>,
) -> ptxeq_decide::decide::Counterexample {
    if let Some(ty) = info.and_then(|t| int_ty(t.dtype))
        && !ty.signed
    {
        let m = 2f64.powi(i32::from(ty.bits));
        for v in [&mut cx.reference, &mut cx.candidate] {
            if *v < 0.0 {
                *v += m;
            }
        }
    }
    cx
}

/// Per tensor number, the kernel's written elements over all its CTAs
/// (sorted by index), with every graph imported into `terms`.
fn values_of<'a>(
    states: &[&'a SymbolicState],
    terms: &mut Terms,
    imported: &mut Vec<(&'a TermGraph, Vec<TermId>)>,
) -> HashMap<u32, Vec<(u64, Val)>> {
    let roots: Vec<Vec<TermId>> = states
        .iter()
        .map(|s| import_once(&s.graph, terms, imported))
        .collect();
    raw_values_of(states)
        .into_iter()
        .map(|(k, vals)| {
            let vals = vals
                .into_iter()
                .map(|(i, v)| (i, v.resolve(&roots)))
                .collect();
            (k, vals)
        })
        .collect()
}

/// Per tensor number, the kernel's written elements over all its CTAs
/// (sorted by index), terms as roots of the states' graphs. Two CTAs
/// writing one element cannot happen in a race-free run of every CTA
/// (cross-CTA writes are checked disjoint); with only some CTAs run it is
/// reported, not resolved.
fn raw_values_of(states: &[&SymbolicState]) -> HashMap<u32, Vec<(u64, Raw)>> {
    let mut out: HashMap<u32, Vec<(u64, Raw)>> = HashMap::new();
    for (s, state) in states.iter().enumerate() {
        let roots = state.graph.roots().len();
        for t in &state.outputs {
            let vals = out.entry(t.tensor).or_default();
            for (i, v) in &t.elements {
                let v = match v {
                    OutputValue::Data(r) if (*r as usize) < roots => Raw::Root(s, *r),
                    OutputValue::Data(_) => {
                        Raw::Unsupported("internal: a missing output term".into())
                    }
                    OutputValue::Bits(b) => Raw::Bits(*b),
                    OutputValue::Unsupported(r) => Raw::Unsupported(r.clone()),
                };
                vals.push((*i, v));
            }
        }
    }
    for vals in out.values_mut() {
        vals.sort_by_key(|e| e.0);
        let mut merged: Vec<(u64, Raw)> = Vec::with_capacity(vals.len());
        for (i, v) in vals.drain(..) {
            match merged.last_mut() {
                Some(last) if last.0 == i => {
                    last.1 = Raw::Unsupported("written by two CTAs".into());
                }
                _ => merged.push((i, v)),
            }
        }
        *vals = merged;
    }
    out
}

/// The roots of `graph` in `terms`, importing it unless an equal graph
/// was imported before (two kernels that compute the same terms in the
/// same order export byte-identical graphs: importing the second would
/// only rebuild, node by node, what the first already made).
fn import_once<'a>(
    graph: &'a TermGraph,
    terms: &mut Terms,
    imported: &mut Vec<(&'a TermGraph, Vec<TermId>)>,
) -> Vec<TermId> {
    if let Some((_, roots)) = imported
        .iter()
        .find(|(g, _)| g.len() == graph.len() && *g == graph)
    {
        return roots.clone();
    }
    let roots = terms.import(graph);
    imported.push((graph, roots.clone()));
    roots
}

/// Writes the verification condition of every element pair whose two
/// formulas are not the same term (`<tensor>_<index>.smt2` under `dir`),
/// for replay in another solver. Returns how many files were written.
pub fn emit_smt(
    reference: &[&SymbolicState],
    candidate: &[&SymbolicState],
    scope: &Scope<'_>,
    dir: &Path,
) -> std::io::Result<usize> {
    let tensors = scope.tensors;
    let mut terms = Terms::new();
    let (_, pairs, _) = pair_elements(reference, candidate, scope, &mut terms);
    let mut written = 0;
    for (k, idx, va, vb) in pairs {
        if let (Val::Term(a), Val::Term(b)) = (va, vb)
            && a != b
        {
            let name = tensors
                .get(k as usize)
                .map_or("tensor", |t| t.name.as_str());
            ptxeq_decide::smt::write_vc(dir, &format!("{name}_{idx}"), &terms, a, b)?;
            written += 1;
        }
    }
    Ok(written)
}

fn formula(terms: &Terms, v: &Val) -> String {
    match v {
        Val::Term(t) => terms.display_limited(*t, FORMULA_WIDTH).to_string(),
        Val::Same => "(the same term as the other kernel's)".into(),
        Val::Bits(b) => format!("bits {b:#x}"),
        Val::Unsupported(r) => format!("unsupported: {r}"),
        Val::Unwritten => "(not written)".into(),
    }
}

/// Row-major coordinates of flat index `i` in `shape`.
pub fn unflatten(mut i: u64, shape: &[u64]) -> Vec<u64> {
    let mut out = vec![0; shape.len()];
    for (o, &d) in out.iter_mut().zip(shape).rev() {
        if d == 0 {
            continue;
        }
        *o = i % d;
        i /= d;
    }
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_scope;

#[cfg(test)]
mod tests_stop;

#[cfg(test)]
mod tests_same;
