//! Case splits over `max`/`min`/`select` (docs/semantics.md §5): when the normal
//! forms of two terms differ and the residual contains such atoms, split
//! on one of them, replace it by the operand or branch the case selects,
//! and compare again; `proved` only when every feasible case proves.
//!
//! Cases partition the input space exactly:
//! - `max(o_0, …, o_{n-1})` = `o_i` where `o_i` is the *first* maximal
//!   operand: `o_j < o_i` for `j < i` and `o_j ≤ o_i` for `j > i` (ties
//!   go to the lowest index, so the cases are disjoint and exhaustive);
//!   `min` likewise;
//! - `select(c, a, b)` = `a` where `c` holds, `b` where it does not; the
//!   comparisons `c` asserts (a comparison, a conjunction when true, a
//!   disjunction when false) become facts.
//!
//! A case is skipped as infeasible only on a contradiction: its facts,
//! over comparands identified by their normal forms (plus the order of
//! rational constants), contain a cycle of `≤`/`<` with a strict step, or
//! the facts whose sides are linear in their atoms have no real solution
//! (exact Fourier–Motzkin, `linear.rs`). Comparands the facts force equal (a `≤` cycle) let an input be
//! renamed to an equal input or constant, which is how `max(a, b) +
//! min(a, b) = a + b` closes its tie case. Splitting is lazy (only atoms
//! that occur in the current residual, innermost first) and bounded: more
//! than `max_cases` leaves is a resource limit, reported as unknown.

use hashbrown::{HashMap, HashSet};

use super::linear::{self, Feasibility, LinCon};
use super::{Atom, Case, ExpPoly, Normalizer, RESIDUAL_TERMS, RatFn};
use crate::{CmpOp, Node, Rat, TermId};

/// Outcome of [`Normalizer::split_equal`].
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SplitOutcome {
    /// Every feasible case proved; `cases` counts them.
    Proved { cases: u32 },
    /// Some feasible case does not prove: its assumptions and residual,
    /// and input values satisfying the case's linear facts (a rational
    /// point from `linear.rs`; empty when there is none) — where to look
    /// for a counterexample.
    NotProved {
        case: String,
        residual: String,
        point: Vec<(TermId, Rat)>,
    },
    /// No answer: a resource limit or a term without normal form.
    Unknown(String),
}

/// What [`Normalizer::consistent`] learns from a feasible case's facts.
#[derive(Default)]
struct Consistent {
    /// Inputs forced equal to another input or a constant.
    renames: HashMap<TermId, TermId>,
    /// A point satisfying the linear facts (empty when none was found).
    point: Vec<(Atom, Rat)>,
    /// Atoms the linear facts force equal to a linear form.
    subs: Vec<(Atom, ExpPoly)>,
}

/// `lhs < rhs` (strict) or `lhs ≤ rhs`.
#[derive(Clone, Copy, Debug)]
struct Fact {
    lhs: TermId,
    rhs: TermId,
    strict: bool,
}

/// How a comparand is identified: by normal form, or by node when it has
/// none.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum CKey {
    Nf(RatFn),
    Id(TermId),
}

enum Stop {
    TooMany,
    NotProved {
        case: String,
        residual: String,
        point: Vec<(TermId, Rat)>,
    },
    Error(String),
}

struct Search {
    roots: [TermId; 2],
    candidates: Vec<TermId>,
    max_cases: u32,
    proved: u32,
    leaves: u32,
    visits: u32,
}

