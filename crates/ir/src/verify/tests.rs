use super::*;
use crate::decode::decode;
use crate::kernel::{Guard, Label, ParamDecl, RegInfo};
use crate::operand::{Imm, LabelId};
use crate::types::StateSpace;

/// Registers: %r0..%r3 are .s32, %p4/%p5 are .pred, %rd6 is .s64.
fn regs() -> Vec<RegInfo> {
    let mut v: Vec<RegInfo> = (0..4)
        .map(|i| RegInfo {
            name: format!("%r{i}"),
            ty: ScalarType::S32,
            vector: None,
        })
        .collect();
    for i in 4..6 {
        v.push(RegInfo {
            name: format!("%p{i}"),
            ty: ScalarType::Pred,
            vector: None,
        });
    }
    v.push(RegInfo {
        name: "%rd6".into(),
        ty: ScalarType::S64,
        vector: None,
    });
    v
}

fn r(i: u32) -> Operand {
    Operand::Reg(RegId(i))
}

fn imm(v: i64) -> Operand {
    Operand::Imm(Imm::Int(v.into()))
}

fn lab(i: u32) -> Operand {
    Operand::Label(LabelId(i))
}

fn ins(op: &str, mods: &[&str], ops: Vec<Operand>) -> InstrData {
    let d = decode(op, mods, ops);
    assert!(!d.instr.is_unknown(), "{op}: {:?}", d.instr);
    InstrData {
        guard: None,
        instr: d.instr,
        operands: d.operands,
        loc: None,
    }
}

fn when(p: u32, negated: bool, mut d: InstrData) -> InstrData {
    d.guard = Some(Guard {
        negated,
        reg: RegId(p),
    });
    d
}

fn mov(d: u32) -> InstrData {
    ins("mov", &["s32"], vec![r(d), imm(1)])
}

fn add(d: u32, a: u32) -> InstrData {
    ins("add", &["s32"], vec![r(d), r(a), r(a)])
}

fn setp(p: u32) -> InstrData {
    ins("setp", &["lt", "s32"], vec![r(p), r(3), imm(0)])
}

fn kernel(instrs: Vec<InstrData>, labels: &[u32]) -> KernelIr {
    KernelIr {
        name: "k".into(),
        is_entry: true,
        linkage: None,
        has_body: true,
        // %r3 is a `.reg` param: defined at entry.
        params: vec![ParamDecl {
            name: "n".into(),
            space: StateSpace::Reg,
            ty: ScalarType::S32,
            align: None,
            vector: None,
            dims: Vec::new(),
            size_bytes: None,
            is_ptr: false,
            ptr_space: None,
            is_return: false,
            reg: Some(RegId(3)),
        }],
        reqntid: None,
        maxntid: None,
        directives: Vec::new(),
        regs: regs(),
        vars: Vec::new(),
        instrs,
        labels: labels
            .iter()
            .enumerate()
            .map(|(i, &t)| Label {
                name: format!("L{i}"),
                target: t,
                prototype: false,
            })
            .collect(),
        files: Vec::new(),
    }
}

fn undefined(f: &KernelIr) -> Vec<(u32, u32)> {
    let rep = verify(f);
    assert!(rep.is_ok(), "{:?}", rep.errors);
    rep.undefined.iter().map(|u| (u.instr, u.reg.0)).collect()
}

#[test]
fn straight_line_and_params_are_defined() {
    let f = kernel(vec![mov(0), add(1, 0), add(2, 3)], &[]);
    assert_eq!(undefined(&f), vec![]);
}

#[test]
fn a_read_undefined_on_one_path_is_a_warning() {
    // setp p; @p bra L0; mov r0; L0: add r1, r0, r0
    let f = kernel(
        vec![
            setp(4),
            when(4, false, ins("bra", &[], vec![lab(0)])),
            mov(0),
            add(1, 0),
        ],
        &[3],
    );
    assert_eq!(undefined(&f), vec![(3, 0)]);
    let f = kernel(vec![add(1, 0)], &[]);
    assert_eq!(undefined(&f), vec![(0, 0)]);
}

#[test]
fn a_def_under_a_guard_defines_for_uses_under_the_same_guard() {
    let same = kernel(
        vec![setp(4), when(4, false, mov(0)), when(4, false, add(1, 0))],
        &[],
    );
    assert_eq!(undefined(&same), vec![]);
    let other = kernel(
        vec![setp(4), when(4, false, mov(0)), when(4, true, add(1, 0))],
        &[],
    );
    assert_eq!(undefined(&other), vec![(2, 0)]);
    let unguarded = kernel(vec![setp(4), when(4, false, mov(0)), add(1, 0)], &[]);
    assert_eq!(undefined(&unguarded), vec![(2, 0)]);
    // Both polarities: defined outright.
    let both = kernel(
        vec![
            setp(4),
            when(4, false, mov(0)),
            when(4, true, mov(0)),
            add(1, 0),
        ],
        &[],
    );
    assert_eq!(undefined(&both), vec![]);
    // Rewriting the predicate ends what was defined under it.
    let rewritten = kernel(
        vec![
            setp(4),
            when(4, false, mov(0)),
            setp(4),
            when(4, false, add(1, 0)),
        ],
        &[],
    );
    assert_eq!(undefined(&rewritten), vec![(3, 0)]);
}

