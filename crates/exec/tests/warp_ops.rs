//! Warp collectives and block barriers with reductions, 32–64 threads;
//! every expected value is derived by hand in the comments.

mod common;
use common::{int_kernel, kernel_run, kinds};
use ptxeq_exec::FindingKind;

/// Each thread stores one word at `out[tid]`.
const STORE: &str =
    "mov.u32 %r60, %tid.x;\n mul.wide.u32 %rd30, %r60, 4;\n add.s64 %rd31, %rd0, %rd30;\n";

fn all(v: Vec<Option<u32>>) -> Vec<u32> {
    v.into_iter().map(|x| x.expect("written")).collect()
}

#[test]
fn shfl_idx_broadcast_and_segments() {
    // value = 100 + lane; idx 5 with c = 0x1f → every lane gets lane 5's value (105).
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.idx.b32 %r2, %r1, 5, 0x1f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    assert!(all(int_kernel(&body, 32, 32)).iter().all(|&x| x == 105));
    // width 8: c = ((32-8) << 8) | 0x1f = 0x181f; segmask = 0x18: lane l reads
    // lane (l & 0x18) | 5.
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.idx.b32 %r2, %r1, 5, 0x181f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let r = all(int_kernel(&body, 32, 32));
    for (l, v) in r.iter().enumerate() {
        assert_eq!(*v, 100 + ((l as u32 & 0x18) | 5), "lane {l}");
    }
}

#[test]
fn shfl_down_up_bfly_with_clamps_and_predicate() {
    // down 3, c = 0x1f: lanes 29..31 keep their own value, p false there.
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.down.b32 %r2|%p1, %r1, 3, 0x1f, -1;\n\
         selp.u32 %r3, 1000, 0, %p1;\n add.u32 %r4, %r2, %r3;\n st.global.u32 [%rd31], %r4;"
    );
    let r = all(int_kernel(&body, 32, 32));
    for (l, v) in r.iter().enumerate() {
        let l = l as u32;
        let expect = if l + 3 <= 31 {
            100 + l + 3 + 1000
        } else {
            100 + l
        };
        assert_eq!(*v, expect, "down lane {l}");
    }
    // up 2, c = 0: lanes 0, 1 keep their own value.
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.up.b32 %r2, %r1, 2, 0, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let r = all(int_kernel(&body, 32, 32));
    for (l, v) in r.iter().enumerate() {
        let l = l as u32;
        assert_eq!(*v, if l >= 2 { 98 + l } else { 100 + l }, "up lane {l}");
    }
    // bfly 16 with c = 0x100f (segmask 0x10, clamp 0xf): maxLane = (l & 0x10) | 0xf.
    // Lanes 0..15: j = l + 16 > 15 → own value. Lanes 16..31: j = l - 16 ≤ 31 →
    // lane l - 16 (a segment may read earlier segments, as the CUDA docs say).
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.bfly.b32 %r2, %r1, 16, 0x100f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let r = all(int_kernel(&body, 32, 32));
    for (l, v) in r.iter().enumerate() {
        let l = l as u32;
        assert_eq!(
            *v,
            if l < 16 { 100 + l } else { 100 + l - 16 },
            "bfly lane {l}"
        );
    }
    // bfly 1 full width: lane l reads l ^ 1.
    let body = format!(
        "{STORE} add.u32 %r1, %r60, 100;\n shfl.sync.bfly.b32 %r2, %r1, 1, 0x1f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let r = all(int_kernel(&body, 32, 32));
    for (l, v) in r.iter().enumerate() {
        assert_eq!(*v, 100 + (l as u32 ^ 1));
    }
}

#[test]
fn vote_ballot_any_all_uni() {
    // predicate: lane is odd
    let body = format!(
        "{STORE} and.b32 %r1, %r60, 1;\n setp.ne.u32 %p1, %r1, 0;\n\
         vote.sync.ballot.b32 %r2, %p1, -1;\n\
         vote.sync.any.pred %p2, %p1, -1;\n vote.sync.all.pred %p3, %p1, -1;\n vote.sync.uni.pred %p4, %p1, -1;\n\
         selp.u32 %r3, 1, 0, %p2;\n selp.u32 %r4, 2, 0, %p3;\n selp.u32 %r5, 4, 0, %p4;\n\
         add.u32 %r6, %r3, %r4;\n add.u32 %r6, %r6, %r5;\n\
         setp.eq.u32 %p5, %r60, 0;\n @%p5 st.global.u32 [%rd0+128], %r2;\n st.global.u32 [%rd31], %r6;"
    );
    let r = int_kernel(&body, 33, 32);
    // ballot of odd lanes = 0xaaaaaaaa; any = 1, all = 0, uni = 0 → 1
    assert_eq!(r[32], Some(0xaaaa_aaaa));
    assert!(r[..32].iter().all(|&x| x == Some(1)));
}

