//! End-to-end tests of the binding keys through the binary: every key's
//! flag form reaches the same verdict as its corpus spec, reports list the
//! bindings as assumptions, and witnesses name uninterpreted functions'
//! interpretations.

mod support;
use support::ptxeq;

const ATTN: &str = "corpus/bindings/common/attn_extern.ptx";
const GATHER: &str = "corpus/bindings/common/gather.ptx";
const STRUCT: &str = "corpus/bindings/common/struct_param.ptx";
const GLOBALS: &str = "corpus/bindings/common/globals.ptx";

#[test]
fn function_flag_binds_an_extern() {
    let mut args = vec![
        "check",
        ATTN,
        ATTN,
        "--entry",
        "_Z8attn_refPKfS0_S0_Pf",
        "--candidate-entry",
        "_Z8attn_revPKfS0_S0_Pf",
        "--block",
        "4",
        "--tensor",
        "q:f32[4,16]:in",
        "--tensor",
        "k:f32[32,16]:in",
        "--tensor",
        "v:f32[32,16]:in",
        "--tensor",
        "o:f32[4,16]:out",
    ];
    // Unbound: unsupported, naming the flag that binds it.
    let (code, out, err) = ptxeq(&args);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("--function my_exp=exp"), "{out}");
    args.extend(["--function", "my_exp=uninterpreted"]);
    let (code, out, err) = ptxeq(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("equivalent"), "{out}");
    assert!(
        out.contains("binding: function `my_exp` (`_Z6my_expf`) is an uninterpreted function"),
        "{out}"
    );
    // A name that matches nothing is invalid input, not silently ignored.
    args.extend(["--function", "my_exq=exp"]);
    let (code, _, err) = ptxeq(&args);
    assert_eq!(code, 3);
    assert!(err.contains("`my_exq` names no .func"), "{err}");
}

#[test]
fn values_flag_makes_a_gather_concrete() {
    let base = [
        "check",
        GATHER,
        GATHER,
        "--entry",
        "_Z4copyPKfPKiPf",
        "--candidate-entry",
        "_Z10gather_refPKfPKiPf",
        "--block",
        "64",
        "--tensor",
        "x:f32[64]:in",
        "--tensor",
        "idx:s32[64]:in",
        "--tensor",
        "y:f32[64]:out",
    ];
    let with = |v: &str| {
        let mut a = base.to_vec();
        a.extend(["--values", v]);
        ptxeq(&a)
    };
    let (code, out, err) = with("idx=iota");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("holds the given values iota"), "{out}");
    // Element 1 reads x[0]: refuted, for these values.
    let ones: Vec<String> = (0..64)
        .map(|i| if i == 1 { "0".into() } else { i.to_string() })
        .collect();
    let (code, out, err) = with(&format!("idx={}", ones.join(",")));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("y[1]: refuted"), "{out}");
}

#[test]
fn struct_params_in_the_flag_form() {
    let args = [
        "check",
        STRUCT,
        STRUCT,
        "--entry",
        "_Z10axpy_plainPKfS0_Pfif",
        "--candidate-entry",
        "_Z11axpy_struct4Args",
        "--block",
        "64",
        "--grid",
        "2",
        "--ctas",
        "all",
        "--tensor",
        "a:f32[128]:in",
        "--tensor",
        "b:f32[128]:in",
        "--tensor",
        "c:f32[128]:out",
        "--scalar",
        "n=100",
        "--scalar",
        "alpha=0.5",
        "--candidate-params",
        "{a@0,b@8,c@16,n:s32@24,alpha:f32@28}",
    ];
    let (code, out, err) = ptxeq(&args);
    assert_eq!(code, 0, "{out}{err}");
    let swapped: Vec<&str> = args
        .iter()
        .map(|a| {
            if a.starts_with('{') {
                "{a@8,b@0,c@16,n:s32@24,alpha:f32@28}"
            } else {
                a
            }
        })
        .collect();
    let (code, out, err) = ptxeq(&swapped);
    assert_eq!(code, 1, "{out}{err}");
}

#[test]
fn global_flag_declares_a_constant_an_input() {
    let base = [
        "check",
        GLOBALS,
        GLOBALS,
        "--entry",
        "_Z9scale_twoPKfPf",
        "--candidate-entry",
        "_Z11scale_constPKfPf",
        "--block",
        "32",
        "--tensor",
        "x:f32[32]:in",
        "--tensor",
        "y:f32[32]:out",
    ];
    // Read as its initialiser {2}: equivalent, with that assumption printed.
    let (code, out, err) = ptxeq(&base);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("module variable `c_scale` (.const) holds its initialiser at launch"),
        "{out}"
    );
    let mut a = base.to_vec();
    a.extend(["--global", "c_scale=input:f32"]);
    let (code, out, err) = ptxeq(&a);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("c_scale[0] = "),
        "the witness names the variable: {out}"
    );
    let mut a = base.to_vec();
    a.extend(["--global", "c_scale=3:f32"]);
    let (code, out, err) = ptxeq(&a);
    assert_eq!(code, 1, "{out}{err}");
}

#[test]
fn json_witness_names_the_interpretation() {
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/bindings/extern-uninterpreted-fa1-refuted/check.toml",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cx = &v["outputs"][0]["failures"][0]["failure"]["counterexample"];
    let f = cx["functions"][0].as_str().unwrap_or_default();
    assert!(f.starts_with("my_exp(a1) = ("), "{cx}");
    assert!(
        v["binding_assumptions"].as_array().is_some_and(|a| a
            .iter()
            .any(|x| x.as_str().is_some_and(|s| s.contains("scratch")))),
        "{out}"
    );
}

#[test]
fn help_shows_an_example_per_binding_flag() {
    let (code, out, _) = ptxeq(&["check", "--help"]);
    assert_eq!(code, 0);
    for example in [
        "--values idx=3,1,2,0",
        "--function my_exp=exp",
        "--global MAX_KEY=32",
        "{a@0,b@8,n:s32@16}",
        "scratch",
    ] {
        assert!(out.contains(example), "--help lacks {example}: {out}");
    }
}
