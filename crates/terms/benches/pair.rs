//! Comparing a pair's output terms (`cargo bench -p ptxeq-terms --bench
//! pair`): the two kernels' graphs of a 16×16 tile of K = 4096 dot
//! products (1M products each; the second kernel computes the elements
//! column by column, so its graph lists the same terms in another order),
//! either imported into one store (what the verdicts did
//! for every pair) or matched root by root on the graphs ([`SameTerms`],
//! what they do first now). Items are output elements (for
//! `build_and_export`, products; for `graph_bytes_round_trip`, nodes).

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use ptxeq_terms::{SameTerms, Sum, SumChains, TermGraph, Terms};

fn main() {
    divan::main();
}

const K: u64 = 4096;
const T: u64 = 16;

/// One kernel's output graph: `Σ_k a[i,k]·b[k,j]` for the tile, element
/// `(i, j)` at root `i·T + j` (row by row) or `j·T + i` (column by column).
fn kernel(by_columns: bool) -> TermGraph {
    let mut t = Terms::new();
    let mut chains = SumChains::new();
    let mut roots = Vec::new();
    for u in 0..T {
        for v in 0..T {
            let (i, j) = if by_columns { (v, u) } else { (u, v) };
            let mut acc = Sum::Term(t.int(0));
            for k in 0..K {
                let x = t.input(0, i * K + k);
                let w = t.input(1, k * T + j);
                let p = t.mul(x, w);
                acc = chains.add(&mut t, Sum::Term(p), acc);
            }
            roots.push(chains.force(&mut t, acc));
        }
    }
    t.into_graph(&roots)
}

/// Root of element `(i, j)` in the row-wise and the column-wise graph.
fn pairs() -> impl Iterator<Item = (usize, usize)> {
    (0..T as usize)
        .flat_map(|i| (0..T as usize).map(move |j| (i * T as usize + j, j * T as usize + i)))
}

#[divan::bench(sample_count = 5)]
fn import_both(b: Bencher<'_, '_>) {
    let (ga, gb) = (kernel(false), kernel(true));
    b.counter(ItemsCount::new(T * T)).bench_local(|| {
        let mut t = Terms::new();
        let ra = t.import(&ga);
        let rb = t.import(&gb);
        let same = pairs().filter(|&(p, q)| ra[p] == rb[q]).count();
        assert_eq!(same, (T * T) as usize);
        black_box(same)
    });
}

#[divan::bench(sample_count = 5)]
fn same_terms(b: Bencher<'_, '_>) {
    let (ga, gb) = (kernel(false), kernel(true));
    b.counter(ItemsCount::new(T * T)).bench_local(|| {
        let mut m = SameTerms::new(&ga);
        let (ra, rb) = (ga.roots(), gb.roots());
        let same = pairs()
            .filter(|&(p, q)| m.same(ra[p], &gb, 0, rb[q]))
            .count();
        assert_eq!(same, (T * T) as usize);
        black_box(same)
    });
}

/// Building one kernel's tile (1M products, the partial sums deferred) and
/// exporting it with [`Terms::into_graph`] (the store consumed): what a
/// symbolic replay of a GEMM tile does to its terms, minus the engine.
#[divan::bench(sample_count = 5)]
fn build_and_export(b: Bencher<'_, '_>) {
    b.counter(ItemsCount::new(T * T * K))
        .bench_local(|| black_box(kernel(false).len()));
}

/// Serializing and decoding one kernel's graph (the disk cache's
/// `symbolic` entry of a GEMM tile).
#[divan::bench(sample_count = 5)]
fn graph_bytes_round_trip(b: Bencher<'_, '_>) {
    let g = kernel(false);
    b.counter(ItemsCount::new(g.len() as u64)).bench_local(|| {
        let bytes = g.to_bytes();
        black_box(TermGraph::from_bytes(&bytes).map(|g| g.len()))
    });
}
