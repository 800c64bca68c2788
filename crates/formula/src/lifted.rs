//! A lifted formula as a tree (the structured form `ptxeq lift --format
//! json` reports beside the text), and its printing in the formula
//! language.
//!
//! [`crate::lift`] builds a [`Def`] per output tensor; [`Def::text`] is the
//! spec text the lift prints and verifies, so the tree and the text never
//! disagree. Index expressions are affine ([`Index`]); a reduction's
//! ranges start at 0 and end at an affine bound; its guard is a list of
//! conditions `index >= 0` (a masked-out operand contributes the
//! operator's identity).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// One output tensor's definition: `tensor[vars…] = value;`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Def {
    pub tensor: String,
    pub vars: Vec<String>,
    pub value: Expr,
}

/// An affine integer expression `constant + Σ coef·var`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Index {
    pub constant: i64,
    /// `(var, coef)`, no zero coefficient.
    pub terms: Vec<(String, i64)>,
}

/// `var in 0..hi`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub var: String,
    pub hi: Index,
}

/// An associative operator: `+`, `*`, `max`, `min` (as a reduction:
/// `sum`, `prod`, `max`, `min`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Sum,
    Prod,
    Max,
    Min,
}

impl Op {
    /// What a guarded-out operand contributes.
    fn identity(self) -> &'static str {
        match self {
            Op::Sum => "0",
            Op::Prod => "1",
            Op::Max => "-inf",
            Op::Min => "inf",
        }
    }

    fn word(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Prod => "prod",
            Op::Max => "max",
            Op::Min => "min",
        }
    }
}

/// A formula expression.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Expr {
    /// An exact rational (`"3/4"`, `"-1"`).
    Num { value: String },
    /// `inf` or `-inf`.
    Inf { negative: bool },
    /// A scalar of the spec.
    Scalar { name: String },
    /// An element of an input tensor.
    Read { tensor: String, index: Vec<Index> },
    /// `1 / arg`.
    Recip { arg: Box<Expr> },
    /// A function of the language (`exp`, `exp2`, `log2`, `sqrt`,
    /// `rsqrt`, `tanh`, `erf`, `sin`, `cos`, `abs`, `pow`, …).
    Call { func: String, args: Vec<Expr> },
    /// `a + b + …`, `a * b * …`, `max(a, b, …)`, `min(a, b, …)`.
    Nary { op: Op, args: Vec<Expr> },
    /// `op(v0 in 0..n0, …, where(guard0 >= 0 && …, body, identity))`.
    Reduce {
        op: Op,
        ranges: Vec<Range>,
        /// Conditions `index >= 0`; empty: no `where`.
        guard: Vec<Index>,
        body: Box<Expr>,
    },
}

impl Def {
    /// The definition as formula text, `y[i0, i1] = …;`.
    pub fn text(&self) -> String {
        let mut out = format!("{}[{}] = ", self.tensor, self.vars.join(", "));
        self.value.write(&mut out);
        out.push(';');
        out
    }
}

impl Index {
    /// `(positive terms, negated negative terms)` as text.
    fn sides(&self) -> (Vec<String>, Vec<String>) {
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        for (v, c) in &self.terms {
            let t = match c.abs() {
                0 => continue,
                1 => v.clone(),
                m => format!("{m} * {v}"),
            };
            if *c > 0 {
                pos.push(t)
            } else {
                neg.push(t)
            }
        }
        (pos, neg)
    }

    /// `i1 + i4 - 1`.
    pub fn text(&self) -> String {
        let (pos, neg) = self.sides();
        let mut s = pos.join(" + ");
        for n in neg {
            if s.is_empty() {
                s = format!("-{n}");
            } else {
                let _ = write!(s, " - {n}");
            }
        }
        match (s.is_empty(), self.constant) {
            (true, c) => c.to_string(),
            (false, 0) => s,
            (false, c) if c > 0 => format!("{s} + {c}"),
            (false, c) => format!("{s} - {}", -c),
        }
    }

