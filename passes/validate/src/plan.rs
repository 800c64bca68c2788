//! Each instruction as one compact dataflow step: which slots it reads,
//! which it writes, what it loads, and which of its operands must not depend
//! on tensor data (its sinks).
//!
//! Compiling the operand layouts of `ptxeq_ir::Instr` once, here, keeps the
//! fixpoint loop in `flow` free of per-opcode matching and keeps every
//! opcode decision in one table a reviewer can read top to bottom.
//!
//! A *slot* is one tracked storage cell: a register, the carry flag `CC`, a
//! `.param`-space variable (call-site arguments and return values) or one of
//! the function's own params. Memory other than `.param` is not tracked:
//! loads from tensors are sources of data by themselves, and shared/local
//! memory is the dynamic check's business.

use ptxeq_ir::{
    AddrBase, BarKind, Carry, Control as IrControl, Guard, Instr, InstrData, KernelIr, MbarrierOp,
    Operand, RegId, StateSpace, Symbol, Tcgen05Op, WgmmaOp, WmmaOp,
};

/// Slot numbering of one function: registers, then `CC`, then variables,
/// then params.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slots {
    pub n_regs: u32,
    pub n_vars: u32,
    pub n_params: u32,
}

impl Slots {
    pub fn of(f: &KernelIr) -> Slots {
        Slots {
            n_regs: f.regs.len() as u32,
            n_vars: f.vars.len() as u32,
            n_params: f.params.len() as u32,
        }
    }

    pub fn len(&self) -> usize {
        self.n_regs as usize + 1 + self.n_vars as usize + self.n_params as usize
    }

    pub fn reg(&self, r: RegId) -> Option<u32> {
        (r.0 < self.n_regs).then_some(r.0)
    }

    pub fn cc(&self) -> u32 {
        self.n_regs
    }

    pub fn var(&self, v: u32) -> Option<u32> {
        (v < self.n_vars).then(|| self.n_regs + 1 + v)
    }

    pub fn param(&self, p: u32) -> Option<u32> {
        (p < self.n_params).then(|| self.n_regs + 1 + self.n_vars + p)
    }

    /// What a slot is, for messages.
    pub fn kind(&self, s: u32) -> SlotKind {
        if s < self.n_regs {
            SlotKind::Reg(s)
        } else if s == self.n_regs {
            SlotKind::Cc
        } else if s < self.n_regs + 1 + self.n_vars {
            SlotKind::Var(s - self.n_regs - 1)
        } else {
            SlotKind::Param(s - self.n_regs - 1 - self.n_vars)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SlotKind {
    Reg(u32),
    Cc,
    Var(u32),
    Param(u32),
}

/// A destination. Weak writes keep the old value too (a lane of a vector
/// register, part of a `.param` variable); a guarded instruction makes every
/// write weak.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Write {
    pub slot: u32,
    pub weak: bool,
}

/// Why an operand must not depend on tensor data.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum SinkWhat {
    /// The instruction's guard predicate.
    Guard(GuardOf),
    BranchIndex,
    CallTarget,
    /// The address base register of a memory access.
    Address {
        space: StateSpace,
        access: Access,
    },
    /// `wmma.load/store` stride.
    Stride,
    /// `cp.async` source size (how many bytes are copied, the rest zeroed).
    CopySize,
    /// Any other register operand of a bulk/tensor copy (coordinates, sizes).
    BulkOperand,
    /// A `wgmma` matrix descriptor (it encodes a shared-memory address).
    Descriptor,
    BarrierId,
    BarrierCount,
    /// Member mask of `bar.warp.sync`.
    WarpSyncMask,
    ShuffleLane,
    ShuffleClamp,
    /// Member mask of `shfl`/`vote`/`match`/`redux`/`elect`.
    MemberMask,
}

/// What a guard predicate controls.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GuardOf {
    Branch,
    Call,
    Ret,
    Exit,
    Trap,
    Barrier,
    Collective,
}

/// The kind of memory access, for messages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Access {
    Load,
    Store,
    Atomic,
    Copy,
    Barrier,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Sink {
    pub slot: u32,
    pub what: SinkWhat,
}

/// Where a load's value comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Load {
    None,
    /// A memory read through `base`: tensor data when `tensor_space` (global
    /// or generic) and `base` points into a tensor param; data as well when
    /// `base` itself is data (a gather).
    Memory {
        base: Option<u32>,
        tensor_space: bool,
    },
    /// `ld.param` of a tracked `.param` cell: copies its value.
    Slot(u32),
}

