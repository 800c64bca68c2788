//! The interpreter of one CTA.
//!
//! - `mod.rs` (here): the `Engine` orchestrator, memory layout set-up,
//!   the scheduler loop, results;
//! - the state components `Engine` holds: `cta` ([`cta::CtaState`]:
//!   threads, barriers, warp collectives, mbarriers, async units),
//!   `memstate` ([`memstate::MemState`]: CTA-wide regions, contents,
//!   shadows, footprints), `findings` ([`findings::FindingLog`]);
//! - `values`: operand reads/writes, conversions between [`Value`]s and
//!   integers / reals / predicates, data-predicated merges;
//! - `exec`: the per-instruction semantics (ALU, compare, convert, moves);
//! - `mem`: address resolution, loads, stores, atomics, race reports;
//! - `control`: branches, calls, returns, exits;
//! - `sync`: barriers, warp collectives, deadlock analysis;
//! - `matrix` (+ `fragments`, the layouts): `mma`, `ldmatrix`,
//!   `stmatrix`, `movmatrix`, `wmma` as warp collectives (`wmma_check`:
//!   layout independence of element-wise fragment use, with the tags of
//!   `crate::layout_tags`);
//! - `async_copy`: `cp.async` and its commit / wait groups;
//! - `mbarrier` (+ `spin`, the polling-loop recognition): mbarrier
//!   objects with exact phases, `cp.async.mbarrier.arrive`, bulk copies.
//!
//! Scheduling is deterministic: a FIFO run queue, initially all threads in
//! linear order; a thread runs until it blocks (barrier, collective) or
//! exits; threads woken by a completed barrier or collective are queued in
//! linear order.

mod async_copy;
mod bitexact;
mod budget;
mod cluster;
mod control;
mod cta;
mod exec;
mod exec_order;
mod findings;
mod fp8cvt;
mod fragments;
mod gridsync;
mod intdata;
mod matrix;
mod mbarrier;
mod mem;
mod memstate;
mod proxy;
mod spin;
mod sync;
mod tma;
mod tmem;
mod unit;
mod values;
mod wgmma;
mod wmma_check;
pub(crate) mod writers;

use std::collections::VecDeque;
use std::rc::Rc;

use ptxeq_ir::{StateSpace, VarScope};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::bindings::{FieldKind, GlobalContents};
use crate::coverage::Coverage;
use crate::domain::{Domain, Fmt};
use crate::finding::{Finding, FindingKind, InstrRef, MemLocation, ThreadRef};
use crate::footprint::{FootprintBuilder, GlobalFootprint, TensorFootprint};
use crate::funcinfo::FuncInfo;
use crate::input::{CtaInput, ParamValue};
use crate::memory::{
    GLOBAL_SLOT_BITS, Init, Region, SHARED_WINDOW, SPACE_SLOT_BITS, Slot, Slots, Space, load_value,
};
use crate::race::{Clocks, ShadowMem};
use crate::result::{CtaRun, OutputValue, Stats, TensorOutput};
use crate::sparse::Meter;
use crate::trace::{ThreadTracer, Trace, mix};
use crate::value::Value;

pub(crate) use gridsync::uses_grid_sync;
pub(crate) use mem::drop_control_only_od;
pub(crate) use memstate::HeldGlobal;
pub(crate) use sync::{Barrier, WarpState};

/// Marker: a fatal finding was recorded; stop the run.
#[derive(Debug)]
pub(crate) struct Halt;

pub(crate) type R<T> = Result<T, Halt>;

/// What an instruction did to control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Next,
    Jump(u32),
    /// The thread waits; whoever wakes it advances its pc.
    Block,
    Exit,
    /// A frame was pushed or popped; the new pc is already set.
    Transfer,
}

/// What a blocked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Completion of the current generation of barrier `id`.
    Barrier(u8),
    /// `bar.arrive`: the rest of its warp arriving at barrier `id`.
    WarpArrive(u8),
    /// A warp collective (index into the warp's pending list is looked up
    /// by key).
    Collective,
    /// An `mbarrier` wait parked until its phase completes.
    Mbarrier,
    /// `barrier.cluster.wait` until the cluster barrier's phase completes.
    Cluster,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Ready,
    Blocked(Wait),
    Exited,
}

/// A thread's record of its last arrival at a barrier (recycling check).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LastArrival {
    pub generation: u32,
    pub blocking: bool,
    /// For a completed generation: a waiter and its epoch right after the
    /// completion (`None` while pending or when nobody waited).
    pub completion: Option<(u32, u32)>,
    pub instr: u32,
}

/// A per-thread region: a `.local` variable or call param of a frame.
pub(crate) struct Private<V: Copy> {
    pub region: Region,
    pub slots: Slots<V>,
}

/// How a callee's return param flows back to the caller.
#[derive(Clone, Debug)]
pub(crate) enum RetBind {
    /// Callee return param region (private index) → caller var region.
    RegionToRegion { from: usize, to: usize, size: u64 },
    /// Callee return register → caller register operand.
    RegToReg {
        from_slot: u32,
        to: ptxeq_ir::Operand,
    },
    /// Callee return region → caller register.
    RegionToReg {
        from: usize,
        to: ptxeq_ir::Operand,
        width: u8,
    },
    /// Callee return register → caller var region.
    RegToRegion {
        from_slot: u32,
        to: usize,
        width: u8,
    },
}

pub(crate) struct Frame<V> {
    pub func: u32,
    pub pc: u32,
    pub regs: Vec<Value<V>>,
    /// First private region of this frame.
    pub private_base: usize,
    pub rets: Vec<RetBind>,
    /// Per register slot, the instruction that wrote it (packed + 1, 0 =
    /// none); empty unless coverage is recorded.
    pub prov: Vec<u32>,
}

