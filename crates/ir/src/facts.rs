//! Per-instruction facts, declared once: which operands an instruction
//! writes and reads, what it does to memory, to control flow, and whether
//! it is a warp/CTA collective.
//!
//! Every pass that needs one of these facts reads it here (the idiom
//! matcher's "does this instruction write the sequence's input", the
//! engine's "is this control under a data guard", the validator's guard
//! kinds, the IR verifier's def-before-use). Before issue 19 the engine and
//! the idiom matcher each had an `is_control` list and they disagreed; the
//! classification below follows the PTX ISA's instruction chapters:
//!
//! - *control* ([`Control`]): the control-flow instructions (`bra`, `brx.idx`,
//!   `call`, `ret`, `exit`), the ones that stop the thread (`trap`, and
//!   `brkpt`, which suspends it), and the barriers of the "parallel
//!   synchronization and communication" chapter: `bar`/`barrier`,
//!   `bar.warp.sync`, `barrier.cluster` and `mbarrier` (an arrive/wait on
//!   a barrier object is synchronisation even though the object lives in
//!   shared memory);
//! - *collective* ([`Collective`]): instructions whose result combines
//!   several threads' operands or depends on which threads execute them
//!   together: `shfl`, `vote`, `match`, `redux`, `elect`, `activemask`
//!   and the warp/warpgroup matrix instructions (`mma`, `wmma`, `ldmatrix`,
//!   `stmatrix`, `movmatrix`, `wgmma`). These are not control flow;
//! - *memory* ([`Memory`]): the state space and kind of an access;
//!   `cp.async*` copies and their commit/wait groups are asynchronous.
//!
//! The operand roles are positional (see the layouts in [`crate::instr`]):
//! the first [`Instr::dst_count`] operands are written, the rest read.

use crate::instr::{BarKind, Instr, MbarrierOp, Tcgen05Op, WgmmaOp, WmmaOp};
use crate::kernel::InstrData;
use crate::operand::{Operand, RegId};
use crate::types::StateSpace;

/// What an instruction does to control flow.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Control {
    /// `bra`, `brx.idx`.
    Branch,
    /// `call`.
    Call,
    /// `ret`.
    Return,
    /// `exit`.
    Exit,
    /// `trap`, `brkpt`: the thread stops (with an error / suspended).
    Halt,
    /// `bar`/`barrier`, `bar.warp.sync`, `barrier.cluster`, `mbarrier.*`.
    Barrier,
}

/// Which collective an instruction is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Collective {
    /// `shfl`.
    Shuffle,
    /// `vote`.
    Vote,
    /// `match`.
    Match,
    /// `redux.sync`.
    Reduce,
    /// `elect.sync`.
    Elect,
    /// `activemask`.
    ActiveMask,
    /// `mma`, `wmma`, `ldmatrix`, `stmatrix`, `movmatrix`, `wgmma`.
    Matrix,
}

/// What an instruction does to memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Memory {
    /// `ld`, `ldu`, `wmma.load`, `ldmatrix`.
    Load(StateSpace),
    /// `st`, `wmma.store`, `stmatrix`.
    Store(StateSpace),
    /// `atom` (returns the old value), `red` (does not).
    Atomic(StateSpace),
    /// `membar` / `fence`.
    Fence,
    /// `mbarrier.*`, `cp.async.mbarrier.arrive`: an operation on a barrier
    /// object in memory.
    BarrierObject(StateSpace),
    /// `cp.async`, `cp.async.bulk{.tensor}`: a copy completing later.
    AsyncCopy { dst: StateSpace, src: StateSpace },
    /// `cp.async{.bulk}.commit_group` / `wait_group` / `wait_all`.
    AsyncGroup,
}

