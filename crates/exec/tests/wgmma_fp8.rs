//! fp8 `wgmma.mma_async` on concrete data: C (64x8, f32) = A (64x32,
//! e4m3, row-major, A from registers: the `mma.m16n8k32` 8-bit fragment) ·
//! W^T (W: 8x32, e5m2, staged by 16 threads into the no-swizzle K-major
//! layout: 16 elements per core-matrix row, LBO 128) with
//! `wgmma.mma_async.m64n8k32.f32.e4m3.e5m2`, checked against the product
//! computed here; and an fp8 operand read in the other fp8 format.

mod common;

use common::{input, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CVal, CtaRun, FindingKind, ParamValue};
use ptxeq_spec::DType;

/// The kernel; `w_dtype` is the dtype the spec gives W (the instruction
/// reads it as `.e5m2`).
fn gemm(w_dtype: DType) -> CtaRun<CVal> {
    // Byte offsets: W row r (32 bytes), half j → shared r*16 + j*128; A
    // register a0 of lane (g, q) of warp w: row 16w+g, bytes 4q..4q+3; a1
    // row +8 (+256 bytes), a2 column +16 (+16), a3 both (+272).
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
fence.proxy.async.shared::cta;\n\
STAGED:\n\
bar.sync 0;\n\
shr.u32 %r8, %r0, 5;\n\
and.b32 %r9, %r0, 31;\n\
shr.u32 %r10, %r9, 2;\n\
and.b32 %r11, %r9, 3;\n\
shl.b32 %r12, %r8, 4;\n\
add.s32 %r12, %r12, %r10;\n\
shl.b32 %r13, %r11, 2;\n\
mad.lo.s32 %r14, %r12, 32, %r13;\n\
cvt.u64.u32 %rd4, %r14;\n\
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
wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {%f1, %f2, %f3, %f4}, {%r30, %r31, %r32, %r33}, %rd5, %p1, 1, 1;\n\
wgmma.commit_group.sync.aligned;\n\
wgmma.wait_group.sync.aligned 0;\n\
shl.b32 %r13, %r11, 1;\n\
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
    let inp = input(
        &ptx,
        [128, 1, 1],
        vec![
            tensor("c", Role::Output, DType::F32, &[64, 8]),
            tensor("a", Role::Input, DType::F8e4m3, &[64, 32]),
            tensor("w", Role::Input, w_dtype, &[8, 32]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
            ParamValue::Tensor { tensor: 2 },
        ],
    );
    run(&inp, vec![vec![], a_data(), w_data()])
}

/// Values exact in both fp8 formats (small integers and halves).
fn a_data() -> Vec<f64> {
    (0..64 * 32)
        .map(|i| ((i * 7) % 11) as f64 - 5.0 + if i % 3 == 0 { 0.5 } else { 0.0 })
        .collect()
}

fn w_data() -> Vec<f64> {
    (0..8 * 32).map(|i| ((i * 5) % 9) as f64 - 4.0).collect()
}

#[test]
fn fp8_register_a_descriptor_b_accumulates_exactly() {
    let r = gemm(DType::F8e5m2);
    no_findings(&r);
    let (a, w) = (a_data(), w_data());
    let got = out_f64(&r, 0, 64 * 8);
    for m in 0..64 {
        for n in 0..8 {
            let s: f64 = (0..32).map(|k| a[m * 32 + k] * w[n * 32 + k]).sum();
            assert_eq!(got[m * 8 + n], Some(s + 1.0), "c[{m}][{n}]");
        }
    }
}

#[test]
fn an_e4m3_tensor_read_as_e5m2_is_unsupported_by_name() {
    let r = gemm(DType::F8e4m3);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("no unsupported finding: {:#?}", r.findings));
    assert!(f.message.contains(".e4m3 value"), "{}", f.message);
    assert!(f.message.contains(".e5m2"), "{}", f.message);
}
