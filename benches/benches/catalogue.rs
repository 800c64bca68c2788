//! The math-idiom template catalogue (issue 20): what a process pays
//! before its first recognition — building it from the template PTX
//! (`build`: no disk cache, or the first process of a build) or decoding
//! the copy an earlier process stored (`decode`: the bincode bytes the disk
//! cache holds under `idiom_catalogue`).
//!
//! `cargo bench -p ptxeq-benches --bench catalogue`.

use divan::Bencher;

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn build() -> usize {
    ptxeq_idioms::build_all().len()
}

#[divan::bench(sample_count = 20)]
fn decode(bencher: Bencher<'_, '_>) {
    let config = bincode::config::standard();
    let bytes =
        bincode::serde::encode_to_vec(ptxeq_idioms::catalogue::catalogue(), config).unwrap();
    bencher.bench(|| {
        let (v, _): (Vec<ptxeq_idioms::Template>, usize) =
            bincode::serde::decode_from_slice(&bytes, config).unwrap();
        v.len()
    });
}
