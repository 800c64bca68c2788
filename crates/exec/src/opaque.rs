//! The opaque domain: data values as structural hashes, constants exact.
//!
//! `unroll` needs no terms — only control flow, addresses, schedule and
//! race judgements — but two things still depend on data values:
//!
//! - constant-only float arithmetic that decides a branch (rare, but must
//!   be decided exactly, as the term domain would: `1.0f/3.0f` is 1/3), so
//!   constants are exact extended rationals, folded like `ptxeq_terms`
//!   folds them (including its identities `x+0 = x`, `x·1 = x`, `x·0 = 0`,
//!   `max(x, -inf) = x`, `min(x, +inf) = x`, `select(c, a, a) = a`);
//! - benign same-value stores (corpus/README.md): lanes of a warp storing
//!   "the same value" must be recognised. A non-constant value is a 63-bit
//!   structural hash of its operation and operands, with commutative
//!   operands sorted, so the butterfly reductions Triton emits (lane `l`
//!   combines its value with lane `l ^ k`'s) give the same hash in every
//!   lane. Re-association is *not* recognised (the term domain flattens
//!   sums; this domain does not): a warp-uniform store whose lanes summed in
//!   different association orders is judged a race here and not by the term
//!   domain. Two different values share a hash only by a 63-bit collision.
//!
//! Memory stays proportional to the distinct constants computed, not to the
//! number of operations executed: a non-constant value is just its hash.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use rustc_hash::FxHashMap;

use crate::domain::{BinOp, BoolOp, Cmp, Domain, Fmt, IntOp, IntRounding, UnOp};

/// An opaque data value: a constant (index into the domain's table) or a
/// structural hash (top bit set).
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct OVal(u64);

const HASH_BIT: u64 = 1 << 63;

impl OVal {
    fn is_hash(self) -> bool {
        self.0 & HASH_BIT != 0
    }
}

/// An extended real constant.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum ExtReal {
    Finite(BigRational),
    PosInf,
    NegInf,
}

impl ExtReal {
    fn cmp_ext(&self, other: &ExtReal) -> Ordering {
        use ExtReal::*;
        match (self, other) {
            (NegInf, NegInf) | (PosInf, PosInf) => Ordering::Equal,
            (NegInf, _) | (_, PosInf) => Ordering::Less,
            (PosInf, _) | (_, NegInf) => Ordering::Greater,
            (Finite(a), Finite(b)) => a.cmp(b),
        }
    }

    fn is_zero(&self) -> bool {
        matches!(self, ExtReal::Finite(r) if r.is_zero())
    }

    fn is_one(&self) -> bool {
        matches!(self, ExtReal::Finite(r) if r.is_one())
    }
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Const {
    Real(ExtReal),
    Bool(bool),
    /// A concrete integer combined with integer data: width, bits.
    Int(u8, u64),
}

/// Operation tags mixed into hashes.
#[derive(Clone, Copy)]
#[repr(u64)]
enum Tag {
    Input = 1,
    Un = 2,
    Bin = 3,
    Cmp = 5,
    Not = 6,
    BoolOp = 7,
    Select = 8,
    Const = 9,
    Apply = 10,
    IntInput = 11,
    IntOp = 12,
    IntCmp = 13,
    IntToReal = 14,
    RealToInt = 15,
}

/// The opaque domain (see the module doc).
#[derive(Default, Clone, Debug)]
pub struct Opaque {
    consts: Vec<(Const, u64)>,
    index: FxHashMap<Const, u32>,
    /// IEEE bit patterns already decoded (constants repeat in loops).
    bits: FxHashMap<(Fmt, u64), Option<OVal>>,
    /// Which tensors hold integer data this domain models (integer dtypes
    /// but `pred`), as the term domain does.
    int_tensors: Vec<bool>,
    /// Non-constant values built so far (see [`Opaque::values_built`]).
    built: std::cell::Cell<u64>,
}

impl Opaque {
    pub fn new() -> Self {
        Self::default()
    }

