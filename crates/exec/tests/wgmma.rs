//! `wgmma.mma_async` on concrete data: the register-A fragment, the
//! no-swizzle descriptor layout of B, the accumulator fragment, scale-d and
//! imm-scale-a, checked against the product computed here; and the
//! warpgroup / asynchrony / proxy findings.

mod common;

use common::{input, kinds, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CVal, CtaRun, FindingKind, ParamValue};
use ptxeq_spec::DType;

/// C (64x8, f32) = A (64x16, f16, row-major, A from registers) ·
/// W^T (W: 8x16, f16, staged by 16 threads into the no-swizzle K-major
/// layout: LBO 128, SBO 256) with `wgmma.mma_async.m64n8k16`. `edit`
/// rewrites the PTX (bug injection).
fn gemm(threads: u32, edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let body = "\
mov.u32 %r0, %tid.x;\n\
setp.ge.u32 %p0, %r0, 16;\n\
@%p0 bra STAGED;\n\
shr.u32 %r1, %r0, 1;\n\
and.b32 %r2, %r0, 1;\n\
shl.b32 %r3, %r1, 5;\n\
shl.b32 %r4, %r2, 4;\n\
add.s32 %r3, %r3, %r4;\n\
cvt.u64.u32 %rd3, %r3;\n\
add.s64 %rd3, %rd2, %rd3;\n\
ld.global.v4.b32 {%r20, %r21, %r22, %r23}, [%rd3];\n\
shl.b32 %r5, %r1, 4;\n\
shl.b32 %r6, %r2, 7;\n\
add.s32 %r5, %r5, %r6;\n\
mov.u32 %r7, Ws;\n\
add.s32 %r5, %r5, %r7;\n\
st.shared.v4.b32 [%r5], {%r20, %r21, %r22, %r23};\n\
FENCE: fence.proxy.async.shared::cta;\n\
STAGED:\n\
bar.sync 0;\n\
shr.u32 %r8, %r0, 5;\n\
and.b32 %r9, %r0, 31;\n\
shr.u32 %r10, %r9, 2;\n\
and.b32 %r11, %r9, 3;\n\
shl.b32 %r12, %r8, 4;\n\
add.s32 %r12, %r12, %r10;\n\
shl.b32 %r13, %r11, 1;\n\
mad.lo.s32 %r14, %r12, 16, %r13;\n\
mul.wide.u32 %rd4, %r14, 2;\n\
add.s64 %rd4, %rd1, %rd4;\n\
ld.global.b32 %r30, [%rd4];\n\
ld.global.b32 %r31, [%rd4+256];\n\
ld.global.b32 %r32, [%rd4+16];\n\
ld.global.b32 %r33, [%rd4+272];\n\
mov.u32 %r15, Ws;\n\
and.b32 %r15, %r15, 262143;\n\
shr.u32 %r15, %r15, 4;\n\
cvt.u64.u32 %rd5, %r15;\n\
or.b64 %rd5, %rd5, 68720001024;\n\
mov.f32 %f1, 0f3F800000;\n\
mov.f32 %f2, 0f3F800000;\n\
mov.f32 %f3, 0f3F800000;\n\
mov.f32 %f4, 0f3F800000;\n\
setp.eq.u32 %p1, %r0, %r0;\n\
wgmma.fence.sync.aligned;\n\
MMA: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, {%r30, %r31, %r32, %r33}, %rd5, %p1, SCALEA, 1, 0;\n\
wgmma.commit_group.sync.aligned;\n\
WAIT: wgmma.wait_group.sync.aligned 0;\n\
mad.lo.s32 %r16, %r12, 8, %r13;\n\
mul.wide.u32 %rd6, %r16, 4;\n\
add.s64 %rd6, %rd0, %rd6;\n\
st.global.f32 [%rd6], %f1;\n\
st.global.f32 [%rd6+4], %f2;\n\
st.global.f32 [%rd6+256], %f3;\n\
st.global.f32 [%rd6+260], %f4;\n\
ret;\n";
    let ptx = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\
         .visible .entry k(.param .u64 pc, .param .u64 pa, .param .u64 pw)\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 1024 .b8 Ws[256];\n\
         ld.param.u64 %rd0, [pc];\nld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pw];\n\
         cvta.to.global.u64 %rd0, %rd0;\ncvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         {body}}}\n"
    );
    let ptx = edit(ptx.replace("SCALEA", "1"));
    let inp = input(
        &ptx,
        [threads, 1, 1],
        vec![
            tensor("c", Role::Output, DType::F32, &[64, 8]),
            tensor("a", Role::Input, DType::F16, &[64, 16]),
            tensor("w", Role::Input, DType::F16, &[8, 16]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
            ParamValue::Tensor { tensor: 2 },
        ],
    );
    run(&inp, vec![vec![], a_data(), w_data()])
}

