//! Full formulas of failing elements for `--format json`.
//!
//! The human report (and the `reference` / `candidate` strings of a JSON
//! failure) cut a formula at `ptxeq_verdicts::FORMULA_WIDTH` characters.
//! A consumer of the JSON report gets the whole formula in `full`:
//!
//! * as text, when the full rendering of each side has at most
//!   `--json-formula-chars` characters (default [`DEFAULT_TEXT_CHARS`]);
//! * otherwise as a DAG with sharing — a rendering repeats every shared
//!   sub-term (a softmax denominator in each of its uses), so its text can
//!   grow exponentially in the size of the term, while the DAG lists each
//!   node once: `nodes[i]` is `{"op": …, "args": [ids], …}` with the ids
//!   of earlier nodes, leaves carry their `text` (`x[0,41]`, `3/4`), and
//!   `reference` / `candidate` name the roots.
//!
//! The terms are not kept after the verdicts are decided: they are
//! imported again from the kernels' symbolic states (memoised by the
//! database), and only when some failure's formula was cut.

use std::collections::HashMap;

use ptxeq_check::schema;
use ptxeq_db::{CtaKey, Database, KernelSlot, Slot, SourceFile, SpecInput};
use ptxeq_terms::{Node, TermId, Terms};
use serde_json::{Value, json};

/// Default of `--json-formula-chars`: the longest formula text a JSON
/// report carries; a longer one is carried as a DAG.
pub const DEFAULT_TEXT_CHARS: usize = 100_000;

/// Default of `--json-dag-nodes`: the most DAG nodes all the failures of
/// one JSON report carry together (a node takes about 0.8 KB of the
/// pretty-printed report, so about 40 MB). Each failure's DAG lists its
/// own nodes, so the 32 refuted rows of a 512-key attention kernel
/// (10^5 nodes each) made a report of 784 MB and 7.8 GiB of memory.
pub const DEFAULT_DAG_NODES: usize = 50_000;

/// Every output element term of the kernels of a pair, in one store.
pub struct ElementTerms {
    pub terms: Terms,
    /// `(slot, tensor, index)` → term, and the CTA it came from (the
    /// first of the kernel's CTAs that writes the element).
    elements: HashMap<(Slot, u32, u64), (TermId, [u32; 3])>,
}

impl ElementTerms {
    /// Imports the terms of the output elements `wanted` (tensor, flat
    /// index) of both kernels, each from the first CTA that writes it —
    /// only the sub-terms those elements reach, not the kernels' whole
    /// graphs (millions of nodes on a full-size GEMM, where a report
    /// needs a few elements).
    pub fn import(
        db: &Database,
        spec: SpecInput,
        kernels: &[(Slot, SourceFile)],
        names: &crate::cmd_check::InputNames,
        wanted: &[(u32, u64)],
    ) -> Self {
        let mut terms = Terms::new();
        terms.set_tensor_names(names.names.clone());
        terms.set_tensor_shapes(names.shapes.clone());
        terms.set_scalar_inputs(names.first_symbol);
        let mut elements = HashMap::new();
        for &(slot, file) in kernels {
            let k = KernelSlot::new(db, spec, slot, file);
            for &cta in &ptxeq_db::kernel_ctas(db, k).ctas {
                let Some(state) = ptxeq_db::symbolic(db, CtaKey::new(db, k, cta)) else {
                    continue;
                };
                let missing: Vec<(u32, u64)> = wanted
                    .iter()
                    .copied()
                    .filter(|&(t, i)| !elements.contains_key(&(slot, t, i)))
                    .collect();
                let ids = state.import_elements(&mut terms, &missing);
                for ((tensor, index), id) in missing.into_iter().zip(ids) {
                    if let Some(id) = id {
                        elements.insert((slot, tensor, index), (id, cta));
                    }
                }
            }
        }
        ElementTerms { terms, elements }
    }

    pub fn get(&self, slot: Slot, tensor: u32, index: u64) -> Option<TermId> {
        self.get_at(slot, tensor, index).map(|(t, _)| t)
    }

    /// [`Self::get`] with the CTA the term came from.
    pub fn get_at(&self, slot: Slot, tensor: u32, index: u64) -> Option<(TermId, [u32; 3])> {
        self.elements.get(&(slot, tensor, index)).copied()
    }

    /// How long the whole rendering of `t` is, for the note after a cut
    /// formula: `12345 characters`, or `more than N characters` past
    /// `max_chars` (counting stops there).
    pub fn length(&self, t: TermId, max_chars: usize) -> String {
        let n = self
            .terms
            .display_limited(t, max_chars + 1)
            .to_string()
            .chars()
            .count();
        if n > max_chars {
            format!("more than {max_chars} characters")
        } else {
            format!("{n} characters")
        }
    }

