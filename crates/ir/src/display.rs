//! Canonical text: instruction mnemonics printed from the typed enum, and the
//! stable dump behind `ptxeq ir`.
//!
//! The dump is decoded form, not source text: two spellings of the same
//! instruction (`ld.global.v4.nc.f32` / `ld.global.nc.v4.f32`) print alike,
//! and `mnemonic()` re-decodes to the same [`Instr`].

use std::fmt::{self, Display, Write};

use crate::instr::{
    BarKind, Carry, FenceKind, FpMods, Instr, MbarrierOp, MemOp, PolicyKind, Precision, Tcgen05Op,
    WgmmaOp, WmmaOp,
};
use crate::kernel::{InitValue, KernelIr, ModuleIr, SourceLoc, VarDecl, VarScope};
use crate::operand::{AddrBase, Imm, Operand, Symbol};
use crate::types::{MulMode, ScalarType, Scope, StateSpace};

/// Dot-joined mnemonic builder.
struct M(String);

impl M {
    fn new(op: &str) -> Self {
        M(op.to_string())
    }
    fn p(&mut self, s: impl Display) -> &mut Self {
        let _ = write!(self.0, ".{s}");
        self
    }
    fn o(&mut self, s: Option<impl Display>) -> &mut Self {
        if let Some(s) = s {
            self.p(s);
        }
        self
    }
    fn f(&mut self, on: bool, s: &str) -> &mut Self {
        if on {
            self.p(s);
        }
        self
    }
    fn fp(&mut self, fp: &FpMods) -> &mut Self {
        self.o(fp.rnd).f(fp.ftz, "ftz").f(fp.sat, "sat")
    }
    fn space(&mut self, s: StateSpace) -> &mut Self {
        if s != StateSpace::Generic {
            self.p(s);
        }
        self
    }
    fn done(&mut self) -> String {
        std::mem::take(&mut self.0)
    }
}

fn carry_op(base: &str, c: Carry) -> String {
    match c {
        Carry::In | Carry::InOut => format!("{base}c"),
        _ => base.to_string(),
    }
}

fn cc(c: Carry) -> bool {
    matches!(c, Carry::Out | Carry::InOut)
}

fn mem(m: &mut M, op: &MemOp) -> String {
    m.o(op.sem)
        .o(op.scope)
        .space(op.space)
        .o(op.cache)
        .f(op.nc, "nc");
    for h in &op.hints {
        m.p(h);
    }
    m.o(op.vector.map(|v| format!("v{v}"))).p(op.ty).done()
}

