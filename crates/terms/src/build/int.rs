//! Integer terms: constants, inputs, the ring operations modulo 2^w, the
//! other integer operations ([`IntFn`]), comparisons and the conversion
//! to a real value (see `intop.rs` for what they mean).
//!
//! Canonical forms produced here:
//! - `IntConst`: the value masked to its width;
//! - `IntAdd`/`IntMul`: flattened (same width, up to `FLATTEN_LIMIT`),
//!   constants folded modulo 2^w into one leading constant (dropped when
//!   it is the identity; a zero factor makes the product 0), operands
//!   sorted. Like terms are not merged and products are not distributed:
//!   that is the ring normal form's job (`normal/ring.rs`);
//! - `IntOp`: never of constants only (folded, unless undefined: a
//!   division by a zero constant stays a node); operands of commutative
//!   functions sorted; `shl` by a constant is a product by 2^k; `and`/`or`/
//!   `xor` with 0 or all ones, `trunc` of an extension back to its width,
//!   extensions and truncations to the same width are resolved;
//! - `IntCmp`: only `Eq`/`Ne`/`Lt`/`Le` (`a > b` is `b < a`), `Eq`/`Ne`
//!   operands sorted, `a op a` and constant comparisons folded.
//!
//! Sorts are coerced, never rejected (an imported graph may be foreign):
//! an operand of the wrong width is truncated or zero-extended, a boolean
//! becomes `select(b, 1, 0)`, a real is rounded toward zero
//! ([`IntFn::FromReal`]).

use super::List;
use crate::intop::{self, IntCmpOp, IntFn, IntTy, mask, read};
use crate::node::{Node, Operands, TermId};
use crate::rat::Rat;
use crate::store::{FLAG_BOOL, Terms};

fn int_add_ops(w: u8) -> impl Fn(&Node) -> Option<&Operands> {
    move |n| match n {
        Node::IntAdd(x, ops) if *x == w => Some(ops),
        _ => None,
    }
}

fn int_mul_ops(w: u8) -> impl Fn(&Node) -> Option<&Operands> {
    move |n| match n {
        Node::IntMul(x, ops) if *x == w => Some(ops),
        _ => None,
    }
}

/// A width in the supported range.
fn width(w: u8) -> u8 {
    w.clamp(1, 64)
}

impl Terms {
    /// The constant `v mod 2^w`.
    pub fn int_const(&mut self, w: u8, v: u64) -> TermId {
        let w = width(w);
        self.intern(Node::IntConst { w, v: mask(v, w) })
    }

    /// Element `index` of integer input tensor `tensor` of type `ty`.
    pub fn int_input(&mut self, tensor: u32, index: u64, ty: IntTy) -> TermId {
        let ty = IntTy {
            bits: width(ty.bits),
            signed: ty.signed,
        };
        self.intern(Node::IntInput { tensor, index, ty })
    }

    /// The value of an integer constant term.
    pub fn as_int_const(&self, t: TermId) -> Option<(u8, u64)> {
        match self.nodes[t.index()] {
            Node::IntConst { w, v } => Some((w, v)),
            _ => None,
        }
    }

    /// `t` as an integer of width `w` (see the module docs for the
    /// coercions).
    pub(crate) fn as_int(&mut self, t: TermId, w: u8) -> TermId {
        let w = width(w);
        match self.int_width(t) {
            Some(u) if u == w => t,
            Some(u) if u > w => self.int_op(IntFn::Trunc, w, &[t]),
            Some(u) => self.int_op(IntFn::Zext { from: u }, w, &[t]),
            None if self.flags[t.index()] & FLAG_BOOL != 0 => {
                let one = self.int_const(w, 1);
                let zero = self.int_const(w, 0);
                self.select(t, one, zero)
            }
            None => self.int_op(
                IntFn::FromReal {
                    rnd: crate::IntRound::Zero,
                    signed: true,
                },
                w,
                &[t],
            ),
        }
    }

    /// `a + b` modulo 2^w.
    pub fn int_add(&mut self, w: u8, a: TermId, b: TermId) -> TermId {
        self.int_add_many(w, &[a, b])
    }

    /// `a − b` modulo 2^w.
    pub fn int_sub(&mut self, w: u8, a: TermId, b: TermId) -> TermId {
        let nb = self.int_neg(w, b);
        self.int_add(w, a, nb)
    }

