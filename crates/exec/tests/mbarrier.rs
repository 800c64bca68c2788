//! mbarrier objects: a two-barrier producer/consumer pipeline and its
//! bugs (missing arrive, wrong parity, over-arrival, a read without a
//! wait, use before init), `cp.async.mbarrier.arrive`, state-token waits.

mod common;

use common::{input, kinds, no_findings, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CVal, CtaRun, FindingKind, ParamValue};
use ptxeq_spec::DType;

/// 64 threads: warp 0 produces 4 chunks of 32 floats of `x` into `buf`
/// (waits `empty`, stores, arrives on `full`), warp 1 consumes them
/// (waits `full`, reads, stores `2·v` to `y`, arrives on `empty`).
/// `edit` rewrites the text (to inject bugs).
fn pipeline(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let body = "\
mov.u32 %r0, %tid.x;\n\
and.b32 %r10, %r0, 31;\n\
setp.ne.u32 %p0, %r0, 0;\n\
@%p0 bra INITED;\n\
mbarrier.init.shared::cta.b64 [full], FULLCOUNT;\n\
mbarrier.init.shared::cta.b64 [empty], 32;\n\
INITED:\n\
bar.sync 0;\n\
shl.b32 %r14, %r10, 2;\n\
mov.u32 %r15, buf;\n\
add.s32 %r15, %r15, %r14;\n\
mov.u32 %r11, 0;\n\
setp.ge.u32 %p0, %r0, 32;\n\
@%p0 bra CONSUMER;\n\
PL:\n\
and.b32 %r12, %r11, 1;\n\
xor.b32 %r12, %r12, 1;\n\
PW:\n\
mbarrier.try_wait.parity.shared::cta.b64 %p1, [empty], %r12;\n\
@!%p1 bra PW;\n\
mad.lo.s32 %r13, %r11, 32, %r10;\n\
mul.wide.u32 %rd4, %r13, 4;\n\
add.s64 %rd5, %rd1, %rd4;\n\
ld.global.f32 %f1, [%rd5];\n\
st.shared.f32 [%r15], %f1;\n\
mbarrier.arrive.shared::cta.b64 %rd6, [full];\n\
add.s32 %r11, %r11, 1;\n\
setp.lt.u32 %p2, %r11, 4;\n\
@%p2 bra PL;\n\
ret;\n\
CONSUMER:\n\
and.b32 %r12, %r11, 1;\n\
CW:\n\
mbarrier.try_wait.parity.shared::cta.b64 %p1, [full], %r12;\n\
@!%p1 bra CW;\n\
ld.shared.f32 %f2, [%r15];\n\
add.f32 %f2, %f2, %f2;\n\
mad.lo.s32 %r13, %r11, 32, %r10;\n\
mul.wide.u32 %rd4, %r13, 4;\n\
add.s64 %rd5, %rd2, %rd4;\n\
st.global.f32 [%rd5], %f2;\n\
EMPTYARRIVE: mbarrier.arrive.shared::cta.b64 %rd6, [empty];\n\
add.s32 %r11, %r11, 1;\n\
setp.lt.u32 %p2, %r11, 4;\n\
@%p2 bra CONSUMER;\n\
ret;\n"
        .replace("FULLCOUNT", "32");
    let ptx = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 full;\n.shared .align 8 .b64 empty;\n\
         .shared .align 4 .b8 buf[128];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         {body}}}\n"
    );
    let ptx = edit(ptx);
    let inp = input(
        &ptx,
        [64, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[128]),
            tensor("y", Role::Output, DType::F32, &[128]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let x: Vec<f64> = (0..128).map(|i| i as f64 + 1.0).collect();
    run(&inp, vec![x, vec![]])
}

fn first(r: &CtaRun<CVal>, k: FindingKind) -> &ptxeq_exec::Finding {
    r.findings
        .iter()
        .find(|f| f.kind == k)
        .unwrap_or_else(|| panic!("no {k:?} finding: {:#?}", r.findings))
}

#[test]
fn producer_consumer_pipeline_is_exact_and_race_free() {
    let r = pipeline(&|s| s);
    no_findings(&r);
    let y = out_f64(&r, 1, 128);
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, Some(2.0 * (i as f64 + 1.0)), "y[{i}]");
    }
}

