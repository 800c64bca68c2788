//! The data domain: what float "data" values are.
//!
//! The engine does everything that is concrete itself (integers, addresses,
//! predicates, control flow, synchronisation) and hands every operation on
//! real-valued data to a [`Domain`]. Four domains exist:
//!
//! - [`crate::Opaque`] (here): structural hashes with exact constants — fast,
//!   no term store; what `unroll` runs with.
//! - [`crate::Concrete`] (here): `f64` values from a given input assignment —
//!   tests and counterexample replay.
//! - [`crate::Ieee`] (here): bit-exact IEEE values, rounded per each
//!   instruction's modifiers — replays the original PTX of math-library
//!   expansions and counterexamples exactly (`Domain::BIT_EXACT`).
//! - the term domain (in `passes/symex`, over `ptxeq_terms::Terms`):
//!   real-valued terms. The trait is designed so it can be implemented
//!   outside this crate: values are small `Copy` handles, every operation the
//!   terms API offers has a method here.
//!
//! Conventions (docs/semantics.md §2, printed in every report): rounding modes,
//! `.ftz`, `.sat` and f16/bf16/f32/f64 width changes are the identity on the
//! real value (as in `-ffast-math`); unordered comparisons (`ltu`, ...)
//! equal the ordered ones because real values are never NaN. The bit-exact
//! domain, whose values can be NaN, evaluates them exactly
//! ([`Domain::cmp_unordered`], [`Domain::unordered`]).

use ptxeq_terms::MathFn;
use serde::{Deserialize, Serialize};

/// The IEEE format a real value was loaded or computed in. Only widths and
/// the decoding of constants depend on it; over the reals the value is the
/// same in every format.
///
/// `I8`..`I64` are not real formats: a data value of one of them is an
/// *integer* that depends on tensor data, an element of the ring Z/2^w of
/// its width (signedness belongs to operations, not to values). Every
/// place that reads a data value as a real checks [`Fmt::is_int`] first.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Fmt {
    F16,
    Bf16,
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    /// fp8 formats (`crate::narrow`): one byte, exact real values. Listed
    /// last so the serialised names of the others keep their order.
    E4m3,
    E5m2,
}

impl Fmt {
    /// Bytes of the encoding.
    pub fn size(self) -> u8 {
        match self {
            Fmt::I8 | Fmt::E4m3 | Fmt::E5m2 => 1,
            Fmt::F16 | Fmt::Bf16 | Fmt::I16 => 2,
            Fmt::F32 | Fmt::I32 => 4,
            Fmt::F64 | Fmt::I64 => 8,
        }
    }

    /// Whether this is an integer width (see the type's docs).
    pub fn is_int(self) -> bool {
        matches!(self, Fmt::I8 | Fmt::I16 | Fmt::I32 | Fmt::I64)
    }

    /// Bits of the encoding.
    pub fn bits(self) -> u32 {
        u32::from(self.size()) * 8
    }

    /// The integer format of `bits` bits (8, 16, 32 or 64).
    pub fn int(bits: u32) -> Option<Fmt> {
        match bits {
            8 => Some(Fmt::I8),
            16 => Some(Fmt::I16),
            32 => Some(Fmt::I32),
            64 => Some(Fmt::I64),
            _ => None,
        }
    }

    /// The integer format of an integer tensor dtype (`None` for floats
    /// and `pred`).
    pub fn int_of_dtype(d: ptxeq_spec::DType) -> Option<Fmt> {
        use ptxeq_spec::DType as D;
        match d {
            D::S8 | D::U8 => Some(Fmt::I8),
            D::S16 | D::U16 => Some(Fmt::I16),
            D::S32 | D::U32 => Some(Fmt::I32),
            D::S64 | D::U64 => Some(Fmt::I64),
            _ => None,
        }
    }

