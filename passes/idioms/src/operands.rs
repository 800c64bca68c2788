//! Which operands of an instruction it writes, and every register an
//! instruction mentions.
//!
//! The matcher needs two facts about instructions it did *not* match:
//! whether one writes the sequence's input register, and whether one
//! touches a register internal to the sequence. Both are answered
//! conservatively: for instruction families whose operand layout is not
//! listed here, every register operand counts as written.

use ptxeq_ir::{Instr, InstrData, RegId};

/// How many leading operand positions are destinations; `None` when the
/// layout is not known here (then every operand may be written).
fn dst_count(i: &Instr) -> Option<usize> {
    use Instr::*;
    Some(match i {
        St(_)
        | Red(_)
        | Bra { .. }
        | Ret { .. }
        | Exit
        | Trap
        | Brkpt
        | Nanosleep
        | Bar {
            kind: ptxeq_ir::BarKind::Sync | ptxeq_ir::BarKind::Arrive,
            ..
        }
        | BarWarpSync
        | Fence(_)
        | Prefetch { .. }
        | CpAsyncCommitGroup
        | CpAsyncWaitGroup
        | CpAsyncWaitAll
        | Absorbed { .. } => 0,
        Setp { .. } | Shfl { .. } | Match { .. } | Elect => 2,
        Add { .. }
        | Sub { .. }
        | Mul { .. }
        | Mad { .. }
        | Mul24 { .. }
        | Mad24 { .. }
        | Fma { .. }
        | Div { .. }
        | Rem { .. }
        | Neg { .. }
        | Abs { .. }
        | Min { .. }
        | Max { .. }
        | Copysign { .. }
        | Sad { .. }
        | Dp4a { .. }
        | Dp2a { .. }
        | Math { .. }
        | Testp { .. }
        | And { .. }
        | Or { .. }
        | Xor { .. }
        | Not { .. }
        | Cnot { .. }
        | Lop3 { .. }
        | Shl { .. }
        | Shr { .. }
        | Shf { .. }
        | Bfe { .. }
        | Bfi { .. }
        | Prmt { .. }
        | Popc { .. }
        | Clz { .. }
        | Brev { .. }
        | Bfind { .. }
        | Fns { .. }
        | Bmsk { .. }
        | Szext { .. }
        | Set { .. }
        | Selp { .. }
        | Slct { .. }
        | Mov { .. }
        | Cvt { .. }
        | Cvta { .. }
        | Ld(_)
        | Ldu(_)
        | Isspacep { .. }
        | Atom(_)
        | Activemask
        | Vote { .. }
        | Redux { .. }
        | Idiom { .. } => 1,
        _ => return None,
    })
}

/// Registers `d` may write.
pub(crate) fn writes(d: &InstrData) -> Vec<RegId> {
    let mut out = Vec::new();
    let n = dst_count(&d.instr).unwrap_or(d.operands.len());
    for op in d.operands.iter().take(n) {
        op.collect_regs(&mut out);
    }
    out
}

/// Every register `d` mentions (guard included).
pub(crate) fn mentions(d: &InstrData) -> Vec<RegId> {
    let mut out = Vec::new();
    for op in &d.operands {
        op.collect_regs(&mut out);
    }
    if let Some(g) = d.guard {
        out.push(g.reg);
    }
    out
}

/// Registers `d` reads (its guard included); for unknown layouts, every
/// register it mentions.
pub(crate) fn reads(d: &InstrData) -> Vec<RegId> {
    let mut out = Vec::new();
    let n = dst_count(&d.instr).unwrap_or(0);
    for op in d.operands.iter().skip(n) {
        op.collect_regs(&mut out);
    }
    if let Some(g) = d.guard {
        out.push(g.reg);
    }
    out
}

/// Instructions that change control flow or synchronise: never skipped
/// over inside a recognised sequence.
pub(crate) fn is_control(i: &Instr) -> bool {
    use Instr::*;
    matches!(
        i,
        Bra { .. }
            | Brx { .. }
            | Call { .. }
            | Ret { .. }
            | Exit
            | Trap
            | Brkpt
            | Bar { .. }
            | BarWarpSync
            | BarrierCluster { .. }
            | Mbarrier { .. }
            | Unknown { .. }
    )
}
