//! Tests of the issue-14 keys: per-kernel launch (`[reference.launch]`,
//! `[candidate.launch]`), compared regions (`compare`), `ctas = "auto"`,
//! symbolic scalars (`alpha = { dtype = "f32" }`) — TOML and flag forms.

use std::path::Path;

use crate::*;

const PAIR: &str = r#"
[launch]
grid = [8, 8]
ctas = "auto"

[reference]
ptx = "ref.ptx"
params = ["A", "C", "alpha", "n"]
[reference.launch]
block = [16, 16]

[candidate]
ptx = "cand.ptx"
params = ["A", "C", "alpha", "n"]
[candidate.launch]
block = 64
grid = [4, 4]
dynamic_shared = 512

[tensors]
A = { role = "input", dtype = "f32", shape = [128, 128] }
C = { role = "inout", dtype = "f32", shape = [128, 128], compare = [[0, 32], [0, 64]] }

[scalars]
alpha = { dtype = "f32" }
n = 128
"#;

fn parse(text: &str) -> Result<CheckSpec, SpecError> {
    CheckSpec::from_toml_str(text, Path::new(""))
}

/// `PAIR` with `from` replaced by `to`; the error message must contain
/// every needle.
fn err(from: &str, to: &str, needles: &[&str]) -> SpecError {
    assert!(PAIR.contains(from), "{from}");
    let e = parse(&PAIR.replacen(from, to, 1)).unwrap_err();
    for n in needles {
        assert!(e.message.contains(n), "`{}` lacks `{n}`", e.message);
    }
    e
}

fn kernels(spec: &CheckSpec) -> (&KernelRef, &KernelRef) {
    match &spec.kernels {
        Kernels::Pair {
            reference,
            candidate,
        } => (reference, candidate),
        Kernels::Single(_) | Kernels::Formula { .. } => panic!("a pair"),
    }
}

#[test]
fn per_kernel_launch_overrides_the_shared_keys() {
    let spec = parse(PAIR).unwrap();
    assert_eq!(spec.launch.grid, [8, 8, 1]);
    assert_eq!(spec.launch.block, None);
    assert_eq!(spec.launch.ctas, Ctas::Auto);
    let (r, c) = kernels(&spec);
    assert_eq!(
        r.launch,
        Launch {
            block: Some([16, 16, 1]),
            grid: [8, 8, 1],
            ctas: Ctas::Auto,
            dynamic_shared: 0,
            cluster: None,
            auto_scan_limit: None,
        }
    );
    assert_eq!(
        c.launch,
        Launch {
            block: Some([64, 1, 1]),
            grid: [4, 4, 1],
            ctas: Ctas::Auto,
            dynamic_shared: 512,
            cluster: None,
            auto_scan_limit: None,
        }
    );
    // Without overrides a kernel's launch is the shared one.
    let plain = PAIR
        .replace("[reference.launch]\nblock = [16, 16]\n", "")
        .replace(
            "[candidate.launch]\nblock = 64\ngrid = [4, 4]\ndynamic_shared = 512\n",
            "",
        );
    let spec = parse(&plain).unwrap();
    let (r, c) = kernels(&spec);
    assert_eq!(r.launch, spec.launch);
    assert_eq!(c.launch, spec.launch);
}

#[test]
fn per_kernel_launch_errors_name_the_kernel_key() {
    let e = err(
        "block = 64",
        "block = 2048",
        &["`candidate.launch.block`", "1024"],
    );
    assert!(e.location.is_some());
    err("block = [16, 16]", "blok = 1", &["unknown field `blok`"]);
    // A shared CTA list is checked against each kernel's own grid.
    err(
        "ctas = \"auto\"",
        "ctas = [[5, 5, 0]]",
        &[
            "`launch.ctas[0]`",
            "outside the grid [4, 4, 1] of the candidate kernel",
        ],
    );
    // A kernel's own list against its own grid.
    err(
        "grid = [4, 4]",
        "grid = [4, 4]\nctas = [[0, 0], [4, 0]]",
        &[
            "`candidate.launch.ctas[1]`",
            "outside the grid [4, 4, 1] (ids",
        ],
    );
    err("ctas = \"auto\"", "ctas = \"some\"", &["\"auto\""]);
    err(
        "ctas = \"auto\"",
        "ctas = \"auto\"\nauto_scan_limit = 0",
        &["`launch.auto_scan_limit`", "positive"],
    );
    let spec = parse(&PAIR.replace("block = 64", "block = 64\nauto_scan_limit = 4")).unwrap();
    let (r, c) = kernels(&spec);
    assert_eq!(
        (r.launch.scan_limit(), c.launch.scan_limit()),
        (DEFAULT_AUTO_SCAN_LIMIT, 4)
    );
    assert_eq!(c.launch.grid_ctas(), 16);
}