    /// The exact constant, if `v` is one.
    pub fn as_const(&self, v: OVal) -> Option<&ExtReal> {
        if v.is_hash() {
            return None;
        }
        match &self.consts.get(v.0 as usize)?.0 {
            Const::Real(r) => Some(r),
            Const::Bool(_) | Const::Int(..) => None,
        }
    }

    /// Number of distinct constants interned.
    pub fn constants(&self) -> usize {
        self.consts.len()
    }

    /// Non-constant values built by the run so far (operations on data,
    /// repeats included). The term replay of the same run builds about as
    /// many term nodes or fewer (hash-consing merges repeats, deferred sums
    /// build one node per many additions), which is what it sizes its term
    /// store's columns by: a matrix instruction builds thousands of
    /// products, so the count of instructions alone undercounts them.
    pub fn values_built(&self) -> u64 {
        self.built.get()
    }

    fn intern(&mut self, c: Const) -> OVal {
        if let Some(&i) = self.index.get(&c) {
            return OVal(u64::from(i));
        }
        let h = hash_const(&c);
        let i = self.consts.len() as u32;
        self.consts.push((c.clone(), h));
        self.index.insert(c, i);
        OVal(u64::from(i))
    }

    fn real(&mut self, r: ExtReal) -> OVal {
        self.intern(Const::Real(r))
    }

    /// The code a value contributes to its parents' hashes.
    fn code(&self, v: OVal) -> u64 {
        if v.is_hash() {
            v.0
        } else {
            self.consts.get(v.0 as usize).map_or(0, |c| c.1)
        }
    }

    fn hashed(&self, tag: Tag, sub: u64, ops: &[OVal]) -> OVal {
        self.built.set(self.built.get() + 1);
        let mut h = mix(tag as u64, sub);
        for &o in ops {
            h = mix(h, self.code(o));
        }
        OVal(h | HASH_BIT)
    }

    fn sorted2(&self, a: OVal, b: OVal) -> (OVal, OVal) {
        if self.code(a) <= self.code(b) {
            (a, b)
        } else {
            (b, a)
        }
    }

    fn bool_of(&self, v: OVal) -> Option<bool> {
        if v.is_hash() {
            return None;
        }
        match self.consts.get(v.0 as usize)?.0 {
            Const::Bool(b) => Some(b),
            Const::Real(_) | Const::Int(..) => None,
        }
    }

