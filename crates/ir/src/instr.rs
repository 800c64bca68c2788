//! Decoded instructions: one enum variant per opcode family with typed
//! modifiers. Operands live beside the variant in
//! [`crate::InstrData::operands`]; each variant's doc states their layout as
//! `[d, a, b]` (positions in that list). A `d|p` pair destination is split
//! into two positions, `p` being [`crate::Operand::Sink`] when absent.
//!
//! The decoder accepts modifiers in any order; the canonical spelling printed
//! by [`Instr::mnemonic`] re-decodes to the same value (tested over the whole
//! corpus), so the text dump is faithful even though it is not the source
//! text.

use serde::{Deserialize, Serialize};

use crate::types::{
    BoolOp, CacheHint, CacheOp, CmpOp, MemSem, MulMode, Rounding, ScalarType, Scope, StateSpace,
    kw_enum,
};

/// Floating-point modifiers shared by arithmetic instructions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct FpMods {
    pub rnd: Option<Rounding>,
    pub ftz: bool,
    /// `.sat`: clamp to [0, 1] for floats, to the type range for `add.sat.s32`.
    pub sat: bool,
}

/// Carry-flag use of extended-precision integer arithmetic.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub enum Carry {
    #[default]
    None,
    /// `add.cc`: writes CC.CF.
    Out,
    /// `addc`: reads CC.CF.
    In,
    /// `addc.cc`: reads and writes CC.CF.
    InOut,
}

kw_enum! {
    /// Transcendental / reciprocal functions, one decoded variant for all.
    pub enum MathFn {
        Rcp = "rcp", Sqrt = "sqrt", Rsqrt = "rsqrt", Ex2 = "ex2", Lg2 = "lg2",
        Sin = "sin", Cos = "cos", Tanh = "tanh",
    }
}

kw_enum! {
    /// A math-library function recognised from an inlined instruction
    /// sequence by `passes/idioms` (never produced by lowering).
    pub enum IdiomFn {
        Exp = "exp", Log = "log", Log2 = "log2", Tanh = "tanh", Sin = "sin", Cos = "cos",
        Pow = "pow", Erf = "erf", Expm1 = "expm1", Log1p = "log1p",
        Log10 = "log10", Exp10 = "exp10", Sinh = "sinh", Cosh = "cosh",
    }
}

/// Which algorithm a `div`/`rcp`/`sqrt` uses.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub enum Precision {
    /// IEEE-rounded (with `rnd`), or integer division.
    #[default]
    Exact,
    /// `.approx`.
    Approx,
    /// `.full` (`div.full.f32`).
    Full,
}

/// Modifiers of `min`/`max`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct MinMaxMods {
    pub ftz: bool,
    /// `.NaN`: propagate NaN instead of returning the other operand.
    pub nan: bool,
    pub relu: bool,
    pub xorsign_abs: bool,
}

kw_enum! {
    /// `testp` predicate.
    pub enum TestpOp {
        Finite = "finite", Infinite = "infinite", Number = "number", NotANumber = "notanumber",
        Normal = "normal", Subnormal = "subnormal",
    }
}

kw_enum! {
    /// `shf`/`bmsk` shift-amount handling.
    pub enum ShiftMode { Clamp = "clamp", Wrap = "wrap" }
}

kw_enum! {
    /// `prmt` special modes.
    pub enum PrmtMode {
        F4e = "f4e", B4e = "b4e", Rc8 = "rc8", Ecl = "ecl", Ecr = "ecr", Rc16 = "rc16",
    }
}

/// Modifiers of a plain memory access (`ld`, `ldu`, `st`).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct MemOp {
    /// [`StateSpace::Generic`] when the instruction names none.
    pub space: StateSpace,
    /// `None` = weak (no ordering modifier written).
    pub sem: Option<MemSem>,
    pub scope: Option<Scope>,
    pub cache: Option<CacheOp>,
    /// Eviction-priority / prefetch-size hints in canonical order.
    pub hints: Vec<CacheHint>,
    /// `.v2`, `.v4`, `.v8`.
    pub vector: Option<u8>,
    pub ty: ScalarType,
    /// `ld.global.nc`: non-coherent (read-only) path.
    pub nc: bool,
}

