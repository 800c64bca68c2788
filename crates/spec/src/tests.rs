//! Spec parsing and validation tests: the documented examples parse, and
//! every validation rule produces a message that names the key.

use std::path::{Path, PathBuf};

use crate::*;

/// A spec with the core keys of every section, as the README's first
/// example of the format shows them.
const DESIGN_EXAMPLE: &str = r#"
[launch]
block = [128, 1, 1]          # default: .reqntid / .maxntid of the entry
grid  = [1, 1, 1]
ctas  = "first"              # "first" | "all" | [[x,y,z], ...]
dynamic_shared = 0           # bytes behind `.extern .shared`

[reference]
ptx = "ref.ptx"              # entry = "..." when a file has several
params = ["x", "y", "n"]     # kernel params in order, by tensor/scalar name; "_" = unused

[candidate]
ptx = "opt.ptx"
params = ["y", "x", "n", "_", "_"]

[tensors]
x = { role = "input",  dtype = "f32", shape = [128] }
y = { role = "output", dtype = "f32", shape = [128] }

[scalars]
n = 128

[expect]                      # corpus only
verdict = "equivalent"        # equivalent | not-equivalent | race | deadlock | divergence | out-of-bounds | unsupported
"#;

/// A minimal valid pair, used as the base for the error cases.
const BASE: &str = r#"
note = "a one-line note"

[launch]
block = [128, 1, 1]
grid = [2, 1, 1]

[reference]
ptx = "ref.ptx"
entry = "ref"
params = ["x", "y", "n"]

[candidate]
ptx = "../common/opt.ptx"
params = ["x", "y", "n", "_"]

[tensors]
x = { role = "input", dtype = "f32", shape = [128] }
y = { role = "output", dtype = "f32", shape = [2, 64] }

[scalars]
n = 128

[expect]
verdict = "equivalent"
"#;

fn parse(text: &str) -> Result<CheckSpec, SpecError> {
    CheckSpec::from_toml_str(text, Path::new("/cases/a"))
}

/// Replaces `from` (which must occur) in BASE and expects an error whose
/// message contains every one of `needles`.
fn base_err(from: &str, to: &str, needles: &[&str]) -> SpecError {
    assert!(BASE.contains(from), "test bug: {from:?} not in BASE");
    let text = BASE.replacen(from, to, 1);
    let err = match parse(&text) {
        Ok(_) => panic!("expected an error after replacing {from:?} with {to:?}"),
        Err(e) => e,
    };
    for n in needles {
        assert!(
            err.message.contains(n),
            "message {:?} lacks {n:?}",
            err.message
        );
    }
    err
}

#[test]
fn design_example_parses() {
    let spec = parse(DESIGN_EXAMPLE).unwrap();
    assert_eq!(spec.launch.block, Some([128, 1, 1]));
    assert_eq!(spec.launch.grid, [1, 1, 1]);
    assert_eq!(spec.launch.ctas, Ctas::First);
    assert_eq!(spec.kind(), CaseKind::Pair);
    let Kernels::Pair {
        reference,
        candidate,
    } = &spec.kernels
    else {
        panic!("not a pair");
    };
    assert_eq!(reference.ptx, PathBuf::from("/cases/a/ref.ptx"));
    assert_eq!(reference.entry, None);
    assert_eq!(
        candidate.params,
        vec![
            ParamBinding::Tensor("y".into()),
            ParamBinding::Tensor("x".into()),
            ParamBinding::Scalar("n".into()),
            ParamBinding::Unused,
            ParamBinding::Unused,
        ]
    );
    assert_eq!(spec.tensors["x"].dtype, DType::F32);
    assert_eq!(spec.tensors["y"].role, Role::Output);
    assert_eq!(spec.scalars["n"], ScalarValue::Int(128));
    let expect = spec.expect.unwrap();
    assert_eq!(expect.verdict, Verdict::Equivalent);
    assert_eq!(expect.status, Status::Active);
}

