//! The cluster shape of a launch: the spec's `launch.cluster` and the
//! entry's `.reqnctapercluster` / `.explicitcluster` bound together, each
//! error pointing at the spec key.

use std::path::Path;

use ptxeq_spec::CheckSpec;

fn ptx(directives: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 x)\n{directives}\n{{\nret;\n}}\n"
    )
}

/// Line 4 is `cluster` when `launch_cluster` is given.
fn bind(directives: &str, launch_cluster: Option<&str>) -> Result<ptxeq_exec::CtaInput, String> {
    let lowered = ptxeq_lower::lower_source(&ptx(directives));
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    let cluster = launch_cluster.map_or(String::new(), |c| format!("cluster = {c}\n"));
    let text = format!(
        "[launch]\nblock = 32\ngrid = [4, 2]\n{cluster}\n[kernel]\nptx = \"k.ptx\"\nparams = [\"x\"]\n\n\
         [tensors]\nx = {{ role = \"output\", dtype = \"f32\", shape = [32] }}\n"
    );
    let spec = CheckSpec::from_toml_str(&text, Path::new("")).map_err(|e| e.to_string())?;
    let kref = spec.kernels.iter()[0].1;
    ptxeq_bind::cta_input(&spec, kref, &lowered.module).map_err(|e| e.message)
}

#[test]
fn the_shape_comes_from_the_spec_or_the_ptx() {
    assert_eq!(bind("", None).unwrap().cluster, None);
    assert_eq!(bind("", Some("[2, 2]")).unwrap().cluster, Some([2, 2, 1]));
    let both = ".explicitcluster\n.reqnctapercluster 2, 1, 1";
    assert_eq!(bind(both, None).unwrap().cluster, Some([2, 1, 1]));
    assert_eq!(
        bind(both, Some("[2, 1, 1]")).unwrap().cluster,
        Some([2, 1, 1])
    );
}

#[test]
fn disagreements_are_spec_errors_at_the_key() {
    let e = bind(".reqnctapercluster 2, 1, 1", Some("[4, 1, 1]")).unwrap_err();
    assert!(e.starts_with("4:11: "), "at `cluster = …`: {e}");
    assert!(
        e.contains("differs from `k`'s .reqnctapercluster [2, 1, 1]"),
        "{e}"
    );
    let e = bind(".explicitcluster", None).unwrap_err();
    assert!(
        e.contains(".explicitcluster") && e.contains("launch.cluster"),
        "{e}"
    );
    // A PTX shape that does not divide the grid [4, 2, 1].
    let e = bind(".reqnctapercluster 4, 2, 4", None).unwrap_err();
    assert!(e.contains("more than 16 CTAs"), "{e}");
    let e = bind(".reqnctapercluster 3, 1, 1", None).unwrap_err();
    assert!(e.contains("does not divide the grid"), "{e}");
}
