//! Readable infix printing of terms.
//!
//! `x[3] - max(x[0], x[1])`, `exp(a) / (b + c)`, `(x[0] < 0 ? 0 : x[0])`.
//! Products print with their coefficient and reciprocal factors as a
//! fraction, sums print `(-1)·b` operands as subtraction, in index order,
//! with regular runs folded into `Σ_{k<n} …` ([`sums`]). Elements of
//! tensors with a known shape print by coordinates (`x[0,41]`); a long
//! constant that is exactly a double prints as its shortest decimal. Shared sub-terms
//! are printed as often as they occur, so output is capped at a number of
//! characters and ends in `…` when cut. The printer is iterative (an
//! explicit task stack) so million-deep terms do not touch the call stack.

mod sums;

use std::collections::HashMap;
use std::fmt::{self, Write};

use crate::node::{Node, TermId};
use crate::rat::Rat;
use crate::store::Terms;

/// Default cap of `display` in characters.
pub const DEFAULT_DISPLAY_LIMIT: usize = 4096;

// Precedence levels: an operand is parenthesised when its level is below
// what its context requires.
const OR: u8 = 1;
const AND: u8 = 2;
const XOR: u8 = 3;
const CMP: u8 = 4;
const ADD: u8 = 5;
const MUL: u8 = 6;
const UNARY: u8 = 7;
const ATOM: u8 = 8;

/// A printable view of a term (see [`Terms::display`]).
pub struct Display<'a> {
    terms: &'a Terms,
    root: TermId,
    limit: usize,
}

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printer {
            terms: self.terms,
            out: f,
            remaining: self.limit,
            stack: Vec::new(),
            labels: None,
            leads: sums::Leads::default(),
            depth: 0,
        }
        .run(self.root, 0)
    }
}

impl Terms {
    /// Infix rendering of `t`, cut at [`DEFAULT_DISPLAY_LIMIT`] characters.
    pub fn display(&self, t: TermId) -> Display<'_> {
        self.display_limited(t, DEFAULT_DISPLAY_LIMIT)
    }

    /// Infix rendering of `t`, cut at `limit` characters (then `…`).
    pub fn display_limited(&self, t: TermId, limit: usize) -> Display<'_> {
        Display {
            terms: self,
            root: t,
            limit,
        }
    }
}

/// A fraction longer than this many characters is printed as a decimal
/// when it is exactly a double whose shortest decimal has at most
/// [`LONG_DECIMAL`] characters (f32 and f64 constants of a kernel).
const LONG_FRACTION: usize = 12;
const LONG_DECIMAL: usize = 24;

/// A constant as printed: `3`, `1/3`, and a long fraction that is exactly
/// a double as that double's shortest decimal (`0.7978845834732056`, not
/// `13383899/16777216`) — the decimal reads back as the same value.
fn constant_text(r: &Rat) -> String {
    let text = r.to_string();
    if text.len() <= LONG_FRACTION || r.is_integer() {
        return text;
    }
    let v = r.to_f64();
    if v.is_finite() && Rat::of_f64(v).as_ref() == Some(r) {
        let d = format!("{v}");
        if d.len() <= LONG_DECIMAL {
            return d;
        }
    }
    text
}

