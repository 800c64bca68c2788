//! The optional coverage record (`run_cta_with_coverage`): which
//! instructions ran, and whether the register values they wrote were read.

mod common;
use common::{input, tensor};

use ptxeq_exec::Role;
use ptxeq_exec::{Concrete, InstrRef, ParamValue, run_cta, run_cta_with_coverage};
use ptxeq_spec::DType;

/// Instruction indices (0 and 1 load the `out` pointer):
/// 2 `mov %r1, %tid.x` — read; 3 `setp.ne %p2, %r1, %r1` (always false)
/// — read as a guard; 4 `setp.eq %p1` — read as a guard; 5 `@%p1 mov %r2`
/// — runs in thread 7 only, never read; 6 `add %r3` — read by the store;
/// 7 `mov %r4` — never read; 8 `@%p2 mov %r5` — never runs; 9, 10 address;
/// 11 `st` — runs, no register result; 12 `call f` — f's `add`
/// (function 1, index 0) is read through the return binding; 13 `st`.
const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
    .func (.reg .b32 r) f(.reg .b32 a)\n{\n add.s32 r, a, 2;\n ret;\n}\n\
    .visible .entry k(.param .u64 out)\n{\n\
    .reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .pred %p<4>;\n\
    ld.param.u64 %rd0, [out];\ncvta.to.global.u64 %rd0, %rd0;\n\
    mov.u32 %r1, %tid.x;\n\
    setp.ne.u32 %p2, %r1, %r1;\n\
    setp.eq.u32 %p1, %r1, 7;\n\
    @%p1 mov.u32 %r2, 5;\n\
    add.u32 %r3, %r1, 1;\n\
    mov.u32 %r4, 9;\n\
    @%p2 mov.u32 %r5, 1;\n\
    mul.wide.u32 %rd1, %r1, 4;\n\
    add.u64 %rd2, %rd0, %rd1;\n\
    st.global.u32 [%rd2], %r3;\n\
    call.uni (%r6), f, (%r1);\n\
    st.global.u32 [%rd2+32], %r6;\n\
    ret;\n}\n";

#[test]
fn executed_and_read_flags() {
    let inp = input(
        PTX,
        [8, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[16])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let (run, _, cov) = run_cta_with_coverage(&inp, [0, 0, 0], Concrete::new(vec![]));
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let k = InstrRef::kernel;
    // 2 mov %r1 (read), 3 setp %p2 (read as a guard)
    assert!(cov.executed(k(2)) && cov.result_read(k(2)));
    assert!(cov.executed(k(3)) && cov.result_read(k(3)));
    // 4 setp %p1: read as the guard of 5
    assert!(cov.result_read(k(4)));
    // 5 @%p1 mov %r2: ran (thread 7), result never read
    assert!(cov.executed(k(5)) && cov.wrote(k(5)) && !cov.result_read(k(5)));
    // 6 add %r3: read by the store
    assert!(cov.executed(k(6)) && cov.result_read(k(6)));
    // 7 mov %r4: dead
    assert!(cov.executed(k(7)) && cov.wrote(k(7)) && !cov.result_read(k(7)));
    // 8 @%p2 mov: never ran, wrote nothing
    assert!(!cov.executed(k(8)) && !cov.wrote(k(8)));
    // 11 st: ran, no register result
    assert!(cov.executed(k(11)) && !cov.wrote(k(11)));
    // f's add is read through the return binding; the call ran
    assert!(cov.executed(InstrRef { func: 1, index: 0 }));
    assert!(cov.result_read(InstrRef { func: 1, index: 0 }));
    assert!(cov.executed(k(12)));

    // The run itself is the same as without coverage.
    let (plain, _) = run_cta(&inp, [0, 0, 0], Concrete::new(vec![]));
    assert_eq!(plain, run);
}

fn accesses(ptx: &str) -> Vec<(u64, u64)> {
    let inp = input(
        ptx,
        [8, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[32])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let (run, _, cov) = run_cta_with_coverage(&inp, [0, 0, 0], Concrete::new(vec![]));
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    cov.accesses().to_vec()
}

#[test]
fn access_fingerprints_see_addresses_and_stored_values() {
    let a = accesses(PTX);
    assert_eq!(a.len(), 8);
    // Each thread: two stores (the param loads are accesses too).
    assert!(a.iter().all(|&(n, _)| n >= 2), "{a:?}");
    // tid + 1 == tid - (-1): the same stores.
    let same = PTX.replace("add.u32 %r3, %r1, 1;", "sub.u32 %r3, %r1, -1;");
    assert_ne!(same, PTX);
    assert_eq!(accesses(&same), a);
    // A dead register changed: the same accesses.
    let dead = PTX.replace("mov.u32 %r4, 9;", "mov.u32 %r4, 10;");
    assert_ne!(dead, PTX);
    assert_eq!(accesses(&dead), a);
    // tid + 2: another value stored by every thread.
    let value = PTX.replace("add.u32 %r3, %r1, 1;", "add.u32 %r3, %r1, 2;");
    assert!(accesses(&value).iter().zip(&a).all(|(x, y)| x != y));
    // Another address.
    let addr = PTX.replace(
        "st.global.u32 [%rd2+32], %r6;",
        "st.global.u32 [%rd2+36], %r6;",
    );
    assert_ne!(addr, PTX);
    assert!(accesses(&addr).iter().zip(&a).all(|(x, y)| x != y));
}
