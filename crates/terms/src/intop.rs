//! Integer data: the operator set of integer terms and its exact meaning.
//!
//! An integer term of width `w` (1..=64) denotes an element of the ring
//! Z/2^w — the bits of a `w`-bit register. `+`, `·` (and so negation,
//! `not`, subtraction and shifts left by a constant) are the ring
//! operations ([`crate::Node::IntAdd`], [`crate::Node::IntMul`]); the
//! decision procedure reasons about them exactly (`normal/ring.rs`).
//! Everything else is an [`IntFn`] application: exact here, by
//! [`apply`], so that counterexamples are confirmed by exact evaluation,
//! but opaque to the normal form (an atom over its arguments' normal forms).
//!
//! The semantics are PTX's (ISA 8.x, integer and bit-manipulation
//! instructions), written independently of the engine's own copy in
//! `ptxeq_exec::int`; `tests` below check both on shared examples.

use serde::{Deserialize, Serialize};

/// The element type of an integer input tensor: `bits` wide, read as
/// signed (two's complement) or unsigned. The input is an integer in that
/// type's range.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct IntTy {
    pub bits: u8,
    pub signed: bool,
}

impl IntTy {
    /// Smallest value of the type.
    pub fn lowest(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    /// Largest value of the type.
    pub fn highest(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    /// The PTX spelling (`s32`, `u8`).
    pub fn name(self) -> String {
        format!("{}{}", if self.signed { 's' } else { 'u' }, self.bits)
    }
}

/// Rounding of a real to an integer (`cvt.rni/rzi/rmi/rpi`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum IntRound {
    /// To nearest, ties to even.
    Nearest,
    /// Toward zero.
    Zero,
    /// Toward −∞.
    Down,
    /// Toward +∞.
    Up,
}

/// An integer operation other than `+`/`·` (see the module docs). The
/// result width is the node's; each operand has its own width.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum IntFn {
    /// Zero-extension of a `from`-bit operand.
    Zext {
        from: u8,
    },
    /// Sign-extension of a `from`-bit operand.
    Sext {
        from: u8,
    },
    /// The low `w` bits of a wider operand (a ring map).
    Trunc,
    And,
    Or,
    Xor,
    /// `a << n`; `n` (32-bit, unsigned) of `w` or more gives 0.
    Shl,
    /// `a >> n`, arithmetic when signed; amounts clamp at `w`.
    Shr {
        signed: bool,
    },
    /// Truncating division; undefined (PTX: unspecified) at a zero divisor.
    Div {
        signed: bool,
    },
    /// Remainder with the dividend's sign; undefined at a zero divisor.
    Rem {
        signed: bool,
    },
    /// The high `w` bits of the `2w`-bit product.
    MulHi {
        signed: bool,
    },
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    /// Absolute value of the signed reading (`abs(MIN) = MIN`).
    Abs,
    /// Number of one bits of the operand (at its own width).
    Popc,
    /// Leading zeros of the operand (at its own width).
    Clz,
    /// Bit reversal.
    Brev,
    /// `bfind`: position of the most significant non-sign bit, or
    /// `0xffffffff`; `shiftamt` gives `width - 1 - pos`.
    Bfind {
        signed: bool,
        shiftamt: bool,
    },
    /// `bfe a, pos, len` (pos and len 32-bit, taken mod 256).
    Bfe {
        signed: bool,
    },
    /// `bfi f, b, pos, len`.
    Bfi,
    /// `prmt.b32 a, b, c` in mode `mode` (0: the generic byte selector;
    /// 1..=6: f4e, b4e, rc8, ecl, ecr, rc16).
    Prmt {
        mode: u8,
    },
    /// `lop3 a, b, c` with look-up table `lut`.
    Lop3 {
        lut: u8,
    },
    /// `add.sat.s32` / `sub.sat.s32`: clamped to the signed range.
    AddSat,
    SubSat,
    /// A real operand rounded to an integer and saturated to the signed
    /// or unsigned `w`-bit range (`cvt.rzi.s32.f32` of real data). The
    /// operand is a real term.
    FromReal {
        rnd: IntRound,
        signed: bool,
    },
}

