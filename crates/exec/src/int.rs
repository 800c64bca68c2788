//! Exact PTX integer and bit semantics on concrete bits.
//!
//! Every function takes operands as `u64` bit patterns holding a value of
//! `w` bits (8, 16, 32 or 64) and returns the result masked to its width;
//! `signed` selects the `.sN` reading. Functions are pure and total; the
//! ones PTX leaves unspecified (division by zero) return `None`.

use crate::value::mask_bits;

/// Sign-extends the low `w` bits.
pub fn sext(x: u64, w: u32) -> i64 {
    if w >= 64 {
        x as i64
    } else {
        let s = 64 - w;
        ((x << s) as i64) >> s
    }
}

/// The value of `x` read at width `w` as a wide integer.
pub fn read(x: u64, w: u32, signed: bool) -> i128 {
    if signed {
        i128::from(sext(x, w))
    } else {
        i128::from(mask_bits(x, w))
    }
}

pub fn add(a: u64, b: u64, w: u32) -> u64 {
    mask_bits(a.wrapping_add(b), w)
}

pub fn sub(a: u64, b: u64, w: u32) -> u64 {
    mask_bits(a.wrapping_sub(b), w)
}

/// `add.sat.s32`: clamps to the signed range.
pub fn add_sat_s32(a: u64, b: u64) -> u64 {
    let r = i64::from(sext(a, 32) as i32) + i64::from(sext(b, 32) as i32);
    mask_bits(r.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u64, 32)
}

pub fn sub_sat_s32(a: u64, b: u64) -> u64 {
    let r = i64::from(sext(a, 32) as i32) - i64::from(sext(b, 32) as i32);
    mask_bits(r.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u64, 32)
}

/// The full 2w-bit product of two w-bit values.
pub fn mul_full(a: u64, b: u64, w: u32, signed: bool) -> u128 {
    (read(a, w, signed).wrapping_mul(read(b, w, signed))) as u128
}

pub fn mul_lo(a: u64, b: u64, w: u32) -> u64 {
    mask_bits(a.wrapping_mul(b), w)
}

pub fn mul_hi(a: u64, b: u64, w: u32, signed: bool) -> u64 {
    mask_bits((mul_full(a, b, w, signed) >> w) as u64, w)
}

/// `mul.wide`: the 2w-bit product (w ≤ 32).
pub fn mul_wide(a: u64, b: u64, w: u32, signed: bool) -> u64 {
    mask_bits(mul_full(a, b, w, signed) as u64, 2 * w)
}

/// `mul24.lo/hi`: 24-bit operands (sign-extended from bit 23 for `.s32`),
/// 48-bit product; `.lo` keeps bits 31..0, `.hi` bits 47..16.
pub fn mul24(a: u64, b: u64, hi: bool, signed: bool) -> u64 {
    let p = read(a, 24, signed) * read(b, 24, signed);
    let p = p as u128 as u64;
    if hi {
        mask_bits(p >> 16, 32)
    } else {
        mask_bits(p, 32)
    }
}

/// Truncating division; `None` on division by zero. `i64::MIN / -1` wraps.
pub fn div(a: u64, b: u64, w: u32, signed: bool) -> Option<u64> {
    if mask_bits(b, w) == 0 {
        return None;
    }
    let r = if signed {
        read(a, w, true).wrapping_div(read(b, w, true))
    } else {
        read(a, w, false) / read(b, w, false)
    };
    Some(mask_bits(r as u64, w))
}

/// Remainder with the sign of the dividend; `None` on zero.
pub fn rem(a: u64, b: u64, w: u32, signed: bool) -> Option<u64> {
    if mask_bits(b, w) == 0 {
        return None;
    }
    let r = if signed {
        read(a, w, true).wrapping_rem(read(b, w, true))
    } else {
        read(a, w, false) % read(b, w, false)
    };
    Some(mask_bits(r as u64, w))
}

pub fn min(a: u64, b: u64, w: u32, signed: bool) -> u64 {
    if read(a, w, signed) <= read(b, w, signed) {
        mask_bits(a, w)
    } else {
        mask_bits(b, w)
    }
}

