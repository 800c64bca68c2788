//! Pairing and tallying over hand-built symbolic states.

use std::sync::Mutex;

use ptxeq_exec::Role;
use ptxeq_exec::{OutputValue, Stats, TensorOutput};
use ptxeq_spec::DType;

use super::*;

fn tensor(name: &str, role: Role, n: u64) -> TensorInfo {
    TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![n],
    }
}

/// A symbolic state whose tensor `k` has the given elements, built by
/// `f` in a private store (as symex would).
fn state(k: u32, f: impl FnOnce(&mut Terms) -> Vec<(u64, OutputValue<TermId>)>) -> SymbolicState {
    let mut t = Terms::new();
    let elems = f(&mut t);
    let mut roots = Vec::new();
    let elements = elems
        .into_iter()
        .map(|(i, v)| {
            let v = match v {
                OutputValue::Data(id) => {
                    roots.push(id);
                    OutputValue::Data((roots.len() - 1) as u32)
                }
                OutputValue::Bits(b) => OutputValue::Bits(b),
                OutputValue::Unsupported(r) => OutputValue::Unsupported(r),
            };
            (i, v)
        })
        .collect();
    SymbolicState {
        cta: [0, 0, 0],
        outputs: vec![TensorOutput {
            tensor: k,
            name: format!("t{k}"),
            writers: Vec::new(),
            elements,
        }],
        graph: t.export(&roots),
        findings: Vec::new(),
        stats: Stats::default(),
    }
}

fn tensors() -> Vec<TensorInfo> {
    vec![tensor("x", Role::Input, 4), tensor("y", Role::Output, 4)]
}

fn run(a: &SymbolicState, b: &SymbolicState) -> Verdicts {
    compare(
        &[a],
        &[b],
        &tensors(),
        true,
        &NoMemo,
        &DecideOptions::default(),
    )
}

#[test]
fn identical_terms_are_proved_without_algebra() {
    let mk = |t: &mut Terms| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let s = t.add(a, b);
        vec![(0, OutputValue::Data(s))]
    };
    let v = run(&state(1, mk), &state(1, mk));
    assert_eq!(v.tensors.len(), 1);
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.proved, y.identical), (1, 1, 1));
    assert_eq!(v.stats.decided, 0);
}

#[test]
fn exp_laws_are_proved_by_the_normal_form() {
    let r = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let (ea, eb) = (t.exp(a), t.exp(b));
        vec![(2, OutputValue::Data(t.mul(ea, eb)))]
    });
    let c = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let s = t.add(a, b);
        vec![(2, OutputValue::Data(t.exp(s)))]
    });
    let v = run(&r, &c);
    let y = &v.tensors[0];
    assert_eq!((y.proved, y.identical, y.refuted, y.unknown), (1, 0, 0, 0));
    assert_eq!(v.stats.decided, 1);
}

#[test]
fn a_different_formula_is_refuted_with_a_replayable_witness() {
    let r = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        vec![(3, OutputValue::Data(t.add(a, b)))]
    });
    let c = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        vec![(3, OutputValue::Data(t.sub(a, b)))]
    });
    let v = run(&r, &c);
    let y = &v.tensors[0];
    assert_eq!((y.proved, y.refuted), (0, 1));
    let f = &y.failures[0];
    assert_eq!((f.index, f.coords.as_slice()), (3, &[3u64][..]));
    let Failure::Refuted { counterexample: cx } = &f.failure else {
        panic!("expected a refutation, got {:?}", f.failure);
    };
    // Replay the witness: x0 + x1 vs x0 - x1 at the reported inputs.
    let val = |i: u64| {
        cx.inputs
            .iter()
            .find(|w| w.tensor == 0 && w.index == i)
            .map(|w| w.value)
            .unwrap()
    };
    assert_eq!(cx.reference, val(0) + val(1));
    assert_eq!(cx.candidate, val(0) - val(1));
    assert_ne!(cx.reference, cx.candidate);
}

#[test]
fn an_element_written_by_one_kernel_only_is_a_difference() {
    let r = state(1, |t| {
        let a = t.input(0, 0);
        vec![(0, OutputValue::Data(a)), (1, OutputValue::Data(a))]
    });
    let c = state(1, |t| {
        let a = t.input(0, 0);
        vec![(0, OutputValue::Data(a))]
    });
    let v = run(&r, &c);
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.proved, y.refuted), (2, 1, 1));
    assert_eq!(
        y.failures[0].failure,
        Failure::WrittenByOne {
            writer: "reference".into()
        }
    );
}

