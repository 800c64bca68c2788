//! Deterministic, seeded choice of a few mutants per case, spread over
//! the operators (round robin over operators, each operator's mutants in
//! a seeded shuffle): the same seed and corpus give the same mutants.

use crate::mutants::{Mutant, Op};

/// SplitMix64: small, fast, and enough for a reproducible shuffle.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_u64() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}

/// FNV-1a of a string: a stable per-case salt for the seed.
pub fn salt(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Up to `n` of `all` (`None`: all of them), spread over operators, in a
/// seeded order, returned sorted by instruction for readable reports.
pub fn pick(all: Vec<Mutant>, n: Option<usize>, seed: u64, case: &str) -> Vec<Mutant> {
    let Some(n) = n else { return all };
    let mut rng = Rng::new(seed ^ salt(case));
    let mut groups: Vec<(Op, Vec<Mutant>)> = Vec::new();
    for m in all {
        match groups.iter_mut().find(|(o, _)| *o == m.op) {
            Some((_, g)) => g.push(m),
            None => groups.push((m.op, vec![m])),
        }
    }
    groups.sort_by_key(|(o, _)| *o);
    for (_, g) in &mut groups {
        rng.shuffle(g);
        g.reverse(); // pop from the end = take in shuffled order
    }
    // Start the round robin at a seeded operator so small `n` do not
    // always favour the first operators.
    let mut out = Vec::new();
    let start = if groups.is_empty() {
        0
    } else {
        (rng.next_u64() % groups.len() as u64) as usize
    };
    let mut i = start;
    while out.len() < n && groups.iter().any(|(_, g)| !g.is_empty()) {
        let g = i % groups.len();
        if let Some(m) = groups[g].1.pop() {
            out.push(m);
        }
        i += 1;
    }
    out.sort_by(|a, b| (a.instr, &a.id).cmp(&(b.instr, &b.id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::Probe;

    fn m(op: Op, i: u32) -> Mutant {
        Mutant {
            id: format!("{}:{i}", op.name()),
            op,
            instr: i,
            line: i,
            desc: String::new(),
            edits: Vec::new(),
            probe: Probe::None,
        }
    }

    #[test]
    fn deterministic_and_spread_over_operators() {
        let all: Vec<Mutant> = (0..20)
            .map(|i| m(Op::ImmInt, i))
            .chain((0..3).map(|i| m(Op::AddSub, 100 + i)))
            .collect();
        let a = pick(all.clone(), Some(4), 7, "x/y");
        let b = pick(all.clone(), Some(4), 7, "x/y");
        let ids = |v: &[Mutant]| v.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(a.len(), 4);
        assert_eq!(a.iter().filter(|m| m.op == Op::AddSub).count(), 2);
        let c = pick(all.clone(), Some(4), 8, "x/y");
        assert_eq!(c.len(), 4);
        assert_eq!(pick(all.clone(), None, 0, "").len(), 23);
        assert_eq!(pick(all, Some(100), 1, "z").len(), 23);
    }
}
