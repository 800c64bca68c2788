//! The symbolic output terms of a kernel, evaluated at random inputs, equal
//! the kernel's concrete execution at those inputs (issue 4's concrete
//! mode check), over every corpus kernel the engine runs without findings.

use std::path::{Path, PathBuf};

use ptxeq_exec::{Concrete, Fmt, OutputValue, run_cta};
use ptxeq_spec::{CheckSpec, DType};
use ptxeq_terms::Terms;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus")
}

fn specs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![corpus()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "check.toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A small deterministic generator (no extra dependency): xorshift64*.
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        // Uniform in [-2, 2): bounded inputs keep exp() and products tame.
        ((v >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
    }

    /// An integer element of `dtype` (exact in `f64`): half the time small,
    /// half the time anywhere in the type's range (below 2^53), so sums
    /// wrap.
    fn next_int(&mut self, dtype: DType) -> f64 {
        let (bits, signed) = match dtype {
            DType::S8 => (8, true),
            DType::U8 | DType::Pred => (8, false),
            DType::S16 => (16, true),
            DType::U16 => (16, false),
            DType::S32 => (32, true),
            DType::U32 => (32, false),
            DType::S64 => (53, true),
            _ => (53, false),
        };
        let r = (self.next_f64() + 2.0) / 4.0; // [0, 1)
        let span = 2f64.powi(bits);
        let v = if self.next_f64() < 0.0 {
            (r * 17.0).floor() - 8.0
        } else {
            (r * span).floor() - if signed { span / 2.0 } else { 0.0 }
        };
        if signed { v } else { v.abs() }
    }
}

fn close(a: f64, b: f64) -> bool {
    // Both NaN: outside the function's domain in both (sqrt/log of a
    // negative input, corpus/math).
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= 1e-6 * (1.0 + a.abs().max(b.abs()))
}

/// What one kernel's comparison found.
enum Checked {
    /// Not compared: the unrolling reported a finding.
    Skipped,
    /// Compared: this many output elements agree.
    Agree(u64),
    Problems(Vec<String>),
}

/// Compares the symbolic output terms of CTA 0 of `input` with its
/// concrete run at random inputs drawn from `seed`.
fn compare(label: &str, input: &ptxeq_exec::CtaInput, seed: u64) -> Checked {
    let mut checked_elements = 0u64;
    let mut problems = Vec::new();
    let cta = [0, 0, 0];
    let unrolled = ptxeq_unroll::unroll(input, cta);
    if !unrolled.findings.is_empty() {
        return Checked::Skipped;
    }
    let state = ptxeq_symex::symbolic_state(input, &unrolled);
    if !state.findings.is_empty() {
        return Checked::Problems(vec![format!(
            "{label}: replay findings {:?}",
            state.findings
        )]);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
    // Every input number: the tensors, then one value per symbolic
    // scalar.
    let mut values: Vec<Vec<f64>> = input
        .tensors
        .iter()
        .map(|t| {
            (0..t.elements())
                .map(|_| {
                    if let Some(n) = Fmt::of_dtype(t.dtype).and_then(Fmt::narrow) {
                        // An fp8 element can only hold a value of its
                        // format: draw on that grid (the terms read
                        // the input as that real).
                        let x = rng.next_f64();
                        n.encode_rn_satfinite(x).map_or(x, |b| n.to_f64(b))
                    } else if t.dtype.is_float() {
                        rng.next_f64()
                    } else {
                        rng.next_int(t.dtype)
                    }
                })
                .collect()
        })
        .collect();
    for _ in &input.symbols {
        values.push(vec![rng.next_f64()]);
    }
    let (run, _) = run_cta(input, cta, Concrete::new(values.clone()));
    let mut terms = Terms::new();
    let symbolic = state.import_into(&mut terms);
    let env = |t: u32, i: u64| values[t as usize][i as usize];
    for (out, (tensor, elems)) in run.outputs.iter().zip(&symbolic) {
        assert_eq!(out.tensor, *tensor);
        // Integer tensors: the concrete run's bits against the
        // integer term's exact value (its bits, unsigned).
        let bits = input.tensors[*tensor as usize].dtype.size_bytes() * 8;
        let concrete: std::collections::HashMap<u64, f64> = out
            .elements
            .iter()
            .filter_map(|(i, v)| match v {
                OutputValue::Data(c) => Some((*i, c.get())),
                OutputValue::Bits(b) if elems.iter().any(|e| e.0 == *i) => {
                    let m = if bits >= 64 {
                        *b
                    } else {
                        b & ((1u64 << bits) - 1)
                    };
                    Some((*i, m as f64))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            concrete.len(),
            elems.len(),
            "{label}: written elements differ"
        );
        for (i, t) in elems {
            let sym = terms.eval_f64(*t, &env);
            let conc = concrete[i];
            checked_elements += 1;
            if !close(sym, conc) {
                problems.push(format!(
                    "{label}: tensor {tensor}[{i}]: terms give {sym}, concrete run {conc}"
                ));
            }
        }
    }
    if problems.is_empty() {
        Checked::Agree(checked_elements)
    } else {
        Checked::Problems(problems)
    }
}

#[test]
fn output_terms_evaluate_to_the_concrete_run() {
    use rayon::prelude::*;
    // Every kernel of every case, bound as its spec launches it. Many
    // cases share a kernel and a launch (a bug variant reuses the
    // reference): an input seen before is compared once.
    let jobs: Vec<(String, ptxeq_exec::CtaInput)> = specs()
        .par_iter()
        .flat_map_iter(|spec_path| {
            let Ok(spec) = CheckSpec::load(spec_path) else {
                return Vec::new();
            };
            // Full-size cases (dense random data for tens of millions of
            // elements, minutes per run) are the corpus test's, on request.
            if spec.expect.as_ref().is_some_and(|e| e.heavy) {
                return Vec::new();
            }
            let mut out = Vec::new();
            for (_, kref) in spec.kernels.iter() {
                let Ok(text) = std::fs::read_to_string(&kref.ptx) else {
                    continue;
                };
                let lowered = ptxeq_lower::lower_source(&text);
                let Ok(input) = ptxeq_bind::cta_input(&spec, kref, &lowered.module) else {
                    continue;
                };
                if input.threads() * 20_000 > 50_000_000 {
                    continue; // keep the test fast; release benches cover the big ones
                }
                let label = format!("{} {}", spec_path.display(), kref.ptx.display());
                out.push((label, input));
            }
            out
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&(String, ptxeq_exec::CtaInput)> = jobs
        .iter()
        .filter(|(_, input)| seen.insert(input))
        .collect();
    let results: Vec<Checked> = unique
        .par_iter()
        .enumerate()
        .map(|(n, (label, input))| compare(label, input, n as u64))
        .collect();
    let mut checked_kernels = 0;
    let mut checked_elements = 0u64;
    let mut problems = Vec::new();
    for r in results {
        match r {
            Checked::Skipped => {}
            Checked::Agree(n) => {
                checked_kernels += 1;
                checked_elements += n;
            }
            Checked::Problems(p) => {
                checked_kernels += 1;
                problems.extend(p);
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        checked_kernels >= 40,
        "only {checked_kernels} kernels checked"
    );
    eprintln!(
        "{checked_kernels} distinct kernel launches ({} bound), {checked_elements} output elements agree",
        jobs.len()
    );
}
