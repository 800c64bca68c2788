//! Tensor-core instructions on known matrices (concrete domain): every
//! modelled `mma.sync` layout, `ldmatrix` / `stmatrix` / `movmatrix`, and
//! `wmma` load/mma/store compute the mathematical result; a kernel built
//! on a wrong fragment layout computes something else.
//!
//! The fragment tables here are written independently of the engine's
//! (`engine/fragments.rs`), straight from the PTX ISA's "Matrix Fragments
//! for mma.m16n8k*" text (conditions on the element index `i`).

mod common;

use common::{input, no_findings, out_f64, run, tensor};
use ptxeq_exec::ParamValue;
use ptxeq_exec::Role;
use ptxeq_spec::DType;

/// `(row, col)` of element `i` of lane `lane`.
type Layout = fn(usize, usize) -> (usize, usize);

fn g(l: usize) -> usize {
    l >> 2
}
fn q(l: usize) -> usize {
    l % 4
}

// m16n8k16 .f16/.bf16
fn a_k16(l: usize, i: usize) -> (usize, usize) {
    let row = if i < 2 || (4..6).contains(&i) {
        g(l)
    } else {
        g(l) + 8
    };
    let col = if i < 4 {
        q(l) * 2 + (i & 1)
    } else {
        q(l) * 2 + (i & 1) + 8
    };
    (row, col)
}
fn b_k16(l: usize, i: usize) -> (usize, usize) {
    let row = if i < 2 {
        q(l) * 2 + (i & 1)
    } else {
        q(l) * 2 + (i & 1) + 8
    };
    (row, g(l))
}
fn c_all(l: usize, i: usize) -> (usize, usize) {
    (if i < 2 { g(l) } else { g(l) + 8 }, q(l) * 2 + (i & 1))
}
/// A plausible mistake: c1 and c2 swapped.
fn c_wrong(l: usize, i: usize) -> (usize, usize) {
    (
        if i.is_multiple_of(2) { g(l) } else { g(l) + 8 },
        q(l) * 2 + (i >> 1),
    )
}
// m16n8k8 .f16/.bf16
fn a_k8(l: usize, i: usize) -> (usize, usize) {
    (if i < 2 { g(l) } else { g(l) + 8 }, q(l) * 2 + (i & 1))
}
fn b_k8(l: usize, i: usize) -> (usize, usize) {
    (q(l) * 2 + i, g(l))
}
// m16n8k8 .tf32
fn a_tf8(l: usize, i: usize) -> (usize, usize) {
    (
        if i == 0 || i == 2 { g(l) } else { g(l) + 8 },
        if i < 2 { q(l) } else { q(l) + 4 },
    )
}
fn b_tf8(l: usize, i: usize) -> (usize, usize) {
    (if i == 0 { q(l) } else { q(l) + 4 }, g(l))
}
// m16n8k4 .tf32
fn a_tf4(l: usize, i: usize) -> (usize, usize) {
    (if i == 0 { g(l) } else { g(l) + 8 }, q(l))
}
fn b_tf4(l: usize, _i: usize) -> (usize, usize) {
    (q(l), g(l))
}

struct Mma {
    shape: &'static str,
    ab: &'static str,
    acc: &'static str,
    mnk: (usize, usize, usize),
    a: Layout,
    b: Layout,
    c: Layout,
    /// Layout used to store D (normally `c`).
    d_store: Layout,
}

fn table(name: &str, per: usize, cols: usize, f: Layout) -> String {
    let vals: Vec<String> = (0..32 * per)
        .map(|x| {
            let (r, c) = f(x / per, x % per);
            (r * cols + c).to_string()
        })
        .collect();
    format!(
        ".const .align 4 .u32 {name}[{}] = {{{}}};\n",
        32 * per,
        vals.join(", ")
    )
}

/// Per-lane loads of `per` elements through index table `tbl` from the
/// tensor at `%rd{base}`, into 16-bit (`%h`) or 32-bit (`%e`) temporaries
/// starting at `first`.
fn gather(tbl: &str, per: usize, base: u32, wide: bool, first: usize) -> String {
    let mut s = format!(
        "mov.u64 %rd20, {tbl};\nmul.wide.u32 %rd21, %r0, {};\nadd.s64 %rd20, %rd20, %rd21;\n",
        per * 4
    );
    let es = if wide { 4 } else { 2 };
    for i in 0..per {
        s += &format!(
            "ld.const.u32 %r1, [%rd20+{}];\nmul.wide.u32 %rd22, %r1, {es};\nadd.s64 %rd23, %rd{base}, %rd22;\n",
            4 * i
        );
        if wide {
            s += &format!("ld.global.b32 %e{}, [%rd23];\n", first + i);
        } else {
            s += &format!("ld.global.b16 %h{}, [%rd23];\n", first + i);
        }
    }
    s
}