#[test]
fn loops_reach_a_fixpoint() {
    // mov r0; L0: add r0, r0, r0; setp p; @p bra L0; add r1, r2, r2
    let f = kernel(
        vec![
            mov(0),
            add(0, 0),
            setp(4),
            when(4, false, ins("bra", &[], vec![lab(0)])),
            add(1, 2),
        ],
        &[1],
    );
    assert_eq!(undefined(&f), vec![(4, 2)]);
}

#[test]
fn broken_invariants_are_errors() {
    let errs = |f: &KernelIr| verify(f).errors.len();
    // A guard that is not a predicate.
    assert_eq!(errs(&kernel(vec![mov(0), when(0, false, mov(1))], &[])), 1);
    // A 64-bit register in a 32-bit add.
    assert_eq!(errs(&kernel(vec![mov(0), add(6, 0)], &[])), 1);
    // setp into a non-predicate.
    assert_eq!(errs(&kernel(vec![setp(0)], &[])), 1);
    // A label that does not exist, and one targeting past the body.
    assert_eq!(errs(&kernel(vec![ins("bra", &[], vec![lab(3)])], &[])), 1);
    assert_eq!(errs(&kernel(vec![mov(0)], &[7])), 1);
    // A register that does not exist.
    // A register that does not exist (named twice: two problems).
    assert_eq!(errs(&kernel(vec![add(1, 40)], &[])), 2);
}

fn idiom(first: u32, d: u32, x: u32) -> InstrData {
    InstrData {
        guard: None,
        instr: Instr::Idiom {
            func: IdiomFn::Exp,
            ty: ScalarType::F32,
            first,
        },
        operands: [r(d), r(x)].into_iter().collect(),
        loc: None,
    }
}

fn absorbed(at: u32) -> InstrData {
    InstrData {
        guard: None,
        instr: Instr::Absorbed { at },
        operands: Default::default(),
        loc: None,
    }
}

fn float_kernel(instrs: Vec<InstrData>, labels: &[u32]) -> KernelIr {
    let mut f = kernel(instrs, labels);
    for r in &mut f.regs[..3] {
        r.ty = ScalarType::F32;
    }
    f
}

#[test]
fn recognised_idioms_are_well_formed() {
    let fmov = |d| ins("mov", &["f32"], vec![r(d), Operand::Imm(Imm::F32Bits(0))]);
    let ok = float_kernel(vec![fmov(0), absorbed(2), idiom(1, 1, 0)], &[]);
    assert!(verify(&ok).is_ok(), "{:?}", verify(&ok).errors);
    // Absorbed into something that is not an idiom.
    let bad = float_kernel(vec![fmov(0), absorbed(0), idiom(1, 1, 0)], &[]);
    assert_eq!(verify(&bad).errors.len(), 1);
    // First after the idiom itself.
    let bad = float_kernel(vec![fmov(0), absorbed(2), idiom(3, 1, 0), fmov(2)], &[]);
    assert!(!verify(&bad).is_ok());
    // An idiom of the wrong width.
    let mut bad = float_kernel(vec![fmov(0), idiom(1, 1, 0)], &[]);
    bad.regs[1].ty = ScalarType::F64;
    assert_eq!(verify(&bad).errors.len(), 1);
}

#[test]
fn a_rewrite_that_breaks_def_use_is_an_error() {
    let fmov = |d| ins("mov", &["f32"], vec![r(d), Operand::Imm(Imm::F32Bits(0))]);
    let before = float_kernel(vec![fmov(0), fmov(2), fmov(1)], &[]);
    // The idiom reads %r2, whose definition the rewrite absorbed.
    let after = float_kernel(vec![fmov(0), absorbed(2), idiom(1, 1, 2)], &[]);
    let rep = verify_rewrite(&before, &after);
    assert_eq!(rep.errors.len(), 1, "{:?}", rep.errors);
    assert_eq!(rep.errors[0].instr, Some(2));
    // Reading %r0, still defined: fine.
    let after = float_kernel(vec![fmov(0), absorbed(2), idiom(1, 1, 0)], &[]);
    assert!(verify_rewrite(&before, &after).is_ok());
    // A read that was already maybe-undefined before stays a warning.
    let before = float_kernel(
        vec![fmov(1), ins("add", &["f32"], vec![r(1), r(2), r(2)])],
        &[],
    );
    let after = float_kernel(vec![absorbed(1), idiom(0, 1, 2)], &[]);
    let rep = verify_rewrite(&before, &after);
    assert!(rep.is_ok(), "{:?}", rep.errors);
    assert_eq!(rep.undefined.len(), 1);
}
