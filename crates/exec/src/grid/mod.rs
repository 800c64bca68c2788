//! Grid-level runs: several CTAs judged together over one global memory.
//!
//! A single-CTA run judges one CTA. When a spec selects several CTAs they
//! run here one after the other, each in its own engine, but over one
//! global memory and one set of global race shadows: an access of a
//! later CTA is judged against every earlier CTA's accesses with exactly
//! the rules of one CTA (`race.rs`: plain/strong, scopes, benign same-value
//! stores, order dependence). CTAs never synchronise with each other
//! except through the memory model's release/acquire patterns on a ticket
//! word (below), so the order they run in decides nothing else: the
//! happens-before relation, not the run order, judges every pair.
//!
//! **The ticket pattern** (CUDA Programming Guide, "last block"): every
//! CTA does one atomic read-modify-write on a global word and branches on
//! its returned value (e.g. "I drew the last ticket: I read every CTA's
//! partial"). A branch on an atomic's value is otherwise unsupported (the
//! value depends on the order of the atomics). When every CTA of the grid
//! is selected, [`ticket`] explores the outcomes instead: see there for the
//! orders it runs and why they cover every order of the atomics.

mod ticket;

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::domain::Domain;
use crate::engine::Engine;
use crate::finding::{Finding, FindingKind, InstrRef, ThreadRef};
use crate::input::CtaInput;
use crate::race::Clocks;
use crate::result::{CtaRun, TensorOutput};

pub(crate) use ticket::Ticket;

/// What a grid-level run found.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct GridRun<V> {
    /// The CTAs run, in the order of `runs`.
    pub ctas: Vec<[u32; 3]>,
    /// Per CTA: its findings (those within the CTA), counters and trace.
    /// With the ticket exploration the findings are those of every order
    /// explored, the counters and trace those of the first.
    pub runs: Vec<CtaRun<V>>,
    /// Findings between two CTAs (each access names its CTA).
    pub cross: Vec<Finding>,
    /// What the verdict rests on (the ticket exploration, start values).
    pub notes: Vec<String>,
    /// The output tensors at the end of the (first) run.
    pub outputs: Vec<TensorOutput<V>>,
    /// The ticket exploration ran: the traces are those of one order of
    /// the atomics, which a CTA run alone does not reproduce.
    pub explored: bool,
}

/// The grid-level state an engine carries while it runs one CTA of a grid
/// run.
#[derive(Default)]
pub(crate) struct EngineGrid {
    /// Global atomics whose integer result was kept opaque: instruction →
    /// the word (region, offset, width; `None` once it touched several).
    pub atomic_words: FxHashMap<u32, Option<(u32, u64, u8)>>,
    /// The atomic whose returned value stopped the run (a branch or an
    /// address computed from it).
    pub halt_atomic: Option<u32>,
    /// The ticket word being explored.
    pub ticket: Option<Ticket>,
    /// A hash of the CTA's global accesses and stored values (the ticket
    /// exploration compares a CTA's behaviour at different positions).
    pub effects: u64,
}

impl EngineGrid {
    /// Records that the atomic at `instr` returned an opaque value for
    /// the global word (`region`, `off`).
    pub(crate) fn note_atomic(&mut self, instr: u32, region: u32, off: u64, width: u8) {
        let w = Some((region, off, width));
        self.atomic_words
            .entry(instr)
            .and_modify(|x| {
                if *x != w {
                    *x = None;
                }
            })
            .or_insert(w);
    }

    /// Mixes an access into [`EngineGrid::effects`].
    pub(crate) fn mix_effect(&mut self, parts: [u64; 4]) {
        for p in parts {
            self.effects = crate::trace::mix(self.effects, p);
        }
    }
}

/// One global region between two CTAs: its contents and race shadow.
type GlobalRegion<V> = crate::engine::HeldGlobal<V>;

/// The global memory of a grid run between two CTAs: per region index,
/// the contents and race shadows of every global region.
struct GridMemory<V: Copy> {
    regions: Vec<Option<GlobalRegion<V>>>,
    reported: FxHashSet<(u32, u32, u32)>,
    cta_ids: Rc<[[u32; 3]]>,
    /// The output elements' last writers (`engine::writers`), handed from
    /// CTA to CTA with the memory.
    writers: Option<crate::engine::writers::Writers>,
}

