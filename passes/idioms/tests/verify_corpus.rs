//! The IR verifier over the whole corpus: every function of every PTX
//! file in the repository (corpus cases, their common kernels, the idiom
//! templates' sources) verifies as lowered, and again after idiom
//! recognition (`ptxeq_ir::verify::verify_rewrite`), exactly as the
//! pipeline runs it (`drivers/db`, `recognised`). Reads of registers that
//! are undefined on some path are a warning class (see the verifier's
//! module doc); their count is printed, not asserted.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ptxeq_ir::verify::{verify, verify_rewrite};

fn ptx_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == "target" || n.starts_with('.'))
        })
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "ptx"))
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

#[test]
fn every_corpus_function_verifies_after_lowering_and_after_idioms() {
    let files = ptx_files();
    assert!(
        files.len() > 100,
        "the corpus is missing: {} files",
        files.len()
    );
    let (mut functions, mut instrs, mut idioms, mut warnings) = (0usize, 0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut spent = std::time::Duration::ZERO;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read");
        let lowered = ptxeq_lower::lower_source(&text).module;
        let all: Vec<_> = lowered.kernels.iter().chain(&lowered.funcs).collect();
        for f in all {
            if !f.has_body {
                continue;
            }
            functions += 1;
            instrs += f.instrs.len();
            let r = ptxeq_idioms::recognise_in(f, &lowered.funcs);
            idioms += r.found.len();
            let t = Instant::now();
            let before = verify(f);
            let after = verify_rewrite(f, &r.ir);
            spent += t.elapsed();
            warnings += before.undefined.len();
            for u in &before.undefined {
                eprintln!(
                    "warning: {} {}: instruction {} reads {} maybe undefined",
                    path.display(),
                    f.name,
                    u.instr,
                    f.regs[u.reg.index()].name
                );
            }
            for (stage, rep, ir) in [("lowering", &before, f), ("idioms", &after, &r.ir)] {
                for e in &rep.errors {
                    let at = e
                        .instr
                        .and_then(|i| ir.instrs.get(i as usize))
                        .map(|d| d.instr.mnemonic())
                        .unwrap_or_default();
                    failures.push(format!(
                        "{} {} after {stage}: instruction {:?} `{at}`: {}",
                        path.display(),
                        f.name,
                        e.instr,
                        e.message
                    ));
                }
            }
        }
    }
    eprintln!(
        "verified {functions} functions ({instrs} instructions, {idioms} idioms) of {} PTX files \
         twice in {:.1} ms; {warnings} maybe-undefined reads (warnings)",
        files.len(),
        spent.as_secs_f64() * 1e3
    );
    assert!(functions > 200, "{functions}");
    assert!(
        idioms > 0,
        "no idiom recognised: the after-idioms check saw nothing"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