    /// The format of a scalar float PTX type (`None` for non-float and for
    /// formats the engine does not model: tf32, fp8, fp6, fp4).
    pub fn of(ty: ptxeq_ir::ScalarType) -> Option<Fmt> {
        use ptxeq_ir::ScalarType as T;
        match ty {
            T::F16 => Some(Fmt::F16),
            T::Bf16 => Some(Fmt::Bf16),
            T::F32 => Some(Fmt::F32),
            T::F64 => Some(Fmt::F64),
            _ => None,
        }
    }

    /// The lane format of a packed type (`.f16x2` → f16).
    pub fn lane_of(ty: ptxeq_ir::ScalarType) -> Option<Fmt> {
        use ptxeq_ir::ScalarType as T;
        match ty {
            T::F16x2 => Some(Fmt::F16),
            T::Bf16x2 => Some(Fmt::Bf16),
            _ => None,
        }
    }

    /// The tensor dtype's format.
    pub fn of_dtype(d: ptxeq_spec::DType) -> Option<Fmt> {
        use ptxeq_spec::DType as D;
        match d {
            D::F16 => Some(Fmt::F16),
            D::Bf16 => Some(Fmt::Bf16),
            D::F32 => Some(Fmt::F32),
            D::F64 => Some(Fmt::F64),
            D::F8e4m3 => Some(Fmt::E4m3),
            D::F8e5m2 => Some(Fmt::E5m2),
            _ => None,
        }
    }

    /// The narrow (fp8) format this is, if it is one.
    pub fn narrow(self) -> Option<crate::narrow::Narrow> {
        match self {
            Fmt::E4m3 => Some(crate::narrow::Narrow::E4m3),
            Fmt::E5m2 => Some(crate::narrow::Narrow::E5m2),
            _ => None,
        }
    }

    /// The fp8 format of a PTX element type (`.e4m3`, `.e5m2`).
    pub fn fp8_of(ty: ptxeq_ir::ScalarType) -> Option<Fmt> {
        match ty {
            ptxeq_ir::ScalarType::E4m3 => Some(Fmt::E4m3),
            ptxeq_ir::ScalarType::E5m2 => Some(Fmt::E5m2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fmt::F16 => "f16",
            Fmt::Bf16 => "bf16",
            Fmt::F32 => "f32",
            Fmt::F64 => "f64",
            Fmt::I8 => "b8",
            Fmt::I16 => "b16",
            Fmt::I32 => "b32",
            Fmt::I64 => "b64",
            Fmt::E4m3 => "e4m3",
            Fmt::E5m2 => "e5m2",
        }
    }
}

/// Unary real operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum UnOp {
    Neg,
    Abs,
    Recip,
    /// `2^x` (`ex2`).
    Exp2,
    /// `log2 x` (`lg2`).
    Lg2,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Tanh,
    /// `e^x` (a recognised `expf`/`exp` idiom, `passes/idioms`).
    Exp,
    /// Natural logarithm (a recognised `logf`/`log` idiom).
    Ln,
    /// The error function (a recognised `erff` idiom).
    Erf,
    /// `e^x − 1` (a recognised `expm1f` idiom): one operation so that the
    /// bit-exact domain rounds once, as libm's `expm1` does near 0.
    Expm1,
    /// `ln(1 + x)` (a recognised `log1pf` idiom), likewise.
    Log1p,
    /// `log10 x`, `10^x`, `sinh x`, `cosh x` (recognised `log10f`,
    /// `exp10f`, `sinhf`, `coshf` idioms), likewise one rounding each.
    Log10,
    Exp10,
    Sinh,
    Cosh,
}

