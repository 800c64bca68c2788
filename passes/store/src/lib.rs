//! Pass: the output-term store.
//!
//! [`store`] serializes a CTA's output terms (the [`SymbolicState`]'s
//! outputs and term graph) with bincode behind a format marker, and keys
//! the bytes by their blake3 hash: the content address the disk cache and
//! the per-element verdicts use. [`load`] is the inverse and trusts
//! nothing: a wrong marker, a hash mismatch or undecodable bytes are
//! errors, never a panic, so a corrupt or foreign cache entry is detected
//! and recomputed.

use std::sync::Arc;

use ptxeq_exec::TensorOutput;
use ptxeq_symex::SymbolicState;
use ptxeq_terms::TermGraph;
use serde::{Deserialize, Serialize};

/// Bumped whenever the serialized layout (or the meaning of a term) changes.
pub const FORMAT_VERSION: u32 = 1;

/// Leading bytes of every entry, before the version.
const MAGIC: [u8; 8] = *b"ptxeq-ot";

/// One stored entry: the bytes and their content address.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct StoredTerms {
    /// blake3 of `bytes`.
    pub key: [u8; 32],
    pub bytes: Arc<[u8]>,
}

impl StoredTerms {
    /// The key as lowercase hex (file names, reports).
    pub fn key_hex(&self) -> String {
        self.key.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// What a stored entry holds.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct OutputTerms {
    pub outputs: Vec<TensorOutput<u32>>,
    pub graph: TermGraph,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("not an output-term entry (bad magic bytes)")]
    BadMagic,
    #[error(
        "output-term entry of format version {found}, this ptxeq reads version {FORMAT_VERSION}"
    )]
    Version { found: u32 },
    #[error("output-term entry does not match its content address")]
    HashMismatch,
    #[error("output-term entry is corrupt: {0}")]
    Corrupt(String),
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard()
}

/// Serializes the output terms of `state`.
pub fn store(state: &SymbolicState) -> StoredTerms {
    let body = OutputTerms {
        outputs: state.outputs.clone(),
        graph: state.graph.clone(),
    };
    let mut bytes = Vec::with_capacity(64);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    // Encoding plain owned data into a Vec cannot fail.
    let encoded = bincode::serde::encode_to_vec(&body, config()).unwrap_or_default();
    bytes.extend_from_slice(&encoded);
    StoredTerms {
        key: *blake3::hash(&bytes).as_bytes(),
        bytes: bytes.into(),
    }
}

/// Decodes an entry, checking marker, version and (when `key` is given)
/// the content address.
pub fn load(bytes: &[u8], key: Option<&[u8; 32]>) -> Result<OutputTerms, StoreError> {
    if let Some(k) = key
        && blake3::hash(bytes).as_bytes() != k
    {
        return Err(StoreError::HashMismatch);
    }
    let rest = bytes.strip_prefix(&MAGIC[..]).ok_or(StoreError::BadMagic)?;
    let (ver, body) = rest.split_at_checked(4).ok_or(StoreError::BadMagic)?;
    let found = u32::from_le_bytes([ver[0], ver[1], ver[2], ver[3]]);
    if found != FORMAT_VERSION {
        return Err(StoreError::Version { found });
    }
    let (terms, used): (OutputTerms, usize) = bincode::serde::decode_from_slice(body, config())
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if used != body.len() {
        return Err(StoreError::Corrupt(format!(
            "{} trailing bytes",
            body.len() - used
        )));
    }
    Ok(terms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptxeq_exec::{OutputValue, Stats};
    use ptxeq_terms::Terms;

    fn state() -> SymbolicState {
        let mut t = Terms::new();
        let x0 = t.input(0, 0);
        let x1 = t.input(0, 1);
        let s = t.add(x0, x1);
        let e = t.exp(s);
        SymbolicState {
            cta: [0, 0, 0],
            outputs: vec![TensorOutput {
                tensor: 1,
                name: "y".into(),
                elements: vec![(0, OutputValue::Data(0)), (1, OutputValue::Data(1))],
            }],
            graph: t.export(&[s, e]),
            findings: Vec::new(),
            stats: Stats::default(),
        }
    }

    #[test]
    fn round_trip_and_content_address() {
        let st = state();
        let a = store(&st);
        let b = store(&st);
        assert_eq!(a, b, "deterministic bytes, same key");
        assert_eq!(a.key_hex().len(), 64);
        let back = load(&a.bytes, Some(&a.key)).unwrap();
        assert_eq!(back.outputs, st.outputs);
        assert_eq!(back.graph, st.graph);
    }

    #[test]
    fn different_terms_different_keys() {
        let mut st = state();
        st.outputs[0].elements.pop();
        assert_ne!(store(&st).key, store(&state()).key);
    }

    #[test]
    fn corrupt_or_foreign_entries_are_rejected() {
        let a = store(&state());
        let mut bytes = a.bytes.to_vec();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        assert_eq!(load(&bytes, Some(&a.key)), Err(StoreError::HashMismatch));
        assert!(matches!(
            load(&bytes[..bytes.len() / 2], None),
            Err(StoreError::Corrupt(_))
        ));
        assert_eq!(
            load(b"not an entry at all", None),
            Err(StoreError::BadMagic)
        );
        let mut other = a.bytes.to_vec();
        other[8..12].copy_from_slice(&99u32.to_le_bytes());
        assert_eq!(load(&other, None), Err(StoreError::Version { found: 99 }));
    }
}
