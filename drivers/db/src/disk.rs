//! The disk cache behind the expensive queries (docs/semantics.md §15).
//!
//! `unrolled` and `symbolic` are the queries that cost seconds; their
//! artifacts are stored in a [`DiskCache`] so a second process on unchanged
//! kernels does no simulation. The key of an entry is blake3 over:
//!
//! * the query name and its pass version (below; `symbolic` also folds in
//!   `unrolled`'s version, since it consumes that artifact),
//! * a fingerprint of the source code of every crate that determines the
//!   artifact (`build.rs`), so an edited engine never reads a stale entry,
//! * the digest of the bincode bytes of the query's input ([`CtaInput`]:
//!   the kernel IR bound to the spec; its serialization is deterministic —
//!   vectors and arrays only, no hash maps), computed once per kernel by
//!   the tracked [`input_digest`],
//! * the CTA coordinates.
//!
//! Values are the bincode bytes of the artifact. A failed read (missing,
//! corrupt, foreign, undecodable) is a recomputation; a failed write is
//! logged and ignored: the cache can make a run faster, never wrong.
//!
//! The cache is not a salsa input: the artifact is a pure function of the
//! key, so whether it came from disk or from the pass is invisible to salsa.

use std::sync::{Arc, RwLock};

use ptxeq_cache::{DiskCache, Key};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Db;
use crate::kernel_check::{KernelSlot, cta_input};

/// Version of the `unrolled` artifact; bump when its meaning changes in a
/// way the source fingerprint cannot see (e.g. a data file).
pub const UNROLL_VERSION: u32 = 2;
/// Version of the `symbolic` artifact (same rule).
pub const SYMBOLIC_VERSION: u32 = 1;

/// Hash of the passes' source code at build time (see `build.rs`).
pub(crate) const SOURCE_FINGERPRINT: &str = env!("PTXEQ_PASS_FINGERPRINT");

/// The cache a plain `Database::default()` uses: set once by the `ptxeq`
/// binary from `--cache-dir`/`--no-cache`, so that code which builds its
/// own database (the corpus runner) shares it. Unset in tests and
/// libraries: no disk cache unless asked for.
static DEFAULT_CACHE: RwLock<Option<Arc<DiskCache>>> = RwLock::new(None);

/// Sets (or with `None` removes) the process-wide default cache.
pub fn set_default_cache(cache: Option<Arc<DiskCache>>) {
    *DEFAULT_CACHE.write().unwrap_or_else(|e| e.into_inner()) = cache;
}

thread_local! {
    /// A per-thread override of [`DEFAULT_CACHE`] (see [`with_thread_cache`]).
    static THREAD_CACHE: std::cell::RefCell<Option<Arc<DiskCache>>> =
        const { std::cell::RefCell::new(None) };
}

/// The cache a new database picks up: this thread's override, else the
/// process-wide default, if either was set.
pub fn default_cache() -> Option<Arc<DiskCache>> {
    THREAD_CACHE.with(|t| t.borrow().clone()).or_else(|| {
        DEFAULT_CACHE
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    })
}

/// Runs `f` with `cache` as the default of databases created on this thread
/// (and their clones, wherever they run). The corpus runner gives each case
/// a [`DiskCache::scoped`] handle this way, to count that case's hits while
/// cases run in parallel.
pub fn with_thread_cache<R>(cache: Arc<DiskCache>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<DiskCache>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            THREAD_CACHE.with(|t| *t.borrow_mut() = prev);
        }
    }
    let _restore = Restore(THREAD_CACHE.with(|t| t.borrow_mut().replace(cache)));
    f()
}

/// blake3 of the canonical (bincode) bytes of a kernel's [`CtaInput`];
/// `None` when the spec does not fit the kernel (nothing to cache then).
#[salsa::tracked]
pub fn input_digest<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Option<[u8; 32]> {
    let input = cta_input(db, k).as_ref().ok()?;
    let mut h = Key::hasher("cta_input", 0);
    h.update_serde(&**input).ok()?;
    Some(h.finish().hash)
}

/// The key of `query` (pass `versions`) over kernel `k` and CTA `cta`.
fn key(
    db: &dyn Db,
    query: &str,
    versions: &[u32],
    k: KernelSlot<'_>,
    cta: [u32; 3],
) -> Option<Key> {
    let digest = (*input_digest(db, k))?;
    let mut h = Key::hasher(query, versions.first().copied().unwrap_or(0));
    for v in versions {
        h.update(&v.to_le_bytes());
    }
    h.update(SOURCE_FINGERPRINT.as_bytes());
    h.update(&digest);
    for c in cta {
        h.update(&c.to_le_bytes());
    }
    Some(h.finish())
}

/// `compute()`, or its stored result when the database has a disk cache
/// holding an entry for (`query`, `versions`, `k`, `cta`).
pub(crate) fn cached<T: Serialize + DeserializeOwned>(
    db: &dyn Db,
    query: &str,
    versions: &[u32],
    k: KernelSlot<'_>,
    cta: [u32; 3],
    compute: impl FnOnce() -> T,
) -> T {
    let Some(cache) = db.disk_cache() else {
        return compute();
    };
    let Some(key) = key(db, query, versions, k, cta) else {
        return compute();
    };
    if let Some(v) = cache.get_value::<T>(&key) {
        tracing::debug!(query, "disk cache hit");
        return v;
    }
    let v = compute();
    if let Err(e) = cache.put_value(&key, &v) {
        // The cache prints the one warning per directory; every failure
        // is counted in its stats (`--timings`).
        tracing::debug!(query, "disk cache write failed: {e}");
    }
    v
}

/// Version of the stored idiom catalogue.
pub const CATALOGUE_VERSION: u32 = 1;

/// Makes sure this process has the math-idiom template catalogue before
/// the first recognition: installed from the disk cache when an earlier
/// process of this build stored it (keyed by
/// [`ptxeq_idioms::catalogue::FINGERPRINT`]: the template PTX and every
/// source that builds it), else built and stored. Without a disk cache
/// the catalogue is built on first use, as before.
pub(crate) fn idiom_catalogue(db: &dyn Db) {
    use ptxeq_idioms::catalogue::{FINGERPRINT, catalogue, has_catalogue, install_catalogue};
    if has_catalogue() {
        return;
    }
    let Some(cache) = db.disk_cache() else {
        return;
    };
    let mut h = Key::hasher("idiom_catalogue", CATALOGUE_VERSION);
    h.update(FINGERPRINT.as_bytes());
    let key = h.finish();
    if let Some(v) = cache.get_value::<Vec<ptxeq_idioms::Template>>(&key)
        && install_catalogue(v)
    {
        tracing::debug!("idiom catalogue installed from the disk cache");
        return;
    }
    let built = catalogue();
    if let Err(e) = cache.put_value(&key, built) {
        tracing::debug!("disk cache write failed: {e}");
    }
}