#[test]
fn an_unwritten_inout_element_keeps_its_input_value() {
    let tensors = vec![tensor("x", Role::Input, 4), tensor("y", Role::InOut, 4)];
    // The reference writes y[2] = y[2] (a no-op store); the candidate does
    // not write it at all.
    let r = state(1, |t| vec![(2, OutputValue::Data(t.input(1, 2)))]);
    let c = state(1, |_| Vec::new());
    let v = compare(
        &[&r],
        &[&c],
        &tensors,
        true,
        &NoMemo,
        &DecideOptions::default(),
    );
    assert_eq!((v.tensors[0].proved, v.tensors[0].refuted), (1, 0));
    // ... but writing anything else is a difference.
    let r = state(1, |t| vec![(2, OutputValue::Data(t.input(0, 2)))]);
    let v = compare(
        &[&r],
        &[&c],
        &tensors,
        true,
        &NoMemo,
        &DecideOptions::default(),
    );
    assert_eq!(v.tensors[0].refuted, 1);
}

#[test]
fn bit_patterns_and_unsupported_values() {
    let r = state(1, |_| {
        vec![
            (0, OutputValue::Bits(7)),
            (1, OutputValue::Bits(7)),
            (2, OutputValue::Unsupported("mixed widths".into())),
        ]
    });
    let c = state(1, |_| {
        vec![
            (0, OutputValue::Bits(7)),
            (1, OutputValue::Bits(8)),
            (2, OutputValue::Bits(0)),
        ]
    });
    let v = run(&r, &c);
    let y = &v.tensors[0];
    assert_eq!((y.proved, y.refuted, y.unknown), (1, 1, 1));
    assert!(matches!(y.failures[0].failure, Failure::BitsDiffer { .. }));
    assert!(matches!(y.failures[1].failure, Failure::Unsupported { .. }));
}

/// A memo keyed by term hashes answers the second comparison.
#[test]
fn decisions_are_memoised_by_term_hash() {
    struct M(Mutex<HashMap<MemoKey, Decided>>);
    impl DecisionMemo for M {
        fn get(&self, k: MemoKey) -> Option<Decided> {
            self.0.lock().unwrap().get(&k).cloned()
        }
        fn put(&self, k: MemoKey, d: &Decided) {
            self.0.lock().unwrap().insert(k, d.clone());
        }
    }
    let r = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let (ea, eb) = (t.exp(a), t.exp(b));
        vec![(0, OutputValue::Data(t.mul(ea, eb)))]
    });
    let c = state(1, |t| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let s = t.add(a, b);
        vec![(0, OutputValue::Data(t.exp(s)))]
    });
    let memo = M(Mutex::new(HashMap::new()));
    let opts = DecideOptions::default();
    let first = compare(&[&r], &[&c], &tensors(), true, &memo, &opts);
    assert_eq!((first.stats.decided, first.stats.memo_hits), (1, 0));
    let second = compare(&[&r], &[&c], &tensors(), true, &memo, &opts);
    assert_eq!((second.stats.decided, second.stats.memo_hits), (0, 1));
    assert_eq!(second.tensors[0].proved, 1);
}

#[test]
fn unflatten_is_row_major() {
    assert_eq!(unflatten(7, &[2, 4]), vec![1, 3]);
    assert_eq!(unflatten(0, &[3, 3]), vec![0, 0]);
    assert_eq!(unflatten(5, &[]), Vec::<u64>::new());
}

