//! Binding a spec to a kernel (issue 14): each kernel's own launch, and
//! symbolic float scalars as input symbols that the kernel reads through
//! its param.

use std::path::Path;

use ptxeq_exec::{Concrete, CtaInput, OutputValue, ParamValue, run_cta};
use ptxeq_spec::CheckSpec;

/// `y[tid] = alpha * x[tid]`, `alpha` a `.f32` param (or `.u32` in the
/// second entry, which a symbolic scalar cannot bind).
const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 x, .param .u64 y, .param .f32 alpha)
{
    .reg .f32 %f<4>;
    .reg .b64 %rd<6>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [x];
    ld.param.u64 %rd2, [y];
    ld.param.f32 %f1, [alpha];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4];
    mul.f32 %f3, %f1, %f2;
    st.global.f32 [%rd5], %f3;
    ret;
}
.visible .entry scale_int(.param .u64 x, .param .u64 y, .param .u32 alpha)
{
    ret;
}
"#;

const SPEC: &str = r#"
[launch]
block = 32
grid = 4

[reference]
ptx = "k.ptx"
entry = "scale"
params = ["x", "y", "alpha"]

[candidate]
ptx = "k.ptx"
entry = "scale"
params = ["x", "y", "alpha"]
[candidate.launch]
block = 16
grid = [8, 2]
dynamic_shared = 64

[tensors]
x = { role = "input", dtype = "f32", shape = [32] }
y = { role = "output", dtype = "f32", shape = [32] }

[scalars]
alpha = { dtype = "f32" }
"#;

fn bind(spec: &str, role: &str) -> Result<CtaInput, String> {
    let spec = CheckSpec::from_toml_str(spec, Path::new("")).map_err(|e| e.to_string())?;
    let module = ptxeq_lower::lower_source(PTX).module;
    let kref = spec
        .kernels
        .iter()
        .into_iter()
        .find(|(r, _)| *r == role)
        .map(|(_, k)| k.clone())
        .ok_or("no such kernel")?;
    ptxeq_bind::cta_input(&spec, &kref, &module).map_err(|e| e.message)
}

#[test]
fn each_kernel_gets_its_own_launch() {
    let r = bind(SPEC, "reference").unwrap();
    let c = bind(SPEC, "candidate").unwrap();
    assert_eq!(
        (r.block, r.grid, r.dynamic_shared),
        ([32, 1, 1], [4, 1, 1], 0)
    );
    assert_eq!(
        (c.block, c.grid, c.dynamic_shared),
        ([16, 1, 1], [8, 2, 1], 64)
    );
}

#[test]
fn a_symbolic_scalar_is_an_input_symbol_numbered_after_the_tensors() {
    let input = bind(SPEC, "reference").unwrap();
    assert_eq!(input.params[2], ParamValue::Symbol { input: 2 });
    assert_eq!(input.input_names(), vec!["x", "y", "alpha"]);
    assert_eq!(input.first_symbol(), 2);
    // The kernel reads the symbol's value through the param.
    let x: Vec<f64> = (0..32).map(f64::from).collect();
    let (run, _) = run_cta(
        &input,
        [0, 0, 0],
        Concrete::new(vec![x, vec![0.0; 32], vec![1.5]]),
    );
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let y = &run.outputs[0];
    assert_eq!(y.elements.len(), 32);
    for (i, v) in &y.elements {
        let OutputValue::Data(v) = v else {
            panic!("{v:?}")
        };
        assert_eq!(v.get(), 1.5 * *i as f64);
    }
}

#[test]
fn a_symbolic_scalar_binds_only_a_float_param_of_its_width() {
    let int_param = SPEC.replace("entry = \"scale\"\nparams", "entry = \"scale_int\"\nparams");
    let e = bind(&int_param, "reference").unwrap_err();
    assert!(e.contains("symbolic scalar `alpha` (f32)"), "{e}");
    assert!(e.contains("the param is .u32"), "{e}");
    let f64_scalar = SPEC.replace("alpha = { dtype = \"f32\" }", "alpha = { dtype = \"f64\" }");
    let e = bind(&f64_scalar, "reference").unwrap_err();
    assert!(e.contains("the param is .f32"), "{e}");
}
