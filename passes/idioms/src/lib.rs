//! Math-idiom recognition: the pass between lowering and validation that
//! replaces inlined math-library expansions by the exact real function.
//!
//! Without `-use_fast_math` nvcc inlines `expf` as ~12 instructions of
//! range reduction (`fma.rm` with the magic `0f4B400001`, `cvt.sat`, a
//! `shl.b32` by 23 into the exponent field, `ex2.approx`), `logf` as ~40
//! with integer bit tricks and a branch for inf/NaN, `tanhf` as two
//! approximations chosen by `selp`; with fast math `expf` is
//! `ex2.approx(x · 0f3FB8AA3B)`; Triton has its own forms. Over the reals
//! (design.md §4) none of these is the function — bit manipulation of a
//! real value has no real meaning, and a polynomial is not `tanh` — so
//! the engine reports them unsupported. This pass recognises them and
//! writes one [`Instr::Idiom`] (`d = f(a)`) in their place.
//!
//! Why an IR rewrite and not bit-views of terms inside the symbolic
//! domain: the expansions contain data-dependent branches (`logf`'s
//! inf/NaN path, f64 `exp`'s overflow path) that the structured-CTA
//! validation rejects, and a polynomial approximation cannot be turned
//! into `tanh` by any local reasoning about terms. Recognising the whole
//! region, branch included, before validation handles both.
//!
//! How: templates are the compilers' own output (`templates/`, see
//! [`library`]); [`matcher`] finds them by dataflow and checks the
//! replacement is sound. The rewrite keeps instruction indices: the
//! sequence's last instruction becomes the `Idiom` (carrying the index of
//! the first), every other matched instruction becomes
//! [`Instr::Absorbed`], so labels and the [`ptxeq_ir::SourceMap`] stay
//! valid and diagnostics still name original PTX lines. Constant `mov`s
//! are left in place (they may be shared).
//!
//! Soundness: a template is matched instruction for instruction (opcode,
//! every modifier, every constant) up to register renaming, so the
//! replaced code computes exactly what the template computes; that the
//! template computes the function (within a few ulp, modelled as equal)
//! is established by `tests/agreement.rs`, which runs each template's PTX
//! in the bit-exact IEEE domain at thousands of inputs against libm. Each
//! replacement is reported as a [`Recognition`] with its assumptions (the
//! check prints them). Anything not matched stays as it was, and a bit
//! manipulation of a real value is then reported unsupported by the
//! engine, naming the instruction — never approximated.

mod library;
mod matcher;
mod operands;
mod template;

pub use library::{NVCC_DEFAULT, NVCC_FAST, ROWS, Row, TRITON, build, templates};
pub use template::Template;

use ptxeq_ir::{IdiomFn, Instr, KernelIr, Operand, ScalarType};
use serde::{Deserialize, Serialize};

/// One replaced expansion.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Recognition {
    pub func: IdiomFn,
    pub ty: ScalarType,
    /// Indices of the expansion's first and last instruction (the last
    /// now holds the `Idiom`).
    pub first: u32,
    pub last: u32,
    /// The form recognised (`"expf (nvcc, default flags)"`).
    pub form: String,
    /// What the replacement assumes (constant recoveries, libm accuracy).
    pub assumptions: Vec<String>,
}

/// A function with its expansions replaced.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Recognised {
    pub ir: KernelIr,
    pub found: Vec<Recognition>,
}

/// Replaces every recognised expansion in `k`.
pub fn recognise(k: &KernelIr) -> Recognised {
    let mut ir = k.clone();
    let mut found = Vec::new();
    let defs = template::constant_defs(k);
    let facts = matcher::Facts {
        consts: defs.iter().map(|(r, (c, _))| (*r, *c)).collect(),
        const_at: defs.iter().map(|(r, (_, at))| (*r, *at)).collect(),
    };
    for t in templates() {
        let mut start = 0;
        while start < ir.instrs.len() {
            let hit = matcher::match_at(t, &ir, &facts, start)
                .filter(|m| matcher::accept(t, &ir, &facts, m));
            if let Some(m) = hit {
                found.push(rewrite(&mut ir, t, &m));
            }
            start += 1;
        }
    }
    found.sort_by_key(|r| r.first);
    Recognised { ir, found }
}

fn rewrite(ir: &mut KernelIr, t: &Template, m: &matcher::Found) -> Recognition {
    let first = *m.at.iter().min().unwrap_or(&0);
    let last = *m.at.iter().max().unwrap_or(&0);
    // The fused form: `f(x)` into the product's factor register at the
    // step that wrote it, then `d = f(x) + acc` at the end.
    let (idiom_at, idiom_dst) = match &m.acc {
        Some((_, e, j)) => (*j, *e),
        None => (last, m.out),
    };
    for &i in &m.at {
        let d = &mut ir.instrs[i];
        d.guard = None;
        if let (Some((acc, e, _)), true) = (&m.acc, i == last) {
            d.instr = Instr::Add {
                ty: t.ty,
                fp: ptxeq_ir::FpMods::default(),
                carry: ptxeq_ir::Carry::None,
            };
            d.operands = [Operand::Reg(m.out), Operand::Reg(*e), acc.clone()]
                .into_iter()
                .collect();
        } else if i == idiom_at {
            d.instr = Instr::Idiom {
                func: t.func,
                ty: t.ty,
                first: first as u32,
            };
            d.operands = [Operand::Reg(idiom_dst), Operand::Reg(m.x)]
                .into_iter()
                .collect();
        } else {
            d.instr = Instr::Absorbed {
                at: idiom_at as u32,
            };
            d.operands.clear();
        }
    }
    Recognition {
        func: t.func,
        ty: t.ty,
        first: first as u32,
        last: last as u32,
        form: t.name.to_string(),
        assumptions: t.assumptions.iter().map(|s| s.to_string()).collect(),
    }
}

/// Recognises every function of a kernel's call graph alike.
pub fn recognise_all(k: &KernelIr, funcs: &[KernelIr]) -> (Recognised, Vec<Recognised>) {
    (recognise(k), funcs.iter().map(recognise).collect())
}