impl IntFn {
    /// A short name for printing.
    pub fn name(self) -> String {
        let s = |signed: bool| if signed { "s" } else { "u" };
        match self {
            IntFn::Zext { from } => format!("zext{from}"),
            IntFn::Sext { from } => format!("sext{from}"),
            IntFn::Trunc => "trunc".into(),
            IntFn::And => "and".into(),
            IntFn::Or => "or".into(),
            IntFn::Xor => "xor".into(),
            IntFn::Shl => "shl".into(),
            IntFn::Shr { signed } => format!("shr.{}", s(signed)),
            IntFn::Div { signed } => format!("div.{}", s(signed)),
            IntFn::Rem { signed } => format!("rem.{}", s(signed)),
            IntFn::MulHi { signed } => format!("mulhi.{}", s(signed)),
            IntFn::Min { signed } => format!("min.{}", s(signed)),
            IntFn::Max { signed } => format!("max.{}", s(signed)),
            IntFn::Abs => "abs".into(),
            IntFn::Popc => "popc".into(),
            IntFn::Clz => "clz".into(),
            IntFn::Brev => "brev".into(),
            IntFn::Bfind { signed, shiftamt } => {
                format!(
                    "bfind.{}{}",
                    s(signed),
                    if shiftamt { ".shiftamt" } else { "" }
                )
            }
            IntFn::Bfe { signed } => format!("bfe.{}", s(signed)),
            IntFn::Bfi => "bfi".into(),
            IntFn::Prmt { mode } => format!("prmt{mode}"),
            IntFn::Lop3 { lut } => format!("lop3.{lut:#04x}"),
            IntFn::AddSat => "add.sat".into(),
            IntFn::SubSat => "sub.sat".into(),
            IntFn::FromReal { rnd, signed } => format!(
                "cvt.{}.{}",
                match rnd {
                    IntRound::Nearest => "rni",
                    IntRound::Zero => "rzi",
                    IntRound::Down => "rmi",
                    IntRound::Up => "rpi",
                },
                s(signed)
            ),
        }
    }

    /// Three bytes naming the function and its parameters (part of the
    /// structural hash: never change a code, only add new ones).
    pub fn code(self) -> [u8; 3] {
        let b = u8::from;
        match self {
            IntFn::Zext { from } => [1, from, 0],
            IntFn::Sext { from } => [2, from, 0],
            IntFn::Trunc => [3, 0, 0],
            IntFn::And => [4, 0, 0],
            IntFn::Or => [5, 0, 0],
            IntFn::Xor => [6, 0, 0],
            IntFn::Shl => [7, 0, 0],
            IntFn::Shr { signed } => [8, b(signed), 0],
            IntFn::Div { signed } => [9, b(signed), 0],
            IntFn::Rem { signed } => [10, b(signed), 0],
            IntFn::MulHi { signed } => [11, b(signed), 0],
            IntFn::Min { signed } => [12, b(signed), 0],
            IntFn::Max { signed } => [13, b(signed), 0],
            IntFn::Abs => [14, 0, 0],
            IntFn::Popc => [15, 0, 0],
            IntFn::Clz => [16, 0, 0],
            IntFn::Brev => [17, 0, 0],
            IntFn::Bfind { signed, shiftamt } => [18, b(signed), b(shiftamt)],
            IntFn::Bfe { signed } => [19, b(signed), 0],
            IntFn::Bfi => [20, 0, 0],
            IntFn::Prmt { mode } => [21, mode, 0],
            IntFn::Lop3 { lut } => [22, lut, 0],
            IntFn::AddSat => [23, 0, 0],
            IntFn::SubSat => [24, 0, 0],
            IntFn::FromReal { rnd, signed } => [25, rnd as u8, b(signed)],
        }
    }