fn a_data() -> Vec<f64> {
    (0..64 * 16).map(|i| ((i * 7) % 11) as f64 - 5.0).collect()
}

fn w_data() -> Vec<f64> {
    (0..8 * 16).map(|i| ((i * 5) % 9) as f64 - 4.0).collect()
}

/// `sign · A W^T + 1`.
fn expected(sign: f64) -> Vec<f64> {
    let (a, w) = (a_data(), w_data());
    let mut c = vec![0.0; 64 * 8];
    for m in 0..64 {
        for n in 0..8 {
            let s: f64 = (0..16).map(|k| a[m * 16 + k] * w[n * 16 + k]).sum();
            c[m * 8 + n] = sign * s + 1.0;
        }
    }
    c
}

fn check(r: &CtaRun<CVal>, sign: f64) {
    no_findings(r);
    let got = out_f64(r, 0, 64 * 8);
    for (i, (g, e)) in got.iter().zip(expected(sign)).enumerate() {
        assert_eq!(*g, Some(e), "c[{}][{}]", i / 8, i % 8);
    }
}

fn first(r: &CtaRun<CVal>, k: FindingKind) -> &ptxeq_exec::Finding {
    r.findings
        .iter()
        .find(|f| f.kind == k)
        .unwrap_or_else(|| panic!("no {k:?} finding: {:#?}", r.findings))
}

#[test]
fn register_a_descriptor_b_accumulates_exactly() {
    check(&gemm(128, &|s| s), 1.0);
}

#[test]
fn imm_scale_a_minus_one_negates_the_product() {
    let r = gemm(128, &|s| {
        s.replace(
            "{%r30, %r31, %r32, %r33}, %rd5, %p1, 1, 1, 0;",
            "{%r30, %r31, %r32, %r33}, %rd5, %p1, -1, 1, 0;",
        )
    });
    check(&r, -1.0);
}

#[test]
fn scale_d_false_ignores_the_accumulators() {
    let r = gemm(128, &|s| {
        s.replace("setp.eq.u32 %p1, %r0, %r0;", "setp.ne.u32 %p1, %r0, %r0;")
    });
    no_findings(&r);
    let got = out_f64(&r, 0, 64 * 8);
    for (g, e) in got.iter().zip(expected(1.0)) {
        assert_eq!(*g, Some(e - 1.0));
    }
}

#[test]
fn a_partial_warpgroup_is_a_divergence() {
    let r = gemm(64, &|s| s);
    assert!(
        kinds(&r).contains(&FindingKind::Divergence),
        "{:#?}",
        r.findings
    );
}

#[test]
fn unswizzled_transposed_b_is_unsupported_by_name() {
    // Swizzled MN-major operands are modelled (corpus `hopper/fa3-fwd-*`);
    // this tile's descriptors have no swizzle.
    let r = gemm(128, &|s| s.replace("%p1, 1, 1, 0;", "%p1, 1, 1, 1;"));
    let f = first(&r, FindingKind::Unsupported);
    assert!(f.message.contains("imm-trans"), "{}", f.message);
    assert!(f.message.contains("unswizzled MN-major"), "{}", f.message);
}

