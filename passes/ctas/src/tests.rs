//! The slice and the selection on small hand-written kernels; the corpus
//! test (`tests/corpus_slices.rs`) checks the slice against whole runs of
//! every corpus kernel.

use ptxeq_exec::Role;
use ptxeq_exec::{AccessKind, CtaInput, Limits, Opaque, ParamValue, TensorInfo, run_cta};
use ptxeq_ir::Instr;
use ptxeq_spec::DType;

use super::*;

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// CTA (x, y) of a 2x4 grid sums a column of `A` through shared memory
/// over a K loop (K = 20) with barriers, then writes row y, columns x*64 + tid of
/// the 4x128 `C`.
const TILED: &str = r#"
.visible .entry tile(.param .u64 A, .param .u64 C, .param .u32 K)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<10>;
    .shared .align 4 .f32 s[64];
    ld.param.u64 %rd1, [A];
    ld.param.u64 %rd2, [C];
    ld.param.u32 %r1, [K];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ctaid.y;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r5, 0;
$L_loop:
    mad.lo.s32 %r6, %r5, 64, %r2;
    mul.wide.u32 %rd3, %r6, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f2, [%rd4];
    mul.wide.u32 %rd5, %r2, 4;
    mov.u64 %rd6, s;
    add.s64 %rd6, %rd6, %rd5;
    st.shared.f32 [%rd6], %f2;
    bar.sync 0;
    ld.shared.f32 %f3, [%rd6];
    add.f32 %f1, %f1, %f3;
    bar.sync 0;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p1, %r5, %r1;
    @%p1 bra $L_loop;
    setp.gt.u32 %p2, %r2, 63;
    @%p2 bra $L_done;
    mad.lo.s32 %r7, %r4, 128, %r2;
    mad.lo.s32 %r8, %r3, 64, %r7;
    mul.wide.u32 %rd7, %r8, 4;
    add.s64 %rd8, %rd2, %rd7;
    st.global.f32 [%rd8], %f1;
$L_done:
    ret;
}
"#;

/// Each thread publishes `(tid * 5) % 64` in shared memory; after a
/// barrier, thread t writes `C[s[63 - t]]`: the address passes through
/// shared memory, so the slice must keep the shared store and the barrier.
const THROUGH_SHARED: &str = r#"
.visible .entry via_smem(.param .u64 C)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .align 4 .u32 s[64];
    ld.param.u64 %rd1, [C];
    mov.u32 %r1, %tid.x;
    mul.lo.u32 %r2, %r1, 5;
    rem.u32 %r3, %r2, 64;
    mov.u64 %rd2, s;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.shared.u32 [%rd4], %r3;
    bar.sync 0;
    sub.u32 %r4, 63, %r1;
    mul.wide.u32 %rd5, %r4, 4;
    add.s64 %rd6, %rd2, %rd5;
    ld.shared.u32 %r5, [%rd6];
    mov.u32 %r6, %ctaid.x;
    mad.lo.s32 %r7, %r6, 64, %r5;
    mul.wide.u32 %rd7, %r7, 4;
    add.s64 %rd7, %rd1, %rd7;
    st.global.f32 [%rd7], 0f3F800000;
    ret;
}
"#;

fn kernel(body: &str) -> ptxeq_ir::KernelIr {
    let lowered = ptxeq_lower::lower_source(&format!("{HEADER}{body}"));
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    lowered.module.kernels[0].clone()
}

fn tensor(name: &str, role: Role, shape: Vec<u64>) -> TensorInfo {
    TensorInfo {
        name: name.into(),
        role,
        dtype: DType::F32,
        shape,
    }
}

fn tiled_input() -> CtaInput {
    CtaInput {
        kernel: Arc::new(kernel(TILED)),
        funcs: Vec::new(),
        block: [64, 1, 1],
        grid: [2, 4, 1],
        dynamic_shared: 0,
        cluster: None,
        params: vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
            ParamValue::Scalar { bits: 20 },
        ],
        tensors: vec![
            tensor("A", Role::Input, vec![20, 64]),
            tensor("C", Role::Output, vec![4, 128]),
        ],
        symbols: Vec::new(),
        limits: Limits::default(),
        bindings: Default::default(),
    }
}

