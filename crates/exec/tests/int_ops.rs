//! Integer and bit instructions executed by the engine on hand-written
//! kernels; every expected value is computed by hand in the comment.

mod common;
use common::int_kernel;

fn words(v: &[Option<u32>]) -> Vec<u32> {
    v.iter().map(|x| x.expect("written")).collect()
}

#[test]
fn add_sub_wrap_and_saturate() {
    let r = int_kernel(
        "mov.u32 %r1, 0xffffffff;\n add.u32 %r2, %r1, 2;\n st.global.u32 [%rd0], %r2;\n\
         mov.u32 %r3, 0x7fffffff;\n add.sat.s32 %r4, %r3, 1;\n st.global.u32 [%rd0+4], %r4;\n\
         sub.s32 %r5, 3, 5;\n st.global.u32 [%rd0+8], %r5;\n\
         mov.u16 %h1, 0xfffe;\n add.u16 %h2, %h1, 3;\n cvt.u32.u16 %r6, %h2;\n st.global.u32 [%rd0+12], %r6;",
        4,
        1,
    );
    // 0xffffffff + 2 = 1 (mod 2^32); sat: 0x7fffffff; 3-5 = -2; 0xfffe+3 = 1 (mod 2^16)
    assert_eq!(words(&r), vec![1, 0x7fff_ffff, 0xffff_fffe, 1]);
}

#[test]
fn carry_chain_adds_64_bits_in_halves() {
    // (0x00000001_ffffffff + 0x00000002_00000001) = 0x00000004_00000000
    let r = int_kernel(
        "add.cc.u32 %r1, 0xffffffff, 0x00000001;\n addc.u32 %r2, 1, 2;\n\
         st.global.u32 [%rd0], %r1;\n st.global.u32 [%rd0+4], %r2;\n\
         sub.cc.u32 %r3, 0, 1;\n subc.u32 %r4, 5, 1;\n\
         st.global.u32 [%rd0+8], %r3;\n st.global.u32 [%rd0+12], %r4;",
        4,
        1,
    );
    // 0x5_00000000 - 0x1_00000001 = 0x3_ffffffff
    assert_eq!(words(&r), vec![0, 4, 0xffff_ffff, 3]);
}

#[test]
fn multiplies_hi_wide_and_mad() {
    let r = int_kernel(
        "mov.u32 %r1, 0x12345678;\n mov.u32 %r2, 0x9abcdef0;\n\
         mul.lo.u32 %r3, %r1, %r2;\n st.global.u32 [%rd0], %r3;\n\
         mul.hi.u32 %r4, %r1, %r2;\n st.global.u32 [%rd0+4], %r4;\n\
         mul.hi.s32 %r5, -1, -1;\n st.global.u32 [%rd0+8], %r5;\n\
         mul.wide.s32 %rd1, -3, 5;\n st.global.u64 [%rd0+12], %rd1;\n\
         mad.lo.s32 %r6, 7, 6, -2;\n st.global.u32 [%rd0+20], %r6;\n\
         mad.hi.u32 %r7, %r1, %r2, 1;\n st.global.u32 [%rd0+24], %r7;\n\
         mad.wide.u32 %rd2, 0xffffffff, 2, 5;\n st.global.u64 [%rd0+28], %rd2;\n\
         mul24.lo.s32 %r8, 0x00ffffff, 3;\n st.global.u32 [%rd0+36], %r8;",
        10,
        1,
    );
    let w = words(&r);
    // 0x12345678 * 0x9abcdef0 = 0x0b00ea4e_242d2080
    assert_eq!(w[0], 0x242d_2080);
    assert_eq!(w[1], 0x0b00_ea4e);
    assert_eq!(w[2], 0); // (-1)(-1) = 1: high word 0
    // -15 as 64 bits
    assert_eq!((w[3], w[4]), (0xffff_fff1, 0xffff_ffff));
    assert_eq!(w[5], 40); // 42 - 2
    assert_eq!(w[6], 0x0b00_ea4f);
    // 0xffffffff * 2 + 5 = 0x1_fffffffe + 5 = 0x2_00000003
    assert_eq!((w[7], w[8]), (3, 2));
    // 24-bit signed: 0xffffff = -1; -1 * 3 = -3
    assert_eq!(w[9], 0xffff_fffd);
}

