//! The bit-exact IEEE domain: values are bit patterns with their format,
//! every float operation rounds exactly as PTX specifies.
//!
//! Where the other domains follow the real-number convention of
//! docs/semantics.md §2, this one computes what the hardware computes, so that the
//! *original* PTX of an inlined libm routine (bit tricks, magic constants,
//! `fma.rm`) can be run and compared with the real function it is
//! supposed to compute — the proof that `passes/idioms` recognises what the
//! code does — and so a counterexample can be replayed on both kernels.
//!
//! Semantics:
//! - `+ − × fma ÷ √`, conversions: correctly rounded in the instruction's
//!   mode (`.rn .rz .rm .rp`), `fma` with a single rounding (exact
//!   big-integer arithmetic, [`num`]); `.ftz` flushes subnormal inputs and
//!   results of f32 operations to signed zero; `.sat` clamps to [0, 1]
//!   (NaN → +0).
//! - `.approx`/`.full` operations (`ex2 lg2 sin cos tanh rsqrt`,
//!   `rcp.approx`, `sqrt.approx`, `div.approx`, `div.full`): modelled as
//!   the correctly rounded value of the real function, computed with the
//!   host's f64 libm. The hardware approximations differ from that by a
//!   few ulp, which is why agreement tests allow a few ulp.
//! - Comparisons are IEEE, as PTX defines them: ordered ones (`eq ne lt
//!   le gt ge`) are false when an operand is NaN, unordered ones (`equ neu
//!   ltu leu gtu geu`, [`Domain::cmp_unordered`]) true; `num`/`nan` test
//!   for NaN ([`Domain::unordered`]); `.ftz` compares subnormals as signed
//!   zero. `testp` is exact (the engine tests the register's bits).
//! - NaN: arithmetic returns the canonical NaN (`0x7FFFFFFF` in f32); an
//!   input NaN keeps its sign and payload ([`num::nan_from_f64`]).
//! - `min`/`max` return the non-NaN operand (canonical NaN when both are
//!   NaN; with `.NaN`, when either is), and order −0 below +0.

mod mode;
pub mod num;

pub use mode::{FpMode, mode_of};
pub use num::Rnd;

use num::{Num, decode, encode};

use crate::domain::{BinOp, BoolOp, Cmp, Domain, Fmt, UnOp};

/// The bits of integer `i` in `fmt`, rounded to nearest (as a host
/// stores a value it is given).
pub fn round_int(fmt: Fmt, i: i128) -> u64 {
    encode(fmt, &num::from_int(i), Rnd::Rn, false)
}

/// The bits of `x` in `fmt`, rounded to nearest (as a host stores the
/// decimal it is given). `x` is finite or infinite; a NaN keeps its sign
/// and payload as far as the format holds them.
pub fn round_f64(fmt: Fmt, x: f64) -> u64 {
    encode(fmt, &decode(Fmt::F64, x.to_bits(), false), Rnd::Rn, false)
}

/// A value of the IEEE domain: an encoding in a format, or a boolean.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IVal {
    F { fmt: Fmt, bits: u64 },
    B(bool),
}

impl IVal {
    /// The value as an `f64` (exact for every format; NaN for booleans).
    pub fn to_f64(self) -> f64 {
        match self {
            IVal::F { fmt, bits } => num::to_f64(&decode(fmt, bits, false)),
            IVal::B(_) => f64::NAN,
        }
    }
}

/// The bit-exact domain. `tensors[t][i]` is element `i` of tensor `t`,
/// rounded to nearest into the tensor's format when read.
#[derive(Clone, Debug, Default)]
pub struct Ieee {
    pub tensors: Vec<Vec<f64>>,
    mode: FpMode,
}

impl Ieee {
    pub fn new(tensors: Vec<Vec<f64>>) -> Self {
        Ieee {
            tensors,
            mode: FpMode::default(),
        }
    }

    /// The result format: the instruction's, else the first operand's.
    fn fmt_for(&self, a: IVal) -> Fmt {
        match (self.mode.fmt, a) {
            (Some(f), _) => f,
            (None, IVal::F { fmt, .. }) => fmt,
            (None, IVal::B(_)) => Fmt::F64,
        }
    }

    /// Decodes an operand, flushing subnormals under `.ftz`.
    fn num(&self, v: IVal) -> Num {
        match v {
            IVal::F { fmt, bits } => decode(fmt, bits, self.mode.ftz),
            IVal::B(b) => num::from_int(i128::from(b)),
        }
    }

    /// Rounds an exact number into `fmt` per the mode, then saturates.
    fn finish(&self, fmt: Fmt, n: &Num) -> IVal {
        self.sat(fmt, encode(fmt, n, self.mode.rnd, self.mode.ftz))
    }