#[test]
fn compare_regions() {
    let spec = parse(PAIR).unwrap();
    let c = &spec.tensors["C"];
    assert_eq!(c.compare, Some(vec![[0, 32], [0, 64]]));
    assert!(spec.tensors["A"].compare.is_none());
    // Row-major: element (31, 63) is in, (32, 0) and (0, 64) are out.
    assert!(c.is_compared(31 * 128 + 63));
    assert!(!c.is_compared(32 * 128));
    assert!(!c.is_compared(64));
    assert!(spec.tensors["A"].is_compared(128 * 128 - 1));
    assert_eq!(show_region(&[[0, 32], [0, 64]]), "[[0, 32], [0, 64]]");

    let cmp = "compare = [[0, 32], [0, 64]]";
    err(cmp, "compare = [[0, 32]]", &["1 ranges", "2 dimensions"]);
    err(
        cmp,
        "compare = [[0, 32], [0, 129]]",
        &["compare[1]", "≤ 128"],
    );
    err(
        cmp,
        "compare = [[4, 4], [0, 64]]",
        &["compare[0]", "lo < hi"],
    );
    err(
        cmp,
        "compare = [[0, 32], [0]]",
        &["compare[1] has 1 numbers"],
    );
    err(
        "shape = [128, 128] }",
        "shape = [128, 128], compare = [[0, 1], [0, 1]] }",
        &["`A`", "input"],
    );
}

#[test]
fn symbolic_scalars() {
    let spec = parse(PAIR).unwrap();
    assert_eq!(
        spec.scalars["alpha"],
        ScalarValue::Symbolic { dtype: DType::F32 }
    );
    assert_eq!(spec.scalars["alpha"].symbolic(), Some(DType::F32));
    assert_eq!(spec.scalars["n"].symbolic(), None);
    for d in ["f16", "bf16", "f64"] {
        let s = parse(&PAIR.replace("dtype = \"f32\" }\nn", &format!("dtype = \"{d}\" }}\nn")))
            .unwrap();
        assert_eq!(s.scalars["alpha"].symbolic().map(|d| d.as_str()), Some(d));
    }
    // An integer scalar must have a value: the error says why.
    let e = err(
        "n = 128",
        "n = { dtype = \"s32\" }",
        &[
            "scalar `n` (s32) has no value",
            "integer scalars stay concrete",
            "n = 128",
        ],
    );
    assert_eq!(e.kind, SpecErrorKind::Invalid);
    assert_eq!(e.location.map(|l| l.line), Some(26));
    err(
        "n = 128",
        "n = { dtype = \"pred\" }",
        &["integer scalars stay concrete"],
    );
    err(
        "alpha = { dtype = \"f32\" }",
        "alpha = { dtype = \"f32\", value = 1 }",
        &["unknown key `value`"],
    );
    err("alpha = { dtype = \"f32\" }", "alpha = { }", &["dtype"]);
    // Round trip through serde (specs are salsa inputs and cache keys).
    let json = serde_json::to_string(&spec).unwrap();
    let back: CheckSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec);
}

fn pair_flags() -> SpecFlags {
    SpecFlags {
        ptx: vec!["ref.ptx".into(), "cand.ptx".into()],
        tensors: vec!["A:f32[128,128]:in".into(), "C:f32[128,128]:inout".into()],
        scalars: vec!["alpha:f32".into(), "n=128".into()],
        grid: Some("8x8".into()),
        ctas: Some("auto".into()),
        ref_launch: LaunchFlags {
            block: Some("16x16".into()),
            ..LaunchFlags::default()
        },
        cand_launch: LaunchFlags {
            block: Some("64".into()),
            grid: Some("4,4".into()),
            dynamic_shared: Some(512),
            ..LaunchFlags::default()
        },
        compares: vec!["C=0:32,0:64".into()],
        ..SpecFlags::default()
    }
}

#[test]
fn flag_form_reaches_every_new_key() {
    let from_flags = CheckSpec::from_flags(&pair_flags()).unwrap();
    assert_eq!(from_flags, parse(PAIR).unwrap());
}

