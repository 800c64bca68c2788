//! Memory regions, the engine's address map, and byte-level contents.
//!
//! Addresses are plain integers: every region gets a base address in its
//! state space, far from every other region (gaps of at least 1 MiB in
//! shared/local/const/param space, 64 GiB slots in global space), so
//! integer arithmetic on addresses is exact PTX arithmetic, pointer
//! comparisons and alignment tests behave as on the GPU (bases are
//! aligned to at least 1 MiB, tensors are allocated like `cudaMalloc`
//! would, only further apart), and an access is resolved to its region by
//! looking the address up. An address in a gap is out of bounds. Generic
//! addresses place each non-global space in its own window
//! (`cvta` adds / subtracts the window base).
//!
//! Contents are per byte ([`Slot`]): a concrete byte, a byte of a real
//! value (value, format, byte index), an undefined byte, a tainted byte
//! (of an integer that depends on tensor data), or nothing yet. Input
//! tensors start as "nothing yet" and read as their input symbols; loads
//! reassemble [`Value`]s from bytes, so data written as f32 and read back
//! as `.b32`, or two f16 halves read as one `.b32`, round-trip exactly.
//! A region's bytes are a [`Slots`] sparse array: pages are allocated when
//! first written, so memory follows what a run touches, not region sizes.

use smallvec::SmallVec;

use crate::domain::{Domain, Fmt};
use crate::sparse::{Span, SparseVec};
use crate::value::{Piece, SmallVec4, Value};

/// The bytes of one region.
pub type Slots<V> = SparseVec<Slot<V>>;

/// Scratch buffer for the bytes of one access (vector accesses are at
/// most 16 bytes; wider ones spill to the heap).
type Bytes<V> = SmallVec<[Slot<V>; 16]>;

/// A PTX state space as far as addressing is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    Param,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param => "param",
        }
    }

    /// Base of this space's window in generic addressing.
    pub fn window(self) -> u64 {
        match self {
            Space::Global => 0,
            Space::Shared => SHARED_WINDOW,
            Space::Local => LOCAL_WINDOW,
            Space::Const => CONST_WINDOW,
            Space::Param => PARAM_WINDOW,
        }
    }

    /// The space a generic address falls in.
    pub fn of_generic(a: u64) -> Space {
        if (PARAM_WINDOW..FUNC_WINDOW).contains(&a) {
            Space::Param
        } else if (CONST_WINDOW..PARAM_WINDOW).contains(&a) {
            Space::Const
        } else if (LOCAL_WINDOW..CONST_WINDOW).contains(&a) {
            Space::Local
        } else if (SHARED_WINDOW..LOCAL_WINDOW).contains(&a) {
            Space::Shared
        } else {
            Space::Global
        }
    }
}

/// Global region `k` lives at `(k + 1) << GLOBAL_SLOT_BITS`.
pub const GLOBAL_SLOT_BITS: u32 = 36;
pub const SHARED_WINDOW: u64 = 0x3000_0000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x3400_0000_0000_0000;
pub const CONST_WINDOW: u64 = 0x3800_0000_0000_0000;
pub const PARAM_WINDOW: u64 = 0x3C00_0000_0000_0000;
/// Function addresses (indirect calls): `FUNC_WINDOW + 16·k`.
pub const FUNC_WINDOW: u64 = 0x3E00_0000_0000_0000;
/// Spacing of shared, const and kernel-param regions in their spaces.
pub const SPACE_SLOT_BITS: u32 = 20;
/// Per-thread regions (local variables, call params) start here in their
/// space and are placed with this gap between them.
pub const PRIVATE_START: u64 = 1 << 24;
pub const PRIVATE_GAP: u64 = 1 << 20;

/// How a region's bytes start out.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Init {
    /// Prefilled (zero or an initialiser).
    Filled,
    /// Never-written bytes are uninitialised (shared, local, call params).
    Uninit,
    /// An input / inout tensor: unwritten bytes are its input symbols.
    Input {
        tensor: u32,
        fmt: Option<Fmt>,
        esize: u8,
    },
    /// An output-only tensor: reading an unwritten byte is uninitialised.
    Output,
    /// Kernel params: unwritten bytes belong to params bound to `_`.
    Params,
}

