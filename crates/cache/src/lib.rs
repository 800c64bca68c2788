//! A content-addressed disk cache for query artifacts (docs/semantics.md §15).
//!
//! Salsa memoises within one process; this cache carries the expensive
//! artifacts (unrolled CTAs, symbolic states) across processes, so a second
//! `ptxeq` run on unchanged kernels does no simulation at all. Salsa's own
//! persistence saves whole databases; per-query entries keyed by content are
//! what lets two different specs, or a corpus run and a later `check`, share
//! work.
//!
//! * **Keys** ([`Key`]) are blake3 over (query name, pass version, the
//!   canonical bytes of the query's inputs). Bump a pass version whenever
//!   the pass's output for the same input may change.
//! * **Entries** ([`entry`]) carry a header (magic, layout version, key,
//!   query name, pass version, payload length and blake3) before the
//!   payload. Reads verify all of it; anything that does not match is a
//!   miss, counted as a reject and deleted, never trusted.
//! * **Writes** go to a temporary file in the entry's directory, then are
//!   renamed into place: readers see a whole entry or none. Two processes
//!   writing the same key write identical bytes, so whichever rename lands
//!   last is as good as the first.
//! * **Size cap**: on a hit the entry's mtime is set to now; when the bytes
//!   written push the (estimated) size over the cap, the oldest entries are
//!   evicted down to three quarters of it (least recently used first).
//! * **Remote layer** ([`remote`], `--cache-url`): a shared store behind
//!   the directory. Reads go local first, then remote (a remote hit is
//!   also written locally); writes go to both. Remote entries are the same
//!   verified entry bytes; a failing server switches the layer off after
//!   one warning and never fails a run.
//! * **Permissions** follow the process's umask (entries `0o666 & !umask`,
//!   directories `0o777 & !umask`), as any file a program creates: a cache
//!   restored under another user id (a shared CI cache) is readable by
//!   every user the umask allows, so it hits. (Temporary files are private
//!   by default in `tempfile`; entries are not secrets.)
//! * **Failed writes** cost reuse, never the run: a put that did not leave
//!   the entry in place is counted as a put error (never as written), and
//!   the first one per directory prints ONE warning to stderr, plain text
//!   (no ANSI colour, which a log file or CI page would show as noise);
//!   the rest are counted only ([`DiskCache::write_warnings`]).
//! * Only files this cache creates are ever deleted (`*.entry` and stale
//!   temporaries in two-hex-digit subdirectories), so a mistaken
//!   `--cache-dir ~` cannot wipe anything else.

pub mod dir;
pub mod entry;
pub mod remote;
mod stats;

pub use dir::{DEFAULT_MAX_BYTES, default_dir, max_bytes_from_env};
pub use remote::Remote;
pub use stats::{QueryCounts, RemoteCounts, Stats, Usage};

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde::de::DeserializeOwned;

use stats::Counters;

/// The key of one entry: which query, which version of its pass, and the
/// blake3 hash of all three plus the inputs' canonical bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub query: String,
    pub version: u32,
    pub hash: [u8; 32],
}

impl Key {
    /// The key of `query` at pass `version` over `input`.
    pub fn new(query: &str, version: u32, input: &[u8]) -> Key {
        let mut h = Key::hasher(query, version);
        h.update(input);
        h.finish()
    }

    /// A streaming builder: feed the input bytes (it is an [`io::Write`],
    /// so serializers can write straight into it), then [`KeyHasher::finish`].
    pub fn hasher(query: &str, version: u32) -> KeyHasher {
        let mut h = blake3::Hasher::new();
        h.update(b"ptxeq-cache-key\0");
        h.update(&(query.len() as u64).to_le_bytes());
        h.update(query.as_bytes());
        h.update(&version.to_le_bytes());
        KeyHasher {
            query: query.to_string(),
            version,
            h,
        }
    }

