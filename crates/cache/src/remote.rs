//! A shared remote layer behind the disk cache (`--cache-url`,
//! `PTXEQ_CACHE_URL`): every machine of a sharded run reads what the others
//! decided.
//!
//! Storage goes through `opendal` (the storage layer sccache uses), with
//! only the services ptxeq names compiled in: `redis://` and `file://`
//! always, `s3://` with the crate feature `s3` (it brings an HTTP client
//! and TLS). The bytes stored are exactly the disk cache's entry files
//! ([`crate::entry`]): a remote entry is verified like a local one (magic,
//! layout version, key, pass version, payload length and blake3), and
//! anything that does not verify is a miss — never trusted. A rejected
//! remote entry is not deleted (a concurrent writer may just have replaced
//! it with good bytes); the recomputed value's write overwrites it.
//!
//! * **Atomic writes**: Redis `SET` and an S3 `PUT` replace a value whole;
//!   the `file://` service writes a temporary file and renames it
//!   (`atomic_write_dir`). Writers of one key write identical bytes.
//! * **Faults never decide anything**: every operation runs under a
//!   time-out (`--cache-timeout`, default [`DEFAULT_TIMEOUT`]); the first
//!   error or time-out prints ONE warning and switches the remote layer
//!   off for the rest of the process, so a dead or black-holed server costs
//!   at most one time-out per process. The local disk cache and the
//!   computation go on as without a server.
//!
//! The blocking [`crate::DiskCache`] API is kept: operations are driven on
//! a private one-worker tokio runtime with `block_on` from the caller's
//! thread (rayon workers, never inside an async context).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opendal_core::Operator;

use crate::Key;

/// Environment variable naming the remote cache (`--cache-url` wins).
pub const URL_ENV: &str = "PTXEQ_CACHE_URL";

/// Environment variable of the per-operation time-out in seconds
/// (`--cache-timeout` wins).
pub const TIMEOUT_ENV: &str = "PTXEQ_CACHE_TIMEOUT";

/// Default per-operation time-out: long enough for a symbolic state of
/// tens of MB over a LAN, short enough that a black-holed server costs a
/// run little (it is paid once: the layer then switches off).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Key prefix under which entries are stored (a Redis key is
/// `ptxeq/v1/ab/cdef…entry`), so one server can hold other data too.
const PREFIX: &str = "ptxeq/v1";

/// The remote layer of one process.
pub struct Remote {
    op: Operator,
    rt: tokio::runtime::Runtime,
    timeout: Duration,
    /// The URL with any password masked (for messages).
    shown: String,
    /// Set by the first failure: no further operation is attempted.
    down: AtomicBool,
    /// A TCP address to try once before the first operation (Redis): a
    /// refused or unanswered connect switches the layer off at once,
    /// instead of after the client's own retries.
    probe: Option<(String, u16)>,
    probed: std::sync::Once,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("url", &self.shown)
            .field("timeout", &self.timeout)
            .field("down", &self.down.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// What a remote read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The entry's verified bytes (header and payload, as stored).
    Entry(Vec<u8>),
    /// No such key.
    Missing,
    /// Present but failed verification (counted as a reject).
    Rejected,
    /// The layer is off (this or an earlier operation failed).
    Down,
}

impl Remote {
    /// Opens the remote named by `url`. Only the configuration is checked
    /// here (scheme, host, path); the server is first contacted by the
    /// first read, so a server that is down costs nothing at start-up.
    pub fn open(url: &str, timeout: Duration) -> Result<Remote, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("cache URL `{url}`: {e}"))?;
        let shown = masked(&parsed);
        let op = operator(&parsed).map_err(|e| format!("cache URL {shown}: {e}"))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ptxeq-cache-remote")
            .enable_all()
            .build()
            .map_err(|e| format!("cache URL {shown}: cannot start the I/O runtime: {e}"))?;
        let probe = match parsed.scheme() {
            "redis" => parsed
                .host_str()
                .map(|h| (h.to_string(), parsed.port().unwrap_or(6379))),
            _ => None,
        };
        Ok(Remote {
            op,
            rt,
            timeout,
            shown,
            down: AtomicBool::new(false),
            probe,
            probed: std::sync::Once::new(),
        })
    }

    /// The URL as shown in messages (password masked).
    pub fn url(&self) -> &str {
        &self.shown
    }

    /// Whether a failure switched the layer off.
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Where `key`'s entry lives on the remote.
    pub fn path(key: &Key) -> String {
        let hex = key.hex();
        format!("{PREFIX}/{}/{}.entry", &hex[..2], &hex[2..])
    }

    /// Reads and verifies the entry of `key`.
    pub fn get(&self, key: &Key) -> Fetched {
        if self.is_down() {
            return Fetched::Down;
        }
        let path = Remote::path(key);
        let res = self.run("read", async { self.op.read(&path).await });
        match res {
            Ok(buf) => {
                let bytes = buf.to_vec();
                match crate::entry::decode(key, &bytes) {
                    Ok(_) => Fetched::Entry(bytes),
                    Err(_) => Fetched::Rejected,
                }
            }
            Err(Failure::NotFound) => Fetched::Missing,
            Err(Failure::Down) => Fetched::Down,
        }
    }

    /// Stores whole entry bytes (as [`crate::entry::encode`] made them)
    /// under `key`; `false` when the layer is (now) off.
    pub fn put(&self, key: &Key, entry: &[u8]) -> bool {
        if self.is_down() {
            return false;
        }
        let path = Remote::path(key);
        let bytes = entry.to_vec();
        self.run("write", async { self.op.write(&path, bytes).await })
            .is_ok()
    }

    /// Runs one operation under the time-out; the first failure of any kind
    /// but "not found" switches the layer off with one warning.
    fn run<T>(
        &self,
        what: &str,
        fut: impl std::future::Future<Output = opendal_core::Result<T>>,
    ) -> Result<T, Failure> {
        self.probed.call_once(|| self.probe_server());
        if self.is_down() {
            return Err(Failure::Down);
        }
        let res = self
            .rt
            .block_on(async { tokio::time::timeout(self.timeout, fut).await });
        let err = match res {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) if e.kind() == opendal_core::ErrorKind::NotFound => {
                return Err(Failure::NotFound);
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {:.1} s", self.timeout.as_secs_f64()),
        };
        self.fail(what, &err);
        Err(Failure::Down)
    }

    /// Switches the layer off; the first call prints the one warning.
    fn fail(&self, what: &str, err: &str) {
        if !self.down.swap(true, Ordering::Relaxed) {
            eprintln!(
                "warning: remote cache {} failed ({what}: {err}); going on without it for the \
                 rest of this run (results are unaffected, only slower)",
                self.shown
            );
        }
    }

    /// One TCP connect to the server, bounded by the time-out.
    fn probe_server(&self) {
        use std::net::{TcpStream, ToSocketAddrs};
        let Some((host, port)) = &self.probe else {
            return;
        };
        let addrs: Vec<_> = match (host.as_str(), *port).to_socket_addrs() {
            Ok(a) => a.collect(),
            Err(e) => return self.fail("connect", &format!("cannot resolve {host}: {e}")),
        };
        let mut last = format!("{host} has no address");
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.timeout) {
                Ok(_) => return,
                Err(e) => last = format!("{a}: {e}"),
            }
        }
        self.fail("connect", &last);
    }
}

