//! Global-memory footprints of CTAs and the cross-CTA disjointness check.
//!
//! Within a CTA, races are judged by happens-before. Different CTAs never
//! synchronise (no grid-wide barriers are modelled), so any global byte
//! written by one CTA and read or written (non-atomically on at least one
//! side) by another is a race. Each CTA run reports the byte ranges it
//! read, wrote and updated atomically per tensor, as intervals tagged with
//! the instruction and thread of their first access; the caller runs CTAs
//! in parallel and calls [`check_cross_cta`] on the footprints.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::sparse::{Meter, SparseVec};

use crate::finding::{
    AccessKind, AccessRef, Finding, FindingKind, InstrRef, MemLocation, ThreadRef,
};

/// `[start, end)` bytes of a tensor, accessed as `kind` by `instr` (the
/// first access of the run in this interval) in `thread`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Interval {
    pub start: u64,
    pub end: u64,
    pub kind: AccessKind,
    pub instr: InstrRef,
    pub thread: ThreadRef,
}

/// One tensor's footprint in one CTA.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct TensorFootprint {
    pub tensor: u32,
    pub name: String,
    /// Element size in bytes (for element indices in reports).
    pub elem: u32,
    /// Sorted, disjoint per kind.
    pub intervals: Vec<Interval>,
}

/// A CTA's global footprint.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct GlobalFootprint {
    pub cta: [u32; 3],
    pub tensors: Vec<TensorFootprint>,
}

/// Per-byte footprint bookkeeping during a run (global tensors only), in
/// a sparse array: only touched bytes have a cell.
#[derive(Debug)]
pub(crate) struct FootprintBuilder {
    cells: SparseVec<FootCell>,
}

/// One byte's footprint: which kinds touched it and, per kind, the first
/// access (packed instr, thread linear).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct FootCell {
    /// Bit 0 read, bit 1 write, bit 2 atomic.
    flags: u8,
    first: [(u32, u32); 3],
}

fn kind_ix(k: AccessKind) -> usize {
    match k {
        AccessKind::Read => 0,
        AccessKind::Write => 1,
        AccessKind::Atomic | AccessKind::StrongRead | AccessKind::StrongWrite => 2,
    }
}

impl FootprintBuilder {
    #[cfg(test)]
    pub(crate) fn new(size: usize) -> Self {
        FootprintBuilder {
            cells: SparseVec::new(size, FootCell::default()),
        }
    }

    /// Like [`FootprintBuilder::new`], counting its storage on `meter`.
    pub(crate) fn metered(size: usize, meter: &Meter) -> Self {
        FootprintBuilder {
            cells: SparseVec::metered(size, FootCell::default(), meter),
        }
    }

    /// Heap bytes of the cells.
    pub(crate) fn bytes(&self) -> u64 {
        self.cells.bytes()
    }

    #[inline]
    pub(crate) fn touch(&mut self, off: usize, len: usize, kind: AccessKind, instr: u32, tid: u32) {
        let k = kind_ix(kind);
        let bit = 1u8 << k;
        for b in off..off + len {
            if self.cells.get(b).flags & bit == 0 {
                let c = self.cells.get_mut(b);
                c.flags |= bit;
                c.first[k] = (instr, tid);
            }
        }
    }

    /// Intervals of equal (kind, first instruction), in byte order.
    pub(crate) fn intervals(
        &self,
        decode: &dyn Fn(u32) -> InstrRef,
        thread: &dyn Fn(u32) -> ThreadRef,
    ) -> Vec<Interval> {
        let mut out = Vec::new();
        for (k, kind) in [AccessKind::Read, AccessKind::Write, AccessKind::Atomic]
            .into_iter()
            .enumerate()
        {
            let bit = 1u8 << k;
            // The open run: [start, end), its first access.
            let mut run: Option<(usize, usize, u32, u32)> = None;
            let mut flush = |run: Option<(usize, usize, u32, u32)>| {
                if let Some((start, end, instr, tid)) = run {
                    out.push(Interval {
                        start: start as u64,
                        end: end as u64,
                        kind,
                        instr: decode(instr),
                        thread: thread(tid),
                    });
                }
            };
            for (start, page) in self.cells.allocated() {
                for (j, c) in page.iter().enumerate() {
                    let b = start + j;
                    if c.flags & bit == 0 {
                        flush(run.take());
                        continue;
                    }
                    let (instr, tid) = c.first[k];
                    match &mut run {
                        Some((_, end, i, _)) if *end == b && *i == instr => *end = b + 1,
                        _ => {
                            flush(run.take());
                            run = Some((b, b + 1, instr, tid));
                        }
                    }
                }
            }
            flush(run);
        }
        out
    }
}

fn conflicting(a: AccessKind, b: AccessKind) -> bool {
    use AccessKind::*;
    !matches!((a, b), (Read, Read) | (Atomic, Atomic))
}

