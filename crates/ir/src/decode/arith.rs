//! Integer and floating-point arithmetic, transcendental approximations.

use super::{Mods, Res, check_ops};
use crate::instr::{Carry, FpMods, Instr, MathFn, MinMaxMods, Precision, TestpOp};
use crate::operand::Operand;
use crate::types::{MulMode, Rounding, ScalarType};

fn is_num(t: ScalarType) -> bool {
    t != ScalarType::Pred && (t.is_int() || t.is_float())
}

fn is_fp_rounding(r: Rounding) -> bool {
    matches!(r, Rounding::Rn | Rounding::Rz | Rounding::Rm | Rounding::Rp)
}

/// `{.rnd}{.ftz}{.sat}`, only the IEEE rounding modes.
fn fp_mods(m: &mut Mods<'_>) -> FpMods {
    FpMods {
        rnd: m.take(|s| Rounding::parse(s).filter(|r| is_fp_rounding(*r))),
        ftz: m.flag("ftz"),
        sat: m.flag("sat"),
    }
}

/// Integer forms accept only `.sat` (and only where PTX has it).
fn int_fp_ok(ty: ScalarType, fp: &FpMods, sat_ok: bool) -> Result<(), String> {
    if ty.is_int() && (fp.rnd.is_some() || fp.ftz) {
        return Err(format!("rounding/.ftz on integer type `.{ty}`"));
    }
    if ty.is_int() && fp.sat && !sat_ok {
        return Err(format!("`.sat` not accepted with `.{ty}`"));
    }
    Ok(())
}