    /// The hash as lowercase hex (the entry's file name).
    pub fn hex(&self) -> String {
        self.hash.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Builds a [`Key`] from input bytes fed in pieces.
pub struct KeyHasher {
    query: String,
    version: u32,
    h: blake3::Hasher,
}

impl KeyHasher {
    pub fn update(&mut self, bytes: &[u8]) -> &mut Self {
        self.h.update(bytes);
        self
    }

    /// Feeds the bincode encoding of `value` (serde): the canonical bytes
    /// of a query input, provided its serialization is deterministic (no
    /// hash maps). An error means the value cannot be keyed: the caller
    /// must not use the cache for it.
    pub fn update_serde<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<&mut Self, String> {
        bincode::serde::encode_into_std_write(value, self, config()).map_err(|e| e.to_string())?;
        Ok(self)
    }

    pub fn finish(&self) -> Key {
        Key {
            query: self.query.clone(),
            version: self.version,
            hash: *self.h.finalize().as_bytes(),
        }
    }
}

impl Write for KeyHasher {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.h.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The payload encoding: bincode (serde) with the standard configuration.
/// Changing it requires bumping [`entry::FORMAT_VERSION`].
fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// File name suffix of entries.
const ENTRY_SUFFIX: &str = ".entry";
/// File name prefix of temporary files (before the rename).
const TEMP_PREFIX: &str = ".tmp-";
/// A temporary file older than this was left by a crashed process.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// Re-measure the directory after this many puts (other processes write
/// too, and the in-process estimate only sees our own writes).
const RESCAN_EVERY_PUTS: u64 = 256;

/// One cache directory. Shared between threads (`&self` everywhere) and
/// safe to use from several processes at once.
#[derive(Debug)]
pub struct DiskCache {
    root: PathBuf,
    max_bytes: u64,
    counters: Arc<Counters>,
    /// Shared with [`scoped`](Self::scoped) handles.
    shared: Arc<Shared>,
    /// The shared remote layer, if any (`--cache-url`).
    remote: Option<Arc<Remote>>,
}

/// Size bookkeeping of one directory, shared by all handles on it.
#[derive(Debug, Default)]
struct Shared {
    /// Bytes on disk as last measured plus bytes written since.
    approx_bytes: AtomicU64,
    /// Whether `approx_bytes` includes what was on disk before this
    /// process: the directory is measured on the first write, not at
    /// open, so a process that only reads (a re-check over a warm cache)
    /// never lists a directory of any size.
    measured: std::sync::OnceLock<()>,
    puts_since_scan: AtomicU64,
    /// Warnings printed about failed writes to this directory (at most 1).
    write_warnings: AtomicU64,
}

impl DiskCache {
    /// Opens (creating it if needed) the cache at `dir`, capped at
    /// `max_bytes`.
    pub fn open(dir: impl Into<PathBuf>, max_bytes: u64) -> io::Result<DiskCache> {
        let root = dir.into();
        fs::create_dir_all(&root)?;
        // Fail now, not at the first write, on a path that is not a
        // readable directory.
        fs::read_dir(&root)?;
        Ok(DiskCache {
            root,
            max_bytes,
            counters: Arc::default(),
            shared: Arc::default(),
            remote: None,
        })
    }

    /// Another handle on the same directory with its own (zeroed)
    /// counters, e.g. to count the hits of one corpus case while cases
    /// run in parallel; everything it counts is also counted by `self`
    /// (so `--timings` shows the whole run). No directory scan.
    pub fn scoped(&self) -> DiskCache {
        DiskCache {
            root: self.root.clone(),
            max_bytes: self.max_bytes,
            counters: Arc::new(Counters::under(self.counters.clone())),
            shared: self.shared.clone(),
            remote: self.remote.clone(),
        }
    }

    /// This cache with `remote` as a layer behind the directory.
    pub fn with_remote(mut self, remote: Arc<Remote>) -> DiskCache {
        self.remote = Some(remote);
        self
    }

    /// The remote layer, if any.
    pub fn remote(&self) -> Option<&Remote> {
        self.remote.as_deref()
    }

    /// Opens the default cache ([`default_dir`], cap from
    /// `PTXEQ_CACHE_MAX_BYTES`); the error says what is missing.
    pub fn open_default() -> Result<DiskCache, String> {
        let dir = default_dir().ok_or_else(|| {
            "no cache directory: set PTXEQ_CACHE_DIR or HOME, or pass --cache-dir".to_string()
        })?;
        let max = max_bytes_from_env()?;
        DiskCache::open(&dir, max).map_err(|e| format!("cache directory {}: {e}", dir.display()))
    }

    /// The cache directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The size cap in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Where the entry of `key` lives.
    pub fn entry_path(&self, key: &Key) -> PathBuf {
        let hex = key.hex();
        self.root
            .join(&hex[..2])
            .join(format!("{}{ENTRY_SUFFIX}", &hex[2..]))
    }

    /// Whether an entry for `key` is on the local disk now. Counts
    /// nothing and asks no remote: a hint for work that may start before
    /// its value is needed (a pair check's early replays), not a lookup —
    /// the entry may fail verification or be evicted before it is read.
    pub fn has_local(&self, key: &Key) -> bool {
        self.entry_path(key).is_file()
    }

    /// Whether a remote layer is configured.
    pub fn has_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The payload stored under `key`, verified; `None` on a miss, on an
    /// unreadable file, or on an entry that fails verification (which is
    /// then deleted). With a remote layer, a local miss asks the remote;
    /// its verified entry is also stored locally.
    pub fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let path = self.entry_path(key);
        let mut rejected = false;
        if let Ok(bytes) = fs::read(&path) {
            match entry::decode(key, &bytes) {
                Ok(payload) => {
                    self.counters.hit(&key.query, bytes.len() as u64);
                    touch(&path);
                    return Some(payload.to_vec());
                }
                Err(_) => {
                    rejected = true;
                    // Best effort: another process may already have
                    // replaced it; losing a good entry only costs a
                    // recomputation.
                    let _ = fs::remove_file(&path);
                }
            }
        }
        if let Some(remote) = &self.remote {
            match remote.get(key) {
                remote::Fetched::Entry(bytes) => {
                    let n = bytes.len() as u64;
                    self.counters.remote(|r| {
                        r.hits += 1;
                        r.bytes_read += n;
                    });
                    if rejected {
                        self.counters.reject_then_found(&key.query);
                    }
                    self.counters.hit(&key.query, n);
                    // Keep a local copy (a failure only costs a later
                    // remote read).
                    let _ = self.store_local(key, &bytes);
                    let payload = entry::decode(key, &bytes).ok()?;
                    return Some(payload.to_vec());
                }
                remote::Fetched::Missing => self.counters.remote(|r| r.misses += 1),
                remote::Fetched::Rejected => {
                    self.counters.remote(|r| r.rejects += 1);
                    rejected = true;
                }
                remote::Fetched::Down => {}
            }
        }
        if rejected {
            self.counters.reject(&key.query);
        } else {
            self.counters.miss(&key.query);
        }
        None
    }

    /// Stores `payload` under `key` (atomically: temp file + rename), and
    /// in the remote layer when there is one.
    pub fn put(&self, key: &Key, payload: &[u8]) -> io::Result<()> {
        let bytes = entry::encode(key, payload);
        if let Some(remote) = &self.remote
            && remote.put(key, &bytes)
        {
            let n = bytes.len() as u64;
            self.counters.remote(|r| {
                r.puts += 1;
                r.bytes_written += n;
            });
        }
        let res = self.store_local(key, &bytes);
        match &res {
            Ok(()) => self.counters.put(bytes.len() as u64),
            Err(e) => {
                self.counters.put_error();
                self.warn_write_failed(e);
            }
        }
        res
    }

    /// The one warning per directory about a failed write; later failures
    /// are counted ([`Stats::put_errors`]) but not printed. Plain text on
    /// purpose: stderr is often a log file or a CI page, where colour
    /// codes are noise.
    fn warn_write_failed(&self, err: &io::Error) {
        if self.shared.write_warnings.load(Ordering::Relaxed) > 0 {
            return;
        }
        if self
            .shared
            .write_warnings
            .compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            eprintln!(
                "warning: cannot write the cache directory {} ({err}); results are not stored \
                 for later runs (every check still completes; --no-cache skips the cache)",
                self.root.display()
            );
        }
    }

    /// How many warnings about failed writes this directory's handles
    /// printed: 0, or 1 after the first failure however many follow.
    pub fn write_warnings(&self) -> u64 {
        self.shared.write_warnings.load(Ordering::Relaxed)
    }

    /// Writes whole entry bytes into the directory (and keeps the size
    /// bookkeeping and the cap); not counted (callers count). `Ok` means
    /// the entry is in place: a failure of the eviction that may follow is
    /// not a failure of this write (it is retried on a later put).
    fn store_local(&self, key: &Key, bytes: &[u8]) -> io::Result<()> {
        let path = self.entry_path(key);
        let dir = path.parent().unwrap_or(&self.root);
        self.shared.measured.get_or_init(|| {
            // A failed scan counts nothing; eviction rescans anyway.
            let before = self.usage().map_or(0, |u| u.bytes);
            self.shared
                .approx_bytes
                .fetch_add(before, Ordering::Relaxed);
        });
        write_atomically(dir, &path, bytes)?;
        let approx = self
            .shared
            .approx_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed)
            + bytes.len() as u64;
        let puts = self.shared.puts_since_scan.fetch_add(1, Ordering::Relaxed) + 1;
        if approx > self.max_bytes || puts >= RESCAN_EVERY_PUTS {
            self.shared.puts_since_scan.store(0, Ordering::Relaxed);
            // A failed scan leaves the estimate as it is; the next put over
            // the cap tries again.
            let _ = self.evict_to(self.max_bytes);
        }
        Ok(())
    }

