//! Cooperative-groups `grid.sync()` (`engine/gridsync.rs`) on nvcc 13's
//! own lowering (the corpus kernel `cluster/grid-sync-reduce`): a grid
//! barrier when the whole grid runs as one unit, `unsupported` otherwise,
//! a deadlock when a CTA never arrives.

mod common;

use common::{input, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, Finding, FindingKind, GridRun, OutputValue, ParamValue,
};
use ptxeq_exec::{Role, run_grid};
use ptxeq_spec::DType;

const PTX: &str = include_str!("../../../corpus/cluster/grid-sync-reduce/cand.ptx");

fn kernel(ptx: &str) -> CtaInput {
    let mut inp = input(
        ptx,
        [64, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[128]),
            tensor("part", Role::Scratch, DType::F32, &[128]),
            tensor("out", Role::Output, DType::F32, &[1]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
            ParamValue::Tensor { tensor: 2 },
        ],
    );
    inp.grid = [2, 1, 1];
    inp
}

fn go(inp: &CtaInput, ctas: &[[u32; 3]]) -> GridRun<CVal> {
    let x: Vec<f64> = (0..128).map(|i| i as f64).collect();
    run_grid(inp, ctas, Concrete::new(vec![x, vec![], vec![]])).0
}

fn findings(g: &GridRun<CVal>) -> Vec<&Finding> {
    g.runs
        .iter()
        .flat_map(|r| &r.findings)
        .chain(&g.cross)
        .collect()
}

const ALL: [[u32; 3]; 2] = [[0, 0, 0], [1, 0, 0]];

#[test]
fn grid_sync_orders_every_ctas_writes_before_the_sum() {
    let g = go(&kernel(PTX), &ALL);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    let out = g.outputs.iter().find(|o| o.tensor == 2).expect("out");
    let v = out
        .elements
        .iter()
        .find_map(|(i, e)| match e {
            OutputValue::Data(x) if *i == 0 => Some(x.get()),
            _ => None,
        })
        .expect("out[0]");
    assert_eq!(v, (0..128).map(|i| 2.0 * i as f64).sum::<f64>());
    assert!(g.explored);
}

#[test]
fn without_the_whole_grid_the_workspace_is_unsupported() {
    let g = go(&kernel(PTX), &[[0, 0, 0]]);
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("grid.sync()"), "{}", f.message);
    assert!(f.message.contains("whole grid"), "{}", f.message);
}

#[test]
fn a_cta_that_never_arrives_leaves_the_others_deadlocked() {
    // CTA 1's thread 0 skips its add on the workspace.
    let ptx = PTX.replacen(
        "\t@%p2 bra \t$L__BB0_5;",
        "\t@%p2 bra \t$L__BB0_5;\n\tsetp.ne.u32 \t%p5, %r1, 0;\n\t@%p5 bra \t$L__BB0_5;",
        1,
    );
    assert_ne!(ptx, PTX, "the branch to patch is in the kernel");
    let g = go(&kernel(&ptx), &ALL);
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::Deadlock)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("grid barrier"), "{}", f.message);
}

#[test]
fn a_relaxed_add_on_the_workspace_is_not_the_modelled_protocol() {
    let ptx = PTX.replacen("atom.add.release.gpu", "atom.add.relaxed.gpu", 1);
    assert_ne!(ptx, PTX);
    let g = go(&kernel(&ptx), &ALL);
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("grid workspace"), "{}", f.message);
}
