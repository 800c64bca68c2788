//! Runs `unroll` on every kernel of a check spec and prints the findings
//! and the engine's speed (thread-instructions per second).
//!
//! `cargo run --release -p ptxeq-unroll --example measure -- corpus/attention/fa2-q16-kv512/check.toml [--repeat N]`

use std::time::Instant;

use ptxeq_spec::CheckSpec;
use ptxeq_unroll::{select_ctas, unroll_ctas};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: measure SPEC.toml [--repeat N]");
        std::process::exit(2);
    };
    let repeat: usize = args
        .iter()
        .position(|a| a == "--repeat")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let spec = match CheckSpec::load(std::path::Path::new(path)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(3);
        }
    };
    for (role, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx).unwrap_or_default();
        let lowered = ptxeq_lower::lower_source(&text);
        let input = match ptxeq_bind::cta_input(&spec, kref, &lowered.module) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("{role}: {e}");
                continue;
            }
        };
        let ctas = select_ctas(&spec.launch.ctas, input.grid);
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..repeat.max(1) {
            let start = Instant::now();
            let r = unroll_ctas(&input, &ctas);
            best = best.min(start.elapsed().as_secs_f64());
            last = Some(r);
        }
        let Some((runs, cross)) = last else { continue };
        let instrs: u64 = runs.iter().map(|r| r.stats.instructions_executed).sum();
        let barriers: u64 = runs.iter().map(|r| r.stats.barriers_completed).sum();
        println!(
            "{role} `{}`: {} CTA(s) x {} threads, {instrs} thread-instructions, {barriers} barriers, {:.3} s, {:.1} M thread-instr/s",
            input.kernel.name,
            runs.len(),
            input.threads(),
            best,
            instrs as f64 / best / 1e6
        );
        for r in &runs {
            for f in &r.findings {
                println!("  cta {:?} {:?}: {}", r.cta, f.kind, f.message);
            }
            if r.dropped_findings > 0 {
                println!(
                    "  cta {:?}: {} more findings dropped",
                    r.cta, r.dropped_findings
                );
            }
        }
        for f in &cross {
            println!("  cross-CTA {:?}: {}", f.kind, f.message);
        }
    }
}