    /// Whether the operands may be reordered (sorted canonically).
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            IntFn::And
                | IntFn::Or
                | IntFn::Xor
                | IntFn::Min { .. }
                | IntFn::Max { .. }
                | IntFn::AddSat
        )
    }

    /// How many operands the function takes.
    pub fn arity(self) -> usize {
        match self {
            IntFn::Zext { .. }
            | IntFn::Sext { .. }
            | IntFn::Trunc
            | IntFn::Abs
            | IntFn::Popc
            | IntFn::Clz
            | IntFn::Brev
            | IntFn::Bfind { .. }
            | IntFn::FromReal { .. } => 1,
            IntFn::And
            | IntFn::Or
            | IntFn::Xor
            | IntFn::Shl
            | IntFn::Shr { .. }
            | IntFn::Div { .. }
            | IntFn::Rem { .. }
            | IntFn::MulHi { .. }
            | IntFn::Min { .. }
            | IntFn::Max { .. }
            | IntFn::AddSat
            | IntFn::SubSat => 2,
            IntFn::Bfe { .. } | IntFn::Prmt { .. } | IntFn::Lop3 { .. } => 3,
            IntFn::Bfi => 4,
        }
    }
}

/// Integer comparison. Interned comparisons use only `Eq`, `Ne`, `Lt`,
/// `Le` (`a > b` is `b < a`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum IntCmpOp {
    Eq,
    Ne,
    Lt { signed: bool },
    Le { signed: bool },
    Gt { signed: bool },
    Ge { signed: bool },
}

impl IntCmpOp {
    /// Whether `a op b` holds for `w`-bit values `a`, `b`.
    pub fn holds(self, a: u64, b: u64, w: u8) -> bool {
        let rd = |x: u64, signed: bool| read(x, w, signed);
        match self {
            IntCmpOp::Eq => mask(a, w) == mask(b, w),
            IntCmpOp::Ne => mask(a, w) != mask(b, w),
            IntCmpOp::Lt { signed } => rd(a, signed) < rd(b, signed),
            IntCmpOp::Le { signed } => rd(a, signed) <= rd(b, signed),
            IntCmpOp::Gt { signed } => rd(a, signed) > rd(b, signed),
            IntCmpOp::Ge { signed } => rd(a, signed) >= rd(b, signed),
        }
    }

    /// Two bytes naming the operator (part of the structural hash).
    pub fn code(self) -> [u8; 2] {
        match self {
            IntCmpOp::Eq => [0, 0],
            IntCmpOp::Ne => [1, 0],
            IntCmpOp::Lt { signed } => [2, u8::from(signed)],
            IntCmpOp::Le { signed } => [3, u8::from(signed)],
            IntCmpOp::Gt { signed } => [4, u8::from(signed)],
            IntCmpOp::Ge { signed } => [5, u8::from(signed)],
        }
    }

    /// The infix spelling (`<s`, `<=u`, `==`).
    pub fn symbol(self) -> String {
        let s = |signed: bool| if signed { "s" } else { "u" };
        match self {
            IntCmpOp::Eq => "==".into(),
            IntCmpOp::Ne => "!=".into(),
            IntCmpOp::Lt { signed } => format!("<{}", s(signed)),
            IntCmpOp::Le { signed } => format!("<={}", s(signed)),
            IntCmpOp::Gt { signed } => format!(">{}", s(signed)),
            IntCmpOp::Ge { signed } => format!(">={}", s(signed)),
        }
    }
}

/// The low `w` bits of `x`.
pub fn mask(x: u64, w: u8) -> u64 {
    if w >= 64 { x } else { x & ((1u64 << w) - 1) }
}