    fn sat(&self, fmt: Fmt, bits: u64) -> IVal {
        if !self.mode.sat {
            return IVal::F { fmt, bits };
        }
        let x = num::to_f64(&decode(fmt, bits, false));
        let c = if x.is_nan() || x <= 0.0 {
            0.0
        } else if x >= 1.0 {
            1.0
        } else {
            return IVal::F { fmt, bits };
        };
        IVal::F {
            fmt,
            bits: encode(
                fmt,
                &decode(Fmt::F64, f64::to_bits(c), false),
                num::Rnd::Rn,
                false,
            ),
        }
    }

    /// The correctly rounded (to nearest) value of an `f64` result.
    fn rounded(&self, fmt: Fmt, x: f64) -> IVal {
        let n = decode(Fmt::F64, x.to_bits(), false);
        self.sat(fmt, encode(fmt, &n, num::Rnd::Rn, self.mode.ftz))
    }

    fn f64_of(&self, v: IVal) -> f64 {
        num::to_f64(&self.num(v))
    }
}

impl Domain for Ieee {
    type Val = IVal;
    const BIT_EXACT: bool = true;

    fn set_mode(&mut self, mode: FpMode) {
        self.mode = mode;
    }

    fn to_bits(&mut self, v: IVal, fmt: Fmt) -> Option<u64> {
        match v {
            IVal::F { fmt: f, bits } if f == fmt && !self.mode.sat && !self.mode.ftz => Some(bits),
            // A conversion (`cvt.rn.f16.f32`, `cvt.sat.f32.f32`): round,
            // flush and clamp per the instruction.
            IVal::F { fmt: f, bits } => match self.finish(fmt, &decode(f, bits, self.mode.ftz)) {
                IVal::F { bits, .. } => Some(bits),
                IVal::B(_) => None,
            },
            IVal::B(b) => Some(u64::from(b)),
        }
    }

    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<IVal> {
        // fp8 values are carried as the f32 of the same (exact) value: no
        // operation computes in an fp8 format.
        if let Some(n) = fmt.narrow() {
            let x = n.to_f64(bits);
            let bits = if x.is_nan() {
                num::nan_bits(Fmt::F32)
            } else {
                u64::from((x as f32).to_bits())
            };
            return Some(IVal::F {
                fmt: Fmt::F32,
                bits,
            });
        }
        Some(IVal::F { fmt, bits })
    }

    fn int_const(&mut self, v: i128) -> IVal {
        let fmt = self.mode.fmt.unwrap_or(Fmt::F64);
        self.finish(fmt, &num::from_int(v))
    }

    fn input(&mut self, tensor: u32, index: u64, fmt: Fmt) -> IVal {
        let x = self
            .tensors
            .get(tensor as usize)
            .and_then(|t| t.get(index as usize))
            .copied()
            .unwrap_or(0.0);
        // An fp8 element holds the input rounded to its format (what the
        // host stores), carried as that value's f32.
        if let Some(n) = fmt.narrow() {
            let bits = n.encode_rn_satfinite(x).unwrap_or(0x7F);
            return self.float_const(fmt, bits).unwrap_or(IVal::F {
                fmt: Fmt::F32,
                bits: num::nan_bits(Fmt::F32),
            });
        }
        if x.is_nan() {
            let bits = num::nan_from_f64(fmt, x.to_bits());
            return IVal::F { fmt, bits };
        }
        let n = decode(Fmt::F64, x.to_bits(), false);
        IVal::F {
            fmt,
            bits: encode(fmt, &n, num::Rnd::Rn, false),
        }
    }

    fn int_input(&mut self, tensor: u32, index: u64) -> Option<u64> {
        let x = *self.tensors.get(tensor as usize)?.get(index as usize)?;
        Some(x as i64 as u64)
    }

