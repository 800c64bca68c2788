//! Expansions with a *tail*: code nvcc lays out after the function's
//! `ret`, reached by branches from the expansion and returning by a
//! branch to the *join* — the label right after the expansion, where the
//! code that uses the result begins.
//!
//! powf with both arguments variable is such an expansion: the common
//! path ends `add.rn d, x, y` (the NaN case) falling through to the join
//! `J`, the special cases (x or y zero, infinite, negative x) are blocks
//! after `ret` that each end `bra.uni J`. In a kernel the code between
//! `J` and the tail (the *consumer*: the store, the rest of a loop body,
//! the `ret`) is not the expansion's.
//!
//! f64 `pow` returns from its tail onto a step of the main part instead
//! (the final select of 1 for `x == 1 || y == 0`, which every path
//! runs): the join label then lands inside the expansion and is its own
//! like any other (`rejoin`).
//!
//! The rewrite puts the idiom at the main part's last step (right before
//! `J`) and absorbs everything else, tail included. That is the original
//! computation when (checked by [`accept`]): every main-part branch lands
//! where the template's does, skipping only the expansion's own
//! instructions (constant `mov`s read by nothing else excepted); branches
//! into the tail land exactly on the tail's first step; branches to the
//! join land exactly on `J = idiom + 1`; the instruction before the tail
//! is an unconditional jump, `ret` or `exit` (so after the rewrite the
//! dead tail is never entered); nothing else in the tail; no label inside
//! the main part or the tail is reached from outside the expansion; the
//! internal registers are the expansion's alone; nothing foreign in the
//! main part mentions the result or writes an argument after the
//! expansion first reads it.

use std::ops::Range;

use ptxeq_ir::{Imm, Instr, InstrData, KernelIr, LabelId, Operand, RegId, StateSpace, Symbol};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::operands::is_control;

/// The instructions after the unguarded `ret`/`exit` that follows the
/// store at `st` (empty when nothing follows it).
pub(crate) fn tail_range(k: &KernelIr, st: usize) -> Range<usize> {
    let n = k.instrs.len();
    match (st + 1..n).find(|&i| {
        k.instrs[i].guard.is_none() && matches!(k.instrs[i].instr, Instr::Ret { .. } | Instr::Exit)
    }) {
        Some(r) => r + 1..n,
        None => n..n,
    }
}

/// The template kernel's parameter a global load's address comes from.
fn param_of(k: &KernelIr, load: usize) -> Option<usize> {
    let mut stack: Vec<RegId> = Vec::new();
    if let Some(Operand::Addr(a)) = k.instrs[load].operands.get(1)
        && let ptxeq_ir::AddrBase::Reg(r) = a.base
    {
        stack.push(r);
    }
    let mut seen: FxHashSet<RegId> = FxHashSet::default();
    let mut found: Option<usize> = None;
    while let Some(r) = stack.pop() {
        if !seen.insert(r) || seen.len() > 64 {
            continue;
        }
        for d in k.instrs.iter().filter(|d| d.writes().contains(&r)) {
            match (&d.instr, d.operands.get(1)) {
                (Instr::Ld(m), Some(Operand::Addr(a))) if m.space == StateSpace::Param => {
                    if let ptxeq_ir::AddrBase::Symbol(Symbol::Param(p)) = &a.base {
                        if found.is_some_and(|f| f != p.index()) {
                            return None;
                        }
                        found = Some(p.index());
                    }
                }
                _ => stack.extend(d.reads()),
            }
        }
    }
    found
}

