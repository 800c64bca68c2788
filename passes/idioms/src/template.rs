//! Templates: a math function's inlined expansion, taken verbatim from the
//! compiler's own output.
//!
//! A template kernel is `y[i] = f(x[i])`; the instructions between the
//! load of `x` and the store of `y` that the stored value depends on
//! (a backward slice, branches and their predicates included) are the
//! expansion. Registers defined once by a `mov` of an immediate are
//! constants: they are folded into the operands that use them, so the
//! matcher accepts a constant inline, in a register, or in a register
//! hoisted out of a loop and shared between several expansions.

use ptxeq_ir::{IdiomFn, Imm, Instr, InstrData, KernelIr, Operand, RegId, ScalarType, StateSpace};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::operands::{reads, writes};

/// One recognisable expansion.
#[derive(Clone, Debug)]
pub struct Template {
    /// Which form this is (`"expf, nvcc 13.5 default flags"`).
    pub name: &'static str,
    pub func: IdiomFn,
    pub ty: ScalarType,
    /// Facts the recognition relies on, printed with the check.
    pub assumptions: &'static [&'static str],
    /// The expansion in program order, constants folded.
    pub(crate) steps: Vec<InstrData>,
    /// The function's argument (the loaded `x`) and result registers.
    pub(crate) leaf: RegId,
    pub(crate) out: RegId,
    /// For each branch step: the step its label lands on (`steps.len()`
    /// when the label follows the last step).
    pub(crate) branch_target: FxHashMap<usize, usize>,
    /// The fused form: the final `mul d, e, s` (result = e·s) became
    /// `fma.rn d, e, s, acc` — nvcc contracts `sum += expf(x)` so — and
    /// `acc` is this placeholder; any operand matches it.
    pub(crate) acc: Option<RegId>,
}

/// The placeholder register of a fused template's addend.
pub(crate) const ACC: RegId = RegId(u32::MAX);

impl Template {
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    pub(crate) fn has_branch(&self) -> bool {
        !self.branch_target.is_empty()
    }

    /// The form with the final product contracted into an `fma` with an
    /// addend (`None` when the last step is not a plain `mul`, or the
    /// expansion branches).
    pub(crate) fn fused(&self, name: &'static str) -> Option<Template> {
        let last = self.steps.last()?;
        let Instr::Mul { ty, mode: None, fp } = last.instr else {
            return None;
        };
        if self.has_branch()
            || fp.sat
            || fp.ftz
            || !matches!(fp.rnd, None | Some(ptxeq_ir::Rounding::Rn))
        {
            return None;
        }
        let mut t = self.clone();
        let step = t.steps.last_mut()?;
        step.instr = Instr::Fma {
            ty,
            fp: ptxeq_ir::FpMods {
                rnd: Some(ptxeq_ir::Rounding::Rn),
                ..fp
            },
            relu: false,
        };
        step.operands.push(Operand::Reg(ACC));
        t.name = name;
        t.acc = Some(ACC);
        Some(t)
    }
}

/// Registers with exactly one write in `k`, that write an unguarded `mov`
/// of an immediate: their constant.
pub(crate) fn constant_regs(k: &KernelIr) -> FxHashMap<RegId, Imm> {
    constant_defs(k)
        .into_iter()
        .map(|(r, (c, _))| (r, c))
        .collect()
}

/// [`constant_regs`] with the index of each defining `mov`.
pub(crate) fn constant_defs(k: &KernelIr) -> FxHashMap<RegId, (Imm, usize)> {
    let mut count: FxHashMap<RegId, u32> = FxHashMap::default();
    let mut value: FxHashMap<RegId, (Imm, usize)> = FxHashMap::default();
    for (i, d) in k.instrs.iter().enumerate() {
        for r in writes(d) {
            *count.entry(r).or_default() += 1;
        }
        if let (Instr::Mov { .. }, None, [Operand::Reg(r), Operand::Imm(c)]) =
            (&d.instr, d.guard, d.operands.as_slice())
        {
            value.insert(*r, (*c, i));
        }
    }
    value.retain(|r, _| count.get(r) == Some(&1));
    value
}

