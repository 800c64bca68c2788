//! Fuzz-style robustness: randomly mutated corpus kernels (lines deleted,
//! duplicated, swapped, numbers changed) bound to generic tensors must
//! never make the engine panic or hang — only produce findings.

use std::sync::Arc;

use ptxeq_exec::Role;
use ptxeq_exec::{CtaInput, Limits, ParamValue, TensorInfo};
use ptxeq_spec::DType;
use ptxeq_unroll::unroll;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    for _ in 0..1 + rng.below(3) {
        let n = lines.len();
        if n == 0 {
            break;
        }
        let i = rng.below(n);
        match rng.below(4) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(rng.below(n), l);
            }
            2 => lines.swap(i, rng.below(n)),
            _ => {
                // change the first number on the line
                let l = &lines[i];
                if let Some(p) = l.find(|c: char| c.is_ascii_digit()) {
                    let digits = ["0", "1", "7", "31", "32", "255", "4096", "-1", "1000000"];
                    let d = digits[rng.below(digits.len())];
                    let mut s = l.clone();
                    s.replace_range(p..=p, d);
                    lines[i] = s;
                }
            }
        }
    }
    lines.join("\n")
}

fn bind(k: &ptxeq_ir::KernelIr) -> CtaInput {
    let mut tensors = Vec::new();
    let mut params = Vec::new();
    for (_, p) in k.args() {
        if p.ty.bit_width() == 64 {
            let role = if tensors.len() % 2 == 0 {
                Role::Input
            } else {
                Role::InOut
            };
            params.push(ParamValue::Tensor {
                tensor: tensors.len() as u32,
            });
            tensors.push(TensorInfo {
                name: format!("t{}", tensors.len()),
                role,
                dtype: DType::F32,
                shape: vec![4096],
            });
        } else {
            params.push(ParamValue::Scalar { bits: 16 });
        }
    }
    CtaInput {
        kernel: Arc::new(k.clone()),
        funcs: Vec::new(),
        block: [64, 1, 1],
        grid: [2, 1, 1],
        dynamic_shared: 1024,
        cluster: None,
        params,
        tensors,
        symbols: Vec::new(),
        limits: Limits {
            max_steps: 200_000,
            ..Limits::default()
        },
        bindings: Default::default(),
    }
}

#[test]
fn mutated_kernels_never_panic() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    let files = [
        "races/missing-barrier-reverse/k.ptx",
        "reduction/common/reduce0.ptx",
        "warp-specialized/pc-single-buffer-stencil/ws.ptx",
        "triton/softmax-rows/softmax.ptx",
        "sgemm/smem-tiling-32/cand.ptx",
        "softmax/common/online.ptx",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let iterations = if cfg!(debug_assertions) { 40 } else { 300 };
    let mut runs = 0;
    for f in files {
        let Ok(text) = std::fs::read_to_string(root.join(f)) else {
            continue;
        };
        for _ in 0..iterations {
            let m = mutate(&text, &mut rng);
            let lowered = ptxeq_lower::lower_source(&m);
            for k in &lowered.module.kernels {
                let mut input = bind(k);
                input.funcs = lowered
                    .module
                    .funcs
                    .iter()
                    .map(|f| Arc::new(f.clone()))
                    .collect();
                let r = unroll(&input, [1, 0, 0]);
                assert!(r.stats.instructions_executed <= 200_000);
                runs += 1;
            }
        }
    }
    assert!(runs > 50, "only {runs} runs");
}
