//! Exact evaluation over the rationals, for terms without `exp` or
//! transcendental functions (an uninterpreted function symbol is
//! evaluated with its fixed polynomial interpretation): the strongest
//! confirmation of a
//! counterexample (no rounding at all). Division by zero, an infinity, a
//! transcendental node or a constant that grows past a size bound gives
//! no value (`None`), never a guess.

use hashbrown::HashMap;

use crate::{Node, Rat, TermId, Terms};

/// Largest intermediate (numerator + denominator bits) evaluated.
const MAX_BITS: u64 = 1 << 14;

#[derive(Clone, PartialEq, Debug)]
enum Val {
    Real(Rat),
    Bool(bool),
    /// An integer's bits (modulo 2^w).
    Int(u64),
}

/// Exact values of `roots` at the point `input` (inputs given as exact
/// rationals); `None` for a root that has none (see the module docs).
pub fn eval_exact(
    terms: &Terms,
    roots: &[TermId],
    input: &dyn Fn(u32, u64) -> Option<Rat>,
) -> Vec<Option<Rat>> {
    let mut memo: HashMap<TermId, Option<Val>> = HashMap::new();
    let mut stack: Vec<(TermId, bool)> = Vec::new();
    roots
        .iter()
        .map(|&r| {
            stack.push((r, false));
            while let Some((t, expanded)) = stack.pop() {
                if memo.contains_key(&t) {
                    continue;
                }
                let node = terms.node(t);
                if !expanded {
                    stack.push((t, true));
                    // A select evaluates only the branch it takes, so an
                    // undefined untaken branch does not poison it.
                    let children: Vec<TermId> = match node {
                        Node::Select(c, _, _) => vec![*c],
                        _ => node.children().collect(),
                    };
                    for c in children {
                        if !memo.contains_key(&c) {
                            stack.push((c, false));
                        }
                    }
                    continue;
                }
                if let Node::Select(c, a, b) = node {
                    let pick = match memo.get(c).cloned().flatten() {
                        Some(Val::Bool(true)) => Some(*a),
                        Some(Val::Bool(false)) => Some(*b),
                        _ => None,
                    };
                    match pick {
                        Some(p) if memo.contains_key(&p) => {
                            let v = memo.get(&p).cloned().flatten();
                            memo.insert(t, v);
                        }
                        Some(p) => {
                            stack.push((t, true));
                            stack.push((p, false));
                        }
                        None => {
                            memo.insert(t, None);
                        }
                    }
                    continue;
                }
                let v = match node {
                    // An uninterpreted function at an infinite argument:
                    // its interpretation's value there.
                    Node::Apply(app)
                        if app
                            .args
                            .iter()
                            .any(|a| matches!(terms.node(*a), Node::PosInf | Node::NegInf)) =>
                    {
                        let i = crate::uninterpreted::Interpretation::of(&app.name, app.args.len());
                        Some(Val::Real(i.at_infinity()))
                    }
                    _ => step(terms, node, &memo, input),
                };
                memo.insert(t, v);
            }
            match memo.get(&r).cloned().flatten() {
                Some(Val::Real(v)) => Some(v),
                // An integer root: its bits (modulo 2^w) as a natural number.
                Some(Val::Int(v)) => Some(Rat::from_big(num_rational::BigRational::from_integer(
                    v.into(),
                ))),
                _ => None,
            }
        })
        .collect()
}

