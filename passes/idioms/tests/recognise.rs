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
        let funcs = ptxeq_lower::lower_source(text).module.funcs;
        let k = kernels(text)
            .into_iter()
            .find(|k| k.name == name)
            .expect("kernel");
        let r = ptxeq_idioms::recognise_in(&k, &funcs);
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

    use ptxeq_exec::Role;
    use ptxeq_exec::{Concrete, CtaInput, FindingKind, Limits, ParamValue, TensorInfo, run_cta};
    use ptxeq_spec::DType;

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
        cluster: None,
        params: vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
        tensors: vec![t("x", Role::Input), t("y", Role::Output)],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
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

/// A template kernel of the nvcc default-flag file with edits applied
/// (each `(from, to)` must occur).
fn edited(kernel: &str, edits: &[(&str, &str)]) -> KernelIr {
    let text = ptxeq_idioms::NVCC_DEFAULT;
    let start = text
        .find(&format!(".visible .entry {kernel}("))
        .expect("kernel");
    let end = start + text[start..].find("\n}\n").expect("end") + 3;
    let mut body = text[start..end].to_string();
    for (from, to) in edits {
        assert!(body.contains(from), "{from}");
        body = body.replacen(from, to, 1);
    }
    let header = &text[..text.find(".visible").expect("entry")];
    kernels(&format!("{header}{body}"))
        .into_iter()
        .next()
        .expect("kernel")
}

/// sinf's Payne–Hanek path keeps a scratch array in local memory; the
/// array may sit at any aligned offset of a larger depot.
#[test]
fn sinf_scratch_array_at_an_offset_of_a_larger_depot() {
    let depot = ".local .align 4 .b8 \t__local_depot5[28];";
    let add = "add.u64 \t%rd9, %SPL, 0;";
    let k = edited("t_sinf", &[]);
    let r = recognise(&k);
    assert_eq!(r.found.len(), 1);
    assert_eq!(r.found[0].func, IdiomFn::Sin);
    // No local access survives; the depot's address `mov` does.
    assert!(!r.ir.instrs.iter().any(|d| matches!(&d.instr,
        Instr::Ld(m) | Instr::St(m) if m.space == ptxeq_ir::StateSpace::Local)));
    let k = edited(
        "t_sinf",
        &[
            (depot, ".local .align 4 .b8 \t__local_depot5[64];"),
            (add, "add.u64 \t%rd9, %SPL, 36;"),
        ],
    );
    assert_eq!(recognise(&k).found.len(), 1, "offset 36 of 64 bytes");
    // Out of the depot's bounds (36 + 28 > 60): the original accesses
    // would be out of bounds, so the expansion is left alone.
    let k = edited(
        "t_sinf",
        &[
            (depot, ".local .align 4 .b8 \t__local_depot5[60];"),
            (add, "add.u64 \t%rd9, %SPL, 36;"),
        ],
    );
    assert!(recognise(&k).found.is_empty(), "out of bounds");
    // Misaligned for the template's 4-byte words.
    let k = edited(
        "t_sinf",
        &[
            (depot, ".local .align 4 .b8 \t__local_depot5[64];"),
            (add, "add.u64 \t%rd9, %SPL, 2;"),
        ],
    );
    assert!(recognise(&k).found.is_empty(), "misaligned");
}

