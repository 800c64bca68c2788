//! How much term-store memory the symbolic replays of one process may hold
//! at once (`--replay-memory-mib`).
//!
//! The two kernels of a pair replay side by side on the pipeline's
//! threads, and a large replay's store (nodes, their hashes, the intern
//! table, the pending sums) lives until its export to a graph: on a 64×64
//! tile of a K = 4096 GEMM each store is about 1.1 GiB at its end, and the
//! two ends meet, so the process peaked at about twice that. Before it
//! builds a store, a replay is admitted with an estimate of the store's
//! bytes ([`estimate`]); one that would take the estimates of the running
//! replays past the budget waits until enough of them have exported. One
//! replay is always admitted when none runs, so a single replay larger
//! than the budget still runs (alone).
//!
//! A replay's store cannot be bounded while it runs (its nodes are its
//! result), so admission is decided up front, from the opaque run's count
//! of the values the replay will build. (Letting a second replay start
//! and pause once the stores hold the budget does not bound the peak: the
//! first replay's store keeps growing to its end.)
//!
//! The budget changes only when a replay runs, never what it computes: it
//! is a process setting, not a salsa input, and no verdict depends on it.
//! A waiting replay holds no lock another replay needs (a replay calls no
//! query while admitted), so waiting cannot deadlock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The default of `--replay-memory-mib`: 1.5 GiB of estimated stores,
/// which runs the two replays of a K = 4096 GEMM pair of 64×64 tiles (two
/// ≈ 1.1 GiB stores) one after the other, under 2 GiB in all, while the
/// pairs of smaller tiles still replay side by side.
pub const DEFAULT_REPLAY_MEMORY_MIB: u64 = 1536;

/// Estimated store bytes per data value the opaque run built: a store
/// node costs about 62 bytes at its peak (the node 24, its 128-bit hash
/// 16, its flag 1, its share of the intern table's 8-byte slots at about
/// half load 16, of the long sums' operand lists and the pending-sum
/// arena ≈ 5), and a replay builds about 0.55 nodes per value (an
/// accumulating `fma` is two values, a product node and a deferred sum;
/// measured 18.4M nodes for 33.6M values on the K = 4096 SGEMM tiles).
pub const BYTES_PER_VALUE: u64 = 36;

static BUDGET: AtomicU64 = AtomicU64::new(DEFAULT_REPLAY_MEMORY_MIB << 20);

struct Held {
    /// Estimated bytes of the admitted replays' stores.
    bytes: u64,
    /// Replays admitted and not yet released.
    running: u32,
}

static HELD: Mutex<Held> = Mutex::new(Held {
    bytes: 0,
    running: 0,
});
static RELEASED: Condvar = Condvar::new();

/// Replays that waited for the budget in this process, and how long they
/// waited together (for `--timings`).
static WAITS: Mutex<(u64, Duration)> = Mutex::new((0, Duration::ZERO));

/// Sets the process's budget in MiB (`--replay-memory-mib`; 0: one replay
/// at a time).
pub fn set_replay_memory_mib(mib: u64) {
    BUDGET.store(mib.saturating_mul(1 << 20), Ordering::Relaxed);
}

/// The process's budget in bytes.
pub fn replay_memory() -> u64 {
    BUDGET.load(Ordering::Relaxed)
}

/// How many replays waited for the budget so far, and for how long in all.
pub fn waits() -> (u64, Duration) {
    *WAITS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The estimated peak bytes of `unrolled`'s term store: the opaque run's
/// count of data values built times [`BYTES_PER_VALUE`].
pub fn estimate(unrolled: &ptxeq_unroll::UnrolledCta) -> u64 {
    unrolled.values_built.saturating_mul(BYTES_PER_VALUE)
}

/// An admitted replay's share of the budget, given back on drop (after
/// its store is exported and freed).
pub struct Admission {
    bytes: u64,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.bytes -= self.bytes;
        held.running -= 1;
        drop(held);
        RELEASED.notify_all();
    }
}

/// Admits a replay whose store is estimated at `bytes`, waiting while
/// other replays hold so much that it would exceed the budget.
pub fn admit(bytes: u64) -> Admission {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let fits = |h: &Held| h.running == 0 || h.bytes.saturating_add(bytes) <= replay_memory();
    if !fits(&held) {
        let start = Instant::now();
        while !fits(&held) {
            held = RELEASED.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        let waited = start.elapsed();
        let mut w = WAITS.lock().unwrap_or_else(|e| e.into_inner());
        w.0 += 1;
        w.1 += waited;
        tracing::info!(
            bytes,
            budget = replay_memory(),
            waited_ms = waited.as_millis() as u64,
            "replay waited for --replay-memory-mib"
        );
    }
    held.bytes += bytes;
    held.running += 1;
    Admission { bytes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32;

    /// The budget is process-wide; what changes it runs in this one test
    /// (other tests' replays may be admitted meanwhile: they only wait).
    #[test]
    fn replays_over_the_budget_run_one_at_a_time_and_a_lone_one_always_runs() {
        set_replay_memory_mib(1);
        // Larger than the budget, alone: admitted at once.
        drop(admit(10 << 20));
        // Two that fit together are admitted together.
        let a = admit(400 << 10);
        let b = admit(400 << 10);
        drop((a, b));
        // Four that do not fit two at a time: never two at once.
        let now = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (now, most) = (now.clone(), most.clone());
                std::thread::spawn(move || {
                    let _a = admit(600 << 10);
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(n, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    now.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(waits().0 >= 1, "someone waited");
        set_replay_memory_mib(DEFAULT_REPLAY_MEMORY_MIB);
    }
}