/// `x` (low `w` bits) read as a signed or unsigned integer.
pub fn read(x: u64, w: u8, signed: bool) -> i128 {
    let x = mask(x, w);
    if signed && w > 0 && w < 128 && (x >> (w - 1)) & 1 == 1 {
        i128::from(x) - (1i128 << w)
    } else {
        i128::from(x)
    }
}

/// An integer reduced modulo 2^w.
pub fn wrap(v: i128, w: u8) -> u64 {
    mask(v as u64, w)
}

/// `f(args)` at result width `w`; each argument is `(bits, width)`.
/// `None` where PTX leaves the result unspecified (division by zero) or
/// the operands do not fit `f` (wrong count; `FromReal`, whose operand is
/// real, is evaluated by [`from_real`]).
pub fn apply(f: IntFn, w: u8, args: &[(u64, u8)]) -> Option<u64> {
    if args.len() != f.arity() {
        return None;
    }
    let a = |i: usize| mask(args[i].0, args[i].1);
    let aw = |i: usize| args[i].1;
    let rd = |i: usize, signed: bool| read(args[i].0, args[i].1, signed);
    let wi = u32::from(w);
    Some(match f {
        IntFn::Zext { .. } => mask(a(0), w),
        IntFn::Sext { .. } => wrap(rd(0, true), w),
        IntFn::Trunc => mask(a(0), w),
        IntFn::And => mask(a(0) & a(1), w),
        IntFn::Or => mask(a(0) | a(1), w),
        IntFn::Xor => mask(a(0) ^ a(1), w),
        IntFn::Shl => {
            let n = mask(a(1), 32);
            if n >= u64::from(w) {
                0
            } else {
                mask(a(0) << n, w)
            }
        }
        IntFn::Shr { signed } => {
            let n = mask(a(1), 32).min(u64::from(w)) as u32;
            if signed {
                let v = read(a(0), w, true);
                wrap(if n >= 127 { v >> 127 } else { v >> n }, w)
            } else if n >= wi {
                0
            } else {
                mask(a(0), w) >> n
            }
        }
        IntFn::Div { signed } | IntFn::Rem { signed } => {
            let (x, y) = (read(a(0), w, signed), read(a(1), w, signed));
            if y == 0 {
                return None;
            }
            let r = if matches!(f, IntFn::Div { .. }) {
                x.wrapping_div(y)
            } else {
                x.wrapping_rem(y)
            };
            wrap(r, w)
        }
        IntFn::MulHi { signed } => {
            let p = read(a(0), w, signed).wrapping_mul(read(a(1), w, signed));
            mask((p >> w) as u64, w)
        }
        IntFn::Min { signed } => {
            if read(a(0), w, signed) <= read(a(1), w, signed) {
                mask(a(0), w)
            } else {
                mask(a(1), w)
            }
        }
        IntFn::Max { signed } => {
            if read(a(0), w, signed) >= read(a(1), w, signed) {
                mask(a(0), w)
            } else {
                mask(a(1), w)
            }
        }
        IntFn::Abs => wrap(read(a(0), w, true).abs(), w),
        IntFn::Popc => mask(u64::from(a(0).count_ones()), w),
        IntFn::Clz => {
            let v = a(0);
            let bits = u32::from(aw(0));
            let z = if v == 0 {
                bits
            } else {
                v.leading_zeros() - (64 - bits)
            };
            mask(u64::from(z), w)
        }
        IntFn::Brev => {
            let bits = u32::from(aw(0));
            mask(a(0).reverse_bits() >> (64 - bits), w)
        }
        IntFn::Bfind { signed, shiftamt } => {
            let bits = aw(0);
            let mut v = a(0);
            if signed && (v >> (bits - 1)) & 1 == 1 {
                v = mask(!v, bits);
            }
            if v == 0 {
                mask(0xFFFF_FFFF, w)
            } else {
                let pos = 63 - u64::from(v.leading_zeros());
                mask(
                    if shiftamt {
                        u64::from(bits) - 1 - pos
                    } else {
                        pos
                    },
                    w,
                )
            }
        }
        IntFn::Bfe { signed } => {
            let (x, xw) = (a(0), u32::from(aw(0)));
            let pos = (a(1) & 0xFF) as u32;
            let len = (a(2) & 0xFF) as u32;
            let msb = xw - 1;
            let bit = |i: u32| (x >> i) & 1;
            let sbit = if signed && len != 0 {
                bit((pos + len - 1).min(msb))
            } else {
                0
            };
            let mut d = 0u64;
            for i in 0..xw {
                let b = if i < len && pos + i <= msb {
                    bit(pos + i)
                } else {
                    sbit
                };
                d |= b << i;
            }
            mask(d, w)
        }
        IntFn::Bfi => {
            let pos = (a(2) & 0xFF) as u32;
            let len = (a(3) & 0xFF) as u32;
            let mut d = mask(a(1), w);
            for i in 0..len {
                if pos + i >= wi {
                    break;
                }
                let bit = (a(0) >> i) & 1;
                d = (d & !(1u64 << (pos + i))) | (bit << (pos + i));
            }
            d
        }
        IntFn::Prmt { mode } => mask(prmt(a(0), a(1), a(2), mode), w),
        IntFn::Lop3 { lut } => {
            let (x, y, z) = (a(0), a(1), a(2));
            let mut d = 0u64;
            for i in 0..wi {
                let idx = (((x >> i) & 1) << 2) | (((y >> i) & 1) << 1) | ((z >> i) & 1);
                d |= u64::from((lut >> idx) & 1) << i;
            }
            d
        }
        IntFn::AddSat | IntFn::SubSat => {
            let (x, y) = (read(a(0), w, true), read(a(1), w, true));
            let r = if f == IntFn::AddSat { x + y } else { x - y };
            let ty = IntTy {
                bits: w,
                signed: true,
            };
            wrap(r.clamp(ty.lowest(), ty.highest()), w)
        }
        IntFn::FromReal { .. } => return None,
    })
}

