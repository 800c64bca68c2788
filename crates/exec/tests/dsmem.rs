//! Multi-CTA clusters run co-scheduled (`engine/unit.rs`): a grid run of
//! whole clusters runs each cluster's CTAs in one engine, with the cluster
//! barrier across them and distributed shared memory through `mapa`.
//!
//! The kernel: a cluster of 2 CTAs of 64 threads; each CTA stores its half
//! of x into its own `part`, runs `SYNC`, then rank 1 reads rank 0's
//! `part` through `mapa` + `ld.shared::cluster` and writes
//! y[t] = part[t] + remote part[t]; `TAIL` ends every thread.

mod common;

use common::{input, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, Finding, FindingKind, GridRun, OutputValue, ParamValue,
};
use ptxeq_exec::{Role, run_grid};
use ptxeq_spec::DType;

const SYNC: &str = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";

fn kernel(sync: &str, tail: &str, rank: u32) -> CtaInput {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 4 .b8 part[256];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\n\
         mov.u32 %r9, %cluster_ctarank;\n\
         shl.b32 %r10, %r9, 6;\n\
         add.s32 %r10, %r10, %r0;\n\
         mul.wide.u32 %rd3, %r10, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\n\
         ld.global.f32 %f1, [%rd4];\n\
         mov.u32 %r1, part;\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r3, %r1, %r2;\n\
         st.shared.f32 [%r3], %f1;\n\
         {sync}\n\
         setp.ne.u32 %p1, %r9, 1;\n\
         @%p1 bra DONE;\n\
         mapa.shared::cluster.u32 %r4, %r1, {rank};\n\
         add.s32 %r6, %r4, %r2;\n\
         ld.shared::cluster.f32 %f2, [%r6];\n\
         ld.shared.f32 %f3, [%r3];\n\
         add.f32 %f4, %f3, %f2;\n\
         mul.wide.u32 %rd6, %r0, 4;\n\
         add.s64 %rd5, %rd2, %rd6;\n\
         st.global.f32 [%rd5], %f4;\n\
         DONE:\n\
         {tail}\n\
         ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [64, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[128]),
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
    let x: Vec<f64> = (0..128).map(|i| i as f64 + 1.0).collect();
    run_grid(inp, &[[0, 0, 0], [1, 0, 0]], Concrete::new(vec![x, vec![]])).0
}

fn findings(g: &GridRun<CVal>) -> Vec<&Finding> {
    g.runs
        .iter()
        .flat_map(|r| &r.findings)
        .chain(&g.cross)
        .collect()
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
fn a_cluster_barrier_orders_a_read_of_another_ctas_shared_memory() {
    let g = go(&kernel(SYNC, SYNC, 0));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    let y = y(&g);
    for (t, v) in y.iter().enumerate() {
        // x[64 + t] (own) + x[t] (rank 0's), x[i] = i + 1.
        assert_eq!(*v, Some((t + 1 + t + 65) as f64), "y[{t}]");
    }
    // One engine ran both CTAs: the run is the rank-0 CTA's, its trace
    // holds both CTAs' threads.
    assert!(g.explored);
    assert_eq!(g.runs[0].trace.threads.len(), 128);
    assert!(g.runs[1].trace.threads.is_empty());
    assert!(
        g.notes.iter().any(|n| n.contains("co-scheduled")),
        "{:?}",
        g.notes
    );
}

#[test]
fn without_the_cluster_barrier_the_remote_read_races_naming_both_ctas() {
    for sync in [
        "",
        "barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;",
    ] {
        let g = go(&kernel(sync, SYNC, 0));
        let f = g
            .cross
            .iter()
            .find(|f| f.kind == FindingKind::Race)
            .unwrap_or_else(|| panic!("{sync:?}: no cross-CTA race: {:#?}", findings(&g)));
        let ctas: Vec<_> = f.accesses.iter().map(|a| a.cta).collect();
        assert!(ctas.contains(&Some([0, 0, 0])), "{}", f.message);
        assert!(ctas.contains(&Some([1, 0, 0])), "{}", f.message);
        assert!(f.message.contains("part"), "{}", f.message);
    }
}

#[test]
fn reading_the_shared_memory_of_an_exited_cta_is_reported() {
    // No barrier at all: rank 0 stores and exits before rank 1 runs.
    let g = go(&kernel("", "", 0));
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::OutOfBounds)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("exited"), "{}", f.message);
}

#[test]
fn mapa_to_the_own_rank_reads_the_own_shared_memory() {
    // Rank 1 maps to itself: y[t] = 2 x[64 + t].
    let g = go(&kernel(SYNC, SYNC, 1));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    assert_eq!(y(&g)[3], Some(2.0 * 68.0));
}

#[test]
fn a_plain_shared_access_through_another_ctas_address_is_out_of_bounds() {
    let mut inp = kernel(SYNC, SYNC, 0);
    // ld.shared (::cta) with the .shared::cluster address of rank 0.
    let k = std::sync::Arc::make_mut(&mut inp.kernel);
    let at = k
        .instrs
        .iter()
        .position(|i| i.instr.mnemonic().starts_with("ld.shared::cluster"))
        .expect("the remote load");
    if let ptxeq_ir::Instr::Ld(m) = &mut k.instrs[at].instr {
        m.space = ptxeq_ir::StateSpace::Shared;
    }
    let g = go(&inp);
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::OutOfBounds)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains(".shared::cta access"), "{}", f.message);
}

#[test]
fn a_cluster_barrier_waiting_on_a_ctas_bar_sync_is_a_deadlock() {
    // Rank 1's first warp waits at bar.sync 0 for its second warp, which
    // waits at the cluster barrier for the first warp: no CTA can go on.
    let sync = "setp.eq.u32 %p2, %r9, 1;\nsetp.lt.u32 %p3, %r0, 32;\nand.pred %p3, %p2, %p3;\n\
                @%p3 bar.sync 0;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;";
    let g = go(&kernel(sync, "", 0));
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::Deadlock)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("cluster barrier"), "{}", f.message);
}

#[test]
fn a_remote_read_not_ordered_before_the_targets_exit_is_reported() {
    // No cluster barrier after rank 1's read of rank 0's part: rank 0 may
    // exit (and its shared memory cease to exist) before the read.
    let g = go(&kernel(SYNC, "", 0));
    let f = findings(&g)
        .into_iter()
        .find(|f| f.kind == FindingKind::OutOfBounds)
        .unwrap_or_else(|| panic!("{:#?}", findings(&g)));
    assert!(f.message.contains("nothing orders"), "{}", f.message);
    assert_eq!(f.accesses.len(), 1);
    assert_eq!(f.accesses[0].cta, Some([1, 0, 0]));
    // With the final barrier every read is ordered before rank 0's exits.
    let g = go(&kernel(SYNC, SYNC, 0));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
}
