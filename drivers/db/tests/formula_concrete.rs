//! The expected verdicts of `corpus/formula` against a second, independent
//! computation: every case expected `equivalent` runs its candidate in the
//! concrete domain on random inputs, and each written element must match
//! the formula evaluated in f64 at the same inputs (within f32 rounding of
//! the kernel's arithmetic). A formula case whose expectation is wrong, or
//! a formula instantiated at the wrong symbols, fails here even if the
//! symbolic check agrees with it.

use std::path::PathBuf;

use ptxeq_exec::{Concrete, OutputValue, run_cta};
use ptxeq_spec::{CheckSpec, Ctas, Status, Verdict};
use ptxeq_terms::Terms;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus/formula")
}

/// Deterministic inputs in [-1, 1) (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

fn ctas(launch: &ptxeq_spec::Launch) -> Vec<[u32; 3]> {
    let g = launch.grid;
    match &launch.ctas {
        Ctas::First => vec![[0, 0, 0]],
        Ctas::List(l) => l.clone(),
        Ctas::All | Ctas::Auto => (0..g[2])
            .flat_map(|z| (0..g[1]).flat_map(move |y| (0..g[0]).map(move |x| [x, y, z])))
            .collect(),
    }
}

#[test]
fn equivalent_formula_cases_agree_with_a_concrete_run() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("corpus/formula")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("check.toml").is_file())
        .collect();
    dirs.sort();
    let mut compared = 0;
    for dir in dirs {
        let spec = CheckSpec::load(&dir.join("check.toml")).expect("spec");
        let expect = spec.expect.as_ref().expect("[expect]");
        if expect.verdict != Verdict::Equivalent || expect.status == Status::Pending {
            continue;
        }
        let formula = spec.kernels.formula().expect("a formula reference");
        let kref = spec.kernels.iter()[0].1.clone();
        let text = std::fs::read_to_string(&kref.ptx).expect("ptx");
        let lowered = ptxeq_lower::lower_source(&text);
        let input = ptxeq_bind::cta_input(&spec, &kref, &lowered.module).expect("binds");
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        let mut data: Vec<Vec<f64>> = input
            .tensors
            .iter()
            .map(|t| (0..t.elements()).map(|_| rng.next()).collect())
            .collect();
        data.extend(input.symbols.iter().map(|_| vec![rng.next()]));

        let mut written: Vec<(u32, u64, f64)> = Vec::new();
        let mut skipped = false;
        for c in ctas(&kref.launch) {
            let (run, _) = run_cta(&input, c, Concrete::new(data.clone()));
            // The concrete domain has no bit-level view of reals (inlined
            // libm expansions): such a kernel is the symbolic check's.
            if let Some(f) = run.findings.first() {
                eprintln!("skipped {}: {}", dir.display(), f.message);
                skipped = true;
                break;
            }
            for o in &run.outputs {
                for (i, v) in &o.elements {
                    if let OutputValue::Data(x) = v {
                        written.push((o.tensor, *i, x.get()));
                    }
                }
            }
        }
        if skipped {
            continue;
        }
        assert!(!written.is_empty(), "{}: nothing written", dir.display());

        let ctx = ptxeq_db::formula_context(&spec, &input);
        let compiled = ptxeq_formula::compile(&formula.text, &ctx).expect("compiles");
        let mut terms = Terms::new();
        let mut roots = Vec::new();
        {
            let mut inst = compiled.instance(&mut terms);
            let outs = compiled.outputs();
            for &(t, i, _) in &written {
                let def = outs.iter().position(|&o| o == t).expect("defined");
                let shape = &input.tensors[t as usize].shape;
                let coords = ptxeq_verdicts::unflatten(i, shape);
                roots.push(inst.element(def, &coords).expect("instantiates"));
            }
        }
        let want = terms.eval_many_f64(&roots, &|t, i| data[t as usize][i as usize]);
        for ((t, i, got), w) in written.iter().zip(&want) {
            assert!(
                (got - w).abs() <= 1e-3 * (1.0 + w.abs()),
                "{}: tensor {t} element {i}: kernel {got}, formula {w}",
                dir.display()
            );
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} formula cases compared");
    eprintln!("{compared} formula cases agree concretely");
}