pub fn max(a: u64, b: u64, w: u32, signed: bool) -> u64 {
    if read(a, w, signed) >= read(b, w, signed) {
        mask_bits(a, w)
    } else {
        mask_bits(b, w)
    }
}

pub fn abs(a: u64, w: u32) -> u64 {
    mask_bits(read(a, w, true).unsigned_abs() as u64, w)
}

pub fn neg(a: u64, w: u32) -> u64 {
    mask_bits(a.wrapping_neg(), w)
}

/// `shl`: shift amounts ≥ w give 0.
pub fn shl(a: u64, n: u64, w: u32) -> u64 {
    let n = mask_bits(n, 32);
    if n >= u64::from(w) {
        0
    } else {
        mask_bits(a << n, w)
    }
}

/// `shr`: arithmetic for signed types (amounts ≥ w give the sign fill),
/// logical otherwise (amounts ≥ w give 0).
pub fn shr(a: u64, n: u64, w: u32, signed: bool) -> u64 {
    let n = mask_bits(n, 32).min(u64::from(w));
    if signed {
        let v = sext(a, w);
        let r = if n >= 64 { v >> 63 } else { v >> n };
        mask_bits(r as u64, w)
    } else if n >= u64::from(w) {
        0
    } else {
        mask_bits(a, w) >> n
    }
}

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: funnel shift of the 64-bit
/// `b:a`; `.l` keeps the high word of the left shift, `.r` the low word of
/// the right shift; the amount is `c & 31` (wrap) or `min(c, 32)` (clamp).
pub fn shf(a: u64, b: u64, c: u64, left: bool, clamp: bool) -> u64 {
    let n = if clamp {
        mask_bits(c, 32).min(32)
    } else {
        c & 31
    };
    let cat = (mask_bits(b, 32) << 32) | mask_bits(a, 32);
    if left {
        let s = if n >= 64 { 0 } else { cat << n };
        (s >> 32) & 0xFFFF_FFFF
    } else {
        let s = if n >= 64 { 0 } else { cat >> n };
        s & 0xFFFF_FFFF
    }
}

/// `bfe`: extract `len` bits at `pos` (both taken mod 256), sign-extended
/// from the field's top bit for signed types (bits past the operand's msb
/// read as its sign / zero).
pub fn bfe(a: u64, pos: u64, len: u64, w: u32, signed: bool) -> u64 {
    let pos = (pos & 0xFF) as u32;
    let len = (len & 0xFF) as u32;
    let msb = w - 1;
    let bit = |i: u32| (a >> i) & 1;
    let sbit = if signed && len != 0 {
        bit((pos + len - 1).min(msb))
    } else {
        0
    };
    let mut d = 0u64;
    for i in 0..w {
        let b = if i < len && pos + i <= msb {
            bit(pos + i)
        } else {
            sbit
        };
        d |= b << i;
    }
    d
}

/// `bfi d, f, b, pos, len`: `b` with `len` low bits of `f` inserted at
/// `pos` (both mod 256; bits past the msb are dropped).
pub fn bfi(f: u64, b: u64, pos: u64, len: u64, w: u32) -> u64 {
    let pos = (pos & 0xFF) as u32;
    let len = (len & 0xFF) as u32;
    let mut d = mask_bits(b, w);
    for i in 0..len {
        if pos + i >= w {
            break;
        }
        let bit = (f >> i) & 1;
        d = (d & !(1u64 << (pos + i))) | (bit << (pos + i));
    }
    d
}