pub(crate) struct Thread<V: Copy> {
    pub tid: [u32; 3],
    pub linear: u32,
    pub frames: Vec<Frame<V>>,
    pub status: Status,
    pub carry: bool,
    pub private: Vec<Private<V>>,
    /// Next free local / param address of this thread.
    pub cursor_local: u64,
    pub cursor_param: u64,
    pub last_arrival: [Option<LastArrival>; 16],
    pub tracer: ThreadTracer,
    /// Loop iterations per back edge (names the loop at the step limit).
    pub back_edges: budget::BackEdges,
}

/// The interpreter state of one CTA: the orchestrator over the state
/// components below. Each component owns one kind of state; a handler's
/// field path (`self.mem`, `self.cta`, `self.clocks`, `self.log`) says
/// which one an instruction touches.
pub(crate) struct Engine<'a, D: Domain> {
    pub input: &'a CtaInput,
    pub funcs: Rc<Vec<FuncInfo>>,
    pub d: D,
    /// The CTA's own state: threads, barriers, warp collectives, mbarriers
    /// and async units (`cta.rs`).
    pub cta: cta::CtaState<D::Val>,
    /// The CTA-wide memory regions, their contents, race shadows and
    /// footprints (`memstate.rs`).
    pub mem: memstate::MemState<D::Val>,
    /// The race detector's vector clocks (`crate::race`).
    pub clocks: Clocks,
    /// The run queue: thread indices, FIFO.
    pub queue: VecDeque<u32>,
    /// Findings, the halt flag, races already reported (`findings.rs`).
    pub log: findings::FindingLog,
    pub stats: Stats,
    /// The data predicate guarding the instruction being executed.
    pub guard: Option<D::Val>,
    /// The packed id of the instruction being executed.
    pub cur_instr: u32,
    pub sched_hash: u64,
    pub sched_events: u64,
    /// CTA ids by the index stamped into accesses (`race::Acc::cta`):
    /// this CTA alone, or every CTA of a grid-level run (`crate::grid`).
    pub cta_ids: Rc<[[u32; 3]]>,
    /// Grid-level run state (`crate::grid`); `None` for a CTA run alone.
    pub grid: Option<Box<crate::grid::EngineGrid>>,
    /// The atomic being executed returns its value as is (the explored
    /// ticket word), not as an opaque integer.
    pub keep_result: bool,
    /// Executed / result-read flags per instruction, when recorded
    /// ([`crate::run_cta_with_coverage`]).
    pub cov: Option<Box<Coverage>>,
    /// Whether the clocks hold a second slot per thread (`t + nthreads`:
    /// its async agent, for copies completing on an mbarrier).
    pub mbar_agents: bool,
    /// Whether the clocks hold a block of slots per thread (after the
    /// agents) for the `.multicast::cluster` bulk copies other CTAs'
    /// thread `t` lands in this CTA (`tma.rs`, `Engine::mcast_slot`).
    pub multicast: bool,
    /// Whether the clocks end with a block of execution slots
    /// (`exec_order.rs`: kernels with `wgmma.mma_async` and mbarriers).
    pub exec_slots: bool,
    /// The last store into each output element (`writers.rs`).
    pub writers: writers::Writers,
    /// The cluster barrier of a one-CTA cluster (`cluster.rs`); with
    /// several CTAs per scheduling unit it is shared by them.
    pub cluster: cluster::ClusterBarrier,
    /// The other CTAs of a scheduling unit of several CTAs (a multi-CTA
    /// cluster, `unit.rs`); `None` for a CTA run alone.
    pub unit: Option<Box<unit::Unit<D::Val>>>,
    /// The grid barrier of `grid.sync()` when the unit is the whole grid
    /// (`gridsync.rs`).
    pub gsync: Option<Box<gridsync::GridSync>>,
}

/// Packs a function index and instruction index.
pub(crate) fn pack_instr(func: u32, index: u32) -> u32 {
    (func << 22) | (index & 0x3F_FFFF)
}

pub(crate) fn unpack_instr(p: u32) -> InstrRef {
    InstrRef {
        func: p >> 22,
        index: p & 0x3F_FFFF,
    }
}

fn space_ix(s: Space) -> Option<usize> {
    match s {
        Space::Global => Some(0),
        Space::Shared => Some(1),
        Space::Const => Some(2),
        Space::Param => Some(3),
        Space::Local => None,
    }
}

pub(crate) fn space_of(s: StateSpace) -> Option<Space> {
    match s {
        StateSpace::Global => Some(Space::Global),
        StateSpace::Shared | StateSpace::SharedCluster => Some(Space::Shared),
        StateSpace::Local => Some(Space::Local),
        StateSpace::Const => Some(Space::Const),
        StateSpace::Param => Some(Space::Param),
        _ => None,
    }
}

/// Element size of a variable for reports.
fn var_elem(ty: ptxeq_ir::ScalarType, vector: Option<u8>) -> u32 {
    (ty.size_bytes() * u64::from(vector.unwrap_or(1))) as u32
}

/// Bytes of a variable initialiser (`None` when an element cannot be
/// expressed as bytes, e.g. a symbol address is not resolvable).
fn init_bytes(v: &ptxeq_ir::VarDecl, resolve: &dyn Fn(&str) -> Option<u64>) -> Option<Vec<u8>> {
    let init = v.init.as_ref()?;
    let esize = v.ty.size_bytes() as usize;
    let mut out = Vec::with_capacity(init.len() * esize);
    for e in init {
        let bits: u64 = match e {
            ptxeq_ir::InitValue::Int(i) => *i as u64,
            ptxeq_ir::InitValue::F32Bits(b) => {
                if v.ty == ptxeq_ir::ScalarType::F64 {
                    f64::from(f32::from_bits(*b)).to_bits()
                } else {
                    u64::from(*b)
                }
            }
            ptxeq_ir::InitValue::F64Bits(b) => {
                if v.ty == ptxeq_ir::ScalarType::F32 {
                    u64::from((f64::from_bits(*b) as f32).to_bits())
                } else {
                    *b
                }
            }
            ptxeq_ir::InitValue::Symbol { name, offset, .. } => {
                resolve(name)?.wrapping_add(*offset as u64)
            }
        };
        for i in 0..esize {
            out.push(if i < 8 { (bits >> (8 * i)) as u8 } else { 0 });
        }
    }
    Some(out)
}

