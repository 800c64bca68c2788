//! The ticket pattern: CTAs that synchronise through one global atomic.
//!
//! Every CTA of the grid does one atomic read-modify-write on the ticket
//! word (e.g. `atomicInc(&count, gridDim.x)`) and branches on the value it
//! returned. Over all schedules the RMWs on the word are totally ordered
//! (coherence): the CTA at *position* `p` of that order sees the start
//! value updated `p` times. A CTA's behaviour therefore depends on its
//! position, and the rest of this module is about which positions and
//! orders to run and what they prove.
//!
//! **Orders run.** `G` orders, one per CTA `L`: the other CTAs in index
//! order starting after `L`, then `L` (a rotation). Over the `G` rotations
//! every CTA runs at every position exactly once (in rotation `L`, CTA `c`
//! is at position `(c − L − 1) mod G`), so every value any CTA can observe
//! is observed.
//!
//! **Happens-before across CTAs** (the PTX memory model's release/acquire
//! patterns; `docs/semantics.md`). A CTA *releases* at its RMW when the
//! RMW is `.release`/`.acq_rel` (what the thread knows at the RMW) or when
//! the thread executed a `fence.sc`/`fence.acq_rel`/`membar` of GPU scope
//! before it (what it knew at the fence). A CTA *acquires* at its RMW when
//! it is `.acquire`/`.acq_rel`, or at the next such fence of the same
//! thread; a `fence.sc` of any thread ordered after the RMW acquires the
//! releases made through `fence.sc` (their SC order is forced: the other
//! order would put the RMW before a write it observed). What is acquired
//! is the releases of the CTAs before it in the RMW order. Only the *last*
//! position has a fixed set of predecessors (all other CTAs); at any other
//! position every single other CTA may come after it, so for the race
//! judgement a non-last position acquires nothing — exact as long as a
//! CTA behaves the same at every non-last position, which is checked (a
//! CTA that does not is reported: the exploration would be incomplete).
//! The RMWs before the last one on the word are ordered before whatever
//! the last one is ordered before (PTX causality: observation order
//! followed by base causality), so the last CTA may reset the word.
//!
//! **Order dependence.** Outputs of the `G` orders are compared; a
//! difference is an `order-dependent` finding naming the two orders.
//!
//! **Start value.** The word's start value is its initialiser or the
//! content of the tensor element. When it is an input (an `inout` tensor),
//! the exploration runs from 0 and then from start values that make a
//! behaviour seen at one position happen at another (e.g. the value the
//! last CTA saw, seen by the first): a finding there is a real bug with
//! that start value as the witness; no finding over the values tried is
//! `unsupported` (not every start value was explored).

use ptxeq_ir::{AtomOp, FenceKind, MemSem, Scope};

use super::{Execution, execute, finish};
use crate::domain::Domain;
use crate::engine::{Engine, R};
use crate::finding::{AccessKind, AccessRef, Finding, FindingKind, MemLocation};
use crate::input::CtaInput;
use crate::memory::{Init, Slot, store_value};
use crate::race::{Foreign, Kind};
use crate::result::OutputValue;
use crate::value::Value;

use super::GridRun;

/// What to explore: the ticket word and its start value.
pub(crate) struct Plan {
    pub region: u32,
    pub off: u64,
    pub width: u8,
    /// Written into the word before the first CTA (an input's candidate);
    /// `None` keeps the initial content.
    pub start: Option<u64>,
    /// CTAs in the grid (= RMWs on the word).
    pub total: u32,
}

/// What the CTAs run so far left for the next one.
#[derive(Default)]
pub(crate) struct Chain {
    len: u32,
    rel: Foreign,
    rel_sc: Foreign,
}

impl Chain {
    pub(crate) fn absorb(&mut self, tk: &Ticket) {
        self.len += tk.rmws;
        self.rel.join(&tk.my_rel);
        self.rel_sc.join(&tk.my_rel_sc);
    }
}

