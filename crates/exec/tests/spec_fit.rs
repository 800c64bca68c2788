//! "The spec does not fit the kernel": each such error points at the spec
//! key it concerns (line:column), and suspicious values are refused rather
//! than wrapped — a scalar outside its param's range, a scalar bound to a
//! pointer param, a param count that differs, an entry that does not exist
//! (the error lists the entries that do).

use std::path::Path;

use ptxeq_spec::CheckSpec;

const PTX: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
    .visible .entry k(.param .u64 .ptr .global x, .param .s32 n, .param .u32 m)\n{\nret;\n}\n\
    .visible .entry other(.param .u64 x)\n{\nret;\n}\n";

fn bind(spec: &str) -> Result<ptxeq_exec::CtaInput, String> {
    let lowered = ptxeq_lower::lower_source(PTX);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    let spec = CheckSpec::from_toml_str(spec, Path::new("")).map_err(|e| e.to_string())?;
    let kref = spec.kernels.iter()[0].1.clone();
    // `cta_input` finds the kernel's role by identity: pass the spec's own.
    let kref = spec
        .kernels
        .iter()
        .into_iter()
        .find(|(_, k)| **k == kref)
        .unwrap()
        .1;
    ptxeq_bind::cta_input(&spec, kref, &lowered.module).map_err(|e| e.message)
}

/// A single-kernel spec: line 5 is `entry`, line 6 `params`, line 9 the
/// tensor `x`, line 12 `n`, line 13 `m`.
fn spec(entry: &str, params: &str, n: &str, m: &str) -> String {
    format!(
        "[launch]\nblock = 32\n\n[kernel]\nentry = \"{entry}\"\nparams = {params}\nptx = \"k.ptx\"\n\
         [tensors]\nx = {{ role = \"output\", dtype = \"f32\", shape = [32] }}\n\n\
         [scalars]\nn = {n}\nm = {m}\n"
    )
}

const OK_PARAMS: &str = r#"["x", "n", "m"]"#;

#[test]
fn values_in_range_bind() {
    bind(&spec("k", OK_PARAMS, "2147483647", "4294967295")).unwrap();
    bind(&spec("k", OK_PARAMS, "-2147483648", "0")).unwrap();
}

#[test]
fn a_scalar_outside_its_signed_param_is_refused_at_the_spec_line() {
    // 2147483648 in a .s32 is INT_MIN: the kernel would loop zero times.
    let e = bind(&spec("k", OK_PARAMS, "2147483648", "1")).unwrap_err();
    assert!(e.starts_with("12:5: "), "at `n = …`: {e}");
    assert!(
        e.contains("scalar `n` = 2147483648") && e.contains("does not fit a .s32 param"),
        "{e}"
    );
    assert!(e.contains("-2147483648 to 2147483647"), "{e}");
}

#[test]
fn a_negative_scalar_for_an_unsigned_param_is_refused() {
    let e = bind(&spec("k", OK_PARAMS, "1", "-1")).unwrap_err();
    assert!(e.starts_with("13:5: "), "at `m = …`: {e}");
    assert!(
        e.contains("does not fit a .u32 param (0 to 4294967295)"),
        "{e}"
    );
}

#[test]
fn a_param_count_that_differs_points_at_params() {
    let e = bind(&spec("other", OK_PARAMS, "1", "1")).unwrap_err();
    assert!(e.starts_with("6:10: "), "at `params = …`: {e}");
    assert!(
        e.contains("`other` has 1 params but the spec binds 3"),
        "{e}"
    );
}

#[test]
fn a_scalar_bound_to_a_pointer_points_at_that_param() {
    let e = bind(&spec("k", r#"["n", "n", "m"]"#, "1", "1").replace(
        "x = { role = \"output\", dtype = \"f32\", shape = [32] }",
        "",
    ))
    .unwrap_err();
    assert!(e.starts_with("6:11: "), "at the first entry of params: {e}");
    assert!(e.contains("is a pointer (.ptr) but `n` is a scalar"), "{e}");
}

#[test]
fn an_unknown_entry_lists_the_entries() {
    let e = bind(&spec("kk", OK_PARAMS, "1", "1")).unwrap_err();
    assert!(e.starts_with("5:9: "), "at `entry = …`: {e}");
    assert!(e.contains("no .entry `kk`"), "{e}");
    assert!(e.contains("its entries: `k`, `other`"), "{e}");
    // Without `entry`, in a file of several, the error lists them too.
    let e = bind(&spec("k", OK_PARAMS, "1", "1").replace("entry = \"k\"\n", "")).unwrap_err();
    assert!(e.contains("several entries (`k`, `other`)"), "{e}");
}
