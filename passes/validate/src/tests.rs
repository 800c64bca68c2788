//! Focused tests on small hand-written kernels. Instruction indices in the
//! expectations are counted by hand from the PTX (the `// n` comments).

use ptxeq_lower::lower_source;

use crate::{ProblemKind, StructuredReport, validate};

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// Lowers `body` (functions after the PTX header) and validates `entry`.
fn check(body: &str, entry: &str, tensors: &[bool]) -> StructuredReport {
    let text = format!("{HEADER}{body}");
    let lowered = lower_source(&text);
    assert!(
        lowered.diagnostics.is_empty(),
        "lowering diagnostics: {:?}",
        lowered.diagnostics
    );
    let m = &lowered.module;
    for f in m.kernels.iter().chain(&m.funcs) {
        if let Some((i, d)) = f.unknowns().next() {
            panic!("{}: instruction {i} did not decode: {:?}", f.name, d.instr);
        }
    }
    let k = m.kernel(entry).expect("entry");
    validate(k, &|n| m.func(n), tensors)
}

fn kinds(r: &StructuredReport) -> Vec<(u32, ProblemKind)> {
    r.problems.iter().map(|p| (p.instr, p.kind)).collect()
}

const DATA_BRANCH: &str = r#"
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    ld.param.u64 %rd2, [y];              // 1
    cvta.to.global.u64 %rd3, %rd1;       // 2
    mov.u32 %r1, %tid.x;                 // 3
    mul.wide.u32 %rd4, %r1, 4;           // 4
    add.s64 %rd5, %rd3, %rd4;            // 5
    ld.global.f32 %f1, [%rd5];           // 6
    setp.gt.f32 %p1, %f1, 0f00000000;    // 7
    @%p1 bra $L_done;                    // 8
    mul.f32 %f1, %f1, 0f3F000000;        // 9
$L_done:
    cvta.to.global.u64 %rd3, %rd2;       // 10
    add.s64 %rd3, %rd3, %rd4;            // 11
    st.global.f32 [%rd3], %f1;           // 12
    ret;                                 // 13
}
"#;

#[test]
fn branch_on_loaded_value_is_reported_with_its_chain() {
    let r = check(DATA_BRANCH, "k", &[true, false]);
    assert!(!r.is_structured());
    assert_eq!(kinds(&r), vec![(8, ProblemKind::Branch)]);
    let p = &r.problems[0];
    assert_eq!(p.function, "k");
    assert!(p.calls.is_empty());
    assert_eq!(p.origin, Some(6));
    assert_eq!(p.chain, vec![6, 7, 8]);
    assert_eq!(
        p.message,
        "branch at instruction 8 depends on tensor data: its predicate %p1 is computed \
         (setp.gt.f32 at 7) from tensor data loaded at 6 (ld.global.f32 through tensor \
         param 0 `x`)"
    );
}

#[test]
fn loads_through_non_tensor_params_are_not_data() {
    // The same kernel with `x` bound to an output (or a scalar): what it
    // holds was written by the kernel, not tensor data.
    assert!(check(DATA_BRANCH, "k", &[false, false]).is_structured());
    // Missing entries count as `false`.
    assert!(check(DATA_BRANCH, "k", &[]).is_structured());
    // Marking only `y` does not taint loads through `x`.
    assert!(check(DATA_BRANCH, "k", &[false, true]).is_structured());
}

/// `for (i = 0; i < n[0]; i++) acc += 1;` as a bottom-tested loop.
const DATA_LOOP: &str = r#"
.visible .entry k(.param .u64 n, .param .u64 out)
{
    .reg .pred %p<2>;
    .reg .f32 %f<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [n];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.u32 %r1, [%rd2];           // 2
    mov.u32 %r2, 0;                      // 3
    mov.f32 %f1, 0f00000000;             // 4
$L_loop:
    add.f32 %f1, %f1, 0f3F800000;        // 5
    add.s32 %r2, %r2, 1;                 // 6
    setp.lt.s32 %p1, %r2, %r1;           // 7
    @%p1 bra $L_loop;                    // 8
    ld.param.u64 %rd3, [out];            // 9
    st.global.f32 [%rd3], %f1;           // 10
    ret;                                 // 11
}
"#;

