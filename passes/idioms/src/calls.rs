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

use ptxeq_ir::{AddrBase, Instr, InstrData, KernelIr, Operand, StateSpace, Symbol, VarDecl, VarId};
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

/// A function body in a form comparable across modules: parameters,
/// registers, labels and instructions (`.loc` dropped), each variable
/// replaced by its declaration. `None` when the function has no body or
/// calls another function (not needed by any template; refused rather
/// than compared shallowly).
pub(crate) fn canon_body(f: &KernelIr) -> Option<String> {
    if !f.has_body {
        return None;
    }
    // Labels enter as their targets: their names carry the function's
    // position in the module, and `-lineinfo` adds an unused
    // `$L__func_end` label.
    let mut s = format!("{:?}\n{:?}\n", f.params, f.regs);
    for d in &f.instrs {
        if matches!(d.instr, Instr::Call { .. } | Instr::Unknown { .. }) {
            return None;
        }
        let stripped = InstrData {
            guard: d.guard,
            instr: d.instr.clone(),
            operands: d.operands.iter().map(|o| without_var_ids(o, f)).collect(),
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
        for d in k
            .instrs
            .iter()
            .filter(|d| crate::operands::writes(d).contains(&r))
        {
            if vars_named(d)
                .iter()
                .any(|v| k.vars[v.index()].scope == ptxeq_ir::VarScope::Module)
            {
                return true;
            }
            stack.extend(crate::operands::reads(d));
        }
    }
    false
}
