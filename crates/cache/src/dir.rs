//! Where the cache lives by default.
//!
//! `PTXEQ_CACHE_DIR` wins; otherwise the platform's per-user cache
//! directory (`$XDG_CACHE_HOME`, `~/.cache`, `~/Library/Caches` on macOS,
//! `%LOCALAPPDATA%` on Windows) with a `ptxeq` subdirectory. Resolved by
//! hand from the environment: four variables do not justify a dependency.

use std::path::PathBuf;

/// Environment variable that overrides the cache directory.
pub const DIR_ENV: &str = "PTXEQ_CACHE_DIR";

/// Environment variable that overrides the size cap (bytes).
pub const MAX_BYTES_ENV: &str = "PTXEQ_CACHE_MAX_BYTES";

/// Default size cap: 2 GiB (a symbolic state of the largest corpus kernel
/// is tens of MB; this keeps a few hundred kernels' worth).
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// The default cache directory, or `None` when the environment names no
/// home or cache directory at all.
pub fn default_dir() -> Option<PathBuf> {
    default_dir_from(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
}

/// [`default_dir`] over an arbitrary environment (testable).
pub fn default_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(d) = env(DIR_ENV) {
        return Some(PathBuf::from(d));
    }
    let base = if let Some(x) = env("XDG_CACHE_HOME") {
        PathBuf::from(x)
    } else if cfg!(windows) {
        PathBuf::from(env("LOCALAPPDATA")?)
    } else if cfg!(target_os = "macos") {
        PathBuf::from(env("HOME")?).join("Library/Caches")
    } else {
        PathBuf::from(env("HOME")?).join(".cache")
    };
    Some(base.join("ptxeq"))
}

/// The size cap from `PTXEQ_CACHE_MAX_BYTES`, or the default. An
/// unparsable value is an error message (the CLI reports it).
pub fn max_bytes_from_env() -> Result<u64, String> {
    match std::env::var(MAX_BYTES_ENV) {
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{MAX_BYTES_ENV}={v:?} is not a number of bytes")),
        Err(_) => Ok(DEFAULT_MAX_BYTES),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn override_then_xdg_then_home() {
        assert_eq!(
            default_dir_from(env(&[(DIR_ENV, "/c"), ("XDG_CACHE_HOME", "/x")])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            default_dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/ptxeq"))
        );
        if cfg!(all(unix, not(target_os = "macos"))) {
            assert_eq!(
                default_dir_from(env(&[("HOME", "/h")])),
                Some(PathBuf::from("/h/.cache/ptxeq"))
            );
            assert_eq!(default_dir_from(env(&[])), None);
        }
    }
}
