//! Interval evaluation: a rigorous enclosure of a term's real value at a
//! point, used to *confirm* a sampled counterexample.
//!
//! Every operation widens its `f64` result outward by one ulp per rounding
//! (two for library functions, whose error is below one ulp), so the true
//! real value lies in the interval. Two terms whose intervals are disjoint
//! really differ at that point — the difference is not a rounding
//! artefact. Anything that leaves the finite reals (overflow, a division
//! by an interval containing zero, a logarithm of a non-positive value,
//! NaN) gives no enclosure (`None`), so no refutation rests on it. A
//! `select` whose condition the intervals cannot decide takes the hull of
//! both branches (still an enclosure).

use hashbrown::HashMap;

use crate::{CmpOp, Func, Node, TermId, Terms};

/// A closed interval `[lo, hi]` of finite reals.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// A value during evaluation: a real enclosure, a three-valued boolean,
/// or *certainly undefined* (see [`Enclosure::Undefined`]).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Val {
    Real(Interval),
    Bool(Option<bool>),
    /// Certainly undefined over the reals at this point — a logarithm or
    /// square root of a value that is certainly negative, and everything
    /// that arithmetic carries it into (on hardware: NaN). Never produced
    /// by a `max`/`min` or comparison, where IEEE NaN does not simply
    /// propagate.
    Undefined,
    /// An integer's exact bits (integers are evaluated exactly).
    Int(u64),
}

impl Interval {
    fn point(v: f64) -> Option<Interval> {
        v.is_finite().then_some(Interval { lo: v, hi: v })
    }

    /// `[lo, hi]` widened outward by `ulps` ulps; `None` unless finite.
    pub(crate) fn widened(lo: f64, hi: f64, ulps: u32) -> Option<Interval> {
        let (mut lo, mut hi) = (lo, hi);
        for _ in 0..ulps {
            lo = lo.next_down();
            hi = hi.next_up();
        }
        (lo.is_finite() && hi.is_finite() && lo <= hi).then_some(Interval { lo, hi })
    }

    /// Whether the two enclosures share no point.
    pub fn disjoint(&self, o: &Interval) -> bool {
        self.hi < o.lo || o.hi < self.lo
    }

    fn add(self, o: Interval) -> Option<Interval> {
        Interval::widened(self.lo + o.lo, self.hi + o.hi, 1)
    }

    fn mul(self, o: Interval) -> Option<Interval> {
        let p = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Interval::widened(lo, hi, 1)
    }

    fn recip(self) -> Option<Interval> {
        if self.lo <= 0.0 && self.hi >= 0.0 {
            return None;
        }
        Interval::widened(1.0 / self.hi, 1.0 / self.lo, 1)
    }

    /// A monotone increasing library function on its domain `[min, ∞)`.
    fn monotone(self, f: impl Fn(f64) -> f64, min: f64, open: bool) -> Option<Interval> {
        if self.lo < min || (open && self.lo == min) {
            return None;
        }
        Interval::widened(f(self.lo), f(self.hi), 2)
    }

    /// `sin`/`cos` (`phase` = 0 for sin, π/2 for cos): endpoints, plus ±1
    /// when a crest lies inside.
    fn periodic(self, f: impl Fn(f64) -> f64, phase: f64) -> Option<Interval> {
        use std::f64::consts::PI;
        if self.hi - self.lo > 1.0 || self.lo.abs() > 1e6 || self.hi.abs() > 1e6 {
            return Interval::widened(-1.0, 1.0, 0);
        }
        let (a, b) = (f(self.lo), f(self.hi));
        let (mut lo, mut hi) = (a.min(b), a.max(b));
        // Extrema of sin(x + phase) at x = π/2 - phase + kπ.
        let first = ((self.lo + phase - PI / 2.0) / PI).ceil() as i64 - 1;
        let last = ((self.hi + phase - PI / 2.0) / PI).floor() as i64 + 1;
        for k in first..=last {
            let x = PI / 2.0 - phase + k as f64 * PI;
            // Conservative: a crest near an endpoint counts as inside.
            if x >= self.lo - 1e-9 && x <= self.hi + 1e-9 {
                if k.rem_euclid(2) == 0 {
                    hi = 1.0;
                } else {
                    lo = -1.0;
                }
            }
        }
        Interval::widened(lo.max(-1.0), hi.min(1.0), 2).map(|i| Interval {
            lo: i.lo.max(-1.0),
            hi: i.hi.min(1.0),
        })
    }