#[test]
fn missing_empty_arrive_deadlocks_naming_the_waiters() {
    let r = pipeline(&|s| {
        s.replace(
            "EMPTYARRIVE: mbarrier.arrive.shared::cta.b64 %rd6, [empty];",
            "EMPTYARRIVE:",
        )
    });
    let f = first(&r, FindingKind::Deadlock);
    assert!(f.message.contains("mbarrier `empty`"), "{}", f.message);
    assert!(!f.waiting.is_empty());
}

#[test]
fn consumer_on_the_wrong_parity_is_reported_with_both_threads() {
    // Waits on parity 1 first: passes at once on a fresh barrier.
    let r = pipeline(&|s| {
        s.replace(
            "CONSUMER:\nand.b32 %r12, %r11, 1;",
            "CONSUMER:\nand.b32 %r12, %r11, 1;\nxor.b32 %r12, %r12, 1;",
        )
    });
    let f = first(&r, FindingKind::Race);
    assert_eq!(f.accesses.len(), 2, "{f:#?}");
    assert_ne!(f.accesses[0].thread.linear, f.accesses[1].thread.linear);
}

#[test]
fn reading_without_the_wait_races_with_the_producer_store() {
    let r = pipeline(&|s| {
        s.replace(
            "mbarrier.try_wait.parity.shared::cta.b64 %p1, [full], %r12;\n@!%p1 bra CW;",
            "",
        )
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("buf"), "{}", f.message);
}

#[test]
fn over_arrival_names_the_extra_arrival_and_the_completing_one() {
    let r = pipeline(&|s| {
        s.replace(
            "mbarrier.init.shared::cta.b64 [full], 32;",
            "mbarrier.init.shared::cta.b64 [full], 16;",
        )
    });
    let f = first(&r, FindingKind::Divergence);
    assert!(f.message.contains("over-arrival"), "{}", f.message);
    assert_eq!(f.accesses.len(), 2);
}

#[test]
fn use_before_init_without_a_barrier_is_a_race_on_the_object() {
    let r = pipeline(&|s| s.replace("INITED:\nbar.sync 0;", "INITED:"));
    assert!(kinds(&r).contains(&FindingKind::Race), "{:#?}", r.findings);
}

#[test]
fn reinit_while_valid_is_reported() {
    let r = pipeline(&|s| {
        s.replace(
            "mbarrier.init.shared::cta.b64 [empty], 32;",
            "mbarrier.init.shared::cta.b64 [empty], 32;\nmbarrier.init.shared::cta.b64 [empty], 32;",
        )
    });
    let f = first(&r, FindingKind::Divergence);
    assert!(
        f.message.contains("re-init") || f.message.contains("valid"),
        "{}",
        f.message
    );
}

/// Two arrivals by one thread complete phases 0 and 1 back to back; the
/// waiter on parity 0 (thread 1) is not ordered before the second one, so
/// in another schedule it polls only after phase 1 completed, sees parity
/// 0 again and waits for phase 2: a waiter a whole phase behind.
#[test]
fn a_waiter_a_whole_phase_behind_is_reported_with_both_threads() {
    let body = "\
mov.u32 %r0, %tid.x;\n\
setp.ne.u32 %p0, %r0, 0;\n\
@%p0 bra INITED;\n\
mbarrier.init.shared::cta.b64 [bar], 1;\n\
INITED:\n\
bar.sync 0;\n\
@%p0 bra WAITER;\n\
mbarrier.arrive.shared::cta.b64 %rd6, [bar];\n\
SECOND: mbarrier.arrive.shared::cta.b64 %rd6, [bar];\n\
ret;\n\
WAITER:\n\
mov.u32 %r12, 0;\n\
CW:\n\
mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %r12;\n\
@!%p1 bra CW;\n\
ret;\n";
    let run_with = |body: &str| {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n\
             .visible .entry k(.param .u64 py)\n{{\n\
             .reg .b32 %r<32>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
             .shared .align 8 .b64 bar;\n\
             {body}}}\n"
        );
        let inp = input(
            &ptx,
            [2, 1, 1],
            vec![tensor("y", Role::Output, DType::F32, &[1])],
            vec![ParamValue::Tensor { tensor: 0 }],
        );
        run(&inp, vec![vec![]])
    };
    let r = run_with(body);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Race || f.kind == FindingKind::Deadlock)
        .unwrap_or_else(|| panic!("no race or deadlock: {:#?}", r.findings));
    if f.kind == FindingKind::Race {
        // The engine's schedule parks the waiter at phase 0 (the last
        // thread out of bar.sync runs first), so phase 1's completion
        // finds it a whole phase behind.
        assert!(f.message.contains("a whole phase behind"), "{}", f.message);
        assert_eq!(f.accesses.len(), 2, "{f:#?}");
        assert_ne!(f.accesses[0].thread.linear, f.accesses[1].thread.linear);
    }
    // One arrival: phase 0 only, the waiter passes it, nothing to report.
    let r = run_with(&body.replace(
        "SECOND: mbarrier.arrive.shared::cta.b64 %rd6, [bar];",
        "SECOND:",
    ));
    no_findings(&r);
}

