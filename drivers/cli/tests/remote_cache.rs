//! The shared cache against a real Redis server, and sharded corpus runs.
//!
//! Starts `redis-server` on a free loopback port (skipped, with a message,
//! when it is not installed: `.ci/run` installs it), then:
//!
//! 1. two shards of a corpus subset run at the same time against it, each
//!    with an empty local cache (as on two machines): cold;
//! 2. the same two shards again with empty local caches: every cache read
//!    is a remote hit, none a miss — the second run decides nothing;
//! 3. every remote entry corrupted: a run treats them as misses (rejects)
//!    and reaches the same verdicts;
//! 4. the server killed while a run is under way: one warning, the run
//!    completes with the same verdicts; a run against the dead server too.
//!
//! The merged shard reports must equal the unsharded run's summary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::repo;

/// A few quick cases that do write cache entries (unrolled CTAs, symbolic
/// states), of several families.
const SUBSET: [&str; 6] = [
    "races/missing-barrier-reverse",
    "races/missing-barrier-reverse-fixed",
    "races/overlap-off-by-one",
    "races/overlap-off-by-one-fixed",
    "races/uninit-shared-tail-fixed",
    "races/global-write-write",
];

fn corpus_args(extra: &[&str]) -> Vec<String> {
    let mut a = vec!["corpus".to_string(), "corpus".to_string()];
    for c in SUBSET {
        a.push("--filter".into());
        a.push(c.into());
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn ptxeq(local: &Path, url: &str, args: &[String]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ptxeq"));
    c.args(args)
        .env("PTXEQ_CACHE_DIR", local)
        .env("PTXEQ_CACHE_URL", url)
        .env("PTXEQ_CACHE_TIMEOUT", "5")
        .current_dir(repo());
    c
}

struct Out {
    code: i32,
    stderr: String,
    json: serde_json::Value,
}

/// Runs `ptxeq corpus` (one shard or all) with a fresh local cache dir.
fn corpus(url: &str, shard: Option<&str>, json: &Path) -> Out {
    let local = tempfile::tempdir().unwrap();
    let mut extra = vec!["--json", json.to_str().unwrap(), "--timings", "-j", "1"];
    if let Some(s) = shard {
        extra.extend(["--shard", s]);
    }
    let out = ptxeq(local.path(), url, &corpus_args(&extra))
        .output()
        .unwrap();
    read_out(out.status.code().unwrap_or(-1), &out.stderr, json)
}

fn read_out(code: i32, stderr: &[u8], json: &Path) -> Out {
    let stderr = String::from_utf8_lossy(stderr).into_owned();
    let json = std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    Out { code, stderr, json }
}

/// Two shards at once (as on two machines); returns both.
fn two_shards(url: &str, dir: &Path, tag: &str) -> [Out; 2] {
    let spawn = |i: u32| {
        let local = tempfile::tempdir().unwrap();
        let json = dir.join(format!("{tag}-{i}.json"));
        let shard = format!("{i}/2");
        let args = corpus_args(&[
            "--json",
            json.to_str().unwrap(),
            "--shard",
            &shard,
            "-j",
            "1",
            "--timings",
        ]);
        let child = ptxeq(local.path(), url, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        (child, json, local)
    };
    let a = spawn(0);
    let b = spawn(1);
    let finish = |(child, json, _local): (Child, PathBuf, tempfile::TempDir)| {
        let out = child.wait_with_output().unwrap();
        read_out(out.status.code().unwrap_or(-1), &out.stderr, &json)
    };
    [finish(a), finish(b)]
}

/// (name, class, got) of every case: what must not change.
fn verdicts(json: &serde_json::Value) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = json["cases"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or("").to_string(),
                        c["class"].as_str().unwrap_or("").to_string(),
                        c["got"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn sum(json: &serde_json::Value, field: &str) -> u64 {
    json["summary"][field].as_u64().unwrap_or(u64::MAX)
}

/// A redis-server on a free loopback port, killed on drop.
struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Option<Server> {
        let port = TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.path().to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let s = Server {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if s.command(&["PING"]).is_some_and(|r| r.contains("PONG")) {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not answer on port {port} within 20 s");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// One command in RESP; the raw reply (enough for the few we need).
    fn command(&self, args: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut req = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a.as_bytes());
            req.extend_from_slice(b"\r\n");
        }
        s.write_all(&req).ok()?;
        s.shutdown(std::net::Shutdown::Write).ok()?;
        // QUIT is not sent: read what the one reply brings, up to a pause.
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(_) => break,
            }
        }
        Some(String::from_utf8_lossy(&out).into_owned())
    }

    /// Every key the cache stored.
    fn keys(&self) -> Vec<String> {
        let reply = self.command(&["KEYS", "*ptxeq/v1/*"]).unwrap_or_default();
        reply
            .split("\r\n")
            .filter(|l| l.contains("ptxeq/v1/"))
            .map(str::to_string)
            .collect()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

fn have_redis() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn sharded_runs_share_a_redis_cache_and_survive_its_faults() {
    if !have_redis() {
        eprintln!(
            "SKIPPED: redis-server is not installed (apt-get install redis-server); \
             the shared-cache test needs a real server"
        );
        return;
    }
    let Some(mut server) = Server::start() else {
        eprintln!("SKIPPED: redis-server would not start on a loopback port");
        return;
    };
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();

    // The unsharded reference run, without any remote.
    let whole = corpus("", None, &dir.path().join("whole.json"));
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    let expected = verdicts(&whole.json);
    assert!(expected.len() >= SUBSET.len(), "{}", whole.stderr);

    // 1. Cold: two shards at once fill the server.
    let cold = two_shards(&url, dir.path(), "cold");
    for s in &cold {
        assert_eq!(s.code, 0, "{}", s.stderr);
        assert!(!s.stderr.contains("warning: remote cache"), "{}", s.stderr);
    }
    let cold_misses: u64 = cold.iter().map(|s| sum(&s.json, "cache_misses")).sum();
    assert!(cold_misses > 0, "a cold run must miss");
    assert!(
        !server.keys().is_empty(),
        "nothing was written to the server"
    );
    let merged = dir.path().join("merged.json");
    let m = Command::new(env!("CARGO_BIN_EXE_ptxeq"))
        .args(["corpus", "merge", "--json", merged.to_str().unwrap()])
        .arg(dir.path().join("cold-0.json"))
        .arg(dir.path().join("cold-1.json"))
        .output()
        .unwrap();
    assert_eq!(
        m.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&m.stderr)
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(verdicts(&merged), expected);
    for f in ["cases", "passed", "failed", "undecided", "pending"] {
        assert_eq!(merged["summary"][f], whole.json["summary"][f], "{f}");
    }

    // 2. Warm: empty local caches, every read a remote hit.
    let warm = two_shards(&url, dir.path(), "warm");
    let mut hits = 0;
    for s in &warm {
        assert_eq!(s.code, 0, "{}", s.stderr);
        assert_eq!(sum(&s.json, "cache_misses"), 0, "{}", s.stderr);
        assert_eq!(
            sum(&s.json, "remote_hits"),
            sum(&s.json, "cache_hits"),
            "{}",
            s.stderr
        );
        assert!(s.stderr.contains("remote cache (redis://"), "{}", s.stderr);
        hits += sum(&s.json, "remote_hits");
    }
    assert!(hits > 0);
    let mut warm_verdicts: Vec<_> = warm.iter().flat_map(|s| verdicts(&s.json)).collect();
    warm_verdicts.sort();
    assert_eq!(warm_verdicts, expected);

    // 3. Corrupt every entry (one byte appended: the payload no longer
    //    matches its length and digest): misses, same verdicts.
    let keys = server.keys();
    assert!(!keys.is_empty());
    for k in &keys {
        let r = server.command(&["APPEND", k, "x"]).unwrap();
        assert!(r.starts_with(':'), "APPEND {k}: {r}");
    }
    let bad = corpus(&url, None, &dir.path().join("corrupt.json"));
    assert_eq!(bad.code, 0, "{}", bad.stderr);
    assert_eq!(verdicts(&bad.json), expected);
    assert_eq!(sum(&bad.json, "remote_hits"), 0, "{}", bad.stderr);
    assert!(sum(&bad.json, "cache_misses") > 0);
    let remote_line = bad
        .stderr
        .lines()
        .find(|l| l.starts_with("remote cache ("))
        .unwrap_or_default();
    assert!(
        remote_line.contains(" misses, ") && !remote_line.contains(" 0 rejected"),
        "{}",
        bad.stderr
    );

    // 4. Kill the server while a run is under way (after its first case).
    server.command(&["FLUSHALL"]).unwrap();
    let local = tempfile::tempdir().unwrap();
    let json = dir.path().join("killed.json");
    let mut child = ptxeq(
        local.path(),
        &url,
        &corpus_args(&["--json", json.to_str().unwrap(), "-j", "1"]),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut log = String::new();
    let mut line = String::new();
    while err.read_line(&mut line).unwrap_or(0) > 0 {
        log.push_str(&line);
        let first_case_done = line.starts_with("[1/");
        line.clear();
        if first_case_done {
            server.kill();
            break;
        }
    }
    err.read_to_string(&mut log).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    assert_eq!(code, 0, "{log}");
    let killed = read_out(code, b"", &json);
    assert_eq!(verdicts(&killed.json), expected, "{log}");
    assert_eq!(
        log.matches("warning: remote cache").count(),
        1,
        "one warning, and only one: {log}"
    );

    // 5. A server that is down from the start: one warning, same verdicts.
    let down = corpus(&url, None, &dir.path().join("down.json"));
    assert_eq!(down.code, 0, "{}", down.stderr);
    assert_eq!(verdicts(&down.json), expected);
    assert_eq!(
        down.stderr.matches("warning: remote cache").count(),
        1,
        "{}",
        down.stderr
    );
}
