//! Templates with a constant argument folded in: `powf(x, c)`.
//!
//! With a constant exponent nvcc keeps powf's whole expansion but folds
//! `y` into it, and the code then depends on the class of `y` (negative
//! integer, negative non-integer, positive non-integer, integer ≥ 3; `1`
//! and `2` have their own code). Within a class the code is the same
//! apart from immediates equal to `y` or to `y·0.5` (rounded to f32), so a
//! class template is derived from the compiler's output for several
//! exponents ([`derive`]): every immediate that differs between the
//! samples is *marked* with the function of `y` it equals in every sample
//! (an error otherwise). At match time each marked operand is read from
//! the kernel (inline or from a constant register), `y` is the first
//! `y`-marked value, every other marked value must equal its function of
//! `y`, and `y` must lie in the class ([`resolve`]). The matched code is
//! then exactly the template's computation instantiated at `y`; that this
//! computes `powf(x, y)` for every `y` of the class is what
//! `tests/agreement.rs` checks, on compiled kernels for exponents not used
//! to build the templates.

use ptxeq_ir::{Imm, Operand, RegId};

use crate::template::Template;

/// The first marked-immediate placeholder register; mark `k` is
/// `MARK_BASE - k` (below the other placeholders, `ACC` and
/// `SCRATCH_OFF`).
const MARK_BASE: u32 = u32::MAX - 16;
/// At most this many marks per template.
const MAX_MARKS: u32 = 32;

/// The placeholder register of mark `k`.
pub(crate) fn mark_reg(k: usize) -> RegId {
    RegId(MARK_BASE - k as u32)
}

/// Which mark a placeholder register is, if it is one.
pub(crate) fn mark_of(r: RegId) -> Option<usize> {
    (r.0 <= MARK_BASE && r.0 > MARK_BASE - MAX_MARKS).then(|| (MARK_BASE - r.0) as usize)
}

/// What a marked immediate equals, as a function of the constant `y`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum MarkFn {
    /// `y` itself.
    Y,
    /// `y·0.5` rounded to f32 (exact unless `y` is subnormal).
    Half,
}

impl MarkFn {
    fn eval(self, y: f32) -> f32 {
        match self {
            MarkFn::Y => y,
            // The product is exact in f64; the cast rounds to nearest even
            // as nvcc's folding does.
            MarkFn::Half => (f64::from(y) * 0.5) as f32,
        }
    }
}

/// The exponents a template is valid for.
#[derive(Clone, Copy, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub enum PowClass {
    /// Finite non-integers `y > 0`.
    PosFrac,
    /// Finite non-integers `y < 0`.
    NegFrac,
    /// Finite integers `y ≥ 3`.
    PosInt,
    /// Finite integers `y ≤ -1`.
    NegInt,
    /// Exactly this value (no marks).
    Fixed(f32),
}

impl PowClass {
    pub fn contains(self, y: f32) -> bool {
        let int = y.is_finite() && y.trunc() == y;
        match self {
            PowClass::PosFrac => y.is_finite() && !int && y > 0.0,
            PowClass::NegFrac => y.is_finite() && !int && y < 0.0,
            PowClass::PosInt => int && y >= 3.0,
            PowClass::NegInt => int && y <= -1.0,
            PowClass::Fixed(c) => y.to_bits() == c.to_bits(),
        }
    }
}

/// A template's constant second argument.
#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
pub struct ConstArg {
    pub class: PowClass,
    /// Mark `k`'s function of `y`.
    pub marks: Vec<MarkFn>,
}

/// The constant `y` of a match from the values its marks read, if they
/// are consistent and `y` is in the class (`None` rejects the match).
pub(crate) fn resolve(c: &ConstArg, values: &[Option<Imm>]) -> Option<Imm> {
    let y = match c.class {
        PowClass::Fixed(y) => y,
        _ => {
            let k = c.marks.iter().position(|m| *m == MarkFn::Y)?;
            match values.get(k)? {
                Some(Imm::F32Bits(b)) => f32::from_bits(*b),
                _ => return None,
            }
        }
    };
    if !c.class.contains(y) {
        return None;
    }
    for (k, m) in c.marks.iter().enumerate() {
        let want = m.eval(y).to_bits();
        if *values.get(k)? != Some(Imm::F32Bits(want)) {
            return None;
        }
    }
    Some(Imm::F32Bits(y.to_bits()))
}