impl<'a, D: Domain> Engine<'a, D> {
    /// Lays out memory and creates the threads. A layout problem (regions
    /// that do not fit the address map, a thread count over 1024) is a
    /// finding. Nothing is allocated per byte of a region here: contents,
    /// shadows and footprints are sparse and grow with what the run
    /// touches.
    #[allow(clippy::result_large_err)] // the error path runs once, before anything else
    pub(crate) fn new(input: &'a CtaInput, cta: [u32; 3], d: D) -> Result<Self, (Finding, D)> {
        let mut d = d;
        let dtypes: Vec<ptxeq_spec::DType> = input.tensors.iter().map(|t| t.dtype).collect();
        d.set_tensor_types(&dtypes);
        let nthreads64 = input.threads();
        if nthreads64 == 0 || nthreads64 > 1024 {
            return Err((
                Finding::new(
                    FindingKind::ResourceLimit,
                    format!("{nthreads64} threads per CTA: the engine supports 1 to 1024"),
                ),
                d,
            ));
        }
        let nthreads = nthreads64 as u32;
        let mut names: Vec<String> = vec![input.kernel.name.clone()];
        names.extend(input.funcs.iter().map(|f| f.name.clone()));
        let mut funcs = vec![FuncInfo::new(input.kernel.clone(), &names)];
        for f in &input.funcs {
            funcs.push(FuncInfo::new(f.clone(), &names));
        }
        let meter = Meter::new();
        let address_map = |what: &str, size: u64, room: &str| {
            Finding::new(
                FindingKind::ResourceLimit,
                format!(
                    "{what} has {size} bytes, more than the engine's address map holds ({room})"
                ),
            )
        };
        let mut regions: Vec<Region> = Vec::new();
        let mut slots: Vec<Slots<D::Val>> = Vec::new();
        // Global regions are placed one after another in 64 GiB slots: a
        // region takes as many slots as it needs to keep at least 1 MiB
        // of gap after it (one slot for anything under 64 GiB - 1 MiB).
        let mut next_global = 1u64 << GLOBAL_SLOT_BITS;
        let mut place_global = |size: u64| -> Option<u64> {
            let base = next_global;
            let slots = size
                .checked_add(1 << SPACE_SLOT_BITS)?
                .div_ceil(1 << GLOBAL_SLOT_BITS);
            next_global = base.checked_add(slots.checked_mul(1 << GLOBAL_SLOT_BITS)?)?;
            (next_global <= SHARED_WINDOW).then_some(base)
        };
        // Global: one region per tensor.
        for (i, t) in input.tensors.iter().enumerate() {
            if input.bindings.is_global_tensor(i as u32) {
                // A `[globals]` input: its memory is the module variable's.
                continue;
            }
            let size = t.byte_size();
            let Some(base) = place_global(size) else {
                let what = format!("tensor `{}`", t.name);
                return Err((address_map(&what, size, "2^61 bytes of global memory"), d));
            };
            let init = if t.role.is_read() {
                Init::Input {
                    tensor: i as u32,
                    fmt: Fmt::of_dtype(t.dtype),
                    esize: t.dtype.size_bytes() as u8,
                }
            } else {
                Init::Output
            };
            regions.push(Region {
                name: t.name.clone(),
                space: Space::Global,
                base,
                size,
                elem: t.dtype.size_bytes() as u32,
                init,
                tensor: Some(i as u32),
            });
            let mut tslots = Slots::metered(size as usize, Slot::Unwritten, &meter);
            if let Some(bytes) = input.bindings.tensor_bytes(i as u32) {
                crate::bindings::fill(&mut tslots, bytes);
            }
            slots.push(tslots);
        }
        // Module and function variables with CTA-wide storage.
        let mut var_region: Vec<Vec<Option<u32>>> = Vec::new();
        let mut by_name: FxHashMap<String, u32> = FxHashMap::default();
        let mut counters = [1u64, 1]; // shared, const
        let packed_shared = funcs.iter().any(|f| wgmma::uses_descriptors(&f.ir));
        let mut next_packed = wgmma::SHARED_PACK_BASE;
        let mut dynamic: Option<u32> = None;
        let mut pending_init: Vec<(u32, usize, usize)> = Vec::new(); // (region, func, var)
        for (fi, f) in funcs.iter().enumerate() {
            let mut map = vec![None; f.ir.vars.len()];
            for (vi, v) in f.ir.vars.iter().enumerate() {
                let space = match space_of(v.space) {
                    Some(s @ (Space::Global | Space::Shared | Space::Const)) => s,
                    _ => continue,
                };
                let module = v.scope == VarScope::Module;
                if module && let Some(&r) = by_name.get(&v.name) {
                    map[vi] = Some(r);
                    continue;
                }
                let is_dynamic = space == Space::Shared
                    && v.size_bytes.is_none()
                    && v.linkage.as_deref() == Some("extern");
                if is_dynamic && let Some(r) = dynamic {
                    map[vi] = Some(r);
                    if module {
                        by_name.insert(v.name.clone(), r);
                    }
                    continue;
                }
                let size = if is_dynamic {
                    u64::from(input.dynamic_shared)
                } else {
                    v.size_bytes.unwrap_or(0)
                };
                if space != Space::Global && size >= 1 << SPACE_SLOT_BITS {
                    let what = format!("variable `{}`", v.name);
                    let room = format!("1 MiB per .{} variable", space.name());
                    return Err((address_map(&what, size, &room), d));
                }
                let base = match space {
                    Space::Global => match place_global(size) {
                        Some(b) => b,
                        None => {
                            let what = format!("variable `{}`", v.name);
                            return Err((
                                address_map(&what, size, "2^61 bytes of global memory"),
                                d,
                            ));
                        }
                    },
                    Space::Shared if packed_shared => {
                        // wgmma descriptors hold 18 address bits: the
                        // kernel's shared variables are packed into one
                        // 256 KiB window (`wgmma::SHARED_PACK_*`).
                        match wgmma::pack_shared(&mut next_packed, size) {
                            Some(b) => b,
                            None => {
                                let what = format!("variable `{}`", v.name);
                                return Err((
                                    address_map(
                                        &what,
                                        size,
                                        "256 KiB of shared memory in a kernel with wgmma descriptors",
                                    ),
                                    d,
                                ));
                            }
                        }
                    }
                    _ => {
                        let k = usize::from(space != Space::Shared);
                        counters[k] += 1;
                        (counters[k] - 1) << SPACE_SLOT_BITS
                    }
                };
                let r = regions.len() as u32;
                let bound = if module {
                    input.bindings.global(&v.name)
                } else {
                    None
                };
                let (init, tensor) = match bound {
                    Some(GlobalContents::Input { tensor }) => {
                        let t = &input.tensors[*tensor as usize];
                        let init = Init::Input {
                            tensor: *tensor,
                            fmt: Fmt::of_dtype(t.dtype),
                            esize: t.dtype.size_bytes() as u8,
                        };
                        (init, Some(*tensor))
                    }
                    _ if space == Space::Shared => (Init::Uninit, None),
                    _ => (Init::Filled, None),
                };
                regions.push(Region {
                    name: if is_dynamic {
                        format!("{} (dynamic shared)", v.name)
                    } else {
                        v.name.clone()
                    },
                    space,
                    base,
                    size,
                    elem: var_elem(v.ty, v.vector),
                    init,
                    tensor,
                });
                let fill = if matches!(init, Init::Filled) {
                    Slot::Byte(0)
                } else {
                    Slot::Unwritten
                };
                let mut vslots = Slots::metered(size as usize, fill, &meter);
                match bound {
                    // The spec's values replace the initialiser.
                    Some(GlobalContents::Bytes(bytes)) => crate::bindings::fill(&mut vslots, bytes),
                    Some(GlobalContents::Input { .. }) => {}
                    None => {
                        if v.init.is_some() {
                            pending_init.push((r, fi, vi));
                        }
                    }
                }
                slots.push(vslots);
                if is_dynamic {
                    dynamic = Some(r);
                }
                if module {
                    by_name.insert(v.name.clone(), r);
                }
                map[vi] = Some(r);
            }
            var_region.push(map);
        }
        // Kernel params.
        let kparams: Vec<_> = input
            .kernel
            .params
            .iter()
            .filter(|p| !p.is_return)
            .collect();
        let mut param_offsets = Vec::with_capacity(kparams.len());
        let mut psize = 0u64;
        for p in &kparams {
            let align = u64::from(p.align.unwrap_or(0))
                .max(p.ty.size_bytes())
                .max(1);
            psize = psize.div_ceil(align) * align;
            param_offsets.push(psize);
            psize += p.size_bytes.unwrap_or_else(|| p.ty.size_bytes());
        }
        if psize > 1 << SPACE_SLOT_BITS {
            let room = "1 MiB of kernel parameters";
            return Err((address_map("the kernel parameter block", psize, room), d));
        }
        let param_region = regions.len() as u32;
        regions.push(Region {
            name: "kernel parameters".into(),
            space: Space::Param,
            base: 1 << SPACE_SLOT_BITS,
            size: psize,
            elem: 0,
            init: Init::Params,
            tensor: None,
        });
        let mut pslots = Slots::metered(psize as usize, Slot::Unwritten, &meter);
        let mut d = d;
        for (i, p) in kparams.iter().enumerate() {
            if let Some(&ParamValue::Symbol { input: sym }) = input.params.get(i) {
                // A symbolic scalar: the param's bytes hold one real value,
                // input `sym` element 0.
                let k = (sym as usize).wrapping_sub(input.tensors.len());
                if let Some(fmt) = input.symbols.get(k).and_then(|s| Fmt::of_dtype(s.dtype)) {
                    let v = d.input(sym, 0, fmt);
                    let off = param_offsets[i] as usize;
                    for b in 0..fmt.size() {
                        if off + (b as usize) < pslots.len() {
                            pslots.set(off + b as usize, Slot::Data { v, fmt, idx: b });
                        }
                    }
                }
                continue;
            }
            let off = param_offsets[i] as usize;
            let mut put = |at: usize, bits: u64, n: usize| {
                for b in 0..n.min(8) {
                    if at + b < pslots.len() {
                        pslots.set(at + b, Slot::Byte((bits >> (8 * b)) as u8));
                    }
                }
            };
            match input.params.get(i) {
                Some(ParamValue::Tensor { tensor }) => put(off, regions[*tensor as usize].base, 8),
                Some(ParamValue::Scalar { bits }) => put(off, *bits, p.ty.size_bytes() as usize),
                Some(ParamValue::Struct { index }) => {
                    for f in input
                        .bindings
                        .structs
                        .get(*index as usize)
                        .into_iter()
                        .flatten()
                    {
                        let at = off + f.offset as usize;
                        match f.what {
                            FieldKind::Tensor { tensor } => {
                                put(at, regions[tensor as usize].base, 8)
                            }
                            FieldKind::Scalar { bits, bytes } => put(at, bits, usize::from(bytes)),
                        }
                    }
                }
                _ => {}
            }
        }
        slots.push(pslots);
        // Initialisers (after all regions exist, so symbol addresses resolve).
        let resolve = |name: &str| -> Option<u64> {
            let r = *by_name.get(name)?;
            let reg = &regions[r as usize];
            Some(reg.space.window() + reg.base)
        };
        for (r, fi, vi) in pending_init {
            let v = &funcs[fi].ir.vars[vi];
            if let Some(bytes) = init_bytes(v, &resolve) {
                let s = &mut slots[r as usize];
                for (i, b) in bytes.into_iter().enumerate() {
                    let b = Slot::Byte(b);
                    if i < s.len() && s.get(i) != b {
                        s.set(i, b);
                    }
                }
            }
        }
        let mut lookup: [Vec<(u64, u64, u32)>; 4] = Default::default();
        for (i, r) in regions.iter().enumerate() {
            if let Some(k) = space_ix(r.space) {
                lookup[k].push((r.base, r.base + r.size, i as u32));
            }
        }
        for l in &mut lookup {
            l.sort_unstable();
        }
        // Tensor Memory (tcgen05): one CTA-wide region outside every
        // address lookup (`tmem.rs`).
        let tmem_region = funcs.iter().any(|f| tmem::uses_tmem(&f.ir)).then(|| {
            let r = tmem::region();
            slots.push(Slots::metered(r.size as usize, Slot::Unwritten, &meter));
            regions.push(r);
            (regions.len() - 1) as u32
        });
        // Input-only tensors are never written (a store to one is
        // unsupported), so their reads cannot race: no shadow, no footprint.
        let input_only = |r: &Region| {
            r.tensor
                .is_some_and(|t| input.tensors[t as usize].role == crate::input::Role::Input)
        };
        let shadows = regions
            .iter()
            .map(|r| {
                (matches!(r.space, Space::Global | Space::Shared) && !input_only(r))
                    .then(|| ShadowMem::metered(r.size as usize, &meter))
            })
            .collect();
        let footprints = regions
            .iter()
            .map(|r| {
                (r.tensor.is_some() && !input_only(r))
                    .then(|| FootprintBuilder::metered(r.size as usize, &meter))
            })
            .collect();
        // Copies completing on an mbarrier are stamped by per-thread async
        // agents: only kernels that issue them pay for the extra clocks.
        let mbar_agents = funcs.iter().any(|f| {
            f.ir.instrs.iter().any(|i| {
                matches!(
                    i.instr,
                    ptxeq_ir::Instr::CpAsyncMbarrierArrive { .. }
                        | ptxeq_ir::Instr::CpAsyncBulk(_)
                        | ptxeq_ir::Instr::Tcgen05(ptxeq_ir::Tcgen05Op::Commit { .. })
                )
            })
        });
        let exec_slots = exec_order::needs_exec_slots(&funcs);
        let multicast = funcs.iter().any(|f| {
            f.ir.instrs
                .iter()
                .any(|i| matches!(&i.instr, ptxeq_ir::Instr::CpAsyncBulk(b) if b.multicast))
        });
        let cta_state = cta::CtaState::new(input, &funcs, cta, tmem_region);
        let mut e = Engine {
            input,
            funcs: Rc::new(funcs),
            d,
            cta: cta_state,
            mem: memstate::MemState {
                regions,
                slots,
                shadows,
                footprints,
                lookup,
                var_region,
                param_region,
                param_offsets,
                meter,
            },
            clocks: Clocks::new(
                nthreads as usize
                    * tmem::clock_blocks(mbar_agents, tmem_region.is_some(), multicast, exec_slots),
            ),
            queue: (0..nthreads).collect(),
            log: findings::FindingLog::new(input.limits.max_findings_per_kind),
            stats: Stats {
                threads: nthreads,
                ..Stats::default()
            },
            guard: None,
            cur_instr: 0,
            sched_hash: 0,
            sched_events: 0,
            cta_ids: Rc::from(vec![cta]),
            grid: None,
            keep_result: false,
            cov: None,
            mbar_agents,
            multicast,
            exec_slots,
            writers: writers::Writers::new(input),
            cluster: cluster::ClusterBarrier::default(),
            unit: None,
            gsync: None,
        };
        for t in 0..nthreads {
            if e.push_frame(t, 0, Vec::new()).is_err() {
                break;
            }
        }
        e.check_memory_state(0);
        Ok(e)
    }

