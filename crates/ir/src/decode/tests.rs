//! Decoder unit tests: every family, modifier orders, bad input → Unknown.

use super::*;
use crate::instr::*;
use crate::operand::{AddrBase, Address, Imm, LabelId, RegId, Symbol};
use crate::types::*;

fn r(n: u32) -> Operand {
    Operand::Reg(RegId(n))
}
fn i(v: i128) -> Operand {
    Operand::Imm(Imm::Int(v))
}
fn a(n: u32, off: i64) -> Operand {
    Operand::Addr(Address {
        base: AddrBase::Reg(RegId(n)),
        offset: off,
    })
}
fn vec_(ns: &[u32]) -> Operand {
    Operand::Vector(ns.iter().map(|n| r(*n)).collect())
}
fn pair(x: u32, y: u32) -> Operand {
    Operand::Pair(Box::new(r(x)), Box::new(r(y)))
}
fn lbl(n: u32) -> Operand {
    Operand::Label(LabelId(n))
}

fn dec(text: &str, ops: Vec<Operand>) -> Decoded {
    let mut parts = text.split('.');
    let opcode = parts.next().unwrap();
    let mods: Vec<&str> = parts.collect();
    decode(opcode, &mods, ops)
}

/// Decodes, asserts success, and checks the canonical mnemonic re-decodes to
/// the same instruction.
#[track_caller]
fn ok(text: &str, ops: Vec<Operand>) -> Decoded {
    let d = dec(text, ops.clone());
    if let Instr::Unknown { reason, .. } = &d.instr {
        panic!("`{text}` did not decode: {reason}");
    }
    let again = dec(&d.instr.mnemonic(), ops);
    assert_eq!(
        again,
        d,
        "mnemonic `{}` does not round-trip",
        d.instr.mnemonic()
    );
    d
}

#[track_caller]
fn bad(text: &str, ops: Vec<Operand>) -> String {
    match dec(text, ops).instr {
        Instr::Unknown { text: t, reason } => {
            assert_eq!(t, text);
            reason
        }
        other => panic!("`{text}` unexpectedly decoded as {other:?}"),
    }
}

#[test]
fn add_sub_forms() {
    let d = ok("add.s32", vec![r(0), r(1), i(4)]);
    assert_eq!(
        d.instr,
        Instr::Add {
            ty: ScalarType::S32,
            fp: FpMods::default(),
            carry: Carry::None
        }
    );
    let d = ok("add.rn.ftz.f32", vec![r(0), r(1), r(2)]);
    let Instr::Add { fp, .. } = d.instr else {
        panic!()
    };
    assert_eq!(fp.rnd, Some(Rounding::Rn));
    assert!(fp.ftz && !fp.sat);
    // modifier order does not matter
    assert_eq!(
        ok("add.ftz.rn.f32", vec![r(0), r(1), r(2)]).instr,
        ok("add.rn.ftz.f32", vec![r(0), r(1), r(2)]).instr
    );
    assert!(matches!(
        ok("add.cc.u32", vec![r(0), r(1), r(2)]).instr,
        Instr::Add {
            carry: Carry::Out,
            ..
        }
    ));
    assert!(matches!(
        ok("addc.cc.u32", vec![r(0), r(1), r(2)]).instr,
        Instr::Add {
            carry: Carry::InOut,
            ..
        }
    ));
    assert!(matches!(
        ok("subc.u32", vec![r(0), r(1), r(2)]).instr,
        Instr::Sub {
            carry: Carry::In,
            ..
        }
    ));
    ok("add.sat.s32", vec![r(0), r(1), r(2)]);
    ok("sub.f64", vec![r(0), r(1), r(2)]);
    ok("add.rn.f16x2", vec![r(0), r(1), r(2)]);
    assert!(bad("add.rn.s32", vec![r(0), r(1), r(2)]).contains("integer"));
    assert!(bad("add.s32", vec![r(0), r(1)]).contains("operands"));
    assert!(bad("add.f32.f32", vec![r(0), r(1), r(2)]).contains("one type"));
    assert!(bad("add.s32", vec![a(1, 0), r(1), r(2)]).contains("operands"));
    assert!(bad("add.pred", vec![r(0), r(1), r(2)]).contains("not accepted"));
}

#[test]
fn mul_mad_fma_div() {
    assert_eq!(
        ok("mul.wide.s32", vec![r(0), r(1), i(4)]).instr,
        Instr::Mul {
            ty: ScalarType::S32,
            mode: Some(MulMode::Wide),
            fp: FpMods::default()
        }
    );
    ok("mul.hi.u32", vec![r(0), r(1), r(2)]);
    ok("mul.lo.s64", vec![r(0), r(1), r(2)]);
    ok("mul.rn.f32", vec![r(0), r(1), r(2)]);
    assert!(bad("mul.s32", vec![r(0), r(1), r(2)]).contains(".wide"));
    assert!(bad("mul.wide.s64", vec![r(0), r(1), r(2)]).contains("16/32-bit"));
    assert!(bad("mul.lo.f32", vec![r(0), r(1), r(2)]).contains("float"));
    assert!(matches!(
        ok("mad.lo.cc.u32", vec![r(0), r(1), r(2), r(3)]).instr,
        Instr::Mad {
            mode: Some(MulMode::Lo),
            carry: Carry::Out,
            ..
        }
    ));
    assert!(matches!(
        ok("madc.hi.cc.u32", vec![r(0), r(1), r(2), r(3)]).instr,
        Instr::Mad {
            mode: Some(MulMode::Hi),
            carry: Carry::InOut,
            ..
        }
    ));
    ok("mad.wide.u32", vec![r(0), r(1), r(2), r(3)]);
    ok("mad.hi.sat.s32", vec![r(0), r(1), r(2), r(3)]);
    ok("mad.rn.f64", vec![r(0), r(1), r(2), r(3)]);
    ok("mul24.lo.s32", vec![r(0), r(1), r(2)]);
    assert!(matches!(
        ok("mad24.hi.sat.u32", vec![r(0), r(1), r(2), r(3)]).instr,
        Instr::Mad24 {
            hi: true,
            sat: true,
            ..
        }
    ));
    let d = ok("fma.rn.ftz.sat.f32", vec![r(0), r(1), r(2), r(3)]);
    assert_eq!(
        d.instr,
        Instr::Fma {
            ty: ScalarType::F32,
            fp: FpMods {
                rnd: Some(Rounding::Rn),
                ftz: true,
                sat: true
            },
            relu: false
        }
    );
    ok("fma.rn.relu.bf16", vec![r(0), r(1), r(2), r(3)]);
    assert!(bad("fma.rn.s32", vec![r(0), r(1), r(2), r(3)]).contains("not accepted"));
    assert!(matches!(
        ok("div.approx.ftz.f32", vec![r(0), r(1), r(2)]).instr,
        Instr::Div {
            precision: Precision::Approx,
            ..
        }
    ));
    assert!(matches!(
        ok("div.full.f32", vec![r(0), r(1), r(2)]).instr,
        Instr::Div {
            precision: Precision::Full,
            ..
        }
    ));
    ok("div.rn.f64", vec![r(0), r(1), r(2)]);
    ok("div.s32", vec![r(0), r(1), r(2)]);
    ok("rem.u64", vec![r(0), r(1), r(2)]);
    assert!(bad("div.approx.s32", vec![r(0), r(1), r(2)]).contains("integer"));
}

