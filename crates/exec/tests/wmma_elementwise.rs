//! Element-wise use of wmma fragments (concrete domain): what does not
//! depend on the implementation-defined fragment layout — the same
//! operation on every element, with operands from the same position of
//! fragments of the same class or uniform values — computes the
//! mathematical result; what does depend on it is unsupported, naming why.
//!
//! Every kernel here computes `D = A·B + C` (m16n16k16, f16 A/B row-major,
//! f32 C/D) in one warp, runs an epilogue on the registers (`%c*` hold C,
//! `%d*` hold D), and stores `%d*`.

mod common;

use common::{input, out_f64, run, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CVal, CtaRun, FindingKind, ParamValue};
use ptxeq_spec::DType;

fn regs(p: &str) -> String {
    (0..8)
        .map(|i| format!("%{p}{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `body` repeated for `I` = 0..8.
fn each(body: &str) -> String {
    (0..8).map(|i| body.replace('I', &i.to_string())).collect()
}

fn ints(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + seed * 3) % 11) as f64 - 5.0)
        .collect()
}

/// Runs the kernel with `a_layout` for A and `epilogue` between the mma
/// and the store of `stored` (the D register list).
fn run_epilogue(a_layout: &str, epilogue: &str, stored: &str) -> CtaRun<CVal> {
    run_epilogue_with(a_layout, epilogue, stored, "")
}

/// [`run_epilogue`] with extra declarations in the kernel.
fn run_epilogue_with(a_layout: &str, epilogue: &str, stored: &str, decls: &str) -> CtaRun<CVal> {
    let (ra, rb, rc, rd) = (regs("a"), regs("b"), regs("c"), regs("d"));
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .local .align 16 .b8 spill[64];\n{decls}\n\
         .reg .b32 %a<8>;\n.reg .b32 %b<8>;\n.reg .f32 %c<8>;\n.reg .f32 %d<8>;\n.reg .f32 %e<8>;\n\
         .reg .b32 %r<8>;\n.reg .pred %p<4>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         wmma.load.a.sync.aligned.{a_layout}.m16n16k16.global.f16 {{{ra}}}, [%rd1], 16;\n\
         wmma.load.b.sync.aligned.row.m16n16k16.global.f16 {{{rb}}}, [%rd2], 16;\n\
         wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{{rc}}}, [%rd3], 16;\n\
         wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {{{rd}}}, {{{ra}}}, {{{rb}}}, {{{rc}}};\n\
         {epilogue}\n\
         wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {{{stored}}}, 16;\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("a", Role::Input, DType::F16, &[256]),
            tensor("b", Role::Input, DType::F16, &[256]),
            tensor("c", Role::Input, DType::F32, &[256]),
            tensor("d", Role::Output, DType::F32, &[256]),
        ],
        (0..4).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    run(&inp, vec![ints(256, 1), ints(256, 2), ints(256, 3), vec![]])
}

/// `(A·B + C, C)` in row-major order.
fn product() -> (Vec<f64>, Vec<f64>) {
    let (a, b, c) = (ints(256, 1), ints(256, 2), ints(256, 3));
    let mut d = c.clone();
    for i in 0..16 {
        for j in 0..16 {
            for k in 0..16 {
                d[i * 16 + j] += a[i * 16 + k] * b[k * 16 + j];
            }
        }
    }
    (d, c)
}

/// The epilogue is layout-independent: no findings, and the stored
/// matrix is `f(D, C)` element by element.
fn computes(epilogue: &str, f: impl Fn(f64, f64) -> f64) {
    let r = run_epilogue("row", epilogue, &regs("d"));
    assert!(r.findings.is_empty(), "findings: {:#?}", r.findings);
    let got: Vec<f64> = out_f64(&r, 3, 256)
        .into_iter()
        .map(|v| v.expect("written"))
        .collect();
    let (d, c) = product();
    let want: Vec<f64> = d.iter().zip(&c).map(|(&d, &c)| f(d, c)).collect();
    assert_eq!(got, want, "epilogue:\n{epilogue}");
}

/// The run is unsupported as element-wise fragment use, with a message
/// containing `words`.
fn refused(a_layout: &str, epilogue: &str, stored: &str, words: &str) {
    let r = run_epilogue(a_layout, epilogue, stored);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("no unsupported finding for\n{epilogue}\n{:#?}", r.findings));
    assert_eq!(f.reason, "wmma fragment used element-wise", "{f:#?}");
    assert!(
        f.message.contains(words),
        "{words:?} not in {:?}",
        f.message
    );
    assert!(
        f.message.contains("implementation-defined"),
        "{:?}",
        f.message
    );
}