    /// The whole formulas of one failure (either side may be missing: a
    /// formula reference, an unwritten element): as text when both
    /// renderings fit `max_chars` characters, else as a DAG when it has at
    /// most what is left of `dag_nodes` (which it then takes), else
    /// neither, with the reason. Text is not tried for a DAG of more than
    /// `max_chars` nodes: rendering a 10^5-node attention row only to cut
    /// it cost more than the whole refutation.
    pub fn full(
        &self,
        reference: Option<TermId>,
        candidate: Option<TermId>,
        max_chars: usize,
        dag_nodes: &mut DagBudget,
    ) -> schema::FullFormulas {
        let roots: Vec<TermId> = reference.iter().chain(&candidate).copied().collect();
        let order = self.terms.post_order(&roots);
        let text = |t: Option<TermId>| -> Option<Option<String>> {
            let Some(t) = t else {
                return Some(None);
            };
            // One character past the bound tells a cut rendering apart.
            let s = self.terms.display_limited(t, max_chars + 1).to_string();
            (s.chars().count() <= max_chars).then_some(Some(s))
        };
        if order.len() <= max_chars
            && let (Some(r), Some(c)) = (text(reference), text(candidate))
        {
            return schema::FullFormulas {
                reference: r,
                candidate: c,
                dag: None,
                omitted: None,
            };
        }
        if order.len() > dag_nodes.left {
            return schema::FullFormulas {
                reference: None,
                candidate: None,
                dag: None,
                omitted: Some(format!(
                    "the DAG has {} nodes, more than the {} left of this report's \
                     --json-dag-nodes {}",
                    order.len(),
                    dag_nodes.left,
                    dag_nodes.max
                )),
            };
        }
        dag_nodes.left -= order.len();
        schema::FullFormulas {
            reference: None,
            candidate: None,
            dag: Some(dag(&self.terms, &order, reference, candidate)),
            omitted: None,
        }
    }
}

/// What is left of a report's `--json-dag-nodes`.
#[derive(Clone, Copy, Debug)]
pub struct DagBudget {
    pub max: usize,
    pub left: usize,
}

impl DagBudget {
    pub fn new(max: usize) -> DagBudget {
        DagBudget { max, left: max }
    }
}

/// The DAG of the nodes `order` (the roots' post order): each node once,
/// children first.
fn dag(
    terms: &Terms,
    order: &[TermId],
    reference: Option<TermId>,
    candidate: Option<TermId>,
) -> schema::FormulaDag {
    let ids: HashMap<TermId, u32> = order
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, i as u32))
        .collect();
    let nodes = order
        .iter()
        .map(|&t| node_json(terms, t, &|c| ids.get(&c).copied().unwrap_or(u32::MAX)))
        .collect();
    schema::FormulaDag {
        nodes,
        reference: reference.and_then(|t| ids.get(&t).copied()),
        candidate: candidate.and_then(|t| ids.get(&t).copied()),
    }
}

