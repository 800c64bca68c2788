//! Arrivals on another CTA's mbarrier (`engine/mbarrier/remote.rs`): a
//! cluster of 2 CTAs of 32 threads co-scheduled as one unit.
//!
//! The kernel: every CTA's thread 0 initialises `bar` (count `COUNT`),
//! then `INIT_SYNC`; rank 0 (the producer) stores x[t] into rank 1's
//! `part` through `mapa` + `st.shared::cluster` and arrives on rank 1's
//! `bar` with `ARRIVE`; rank 1 (the consumer) polls its own `bar` with
//! `WAIT` (parity 0), then writes y[t] = 2 part[t].

mod common;

use common::{input, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, Finding, FindingKind, GridRun, OutputValue, ParamValue,
};
use ptxeq_exec::{Role, run_grid};
use ptxeq_spec::DType;

const SYNC: &str = "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;";
const ARRIVE: &str = "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];";
const WAIT: &str = "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64";

struct K<'a> {
    count: u32,
    init_sync: &'a str,
    arrive: &'a str,
    wait: &'a str,
}

const OK: K<'static> = K {
    count: 32,
    init_sync: SYNC,
    arrive: ARRIVE,
    wait: WAIT,
};

fn kernel(k: &K<'_>) -> CtaInput {
    let K {
        count,
        init_sync,
        arrive,
        wait,
    } = k;
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n.explicitcluster\n.reqnctapercluster 2, 1, 1\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n\
         .shared .align 4 .b8 part[128];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\n\
         mov.u32 %r9, %cluster_ctarank;\n\
         mov.u32 %r1, part;\n\
         mov.u32 %r5, bar;\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r3, %r1, %r2;\n\
         setp.ne.u32 %p1, %r0, 0;\n\
         @%p1 bra INITED;\n\
         mbarrier.init.shared::cta.b64 [%r5], {count};\n\
         INITED:\n\
         {init_sync}\n\
         setp.ne.u32 %p1, %r9, 0;\n\
         @%p1 bra CONSUMER;\n\
         mul.wide.u32 %rd3, %r0, 4;\n\
         add.s64 %rd4, %rd1, %rd3;\n\
         ld.global.f32 %f1, [%rd4];\n\
         mapa.shared::cluster.u32 %r4, %r3, 1;\n\
         st.shared::cluster.f32 [%r4], %f1;\n\
         mapa.shared::cluster.u32 %r7, %r5, 1;\n\
         {arrive}\n\
         bra DONE;\n\
         CONSUMER:\n\
         mov.u32 %r8, 0;\n\
         WAIT:\n\
         {wait} %p2, [%r5], %r8;\n\
         @!%p2 bra WAIT;\n\
         ld.shared.f32 %f2, [%r3];\n\
         add.f32 %f3, %f2, %f2;\n\
         mul.wide.u32 %rd6, %r0, 4;\n\
         add.s64 %rd5, %rd2, %rd6;\n\
         st.global.f32 [%rd5], %f3;\n\
         DONE:\n\
         ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[32]),
            tensor("y", Role::Output, DType::F32, &[32]),
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
    let x: Vec<f64> = (0..32).map(|i| i as f64 + 1.0).collect();
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
    let mut v = vec![None; 32];
    let out = g.outputs.iter().find(|o| o.tensor == 1).expect("y");
    for (i, e) in &out.elements {
        if let OutputValue::Data(x) = e {
            v[*i as usize] = Some(x.get());
        }
    }
    v
}

#[test]
fn a_remote_release_cluster_arrive_orders_the_producers_stores_before_the_consumer() {
    let g = go(&kernel(&OK));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    for (t, v) in y(&g).iter().enumerate() {
        assert_eq!(*v, Some(2.0 * (t + 1) as f64), "y[{t}]");
    }
}

#[test]
fn a_cta_scoped_wait_does_not_acquire_another_ctas_arrivals() {
    // The default scope of try_wait is .cta: the producer's threads are
    // outside it, so its stores are unordered with the consumer's loads.
    for wait in [
        "mbarrier.try_wait.parity.shared::cta.b64",
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
    ] {
        let g = go(&kernel(&K { wait, ..OK }));
        let f = first(&g, FindingKind::Race);
        assert!(f.message.contains("part"), "{wait}: {}", f.message);
        let ctas: Vec<_> = f.accesses.iter().map(|a| a.cta).collect();
        assert!(ctas.contains(&Some([0, 0, 0])), "{}", f.message);
        assert!(ctas.contains(&Some([1, 0, 0])), "{}", f.message);
    }
}

