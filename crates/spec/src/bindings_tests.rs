//! Tests of the binding keys: every form parses to the documented model,
//! the flag form builds the same spec, and each rule names its key.

use std::path::Path;

use crate::*;

const PAIR: &str = r#"
[launch]
block = 32
[reference]
ptx = "ref.ptx"
params = ["x", "idx", "y", "ws"]
[candidate]
ptx = "opt.ptx"
params = ["x", { struct = [{ offset = 0, bind = "idx" }, { offset = 8, bind = "y" }, { offset = 16, bind = "n", dtype = "s32" }] }]
[tensors]
x = { role = "input", dtype = "f32", shape = [4] }
idx = { role = "input", dtype = "s32", shape = [4], values = [3, 1, 2, 0] }
y = { role = "output", dtype = "f32", shape = [4] }
ws = { role = "scratch", dtype = "f32", shape = [4] }
[scalars]
n = 4
[functions]
_Z6my_expf = "exp"
g = "uninterpreted"
[globals]
MAX_KEY = 32
table = { values = "iota", dtype = "s32" }
weights = { role = "input", dtype = "f32" }
"#;

fn parse(text: &str) -> Result<CheckSpec, SpecError> {
    CheckSpec::from_toml_str(text, Path::new(""))
}

fn err(from: &str, to: &str, needle: &str) {
    assert!(PAIR.contains(from), "test bug: {from:?}");
    let e = parse(&PAIR.replacen(from, to, 1)).unwrap_err();
    assert!(
        e.message.contains(needle),
        "message {:?} lacks {needle:?}",
        e.message
    );
}

#[test]
fn every_binding_key_parses() {
    let s = parse(PAIR).unwrap();
    assert_eq!(s.tensors["ws"].role, Role::Scratch);
    assert_eq!(
        s.tensors["idx"].values,
        Some(Values::List([3, 1, 2, 0].map(ScalarValue::Int).to_vec()))
    );
    let cand = &s.kernels.iter()[1].1.params[1];
    assert_eq!(
        cand,
        &ParamBinding::Struct(vec![
            StructField {
                offset: 0,
                bind: FieldBinding::Tensor("idx".into())
            },
            StructField {
                offset: 8,
                bind: FieldBinding::Tensor("y".into())
            },
            StructField {
                offset: 16,
                bind: FieldBinding::Scalar {
                    name: "n".into(),
                    dtype: DType::S32
                }
            },
        ])
    );
    assert_eq!(
        s.functions["_Z6my_expf"],
        FunctionBinding::Known(KnownFn::Exp)
    );
    assert_eq!(s.functions["g"], FunctionBinding::Uninterpreted);
    assert_eq!(
        s.globals["MAX_KEY"],
        GlobalBinding {
            dtype: None,
            values: Some(Values::List(vec![ScalarValue::Int(32)]))
        }
    );
    assert_eq!(s.globals["table"].values, Some(Values::Iota));
    assert_eq!(s.globals["weights"].values, None);
    assert_eq!(Values::Iota.get(7), Some(ScalarValue::Int(7)));
    assert_eq!(Values::Zeros.to_string(), "zeros");
    let long = Values::List((0..20).map(ScalarValue::Int).collect());
    assert!(long.to_string().ends_with("… (20 values)]"), "{long}");
}