/// One consumer thread releasing the stage for its whole warp (`empty`
/// expects one arrival) without a collective that orders the other
/// consumers' waits before it: their `full` waits lag (and their reads of
/// `buf` race with the producer's refill). Execution slots are only for
/// wgmma kernels (`exec_order.rs`); nothing else may excuse this.
#[test]
fn an_elected_release_without_a_collective_is_reported() {
    let r = pipeline(&|s| {
        s.replace(
            "mbarrier.init.shared::cta.b64 [empty], 32;",
            "mbarrier.init.shared::cta.b64 [empty], 1;",
        )
        .replace(
            "EMPTYARRIVE: mbarrier.arrive.shared::cta.b64 %rd6, [empty];",
            "setp.ne.u32 %p3, %r10, 0;\nEMPTYARRIVE: @!%p3 mbarrier.arrive.shared::cta.b64 %rd6, [empty];",
        )
    });
    assert!(kinds(&r).contains(&FindingKind::Race), "{:#?}", r.findings);
}

#[test]
fn a_wait_outside_a_polling_loop_is_unsupported() {
    let r = pipeline(&|s| s.replace("@!%p1 bra CW;", ""));
    let f = first(&r, FindingKind::Unsupported);
    assert!(f.message.contains("polling loop"), "{}", f.message);
}