/// The two kernels split the tensor across CTAs differently: only the
/// merged, final contents are compared.
#[test]
fn outputs_are_merged_over_ctas() {
    let at = |cta: u32, s: SymbolicState| SymbolicState {
        cta: [cta, 0, 0],
        ..s
    };
    // Reference: CTA 0 writes y[0], y[1]; CTA 1 writes y[2], y[3].
    let r0 = at(
        0,
        state(1, |t| {
            (0..2)
                .map(|i| (i, OutputValue::Data(t.input(0, i))))
                .collect()
        }),
    );
    let r1 = at(
        1,
        state(1, |t| {
            (2..4)
                .map(|i| (i, OutputValue::Data(t.input(0, i))))
                .collect()
        }),
    );
    // Candidate: even elements in CTA 0, odd ones in CTA 1.
    let c0 = at(
        0,
        state(1, |t| {
            [0, 2].map(|i| (i, OutputValue::Data(t.input(0, i)))).into()
        }),
    );
    let c1 = at(
        1,
        state(1, |t| {
            [1, 3].map(|i| (i, OutputValue::Data(t.input(0, i)))).into()
        }),
    );
    let opts = DecideOptions::default();
    let v = compare(&[&r0, &r1], &[&c0, &c1], &tensors(), true, &NoMemo, &opts);
    assert_eq!((v.tensors[0].compared, v.tensors[0].proved), (4, 4));
    assert_eq!(v.ctas, vec![[0, 0, 0], [1, 0, 0]]);
    // Only CTA 0 run (`ctas = "first"`): y[1] and y[2] are each written by
    // one kernel only, which is no evidence of a difference.
    let v = compare(&[&r0], &[&c0], &tensors(), false, &NoMemo, &opts);
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.proved, y.refuted, y.unknown), (3, 1, 0, 2));
    // Two CTAs of one kernel writing one element is reported, not resolved.
    let v = compare(&[&r0, &r0], &[&c0, &c1], &tensors(), true, &NoMemo, &opts);
    assert!(v.tensors[0].failures.iter().any(|f| matches!(
        &f.failure,
        Failure::Unsupported { reason } if reason.contains("two CTAs")
    )));
}

#[test]
fn equal_graphs_are_imported_once() {
    let mk = |t: &mut Terms| {
        let (a, b) = (t.input(0, 0), t.input(0, 1));
        let s = t.add(a, b);
        let p = t.mul(s, a);
        vec![(0, OutputValue::Data(s)), (1, OutputValue::Data(p))]
    };
    let (r, c) = (state(1, mk), state(1, mk));
    let mut imported = Vec::new();
    let mut terms = Terms::new();
    let first = import_once(&r.graph, &mut terms, &mut imported);
    let n = terms.len();
    let second = import_once(&c.graph, &mut terms, &mut imported);
    assert_eq!(first, second);
    assert_eq!(terms.len(), n);
    assert_eq!(imported.len(), 1);
    // a different graph is imported
    let other = state(1, |t| vec![(0, OutputValue::Data(t.input(0, 3)))]);
    let third = import_once(&other.graph, &mut terms, &mut imported);
    assert_eq!(imported.len(), 2);
    assert_eq!(third, vec![terms.input(0, 3)]);
}

/// Witness values of f16 and bf16 tensors lie on their formats' grids
/// (values computed by hand from the formats: bf16 keeps 8 significant
/// bits, f16 11), f32 tensors get no grid, and fp8 keeps its own.
#[test]
fn narrow_tensors_get_their_format_grids() {
    let with = |dtype| TensorInfo {
        dtype,
        ..tensor("t", Role::Input, 4)
    };
    let tensors = [
        with(DType::F32),
        with(DType::Bf16),
        with(DType::F16),
        with(DType::F8e4m3),
    ];
    let grids = narrow_grids(&tensors);
    let of = |k: u32| grids.iter().find(|(t, _)| *t == k).map(|(_, g)| *g);
    assert!(of(0).is_none(), "f32 holds every sampled dyadic");
    let bf16 = of(1).expect("bf16 grid");
    // 63.9375 = 0b111111.1111 (10 significant bits) → 64; 1.5 stays.
    assert_eq!(bf16.round(63.9375), 64.0);
    assert_eq!(bf16.round(-1.5), -1.5);
    // 6250.25 → nearest multiple of 2^(12−7) = 32 is 6240.
    assert_eq!(bf16.round(6250.25), 6240.0);
    let f16 = of(2).expect("f16 grid");
    // 6250.25 → nearest multiple of 2^(12−10) = 4 is 6252; 63.9375 fits.
    assert_eq!(f16.round(6250.25), 6252.0);
    assert_eq!(f16.round(63.9375), 63.9375);
    assert_eq!(f16.round(1e6), 65504.0);
    assert_eq!(of(3).expect("e4m3 grid").round(500.0), 448.0);
}