impl Instr {
    /// How many leading operand positions are destinations (the rest are
    /// sources); `None` for [`Instr::Unknown`], whose layout nobody knows
    /// (a user must then assume every operand is both read and written).
    pub fn dst_count(&self) -> Option<usize> {
        use Instr::*;
        Some(match self {
            Setp { .. } | Shfl { .. } | Match { .. } | Elect => 2,
            Add { .. }
            | Sub { .. }
            | Mul { .. }
            | Mad { .. }
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
            | Testp { .. }
            | And { .. }
            | Or { .. }
            | Xor { .. }
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
            | Selp { .. }
            | Slct { .. }
            | Mov { .. }
            | Cvt { .. }
            | Cvta { .. }
            | Ld(_)
            | Ldu(_)
            | Isspacep { .. }
            | Mapa { .. }
            | Getctarank { .. }
            | Atom(_)
            | Activemask
            | Vote { .. }
            | Redux { .. }
            | Mma(_)
            | Ldmatrix(_)
            | Movmatrix { .. }
            | Idiom { .. }
            // The return list.
            | Call { .. } => 1,
            Bar { kind, .. } => match kind {
                BarKind::Sync | BarKind::Arrive => 0,
                BarKind::Red(_) => 1,
            },
            Mbarrier { op, .. } => match op {
                MbarrierOp::Arrive { .. } | MbarrierOp::Wait { .. } | MbarrierOp::PendingCount => 1,
                MbarrierOp::Init
                | MbarrierOp::Inval
                | MbarrierOp::ExpectTx
                | MbarrierOp::CompleteTx => 0,
            },
            Wmma(op) => match op {
                WmmaOp::Load { .. } | WmmaOp::Mma { .. } => 1,
                WmmaOp::Store { .. } => 0,
            },
            Wgmma(op) => match op {
                WgmmaOp::MmaAsync { .. } => 1,
                WgmmaOp::Fence | WgmmaOp::CommitGroup | WgmmaOp::WaitGroup => 0,
            },
            // Only `tcgen05.ld` writes registers; the others write Tensor
            // Memory or shared memory (`alloc`'s address) or nothing.
            Tcgen05(op) => usize::from(matches!(op, Tcgen05Op::Ld { .. })),
            St(_)
            | Red(_)
            | Prefetch { .. }
            | Bra { .. }
            | Brx { .. }
            | Ret { .. }
            | Exit
            | Trap
            | Brkpt
            | Nanosleep
            | BarWarpSync
            | BarrierCluster { .. }
            | Fence(_)
            | Griddepcontrol { .. }
            | Setmaxnreg { .. }
            | Stmatrix(_)
            | CpAsync { .. }
            | CpAsyncCommitGroup
            | CpAsyncWaitGroup
            | CpAsyncWaitAll
            | CpAsyncMbarrierArrive { .. }
            | CpAsyncBulk(_)
            | CpAsyncBulkCommitGroup
            | CpAsyncBulkWaitGroup { .. }
            | CpAsyncBulkPrefetch { .. }
            | CpReduceAsyncBulk(_)
            | Absorbed { .. } => 0,
            CreatePolicy(_) => 1,
            Unknown { .. } => return None,
        })
    }

    /// True when the destinations are read as well as written:
    /// `wgmma.mma_async` accumulates into `D` (unless `scale-d` is 0).
    pub fn reads_dsts(&self) -> bool {
        matches!(self, Instr::Wgmma(WgmmaOp::MmaAsync { .. }))
    }

    /// What the instruction does to control flow, if anything.
    pub fn control(&self) -> Option<Control> {
        use Instr::*;
        Some(match self {
            Bra { .. } | Brx { .. } => Control::Branch,
            Call { .. } => Control::Call,
            Ret { .. } => Control::Return,
            Exit => Control::Exit,
            Trap | Brkpt => Control::Halt,
            Bar { .. } | BarWarpSync | BarrierCluster { .. } | Mbarrier { .. } => Control::Barrier,
            _ => return None,
        })
    }

