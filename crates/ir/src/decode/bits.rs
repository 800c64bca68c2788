//! Logic and bit manipulation, comparison and selection.

use super::{Mods, Res, check_ops, split_pair};
use crate::instr::{Instr, PrmtMode, ShiftMode};
use crate::operand::Operand;
use crate::types::{BoolOp, CmpOp, ScalarType};

fn logic_ty(t: ScalarType) -> bool {
    t == ScalarType::Pred || t.is_int()
}

fn int_ty(t: ScalarType) -> bool {
    t.is_int() && t != ScalarType::Pred
}

fn b32_64(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::B32
            | ScalarType::B64
            | ScalarType::U32
            | ScalarType::U64
            | ScalarType::S32
            | ScalarType::S64
    )
}

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let mut ops = ops;
    let instr = match opcode {
        "and" | "or" | "xor" => {
            let ty = m.one_type(logic_ty)?;
            check_ops(&ops, &["dvv"])?;
            match opcode {
                "and" => Instr::And { ty },
                "or" => Instr::Or { ty },
                _ => Instr::Xor { ty },
            }
        }
        "not" | "cnot" => {
            let ty = m.one_type(if opcode == "not" { logic_ty } else { int_ty })?;
            check_ops(&ops, &["dv"])?;
            if opcode == "not" {
                Instr::Not { ty }
            } else {
                Instr::Cnot { ty }
            }
        }
        "lop3" => {
            let ty = m.one_type(|t| t == ScalarType::B32)?;
            check_ops(&ops, &["dvvvv"])?;
            Instr::Lop3 { ty }
        }
        "shl" | "shr" => {
            let ty = m.one_type(int_ty)?;
            if opcode == "shl" && !ty.is_bits() {
                return Err(format!("`shl` takes a `.bN` type, not `.{ty}`"));
            }
            check_ops(&ops, &["dvv"])?;
            if opcode == "shl" {
                Instr::Shl { ty }
            } else {
                Instr::Shr { ty }
            }
        }
        "shf" => {
            let left = match m.take(|s| match s {
                "l" => Some(true),
                "r" => Some(false),
                _ => None,
            }) {
                Some(l) => l,
                None => return Err("`shf` needs `.l` or `.r`".into()),
            };
            let mode = m.take_req("`.clamp` or `.wrap`", ShiftMode::parse)?;
            let ty = m.one_type(|t| t == ScalarType::B32)?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Shf { left, mode, ty }
        }
        "bfe" => {
            let ty = m.one_type(|t| b32_64(t) && !t.is_bits())?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Bfe { ty }
        }
        "bfi" => {
            let ty = m.one_type(|t| matches!(t, ScalarType::B32 | ScalarType::B64))?;
            check_ops(&ops, &["dvvvv"])?;
            Instr::Bfi { ty }
        }
        "prmt" => {
            let mode = m.take(PrmtMode::parse);
            let ty = m.one_type(|t| t == ScalarType::B32)?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Prmt { ty, mode }
        }
        "popc" | "clz" | "brev" => {
            let ty = m.one_type(|t| matches!(t, ScalarType::B32 | ScalarType::B64))?;
            check_ops(&ops, &["dv"])?;
            match opcode {
                "popc" => Instr::Popc { ty },
                "clz" => Instr::Clz { ty },
                _ => Instr::Brev { ty },
            }
        }
        "bfind" => {
            let shiftamt = m.flag("shiftamt");
            let ty = m.one_type(|t| b32_64(t) && !t.is_bits())?;
            check_ops(&ops, &["dv"])?;
            Instr::Bfind { ty, shiftamt }
        }
        "fns" => {
            let ty = m.one_type(|t| t == ScalarType::B32)?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Fns { ty }
        }
        "bmsk" | "szext" => {
            let mode = m.take_req("`.clamp` or `.wrap`", ShiftMode::parse)?;
            let ty = if opcode == "bmsk" {
                m.one_type(|t| t == ScalarType::B32)?
            } else {
                m.one_type(|t| matches!(t, ScalarType::U32 | ScalarType::S32))?
            };
            check_ops(&ops, &["dvv"])?;
            if opcode == "bmsk" {
                Instr::Bmsk { mode, ty }
            } else {
                Instr::Szext { mode, ty }
            }
        }
        "setp" => {
            let cmp = m.take_req("comparison operator", CmpOp::parse)?;
            let bool_op = m.take(BoolOp::parse);
            let ftz = m.flag("ftz");
            let ty = m.one_type(|t| t != ScalarType::Pred)?;
            cmp_ok(cmp, ty, ftz)?;
            ops = split_pair(ops, 0);
            if bool_op.is_some() {
                check_ops(&ops, &["ddvvv"])?;
            } else {
                check_ops(&ops, &["ddvv"])?;
            }
            Instr::Setp {
                cmp,
                bool_op,
                ftz,
                ty,
            }
        }
        "set" => {
            let cmp = m.take_req("comparison operator", CmpOp::parse)?;
            let bool_op = m.take(BoolOp::parse);
            let ftz = m.flag("ftz");
            let tys = m.n_types(2)?;
            let (dst_ty, src_ty) = (tys[0], tys[1]);
            if !matches!(dst_ty, ScalarType::U32 | ScalarType::S32 | ScalarType::F32)
                && !dst_ty.is_packed()
            {
                return Err(format!("`set` destination type `.{dst_ty}` not accepted"));
            }
            cmp_ok(cmp, src_ty, ftz)?;
            if bool_op.is_some() {
                check_ops(&ops, &["dvvv"])?;
            } else {
                check_ops(&ops, &["dvv"])?;
            }
            Instr::Set {
                cmp,
                bool_op,
                ftz,
                dst_ty,
                src_ty,
            }
        }
        "selp" => {
            let ty = m.one_type(|t| t != ScalarType::Pred)?;
            check_ops(&ops, &["dvvv"])?;
            Instr::Selp { ty }
        }
        "slct" => {
            let ftz = m.flag("ftz");
            let tys = m.n_types(2)?;
            if !matches!(tys[1], ScalarType::S32 | ScalarType::F32) {
                return Err(format!("`slct` selector type `.{}` not accepted", tys[1]));
            }
            check_ops(&ops, &["dvvv"])?;
            Instr::Slct {
                ftz,
                dst_ty: tys[0],
                src_ty: tys[1],
            }
        }
        _ => return Err(format!("unsupported opcode `{opcode}`")),
    };
    Ok((instr, ops))
}

/// Unsigned / unordered comparison spellings only make sense for some types.
fn cmp_ok(cmp: CmpOp, ty: ScalarType, ftz: bool) -> Result<(), String> {
    use CmpOp::*;
    let unordered = matches!(cmp, Equ | Neu | Ltu | Leu | Gtu | Geu | Num | Nan);
    let unsigned = matches!(cmp, Lo | Ls | Hi | Hs);
    if unordered && !ty.is_float() {
        return Err(format!("`.{cmp}` needs a float type, not `.{ty}`"));
    }
    if unsigned && ty.is_float() {
        return Err(format!("`.{cmp}` needs an integer type, not `.{ty}`"));
    }
    if ftz && !ty.is_float() {
        return Err("`.ftz` on an integer comparison".into());
    }
    Ok(())
}