kw_enum! {
    /// `prefetch` target level.
    pub enum PrefetchLevel {
        L1 = "L1", L2 = "L2", L2EvictLast = "L2::evict_last", L2EvictNormal = "L2::evict_normal",
    }
}

kw_enum! {
    /// What a `bar.red` / `barrier.red` reduces.
    pub enum BarRedOp { Popc = "popc", And = "and", Or = "or" }
}

/// Kind of CTA-barrier operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum BarKind {
    /// Blocking arrival (`bar.sync`, `barrier.sync`, also the bare `bar 0`).
    Sync,
    /// Non-blocking arrival.
    Arrive,
    /// Blocking arrival with a reduction of a predicate over the participants.
    Red(BarRedOp),
}

kw_enum! {
    /// Fence/membar proxy kinds beyond plain memory fences.
    pub enum FenceProxy { Alias = "alias", Async = "async" }
}

/// `fence` / `membar` flavours that are decoded.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum FenceKind {
    /// `membar.{cta,gl,sys}` (`gl` is [`Scope::Gpu`]): sequentially consistent.
    Membar(Scope),
    /// `fence{.sc,.acq_rel}.scope` (`sem` defaults to `acq_rel`).
    Sem { sem: MemSem, scope: Scope },
    /// `fence.proxy.alias` / `fence.proxy.async{.space}`.
    Proxy {
        proxy: FenceProxy,
        space: Option<StateSpace>,
    },
    /// `fence.mbarrier_init.release.cluster`.
    MbarrierInit,
}

kw_enum! {
    /// `shfl` exchange pattern.
    pub enum ShflMode { Up = "up", Down = "down", Bfly = "bfly", Idx = "idx" }
}

kw_enum! {
    /// `vote` mode.
    pub enum VoteMode { All = "all", Any = "any", Uni = "uni", Ballot = "ballot" }
}

kw_enum! {
    /// `match` mode.
    pub enum MatchMode { Any = "any", All = "all" }
}

kw_enum! {
    /// `redux.sync` operation.
    pub enum ReduxOp {
        Add = "add", Min = "min", Max = "max", And = "and", Or = "or", Xor = "xor",
    }
}

kw_enum! {
    /// `atom` / `red` operation.
    pub enum AtomOp {
        Add = "add", Min = "min", Max = "max", Inc = "inc", Dec = "dec",
        And = "and", Or = "or", Xor = "xor", Exch = "exch", Cas = "cas",
    }
}

/// Modifiers of `atom` / `red`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct AtomMods {
    /// [`StateSpace::Generic`] when the instruction names none.
    pub space: StateSpace,
    pub sem: Option<MemSem>,
    pub scope: Option<Scope>,
    pub op: AtomOp,
    pub vector: Option<u8>,
    pub ty: ScalarType,
    /// `.noftz` (half-precision add).
    pub noftz: bool,
    pub hints: Vec<CacheHint>,
}

kw_enum! {
    /// Row/column-major fragment layout.
    pub enum Layout { Row = "row", Col = "col" }
}

/// An `mNnNkN` matrix shape.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Shape {
    pub m: u16,
    pub n: u16,
    pub k: u16,
}

impl Shape {
    /// Parses `m16n8k16`.
    pub fn parse(s: &str) -> Option<Shape> {
        let rest = s.strip_prefix('m')?;
        let (m, rest) = rest.split_once('n')?;
        let (n, k) = rest.split_once('k')?;
        let num = |t: &str| -> Option<u16> {
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || t.starts_with('0') {
                return None;
            }
            t.parse().ok()
        };
        Some(Shape {
            m: num(m)?,
            n: num(n)?,
            k: num(k)?,
        })
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "m{}n{}k{}", self.m, self.n, self.k)
    }
}

/// `mma.sync.aligned` modifiers. Types are in PTX order d, a, b, c.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct MmaMods {
    pub shape: Shape,
    pub a_layout: Layout,
    pub b_layout: Layout,
    pub d_ty: ScalarType,
    pub a_ty: ScalarType,
    pub b_ty: ScalarType,
    pub c_ty: ScalarType,
    pub satfinite: bool,
    /// `.xor.popc` / `.and.popc` of single-bit mma.
    pub b1_op: Option<BoolOp>,
    /// `mma.sp`: structured-sparse A (extra metadata + selector operands).
    pub sparse: bool,
}