/// The ticket state of one CTA's engine.
pub(crate) struct Ticket {
    pub region: u32,
    pub off: u64,
    pub width: u8,
    /// RMWs on the word before this CTA.
    base: u32,
    total: u32,
    /// The predecessors' releases (all of them, and those made through
    /// `fence.sc`).
    chain_rel: Foreign,
    chain_rel_sc: Foreign,
    /// This CTA's releases.
    my_rel: Foreign,
    my_rel_sc: Foreign,
    /// Per thread: what its last GPU-scope release fence released (and
    /// whether it was a `fence.sc`).
    fence_rel: Vec<Option<(Foreign, bool)>>,
    /// Per thread: acquired by its relaxed RMW, for its next acquire fence.
    pending_acq: Vec<Option<Foreign>>,
    /// RMWs of this CTA on the word.
    pub rmws: u32,
    /// The value its RMW returned.
    pub seen: Option<u64>,
    /// The thread and instruction of its RMW (reports).
    pub by: Option<(u32, u32)>,
    /// The increment of the update (`inc`: 1, `add` of a constant), for
    /// deriving start values.
    pub step: Option<u64>,
}

impl Ticket {
    pub(crate) fn new(p: &Plan, chain: &Chain, nthreads: usize) -> Ticket {
        Ticket {
            region: p.region,
            off: p.off,
            width: p.width,
            base: chain.len,
            total: p.total,
            chain_rel: chain.rel.clone(),
            chain_rel_sc: chain.rel_sc.clone(),
            my_rel: Foreign::default(),
            my_rel_sc: Foreign::default(),
            fence_rel: vec![None; nthreads],
            pending_acq: vec![None; nthreads],
            rmws: 0,
            seen: None,
            by: None,
            step: None,
        }
    }
}

fn narrow(scope: Option<Scope>) -> bool {
    matches!(scope, Some(Scope::Cta | Scope::Cluster))
}

