//! Lowering on small hand-written PTX: register numbering, scoping, labels,
//! `.loc`, params and variable sizes, diagnostics.

use ptxeq_ir::{
    AddrBase, Instr, KernelIr, Operand, ParamId, RegId, ScalarType, SpecialReg, StateSpace, Symbol,
    VarId, VarScope,
};
use ptxeq_lower::{lower_function, lower_source};

const SMALL: &str = r#"
.version 8.5
.target sm_80
.address_size 64
.file 1 "dir/ref.cu"
.file 2 "lib.h"

.const .align 4 .u32 tab[] = {1, 2, 3};
.global .f32 gval = 0f3F800000;
.extern .shared .align 16 .b8 dyn[];

.visible .entry k(
    .param .u64 .ptr .global .align 16 k_x,
    .param .align 16 .b8 k_arr[64],
    .param .u32 k_n
)
.reqntid 128, 1, 1
{
    .reg .pred p, q;
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .reg .v4 .f32 %v;
    .shared .align 4 .f32 s[32][4];
    .loc 1 10 5
    ld.param.u64 %rd1, [k_x];
    ld.param.u32 %r1, [k_n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 p, %r2, %r1;
    @p bra $L_end;
    .loc 2 7 3, function_name $L__info_string0, inlined_at 1 11 9
    .loc 2 8 1, function_name $L__info_string1, inlined_at 2 7 3
    mov.u32 %r3, WARP_SZ;
    {
        .reg .b32 %t;
        .reg .pred p;
        setp.eq.u32 p, %r2, 0;
    L1:
        add.u32 %t, %t, 1;
        @!p bra L1;
    }
    {
        .reg .b32 %t;
    L1:
        mov.u32 %t, %r3;
        bra.uni L1;
    }
    mov.u64 %rd2, s;
    st.shared.f32 [s+4], %v.y;
    ld.global.nc.v4.f32 {%v.x, %v.y, %v.z, %v.w}, [%rd1+16];
    ld.const.u32 %r0, [tab+8];
$L_end:
    ret;
$L_after:
}

.func (.reg .b32 %out) f (.reg .b32 %in, .param .b64 f_p)
{
    add.s32 %out, %in, 1;
    ret;
}
"#;

fn kernel() -> KernelIr {
    let res = lower_source(SMALL);
    assert!(res.diagnostics.is_empty(), "{:?}", res.diagnostics);
    res.module.kernel("k").expect("kernel k").clone()
}

fn reg_named(k: &KernelIr, name: &str) -> Vec<RegId> {
    k.regs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.name == name)
        .map(|(i, _)| RegId(i as u32))
        .collect()
}

#[test]
fn module_header() {
    let m = lower_source(SMALL).module;
    assert_eq!(m.version.as_deref(), Some("8.5"));
    assert_eq!(m.targets, vec!["sm_80".to_string()]);
    assert_eq!(m.address_size, Some(64));
    assert_eq!(
        m.files,
        vec![(1, "dir/ref.cu".to_string()), (2, "lib.h".to_string())]
    );
    assert_eq!(m.kernels.len(), 1);
    assert_eq!(m.funcs.len(), 1);
}

#[test]
fn registers_are_dense_and_expanded() {
    let k = kernel();
    let names: Vec<&str> = k.regs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        &names[..11],
        &[
            "p", "q", "%r0", "%r1", "%r2", "%r3", "%rd0", "%rd1", "%rd2", "%v", "%t"
        ]
    );
    assert_eq!(k.regs[0].ty, ScalarType::Pred);
    assert_eq!(k.regs[2].ty, ScalarType::B32);
    assert_eq!(k.regs[9].vector, Some(4));
    // Each nested-scope declaration is its own register.
    assert_eq!(reg_named(&k, "%t").len(), 2);
    assert_eq!(reg_named(&k, "p").len(), 2);
}

