//! Data movement, conversion, memory access and atomics.

use super::{Mods, Res, check_ops};
use crate::instr::{AtomMods, AtomOp, Instr, MemOp, PolicyKind, PrefetchLevel};
use crate::operand::Operand;
use crate::types::{CacheHint, CacheOp, MemSem, Rounding, ScalarType, Scope, StateSpace};

fn space(s: &str) -> Option<StateSpace> {
    StateSpace::parse(s)
        .filter(|sp| !matches!(sp, StateSpace::Reg | StateSpace::Sreg | StateSpace::Generic))
}

fn hints(m: &mut Mods<'_>) -> Vec<CacheHint> {
    let mut h = Vec::new();
    while let Some(x) = m.take(CacheHint::parse) {
        h.push(x);
    }
    h.sort();
    h
}

/// Memory-ordering and scope modifiers. On `ld`/`st` a scope needs an
/// ordering other than weak/volatile, and relaxed/acquire/release need a
/// scope. Atomics take either alone (`atom.global.cta.add`: relaxed by
/// default; `atom.acquire.add`: scope `.gpu` by default).
fn sem_scope(m: &mut Mods<'_>, atomic: bool) -> Result<(Option<MemSem>, Option<Scope>), String> {
    let sem = m.take(MemSem::parse);
    let scope = m.take(Scope::parse);
    if atomic {
        return Ok((sem, scope));
    }
    match (sem, scope) {
        (Some(MemSem::Relaxed | MemSem::Acquire | MemSem::Release | MemSem::AcqRel), None) => Err(
            format!("`.{}` needs a scope", sem.map(MemSem::as_str).unwrap_or("")),
        ),
        (None | Some(MemSem::Weak | MemSem::Volatile), Some(sc)) => {
            Err(format!("scope `.{sc}` without an ordering"))
        }
        _ => Ok((sem, scope)),
    }
}

fn mem_op(m: &mut Mods<'_>, load: bool) -> Result<MemOp, String> {
    let (sem, scope) = sem_scope(m, false)?;
    if let Some(s) = sem {
        let ok = match s {
            MemSem::Acquire => load,
            MemSem::Release => !load,
            MemSem::AcqRel | MemSem::Sc => false,
            _ => true,
        };
        if !ok {
            return Err(format!(
                "`.{s}` not accepted on `{}`",
                if load { "ld" } else { "st" }
            ));
        }
    }
    let sp = m.take(space).unwrap_or(StateSpace::Generic);
    let cache = m.take(|s| {
        CacheOp::parse(s).filter(|c| {
            if load {
                matches!(
                    c,
                    CacheOp::Ca | CacheOp::Cg | CacheOp::Cs | CacheOp::Lu | CacheOp::Cv
                )
            } else {
                matches!(c, CacheOp::Wb | CacheOp::Cg | CacheOp::Cs | CacheOp::Wt)
            }
        })
    });
    let nc = load && m.flag("nc");
    if nc && sp != StateSpace::Global {
        return Err("`.nc` needs `.global`".into());
    }
    let hints = hints(m);
    let vector = m.vector();
    let ty = m.one_type(|_| true)?;
    Ok(MemOp {
        space: sp,
        sem,
        scope,
        cache,
        hints,
        vector,
        ty,
        nc,
    })
}

/// `.vN` accesses move a brace vector of exactly N elements; scalar ones a
/// single value (possibly in braces).
fn vector_len_ok(vector: Option<u8>, data: Option<&Operand>) -> Result<(), String> {
    match (vector, data) {
        (Some(n), Some(Operand::Vector(v))) if v.len() != usize::from(n) => Err(format!(
            "operands: `.v{n}` needs {n} vector elements, found {}",
            v.len()
        )),
        (Some(n), Some(o)) if !matches!(o, Operand::Vector(_)) => {
            Err(format!("operands: `.v{n}` needs a brace vector"))
        }
        // Triton writes scalar accesses as `ld.global.b32 { %r1 }, [..]`.
        (None, Some(Operand::Vector(v))) if v.len() != 1 => {
            Err("operands: brace vector without `.vN`".into())
        }
        _ => Ok(()),
    }
}

/// Operand signatures with an optional trailing cache-policy operand when
/// an `L2::cache_hint` was given.
fn with_policy<'a>(hints: &[CacheHint], base: &'a str, with: &'a str) -> Vec<&'a str> {
    if hints.contains(&CacheHint::L2CacheHint) {
        vec![with]
    } else {
        vec![base]
    }
}