/// Absorbing the scratch stores is sound only if nothing else can read
/// the scratch bytes afterwards.
#[test]
fn sinf_scratch_read_outside_the_expansion_is_not_recognised() {
    let st = "st.global.f32 \t[%rd30], %f37;";
    // A load of a scratch word after the expansion, through the depot's
    // base register.
    let k = edited(
        "t_sinf",
        &[
            (".reg .b32 \t%r<54>;", ".reg .b32 \t%r<55>;"),
            (
                st,
                "st.global.f32 \t[%rd30], %f37;\n\tld.local.u32 \t%r54, [%SPL+8];\n\tst.global.u32 \t[%rd30+4], %r54;",
            ),
        ],
    );
    assert!(recognise(&k).found.is_empty(), "read through the base");
    // Through the depot's name.
    let k = edited(
        "t_sinf",
        &[
            (".reg .b32 \t%r<54>;", ".reg .b32 \t%r<55>;"),
            (
                st,
                "st.global.f32 \t[%rd30], %f37;\n\tld.local.u32 \t%r54, [__local_depot5+8];\n\tst.global.u32 \t[%rd30+4], %r54;",
            ),
        ],
    );
    assert!(recognise(&k).found.is_empty(), "read through the name");
    // A generic pointer to local memory could reach it too.
    let k = edited(
        "t_sinf",
        &[(
            st,
            "st.global.f32 \t[%rd30], %f37;\n\tcvta.local.u64 \t%rd29, %rd9;",
        )],
    );
    assert!(recognise(&k).found.is_empty(), "a generic local pointer");
    // The unedited kernel is recognised.
    assert_eq!(recognise(&edited("t_sinf", &[])).found.len(), 1);
}

/// One changed instruction in the expansion — a Payne–Hanek table word,
/// a scratch store's offset, a polynomial coefficient — and the sequence
/// is no longer sinf's.
#[test]
fn sinf_near_misses_are_not_recognised() {
    for (from, to) in [
        ("mov.u32 \t%r20, 1011060801;", "mov.u32 \t%r20, 1011060802;"),
        ("st.local.u32 \t[%rd9+4], ", "st.local.u32 \t[%rd9+8], "),
        (
            "ld.local.u32 \t%r52, [%rd2+-4];",
            "ld.local.u32 \t%r52, [%rd2+-8];",
        ),
        ("0f3C0885E4", "0f3C0885E5"),
        ("0f47CE4780", "0f47CE4781"),
    ] {
        let k = edited("t_sinf", &[(from, to)]);
        assert!(recognise(&k).found.is_empty(), "{from} -> {to}");
    }
}

/// f64 `log` rescales a subnormal argument in its own register; another
/// reader of that register would see the rescaled value in the original
/// and the argument after a rewrite, so the expansion is left alone.
#[test]
fn log_f64_argument_read_elsewhere_is_not_recognised() {
    assert_eq!(recognise(&edited("t_log", &[])).found.len(), 1);
    let k = edited(
        "t_log",
        &[(
            "st.global.f64 \t[%rd9], %fd58;",
            "st.global.f64 \t[%rd9], %fd58;\n\tst.global.f64 \t[%rd9+8], %fd56;",
        )],
    );
    assert!(recognise(&k).found.is_empty());
}