impl Instr {
    /// Canonical `opcode.modifiers` spelling.
    pub fn mnemonic(&self) -> String {
        use Instr::*;
        match self {
            Add { ty, fp, carry } | Sub { ty, fp, carry } => {
                let base = if matches!(self, Add { .. }) {
                    "add"
                } else {
                    "sub"
                };
                M::new(&carry_op(base, *carry))
                    .fp(fp)
                    .f(cc(*carry), "cc")
                    .p(ty)
                    .done()
            }
            Mul { ty, mode, fp } => M::new("mul").o(*mode).fp(fp).p(ty).done(),
            Mad {
                ty,
                mode,
                fp,
                carry,
            } => M::new(&carry_op("mad", *carry))
                .o(*mode)
                .fp(fp)
                .f(cc(*carry), "cc")
                .p(ty)
                .done(),
            Mul24 { ty, hi } => M::new("mul24").p(hl(*hi)).p(ty).done(),
            Mad24 { ty, hi, sat } => M::new("mad24").p(hl(*hi)).f(*sat, "sat").p(ty).done(),
            Fma { ty, fp, relu } => M::new("fma").fp(fp).f(*relu, "relu").p(ty).done(),
            Div { ty, fp, precision } => M::new("div")
                .f(*precision == Precision::Approx, "approx")
                .f(*precision == Precision::Full, "full")
                .fp(fp)
                .p(ty)
                .done(),
            Rem { ty } => M::new("rem").p(ty).done(),
            Neg { ty, ftz } => M::new("neg").f(*ftz, "ftz").p(ty).done(),
            Abs { ty, ftz } => M::new("abs").f(*ftz, "ftz").p(ty).done(),
            Min { ty, mods } | Max { ty, mods } => M::new(if matches!(self, Min { .. }) {
                "min"
            } else {
                "max"
            })
            .f(mods.ftz, "ftz")
            .f(mods.nan, "NaN")
            .f(mods.relu, "relu")
            .f(mods.xorsign_abs, "xorsign")
            .f(mods.xorsign_abs, "abs")
            .p(ty)
            .done(),
            Copysign { ty } => M::new("copysign").p(ty).done(),
            Sad { ty } => M::new("sad").p(ty).done(),
            Dp4a { a_ty, b_ty } => M::new("dp4a").p(a_ty).p(b_ty).done(),
            Dp2a { hi, a_ty, b_ty } => M::new("dp2a").p(hl(*hi)).p(a_ty).p(b_ty).done(),
            Math {
                func,
                ty,
                fp,
                precision,
            } => M::new(func.as_str())
                .f(*precision == Precision::Approx, "approx")
                .fp(fp)
                .p(ty)
                .done(),
            Testp { op, ty } => M::new("testp").p(op).p(ty).done(),
            And { ty } => M::new("and").p(ty).done(),
            Or { ty } => M::new("or").p(ty).done(),
            Xor { ty } => M::new("xor").p(ty).done(),
            Not { ty } => M::new("not").p(ty).done(),
            Cnot { ty } => M::new("cnot").p(ty).done(),
            Lop3 { ty } => M::new("lop3").p(ty).done(),
            Shl { ty } => M::new("shl").p(ty).done(),
            Shr { ty } => M::new("shr").p(ty).done(),
            Shf { left, mode, ty } => M::new("shf")
                .p(if *left { "l" } else { "r" })
                .p(mode)
                .p(ty)
                .done(),
            Bfe { ty } => M::new("bfe").p(ty).done(),
            Bfi { ty } => M::new("bfi").p(ty).done(),
            Prmt { ty, mode } => M::new("prmt").p(ty).o(*mode).done(),
            Popc { ty } => M::new("popc").p(ty).done(),
            Clz { ty } => M::new("clz").p(ty).done(),
            Brev { ty } => M::new("brev").p(ty).done(),
            Bfind { ty, shiftamt } => M::new("bfind").f(*shiftamt, "shiftamt").p(ty).done(),
            Fns { ty } => M::new("fns").p(ty).done(),
            Bmsk { mode, ty } => M::new("bmsk").p(mode).p(ty).done(),
            Szext { mode, ty } => M::new("szext").p(mode).p(ty).done(),
            Setp {
                cmp,
                bool_op,
                ftz,
                ty,
            } => M::new("setp")
                .p(cmp)
                .o(*bool_op)
                .f(*ftz, "ftz")
                .p(ty)
                .done(),
            Set {
                cmp,
                bool_op,
                ftz,
                dst_ty,
                src_ty,
            } => M::new("set")
                .p(cmp)
                .o(*bool_op)
                .f(*ftz, "ftz")
                .p(dst_ty)
                .p(src_ty)
                .done(),
            Selp { ty } => M::new("selp").p(ty).done(),
            Slct {
                ftz,
                dst_ty,
                src_ty,
            } => M::new("slct").f(*ftz, "ftz").p(dst_ty).p(src_ty).done(),
            Mov { ty } => M::new("mov").p(ty).done(),
            Cvt {
                dst_ty,
                src_ty,
                rnd,
                ftz,
                sat,
                relu,
                satfinite,
            } => M::new("cvt")
                .o(*rnd)
                .f(*ftz, "ftz")
                .f(*sat, "sat")
                .f(*relu, "relu")
                .f(*satfinite, "satfinite")
                .p(dst_ty)
                .p(src_ty)
                .done(),
            Cvta { to, space, ty } => M::new("cvta").f(*to, "to").p(space).p(ty).done(),
            Ld(op) => mem(&mut M::new("ld"), op),
            Ldu(op) => mem(&mut M::new("ldu"), op),
            St(op) => mem(&mut M::new("st"), op),
            Prefetch {
                space,
                level,
                uniform,
            } => M::new(if *uniform { "prefetchu" } else { "prefetch" })
                .space(*space)
                .p(level)
                .done(),
            Isspacep { space } => M::new("isspacep").p(space).done(),
            Mapa { space, ty } => M::new("mapa").space(*space).p(ty).done(),
            Getctarank { space, ty } => M::new("getctarank").space(*space).p(ty).done(),
            Bra { uni } => M::new("bra").f(*uni, "uni").done(),
            Brx { uni } => M::new("brx").p("idx").f(*uni, "uni").done(),
            Call { uni } => M::new("call").f(*uni, "uni").done(),
            Ret { uni } => M::new("ret").f(*uni, "uni").done(),
            Exit => "exit".into(),
            Trap => "trap".into(),
            Brkpt => "brkpt".into(),
            Nanosleep => "nanosleep.u32".into(),
            Bar {
                kind,
                aligned,
                legacy,
            } => {
                let mut m = M::new(if *legacy { "bar" } else { "barrier" });
                match kind {
                    BarKind::Sync => m.p("sync"),
                    BarKind::Arrive => m.p("arrive"),
                    BarKind::Red(op) => m.p("red").p(op),
                };
                m.f(*aligned && !*legacy, "aligned");
                if let BarKind::Red(op) = kind {
                    m.p(if *op == crate::instr::BarRedOp::Popc {
                        ScalarType::U32
                    } else {
                        ScalarType::Pred
                    });
                }
                m.done()
            }
            BarWarpSync => "bar.warp.sync".into(),
            BarrierCluster {
                arrive,
                sem,
                aligned,
            } => M::new("barrier.cluster")
                .p(if *arrive { "arrive" } else { "wait" })
                .o(*sem)
                .f(*aligned, "aligned")
                .done(),
            Fence(kind) => match kind {
                FenceKind::Membar(s) => M::new("membar")
                    .p(if *s == Scope::Gpu { "gl" } else { s.as_str() })
                    .done(),
                FenceKind::Sem { sem, scope } => M::new("fence").p(sem).p(scope).done(),
                FenceKind::Proxy { proxy, space } => {
                    M::new("fence.proxy").p(proxy).o(*space).done()
                }
                FenceKind::MbarrierInit => "fence.mbarrier_init.release.cluster".into(),
            },
            Mbarrier {
                op,
                sem,
                scope,
                space,
            } => {
                let mut m = M::new("mbarrier");
                match op {
                    MbarrierOp::Init => m.p("init"),
                    MbarrierOp::Inval => m.p("inval"),
                    MbarrierOp::Arrive {
                        drop,
                        no_complete,
                        expect_tx,
                    } => m
                        .p(if *drop { "arrive_drop" } else { "arrive" })
                        .f(*expect_tx, "expect_tx")
                        .f(*no_complete, "noComplete"),
                    MbarrierOp::ExpectTx => m.p("expect_tx"),
                    MbarrierOp::CompleteTx => m.p("complete_tx"),
                    MbarrierOp::Wait { try_wait, parity } => m
                        .p(if *try_wait { "try_wait" } else { "test_wait" })
                        .f(*parity, "parity"),
                    MbarrierOp::PendingCount => m.p("pending_count"),
                };
                m.o(*sem).o(*scope).space(*space).p("b64").done()
            }
            Activemask => "activemask.b32".into(),
            Elect => "elect.sync".into(),
            Griddepcontrol { launch_dependents } => M::new("griddepcontrol")
                .p(if *launch_dependents {
                    "launch_dependents"
                } else {
                    "wait"
                })
                .done(),
            Setmaxnreg { inc } => M::new("setmaxnreg")
                .p(if *inc { "inc" } else { "dec" })
                .p("sync.aligned.u32")
                .done(),
            Shfl { mode, sync, ty } => M::new("shfl").f(*sync, "sync").p(mode).p(ty).done(),
            Vote { mode, sync, ty } => M::new("vote").f(*sync, "sync").p(mode).p(ty).done(),
            Match { mode, ty } => M::new("match").p(mode).p("sync").p(ty).done(),
            Redux { op, ty, abs, nan } => M::new("redux.sync")
                .p(op)
                .f(*abs, "abs")
                .f(*nan, "NaN")
                .p(ty)
                .done(),
            Atom(a) | Red(a) => {
                let mut m = M::new(if matches!(self, Atom(_)) {
                    "atom"
                } else {
                    "red"
                });
                m.o(a.sem)
                    .o(a.scope)
                    .space(a.space)
                    .p(a.op)
                    .f(a.noftz, "noftz");
                for h in &a.hints {
                    m.p(h);
                }
                m.o(a.vector.map(|v| format!("v{v}"))).p(a.ty).done()
            }
            Mma(x) => {
                let mut m = M::new("mma");
                m.f(x.sparse, "sp")
                    .p("sync.aligned")
                    .p(x.shape)
                    .p(x.a_layout)
                    .p(x.b_layout)
                    .f(x.satfinite, "satfinite")
                    .p(x.d_ty)
                    .p(x.a_ty)
                    .p(x.b_ty)
                    .p(x.c_ty);
                if let Some(op) = x.b1_op {
                    m.p(op).p("popc");
                }
                m.done()
            }
            Wmma(op) => match op {
                WmmaOp::Load {
                    frag,
                    layout,
                    shape,
                    space,
                    ty,
                } => M::new("wmma.load")
                    .p(frag)
                    .p("sync.aligned")
                    .p(layout)
                    .p(shape)
                    .space(*space)
                    .p(ty)
                    .done(),
                WmmaOp::Store {
                    layout,
                    shape,
                    space,
                    ty,
                } => M::new("wmma.store.d.sync.aligned")
                    .p(layout)
                    .p(shape)
                    .space(*space)
                    .p(ty)
                    .done(),
                WmmaOp::Mma {
                    a_layout,
                    b_layout,
                    shape,
                    d_ty,
                    a_ty,
                    b_ty,
                    c_ty,
                    ab_explicit,
                    rnd,
                    satfinite,
                } => {
                    let mut m = M::new("wmma.mma.sync.aligned");
                    m.p(a_layout).p(b_layout).p(shape).o(*rnd).p(d_ty);
                    if *ab_explicit {
                        m.p(a_ty).p(b_ty);
                    }
                    m.p(c_ty).f(*satfinite, "satfinite").done()
                }
            },
            Ldmatrix(x) | Stmatrix(x) => M::new(if matches!(self, Ldmatrix(_)) {
                "ldmatrix"
            } else {
                "stmatrix"
            })
            .p("sync.aligned")
            .p(format!("m{}n{}", x.shape.0, x.shape.1))
            .p(x.num)
            .f(x.trans, "trans")
            .p(x.space)
            .p(x.ty)
            .done(),
            Movmatrix { trans, ty } => M::new("movmatrix.sync.aligned.m8n8")
                .f(*trans, "trans")
                .p(ty)
                .done(),
            CpAsync { cache, hints } => {
                let mut m = M::new("cp.async");
                m.p(cache).p("shared.global");
                for h in hints {
                    m.p(h);
                }
                m.done()
            }
            CpAsyncCommitGroup => "cp.async.commit_group".into(),
            CpAsyncWaitGroup => "cp.async.wait_group".into(),
            CpAsyncWaitAll => "cp.async.wait_all".into(),
            CpAsyncMbarrierArrive { noinc, space } => M::new("cp.async.mbarrier.arrive")
                .f(*noinc, "noinc")
                .space(*space)
                .p("b64")
                .done(),
            CpAsyncBulk(b) => {
                let mut m = M::new("cp.async.bulk");
                if let Some(d) = b.tensor_dims {
                    m.p("tensor").p(format!("{d}d"));
                }
                m.p(b.dst)
                    .p(b.src)
                    .f(b.im2col, "im2col")
                    .p(b.completion)
                    .f(b.multicast, "multicast::cluster")
                    .f(b.cache_hint, "L2::cache_hint")
                    .done()
            }
            CpAsyncBulkPrefetch {
                tensor_dims,
                im2col,
                cache_hint,
            } => {
                let mut m = M::new("cp.async.bulk.prefetch");
                if let Some(d) = tensor_dims {
                    m.p("tensor").p(format!("{d}d"));
                }
                m.p("L2")
                    .p("global")
                    .f(*im2col, "im2col")
                    .f(*cache_hint, "L2::cache_hint")
                    .done()
            }
            CpReduceAsyncBulk(b) => {
                let mut m = M::new("cp.reduce.async.bulk");
                if let Some(d) = b.tensor_dims {
                    m.p("tensor").p(format!("{d}d"));
                }
                m.p(b.dst).p(b.src);
                if b.tensor_dims.is_some() {
                    m.p(b.op)
                        .p(if b.im2col { "im2col_no_offs" } else { "tile" });
                    m.p(b.completion);
                } else {
                    m.p(b.completion);
                    m.f(b.cache_hint, "L2::cache_hint")
                        .p(b.op)
                        .f(b.noftz, "noftz");
                }
                if b.tensor_dims.is_some() {
                    m.f(b.cache_hint, "L2::cache_hint");
                }
                if let Some(t) = b.ty {
                    m.p(t);
                }
                m.done()
            }
            CreatePolicy(k) => match k {
                PolicyKind::Range => "createpolicy.range.b64".into(),
                PolicyKind::Fractional => "createpolicy.fractional.b64".into(),
                PolicyKind::Cvt => "createpolicy.cvt.L2.b64".into(),
            },
            CpAsyncBulkCommitGroup => "cp.async.bulk.commit_group".into(),
            CpAsyncBulkWaitGroup { read } => {
                M::new("cp.async.bulk.wait_group").f(*read, "read").done()
            }
            Wgmma(op) => match op {
                WgmmaOp::Fence => "wgmma.fence.sync.aligned".into(),
                WgmmaOp::CommitGroup => "wgmma.commit_group.sync.aligned".into(),
                WgmmaOp::WaitGroup => "wgmma.wait_group.sync.aligned".into(),
                WgmmaOp::MmaAsync {
                    shape,
                    d_ty,
                    a_ty,
                    b_ty,
                    satfinite,
                    sparse,
                } => M::new("wgmma.mma_async")
                    .f(*sparse, "sp")
                    .p("sync.aligned")
                    .p(shape)
                    .f(*satfinite, "satfinite")
                    .p(d_ty)
                    .p(a_ty)
                    .p(b_ty)
                    .done(),
            },
            Tcgen05(op) => match op {
                Tcgen05Op::Alloc => {
                    "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32".into()
                }
                Tcgen05Op::Dealloc => "tcgen05.dealloc.cta_group::1.sync.aligned.b32".into(),
                Tcgen05Op::Relinquish => {
                    "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned".into()
                }
                Tcgen05Op::Ld { shape, num, pack } => M::new("tcgen05.ld.sync.aligned")
                    .p(shape.as_str())
                    .p(format_args!("x{num}"))
                    .f(*pack, "pack::16b")
                    .p("b32")
                    .done(),
                Tcgen05Op::St { shape, num, unpack } => M::new("tcgen05.st.sync.aligned")
                    .p(shape.as_str())
                    .p(format_args!("x{num}"))
                    .f(*unpack, "unpack::16b")
                    .p("b32")
                    .done(),
                Tcgen05Op::Wait { st } => {
                    format!(
                        "tcgen05.wait::{}.sync.aligned",
                        if *st { "st" } else { "ld" }
                    )
                }
                Tcgen05Op::Fence { after } => format!(
                    "tcgen05.fence::{}_thread_sync",
                    if *after { "after" } else { "before" }
                ),
                Tcgen05Op::Mma { kind, .. } => {
                    M::new("tcgen05.mma.cta_group::1").p(kind.as_str()).done()
                }
                Tcgen05Op::Commit { cluster } => {
                    M::new("tcgen05.commit.cta_group::1.mbarrier::arrive::one")
                        .f(*cluster, "shared::cluster")
                        .p("b64")
                        .done()
                }
            },
            Idiom { func, ty, .. } => M::new("idiom").p(func).p(ty).done(),
            Absorbed { at } => format!("absorbed.{at}"),
            Unknown { text, .. } => text.clone(),
        }
    }
}

