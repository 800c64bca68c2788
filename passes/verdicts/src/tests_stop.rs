//! The stop rule (issue 20): deciding stops once enough elements are
//! refuted, deterministically, and never hides a refutation; elements
//! whose two terms are one node cost no decision.

use ptxeq_exec::Role;
use ptxeq_exec::{OutputValue, Stats, TensorOutput};
use ptxeq_spec::DType;

use super::*;

const N: u64 = 200;

fn tensors() -> Vec<TensorInfo> {
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![N + 1],
    };
    vec![t("x", Role::Input), t("y", Role::Output)]
}

/// A state writing `y[i] = f(x[i], x[i+1])` for every `i < N`, and
/// `y[N] = extra` when given (built first).
fn state_with(
    f: impl Fn(&mut Terms, u64) -> TermId,
    extra: Option<fn(&mut Terms) -> TermId>,
) -> SymbolicState {
    let mut t = Terms::new();
    let mut roots: Vec<TermId> = extra.map(|e| e(&mut t)).into_iter().collect();
    let first = roots.len() as u32;
    roots.extend((0..N).map(|i| f(&mut t, i)));
    let mut elements: Vec<(u64, OutputValue<u32>)> = (0..N)
        .map(|i| (i, OutputValue::Data(first + i as u32)))
        .collect();
    if first > 0 {
        elements.push((N, OutputValue::Data(0)));
    }
    SymbolicState {
        cta: [0, 0, 0],
        outputs: vec![TensorOutput {
            tensor: 1,
            name: "y".into(),
            writers: Vec::new(),
            elements,
        }],
        graph: t.export(&roots),
        findings: Vec::new(),
        stats: Stats::default(),
    }
}

fn state(f: impl Fn(&mut Terms, u64) -> TermId) -> SymbolicState {
    state_with(f, None)
}

fn sum(t: &mut Terms, i: u64) -> TermId {
    let (a, b) = (t.input(0, i), t.input(0, i + 1));
    t.add(a, b)
}

fn run(r: &SymbolicState, c: &SymbolicState, stop: StopRule) -> Verdicts {
    let tensors = tensors();
    compare_scoped(
        &[r],
        &[c],
        &Scope::whole(&tensors, true),
        &NoMemo,
        &DecideOptions::default(),
        stop,
    )
}

#[test]
fn deciding_stops_after_the_first_round_with_enough_refutations() {
    let r = state(sum);
    let c = state(|t, i| {
        let (a, b) = (t.input(0, i), t.input(0, i + 1));
        t.sub(a, b)
    });
    let stop = StopRule {
        max_refuted: Some(3),
    };
    let v = run(&r, &c, stop);
    let y = &v.tensors[0];
    // One first round decided (the limit, rounded up to a multiple of
    // the workers), every element of it refuted.
    let w = rayon::current_num_threads().max(1);
    let first = (3usize.max(w).div_ceil(w) * w) as u64;
    assert_eq!(v.stats.decided, first);
    assert_eq!(y.refuted, first);
    assert_eq!(y.not_decided, N - first);
    assert_eq!(v.stats.not_decided, y.not_decided);
    assert_eq!(y.compared, y.proved + y.refuted + y.unknown + y.not_decided);
    assert!(v.stopped_early());
    assert_eq!(v.stats.max_refuted, Some(3));
    // Deterministic: the same elements again.
    let again = run(&r, &c, stop);
    assert_eq!(again.tensors, v.tensors);
    // All elements on request.
    let all = run(&r, &c, StopRule::ALL);
    assert_eq!((all.tensors[0].refuted, all.tensors[0].not_decided), (N, 0));
    assert!(!all.stopped_early());
}

#[test]
fn a_late_refutation_is_still_found() {
    let r = state(sum);
    let last = N - 1;
    let c = state(|t, i| {
        let (a, b) = (t.input(0, i), t.input(0, i + 1));
        // Built the other way round (not the same node: decided), one
        // element wrong.
        if i == last { t.sub(a, b) } else { t.add(b, a) }
    });
    let v = run(&r, &c, StopRule::DEFAULT);
    let y = &v.tensors[0];
    assert_eq!((y.refuted, y.not_decided), (1, 0));
    assert_eq!(y.failures[0].index, last);
    assert!(!v.stopped_early());
}

#[test]
fn the_same_term_built_in_two_stores_costs_no_decision() {
    let r = state(sum);
    // Another term first, so the two exported graphs number their nodes
    // differently and the elements meet only after both are imported
    // into one store.
    let c = state_with(
        sum,
        Some(|t: &mut Terms| {
            let x = t.input(0, 7);
            t.exp(x)
        }),
    );
    assert!(r.graph != c.graph);
    let v = run(&r, &c, StopRule::ALL);
    let y = &v.tensors[0];
    // y[N] is written by the candidate only: a difference, decided free.
    assert_eq!((y.proved, y.identical, y.refuted), (N, N, 1));
    assert_eq!((v.stats.decided, v.stats.memo_hits), (0, 0));
}