#[test]
fn redux_match_elect_activemask() {
    let body = format!(
        "{STORE} redux.sync.add.u32 %r1, %r60, -1;\n redux.sync.max.u32 %r2, %r60, -1;\n\
         and.b32 %r3, %r60, 3;\n match.any.sync.b32 %r4, %r3, -1;\n\
         elect.sync %r5|%p1, -1;\n activemask.b32 %r6;\n\
         setp.eq.u32 %p2, %r60, 2;\n\
         @%p2 st.global.u32 [%rd0+128], %r1;\n @%p2 st.global.u32 [%rd0+132], %r2;\n\
         @%p2 st.global.u32 [%rd0+136], %r4;\n @%p2 st.global.u32 [%rd0+140], %r5;\n\
         @%p2 st.global.u32 [%rd0+144], %r6;\n\
         selp.u32 %r7, 1, 0, %p1;\n st.global.u32 [%rd31], %r7;"
    );
    let r = int_kernel(&body, 37, 32);
    // sum 0..31 = 496; max 31; lanes with (l & 3) == 2: 0x44444444; leader 0; all live
    assert_eq!(
        &r[32..37],
        &[
            Some(496),
            Some(31),
            Some(0x4444_4444),
            Some(0),
            Some(0xffff_ffff)
        ]
    );
    assert_eq!(r[0], Some(1));
    assert!(r[1..32].iter().all(|&x| x == Some(0)));
}

#[test]
fn bar_red_popc_and_or() {
    // 64 threads; predicate tid < 10 → popc 10; and → false; or → true.
    let body = format!(
        "{STORE} setp.lt.u32 %p1, %r60, 10;\n bar.red.popc.u32 %r1, 0, %p1;\n\
         bar.red.and.pred %p2, 1, %p1;\n bar.red.or.pred %p3, 2, %p1;\n\
         selp.u32 %r2, 100, 0, %p2;\n selp.u32 %r3, 1000, 0, %p3;\n add.u32 %r4, %r1, %r2;\n add.u32 %r4, %r4, %r3;\n\
         st.global.u32 [%rd31], %r4;"
    );
    let r = all(int_kernel(&body, 64, 64));
    assert!(r.iter().all(|&x| x == 1010), "{r:?}");
}