enum Task {
    /// Print a term in a context requiring precedence `ctx`.
    Term(TermId, u8),
    /// Print the magnitude of a negative term (after a ` - `).
    Magnitude(TermId, u8),
    Str(&'static str),
    Owned(String),
}

struct Printer<'a, 'f> {
    terms: &'a Terms,
    out: &'f mut dyn Write,
    remaining: usize,
    stack: Vec<Task>,
    /// Inside the body of a folded sum: the text of the inputs that vary
    /// with the enclosing sums' indices (`x[k]`).
    labels: Option<&'a HashMap<TermId, String>>,
    leads: sums::Leads,
    /// Folds this printer is inside (names the next fold's index).
    depth: usize,
}

/// A product split for printing: sign, coefficient magnitude, numerator
/// and denominator factors.
struct Fraction {
    negative: bool,
    coef: Rat,
    num: Vec<TermId>,
    den: Vec<TermId>,
}

impl Printer<'_, '_> {
    fn run(mut self, root: TermId, ctx: u8) -> fmt::Result {
        self.stack.push(Task::Term(root, ctx));
        while let Some(task) = self.stack.pop() {
            match task {
                Task::Str(s) => {
                    if !self.emit(s)? {
                        return Ok(());
                    }
                }
                Task::Owned(s) => {
                    if !self.emit(&s)? {
                        return Ok(());
                    }
                }
                Task::Term(t, ctx) => self.expand(t, ctx, false),
                Task::Magnitude(t, ctx) => self.expand(t, ctx, true),
            }
            // Every task prints at least one character, so tasks deeper in
            // the stack than the remaining budget can never be printed:
            // drop them (bounds memory on very deep terms).
            let keep = self.remaining + 1;
            if self.stack.len() > 2 * keep + 64 {
                let cut = self.stack.len() - keep;
                self.stack.drain(..cut);
            }
        }
        Ok(())
    }

    /// Writes `s` within the budget; `Ok(false)` once cut.
    fn emit(&mut self, s: &str) -> Result<bool, fmt::Error> {
        let n = s.chars().count();
        if n <= self.remaining {
            self.out.write_str(s)?;
            self.remaining -= n;
            Ok(true)
        } else {
            let head: String = s.chars().take(self.remaining).collect();
            self.out.write_str(&head)?;
            self.out.write_char('…')?;
            self.remaining = 0;
            Ok(false)
        }
    }

    /// Pushes tasks (in reverse) that print `parts` in order, wrapped in
    /// parentheses when `prec < ctx`.
    fn push_seq(&mut self, prec: u8, ctx: u8, parts: Vec<Task>) {
        let paren = prec < ctx;
        if paren {
            self.stack.push(Task::Str(")"));
        }
        self.stack.extend(parts.into_iter().rev());
        if paren {
            self.stack.push(Task::Str("("));
        }
    }

    /// `Σ_{k<count} body` (or `max_…`, `min_…`, per `op`) with the
    /// varying inputs of `body` labelled; the body is parenthesised unless
    /// it is a single atom.
    fn folded(
        &mut self,
        op: &str,
        body: TermId,
        count: usize,
        labels: &HashMap<TermId, String>,
    ) -> String {
        let k = sums::index_name(self.terms, self.depth);
        let mut text = format!("{op}_{{{k}<{count}}} ");
        // The body sees the enclosing folds' labels too (disjoint from
        // this fold's: `arrange` refuses a fold that would relabel one).
        let mut all = self.labels.cloned().unwrap_or_default();
        all.extend(labels.iter().map(|(id, l)| (*id, l.clone())));
        let _ = Printer {
            terms: self.terms,
            out: &mut text,
            remaining: self.remaining,
            stack: Vec::new(),
            labels: Some(&all),
            leads: sums::Leads::default(),
            depth: self.depth + 1,
        }
        .run(body, ATOM);
        text
    }

    fn is_negative(&self, t: TermId) -> bool {
        match self.terms.node(t) {
            Node::Const(r) => r.is_negative(),
            Node::NegInf => true,
            Node::Mul(ops) => matches!(self.terms.node(ops[0]), Node::Const(r) if r.is_negative()),
            Node::IntConst { w, v } => crate::intop::read(*v, *w, true) < 0,
            Node::IntMul(_, ops) => matches!(
                self.terms.node(ops[0]),
                Node::IntConst { w, v } if crate::intop::read(*v, *w, true) < 0
            ),
            _ => false,
        }
    }

    fn fraction(&self, ops: &[TermId], flip: bool) -> Fraction {
        let mut f = Fraction {
            negative: flip,
            coef: Rat::ONE,
            num: Vec::new(),
            den: Vec::new(),
        };
        for &o in ops {
            match self.terms.node(o) {
                Node::Const(r) => {
                    f.negative ^= r.is_negative();
                    f.coef = r.abs();
                }
                Node::Recip(x) => f.den.push(*x),
                _ => f.num.push(o),
            }
        }
        f
    }