/// The written byte ranges of every tensor in one run (no findings).
/// Stored values are not compared (a sliced run stores undefined ones).
fn writes(input: &CtaInput, cta: [u32; 3]) -> Vec<(u32, u64, u64)> {
    let mut input = input.clone();
    input.limits.report_undefined_outputs = false;
    let (run, _) = run_cta(&input, cta, Opaque::new());
    assert!(run.findings.is_empty(), "{:?}", run.findings);
    let mut out: Vec<(u32, u64, u64)> = run
        .footprint
        .tensors
        .iter()
        .flat_map(|t| {
            t.intervals
                .iter()
                .filter(|i| i.kind != AccessKind::Read)
                .map(move |i| (t.tensor, i.start, i.end))
        })
        .collect();
    out.sort_unstable();
    // Merge adjacent ranges (intervals split by first instruction).
    let mut merged: Vec<(u32, u64, u64)> = Vec::new();
    for w in out {
        match merged.last_mut() {
            Some(m) if m.0 == w.0 && m.2 >= w.1 => m.2 = m.2.max(w.2),
            _ => merged.push(w),
        }
    }
    merged
}

#[test]
fn the_slice_drops_the_k_loop_and_keeps_the_store_addresses() {
    let input = tiled_input();
    let s = slice::slice(&input.kernel).unwrap();
    assert!(!s.all_control_kept);
    // The loop's back edge is bypassed; the bounds check is kept.
    assert_eq!(s.bypassed, 1);
    let kept: Vec<String> = s
        .kernel
        .instrs
        .iter()
        .filter(|d| !matches!(d.instr, Instr::Absorbed { .. }))
        .map(|d| d.instr.mnemonic())
        .collect();
    assert!(!kept.iter().any(|m| m.starts_with("bar")), "{kept:?}");
    assert!(!kept.iter().any(|m| m.starts_with("ld.global")), "{kept:?}");
    assert!(!kept.iter().any(|m| m.starts_with("add.f32")), "{kept:?}");
    assert!(kept.iter().any(|m| m.starts_with("st.global")), "{kept:?}");
    assert_eq!(s.kept, kept.len() - 1, "one bypass is not counted as kept");
    // Exactly the kernel's writes, every CTA, for a fraction of the steps.
    let mut sliced = input.clone();
    sliced.kernel = Arc::new(s.kernel);
    for cta in all_ctas(input.grid) {
        assert_eq!(writes(&sliced, cta), writes(&input, cta), "CTA {cta:?}");
    }
    let steps = |i: &CtaInput| run_cta(i, [1, 2, 0], Opaque::new()).0.stats;
    assert!(steps(&sliced).instructions_executed * 2 < steps(&input).instructions_executed);
}

#[test]
fn selection_follows_the_writes() {
    let input = tiled_input();
    let pick = |region: Vec<[u64; 2]>| {
        let sel = select(&input, &[None, Some(region)], ScanLimits::default());
        assert!(
            matches!(sel.method, Method::Sliced { .. }),
            "{:?}",
            sel.method
        );
        assert_eq!(sel.scanned, 8);
        assert_eq!(sel.unsure_count, 0);
        sel.ctas
    };
    // C[y][x*64 + t]: the box rows 0..1, columns 0..10 is CTA (0, 0) only.
    assert_eq!(pick(vec![[0, 1], [0, 10]]), vec![[0, 0, 0]]);
    // Rows 1..3, columns 60..70 straddle both column tiles.
    assert_eq!(
        pick(vec![[1, 3], [60, 70]]),
        vec![[0, 1, 0], [1, 1, 0], [0, 2, 0], [1, 2, 0]]
    );
    assert_eq!(pick(vec![[3, 4], [64, 128]]), vec![[1, 3, 0]]);
    // No region: every CTA writing C.
    let all = select(&input, &[], ScanLimits::default());
    assert_eq!(all.ctas.len(), 8);
    // Over the scan limit: every CTA, not scanned.
    let big = select(&input, &[], ScanLimits { max_ctas: 4 });
    assert_eq!(big.scanned, 0);
    assert_eq!(big.ctas.len(), 8);
    assert!(big.describe(input.grid).contains("scan limit of 4"));
}

