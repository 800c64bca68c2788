//! Helpers shared by the integration tests: build a `CtaInput` from PTX
//! text, run it concretely, read outputs back.
#![allow(dead_code)]

use std::sync::Arc;

use ptxeq_exec::Role;
use ptxeq_exec::{
    CVal, Concrete, CtaInput, CtaRun, Finding, FindingKind, Limits, OutputValue, ParamValue,
    TensorInfo, run_cta,
};
use ptxeq_spec::DType;

/// A tensor of a test: name, role, dtype, shape.
pub fn tensor(name: &str, role: Role, dtype: DType, shape: &[u64]) -> TensorInfo {
    TensorInfo {
        name: name.into(),
        role,
        dtype,
        shape: shape.to_vec(),
    }
}

/// Lowers `ptx` and binds its (only) entry.
pub fn input(
    ptx: &str,
    block: [u32; 3],
    tensors: Vec<TensorInfo>,
    params: Vec<ParamValue>,
) -> CtaInput {
    let lowered = ptxeq_lower::lower_source(ptx);
    assert!(
        lowered.diagnostics.is_empty(),
        "lowering diagnostics: {:?}",
        lowered.diagnostics
    );
    let kernel = lowered.module.kernels.first().expect("an entry").clone();
    for (i, ins) in kernel.instrs.iter().enumerate() {
        assert!(
            !ins.instr.is_unknown(),
            "instruction {i} did not decode: {:?}",
            ins.instr
        );
    }
    CtaInput {
        kernel: Arc::new(kernel),
        funcs: lowered
            .module
            .funcs
            .iter()
            .map(|f| Arc::new(f.clone()))
            .collect(),
        block,
        grid: [1, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params,
        tensors,
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    }
}

pub fn run(input: &CtaInput, data: Vec<Vec<f64>>) -> CtaRun<CVal> {
    run_cta(input, [0, 0, 0], Concrete::new(data)).0
}

/// The bits of each written element of output tensor `name` (None where
/// unwritten or not representable).
pub fn out_bits(run: &CtaRun<CVal>, tensor: u32, n: usize) -> Vec<Option<u64>> {
    let mut v = vec![None; n];
    let out = run
        .outputs
        .iter()
        .find(|o| o.tensor == tensor)
        .expect("output tensor");
    for (i, e) in &out.elements {
        if let OutputValue::Bits(b) = e {
            v[*i as usize] = Some(*b);
        }
    }
    v
}

pub fn out_f64(run: &CtaRun<CVal>, tensor: u32, n: usize) -> Vec<Option<f64>> {
    let mut v = vec![None; n];
    let out = run
        .outputs
        .iter()
        .find(|o| o.tensor == tensor)
        .expect("output tensor");
    for (i, e) in &out.elements {
        if let OutputValue::Data(x) = e {
            v[*i as usize] = Some(x.get());
        }
    }
    v
}

pub fn kinds(run: &CtaRun<CVal>) -> Vec<FindingKind> {
    run.findings.iter().map(|f| f.kind).collect()
}

pub fn no_findings(run: &CtaRun<CVal>) {
    let f: Vec<&Finding> = run.findings.iter().collect();
    assert!(f.is_empty(), "unexpected findings: {f:#?}");
}

/// Wraps `body` into a kernel `k(out)` with `.b16 %h<16>`, `.b32 %r<64>`,
/// `.b64 %rd<32>`, `.f32 %f<32>`, `.f64 %fd<8>`, `.pred %p<16>`
/// registers, `%rd0` = the `out` pointer (a u32 tensor of `n` words), run
/// by `threads` threads; returns the words written.
pub fn int_kernel(body: &str, n: usize, threads: u32) -> Vec<Option<u32>> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b16 %h<16>;\n.reg .b32 %r<64>;\n.reg .b64 %rd<32>;\n.reg .f32 %f<32>;\n.reg .f64 %fd<8>;\n.reg .pred %p<16>;\n\
         ld.param.u64 %rd0, [out];\ncvta.to.global.u64 %rd0, %rd0;\n{body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [threads, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[n as u64])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let r = run(&inp, vec![]);
    no_findings(&r);
    out_bits(&r, 0, n)
        .into_iter()
        .map(|b| b.map(|x| x as u32))
        .collect()
}

/// Like [`int_kernel`] but returns the run for finding checks.
pub fn kernel_run(body: &str, n: usize, threads: u32, decls: &str) -> CtaRun<CVal> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n{decls}\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b16 %h<16>;\n.reg .b32 %r<64>;\n.reg .b64 %rd<32>;\n.reg .f32 %f<32>;\n.reg .f64 %fd<8>;\n.reg .pred %p<16>;\n\
         ld.param.u64 %rd0, [out];\ncvta.to.global.u64 %rd0, %rd0;\n{body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [threads, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[n as u64])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    run(&inp, vec![])
}
