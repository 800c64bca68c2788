//! Helpers shared by the benchmarks in `benches/benches/`: locating the
//! corpus and loading its PTX files.

use std::path::{Path, PathBuf};

/// The repository root (this crate lives in `<root>/benches`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.ptx` file under `corpus/`, sorted, with its text.
pub fn corpus_ptx() -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![repo_root().join("corpus")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx")
                && let Ok(text) = std::fs::read_to_string(&p)
            {
                out.push((p, text));
            }
        }
    }
    out.sort();
    out
}

/// The bound kernels of a corpus case (`family/case`), in spec order
/// (reference, candidate or the single kernel).
pub fn case_inputs(case: &str) -> Vec<ptxeq_exec::CtaInput> {
    let path = repo_root().join("corpus").join(case).join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("corpus spec loads");
    spec.kernels
        .iter()
        .into_iter()
        .map(|(_, kref)| {
            let text = std::fs::read_to_string(&kref.ptx).expect("corpus PTX reads");
            let module = ptxeq_lower::lower_source(&text).module;
            ptxeq_bind::cta_input(&spec, kref, &module).expect("spec fits kernel")
        })
        .collect()
}