/// cuda::barrier on sm_80 as nvcc lowers `memcpy_async` + arrive_and_wait:
/// each thread's cp.async completes on the barrier through
/// `cp.async.mbarrier.arrive`, then `arrive` + a `test_wait` loop on the
/// returned state.
fn cp_async_barrier(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n.shared .align 4 .b8 buf[256];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\n\
         setp.ne.u32 %p0, %r0, 0;\n@%p0 bra I;\n\
         mov.u32 %r5, %ntid.x;\nmbarrier.init.shared.b64 [bar], %r5;\n\
         I:\nbar.sync 0;\n\
         shl.b32 %r1, %r0, 2;\nmov.u32 %r2, buf;\nadd.s32 %r3, %r2, %r1;\n\
         mul.wide.u32 %rd3, %r0, 4;\nadd.s64 %rd4, %rd1, %rd3;\n\
         cp.async.ca.shared.global [%r3], [%rd4], 4, 4;\n\
         mov.u32 %r4, bar;\n\
         CPARRIVE: cp.async.mbarrier.arrive.shared.b64 [%r4];\n\
         mbarrier.arrive.shared.b64 %rd5, [%r4];\n\
         mov.u64 %rd10, %globaltimer;\n\
         mov.u32 %r21, 0;\n\
         W:\n{\n.reg .pred P_OUT;\nmbarrier.test_wait.shared.b64 P_OUT, [%r4], %rd5;\nselp.b32 %r12, 1, 0, P_OUT;\n}\n\
         setp.eq.s32 %p2, %r12, 0;\n@%p2 bra S;\nbra.uni D;\n\
         S:\nadd.s32 %r21, %r21, 1;\nsetp.lt.s32 %p3, %r21, 16;\n@%p3 bra W;\n\
         mov.u64 %rd11, %globaltimer;\nsub.s64 %rd12, %rd11, %rd10;\ncvt.u32.u64 %r20, %rd12;\nnanosleep.u32 %r20;\nbra.uni W;\n\
         D:\n\
         mov.u32 %r6, 63;\nsub.s32 %r6, %r6, %r0;\nshl.b32 %r6, %r6, 2;\nadd.s32 %r7, %r2, %r6;\n\
         ld.shared.f32 %f1, [%r7];\nadd.f32 %f1, %f1, 0f3F800000;\n\
         add.s64 %rd6, %rd2, %rd3;\nst.global.f32 [%rd6], %f1;\nret;\n}\n"
        .to_string();
    let ptx = edit(ptx);
    let inp = input(
        &ptx,
        [64, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[64]),
            tensor("y", Role::Output, DType::F32, &[64]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let x: Vec<f64> = (0..64).map(|i| i as f64).collect();
    run(&inp, vec![x, vec![]])
}

#[test]
fn cp_async_completing_on_a_barrier_orders_the_copies_before_the_waiters() {
    let r = cp_async_barrier(&|s| s);
    no_findings(&r);
    let y = out_f64(&r, 1, 64);
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, Some((63 - i) as f64 + 1.0), "y[{i}]");
    }
}

#[test]
fn without_the_cp_async_arrive_the_copies_race_with_the_reads() {
    let r = cp_async_barrier(&|s| {
        s.replace("CPARRIVE: cp.async.mbarrier.arrive.shared.b64 [%r4];", "")
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("cp.async"), "{}", f.message);
}

#[test]
fn a_timer_read_used_outside_the_polling_loop_stays_unsupported() {
    let r = cp_async_barrier(&|s| {
        s.replace(
            "mov.u32 %r6, 63;",
            "cvt.u32.u64 %r9, %rd10;\nst.global.u32 [%rd2], %r9;\nmov.u32 %r6, 63;",
        )
    });
    let f = first(&r, FindingKind::Unsupported);
    assert!(f.message.contains("globaltimer"), "{}", f.message);
}

/// One producer thread stores 32 words and signals them as transaction
/// bytes (`arrive.expect_tx` 128, then `complete_tx` 128); the other 31
/// lanes wait with `try_wait.parity 0`, then read.
fn tx_kernel(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n.shared .align 4 .b8 buf[128];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\nmov.u32 %r2, buf;\n\
         setp.ne.u32 %p0, %r0, 0;\n@%p0 bra I;\n\
         mbarrier.init.shared::cta.b64 [bar], 1;\n\
         I:\nbar.sync 0;\n@%p0 bra C;\n\
         mov.u32 %r3, 0;\n\
         L:\nshl.b32 %r4, %r3, 2;\nadd.s32 %r5, %r2, %r4;\ncvt.rn.f32.u32 %f1, %r3;\nst.shared.f32 [%r5], %f1;\n\
         add.s32 %r3, %r3, 1;\nsetp.lt.u32 %p1, %r3, 32;\n@%p1 bra L;\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 128;\n\
         COMPLETE: mbarrier.complete_tx.shared::cta.b64 [bar], 128;\n\
         ret;\n\
         C:\nW:\nmbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;\n@!%p2 bra W;\n\
         shl.b32 %r6, %r0, 2;\nadd.s32 %r7, %r2, %r6;\nld.shared.f32 %f2, [%r7];\n\
         mul.wide.u32 %rd3, %r0, 4;\nadd.s64 %rd4, %rd2, %rd3;\nst.global.f32 [%rd4], %f2;\nret;\n}\n"
        .to_string();
    let ptx = edit(ptx);
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[32]),
            tensor("y", Role::Output, DType::F32, &[32]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    run(&inp, vec![vec![0.0; 32], vec![]])
}

