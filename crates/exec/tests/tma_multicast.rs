//! `.multicast::cluster` bulk copies (`engine/tma.rs`,
//! `engine/mbarrier/remote.rs`): a cluster of 2 CTAs of 32 threads
//! co-scheduled as one unit.
//!
//! The kernel: every CTA's thread 0 initialises `bar` (one arrival), then
//! `SYNC` (a cluster barrier); thread 0 of CTA rank r arms `bar` with
//! `EXPECT` transaction bytes and multicasts x[32r..32r+32] (128 bytes) into
//! buf[32r..] of the CTAs in `MASK` with
//! `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster`;
//! every thread then `WAIT`s on its own `bar` (parity 0) and writes
//! y[32r + t] = buf[t] + buf[32 + t].

mod common;

use common::{input, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, Finding, FindingKind, GridRun, OutputValue, ParamValue, Role,
    run_cta, run_grid,
};
use ptxeq_spec::DType;

const SYNC: &str = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";
const WAIT: &str = "mov.u32 %r8, 0;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], %r8;\n@!%p2 bra WAIT;";
const MASK: &str = "mov.u16 %rs1, 3;";

struct K<'a> {
    sync: &'a str,
    expect: u32,
    mask: &'a str,
    wait: &'a str,
}

const OK: K<'static> = K {
    sync: SYNC,
    expect: 256,
    mask: MASK,
    wait: WAIT,
};

fn kernel(k: &K<'_>) -> CtaInput {
    let K {
        sync,
        expect,
        mask,
        wait,
    } = k;
    let ptx = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n{{\n\
         .reg .b16 %rs<4>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n\
         .shared .align 128 .b8 buf[256];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\n\
         mov.u32 %r9, %cluster_ctarank;\n\
         mov.u32 %r1, buf;\n\
         mov.u32 %r5, bar;\n\
         setp.ne.u32 %p1, %r0, 0;\n\
         @%p1 bra INITED;\n\
         mbarrier.init.shared::cta.b64 [%r5], 1;\n\
         fence.mbarrier_init.release.cluster;\n\
         INITED:\n\
         {sync}\n\
         @%p1 bra ISSUED;\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], {expect};\n\
         shl.b32 %r10, %r9, 7;\n\
         add.s32 %r11, %r1, %r10;\n\
         mul.wide.u32 %rd3, %r10, 1;\n\
         add.s64 %rd4, %rd1, %rd3;\n\
         {mask}\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r11], [%rd4], 128, [%r5], %rs1;\n\
         ISSUED:\n\
         {wait}\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r3, %r1, %r2;\n\
         ld.shared.f32 %f1, [%r3];\n\
         ld.shared.f32 %f2, [%r3+128];\n\
         add.f32 %f3, %f1, %f2;\n\
         shl.b32 %r12, %r9, 5;\n\
         add.s32 %r13, %r12, %r0;\n\
         mul.wide.u32 %rd6, %r13, 4;\n\
         add.s64 %rd5, %rd2, %rd6;\n\
         st.global.f32 [%rd5], %f3;\n\
         ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[64]),
            tensor("y", Role::Output, DType::F32, &[64]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    inp.grid = [2, 1, 1];
    inp.cluster = Some([2, 1, 1]);
    inp
}

fn go(inp: &CtaInput) -> GridRun<CVal> {
    let x: Vec<f64> = (0..64).map(|i| i as f64 + 1.0).collect();
    run_grid(inp, &[[0, 0, 0], [1, 0, 0]], Concrete::new(vec![x, vec![]])).0
}

fn findings(g: &GridRun<CVal>) -> Vec<&Finding> {
    g.runs
        .iter()
        .flat_map(|r| &r.findings)
        .chain(&g.cross)
        .collect()
}

fn first(g: &GridRun<CVal>, kind: FindingKind) -> &Finding {
    findings(g)
        .into_iter()
        .find(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?}: {:#?}", findings(g)))
}

fn y(g: &GridRun<CVal>) -> Vec<Option<f64>> {
    let mut v = vec![None; 64];
    let out = g.outputs.iter().find(|o| o.tensor == 1).expect("y");
    for (i, e) in &out.elements {
        if let OutputValue::Data(x) = e {
            v[*i as usize] = Some(x.get());
        }
    }
    v
}

#[test]
fn a_multicast_lands_in_every_cta_of_the_mask_and_completes_its_barrier() {
    let g = go(&kernel(&OK));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    let y = y(&g);
    for (i, v) in y.iter().enumerate() {
        let t = (i % 32) as f64;
        assert_eq!(*v, Some((t + 1.0) + (t + 33.0)), "y[{i}]");
    }
}

#[test]
fn a_mask_that_leaves_the_other_cta_out_deadlocks() {
    let k = K {
        mask: "mov.u32 %r14, 1;\nshl.b32 %r14, %r14, %r9;\ncvt.u16.u32 %rs1, %r14;",
        ..OK
    };
    let g = go(&kernel(&k));
    let f = first(&g, FindingKind::Deadlock);
    assert!(f.message.contains("bar"), "{}", f.message);
}

#[test]
fn more_bytes_than_expected_is_an_over_arrival() {
    // Each barrier expects only the CTA's own half.
    let k = K { expect: 128, ..OK };
    let g = go(&kernel(&k));
    assert!(
        findings(&g).iter().any(|f| matches!(
            f.kind,
            FindingKind::Divergence | FindingKind::Race | FindingKind::Uninitialised
        )),
        "{:#?}",
        findings(&g)
    );
}

#[test]
fn reading_the_other_half_before_the_wait_races_with_the_landing() {
    let k = K { wait: "", ..OK };
    let g = go(&kernel(&k));
    let f = first(&g, FindingKind::Race);
    assert!(f.message.contains("buf"), "{}", f.message);
}

#[test]
fn without_the_cluster_barrier_the_remote_complete_tx_may_precede_the_init() {
    let k = K { sync: "", ..OK };
    let g = go(&kernel(&k));
    assert!(
        findings(&g)
            .iter()
            .any(|f| f.message.contains("not ordered before")
                || f.message.contains("where no mbarrier.init has created")),
        "{:#?}",
        findings(&g)
    );
}

#[test]
fn a_mask_naming_a_rank_outside_the_cluster_is_out_of_bounds() {
    let k = K {
        mask: "mov.u16 %rs1, 7;",
        ..OK
    };
    let g = go(&kernel(&k));
    let f = first(&g, FindingKind::OutOfBounds);
    assert!(f.message.contains("rank 2"), "{}", f.message);
}

#[test]
fn one_cta_of_the_cluster_alone_reports_the_multicast_unsupported() {
    let inp = kernel(&OK);
    let x: Vec<f64> = (0..64).map(|i| i as f64).collect();
    let r = run_cta(&inp, [0, 0, 0], Concrete::new(vec![x, vec![]])).0;
    assert!(
        r.findings
            .iter()
            .any(|f| f.kind == FindingKind::Unsupported),
        "{:#?}",
        r.findings
    );
}
