//! What the spec's binding keys mean for one kernel's run (the spec side
//! is `ptxeq_spec::bindings`; the semantics are in `docs/semantics.md`,
//! "Bindings"):
//!
//! - concrete tensor `values`: the tensor's bytes hold those values at
//!   launch (input, inout and scratch tensors); loads of them are concrete,
//!   so an index tensor gives concrete addresses;
//! - by-value struct params: the aggregate's bytes, field by field;
//! - `[functions]`: calls of a bound `.func` compute the bound real
//!   function, or apply an uninterpreted function symbol;
//! - `[globals]`: a module-scope `.global`/`.const` variable holds given
//!   values, or symbolic inputs (an input tensor of its own, numbered after
//!   the spec's tensors), instead of its initialiser.
//!
//! `ptxeq_bind` resolves the spec's keys against the module once into
//! these plain types; the engine reads the result and never the spec.

use std::collections::BTreeSet;

use ptxeq_ir::{Instr, KernelIr, Operand, StateSpace, Symbol};
use serde::{Deserialize, Serialize};

use crate::domain::{BinOp, Fmt, UnOp};

/// Everything the engine needs from the binding keys, resolved for one
/// kernel. Empty (the default) when the spec uses none of them.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Bindings {
    /// Per tensor number: its concrete contents as bytes (`values = …`).
    pub tensor_bytes: Vec<Option<Vec<u8>>>,
    /// The fields of each struct param (`ParamValue::Struct { index }`).
    pub structs: Vec<Vec<FieldValue>>,
    /// Calls of these functions are replaced by their binding.
    pub functions: Vec<BoundFunction>,
    /// Module variables the spec binds.
    pub globals: Vec<BoundGlobal>,
    /// Tensor numbers from here on are `[globals]` inputs (no tensor
    /// param; their memory is the module variable's).
    pub first_global_tensor: u32,
    /// What the verdict rests on because of these bindings (printed in
    /// every report).
    pub assumptions: Vec<String>,
    /// The TMA tensor maps this kernel receives (`[tensor_maps]`).
    pub tensor_maps: Vec<TensorMapBinding>,
}

/// A `[tensor_maps]` entry bound to this kernel.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct TensorMapBinding {
    pub name: String,
    /// The tensor number it views.
    pub tensor: u32,
    /// Where the kernel finds the `CUtensorMap`.
    pub holder: TensorMapHolder,
    pub geometry: TensorMapGeometry,
}

/// What a `CUtensorMap` describes, as the copy engine uses it (the spec's
/// `[tensor_maps]` entry, validated by the spec and bound by `ptxeq-bind`).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct TensorMapGeometry {
    /// `globalDim`, innermost first.
    pub dims: Vec<u64>,
    /// `globalStrides` in bytes, of dims 1.. (`dims.len() - 1` entries).
    pub strides: Vec<u64>,
    /// `boxDim`, innermost first.
    pub box_dims: Vec<u32>,
    /// `elementStrides`, innermost first.
    pub element_strides: Vec<u32>,
    pub swizzle: Swizzle,
    pub oob_fill: OobFill,
}

impl TensorMapGeometry {
    /// Elements of the box along dimension `d` (`ceil(box / stride)`).
    pub fn box_extent(&self, d: usize) -> u64 {
        u64::from(self.box_dims[d]).div_ceil(u64::from(self.element_strides[d]))
    }
}

/// Shared-memory swizzle of a tensor map.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Swizzle {
    None,
    B32,
    B64,
    B128,
}

impl Swizzle {
    /// The byte address in shared memory where the box byte at dense
    /// address `a` lands: bits 4.. of the 16-byte-chunk index are XORed
    /// with the 128-byte row index modulo 2/4/8 (CUTLASS's
    /// `Swizzle<1|2|3, 4, 3>`).
    pub fn apply(self, a: u64) -> u64 {
        let mask = match self {
            Swizzle::None => return a,
            Swizzle::B32 => 1,
            Swizzle::B64 => 3,
            Swizzle::B128 => 7,
        };
        a ^ (((a >> 7) & mask) << 4)
    }
}

/// What out-of-bounds elements of a loaded box become.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum OobFill {
    Zero,
    /// The canonical NaN of the element size.
    Nan,
}

/// Where a tensor map's 128 bytes live.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum TensorMapHolder {
    /// In by-value kernel param number `index` (`__grid_constant__`).
    Param { index: u32 },
    /// In global memory: tensor number `tensor` (passed by pointer).
    Tensor { tensor: u32 },
}

/// One field of a struct param, resolved.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct FieldValue {
    pub offset: u64,
    pub what: FieldKind,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum FieldKind {
    /// The base address of tensor number `tensor`.
    Tensor { tensor: u32 },
    /// `bytes` bytes of these bits.
    Scalar { bits: u64, bytes: u8 },
}

/// A `.func` whose calls compute a bound function.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct BoundFunction {
    /// The PTX name of the function.
    pub func: String,
    /// The `[functions]` key that matched it (the PTX name or its
    /// unmangled C++ name).
    pub key: String,
    pub binding: BoundOp,
    /// Format of each argument and of the result.
    pub args: Vec<Fmt>,
    pub ret: Fmt,
}

/// What a call of a bound function computes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum BoundOp {
    /// An uninterpreted function symbol named after the `[functions]` key.
    Uninterpreted,
    /// A one-argument real operation (`exp`, `sqrt`, `abs`, ...).
    Unary(UnOp),
    /// A two-argument real operation (`pow`, `min`, `max`).
    Binary(BinOp),
}

