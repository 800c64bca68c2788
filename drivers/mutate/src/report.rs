//! The summary: per family, how many mutants were killed, equivalent by
//! construction, survived (and whether reviewed), undecided (by reason)
//! or crashed; how many rewrites kept their proof. Printed as a table and
//! written as JSON (schema `ptxeq.mutate/1`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::run::{CaseResult, Outcome};

/// Counts of one family (or of everything).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Tally {
    pub cases: usize,
    pub mutants: usize,
    pub killed: usize,
    pub equivalent_by_construction: usize,
    pub survived_live: usize,
    /// Of `survived_live`: reviewed in the allow-list.
    pub survived_allowed: usize,
    pub undecided: usize,
    pub crash: usize,
    pub rewrites: usize,
    pub preserved: usize,
    pub false_refutations: usize,
    pub lost: usize,
    /// Undecided mutants and lost rewrites by reason.
    pub reasons: BTreeMap<String, usize>,
}

impl Tally {
    fn add(&mut self, o: &Outcome) {
        match o {
            Outcome::Killed { .. } => self.killed += 1,
            Outcome::EquivalentByConstruction { .. } => self.equivalent_by_construction += 1,
            Outcome::SurvivedLive { allowed, .. } => {
                self.survived_live += 1;
                if allowed.is_some() {
                    self.survived_allowed += 1;
                }
            }
            Outcome::Undecided { reason } => {
                self.undecided += 1;
                *self.reasons.entry(reason.clone()).or_default() += 1;
            }
            Outcome::Crash { .. } => self.crash += 1,
            Outcome::Preserved => self.preserved += 1,
            Outcome::FalseRefutation { .. } => self.false_refutations += 1,
            Outcome::Lost { reason } => {
                self.lost += 1;
                *self
                    .reasons
                    .entry(format!("rewrite: {reason}"))
                    .or_default() += 1;
            }
        }
    }

    fn merge(&mut self, o: &Tally) {
        self.cases += o.cases;
        self.mutants += o.mutants;
        self.killed += o.killed;
        self.equivalent_by_construction += o.equivalent_by_construction;
        self.survived_live += o.survived_live;
        self.survived_allowed += o.survived_allowed;
        self.undecided += o.undecided;
        self.crash += o.crash;
        self.rewrites += o.rewrites;
        self.preserved += o.preserved;
        self.false_refutations += o.false_refutations;
        self.lost += o.lost;
        for (k, v) in &o.reasons {
            *self.reasons.entry(k.clone()).or_default() += v;
        }
    }

    /// Killed out of live mutants (killed + survived-live, reviewed ones
    /// included), in percent; `None` with no live mutant.
    pub fn kill_rate(&self) -> Option<f64> {
        let live = self.killed + self.survived_live;
        (live > 0).then(|| 100.0 * self.killed as f64 / live as f64)
    }
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    pub seed: u64,
    pub total: Tally,
    pub families: BTreeMap<String, Tally>,
    /// Allow-list entries that matched no survivor in this run (stale, or
    /// not sampled).
    pub unused_allow: Vec<(String, String)>,
    pub cases: Vec<CaseResult>,
}

impl Summary {
    pub fn new(seed: u64, cases: Vec<CaseResult>, allow: &crate::allow::AllowList) -> Summary {
        let mut families: BTreeMap<String, Tally> = BTreeMap::new();
        for c in &cases {
            let t = families.entry(c.family.clone()).or_default();
            if c.skipped.is_none() {
                t.cases += 1;
            }
            for r in &c.results {
                if r.mutant.op.is_rewrite() {
                    t.rewrites += 1;
                } else {
                    t.mutants += 1;
                }
                t.add(&r.outcome);
            }
        }
        let mut total = Tally::default();
        for t in families.values() {
            total.merge(t);
        }
        let used: std::collections::BTreeSet<(&str, &str)> = cases
            .iter()
            .flat_map(|c| {
                c.results.iter().filter_map(move |r| match &r.outcome {
                    Outcome::SurvivedLive {
                        allowed: Some(_), ..
                    } => Some((c.case.as_str(), r.mutant.id.as_str())),
                    _ => None,
                })
            })
            .collect();
        let unused_allow = allow
            .keys()
            .filter(|k| !used.contains(k))
            .map(|(c, m)| (c.to_string(), m.to_string()))
            .collect();
        Summary {
            schema: "ptxeq.mutate/1",
            seed,
            total,
            families,
            unused_allow,
            cases,
        }
    }

    /// Every result the harness must fail on: (case, mutant id, what).
    pub fn failures(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for c in &self.cases {
            for r in &c.results {
                if r.outcome.is_failure() {
                    let what = match &r.outcome {
                        Outcome::SurvivedLive { in_idiom, .. } => format!(
                            "survived-live{}: {} (line {}) — add a reviewed reason to \
                             drivers/mutate/allow.toml or fix the checker",
                            if *in_idiom {
                                " inside a recognised idiom"
                            } else {
                                ""
                            },
                            r.mutant.desc,
                            r.mutant.line
                        ),
                        Outcome::Crash { what } => format!("crash: {what} ({})", r.mutant.desc),
                        Outcome::FalseRefutation { by } => format!(
                            "false refutation ({by}) of an equivalence-preserving rewrite: {}; {}",
                            r.mutant.desc, r.detail
                        ),
                        _ => String::new(),
                    };
                    out.push((c.case.clone(), r.mutant.id.clone(), what));
                }
            }
        }
        out
    }