    /// Which collective the instruction is, if it is one.
    pub fn collective(&self) -> Option<Collective> {
        use Instr::*;
        Some(match self {
            Shfl { .. } => Collective::Shuffle,
            Vote { .. } => Collective::Vote,
            Match { .. } => Collective::Match,
            Redux { .. } => Collective::Reduce,
            Elect => Collective::Elect,
            Activemask => Collective::ActiveMask,
            Mma(_) | Wmma(_) | Ldmatrix(_) | Stmatrix(_) | Movmatrix { .. } | Wgmma(_) => {
                Collective::Matrix
            }
            // The warp-collective (`.sync.aligned`) tcgen05 forms; `mma`,
            // `commit` and the fences are issued by single threads.
            Tcgen05(
                Tcgen05Op::Alloc
                | Tcgen05Op::Dealloc
                | Tcgen05Op::Relinquish
                | Tcgen05Op::Ld { .. }
                | Tcgen05Op::St { .. }
                | Tcgen05Op::Wait { .. },
            ) => Collective::Matrix,
            _ => return None,
        })
    }

    /// What the instruction does to memory, if anything (`prefetch` is a
    /// hint and never dereferences its address).
    pub fn memory(&self) -> Option<Memory> {
        use Instr::*;
        Some(match self {
            Ld(m) | Ldu(m) => Memory::Load(m.space),
            St(m) => Memory::Store(m.space),
            Atom(m) | Red(m) => Memory::Atomic(m.space),
            Wmma(WmmaOp::Load { space, .. }) => Memory::Load(*space),
            Wmma(WmmaOp::Store { space, .. }) => Memory::Store(*space),
            Ldmatrix(m) => Memory::Load(m.space),
            Stmatrix(m) => Memory::Store(m.space),
            Fence(_) => Memory::Fence,
            Mbarrier { space, .. } | CpAsyncMbarrierArrive { space, .. } => {
                Memory::BarrierObject(*space)
            }
            // `tcgen05.alloc` writes the allocated address to shared memory;
            // `tcgen05.commit` arrives on an mbarrier (Tensor Memory itself is
            // not a PTX state space an address names).
            Tcgen05(Tcgen05Op::Alloc) => Memory::Store(StateSpace::Shared),
            Tcgen05(Tcgen05Op::Commit { .. }) => Memory::BarrierObject(StateSpace::Shared),
            CpAsync { .. } => Memory::AsyncCopy {
                dst: StateSpace::Shared,
                src: StateSpace::Global,
            },
            CpAsyncBulk(b) => Memory::AsyncCopy {
                dst: b.dst,
                src: b.src,
            },
            CpReduceAsyncBulk(b) => Memory::AsyncCopy {
                dst: b.dst,
                src: b.src,
            },
            CpAsyncCommitGroup
            | CpAsyncWaitGroup
            | CpAsyncWaitAll
            | CpAsyncBulkCommitGroup
            | CpAsyncBulkWaitGroup { .. } => Memory::AsyncGroup,
            _ => return None,
        })
    }

    /// True for `cp.async*` copies and their group operations.
    pub fn is_async(&self) -> bool {
        matches!(
            self.memory(),
            Some(Memory::AsyncCopy { .. } | Memory::AsyncGroup)
        )
    }
}

impl InstrData {
    /// Registers the instruction may write; for [`Instr::Unknown`], every
    /// register it mentions. A register inside an address is read, never
    /// written, wherever the address stands.
    pub fn writes(&self) -> Vec<RegId> {
        let mut out = Vec::new();
        let n = self.instr.dst_count().unwrap_or(self.operands.len());
        for op in self.operands.iter().take(n) {
            if !matches!(op, Operand::Addr(_) | Operand::TensorAddr { .. }) {
                op.collect_regs(&mut out);
            }
        }
        out
    }

    /// Registers the instruction reads, its guard included; for
    /// [`Instr::Unknown`], every register it mentions.
    pub fn reads(&self) -> Vec<RegId> {
        let mut out = Vec::new();
        let n = if self.instr.reads_dsts() {
            0
        } else {
            self.instr.dst_count().unwrap_or(0)
        };
        for (i, op) in self.operands.iter().enumerate() {
            if i >= n || matches!(op, Operand::Addr(_) | Operand::TensorAddr { .. }) {
                op.collect_regs(&mut out);
            }
        }
        if let Some(g) = self.guard {
            out.push(g.reg);
        }
        out
    }