#[test]
fn unary_minmax_math() {
    ok("neg.s32", vec![r(0), r(1)]);
    ok("neg.ftz.f32", vec![r(0), r(1)]);
    ok("abs.f64", vec![r(0), r(1)]);
    assert!(bad("abs.ftz.s32", vec![r(0), r(1)]).contains("ftz"));
    let d = ok("max.NaN.ftz.f32", vec![r(0), r(1), r(2)]);
    let Instr::Max { mods, .. } = d.instr else {
        panic!()
    };
    assert!(mods.nan && mods.ftz && !mods.relu);
    ok("min.s32", vec![r(0), r(1), r(2)]);
    ok("max.relu.s32", vec![r(0), r(1), r(2)]);
    ok("min.xorsign.abs.f16", vec![r(0), r(1), r(2)]);
    ok("max.f32", vec![r(0), r(1), r(2), r(3)]);
    assert!(bad("min.xorsign.f32", vec![r(0), r(1), r(2)]).contains("together"));
    ok("copysign.f32", vec![r(0), r(1), r(2)]);
    ok("sad.u32", vec![r(0), r(1), r(2), r(3)]);
    ok("dp4a.u32.s32", vec![r(0), r(1), r(2), r(3)]);
    ok("dp2a.hi.s32.s32", vec![r(0), r(1), r(2), r(3)]);
    assert_eq!(
        ok("ex2.approx.ftz.f32", vec![r(0), r(1)]).instr,
        Instr::Math {
            func: MathFn::Ex2,
            ty: ScalarType::F32,
            fp: FpMods {
                rnd: None,
                ftz: true,
                sat: false
            },
            precision: Precision::Approx
        }
    );
    ok("rcp.rn.f64", vec![r(0), r(1)]);
    ok("rcp.approx.ftz.f64", vec![r(0), r(1)]);
    ok("sqrt.rn.ftz.f32", vec![r(0), r(1)]);
    ok("rsqrt.approx.f32", vec![r(0), r(1)]);
    ok("lg2.approx.ftz.f32", vec![r(0), r(1)]);
    ok("sin.approx.ftz.f32", vec![r(0), r(1)]);
    ok("cos.approx.f32", vec![r(0), r(1)]);
    ok("tanh.approx.f32", vec![r(0), r(1)]);
    assert!(bad("ex2.rn.f32", vec![r(0), r(1)]).contains("approx"));
    assert!(bad("sqrt.f32", vec![r(0), r(1)]).contains("approx"));
    assert!(bad("rcp.approx.rn.f32", vec![r(0), r(1)]).contains("both"));
    ok("testp.finite.f32", vec![r(0), r(1)]);
    assert!(bad("testp.f32", vec![r(0), r(1)]).contains("missing"));
}

#[test]
fn bits() {
    ok("and.b32", vec![r(0), r(1), i(1)]);
    ok("or.pred", vec![r(0), r(1), r(2)]);
    ok("xor.b64", vec![r(0), r(1), r(2)]);
    ok("not.pred", vec![r(0), r(1)]);
    ok("cnot.b32", vec![r(0), r(1)]);
    ok("lop3.b32", vec![r(0), r(1), r(2), r(3), i(0x96)]);
    ok("shl.b64", vec![r(0), r(1), i(3)]);
    assert!(matches!(
        ok("shr.s32", vec![r(0), r(1), i(3)]).instr,
        Instr::Shr {
            ty: ScalarType::S32
        }
    ));
    assert!(bad("shl.s32", vec![r(0), r(1), i(3)]).contains("shl"));
    assert_eq!(
        ok("shf.l.wrap.b32", vec![r(0), r(1), r(2), r(3)]).instr,
        Instr::Shf {
            left: true,
            mode: ShiftMode::Wrap,
            ty: ScalarType::B32
        }
    );
    assert_eq!(
        ok("shf.clamp.r.b32", vec![r(0), r(1), r(2), r(3)]).instr,
        ok("shf.r.clamp.b32", vec![r(0), r(1), r(2), r(3)]).instr
    );
    ok("bfe.u32", vec![r(0), r(1), i(8), i(4)]);
    ok("bfi.b64", vec![r(0), r(1), r(2), i(8), i(4)]);
    ok("prmt.b32", vec![r(0), r(1), r(2), i(0x3210)]);
    assert!(matches!(
        ok("prmt.b32.f4e", vec![r(0), r(1), r(2), r(3)]).instr,
        Instr::Prmt {
            mode: Some(PrmtMode::F4e),
            ..
        }
    ));
    ok("popc.b32", vec![r(0), r(1)]);
    ok("clz.b64", vec![r(0), r(1)]);
    ok("brev.b32", vec![r(0), r(1)]);
    ok("bfind.shiftamt.u32", vec![r(0), r(1)]);
    ok("fns.b32", vec![r(0), r(1), r(2), r(3)]);
    ok("bmsk.clamp.b32", vec![r(0), r(1), r(2)]);
    ok("szext.wrap.s32", vec![r(0), r(1), r(2)]);
    assert!(bad("shf.l.b32", vec![r(0), r(1), r(2), r(3)]).contains("clamp"));
}