#[test]
fn nested_scopes_resolve_to_their_own_registers() {
    let k = kernel();
    let ps = reg_named(&k, "p");
    let ts = reg_named(&k, "%t");
    // outer `setp.ge.u32 p, ...` (instr 3) writes the outer p
    assert_eq!(k.instrs[3].operands[0], Operand::Reg(ps[0]));
    // guard of `@p bra $L_end` is the outer p
    assert_eq!(k.instrs[4].guard.unwrap().reg, ps[0]);
    // inner `setp.eq.u32 p` (instr 6) and `@!p bra L1` use the inner p
    assert_eq!(k.instrs[6].operands[0], Operand::Reg(ps[1]));
    let g = k.instrs[8].guard.unwrap();
    assert!(g.negated);
    assert_eq!(g.reg, ps[1]);
    assert_eq!(k.instrs[7].operands[0], Operand::Reg(ts[0]));
    assert_eq!(k.instrs[9].operands[0], Operand::Reg(ts[1]));
}

#[test]
fn labels_are_block_scoped() {
    let k = kernel();
    let target = |i: usize| match &k.instrs[i].operands[0] {
        Operand::Label(l) => k.label(*l).clone(),
        o => panic!("instr {i}: {o:?}"),
    };
    // `@p bra $L_end` forward, to `ret`
    let end = target(4);
    assert_eq!(end.name, "$L_end");
    assert!(matches!(
        k.instrs[end.target as usize].instr,
        Instr::Ret { .. }
    ));
    // the two `L1`s are different labels, each targeting its own block
    let first = target(8);
    let second = target(10);
    assert_eq!((first.name.as_str(), second.name.as_str()), ("L1", "L1"));
    assert_eq!(first.target, 7);
    assert_eq!(second.target, 9);
    // a label at the very end targets instrs.len()
    let after = k.labels.iter().find(|l| l.name == "$L_after").unwrap();
    assert_eq!(after.target as usize, k.instrs.len());
}

#[test]
fn locs_attach_with_inline_chains() {
    let k = kernel();
    let l0 = k.instrs[0].loc.as_ref().unwrap();
    assert_eq!((l0.file, l0.line, l0.col), (1, 10, 5));
    assert!(l0.inlined_at.is_none());
    let l5 = k.instrs[5].loc.as_ref().unwrap();
    assert_eq!((l5.file, l5.line, l5.col), (2, 8, 1));
    let up = l5.inlined_at.as_ref().unwrap();
    assert_eq!((up.file, up.line, up.col), (2, 7, 3));
    let out = l5.outermost();
    assert_eq!((out.file, out.line, out.col), (1, 11, 9));
    assert_eq!(k.loc_text(l5), "lib.h:8:1 (inlined at ref.cu:11:9)");
}

#[test]
fn params_and_directives() {
    let k = kernel();
    assert!(k.is_entry);
    assert_eq!(k.reqntid, Some([128, 1, 1]));
    assert_eq!(k.maxntid, None);
    assert_eq!(k.params.len(), 3);
    let x = &k.params[0];
    assert_eq!(
        (x.name.as_str(), x.ty, x.size_bytes),
        ("k_x", ScalarType::U64, Some(8))
    );
    assert!(x.is_ptr);
    assert_eq!(x.ptr_space, Some(StateSpace::Global));
    let arr = &k.params[1];
    assert_eq!(
        (arr.align, arr.size_bytes, arr.dims.clone()),
        (Some(16), Some(64), vec![Some(64)])
    );
    assert_eq!(k.params[2].size_bytes, Some(4));
    // `ld.param.u64 %rd1, [k_x]`
    let a = k.instrs[0].operands[1].as_addr().unwrap();
    assert_eq!(a.base, AddrBase::Symbol(Symbol::Param(ParamId(0))));
}