#[test]
fn uniform_element_wise_epilogues_compute_the_result() {
    // Scaling every element by one value.
    computes(&each("mul.f32 %dI, %dI, 0f40000000;\n"), |d, _| 2.0 * d);
    // c = α·d + β·c over two fragments of one class (wmma-produced D,
    // loaded C), element by element.
    computes(
        &each("mul.f32 %eI, %cI, 0fBF000000;\nfma.rn.f32 %dI, %dI, 0f40000000, %eI;\n"),
        |d, c| 2.0 * d - 0.5 * c,
    );
    // ReLU: a comparison per element selects per element.
    computes(&each("max.f32 %dI, %dI, 0f00000000;\n"), |d, _| d.max(0.0));
    computes(
        &each("setp.lt.f32 %p1, %dI, 0f00000000;\nselp.f32 %dI, 0f00000000, %dI, %p1;\n"),
        |d, _| d.max(0.0),
    );
    // fill_fragment under a warp-uniform condition: a selp and a guarded mov.
    let cond = "mov.u32 %r1, %ctaid.x;\nsetp.eq.u32 %p2, %r1, 0;\n";
    computes(
        &format!("{cond}{}", each("selp.f32 %dI, 0f3F800000, %dI, %p2;\n")),
        |_, _| 1.0,
    );
    computes(
        &format!("{cond}{}", each("@%p2 mov.f32 %dI, 0f40400000;\n")),
        |_, _| 3.0,
    );
    computes(
        &format!("{cond}{}", each("selp.f32 %dI, %cI, %dI, %p2;\n")),
        |_, c| c,
    );
}

#[test]
fn local_spills_of_whole_fragments_round_trip() {
    // Through a symbol, and through a register with address arithmetic
    // (a fragment array indexed by a loop counter).
    let direct = "st.local.v4.f32 [spill], {%d0, %d1, %d2, %d3};\n\
                  st.local.v4.f32 [spill+16], {%d4, %d5, %d6, %d7};\n\
                  ld.local.v4.f32 {%d0, %d1, %d2, %d3}, [spill];\n\
                  ld.local.v4.f32 {%d4, %d5, %d6, %d7}, [spill+16];\n";
    computes(direct, |d, _| d);
    let indexed = "mov.u64 %rd5, spill;\nmov.u32 %r2, 1;\nmul.wide.u32 %rd6, %r2, 32;\nadd.s64 %rd7, %rd5, %rd6;\n\
                   st.local.v4.f32 [%rd7], {%c0, %c1, %c2, %c3};\n\
                   st.local.v4.f32 [%rd7+16], {%c4, %c5, %c6, %c7};\n\
                   st.local.v2.f32 [%rd5], {%d0, %d1};\nst.local.v2.f32 [%rd5+8], {%d2, %d3};\n\
                   st.local.v4.f32 [%rd5+16], {%d4, %d5, %d6, %d7};\n\
                   ld.local.v4.f32 {%e0, %e1, %e2, %e3}, [%rd7];\n\
                   ld.local.v4.f32 {%e4, %e5, %e6, %e7}, [%rd7+16];\n\
                   ld.local.v4.f32 {%d0, %d1, %d2, %d3}, [%rd5];\n\
                   ld.local.v4.f32 {%d4, %d5, %d6, %d7}, [%rd5+16];\n";
    computes(
        &format!("{indexed}{}", each("add.f32 %dI, %dI, %eI;\n")),
        |d, c| d + c,
    );
}

#[test]
fn layout_dependent_uses_are_unsupported_and_say_why() {
    // One element only.
    refused(
        "row",
        "add.f32 %d3, %d3, 0f3F800000;",
        &regs("d"),
        "not the same element-wise operation",
    );
    // Registers swapped: elements moved between positions.
    refused(
        "row",
        "",
        "%d1, %d0, %d2, %d3, %d4, %d5, %d6, %d7",
        "holds lane 0 element 1",
    );
    // Two positions combined.
    refused(
        "row",
        "add.f32 %d0, %d0, %d1;",
        &regs("d"),
        "different positions",
    );
    // A lane-dependent condition.
    refused(
        "row",
        &format!(
            "mov.u32 %r1, %laneid;\nsetp.lt.u32 %p2, %r1, 16;\n{}",
            each("selp.f32 %dI, 0f00000000, %dI, %p2;\n")
        ),
        &regs("d"),
        "not the same element-wise operation",
    );
    // Another lane's element.
    refused(
        "row",
        "shfl.sync.idx.b32 %d0, %d0, 1, 31, -1;",
        &regs("d"),
        "holds lane 1 element 0",
    );
    // A spill reloaded into other registers.
    refused(
        "row",
        "st.local.v4.f32 [spill], {%d0, %d1, %d2, %d3};\nld.local.v4.f32 {%d1, %d0, %d2, %d3}, [spill];",
        &regs("d"),
        "holds lane 0 element 1",
    );
    // A fragment element read into other computations and stored.
    refused(
        "row",
        "mul.f32 %e0, %d0, 0f40000000;\nst.global.f32 [%rd4+1020], %e0;",
        &regs("d"),
        "stored to shared or global memory",
    );
    // A col-major A fragment given to a row.row mma: another class.
    refused(
        "col",
        "",
        &regs("d"),
        "m16n16k16 matrix_a .f16 col_major fragment",
    );
    // Different constants per register (a ramp) depend on the layout.
    refused(
        "row",
        &(0..8)
            .map(|i| format!("cvt.rn.f32.u32 %d{i}, {i};\n"))
            .collect::<String>(),
        &regs("d"),
        "not the same element-wise operation",
    );
}