impl UnOp {
    /// The math function this operation is (`ptxeq_terms::MathFn`, the
    /// one table of the vocabulary); `None` for `neg` and `abs`.
    pub fn math(self) -> Option<MathFn> {
        Some(match self {
            UnOp::Neg | UnOp::Abs => return None,
            UnOp::Recip => MathFn::Recip,
            UnOp::Exp2 => MathFn::Exp2,
            UnOp::Lg2 => MathFn::Log2,
            UnOp::Sqrt => MathFn::Sqrt,
            UnOp::Rsqrt => MathFn::Rsqrt,
            UnOp::Sin => MathFn::Sin,
            UnOp::Cos => MathFn::Cos,
            UnOp::Tanh => MathFn::Tanh,
            UnOp::Exp => MathFn::Exp,
            UnOp::Ln => MathFn::Log,
            UnOp::Erf => MathFn::Erf,
            UnOp::Expm1 => MathFn::Expm1,
            UnOp::Log1p => MathFn::Log1p,
            UnOp::Log10 => MathFn::Log10,
            UnOp::Exp10 => MathFn::Exp10,
            UnOp::Sinh => MathFn::Sinh,
            UnOp::Cosh => MathFn::Cosh,
        })
    }

    /// The operation computing one-argument function `f`.
    pub fn of_math(f: MathFn) -> Option<UnOp> {
        UNARY_MATH.iter().copied().find(|u| u.math() == Some(f))
    }

    /// The operation computing the function named `name`
    /// ([`MathFn::name`]: an idiom's or a bound function's name).
    pub fn named(name: &str) -> Option<UnOp> {
        MathFn::named(name).and_then(UnOp::of_math)
    }
}

/// Every [`UnOp`] that is a math function.
const UNARY_MATH: [UnOp; 17] = [
    UnOp::Recip,
    UnOp::Exp2,
    UnOp::Lg2,
    UnOp::Sqrt,
    UnOp::Rsqrt,
    UnOp::Sin,
    UnOp::Cos,
    UnOp::Tanh,
    UnOp::Exp,
    UnOp::Ln,
    UnOp::Erf,
    UnOp::Expm1,
    UnOp::Log1p,
    UnOp::Log10,
    UnOp::Exp10,
    UnOp::Sinh,
    UnOp::Cosh,
];

/// Binary real operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    /// `x^y` (a recognised `powf` idiom, `passes/idioms`): C's `pow`
    /// (real for negative `x` and integer `y`, NaN for negative `x` and
    /// non-integer `y`).
    Pow,
}

impl BinOp {
    pub fn is_commutative(self) -> bool {
        matches!(self, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max)
    }
}

/// Comparisons over the (extended) reals.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    /// The same comparison with operands swapped (`a < b` ⇔ `b > a`).
    pub fn swapped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            c => c,
        }
    }

    /// Evaluates on an ordering.
    pub fn holds(self, o: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Cmp::Eq => o == Equal,
            Cmp::Ne => o != Equal,
            Cmp::Lt => o == Less,
            Cmp::Le => o != Greater,
            Cmp::Gt => o == Greater,
            Cmp::Ge => o != Less,
        }
    }
}

/// Integer operations on integer data (see [`Domain::int_op`]). The ring
/// operations `Add`, `Sub`, `Mul`, `Neg`, `Not` are exact modulo 2^w; the
/// rest are PTX's integer and bit instructions (`ptxeq_terms::IntFn` has
/// their meaning).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum IntOp {
    Add,
    Sub,
    Mul,
    Neg,
    Not,
    /// Zero- / sign-extension of a `from`-bit operand.
    Zext {
        from: u8,
    },
    Sext {
        from: u8,
    },
    /// The low bits of a wider operand.
    Trunc,
    And,
    Or,
    Xor,
    Shl,
    Shr {
        signed: bool,
    },
    Div {
        signed: bool,
    },
    Rem {
        signed: bool,
    },
    MulHi {
        signed: bool,
    },
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    Abs,
    Popc,
    Clz,
    Brev,
    Bfind {
        signed: bool,
        shiftamt: bool,
    },
    Bfe {
        signed: bool,
    },
    Bfi,
    /// `prmt` mode: 0 generic, 1..=6 f4e, b4e, rc8, ecl, ecr, rc16.
    Prmt {
        mode: u8,
    },
    Lop3 {
        lut: u8,
    },
    AddSat,
    SubSat,
}

