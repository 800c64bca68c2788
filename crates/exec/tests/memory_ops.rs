//! Loads and stores of every width and vector form, shared / local /
//! const / param spaces, calls of `.func`s.

mod common;
use common::{input, int_kernel, kernel_run, kinds, no_findings, out_bits, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{FindingKind, ParamValue};
use ptxeq_spec::DType;

fn words(v: &[Option<u32>]) -> Vec<u32> {
    v.iter().map(|x| x.expect("written")).collect()
}

#[test]
fn widths_and_vectors_round_trip_through_shared() {
    let decls = ".shared .align 16 .b8 buf[64];";
    let body = "mov.u32 %r1, buf;\n\
        st.shared.v4.u32 [%r1], {0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff00};\n\
        ld.shared.v2.u64 {%rd1, %rd2}, [%r1];\n\
        st.global.u64 [%rd0], %rd1;\n st.global.u64 [%rd0+8], %rd2;\n\
        ld.shared.u8 %r2, [%r1+1];\n st.global.u32 [%rd0+16], %r2;\n\
        ld.shared.s8 %r3, [%r1+11];\n st.global.u32 [%rd0+20], %r3;\n\
        ld.shared.u16 %r4, [%r1+6];\n st.global.u32 [%rd0+24], %r4;\n\
        st.shared.u8 [%r1+32], 0xab;\n st.shared.u8 [%r1+33], 0xcd;\n st.shared.u16 [%r1+34], 0x1234;\n\
        ld.shared.u32 %r5, [%r1+32];\n st.global.u32 [%rd0+28], %r5;\n\
        mov.b64 %rd3, {%r5, %r2};\n st.global.u64 [%rd0+32], %rd3;\n\
        mov.b64 {%r6, %r7}, %rd1;\n st.global.u32 [%rd0+40], %r7;";
    let run = kernel_run(body, 11, 1, decls);
    no_findings(&run);
    let w: Vec<u32> = out_bits(&run, 0, 11)
        .into_iter()
        .map(|b| b.unwrap() as u32)
        .collect();
    // u64 0 = 0x55667788_11223344, u64 1 = 0xddeeff00_99aabbcc;
    // byte 1 = 0x33; byte 11 (0x99) as s8 = -103 = 0xffffff99; bytes 6..7 = 0x5566;
    // 0x1234cdab from the three narrow stores; pack {r5, r2}; high word of rd1
    assert_eq!(
        w,
        vec![
            0x1122_3344,
            0x5566_7788,
            0x99aa_bbcc,
            0xddee_ff00,
            0x33,
            0xffff_ff99,
            0x5566,
            0x1234_cdab,
            0x1234_cdab,
            0x33,
            0x5566_7788
        ]
    );
}

#[test]
fn local_arrays_and_generic_addressing() {
    let body = ".local .align 8 .b8 depot[32];\n\
        mov.u64 %rd1, depot;\n cvta.local.u64 %rd2, %rd1;\n\
        st.u32 [%rd2+4], 7;\n st.local.u32 [%rd1+8], 9;\n\
        ld.local.u32 %r1, [%rd1+4];\n ld.u32 %r2, [%rd2+8];\n\
        add.u32 %r3, %r1, %r2;\n st.global.u32 [%rd0], %r3;\n\
        mov.u32 %r4, %tid.x;\n st.local.u32 [depot+12], %r4;\n ld.local.u32 %r5, [depot+12];\n\
        mul.wide.u32 %rd3, %r4, 4;\n add.s64 %rd4, %rd0, %rd3;\n st.global.u32 [%rd4+4], %r5;";
    let r = int_kernel(body, 5, 4);
    // 7 + 9 = 16 (thread 0 writes out[0]; every thread writes out[0] = 16: same
    // instruction, same value: benign); each thread reads back its own tid
    assert_eq!(words(&r), vec![16, 0, 1, 2, 3]);
}

#[test]
fn const_tables_with_initialisers() {
    let decls =
        ".const .align 4 .u32 tab[4] = {10, 20, 30, 40};\n.global .align 4 .u32 g[2] = {5, 6};";
    let body = "ld.const.u32 %r1, [tab+8];\n st.global.u32 [%rd0], %r1;\n\
        mov.u64 %rd1, tab;\n ld.const.u32 %r2, [%rd1+12];\n st.global.u32 [%rd0+4], %r2;\n\
        ld.global.u32 %r3, [g+4];\n st.global.u32 [%rd0+8], %r3;";
    let run = kernel_run(body, 3, 1, decls);
    no_findings(&run);
    let w: Vec<u32> = out_bits(&run, 0, 3)
        .into_iter()
        .map(|b| b.unwrap() as u32)
        .collect();
    assert_eq!(w, vec![30, 40, 6]);
}

#[test]
fn calls_pass_params_and_returns() {
    let ptx = r#"
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 ret) addmul(.param .b32 a, .param .b32 b)
{
    .reg .b32 %r<4>;
    ld.param.b32 %r1, [a];
    ld.param.b32 %r2, [b];
    mad.lo.s32 %r3, %r1, 10, %r2;
    st.param.b32 [ret], %r3;
    ret;
}
.func (.reg .b32 out) twice(.reg .b32 x)
{
    add.s32 out, x, x;
    ret;
}
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd1, %rd1;
    {
    .param .b32 param0;
    st.param.b32 [param0], 3;
    .param .b32 param1;
    st.param.b32 [param1], 4;
    .param .b32 retval0;
    call.uni (retval0), addmul, (param0, param1);
    ld.param.b32 %r1, [retval0];
    }
    st.global.u32 [%rd1], %r1;
    call.uni (%r2), twice, (%r1);
    st.global.u32 [%rd1+4], %r2;
    ret;
}
"#;
    let inp = input(
        ptx,
        [2, 1, 1],
        vec![tensor("y", Role::Output, DType::U32, &[2])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let r = run(&inp, vec![]);
    no_findings(&r);
    // 3*10 + 4 = 34; twice → 68
    assert_eq!(out_bits(&r, 0, 2), vec![Some(34), Some(68)]);
}

#[test]
fn out_of_bounds_and_uninitialised() {
    let decls = ".shared .align 4 .b8 s[16];";
    let run = kernel_run(
        "mov.u32 %r1, s;\n ld.shared.u32 %r2, [%r1+16];",
        1,
        1,
        decls,
    );
    assert_eq!(kinds(&run), vec![FindingKind::OutOfBounds]);
    let loc = run.findings[0].location.clone().unwrap();
    assert_eq!((loc.region.as_str(), loc.byte_offset), ("s", 16));
    let run = kernel_run("mov.u32 %r1, s;\n ld.shared.u32 %r2, [%r1+4];", 1, 1, decls);
    assert_eq!(kinds(&run), vec![FindingKind::Uninitialised]);
    let run = kernel_run("st.global.u32 [%rd0+4], 1;", 1, 1, "");
    assert_eq!(kinds(&run), vec![FindingKind::OutOfBounds]);
    // far outside every region
    let run = kernel_run("mov.u64 %rd5, 64;\n ld.global.u32 %r1, [%rd5];", 1, 1, "");
    assert_eq!(kinds(&run), vec![FindingKind::OutOfBounds]);
}

#[test]
fn params_bound_to_underscore_cannot_be_read() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 p, .param .u32 unused)\n{\n.reg .b32 %r<2>;\n\
        ld.param.u32 %r1, [unused];\nret;\n}\n";
    let inp = input(
        ptx,
        [1, 1, 1],
        vec![tensor("y", Role::Output, DType::U32, &[1])],
        vec![ParamValue::Tensor { tensor: 0 }, ParamValue::Unused],
    );
    let r = run(&inp, vec![]);
    assert_eq!(kinds(&r), vec![FindingKind::Unsupported]);
}
