//! From raw findings (an instruction, the operand that is data, the def that
//! made it data) to [`StructuredProblem`]s: the problem kind (is this branch
//! a loop bound?), the def-use chain back to the load, and the message.

use ptxeq_ir::{Instr, KernelIr, Operand, StateSpace, Symbol};

use crate::cfg::{Cfg, Loop, dominates};
use crate::flow::{ENTRY, NONE, Wit};
use crate::plan::{Access, GuardOf, Sink, SinkWhat, SlotKind, Slots};
use crate::{MAX_CHAIN, ProblemKind, StructuredProblem};

/// A sink operand that holds data at instruction `instr`; `def` is the
/// slot's data fact there (an instruction index or [`ENTRY`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Found {
    pub instr: u32,
    pub sink: Sink,
    pub def: u32,
}

/// What messages need to name things.
pub(crate) struct Names<'a> {
    pub f: &'a KernelIr,
    pub entry: &'a KernelIr,
    pub slots: &'a Slots,
}

/// Where a chain starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Root {
    TensorLoad {
        instr: u32,
        param: u32,
    },
    CallReturn {
        instr: u32,
    },
    /// Data entering the function through the param held in `slot`.
    Param {
        slot: u32,
    },
    Unknown,
}

/// How a data-dependent conditional branch relates to loops.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum LoopRole {
    BackEdge { header: u32 },
    Exit { header: u32 },
    ZeroTrip { header: u32 },
}

pub(crate) fn problems(
    names: &Names<'_>,
    cfg: &Cfg,
    wit: &[Option<Wit>],
    found: Vec<Found>,
) -> Vec<StructuredProblem> {
    let roles = loop_roles(names.f, cfg, &found);
    found
        .iter()
        .zip(roles)
        .map(|(x, role)| problem(names, wit, x, role))
        .collect()
}

/// Classifies every conditional `bra` among `found` against the loops of
/// the function: back edge, loop exit, or zero-trip test of a loop whose own
/// exit is data-dependent. Dominators are computed only when needed.
fn loop_roles(f: &KernelIr, cfg: &Cfg, found: &[Found]) -> Vec<Option<LoopRole>> {
    let is_branch = |x: &Found| {
        x.sink.what == SinkWhat::Guard(GuardOf::Branch)
            && matches!(
                f.instrs.get(x.instr as usize).map(|d| &d.instr),
                Some(Instr::Bra { .. })
            )
    };
    let mut roles = vec![None; found.len()];
    if !found.iter().any(is_branch) {
        return roles;
    }
    let idom = cfg.dominators();
    let loops = cfg.loops(&idom);
    let block_start = |b: u32| cfg.blocks[b as usize].start;
    let mut data_loops: Vec<&Loop> = Vec::new();
    for (k, x) in found.iter().enumerate() {
        if !is_branch(x) {
            continue;
        }
        let b = cfg.block_of[x.instr as usize];
        let block = &cfg.blocks[b as usize];
        if let Some(&h) = block.succs.iter().find(|&&s| dominates(&idom, s, b)) {
            roles[k] = Some(LoopRole::BackEdge {
                header: block_start(h),
            });
            if let Some(l) = loops.iter().find(|l| l.header == h) {
                data_loops.push(l);
            }
            continue;
        }
        // The innermost loop that this branch leaves.
        let exited = loops
            .iter()
            .filter(|l| {
                l.contains(b) && (block.falls_off || block.succs.iter().any(|&s| !l.contains(s)))
            })
            .min_by_key(|l| l.body.iter().filter(|&&x| x).count());
        if let Some(l) = exited {
            roles[k] = Some(LoopRole::Exit {
                header: block_start(l.header),
            });
            data_loops.push(l);
        }
    }
    // Zero-trip tests: a data branch outside a data-bounded loop that
    // dominates the loop and jumps straight to where the loop exits to
    // (nvcc's rotated-loop guard `if (n < 1) goto after_loop`).
    for (k, x) in found.iter().enumerate() {
        if !is_branch(x) || roles[k].is_some() {
            continue;
        }
        let b = cfg.block_of[x.instr as usize];
        let succs = &cfg.blocks[b as usize].succs;
        let guarded = data_loops.iter().find(|l| {
            !l.contains(b)
                && dominates(&idom, b, l.header)
                && succs.iter().any(|&s| {
                    !l.contains(s)
                        && cfg.preds[s as usize]
                            .iter()
                            .any(|&p| p != b && l.contains(p))
                })
        });
        if let Some(l) = guarded {
            roles[k] = Some(LoopRole::ZeroTrip {
                header: block_start(l.header),
            });
        }
    }
    roles
}

