//! `ptxeq check` against a formula reference, end to end: the flag form,
//! spec files, refutations with witnesses, the JSON report's formula, and
//! formula errors located in the formula with exit code 3.

mod support;
use support::ptxeq;

/// The online softmax<128> of the corpus, with its launch as flags.
const ONLINE: &[&str] = &[
    "check",
    "corpus/softmax/common/online_fast.ptx",
    "--entry",
    "_Z14softmax_onlineILi128EEvPKfPfi",
    "--block",
    "128",
    "--tensor",
    "x:f32[128]:in",
    "--tensor",
    "y:f32[128]:out",
    "--scalar",
    "n=128",
];

fn online(extra: &[&str]) -> (i32, String, String) {
    let mut args = ONLINE.to_vec();
    args.extend_from_slice(extra);
    ptxeq(&args)
}

#[test]
fn flag_form_proves_softmax_and_prints_the_formula() {
    let (code, out, err) = online(&["--formula", "y[i] = softmax(x[:])[i];"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("equivalent\n"), "{out}");
    assert!(out.contains("reference: the formula"), "{out}");
    assert!(out.contains("| y[i] = softmax(x[:])[i];"), "{out}");
    assert!(
        out.contains("output y: 128 element(s): 128 proved"),
        "{out}"
    );
    assert!(out.contains("the formula is the reference"), "{out}");
}

#[test]
fn a_wrong_formula_is_refuted_with_a_counterexample() {
    // The sum leaves out the last element.
    let (code, out, err) = online(&[
        "--formula",
        "y[i] = exp(x[i]) / sum(j in 0..n - 1, exp(x[j]));",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.starts_with("not-equivalent\n"), "{out}");
    assert!(out.contains("counterexample: "), "{out}");
    assert!(out.contains("x["), "{out}");
}

#[test]
fn json_report_carries_the_formula() {
    let f = "y[i] = exp(x[i]) / sum(j in 0..n, exp(x[j]));";
    let (code, out, err) = online(&["--formula", f, "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["verdict"], "equivalent");
    assert_eq!(v["reference"]["kind"], "formula");
    assert_eq!(v["reference"]["formula"], f);
    assert_eq!(v["outputs"][0]["proved"], 128);
}

#[test]
fn a_read_outside_a_tensor_is_a_located_error() {
    let (code, out, err) = online(&["--formula", "y[i] = exp(x[i + 1]);"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("reads x[128] outside `x`'s shape [128]"),
        "{err}"
    );
    assert!(err.contains("[reference] formula:1:12"), "{err}");
    assert!(err.contains("while instantiating y[127]"), "{err}");
}

#[test]
fn syntax_and_name_errors_are_located() {
    let (code, _, err) = online(&["--formula", "y[i] = exp(x[i];"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("does not compile") && err.contains(":1:"),
        "{err}"
    );
    let (code, _, err) = online(&["--formula", "y[i] = z[i];"]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("unknown name `z`"), "{err}");
}

#[test]
fn an_element_the_candidate_never_writes_is_a_difference() {
    // The kernel (one CTA, n = 128) writes y[0..128]; the formula defines
    // all 256 elements, so the upper half is unwritten: a difference.
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/softmax/common/online_fast.ptx",
        "--entry",
        "_Z14softmax_onlineILi128EEvPKfPfi",
        "--block",
        "128",
        "--tensor",
        "x:f32[256]:in",
        "--tensor",
        "y:f32[256]:out",
        "--scalar",
        "n=128",
        "--formula",
        "y[i] = exp(x[i % 128]) / sum(j in 0..n, exp(x[j]));",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("output y: 256 element(s): 128 proved (0 identical terms), 128 refuted"),
        "{out}"
    );
    assert!(
        out.contains("y[128]: refuted: written only by the reference"),
        "{out}"
    );
    assert!(out.contains("candidate: (not written)"), "{out}");
}

#[test]
fn spec_with_a_formula_reference() {
    let (code, out, err) = ptxeq(&["check", "corpus/formula/bug-reduce-init-one/check.toml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("| y[o] = sum(i in 0..n, x[i]);"), "{out}");
    assert!(out.contains("counterexample"), "{out}");
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/formula/softmax-online-n128/check.toml",
        "--formula",
        "y[i] = x[i];",
    ]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(err.contains("is a spec"), "{err}");
}

#[test]
fn emit_smt_writes_the_formula_conditions() {
    let dir = support::scratch("smt");
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/formula/bug-reduce-init-one/check.toml",
        "--emit-smt",
        &d,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("wrote 1 verification condition"), "{err}");
    let smt = std::fs::read_to_string(dir.join("y_0.smt2")).expect("y_0.smt2");
    assert!(smt.contains("assert"), "{smt}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn lift_prints_a_verified_prelude_form_with_the_structural_formula() {
    // Online softmax: the prelude's softmax is printed, the verified
    // written-out formula follows as a comment and in the JSON's
    // `structural`, whose tree is the `ast`.
    let spec = "corpus/formula/softmax-online-n128/check.toml";
    let (code, out, err) = ptxeq(&["lift", spec]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\ny[i0] = softmax(x[:])[i0];\n"), "{out}");
    assert!(out.contains("// y: written out (verified too):"), "{out}");
    let (code, out, err) = ptxeq(&["lift", spec, "--format", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let t = &v["kernels"][0]["tensors"][0];
    assert_eq!(t["formula"], "y[i0] = softmax(x[:])[i0];");
    let ast: ptxeq_formula::lifted::Def =
        serde_json::from_value(t["ast"].clone()).expect("a lifted tree");
    assert_eq!(ast.text(), t["structural"].as_str().unwrap());
    assert!(matches!(
        ptxeq_check::schema::parse(&v),
        Ok(ptxeq_check::schema::AnyReport::Lift(_))
    ));
}

#[test]
fn lift_prints_verified_formulas_and_names_what_does_not_lift() {
    let (code, out, err) = ptxeq(&["lift", "corpus/formula/sgemm-naive/check.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("// C: verified at all 4096 element(s) written"),
        "{out}"
    );
    assert!(
        out.contains(
            "C[i0, i1] = ((3/2 * sum(i2 in 0..64, (A[i0, i2] * B[i2, i1]))) - (3/4 * C[i0, i1]));"
        ),
        "{out}"
    );
    // A padded convolution lifts as a guarded sum; the JSON carries the
    // formula's tree beside its text.
    let (code, out, err) = ptxeq(&[
        "lift",
        "corpus/formula/conv2d-halo-smem-padded/check.toml",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["schema"], "ptxeq.lift/1");
    let t = &v["kernels"][0]["tensors"][0];
    assert_eq!(t["name"], "y");
    assert!(t["formula"].as_str().unwrap().contains("where("), "{t}");
    let ast: ptxeq_formula::lifted::Def =
        serde_json::from_value(t["ast"].clone()).expect("a lifted tree");
    assert_eq!(ast.text(), t["formula"].as_str().unwrap());
    assert!(
        matches!(&ast.value, ptxeq_formula::lifted::Expr::Reduce { guard, ranges, .. }
            if guard.len() == 4 && ranges.len() == 3),
        "{t}"
    );
    assert!(matches!(
        ptxeq_check::schema::parse(&v),
        Ok(ptxeq_check::schema::AnyReport::Lift(_))
    ));
    // Fragment rows swapped for odd columns: not affine (nor by tiles),
    // not lifted, said why.
    let (code, out, err) = ptxeq(&[
        "lift",
        "corpus/formula/bug-tc-mma-accumulator-layout/check.toml",
        "--format",
        "json",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let t = &v["kernels"][0]["tensors"][0];
    assert!(t["formula"].is_null() && t.get("ast").is_none(), "{t}");
    assert!(t["why_not"].as_str().unwrap().contains("not affine"), "{t}");
}
