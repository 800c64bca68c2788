//! The bit-exact IEEE domain through the engine: rounding modifiers,
//! `.ftz`, `.sat`, format conversions, and integer operations on float
//! bits, each against a hand-derived bit pattern.

mod common;
use common::{input, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{IVal, Ieee, OutputValue, ParamValue, run_cta};
use ptxeq_spec::DType;

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

/// The PTX ISA's table of float comparisons, written out independently
/// of the domain: ordered operators are false when an operand is NaN
/// (`ne` too, unlike C's `!=`), unordered ones true; `num`/`nan` test for
/// NaN.
fn ptx_cmp(op: &str, a: f32, b: f32) -> bool {
    let unord = a.is_nan() || b.is_nan();
    let ordered = |o: &str| match o {
        "eq" => a == b,
        "ne" => !unord && a != b,
        "lt" => a < b,
        "le" => a <= b,
        "gt" => a > b,
        "ge" => a >= b,
        _ => unreachable!("{o}"),
    };
    match op {
        "num" => !unord,
        "nan" => unord,
        o if o.ends_with('u') => unord || ordered(&o[..2]),
        o => ordered(o),
    }
}

const CMP_OPS: [&str; 14] = [
    "eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
];

/// Both quiet NaN patterns (sign clear and set), ±0, ±inf, a normal and a
/// subnormal value.
fn specials() -> [f32; 9] {
    [
        f32::from_bits(0x7FC0_0000),
        f32::from_bits(0xFFC0_0000),
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0,
        -1.0,
        1e-40,
    ]
}

#[test]
fn every_float_comparison_follows_ptx_on_nan_zero_and_infinity() {
    // setp.OP.f32 %p, a, b; selp.u32 stores 1/0 — and `set.OP.u32.f32`
    // (all-ones/zero mask) for the same comparison.
    let mut body = String::new();
    for (i, op) in CMP_OPS.iter().enumerate() {
        body.push_str(&format!(
            "setp.{op}.f32 %p1, %f1, %f2;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd2+{}], %r1;\n\
             set.{op}.u32.f32 %r2, %f1, %f2;\n st.global.u32 [%rd2+{}], %r2;\n",
            8 * i,
            8 * i + 4
        ));
    }
    for a in specials() {
        for b in specials() {
            let y = bits(&body, [a, b, 0.0, 0.0], 2 * CMP_OPS.len() as u64);
            for (i, op) in CMP_OPS.iter().enumerate() {
                let want = ptx_cmp(op, a, b);
                assert_eq!(y[2 * i], u32::from(want), "setp.{op} {a:?}, {b:?}");
                let mask = if want { u32::MAX } else { 0 };
                assert_eq!(y[2 * i + 1], mask, "set.{op} {a:?}, {b:?}");
            }
        }
    }
}

#[test]
fn ftz_comparisons_read_subnormals_as_signed_zero() {
    // −1e-40 < 0 exactly, but under .ftz it is −0, equal to 0; an
    // unordered .ftz comparison is still true on NaN.
    let y = bits(
        "setp.lt.f32 %p1, %f1, %f2;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd2], %r1;\n\
         setp.lt.ftz.f32 %p2, %f1, %f2;\n selp.u32 %r2, 1, 0, %p2;\n st.global.u32 [%rd2+4], %r2;\n\
         setp.eq.ftz.f32 %p3, %f1, %f2;\n selp.u32 %r3, 1, 0, %p3;\n st.global.u32 [%rd2+8], %r3;\n\
         setp.gtu.ftz.f32 %p1, %f3, %f2;\n selp.u32 %r4, 1, 0, %p1;\n st.global.u32 [%rd2+12], %r4;\n\
         set.eq.ftz.u32.f32 %r5, %f1, %f2;\n st.global.u32 [%rd2+16], %r5;\n\
         set.eq.u32.f32 %r6, %f1, %f2;\n st.global.u32 [%rd2+20], %r6;",
        [-1e-40, 0.0, f32::NAN, 0.0],
        6,
    );
    assert_eq!(y, [1, 0, 1, 1, u32::MAX, 0]);
}

#[test]
fn testp_classifies_nan_infinity_zero_normal_and_subnormal() {
    let ops = [
        "finite",
        "infinite",
        "number",
        "notanumber",
        "normal",
        "subnormal",
    ];
    let mut body = String::new();
    for (i, op) in ops.iter().enumerate() {
        body.push_str(&format!(
            "testp.{op}.f32 %p1, %f1;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd2+{}], %r1;\n",
            4 * i
        ));
    }
    for x in specials() {
        let y = bits(&body, [x, 0.0, 0.0, 0.0], ops.len() as u64);
        let want = [
            x.is_finite(),
            x.is_infinite(),
            !x.is_nan(),
            x.is_nan(),
            x.is_normal(),
            x.is_subnormal(),
        ];
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(y[i], u32::from(want[i]), "testp.{op} {x:?}");
        }
    }
}

