//! The uninterpreted-function atoms (`ptxeq_terms::uninterpreted`)
//! through the decision procedure.

use crate::decide::{DecideOptions, ElementDecision, check_counterexample, decide};
use crate::normal::Normalizer;
use ptxeq_terms::uninterpreted::*;
use ptxeq_terms::{Node, TermId, Terms};

fn run(t: &Terms, a: TermId, b: TermId) -> ElementDecision {
    decide(&mut Normalizer::new(t), a, b, &DecideOptions::default())
}

/// `f` is an atom over its arguments' normal forms: equal arguments
/// (up to algebra) prove, anything that needs a property of `f` is
/// refuted with the fixed interpretation, which the witness names.
#[test]
fn applications_are_atoms_over_normal_forms() {
    let mut t = Terms::new();
    let (x, y) = (t.input(0, 0), t.input(0, 1));
    let two = t.int(2);
    // f(2·(x + y)) = f(2x + 2y): the arguments' normal forms agree.
    let s = t.add(x, y);
    let s2 = t.mul(two, s);
    let x2 = t.mul(two, x);
    let y2 = t.mul(two, y);
    let s2b = t.add(x2, y2);
    let fa = t.apply("f", &[s2]);
    let fb = t.apply("f", &[s2b]);
    assert!(matches!(run(&t, fa, fb), ElementDecision::Proved { .. }));
    // f(x)·f(y) + 1 = 1 + f(y)·f(x).
    let (fx, fy) = (t.apply("f", &[x]), t.apply("f", &[y]));
    let p = t.mul(fx, fy);
    let one = t.int(1);
    let l = t.add(p, one);
    let q = t.mul(fy, fx);
    let r = t.add(one, q);
    assert!(matches!(run(&t, l, r), ElementDecision::Proved { .. }));
    // Refuted: f(2x) vs 2·f(x), f vs g, f vs exp, f(x, y) vs f(y, x).
    let f2x = t.apply("f", &[x2]);
    let tfx = t.mul(two, fx);
    let gx = t.apply("g", &[x]);
    let ex = t.exp(x);
    let fxy = t.apply("f", &[x, y]);
    let fyx = t.apply("f", &[y, x]);
    for (a, b) in [(f2x, tfx), (fx, gx), (fx, ex), (fxy, fyx)] {
        let ElementDecision::Refuted(cx) = run(&t, a, b) else {
            panic!("{} vs {} not refuted", t.display(a), t.display(b));
        };
        assert!(check_counterexample(&t, a, b, &cx));
        assert!(!cx.functions.is_empty(), "{cx:?}");
        assert!(cx.functions.iter().all(|f| f.contains(")/16, and ")));
    }
    assert_eq!(t.display(fxy).to_string(), "f(x0[0], x0[1])");
}

#[test]
fn graphs_and_smt_keep_the_name() {
    let mut t = Terms::new();
    let x = t.input(0, 0);
    let f = t.apply("my exp|", &[x]);
    let g = t.export(&[f]);
    let mut u = Terms::new();
    let r = u.import(&g);
    assert_eq!(u.hash128(r[0]), t.hash128(f));
    assert!(matches!(u.node(r[0]), Node::Apply(a) if &*a.name == "my exp|"));
    let e = t.exp(x);
    let smt = crate::smt::smtlib(&t, f, e);
    assert!(
        smt.contains("(declare-fun |u_my exp_| (Real) Real)"),
        "{smt}"
    );
    // Different names hash differently.
    let h = t.apply("my exp", &[x]);
    assert_ne!(t.hash128(f), t.hash128(h));
}

#[test]
fn deterministic_nonzero_and_consistent() {
    let a = Interpretation::of("my_exp", 1);
    assert_eq!(a, Interpretation::of("my_exp", 1));
    assert_ne!(a, Interpretation::of("my_log", 1));
    for i in [&a, &Interpretation::of("g", 3)] {
        assert!(i.constant != 0 && i.square != 0 && i.linear.iter().all(|&l| l != 0));
        let args = [0.5, -1.25, 3.0];
        let n = i.linear.len();
        let exact = i
            .eval_rat(
                &args[..n]
                    .iter()
                    .map(|&x| ptxeq_terms::Rat::of_f64(x).unwrap())
                    .collect::<Vec<_>>(),
            )
            .to_f64();
        assert_eq!(exact, i.eval_f64(&args[..n]));
    }
    let s = Interpretation::of("g", 2).to_string();
    assert!(
        s.starts_with("g(a1, a2) = (") && s.ends_with("/16 where an argument is ±inf"),
        "{s}"
    );
}