#[test]
fn division_min_max_abs_neg() {
    let r = int_kernel(
        "div.s32 %r1, -7, 2;\n st.global.u32 [%rd0], %r1;\n\
         rem.s32 %r2, -7, 2;\n st.global.u32 [%rd0+4], %r2;\n\
         div.u32 %r3, 0xfffffff9, 2;\n st.global.u32 [%rd0+8], %r3;\n\
         min.s32 %r4, -1, 1;\n st.global.u32 [%rd0+12], %r4;\n\
         min.u32 %r5, -1, 1;\n st.global.u32 [%rd0+16], %r5;\n\
         max.s32 %r6, -5, -9;\n st.global.u32 [%rd0+20], %r6;\n\
         abs.s32 %r7, -12;\n st.global.u32 [%rd0+24], %r7;\n\
         neg.s32 %r8, 12;\n st.global.u32 [%rd0+28], %r8;",
        8,
        1,
    );
    assert_eq!(
        words(&r),
        vec![
            0xffff_fffd,
            0xffff_ffff,
            0x7fff_fffc,
            0xffff_ffff,
            1,
            0xffff_fffb,
            12,
            0xffff_fff4
        ]
    );
}

#[test]
fn division_by_zero_is_reported() {
    let run = common::kernel_run("mov.u32 %r1, 0;\n div.u32 %r2, 5, %r1;\n", 1, 1, "");
    assert_eq!(
        common::kinds(&run),
        vec![ptxeq_exec::FindingKind::DivisionByZero]
    );
}

#[test]
fn shifts_clamp_and_funnel() {
    let r = int_kernel(
        "shl.b32 %r1, 1, 31;\n st.global.u32 [%rd0], %r1;\n\
         shl.b32 %r2, 1, 32;\n st.global.u32 [%rd0+4], %r2;\n\
         shr.s32 %r3, 0x80000000, 40;\n st.global.u32 [%rd0+8], %r3;\n\
         shr.u32 %r4, 0x80000000, 40;\n st.global.u32 [%rd0+12], %r4;\n\
         shf.l.wrap.b32 %r5, 0x01234567, 0x89abcdef, 8;\n st.global.u32 [%rd0+16], %r5;\n\
         shf.r.clamp.b32 %r6, 0x01234567, 0x89abcdef, 40;\n st.global.u32 [%rd0+20], %r6;\n\
         shf.r.wrap.b32 %r7, 0x01234567, 0x89abcdef, 40;\n st.global.u32 [%rd0+24], %r7;",
        7,
        1,
    );
    // b:a = 0x89abcdef_01234567: <<8 high word = 0xabcdef01; >>32 (clamped) low word = b;
    // >>8 (40 & 31) low word = 0xef012345
    assert_eq!(
        words(&r),
        vec![
            0x8000_0000,
            0,
            0xffff_ffff,
            0,
            0xabcd_ef01,
            0x89ab_cdef,
            0xef01_2345
        ]
    );
}

#[test]
fn bit_fields_at_edges() {
    let r = int_kernel(
        "bfe.u32 %r1, 0xabcd1234, 8, 8;\n st.global.u32 [%rd0], %r1;\n\
         bfe.s32 %r2, 0xabcd1234, 28, 8;\n st.global.u32 [%rd0+4], %r2;\n\
         bfe.u32 %r3, 0xabcd1234, 28, 8;\n st.global.u32 [%rd0+8], %r3;\n\
         bfe.s32 %r4, 0x00000080, 4, 4;\n st.global.u32 [%rd0+12], %r4;\n\
         bfi.b32 %r5, 0xff, 0xffffffff, 30, 8;\n st.global.u32 [%rd0+16], %r5;\n\
         bfi.b32 %r6, 0x0, 0xffffffff, 30, 8;\n st.global.u32 [%rd0+20], %r6;\n\
         bfi.b32 %r7, 0xf, 0x0, 4, 4;\n st.global.u32 [%rd0+24], %r7;",
        7,
        1,
    );
    // bits 8..15 = 0x12; signed field past the msb fills with bit 31 (1) → 0x...fa;
    // unsigned fills 0 → 0xa; field 1000b sign-extends to -8;
    // inserting at 30 keeps only two bits.
    assert_eq!(
        words(&r),
        vec![
            0x12,
            0xffff_fffa,
            0xa,
            0xffff_fff8,
            0xffff_ffff,
            0x3fff_ffff,
            0xf0
        ]
    );
}