/// One region (a tensor, a variable, dynamic shared memory, a frame's
/// local variable or call param).
#[derive(Clone, Debug)]
pub struct Region {
    pub name: String,
    pub space: Space,
    /// Base address in its space.
    pub base: u64,
    pub size: u64,
    /// Element size for reports (0: none).
    pub elem: u32,
    pub init: Init,
    /// Tensor index for tensor regions.
    pub tensor: Option<u32>,
}

/// A byte of memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Slot<V> {
    Unwritten,
    Byte(u8),
    Data { v: V, fmt: Fmt, idx: u8 },
    Undef,
    Tainted(u32),
}

/// What a load found besides the value.
#[derive(Clone, Copy, Default, Debug)]
pub struct LoadInfo {
    /// Bytes that were never written (uninitialised memory).
    pub uninit: bool,
    /// Bytes of a param bound to `_`.
    pub unused_param: bool,
}

/// Converts a value into bytes and writes them at `off`.
pub fn store_value<V: Copy + Eq>(slots: &mut Slots<V>, off: usize, v: &Value<V>, width: u8) {
    let w = usize::from(width);
    if w == 0 {
        return;
    }
    if let Some(s) = slots.span_mut(off, w) {
        encode(s, v, width);
        return;
    }
    // Across a page boundary: encode, then write byte by byte.
    let mut buf: Bytes<V> = smallvec::smallvec![Slot::Unwritten; w];
    encode(&mut buf, v, width);
    for (i, s) in buf.into_iter().enumerate() {
        slots.set(off + i, s);
    }
}

/// The `width` bytes of `v` into `slots[..width]`.
fn encode<V: Copy + Eq>(slots: &mut [Slot<V>], v: &Value<V>, width: u8) {
    // Fast paths.
    match *v {
        Value::Bits(b) => {
            for (i, s) in slots.iter_mut().enumerate().take(width as usize) {
                let byte = if i < 8 { (b >> (8 * i)) as u8 } else { 0 };
                *s = Slot::Byte(byte);
            }
            return;
        }
        Value::Data {
            v: dv,
            fmt,
            lo,
            len,
        } if len >= width => {
            for i in 0..width {
                slots[i as usize] = Slot::Data {
                    v: dv,
                    fmt,
                    idx: lo + i,
                };
            }
            return;
        }
        _ => {}
    }
    let mut at = 0;
    for p in v.pieces(width).into_iter() {
        let n = p.len() as usize;
        match p {
            Piece::Bits(b, _) => {
                for i in 0..n {
                    let byte = if i < 8 { (b >> (8 * i)) as u8 } else { 0 };
                    slots[at + i] = Slot::Byte(byte);
                }
            }
            Piece::Data { v, fmt, lo, .. } => {
                for i in 0..n {
                    slots[at + i] = Slot::Data {
                        v,
                        fmt,
                        idx: lo + i as u8,
                    };
                }
            }
            Piece::Undef(_) | Piece::Bool(_) => {
                for s in &mut slots[at..at + n] {
                    *s = Slot::Undef;
                }
            }
            Piece::Tainted(o, _) => {
                for s in &mut slots[at..at + n] {
                    *s = Slot::Tainted(o);
                }
            }
        }
        at += n;
    }
}

/// Reads `width` bytes at `off` of a region and reassembles the value.
/// `origin` is the packed id of the loading instruction (it taints integer
/// tensor elements).
pub fn load_value<D: Domain>(
    slots: &Slots<D::Val>,
    region: &Region,
    off: usize,
    width: u8,
    domain: &mut D,
    origin: u32,
) -> (Value<D::Val>, LoadInfo) {
    let w = usize::from(width);
    if w == 0 {
        return (Value::from_pieces(SmallVec4::new()), LoadInfo::default());
    }
    match slots.span(off, w) {
        Span::Slice(s) => decode(s, region, off, width, domain, origin),
        Span::Fill(fill) => {
            // Never-written memory: an input element reads as its symbol.
            if fill == Slot::Unwritten
                && let Init::Input {
                    tensor,
                    fmt: Some(fmt),
                    esize,
                } = region.init
                && esize == width
                && off.is_multiple_of(w)
            {
                let v = domain.input(tensor, (off / w) as u64, fmt);
                return (Value::data(v, fmt), LoadInfo::default());
            }
            let buf: Bytes<D::Val> = smallvec::smallvec![fill; w];
            decode(&buf, region, off, width, domain, origin)
        }
        Span::Mixed => {
            let buf: Bytes<D::Val> = (off..off + w).map(|i| slots.get(i)).collect();
            decode(&buf, region, off, width, domain, origin)
        }
    }
}

