//! The bit-exact IEEE domain through the engine: rounding modifiers,
//! `.ftz`, `.sat`, format conversions, and integer operations on float
//! bits, each against a hand-derived bit pattern.

mod common;
use common::{input, tensor};
use ptxeq_exec::{IVal, Ieee, OutputValue, ParamValue, run_cta};
use ptxeq_spec::{DType, Role};

/// Runs `body` with x (f32[4]) in %f1..%f4 and y (u32[n]) at %rd2;
/// returns the words stored.
fn bits(body: &str, x: [f32; 4], n: u64) -> Vec<u32> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 x, .param .u64 y)\n{{\n\
         .reg .b16 %h<8>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<32>;\n.reg .pred %p<4>;\n\
         ld.param.u64 %rd1, [x];\n ld.param.u64 %rd2, [y];\n\
         ld.global.v4.f32 {{%f1, %f2, %f3, %f4}}, [%rd1];\n{body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [1, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[4]),
            tensor("y", Role::Output, DType::U32, &[n]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let data = vec![x.iter().map(|v| f64::from(*v)).collect(), vec![]];
    let (run, _) = run_cta(&inp, [0, 0, 0], Ieee::new(data));
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let out = run.outputs.iter().find(|o| o.tensor == 1).expect("y");
    let mut v = vec![0u32; n as usize];
    for (i, e) in &out.elements {
        v[*i as usize] = match e {
            OutputValue::Bits(b) => *b as u32,
            OutputValue::Data(IVal::F { bits, .. }) => *bits as u32,
            other => panic!("{other:?}"),
        };
    }
    v
}

#[test]
fn rounding_modifiers_round() {
    // 1/3 in four modes: rn and rp round up here, rz and rm down.
    let y = bits(
        "div.rn.f32 %f5, %f1, %f2;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         div.rz.f32 %f6, %f1, %f2;\n mov.b32 %r2, %f6;\n st.global.u32 [%rd2+4], %r2;\n\
         div.rm.f32 %f7, %f1, %f2;\n mov.b32 %r3, %f7;\n st.global.u32 [%rd2+8], %r3;\n\
         div.rp.f32 %f8, %f1, %f2;\n mov.b32 %r4, %f8;\n st.global.u32 [%rd2+12], %r4;",
        [1.0, 3.0, 0.0, 0.0],
        4,
    );
    assert_eq!(y, [0x3EAA_AAAB, 0x3EAA_AAAA, 0x3EAA_AAAA, 0x3EAA_AAAB]);
}

#[test]
fn fma_rounds_once_and_honours_its_mode() {
    // nvcc's expf: fma.rm(s, 252, 0f4B400001) puts round-down(s·252)+…
    // into the low mantissa bits. With s = 0.5: 126 + 12582913 exactly.
    let y = bits(
        "fma.rm.f32 %f5, %f1, 0f437C0000, 0f4B400001;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         shl.b32 %r2, %r1, 23;\n st.global.u32 [%rd2+4], %r2;",
        [0.5, 0.0, 0.0, 0.0],
        2,
    );
    assert_eq!(y[0], 12_583_039f32.to_bits());
    // The low byte is 126 + 1 = 127 → shifted into the exponent: 2^0.
    assert_eq!(y[1], 1f32.to_bits());
    // Inexact: 0.3·252 + 12582913 = 12582988.6…, down vs to nearest.
    let y = bits(
        "fma.rm.f32 %f5, %f1, 0f437C0000, 0f4B400001;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         fma.rn.f32 %f6, %f1, 0f437C0000, 0f4B400001;\n mov.b32 %r2, %f6;\n st.global.u32 [%rd2+4], %r2;",
        [0.3, 0.0, 0.0, 0.0],
        2,
    );
    assert_eq!(y, [12_582_988f32.to_bits(), 12_582_989f32.to_bits()]);
}

#[test]
fn sat_ftz_and_conversions() {
    let y = bits(
        "cvt.sat.f32.f32 %f5, %f1;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         cvt.sat.f32.f32 %f6, %f2;\n mov.b32 %r2, %f6;\n st.global.u32 [%rd2+4], %r2;\n\
         mul.ftz.f32 %f7, %f3, 0f3F800000;\n mov.b32 %r3, %f7;\n st.global.u32 [%rd2+8], %r3;\n\
         mul.f32 %f8, %f3, 0f3F800000;\n mov.b32 %r4, %f8;\n st.global.u32 [%rd2+12], %r4;\n\
         cvt.rn.f16.f32 %h1, %f4;\n cvt.u32.u16 %r5, %h1;\n st.global.u32 [%rd2+16], %r5;\n\
         cvt.rz.f16.f32 %h2, %f4;\n cvt.u32.u16 %r6, %h2;\n st.global.u32 [%rd2+20], %r6;",
        [1.5, -2.0, 1e-40, 0.1],
        6,
    );
    assert_eq!(y[0], 1f32.to_bits());
    assert_eq!(y[1], 0);
    assert_eq!(y[2], 0, "ftz flushes the subnormal");
    assert_eq!(y[3], 1e-40f32.to_bits());
    assert_eq!(y[4], 0x2E66, "0.1 → f16, to nearest");
    assert_eq!(
        y[5], 0x2E66,
        "0.1 → f16, toward zero (0.1 rounds down here too)"
    );
}

#[test]
fn rounding_to_an_integer_keeps_infinities_huge_values_and_signed_zero() {
    // cvt.rXi.f32.f32 on ±inf, on a value beyond 2^63 (already an
    // integer) and on a negative fraction that rounds to zero (−0): powf's
    // parity test of y relies on these.
    let y = bits(
        "cvt.rmi.f32.f32 %f5, %f1;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         cvt.rzi.f32.f32 %f6, %f2;\n mov.b32 %r2, %f6;\n st.global.u32 [%rd2+4], %r2;\n\
         cvt.rzi.f32.f32 %f7, %f3;\n mov.b32 %r3, %f7;\n st.global.u32 [%rd2+8], %r3;\n\
         cvt.rni.f32.f32 %f8, %f4;\n mov.b32 %r4, %f8;\n st.global.u32 [%rd2+12], %r4;",
        [f32::NEG_INFINITY, 1e30, -0.5, 2.5],
        4,
    );
    assert_eq!(
        y,
        [
            f32::NEG_INFINITY.to_bits(),
            1e30f32.to_bits(),
            (-0.0f32).to_bits(),
            2f32.to_bits()
        ]
    );
}

#[test]
fn pow_is_c_pow_rounded_in_every_concrete_domain() {
    // The recognised powf idiom: C's pow, real at a negative base with an
    // integer exponent, NaN with a non-integer one; correctly rounded to
    // the format in the bit-exact domain.
    use ptxeq_exec::{BinOp, Concrete, Domain, Fmt};
    let mut d = Ieee::new(vec![]);
    let mut pow = |x: f32, y: f32| {
        let a = d.float_const(Fmt::F32, u64::from(x.to_bits())).expect("x");
        let b = d.float_const(Fmt::F32, u64::from(y.to_bits())).expect("y");
        d.binary(BinOp::Pow, a, b).to_f64()
    };
    assert_eq!(pow(-2.0, 3.0), -8.0);
    assert_eq!(pow(2.0, 0.5), f64::from(std::f32::consts::SQRT_2));
    assert!(pow(-2.0, 0.5).is_nan());
    assert_eq!(pow(f32::NAN, 0.0), 1.0);
    assert_eq!(pow(10.0, 39.0), f64::INFINITY);
    let mut c = Concrete::new(vec![]);
    let (a, b) = (
        c.float_const(Fmt::F32, u64::from((-3f32).to_bits()))
            .expect("x"),
        c.float_const(Fmt::F32, u64::from(2f32.to_bits()))
            .expect("y"),
    );
    assert_eq!(c.binary(BinOp::Pow, a, b).get(), 9.0);
}