/// A module variable the spec binds.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct BoundGlobal {
    pub name: String,
    pub contents: GlobalContents,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum GlobalContents {
    /// These bytes at launch (instead of the initialiser).
    Bytes(Vec<u8>),
    /// Symbolic: unwritten bytes read as elements of input tensor number
    /// `tensor`.
    Input { tensor: u32 },
}

impl Bindings {
    /// The binding of a call of `func` (by PTX name).
    pub fn function(&self, func: &str) -> Option<&BoundFunction> {
        self.functions.iter().find(|f| f.func == func)
    }

    /// The binding of module variable `name`.
    pub fn global(&self, name: &str) -> Option<&GlobalContents> {
        self.globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| &g.contents)
    }

    /// Whether tensor number `t` is a `[globals]` input (its memory is a
    /// module variable, not a tensor region).
    pub fn is_global_tensor(&self, t: u32) -> bool {
        t >= self.first_global_tensor
            && self
                .globals
                .iter()
                .any(|g| g.contents == GlobalContents::Input { tensor: t })
    }

    /// The concrete bytes of tensor number `t`, if the spec gives values.
    pub fn tensor_bytes(&self, t: u32) -> Option<&[u8]> {
        self.tensor_bytes.get(t as usize)?.as_deref()
    }
}

/// The unmangled name of an Itanium-mangled free function
/// (`_Z6my_expf` → `my_exp`); `None` for other names.
pub fn unmangled(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("_Z")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let len: usize = rest[..digits].parse().ok()?;
    rest.get(digits..digits + len)
}

/// Writes concrete `bytes` into a region's slots.
pub(crate) fn fill<V: Copy + Eq>(slots: &mut crate::memory::Slots<V>, bytes: &[u8]) {
    for (i, &b) in bytes.iter().enumerate().take(slots.len()) {
        slots.set(i, crate::memory::Slot::Byte(b));
    }
}

/// Module-scope variables with an initialiser that `kernel` (or a
/// function it calls, through calls not absorbed by a recognised idiom)
/// names, and that no `[globals]` entry binds: the check reads them as
/// their initialisers, which the host may have overwritten
/// (`cudaMemcpyToSymbol`). Sorted by name, with their state space.
pub fn initialised_vars_read(
    kernel: &KernelIr,
    funcs: &[std::sync::Arc<KernelIr>],
    bindings: &Bindings,
) -> Vec<(String, StateSpace)> {
    let mut todo = vec![kernel];
    let mut seen_funcs: BTreeSet<&str> = BTreeSet::new();
    let mut out: BTreeSet<(String, String)> = BTreeSet::new();
    let mut spaces = Vec::new();
    while let Some(f) = todo.pop() {
        for ins in &f.instrs {
            if matches!(ins.instr, Instr::Absorbed { .. }) {
                continue;
            }
            let mut syms = Vec::new();
            for op in &ins.operands {
                collect_symbols(op, &mut syms);
            }
            for s in syms {
                match s {
                    Symbol::Var(v) => {
                        let Some(d) = f.vars.get(v.index()) else {
                            continue;
                        };
                        if d.scope == ptxeq_ir::VarScope::Module
                            && d.init.is_some()
                            && matches!(d.space, StateSpace::Global | StateSpace::Const)
                            && bindings.global(&d.name).is_none()
                            && out.insert((d.name.clone(), d.space.to_string()))
                        {
                            spaces.push((d.name.clone(), d.space));
                        }
                    }
                    Symbol::Func(name) => {
                        if bindings.function(name).is_none()
                            && seen_funcs.insert(name.as_str())
                            && let Some(g) = funcs.iter().find(|g| &g.name == name)
                        {
                            todo.push(g);
                        }
                    }
                    Symbol::Param(_) => {}
                }
            }
        }
    }
    spaces.sort_by(|a, b| a.0.cmp(&b.0));
    spaces
}

fn collect_symbols<'a>(op: &'a Operand, out: &mut Vec<&'a Symbol>) {
    match op {
        Operand::Symbol { sym, .. } => out.push(sym),
        Operand::Addr(a) => {
            if let ptxeq_ir::AddrBase::Symbol(s) = &a.base {
                out.push(s);
            }
        }
        Operand::List(l) => {
            for o in l {
                collect_symbols(o, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmangling() {
        assert_eq!(unmangled("_Z6my_expf"), Some("my_exp"));
        assert_eq!(unmangled("_Z3fooff"), Some("foo"));
        assert_eq!(unmangled("my_exp"), None);
        assert_eq!(unmangled("_Z99x"), None);
        assert_eq!(unmangled("_ZN2ns3fooEf"), None);
    }

    #[test]
    fn swizzle_128b_permutes_chunks_within_rows() {
        // Row 0 is unchanged, row 1 swaps chunks 0 and 1, row 7 reverses.
        assert_eq!(Swizzle::B128.apply(0), 0);
        assert_eq!(Swizzle::B128.apply(128), 128 + 16);
        assert_eq!(Swizzle::B128.apply(128 + 16), 128);
        assert_eq!(Swizzle::B128.apply(7 * 128), 7 * 128 + 7 * 16);
        assert_eq!(Swizzle::B128.apply(8 * 128 + 4), 8 * 128 + 4);
        assert_eq!(Swizzle::B64.apply(4 * 128), 4 * 128);
        assert_eq!(Swizzle::B64.apply(5 * 128), 5 * 128 + 16);
        assert_eq!(Swizzle::B32.apply(3 * 128 + 16), 3 * 128);
        assert_eq!(Swizzle::None.apply(5 * 128), 5 * 128);
    }
}