kw_enum! {
    /// Which wmma fragment a load targets.
    pub enum Frag { A = "a", B = "b", C = "c" }
}

/// `wmma.load` / `wmma.store` / `wmma.mma`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum WmmaOp {
    /// `wmma.load.{a,b,c}.sync.aligned.layout.shape{.space}.type`
    /// — `[frag vector, addr, (stride)]`.
    Load {
        frag: Frag,
        layout: Layout,
        shape: Shape,
        space: StateSpace,
        ty: ScalarType,
    },
    /// `wmma.store.d.sync.aligned.layout.shape{.space}.type`
    /// — `[addr, frag vector, (stride)]`.
    Store {
        layout: Layout,
        shape: Shape,
        space: StateSpace,
        ty: ScalarType,
    },
    /// `wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype`
    /// — `[D, A, B, C]`. `ab_explicit` is false for the two-type f16 form
    /// (a/b are then `f16`).
    Mma {
        a_layout: Layout,
        b_layout: Layout,
        shape: Shape,
        d_ty: ScalarType,
        a_ty: ScalarType,
        b_ty: ScalarType,
        c_ty: ScalarType,
        ab_explicit: bool,
        rnd: Option<Rounding>,
        satfinite: bool,
    },
}

kw_enum! {
    /// Number of 8x8 matrices moved by `ldmatrix`/`stmatrix`.
    pub enum MatrixNum { X1 = "x1", X2 = "x2", X4 = "x4" }
}

impl MatrixNum {
    /// 1, 2 or 4.
    pub fn count(self) -> u8 {
        match self {
            MatrixNum::X1 => 1,
            MatrixNum::X2 => 2,
            MatrixNum::X4 => 4,
        }
    }
}

/// `ldmatrix` / `stmatrix` modifiers (`shape` is `m8n8`, `m16n16`, ...:
/// written without `k`, so `k` is 0).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct MatrixMods {
    pub shape: (u16, u16),
    pub num: MatrixNum,
    pub trans: bool,
    pub space: StateSpace,
    pub ty: ScalarType,
}

kw_enum! {
    /// How an `mbarrier` / bulk copy completion is signalled.
    pub enum Completion {
        MbarrierCompleteTx = "mbarrier::complete_tx::bytes",
        BulkGroup = "bulk_group",
    }
}

/// `mbarrier.*` operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum MbarrierOp {
    /// `[addr, count]`.
    Init,
    /// `[addr]`.
    Inval,
    /// `mbarrier.arrive{.expect_tx}` / `arrive_drop` — `[state|Sink, addr, (count)]`
    /// (`count` is the tx-count for `expect_tx`).
    Arrive {
        drop: bool,
        no_complete: bool,
        expect_tx: bool,
    },
    /// `mbarrier.expect_tx` — `[addr, txCount]`.
    ExpectTx,
    /// `mbarrier.complete_tx` — `[addr, txCount]`.
    CompleteTx,
    /// `test_wait` / `try_wait` `{.parity}` — `[waitComplete, addr, state|parity, (hint)]`.
    Wait { try_wait: bool, parity: bool },
    /// `mbarrier.pending_count.b64` — `[count, state]`.
    PendingCount,
}

/// `cp.async.bulk{.tensor.Nd}` modifiers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct BulkCopy {
    /// Number of tensor dimensions for `.tensor.Nd`, `None` for plain bulk copies.
    pub tensor_dims: Option<u8>,
    pub dst: StateSpace,
    pub src: StateSpace,
    pub completion: Completion,
    /// `.tile` / `.im2col` load mode (tensor only); `im2col = true` for `.im2col`.
    pub im2col: bool,
    pub multicast: bool,
    pub cache_hint: bool,
}

/// `cp.reduce.async.bulk{.tensor.Nd}` modifiers.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct BulkReduce {
    /// Number of tensor dimensions for `.tensor.Nd`, `None` for plain bulk reductions.
    pub tensor_dims: Option<u8>,
    pub dst: StateSpace,
    pub src: StateSpace,
    pub completion: Completion,
    pub op: AtomOp,
    /// The element type (plain forms; a tensor form's comes from its tensor map).
    pub ty: Option<ScalarType>,
    /// `.im2col_no_offs` load mode (tensor only).
    pub im2col: bool,
    /// `.noftz` (half-precision add).
    pub noftz: bool,
    pub cache_hint: bool,
}