/// The function's arguments: the registers of the template kernel's
/// global loads, in the order of the parameters they load from (so
/// `powf(x, y)` gives `x` then `y` whichever nvcc loads first). `first`
/// is the first load's register; a one-load kernel gives it alone.
pub(crate) fn arguments(k: &KernelIr, first: RegId) -> Result<(RegId, Vec<RegId>), String> {
    let mut loads: Vec<(usize, RegId)> = Vec::new();
    for (i, d) in k.instrs.iter().enumerate() {
        if let Instr::Ld(m) = &d.instr
            && m.space == StateSpace::Global
        {
            // A read of a module table (f64 sin's coefficients) is a
            // step, not an argument.
            if crate::calls::reads_module_table(k, i) {
                continue;
            }
            let Some(Operand::Reg(r)) = d.operands.first() else {
                return Err("a load without a register".into());
            };
            loads.push((i, *r));
        }
    }
    if loads.len() <= 1 {
        return Ok((first, Vec::new()));
    }
    let mut by_param = Vec::new();
    for (i, r) in loads {
        let p = param_of(k, i).ok_or("a load whose pointer parameter is not clear")?;
        by_param.push((p, r));
    }
    by_param.sort_unstable();
    let regs: Vec<RegId> = by_param.into_iter().map(|(_, r)| r).collect();
    Ok((regs[0], regs[1..].to_vec()))
}

/// What the branches of a template go to.
pub(crate) struct Branches {
    /// Each branch step's target step (`steps.len()` after the last).
    pub target: FxHashMap<usize, usize>,
    /// The index of the tail's first step, when there is a tail.
    pub join: Option<usize>,
    /// The branch steps that go to the join.
    pub to_join: FxHashSet<usize>,
    /// The main-part step the join lands on, when it is not right after
    /// the main part (see [`crate::template::Template::rejoin`]).
    pub rejoin: Option<usize>,
}

/// The branch targets of a template's `steps` (at kernel positions
/// `order`), with the store at `st` and the kernel's `tail`.
pub(crate) fn branches(
    k: &KernelIr,
    steps: &[InstrData],
    order: &[usize],
    st: usize,
    tail: &Range<usize>,
    out: RegId,
) -> Result<Branches, String> {
    let label_at = |d: &InstrData| match d.operands.first() {
        Some(Operand::Label(l)) => Ok(k.labels[l.index()].target as usize),
        _ => Err("branch without a label".to_string()),
    };
    let join = order.iter().position(|i| tail.contains(i));
    // The join: where the tail's last step (an unconditional branch)
    // returns to — right after the main part (powf), or onto one of its
    // steps (f64 pow: the final select of 1 for `x == 1 || y == 0`
    // follows the join; `rejoin`).
    let mut rejoin = None;
    let join_pos = match join {
        None => None,
        Some(j) => {
            let last = steps.last().ok_or("no steps")?;
            if j == 0 || last.guard.is_some() || !matches!(last.instr, Instr::Bra { .. }) {
                return Err("the tail does not end with a branch back".into());
            }
            let p = label_at(last)?;
            rejoin = order[..j].iter().position(|&i| i == p);
            if p > st
                || order[j - 1] + 1 != p && rejoin.is_none()
                || !steps[j - 1].writes().contains(&out)
            {
                return Err(
                    "the main part does not end with the result, right before the join".into(),
                );
            }
            Some(p)
        }
    };
    let mut target = FxHashMap::default();
    let mut to_join = FxHashSet::default();
    for (j, d) in steps.iter().enumerate() {
        if !matches!(d.instr, Instr::Bra { .. }) {
            continue;
        }
        let t = label_at(d)?;
        let at = order.iter().position(|&i| i >= t).unwrap_or(order.len());
        if Some(t) == join_pos {
            to_join.insert(j);
            target.insert(j, rejoin.or(join).unwrap_or(order.len()));
        } else if t > order[j] && (t <= st || tail.contains(&t) && lands_on_step(k, order, at, t)) {
            // Forward inside the main part or inside the tail, or into the
            // tail onto a step (past constant `mov`s only).
            target.insert(j, at);
        } else if t <= order[j] && order.get(at) == Some(&t) && join.is_none() {
            // Backward onto a step: a loop (Triton's Payne–Hanek
            // reduction), matched whole (`matcher::accept`).
            target.insert(j, at);
        } else {
            return Err("a branch that does not jump forward inside the expansion".into());
        }
    }
    Ok(Branches {
        target,
        join,
        to_join,
        rejoin,
    })
}

