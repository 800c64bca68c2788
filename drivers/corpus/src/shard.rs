//! Deterministic sharding of a corpus: which of `n` parts a case runs in.
//!
//! A case's part is decided by its **name** alone (its path relative to the
//! corpus root, `family/case`): blake3 over a domain tag and the name, the
//! first 8 bytes as a little-endian integer, modulo `n`. Why the name and
//! not the files' bytes:
//!
//! * it is stable when cases are added or removed elsewhere — no other
//!   case moves between parts (unlike "every n-th case of the sorted list",
//!   where inserting one case shifts all later ones);
//! * it is stable when a case's kernel is edited, so an orchestrator's
//!   history per shard stays comparable;
//! * every machine computes it from the directory listing alone, without
//!   reading (or agreeing on the bytes of) shared files such as a family's
//!   `common/` PTX.
//!
//! Parts are uneven for small corpora (hashing is a balls-into-bins
//! assignment, not a round robin); that is the price of stability.

use std::fmt;
use std::str::FromStr;

/// Domain tag of the shard hash (so it never collides with cache keys).
const TAG: &[u8] = b"ptxeq-shard\0";

/// One part of `count`: `index` is 0-based (`0..count`), the form of
/// Kubernetes' `JOB_COMPLETION_INDEX` and of a zero-based Slurm array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Whether the case named `name` belongs to this part.
    pub fn contains(&self, name: &str) -> bool {
        shard_of(name, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `i/n` with `0 <= i < n`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not a shard: write INDEX/COUNT, e.g. 0/4"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("shard index `{i}` is not a non-negative integer"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count `{n}` is not a positive integer"))?;
        if count == 0 {
            return Err("shard count must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard index {index} is out of range: indices are 0..{} for {count} shards (0-based)",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

/// The blake3 hash that places the case named `name` (hex in
/// `ptxeq corpus --list --format json`).
pub fn shard_key(name: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(TAG);
    h.update(name.as_bytes());
    *h.finalize().as_bytes()
}

/// The part (`0..count`) of the case named `name`.
pub fn shard_of(name: &str, count: u64) -> u64 {
    let k = shard_key(name);
    let mut first = [0u8; 8];
    first.copy_from_slice(&k[..8]);
    u64::from_le_bytes(first) % count.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("0/1".parse::<Shard>(), Ok(Shard { index: 0, count: 1 }));
        for bad in ["4/4", "1/0", "x/2", "1", "-1/3", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad} accepted");
        }
        assert!("4/4".parse::<Shard>().unwrap_err().contains("0-based"),);
    }

    /// Every name lands in exactly one part, and adding names never moves
    /// an existing one.
    #[test]
    fn parts_are_a_partition_and_stable() {
        let names: Vec<String> = (0..200).map(|i| format!("fam{}/case{i}", i % 7)).collect();
        for n in 1..6 {
            for name in &names {
                let owners = (0..n)
                    .filter(|&i| Shard { index: i, count: n }.contains(name))
                    .count();
                assert_eq!(owners, 1, "{name} in {owners} of {n} parts");
            }
        }
        let before: Vec<u64> = names.iter().map(|n| shard_of(n, 4)).collect();
        let _more: Vec<u64> = (0..50).map(|i| shard_of(&format!("new/{i}"), 4)).collect();
        let after: Vec<u64> = names.iter().map(|n| shard_of(n, 4)).collect();
        assert_eq!(before, after);
        // Not degenerate: 200 names spread over all 4 parts.
        for part in 0..4 {
            assert!(before.iter().filter(|&&p| p == part).count() > 20);
        }
    }

    /// Pinned values: the assignment is part of the interface (orchestrators
    /// may store it), so a change of the hash must be deliberate.
    #[test]
    fn assignment_is_pinned() {
        let k = shard_key("races/missing-barrier-reverse");
        assert_eq!(
            k,
            *blake3::hash(b"ptxeq-shard\0races/missing-barrier-reverse").as_bytes()
        );
        assert_eq!(shard_of("anything", 1), 0);
    }
}
