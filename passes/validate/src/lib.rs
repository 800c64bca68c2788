//! Static structured-CTA validation: the `structured` query (ARCHITECTURE.md, "drivers/db").
//!
//! The symbolic executor (docs/semantics.md §3) needs every branch predicate, loop
//! bound and memory address to be concrete per thread: a function of thread
//! and CTA ids, scalar params, constants and loop counters. This pass finds,
//! before any unrolling, the instructions where that fails *because of tensor
//! data*: a branch on a loaded `x[i]`, a loop whose trip count is read from a
//! tensor, a gather/scatter through an index tensor. It names each with a
//! short def-use chain from the load to the offending instruction, in words a
//! kernel engineer understands.
//!
//! What counts as tensor data: values loaded (`ld`/`ldu`, generic or
//! `.global`, `.nc` included) through a pointer derived from
//! a kernel param that the caller marks in `tensor_params`. Values read from
//! shared or local memory are *not* data here (they may hold indices a thread
//! wrote from its own id); the dynamic check during unrolling sees those.
//! Neither are `atom` results: the engine keeps an integer one opaque (its
//! value depends on the order of the atomics) and judges its uses.
//!
//! Precision contract: **no false positives on the structured class**. The
//! analysis is flow-sensitive (per program point, so a register reused for
//! data and then for an index is clean again), reports only syntactic data
//! dependence, and treats predicated data flow (`selp`, `@p mov`, `@p st`,
//! `max`/`min`) as data flow, never as control flow. What it cannot see —
//! data round-tripping through shared/local memory, loads through pointers it
//! cannot trace, instructions that did not decode — the dynamic check catches.
//!
//! Layout: [`mod@cfg`] builds basic blocks, dominators and natural loops;
//! `plan` turns each instruction into a compact dataflow step (sources,
//! destinations, sinks); `flow` runs the per-function fixpoint and the
//! interprocedural summaries of called `.func`s; `explain` writes the
//! def-use chain and the message.

pub mod cfg;
mod explain;
mod flow;
mod plan;

use serde::{Deserialize, Serialize};

use ptxeq_ir::KernelIr;

/// What kind of structure violation an instruction is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ProblemKind {
    /// A conditional branch (`bra`, `brx`, indirect `call`, guarded
    /// `ret`/`exit`/`trap`/`call`) whose outcome depends on tensor data.
    Branch,
    /// A branch that decides a loop's trip count: a loop back edge, a loop
    /// exit, or the zero-trip test in front of a loop whose exit is itself
    /// data-dependent.
    LoopBound,
    /// A memory access (or async copy) whose address depends on tensor data.
    Address,
    /// A barrier id / thread count / member mask that depends on tensor data,
    /// or a barrier executed under a data-dependent predicate.
    BarrierOperand,
    /// A shuffle lane / clamp or a warp collective's member mask that depends
    /// on tensor data, or a warp collective under a data-dependent predicate.
    ShuffleOperand,
}

impl ProblemKind {
    /// The reason in the words of the corpus' `[expect] reason`.
    pub fn reason(self) -> &'static str {
        match self {
            ProblemKind::Branch => "branch depends on tensor data",
            ProblemKind::LoopBound => "loop bound depends on tensor data",
            ProblemKind::Address => "address depends on tensor data",
            ProblemKind::BarrierOperand => "barrier operand depends on tensor data",
            ProblemKind::ShuffleOperand => "shuffle operand depends on tensor data",
        }
    }
}

/// One instruction that takes the kernel out of the structured class.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct StructuredProblem {
    /// Index of the offending instruction in `function`'s `instrs`.
    pub instr: u32,
    /// The function holding it: the entry, or a `.func` it calls.
    pub function: String,
    /// The `call` instructions through which `function` is reached, outermost
    /// (in the entry) first; empty when `function` is the entry itself.
    pub calls: Vec<u32>,
    pub kind: ProblemKind,
    /// One sentence: what depends on which load, through which instructions.
    pub message: String,
    /// The instruction (in `function`) that loaded the tensor data, when the
    /// data was loaded in `function` itself (not passed in by a caller or
    /// returned by a callee).
    pub origin: Option<u32>,
    /// A def-use chain in `function`, from the origin (or the first
    /// instruction of `function` that sees the data) to the offending
    /// instruction, both included; at most [`MAX_CHAIN`] entries (the middle
    /// is dropped for longer chains).
    pub chain: Vec<u32>,
}

/// Longest [`StructuredProblem::chain`] kept.
pub const MAX_CHAIN: usize = 12;

/// Beyond this many (basic blocks × tracked registers) the pass does not run
/// (the per-block state would need more than ~512 MiB); the report says so in
/// [`StructuredReport::skipped`] and the dynamic check decides alone.
pub const MAX_STATE_CELLS: usize = 64 << 20;

/// The result of static validation of one kernel.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct StructuredReport {
    /// Ordered by position: `calls` then `instr` (so a callee's problems sit
    /// at their call site); the first is "the first offending instruction".
    /// Each (function, instruction) appears once.
    pub problems: Vec<StructuredProblem>,
    /// Set when the analysis did not run (resource limit); says why. The
    /// kernel is then not known to be structured or not.
    pub skipped: Option<String>,
}

impl StructuredReport {
    /// True when no instruction depends on tensor data in a way the symbolic
    /// executor cannot follow (and the analysis ran).
    pub fn is_structured(&self) -> bool {
        self.problems.is_empty() && self.skipped.is_none()
    }

    /// The first offending instruction.
    pub fn first(&self) -> Option<&StructuredProblem> {
        self.problems.first()
    }
}

/// Validates `kernel`: names every branch, loop bound, address, barrier or
/// shuffle operand that depends on tensor data.
///
/// `tensor_params[i]` says whether param `i` of `kernel` points to tensor
/// data the kernel reads: pass `true` for params the spec binds to an
/// `input` or `inout` tensor, `false` for scalars, `_`, and output-only
/// tensors (those hold only what the kernel itself writes). Missing entries
/// count as `false`. `funcs` finds called `.func`s by name (e.g.
/// `|n| module.func(n)`); a callee it does not find, one without a body, and
/// indirect calls are black boxes whose results depend on all arguments.
pub fn validate<'k>(
    kernel: &'k KernelIr,
    funcs: &dyn Fn(&str) -> Option<&'k KernelIr>,
    tensor_params: &[bool],
) -> StructuredReport {
    flow::validate_entry(kernel, funcs, tensor_params)
}

#[cfg(test)]
mod tests;