    /// `−a` modulo 2^w, as `(2^w − 1)·a`.
    pub fn int_neg(&mut self, w: u8, a: TermId) -> TermId {
        let w = width(w);
        let m1 = self.int_const(w, u64::MAX);
        self.int_mul_many(w, &[m1, a])
    }

    /// `a · b` modulo 2^w.
    pub fn int_mul(&mut self, w: u8, a: TermId, b: TermId) -> TermId {
        self.int_mul_many(w, &[a, b])
    }

    /// The sum of `ops` modulo 2^w (0 when empty).
    pub fn int_add_many(&mut self, w: u8, ops: &[TermId]) -> TermId {
        let w = width(w);
        let mut list: List = ops.iter().map(|&t| self.as_int(t, w)).collect();
        self.flatten_with(&mut list, &int_add_ops(w));
        let mut acc = 0u64;
        let mut out = List::with_capacity(list.len());
        for &t in &list {
            match self.nodes[t.index()] {
                Node::IntConst { v, .. } => acc = acc.wrapping_add(v),
                _ => out.push(t),
            }
        }
        let acc = mask(acc, w);
        self.sort_canonical(&mut out);
        match (acc, out.len()) {
            (c, 0) => self.int_const(w, c),
            (0, 1) => out[0],
            (c, _) => {
                let mut ops = Operands::with_capacity(out.len() + 1);
                if c != 0 {
                    ops.push(self.int_const(w, c));
                }
                ops.extend_from_slice(&out);
                self.intern(Node::IntAdd(w, ops))
            }
        }
    }

    /// The product of `ops` modulo 2^w (1 when empty).
    pub fn int_mul_many(&mut self, w: u8, ops: &[TermId]) -> TermId {
        let w = width(w);
        let mut list: List = ops.iter().map(|&t| self.as_int(t, w)).collect();
        self.flatten_with(&mut list, &int_mul_ops(w));
        let mut acc = 1u64;
        let mut out = List::with_capacity(list.len());
        for &t in &list {
            match self.nodes[t.index()] {
                Node::IntConst { v, .. } => acc = acc.wrapping_mul(v),
                _ => out.push(t),
            }
        }
        let acc = mask(acc, w);
        if acc == 0 {
            return self.int_const(w, 0);
        }
        self.sort_canonical(&mut out);
        match (acc, out.len()) {
            (c, 0) => self.int_const(w, c),
            (1, 1) => out[0],
            (c, _) => {
                let mut ops = Operands::with_capacity(out.len() + 1);
                if c != 1 {
                    ops.push(self.int_const(w, c));
                }
                ops.extend_from_slice(&out);
                self.intern(Node::IntMul(w, ops))
            }
        }
    }

