//! Decision time per output element (`cargo bench -p ptxeq-terms --bench
//! decide`) for the three VC shapes of the corpus (issue 5):
//!
//! - GEMM: `Σ_k a_ik·b_kj` over 64 products, sequential against a tiled
//!   (4 × 16, tree-combined) sum; 256 elements, one normaliser.
//! - softmax: naive (tree-reduced max and sum) against online (running max
//!   and rescaled sum per thread, tree-combined), N = 128, every element.
//! - attention: `softmax(q·Kᵀ)·V` for one query row over
//!   64..512 keys, naive against flash-style online (blocks of 64 keys,
//!   rescaled accumulators); every element of the output row (head dim
//!   64, so the scores are 64-term dot products summed differently).
//!
//! Each iteration starts from a fresh `Normalizer` (cold memo), so the
//! numbers include normalising the shared sub-terms once per batch.

use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use ptxeq_decide::decide::{DecideOptions, ElementDecision, decide};
use ptxeq_decide::normal::Normalizer;
use ptxeq_terms::{TermId, Terms};

fn main() {
    divan::main();
}

fn check_all(t: &Terms, pairs: &[(TermId, TermId)]) {
    let mut n = Normalizer::new(t);
    let opts = DecideOptions::default();
    for &(a, b) in pairs {
        let d = decide(&mut n, a, b, &opts);
        assert!(matches!(d, ElementDecision::Proved { .. }), "{d:?}");
        black_box(d);
    }
}

fn tree(t: &mut Terms, v: &[TermId], f: fn(&mut Terms, TermId, TermId) -> TermId) -> TermId {
    let mut v = v.to_vec();
    while v.len() > 1 {
        v = v
            .chunks(2)
            .map(|p| if p.len() == 2 { f(t, p[0], p[1]) } else { p[0] })
            .collect();
    }
    v[0]
}

fn gemm(elements: u64, k: u64) -> (Terms, Vec<(TermId, TermId)>) {
    let mut t = Terms::new();
    let mut pairs = Vec::new();
    for e in 0..elements {
        let (i, j) = (e / 16, e % 16);
        let prods: Vec<TermId> = (0..k)
            .map(|kk| {
                let a = t.input(0, i * k + kk);
                let b = t.input(1, kk * 16 + j);
                t.mul(a, b)
            })
            .collect();
        let mut seq = t.int(0);
        for &p in &prods {
            seq = t.add(seq, p);
        }
        let tiles: Vec<TermId> = prods
            .chunks(16)
            .map(|c| {
                let mut acc = t.int(0);
                for &p in c {
                    acc = t.add(acc, p);
                }
                acc
            })
            .collect();
        let tiled = tree(&mut t, &tiles, Terms::add);
        pairs.push((seq, tiled));
    }
    (t, pairs)
}

fn softmax(n: usize, threads: usize) -> (Terms, Vec<(TermId, TermId)>) {
    let mut t = Terms::new();
    let xs: Vec<TermId> = (0..n as u64).map(|j| t.input(0, j)).collect();
    let m = tree(&mut t, &xs, Terms::max);
    let es: Vec<TermId> = xs
        .iter()
        .map(|&x| {
            let d = t.sub(x, m);
            t.exp(d)
        })
        .collect();
    let sum = tree(&mut t, &es, Terms::add);
    let chunk = n / threads;
    let mut parts: Vec<(TermId, TermId)> = (0..threads)
        .map(|k| {
            let mut m = t.neg_inf();
            let mut s = t.int(0);
            for &x in &xs[k * chunk..(k + 1) * chunk] {
                let m2 = t.max(m, x);
                let d = t.sub(m, m2);
                let sc = t.exp(d);
                let d = t.sub(x, m2);
                let e = t.exp(d);
                let r = t.mul(s, sc);
                s = t.add(r, e);
                m = m2;
            }
            (m, s)
        })
        .collect();
    while parts.len() > 1 {
        parts = parts
            .chunks(2)
            .map(|p| {
                let ((m1, s1), (m2, s2)) = (p[0], p[1]);
                let m = t.max(m1, m2);
                let d1 = t.sub(m1, m);
                let e1 = t.exp(d1);
                let d2 = t.sub(m2, m);
                let e2 = t.exp(d2);
                let a = t.mul(s1, e1);
                let b = t.mul(s2, e2);
                (m, t.add(a, b))
            })
            .collect();
    }
    let (mo, so) = parts[0];
    let pairs = (0..n)
        .map(|i| {
            let naive = t.div(es[i], sum);
            let d = t.sub(xs[i], mo);
            let top = t.exp(d);
            (naive, t.div(top, so))
        })
        .collect();
    (t, pairs)
}

