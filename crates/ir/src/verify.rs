//! The IR verifier: checks the invariants every pass may rely on, run
//! after lowering and again after idiom recognition (as Cranelift runs its
//! verifier between passes). A failure is an internal error — a pass
//! produced IR that breaks the contract — and the pipeline reports it as
//! `unsupported` naming the instruction, never a verdict.
//!
//! What is checked:
//!
//! - **ids resolve**: every register, variable, param and label an operand
//!   or guard names exists; every label target lies in the body; a `bra`
//!   names a branch label (not a `.callprototype`);
//! - **types**: a guard is a `.pred` register; `setp` writes predicates;
//!   `selp` selects on a predicate; the register operands of the plain
//!   same-width instructions (`add sub min max and or xor not neg abs rem
//!   div selp`) have the width of the instruction's type (PTX allows a
//!   wider register only for `ld`, `st` and `cvt`);
//! - **recognised idioms** (what `passes/idioms` writes): an `idiom`
//!   writes and reads registers of its type, names a first instruction at
//!   or before itself, has no guard and two operands (three for `pow`);
//!   an `absorbed` instruction has no guard or operands and points at an
//!   `idiom` whose range contains it. (Branches into an idiom's index
//!   range are legal: compilers lay an expansion's blocks out of order
//!   and enter it in the middle; a path that skips the `idiom` and then
//!   reads its result is caught by the def-before-use comparison below.)
//! - **defined before use**, a forward must-analysis over the CFG
//!   (`.reg` params count as defined at entry; special registers are not
//!   registers). Predication is modelled as follows: a definition under
//!   guard `@p` (or `@!p`) defines the register for uses under the same
//!   guard until `p` is written again, and definitions under both `@p` and
//!   `@!p` define it outright.
//!
//! **The rule for undefined reads.** Real nvcc and Triton PTX reads
//! registers that are undefined on some path (a value only used when a
//! condition that the compiler proved holds, uninitialised locals in the
//! CUDA source). Such a read is a property of the input, not a broken
//! pass: the engine reports it as `uninitialised` with a witness when an
//! execution reaches it. So after lowering, a read of a maybe-undefined
//! register is only recorded ([`Report::undefined`], a warning class).
//! After a rewrite ([`verify_rewrite`]), a maybe-undefined read of a
//! register that was *always* defined where it was read before the
//! rewrite is an error: the pass broke the data flow.

use std::collections::BTreeSet;

use crate::instr::{IdiomFn, Instr};
use crate::kernel::{InstrData, KernelIr};
use crate::operand::{AddrBase, Operand, RegId, Symbol};
use crate::types::ScalarType;

/// One broken invariant.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Problem {
    /// The offending instruction, `None` for a problem of the function as
    /// a whole (a label target out of range).
    pub instr: Option<u32>,
    pub message: String,
}

/// A register read that is not defined on every path to the read.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct UndefinedRead {
    pub instr: u32,
    pub reg: RegId,
}

/// What the verifier found in one function.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Report {
    /// Broken invariants: internal errors.
    pub errors: Vec<Problem>,
    /// Reads of registers that may be undefined (see the module doc: a
    /// warning after lowering, an error only when a rewrite introduces it).
    pub undefined: Vec<UndefinedRead>,
}