#[test]
fn a_relaxed_or_cta_scoped_remote_arrive_releases_nothing_to_the_other_cta() {
    for arrive in [
        "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%r7];",
        "mbarrier.arrive.release.cta.shared::cluster.b64 _, [%r7];",
        "mbarrier.arrive.shared::cluster.b64 _, [%r7];",
    ] {
        let g = go(&kernel(&K { arrive, ..OK }));
        let f = first(&g, FindingKind::Race);
        assert!(f.message.contains("part"), "{arrive}: {}", f.message);
    }
}

#[test]
fn a_remote_arrive_before_the_init_is_ordered_is_reported() {
    // No cluster barrier: the producer runs first and finds no object.
    let g = go(&kernel(&K {
        init_sync: "",
        ..OK
    }));
    let f = first(&g, FindingKind::Uninitialised);
    assert_eq!(f.reason, "mbarrier used before init", "{}", f.message);
    assert!(f.message.contains("CTA rank 1"), "{}", f.message);
    // A relaxed cluster barrier: the init happened first in this
    // schedule, but nothing orders it before the arrive (no release).
    let g = go(&kernel(&K {
        init_sync: "barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;",
        ..OK
    }));
    let f = first(&g, FindingKind::Race);
    assert_eq!(
        f.reason, "mbarrier init not ordered before use",
        "{}",
        f.message
    );
    assert_eq!(f.accesses.len(), 2, "{f:#?}");
}

#[test]
fn remote_arrivals_beyond_the_phase_count_are_an_over_arrival() {
    // 32 arrivals on a barrier of count 16: the last 16 join phase 1
    // only because phase 0 completed first, which nothing orders.
    let g = go(&kernel(&K { count: 16, ..OK }));
    let f = first(&g, FindingKind::Divergence);
    assert_eq!(f.reason, "mbarrier over-arrival", "{}", f.message);
}

#[test]
fn too_few_remote_arrivals_leave_the_consumer_deadlocked() {
    let g = go(&kernel(&K { count: 33, ..OK }));
    let f = first(&g, FindingKind::Deadlock);
    assert!(f.message.contains("bar"), "{}", f.message);
    // The phase's last event is a producer thread's, named with its CTA.
    let w = f
        .waiting
        .iter()
        .map(|w| w.what.clone())
        .collect::<Vec<_>>()
        .join("; ");
    assert!(
        w.contains("of CTA (0,0,0)") || f.message.contains("of CTA (0,0,0)"),
        "{f:#?}"
    );
}

#[test]
fn a_remote_arrive_with_a_count_completes_the_phase() {
    // Lane 0 arrives with count 32 for the warp (after a __syncwarp that
    // orders the other lanes' stores before its release).
    let arrive = "bar.warp.sync -1;\nsetp.eq.u32 %p3, %r0, 0;\n\
                  @%p3 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7], 32;";
    let g = go(&kernel(&K { arrive, ..OK }));
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    assert_eq!(y(&g)[5], Some(12.0));
}

#[test]
fn waiting_on_another_ctas_mbarrier_is_unsupported_by_name() {
    // The consumer polls rank 0's barrier through a mapped address (the
    // ISA's try_wait takes only the CTA's own mbarrier); the trailing
    // comment drops the template's operands.
    let wait = "mapa.shared::cluster.u32 %r11, %r5, 0;\n\
                mbarrier.try_wait.parity.acquire.cluster.shared::cluster.b64 %p2, [%r11], %r8; //";
    let g = go(&kernel(&K { wait, ..OK }));
    let f = first(&g, FindingKind::Unsupported);
    assert!(
        f.message.contains("another CTA's mbarrier") || f.reason.contains("another CTA's mbarrier"),
        "{f:#?}"
    );
}

#[test]
fn a_remote_store_onto_another_ctas_mbarrier_object_is_unsupported() {
    // The producer's st.shared::cluster overwrites rank 1's live mbarrier.
    let arrive = "st.shared::cluster.f32 [%r7], %f1;\n\
                  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];";
    let g = go(&kernel(&K { arrive, ..OK }));
    let f = first(&g, FindingKind::Unsupported);
    assert_eq!(f.reason, "ordinary access to an mbarrier object", "{f:#?}");
}
