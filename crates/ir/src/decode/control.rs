//! Branches, calls, returns.

use super::{Mods, Res, check_ops};
use crate::instr::Instr;
use crate::operand::Operand;
use crate::types::ScalarType;

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let mut ops = ops;
    let instr = match opcode {
        "bra" => {
            let uni = m.flag("uni");
            check_ops(&ops, &["l"])?;
            Instr::Bra { uni }
        }
        "brx" => {
            m.require("idx")?;
            let uni = m.flag("uni");
            check_ops(&ops, &["vl"])?;
            Instr::Brx { uni }
        }
        "call" => {
            let uni = m.flag("uni");
            ops = normalize_call(ops)?;
            Instr::Call { uni }
        }
        "ret" => {
            let uni = m.flag("uni");
            check_ops(&ops, &[""])?;
            Instr::Ret { uni }
        }
        "exit" | "trap" | "brkpt" => {
            check_ops(&ops, &[""])?;
            match opcode {
                "exit" => Instr::Exit,
                "trap" => Instr::Trap,
                _ => Instr::Brkpt,
            }
        }
        "nanosleep" => {
            m.one_type(|t| t == ScalarType::U32)?;
            check_ops(&ops, &["v"])?;
            Instr::Nanosleep
        }
        _ => return Err(format!("unsupported opcode `{opcode}`")),
    };
    Ok((instr, ops))
}

/// `call (r), f, (a, b), proto;` in all its abbreviations →
/// `[List(rets), target, List(args)]` plus the optional fourth operand.
fn normalize_call(ops: Vec<Operand>) -> Result<Vec<Operand>, String> {
    let mut it = ops.into_iter().peekable();
    let mut out = Vec::with_capacity(4);
    // A leading list is the return list only when a target follows it.
    let first = it.next().ok_or("operands: `call` needs a target")?;
    let (rets, target) = match first {
        Operand::List(r) => match it.next() {
            Some(t) => (r, t),
            None => return Err("operands: `call` needs a target after the return list".into()),
        },
        t => (Vec::new(), t),
    };
    if !matches!(
        target,
        Operand::Symbol { .. } | Operand::Reg(_) | Operand::RegLane { .. }
    ) {
        return Err("operands: `call` target must be a function or a register".into());
    }
    let args = match it.peek() {
        Some(Operand::List(_)) => match it.next() {
            Some(Operand::List(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    out.push(Operand::List(rets));
    out.push(target);
    out.push(Operand::List(args));
    if let Some(extra) = it.next() {
        if matches!(extra, Operand::List(_) | Operand::Pair(..)) {
            return Err("operands: unexpected list after call arguments".into());
        }
        out.push(extra);
    }
    if it.next().is_some() {
        return Err("operands: too many operands for `call`".into());
    }
    Ok(out)
}
