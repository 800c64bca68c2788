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

/// `&'static str`, spelled as an alias so that serde's derive does not
/// treat the field as borrowed from the input (it is read back as a
/// leaked string, see `crate::catalogue`).
pub type StaticStr = &'static str;

/// `&'static [&'static str]` (see [`StaticStr`]).
pub type StaticStrs = &'static [&'static str];

/// One recognisable expansion.
///
/// Serialisable so the built catalogue can be stored (`crate::catalogue`):
/// the static strings are written as strings and, read back, leaked once
/// per process (the catalogue lives as long as the process).
#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub struct Template {
    /// Which form this is (`"expf, nvcc 13.5 default flags"`).
    #[serde(with = "crate::catalogue::static_str")]
    pub name: StaticStr,
    pub func: IdiomFn,
    pub ty: ScalarType,
    /// Facts the recognition relies on, printed with the check.
    #[serde(with = "crate::catalogue::static_strs")]
    pub assumptions: StaticStrs,
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
    /// The expansion's thread-private scratch array in local memory, if
    /// it has one (sinf/cosf's Payne–Hanek path).
    pub(crate) scratch: Option<Scratch>,
    /// The expansion writes its argument register (f64 `log` rescales a
    /// subnormal argument in place); the match then also requires that
    /// nothing else reads the argument register.
    pub(crate) leaf_written: bool,
    /// A constant second argument folded into the code (`powf(x, c)`):
    /// its class and the marked immediates it is read from
    /// ([`crate::constarg`]).
    pub(crate) const_arg: Option<crate::constarg::ConstArg>,
    /// Further arguments after `leaf`, in parameter order (`powf(x, y)`:
    /// `y`).
    pub(crate) args: Vec<RegId>,
    /// With a tail after the function's `ret` (see `matcher::joined`):
    /// the index of the tail's first step; the steps before it are the
    /// main part, whose last step writes the result right before the
    /// join.
    pub(crate) join: Option<usize>,
    /// The branch steps that go to the join.
    pub(crate) to_join: FxHashSet<usize>,
    /// With a tail that returns into the main part rather than after it
    /// (f64 `pow`: the final `x == 1 || y == 0` select follows the
    /// join): the main-part step the join label lands on.
    pub(crate) rejoin: Option<usize>,
    /// With a tail: the constant the result register holds on entry (the
    /// value for the cases that branch straight to the join), set by a
    /// `mov` that is not a step (see `matcher::joined`).
    pub(crate) out_init: Option<ptxeq_ir::Imm>,
    /// A second result of the same expansion (`sincosf`: one reduction,
    /// sin and cos): its register and function. The template kernel stores
    /// it first, the main result last.
    pub(crate) second: Option<(RegId, IdiomFn)>,
    /// The declaration of every variable a step names (module tables,
    /// call-site `.param`s; see [`crate::calls`]).
    pub(crate) vars: FxHashMap<ptxeq_ir::VarId, ptxeq_ir::VarDecl>,
    /// The canonical body of every function a step calls, by name
    /// ([`crate::calls::canon_body`]); filled by the library from the
    /// template's module.
    pub(crate) callees: FxHashMap<String, String>,
}

/// A template's local-memory scratch array: `base` (a register the
/// template reads but does not define) holds the address of a `.local`
/// variable, and every step reading it is `add d, base, off` with `off`
/// the placeholder [`SCRATCH_OFF`]: in a kernel the array may sit at any
/// suitably aligned offset of a larger depot. The template's local loads
/// read only what its own local stores wrote (the stores belong to the
/// slice), so after the rewrite the scratch bytes are dead unless
/// something outside the expansion reads them — which the matcher
/// rejects (`matcher::accept`).
#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Scratch {
    pub base: RegId,
    /// Bytes the expansion may touch (the template's whole depot).
    pub len: u64,
    /// Its alignment.
    pub align: u64,
    /// The hoisted form ([`Template::hoisted`]): registers holding
    /// addresses inside the array, computed outside the expansion, with
    /// their byte offset from the array's start. Empty in the plain form.
    pub ptrs: Vec<(RegId, i64)>,
}

