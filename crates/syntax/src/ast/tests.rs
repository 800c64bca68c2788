//! Accessor tests on real-world snippets (nvcc 13 / Triton 3 output shapes).

use super::*;
use crate::{TextSize, parse};

fn file(text: &str) -> SourceFile {
    let p = parse(text);
    assert!(p.errors().is_empty(), "unexpected errors: {:?}", p.errors());
    p.tree()
}

/// All instructions of the first function, nested blocks flattened.
fn instructions(text: &str) -> Vec<Instruction> {
    fn walk(b: &Block, out: &mut Vec<Instruction>) {
        for s in b.statements() {
            match s {
                Stmt::Instruction(i) => out.push(i),
                Stmt::Block(inner) => walk(&inner, out),
                _ => {}
            }
        }
    }
    let f = file(text).functions().next().unwrap();
    let mut out = Vec::new();
    walk(&f.body().unwrap(), &mut out);
    out
}

fn ops(line: &str) -> Vec<Operand> {
    let text = format!(".entry k() {{ {line} }}");
    instructions(&text)[0].operands()
}

fn strip_ranges(op: &Operand) -> String {
    // Debug text without ranges, for compact comparisons.
    match op {
        Operand::Reg { name, .. } => format!("reg {name}"),
        Operand::Imm(i) => format!("imm {i:?}"),
        Operand::Symbol { name, .. } => format!("sym {name}"),
        Operand::SymbolOffset { name, offset, .. } => format!("sym {name}{offset:+}"),
        Operand::Address { base, offset, .. } => format!("[{base:?}{offset:+}]"),
        Operand::Vector { elems, .. } => format!(
            "{{{}}}",
            elems
                .iter()
                .map(strip_ranges)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Operand::Sink { .. } => "_".into(),
        Operand::Not(o) => format!("!{}", strip_ranges(o)),
        Operand::Pair(a, b) => format!("{}|{}", strip_ranges(a), strip_ranges(b)),
        Operand::List { elems, .. } => format!(
            "({})",
            elems
                .iter()
                .map(strip_ranges)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn ops_str(line: &str) -> Vec<String> {
    ops(line).iter().map(strip_ranges).collect()
}

#[test]
fn module_directives() {
    let f = file(
        ".version 9.5\n.target sm_90a, texmode_independent\n.address_size 64\n\
         .file 1 \"/tmp/a.cu\"\n.file 2 \"b\\\\c.h\", 1700000000, 1234\n",
    );
    assert_eq!(f.version().as_deref(), Some("9.5"));
    assert_eq!(f.targets(), vec!["sm_90a", "texmode_independent"]);
    assert_eq!(f.address_size(), Some(64));
    let files: Vec<_> = f.files().collect();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0].index(), Some(1));
    assert_eq!(files[0].path().as_deref(), Some("/tmp/a.cu"));
    assert_eq!(files[0].timestamp(), None);
    assert_eq!(files[1].path().as_deref(), Some("b\\c.h"));
    assert_eq!(files[1].timestamp(), Some(1_700_000_000));
    assert_eq!(files[1].size(), Some(1234));
}

#[test]
fn entry_params_and_perf_directives() {
    let f = file(
        ".visible .entry add_kernel(\n\t.param .u64 .ptr .global .align 1 add_kernel_param_0,\n\
         \t.param .u32 add_kernel_param_3,\n\t.param .align 16 .b8 k_param_4[16]\n)\n.reqntid 128, 1, 1\n.maxnreg 32\n.noreturn\n{\n\tret;\n}\n",
    );
    let k = f.functions().next().unwrap();
    assert!(k.is_entry());
    assert_eq!(k.linkage().as_deref(), Some("visible"));
    assert_eq!(k.name().as_deref(), Some("add_kernel"));
    let r = k.name_range().unwrap();
    assert_eq!(r.start(), TextSize::from(16));
    let ps = k.params();
    assert_eq!(ps.len(), 3);
    assert_eq!(ps[0].state_space().as_deref(), Some("param"));
    assert_eq!(ps[0].ty().as_deref(), Some("u64"));
    assert!(ps[0].is_ptr());
    assert_eq!(ps[0].ptr_space().as_deref(), Some("global"));
    assert_eq!(ps[0].align(), Some(1));
    assert_eq!(ps[0].name().as_deref(), Some("add_kernel_param_0"));
    assert!(!ps[1].is_ptr());
    assert_eq!(ps[1].ptr_space(), None);
    assert_eq!(ps[1].ty().as_deref(), Some("u32"));
    assert_eq!(ps[2].align(), Some(16));
    assert_eq!(ps[2].ty().as_deref(), Some("b8"));
    assert_eq!(ps[2].array_dims(), vec![Some(16)]);
    assert!(k.return_params().is_empty());
    assert_eq!(
        k.perf_directives(),
        vec![
            ("reqntid".to_owned(), vec![128, 1, 1]),
            ("maxnreg".to_owned(), vec![32]),
            ("noreturn".to_owned(), vec![]),
        ]
    );
    assert!(k.body().is_some());
}

#[test]
fn func_with_return_params_and_extern_decl() {
    let f = file(
        ".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n\
         .visible .func (.param .b32 func_retval0) foo(.param .b64 foo_param_0, .param .align 16 .b8 foo_param_1[16])\n{\n\tret;\n}\n\
         .weak .func bar()\n{\n\tret;\n}\n",
    );
    let fs: Vec<_> = f.functions().collect();
    assert_eq!(fs.len(), 3);
    assert!(!fs[0].is_entry());
    assert_eq!(fs[0].linkage().as_deref(), Some("extern"));
    assert_eq!(fs[0].name().as_deref(), Some("vprintf"));
    assert!(fs[0].body().is_none());
    assert_eq!(
        fs[0].return_params()[0].name().as_deref(),
        Some("func_retval0")
    );
    assert_eq!(fs[0].params().len(), 2);
    assert_eq!(fs[1].name().as_deref(), Some("foo"));
    assert_eq!(fs[1].return_params().len(), 1);
    assert_eq!(fs[1].params()[1].array_dims(), vec![Some(16)]);
    assert_eq!(fs[2].linkage().as_deref(), Some("weak"));
    assert!(fs[2].params().is_empty());
}

#[test]
fn global_vars_and_initializers() {
    let f = file(
        ".global .align 8 .u64 table[2] = {_Z4addfff, _Z4subfff+8};\n\
         .const .align 4 .b8 coeffs[16] = {1, 0, 0x10, -1};\n\
         .global .align 4 .f32 gscale = 0f3FC00000;\n\
         .global .f64 d = 1.5;\n\
         .global .u64 p = generic($str);\n\
         .global .u32 m[2][2] = {{1, 2}, {3, 4}};\n\
         .extern .shared .align 16 .b8 smem[];\n\
         .visible .global .v4 .f32 vv;\n",
    );
    let vars: Vec<_> = f.global_vars().collect();
    assert_eq!(vars.len(), 8);
    assert_eq!(vars[0].state_space().as_deref(), Some("global"));
    assert_eq!(vars[0].align(), Some(8));
    assert_eq!(vars[0].ty().as_deref(), Some("u64"));
    assert_eq!(vars[0].name().as_deref(), Some("table"));
    assert_eq!(vars[0].array_dims(), vec![Some(2)]);
    assert_eq!(
        vars[0].initializer().unwrap().values(),
        vec![
            InitValue::Symbol("_Z4addfff".into(), 0),
            InitValue::Symbol("_Z4subfff".into(), 8)
        ]
    );
    assert!(vars[0].initializer().unwrap().is_list());
    assert_eq!(vars[1].state_space().as_deref(), Some("const"));
    assert_eq!(
        vars[1].initializer().unwrap().values(),
        vec![
            InitValue::Int(1),
            InitValue::Int(0),
            InitValue::Int(16),
            InitValue::Int(-1)
        ]
    );
    assert_eq!(
        vars[2].initializer().unwrap().values(),
        vec![InitValue::Float(0x3FC0_0000, 32)]
    );
    assert!(!vars[2].initializer().unwrap().is_list());
    assert_eq!(
        vars[3].initializer().unwrap().values(),
        vec![InitValue::Float(1.5f64.to_bits(), 64)]
    );
    assert_eq!(
        vars[4].initializer().unwrap().values(),
        vec![InitValue::Generic("$str".into(), 0)]
    );
    assert_eq!(vars[5].array_dims(), vec![Some(2), Some(2)]);
    assert_eq!(
        vars[5].initializer().unwrap().values(),
        (1..=4).map(InitValue::Int).collect::<Vec<_>>()
    );
    assert_eq!(vars[6].linkage().as_deref(), Some("extern"));
    assert_eq!(vars[6].state_space().as_deref(), Some("shared"));
    assert_eq!(vars[6].array_dims(), vec![None]);
    assert!(vars[6].initializer().is_none());
    assert_eq!(vars[7].linkage().as_deref(), Some("visible"));
    assert_eq!(vars[7].vector_width(), Some(4));
    assert_eq!(vars[7].ty().as_deref(), Some("f32"));
}

#[test]
fn reg_decls_and_local_vars() {
    let f = file(
        ".entry k()\n{\n\t.reg .pred \t%p<5>;\n\t.reg .v4 .f32 %v;\n\t.reg .b32 %r1, %r2;\n\
         \t.local .align 8 .b8 \t__local_depot0[16];\n\t.shared .align 4 .f32 buf[256];\n\t{\n\t.reg .pred p;\n\t}\n}\n",
    );
    let body = f.functions().next().unwrap().body().unwrap();
    let stmts: Vec<_> = body.statements().collect();
    let Stmt::RegDecl(p) = &stmts[0] else {
        panic!()
    };
    assert_eq!(p.ty().as_deref(), Some("pred"));
    assert_eq!(
        p.names(),
        vec![RegName {
            name: "%p".into(),
            range: Some(5)
        }]
    );
    let Stmt::RegDecl(v) = &stmts[1] else {
        panic!()
    };
    assert_eq!(v.vector_width(), Some(4));
    assert_eq!(v.ty().as_deref(), Some("f32"));
    assert_eq!(v.names()[0].range, None);
    let Stmt::RegDecl(r) = &stmts[2] else {
        panic!()
    };
    let names: Vec<_> = r.names().into_iter().map(|n| n.name).collect();
    assert_eq!(names, vec!["%r1", "%r2"]);
    let Stmt::VarDecl(l) = &stmts[3] else {
        panic!()
    };
    assert_eq!(l.state_space().as_deref(), Some("local"));
    assert_eq!(l.name().as_deref(), Some("__local_depot0"));
    assert_eq!(l.array_dims(), vec![Some(16)]);
    let Stmt::VarDecl(s) = &stmts[4] else {
        panic!()
    };
    assert_eq!(s.state_space().as_deref(), Some("shared"));
    let Stmt::Block(inner) = &stmts[5] else {
        panic!()
    };
    let Some(Stmt::RegDecl(ip)) = inner.statements().next() else {
        panic!()
    };
    assert_eq!(ip.names()[0].name, "p");
}

#[test]
fn opcode_modifiers_and_guard() {
    let is = instructions(
        ".entry k() {\n@%p1 bra $L__BB0_2;\n@!%p2 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n\
         mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};\n\
         mbarrier.try_wait.shared::cta.b64 P1, [%r1], %rd2;\nbar.sync 0;\n}",
    );
    let g = is[0].guard().unwrap();
    assert_eq!(
        g,
        Guard {
            negated: false,
            reg: "%p1".into()
        }
    );
    assert_eq!(is[0].opcode().as_deref(), Some("bra"));
    assert!(is[0].modifiers().is_empty());
    assert_eq!(
        is[1].guard().unwrap(),
        Guard {
            negated: true,
            reg: "%p2".into()
        }
    );
    assert_eq!(is[1].opcode().as_deref(), Some("ld"));
    assert_eq!(is[1].modifiers(), vec!["global", "nc", "v4", "f32"]);
    let text = is[1].syntax().text().to_string();
    let r = is[1].opcode_range().unwrap();
    let start = usize::from(r.start() - is[1].syntax().text_range().start());
    assert_eq!(
        &text[start..start + usize::from(r.len())],
        "ld.global.nc.v4.f32"
    );
    assert_eq!(
        is[2].modifiers(),
        vec![
            "sync", "aligned", "m16n8k16", "row", "col", "f32", "f16", "f16", "f32"
        ]
    );
    assert_eq!(is[2].operands().len(), 4);
    assert_eq!(is[3].modifiers(), vec!["try_wait", "shared::cta", "b64"]);
    assert_eq!(is[4].guard(), None);
    assert_eq!(is[4].operands().len(), 1);
}

#[test]
fn address_operands() {
    assert_eq!(
        ops_str("ld.global.f32 %f1, [%rd1];"),
        vec!["reg %f1", "[Reg(\"%rd1\")+0]"]
    );
    assert_eq!(ops_str("ld.f32 %f1, [%rd1+16];")[1], "[Reg(\"%rd1\")+16]");
    assert_eq!(ops_str("ld.f32 %f1, [%rd1+-4];")[1], "[Reg(\"%rd1\")-4]");
    assert_eq!(ops_str("ld.f32 %f1, [ %rd1 + 0 ];")[1], "[Reg(\"%rd1\")+0]");
    assert_eq!(
        ops_str("ld.param.u64 %rd1, [k_param_0];")[1],
        "[Symbol(\"k_param_0\")+0]"
    );
    assert_eq!(
        ops_str("st.param.f32 [func_retval0+4], %f3;")[0],
        "[Symbol(\"func_retval0\")+4]"
    );
    assert_eq!(
        ops_str("ld.shared.u32 %r1, [%r1+0];")[1],
        "[Reg(\"%r1\")+0]"
    );
    assert_eq!(ops_str("ld.global.u32 %r1, [0x100];")[1], "[Imm(256)+0]");
    let o = ops("ld.f32 %f1, [%rd1+16];");
    let Operand::Address { range, .. } = &o[1] else {
        panic!()
    };
    assert_eq!(u32::from(range.len()), 9);
}

#[test]
fn vector_sink_pair_not_and_lists() {
    assert_eq!(
        ops_str("ld.global.v4.f32 {%f1, _, %f3, %f4}, [%rd1];")[0],
        "{reg %f1, _, reg %f3, reg %f4}"
    );
    assert_eq!(
        ops_str("shfl.sync.bfly.b32 %r1|%p1, %r2, 16, 31, -1;"),
        vec![
            "reg %r1|reg %p1",
            "reg %r2",
            "imm Int { value: 16, text: \"16\" }",
            "imm Int { value: 31, text: \"31\" }",
            "imm Int { value: -1, text: \"-1\" }"
        ]
    );
    assert_eq!(ops_str("selp.b32 %r1, %r2, %r3, !%p1;")[3], "!reg %p1");
    assert_eq!(
        ops_str("call.uni (retval0), vprintf, (param0, param1);"),
        vec!["(sym retval0)", "sym vprintf", "(sym param0, sym param1)"]
    );
    assert_eq!(
        ops_str("call (retval0), %rd1, (param0), prototype_0;"),
        vec![
            "(sym retval0)",
            "reg %rd1",
            "(sym param0)",
            "sym prototype_0"
        ]
    );
    assert_eq!(ops_str("call.uni foo, ();"), vec!["sym foo", "()"]);
    assert_eq!(ops_str("mov.u64 %rd2, sym+8;")[1], "sym sym+8");
    assert_eq!(ops_str("mov.u32 %r1, %tid.x;")[1], "reg %tid.x");
    assert_eq!(ops_str("mov.u32 %r1, %ctaid.y;")[1], "reg %ctaid.y");
    assert_eq!(
        ops_str("st.global.v2.f32 [%rd1], {%f1, %f2};")[1],
        "{reg %f1, reg %f2}"
    );
    let o = ops("setp.lt.and.s32 %p1|%p2, %r1, %r2, %p3;");
    let Operand::Pair(a, b) = &o[0] else { panic!() };
    assert_eq!(o[0].range(), a.range().cover(b.range()));
    let o = ops("selp.b32 %r1, %r2, %r3, !%p1;");
    assert_eq!(u32::from(o[3].range().len()), 4);
}

#[test]
fn immediates_of_every_radix() {
    let imms = ops("mov.b32 %r1, 42, 0x1F, 0X1f, 017, 0b101, 4U, -1, 0, 18446744073709551615;");
    let vals: Vec<i128> = imms[1..]
        .iter()
        .map(|o| match o {
            Operand::Imm(Immediate::Int { value, .. }) => *value,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(vals, vec![42, 31, 31, 15, 5, 4, -1, 0, u64::MAX as i128]);
    let Operand::Imm(Immediate::Int { text, .. }) = &imms[6] else {
        panic!()
    };
    assert_eq!(text, "4U");
    let fl = ops(
        "mov.f32 %f1, 0f3F800000, 0F3F800000, 0d3FF0000000000000, 0D3FF0000000000000, 1.0, -0f3F800000, 2.5e-1;",
    );
    assert_eq!(fl[1], Operand::Imm(Immediate::F32Bits(0x3F80_0000)));
    assert_eq!(fl[2], Operand::Imm(Immediate::F32Bits(0x3F80_0000)));
    assert_eq!(
        fl[3],
        Operand::Imm(Immediate::F64Bits(0x3FF0_0000_0000_0000))
    );
    assert_eq!(
        fl[4],
        Operand::Imm(Immediate::F64Bits(0x3FF0_0000_0000_0000))
    );
    assert_eq!(fl[5], Operand::Imm(Immediate::Float(1.0)));
    assert_eq!(fl[6], Operand::Imm(Immediate::F32Bits(0xBF80_0000)));
    assert_eq!(fl[7], Operand::Imm(Immediate::Float(0.25)));
}

#[test]
fn operand_ranges_cover_immediates() {
    let text = ".entry k() { add.s32 %r1, %r2, -4; }";
    let i = &instructions(text)[0];
    let ranges = i.operand_ranges();
    assert_eq!(ranges.len(), 3);
    let r = ranges[2];
    assert_eq!(&text[usize::from(r.start())..usize::from(r.end())], "-4");
}

#[test]
fn labels_loc_pragma_and_prototype() {
    let f = file(
        ".entry k()\n{\n$L__BB0_2:\n\t.loc\t1 5 0\n\t.loc 2 216 16, function_name $L__info_string0, inlined_at 1 15 13\n\
         \t.pragma \"nounroll\";\n\tprototype_2 : .callprototype (.param .b32 _) _ (.param .b32 _, .param .b64 _);\n\
         \tcall (retval0), %rd1, (param0), prototype_2;\n}\n",
    );
    let stmts: Vec<_> = f
        .functions()
        .next()
        .unwrap()
        .body()
        .unwrap()
        .statements()
        .collect();
    let Stmt::Label(l) = &stmts[0] else { panic!() };
    assert_eq!(l.name().as_deref(), Some("$L__BB0_2"));
    let Stmt::Loc(a) = &stmts[1] else { panic!() };
    assert_eq!(
        (a.file(), a.line(), a.column()),
        (Some(1), Some(5), Some(0))
    );
    assert_eq!(a.function_name(), None);
    assert_eq!(a.inlined_at(), None);
    let Stmt::Loc(b) = &stmts[2] else { panic!() };
    assert_eq!(
        (b.file(), b.line(), b.column()),
        (Some(2), Some(216), Some(16))
    );
    assert_eq!(b.function_name().as_deref(), Some("$L__info_string0"));
    assert_eq!(b.inlined_at(), Some((1, 15, 13)));
    let Stmt::Pragma(p) = &stmts[3] else { panic!() };
    assert_eq!(p.values(), vec!["nounroll"]);
    let Stmt::Other(node) = &stmts[4] else {
        panic!()
    };
    let proto = CallPrototype::cast(node.clone()).unwrap();
    assert_eq!(proto.name().as_deref(), Some("prototype_2"));
    assert_eq!(proto.return_params().len(), 1);
    assert_eq!(proto.params().len(), 2);
    assert_eq!(proto.params()[1].ty().as_deref(), Some("b64"));
    assert!(matches!(stmts[5], Stmt::Instruction(_)));
}

#[test]
fn debug_sections_are_not_items() {
    let f = file(
        ".section .debug_info\n{\n.b32 12\n.b8 0, 1\n.b64 $L__func_begin0\n.b32 .debug_abbrev\n\
         $L__info_string0:\n.b8 95,90,0\n.b32 $L__func_end0 - $L__func_begin0\n.b8 \"str\"\n}\n.section .debug_macinfo { }\n",
    );
    assert_eq!(f.functions().count(), 0);
    assert_eq!(f.global_vars().count(), 0);
}

#[test]
fn cluster_directives_and_branch_targets() {
    let f = file(
        ".visible .entry k() .explicitcluster .reqnctapercluster 2, 1, 1 .maxclusterrank 8 .minnctapersm 1\n\
         {\n$L_tbl: .branchtargets $L1, $L2;\n\tbrx.idx %r1, $L_tbl;\n$L1:\n$L2:\n\tret;\n}\n\
         .extern .func abort() .noreturn;\n",
    );
    let k = f.functions().next().unwrap();
    let names: Vec<_> = k.perf_directives().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        vec![
            "explicitcluster",
            "reqnctapercluster",
            "maxclusterrank",
            "minnctapersm"
        ]
    );
    assert_eq!(k.perf_directives()[1].1, vec![2, 1, 1]);
    let stmts: Vec<_> = k.body().unwrap().statements().collect();
    assert!(matches!(&stmts[0], Stmt::Label(l) if l.name().as_deref() == Some("$L_tbl")));
    assert!(matches!(&stmts[1], Stmt::Other(n) if n.kind() == SyntaxKind::OTHER_DIRECTIVE));
    let abort = f.functions().nth(1).unwrap();
    assert_eq!(
        abort.perf_directives(),
        vec![("noreturn".to_owned(), vec![])]
    );
    assert!(abort.body().is_none());
}

#[test]
fn accessors_tolerate_broken_trees() {
    // Nothing here may panic; values are simply missing.
    let p = parse(".entry ( { ld.global [ ; .reg ; @ ; } .global .b8 x = { generic( ;");
    assert!(!p.errors().is_empty());
    let f = p.tree();
    for func in f.functions() {
        let _ = (func.name(), func.params(), func.perf_directives());
        if let Some(b) = func.body() {
            for s in b.statements() {
                if let Stmt::Instruction(i) = s {
                    let _ = (i.opcode(), i.modifiers(), i.operands(), i.guard());
                }
            }
        }
    }
    for v in f.global_vars() {
        let _ = v.initializer().map(|i| i.values());
    }
}

#[test]
fn operands_may_start_on_the_next_line() {
    let is = instructions(
        ".entry k() {\n\tcall.uni \n\t_Z6helperff, \n\t(\n\tparam0, \n\tparam1\n\t);\n\tmov.b64 \n\t{%r1, %r2}, %rd1;\n}",
    );
    assert_eq!(is.len(), 2);
    assert_eq!(is[0].operands().len(), 2);
    assert_eq!(is[1].operands().len(), 2);
}