pub(super) fn decode(opcode: &str, m: &mut Mods<'_>, ops: Vec<Operand>) -> Res {
    let instr = match opcode {
        "mov" => {
            let ty = m.one_type(|_| true)?;
            check_ops(&ops, &["dv"])?;
            Instr::Mov { ty }
        }
        "cvt" => {
            let rnd = m.take(Rounding::parse);
            let ftz = m.flag("ftz");
            let sat = m.flag("sat");
            let relu = m.flag("relu");
            let satfinite = m.flag("satfinite");
            let tys = m.n_types(2)?;
            check_ops(&ops, &["dv", "dvv"])?;
            Instr::Cvt {
                dst_ty: tys[0],
                src_ty: tys[1],
                rnd,
                ftz,
                sat,
                relu,
                satfinite,
            }
        }
        "cvta" => {
            let to = m.flag("to");
            let sp = m.take_req("state space", space)?;
            let ty = m.one_type(|t| matches!(t, ScalarType::U32 | ScalarType::U64))?;
            check_ops(&ops, &["dv"])?;
            Instr::Cvta { to, space: sp, ty }
        }
        "ld" | "ldu" => {
            let op = mem_op(m, true)?;
            check_ops(&ops, &with_policy(&op.hints, "da", "dav"))?;
            vector_len_ok(op.vector, ops.first())?;
            if opcode == "ld" {
                Instr::Ld(op)
            } else {
                Instr::Ldu(op)
            }
        }
        "st" => {
            let op = mem_op(m, false)?;
            check_ops(&ops, &with_policy(&op.hints, "av", "avv"))?;
            vector_len_ok(op.vector, ops.get(1))?;
            Instr::St(op)
        }
        "prefetch" | "prefetchu" => {
            let uniform = opcode == "prefetchu";
            let sp = m
                .take(|s| {
                    StateSpace::parse(s)
                        .filter(|s| matches!(s, StateSpace::Global | StateSpace::Local))
                })
                .unwrap_or(StateSpace::Generic);
            let level = m.take_req("prefetch level", PrefetchLevel::parse)?;
            if uniform && (level != PrefetchLevel::L1 || sp != StateSpace::Generic) {
                return Err("`prefetchu` takes only `.L1`".into());
            }
            check_ops(&ops, &["a"])?;
            Instr::Prefetch {
                space: sp,
                level,
                uniform,
            }
        }
        "createpolicy" => {
            // The priorities only steer L2 eviction: accepted, not kept.
            let prio = |m: &mut Mods<'_>| {
                while m
                    .take(|s| {
                        matches!(
                            s,
                            "L2::evict_last"
                                | "L2::evict_normal"
                                | "L2::evict_first"
                                | "L2::evict_unchanged"
                        )
                        .then_some(())
                    })
                    .is_some()
                {}
            };
            let kind = if m.flag("range") {
                m.flag("global");
                prio(m);
                check_ops(&ops, &["davv"])?;
                PolicyKind::Range
            } else if m.flag("fractional") {
                prio(m);
                check_ops(&ops, &["d", "dv"])?;
                PolicyKind::Fractional
            } else if m.flag("cvt") {
                m.require("L2")?;
                check_ops(&ops, &["dv"])?;
                PolicyKind::Cvt
            } else {
                return Err("`createpolicy` needs `.range`, `.fractional` or `.cvt`".into());
            };
            m.one_type(|t| t == ScalarType::B64)?;
            Instr::CreatePolicy(kind)
        }
        "isspacep" => {
            let sp = m.take_req("state space", space)?;
            check_ops(&ops, &["dv"])?;
            Instr::Isspacep { space: sp }
        }
        "mapa" | "getctarank" => {
            let sp = m.take(space).unwrap_or(StateSpace::Generic);
            let ty = m.one_type(|t| matches!(t, ScalarType::U32 | ScalarType::U64))?;
            if opcode == "mapa" {
                check_ops(&ops, &["dvv"])?;
                Instr::Mapa { space: sp, ty }
            } else {
                check_ops(&ops, &["dv"])?;
                Instr::Getctarank { space: sp, ty }
            }
        }
        "atom" | "red" => {
            let (sem, scope) = sem_scope(m, true)?;
            if matches!(
                sem,
                Some(MemSem::Weak | MemSem::Volatile | MemSem::Mmio | MemSem::Sc)
            ) {
                return Err("ordering not accepted on atomics".into());
            }
            let sp = m
                .take(|s| {
                    StateSpace::parse(s).filter(|s| {
                        matches!(
                            s,
                            StateSpace::Global | StateSpace::Shared | StateSpace::SharedCluster
                        )
                    })
                })
                .unwrap_or(StateSpace::Generic);
            let op = m.take_req("atomic operation", AtomOp::parse)?;
            let noftz = m.flag("noftz");
            let hints = hints(m);
            let vector = m.vector();
            let ty = m.one_type(|t| t != ScalarType::Pred)?;
            let mods = AtomMods {
                space: sp,
                sem,
                scope,
                op,
                vector,
                ty,
                noftz,
                hints,
            };
            let cas = op == AtomOp::Cas;
            if opcode == "atom" {
                let sigs: &[&str] = match (cas, mods.hints.contains(&CacheHint::L2CacheHint)) {
                    (false, false) => &["dav"],
                    (false, true) => &["davv"],
                    (true, false) => &["davv"],
                    (true, true) => &["davvv"],
                };
                check_ops(&ops, sigs)?;
                vector_len_ok(mods.vector, ops.first())?;
                vector_len_ok(mods.vector, ops.get(2))?;
                Instr::Atom(mods)
            } else {
                if cas {
                    return Err("`red` has no `.cas`".into());
                }
                check_ops(&ops, &with_policy(&mods.hints, "av", "avv"))?;
                vector_len_ok(mods.vector, ops.get(1))?;
                Instr::Red(mods)
            }
        }
        _ => return Err(format!("unsupported opcode `{opcode}`")),
    };
    Ok((instr, ops))
}
