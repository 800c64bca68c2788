//! Recognition of the spin loop around an `mbarrier.test_wait` /
//! `mbarrier.try_wait`.
//!
//! A wait instruction returns a predicate: true once the phase it tests
//! has completed, false otherwise (`try_wait` may also give up after a
//! time limit). Kernels poll it in a loop. The engine does not unroll the
//! polling: it parks the thread at the wait until the phase completes and
//! then lets the wait return true (`mbarrier.rs`). That is exact only when
//! every path the thread can take after a *false* result is a pure spin:
//! it comes back to the same wait without touching memory, synchronising
//! or leaving the function. Then every real execution (k false results,
//! then a true one) ends in the state of the parked one, except for the
//! registers the spin path writes (retry counters, timer reads, backoff
//! amounts), whose values depend on how long the thread spun. The engine
//! makes those registers undefined when the wait returns, so any later
//! use of one is reported instead of silently taking one schedule's value.
//!
//! The analysis walks the function from the instruction after the wait
//! with the wait's predicate known to be false, propagating the few facts
//! that decide nvcc's and hand-written loops' branches (`selp` of the
//! predicate, `setp` comparisons of known values, `mov` of constants,
//! predicate negation); every other branch is followed both ways. Facts
//! only come from constants in the code, so the walk is finite.

use ptxeq_ir::{BoolOp, CmpOp, Imm, Instr, InstrData, KernelIr, Operand, RegId, ScalarType};
use rustc_hash::FxHashSet;

/// The registers a recognised spin path writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spin {
    pub written: Vec<RegId>,
    /// The instructions of the spin path (the wait excluded).
    pub path: Vec<u32>,
}

type Facts = Vec<(u32, u64)>;

fn fact(f: &Facts, r: RegId) -> Option<u64> {
    f.iter()
        .find(|(k, _)| *k == r.index() as u32)
        .map(|(_, v)| *v)
}

fn set(f: &mut Facts, r: RegId, v: Option<u64>) {
    f.retain(|(k, _)| *k != r.index() as u32);
    if let Some(v) = v {
        f.push((r.index() as u32, v));
        f.sort_unstable();
    }
}

fn value(f: &Facts, op: &Operand) -> Option<u64> {
    match op {
        Operand::Reg(r) => fact(f, *r),
        Operand::Imm(Imm::Int(i)) => Some(*i as u64),
        Operand::Not(inner) => value(f, inner).map(|v| u64::from(v == 0)),
        _ => None,
    }
}

fn mask(v: u64, ty: ScalarType) -> u64 {
    let w = ty.bit_width();
    if w >= 64 { v } else { v & ((1u64 << w) - 1) }
}

fn signed(v: u64, ty: ScalarType) -> i64 {
    let w = ty.bit_width().clamp(1, 64);
    ((v << (64 - w)) as i64) >> (64 - w)
}

/// `setp` on two known integers (`None`: not decided here).
fn compare(cmp: CmpOp, ty: ScalarType, a: u64, b: u64) -> Option<bool> {
    if ty.is_float() {
        return None;
    }
    let (a, b) = (mask(a, ty), mask(b, ty));
    let s = ty.is_signed();
    let (sa, sb) = (signed(a, ty), signed(b, ty));
    Some(match cmp {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt if s => sa < sb,
        CmpOp::Le if s => sa <= sb,
        CmpOp::Gt if s => sa > sb,
        CmpOp::Ge if s => sa >= sb,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        _ => return None,
    })
}

/// Whether an instruction is free of effects beyond its destination
/// registers (and may sit on a spin path).
fn pure(ins: &Instr) -> bool {
    matches!(
        ins,
        Instr::Add { .. }
            | Instr::Sub { .. }
            | Instr::Mul { .. }
            | Instr::Mad { .. }
            | Instr::Min { .. }
            | Instr::Max { .. }
            | Instr::Neg { .. }
            | Instr::Abs { .. }
            | Instr::And { .. }
            | Instr::Or { .. }
            | Instr::Xor { .. }
            | Instr::Not { .. }
            | Instr::Shl { .. }
            | Instr::Shr { .. }
            | Instr::Setp { .. }
            | Instr::Selp { .. }
            | Instr::Mov { .. }
            | Instr::Cvt { .. }
            | Instr::Nanosleep
            | Instr::Absorbed { .. }
    )
}