fn problem(
    names: &Names<'_>,
    wit: &[Option<Wit>],
    x: &Found,
    role: Option<LoopRole>,
) -> StructuredProblem {
    let f = names.f;
    let i = x.instr;
    let mnem = mnemonic(f, i);
    let at = match source_line(f, i) {
        Some(line) => format!("instruction {i} ({line})"),
        None => format!("instruction {i}"),
    };
    let (kind, headline) = headline(x.sink.what, role, &at, &mnem);
    let (chain, root) = walk(wit, x.sink.slot, x.def, i, f.instrs.len());
    let subject = format!("{} {}", subject(x.sink.what), slot_name(names, x.sink.slot));
    let provenance = provenance(names, x.def, root);
    let int_note = match root {
        Root::TensorLoad { instr, .. } if loads_integers(f, instr) => match kind {
            ProblemKind::Branch | ProblemKind::LoopBound => {
                " (integer tensor data used as a branch condition)"
            }
            ProblemKind::Address => " (integer tensor data used as an address)",
            _ => " (integer tensor data)",
        },
        _ => "",
    };
    StructuredProblem {
        instr: i,
        function: f.name.clone(),
        calls: Vec::new(),
        kind,
        message: format!("{headline}: {subject} {provenance}{int_note}"),
        origin: match root {
            Root::TensorLoad { instr, .. } => Some(instr),
            _ => None,
        },
        chain,
    }
}

/// Whether instruction `instr` loads signed or unsigned integers (integer
/// tensor data: its values stay exact integers, but still may not decide
/// a branch or an address).
fn loads_integers(f: &KernelIr, instr: u32) -> bool {
    match f.instrs.get(instr as usize).map(|d| &d.instr) {
        Some(Instr::Ld(m) | Instr::Ldu(m)) => m.ty.is_signed() || m.ty.is_unsigned(),
        _ => false,
    }
}