    /// [`get`](Self::get), decoded with bincode; an undecodable payload is a
    /// reject (the entry is deleted).
    pub fn get_value<T: DeserializeOwned>(&self, key: &Key) -> Option<T> {
        let payload = self.get(key)?;
        match bincode::serde::decode_from_slice::<T, _>(&payload, config()) {
            Ok((v, used)) if used == payload.len() => Some(v),
            _ => {
                self.counters.undo_hit_as_reject(&key.query);
                let _ = fs::remove_file(self.entry_path(key));
                None
            }
        }
    }

    /// [`put`](Self::put) of the bincode encoding of `value`.
    pub fn put_value<T: Serialize + ?Sized>(&self, key: &Key, value: &T) -> io::Result<()> {
        let payload = bincode::serde::encode_to_vec(value, config())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        self.put(key, &payload)
    }

    /// This process's counters.
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// Entries and bytes on disk now (all processes' entries).
    pub fn usage(&self) -> io::Result<Usage> {
        let files = self.scan(false)?;
        Ok(Usage {
            entries: files.len() as u64,
            bytes: files.iter().map(|f| f.size).sum(),
        })
    }

    /// Whether a write would succeed now: creates (and removes) a temporary
    /// file where a put writes one — in a shard directory, created if
    /// missing — so `ptxeq cache stats` can say why results are not being
    /// stored (a read-only or foreign directory, a shard name taken by a
    /// file). A process's own failed writes are counted in
    /// [`Stats::put_errors`]; this is the check a later process can make.
    pub fn probe_write(&self) -> io::Result<()> {
        let dir = self.root.join("00");
        fs::create_dir_all(&dir)?;
        tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(&dir)
            .map(drop)
    }

