//! Finding a template's expansion in a kernel, by dataflow.
//!
//! nvcc schedules an expansion among other instructions, interleaves
//! several expansions, and hoists or shares constants; so a match is not
//! a contiguous copy. Starting from a kernel instruction equal to the
//! template's first step, every further step is looked up in a window of
//! the kernel under a growing register bijection (template register ↔
//! kernel register; constants compared by value whether inline or in a
//! constant register). A match is then accepted only if replacing it is
//! sound (see [`accept`]): the argument is not overwritten inside the
//! span, the internal registers are used by nothing else anywhere in the
//! function, nothing else reads the result early, no foreign control flow
//! or label lies inside, and every branch of the expansion lands where the
//! template's does with only the expansion's own instructions skipped.

use ptxeq_ir::{Instr, InstrData, KernelIr, LabelId, Operand, RegId};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::operands::{is_control, mentions, writes};
use crate::template::Template;

/// Register and label bijections built while matching.
#[derive(Clone, Default)]
struct Binding {
    t2k: FxHashMap<RegId, RegId>,
    k2t: FxHashMap<RegId, RegId>,
    labels: FxHashMap<LabelId, LabelId>,
    /// What a fused template's addend matched.
    acc: Option<Operand>,
    /// Constant registers read in place of immediates, with the kernel
    /// instruction that read them (`usize::MAX` until known).
    consts_used: Vec<(RegId, usize)>,
}

impl Binding {
    /// Records that the constants read so far were read at `at`.
    fn pin_consts(&mut self, at: usize) {
        for c in &mut self.consts_used {
            if c.1 == usize::MAX {
                c.1 = at;
            }
        }
    }

    fn reg(&mut self, t: RegId, k: RegId) -> bool {
        match (self.t2k.get(&t), self.k2t.get(&k)) {
            (Some(x), Some(y)) => *x == k && *y == t,
            (None, None) => {
                self.t2k.insert(t, k);
                self.k2t.insert(k, t);
                true
            }
            _ => false,
        }
    }
}

/// A kernel's facts the matcher consults.
pub(crate) struct Facts {
    pub consts: FxHashMap<RegId, ptxeq_ir::Imm>,
    /// Where each constant register is defined.
    pub const_at: FxHashMap<RegId, usize>,
}

fn op_match(t: &Operand, k: &Operand, b: &mut Binding, f: &Facts) -> bool {
    match (t, k) {
        (Operand::Reg(r), _) if *r == crate::template::ACC => {
            if !matches!(k, Operand::Reg(_) | Operand::Imm(_)) {
                return false;
            }
            b.acc = Some(k.clone());
            true
        }
        (Operand::Imm(a), Operand::Imm(c)) => a == c,
        (Operand::Imm(a), Operand::Reg(r)) => {
            b.consts_used.push((*r, usize::MAX));
            f.consts.get(r) == Some(a)
        }
        (Operand::Reg(tr), Operand::Reg(kr)) => !f.consts.contains_key(kr) && b.reg(*tr, *kr),
        (Operand::Vector(a), Operand::Vector(c)) => {
            a.len() == c.len() && a.iter().zip(c).all(|(x, y)| op_match(x, y, b, f))
        }
        (Operand::Not(a), Operand::Not(c)) => op_match(a, c, b, f),
        (Operand::Label(a), Operand::Label(c)) => match b.labels.get(a) {
            Some(x) => x == c,
            None => {
                if b.labels.values().any(|v| v == c) {
                    return false;
                }
                b.labels.insert(*a, *c);
                true
            }
        },
        (a, c) => a == c,
    }
}

fn instr_match(t: &InstrData, k: &InstrData, b: &mut Binding, f: &Facts) -> bool {
    if t.instr != k.instr || t.operands.len() != k.operands.len() {
        return false;
    }
    match (t.guard, k.guard) {
        (None, None) => {}
        (Some(x), Some(y)) => {
            if x.negated != y.negated || !b.reg(x.reg, y.reg) {
                return false;
            }
        }
        _ => return false,
    }
    t.operands
        .iter()
        .zip(&k.operands)
        .all(|(x, y)| op_match(x, y, b, f))
}

/// A match: the kernel instruction of each step, and the bindings.
pub(crate) struct Found {
    pub at: Vec<usize>,
    pub x: RegId,
    pub out: RegId,
    /// Fused form: the addend, and the register (internal, else unused)
    /// that receives `f(x)` and the step that wrote it.
    pub acc: Option<(Operand, RegId, usize)>,
    internal: Vec<RegId>,
    labels: FxHashMap<LabelId, LabelId>,
    consts_used: Vec<(RegId, usize)>,
}

