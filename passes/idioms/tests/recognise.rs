//! Recognition on real compiler output: the template kernels themselves,
//! the corpus kernels built without fast math, and near-misses that must
//! not be recognised.

use ptxeq_idioms::{ROWS, build, recognise, templates};
use ptxeq_ir::{IdiomFn, Instr, KernelIr};

fn kernels(ptx: &str) -> Vec<KernelIr> {
    let l = ptxeq_lower::lower_source(ptx);
    assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
    l.module.kernels
}

fn corpus(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Bit-level integer instructions left in a function.
fn bit_ops(k: &KernelIr) -> usize {
    k.instrs
        .iter()
        .filter(|d| {
            matches!(
                d.instr,
                Instr::Shl { .. } | Instr::And { .. } | Instr::Or { .. } | Instr::Copysign { .. }
            ) || matches!(&d.instr, Instr::Mov { ty } if ty.bit_width() >= 32 && !ty.is_float() && d.operands.iter().any(|o| matches!(o, ptxeq_ir::Operand::Vector(_))))
        })
        .count()
}

#[test]
fn every_template_builds() {
    for row in ROWS {
        if let Err(e) = build(row) {
            panic!("{e}");
        }
    }
    assert!(templates().len() > ROWS.len(), "fused forms are derived");
    for t in templates() {
        assert!(t.len() >= 2, "{}", t.name);
    }
}

#[test]
fn every_template_kernel_is_recognised_once() {
    for row in ROWS {
        let (text, name, form, func, _) = *row;
        let k = kernels(text)
            .into_iter()
            .find(|k| k.name == name)
            .expect("kernel");
        let r = recognise(&k);
        assert_eq!(r.found.len(), 1, "{form}: {:?}", r.found);
        assert_eq!(r.found[0].func, func, "{form}");
        let idioms =
            r.ir.instrs
                .iter()
                .filter(|d| matches!(d.instr, Instr::Idiom { .. }))
                .count();
        assert_eq!(idioms, 1);
        assert!(
            !r.ir
                .instrs
                .iter()
                .any(|d| matches!(d.instr, Instr::Bra { .. })),
            "{form}: a branch survived"
        );
    }
}

#[test]
fn corpus_kernels_without_fast_math() {
    for (file, want) in [
        ("softmax/common/naive.ptx", IdiomFn::Exp),
        ("softmax/common/online.ptx", IdiomFn::Exp),
        ("attention/common/ref_libm.ptx", IdiomFn::Exp),
        ("attention/common/flash_v1_libm.ptx", IdiomFn::Exp),
    ] {
        for k in kernels(&corpus(file)) {
            let before = bit_ops(&k);
            let r = recognise(&k);
            let after = bit_ops(&r.ir);
            eprintln!(
                "{file} {}: {} recognised, bit ops {before} -> {after}",
                k.name,
                r.found.len()
            );
            assert!(r.found.iter().all(|f| f.func == want));
        }
    }
}

/// Every one of the ten expf expansions per softmax kernel is found,
/// although nvcc interleaves four of them, shares their constant
/// registers and contracts each final product into the running sum.
#[test]
fn interleaved_expansions_with_shared_constants() {
    let text = corpus("softmax/common/naive.ptx");
    for k in kernels(&text) {
        let expansions = k
            .instrs
            .iter()
            .filter(|d| matches!(&d.instr, Instr::Fma { fp, .. } if fp.rnd == Some(ptxeq_ir::Rounding::Rm)))
            .count();
        let r = recognise(&k);
        assert_eq!(r.found.len(), expansions, "{}", k.name);
        assert_eq!(expansions, 10);
        // No bit manipulation of a float survives (the remaining shl/and
        // are address and loop arithmetic on integers).
        assert!(!r.ir.instrs.iter().any(
            |d| matches!(&d.instr, Instr::Fma { fp, .. } if fp.rnd == Some(ptxeq_ir::Rounding::Rm))
        ));
    }
}

/// The nvcc expf template kernel with one edit applied.
fn edited_expf(from: &str, to: &str) -> KernelIr {
    let text = ptxeq_idioms::NVCC_DEFAULT;
    let start = text.find(".visible .entry t_expf(").expect("t_expf");
    let end = start + text[start..].find("\n}\n").expect("end") + 3;
    let body = &text[start..end];
    assert!(body.contains(from), "{from}");
    let header = &text[..text.find(".visible").expect("entry")];
    let ptx = format!("{header}{}", body.replacen(from, to, 1));
    kernels(&ptx).into_iter().next().expect("kernel")
}

#[test]
fn near_misses_are_not_recognised() {
    // A different magic constant: not nvcc's expf.
    let k = edited_expf("0f4B400001", "0f4B400002");
    assert!(recognise(&k).found.is_empty());
    // A different rounding mode in the range reduction.
    let k = edited_expf("fma.rm.f32", "fma.rz.f32");
    assert!(recognise(&k).found.is_empty());
    // An internal value used after the expansion: replacing the
    // expansion would leave it unwritten.
    let k = edited_expf(
        "st.global.f32 \t[%rd7], %f17;",
        "st.global.f32 \t[%rd7], %f17;\n\tst.global.f32 \t[%rd7+4], %f14;",
    );
    assert!(recognise(&k).found.is_empty());
    // The argument overwritten inside the expansion's span.
    let k = edited_expf(
        "mov.b32 \t%r2, %f8;",
        "mov.b32 \t%r2, %f8;\n\tmov.f32 \t%f1, 0f3F800000;",
    );
    assert!(recognise(&k).found.is_empty());
    // The unedited kernel is recognised (the edits above are what fails).
    let k = edited_expf("ret;", "ret;");
    assert_eq!(recognise(&k).found.len(), 1);
}

/// A branch into the middle of logf's expansion from outside: the
/// expansion no longer has a single entry, so it is left alone.
#[test]
fn foreign_branch_into_an_expansion_is_not_recognised() {
    let text = ptxeq_idioms::NVCC_DEFAULT;
    let start = text.find(".visible .entry t_logf(").expect("t_logf");
    let end = start + text[start..].find("\n}\n").expect("end") + 3;
    let header = &text[..text.find(".visible").expect("entry")];
    let body = text[start..end].to_string();
    let label = body
        .lines()
        .find(|l| l.starts_with("$L__"))
        .expect("a label")
        .trim_end_matches(':')
        .to_string();
    let k0 = kernels(&format!("{header}{body}"))
        .into_iter()
        .next()
        .expect("k");
    assert_eq!(recognise(&k0).found.len(), 1);
    let edited = body.replacen(
        "ld.global.f32",
        &format!("setp.eq.u32 \t%p9, %r1, 7;\n\t@%p9 bra \t{label};\n\tld.global.f32"),
        1,
    );
    let edited = edited.replacen(".reg .pred \t%p<4>;", ".reg .pred \t%p<10>;", 1);
    let k = kernels(&format!("{header}{edited}"))
        .into_iter()
        .next()
        .expect("k");
    assert!(recognise(&k).found.is_empty());
}

/// An unrecognised expansion stays unsupported: the engine names the
/// first integer instruction on the float's bits, and hints at the cause.
#[test]
fn unrecognised_bit_manipulation_is_unsupported_with_a_hint() {
    use std::sync::Arc;

    use ptxeq_exec::{Concrete, CtaInput, FindingKind, Limits, ParamValue, TensorInfo, run_cta};
    use ptxeq_spec::{DType, Role};

    let k = edited_expf("0f4B400001", "0f4B400002");
    let r = recognise(&k);
    let shl =
        r.ir.instrs
            .iter()
            .position(|d| matches!(d.instr, Instr::Shl { .. }))
            .expect("the shl into the exponent field");
    let t = |name: &str, role| TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape: vec![32],
    };
    let input = CtaInput {
        kernel: Arc::new(r.ir),
        funcs: Vec::new(),
        block: [32, 1, 1],
        grid: [1, 1, 1],
        dynamic_shared: 0,
        params: vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
        tensors: vec![t("x", Role::Input), t("y", Role::Output)],
        limits: Limits::default(),
    };
    let (run, _) = run_cta(
        &input,
        [0, 0, 0],
        Concrete::new(vec![vec![0.5; 32], vec![]]),
    );
    let f = run
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .expect("unsupported");
    assert_eq!(f.reason, "bit-level manipulation of a real value");
    assert!(f.message.contains("inlined libm routine"), "{}", f.message);
    // The `mov.b32 %r2, %f8` is a plain copy; the first integer operation
    // on the bits is the shift.
    assert_eq!(f.instr.map(|i| i.index as usize), Some(shl));
}