    /// Threads in the CTA.
    pub(crate) fn nthreads(&self) -> u32 {
        self.cta.nthreads
    }

    /// The CTA id of access-stamp index `ix`.
    pub(crate) fn cta_of(&self, ix: u32) -> [u32; 3] {
        self.cta_ids
            .get(ix as usize)
            .copied()
            .unwrap_or(self.cta.id)
    }

    /// Records the peak of the touched-memory state and checks it against
    /// `max_memory_state_bytes`; over the limit, a `ResourceLimit` finding
    /// names the regions holding the most state and the run halts
    /// (returns `false`). `t` is the running thread (for the report).
    #[cold]
    #[inline(never)]
    pub(crate) fn check_memory_state(&mut self, t: u32) -> bool {
        let now = self.mem.meter.bytes();
        self.stats.peak_memory_state_bytes = self.stats.peak_memory_state_bytes.max(now);
        let limit = self.input.limits.max_memory_state_bytes;
        if now <= limit {
            return true;
        }
        // Who holds it: CTA-wide regions, then per-thread regions summed
        // by name.
        let mut by_region: Vec<(u64, String)> = Vec::new();
        for (i, r) in self.mem.regions.iter().enumerate() {
            let bytes = self.mem.slots[i].bytes()
                + self.mem.shadows[i].as_ref().map_or(0, ShadowMem::bytes)
                + self.mem.footprints[i]
                    .as_ref()
                    .map_or(0, FootprintBuilder::bytes);
            let what = match r.tensor {
                Some(_) => format!("tensor `{}`", r.name),
                None => format!(".{} `{}`", r.space.name(), r.name),
            };
            by_region.push((bytes, what));
        }
        let mut private: FxHashMap<String, u64> = FxHashMap::default();
        for th in &self.cta.threads {
            for p in &th.private {
                *private
                    .entry(format!(
                        ".{} `{}` (all threads)",
                        p.region.space.name(),
                        p.region.name
                    ))
                    .or_default() += p.slots.bytes();
            }
        }
        by_region.extend(private.into_iter().map(|(k, v)| (v, k)));
        by_region.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let top: Vec<String> = by_region
            .iter()
            .filter(|(b, _)| *b > 0)
            .take(3)
            .map(|(b, w)| format!("{w} {b} bytes"))
            .collect();
        let th = self.thread_ref(t);
        let instr = unpack_instr(self.cur_instr);
        let msg = format!(
            "{th}, {instr}: the state the engine keeps for the memory this CTA touched \
             (contents, race shadows, footprints) reached {now} bytes, over the limit of \
             {limit} bytes (max_memory_state_bytes); most held by: {}",
            top.join(", ")
        );
        self.report(
            Finding::new(FindingKind::ResourceLimit, msg)
                .at(Some(th), Some(instr))
                .with_reason("memory state limit"),
        );
        self.log.halt();
        false
    }