    fn fold_bin(&self, op: BinOp, a: &ExtReal, b: &ExtReal) -> Option<ExtReal> {
        use ExtReal::*;
        Some(match op {
            BinOp::Min => {
                if a.cmp_ext(b) == Ordering::Greater {
                    b.clone()
                } else {
                    a.clone()
                }
            }
            BinOp::Max => {
                if a.cmp_ext(b) == Ordering::Less {
                    b.clone()
                } else {
                    a.clone()
                }
            }
            BinOp::Add | BinOp::Sub => {
                let b = if op == BinOp::Sub {
                    neg_ext(b)
                } else {
                    b.clone()
                };
                match (a, &b) {
                    (Finite(x), Finite(y)) => Finite(x + y),
                    (PosInf, PosInf) | (PosInf, Finite(_)) | (Finite(_), PosInf) => PosInf,
                    (NegInf, NegInf) | (NegInf, Finite(_)) | (Finite(_), NegInf) => NegInf,
                    _ => return None,
                }
            }
            BinOp::Mul => match (a, b) {
                (Finite(x), Finite(y)) => Finite(x * y),
                _ => return None,
            },
            BinOp::Div => match (a, b) {
                (Finite(x), Finite(y)) if !y.is_zero() => Finite(x / y),
                _ => return None,
            },
            // Not folded: rarely exact; the term store decides.
            BinOp::Pow => return None,
        })
    }
}

fn neg_ext(a: &ExtReal) -> ExtReal {
    match a {
        ExtReal::Finite(r) => ExtReal::Finite(-r),
        ExtReal::PosInf => ExtReal::NegInf,
        ExtReal::NegInf => ExtReal::PosInf,
    }
}

/// A 64-bit mixer (splitmix64 finaliser over a rotate-xor chain).
fn mix(h: u64, x: u64) -> u64 {
    let mut z = h.rotate_left(23) ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn hash_bigint(h: u64, b: &BigInt) -> u64 {
    let mut h = h;
    for byte in b.to_signed_bytes_le() {
        h = mix(h, u64::from(byte));
    }
    h
}

fn hash_const(c: &Const) -> u64 {
    let base = Tag::Const as u64;
    match c {
        Const::Bool(b) => mix(base, 10 + u64::from(*b)),
        Const::Int(w, v) => mix(mix(base, 40 + u64::from(*w)), *v),
        Const::Real(ExtReal::PosInf) => mix(base, 20),
        Const::Real(ExtReal::NegInf) => mix(base, 21),
        Const::Real(ExtReal::Finite(r)) => {
            let h = hash_bigint(mix(base, 30), r.numer());
            hash_bigint(mix(h, 31), r.denom())
        }
    }
}

/// The exact value of an IEEE bit pattern; `None` for NaN.
pub fn decode_float(fmt: Fmt, bits: u64) -> Option<ExtReal> {
    if let Some(n) = fmt.narrow() {
        return decode_narrow(n, bits);
    }
    let (ebits, mbits) = match fmt {
        Fmt::F16 => (5u32, 10u32),
        Fmt::Bf16 => (8, 7),
        Fmt::F32 => (8, 23),
        Fmt::F64 => (11, 52),
        // Not a float format (integer data): no real value.
        Fmt::I8 | Fmt::I16 | Fmt::I32 | Fmt::I64 | Fmt::E4m3 | Fmt::E5m2 => return None,
    };
    let total = 1 + ebits + mbits;
    let bits = if total >= 64 {
        bits
    } else {
        bits & ((1u64 << total) - 1)
    };
    let sign = (bits >> (ebits + mbits)) & 1 == 1;
    let exp = (bits >> mbits) & ((1u64 << ebits) - 1);
    let man = bits & ((1u64 << mbits) - 1);
    let emax = (1u64 << ebits) - 1;
    let bias = (1i64 << (ebits - 1)) - 1;
    if exp == emax {
        if man != 0 {
            return None;
        }
        return Some(if sign {
            ExtReal::NegInf
        } else {
            ExtReal::PosInf
        });
    }
    let (m, e) = if exp == 0 {
        (BigInt::from(man), 1 - bias - i64::from(mbits))
    } else {
        (
            BigInt::from(man | (1u64 << mbits)),
            exp as i64 - bias - i64::from(mbits),
        )
    };
    let two = BigInt::from(2);
    let mut r = if e >= 0 {
        BigRational::from_integer(m * num_traits::pow(two, e as usize))
    } else {
        BigRational::new(m, num_traits::pow(two, (-e) as usize))
    };
    if sign {
        r = -r;
    }
    Some(ExtReal::Finite(r))
}

/// The exact value of a narrow (fp8) encoding; `None` for NaN.
pub fn decode_narrow(n: crate::narrow::Narrow, bits: u64) -> Option<ExtReal> {
    use crate::narrow::NarrowVal;
    match n.decode(bits) {
        NarrowVal::Nan => None,
        NarrowVal::Inf { neg: true } => Some(ExtReal::NegInf),
        NarrowVal::Inf { neg: false } => Some(ExtReal::PosInf),
        NarrowVal::Fin { neg, mag, exp } => {
            let m = BigInt::from(if neg { -i64::from(mag) } else { i64::from(mag) });
            let p = num_traits::pow(BigInt::from(2), exp.unsigned_abs() as usize);
            Some(ExtReal::Finite(if exp >= 0 {
                BigRational::from_integer(m * p)
            } else {
                BigRational::new(m, p)
            }))
        }
    }
}

impl Domain for Opaque {
    type Val = OVal;

    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<OVal> {
        if let Some(v) = self.bits.get(&(fmt, bits)) {
            return *v;
        }
        let v = decode_float(fmt, bits).map(|r| self.real(r));
        self.bits.insert((fmt, bits), v);
        v
    }

    fn int_const(&mut self, v: i128) -> OVal {
        self.real(ExtReal::Finite(BigRational::from_integer(BigInt::from(v))))
    }

    fn input(&mut self, tensor: u32, index: u64, _fmt: Fmt) -> OVal {
        OVal(mix(mix(Tag::Input as u64, u64::from(tensor)), index) | HASH_BIT)
    }

    // Integer data: structural hashes (commutative operands sorted), the
    // integer constants exact; identities as the term store applies them
    // where cheap (`x + 0`, `x·1`, `x·0`, `x op x` comparisons).

    fn set_tensor_types(&mut self, dtypes: &[ptxeq_spec::DType]) {
        self.int_tensors = dtypes
            .iter()
            .map(|d| Fmt::int_of_dtype(*d).is_some())
            .collect();
    }

    fn int_data(&mut self, tensor: u32, index: u64, fmt: Fmt) -> Option<OVal> {
        if !self
            .int_tensors
            .get(tensor as usize)
            .copied()
            .unwrap_or(false)
        {
            return None;
        }
        let h = mix(mix(Tag::IntInput as u64, u64::from(tensor)), index);
        Some(OVal(mix(h, u64::from(fmt.bits())) | HASH_BIT))
    }

    fn int_lit(&mut self, w: u8, bits: u64) -> Option<OVal> {
        Some(self.intern(Const::Int(w, bits)))
    }

    fn int_op(&mut self, op: IntOp, w: u8, args: &[(OVal, u8)]) -> Option<OVal> {
        let int_of = |s: &Self, v: OVal| match (!v.is_hash())
            .then(|| s.consts.get(v.0 as usize))
            .flatten()
        {
            Some((Const::Int(_, x), _)) => Some(*x),
            _ => None,
        };
        if let [(a, _), (b, _)] = args {
            let (ka, kb) = (int_of(self, *a), int_of(self, *b));
            match op {
                IntOp::Add if kb == Some(0) => return Some(*a),
                IntOp::Add if ka == Some(0) => return Some(*b),
                IntOp::Mul if kb == Some(1) => return Some(*a),
                IntOp::Mul if ka == Some(1) => return Some(*b),
                IntOp::Mul if ka == Some(0) || kb == Some(0) => {
                    return self.int_lit(w, 0);
                }
                _ => {}
            }
        }
        let mut ops: smallvec::SmallVec<[OVal; 4]> = args.iter().map(|x| x.0).collect();
        let commutative = matches!(
            op,
            IntOp::Add
                | IntOp::Mul
                | IntOp::And
                | IntOp::Or
                | IntOp::Xor
                | IntOp::Min { .. }
                | IntOp::Max { .. }
                | IntOp::AddSat
        );
        if commutative {
            ops.sort_by_key(|&v| self.code(v));
        }
        let mut h = rustc_hash::FxHasher::default();
        std::hash::Hash::hash(&(op, w), &mut h);
        let sub = std::hash::Hasher::finish(&h);
        Some(self.hashed(Tag::IntOp, sub, &ops))
    }

    fn int_cmp(&mut self, op: Cmp, signed: bool, a: OVal, b: OVal) -> Option<OVal> {
        if a == b {
            return Some(self.bool_const(matches!(op, Cmp::Eq | Cmp::Le | Cmp::Ge)));
        }
        let (op, a, b) = match op {
            Cmp::Gt | Cmp::Ge => (op.swapped(), b, a),
            Cmp::Eq | Cmp::Ne => {
                let (x, y) = self.sorted2(a, b);
                (op, x, y)
            }
            _ => (op, a, b),
        };
        Some(self.hashed(Tag::IntCmp, 2 * (op as u64) + u64::from(signed), &[a, b]))
    }

    fn int_to_real(&mut self, a: OVal, signed: bool) -> Option<OVal> {
        Some(self.hashed(Tag::IntToReal, u64::from(signed), &[a]))
    }

    fn real_to_int(&mut self, a: OVal, rnd: IntRounding, signed: bool, w: u8) -> Option<OVal> {
        let sub = (rnd as u64) * 4 + u64::from(signed) * 2 + u64::from(w) * 16;
        Some(self.hashed(Tag::RealToInt, sub, &[a]))
    }

    fn apply(&mut self, name: &str, args: &[OVal]) -> OVal {
        // FNV-1a of the name: a deterministic, store-free function id.
        let id = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        self.hashed(Tag::Apply, id, args)
    }

    fn unary(&mut self, op: UnOp, a: OVal) -> OVal {
        if let Some(c) = self.as_const(a).cloned() {
            let folded = match (op, &c) {
                (UnOp::Neg, _) => Some(neg_ext(&c)),
                (UnOp::Abs, ExtReal::Finite(r)) => Some(ExtReal::Finite(r.abs())),
                (UnOp::Abs, _) => Some(ExtReal::PosInf),
                (UnOp::Recip, ExtReal::Finite(r)) if !r.is_zero() => {
                    Some(ExtReal::Finite(r.recip()))
                }
                _ => None,
            };
            if let Some(f) = folded {
                return self.real(f);
            }
        }
        self.hashed(Tag::Un, op as u64, &[a])
    }

    fn binary(&mut self, op: BinOp, a: OVal, b: OVal) -> OVal {
        if a.is_hash() && b.is_hash() {
            // Two non-constants: only max/min(x, x) = x folds.
            if a == b && matches!(op, BinOp::Min | BinOp::Max) {
                return a;
            }
            let (x, y) = if op.is_commutative() && b.0 < a.0 {
                (b, a)
            } else {
                (a, b)
            };
            return self.hashed(Tag::Bin, op as u64, &[x, y]);
        }
        let ca = self.as_const(a).cloned();
        let cb = self.as_const(b).cloned();
        if let (Some(x), Some(y)) = (&ca, &cb)
            && let Some(r) = self.fold_bin(op, x, y)
        {
            return self.real(r);
        }
        // Identities the term store also applies.
        match op {
            BinOp::Add => {
                if cb.as_ref().is_some_and(ExtReal::is_zero) {
                    return a;
                }
                if ca.as_ref().is_some_and(ExtReal::is_zero) {
                    return b;
                }
            }
            BinOp::Sub if cb.as_ref().is_some_and(ExtReal::is_zero) => return a,
            BinOp::Mul => {
                if cb.as_ref().is_some_and(ExtReal::is_one) {
                    return a;
                }
                if ca.as_ref().is_some_and(ExtReal::is_one) {
                    return b;
                }
                if ca.as_ref().is_some_and(ExtReal::is_zero)
                    || cb.as_ref().is_some_and(ExtReal::is_zero)
                {
                    return self.real(ExtReal::Finite(BigRational::zero()));
                }
            }
            BinOp::Div if cb.as_ref().is_some_and(ExtReal::is_one) => return a,
            BinOp::Max => {
                if matches!(cb, Some(ExtReal::NegInf)) {
                    return a;
                }
                if matches!(ca, Some(ExtReal::NegInf)) {
                    return b;
                }
                if a == b {
                    return a;
                }
            }
            BinOp::Min => {
                if matches!(cb, Some(ExtReal::PosInf)) {
                    return a;
                }
                if matches!(ca, Some(ExtReal::PosInf)) {
                    return b;
                }
                if a == b {
                    return a;
                }
            }
            _ => {}
        }
        let (x, y) = if op.is_commutative() {
            self.sorted2(a, b)
        } else {
            (a, b)
        };
        self.hashed(Tag::Bin, op as u64, &[x, y])
    }

    #[inline]
    fn fma(&mut self, a: OVal, b: OVal, c: OVal) -> OVal {
        let p = self.binary(BinOp::Mul, a, b);
        self.binary(BinOp::Add, p, c)
    }

    fn cmp(&mut self, op: Cmp, a: OVal, b: OVal) -> OVal {
        if let (Some(x), Some(y)) = (self.as_const(a), self.as_const(b)) {
            let r = op.holds(x.cmp_ext(y));
            return self.bool_const(r);
        }
        let (op, a, b) = match op {
            Cmp::Gt | Cmp::Ge => (op.swapped(), b, a),
            Cmp::Eq | Cmp::Ne => {
                let (x, y) = self.sorted2(a, b);
                (op, x, y)
            }
            _ => (op, a, b),
        };
        self.hashed(Tag::Cmp, op as u64, &[a, b])
    }

    fn bool_const(&mut self, b: bool) -> OVal {
        self.intern(Const::Bool(b))
    }

    fn not(&mut self, a: OVal) -> OVal {
        if let Some(b) = self.bool_of(a) {
            return self.bool_const(!b);
        }
        self.hashed(Tag::Not, 0, &[a])
    }

    fn bool_op(&mut self, op: BoolOp, a: OVal, b: OVal) -> OVal {
        match (self.bool_of(a), self.bool_of(b)) {
            (Some(x), Some(y)) => {
                let r = match op {
                    BoolOp::And => x & y,
                    BoolOp::Or => x | y,
                    BoolOp::Xor => x ^ y,
                };
                return self.bool_const(r);
            }
            (Some(c), None) | (None, Some(c)) => {
                let other = if self.bool_of(a).is_some() { b } else { a };
                match (op, c) {
                    (BoolOp::And, true) | (BoolOp::Or, false) | (BoolOp::Xor, false) => {
                        return other;
                    }
                    (BoolOp::And, false) => return self.bool_const(false),
                    (BoolOp::Or, true) => return self.bool_const(true),
                    (BoolOp::Xor, true) => return self.not(other),
                }
            }
            (None, None) => {}
        }
        let (x, y) = self.sorted2(a, b);
        self.hashed(Tag::BoolOp, op as u64, &[x, y])
    }

    fn select(&mut self, cond: OVal, a: OVal, b: OVal) -> OVal {
        if let Some(c) = self.bool_of(cond) {
            return if c { a } else { b };
        }
        if a == b {
            return a;
        }
        self.hashed(Tag::Select, 0, &[cond, a, b])
    }

    fn as_bool(&self, v: OVal) -> Option<bool> {
        self.bool_of(v)
    }

    fn same_value(&self, a: OVal, b: OVal) -> bool {
        a == b
    }

    fn describe(&self, v: OVal) -> String {
        if v.is_hash() {
            return format!("opaque#{:016x}", v.0 & !HASH_BIT);
        }
        match self.consts.get(v.0 as usize).map(|c| &c.0) {
            Some(Const::Bool(b)) => b.to_string(),
            Some(Const::Int(w, v)) => format!("{v:#x} (b{w})"),
            Some(Const::Real(ExtReal::PosInf)) => "+inf".into(),
            Some(Const::Real(ExtReal::NegInf)) => "-inf".into(),
            Some(Const::Real(ExtReal::Finite(r))) => {
                if r.is_integer() {
                    r.numer().to_string()
                } else if let (Some(n), Some(d)) = (r.numer().to_f64(), r.denom().to_f64()) {
                    format!("{r} (≈{})", n / d)
                } else {
                    r.to_string()
                }
            }
            None => "?".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rat(n: i64, d: i64) -> ExtReal {
        ExtReal::Finite(BigRational::new(BigInt::from(n), BigInt::from(d)))
    }

    #[test]
    fn decodes_exactly() {
        // 0f3DCCCCCD is 13421773 / 2^27, not 0.1.
        assert_eq!(
            decode_float(Fmt::F32, 0x3DCC_CCCD),
            Some(rat(13_421_773, 134_217_728))
        );
        assert_eq!(decode_float(Fmt::F32, 0x3F00_0000), Some(rat(1, 2)));
        assert_eq!(decode_float(Fmt::F32, 0xFF80_0000), Some(ExtReal::NegInf));
        assert_eq!(decode_float(Fmt::F32, 0x7FC0_0000), None);
        assert_eq!(decode_float(Fmt::F16, 0x3C00), Some(rat(1, 1)));
        assert_eq!(decode_float(Fmt::F16, 0xC000), Some(rat(-2, 1)));
        assert_eq!(decode_float(Fmt::Bf16, 0x3F80), Some(rat(1, 1)));
        assert_eq!(decode_float(Fmt::E4m3, 0x7E), Some(rat(448, 1)));
        assert_eq!(decode_float(Fmt::E4m3, 0x01), Some(rat(1, 512)));
        assert_eq!(decode_float(Fmt::E4m3, 0x7F), None);
        assert_eq!(decode_float(Fmt::E5m2, 0xFC), Some(ExtReal::NegInf));
        assert_eq!(decode_float(Fmt::E5m2, 0xBC), Some(rat(-1, 1)));
        assert_eq!(
            decode_float(Fmt::F64, 0x3FD5_5555_5555_5555),
            Some(rat(6_004_799_503_160_661, 18_014_398_509_481_984))
        );
        // smallest f32 subnormal: 2^-149
        let tiny = decode_float(Fmt::F32, 1).unwrap();
        let ExtReal::Finite(r) = tiny else { panic!() };
        assert_eq!(
            r.recip(),
            BigRational::from_integer(num_traits::pow(BigInt::from(2), 149))
        );
    }

    #[test]
    fn constant_arithmetic_is_exact() {
        let mut d = Opaque::new();
        let one = d.float_const(Fmt::F32, 0x3F80_0000).unwrap();
        let three = d.float_const(Fmt::F32, 0x4040_0000).unwrap();
        let third = d.binary(BinOp::Div, one, three);
        assert_eq!(d.as_const(third), Some(&rat(1, 3)));
        let back = d.binary(BinOp::Mul, third, three);
        assert_eq!(back, one);
        let lt = d.cmp(Cmp::Lt, third, one);
        assert_eq!(d.as_bool(lt), Some(true));
    }

    #[test]
    fn commutative_hashes_agree() {
        let mut d = Opaque::new();
        let x = d.input(0, 1, Fmt::F32);
        let y = d.input(0, 2, Fmt::F32);
        assert_ne!(x, y);
        assert_eq!(d.binary(BinOp::Add, x, y), d.binary(BinOp::Add, y, x));
        assert_eq!(d.binary(BinOp::Max, x, y), d.binary(BinOp::Max, y, x));
        assert_ne!(d.binary(BinOp::Sub, x, y), d.binary(BinOp::Sub, y, x));
        assert_eq!(d.cmp(Cmp::Gt, x, y), d.cmp(Cmp::Lt, y, x));
        // identities
        let ninf = d.float_const(Fmt::F32, 0xFF80_0000).unwrap();
        assert_eq!(d.binary(BinOp::Max, ninf, x), x);
        let zero = d.int_const(0);
        assert_eq!(d.binary(BinOp::Add, x, zero), x);
    }

    #[test]
    fn butterfly_lanes_agree() {
        // Four lanes reduce by xor-butterfly (offsets 2 then 1): every lane
        // ends with the same hash.
        let mut d = Opaque::new();
        let mut v: Vec<OVal> = (0..4).map(|i| d.input(0, i, Fmt::F32)).collect();
        for k in [2usize, 1] {
            let prev = v.clone();
            for (l, slot) in v.iter_mut().enumerate() {
                *slot = d.binary(BinOp::Add, prev[l], prev[l ^ k]);
            }
        }
        assert!(v.iter().all(|&x| x == v[0]));
    }

    #[test]
    fn selects_and_bools_fold() {
        let mut d = Opaque::new();
        let x = d.input(0, 0, Fmt::F32);
        let y = d.input(0, 1, Fmt::F32);
        let c = d.cmp(Cmp::Lt, x, y);
        assert_eq!(d.as_bool(c), None);
        assert_eq!(d.select(c, x, x), x);
        let t = d.bool_const(true);
        assert_eq!(d.select(t, x, y), x);
        assert_eq!(d.bool_op(BoolOp::And, c, t), c);
        let f = d.bool_const(false);
        assert_eq!(d.as_bool(d.clone().bool_op(BoolOp::And, c, f)), Some(false));
    }
}
