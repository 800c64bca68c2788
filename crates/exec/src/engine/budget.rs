//! The step budget: every CTA run executes at most
//! [`Limits::max_steps`](crate::Limits::max_steps) thread-instructions, so
//! a loop that never ends (a volatile counter, a bound of 2³¹) stops in
//! seconds with a message instead of running for hours.
//!
//! To name the loop that ate the budget, every thread counts how often it
//! took each of its back edges (a branch to an earlier or the same
//! instruction of the same function — the edge that closes a loop). When
//! the budget is hit, the running thread's most-taken back edge is the
//! innermost loop it spins in; the finding points at that branch (the
//! report prints its PTX and source line) and says how many iterations
//! this thread and all threads completed.
//!
//! The counters cost one short linear search per loop iteration (a thread
//! has few distinct back edges), nothing per straight-line instruction.

use super::{Engine, Halt, unpack_instr};
use crate::domain::Domain;
use crate::finding::{Finding, FindingKind};

/// Per thread: how many times each back edge was taken.
#[derive(Clone, Debug, Default)]
pub(crate) struct BackEdges {
    /// `(packed branch instruction, times taken)`, in first-taken order.
    edges: Vec<(u32, u64)>,
}

impl BackEdges {
    /// The branch at packed instruction `instr` jumped backwards.
    #[inline]
    pub(crate) fn taken(&mut self, instr: u32) {
        match self.edges.iter_mut().find(|e| e.0 == instr) {
            Some(e) => e.1 += 1,
            None => self.edges.push((instr, 1)),
        }
    }

    /// The most-taken back edge and its count (the earliest on a tie).
    pub(crate) fn hottest(&self) -> Option<(u32, u64)> {
        self.edges
            .iter()
            .copied()
            .fold(None, |best: Option<(u32, u64)>, e| match best {
                Some(b) if b.1 >= e.1 => Some(b),
                _ => Some(e),
            })
    }

    /// How often the branch at `instr` was taken.
    pub(crate) fn count(&self, instr: u32) -> u64 {
        self.edges.iter().find(|e| e.0 == instr).map_or(0, |e| e.1)
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Thread `t` is about to exceed the step budget: a fatal
    /// `ResourceLimit` finding naming the loop it spins in.
    #[cold]
    #[inline(never)]
    pub(crate) fn step_limit(&mut self, t: u32) -> Halt {
        let max = self.input.limits.max_steps;
        let th = self.thread_ref(t);
        let hot = self.cta.threads[t as usize].back_edges.hottest();
        let mut f = match hot {
            Some((edge, n)) => {
                let (total, threads) = self
                    .cta
                    .threads
                    .iter()
                    .map(|x| x.back_edges.count(edge))
                    .filter(|&c| c > 0)
                    .fold((0u64, 0u32), |(s, k), c| (s.saturating_add(c), k + 1));
                let instr = unpack_instr(edge);
                Finding::new(
                    FindingKind::ResourceLimit,
                    format!(
                        "step limit: the CTA executed {max} thread-instructions (the limit; raise it \
                         with --max-steps or [limits] max_steps) while {th} was in the loop closed by \
                         the back edge at {instr}, after {n} iteration(s) of that thread ({total} \
                         iteration(s) by {threads} thread(s)); the loop does not terminate or needs \
                         more steps"
                    ),
                )
                .at(Some(th), Some(instr))
            }
            None => {
                let instr = unpack_instr(self.cur_instr);
                Finding::new(
                    FindingKind::ResourceLimit,
                    format!(
                        "step limit: the CTA executed {max} thread-instructions (the limit; raise it \
                         with --max-steps or [limits] max_steps); {th} was at {instr} and took no \
                         loop back edge (the work is straight-line code or recursion)"
                    ),
                )
                .at(Some(th), Some(instr))
            }
        };
        f = f.with_reason("step limit");
        self.report(f);
        self.log.halt();
        Halt
    }
}

#[cfg(test)]
mod tests {
    use super::BackEdges;

    #[test]
    fn hottest_back_edge_wins_and_ties_keep_the_first() {
        let mut b = BackEdges::default();
        assert_eq!(b.hottest(), None);
        b.taken(7);
        b.taken(3);
        b.taken(3);
        assert_eq!(b.hottest(), Some((3, 2)));
        b.taken(7);
        assert_eq!(b.hottest(), Some((7, 2)));
        assert_eq!(b.count(3), 2);
        assert_eq!(b.count(9), 0);
    }
}
