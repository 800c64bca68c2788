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
fn collective_with_an_exited_member_diverges() {
    let body = format!(
        "{STORE} setp.eq.u32 %p1, %r60, 3;\n @%p1 exit;\n shfl.sync.idx.b32 %r2, %r60, 0, 0x1f, -1;\n st.global.u32 [%rd31], %r2;"
    );
    let run = kernel_run(&body, 32, 32, "");
    assert!(
        kinds(&run).contains(&FindingKind::Divergence),
        "{:?}",
        run.findings
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
