//! `ptxeq check` against a formula reference (issue 16): `[reference]
//! formula = "…"` / `formula_file`, or `ptxeq check CAND.ptx --formula`.
//!
//! The candidate goes through the same gate as in a kernel pair (race,
//! deadlock, bad access: that is the verdict), its CTAs are replayed
//! symbolically, and its output elements are compared with the formula
//! instantiated at each element ([`ptxeq_verdicts::compare_formula`]) by
//! the same decision procedure, memo and report. The formula is compiled
//! against the candidate's tensor table ([`formula_context`]): tensor
//! numbers and shapes as its loads see them, scalars with the values the
//! kernel receives (a float scalar rounded to its param's type).

use std::sync::Arc;

use num_rational::BigRational;
use ptxeq_decide::decide::DecideOptions;
use ptxeq_exec::{CtaInput, ParamValue};
use ptxeq_formula::{Context, ScalarDecl, ScalarValue as FScalar, TensorDecl};
use ptxeq_ir::ScalarType;
use ptxeq_spec::{CheckSpec, FormulaRef, ParamBinding, ScalarValue};
use ptxeq_verdicts::{FormulaOptions, Scope};

use crate::check::{
    CheckReport, CheckVerdict, LayeredMemo, conclude, kernel_gate, symbolic_problems,
};
use crate::ctas::{compare_regions, kernel_ctas};
use crate::kernel_check::{CtaKey, KernelSlot, Slot, SpecInput, cta_input, race_check, symbolic};
use crate::{Database, Db, SourceFile};

/// Checks the candidate kernel `candidate` of `spec` against `formula`
/// (the spec gives the launch, tensors and scalars; its own reference,
/// if any, is not used). The report's `kernels` holds the candidate only.
pub fn check_formula(
    db: &Database,
    spec: SpecInput,
    candidate: SourceFile,
    formula: &FormulaRef,
    fopts: FormulaOptions,
) -> CheckReport {
    let kernels = race_check(db, spec, &[(Slot::Candidate, candidate)]);
    let mut report = CheckReport {
        kernels,
        verdict: CheckVerdict::Undecided,
        verdicts: None,
        problems: Vec::new(),
    };
    if kernel_gate(&mut report) {
        return report;
    }
    let ck = KernelSlot::new(db, spec, Slot::Candidate, candidate);
    let input = match cta_input(db, ck) {
        Ok(i) => i.clone(),
        Err(e) => {
            report.verdict =
                CheckVerdict::InvalidInput(format!("the spec does not fit the kernel: {e}"));
            return report;
        }
    };
    let cspec = spec.spec(db);
    let ctx = formula_context(cspec, &input);
    let compiled = match ptxeq_formula::compile(&formula.text, &ctx) {
        Ok(c) => c,
        Err(diags) => {
            report.verdict = CheckVerdict::InvalidInput(format!(
                "the formula reference does not compile:\n{}",
                ptxeq_formula::render(&diags, &formula.origin(), &formula.text)
            ));
            return report;
        }
    };
    report.problems = symbolic_problems(db, &[(Slot::Candidate, ck)]);
    let states: Option<Vec<Arc<ptxeq_symex::SymbolicState>>> = kernel_ctas(db, ck)
        .ctas
        .iter()
        .map(|&cta| symbolic(db, CtaKey::new(db, ck, cta)).clone())
        .collect();
    if let Some(states) = states {
        let cands: Vec<&ptxeq_symex::SymbolicState> = states.iter().map(|s| &**s).collect();
        let scope = Scope {
            tensors: &input.tensors,
            input_names: input.input_names(),
            first_symbol: input.first_symbol(),
            regions: compare_regions(cspec),
            complete: [true, kernel_ctas(db, ck).covers],
        };
        let memo = LayeredMemo {
            mem: db.decision_memo(),
            disk: db.disk_cache(),
        };
        let _span = tracing::info_span!("formula verdicts").entered();
        match ptxeq_verdicts::compare_formula(
            &cands,
            &compiled,
            &scope,
            &memo,
            &DecideOptions::default(),
            fopts,
        ) {
            Ok(v) => report.verdicts = Some(Arc::new(v)),
            Err(d) => {
                report.verdict = CheckVerdict::InvalidInput(format!(
                    "the formula reference cannot be instantiated:\n{}",
                    ptxeq_formula::render(&[*d], &formula.origin(), &formula.text)
                ));
                return report;
            }
        }
    }
    conclude(&mut report);
    report
}