#[test]
fn permutes_and_lop3() {
    let r = int_kernel(
        "mov.u32 %r1, 0x33221100;\n mov.u32 %r2, 0x77665544;\n\
         prmt.b32 %r3, %r1, %r2, 0x5140;\n st.global.u32 [%rd0], %r3;\n\
         prmt.b32.f4e %r4, %r1, %r2, 1;\n st.global.u32 [%rd0+4], %r4;\n\
         prmt.b32.b4e %r5, %r1, %r2, 1;\n st.global.u32 [%rd0+8], %r5;\n\
         prmt.b32.rc16 %r6, %r1, %r2, 1;\n st.global.u32 [%rd0+12], %r6;\n\
         prmt.b32 %r7, 0x80, 0, 0x0008;\n st.global.u32 [%rd0+16], %r7;\n\
         lop3.b32 %r8, 0xc, 0xa, 0x6, 0x6a;\n st.global.u32 [%rd0+20], %r8;",
        6,
        1,
    );
    // selector 0x0008 on a = 0x80: byte 0 replicates the sign of byte 0
    // (0xff), bytes 1..3 select byte 0 (0x80) → 0x808080ff;
    // (0xc & 0xa) ^ 0x6 = 0x8 ^ 0x6 = 0xe
    assert_eq!(
        words(&r),
        vec![
            0x5511_4400,
            0x4433_2211,
            0x6677_0011,
            0x3322_3322,
            0x8080_80ff,
            0xe
        ]
    );
}

#[test]
fn counting_bits() {
    let r = int_kernel(
        "popc.b32 %r1, 0xf0f0;\n st.global.u32 [%rd0], %r1;\n\
         clz.b32 %r2, 1;\n st.global.u32 [%rd0+4], %r2;\n\
         brev.b32 %r3, 1;\n st.global.u32 [%rd0+8], %r3;\n\
         bfind.u32 %r4, 0x10;\n st.global.u32 [%rd0+12], %r4;\n\
         bfind.s32 %r5, 0xfffffff0;\n st.global.u32 [%rd0+16], %r5;\n\
         bfind.shiftamt.u32 %r6, 0x10;\n st.global.u32 [%rd0+20], %r6;\n\
         bfind.u32 %r7, 0;\n st.global.u32 [%rd0+24], %r7;\n\
         popc.b64 %r8, 0xffffffffffffffff;\n st.global.u32 [%rd0+28], %r8;\n\
         clz.b64 %r9, 0x100000000;\n st.global.u32 [%rd0+32], %r9;",
        9,
        1,
    );
    assert_eq!(
        words(&r),
        vec![8, 31, 0x8000_0000, 4, 3, 27, 0xffff_ffff, 64, 31]
    );
}