#[test]
fn loop_bound_read_from_a_tensor_is_a_loop_bound_problem() {
    let r = check(DATA_LOOP, "k", &[true, false]);
    assert_eq!(kinds(&r), vec![(8, ProblemKind::LoopBound)]);
    let p = &r.problems[0];
    assert_eq!(p.origin, Some(2));
    assert_eq!(p.chain, vec![2, 7, 8]);
    assert!(
        p.message.starts_with(
            "loop bound depends on tensor data at instruction 8 (the back-edge branch of the loop at 5)"
        ),
        "{}",
        p.message
    );
}

/// A top-tested `while (i < n[0])` loop: the data branch is the loop exit,
/// the back edge is an unconditional `bra.uni`.
const DATA_WHILE: &str = r#"
.visible .entry k(.param .u64 n, .param .u32 m)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [n];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.u32 %r1, [%rd2];           // 2
    mov.u32 %r2, 0;                      // 3
$L_head:
    setp.ge.s32 %p1, %r2, %r1;           // 4
    @%p1 bra $L_done;                    // 5
    add.s32 %r2, %r2, 1;                 // 6
    bra.uni $L_head;                     // 7
$L_done:
    ret;                                 // 8
}
"#;

#[test]
fn data_dependent_loop_exit_is_a_loop_bound_problem() {
    let r = check(DATA_WHILE, "k", &[true, false]);
    assert_eq!(kinds(&r), vec![(5, ProblemKind::LoopBound)]);
    assert!(
        r.problems[0]
            .message
            .contains("(the exit branch of the loop at 4)"),
        "{}",
        r.problems[0].message
    );
}

/// nvcc's rotated loop: a zero-trip test in front of a bottom-tested loop,
/// both on the loaded bound.
const DATA_ROTATED: &str = r#"
.visible .entry k(.param .u64 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [n];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.u32 %r1, [%rd2];           // 2
    setp.lt.s32 %p1, %r1, 1;             // 3
    @%p1 bra $L_done;                    // 4
    mov.u32 %r2, 0;                      // 5
$L_loop:
    add.s32 %r2, %r2, 1;                 // 6
    setp.lt.s32 %p2, %r2, %r1;           // 7
    @%p2 bra $L_loop;                    // 8
$L_done:
    ret;                                 // 9
}
"#;

#[test]
fn zero_trip_test_of_a_data_bounded_loop_is_a_loop_bound_problem() {
    let r = check(DATA_ROTATED, "k", &[true]);
    assert_eq!(
        kinds(&r),
        vec![(4, ProblemKind::LoopBound), (8, ProblemKind::LoopBound)]
    );
    assert!(
        r.problems[0]
            .message
            .contains("(the zero-trip test of the loop at 6)"),
        "{}",
        r.problems[0].message
    );
}

/// A loop bounded by a scalar param with a data-dependent `if` inside: the
/// `if` is a plain branch, the loop is fine.
const DATA_IF_IN_COUNTED_LOOP: &str = r#"
.visible .entry k(.param .u64 x, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .f32 %f<3>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x];              // 0
    ld.param.u32 %r1, [n];               // 1
    cvta.to.global.u64 %rd2, %rd1;       // 2
    mov.u32 %r2, 0;                      // 3
    mov.f32 %f2, 0f00000000;             // 4
$L_loop:
    ld.global.f32 %f1, [%rd2];           // 5
    setp.lt.f32 %p1, %f1, 0f00000000;    // 6
    @%p1 bra $L_skip;                    // 7
    add.f32 %f2, %f2, %f1;               // 8
$L_skip:
    add.s64 %rd2, %rd2, 4;               // 9
    add.s32 %r2, %r2, 1;                 // 10
    setp.lt.s32 %p2, %r2, %r1;           // 11
    @%p2 bra $L_loop;                    // 12
    ret;                                 // 13
}
"#;

#[test]
fn data_if_inside_a_counted_loop_is_a_branch_not_a_loop_bound() {
    let r = check(DATA_IF_IN_COUNTED_LOOP, "k", &[true, false]);
    assert_eq!(kinds(&r), vec![(7, ProblemKind::Branch)]);
}

