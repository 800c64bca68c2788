//! `ptxeq lift` (issue 16 item 3): each output tensor of a kernel as one
//! formula, printed only once verified.
//!
//! The kernel is race-checked and replayed symbolically as for any check;
//! its output elements (merged over the CTAs run) are generalised by
//! [`ptxeq_formula::lift::lift_tensor`] into a candidate formula per
//! tensor, and the candidate is then checked like a formula reference —
//! instantiated at every element the kernel writes and proved equal to
//! that element's term by the decision procedure
//! ([`ptxeq_verdicts::compare_formula`]). A candidate with any element
//! refuted or unknown is reported as not lifted, with the first failing
//! element; nothing unverified is ever printed as lifted.

use std::collections::BTreeMap;

use ptxeq_decide::decide::DecideOptions;
use ptxeq_exec::OutputValue;
use ptxeq_formula::lift::{Naming, lift_tensor};
use ptxeq_formula::recognise::Hints;
use ptxeq_terms::Terms;
use ptxeq_verdicts::{FormulaOptions, Scope, StopRule};

use crate::check::LayeredMemo;
use crate::ctas::{compare_regions, kernel_ctas};
use crate::formula_check::formula_context_of;
use crate::kernel_check::{
    CtaKey, KernelRaceReport, KernelSlot, RaceVerdict, Slot, SpecInput, cta_input, race_check,
    symbolic,
};
use crate::{Database, Db, SourceFile};

/// An element the kernel writes: its flat index and its term (`None`: a
/// bit pattern or an unsupported value).
type Written = (u64, Option<ptxeq_terms::TermId>);

/// One output tensor's outcome.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LiftedTensor {
    pub name: String,
    /// Elements the kernel writes (in the CTAs run).
    pub elements: u64,
    /// The verified formula (`name[i0, …] = …;`).
    pub formula: Option<String>,
    /// Why it did not lift: the generalisation failed, or the candidate
    /// formula (`candidate`) did not verify.
    pub why_not: Option<String>,
    /// The generalised formula that failed verification, if one was found.
    pub candidate: Option<String>,
    /// The structural formula as a tree, when it verified (its text is
    /// `structural` when that is set, else `formula`).
    pub ast: Option<ptxeq_formula::lifted::Def>,
    /// The verified structural formula, when `formula` is a verified
    /// prelude form of the same tensor (`softmax(x[i0, :])[i1]`).
    pub structural: Option<String>,
}

/// What `ptxeq lift` reports.
#[derive(Clone, Debug)]
pub struct LiftReport {
    pub kernel: KernelRaceReport,
    /// `None` when the kernel could not be lifted at all (`problem`).
    pub tensors: Vec<LiftedTensor>,
    /// Why nothing was lifted (not race-free, a replay finding, …).
    pub problem: Option<String>,
}