impl Report {
    /// True when no invariant is broken.
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Verifies one lowered (or rewritten) function.
pub fn verify(f: &KernelIr) -> Report {
    let mut errors = Vec::new();
    check_ids(f, &mut errors);
    if !errors.is_empty() {
        // Later checks index by these ids.
        return Report {
            errors,
            undefined: Vec::new(),
        };
    }
    for (i, d) in f.instrs.iter().enumerate() {
        check_types(f, i, d, &mut errors);
    }
    check_idioms(f, &mut errors);
    let undefined = undefined_reads(f);
    Report { errors, undefined }
}

/// Verifies `after`, the result of a rewrite of `before` that keeps
/// instruction indices (idiom recognition): [`verify`] of `after`, plus
/// an error for every maybe-undefined read of a register whose every read
/// in `before` was defined.
pub fn verify_rewrite(before: &KernelIr, after: &KernelIr) -> Report {
    let mut r = verify(after);
    if before.instrs.len() != after.instrs.len() {
        r.errors.push(Problem {
            instr: None,
            message: format!(
                "the rewrite changed the number of instructions ({} → {})",
                before.instrs.len(),
                after.instrs.len()
            ),
        });
        return r;
    }
    let was_undefined: BTreeSet<RegId> = undefined_reads(before).iter().map(|u| u.reg).collect();
    for u in &r.undefined {
        if !was_undefined.contains(&u.reg) {
            r.errors.push(Problem {
                instr: Some(u.instr),
                message: format!(
                    "register {} is read here but not defined on every path to this \
                     instruction, although it was before the rewrite",
                    reg_name(after, u.reg)
                ),
            });
        }
    }
    r
}

fn reg_name(f: &KernelIr, r: RegId) -> String {
    f.regs
        .get(r.index())
        .map_or_else(|| format!("#{}", r.0), |i| i.name.clone())
}

fn check_ids(f: &KernelIr, errors: &mut Vec<Problem>) {
    let n = f.instrs.len();
    for l in &f.labels {
        if l.target as usize > n {
            errors.push(Problem {
                instr: None,
                message: format!(
                    "label {} targets instruction {} of a body of {n}",
                    l.name, l.target
                ),
            });
        }
    }
    for p in &f.params {
        if let Some(r) = p.reg
            && r.index() >= f.regs.len()
        {
            errors.push(Problem {
                instr: None,
                message: format!(
                    "param {} names register #{} that does not exist",
                    p.name, r.0
                ),
            });
        }
    }
    for (i, d) in f.instrs.iter().enumerate() {
        let mut bad = Vec::new();
        if let Some(g) = d.guard
            && g.reg.index() >= f.regs.len()
        {
            bad.push(format!("guard register #{}", g.reg.0));
        }
        for op in &d.operands {
            walk_ids(f, op, &mut bad);
        }
        if let Instr::Bra { .. } = d.instr {
            match d.operands.first() {
                Some(Operand::Label(l)) => {
                    if f.labels.get(l.index()).is_some_and(|l| l.prototype) {
                        bad.push(format!(
                            "branch target {} (a call prototype)",
                            f.labels[l.index()].name
                        ));
                    }
                }
                _ => bad.push("branch target (not a label)".into()),
            }
        }
        for b in bad {
            errors.push(Problem {
                instr: Some(i as u32),
                message: format!("unresolved {b}"),
            });
        }
    }
}

fn walk_ids(f: &KernelIr, op: &Operand, bad: &mut Vec<String>) {
    let reg = |r: RegId, bad: &mut Vec<String>| {
        if r.index() >= f.regs.len() {
            bad.push(format!("register #{}", r.0));
        }
    };
    let sym = |s: &Symbol, bad: &mut Vec<String>| match s {
        Symbol::Var(v) if v.index() >= f.vars.len() => bad.push(format!("variable #{}", v.0)),
        Symbol::Param(p) if p.index() >= f.params.len() => bad.push(format!("param #{}", p.0)),
        _ => {}
    };
    let addr = |b: &AddrBase, bad: &mut Vec<String>| match b {
        AddrBase::Reg(r) => reg(*r, bad),
        AddrBase::Symbol(s) => sym(s, bad),
        _ => {}
    };
    match op {
        Operand::Reg(r) | Operand::RegLane { reg: r, .. } => reg(*r, bad),
        Operand::Symbol { sym: s, .. } => sym(s, bad),
        Operand::Addr(a) => addr(&a.base, bad),
        Operand::TensorAddr { tmap, coords } => {
            addr(&tmap.base, bad);
            coords.iter().for_each(|c| walk_ids(f, c, bad));
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|c| walk_ids(f, c, bad)),
        Operand::Not(o) => walk_ids(f, o, bad),
        Operand::Pair(a, b) => {
            walk_ids(f, a, bad);
            walk_ids(f, b, bad);
        }
        Operand::Label(l) if l.index() >= f.labels.len() => bad.push(format!("label #{}", l.0)),
        _ => {}
    }
}

fn reg_ty(f: &KernelIr, op: &Operand) -> Option<(RegId, ScalarType)> {
    match op {
        Operand::Reg(r) | Operand::RegLane { reg: r, .. } => Some((*r, f.regs[r.index()].ty)),
        Operand::Not(o) => reg_ty(f, o),
        _ => None,
    }
}

fn check_types(f: &KernelIr, i: usize, d: &InstrData, errors: &mut Vec<Problem>) {
    let mut bad = |msg: String| {
        errors.push(Problem {
            instr: Some(i as u32),
            message: msg,
        })
    };
    if let Some(g) = d.guard {
        let ty = f.regs[g.reg.index()].ty;
        if ty != ScalarType::Pred {
            bad(format!(
                "the guard {} is a .{} register, not a .pred",
                reg_name(f, g.reg),
                ty.as_str()
            ));
        }
    }
    let pred_at = |k: usize| d.operands.get(k).and_then(|o| reg_ty(f, o));
    let mut want_pred = |k: usize, what: &str| {
        if let Some((r, ty)) = pred_at(k)
            && ty != ScalarType::Pred
        {
            bad(format!(
                "{what} {} is a .{} register, not a .pred",
                reg_name(f, r),
                ty.as_str()
            ));
        }
    };
    match &d.instr {
        Instr::Setp { .. } => {
            want_pred(0, "the setp destination");
            want_pred(1, "the setp destination");
        }
        Instr::Selp { .. } => want_pred(3, "the selp selector"),
        _ => {}
    }
    let same_width = match &d.instr {
        Instr::Add { ty, .. }
        | Instr::Sub { ty, .. }
        | Instr::Min { ty, .. }
        | Instr::Max { ty, .. }
        | Instr::And { ty }
        | Instr::Or { ty }
        | Instr::Xor { ty }
        | Instr::Not { ty }
        | Instr::Neg { ty, .. }
        | Instr::Abs { ty, .. }
        | Instr::Rem { ty }
        | Instr::Div { ty, .. } => Some((*ty, d.operands.len())),
        // The selector is checked above.
        Instr::Selp { ty } => Some((*ty, 3)),
        Instr::Idiom { ty, .. } => Some((*ty, d.operands.len())),
        _ => None,
    };
    if let Some((ty, n)) = same_width {
        for (k, op) in d.operands.iter().take(n).enumerate() {
            let Some((r, rty)) = reg_ty(f, op) else {
                continue;
            };
            if rty.bit_width() != ty.bit_width() {
                errors.push(Problem {
                    instr: Some(i as u32),
                    message: format!(
                        "operand {k} ({}) is a .{} register in a .{} instruction",
                        reg_name(f, r),
                        rty.as_str(),
                        ty.as_str()
                    ),
                });
            }
        }
    }
}

fn check_idioms(f: &KernelIr, errors: &mut Vec<Problem>) {
    for (i, d) in f.instrs.iter().enumerate() {
        let mut bad = |msg: String| {
            errors.push(Problem {
                instr: Some(i as u32),
                message: msg,
            })
        };
        match &d.instr {
            Instr::Idiom { func, first, .. } => {
                if *first as usize > i {
                    bad(format!("idiom's first instruction {first} comes after it"));
                }
                let want = if *func == IdiomFn::Pow { 3 } else { 2 };
                if d.operands.len() != want {
                    bad(format!(
                        "idiom {} has {} operands, not {want}",
                        func.as_str(),
                        d.operands.len()
                    ));
                }
                if !matches!(d.operands.first(), Some(Operand::Reg(_))) {
                    bad("idiom destination is not a register".into());
                }
                if d.guard.is_some() {
                    bad("idiom under a guard".into());
                }
            }
            Instr::Absorbed { at } => {
                if d.guard.is_some() || !d.operands.is_empty() {
                    bad("absorbed instruction with a guard or operands".into());
                }
                match f.instrs.get(*at as usize).map(|a| &a.instr) {
                    Some(Instr::Idiom { first, .. }) if *first as usize <= i => {}
                    _ => bad(format!(
                        "absorbed into instruction {at}, which is not an idiom whose range \
                         contains it"
                    )),
                }
            }
            _ => {}
        }
    }
}

/// The must-defined state before an instruction.
#[derive(Clone, PartialEq, Eq)]
struct State {
    /// Registers defined on every path.
    defined: Vec<u64>,
    /// `(register, predicate, negated)`: defined on every path under that
    /// guard (since the predicate was last written).
    guarded: BTreeSet<(u32, u32, bool)>,
}

impl State {
    fn has(&self, r: RegId) -> bool {
        self.defined
            .get(r.index() / 64)
            .is_some_and(|w| w >> (r.index() % 64) & 1 == 1)
    }

