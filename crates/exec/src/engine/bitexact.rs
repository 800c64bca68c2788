//! Register contents in a bit-exact domain ([`crate::Ieee`]).
//!
//! There every real value has an encoding, so the engine keeps registers
//! as concrete bits: a float written to a register becomes its bit pattern
//! (rounded, flushed and clamped per the current instruction — that is
//! how `cvt` between formats and `cvt.sat` take effect), and every integer
//! operation on it (`mov.b32` + `shl.b32`, `and.b32`, `copysign`, ...) is
//! then exact PTX integer semantics. Reads decode the bits again through
//! `Domain::float_const`.

use super::Engine;
use crate::domain::Domain;
use crate::value::Value;

impl<D: Domain> Engine<'_, D> {
    /// `v` with every real value and data boolean replaced by its bits
    /// (unchanged when the domain cannot encode a value).
    pub(crate) fn concretize(&mut self, v: Value<D::Val>) -> Value<D::Val> {
        match v {
            Value::Data { v: x, fmt, lo, len } => match self.d.to_bits(x, fmt) {
                Some(b) => {
                    let shifted = if lo >= 8 { 0 } else { b >> (8 * u32::from(lo)) };
                    Value::Bits(crate::value::mask_bits(shifted, 8 * u32::from(len)))
                }
                None => Value::Data { v: x, fmt, lo, len },
            },
            Value::Bool(x) => match self.d.as_bool(x) {
                Some(b) => Value::Bits(u64::from(b)),
                None => Value::Bool(x),
            },
            Value::Pack(parts) => {
                let parts: Vec<(Value<D::Val>, u8)> = parts
                    .iter()
                    .map(|p| (self.concretize(p.val.clone()), p.len))
                    .collect();
                Value::concat(&parts)
            }
            other => other,
        }
    }
}