    /// Every register the instruction mentions, its guard included.
    pub fn mentions(&self) -> Vec<RegId> {
        let mut out = Vec::new();
        for op in &self.operands {
            op.collect_regs(&mut out);
        }
        if let Some(g) = self.guard {
            out.push(g.reg);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{MatchMode, ShflMode, VoteMode};
    use crate::types::{MemSem, ScalarType};

    /// The two `is_control` lists that existed before this table disagreed
    /// on `brkpt`, `barrier.cluster` and `mbarrier` (the idiom matcher
    /// treated them as control, the engine did not) and on the warp
    /// collectives and `cp.async` (the engine treated them as control, the
    /// matcher did not). The PTX ISA places `barrier.cluster` and
    /// `mbarrier` with `bar` among the synchronisation instructions, and
    /// `brkpt` suspends the thread like `trap` stops it: they are control.
    /// The collectives and async copies exchange data, they do not steer
    /// control: they are classified as collective / async, not control.
    #[test]
    fn the_disputed_instructions_follow_the_ptx_isa() {
        let cluster = Instr::BarrierCluster {
            arrive: true,
            sem: Some(MemSem::Release),
            aligned: true,
        };
        assert_eq!(cluster.control(), Some(Control::Barrier));
        let mbar = Instr::Mbarrier {
            op: MbarrierOp::Arrive {
                drop: false,
                no_complete: false,
                expect_tx: false,
            },
            sem: None,
            scope: None,
            space: StateSpace::Shared,
        };
        assert_eq!(mbar.control(), Some(Control::Barrier));
        assert_eq!(
            mbar.memory(),
            Some(Memory::BarrierObject(StateSpace::Shared))
        );
        assert_eq!(Instr::Brkpt.control(), Some(Control::Halt));
        assert_eq!(Instr::Trap.control(), Some(Control::Halt));

        let shfl = Instr::Shfl {
            mode: ShflMode::Bfly,
            sync: true,
            ty: ScalarType::B32,
        };
        assert_eq!(shfl.control(), None);
        assert_eq!(shfl.collective(), Some(Collective::Shuffle));
        let vote = Instr::Vote {
            mode: VoteMode::Ballot,
            sync: true,
            ty: ScalarType::B32,
        };
        assert_eq!(vote.collective(), Some(Collective::Vote));
        let m = Instr::Match {
            mode: MatchMode::Any,
            ty: ScalarType::B32,
        };
        assert_eq!(m.collective(), Some(Collective::Match));
        assert_eq!(Instr::Activemask.collective(), Some(Collective::ActiveMask));
        assert_eq!(Instr::CpAsyncWaitAll.control(), None);
        assert!(Instr::CpAsyncWaitAll.is_async());
        assert!(Instr::CpAsyncCommitGroup.is_async());
    }

    #[test]
    fn unknown_layout_is_all_written_and_all_read() {
        let d = InstrData {
            instr: Instr::Unknown {
                text: "foo".into(),
                reason: "test".into(),
            },
            operands: [Operand::Reg(RegId(0)), Operand::Reg(RegId(1))]
                .into_iter()
                .collect(),
            guard: None,
            loc: None,
        };
        assert_eq!(d.writes(), vec![RegId(0), RegId(1)]);
        assert_eq!(d.reads(), vec![RegId(0), RegId(1)]);
        let st = InstrData {
            instr: Instr::Exit,
            operands: Default::default(),
            guard: None,
            loc: None,
        };
        assert!(st.writes().is_empty());
    }

    #[test]
    fn pair_destinations_are_two_positions() {
        for i in [
            Instr::Setp {
                cmp: crate::types::CmpOp::Lt,
                bool_op: None,
                ftz: false,
                ty: ScalarType::S32,
            },
            Instr::Elect,
        ] {
            assert!(i.has_pair_dst());
            assert_eq!(i.dst_count(), Some(2));
        }
    }
}