    /// Keeps no race shadows from here on (a replay of a run whose races
    /// were judged): every access skips the race check.
    pub(crate) fn drop_race_shadows(&mut self) {
        for s in &mut self.mem.shadows {
            *s = None;
        }
    }

    /// Starts recording [`Coverage`] (before [`Engine::run`]).
    pub(crate) fn enable_coverage(&mut self) {
        let lens = self.funcs.iter().map(|f| f.ir.instrs.len());
        self.cov = Some(Box::new(Coverage::new(lens, self.cta.nthreads as usize)));
        for th in &mut self.cta.threads {
            for fr in &mut th.frames {
                fr.prov = vec![0; fr.regs.len()];
            }
        }
    }

    /// The coverage recorded, if it was enabled.
    pub(crate) fn take_coverage(&mut self) -> Option<Coverage> {
        self.cov.take().map(|c| *c)
    }

    /// The thread of clock slot `t` (an async agent or tcgen05 agent
    /// slot names its thread).
    pub(crate) fn thread_ref(&self, t: u32) -> ThreadRef {
        let t = t % self.cta.nthreads;
        ThreadRef {
            tid: self.cta.threads[t as usize].tid,
            linear: t,
        }
    }

    /// Records the current instruction of thread `t` as the last writer
    /// of `[off, off + width)` in CTA-wide region `r` (`writers.rs`).
    #[inline]
    pub(crate) fn note_writer(&mut self, t: u32, r: u32, off: u64, width: u8) {
        if self.writers.wants(r) {
            let site = crate::result::StoreSite {
                instr: unpack_instr(self.cur_instr),
                thread: self.thread_ref(t),
                cta: self.cta.id,
            };
            self.writers.note(r, off, u64::from(width), site);
        }
    }

