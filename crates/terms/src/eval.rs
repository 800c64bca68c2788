//! Numeric evaluation in `f64`.
//!
//! Used to look for counterexamples and to compare symbolic results with
//! concrete runs — never as evidence for "equivalent". Evaluation is
//! memoised per node over the DAG (shared sub-terms are computed once) and
//! iterative (an explicit stack), so million-deep chains need no call
//! stack. Booleans evaluate to 1.0 / 0.0; a comparison involving NaN is
//! false (only `!=` is true), as in IEEE.

use hashbrown::HashMap;

use crate::node::{CmpOp, Node, TermId};
use crate::rat::Rat;
use crate::store::Terms;
use crate::uninterpreted::Interpretation;

/// The values of one store's nodes at one point, kept across calls: the
/// verdicts pass evaluates many output elements at the same point, and
/// their terms share most of their sub-terms (a softmax row's scores and
/// sums), which are then computed once for the whole row. Dense (8 bytes
/// and a bit per node of the store, allocated on the first call): a hash
/// map over the nodes a worker's elements reach took about three times
/// that on a 512-key attention pair.
///
/// Valid only for one `Terms` and one input function: every call must pass
/// the same store and an `input` that returns the same values.
#[derive(Default)]
pub struct F64Memo {
    memo: DenseMemo,
    ints: HashMap<u32, u64>,
    stack: Vec<(TermId, bool)>,
}

impl F64Memo {
    /// Value of `t` (see [`Terms::eval_f64`]), memoised.
    pub fn eval(&mut self, terms: &Terms, t: TermId, input: &dyn Fn(u32, u64) -> f64) -> f64 {
        if self.memo.values.len() < terms.len() {
            self.memo.values.resize(terms.len(), 0.0);
            self.memo.done.resize(terms.len().div_ceil(64), 0);
        }
        terms.eval_into(t, input, &mut self.memo, &mut self.ints, &mut self.stack);
        self.memo.get(&t.0).copied().unwrap_or(f64::NAN)
    }
}

/// Node values as [`Terms::eval_into`] keeps them.
trait Memo {
    fn get(&self, t: &u32) -> Option<&f64>;
    fn insert(&mut self, t: u32, v: f64);
    fn contains_key(&self, t: &u32) -> bool {
        self.get(t).is_some()
    }
}

impl Memo for HashMap<u32, f64> {
    fn get(&self, t: &u32) -> Option<&f64> {
        HashMap::get(self, t)
    }
    fn insert(&mut self, t: u32, v: f64) {
        HashMap::insert(self, t, v);
    }
}

/// One value per node of a store, and which are computed.
#[derive(Default)]
struct DenseMemo {
    values: Vec<f64>,
    done: Vec<u64>,
}

impl Memo for DenseMemo {
    fn get(&self, t: &u32) -> Option<&f64> {
        let i = *t as usize;
        let set = self
            .done
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1);
        if set { self.values.get(i) } else { None }
    }
    fn insert(&mut self, t: u32, v: f64) {
        let i = t as usize;
        if i >= self.values.len() {
            self.values.resize(i + 1, 0.0);
            self.done.resize((i + 1).div_ceil(64), 0);
        }
        self.values[i] = v;
        self.done[i / 64] |= 1 << (i % 64);
    }
}

impl Terms {
    /// Value of `t` with input symbol `x[i]` of tensor `k` = `input(k, i)`.
    pub fn eval_f64(&self, t: TermId, input: &dyn Fn(u32, u64) -> f64) -> f64 {
        self.eval_many_f64(&[t], input)[0]
    }

    /// Values of several roots, sharing one memo.
    pub fn eval_many_f64(&self, roots: &[TermId], input: &dyn Fn(u32, u64) -> f64) -> Vec<f64> {
        let mut memo: HashMap<u32, f64> = HashMap::new();
        let mut ints: HashMap<u32, u64> = HashMap::new();
        let mut stack: Vec<(TermId, bool)> = Vec::new();
        roots
            .iter()
            .map(|&r| {
                self.eval_into(r, input, &mut memo, &mut ints, &mut stack);
                memo.get(&r.0).copied().unwrap_or(f64::NAN)
            })
            .collect()
    }

