//! Per-function facts computed once before a run: register slots, loop
//! ranges (for messages), atomics whose result is never read, callees.

use std::sync::Arc;

use ptxeq_ir::{Instr, KernelIr, Operand, StateSpace, Symbol, VarScope};

/// What a run needs to know about one function besides its IR.
#[derive(Debug)]
pub(crate) struct FuncInfo {
    pub ir: Arc<KernelIr>,
    /// Register → first slot in the frame's register file (vector
    /// registers take one slot per lane).
    pub reg_slot: Vec<u32>,
    pub nslots: usize,
    /// Register → declared width in bits.
    pub reg_width: Vec<u32>,
    /// Back-edge ranges `[target, branch]` (natural loops, approximately).
    pub loops: Vec<(u32, u32)>,
    /// Per instruction: an `atom` or a strong `ld` whose destination
    /// registers are never read anywhere in the function (its returned
    /// value is unused, race.rs).
    pub dead_dest: Vec<bool>,
    /// Function-scope `.local` and `.param` variables: allocated per frame.
    pub private_vars: Vec<u32>,
    /// Per instruction: the callee index (into the engine's function
    /// table) of a direct `call`.
    pub callee: Vec<Option<u32>>,
}

impl FuncInfo {
    /// `func_names` resolves call targets: the engine's function table
    /// (index 0 is the kernel).
    pub(crate) fn new(ir: Arc<KernelIr>, func_names: &[String]) -> FuncInfo {
        let mut reg_slot = Vec::with_capacity(ir.regs.len());
        let mut n = 0u32;
        for r in &ir.regs {
            reg_slot.push(n);
            n += u32::from(r.vector.unwrap_or(1).max(1));
        }
        let mut loops = Vec::new();
        let mut uses = vec![0u32; ir.regs.len()];
        let mut callee = vec![None; ir.instrs.len()];
        for (i, ins) in ir.instrs.iter().enumerate() {
            if let Instr::Bra { .. } = ins.instr
                && let Some(Operand::Label(l)) = ins.operands.first()
                && let Some(lab) = ir.labels.get(l.index())
                && (lab.target as usize) <= i
            {
                loops.push((lab.target, i as u32));
            }
            let mut regs = Vec::new();
            for op in &ins.operands {
                op.collect_regs(&mut regs);
            }
            if let Some(g) = ins.guard {
                regs.push(g.reg);
            }
            for r in regs {
                if let Some(u) = uses.get_mut(r.index()) {
                    *u += 1;
                }
            }
            if let Instr::Call { .. } = ins.instr
                && let Some(Operand::Symbol {
                    sym: Symbol::Func(name),
                    ..
                }) = ins.operands.get(1)
            {
                callee[i] = func_names.iter().position(|f| f == name).map(|p| p as u32);
            }
        }
        let dead_dest = ir
            .instrs
            .iter()
            .map(|ins| {
                let dead = |op: Option<&Operand>| match op {
                    Some(Operand::Sink) => true,
                    Some(Operand::Reg(r)) => uses.get(r.index()) == Some(&1),
                    Some(Operand::Vector(v)) => v.iter().all(|o| match o {
                        Operand::Sink => true,
                        Operand::Reg(r) => uses.get(r.index()) == Some(&1),
                        _ => false,
                    }),
                    _ => false,
                };
                match &ins.instr {
                    Instr::Atom(_) | Instr::Ld(_) => dead(ins.operands.first()),
                    _ => false,
                }
            })
            .collect();
        let private_vars = ir
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                v.scope == VarScope::Function
                    && matches!(v.space, StateSpace::Local | StateSpace::Param)
            })
            .map(|(i, _)| i as u32)
            .collect();
        let reg_width = ir.regs.iter().map(|r| r.ty.bit_width()).collect();
        FuncInfo {
            reg_width,
            reg_slot,
            nslots: n as usize,
            loops,
            dead_dest,
            private_vars,
            callee,
            ir,
        }
    }

    /// Whether the branch at `pc` controls a loop: a back edge, an exit
    /// out of a loop body that contains it, or a guard that skips a whole
    /// loop (the `if (n < 1)` nvcc puts before a loop running `n` times).
    pub(crate) fn is_loop_branch(&self, pc: u32, target: u32) -> bool {
        if target <= pc {
            return true;
        }
        self.loops.iter().any(|&(s, e)| {
            (s <= pc && pc <= e && !(s..=e).contains(&target)) || (pc < s && e < target)
        })
    }
}
