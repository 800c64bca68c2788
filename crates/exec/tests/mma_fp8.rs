//! fp8 `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32` on concrete
//! data: every lane loads its A and B fragment registers straight from
//! global memory (A 16x32 row-major, B given as W = B^T, 8x32, so both
//! are K-contiguous bytes), D is stored by fragment position and checked
//! against the product computed here.

mod common;

use common::{input, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{FindingKind, ParamValue};
use ptxeq_spec::DType;

/// Runs the kernel with A and W of dtype `dt` and the instruction's
/// element type `ty` (`e4m3` or `e5m2`).
fn mma(dt: DType, ty: &str) -> ptxeq_exec::CtaRun<ptxeq_exec::CVal> {
    // Lane (g, q): a0 = A[g][4q..4q+3] (byte g*32 + 4q), a1 row g+8
    // (+256), a2 columns +16 (+16), a3 both (+272); b0 = W[g][4q..4q+3]
    // (byte g*32 + 4q), b1 +16. c0,c1 = row g, columns 2q, 2q+1; c2,c3 row
    // g+8.
    let body = format!(
        "\
mov.u32 %r0, %tid.x;\n\
shr.u32 %r1, %r0, 2;\n\
and.b32 %r2, %r0, 3;\n\
shl.b32 %r3, %r1, 5;\n\
shl.b32 %r4, %r2, 2;\n\
add.s32 %r3, %r3, %r4;\n\
cvt.u64.u32 %rd5, %r3;\n\
add.s64 %rd6, %rd1, %rd5;\n\
add.s64 %rd7, %rd2, %rd5;\n\
ld.global.b32 %r10, [%rd6];\n\
ld.global.b32 %r11, [%rd6+256];\n\
ld.global.b32 %r12, [%rd6+16];\n\
ld.global.b32 %r13, [%rd6+272];\n\
ld.global.b32 %r14, [%rd7];\n\
ld.global.b32 %r15, [%rd7+16];\n\
mov.f32 %f0, 0f00000000;\n\
mma.sync.aligned.m16n8k32.row.col.f32.{ty}.{ty}.f32 {{%f1, %f2, %f3, %f4}}, {{%r10, %r11, %r12, %r13}}, {{%r14, %r15}}, {{%f0, %f0, %f0, %f0}};\n\
shl.b32 %r5, %r1, 3;\n\
shl.b32 %r6, %r2, 1;\n\
add.s32 %r5, %r5, %r6;\n\
mul.wide.u32 %rd8, %r5, 4;\n\
add.s64 %rd8, %rd0, %rd8;\n\
st.global.f32 [%rd8], %f1;\n\
st.global.f32 [%rd8+4], %f2;\n\
st.global.f32 [%rd8+256], %f3;\n\
st.global.f32 [%rd8+260], %f4;\n\
ret;\n"
    );
    let ptx = format!(
        ".version 8.7\n.target sm_89\n.address_size 64\n\
         .visible .entry k(.param .u64 pd, .param .u64 pa, .param .u64 pw)\n{{\n\
         .reg .b32 %r<20>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<12>;\n\
         ld.param.u64 %rd0, [pd];\nld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pw];\n\
         cvta.to.global.u64 %rd0, %rd0;\ncvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         {body}}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("d", Role::Output, DType::F32, &[16, 8]),
            tensor("a", Role::Input, dt, &[16, 32]),
            tensor("w", Role::Input, dt, &[8, 32]),
        ],
        (0..3).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    run(&inp, vec![vec![], a_data(), w_data()])
}

fn a_data() -> Vec<f64> {
    (0..16 * 32)
        .map(|i| ((i * 7) % 13) as f64 / 2.0 - 3.0)
        .collect()
}

fn w_data() -> Vec<f64> {
    (0..8 * 32).map(|i| ((i * 5) % 9) as f64 - 4.0).collect()
}

#[test]
fn fp8_mma_matches_the_product() {
    for (dt, ty) in [(DType::F8e4m3, "e4m3"), (DType::F8e5m2, "e5m2")] {
        let r = mma(dt, ty);
        no_findings(&r);
        let (a, w) = (a_data(), w_data());
        let got = out_f64(&r, 0, 16 * 8);
        for m in 0..16 {
            for n in 0..8 {
                let s: f64 = (0..32).map(|k| a[m * 32 + k] * w[n * 32 + k]).sum();
                assert_eq!(got[m * 8 + n], Some(s), "{ty}: d[{m}][{n}]");
            }
        }
    }
}

#[test]
fn fp8_mma_on_the_other_format_is_unsupported_by_name() {
    let r = mma(DType::F8e4m3, "e5m2");
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("no unsupported finding: {:#?}", r.findings));
    assert!(f.message.contains(".e4m3 value"), "{}", f.message);
}