/// Destination registers of a pure instruction (`ptxeq_ir::facts`).
fn dests(ins: &InstrData, out: &mut Vec<RegId>) {
    out.extend(ins.writes());
}

/// Recognises the spin loop around the wait at `wait` (writing predicate
/// `dest`). `Err` says why the code after a false result is not a pure
/// spin (the caller reports it unsupported).
pub(crate) fn analyse(ir: &KernelIr, wait: u32, dest: &Operand) -> Result<Spin, String> {
    let Operand::Reg(p) = dest else {
        return Err("the wait's result is not written to a predicate register".into());
    };
    let mut start: Facts = Vec::new();
    set(&mut start, *p, Some(0));
    let mut work: Vec<(u32, Facts)> = vec![(wait + 1, start)];
    let mut seen: FxHashSet<(u32, Facts)> = FxHashSet::default();
    let mut written: Vec<RegId> = Vec::new();
    let mut back = false;
    while let Some((pc, mut facts)) = work.pop() {
        if pc == wait {
            back = true;
            continue;
        }
        if !seen.insert((pc, facts.clone())) {
            continue;
        }
        let Some(ins) = ir.instrs.get(pc as usize) else {
            return Err(format!(
                "after a false result the thread can reach the end of the function (from instruction {pc})"
            ));
        };
        let guard = match ins.guard {
            None => Some(true),
            Some(g) => fact(&facts, g.reg).map(|v| (v != 0) != g.negated),
        };
        if guard == Some(false) {
            work.push((pc + 1, facts));
            continue;
        }
        if guard.is_none() {
            // Not executed: falls through with the facts unchanged.
            work.push((pc + 1, facts.clone()));
        }
        match &ins.instr {
            Instr::Bra { .. } => {
                let Some(Operand::Label(l)) = ins.operands.first() else {
                    return Err(format!(
                        "indirect branch at instruction {pc} on the spin path"
                    ));
                };
                let Some(lab) = ir.labels.get(l.index()) else {
                    return Err(format!("unresolved branch target at instruction {pc}"));
                };
                work.push((lab.target, facts));
                continue;
            }
            i if pure(i) => {}
            other => {
                return Err(format!(
                    "after a false result the thread executes `{}` (instruction {pc}), which is not part of a pure polling loop",
                    other.mnemonic()
                ));
            }
        }
        let mut d = Vec::new();
        dests(ins, &mut d);
        for r in &d {
            if !written.contains(r) {
                written.push(*r);
            }
        }
        let ops = &ins.operands;
        let known = guard == Some(true);
        let result: Vec<(RegId, Option<u64>)> = match &ins.instr {
            Instr::Mov { .. } => match ops.first() {
                Some(Operand::Reg(r)) => vec![(*r, ops.get(1).and_then(|a| value(&facts, a)))],
                _ => d.iter().map(|r| (*r, None)).collect(),
            },
            Instr::Selp { .. } => match (ops.first(), ops.get(3).and_then(|c| value(&facts, c))) {
                (Some(Operand::Reg(r)), Some(c)) => {
                    let pick = if c != 0 { ops.get(1) } else { ops.get(2) };
                    vec![(*r, pick.and_then(|a| value(&facts, a)))]
                }
                _ => d.iter().map(|r| (*r, None)).collect(),
            },
            Instr::Not {
                ty: ScalarType::Pred,
            } => match ops.first() {
                Some(Operand::Reg(r)) => vec![(
                    *r,
                    ops.get(1)
                        .and_then(|a| value(&facts, a))
                        .map(|v| u64::from(v == 0)),
                )],
                _ => d.iter().map(|r| (*r, None)).collect(),
            },
            Instr::Setp {
                cmp, bool_op, ty, ..
            } => {
                let a = ops.get(2).and_then(|a| value(&facts, a));
                let b = ops.get(3).and_then(|b| value(&facts, b));
                let mut res = match (a, b) {
                    (Some(a), Some(b)) => compare(*cmp, *ty, a, b),
                    _ => None,
                };
                if let Some(op) = bool_op {
                    let c = ops.get(4).and_then(|c| value(&facts, c)).map(|c| c != 0);
                    res = match (res, c, op) {
                        (Some(x), Some(y), BoolOp::And) => Some(x && y),
                        (Some(x), Some(y), BoolOp::Or) => Some(x || y),
                        (Some(x), Some(y), BoolOp::Xor) => Some(x ^ y),
                        _ => None,
                    };
                }
                let mut v = Vec::new();
                if let Some(Operand::Reg(r)) = ops.first() {
                    v.push((*r, res.map(u64::from)));
                }
                if let Some(Operand::Reg(q)) = ops.get(1) {
                    // Without a bool op `q = !p`; with one, not tracked.
                    let qv = if bool_op.is_none() {
                        res.map(|x| u64::from(!x))
                    } else {
                        None
                    };
                    v.push((*q, qv));
                }
                v
            }
            _ => d.iter().map(|r| (*r, None)).collect(),
        };
        for (r, v) in result {
            set(&mut facts, r, if known { v } else { None });
        }
        work.push((pc + 1, facts));
    }
    if !back {
        return Err("no path after a false result comes back to the wait".into());
    }
    let mut path: Vec<u32> = seen.into_iter().map(|(pc, _)| pc).collect();
    path.sort_unstable();
    path.dedup();
    Ok(Spin { written, path })
}