    /// Records a finding (capped per kind); fatal kinds halt the run.
    #[cold]
    #[inline(never)]
    pub(crate) fn report(&mut self, f: Finding) {
        self.log.record(f);
    }

    /// Records a fatal finding at thread `t`'s current instruction.
    #[cold]
    #[inline(never)]
    pub(crate) fn fail(
        &mut self,
        t: u32,
        kind: FindingKind,
        reason: &str,
        message: String,
    ) -> Halt {
        let instr = unpack_instr(self.cur_instr);
        let th = self.thread_ref(t);
        let msg = format!("{th}, {instr}: {message}");
        self.report(
            Finding::new(kind, msg)
                .at(Some(th), Some(instr))
                .with_reason(reason),
        );
        self.log.halt();
        Halt
    }

    /// An unsupported construct at the current instruction.
    #[cold]
    #[inline(never)]
    pub(crate) fn unsupported(&mut self, t: u32, reason: &str, detail: String) -> Halt {
        let m = if detail.is_empty() {
            reason.to_string()
        } else {
            format!("{reason}: {detail}")
        };
        self.fail(t, FindingKind::Unsupported, reason, m)
    }

    /// A non-fatal finding at the current instruction.
    #[cold]
    #[inline(never)]
    pub(crate) fn note(
        &mut self,
        t: u32,
        kind: FindingKind,
        message: String,
        loc: Option<MemLocation>,
    ) {
        let instr = unpack_instr(self.cur_instr);
        let th = self.thread_ref(t);
        let mut f =
            Finding::new(kind, format!("{th}, {instr}: {message}")).at(Some(th), Some(instr));
        f.location = loc;
        self.report(f);
    }

    fn sched_event(&mut self, t: u32, ev: u64) {
        let pc = self.cta.threads[t as usize]
            .frames
            .last()
            .map_or(0, |f| pack_instr(f.func, f.pc));
        self.sched_hash = mix(mix(self.sched_hash, u64::from(t) << 8 | ev), u64::from(pc));
        self.sched_events += 1;
    }

