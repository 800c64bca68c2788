//! Math-idiom recognition: the pass between lowering and validation that
//! replaces inlined math-library expansions by the exact real function.
//!
//! Without `-use_fast_math` nvcc inlines `expf` as ~12 instructions of
//! range reduction (`fma.rm` with the magic `0f4B400001`, `cvt.sat`, a
//! `shl.b32` by 23 into the exponent field, `ex2.approx`), `logf` as ~40
//! with integer bit tricks and a branch for inf/NaN, `tanhf` as two
//! approximations chosen by `selp`; with fast math `expf` is
//! `ex2.approx(x · 0f3FB8AA3B)`; Triton has its own forms. Over the reals
//! (docs/semantics.md §2) none of these is the function — bit manipulation of a
//! real value has no real meaning, and a polynomial is not `tanh` — so
//! the engine reports them unsupported. This pass recognises them and
//! writes one [`Instr::Idiom`] (`d = f(a)`, or `d = pow(x, y)`) in their
//! place. powf's expansions need two extensions: a tail of special cases
//! after the function's `ret` (`matcher::joined`), and, with a constant
//! exponent, class templates whose immediates are functions of the
//! exponent ([`constarg`]).
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
//! sinf/cosf without fast math keep a Payne–Hanek reduction's words in a
//! `.local` scratch array; those stores are part of the template and are
//! absorbed only when nothing else can read the array afterwards (see
//! `matcher::scratch_private`); in loops nvcc hoists the array's address
//! arithmetic, matched by a derived form (`Template::hoisted`); when
//! several expansions share one array (`sinf(a) + cosf(b)`) nvcc also
//! reassociates the slow path's load addresses (`Template::reassociated`).
//! `sincosf`, and `sinf(v)`, `cosf(v)` written apart (RoPE), share one
//! reduction between two results: two-result templates, replaced by two
//! idioms.
//!
//! f64 `pow` calls `.func __internal_accurate_pow` (matched by body like
//! the one below); with both arguments variable its special cases after
//! `ret` return onto the final `x == 1 || y == 0` select, inside the
//! expansion (`Template::rejoin`); `pow(x, x)` is a form of its own.
//! powf's initial 1.0 is not a step (nvcc hoists it above a bounds check,
//! or, with two powf in one expression, above the first expansion, the
//! first's a copy of the second's: `joined::out_init_at`).
//!
//! f64 `sin`/`cos` call a Payne–Hanek `.func` for huge arguments and
//! read a module table of coefficients: a call matches only a call of a
//! function with the template's body, a table only a variable with the
//! template's initialiser (see `calls`). Triton's `tl.sin`/`tl.cos`
//! reduce in a loop over such a table: a template loop matches only a
//! kernel loop made of exactly its steps (`matcher::accept`).
//!
//! erff, expm1f, log1pf, log10f, exp10f, sinhf and coshf have idioms of
//! their own: a one-argument idiom is rounded once by the bit-exact
//! domain (as libm is), and the symbolic domain writes each as its exact
//! term (`erf` is an atom; expm1, log1p, log10, exp10, sinh, cosh become
//! `exp(x) − 1`, `log(1 + x)`, `log x / log 10`, … with `log 10` kept
//! symbolic), so `expm1f(x)` and `expf(x) - 1` meet in one normal form.
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

mod calls;
pub mod catalogue;
mod constarg;
mod library;
mod matcher;
mod operands;
mod template;

pub use library::{
    NVCC_DEFAULT, NVCC_FAST, NVCC_POWF, PAIR_ROWS, POW_CLASSES, POW_F64, POW_GENERAL, PairRow,
    PowClass, PowRow, ROWS, Row, TRITON, build, build_all, build_pair, build_pow_class, templates,
};
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

/// Replaces every recognised expansion in `k`. Expansions that call a
/// `.func` (f64 `sin`/`cos`) are recognised only by [`recognise_in`],
/// which sees the module's functions.
pub fn recognise(k: &KernelIr) -> Recognised {
    recognise_in(k, &[])
}

/// [`recognise`] with the module's functions (`funcs`, unrecognised):
/// a template's call matches a call of a function whose body equals the
/// template module's (see `calls`).
pub fn recognise_in(k: &KernelIr, funcs: &[KernelIr]) -> Recognised {
    let mut ir = k.clone();
    let mut found = Vec::new();
    let defs = template::constant_defs(k);
    let mut facts = matcher::Facts {
        consts: defs.iter().map(|(r, (c, _))| (*r, *c)).collect(),
        const_at: defs.iter().map(|(r, (_, at))| (*r, *at)).collect(),
        scratch_ok: Default::default(),
        vars: k.vars.clone(),
        callees: calls::bodies(funcs),
    };
    matcher::scratch_regions(templates(), k, &mut facts);
    for t in templates() {
        let mut start = 0;
        while start < ir.instrs.len() {
            let hit = matcher::match_at(t, &ir, &facts, start)
                .filter(|m| matcher::accept(t, &ir, &facts, m));
            if let Some(m) = hit {
                let mut r = rewrite(&mut ir, t, &m);
                // A two-result expansion is reported once per function.
                if let Some((_, f)) = t.second {
                    let form = format!("{} ({f} result)", r.form);
                    found.push(Recognition {
                        func: f,
                        form,
                        ..r.clone()
                    });
                    r.form = format!("{} ({} result)", r.form, r.func);
                }
                found.push(r);
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
        None => (m.join_at.unwrap_or(last), m.out),
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
        } else if let (Some((r, at)), Some((_, f))) = (m.second, t.second)
            && i == at
        {
            // The second result at the step that wrote it last: nothing
            // outside the expansion touches its register inside the span.
            d.instr = Instr::Idiom {
                func: f,
                ty: t.ty,
                first: first as u32,
            };
            d.operands = [Operand::Reg(r), Operand::Reg(m.x)].into_iter().collect();
        } else if i == idiom_at {
            d.instr = Instr::Idiom {
                func: t.func,
                ty: t.ty,
                first: first as u32,
            };
            d.operands = [Operand::Reg(idiom_dst), Operand::Reg(m.x)]
                .into_iter()
                .chain(m.more.iter().cloned())
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
    (
        recognise_in(k, funcs),
        funcs.iter().map(|f| recognise_in(f, funcs)).collect(),
    )
}