impl Normalizer<'_> {
    /// Decide `a = b` by case splits (see the module docs); meant for
    /// pairs whose plain normal forms differ.
    pub fn split_equal(&mut self, a: TermId, b: TermId, max_cases: u32) -> SplitOutcome {
        let candidates = self.split_candidates(&[a, b]);
        if candidates.is_empty() {
            return SplitOutcome::Unknown("no max/min/select atom to split on".into());
        }
        let mut s = Search {
            roots: [a, b],
            candidates,
            max_cases,
            proved: 0,
            leaves: 0,
            visits: 0,
        };
        let r = self.search(&mut s, &HashMap::new(), &[], &[]);
        self.case = None;
        match r {
            Ok(()) => SplitOutcome::Proved { cases: s.proved },
            Err(Stop::TooMany) => SplitOutcome::Unknown(format!(
                "case split over max/min/select needs more than {max_cases} cases"
            )),
            Err(Stop::NotProved {
                case,
                residual,
                point,
            }) => SplitOutcome::NotProved {
                case,
                residual,
                point,
            },
            Err(Stop::Error(e)) => SplitOutcome::Unknown(e),
        }
    }

    /// Every `max`/`min`/`select` node reachable from `roots` (real
    /// valued), in id order: children before parents.
    fn split_candidates(&self, roots: &[TermId]) -> Vec<TermId> {
        let mut out: Vec<TermId> = self
            .terms
            .reachable(roots)
            .filter(|&(t, node)| match node {
                Node::Max(_) | Node::Min(_) => true,
                Node::Select(..) => !self.terms.is_bool(t) && !self.terms.is_int(t),
                _ => false,
            })
            .map(|(t, _)| t)
            .collect();
        out.sort_unstable();
        out
    }

    /// Enters the case `assign` (fresh memo for the nodes it changes).
    fn enter_case(&mut self, assign: HashMap<TermId, TermId>, roots: &[TermId]) {
        self.cases_made += 1;
        let dirty = dirty_nodes(self.terms, &assign, roots);
        self.case = Some(Case {
            id: self.cases_made,
            assign,
            dirty,
            memo: HashMap::new(),
        });
    }

    fn search(
        &mut self,
        s: &mut Search,
        splits: &HashMap<TermId, TermId>,
        facts: &[Fact],
        labels: &[String],
    ) -> Result<(), Stop> {
        s.visits += 1;
        if s.visits > s.max_cases.saturating_mul(4) {
            return Err(Stop::TooMany);
        }
        let roots = s.roots;
        // Comparands are judged under the splits alone; renamings follow.
        self.enter_case(splits.clone(), &roots);
        let Some(Consistent {
            renames,
            point,
            subs,
        }) = self.consistent(facts)
        else {
            s.leaves += 1;
            return if s.leaves > s.max_cases {
                Err(Stop::TooMany)
            } else {
                Ok(())
            };
        };
        let point = self.input_point(point, &renames);
        if !renames.is_empty() {
            let mut all = splits.clone();
            for (k, v) in renames {
                all.entry(k).or_insert(v);
            }
            self.enter_case(all, &roots);
        }
        let residual = self
            .difference(roots[0], roots[1])
            .map_err(|e| Stop::Error(e.to_string()))?;
        if residual.is_zero() || vanishes_under(&residual, &subs) {
            s.proved += 1;
            s.leaves += 1;
            return if s.leaves > s.max_cases {
                Err(Stop::TooMany)
            } else {
                Ok(())
            };
        }
        let Some(u) = self.pick(s, splits, &residual) else {
            return Err(Stop::NotProved {
                case: if labels.is_empty() {
                    "no case assumptions".into()
                } else {
                    labels.join(", ")
                },
                residual: self.describe(&residual, RESIDUAL_TERMS),
                point,
            });
        };
        for (target, new_facts, label) in self.choices(u) {
            let mut splits2 = splits.clone();
            splits2.insert(u, target);
            let mut facts2 = facts.to_vec();
            facts2.extend(new_facts);
            let mut labels2 = labels.to_vec();
            labels2.push(label);
            self.search(s, &splits2, &facts2, &labels2)?;
        }
        Ok(())
    }

    /// The first candidate (innermost) not yet split whose atom occurs in
    /// the residual (directly or inside an application's arguments).
    fn pick(
        &mut self,
        s: &Search,
        splits: &HashMap<TermId, TermId>,
        residual: &ExpPoly,
    ) -> Option<TermId> {
        let mut atoms = Vec::new();
        residual.atoms(&mut atoms);
        let mut present: HashSet<Atom> = HashSet::new();
        while let Some(a) = atoms.pop() {
            if !present.insert(a) {
                continue;
            }
            if let Atom::App(i) = a
                && let Some((_, args, _)) = self.app(i)
            {
                for r in args {
                    r.num.atoms(&mut atoms);
                    r.den.atoms(&mut atoms);
                }
            }
        }
        for &u in &s.candidates {
            if splits.contains_key(&u) {
                continue;
            }
            let Ok(r) = self.normalize(u) else { continue };
            if r.as_atom().is_some_and(|a| present.contains(&a)) {
                return Some(u);
            }
        }
        None
    }

    /// The cases of one split node: replacement, facts, description.
    fn choices(&self, u: TermId) -> Vec<(TermId, Vec<Fact>, String)> {
        let show = |t: TermId| self.terms.display_limited(t, 40).to_string();
        match self.terms.node(u) {
            Node::Max(ops) | Node::Min(ops) => {
                let is_max = matches!(self.terms.node(u), Node::Max(_));
                (0..ops.len())
                    .map(|i| {
                        let facts = (0..ops.len())
                            .filter(|&j| j != i)
                            .map(|j| {
                                let (lhs, rhs) = if is_max {
                                    (ops[j], ops[i])
                                } else {
                                    (ops[i], ops[j])
                                };
                                Fact {
                                    lhs,
                                    rhs,
                                    strict: j < i,
                                }
                            })
                            .collect();
                        let label =
                            format!("{} = {}", if is_max { "max" } else { "min" }, show(ops[i]));
                        (ops[i], facts, label)
                    })
                    .collect()
            }
            Node::Select(c, a, b) => vec![
                (*a, self.facts_of(*c, true), format!("{} holds", show(*c))),
                (*b, self.facts_of(*c, false), format!("{} fails", show(*c))),
            ],
            _ => Vec::new(),
        }
    }

    /// The order facts implied by boolean `c` having value `v` (a sound
    /// subset: none when `c` is not a comparison or a connective of them).
    fn facts_of(&self, c: TermId, v: bool) -> Vec<Fact> {
        let fact = |lhs, rhs, strict| Fact { lhs, rhs, strict };
        match (self.terms.node(c), v) {
            (Node::Cmp(CmpOp::Lt, p, q), true) | (Node::Cmp(CmpOp::Gt, q, p), true) => {
                vec![fact(*p, *q, true)]
            }
            (Node::Cmp(CmpOp::Lt, p, q), false) | (Node::Cmp(CmpOp::Gt, q, p), false) => {
                vec![fact(*q, *p, false)]
            }
            (Node::Cmp(CmpOp::Le, p, q), true) | (Node::Cmp(CmpOp::Ge, q, p), true) => {
                vec![fact(*p, *q, false)]
            }
            (Node::Cmp(CmpOp::Le, p, q), false) | (Node::Cmp(CmpOp::Ge, q, p), false) => {
                vec![fact(*q, *p, true)]
            }
            (Node::Cmp(CmpOp::Eq, p, q), true) | (Node::Cmp(CmpOp::Ne, p, q), false) => {
                vec![fact(*p, *q, false), fact(*q, *p, false)]
            }
            (Node::Not(a), _) => self.facts_of(*a, !v),
            (Node::And(ops), true) | (Node::Or(ops), false) => {
                ops.iter().flat_map(|o| self.facts_of(*o, v)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The input values of a linear-feasibility point, with renamed
    /// inputs given their representative's value.
    fn input_point(
        &self,
        point: Vec<(Atom, Rat)>,
        renames: &HashMap<TermId, TermId>,
    ) -> Vec<(TermId, Rat)> {
        let is_input = |t: TermId| matches!(self.terms.node(t), Node::Input { .. });
        let mut out: Vec<(TermId, Rat)> = point
            .into_iter()
            .filter_map(|(a, v)| match a {
                Atom::Term(t) if is_input(t) => Some((t, v)),
                _ => None,
            })
            .collect();
        for (&k, &rep) in renames {
            let v = match self.terms.as_rat(rep) {
                Some(c) => Some(c.clone()),
                None => out.iter().find(|p| p.0 == rep).map(|p| p.1.clone()),
            };
            if let Some(v) = v {
                out.push((k, v));
            }
        }
        out.sort_by_key(|p| p.0);
        out.dedup_by_key(|p| p.0);
        out
    }

    /// Whether `facts` can hold together: no strict cycle among the
    /// comparands, and the linear ones feasible over the rationals
    /// (`linear.rs`). If so, the inputs they force equal to another input
    /// or a constant, as renamings, and a point satisfying the linear
    /// facts (empty when there are none or elimination gave up).
    fn consistent(&mut self, facts: &[Fact]) -> Option<Consistent> {
        if facts.is_empty() {
            return Some(Consistent::default());
        }
        let mut keys: Vec<CKey> = Vec::new();
        let mut sources: Vec<Vec<TermId>> = Vec::new();
        let mut index: HashMap<CKey, usize> = HashMap::new();
        let mut node = |n: &mut Self, t: TermId| -> usize {
            let k = match n.normalize(t) {
                Ok(r) => CKey::Nf(r),
                Err(_) => CKey::Id(t),
            };
            let i = *index.entry(k.clone()).or_insert_with(|| {
                keys.push(k);
                sources.push(Vec::new());
                keys.len() - 1
            });
            if !sources[i].contains(&t) {
                sources[i].push(t);
            }
            i
        };
        let edges: Vec<(usize, usize, bool)> = facts
            .iter()
            .map(|f| (node(self, f.lhs), node(self, f.rhs), f.strict))
            .collect();
        let n = keys.len();
        let mut lin = Vec::new();
        for &(i, j, strict) in &edges {
            if let (CKey::Nf(l), CKey::Nf(r)) = (&keys[i], &keys[j])
                && l.is_poly()
                && r.is_poly()
                && let Some(c) = LinCon::from_poly(&r.num.sub(&l.num), strict)
            {
                lin.push(c);
            }
        }
        let point = match linear::feasible(&lin) {
            Feasibility::Infeasible => return None,
            Feasibility::Point(p) => p,
            Feasibility::Unknown => Vec::new(),
        };
        let subs = linear::implied_substitutions(&lin);
        // d[i][j]: 0 unknown, 1 i ≤ j, 2 i < j.
        let mut d = vec![vec![0u8; n]; n];
        for (i, j, strict) in edges {
            d[i][j] = d[i][j].max(if strict { 2 } else { 1 });
        }
        let consts: Vec<Option<crate::Rat>> = keys
            .iter()
            .map(|k| match k {
                CKey::Nf(r) if r.is_poly() => r.num.as_constant(),
                _ => None,
            })
            .collect();
        for i in 0..n {
            for j in 0..n {
                if let (Some(a), Some(b)) = (&consts[i], &consts[j])
                    && a < b
                {
                    d[i][j] = 2;
                }
            }
        }
        for k in 0..n {
            for i in 0..n {
                if d[i][k] == 0 {
                    continue;
                }
                for j in 0..n {
                    if d[k][j] > 0 {
                        d[i][j] = d[i][j].max(d[i][k].max(d[k][j]));
                    }
                }
            }
        }
        if (0..n).any(|i| d[i][i] == 2) {
            return None;
        }
        // Equal classes: mutual ≤.
        let mut class: Vec<usize> = (0..n).collect();
        for i in 0..n {
            for j in 0..i {
                if d[i][j] > 0 && d[j][i] > 0 {
                    class[i] = class[j];
                    break;
                }
            }
        }
        let mut renames = HashMap::new();
        for c in 0..n {
            let members: Vec<usize> = (0..n).filter(|&i| class[i] == c).collect();
            if members.len() < 2 {
                continue;
            }
            let is_input = |t: TermId| matches!(self.terms.node(t), Node::Input { .. });
            let constant = members.iter().find(|&&i| consts[i].is_some());
            let mut inputs: Vec<TermId> = members
                .iter()
                .flat_map(|&i| sources[i].iter().copied())
                .filter(|&t| is_input(t))
                .collect();
            inputs.sort_unstable();
            inputs.dedup();
            let rep = match constant {
                Some(&i) => sources[i][0],
                None => match inputs.first() {
                    Some(&t) => t,
                    None => continue,
                },
            };
            for t in inputs {
                if t != rep {
                    renames.insert(t, rep);
                }
            }
        }
        Some(Consistent {
            renames,
            point,
            subs,
        })
    }
}

/// Whether `residual` is zero after the substitutions a case's linear
/// facts imply (so zero at every point of the case).
fn vanishes_under(residual: &ExpPoly, subs: &[(Atom, ExpPoly)]) -> bool {
    if subs.is_empty() {
        return false;
    }
    let mut r = residual.clone();
    for (x, e) in subs {
        match linear::substitute(&r, *x, e) {
            Some(q) => r = q,
            None => return false,
        }
    }
    r.is_zero()
}

/// Nodes reachable from `roots` whose value changes under `assign` (an
/// assigned node, or one with such a node below it).
fn dirty_nodes(
    terms: &crate::Terms,
    assign: &HashMap<TermId, TermId>,
    roots: &[TermId],
) -> HashSet<TermId> {
    let mut state: HashMap<TermId, bool> = HashMap::new();
    let mut stack: Vec<(TermId, bool)> = roots.iter().map(|&r| (r, false)).collect();
    // Targets of renamings (constants, inputs) are clean; nodes reached
    // only through an assignment are visited as ordinary children.
    while let Some((t, expanded)) = stack.pop() {
        if state.contains_key(&t) {
            continue;
        }
        let node = terms.node(t);
        if !expanded {
            stack.push((t, true));
            for c in node.children() {
                if !state.contains_key(&c) {
                    stack.push((c, false));
                }
            }
            continue;
        }
        let dirty =
            assign.contains_key(&t) || node.children().any(|c| state.get(&c) == Some(&true));
        state.insert(t, dirty);
    }
    state
        .into_iter()
        .filter(|(_, d)| *d)
        .map(|(t, _)| t)
        .collect()
}