/// One sequential execution of the selected CTAs.
struct Execution<V> {
    /// By CTA index (`None`: not run).
    runs: Vec<Option<CtaRun<V>>>,
    /// The output tensors at the end.
    outputs: Vec<TensorOutput<V>>,
    /// By CTA index: [`EngineGrid::effects`] mixed with the trace.
    fingerprints: Vec<u64>,
    /// A CTA stopped at a branch or address computed from the value of a
    /// global atomic on this word (region, offset): the ticket pattern.
    ticket_word: Option<(u32, u64, u8)>,
    /// By CTA index: the value its ticket atomic returned, and how many
    /// ticket atomics it executed.
    seen: Vec<(Option<u64>, u32)>,
    /// By CTA index: the thread and instruction of its ticket atomic.
    by: Vec<Option<(ThreadRef, InstrRef)>>,
    /// The ticket update's increment (`inc`: 1, `add` of a constant).
    step: Option<u64>,
    /// Some engine ran the CTAs of a multi-CTA cluster co-scheduled.
    co_scheduled: bool,
    /// The co-scheduled unit is the whole grid (a `grid.sync()` kernel).
    grid_unit: bool,
}

impl<D: Domain> Engine<'_, D> {
    /// Takes over the grid's global memory and shadows and stamps this
    /// CTA's accesses with `index`.
    fn attach(&mut self, mem: &mut GridMemory<D::Val>, index: u32) {
        self.mem.adopt_globals(&mut mem.regions);
        // Async-agent slots (`t + nthreads`) when the kernel has copies
        // completing on an mbarrier, tcgen05-agent slots (`t + 2·nthreads`)
        // when it uses Tensor Memory, as in `Engine::new`.
        let slots = self.nthreads() as usize * self.clock_blocks();
        self.clocks = Clocks::in_cta(slots, index);
        self.log.swap_reported(&mut mem.reported);
        if let Some(w) = mem.writers.take() {
            self.writers = w;
        }
        self.cta_ids = mem.cta_ids.clone();
    }

    /// Gives the global memory and shadows back to the grid.
    fn detach(&mut self, mem: &mut GridMemory<D::Val>) {
        self.mem.release_globals(&mut mem.regions);
        self.log.swap_reported(&mut mem.reported);
        mem.writers = Some(std::mem::take(&mut self.writers));
    }
}

/// Runs the CTAs of `order` (indices into `ctas`) one after the other
/// over one global memory; with `plan`, the ticket word is explored.
fn execute<D: Domain>(
    input: &CtaInput,
    ctas: &[[u32; 3]],
    order: &[usize],
    mut d: D,
    plan: Option<&ticket::Plan>,
) -> (Execution<D::Val>, D) {
    let n = ctas.len();
    let mut mem = GridMemory {
        regions: Vec::new(),
        reported: FxHashSet::default(),
        cta_ids: Rc::from(ctas.to_vec()),
        writers: None,
    };
    let mut ex = Execution {
        runs: (0..n).map(|_| None).collect(),
        outputs: Vec::new(),
        fingerprints: vec![0; n],
        ticket_word: None,
        seen: vec![(None, 0); n],
        by: vec![None; n],
        step: None,
        co_scheduled: false,
        grid_unit: false,
    };
    let mut chain = ticket::Chain::default();
    let (units, grid_unit) = units(input, ctas, order);
    let clusters = cluster_table(input, ctas);
    for (k, (ci, members)) in units.iter().enumerate() {
        let (ci, last) = (*ci, k + 1 == units.len());
        for &m in members {
            // A member's run is its cluster's, reported with rank 0.
            ex.runs[m] = Some(crate::empty_run_clean(ctas[m], input));
        }
        let mut e = match Engine::new(input, ctas[ci], d) {
            Ok(e) => e,
            Err((f, d0)) => {
                d = d0;
                ex.runs[ci] = Some(crate::empty_run(ctas[ci], f, input));
                break;
            }
        };
        e.attach(&mut mem, ci as u32);
        e.clocks.set_clusters(clusters.clone());
        if !members.is_empty() {
            let m: Vec<([u32; 3], u32)> = members.iter().map(|&m| (ctas[m], m as u32)).collect();
            e.add_unit_ctas(&m, true, grid_unit);
            ex.co_scheduled = true;
            ex.grid_unit = grid_unit;
        }
        let mut g = EngineGrid::default();
        if let Some(p) = plan {
            if k == 0 {
                e.set_ticket_start(p);
            }
            g.ticket = Some(Ticket::new(p, &chain, e.nthreads() as usize));
        }
        e.grid = Some(Box::new(g));
        e.run();
        let g = e.grid.take().unwrap_or_default();
        if let Some(tk) = &g.ticket {
            chain.absorb(tk);
            ex.seen[ci] = (tk.seen, tk.rmws);
            ex.by[ci] = tk
                .by
                .map(|(t, i)| (e.thread_ref(t), crate::engine::unpack_instr(i)));
            ex.step = ex.step.or(tk.step);
        }
        if ex.ticket_word.is_none()
            && let Some(o) = g.halt_atomic
            && let Some(Some(w)) = g.atomic_words.get(&o)
        {
            ex.ticket_word = Some(*w);
        }
        if !last {
            e.detach(&mut mem);
        }
        let (mut run, d2) = e.finish_with_domain();
        d = d2;
        if last {
            ex.outputs = std::mem::take(&mut run.outputs);
        }
        ex.fingerprints[ci] = fingerprint(&run, g.effects);
        ex.runs[ci] = Some(run);
    }
    (ex, d)
}

