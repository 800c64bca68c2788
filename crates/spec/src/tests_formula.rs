//! `[reference] formula` / `formula_file` and `--formula`: the forms that
//! parse, and the mistakes, each named by its key.

use std::path::Path;

use crate::*;

const SPEC: &str = r#"
[launch]
block = [128, 1, 1]

[reference]
formula = "y[i] = exp(x[i]) / sum(j in 0..n, exp(x[j]));"

[candidate]
ptx = "cand.ptx"
params = ["x", "y"]

[tensors]
x = { role = "input", dtype = "f32", shape = [128] }
y = { role = "output", dtype = "f32", shape = [128] }

[scalars]
n = 128

[expect]
verdict = "equivalent"
"#;

fn parse(text: &str) -> Result<CheckSpec, SpecError> {
    CheckSpec::from_toml_str(text, Path::new("/cases/f"))
}

fn err(from: &str, to: &str, needles: &[&str]) {
    assert!(SPEC.contains(from), "test bug: {from:?} not in SPEC");
    let e = parse(&SPEC.replacen(from, to, 1)).expect_err("an error");
    for n in needles {
        assert!(e.message.contains(n), "{:?} lacks {n:?}", e.message);
    }
}

#[test]
fn inline_formula_is_the_reference() {
    let s = parse(SPEC).expect("parses");
    let f = s.kernels.formula().expect("a formula reference");
    assert!(f.text.starts_with("y[i] = exp"));
    assert_eq!(f.file, None);
    assert_eq!(f.origin(), "[reference] formula");
    // Only the candidate is a kernel; the case is a pair for its verdicts.
    let ks = s.kernels.iter();
    assert_eq!(ks.len(), 1);
    assert_eq!(ks[0].0, "candidate");
    assert_eq!(s.kind(), CaseKind::Pair);
    // `n` is taken by no param: a formula may name it.
    assert!(s.scalars.contains_key("n"));
}

#[test]
fn formula_file_is_read_relative_to_the_spec() {
    let dir = std::env::temp_dir().join(format!("ptxeq-spec-formula-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("softmax.ptxf"), "y[i] = softmax(x[:])[i];\n").unwrap();
    let text = SPEC.replacen(
        "formula = \"y[i] = exp(x[i]) / sum(j in 0..n, exp(x[j]));\"",
        "formula_file = \"softmax.ptxf\"",
        1,
    );
    let s = CheckSpec::from_toml_str(&text, &dir).expect("parses");
    let f = s.kernels.formula().unwrap();
    assert_eq!(f.text, "y[i] = softmax(x[:])[i];\n");
    assert_eq!(f.file.as_deref(), Some(dir.join("softmax.ptxf").as_path()));
    let missing = text.replace("softmax.ptxf", "nope.ptxf");
    let e = CheckSpec::from_toml_str(&missing, &dir).expect_err("missing file");
    assert!(e.message.contains("reference.formula_file"), "{e}");
    assert!(e.location.is_some(), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn formula_reference_mistakes() {
    err(
        "formula = \"y[i]",
        "ptx = \"ref.ptx\"\nformula = \"y[i]",
        &["reference.ptx", "formula reference"],
    );
    err(
        "formula = \"y[i]",
        "formula_file = \"f.ptxf\"\nformula = \"y[i]",
        &["not both"],
    );
    err(
        "formula = \"y[i] = exp(x[i]) / sum(j in 0..n, exp(x[j]));\"",
        "formula = \"  \"",
        &["reference.formula", "empty"],
    );
    err(
        "params = [\"x\", \"y\"]",
        "params = [\"x\", \"y\"]\nformula = \"y[i] = x[i];\"",
        &["`candidate` is a kernel", "only `[reference]`"],
    );
    err("ptx = \"cand.ptx\"\n", "", &["[candidate]", "no `ptx`"]);
    err(
        "params = [\"x\", \"y\"]\n",
        "",
        &["[candidate]", "no `params`"],
    );
    // A formula does not make unused tensors acceptable: the candidate
    // binds every tensor.
    err(
        "[scalars]",
        "z = { role = \"input\", dtype = \"f32\", shape = [4] }\n[scalars]",
        &["tensor `z` is declared but no kernel"],
    );
}

#[test]
fn formula_flag_makes_the_one_kernel_the_candidate() {
    let flags = SpecFlags {
        ptx: vec!["k.ptx".into()],
        block: Some("128".into()),
        tensors: vec!["x:f32[128]:in".into(), "y:f32[128]:out".into()],
        formula: Some("y[i] = x[i];".into()),
        ..SpecFlags::default()
    };
    let s = CheckSpec::from_flags(&flags).expect("valid");
    assert_eq!(
        s.kernels.formula().map(|f| f.text.as_str()),
        Some("y[i] = x[i];")
    );
    assert_eq!(s.kernels.iter()[0].0, "candidate");
    let two = SpecFlags {
        ptx: vec!["a.ptx".into(), "b.ptx".into()],
        ..flags.clone()
    };
    let e = CheckSpec::from_flags(&two).expect_err("two files");
    assert!(e.message.contains("--formula"), "{e}");
}