/// The callee of a `call`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Callee {
    Direct(String),
    /// Through a register (or something the IR could not name).
    Indirect,
}

/// A `call`: argument slots in order (`None` for immediates), return slots.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct CallPlan {
    pub callee: Callee,
    pub args: Vec<Option<u32>>,
    pub rets: Vec<Option<u32>>,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Control {
    None,
    Call(CallPlan),
    Ret,
}

/// One compiled instruction.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Step {
    pub guard: Option<u32>,
    pub dsts: Vec<Write>,
    pub srcs: Vec<u32>,
    /// Whether the destination can be a pointer derived from a source
    /// (`add`, `mov`, `cvta`, `selp`, ...): tracks tensor base pointers.
    pub ptr_flows: bool,
    pub load: Load,
    /// Checked in order; the first data-dependent one is reported.
    pub sinks: Vec<Sink>,
    pub control: Control,
}

/// Compiles every instruction of `f`.
pub(crate) fn plan_function(f: &KernelIr, slots: &Slots) -> Vec<Step> {
    f.instrs.iter().map(|d| plan(f, slots, d)).collect()
}

struct B<'a> {
    slots: &'a Slots,
    f: &'a KernelIr,
    ops: &'a [Operand],
    step: Step,
}

impl<'a> B<'a> {
    fn op(&self, i: usize) -> Option<&'a Operand> {
        self.ops.get(i)
    }

    fn dst(&mut self, i: usize) {
        if let Some(op) = self.op(i) {
            push_writes(self.slots, op, false, &mut self.step.dsts);
        }
    }

    fn dsts(&mut self, range: std::ops::Range<usize>) {
        for i in range {
            self.dst(i);
        }
    }

    fn src(&mut self, i: usize) {
        if let Some(op) = self.op(i) {
            push_reads(self.slots, op, &mut self.step.srcs);
        }
    }

    fn srcs_from(&mut self, start: usize) {
        for i in start..self.ops.len() {
            self.src(i);
        }
    }

    /// Destinations `0..n_dst`, sources the rest.
    fn plain(&mut self, n_dst: usize, ptr_flows: bool) {
        self.dsts(0..n_dst);
        self.srcs_from(n_dst);
        self.step.ptr_flows = ptr_flows;
    }

    fn carry(&mut self, c: Carry) {
        let cc = self.slots.cc();
        if matches!(c, Carry::In | Carry::InOut) {
            self.step.srcs.push(cc);
        }
        if matches!(c, Carry::Out | Carry::InOut) {
            self.step.dsts.push(Write {
                slot: cc,
                weak: false,
            });
        }
    }

    /// Every register the operand reads becomes a sink.
    fn sink(&mut self, i: usize, what: SinkWhat) {
        let mut regs = Vec::new();
        if let Some(op) = self.op(i) {
            push_reads(self.slots, op, &mut regs);
        }
        for slot in regs {
            self.step.sinks.push(Sink { slot, what });
        }
    }

    /// The address base register of operand `i` becomes a sink; returns it.
    fn address(&mut self, i: usize, space: StateSpace, access: Access) -> Option<u32> {
        let base = match self.op(i) {
            Some(Operand::Addr(a)) => match &a.base {
                AddrBase::Reg(r) => self.slots.reg(*r),
                _ => None,
            },
            _ => None,
        }?;
        self.step.sinks.push(Sink {
            slot: base,
            what: SinkWhat::Address { space, access },
        });
        Some(base)
    }

    /// The `.param` cell an address names directly (`[param0+4]`), with
    /// whether an access of `bytes` at its offset covers the whole cell.
    fn param_cell(&self, i: usize, bytes: u64) -> Option<(u32, bool)> {
        let a = self.op(i)?.as_addr()?;
        let (slot, size) = match &a.base {
            AddrBase::Symbol(Symbol::Var(v)) => {
                let decl = self.f.vars.get(v.index())?;
                if decl.space != StateSpace::Param {
                    return None;
                }
                (self.slots.var(v.0)?, decl.size_bytes)
            }
            AddrBase::Symbol(Symbol::Param(p)) => {
                let decl = self.f.params.get(p.index())?;
                (self.slots.param(p.0)?, decl.size_bytes)
            }
            _ => return None,
        };
        let whole = a.offset == 0 && size.is_some_and(|s| bytes >= s);
        Some((slot, whole))
    }
}

fn push_writes(slots: &Slots, op: &Operand, weak: bool, out: &mut Vec<Write>) {
    match op {
        Operand::Reg(r) => out.extend(slots.reg(*r).map(|slot| Write { slot, weak })),
        Operand::RegLane { reg, .. } => {
            out.extend(slots.reg(*reg).map(|slot| Write { slot, weak: true }))
        }
        Operand::Vector(v) => {
            for e in v {
                push_writes(slots, e, weak, out);
            }
        }
        _ => {}
    }
}