/// Tries to match `t` with its first step at kernel instruction `start`.
pub(crate) fn match_at(t: &Template, k: &KernelIr, f: &Facts, start: usize) -> Option<Found> {
    let mut b = Binding::default();
    if !instr_match(&t.steps[0], &k.instrs[start], &mut b, f) {
        return None;
    }
    b.pin_consts(start);
    let window = 4 * t.len() + 64;
    let end = (start + window).min(k.instrs.len());
    let mut at = vec![start];
    let mut taken: FxHashSet<usize> = [start].into_iter().collect();
    for step in &t.steps[1..] {
        // Expansions with branches keep program order; straight-line ones
        // may be scheduled in any order their dataflow allows.
        let from = if t.has_branch() {
            at.last().copied().unwrap_or(start) + 1
        } else {
            start + 1
        };
        let mut hit = None;
        for (i, d) in k.instrs.iter().enumerate().take(end).skip(from) {
            if taken.contains(&i) {
                continue;
            }
            let mut trial = b.clone();
            if instr_match(step, d, &mut trial, f) {
                trial.pin_consts(i);
                b = trial;
                hit = Some(i);
                break;
            }
        }
        let i = hit?;
        taken.insert(i);
        at.push(i);
    }
    // Program order of every pair of steps sharing a register one of them
    // writes must be kept.
    for j2 in 0..t.len() {
        let w2 = writes(&t.steps[j2]);
        let m2 = mentions(&t.steps[j2]);
        for j1 in 0..j2 {
            let w1 = writes(&t.steps[j1]);
            let m1 = mentions(&t.steps[j1]);
            let dep = w1.iter().any(|r| m2.contains(r)) || w2.iter().any(|r| m1.contains(r));
            if dep && at[j1] >= at[j2] {
                return None;
            }
        }
    }
    let x = *b.t2k.get(&t.leaf)?;
    let out = *b.t2k.get(&t.out)?;
    let acc = match (&t.acc, &b.acc) {
        (None, _) => None,
        (Some(_), None) => return None,
        (Some(_), Some(op)) => {
            // f(x) goes to the register of the product's first factor.
            let last = t.steps.last()?;
            let Some(Operand::Reg(te)) = last.operands.get(1) else {
                return None;
            };
            let j = t.steps.iter().position(|d| writes(d).contains(te))?;
            Some((op.clone(), *b.t2k.get(te)?, at[j]))
        }
    };
    let internal = b
        .t2k
        .iter()
        .filter(|(tr, _)| **tr != t.leaf && **tr != t.out)
        .map(|(_, kr)| *kr)
        .collect();
    Some(Found {
        at,
        x,
        out,
        acc,
        internal,
        labels: b.labels,
        consts_used: b.consts_used,
    })
}

/// Is replacing the match by one instruction at its last position sound?
pub(crate) fn accept(t: &Template, k: &KernelIr, f: &Facts, m: &Found) -> bool {
    let set: FxHashSet<usize> = m.at.iter().copied().collect();
    let first = *m.at.iter().min().unwrap_or(&0);
    let last = *m.at.iter().max().unwrap_or(&0);
    // The result is written last.
    if m.at.last() != Some(&last) {
        return false;
    }
    // A constant register read in place of an immediate is set earlier in
    // program order than the read (its only write; so it holds the
    // template's constant there, not an undefined value on a first loop
    // iteration).
    if m.consts_used
        .iter()
        .any(|(r, use_at)| f.const_at.get(r).is_none_or(|&at| at >= *use_at))
    {
        return false;
    }
    let internal: FxHashSet<RegId> = m.internal.iter().copied().collect();
    for (i, d) in k.instrs.iter().enumerate() {
        if set.contains(&i) {
            continue;
        }
        let ms = mentions(d);
        // Internal registers belong to the expansion alone.
        if ms.iter().any(|r| internal.contains(r)) {
            return false;
        }
        if (first..=last).contains(&i)
            && (is_control(&d.instr) || ms.contains(&m.out) || writes(d).contains(&m.x))
        {
            return false;
        }
    }
    // Labels inside the span are the expansion's own, reached only from
    // its own branches, and land where the template's do.
    let mut own: FxHashSet<LabelId> = FxHashSet::default();
    for (j, &tj) in &t.branch_target {
        let Some(Operand::Label(tl)) = t.steps[*j].operands.first() else {
            return false;
        };
        let Some(kl) = m.labels.get(tl) else {
            return false;
        };
        own.insert(*kl);
        let target = k.labels[kl.index()].target as usize;
        let from = m.at[*j];
        if target <= from {
            return false;
        }
        // Everything the branch skips is the expansion's, or a constant
        // `mov` whose register nothing outside the expansion reads.
        for i in from + 1..target {
            if set.contains(&i) {
                continue;
            }
            let d = &k.instrs[i];
            let w = writes(d);
            let is_const = matches!(d.instr, Instr::Mov { .. })
                && !w.is_empty()
                && w.iter().all(|r| f.consts.contains_key(r));
            if !is_const || w.iter().any(|r| read_outside(k, &set, *r, i)) {
                return false;
            }
        }
        let before = if tj == 0 { 0 } else { m.at[tj - 1] };
        let ok = if tj < m.at.len() {
            before < target && target <= m.at[tj]
        } else {
            target == last + 1
        };
        if !ok {
            return false;
        }
    }
    for (li, l) in k.labels.iter().enumerate() {
        let id = LabelId(li as u32);
        let inside = (first + 1..=last).contains(&(l.target as usize));
        if (inside || own.contains(&id)) && !l.prototype {
            if !own.contains(&id) {
                return false;
            }
            // Only the expansion's branches may jump there.
            for (i, d) in k.instrs.iter().enumerate() {
                let jumps = d
                    .operands
                    .iter()
                    .any(|o| matches!(o, Operand::Label(x) if *x == id));
                if jumps && !set.contains(&i) {
                    return false;
                }
            }
        }
    }
    true
}

/// Does an instruction other than the expansion's (and other than the
/// defining one at `def`) read `r`?
fn read_outside(k: &KernelIr, set: &FxHashSet<usize>, r: RegId, def: usize) -> bool {
    k.instrs
        .iter()
        .enumerate()
        .any(|(i, d)| i != def && !set.contains(&i) && mentions(d).contains(&r))
}
