//! Races, deadlocks, divergence and recycling on small kernels whose
//! verdict follows from how they are written.

mod common;
use common::{input, kernel_run, kinds, no_findings, out_bits, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{FindingKind, Opaque, ParamValue, run_cta};
use ptxeq_spec::DType;

const SMEM: &str = ".shared .align 4 .b8 s[1024];";
/// `%r60` = tid, `%r61` = address of s[tid], `%r62` = address of s[(tid+1) % 64].
const ADDR: &str = "mov.u32 %r60, %tid.x;\n mov.u32 %r59, s;\n shl.b32 %r58, %r60, 2;\n add.u32 %r61, %r59, %r58;\n\
    add.u32 %r57, %r60, 1;\n and.b32 %r57, %r57, 63;\n shl.b32 %r57, %r57, 2;\n add.u32 %r62, %r59, %r57;\n";

#[test]
fn missing_barrier_is_a_race_and_a_barrier_fixes_it() {
    let racy = format!("{ADDR} st.shared.u32 [%r61], %r60;\n ld.shared.u32 %r1, [%r62];");
    let run = kernel_run(&racy, 1, 64, SMEM);
    assert_eq!(kinds(&run), vec![FindingKind::Race]);
    let f = &run.findings[0];
    assert_eq!(f.accesses.len(), 2);
    assert_eq!(f.location.as_ref().unwrap().region, "s");
    let fixed =
        format!("{ADDR} st.shared.u32 [%r61], %r60;\n bar.sync 0;\n ld.shared.u32 %r1, [%r62];");
    no_findings(&kernel_run(&fixed, 1, 64, SMEM));
    // write-after-read across the barrier-less second phase
    let war = format!(
        "{ADDR} st.shared.u32 [%r61], %r60;\n bar.sync 0;\n ld.shared.u32 %r1, [%r62];\n st.shared.u32 [%r61], %r1;"
    );
    assert_eq!(
        kinds(&kernel_run(&war, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
}

#[test]
fn warp_sync_orders_lanes_of_a_warp_only() {
    let body = format!(
        "{ADDR} st.shared.u32 [%r61], %r60;\n bar.warp.sync -1;\n xor.b32 %r1, %r60, 1;\n shl.b32 %r1, %r1, 2;\n\
         add.u32 %r2, %r59, %r1;\n ld.shared.u32 %r3, [%r2];"
    );
    no_findings(&kernel_run(&body, 1, 64, SMEM));
    // reading across warps after a warp barrier races
    let body = format!(
        "{ADDR} st.shared.u32 [%r61], %r60;\n bar.warp.sync -1;\n xor.b32 %r1, %r60, 32;\n shl.b32 %r1, %r1, 2;\n\
         add.u32 %r2, %r59, %r1;\n ld.shared.u32 %r3, [%r2];"
    );
    assert_eq!(
        kinds(&kernel_run(&body, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
    // a fence is not synchronisation
    let body =
        format!("{ADDR} st.shared.u32 [%r61], %r60;\n membar.cta;\n ld.shared.u32 %r1, [%r62];");
    assert_eq!(
        kinds(&kernel_run(&body, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
}

#[test]
fn same_value_stores_by_one_instruction_are_benign() {
    let body =
        "mov.u32 %r1, s;\n st.shared.u32 [%r1], 42;\n bar.sync 0;\n ld.shared.u32 %r2, [%r1];";
    no_findings(&kernel_run(body, 1, 64, SMEM));
    let body = "mov.u32 %r1, s;\n mov.u32 %r2, %tid.x;\n st.shared.u32 [%r1], %r2;";
    assert_eq!(
        kinds(&kernel_run(body, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
    // the same value from two different instructions races
    let body = "mov.u32 %r1, s;\n mov.u32 %r2, %tid.x;\n setp.lt.u32 %p1, %r2, 32;\n\
        @%p1 st.shared.u32 [%r1], 1;\n @!%p1 st.shared.u32 [%r1], 1;";
    assert_eq!(
        kinds(&kernel_run(body, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
}

#[test]
fn atomics_accumulate_and_used_results_are_order_dependent() {
    let body = "mov.u32 %r1, s;\n mov.u32 %r2, %tid.x;\n setp.eq.u32 %p1, %r2, 0;\n\
        @%p1 st.shared.u32 [%r1], 0;\n bar.sync 0;\n\
        red.shared.add.u32 [%r1], %r2;\n bar.sync 0;\n\
        ld.shared.u32 %r3, [%r1];\n @%p1 st.global.u32 [%rd0], %r3;";
    let run = kernel_run(body, 1, 64, SMEM);
    no_findings(&run);
    // 0 + 1 + ... + 63 = 2016
    assert_eq!(out_bits(&run, 0, 1), vec![Some(2016)]);
    let body = "mov.u32 %r1, s;\n mov.u32 %r2, %tid.x;\n atom.shared.add.u32 %r3, [%r1], 1;\n\
        mul.wide.u32 %rd1, %r3, 4;\n";
    let run = kernel_run(body, 1, 64, SMEM);
    assert!(kinds(&run).contains(&FindingKind::OrderDependent));
    // a plain read racing with atomics
    let body = "mov.u32 %r1, s;\n red.shared.add.u32 [%r1], 1;\n ld.shared.u32 %r3, [%r1];";
    let run = kernel_run(body, 1, 64, SMEM);
    assert!(kinds(&run).contains(&FindingKind::Race));
}

#[test]
fn barrier_reached_by_one_warp_deadlocks() {
    let body = "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @!%p1 bra END;\n bar.sync 1, 64;\nEND:\n";
    // warps 1 exits; barrier 1 expects 64 threads but only warp 0 arrives
    let run = kernel_run(body, 1, 64, "");
    assert_eq!(kinds(&run), vec![FindingKind::Deadlock]);
    assert_eq!(run.findings[0].waiting.len(), 1);
    assert_eq!(run.findings[0].waiting[0].threads, vec![(0, 31)]);
    // the default count treats exited warps as arrived (early return)
    let body =
        "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 40;\n @!%p1 bra END;\n bar.sync 0;\nEND:\n";
    no_findings(&kernel_run(body, 1, 128, ""));
}

#[test]
fn divergent_syncthreads_and_count_mismatch() {
    let body = "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @%p1 bra A;\n bar.sync 0;\n bra.uni END;\n\
        A:\n bar.sync 0;\nEND:\n";
    assert_eq!(
        kinds(&kernel_run(body, 1, 64, "")),
        vec![FindingKind::Divergence]
    );
    let body = "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n selp.u32 %r2, 64, 96, %p1;\n bar.sync 1, %r2;";
    let run = kernel_run(body, 1, 96, "");
    assert_eq!(kinds(&run), vec![FindingKind::Divergence]);
    assert!(
        run.findings[0].message.contains("count mismatch"),
        "{}",
        run.findings[0].message
    );
}

#[test]
fn producer_consumer_arrive_orders_and_recycling_is_caught() {
    // warp 0 produces s[lane] then bar.arrive 1, 64; warp 1 bar.sync 1, 64 then reads.
    let ok = "mov.u32 %r1, %tid.x;\n mov.u32 %r2, s;\n and.b32 %r3, %r1, 31;\n shl.b32 %r3, %r3, 2;\n add.u32 %r4, %r2, %r3;\n\
        setp.lt.u32 %p1, %r1, 32;\n @!%p1 bra CONS;\n st.shared.u32 [%r4], %r1;\n bar.arrive 1, 64;\n bra.uni END;\n\
        CONS:\n bar.sync 1, 64;\n ld.shared.u32 %r5, [%r4];\nEND:\n";
    no_findings(&kernel_run(ok, 1, 64, SMEM));
    // the producer writes again after its arrive: races with the consumer's read
    let racy = ok.replace(
        "bar.arrive 1, 64;\n",
        "bar.arrive 1, 64;\n st.shared.u32 [%r4], 0;\n",
    );
    assert_eq!(
        kinds(&kernel_run(&racy, 1, 64, SMEM)),
        vec![FindingKind::Race]
    );
    // two arrivals on the same barrier, the consumer syncs twice: recycling
    let recycle = "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @!%p1 bra CONS;\n\
        bar.arrive 1, 64;\n bar.arrive 1, 64;\n bra.uni END;\n\
        CONS:\n bar.sync 1, 64;\n bar.sync 1, 64;\nEND:\n";
    let run = kernel_run(recycle, 1, 64, "");
    assert_eq!(kinds(&run), vec![FindingKind::Divergence]);
    assert!(
        run.findings[0].message.contains("recycling"),
        "{}",
        run.findings[0].message
    );
    // the fix: a second barrier id per stage
    let fixed = recycle
        .replace(
            "bar.arrive 1, 64;\n bar.arrive 1, 64;",
            "bar.arrive 1, 64;\n bar.arrive 2, 64;",
        )
        .replace(
            "bar.sync 1, 64;\n bar.sync 1, 64;",
            "bar.sync 1, 64;\n bar.sync 2, 64;",
        );
    no_findings(&kernel_run(&fixed, 1, 64, ""));
}

#[test]
fn data_dependent_branches_and_selects_with_opaque_data() {
    let ptx = |body: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 x, .param .u64 y)\n{{\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
             ld.param.u64 %rd1, [x];\n ld.param.u64 %rd2, [y];\n mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd3, %r1, 4;\n\
             add.s64 %rd4, %rd1, %rd3;\n add.s64 %rd5, %rd2, %rd3;\n ld.global.f32 %f1, [%rd4];\n{body}\nret;\n}}\n"
        )
    };
    let tensors = vec![
        tensor("x", Role::Input, DType::F32, &[32]),
        tensor("y", Role::Output, DType::F32, &[32]),
    ];
    let params = vec![
        ParamValue::Tensor { tensor: 0 },
        ParamValue::Tensor { tensor: 1 },
    ];
    // setp + selp on data: a select, no finding
    let sel = ptx(
        "setp.gt.f32 %p1, %f1, 0f00000000;\n selp.f32 %f2, %f1, 0f00000000, %p1;\n st.global.f32 [%rd5], %f2;",
    );
    let inp = input(&sel, [32, 1, 1], tensors.clone(), params.clone());
    let (run, _) = run_cta(&inp, [0, 0, 0], Opaque::new());
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    // predicated move on data: also a select
    let pmov = ptx(
        "mov.f32 %f2, 0f00000000;\n setp.gt.f32 %p1, %f1, 0f00000000;\n @%p1 mov.f32 %f2, %f1;\n st.global.f32 [%rd5], %f2;",
    );
    let inp = input(&pmov, [32, 1, 1], tensors.clone(), params.clone());
    let (run, _) = run_cta(&inp, [0, 0, 0], Opaque::new());
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    // branch on data: unsupported, naming the reason
    let br =
        ptx("setp.gt.f32 %p1, %f1, 0f00000000;\n @%p1 bra L;\n st.global.f32 [%rd5], %f1;\nL:\n");
    let inp = input(&br, [32, 1, 1], tensors.clone(), params.clone());
    let (run, _) = run_cta(&inp, [0, 0, 0], Opaque::new());
    assert_eq!(run.findings.len(), 1);
    assert_eq!(run.findings[0].reason, "branch depends on tensor data");
    // integer manipulation of a real value
    let bits = ptx("mov.b32 %r2, %f1;\n and.b32 %r3, %r2, 0x7fffffff;\n");
    let inp = input(&bits, [32, 1, 1], tensors, params);
    let (run, _) = run_cta(&inp, [0, 0, 0], Opaque::new());
    assert_eq!(
        run.findings[0].reason,
        "bit-level manipulation of a real value"
    );
}