/// Kernel on one inout f32 tile `c`: `body` with `%c*` loaded from it
/// (row-major) at the start.
fn inout_run(body: &str) -> CtaRun<CVal> {
    let rc = regs("c");
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pc)\n{{\n\
         .reg .f32 %c<8>;\n.reg .f32 %f<8>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd3, [pc];\n\
         wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{{rc}}}, [%rd3], 16;\n\
         {body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![tensor("c", Role::InOut, DType::F32, &[256])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    run(&inp, vec![ints(256, 3)])
}

#[test]
fn a_tile_updated_in_place_through_one_view_is_not_a_race() {
    let rc = regs("c");
    let store_row =
        format!("wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd3], {{{rc}}}, 16;\n");
    // Load, scale, store back: each element is loaded and stored by the
    // lane that holds it, whatever the layout.
    let r = inout_run(&format!(
        "{}{store_row}",
        each("mul.f32 %cI, %cI, 0f40000000;\n")
    ));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(
        out_f64(&r, 0, 256),
        ints(256, 3)
            .iter()
            .map(|x| Some(2.0 * x))
            .collect::<Vec<_>>()
    );
    // Stored back transposed (another view of the same bytes): the lane
    // that stores an element need not be the one that loaded it.
    let store_col =
        format!("wmma.store.d.sync.aligned.col.m16n16k16.global.f32 [%rd3], {{{rc}}}, 16;\n");
    let r = inout_run(&store_col);
    assert!(r.has(FindingKind::Race), "{:#?}", r.findings);
    // A plain read between the load and the in-place store races with the
    // other lanes' wmma writes, although the same-view load is exempt.
    let r = inout_run(&format!("ld.global.f32 %f1, [%rd3+8];\n{store_row}"));
    assert!(r.has(FindingKind::Race), "{:#?}", r.findings);
    // A plain store of one lane into the tile races with the other lanes'
    // wmma reads.
    let r = inout_run("mov.f32 %f1, 0f3F800000;\nst.global.f32 [%rd3+4], %f1;\n");
    assert!(r.has(FindingKind::Race), "{:#?}", r.findings);
}

/// `D = A·B + C` with f16 accumulators (4 registers of two halves each),
/// after `pre` (on the A fragment `%a*`) and before the store of `%d*`
/// `post`; returns the run and the expected `A·B + C` (row-major).
fn run_f16(pre: &str, post: &str) -> (CtaRun<CVal>, Vec<f64>) {
    let r4 = |p: &str| {
        (0..4)
            .map(|i| format!("%{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (ra, rb, rc, rd) = (regs("a"), regs("b"), r4("c"), r4("d"));
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b32 %a<8>;\n.reg .b32 %b<8>;\n.reg .b32 %c<4>;\n.reg .b32 %d<4>;\n.reg .b32 %r<8>;\n\
         .reg .b16 %h<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {{{ra}}}, [%rd1], 16;\n\
         wmma.load.b.sync.aligned.row.m16n16k16.global.f16 {{{rb}}}, [%rd2], 16;\n\
         wmma.load.c.sync.aligned.row.m16n16k16.global.f16 {{{rc}}}, [%rd3], 16;\n{pre}\n\
         wmma.mma.sync.aligned.row.row.m16n16k16.f16.f16 {{{rd}}}, {{{ra}}}, {{{rb}}}, {{{rc}}};\n{post}\n\
         wmma.store.d.sync.aligned.row.m16n16k16.global.f16 [%rd4], {{{rd}}}, 16;\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("a", Role::Input, DType::F16, &[256]),
            tensor("b", Role::Input, DType::F16, &[256]),
            tensor("c", Role::Input, DType::F16, &[256]),
            tensor("d", Role::Output, DType::F16, &[256]),
        ],
        (0..4).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    let r = run(&inp, vec![ints(256, 1), ints(256, 2), ints(256, 3), vec![]]);
    (r, product().0)
}

#[test]
fn packed_half_fragments_scale_element_wise() {
    // Every A element doubled by a packed multiply with {2, 2}: D = 2AB + C.
    let pre = format!(
        "mov.b32 %r1, 0x40004000;\n{}",
        each("mul.rn.f16x2 %aI, %aI, %r1;\n")
    );
    // Every D element halved through unpacked halves.
    let post: String = (0..4)
        .map(|i| {
            format!(
                "mov.b32 {{%h0, %h1}}, %d{i};\nmul.rn.f16 %h0, %h0, 0x3800;\nmul.rn.f16 %h1, %h1, 0x3800;\nmov.b32 %d{i}, {{%h0, %h1}};\n"
            )
        })
        .collect();
    let (r, want) = run_f16(&pre, &post);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let c = ints(256, 3);
    let got: Vec<f64> = out_f64(&r, 3, 256)
        .into_iter()
        .map(|v| v.expect("written"))
        .collect();
    let want: Vec<f64> = want
        .iter()
        .zip(&c)
        .map(|(&d, &c)| (2.0 * (d - c) + c) * 0.5)
        .collect();
    assert_eq!(got, want);
    // {1, 2}: the two halves of a register scaled differently.
    let (r, _) = run_f16(
        &format!(
            "mov.b32 %r1, 0x40003C00;\n{}",
            each("mul.rn.f16x2 %aI, %aI, %r1;\n")
        ),
        "",
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .expect("unsupported");
    assert_eq!(f.reason, "wmma fragment used element-wise");
    assert!(
        f.message.contains("the wmma.mma A fragment"),
        "{}",
        f.message
    );
    // Halves swapped within a register: positions moved.
    let (r, _) = run_f16("", "mov.b32 {%h0, %h1}, %d0;\nmov.b32 %d0, {%h1, %h0};");
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .expect("unsupported");
    assert!(
        f.message.contains("holds lane 0 element 1"),
        "{}",
        f.message
    );
}

#[test]
fn fragment_elements_stored_one_by_one_are_not_a_tile() {
    // Each lane's own local tile: zeros, then its element 0 at [0]; read
    // back by a wmma.load through a generic pointer.
    let body = "mov.u64 %rd5, tile;\nmov.u32 %r1, 0;\n\
                $Lz:\nmul.wide.u32 %rd6, %r1, 4;\nadd.s64 %rd7, %rd5, %rd6;\n\
                st.local.f32 [%rd7], 0f00000000;\nadd.u32 %r1, %r1, 1;\n\
                setp.lt.u32 %p1, %r1, 256;\n@%p1 bra $Lz;\n\
                st.local.f32 [tile], %d0;\ncvta.local.u64 %rd6, %rd5;\n";
    let ec = regs("e");
    let epilogue =
        format!("{body}wmma.load.c.sync.aligned.row.m16n16k16.f32 {{{ec}}}, [%rd6], 16;\n");
    let run_it =
        |epi: &str| run_epilogue_with("row", epi, &regs("e"), ".local .align 16 .b8 tile[1024];");
    let r = run_it(&epilogue);
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unsupported)
        .unwrap_or_else(|| panic!("{:#?}", r.findings));
    assert!(
        f.message.contains("read back by a wmma.load"),
        "{}",
        f.message
    );
    // The same tile without the fragment element is an ordinary load.
    let r = run_it(&epilogue.replace("st.local.f32 [tile], %d0;\n", ""));
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(out_f64(&r, 3, 256), vec![Some(0.0); 256]);
}

#[test]
fn a_rolled_loop_over_tiles_updates_each_in_place() {
    // Two 16x16 tiles side by side in a 16x32 matrix, one loop body
    // (the same wmma.load / wmma.store instructions, two addresses).
    let rc = regs("c");
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pc)\n{{\n\
         .reg .f32 %c<8>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\n\
         ld.param.u64 %rd3, [pc];\nmov.u32 %r1, 0;\n\
         $Lt:\nmul.wide.u32 %rd4, %r1, 64;\nadd.s64 %rd5, %rd3, %rd4;\n\
         wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {{{rc}}}, [%rd5], 32;\n\
         {}\
         wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd5], {{{rc}}}, 32;\n\
         add.u32 %r1, %r1, 1;\nsetp.lt.u32 %p1, %r1, 2;\n@%p1 bra $Lt;\nret;\n}}\n",
        each("mul.f32 %cI, %cI, 0f40400000;\n")
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![tensor("c", Role::InOut, DType::F32, &[512])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let r = run(&inp, vec![ints(512, 4)]);
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert_eq!(
        out_f64(&r, 0, 512),
        ints(512, 4)
            .iter()
            .map(|x| Some(3.0 * x))
            .collect::<Vec<_>>()
    );
}