#[test]
fn base_parses_with_paths_resolved() {
    let spec = parse(BASE).unwrap();
    assert_eq!(spec.note.as_deref(), Some("a one-line note"));
    let k = spec.kernels.iter();
    assert_eq!(k[0].1.entry.as_deref(), Some("ref"));
    assert_eq!(k[1].1.ptx, Path::new("/cases/a/../common/opt.ptx"));
    assert_eq!(spec.tensors["y"].elements(), Some(128));
    assert_eq!(spec.tensors["y"].byte_size(), Some(512));
}

#[test]
fn single_kernel_form_with_pending_and_all_options() {
    let text = r#"
note = "n"
[launch]
grid = [4, 2]
ctas = [[0, 0, 0], [3, 1, 0]]
dynamic_shared = 4096
[kernel]
ptx = "k.ptx"
params = ["a", "alpha", "_"]
[tensors]
a = { role = "inout", dtype = "bf16", shape = [4, 8] }
[scalars]
alpha = 0.5
[expect]
verdict = "race"
status = "pending"
pending = "needs cp.async intervals"
"#;
    let spec = parse(text).unwrap();
    assert_eq!(spec.kind(), CaseKind::Single);
    assert_eq!(spec.launch.block, None);
    assert_eq!(spec.launch.grid, [4, 2, 1]);
    assert_eq!(spec.launch.ctas, Ctas::List(vec![[0, 0, 0], [3, 1, 0]]));
    assert_eq!(spec.launch.dynamic_shared, 4096);
    assert_eq!(spec.scalars["alpha"], ScalarValue::float(0.5));
    let e = spec.expect.unwrap();
    assert_eq!(e.status, Status::Pending);
    assert_eq!(e.pending.as_deref(), Some("needs cp.async intervals"));
}

#[test]
fn unsupported_with_reason() {
    let text = BASE.replace(
        "verdict = \"equivalent\"",
        "verdict = \"unsupported\"\nreason = \"branch on a loaded value\"",
    );
    let e = parse(&text).unwrap().expect.unwrap();
    assert_eq!(e.verdict, Verdict::Unsupported);
    assert_eq!(e.reason.as_deref(), Some("branch on a loaded value"));
}

#[test]
fn unknown_keys_are_rejected() {
    for (from, to, key) in [
        ("note =", "notes =", "notes"),
        ("block =", "blocks =", "blocks"),
        ("entry = \"ref\"", "entri = \"ref\"", "entri"),
        (
            "dtype = \"f32\", shape = [128]",
            "dtype = \"f32\", shap = [128]",
            "shap",
        ),
        ("verdict = ", "verdit = ", "verdit"),
        ("[scalars]", "[scalar]", "scalar"),
    ] {
        let err = base_err(from, to, &[key]);
        assert_eq!(err.kind, SpecErrorKind::Syntax, "{err}");
        assert!(err.location.is_some(), "no location for {err}");
    }
}

#[test]
fn syntax_errors_have_locations() {
    let err = base_err("grid = [2, 1, 1]", "grid = [2, 1,", &[]);
    assert_eq!(err.kind, SpecErrorKind::Syntax);
    assert!(err.location.is_some());
    let err = base_err(
        "dtype = \"f32\", shape = [128]",
        "dtype = \"f31\", shape = [128]",
        &["f31", "bf16"],
    );
    assert_eq!(err.location.map(|l| l.line), Some(18));
    base_err("role = \"input\"", "role = \"in\"", &["in", "input"]);
    base_err(
        "\"equivalent\"",
        "\"equivalence\"",
        &["equivalence", "not-equivalent"],
    );
    base_err("n = 128", "n = \"128\"", &["integer or a float"]);
    base_err("block = [128, 1, 1]", "block = \"128\"", &["array"]);
}