#[test]
fn nan_inputs_keep_their_pattern_and_arithmetic_gives_the_canonical_nan() {
    let y = bits(
        "mov.b32 %r1, %f1;\n st.global.u32 [%rd2], %r1;\n\
         mov.b32 %r2, %f2;\n st.global.u32 [%rd2+4], %r2;\n\
         add.f32 %f5, %f2, %f3;\n mov.b32 %r3, %f5;\n st.global.u32 [%rd2+8], %r3;\n\
         neg.f32 %f6, %f1;\n testp.notanumber.f32 %p1, %f6;\n selp.u32 %r4, 1, 0, %p1;\n\
         st.global.u32 [%rd2+12], %r4;",
        [
            f32::from_bits(0x7FC0_0000),
            f32::from_bits(0xFFC0_0000),
            1.0,
            0.0,
        ],
        4,
    );
    assert_eq!(y, [0x7FC0_0000, 0xFFC0_0000, 0x7FFF_FFFF, 1]);
}

#[test]
fn min_max_skip_nan_unless_asked_to_propagate_it() {
    let y = bits(
        "min.f32 %f5, %f1, %f2;\n mov.b32 %r1, %f5;\n st.global.u32 [%rd2], %r1;\n\
         max.f32 %f6, %f2, %f1;\n mov.b32 %r2, %f6;\n st.global.u32 [%rd2+4], %r2;\n\
         min.f32 %f7, %f1, %f1;\n mov.b32 %r3, %f7;\n st.global.u32 [%rd2+8], %r3;\n\
         min.NaN.f32 %f8, %f1, %f2;\n mov.b32 %r4, %f8;\n st.global.u32 [%rd2+12], %r4;\n\
         max.NaN.f32 %f9, %f2, %f3;\n mov.b32 %r5, %f9;\n st.global.u32 [%rd2+16], %r5;\n\
         min.f32 %f10, %f3, %f4;\n mov.b32 %r6, %f10;\n st.global.u32 [%rd2+20], %r6;\n\
         max.f32 %f11, %f4, %f3;\n mov.b32 %r7, %f11;\n st.global.u32 [%rd2+24], %r7;",
        [f32::from_bits(0xFFC0_0000), 2.0, -0.0, 0.0],
        7,
    );
    assert_eq!(
        y,
        [
            2f32.to_bits(),
            2f32.to_bits(),
            0x7FFF_FFFF,
            0x7FFF_FFFF,
            2f32.to_bits(),
            (-0f32).to_bits(),
            0f32.to_bits(),
        ]
    );
}

#[test]
fn packed_half_comparisons_are_exact_per_lane() {
    // Lane 0 compares NaN with 1, lane 1 compares 2 with 1: `ltu` is true
    // in lane 0 only because of the NaN, `lt` false there; `nan` tests
    // each lane.
    let y = bits(
        "cvt.rn.f16.f32 %h1, %f1;\n cvt.rn.f16.f32 %h2, %f2;\n cvt.rn.f16.f32 %h3, %f3;\n\
         mov.b32 %r1, {%h1, %h2};\n mov.b32 %r2, {%h3, %h3};\n\
         setp.ltu.f16x2 %p1|%p2, %r1, %r2;\n selp.u32 %r3, 1, 0, %p1;\n selp.u32 %r4, 1, 0, %p2;\n\
         st.global.u32 [%rd2], %r3;\n st.global.u32 [%rd2+4], %r4;\n\
         setp.lt.f16x2 %p1|%p2, %r1, %r2;\n selp.u32 %r5, 1, 0, %p1;\n selp.u32 %r6, 1, 0, %p2;\n\
         st.global.u32 [%rd2+8], %r5;\n st.global.u32 [%rd2+12], %r6;\n\
         setp.nan.f16x2 %p1|%p2, %r1, %r2;\n selp.u32 %r7, 1, 0, %p1;\n selp.u32 %r8, 1, 0, %p2;\n\
         st.global.u32 [%rd2+16], %r7;\n st.global.u32 [%rd2+20], %r8;",
        [f32::NAN, 2.0, 1.0, 0.0],
        6,
    );
    assert_eq!(y, [1, 0, 0, 0, 1, 0]);
}