#[test]
fn a_store_without_the_proxy_fence_races_with_the_wgmma_read() {
    let r = gemm(128, &|s| {
        s.replace("FENCE: fence.proxy.async.shared::cta;", "FENCE:")
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("across proxies"), "{}", f.message);
    assert_eq!(f.accesses.len(), 2);
}

#[test]
fn reading_the_accumulators_before_the_wait_is_reported() {
    let r = gemm(128, &|s| {
        s.replace("WAIT: wgmma.wait_group.sync.aligned 0;", "WAIT:")
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("register race"), "{}", f.message);
}

#[test]
fn a_wait_group_that_keeps_the_group_pending_is_reported() {
    let r = gemm(128, &|s| {
        s.replace(
            "wgmma.wait_group.sync.aligned 0;",
            "wgmma.wait_group.sync.aligned 1;",
        )
    });
    assert!(kinds(&r).contains(&FindingKind::Race), "{:#?}", r.findings);
}

#[test]
fn overwriting_b_before_the_wait_races() {
    let r = gemm(128, &|s| {
        s.replace(
            "wgmma.commit_group.sync.aligned;\n",
            "wgmma.commit_group.sync.aligned;\nst.shared.u32 [Ws+4], 0;\n",
        )
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("wgmma.wait_group"), "{}", f.message);
}

#[test]
fn accumulators_written_after_the_wgmma_fence_are_reported() {
    // The accumulators are initialised after wgmma.fence instead of before.
    let r = gemm(128, &|s| {
        s.replace("wgmma.fence.sync.aligned;\n", "").replace(
            "mov.f32 %f1, 0f3F800000;\n",
            "wgmma.fence.sync.aligned;\nmov.f32 %f1, 0f3F800000;\n",
        )
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("no wgmma.fence"), "{}", f.message);
    assert_eq!(f.accesses.len(), 2);
}

/// `setmaxnreg` in warps `< 4 - skip` of a 128-thread CTA (all when
/// `skip` is 0), then every thread stores 1.
fn setmaxnreg(skip: u32) -> CtaRun<CVal> {
    let ptx = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\
         .visible .entry k(.param .u64 pc)\n{{\n\
         .reg .b32 %r<8>;\n.reg .f32 %f<2>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
         ld.param.u64 %rd0, [pc];\ncvta.to.global.u64 %rd0, %rd0;\n\
         mov.u32 %r0, %tid.x;\n\
         setp.ge.u32 %p0, %r0, {};\n\
         @%p0 bra SKIP;\n\
         setmaxnreg.inc.sync.aligned.u32 240;\n\
         SKIP:\n\
         mul.wide.u32 %rd1, %r0, 4;\nadd.s64 %rd1, %rd0, %rd1;\n\
         mov.f32 %f1, 0f3F800000;\nst.global.f32 [%rd1], %f1;\nret;\n}}\n",
        128 - 32 * skip
    );
    let inp = input(
        &ptx,
        [128, 1, 1],
        vec![tensor("c", Role::Output, DType::F32, &[128])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    run(&inp, vec![vec![]])
}

#[test]
fn setmaxnreg_by_the_whole_warpgroup_has_no_effect() {
    let r = setmaxnreg(0);
    no_findings(&r);
    assert!(out_f64(&r, 0, 128).iter().all(|v| *v == Some(1.0)));
}

#[test]
fn setmaxnreg_by_part_of_a_warpgroup_is_a_divergence() {
    let r = setmaxnreg(1);
    assert!(
        kinds(&r).contains(&FindingKind::Divergence),
        "{:#?}",
        r.findings
    );
}

#[test]
fn f16_accumulators_pack_two_elements_per_register() {
    let r = gemm(128, &|s| {
        let out = s.replace(".reg .pred %p<4>;", ".reg .pred %p<4>;\n.reg .b16 %h<8>;")
            .replace(
                "mov.f32 %f1, 0f3F800000;\nmov.f32 %f2, 0f3F800000;\nmov.f32 %f3, 0f3F800000;\nmov.f32 %f4, 0f3F800000;\n",
                "mov.b32 %r34, 1006648320;\nmov.b32 %r35, 1006648320;\n",
            )
            .replace(
                "m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}",
                "m64n8k16.f16.f16.f16 {%r34, %r35}",
            )
            .replace(
                "WAIT: wgmma.wait_group.sync.aligned 0;\n",
                "WAIT: wgmma.wait_group.sync.aligned 0;\n\
                 mov.b32 {%h1, %h2}, %r34;\nmov.b32 {%h3, %h4}, %r35;\n\
                 cvt.f32.f16 %f1, %h1;\ncvt.f32.f16 %f2, %h2;\n\
                 cvt.f32.f16 %f3, %h3;\ncvt.f32.f16 %f4, %h4;\n",
            );
        assert!(
            out.contains("mov.b32 %r34, 1006648320;")
                && out.contains(".f16.f16.f16 {%r34, %r35}")
                && out.contains("cvt.f32.f16 %f4"),
            "edit did not apply"
        );
        out
    });
    // 0x3C003C00: two f16 ones.
    check(&r, 1.0);
}
