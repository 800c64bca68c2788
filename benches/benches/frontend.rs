//! Front-end throughput: parse (and parse + lower) every corpus PTX file.
//!
//! Goal (issue 2): ≥ 50 MB/s for parse + lower in release. Run with
//! `cargo bench -p ptxeq-benches --bench frontend`; divan reports bytes/s.

use divan::Bencher;
use divan::counter::BytesCount;

fn main() {
    divan::main();
}

fn corpus_text() -> Vec<String> {
    ptxeq_benches::corpus_ptx()
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

#[divan::bench(sample_count = 20)]
fn parse_corpus(bencher: Bencher<'_, '_>) {
    let texts = corpus_text();
    let bytes: usize = texts.iter().map(String::len).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for t in &texts {
            divan::black_box(ptxeq_syntax::parse(t));
        }
    });
}

#[divan::bench(sample_count = 20)]
fn parse_and_lower_corpus(bencher: Bencher<'_, '_>) {
    let texts = corpus_text();
    let bytes: usize = texts.iter().map(String::len).sum();
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        for t in &texts {
            let parse = ptxeq_syntax::parse(t);
            divan::black_box(ptxeq_lower::lower_module(&parse));
        }
    });
}