    /// The summary table (Markdown, as in the README).
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| family | cases | mutants | killed | equivalent by construction | survived-live (allowed) | undecided | crash | kill rate | rewrites | preserved | false refutations | lost |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let row = |s: &mut String, name: &str, t: &Tally| {
            let rate = t
                .kill_rate()
                .map_or("–".to_string(), |r| format!("{r:.1} %"));
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} ({}) | {} | {} | {rate} | {} | {} | {} | {} |",
                t.cases,
                t.mutants,
                t.killed,
                t.equivalent_by_construction,
                t.survived_live,
                t.survived_allowed,
                t.undecided,
                t.crash,
                t.rewrites,
                t.preserved,
                t.false_refutations,
                t.lost
            );
        };
        for (f, t) in &self.families {
            row(&mut s, f, t);
        }
        row(&mut s, "**total**", &self.total);
        if !self.total.reasons.is_empty() {
            let _ = writeln!(s, "\nUndecided mutants and lost rewrites, by reason:\n");
            let mut rs: Vec<(&String, &usize)> = self.total.reasons.iter().collect();
            rs.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (r, n) in rs {
                let _ = writeln!(s, "- {n} × {r}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allow::AllowList;
    use crate::mutants::{Mutant, Op, Probe};
    use crate::run::MutantResult;

    fn result(op: Op, id: &str, outcome: Outcome) -> MutantResult {
        MutantResult {
            mutant: Mutant {
                id: id.into(),
                op,
                instr: 0,
                line: 1,
                desc: "d".into(),
                edits: Vec::new(),
                probe: Probe::None,
            },
            outcome,
            verdict: "-".into(),
            detail: String::new(),
            millis: 0,
        }
    }

    #[test]
    fn tallies_per_family_and_lists_failures() {
        let allow = AllowList::parse(
            "[[allow]]\ncase = \"a/x\"\nmutant = \"m3\"\nreason = \"r\"\n\
             [[allow]]\ncase = \"a/x\"\nmutant = \"stale\"\nreason = \"r\"\n",
        )
        .unwrap();
        let case = |name: &str, results| CaseResult {
            case: name.into(),
            family: name.split('/').next().unwrap().into(),
            skipped: None,
            available: 9,
            baseline_millis: 0,
            baseline_steps: 0,
            heavy: false,
            results,
        };
        let killed = Outcome::Killed { by: "race".into() };
        let cases = vec![
            case(
                "a/x",
                vec![
                    result(Op::ImmInt, "m1", killed.clone()),
                    result(
                        Op::AddSub,
                        "m2",
                        Outcome::SurvivedLive {
                            allowed: None,
                            in_idiom: false,
                        },
                    ),
                    result(
                        Op::AddSub,
                        "m3",
                        Outcome::SurvivedLive {
                            allowed: Some("r".into()),
                            in_idiom: false,
                        },
                    ),
                    result(
                        Op::FlipCmp,
                        "m4",
                        Outcome::Undecided {
                            reason: "step budget".into(),
                        },
                    ),
                    result(Op::Commute, "r1", Outcome::Preserved),
                    result(
                        Op::Reorder,
                        "r2",
                        Outcome::FalseRefutation {
                            by: "not-equivalent".into(),
                        },
                    ),
                ],
            ),
            case(
                "b/y",
                vec![
                    result(Op::ImmInt, "m1", killed),
                    result(
                        Op::MaxMin,
                        "m2",
                        Outcome::Crash {
                            what: "panic: x".into(),
                        },
                    ),
                    result(
                        Op::Reorder,
                        "r1",
                        Outcome::Lost {
                            reason: "step budget".into(),
                        },
                    ),
                ],
            ),
        ];
        let s = Summary::new(7, cases, &allow);
        let a = &s.families["a"];
        assert_eq!((a.mutants, a.rewrites), (4, 2));
        assert_eq!((a.killed, a.survived_live, a.survived_allowed), (1, 2, 1));
        assert_eq!((a.preserved, a.false_refutations, a.undecided), (1, 1, 1));
        let t = &s.total;
        assert_eq!(
            (t.cases, t.mutants, t.rewrites, t.killed, t.crash, t.lost),
            (2, 6, 3, 2, 1, 1)
        );
        assert_eq!(t.reasons["step budget"], 1);
        assert_eq!(t.reasons["rewrite: step budget"], 1);
        assert_eq!(t.kill_rate(), Some(50.0));
        let f: Vec<String> = s
            .failures()
            .into_iter()
            .map(|(c, m, _)| format!("{c} {m}"))
            .collect();
        assert_eq!(f, ["a/x m2", "a/x r2", "b/y m2"]);
        assert_eq!(s.unused_allow, [("a/x".to_string(), "stale".to_string())]);
        let table = s.table();
        assert!(
            table.contains("| a | 1 | 4 | 1 | 0 | 2 (1) | 1 | 0 | 33.3 % | 2 | 1 | 1 | 0 |"),
            "{table}"
        );
        assert!(table.contains("- 1 × step budget"), "{table}");
    }
}