#[test]
fn compare_select() {
    let d = ok("setp.lt.s32", vec![r(0), r(1), r(2)]);
    assert_eq!(
        d.instr,
        Instr::Setp {
            cmp: CmpOp::Lt,
            bool_op: None,
            ftz: false,
            ty: ScalarType::S32
        }
    );
    assert_eq!(d.operands.as_slice(), &[r(0), Operand::Sink, r(1), r(2)]);
    let d = ok(
        "setp.gt.and.ftz.f32",
        vec![pair(0, 1), r(2), r(3), Operand::Not(Box::new(r(4)))],
    );
    assert_eq!(d.operands.len(), 5);
    assert_eq!(d.operands[1], r(1));
    assert!(matches!(
        d.instr,
        Instr::Setp {
            bool_op: Some(BoolOp::And),
            ftz: true,
            ..
        }
    ));
    ok("setp.geu.f64", vec![r(0), r(1), r(2)]);
    ok("setp.hs.u32", vec![r(0), r(1), r(2)]);
    assert!(bad("setp.ltu.s32", vec![r(0), r(1), r(2)]).contains("float"));
    assert!(bad("setp.lo.f32", vec![r(0), r(1), r(2)]).contains("integer"));
    assert!(bad("setp.s32", vec![r(0), r(1), r(2)]).contains("comparison"));
    assert!(bad("setp.lt.and.s32", vec![r(0), r(1), r(2)]).contains("operands"));
    assert!(matches!(
        ok("set.lt.u32.f32", vec![r(0), r(1), r(2)]).instr,
        Instr::Set {
            dst_ty: ScalarType::U32,
            src_ty: ScalarType::F32,
            ..
        }
    ));
    ok("selp.f32", vec![r(0), r(1), r(2), r(3)]);
    ok("slct.f32.s32", vec![r(0), r(1), r(2), r(3)]);
}

#[test]
fn movement_and_conversion() {
    ok(
        "mov.u32",
        vec![r(0), Operand::Special(crate::SpecialReg::Tid(Dim::X))],
    );
    ok("mov.b64", vec![r(0), vec_(&[1, 2])]);
    ok("mov.b64", vec![vec_(&[1, 2]), r(0)]);
    ok(
        "mov.u64",
        vec![
            r(0),
            Operand::Symbol {
                sym: Symbol::Var(crate::VarId(0)),
                offset: 0,
            },
        ],
    );
    ok(
        "mov.f32",
        vec![r(0), Operand::Imm(Imm::F32Bits(0x3f80_0000))],
    );
    assert!(bad("mov.u32", vec![i(0), r(0)]).contains("operands"));
    let d = ok("cvt.rn.f32.s32", vec![r(0), r(1)]);
    assert_eq!(
        d.instr,
        Instr::Cvt {
            dst_ty: ScalarType::F32,
            src_ty: ScalarType::S32,
            rnd: Some(Rounding::Rn),
            ftz: false,
            sat: false,
            relu: false,
            satfinite: false
        }
    );
    assert!(matches!(
        ok("cvt.rzi.s32.f32", vec![r(0), r(1)]).instr,
        Instr::Cvt {
            rnd: Some(Rounding::Rzi),
            ..
        }
    ));
    ok("cvt.sat.f32.f32", vec![r(0), r(1)]);
    ok("cvt.u64.u32", vec![r(0), r(1)]);
    ok("cvt.rn.f16x2.f32", vec![r(0), r(1), r(2)]);
    ok("cvt.rn.satfinite.e4m3x2.f32", vec![r(0), r(1), r(2)]);
    assert!(bad("cvt.f32", vec![r(0), r(1)]).contains("2 types"));
    assert_eq!(
        ok("cvta.to.global.u64", vec![r(0), r(1)]).instr,
        Instr::Cvta {
            to: true,
            space: StateSpace::Global,
            ty: ScalarType::U64
        }
    );
    ok("cvta.shared::cta.u32", vec![r(0), r(1)]);
    assert!(bad("cvta.u64", vec![r(0), r(1)]).contains("space"));
}

