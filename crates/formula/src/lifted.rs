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

/// One output tensor's definition: `tensor[vars…] = value;`, after the
/// `let` bindings its value refers to ([`Expr::Ref`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Def {
    pub tensor: String,
    pub vars: Vec<String>,
    /// Bindings in dependency order (each refers only to earlier ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lets: Vec<Let>,
    pub value: Expr,
}

/// `let name[vars…] = value;`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Let {
    pub name: String,
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
    /// An exact rational that is the rounding of a named constant
    /// ([`crate::named::name_of`]): `value` as for `num`, `text` the
    /// constant in the formula language (`1/16 * log2(e)`).
    Named { value: String, text: String },
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
    /// An element of a `let` binding.
    Ref { name: String, args: Vec<Index> },
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
    /// The definition with every named constant printed as its rational
    /// (what the lift falls back to when the named text does not verify).
    pub fn plain(&self) -> Def {
        Def {
            tensor: self.tensor.clone(),
            vars: self.vars.clone(),
            lets: self
                .lets
                .iter()
                .map(|l| Let {
                    name: l.name.clone(),
                    vars: l.vars.clone(),
                    value: l.value.plain(),
                })
                .collect(),
            value: self.value.plain(),
        }
    }

    /// Whether a named constant occurs in the definition.
    pub fn has_named(&self) -> bool {
        self.lets.iter().any(|l| l.value.has_named()) || self.value.has_named()
    }

    /// The definition as formula text, `y[i0, i1] = …;`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for l in &self.lets {
            if l.vars.is_empty() {
                let _ = write!(out, "let {} = ", l.name);
            } else {
                let _ = write!(out, "let {}[{}] = ", l.name, l.vars.join(", "));
            }
            l.value.write(&mut out);
            out.push_str(";\n");
        }
        let _ = write!(out, "{}[{}] = ", self.tensor, self.vars.join(", "));
        self.value.write(&mut out);
        out.push(';');
        out
    }

    /// The definition with every reduction that occurs more than once (up
    /// to the names of its indices) bound once by a `let` and referred to
    /// by its free indices: `let y_max1[i0] = max(k0 in 0..N, x[i0, k0]);`.
    /// `taken`: names the bindings must not shadow (the spec's tensors and
    /// scalars).
    pub fn folded(&self, taken: &[String]) -> Def {
        let mut keys: Vec<(String, usize)> = Vec::new();
        count_reductions(&self.value, &mut keys);
        let repeated: Vec<String> = keys
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(k, _)| k)
            .collect();
        if repeated.is_empty() {
            return self.clone();
        }
        let mut lets: Vec<(String, Let)> = Vec::new();
        let mut counter = 0usize;
        for key in &repeated {
            // The first occurrence, its free indices renamed i0, i1, ….
            let Some(e) = find_reduction(&self.value, key) else {
                continue;
            };
            let (canon, free) = canonical(e, "i", "k");
            let _ = free;
            let op = match &canon {
                Expr::Reduce { op, .. } => op.word(),
                _ => "let",
            };
            let name = loop {
                counter += 1;
                let n = format!("{}_{op}{counter}", self.tensor);
                if !taken.contains(&n) {
                    break n;
                }
            };
            let vars = (0..free_count(e)).map(|k| format!("i{k}")).collect();
            let value = replace_inner(&canon, &lets);
            lets.push((key.clone(), Let { name, vars, value }));
        }
        Def {
            tensor: self.tensor.clone(),
            vars: self.vars.clone(),
            value: replace(&self.value, &lets),
            lets: lets.into_iter().map(|(_, l)| l).collect(),
        }
    }
}

/// Every reduction in `e` (innermost first) by its key, with its count.
fn count_reductions(e: &Expr, out: &mut Vec<(String, usize)>) {
    for c in children(e) {
        count_reductions(c, out);
    }
    if matches!(e, Expr::Reduce { .. }) {
        let key = key_of(e);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => out.push((key, 1)),
        }
    }
}

