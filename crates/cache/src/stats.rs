//! In-process counters of one [`DiskCache`](crate::DiskCache): what this
//! run found, missed, rejected, wrote and evicted (for `--timings` and
//! `ptxeq cache stats`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Counters of one query name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCounts {
    pub hits: u64,
    pub misses: u64,
    /// Entries found but not accepted (corrupt, truncated, foreign,
    /// another version); each is also a miss for the caller.
    pub rejects: u64,
}

/// A snapshot of the counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub rejects: u64,
    pub puts: u64,
    pub put_errors: u64,
    pub evictions: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub by_query: BTreeMap<String, QueryCounts>,
    /// The remote layer (`--cache-url`): entries it supplied (each also a
    /// hit above), keys it did not hold, entries it held that failed
    /// verification, entries written to it, and its bytes.
    pub remote: RemoteCounts,
}

/// Counters of the remote layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RemoteCounts {
    pub hits: u64,
    pub misses: u64,
    pub rejects: u64,
    pub puts: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// What is on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub entries: u64,
    pub bytes: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    rejects: AtomicU64,
    puts: AtomicU64,
    put_errors: AtomicU64,
    evictions: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    by_query: Mutex<BTreeMap<String, QueryCounts>>,
    remote: Mutex<RemoteCounts>,
    /// The counters of the handle this one was scoped from: every count
    /// goes there too, so the whole run's totals include every case's.
    up: Option<Arc<Counters>>,
}

impl Counters {
    fn query(&self, name: &str, f: impl FnOnce(&mut QueryCounts)) {
        let mut m = self.by_query.lock().unwrap_or_else(|e| e.into_inner());
        match m.get_mut(name) {
            Some(c) => f(c),
            None => f(m.entry(name.to_string()).or_default()),
        }
    }

    fn hit_one(&self, query: &str, bytes: u64) {
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.bytes_read.fetch_add(bytes, Ordering::Relaxed);
        self.query(query, |c| c.hits += 1);
    }

    fn miss_one(&self, query: &str) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.query(query, |c| c.misses += 1);
    }

    fn reject_one(&self, query: &str) {
        self.rejects.fetch_add(1, Ordering::Relaxed);
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.query(query, |c| {
            c.rejects += 1;
            c.misses += 1;
        });
    }

    /// A rejected entry that was then found intact elsewhere (the remote
    /// layer): counted as a reject, but not as a miss.
    fn reject_then_found_one(&self, query: &str) {
        self.rejects.fetch_add(1, Ordering::Relaxed);
        self.query(query, |c| c.rejects += 1);
    }

    fn remote_one(&self, f: &impl Fn(&mut RemoteCounts)) {
        f(&mut self.remote.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// A verified entry whose payload then failed to decode.
    fn undo_hit_as_reject_one(&self, query: &str) {
        self.hits.fetch_sub(1, Ordering::Relaxed);
        self.query(query, |c| c.hits -= 1);
        self.reject_one(query);
    }

    fn put_one(&self, bytes: u64) {
        self.puts.fetch_add(1, Ordering::Relaxed);
        self.bytes_written.fetch_add(bytes, Ordering::Relaxed);
    }

    fn put_error_one(&self) {
        self.put_errors.fetch_add(1, Ordering::Relaxed);
    }

    fn evicted_one(&self, n: u64) {
        self.evictions.fetch_add(n, Ordering::Relaxed);
    }

    /// Counters that also count into `up`.
    pub(crate) fn under(up: Arc<Counters>) -> Counters {
        Counters {
            up: Some(up),
            ..Counters::default()
        }
    }

    fn each(&self, f: &dyn Fn(&Counters)) {
        f(self);
        if let Some(u) = &self.up {
            u.each(f);
        }
    }

    pub(crate) fn hit(&self, query: &str, bytes: u64) {
        self.each(&|c| c.hit_one(query, bytes));
    }

    pub(crate) fn miss(&self, query: &str) {
        self.each(&|c| c.miss_one(query));
    }

    pub(crate) fn reject(&self, query: &str) {
        self.each(&|c| c.reject_one(query));
    }

    /// A rejected entry that was then found intact elsewhere (the remote
    /// layer): counted as a reject, but not as a miss.
    pub(crate) fn reject_then_found(&self, query: &str) {
        self.each(&|c| c.reject_then_found_one(query));
    }

    pub(crate) fn remote(&self, f: impl Fn(&mut RemoteCounts)) {
        self.each(&|c| c.remote_one(&f));
    }

    /// A verified entry whose payload then failed to decode.
    pub(crate) fn undo_hit_as_reject(&self, query: &str) {
        self.each(&|c| c.undo_hit_as_reject_one(query));
    }

    pub(crate) fn put(&self, bytes: u64) {
        self.each(&|c| c.put_one(bytes));
    }

    pub(crate) fn put_error(&self) {
        self.each(&|c| c.put_error_one());
    }

    pub(crate) fn evicted(&self, n: u64) {
        self.each(&|c| c.evicted_one(n));
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            hits: l(&self.hits),
            misses: l(&self.misses),
            rejects: l(&self.rejects),
            puts: l(&self.puts),
            put_errors: l(&self.put_errors),
            evictions: l(&self.evictions),
            bytes_read: l(&self.bytes_read),
            bytes_written: l(&self.bytes_written),
            by_query: self
                .by_query
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            remote: *self.remote.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}