    fn hull(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
}

/// Three-valued `a op b` on enclosures.
fn compare(op: CmpOp, a: Interval, b: Interval) -> Option<bool> {
    let lt = if a.hi < b.lo {
        Some(true)
    } else if a.lo >= b.hi {
        Some(false)
    } else {
        None
    };
    let le = if a.hi <= b.lo {
        Some(true)
    } else if a.lo > b.hi {
        Some(false)
    } else {
        None
    };
    let eq = if a.disjoint(&b) {
        Some(false)
    } else if a.lo == a.hi && b.lo == b.hi && a.lo == b.lo {
        Some(true)
    } else {
        None
    };
    match op {
        CmpOp::Lt => lt,
        CmpOp::Le => le,
        CmpOp::Gt => compare(CmpOp::Lt, b, a),
        CmpOp::Ge => compare(CmpOp::Le, b, a),
        CmpOp::Eq => eq,
        CmpOp::Ne => eq.map(|v| !v),
    }
}

/// Enclosures of the values of `roots` at the point `input` (`None` for a
/// root without one).
pub fn eval_intervals(
    terms: &Terms,
    roots: &[TermId],
    input: &dyn Fn(u32, u64) -> f64,
) -> Vec<Option<Interval>> {
    eval_intervals_with(terms, roots, input, &hashbrown::HashMap::new())
}

/// [`eval_intervals`] with some constant nodes read as other values
/// (recovered constants: the exact constant's nearest `f64`, enclosed
/// with one ulp either side).
pub fn eval_intervals_with(
    terms: &Terms,
    roots: &[TermId],
    input: &dyn Fn(u32, u64) -> f64,
    constants: &hashbrown::HashMap<TermId, f64>,
) -> Vec<Option<Interval>> {
    eval_enclosures(terms, roots, input, constants)
        .into_iter()
        .map(|e| match e {
            Enclosure::Real(i) => Some(i),
            _ => None,
        })
        .collect()
}

/// What interval evaluation says about one root.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Enclosure {
    /// A rigorous enclosure of its real value.
    Real(Interval),
    /// *Certainly undefined* at the point: its evaluation takes the
    /// logarithm or square root of a value whose enclosure lies entirely
    /// below zero, and only `+`, `·`, reciprocal, `exp`, functions, `pow`
    /// or a `select` whose condition is decided carry that to the root.
    /// Such a term is NaN on hardware whatever the rounding (IEEE
    /// arithmetic propagates NaN through all of those), so a finite value
    /// on the other side is a real difference.
    Undefined,
    /// Neither is certain.
    Unknown,
}

/// Enclosures of `roots` at the point `input` (with `constants` read as
/// in [`eval_intervals_with`]), telling a certainly undefined root apart
/// from one without an enclosure; one evaluation serves both questions.
pub fn eval_enclosures(
    terms: &Terms,
    roots: &[TermId],
    input: &dyn Fn(u32, u64) -> f64,
    constants: &hashbrown::HashMap<TermId, f64>,
) -> Vec<Enclosure> {
    eval_vals(terms, roots, input, constants)
        .into_iter()
        .map(|v| match v {
            Some(Val::Real(i)) => Enclosure::Real(i),
            Some(Val::Undefined) => Enclosure::Undefined,
            _ => Enclosure::Unknown,
        })
        .collect()
}

fn eval_vals(
    terms: &Terms,
    roots: &[TermId],
    input: &dyn Fn(u32, u64) -> f64,
    constants: &hashbrown::HashMap<TermId, f64>,
) -> Vec<Option<Val>> {
    let mut memo = EnclosureMemo::default();
    let constant = |t: TermId, _: &Node| constants.get(&t).map(|&c| Interval::widened(c, c, 1));
    roots
        .iter()
        .map(|&r| memo.val(terms, r, input, &constant))
        .collect()
}

/// Read of one constant node in place of its literal value: `Some(e)` to
/// use the enclosure `e` (`None` inside: no enclosure), `None` for the
/// literal.
pub(crate) type ConstantReading<'a> = &'a dyn Fn(TermId, &Node) -> Option<Option<Interval>>;

/// Enclosures of one store's nodes at one point, kept across calls (the
/// verdicts pass confirms many elements at one point, and their terms
/// share most sub-terms). Valid for one store, one input function and one
/// constant reading, which every call must repeat.
#[derive(Default)]
pub(crate) struct EnclosureMemo {
    memo: HashMap<TermId, Option<Val>>,
    stack: Vec<(TermId, bool)>,
}

