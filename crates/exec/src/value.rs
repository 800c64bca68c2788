//! Register contents and their byte-level decomposition.
//!
//! A register holds a [`Value`]: concrete bits (integers, predicates,
//! addresses — addresses are plain integers in the engine's address map,
//! see `layout` — and float constants as their bit pattern), a real data
//! value of the domain, a data boolean, an integer that depends on tensor
//! data ("tainted"), nothing (never written), or a packing of several of
//! these (`.f16x2` lanes, `mov.b64 {a, b}`).
//!
//! A 32-bit register holding f32 data is `Data { fmt: F32, lo: 0, len: 4 }`
//! whatever the register's declared type (`.b32`, `.u32`, `.f32`): moves,
//! loads, stores, shuffles and `selp` copy it unchanged; only arithmetic
//! looks at the type. `lo/len` describe a byte slice of the value's
//! encoding: a whole value has `lo = 0, len = fmt.size()`; halves of an f64
//! split by `mov.b64 {lo, hi}` are slices, and joining the two slices back
//! gives the whole value again.

use std::sync::Arc;

use crate::domain::Fmt;

/// The content of a register (or of a loaded memory range).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value<V> {
    /// Never written.
    Undef,
    /// Concrete bits, zero-extended to 64.
    Bits(u64),
    /// Bytes `lo..lo+len` of the encoding of a real value in format `fmt`.
    Data { v: V, fmt: Fmt, lo: u8, len: u8 },
    /// A data boolean (`setp` on real values).
    Bool(V),
    /// An integer that depends on tensor data; `origin` is the packed
    /// instruction id that produced it (see `InstrId`).
    Tainted(u32),
    /// Concatenation, least significant part first; never nested, at least
    /// two parts, never all-`Bits` within 8 bytes (that is `Bits`).
    Pack(Arc<[Part<V>]>),
}

/// One part of a [`Value::Pack`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Part<V> {
    pub val: Value<V>,
    pub len: u8,
}

impl<V: Copy + Eq> Value<V> {
    /// A whole real value.
    pub fn data(v: V, fmt: Fmt) -> Self {
        Value::Data {
            v,
            fmt,
            lo: 0,
            len: fmt.size(),
        }
    }

    /// The real value if this is a whole one.
    pub fn whole_data(&self) -> Option<(V, Fmt)> {
        match *self {
            Value::Data { v, fmt, lo: 0, len } if len == fmt.size() => Some((v, fmt)),
            _ => None,
        }
    }

    /// Splits into pieces covering `width` bytes (padding with zero bits
    /// when the value is narrower, truncating when wider).
    pub fn pieces(&self, width: u8) -> SmallVec4<Piece<V>> {
        let mut out = SmallVec4::new();
        match self {
            Value::Pack(parts) => {
                let mut at = 0u8;
                for p in parts.iter() {
                    if at >= width {
                        break;
                    }
                    let take = p.len.min(width - at);
                    for pc in p.val.pieces(take).into_iter() {
                        out.push(pc);
                    }
                    at += take;
                }
                if at < width {
                    out.push(Piece::Bits(0, width - at));
                }
            }
            other => out.push(Piece::of_scalar(other, width)),
        }
        out
    }

    /// Bytes `lo..lo+len` of this value seen as `width` bytes.
    pub fn slice(&self, lo: u8, len: u8, width: u8) -> Value<V> {
        if lo == 0 && len >= width {
            match self {
                Value::Bits(b) => return Value::Bits(mask_bytes(*b, width)),
                Value::Data { len: l, .. } if *l <= width => return self.clone(),
                Value::Undef | Value::Bool(_) | Value::Tainted(_) => return self.clone(),
                _ => {}
            }
        }
        let mut out: SmallVec4<Piece<V>> = SmallVec4::new();
        let mut at = 0u8;
        for p in self.pieces(width).into_iter() {
            let plen = p.len();
            let (s, e) = (at.max(lo), (at + plen).min(lo + len));
            if s < e {
                out.push(p.sub(s - at, e - s));
            }
            at += plen;
        }
        Value::from_pieces(out)
    }