/// The form of a `createpolicy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum PolicyKind {
    /// `createpolicy.range{.global}.primary{.secondary}.b64 p, [a], primary-size, total-size`.
    Range,
    /// `createpolicy.fractional.primary{.secondary}.b64 p{, fraction}`.
    Fractional,
    /// `createpolicy.cvt.L2.b64 p, access-property`.
    Cvt,
}

/// `wgmma.*` operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum WgmmaOp {
    Fence,
    CommitGroup,
    /// `[n]`.
    WaitGroup,
    /// `wgmma.mma_async{.sp}.sync.aligned.shape.dtype.atype.btype` — operands as
    /// written (`[D, A-desc|A, B-desc, scale-d, ...]`).
    MmaAsync {
        shape: Shape,
        d_ty: ScalarType,
        a_ty: ScalarType,
        b_ty: ScalarType,
        satfinite: bool,
        sparse: bool,
    },
}

/// Data-path shape of `tcgen05.ld` / `tcgen05.st`: how a warp's 32 threads
/// map onto Tensor Memory lanes and 32-bit columns.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum TmemShape {
    /// `.32x32b`: 32 lanes, one 32-bit column per repeat.
    S32x32b,
    /// `.16x64b`.
    S16x64b,
    /// `.16x128b`.
    S16x128b,
    /// `.16x256b`.
    S16x256b,
    /// `.16x32bx2`.
    S16x32bx2,
}

impl TmemShape {
    pub fn parse(s: &str) -> Option<TmemShape> {
        Some(match s {
            "32x32b" => TmemShape::S32x32b,
            "16x64b" => TmemShape::S16x64b,
            "16x128b" => TmemShape::S16x128b,
            "16x256b" => TmemShape::S16x256b,
            "16x32bx2" => TmemShape::S16x32bx2,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TmemShape::S32x32b => "32x32b",
            TmemShape::S16x64b => "16x64b",
            TmemShape::S16x128b => "16x128b",
            TmemShape::S16x256b => "16x256b",
            TmemShape::S16x32bx2 => "16x32bx2",
        }
    }
}

/// `tcgen05.mma` `.kind`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Tcgen05Kind {
    F16,
    Tf32,
    F8f6f4,
    I8,
}

impl Tcgen05Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Tcgen05Kind::F16 => "kind::f16",
            Tcgen05Kind::Tf32 => "kind::tf32",
            Tcgen05Kind::F8f6f4 => "kind::f8f6f4",
            Tcgen05Kind::I8 => "kind::i8",
        }
    }
}

/// `tcgen05.*` (Blackwell, sm_100a), the `.cta_group::1` forms the decoder
/// accepts; every other form (`cta_group::2`, `.cp`, `.shift`, block
/// scaling, `.sp`, `.ws`, multicast commit) stays [`Instr::Unknown`] with
/// the reason.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Tcgen05Op {
    /// `tcgen05.alloc.cta_group::1.sync.aligned{.shared::cta}.b32` — `[[dst], ncols]`.
    Alloc,
    /// `tcgen05.dealloc.cta_group::1.sync.aligned.b32` — `[taddr, ncols]`.
    Dealloc,
    /// `tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned` — `[]`.
    Relinquish,
    /// `tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32` — `[d-vector, [taddr]]`.
    Ld {
        shape: TmemShape,
        num: u8,
        pack: bool,
    },
    /// `tcgen05.st.sync.aligned.shape.num{.unpack::16b}.b32` — `[[taddr], s-vector]`.
    St {
        shape: TmemShape,
        num: u8,
        unpack: bool,
    },
    /// `tcgen05.wait::ld.sync.aligned` (`st` false) / `tcgen05.wait::st.sync.aligned` — `[]`.
    Wait { st: bool },
    /// `tcgen05.fence::before_thread_sync` (`after` false) /
    /// `tcgen05.fence::after_thread_sync` — `[]`.
    Fence { after: bool },
    /// `tcgen05.mma.cta_group::1.kind` — `[[d-tmem], a-desc | [a-tmem],
    /// b-desc, idesc, enable-input-d]`; `a_tmem` when A is in Tensor Memory.
    Mma { kind: Tcgen05Kind, a_tmem: bool },
    /// `tcgen05.commit.cta_group::1.mbarrier::arrive::one{.shared::cluster}.b64`
    /// — `[[mbar]]`.
    Commit { cluster: bool },
}