/// `op` with constant registers replaced by their immediates.
pub(crate) fn fold(op: &Operand, consts: &FxHashMap<RegId, Imm>) -> Operand {
    match op {
        Operand::Reg(r) => match consts.get(r) {
            Some(c) => Operand::Imm(*c),
            None => op.clone(),
        },
        Operand::Vector(v) => Operand::Vector(v.iter().map(|o| fold(o, consts)).collect()),
        other => other.clone(),
    }
}

/// Builds the template of function `func` from kernel `k` (one global load
/// of the argument, one global store of the result). Errors name what is
/// missing; they are bugs in the template files, caught by tests.
pub(crate) fn extract(
    k: &KernelIr,
    name: &'static str,
    func: IdiomFn,
    assumptions: &'static [&'static str],
) -> Result<Template, String> {
    let is_global = |s: StateSpace| matches!(s, StateSpace::Global);
    let (ld, ty) = k
        .instrs
        .iter()
        .enumerate()
        .find_map(|(i, d)| match &d.instr {
            Instr::Ld(m) if is_global(m.space) => Some((i, m.ty)),
            _ => None,
        })
        .ok_or("no global load")?;
    let st = k
        .instrs
        .iter()
        .rposition(|d| matches!(&d.instr, Instr::St(m) if is_global(m.space)))
        .ok_or("no global store")?;
    let reg_of = |op: Option<&Operand>| match op {
        Some(Operand::Reg(r)) => Some(*r),
        Some(Operand::Vector(v)) if v.len() == 1 => v[0].as_reg(),
        _ => None,
    };
    // Triton loads floats as .b32: the function's type is the float of
    // the same width.
    let ty = if ty.bit_width() == 64 {
        ScalarType::F64
    } else {
        ScalarType::F32
    };
    let leaf = reg_of(k.instrs[ld].operands.first()).ok_or("load without a register")?;
    let out = reg_of(k.instrs[st].operands.get(1)).ok_or("store without a register")?;
    let consts = constant_regs(k);
    // Backward slice of `out` over the region, to a fixpoint (a register
    // written on two paths keeps both writers).
    let mut needed: FxHashSet<RegId> = [out].into_iter().collect();
    let mut included: FxHashSet<usize> = FxHashSet::default();
    loop {
        let mut changed = false;
        for i in (ld + 1..st).rev() {
            if included.contains(&i) {
                continue;
            }
            let d = &k.instrs[i];
            let w = writes(d);
            if w.iter().any(|r| consts.contains_key(r)) {
                continue;
            }
            let is_branch = matches!(d.instr, Instr::Bra { .. });
            if is_branch || w.iter().any(|r| needed.contains(r)) {
                included.insert(i);
                changed = true;
                for r in reads(d) {
                    if r != leaf && !consts.contains_key(&r) {
                        needed.insert(r);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut order: Vec<usize> = included.into_iter().collect();
    order.sort_unstable();
    let steps: Vec<InstrData> = order
        .iter()
        .map(|&i| {
            let d = &k.instrs[i];
            InstrData {
                guard: d.guard,
                instr: d.instr.clone(),
                operands: d.operands.iter().map(|o| fold(o, &consts)).collect(),
                loc: None,
            }
        })
        .collect();
    let mut branch_target = FxHashMap::default();
    for (j, d) in steps.iter().enumerate() {
        if let Instr::Bra { .. } = d.instr {
            let Some(Operand::Label(l)) = d.operands.first() else {
                return Err("branch without a label".into());
            };
            let target = k.labels[l.index()].target as usize;
            if target <= order[j] || target > st {
                return Err("a branch that does not jump forward inside the expansion".into());
            }
            let at = order
                .iter()
                .position(|&i| i >= target)
                .unwrap_or(order.len());
            branch_target.insert(j, at);
        }
    }
    if steps.iter().any(|d| writes(d).contains(&leaf)) {
        return Err("the expansion overwrites its argument".into());
    }
    if !steps.last().is_some_and(|d| writes(d).contains(&out)) {
        return Err("the last step does not write the result".into());
    }
    Ok(Template {
        name,
        func,
        ty,
        assumptions,
        steps,
        leaf,
        out,
        branch_target,
        acc: None,
    })
}