/// `prmt.b32{.mode} a, b, c` (`mode` as in [`IntFn::Prmt`]).
fn prmt(a: u64, b: u64, c: u64, mode: u8) -> u64 {
    let tmp = (mask(b, 32) << 32) | mask(a, 32);
    let byte = |i: u64| (tmp >> (8 * (i & 7))) & 0xFF;
    let s = c & 3;
    let idx: [u64; 4] = match mode {
        1 => [s, s + 1, s + 2, s + 3],
        2 => [(8 + s) & 7, (7 + s) & 7, (6 + s) & 7, (5 + s) & 7],
        3 => [s, s, s, s],
        4 => [s, s.max(1), s.max(2), 3],
        5 => [0, s.min(1), s.min(2), s],
        6 => {
            let lo = 2 * (s & 1);
            [lo, lo + 1, lo, lo + 1]
        }
        _ => {
            let mut d = 0u64;
            for i in 0..4 {
                let sel = (c >> (4 * i)) & 0xF;
                let mut v = byte(sel & 7);
                if sel & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xFF } else { 0 };
                }
                d |= v << (8 * i);
            }
            return d;
        }
    };
    let mut d = 0u64;
    for (i, &src) in idx.iter().enumerate() {
        d |= byte(src) << (8 * i);
    }
    d
}

