//! The engine side of the spec's binding keys, run concretely: concrete
//! float and integer tensor values, scratch tensors, struct params (and
//! their unbound padding), module variables given values or declared
//! inputs, and bound / uninterpreted function calls.

mod common;

use std::path::Path;

use common::{kinds, no_findings, out_f64, run};
use ptxeq_exec::{CVal, CtaInput, FindingKind, OutputValue};
use ptxeq_spec::CheckSpec;

fn bind(ptx: &str, spec: &str) -> Result<CtaInput, String> {
    let lowered = ptxeq_lower::lower_source(ptx);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    let spec = CheckSpec::from_toml_str(spec, Path::new("")).map_err(|e| e.message)?;
    let kref = spec.kernels.iter()[0].1.clone();
    ptxeq_bind::cta_input(&spec, &kref, &lowered.module).map_err(|e| e.message)
}

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// y[i] = x[i] * w[i] with w given concrete float values.
#[test]
fn concrete_float_values_are_constants() {
    let ptx = format!(
        "{HEAD}.visible .entry k(.param .u64 x, .param .u64 w, .param .u64 y)\n{{\n\
         .reg .b32 %r<2>;\n.reg .b64 %rd<8>;\n.reg .f32 %f<4>;\n\
         ld.param.u64 %rd1, [x];\nld.param.u64 %rd2, [w];\nld.param.u64 %rd3, [y];\n\
         mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd4, %r1, 4;\n\
         add.s64 %rd5, %rd1, %rd4;\nadd.s64 %rd6, %rd2, %rd4;\nadd.s64 %rd7, %rd3, %rd4;\n\
         ld.global.f32 %f1, [%rd5];\nld.global.f32 %f2, [%rd6];\nmul.f32 %f3, %f1, %f2;\n\
         st.global.f32 [%rd7], %f3;\nret;\n}}\n"
    );
    let spec = r#"
        [launch]
        block = 4
        [kernel]
        ptx = "k.ptx"
        params = ["x", "w", "y"]
        [tensors]
        x = { role = "input", dtype = "f32", shape = [4] }
        w = { role = "input", dtype = "f32", shape = [4], values = [0.5, 2, -1.25, 0.1] }
        y = { role = "output", dtype = "f32", shape = [4] }
    "#;
    let inp = bind(&ptx, spec).unwrap();
    assert!(inp.bindings.tensor_bytes(0).is_some());
    // Tensors are numbered by name: w = 0, x = 1, y = 2.
    let r = run(&inp, vec![vec![], vec![1.0, 1.0, 2.0, 10.0], vec![]]);
    no_findings(&r);
    let y = out_f64(&r, 2, 4);
    assert_eq!(y[..3], [Some(0.5), Some(2.0), Some(-2.5)]);
    // 0.1 is stored as the nearest f32, as a host would store it.
    assert_eq!(y[3], Some(f64::from(0.1f32) * 10.0));
}

/// A struct param: fields land at their offsets; a load of a byte no field
/// covers is a read of an unbound param.
#[test]
fn struct_fields_and_unbound_bytes() {
    let ptx = |off: u32| {
        format!(
            "{HEAD}.visible .entry k(.param .align 8 .b8 s[24])\n{{\n\
             .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<2>;\n\
             ld.param.u64 %rd1, [s];\nld.param.u32 %r1, [s+{off}];\n\
             cvt.rn.f32.s32 %f1, %r1;\nmov.u32 %r2, %tid.x;\nmul.wide.u32 %rd2, %r2, 4;\n\
             add.s64 %rd3, %rd1, %rd2;\nst.global.f32 [%rd3], %f1;\nret;\n}}\n"
        )
    };
    let spec = r#"
        [launch]
        block = 2
        [kernel]
        ptx = "k.ptx"
        params = [{ struct = [{ offset = 0, bind = "y" }, { offset = 8, bind = "n", dtype = "s32" }] }]
        [tensors]
        y = { role = "output", dtype = "f32", shape = [2] }
        [scalars]
        n = -7
    "#;
    let r = run(&bind(&ptx(8), spec).unwrap(), vec![]);
    no_findings(&r);
    assert_eq!(out_f64(&r, 0, 2), vec![Some(-7.0), Some(-7.0)]);
    // Offset 16 is past every field: reading it is unsupported.
    let r = run(&bind(&ptx(16), spec).unwrap(), vec![]);
    assert_eq!(
        kinds(&r),
        vec![FindingKind::Unsupported],
        "{:?}",
        r.findings
    );
    // A struct binding on a scalar param, and a field past the end, are
    // binding errors.
    let scalar = ptx(8).replace(".param .align 8 .b8 s[24]", ".param .u64 s");
    assert!(
        bind(&scalar, spec)
            .unwrap_err()
            .contains("not an aggregate")
    );
    let short = ptx(8).replace("s[24]", "s[10]");
    assert!(
        bind(&short, spec)
            .unwrap_err()
            .contains("past the 10-byte param")
    );
}