#[test]
fn variables_sizes_scopes_and_uses() {
    let k = kernel();
    let names: Vec<&str> = k.vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["tab", "gval", "dyn", "s"]);
    let tab = &k.vars[0];
    assert_eq!(
        (tab.space, tab.scope, tab.size_bytes),
        (StateSpace::Const, VarScope::Module, Some(12))
    );
    assert_eq!(tab.init.as_ref().map(Vec::len), Some(3));
    assert_eq!(k.vars[1].size_bytes, Some(4));
    let dynv = &k.vars[2];
    assert_eq!(
        (dynv.space, dynv.size_bytes, dynv.linkage.as_deref()),
        (StateSpace::Shared, None, Some("extern"))
    );
    let s = &k.vars[3];
    assert_eq!(
        (s.scope, s.size_bytes, s.align),
        (VarScope::Function, Some(512), Some(4))
    );
    // `mov.u64 %rd2, s` takes the address; `[s+4]` and `[tab+8]` are symbol bases
    let mov = k
        .instrs
        .iter()
        .find(|d| {
            matches!(
                d.instr,
                Instr::Mov {
                    ty: ScalarType::U64
                }
            )
        })
        .unwrap();
    assert_eq!(
        mov.operands[1],
        Operand::Symbol {
            sym: Symbol::Var(VarId(3)),
            offset: 0
        }
    );
    let st = k
        .instrs
        .iter()
        .find(|d| matches!(d.instr, Instr::St(_)))
        .unwrap();
    let a = st.operands[0].as_addr().unwrap();
    assert_eq!(
        (a.base.clone(), a.offset),
        (AddrBase::Symbol(Symbol::Var(VarId(3))), 4)
    );
    assert_eq!(
        st.operands[1],
        Operand::RegLane {
            reg: RegId(9),
            lane: 1
        }
    );
}

#[test]
fn specials_and_predefined_constants() {
    let k = kernel();
    assert_eq!(
        k.instrs[2].operands[1],
        Operand::Special(SpecialReg::Tid(ptxeq_ir::Dim::X))
    );
    assert_eq!(
        k.instrs[5].operands[1],
        Operand::Imm(ptxeq_ir::Imm::Int(32))
    );
}

#[test]
fn register_params_of_funcs() {
    let m = lower_source(SMALL).module;
    let f = m.func("f").unwrap();
    assert!(!f.is_entry);
    assert_eq!(f.params.len(), 3);
    let input = &f.params[0];
    assert_eq!((input.space, input.is_return), (StateSpace::Reg, false));
    let out = &f.params[2];
    assert_eq!((out.name.as_str(), out.is_return), ("%out", true));
    assert_eq!(f.instrs[0].operands[0], Operand::Reg(out.reg.unwrap()));
    assert_eq!(f.instrs[0].operands[1], Operand::Reg(input.reg.unwrap()));
    assert_eq!(f.args().count(), 2);
}

#[test]
fn lower_function_picks_one() {
    let parse = ptxeq_syntax::parse(SMALL);
    let lowered = lower_function(&parse, "k").unwrap();
    assert!(lowered.diagnostics.is_empty());
    assert_eq!(lowered.ir, kernel());
    assert_eq!(lowered.map.instrs.len(), lowered.ir.instrs.len());
    assert!(lower_function(&parse, "nope").is_none());
    assert_eq!(ptxeq_lower::entry_names(&parse), vec!["k".to_string()]);
}