#[test]
fn flag_errors() {
    let e = |f: SpecFlags| CheckSpec::from_flags(&f).unwrap_err().message;
    let m = e(SpecFlags {
        ptx: vec!["k.ptx".into()],
        ..pair_flags()
    });
    assert!(m.contains("--ref-* / --cand-*"), "{m}");
    let m = e(SpecFlags {
        cand_launch: LaunchFlags {
            block: Some("64x".into()),
            ..LaunchFlags::default()
        },
        ..pair_flags()
    });
    assert!(m.contains("--cand-block"), "{m}");
    let m = e(SpecFlags {
        cand_launch: LaunchFlags {
            ctas: Some("9,9".into()),
            ..LaunchFlags::default()
        },
        ..pair_flags()
    });
    assert!(m.contains("candidate.launch.ctas[0]"), "{m}");
    for (bad, needle) in [
        ("C=0:32", "1 ranges"),
        ("C=0-32,0:64", "NAME=LO:HI"),
        ("D=0:1,0:1", "no --tensor `D`"),
        ("A=0:1,0:1", "input"),
    ] {
        let m = e(SpecFlags {
            compares: vec![bad.into()],
            ..pair_flags()
        });
        assert!(m.contains(needle), "{bad}: {m}");
    }
    let m = e(SpecFlags {
        compares: vec!["C=0:1,0:1".into(), "C=0:2,0:2".into()],
        ..pair_flags()
    });
    assert!(m.contains("given twice"), "{m}");
    let m = e(SpecFlags {
        scalars: vec!["alpha:f32".into(), "n:u32".into()],
        ..pair_flags()
    });
    assert!(m.contains("integer scalars stay concrete"), "{m}");
    assert_eq!(
        parse_scalar_flag("beta:bf16").unwrap(),
        (
            "beta".to_owned(),
            ScalarValue::Symbolic { dtype: DType::Bf16 }
        )
    );
    assert!(
        parse_scalar_flag("beta:f8")
            .unwrap_err()
            .message
            .contains("unknown dtype")
    );
    assert_eq!(
        parse_compare_flag("C = 1:2, 3:4").unwrap(),
        ("C".to_owned(), vec![[1, 2], [3, 4]])
    );
}

#[test]
fn cluster_shape_is_checked_against_each_kernels_grid() {
    // Shared [launch] cluster, laid under both kernels.
    let spec =
        parse(&PAIR.replace("ctas = \"auto\"", "ctas = \"auto\"\ncluster = [2, 2]")).unwrap();
    let (r, c) = kernels(&spec);
    assert_eq!(r.launch.cluster, Some([2, 2, 1]));
    assert_eq!(c.launch.cluster, Some([2, 2, 1]));
    // A kernel's own cluster overrides the shared one.
    let spec = parse(&PAIR.replace("block = 64", "block = 64\ncluster = [4, 1, 1]")).unwrap();
    let (r, c) = kernels(&spec);
    assert_eq!(
        (r.launch.cluster, c.launch.cluster),
        (None, Some([4, 1, 1]))
    );
    // Not a divisor of the candidate's grid [4, 4, 1].
    err(
        "block = 64",
        "block = 64\ncluster = [3, 1, 1]",
        &[
            "`candidate.launch.cluster`",
            "dimension 0 does not divide the grid [4, 4, 1]",
        ],
    );
    let e = err(
        "ctas = \"auto\"",
        "ctas = \"auto\"\ncluster = [8, 4]",
        &["`launch.cluster`", "32 CTAs", "at most 16"],
    );
    assert!(e.location.is_some(), "a cluster error points into the spec");
    err(
        "ctas = \"auto\"",
        "ctas = \"auto\"\ncluster = [0, 1]",
        &["`launch.cluster`", "≥ 1"],
    );
}

#[test]
fn the_cluster_flag_is_the_shared_cluster_key() {
    let from_flags = CheckSpec::from_flags(&SpecFlags {
        cluster: Some("2x2".into()),
        ..pair_flags()
    })
    .unwrap();
    let toml = PAIR.replace("ctas = \"auto\"", "ctas = \"auto\"\ncluster = [2, 2]");
    assert_eq!(from_flags, parse(&toml).unwrap());
    let e = CheckSpec::from_flags(&SpecFlags {
        cluster: Some("3".into()),
        ..pair_flags()
    })
    .unwrap_err()
    .message;
    assert!(e.contains("does not divide the grid"), "{e}");
}