impl<D: Domain> Engine<'_, D> {
    /// Writes the plan's start value into the ticket word.
    pub(crate) fn set_ticket_start(&mut self, p: &Plan) {
        if let Some(v) = p.start
            && let Some(s) = self.mem.slots_mut(p.region as usize)
            && s.len() >= p.off as usize + p.width as usize
        {
            store_value(s, p.off as usize, &Value::Bits(v), p.width);
        }
    }

    /// Whether (`region`, `off`) is the ticket word being explored.
    pub(crate) fn is_ticket_word(&self, region: u32, off: u64) -> bool {
        self.grid
            .as_ref()
            .and_then(|g| g.ticket.as_ref())
            .is_some_and(|tk| tk.region == region && tk.off == off)
    }

    /// The ticket RMW of thread `t` (already judged by the shadow, memory
    /// not yet updated; `old` is the value it returns): release, acquire
    /// and the causality of the RMWs before the last one.
    pub(crate) fn ticket_rmw(
        &mut self,
        t: u32,
        op: AtomOp,
        sem: Option<MemSem>,
        scope: Option<Scope>,
        old: &Value<D::Val>,
        operand: Option<u64>,
    ) -> R<()> {
        let cta = self.clocks.cta();
        let epoch = self.clocks.epoch(t);
        let instr = self.cur_instr;
        let Some(tk) = self.grid.as_mut().and_then(|g| g.ticket.as_mut()) else {
            return Ok(());
        };
        let position = tk.base + tk.rmws;
        tk.rmws += 1;
        if tk.rmws > 1 {
            return Err(self.unsupported(
                t,
                "grid synchronisation through one atomic per CTA only",
                "a second atomic on the ticket word in one CTA: the orders explored assume one per CTA"
                    .into(),
            ));
        }
        tk.seen = match old {
            Value::Bits(b) => Some(*b),
            _ => None,
        };
        tk.by = Some((t, instr));
        tk.step = match (op, operand) {
            (AtomOp::Inc, _) => Some(1),
            (AtomOp::Add, Some(b)) => Some(b),
            _ => None,
        };
        let last = position + 1 == tk.total;
        let (region, off, width) = (tk.region, tk.off, tk.width);
        if narrow(scope) {
            // A CTA-scoped atomic neither releases to nor acquires from
            // other CTAs (and races with their atomics, race.rs).
            return Ok(());
        }
        if last && let Some(sh) = self.mem.shadow_mut(region as usize) {
            for u in sh.units(off as usize, width as usize) {
                sh.restamp(
                    u,
                    |a| a.kind == Kind::StrongWrite && a.cta != cta,
                    (cta, t, epoch),
                );
            }
        }
        let rel_sem = matches!(sem, Some(MemSem::Release | MemSem::AcqRel));
        let acq_sem = matches!(sem, Some(MemSem::Acquire | MemSem::AcqRel));
        let released = if rel_sem {
            Some((self.clocks.release(t), false))
        } else {
            self.grid
                .as_ref()
                .and_then(|g| g.ticket.as_ref())
                .and_then(|tk| tk.fence_rel[t as usize].clone())
        };
        let Some(tk) = self.grid.as_mut().and_then(|g| g.ticket.as_mut()) else {
            return Ok(());
        };
        if let Some((rel, sc)) = released {
            tk.my_rel.join(&rel);
            if sc {
                tk.my_rel_sc.join(&rel);
            }
        }
        let (acquired, acquired_sc) = if last {
            (tk.chain_rel.clone(), tk.chain_rel_sc.clone())
        } else {
            // Any single other CTA may come after this position.
            (Foreign::default(), Foreign::default())
        };
        if !acq_sem {
            tk.pending_acq[t as usize] = Some(acquired.clone());
        }
        if rel_sem {
            self.clocks.tick(t);
        }
        if acq_sem {
            self.clocks.acquire(t, &acquired);
        }
        self.clocks.add_pending_sc(t, &acquired_sc);
        Ok(())
    }

    /// `fence` / `membar`: in the ticket exploration, the release and
    /// acquire sides of GPU-scope fences; nothing otherwise (within a CTA
    /// fences order nothing that a barrier does not; docs/semantics.md).
    pub(crate) fn fence(&mut self, t: u32, k: &FenceKind) -> R<()> {
        if self.grid.as_ref().is_none_or(|g| g.ticket.is_none()) {
            return Ok(());
        }
        let (acq, rel, sc, scope) = match *k {
            FenceKind::Membar(s) => (true, true, true, s),
            FenceKind::Sem { sem, scope } => (
                matches!(sem, MemSem::AcqRel | MemSem::Sc | MemSem::Acquire),
                matches!(sem, MemSem::AcqRel | MemSem::Sc | MemSem::Release),
                sem == MemSem::Sc,
                scope,
            ),
            _ => return Ok(()),
        };
        if narrow(Some(scope)) {
            return Ok(());
        }
        if acq {
            let p = self
                .grid
                .as_mut()
                .and_then(|g| g.ticket.as_mut())
                .and_then(|tk| tk.pending_acq[t as usize].take());
            if let Some(p) = p {
                self.clocks.acquire(t, &p);
            }
        }
        if sc {
            self.clocks.acquire_pending_sc(t);
        }
        if rel {
            let r = self.clocks.release(t);
            self.clocks.tick(t);
            if let Some(tk) = self.grid.as_mut().and_then(|g| g.ticket.as_mut()) {
                tk.fence_rel[t as usize] = Some((r, sc));
            }
        }
        Ok(())
    }
}

/// Where the ticket word's start value comes from.
enum Start {
    /// Its initialiser (a global variable): value and variable name.
    Known(u64, String),
    /// An element of an input tensor.
    Input(String),
    /// Nothing: the first RMW reads uninitialised memory (reported).
    Unwritten,
}

