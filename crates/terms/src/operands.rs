//! The operand list of an n-ary node ([`Operands`]).
//!
//! A term store of a full-size GEMM holds tens of millions of nodes, most
//! of them binary products, so the node's size is the store's size. The
//! list keeps up to three ids inline and a longer one behind one pointer,
//! in 16 bytes (a `SmallVec<[TermId; 4]>` takes 24), which keeps a whole
//! [`crate::Node`] at 24 bytes. It reads as a slice of ids (`Deref`);
//! equality, hashing, ordering of elements and the serialized form (a
//! sequence of ids) are those of the slice, so nothing but the size
//! depends on the representation.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::node::TermId;

/// Ids kept inline.
const INLINE: usize = 3;

/// Operand list of an n-ary node: up to three ids inline, more on the
/// heap (see the module docs).
#[derive(Clone)]
pub struct Operands(Repr);

#[derive(Clone)]
enum Repr {
    /// `ids[..len]`.
    Inline { len: u8, ids: [TermId; INLINE] },
    /// Boxed so that this variant is one word (a `Vec` is three): the
    /// enum stays 16 bytes, for one more allocation on lists of four or
    /// more operands.
    #[allow(clippy::box_collection)]
    Heap(Box<Vec<TermId>>),
}

const NONE: TermId = TermId(0);

impl Operands {
    /// An empty list.
    pub const fn new() -> Operands {
        Operands(Repr::Inline {
            len: 0,
            ids: [NONE; INLINE],
        })
    }

    /// An empty list with room for `n` ids.
    pub fn with_capacity(n: usize) -> Operands {
        if n <= INLINE {
            Operands::new()
        } else {
            Operands(Repr::Heap(Box::new(Vec::with_capacity(n))))
        }
    }

    /// A list holding `ids`.
    pub fn from_slice(ids: &[TermId]) -> Operands {
        if ids.len() <= INLINE {
            let mut a = [NONE; INLINE];
            a[..ids.len()].copy_from_slice(ids);
            Operands(Repr::Inline {
                len: ids.len() as u8,
                ids: a,
            })
        } else {
            Operands(Repr::Heap(Box::new(ids.to_vec())))
        }
    }

