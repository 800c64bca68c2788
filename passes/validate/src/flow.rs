//! The dataflow: a forward fixpoint over each function's CFG on a
//! per-slot state, and summaries of called `.func`s.
//!
//! Per program point every slot carries two facts, both encoded so that the
//! join is plain `min` (`NONE` = `u32::MAX` is the bottom):
//!
//! - `data`: the slot may hold tensor data; the value is the instruction that
//!   produced it (the def the explanation starts from), or [`ENTRY`] for a
//!   callee param that receives data from its caller;
//! - `ptr`: the slot may hold a pointer derived from a tensor param; the
//!   value is that param's index in the *entry* kernel (for the message).
//!
//! Transfer functions look only at whether a source is `NONE`, and write
//! either `NONE` or their own index, so they are monotone and the fixpoint
//! terminates (each cell only ever decreases).
//!
//! The analysis is flow-sensitive: an unguarded write replaces a slot's
//! facts, so a register that held data and is then reused for an index is
//! clean again. A guarded write joins with the old facts, and a data guard
//! makes the written value data (`@p mov r, 1` on a data `p` is `select(p,
//! 1, r)`: data flow, not control flow).

use std::collections::HashMap;
use std::rc::Rc;

use ptxeq_ir::KernelIr;

use crate::cfg::Cfg;
use crate::explain::{self, Found};
use crate::plan::{self, Callee, Control, Load, Slots, Step};
use crate::{MAX_STATE_CELLS, StructuredProblem, StructuredReport};

/// Not data / not a tensor pointer.
pub(crate) const NONE: u32 = u32::MAX;
/// Data that entered the function through a parameter.
pub(crate) const ENTRY: u32 = u32::MAX - 1;

/// Calls nested deeper than this are treated as black boxes.
const MAX_CALL_DEPTH: usize = 32;

/// Facts of every slot at one program point.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct State {
    pub data: Vec<u32>,
    pub ptr: Vec<u32>,
}

impl State {
    fn new(n: usize) -> State {
        State {
            data: vec![NONE; n],
            ptr: vec![NONE; n],
        }
    }

    /// `self ⊔= other`; whether anything changed.
    fn join_from(&mut self, other: &State) -> bool {
        let mut changed = false;
        for (a, &b) in self.data.iter_mut().zip(&other.data) {
            if b < *a {
                *a = b;
                changed = true;
            }
        }
        for (a, &b) in self.ptr.iter_mut().zip(&other.ptr) {
            if b < *a {
                *a = b;
                changed = true;
            }
        }
        changed
    }
}

/// Why an instruction's result is data: the explanation walks these back
/// from a sink to the load.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Wit {
    /// Loads tensor memory through a pointer derived from entry param
    /// `param`.
    TensorLoad { param: u32 },
    /// A call whose callee returns data.
    CallReturn,
    /// Computed from `slot`, which held data defined at `def`.
    From { slot: u32, def: u32 },
}

/// One arg / return value at a call boundary: (data, entry tensor param).
type Bits = (bool, u32);

/// What a call does to its return values, plus the problems in the callee.
#[derive(Debug, Default)]
struct Summary {
    rets: Vec<Bits>,
    problems: Vec<StructuredProblem>,
    skipped: Option<String>,
}

/// Analysis-wide context: callee lookup, summary memo, call stack.
struct Ctx<'k, 'f> {
    funcs: &'f dyn Fn(&str) -> Option<&'k KernelIr>,
    entry: &'k KernelIr,
    memo: HashMap<(String, Vec<Bits>), Rc<Summary>>,
    stack: Vec<String>,
}

/// The outcome of one function under one input.
struct Outcome {
    /// Joined state at every return point (`None`: never returns).
    ret: Option<State>,
    problems: Vec<StructuredProblem>,
    skipped: Option<String>,
}

pub(crate) fn validate_entry<'k>(
    kernel: &'k KernelIr,
    funcs: &dyn Fn(&str) -> Option<&'k KernelIr>,
    tensor_params: &[bool],
) -> StructuredReport {
    let mut ctx = Ctx {
        funcs,
        entry: kernel,
        memo: HashMap::new(),
        stack: vec![kernel.name.clone()],
    };
    let slots = Slots::of(kernel);
    let mut init = State::new(slots.len());
    for (p, _) in kernel.args() {
        if tensor_params.get(p.index()).copied().unwrap_or(false)
            && let Some(s) = slots.param(p.0)
        {
            init.ptr[s as usize] = p.0;
        }
    }
    let out = analyze(&mut ctx, kernel, init);
    let mut problems = out.problems;
    problems.sort_by_key(position);
    let mut seen = std::collections::HashSet::new();
    problems.retain(|p| seen.insert((p.function.clone(), p.instr)));
    for p in &mut problems {
        if let Some(first) = p.calls.first() {
            let path: Vec<String> = p.calls.iter().map(u32::to_string).collect();
            let how = if p.calls.len() == 1 {
                format!("called at instruction {first} of `{}`", kernel.name)
            } else {
                format!(
                    "reached through the calls at {} from `{}`",
                    path.join(" -> "),
                    kernel.name
                )
            };
            p.message = format!("in .func `{}` ({how}): {}", p.function, p.message);
        }
    }
    StructuredReport {
        problems,
        skipped: out.skipped,
    }
}

