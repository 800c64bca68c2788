//! The step budget: a loop that does not end stops with a resource-limit
//! finding that names its back edge and the iterations reached.

mod common;
use common::{input, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{FindingKind, InstrRef, ParamValue};
use ptxeq_spec::DType;

/// `out[tid] = tid` after a loop of `%r1` iterations (instruction 6 is
/// the back edge `@%p1 bra LOOP`).
fn counted_loop(trips: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<2>;\n\
         ld.param.u64 %rd0, [out];\n\
         mov.u32 %r1, {trips};\n\
         mov.u32 %r2, 0;\n\
         LOOP:\n\
         add.u32 %r2, %r2, 1;\n\
         setp.lt.u32 %p1, %r2, %r1;\n\
         mov.u32 %r3, %tid.x;\n\
         @%p1 bra LOOP;\n\
         mul.wide.u32 %rd1, %r3, 4;\n\
         add.s64 %rd2, %rd0, %rd1;\n\
         st.global.u32 [%rd2], %r3;\n\
         ret;\n}}\n"
    )
}

fn kernel(trips: &str, threads: u32, max_steps: u64) -> ptxeq_exec::CtaInput {
    let mut inp = input(
        &counted_loop(trips),
        [threads, 1, 1],
        vec![tensor(
            "out",
            Role::Output,
            DType::U32,
            &[u64::from(threads)],
        )],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    inp.limits.max_steps = max_steps;
    inp
}

#[test]
fn a_loop_past_the_budget_is_named_with_its_iterations() {
    // 2^31 trips; 4 instructions per iteration; budget 10 000 steps.
    let r = run(&kernel("2147483648", 2, 10_000), vec![]);
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.kind, FindingKind::ResourceLimit);
    assert_eq!(f.reason, "step limit");
    // The back edge `@%p1 bra LOOP` is instruction 6.
    assert_eq!(f.instr, Some(InstrRef::kernel(6)));
    assert_eq!(r.stats.instructions_executed, 10_000);
    // Thread 0 runs first (FIFO) and spends the whole budget: 3 setup
    // steps, then 4 per iteration, the branch of the last one not taken.
    let iterations = (10_000 - 3) / 4;
    assert!(
        f.message
            .contains(&format!("after {iterations} iteration(s) of that thread")),
        "{}",
        f.message
    );
    assert!(f.message.contains("--max-steps"), "{}", f.message);
}

#[test]
fn a_loop_within_the_budget_finishes() {
    let r = run(&kernel("100", 2, 10_000), vec![]);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    // 3 + 4·100 + 3 (+ ret) steps per thread.
    assert_eq!(r.stats.instructions_executed, 2 * (3 + 4 * 100 + 4));
}
