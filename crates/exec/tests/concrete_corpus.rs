//! The concrete domain on corpus kernels with random inputs against plain
//! Rust computations of the same functions (and, for every equivalent
//! pair that runs concretely, reference against candidate).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ptxeq_exec::{Concrete, OutputValue, run_cta, run_grid};
use ptxeq_spec::{CheckSpec, Ctas, Verdict};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

/// A small deterministic generator (xorshift) for reproducible inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Random values for every input number: the tensors' elements, then one
/// value per symbolic scalar (numbered after the tensors).
fn inputs(spec: &CheckSpec, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng(seed | 1);
    let mut data: Vec<Vec<f64>> = spec
        .tensors
        .values()
        .map(|t| (0..t.elements().unwrap_or(0)).map(|_| rng.next()).collect())
        .collect();
    for v in spec.scalars.values() {
        if v.symbolic().is_some() {
            data.push(vec![rng.next()]);
        }
    }
    data
}

/// A kernel's CTAs under its own launch (`auto`: every CTA, which covers
/// any selection).
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

/// Runs one kernel of a spec on `data`; the written output elements
/// `(tensor, index) → value`, or `None` when the run stopped.
fn run_kernel(
    spec: &CheckSpec,
    role: &str,
    data: &[Vec<f64>],
    max_steps: Option<u64>,
) -> Option<BTreeMap<(u32, u64), f64>> {
    let kref = spec
        .kernels
        .iter()
        .into_iter()
        .find(|(r, _)| *r == role)?
        .1
        .clone();
    let text = std::fs::read_to_string(&kref.ptx).ok()?;
    let lowered = ptxeq_lower::lower_source(&text);
    let mut input = ptxeq_bind::cta_input(spec, &kref, &lowered.module).ok()?;
    // A step-limit finding skips the case.
    if let Some(m) = max_steps {
        input.limits.max_steps = m;
    }
    let mut out = BTreeMap::new();
    // The CTAs of a multi-CTA cluster run co-scheduled, over one memory
    // (their updates of one element, as bulk reductions make, combine).
    if input.cluster.is_some_and(|c| c.iter().product::<u32>() > 1) {
        let (g, _) = run_grid(&input, &ctas(&kref.launch), Concrete::new(data.to_vec()));
        let found: Vec<_> = g
            .runs
            .iter()
            .flat_map(|r| &r.findings)
            .chain(&g.cross)
            .collect();
        if let Some(f) = found.first() {
            eprintln!(
                "skipped {role} of {:?}: {}",
                spec.kernels.iter()[0].1.ptx,
                f.message
            );
            return None;
        }
        for o in &g.outputs {
            for (i, v) in &o.elements {
                if let OutputValue::Data(x) = v {
                    out.insert((o.tensor, *i), x.get());
                }
            }
        }
        return Some(out);
    }
    for c in ctas(&kref.launch) {
        let (run, _) = run_cta(&input, c, Concrete::new(data.to_vec()));
        // Anything reported (unsupported constructs, or specs the kernel
        // does not fit, like a missing dynamic shared size) skips the case.
        if !run.findings.is_empty() {
            eprintln!(
                "skipped {role} of {:?}: {}",
                spec.kernels.iter()[0].1.ptx,
                run.findings[0].message
            );
            return None;
        }
        for o in &run.outputs {
            for (i, v) in &o.elements {
                if let OutputValue::Data(x) = v {
                    out.insert((o.tensor, *i), x.get());
                }
            }
        }
    }
    Some(out)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

fn load(rel: &str) -> CheckSpec {
    CheckSpec::load(&corpus().join(rel).join("check.toml")).expect("spec")
}

fn scalar(spec: &CheckSpec, name: &str) -> f64 {
    match spec.scalars[name] {
        ptxeq_spec::ScalarValue::Int(i) => i as f64,
        ptxeq_spec::ScalarValue::Float(f) => f64::from(f.get() as f32),
        ptxeq_spec::ScalarValue::Symbolic { .. } => panic!("scalar `{name}` is symbolic"),
    }
}

#[test]
fn sgemm_kernels_compute_alpha_ab_plus_beta_c() {
    for case in [
        "sgemm/smem-tiling-32",
        "sgemm/blocktiling-1d-32",
        "sgemm/vectorize-32",
        "sgemm/coalesce-64-grid2x2",
    ] {
        let spec = load(case);
        let data = inputs(&spec, 7);
        let (m, n, k) = (
            scalar(&spec, "M") as usize,
            scalar(&spec, "N") as usize,
            scalar(&spec, "K") as usize,
        );
        let (alpha, beta) = (scalar(&spec, "alpha"), scalar(&spec, "beta"));
        // tensors by name: A = 0, B = 1, C = 2
        let (a, b, c) = (&data[0], &data[1], &data[2]);
        for role in ["reference", "candidate"] {
            let out = run_kernel(&spec, role, &data, None)
                .unwrap_or_else(|| panic!("{case} {role} did not run"));
            assert!(!out.is_empty());
            for (&(t, idx), &v) in &out {
                assert_eq!(t, 2);
                let (row, col) = (idx as usize / n, idx as usize % n);
                let dot: f64 = (0..k).map(|i| a[row * k + i] * b[i * n + col]).sum();
                let want = alpha * dot + beta * c[idx as usize];
                assert!(
                    close(v, want),
                    "{case} {role} C[{row}][{col}] = {v}, want {want}"
                );
            }
            if spec.launch.ctas == Ctas::All || spec.launch.grid == [1, 1, 1] {
                assert_eq!(out.len(), m * n, "{case} {role}: every element written");
            }
        }
    }
}

#[test]
fn block_reduction_sums_its_input() {
    let spec = load("reduction/single-reduce0-race-free");
    let data = inputs(&spec, 11);
    let out = run_kernel(&spec, "kernel", &data, None).expect("runs");
    let want: f64 = data[0].iter().sum();
    assert!(close(out[&(1, 0)], want), "{} vs {want}", out[&(1, 0)]);
}

#[test]
fn vector_add_adds() {
    let spec = load("triton/vector-add-masked");
    let data = inputs(&spec, 3);
    for role in ["reference", "candidate"] {
        let out = run_kernel(&spec, role, &data, None).expect("runs");
        // tensors: out = 0, x = 1, y = 2
        assert_eq!(out.len(), 4000);
        for (&(_, i), &v) in &out {
            assert!(
                close(v, data[1][i as usize] + data[2][i as usize]),
                "{role} out[{i}]"
            );
        }
    }
}

/// Every equivalent pair that both kernels can run concretely computes
/// the same outputs on random inputs (only the f64 rounding of different
/// association orders differs).
#[test]
fn equivalent_pairs_agree_concretely() {
    let mut compared = 0;
    let mut cases: Vec<PathBuf> = walk(&corpus());
    cases.sort();
    for p in cases {
        let Ok(spec) = CheckSpec::load(&p) else {
            continue;
        };
        if spec.expect.as_ref().map(|e| e.verdict) != Some(Verdict::Equivalent) {
            continue;
        }
        // Full-size cases (dense random data for tens of millions of
        // elements, minutes per run) are the corpus test's, on request.
        if spec.expect.as_ref().is_some_and(|e| e.heavy) {
            continue;
        }
        let data = inputs(&spec, 5);
        // Debug builds skip the largest kernels.
        let limit = cfg!(debug_assertions).then_some(400_000);
        let (Some(r), Some(c)) = (
            run_kernel(&spec, "reference", &data, limit),
            run_kernel(&spec, "candidate", &data, limit),
        ) else {
            continue;
        };
        assert_eq!(
            r.keys().collect::<Vec<_>>(),
            c.keys().collect::<Vec<_>>(),
            "{}: written elements differ",
            p.display()
        );
        for (k, v) in &r {
            let w = c[k];
            // Both NaN: a function outside its domain in both (sqrt or
            // log of a negative input, corpus/math).
            assert!(
                (v.is_nan() && w.is_nan()) || (v - w).abs() <= 1e-6 * (1.0 + v.abs().max(w.abs())),
                "{}: element {k:?}: {v} vs {w}",
                p.display()
            );
        }
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} pairs ran concretely");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.file_name().is_some_and(|n| n == "check.toml") {
            out.push(p);
        }
    }
    out
}