/// `out[t] = table[ids[t]]`.
const GATHER: &str = r#"
.visible .entry k(.param .u64 ids, .param .u64 table, .param .u64 out)
{
    .reg .f32 %f<2>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<10>;
    ld.param.u64 %rd1, [ids];            // 0
    ld.param.u64 %rd2, [table];          // 1
    cvta.to.global.u64 %rd3, %rd1;       // 2
    ld.global.u32 %r1, [%rd3];           // 3
    mul.wide.u32 %rd4, %r1, 4;           // 4
    cvta.to.global.u64 %rd5, %rd2;       // 5
    add.s64 %rd6, %rd5, %rd4;            // 6
    ld.global.f32 %f1, [%rd6];           // 7
    ld.param.u64 %rd7, [out];            // 8
    st.global.f32 [%rd7], %f1;           // 9
    ret;                                 // 10
}
"#;

#[test]
fn gather_through_an_index_tensor_is_an_address_problem() {
    let r = check(GATHER, "k", &[true, true, false]);
    assert_eq!(kinds(&r), vec![(7, ProblemKind::Address)]);
    let p = &r.problems[0];
    assert_eq!(p.origin, Some(3));
    assert_eq!(p.chain, vec![3, 4, 6, 7]);
    assert!(
        p.message.starts_with(
            "global-memory address depends on tensor data at instruction 7 (load ld.global.f32: \
             a gather/scatter through an index tensor): its address register %rd6 is computed \
             (add.s64 at 6) from tensor data loaded at 3 (ld.global.u32 through tensor param 0 `ids`)"
        ),
        "{}",
        p.message
    );
    // Only `table` is a tensor input: `ids` holds indices the kernel wrote.
    assert!(check(GATHER, "k", &[false, true, false]).is_structured());
}

/// Histogram: a shared-memory increment at an address read from `bins`.
const SHARED_SCATTER: &str = r#"
.visible .entry k(.param .u64 bins)
{
    .reg .f32 %f<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 hist[1024];
    ld.param.u64 %rd1, [bins];           // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.nc.u32 %r1, [%rd2];        // 2
    shl.b32 %r2, %r1, 2;                 // 3
    mov.u32 %r3, hist;                   // 4
    add.s32 %r4, %r3, %r2;               // 5
    ld.shared.f32 %f1, [%r4];            // 6
    add.f32 %f2, %f1, 0f3F800000;        // 7
    st.shared.f32 [%r4], %f2;            // 8
    ret;                                 // 9
}
"#;

#[test]
fn shared_address_from_global_data_is_an_address_problem() {
    let r = check(SHARED_SCATTER, "k", &[true]);
    assert_eq!(
        kinds(&r),
        vec![(6, ProblemKind::Address), (8, ProblemKind::Address)]
    );
    assert!(
        r.problems[0]
            .message
            .starts_with("shared-memory address depends on tensor data at instruction 6"),
        "{}",
        r.problems[0].message
    );
    assert!(r.problems[1].message.contains("(store st.shared.f32"));
}

/// `%r1` first holds a loaded value (data flow only), then is reused for
/// the thread index that addresses and branches: no problem.
const REG_REUSE: &str = r#"
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [x];              // 0
    ld.param.u64 %rd2, [y];              // 1
    cvta.to.global.u64 %rd3, %rd1;       // 2
    ld.global.u32 %r1, [%rd3];           // 3
    cvt.rn.f32.s32 %f1, %r1;             // 4
    mov.u32 %r1, %tid.x;                 // 5
    setp.gt.u32 %p1, %r1, 31;            // 6
    @%p1 bra $L_done;                    // 7
    mul.wide.u32 %rd4, %r1, 4;           // 8
    cvta.to.global.u64 %rd5, %rd2;       // 9
    add.s64 %rd6, %rd5, %rd4;            // 10
    st.global.f32 [%rd6], %f1;           // 11
$L_done:
    ret;                                 // 12
}
"#;

#[test]
fn register_reused_for_an_index_after_data_is_clean() {
    assert!(check(REG_REUSE, "k", &[true, false]).is_structured());
}

