//! What one CTA run needs: the kernel and the functions it calls, the
//! launch shape, what each kernel param is bound to, the tensors, limits.
//!
//! Plain data: `ptxeq_bind::cta_input` builds it from a check spec and
//! reports every binding problem (wrong kinds, widths, missing entry,
//! missing block size) before the run; the engine never reads the spec.

use std::sync::Arc;

use ptxeq_ir::KernelIr;
use ptxeq_spec::DType;
use serde::{Deserialize, Serialize};

use crate::bindings::Bindings;

/// What a kernel param receives.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum ParamValue {
    /// The base address of tensor number `tensor` (index into
    /// [`CtaInput::tensors`]).
    Tensor { tensor: u32 },
    /// Concrete bits of the param's type (little-endian, zero-extended).
    Scalar { bits: u64 },
    /// A symbolic float scalar: the param holds input symbol `input`
    /// (element 0 of input number `input`, which is
    /// `tensors.len() + k` for [`CtaInput::symbols`]`[k]`).
    Symbol { input: u32 },
    /// `_`: reading it is reported as unsupported.
    Unused,
    /// A by-value struct: the fields `CtaInput::bindings.structs[index]`;
    /// bytes no field covers read as unused.
    Struct { index: u32 },
    /// A by-value `CUtensorMap`: `CtaInput::bindings.tensor_maps[map]`;
    /// its bytes are opaque (reading them is unsupported).
    TensorMap { map: u32 },
}

/// What a run does with a tensor (the spec's `role`, bound by
/// `ptxeq-bind`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Role {
    /// Read only: its contents at launch are symbolic inputs; a store to
    /// it is unsupported.
    Input,
    /// Written: its contents at exit are the result.
    Output,
    /// Both: symbolic at launch, compared at exit.
    InOut,
    /// A workspace: read and written, never compared.
    Scratch,
}

impl Role {
    /// Whether the tensor's initial contents are symbolic inputs.
    pub fn is_read(self) -> bool {
        matches!(self, Role::Input | Role::InOut)
    }

    /// Whether the tensor's final contents are part of the result.
    pub fn is_written(self) -> bool {
        matches!(self, Role::Output | Role::InOut)
    }
}

/// A tensor of the check. The index of a tensor in [`CtaInput::tensors`]
/// is the `tensor` number of its input symbols, the same for both kernels
/// of a pair (tensors are ordered by name).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct TensorInfo {
    pub name: String,
    pub role: Role,
    pub dtype: DType,
    pub shape: Vec<u64>,
}

impl TensorInfo {
    pub fn elements(&self) -> u64 {
        self.shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX)
    }

    pub fn byte_size(&self) -> u64 {
        self.elements().saturating_mul(self.dtype.size_bytes())
    }
}

/// A symbolic float scalar of the check (`alpha = { dtype = "f32" }`): a
/// free real input named after the scalar. Input number
/// `tensors.len() + k` is `symbols[k]`, the same in both kernels of a pair
/// (symbols are ordered by name), whether or not a kernel binds it.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct SymbolInfo {
    pub name: String,
    pub dtype: DType,
}

/// Resource limits (a limit hit is a `ResourceLimit` finding, never a hang
/// or an allocation failure).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Limits {
    /// Thread-instructions per CTA (the spec's `[limits] max_steps`; see
    /// `engine/budget.rs` for the report when it is hit).
    pub max_steps: u64,
    /// Nested calls per thread.
    pub max_call_depth: u32,
    /// Heap bytes of the state the engine keeps for the memory a CTA
    /// touches: contents, race shadows and footprints of every region,
    /// per-thread ones included (about 8–60 bytes per touched byte,
    /// allocated in pages on first write). Region sizes themselves are
    /// not limited: an untouched tensor costs nothing.
    pub max_memory_state_bytes: u64,
    /// Findings of one kind kept (the rest are counted).
    pub max_findings_per_kind: u32,
    /// CTA runs of the grid-level ticket exploration (`crate::grid`):
    /// `G` orders of `G` CTAs per start value tried.
    pub max_grid_runs: u64,
    /// Whether an output element holding an undefined value at the end of
    /// the run is a finding. Address-only runs (the `ctas = "auto"` scan,
    /// which slices the arithmetic away) turn it off: their stored values
    /// are meaningless by construction; every check run keeps it on.
    pub report_undefined_outputs: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: ptxeq_spec::DEFAULT_MAX_STEPS,
            max_call_depth: 64,
            max_memory_state_bytes: 4 << 30,
            max_findings_per_kind: 64,
            max_grid_runs: 1 << 16,
            report_undefined_outputs: true,
        }
    }
}

/// Everything one CTA run needs.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct CtaInput {
    pub kernel: Arc<KernelIr>,
    /// Every `.func` of the module with a body, in module order
    /// (`InstrRef::func = k` is `funcs[k-1]`).
    pub funcs: Vec<Arc<KernelIr>>,
    pub block: [u32; 3],
    pub grid: [u32; 3],
    pub dynamic_shared: u32,
    /// CTAs per thread-block cluster when the launch has explicit
    /// clusters (the spec's `launch.cluster` or the entry's
    /// `.reqnctapercluster`); `None`: every CTA is a cluster of one and
    /// `%is_explicit_cluster` is 0.
    pub cluster: Option<[u32; 3]>,
    /// One per kernel argument, in declaration order.
    pub params: Vec<ParamValue>,
    pub tensors: Vec<TensorInfo>,
    /// Symbolic scalars, numbered after the tensors (see [`SymbolInfo`]).
    pub symbols: Vec<SymbolInfo>,
    pub limits: Limits,
    /// Concrete values, struct fields, bound functions and module
    /// variables (`bindings.rs`); empty when the spec uses none.
    pub bindings: Bindings,
}

impl CtaInput {
    /// Threads per CTA.
    pub fn threads(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    /// The name of every input number: the tensors, then the symbolic
    /// scalars (what terms and witnesses print).
    pub fn input_names(&self) -> Vec<String> {
        self.tensors
            .iter()
            .map(|t| t.name.clone())
            .chain(self.symbols.iter().map(|s| s.name.clone()))
            .collect()
    }

    /// The first input number of a symbolic scalar: numbers from here on
    /// are scalars (printed without an index).
    pub fn first_symbol(&self) -> u32 {
        self.tensors.len() as u32
    }
}
