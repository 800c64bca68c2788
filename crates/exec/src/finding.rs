//! What a run reports: races, deadlocks, divergence, bad accesses,
//! unsupported constructs and resource limits.
//!
//! Findings name threads by their `(x, y, z)` id, instructions by
//! [`InstrRef`] (function + index into that function's `instrs`; the caller
//! maps them to PTX lines through the `SourceMap` and to CUDA/Python lines
//! through the IR's `.loc`), and memory by region name + byte offset (+ the
//! element index for tensors and typed arrays). Every finding carries a
//! human `message` that stands on its own.

use serde::{Deserialize, Serialize};

/// An instruction: `func` 0 is the kernel, `k > 0` is `CtaInput::funcs[k-1]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InstrRef {
    pub func: u32,
    pub index: u32,
}

impl InstrRef {
    /// The instruction of a packed id as the engine hands it to a domain
    /// (`Domain::layout_at`, `Domain::at_instr`).
    pub fn from_packed(p: u32) -> Self {
        crate::engine::unpack_instr(p)
    }

    pub fn kernel(index: u32) -> Self {
        InstrRef { func: 0, index }
    }
}

impl std::fmt::Display for InstrRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.func == 0 {
            write!(f, "instruction {}", self.index)
        } else {
            write!(f, "instruction {} of function #{}", self.index, self.func)
        }
    }
}

/// A thread of the CTA: its `%tid` and its linear id (`x + y·X + z·X·Y`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct ThreadRef {
    pub tid: [u32; 3],
    pub linear: u32,
}

impl std::fmt::Display for ThreadRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [x, y, z] = self.tid;
        if y == 0 && z == 0 {
            write!(f, "thread {x}")
        } else {
            write!(f, "thread ({x},{y},{z})")
        }
    }
}

/// How an access touched memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum AccessKind {
    Read,
    Write,
    /// `atom`/`red`: a strong read-modify-write.
    Atomic,
    /// A strong load (`ld.relaxed`, `ld.acquire`, …).
    StrongRead,
    /// A strong store (`st.relaxed`, `st.release`, …).
    StrongWrite,
}

impl AccessKind {
    pub fn word(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Atomic => "atomic",
            AccessKind::StrongRead => "strong load",
            AccessKind::StrongWrite => "strong store",
        }
    }
}

/// One side of a race.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct AccessRef {
    pub thread: ThreadRef,
    pub instr: InstrRef,
    pub kind: AccessKind,
    /// The CTA, for cross-CTA races (`None` within one CTA).
    pub cta: Option<[u32; 3]>,
}

/// A memory location as reported.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct MemLocation {
    /// Region name: the tensor name, the variable name, `dynamic shared`, ...
    pub region: String,
    /// `global`, `shared`, `local`, `const`, `param`.
    pub space: String,
    pub byte_offset: u64,
    /// `byte_offset / element size` for tensors and typed variables.
    pub element: Option<u64>,
}

impl std::fmt::Display for MemLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.element {
            Some(e) => write!(
                f,
                "{}[{}] ({} byte offset {})",
                self.region, e, self.space, self.byte_offset
            ),
            None => write!(
                f,
                "{} ({} byte offset {})",
                self.region, self.space, self.byte_offset
            ),
        }
    }
}

/// A group of threads waiting on the same thing at the end of a stuck run.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct WaitGroup {
    /// `barrier 1`, `shfl.sync (member mask 0xffffffff)`, ...
    pub what: String,
    pub instr: InstrRef,
    /// Linear thread ids as inclusive ranges.
    pub threads: Vec<(u32, u32)>,
    /// Threads (barriers) or lanes (collectives) arrived so far.
    pub arrived: u32,
    /// Threads or lanes expected.
    pub expected: u32,
}