/// `sincosf` shares one reduction between its two results: one match,
/// two idioms (sin and cos), no branch or local access left — in the
/// template kernel and in the corpus kernel built for sm_80 and sm_90.
#[test]
fn sincosf_is_recognised_as_two_idioms() {
    ptxeq_idioms::build_pair(&ptxeq_idioms::PAIR_ROWS[0]).expect("builds");
    let in_corpus = |file: &str| {
        kernels(&corpus(file))
            .into_iter()
            .find(|k| k.name == "m_sincosf")
            .expect("m_sincosf")
    };
    for k in [
        edited("t_sincosf", &[]),
        in_corpus("math/common/default_sm80.ptx"),
        in_corpus("math/common/default_sm90.ptx"),
    ] {
        let r = recognise(&k);
        let mut funcs: Vec<IdiomFn> = r.found.iter().map(|f| f.func).collect();
        funcs.sort_by_key(|f| f.to_string());
        assert_eq!(funcs, [IdiomFn::Cos, IdiomFn::Sin], "{}", k.name);
        let mut idioms: Vec<IdiomFn> =
            r.ir.instrs
                .iter()
                .filter_map(|d| match d.instr {
                    Instr::Idiom { func, .. } => Some(func),
                    _ => None,
                })
                .collect();
        idioms.sort_by_key(|f| f.to_string());
        assert_eq!(idioms, funcs, "{}", k.name);
        let local = |d: &ptxeq_ir::InstrData| matches!(&d.instr, Instr::Ld(m) | Instr::St(m) if m.space == ptxeq_ir::StateSpace::Local);
        assert!(!r.ir.instrs.iter().any(local), "{}", k.name);
    }
    // sinf and cosf written apart (sin stored before cos is computed):
    // the template kernel, and RoPE in the corpus.
    for k in [
        edited("t_sin_cos", &[]),
        edited("t_sin_cos_loop", &[]),
        kernels(&corpus("math/common/default_sm80.ptx"))
            .into_iter()
            .find(|k| k.name == "m_rope")
            .expect("m_rope"),
    ] {
        let mut funcs: Vec<IdiomFn> = recognise(&k).found.iter().map(|f| f.func).collect();
        funcs.sort_by_key(|f| f.to_string());
        assert_eq!(funcs, [IdiomFn::Cos, IdiomFn::Sin], "{}", k.name);
    }
    // The sin result read inside the span before it is final, or
    // overwritten inside the span after it is: left alone. Stored once
    // final, as nvcc does for sinf and cosf written apart: recognised.
    let sel = "selp.f32 \t%f38, %f35, %f37, %p8;";
    let early = "st.global.f32 \t[%rd3], %f38;\n\tselp.f32 \t%f38, %f35, %f37, %p8;";
    let clobber = "selp.f32 \t%f38, %f35, %f37, %p8;\n\tmov.f32 \t%f38, 0f00000000;";
    let late = "selp.f32 \t%f38, %f35, %f37, %p8;\n\tst.global.f32 \t[%rd3], %f38;";
    for (to, n) in [(early, 0), (clobber, 0), (late, 2)] {
        let k = edited("t_sincosf", &[(sel, to)]);
        assert_eq!(recognise(&k).found.len(), n, "{to}");
    }
}

/// In a loop nvcc computes the scratch array's addresses once, before it
/// (`add %rd1, %SPL, 0`; `add %rd2, %rd1, 8`): the hoisted form takes them
/// as inputs and checks that they point where the template's would.
#[test]
fn sinf_with_hoisted_scratch_address() {
    let r = recognise(&edited_corpus("m_sinf_loop", &[]));
    assert_eq!(r.found.len(), 1);
    assert!(r.found[0].form.contains("hoisted"), "{}", r.found[0].form);
    // The second address 4 bytes off: the loads would read other words.
    let k = edited_corpus(
        "m_sinf_loop",
        &[("add.s64 \t%rd2, %rd1, 8;", "add.s64 \t%rd2, %rd1, 12;")],
    );
    assert!(recognise(&k).found.is_empty(), "inconsistent addresses");
    // The base address used by something else: a pointer into the scratch
    // array outside the expansion.
    let k = edited_corpus(
        "m_sinf_loop",
        &[(
            "add.s64 \t%rd2, %rd1, 8;",
            "add.s64 \t%rd2, %rd1, 8;\n\tst.local.u32 \t[%rd1+4], %r3;",
        )],
    );
    assert!(recognise(&k).found.is_empty(), "another access");
    // An address register written twice (on another path it may point
    // elsewhere).
    let k = edited_corpus(
        "m_sinf_loop",
        &[(
            "cvta.to.global.u64 \t%rd3, %rd7;",
            "cvta.to.global.u64 \t%rd3, %rd7;\n\t@%p1 add.s64 \t%rd2, %rd1, 16;",
        )],
    );
    assert!(recognise(&k).found.is_empty(), "two definitions");
}

/// A corpus kernel of `math/common/default_sm80.ptx` with edits.
fn edited_corpus(kernel: &str, edits: &[(&str, &str)]) -> KernelIr {
    let text = corpus("math/common/default_sm80.ptx");
    let start = text
        .find(&format!(".visible .entry {kernel}("))
        .expect("kernel");
    let end = start + text[start..].find("\n}\n").expect("end") + 3;
    let mut body = text[start..end].to_string();
    for (from, to) in edits {
        assert!(body.contains(from), "{from}");
        body = body.replacen(from, to, 1);
    }
    let header = &text[..text.find(".visible").expect("entry")];
    kernels(&format!("{header}{body}"))
        .into_iter()
        .next()
        .expect("kernel")
}

