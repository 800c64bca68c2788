//! Term construction throughput (`cargo bench -p ptxeq-terms`).
//!
//! Target (issue 4): ≥ 5M add/mul constructions per second per core for
//! small operands. Each benchmark reports items/s via divan's counter.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use ptxeq_terms::{Sum, SumChains, TermId, Terms};

fn main() {
    divan::main();
}

const N: u64 = 100_000;

fn inputs(t: &mut Terms, tensor: u32, n: u64) -> Vec<TermId> {
    (0..n).map(|i| t.input(tensor, i)).collect()
}

/// `x[i] + y[i]`: every construction interns a new binary node.
#[divan::bench]
fn add_new_binary(b: Bencher<'_, '_>) {
    b.counter(ItemsCount::new(N))
        .with_inputs(|| {
            let mut t = Terms::new();
            let x = inputs(&mut t, 0, N);
            let y = inputs(&mut t, 1, N);
            (t, x, y)
        })
        .bench_local_values(|(mut t, x, y)| {
            for i in 0..N as usize {
                black_box(t.add(x[i], y[i]));
            }
            t
        });
}

/// `x[i] · y[i]`: new binary products.
#[divan::bench]
fn mul_new_binary(b: Bencher<'_, '_>) {
    b.counter(ItemsCount::new(N))
        .with_inputs(|| {
            let mut t = Terms::new();
            let x = inputs(&mut t, 0, N);
            let y = inputs(&mut t, 1, N);
            (t, x, y)
        })
        .bench_local_values(|(mut t, x, y)| {
            for i in 0..N as usize {
                black_box(t.mul(x[i], y[i]));
            }
            t
        });
}

/// `x[i] + y[i]` again: every construction hits an existing node (the
/// reference and candidate kernels computing the same sub-terms).
#[divan::bench]
fn add_existing(b: Bencher<'_, '_>) {
    let mut t = Terms::new();
    let x = inputs(&mut t, 0, N);
    let y = inputs(&mut t, 1, N);
    for i in 0..N as usize {
        t.add(x[i], y[i]);
    }
    b.counter(ItemsCount::new(N)).bench_local(|| {
        for i in 0..N as usize {
            black_box(t.add(x[i], y[i]));
        }
    });
}

/// `x[i]·c + y[i]` with a float constant: mul + add per item (counted
/// as two constructions).
#[divan::bench]
fn scale_and_add(b: Bencher<'_, '_>) {
    b.counter(ItemsCount::new(2 * N))
        .with_inputs(|| {
            let mut t = Terms::new();
            let x = inputs(&mut t, 0, N);
            let y = inputs(&mut t, 1, N);
            let c = t.from_f32_bits(0x3FB8_AA3B).unwrap(); // log2(e) as f32
            (t, x, y, c)
        })
        .bench_local_values(|(mut t, x, y, c)| {
            for i in 0..N as usize {
                let p = t.mul(x[i], c);
                black_box(t.add(p, y[i]));
            }
            t
        });
}

/// A sequential accumulation `acc = acc + x[i]` (flattening up to the
/// limit, then nesting).
#[divan::bench]
fn sum_chain(b: Bencher<'_, '_>) {
    b.counter(ItemsCount::new(N))
        .with_inputs(|| {
            let mut t = Terms::new();
            let x = inputs(&mut t, 0, N);
            (t, x)
        })
        .bench_local_values(|(mut t, x)| {
            let mut acc = x[0];
            for &xi in &x[1..] {
                acc = t.add(acc, xi);
            }
            black_box(acc);
            t
        });
}

/// A dot product `acc = fma(a[k], b[k], acc)` over K = 256 for 64 output
/// elements: a GEMM inner loop (two constructions per fma).
#[divan::bench]
fn gemm_fma_chains(b: Bencher<'_, '_>) {
    const K: u64 = 256;
    const OUT: u64 = 64;
    b.counter(ItemsCount::new(2 * K * OUT))
        .with_inputs(|| {
            let mut t = Terms::new();
            let a = inputs(&mut t, 0, K * OUT);
            let bb = inputs(&mut t, 1, K * OUT);
            (t, a, bb)
        })
        .bench_local_values(|(mut t, a, bb)| {
            for o in 0..OUT as usize {
                let mut acc = t.int(0);
                for k in 0..K as usize {
                    acc = t.fma(a[o * K as usize + k], bb[k * OUT as usize + o], acc);
                }
                black_box(acc);
            }
            t
        });
}

/// A 16×16 output tile of a full-depth SGEMM (K = 4096): 256 dot products
/// `acc = fma(A[i,k], B[k,j], acc)`, two constructions per fma. Unlike
/// `gemm_fma_chains` the store outgrows the caches (≈ 2M nodes, each
/// partial sum a new node): this measures interning where every probe of
/// the table is a cache miss — the regime of a full-size GEMM check.
#[divan::bench(sample_count = 5)]
fn gemm_tile_k4096(b: Bencher<'_, '_>) {
    const K: usize = 4096;
    const T: usize = 16;
    b.counter(ItemsCount::new((2 * K * T * T) as u64))
        .with_inputs(|| {
            let mut t = Terms::new();
            let a = inputs(&mut t, 0, (T * K) as u64);
            let bb = inputs(&mut t, 1, (K * T) as u64);
            (t, a, bb)
        })
        .bench_local_values(|(mut t, a, bb)| {
            for i in 0..T {
                for j in 0..T {
                    let mut acc = t.int(0);
                    for k in 0..K {
                        acc = t.fma(a[i * K + k], bb[k * T + j], acc);
                    }
                    black_box(acc);
                }
            }
            t
        });
}

/// `gemm_tile_k4096` with the partial sums deferred ([`SumChains`], as the
/// symbolic replay builds them): only the products and one sum per
/// `FLATTEN_LIMIT` addends become nodes, each output forced at the end.
#[divan::bench(sample_count = 5)]
fn gemm_tile_k4096_chains(b: Bencher<'_, '_>) {
    const K: usize = 4096;
    const T: usize = 16;
    b.counter(ItemsCount::new((2 * K * T * T) as u64))
        .with_inputs(|| {
            let mut t = Terms::new();
            let a = inputs(&mut t, 0, (T * K) as u64);
            let bb = inputs(&mut t, 1, (K * T) as u64);
            (t, a, bb)
        })
        .bench_local_values(|(mut t, a, bb)| {
            let mut chains = SumChains::new();
            for i in 0..T {
                for j in 0..T {
                    let mut acc = Sum::Term(t.int(0));
                    for k in 0..K {
                        let p = t.mul(a[i * K + k], bb[k * T + j]);
                        acc = chains.add(&mut t, Sum::Term(p), acc);
                    }
                    black_box(chains.force(&mut t, acc));
                }
            }
            t
        });
}

/// Evaluation of a 100k-term sum chain.
#[divan::bench]
fn eval_chain(b: Bencher<'_, '_>) {
    let mut t = Terms::new();
    let x = inputs(&mut t, 0, N);
    let mut acc = x[0];
    for &xi in &x[1..] {
        acc = t.add(acc, xi);
    }
    b.counter(ItemsCount::new(N))
        .bench_local(|| black_box(t.eval_f64(acc, &|_, i| i as f64)));
}
