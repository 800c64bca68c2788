//! A replay with another domain follows the unrolled trace; several CTAs'
//! footprints are checked for cross-CTA races.

use std::sync::Arc;

use ptxeq_exec::Role;
use ptxeq_exec::{Concrete, CtaInput, FindingKind, Limits, ParamValue, TensorInfo, replay};
use ptxeq_spec::{CheckSpec, DType};
use ptxeq_unroll::{select_ctas, unroll, unroll_ctas};

fn corpus_input(case: &str, role: &str) -> (CheckSpec, CtaInput) {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let spec = CheckSpec::load(&root.join(case).join("check.toml")).expect("spec");
    let kref = spec
        .kernels
        .iter()
        .into_iter()
        .find(|(r, _)| *r == role)
        .expect("role")
        .1
        .clone();
    let text = std::fs::read_to_string(&kref.ptx).expect("ptx");
    let lowered = ptxeq_lower::lower_source(&text);
    let input = ptxeq_bind::cta_input(&spec, &kref, &lowered.module).expect("binds");
    (spec, input)
}

#[test]
fn concrete_replay_follows_the_opaque_trace() {
    for (case, role) in [
        ("reduction/single-reduce0-race-free", "kernel"),
        ("warp-specialized/pc-double-buffer-gemv", "candidate"),
        ("softmax/warp-shuffle-vs-naive-n128", "candidate"),
    ] {
        let (spec, input) = corpus_input(case, role);
        let u = unroll(&input, [0, 0, 0]);
        assert!(u.findings.is_empty(), "{case}: {:?}", u.findings);
        let data: Vec<Vec<f64>> = spec
            .tensors
            .values()
            .map(|t| {
                (0..t.elements().unwrap())
                    .map(|i| (i % 7) as f64 - 3.0)
                    .collect()
            })
            .collect();
        let r = replay(&input, [0, 0, 0], &u.trace, Concrete::new(data));
        assert!(r.is_ok(), "{case}: {:?}", r.err());
        assert!(u.trace.threads.iter().all(|t| t.instructions > 0));
    }
}

/// A replay does not judge races again: the opaque run of the same
/// schedule did. The racy kernel's own run reports the race; its replay
/// along that run's trace follows it and reports none.
#[test]
fn a_replay_leaves_races_to_the_run_it_follows() {
    let (_, input) = corpus_input("races/missing-barrier-reverse", "kernel");
    let u = unroll(&input, [0, 0, 0]);
    assert!(u.has(FindingKind::Race), "{:?}", u.findings);
    let (run, _) = ptxeq_exec::run_cta(&input, [0, 0, 0], Concrete::default());
    assert!(run.findings.iter().any(|f| f.kind == FindingKind::Race));
    let (replayed, _) = replay(&input, [0, 0, 0], &u.trace, Concrete::default()).expect("follows");
    assert!(
        replayed
            .findings
            .iter()
            .all(|f| f.kind != FindingKind::Race),
        "{:?}",
        replayed.findings
    );
}

#[test]
fn replay_detects_a_different_path() {
    let (_, input) = corpus_input("reduction/single-reduce0-race-free", "kernel");
    let u = unroll(&input, [0, 0, 0]);
    let mut other = input.clone();
    // a different scalar n changes every thread's loop trip count
    other.params[2] = ParamValue::Scalar { bits: 512 };
    let r = replay(&other, [0, 0, 0], &u.trace, Concrete::default());
    assert!(r.is_err());
}

fn grid_kernel(index: &str) -> CtaInput {
    grid_kernel_loading(index, "mov.u32 %r4, %r1;")
}

fn grid_kernel_loading(index: &str, load: &str) -> CtaInput {
    // y[index] = x[load] with 64 threads per CTA and 2 CTAs
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 x, .param .u64 y)\n{{\n.reg .b32 %r<8>;\n.reg .f32 %f<2>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [x];\n ld.param.u64 %rd2, [y];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n\
         {load}\n mul.wide.u32 %rd3, %r4, 4;\n add.s64 %rd4, %rd1, %rd3;\n ld.global.f32 %f1, [%rd4];\n\
         {index}\n mul.wide.u32 %rd5, %r3, 4;\n add.s64 %rd6, %rd2, %rd5;\n st.global.f32 [%rd6], %f1;\nret;\n}}\n"
    );
    let lowered = ptxeq_lower::lower_source(&ptx);
    CtaInput {
        kernel: Arc::new(lowered.module.kernels[0].clone()),
        funcs: Vec::new(),
        block: [64, 1, 1],
        grid: [2, 1, 1],
        dynamic_shared: 0,
        cluster: None,
        params: vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
        tensors: vec![
            TensorInfo {
                name: "x".into(),
                role: Role::Input,
                dtype: DType::F32,
                shape: vec![128],
            },
            TensorInfo {
                name: "y".into(),
                role: Role::Output,
                dtype: DType::F32,
                shape: vec![128],
            },
        ],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    }
}

#[test]
fn cross_cta_writes_must_be_disjoint() {
    let ctas = select_ctas(&ptxeq_spec::Ctas::All, [2, 1, 1]);
    // every CTA writes y[tid] = x[ctaid * 64 + tid]: the two CTAs store
    // different values to the same elements
    let load = "mad.lo.u32 %r4, %r2, 64, %r1;";
    let (runs, cross) = unroll_ctas(&grid_kernel_loading("mov.u32 %r3, %r1;", load), &ctas);
    assert!(runs.iter().all(|r| r.findings.is_empty()));
    assert!(!cross.is_empty());
    assert_eq!(cross[0].kind, FindingKind::Race);
    assert_eq!(cross[0].accesses[0].cta, Some([0, 0, 0]));
    assert_eq!(cross[0].accesses[1].cta, Some([1, 0, 0]));
    assert_eq!(cross[0].location.as_ref().unwrap().element, Some(0));
    // y[ctaid * 64 + tid]: disjoint
    let (_, cross) = unroll_ctas(&grid_kernel("mad.lo.u32 %r3, %r2, 64, %r1;"), &ctas);
    assert!(cross.is_empty(), "{cross:?}");
    // y[tid] = x[tid] in both: the same value by the same instruction, a
    // benign same-value store across CTAs as within one (issue 13 item 5)
    let (_, cross) = unroll_ctas(&grid_kernel("mov.u32 %r3, %r1;"), &ctas);
    assert!(cross.is_empty(), "{cross:?}");
}