/// [`load_value`] over the access's bytes: `slots[i]` is byte `off + i`.
fn decode<D: Domain>(
    slots: &[Slot<D::Val>],
    region: &Region,
    off: usize,
    width: u8,
    domain: &mut D,
    origin: u32,
) -> (Value<D::Val>, LoadInfo) {
    let mut info = LoadInfo::default();
    let w = width as usize;
    // Fast path 1: a whole real value.
    if let Slot::Data { v, fmt, idx: 0 } = slots[0]
        && fmt.size() == width
        && (1..w).all(|i| {
            slots[i]
                == Slot::Data {
                    v,
                    fmt,
                    idx: i as u8,
                }
        })
    {
        return (Value::data(v, fmt), info);
    }
    // Fast path 2: concrete bytes.
    if w <= 8 && slots.iter().all(|s| matches!(s, Slot::Byte(_))) {
        let mut b = 0u64;
        for (i, s) in slots.iter().enumerate() {
            if let Slot::Byte(x) = s {
                b |= u64::from(*x) << (8 * i);
            }
        }
        return (Value::Bits(b), info);
    }
    // Fast path 3: a whole unwritten input element.
    if let Init::Input {
        tensor,
        fmt: Some(fmt),
        esize,
    } = region.init
        && esize == width
        && off.is_multiple_of(w)
        && slots.iter().all(|s| *s == Slot::Unwritten)
    {
        let v = domain.input(tensor, (off / w) as u64, fmt);
        return (Value::data(v, fmt), info);
    }
    let mut pieces: SmallVec4<Piece<D::Val>> = SmallVec4::new();
    let mut cached: Option<(u64, Slot<D::Val>)> = None;
    for (i, &slot) in slots.iter().enumerate() {
        let at = off + i;
        let slot = match slot {
            Slot::Unwritten => match region.init {
                Init::Input { tensor, fmt, esize } => {
                    let es = u64::from(esize.max(1));
                    let elem = at as u64 / es;
                    let k = (at as u64 % es) as u8;
                    match fmt {
                        Some(fmt) => {
                            let v = match cached {
                                Some((e, Slot::Data { v, .. })) if e == elem => v,
                                _ => {
                                    let v = domain.input(tensor, elem, fmt);
                                    cached = Some((elem, Slot::Data { v, fmt, idx: 0 }));
                                    v
                                }
                            };
                            Slot::Data { v, fmt, idx: k }
                        }
                        None => match domain.int_input(tensor, elem) {
                            Some(bits) => Slot::Byte((bits >> (8 * u32::from(k))) as u8),
                            None => Slot::Tainted(origin),
                        },
                    }
                }
                Init::Params => {
                    info.unused_param = true;
                    Slot::Undef
                }
                _ => {
                    info.uninit = true;
                    Slot::Undef
                }
            },
            s => s,
        };
        let piece = match slot {
            Slot::Byte(b) => Piece::Bits(u64::from(b), 1),
            Slot::Data { v, fmt, idx } => Piece::Data {
                v,
                fmt,
                lo: idx,
                len: 1,
            },
            Slot::Tainted(o) => Piece::Tainted(o, 1),
            Slot::Undef | Slot::Unwritten => Piece::Undef(1),
        };
        pieces.push(piece);
    }
    (Value::from_pieces(pieces), info)
}