#[test]
fn loads_and_stores() {
    let d = ok("ld.global.nc.v4.f32", vec![vec_(&[0, 1, 2, 3]), a(4, 16)]);
    let Instr::Ld(op) = &d.instr else { panic!() };
    assert_eq!(op.space, StateSpace::Global);
    assert!(op.nc);
    assert_eq!(op.vector, Some(4));
    assert_eq!(op.ty, ScalarType::F32);
    // `.nc` and `.v4` in the other order
    assert_eq!(
        ok("ld.global.v4.nc.f32", vec![vec_(&[0, 1, 2, 3]), a(4, 16)]).instr,
        d.instr
    );
    ok(
        "ld.param.u64",
        vec![
            r(0),
            Operand::Addr(Address {
                base: AddrBase::Symbol(Symbol::Param(crate::ParamId(0))),
                offset: 0,
            }),
        ],
    );
    ok("ld.f32", vec![r(0), a(1, 0)]);
    let d = ok(
        "ld.relaxed.gpu.global.L1::evict_last.u32",
        vec![r(0), a(1, 0)],
    );
    let Instr::Ld(op) = &d.instr else { panic!() };
    assert_eq!(
        (op.sem, op.scope),
        (Some(MemSem::Relaxed), Some(Scope::Gpu))
    );
    assert_eq!(op.hints, vec![CacheHint::L1EvictLast]);
    ok("ld.acquire.sys.u64", vec![r(0), a(1, 0)]);
    ok("ld.volatile.shared.u32", vec![r(0), a(1, 0)]);
    ok("ld.global.cg.L2::128B.b32", vec![r(0), a(1, 0)]);
    ok("ld.global.L2::cache_hint.b32", vec![r(0), a(1, 0), r(2)]);
    ok("ld.shared::cta.v2.b64", vec![vec_(&[0, 1]), a(2, 8)]);
    ok("ldu.global.f32", vec![r(0), a(1, 0)]);
    assert!(bad("ld.relaxed.global.u32", vec![r(0), a(1, 0)]).contains("scope"));
    assert!(bad("ld.release.gpu.u32", vec![r(0), a(1, 0)]).contains("not accepted"));
    assert!(bad("ld.shared.nc.f32", vec![r(0), a(1, 0)]).contains("global"));
    assert!(bad("ld.global.f32", vec![r(0), r(1)]).contains("operands"));
    assert!(bad("ld.global.f32.foo", vec![r(0), a(1, 0)]).contains("unexpected modifier `.foo`"));
    let d = ok("st.global.v4.f32", vec![a(0, 0), vec_(&[1, 2, 3, 4])]);
    assert!(matches!(&d.instr, Instr::St(op) if op.vector == Some(4)));
    ok("st.release.cta.shared.u32", vec![a(0, 0), i(1)]);
    ok("st.global.wb.f32", vec![a(0, 0), r(1)]);
    assert!(bad("st.global.nc.f32", vec![a(0, 0), r(1)]).contains("unexpected"));
    assert!(bad("st.global.f32", vec![r(1), a(0, 0)]).contains("operands"));
    ok("prefetch.global.L2", vec![a(0, 0)]);
    ok("prefetch.global.L2::evict_last", vec![a(0, 0)]);
    ok("prefetchu.L1", vec![a(0, 0)]);
    ok("isspacep.shared", vec![r(0), r(1)]);
    ok("mapa.shared::cluster.u32", vec![r(0), r(1), r(2)]);
    ok("getctarank.shared::cluster.u32", vec![r(0), r(1)]);
}

#[test]
fn atomics() {
    let d = ok("atom.global.add.f32", vec![r(0), a(1, 0), r(2)]);
    let Instr::Atom(m) = &d.instr else { panic!() };
    assert_eq!(
        (m.space, m.op, m.ty),
        (StateSpace::Global, AtomOp::Add, ScalarType::F32)
    );
    let d = ok(
        "atom.acq_rel.gpu.shared.cas.b32",
        vec![r(0), a(1, 0), r(2), r(3)],
    );
    let Instr::Atom(m) = &d.instr else { panic!() };
    assert_eq!((m.sem, m.scope), (Some(MemSem::AcqRel), Some(Scope::Gpu)));
    ok("atom.exch.b64", vec![r(0), a(1, 0), r(2)]);
    ok("atom.global.add.noftz.f16", vec![r(0), a(1, 0), r(2)]);
    ok(
        "atom.global.v4.f32.add",
        vec![vec_(&[0, 1, 2, 3]), a(4, 0), vec_(&[5, 6, 7, 8])],
    );
    ok("red.global.add.u32", vec![a(0, 0), i(1)]);
    ok("red.relaxed.gpu.global.max.s32", vec![a(0, 0), r(1)]);
    assert!(bad("atom.global.cas.b32", vec![r(0), a(1, 0), r(2)]).contains("operands"));
    assert!(bad("red.global.cas.b32", vec![a(0, 0), r(1), r(2)]).contains("cas"));
    assert!(bad("atom.global.f32", vec![r(0), a(1, 0), r(2)]).contains("atomic operation"));
}

#[test]
fn control() {
    assert_eq!(ok("bra", vec![lbl(0)]).instr, Instr::Bra { uni: false });
    assert_eq!(ok("bra.uni", vec![lbl(0)]).instr, Instr::Bra { uni: true });
    assert!(bad("bra", vec![r(0)]).contains("operands"));
    ok("brx.idx", vec![r(0), lbl(1)]);
    let f = Operand::Symbol {
        sym: Symbol::Func("f".into()),
        offset: 0,
    };
    let d = ok(
        "call.uni",
        vec![
            Operand::List(vec![r(9)]),
            f.clone(),
            Operand::List(vec![r(1), r(2)]),
        ],
    );
    assert_eq!(d.instr, Instr::Call { uni: true });
    assert_eq!(d.operands[0], Operand::List(vec![r(9)]));
    let d = ok("call", vec![f.clone()]);
    assert_eq!(
        d.operands.as_slice(),
        &[Operand::List(vec![]), f.clone(), Operand::List(vec![])]
    );
    let d = ok("call", vec![f.clone(), Operand::List(vec![r(1)])]);
    assert_eq!(d.operands[0], Operand::List(vec![]));
    assert_eq!(d.operands[2], Operand::List(vec![r(1)]));
    let d = ok(
        "call",
        vec![
            Operand::List(vec![r(9)]),
            r(5),
            Operand::List(vec![r(1)]),
            lbl(2),
        ],
    );
    assert_eq!(d.operands.len(), 4);
    assert!(bad("call", vec![]).contains("target"));
    assert!(bad("call", vec![i(3)]).contains("target"));
    ok("ret", vec![]);
    ok("ret.uni", vec![]);
    ok("exit", vec![]);
    ok("trap", vec![]);
    ok("nanosleep.u32", vec![i(100)]);
    assert!(bad("exit", vec![r(0)]).contains("operands"));
}