    fn eval_into(
        &self,
        root: TermId,
        input: &dyn Fn(u32, u64) -> f64,
        memo: &mut impl Memo,
        ints: &mut HashMap<u32, u64>,
        stack: &mut Vec<(TermId, bool)>,
    ) {
        stack.push((root, false));
        while let Some((t, expanded)) = stack.pop() {
            if memo.contains_key(&t.0) {
                continue;
            }
            let node = self.node(t);
            if !expanded {
                stack.push((t, true));
                for c in node.children() {
                    if !memo.contains_key(&c.0) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let v = |c: &TermId| memo.get(&c.0).copied().unwrap_or(f64::NAN);
            let b = |x: f64| if x != 0.0 { 1.0 } else { 0.0 };
            if self.is_int(t) || matches!(node, Node::IntCmp(..) | Node::IntToReal(..)) {
                // Integers are evaluated exactly (modulo 2^w); `memo` gets
                // the unsigned value (NaN where undefined) as a marker.
                let (iv, val) = {
                    let int = |c: TermId| ints.get(&c.0).copied();
                    let boolean = |c: TermId| memo.get(&c.0).map(|x| *x != 0.0);
                    let from_real = |rnd, signed, w, c: TermId| {
                        let x = memo.get(&c.0).copied()?;
                        let r = Rat::of_f64(x)?;
                        Some(crate::intop::from_real(&r, rnd, signed, w))
                    };
                    let inp = |k: u32, i: u64| crate::intop::f64_integer(input(k, i));
                    let env = crate::intop::IntEnv {
                        int: &int,
                        boolean: &boolean,
                        from_real: &from_real,
                        input: &inp,
                    };
                    match node {
                        Node::IntCmp(op, a, c) => (
                            None,
                            crate::intop::eval_cmp(self, *op, *a, *c, &env)
                                .map_or(f64::NAN, |k| f64::from(u8::from(k))),
                        ),
                        Node::IntToReal(signed, a) => (
                            None,
                            match (int(*a), self.int_width(*a)) {
                                (Some(x), Some(w)) => crate::intop::read(x, w, *signed) as f64,
                                _ => f64::NAN,
                            },
                        ),
                        _ => {
                            let x = crate::intop::eval_node(self, node, &env);
                            (x, x.map_or(f64::NAN, |x| x as f64))
                        }
                    }
                };
                if let Some(x) = iv {
                    ints.insert(t.0, x);
                }
                memo.insert(t.0, val);
                continue;
            }
            let value = match node {
                Node::Const(r) => r.to_f64(),
                Node::PosInf => f64::INFINITY,
                Node::NegInf => f64::NEG_INFINITY,
                Node::Input { tensor, index } => input(*tensor, *index),
                Node::Add(ops) => ops.iter().map(v).sum(),
                Node::Mul(ops) => ops.iter().map(v).product(),
                Node::Recip(a) => 1.0 / v(a),
                Node::Exp(a) => v(a).exp(),
                Node::Func(f, a) => f.eval_f64(v(a)),
                // C's pow (Rust's `powf`): real at a negative base with an
                // integer exponent, NaN with a non-integer one.
                Node::Pow(a, e) => v(a).powf(v(e)),
                Node::Apply(app) => {
                    let args: Vec<f64> = app.args.iter().map(v).collect();
                    Interpretation::of(&app.name, args.len()).eval_f64(&args)
                }
                Node::Max(ops) => extremum(ops.iter().map(v), f64::max),
                Node::Min(ops) => extremum(ops.iter().map(v), f64::min),
                Node::BoolConst(x) => b(f64::from(u8::from(*x))),
                Node::Cmp(op, x, y) => {
                    let (x, y) = (v(x), v(y));
                    let r = match op {
                        CmpOp::Eq => x == y,
                        CmpOp::Ne => x != y,
                        CmpOp::Lt => x < y,
                        CmpOp::Le => x <= y,
                        CmpOp::Gt => x > y,
                        CmpOp::Ge => x >= y,
                    };
                    f64::from(u8::from(r))
                }
                Node::Not(a) => 1.0 - b(v(a)),
                Node::And(ops) => f64::from(u8::from(ops.iter().all(|o| v(o) != 0.0))),
                Node::Or(ops) => f64::from(u8::from(ops.iter().any(|o| v(o) != 0.0))),
                Node::Xor(ops) => f64::from(u8::from(
                    ops.iter().filter(|o| v(o) != 0.0).count() % 2 == 1,
                )),
                Node::Select(c, x, y) => {
                    if v(c) != 0.0 {
                        v(x)
                    } else {
                        v(y)
                    }
                }
                // Handled above.
                Node::IntConst { .. }
                | Node::IntInput { .. }
                | Node::IntAdd(..)
                | Node::IntMul(..)
                | Node::IntOp(..)
                | Node::IntCmp(..)
                | Node::IntToReal(..) => f64::NAN,
            };
            memo.insert(t.0, value);
        }
    }
}

/// `max`/`min` that propagates NaN (`f64::max` would drop it and hide an
/// undefined operand).
fn extremum(mut vals: impl Iterator<Item = f64>, pick: fn(f64, f64) -> f64) -> f64 {
    let Some(mut acc) = vals.next() else {
        return f64::NAN;
    };
    for x in vals {
        if x.is_nan() || acc.is_nan() {
            return f64::NAN;
        }
        acc = pick(acc, x);
    }
    acc
}

#[cfg(test)]
mod tests {
    use crate::{CmpOp, Func, Terms};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn softmax_element() {
        // y0 = exp(x0 - m) / (exp(x0 - m) + exp(x1 - m) + exp(x2 - m)),
        // m = max(x0, x1, x2); at x = (1, 2, 3):
        // y0 = e^-2 / (e^-2 + e^-1 + 1) = 0.09003057317038046.
        let mut t = Terms::new();
        let x: Vec<_> = (0..3).map(|i| t.input(0, i)).collect();
        let m = t.max_many(&x);
        let e: Vec<_> = x
            .iter()
            .map(|&xi| {
                let d = t.sub(xi, m);
                t.exp(d)
            })
            .collect();
        let s = t.add_many(&e);
        let y0 = t.div(e[0], s);
        let y2 = t.div(e[2], s);
        let vals = t.eval_many_f64(&[y0, y2], &|_, i| (i + 1) as f64);
        assert!(close(vals[0], 0.090_030_573_170_380_46), "{}", vals[0]);
        assert!(close(vals[1], 0.665_240_955_774_821_5), "{}", vals[1]);
    }

    #[test]
    fn expression_with_functions_and_select() {
        // f = select(x < y, sqrt(y) * 2, tanh(x)) + 1/4 at (x, y) = (1, 9):
        // 1 < 9 → sqrt(9)·2 + 0.25 = 6.25; at (10, 9): tanh(10) + 0.25.
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(1, 0);
        let c = t.cmp(CmpOp::Lt, x, y);
        let two = t.int(2);
        let sy = t.sqrt(y);
        let a = t.mul(sy, two);
        let b = t.func(Func::Tanh, x);
        let s = t.select(c, a, b);
        let q = t.from_f32_bits(0x3E80_0000).unwrap(); // 0.25
        let f = t.add(s, q);
        assert_eq!(t.eval_f64(f, &|k, _| if k == 0 { 1.0 } else { 9.0 }), 6.25);
        let v = t.eval_f64(f, &|k, _| if k == 0 { 10.0 } else { 9.0 });
        assert!(close(v, 10f64.tanh() + 0.25));
        // Booleans are 0/1.
        assert_eq!(t.eval_f64(c, &|k, _| if k == 0 { 1.0 } else { 9.0 }), 1.0);
        let nc = t.not(c);
        assert_eq!(t.eval_f64(nc, &|k, _| if k == 0 { 1.0 } else { 9.0 }), 0.0);
    }

    /// The dense memo kept across calls gives what a fresh evaluation
    /// gives, for roots built before and after its first call.
    #[test]
    fn a_kept_memo_agrees_with_fresh_evaluation() {
        let mut t = Terms::new();
        let x: Vec<_> = (0..4).map(|i| t.input(0, i)).collect();
        let s = t.add_many(&x);
        let e = t.exp(s);
        let f = |_: u32, i: u64| i as f64 / 4.0 - 0.5;
        let mut m = crate::F64Memo::default();
        assert_eq!(m.eval(&t, e, &f), t.eval_f64(e, &f));
        let p = t.mul(e, x[1]);
        let c = t.cmp(CmpOp::Lt, p, x[3]);
        let sel = t.select(c, p, x[2]);
        for r in [p, sel, s, e] {
            assert_eq!(m.eval(&t, r, &f), t.eval_f64(r, &f));
        }
    }

    #[test]
    fn erf_and_base2() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let e = t.func(Func::Erf, x);
        let p = t.func(Func::Ex2, x);
        let l = t.func(Func::Lg2, x);
        let v = t.eval_many_f64(&[e, p, l], &|_, _| 0.5);
        // erf(0.5) = 0.5204998778130465
        assert!(close(v[0], 0.520_499_877_813_046_5));
        assert!(close(v[1], std::f64::consts::SQRT_2));
        assert_eq!(v[2], -1.0);
    }

    #[test]
    fn deep_chain_evaluates() {
        // acc = ((x0 + x1) + x2) + ... + x_{n-1} with x_i = 1: n.
        let mut t = Terms::new();
        let n = 1_000_000u64;
        let mut acc = t.input(0, 0);
        for i in 1..n {
            let xi = t.input(0, i);
            acc = t.add(acc, xi);
        }
        assert_eq!(t.eval_f64(acc, &|_, _| 1.0), n as f64);
        // A deep multiplicative chain of exp/recip: e^(e^(...)) is not
        // needed; a chain of nested selects exercises non-n-ary nodes.
        let mut s = t.input(1, 0);
        let zero = t.int(0);
        for i in 0..100_000u64 {
            let xi = t.input(2, i);
            let c = t.cmp(CmpOp::Lt, xi, zero);
            s = t.select(c, xi, s);
        }
        assert_eq!(t.eval_f64(s, &|k, _| if k == 1 { 7.0 } else { 1.0 }), 7.0);
    }
}
