//! The README's annotated `check.toml` ("The check spec") is the complete
//! spec format: it parses with `ptxeq-spec`, and it names every key the
//! spec accepts. The list of accepted keys is not written here: it is read
//! from the spec parser's own "unknown field … expected one of" errors, by
//! probing each table with a key that does not exist, so a key added to
//! the spec fails this test until the README documents it.

use std::collections::BTreeSet;
use std::path::Path;

use ptxeq_docs::workspace_root;
use ptxeq_spec::CheckSpec;

/// The first ```toml block of the README's "The check spec" section.
fn readme_example() -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once("\n## The check spec")
        .expect("README has a `## The check spec` section")
        .1;
    let section = section.split("\n## ").next().unwrap_or(section);
    let block = section
        .split_once("```toml\n")
        .expect("the section has a ```toml block")
        .1;
    block
        .split_once("\n```")
        .expect("the block is closed")
        .0
        .to_owned()
}

#[test]
fn the_readme_example_parses() {
    let text = readme_example();
    let spec = CheckSpec::from_toml_str(&text, Path::new("corpus/generality/x"))
        .unwrap_or_else(|e| panic!("the README's check.toml does not parse: {e}\n{text}"));
    // It is the spec it says it is: a pair, with a limits table and an
    // expected verdict (so those keys are live, not only commented).
    assert_eq!(spec.tensors.len(), 3, "{spec:?}");
    assert!(spec.expect.is_some());
}

/// The keys serde lists in an "unknown field `…`, expected one of `a`, `b`"
/// (or "expected `a`") error for a probe key in the given TOML position.
fn accepted_keys(probe_toml: &str) -> Vec<String> {
    let err = CheckSpec::from_toml_str(probe_toml, Path::new("."))
        .expect_err("a probe key is rejected")
        .to_string();
    let expected = err
        .split_once("expected")
        .unwrap_or_else(|| panic!("no key list in the error for\n{probe_toml}\n{err}"))
        .1;
    let keys: Vec<String> = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    assert!(!keys.is_empty(), "no keys in: {err}");
    keys
}

/// Is `key` named in the example as a key (`key =`, live or commented) or
/// a table (`[key]`, `[x.key]`)?
fn names_key(text: &str, key: &str) -> bool {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find(key) {
        let at = from + i;
        from = at + key.len();
        let before = at.checked_sub(1).map(|j| bytes[j]);
        let word_start = !matches!(before, Some(b) if b.is_ascii_alphanumeric() || b == b'_');
        let after = text[at + key.len()..].trim_start_matches(' ');
        let table = matches!(before, Some(b'[') | Some(b'.')) && after.starts_with(']');
        let assign = after.starts_with('=') && !after.starts_with("==");
        if word_start && (assign || table) {
            return true;
        }
    }
    false
}

#[test]
fn the_readme_example_names_every_key() {
    let text = readme_example();
    // Each probe puts an unknown key where one table of the format is.
    let probes = [
        ("top level", "zz_probe = 1\n"),
        ("[launch]", "[launch]\nzz_probe = 1\n"),
        ("a kernel", "[kernel]\nzz_probe = 1\n"),
        ("a tensor", "[tensors]\nx = { zz_probe = 1 }\n"),
        (
            "a tensor's values file",
            "[tensors]\nx = { role = \"input\", dtype = \"f32\", shape = [1], values = { zz_probe = 1 } }\n",
        ),
        ("a struct param", "[kernel]\nparams = [{ zz_probe = 1 }]\n"),
        (
            "a struct field",
            "[kernel]\nparams = [{ struct = [{ zz_probe = 1 }] }]\n",
        ),
        ("a global", "[globals]\ng = { zz_probe = 1 }\n"),
        ("a tensor map", "[tensor_maps]\ntm = { zz_probe = 1 }\n"),
        ("[limits]", "[limits]\nzz_probe = 1\n"),
        ("[expect]", "[expect]\nzz_probe = 1\n"),
    ];
    let mut all = BTreeSet::new();
    let mut missing = Vec::new();
    for (place, probe) in probes {
        for key in accepted_keys(probe) {
            if !names_key(&text, &key) {
                missing.push(format!("`{key}` ({place})"));
            }
            all.insert(key);
        }
    }
    assert!(
        all.len() > 25,
        "the probes found only {} keys: {all:?}",
        all.len()
    );
    assert!(
        missing.is_empty(),
        "the README's annotated check.toml does not name these keys the spec accepts: {}",
        missing.join(", ")
    );
}

#[test]
fn names_key_sees_keys_and_tables_only() {
    let text = "[reference.launch]\n# heavy = true\nnote = \"the grid\"\nverdict == x\n";
    assert!(names_key(text, "launch"));
    assert!(names_key(text, "heavy"));
    assert!(names_key(text, "note"));
    assert!(!names_key(text, "grid"));
    assert!(!names_key(text, "verdict"));
    assert!(!names_key(text, "ence"));
}