/// The ticket word's width and start value.
fn start_of<D: Domain>(
    input: &CtaInput,
    cta: [u32; 3],
    d: D,
    region: u32,
    off: u64,
    width: u8,
) -> (Start, D) {
    let e = match Engine::new(input, cta, d) {
        Ok(e) => e,
        Err((_, d)) => return (Start::Unwritten, d),
    };
    let r = region as usize;
    let start = match e.mem.region(r) {
        Some((reg, s)) => {
            let bytes: Option<Vec<u8>> = (off..off + u64::from(width))
                .map(|b| match (b as usize) < s.len() {
                    true => match s.get(b as usize) {
                        Slot::Byte(x) => Some(x),
                        _ => None,
                    },
                    false => None,
                })
                .collect();
            match (bytes, &reg.init) {
                (Some(b), _) => Start::Known(
                    b.iter()
                        .rev()
                        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
                    reg.name.clone(),
                ),
                (None, Init::Input { .. }) => Start::Input(reg.name.clone()),
                _ => Start::Unwritten,
            }
        }
        _ => Start::Unwritten,
    };
    let (_, d) = e.finish_with_domain();
    (start, d)
}

/// The rotation in which CTA `last` draws the last ticket.
fn rotation(g: usize, last: usize) -> Vec<usize> {
    (1..=g).map(|k| (last + k) % g).collect()
}

/// The explored executions of one start value.
struct Explored<V> {
    start: Option<u64>,
    /// By rotation (the CTA that is last).
    exs: Vec<Execution<V>>,
}

