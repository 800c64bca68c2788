//! The IEEE modifiers of the instruction being executed.
//!
//! Domains over the reals ignore them (docs/semantics.md §2); the bit-exact
//! [`crate::Ieee`] domain rounds, flushes and clamps per them. The engine
//! hands them over through [`crate::Domain::set_mode`] before every
//! instruction, only for domains that ask (`Domain::BIT_EXACT`), so the
//! symbolic and opaque runs pay nothing.

use ptxeq_ir::{FpMods, Instr, MathFn, Precision, Rounding};

use super::num::Rnd;
use crate::domain::Fmt;

/// Rounding, flush-to-zero, saturation and approximation of one
/// instruction; `fmt` is its result format (`None`: not a float op).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct FpMode {
    pub fmt: Option<Fmt>,
    pub rnd: Rnd,
    pub ftz: bool,
    pub sat: bool,
    /// `.approx` / `.full`: modelled as the correctly rounded function.
    pub approx: bool,
    /// `min`/`max` `.NaN`: a NaN operand gives NaN (without it, the other
    /// operand).
    pub nan: bool,
}

fn rnd_of(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz | Rounding::Rzi) => Rnd::Rz,
        Some(Rounding::Rm | Rounding::Rmi) => Rnd::Rm,
        Some(Rounding::Rp | Rounding::Rpi) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

fn with(ty: ptxeq_ir::ScalarType, fp: &FpMods) -> FpMode {
    FpMode {
        fmt: Fmt::of(ty).or_else(|| Fmt::lane_of(ty)),
        rnd: rnd_of(fp.rnd),
        ftz: fp.ftz,
        sat: fp.sat,
        ..FpMode::default()
    }
}

/// The mode of `instr` (the default for instructions without float
/// arithmetic).
pub fn mode_of(instr: &Instr) -> FpMode {
    let plain = |ty, ftz| FpMode {
        fmt: Fmt::of(ty).or_else(|| Fmt::lane_of(ty)),
        ftz,
        ..FpMode::default()
    };
    match instr {
        Instr::Add { ty, fp, .. }
        | Instr::Sub { ty, fp, .. }
        | Instr::Mul { ty, fp, .. }
        | Instr::Mad { ty, fp, .. }
        | Instr::Fma { ty, fp, .. } => with(*ty, fp),
        Instr::Div { ty, fp, precision } => FpMode {
            approx: *precision != Precision::Exact,
            ..with(*ty, fp)
        },
        Instr::Math {
            func,
            ty,
            fp,
            precision,
        } => FpMode {
            // ex2/lg2/sin/cos/tanh/rsqrt exist only as `.approx`.
            approx: *precision != Precision::Exact || !matches!(func, MathFn::Rcp | MathFn::Sqrt),
            ..with(*ty, fp)
        },
        Instr::Neg { ty, ftz } | Instr::Abs { ty, ftz } => plain(*ty, *ftz),
        Instr::Min { ty, mods } | Instr::Max { ty, mods } => FpMode {
            nan: mods.nan,
            ..plain(*ty, mods.ftz)
        },
        Instr::Setp { ty, ftz, .. } => plain(*ty, *ftz),
        // `.ftz` flushes the compared operands; the result is 1.0/0.0 or
        // an integer mask, which flushing leaves alone.
        Instr::Set { dst_ty, ftz, .. } => plain(*dst_ty, *ftz),
        Instr::Cvt {
            dst_ty,
            rnd,
            ftz,
            sat,
            ..
        } => FpMode {
            fmt: Fmt::of(*dst_ty).or_else(|| Fmt::lane_of(*dst_ty)),
            rnd: rnd_of(*rnd),
            ftz: *ftz,
            sat: *sat,
            ..FpMode::default()
        },
        Instr::Idiom { ty, .. } => plain(*ty, false),
        _ => FpMode::default(),
    }
}