    /// Makes a blocked thread runnable again with its pc past the
    /// blocking instruction.
    pub(crate) fn wake(&mut self, t: u32) {
        let th = &mut self.cta.threads[t as usize];
        if let Some(f) = th.frames.last_mut() {
            f.pc += 1;
        }
        th.status = Status::Ready;
        self.queue.push_back(t);
    }

    /// Runs the CTA to completion, a deadlock, or a fatal finding.
    pub(crate) fn run(&mut self) {
        while !self.log.halted() {
            let Some(t) = self.queue.pop_front() else {
                if self.resolve_quiescent() {
                    continue;
                }
                if self.unit.is_some() && self.next_runnable_slot() {
                    continue;
                }
                break;
            };
            if self.cta.threads[t as usize].status != Status::Ready {
                continue;
            }
            self.run_thread(t);
        }
        if self.unit.is_some() {
            self.finish_unit_slots();
        } else if !self.log.halted() {
            self.check_stuck();
            self.tmem_finish();
        }
    }

    fn run_thread(&mut self, t: u32) {
        let funcs = self.funcs.clone();
        self.sched_event(t, 1);
        let max = self.input.limits.max_steps;
        loop {
            if self.mem.meter.bytes() > self.stats.peak_memory_state_bytes
                && !self.check_memory_state(t)
            {
                return;
            }
            if self.stats.instructions_executed >= max {
                let _ = self.step_limit(t);
                return;
            }
            self.stats.instructions_executed += 1;
            match self.step(&funcs, t) {
                Ok(Flow::Block) => {
                    self.sched_event(t, 2);
                    return;
                }
                Ok(Flow::Exit) => {
                    self.sched_event(t, 3);
                    self.exit_thread(t);
                    return;
                }
                Ok(_) => {
                    if self.log.halted() {
                        return;
                    }
                }
                Err(Halt) => {
                    self.log.halt();
                    return;
                }
            }
        }
    }

    /// Executes one instruction of thread `t`.
    fn step(&mut self, funcs: &[FuncInfo], t: u32) -> R<Flow> {
        let (f, pc) = {
            let fr = self.cta.threads[t as usize].frames.last().ok_or(Halt)?;
            (fr.func, fr.pc)
        };
        let info = &funcs[f as usize];
        let Some(ins) = info.ir.instrs.get(pc as usize) else {
            // Falling off the end of a body is a return.
            self.cur_instr = pack_instr(f, pc);
            return self.do_return(funcs, t);
        };
        self.cur_instr = pack_instr(f, pc);
        if D::LAYOUT_TAGS {
            self.d.layout_at(self.cur_instr);
        }
        if D::AT_INSTR {
            self.d.at_instr(self.cur_instr);
        }
        self.cta.threads[t as usize].tracer.step();
        self.guard = None;
        if let Some(g) = ins.guard {
            match self.guard_value(t, info, ins, g)? {
                Some(true) => {}
                Some(false) => {
                    self.cta.threads[t as usize]
                        .frames
                        .last_mut()
                        .ok_or(Halt)?
                        .pc += 1;
                    return Ok(Flow::Next);
                }
                None => {}
            }
        }
        if let Some(c) = self.cov.as_deref_mut() {
            c.executed_at(self.cur_instr);
        }
        let flow = self.exec(funcs, info, t, ins);
        if self.unit.is_some() {
            // A distributed-shared-memory access swapped another CTA's
            // shared memory in for this instruction only.
            self.end_remote();
        }
        let flow = flow?;
        self.guard = None;
        match flow {
            Flow::Next => {
                self.cta.threads[t as usize]
                    .frames
                    .last_mut()
                    .ok_or(Halt)?
                    .pc += 1;
            }
            Flow::Jump(target) => {
                let th = &mut self.cta.threads[t as usize];
                if target <= pc {
                    th.back_edges.taken(pack_instr(f, pc));
                }
                th.frames.last_mut().ok_or(Halt)?.pc = target;
                th.tracer.jump(f, target);
            }
            Flow::Transfer => {
                let th = &mut self.cta.threads[t as usize];
                if let Some(fr) = th.frames.last() {
                    let (nf, npc) = (fr.func, fr.pc);
                    th.tracer.jump(nf, npc);
                }
            }
            Flow::Block | Flow::Exit => {}
        }
        Ok(flow)
    }

    /// Builds the result and hands the domain back.
    pub(crate) fn finish_with_domain(mut self) -> (CtaRun<D::Val>, D) {
        if !self.log.halted() {
            for k in 0..self.unit_len() {
                self.switch_to(k);
                self.tma_exit_check();
            }
            self.switch_to(0);
        }
        let outputs = self.collect_outputs();
        let footprint = self.collect_footprint();
        let mut live_cells = 0u64;
        for (i, s) in self.mem.slots.iter().enumerate() {
            if matches!(self.mem.regions[i].space, Space::Global | Space::Shared) {
                for (_, page) in s.allocated() {
                    live_cells += page.iter().filter(|x| **x != Slot::Unwritten).count() as u64;
                }
            }
        }
        self.stats.max_live_cells = live_cells;
        // A read of never-written memory by an instruction that also races
        // is schedule-dependent (another schedule writes first): the race
        // is the finding, not the uninitialised read.
        let racy_reads: FxHashSet<InstrRef> = self
            .log
            .all()
            .iter()
            .filter(|f| f.kind == FindingKind::Race)
            .flat_map(|f| f.accesses.iter().map(|a| a.instr))
            .collect();
        if !racy_reads.is_empty() {
            self.log.retain(|f| {
                !(f.kind == FindingKind::Uninitialised
                    && f.instr.is_some_and(|i| racy_reads.contains(&i)))
            });
        }
        let threads = self.take_unit_threads();
        self.stats.threads = threads.len() as u32;
        let trace = Trace {
            threads: threads.into_iter().map(|t| t.tracer.finish()).collect(),
            schedule_hash: self.sched_hash,
            schedule_events: self.sched_events,
        };
        let (findings, dropped_findings) = self.log.into_parts();
        let run = CtaRun {
            cta: self.cta.id,
            findings,
            dropped_findings,
            stats: self.stats,
            outputs,
            footprint,
            trace,
        };
        (run, self.d)
    }