/// Loops: RoPE's pair of expansions with hoisted addresses, and two
/// loops whose expansions share one hoisted scratch base — each accepted
/// because the other is. When one of the two is not an expansion (a
/// changed coefficient), its local loads could read the shared array, so
/// the other is left alone too.
#[test]
fn trig_in_loops_sharing_a_scratch_base() {
    let funcs = |k: &KernelIr| {
        let mut f: Vec<IdiomFn> = recognise(k).found.iter().map(|f| f.func).collect();
        f.sort_by_key(|f| f.to_string());
        f
    };
    assert_eq!(
        funcs(&edited_corpus("m_rope_loop", &[])),
        [IdiomFn::Cos, IdiomFn::Sin]
    );
    assert_eq!(
        funcs(&edited_corpus("m_sin_cos_loops", &[])),
        [IdiomFn::Cos, IdiomFn::Sin]
    );
    let k = edited_corpus(
        "m_sin_cos_loops",
        &[(
            "selp.f32 \t%f61, 0f3C0885E4, 0f3D2AAABB, %p19;",
            "selp.f32 \t%f61, 0f3C0885E5, 0f3D2AAABB, %p19;",
        )],
    );
    assert!(funcs(&k).is_empty(), "{:?}", funcs(&k));
}

/// `sinf(v) + sinf(2v)`, `sinf(v) + cosf(2v)`: nvcc hoists the scratch array's start once for
/// both expansions and reassociates each slow path's load address
/// (`add q, base, 4j; add p, q, 8; ld [q+8]`): the shared form. Each is
/// accepted because the other is (each reads only its own stores); a
/// load address off by a word, or a foreign read of the shared array,
/// leaves both alone.
#[test]
fn two_sinf_sharing_one_scratch_array() {
    let r = recognise(&edited_corpus("m_sinf_sum", &[]));
    let funcs: Vec<IdiomFn> = r.found.iter().map(|f| f.func).collect();
    assert_eq!(funcs, [IdiomFn::Sin, IdiomFn::Sin]);
    assert!(r.found.iter().all(|f| f.form.contains("shared")), "{r:?}");
    // sinf and cosf of different arguments alike.
    let r = recognise(&edited_corpus("m_sin_plus_cos", &[]));
    let funcs: Vec<IdiomFn> = r.found.iter().map(|f| f.func).collect();
    assert_eq!(funcs, [IdiomFn::Sin, IdiomFn::Cos]);
    let k = edited_corpus(
        "m_sinf_sum",
        &[(
            "ld.local.u32 \t%r105, [%rd26+4];",
            "ld.local.u32 \t%r105, [%rd26+8];",
        )],
    );
    // The other expansion's check then sees a foreign local load.
    assert!(recognise(&k).found.is_empty(), "a load off by a word");
    let k = edited_corpus(
        "m_sinf_sum",
        &[(
            "add.f32 \t%f69, %f72, %f75;",
            "ld.local.f32 \t%f75, [%rd1+12];\n\tadd.f32 \t%f69, %f72, %f75;",
        )],
    );
    assert!(
        recognise(&k).found.is_empty(),
        "a foreign read of the array"
    );
}

