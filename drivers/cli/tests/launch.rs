//! End-to-end tests of the issue-14 spec keys through the binary:
//! per-kernel launch, compare regions with `ctas = "auto"`, symbolic
//! scalars, their flag forms (the same verdict as the spec) and the
//! `check --help` examples.

mod support;
use support::{ptxeq, repo, scratch};

const GEMM: &str = "corpus/generality/common/gemm.ptx";

/// The flag form of `corpus/generality/sgemm-launch-auto-t64` with the
/// candidate entry `cand`.
fn gemm_flags(cand: &str) -> Vec<String> {
    [
        "check",
        GEMM,
        GEMM,
        "--entry",
        "gemm_ref",
        "--candidate-entry",
        cand,
        "--ref-block",
        "16x16",
        "--ref-grid",
        "8x8",
        "--cand-block",
        "64",
        "--cand-grid",
        "4x4",
        "--ctas",
        "auto",
        "--tensor",
        "A:f32[128,64]:in",
        "--tensor",
        "B:f32[64,128]:in",
        "--tensor",
        "C:f32[128,128]:inout",
        "--compare",
        "C=0:32,32:64",
        "--scalar",
        "M=128",
        "--scalar",
        "N=128",
        "--scalar",
        "K=64",
        "--scalar",
        "alpha:f32",
        "--scalar",
        "beta:f32",
        "--params",
        "M,N,K,alpha,A,B,beta,C",
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn flag_form_matches_the_spec_and_lists_each_kernels_ctas() {
    let spec = "corpus/generality/sgemm-launch-auto-t64/check.toml";
    let (code, out, err) = ptxeq(&["check", spec, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let from_spec = json(&out);
    let flags = gemm_flags("gemm_t64");
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (code, out, err) = ptxeq(&args);
    assert_eq!(code, 0, "{err}");
    let from_flags = json(&out);
    for v in [&from_spec, &from_flags] {
        assert_eq!(v["verdict"], "equivalent");
        assert_eq!(
            v["ctas"],
            serde_json::json!([[2, 0, 0], [3, 0, 0], [2, 1, 0], [3, 1, 0]])
        );
        assert_eq!(v["candidate_ctas"], serde_json::json!([[1, 0, 0]]));
        assert_eq!(
            v["outputs"][0]["compare_region"],
            serde_json::json!([[0, 32], [32, 64]])
        );
        assert_eq!(v["outputs"][0]["compared"], 1024);
        assert_eq!(v["symbolic_scalars"], serde_json::json!(["alpha", "beta"]));
        let cand = &v["kernels"][1]["launch"];
        assert_eq!(cand["block"], serde_json::json!([64, 1, 1]));
        assert_eq!(cand["grid"], serde_json::json!([4, 4, 1]));
        let rule = cand["ctas_rule"].as_str().unwrap();
        assert!(
            rule.contains("1 of 16 CTAs write into the compared elements"),
            "{rule}"
        );
        let scope = v["scope_assumptions"].to_string();
        assert!(
            scope.contains("the other 15 CTA(s) of the grid were not run"),
            "{scope}"
        );
        assert!(
            scope.contains("only the region [[0, 32], [32, 64]] is compared"),
            "{scope}"
        );
    }
}

#[test]
fn a_swapped_alpha_beta_counterexample_gives_both_scalars() {
    let flags = gemm_flags("gemm_t64_swap_ab");
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (code, out, err) = ptxeq(&args[..args.len() - 2]);
    assert_eq!(code, 1, "{err}");
    assert!(out.starts_with("not-equivalent"), "{out}");
    let cx = out
        .lines()
        .find(|l| l.contains("counterexample:"))
        .unwrap_or_default();
    assert!(cx.contains("alpha = ") && cx.contains("beta = "), "{cx}");
    // The witness is the same in JSON, by input number.
    let (_, out, _) = ptxeq(&args);
    let v = json(&out);
    let numbers = v["tensor_numbers"].clone();
    assert_eq!(numbers, serde_json::json!(["A", "B", "C", "alpha", "beta"]));
    let inputs = &v["outputs"][0]["failures"][0]["failure"]["counterexample"]["inputs"];
    let tensors: Vec<u64> = inputs
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["tensor"].as_u64().unwrap())
        .collect();
    assert!(tensors.contains(&3) && tensors.contains(&4), "{inputs}");
}

#[test]
fn an_integer_scalar_without_a_value_is_invalid_input() {
    let dir = scratch("files");
    std::fs::create_dir_all(&dir).unwrap();
    let spec =
        std::fs::read_to_string(repo().join("corpus/generality/sgemm-launch-auto-t64/check.toml"))
            .unwrap()
            .replace("../common/gemm.ptx", &repo().join(GEMM).to_string_lossy())
            .replace("\nK = 64", "\nK = { dtype = \"s32\" }");
    let path = dir.join("int-scalar.toml");
    std::fs::write(&path, spec).unwrap();
    let (code, _, err) = ptxeq(&["check", path.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("int-scalar.toml:"), "{err}");
    assert!(err.contains("scalar `K` (s32) has no value"), "{err}");
    assert!(err.contains("integer scalars stay concrete"), "{err}");
    // The flag form says the same.
    let mut flags = gemm_flags("gemm_t64");
    for f in &mut flags {
        if f == "K=64" {
            *f = "K:s32".into();
        }
    }
    let args: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (code, _, err) = ptxeq(&args);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("integer scalars stay concrete"), "{err}");
}

#[test]
fn per_kernel_flags_need_two_ptx_files() {
    let (code, _, err) = ptxeq(&[
        "check",
        "corpus/generality/sgemm-launch-auto-t64/check.toml",
        "--cand-block",
        "64",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("[candidate.launch]"), "{err}");
}

#[test]
fn check_help_shows_one_example_per_feature() {
    let (code, out, _) = ptxeq(&["check", "--help"]);
    assert_eq!(code, 0);
    for needle in [
        "--ref-block 16x16",
        "--cand-block 64",
        "--compare C=0:32,0:64 --ctas auto",
        "--scalar alpha:f32",
        "--candidate-entry",
        "--dynamic-shared",
        "[reference.launch]",
        "compare = [[0, 32], [0, 64]]",
        "alpha = { dtype = \"f32\" }",
    ] {
        assert!(
            out.contains(needle),
            "`{needle}` missing from check --help:\n{out}"
        );
    }
}