#[test]
fn barriers_and_fences() {
    let d = ok("bar.sync", vec![i(0)]);
    assert_eq!(
        d.instr,
        Instr::Bar {
            kind: BarKind::Sync,
            aligned: true,
            legacy: true
        }
    );
    ok("bar.sync", vec![i(1), i(64)]);
    ok("bar.cta.sync", vec![i(1), i(64)]);
    ok("bar.arrive", vec![i(1), i(64)]);
    assert!(bad("bar.arrive", vec![i(1)]).contains("operands"));
    assert_eq!(
        ok("barrier.sync", vec![i(0)]).instr,
        Instr::Bar {
            kind: BarKind::Sync,
            aligned: false,
            legacy: false
        }
    );
    // `.aligned` anywhere
    let x = ok("barrier.sync.aligned", vec![i(0)]).instr;
    assert_eq!(ok("barrier.aligned.sync", vec![i(0)]).instr, x);
    assert!(matches!(x, Instr::Bar { aligned: true, .. }));
    assert!(matches!(
        ok("bar.red.popc.u32", vec![r(0), i(0), r(1)]).instr,
        Instr::Bar {
            kind: BarKind::Red(BarRedOp::Popc),
            ..
        }
    ));
    ok(
        "barrier.red.and.pred",
        vec![r(0), i(0), i(64), Operand::Not(Box::new(r(1)))],
    );
    assert!(bad("bar.red.and.u32", vec![r(0), i(0), r(1)]).contains("not accepted"));
    assert!(bad("bar", vec![i(0)]).contains("needs"));
    ok("bar.warp.sync", vec![i(-1)]);
    assert_eq!(
        ok("barrier.cluster.arrive", vec![]).instr,
        Instr::BarrierCluster {
            arrive: true,
            sem: None,
            aligned: false
        }
    );
    ok("barrier.cluster.arrive.release.aligned", vec![]);
    ok("barrier.cluster.wait.acquire", vec![]);
    assert!(bad("barrier.cluster.wait.release", vec![]).contains("ordering"));
    assert_eq!(
        ok("membar.gl", vec![]).instr,
        Instr::Fence(FenceKind::Membar(Scope::Gpu))
    );
    ok("membar.cta", vec![]);
    assert_eq!(
        ok("fence.sc.gpu", vec![]).instr,
        Instr::Fence(FenceKind::Sem {
            sem: MemSem::Sc,
            scope: Scope::Gpu
        })
    );
    assert_eq!(
        ok("fence.cta", vec![]).instr,
        Instr::Fence(FenceKind::Sem {
            sem: MemSem::AcqRel,
            scope: Scope::Cta
        })
    );
    assert_eq!(
        ok("fence.proxy.async.shared::cta", vec![]).instr,
        Instr::Fence(FenceKind::Proxy {
            proxy: FenceProxy::Async,
            space: Some(StateSpace::Shared)
        })
    );
    ok("fence.proxy.alias", vec![]);
    ok("fence.mbarrier_init.release.cluster", vec![]);
    assert!(bad("fence.proxy.tensormap::generic.release.gpu", vec![]).contains("proxy"));
}

#[test]
fn mbarrier_ops() {
    assert!(matches!(
        ok("mbarrier.init.shared::cta.b64", vec![a(0, 0), r(1)]).instr,
        Instr::Mbarrier {
            op: MbarrierOp::Init,
            space: StateSpace::Shared,
            ..
        }
    ));
    ok("mbarrier.init.b64", vec![a(0, 0), i(32)]);
    ok("mbarrier.inval.shared.b64", vec![a(0, 0)]);
    ok("mbarrier.arrive.shared::cta.b64", vec![r(0), a(1, 0)]);
    ok(
        "mbarrier.arrive.release.cluster.shared::cluster.b64",
        vec![Operand::Sink, a(1, 0)],
    );
    assert!(matches!(
        ok(
            "mbarrier.arrive.expect_tx.shared.b64",
            vec![r(0), a(1, 0), i(512)]
        )
        .instr,
        Instr::Mbarrier {
            op: MbarrierOp::Arrive {
                expect_tx: true,
                ..
            },
            ..
        }
    ));
    ok(
        "mbarrier.arrive.noComplete.shared.b64",
        vec![r(0), a(1, 0), i(1)],
    );
    ok("mbarrier.arrive_drop.shared.b64", vec![r(0), a(1, 0)]);
    ok(
        "mbarrier.expect_tx.relaxed.cta.shared.b64",
        vec![a(1, 0), i(64)],
    );
    assert!(matches!(
        ok(
            "mbarrier.try_wait.parity.shared::cta.b64",
            vec![r(0), a(1, 0), r(2)]
        )
        .instr,
        Instr::Mbarrier {
            op: MbarrierOp::Wait {
                try_wait: true,
                parity: true
            },
            ..
        }
    ));
    ok("mbarrier.test_wait.shared.b64", vec![r(0), a(1, 0), r(2)]);
    ok(
        "mbarrier.try_wait.shared.b64",
        vec![r(0), a(1, 0), r(2), i(1000)],
    );
    ok("mbarrier.pending_count.b64", vec![r(0), r(1)]);
    assert!(bad("mbarrier.init.shared.b32", vec![a(0, 0), r(1)]).contains("type"));
    assert!(bad("mbarrier.frob.b64", vec![a(0, 0)]).contains("mbarrier operation"));
}

#[test]
fn misc_sync() {
    ok("activemask.b32", vec![r(0)]);
    let d = ok("elect.sync", vec![pair(0, 1), i(-1)]);
    assert_eq!(d.operands.as_slice(), &[r(0), r(1), i(-1)]);
    ok("griddepcontrol.wait", vec![]);
    ok("griddepcontrol.launch_dependents", vec![]);
    ok("setmaxnreg.inc.sync.aligned.u32", vec![i(240)]);
    assert!(bad("setmaxnreg.inc.u32", vec![i(240)]).contains("sync"));
}