    /// Deletes every entry (and stray temporaries); returns how many entries
    /// were removed. Files the cache did not create are left alone.
    pub fn clear(&self) -> io::Result<u64> {
        let files = self.scan(true)?;
        let mut removed = 0;
        for f in &files {
            if fs::remove_file(&f.path).is_ok() {
                removed += 1;
            }
        }
        for sub in self.subdirs()? {
            // Only empty ones go; anything foreign inside keeps its dir.
            let _ = fs::remove_dir(sub);
        }
        self.shared.approx_bytes.store(0, Ordering::Relaxed);
        Ok(removed)
    }

    /// Evicts least-recently-used entries until at most three quarters of
    /// `cap` remain, if the cache holds more than `cap`. Returns how many
    /// entries were evicted.
    pub fn evict_to(&self, cap: u64) -> io::Result<u64> {
        let mut files = self.scan(false)?;
        let mut total: u64 = files.iter().map(|f| f.size).sum();
        let mut evicted = 0;
        if total > cap {
            let target = cap / 4 * 3;
            files.sort_by(|a, b| a.mtime.cmp(&b.mtime).then_with(|| a.path.cmp(&b.path)));
            for f in files {
                if total <= target {
                    break;
                }
                match fs::remove_file(&f.path) {
                    Ok(()) => {
                        evicted += 1;
                        total -= f.size;
                    }
                    // Another process evicted it first.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => total -= f.size,
                    Err(_) => {}
                }
            }
            self.counters.evicted(evicted);
        }
        self.shared.approx_bytes.store(total, Ordering::Relaxed);
        Ok(evicted)
    }

