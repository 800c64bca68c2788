//! Integer tensor data, instruction by instruction: a hand-written kernel
//! (`data/int_ops.ptx`) applies one integer (or integer↔float) operation
//! per output element to integer inputs; its output terms, evaluated
//! exactly, must equal the engine's concrete run (its own, independent
//! integer semantics, `ptxeq_exec::int`) at many random inputs — small
//! values, full-range values (wrapping) and boundary values.

use std::path::Path;

use ptxeq_exec::{Concrete, OutputValue, run_cta};
use ptxeq_spec::CheckSpec;
use ptxeq_terms::Terms;

const SPEC: &str = r#"
[launch]
block = [1, 1, 1]

[kernel]
ptx = "int_ops.ptx"
params = ["a", "b", "f", "o", "w", "r"]

[tensors]
a = { role = "input", dtype = "s32", shape = [3] }
b = { role = "input", dtype = "s8", shape = [4] }
f = { role = "input", dtype = "f32", shape = [1] }
o = { role = "output", dtype = "s32", shape = [43] }
w = { role = "output", dtype = "s64", shape = [5] }
r = { role = "output", dtype = "f32", shape = [3] }
"#;

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value of a `bits`-bit signed type: small, full range or extreme.
    fn int(&mut self, bits: u32) -> f64 {
        let half = 1i64 << (bits - 1);
        let r = self.next();
        let v = match r % 3 {
            0 => (r >> 8) as i64 % 9 - 4,
            1 => ((r >> 8) as i64).rem_euclid(2 * half) - half,
            _ => {
                if (r >> 8) & 1 == 0 {
                    half - 1 - ((r >> 9) % 2) as i64
                } else {
                    -half + ((r >> 9) % 2) as i64
                }
            }
        };
        v as f64
    }
}

#[test]
fn integer_ops_agree_with_the_concrete_engine() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let spec = CheckSpec::from_toml_str(SPEC, &dir).expect("spec");
    let (_, kref) = spec.kernels.iter()[0];
    let text = std::fs::read_to_string(dir.join("int_ops.ptx")).expect("ptx");
    let lowered = ptxeq_lower::lower_source(&text);
    let input = ptxeq_bind::cta_input(&spec, kref, &lowered.module).expect("input");
    let unrolled = ptxeq_unroll::unroll(&input, [0, 0, 0]);
    assert!(unrolled.findings.is_empty(), "{:?}", unrolled.findings);
    let state = ptxeq_symex::symbolic_state(&input, &unrolled);
    assert!(state.findings.is_empty(), "{:?}", state.findings);
    let mut terms = Terms::new();
    let symbolic = state.import_into(&mut terms);
    let total: usize = symbolic.iter().map(|(_, e)| e.len()).sum();
    assert_eq!(total, 43 + 5 + 3, "every output element is a term");

    let mut rng = Rng(0x5eed);
    for round in 0..400 {
        let a: Vec<f64> = (0..3).map(|_| rng.int(32)).collect();
        let b: Vec<f64> = (0..4).map(|_| rng.int(8)).collect();
        let f = vec![(rng.next() % 4001) as f64 / 250.0 - 8.0];
        // Tensors are numbered by name: a, b, f, o, r, w.
        let values = vec![a, b, f, vec![0.0; 43], vec![0.0; 3], vec![0.0; 5]];
        let (run, _) = run_cta(&input, [0, 0, 0], Concrete::new(values.clone()));
        assert!(run.findings.is_empty(), "{:?}", run.findings);
        let env = |t: u32, i: u64| values[t as usize][i as usize];
        for (out, (tensor, elems)) in run.outputs.iter().zip(&symbolic) {
            assert_eq!(out.tensor, *tensor);
            let bits = input.tensors[*tensor as usize].dtype.size_bytes() * 8;
            for (i, t) in elems {
                let want = match out.elements.iter().find(|e| e.0 == *i).map(|e| &e.1) {
                    Some(OutputValue::Bits(x)) => {
                        let m = if bits >= 64 {
                            *x
                        } else {
                            x & ((1u64 << bits) - 1)
                        };
                        m as f64
                    }
                    Some(OutputValue::Data(c)) => c.get(),
                    other => panic!("element {i}: {other:?}"),
                };
                let got = terms.eval_f64(*t, &env);
                assert!(
                    got == want || (got - want).abs() <= 1e-9 * want.abs(),
                    "round {round}, tensor {tensor}[{i}] = {}: terms give {got}, the engine {want} (inputs {:?})",
                    terms.display_limited(*t, 200),
                    &values[..3]
                );
            }
        }
    }
}
