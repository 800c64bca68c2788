//! The control-flow trace of a run: per thread, its straight-line
//! segments (run-length encoded, capped) and a hash of its whole path;
//! for the CTA, a hash of the schedule (every block and wake-up).
//!
//! The engine is deterministic: running it again with another domain
//! follows the same paths and the same interleaving whenever the branch
//! decisions are the same (they depend only on concrete values). So a
//! replay is simply a second run, and the trace is the cross-check:
//! [`Trace::check_replay`] asserts that both runs took exactly the same
//! path in every thread and the same schedule. Memory stays proportional
//! to the number of threads (segments are capped; the hashes cover
//! everything).

use serde::{Deserialize, Serialize};

/// `len` instructions of function `func` from `start`, executed `repeat`
/// times in a row.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Segment {
    pub func: u32,
    pub start: u32,
    pub len: u32,
    pub repeat: u32,
}

/// One thread's path.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct ThreadTrace {
    /// The first [`MAX_SEGMENTS`] distinct runs of segments.
    pub segments: Vec<Segment>,
    /// More segments were executed than kept (the hash still covers all).
    pub truncated: bool,
    /// Hash of every segment in order.
    pub path_hash: u64,
    /// Instructions stepped (predicated-off ones included).
    pub instructions: u64,
}

/// Segments kept per thread.
pub const MAX_SEGMENTS: usize = 4096;

/// The trace of one CTA run.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Trace {
    pub threads: Vec<ThreadTrace>,
    /// Hash of the schedule events (thread, event, instruction) in order.
    pub schedule_hash: u64,
    pub schedule_events: u64,
}

/// Where two traces part.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct ReplayMismatch {
    pub message: String,
}

impl Trace {
    /// Ok when `replay` followed exactly this trace.
    pub fn check_replay(&self, replay: &Trace) -> Result<(), ReplayMismatch> {
        if self.threads.len() != replay.threads.len() {
            return Err(ReplayMismatch {
                message: format!(
                    "thread count differs: {} vs {}",
                    self.threads.len(),
                    replay.threads.len()
                ),
            });
        }
        for (t, (a, b)) in self.threads.iter().zip(&replay.threads).enumerate() {
            if a.path_hash != b.path_hash || a.instructions != b.instructions {
                let at = a
                    .segments
                    .iter()
                    .zip(&b.segments)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.segments.len().min(b.segments.len()));
                return Err(ReplayMismatch {
                    message: format!(
                        "thread {t} took a different path (first differing segment #{at}: {:?} vs {:?})",
                        a.segments.get(at),
                        b.segments.get(at)
                    ),
                });
            }
        }
        if self.schedule_hash != replay.schedule_hash
            || self.schedule_events != replay.schedule_events
        {
            return Err(ReplayMismatch {
                message: "the schedule differs (same paths, different interleaving)".into(),
            });
        }
        Ok(())
    }
}

pub(crate) fn mix(h: u64, x: u64) -> u64 {
    let mut z = h.rotate_left(17) ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Builds one thread's trace as it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct ThreadTracer {
    pub out: ThreadTrace,
    cur_func: u32,
    cur_start: u32,
    cur_len: u32,
}

impl ThreadTracer {
    pub(crate) fn start(func: u32, pc: u32) -> Self {
        ThreadTracer {
            cur_func: func,
            cur_start: pc,
            ..Default::default()
        }
    }

    /// One instruction stepped.
    #[inline]
    pub(crate) fn step(&mut self) {
        self.cur_len += 1;
        self.out.instructions += 1;
    }

    /// Control moves to `(func, pc)` non-sequentially.
    pub(crate) fn jump(&mut self, func: u32, pc: u32) {
        self.close();
        self.cur_func = func;
        self.cur_start = pc;
        self.cur_len = 0;
    }

    fn close(&mut self) {
        if self.cur_len == 0 {
            return;
        }
        let seg = Segment {
            func: self.cur_func,
            start: self.cur_start,
            len: self.cur_len,
            repeat: 1,
        };
        let h = mix(
            mix(self.out.path_hash, u64::from(seg.func)),
            (u64::from(seg.start) << 32) | u64::from(seg.len),
        );
        self.out.path_hash = h;
        let n = self.out.segments.len();
        match self.out.segments.last_mut() {
            Some(last)
                if last.func == seg.func && last.start == seg.start && last.len == seg.len =>
            {
                last.repeat += 1;
            }
            _ if n >= MAX_SEGMENTS => self.out.truncated = true,
            _ => self.out.segments.push(seg),
        }
        self.cur_len = 0;
    }

    pub(crate) fn finish(mut self) -> ThreadTrace {
        self.close();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_compress() {
        let mut t = ThreadTracer::start(0, 0);
        for _ in 0..3 {
            t.step();
        }
        t.jump(0, 3);
        for _ in 0..100 {
            for _ in 0..4 {
                t.step();
            }
            t.jump(0, 3);
        }
        let tr = t.finish();
        assert_eq!(
            tr.segments,
            vec![
                Segment {
                    func: 0,
                    start: 0,
                    len: 3,
                    repeat: 1
                },
                Segment {
                    func: 0,
                    start: 3,
                    len: 4,
                    repeat: 100
                }
            ]
        );
        assert_eq!(tr.instructions, 403);
    }

    #[test]
    fn replay_check_finds_differences() {
        let mk = |n: u32| {
            let mut t = ThreadTracer::start(0, 0);
            for _ in 0..n {
                t.step();
            }
            Trace {
                threads: vec![t.finish()],
                schedule_hash: 1,
                schedule_events: 1,
            }
        };
        assert!(mk(3).check_replay(&mk(3)).is_ok());
        assert!(mk(3).check_replay(&mk(4)).is_err());
    }
}