/// One query row: q (tensor 0, d), K (tensor 1, keys × d), V (tensor 2,
/// keys × d).
fn attention(keys: u64, d: u64) -> (Terms, Vec<(TermId, TermId)>) {
    let mut t = Terms::new();
    let q: Vec<TermId> = (0..d).map(|k| t.input(0, k)).collect();
    let score = |t: &mut Terms, j: u64, tiled: bool| {
        let prods: Vec<TermId> = (0..d)
            .map(|k| {
                let kk = t.input(1, j * d + k);
                t.mul(q[k as usize], kk)
            })
            .collect();
        if tiled {
            tree(t, &prods, Terms::add)
        } else {
            let mut acc = t.int(0);
            for &p in &prods {
                acc = t.add(acc, p);
            }
            acc
        }
    };
    let v = |t: &mut Terms, j: u64, c: u64| t.input(2, j * d + c);
    // Naive: scores, max, exponentials, normalised weights, weighted sums.
    let s: Vec<TermId> = (0..keys).map(|j| score(&mut t, j, false)).collect();
    let m = tree(&mut t, &s, Terms::max);
    let p: Vec<TermId> = s
        .iter()
        .map(|&x| {
            let dd = t.sub(x, m);
            t.exp(dd)
        })
        .collect();
    let l = tree(&mut t, &p, Terms::add);
    let naive: Vec<TermId> = (0..d)
        .map(|c| {
            let terms: Vec<TermId> = (0..keys)
                .map(|j| {
                    let vj = v(&mut t, j, c);
                    t.mul(p[j as usize], vj)
                })
                .collect();
            let num = tree(&mut t, &terms, Terms::add);
            t.div(num, l)
        })
        .collect();
    // Flash-style: blocks of 64 keys, running max, rescaled l and acc.
    let mut mo = t.neg_inf();
    let mut lo = t.int(0);
    let zero = t.int(0);
    let mut acc: Vec<TermId> = vec![zero; d as usize];
    for block in 0..keys.div_ceil(64) {
        let js: Vec<u64> = (block * 64..((block + 1) * 64).min(keys)).collect();
        let sb: Vec<TermId> = js.iter().map(|&j| score(&mut t, j, true)).collect();
        let bm = tree(&mut t, &sb, Terms::max);
        let m2 = t.max(mo, bm);
        let dd = t.sub(mo, m2);
        let scale = t.exp(dd);
        let pb: Vec<TermId> = sb
            .iter()
            .map(|&x| {
                let dd = t.sub(x, m2);
                t.exp(dd)
            })
            .collect();
        let bl = tree(&mut t, &pb, Terms::add);
        let r = t.mul(lo, scale);
        lo = t.add(r, bl);
        for c in 0..d {
            let terms: Vec<TermId> = js
                .iter()
                .zip(&pb)
                .map(|(&j, &pj)| {
                    let vj = v(&mut t, j, c);
                    t.mul(pj, vj)
                })
                .collect();
            let bs = tree(&mut t, &terms, Terms::add);
            let r = t.mul(acc[c as usize], scale);
            acc[c as usize] = t.add(r, bs);
        }
        mo = m2;
    }
    let pairs = (0..d as usize)
        .map(|c| {
            let o = t.div(acc[c], lo);
            (naive[c], o)
        })
        .collect();
    (t, pairs)
}

#[divan::bench(sample_count = 10)]
fn gemm_k64(b: Bencher<'_, '_>) {
    let (t, pairs) = gemm(256, 64);
    b.counter(ItemsCount::new(pairs.len()))
        .bench(|| check_all(&t, &pairs));
}

#[divan::bench(sample_count = 10)]
fn softmax_n128(b: Bencher<'_, '_>) {
    let (t, pairs) = softmax(128, 4);
    b.counter(ItemsCount::new(pairs.len()))
        .bench(|| check_all(&t, &pairs));
}

#[divan::bench(args = [64, 128, 256, 512], sample_count = 3)]
fn attention_d64(b: Bencher<'_, '_>, keys: u64) {
    let (t, pairs) = attention(keys, 64);
    b.counter(ItemsCount::new(pairs.len()))
        .bench(|| check_all(&t, &pairs));
}

/// Integer data (issue 14): per-block `int` sums of `n` s32 elements, a
/// left-to-right chain against a stride-halving tree (the classic
/// reduction pair), 64 blocks — ring normal forms modulo 2^32.
fn int_reduce(n: u64, blocks: u64) -> (Terms, Vec<(TermId, TermId)>) {
    let ty = ptxeq_terms::IntTy {
        bits: 32,
        signed: true,
    };
    let mut t = Terms::new();
    let pairs = (0..blocks)
        .map(|blk| {
            let xs: Vec<TermId> = (0..n).map(|i| t.int_input(0, blk * n + i, ty)).collect();
            let mut seq = xs[0];
            for &x in &xs[1..] {
                seq = t.int_add(32, seq, x);
            }
            let tr = tree(&mut t, &xs, |t, a, b| t.int_add(32, a, b));
            (seq, tr)
        })
        .collect();
    (t, pairs)
}

#[divan::bench(args = [256, 1024], sample_count = 5)]
fn int_reduce_s32(b: Bencher<'_, '_>, n: u64) {
    let (t, pairs) = int_reduce(n, 64);
    b.counter(ItemsCount::new(pairs.len()))
        .bench(|| check_all(&t, &pairs));
}