/// f64 `sin`/`cos` in corpus kernels (bounds check, `-lineinfo`): the
/// call of `__internal_trig_reduction_slowpathd` matches the template's
/// (same body), the coefficient table the template's (same bytes).
#[test]
fn f64_sin_cos_with_a_call_and_a_table() {
    let text = corpus("math/common/default_sm80.ptx");
    let module = ptxeq_lower::lower_source(&text).module;
    for (name, func) in [("m_sin", IdiomFn::Sin), ("m_cos", IdiomFn::Cos)] {
        let k = module.kernel(name).expect("kernel");
        let r = ptxeq_idioms::recognise_in(k, &module.funcs);
        let funcs: Vec<IdiomFn> = r.found.iter().map(|f| f.func).collect();
        assert_eq!(funcs, [func], "{name}");
        // Without the module's functions the call cannot be checked.
        assert!(recognise(k).found.is_empty(), "{name}");
    }
    let sin_with = |from: &str, to: &str| {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        let m = ptxeq_lower::lower_source(&text.replacen(from, to, 1)).module;
        let k = m.kernel("m_sin").expect("kernel");
        ptxeq_idioms::recognise_in(k, &m.funcs).found.len()
    };
    // A constant of the called slow path changed: another function.
    assert_eq!(sin_with("mov.u32 \t%r18, 19;", "mov.u32 \t%r18, 20;"), 0);
    // A coefficient table byte changed.
    assert_eq!(
        sin_with(
            "__cudart_sin_cos_coeffs[128] = {70, 210",
            "__cudart_sin_cos_coeffs[128] = {71, 210"
        ),
        0
    );
    // A foreign read of the call's result (inside the call block, which
    // the fast path branches over).
    assert_eq!(
        sin_with(
            "ld.param.b32 \t%r14, [retval0+8];",
            "ld.param.b32 \t%r14, [retval0+8];\n\tld.param.b32 \t%r5, [retval0+8];"
        ),
        0
    );
    assert_eq!(sin_with("mov.u32 \t%r18, 19;", "mov.u32 \t%r18, 19;"), 1);
}

/// Triton's `tl.sin`: the Payne–Hanek reduction is a loop over the
/// global table `__cudart_i2opi_f`, matched whole — a changed trip
/// count, a foreign instruction inside the loop (which the fast path's
/// branch also skips) or a changed table byte leaves it alone.
#[test]
fn triton_sin_loop_is_matched_whole() {
    let text = corpus("triton/common/sin.ptx");
    let count = |from: &str, to: &str| {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        let ks = kernels(&text.replacen(from, to, 1));
        recognise(&ks[0]).found.len()
    };
    let ks = kernels(&text);
    let r = recognise(&ks[0]);
    assert_eq!(r.found.len(), 1);
    assert_eq!(r.found[0].func, IdiomFn::Sin);
    assert_eq!(
        count(
            "setp.ne.b64 \t%p4, %rd15, 24;",
            "setp.ne.b64 \t%p4, %rd15, 20;"
        ),
        0
    );
    assert_eq!(
        count(
            "add.s32 \t%r56, %r56, 4;",
            "add.s32 \t%r56, %r56, 4;\n\tadd.s32 \t%r13, %r13, 1;"
        ),
        0
    );
    assert_eq!(
        count(
            "__cudart_i2opi_f[24] = {65, 144",
            "__cudart_i2opi_f[24] = {66, 144"
        ),
        0
    );
}

/// A kernel of template file `text` with edits applied (each must occur).
fn edited_text(text: &str, kernel: &str, edits: &[(&str, &str)]) -> KernelIr {
    let start = text
        .find(&format!(".visible .entry {kernel}("))
        .expect("kernel");
    let end = start + text[start..].find("\n}\n").expect("end") + 3;
    let mut body = text[start..end].to_string();
    for (from, to) in edits {
        assert!(body.contains(from), "{from}");
        body = body.replacen(from, to, 1);
    }
    let header = &text[..text.find(".visible").expect("entry")];
    kernels(&format!("{header}{body}"))
        .into_iter()
        .next()
        .expect("kernel")
}