#[test]
fn warp_collectives() {
    let d = ok("shfl.sync.bfly.b32", vec![r(0), r(1), i(16), i(31), i(-1)]);
    assert_eq!(
        d.instr,
        Instr::Shfl {
            mode: ShflMode::Bfly,
            sync: true,
            ty: ScalarType::B32
        }
    );
    assert_eq!(d.operands.len(), 6);
    assert_eq!(d.operands[1], Operand::Sink);
    let d = ok(
        "shfl.sync.idx.b32",
        vec![pair(0, 9), r(1), i(0), i(31), i(-1)],
    );
    assert_eq!(d.operands[1], r(9));
    ok("shfl.down.b32", vec![r(0), r(1), i(1), i(31)]);
    assert!(bad("shfl.sync.bfly.b32", vec![r(0), r(1), i(16), i(31)]).contains("operands"));
    ok("vote.sync.ballot.b32", vec![r(0), r(1), i(-1)]);
    ok(
        "vote.sync.all.pred",
        vec![r(0), Operand::Not(Box::new(r(1))), i(-1)],
    );
    ok("vote.any.pred", vec![r(0), r(1)]);
    assert!(bad("vote.sync.ballot.pred", vec![r(0), r(1), i(-1)]).contains("not accepted"));
    ok("match.any.sync.b32", vec![r(0), r(1), i(-1)]);
    ok("match.all.sync.b64", vec![pair(0, 1), r(2), i(-1)]);
    ok("redux.sync.add.s32", vec![r(0), r(1), i(-1)]);
    ok("redux.sync.max.abs.NaN.f32", vec![r(0), r(1), i(-1)]);
}

#[test]
fn matrix_ops() {
    let d = ok(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        vec![
            vec_(&[0, 1, 2, 3]),
            vec_(&[4, 5, 6, 7]),
            vec_(&[8, 9]),
            vec_(&[0, 1, 2, 3]),
        ],
    );
    let Instr::Mma(m) = d.instr else { panic!() };
    assert_eq!(m.shape, Shape { m: 16, n: 8, k: 16 });
    assert_eq!((m.a_layout, m.b_layout), (Layout::Row, Layout::Col));
    assert_eq!(
        (m.d_ty, m.a_ty, m.b_ty, m.c_ty),
        (
            ScalarType::F32,
            ScalarType::F16,
            ScalarType::F16,
            ScalarType::F32
        )
    );
    ok(
        "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
        vec![
            vec_(&[0, 1, 2, 3]),
            vec_(&[4, 5, 6, 7]),
            vec_(&[8, 9]),
            vec_(&[0, 1, 2, 3]),
        ],
    );
    ok(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc",
        vec![
            vec_(&[0, 1, 2, 3]),
            vec_(&[4, 5, 6, 7]),
            vec_(&[8, 9]),
            vec_(&[0, 1, 2, 3]),
        ],
    );
    assert!(
        bad(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f32",
            vec![vec_(&[0]), vec_(&[4]), vec_(&[8]), vec_(&[0])]
        )
        .contains("4 types")
    );
    assert!(bad("mma.m16n8k16.row.col.f32.f16.f16.f32", vec![]).contains("sync"));
    let d = ok(
        "wmma.load.a.sync.aligned.row.m16n16k16.global.f16",
        vec![vec_(&[0, 1, 2, 3, 4, 5, 6, 7]), a(8, 0), r(9)],
    );
    assert!(matches!(
        d.instr,
        Instr::Wmma(WmmaOp::Load {
            frag: Frag::A,
            layout: Layout::Row,
            space: StateSpace::Global,
            ..
        })
    ));
    ok(
        "wmma.store.d.sync.aligned.row.m16n16k16.global.f32",
        vec![a(8, 0), vec_(&[0, 1, 2, 3, 4, 5, 6, 7]), r(9)],
    );
    let d = ok(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32",
        vec![vec_(&[0]), vec_(&[1]), vec_(&[2]), vec_(&[3])],
    );
    assert!(matches!(
        d.instr,
        Instr::Wmma(WmmaOp::Mma {
            ab_explicit: false,
            a_ty: ScalarType::F16,
            d_ty: ScalarType::F32,
            ..
        })
    ));
    ok(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32",
        vec![vec_(&[0]), vec_(&[1]), vec_(&[2]), vec_(&[3])],
    );
    let d = ok(
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        vec![vec_(&[0, 1, 2, 3]), a(4, 0)],
    );
    assert_eq!(
        d.instr,
        Instr::Ldmatrix(MatrixMods {
            shape: (8, 8),
            num: MatrixNum::X4,
            trans: false,
            space: StateSpace::Shared,
            ty: ScalarType::B16
        })
    );
    assert_eq!(
        ok(
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16",
            vec![vec_(&[0, 1]), a(4, 0)]
        )
        .instr,
        ok(
            "ldmatrix.sync.aligned.x2.m8n8.shared.trans.b16",
            vec![vec_(&[0, 1]), a(4, 0)]
        )
        .instr
    );
    ok(
        "stmatrix.sync.aligned.m8n8.x1.shared.b16",
        vec![a(4, 0), vec_(&[0])],
    );
    ok("movmatrix.sync.aligned.m8n8.trans.b16", vec![r(0), r(1)]);
    assert!(
        bad(
            "ldmatrix.sync.aligned.m8n8.shared.b16",
            vec![vec_(&[0]), a(4, 0)]
        )
        .contains("x1")
    );
}