#[test]
fn a_phase_waits_for_its_transaction_bytes() {
    let r = tx_kernel(&|s| s);
    no_findings(&r);
    let y = out_f64(&r, 1, 32);
    for (i, v) in y.iter().enumerate().skip(1) {
        assert_eq!(*v, Some(i as f64), "y[{i}]");
    }
}

#[test]
fn missing_transaction_bytes_deadlock_the_waiters() {
    let r = tx_kernel(&|s| {
        s.replace(
            "COMPLETE: mbarrier.complete_tx.shared::cta.b64 [bar], 128;",
            "",
        )
    });
    let f = first(&r, FindingKind::Deadlock);
    assert!(f.message.contains("tx-count 128;"), "{}", f.message);
}

/// Thread 0 arms the barrier for 128 bytes (`arrive.expect_tx`) and
/// issues a 128-byte bulk copy of `x` into `buf` completing on it; all
/// threads wait (parity 0) and read `buf[31 - t]`.
fn bulk_kernel(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{\n\
         .reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n.reg .pred %p<4>;\n\
         .shared .align 8 .b64 bar;\n.shared .align 16 .b8 buf[128];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\nmov.u32 %r2, buf;\nmov.u32 %r3, bar;\n\
         setp.ne.u32 %p0, %r0, 0;\n@%p0 bra I;\n\
         mbarrier.init.shared::cta.b64 [%r3], 1;\n\
         I:\nbar.sync 0;\n@%p0 bra C;\n\
         mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], EXPECT;\n\
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd1], 128, [%r3];\n\
         C:\nWAIT: mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;\n@!%p2 bra WAIT;\n\
         mov.u32 %r6, 31;\nsub.s32 %r6, %r6, %r0;\nshl.b32 %r6, %r6, 2;\nadd.s32 %r7, %r2, %r6;\nld.shared.f32 %f2, [%r7];\n\
         mul.wide.u32 %rd3, %r0, 4;\nadd.s64 %rd4, %rd2, %rd3;\nst.global.f32 [%rd4], %f2;\nret;\n}\n"
        .replace("EXPECT", "128");
    let ptx = edit(ptx);
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[32]),
            tensor("y", Role::Output, DType::F32, &[32]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let x: Vec<f64> = (0..32).map(|i| i as f64 * 0.5).collect();
    run(&inp, vec![x, vec![]])
}

#[test]
fn a_bulk_copy_lands_at_its_phase_and_is_ordered_before_the_waiters() {
    let r = bulk_kernel(&|s| s);
    no_findings(&r);
    let y = out_f64(&r, 1, 32);
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, Some((31 - i) as f64 * 0.5), "y[{i}]");
    }
}

#[test]
fn a_read_without_the_wait_races_with_the_bulk_copy() {
    let r = bulk_kernel(&|s| {
        s.replace(
            "@!%p2 bra WAIT;",
            "@!%p2 bra WAIT;\nld.shared.f32 %f3, [%r2+64];",
        )
        .replace("C:\nWAIT:", "C:\nld.shared.f32 %f4, [%r2];\nWAIT:")
    });
    let f = first(&r, FindingKind::Race);
    assert!(f.message.contains("buf"), "{}", f.message);
    // One side is the bulk copy's write (instruction 13).
    assert!(f.accesses.iter().any(|a| a.instr.index == 13), "{f:#?}");
}

#[test]
fn more_bytes_than_expected_is_an_over_arrival() {
    let r = bulk_kernel(&|s| {
        s.replace(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 128;",
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 64;",
        )
    });
    let f = first(&r, FindingKind::Divergence);
    assert!(f.message.contains("over-arrival"), "{}", f.message);
}

#[test]
fn fewer_bytes_than_expected_deadlock() {
    let r = bulk_kernel(&|s| {
        s.replace(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 128;",
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 256;",
        )
    });
    let f = first(&r, FindingKind::Deadlock);
    assert!(
        f.message.contains("tx-count 256 with 128 bytes"),
        "{}",
        f.message
    );
}
