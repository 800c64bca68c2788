//! Where two formulas first differ: instead of two long strings, the
//! smallest sub-terms in which a refuted element's reference and candidate
//! formulas part ways (`reference has x[1023], the candidate does not`).
//!
//! Both kernels' output terms are imported into one hash-consed store, so
//! equal sub-terms are one node and the walk stops wherever the two agree.
//! Commutative operators (sums, products, max/min, boolean and/or/xor)
//! are compared as multisets of operands: a sum that lost one summand
//! shows that summand, not a reordered list.

use ptxeq_db::{CtaKey, Database, KernelSlot, Slot, SourceFile, SpecInput};
use std::collections::HashMap;

use ptxeq_terms::{Node, TermId, Terms};

/// How many differing operands of one operator are named.
const SHOWN: usize = 4;

/// One difference: a sub-term of the reference and/or of the candidate
/// (`None`: the operator on that side has no such operand).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub reference: Vec<TermId>,
    pub candidate: Vec<TermId>,
}

/// The operands of a commutative operator, or `None`.
fn commutative(n: &Node) -> Option<&[TermId]> {
    match n {
        Node::Add(ops)
        | Node::Mul(ops)
        | Node::Max(ops)
        | Node::Min(ops)
        | Node::And(ops)
        | Node::Or(ops)
        | Node::Xor(ops) => Some(ops),
        _ => None,
    }
}

/// Operands gathered through nested operators of the same kind: how many
/// at most (a bound on work for huge DAGs; past it the direct operands
/// are compared).
const FLATTEN_BUDGET: usize = 1 << 16;

/// The operands of `t`'s commutative operator with nested operators of
/// the same kind opened (`(a + b) + (c + d)` → `a, b, c, d`): a tree
/// reduction and a sequential one then compare summand by summand.
fn flat_operands(terms: &Terms, t: TermId) -> Vec<TermId> {
    let kind = std::mem::discriminant(terms.node(t));
    let mut out = Vec::new();
    let mut stack = vec![t];
    while let Some(x) = stack.pop() {
        let n = terms.node(x);
        match commutative(n) {
            Some(ops) if std::mem::discriminant(n) == kind => {
                stack.extend(ops.iter().rev().copied());
            }
            _ => out.push(x),
        }
        if out.len() + stack.len() > FLATTEN_BUDGET {
            return commutative(terms.node(t))
                .map(<[TermId]>::to_vec)
                .unwrap_or_default();
        }
    }
    out
}

/// Multiset difference `a \ b`.
fn minus(a: &[TermId], b: &[TermId]) -> Vec<TermId> {
    let mut rest: std::collections::HashMap<TermId, usize> = std::collections::HashMap::new();
    for y in b {
        *rest.entry(*y).or_default() += 1;
    }
    let mut out = Vec::new();
    for x in a {
        match rest.get_mut(x) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(*x),
        }
    }
    out
}

/// The smallest sub-terms where `a` and `b` differ (`None` when equal).
pub fn first_difference(terms: &Terms, a: TermId, b: TermId) -> Option<Difference> {
    if a == b {
        return None;
    }
    let (na, nb) = (terms.node(a), terms.node(b));
    let whole = Difference {
        reference: vec![a],
        candidate: vec![b],
    };
    if std::mem::discriminant(na) != std::mem::discriminant(nb) {
        return Some(whole);
    }
    if commutative(na).is_some() && commutative(nb).is_some() {
        let (oa, ob) = (flat_operands(terms, a), flat_operands(terms, b));
        let (only_a, only_b) = (minus(&oa, &ob), minus(&ob, &oa));
        return Some(match (only_a.as_slice(), only_b.as_slice()) {
            // The same operands (a different operator kind of one family,
            // e.g. integer widths): the whole terms differ.
            ([], []) => whole,
            // One operand changed: look inside it.
            ([x], [y]) => first_difference(terms, *x, *y).unwrap_or(whole),
            _ => Difference {
                reference: only_a.into_iter().take(SHOWN).collect(),
                candidate: only_b.into_iter().take(SHOWN).collect(),
            },
        });
    }
    let (ca, cb): (Vec<TermId>, Vec<TermId>) = (na.children().collect(), nb.children().collect());
    if ca.len() != cb.len() || ca.is_empty() {
        return Some(whole);
    }
    let differing: Vec<(TermId, TermId)> = ca.into_iter().zip(cb).filter(|(x, y)| x != y).collect();
    match differing.as_slice() {
        [(x, y)] => first_difference(terms, *x, *y).or(Some(whole)),
        _ => Some(whole),
    }
}