/// The placeholder for the scratch array's byte offset in the depot.
pub(crate) const SCRATCH_OFF: RegId = RegId(u32::MAX - 1);

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

    /// The expansion's basic blocks as step ranges, in step order: a
    /// block starts at step 0, at a step a branch lands on, after a
    /// branch or other terminator, at the tail ([`Template::join`]) and
    /// at the rejoin step. Within a block a kernel may order independent
    /// steps any way (the matcher keeps only their dependencies); the
    /// blocks themselves keep the template's order.
    pub(crate) fn blocks(&self) -> Vec<std::ops::Range<usize>> {
        let n = self.steps.len();
        let mut starts: std::collections::BTreeSet<usize> = [0].into_iter().collect();
        for (&j, &tj) in &self.branch_target {
            starts.insert(j + 1);
            starts.insert(tj);
        }
        for (j, d) in self.steps.iter().enumerate() {
            if d.instr.is_terminator() {
                starts.insert(j + 1);
            }
        }
        starts.extend(self.join);
        starts.extend(self.rejoin);
        let starts: Vec<usize> = starts.into_iter().filter(|&s| s < n).collect();
        starts
            .iter()
            .enumerate()
            .map(|(i, &s)| s..starts.get(i + 1).copied().unwrap_or(n))
            .collect()
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
        if self.second.is_some() || self.scratch.is_some() {
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

impl Template {
    /// The form with the scratch array's address arithmetic hoisted out
    /// of the expansion (nvcc does so when the expansion is in a loop or
    /// repeated): the steps `add p, q, imm` computing addresses from the
    /// array's base are dropped, and the registers they wrote become
    /// inputs, each with its offset from the array's start
    /// ([`Scratch::ptrs`]); the matcher checks that the kernel computes
    /// them so (`matcher::scratch_private`). `None` when there is no such
    /// step.
    pub(crate) fn hoisted(&self, name: &'static str) -> Option<Template> {
        let s = self.scratch.as_ref()?;
        // Step indices elsewhere than `branch_target` are not remapped.
        if !s.ptrs.is_empty() || self.join.is_some() || !self.to_join.is_empty() {
            return None;
        }
        let mut rel: FxHashMap<RegId, i64> = [(s.base, 0)].into_iter().collect();
        let mut dropped: Vec<usize> = Vec::new();
        for (j, d) in self.steps.iter().enumerate() {
            let (Instr::Add { ty, .. }, None, [Operand::Reg(dst), Operand::Reg(p), off]) =
                (&d.instr, d.guard, d.operands.as_slice())
            else {
                continue;
            };
            let c = match off {
                Operand::Reg(r) if *r == SCRATCH_OFF => 0,
                Operand::Imm(Imm::Int(c)) => i64::try_from(*c).ok()?,
                _ => continue,
            };
            let Some(base) = rel.get(p).copied() else {
                continue;
            };
            // An address register written once, by this step.
            let writers = self
                .steps
                .iter()
                .filter(|e| e.writes().contains(dst))
                .count();
            if ty.is_float() || ty.bit_width() != 64 || writers != 1 {
                return None;
            }
            rel.insert(*dst, base.checked_add(c)?);
            dropped.push(j);
        }
        if dropped.is_empty() {
            return None;
        }
        let keep: Vec<usize> = (0..self.steps.len())
            .filter(|j| !dropped.contains(j))
            .collect();
        let new_index = |old: usize| dropped.iter().filter(|&&d| d < old).count();
        let mut t = self.clone();
        t.name = name;
        t.steps = keep.iter().map(|&j| self.steps[j].clone()).collect();
        t.branch_target = self
            .branch_target
            .iter()
            .map(|(&j, &to)| (j - new_index(j), to - new_index(to)))
            .collect();
        let read: FxHashSet<RegId> = t.steps.iter().flat_map(InstrData::reads).collect();
        let mut ptrs: Vec<(RegId, i64)> = rel
            .into_iter()
            .filter(|(r, _)| *r != s.base && read.contains(r))
            .collect();
        ptrs.sort_unstable();
        if read.contains(&s.base) || ptrs.is_empty() {
            return None;
        }
        t.scratch = Some(Scratch { ptrs, ..s.clone() });
        Some(t)
    }
}

impl Template {
    /// The hoisted form with the Payne–Hanek loads' address reassociated,
    /// as nvcc writes it when several expansions share one scratch array
    /// (`sinf(a) + sinf(b)`): the template's `add p, P, r` (`P` a hoisted
    /// address `c ≠ 0` bytes into the array, `r` the word offset) becomes
    /// `add q, B, r; add p, q, c` (`B` the hoisted array start), and the
    /// loads through `p` in the same basic block read `[q + c + o]` instead
    /// of `[p + o]`. 64-bit integer addition is associative and
    /// commutative, so every load reads the same address as in the
    /// template: the derived form computes exactly what the template does
    /// (whose agreement with libm `tests/agreement.rs` checks). `None` when
    /// there is no such `add`.
    pub(crate) fn reassociated(&self, name: &'static str) -> Option<Template> {
        let s = self.scratch.as_ref()?;
        if self.join.is_some() || !self.to_join.is_empty() {
            return None;
        }
        let start = s.ptrs.iter().find(|(_, rel)| *rel == 0)?.0;
        // A fresh template register per rewritten `add`.
        let mut fresh = self
            .steps
            .iter()
            .flat_map(InstrData::mentions)
            .filter(|r| r.0 < SCRATCH_OFF.0 - 1024)
            .map(|r| r.0)
            .max()?;
        let mut t = self.clone();
        t.name = name;
        let mut j = 0;
        let mut changed = false;
        while j < t.steps.len() {
            let d = &t.steps[j];
            let (Instr::Add { ty, .. }, None, [Operand::Reg(p), Operand::Reg(hp), Operand::Reg(r)]) =
                (&d.instr, d.guard, d.operands.as_slice())
            else {
                j += 1;
                continue;
            };
            let (p, r, ty) = (*p, *r, *ty);
            let Some(c) = s.ptrs.iter().find(|(x, _)| x == hp).map(|(_, c)| *c) else {
                j += 1;
                continue;
            };
            if c == 0
                || ty.is_float()
                || ty.bit_width() != 64
                || s.ptrs.iter().any(|(x, _)| *x == r)
            {
                j += 1;
                continue;
            }
            // A label landing right after the `add` would separate the
            // two new steps.
            if t.branch_target.values().any(|&to| to == j + 1) {
                return None;
            }
            fresh += 1;
            let q = RegId(fresh);
            let mut first = d.clone();
            first.operands = [Operand::Reg(q), Operand::Reg(start), Operand::Reg(r)]
                .into_iter()
                .collect();
            let mut second = d.clone();
            second.operands = [
                Operand::Reg(p),
                Operand::Reg(q),
                Operand::Imm(Imm::Int(i128::from(c))),
            ]
            .into_iter()
            .collect();
            t.steps[j] = first;
            t.steps.insert(j + 1, second);
            t.branch_target = t
                .branch_target
                .iter()
                .map(|(&b, &to)| {
                    let sh = |i: usize| if i > j { i + 1 } else { i };
                    (sh(b), sh(to))
                })
                .collect();
            // The loads through `p` up to the block's end address from `q`.
            let mut i = j + 2;
            while i < t.steps.len()
                && !matches!(t.steps[i].instr, Instr::Bra { .. })
                && !t.branch_target.values().any(|&to| to == i)
            {
                let e = &mut t.steps[i];
                if e.writes().contains(&p) {
                    return None;
                }
                if matches!(&e.instr, Instr::Ld(m) if m.space == StateSpace::Local) {
                    for o in e.operands.iter_mut() {
                        if let Operand::Addr(a) = o
                            && a.base == ptxeq_ir::AddrBase::Reg(p)
                        {
                            a.base = ptxeq_ir::AddrBase::Reg(q);
                            a.offset = a.offset.checked_add(c)?;
                        }
                    }
                }
                i += 1;
            }
            changed = true;
            j += 2;
        }
        if !changed {
            return None;
        }
        let read: FxHashSet<RegId> = t.steps.iter().flat_map(InstrData::reads).collect();
        let ptrs: Vec<(RegId, i64)> = s
            .ptrs
            .iter()
            .copied()
            .filter(|(r, _)| read.contains(r))
            .collect();
        t.scratch = Some(Scratch { ptrs, ..s.clone() });
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
        for r in d.writes() {
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
    let (leaf, args) = crate::matcher::joined::arguments(k, leaf)?;
    let tail = crate::matcher::joined::tail_range(k, st);
    let out = reg_of(k.instrs[st].operands.get(1)).ok_or("store without a register")?;
    // A second global store after the load: a second result.
    let stores: Vec<usize> = (ld + 1..st)
        .filter(|&i| matches!(&k.instrs[i].instr, Instr::St(m) if is_global(m.space)))
        .collect();
    let out2 = match stores.as_slice() {
        [] => None,
        [s1] => Some(reg_of(k.instrs[*s1].operands.get(1)).ok_or("store without a register")?),
        _ => return Err("more than two results".into()),
    };
    let consts = constant_regs(k);
    // Backward slice of `out` over the region, to a fixpoint (a register
    // written on two paths keeps both writers; a writer of the argument
    // itself too). Once the slice loads from local memory, every local
    // store of the region belongs to it: the load may read any of them.
    let mut needed: FxHashSet<RegId> = [out, leaf].into_iter().chain(out2).collect();
    let mut included: FxHashSet<usize> = FxHashSet::default();
    let is_local = |d: &InstrData, load: bool| match &d.instr {
        Instr::Ld(m) | Instr::Ldu(m) if load => m.space == StateSpace::Local,
        Instr::St(m) if !load => m.space == StateSpace::Local,
        _ => false,
    };
    let mut reads_local = false;
    // Call-site `.param` variables the slice reads (a call's results):
    // the call and the stores of its arguments belong to the slice too.
    let mut call_vars: FxHashSet<ptxeq_ir::VarId> = FxHashSet::default();
    let is_call_var = |v: &ptxeq_ir::VarId| crate::calls::is_call_param(&k.vars[v.index()]);
    loop {
        let mut changed = false;
        // From the kernel's start: with a constant exponent, powf's
        // parity test of y is computed before x is loaded.
        for i in (0..st).chain(tail.clone()).rev() {
            let arg_load = matches!(&k.instrs[i].instr, Instr::Ld(m) if is_global(m.space))
                && !crate::calls::reads_module_table(k, i);
            if i == ld || arg_load || included.contains(&i) {
                continue;
            }
            let d = &k.instrs[i];
            let w = d.writes();
            // The address of a local array is the expansion's input (its
            // scratch base, see [`Scratch`]), not a step.
            let local_addr = matches!(
                (&d.instr, d.operands.as_slice()),
                (Instr::Mov { .. }, [_, Operand::Symbol { sym: ptxeq_ir::Symbol::Var(v), .. }])
                    if k.vars[v.index()].space == StateSpace::Local
            );
            if local_addr || w.iter().any(|r| consts.contains_key(r)) {
                continue;
            }
            let is_branch = matches!(d.instr, Instr::Bra { .. });
            let named = crate::calls::vars_named(d);
            if is_branch
                || w.iter().any(|r| needed.contains(r))
                || reads_local && is_local(d, false)
                || named.iter().any(|v| call_vars.contains(v))
            {
                included.insert(i);
                changed = true;
                reads_local |= is_local(d, true);
                call_vars.extend(named.into_iter().filter(is_call_var));
                for r in d.reads() {
                    if r != leaf && !args.contains(&r) && !consts.contains_key(&r) {
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
    let mut steps: Vec<InstrData> = order
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
    // With a tail, and in powf: the result's initial constant is not a
    // step (nvcc hoists it, even above the kernel's bounds check or
    // another expansion).
    let out_init = crate::matcher::joined::split_out_init(
        &mut order,
        &mut steps,
        out,
        &tail,
        func == IdiomFn::Pow,
    );
    // Forward branches inside the expansion; with a tail after `ret`,
    // also into it and back to the join (`matcher::joined`).
    let branches = crate::matcher::joined::branches(k, &steps, &order, st, &tail, out)?;
    let branch_target = branches.target;
    let leaf_written = steps.iter().any(|d| d.writes().contains(&leaf));
    let scratch = scratch(k, &mut steps, leaf, &args)?;
    let vars = steps
        .iter()
        .flat_map(crate::calls::vars_named)
        .map(|v| (v, k.vars[v.index()].clone()))
        .collect();
    if branches.join.is_none() && !steps.last().is_some_and(|d| d.writes().contains(&out)) {
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
        scratch,
        leaf_written,
        const_arg: None,
        args,
        join: branches.join,
        to_join: branches.to_join,
        rejoin: branches.rejoin,
        out_init,
        second: out2.map(|r| (r, func)),
        vars,
        callees: FxHashMap::default(),
    })
}

/// The scratch array of an expansion, from the registers its steps read
/// but do not write (other than the argument): there may be one, the
/// address of a `.local` variable (nvcc's `mov.u64 %SPL, __local_depot`),
/// read only by `add d, base, imm` steps, whose immediates become the
/// [`SCRATCH_OFF`] placeholder. Anything else read from outside the slice
/// is a template error.
fn scratch(
    k: &KernelIr,
    steps: &mut [InstrData],
    leaf: RegId,
    args: &[RegId],
) -> Result<Option<Scratch>, String> {
    let written: FxHashSet<RegId> = steps.iter().flat_map(InstrData::writes).collect();
    let mut free: Vec<RegId> = steps
        .iter()
        .flat_map(InstrData::reads)
        .filter(|r| {
            *r != leaf
                && !args.contains(r)
                && *r != crate::matcher::joined::OUT_INIT
                && !written.contains(r)
        })
        .collect();
    free.sort_unstable();
    free.dedup();
    let base = match free.as_slice() {
        [] => return Ok(None),
        [b] => *b,
        _ => return Err("the expansion reads registers it does not define".into()),
    };
    let defs: Vec<&InstrData> = k
        .instrs
        .iter()
        .filter(|d| d.writes().contains(&base))
        .collect();
    let var = match defs.as_slice() {
        [d] => match (&d.instr, d.guard, d.operands.as_slice()) {
            (
                Instr::Mov { .. },
                None,
                [
                    Operand::Reg(_),
                    Operand::Symbol {
                        sym: ptxeq_ir::Symbol::Var(v),
                        offset: 0,
                    },
                ],
            ) => &k.vars[v.index()],
            _ => return Err("a free register that is not a local array's address".into()),
        },
        _ => return Err("a free register that is not a local array's address".into()),
    };
    if var.space != StateSpace::Local {
        return Err("a free register that is not a local array's address".into());
    }
    let len = var.size_bytes.ok_or("a local array without a size")?;
    for d in steps.iter_mut() {
        if !d.reads().contains(&base) {
            continue;
        }
        match (&d.instr, d.operands.as_mut_slice()) {
            (Instr::Add { .. }, [_, Operand::Reg(b), off @ Operand::Imm(_)]) if *b == base => {
                *off = Operand::Reg(SCRATCH_OFF);
            }
            // `st.local [base+off]` (Triton): the matcher adds the
            // array's offset in the depot (`Binding::scratch_base`).
            (Instr::St(m), [Operand::Addr(a), v])
                if m.space == StateSpace::Local && a.base == ptxeq_ir::AddrBase::Reg(base) && {
                    let mut rs = Vec::new();
                    v.collect_regs(&mut rs);
                    !rs.contains(&base)
                } => {}
            _ => return Err("the local array's address is used other than by add".into()),
        }
    }
    Ok(Some(Scratch {
        base,
        len,
        align: u64::from(var.align.unwrap_or(1)),
        ptrs: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each local load's address as (bytes from the array's start, the
    /// registers added), following the steps' 64-bit `add`s from the
    /// hoisted addresses.
    fn load_addresses(t: &Template) -> Vec<(i64, Vec<RegId>)> {
        let s = t.scratch.as_ref().expect("scratch");
        let mut val: FxHashMap<RegId, (i64, Vec<RegId>)> =
            s.ptrs.iter().map(|(r, c)| (*r, (*c, Vec::new()))).collect();
        let mut out = Vec::new();
        for d in &t.steps {
            match (&d.instr, d.operands.as_slice()) {
                (Instr::Add { .. }, [Operand::Reg(dst), Operand::Reg(a), b]) => {
                    let Some((c, mut regs)) = val.get(a).cloned() else {
                        continue;
                    };
                    let c = match b {
                        Operand::Imm(Imm::Int(i)) => c + i64::try_from(*i).expect("offset"),
                        Operand::Reg(r) => {
                            regs.push(*r);
                            regs.sort_unstable();
                            c
                        }
                        _ => continue,
                    };
                    val.insert(*dst, (c, regs));
                }
                (Instr::Ld(m), [_, Operand::Addr(a)]) if m.space == StateSpace::Local => {
                    let ptxeq_ir::AddrBase::Reg(r) = a.base else {
                        panic!("local load from a symbol");
                    };
                    let (c, regs) = val[&r].clone();
                    out.push((c + a.offset, regs));
                }
                _ => {}
            }
        }
        out
    }

    /// The shared forms read the very words the hoisted forms read (the
    /// fresh register aside, which stands for the same sum).
    #[test]
    fn shared_forms_load_the_same_addresses() {
        let all = crate::library::templates();
        let mut n = 0;
        for t in all
            .iter()
            .filter(|t| t.name.ends_with("scratch array shared"))
        {
            let base = t
                .name
                .replace("scratch array shared", "scratch address hoisted");
            let h = all.iter().find(|h| h.name == base).expect("hoisted form");
            // One more step per slow path.
            assert!(t.len() > h.len(), "{}", t.name);
            let strip = |v: Vec<(i64, Vec<RegId>)>| -> Vec<i64> {
                v.into_iter()
                    .map(|(c, regs)| {
                        assert_eq!(regs.len(), 1, "one word offset per load");
                        c
                    })
                    .collect()
            };
            assert_eq!(
                strip(load_addresses(t)),
                strip(load_addresses(h)),
                "{}",
                t.name
            );
            n += 1;
        }
        assert!(n >= 2, "sinf and cosf at least");
    }
}