    fn collect_outputs(&mut self) -> Vec<TensorOutput<D::Val>> {
        let mut out = Vec::new();
        for (i, t) in self.input.tensors.iter().enumerate() {
            if !t.role.is_written() {
                continue;
            }
            let es = t.dtype.size_bytes() as usize;
            let fmt = Fmt::of_dtype(t.dtype).or(Fmt::int_of_dtype(t.dtype));
            let region = self.mem.regions[i].clone();
            let es = es.max(1);
            // The elements with a written byte, from the allocated pages
            // only (in index order).
            let mut written: Vec<usize> = Vec::new();
            for (start, page) in self.mem.slots[i].allocated() {
                for (j, s) in page.iter().enumerate() {
                    let e = (start + j) / es;
                    if *s != Slot::Unwritten && written.last() != Some(&e) {
                        written.push(e);
                    }
                }
            }
            let mut elements = Vec::with_capacity(written.len());
            let mut undefined = Vec::new();
            for e in written {
                let off = e * es;
                if off + es > self.mem.slots[i].len() {
                    continue;
                }
                let (v, info) =
                    load_value(&self.mem.slots[i], &region, off, es as u8, &mut self.d, 0);
                if matches!(v, Value::Undef) {
                    undefined.push(e as u64);
                }
                let ov = if info.uninit {
                    OutputValue::Unsupported("partly written element".into())
                } else {
                    self.output_value(v, fmt)
                };
                elements.push((e as u64, ov));
            }
            // An undefined value whose cause is already reported (a read of
            // uninitialised memory) is not reported twice.
            let cause_reported = self
                .log
                .all()
                .iter()
                .any(|f| f.kind == FindingKind::Uninitialised);
            if !undefined.is_empty()
                && self.input.limits.report_undefined_outputs
                && !cause_reported
            {
                self.undefined_outputs(&t.name, &undefined);
            }
            let writers = self.writers.of(i);
            out.push(TensorOutput {
                tensor: i as u32,
                name: t.name.clone(),
                elements,
                writers,
            });
        }
        out
    }

    fn output_value(&mut self, v: Value<D::Val>, fmt: Option<Fmt>) -> OutputValue<D::Val> {
        match (v, fmt) {
            // Integer data in an integer tensor of its width.
            (
                Value::Data {
                    v,
                    lo: 0,
                    len,
                    fmt: f,
                },
                Some(tf),
            ) if f.is_int() && tf == f && len == f.size() => OutputValue::Data(v),
            (Value::Data { fmt: f, .. }, Some(tf)) if f.is_int() && !tf.is_int() => {
                OutputValue::Unsupported(
                    "the bits of integer tensor data stored into a float tensor".into(),
                )
            }
            (Value::Data { fmt: f, .. }, Some(tf)) if !f.is_int() && tf.is_int() => {
                OutputValue::Unsupported("real value stored into an integer tensor".into())
            }
            (v @ (Value::Data { .. } | Value::Pack(_)), Some(tf))
                if tf.is_int() && values::has_int_data(&v) =>
            {
                // Slices of integer data making up the element.
                match self.element_int(&v, tf) {
                    Some(x) => OutputValue::Data(x),
                    None => OutputValue::Unsupported(
                        "an integer element assembled from parts of integer data".into(),
                    ),
                }
            }
            (Value::Bits(b), Some(tf)) if tf.is_int() => OutputValue::Bits(b),
            (
                Value::Data {
                    v,
                    lo: 0,
                    len,
                    fmt: f,
                },
                Some(tf),
            ) if len == f.size() && !f.is_int() && !tf.is_int() => OutputValue::Data(v),
            (Value::Bits(b), Some(fmt)) => match self.d.float_const(fmt, b) {
                Some(x) => OutputValue::Data(x),
                None => OutputValue::Unsupported("NaN stored".into()),
            },
            (Value::Bits(b), None) => OutputValue::Bits(b),
            (Value::Tainted(o), _) => OutputValue::Unsupported(format!(
                "integer that depends on tensor data (from {})",
                unpack_instr(o)
            )),
            (Value::Undef, _) => OutputValue::Unsupported("undefined value stored".into()),
            (Value::Data { .. }, None) => {
                OutputValue::Unsupported("real value stored into an integer tensor".into())
            }
            _ => OutputValue::Unsupported("mixed-width access to a real value".into()),
        }
    }

    /// An integer element made of slices of integer data (and concrete
    /// bytes), as one integer of the tensor's width.
    fn element_int(&mut self, v: &Value<D::Val>, fmt: Fmt) -> Option<D::Val> {
        match self.int_of(0, v, fmt.bits()) {
            Ok(values::IntArg::Data(x)) => Some(x),
            _ => None,
        }
    }

    fn collect_footprint(&self) -> GlobalFootprint {
        let mut tensors = Vec::new();
        for (i, fp) in self.mem.footprints.iter().enumerate() {
            let (Some(fp), Some(tensor)) = (fp, self.mem.regions[i].tensor) else {
                continue;
            };
            let intervals = fp.intervals(&unpack_instr, &|t| self.thread_ref(t));
            if intervals.is_empty() {
                continue;
            }
            tensors.push(TensorFootprint {
                tensor,
                name: self.mem.regions[i].name.clone(),
                elem: self.mem.regions[i].elem,
                intervals,
            });
        }
        GlobalFootprint {
            cta: self.cta.id,
            tensors,
        }
    }
}
