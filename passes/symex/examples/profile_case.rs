//! Profiling aid: `cargo run --release -p ptxeq-symex --example profile_case
//! -- <family/case> [repeat]` runs `unroll` and `symbolic_state` on a corpus
//! case and prints the times.

use std::path::Path;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let case = args.next().unwrap_or_else(|| "sgemm/warptiling-64".into());
    let repeat: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("corpus").join(&case).join("check.toml");
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("corpus spec loads");
    let inputs: Vec<_> = spec
        .kernels
        .iter()
        .into_iter()
        .map(|(_, kref)| {
            let text = std::fs::read_to_string(&kref.ptx).expect("corpus PTX reads");
            let module = ptxeq_lower::lower_source(&text).module;
            ptxeq_bind::cta_input(&spec, kref, &module).expect("spec fits kernel")
        })
        .collect();
    for _ in 0..repeat {
        let t = Instant::now();
        let unrolled: Vec<_> = inputs
            .iter()
            .map(|i| ptxeq_unroll::unroll(i, [0, 0, 0]))
            .collect();
        let tu = t.elapsed();
        let t = Instant::now();
        let mut nodes = 0;
        for (i, u) in inputs.iter().zip(&unrolled) {
            let s = ptxeq_symex::symbolic_state(i, u);
            nodes += s.graph.len();
        }
        let ts = t.elapsed();
        println!("{case}: unroll {tu:?}, symbolic_state {ts:?} ({nodes} exported nodes)");
    }
}