impl EnclosureMemo {
    /// What interval evaluation says about `root` (see [`eval_enclosures`]).
    pub(crate) fn enclosure(
        &mut self,
        terms: &Terms,
        root: TermId,
        input: &dyn Fn(u32, u64) -> f64,
        constant: ConstantReading<'_>,
    ) -> Enclosure {
        match self.val(terms, root, input, constant) {
            Some(Val::Real(i)) => Enclosure::Real(i),
            Some(Val::Undefined) => Enclosure::Undefined,
            _ => Enclosure::Unknown,
        }
    }

    fn val(
        &mut self,
        terms: &Terms,
        root: TermId,
        input: &dyn Fn(u32, u64) -> f64,
        constant: ConstantReading<'_>,
    ) -> Option<Val> {
        let (memo, stack) = (&mut self.memo, &mut self.stack);
        stack.push((root, false));
        while let Some((t, expanded)) = stack.pop() {
            if memo.contains_key(&t) {
                continue;
            }
            let node = terms.node(t);
            if !expanded {
                stack.push((t, true));
                for c in node.children() {
                    if !memo.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let v = match constant(t, node) {
                Some(e) => e.map(Val::Real),
                None => step(terms, node, memo, input),
            };
            memo.insert(t, v);
        }
        memo.get(&root).copied().flatten()
    }
}

fn step(
    terms: &Terms,
    node: &Node,
    memo: &HashMap<TermId, Option<Val>>,
    input: &dyn Fn(u32, u64) -> f64,
) -> Option<Val> {
    let real = |c: &TermId| match memo.get(c).copied().flatten() {
        Some(Val::Real(i)) => Some(i),
        _ => None,
    };
    let boolean = |c: &TermId| match memo.get(c).copied().flatten() {
        Some(Val::Bool(b)) => Some(b),
        _ => None,
    };
    let undefined = |c: &TermId| matches!(memo.get(c).copied().flatten(), Some(Val::Undefined));
    // Certain undefinedness travels through arithmetic (IEEE NaN does);
    // `max`/`min`, comparisons and undecided selects stop it (below).
    if matches!(
        node,
        Node::Add(_)
            | Node::Mul(_)
            | Node::Recip(_)
            | Node::Exp(_)
            | Node::Func(..)
            | Node::Pow(..)
            | Node::Apply(_)
    ) && node.children().any(|c| undefined(&c))
    {
        return Some(Val::Undefined);
    }
    if let Node::Func(Func::Log | Func::Lg2 | Func::Sqrt, a) = node
        && real(a).is_some_and(|x| x.hi < 0.0)
    {
        return Some(Val::Undefined);
    }
    let int = |c: TermId| match memo.get(&c).copied().flatten() {
        Some(Val::Int(v)) => Some(v),
        _ => None,
    };
    let boolean_id = |c: TermId| boolean(&c).flatten();
    // A real rounded to an integer is known only when both ends of its
    // enclosure round to the same integer.
    let from_real = |rnd, signed, w, c: TermId| {
        let x = real(&c)?;
        let lo = crate::intop::from_real(&crate::normal::rat_of_f64(x.lo)?, rnd, signed, w);
        let hi = crate::intop::from_real(&crate::normal::rat_of_f64(x.hi)?, rnd, signed, w);
        (lo == hi).then_some(lo)
    };
    let inp = |k: u32, i: u64| crate::intop::f64_integer(input(k, i));
    let env = crate::intop::IntEnv {
        int: &int,
        boolean: &boolean_id,
        from_real: &from_real,
        input: &inp,
    };
    Some(match node {
        Node::IntConst { .. }
        | Node::IntInput { .. }
        | Node::IntAdd(..)
        | Node::IntMul(..)
        | Node::IntOp(..) => Val::Int(crate::intop::eval_node(terms, node, &env)?),
        Node::IntCmp(op, a, b) => {
            Val::Bool(Some(crate::intop::eval_cmp(terms, *op, *a, *b, &env)?))
        }
        Node::IntToReal(signed, a) => {
            let w = terms.int_width(*a)?;
            let x = crate::intop::read(int(*a)?, w, *signed) as f64;
            // Exact below 2^53; otherwise widened by the rounding.
            Val::Real(Interval::widened(x, x, 1)?)
        }
        Node::Const(r) => {
            let v = r.to_f64();
            Val::Real(Interval::widened(v, v, 1)?)
        }
        Node::PosInf | Node::NegInf => return None,
        Node::Input { tensor, index } => Val::Real(Interval::point(input(*tensor, *index))?),
        Node::Add(ops) => {
            let mut acc = real(&ops[0])?;
            for o in &ops[1..] {
                acc = acc.add(real(o)?)?;
            }
            Val::Real(acc)
        }
        Node::Mul(ops) => {
            let mut acc = real(&ops[0])?;
            for o in &ops[1..] {
                acc = acc.mul(real(o)?)?;
            }
            Val::Real(acc)
        }
        Node::Recip(a) => Val::Real(real(a)?.recip()?),
        Node::Exp(a) => Val::Real(real(a)?.monotone(f64::exp, f64::NEG_INFINITY, false)?),
        Node::Func(f, a) => {
            let x = real(a)?;
            Val::Real(match f {
                Func::Log => x.monotone(f64::ln, 0.0, true)?,
                Func::Lg2 => x.monotone(f64::log2, 0.0, true)?,
                Func::Sqrt => x.monotone(f64::sqrt, 0.0, false)?,
                Func::Ex2 => x.monotone(f64::exp2, f64::NEG_INFINITY, false)?,
                Func::Tanh => x.monotone(f64::tanh, f64::NEG_INFINITY, false)?,
                Func::Erf => x.monotone(libm::erf, f64::NEG_INFINITY, false)?,
                Func::Sin => x.periodic(f64::sin, 0.0)?,
                Func::Cos => x.periodic(f64::cos, std::f64::consts::FRAC_PI_2)?,
            })
        }
        // Only at a base bounded away from 0: `x^y = e^{y·ln x}` there,
        // each step rigorous; elsewhere (a negative base) no interval.
        Node::Pow(a, b) => {
            let x = real(a)?;
            let y = real(b)?;
            // An exactly integer exponent: repeated products, rigorous at
            // any base (pow(-2, 2) = 4 is real).
            if y.lo == y.hi && y.lo.fract() == 0.0 && y.lo.abs() <= 64.0 {
                let n = y.lo as i32;
                let mut acc = Interval::point(1.0)?;
                for _ in 0..n.unsigned_abs() {
                    acc = acc.mul(x)?;
                }
                return Some(Val::Real(if n < 0 { acc.recip()? } else { acc }));
            }
            if x.lo <= 0.0 {
                return None;
            }
            let l = x.monotone(f64::ln, 0.0, true)?;
            Val::Real(
                l.mul(real(b)?)?
                    .monotone(f64::exp, f64::NEG_INFINITY, false)?,
            )
        }
        // The fixed polynomial interpretation, in interval arithmetic.
        Node::Apply(app)
            if app
                .args
                .iter()
                .any(|a| matches!(terms.node(*a), Node::PosInf | Node::NegInf)) =>
        {
            let interp = crate::uninterpreted::Interpretation::of(&app.name, app.args.len());
            let v = interp.at_infinity().to_f64();
            Val::Real(Interval::widened(v, v, 1)?)
        }
        Node::Apply(app) => {
            let args = app.args.iter().map(real).collect::<Option<Vec<_>>>()?;
            let interp = crate::uninterpreted::Interpretation::of(&app.name, args.len());
            let k = |v: i64| Interval::point(v as f64);
            let mut sum = k(0)?;
            let mut acc = k(interp.constant)?;
            for (&l, &x) in interp.linear.iter().zip(&args) {
                sum = sum.add(x)?;
                acc = acc.add(k(l)?.mul(x)?)?;
            }
            acc = acc.add(k(interp.square)?.mul(sum.mul(sum)?)?)?;
            let d = 1.0 / crate::uninterpreted::DENOMINATOR as f64;
            Val::Real(acc.mul(Interval::point(d)?)?)
        }
        Node::Max(ops) | Node::Min(ops) => {
            let is_max = matches!(node, Node::Max(_));
            let mut acc = real(&ops[0])?;
            for o in &ops[1..] {
                let x = real(o)?;
                acc = if is_max {
                    Interval {
                        lo: acc.lo.max(x.lo),
                        hi: acc.hi.max(x.hi),
                    }
                } else {
                    Interval {
                        lo: acc.lo.min(x.lo),
                        hi: acc.hi.min(x.hi),
                    }
                };
            }
            Val::Real(acc)
        }
        Node::BoolConst(b) => Val::Bool(Some(*b)),
        Node::Cmp(op, a, b) => Val::Bool(compare(*op, real(a)?, real(b)?)),
        Node::Not(a) => Val::Bool(boolean(a)?.map(|v| !v)),
        Node::And(ops) | Node::Or(ops) => {
            let is_and = matches!(node, Node::And(_));
            let mut unknown = false;
            for o in ops.iter() {
                match boolean(o)? {
                    Some(v) if v != is_and => return Some(Val::Bool(Some(v))),
                    Some(_) => {}
                    None => unknown = true,
                }
            }
            Val::Bool(if unknown { None } else { Some(is_and) })
        }
        Node::Xor(ops) => {
            let mut parity = false;
            for o in ops.iter() {
                match boolean(o)? {
                    Some(v) => parity ^= v,
                    None => return Some(Val::Bool(None)),
                }
            }
            Val::Bool(Some(parity))
        }
        Node::Select(c, a, b) => {
            let cond = boolean(c)?;
            match (
                memo.get(a).copied().flatten(),
                memo.get(b).copied().flatten(),
            ) {
                (Some(Val::Real(x)), Some(Val::Real(y))) => Val::Real(match cond {
                    Some(true) => x,
                    Some(false) => y,
                    None => x.hull(y),
                }),
                (Some(Val::Bool(x)), Some(Val::Bool(y))) => Val::Bool(match cond {
                    Some(true) => x,
                    Some(false) => y,
                    None if x == y => x,
                    None => None,
                }),
                (Some(Val::Int(x)), Some(Val::Int(y))) => Val::Int(match cond {
                    Some(true) => x,
                    Some(false) => y,
                    None if x == y => x,
                    None => return None,
                }),
                (Some(Val::Undefined), _) if cond == Some(true) => Val::Undefined,
                (_, Some(Val::Undefined)) if cond == Some(false) => Val::Undefined,
                // One branch undefined: only the other may be taken.
                (Some(v), None | Some(Val::Undefined)) if cond == Some(true) => v,
                (None | Some(Val::Undefined), Some(v)) if cond == Some(false) => v,
                _ => return None,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encloses_and_separates() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let e = t.exp(x);
        let third = t.rational(num_rational::BigRational::new(1.into(), 3.into()));
        let y = t.mul(e, third);
        let v = eval_intervals(&t, &[e, y], &|_, _| 1.0);
        let (ie, iy) = (v[0].unwrap(), v[1].unwrap());
        assert!(ie.lo <= std::f64::consts::E && std::f64::consts::E <= ie.hi);
        assert!(ie.hi - ie.lo < 1e-14);
        assert!(ie.disjoint(&iy));
    }

    #[test]
    fn undefined_gives_none() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let r = t.recip(x);
        let l = t.func(Func::Log, x);
        let big = t.int(1000);
        let bx = t.mul(big, x);
        let e = t.exp(bx);
        let v = eval_intervals(&t, &[r, l, e], &|_, _| 0.0);
        assert!(v[0].is_none() && v[1].is_none(), "{v:?}");
        assert!(v[2].is_some_and(|i| i.lo <= 1.0 && 1.0 <= i.hi), "{v:?}");
        let v = eval_intervals(&t, &[e], &|_, _| 1.0);
        assert_eq!(v, vec![None], "overflow is no enclosure");
    }

    #[test]
    fn pow_at_a_positive_base_or_an_integer_exponent() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let p = t.pow(x, y);
        let at = |a: f64, b: f64| move |_: u32, i: u64| if i == 0 { a } else { b };
        let v = eval_intervals(&t, &[p], &at(2.0, 3.0))[0].expect("enclosure");
        assert!(v.lo <= 8.0 && 8.0 <= v.hi && v.hi - v.lo < 1e-12, "{v:?}");
        // A negative or zero base: an enclosure only at an integer y
        // (repeated products), none otherwise or for 0^-n.
        let v = eval_intervals(&t, &[p], &at(-2.0, 3.0))[0].expect("enclosure");
        assert!(v.lo <= -8.0 && -8.0 <= v.hi && v.hi - v.lo < 1e-12, "{v:?}");
        let v = eval_intervals(&t, &[p], &at(-2.0, -2.0))[0].expect("enclosure");
        assert!(v.lo <= 0.25 && 0.25 <= v.hi, "{v:?}");
        assert!(eval_intervals(&t, &[p], &at(0.0, 3.0))[0].is_some());
        assert_eq!(eval_intervals(&t, &[p], &at(0.0, -1.0)), vec![None]);
        assert_eq!(eval_intervals(&t, &[p], &at(-2.0, 0.5)), vec![None]);
        assert_eq!(eval_intervals(&t, &[p], &at(0.0, 0.5)), vec![None]);
    }

    #[test]
    fn sine_crest_inside() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let s = t.func(Func::Sin, x);
        let v = eval_intervals(&t, &[s], &|_, _| std::f64::consts::FRAC_PI_2)[0].unwrap();
        assert!(v.hi >= 1.0 - 1e-15 && v.lo <= 1.0);
    }
}