/// Rounding of a real to an integer (`cvt.rni/rzi/rmi/rpi`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum IntRounding {
    Nearest,
    Zero,
    Down,
    Up,
}

/// Boolean connectives on data predicates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// A data domain. `Val` is both a real value and a data boolean (the
/// result of comparing real values); the engine never mixes them up.
///
/// Every method is total: the engine has already checked that the operands
/// are data values of the right kind.
pub trait Domain {
    /// A handle: small (≤ 8 bytes keeps a register at 16 bytes) and `Copy`.
    type Val: Copy + Eq + std::hash::Hash + std::fmt::Debug;

    /// True for a domain whose values are IEEE bit patterns
    /// ([`crate::Ieee`]): the engine then hands it each instruction's
    /// modifiers ([`Domain::set_mode`]) and keeps registers as concrete
    /// bits ([`Domain::to_bits`]), so integer operations on float bits are
    /// exact instead of unsupported. Real-valued domains leave it false.
    const BIT_EXACT: bool = false;
    /// The rounding/ftz/sat/approx modifiers of the instruction about to
    /// run (called only when [`Domain::BIT_EXACT`]).
    fn set_mode(&mut self, _mode: crate::ieee::FpMode) {}
    /// The encoding of `v` in format `fmt` (rounded per the current mode),
    /// for bit-exact domains; `None` elsewhere.
    fn to_bits(&mut self, _v: Self::Val, _fmt: Fmt) -> Option<u64> {
        None
    }

    /// The exact value of an IEEE constant of format `fmt` given by its bit
    /// pattern (in the low bits of `bits`); ±inf included; `None` for NaN.
    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<Self::Val>;
    /// The exact value of an integer (`cvt.rn.f32.s32` of a concrete int).
    fn int_const(&mut self, v: i128) -> Self::Val;
    /// Element `index` (flat, row-major) of input tensor number `tensor`
    /// (the position of the tensor in the spec's sorted tensor table),
    /// stored in format `fmt`.
    fn input(&mut self, tensor: u32, index: u64, fmt: Fmt) -> Self::Val;
    /// The concrete bits of an integer input element, if this domain has
    /// them (concrete replay); `None` makes such elements integer data
    /// ([`Domain::int_data`]).
    fn int_input(&mut self, _tensor: u32, _index: u64) -> Option<u64> {
        None
    }

    // Integer data. A domain that models it returns values for all of the
    // following; the defaults (`None`) leave integers that depend on
    // tensor data unsupported, which is what the concrete domains, whose
    // integer inputs are concrete bits, never need.

    /// The element types of the tensors, by tensor number (called once by
    /// the engine before the run).
    fn set_tensor_types(&mut self, _dtypes: &[ptxeq_spec::DType]) {}
    /// Element `index` of integer input tensor `tensor` (its type from
    /// [`Domain::set_tensor_types`]) as integer data of format `fmt`.
    fn int_data(&mut self, _tensor: u32, _index: u64, _fmt: Fmt) -> Option<Self::Val> {
        None
    }
    /// A concrete `w`-bit integer as integer data (to combine with data).
    fn int_lit(&mut self, _w: u8, _bits: u64) -> Option<Self::Val> {
        None
    }
    /// `op(args)` with a `w`-bit result; each operand with its width.
    fn int_op(&mut self, _op: IntOp, _w: u8, _args: &[(Self::Val, u8)]) -> Option<Self::Val> {
        None
    }
    /// `a op b` of two integers of one width, signed or unsigned: a data
    /// boolean.
    fn int_cmp(
        &mut self,
        _op: Cmp,
        _signed: bool,
        _a: Self::Val,
        _b: Self::Val,
    ) -> Option<Self::Val> {
        None
    }
    /// The real value of integer data read as signed or unsigned
    /// (`cvt.rn.f32.s32`).
    fn int_to_real(&mut self, _a: Self::Val, _signed: bool) -> Option<Self::Val> {
        None
    }
    /// The value of a real as an `f64` when this domain computes concrete
    /// values ([`crate::Concrete`]): real-to-integer conversions of data
    /// then give concrete bits. `None` elsewhere.
    fn concrete_value(&self, _a: Self::Val) -> Option<f64> {
        None
    }
    /// A real rounded to a `w`-bit integer and saturated to the signed or
    /// unsigned range (`cvt.rzi.s32.f32` of real data).
    fn real_to_int(
        &mut self,
        _a: Self::Val,
        _rnd: IntRounding,
        _signed: bool,
        _w: u8,
    ) -> Option<Self::Val> {
        None
    }