/// A lower-case word for an operator enum (`Log` → `log`).
fn word(d: impl std::fmt::Debug) -> String {
    let s = format!("{d:?}");
    let mut out = String::with_capacity(s.len() + 2);
    for (i, ch) in s.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// One DAG node: `op`, `args` (node ids), and what the operator needs
/// beside its operands (a width, a function name, the leaf's text).
fn node_json(terms: &Terms, t: TermId, id: &dyn Fn(TermId) -> u32) -> Value {
    let n = terms.node(t);
    let args: Vec<u32> = n.children().map(id).collect();
    let leaf = || terms.display_limited(t, 1 << 12).to_string();
    match n {
        Node::Const(_) => json!({"op": "const", "text": leaf()}),
        Node::PosInf => json!({"op": "+inf"}),
        Node::NegInf => json!({"op": "-inf"}),
        Node::Input { tensor, index } => {
            json!({"op": "input", "tensor": tensor, "index": index, "text": leaf()})
        }
        Node::BoolConst(b) => json!({"op": "bool", "value": b}),
        Node::IntConst { w, v } => json!({"op": "int-const", "width": w, "value": v}),
        Node::IntInput { tensor, index, ty } => json!({
            "op": "int-input", "tensor": tensor, "index": index,
            "width": ty.bits, "signed": ty.signed, "text": leaf(),
        }),
        Node::Add(_) => json!({"op": "add", "args": args}),
        Node::Mul(_) => json!({"op": "mul", "args": args}),
        Node::Max(_) => json!({"op": "max", "args": args}),
        Node::Min(_) => json!({"op": "min", "args": args}),
        Node::And(_) => json!({"op": "and", "args": args}),
        Node::Or(_) => json!({"op": "or", "args": args}),
        Node::Xor(_) => json!({"op": "xor", "args": args}),
        Node::Recip(_) => json!({"op": "recip", "args": args}),
        Node::Exp(_) => json!({"op": "exp", "args": args}),
        Node::Not(_) => json!({"op": "not", "args": args}),
        Node::Pow(..) => json!({"op": "pow", "args": args}),
        Node::Select(..) => json!({"op": "select", "args": args}),
        Node::Func(f, _) => json!({"op": "func", "name": word(f), "args": args}),
        Node::Cmp(c, ..) => json!({"op": "cmp", "cmp": word(c), "args": args}),
        Node::Apply(app) => json!({"op": "apply", "name": &*app.name, "args": args}),
        Node::IntAdd(w, _) => json!({"op": "int-add", "width": w, "args": args}),
        Node::IntMul(w, _) => json!({"op": "int-mul", "width": w, "args": args}),
        Node::IntOp(f, w, _) => {
            json!({"op": "int-op", "name": word(f), "width": w, "args": args})
        }
        Node::IntCmp(c, ..) => json!({"op": "int-cmp", "cmp": word(c), "args": args}),
        Node::IntToReal(signed, _) => {
            json!({"op": "int-to-real", "signed": signed, "args": args})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (Terms, TermId, TermId) {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into()]);
        let x0 = t.input(0, 0);
        let x1 = t.input(0, 1);
        let s = t.add(x0, x1);
        let e = t.exp(s);
        // `e` is shared: both sides use it.
        let a = t.mul(e, x1);
        let b = t.add(e, x0);
        (t, a, b)
    }

    #[test]
    fn a_dag_lists_each_node_once_children_first() {
        let (t, a, b) = store();
        let d = dag(&t, &t.post_order(&[a, b]), Some(a), Some(b));
        // x0, x1, x0 + x1, exp(…), and the two roots; `e` once.
        let exps = d.nodes.iter().filter(|n| n["op"] == "exp").count();
        assert_eq!(exps, 1, "{:?}", d.nodes);
        for (i, n) in d.nodes.iter().enumerate() {
            for c in n["args"].as_array().into_iter().flatten() {
                assert!(
                    c.as_u64().unwrap() < i as u64,
                    "node {i} refers forward: {n}"
                );
            }
        }
        let r = d.reference.unwrap() as usize;
        assert_eq!(d.nodes[r]["op"], "mul");
        assert!(
            d.nodes
                .iter()
                .any(|n| n["op"] == "input" && n["text"] == "x[1]")
        );
    }

    #[test]
    fn text_when_it_fits_a_dag_when_it_does_not() {
        let (t, a, b) = store();
        let et = ElementTerms {
            terms: t,
            elements: HashMap::new(),
        };
        let mut budget = DagBudget::new(DEFAULT_DAG_NODES);
        let f = et.full(Some(a), Some(b), 10_000, &mut budget);
        assert!(f.dag.is_none());
        let full = f.reference.unwrap();
        assert_eq!(full, et.terms.display_limited(a, 10_000).to_string());
        assert!(!full.ends_with('…'), "{full}");
        assert_eq!(budget.left, DEFAULT_DAG_NODES, "text takes no DAG nodes");
        let f = et.full(Some(a), Some(b), 5, &mut budget);
        assert!(f.reference.is_none() && f.candidate.is_none());
        let nodes = f.dag.expect("a DAG").nodes.len();
        assert_eq!(budget.left, DEFAULT_DAG_NODES - nodes);
    }

    /// The DAG budget is shared by a report's failures: one that would go
    /// past it gets neither text nor DAG, and the reason.
    #[test]
    fn a_dag_past_the_budget_is_omitted_with_the_reason() {
        let (t, a, b) = store();
        let et = ElementTerms {
            terms: t,
            elements: HashMap::new(),
        };
        let nodes = et.terms.post_order(&[a, b]).len();
        let mut budget = DagBudget::new(nodes);
        assert!(et.full(Some(a), Some(b), 5, &mut budget).dag.is_some());
        assert_eq!(budget.left, 0);
        let f = et.full(Some(a), Some(b), 5, &mut budget);
        assert!(f.dag.is_none() && f.reference.is_none());
        let why = f.omitted.expect("the reason");
        assert!(why.contains(&format!("the DAG has {nodes} nodes")), "{why}");
        assert!(why.contains("--json-dag-nodes"), "{why}");
    }
}
