//! Snapshots of the `ptxeq ir` text dump for two small real kernels
//! (nvcc 13 output, copied into tests/data so the snapshots do not move
//! when other test data is regenerated).

fn dump(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("test data");
    let res = ptxeq_lower::lower_source(&text);
    assert!(res.diagnostics.is_empty(), "{:?}", res.diagnostics);
    res.module.to_string()
}

#[test]
fn vector_add_dump() {
    insta::assert_snapshot!(dump("vector_add.ptx"));
}

#[test]
fn hopper_dump() {
    insta::assert_snapshot!(dump("hopper_sm90a.ptx"));
}