    /// The two-hex-digit subdirectories.
    fn subdirs(&self) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for e in fs::read_dir(&self.root)? {
            let Ok(e) = e else { continue };
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.len() == 2
                && name.bytes().all(|b| b.is_ascii_hexdigit())
                && e.file_type().is_ok_and(|t| t.is_dir())
            {
                out.push(e.path());
            }
        }
        Ok(out)
    }

    /// Every entry file; stale temporaries are deleted on the way (all
    /// temporaries when `all_temps`).
    fn scan(&self, all_temps: bool) -> io::Result<Vec<FileInfo>> {
        let now = SystemTime::now();
        let mut out = Vec::new();
        for sub in self.subdirs()? {
            let Ok(rd) = fs::read_dir(&sub) else { continue };
            for e in rd.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                let Ok(meta) = e.metadata() else { continue };
                if !meta.is_file() {
                    continue;
                }
                let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if name.starts_with(TEMP_PREFIX) {
                    let stale = now.duration_since(mtime).is_ok_and(|age| age > STALE_TEMP);
                    if all_temps || stale {
                        let _ = fs::remove_file(e.path());
                    }
                } else if name.ends_with(ENTRY_SUFFIX) {
                    out.push(FileInfo {
                        path: e.path(),
                        size: meta.len(),
                        mtime,
                    });
                }
            }
        }
        Ok(out)
    }
}

struct FileInfo {
    path: PathBuf,
    size: u64,
    mtime: SystemTime,
}

/// Writes `bytes` to a temporary file in `dir` and renames it to `path`.
/// The file gets the permissions the umask gives a new file (see the
/// module doc, "Permissions").
fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Subject to the umask, like `File::create`.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    match tmp.persist(path) {
        Ok(_) => Ok(()),
        // Where rename cannot replace an existing file (Windows), another
        // writer got there first with the same bytes: as good as ours. On
        // Unix a rename replaces a file atomically, so a failure is a
        // failure even when something is at `path` (a directory, an entry
        // of another user): the write did not happen.
        Err(_) if cfg!(windows) && path.is_file() => Ok(()),
        Err(e) => Err(e.error),
    }
}

/// Marks an entry as just used (the LRU clock is the mtime).
fn touch(path: &Path) {
    if let Ok(f) = fs::File::options().write(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}