#[test]
fn async_copies() {
    let d = ok("cp.async.cg.shared.global", vec![a(0, 0), a(1, 0), i(16)]);
    assert_eq!(
        d.instr,
        Instr::CpAsync {
            cache: CacheOp::Cg,
            hints: vec![]
        }
    );
    ok(
        "cp.async.ca.shared::cta.global",
        vec![a(0, 0), a(1, 0), i(4), r(2)],
    );
    ok(
        "cp.async.cg.shared.global.L2::128B",
        vec![a(0, 0), a(1, 0), i(16)],
    );
    assert!(bad("cp.async.cs.shared.global", vec![a(0, 0), a(1, 0), i(16)]).contains(".ca"));
    assert_eq!(
        ok("cp.async.commit_group", vec![]).instr,
        Instr::CpAsyncCommitGroup
    );
    assert_eq!(
        ok("cp.async.wait_group", vec![i(0)]).instr,
        Instr::CpAsyncWaitGroup
    );
    assert_eq!(ok("cp.async.wait_all", vec![]).instr, Instr::CpAsyncWaitAll);
    ok("cp.async.mbarrier.arrive.noinc.shared.b64", vec![a(0, 0)]);
    let d = ok(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        vec![a(0, 0), a(1, 0), i(256), a(2, 0)],
    );
    let Instr::CpAsyncBulk(b) = d.instr else {
        panic!()
    };
    assert_eq!(
        (b.tensor_dims, b.dst, b.src),
        (None, StateSpace::SharedCluster, StateSpace::Global)
    );
    // `[tmap, {c0, c1}]`: the tensor map's address with its coordinates.
    let tmap = |base: u32, coords: &[u32]| Operand::TensorAddr {
        tmap: Address {
            base: AddrBase::Reg(RegId(base)),
            offset: 0,
        },
        coords: vec![vec_(coords)],
    };
    let d = ok(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        vec![a(0, 0), tmap(1, &[2, 3]), a(4, 0)],
    );
    assert!(matches!(
        d.instr,
        Instr::CpAsyncBulk(BulkCopy {
            tensor_dims: Some(2),
            ..
        })
    ));
    // The two-operand TMA store: `[tmap, {x, y}], [smem]`.
    let d = ok(
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        vec![tmap(1, &[2, 3]), a(4, 0)],
    );
    assert!(matches!(
        d.instr,
        Instr::CpAsyncBulk(BulkCopy {
            tensor_dims: Some(2),
            dst: StateSpace::Global,
            ..
        })
    ));
    ok(
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group",
        vec![tmap(1, &[2, 3, 5]), a(4, 0)],
    );
    // Coordinates must match the dimension; a tensor form needs a tensor
    // map, a plain one none.
    assert!(
        bad(
            "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group",
            vec![tmap(1, &[2, 3]), a(4, 0)]
        )
        .contains("3 coordinate")
    );
    assert!(
        bad(
            "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
            vec![a(1, 0), a(4, 0)]
        )
        .contains("tensor-map address")
    );
    assert!(
        bad(
            "cp.async.bulk.global.shared::cta.bulk_group",
            vec![tmap(1, &[2]), a(4, 0), i(256)]
        )
        .contains("size")
    );
    ok(
        "cp.async.bulk.global.shared::cta.bulk_group",
        vec![a(0, 0), a(1, 0), i(256)],
    );
    ok("cp.async.bulk.commit_group", vec![]);
    ok("cp.async.bulk.wait_group.read", vec![i(0)]);
    ok("cp.async.bulk.prefetch.L2.global", vec![a(0, 0), i(256)]);
    ok(
        "cp.async.bulk.prefetch.L2.global.L2::cache_hint",
        vec![a(0, 0), i(256), r(3)],
    );
    ok(
        "cp.async.bulk.prefetch.tensor.2d.L2.global.tile",
        vec![tmap(1, &[2, 3])],
    );
    assert!(bad("cp.async.bulk.prefetch.L2.global", vec![a(0, 0)]).contains("operands"));
    let d = ok(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32",
        vec![a(0, 0), a(1, 0), i(256)],
    );
    assert!(matches!(
        d.instr,
        Instr::CpReduceAsyncBulk(BulkReduce {
            tensor_dims: None,
            op: AtomOp::Add,
            ty: Some(ScalarType::F32),
            ..
        })
    ));
    ok(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.L2::cache_hint.add.noftz.f16",
        vec![a(0, 0), a(1, 0), i(256), r(4)],
    );
    let d = ok(
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
        vec![tmap(1, &[2, 3]), a(4, 0)],
    );
    assert!(matches!(
        d.instr,
        Instr::CpReduceAsyncBulk(BulkReduce {
            tensor_dims: Some(2),
            ty: None,
            ..
        })
    ));
    assert!(
        bad(
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.exch.b32",
            vec![a(0, 0), a(1, 0), i(256)]
        )
        .contains("reduction operation")
    );
    ok(
        "createpolicy.fractional.L2::evict_last.b64",
        vec![r(0), Operand::Imm(Imm::F32Bits(0x3f80_0000))],
    );
    ok(
        "createpolicy.fractional.L2::evict_first.L2::evict_unchanged.b64",
        vec![r(0)],
    );
    ok(
        "createpolicy.range.global.L2::evict_last.b64",
        vec![r(0), a(1, 0), i(64), i(128)],
    );
    ok("createpolicy.cvt.L2.b64", vec![r(0), r(1)]);
    assert!(bad("createpolicy.L2::evict_last.b64", vec![r(0)]).contains("createpolicy"));
    ok("wgmma.fence.sync.aligned", vec![]);
    ok("wgmma.commit_group.sync.aligned", vec![]);
    ok("wgmma.wait_group.sync.aligned", vec![i(0)]);
    let d = ok(
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
        vec![vec_(&[0, 1]), r(2), r(3), r(4), i(1), i(1), i(0), i(0)],
    );
    assert!(matches!(
        d.instr,
        Instr::Wgmma(WgmmaOp::MmaAsync {
            shape: Shape {
                m: 64,
                n: 64,
                k: 16
            },
            ..
        })
    ));
}

#[test]
fn unknown_opcodes_and_junk() {
    let reason = bad("tensormap.replace.tile.global_address.b1024.b64", vec![]);
    assert!(
        reason.contains("unsupported opcode `tensormap`"),
        "{reason}"
    );
    assert!(bad("frobnicate", vec![]).contains("unsupported opcode"));
    assert!(bad("", vec![]).contains("unsupported opcode"));
    // pairs where none is allowed
    assert!(bad("add.s32", vec![pair(0, 1), r(2), r(3)]).contains("operands"));
    // Unknown keeps operands untouched
    let d = dec("frob.x", vec![r(1), r(2)]);
    assert_eq!(d.operands.as_slice(), &[r(1), r(2)]);
}