/// Removes the step `mov out, c` of a template with a tail and returns
/// `c`: nvcc sets the result's value for the cases that branch straight
/// to the join (powf: `x = 1` or `y = 0` give 1) wherever it likes —
/// in a kernel, above its bounds check — so the matcher looks for it on
/// its own ([`accept`]).
///
/// `hoistable`: also without a tail (powf with a constant exponent: in
/// `powf(a, c) + powf(b, d)` nvcc sets both results' 1.0 before the first
/// expansion, the first's as a copy of the second's).
pub(crate) fn split_out_init(
    order: &mut Vec<usize>,
    steps: &mut Vec<InstrData>,
    out: RegId,
    tail: &Range<usize>,
    hoistable: bool,
) -> Option<Imm> {
    if !hoistable && !order.iter().any(|i| tail.contains(i)) {
        return None;
    }
    let is_init = |d: &InstrData| {
        d.guard.is_none()
            && matches!(d.instr, Instr::Mov { .. })
            && matches!(d.operands.as_slice(), [Operand::Reg(r), Operand::Imm(_)] if *r == out)
    };
    let inits: Vec<usize> = (0..steps.len())
        .filter(|&j| !tail.contains(&order[j]) && is_init(&steps[j]))
        .collect();
    // Several (powf(x, c) also sets the NaN result by a `mov`): the
    // initial one is the first write of the result, before any branch.
    let first_write = steps.iter().position(|s| s.writes().contains(&out));
    let first_branch = steps
        .iter()
        .position(|s| matches!(s.instr, Instr::Bra { .. }));
    let initial = match inits.as_slice() {
        [j] => Some(*j),
        _ if hoistable => {
            first_write.filter(|j| inits.contains(j) && first_branch.is_none_or(|b| *j < b))
        }
        _ => None,
    };
    let Some(j) = &initial else {
        return None;
    };
    let Operand::Imm(c) = steps[*j].operands[1] else {
        return None;
    };
    steps.remove(*j);
    order.remove(*j);
    // Reads of the result before its first write see `c` (powf's
    // polynomial ends `fma d, p, t, out` — the 1.0 it shares with the
    // result): [`OUT_INIT`], which matches `c` inline, in a constant
    // register, or in the kernel's result register.
    for s in steps.iter_mut() {
        if s.writes().contains(&out) {
            break;
        }
        for o in s.operands.iter_mut().skip(1) {
            if *o == Operand::Reg(out) {
                *o = Operand::Reg(OUT_INIT);
            }
        }
    }
    Some(c)
}

/// The placeholder for a read of the result's initial constant.
pub(crate) const OUT_INIT: RegId = RegId(u32::MAX - 2);

/// Whether what the [`OUT_INIT`] placeholders matched holds the initial
/// constant: the constant itself, or the kernel's result register (which
/// [`accept`] checks is set to it before the expansion).
pub(super) fn out_init_uses_ok(
    t: &crate::template::Template,
    f: &super::Facts,
    uses: &[Operand],
    out: RegId,
) -> bool {
    let Some(c) = t.out_init else {
        return uses.is_empty();
    };
    uses.iter().all(|u| match u {
        Operand::Imm(v) => *v == c,
        Operand::Reg(r) => f.consts.get(r).map_or(*r == out, |v| *v == c),
        _ => false,
    })
}

