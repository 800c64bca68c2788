//! The built template catalogue, stored and restored (issue 20).
//!
//! Building the catalogue (parsing ~9k lines of template PTX, extracting
//! every expansion, deriving the constant-exponent classes) costs about
//! 30 ms, paid by every process before its first recognition — most of a
//! small check's time. A front end with a disk cache stores the built
//! catalogue (serialised [`Template`]s) under a key made of
//! [`FINGERPRINT`], and a later process installs it instead of building.
//!
//! [`FINGERPRINT`] hashes (at build time, `build.rs`) everything the
//! catalogue is a function of: the template PTX files, this crate's code,
//! and the lowering, IR and parser code that turn the PTX into IR — so an
//! edit of any of them gives a new key and a stale catalogue is never
//! installed. `tests/catalogue.rs` checks that a stored catalogue read
//! back equals a freshly built one.

use serde::{Deserialize, Deserializer, Serializer};

use crate::template::Template;

/// Hash of the sources the catalogue is built from (see the module doc).
pub const FINGERPRINT: &str = env!("PTXEQ_IDIOMS_FINGERPRINT");

/// This process's catalogue (built now unless built or installed before).
pub fn catalogue() -> &'static [Template] {
    crate::library::templates()
}

/// Whether this process has its catalogue already (built or installed).
pub fn has_catalogue() -> bool {
    crate::library::is_built()
}

/// Installs a stored catalogue — one [`catalogue`] returned in a process
/// of this very build (same [`FINGERPRINT`]) — unless this process has one
/// already; true when installed.
pub fn install_catalogue(templates: Vec<Template>) -> bool {
    !templates.is_empty() && crate::library::install(templates)
}

/// Serde for a `&'static str` field: read back as a leaked string (the
/// catalogue lives as long as the process).
pub(crate) mod static_str {
    use super::*;

    pub fn serialize<S: Serializer>(s: &&'static str, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        Ok(leak(String::deserialize(d)?))
    }

    pub(super) fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }
}

/// Serde for a `&'static [&'static str]` field (as [`static_str`]).
pub(crate) mod static_strs {
    use super::*;
    use serde::Serialize;

    pub fn serialize<S: Serializer>(
        v: &&'static [&'static str],
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        v.serialize(ser)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<&'static [&'static str], D::Error> {
        let v: Vec<String> = Vec::deserialize(d)?;
        let v: Vec<&'static str> = v.into_iter().map(super::static_str::leak).collect();
        Ok(Box::leak(v.into_boxed_slice()))
    }
}
