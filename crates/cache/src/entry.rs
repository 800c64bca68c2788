//! The on-disk format of one cache entry, and its verification.
//!
//! An entry is a self-describing header followed by the payload:
//!
//! ```text
//! magic      8 bytes  "ptxeq-c\0"
//! format     u32 LE   FORMAT_VERSION (layout of this header)
//! key        32 bytes the entry's key hash (so a renamed/copied file is caught)
//! version    u32 LE   the query's pass version
//! name_len   u16 LE   length of the query name
//! name       bytes    the query name (UTF-8)
//! len        u64 LE   payload length
//! digest     32 bytes blake3 of the payload
//! payload    len bytes
//! ```
//!
//! Reading trusts nothing: every field is compared with what the reader
//! asked for, and the payload is hashed again. Any mismatch is a
//! [`Reject`], which the cache turns into a miss (docs/semantics.md §15: a corrupt
//! or foreign entry is ignored and recomputed, never trusted).

use crate::Key;

/// Leading bytes of every entry file.
pub const MAGIC: [u8; 8] = *b"ptxeq-c\0";

/// Version of the entry layout above. Bump on any change of the header or
/// of how payloads are encoded (e.g. a bincode major version).
pub const FORMAT_VERSION: u32 = 1;

/// Why an entry file was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    /// Not a ptxeq cache entry (magic bytes), or too short for a header.
    Foreign,
    /// Written by another entry layout version.
    Format(u32),
    /// Header names another key, query or pass version.
    OtherKey,
    /// Payload length or digest do not match: truncated or corrupted.
    Corrupt,
}

/// Serializes an entry for `key` holding `payload`.
pub fn encode(key: &Key, payload: &[u8]) -> Vec<u8> {
    let name = key.query.as_bytes();
    // Query names are short identifiers; a longer one is cut (and would
    // then never match on read, which is safe: a miss).
    let name = &name[..name.len().min(u16::MAX as usize)];
    let mut out = Vec::with_capacity(8 + 4 + 32 + 4 + 2 + name.len() + 8 + 32 + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&key.hash);
    out.extend_from_slice(&key.version.to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(payload).as_bytes());
    out.extend_from_slice(payload);
    out
}

/// A cursor over the entry bytes that fails instead of panicking.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
}

/// Checks `bytes` is an intact entry for exactly `key`; returns the payload.
pub fn decode<'a>(key: &Key, bytes: &'a [u8]) -> Result<&'a [u8], Reject> {
    let mut r = Reader(bytes);
    if r.take(MAGIC.len()) != Some(&MAGIC[..]) {
        return Err(Reject::Foreign);
    }
    let format = u32::from_le_bytes(r.array().ok_or(Reject::Foreign)?);
    if format != FORMAT_VERSION {
        return Err(Reject::Format(format));
    }
    let hash: [u8; 32] = r.array().ok_or(Reject::Corrupt)?;
    let version = u32::from_le_bytes(r.array().ok_or(Reject::Corrupt)?);
    let name_len = u16::from_le_bytes(r.array().ok_or(Reject::Corrupt)?);
    let name = r.take(name_len as usize).ok_or(Reject::Corrupt)?;
    if hash != key.hash || version != key.version || name != key.query.as_bytes() {
        return Err(Reject::OtherKey);
    }
    let len = u64::from_le_bytes(r.array().ok_or(Reject::Corrupt)?);
    let digest: [u8; 32] = r.array().ok_or(Reject::Corrupt)?;
    if u64::try_from(r.0.len()).ok() != Some(len) {
        return Err(Reject::Corrupt);
    }
    if blake3::hash(r.0).as_bytes() != &digest {
        return Err(Reject::Corrupt);
    }
    Ok(r.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::new("unrolled", 3, b"input bytes")
    }

    #[test]
    fn round_trip() {
        let bytes = encode(&key(), b"payload");
        assert_eq!(decode(&key(), &bytes), Ok(&b"payload"[..]));
        let empty = encode(&key(), b"");
        assert_eq!(decode(&key(), &empty), Ok(&b""[..]));
    }

    #[test]
    fn every_flipped_byte_is_rejected() {
        let bytes = encode(&key(), b"some payload bytes");
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&key(), &b).is_err(), "byte {i} flipped was accepted");
        }
    }

    #[test]
    fn every_truncation_is_rejected() {
        let bytes = encode(&key(), b"some payload bytes");
        for n in 0..bytes.len() {
            assert!(decode(&key(), &bytes[..n]).is_err(), "cut at {n} accepted");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&key(), &longer), Err(Reject::Corrupt));
    }

    #[test]
    fn other_keys_versions_and_formats_are_rejected() {
        let bytes = encode(&key(), b"p");
        assert_eq!(
            decode(&Key::new("unrolled", 4, b"input bytes"), &bytes),
            Err(Reject::OtherKey)
        );
        assert_eq!(
            decode(&Key::new("symbolic", 3, b"input bytes"), &bytes),
            Err(Reject::OtherKey)
        );
        assert_eq!(
            decode(&Key::new("unrolled", 3, b"other input"), &bytes),
            Err(Reject::OtherKey)
        );
        let mut future = bytes.clone();
        future[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert_eq!(
            decode(&key(), &future),
            Err(Reject::Format(FORMAT_VERSION + 1))
        );
        assert_eq!(
            decode(&key(), b"#!/bin/sh\necho hi\n"),
            Err(Reject::Foreign)
        );
    }
}