#[test]
fn launch_errors() {
    let e = base_err(
        "block = [128, 1, 1]",
        "block = [0, 1, 1]",
        &["launch.block", "≥ 1"],
    );
    assert_eq!(e.kind, SpecErrorKind::Invalid);
    assert_eq!(e.location.map(|l| l.line), Some(5), "{e}");
    assert_eq!(e.location.map(|l| l.col), Some(9), "{e}");
    base_err(
        "block = [128, 1, 1]",
        "block = [64, 32, 1]",
        &["2048 threads", "1024"],
    );
    base_err(
        "block = [128, 1, 1]",
        "block = [1, 1, 128]",
        &["launch.block", "64"],
    );
    base_err(
        "block = [128, 1, 1]",
        "block = [1, 1, 1, 1]",
        &["4 dimensions"],
    );
    base_err("block = [128, 1, 1]", "block = []", &["0 dimensions"]);
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 0, 1]",
        &["launch.grid", "≥ 1"],
    );
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 1, 1]\nctas = \"some\"",
        &["\"some\"", "all"],
    );
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 1, 1]\nctas = []",
        &["empty list"],
    );
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 1, 1]\nctas = [[0, 0, 0], [2, 0, 0]]",
        &["launch.ctas[1]", "outside the grid [2, 1, 1]"],
    );
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 1, 1]\nctas = [[1], [1, 0, 0]]",
        &["[1, 0, 0] twice"],
    );
    base_err(
        "grid = [2, 1, 1]",
        "grid = [2, 1, 1]\ndynamic_shared = -4",
        &["launch.dynamic_shared", "-4"],
    );
    // a bare integer is a 1-D block
    let spec = parse(&BASE.replace("block = [128, 1, 1]", "block = 128")).unwrap();
    assert_eq!(spec.launch.block, Some([128, 1, 1]));
}

#[test]
fn kernel_form_errors() {
    base_err(
        "[candidate]\nptx = \"../common/opt.ptx\"\nparams = [\"x\", \"y\", \"n\", \"_\"]",
        "",
        &["[reference] without [candidate]"],
    );
    base_err(
        "[reference]\nptx = \"ref.ptx\"\nentry = \"ref\"\nparams = [\"x\", \"y\", \"n\"]",
        "",
        &["[candidate] without [reference]"],
    );
    base_err(
        "[tensors]",
        "[kernel]\nptx = \"k.ptx\"\nparams = []\n[tensors]",
        &["[kernel]", "cannot be combined"],
    );
    let no_kernels = "[tensors]\nx = { role = \"output\", dtype = \"f32\", shape = [1] }\n";
    let e = parse(no_kernels).unwrap_err();
    assert!(e.message.contains("no kernels"), "{e}");
    base_err(
        "ptx = \"ref.ptx\"",
        "ptx = \"\"",
        &["reference.ptx", "empty"],
    );
    base_err(
        "entry = \"ref\"",
        "entry = \"\"",
        &["reference.entry", "empty"],
    );
}

#[test]
fn missing_required_key() {
    base_err("params = [\"x\", \"y\", \"n\"]", "", &["params"]);
}

#[test]
fn param_errors() {
    let e = base_err(
        "params = [\"x\", \"y\", \"n\", \"_\"]",
        "params = [\"x\", \"y\", \"m\", \"_\"]",
        &["candidate.params[2]", "`m`", "declared: x, y, n"],
    );
    assert_eq!(e.location.map(|l| l.line), Some(15), "{e}");
    base_err(
        "params = [\"x\", \"y\", \"n\", \"_\"]",
        "params = [\"x\", \"x\", \"y\", \"n\"]",
        &["tensor `x` is bound to params 0 and 1", "alias"],
    );
    base_err(
        "n = 128",
        "n = 128\nm = 4",
        &["scalar `m` is declared but no kernel"],
    );
    base_err(
        "[scalars]",
        "z = { role = \"input\", dtype = \"f32\", shape = [1] }\n[scalars]",
        &["tensor `z` is declared but no kernel"],
    );
    base_err("n = 128", "n = 128\nx = 1", &["`x` is declared both"]);
    base_err(
        "[scalars]",
        "_ = { role = \"input\", dtype = \"f32\", shape = [1] }\n[scalars]",
        &["`_` marks an unused param"],
    );
    base_err("n = 128", "\"n m\" = 128", &["scalar name `n m`"]);
}

#[test]
fn tensor_errors() {
    base_err(
        "shape = [128]",
        "shape = []",
        &["tensor `x`", "shape", "empty"],
    );
    base_err(
        "shape = [2, 64]",
        "shape = [2, 0]",
        &["tensor `y`", "shape[1] is 0"],
    );
    base_err("shape = [2, 64]", "shape = [2, -3]", &["shape[1] is -3"]);
}