/// The same reuse across a loop back edge: `%r1` is data inside the body
/// but an index again on every path back to the header.
const REG_REUSE_LOOP: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    mov.u32 %r1, 0;                      // 2
    mov.u32 %r3, 0;                      // 3
    mov.f32 %f2, 0f00000000;             // 4
$L_loop:
    mul.wide.u32 %rd3, %r1, 4;           // 5
    add.s64 %rd4, %rd2, %rd3;            // 6
    ld.global.u32 %r1, [%rd4];           // 7
    cvt.rn.f32.s32 %f1, %r1;             // 8
    add.f32 %f2, %f2, %f1;               // 9
    add.s32 %r3, %r3, 1;                 // 10
    mov.u32 %r1, %r3;                    // 11
    setp.lt.u32 %p1, %r3, 4;             // 12
    @%p1 bra $L_loop;                    // 13
    st.global.f32 [%rd2], %f2;           // 14
    ret;                                 // 15
}
"#;

#[test]
fn register_reuse_across_a_loop_is_clean() {
    assert!(check(REG_REUSE_LOOP, "k", &[true]).is_structured());
}

/// The loop-carried version that *is* a problem: the loaded value feeds the
/// next iteration's address (pointer chasing).
const POINTER_CHASE: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    mov.u32 %r1, 0;                      // 2
    mov.u32 %r3, 0;                      // 3
$L_loop:
    mul.wide.u32 %rd3, %r1, 4;           // 4
    add.s64 %rd4, %rd2, %rd3;            // 5
    ld.global.u32 %r1, [%rd4];           // 6
    add.s32 %r3, %r3, 1;                 // 7
    setp.lt.u32 %p1, %r3, 4;             // 8
    @%p1 bra $L_loop;                    // 9
    ret;                                 // 10
}
"#;

#[test]
fn loop_carried_data_reaches_the_address_through_the_back_edge() {
    let r = check(POINTER_CHASE, "k", &[true]);
    assert_eq!(kinds(&r), vec![(6, ProblemKind::Address)]);
    let p = &r.problems[0];
    // The data def is the load itself, one iteration earlier.
    assert_eq!(p.origin, Some(6));
    assert_eq!(p.chain, vec![6, 4, 5, 6]);
}

/// Data-dependent selection in every data-flow form: `selp`, `@p mov`,
/// `max`, `@p st`, `@p ld`. None is control flow.
const DATA_FLOW_SELECTS: &str = r#"
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .pred %p<2>;
    .reg .f32 %f<6>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    ld.param.u64 %rd2, [y];              // 1
    cvta.to.global.u64 %rd3, %rd1;       // 2
    cvta.to.global.u64 %rd4, %rd2;       // 3
    ld.global.f32 %f1, [%rd3];           // 4
    setp.gt.f32 %p1, %f1, 0f00000000;    // 5
    selp.f32 %f2, %f1, 0f00000000, %p1;  // 6
    mov.f32 %f3, %f1;                    // 7
    @%p1 mov.f32 %f3, 0f00000000;        // 8
    max.f32 %f4, %f2, %f3;               // 9
    @%p1 st.global.f32 [%rd4], %f4;      // 10
    @!%p1 ld.global.f32 %f5, [%rd3+4];   // 11
    @%p1 st.global.f32 [%rd4+4], %f5;    // 12
    ret;                                 // 13
}
"#;

#[test]
fn predicated_data_flow_is_not_control_flow() {
    assert!(check(DATA_FLOW_SELECTS, "k", &[true, false]).is_structured());
}

/// A guarded write under a data predicate makes its destination data: the
/// index chosen by `@%p1 mov` then addresses memory.
const GUARDED_INDEX: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.f32 %f1, [%rd2];           // 2
    setp.gt.f32 %p1, %f1, 0f00000000;    // 3
    mov.u32 %r1, 0;                      // 4
    @%p1 mov.u32 %r1, 1;                 // 5
    mul.wide.u32 %rd3, %r1, 4;           // 6
    add.s64 %rd4, %rd2, %rd3;            // 7
    ld.global.f32 %f2, [%rd4];           // 8
    ret;                                 // 9
}
"#;

#[test]
fn index_chosen_under_a_data_predicate_is_data() {
    let r = check(GUARDED_INDEX, "k", &[true]);
    assert_eq!(kinds(&r), vec![(8, ProblemKind::Address)]);
    assert_eq!(r.problems[0].chain, vec![2, 3, 5, 6, 7, 8]);
    assert_eq!(r.problems[0].origin, Some(2));
}