/// Registers `{%x0, ...}` of a fragment of `per` elements at
/// `first`, packed two halves per register when `half`.
fn frag_regs(out: &mut String, per: usize, half: bool, first: usize, reg0: usize) -> String {
    let mut names = Vec::new();
    if half {
        for j in 0..per / 2 {
            *out += &format!(
                "mov.b32 %p32_{}, {{%h{}, %h{}}};\n",
                reg0 + j,
                first + 2 * j,
                first + 2 * j + 1
            );
            names.push(format!("%p32_{}", reg0 + j));
        }
    } else {
        for j in 0..per {
            names.push(format!("%e{}", first + j));
        }
    }
    format!("{{{}}}", names.join(", "))
}

fn run_mma(case: &Mma, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let (m, n, k) = case.mnk;
    let (pa, pb, pc) = (m * k / 32, k * n / 32, m * n / 32);
    let half_ab = case.ab != "tf32";
    let half_c = case.acc == "f16";
    let mut decls = String::new();
    decls += &table("ta", pa, k, case.a);
    decls += &table("tb", pb, n, case.b);
    decls += &table("tc", pc, n, case.c);
    decls += &table("td", pc, n, case.d_store);
    let mut body = String::new();
    body += &gather("ta", pa, 1, !half_ab, 0);
    body += &gather("tb", pb, 2, !half_ab, 16);
    body += &gather("tc", pc, 3, !half_c, 32);
    let ra = frag_regs(&mut body, pa, half_ab, 0, 0);
    let rb = frag_regs(&mut body, pb, half_ab, 16, 8);
    let rc = frag_regs(&mut body, pc, half_c, 32, 16);
    let nd = if half_c { pc / 2 } else { pc };
    let rd: Vec<String> = (0..nd).map(|j| format!("%q{j}")).collect();
    let ab = if half_ab { case.ab } else { "tf32" };
    body += &format!(
        "mma.sync.aligned.{}.row.col.{acc}.{ab}.{ab}.{acc} {{{}}}, {ra}, {rb}, {rc};\n",
        case.shape,
        rd.join(", "),
        acc = case.acc
    );
    // Store D through the d_store table.
    body += "mov.u64 %rd20, td;\n";
    body += &format!(
        "mul.wide.u32 %rd21, %r0, {};\nadd.s64 %rd20, %rd20, %rd21;\n",
        pc * 4
    );
    for i in 0..pc {
        let es = if half_c { 2 } else { 4 };
        body += &format!(
            "ld.const.u32 %r1, [%rd20+{}];\nmul.wide.u32 %rd22, %r1, {es};\nadd.s64 %rd23, %rd4, %rd22;\n",
            4 * i
        );
        if half_c {
            body += &format!(
                "mov.b32 {{%h60, %h61}}, %q{};\nst.global.b16 [%rd23], %h{};\n",
                i / 2,
                60 + i % 2
            );
        } else {
            body += &format!("st.global.b32 [%rd23], %q{i};\n");
        }
    }
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n{decls}\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b16 %h<64>;\n.reg .b32 %r<8>;\n.reg .b32 %e<64>;\n.reg .b32 %q<8>;\n.reg .b64 %rd<32>;\n\
         .reg .b32 %p32_<24>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\ncvta.to.global.u64 %rd3, %rd3;\ncvta.to.global.u64 %rd4, %rd4;\n\
         mov.u32 %r0, %tid.x;\n{body}ret;\n}}\n"
    );
    let abt = match case.ab {
        "f16" => DType::F16,
        "bf16" => DType::Bf16,
        _ => DType::F32,
    };
    let ct = if half_c { DType::F16 } else { DType::F32 };
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("a", Role::Input, abt, &[(m * k) as u64]),
            tensor("b", Role::Input, abt, &[(k * n) as u64]),
            tensor("c", Role::Input, ct, &[(m * n) as u64]),
            tensor("d", Role::Output, ct, &[(m * n) as u64]),
        ],
        (0..4).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    let r = run(&inp, vec![a.to_vec(), b.to_vec(), c.to_vec(), vec![]]);
    no_findings(&r);
    out_f64(&r, 3, m * n)
        .into_iter()
        .map(|x| x.expect("every D element written"))
        .collect()
}

/// Small integers: every product and sum is exact in f64.
fn ints(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7 + seed * 3) % 11) as f64 - 5.0)
        .collect()
}