enum Failure {
    NotFound,
    Down,
}

/// The URL with its password replaced by `***`.
fn masked(url: &url::Url) -> String {
    let mut u = url.clone();
    if u.password().is_some() {
        let _ = u.set_password(Some("***"));
    }
    u.to_string()
}

/// The opendal operator of a cache URL.
fn operator(url: &url::Url) -> Result<Operator, String> {
    match url.scheme() {
        "redis" | "rediss" => redis(url),
        "file" => {
            let root = url
                .to_file_path()
                .map_err(|()| "a file:// URL needs an absolute local path".to_string())?;
            let root = root.to_string_lossy().into_owned();
            // Writes land in a temporary file beside the entries, then
            // are renamed into place (atomic on one file system).
            let tmp = format!("{}/.tmp", root.trim_end_matches('/'));
            let b = opendal_service_fs::Fs::default()
                .root(&root)
                .atomic_write_dir(&tmp);
            Operator::new(b).map_err(|e| e.to_string())
        }
        "s3" => s3(url),
        other => Err(format!(
            "unknown scheme `{other}`: use redis://HOST:PORT[/DB], file:///DIR or s3://BUCKET[/PREFIX]"
        )),
    }
}

/// `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`.
fn redis(url: &url::Url) -> Result<Operator, String> {
    if url.scheme() == "rediss" {
        return Err("rediss:// (TLS) is not built in: use a TLS tunnel to redis://".into());
    }
    let host = url
        .host_str()
        .ok_or_else(|| "a redis:// URL needs a host".to_string())?;
    let port = url.port().unwrap_or(6379);
    let mut b = opendal_service_redis::Redis::default().endpoint(&format!("tcp://{host}:{port}"));
    let db = url.path().trim_matches('/');
    if !db.is_empty() {
        let db: i64 = db
            .parse()
            .map_err(|_| format!("redis database `{db}` is not a number"))?;
        b = b.db(db);
    }
    if !url.username().is_empty() {
        b = b.username(url.username());
    }
    if let Some(p) = url.password() {
        b = b.password(p);
    }
    Operator::new(b).map_err(|e| e.to_string())
}

