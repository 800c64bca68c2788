//! Rough parse throughput over files given on the command line, parsing each
//! file separately (as the salsa `parse` query does):
//! `cargo run --release -p ptxeq-syntax --example throughput -- FILES...`.

use std::time::Instant;

fn main() {
    let texts: Vec<String> = std::env::args()
        .skip(1)
        .map(|path| std::fs::read_to_string(&path).expect("readable file"))
        .collect();
    let total: usize = texts.iter().map(String::len).sum();
    if total == 0 {
        eprintln!("usage: throughput FILES...");
        return;
    }
    // Enough rounds for ~32 MB of input per measurement.
    let rounds = (32 << 20) / total + 1;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..rounds {
            for t in &texts {
                std::hint::black_box(ptxeq_syntax::parse(t));
            }
        }
        best = best.min(start.elapsed().as_secs_f64());
    }
    let mb = (total * rounds) as f64 / 1e6;
    println!(
        "{} files, {mb:.1} MB in {:.1} ms: {:.0} MB/s",
        texts.len(),
        best * 1e3,
        mb / best
    );
}