fn product(m: usize, n: usize, k: usize, a: &[f64], b: &[f64], c: &[f64]) -> Vec<f64> {
    let mut d = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = c[i * n + j] + (0..k).map(|x| a[i * k + x] * b[x * n + j]).sum::<f64>();
        }
    }
    d
}

fn mma_cases() -> Vec<Mma> {
    let mk = |shape, ab, acc, mnk, a: Layout, b: Layout| Mma {
        shape,
        ab,
        acc,
        mnk,
        a,
        b,
        c: c_all,
        d_store: c_all,
    };
    vec![
        mk("m16n8k16", "f16", "f32", (16, 8, 16), a_k16, b_k16),
        mk("m16n8k16", "bf16", "f32", (16, 8, 16), a_k16, b_k16),
        mk("m16n8k16", "f16", "f16", (16, 8, 16), a_k16, b_k16),
        mk("m16n8k8", "f16", "f32", (16, 8, 8), a_k8, b_k8),
        mk("m16n8k8", "bf16", "f32", (16, 8, 8), a_k8, b_k8),
        mk("m16n8k8", "f16", "f16", (16, 8, 8), a_k8, b_k8),
        mk("m16n8k8", "tf32", "f32", (16, 8, 8), a_tf8, b_tf8),
        mk("m16n8k4", "tf32", "f32", (16, 8, 4), a_tf4, b_tf4),
    ]
}

#[test]
fn every_mma_layout_computes_the_product() {
    for case in mma_cases() {
        let (m, n, k) = case.mnk;
        let (a, b, c) = (ints(m * k, 1), ints(k * n, 2), ints(m * n, 3));
        let d = run_mma(&case, &a, &b, &c);
        assert_eq!(
            d,
            product(m, n, k, &a, &b, &c),
            "{} {} -> {}",
            case.shape,
            case.ab,
            case.acc
        );
    }
}

#[test]
fn a_wrong_layout_assumption_is_caught() {
    let mut case = mma_cases().remove(0);
    case.d_store = c_wrong;
    let (m, n, k) = case.mnk;
    let (a, b, c) = (ints(m * k, 1), ints(k * n, 2), ints(m * n, 3));
    assert_ne!(run_mma(&case, &a, &b, &c), product(m, n, k, &a, &b, &c));
    // And a wrong A layout (the k16 table used for a k16 B) too.
    let mut case = mma_cases().remove(0);
    case.a = |l, i| {
        let (r, c) = a_k16(l, i);
        (r, c ^ 8)
    };
    assert_ne!(run_mma(&case, &a, &b, &c), product(m, n, k, &a, &b, &c));
}

/// A kernel over 32 threads with one f16 input `x` and one f16 output
/// `y`, shared array `sm` of 512 bytes (4 matrices of 8×8 halves)
/// filled from `x` row by row (lane l → row l).
fn matrix_kernel(body: &str) -> Vec<f64> {
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 px, .param .u64 py)\n{{\n\
         .reg .b16 %h<16>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<32>;\n\
         .shared .align 16 .b8 sm[512];\n.shared .align 16 .b8 sm2[512];\n\
         ld.param.u64 %rd1, [px];\nld.param.u64 %rd2, [py];\n\
         cvta.to.global.u64 %rd1, %rd1;\ncvta.to.global.u64 %rd2, %rd2;\n\
         mov.u32 %r0, %tid.x;\nmul.wide.u32 %rd3, %r0, 16;\nadd.s64 %rd4, %rd1, %rd3;\n\
         ld.global.v4.b32 {{%r4, %r5, %r6, %r7}}, [%rd4];\n\
         mov.u32 %r1, sm;\nshl.b32 %r2, %r0, 4;\nadd.s32 %r3, %r1, %r2;\n\
         st.shared.v4.b32 [%r3], {{%r4, %r5, %r6, %r7}};\nbar.sync 0;\n\
         {body}\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F16, &[256]),
            tensor("y", Role::Output, DType::F16, &[256]),
        ],
        vec![
            ParamValue::Tensor { tensor: 0 },
            ParamValue::Tensor { tensor: 1 },
        ],
    );
    let x: Vec<f64> = (0..256).map(f64::from).collect();
    let r = run(&inp, vec![x, vec![]]);
    no_findings(&r);
    out_f64(&r, 1, 256)
        .into_iter()
        .map(|v| v.expect("every element written"))
        .collect()
}

