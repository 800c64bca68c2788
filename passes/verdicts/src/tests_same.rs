//! Identical pairs found on the graphs (`pair_elements` without an
//! import store) and the fallback to importing every graph.

use ptxeq_exec::{OutputValue, Role, Stats, TensorOutput};
use ptxeq_spec::DType;

use super::*;

fn tensors() -> Vec<TensorInfo> {
    let t = |name: &str, role, n| TensorInfo {
        name: String::from(name),
        role,
        dtype: DType::F32,
        shape: vec![n],
    };
    vec![t("x", Role::Input, 8), t("y", Role::Output, 4)]
}

/// Dot products `y[j] = Σ_k x[k]·x[k+j]`, elements written in `order`
/// (so two kernels' graphs list the same terms in different orders),
/// element `wrong` (if any) with one more addend.
fn state(order: &[u64], wrong: Option<u64>) -> SymbolicState {
    let mut t = Terms::new();
    let mut roots = Vec::new();
    let mut elements = Vec::new();
    for &j in order {
        let mut acc = t.int(0);
        for k in 0..4 {
            let a = t.input(0, k);
            let b = t.input(0, k + j);
            let p = t.mul(a, b);
            acc = t.add(acc, p);
        }
        if wrong == Some(j) {
            let e = t.input(0, 7);
            acc = t.add(acc, e);
        }
        roots.push(acc);
        elements.push((j, OutputValue::Data((roots.len() - 1) as u32)));
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

/// Every pair the same sub-DAG: `Same` pairs and nothing imported; the
/// verdicts count them identical, as the import path did.
#[test]
fn all_identical_pairs_import_nothing() {
    let (a, b) = (state(&[0, 1, 2, 3], None), state(&[3, 1, 0, 2], None));
    assert_ne!(a.graph, b.graph);
    let ts = tensors();
    let scope = Scope::whole(&ts, true);
    let mut terms = Terms::new();
    let (_, pairs, _) = pair_elements(&[&a], &[&b], &scope, &mut terms);
    assert_eq!(pairs.len(), 4);
    assert!(
        pairs
            .iter()
            .all(|p| matches!((&p.2, &p.3), (Val::Same, Val::Same)))
    );
    assert!(terms.is_empty());
    let v = compare(&[&a], &[&b], &ts, true, &NoMemo, &DecideOptions::default());
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.proved, y.identical), (4, 4, 4));
    assert_eq!(v.stats.decided, 0);
}

/// One pair differs: every graph is imported (the other pairs are one
/// node each there), and the difference is refuted with its formulas.
#[test]
fn a_differing_pair_imports_every_graph() {
    let (a, b) = (state(&[0, 1, 2, 3], None), state(&[3, 1, 0, 2], Some(2)));
    let ts = tensors();
    let scope = Scope::whole(&ts, true);
    let mut terms = Terms::new();
    let (_, pairs, _) = pair_elements(&[&a], &[&b], &scope, &mut terms);
    assert!(!terms.is_empty());
    let same: Vec<bool> = pairs
        .iter()
        .map(|p| match (&p.2, &p.3) {
            (Val::Term(x), Val::Term(y)) => x == y,
            _ => panic!("every value is a term"),
        })
        .collect();
    assert_eq!(same, [true, true, false, true]);
    let v = compare(&[&a], &[&b], &ts, true, &NoMemo, &DecideOptions::default());
    let y = &v.tensors[0];
    assert_eq!((y.compared, y.identical, y.refuted), (4, 3, 1));
    assert_eq!(y.failures[0].index, 2);
    assert!(
        y.failures[0].candidate.contains("x[7]"),
        "{}",
        y.failures[0].candidate
    );
}

/// An unwritten `inout` element needs its input term: imported path.
#[test]
fn an_unwritten_inout_element_imports() {
    let mut ts = tensors();
    ts[1].role = Role::InOut;
    let (a, b) = (state(&[0, 1, 2, 3], None), state(&[0, 1, 2], None));
    let scope = Scope::whole(&ts, true);
    let mut terms = Terms::new();
    let (_, pairs, _) = pair_elements(&[&a], &[&b], &scope, &mut terms);
    assert!(!terms.is_empty());
    assert!(matches!(
        (&pairs[3].2, &pairs[3].3),
        (Val::Term(_), Val::Term(_))
    ));
}