    fn unary(&mut self, op: UnOp, a: IVal) -> IVal {
        let fmt = self.fmt_for(a);
        let n = self.num(a);
        let exact = !self.mode.approx;
        match op {
            UnOp::Neg => self.finish(fmt, &num::neg(&n)),
            UnOp::Abs => {
                let m = match n {
                    Num::Fin { mag, exp, .. } => Num::Fin {
                        neg: false,
                        mag,
                        exp,
                    },
                    Num::Inf { .. } => Num::Inf { neg: false },
                    Num::Nan => Num::Nan,
                };
                self.finish(fmt, &m)
            }
            UnOp::Recip if exact => {
                let one = num::from_int(1);
                let bits = num::div(fmt, &one, &n, self.mode.rnd, self.mode.ftz);
                self.sat(fmt, bits)
            }
            UnOp::Sqrt if exact => {
                let bits = num::sqrt(fmt, &n, self.mode.rnd, self.mode.ftz);
                self.sat(fmt, bits)
            }
            _ => {
                let x = num::to_f64(&n);
                let y = match op.math() {
                    Some(f) => f.eval_f64(&[x]),
                    None => -x,
                };
                self.rounded(fmt, y)
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: IVal, b: IVal) -> IVal {
        let fmt = self.fmt_for(a);
        let (x, y) = (self.num(a), self.num(b));
        let rnd = self.mode.rnd;
        match op {
            BinOp::Add => self.finish(fmt, &num::add(&x, &y, rnd)),
            BinOp::Sub => self.finish(fmt, &num::add(&x, &num::neg(&y), rnd)),
            BinOp::Mul => self.finish(fmt, &num::mul(&x, &y)),
            BinOp::Div if !self.mode.approx => {
                let bits = num::div(fmt, &x, &y, rnd, self.mode.ftz);
                self.sat(fmt, bits)
            }
            BinOp::Div => {
                let q = num::to_f64(&x) / num::to_f64(&y);
                self.rounded(fmt, q)
            }
            // A recognised `powf`: like the `.approx` functions, the
            // correctly rounded value (C's `pow` in f64, rounded to `fmt`).
            BinOp::Pow => {
                let p = num::to_f64(&x).powf(num::to_f64(&y));
                self.rounded(fmt, p)
            }
            BinOp::Min | BinOp::Max => {
                let (fx, fy) = (num::to_f64(&x), num::to_f64(&y));
                if self.mode.nan && (fx.is_nan() || fy.is_nan()) {
                    return self.finish(fmt, &Num::Nan);
                }
                let pick_x = if fx.is_nan() {
                    false
                } else if fy.is_nan() {
                    true
                } else if fx == fy {
                    // −0 < +0.
                    let xneg = fx.is_sign_negative();
                    if op == BinOp::Min { xneg } else { !xneg }
                } else if op == BinOp::Min {
                    fx < fy
                } else {
                    fx > fy
                };
                let n = if pick_x { x } else { y };
                self.finish(fmt, &n)
            }
        }
    }

    fn fma(&mut self, a: IVal, b: IVal, c: IVal) -> IVal {
        let fmt = self.fmt_for(a);
        let (x, y, z) = (self.num(a), self.num(b), self.num(c));
        let p = num::mul(&x, &y);
        self.finish(fmt, &num::add(&p, &z, self.mode.rnd))
    }

    /// Ordered: false when an operand is NaN (`setp.ne` included: PTX's
    /// `ne` is ordered, unlike C's `!=`). Under `.ftz` subnormal operands
    /// compare as signed zero.
    fn cmp(&mut self, op: Cmp, a: IVal, b: IVal) -> IVal {
        let (x, y) = (self.f64_of(a), self.f64_of(b));
        IVal::B(x.partial_cmp(&y).is_some_and(|o| op.holds(o)))
    }

    /// Unordered (`setp.ltu` …): true when an operand is NaN.
    fn cmp_unordered(&mut self, op: Cmp, a: IVal, b: IVal) -> IVal {
        let (x, y) = (self.f64_of(a), self.f64_of(b));
        IVal::B(x.partial_cmp(&y).is_none_or(|o| op.holds(o)))
    }

    fn unordered(&mut self, a: IVal, b: IVal) -> IVal {
        IVal::B(self.f64_of(a).is_nan() || self.f64_of(b).is_nan())
    }

    fn bool_const(&mut self, b: bool) -> IVal {
        IVal::B(b)
    }

    fn not(&mut self, a: IVal) -> IVal {
        IVal::B(!truth(a))
    }

    fn bool_op(&mut self, op: BoolOp, a: IVal, b: IVal) -> IVal {
        let (x, y) = (truth(a), truth(b));
        IVal::B(match op {
            BoolOp::And => x && y,
            BoolOp::Or => x || y,
            BoolOp::Xor => x ^ y,
        })
    }

    fn select(&mut self, cond: IVal, a: IVal, b: IVal) -> IVal {
        if truth(cond) { a } else { b }
    }

    fn as_bool(&self, v: IVal) -> Option<bool> {
        Some(truth(v))
    }

    fn same_value(&self, a: IVal, b: IVal) -> bool {
        a == b
    }

    fn describe(&self, v: IVal) -> String {
        match v {
            IVal::F { fmt, bits } => format!("{} ({}:{bits:#x})", v.to_f64(), fmt.name()),
            IVal::B(b) => b.to_string(),
        }
    }
}

fn truth(v: IVal) -> bool {
    match v {
        IVal::B(b) => b,
        IVal::F { fmt, bits } => {
            !matches!(decode(fmt, bits, false), Num::Fin { ref mag, .. } if num_traits::Zero::is_zero(mag))
        }
    }
}