    /// Concatenates `(value, byte width)` parts, least significant first.
    pub fn concat(parts: &[(Value<V>, u8)]) -> Value<V> {
        let mut out: SmallVec4<Piece<V>> = SmallVec4::new();
        for (v, w) in parts {
            for p in v.pieces(*w).into_iter() {
                out.push(p);
            }
        }
        Value::from_pieces(out)
    }

    /// Builds the normal form from pieces: adjacent concrete pieces merge
    /// (up to 8 bytes), adjacent slices of the same real value merge, a
    /// single piece is returned as itself.
    pub fn from_pieces(pieces: SmallVec4<Piece<V>>) -> Value<V> {
        let mut merged: SmallVec4<Piece<V>> = SmallVec4::new();
        for p in pieces.into_iter() {
            let joined = match (merged.last_mut(), &p) {
                (Some(Piece::Bits(a, la)), Piece::Bits(b, lb)) if *la + *lb <= 8 => {
                    *a |= b << (8 * u32::from(*la));
                    *la += lb;
                    true
                }
                (
                    Some(Piece::Data {
                        v: va,
                        fmt: fa,
                        lo: loa,
                        len: lena,
                    }),
                    Piece::Data {
                        v: vb,
                        fmt: fb,
                        lo: lob,
                        len: lenb,
                    },
                ) if va == vb && fa == fb && *loa + *lena == *lob => {
                    *lena += lenb;
                    true
                }
                (Some(Piece::Undef(la)), Piece::Undef(lb)) => {
                    *la += lb;
                    true
                }
                (Some(Piece::Tainted(oa, la)), Piece::Tainted(_, lb)) => {
                    let _ = oa;
                    *la += lb;
                    true
                }
                _ => false,
            };
            if !joined {
                merged.push(p);
            }
        }
        // bf16 → f32 by appending a zero low half (`mov.b32 %f, {0, %h}`,
        // how cuda_bf16.hpp converts) is exact: the same real as an f32.
        if let [
            Piece::Bits(0, 2),
            Piece::Data {
                v,
                fmt: Fmt::Bf16,
                lo: 0,
                len: 2,
            },
        ] = merged.as_slice()
        {
            return Value::data(*v, Fmt::F32);
        }
        if merged.len() == 1 {
            return merged
                .into_iter()
                .next()
                .map(Piece::into_value)
                .unwrap_or(Value::Undef);
        }
        if merged.is_empty() {
            return Value::Bits(0);
        }
        let parts: Vec<Part<V>> = merged
            .into_iter()
            .map(|p| {
                let len = p.len();
                Part {
                    val: p.into_value(),
                    len,
                }
            })
            .collect();
        Value::Pack(parts.into())
    }
}

/// A byte range of a scalar value, the unit of packing and of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Piece<V> {
    /// `len` concrete bytes (value in the low bits).
    Bits(u64, u8),
    Data {
        v: V,
        fmt: Fmt,
        lo: u8,
        len: u8,
    },
    Undef(u8),
    Tainted(u32, u8),
    /// A data boolean occupies one "byte" (predicates are never stored;
    /// the piece exists so that packing code stays total).
    Bool(V),
}

impl<V: Copy + Eq> Piece<V> {
    fn of_scalar(v: &Value<V>, width: u8) -> Piece<V> {
        match *v {
            Value::Undef => Piece::Undef(width),
            Value::Bits(b) => Piece::Bits(mask_bytes(b, width), width),
            Value::Data { v, fmt, lo, len } => Piece::Data {
                v,
                fmt,
                lo,
                len: len.min(width),
            },
            Value::Bool(v) => Piece::Bool(v),
            Value::Tainted(o) => Piece::Tainted(o, width),
            Value::Pack(_) => Piece::Undef(width),
        }
    }