    fn set(&mut self, r: RegId) {
        if let Some(w) = self.defined.get_mut(r.index() / 64) {
            *w |= 1 << (r.index() % 64);
        }
    }

    fn meet(&mut self, other: &State) -> bool {
        let mut changed = false;
        for (a, b) in self.defined.iter_mut().zip(&other.defined) {
            let m = *a & *b;
            changed |= m != *a;
            *a = m;
        }
        let before = self.guarded.len();
        self.guarded.retain(|g| other.guarded.contains(g));
        changed || before != self.guarded.len()
    }

    /// Applies `d`'s definitions.
    fn step(&mut self, d: &InstrData) {
        let writes = d.writes();
        // A written predicate invalidates what was defined under it.
        for w in &writes {
            let p = w.0;
            self.guarded.retain(|&(_, q, _)| q != p);
        }
        match d.guard {
            None => writes.iter().for_each(|&r| self.set(r)),
            Some(g) => {
                for &r in &writes {
                    if writes.contains(&g.reg) {
                        // `@p setp p, ...`: the guard's meaning changes.
                        continue;
                    }
                    if self.guarded.contains(&(r.0, g.reg.0, !g.negated)) {
                        self.set(r);
                    } else {
                        self.guarded.insert((r.0, g.reg.0, g.negated));
                    }
                }
            }
        }
    }