fn push_reads(slots: &Slots, op: &Operand, out: &mut Vec<u32>) {
    match op {
        Operand::Reg(r) | Operand::RegLane { reg: r, .. } => out.extend(slots.reg(*r)),
        Operand::Not(inner) => push_reads(slots, inner, out),
        Operand::Vector(v) | Operand::List(v) => {
            for e in v {
                push_reads(slots, e, out);
            }
        }
        Operand::Addr(a) => {
            if let AddrBase::Reg(r) = &a.base {
                out.extend(slots.reg(*r));
            }
        }
        _ => {}
    }
}

fn is_tensor_space(s: StateSpace) -> bool {
    matches!(s, StateSpace::Global | StateSpace::Generic)
}

/// What a guard steers, from the instruction's facts (`ptxeq_ir::facts`).
fn guard_of(instr: &Instr) -> Option<GuardOf> {
    if let Some(c) = instr.control() {
        return Some(match c {
            IrControl::Branch => GuardOf::Branch,
            IrControl::Call => GuardOf::Call,
            IrControl::Return => GuardOf::Ret,
            IrControl::Exit => GuardOf::Exit,
            IrControl::Halt => GuardOf::Trap,
            IrControl::Barrier => GuardOf::Barrier,
        });
    }
    instr.collective().map(|_| GuardOf::Collective)
}