/// Triton's masked load: `mov 0; @%p ld.global.b32 {%r}` with an index mask.
const TRITON_MASKED: &str = r#"
.visible .entry k(.param .u64 x, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x];              // 0
    ld.param.u32 %r3, [n];               // 1
    mov.u32 %r1, %tid.x;                 // 2
    mul.wide.u32 %rd2, %r1, 4;           // 3
    add.s64 %rd3, %rd1, %rd2;            // 4
    setp.lt.s32 %p1, %r1, %r3;           // 5
    mov.u32 %r2, 0x0;                    // 6
    @%p1 ld.global.b32 { %r2 }, [ %rd3 + 0 ];  // 7
    setp.eq.s32 %p2, %r2, 0;             // 8
    @%p2 bra $L_done;                    // 9
    @%p1 st.global.b32 [ %rd3 + 0 ], { %r2 };  // 10
$L_done:
    ret;                                 // 11
}
"#;

#[test]
fn triton_masked_load_is_data_and_its_index_mask_is_not() {
    let r = check(TRITON_MASKED, "k", &[true, false]);
    assert_eq!(kinds(&r), vec![(9, ProblemKind::Branch)]);
    assert_eq!(r.problems[0].chain, vec![7, 8, 9]);
}

/// A `.func` that branches on its argument; called with tensor data.
const FUNC_BRANCH: &str = r#"
.func (.param .b32 ret) relu(.param .b32 a)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    ld.param.f32 %f1, [a];               // 0
    setp.gt.f32 %p1, %f1, 0f00000000;    // 1
    @%p1 bra $L_pos;                     // 2
    mov.f32 %f1, 0f00000000;             // 3
$L_pos:
    st.param.f32 [ret], %f1;             // 4
    ret;                                 // 5
}
.visible .entry k(.param .u64 x, .param .u64 y)
{
    .reg .f32 %f<3>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    mov.u32 %r1, %tid.x;                 // 2
    cvt.rn.f32.u32 %f2, %r1;             // 3
    ld.global.f32 %f1, [%rd2];           // 4
    {
    .param .b32 param0;
    st.param.f32 [param0], %f2;          // 5
    .param .b32 retval0;
    call.uni (retval0), relu, (param0);  // 6
    ld.param.f32 %f2, [retval0];         // 7
    }
    {
    .param .b32 param0;
    st.param.f32 [param0], %f1;          // 8
    .param .b32 retval0;
    call.uni (retval0), relu, (param0);  // 9
    ld.param.f32 %f1, [retval0];         // 10
    }
    ld.param.u64 %rd3, [y];              // 11
    st.global.f32 [%rd3], %f1;           // 12
    ret;                                 // 13
}
"#;

#[test]
fn data_passed_to_a_func_is_followed_into_it() {
    let r = check(FUNC_BRANCH, "k", &[true, false]);
    // The call at 6 passes a thread-id value: clean. The call at 9 passes
    // x: the branch at relu:2 depends on it.
    assert_eq!(r.problems.len(), 1, "{r:#?}");
    let p = &r.problems[0];
    assert_eq!(p.function, "relu");
    assert_eq!(p.calls, vec![9]);
    assert_eq!((p.instr, p.kind), (2, ProblemKind::Branch));
    assert_eq!(p.origin, None);
    assert_eq!(p.chain, vec![0, 1, 2]);
    assert_eq!(
        p.message,
        "in .func `relu` (called at instruction 9 of `k`): branch at instruction 2 depends on \
         tensor data: its predicate %p1 is computed (setp.gt.f32 at 1) from parameter `a`, \
         which receives tensor data from the caller"
    );
    // With x not a tensor input, nothing is data anywhere.
    assert!(check(FUNC_BRANCH, "k", &[false, false]).is_structured());
}

