//! Thread-block clusters (`engine/cluster.rs`): the cluster special
//! registers for any shape, the one-CTA cluster barrier (ordering, its
//! `.relaxed` arrive, a phase that never completes, a double arrival),
//! `mapa` to a missing rank, multi-CTA cluster operations reported
//! unsupported, and the grid-sync workspace (`%envreg1`).

mod common;

use common::{input, kinds, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CVal, CtaInput, CtaRun, FindingKind, ParamValue, run_cta};
use ptxeq_spec::DType;

/// 64 threads: thread t stores x[t] to `part[t]`, runs `SYNC`, then
/// reads `part[63 - t]` (through `mapa` to rank `RANK`) into y[t].
fn exchange(sync: &str, rank: u32) -> CtaInput {
    exchange_with(sync, rank, "")
}

/// [`exchange`] with extra shared declarations.
fn exchange_with(sync: &str, rank: u32, decls: &str) -> CtaInput {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 4 .b8 part[256];\n{decls}\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\n\
         mul.wide.u32 %rd3, %r0, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\n\
         ld.global.f32 %f1, [%rd4];\n\
         mov.u32 %r1, part;\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r3, %r1, %r2;\n\
         st.shared.f32 [%r3], %f1;\n\
         {sync}\n\
         mapa.shared::cluster.u32 %r4, %r1, {rank};\n\
         sub.s32 %r5, 63, %r0;\n\
         shl.b32 %r5, %r5, 2;\n\
         add.s32 %r6, %r4, %r5;\n\
         ld.shared::cluster.f32 %f2, [%r6];\n\
         add.s64 %rd5, %rd2, %rd3;\n\
         st.global.f32 [%rd5], %f2;\n\
         ret;\n}}\n"
    );
    input(
        &ptx,
        [64, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[64]),
            tensor("y", Role::Output, DType::F32, &[64]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    )
}

fn go(inp: &CtaInput) -> CtaRun<CVal> {
    let x: Vec<f64> = (0..64).map(|i| i as f64 + 1.0).collect();
    run(inp, vec![x, vec![]])
}

const SYNC: &str = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";

#[test]
fn a_one_cta_cluster_barrier_orders_the_exchange() {
    let r = go(&exchange(SYNC, 0));
    no_findings(&r);
    let y = out_f64(&r, 1, 64);
    assert_eq!(y[0], Some(64.0));
    assert_eq!(y[63], Some(1.0));
    // The explicit form of the same barrier, and a launch with an explicit
    // cluster of one CTA.
    let mut inp = exchange(
        "barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;",
        0,
    );
    inp.cluster = Some([1, 1, 1]);
    no_findings(&go(&inp));
}

#[test]
fn without_the_cluster_barrier_or_with_a_relaxed_arrive_the_exchange_races() {
    assert!(kinds(&go(&exchange("", 0))).contains(&FindingKind::Race));
    let relaxed = "barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;";
    assert!(
        kinds(&go(&exchange(relaxed, 0))).contains(&FindingKind::Race),
        "a .relaxed arrive releases nothing"
    );
}

#[test]
fn a_wait_without_an_arrive_and_a_second_arrive_are_reported() {
    let r = go(&exchange("barrier.cluster.wait;", 0));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Deadlock)
        .expect("deadlock");
    assert!(
        f.message.contains("no barrier.cluster.arrive"),
        "{}",
        f.message
    );
    let r = go(&exchange(
        "barrier.cluster.arrive;\nbarrier.cluster.arrive;",
        0,
    ));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Divergence)
        .expect("divergence");
    assert!(f.message.contains("arrives again"), "{}", f.message);
}

#[test]
fn a_phase_some_threads_never_reach_is_a_deadlock_naming_the_waiters() {
    // Warp 0 waits at the cluster barrier; warp 1 waits at bar.sync 1 for
    // 64 threads that never come: neither can complete.
    let sync = "setp.lt.u32 %p1, %r0, 32;\n\
                @%p1 bra CL;\n\
                bar.sync 1, 64;\n\
                CL:\n\
                barrier.cluster.arrive;\nbarrier.cluster.wait;";
    let r = go(&exchange(sync, 0));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Deadlock)
        .unwrap_or_else(|| panic!("no deadlock: {:#?}", r.findings));
    assert!(
        f.message.contains("cluster barrier (phase 0)"),
        "{}",
        f.message
    );
    assert!(
        f.waiting
            .iter()
            .any(|g| g.what.starts_with("cluster barrier") && g.arrived == 32 && g.expected == 64)
    );
}

#[test]
fn exited_threads_do_not_hold_a_phase_back() {
    // Warp 1 exits before the barrier: warp 0 alone completes the phase.
    let sync = "setp.ge.u32 %p1, %r0, 32;\n@%p1 ret;\n".to_owned() + SYNC;
    let r = go(&exchange(&sync, 0));
    assert!(
        !kinds(&r).contains(&FindingKind::Deadlock),
        "{:#?}",
        r.findings
    );
}

#[test]
fn mapa_to_a_rank_outside_the_cluster_is_out_of_bounds() {
    let r = go(&exchange(SYNC, 1));
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::OutOfBounds)
        .expect("out of bounds");
    assert!(
        f.message
            .contains("mapa to CTA rank 1 of a cluster of 1 CTA"),
        "{}",
        f.message
    );
}