/// The class template from templates of the same code compiled for the
/// exponents `ys` (see the module docs). Errors name the first
/// difference that is not a marked immediate.
pub(crate) fn derive(
    samples: &[(Template, f32)],
    class: PowClass,
    name: &'static str,
) -> Result<Template, String> {
    let [(first, y0), rest @ ..] = samples else {
        return Err(format!("{name}: no samples"));
    };
    for (_, y) in samples {
        if !class.contains(*y) {
            return Err(format!("{name}: sample exponent {y} is not in {class:?}"));
        }
    }
    if rest.is_empty() && !matches!(class, PowClass::Fixed(_)) {
        return Err(format!("{name}: a class needs two or more samples"));
    }
    let mut t = first.clone();
    t.name = name;
    let mut marks: Vec<MarkFn> = Vec::new();
    for (other, _) in rest {
        if other.steps.len() != t.steps.len() || other.branch_target != first.branch_target {
            return Err(format!("{name}: the samples' code differs in shape"));
        }
    }
    for j in 0..t.steps.len() {
        let s0 = &first.steps[j];
        for (other, _) in rest {
            let s = &other.steps[j];
            if s.instr != s0.instr || s.guard != s0.guard || s.operands.len() != s0.operands.len() {
                return Err(format!("{name}: step {j} differs between samples"));
            }
        }
        for o in 0..s0.operands.len() {
            let vals: Vec<&Operand> = samples
                .iter()
                .map(|(s, _)| &s.steps[j].operands[o])
                .collect();
            if vals.iter().all(|v| *v == vals[0]) {
                continue;
            }
            let f = [MarkFn::Y, MarkFn::Half].into_iter().find(|f| {
                samples
                    .iter()
                    .zip(&vals)
                    .all(|((_, y), v)| **v == Operand::Imm(Imm::F32Bits(f.eval(*y).to_bits())))
            });
            let Some(f) = f else {
                return Err(format!(
                    "{name}: step {j} operand {o} differs and is neither y nor y·0.5"
                ));
            };
            if marks.len() as u32 >= MAX_MARKS {
                return Err(format!("{name}: too many marked immediates"));
            }
            t.steps[j].operands[o] = Operand::Reg(mark_reg(marks.len()));
            marks.push(f);
        }
    }
    if !matches!(class, PowClass::Fixed(_)) && !marks.contains(&MarkFn::Y) {
        return Err(format!("{name}: no immediate equals y"));
    }
    let _ = y0;
    t.const_arg = Some(ConstArg { class, marks });
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert!(PowClass::PosFrac.contains(1.5));
        assert!(PowClass::PosFrac.contains(1e-40));
        assert!(!PowClass::PosFrac.contains(2.0));
        assert!(!PowClass::PosFrac.contains(f32::INFINITY));
        assert!(PowClass::NegFrac.contains(-0.5));
        assert!(!PowClass::NegFrac.contains(0.5));
        assert!(PowClass::PosInt.contains(3.0));
        assert!(PowClass::PosInt.contains(1e30));
        assert!(!PowClass::PosInt.contains(2.0));
        assert!(!PowClass::PosInt.contains(f32::NAN));
        assert!(PowClass::NegInt.contains(-1.0));
        assert!(!PowClass::NegInt.contains(-0.0));
        assert!(PowClass::Fixed(2.0).contains(2.0));
        assert!(!PowClass::Fixed(2.0).contains(3.0));
    }

    #[test]
    fn marks_round_trip_and_resolve() {
        assert_eq!(mark_of(mark_reg(0)), Some(0));
        assert_eq!(mark_of(mark_reg(5)), Some(5));
        assert_eq!(mark_of(RegId(u32::MAX)), None);
        assert_eq!(mark_of(RegId(3)), None);
        let c = ConstArg {
            class: PowClass::PosFrac,
            marks: vec![MarkFn::Half, MarkFn::Y, MarkFn::Y],
        };
        let v = |y: f32, h: f32| {
            vec![
                Some(Imm::F32Bits(h.to_bits())),
                Some(Imm::F32Bits(y.to_bits())),
                Some(Imm::F32Bits(y.to_bits())),
            ]
        };
        assert_eq!(
            resolve(&c, &v(1.5, 0.75)),
            Some(Imm::F32Bits(1.5f32.to_bits()))
        );
        // Inconsistent half, an exponent outside the class.
        assert_eq!(resolve(&c, &v(1.5, 0.5)), None);
        assert_eq!(resolve(&c, &v(2.0, 1.0)), None);
        // Subnormal: the half rounds.
        let tiny = f32::from_bits(3);
        assert_eq!(MarkFn::Half.eval(tiny).to_bits(), 2);
    }
}