/// A decoded PTX instruction. See the module doc for the operand convention.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Instr {
    // ---- integer and float arithmetic ----
    /// `add`/`addc` — `[d, a, b]`.
    Add {
        ty: ScalarType,
        fp: FpMods,
        carry: Carry,
    },
    /// `sub`/`subc` — `[d, a, b]`.
    Sub {
        ty: ScalarType,
        fp: FpMods,
        carry: Carry,
    },
    /// `mul` — `[d, a, b]`; `mode` is set for integer types.
    Mul {
        ty: ScalarType,
        mode: Option<MulMode>,
        fp: FpMods,
    },
    /// `mad`/`madc` — `[d, a, b, c]`.
    Mad {
        ty: ScalarType,
        mode: Option<MulMode>,
        fp: FpMods,
        carry: Carry,
    },
    /// `mul24.{lo,hi}` — `[d, a, b]`.
    Mul24 { ty: ScalarType, hi: bool },
    /// `mad24.{lo,hi}{.sat}` — `[d, a, b, c]`.
    Mad24 { ty: ScalarType, hi: bool, sat: bool },
    /// `fma` — `[d, a, b, c]`.
    Fma {
        ty: ScalarType,
        fp: FpMods,
        relu: bool,
    },
    /// `div` — `[d, a, b]`.
    Div {
        ty: ScalarType,
        fp: FpMods,
        precision: Precision,
    },
    /// `rem` — `[d, a, b]`.
    Rem { ty: ScalarType },
    /// `neg` — `[d, a]`.
    Neg { ty: ScalarType, ftz: bool },
    /// `abs` — `[d, a]`.
    Abs { ty: ScalarType, ftz: bool },
    /// `min` — `[d, a, b]` or `[d, a, b, c]`.
    Min { ty: ScalarType, mods: MinMaxMods },
    /// `max` — `[d, a, b]` or `[d, a, b, c]`.
    Max { ty: ScalarType, mods: MinMaxMods },
    /// `copysign` — `[d, a, b]` (sign of `a`, magnitude of `b`).
    Copysign { ty: ScalarType },
    /// `sad` — `[d, a, b, c]`.
    Sad { ty: ScalarType },
    /// `dp4a.atype.btype` — `[d, a, b, c]`.
    Dp4a { a_ty: ScalarType, b_ty: ScalarType },
    /// `dp2a.{lo,hi}.atype.btype` — `[d, a, b, c]`.
    Dp2a {
        hi: bool,
        a_ty: ScalarType,
        b_ty: ScalarType,
    },
    /// `rcp sqrt rsqrt ex2 lg2 sin cos tanh` — `[d, a]`.
    Math {
        func: MathFn,
        ty: ScalarType,
        fp: FpMods,
        precision: Precision,
    },
    /// `testp.op.type` — `[p, a]`.
    Testp { op: TestpOp, ty: ScalarType },

    // ---- bit manipulation ----
    /// `and` — `[d, a, b]`.
    And { ty: ScalarType },
    /// `or` — `[d, a, b]`.
    Or { ty: ScalarType },
    /// `xor` — `[d, a, b]`.
    Xor { ty: ScalarType },
    /// `not` — `[d, a]`.
    Not { ty: ScalarType },
    /// `cnot` — `[d, a]`.
    Cnot { ty: ScalarType },
    /// `lop3.b32` — `[d, a, b, c, immLut]`.
    Lop3 { ty: ScalarType },
    /// `shl` — `[d, a, b]`.
    Shl { ty: ScalarType },
    /// `shr` — `[d, a, b]` (arithmetic for signed types).
    Shr { ty: ScalarType },
    /// `shf.{l,r}.{clamp,wrap}.b32` — `[d, a, b, c]`.
    Shf {
        left: bool,
        mode: ShiftMode,
        ty: ScalarType,
    },
    /// `bfe` — `[d, a, pos, len]`.
    Bfe { ty: ScalarType },
    /// `bfi` — `[d, f, b, pos, len]`.
    Bfi { ty: ScalarType },
    /// `prmt.b32{.mode}` — `[d, a, b, c]`.
    Prmt {
        ty: ScalarType,
        mode: Option<PrmtMode>,
    },
    /// `popc` — `[d, a]`.
    Popc { ty: ScalarType },
    /// `clz` — `[d, a]`.
    Clz { ty: ScalarType },
    /// `brev` — `[d, a]`.
    Brev { ty: ScalarType },
    /// `bfind{.shiftamt}` — `[d, a]`.
    Bfind { ty: ScalarType, shiftamt: bool },
    /// `fns.b32` — `[d, mask, base, offset]`.
    Fns { ty: ScalarType },
    /// `bmsk.{clamp,wrap}.b32` — `[d, a, b]`.
    Bmsk { mode: ShiftMode, ty: ScalarType },
    /// `szext.{clamp,wrap}.{u32,s32}` — `[d, a, b]`.
    Szext { mode: ShiftMode, ty: ScalarType },

    // ---- comparison and selection ----
    /// `setp.cmp{.boolop}{.ftz}.type` — `[p, q|Sink, a, b]` or `[p, q|Sink, a, b, c]`
    /// with a bool op (`c` may be [`crate::Operand::Not`]).
    Setp {
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ftz: bool,
        ty: ScalarType,
    },
    /// `set.cmp{.boolop}{.ftz}.dtype.stype` — `[d, a, b]` or `[d, a, b, c]`.
    Set {
        cmp: CmpOp,
        bool_op: Option<BoolOp>,
        ftz: bool,
        dst_ty: ScalarType,
        src_ty: ScalarType,
    },
    /// `selp` — `[d, a, b, p]` (`d = p ? a : b`).
    Selp { ty: ScalarType },
    /// `slct{.ftz}.dtype.ctype` — `[d, a, b, c]` (`d = c >= 0 ? a : b`).
    Slct {
        ftz: bool,
        dst_ty: ScalarType,
        src_ty: ScalarType,
    },

    // ---- data movement and conversion ----
    /// `mov` — `[d, a]`; `a` or `d` may be a brace vector (pack/unpack).
    Mov { ty: ScalarType },
    /// `cvt{.rnd}{.ftz}{.sat}{.relu}{.satfinite}.dtype.stype` — `[d, a]` or
    /// `[d, a, b]` for packing conversions (`cvt.rn.f16x2.f32 d, a, b`).
    Cvt {
        dst_ty: ScalarType,
        src_ty: ScalarType,
        rnd: Option<Rounding>,
        ftz: bool,
        sat: bool,
        relu: bool,
        satfinite: bool,
    },
    /// `cvta{.to}.space.size` — `[d, a]`.
    Cvta {
        to: bool,
        space: StateSpace,
        ty: ScalarType,
    },
    /// `ld` — `[d, addr]` or `[d, addr, cache-policy]`; `d` is a brace vector
    /// of `vector` elements for `.vN`, and may be a one-element brace vector
    /// for a scalar access (Triton writes `ld.global.b32 { %r1 }, [..]`).
    Ld(MemOp),
    /// `ldu` — `[d, addr]`.
    Ldu(MemOp),
    /// `st` — `[addr, a]` or `[addr, a, cache-policy]`; `a` as `d` of [`Instr::Ld`].
    St(MemOp),
    /// `prefetch{.space}.level` / `prefetchu.L1` — `[addr]`.
    Prefetch {
        space: StateSpace,
        level: PrefetchLevel,
        uniform: bool,
    },
    /// `isspacep.space` — `[p, a]`.
    Isspacep { space: StateSpace },
    /// `mapa{.space}.type` — `[d, a, cta-rank]`.
    Mapa { space: StateSpace, ty: ScalarType },
    /// `getctarank{.space}.type` — `[d, a]`.
    Getctarank { space: StateSpace, ty: ScalarType },

    // ---- control flow ----
    /// `bra{.uni}` — `[target]`.
    Bra { uni: bool },
    /// `brx.idx{.uni}` — `[index, targets]`.
    Brx { uni: bool },
    /// `call{.uni}` — `[List(returns), target, List(args)]` or with a fourth
    /// operand naming the prototype / target list. A missing list is empty.
    Call { uni: bool },
    /// `ret{.uni}` — `[]`.
    Ret { uni: bool },
    /// `exit` — `[]`.
    Exit,
    /// `trap` — `[]`.
    Trap,
    /// `brkpt` — `[]`.
    Brkpt,
    /// `nanosleep.u32` — `[t]`.
    Nanosleep,

    // ---- synchronisation ----
    /// `bar`/`barrier` `.sync .arrive .red` — `[a]`, `[a, b]` for sync/arrive;
    /// `[d, a, c]` / `[d, a, b, c]` for red (`c` may be negated).
    /// `legacy` is the `bar` spelling, which PTX defines as `.aligned`, so
    /// `aligned` is always true for it.
    Bar {
        kind: BarKind,
        aligned: bool,
        legacy: bool,
    },
    /// `bar.warp.sync` — `[membermask]`.
    BarWarpSync,
    /// `barrier.cluster.{arrive,wait}{.sem}{.aligned}` — `[]`.
    BarrierCluster {
        arrive: bool,
        sem: Option<MemSem>,
        aligned: bool,
    },
    /// `membar` / `fence` — `[]`.
    Fence(FenceKind),
    /// `mbarrier.*{.sem}{.scope}{.space}.b64` — see [`MbarrierOp`].
    Mbarrier {
        op: MbarrierOp,
        sem: Option<MemSem>,
        scope: Option<Scope>,
        space: StateSpace,
    },
    /// `activemask.b32` — `[d]`.
    Activemask,
    /// `elect.sync` — `[d, p|Sink, membermask]`.
    Elect,
    /// `griddepcontrol.{launch_dependents,wait}` — `[]`.
    Griddepcontrol { launch_dependents: bool },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32` — `[count]`.
    Setmaxnreg { inc: bool },

    // ---- warp collectives ----
    /// `shfl{.sync}.mode.b32` — `[d, p|Sink, a, b, c, membermask]` (no mask
    /// without `.sync`).
    Shfl {
        mode: ShflMode,
        sync: bool,
        ty: ScalarType,
    },
    /// `vote{.sync}.mode.type` — `[d, a, membermask]` (`a` may be negated).
    Vote {
        mode: VoteMode,
        sync: bool,
        ty: ScalarType,
    },
    /// `match.{any,all}.sync.type` — `[d, p|Sink, a, membermask]`.
    Match { mode: MatchMode, ty: ScalarType },
    /// `redux.sync.op{.abs}{.NaN}.type` — `[d, a, membermask]`.
    Redux {
        op: ReduxOp,
        ty: ScalarType,
        abs: bool,
        nan: bool,
    },

    // ---- atomics ----
    /// `atom` — `[d, addr, b]` or `[d, addr, b, c]` for `cas`.
    Atom(AtomMods),
    /// `red` — `[addr, b]`.
    Red(AtomMods),

    // ---- matrix and async ----
    /// `mma.sync.aligned` / `mma.sp` — `[D, A, B, C, ...]` brace vectors.
    Mma(MmaMods),
    /// `wmma.*` — see [`WmmaOp`].
    Wmma(WmmaOp),
    /// `ldmatrix.sync.aligned` — `[d vector, addr]`.
    Ldmatrix(MatrixMods),
    /// `stmatrix.sync.aligned` — `[addr, a vector]`.
    Stmatrix(MatrixMods),
    /// `movmatrix.sync.aligned.m8n8.trans.b16` — `[d, a]`.
    Movmatrix { trans: bool, ty: ScalarType },
    /// `cp.async.{ca,cg}.shared{::cta}.global` —
    /// `[dst, src, cp-size, (src-size | ignore-src), (cache-policy)]`.
    CpAsync {
        cache: CacheOp,
        hints: Vec<CacheHint>,
    },
    /// `cp.async.commit_group` — `[]`.
    CpAsyncCommitGroup,
    /// `cp.async.wait_group n` — `[n]`.
    CpAsyncWaitGroup,
    /// `cp.async.wait_all` — `[]`.
    CpAsyncWaitAll,
    /// `cp.async.mbarrier.arrive{.noinc}{.shared}.b64` — `[addr]`.
    CpAsyncMbarrierArrive { noinc: bool, space: StateSpace },
    /// `cp.async.bulk{.tensor}` — operands as written: `[dst], [src], size{, [mbar]}`;
    /// a tensor form has one [`Operand::TensorAddr`] `[tmap, {coords}]` (the
    /// source of a load, the destination of a store `[tmap, {c}], [smem]`).
    CpAsyncBulk(BulkCopy),
    /// `cp.async.bulk.commit_group` — `[]`.
    CpAsyncBulkCommitGroup,
    /// `cp.async.bulk.wait_group{.read} n` — `[n]`.
    CpAsyncBulkWaitGroup { read: bool },
    /// `cp.async.bulk.prefetch.L2.global{.L2::cache_hint}` — `[src], size{, policy}`;
    /// `cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}{.L2::cache_hint}` —
    /// `[tmap, {coords}]{, policy}`. A hint to the L2 cache: no memory effect.
    CpAsyncBulkPrefetch {
        tensor_dims: Option<u8>,
        im2col: bool,
        cache_hint: bool,
    },
    /// `cp.reduce.async.bulk{.tensor.Nd}` — operands as for the bulk copies:
    /// `[dst], [src], size{, [mbar]}{, policy}`, or the tensor form
    /// `[tmap, {coords}], [src]{, policy}`.
    CpReduceAsyncBulk(BulkReduce),
    /// `createpolicy.{range,fractional,cvt}…b64` — `[policy, …]`: an opaque
    /// 64-bit L2 cache-eviction policy for `.L2::cache_hint` accesses.
    CreatePolicy(PolicyKind),
    /// `wgmma.*`.
    Wgmma(WgmmaOp),
    /// `tcgen05.*` (Blackwell Tensor Memory and MMA).
    Tcgen05(Tcgen05Op),

    /// The exact real function a recognised math-library sequence computes
    /// — `[d, a]`, or `[d, x, y]` for the one two-argument function
    /// ([`IdiomFn::Pow`]: `d = x^y`). Written by `passes/idioms` at the
    /// position of the
    /// sequence's last instruction; `first` is the sequence's first
    /// instruction (so a message can name the whole PTX range). Printed as
    /// `idiom.func.type`, which is not PTX and does not re-decode.
    Idiom {
        func: IdiomFn,
        ty: ScalarType,
        first: u32,
    },
    /// An instruction absorbed into the [`Instr::Idiom`] at index `at`
    /// — `[]`; does nothing. Keeps instruction indices (and so labels and
    /// the source map) unchanged by the rewrite.
    Absorbed { at: u32 },

    /// Anything the decoder does not understand: an opcode outside the
    /// decoded families, or a known opcode with modifiers or operands it does
    /// not accept. `text` is the mnemonic as written, `reason` says which.
    Unknown { text: String, reason: String },
}

impl Instr {
    /// True for [`Instr::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, Instr::Unknown { .. })
    }

    /// Variants whose operands 0 and 1 are a split `d|p` pair destination
    /// (the two-destination instructions of `crate::facts`).
    pub fn has_pair_dst(&self) -> bool {
        self.dst_count() == Some(2)
    }

    /// The operand positions of two sources that can be swapped without
    /// changing the result: both summands of `add`, the factors of `mul`,
    /// `mul24`, `mad`, `mad24` and `fma` (`a·b` is exact before any
    /// rounding), `min`/`max` (every modifier, `.xorsign.abs` included,
    /// is symmetric in the operands) and `and`/`or`/`xor`. Matchers and
    /// rewrites use it so that `mul r, c, x` and `mul r, x, c` are one
    /// thing (issue 13 item 9).
    pub fn commutative_sources(&self) -> Option<(usize, usize)> {
        match self {
            Instr::Add { .. }
            | Instr::Mul { .. }
            | Instr::Mul24 { .. }
            | Instr::Mad { .. }
            | Instr::Mad24 { .. }
            | Instr::Fma { .. }
            | Instr::Min { .. }
            | Instr::Max { .. }
            | Instr::And { .. }
            | Instr::Or { .. }
            | Instr::Xor { .. } => Some((1, 2)),
            _ => None,
        }
    }

    /// Instructions after which control does not fall through.
    pub fn is_terminator(&self) -> bool {
        matches!(
            self,
            Instr::Bra { .. } | Instr::Brx { .. } | Instr::Ret { .. } | Instr::Exit | Instr::Trap
        )
    }
}