fn headline(what: SinkWhat, role: Option<LoopRole>, at: &str, mnem: &str) -> (ProblemKind, String) {
    use ProblemKind as K;
    match what {
        SinkWhat::Guard(GuardOf::Branch) => match role {
            Some(role) => {
                let (what, h) = match role {
                    LoopRole::BackEdge { header } => ("back-edge branch", header),
                    LoopRole::Exit { header } => ("exit branch", header),
                    LoopRole::ZeroTrip { header } => ("zero-trip test", header),
                };
                (
                    K::LoopBound,
                    format!(
                        "loop bound depends on tensor data at {at} (the {what} of the loop at {h})"
                    ),
                )
            }
            None => (K::Branch, format!("branch at {at} depends on tensor data")),
        },
        SinkWhat::Guard(GuardOf::Call) => (
            K::Branch,
            format!("call at {at} is conditional on tensor data"),
        ),
        SinkWhat::Guard(GuardOf::Ret) => (
            K::Branch,
            format!("early return at {at} depends on tensor data"),
        ),
        SinkWhat::Guard(GuardOf::Exit) => (
            K::Branch,
            format!("early exit at {at} depends on tensor data"),
        ),
        SinkWhat::Guard(GuardOf::Trap) => {
            (K::Branch, format!("trap at {at} depends on tensor data"))
        }
        SinkWhat::Guard(GuardOf::Barrier) => (
            K::BarrierOperand,
            format!(
                "barrier at {at} ({mnem}) is reached under a predicate that depends on tensor data"
            ),
        ),
        SinkWhat::Guard(GuardOf::Collective) => (
            K::ShuffleOperand,
            format!(
                "warp collective at {at} ({mnem}) runs under a predicate that depends on tensor data"
            ),
        ),
        SinkWhat::BranchIndex => (
            K::Branch,
            format!("indexed branch at {at} depends on tensor data"),
        ),
        SinkWhat::CallTarget => (
            K::Branch,
            format!("indirect call target at {at} depends on tensor data"),
        ),
        SinkWhat::Address { space, access } => {
            let access = match access {
                Access::Load => "load",
                Access::Store => "store",
                Access::Atomic => "atomic",
                Access::Copy => "async copy",
                Access::Barrier => "mbarrier operation",
            };
            (
                K::Address,
                format!(
                    "{}address depends on tensor data at {at} ({access} {mnem}: a gather/scatter through an index tensor)",
                    space_words(space)
                ),
            )
        }
        SinkWhat::Stride | SinkWhat::CopySize | SinkWhat::BulkOperand | SinkWhat::Descriptor => (
            K::Address,
            format!("address depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::BarrierId => (
            K::BarrierOperand,
            format!("barrier id depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::BarrierCount => (
            K::BarrierOperand,
            format!("barrier thread count depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::WarpSyncMask => (
            K::BarrierOperand,
            format!("warp barrier member mask depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::ShuffleLane => (
            K::ShuffleOperand,
            format!("shuffle source lane depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::ShuffleClamp => (
            K::ShuffleOperand,
            format!("shuffle clamp depends on tensor data at {at} ({mnem})"),
        ),
        SinkWhat::MemberMask => (
            K::ShuffleOperand,
            format!("warp collective member mask depends on tensor data at {at} ({mnem})"),
        ),
    }
}

fn space_words(s: StateSpace) -> &'static str {
    match s {
        StateSpace::Shared => "shared-memory ",
        StateSpace::SharedCluster => "cluster shared-memory ",
        StateSpace::Global => "global-memory ",
        StateSpace::Local => "local-memory ",
        StateSpace::Const => "constant-memory ",
        StateSpace::Param => "param-space ",
        _ => "",
    }
}

fn subject(what: SinkWhat) -> &'static str {
    match what {
        SinkWhat::Guard(_) => "its predicate",
        SinkWhat::BranchIndex => "its index",
        SinkWhat::CallTarget => "its target",
        SinkWhat::Address { .. } => "its address register",
        SinkWhat::Stride => "its stride",
        SinkWhat::CopySize => "its source size",
        SinkWhat::BulkOperand => "its operand",
        SinkWhat::Descriptor => "its matrix descriptor",
        SinkWhat::BarrierId => "its barrier id",
        SinkWhat::BarrierCount => "its thread count",
        SinkWhat::WarpSyncMask | SinkWhat::MemberMask => "its member mask",
        SinkWhat::ShuffleLane => "its source lane",
        SinkWhat::ShuffleClamp => "its clamp value",
    }
}

/// Walks witnesses back from `def` (held in `slot` at the sink `sink`) to
/// the root; returns the chain root → sink (shortened to [`MAX_CHAIN`]).
fn walk(wit: &[Option<Wit>], slot: u32, def: u32, sink: u32, n: usize) -> (Vec<u32>, Root) {
    let mut back = Vec::new();
    let mut seen = vec![false; n];
    let mut cur = def;
    let mut last_slot = slot;
    let root = loop {
        if cur == ENTRY {
            break Root::Param { slot: last_slot };
        }
        if cur == NONE || cur as usize >= n || seen[cur as usize] {
            break Root::Unknown;
        }
        seen[cur as usize] = true;
        back.push(cur);
        match wit[cur as usize] {
            Some(Wit::TensorLoad { param }) => break Root::TensorLoad { instr: cur, param },
            Some(Wit::CallReturn) => break Root::CallReturn { instr: cur },
            Some(Wit::From { slot, def }) => {
                last_slot = slot;
                cur = def;
            }
            None => break Root::Unknown,
        }
    };
    back.reverse();
    if back.last() != Some(&sink) {
        back.push(sink);
    }
    if back.len() > MAX_CHAIN {
        let half = MAX_CHAIN / 2;
        let tail = back.split_off(back.len() - half);
        back.truncate(half);
        back.extend(tail);
    }
    (back, root)
}

fn provenance(names: &Names<'_>, def: u32, root: Root) -> String {
    let f = names.f;
    if def == ENTRY {
        return match root {
            Root::Param { slot } => format!(
                "arrives through parameter `{}`, which receives tensor data from the caller",
                param_name(names, slot)
            ),
            _ => "arrives through a parameter that receives tensor data from the caller".into(),
        };
    }
    let root_desc = match root {
        Root::TensorLoad { instr, param } if instr == def => {
            return format!("is loaded at {def} ({})", load_desc(names, instr, param));
        }
        Root::CallReturn { instr } if instr == def => {
            return format!(
                "is returned by the call at {def} ({}), which depends on tensor data",
                callee_name(f, instr)
            );
        }
        Root::TensorLoad { instr, param } => format!(
            "tensor data loaded at {instr} ({})",
            load_desc(names, instr, param)
        ),
        Root::CallReturn { instr } => format!(
            "the result of the call at {instr} ({}), which depends on tensor data",
            callee_name(f, instr)
        ),
        Root::Param { slot } => format!(
            "parameter `{}`, which receives tensor data from the caller",
            param_name(names, slot)
        ),
        Root::Unknown => "tensor data".into(),
    };
    format!(
        "is computed ({} at {def}) from {root_desc}",
        mnemonic(f, def)
    )
}

fn load_desc(names: &Names<'_>, instr: u32, param: u32) -> String {
    let mut d = mnemonic(names.f, instr);
    if let Some(p) = names.entry.params.get(param as usize) {
        d += &format!(" through tensor param {param} `{}`", p.name);
    }
    if let Some(line) = source_line(names.f, instr) {
        d += &format!(", {line}");
    }
    d
}

/// `file:line` of the user code an instruction comes from (the outermost
/// call site of inlined code), when the PTX has `.loc`.
pub(crate) fn source_line(f: &KernelIr, i: u32) -> Option<String> {
    let loc = f.instrs.get(i as usize)?.loc.as_ref()?.outermost();
    if loc.line == 0 {
        return None;
    }
    let file = f.file_path(loc.file)?;
    let file = file.rsplit('/').next().unwrap_or(file);
    Some(format!("{file}:{}", loc.line))
}

fn callee_name(f: &KernelIr, instr: u32) -> String {
    match f.instrs.get(instr as usize).and_then(|d| d.operands.get(1)) {
        Some(Operand::Symbol {
            sym: Symbol::Func(name),
            ..
        }) => format!("to `{name}`"),
        _ => "indirect".into(),
    }
}

fn mnemonic(f: &KernelIr, i: u32) -> String {
    f.instrs
        .get(i as usize)
        .map_or_else(|| "?".into(), |d| d.instr.mnemonic())
}

fn slot_name(names: &Names<'_>, slot: u32) -> String {
    let f = names.f;
    match names.slots.kind(slot) {
        SlotKind::Reg(r) => f
            .regs
            .get(r as usize)
            .map_or_else(|| format!("register #{r}"), |r| r.name.clone()),
        SlotKind::Cc => "the carry flag".into(),
        SlotKind::Var(v) => f
            .vars
            .get(v as usize)
            .map_or_else(|| format!("variable #{v}"), |v| v.name.clone()),
        SlotKind::Param(p) => f
            .params
            .get(p as usize)
            .map_or_else(|| format!("param #{p}"), |p| p.name.clone()),
    }
}

/// The name of the param a slot holds: a `.param` param, or the register
/// of a `.reg` param.
fn param_name(names: &Names<'_>, slot: u32) -> String {
    let f = names.f;
    match names.slots.kind(slot) {
        SlotKind::Param(p) => slot_name(names, names.slots.param(p).unwrap_or(slot)),
        SlotKind::Reg(r) => f
            .params
            .iter()
            .find(|p| p.reg.is_some_and(|x| x.0 == r))
            .map_or_else(|| slot_name(names, slot), |p| p.name.clone()),
        _ => slot_name(names, slot),
    }
}
