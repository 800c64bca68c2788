//! Float instructions through the concrete domain: every result is the
//! real-number value of the operation (computed in f64), hand-derived.

mod common;
use common::{input, no_findings, out_f64, run, tensor};
use ptxeq_exec::ParamValue;
use ptxeq_exec::Role;
use ptxeq_spec::DType;

/// Runs `body` with `x` (f32[8], values 1..8 → x[i] = i + 1) loaded into
/// %f1..%f8 and an output `y` (f32[n]) at %rd2.
fn float_kernel(body: &str, n: u64) -> Vec<Option<f64>> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 x, .param .u64 y)\n{{\n\
         .reg .b16 %h<16>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<40>;\n.reg .f64 %fd<8>;\n.reg .pred %p<8>;\n\
         ld.param.u64 %rd1, [x];\n ld.param.u64 %rd2, [y];\n\
         ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd1];\n ld.global.v4.f32 {{%f5, %f6, %f7, %f8}}, [%rd1+16];\n\
         {body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [1, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[8]),
            tensor("y", Role::Output, DType::F32, &[n]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let r = run(&inp, vec![(1..=8).map(f64::from).collect()]);
    no_findings(&r);
    out_f64(&r, 1, n as usize)
}

#[test]
fn arithmetic_is_real_arithmetic() {
    let y = float_kernel(
        "add.f32 %f10, %f1, %f2;\n st.global.f32 [%rd2], %f10;\n\
         sub.rn.ftz.f32 %f11, %f1, %f3;\n st.global.f32 [%rd2+4], %f11;\n\
         mul.f32 %f12, %f2, %f3;\n st.global.f32 [%rd2+8], %f12;\n\
         fma.rn.f32 %f13, %f2, %f3, %f4;\n st.global.f32 [%rd2+12], %f13;\n\
         div.rn.f32 %f14, %f1, %f3;\n st.global.f32 [%rd2+16], %f14;\n\
         div.approx.f32 %f15, %f2, %f4;\n st.global.f32 [%rd2+20], %f15;\n\
         min.f32 %f16, %f5, %f2;\n st.global.f32 [%rd2+24], %f16;\n\
         max.ftz.f32 %f17, %f5, %f2;\n st.global.f32 [%rd2+28], %f17;\n\
         neg.f32 %f18, %f6;\n st.global.f32 [%rd2+32], %f18;\n\
         abs.f32 %f19, %f18;\n st.global.f32 [%rd2+36], %f19;\n\
         mad.rn.f32 %f20, %f1, 0f40000000, 0f3F000000;\n st.global.f32 [%rd2+40], %f20;\n\
         mul.f32 %f21, %f1, 0f3DCCCCCD;\n st.global.f32 [%rd2+44], %f21;",
        12,
    );
    let want = [
        3.0,
        -2.0,
        6.0,
        10.0,
        1.0 / 3.0,
        0.5,
        2.0,
        5.0,
        -6.0,
        6.0,
        2.5,
        // 0f3DCCCCCD is 13421773 / 2^27, not 0.1
        13_421_773.0 / 134_217_728.0,
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(y[i], Some(*w), "element {i}");
    }
}

#[test]
fn transcendentals() {
    let y = float_kernel(
        "ex2.approx.f32 %f10, %f3;\n st.global.f32 [%rd2], %f10;\n\
         lg2.approx.f32 %f11, %f8;\n st.global.f32 [%rd2+4], %f11;\n\
         rcp.rn.f32 %f12, %f4;\n st.global.f32 [%rd2+8], %f12;\n\
         sqrt.rn.f32 %f13, %f4;\n st.global.f32 [%rd2+12], %f13;\n\
         rsqrt.approx.f32 %f14, %f4;\n st.global.f32 [%rd2+16], %f14;\n\
         tanh.approx.f32 %f15, %f1;\n st.global.f32 [%rd2+20], %f15;",
        6,
    );
    assert_eq!(
        y[..5],
        [Some(8.0), Some(3.0), Some(0.25), Some(2.0), Some(0.5)]
    );
    assert!((y[5].unwrap() - 1f64.tanh()).abs() < 1e-15);
}

#[test]
fn compare_select_set_and_relu() {
    let y = float_kernel(
        "setp.gt.f32 %p1, %f2, %f1;\n selp.f32 %f10, %f3, %f4, %p1;\n st.global.f32 [%rd2], %f10;\n\
         setp.ltu.f32 %p2, %f2, %f1;\n selp.f32 %f11, %f3, %f4, %p2;\n st.global.f32 [%rd2+4], %f11;\n\
         set.ge.f32.f32 %f12, %f2, %f2;\n st.global.f32 [%rd2+8], %f12;\n\
         neg.f32 %f13, %f5;\n fma.rn.relu.f32 %f14, %f13, %f1, %f1;\n st.global.f32 [%rd2+12], %f14;\n\
         slct.f32.f32 %f15, %f6, %f7, %f13;\n st.global.f32 [%rd2+16], %f15;\n\
         max.relu.f32 %f16, %f13, %f13;\n st.global.f32 [%rd2+20], %f16;\n\
         copysign.f32 %f17, 0fBF800000, %f6;\n st.global.f32 [%rd2+24], %f17;",
        7,
    );
    // 2 > 1 → 3; 2 <u 1 false → 4; 2 >= 2 → 1.0; relu(-5*1+1 = -4) = 0;
    // slct: -5 < 0 → f7 = 7; relu(max(-5,-5)) = 0; copysign(sign of -1.0, |6|) = -6
    assert_eq!(
        y,
        vec![
            Some(3.0),
            Some(4.0),
            Some(1.0),
            Some(0.0),
            Some(7.0),
            Some(0.0),
            Some(-6.0)
        ]
    );
}

#[test]
fn half_precision_and_conversions() {
    let y = float_kernel(
        "cvt.rn.f16x2.f32 %r1, %f2, %f1;\n\
         mov.b32 {%h1, %h2}, %r1;\n cvt.f32.f16 %f10, %h1;\n cvt.f32.f16 %f11, %h2;\n\
         st.global.f32 [%rd2], %f10;\n st.global.f32 [%rd2+4], %f11;\n\
         add.f16x2 %r2, %r1, %r1;\n mov.b32 {%h3, %h4}, %r2;\n cvt.f32.f16 %f12, %h4;\n st.global.f32 [%rd2+8], %f12;\n\
         cvt.rn.bf16.f32 %h5, %f7;\n mov.b32 %f13, {0, %h5};\n st.global.f32 [%rd2+12], %f13;\n\
         cvt.rn.f32.s32 %f14, -3;\n st.global.f32 [%rd2+16], %f14;\n\
         cvt.rn.f64.f32 %fd1, %f8;\n cvt.rn.f32.f64 %f15, %fd1;\n st.global.f32 [%rd2+20], %f15;\n\
         cvt.rni.f32.f32 %f16, 0f40200000;\n st.global.f32 [%rd2+24], %f16;",
        7,
    );
    // cvt.f16x2 a=f2 → upper half, b=f1 → lower: h1 = 1, h2 = 2; 2+2 = 4 (upper);
    // bf16 7 through the high half of an f32 = 7; -3; 8; rni(2.5) = 2
    assert_eq!(
        y,
        vec![
            Some(1.0),
            Some(2.0),
            Some(4.0),
            Some(7.0),
            Some(-3.0),
            Some(8.0),
            Some(2.0)
        ]
    );
}
