//! `ptxeq eval`: a kernel run concretely on input files; the outputs are
//! checked against values this test computes itself from the same inputs.

mod support;
use std::path::{Path, PathBuf};

use support::{ptxeq, scratch};

/// A small reproducible generator (xorshift), values on a grid f32 holds
/// exactly, so the test's f64 arithmetic starts from the kernel's inputs.
struct Rng(u64);
impl Rng {
    fn f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as i64 - (1 << 23)) as f32 / (1 << 23) as f32
    }
}

fn write_f32(dir: &Path, name: &str, v: &[f32]) {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(dir.join(format!("{name}.bin")), b).unwrap();
}

fn read_out(dir: &Path, name: &str) -> (Vec<f64>, Vec<u8>) {
    let b = std::fs::read(dir.join(format!("{name}.f64"))).unwrap();
    let v = b
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (v, std::fs::read(dir.join(format!("{name}.mask"))).unwrap())
}

fn dirs(test: &str) -> (PathBuf, PathBuf) {
    let base = scratch("eval").join(test);
    let (i, o) = (base.join("in"), base.join("out"));
    std::fs::create_dir_all(&i).unwrap();
    (i, o)
}

fn eval(spec: &str, kernel: &str, inputs: &Path, out: &Path) -> (i32, String, String) {
    ptxeq(&[
        "eval",
        spec,
        "--kernel",
        kernel,
        "--inputs",
        inputs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
}

#[test]
fn vector_add_writes_x_plus_y_over_its_whole_grid() {
    let (inp, out) = dirs("vadd");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let x: Vec<f32> = (0..4000).map(|_| rng.f32()).collect();
    let y: Vec<f32> = (0..4000).map(|_| rng.f32()).collect();
    write_f32(&inp, "x", &x);
    write_f32(&inp, "y", &y);
    for role in ["reference", "candidate"] {
        let o = out.join(role);
        let (code, stdout, err) =
            eval("corpus/triton/vector-add-masked/check.toml", role, &inp, &o);
        assert_eq!(code, 0, "{stdout}{err}");
        assert!(stdout.contains("4 CTA(s) run"), "{stdout}");
        let (v, mask) = read_out(&o, "out");
        assert_eq!(v.len(), 4000);
        for i in 0..4000 {
            assert_eq!(mask[i], 1, "{role}: out[{i}] not written");
            // The sum of two f32 on a 2^-23 grid is exact in f64.
            assert_eq!(v[i], f64::from(x[i]) + f64::from(y[i]), "{role}: out[{i}]");
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(o.join("eval.json")).unwrap()).unwrap();
        assert_eq!(json["tensors"][0]["written"], 4000);
        assert_eq!(json["findings"].as_array().map(Vec::len), Some(0));
    }
}

#[test]
fn sgemm_inout_is_alpha_ab_plus_beta_c() {
    let (inp, out) = dirs("sgemm");
    let mut rng = Rng(12345);
    let n = 32;
    let [a, b, c]: [Vec<f32>; 3] = std::array::from_fn(|_| (0..n * n).map(|_| rng.f32()).collect());
    write_f32(&inp, "A", &a);
    write_f32(&inp, "B", &b);
    write_f32(&inp, "C", &c);
    // The spec's scalars: alpha = 1.5, beta = -0.75.
    for role in ["reference", "candidate"] {
        let o = out.join(role);
        let (code, stdout, err) = eval("corpus/sgemm/smem-tiling-32/check.toml", role, &inp, &o);
        assert_eq!(code, 0, "{stdout}{err}");
        let (v, mask) = read_out(&o, "C");
        for r in 0..n {
            for col in 0..n {
                let i = r * n + col;
                let dot: f64 = (0..n)
                    .map(|k| f64::from(a[r * n + k]) * f64::from(b[k * n + col]))
                    .sum();
                let want = 1.5 * dot - 0.75 * f64::from(c[i]);
                assert_eq!(mask[i], 1);
                assert!(
                    (v[i] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                    "{role}: C[{r}][{col}] = {} want {want}",
                    v[i]
                );
            }
        }
    }
}

#[test]
fn integer_sum_is_exact() {
    let (inp, out) = dirs("isum");
    let x: Vec<i32> = (0..512).map(|i| (i * 7919 % 201) - 100).collect();
    let b: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(inp.join("x.bin"), b).unwrap();
    for role in ["reference", "candidate"] {
        let o = out.join(role);
        let (code, stdout, err) = eval("corpus/intdata/complete-unroll/check.toml", role, &inp, &o);
        assert_eq!(code, 0, "{stdout}{err}");
        let (v, mask) = read_out(&o, "y");
        assert_eq!(mask, vec![1]);
        assert_eq!(v[0], f64::from(x.iter().sum::<i32>()), "{role}");
    }
}

#[test]
fn a_missing_or_short_input_file_is_invalid_input_naming_it() {
    let (inp, out) = dirs("bad");
    write_f32(&inp, "x", &[0.0; 4000]);
    let (code, _, err) = eval(
        "corpus/triton/vector-add-masked/check.toml",
        "reference",
        &inp,
        &out,
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("y.bin"), "{err}");
    write_f32(&inp, "y", &[0.0; 10]);
    let (code, _, err) = eval(
        "corpus/triton/vector-add-masked/check.toml",
        "reference",
        &inp,
        &out,
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("y.bin: 40 bytes, but 4000 element(s) of f32"),
        "{err}"
    );
    let (code, _, err) = eval(
        "corpus/triton/vector-add-masked/check.toml",
        "kernel",
        &inp,
        &out,
    );
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("no kernel kernel"), "{err}");
}

/// A wmma kernel (fragments tracked CTA by CTA) over two CTAs given by
/// launch flags: both CTAs compute the same 64×64 f16 product, C = A·B.
#[test]
fn wmma_kernel_over_two_ctas_is_the_matrix_product() {
    let (inp, out) = dirs("wmma");
    let mut rng = Rng(777);
    let n = 64;
    // f16 inputs on a 2^-10 grid in [-1, 1): products and sums exact in f64.
    let half = |x: f32| ((x * 1024.0).round() / 1024.0).clamp(-1.0, 1023.0 / 1024.0);
    let a: Vec<f32> = (0..n * n).map(|_| half(rng.f32())).collect();
    let b: Vec<f32> = (0..n * n).map(|_| half(rng.f32())).collect();
    let f16_bits = |x: f32| -> [u8; 2] {
        // Exact for these values: sign, exponent and 10-bit mantissa.
        if x == 0.0 {
            return [0, 0];
        }
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xFF) as i32 - 127 + 15;
        let man = ((bits >> 13) & 0x3FF) as u16;
        assert!(exp > 0, "{x} is subnormal in f16");
        (sign | ((exp as u16) << 10) | man).to_le_bytes()
    };
    std::fs::write(
        inp.join("A.bin"),
        a.iter().flat_map(|&x| f16_bits(x)).collect::<Vec<u8>>(),
    )
    .unwrap();
    std::fs::write(
        inp.join("B.bin"),
        b.iter().flat_map(|&x| f16_bits(x)).collect::<Vec<u8>>(),
    )
    .unwrap();
    let (code, stdout, err) = ptxeq(&[
        "eval",
        "corpus/tc-gemm/wmma-global-64/cand.ptx",
        "--block",
        "256",
        "--grid",
        "2",
        "--ctas",
        "all",
        "--tensor",
        "A:f16[64,64]:in",
        "--tensor",
        "B:f16[64,64]:in",
        "--tensor",
        "C:f32[64,64]:out",
        "--scalar",
        "M=64",
        "--scalar",
        "N=64",
        "--scalar",
        "K=64",
        "--params",
        "A,B,C,M,N,K",
        "--inputs",
        inp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("2 CTA(s) run"), "{stdout}");
    let (v, mask) = read_out(&out, "C");
    for r in 0..n {
        for c in 0..n {
            let want: f64 = (0..n)
                .map(|k| f64::from(a[r * n + k]) * f64::from(b[k * n + c]))
                .sum();
            assert_eq!(mask[r * n + c], 1);
            assert_eq!(v[r * n + c], want, "C[{r}][{c}]");
        }
    }
}

/// The hardware-validation scripts (`tools/gpu-validate`): their unit
/// tests, then `prepare.py`'s input files for one corpus case read by
/// `ptxeq eval`, whose outputs must be x + y of those files. Needs
/// `python3` 3.11 or newer (tomllib); prints SKIPPED and passes without —
/// except under CI (`CI` set), where a missing interpreter fails the test
/// so the scripts cannot go untested there.
#[test]
fn gpu_validate_prepared_inputs_evaluate() {
    let repo = support::repo();
    let has_python = std::process::Command::new("python3")
        .args(["-c", "import tomllib"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_python {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs python3 3.11+ (tomllib) for the tools/gpu-validate tests"
        );
        eprintln!("SKIPPED: no python3 with tomllib (3.11+)");
        return;
    }
    let tools = repo.join("tools/gpu-validate");
    let unit = std::process::Command::new("python3")
        .arg(tools.join("test_tools.py"))
        .output()
        .unwrap();
    assert!(
        unit.status.success(),
        "{}",
        String::from_utf8_lossy(&unit.stderr)
    );
    let prep = scratch("eval").join("prep");
    let p = std::process::Command::new("python3")
        .arg(tools.join("prepare.py"))
        .args(["--only", "triton/vector-add-masked", "--out"])
        .arg(&prep)
        .output()
        .unwrap();
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(prep.join("plan.json")).unwrap()).unwrap();
    let case = &plan["cases"][0];
    assert_eq!(case["case"], "triton/vector-add-masked");
    // The candidate's two hidden Triton params are null pointers.
    let params = case["kernels"][1]["params"].as_array().unwrap();
    assert_eq!(params.len(), 6);
    assert_eq!(params[4]["bytes"], "0000000000000000");
    let inputs = prep.join("cases/triton__vector-add-masked");
    let floats = |name: &str| -> Vec<f32> {
        std::fs::read(inputs.join(name))
            .unwrap()
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let (x, y) = (floats("x.bin"), floats("y.bin"));
    let out = prep.join("out");
    let (code, stdout, err) = eval(
        "corpus/triton/vector-add-masked/check.toml",
        "candidate",
        &inputs,
        &out,
    );
    assert_eq!(code, 0, "{stdout}{err}");
    let (v, mask) = read_out(&out, "out");
    for i in 0..4000 {
        assert_eq!(mask[i], 1);
        assert_eq!(v[i], f64::from(x[i]) + f64::from(y[i]), "out[{i}]");
    }
}