/// `prmt.b32{.mode} d, a, b, c`: byte permute of the 8 bytes `b:a`.
pub fn prmt(a: u64, b: u64, c: u64, mode: Option<ptxeq_ir::PrmtMode>) -> u64 {
    use ptxeq_ir::PrmtMode as M;
    let tmp = (mask_bits(b, 32) << 32) | mask_bits(a, 32);
    let byte = |i: u64| (tmp >> (8 * (i & 7))) & 0xFF;
    let s = c & 3;
    // Byte sources for d.b0..d.b3 in the special modes.
    let idx: [u64; 4] = match mode {
        None => {
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
        Some(M::F4e) => [s, s + 1, s + 2, s + 3],
        Some(M::B4e) => [(8 + s) & 7, (7 + s) & 7, (6 + s) & 7, (5 + s) & 7],
        Some(M::Rc8) => [s, s, s, s],
        Some(M::Ecl) => [s, s.max(1), s.max(2), 3],
        Some(M::Ecr) => [0, s.min(1), s.min(2), s],
        Some(M::Rc16) => {
            let lo = 2 * (s & 1);
            [lo, lo + 1, lo, lo + 1]
        }
    };
    let mut d = 0u64;
    for (i, &src) in idx.iter().enumerate() {
        d |= byte(src) << (8 * i);
    }
    d
}

pub fn popc(a: u64, w: u32) -> u64 {
    u64::from(mask_bits(a, w).count_ones())
}

pub fn clz(a: u64, w: u32) -> u64 {
    let v = mask_bits(a, w);
    if v == 0 {
        u64::from(w)
    } else {
        u64::from(v.leading_zeros() - (64 - w))
    }
}

pub fn brev(a: u64, w: u32) -> u64 {
    mask_bits(a, w).reverse_bits() >> (64 - w)
}

/// `bfind`: position of the most significant non-sign bit (`0xffffffff`
/// when there is none); `.shiftamt` returns `w-1-pos` instead.
pub fn bfind(a: u64, w: u32, signed: bool, shiftamt: bool) -> u64 {
    let mut v = mask_bits(a, w);
    if signed && (v >> (w - 1)) & 1 == 1 {
        v = mask_bits(!v, w);
    }
    if v == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - u64::from(v.leading_zeros());
    if shiftamt {
        u64::from(w) - 1 - pos
    } else {
        pos
    }
}

/// `lop3.b32 d, a, b, c, lut`: bit `i` of `d` is bit
/// `(a_i << 2) | (b_i << 1) | c_i` of `lut` (so `lut = F(0xF0, 0xCC, 0xAA)`).
pub fn lop3(a: u64, b: u64, c: u64, lut: u64, w: u32) -> u64 {
    let mut d = 0u64;
    for i in 0..w {
        let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
        d |= ((lut >> idx) & 1) << i;
    }
    d
}

/// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` ones starting at bit `a`.
pub fn bmsk(a: u64, b: u64, clamp: bool) -> u64 {
    let (pos, len) = if clamp {
        (mask_bits(a, 32).min(32), mask_bits(b, 32).min(32))
    } else {
        (a & 31, b & 31)
    };
    let ones = if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    mask_bits(ones << pos.min(63), 32) & if pos >= 32 { 0 } else { u64::MAX }
}

/// `szext.{clamp,wrap}.{u32,s32} d, a, b`: sign/zero-extend the low `b`
/// bits of `a`.
pub fn szext(a: u64, b: u64, clamp: bool, signed: bool) -> u64 {
    let n = if clamp {
        mask_bits(b, 32).min(32) as u32
    } else {
        (b & 31) as u32
    };
    if n == 0 {
        return 0;
    }
    if n >= 32 {
        return mask_bits(a, 32);
    }
    if signed {
        mask_bits(sext(a, n) as u64, 32)
    } else {
        mask_bits(a, n)
    }
}

/// `fns.b32 d, mask, base, offset`: the position of the `offset`-th set bit
/// of `mask` counting from `base` (forwards for positive, backwards for
/// negative offsets), `0xffffffff` if there is none.
pub fn fns(mask: u64, base: u64, offset: u64) -> u64 {
    let mask = mask_bits(mask, 32);
    let base = (base & 31) as i64;
    let off = sext(offset, 32);
    let set = |i: i64| (mask >> i) & 1 == 1;
    if off == 0 {
        return 0xFFFF_FFFF;
    }
    let mut count = 0i64;
    if off > 0 {
        for i in base..32 {
            if set(i) {
                count += 1;
                if count == off {
                    return i as u64;
                }
            }
        }
    } else {
        for i in (0..=base).rev() {
            if set(i) {
                count -= 1;
                if count == off {
                    return i as u64;
                }
            }
        }
    }
    0xFFFF_FFFF
}

/// Converts an integer read at `(src_w, src_signed)` to `(dst_w,
/// dst_signed)`: truncation, or clamping to the destination range with
/// `sat`.
pub fn convert(
    x: u64,
    src_w: u32,
    src_signed: bool,
    dst_w: u32,
    dst_signed: bool,
    sat: bool,
) -> u64 {
    let v = read(x, src_w, src_signed);
    if sat {
        let (lo, hi) = range(dst_w, dst_signed);
        mask_bits(v.clamp(lo, hi) as u64, dst_w)
    } else {
        mask_bits(v as u64, dst_w)
    }
}

/// The value range of an integer type.
pub fn range(w: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

/// Float (exactly given as `f64`) to integer with a PTX rounding mode
/// (`rni` nearest-even, `rzi` toward zero, `rmi` down, `rpi` up); the result
/// saturates to the destination range and NaN gives 0, as PTX specifies.
pub fn float_to_int(x: f64, rnd: Option<ptxeq_ir::Rounding>, w: u32, signed: bool) -> u64 {
    use ptxeq_ir::Rounding as R;
    if x.is_nan() {
        return 0;
    }
    let r = match rnd {
        Some(R::Rni) | Some(R::Rn) => {
            let f = x.floor();
            let diff = x - f;
            if diff > 0.5 || (diff == 0.5 && (f / 2.0).fract() != 0.0) {
                f + 1.0
            } else {
                f
            }
        }
        Some(R::Rmi) | Some(R::Rm) => x.floor(),
        Some(R::Rpi) | Some(R::Rp) => x.ceil(),
        _ => x.trunc(),
    };
    let (lo, hi) = range(w, signed);
    let v = if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i128
    };
    mask_bits(v as u64, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_signedness() {
        assert_eq!(add(0xFFFF_FFFF, 1, 32), 0);
        assert_eq!(sub(0, 1, 16), 0xFFFF);
        assert_eq!(add_sat_s32(0x7FFF_FFFF, 1), 0x7FFF_FFFF);
        assert_eq!(sub_sat_s32(0x8000_0000, 1), 0x8000_0000);
        assert_eq!(min(0xFFFF_FFFF, 1, 32, true), 0xFFFF_FFFF); // -1 < 1
        assert_eq!(min(0xFFFF_FFFF, 1, 32, false), 1);
        assert_eq!(max(0x80, 0x7F, 8, true), 0x7F); // -128 < 127
        assert_eq!(abs(0xFFFF_FFF6, 32), 10);
        assert_eq!(abs(0x8000_0000, 32), 0x8000_0000);
        assert_eq!(neg(5, 32), 0xFFFF_FFFB);
    }

    #[test]
    fn multiplies() {
        // 0x12345678 * 0x9abcdef0 = 0x0b00ea4e_242d2080
        assert_eq!(mul_lo(0x1234_5678, 0x9abc_def0, 32), 0x242d_2080);
        assert_eq!(mul_hi(0x1234_5678, 0x9abc_def0, 32, false), 0x0b00_ea4e);
        // signed: 0x9abcdef0 = -1698898192; product = -523287587 * ... compute hi
        // (-1)*(-1) = 1: hi word 0
        assert_eq!(mul_hi(0xFFFF_FFFF, 0xFFFF_FFFF, 32, true), 0);
        assert_eq!(mul_hi(0xFFFF_FFFF, 0xFFFF_FFFF, 32, false), 0xFFFF_FFFE);
        assert_eq!(mul_wide(0xFFFF_FFFF, 2, 32, true), 0xFFFF_FFFF_FFFF_FFFE);
        assert_eq!(mul_wide(0xFFFF_FFFF, 2, 32, false), 0x1_FFFF_FFFE);
        assert_eq!(mul_wide(0xFFFF, 0xFFFF, 16, false), 0xFFFE_0001);
        // 64-bit hi: 2^63 * 4 = 2^65 → hi = 2
        assert_eq!(mul_hi(1 << 63, 4, 64, false), 2);
        assert_eq!(mul24(0x00FF_FFFF, 2, false, true), 0xFFFF_FFFE); // -1 * 2 (24-bit signed)
        assert_eq!(
            mul24(0x0080_0000, 0x0080_0000, true, false),
            0x0000_4000_0000_0000 >> 16 & 0xFFFF_FFFF
        );
    }

    #[test]
    fn division() {
        assert_eq!(div(7, 2, 32, false), Some(3));
        assert_eq!(div(0xFFFF_FFF9, 2, 32, true), Some(0xFFFF_FFFD)); // -7/2 = -3
        assert_eq!(rem(0xFFFF_FFF9, 2, 32, true), Some(0xFFFF_FFFF)); // -7%2 = -1
        assert_eq!(rem(7, 0, 32, false), None);
        assert_eq!(div(0x8000_0000, 0xFFFF_FFFF, 32, true), Some(0x8000_0000));
    }

    #[test]
    fn shifts() {
        assert_eq!(shl(1, 31, 32), 0x8000_0000);
        assert_eq!(shl(1, 32, 32), 0);
        assert_eq!(shl(1, 0x1_0000_0000, 32), 1); // amount read as u32: 0
        assert_eq!(shr(0x8000_0000, 31, 32, true), 0xFFFF_FFFF);
        assert_eq!(shr(0x8000_0000, 40, 32, true), 0xFFFF_FFFF);
        assert_eq!(shr(0x8000_0000, 40, 32, false), 0);
        assert_eq!(shr(0x8000_0000, 4, 32, false), 0x0800_0000);
        // funnel shifts of b:a = 0x89abcdef_01234567
        assert_eq!(shf(0x0123_4567, 0x89ab_cdef, 8, true, false), 0xabcd_ef01);
        assert_eq!(shf(0x0123_4567, 0x89ab_cdef, 8, false, false), 0xef01_2345);
        assert_eq!(shf(0x0123_4567, 0x89ab_cdef, 40, true, false), 0xabcd_ef01); // wrap: 40&31 = 8
        assert_eq!(shf(0x0123_4567, 0x89ab_cdef, 40, true, true), 0x0123_4567); // clamp 32: high word = a
        assert_eq!(shf(0x0123_4567, 0x89ab_cdef, 40, false, true), 0x89ab_cdef);
    }

    #[test]
    fn bit_fields() {
        assert_eq!(bfe(0xABCD_1234, 8, 8, 32, false), 0x12);
        assert_eq!(bfe(0xABCD_1234, 28, 8, 32, false), 0xA); // past msb reads 0
        assert_eq!(bfe(0xABCD_1234, 28, 8, 32, true), 0xFFFF_FFFA); // sign from bit 31
        assert_eq!(bfe(0x0000_0080, 4, 4, 32, true), 0xFFFF_FFF8); // field 1000 sign-extended
        assert_eq!(bfe(0x1234, 0, 0, 32, true), 0);
        assert_eq!(bfe(0xFF, 300, 4, 32, false), 0); // pos 300 & 0xff = 44 >= 32: zero fill
        assert_eq!(bfi(0xF, 0x0000_0000, 4, 4, 32), 0xF0);
        assert_eq!(bfi(0xFF, 0xFFFF_FFFF, 30, 8, 32), 0xFFFF_FFFF);
        assert_eq!(bfi(0x0, 0xFFFF_FFFF, 30, 8, 32), 0x3FFF_FFFF);
        assert_eq!(bfi(0x5, 0x0, 0, 0, 32), 0);
    }

    #[test]
    fn permutes() {
        let (a, b) = (0x3322_1100u64, 0x7766_5544u64);
        // default mode: selector 0x5140 → d.b0 = byte 0, b1 = byte 4, b2 = byte 1, b3 = byte 5
        assert_eq!(prmt(a, b, 0x5140, None), 0x5511_4400);
        // selector 0x0008: byte 0 replicates the sign of byte 0 (0x80 → 0xff),
        // bytes 1..3 select byte 0 itself (0x80)
        assert_eq!(prmt(0x0000_0080, 0, 0x0008, None), 0x8080_80FF);
        use ptxeq_ir::PrmtMode as M;
        assert_eq!(prmt(a, b, 1, Some(M::F4e)), 0x4433_2211);
        assert_eq!(prmt(a, b, 0, Some(M::B4e)), 0x5566_7700);
        // c = 1: d.b0..b3 = bytes 1, 0, 7, 6
        assert_eq!(prmt(a, b, 1, Some(M::B4e)), 0x6677_0011);
        assert_eq!(prmt(a, b, 2, Some(M::Rc8)), 0x2222_2222);
        assert_eq!(prmt(a, b, 1, Some(M::Ecl)), 0x3322_1111);
        assert_eq!(prmt(a, b, 2, Some(M::Ecr)), 0x2222_1100);
        assert_eq!(prmt(a, b, 1, Some(M::Rc16)), 0x3322_3322);
    }

    #[test]
    fn counts() {
        assert_eq!(popc(0xF0F0, 32), 8);
        assert_eq!(popc(u64::MAX, 64), 64);
        assert_eq!(clz(1, 32), 31);
        assert_eq!(clz(0, 32), 32);
        assert_eq!(clz(0x8000_0000_0000_0000, 64), 0);
        assert_eq!(brev(1, 32), 0x8000_0000);
        assert_eq!(brev(0x0000_0001_0000_0003, 64), 0xC000_0000_8000_0000);
        assert_eq!(bfind(0x10, 32, false, false), 4);
        assert_eq!(bfind(0, 32, false, false), 0xFFFF_FFFF);
        assert_eq!(bfind(0x10, 32, false, true), 27);
        assert_eq!(bfind(0xFFFF_FFF0, 32, true, false), 3); // ~x = 0xF → msb 3
        assert_eq!(bfind(0xFFFF_FFFF, 32, true, false), 0xFFFF_FFFF);
    }

    #[test]
    fn logic() {
        // lut for a & b ^ c: F(0xF0, 0xCC, 0xAA) = (0xF0 & 0xCC) ^ 0xAA = 0xC0 ^ 0xAA = 0x6A
        let (a, b, c) = (0b1100u64, 0b1010, 0b0110);
        assert_eq!(lop3(a, b, c, 0x6A, 32), (a & b) ^ c);
        assert_eq!(lop3(a, b, c, 0xF0, 32), a);
        assert_eq!(lop3(a, b, c, 0xFE, 32), a | b | c);
        assert_eq!(bmsk(4, 8, false), 0xFF0);
        assert_eq!(bmsk(0, 32, true), 0xFFFF_FFFF);
        assert_eq!(szext(0xFF, 8, false, true), 0xFFFF_FFFF);
        assert_eq!(szext(0x1FF, 8, false, false), 0xFF);
        assert_eq!(fns(0b1011_0000, 0, 2), 5);
        assert_eq!(fns(0b1011_0000, 7, 0xFFFF_FFFF), 7); // offset -1 from 7: bit 7 itself
        assert_eq!(fns(0, 0, 1), 0xFFFF_FFFF);
    }

    #[test]
    fn conversions() {
        assert_eq!(convert(0xFF, 8, true, 32, true, false), 0xFFFF_FFFF);
        assert_eq!(convert(0xFF, 8, false, 32, false, false), 0xFF);
        assert_eq!(convert(0x1_0000_0005, 64, false, 32, false, false), 5);
        assert_eq!(convert(0x1234, 32, true, 8, true, true), 0x7F);
        assert_eq!(convert(0xFFFF_FF00, 32, true, 8, false, true), 0);
        assert_eq!(
            float_to_int(2.5, Some(ptxeq_ir::Rounding::Rni), 32, true),
            2
        );
        assert_eq!(
            float_to_int(3.5, Some(ptxeq_ir::Rounding::Rni), 32, true),
            4
        );
        assert_eq!(
            float_to_int(-2.7, Some(ptxeq_ir::Rounding::Rzi), 32, true),
            0xFFFF_FFFE
        );
        assert_eq!(
            float_to_int(-2.2, Some(ptxeq_ir::Rounding::Rmi), 32, true),
            0xFFFF_FFFD
        );
        assert_eq!(
            float_to_int(1e20, Some(ptxeq_ir::Rounding::Rzi), 32, true),
            0x7FFF_FFFF
        );
        assert_eq!(
            float_to_int(-5.0, Some(ptxeq_ir::Rounding::Rzi), 32, false),
            0
        );
    }
}
