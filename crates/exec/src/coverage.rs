//! An optional record of which instructions a run executed and whether
//! the register values they wrote were ever read.
//!
//! The mutation harness (`drivers/mutate`) uses it to tell a mutant that
//! survived because the checker missed the change from one whose changed
//! instruction never ran in the checked CTAs, or whose result nobody
//! read ("equivalent by construction"). It is off in normal runs
//! ([`crate::run_cta`]): the engine then carries no per-register
//! provenance and pays one `None` test per register access. Only
//! [`crate::run_cta_with_coverage`] turns it on.
//!
//! What is recorded, per instruction of the kernel and of every function:
//!
//! - *executed*: some thread ran it with its guard true (a data-dependent
//!   guard counts as true: the instruction's effect is then selected by
//!   data, so it is live);
//! - *wrote*: it wrote a register (not only the sink `_`);
//! - *read*: some thread later read a register value it wrote — as an
//!   operand, a guard, a return value, or as the old value kept by a
//!   write under a data guard (an over-approximation of liveness is the
//!   safe direction here: it can only make more mutants count as live).
//!
//! And per thread, a fingerprint of every memory access in order: the
//! instruction, the region and offset, the width, the kind, and the value
//! a store or atomic leaves behind. Two runs with equal traces (paths and
//! schedule), equal access fingerprints and equal outputs are the same to
//! everything the checker judges (races, bounds, uninitialised reads,
//! output terms): whatever else differs between the two kernels only
//! touched registers that never reached memory, control flow or an output.

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use crate::finding::InstrRef;

const EXECUTED: u8 = 1;
const WROTE: u8 = 2;
const READ: u8 = 4;

/// Per-instruction execution and liveness flags of one or more runs.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Coverage {
    /// Function `k` (0 = the kernel, as [`InstrRef::func`]), instruction
    /// index → flags.
    funcs: Vec<Vec<u8>>,
    /// Per thread (linear id; CTA after CTA when merged): memory accesses
    /// made and their fingerprint.
    accesses: Vec<(u64, u64)>,
}

impl Coverage {
    /// An empty record for functions of the given instruction counts.
    pub(crate) fn new(lens: impl IntoIterator<Item = usize>, threads: usize) -> Self {
        Coverage {
            funcs: lens.into_iter().map(|n| vec![0; n]).collect(),
            accesses: vec![(0, 0); threads],
        }
    }

    /// Per thread: how many memory accesses it made and a fingerprint of
    /// them in order (see the module doc).
    pub fn accesses(&self) -> &[(u64, u64)] {
        &self.accesses
    }

    fn flags(&self, i: InstrRef) -> u8 {
        self.funcs
            .get(i.func as usize)
            .and_then(|f| f.get(i.index as usize))
            .copied()
            .unwrap_or(0)
    }

    /// Whether some thread executed `i` with its guard true.
    pub fn executed(&self, i: InstrRef) -> bool {
        self.flags(i) & EXECUTED != 0
    }

    /// Whether `i` wrote a register.
    pub fn wrote(&self, i: InstrRef) -> bool {
        self.flags(i) & WROTE != 0
    }

    /// Whether some thread read a register value `i` wrote.
    pub fn result_read(&self, i: InstrRef) -> bool {
        self.flags(i) & READ != 0
    }

    /// Adds another run's record (several CTAs of one kernel; the access
    /// fingerprints are appended, CTA after CTA).
    pub fn merge(&mut self, other: &Coverage) {
        self.accesses.extend_from_slice(&other.accesses);
        if self.funcs.len() < other.funcs.len() {
            self.funcs.resize(other.funcs.len(), Vec::new());
        }
        for (mine, theirs) in self.funcs.iter_mut().zip(&other.funcs) {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a |= *b;
            }
        }
    }

    /// Instructions executed, over all functions.
    pub fn executed_count(&self) -> usize {
        self.funcs
            .iter()
            .flatten()
            .filter(|&&f| f & EXECUTED != 0)
            .count()
    }

    fn set(&mut self, packed: u32, flag: u8) {
        let i = crate::engine::unpack_instr(packed);
        if let Some(f) = self
            .funcs
            .get_mut(i.func as usize)
            .and_then(|f| f.get_mut(i.index as usize))
        {
            *f |= flag;
        }
    }

    /// Instruction `packed` (as the engine packs it) ran.
    #[inline]
    pub(crate) fn executed_at(&mut self, packed: u32) {
        self.set(packed, EXECUTED);
    }

    /// Instruction `packed` wrote a register.
    #[inline]
    pub(crate) fn wrote_at(&mut self, packed: u32) {
        self.set(packed, WROTE);
    }

    /// Thread `t` made a memory access described by `what` (instruction,
    /// place, width, kind, stored value).
    pub(crate) fn access<A: Hash>(&mut self, t: u32, what: A) {
        if let Some((n, h)) = self.accesses.get_mut(t as usize) {
            let mut s = std::hash::DefaultHasher::new();
            (*h, what).hash(&mut s);
            *h = s.finish();
            *n += 1;
        }
    }

    /// A register value was read; `writer` is its provenance as kept in a
    /// frame (`packed + 1`, 0 = written by no instruction).
    #[inline]
    pub(crate) fn read_from(&mut self, writer: Option<&u32>) {
        if let Some(&w) = writer
            && w != 0
        {
            self.set(w - 1, READ);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_merge() {
        let mut a = Coverage::new([3, 2], 1);
        a.executed_at(1);
        a.wrote_at(1);
        let mut b = Coverage::new([3], 1);
        b.read_from(Some(&2)); // instruction 1 of the kernel
        b.read_from(Some(&0)); // no writer: nothing
        b.read_from(None);
        a.merge(&b);
        let i = InstrRef::kernel(1);
        assert!(a.executed(i) && a.wrote(i) && a.result_read(i));
        assert!(!a.executed(InstrRef::kernel(0)));
        assert!(!a.result_read(InstrRef::kernel(0)));
        assert!(!a.executed(InstrRef { func: 1, index: 9 }));
        assert_eq!(a.executed_count(), 1);
    }
}