/// The engines of a grid run in `order`: each CTA alone, except that the
/// CTAs of a multi-CTA cluster all of whose ranks are in `ctas` run as one
/// scheduling unit (`engine/unit.rs`) in the engine of its rank-0 CTA,
/// at the position of the first of them in `order`. Returns (engine's
/// CTA, the other CTAs of its unit by rank from 1) as indices into `ctas`.
///
/// A kernel that reads the `grid.sync()` workspace (`%envreg1/2`,
/// `engine/gridsync.rs`) runs as one unit of every CTA when `ctas` is the
/// whole grid and its clusters have one CTA (the second result says so);
/// the unit's size is bounded by the CTA limit (`max_ctas`) that bounds
/// every grid run, and its memory by `max_memory_state_bytes`.
/// By CTA index (the access stamp): the linear index of its thread-block
/// cluster in the grid, for `.cluster` scopes (`race::Clocks::same_cluster`);
/// `None` without clusters of several CTAs.
fn cluster_table(input: &CtaInput, ctas: &[[u32; 3]]) -> Option<std::rc::Rc<[u32]>> {
    let shape = input.cluster.unwrap_or([1, 1, 1]);
    if shape.iter().product::<u32>() <= 1 {
        return None;
    }
    let n = |d: usize| (input.grid[d] / shape[d].max(1)).max(1);
    Some(
        ctas.iter()
            .map(|c| {
                let k = |d: usize| c[d] / shape[d].max(1);
                k(0) + n(0) * (k(1) + n(1) * k(2))
            })
            .collect(),
    )
}

fn units(input: &CtaInput, ctas: &[[u32; 3]], order: &[usize]) -> (Vec<(usize, Vec<usize>)>, bool) {
    let shape = input.cluster.unwrap_or([1, 1, 1]);
    let size: u32 = shape.iter().product();
    let whole = u64::try_from(ctas.len()).ok() == Some(grid_size(input))
        && ctas.iter().collect::<FxHashSet<_>>().len() == ctas.len();
    let funcs = std::iter::once(&*input.kernel).chain(input.funcs.iter().map(|f| &**f));
    if whole && size <= 1 && ctas.len() > 1 && crate::engine::uses_grid_sync(funcs) {
        let first = order[0];
        let rest = order.iter().copied().filter(|&c| c != first).collect();
        return (vec![(first, rest)], true);
    }
    if size <= 1 {
        return (order.iter().map(|&ci| (ci, Vec::new())).collect(), false);
    }
    let cluster = |c: [u32; 3]| [c[0] / shape[0], c[1] / shape[1], c[2] / shape[2]];
    let rank = |c: [u32; 3]| {
        let r = |d: usize| c[d] % shape[d];
        r(0) + shape[0] * (r(1) + shape[1] * r(2))
    };
    let mut done = vec![false; ctas.len()];
    let mut out = Vec::new();
    for &ci in order {
        if done[ci] {
            continue;
        }
        let key = cluster(ctas[ci]);
        let mut by_rank: Vec<Option<usize>> = vec![None; size as usize];
        for &j in order {
            if !done[j] && cluster(ctas[j]) == key {
                by_rank[rank(ctas[j]) as usize].get_or_insert(j);
            }
        }
        match by_rank.iter().copied().collect::<Option<Vec<usize>>>() {
            Some(all) => {
                for &j in &all {
                    done[j] = true;
                }
                out.push((all[0], all[1..].to_vec()));
            }
            None => {
                // Part of the cluster only: the CTA runs alone (its cluster
                // operations are unsupported).
                done[ci] = true;
                out.push((ci, Vec::new()));
            }
        }
    }
    (out, false)
}

/// A CTA's behaviour: its paths, schedule and global effects.
fn fingerprint<V>(run: &CtaRun<V>, effects: u64) -> u64 {
    use crate::trace::mix;
    let mut h = mix(effects, run.trace.schedule_hash);
    for t in &run.trace.threads {
        h = mix(h, t.path_hash);
    }
    h
}