/// A `.func` returning its argument plus one, and one returning a pointer
/// offset: data and tensor pointers both flow back to the caller.
const FUNC_RETURNS: &str = r#"
.func (.param .b32 ret) inc(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];               // 0
    add.s32 %r2, %r1, 1;                 // 1
    st.param.u32 [ret], %r2;             // 2
    ret;                                 // 3
}
.func (.param .b64 ret) at(.param .b64 base, .param .b32 i)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [base];           // 0
    ld.param.u32 %r1, [i];               // 1
    mul.wide.u32 %rd2, %r1, 4;           // 2
    add.s64 %rd3, %rd1, %rd2;            // 3
    st.param.u64 [ret], %rd3;            // 4
    ret;                                 // 5
}
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [x];              // 0
    mov.u32 %r1, %tid.x;                 // 1
    {
    .param .b64 param0;
    st.param.b64 [param0], %rd1;         // 2
    .param .b32 param1;
    st.param.b32 [param1], %r1;          // 3
    .param .b64 retval0;
    call.uni (retval0), at, (param0, param1);  // 4
    ld.param.b64 %rd2, [retval0];        // 5
    }
    ld.global.u32 %r2, [%rd2];           // 6
    {
    .param .b32 param0;
    st.param.b32 [param0], %r2;          // 7
    .param .b32 retval0;
    call.uni (retval0), inc, (param0);   // 8
    ld.param.b32 %r3, [retval0];         // 9
    }
    setp.eq.s32 %p1, %r3, 0;             // 10
    @%p1 ret;                            // 11
    ret;                                 // 12
}
"#;

#[test]
fn data_and_tensor_pointers_flow_back_from_funcs() {
    let r = check(FUNC_RETURNS, "k", &[true]);
    assert_eq!(kinds(&r), vec![(11, ProblemKind::Branch)]);
    let p = &r.problems[0];
    assert_eq!(p.function, "k");
    assert_eq!(p.chain, vec![8, 9, 10, 11]);
    assert!(
        p.message.starts_with(
            "early return at instruction 11 depends on tensor data: its predicate %p1 is \
             computed (setp.eq.s32 at 10) from the result of the call at 8 (to `inc`)"
        ),
        "{}",
        p.message
    );
}

/// Data written to shared memory and read back is the dynamic check's
/// business (`M[tid] = tid; k = M[tid]; M[k]` is structured); this pass does
/// not track it.
const SHARED_ROUND_TRIP: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 m[512];
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    mov.u32 %r1, %tid.x;                 // 2
    shl.b32 %r2, %r1, 2;                 // 3
    mov.u32 %r3, m;                      // 4
    add.s32 %r4, %r3, %r2;               // 5
    st.shared.u32 [%r4], %r1;            // 6
    ld.shared.u32 %r5, [%r4];            // 7
    shl.b32 %r5, %r5, 2;                 // 8
    add.s32 %r5, %r3, %r5;               // 9
    st.shared.u32 [%r5], %r1;            // 10
    ret;                                 // 11
}
"#;

#[test]
fn shared_memory_round_trips_are_left_to_the_dynamic_check() {
    assert!(check(SHARED_ROUND_TRIP, "k", &[true]).is_structured());
}

/// Warp and CTA synchronisation operands.
const SYNC_OPERANDS: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .f32 %f<3>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.u32 %r1, [%rd2];           // 2
    ld.global.f32 %f1, [%rd2+4];         // 3
    shfl.sync.bfly.b32 %f2, %f1, 16, 31, -1;   // 4
    shfl.sync.idx.b32 %r2, %r1, %r1, 31, -1;   // 5
    bar.sync 1, %r1;                     // 6
    setp.gt.f32 %p1, %f2, 0f00000000;    // 7
    vote.sync.ballot.b32 %r3, %p1, -1;   // 8
    @%p1 bar.sync 0;                     // 9
    ret;                                 // 10
}
"#;

#[test]
fn data_dependent_sync_operands_are_reported() {
    let r = check(SYNC_OPERANDS, "k", &[true]);
    // 4 shuffles data by a constant lane: data flow. 8 ballots a data
    // predicate: data flow.
    assert_eq!(
        kinds(&r),
        vec![
            (5, ProblemKind::ShuffleOperand),
            (6, ProblemKind::BarrierOperand),
            (9, ProblemKind::BarrierOperand),
        ]
    );
    assert!(r.problems[0].message.starts_with(
        "shuffle source lane depends on tensor data at instruction 5 (shfl.sync.idx.b32): \
         its source lane %r1 is loaded at 2 (ld.global.u32 through tensor param 0 `x`)"
    ));
    assert!(
        r.problems[1]
            .message
            .starts_with("barrier thread count depends on tensor data at instruction 6")
    );
    assert!(r.problems[2].message.starts_with(
        "barrier at instruction 9 (bar.sync) is reached under a predicate that depends on tensor data"
    ));
}

