//! `compare_scoped`: compare regions, kernels whose CTAs cover the
//! compared elements differently, and symbolic scalars in witnesses.

use ptxeq_exec::Role;
use ptxeq_exec::{OutputValue, Stats, TensorOutput};
use ptxeq_spec::DType;

use super::*;

fn tensor(name: &str, role: Role, shape: Vec<u64>) -> TensorInfo {
    TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape,
    }
}

/// Tensor 1 (`y`, 2x4) with the given elements, built in a private store.
fn state(f: impl FnOnce(&mut Terms) -> Vec<(u64, TermId)>) -> SymbolicState {
    let mut t = Terms::new();
    let elems = f(&mut t);
    let roots: Vec<TermId> = elems.iter().map(|e| e.1).collect();
    SymbolicState {
        cta: [0, 0, 0],
        outputs: vec![TensorOutput {
            tensor: 1,
            name: "y".into(),
            writers: Vec::new(),
            elements: elems
                .iter()
                .enumerate()
                .map(|(k, (i, _))| (*i, OutputValue::Data(k as u32)))
                .collect(),
        }],
        graph: t.export(&roots),
        findings: Vec::new(),
        stats: Stats::default(),
    }
}

fn scope(tensors: &[TensorInfo], region: Option<Vec<[u64; 2]>>, complete: [bool; 2]) -> Scope<'_> {
    Scope {
        tensors,
        input_names: vec!["x".into(), "y".into(), "alpha".into()],
        first_symbol: 2,
        regions: vec![None, region],
        complete,
    }
}

fn run(r: &SymbolicState, c: &SymbolicState, s: &Scope<'_>) -> Verdicts {
    compare_scoped(
        &[r],
        &[c],
        s,
        &NoMemo,
        &DecideOptions::default(),
        StopRule::ALL,
    )
}

#[test]
fn only_the_region_is_compared() {
    let tensors = [
        tensor("x", Role::Input, vec![8]),
        tensor("y", Role::Output, vec![2, 4]),
    ];
    // Row 0 agrees; row 1 differs everywhere. Compare row 0, columns 1..3.
    let r = state(|t| (0..8).map(|i| (i, t.input(0, i))).collect());
    let c = state(|t| {
        (0..8)
            .map(|i| {
                let x = t.input(0, i);
                (i, if i < 4 { x } else { t.neg(x) })
            })
            .collect()
    });
    let v = run(
        &r,
        &c,
        &scope(&tensors, Some(vec![[0, 1], [1, 3]]), [true; 2]),
    );
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.proved, y.refuted, y.outside), (2, 2, 0, 6));
    assert_eq!(y.compare_region, Some(vec![[0, 1], [1, 3]]));
    // The whole tensor: row 1 is refuted.
    let v = run(&r, &c, &scope(&tensors, None, [true; 2]));
    assert_eq!((v.tensors[0].refuted, v.tensors[0].outside), (4, 0));
}

#[test]
fn coverage_is_per_kernel() {
    let tensors = [
        tensor("x", Role::Input, vec![8]),
        tensor("y", Role::Output, vec![2, 4]),
    ];
    // The reference writes y[0]; the candidate writes y[1].
    let r = state(|t| vec![(0, t.input(0, 0))]);
    let c = state(|t| vec![(1, t.input(0, 1))]);
    // The reference covers every writer, the candidate does not: y[0]
    // (reference only) may be written by a candidate CTA not run —
    // unknown; y[1] (candidate only) is never written by the reference —
    // a difference.
    let v = run(&r, &c, &scope(&tensors, None, [true, false]));
    let y = &v.tensors[0];
    assert_eq!((y.refuted, y.unknown), (1, 1));
    let by_index = |i: u64| &y.failures.iter().find(|f| f.index == i).unwrap().failure;
    assert!(
        matches!(by_index(0), Failure::Unknown { reason, .. } if reason.contains("the candidate may write it"))
    );
    assert_eq!(
        by_index(1),
        &Failure::WrittenByOne {
            writer: "candidate".into()
        }
    );
    assert!(!v.complete);
}

#[test]
fn an_inout_element_keeps_its_input_only_where_that_kernel_is_complete() {
    let tensors = [
        tensor("x", Role::Input, vec![8]),
        tensor("y", Role::InOut, vec![2, 4]),
    ];
    // Both store y[0] = y[0] + 0 in effect: the reference writes y[0] as
    // its input, the candidate leaves it.
    let r = state(|t| vec![(0, t.input(1, 0))]);
    let c = state(|_| Vec::new());
    let v = run(&r, &c, &scope(&tensors, None, [true, true]));
    assert_eq!((v.tensors[0].proved, v.tensors[0].unknown), (1, 0));
    let v = run(&r, &c, &scope(&tensors, None, [true, false]));
    assert_eq!((v.tensors[0].proved, v.tensors[0].unknown), (0, 1));
}

#[test]
fn symbolic_scalars_print_by_name_and_appear_in_witnesses() {
    let tensors = [
        tensor("x", Role::Input, vec![8]),
        tensor("y", Role::Output, vec![2, 4]),
    ];
    let r = state(|t| {
        let (a, x) = (t.input(2, 0), t.input(0, 0));
        vec![(0, t.mul(a, x))]
    });
    let c = state(|t| vec![(0, t.input(0, 0))]);
    let v = run(&r, &c, &scope(&tensors, None, [true; 2]));
    let f = &v.tensors[0].failures[0];
    assert!(
        f.reference.contains("alpha") && !f.reference.contains("alpha["),
        "{}",
        f.reference
    );
    let Failure::Refuted { counterexample } = &f.failure else {
        panic!("{:?}", f.failure);
    };
    assert!(
        counterexample
            .inputs
            .iter()
            .any(|w| w.tensor == 2 && w.index == 0)
    );
}