/// Stores registers `%r10..%r13` (4 fragments, ISA 8×8 layout: lane l
/// holds row l/4, cols 2(l%4), 2(l%4)+1) to `y[i*64 + row*8 + col]`.
fn store_fragments() -> String {
    let mut s = String::from(
        "shr.u32 %r20, %r0, 2;\nand.b32 %r21, %r0, 3;\nshl.b32 %r21, %r21, 1;\n\
         mad.lo.u32 %r22, %r20, 8, %r21;\nmul.wide.u32 %rd5, %r22, 2;\nadd.s64 %rd6, %rd2, %rd5;\n",
    );
    for i in 0..4 {
        s += &format!(
            "mov.b32 {{%h0, %h1}}, %r{};\nst.global.b16 [%rd6+{}], %h0;\nst.global.b16 [%rd6+{}], %h1;\n",
            10 + i,
            128 * i,
            128 * i + 2
        );
    }
    s
}

#[test]
fn ldmatrix_distributes_rows_and_transposes() {
    let body = format!(
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r10, %r11, %r12, %r13}}, [%r3];\n{}",
        store_fragments()
    );
    let y = matrix_kernel(&body);
    assert_eq!(y, (0..256).map(f64::from).collect::<Vec<_>>());
    let body = format!(
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{%r10, %r11, %r12, %r13}}, [%r3];\n{}",
        store_fragments()
    );
    let y = matrix_kernel(&body);
    for i in 0..4 {
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!(y[i * 64 + r * 8 + c], (i * 64 + c * 8 + r) as f64);
            }
        }
    }
}

#[test]
fn ldmatrix_x2_uses_the_first_sixteen_addresses() {
    let body = format!(
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{%r10, %r11}}, [%r3];\n\
         mov.b32 %r12, %r10;\nmov.b32 %r13, %r11;\n{}",
        store_fragments()
    );
    let y = matrix_kernel(&body);
    assert_eq!(y[..128], (0..128).map(f64::from).collect::<Vec<_>>()[..]);
}

#[test]
fn stmatrix_inverts_ldmatrix_and_movmatrix_transposes() {
    // ldmatrix then stmatrix into sm2, then lane l copies row l to y.
    let copy_back = "bar.sync 0;\nmov.u32 %r5, sm2;\nadd.s32 %r6, %r5, %r2;\n\
         ld.shared.v4.b32 {%r14, %r15, %r16, %r17}, [%r6];\nadd.s64 %rd7, %rd2, %rd3;\n\
         st.global.v4.b32 [%rd7], {%r14, %r15, %r16, %r17};\n";
    for trans in ["", ".trans"] {
        let body = format!(
            "ldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{%r10, %r11, %r12, %r13}}, [%r3];\n\
             mov.u32 %r5, sm2;\nadd.s32 %r6, %r5, %r2;\n\
             stmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 [%r6], {{%r10, %r11, %r12, %r13}};\n{copy_back}"
        );
        assert_eq!(
            matrix_kernel(&body),
            (0..256).map(f64::from).collect::<Vec<_>>(),
            "stmatrix{trans}"
        );
    }
    let body = format!(
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r10, %r11, %r12, %r13}}, [%r3];\n\
         movmatrix.sync.aligned.m8n8.trans.b16 %r10, %r10;\n{}",
        store_fragments()
    );
    let y = matrix_kernel(&body);
    for r in 0..8 {
        for c in 0..8 {
            assert_eq!(y[r * 8 + c], (c * 8 + r) as f64, "movmatrix ({r},{c})");
        }
    }
    // The other three matrices are untouched.
    assert_eq!(y[64..], (64..256).map(f64::from).collect::<Vec<_>>()[..]);
}