fn hl(hi: bool) -> MulMode {
    if hi { MulMode::Hi } else { MulMode::Lo }
}

/// Writes `+N` / `-N` for a nonzero offset.
fn offset(f: &mut impl Write, off: i64) -> fmt::Result {
    match off.cmp(&0) {
        std::cmp::Ordering::Greater => write!(f, "+{off}"),
        std::cmp::Ordering::Less => write!(f, "{off}"),
        std::cmp::Ordering::Equal => Ok(()),
    }
}

impl Display for Imm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Imm::Int(v) => write!(f, "{v}"),
            Imm::F32Bits(b) => write!(f, "0f{b:08X}"),
            Imm::F64Bits(b) => write!(f, "0d{b:016X}"),
        }
    }
}

impl KernelIr {
    fn symbol_name(&self, s: &Symbol) -> String {
        match s {
            Symbol::Var(v) => self
                .vars
                .get(v.index())
                .map_or_else(|| format!("<var{}>", v.0), |d| d.name.clone()),
            Symbol::Param(p) => self
                .params
                .get(p.index())
                .map_or_else(|| format!("<param{}>", p.0), |d| d.name.clone()),
            Symbol::Func(n) => n.clone(),
        }
    }

    /// Writes one operand with names restored.
    pub fn write_operand(&self, f: &mut impl Write, o: &Operand) -> fmt::Result {
        let reg = |r: crate::RegId| {
            self.regs
                .get(r.index())
                .map_or_else(|| format!("<reg{}>", r.0), |i| i.name.clone())
        };
        match o {
            Operand::Reg(r) => f.write_str(&reg(*r)),
            Operand::RegLane { reg: r, lane } => {
                write!(
                    f,
                    "{}.{}",
                    reg(*r),
                    ["x", "y", "z", "w"].get(*lane as usize).unwrap_or(&"?")
                )
            }
            Operand::Special(s) => f.write_str(&s.name()),
            Operand::Imm(i) => write!(f, "{i}"),
            Operand::Symbol { sym, offset: off } => {
                f.write_str(&self.symbol_name(sym))?;
                offset(f, *off)
            }
            Operand::Addr(a) => {
                f.write_char('[')?;
                match &a.base {
                    AddrBase::Reg(r) => f.write_str(&reg(*r))?,
                    AddrBase::Symbol(s) => f.write_str(&self.symbol_name(s))?,
                    AddrBase::Imm(v) => write!(f, "{v}")?,
                }
                offset(f, a.offset)?;
                f.write_char(']')
            }
            Operand::TensorAddr { tmap, coords } => {
                f.write_char('[')?;
                match &tmap.base {
                    AddrBase::Reg(r) => f.write_str(&reg(*r))?,
                    AddrBase::Symbol(s) => f.write_str(&self.symbol_name(s))?,
                    AddrBase::Imm(v) => write!(f, "{v}")?,
                }
                offset(f, tmap.offset)?;
                for c in coords {
                    f.write_str(", ")?;
                    self.write_operand(f, c)?;
                }
                f.write_char(']')
            }
            Operand::Vector(v) => {
                f.write_char('{')?;
                for (i, e) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_char(',')?;
                    }
                    self.write_operand(f, e)?;
                }
                f.write_char('}')
            }
            Operand::Sink => f.write_char('_'),
            Operand::Not(x) => {
                f.write_char('!')?;
                self.write_operand(f, x)
            }
            Operand::Label(l) => match self.labels.get(l.index()) {
                Some(l) => f.write_str(&l.name),
                None => write!(f, "<label{}>", l.0),
            },
            Operand::List(v) => {
                f.write_char('(')?;
                for (i, e) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    self.write_operand(f, e)?;
                }
                f.write_char(')')
            }
            Operand::Pair(a, b) => {
                self.write_operand(f, a)?;
                f.write_char('|')?;
                self.write_operand(f, b)
            }
        }
    }

    /// `@!%p1 ld.global.f32 %f1, [%rd2+4]` (no index, no location).
    pub fn instr_text(&self, idx: usize) -> String {
        let Some(d) = self.instrs.get(idx) else {
            return String::new();
        };
        let mut s = String::new();
        if let Some(g) = &d.guard {
            let name = self
                .regs
                .get(g.reg.index())
                .map_or("<reg?>", |r| r.name.as_str());
            let _ = write!(s, "@{}{} ", if g.negated { "!" } else { "" }, name);
        }
        if let Instr::Unknown { text, .. } = &d.instr {
            let _ = write!(s, "unknown: {text}");
        } else {
            s.push_str(&d.instr.mnemonic());
        }
        // A split pair destination prints as PTX writes it: `p|q`, or `p`
        // when the second half is absent.
        let pair = d.instr.has_pair_dst() && d.operands.len() >= 2;
        for (i, o) in d.operands.iter().enumerate() {
            if pair && i == 1 {
                if *o != Operand::Sink {
                    s.push('|');
                    let _ = self.write_operand(&mut s, o);
                }
                continue;
            }
            s.push_str(if i == 0 { " " } else { ", " });
            let _ = self.write_operand(&mut s, o);
        }
        if let Instr::Unknown { reason, .. } = &d.instr {
            let _ = write!(s, " ({reason})");
        }
        s
    }

    /// `file.cu:14:9`, with the outermost user location when inlined.
    pub fn loc_text(&self, loc: &SourceLoc) -> String {
        let one = |l: &SourceLoc| {
            let file = self
                .file_path(l.file)
                .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string())
                .unwrap_or_else(|| format!("file{}", l.file));
            format!("{file}:{}:{}", l.line, l.col)
        };
        let out = loc.outermost();
        if std::ptr::eq(out, loc) {
            one(loc)
        } else {
            format!("{} (inlined at {})", one(loc), one(out))
        }
    }
}