/// The carry flag carries data from `add.cc` into `addc`.
const CARRY: &str = r#"
.visible .entry k(.param .u64 x)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    ld.global.u32 %r1, [%rd2];           // 2
    mov.u32 %r2, %tid.x;                 // 3
    add.cc.u32 %r3, %r2, %r1;            // 4
    addc.u32 %r4, 0, 0;                  // 5
    mul.wide.u32 %rd3, %r4, 4;           // 6
    add.s64 %rd4, %rd2, %rd3;            // 7
    ld.global.u32 %r5, [%rd4];           // 8
    ret;                                 // 9
}
"#;

#[test]
fn carry_flag_propagates_data() {
    let r = check(CARRY, "k", &[true]);
    assert_eq!(kinds(&r), vec![(8, ProblemKind::Address)]);
    assert_eq!(r.problems[0].chain, vec![2, 4, 5, 6, 7, 8]);
}

#[test]
fn degenerate_kernels_do_not_panic() {
    // Empty body.
    let r = check(".visible .entry k()\n{\n}\n", "k", &[true]);
    assert!(r.is_structured());
    // Only a branch to itself (an infinite loop without data).
    let r = check(
        ".visible .entry k()\n{\n$L_self:\n    bra.uni $L_self;\n}\n",
        "k",
        &[],
    );
    assert!(r.is_structured());
    // Unreachable code after `exit` is not analysed.
    let r = check(
        r#".visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    exit;
    ld.param.u64 %rd1, [x];
    ld.global.u32 %r1, [%rd1];
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra $L_end;
$L_end:
    ret;
}
"#,
        "k",
        &[true],
    );
    assert!(r.is_structured());
}

#[test]
fn undecoded_instructions_claim_nothing() {
    // `foo.bar` does not decode: no data flows through it, nothing panics.
    let text = format!(
        "{HEADER}.visible .entry k(.param .u64 x)\n{{\n    .reg .b32 %r<3>;\n    .reg .b64 %rd<2>;\n    \
         ld.param.u64 %rd1, [x];\n    ld.global.u32 %r1, [%rd1];\n    foo.bar %r2, %r1;\n    ret;\n}}\n"
    );
    let lowered = lower_source(&text);
    let m = &lowered.module;
    let k = m.kernel("k").expect("entry");
    assert!(k.unknowns().next().is_some());
    assert!(validate(k, &|n| m.func(n), &[true]).is_structured());
}

#[test]
fn recursion_and_missing_callees_are_black_boxes() {
    let r = check(
        r#".extern .func (.param .b32 ret) ext(.param .b32 a);
.func (.param .b32 ret) rec(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.u32 %r1, [a];               // 0
    {
    .param .b32 param0;
    st.param.b32 [param0], %r1;          // 1
    .param .b32 retval0;
    call.uni (retval0), rec, (param0);   // 2
    ld.param.b32 %r2, [retval0];         // 3
    }
    st.param.u32 [ret], %r2;             // 4
    ret;                                 // 5
}
.visible .entry k(.param .u64 x)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [x];              // 0
    ld.global.u32 %r1, [%rd1];           // 1
    {
    .param .b32 param0;
    st.param.b32 [param0], %r1;          // 2
    .param .b32 retval0;
    call.uni (retval0), rec, (param0);   // 3
    ld.param.b32 %r2, [retval0];         // 4
    }
    {
    .param .b32 param0;
    st.param.b32 [param0], %r1;          // 5
    .param .b32 retval0;
    call.uni (retval0), ext, (param0);   // 6
    ld.param.b32 %r3, [retval0];         // 7
    }
    setp.eq.s32 %p1, %r2, 0;             // 8
    @%p1 bra $L_a;                       // 9
$L_a:
    setp.eq.s32 %p2, %r3, 0;             // 10
    @%p2 bra $L_b;                       // 11
$L_b:
    ret;                                 // 12
}
"#,
        "k",
        &[true],
    );
    // rec's recursive call is a black box returning data for a data
    // argument, so rec returns data; ext has no body: black box.
    assert_eq!(
        kinds(&r),
        vec![(9, ProblemKind::Branch), (11, ProblemKind::Branch)]
    );
}