#[test]
fn cluster_operations_of_a_multi_cta_cluster_are_unsupported_by_name() {
    let mut inp = exchange(SYNC, 0);
    inp.grid = [2, 1, 1];
    inp.cluster = Some([2, 1, 1]);
    let r = go(&inp);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .expect("unsupported");
    assert!(
        f.message.contains("barrier.cluster.arrive"),
        "{}",
        f.message
    );
    assert!(f.message.contains("clusters of 2 CTAs"), "{}", f.message);
}

/// Writes every cluster special register of thread 0 of CTA `cta` to y.
fn registers(cta: [u32; 3], cluster: Option<[u32; 3]>) -> Vec<Option<f64>> {
    let regs = [
        "%clusterid.x",
        "%clusterid.y",
        "%nclusterid.x",
        "%nclusterid.y",
        "%cluster_ctaid.x",
        "%cluster_ctaid.y",
        "%cluster_nctaid.x",
        "%cluster_nctaid.y",
        "%cluster_ctarank",
        "%cluster_nctarank",
    ];
    let mut body = String::new();
    for (i, r) in regs.iter().enumerate() {
        body += &format!(
            "mov.u32 %r1, {r};\ncvt.rn.f32.u32 %f1, %r1;\nst.global.f32 [%rd2+{}], %f1;\n",
            4 * i
        );
    }
    body += "mov.pred %p1, %is_explicit_cluster;\nselp.f32 %f1, 0f3F800000, 0f00000000, %p1;\n";
    body += &format!("st.global.f32 [%rd2+{}], %f1;\n", 4 * regs.len());
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 py)\n{{\n\
         .reg .b32 %r<8>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
         ld.param.u64 %rd2, [py];\ncvta.to.global.u64 %rd2, %rd2;\n{body}ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [1, 1, 1],
        vec![tensor("y", Role::Output, DType::F32, &[16])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    inp.grid = [4, 6, 1];
    inp.cluster = cluster;
    let r = run_cta(&inp, cta, ptxeq_exec::Concrete::new(vec![vec![]])).0;
    no_findings(&r);
    out_f64(&r, 0, 11)
}

#[test]
fn cluster_registers_follow_the_cluster_shape() {
    let v = |xs: &[f64]| xs.iter().map(|&x| Some(x)).collect::<Vec<_>>();
    // CTA (3, 5) of a 4x6 grid in 2x3 clusters: cluster (1, 1) of 2x2,
    // position (1, 2) in it, rank 1 + 2·2 = 5 of 6.
    assert_eq!(
        registers([3, 5, 0], Some([2, 3, 1])),
        v(&[1.0, 1.0, 2.0, 2.0, 1.0, 2.0, 2.0, 3.0, 5.0, 6.0, 1.0])
    );
    // Without explicit clusters every CTA is a cluster of one.
    assert_eq!(
        registers([3, 5, 0], None),
        v(&[3.0, 5.0, 4.0, 6.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    );
}

#[test]
fn the_grid_sync_workspace_is_unsupported_with_its_reason() {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
               .visible .entry k(.param .u64 py)\n{\n.reg .b32 %r<4>;\n\
               mov.u32 %r1, %envreg1;\nret;\n}\n";
    let inp = input(
        ptx,
        [32, 1, 1],
        vec![],
        vec![ParamValue::Scalar { bits: 0 }],
    );
    let r = run_cta(&inp, [0, 0, 0], ptxeq_exec::Concrete::new(vec![])).0;
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .expect("unsupported");
    assert!(f.message.contains("grid.sync()"), "{}", f.message);
}

#[test]
fn a_cluster_scope_mbarrier_arrival_through_mapa_orders_the_exchange() {
    // CUTLASS's ClusterBarrier::arrive(cta_id) in a one-CTA cluster: the
    // mbarrier's address mapped to rank 0, a .release.cluster arrival on
    // it, a parity wait.
    let sync = |arrive: &str| {
        format!(
            "setp.ne.u32 %p1, %r0, 0;\n\
             mov.u32 %r20, mbar;\n\
             @%p1 bra INITED;\n\
             mbarrier.init.shared::cta.b64 [%r20], 64;\n\
             INITED:\n\
             bar.sync 0;\n\
             st.shared.f32 [%r3], %f1;\n\
             mapa.shared::cluster.u32 %r21, %r20, 0;\n\
             {arrive} _, [%r21];\n\
             WAIT:\n\
             mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p2, [%r20], 0;\n\
             @!%p2 bra WAIT;"
        )
    };
    let decl = ".shared .align 8 .b64 mbar;";
    let r = go(&exchange_with(
        &sync("mbarrier.arrive.release.cluster.shared::cluster.b64"),
        0,
        decl,
    ));
    no_findings(&r);
    assert_eq!(out_f64(&r, 1, 64)[0], Some(64.0));
    let r = go(&exchange_with(
        &sync("mbarrier.arrive.relaxed.cluster.shared::cluster.b64"),
        0,
        decl,
    ));
    assert!(kinds(&r).contains(&FindingKind::Race), "{:#?}", r.findings);
}
