//! What every verdict rests on, in one place: each report (human, JSON,
//! SARIF, Python) prints these with its result.

use ptxeq_spec::CheckSpec;

/// What a race-check verdict ("race-free" above all) rests on.
pub const RACE: &[&str] = &[
    "distinct pointer params do not alias",
    "all thread schedules: races are judged on one schedule with vector clocks (docs/semantics.md §10); a race-free run is schedule-independent",
    "exited threads count as arrived at barriers that expect them",
    "only the CTAs named by the spec are run (ctas = first | all | auto | list, per kernel); several CTAs run over one global memory and their accesses are judged like those of threads of one CTA, ordered only by release/acquire (a ticket atomic, a cluster barrier, grid.sync()) (docs/semantics.md)",
    "memory model (docs/semantics.md): atomics and .relaxed/.acquire/.release accesses of a common scope do not race with each other, plain and .volatile accesses race with everything unordered",
];

/// What every equivalence verdict of a kernel pair rests on.
pub const CHECK: &[&str] = &[
    "real arithmetic: rounding modes, .ftz, .sat and f16/bf16/tf32 precision are the identity on real values (fast-math convention)",
    "input tensor elements are arbitrary finite reals; distinct pointer params do not alias",
    "all thread schedules: both kernels are race-free, so one schedule gives every schedule's outputs",
    "an element written by one kernel and not the other is a difference (an inout element left unwritten keeps its input value)",
];

/// What a verdict against a formula reference rests on (replacing the
/// kernel-pair lines of [`CHECK`]).
pub const FORMULA: &[&str] = &[
    "real arithmetic: rounding modes, .ftz, .sat and f16/bf16/tf32 precision are the identity on real values (fast-math convention)",
    "input tensor elements are arbitrary finite reals; distinct pointer params do not alias",
    "all thread schedules: the candidate is race-free, so one schedule gives every schedule's outputs",
    "the formula is the reference: every element of a tensor it defines (in the compared region) must be written by the candidate with that value (an inout element left unwritten keeps its input value); a tensor the candidate writes and the formula does not define is a difference",
    "float scalars take the value the candidate's param receives (the spec's decimal rounded to the param's type)",
];

/// What a verdict over integer tensor data rests on (with [`CHECK`] or
/// [`FORMULA`] when the spec has an integer tensor).
pub const INT: &str = "integer tensor data: exact arithmetic modulo 2^w at each register width (s32/u32 share Z/2^32); an integer converted to a float is its exact value (rounding ignored, as above); division by zero gives the same unspecified value in both kernels";

/// What a verdict over fp8 tensor data rests on (with [`CHECK`] or
/// [`FORMULA`] when the spec has an `f8e4m3`/`f8e5m2` tensor).
pub const FP8: &str = "fp8 tensor data (f8e4m3/f8e5m2): elements are exact reals (every fp8 value is one); a cvt to fp8 of a real value is the identity, saturation to the format's largest finite value included (docs/semantics.md §18); counterexample values of fp8 tensors are sampled among the format's values";

/// What a verdict on a kernel with a `tcgen05.mma` still rests on (added
/// to the others when a checked kernel's text has one). Tensor Memory
/// accesses follow the ISA's tcgen05 ordering rules
/// (`tcgen05.fence::before/after_thread_sync`, docs/semantics.md §19); the
/// MMA's shared-memory operand reads are taken as ordered like the issuing
/// thread's ordinary accesses (README Limitations).
pub const TCGEN05: &str = "tcgen05.mma: the MMA's shared-memory operand reads are taken as ordered after the issuing thread's earlier synchronisation (the mbarrier wait or barrier that made the operands ready) without a tcgen05.fence::after_thread_sync, and before its later synchronisation through the tcgen05.commit that tracks the MMA; Tensor Memory accesses follow the tcgen05 fence rules (docs/semantics.md §19)";

/// What a verdict on a kernel with `wgmma.mma_async` and mbarriers rests
/// on (added when a checked kernel's text has both): the execution order
/// the mbarrier phase checks accept besides happens-before
/// (`crates/exec/src/engine/exec_order.rs`, docs/semantics.md).
pub const WGMMA_EXEC: &str = "wgmma.mma_async with mbarriers: a wgmma.wait_group that retires a warpgroup's MMA is taken to return only after all 128 threads of the warpgroup issued that MMA (one collective operation over the four warps' accumulator fragments); this execution order, not a memory ordering, decides that no mbarrier waiter of the warpgroup can lag a whole phase behind when one elected thread releases a stage after the wait_group";

/// The standing assumptions of an equivalence check of `spec`'s kind
/// (kernel or formula reference), plus [`INT`] when `spec` has an integer
/// tensor.
pub fn of_check(spec: &CheckSpec) -> Vec<&'static str> {
    let mut v = if spec.kernels.formula().is_some() {
        FORMULA.to_vec()
    } else {
        CHECK.to_vec()
    };
    if spec
        .tensors
        .values()
        .any(|t| !t.dtype.is_float() && t.dtype != ptxeq_spec::DType::Pred)
    {
        v.push(INT);
    }
    if spec.tensors.values().any(|t| {
        matches!(
            t.dtype,
            ptxeq_spec::DType::F8e4m3 | ptxeq_spec::DType::F8e5m2
        )
    }) {
        v.push(FP8);
    }
    v
}