/// Where the result's initial constant is set for a match: the last
/// write of the result before the main part's last step that is not the
/// expansion's; it must be `mov out, c`, before every branch of the
/// expansion and every step that reads it, and reach the expansion on
/// every path (no label between it and the first step, no other write of
/// the result in between).
///
/// `mov out, r` counts when `r` holds `c` there ([`copied_const`]); a
/// label nothing jumps to any more (an earlier expansion's, absorbed
/// with its branches) is passed only by falling through, so it does not
/// break the path ([`jumped_to`]).
pub(super) fn out_init_at(
    t: &crate::template::Template,
    k: &KernelIr,
    m: &super::Found,
    set: &FxHashSet<usize>,
    idiom: usize,
) -> Option<Option<usize>> {
    let Some(c) = t.out_init else {
        return Some(None);
    };
    let main = t.join.unwrap_or(t.steps.len());
    let first = m.at[..main.min(m.at.len())]
        .iter()
        .copied()
        .min()
        .unwrap_or(0);
    let p = (0..idiom)
        .rev()
        .find(|&i| !set.contains(&i) && k.instrs[i].writes().contains(&m.out))?;
    let d = &k.instrs[p];
    let is_mov = d.guard.is_none()
        && matches!(d.instr, Instr::Mov { .. })
        && (d.operands.get(1) == Some(&Operand::Imm(c)) || copied_const(k, p) == Some(c));
    let first_branch = t.steps[..main]
        .iter()
        .zip(&m.at)
        .filter(|(s, _)| matches!(s.instr, Instr::Bra { .. }))
        .map(|(_, &i)| i)
        .min()
        .unwrap_or(idiom);
    let no_label = k.labels.iter().enumerate().all(|(li, l)| {
        l.prototype
            || !(p + 1..=first).contains(&(l.target as usize))
            || !jumped_to(k, LabelId(li as u32))
    });
    // Inside the expansion, it must also come before every step that may
    // read it.
    let reads_init_before = t
        .steps
        .iter()
        .zip(&m.at)
        .any(|(s, &i)| i < p && s.operands.contains(&Operand::Reg(OUT_INIT)));
    (is_mov && p < first_branch && (p < first && no_label || p > first && !reads_init_before))
        .then_some(Some(p))
}

/// The constant an unguarded `mov d, r` at `i` copies: `r`'s nearest
/// write before `i` is an unguarded `mov r, c` of the same type, and no
/// label lands in between (so every path reaches `i` from it). nvcc sets
/// one powf's initial 1.0 as a copy of another's.
pub(crate) fn copied_const(k: &KernelIr, i: usize) -> Option<Imm> {
    let d = &k.instrs[i];
    let (Instr::Mov { .. }, None, [Operand::Reg(_), Operand::Reg(r)]) =
        (&d.instr, d.guard, d.operands.as_slice())
    else {
        return None;
    };
    let p = (0..i).rev().find(|&j| k.instrs[j].writes().contains(r))?;
    let w = &k.instrs[p];
    let landed = k
        .labels
        .iter()
        .any(|l| !l.prototype && (p + 1..=i).contains(&(l.target as usize)));
    match (&w.instr, w.guard, w.operands.as_slice()) {
        (Instr::Mov { .. }, None, [Operand::Reg(_), Operand::Imm(c)])
            if w.instr == d.instr && !landed =>
        {
            Some(*c)
        }
        _ => None,
    }
}

/// Can control jump to label `l` (an instruction names it; with a
/// `brx.idx`, whose target lists are declarations, every label can)?
pub(crate) fn jumped_to(k: &KernelIr, l: LabelId) -> bool {
    fn names(o: &Operand, l: LabelId) -> bool {
        match o {
            Operand::Label(x) => *x == l,
            Operand::Vector(v) | Operand::List(v) => v.iter().any(|o| names(o, l)),
            Operand::Not(o) => names(o, l),
            Operand::Pair(a, b) => names(a, l) || names(b, l),
            _ => false,
        }
    }
    k.instrs
        .iter()
        .any(|d| matches!(d.instr, Instr::Brx { .. }) || d.operands.iter().any(|o| names(o, l)))
}