/// Whether the bytes at `off` already hold exactly `v` (for benign
/// same-value stores).
pub fn holds_same<D: Domain>(
    slots: &Slots<D::Val>,
    off: usize,
    v: &Value<D::Val>,
    width: u8,
    domain: &D,
) -> bool {
    let mut tmp: Bytes<D::Val> = smallvec::smallvec![Slot::Unwritten; width as usize];
    encode(&mut tmp, v, width);
    tmp.iter()
        .zip((off..off + width as usize).map(|i| slots.get(i)))
        .all(|(a, b)| match (a, &b) {
            (
                Slot::Data {
                    v: x,
                    fmt: f,
                    idx: i,
                },
                Slot::Data {
                    v: y,
                    fmt: g,
                    idx: j,
                },
            ) => f == g && i == j && domain.same_value(*x, *y),
            (Slot::Byte(x), Slot::Byte(y)) => x == y,
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opaque::Opaque;

    fn region(init: Init, size: u64) -> Region {
        Region {
            name: "r".into(),
            space: Space::Shared,
            base: 0,
            size,
            elem: 4,
            init,
            tensor: None,
        }
    }

    #[test]
    fn generic_windows() {
        assert_eq!(Space::of_generic(SHARED_WINDOW + 16), Space::Shared);
        assert_eq!(Space::of_generic(1 << 36), Space::Global);
        assert_eq!(Space::of_generic(LOCAL_WINDOW), Space::Local);
        assert_eq!(Space::of_generic(PARAM_WINDOW + 8), Space::Param);
    }

    #[test]
    fn bytes_round_trip() {
        let mut d = Opaque::new();
        let r = region(Init::Uninit, 16);
        let mut s = Slots::new(16, Slot::Unwritten);
        store_value(&mut s, 0, &Value::Bits(0x1122_3344_5566_7788), 8);
        let (v, info) = load_value(&s, &r, 0, 4, &mut d, 0);
        assert_eq!(v, Value::Bits(0x5566_7788));
        assert!(!info.uninit);
        let (v, _) = load_value(&s, &r, 2, 2, &mut d, 0);
        assert_eq!(v, Value::Bits(0x5566));
        let (_, info) = load_value(&s, &r, 6, 4, &mut d, 0);
        assert!(info.uninit);
    }

    #[test]
    fn data_round_trip_and_halves() {
        let mut d = Opaque::new();
        let x = d.input(0, 3, Fmt::F32);
        let r = region(Init::Uninit, 16);
        let mut s = Slots::new(16, Slot::Unwritten);
        store_value(&mut s, 4, &Value::data(x, Fmt::F32), 4);
        let (v, _) = load_value(&s, &r, 4, 4, &mut d, 0);
        assert_eq!(v, Value::data(x, Fmt::F32));
        // two f16 values read as one 32-bit word: a pack of both
        let h0 = d.input(1, 0, Fmt::F16);
        let h1 = d.input(1, 1, Fmt::F16);
        store_value(&mut s, 8, &Value::data(h0, Fmt::F16), 2);
        store_value(&mut s, 10, &Value::data(h1, Fmt::F16), 2);
        let (v, _) = load_value(&s, &r, 8, 4, &mut d, 0);
        assert_eq!(v.slice(0, 2, 4), Value::data(h0, Fmt::F16));
        assert_eq!(v.slice(2, 2, 4), Value::data(h1, Fmt::F16));
    }

    #[test]
    fn input_elements_read_as_symbols() {
        let mut d = Opaque::new();
        let r = region(
            Init::Input {
                tensor: 2,
                fmt: Some(Fmt::F32),
                esize: 4,
            },
            64,
        );
        let s = Slots::new(64, Slot::Unwritten);
        let (v, _) = load_value(&s, &r, 12, 4, &mut d, 0);
        assert_eq!(v, Value::data(d.input(2, 3, Fmt::F32), Fmt::F32));
        // a v2 load covering elements 4 and 5 gives a pack of both
        let (v, _) = load_value(&s, &r, 16, 8, &mut d, 0);
        assert_eq!(
            v.slice(4, 4, 8),
            Value::data(d.input(2, 5, Fmt::F32), Fmt::F32)
        );
        // integer tensors taint
        let ri = region(
            Init::Input {
                tensor: 0,
                fmt: None,
                esize: 4,
            },
            16,
        );
        let s = Slots::new(16, Slot::Unwritten);
        let (v, _) = load_value(&s, &ri, 0, 4, &mut d, 77);
        assert_eq!(v, Value::Tainted(77));
    }

    #[test]
    fn same_value_detection() {
        let mut d = Opaque::new();
        let x = d.input(0, 0, Fmt::F32);
        let mut s = Slots::new(8, Slot::Unwritten);
        store_value(&mut s, 0, &Value::data(x, Fmt::F32), 4);
        assert!(holds_same(&s, 0, &Value::data(x, Fmt::F32), 4, &d));
        let y = d.input(0, 1, Fmt::F32);
        assert!(!holds_same(&s, 0, &Value::data(y, Fmt::F32), 4, &d));
        store_value(&mut s, 4, &Value::Bits(7), 4);
        assert!(holds_same(
            &s,
            4,
            &Value::<crate::opaque::OVal>::Bits(7),
            4,
            &d
        ));
    }
}