fn write_var(f: &mut fmt::Formatter<'_>, what: &str, v: &VarDecl) -> fmt::Result {
    let indent = if what == "global" { "" } else { "  " };
    write!(f, "{indent}{what} ")?;
    if let Some(l) = &v.linkage {
        write!(f, ".{l} ")?;
    }
    write!(f, ".{}", v.space)?;
    if let Some(a) = v.align {
        write!(f, " .align {a}")?;
    }
    if let Some(n) = v.vector {
        write!(f, " .v{n}")?;
    }
    write!(f, " .{} {}", v.ty, v.name)?;
    for d in &v.dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    match v.size_bytes {
        Some(n) => write!(f, "  ; {n} bytes")?,
        None => f.write_str("  ; unsized")?,
    }
    if let Some(init) = &v.init {
        f.write_str(" = {")?;
        for (i, x) in init.iter().take(16).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match x {
                InitValue::Int(n) => write!(f, "{n}")?,
                InitValue::F32Bits(b) => write!(f, "0f{b:08X}")?,
                InitValue::F64Bits(b) => write!(f, "0d{b:016X}")?,
                InitValue::Symbol {
                    name,
                    offset: off,
                    generic,
                } => {
                    if *generic {
                        write!(f, "generic({name})")?;
                    } else {
                        f.write_str(name)?;
                    }
                    offset(f, *off)?;
                }
            }
        }
        if init.len() > 16 {
            write!(f, ", ... ({} values)", init.len())?;
        }
        f.write_char('}')?;
    }
    writeln!(f)
}