    /// The condition `self >= 0` as readable text: `i2 <= i0`,
    /// `i1 + i4 >= 1`, `i1 + i4 <= 16`.
    pub fn cond_text(&self) -> String {
        let (pos, neg) = self.sides();
        let (p, n) = (pos.join(" + "), neg.join(" + "));
        let c = self.constant;
        match (p.is_empty(), n.is_empty()) {
            (true, true) => format!("{c} >= 0"),
            (false, true) => format!("{p} >= {}", -c),
            (true, false) => format!("{n} <= {c}"),
            (false, false) if c == 0 => format!("{n} <= {p}"),
            (false, false) if c > 0 => format!("{n} <= {p} + {c}"),
            (false, false) => format!("{p} >= {n} + {}", -c),
        }
    }
}

impl Expr {
    /// A negative constant factor of a product (`-1 * x` prints `- x`
    /// inside a sum).
    fn negated(&self) -> Option<Expr> {
        let Expr::Nary {
            op: Op::Prod,
            args,
        } = self
        else {
            return None;
        };
        let k = args
            .iter()
            .position(|a| matches!(a, Expr::Num { value } if value.starts_with('-')))?;
        let Expr::Num { value } = &args[k] else {
            return None;
        };
        let pos = value.trim_start_matches('-').to_string();
        let mut rest: Vec<Expr> = args.clone();
        if pos == "1" {
            rest.remove(k);
        } else {
            rest[k] = Expr::Num { value: pos };
        }
        Some(match rest.len() {
            1 => rest.pop()?,
            _ => Expr::Nary {
                op: Op::Prod,
                args: rest,
            },
        })
    }