    fn defines_for(&self, r: RegId, d: &InstrData) -> bool {
        self.has(r)
            || d.guard
                .is_some_and(|g| self.guarded.contains(&(r.0, g.reg.0, g.negated)))
    }
}

/// Successor instruction indices of `i` (`n` is leaving the function).
fn succs(f: &KernelIr, i: usize, out: &mut Vec<usize>) {
    out.clear();
    let d = &f.instrs[i];
    let label = |op: Option<&Operand>| match op {
        Some(Operand::Label(l)) => f.labels.get(l.index()).map(|l| l.target as usize),
        _ => None,
    };
    let falls = match &d.instr {
        Instr::Bra { .. } => {
            out.extend(label(d.operands.first()));
            d.guard.is_some()
        }
        Instr::Brx { .. } => {
            // The IR keeps no `.branchtargets` list: every branch label.
            out.extend(
                f.labels
                    .iter()
                    .filter(|l| !l.prototype)
                    .map(|l| l.target as usize),
            );
            d.guard.is_some()
        }
        Instr::Ret { .. } | Instr::Exit | Instr::Trap => d.guard.is_some(),
        _ => true,
    };
    if falls {
        out.push(i + 1);
    }
}

/// Every read of a register not defined on every path to it, in
/// instruction order.
fn undefined_reads(f: &KernelIr) -> Vec<UndefinedRead> {
    let n = f.instrs.len();
    if n == 0 {
        return Vec::new();
    }
    let words = f.regs.len().div_ceil(64);
    let mut entry = State {
        defined: vec![0; words],
        guarded: BTreeSet::new(),
    };
    for p in &f.params {
        if let Some(r) = p.reg {
            entry.set(r);
        }
    }
    // Per-instruction in-states (a body has at most a few thousand
    // instructions); `None` = not reached yet.
    let mut state: Vec<Option<State>> = vec![None; n];
    state[0] = Some(entry);
    let mut work: Vec<usize> = vec![0];
    let mut on_work = vec![false; n];
    on_work[0] = true;
    let mut next = Vec::new();
    while let Some(start) = work.pop() {
        on_work[start] = false;
        let mut i = start;
        let Some(mut s) = state[i].clone() else {
            continue;
        };
        // Run straight-line code in place; hand joins to the worklist.
        loop {
            s.step(&f.instrs[i]);
            succs(f, i, &mut next);
            let mut fall = None;
            for &t in &next {
                if t >= n {
                    continue;
                }
                let changed = match &mut state[t] {
                    Some(old) => old.meet(&s),
                    slot @ None => {
                        *slot = Some(s.clone());
                        true
                    }
                };
                if changed {
                    if t == i + 1 && next.len() == 1 {
                        fall = Some(t);
                    } else if !on_work[t] {
                        on_work[t] = true;
                        work.push(t);
                    }
                }
            }
            match fall {
                Some(t) => {
                    i = t;
                    s = state[t].clone().unwrap_or_else(|| s.clone());
                }
                None => break,
            }
        }
    }
    let mut out = Vec::new();
    for (i, d) in f.instrs.iter().enumerate() {
        let Some(s) = &state[i] else {
            continue;
        };
        let mut seen = BTreeSet::new();
        for r in d.reads() {
            if seen.insert(r) && !s.defines_for(r, d) {
                out.push(UndefinedRead {
                    instr: i as u32,
                    reg: r,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