/// The category of a finding; the lead maps these to verdict words.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FindingKind {
    /// Two unsynchronised accesses to the same byte, at least one a write,
    /// not both strong of a common scope (also across CTAs).
    Race,
    /// Two unsynchronised strong accesses (atomics) whose outcome depends
    /// on their order: a returned value that is used, or updates that do
    /// not commute. Not a data race; the result depends on the schedule.
    OrderDependent,
    /// Live threads wait forever.
    Deadlock,
    /// Barrier or collective reached inconsistently: different
    /// instructions, mismatched counts, recycling, exited members.
    Divergence,
    OutOfBounds,
    /// A read of memory (or a register) never written.
    Uninitialised,
    /// A construct outside the modelled class; `reason` says which.
    Unsupported,
    /// Step, frame or size limit hit.
    ResourceLimit,
    /// `trap` / `brkpt` executed.
    Trap,
    /// Integer division or remainder by zero (result unspecified in PTX).
    DivisionByZero,
}

impl FindingKind {
    /// The verdict this finding implies: the one finding→verdict mapping
    /// (a trap, an integer division by zero or a resource limit has no
    /// verdict of its own: the run is undecided).
    pub fn verdict(self) -> ptxeq_spec::Verdict {
        use ptxeq_spec::Verdict;
        match self {
            FindingKind::Race => Verdict::Race,
            FindingKind::OrderDependent => Verdict::OrderDependent,
            FindingKind::Deadlock => Verdict::Deadlock,
            FindingKind::Divergence => Verdict::Divergence,
            FindingKind::OutOfBounds => Verdict::OutOfBounds,
            FindingKind::Uninitialised => Verdict::Uninitialised,
            FindingKind::Unsupported
            | FindingKind::ResourceLimit
            | FindingKind::Trap
            | FindingKind::DivisionByZero => Verdict::Unsupported,
        }
    }

    /// The corpus verdict word this finding implies ([`Self::verdict`]).
    pub fn verdict_word(self) -> &'static str {
        self.verdict().as_str()
    }

    /// Whether the run stops at this finding (the state after it is not
    /// meaningful, or it is already decisive).
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            FindingKind::Unsupported
                | FindingKind::ResourceLimit
                | FindingKind::Trap
                | FindingKind::Divergence
                | FindingKind::Deadlock
        )
    }
}

/// One reported problem.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// A sentence a kernel engineer understands on its own.
    pub message: String,
    /// For [`FindingKind::Unsupported`]: the short reason
    /// (`branch depends on tensor data`, ...); otherwise empty.
    pub reason: String,
    /// The thread that hit it (the second access for races).
    pub thread: Option<ThreadRef>,
    /// The instruction that hit it (the second access for races).
    pub instr: Option<InstrRef>,
    /// The memory involved, if any.
    pub location: Option<MemLocation>,
    /// Races: the two accesses, earlier first.
    pub accesses: Vec<AccessRef>,
    /// Deadlock / divergence: every waiting group.
    pub waiting: Vec<WaitGroup>,
}

impl Finding {
    pub(crate) fn new(kind: FindingKind, message: impl Into<String>) -> Self {
        Finding {
            kind,
            message: message.into(),
            reason: String::new(),
            thread: None,
            instr: None,
            location: None,
            accesses: Vec::new(),
            waiting: Vec::new(),
        }
    }

    pub(crate) fn at(mut self, thread: Option<ThreadRef>, instr: Option<InstrRef>) -> Self {
        self.thread = thread;
        self.instr = instr;
        self
    }

    pub(crate) fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    pub(crate) fn with_location(mut self, loc: MemLocation) -> Self {
        self.location = Some(loc);
        self
    }
}

/// Compresses sorted linear thread ids into inclusive ranges.
pub fn thread_ranges(ids: impl IntoIterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut v: Vec<u32> = ids.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for t in v {
        match out.last_mut() {
            Some((_, hi)) if *hi + 1 == t => *hi = t,
            _ => out.push((t, t)),
        }
    }
    out
}

/// `t0..t31, t64` for messages.
pub fn format_ranges(r: &[(u32, u32)]) -> String {
    let parts: Vec<String> = r
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("t{a}")
            } else {
                format!("t{a}..t{b}")
            }
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_compress() {
        let r = thread_ranges([5, 0, 1, 2, 3, 7, 6, 31]);
        assert_eq!(r, vec![(0, 3), (5, 7), (31, 31)]);
        assert_eq!(format_ranges(&r), "t0..t3, t5..t7, t31");
    }
}