/// Whether the timer value `mov`ed into a register at `pc` is read only on
/// recognised spin paths (the back-off of a polling loop, which the engine
/// never executes): then the read may give an undefined value. Any other
/// use keeps the timer unsupported.
pub(crate) fn timer_only_in_spins(ir: &KernelIr, pc: u32) -> bool {
    let Some(Operand::Reg(r)) = ir.instrs.get(pc as usize).and_then(|i| i.operands.first()) else {
        return false;
    };
    let mut spin_pcs: FxHashSet<u32> = FxHashSet::default();
    for (i, ins) in ir.instrs.iter().enumerate() {
        if let Instr::Mbarrier {
            op: ptxeq_ir::MbarrierOp::Wait { .. },
            ..
        } = ins.instr
            && let Some(d) = ins.operands.first()
            && let Ok(s) = analyse(ir, i as u32, d)
        {
            spin_pcs.extend(s.path);
        }
    }
    let mut any = false;
    for (i, ins) in ir.instrs.iter().enumerate() {
        if i as u32 == pc {
            continue;
        }
        let mut regs = Vec::new();
        let skip_dest = pure(&ins.instr) && !matches!(ins.instr, Instr::Nanosleep);
        for (k, op) in ins.operands.iter().enumerate() {
            if k == 0 && skip_dest {
                continue;
            }
            if k == 1 && matches!(ins.instr, Instr::Setp { .. }) {
                continue;
            }
            op.collect_regs(&mut regs);
        }
        if let Some(g) = ins.guard {
            regs.push(g.reg);
        }
        if regs.contains(r) {
            any = true;
            if !spin_pcs.contains(&(i as u32)) {
                return false;
            }
        }
    }
    any
}

