//! The per-function artifact ([`KernelIr`]) and the module around it.
//!
//! A [`KernelIr`] is self-contained: it carries copies of the module-level
//! variables it can see and the `.file` table, so the `kernel_ir` query's
//! result alone is enough for later passes (and for the disk cache). Called
//! `.func`s are separate [`KernelIr`]s found by name in [`ModuleIr::funcs`].

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::instr::Instr;
use crate::operand::{LabelId, Operand, ParamId, RegId, VarId};
use crate::types::{ScalarType, StateSpace};

/// Byte range in the source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

/// A `.loc` position. `inlined_at` is the call site the code was inlined
/// into, itself possibly inlined further (the chain ends at user code).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    pub inlined_at: Option<Box<SourceLoc>>,
}

impl SourceLoc {
    /// The outermost call site: the position in the user's own code when the
    /// instruction comes from an inlined library function.
    pub fn outermost(&self) -> &SourceLoc {
        let mut l = self;
        while let Some(up) = &l.inlined_at {
            l = up;
        }
        l
    }
}

/// One register of the dense register file.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct RegInfo {
    /// Name as declared (`%r3`); shadowing declarations in nested scopes
    /// produce distinct registers with the same name.
    pub name: String,
    pub ty: ScalarType,
    /// `.v2`/`.v4` vector register.
    pub vector: Option<u8>,
}

/// One element of a variable initialiser.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum InitValue {
    Int(i128),
    F32Bits(u32),
    F64Bits(u64),
    /// Address of a variable or function plus an offset; `generic` for
    /// `generic(sym)`.
    Symbol {
        name: String,
        offset: i64,
        generic: bool,
    },
}

/// Where a variable was declared.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum VarScope {
    Module,
    Function,
}

/// A state-space variable (`.global`, `.shared`, `.const`, `.local`, a
/// call-site `.param`, ...).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct VarDecl {
    pub name: String,
    pub space: StateSpace,
    pub scope: VarScope,
    /// `.extern`, `.visible`, `.weak`, `.common` as written.
    pub linkage: Option<String>,
    pub ty: ScalarType,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    /// Array dimensions; `None` for an unsized `[]`.
    pub dims: Vec<Option<u64>>,
    /// Total size; `None` for `.extern` unsized arrays (dynamic shared
    /// memory). An unsized array with an initialiser takes its length from it.
    pub size_bytes: Option<u64>,
    pub init: Option<Vec<InitValue>>,
}

/// A kernel or function parameter.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct ParamDecl {
    pub name: String,
    /// [`StateSpace::Param`], or [`StateSpace::Reg`] for `.func` register params.
    pub space: StateSpace,
    pub ty: ScalarType,
    pub align: Option<u32>,
    pub vector: Option<u8>,
    pub dims: Vec<Option<u64>>,
    pub size_bytes: Option<u64>,
    /// `.ptr` attribute (kernel params), with its space and alignment.
    pub is_ptr: bool,
    pub ptr_space: Option<StateSpace>,
    /// Return parameter of a `.func`.
    pub is_return: bool,
    /// The register holding a `.reg` parameter.
    pub reg: Option<RegId>,
}

/// A resolved label: `target` is the index of the first instruction after
/// it (== `instrs.len()` for a label at the end of the body).
///
/// `.callprototype` declarations (`prototype_0 : .callprototype ...`) share
/// the label namespace and are named by indirect `call`s, so they are
/// labels too, marked `prototype` (their `target` is only where they were
/// declared, never a branch destination).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Label {
    pub name: String,
    pub target: u32,
    pub prototype: bool,
}

/// A predicate guard `@%p` / `@!%p`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Guard {
    pub negated: bool,
    pub reg: RegId,
}