#[test]
fn undeclared_names_become_diagnostics_and_unknowns() {
    let text = r#"
.version 8.5
.target sm_80
.address_size 64
.entry bad()
{
    .reg .b32 %r<2>;
    add.s32 %r1, %r9, 1;
    @%p3 bra done;
    bra nowhere;
    ld.global.u32 %r1, [missing];
    mov.u32 %r0, %tid.q;
    frobnicate.b32 %r0;
    ret;
}
"#;
    let res = lower_source(text);
    let k = res.module.kernel("bad").unwrap();
    let msgs: Vec<&str> = res.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        vec![
            "undeclared register `%r9`",
            "undeclared guard register `%p3`",
            "undeclared symbol `done`",
            "undeclared symbol `nowhere`",
            "undeclared symbol `missing`",
            "undeclared register `%tid.q`",
        ]
    );
    // every diagnostic points into the text at the offending name
    let d = &res.diagnostics[0];
    assert_eq!(&text[d.range.start as usize..d.range.end as usize], "%r9");
    for (i, d) in k.instrs.iter().enumerate().take(6) {
        assert!(d.instr.is_unknown(), "instr {i}: {:?}", d.instr);
    }
    let Instr::Unknown { text: t, reason } = &k.instrs[0].instr else {
        panic!()
    };
    assert_eq!(
        (t.as_str(), reason.as_str()),
        ("add.s32", "undeclared register `%r9`")
    );
    let Instr::Unknown { reason, .. } = &k.instrs[5].instr else {
        panic!()
    };
    assert_eq!(reason, "unsupported opcode `frobnicate`");
    assert!(matches!(k.instrs[6].instr, Instr::Ret { .. }));
}

#[test]
fn huge_register_ranges_are_refused() {
    let res = lower_source(".entry k() { .reg .b32 %r<4000000000>; .reg .b32 %x; mov.b32 %x, 1; }");
    assert_eq!(res.diagnostics.len(), 1, "{:?}", res.diagnostics);
    assert!(
        res.diagnostics[0]
            .message
            .contains("registers in one function")
    );
    assert_eq!(res.module.kernels[0].regs.len(), 1);
}

#[test]
fn garbage_never_panics() {
    for text in [
        "",
        ".entry",
        ".entry k(",
        ".entry k() { add.s32 }",
        ".entry k() { .reg .b32 %r<99999999999>; }",
        ".entry k() { .reg .b32 %r<4000000000>; add.s32 %r1, %r1, %r1; }",
        ".entry k() { { { L: } } bra L; }",
        ".entry k() { .loc 1; .loc; ld.global.v4.f32 {}, []; }",
        ".func (.param .b32 r) f; .func (.param .b32 r) f { ret; } .func f { ret; }",
        "@ @ @ ;;; }}} {{{",
        ".global .b8 x[] ; .global .b8 x[];",
    ] {
        let _ = lower_source(text);
    }
}

#[test]
fn ir_is_serde_round_trippable_and_hashable() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let res = lower_source(SMALL);
    let json = serde_json::to_string(&res).unwrap();
    let back: ptxeq_lower::LowerResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back, res);
    let h = |x: &ptxeq_lower::LowerResult| {
        let mut s = DefaultHasher::new();
        x.hash(&mut s);
        s.finish()
    };
    assert_eq!(h(&back), h(&res));
    // Lowering is deterministic: equal input, equal artifact (salsa backdating).
    assert_eq!(lower_source(SMALL), res);
}

#[test]
fn display_dump_of_small_kernel() {
    let k = kernel();
    let dump = k.to_string();
    // Referenced module vars only, labels on their own lines, guard, lanes.
    assert!(
        dump.contains("  var .const .align 4 .u32 tab[]  ; 12 bytes = {1, 2, 3}"),
        "{dump}"
    );
    assert!(!dump.contains("gval"), "{dump}");
    assert!(dump.contains("\n$L_end:\n"), "{dump}");
    assert!(dump.contains("@!p bra L1"), "{dump}");
    assert!(dump.contains("st.shared.f32 [s+4], %v.y"), "{dump}");
    assert!(
        dump.contains("ld.global.nc.v4.f32 {%v.x,%v.y,%v.z,%v.w}, [%rd1+16]"),
        "{dump}"
    );
    assert!(
        dump.contains("; lib.h:8:1 (inlined at ref.cu:11:9)"),
        "{dump}"
    );
}