    /// Writes the expression in the formula language.
    pub fn write(&self, out: &mut String) {
        match self {
            Expr::Num { value } if value.starts_with('-') => {
                let _ = write!(out, "({value})");
            }
            Expr::Num { value } => out.push_str(value),
            Expr::Inf { negative: false } => out.push_str("inf"),
            Expr::Inf { negative: true } => out.push_str("(-inf)"),
            Expr::Scalar { name } => out.push_str(name),
            Expr::Read { tensor, index } => {
                let subs: Vec<String> = index.iter().map(Index::text).collect();
                let _ = write!(out, "{tensor}[{}]", subs.join(", "));
            }
            Expr::Recip { arg } => {
                out.push_str("1 / (");
                arg.write(out);
                out.push(')');
            }
            // `pow(a, 2)` as `a^2`.
            Expr::Call { func, args }
                if func == "pow"
                    && args.len() == 2
                    && matches!(&args[1], Expr::Num { value } if value.parse::<u32>().is_ok()) =>
            {
                match &args[0] {
                    a @ (Expr::Read { .. } | Expr::Scalar { .. } | Expr::Nary { .. }) => {
                        a.write(out)
                    }
                    a => {
                        out.push('(');
                        a.write(out);
                        out.push(')');
                    }
                }
                out.push('^');
                args[1].write(out);
            }
            Expr::Call { func, args } => {
                let _ = write!(out, "{func}(");
                for (k, a) in args.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    a.write(out);
                }
                out.push(')');
            }
            Expr::Nary { op: Op::Sum, args } => {
                out.push('(');
                for (k, a) in args.iter().enumerate() {
                    match a.negated() {
                        Some(n) if k > 0 => {
                            out.push_str(" - ");
                            n.write(out);
                        }
                        _ => {
                            if k > 0 {
                                out.push_str(" + ");
                            }
                            a.write(out);
                        }
                    }
                }
                out.push(')');
            }
            Expr::Nary { op: Op::Prod, args } => {
                // Factors first, then each reciprocal as a division.
                let (dens, nums): (Vec<&Expr>, Vec<&Expr>) =
                    args.iter().partition(|a| matches!(a, Expr::Recip { .. }));
                out.push('(');
                if nums.is_empty() {
                    out.push('1');
                }
                for (k, a) in nums.iter().enumerate() {
                    if k > 0 {
                        out.push_str(" * ");
                    }
                    a.write(out);
                }
                for d in dens {
                    if let Expr::Recip { arg } = d {
                        out.push_str(" / ");
                        arg.write_atom(out);
                    }
                }
                out.push(')');
            }
            Expr::Nary { op, args } => {
                let _ = write!(out, "{}(", op.word());
                for (k, a) in args.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    a.write(out);
                }
                out.push(')');
            }
            Expr::Reduce {
                op,
                ranges,
                guard,
                body,
            } => {
                let rs: Vec<String> = ranges
                    .iter()
                    .map(|r| format!("{} in 0..{}", r.var, r.hi.text()))
                    .collect();
                let _ = write!(out, "{}({}, ", op.word(), rs.join(", "));
                if guard.is_empty() {
                    body.write(out);
                } else {
                    let cs: Vec<String> = guard.iter().map(Index::cond_text).collect();
                    let _ = write!(out, "where({}, ", cs.join(" && "));
                    body.write(out);
                    let _ = write!(out, ", {})", op.identity());
                }
                out.push(')');
            }
        }
    }

    /// Writes the expression so that it binds tighter than `/`: sums and
    /// products are parenthesised already; a bare `a / b` is not.
    fn write_atom(&self, out: &mut String) {
        match self {
            Expr::Recip { .. } => {
                out.push('(');
                self.write(out);
                out.push(')');
            }
            _ => self.write(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(t: &str, vars: &[(&str, i64)], c: i64) -> Expr {
        Expr::Read {
            tensor: t.into(),
            index: vec![Index {
                constant: c,
                terms: vars.iter().map(|(v, k)| (v.to_string(), *k)).collect(),
            }],
        }
    }

    #[test]
    fn conditions_and_differences_read_naturally() {
        let i = |terms: &[(&str, i64)], c| Index {
            constant: c,
            terms: terms.iter().map(|(v, k)| (v.to_string(), *k)).collect(),
        };
        assert_eq!(i(&[("i0", 1), ("i2", -1)], 0).cond_text(), "i2 <= i0");
        assert_eq!(i(&[("i1", 1), ("i4", 1)], -1).cond_text(), "i1 + i4 >= 1");
        assert_eq!(i(&[("i1", -1), ("i4", -1)], 16).cond_text(), "i1 + i4 <= 16");
        assert_eq!(i(&[("i1", 2), ("i4", -1)], -3).text(), "2 * i1 - i4 - 3");
        let e = Expr::Nary {
            op: Op::Sum,
            args: vec![
                read("x", &[("i0", 1)], 0),
                Expr::Nary {
                    op: Op::Prod,
                    args: vec![
                        Expr::Num { value: "-1".into() },
                        read("m", &[("i0", 1)], 0),
                    ],
                },
            ],
        };
        let mut s = String::new();
        e.write(&mut s);
        assert_eq!(s, "(x[i0] - m[i0])");
    }

    #[test]
    fn the_tree_round_trips_through_json() {
        let d = Def {
            tensor: "y".into(),
            vars: vec!["i0".into()],
            value: Expr::Reduce {
                op: Op::Sum,
                ranges: vec![Range {
                    var: "i1".into(),
                    hi: Index {
                        constant: 1,
                        terms: vec![("i0".into(), 1)],
                    },
                }],
                guard: Vec::new(),
                body: Box::new(read("x", &[("i1", 1)], 0)),
            },
        };
        assert_eq!(d.text(), "y[i0] = sum(i1 in 0..i0 + 1, x[i1]);");
        let j = serde_json::to_value(&d).expect("serialises");
        assert_eq!(j["value"]["kind"], "reduce");
        let back: Def = serde_json::from_value(j).expect("reads back");
        assert_eq!(back, d);
    }
}