/// `cvt.{rnd}.{s|u}w` of the exact rational `x`: rounded, then saturated
/// to the destination range (PTX float-to-integer conversions saturate).
pub fn from_real(x: &crate::Rat, rnd: IntRound, signed: bool, w: u8) -> u64 {
    use num_bigint::BigInt;
    let (n, d) = x.parts();
    let zero = BigInt::from(0);
    // `d > 0`; `/` and `%` truncate toward zero.
    let (q, r) = (&n / &d, &n % &d);
    let floor = if r < zero { &q - 1 } else { q.clone() };
    let frac = &n - &floor * &d; // in [0, d)
    let ceil = if frac == zero {
        floor.clone()
    } else {
        &floor + 1
    };
    let rounded = match rnd {
        IntRound::Down => floor,
        IntRound::Up => ceil,
        IntRound::Zero => {
            if n < zero {
                ceil
            } else {
                floor
            }
        }
        IntRound::Nearest => {
            let twice = &frac * 2;
            if twice < d {
                floor
            } else if twice > d || (&floor % 2) != zero {
                ceil
            } else {
                floor
            }
        }
    };
    let ty = IntTy { bits: w, signed };
    let c = rounded.clamp(BigInt::from(ty.lowest()), BigInt::from(ty.highest()));
    wrap(i128::try_from(&c).unwrap_or(0), w)
}

/// How an evaluator sees the children of an integer node.
pub struct IntEnv<'a> {
    /// Bits of an integer child (`None`: undefined there).
    pub int: &'a dyn Fn(crate::TermId) -> Option<u64>,
    /// Value of a boolean child.
    pub boolean: &'a dyn Fn(crate::TermId) -> Option<bool>,
    /// `FromReal` of a real child: its rounded, saturated value when the
    /// evaluator knows it exactly.
    pub from_real: &'a dyn Fn(IntRound, bool, u8, crate::TermId) -> Option<u64>,
    /// An integer input element's value (an integer in its type's range).
    pub input: &'a dyn Fn(u32, u64) -> Option<i128>,
}

/// The bits of integer node `node` (of `terms`) from its children's values;
/// `None` where undefined (a division by zero, an unknown child). A
/// `Select` takes its branch by the condition.
pub fn eval_node(terms: &crate::Terms, node: &crate::Node, env: &IntEnv<'_>) -> Option<u64> {
    use crate::Node;
    Some(match node {
        Node::IntConst { v, .. } => *v,
        Node::IntInput { tensor, index, ty } => {
            let x = (env.input)(*tensor, *index)?;
            if x < ty.lowest() || x > ty.highest() {
                return None;
            }
            wrap(x, ty.bits)
        }
        Node::IntAdd(w, ops) => {
            let mut acc = 0u64;
            for o in ops.iter() {
                acc = acc.wrapping_add((env.int)(*o)?);
            }
            mask(acc, *w)
        }
        Node::IntMul(w, ops) => {
            let mut acc = 1u64;
            for o in ops.iter() {
                acc = acc.wrapping_mul((env.int)(*o)?);
            }
            mask(acc, *w)
        }
        Node::IntOp(IntFn::FromReal { rnd, signed }, w, ops) => {
            (env.from_real)(*rnd, *signed, *w, *ops.first()?)?
        }
        Node::IntOp(f, w, ops) => {
            let mut args: smallvec::SmallVec<[(u64, u8); 4]> = smallvec::SmallVec::new();
            for o in ops.iter() {
                args.push(((env.int)(*o)?, terms.int_width(*o)?));
            }
            apply(*f, *w, &args)?
        }
        Node::Select(c, a, b) => {
            if (env.boolean)(*c)? {
                (env.int)(*a)?
            } else {
                (env.int)(*b)?
            }
        }
        _ => return None,
    })
}

/// The truth of an integer comparison node from its operands' values.
pub fn eval_cmp(
    terms: &crate::Terms,
    op: IntCmpOp,
    a: crate::TermId,
    b: crate::TermId,
    env: &IntEnv<'_>,
) -> Option<bool> {
    let w = terms.int_width(a)?;
    Some(op.holds((env.int)(a)?, (env.int)(b)?, w))
}