/// Program position in the entry: a callee's problem sits at its call
/// site (`[call, instr]` sorts after `[call]` and before `[call + 1]`).
fn position(p: &StructuredProblem) -> Vec<u32> {
    let mut key = p.calls.clone();
    key.push(p.instr);
    key
}

/// Runs the fixpoint over `f` from `init`, then one more pass that
/// collects problems, explanations and return facts.
fn analyze<'k>(ctx: &mut Ctx<'k, '_>, f: &'k KernelIr, init: State) -> Outcome {
    let slots = Slots::of(f);
    let cfg = Cfg::build(f);
    let nb = cfg.blocks.len();
    let mut out = Outcome {
        ret: None,
        problems: Vec::new(),
        skipped: None,
    };
    let Some(&entry) = cfg.rpo.first() else {
        // No instructions: falling off the (empty) body returns at once.
        out.ret = Some(init);
        return out;
    };
    if nb.saturating_mul(slots.len()) > MAX_STATE_CELLS {
        out.skipped = Some(format!(
            "static validation of `{}` skipped: {} blocks x {} registers exceed the limit of {} state cells",
            f.name,
            nb,
            slots.len(),
            MAX_STATE_CELLS
        ));
        return out;
    }
    let steps = plan::plan_function(f, &slots);

    let mut ins: Vec<Option<State>> = vec![None; nb];
    let mut dirty = vec![false; nb];
    ins[entry as usize] = Some(init);
    dirty[entry as usize] = true;
    loop {
        let mut progressed = false;
        for &b in &cfg.rpo {
            let b = b as usize;
            if !dirty[b] {
                continue;
            }
            dirty[b] = false;
            progressed = true;
            let Some(mut st) = ins[b].clone() else {
                continue;
            };
            let block = &cfg.blocks[b];
            for i in block.start..block.end {
                transfer(ctx, &steps, &mut st, i, None);
            }
            for &s in &block.succs {
                let s = s as usize;
                match &mut ins[s] {
                    Some(x) => {
                        if x.join_from(&st) {
                            dirty[s] = true;
                        }
                    }
                    None => {
                        ins[s] = Some(st.clone());
                        dirty[s] = true;
                    }
                }
            }
        }
        if !progressed {
            break;
        }
    }

    // Final pass over the fixpoint.
    let mut fin = Final {
        wit: vec![None; f.instrs.len()],
        callee_problems: Vec::new(),
        skipped: None,
    };
    let mut found: Vec<Found> = Vec::new();
    for &b in &cfg.rpo {
        let b = b as usize;
        let Some(mut st) = ins[b].clone() else {
            continue;
        };
        let block = &cfg.blocks[b];
        for i in block.start..block.end {
            let step = &steps[i as usize];
            if let Some(sink) = step.sinks.iter().find(|s| st.data[s.slot as usize] != NONE) {
                found.push(Found {
                    instr: i,
                    sink: *sink,
                    def: st.data[sink.slot as usize],
                });
            }
            if step.control == Control::Ret {
                join_ret(&mut out.ret, &st);
            }
            transfer(ctx, &steps, &mut st, i, Some(&mut fin));
        }
        if block.falls_off {
            join_ret(&mut out.ret, &st);
        }
    }
    let names = explain::Names {
        f,
        entry: ctx.entry,
        slots: &slots,
    };
    out.problems = explain::problems(&names, &cfg, &fin.wit, found);
    out.problems.extend(fin.callee_problems);
    out.skipped = fin.skipped;
    out
}

fn join_ret(ret: &mut Option<State>, st: &State) {
    match ret {
        Some(r) => {
            r.join_from(st);
        }
        None => *ret = Some(st.clone()),
    }
}

/// What the final pass records besides the state.
struct Final {
    wit: Vec<Option<Wit>>,
    callee_problems: Vec<StructuredProblem>,
    skipped: Option<String>,
}