#[test]
fn addresses_through_shared_memory_keep_the_shared_store_and_barrier() {
    let mut input = tiled_input();
    input.kernel = Arc::new(kernel(THROUGH_SHARED));
    input.params = vec![ParamValue::Tensor { tensor: 1 }];
    input.tensors = vec![
        tensor("A", Role::Input, vec![1]),
        tensor("C", Role::Output, vec![8, 64]),
    ];
    let s = slice::slice(&input.kernel).unwrap();
    let kept: Vec<String> = s
        .kernel
        .instrs
        .iter()
        .filter(|d| !matches!(d.instr, Instr::Absorbed { .. }))
        .map(|d| d.instr.mnemonic())
        .collect();
    assert!(kept.iter().any(|m| m.starts_with("st.shared")), "{kept:?}");
    assert!(kept.iter().any(|m| m.starts_with("bar")), "{kept:?}");
    let mut sliced = input.clone();
    sliced.kernel = Arc::new(s.kernel);
    for cta in [[0, 0, 0], [1, 3, 0]] {
        assert_eq!(writes(&sliced, cta), writes(&input, cta));
    }
    // Row x of C is CTA x's.
    let sel = select(
        &input,
        &[None, Some(vec![[1, 2], [0, 64]])],
        ScanLimits::default(),
    );
    assert_eq!(sel.ctas, vec![[1, 0, 0], [1, 1, 0], [1, 2, 0], [1, 3, 0]]);
    let sel = select(
        &input,
        &[None, Some(vec![[0, 1], [0, 1]])],
        ScanLimits::default(),
    );
    assert_eq!(sel.ctas, vec![[0, 0, 0], [0, 1, 0], [0, 2, 0], [0, 3, 0]]);
}

#[test]
fn kernels_the_slice_does_not_cover_are_scanned_whole() {
    let mut input = tiled_input();
    let body = TILED.replace("    ret;\n}", "    trap;\n}").replace(
        ".visible .entry tile",
        ".func helper() { ret; }\n.visible .entry tile",
    );
    let body = body.replace(
        "    mov.u32 %r5, 0;\n",
        "    mov.u32 %r5, 0;\n    call helper, ();\n",
    );
    let lowered = ptxeq_lower::lower_source(&format!("{HEADER}{body}"));
    input.kernel = Arc::new(lowered.module.kernels[0].clone());
    input.funcs = lowered.module.funcs.iter().cloned().map(Arc::new).collect();
    let sel = select(
        &input,
        &[None, Some(vec![[0, 1], [0, 1]])],
        ScanLimits::default(),
    );
    match &sel.method {
        Method::Whole { why } => assert!(why.contains("a call"), "{why}"),
        m => panic!("{m:?}"),
    }
    // Every CTA traps: none completes, so all are selected, with the reason.
    assert_eq!(sel.ctas.len(), 8);
    assert_eq!(sel.unsure_count, 8);
    assert_eq!(sel.unsure.len(), UNSURE_KEPT);
    assert!(
        sel.describe(input.grid)
            .contains("8 CTA(s) selected because")
    );
}

#[test]
fn ranges_meet_boxes() {
    let shape = [4, 10];
    let boxed = [[1, 3], [2, 5]];
    let b = Some(&boxed[..]);
    assert!(!range_meets_box(0, 10, &shape, b)); // row 0
    assert!(!range_meets_box(10, 12, &shape, b)); // row 1, cols 0..2
    assert!(range_meets_box(10, 13, &shape, b)); // row 1, col 2
    assert!(!range_meets_box(15, 22, &shape, b)); // row 1 cols 5.., row 2 cols 0..2
    assert!(range_meets_box(15, 23, &shape, b)); // reaches row 2 col 2
    assert!(!range_meets_box(30, 40, &shape, b)); // row 3
    assert!(!range_meets_box(5, 5, &shape, b)); // empty
    assert!(range_meets_box(39, 40, &shape, None));
    let flat = [[3, 7]];
    assert!(range_meets_box(6, 9, &[10], Some(&flat[..])));
    assert!(!range_meets_box(7, 9, &[10], Some(&flat[..])));
}
