//! Comparing a candidate kernel against a formula reference (issue 16).
//!
//! The formula (crate `ptxeq-formula`, already compiled against the
//! check's tensor table) is instantiated, element by element, into the
//! same term store the candidate's output terms are imported into: its
//! tensor reads are the input symbols `x[i]` the candidate's loads
//! produce (tensor number = the check's tensor table, index = the
//! row-major element index), so each pair goes to the same decision
//! procedure, memo and report as a kernel-vs-kernel pair.
//!
//! Pairing rules (the formula defines every element of the tensors it
//! names; it is the complete reference):
//! - a tensor the formula defines: when the candidate's CTAs run include
//!   every CTA that writes a compared element (`scope.complete[1]`),
//!   every element of the compare region (the whole tensor without one)
//!   is compared, so an element the candidate never writes is a
//!   difference (an `inout` element it leaves alone keeps its input value
//!   and is compared as that); otherwise only the elements the candidate
//!   writes in the CTAs run are compared (the verdict covers those CTAs);
//! - a tensor the candidate writes that the formula does not define: each
//!   written element is a difference (written only by the candidate);
//! - a formula element that cannot be instantiated (a read outside a
//!   tensor's shape, a step bound) is an error of the formula, with its
//!   span: no verdict.

use std::collections::HashMap;
use std::time::Instant;

use ptxeq_decide::decide::DecideOptions;
use ptxeq_exec::Role;
use ptxeq_formula::{Compiled, DEFAULT_MAX_STEPS, Diagnostic};
use ptxeq_symex::SymbolicState;
use ptxeq_terms::Terms;

use crate::{
    DecisionMemo, Paired, Scope, Tally, Val, Verdicts, decide_and_tally, unflatten, values_of,
};

/// Bounds of a formula comparison.
#[derive(Clone, Copy, Debug)]
pub struct FormulaOptions {
    /// Instantiation steps over all elements (`--formula-max-steps`).
    pub max_steps: u64,
    /// When deciding stops ([`crate::StopRule`]; `lift` decides all).
    pub stop: crate::StopRule,
}

impl Default for FormulaOptions {
    fn default() -> Self {
        FormulaOptions {
            max_steps: DEFAULT_MAX_STEPS,
            stop: crate::StopRule::ALL,
        }
    }
}

/// Compares the candidate's output tensors (merged over the CTAs it ran)
/// with `formula`, inside `scope`'s compare regions. `scope.complete[0]`
/// is ignored (a formula defines every element); an error is a formula
/// element that could not be instantiated.
pub fn compare_formula(
    candidate: &[&SymbolicState],
    formula: &Compiled,
    scope: &Scope<'_>,
    memo: &dyn DecisionMemo,
    opts: &DecideOptions,
    fopts: FormulaOptions,
) -> Result<Verdicts, Box<Diagnostic>> {
    let start = Instant::now();
    let mut terms = Terms::new();
    let scope = Scope {
        complete: [true, scope.complete[1]],
        ..scope.clone()
    };
    let paired = pair_formula(candidate, formula, &scope, &mut terms, fopts)?;
    let mut verdicts = decide_and_tally(
        &terms,
        paired,
        &scope,
        memo,
        opts,
        Tally {
            start,
            ctas: Vec::new(),
            candidate_ctas: candidate.iter().map(|s| s.cta).collect(),
            reference_unwritten: "(the formula does not define this tensor)",
            stop: fopts.stop,
        },
    );
    crate::attach_stores(&mut verdicts, &[], candidate);
    Ok(verdicts)
}