/// Explores the ticket pattern on `word` (region, offset, width).
pub(crate) fn explore<D: Domain>(
    input: &CtaInput,
    ctas: &[[u32; 3]],
    d: D,
    word: (u32, u64, u8),
) -> (GridRun<D::Val>, D) {
    let (region, off, width) = word;
    let g = ctas.len();
    let (start, mut d) = start_of(input, ctas[0], d, region, off, width);
    let limit = input.limits.max_grid_runs;
    let mut budget = limit;
    let mut notes = vec![format!(
        "grid-level ticket exploration: every CTA of the grid does one atomic on the ticket word and branches on its value; {g} orders of the atomics were run (in each, a different CTA draws the last ticket), so every CTA ran at every position"
    )];
    let mut candidates: Vec<Option<u64>> = match &start {
        Start::Known(v, name) => {
            notes.push(format!(
                "the ticket word `{name}` holds {v} at launch (its initialiser; the host does not write it before the launch)"
            ));
            vec![None]
        }
        Start::Input(t) => {
            notes.push(format!(
                "the ticket word is an element of input tensor `{t}`: start values explored are listed below"
            ));
            vec![Some(0)]
        }
        Start::Unwritten => vec![None],
    };
    let mut tried: Vec<u64> = Vec::new();
    let mut result: Option<Explored<D::Val>> = None;
    let mut extra: Vec<Finding> = Vec::new();
    let mut exhausted = false;
    while let Some(s) = candidates.first().copied() {
        candidates.remove(0);
        if let Some(v) = s {
            if tried.contains(&v) {
                continue;
            }
            tried.push(v);
        }
        if budget < g as u64 * g as u64 {
            exhausted = true;
            break;
        }
        budget -= (g * g) as u64;
        let plan = Plan {
            region,
            off,
            width,
            start: s,
            total: g as u32,
        };
        let mut exs = Vec::with_capacity(g);
        for l in 0..g {
            let (ex, d2) = execute(input, ctas, &rotation(g, l), d, Some(&plan));
            d = d2;
            exs.push(ex);
        }
        let bug = exs.iter().any(|ex| {
            ex.runs
                .iter()
                .flatten()
                .any(|r| r.findings.iter().any(|f| is_bug(f.kind)))
        });
        if matches!(start, Start::Input(_)) && !bug && result.is_none() {
            // New start values: make what some position saw happen at
            // another one.
            let step = step_of(&exs);
            for v in special_values(&exs, g) {
                for q in 0..g as u64 {
                    let s2 = match step {
                        Some(st) => v.wrapping_sub(q.wrapping_mul(st)) & mask(width),
                        None if q == 0 => v,
                        None => continue,
                    };
                    candidates.push(Some(s2));
                }
            }
        }
        let explored = Explored { start: s, exs };
        if bug || result.is_none() {
            result = Some(explored);
        }
        if bug {
            break;
        }
    }
    let Some(res) = result else {
        let mut run = finish(ctas, Vec::new(), Vec::new());
        run.notes = notes;
        return (run, d);
    };
    // Completeness: a CTA behaves the same at every position but the last.
    let (incomplete, od) = judge(&res, ctas, g);
    extra.extend(od);
    let bug = res.exs.iter().any(|ex| {
        ex.runs
            .iter()
            .flatten()
            .any(|r| r.findings.iter().any(|f| is_bug(f.kind)))
    });
    if !bug && let Some(f) = incomplete {
        extra.push(f);
    }
    if let Some(v) = res.start {
        notes.push(format!(
            "ticket start value of this report: {v} (tried: {})",
            tried
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !bug && extra.is_empty() {
        if exhausted {
            extra.push(Finding::new(
                FindingKind::ResourceLimit,
                format!(
                    "grid-level ticket exploration stopped at the limit of {limit} CTA runs (Limits::max_grid_runs) before every start value was tried"
                ),
            ));
        }
        if let Start::Input(t) = &start {
            extra.push(
                Finding::new(
                    FindingKind::Unsupported,
                    format!(
                        "the ticket word's start value is an element of input tensor `{t}`: no start value tried ({}) shows a bug, but not every start value was explored",
                        tried
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .with_reason("grid synchronisation from an input start value"),
            );
        }
    }
    // Findings name the order they were seen in.
    let start = res.start;
    let exs: Vec<Execution<D::Val>> = res
        .exs
        .into_iter()
        .enumerate()
        .map(|(l, mut ex)| {
            for r in ex.runs.iter_mut().flatten() {
                for f in &mut r.findings {
                    f.message.push_str(&order_note(ctas[l], start));
                }
            }
            ex
        })
        .collect();
    let mut run = finish(ctas, exs, extra);
    run.notes = notes;
    run.explored = true;
    (run, d)
}

/// " (in the order where CTA (x,y,z) draws the last ticket …)".
fn order_note(last: [u32; 3], start: Option<u64>) -> String {
    let [x, y, z] = last;
    match start {
        Some(v) => format!(
            " [grid order: CTA ({x},{y},{z}) draws the last ticket; ticket start value {v}]"
        ),
        None => format!(" [grid order: CTA ({x},{y},{z}) draws the last ticket]"),
    }
}

fn mask(width: u8) -> u64 {
    if width >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * u32::from(width))) - 1
    }
}

fn is_bug(k: FindingKind) -> bool {
    matches!(
        k,
        FindingKind::Race
            | FindingKind::OrderDependent
            | FindingKind::Deadlock
            | FindingKind::Divergence
            | FindingKind::OutOfBounds
            | FindingKind::Uninitialised
    )
}

/// The position of CTA `c` in the rotation where `last` is last.
fn position(c: usize, last: usize, g: usize) -> usize {
    (c + g - last - 1) % g
}

/// The ticket update's increment, as the CTAs saw it.
fn step_of<V>(exs: &[Execution<V>]) -> Option<u64> {
    exs.iter().find_map(|ex| ex.step)
}

/// Values some CTA saw at a position where it behaved differently from
/// its position 0.
fn special_values<V>(exs: &[Execution<V>], g: usize) -> Vec<u64> {
    let mut out = Vec::new();
    for c in 0..g {
        let at = |p: usize| {
            let l = (0..g).find(|&l| position(c, l, g) == p)?;
            Some((exs[l].fingerprints[c], exs[l].seen[c].0))
        };
        let Some((f0, _)) = at(0) else { continue };
        for p in 1..g {
            if let Some((f, Some(v))) = at(p)
                && f != f0
                && !out.contains(&v)
            {
                out.push(v);
            }
        }
    }
    out
}

/// Completeness and order dependence of one start value's executions:
/// an unsupported finding when a CTA behaves differently at two positions
/// other than the last; order-dependent findings when two orders leave
/// different outputs.
fn judge<V: Eq>(res: &Explored<V>, ctas: &[[u32; 3]], g: usize) -> (Option<Finding>, Vec<Finding>) {
    let mut incomplete = None;
    for (c, &[x, y, z]) in ctas.iter().enumerate().take(g) {
        let mut first: Option<(usize, u64)> = None;
        for l in (0..g).filter(|&l| l != c) {
            let p = position(c, l, g);
            let f = res.exs[l].fingerprints[c];
            match first {
                None => first = Some((p, f)),
                Some((p0, f0)) if f0 != f && incomplete.is_none() => {
                    incomplete = Some(
                        Finding::new(
                            FindingKind::Unsupported,
                            format!(
                                "grid-level ticket exploration incomplete: CTA ({x},{y},{z}) behaves differently at ticket positions {p0} and {p}, neither the last; the orders explored cover only behaviours that depend on being last or not"
                            ),
                        )
                        .with_reason("ticket value used beyond last / not last"),
                    );
                }
                _ => {}
            }
        }
    }
    let mut od = Vec::new();
    let base = &res.exs[0];
    for (l, ex) in res.exs.iter().enumerate().skip(1) {
        if let Some((name, index)) = first_difference(&base.outputs, &ex.outputs) {
            // The ticket atomics of the two CTAs that draw the last ticket.
            let by = |ex: &Execution<V>, k: usize| {
                ex.by[k].map(|(thread, instr)| AccessRef {
                    thread,
                    instr,
                    kind: AccessKind::Atomic,
                    cta: Some(ctas[k]),
                })
            };
            let [a0, a1, a2] = ctas[0];
            let [b0, b1, b2] = ctas[l];
            let mut f = Finding::new(
                FindingKind::OrderDependent,
                format!(
                    "order-dependent result: element {index} of `{name}` differs between the order of the ticket atomics where CTA ({a0},{a1},{a2}) draws the last ticket and the one where CTA ({b0},{b1},{b2}) does"
                ),
            );
            f.location = Some(MemLocation {
                region: name.clone(),
                space: "global".into(),
                byte_offset: 0,
                element: Some(index),
            });
            f.accesses = [by(base, 0), by(ex, l)].into_iter().flatten().collect();
            od.push(f);
            break;
        }
    }
    (incomplete, od)
}

/// The first output element that differs between two executions.
fn first_difference<V: Eq>(
    a: &[crate::result::TensorOutput<V>],
    b: &[crate::result::TensorOutput<V>],
) -> Option<(String, u64)> {
    for ta in a {
        let tb = b.iter().find(|t| t.tensor == ta.tensor);
        let empty = Vec::new();
        let eb = tb.map_or(&empty, |t| &t.elements);
        let mut i = 0;
        let mut j = 0;
        while i < ta.elements.len() || j < eb.len() {
            match (ta.elements.get(i), eb.get(j)) {
                (Some((x, vx)), Some((y, vy))) if x == y => {
                    if !same_output(vx, vy) {
                        return Some((ta.name.clone(), *x));
                    }
                    i += 1;
                    j += 1;
                }
                (Some((x, _)), Some((y, _))) => return Some((ta.name.clone(), *x.min(y))),
                (Some((x, _)), None) | (None, Some((x, _))) => {
                    return Some((ta.name.clone(), *x));
                }
                (None, None) => break,
            }
        }
    }
    None
}

fn same_output<V: Eq>(a: &OutputValue<V>, b: &OutputValue<V>) -> bool {
    match (a, b) {
        // An unknown value is never known to be equal.
        (OutputValue::Unsupported(_), _) | (_, OutputValue::Unsupported(_)) => false,
        _ => a == b,
    }
}