/// The exact integer an `f64` input value holds, if it is one.
pub fn f64_integer(x: f64) -> Option<i128> {
    (x.is_finite() && x.fract() == 0.0 && x.abs() < 1.8e38).then_some(x as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rat;

    #[test]
    fn ranges_and_reading() {
        let s8 = IntTy {
            bits: 8,
            signed: true,
        };
        assert_eq!((s8.lowest(), s8.highest()), (-128, 127));
        let u64t = IntTy {
            bits: 64,
            signed: false,
        };
        assert_eq!(u64t.highest(), u64::MAX as i128);
        assert_eq!(read(0xff, 8, true), -1);
        assert_eq!(read(0xff, 8, false), 255);
        assert_eq!(wrap(-1, 32), 0xffff_ffff);
    }

    #[test]
    fn ptx_examples() {
        // shr.s32 of -8 by 1 is -4; by 40 (clamped) the sign fill.
        assert_eq!(
            apply(
                IntFn::Shr { signed: true },
                32,
                &[(0xffff_fff8, 32), (1, 32)]
            ),
            Some(0xffff_fffc)
        );
        assert_eq!(
            apply(
                IntFn::Shr { signed: true },
                32,
                &[(0xffff_fff8, 32), (40, 32)]
            ),
            Some(0xffff_ffff)
        );
        assert_eq!(apply(IntFn::Shl, 32, &[(1, 32), (32, 32)]), Some(0));
        assert_eq!(
            apply(IntFn::Div { signed: true }, 32, &[(7, 32), (0, 32)]),
            None
        );
        assert_eq!(
            apply(
                IntFn::Rem { signed: true },
                32,
                &[(0xffff_fff9, 32), (2, 32)]
            ),
            Some(0xffff_ffff)
        );
        assert_eq!(
            apply(
                IntFn::MulHi { signed: false },
                32,
                &[(1 << 31, 32), (4, 32)]
            ),
            Some(2)
        );
        assert_eq!(apply(IntFn::Clz, 32, &[(1, 32)]), Some(31));
        assert_eq!(apply(IntFn::Popc, 32, &[(0xff, 64)]), Some(8));
        assert_eq!(
            apply(IntFn::Sext { from: 8 }, 32, &[(0x80, 8)]),
            Some(0xffff_ff80)
        );
        assert_eq!(
            apply(
                IntFn::Bfe { signed: true },
                32,
                &[(0xf0, 32), (4, 32), (4, 32)]
            ),
            Some(0xffff_ffff)
        );
        assert_eq!(
            apply(
                IntFn::Lop3 { lut: 0x96 },
                32,
                &[(0b1100, 32), (0b1010, 32), (0b1001, 32)]
            ),
            Some(0b1100 ^ 0b1010 ^ 0b1001)
        );
        assert_eq!(
            apply(IntFn::AddSat, 32, &[(0x7fff_ffff, 32), (1, 32)]),
            Some(0x7fff_ffff)
        );
        // prmt with the default selector 0x3210 is the identity on a.
        assert_eq!(
            apply(
                IntFn::Prmt { mode: 0 },
                32,
                &[(0x1234_5678, 32), (0, 32), (0x3210, 32)]
            ),
            Some(0x1234_5678)
        );
    }

    #[test]
    fn real_to_integer_rounds_and_saturates() {
        let r = |n: i64, d: i64| Rat::new(n, d).expect("nonzero");
        assert_eq!(from_real(&r(5, 2), IntRound::Nearest, true, 32), 2);
        assert_eq!(from_real(&r(7, 2), IntRound::Nearest, true, 32), 4);
        assert_eq!(from_real(&r(-5, 2), IntRound::Zero, true, 32), wrap(-2, 32));
        assert_eq!(from_real(&r(-5, 2), IntRound::Down, true, 32), wrap(-3, 32));
        assert_eq!(from_real(&r(5, 2), IntRound::Up, true, 32), 3);
        assert_eq!(from_real(&r(-1, 1), IntRound::Zero, false, 32), 0);
        assert_eq!(
            from_real(&Rat::from_i64(1 << 40), IntRound::Zero, true, 32),
            0x7fff_ffff
        );
    }
}