    fn expand(&mut self, t: TermId, ctx: u8, magnitude: bool) {
        let terms = self.terms;
        match terms.node(t) {
            Node::Const(r) => {
                let r = if magnitude { r.abs() } else { r.clone() };
                let prec = if r.is_negative() {
                    UNARY
                } else if r.is_integer() {
                    ATOM
                } else {
                    MUL
                };
                self.push_seq(prec, ctx, vec![Task::Owned(constant_text(&r))]);
            }
            Node::PosInf => self.stack.push(Task::Str("inf")),
            Node::NegInf if magnitude => self.stack.push(Task::Str("inf")),
            Node::NegInf => self.push_seq(UNARY, ctx, vec![Task::Str("-inf")]),
            Node::Input { tensor, index } | Node::IntInput { tensor, index, .. } => {
                let label = match self.labels.and_then(|l| l.get(&t)) {
                    Some(l) => l.clone(),
                    None => terms.input_label(*tensor, *index),
                };
                self.stack.push(Task::Owned(label));
            }
            Node::Add(ops) => {
                let arranged = sums::arrange(
                    terms,
                    &mut self.leads,
                    sums::Kind::Add,
                    ops,
                    self.labels,
                    &sums::index_name(terms, self.depth),
                );
                let mut parts = Vec::with_capacity(2 * arranged.len());
                for (i, part) in arranged.into_iter().enumerate() {
                    match part {
                        sums::Part::One(o) => {
                            if i == 0 {
                                parts.push(Task::Term(o, ADD));
                            } else if self.is_negative(o) {
                                parts.push(Task::Str(" - "));
                                parts.push(Task::Magnitude(o, MUL));
                            } else {
                                parts.push(Task::Str(" + "));
                                parts.push(Task::Term(o, ADD));
                            }
                        }
                        sums::Part::Fold {
                            body,
                            count,
                            labels,
                        } => {
                            if i > 0 {
                                parts.push(Task::Str(" + "));
                            }
                            parts.push(Task::Owned(self.folded("Σ", body, count, &labels)));
                        }
                    }
                }
                self.push_seq(ADD, ctx, parts);
            }
            Node::Mul(ops) => {
                let f = self.fraction(ops, false);
                let mut parts = Vec::new();
                if f.negative && !magnitude {
                    parts.push(Task::Str("-"));
                }
                let (cn, mut cd) = f.coef.parts();
                let one = num_bigint::BigInt::from(1);
                let decimal = constant_text(&f.coef);
                let as_decimal = decimal.contains('.');
                if as_decimal {
                    // The coefficient prints whole as a decimal: no
                    // denominator of its own.
                    cd = one.clone();
                    parts.push(Task::Owned(decimal));
                    if !f.num.is_empty() {
                        parts.push(Task::Str(" * "));
                    }
                } else if cn != one || f.num.is_empty() {
                    parts.push(Task::Owned(cn.to_string()));
                    if !f.num.is_empty() {
                        parts.push(Task::Str(" * "));
                    }
                }
                // Factors in index order (`a[2,k] * b[k,3]`), as sums are.
                let mut num = f.num.clone();
                num.sort_by_cached_key(|&x| {
                    let l = sums::order_key(terms, &mut self.leads, x);
                    (l.is_empty(), l)
                });
                for (i, &x) in num.iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(" * "));
                    }
                    parts.push(Task::Term(x, MUL));
                }
                let den_count = f.den.len() + usize::from(cd != one);
                if den_count > 0 {
                    parts.push(Task::Str(" / "));
                    if den_count > 1 {
                        parts.push(Task::Str("("));
                    }
                    let mut first = true;
                    if cd != one {
                        parts.push(Task::Owned(cd.to_string()));
                        first = false;
                    }
                    for &x in &f.den {
                        if !first {
                            parts.push(Task::Str(" * "));
                        }
                        first = false;
                        parts.push(Task::Term(x, if den_count > 1 { MUL } else { UNARY }));
                    }
                    if den_count > 1 {
                        parts.push(Task::Str(")"));
                    }
                }
                self.push_seq(MUL, ctx, parts);
            }
            Node::Recip(a) => {
                self.push_seq(MUL, ctx, vec![Task::Str("1 / "), Task::Term(*a, UNARY)]);
            }
            Node::Exp(a) => self.push_seq(
                ATOM,
                ctx,
                vec![Task::Str("exp("), Task::Term(*a, 0), Task::Str(")")],
            ),
            Node::Func(g, a) => self.push_seq(
                ATOM,
                ctx,
                vec![
                    Task::Str(g.name()),
                    Task::Str("("),
                    Task::Term(*a, 0),
                    Task::Str(")"),
                ],
            ),
            Node::Apply(app) => {
                let mut parts = vec![Task::Owned(format!("{}(", app.name))];
                for (i, &o) in app.args.iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(", "));
                    }
                    parts.push(Task::Term(o, 0));
                }
                parts.push(Task::Str(")"));
                self.push_seq(ATOM, ctx, parts);
            }
            Node::Pow(a, b) => self.push_seq(
                ATOM,
                ctx,
                vec![
                    Task::Str("pow("),
                    Task::Term(*a, 0),
                    Task::Str(", "),
                    Task::Term(*b, 0),
                    Task::Str(")"),
                ],
            ),
            Node::Max(ops) | Node::Min(ops) => {
                let (name, kind) = if matches!(terms.node(t), Node::Max(_)) {
                    ("max", sums::Kind::Max)
                } else {
                    ("min", sums::Kind::Min)
                };
                let k = sums::index_name(terms, self.depth);
                let arranged = sums::arrange(terms, &mut self.leads, kind, ops, self.labels, &k);
                if let [
                    sums::Part::Fold {
                        body,
                        count,
                        labels,
                    },
                ] = &arranged[..]
                {
                    // One regular run: `max_{k<128} x[k]`.
                    let text = self.folded(name, *body, *count, labels);
                    self.push_seq(ATOM, ctx, vec![Task::Owned(text)]);
                    return;
                }
                let mut parts = vec![Task::Str(name), Task::Str("(")];
                for (i, part) in arranged.into_iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(", "));
                    }
                    match part {
                        sums::Part::One(o) => parts.push(Task::Term(o, 0)),
                        sums::Part::Fold {
                            body,
                            count,
                            labels,
                        } => parts.push(Task::Owned(self.folded(name, body, count, &labels))),
                    }
                }
                parts.push(Task::Str(")"));
                self.push_seq(ATOM, ctx, parts);
            }
            Node::BoolConst(b) => self
                .stack
                .push(Task::Str(if *b { "true" } else { "false" })),
            Node::Cmp(op, a, b) => self.push_seq(
                CMP,
                ctx,
                vec![
                    Task::Term(*a, ADD),
                    Task::Str(" "),
                    Task::Str(op.symbol()),
                    Task::Str(" "),
                    Task::Term(*b, ADD),
                ],
            ),
            Node::Not(a) => self.push_seq(UNARY, ctx, vec![Task::Str("!"), Task::Term(*a, UNARY)]),
            Node::And(ops) | Node::Or(ops) | Node::Xor(ops) => {
                let (prec, sep) = match terms.node(t) {
                    Node::And(_) => (AND, " && "),
                    Node::Or(_) => (OR, " || "),
                    _ => (XOR, " ^ "),
                };
                let mut parts = Vec::with_capacity(2 * ops.len());
                for (i, &o) in ops.iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(sep));
                    }
                    parts.push(Task::Term(o, prec + 1));
                }
                self.push_seq(prec, ctx, parts);
            }
            Node::Select(c, a, b) => self.push_seq(
                ATOM,
                ctx,
                vec![
                    Task::Str("("),
                    Task::Term(*c, 0),
                    Task::Str(" ? "),
                    Task::Term(*a, 0),
                    Task::Str(" : "),
                    Task::Term(*b, 0),
                    Task::Str(")"),
                ],
            ),
            Node::IntConst { w, v } => {
                // The signed reading: `-1` rather than `4294967295`.
                let x = crate::intop::read(*v, *w, true);
                let x = if magnitude { x.abs() } else { x };
                let prec = if x < 0 { UNARY } else { ATOM };
                self.push_seq(prec, ctx, vec![Task::Owned(x.to_string())]);
            }
            Node::IntAdd(_, ops) => {
                let mut parts = Vec::with_capacity(2 * ops.len());
                for (i, &o) in ops.iter().enumerate() {
                    if i == 0 {
                        parts.push(Task::Term(o, ADD));
                    } else if self.is_negative(o) {
                        parts.push(Task::Str(" - "));
                        parts.push(Task::Magnitude(o, MUL));
                    } else {
                        parts.push(Task::Str(" + "));
                        parts.push(Task::Term(o, ADD));
                    }
                }
                self.push_seq(ADD, ctx, parts);
            }
            Node::IntMul(_, ops) => {
                let mut parts = Vec::with_capacity(2 * ops.len());
                let mut rest: &[TermId] = ops;
                if let Some(&first) = ops.first()
                    && let Node::IntConst { w, v } = terms.node(first)
                {
                    let c = crate::intop::read(*v, *w, true);
                    rest = &ops[1..];
                    if c < 0 && !magnitude {
                        parts.push(Task::Str("-"));
                    }
                    if c.abs() != 1 {
                        parts.push(Task::Owned(c.abs().to_string()));
                        parts.push(Task::Str(" * "));
                    }
                }
                for (i, &x) in rest.iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(" * "));
                    }
                    parts.push(Task::Term(x, MUL));
                }
                self.push_seq(MUL, ctx, parts);
            }
            Node::IntOp(f, _, ops) => {
                let mut parts = vec![Task::Owned(f.name()), Task::Str("(")];
                for (i, &o) in ops.iter().enumerate() {
                    if i > 0 {
                        parts.push(Task::Str(", "));
                    }
                    parts.push(Task::Term(o, 0));
                }
                parts.push(Task::Str(")"));
                self.push_seq(ATOM, ctx, parts);
            }
            Node::IntCmp(op, a, b) => self.push_seq(
                CMP,
                ctx,
                vec![
                    Task::Term(*a, ADD),
                    Task::Str(" "),
                    Task::Owned(op.symbol()),
                    Task::Str(" "),
                    Task::Term(*b, ADD),
                ],
            ),
            Node::IntToReal(signed, a) => {
                // `s32(x[0] + x[1])`: the integer (mod 2^32) read as signed.
                let w = terms.int_width(*a).unwrap_or(0);
                let name = format!("{}{w}(", if *signed { 's' } else { 'u' });
                self.push_seq(
                    ATOM,
                    ctx,
                    vec![Task::Owned(name), Task::Term(*a, 0), Task::Str(")")],
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{CmpOp, Func, Terms};

    #[test]
    fn infix_rendering() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into()]);
        let x: Vec<_> = (0..3).map(|i| t.input(0, i)).collect();
        let y = t.input(1, 7);
        assert_eq!(t.display(y).to_string(), "x1[7]");
        let m = t.max_many(&x);
        let d = t.sub(x[0], m);
        let e = t.exp(d);
        let s = t.add(x[1], x[2]);
        let f = t.div(e, s);
        let text = t.display(f).to_string();
        // Operand order is canonical (by hash), so only check the pieces.
        assert!(text.starts_with("exp(") && text.contains(" / ("), "{text}");
        assert!(text.contains("max(") && text.contains(" - "), "{text}");
        let three = t.int(3);
        let half = t.rational(num_rational::BigRational::new(1.into(), 2.into()));
        let p = t.mul(three, x[0]);
        assert_eq!(t.display(p).to_string(), "3 * x[0]");
        let q = t.mul(half, x[0]);
        assert_eq!(t.display(q).to_string(), "x[0] / 2");
        let n = t.neg(x[0]);
        assert_eq!(t.display(n).to_string(), "-x[0]");
        let r = t.recip(x[0]);
        assert_eq!(t.display(r).to_string(), "1 / x[0]");
        let zero = t.int(0);
        let c = t.cmp(CmpOp::Lt, x[0], zero);
        let sel = t.select(c, zero, x[0]);
        assert_eq!(t.display(sel).to_string(), "(x[0] < 0 ? 0 : x[0])");
        let l = t.func(Func::Log, x[1]);
        assert_eq!(t.display(l).to_string(), "log(x[1])");
        let m3 = t.int(-3);
        let sum = t.add(x[0], m3);
        // Constants go after the operands that read inputs.
        assert_eq!(t.display(sum).to_string(), "x[0] - 3");
        let nc = t.not(c);
        let both = t.and(nc, c);
        assert_eq!(t.display(both).to_string(), "false");
        let inf = t.neg_inf();
        assert_eq!(t.display(inf).to_string(), "-inf");
    }

    #[test]
    fn sums_print_in_index_order_and_fold_regular_runs() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into(), "a".into(), "b".into()]);
        t.set_tensor_shapes(vec![vec![8], vec![4, 8], vec![8, 4]]);
        // A short sum: index order, no fold.
        let x: Vec<_> = (0..8).map(|i| t.input(0, i)).collect();
        let short = t.add_many(&[x[2], x[0], x[1]]);
        assert_eq!(t.display(short).to_string(), "x[0] + x[1] + x[2]");
        // A whole run folds; a gap ends it.
        let all = t.add_many(&x);
        assert_eq!(t.display(all).to_string(), "Σ_{k<8} x[k]");
        let gappy = t.add_many(&[x[0], x[1], x[2], x[3], x[5], x[7]]);
        assert_eq!(t.display(gappy).to_string(), "Σ_{k<4} x[k] + x[5] + x[7]");
        // A dot product of row 2 of a with column 3 of b, by coordinates.
        let prods: Vec<_> = (0..8)
            .map(|k| {
                let ak = t.input(1, 2 * 8 + k);
                let bk = t.input(2, k * 4 + 3);
                t.mul(ak, bk)
            })
            .collect();
        let dot = t.add_many(&prods);
        let text = t.display(dot).to_string();
        assert!(text == "Σ_{k<8} (a[2,k] * b[k,3])", "{text}");
        // Every second element, and a negated run after a constant.
        let even = t.add_many(&[x[0], x[2], x[4], x[6]]);
        assert_eq!(t.display(even).to_string(), "Σ_{k<4} x[2*k]");
        let negs: Vec<_> = (0..4).map(|i| t.neg(x[i])).collect();
        let one = t.int(1);
        let mut ops = negs.clone();
        ops.push(one);
        let neg_sum = t.add_many(&ops);
        assert_eq!(t.display(neg_sum).to_string(), "Σ_{k<4} (-x[k]) + 1");
        // Nested sums and maxima read as one, in index order.
        let lo = t.add_many(&[x[4], x[6], x[5], x[7]]);
        let hi = t.add_many(&[x[1], x[0], x[3], x[2]]);
        let nested = t.add(lo, hi);
        assert_eq!(t.display(nested).to_string(), "Σ_{k<8} x[k]");
        let m1 = t.max_many(&[x[3], x[1]]);
        let m2 = t.max_many(&[x[0], x[2]]);
        let m = t.max(m1, m2);
        assert_eq!(t.display(m).to_string(), "max_{k<4} x[k]");
    }

    /// A run whose varying input also occurs inside a shared sub-term (the
    /// row maximum of a softmax) is not folded: labels are by node, and
    /// relabelling `x[1]` would change the maximum too. The operands stay
    /// listed, in index order, each with its maximum intact.
    #[test]
    fn a_fold_never_relabels_a_shared_sub_term() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into()]);
        let x: Vec<_> = (0..40).map(|i| t.input(0, i)).collect();
        let m = t.max_many(&x);
        let e: Vec<_> = x
            .iter()
            .map(|&xi| {
                let d = t.sub(xi, m);
                t.exp(d)
            })
            .collect();
        let s = t.add_many(&e);
        let text = t.display(s).to_string();
        assert!(!text.contains('Σ'), "{text}");
        assert_eq!(text.matches("max_{k<40} x[k]").count(), 40, "{text}");
        let at = |i: usize| text.find(&format!("x[{i}])")).unwrap();
        assert!(at(1) < at(2) && at(2) < at(39), "{text}");
    }

    #[test]
    fn the_index_name_avoids_tensor_names() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["k".into(), "j".into()]);
        let ks: Vec<_> = (0..4).map(|i| t.input(0, i)).collect();
        let s = t.add_many(&ks);
        assert_eq!(t.display(s).to_string(), "Σ_{i<4} k[i]");
    }

    #[test]
    fn long_constants_that_are_doubles_print_as_decimals() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into()]);
        let x = t.input(0, 0);
        let c = t.constant(crate::Rat::of_f64(0.7978845834732056).unwrap());
        assert_eq!(t.display(c).to_string(), "0.7978845834732056");
        let p = t.mul(c, x);
        assert_eq!(t.display(p).to_string(), "0.7978845834732056 * x[0]");
        // Short fractions and non-dyadic ones stay exact fractions.
        let third = t.rational(num_rational::BigRational::new(1.into(), 3.into()));
        assert_eq!(t.display(third).to_string(), "1/3");
        let big = t.rational(num_rational::BigRational::new(
            1.into(),
            3_000_000_000_000u64.into(),
        ));
        assert_eq!(t.display(big).to_string(), "1/3000000000000");
    }

    #[test]
    fn elements_print_by_coordinates_when_the_shape_is_known() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into(), "v".into()]);
        t.set_tensor_shapes(vec![vec![2, 64], vec![64]]);
        assert_eq!(t.input_label(0, 41), "x[0,41]");
        assert_eq!(t.input_label(0, 105), "x[1,41]");
        assert_eq!(t.input_label(1, 41), "v[41]");
        // Outside the shape: the flat index, never a wrong coordinate.
        assert_eq!(t.input_label(0, 200), "x[200]");
    }

    #[test]
    fn subtraction_and_parentheses() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["a".into(), "b".into()]);
        let a = t.input(0, 0);
        let b = t.input(1, 0);
        let s = t.add(a, b);
        let two = t.int(2);
        let p = t.mul(two, s);
        assert_eq!(t.display(p).to_string(), {
            let inner = t.display(s).to_string();
            format!("2 * ({inner})")
        });
        let d = t.sub(a, b);
        let text = t.display(d).to_string();
        assert!(text == "a[0] - b[0]" || text == "-b[0] + a[0]", "{text}");
    }

    #[test]
    fn scalar_inputs_print_by_name() {
        let mut t = Terms::new();
        t.set_tensor_names(vec!["x".into(), "alpha".into()]);
        t.set_scalar_inputs(1);
        let x = t.input(0, 2);
        let alpha = t.input(1, 0);
        let p = t.mul(alpha, x);
        let text = t.display(p).to_string();
        assert!(text == "alpha * x[2]" || text == "x[2] * alpha", "{text}");
        assert_eq!(t.input_label(1, 0), "alpha");
        assert_eq!(t.input_label(0, 2), "x[2]");
        assert_eq!(t.input_label(5, 1), "x5[1]");
    }

    #[test]
    fn output_is_capped() {
        let mut t = Terms::new();
        // x = x + x·x doubles the printed size each step: 2^40 leaves.
        let mut x = t.input(0, 0);
        for _ in 0..40 {
            let sq = t.mul(x, x);
            x = t.add(x, sq);
        }
        let text = t.display_limited(x, 200).to_string();
        assert!(text.ends_with('…'));
        assert_eq!(text.chars().count(), 201);
    }

    #[test]
    fn deep_chain_prints() {
        let mut t = Terms::new();
        let mut acc = t.input(0, 0);
        for i in 1..1_000_000u64 {
            let xi = t.input(0, i);
            acc = t.add(acc, xi);
        }
        // A million nested additions read as one regular sum.
        assert_eq!(t.display(acc).to_string(), "Σ_{k<1000000} x0[k]");
        let mut acc = t.input(0, 0);
        for i in 1..1_000_000u64 {
            let xi = t.input(0, i * i);
            acc = t.add(acc, xi);
        }
        let text = t.display(acc).to_string();
        assert!(text.ends_with('…'));
        let mut e = t.input(0, 0);
        for _ in 0..1_000_000 {
            e = t.exp(e);
        }
        let text = t.display_limited(e, 100).to_string();
        assert!(text.starts_with("exp(exp(") && text.ends_with('…'));
    }
}