#[cfg(feature = "s3")]
/// `s3://BUCKET[/PREFIX]`; region, endpoint and credentials come from the
/// usual `AWS_*` environment variables (`AWS_REGION`, `AWS_ENDPOINT_URL`
/// for S3-compatible stores such as MinIO, `AWS_ACCESS_KEY_ID`, ...).
fn s3(url: &url::Url) -> Result<Operator, String> {
    let bucket = url
        .host_str()
        .ok_or_else(|| "an s3:// URL needs a bucket".to_string())?;
    let mut b = opendal_service_s3::S3::default()
        .bucket(bucket)
        .root(url.path());
    if let Ok(region) = std::env::var("AWS_REGION") {
        b = b.region(&region);
    }
    if let Ok(ep) = std::env::var("AWS_ENDPOINT_URL") {
        b = b.endpoint(&ep);
    }
    // S3 speaks HTTP: install opendal's reqwest transport (process-wide).
    opendal_http_transport_reqwest::install_default();
    Operator::new(b).map_err(|e| e.to_string())
}

#[cfg(not(feature = "s3"))]
fn s3(_url: &url::Url) -> Result<Operator, String> {
    Err(
        "this ptxeq was built without s3:// support (build with the ptxeq-cache feature `s3`)"
            .into(),
    )
}

/// The time-out from `PTXEQ_CACHE_TIMEOUT` (seconds), or the default.
pub fn timeout_from_env() -> Result<Duration, String> {
    match std::env::var(TIMEOUT_ENV) {
        Ok(v) => parse_timeout(&v).map_err(|e| format!("{TIMEOUT_ENV}: {e}")),
        Err(_) => Ok(DEFAULT_TIMEOUT),
    }
}

/// Seconds (fractions allowed), positive.
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!(
            "`{s}`: the time-out must be a positive number of seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_passwords_masked() {
        assert!(Remote::open("redis://127.0.0.1:1/0", DEFAULT_TIMEOUT).is_ok());
        let r = Remote::open("redis://u:secret@127.0.0.1:1", DEFAULT_TIMEOUT).unwrap();
        assert!(!r.url().contains("secret"), "{}", r.url());
        let e = Remote::open("ftp://x/y", DEFAULT_TIMEOUT).unwrap_err();
        assert!(e.contains("unknown scheme `ftp`"), "{e}");
        let e = Remote::open("redis://h/notanumber", DEFAULT_TIMEOUT).unwrap_err();
        assert!(e.contains("not a number"), "{e}");
        assert!(Remote::open("not a url", DEFAULT_TIMEOUT).is_err());
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("x").is_err());
        assert_eq!(parse_timeout("0.5"), Ok(Duration::from_millis(500)));
    }

    /// A server that refuses connections: one failure, then the layer is
    /// off and answers at once without trying again.
    #[test]
    fn a_dead_server_is_a_miss_and_switches_the_layer_off() {
        // Port 1 on loopback: nothing listens there (connection refused).
        let r = Remote::open("redis://127.0.0.1:1", Duration::from_secs(5)).unwrap();
        let key = Key::new("q", 1, b"x");
        assert_eq!(r.get(&key), Fetched::Down);
        assert!(r.is_down());
        let t = std::time::Instant::now();
        assert_eq!(r.get(&key), Fetched::Down);
        assert!(!r.put(&key, b"entry"));
        assert!(t.elapsed() < Duration::from_millis(50));
    }

    /// A server that accepts connections but never answers (a hung or
    /// black-holed Redis): the read gives up after the time-out, once.
    #[test]
    fn a_silent_server_times_out_once() {
        // Connections complete in the listener's backlog; nothing replies.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        let r = Remote::open(
            &format!("redis://127.0.0.1:{port}"),
            Duration::from_millis(300),
        )
        .unwrap();
        let key = Key::new("q", 1, b"x");
        let t = std::time::Instant::now();
        assert_eq!(r.get(&key), Fetched::Down);
        let first = t.elapsed();
        assert!(first >= Duration::from_millis(300), "{first:?}");
        assert!(first < Duration::from_secs(5), "{first:?}");
        let t = std::time::Instant::now();
        assert_eq!(r.get(&key), Fetched::Down);
        assert!(!r.put(&key, b"entry"));
        assert!(t.elapsed() < Duration::from_millis(50));
        drop(silent);
    }

    /// The file:// backend: round trip, verification, corrupt entries.
    #[test]
    fn file_backend_round_trip_and_rejects() {
        let dir = tempfile::tempdir().unwrap();
        let url = url::Url::from_directory_path(dir.path()).unwrap();
        let r = Remote::open(url.as_str(), DEFAULT_TIMEOUT).unwrap();
        let key = Key::new("q", 1, b"x");
        assert_eq!(r.get(&key), Fetched::Missing);
        let bytes = crate::entry::encode(&key, b"payload");
        assert!(r.put(&key, &bytes));
        assert_eq!(r.get(&key), Fetched::Entry(bytes.clone()));
        // Flip one payload byte on the remote: a reject, not a hit.
        let path = dir.path().join(Remote::path(&key));
        let mut bad = std::fs::read(&path).unwrap();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(r.get(&key), Fetched::Rejected);
        assert!(!r.is_down());
        // Another key's entry copied over this one: rejected too.
        let other = Key::new("q", 2, b"x");
        std::fs::write(&path, crate::entry::encode(&other, b"payload")).unwrap();
        assert_eq!(r.get(&key), Fetched::Rejected);
    }
}
