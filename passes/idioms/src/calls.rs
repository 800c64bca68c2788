//! Expansions that call a `.func` and read module tables (f64 `sin`/`cos`:
//! `call __internal_trig_reduction_slowpathd` for |x| ≥ 2^31, the
//! quadrant polynomials' coefficients from `__cudart_sin_cos_coeffs`).
//!
//! A call step matches only a call of a function of the same name whose
//! body is equal to the template module's (instruction for instruction,
//! `.loc` aside, every variable it names compared by declaration: name,
//! space, size, alignment, initialiser), so the call computes what the
//! template's computes. A module table matches only a variable of the
//! same declaration (its initialiser bytes included). The call-site
//! `.param` variables (`param0`, `retval0`) are matched under a bijection
//! and must be named by nothing outside the expansion.

use ptxeq_ir::{
    AddrBase, Instr, InstrData, KernelIr, Operand, RegId, StateSpace, Symbol, VarDecl, VarId,
};
use rustc_hash::FxHashMap;

/// The variables `d` names (as a value, or as an address base).
pub(crate) fn vars_named(d: &InstrData) -> Vec<VarId> {
    fn walk(o: &Operand, out: &mut Vec<VarId>) {
        match o {
            Operand::Symbol {
                sym: Symbol::Var(v),
                ..
            } => out.push(*v),
            Operand::Addr(a) => {
                if let AddrBase::Symbol(Symbol::Var(v)) = a.base {
                    out.push(v);
                }
            }
            Operand::Vector(x) | Operand::List(x) => x.iter().for_each(|o| walk(o, out)),
            Operand::Not(o) => walk(o, out),
            Operand::Pair(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    d.operands.iter().for_each(|o| walk(o, &mut out));
    out
}

/// The functions `d` calls, by name.
pub(crate) fn callees(d: &InstrData) -> Vec<String> {
    if !matches!(d.instr, Instr::Call { .. }) {
        return Vec::new();
    }
    d.operands
        .iter()
        .filter_map(|o| match o {
            Operand::Symbol {
                sym: Symbol::Func(n),
                ..
            } => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// Is `v` a call-site `.param` variable (declared in a call block)?
pub(crate) fn is_call_param(decl: &VarDecl) -> bool {
    decl.space == StateSpace::Param && decl.scope == ptxeq_ir::VarScope::Function
}

/// A declaration as compared across modules. A function's own variables
/// are compared without their names (nvcc numbers `__local_depot<N>` by
/// the function's position in the module).
pub(crate) fn decl_key(d: &VarDecl) -> String {
    let name = match d.scope {
        ptxeq_ir::VarScope::Module => d.name.as_str(),
        ptxeq_ir::VarScope::Function => "",
    };
    format!(
        "{name}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        d.space, d.scope, d.linkage, d.ty, d.align, d.vector, d.dims, d.size_bytes, d.init
    )
}

/// `o` with every variable id replaced by one placeholder (the
/// declarations are compared apart, in order) and every label by its
/// target instruction.
fn without_var_ids(o: &Operand, f: &KernelIr) -> Operand {
    const ANY: VarId = VarId(u32::MAX);
    match o {
        Operand::Symbol {
            sym: Symbol::Var(_),
            offset,
        } => Operand::Symbol {
            sym: Symbol::Var(ANY),
            offset: *offset,
        },
        Operand::Addr(a) if matches!(a.base, AddrBase::Symbol(Symbol::Var(_))) => {
            Operand::Addr(ptxeq_ir::Address {
                base: AddrBase::Symbol(Symbol::Var(ANY)),
                ..a.clone()
            })
        }
        Operand::Label(l) => Operand::Label(ptxeq_ir::LabelId(
            f.labels.get(l.index()).map_or(u32::MAX, |l| l.target),
        )),
        Operand::Vector(x) => Operand::Vector(x.iter().map(|o| without_var_ids(o, f)).collect()),
        Operand::List(x) => Operand::List(x.iter().map(|o| without_var_ids(o, f)).collect()),
        Operand::Not(x) => Operand::Not(Box::new(without_var_ids(x, f))),
        Operand::Pair(a, b) => Operand::Pair(
            Box::new(without_var_ids(a, f)),
            Box::new(without_var_ids(b, f)),
        ),
        other => other.clone(),
    }
}

/// Whether `d` only computes registers from registers (no memory, no
/// control, no hidden state): such instructions may be reordered within
/// a block along their register dependencies.
fn pure(d: &InstrData) -> bool {
    use Instr::*;
    let ok = match &d.instr {
        Add { carry, .. } | Sub { carry, .. } | Mad { carry, .. } => {
            *carry == ptxeq_ir::Carry::None
        }
        Mul { .. }
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
        | Math { .. }
        | Testp { .. }
        | And { .. }
        | Or { .. }
        | Xor { .. }
        | Not { .. }
        | Cnot { .. }
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
        | Setp { .. }
        | Selp { .. }
        | Mov { .. }
        | Cvt { .. } => true,
        _ => false,
    };
    ok && d.operands.iter().all(|o| {
        matches!(
            o,
            Operand::Reg(_)
                | Operand::Imm(_)
                | Operand::Not(_)
                | Operand::Sink
                | Operand::Vector(_)
        )
    })
}

/// A canonical instruction order of `f`: blocks (delimited by label
/// targets and control instructions) stay where they are; inside a block
/// the pure register instructions are list-scheduled along their
/// register dependencies by a structural hash that ignores register names
/// and the order of commutative sources (three rounds of refinement over
/// the definitions), every other instruction keeping its place relative
/// to the others. Two bodies that differ by reordering independent
/// instructions (or by renaming, or by swapped commutative operands) get
/// the same order up to instructions that compute identical values.
fn canonical_order(f: &KernelIr) -> Vec<usize> {
    use std::hash::{Hash, Hasher};
    let n = f.instrs.len();
    let hash_of = |x: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        x(&mut h);
        h.finish()
    };
    let mut reg_h: FxHashMap<RegId, u64> = FxHashMap::default();
    for (i, p) in f.params.iter().enumerate() {
        if let Some(r) = p.reg {
            reg_h.insert(r, hash_of(&|h| ("param", i).hash(h)));
        }
    }
    let param_h = reg_h.clone();
    let mut ins_h = vec![0u64; n];
    for _ in 0..3 {
        for (i, d) in f.instrs.iter().enumerate() {
            let writes = d.writes();
            let mut ops: Vec<u64> = d
                .operands
                .iter()
                .map(|o| match o {
                    Operand::Reg(r) if writes.contains(r) => hash_of(&|h| "dst".hash(h)),
                    Operand::Reg(r) => reg_h.get(r).copied().unwrap_or(0),
                    Operand::Label(_) => hash_of(&|h| "label".hash(h)),
                    o => hash_of(&|h| format!("{:?}", without_var_ids(o, f)).hash(h)),
                })
                .collect();
            if let Some((a, b)) = d.instr.commutative_sources()
                && b < ops.len()
                && ops[b] < ops[a]
            {
                ops.swap(a, b);
            }
            let guard = d
                .guard
                .map(|g| (g.negated, reg_h.get(&g.reg).copied().unwrap_or(0)));
            ins_h[i] = hash_of(&|h| {
                format!("{:?}", d.instr).hash(h);
                ops.hash(h);
                guard.hash(h);
            });
        }
        let mut defs: FxHashMap<RegId, Vec<u64>> = FxHashMap::default();
        for (i, d) in f.instrs.iter().enumerate() {
            for (k, r) in d.writes().into_iter().enumerate() {
                defs.entry(r)
                    .or_default()
                    .push(hash_of(&|h| (ins_h[i], k).hash(h)));
            }
        }
        reg_h = param_h.clone();
        for (r, mut hs) in defs {
            hs.sort_unstable();
            reg_h.insert(r, hash_of(&|h| hs.hash(h)));
        }
    }
    // Blocks: a label target starts one, a control instruction ends one.
    let mut starts: Vec<bool> = vec![false; n + 1];
    starts[0] = true;
    for l in &f.labels {
        if let Some(s) = starts.get_mut(l.target as usize) {
            *s = true;
        }
    }
    for (i, d) in f.instrs.iter().enumerate() {
        if crate::operands::is_control(&d.instr) {
            starts[i + 1] = true;
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && !starts[j] {
            j += 1;
        }
        order.extend(schedule_block(f, i..j, &ins_h));
        i = j;
    }
    order
}

/// List-schedules the instructions of block `range` (see
/// [`canonical_order`]): an instruction is ready when every earlier one
/// it depends on (the last writer of a register it reads or writes, the
/// readers since of a register it writes; for an impure instruction, the
/// previous impure one) is placed; the ready one with the smallest hash
/// goes first. Linear in the block's size (plus a heap).
fn schedule_block(f: &KernelIr, range: std::ops::Range<usize>, ins_h: &[u64]) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let idx: Vec<usize> = range.collect();
    let m = idx.len();
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut npred = vec![0usize; m];
    let mut last_write: FxHashMap<RegId, usize> = FxHashMap::default();
    let mut readers: FxHashMap<RegId, Vec<usize>> = FxHashMap::default();
    let mut last_impure: Option<usize> = None;
    let edge = |a: usize, b: usize, succs: &mut Vec<Vec<usize>>, npred: &mut Vec<usize>| {
        if a != b && !succs[a].contains(&b) {
            succs[a].push(b);
            npred[b] += 1;
        }
    };
    for (b, &i) in idx.iter().enumerate() {
        let d = &f.instrs[i];
        let w = d.writes();
        let mut r = d.mentions();
        if let Some(g) = d.guard {
            r.push(g.reg);
        }
        for reg in &r {
            if let Some(&a) = last_write.get(reg) {
                edge(a, b, &mut succs, &mut npred);
            }
        }
        for reg in &w {
            for &a in readers.get(reg).map(Vec::as_slice).unwrap_or(&[]) {
                edge(a, b, &mut succs, &mut npred);
            }
        }
        if !pure(d) {
            if let Some(a) = last_impure {
                edge(a, b, &mut succs, &mut npred);
            }
            last_impure = Some(b);
        }
        for reg in &r {
            if !w.contains(reg) {
                readers.entry(*reg).or_default().push(b);
            }
        }
        for reg in w {
            last_write.insert(reg, b);
            readers.remove(&reg);
        }
    }
    let mut ready: BinaryHeap<Reverse<(u64, usize)>> = (0..m)
        .filter(|&b| npred[b] == 0)
        .map(|b| Reverse((ins_h[idx[b]], b)))
        .collect();
    let mut out = Vec::with_capacity(m);
    while let Some(Reverse((_, b))) = ready.pop() {
        out.push(idx[b]);
        for &c in &succs[b] {
            npred[c] -= 1;
            if npred[c] == 0 {
                ready.push(Reverse((ins_h[idx[c]], c)));
            }
        }
    }
    out
}

/// Canonical register numbers of a function: its register params in
/// order, then every register in the order instructions first write it
/// (nvcc's bodies define before they use), then any other in the order of
/// first mention. A consistent renaming of the registers gives the same
/// numbers.
fn canon_regs(f: &KernelIr, order: &[usize]) -> FxHashMap<RegId, u32> {
    let mut ids: FxHashMap<RegId, u32> = FxHashMap::default();
    let number = |r: RegId, ids: &mut FxHashMap<RegId, u32>| {
        let n = ids.len() as u32;
        ids.entry(r).or_insert(n);
    };
    for p in &f.params {
        if let Some(r) = p.reg {
            number(r, &mut ids);
        }
    }
    for d in order.iter().map(|&i| &f.instrs[i]) {
        for r in d.writes() {
            number(r, &mut ids);
        }
    }
    for d in order.iter().map(|&i| &f.instrs[i]) {
        if let Some(g) = d.guard {
            number(g.reg, &mut ids);
        }
        for r in d.mentions() {
            number(r, &mut ids);
        }
    }
    ids
}

/// `o` with registers renumbered by `ids`.
fn renumbered(o: &Operand, ids: &FxHashMap<RegId, u32>) -> Operand {
    let re = |r: &RegId| RegId(ids.get(r).copied().unwrap_or(u32::MAX));
    let addr = |a: &ptxeq_ir::Address| ptxeq_ir::Address {
        base: match &a.base {
            AddrBase::Reg(r) => AddrBase::Reg(re(r)),
            b => b.clone(),
        },
        offset: a.offset,
    };
    match o {
        Operand::Reg(r) => Operand::Reg(re(r)),
        Operand::RegLane { reg, lane } => Operand::RegLane {
            reg: re(reg),
            lane: *lane,
        },
        Operand::Addr(a) => Operand::Addr(addr(a)),
        Operand::TensorAddr { tmap, coords } => Operand::TensorAddr {
            tmap: addr(tmap),
            coords: coords.iter().map(|c| renumbered(c, ids)).collect(),
        },
        Operand::Vector(x) => Operand::Vector(x.iter().map(|o| renumbered(o, ids)).collect()),
        Operand::List(x) => Operand::List(x.iter().map(|o| renumbered(o, ids)).collect()),
        Operand::Not(x) => Operand::Not(Box::new(renumbered(x, ids))),
        Operand::Pair(a, b) => {
            Operand::Pair(Box::new(renumbered(a, ids)), Box::new(renumbered(b, ids)))
        }
        other => other.clone(),
    }
}

/// A function body in a form comparable across modules: parameters,
/// register types and instructions (`.loc` dropped), each variable
/// replaced by its declaration; instructions in a canonical order within
/// their blocks ([`canonical_order`]), registers renumbered canonically
/// ([`canon_regs`]) and the two sources of a commutative instruction in
/// a canonical order, so reordered independent instructions, a consistent
/// register renaming or swapped commutative operands compare equal
/// (issue 13 item 9). `None` when the
/// function has no body or calls another function (not needed by any
/// template; refused rather than compared shallowly).
pub(crate) fn canon_body(f: &KernelIr) -> Option<String> {
    if !f.has_body {
        return None;
    }
    let order = canonical_order(f);
    let ids = canon_regs(f, &order);
    // Registers by canonical number: type and vector width (names carry
    // nothing: `%r3` and `%r5` are the same register under a renaming).
    let mut regs: Vec<(u32, String)> = ids
        .iter()
        .map(|(r, n)| {
            let info = f.regs.get(r.index());
            (*n, format!("{:?}", info.map(|i| (i.ty, i.vector))))
        })
        .collect();
    regs.sort();
    let params: Vec<ptxeq_ir::ParamDecl> = f
        .params
        .iter()
        .map(|p| ptxeq_ir::ParamDecl {
            reg: p
                .reg
                .map(|r| RegId(ids.get(&r).copied().unwrap_or(u32::MAX))),
            ..p.clone()
        })
        .collect();
    // Labels enter as their targets: their names carry the function's
    // position in the module, and `-lineinfo` adds an unused
    // `$L__func_end` label.
    let mut s = format!("{params:?}\n{regs:?}\n");
    for d in order.iter().map(|&i| &f.instrs[i]) {
        if matches!(d.instr, Instr::Call { .. } | Instr::Unknown { .. }) {
            return None;
        }
        let mut operands: Vec<Operand> = d
            .operands
            .iter()
            .map(|o| renumbered(&without_var_ids(o, f), &ids))
            .collect();
        if let Some((a, b)) = d.instr.commutative_sources()
            && b < operands.len()
            && format!("{:?}", operands[b]) < format!("{:?}", operands[a])
        {
            operands.swap(a, b);
        }
        let stripped = InstrData {
            guard: d.guard.map(|g| ptxeq_ir::Guard {
                reg: RegId(ids.get(&g.reg).copied().unwrap_or(u32::MAX)),
                ..g
            }),
            instr: d.instr.clone(),
            operands: operands.into_iter().collect(),
            loc: None,
        };
        s.push_str(&format!("{stripped:?}"));
        for v in vars_named(d) {
            s.push_str(&decl_key(&f.vars[v.index()]));
        }
        s.push('\n');
    }
    Some(s)
}

/// The canonical bodies of a module's functions, by name.
pub(crate) fn bodies(funcs: &[KernelIr]) -> FxHashMap<String, String> {
    funcs
        .iter()
        .filter_map(|f| Some((f.name.clone(), canon_body(f)?)))
        .collect()
}

/// Does the global load at `load` of a template kernel read a module
/// table: its address register computed (through any chain) from a `mov`
/// of a module variable's address?
pub(crate) fn reads_module_table(k: &KernelIr, load: usize) -> bool {
    let mut stack: Vec<ptxeq_ir::RegId> = Vec::new();
    if let Some(Operand::Addr(a)) = k.instrs[load].operands.get(1)
        && let AddrBase::Reg(r) = a.base
    {
        stack.push(r);
    }
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(r) = stack.pop() {
        if !seen.insert(r) || seen.len() > 64 {
            continue;
        }
        for d in k.instrs.iter().filter(|d| d.writes().contains(&r)) {
            if vars_named(d)
                .iter()
                .any(|v| k.vars[v.index()].scope == ptxeq_ir::VarScope::Module)
            {
                return true;
            }
            stack.extend(d.reads());
        }
    }
    false
}