/// Runs `ctas` of the launch `input` as one grid: one after the other,
/// over one global memory (see the module documentation). When a CTA
/// stops at a branch on a global atomic's value and `ctas` is the whole
/// grid, the ticket pattern is explored.
pub fn run_grid<D: Domain>(input: &CtaInput, ctas: &[[u32; 3]], d: D) -> (GridRun<D::Val>, D) {
    let order: Vec<usize> = (0..ctas.len()).collect();
    let (ex, d) = execute(input, ctas, &order, d, None);
    let (co_scheduled, grid_unit) = (ex.co_scheduled, ex.grid_unit);
    let whole = u64::try_from(ctas.len()).ok() == Some(grid_size(input))
        && ctas.iter().collect::<FxHashSet<_>>().len() == ctas.len();
    if let Some(word) = ex.ticket_word {
        if whole {
            return ticket::explore(input, ctas, d, word);
        }
        let mut run = finish(ctas, vec![ex], Vec::new());
        run.notes.push(
            "a CTA branches on (or addresses memory with) a global atomic's returned value: the grid-level ticket exploration needs every CTA of the grid (ctas = \"all\")"
                .into(),
        );
        return (run, d);
    }
    let mut run = finish(ctas, vec![ex], Vec::new());
    if co_scheduled {
        // The CTAs of a cluster depend on each other: a CTA replayed alone
        // does not reproduce its part (the symbolic replay runs the grid).
        run.explored = true;
        run.notes.push(if grid_unit {
            "every CTA of the grid ran co-scheduled as one unit (the kernel synchronises the grid with \
             grid.sync(), modelled as a grid barrier); the grid's findings, counters and trace are \
             reported with its first CTA"
                .to_string()
        } else {
            format!(
                "the CTAs of each cluster of {:?} ran co-scheduled as one unit (cluster barriers and \
                 distributed shared memory across its CTAs); a cluster's findings, counters and trace \
                 are reported with its rank-0 CTA",
                input.cluster.unwrap_or([1, 1, 1])
            )
        });
    }
    (run, d)
}

/// CTAs in the grid of `input`.
fn grid_size(input: &CtaInput) -> u64 {
    input.grid.iter().map(|&g| u64::from(g)).product()
}

/// The grid run of one or more executions: findings merged (first
/// occurrence kept), within-CTA findings apart from cross-CTA ones, reads
/// of never-written memory dropped where the reading instruction also
/// races (as within one CTA), counters and traces of the first execution.
fn finish<V>(ctas: &[[u32; 3]], exs: Vec<Execution<V>>, extra: Vec<Finding>) -> GridRun<V> {
    let mut runs: Vec<Option<CtaRun<V>>> = (0..ctas.len()).map(|_| None).collect();
    let mut outputs = None;
    let mut all: Vec<(usize, Finding)> = Vec::new();
    let mut seen: FxHashSet<(usize, FindingKind, Vec<InstrRef>, String)> = FxHashSet::default();
    for ex in exs {
        if outputs.is_none() {
            outputs = Some(ex.outputs);
        }
        for (ci, r) in ex.runs.into_iter().enumerate() {
            let Some(mut r) = r else { continue };
            for f in std::mem::take(&mut r.findings) {
                let key = (
                    ci,
                    f.kind,
                    f.accesses.iter().map(|a| a.instr).collect::<Vec<_>>(),
                    f.location
                        .as_ref()
                        .map(|l| format!("{}+{}", l.region, l.byte_offset))
                        .unwrap_or_else(|| f.message.clone()),
                );
                if seen.insert(key) {
                    all.push((ci, f));
                }
            }
            if runs[ci].is_none() {
                runs[ci] = Some(r);
            }
        }
    }
    {
        let mut fs: Vec<Finding> = all.iter().map(|(_, f)| f.clone()).collect();
        let before = fs.len();
        crate::engine::drop_control_only_od(&mut fs);
        if fs.len() != before {
            all.retain(|(_, f)| fs.contains(f));
        }
    }
    let racy: FxHashSet<InstrRef> = all
        .iter()
        .filter(|(_, f)| f.kind == FindingKind::Race)
        .flat_map(|(_, f)| f.accesses.iter().map(|a| a.instr))
        .collect();
    let mut cross = extra;
    for (ci, f) in all {
        if f.kind == FindingKind::Uninitialised && f.instr.is_some_and(|i| racy.contains(&i)) {
            continue;
        }
        let ctas_of: FxHashSet<Option<[u32; 3]>> = f.accesses.iter().map(|a| a.cta).collect();
        if ctas_of.len() > 1 {
            cross.push(f);
        } else if let Some(r) = runs[ci].as_mut() {
            r.findings.push(f);
        }
    }
    GridRun {
        ctas: ctas.to_vec(),
        runs: runs
            .into_iter()
            .zip(ctas)
            .map(|(r, &c)| {
                r.unwrap_or_else(|| CtaRun {
                    cta: c,
                    findings: Vec::new(),
                    dropped_findings: 0,
                    stats: Default::default(),
                    outputs: Vec::new(),
                    footprint: crate::footprint::GlobalFootprint {
                        cta: c,
                        tensors: Vec::new(),
                    },
                    trace: Default::default(),
                })
            })
            .collect(),
        cross,
        notes: Vec::new(),
        outputs: outputs.unwrap_or_default(),
        explored: false,
    }
}