/// `[globals]`: values replace the initialiser; an input reads symbols.
#[test]
fn module_variables_given_values_or_inputs() {
    let ptx = format!(
        "{HEAD}.global .align 4 .u32 K = 3;\n.const .align 4 .b8 c[8] = {{0, 0, 128, 63, 0, 0, 0, 64}};\n\
         .visible .entry k(.param .u64 y)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n\
         ld.param.u64 %rd1, [y];\nld.global.u32 %r1, [K];\ncvt.rn.f32.u32 %f1, %r1;\n\
         ld.const.f32 %f2, [c+4];\nmul.f32 %f3, %f1, %f2;\nst.global.f32 [%rd1], %f3;\nret;\n}}\n"
    );
    let spec = |globals: &str| {
        format!(
            "[launch]\nblock = 1\n[kernel]\nptx = \"k.ptx\"\nparams = [\"y\"]\n\
             [tensors]\ny = {{ role = \"output\", dtype = \"f32\", shape = [1] }}\n[globals]\n{globals}\n"
        )
    };
    // Initialisers: 3 · 2.
    let r = run(&bind(&ptx, &spec("")).unwrap(), vec![]);
    assert_eq!(out_f64(&r, 0, 1), vec![Some(6.0)]);
    // Given values: 5 · 0.25.
    let inp = bind(
        &ptx,
        &spec("K = 5\nc = { values = [1, 0.25], dtype = \"f32\" }"),
    )
    .unwrap();
    let r = run(&inp, vec![]);
    assert_eq!(out_f64(&r, 0, 1), vec![Some(1.25)]);
    // c an input: its elements are symbols of tensor number 1 (after y).
    let inp = bind(&ptx, &spec("c = { role = \"input\", dtype = \"f32\" }")).unwrap();
    assert_eq!(inp.tensors.len(), 2);
    assert_eq!(inp.tensors[1].name, "c");
    assert_eq!(inp.tensors[1].shape, vec![2]);
    let r = run(&inp, vec![vec![], vec![7.0, 0.5]]);
    no_findings(&r);
    assert_eq!(out_f64(&r, 0, 1), vec![Some(1.5)]);
    // A .b8 variable needs a dtype to be an input; a value count must fit.
    let e = bind(&ptx, &spec("c = { role = \"input\" }")).unwrap_err();
    assert!(e.contains("give its element type"), "{e}");
    let e = bind(&ptx, &spec("c = { values = [1, 2, 3], dtype = \"f32\" }")).unwrap_err();
    assert!(
        e.contains("3 value(s) given but there are 2 elements"),
        "{e}"
    );
}