#[test]
fn expect_errors() {
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"race-free\"",
        &["race-free", "a kernel pair", "equivalent, not-equivalent"],
    );
    let single = "note = \"n\"\n[kernel]\nptx = \"k.ptx\"\nparams = [\"y\"]\n\
        [tensors]\ny = { role = \"output\", dtype = \"f32\", shape = [1] }\n\
        [expect]\nverdict = \"not-equivalent\"\n";
    let e = parse(single).unwrap_err();
    assert!(e.message.contains("a single kernel"), "{e}");
    assert!(e.message.contains("race-free"), "{e}");
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\nreason = \"x\"",
        &["expect.reason", "unsupported"],
    );
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\nstatus = \"pending\"",
        &["needs `expect.pending`"],
    );
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\npending = \"why\"",
        &["not \"pending\""],
    );
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\nstatus = \"pending\"\npending = \" \"",
        &["`expect.pending` is empty"],
    );
    base_err(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\nstatus = \"later\"",
        &["later", "pending"],
    );
}

#[test]
fn load_reads_files_and_reports_paths() {
    // Each test owns its parent directory: the candidate's "../common" lies
    // inside it, so tests running side by side never share that file.
    let root = std::env::temp_dir().join(format!("ptxeq-spec-test-{}", std::process::id()));
    let dir = root.join("case");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("check.toml");
    std::fs::write(&path, BASE).unwrap();
    // `load` checks that the kernels' files exist.
    std::fs::write(dir.join("ref.ptx"), ".version 8.5\n").unwrap();
    std::fs::create_dir_all(dir.join("../common")).unwrap();
    std::fs::write(dir.join("../common/opt.ptx"), ".version 8.5\n").unwrap();
    let spec = CheckSpec::load(&path).unwrap();
    assert_eq!(spec.kernels.iter()[0].1.ptx, dir.join("ref.ptx"));
    // It knows where its keys are.
    assert_eq!(
        spec.locations.get("reference.ptx"),
        Some(format!("{}:9:7", path.display()))
    );

    std::fs::write(&path, BASE.replace("grid = [2, 1, 1]", "grid = [0]")).unwrap();
    let e = CheckSpec::load(&path).unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("{}:6:8: ", path.display())),
        "{e}"
    );

    let e = CheckSpec::load(&dir.join("missing.toml")).unwrap_err();
    assert_eq!(e.kind, SpecErrorKind::Io);
    assert!(e.to_string().contains("missing.toml"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_missing_ptx_names_its_key_and_the_resolved_path() {
    let root = std::env::temp_dir().join(format!("ptxeq-spec-missing-{}", std::process::id()));
    let dir = root.join("case");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("check.toml");
    std::fs::write(&path, BASE).unwrap();
    std::fs::write(dir.join("ref.ptx"), ".version 8.5\n").unwrap();
    // The candidate's "../common/opt.ptx" does not exist next to the spec
    // (whatever the working directory holds): `root` holds only `case/`.
    let e = CheckSpec::load(&path).unwrap_err();
    let s = e.to_string();
    assert_eq!(e.kind, SpecErrorKind::Io);
    assert!(
        s.starts_with(&format!(
            "{}:14:7: `candidate.ptx`: no such file: ",
            path.display()
        )),
        "{s}"
    );
    assert!(s.contains("common/opt.ptx"), "{s}");
    assert!(!s.contains(".."), "the resolved path is normalised: {s}");
    let resolved = root.join("common/opt.ptx");
    assert!(
        s.contains(&format!("no such file: {} (", resolved.display())),
        "names the resolved path: {s}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn locations_point_at_every_bound_key() {
    let spec = CheckSpec::from_toml_str(BASE, Path::new("")).unwrap();
    let l = &spec.locations;
    assert_eq!(l.get("reference.params").as_deref(), Some("11:10"));
    assert_eq!(l.get("reference.params.1").as_deref(), Some("11:16"));
    assert!(l.get("scalars.n").is_some());
    assert!(l.get("tensors.x").is_some());
    assert_eq!(l.get("reference.entry").as_deref(), Some("10:9"));
    assert_eq!(l.get("candidate.entry"), None, "not written");
    assert_eq!(
        l.at("reference.params", "kernel `k` has 2 params"),
        "11:10: kernel `k` has 2 params"
    );
    assert_eq!(l.at("nowhere", "plain"), "plain");
}

#[test]
fn never_panics_on_mangled_input() {
    // Every single-character deletion and a few insertions of BASE.
    let chars: Vec<(usize, char)> = BASE.char_indices().collect();
    for &(i, c) in &chars {
        let mut t = BASE.to_owned();
        t.replace_range(i..i + c.len_utf8(), "");
        let _ = parse(&t);
        for ins in ["]", "\"", "-", "é", "\n[x]\n"] {
            let mut t = BASE.to_owned();
            t.insert_str(i, ins);
            let _ = parse(&t);
        }
    }
}

#[test]
fn tensor_flags() {
    let (name, t) = TensorSpec::from_flag("x:f32[128,4]:in").unwrap();
    assert_eq!(name, "x");
    assert_eq!(
        t,
        TensorSpec {
            role: Role::Input,
            dtype: DType::F32,
            shape: vec![128, 4],
            compare: None,
            values: None,
        }
    );
    assert_eq!(t.to_string(), "f32[128,4]:in");
    let (_, t) = TensorSpec::from_flag("out:bf16[8]:output").unwrap();
    assert_eq!(t.role, Role::Output);
    assert_eq!(
        TensorSpec::from_flag("y:u8[3]:inout").unwrap().1.role,
        Role::InOut
    );
    for (bad, needle) in [
        ("x", "name:dtype[dims]:role"),
        ("x:f32[128]", "no role"),
        ("x:f32:in", "no shape"),
        ("x:f33[1]:in", "unknown dtype `f33`"),
        ("x:f32[1]:rw", "unknown role `rw`"),
        ("x:f32[0]:in", "extents ≥ 1"),
        ("x:f32[1,]:in", "extents ≥ 1"),
        ("_:f32[1]:in", "not `_` alone"),
        (":f32[1]:in", "the name ``"),
    ] {
        let e = TensorSpec::from_flag(bad).unwrap_err();
        assert_eq!(e.kind, SpecErrorKind::Flag);
        assert!(e.message.contains(needle), "{bad}: {e}");
    }
}

#[test]
fn scalar_flags() {
    assert_eq!(
        parse_scalar_flag("n=128").unwrap(),
        ("n".into(), ScalarValue::Int(128))
    );
    assert_eq!(parse_scalar_flag("k = -3").unwrap().1, ScalarValue::Int(-3));
    assert_eq!(
        parse_scalar_flag("m=0x7f").unwrap().1,
        ScalarValue::Int(127)
    );
    assert_eq!(
        parse_scalar_flag("m=-0x10").unwrap().1,
        ScalarValue::Int(-16)
    );
    assert_eq!(
        parse_scalar_flag("s=0.5").unwrap().1,
        ScalarValue::float(0.5)
    );
    assert_eq!(
        parse_scalar_flag("e=1e-3").unwrap().1,
        ScalarValue::float(1e-3)
    );
    assert!(
        parse_scalar_flag("n128")
            .unwrap_err()
            .message
            .contains("name=value")
    );
    assert!(
        parse_scalar_flag("n=abc")
            .unwrap_err()
            .message
            .contains("not an integer or a float")
    );
    assert!(
        parse_scalar_flag("n=0xzz")
            .unwrap_err()
            .message
            .contains("hex")
    );
    assert!(
        parse_scalar_flag("=1")
            .unwrap_err()
            .message
            .contains("name")
    );
    // float bits: -0.0 and 0.0 are different specs
    assert_ne!(ScalarValue::float(0.0), ScalarValue::float(-0.0));
}

#[test]
fn dims_flags() {
    assert_eq!(parse_dims("--block", "128").unwrap(), [128, 1, 1]);
    assert_eq!(parse_dims("--block", "16x16").unwrap(), [16, 16, 1]);
    assert_eq!(parse_dims("--grid", "4, 2, 3").unwrap(), [4, 2, 3]);
    assert!(
        parse_dims("--block", "0")
            .unwrap_err()
            .message
            .contains("≥ 1")
    );
    assert!(
        parse_dims("--block", "1,2,3,4")
            .unwrap_err()
            .message
            .contains("1 to 3")
    );
    assert!(
        parse_dims("--block", "a")
            .unwrap_err()
            .message
            .contains("not a number")
    );
    assert_eq!(parse_param_list("x, y,_").unwrap(), vec!["x", "y", "_"]);
    assert!(parse_param_list("x,,y").is_err());
}

fn flags() -> SpecFlags {
    SpecFlags {
        ptx: vec!["ref.ptx".into(), "opt.ptx".into()],
        tensors: vec!["x:f32[128]:in".into(), "y:f32[128]:out".into()],
        scalars: vec!["n=128".into()],
        block: Some("128".into()),
        ..SpecFlags::default()
    }
}

#[test]
fn from_flags_builds_the_same_spec_as_toml() {
    let spec = CheckSpec::from_flags(&flags()).unwrap();
    let toml = r#"
[launch]
block = [128, 1, 1]
[reference]
ptx = "ref.ptx"
params = ["x", "y", "n"]
[candidate]
ptx = "opt.ptx"
params = ["x", "y", "n"]
[tensors]
x = { role = "input", dtype = "f32", shape = [128] }
y = { role = "output", dtype = "f32", shape = [128] }
[scalars]
n = 128
"#;
    assert_eq!(spec, CheckSpec::from_toml_str(toml, Path::new("")).unwrap());

    let single = SpecFlags {
        ptx: vec!["k.ptx".into()],
        params: Some("y,_,x".into()),
        scalars: vec![],
        grid: Some("4x2".into()),
        ctas: Some("0,0;3,1".into()),
        dynamic_shared: Some(1024),
        entry: Some("k".into()),
        ..flags()
    };
    let spec = CheckSpec::from_flags(&single).unwrap();
    assert_eq!(spec.kind(), CaseKind::Single);
    assert_eq!(spec.launch.ctas, Ctas::List(vec![[0, 0, 0], [3, 1, 0]]));
    assert_eq!(spec.kernels.iter()[0].1.params[1], ParamBinding::Unused);

    let cand = SpecFlags {
        candidate_params: Some("y,x,n,_".into()),
        candidate_entry: Some("opt".into()),
        ..flags()
    };
    let spec = CheckSpec::from_flags(&cand).unwrap();
    let k = spec.kernels.iter();
    assert_eq!(k[1].1.entry.as_deref(), Some("opt"));
    assert_eq!(k[1].1.params.len(), 4);
}

#[test]
fn from_flags_errors() {
    let e = |f: SpecFlags| CheckSpec::from_flags(&f).unwrap_err().message;
    assert!(
        e(SpecFlags {
            ptx: vec![],
            ..flags()
        })
        .contains("0 PTX files")
    );
    assert!(
        e(SpecFlags {
            block: Some("2048".into()),
            ..flags()
        })
        .contains("launch.block")
    );
    assert!(
        e(SpecFlags {
            params: Some("x,q".into()),
            ..flags()
        })
        .contains("`q`")
    );
    assert!(
        e(SpecFlags {
            tensors: vec!["x:f32[1]:in".into(), "x:f32[2]:out".into()],
            ..flags()
        })
        .contains("given twice")
    );
    assert!(
        e(SpecFlags {
            ptx: vec!["k.ptx".into()],
            candidate_params: Some("x".into()),
            ..flags()
        })
        .contains("need two PTX files")
    );
    assert!(
        e(SpecFlags {
            ctas: Some("2".into()),
            ..flags()
        })
        .contains("outside the grid")
    );
}

#[test]
fn serde_round_trip() {
    let spec = parse(BASE).unwrap();
    let json = serde_json::to_string(&spec).unwrap();
    assert!(json.contains("\"verdict\":\"equivalent\""), "{json}");
    let back: CheckSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec);
    let v: ScalarValue = serde_json::from_str("0.25").unwrap();
    assert_eq!(v, ScalarValue::float(0.25));
    let v: ScalarValue = serde_json::from_str("7").unwrap();
    assert_eq!(v, ScalarValue::Int(7));
}
