//! Where each key of a spec was written, so that an error found only when
//! the spec meets the kernel (a param count, a scalar that does not fit its
//! param, an entry that does not exist) can point at the spec line, as a
//! parse error does: `check.toml:14:5: [scalars] n = 2147483648 does not fit
//! a .s32 param`.
//!
//! Keys are dotted paths: `scalars.n`, `tensors.x`, `reference.ptx`,
//! `reference.entry`, `reference.params` (the list) and `reference.params.2`
//! (one entry, 0-based). A spec built from flags has no locations; callers
//! then name the key alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::LineCol;
use crate::raw::{RawKernel, RawSpec};

/// The positions of a spec's keys (see the module doc).
///
/// Positions are not part of a spec's identity, as PTX positions are kept
/// out of the IR: two specs that say the same thing are equal (and hash
/// alike) wherever their keys were written, and a spec built from flags
/// equals the same spec read from TOML. Every `SpecLocations` is equal.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SpecLocations {
    /// The spec file, once [`CheckSpec::load`](crate::CheckSpec::load) read one.
    pub file: Option<PathBuf>,
    /// Dotted key path → where its value starts.
    pub keys: BTreeMap<String, LineCol>,
}

impl PartialEq for SpecLocations {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for SpecLocations {}

impl std::hash::Hash for SpecLocations {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl SpecLocations {
    /// Where `key` was written, as `file:line:col` (or `line:col` for a
    /// spec read from a string); `None` when unknown.
    pub fn get(&self, key: &str) -> Option<String> {
        let at = self.keys.get(key)?;
        Some(match &self.file {
            Some(f) => format!("{}:{at}", f.display()),
            None => at.to_string(),
        })
    }

    /// `message` prefixed with where `key` was written, when known: the
    /// form every "the spec does not fit the kernel" error takes.
    pub fn at(&self, key: &str, message: impl std::fmt::Display) -> String {
        match self.get(key) {
            Some(at) => format!("{at}: {message}"),
            None => message.to_string(),
        }
    }

    pub(crate) fn with_file(mut self, path: &Path) -> Self {
        self.file = Some(path.to_path_buf());
        self
    }

    /// The locations of `raw`'s keys in `text`.
    pub(crate) fn of(raw: &RawSpec, text: &str) -> SpecLocations {
        let mut keys = BTreeMap::new();
        let mut put = |key: String, start: usize| {
            keys.insert(key, LineCol::of(text, start));
        };
        for (role, k) in [
            ("reference", &raw.reference),
            ("candidate", &raw.candidate),
            ("kernel", &raw.kernel),
        ] {
            let Some(k) = k else { continue };
            put(role.to_owned(), k.span().start);
            let k: &RawKernel = k.get_ref();
            if let Some(v) = &k.ptx {
                put(format!("{role}.ptx"), v.span().start);
            }
            if let Some(v) = &k.entry {
                put(format!("{role}.entry"), v.span().start);
            }
            if let Some(v) = k.launch.as_ref().and_then(|l| l.get_ref().cluster.as_ref()) {
                put(format!("{role}.launch.cluster"), v.span().start);
            }
            if let Some(v) = &k.params {
                put(format!("{role}.params"), v.span().start);
                for (i, p) in v.get_ref().iter().enumerate() {
                    put(format!("{role}.params.{i}"), p.span().start);
                }
            }
        }
        if let Some(v) = raw
            .launch
            .as_ref()
            .and_then(|l| l.get_ref().cluster.as_ref())
        {
            put("launch.cluster".to_owned(), v.span().start);
        }
        for (name, v) in &raw.scalars {
            put(format!("scalars.{}", name.get_ref()), v.span().start);
        }
        for (name, v) in &raw.tensors {
            put(format!("tensors.{}", name.get_ref()), v.span().start);
        }
        for (name, v) in &raw.tensor_maps {
            put(format!("tensor_maps.{}", name.get_ref()), v.span().start);
        }
        SpecLocations { file: None, keys }
    }
}