    /// `f(args)` with a result of width `w` (see [`IntFn`] for the
    /// operands each function takes).
    pub fn int_op(&mut self, f: IntFn, w: u8, args: &[TermId]) -> TermId {
        let w = width(w);
        let n = f.arity();
        // Missing operands (foreign graphs) read as 0; extra ones are dropped.
        let mut ops: List = List::with_capacity(n);
        for i in 0..n {
            let a = match args.get(i) {
                Some(&a) => a,
                None => self.int_const(w, 0),
            };
            let want = match f {
                IntFn::Zext { from } | IntFn::Sext { from } => Some(width(from)),
                IntFn::Trunc | IntFn::Popc | IntFn::Clz | IntFn::Bfind { .. } => None,
                IntFn::FromReal { .. } => {
                    ops.push(self.as_real(a));
                    continue;
                }
                IntFn::Shl | IntFn::Shr { .. } if i == 1 => Some(32),
                IntFn::Bfe { .. } if i > 0 => Some(32),
                IntFn::Bfi if i > 1 => Some(32),
                IntFn::Prmt { .. } => Some(32),
                _ => Some(w),
            };
            let a = match want {
                Some(u) => self.as_int(a, u),
                None if self.is_int(a) => a,
                None => self.as_int(a, w),
            };
            ops.push(a);
        }
        // Resolved forms.
        match f {
            IntFn::Zext { from } | IntFn::Sext { from } if width(from) >= w => {
                return self.as_int(ops[0], w);
            }
            IntFn::Trunc => {
                let u = self.int_width(ops[0]).unwrap_or(w);
                if u <= w {
                    return self.as_int(ops[0], w);
                }
                match self.nodes[ops[0].index()] {
                    // trunc(ext(x)) back to x's width is x.
                    Node::IntOp(IntFn::Zext { from } | IntFn::Sext { from }, _, ref a)
                        if from == w =>
                    {
                        return a[0];
                    }
                    Node::IntOp(IntFn::Trunc, _, ref a) => {
                        let inner = a[0];
                        return self.int_op(IntFn::Trunc, w, &[inner]);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        // Constant folding.
        let consts: Option<Vec<(u64, u8)>> = ops
            .iter()
            .map(|&a| match self.nodes[a.index()] {
                Node::IntConst { w, v } => Some((v, w)),
                _ => None,
            })
            .collect();
        if let Some(c) = &consts
            && let Some(v) = intop::apply(f, w, c)
        {
            return self.int_const(w, v);
        }
        if let IntFn::FromReal { rnd, signed } = f
            && let Node::Const(r) = &self.nodes[ops[0].index()]
        {
            let v = intop::from_real(&r.clone(), rnd, signed, w);
            return self.int_const(w, v);
        }
        let all = mask(u64::MAX, w);
        let cval = |s: &Self, t: TermId| s.as_int_const(t).map(|x| x.1);
        match f {
            IntFn::Shl => {
                if let Some(k) = cval(self, ops[1]) {
                    if k >= u64::from(w) {
                        return self.int_const(w, 0);
                    }
                    let p = self.int_const(w, 1u64 << k);
                    return self.int_mul(w, p, ops[0]);
                }
            }
            IntFn::Shr { .. } if cval(self, ops[1]) == Some(0) => return ops[0],
            IntFn::And | IntFn::Or | IntFn::Xor => {
                for (i, j) in [(0, 1), (1, 0)] {
                    match (f, cval(self, ops[i])) {
                        (IntFn::And, Some(0)) => return self.int_const(w, 0),
                        (IntFn::And, Some(c)) if c == all => return ops[j],
                        (IntFn::Or, Some(0)) | (IntFn::Xor, Some(0)) => return ops[j],
                        (IntFn::Or, Some(c)) if c == all => return self.int_const(w, all),
                        (IntFn::Xor, Some(c)) if c == all => {
                            // ~a = −1 − a.
                            let m1 = self.int_const(w, all);
                            let na = self.int_neg(w, ops[j]);
                            return self.int_add(w, m1, na);
                        }
                        _ => {}
                    }
                }
                if ops[0] == ops[1] {
                    return match f {
                        IntFn::Xor => self.int_const(w, 0),
                        _ => ops[0],
                    };
                }
            }
            IntFn::Min { .. } | IntFn::Max { .. } if ops[0] == ops[1] => return ops[0],
            _ => {}
        }
        if f.is_commutative() {
            self.sort_canonical(&mut ops);
        }
        self.intern(Node::IntOp(f, w, ops.into_iter().collect()))
    }

    /// `a op b` for integers (widened to the wider of the two).
    pub fn int_cmp(&mut self, op: IntCmpOp, a: TermId, b: TermId) -> TermId {
        let wa = self.int_width(a).unwrap_or(32);
        let wb = self.int_width(b).unwrap_or(32);
        let w = wa.max(wb);
        let a = self.as_int(a, w);
        let b = self.as_int(b, w);
        let (op, a, b) = match op {
            IntCmpOp::Gt { signed } => (IntCmpOp::Lt { signed }, b, a),
            IntCmpOp::Ge { signed } => (IntCmpOp::Le { signed }, b, a),
            _ => (op, a, b),
        };
        if a == b {
            return self.bool_const(matches!(op, IntCmpOp::Eq | IntCmpOp::Le { .. }));
        }
        if let (Some((_, x)), Some((_, y))) = (self.as_int_const(a), self.as_int_const(b)) {
            return self.bool_const(op.holds(x, y, w));
        }
        let (a, b) = match op {
            IntCmpOp::Eq | IntCmpOp::Ne if self.key(b) < self.key(a) => (b, a),
            _ => (a, b),
        };
        self.intern(Node::IntCmp(op, a, b))
    }

    /// The real value of the integer `a` read as signed or unsigned.
    pub fn int_to_real(&mut self, signed: bool, a: TermId) -> TermId {
        let Some(w) = self.int_width(a) else {
            return self.as_real(a);
        };
        if let Some((_, v)) = self.as_int_const(a) {
            let x = read(v, w, signed);
            return match i64::try_from(x) {
                Ok(s) => self.konst(Rat::from_i64(s)),
                Err(_) => self.rational(num_rational::BigRational::from_integer(x.into())),
            };
        }
        self.intern(Node::IntToReal(signed, a))
    }

    /// [`Terms::flatten`] with a width-dependent kind test.
    fn flatten_with(&self, list: &mut List, same: &dyn Fn(&Node) -> Option<&Operands>) {
        let mut total = 0usize;
        let mut nested = false;
        for &t in list.iter() {
            match same(&self.nodes[t.index()]) {
                Some(ops) => {
                    nested = true;
                    total += ops.len();
                }
                None => total += 1,
            }
        }
        if !nested || total > crate::FLATTEN_LIMIT {
            return;
        }
        let mut out = List::with_capacity(total);
        for &t in list.iter() {
            match same(&self.nodes[t.index()]) {
                Some(ops) => out.extend_from_slice(ops),
                None => out.push(t),
            }
        }
        *list = out;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s32() -> IntTy {
        IntTy {
            bits: 32,
            signed: true,
        }
    }

    #[test]
    fn sums_are_flat_sorted_and_folded() {
        let mut t = Terms::new();
        let x: Vec<_> = (0..4).map(|i| t.int_input(0, i, s32())).collect();
        let a = t.int_add(32, x[0], x[1]);
        let b = t.int_add(32, x[2], x[3]);
        let ab = t.int_add(32, a, b);
        let c = t.int_add(32, x[3], x[1]);
        let d = t.int_add(32, x[0], x[2]);
        let cd = t.int_add(32, c, d);
        assert_eq!(ab, cd, "any association of the same operands is one node");
        let one = t.int_const(32, 1);
        let m1 = t.int_const(32, u64::MAX);
        let s = t.int_add_many(32, &[x[0], one, m1]);
        assert_eq!(s, x[0], "1 + (−1) folds to 0 and is dropped");
        let z = t.int_const(32, 0);
        assert_eq!(t.int_mul(32, x[0], z), z);
        // shl by a constant is a product.
        let k = t.int_const(32, 3);
        let sh = t.int_op(IntFn::Shl, 32, &[x[0], k]);
        let eight = t.int_const(32, 8);
        assert_eq!(sh, t.int_mul(32, eight, x[0]));
        // Constants fold through every function.
        let c5 = t.int_const(32, 5);
        let c3 = t.int_const(32, 3);
        assert_eq!(
            t.int_op(IntFn::Div { signed: true }, 32, &[c5, c3]),
            t.int_const(32, 1)
        );
        let zero = t.int_const(32, 0);
        let q = t.int_op(IntFn::Div { signed: true }, 32, &[c5, zero]);
        assert!(matches!(t.node(q), Node::IntOp(..)));
    }

    #[test]
    fn widths_and_conversions() {
        let mut t = Terms::new();
        let ty = IntTy {
            bits: 8,
            signed: true,
        };
        let x = t.int_input(1, 0, ty);
        assert_eq!(t.int_width(x), Some(8));
        let e = t.int_op(IntFn::Sext { from: 8 }, 32, &[x]);
        assert_eq!(t.int_width(e), Some(32));
        assert_eq!(t.int_op(IntFn::Trunc, 8, &[e]), x);
        let c = t.int_const(8, 0x80);
        let se = t.int_op(IntFn::Sext { from: 8 }, 32, &[c]);
        assert_eq!(t.as_int_const(se), Some((32, 0xffff_ff80)));
        let r = t.int_to_real(true, se);
        assert_eq!(t.as_rat(r), Some(&Rat::from_i64(-128)));
        let r = t.int_to_real(false, c);
        assert_eq!(t.as_rat(r), Some(&Rat::from_i64(128)));
    }

    #[test]
    fn comparisons_are_canonical() {
        let mut t = Terms::new();
        let x = t.int_input(0, 0, s32());
        let y = t.int_input(0, 1, s32());
        let gt = t.int_cmp(IntCmpOp::Gt { signed: true }, x, y);
        let lt = t.int_cmp(IntCmpOp::Lt { signed: true }, y, x);
        assert_eq!(gt, lt);
        let e1 = t.int_cmp(IntCmpOp::Eq, x, y);
        let e2 = t.int_cmp(IntCmpOp::Eq, y, x);
        assert_eq!(e1, e2);
        let n = t.not(lt);
        assert_eq!(n, t.int_cmp(IntCmpOp::Le { signed: true }, x, y));
        assert_eq!(t.not(n), lt);
        // A select on an integer comparison picks integers.
        let s = t.select(lt, x, y);
        assert_eq!(t.int_width(s), Some(32));
        let ns = t.select(n, y, x);
        assert_eq!(s, ns);
    }
}