/// The output term of one element of one kernel of a checked pair,
/// imported into `terms`, and the CTA it came from: the first CTA (of
/// those the kernel runs) that writes it.
fn element_term(
    db: &Database,
    terms: &mut Terms,
    k: KernelSlot<'_>,
    tensor: u32,
    index: u64,
) -> Option<(TermId, [u32; 3])> {
    for &cta in &ptxeq_db::kernel_ctas(db, k).ctas {
        let Some(state) = ptxeq_db::symbolic(db, CtaKey::new(db, k, cta)) else {
            continue;
        };
        if let Some(id) = state.import_element(terms, tensor, index) {
            return Some((id, cta));
        }
    }
    None
}

/// A first difference, rendered: one line per side (`x[1023] + …`,
/// `nothing in its place`), the differing sub-terms themselves, and for
/// each of them the instruction that first built it (`built in the
/// candidate by instruction 85 (ptx:160, k.cu:35:5) \`add.f32 …\``).
pub struct Described {
    pub sides: [String; 2],
    /// The differing sub-terms of the reference, then of the candidate
    /// (each cut at the width asked for; empty: nothing in their place).
    pub terms: [Vec<String>; 2],
    pub built: Vec<Built>,
}

/// The instruction that first built one differing sub-term, in one CTA of
/// one kernel.
pub struct Built {
    pub slot: Slot,
    /// The sub-term (cut at 40 characters) when its side has several.
    pub term: Option<String>,
    pub pos: crate::positions::Position,
    /// `k.cu:18 | acc += x[i];` when the source file is on disk.
    pub excerpt: Option<String>,
    pub cta: [u32; 3],
    /// The kernel's PTX file.
    pub ptx: String,
}

impl Built {
    /// The human report's lines: `built in the reference by instruction 18
    /// (ptx:58, reduce0.cu:18:9) \`ld.global.f32 …\``, then the source
    /// excerpt.
    pub fn lines(&self) -> Vec<String> {
        let what = self
            .term
            .as_ref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        let mut out = vec![format!(
            "built in the {}{what} by {}",
            self.slot.word(),
            self.pos
        )];
        if let Some(e) = &self.excerpt {
            out.push(format!("  {e}"));
        }
        out
    }

    /// The `ptxeq.check/1` form.
    pub fn json(&self) -> ptxeq_check::schema::BuiltBy {
        let text = self
            .excerpt
            .as_deref()
            .and_then(|e| e.split_once(" | ").map(|(_, t)| t.to_owned()));
        ptxeq_check::schema::BuiltBy {
            kernel: self.slot.word().to_string(),
            term: self.term.clone(),
            function: self.pos.function.clone(),
            index: self.pos.index,
            instruction: self.pos.text.clone(),
            ptx: self.ptx.clone(),
            ptx_line: self.pos.ptx_line,
            source: self.pos.source.clone(),
            source_file: self.pos.source_file.clone(),
            source_line: self.pos.source_line,
            source_text: text,
            cta: self.cta,
        }
    }
}

impl Described {
    /// The `ptxeq.check/1` form.
    pub fn json(&self) -> ptxeq_check::schema::FirstDifference {
        let [r, c] = &self.terms;
        ptxeq_check::schema::FirstDifference {
            reference: r.clone(),
            candidate: c.clone(),
            built: self.built.iter().map(Built::json).collect(),
        }
    }
}

/// The default of `--origins-max-steps`: CTAs that executed more
/// thread-instructions are not replayed to trace the instructions behind
/// a first difference (about a second of eager replay).
pub const DEFAULT_ORIGINS_MAX_STEPS: u64 = 5_000_000;

