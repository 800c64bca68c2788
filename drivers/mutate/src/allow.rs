//! The reviewed allow-list (`drivers/mutate/allow.toml`): mutants that
//! survive although their instruction runs and its result is read, each
//! examined by hand and found equivalent, with a one-line reason.
//!
//! ```toml
//! [[allow]]
//! case = "softmax/naive-vs-online-n128"
//! mutant = "flip-cmp:40:bound"
//! reason = "the loop bound compares a multiple of 4 with 128: lt and le agree"
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    allow: Vec<Entry>,
}

/// One reviewed survivor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub case: String,
    pub mutant: String,
    pub reason: String,
}

/// Reviewed survivors by (case, mutant id).
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    entries: BTreeMap<(String, String), String>,
}

impl AllowList {
    /// Parses an allow-list; every entry needs a non-empty reason and
    /// appears once.
    pub fn parse(text: &str) -> Result<AllowList, String> {
        let f: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut entries = BTreeMap::new();
        for e in f.allow {
            if e.reason.trim().is_empty() {
                return Err(format!("{} {}: the reason is empty", e.case, e.mutant));
            }
            let key = (e.case.clone(), e.mutant.clone());
            if entries.insert(key, e.reason).is_some() {
                return Err(format!("{} {}: listed twice", e.case, e.mutant));
            }
        }
        Ok(AllowList { entries })
    }

    pub fn load(path: &Path) -> Result<AllowList, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The reason `mutant` of `case` may survive, if it was reviewed.
    pub fn reason(&self, case: &str, mutant: &str) -> Option<&str> {
        self.entries
            .get(&(case.to_string(), mutant.to_string()))
            .map(String::as_str)
    }

    /// Every entry as (case, mutant).
    pub fn keys(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.keys().map(|(c, m)| (c.as_str(), m.as_str()))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_bad_entries() {
        let ok = "[[allow]]\ncase = \"a/b\"\nmutant = \"imm-int:3:op2\"\nreason = \"dead\"\n";
        let l = AllowList::parse(ok).unwrap();
        assert_eq!(l.reason("a/b", "imm-int:3:op2"), Some("dead"));
        assert_eq!(l.reason("a/b", "imm-int:4:op2"), None);
        assert!(AllowList::parse(&ok.replace("dead", " ")).is_err());
        assert!(AllowList::parse(&format!("{ok}{ok}")).is_err());
        assert!(
            AllowList::parse("[[allow]]\ncase = \"a\"\nmutant = \"m\"\nreason = \"r\"\nx = 1\n")
                .is_err()
        );
        assert!(AllowList::parse("").unwrap().is_empty());
    }
}