/// Whether the timer read at `pc` (a `mov` from `%clock`/`%globaltimer`)
/// is dead: nothing the kernel observes depends on its destination. By
/// register name over the whole kernel (not per definition, so
/// conservative): a register is live when a guard, a branch, a store or
/// any other instruction with an effect reads it, or a pure instruction
/// whose destination is live reads it. `nanosleep` is the only effect a
/// timer may feed (its duration changes no value). Profiling code whose
/// output was compiled out leaves such reads (the asm is volatile).
pub(crate) fn timer_dead(ir: &KernelIr, pc: u32) -> bool {
    let Some(Operand::Reg(r)) = ir.instrs.get(pc as usize).and_then(|i| i.operands.first()) else {
        return false;
    };
    let transparent =
        |i: &Instr| pure(i) && !matches!(i, Instr::Nanosleep | Instr::Absorbed { .. });
    let sources = |ins: &InstrData| {
        let mut regs = Vec::new();
        for (k, op) in ins.operands.iter().enumerate() {
            if k == 0 || (k == 1 && matches!(ins.instr, Instr::Setp { .. })) {
                continue;
            }
            op.collect_regs(&mut regs);
        }
        regs
    };
    let mut live: FxHashSet<RegId> = FxHashSet::default();
    for ins in &ir.instrs {
        if let Some(g) = ins.guard {
            live.insert(g.reg);
        }
        if matches!(ins.instr, Instr::Nanosleep) || transparent(&ins.instr) {
            continue;
        }
        let mut regs = Vec::new();
        for op in &ins.operands {
            op.collect_regs(&mut regs);
        }
        live.extend(regs);
    }
    loop {
        let mut grew = false;
        for ins in &ir.instrs {
            if !transparent(&ins.instr) {
                continue;
            }
            let mut ds = Vec::new();
            dests(ins, &mut ds);
            if ds.iter().any(|d| live.contains(d)) {
                for x in sources(ins) {
                    grew |= live.insert(x);
                }
            }
        }
        if !grew {
            break;
        }
    }
    !live.contains(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ir(text: &str) -> std::sync::Arc<KernelIr> {
        let ptx = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.shared .align 8 .b64 bar;\n{text}\n}}\n"
        );
        let m = ptxeq_lower::lower_source(&ptx);
        assert!(m.diagnostics.is_empty(), "{:?}", m.diagnostics);
        std::sync::Arc::new(m.module.kernels.into_iter().next().expect("kernel"))
    }

    fn wait_index(k: &KernelIr) -> u32 {
        k.instrs
            .iter()
            .position(|i| matches!(i.instr, Instr::Mbarrier { .. }))
            .expect("wait") as u32
    }

    fn run(text: &str) -> Result<Spin, String> {
        let k = ir(text);
        let w = wait_index(&k);
        let d = k.instrs[w as usize].operands[0].clone();
        analyse(&k, w, &d)
    }

    #[test]
    fn hand_written_try_wait_loop() {
        let s = run("mov.u32 %r1, bar;\nL: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;\n@!%p1 bra L;\nret;")
            .expect("spin");
        assert!(s.written.is_empty());
        let s = run("mov.u32 %r1, bar;\nL: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;\n@%p1 bra D;\nbra.uni L;\nD: ret;")
            .expect("spin");
        assert!(s.written.is_empty());
    }

    #[test]
    fn selp_setp_and_backoff_counter() {
        let s = run("mov.u32 %r1, bar;\nmov.u32 %r5, 0;\nL: mbarrier.test_wait.shared.b64 %p1, [%r1], %rd1;\nselp.b32 %r3, 1, 0, %p1;\nsetp.eq.s32 %p2, %r3, 0;\n@%p2 bra S;\nbra.uni D;\nS: add.s32 %r5, %r5, 1;\nsetp.lt.s32 %p3, %r5, 16;\n@%p3 bra L;\nnanosleep.u32 100;\nbra.uni L;\nD: ret;")
            .expect("spin");
        assert_eq!(s.written.len(), 4, "{s:?}");
    }

    /// A timer read whose value reaches only dead arithmetic (or a
    /// nanosleep) is dead; one that reaches a store, through arithmetic,
    /// or a branch is not.
    #[test]
    fn dead_timer_reads() {
        let pc = |k: &KernelIr| {
            k.instrs
                .iter()
                .position(|i| {
                    matches!(i.instr, Instr::Mov { .. })
                        && format!("{:?}", i.operands).contains("Clock")
                })
                .expect("timer read") as u32
        };
        for (text, dead) in [
            ("mov.u32 %r1, %clock;\nsub.s32 %r2, %r1, 5;\nret;", true),
            ("mov.u32 %r1, %clock;\nnanosleep.u32 %r1;\nret;", true),
            (
                "mov.u32 %r1, %clock;\nsub.s32 %r2, %r1, 5;\nmov.u32 %r3, bar;\nst.shared.u32 [%r3], %r2;\nret;",
                false,
            ),
            (
                "mov.u32 %r1, %clock;\nsetp.gt.u32 %p1, %r1, 7;\n@%p1 bra D;\nD: ret;",
                false,
            ),
        ] {
            let k = ir(text);
            assert_eq!(timer_dead(&k, pc(&k)), dead, "{text}");
        }
    }

    #[test]
    fn side_effects_or_exits_on_the_false_path_are_rejected() {
        let e = run("mov.u32 %r1, bar;\nL: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;\n@%p1 bra D;\nst.shared.u32 [%r1], 0;\nbra.uni L;\nD: ret;")
            .expect_err("store");
        assert!(e.contains("st.shared"), "{e}");
        // A single test whose false result falls through to other code.
        let e = run(
            "mov.u32 %r1, bar;\nmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;\nret;",
        )
        .expect_err("no loop");
        assert!(e.contains("ret") || e.contains("back"), "{e}");
    }
}