#[test]
fn modifier_bag_never_panics_on_garbage() {
    let junk = [
        "", ".", "::", "v3", "m0n0k0", "x8", "b7", "shared::", "L9::x", "NaN", "nc",
    ];
    for op in [
        "ld", "st", "mma", "bar", "cp", "cvt", "setp", "atom", "wmma", "mbarrier",
    ] {
        for j in junk {
            for ops in [vec![], vec![r(0), a(1, 0)], vec![pair(0, 1), i(0), i(0)]] {
                let _ = decode(op, &[j, j], ops);
            }
        }
    }
}

#[test]
fn shape_parse() {
    assert_eq!(Shape::parse("m16n8k16"), Some(Shape { m: 16, n: 8, k: 16 }));
    assert_eq!(Shape::parse("m16n8"), None);
    assert_eq!(Shape::parse("m016n8k16"), None);
    assert_eq!(Shape::parse("mxnykz"), None);
}

#[test]
fn atomics_take_scope_or_ordering_alone() {
    let d = ok("atom.global.cta.add.u32", vec![r(0), a(1, 0), i(1)]);
    assert!(matches!(&d.instr, Instr::Atom(m) if m.scope == Some(Scope::Cta) && m.sem.is_none()));
    ok("atom.acquire.global.add.u32", vec![r(0), a(1, 0), i(1)]);
    ok("red.sys.global.add.u32", vec![a(1, 0), i(1)]);
}

#[test]
fn vector_widths_must_match() {
    assert!(bad("ld.global.v4.f32", vec![vec_(&[0, 1]), a(4, 0)]).contains("4 vector elements"));
    assert!(bad("ld.global.v2.f32", vec![r(0), a(4, 0)]).contains("brace vector"));
    assert!(bad("st.global.f32", vec![a(4, 0), vec_(&[0, 1])]).contains("without `.vN`"));
    ok("ld.global.b32", vec![vec_(&[0]), a(4, 0)]);
    ok(
        "ld.global.v2.f32",
        vec![Operand::Vector(vec![r(0), Operand::Sink]), a(4, 0)],
    );
    assert!(
        bad(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
            vec![vec_(&[0, 1]), a(4, 0)]
        )
        .contains("4 registers")
    );
}

#[test]
fn tcgen05_forms() {
    let d = ok(
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
        vec![a(0, 0), i(64)],
    );
    assert_eq!(d.instr, Instr::Tcgen05(Tcgen05Op::Alloc));
    ok(
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32",
        vec![r(0), i(64)],
    );
    ok(
        "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned",
        vec![],
    );
    let d = ok(
        "tcgen05.ld.sync.aligned.32x32b.x2.b32",
        vec![vec_(&[1, 2]), a(0, 0)],
    );
    assert_eq!(
        d.instr,
        Instr::Tcgen05(Tcgen05Op::Ld {
            shape: TmemShape::S32x32b,
            num: 2,
            pack: false
        })
    );
    assert_eq!(d.instr.dst_count(), Some(1));
    let d = ok(
        "tcgen05.st.sync.aligned.16x256b.x1.unpack::16b.b32",
        vec![a(0, 0), vec_(&[1, 2, 3, 4])],
    );
    assert_eq!(d.instr.dst_count(), Some(0));
    ok("tcgen05.wait::ld.sync.aligned", vec![]);
    ok("tcgen05.wait::st.sync.aligned", vec![]);
    ok("tcgen05.fence::before_thread_sync", vec![]);
    ok("tcgen05.fence::after_thread_sync", vec![]);
    let d = ok(
        "tcgen05.mma.cta_group::1.kind::f16",
        vec![a(0, 0), r(1), r(2), r(3), r(4)],
    );
    assert_eq!(
        d.instr,
        Instr::Tcgen05(Tcgen05Op::Mma {
            kind: Tcgen05Kind::F16,
            a_tmem: false
        })
    );
    let d = ok(
        "tcgen05.mma.cta_group::1.kind::tf32",
        vec![a(0, 0), a(1, 0), r(2), r(3), r(4)],
    );
    assert!(matches!(
        d.instr,
        Instr::Tcgen05(Tcgen05Op::Mma { a_tmem: true, .. })
    ));
    ok(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
        vec![a(0, 0)],
    );
    assert_eq!(
        ok(
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
            vec![a(0, 0)]
        )
        .instr
        .memory(),
        Some(crate::facts::Memory::BarrierObject(StateSpace::Shared))
    );
    // Unmodelled forms are refused by name.
    for (text, ops, why) in [
        (
            "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32",
            vec![a(0, 0), i(64)],
            "cta_group::2",
        ),
        (
            "tcgen05.cp.cta_group::1.128x256b",
            vec![a(0, 0), r(1)],
            "tcgen05.cp",
        ),
        (
            "tcgen05.shift.cta_group::1.down",
            vec![a(0, 0)],
            "tcgen05.shift",
        ),
        (
            "tcgen05.mma.cta_group::1.kind::f16.ws",
            vec![a(0, 0), r(1), r(2), r(3), r(4)],
            ".ws",
        ),
        (
            "tcgen05.mma.sp.cta_group::1.kind::f16",
            vec![a(0, 0), r(1), r(2), r(3), r(4)],
            ".sp",
        ),
        (
            "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale",
            vec![a(0, 0), r(1), r(2), r(3), r(4)],
            "block scaling",
        ),
        (
            "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64",
            vec![a(0, 0), r(1)],
            "multicast",
        ),
        (
            "tcgen05.mma.cta_group::1.kind::f16",
            vec![a(0, 0), r(1), r(2), r(3), vec_(&[5, 6, 7, 8]), r(4)],
            "disable-output-lane",
        ),
    ] {
        let reason = bad(text, ops);
        assert!(reason.contains(why), "{text}: {reason}");
    }
}
