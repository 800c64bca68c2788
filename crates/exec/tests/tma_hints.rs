//! Cache hints and prefetches of the bulk / TMA family (`engine/tma.rs`):
//! `createpolicy` gives an opaque policy, `.L2::cache_hint` operands on
//! loads, stores, bulk copies and TMA are accepted with no effect on values,
//! `cp.async.bulk.prefetch{.tensor}` has no memory effect but its operands
//! are checked.
//!
//! The kernel: one CTA of 32 threads; thread 0 initialises `bar`, creates a
//! policy, prefetches, arms `bar` with 128 transaction bytes and loads the
//! box x[0..32] (a 1D tensor map over x) into `buf` with a cache hint; every
//! thread waits on phase 0 and writes y[t] = buf[t] + x[t] (the latter read
//! with `ld.global.L2::cache_hint`), stored with `st.global.L2::cache_hint`.

mod common;

use common::{input, kinds, no_findings, out_f64, tensor};
use ptxeq_exec::{
    CVal, Concrete, CtaInput, CtaRun, FindingKind, OobFill, ParamValue, Role, Swizzle,
    TensorMapBinding, TensorMapGeometry, TensorMapHolder, run_cta,
};
use ptxeq_spec::DType;

const POLICY: &str =
    "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd9, 0f3F800000;";
const PREFETCH: &str = "cp.async.bulk.prefetch.tensor.1d.L2.global.tile.L2::cache_hint [%rd1, {%r20}], %rd9;\n\
                        cp.async.bulk.prefetch.L2.global [%rd5], 128;";
const LOAD: &str = "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%r3], [%rd1, {%r20}], [%r5], %rd9;";
const LD: &str = "ld.global.L2::cache_hint.f32 %f2, [%rd4], %rd9;";
const ST: &str = "st.global.L2::cache_hint.f32 [%rd6], %f3, %rd9;";

fn kernel(
    policy: &str,
    prefetch: &str,
    load: &str,
    ld: &str,
    st: &str,
    bind_map: bool,
) -> CtaInput {
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .align 64 .b8 tm[128], .param .u64 px, .param .u64 py)\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n\
         .shared .align 128 .b8 buf[128];\n\
         mov.b64 %rd1, tm;\ncvta.param.u64 %rd1, %rd1;\n\
         ld.param.u64 %rd2, [px];\nld.param.u64 %rd3, [py];\n\
         cvta.to.global.u64 %rd2, %rd2;\ncvta.to.global.u64 %rd3, %rd3;\n\
         mov.u32 %r0, %tid.x;\n\
         mov.u32 %r3, buf;\n\
         mov.u32 %r5, bar;\n\
         mov.u32 %r20, 0;\n\
         mov.u64 %rd5, %rd2;\n\
         mov.u64 %rd9, 0;\n\
         setp.ne.u32 %p1, %r0, 0;\n\
         @%p1 bra INITED;\n\
         mbarrier.init.shared::cta.b64 [%r5], 1;\n\
         INITED:\n\
         bar.sync 0;\n\
         @%p1 bra ISSUED;\n\
         {policy}\n\
         {prefetch}\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r5], 128;\n\
         {load}\n\
         ISSUED:\n\
         mov.u32 %r8, 0;\n\
         WAIT:\n\
         mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r5], %r8;\n\
         @!%p2 bra WAIT;\n\
         shl.b32 %r2, %r0, 2;\n\
         add.s32 %r4, %r3, %r2;\n\
         ld.shared.f32 %f1, [%r4];\n\
         mul.wide.u32 %rd7, %r0, 4;\n\
         add.s64 %rd4, %rd2, %rd7;\n\
         @%p1 ld.global.f32 %f2, [%rd4];\n\
         @!%p1 {ld}\n\
         add.f32 %f3, %f1, %f2;\n\
         add.s64 %rd6, %rd3, %rd7;\n\
         @%p1 st.global.f32 [%rd6], %f3;\n\
         @!%p1 {st}\n\
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
            if bind_map {
                ParamValue::TensorMap { map: 0 }
            } else {
                ParamValue::Unused
            },
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    if bind_map {
        inp.bindings.tensor_maps.push(TensorMapBinding {
            name: "tm".into(),
            tensor: 0,
            holder: TensorMapHolder::Param { index: 0 },
            geometry: TensorMapGeometry {
                dims: vec![32],
                strides: vec![],
                box_dims: vec![32],
                element_strides: vec![1],
                swizzle: Swizzle::None,
                oob_fill: OobFill::Zero,
            },
        });
    }
    inp
}

fn go(inp: &CtaInput) -> CtaRun<CVal> {
    let x: Vec<f64> = (0..32).map(|i| i as f64 + 1.0).collect();
    run_cta(inp, [0, 0, 0], Concrete::new(vec![x, vec![]])).0
}

#[test]
fn cache_hints_and_prefetches_leave_the_values_alone() {
    let r = go(&kernel(POLICY, PREFETCH, LOAD, LD, ST, true));
    no_findings(&r);
    let y = out_f64(&r, 1, 32);
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, Some(2.0 * (i as f64 + 1.0)), "y[{i}]");
    }
}

#[test]
fn every_createpolicy_form_decodes_and_runs() {
    for p in [
        "createpolicy.fractional.L2::evict_first.b64 %rd9;",
        "createpolicy.range.global.L2::evict_last.L2::evict_first.b64 %rd9, [%rd2], 64, 128;",
        "mov.u64 %rd10, 7;\ncreatepolicy.cvt.L2.b64 %rd9, %rd10;",
    ] {
        let r = go(&kernel(p, PREFETCH, LOAD, LD, ST, true));
        no_findings(&r);
    }
}

#[test]
fn a_tensor_prefetch_needs_a_declared_tensor_map() {
    let r = go(&kernel(POLICY, PREFETCH, "", LD, ST, false));
    assert!(
        kinds(&r).contains(&FindingKind::Unsupported),
        "{:#?}",
        r.findings
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.message.contains("no [tensor_maps] entry")),
        "{:#?}",
        r.findings
    );
}

#[test]
fn a_misaligned_bulk_prefetch_is_reported() {
    let pf = "add.s64 %rd5, %rd2, 4;\ncp.async.bulk.prefetch.L2.global [%rd5], 64;";
    let r = go(&kernel(POLICY, pf, LOAD, LD, ST, true));
    assert!(
        r.findings
            .iter()
            .any(|f| f.message.contains("not 16-byte aligned")),
        "{:#?}",
        r.findings
    );
}

#[test]
fn the_policy_is_opaque() {
    // Using the policy as an address is not a cache hint.
    let ld = "ld.global.f32 %f2, [%rd9];";
    let r = go(&kernel(POLICY, PREFETCH, LOAD, ld, ST, true));
    assert!(
        kinds(&r).contains(&FindingKind::Unsupported),
        "{:#?}",
        r.findings
    );
}

#[test]
fn an_uninitialised_policy_operand_is_reported() {
    let p = "createpolicy.cvt.L2.b64 %rd9, %rd11;";
    let r = go(&kernel(p, PREFETCH, LOAD, LD, ST, true));
    assert!(
        kinds(&r).contains(&FindingKind::Uninitialised),
        "{:#?}",
        r.findings
    );
}