fn run_wmma(shape: (usize, usize, usize), la: &str, lb: &str, ld: &str) -> (Vec<f64>, Vec<f64>) {
    let (m, n, k) = shape;
    let sh = format!("m{m}n{n}k{k}");
    // Leading dimensions (elements) of the memory layouts.
    let lda = if la == "row" { k } else { m };
    let ldb = if lb == "row" { n } else { k };
    let ldd = if ld == "row" { n } else { m };
    let regs = |p: &str, n: usize| {
        (0..n)
            .map(|i| format!("%{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (ra, rb, rc, rd) = (regs("a", 8), regs("b", 8), regs("c", 8), regs("d", 8));
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b32 %a<8>;\n.reg .b32 %b<8>;\n.reg .f32 %c<8>;\n.reg .f32 %d<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         wmma.load.a.sync.aligned.{la}.{sh}.global.f16 {{{ra}}}, [%rd1], {lda};\n\
         wmma.load.b.sync.aligned.{lb}.{sh}.global.f16 {{{rb}}}, [%rd2], {ldb};\n\
         wmma.load.c.sync.aligned.row.{sh}.global.f32 {{{rc}}}, [%rd3], {n};\n\
         wmma.mma.sync.aligned.{la}.{lb}.{sh}.f32.f32 {{{rd}}}, {{{ra}}}, {{{rb}}}, {{{rc}}};\n\
         wmma.store.d.sync.aligned.{ld}.{sh}.global.f32 [%rd4], {{{rd}}}, {ldd};\n\
         ret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("a", Role::Input, DType::F16, &[(m * k) as u64]),
            tensor("b", Role::Input, DType::F16, &[(k * n) as u64]),
            tensor("c", Role::Input, DType::F32, &[(m * n) as u64]),
            tensor("d", Role::Output, DType::F32, &[(m * n) as u64]),
        ],
        (0..4).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    // Memory contents; logical matrices in row-major for the reference.
    let (amem, bmem, c) = (ints(m * k, 4), ints(k * n, 5), ints(m * n, 6));
    let a: Vec<f64> = (0..m * k)
        .map(|x| {
            let (r, cc) = (x / k, x % k);
            if la == "row" {
                amem[r * k + cc]
            } else {
                amem[cc * m + r]
            }
        })
        .collect();
    let b: Vec<f64> = (0..k * n)
        .map(|x| {
            let (r, cc) = (x / n, x % n);
            if lb == "row" {
                bmem[r * n + cc]
            } else {
                bmem[cc * k + r]
            }
        })
        .collect();
    let r = run(&inp, vec![amem, bmem, c.clone(), vec![]]);
    no_findings(&r);
    let dmem: Vec<f64> = out_f64(&r, 3, m * n)
        .into_iter()
        .map(|v| v.expect("written"))
        .collect();
    let d: Vec<f64> = (0..m * n)
        .map(|x| {
            let (r, cc) = (x / n, x % n);
            if ld == "row" {
                dmem[r * n + cc]
            } else {
                dmem[cc * m + r]
            }
        })
        .collect();
    (d, product(m, n, k, &a, &b, &c))
}

#[test]
fn wmma_load_mma_store_compute_the_product() {
    for shape in [(16, 16, 16), (32, 8, 16), (8, 32, 16)] {
        for (la, lb, ld) in [
            ("row", "row", "row"),
            ("col", "col", "col"),
            ("row", "col", "row"),
            ("col", "row", "col"),
        ] {
            let (got, want) = run_wmma(shape, la, lb, ld);
            assert_eq!(got, want, "{shape:?} {la} {lb} {ld}");
        }
    }
}

/// A 16×16×16 wmma kernel whose C fragment and epilogue are `c_init` and
/// `between` (PTX placed before the mma and between mma and store).
fn wmma_kinds(c_init: &str, between: &str) -> Vec<ptxeq_exec::FindingKind> {
    let regs = |p: &str| {
        (0..8)
            .map(|i| format!("%{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (ra, rb, rc, rd) = (regs("a"), regs("b"), regs("c"), regs("d"));
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pd)\n{{\n\
         .reg .b32 %a<8>;\n.reg .b32 %b<8>;\n.reg .f32 %c<8>;\n.reg .f32 %d<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd4, [pd];\n\
         wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {{{ra}}}, [%rd1], 16;\n\
         wmma.load.b.sync.aligned.row.m16n16k16.global.f16 {{{rb}}}, [%rd2], 16;\n{c_init}\n\
         wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {{{rd}}}, {{{ra}}}, {{{rb}}}, {{{rc}}};\n{between}\n\
         wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd4], {{{rd}}}, 16;\nret;\n}}\n"
    );
    let inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("a", Role::Input, DType::F16, &[256]),
            tensor("b", Role::Input, DType::F16, &[256]),
            tensor("d", Role::Output, DType::F32, &[256]),
        ],
        (0..3).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    let r = run(&inp, vec![ints(256, 1), ints(256, 2), vec![]]);
    r.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn layout_dependent_wmma_fragments_are_unsupported() {
    use ptxeq_exec::FindingKind::Unsupported;
    let fill: String = (0..8)
        .map(|i| format!("mov.f32 %c{i}, 0f00000000;\n"))
        .collect();
    // A one-value fill is layout-independent.
    assert_eq!(wmma_kinds(&fill, ""), vec![]);
    // Different constants per fragment register depend on the layout.
    let ramp: String = (0..8)
        .map(|i| format!("cvt.rn.f32.u32 %c{i}, {i};\n"))
        .collect();
    assert_eq!(wmma_kinds(&ramp, ""), vec![Unsupported]);
    // So does touching an element of the result.
    assert_eq!(
        wmma_kinds(&fill, "add.f32 %d3, %d3, 0f3F800000;"),
        vec![Unsupported]
    );
}