#[test]
fn binding_errors_name_the_key() {
    err(
        "values = [3, 1, 2, 0]",
        "values = [3, 1]",
        "2 value(s) but there are 4",
    );
    err(
        "values = [3, 1, 2, 0]",
        "values = [3, 1, 2, 1.5]",
        "not an integer",
    );
    err(
        "values = [3, 1, 2, 0]",
        "values = \"ones\"",
        "expected \"iota\"",
    );
    err(
        "values = [3, 1, 2, 0]",
        "values = { file = \"/nonexistent/idx.txt\" }",
        "cannot read the values file",
    );
    err(
        r#"y = { role = "output", dtype = "f32", shape = [4] }"#,
        r#"y = { role = "output", dtype = "f32", shape = [4], values = "zeros" }"#,
        "`values` on an output tensor",
    );
    err(
        r#"bind = "n", dtype = "s32""#,
        r#"bind = "n""#,
        "needs a `dtype`",
    );
    err(
        r#"offset = 8, bind = "y""#,
        r#"offset = 4, bind = "y""#,
        "not a multiple",
    );
    err(r#"offset = 16, bind"#, r#"offset = 8, bind"#, "overlap");
    err(
        r#"bind = "y" }"#,
        r#"bind = "q" }"#,
        "`candidate.params[1].struct[1].bind`",
    );
    err(
        r#"bind = "y" }"#,
        r#"bind = "x" }"#,
        "also bound at param 0",
    );
    err(
        r#"g = "uninterpreted""#,
        r#"g = "exq""#,
        "unknown function `exq`",
    );
    err("MAX_KEY = 32", "x = 32", "has the name of a tensor");
    err(
        r#"weights = { role = "input", dtype = "f32" }"#,
        r#"weights = { role = "output" }"#,
        "role = \"input\"",
    );
    err(
        r#"weights = { role = "input", dtype = "f32" }"#,
        r#"weights = { dtype = "f32" }"#,
        "give `values`",
    );
    err(
        r#"{ values = "iota", dtype = "s32" }"#,
        r#"{ values = [1, 300], dtype = "u8" }"#,
        "300 does not fit u8",
    );
    err(r#"{ struct = ["#, r#"{ strukt = ["#, "unknown field");
}

#[test]
fn values_file_is_read_relative_to_the_spec() {
    let dir = std::env::temp_dir().join(format!("ptxeq-spec-values-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("idx.txt"), "# indices\n3 1\n2, 0\n").unwrap();
    let text = PAIR.replacen(
        "values = [3, 1, 2, 0]",
        "values = { file = \"idx.txt\" }",
        1,
    );
    let s = CheckSpec::from_toml_str(&text, &dir).unwrap();
    assert_eq!(
        s.tensors["idx"].values,
        Some(Values::List([3, 1, 2, 0].map(ScalarValue::Int).to_vec()))
    );
    std::fs::write(dir.join("idx.txt"), "3 1 two 0\n").unwrap();
    let e = CheckSpec::from_toml_str(&text, &dir).unwrap_err();
    assert!(e.message.contains("`two` is not a number"), "{}", e.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flag_form_builds_the_same_spec() {
    let flags = SpecFlags {
        ptx: vec!["ref.ptx".into(), "opt.ptx".into()],
        block: Some("32".into()),
        tensors: vec![
            "x:f32[4]:in".into(),
            "idx:s32[4]:in".into(),
            "y:f32[4]:out".into(),
            "ws:f32[4]:scratch".into(),
        ],
        scalars: vec!["n=4".into()],
        params: Some("x,idx,y,ws".into()),
        candidate_params: Some("x,{idx@0,y@8,n:s32@16}".into()),
        values: vec!["idx=3,1,2,0".into()],
        functions: vec!["_Z6my_expf=exp".into(), "g=uninterpreted".into()],
        globals: vec![
            "MAX_KEY=32".into(),
            "table=iota:s32".into(),
            "weights=input:f32".into(),
        ],
        ..SpecFlags::default()
    };
    let from_flags = CheckSpec::from_flags(&flags).unwrap();
    let toml = parse(PAIR).unwrap();
    assert_eq!(from_flags.tensors, toml.tensors);
    assert_eq!(from_flags.kernels, toml.kernels);
    assert_eq!(from_flags.functions, toml.functions);
    assert_eq!(from_flags.globals, toml.globals);

    let bad = |f: SpecFlags, needle: &str| {
        let e = CheckSpec::from_flags(&f).unwrap_err().message;
        assert!(e.contains(needle), "{e:?} lacks {needle:?}");
    };
    bad(
        SpecFlags {
            values: vec!["q=1".into()],
            ..flags.clone()
        },
        "no --tensor `q`",
    );
    bad(
        SpecFlags {
            candidate_params: Some("x,{idx}".into()),
            ..flags.clone()
        },
        "no @offset",
    );
    bad(
        SpecFlags {
            functions: vec!["g".into()],
            ..flags.clone()
        },
        "expected name=binding",
    );
    bad(
        SpecFlags {
            globals: vec!["w=input:f99".into()],
            ..flags.clone()
        },
        "unknown dtype",
    );
}