/// Writes the verification condition of every compared element whose
/// formula and candidate terms differ (`<tensor>_<index>.smt2` under
/// `dir`, the formula as the reference side); the number written.
pub fn emit_smt_formula(
    candidate: &[&SymbolicState],
    formula: &Compiled,
    scope: &Scope<'_>,
    fopts: FormulaOptions,
    dir: &std::path::Path,
) -> Result<usize, String> {
    let mut terms = Terms::new();
    let scope = Scope {
        complete: [true, scope.complete[1]],
        ..scope.clone()
    };
    let paired = pair_formula(candidate, formula, &scope, &mut terms, fopts)
        .map_err(|d| d.message.clone())?;
    let mut written = 0;
    for (k, idx, va, vb) in paired.pairs {
        if let (Val::Term(a), Val::Term(b)) = (va, vb)
            && a != b
        {
            let name = scope
                .tensors
                .get(k as usize)
                .map_or("tensor", |t| t.name.as_str());
            ptxeq_decide::smt::write_vc(dir, &format!("{name}_{idx}"), &terms, a, b)
                .map_err(|e| e.to_string())?;
            written += 1;
        }
    }
    Ok(written)
}

/// The formula's and the candidate's value of every compared element.
fn pair_formula(
    candidate: &[&SymbolicState],
    formula: &Compiled,
    scope: &Scope<'_>,
    terms: &mut Terms,
    fopts: FormulaOptions,
) -> Result<Paired, Box<Diagnostic>> {
    let tensors = scope.tensors;
    terms.set_tensor_names(scope.input_names.clone());
    terms.set_tensor_shapes(tensors.iter().map(|t| t.shape.clone()).collect());
    terms.set_scalar_inputs(scope.first_symbol);
    let mut imported = Vec::new();
    let cand_out = values_of(candidate, terms, &mut imported);
    let complete = scope.complete[1];

    let defined: Vec<u32> = formula.outputs();
    let mut numbers: Vec<u32> = defined.iter().chain(cand_out.keys()).copied().collect();
    numbers.sort_unstable();
    numbers.dedup();

    // First the element list and the formula's terms (the instance holds
    // the store), then the candidate's side.
    let empty = Vec::new();
    let mut outside: HashMap<u32, u64> = HashMap::new();
    let mut listed: Vec<(u32, u64, Option<Val>)> = Vec::new();
    {
        let mut inst = formula.instance(terms).max_steps(fopts.max_steps);
        for &k in &numbers {
            let info = tensors.get(k as usize);
            let shape: &[u64] = info.map_or(&[], |t| &t.shape);
            let region = scope.region(k);
            let written = cand_out.get(&k).unwrap_or(&empty);
            let def = defined.iter().position(|&d| d == k);
            let mut indices: Vec<u64> = Vec::new();
            for (i, _) in written {
                if ptxeq_spec::in_region(region, shape, *i) {
                    indices.push(*i);
                } else {
                    *outside.entry(k).or_default() += 1;
                }
            }
            if def.is_some() && complete {
                indices = region_indices(region, shape);
            }
            for idx in indices {
                let reference = match def {
                    Some(d) => Some(Val::Term(inst.element(d, &unflatten(idx, shape))?)),
                    None => None,
                };
                listed.push((k, idx, reference));
            }
        }
    }

    let mut pairs = Vec::with_capacity(listed.len());
    for (k, idx, reference) in listed {
        let inout = tensors
            .get(k as usize)
            .is_some_and(|t| t.role == Role::InOut);
        let written = cand_out.get(&k).unwrap_or(&empty);
        let mut vb = match written.binary_search_by_key(&idx, |e| e.0) {
            Ok(p) => written[p].1.clone(),
            Err(_) => Val::Unwritten,
        };
        if inout && complete && matches!(vb, Val::Unwritten) {
            vb = Val::Term(terms.input(k, idx));
        }
        pairs.push((k, idx, reference.unwrap_or(Val::Unwritten), vb));
    }
    Ok(Paired {
        numbers,
        pairs,
        outside,
    })
}

/// The flat indices of `region` (the whole tensor when `None`), in order.
fn region_indices(region: Option<&[[u64; 2]]>, shape: &[u64]) -> Vec<u64> {
    let total: u64 = shape.iter().product();
    match region {
        None => (0..total).collect(),
        Some(_) => (0..total)
            .filter(|&i| ptxeq_spec::in_region(region, shape, i))
            .collect(),
    }
}