fn step(
    terms: &Terms,
    node: &Node,
    memo: &HashMap<TermId, Option<Val>>,
    input: &dyn Fn(u32, u64) -> Option<Rat>,
) -> Option<Val> {
    let real = |c: &TermId| match memo.get(c).cloned().flatten() {
        Some(Val::Real(v)) => Some(v),
        _ => None,
    };
    let boolean = |c: &TermId| match memo.get(c).cloned().flatten() {
        Some(Val::Bool(b)) => Some(b),
        _ => None,
    };
    let bounded = |v: Rat| (v.bits() <= MAX_BITS).then_some(v);
    let int = |c: TermId| match memo.get(&c).cloned().flatten() {
        Some(Val::Int(v)) => Some(v),
        _ => None,
    };
    let boolean_id = |c: TermId| boolean(&c);
    let from_real =
        |rnd, signed, w, c: TermId| real(&c).map(|x| crate::intop::from_real(&x, rnd, signed, w));
    let inp = |k: u32, i: u64| {
        let r = input(k, i)?;
        r.is_integer().then(|| {
            let (n, _) = r.parts();
            i128::try_from(&n).ok()
        })?
    };
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
        Node::IntCmp(op, a, b) => Val::Bool(crate::intop::eval_cmp(terms, *op, *a, *b, &env)?),
        Node::IntToReal(signed, a) => {
            let w = terms.int_width(*a)?;
            let x = crate::intop::read(int(*a)?, w, *signed);
            Val::Real(match i64::try_from(x) {
                Ok(v) => Rat::from_i64(v),
                Err(_) => Rat::from_big(num_rational::BigRational::from_integer(x.into())),
            })
        }
        Node::Const(r) => Val::Real(r.clone()),
        Node::Input { tensor, index } => Val::Real(input(*tensor, *index)?),
        Node::Add(ops) => {
            let mut acc = Rat::ZERO;
            for o in ops.iter() {
                acc = bounded(acc.add(&real(o)?))?;
            }
            Val::Real(acc)
        }
        Node::Mul(ops) => {
            let mut acc = Rat::ONE;
            for o in ops.iter() {
                acc = bounded(acc.mul(&real(o)?))?;
            }
            Val::Real(acc)
        }
        Node::Recip(a) => Val::Real(real(a)?.recip()?),
        Node::Max(ops) => Val::Real(
            ops.iter()
                .map(real)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .max()?,
        ),
        Node::Min(ops) => Val::Real(
            ops.iter()
                .map(real)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .min()?,
        ),
        Node::BoolConst(b) => Val::Bool(*b),
        Node::Cmp(op, a, b) => Val::Bool(op.holds(real(a)?.cmp(&real(b)?))),
        Node::Not(a) => Val::Bool(!boolean(a)?),
        Node::And(ops) => Val::Bool(
            ops.iter()
                .map(boolean)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .all(|b| b),
        ),
        Node::Or(ops) => Val::Bool(
            ops.iter()
                .map(boolean)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .any(|b| b),
        ),
        Node::Xor(ops) => Val::Bool(
            ops.iter()
                .map(boolean)
                .collect::<Option<Vec<_>>>()?
                .into_iter()
                .fold(false, |a, b| a ^ b),
        ),
        // The fixed interpretation counterexamples use (a polynomial).
        Node::Apply(app) => {
            let args = app.args.iter().map(real).collect::<Option<Vec<_>>>()?;
            let i = crate::uninterpreted::Interpretation::of(&app.name, args.len());
            Val::Real(bounded(i.eval_rat(&args))?)
        }
        Node::PosInf
        | Node::NegInf
        | Node::Exp(_)
        | Node::Func(..)
        | Node::Pow(..)
        | Node::Select(..) => {
            return None;
        }
    })
}

/// Whether `roots` use only operations [`eval_exact`] evaluates.
pub fn is_algebraic(terms: &Terms, roots: &[TermId]) -> bool {
    !terms.reachable(roots).any(|(_, node)| {
        matches!(
            node,
            Node::Exp(_) | Node::Func(..) | Node::Pow(..) | Node::PosInf | Node::NegInf
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CmpOp;

    #[test]
    fn exact_values_and_undefined_points() {
        let mut t = Terms::new();
        let (x, y) = (t.input(0, 0), t.input(0, 1));
        let q = t.div(x, y);
        let third = t.rational(num_rational::BigRational::new(1.into(), 3.into()));
        let s = t.add(q, third);
        let c = t.cmp(CmpOp::Lt, x, y);
        let sel = t.select(c, q, x);
        let at =
            |a: i64, b: i64| move |_: u32, i: u64| Some(Rat::from_i64(if i == 0 { a } else { b }));
        let v = eval_exact(&t, &[s, sel], &at(1, 3));
        assert_eq!(v[0], Rat::new(2, 3));
        assert_eq!(v[1], Rat::new(1, 3));
        // y = 0: the quotient is undefined, but the select takes `x`.
        let v = eval_exact(&t, &[s, sel], &at(5, 0));
        assert_eq!(v, vec![None, Some(Rat::from_i64(5))]);
        assert!(is_algebraic(&t, &[s, sel]));
        let e = t.exp(x);
        assert!(!is_algebraic(&t, &[e]));
    }
}
