//! Flags every subcommand takes (`--cache-dir`, `--no-cache`, `-v`,
//! `--timings`) and the process setup they imply: the disk cache that
//! every database of the run uses, and the tracing subscriber.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use ptxeq_cache::DiskCache;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::prelude::*;

use crate::timings;

#[derive(Args, Debug, Default, Clone)]
pub struct GlobalArgs {
    /// Directory of the disk cache of unrolled and symbolic CTAs
    /// (default: `$PTXEQ_CACHE_DIR`, else the user's cache directory
    /// `~/.cache/ptxeq`; size cap `$PTXEQ_CACHE_MAX_BYTES`, default 2 GiB).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the disk cache.
    #[arg(long, global = true, conflicts_with_all = ["cache_dir", "cache_url"])]
    pub no_cache: bool,
    /// A shared cache behind the disk cache, for runs over several
    /// machines: `redis://HOST:PORT[/DB]`, `file:///DIR` (e.g. NFS), or
    /// `s3://BUCKET/PREFIX` when built with it (default:
    /// `$PTXEQ_CACHE_URL`). Read after a local miss, written with every
    /// local write; a server that fails or does not answer is switched off
    /// for the run after one warning.
    #[arg(long, global = true, value_name = "URL")]
    pub cache_url: Option<String>,
    /// Time-out in seconds of one remote cache operation (default:
    /// `$PTXEQ_CACHE_TIMEOUT`, else 10).
    #[arg(long, global = true, value_name = "SECS", value_parser = ptxeq_cache::remote::parse_timeout)]
    pub cache_timeout: Option<std::time::Duration>,
    /// More log output on stderr (-v info, -vv debug, -vvv trace);
    /// `RUST_LOG` (e.g. `RUST_LOG=ptxeq_db=debug`) overrides it.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Print per-pass time, queries recomputed and disk-cache hits on
    /// stderr when the command ends.
    #[arg(long, global = true)]
    pub timings: bool,
    /// Syntax and lowering errors shown per file; the rest are counted.
    #[arg(long, global = true, value_name = "N",
          default_value_t = crate::diagnostics::DEFAULT_MAX_DIAGNOSTICS)]
    pub max_diagnostics: usize,
    /// Term-store memory the symbolic replays may hold at once, in MiB: a
    /// replay whose estimated store would exceed it waits until running
    /// ones finish (one always runs; 0: one at a time). Changes only when
    /// replays run, never a verdict; `--timings` says how long they waited.
    #[arg(long, global = true, value_name = "MIB",
          default_value_t = ptxeq_symex::replay_memory::DEFAULT_REPLAY_MEMORY_MIB)]
    pub replay_memory_mib: u64,
}

impl GlobalArgs {
    /// Applies the process-wide settings (`--replay-memory-mib`).
    pub fn apply_process_settings(&self) {
        ptxeq_symex::replay_memory::set_replay_memory_mib(self.replay_memory_mib);
    }

    /// Installs the tracing subscriber (and the timings layer).
    pub fn init_tracing(&self) {
        let level = match self.verbose {
            0 => "warn",
            1 => "info",
            2 => "debug",
            _ => "trace",
        };
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
        let fmt = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            // Colour only on a terminal: a log file or CI page shows codes.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_target(self.verbose >= 2)
            .with_filter(filter);
        let timing = self.timings.then(timings::layer);
        // A second `init` (tests) fails harmlessly.
        let _ = tracing_subscriber::registry()
            .with(fmt)
            .with(timing)
            .try_init();
    }

    /// The disk cache this run uses: `None` with `--no-cache`, or when the
    /// default directory cannot be opened (a warning then: the cache can
    /// only make a run faster, never decide one).
    pub fn open_cache(&self) -> Option<Arc<DiskCache>> {
        if self.no_cache {
            return None;
        }
        match self.try_open_cache() {
            Ok(c) => Some(Arc::new(c)),
            Err(e) => {
                eprintln!("warning: disk cache disabled: {e}");
                None
            }
        }
    }

    /// Opens the cache named by `--cache-dir` or the default one, with the
    /// remote layer of `--cache-url` / `PTXEQ_CACHE_URL` behind it (a bad
    /// URL is a warning: the local cache goes on alone).
    pub fn try_open_cache(&self) -> Result<DiskCache, String> {
        let local = self.try_open_local_cache()?;
        let url = self.cache_url.clone().or_else(|| {
            std::env::var(ptxeq_cache::remote::URL_ENV)
                .ok()
                .filter(|u| !u.trim().is_empty())
        });
        let Some(url) = url else {
            return Ok(local);
        };
        let timeout = match self.cache_timeout {
            Some(t) => Ok(t),
            None => ptxeq_cache::remote::timeout_from_env(),
        };
        match timeout.and_then(|t| ptxeq_cache::Remote::open(&url, t)) {
            Ok(r) => Ok(local.with_remote(Arc::new(r))),
            Err(e) => {
                eprintln!("warning: remote cache disabled: {e}");
                Ok(local)
            }
        }
    }

    /// The local directory alone.
    fn try_open_local_cache(&self) -> Result<DiskCache, String> {
        match &self.cache_dir {
            Some(dir) => {
                let max = ptxeq_cache::max_bytes_from_env()?;
                DiskCache::open(dir, max)
                    .map_err(|e| format!("cache directory {}: {e}", dir.display()))
            }
            None => DiskCache::open_default(),
        }
    }
}