    /// The ids as a slice.
    pub fn as_slice(&self) -> &[TermId] {
        match &self.0 {
            Repr::Inline { len, ids } => &ids[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    /// The ids as a mutable slice.
    pub fn as_mut_slice(&mut self) -> &mut [TermId] {
        match &mut self.0 {
            Repr::Inline { len, ids } => &mut ids[..usize::from(*len)],
            Repr::Heap(v) => v,
        }
    }

    /// Appends `t`.
    pub fn push(&mut self, t: TermId) {
        match &mut self.0 {
            Repr::Inline { len, ids } if usize::from(*len) < INLINE => {
                ids[usize::from(*len)] = t;
                *len += 1;
            }
            Repr::Inline { ids, .. } => {
                let mut v = Vec::with_capacity(2 * INLINE);
                v.extend_from_slice(ids);
                v.push(t);
                self.0 = Repr::Heap(Box::new(v));
            }
            Repr::Heap(v) => v.push(t),
        }
    }

    /// Appends every id of `ids`.
    pub fn extend_from_slice(&mut self, ids: &[TermId]) {
        match &mut self.0 {
            Repr::Heap(v) => v.extend_from_slice(ids),
            Repr::Inline { len, .. } if usize::from(*len) + ids.len() > INLINE => {
                let mut v = Vec::with_capacity(usize::from(*len) + ids.len());
                v.extend_from_slice(self.as_slice());
                v.extend_from_slice(ids);
                self.0 = Repr::Heap(Box::new(v));
            }
            Repr::Inline { .. } => ids.iter().for_each(|&t| self.push(t)),
        }
    }
}

impl Default for Operands {
    fn default() -> Self {
        Operands::new()
    }
}

impl Deref for Operands {
    type Target = [TermId];
    fn deref(&self) -> &[TermId] {
        self.as_slice()
    }
}

impl DerefMut for Operands {
    fn deref_mut(&mut self) -> &mut [TermId] {
        self.as_mut_slice()
    }
}

impl PartialEq for Operands {
    fn eq(&self, o: &Operands) -> bool {
        self.as_slice() == o.as_slice()
    }
}

impl Eq for Operands {}

impl Hash for Operands {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl fmt::Debug for Operands {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl From<&[TermId]> for Operands {
    fn from(ids: &[TermId]) -> Self {
        Operands::from_slice(ids)
    }
}

impl<const N: usize> From<[TermId; N]> for Operands {
    fn from(ids: [TermId; N]) -> Self {
        Operands::from_slice(&ids)
    }
}

impl Extend<TermId> for Operands {
    fn extend<I: IntoIterator<Item = TermId>>(&mut self, iter: I) {
        for t in iter {
            self.push(t);
        }
    }
}

impl<'a> Extend<&'a TermId> for Operands {
    fn extend<I: IntoIterator<Item = &'a TermId>>(&mut self, iter: I) {
        for &t in iter {
            self.push(t);
        }
    }
}

impl FromIterator<TermId> for Operands {
    fn from_iter<I: IntoIterator<Item = TermId>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut ops = Operands::with_capacity(iter.size_hint().0);
        ops.extend(iter);
        ops
    }
}

impl<'a> IntoIterator for &'a Operands {
    type Item = &'a TermId;
    type IntoIter = std::slice::Iter<'a, TermId>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a> IntoIterator for &'a mut Operands {
    type Item = &'a mut TermId;
    type IntoIter = std::slice::IterMut<'a, TermId>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_mut_slice().iter_mut()
    }
}

/// The ids of an [`Operands`], by value.
pub struct IntoIter {
    ops: Operands,
    pos: usize,
}

impl Iterator for IntoIter {
    type Item = TermId;
    fn next(&mut self) -> Option<TermId> {
        let t = self.ops.as_slice().get(self.pos).copied();
        self.pos += usize::from(t.is_some());
        t
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.ops.len() - self.pos;
        (n, Some(n))
    }
}

impl ExactSizeIterator for IntoIter {}

impl IntoIterator for Operands {
    type Item = TermId;
    type IntoIter = IntoIter;
    fn into_iter(self) -> IntoIter {
        IntoIter { ops: self, pos: 0 }
    }
}

impl Serialize for Operands {
    /// A sequence of ids, as a slice or a `SmallVec` serializes.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.as_slice())
    }
}

impl<'de> Deserialize<'de> for Operands {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Operands;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence of term ids")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Operands, A::Error> {
                // Capped: a corrupt length must not reserve gigabytes.
                let mut ops = Operands::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(t) = seq.next_element()? {
                    ops.push(t);
                }
                Ok(ops)
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u32) -> Vec<TermId> {
        (0..n).map(|i| TermId(i * 7 + 1)).collect()
    }

    #[test]
    fn sixteen_bytes_and_a_24_byte_node() {
        assert_eq!(std::mem::size_of::<Operands>(), 16);
        assert_eq!(std::mem::size_of::<crate::Node>(), 24);
    }

    #[test]
    fn every_way_of_building_gives_the_same_list() {
        for n in 0..10 {
            let v = ids(n);
            let a = Operands::from_slice(&v);
            let mut b = Operands::new();
            v.iter().for_each(|&t| b.push(t));
            let c: Operands = v.iter().copied().collect();
            let mut d = Operands::with_capacity(n as usize);
            d.extend_from_slice(&v[..v.len() / 2]);
            d.extend_from_slice(&v[v.len() / 2..]);
            for o in [&a, &b, &c, &d] {
                assert_eq!(o.as_slice(), &v[..]);
                assert_eq!(o, &a);
            }
            assert_eq!(a.clone().into_iter().collect::<Vec<_>>(), v);
            // Serialized like the SmallVec it replaces (a sequence).
            let cfg = bincode::config::standard();
            let x = bincode::serde::encode_to_vec(&a, cfg).unwrap();
            let sv: smallvec::SmallVec<[TermId; 4]> = v.iter().copied().collect();
            assert_eq!(x, bincode::serde::encode_to_vec(&sv, cfg).unwrap());
            let (back, _): (Operands, usize) = bincode::serde::decode_from_slice(&x, cfg).unwrap();
            assert_eq!(back, a);
        }
    }
}