/// Writes the verification condition of every element of a formula check
/// whose two terms differ as SMT-LIB2 under `dir` (`ptxeq check --formula
/// … --emit-smt DIR`); the number written. Run after [`check_formula`]
/// (the states are memoised).
pub fn emit_smt_formula(
    db: &Database,
    spec: SpecInput,
    candidate: SourceFile,
    formula: &FormulaRef,
    fopts: FormulaOptions,
    dir: &std::path::Path,
) -> Result<usize, String> {
    let ck = KernelSlot::new(db, spec, Slot::Candidate, candidate);
    let input = cta_input(db, ck).clone()?;
    let cspec = spec.spec(db);
    let compiled = ptxeq_formula::compile(&formula.text, &formula_context(cspec, &input))
        .map_err(|d| ptxeq_formula::render(&d, &formula.origin(), &formula.text))?;
    let states: Vec<Arc<ptxeq_symex::SymbolicState>> = kernel_ctas(db, ck)
        .ctas
        .iter()
        .map(|&cta| symbolic(db, CtaKey::new(db, ck, cta)).clone())
        .collect::<Option<_>>()
        .ok_or("a CTA has no symbolic state")?;
    let cands: Vec<&ptxeq_symex::SymbolicState> = states.iter().map(|s| &**s).collect();
    let scope = Scope {
        tensors: &input.tensors,
        input_names: input.input_names(),
        first_symbol: input.first_symbol(),
        regions: compare_regions(cspec),
        complete: [true, kernel_ctas(db, ck).covers],
    };
    ptxeq_verdicts::emit_smt_formula(&cands, &compiled, &scope, fopts, dir)
}

/// What a formula may name, from the candidate's binding: every tensor
/// under its input number (readable when it is an input or inout whose
/// contents are symbolic: a tensor with concrete `values` is read by the
/// kernel as bits, which a formula has no term for), and every scalar with
/// the value the kernel receives.
pub fn formula_context(spec: &CheckSpec, input: &CtaInput) -> Context {
    formula_context_of(spec, input, Slot::Candidate)
}

/// [`formula_context`] for the kernel in `slot` (float scalars as that
/// kernel's params receive them).
pub fn formula_context_of(spec: &CheckSpec, input: &CtaInput, slot: Slot) -> Context {
    let tensors = input
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let concrete = spec
                .tensors
                .get(&t.name)
                .is_some_and(|s| s.values.is_some());
            TensorDecl {
                name: t.name.clone(),
                id: i as u32,
                shape: t.shape.clone(),
                readable: t.role.is_read() && !concrete,
                writable: t.role.is_written(),
            }
        })
        .collect();
    let first_symbol = input.first_symbol();
    let scalars = spec
        .scalars
        .iter()
        .map(|(name, v)| {
            let value = match v {
                ScalarValue::Int(i) => FScalar::Int(*i),
                ScalarValue::Symbolic { .. } => FScalar::Symbol {
                    tensor: first_symbol
                        + input
                            .symbols
                            .iter()
                            .position(|s| &s.name == name)
                            .unwrap_or(0) as u32,
                },
                ScalarValue::Float(f) => FScalar::Real(
                    param_value(input, spec, slot, name)
                        .or_else(|| BigRational::from_float(f.get()))
                        .unwrap_or_default(),
                ),
            };
            ScalarDecl {
                name: name.clone(),
                value,
            }
        })
        .collect();
    Context { tensors, scalars }
}

/// The exact value a float scalar has in the kernel's param that binds
/// it (the spec's decimal rounded to the param's type), when one does.
fn param_value(input: &CtaInput, spec: &CheckSpec, slot: Slot, name: &str) -> Option<BigRational> {
    let kref = crate::kernel_check::kernel_ref(spec, slot)?;
    for (((_, decl), binding), value) in input.kernel.args().zip(&kref.params).zip(&input.params) {
        if let (ParamBinding::Scalar(n), ParamValue::Scalar { bits }) = (binding, value)
            && n == name
        {
            return match decl.ty {
                ScalarType::F32 => BigRational::from_float(f32::from_bits(*bits as u32)),
                ScalarType::F64 => BigRational::from_float(f64::from_bits(*bits)),
                _ => None,
            };
        }
    }
    None
}