/// Whether a branch to kernel position `t` in the tail reaches step `at`
/// (at `order[at]`) through nothing but `mov`s of immediates.
fn lands_on_step(k: &KernelIr, order: &[usize], at: usize, t: usize) -> bool {
    order.get(at).is_some_and(|&s| {
        (t..s).all(|i| {
            let d = &k.instrs[i];
            d.guard.is_none()
                && matches!(d.instr, Instr::Mov { .. })
                && matches!(d.operands.get(1), Some(Operand::Imm(_)))
        })
    })
}

/// Is the kernel instruction at `i` (not the expansion's) a constant
/// `mov` whose register only the expansion reads?
fn harmless(k: &KernelIr, f: &super::Facts, set: &FxHashSet<usize>, i: usize) -> bool {
    let d = &k.instrs[i];
    let w = d.writes();
    matches!(d.instr, Instr::Mov { .. })
        && !w.is_empty()
        && w.iter().all(|r| f.consts.contains_key(r))
        && !w.iter().any(|r| super::read_outside(k, set, *r, i))
}

/// [`super::accept`] for a template with a tail (see the module docs).
pub(super) fn accept(
    t: &crate::template::Template,
    k: &KernelIr,
    f: &super::Facts,
    m: &super::Found,
) -> bool {
    let Some(join) = t.join else {
        return false;
    };
    let set: FxHashSet<usize> = m.at.iter().copied().collect();
    // The main part and the tail each keep the order of their basic
    // blocks (steps within a block in any order their dataflow allows:
    // `match_at`), and the result is written last in the main part.
    let blocks = t.blocks();
    let block_min = |tj: usize| {
        blocks
            .iter()
            .find(|b| b.contains(&tj))
            .and_then(|b| b.clone().map(|s| m.at[s]).min())
            .unwrap_or(usize::MAX)
    };
    let max_of = |r: Range<usize>| r.map(|s| m.at[s]).max().unwrap_or(0);
    let min_of = |r: Range<usize>| r.map(|s| m.at[s]).min().unwrap_or(usize::MAX);
    let ordered = |lo: usize, hi: usize| {
        blocks
            .iter()
            .filter(|b| b.start >= lo && b.end <= hi)
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| max_of(w[0].clone()) < min_of(w[1].clone()))
    };
    if join == 0
        || join >= m.at.len()
        || !ordered(0, join)
        || !ordered(join, m.at.len())
        || m.at[join - 1] != max_of(0..join)
    {
        return false;
    }
    let first = min_of(0..join);
    let last = max_of(join..m.at.len());
    let idiom = m.at[join - 1];
    let j_pos = idiom + 1;
    // Where the branches to the join land: after the main part, or on
    // its rejoin step (then a label inside the main part, the
    // expansion's own like any other).
    let rejoin_pos = t.rejoin.map(block_min);
    let join_target = rejoin_pos.unwrap_or(j_pos);
    // The tail starts at its first step or at the first place a branch
    // into it lands, if earlier (constant `mov`s may precede the step).
    let mut tail0 = block_min(join);
    for (&j, &tj) in &t.branch_target {
        if tj >= join
            && !t.to_join.contains(&j)
            && let Some(Operand::Label(tl)) = t.steps[j].operands.first()
            && let Some(kl) = m.labels.get(tl)
        {
            tail0 = tail0.min(k.labels[kl.index()].target as usize);
        }
    }
    let main = first..=idiom;
    let tail = tail0..=last;
    // The tail lies after the main part and the join, or before the main
    // part; nothing falls into it.
    if !(tail0 > j_pos || last < first) || tail0 == 0 {
        return false;
    }
    let pre = &k.instrs[tail0 - 1];
    if set.contains(&(tail0 - 1))
        || pre.guard.is_some()
        || !matches!(
            pre.instr,
            Instr::Ret { .. } | Instr::Exit | Instr::Bra { .. }
        )
    {
        return false;
    }
    if m.consts_used
        .iter()
        .any(|(r, use_at)| f.const_at.get(r).is_none_or(|&at| at >= *use_at))
    {
        return false;
    }
    // The arguments: the first step reading each.
    let mut args: Vec<(RegId, usize)> = Vec::new();
    let mut arg_regs: Vec<(RegId, RegId)> = vec![(t.leaf, m.x)];
    for (a, o) in t.args.iter().zip(m.more.iter()) {
        if let Operand::Reg(r) = o {
            arg_regs.push((*a, *r));
        }
    }
    for (tr, kr) in &arg_regs {
        // In the main part (the tail runs after it, wherever it lies).
        let first_read = t.steps[..join]
            .iter()
            .zip(&m.at)
            .filter(|(s, _)| s.reads().contains(tr))
            .map(|(_, &i)| i)
            .min()
            .unwrap_or(first);
        args.push((*kr, first_read));
    }
    let Some(init) = out_init_at(t, k, m, &set, idiom) else {
        return false;
    };
    let internal: FxHashSet<RegId> = m.internal.iter().copied().collect();
    for (i, d) in k.instrs.iter().enumerate() {
        if set.contains(&i) || Some(i) == init {
            continue;
        }
        let ms = d.mentions();
        if ms.iter().any(|r| internal.contains(r)) {
            return false;
        }
        if main.contains(&i) {
            let w = d.writes();
            if is_control(&d.instr)
                || ms.contains(&m.out)
                || args.iter().any(|(r, fr)| i > *fr && w.contains(r))
            {
                return false;
            }
        }
        if tail.contains(&i) && !harmless(k, f, &set, i) {
            return false;
        }
    }
    // Branches land as in the template, skipping only the expansion.
    let skips_ok = |from: usize, to: usize| {
        (from + 1..to).all(|i| set.contains(&i) || harmless(k, f, &set, i))
    };
    let mut own: FxHashSet<LabelId> = FxHashSet::default();
    for (&j, &tj) in &t.branch_target {
        let Some(Operand::Label(tl)) = t.steps[j].operands.first() else {
            return false;
        };
        let Some(kl) = m.labels.get(tl) else {
            return false;
        };
        let target = k.labels[kl.index()].target as usize;
        let from = m.at[j];
        let from_main = main.contains(&from);
        let ok = if t.to_join.contains(&j) {
            // Out of the tail (the rest of the tail is harmless), or
            // forward from the main part over its own instructions.
            if rejoin_pos.is_some() {
                own.insert(*kl);
            }
            target == join_target
                && (tail.contains(&from) || from_main && from < target && skips_ok(from, target))
        } else {
            own.insert(*kl);
            if tj >= join && tj < m.at.len() && from_main {
                // From the main part into the tail (its start, or the
                // middle: Triton's NaN case): the rest of the main part is
                // skipped, and the branch lands on the tail's step (through
                // the tail's harmless `mov`s).
                (tj == join || max_of(join..tj) < target)
                    && target <= block_min(tj)
                    && tail.contains(&target)
                    && skips_ok(from, j_pos)
            } else if tj > 0 && tj < m.at.len() {
                let part = if tj > join { join } else { 0 };
                from < target
                    && max_of(part..tj) < target
                    && target <= block_min(tj)
                    && skips_ok(from, target)
            } else {
                false
            }
        };
        if !ok {
            return false;
        }
    }
    // Labels inside the main part or the tail are the expansion's own
    // (the join excepted: code after the expansion may be reached from
    // anywhere) and reached only from its branches.
    for (li, l) in k.labels.iter().enumerate() {
        let id = LabelId(li as u32);
        let p = l.target as usize;
        let inside = (first + 1..=idiom).contains(&p) || tail.contains(&p);
        if l.prototype || p == j_pos || !(inside || own.contains(&id)) {
            continue;
        }
        if !own.contains(&id) {
            return false;
        }
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
    true
}