fn transfer<'k>(
    ctx: &mut Ctx<'k, '_>,
    steps: &[Step],
    st: &mut State,
    i: u32,
    fin: Option<&mut Final>,
) {
    let step = &steps[i as usize];
    let guard_def = step.guard.map_or(NONE, |g| st.data[g as usize]);
    let guarded = step.guard.is_some();
    if let Control::Call(cp) = &step.control {
        let args: Vec<Bits> = cp
            .args
            .iter()
            .map(|a| {
                a.map_or((false, NONE), |s| {
                    (st.data[s as usize] != NONE, st.ptr[s as usize])
                })
            })
            .collect();
        let sum = ctx.call(&cp.callee, args, cp.rets.len());
        let mut any_ret_data = false;
        for (k, r) in cp.rets.iter().enumerate() {
            let Some(s) = r else { continue };
            let (d, p) = sum.rets.get(k).copied().unwrap_or((false, NONE));
            any_ret_data |= d;
            let data = if d || guard_def != NONE { i } else { NONE };
            write(st, *s as usize, data, p, guarded);
        }
        if let Some(fin) = fin {
            if any_ret_data {
                fin.wit[i as usize] = Some(Wit::CallReturn);
            } else if guard_def != NONE {
                fin.wit[i as usize] = step.guard.map(|g| Wit::From {
                    slot: g,
                    def: guard_def,
                });
            }
            for p in &sum.problems {
                let mut p = p.clone();
                p.calls.insert(0, i);
                fin.callee_problems.push(p);
            }
            if fin.skipped.is_none() {
                fin.skipped.clone_from(&sum.skipped);
            }
        }
        return;
    }

    let mut wit: Option<Wit> = None;
    let mut ptr = NONE;
    match step.load {
        Load::Memory { base, tensor_space } => {
            if let Some(b) = base {
                let b = b as usize;
                if tensor_space && st.ptr[b] != NONE {
                    wit = Some(Wit::TensorLoad { param: st.ptr[b] });
                } else if st.data[b] != NONE {
                    wit = Some(Wit::From {
                        slot: b as u32,
                        def: st.data[b],
                    });
                }
            }
        }
        Load::Slot(c) => {
            let c = c as usize;
            if st.data[c] != NONE {
                wit = Some(Wit::From {
                    slot: c as u32,
                    def: st.data[c],
                });
            }
            ptr = st.ptr[c];
        }
        Load::None => {}
    }
    for &s in &step.srcs {
        let s = s as usize;
        if wit.is_none() && st.data[s] != NONE {
            wit = Some(Wit::From {
                slot: s as u32,
                def: st.data[s],
            });
        }
        if step.ptr_flows {
            ptr = ptr.min(st.ptr[s]);
        }
    }
    if wit.is_none() && guard_def != NONE {
        wit = step.guard.map(|g| Wit::From {
            slot: g,
            def: guard_def,
        });
    }
    let data = if wit.is_some() { i } else { NONE };
    for w in &step.dsts {
        write(st, w.slot as usize, data, ptr, w.weak || guarded);
    }
    if let Some(fin) = fin
        && !step.dsts.is_empty()
    {
        fin.wit[i as usize] = wit;
    }
}

fn write(st: &mut State, s: usize, data: u32, ptr: u32, weak: bool) {
    if weak {
        st.data[s] = st.data[s].min(data);
        st.ptr[s] = st.ptr[s].min(ptr);
    } else {
        st.data[s] = data;
        st.ptr[s] = ptr;
    }
}

impl<'k> Ctx<'k, '_> {
    /// The summary of calling `callee` with `args`; a black box (every
    /// return depends on every argument, none is a tensor pointer) for
    /// indirect, body-less, unknown, recursive or too deeply nested callees.
    fn call(&mut self, callee: &Callee, args: Vec<Bits>, n_rets: usize) -> Rc<Summary> {
        let black_box = |args: &[Bits]| {
            let any = args.iter().any(|a| a.0);
            Rc::new(Summary {
                rets: vec![(any, NONE); n_rets],
                ..Summary::default()
            })
        };
        let Callee::Direct(name) = callee else {
            return black_box(&args);
        };
        let Some(k) = (self.funcs)(name) else {
            return black_box(&args);
        };
        if !k.has_body || self.stack.contains(name) || self.stack.len() > MAX_CALL_DEPTH {
            return black_box(&args);
        }
        let key = (name.clone(), args);
        if let Some(s) = self.memo.get(&key) {
            return s.clone();
        }
        let slots = Slots::of(k);
        let param_slot = |i: usize| -> Option<u32> {
            let p = k.params.get(i)?;
            match p.reg {
                Some(r) => slots.reg(r),
                None => slots.param(i as u32),
            }
        };
        let mut init = State::new(slots.len());
        for ((pid, _), &(d, p)) in k.args().zip(&key.1) {
            if let Some(s) = param_slot(pid.index()) {
                init.data[s as usize] = if d { ENTRY } else { NONE };
                init.ptr[s as usize] = p;
            }
        }
        self.stack.push(name.clone());
        let out = analyze(self, k, init);
        self.stack.pop();
        let rets = k
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_return)
            .map(|(i, _)| match (&out.ret, param_slot(i)) {
                (Some(st), Some(s)) => (st.data[s as usize] != NONE, st.ptr[s as usize]),
                _ => (false, NONE),
            })
            .collect();
        let sum = Rc::new(Summary {
            rets,
            problems: out.problems,
            skipped: out.skipped,
        });
        self.memo.insert(key, sum.clone());
        sum
    }
}