/// Splits `%r12` into (`%r`, 12).
fn numbered(name: &str) -> Option<(&str, u64)> {
    let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (p, n) = name.split_at(digits);
    if n.is_empty() || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    Some((p, n.parse().ok()?))
}

/// Which module-scope variables a function dump lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ModuleVars {
    /// Those the function's instructions name (standalone dump).
    Referenced,
    /// None (the module dump lists them once at the top).
    Omit,
}

/// Collects the variables named by an operand.
fn vars_of(o: &Operand, out: &mut Vec<bool>) {
    let mut mark = |s: &Symbol| {
        if let Symbol::Var(v) = s
            && let Some(slot) = out.get_mut(v.index())
        {
            *slot = true;
        }
    };
    match o {
        Operand::Symbol { sym, .. } => mark(sym),
        Operand::Addr(a) => {
            if let AddrBase::Symbol(s) = &a.base {
                mark(s);
            }
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|x| vars_of(x, out)),
        Operand::TensorAddr { tmap, coords } => {
            if let AddrBase::Symbol(s) = &tmap.base {
                mark(s);
            }
            coords.iter().for_each(|x| vars_of(x, out));
        }
        Operand::Not(x) => vars_of(x, out),
        Operand::Pair(a, b) => {
            vars_of(a, out);
            vars_of(b, out);
        }
        _ => {}
    }
}