/// Which instruction first built each sub-term, per kernel and CTA: the
/// CTA's replay again with a [`ptxeq_symex::TermOrigins`] table, run once
/// per kernel and CTA a report needs (only when a failure is printed),
/// and only for a CTA that executed at most `max_steps`
/// thread-instructions (the replay keeps its whole store).
pub struct Origins {
    runs: HashMap<(Slot, [u32; 3]), Option<Replay>>,
    max_steps: u64,
    /// The CTAs not traced for the bound, with what they executed.
    skipped: Vec<(Slot, [u32; 3], u64)>,
}

/// One CTA's replay: its whole store and which instruction built each term.
type Replay = (Terms, ptxeq_symex::TermOrigins);

impl Origins {
    pub fn new(max_steps: u64) -> Self {
        Origins {
            runs: HashMap::new(),
            max_steps,
            skipped: Vec::new(),
        }
    }

    /// One line per CTA whose trace `--origins-max-steps` skipped (for
    /// the human report, after the failures).
    pub fn skipped_notes(&self) -> Vec<String> {
        self.skipped
            .iter()
            .map(|(slot, cta, steps)| {
                format!(
                    "the instructions behind the first differences were not traced in the {} CTA ({},{},{}): it executed {steps} thread-instructions, over --origins-max-steps {} (tracing replays the CTA keeping its whole store)",
                    slot.word(),
                    cta[0],
                    cta[1],
                    cta[2],
                    self.max_steps
                )
            })
            .collect()
    }

    /// The instruction that first built `t` (a term of `terms`) in `cta`
    /// of kernel `k`.
    fn of(
        &mut self,
        db: &Database,
        k: KernelSlot<'_>,
        cta: [u32; 3],
        terms: &Terms,
        t: TermId,
    ) -> Option<ptxeq_exec::InstrRef> {
        let slot = k.slot(db);
        let (max, skipped) = (self.max_steps, &mut self.skipped);
        let run = self.runs.entry((slot, cta)).or_insert_with(|| {
            let key = CtaKey::new(db, k, cta);
            let steps = ptxeq_db::unrolled(db, key)
                .as_ref()
                .map_or(0, |u| u.stats.instructions_executed);
            if steps > max {
                skipped.push((slot, cta, steps));
                return None;
            }
            ptxeq_db::term_origins(db, key)
        });
        let (store, origins) = run.as_mut()?;
        // The sub-term in the replay's own store: importing its graph
        // finds the node the replay built (hash-consing), and a node the
        // replay did not build gets a new id, which has no origin.
        let id = *store.import(&terms.export(&[t])).first()?;
        origins.of(id)
    }
}

/// The first difference of element `index` of output `tensor` between the
/// reference and candidate kernels of a pair check, rendered, with the
/// instructions that built the differing sub-terms (`origins` keeps the
/// replays for the next failure). `None` for a formula reference or when
/// either term is not at hand.
#[allow(clippy::too_many_arguments)]
pub fn describe(
    db: &Database,
    spec: SpecInput,
    kernels: &[(Slot, SourceFile)],
    names: &crate::cmd_check::InputNames,
    tensor: u32,
    index: u64,
    width: usize,
    origins: &mut Origins,
) -> Option<Described> {
    let file = |s: Slot| kernels.iter().find(|(k, _)| *k == s).map(|&(_, f)| f);
    let (rf, cf) = (file(Slot::Reference)?, file(Slot::Candidate)?);
    let mut terms = Terms::new();
    terms.set_tensor_names(names.names.clone());
    terms.set_tensor_shapes(names.shapes.clone());
    terms.set_scalar_inputs(names.first_symbol);
    let rk = KernelSlot::new(db, spec, Slot::Reference, rf);
    let ck = KernelSlot::new(db, spec, Slot::Candidate, cf);
    let a = element_term(db, &mut terms, rk, tensor, index)?;
    let b = element_term(db, &mut terms, ck, tensor, index)?;
    describe_terms(db, spec, kernels, &terms, [a, b], width, origins)
}

