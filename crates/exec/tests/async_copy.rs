//! `cp.async` with commit / wait groups: data movement (sizes, zero fill,
//! predication) and the in-flight race interval.

mod common;

use common::{input, kinds, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{AccessKind, CVal, CtaRun, FindingKind, ParamValue};
use ptxeq_spec::DType;

/// A kernel over `threads` threads with f32 input `x[n]` (pointer
/// `%rd1`) and output `y[n]` (`%rd2`), shared `sm[4n]` bytes at `%r1`,
/// `%r0` = tid, `%r2` = 16·tid, `%rd3` = 16·tid (bytes).
fn kernel(body: &str, threads: u32, n: usize) -> CtaRun<CVal> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 16 .b8 sm[{}];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\nmov.u32 %r1, sm;\nshl.b32 %r2, %r0, 4;\nmul.wide.u32 %rd3, %r0, 16;\n\
         {body}\nret;\n}}\n",
        4 * n
    );
    let inp = input(
        &ptx,
        [threads, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[n as u64]),
            tensor("y", Role::Output, DType::F32, &[n as u64]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let x: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
    run(&inp, vec![x, vec![]])
}

/// Each thread copies its 16 bytes (4 floats) of `x` into shared.
const ISSUE: &str = "add.s32 %r3, %r1, %r2;\nadd.s64 %rd4, %rd1, %rd3;\n\
    cp.async.cg.shared.global [%r3], [%rd4], 16;\ncp.async.commit_group;\n";

/// Thread t reads the 16 shared bytes of thread `(t + 1) % 32` and
/// stores them to its slot of `y`.
const READ_NEIGHBOUR: &str = "add.s32 %r4, %r0, 1;\nand.b32 %r4, %r4, 31;\nshl.b32 %r4, %r4, 4;\n\
    add.s32 %r5, %r1, %r4;\nld.shared.v4.f32 {%f0, %f1, %f2, %f3}, [%r5];\n\
    add.s64 %rd5, %rd2, %rd3;\nst.global.v4.f32 [%rd5], {%f0, %f1, %f2, %f3};\n";

fn values(r: &CtaRun<CVal>, n: usize) -> Vec<Option<f64>> {
    out_f64(r, 1, n)
}

fn races(r: &CtaRun<CVal>) -> Vec<&ptxeq_exec::Finding> {
    r.findings
        .iter()
        .filter(|f| f.kind == FindingKind::Race)
        .collect()
}

#[test]
fn wait_then_barrier_is_race_free_and_moves_the_data() {
    let r = kernel(
        &format!("{ISSUE}cp.async.wait_group 0;\nbar.sync 0;\n{READ_NEIGHBOUR}"),
        32,
        128,
    );
    no_findings(&r);
    let y = values(&r, 128);
    for t in 0..32 {
        for j in 0..4 {
            let src = ((t + 1) % 32) * 4 + j;
            assert_eq!(y[t * 4 + j], Some(src as f64 + 1.0));
        }
    }
    // wait_all works the same.
    let r = kernel(
        &format!("{ISSUE}cp.async.wait_all;\nbar.sync 0;\n{READ_NEIGHBOUR}"),
        32,
        128,
    );
    no_findings(&r);
}

#[test]
fn reading_the_destination_before_the_wait_is_a_race() {
    // The issuing thread reads its own destination before waiting.
    let r = kernel(
        &format!(
            "{ISSUE}add.s32 %r5, %r1, %r2;\nld.shared.f32 %f0, [%r5];\ncp.async.wait_group 0;\n\
             add.s64 %rd5, %rd2, %rd3;\nst.global.f32 [%rd5], %f0;\n"
        ),
        32,
        128,
    );
    let rs = races(&r);
    assert!(!rs.is_empty(), "{:?}", r.findings);
    let f = rs[0];
    assert_eq!(f.accesses.len(), 2);
    assert_eq!(f.accesses[0].kind, AccessKind::Write);
    assert_eq!(f.accesses[1].kind, AccessKind::Read);
    assert_eq!(f.accesses[0].thread, f.accesses[1].thread);
    assert!(f.message.contains("cp.async"), "{}", f.message);
}

#[test]
fn a_wait_without_a_barrier_does_not_order_other_threads() {
    let r = kernel(
        &format!("{ISSUE}cp.async.wait_group 0;\n{READ_NEIGHBOUR}"),
        32,
        128,
    );
    assert!(!races(&r).is_empty(), "{:?}", r.findings);
}

#[test]
fn a_barrier_between_issue_and_wait_does_not_make_the_copy_visible() {
    // Barrier after the issue but before the wait: the neighbour's copy
    // may still land after the read.
    let r = kernel(
        &format!("{ISSUE}bar.sync 0;\n{READ_NEIGHBOUR}cp.async.wait_group 0;\n"),
        32,
        128,
    );
    assert!(!races(&r).is_empty(), "{:?}", r.findings);
    // Even with a second barrier after the read and the wait after that.
    let r = kernel(
        &format!("{ISSUE}bar.sync 0;\n{READ_NEIGHBOUR}bar.sync 0;\ncp.async.wait_group 0;\n"),
        32,
        128,
    );
    assert!(!races(&r).is_empty(), "{:?}", r.findings);
}

#[test]
fn wait_group_n_leaves_the_newest_groups_in_flight() {
    // Two groups: x[0..128) then x[128..256) into the second half.
    let two = "add.s32 %r3, %r1, %r2;\nadd.s64 %rd4, %rd1, %rd3;\n\
        cp.async.ca.shared.global [%r3], [%rd4], 16;\ncp.async.commit_group;\n\
        cp.async.ca.shared.global [%r3+512], [%rd4+512], 16;\ncp.async.commit_group;\n\
        cp.async.wait_group 1;\nbar.sync 0;\n";
    // Reading the first group's data is fine.
    let r = kernel(
        &format!("{two}{READ_NEIGHBOUR}cp.async.wait_all;\n"),
        32,
        256,
    );
    no_findings(&r);
    // Reading the second group's data races.
    let second = READ_NEIGHBOUR.replace("[%r5]", "[%r5+512]");
    let r = kernel(&format!("{two}{second}cp.async.wait_all;\n"), 32, 256);
    assert!(!races(&r).is_empty(), "{:?}", r.findings);
}

#[test]
fn src_size_zero_fills_and_guards_apply() {
    // src-size 8 of 16: the upper two floats are zero. Odd threads skip
    // the copy by predicate and write zeros themselves.
    let body = "and.b32 %r6, %r0, 1;\nsetp.eq.u32 %p1, %r6, 0;\n\
        add.s32 %r3, %r1, %r2;\nadd.s64 %rd4, %rd1, %rd3;\n\
        @%p1 cp.async.ca.shared.global [%r3], [%rd4], 16, 8;\n\
        @!%p1 st.shared.v4.f32 [%r3], {0f00000000, 0f00000000, 0f00000000, 0f00000000};\n\
        cp.async.wait_all;\nbar.sync 0;\n";
    let r = kernel(&format!("{body}{READ_NEIGHBOUR}"), 32, 128);
    no_findings(&r);
    let y = values(&r, 128);
    for t in 0..32 {
        let s = (t + 1) % 32;
        let want: Vec<Option<f64>> = (0..4)
            .map(|j| {
                Some(if s % 2 == 0 && j < 2 {
                    (s * 4 + j) as f64 + 1.0
                } else {
                    0.0
                })
            })
            .collect();
        assert_eq!(y[t * 4..t * 4 + 4], want[..], "thread {t}");
    }
}

#[test]
fn invalid_sizes_are_unsupported() {
    let r = kernel(
        "add.s32 %r3, %r1, %r2;\nadd.s64 %rd4, %rd1, %rd3;\ncp.async.cg.shared.global [%r3], [%rd4], 8;\n",
        32,
        128,
    );
    assert_eq!(kinds(&r), vec![FindingKind::Unsupported]);
}