#[test]
fn exited_members_do_not_block_a_collective() {
    // Lane 3 exits; the full-mask shuffle completes with the other 31
    // lanes (PTX ISA: it waits for the non-exited members), and nobody
    // reads lane 3: every lane gets lane 0's value.
    let body = format!(
        "{STORE} setp.eq.u32 %p1, %r60, 3;\n @%p1 exit;\n shfl.sync.idx.b32 %r2, %r60, 0, 0x1f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let run = kernel_run(&body, 32, 32, "");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let w = common::out_bits(&run, 0, 32);
    assert_eq!(w[3], None);
    assert!(w.iter().enumerate().all(|(l, v)| l == 3 || *v == Some(0)));
    // The lanes that do not exit arrive first and wait for lane 3; its
    // exit completes the collective (the same result).
    let body = format!(
        "{STORE} setp.eq.u32 %p1, %r60, 31;\n @%p1 bra DONE;\n shfl.sync.idx.b32 %r2, %r60, 5, 0x1f, -1;\n st.global.u32 [%rd31], %r2;\n DONE:"
    );
    let run = kernel_run(&body, 32, 32, "");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let w = common::out_bits(&run, 0, 32);
    assert!(w[..31].iter().all(|v| *v == Some(5)), "{w:?}");
}

/// 24 threads: the only warp has lanes 24..31 missing (a CTA size that is
/// not a multiple of 32).
#[test]
fn partial_warp_collectives_use_the_lanes_that_exist() {
    let body = format!(
        "{STORE} and.b32 %r1, %r60, 1;\n setp.ne.u32 %p1, %r1, 0;\n\
         vote.sync.ballot.b32 %r2, %p1, -1;\n vote.sync.all.pred %p2, 1, -1;\n\
         vote.sync.uni.pred %p3, 1, -1;\n redux.sync.add.u32 %r3, %r60, -1;\n\
         match.all.sync.b32 %r4|%p4, 7, -1;\n bar.warp.sync -1;\n\
         selp.u32 %r5, 1, 0, %p2;\n selp.u32 %r6, 2, 0, %p3;\n selp.u32 %r7, 4, 0, %p4;\n\
         add.u32 %r5, %r5, %r6;\n add.u32 %r5, %r5, %r7;\n\
         setp.eq.u32 %p5, %r60, 0;\n @%p5 st.global.u32 [%rd0+96], %r2;\n\
         @%p5 st.global.u32 [%rd0+100], %r3;\n @%p5 st.global.u32 [%rd0+104], %r4;\n\
         st.global.u32 [%rd31], %r5;"
    );
    let run = kernel_run(&body, 27, 24, "");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let w = common::out_bits(&run, 0, 27);
    // ballot of the odd lanes among 0..23; sum 0..23 = 276; match.all over
    // the 24 existing lanes; all / uni / match predicates true.
    assert_eq!(
        &w[24..27],
        &[Some(0x00aa_aaaa), Some(276), Some(0x00ff_ffff)]
    );
    assert!(w[..24].iter().all(|&v| v == Some(7)), "{w:?}");
}

#[test]
fn partial_warp_reduction_that_discards_missing_lanes_is_defined() {
    // The correct partial-warp tree reduction: every lane shuffles, and a
    // lane adds the value only when its source lane exists (l + off < 24).
    let mut body = format!("{STORE} add.u32 %r1, %r60, 1;\n");
    for off in [16, 8, 4, 2, 1] {
        body.push_str(&format!(
            "shfl.sync.down.b32 %r2, %r1, {off}, 0x1f, -1;\n add.u32 %r3, %r60, {off};\n\
             setp.lt.u32 %p1, %r3, 24;\n add.u32 %r4, %r1, %r2;\n selp.u32 %r1, %r4, %r1, %p1;\n"
        ));
    }
    body.push_str("st.global.u32 [%rd31], %r1;");
    let run = kernel_run(&body, 24, 24, "");
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    // lane 0 holds 1 + 2 + ... + 24.
    assert_eq!(common::out_bits(&run, 0, 24)[0], Some(300));
}

#[test]
fn reading_a_missing_lane_gives_an_undefined_value_reported_at_the_shuffle() {
    // The full-warp reduction on 24 lanes: at offset 16, lanes 8..15 read
    // lanes 24..31, which do not exist (lanes 16..23 are clamped to their
    // own value); the undefined values reach every lane's result.
    let mut body = format!("{STORE} add.u32 %r1, %r60, 1;\n");
    for off in [16, 8, 4, 2, 1] {
        body.push_str(&format!(
            "shfl.sync.down.b32 %r2, %r1, {off}, 0x1f, -1;\n add.u32 %r1, %r1, %r2;\n"
        ));
    }
    body.push_str("st.global.u32 [%rd31], %r1;");
    let run = kernel_run(&body, 24, 24, "");
    assert_eq!(
        kinds(&run),
        vec![FindingKind::Uninitialised],
        "{:?}",
        run.findings
    );
    let f = &run.findings[0];
    // Instruction 6, the first shuffle (after ld.param, cvta, the three
    // STORE instructions and the add).
    assert_eq!(f.instr, Some(ptxeq_exec::InstrRef::kernel(6)), "{f:?}");
    assert!(
        f.message
            .contains("lanes 8..15 of warp 0 read lanes 24..31"),
        "{}",
        f.message
    );
    assert!(f.message.contains("24 element(s)"), "{}", f.message);
    // An undefined value used as an address is reported where it is used,
    // naming the shuffle that produced it.
    let body = format!(
        "{STORE} shfl.sync.down.b32 %r2, %r60, 16, 0x1f, -1;\n and.b32 %r3, %r2, 0;\n\
         add.u32 %r3, %r3, %r60;\n mul.wide.u32 %rd1, %r3, 4;\n\
         add.s64 %rd2, %rd0, %rd1;\n st.global.u32 [%rd2], %r60;"
    );
    let run = kernel_run(&body, 24, 24, "");
    assert_eq!(
        kinds(&run),
        vec![FindingKind::Uninitialised],
        "{:?}",
        run.findings
    );
    assert!(
        run.findings[0].message.contains("read lanes 24..31"),
        "{}",
        run.findings[0].message
    );
}

#[test]
fn elect_and_matrix_collectives_with_missing_lanes() {
    // elect.sync: the ISA does not say whether missing members are waited
    // for: unsupported, named.
    let run = kernel_run("elect.sync %r1|%p1, -1;", 1, 24, "");
    assert_eq!(
        kinds(&run),
        vec![FindingKind::Unsupported],
        "{:?}",
        run.findings
    );
    assert!(
        run.findings[0].message.contains("24..31"),
        "{}",
        run.findings[0].message
    );
}

#[test]
fn partial_mask_shuffles_within_half_warps() {
    // lanes 0..15 use mask 0xffff, lanes 16..31 use 0xffff0000: two independent collectives.
    let body = format!(
        "{STORE} setp.lt.u32 %p1, %r60, 16;\n selp.u32 %r1, 0xffff, 0xffff0000, %p1;\n\
         shfl.sync.down.b32 %r2, %r60, 1, 0x0f1f, %r1;\n st.global.u32 [%rd31], %r2;"
    );
    // c = 0x0f1f: segmask 0x0f, clamp 0x1f: maxLane = (l & 0xf) | 0x10.
    // lane 3: maxLane 19, j = 4 → lane 4's value 4. lane 20: maxLane = 4 | 16 = 20,
    // j = 21 > 20 → own value 20. lane 31: maxLane 31, j = 32 → own (31).
    // lane 15: maxLane 31, j = 16 is outside mask 0xffff → undefined (not written).
    let run = kernel_run(&body, 32, 32, "");
    let w = common::out_bits(&run, 0, 32);
    assert_eq!(w[3], Some(4));
    assert_eq!(w[20], Some(20));
    assert_eq!(w[31], Some(31));
    assert_eq!(w[15], None);
}