/// Races between different CTAs: a byte written by one and accessed by
/// another (not both atomically). One finding per (tensor, instruction
/// pair), naming both CTAs, instructions, threads and the first byte.
pub fn check_cross_cta(ctas: &[GlobalFootprint]) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut seen: FxHashSet<(u32, InstrRef, InstrRef)> = FxHashSet::default();
    let mut tensors: Vec<u32> = ctas
        .iter()
        .flat_map(|c| c.tensors.iter().map(|t| t.tensor))
        .collect();
    tensors.sort_unstable();
    tensors.dedup();
    for tensor in tensors {
        // (interval, cta index, name, elem)
        let mut all: Vec<(Interval, usize, &str, u32)> = Vec::new();
        for (ci, c) in ctas.iter().enumerate() {
            for t in c.tensors.iter().filter(|t| t.tensor == tensor) {
                for iv in &t.intervals {
                    all.push((*iv, ci, &t.name, t.elem));
                }
            }
        }
        all.sort_by_key(|(iv, ci, _, _)| (iv.start, *ci));
        // Sweep with the active intervals.
        let mut active: Vec<(Interval, usize)> = Vec::new();
        for &(iv, ci, name, elem) in &all {
            active.retain(|(a, _)| a.end > iv.start);
            for &(a, cj) in &active {
                if cj == ci || !conflicting(a.kind, iv.kind) {
                    continue;
                }
                let (i1, i2) = if a.instr <= iv.instr {
                    (a.instr, iv.instr)
                } else {
                    (iv.instr, a.instr)
                };
                if !seen.insert((tensor, i1, i2)) {
                    continue;
                }
                let byte = iv.start.max(a.start);
                let loc = MemLocation {
                    region: name.to_string(),
                    space: "global".into(),
                    byte_offset: byte,
                    element: (elem > 0).then(|| byte / u64::from(elem)),
                };
                let first = AccessRef {
                    thread: a.thread,
                    instr: a.instr,
                    kind: a.kind,
                    cta: Some(ctas[cj].cta),
                };
                let second = AccessRef {
                    thread: iv.thread,
                    instr: iv.instr,
                    kind: iv.kind,
                    cta: Some(ctas[ci].cta),
                };
                let msg = format!(
                    "race between CTAs {:?} and {:?} on {loc}: {} by {} at {} and {} by {} at {} with no ordering between CTAs",
                    ctas[cj].cta,
                    ctas[ci].cta,
                    a.kind.word(),
                    a.thread,
                    a.instr,
                    iv.kind.word(),
                    iv.thread,
                    iv.instr
                );
                let mut f = Finding::new(FindingKind::Race, msg)
                    .at(Some(iv.thread), Some(iv.instr))
                    .with_location(loc);
                f.accesses = vec![first, second];
                findings.push(f);
            }
            active.push((iv, ci));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(start: u64, end: u64, kind: AccessKind, ix: u32) -> Interval {
        Interval {
            start,
            end,
            kind,
            instr: InstrRef::kernel(ix),
            thread: ThreadRef {
                tid: [0, 0, 0],
                linear: 0,
            },
        }
    }

    fn fp(cta: u32, ivs: Vec<Interval>) -> GlobalFootprint {
        GlobalFootprint {
            cta: [cta, 0, 0],
            tensors: vec![TensorFootprint {
                tensor: 0,
                name: "y".into(),
                elem: 4,
                intervals: ivs,
            }],
        }
    }

    #[test]
    fn builder_intervals_span_pages_and_skip_gaps() {
        let mut b = FootprintBuilder::new(1 << 30);
        // one run across a page boundary, one far away, one read
        b.touch(60, 8, AccessKind::Write, 5, 1);
        b.touch(1 << 29, 4, AccessKind::Write, 5, 2);
        b.touch(64, 4, AccessKind::Read, 6, 3);
        // a second instruction continuing the first run starts a new one
        b.touch(68, 4, AccessKind::Write, 7, 4);
        let ivs = b.intervals(&InstrRef::kernel, &|t| ThreadRef {
            tid: [t, 0, 0],
            linear: t,
        });
        let got: Vec<(u64, u64, AccessKind, u32)> = ivs
            .iter()
            .map(|i| (i.start, i.end, i.kind, i.instr.index))
            .collect();
        assert_eq!(
            got,
            vec![
                (64, 68, AccessKind::Read, 6),
                (60, 68, AccessKind::Write, 5),
                (68, 72, AccessKind::Write, 7),
                (1 << 29, (1 << 29) + 4, AccessKind::Write, 5),
            ]
        );
        assert_eq!(ivs[1].thread.linear, 1);
        // only touched pages are held
        assert!(b.bytes() < 1 << 16, "{} bytes", b.bytes());
    }

    #[test]
    fn disjoint_writes_are_fine() {
        let a = fp(0, vec![iv(0, 512, AccessKind::Write, 5)]);
        let b = fp(1, vec![iv(512, 1024, AccessKind::Write, 5)]);
        assert!(check_cross_cta(&[a, b]).is_empty());
    }

    #[test]
    fn overlapping_write_read_races() {
        let a = fp(0, vec![iv(0, 516, AccessKind::Write, 5)]);
        let b = fp(1, vec![iv(512, 1024, AccessKind::Read, 3)]);
        let f = check_cross_cta(&[a, b]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].location.as_ref().unwrap().element, Some(128));
        assert_eq!(f[0].accesses[0].cta, Some([0, 0, 0]));
        assert_eq!(f[0].accesses[1].cta, Some([1, 0, 0]));
    }

    #[test]
    fn reads_and_atomics_do_not_conflict() {
        let a = fp(
            0,
            vec![
                iv(0, 64, AccessKind::Read, 1),
                iv(64, 68, AccessKind::Atomic, 2),
            ],
        );
        let b = fp(
            1,
            vec![
                iv(0, 64, AccessKind::Read, 1),
                iv(64, 68, AccessKind::Atomic, 2),
            ],
        );
        assert!(check_cross_cta(&[a, b]).is_empty());
        let c = fp(2, vec![iv(64, 68, AccessKind::Write, 9)]);
        let a = fp(0, vec![iv(64, 68, AccessKind::Atomic, 2)]);
        assert_eq!(check_cross_cta(&[a, c]).len(), 1);
    }
}