fn plan(f: &KernelIr, slots: &Slots, d: &InstrData) -> Step {
    let guard = d.guard.and_then(|Guard { reg, .. }| slots.reg(reg));
    // The destination positions are the instruction's facts
    // (`ptxeq_ir::facts`); what is special below is which other operands
    // are addresses or must be concrete.
    let n_dst = d.instr.dst_count().unwrap_or(0);
    let mut b = B {
        slots,
        f,
        ops: &d.operands,
        step: Step {
            guard,
            dsts: Vec::new(),
            srcs: Vec::new(),
            ptr_flows: false,
            load: Load::None,
            sinks: Vec::new(),
            control: Control::None,
        },
    };
    if let (Some(g), Some(of)) = (guard, guard_of(&d.instr)) {
        b.step.sinks.push(Sink {
            slot: g,
            what: SinkWhat::Guard(of),
        });
    }
    use Instr::*;
    match &d.instr {
        Add { carry, .. } | Sub { carry, .. } | Mad { carry, .. } => {
            b.plain(n_dst, true);
            b.carry(*carry);
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
        | Sad { .. }
        | Dp4a { .. }
        | Dp2a { .. }
        | Math { .. }
        | Idiom { .. }
        | Testp { .. }
        | Not { .. }
        | Cnot { .. }
        | Lop3 { .. }
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
        | Fns { .. }
        | Bmsk { .. }
        | Szext { .. }
        | Set { .. }
        | Isspacep { .. }
        | Getctarank { .. }
        | Movmatrix { .. }
        | Mma(_)
        | Wmma(WmmaOp::Mma { .. }) => b.plain(n_dst, false),
        And { .. }
        | Or { .. }
        | Xor { .. }
        | Mov { .. }
        | Cvt { .. }
        | Cvta { .. }
        | Selp { .. }
        | Slct { .. }
        | Mapa { .. } => b.plain(n_dst, true),
        Setp { .. } => b.plain(n_dst, false),
        Ld(m) | Ldu(m) => {
            b.dsts(0..n_dst);
            let bytes = m.ty.size_bytes() * u64::from(m.vector.unwrap_or(1));
            if m.space == StateSpace::Param
                && let Some((cell, _)) = b.param_cell(1, bytes)
            {
                b.step.load = Load::Slot(cell);
                b.step.ptr_flows = true;
            } else {
                let base = b.address(1, m.space, Access::Load);
                b.step.load = Load::Memory {
                    base,
                    tensor_space: is_tensor_space(m.space),
                };
            }
        }
        St(m) => {
            let bytes = m.ty.size_bytes() * u64::from(m.vector.unwrap_or(1));
            if m.space == StateSpace::Param
                && let Some((cell, whole)) = b.param_cell(0, bytes)
            {
                b.step.dsts.push(Write {
                    slot: cell,
                    weak: !whole,
                });
                b.src(1);
                b.step.ptr_flows = true;
            } else {
                b.address(0, m.space, Access::Store);
            }
        }
        Atom(m) => {
            // The returned value is not marked as tensor data: it depends
            // on the order of the atomics as well, and the engine keeps an
            // integer one opaque and judges a branch on it (unsupported,
            // or the grid-level ticket pattern; docs/semantics.md).
            b.dsts(0..n_dst);
            b.address(1, m.space, Access::Atomic);
        }
        Red(m) => {
            b.address(0, m.space, Access::Atomic);
        }
        Bar { kind, .. } => match kind {
            BarKind::Sync | BarKind::Arrive => {
                b.sink(0, SinkWhat::BarrierId);
                b.sink(1, SinkWhat::BarrierCount);
            }
            BarKind::Red(_) => {
                b.dsts(0..n_dst);
                b.sink(1, SinkWhat::BarrierId);
                if b.ops.len() == 4 {
                    b.sink(2, SinkWhat::BarrierCount);
                }
                let last = b.ops.len().saturating_sub(1);
                if last >= 2 {
                    b.src(last);
                }
            }
        },
        BarWarpSync => b.sink(0, SinkWhat::WarpSyncMask),
        Mbarrier { op, space, .. } => {
            for i in 0..b.ops.len() {
                if matches!(b.op(i), Some(Operand::Addr(_))) {
                    b.address(i, *space, Access::Barrier);
                }
            }
            match op {
                MbarrierOp::Init => b.sink(1, SinkWhat::BarrierCount),
                MbarrierOp::Arrive { .. } => {
                    b.dsts(0..n_dst);
                    b.sink(2, SinkWhat::BarrierCount);
                }
                MbarrierOp::ExpectTx | MbarrierOp::CompleteTx => b.sink(1, SinkWhat::BarrierCount),
                MbarrierOp::Wait { .. } | MbarrierOp::PendingCount => b.dsts(0..n_dst),
                MbarrierOp::Inval => {}
            }
        }
        Activemask => b.dsts(0..n_dst),
        Elect => {
            b.dsts(0..n_dst);
            b.sink(2, SinkWhat::MemberMask);
        }
        Shfl { sync, .. } => {
            b.plain(n_dst, false);
            b.sink(3, SinkWhat::ShuffleLane);
            b.sink(4, SinkWhat::ShuffleClamp);
            if *sync {
                b.sink(5, SinkWhat::MemberMask);
            }
        }
        Vote { sync, .. } => {
            b.dsts(0..n_dst);
            b.src(1);
            if *sync {
                b.sink(2, SinkWhat::MemberMask);
            }
        }
        Match { .. } => {
            b.dsts(0..n_dst);
            b.src(2);
            b.sink(3, SinkWhat::MemberMask);
        }
        Redux { .. } => {
            b.dsts(0..n_dst);
            b.src(1);
            b.sink(2, SinkWhat::MemberMask);
        }
        Wmma(WmmaOp::Load { space, .. }) => {
            b.dsts(0..n_dst);
            let base = b.address(1, *space, Access::Load);
            b.sink(2, SinkWhat::Stride);
            b.step.load = Load::Memory {
                base,
                tensor_space: is_tensor_space(*space),
            };
        }
        Wmma(WmmaOp::Store { space, .. }) => {
            b.address(0, *space, Access::Store);
            b.sink(2, SinkWhat::Stride);
        }
        Ldmatrix(m) => {
            b.dsts(0..n_dst);
            let base = b.address(1, m.space, Access::Load);
            b.step.load = Load::Memory {
                base,
                tensor_space: is_tensor_space(m.space),
            };
        }
        Stmatrix(m) => {
            b.address(0, m.space, Access::Store);
        }
        CpAsync { .. } => {
            b.address(0, StateSpace::Shared, Access::Copy);
            b.address(1, StateSpace::Global, Access::Copy);
            b.sink(3, SinkWhat::CopySize);
        }
        CpAsyncMbarrierArrive { space, .. } => {
            b.address(0, *space, Access::Barrier);
        }
        CpAsyncBulk(bulk) => {
            for i in 0..b.ops.len() {
                match b.op(i) {
                    Some(Operand::Addr(_)) => {
                        let space = if i == 0 { bulk.dst } else { bulk.src };
                        b.address(i, space, Access::Copy);
                    }
                    _ => b.sink(i, SinkWhat::BulkOperand),
                }
            }
        }
        CpReduceAsyncBulk(red) => {
            for i in 0..b.ops.len() {
                match b.op(i) {
                    Some(Operand::Addr(_)) => {
                        let space = if i == 0 { red.dst } else { red.src };
                        b.address(i, space, Access::Copy);
                    }
                    _ => b.sink(i, SinkWhat::BulkOperand),
                }
            }
        }
        // A prefetch reads nothing: its address, size, coordinates and
        // policy must not depend on tensor data.
        CpAsyncBulkPrefetch { .. } => {
            for i in 0..b.ops.len() {
                b.sink(i, SinkWhat::BulkOperand);
            }
        }
        CreatePolicy(_) => b.plain(n_dst, false),
        Wgmma(WgmmaOp::MmaAsync { .. }) => {
            b.plain(n_dst, false);
            if matches!(b.op(1), Some(Operand::Reg(_))) {
                b.sink(1, SinkWhat::Descriptor);
            }
            b.sink(2, SinkWhat::Descriptor);
        }
        // tcgen05: Tensor Memory addresses, column counts and the MMA's
        // descriptors must not depend on tensor data; `ld` writes its
        // registers, `st` reads them.
        Tcgen05(op) => match op {
            Tcgen05Op::Alloc => {
                b.address(0, StateSpace::Shared, Access::Store);
                b.sink(1, SinkWhat::BulkOperand);
            }
            Tcgen05Op::Dealloc => {
                b.sink(0, SinkWhat::BulkOperand);
                b.sink(1, SinkWhat::BulkOperand);
            }
            Tcgen05Op::Ld { .. } => {
                b.dsts(0..n_dst);
                for i in 1..b.ops.len() {
                    b.sink(i, SinkWhat::BulkOperand);
                }
            }
            Tcgen05Op::St { .. } => {
                for i in 0..b.ops.len() - 1 {
                    b.sink(i, SinkWhat::BulkOperand);
                }
                b.src(b.ops.len() - 1);
            }
            Tcgen05Op::Mma { .. } => {
                b.sink(0, SinkWhat::BulkOperand);
                for i in 1..4 {
                    b.sink(i, SinkWhat::Descriptor);
                }
                b.sink(4, SinkWhat::BulkOperand);
            }
            Tcgen05Op::Commit { .. } => {
                b.address(0, StateSpace::Shared, Access::Barrier);
            }
            Tcgen05Op::Relinquish | Tcgen05Op::Wait { .. } | Tcgen05Op::Fence { .. } => {}
        },
        Brx { .. } => b.sink(0, SinkWhat::BranchIndex),
        Call { .. } => {
            let list = |op: Option<&Operand>| -> Vec<Option<u32>> {
                match op {
                    Some(Operand::List(v)) => v.iter().map(|e| call_slot(f, slots, e)).collect(),
                    _ => Vec::new(),
                }
            };
            let rets = list(b.op(0));
            let args = list(b.op(2));
            let callee = match b.op(1) {
                Some(Operand::Symbol {
                    sym: Symbol::Func(name),
                    ..
                }) => Callee::Direct(name.clone()),
                _ => {
                    b.sink(1, SinkWhat::CallTarget);
                    Callee::Indirect
                }
            };
            b.step.control = Control::Call(CallPlan { callee, args, rets });
        }
        Ret { .. } => b.step.control = Control::Ret,
        // No data flow into registers and nothing that must be concrete:
        // control is in the CFG, fences/hints/waits have no operands that
        // matter. `prefetch` is a hint: its address is never dereferenced.
        Bra { .. }
        | Absorbed { .. }
        | Exit
        | Trap
        | Brkpt
        | Nanosleep
        | Prefetch { .. }
        | BarrierCluster { .. }
        | Fence(_)
        | Griddepcontrol { .. }
        | Setmaxnreg { .. }
        | CpAsyncCommitGroup
        | CpAsyncWaitGroup
        | CpAsyncWaitAll
        | CpAsyncBulkCommitGroup
        | CpAsyncBulkWaitGroup { .. }
        | Wgmma(_) => {}
        // Not decoded: later passes report it unsupported by name. Nothing
        // is known about its operands, so nothing is claimed.
        Unknown { .. } => {}
    }
    b.step
}

/// The slot a call argument / return names: a call-site `.param` variable
/// or a register (`.reg` params).
fn call_slot(f: &KernelIr, slots: &Slots, op: &Operand) -> Option<u32> {
    match op {
        Operand::Symbol {
            sym: Symbol::Var(v),
            ..
        } => {
            let decl = f.vars.get(v.index())?;
            (decl.space == StateSpace::Param)
                .then(|| slots.var(v.0))
                .flatten()
        }
        Operand::Symbol {
            sym: Symbol::Param(p),
            ..
        } => slots.param(p.0),
        Operand::Reg(r) => slots.reg(*r),
        _ => None,
    }
}