/// Lifts every output tensor of the kernel in `slot` of `spec`.
pub fn lift(
    db: &Database,
    spec: SpecInput,
    slot: Slot,
    file: SourceFile,
    fopts: FormulaOptions,
) -> LiftReport {
    let kernel = race_check(db, spec, &[(slot, file)])
        .into_iter()
        .next()
        .expect("one kernel report");
    let mut report = LiftReport {
        kernel,
        tensors: Vec::new(),
        problem: None,
    };
    if let Some(e) = &report.kernel.input_error {
        report.problem = Some(format!("the spec does not fit the kernel: {e}"));
        return report;
    }
    if report.kernel.verdict != RaceVerdict::RaceFree {
        report.problem = Some(format!(
            "the kernel is not race-free ({}): its outputs depend on the schedule",
            report.kernel.verdict.as_str()
        ));
        return report;
    }
    let k = KernelSlot::new(db, spec, slot, file);
    let Ok(input) = cta_input(db, k).clone() else {
        report.problem = Some("the kernel could not be bound to the spec".into());
        return report;
    };
    let mut states = Vec::new();
    for &cta in &kernel_ctas(db, k).ctas {
        match symbolic(db, CtaKey::new(db, k, cta)) {
            Some(s) if s.findings.is_empty() => states.push(s.clone()),
            Some(s) => {
                report.problem = Some(format!(
                    "CTA ({},{},{}): {}",
                    cta[0], cta[1], cta[2], s.findings[0].message
                ));
                return report;
            }
            None => {
                report.problem = Some("a CTA has no symbolic state".into());
                return report;
            }
        }
    }

    // The element terms of every output tensor, in one store.
    let names = input.input_names();
    let mut terms = Terms::new();
    terms.set_tensor_names(names.clone());
    terms.set_scalar_inputs(input.first_symbol());
    let mut outputs: BTreeMap<u32, (String, Vec<Written>)> = BTreeMap::new();
    for s in &states {
        let roots = terms.import(&s.graph);
        for t in &s.outputs {
            let entry = outputs
                .entry(t.tensor)
                .or_insert_with(|| (t.name.clone(), Vec::new()));
            for (i, v) in &t.elements {
                let term = match v {
                    OutputValue::Data(r) => roots.get(*r as usize).copied(),
                    _ => None,
                };
                entry.1.push((*i, term));
            }
        }
    }
    let shapes: Vec<Vec<u64>> = input
        .tensors
        .iter()
        .map(|t| t.shape.clone())
        .chain(input.symbols.iter().map(|_| Vec::new()))
        .collect();
    let naming = Naming {
        names: &names,
        shapes: &shapes,
        first_symbol: input.first_symbol(),
    };
    let cspec = spec.spec(db);
    let ctx = formula_context_of(cspec, &input, slot);
    let memo = LayeredMemo {
        mem: db.decision_memo(),
        disk: db.disk_cache(),
    };
    let cands: Vec<&ptxeq_symex::SymbolicState> = states.iter().map(|s| &**s).collect();
    let scope = Scope {
        tensors: &input.tensors,
        input_names: names.clone(),
        first_symbol: input.first_symbol(),
        regions: compare_regions(cspec),
        complete: [true, kernel_ctas(db, k).covers],
    };
    for (&tensor, (name, elems)) in &outputs {
        let shape = &input.tensors[tensor as usize].shape;
        let mut lt = LiftedTensor {
            name: name.clone(),
            elements: elems.len() as u64,
            formula: None,
            why_not: None,
            candidate: None,
            ast: None,
            structural: None,
        };
        let data: Option<Vec<(Vec<u64>, ptxeq_terms::TermId)>> = elems
            .iter()
            .map(|(i, t)| t.map(|t| (ptxeq_verdicts::unflatten(*i, shape), t)))
            .collect();
        let Some(data) = data else {
            lt.why_not = Some("an element is a bit pattern or unsupported, not a real term".into());
            report.tensors.push(lt);
            continue;
        };
        let verify_text = |text: &str, stop: StopRule| {
            let fopts = FormulaOptions { stop, ..fopts };
            verify(text, &ctx, &cands, &scope, &memo, fopts, tensor)
        };
        match lift_tensor(&terms, name, shape.len(), &data, &naming) {
            Ok(def) => {
                // The named constants' text first (`log2(e)`), then the
                // rationals the kernel holds.
                let mut tried = vec![def.text()];
                if def.has_named() {
                    tried.push(def.plain().text());
                }
                let mut why = String::new();
                for (k, text) in tried.iter().enumerate() {
                    match verify_text(text, fopts.stop) {
                        Ok(()) => {
                            lt.formula = Some(text.clone());
                            lt.ast = Some(if k == 0 { def.clone() } else { def.plain() });
                            break;
                        }
                        Err(w) if why.is_empty() => why = w,
                        Err(_) => {}
                    }
                }
                if lt.formula.is_none() {
                    lt.candidate = tried.pop();
                    lt.why_not = Some(format!("the generalised formula did not verify: {why}"));
                }
            }
            Err(why) => lt.why_not = Some(why),
        }
        // A prelude operator over the inputs, proved like the structural
        // formula; it replaces the structural text (kept in `structural`).
        let hints = hints_of(&terms, &data);
        for text in ptxeq_formula::recognise::candidates(&ctx, name, &hints) {
            // One refutation settles a wrong proposal.
            if verify_text(
                &text,
                StopRule {
                    max_refuted: Some(1),
                },
            )
            .is_ok()
            {
                lt.structural = lt.formula.take();
                lt.formula = Some(text);
                lt.why_not = None;
                lt.candidate = None;
                break;
            }
        }
        report.tensors.push(lt);
    }
    report
}

/// What the element terms apply, over a sample of elements (the first,
/// the last and a stride between): proposes prelude operators.
fn hints_of(terms: &Terms, data: &[(Vec<u64>, ptxeq_terms::TermId)]) -> Hints {
    use ptxeq_terms::{Func, Node};
    let step = (data.len() / 16).max(1);
    let roots: Vec<ptxeq_terms::TermId> = data
        .iter()
        .step_by(step)
        .chain(data.last())
        .map(|(_, t)| *t)
        .collect();
    let mut h = Hints::default();
    for (_, n) in terms.reachable(&roots) {
        match n {
            Node::Exp(_) | Node::Func(Func::Ex2, _) => h.exp = true,
            Node::Max(_) => h.max = true,
            Node::Func(Func::Log | Func::Lg2, _) => h.log = true,
            Node::Func(Func::Sqrt, _) => h.sqrt = true,
            Node::Func(Func::Erf, _) => h.erf = true,
            Node::Func(Func::Tanh, _) => h.tanh = true,
            Node::Recip(_) => h.recip = true,
            _ => {}
        }
    }
    h
}

/// Proves the candidate formula `text` at every element of `tensor` the
/// kernel writes.
fn verify(
    text: &str,
    ctx: &ptxeq_formula::Context,
    cands: &[&ptxeq_symex::SymbolicState],
    scope: &Scope<'_>,
    memo: &LayeredMemo<'_>,
    fopts: FormulaOptions,
    tensor: u32,
) -> Result<(), String> {
    let compiled =
        ptxeq_formula::compile(text, ctx).map_err(|d| ptxeq_formula::render(&d, "lifted", text))?;
    let v = ptxeq_verdicts::compare_formula(
        cands,
        &compiled,
        scope,
        memo,
        &DecideOptions::default(),
        fopts,
    )
    .map_err(|d| ptxeq_formula::render(&[*d], "lifted", text))?;
    let tv = v
        .tensors
        .iter()
        .find(|t| t.tensor == tensor)
        .ok_or("the tensor was not compared")?;
    if tv.refuted == 0 && tv.unknown == 0 && tv.proved == tv.compared && tv.compared > 0 {
        return Ok(());
    }
    let first = tv.failures.first().map_or(String::new(), |f| {
        format!(" (first: element {:?}: {:?})", f.coords, f.failure)
    });
    Err(format!(
        "{} of {} element(s) proved, {} refuted, {} unknown{first}",
        tv.proved, tv.compared, tv.refuted, tv.unknown
    ))
}

/// The verified formulas of a report, one definition per line.
pub fn lifted_text(report: &LiftReport) -> String {
    report
        .tensors
        .iter()
        .filter_map(|t| t.formula.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}