#[test]
fn compound_predicates_selp_slct_set() {
    let r = int_kernel(
        "setp.lt.s32 %p1, -1, 1;\n selp.u32 %r1, 10, 20, %p1;\n st.global.u32 [%rd0], %r1;\n\
         setp.lt.u32 %p2, -1, 1;\n selp.u32 %r2, 10, 20, %p2;\n st.global.u32 [%rd0+4], %r2;\n\
         setp.eq.and.s32 %p3|%p4, 3, 3, %p2;\n selp.u32 %r3, 1, 0, %p3;\n selp.u32 %r4, 1, 0, %p4;\n\
         st.global.u32 [%rd0+8], %r3;\n st.global.u32 [%rd0+12], %r4;\n\
         setp.ne.or.s32 %p5|%p6, 3, 3, !%p2;\n selp.u32 %r5, 1, 0, %p5;\n selp.u32 %r6, 1, 0, %p6;\n\
         st.global.u32 [%rd0+16], %r5;\n st.global.u32 [%rd0+20], %r6;\n\
         slct.u32.s32 %r7, 7, 8, -1;\n st.global.u32 [%rd0+24], %r7;\n\
         set.gt.u32.s32 %r8, 5, 4;\n st.global.u32 [%rd0+28], %r8;\n\
         setp.hi.u32 %p7, -1, 1;\n selp.u32 %r9, 1, 0, %p7;\n st.global.u32 [%rd0+32], %r9;\n\
         and.pred %p8, %p1, %p7;\n xor.pred %p9, %p8, %p1;\n selp.u32 %r10, 1, 0, %p9;\n st.global.u32 [%rd0+36], %r10;",
        10,
        1,
    );
    // p1 = true; p2 = (0xffffffff < 1 unsigned) = false;
    // p3 = (3==3) and p2 = false, p4 = (3!=3) and p2 = false;
    // p5 = (3!=3) or !p2 = true, p6 = (3==3) or !p2 = true;
    // slct: -1 < 0 → b = 8; set.gt → 0xffffffff; hi: true; p8 = true, p9 = false
    assert_eq!(words(&r), vec![10, 20, 0, 0, 1, 1, 8, 0xffff_ffff, 1, 0]);
}

#[test]
fn conversions_between_widths() {
    let r = int_kernel(
        "cvt.s32.s8 %r1, 0xff;\n st.global.u32 [%rd0], %r1;\n\
         cvt.u32.u8 %r2, 0x1ff;\n st.global.u32 [%rd0+4], %r2;\n\
         cvt.sat.s8.s32 %r3, 1000;\n st.global.u32 [%rd0+8], %r3;\n\
         cvt.sat.u8.s32 %r4, -5;\n st.global.u32 [%rd0+12], %r4;\n\
         cvt.u32.u64 %r5, 0x100000005;\n st.global.u32 [%rd0+16], %r5;\n\
         cvt.s64.s32 %rd1, -2;\n st.global.u64 [%rd0+20], %rd1;\n\
         cvt.rzi.s32.f32 %r6, 0fC0300000;\n st.global.u32 [%rd0+28], %r6;\n\
         cvt.rni.s32.f32 %r7, 0f40200000;\n st.global.u32 [%rd0+32], %r7;\n\
         cvt.rzi.u32.f32 %r8, 0fC0300000;\n st.global.u32 [%rd0+36], %r8;",
        10,
        1,
    );
    // s8 0xff = -1; u8 of 0x1ff = 0xff; sat 1000 → 127; sat -5 → 0 (u8);
    // -2 as s64 = 0xfffffffe_ffffffff words (fffffffe, ffffffff);
    // -2.75 rzi → -2; 2.5 rni → 2 (even); -2.75 to u32 saturates to 0
    assert_eq!(
        words(&r),
        vec![
            0xffff_ffff,
            0xff,
            127,
            0,
            5,
            0xffff_fffe,
            0xffff_ffff,
            0xffff_fffe,
            2,
            0
        ]
    );
}

#[test]
fn special_registers() {
    let r = int_kernel(
        "mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd1, %r1, 16;\n add.s64 %rd2, %rd0, %rd1;\n\
         mov.u32 %r2, %laneid;\n st.global.u32 [%rd2], %r2;\n\
         mov.u32 %r3, %warpid;\n st.global.u32 [%rd2+4], %r3;\n\
         mov.u32 %r4, %lanemask_lt;\n st.global.u32 [%rd2+8], %r4;\n\
         mov.u32 %r5, %ntid.x;\n st.global.u32 [%rd2+12], %r5;",
        4 * 40,
        40,
    );
    let w = words(&r);
    // thread 33: lane 1, warp 1, lanemask_lt = 0b1, ntid 40
    assert_eq!(&w[33 * 4..33 * 4 + 4], &[1, 1, 1, 40]);
    assert_eq!(&w[0..4], &[0, 0, 0, 40]);
}

#[test]
fn timing_registers_are_unsupported() {
    let run = common::kernel_run(
        "mov.u32 %r1, %clock;\n st.global.u32 [%rd0], %r1;",
        1,
        1,
        "",
    );
    assert_eq!(run.findings.len(), 1);
    assert_eq!(run.findings[0].reason, "timing/hardware-dependent value");
}