impl Display for KernelIr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_dump(f, ModuleVars::Referenced, None)
    }
}

/// A [`KernelIr`] dump that also names each instruction's PTX line
/// (`ptx:57`), from [`KernelIr::dump_with_ptx_lines`].
pub struct DumpWithLines<'a> {
    ir: &'a KernelIr,
    lines: &'a [u32],
}

impl Display for DumpWithLines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ir
            .write_dump(f, ModuleVars::Referenced, Some(self.lines))
    }
}

impl KernelIr {
    /// The dump with each instruction's 1-based PTX line (`lines` parallel
    /// to `instrs`; the IR itself holds no positions, see `SourceMap`).
    pub fn dump_with_ptx_lines<'a>(&'a self, lines: &'a [u32]) -> DumpWithLines<'a> {
        DumpWithLines { ir: self, lines }
    }

    fn write_dump(
        &self,
        f: &mut fmt::Formatter<'_>,
        module_vars: ModuleVars,
        ptx_lines: Option<&[u32]>,
    ) -> fmt::Result {
        let kind = if self.is_entry { ".entry" } else { ".func" };
        writeln!(f, "{kind} {}", self.name)?;
        if !self.has_body {
            writeln!(f, "  ; declaration only")?;
        }
        for (name, vals) in &self.directives {
            let vals: Vec<String> = vals.iter().map(u64::to_string).collect();
            if vals.is_empty() {
                writeln!(f, "  .{name}")?;
            } else {
                writeln!(f, "  .{name} {}", vals.join(", "))?;
            }
        }
        for (i, p) in self.params.iter().enumerate() {
            write!(f, "  param #{i} ")?;
            if p.is_return {
                f.write_str("ret ")?;
            }
            write!(f, ".{}", p.space)?;
            if let Some(a) = p.align {
                write!(f, " .align {a}")?;
            }
            write!(f, " .{} {}", p.ty, p.name)?;
            for d in &p.dims {
                match d {
                    Some(n) => write!(f, "[{n}]")?,
                    None => f.write_str("[]")?,
                }
            }
            if p.is_ptr {
                f.write_str(" .ptr")?;
                if let Some(s) = p.ptr_space {
                    write!(f, " .{s}")?;
                }
            }
            if let Some(n) = p.size_bytes {
                write!(f, "  ; {n} bytes")?;
            }
            writeln!(f)?;
        }
        let mut used = vec![false; self.vars.len()];
        for d in &self.instrs {
            d.operands.iter().for_each(|o| vars_of(o, &mut used));
        }
        for (v, used) in self.vars.iter().zip(used) {
            let show = match (v.scope, module_vars) {
                (VarScope::Function, _) => true,
                (VarScope::Module, ModuleVars::Referenced) => used,
                (VarScope::Module, ModuleVars::Omit) => false,
            };
            if show {
                write_var(f, "var", v)?;
            }
        }
        // Registers, runs of `%rN..%rM` of one type folded into one line.
        let mut i = 0;
        while i < self.regs.len() {
            let r = &self.regs[i];
            let mut j = i + 1;
            if let Some((prefix, mut n)) = numbered(&r.name) {
                while let Some(next) = self.regs.get(j) {
                    match numbered(&next.name) {
                        Some((p, m))
                            if p == prefix
                                && m == n + 1
                                && next.ty == r.ty
                                && next.vector == r.vector =>
                        {
                            n = m;
                            j += 1;
                        }
                        _ => break,
                    }
                }
            }
            let vec = r.vector.map(|v| format!(" .v{v}")).unwrap_or_default();
            if j - i == 1 {
                writeln!(f, "  reg #{i}{vec} .{} {}", r.ty, r.name)?;
            } else {
                writeln!(
                    f,
                    "  reg #{i}..#{}{vec} .{} {}..{}",
                    j - 1,
                    r.ty,
                    r.name,
                    self.regs[j - 1].name
                )?;
            }
            i = j;
        }
        if !self.has_body {
            return Ok(());
        }
        writeln!(f, "  body:")?;
        let mut by_target: Vec<Vec<&str>> = vec![Vec::new(); self.instrs.len() + 1];
        for l in self.labels.iter().filter(|l| !l.prototype) {
            if let Some(v) = by_target.get_mut(l.target as usize) {
                v.push(&l.name);
            }
        }
        for (idx, labels) in by_target.iter().enumerate() {
            for l in labels {
                writeln!(f, "{l}:")?;
            }
            let Some(d) = self.instrs.get(idx) else {
                break;
            };
            let text = self.instr_text(idx);
            let mut pos: Vec<String> = Vec::new();
            if let Some(l) = ptx_lines.and_then(|ls| ls.get(idx)) {
                pos.push(format!("ptx:{l}"));
            }
            if let Some(loc) = &d.loc {
                pos.push(self.loc_text(loc));
            }
            if pos.is_empty() {
                writeln!(f, "{idx:>5}  {text}")?
            } else {
                let line = format!("{idx:>5}  {text}");
                writeln!(f, "{line:<60} ; {}", pos.join("  "))?
            }
        }
        Ok(())
    }
}

impl Display for ModuleIr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(v) = &self.version {
            writeln!(f, ".version {v}")?;
        }
        if !self.targets.is_empty() {
            writeln!(f, ".target {}", self.targets.join(", "))?;
        }
        if let Some(a) = self.address_size {
            writeln!(f, ".address_size {a}")?;
        }
        for (n, p) in &self.files {
            writeln!(f, ".file {n} \"{p}\"")?;
        }
        for v in &self.globals {
            write_var(f, "global", v)?;
        }
        for k in self.funcs.iter().chain(&self.kernels) {
            writeln!(f)?;
            k.write_dump(f, ModuleVars::Omit, None)?;
        }
        Ok(())
    }
}
