//! The concrete domain: real values approximated by `f64`, inputs from a
//! given assignment.
//!
//! Used by tests (a kernel run on random inputs must match a plain Rust
//! computation of the same function) and to replay a counterexample. Every
//! boolean is a constant here, so a kernel that branches on tensor data
//! runs in this domain although it is unsupported symbolically.

use crate::domain::{BinOp, BoolOp, Cmp, Domain, Fmt, UnOp};

/// An `f64` as its bit pattern (so the handle is `Eq + Hash`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize, serde::Deserialize)]
pub struct CVal(pub u64);

impl CVal {
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
    fn of(x: f64) -> Self {
        CVal(x.to_bits())
    }
}

/// The concrete domain. `tensors[t][i]` is element `i` of tensor `t` (by
/// the spec's sorted tensor order); missing elements read as 0.
#[derive(Clone, Debug, Default)]
pub struct Concrete {
    pub tensors: Vec<Vec<f64>>,
}

impl Concrete {
    pub fn new(tensors: Vec<Vec<f64>>) -> Self {
        Concrete { tensors }
    }
}

/// `f64` value of an IEEE bit pattern of `fmt`.
pub fn float_bits_to_f64(fmt: Fmt, bits: u64) -> f64 {
    match fmt {
        Fmt::F64 => f64::from_bits(bits),
        Fmt::F32 => f64::from(f32::from_bits(bits as u32)),
        Fmt::Bf16 => f64::from(f32::from_bits(((bits as u32) & 0xFFFF) << 16)),
        Fmt::F16 => f16_to_f64(bits as u16),
        Fmt::E4m3 | Fmt::E5m2 => fmt.narrow().map_or(f64::NAN, |n| n.to_f64(bits)),
        // Not a float format (integer data): no real value.
        Fmt::I8 | Fmt::I16 | Fmt::I32 | Fmt::I64 => f64::NAN,
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1F);
    let man = f64::from(h & 0x3FF);
    if exp == 0x1F {
        return if man == 0.0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if exp == 0 {
        return sign * man * 2f64.powi(-24);
    }
    sign * (1.0 + man / 1024.0) * 2f64.powi(exp - 15)
}

impl Domain for Concrete {
    type Val = CVal;

    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<CVal> {
        let x = float_bits_to_f64(fmt, bits);
        (!x.is_nan()).then_some(CVal::of(x))
    }

    fn int_const(&mut self, v: i128) -> CVal {
        CVal::of(v as f64)
    }

    fn input(&mut self, tensor: u32, index: u64, fmt: Fmt) -> CVal {
        let x = self
            .tensors
            .get(tensor as usize)
            .and_then(|t| t.get(index as usize))
            .copied()
            .unwrap_or(0.0);
        // An fp8 element holds the input rounded to its format.
        if let Some(n) = fmt.narrow()
            && let Some(b) = n.encode_rn_satfinite(x)
        {
            return CVal::of(n.to_f64(b));
        }
        CVal::of(x)
    }

    fn int_input(&mut self, tensor: u32, index: u64) -> Option<u64> {
        let x = *self.tensors.get(tensor as usize)?.get(index as usize)?;
        // Integers beyond i64 (u64 inputs of 2^63 and more) keep their bits.
        Some(if x >= 9_223_372_036_854_775_808.0 {
            x as u64
        } else {
            x as i64 as u64
        })
    }

    fn concrete_value(&self, a: CVal) -> Option<f64> {
        Some(a.get())
    }

    fn unary(&mut self, op: UnOp, a: CVal) -> CVal {
        let x = a.get();
        CVal::of(match op {
            UnOp::Neg => -x,
            UnOp::Abs => x.abs(),
            // Every other operation is a math function (`MathFn`).
            _ => op.math().map_or(f64::NAN, |f| f.eval_f64(&[x])),
        })
    }

    fn binary(&mut self, op: BinOp, a: CVal, b: CVal) -> CVal {
        let (x, y) = (a.get(), b.get());
        CVal::of(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Min => x.min(y),
            BinOp::Max => x.max(y),
            // Rust's `powf` is C's `pow` (negative base, integer exponent).
            BinOp::Pow => ptxeq_terms::MathFn::Pow.eval_f64(&[x, y]),
        })
    }

    fn fma(&mut self, a: CVal, b: CVal, c: CVal) -> CVal {
        CVal::of(a.get().mul_add(b.get(), c.get()))
    }

    fn cmp(&mut self, op: Cmp, a: CVal, b: CVal) -> CVal {
        let r = match a.get().partial_cmp(&b.get()) {
            Some(o) => op.holds(o),
            None => op == Cmp::Ne,
        };
        self.bool_const(r)
    }

    fn bool_const(&mut self, b: bool) -> CVal {
        CVal::of(if b { 1.0 } else { 0.0 })
    }

    fn not(&mut self, a: CVal) -> CVal {
        self.bool_const(a.get() == 0.0)
    }

    fn bool_op(&mut self, op: BoolOp, a: CVal, b: CVal) -> CVal {
        let (x, y) = (a.get() != 0.0, b.get() != 0.0);
        self.bool_const(match op {
            BoolOp::And => x && y,
            BoolOp::Or => x || y,
            BoolOp::Xor => x ^ y,
        })
    }

    fn select(&mut self, cond: CVal, a: CVal, b: CVal) -> CVal {
        if cond.get() != 0.0 { a } else { b }
    }

    fn as_bool(&self, v: CVal) -> Option<bool> {
        Some(v.get() != 0.0)
    }

    fn same_value(&self, a: CVal, b: CVal) -> bool {
        a == b
    }

    fn describe(&self, v: CVal) -> String {
        format!("{}", v.get())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_halves() {
        assert_eq!(float_bits_to_f64(Fmt::F16, 0x3C00), 1.0);
        assert_eq!(float_bits_to_f64(Fmt::F16, 0xC100), -2.5);
        assert_eq!(float_bits_to_f64(Fmt::F16, 0x0001), 2f64.powi(-24));
        assert_eq!(float_bits_to_f64(Fmt::Bf16, 0x4040), 3.0);
        assert!(float_bits_to_f64(Fmt::F16, 0x7C00).is_infinite());
    }
}
