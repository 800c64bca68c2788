//! `[limits]`: defaults, overrides, and errors that name the key.

use std::path::Path;

use crate::*;

const PAIR: &str = r#"
[launch]
block = 32

[reference]
ptx = "r.ptx"
params = ["x"]

[candidate]
ptx = "c.ptx"
params = ["x"]

[tensors]
x = { role = "inout", dtype = "f32", shape = [32] }
"#;

fn parse(extra: &str) -> Result<CheckSpec, SpecError> {
    CheckSpec::from_toml_str(&format!("{PAIR}{extra}"), Path::new(""))
}

#[test]
fn defaults_without_a_limits_table() {
    let s = parse("").unwrap();
    assert_eq!(s.limits, RunLimits::default());
    assert_eq!(s.limits.max_steps, DEFAULT_MAX_STEPS);
    assert_eq!(s.limits.max_ctas, DEFAULT_MAX_CTAS);
}

#[test]
fn each_key_overrides_its_default_only() {
    let s = parse("[limits]\nmax_steps = 5000\n").unwrap();
    assert_eq!(s.limits.max_steps, 5000);
    assert_eq!(s.limits.max_ctas, DEFAULT_MAX_CTAS);
    let s = parse("[limits]\nmax_ctas = 3\nmax_steps = 7\n").unwrap();
    assert_eq!((s.limits.max_steps, s.limits.max_ctas), (7, 3));
}

#[test]
fn bad_values_and_unknown_keys_name_the_key_and_line() {
    for (text, needle) in [
        ("[limits]\nmax_steps = 0\n", "`limits.max_steps` is 0"),
        ("[limits]\nmax_ctas = -4\n", "`limits.max_ctas` is -4"),
        ("[limits]\nmax_step = 10\n", "max_step"),
        ("[limits]\nmax_ctas = \"many\"\n", "expected i64"),
    ] {
        let e = parse(text).expect_err(text);
        assert!(e.message.contains(needle), "{text:?}: {}", e.message);
        assert!(e.location.is_some(), "{text:?}: no line:col");
    }
}