#[test]
fn report_round_trips_through_serde() {
    let r = check(DATA_BRANCH, "k", &[true, false]);
    let json = serde_json::to_string(&r).expect("serialize");
    let back: StructuredReport = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, r);
}

#[test]
fn messages_name_the_cuda_source_lines() {
    let r = check(
        r#".visible .entry k(.param .u64 x)
{
    .reg .pred %p<2>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<3>;
    .loc 1 3 0
    ld.param.u64 %rd1, [x];              // 0
    cvta.to.global.u64 %rd2, %rd1;       // 1
    .loc 1 4 5
    ld.global.f32 %f1, [%rd2];           // 2
    .loc 1 5 5
    setp.gt.f32 %p1, %f1, 0f00000000;    // 3
    @%p1 bra $L_end;                     // 4
$L_end:
    ret;                                 // 5
}
.file 1 "/home/u/src/k.cu"
"#,
        "k",
        &[true],
    );
    assert_eq!(kinds(&r), vec![(4, ProblemKind::Branch)]);
    assert_eq!(
        r.problems[0].message,
        "branch at instruction 4 (k.cu:5) depends on tensor data: its predicate %p1 is computed \
         (setp.gt.f32 at 3) from tensor data loaded at 2 (ld.global.f32 through tensor param 0 \
         `x`, k.cu:4)"
    );
}

#[test]
fn malformed_ir_does_not_panic() {
    use ptxeq_ir::{Guard, LabelId, Operand, RegId};
    let lowered = lower_source(&format!("{HEADER}{DATA_BRANCH}"));
    let m = &lowered.module;
    let good = m.kernel("k").expect("entry").clone();
    let funcs = |_: &str| None;

    // Registers, labels and guards out of range.
    let mut k = good.clone();
    for d in &mut k.instrs {
        for op in d.operands.iter_mut() {
            match op {
                Operand::Reg(r) => *r = RegId(r.0 + 10_000),
                Operand::Label(l) => *l = LabelId(l.0 + 10_000),
                _ => {}
            }
        }
        d.guard = Some(Guard {
            negated: false,
            reg: RegId(77_777),
        });
    }
    assert!(validate(&k, &funcs, &[true, true]).is_structured());

    // Labels pointing past the end, registers removed, operands dropped.
    let mut k = good.clone();
    for l in &mut k.labels {
        l.target = 1_000_000;
    }
    k.regs.clear();
    for d in &mut k.instrs {
        d.operands.truncate(1);
    }
    assert!(validate(&k, &funcs, &[true, true]).is_structured());

    // The original still reports its branch.
    assert_eq!(
        kinds(&validate(&good, &funcs, &[true, true])),
        vec![(8, ProblemKind::Branch)]
    );
}

#[test]
fn callee_problems_sort_at_their_call_site() {
    // FUNC_BRANCH with a data branch in the entry after the call at 9: the
    // problem inside `relu` (reached at 9) comes first.
    let body = FUNC_BRANCH.replace(
        "    ld.param.u64 %rd3, [y];              // 11",
        "    setp.gt.f32 %p9, %f1, 0f00000000;\n    @%p9 bra $L_e;\n$L_e:\n    ld.param.u64 %rd3, [y];",
    )
    .replace("    .reg .f32 %f<3>;\n    .reg .b32 %r<2>;", "    .reg .pred %p9;\n    .reg .f32 %f<3>;\n    .reg .b32 %r<2>;");
    let r = check(&body, "k", &[true, false]);
    let got: Vec<(&str, Vec<u32>, u32)> = r
        .problems
        .iter()
        .map(|p| (p.function.as_str(), p.calls.clone(), p.instr))
        .collect();
    assert_eq!(got, vec![("relu", vec![9], 2), ("k", vec![], 12)]);
}