fn carry(opcode_c: bool, cc: bool) -> Carry {
    match (opcode_c, cc) {
        (false, false) => Carry::None,
        (false, true) => Carry::Out,
        (true, false) => Carry::In,
        (true, true) => Carry::InOut,
    }
}

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let instr = match opcode {
        "add" | "addc" | "sub" | "subc" => {
            let fp = fp_mods(m);
            let cc = m.flag("cc");
            let ty = m.one_type(is_num)?;
            let c = carry(opcode.ends_with('c'), cc);
            int_fp_ok(ty, &fp, ty == ScalarType::S32)?;
            if c != Carry::None
                && !matches!(
                    ty,
                    ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
                )
            {
                return Err(format!(
                    "carry forms need a 32/64-bit integer type, not `.{ty}`"
                ));
            }
            if c != Carry::None && fp.sat {
                return Err("`.sat` with carry".into());
            }
            check_ops(&ops, &["dvv"])?;
            if opcode.starts_with("add") {
                Instr::Add { ty, fp, carry: c }
            } else {
                Instr::Sub { ty, fp, carry: c }
            }
        }
        "mul" | "mad" | "madc" => {
            let mode = m.take(MulMode::parse);
            let fp = fp_mods(m);
            let cc = m.flag("cc");
            let ty = m.one_type(is_num)?;
            if ty.is_int() && mode.is_none() {
                return Err(format!("integer `{opcode}` needs `.lo`, `.hi` or `.wide`"));
            }
            if ty.is_float() && mode.is_some() {
                return Err(format!("`.lo/.hi/.wide` on float type `.{ty}`"));
            }
            if mode == Some(MulMode::Wide)
                && !matches!(
                    ty,
                    ScalarType::U16 | ScalarType::S16 | ScalarType::U32 | ScalarType::S32
                )
            {
                return Err(format!(
                    "`.wide` needs a 16/32-bit integer type, not `.{ty}`"
                ));
            }
            let sat_ok = opcode != "mul" && mode == Some(MulMode::Hi) && ty == ScalarType::S32;
            int_fp_ok(ty, &fp, sat_ok)?;
            if opcode == "mul" {
                if cc {
                    return Err("unexpected modifier `.cc`".into());
                }
                check_ops(&ops, &["dvv"])?;
                Instr::Mul { ty, mode, fp }
            } else {
                let c = carry(opcode == "madc", cc);
                if c != Carry::None && !ty.is_int() {
                    return Err("carry forms need an integer type".into());
                }
                check_ops(&ops, &["dvvv"])?;
                Instr::Mad {
                    ty,
                    mode,
                    fp,
                    carry: c,
                }
            }
        }
        "mul24" | "mad24" => {
            let hi = match m.take(MulMode::parse) {
                Some(MulMode::Hi) => true,
                Some(MulMode::Lo) => false,
                _ => return Err(format!("`{opcode}` needs `.lo` or `.hi`")),
            };
            let sat = opcode == "mad24" && m.flag("sat");
            let ty = m.one_type(|t| matches!(t, ScalarType::U32 | ScalarType::S32))?;
            if opcode == "mul24" {
                check_ops(&ops, &["dvv"])?;
                Instr::Mul24 { ty, hi }
            } else {
                check_ops(&ops, &["dvvv"])?;
                Instr::Mad24 { ty, hi, sat }
            }
        }
        "fma" => {
            let fp = fp_mods(m);
            let relu = m.flag("relu");
            let ty = m.one_type(ScalarType::is_float)?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Fma { ty, fp, relu }
        }
        "div" => {
            let precision = if m.flag("approx") {
                Precision::Approx
            } else if m.flag("full") {
                Precision::Full
            } else {
                Precision::Exact
            };
            let fp = fp_mods(m);
            let ty = m.one_type(is_num)?;
            int_fp_ok(ty, &fp, false)?;
            if ty.is_int() && precision != Precision::Exact {
                return Err("`.approx`/`.full` on integer division".into());
            }
            check_ops(&ops, &["dvv"])?;
            Instr::Div { ty, fp, precision }
        }
        "rem" => {
            let ty = m.one_type(|t| t.is_int() && t != ScalarType::Pred)?;
            check_ops(&ops, &["dvv"])?;
            Instr::Rem { ty }
        }
        "neg" | "abs" => {
            let ftz = m.flag("ftz");
            let ty = m.one_type(is_num)?;
            if ftz && !ty.is_float() {
                return Err("`.ftz` on integer type".into());
            }
            check_ops(&ops, &["dv"])?;
            if opcode == "neg" {
                Instr::Neg { ty, ftz }
            } else {
                Instr::Abs { ty, ftz }
            }
        }
        "min" | "max" => {
            let mods = MinMaxMods {
                ftz: m.flag("ftz"),
                nan: m.flag("NaN"),
                relu: m.flag("relu"),
                xorsign_abs: {
                    let x = m.flag("xorsign");
                    let a = m.flag("abs");
                    if x != a {
                        return Err("`.xorsign` and `.abs` come together".into());
                    }
                    x
                },
            };
            let ty = m.one_type(is_num)?;
            check_ops(&ops, &["dvv", "dvvv"])?;
            if opcode == "min" {
                Instr::Min { ty, mods }
            } else {
                Instr::Max { ty, mods }
            }
        }
        "copysign" => {
            let ty = m.one_type(|t| matches!(t, ScalarType::F32 | ScalarType::F64))?;
            check_ops(&ops, &["dvv"])?;
            Instr::Copysign { ty }
        }
        "sad" => {
            let ty = m.one_type(|t| t.is_signed() || t.is_unsigned())?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Sad { ty }
        }
        "dp4a" | "dp2a" => {
            let hi = if opcode == "dp2a" {
                match m.take(MulMode::parse) {
                    Some(MulMode::Hi) => true,
                    Some(MulMode::Lo) => false,
                    _ => return Err("`dp2a` needs `.lo` or `.hi`".into()),
                }
            } else {
                false
            };
            let tys = m.n_types(2)?;
            let ok = |t: ScalarType| matches!(t, ScalarType::U32 | ScalarType::S32);
            if !tys.iter().all(|t| ok(*t)) {
                return Err("dp4a/dp2a types must be `.u32`/`.s32`".into());
            }
            check_ops(&ops, &["dvvv"])?;
            if opcode == "dp4a" {
                Instr::Dp4a {
                    a_ty: tys[0],
                    b_ty: tys[1],
                }
            } else {
                Instr::Dp2a {
                    hi,
                    a_ty: tys[0],
                    b_ty: tys[1],
                }
            }
        }
        "rcp" | "sqrt" | "rsqrt" | "ex2" | "lg2" | "sin" | "cos" | "tanh" => {
            let func = MathFn::parse(opcode).ok_or("unreachable math fn")?;
            let approx = m.flag("approx");
            let fp = fp_mods(m);
            let ty = m.one_type(ScalarType::is_float)?;
            if fp.sat {
                return Err("unexpected modifier `.sat`".into());
            }
            let ieee_ok = matches!(func, MathFn::Rcp | MathFn::Sqrt);
            match (approx, fp.rnd) {
                (true, Some(_)) => return Err("both `.approx` and a rounding mode".into()),
                (false, None) => {
                    return Err(format!("`{opcode}` needs `.approx` or a rounding mode"));
                }
                (false, Some(_)) if !ieee_ok => {
                    return Err(format!("`{opcode}` has only an `.approx` form"));
                }
                _ => {}
            }
            check_ops(&ops, &["dv"])?;
            Instr::Math {
                func,
                ty,
                fp,
                precision: if approx {
                    Precision::Approx
                } else {
                    Precision::Exact
                },
            }
        }
        "testp" => {
            let op = m.take_req("testp operation", TestpOp::parse)?;
            let ty = m.one_type(|t| matches!(t, ScalarType::F32 | ScalarType::F64))?;
            check_ops(&ops, &["dv"])?;
            Instr::Testp { op, ty }
        }
        _ => return Err(format!("unsupported opcode `{opcode}`")),
    };
    Ok((instr, ops))
}