/// erff, expm1f, log1pf, log10f, exp10f, sinhf, coshf and Triton's
/// erf/log/libdevice.exp are recognised as their functions; one changed
/// coefficient, threshold, rounding mode or `.ftz` makes a different
/// computation, left alone.
#[test]
fn erf_expm1_log1p_and_triton_log_near_misses() {
    use ptxeq_idioms::{NVCC_DEFAULT, NVCC_FAST, TRITON};
    let found =
        |k: &KernelIr| -> Vec<IdiomFn> { recognise(k).found.iter().map(|f| f.func).collect() };
    // (template file, kernel, function, edits making a near miss)
    type NearMiss<'a> = (&'a str, &'a str, IdiomFn, &'a [(&'a str, &'a str)]);
    let cases: &[NearMiss<'static>] = &[
        // A polynomial coefficient of the small-argument branch.
        (
            NVCC_DEFAULT,
            "t_erff",
            IdiomFn::Erf,
            &[("0f3E0375D4", "0f3E0375D5")],
        ),
        // The branch threshold (one comparison of the two).
        (
            NVCC_DEFAULT,
            "t_erff",
            IdiomFn::Erf,
            &[(
                "setp.ge.f32 \t%p2, %f5, 0f3F807B28",
                "setp.ge.f32 \t%p2, %f5, 0f3F800000",
            )],
        ),
        // Fast math's `.ftz` on the default form's kernel: the other template.
        (
            NVCC_FAST,
            "t_erff",
            IdiomFn::Erf,
            &[("sub.ftz.f32", "sub.f32")],
        ),
        // 1 − ex2 replaced by 1 + ex2.
        (
            TRITON,
            "t_erf_triton",
            IdiomFn::Erf,
            &[("sub.f32 \t%r14, %r13, %r12", "add.f32 \t%r14, %r13, %r12")],
        ),
        // expm1f's range-reduction magic.
        (
            NVCC_DEFAULT,
            "t_expm1f",
            IdiomFn::Expm1,
            &[("0f4B40007F;\n\tmov.f32", "0f4B40007E;\n\tmov.f32")],
        ),
        // log1pf's `1 + x` rounded toward zero, here to nearest.
        (
            NVCC_DEFAULT,
            "t_log1pf",
            IdiomFn::Log1p,
            &[("add.rz.f32", "add.rn.f32")],
        ),
        (
            NVCC_FAST,
            "t_log1pf",
            IdiomFn::Log1p,
            &[("0f3F317218", "0f3F317217")],
        ),
        // Triton's log: log(0) = −inf replaced.
        (
            TRITON,
            "t_log_triton",
            IdiomFn::Log,
            &[("-8388608, %r36", "0, %r36")],
        ),
        // Triton's libdevice.exp: the range reduction rounded to nearest.
        (
            TRITON,
            "t_exp_libdevice",
            IdiomFn::Exp,
            &[("fma.rm.ftz.f32", "fma.rn.ftz.f32")],
        ),
        // log10f's subnormal rescaling exponent.
        (
            NVCC_DEFAULT,
            "t_log10f",
            IdiomFn::Log10,
            &[("0fC1B80000", "0fC1B00000")],
        ),
        // exp10f's scaling constant.
        (
            NVCC_DEFAULT,
            "t_exp10f",
            IdiomFn::Exp10,
            &[("0f3C57FA62", "0f3C57FA63")],
        ),
        // sinhf's truncation turned into rounding.
        (
            NVCC_DEFAULT,
            "t_sinhf",
            IdiomFn::Sinh,
            &[("cvt.rzi.f32.f32", "cvt.rni.f32.f32")],
        ),
        (
            NVCC_FAST,
            "t_coshf",
            IdiomFn::Cosh,
            &[("0f4B40007D", "0f4B40007E")],
        ),
    ];
    for (text, kernel, func, edits) in cases {
        assert_eq!(found(&edited_text(text, kernel, &[])), [*func], "{kernel}");
        let k = edited_text(text, kernel, edits);
        // Only a smaller expansion inside may still be found: fast-math
        // coshf contains `ex2.approx(x · log2 e)`, fast expf's template.
        let rest = found(&k);
        assert!(
            rest.iter()
                .all(|f| *f == IdiomFn::Exp && *func == IdiomFn::Cosh),
            "{kernel} {edits:?}: {rest:?}"
        );
    }
}