/// The IR holds no byte offsets: inserting a comment and blank lines moves
/// every instruction but leaves the IR equal (salsa's early cutoff relies on
/// this), while the source map does move.
#[test]
fn ir_is_independent_of_positions() {
    let moved = SMALL.replacen(".address_size 64", ".address_size 64\n// a comment\n\n", 1);
    let a = lower_function(&ptxeq_syntax::parse(SMALL), "k").unwrap();
    let b = lower_function(&ptxeq_syntax::parse(&moved), "k").unwrap();
    assert_eq!(a.ir, b.ir);
    assert_ne!(a.map, b.map);
    let shift = (moved.len() - SMALL.len()) as u32;
    assert_eq!(b.map.instrs[0].start, a.map.instrs[0].start + shift);
}

/// Issue 13 item 7: the reserved-shared-memory special registers and the
/// tensor-map address of a TMA store lower without diagnostics, the
/// coordinates kept.
#[test]
fn reserved_smem_registers_and_tensor_map_addresses() {
    let src = ".version 8.0\n.target sm_90a\n.address_size 64\n\
        .visible .entry k(.param .u64 tmap)\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<2>;\n\
        .shared .align 128 .b8 smem[1024];\n\
        mov.u32 %r0, %reserved_smem_offset_1;\n\
        mov.b32 %r1, %reserved_smem_offset_cap;\n\
        ld.param.u64 %rd1, [tmap];\n\
        cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r3}], [smem];\n\
        ret;\n}\n";
    let lowered = lower_source(src);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    let k = &lowered.module.kernels[0];
    assert_eq!(
        k.instrs[0].operands[1],
        Operand::Special(SpecialReg::ReservedSmemOffset(1))
    );
    assert_eq!(
        k.instrs[1].operands[1],
        Operand::Special(SpecialReg::ReservedSmemCap)
    );
    let tma = &k.instrs[3];
    assert!(
        matches!(tma.instr, Instr::CpAsyncBulk(_)),
        "{:?}",
        tma.instr
    );
    let Operand::TensorAddr { tmap, coords } = &tma.operands[0] else {
        panic!("{:?}", tma.operands);
    };
    assert!(matches!(tmap.base, AddrBase::Reg(_)));
    assert!(matches!(coords.as_slice(), [Operand::Vector(c)] if c.len() == 2));
    assert_eq!(
        k.instr_text(3),
        "cp.async.bulk.tensor.2d.global.shared.bulk_group [%rd1, {%r2,%r3}], [smem]"
    );
}

#[test]
fn an_immediate_too_wide_for_a_32_bit_instruction_is_an_error_at_it() {
    let text = r#"
.version 8.5
.target sm_80
.address_size 64
.entry wide()
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    .reg .pred p;
    add.s32 %r1, %r2, 4294967296;
    add.s32 %r1, %r2, 4294967295;
    and.b32 %r1, %r2, -2147483648;
    mov.u32 %r3, 0xFFFFFFFF;
    add.s64 %rd1, %rd0, 4294967296;
    mul.wide.s32 %rd1, %r1, 4;
    setp.lt.u16 p, %r1, 65536;
    ret;
}
"#;
    let res = lower_source(text);
    let msgs: Vec<&str> = res.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(
        msgs[0].contains("4294967296") && msgs[0].contains("add.s32"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("65536") && msgs[1].contains("16-bit"),
        "{msgs:?}"
    );
    // The location is the instruction's.
    let d = &res.diagnostics[0];
    let at = &text[d.range.start as usize..d.range.end as usize];
    assert!(at.starts_with("add.s32 %r1, %r2, 4294967296"), "{at:?}");
    // The instruction is not run as something else: it is unknown.
    let k = res.module.kernel("wide").unwrap();
    assert!(k.instrs[0].instr.is_unknown(), "{:?}", k.instrs[0].instr);
    assert!(!k.instrs[1].instr.is_unknown());
}