    /// `name(args…)`: an uninterpreted function symbol (a spec's
    /// `[functions] name = "uninterpreted"`). A symbolic domain keeps it
    /// a symbol; by default it is the fixed polynomial interpretation
    /// counterexamples use (`ptxeq_terms::uninterpreted`), built from the
    /// domain's own arithmetic, so concrete replays agree with witnesses.
    fn apply(&mut self, name: &str, args: &[Self::Val]) -> Self::Val {
        let f = ptxeq_terms::uninterpreted::Interpretation::of(name, args.len());
        let mut acc = self.int_const(i128::from(f.constant));
        let mut sum: Option<Self::Val> = None;
        for (&l, &x) in f.linear.iter().zip(args) {
            let c = self.int_const(i128::from(l));
            let t = self.binary(BinOp::Mul, c, x);
            acc = self.binary(BinOp::Add, acc, t);
            sum = Some(match sum {
                None => x,
                Some(s) => self.binary(BinOp::Add, s, x),
            });
        }
        if let Some(s) = sum {
            let sq = self.binary(BinOp::Mul, s, s);
            let q = self.int_const(i128::from(f.square));
            let t = self.binary(BinOp::Mul, q, sq);
            acc = self.binary(BinOp::Add, acc, t);
        }
        let d = self.int_const(i128::from(ptxeq_terms::uninterpreted::DENOMINATOR));
        let poly = self.binary(BinOp::Div, acc, d);
        // At an infinite argument the interpretation is `c/16`.
        let (Some(pinf), Some(ninf)) = (
            self.float_const(Fmt::F64, f64::INFINITY.to_bits()),
            self.float_const(Fmt::F64, f64::NEG_INFINITY.to_bits()),
        ) else {
            return poly;
        };
        let mut any_inf = self.bool_const(false);
        for &x in args {
            let a = self.cmp(Cmp::Eq, x, pinf);
            let b = self.cmp(Cmp::Eq, x, ninf);
            let ab = self.bool_op(BoolOp::Or, a, b);
            any_inf = self.bool_op(BoolOp::Or, any_inf, ab);
        }
        let c = self.int_const(i128::from(f.constant));
        let at_inf = self.binary(BinOp::Div, c, d);
        self.select(any_inf, at_inf, poly)
    }

    fn unary(&mut self, op: UnOp, a: Self::Val) -> Self::Val;
    fn binary(&mut self, op: BinOp, a: Self::Val, b: Self::Val) -> Self::Val;
    /// `a·b + c`.
    fn fma(&mut self, a: Self::Val, b: Self::Val, c: Self::Val) -> Self::Val;

