//! The engine's finding log: the findings of a run, capped per kind
//! (`max_findings_per_kind`, the excess counted as dropped), the halt flag
//! a fatal finding sets, and the set of access pairs already reported as a
//! race (so one racing pair is reported once however often it repeats).
//!
//! The log is the only owner of these; the engine's handlers go through
//! its methods ([`super::Engine::report`] and friends add the thread and
//! instruction to a message).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::finding::{Finding, FindingKind};

/// An access pair already reported (region or rule, and the two packed
/// instruction ids or a rule-specific key).
pub(crate) type ReportKey = (u32, u32, u32);

/// The findings of a run and the halt flag.
pub(crate) struct FindingLog {
    findings: Vec<Finding>,
    kind_counts: FxHashMap<FindingKind, u32>,
    dropped: u64,
    reported: FxHashSet<ReportKey>,
    halted: bool,
    max_per_kind: u32,
}

impl FindingLog {
    /// An empty log keeping at most `max_per_kind` findings of each kind.
    pub(crate) fn new(max_per_kind: u32) -> Self {
        FindingLog {
            findings: Vec::new(),
            kind_counts: FxHashMap::default(),
            dropped: 0,
            reported: FxHashSet::default(),
            halted: false,
            max_per_kind,
        }
    }

    /// Records `f` (dropped and counted past the per-kind cap); a fatal
    /// kind halts the run.
    pub(crate) fn record(&mut self, f: Finding) {
        let fatal = f.kind.is_fatal();
        let c = self.kind_counts.entry(f.kind).or_insert(0);
        if *c >= self.max_per_kind {
            self.dropped += 1;
        } else {
            *c += 1;
            self.findings.push(f);
        }
        if fatal {
            self.halted = true;
        }
    }

    /// Whether the run must stop.
    #[inline]
    pub(crate) fn halted(&self) -> bool {
        self.halted
    }

    /// Stops the run (after a fatal finding or a limit).
    pub(crate) fn halt(&mut self) {
        self.halted = true;
    }

    /// `true` the first time `key` is seen: the caller reports it then.
    pub(crate) fn first_report(&mut self, key: ReportKey) -> bool {
        self.reported.insert(key)
    }

    /// Exchanges the reported-pairs set with `other` (a grid run carries
    /// it from one CTA's engine to the next, `crate::grid`).
    pub(crate) fn swap_reported(&mut self, other: &mut FxHashSet<ReportKey>) {
        std::mem::swap(&mut self.reported, other);
    }

    /// The findings recorded so far.
    pub(crate) fn all(&self) -> &[Finding] {
        &self.findings
    }

    /// The number of findings recorded so far (an index for
    /// [`FindingLog::get_mut`]).
    pub(crate) fn len(&self) -> usize {
        self.findings.len()
    }

    /// The `n`-th finding, to complete it after it was recorded.
    pub(crate) fn get_mut(&mut self, n: usize) -> Option<&mut Finding> {
        self.findings.get_mut(n)
    }

    /// Keeps the findings for which `keep` holds.
    pub(crate) fn retain(&mut self, keep: impl FnMut(&Finding) -> bool) {
        self.findings.retain(keep);
    }

    /// The findings and the count of dropped ones, for the run's result.
    pub(crate) fn into_parts(self) -> (Vec<Finding>, u64) {
        (self.findings, self.dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_kind_and_halts_on_fatal() {
        let mut log = FindingLog::new(1);
        log.record(Finding::new(FindingKind::Race, "a"));
        log.record(Finding::new(FindingKind::Race, "b"));
        assert_eq!(log.len(), 1);
        assert!(!log.halted());
        log.record(Finding::new(FindingKind::Unsupported, "c"));
        assert!(log.halted());
        let (fs, dropped) = log.into_parts();
        assert_eq!(fs.len(), 2);
        assert_eq!(dropped, 1);
    }

    #[test]
    fn reports_a_key_once() {
        let mut log = FindingLog::new(8);
        assert!(log.first_report((1, 2, 3)));
        assert!(!log.first_report((1, 2, 3)));
        let mut other = FxHashSet::default();
        log.swap_reported(&mut other);
        assert!(other.contains(&(1, 2, 3)));
        assert!(log.first_report((1, 2, 3)));
    }
}