fn children(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Num { .. }
        | Expr::Named { .. }
        | Expr::Inf { .. }
        | Expr::Scalar { .. }
        | Expr::Read { .. }
        | Expr::Ref { .. } => Vec::new(),
        Expr::Recip { arg } => vec![arg],
        Expr::Call { args, .. } | Expr::Nary { args, .. } => args.iter().collect(),
        Expr::Reduce { body, .. } => vec![body],
    }
}

/// The text of `e` with its bound indices and its free ones renamed in
/// order of appearance: equal for occurrences that differ only in names.
fn key_of(e: &Expr) -> String {
    let (c, _) = canonical(e, "f", "b");
    let mut s = String::new();
    c.write(&mut s);
    s
}

fn free_count(e: &Expr) -> usize {
    canonical(e, "f", "b").1.len()
}

fn find_reduction<'e>(e: &'e Expr, key: &str) -> Option<&'e Expr> {
    for c in children(e) {
        if let Some(f) = find_reduction(c, key) {
            return Some(f);
        }
    }
    (matches!(e, Expr::Reduce { .. }) && key_of(e) == key).then_some(e)
}

/// `e` with free indices renamed `{free}0, {free}1, …` and bound ones
/// `{bound}0, …` in order of appearance; the original free names in that
/// order.
fn canonical(e: &Expr, free: &str, bound: &str) -> (Expr, Vec<String>) {
    struct R<'a> {
        free: Vec<String>,
        bound_n: usize,
        scopes: Vec<(String, String)>,
        fp: &'a str,
        bp: &'a str,
    }
    impl R<'_> {
        fn name(&mut self, v: &str) -> String {
            if let Some((_, n)) = self.scopes.iter().rev().find(|(o, _)| o == v) {
                return n.clone();
            }
            let k = match self.free.iter().position(|f| f == v) {
                Some(k) => k,
                None => {
                    self.free.push(v.to_string());
                    self.free.len() - 1
                }
            };
            format!("{}{k}", self.fp)
        }
        fn index(&mut self, i: &Index) -> Index {
            Index {
                constant: i.constant,
                terms: i.terms.iter().map(|(v, c)| (self.name(v), *c)).collect(),
            }
        }
        fn expr(&mut self, e: &Expr) -> Expr {
            match e {
                Expr::Read { tensor, index } => Expr::Read {
                    tensor: tensor.clone(),
                    index: index.iter().map(|i| self.index(i)).collect(),
                },
                Expr::Ref { name, args } => Expr::Ref {
                    name: name.clone(),
                    args: args.iter().map(|i| self.index(i)).collect(),
                },
                Expr::Recip { arg } => Expr::Recip {
                    arg: Box::new(self.expr(arg)),
                },
                Expr::Call { func, args } => Expr::Call {
                    func: func.clone(),
                    args: args.iter().map(|a| self.expr(a)).collect(),
                },
                Expr::Nary { op, args } => Expr::Nary {
                    op: *op,
                    args: args.iter().map(|a| self.expr(a)).collect(),
                },
                Expr::Reduce {
                    op,
                    ranges,
                    guard,
                    body,
                } => {
                    let depth = self.scopes.len();
                    let mut rs = Vec::new();
                    for r in ranges {
                        // A range's bound is read outside its own index.
                        let hi = self.index(&r.hi);
                        let n = format!("{}{}", self.bp, self.bound_n);
                        self.bound_n += 1;
                        self.scopes.push((r.var.clone(), n.clone()));
                        rs.push(Range { var: n, hi });
                    }
                    let guard = guard.iter().map(|g| self.index(g)).collect();
                    let body = Box::new(self.expr(body));
                    self.scopes.truncate(depth);
                    Expr::Reduce {
                        op: *op,
                        ranges: rs,
                        guard,
                        body,
                    }
                }
                other => other.clone(),
            }
        }
    }
    let mut r = R {
        free: Vec::new(),
        bound_n: 0,
        scopes: Vec::new(),
        fp: free,
        bp: bound,
    };
    let c = r.expr(e);
    (c, r.free)
}

