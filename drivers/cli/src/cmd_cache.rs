//! `ptxeq cache stats|clear|path`: inspect and empty the disk cache.

use clap::Subcommand;

use crate::exit::Exit;
use crate::global::GlobalArgs;

#[derive(Subcommand, Debug, Clone, Copy)]
pub enum CacheAction {
    /// Entries and bytes on disk, the size cap, and whether writes work.
    Stats,
    /// Delete every cache entry (files ptxeq did not write are kept).
    Clear,
    /// Print the cache directory.
    Path,
}

pub fn run(action: CacheAction, global: &GlobalArgs) -> Exit {
    if global.no_cache {
        eprintln!("error: `ptxeq cache` with --no-cache has no cache to work on");
        return Exit::Invalid;
    }
    let cache = match global.try_open_cache() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Exit::Invalid;
        }
    };
    match action {
        CacheAction::Path => outln!("{}", cache.path().display()),
        CacheAction::Stats => match cache.usage() {
            Ok(u) => {
                outln!("directory: {}", cache.path().display());
                outln!("entries:   {}", u.entries);
                outln!("size:      {} ({} bytes)", human_bytes(u.bytes), u.bytes);
                outln!(
                    "cap:       {} (least recently used entries are evicted beyond it)",
                    human_bytes(cache.max_bytes())
                );
                // Failed writes of earlier runs were counted there (their
                // `--timings`); whether writes work now can be checked here.
                match cache.probe_write() {
                    Ok(()) => outln!("writable:  yes"),
                    Err(e) => {
                        outln!("writable:  no ({e}): checks run, but their results are not stored")
                    }
                }
            }
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", cache.path().display());
                return Exit::Invalid;
            }
        },
        CacheAction::Clear => match cache.clear() {
            Ok(n) => outln!("removed {n} entries from {}", cache.path().display()),
            Err(e) => {
                eprintln!("error: cannot clear {}: {e}", cache.path().display());
                return Exit::Invalid;
            }
        },
    }
    Exit::Ok
}

/// `1.5 MiB`-style sizes.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(2 << 30), "2.0 GiB");
    }
}
