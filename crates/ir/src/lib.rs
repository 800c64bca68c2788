//! Lowered kernel IR: what the lowering pass produces from the syntax tree
//! and every later pass consumes.
//!
//! Per `.entry`/`.func` a [`KernelIr`] holds a dense register file, decoded
//! instructions ([`Instr`], typed modifiers, never strings), resolved labels,
//! params, state-space variables with sizes and initialisers, and the `.loc`
//! source position of every instruction. Everything is
//! `Clone + Eq + Hash + Debug` (salsa backdating) and serde-serialisable (disk
//! cache); floats are stored as bit patterns.
//!
//! - [`types`]: scalar types, state spaces, rounding, comparison operators;
//! - [`operand`]: register/var/param/label ids and [`Operand`];
//! - [`instr`]: the [`Instr`] enum, one variant per opcode family;
//! - [`mod@decode`]: opcode + modifiers + operands → [`Instr`], usable on its own;
//! - [`facts`]: per-instruction facts declared once (operands written and
//!   read, memory effects, control, collectives);
//! - [`kernel`]: [`KernelIr`], [`ModuleIr`] and their parts;
//! - [`verify`]: the IR verifier run after lowering and after idiom
//!   recognition (ids resolve, types, idioms well-formed, def before use);
//! - `display`: canonical mnemonics and the `ptxeq ir` text dump.

pub mod decode;
mod display;
pub mod facts;
pub use display::DumpWithLines;
pub mod instr;
pub mod kernel;
pub mod operand;
pub mod types;
pub mod verify;

pub use decode::{Decoded, decode};
pub use facts::{Collective, Control, Memory};
pub use instr::*;
pub use kernel::{
    Guard, InitValue, InstrData, KernelIr, Label, ModuleIr, ParamDecl, RegInfo, SourceLoc,
    SourceMap, Span, VarDecl, VarScope,
};
pub use operand::{
    AddrBase, Address, Imm, LabelId, Operand, ParamId, RegId, SpecialReg, Symbol, VarId,
};
pub use types::{
    BoolOp, CacheHint, CacheOp, CmpOp, Dim, MemSem, MulMode, Rounding, ScalarType, Scope,
    StateSpace,
};