/// `e` with every reduction bound by one of `lets` replaced by a
/// reference to it.
fn replace(e: &Expr, lets: &[(String, Let)]) -> Expr {
    if matches!(e, Expr::Reduce { .. }) {
        let key = key_of(e);
        if let Some((_, l)) = lets.iter().find(|(k, _)| *k == key) {
            let (_, free) = canonical(e, "f", "b");
            return Expr::Ref {
                name: l.name.clone(),
                args: free
                    .into_iter()
                    .map(|v| Index {
                        constant: 0,
                        terms: vec![(v, 1)],
                    })
                    .collect(),
            };
        }
    }
    replace_inner(e, lets)
}

/// [`replace`] below `e`'s own node.
fn replace_inner(e: &Expr, lets: &[(String, Let)]) -> Expr {
    match e {
        Expr::Recip { arg } => Expr::Recip {
            arg: Box::new(replace(arg, lets)),
        },
        Expr::Call { func, args } => Expr::Call {
            func: func.clone(),
            args: args.iter().map(|a| replace(a, lets)).collect(),
        },
        Expr::Nary { op, args } => Expr::Nary {
            op: *op,
            args: args.iter().map(|a| replace(a, lets)).collect(),
        },
        Expr::Reduce {
            op,
            ranges,
            guard,
            body,
        } => Expr::Reduce {
            op: *op,
            ranges: ranges.clone(),
            guard: guard.clone(),
            body: Box::new(replace(body, lets)),
        },
        other => other.clone(),
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
            if *c > 0 { pos.push(t) } else { neg.push(t) }
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
    /// `self` with every [`Expr::Named`] replaced by its [`Expr::Num`].
    pub fn plain(&self) -> Expr {
        match self {
            Expr::Named { value, .. } => Expr::Num {
                value: value.clone(),
            },
            Expr::Recip { arg } => Expr::Recip {
                arg: Box::new(arg.plain()),
            },
            Expr::Call { func, args } => Expr::Call {
                func: func.clone(),
                args: args.iter().map(Expr::plain).collect(),
            },
            Expr::Nary { op, args } => Expr::Nary {
                op: *op,
                args: args.iter().map(Expr::plain).collect(),
            },
            Expr::Reduce {
                op,
                ranges,
                guard,
                body,
            } => Expr::Reduce {
                op: *op,
                ranges: ranges.clone(),
                guard: guard.clone(),
                body: Box::new(body.plain()),
            },
            other => other.clone(),
        }
    }

    fn has_named(&self) -> bool {
        matches!(self, Expr::Named { .. }) || children(self).into_iter().any(Expr::has_named)
    }

    /// A negative constant factor of a product (`-1 * x` prints `- x`
    /// inside a sum).
    fn negated(&self) -> Option<Expr> {
        let Expr::Nary { op: Op::Prod, args } = self else {
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
            Expr::Named { text, .. } => {
                let _ = write!(out, "({text})");
            }
            Expr::Inf { negative: false } => out.push_str("inf"),
            Expr::Inf { negative: true } => out.push_str("(-inf)"),
            Expr::Scalar { name } => out.push_str(name),
            Expr::Read { tensor, index } => {
                let subs: Vec<String> = index.iter().map(Index::text).collect();
                let _ = write!(out, "{tensor}[{}]", subs.join(", "));
            }
            Expr::Ref { name, args } if args.is_empty() => out.push_str(name),
            Expr::Ref { name, args } => {
                let subs: Vec<String> = args.iter().map(Index::text).collect();
                let _ = write!(out, "{name}[{}]", subs.join(", "));
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
        assert_eq!(
            i(&[("i1", -1), ("i4", -1)], 16).cond_text(),
            "i1 + i4 <= 16"
        );
        assert_eq!(i(&[("i1", 2), ("i4", -1)], -3).text(), "2 * i1 - i4 - 3");
        let e = Expr::Nary {
            op: Op::Sum,
            args: vec![
                read("x", &[("i0", 1)], 0),
                Expr::Nary {
                    op: Op::Prod,
                    args: vec![Expr::Num { value: "-1".into() }, read("m", &[("i0", 1)], 0)],
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
            lets: Vec::new(),
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