    /// A data boolean.
    fn cmp(&mut self, op: Cmp, a: Self::Val, b: Self::Val) -> Self::Val;
    /// PTX's unordered comparison (`setp.ltu` …): `a op b`, or `a` or `b`
    /// is NaN. Real values are never NaN (docs/semantics.md §2), so by default it
    /// is the ordered [`Domain::cmp`]; only a domain whose values can be
    /// NaN ([`crate::Ieee`]) overrides it.
    fn cmp_unordered(&mut self, op: Cmp, a: Self::Val, b: Self::Val) -> Self::Val {
        self.cmp(op, a, b)
    }
    /// `a` or `b` is NaN (`setp.nan`; `setp.num` is its negation). False
    /// over the reals. The engine asks only bit-exact domains
    /// ([`Domain::BIT_EXACT`]); the others get the constant directly.
    fn unordered(&mut self, _a: Self::Val, _b: Self::Val) -> Self::Val {
        self.bool_const(false)
    }
    fn bool_const(&mut self, b: bool) -> Self::Val;
    fn not(&mut self, a: Self::Val) -> Self::Val;
    fn bool_op(&mut self, op: BoolOp, a: Self::Val, b: Self::Val) -> Self::Val;
    /// `cond ? a : b` (for reals and for booleans).
    fn select(&mut self, cond: Self::Val, a: Self::Val, b: Self::Val) -> Self::Val;

    /// The boolean's value when it is a constant (the engine then treats
    /// the predicate as concrete: it may branch on it).
    fn as_bool(&self, v: Self::Val) -> Option<bool>;
    /// True only when `a` and `b` are certainly the same real value
    /// (benign same-value stores). Never true by accident for different
    /// values, except as documented by the domain.
    fn same_value(&self, a: Self::Val, b: Self::Val) -> bool;
    /// A short description for messages (`x[3]`, `opaque #12`, `0.5`).
    fn describe(&self, v: Self::Val) -> String;
    /// True when equal values are equal handles (`==` on `Val` is value
    /// equality where the engine needs one). False for the term domain,
    /// whose pending sums are handles of their own: the engine then asks
    /// [`Domain::same_value`].
    const UNIQUE_HANDLES: bool = true;

    /// True only for [`crate::layout_tags::Tagged`]: values carry wmma
    /// fragment layout tags, and the engine checks element-wise fragment
    /// use with them (`engine/wmma_check.rs`). The four methods below are
    /// the engine's access to the tags; other domains keep the defaults.
    const LAYOUT_TAGS: bool = false;
    /// The layout tag of `v` (`None`: not computed from a fragment element).
    fn layout_tag(&self, _v: Self::Val) -> Option<crate::layout_tags::LayoutTag> {
        None
    }
    /// The position-free form of `v`: its tag's, or its value's.
    fn layout_form(&self, _v: Self::Val) -> u64 {
        0
    }
    /// `v` with its tag replaced (`None` strips it).
    fn with_layout_tag(
        &mut self,
        v: Self::Val,
        _tag: Option<crate::layout_tags::LayoutTag>,
    ) -> Self::Val {
        v
    }
    /// The instruction (packed id) about to run, named by new tags.
    fn layout_at(&mut self, _at: u32) {}

    /// True for a domain that wants to know which instruction runs next
    /// ([`Domain::at_instr`]): the term domain, to say which instruction
    /// first built a term (reports name it; off unless asked for).
    const AT_INSTR: bool = false;
    /// The instruction (packed id, [`crate::InstrRef::from_packed`])
    /// about to run (called only when [`Domain::AT_INSTR`]).
    fn at_instr(&mut self, _at: u32) {}
}

#[cfg(test)]
mod math_vocabulary_tests {
    use super::*;

    /// The function vocabulary of the IR (recognised idioms) stays inside
    /// the one table (`ptxeq_terms::MathFn`), so the engine can compute
    /// each of them. (The spec's bound known functions are checked where
    /// they are resolved, in `ptxeq-bind`.)
    #[test]
    fn every_idiom_is_in_the_table() {
        for f in ptxeq_ir::IdiomFn::ALL {
            let m = MathFn::named(f.as_str());
            assert!(m.is_some(), "idiom {}", f.as_str());
            if m.is_some_and(|m| m.arity() == 1) {
                assert!(UnOp::named(f.as_str()).is_some(), "idiom {}", f.as_str());
            }
        }
        for u in UNARY_MATH {
            let f = u.math().expect("a math function");
            assert_eq!(UnOp::of_math(f), Some(u));
        }
    }
}