/// One instruction with its guard, operands and source positions.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct InstrData {
    pub guard: Option<Guard>,
    pub instr: Instr,
    /// Layout documented per [`Instr`] variant.
    pub operands: SmallVec<[Operand; 4]>,
    /// The `.loc` in effect, if any. (The instruction's PTX bytes are in
    /// the function's [`SourceMap`], not here.)
    pub loc: Option<SourceLoc>,
}

/// A lowered `.entry` or `.func`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct KernelIr {
    pub name: String,
    pub is_entry: bool,
    /// `.visible`, `.extern`, `.weak` as written.
    pub linkage: Option<String>,
    /// False for a declaration without body (`.extern .func vprintf(...)`).
    pub has_body: bool,
    pub params: Vec<ParamDecl>,
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    /// Every performance directive as written (`.minnctapersm 1`,
    /// `.explicitcluster`, ...), including the two above.
    pub directives: Vec<(String, Vec<u64>)>,
    pub regs: Vec<RegInfo>,
    /// Module variables first (same [`VarId`]s in every function of the
    /// module), then the function's own in declaration order.
    pub vars: Vec<VarDecl>,
    pub instrs: Vec<InstrData>,
    pub labels: Vec<Label>,
    /// `.file` table: index → path.
    pub files: Vec<(u32, String)>,
}

/// Where a function's parts are in the PTX file.
///
/// Kept apart from [`KernelIr`] on purpose: the IR holds no byte offsets, so
/// an edit that only moves text (a comment, a blank line) leaves the IR equal
/// and salsa's early cutoff stops recomputation right after lowering. Only
/// diagnostics consult the map.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct SourceMap {
    /// The function's name.
    pub name: Span,
    /// Parallel to [`KernelIr::instrs`].
    pub instrs: Vec<Span>,
    /// Parallel to [`KernelIr::vars`] (module variables first).
    pub vars: Vec<Span>,
    /// Parallel to [`KernelIr::params`].
    pub params: Vec<Span>,
}

impl SourceMap {
    /// The PTX byte range of instruction `i` (empty when out of range).
    pub fn instr(&self, i: usize) -> Span {
        self.instrs.get(i).copied().unwrap_or_default()
    }
}

impl KernelIr {
    pub fn reg(&self, r: RegId) -> &RegInfo {
        &self.regs[r.index()]
    }

    pub fn var(&self, v: VarId) -> &VarDecl {
        &self.vars[v.index()]
    }

    pub fn param(&self, p: ParamId) -> &ParamDecl {
        &self.params[p.index()]
    }

    pub fn label(&self, l: LabelId) -> &Label {
        &self.labels[l.index()]
    }

    /// Path of `.file` number `n`.
    pub fn file_path(&self, n: u32) -> Option<&str> {
        self.files
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, p)| p.as_str())
    }

    /// The kernel's arguments (return params of a `.func` excluded).
    pub fn args(&self) -> impl Iterator<Item = (ParamId, &ParamDecl)> {
        self.params
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_return)
            .map(|(i, p)| (ParamId(i as u32), p))
    }

    /// Every instruction that did not decode, with its index.
    pub fn unknowns(&self) -> impl Iterator<Item = (usize, &InstrData)> {
        self.instrs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.instr.is_unknown())
    }
}

/// A lowered PTX module.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct ModuleIr {
    pub version: Option<String>,
    pub targets: Vec<String>,
    pub address_size: Option<u32>,
    pub files: Vec<(u32, String)>,
    /// Module-scope variables (the prefix of every function's `vars`).
    pub globals: Vec<VarDecl>,
    /// `.entry` functions in source order.
    pub kernels: Vec<KernelIr>,
    /// `.func`s in source order; a declaration followed by a definition
    /// appears once, as the definition.
    pub funcs: Vec<KernelIr>,
}

impl ModuleIr {
    pub fn kernel(&self, name: &str) -> Option<&KernelIr> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn func(&self, name: &str) -> Option<&KernelIr> {
        self.funcs.iter().find(|k| k.name == name)
    }
}