/// [`describe`] of two element terms already in `terms`, each with the CTA
/// that wrote it (reference, then candidate).
pub fn describe_terms(
    db: &Database,
    spec: SpecInput,
    kernels: &[(Slot, SourceFile)],
    terms: &Terms,
    [(a, rcta), (b, ccta)]: [(TermId, [u32; 3]); 2],
    width: usize,
    origins: &mut Origins,
) -> Option<Described> {
    let file = |s: Slot| kernels.iter().find(|(k, _)| *k == s).map(|&(_, f)| f);
    let (rf, cf) = (file(Slot::Reference)?, file(Slot::Candidate)?);
    let rk = KernelSlot::new(db, spec, Slot::Reference, rf);
    let ck = KernelSlot::new(db, spec, Slot::Candidate, cf);
    let d = first_difference(terms, a, b)?;
    let shown = |ids: &[TermId]| -> Vec<String> {
        ids.iter()
            .map(|&t| terms.display_limited(t, width).to_string())
            .collect()
    };
    let side = |ids: &[String], other: &[TermId]| -> String {
        if ids.is_empty() {
            return if other.len() == 1 {
                "nothing in its place".to_owned()
            } else {
                "nothing in their place".to_owned()
            };
        }
        ids.join(", ")
    };
    let mut built = Vec::new();
    for (k, cta, file, ids) in [(rk, rcta, rf, &d.reference), (ck, ccta, cf, &d.candidate)] {
        let input = ptxeq_db::cta_input(db, k).as_ref().ok().cloned();
        let res = crate::positions::Resolver::new(db, file, input.as_deref());
        let ptx = file.path(db).to_string_lossy().into_owned();
        let mut seen = Vec::new();
        for &t in ids {
            let Some(at) = origins.of(db, k, cta, terms, t) else {
                continue;
            };
            if seen.contains(&at) {
                continue;
            }
            seen.push(at);
            let pos = res.resolve(at);
            built.push(Built {
                slot: k.slot(db),
                term: (ids.len() > 1).then(|| terms.display_limited(t, 40).to_string()),
                excerpt: res.source_excerpt(&pos),
                pos,
                cta,
                ptx: ptx.clone(),
            });
        }
    }
    let (rt, ct) = (shown(&d.reference), shown(&d.candidate));
    Some(Described {
        sides: [side(&rt, &d.candidate), side(&ct, &d.reference)],
        terms: [rt, ct],
        built,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptxeq_terms::Rat;

    fn sum(t: &mut Terms, xs: &[TermId]) -> TermId {
        let mut acc = xs[0];
        for &x in &xs[1..] {
            acc = t.add(acc, x);
        }
        acc
    }

    #[test]
    fn a_sum_that_lost_a_summand_names_that_summand() {
        let mut t = Terms::new();
        let x: Vec<TermId> = (0..6).map(|i| t.input(0, i)).collect();
        let full = sum(&mut t, &x);
        let dropped = sum(&mut t, &x[..5]);
        let d = first_difference(&t, full, dropped).unwrap();
        assert_eq!(d.reference, vec![x[5]]);
        assert!(d.candidate.is_empty());
    }

    #[test]
    fn a_tree_sum_and_a_sequential_one_compare_summand_by_summand() {
        let mut t = Terms::new();
        let x: Vec<TermId> = (0..8).map(|i| t.input(0, i)).collect();
        let seq = sum(&mut t, &x);
        let l = sum(&mut t, &x[..4]);
        let r = sum(&mut t, &[x[4], x[6], x[5]]);
        let tree = t.add(l, r);
        let d = first_difference(&t, seq, tree).unwrap();
        assert_eq!((d.reference, d.candidate), (vec![x[7]], vec![]));
    }

    #[test]
    fn a_changed_operand_deep_inside_is_found() {
        let mut t = Terms::new();
        let (x0, x1, x2) = (t.input(0, 0), t.input(0, 1), t.input(0, 2));
        let e1 = t.exp(x1);
        let e2 = t.exp(x2);
        let two = t.constant(Rat::from_i64(2));
        let p = t.mul(two, e1);
        let q = t.mul(two, e2);
        let a = sum(&mut t, &[x0, p]);
        let b = sum(&mut t, &[x0, q]);
        let d = first_difference(&t, a, b).unwrap();
        assert_eq!((d.reference, d.candidate), (vec![x1], vec![x2]));
        assert_eq!(first_difference(&t, a, a), None);
    }
}
