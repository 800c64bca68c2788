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

use ptxeq_ir::{
    AddrBase, Imm, Instr, InstrData, KernelIr, LabelId, Operand, RegId, StateSpace, Symbol, VarId,
};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::operands::is_control;
use crate::template::Template;

#[path = "joined.rs"]
pub(crate) mod joined;

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
    /// The scratch array's offset from the kernel's local base register.
    scratch_off: Option<i64>,
    /// The template's scratch base register (plain form): `[base+o]`
    /// matches `[kbase+o+scratch_off]`.
    scratch_base: Option<RegId>,
    /// What each marked immediate of a constant-argument template read
    /// ([`crate::constarg`]).
    marks: Vec<Option<ptxeq_ir::Imm>>,
    /// What each read of the result's initial constant matched
    /// ([`joined::OUT_INIT`]).
    out_init_uses: Vec<Operand>,
    /// Variable bijection (template ↔ kernel), declarations compared
    /// after matching ([`crate::calls`]).
    vars: FxHashMap<VarId, VarId>,
    vars_back: FxHashMap<VarId, VarId>,
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

    fn var(&mut self, t: VarId, k: VarId) -> bool {
        match (self.vars.get(&t), self.vars_back.get(&k)) {
            (Some(x), Some(y)) => *x == k && *y == t,
            (None, None) => {
                self.vars.insert(t, k);
                self.vars_back.insert(k, t);
                true
            }
            _ => false,
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
    /// Instructions of accepted scratch-array expansions (see
    /// [`scratch_regions`]): they may use a local base register and read
    /// local memory without observing another expansion's scratch.
    pub scratch_ok: FxHashSet<usize>,
    /// The kernel's variable declarations (module variables first).
    pub vars: Vec<ptxeq_ir::VarDecl>,
    /// The module's function bodies, by name ([`crate::calls::bodies`]).
    pub callees: FxHashMap<String, String>,
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
        (Operand::Reg(r), _) if *r == crate::template::SCRATCH_OFF => {
            let Operand::Imm(ptxeq_ir::Imm::Int(off)) = k else {
                return false;
            };
            let Ok(off) = i64::try_from(*off) else {
                return false;
            };
            *b.scratch_off.get_or_insert(off) == off
        }
        (Operand::Reg(r), _) if *r == joined::OUT_INIT => {
            if let Operand::Reg(kr) = k
                && f.consts.contains_key(kr)
            {
                b.consts_used.push((*kr, usize::MAX));
            }
            b.out_init_uses.push(k.clone());
            matches!(k, Operand::Reg(_) | Operand::Imm(_))
        }
        // A marked immediate: any constant, inline or in a constant
        // register, the same at every use; `match_at` checks the values
        // against the exponent afterwards.
        (Operand::Reg(r), _) if crate::constarg::mark_of(*r).is_some() => {
            let mk = crate::constarg::mark_of(*r).unwrap_or(0);
            let c = match k {
                Operand::Imm(c) => *c,
                Operand::Reg(kr) => match f.consts.get(kr) {
                    Some(c) => {
                        b.consts_used.push((*kr, usize::MAX));
                        *c
                    }
                    None => return false,
                },
                _ => return false,
            };
            if b.marks.len() <= mk {
                b.marks.resize(mk + 1, None);
            }
            *b.marks[mk].get_or_insert(c) == c
        }
        (Operand::Imm(a), Operand::Imm(c)) => a == c,
        // `[r+off]`: the base register under the bijection, the offset
        // equal; `[var+off]`: the variable under its bijection.
        (Operand::Addr(a), Operand::Addr(c)) => match (&a.base, &c.base) {
            (ptxeq_ir::AddrBase::Reg(tr), ptxeq_ir::AddrBase::Reg(kr))
                if b.scratch_base == Some(*tr) =>
            {
                let Some(d) = c.offset.checked_sub(a.offset) else {
                    return false;
                };
                *b.scratch_off.get_or_insert(d) == d && b.reg(*tr, *kr)
            }
            (ptxeq_ir::AddrBase::Reg(tr), ptxeq_ir::AddrBase::Reg(kr)) => {
                a.offset == c.offset && !f.consts.contains_key(kr) && b.reg(*tr, *kr)
            }
            (
                ptxeq_ir::AddrBase::Symbol(Symbol::Var(tv)),
                ptxeq_ir::AddrBase::Symbol(Symbol::Var(kv)),
            ) => a.offset == c.offset && b.var(*tv, *kv),
            _ => false,
        },
        (
            Operand::Symbol {
                sym: Symbol::Var(tv),
                offset: to,
            },
            Operand::Symbol {
                sym: Symbol::Var(kv),
                offset: ko,
            },
        ) => to == ko && b.var(*tv, *kv),
        (Operand::List(a), Operand::List(c)) => {
            a.len() == c.len() && a.iter().zip(c).all(|(x, y)| op_match(x, y, b, f))
        }
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

/// Does kernel instruction `k` match template step `t` under `b` (which
/// it extends)? The two sources of a commutative operation match in
/// either order (`mul r, x, c` is `mul r, c, x`): compilers and rewrites
/// do not keep the template's order. On failure `b` is left unchanged.
fn instr_match(t: &InstrData, k: &InstrData, b: &mut Binding, f: &Facts) -> bool {
    if t.instr != k.instr || t.operands.len() != k.operands.len() {
        return false;
    }
    let mut trial = b.clone();
    match (t.guard, k.guard) {
        (None, None) => {}
        (Some(x), Some(y)) => {
            if x.negated != y.negated || !trial.reg(x.reg, y.reg) {
                return false;
            }
        }
        _ => return false,
    }
    let guarded = trial.clone();
    if operands_match(t, k, None, &mut trial, f) {
        *b = trial;
        return true;
    }
    let Some(swap) = t.instr.commutative_sources() else {
        return false;
    };
    let mut trial = guarded;
    if operands_match(t, k, Some(swap), &mut trial, f) {
        *b = trial;
        return true;
    }
    false
}

/// The operands of `t` against those of `k`, with `k`'s operands at the
/// positions `swap` exchanged.
fn operands_match(
    t: &InstrData,
    k: &InstrData,
    swap: Option<(usize, usize)>,
    b: &mut Binding,
    f: &Facts,
) -> bool {
    t.operands.iter().enumerate().all(|(i, x)| {
        let j = match swap {
            Some((p, q)) if i == p => q,
            Some((p, q)) if i == q => p,
            _ => i,
        };
        k.operands.get(j).is_some_and(|y| op_match(x, y, b, f))
    })
}

/// A match: the kernel instruction of each step, and the bindings.
pub(crate) struct Found {
    pub at: Vec<usize>,
    pub x: RegId,
    pub out: RegId,
    /// A two-result template's second result: its register and the
    /// kernel instruction of the step that writes it last.
    pub second: Option<(RegId, usize)>,
    /// Fused form: the addend, and the register (internal, else unused)
    /// that receives `f(x)` and the step that wrote it.
    pub acc: Option<(Operand, RegId, usize)>,
    internal: Vec<RegId>,
    labels: FxHashMap<LabelId, LabelId>,
    consts_used: Vec<(RegId, usize)>,
    /// Kernel registers holding addresses related to the scratch array,
    /// each with its byte offset from the array's start: the local base
    /// register (offset minus the matched `add`'s immediate) in the plain
    /// form, the hoisted address registers in the hoisted form.
    scratch: Option<Vec<(RegId, i64)>>,
    /// The idiom's arguments after `x` (`powf`'s exponent: a register, or
    /// a constant read from the marked immediates).
    pub more: Vec<Operand>,
    /// Where the idiom goes when the template has a tail (the main
    /// part's last step; see [`joined`]).
    pub join_at: Option<usize>,
    /// The call-site `.param` variables of the expansion's calls: named
    /// by nothing else.
    pub call_vars: Vec<VarId>,
}

/// Tries to match `t` with its first step at kernel instruction `start`.
pub(crate) fn match_at(t: &Template, k: &KernelIr, f: &Facts, start: usize) -> Option<Found> {
    let mut b = Binding {
        scratch_base: t
            .scratch
            .as_ref()
            .filter(|s| s.ptrs.is_empty())
            .map(|s| s.base),
        ..Binding::default()
    };
    if !instr_match(&t.steps[0], &k.instrs[start], &mut b, f) {
        return None;
    }
    b.pin_consts(start);
    let window = 4 * t.len() + 64;
    let end = (start + window).min(k.instrs.len());
    let mut at = vec![start];
    let mut taken: FxHashSet<usize> = [start].into_iter().collect();
    let blocks = t.blocks();
    let block_of = |j: usize| blocks.iter().position(|b| b.contains(&j)).unwrap_or(0);
    // Where the current block's steps may start (after every step of the
    // blocks before it in the same part: main part or tail).
    let mut block_lo = start + 1;
    for (j, step) in t.steps.iter().enumerate().skip(1) {
        // Expansions with branches keep the order of their basic blocks;
        // within a block, and in a straight-line expansion, steps may be
        // scheduled in any order their dataflow allows (checked below).
        let from = if t.has_branch() {
            if blocks[block_of(j)].start == j {
                let part = match t.join {
                    Some(jn) if j > jn => jn,
                    _ => 0,
                };
                block_lo = at[part..j].iter().copied().max().unwrap_or(start) + 1;
            }
            block_lo
        } else {
            start + 1
        };
        // A tail (see [`joined`]) follows the main part, or precedes it
        // (nvcc puts it before a loop's head).
        let before = if t.join == Some(j) {
            start.saturating_sub(window)..start
        } else {
            0..0
        };
        // A straight-line step independent of the first one may also be
        // scheduled before it (the program-order check below keeps every
        // dependent pair in order).
        let earlier = if t.join.is_none() && block_of(j) == 0 {
            start.saturating_sub(window)..start
        } else {
            0..0
        };
        let mut hit = None;
        for i in (from..end).chain(before).chain(earlier) {
            let d = &k.instrs[i];
            if taken.contains(&i) {
                continue;
            }
            // `instr_match` extends `b` only on success.
            if instr_match(step, d, &mut b, f) {
                b.pin_consts(i);
                hit = Some(i);
                break;
            }
        }
        let i = hit?;
        taken.insert(i);
        at.push(i);
        // The tail may lie before the main part: its first block's other
        // steps follow its first step, wherever that landed.
        if t.join == Some(j) {
            block_lo = i + 1;
        }
    }
    // A block's branch (or other terminator) is its last instruction in
    // the kernel too.
    for bl in &blocks {
        let last = bl.end - 1;
        if t.steps[last].instr.is_terminator() && bl.clone().any(|s| at[s] > at[last]) {
            return None;
        }
    }
    // Program order of every pair of steps sharing a register one of them
    // writes must be kept (between a main part and its tail, control flow
    // orders them: `joined::accept` checks it).
    for j2 in 0..t.len() {
        let w2 = t.steps[j2].writes();
        let m2 = t.steps[j2].mentions();
        for j1 in 0..j2 {
            if t.join.is_some_and(|jn| j1 < jn && j2 >= jn) {
                continue;
            }
            let w1 = t.steps[j1].writes();
            let m1 = t.steps[j1].mentions();
            let dep = w1.iter().any(|r| m2.contains(r)) || w2.iter().any(|r| m1.contains(r));
            if dep && at[j1] >= at[j2] {
                return None;
            }
        }
    }
    // A call calls a function whose body equals the template's callee.
    for n in t.steps.iter().flat_map(crate::calls::callees) {
        if !t.callees.contains_key(&n) || t.callees.get(&n) != f.callees.get(&n) {
            return None;
        }
    }
    // Variables: a call-site `.param` for a call-site `.param` of the
    // same shape, a module table for the same declaration (name and
    // initialiser bytes included).
    let mut call_vars = Vec::new();
    for (tv, kv) in &b.vars {
        let td = t.vars.get(tv)?;
        let kd = f.vars.get(kv.index())?;
        if crate::calls::decl_key(td) != crate::calls::decl_key(kd) {
            return None;
        }
        if crate::calls::is_call_param(kd) {
            call_vars.push(*kv);
        } else if kd.scope != ptxeq_ir::VarScope::Module || kd.init.is_none() {
            return None;
        }
    }
    let x = *b.t2k.get(&t.leaf)?;
    let out = *b.t2k.get(&t.out)?;
    let second = match &t.second {
        None => None,
        Some((r, _)) => {
            let j = t.steps.iter().rposition(|d| d.writes().contains(r))?;
            Some((*b.t2k.get(r)?, at[j]))
        }
    };
    let acc = match (&t.acc, &b.acc) {
        (None, _) => None,
        (Some(_), None) => return None,
        (Some(_), Some(op)) => {
            // f(x) goes to the register of the product's first factor.
            let last = t.steps.last()?;
            let Some(Operand::Reg(te)) = last.operands.get(1) else {
                return None;
            };
            let j = t.steps.iter().position(|d| d.writes().contains(te))?;
            Some((op.clone(), *b.t2k.get(te)?, at[j]))
        }
    };
    let scratch = match &t.scratch {
        None => None,
        Some(s) if s.ptrs.is_empty() => Some(vec![(*b.t2k.get(&s.base)?, -b.scratch_off?)]),
        Some(s) => Some(
            s.ptrs
                .iter()
                .map(|(r, rel)| Some((*b.t2k.get(r)?, *rel)))
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    let internal = b
        .t2k
        .iter()
        .filter(|(tr, _)| {
            **tr != t.leaf
                && **tr != t.out
                && t.second.is_none_or(|(r, _)| r != **tr)
                && t.scratch
                    .as_ref()
                    .is_none_or(|s| s.base != **tr && !s.ptrs.iter().any(|(r, _)| r == *tr))
                && !t.args.contains(tr)
        })
        .map(|(_, kr)| *kr)
        .collect();
    let mut more = Vec::new();
    for a in &t.args {
        more.push(Operand::Reg(*b.t2k.get(a)?));
    }
    if let Some(c) = &t.const_arg {
        more.push(Operand::Imm(crate::constarg::resolve(c, &b.marks)?));
    }
    // With a tail, the idiom goes at the main part's last step.
    let join_at = t.join.map(|j| at[j - 1]);
    if !joined::out_init_uses_ok(t, f, &b.out_init_uses, out) {
        return None;
    }
    Some(Found {
        at,
        x,
        out,
        acc,
        internal,
        labels: b.labels,
        consts_used: b.consts_used,
        scratch,
        more,
        second,
        join_at,
        call_vars,
    })
}

/// Is replacing the match by one instruction at its last position sound?
pub(crate) fn accept(t: &Template, k: &KernelIr, f: &Facts, m: &Found) -> bool {
    if t.join.is_some() {
        return joined::accept(t, k, f, m);
    }
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
    // The result's initial constant, when the template sets it apart
    // (powf): a `mov` reaching the expansion (`joined::out_init_at`).
    let Some(init) = joined::out_init_at(t, k, m, &set, last) else {
        return false;
    };
    // An argument the expansion overwrites is the expansion's alone:
    // another reader would see the rescaled value in the original code
    // and the argument in the rewritten one.
    if t.leaf_written
        && k.instrs
            .iter()
            .enumerate()
            .any(|(i, d)| !set.contains(&i) && d.reads().contains(&m.x))
    {
        return false;
    }
    if let Some(s) = &t.scratch {
        let Some(ptrs) = &m.scratch else {
            return false;
        };
        if !scratch_private(k, f, &set, first, s, ptrs) {
            return false;
        }
    }
    let internal: FxHashSet<RegId> = m.internal.iter().copied().collect();
    // The argument may be (re)written inside the span before the first
    // step that reads it (powf(x, c) tests c's parity before x is
    // loaded), never after: every step and the idiom see one value.
    let first_read = t
        .steps
        .iter()
        .zip(&m.at)
        .filter(|(s, _)| s.reads().contains(&t.leaf))
        .map(|(_, &i)| i)
        .min()
        .unwrap_or(first);
    for (i, d) in k.instrs.iter().enumerate() {
        if set.contains(&i) || Some(i) == init {
            continue;
        }
        let ms = d.mentions();
        // Internal registers belong to the expansion alone, and so do
        // its calls' `.param` variables.
        if ms.iter().any(|r| internal.contains(r))
            || crate::calls::vars_named(d)
                .iter()
                .any(|v| m.call_vars.contains(v))
        {
            return false;
        }
        if (first..=last).contains(&i)
            && (is_control(&d.instr)
                || ms.contains(&m.out)
                // The second result may be read once final: after the
                // step that writes it last (nvcc stores `sinf(v)` before
                // computing `cosf(v)`); forward branches only, so every
                // path has its final value there, as after the rewrite.
                || m.second.is_some_and(|(r, at2)| {
                    ms.contains(&r) && (i < at2 || d.writes().contains(&r))
                })
                || i > first_read && d.writes().contains(&m.x))
        {
            return false;
        }
    }
    // Labels inside the span are the expansion's own, reached only from
    // its own branches, and land where the template's do: at the first
    // instruction of the target block as the kernel orders it, after
    // every step of the blocks before it.
    let blocks = t.blocks();
    let block_min = |tj: usize| {
        blocks
            .iter()
            .find(|b| b.contains(&tj))
            .and_then(|b| b.clone().map(|s| m.at[s]).min())
            .unwrap_or(usize::MAX)
    };
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
        // A loop of the template's (Triton's Payne–Hanek reduction):
        // back onto the matched header step, with every instruction of
        // the loop the expansion's own, so the kernel's loop is the
        // template's instruction for instruction.
        if tj <= *j {
            if target != block_min(tj) || (target..=from).any(|i| !set.contains(&i)) {
                return false;
            }
            continue;
        }
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
            let w = d.writes();
            let is_const = matches!(d.instr, Instr::Mov { .. })
                && !w.is_empty()
                && w.iter().all(|r| f.consts.contains_key(r));
            if !is_const || w.iter().any(|r| read_outside(k, &set, *r, i)) {
                return false;
            }
        }
        let before = m.at[..tj].iter().copied().max().unwrap_or(0);
        let ok = if tj < m.at.len() {
            before < target && target <= block_min(tj)
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

/// Is the scratch array private to the expansion, so that absorbing its
/// local stores and loads changes nothing observable? `ptrs` are the
/// kernel registers that hold addresses related to it (see
/// [`Found::scratch`]).
///
/// The expansion's loads read only bytes its own stores wrote earlier on
/// the same path (a property of the template: sinf's Payne–Hanek path
/// stores words 0..6 unconditionally, then loads words `j+1..j+3` with
/// `j = 3 - ((e-128)>>5) ∈ 0..3` for the exponents `e ≥ 143` that reach
/// it; the agreement test exercises it, and the engine reports a read of a
/// never-written local cell). So the rewrite is sound when nothing else
/// can read the bytes afterwards:
/// - every register of `ptrs` is computed, before the expansion, by a
///   chain of single unguarded definitions — `add.{u,s}64 r, q, imm` down
///   to a `mov` of a `.local` variable's address — and all of them place
///   the array at one offset, inside the variable at the template's
///   alignment (so the original accesses are in bounds, as the
///   template's are);
/// - no other instruction mentions a register of those chains or the
///   variable, so no other pointer into the variable exists (other
///   accepted scratch expansions excepted: by the property above they
///   read only their own stores);
/// - conservatively, no other instruction reads local memory through a
///   register address or makes a generic pointer to local memory
///   (`cvta.local`).
fn scratch_private(
    k: &KernelIr,
    f: &Facts,
    set: &FxHashSet<usize>,
    first: usize,
    s: &crate::template::Scratch,
    ptrs: &[(RegId, i64)],
) -> bool {
    let mut chain_defs: FxHashSet<usize> = FxHashSet::default();
    let mut chain_regs: FxHashSet<RegId> = FxHashSet::default();
    let mut place: Option<(VarId, i64)> = None;
    for &(r, rel) in ptrs {
        let Some((v, addr)) = resolve_local(k, r, first, &mut chain_defs, &mut chain_regs) else {
            return false;
        };
        let Some(start) = addr.checked_sub(rel) else {
            return false;
        };
        if *place.get_or_insert((v, start)) != (v, start) {
            return false;
        }
    }
    let Some((v, start)) = place else {
        return false;
    };
    let var = &k.vars[v.index()];
    let Ok(at) = u64::try_from(start) else {
        return false;
    };
    let align = u64::from(var.align.unwrap_or(1));
    if var.space != StateSpace::Local
        || align < s.align
        || at % s.align != 0
        || var.size_bytes.is_none_or(|n| at.saturating_add(s.len) > n)
    {
        return false;
    }
    k.instrs.iter().enumerate().all(|(i, d)| {
        chain_defs.contains(&i)
            || set.contains(&i)
            || f.scratch_ok.contains(&i)
            || !(d.mentions().iter().any(|r| chain_regs.contains(r))
                || names_var(d, v)
                || reads_local(d, v))
    })
}

/// The local variable and byte offset register `r` holds at `first`:
/// its single definition, before `first` and unguarded, is a `mov` of the
/// variable's address or a 64-bit integer `add` of an immediate to such a
/// register (recursively, a few steps). Records the definitions and
/// registers of the chain.
fn resolve_local(
    k: &KernelIr,
    mut r: RegId,
    first: usize,
    defs: &mut FxHashSet<usize>,
    regs: &mut FxHashSet<RegId>,
) -> Option<(VarId, i64)> {
    let mut add = 0i64;
    for _ in 0..8 {
        regs.insert(r);
        let mut w = k
            .instrs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.writes().contains(&r));
        let (i, d) = w.next()?;
        if w.next().is_some() || i >= first || d.guard.is_some() {
            return None;
        }
        defs.insert(i);
        match (&d.instr, d.operands.as_slice()) {
            (
                Instr::Mov { .. },
                [
                    Operand::Reg(_),
                    Operand::Symbol {
                        sym: Symbol::Var(v),
                        offset,
                    },
                ],
            ) => return Some((*v, offset.checked_add(add)?)),
            (
                Instr::Add { ty, .. },
                [Operand::Reg(_), Operand::Reg(q), Operand::Imm(Imm::Int(c))]
                | [Operand::Reg(_), Operand::Imm(Imm::Int(c)), Operand::Reg(q)],
            ) if !ty.is_float() && ty.bit_width() == 64 => {
                add = add.checked_add(i64::try_from(*c).ok()?)?;
                r = *q;
            }
            _ => return None,
        }
    }
    None
}

/// Does `d` name variable `v` (its address as a value, or an address
/// based on it)?
fn names_var(d: &InstrData, v: VarId) -> bool {
    fn names(o: &Operand, v: VarId) -> bool {
        match o {
            Operand::Symbol {
                sym: Symbol::Var(w),
                ..
            } => *w == v,
            Operand::Addr(a) => matches!(a.base, AddrBase::Symbol(Symbol::Var(w)) if w == v),
            Operand::Vector(x) | Operand::List(x) => x.iter().any(|o| names(o, v)),
            Operand::Not(o) => names(o, v),
            Operand::Pair(a, b) => names(a, v) || names(b, v),
            _ => false,
        }
    }
    d.operands.iter().any(|o| names(o, v))
}

/// Could `d` read local memory other than a different named variable's?
fn reads_local(d: &InstrData, v: VarId) -> bool {
    match &d.instr {
        Instr::Ld(m) | Instr::Ldu(m) if m.space == StateSpace::Local => {
            !matches!(d.operands.get(1).and_then(Operand::as_addr), Some(a)
                if matches!(a.base, AddrBase::Symbol(Symbol::Var(w)) if w != v))
        }
        Instr::Cvta { space, .. } => *space == StateSpace::Local,
        _ => false,
    }
}

/// Every scratch-array expansion in `k` that is accepted when the others
/// are and overlaps no other match: the instructions of a fixpoint set of
/// matches of the templates with a scratch array (starting from all
/// matches, dropping rejected ones until none is). An expansion's own
/// check must not count a rejected neighbour's local loads as harmless.
pub(crate) fn scratch_regions(ts: &[Template], k: &KernelIr, f: &mut Facts) {
    let mut cands: Vec<(&Template, Found)> = Vec::new();
    for t in ts.iter().filter(|t| t.scratch.is_some()) {
        for s in 0..k.instrs.len() {
            if let Some(m) = match_at(t, k, f, s) {
                cands.push((t, m));
            }
        }
    }
    // Overlapping matches are dropped, both: an instruction is trusted as
    // part of one complete expansion, which a rewrite of another template
    // absorbing part of it would break.
    let mut uses: FxHashMap<usize, u32> = FxHashMap::default();
    for (_, m) in &cands {
        for &i in &m.at {
            *uses.entry(i).or_default() += 1;
        }
    }
    let mut live: Vec<bool> = cands
        .iter()
        .map(|(_, m)| m.at.iter().all(|i| uses[i] == 1))
        .collect();
    // With each match, the definitions of its scratch addresses: a live
    // match confines the pointers they make to itself (its own check), so
    // they may share a hoisted base with another match.
    let own: Vec<FxHashSet<usize>> = cands
        .iter()
        .map(|(_, m)| {
            let mut defs: FxHashSet<usize> = m.at.iter().copied().collect();
            let first = m.at.iter().min().copied().unwrap_or(0);
            let mut regs = FxHashSet::default();
            for &(r, _) in m.scratch.iter().flatten() {
                resolve_local(k, r, first, &mut defs, &mut regs);
            }
            defs
        })
        .collect();
    loop {
        f.scratch_ok = own
            .iter()
            .zip(&live)
            .filter(|(_, l)| **l)
            .flat_map(|(o, _)| o.iter().copied())
            .collect();
        let next: Vec<bool> = cands
            .iter()
            .zip(&live)
            .map(|((t, m), l)| *l && accept(t, k, f, m))
            .collect();
        if next == live {
            return;
        }
        live = next;
    }
}

/// Does an instruction other than the expansion's (and other than the
/// defining one at `def`) read `r`?
fn read_outside(k: &KernelIr, set: &FxHashSet<usize>, r: RegId, def: usize) -> bool {
    k.instrs
        .iter()
        .enumerate()
        .any(|(i, d)| i != def && !set.contains(&i) && d.mentions().contains(&r))
}