    pub fn len(&self) -> u8 {
        match *self {
            Piece::Bits(_, l) | Piece::Undef(l) | Piece::Tainted(_, l) => l,
            Piece::Data { len, .. } => len,
            Piece::Bool(_) => 1,
        }
    }

    /// Bytes `off..off+len` of this piece.
    pub fn sub(&self, off: u8, len: u8) -> Piece<V> {
        match *self {
            Piece::Bits(b, _) => Piece::Bits(mask_bytes(b >> (8 * u32::from(off)), len), len),
            Piece::Data { v, fmt, lo, .. } => Piece::Data {
                v,
                fmt,
                lo: lo + off,
                len,
            },
            Piece::Undef(_) => Piece::Undef(len),
            Piece::Tainted(o, _) => Piece::Tainted(o, len),
            Piece::Bool(v) => Piece::Bool(v),
        }
    }

    pub fn into_value(self) -> Value<V> {
        match self {
            Piece::Bits(b, _) => Value::Bits(b),
            Piece::Data { v, fmt, lo, len } => Value::Data { v, fmt, lo, len },
            Piece::Undef(_) => Value::Undef,
            Piece::Tainted(o, _) => Value::Tainted(o),
            Piece::Bool(v) => Value::Bool(v),
        }
    }
}

/// Keeps the low `bytes` bytes.
pub fn mask_bytes(b: u64, bytes: u8) -> u64 {
    if bytes >= 8 {
        b
    } else {
        b & ((1u64 << (8 * u32::from(bytes))) - 1)
    }
}

/// Keeps the low `bits` bits.
pub fn mask_bits(b: u64, bits: u32) -> u64 {
    if bits >= 64 {
        b
    } else {
        b & ((1u64 << bits) - 1)
    }
}

/// Up to four pieces inline.
pub type SmallVec4<T> = smallvec::SmallVec<[T; 4]>;

#[cfg(test)]
mod tests {
    use super::*;

    type V = Value<u32>;

    #[test]
    fn bits_pack_and_unpack() {
        // mov.b64 %rd, {%r0, %r1} with r0 = 0x11223344, r1 = 0xaabbccdd
        let v = V::concat(&[(Value::Bits(0x1122_3344), 4), (Value::Bits(0xaabb_ccdd), 4)]);
        assert_eq!(v, Value::Bits(0xaabb_ccdd_1122_3344));
        assert_eq!(v.slice(4, 4, 8), Value::Bits(0xaabb_ccdd));
        assert_eq!(v.slice(1, 2, 8), Value::Bits(0x2233));
    }

    #[test]
    fn data_halves_rejoin() {
        let d: V = Value::data(7, Fmt::F64);
        let lo = d.slice(0, 4, 8);
        let hi = d.slice(4, 4, 8);
        assert_eq!(
            lo,
            Value::Data {
                v: 7,
                fmt: Fmt::F64,
                lo: 0,
                len: 4
            }
        );
        assert_eq!(V::concat(&[(lo, 4), (hi, 4)]), d);
    }

    #[test]
    fn f16_pair_packs() {
        let a: V = Value::data(1, Fmt::F16);
        let b: V = Value::data(2, Fmt::F16);
        let p = V::concat(&[(a.clone(), 2), (b.clone(), 2)]);
        assert!(matches!(p, Value::Pack(_)));
        assert_eq!(p.slice(0, 2, 4), a);
        assert_eq!(p.slice(2, 2, 4), b);
    }

    #[test]
    fn bf16_widened_by_a_zero_half_is_an_f32() {
        let h: V = Value::data(3, Fmt::Bf16);
        assert_eq!(
            V::concat(&[(Value::Bits(0), 2), (h, 2)]),
            Value::data(3, Fmt::F32)
        );
    }

    #[test]
    fn narrow_bits_are_masked() {
        let v: V = Value::Bits(0x1_2345);
        assert_eq!(v.slice(0, 2, 2), Value::Bits(0x2345));
    }
}