/// A bodiless `.func`: unsupported unbound, the exact function bound to a
/// known one, the fixed interpretation when uninterpreted.
#[test]
fn bound_function_calls() {
    let ptx = format!(
        "{HEAD}.extern .func (.param .b32 r) _Z6my_expf(.param .b32 a);\n\
         .visible .entry k(.param .u64 x, .param .u64 y)\n{{\n\
         .reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n\
         ld.param.u64 %rd1, [x];\nld.param.u64 %rd2, [y];\nld.global.f32 %f1, [%rd1];\n\
         {{\n.param .b32 p0;\nst.param.f32 [p0+0], %f1;\n.param .b32 r0;\n\
         call.uni (r0), _Z6my_expf, (p0);\nld.param.f32 %f2, [r0+0];\n}}\n\
         st.global.f32 [%rd2], %f2;\nret;\n}}\n"
    );
    let spec = |f: &str| {
        format!(
            "[launch]\nblock = 1\n[kernel]\nptx = \"k.ptx\"\nparams = [\"x\", \"y\"]\n\
             [tensors]\nx = {{ role = \"input\", dtype = \"f32\", shape = [1] }}\n\
             y = {{ role = \"output\", dtype = \"f32\", shape = [1] }}\n{f}\n"
        )
    };
    let r = run(&bind(&ptx, &spec("")).unwrap(), vec![vec![1.0], vec![]]);
    assert_eq!(kinds(&r), vec![FindingKind::Unsupported]);
    assert!(
        r.findings[0].message.contains("[functions] my_exp"),
        "{}",
        r.findings[0].message
    );
    let r = run(
        &bind(&ptx, &spec("[functions]\nmy_exp = \"exp\"")).unwrap(),
        vec![vec![1.0], vec![]],
    );
    no_findings(&r);
    let e = out_f64(&r, 1, 1)[0].unwrap();
    assert!((e - std::f64::consts::E).abs() < 1e-12, "{e}");
    let r = run(
        &bind(&ptx, &spec("[functions]\n_Z6my_expf = \"uninterpreted\"")).unwrap(),
        vec![vec![0.5], vec![]],
    );
    no_findings(&r);
    let want = ptxeq_terms::uninterpreted::Interpretation::of("_Z6my_expf", 1).eval_f64(&[0.5]);
    assert_eq!(out_f64(&r, 1, 1), vec![Some(want)]);
    let e = bind(&ptx, &spec("[functions]\nmy_exp = \"pow\"")).unwrap_err();
    assert!(e.contains("takes 2 argument(s)"), "{e}");
}

/// A scratch tensor: written then read back is fine and not an output;
/// read first is uninitialised, unless it has values.
#[test]
fn scratch_tensors() {
    let ptx = |first_store: bool| {
        let store = if first_store {
            "st.global.f32 [%rd2], %f1;\n"
        } else {
            ""
        };
        format!(
            "{HEAD}.visible .entry k(.param .u64 x, .param .u64 ws, .param .u64 y)\n{{\n\
             .reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n\
             ld.param.u64 %rd1, [x];\nld.param.u64 %rd2, [ws];\nld.param.u64 %rd3, [y];\n\
             ld.global.f32 %f1, [%rd1];\n{store}ld.global.f32 %f2, [%rd2];\n\
             add.f32 %f3, %f2, %f1;\nst.global.f32 [%rd3], %f3;\nret;\n}}\n"
        )
    };
    let spec = |ws: &str| {
        format!(
            "[launch]\nblock = 1\n[kernel]\nptx = \"k.ptx\"\nparams = [\"x\", \"ws\", \"y\"]\n\
             [tensors]\nx = {{ role = \"input\", dtype = \"f32\", shape = [1] }}\n\
             ws = {{ role = \"scratch\", dtype = \"f32\", shape = [1]{ws} }}\n\
             y = {{ role = \"output\", dtype = \"f32\", shape = [1] }}\n"
        )
    };
    // Tensors by name: ws = 0, x = 1, y = 2.
    let r = run(
        &bind(&ptx(true), &spec("")).unwrap(),
        vec![vec![], vec![3.0], vec![]],
    );
    no_findings(&r);
    assert_eq!(r.outputs.len(), 1, "scratch is never an output");
    assert_eq!(out_f64(&r, 2, 1), vec![Some(6.0)]);
    let r = run(
        &bind(&ptx(false), &spec("")).unwrap(),
        vec![vec![], vec![3.0], vec![]],
    );
    assert_eq!(kinds(&r), vec![FindingKind::Uninitialised]);
    assert!(
        r.findings[0].message.contains("scratch-tensor memory"),
        "{}",
        r.findings[0].message
    );
    let r = run(
        &bind(&ptx(false), &spec(", values = \"zeros\"")).unwrap(),
        vec![vec![], vec![3.0], vec![]],
    );
    no_findings(&r);
    let y: Vec<_> = r.outputs[0].elements.iter().map(|e| e.1.clone()).collect();
    assert!(
        matches!(y[..], [OutputValue::Data(CVal(b))] if f64::from_bits(b) == 3.0),
        "{y:?}"
    );
}
