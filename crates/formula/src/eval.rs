//! Instantiation: the value of one output element as a term.
//!
//! Index variables are concrete during instantiation (every output element
//! has concrete coordinates), so subscripts, reduction ranges and integer
//! conditions evaluate to integers and a `where` on them picks its branch
//! without evaluating the other (a masked-out read outside the tensor is
//! never made). Tensor data and real scalars become terms.
//!
//! Sharing: a `let` element, a reduction and a call are memoised by the
//! node and the values of the variables free in it, so `softmax(x[i, :])`
//! computes its max and sum once per row, not once per element.

use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;
use ptxeq_terms::{CmpOp, Func, TermId, Terms};
use rustc_hash::FxHashMap;

use crate::ast::{BinOp, ReduceOp, UnOp};
use crate::diag::Diagnostic;
use crate::hir::*;
use crate::resolve::rat_to_i64;
use crate::span::Span;
use crate::{Context, ScalarValue};

type R<T> = Result<T, Diagnostic>;

/// A vector argument, its subscripts evaluated.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct VecVal {
    target: Target,
    /// The subscripts, the open axis' entry unused.
    subs: Vec<i64>,
    axis: usize,
    lo: i64,
    len: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) enum Val {
    #[default]
    Unset,
    Int(i64),
    Term(TermId),
    Vec(Rc<VecVal>),
}

/// The default bound on evaluation steps (nodes visited, reduction
/// iterations included) of one [`Instance`]: about a minute of work.
pub const DEFAULT_MAX_STEPS: u64 = 2_000_000_000;

/// Instantiates a compiled formula into a term store; memos persist
/// across elements.
pub struct Instance<'a> {
    hir: &'a Hir,
    ctx: &'a Context,
    terms: &'a mut Terms,
    env: Vec<Val>,
    memo: FxHashMap<(NodeId, Vec<Val>), TermId>,
    let_memo: FxHashMap<(LetId, Vec<i64>), TermId>,
    /// Closed sub-expressions read as named constants ([`crate::named`]).
    folds: FxHashMap<NodeId, Option<TermId>>,
    steps: u64,
    max_steps: u64,
}

impl<'a> Instance<'a> {
    pub(crate) fn new(hir: &'a Hir, ctx: &'a Context, terms: &'a mut Terms) -> Self {
        Instance {
            hir,
            ctx,
            terms,
            env: vec![Val::Unset; hir.var_names.len()],
            memo: FxHashMap::default(),
            let_memo: FxHashMap::default(),
            folds: FxHashMap::default(),
            steps: 0,
            max_steps: DEFAULT_MAX_STEPS,
        }
    }

    /// Sets the step bound (see [`DEFAULT_MAX_STEPS`]).
    pub fn max_steps(mut self, n: u64) -> Self {
        self.max_steps = n;
        self
    }

    /// The value of element `index` of output definition `out` (an index
    /// into [`crate::Compiled::outputs`]).
    pub fn element(&mut self, out: usize, index: &[u64]) -> R<TermId> {
        let def = &self.hir.outs[out];
        let decl = &self.ctx.tensors[def.tensor as usize];
        if index.len() != def.idx.len() || index.iter().zip(&decl.shape).any(|(&i, &n)| i >= n) {
            return Err(Diagnostic::new(
                def.span,
                format!(
                    "element {index:?} is outside `{}`'s shape {:?}",
                    decl.name, decl.shape
                ),
            ));
        }
        for (&v, &i) in def.idx.iter().zip(index) {
            self.env[v as usize] = Val::Int(i as i64);
        }
        self.real(def.body).map_err(|d| {
            let coords: Vec<String> = index.iter().map(u64::to_string).collect();
            d.note(format!(
                "while instantiating {}[{}]",
                decl.name,
                coords.join(", ")
            ))
        })
    }

    fn step(&mut self, span: Span) -> R<()> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(Diagnostic::new(
                span,
                format!(
                    "instantiating the formula took more than {} steps",
                    self.max_steps
                ),
            )
            .label("still evaluating here")
            .note("raise the bound with --formula-max-steps, or shrink the compared region"));
        }
        Ok(())
    }

    fn info(&self, n: NodeId) -> &'a NodeInfo {
        let hir: &'a Hir = self.hir;
        &hir.nodes[n as usize]
    }

    fn key(&self, n: NodeId) -> (NodeId, Vec<Val>) {
        let vals = self
            .info(n)
            .free
            .iter()
            .map(|&v| self.env[v as usize].clone())
            .collect();
        (n, vals)
    }

    /// An integer-kind node, with `/` as floor division.
    fn int(&mut self, n: NodeId) -> R<i64> {
        let info = self.info(n);
        self.step(info.span)?;
        let overflow =
            || Diagnostic::new(info.span, "integer overflow in a subscript or bound").label("here");
        Ok(match &info.node {
            Node::Num(r) => rat_to_i64(r).ok_or_else(overflow)?,
            Node::Var(v) => match &self.env[*v as usize] {
                Val::Int(i) => *i,
                _ => return Err(Diagnostic::new(info.span, "not an integer").label("here")),
            },
            Node::Scalar(s) => match &self.ctx.scalars[*s as usize].value {
                ScalarValue::Int(i) => *i,
                _ => return Err(Diagnostic::new(info.span, "not an integer scalar")),
            },
            Node::Elem {
                target: Target::Let(l),
                subs,
            } => {
                let def = &self.hir.lets[*l as usize];
                let mut vals = Vec::with_capacity(subs.len());
                for &x in subs {
                    vals.push(self.int(x)?);
                }
                let saved: Vec<Val> = def
                    .idx
                    .iter()
                    .map(|&v| self.env[v as usize].clone())
                    .collect();
                for (&v, &i) in def.idx.iter().zip(&vals) {
                    self.env[v as usize] = Val::Int(i);
                }
                let r = self.int(def.body);
                for (&v, x) in def.idx.iter().zip(saved) {
                    self.env[v as usize] = x;
                }
                r?
            }
            Node::Un(UnOp::Neg, a) => self.int(*a)?.checked_neg().ok_or_else(overflow)?,
            Node::Bin(op, a, b) => {
                let (x, y) = (self.int(*a)?, self.int(*b)?);
                match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div | BinOp::Rem => {
                        if y == 0 {
                            return Err(Diagnostic::new(info.span, "division by zero")
                                .label("the divisor is 0 here"));
                        }
                        if *op == BinOp::Div {
                            x.checked_div_euclid(y).map(|q| {
                                // Floor division (Euclid's differs for y < 0).
                                if y < 0 && x.rem_euclid(y) != 0 {
                                    q + 1
                                } else {
                                    q
                                }
                            })
                        } else {
                            x.checked_rem_euclid(y)
                                .map(|r| if y < 0 && r != 0 { r + y } else { r })
                        }
                    }
                    _ => None,
                }
                .ok_or_else(overflow)?
            }
            Node::Builtin { f, args } => match f {
                Builtin::Max | Builtin::Min => {
                    let mut acc: Option<i64> = None;
                    for &a in args {
                        let x = self.int(a)?;
                        acc = Some(match acc {
                            None => x,
                            Some(y) if *f == Builtin::Max => x.max(y),
                            Some(y) => x.min(y),
                        });
                    }
                    acc.unwrap_or(0)
                }
                Builtin::Abs => self.int(args[0])?.checked_abs().ok_or_else(overflow)?,
                Builtin::Where => match self.concrete_bool(args[0])? {
                    Some(true) => self.int(args[1])?,
                    Some(false) => self.int(args[2])?,
                    None => {
                        return Err(Diagnostic::new(
                            self.info(args[0]).span,
                            "this condition depends on tensor data, so it cannot choose an integer subscript",
                        ));
                    }
                },
                _ => return Err(Diagnostic::new(info.span, "not an integer")),
            },
            _ => {
                return Err(
                    Diagnostic::new(info.span, "expected an integer here").label("not an integer")
                );
            }
        })
    }

    /// An exact rational of an integer-kind node in a real context (`/`
    /// exact).
    fn rat(&mut self, n: NodeId) -> R<BigRational> {
        let info = self.info(n);
        match &info.node {
            Node::Bin(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div), a, b) => {
                let (x, y) = (self.rat(*a)?, self.rat(*b)?);
                Ok(match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    _ => {
                        if y.is_zero() {
                            return Err(Diagnostic::new(info.span, "division by zero")
                                .label("the divisor is 0 here"));
                        }
                        x / y
                    }
                })
            }
            Node::Un(UnOp::Neg, a) => Ok(-self.rat(*a)?),
            Node::Num(r) => Ok(r.clone()),
            _ => Ok(BigRational::from_integer(BigInt::from(self.int(n)?))),
        }
    }

    /// A boolean node that involves only integers, evaluated; `None` when
    /// it depends on real data.
    fn concrete_bool(&mut self, n: NodeId) -> R<Option<bool>> {
        let info = self.info(n);
        Ok(match &info.node {
            Node::Bin(op, a, b) if op.is_comparison() => {
                if self.info(*a).kind == Kind::Int && self.info(*b).kind == Kind::Int {
                    let (x, y) = (self.rat(*a)?, self.rat(*b)?);
                    Some(match op {
                        BinOp::Lt => x < y,
                        BinOp::Le => x <= y,
                        BinOp::Gt => x > y,
                        BinOp::Ge => x >= y,
                        BinOp::Eq => x == y,
                        _ => x != y,
                    })
                } else {
                    None
                }
            }
            Node::Bin(BinOp::And, a, b) => match self.concrete_bool(*a)? {
                Some(false) => Some(false),
                Some(true) => self.concrete_bool(*b)?,
                None => match self.concrete_bool(*b)? {
                    Some(false) => Some(false),
                    _ => None,
                },
            },
            Node::Bin(BinOp::Or, a, b) => match self.concrete_bool(*a)? {
                Some(true) => Some(true),
                Some(false) => self.concrete_bool(*b)?,
                None => match self.concrete_bool(*b)? {
                    Some(true) => Some(true),
                    _ => None,
                },
            },
            Node::Un(UnOp::Not, a) => self.concrete_bool(*a)?.map(|b| !b),
            _ => None,
        })
    }

    /// The element of `target` at `subs`, bounds-checked.
    fn elem(&mut self, target: Target, subs: &[i64], span: Span) -> R<TermId> {
        match target {
            Target::Tensor(t) => {
                let decl = &self.ctx.tensors[t as usize];
                let mut flat: u64 = 0;
                for (k, (&i, &n)) in subs.iter().zip(&decl.shape).enumerate() {
                    if i < 0 || i as u64 >= n {
                        let coords: Vec<String> = subs.iter().map(i64::to_string).collect();
                        return Err(Diagnostic::new(
                            span,
                            format!(
                                "reads {}[{}] outside `{}`'s shape {:?} (axis {k})",
                                decl.name,
                                coords.join(", "),
                                decl.name,
                                decl.shape
                            ),
                        )
                        .label("out of bounds"));
                    }
                    flat = flat * n + i as u64;
                }
                Ok(self.terms.input(decl.id, flat))
            }
            Target::Let(l) => {
                let key = (l, subs.to_vec());
                if let Some(&t) = self.let_memo.get(&key) {
                    return Ok(t);
                }
                let def = &self.hir.lets[l as usize];
                for (k, (&i, ext)) in subs.iter().zip(&def.extents).enumerate() {
                    if let Some(n) = ext
                        && (i < 0 || i as u64 >= *n)
                    {
                        return Err(Diagnostic::new(
                            span,
                            format!(
                                "index {i} is outside `{}`'s declared range 0..{n} (axis {k})",
                                def.name
                            ),
                        ));
                    }
                }
                let saved: Vec<Val> = def
                    .idx
                    .iter()
                    .map(|&v| self.env[v as usize].clone())
                    .collect();
                for (&v, &i) in def.idx.iter().zip(subs) {
                    self.env[v as usize] = Val::Int(i);
                }
                let r = self.real(def.body);
                for (&v, s) in def.idx.iter().zip(saved) {
                    self.env[v as usize] = s;
                }
                let t = r?;
                self.let_memo.insert(key, t);
                Ok(t)
            }
        }
    }

    fn vec_val(&mut self, r: &VecRef) -> R<Rc<VecVal>> {
        match r {
            VecRef::Param(v) => match &self.env[*v as usize] {
                Val::Vec(x) => Ok(x.clone()),
                _ => unreachable_vec(),
            },
            VecRef::Slice {
                target,
                subs,
                axis,
                lo,
                hi,
                span,
            } => {
                let mut s = Vec::with_capacity(subs.len());
                for x in subs {
                    s.push(match x {
                        Some(n) => self.int(*n)?,
                        None => 0,
                    });
                }
                let lo_v = match lo {
                    Some(n) => self.int(*n)?,
                    None => 0,
                };
                let hi_v = match hi {
                    Some(n) => self.int(*n)?,
                    None => {
                        let ext = match target {
                            Target::Tensor(t) => {
                                self.ctx.tensors[*t as usize].shape.get(*axis).copied()
                            }
                            Target::Let(l) => self.hir.lets[*l as usize]
                                .extents
                                .get(*axis)
                                .copied()
                                .flatten(),
                        };
                        ext.unwrap_or(0) as i64
                    }
                };
                if hi_v < lo_v {
                    return Err(Diagnostic::new(
                        *span,
                        format!("empty slice {lo_v}..{hi_v}"),
                    ));
                }
                Ok(Rc::new(VecVal {
                    target: *target,
                    subs: s,
                    axis: *axis,
                    lo: lo_v,
                    len: hi_v - lo_v,
                }))
            }
        }
    }

    /// A real or boolean node as a term.
    fn real(&mut self, n: NodeId) -> R<TermId> {
        let info = self.info(n);
        self.step(info.span)?;
        if info.kind == Kind::Int {
            let r = self.rat(n)?;
            return Ok(self.terms.rational(r));
        }
        if info.free.is_empty()
            && info.kind == Kind::Real
            && let Some(t) = self.named_fold(n)
        {
            return Ok(t);
        }
        match &info.node {
            Node::Num(r) => Ok(self.terms.rational(r.clone())),
            Node::Inf => Ok(self.terms.pos_inf()),
            Node::Pi => {
                let pi = BigRational::from_float(std::f64::consts::PI).unwrap_or_default();
                Ok(self.terms.rational(pi))
            }
            Node::Var(v) => match &self.env[*v as usize] {
                Val::Term(t) => Ok(*t),
                Val::Int(i) => Ok(self.terms.int(*i)),
                _ => Err(Diagnostic::new(info.span, "a vector used as a number")),
            },
            Node::Scalar(s) => Ok(match &self.ctx.scalars[*s as usize].value {
                ScalarValue::Int(i) => self.terms.int(*i),
                ScalarValue::Real(r) => self.terms.rational(r.clone()),
                ScalarValue::Symbol { tensor } => self.terms.input(*tensor, 0),
            }),
            Node::Elem { target, subs } => {
                let mut s = Vec::with_capacity(subs.len());
                for &x in subs {
                    s.push(self.int(x)?);
                }
                self.elem(*target, &s, info.span)
            }
            Node::VecElem { var, sub } => {
                let k = self.int(*sub)?;
                let Val::Vec(v) = self.env[*var as usize].clone() else {
                    return unreachable_vec();
                };
                if k < 0 || k >= v.len {
                    return Err(Diagnostic::new(
                        info.span,
                        format!(
                            "`{}[{k}]` is outside the vector's length {}",
                            self.hir.var_names[*var as usize], v.len
                        ),
                    ));
                }
                let mut s = v.subs.clone();
                s[v.axis] = v.lo + k;
                self.elem(v.target, &s, info.span)
            }
            Node::Call { f, args, out } => {
                let key = self.key(n);
                if let Some(&t) = self.memo.get(&key) {
                    return Ok(t);
                }
                let def = &self.hir.fns[*f as usize];
                let mut vals = Vec::with_capacity(args.len());
                let mut first_len = None;
                for (p, a) in def.params.iter().zip(args) {
                    match (p, a) {
                        (ParamDef::Scalar(_), Arg::Scalar(x)) => {
                            vals.push(Val::Term(self.real(*x)?))
                        }
                        (ParamDef::Vector { .. }, Arg::Vector(r)) => {
                            let v = self.vec_val(r)?;
                            first_len.get_or_insert(v.len);
                            vals.push(Val::Vec(v));
                        }
                        _ => return unreachable_vec(),
                    }
                }
                let out_val = match out {
                    Some(o) => {
                        let j = self.int(*o)?;
                        if let Some(len) = first_len
                            && (j < 0 || j >= len)
                        {
                            return Err(Diagnostic::new(
                                info.span,
                                format!(
                                    "`{}(…)[{j}]` is outside the result's length {len}",
                                    def.name
                                ),
                            ));
                        }
                        Some(j)
                    }
                    None => None,
                };
                // Bind the parameters (no recursion: a function's variables
                // are live once at a time; saved anyway for nested calls of
                // other functions that read outer values through vectors).
                let mut bound: Vec<(VarId, Val)> = Vec::new();
                for (p, v) in def.params.iter().zip(vals) {
                    match (p, v) {
                        (ParamDef::Scalar(var), v) => bound.push((*var, v)),
                        (ParamDef::Vector { var, len }, Val::Vec(x)) => {
                            if let Some((_, Val::Int(l))) = bound.iter().find(|(v, _)| v == len)
                                && *l != x.len
                            {
                                return Err(Diagnostic::new(
                                    info.span,
                                    format!(
                                        "`{}` takes vectors of one length `{}`, but they are {l} and {} long",
                                        def.name, self.hir.var_names[*len as usize], x.len
                                    ),
                                ));
                            }
                            bound.push((*len, Val::Int(x.len)));
                            bound.push((*var, Val::Vec(x)));
                        }
                        _ => return unreachable_vec(),
                    }
                }
                if let (Some(o), Some(j)) = (def.out, out_val) {
                    bound.push((o, Val::Int(j)));
                }
                let saved: Vec<(VarId, Val)> = bound
                    .iter()
                    .map(|(v, _)| (*v, self.env[*v as usize].clone()))
                    .collect();
                for (v, x) in bound {
                    self.env[v as usize] = x;
                }
                let r = self.real(def.body);
                for (v, x) in saved {
                    self.env[v as usize] = x;
                }
                let t = r.map_err(|d| d.note(format!("in the call of `{}` here", def.name)))?;
                self.memo.insert(key, t);
                Ok(t)
            }
            Node::Builtin { f, args } => self.builtin(*f, args, info.span),
            Node::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => {
                let key = self.key(n);
                if let Some(&t) = self.memo.get(&key) {
                    return Ok(t);
                }
                let (a, b) = (self.int(*lo)?, self.int(*hi)?);
                let saved = self.env[*var as usize].clone();
                let mut parts = Vec::with_capacity((b - a).clamp(0, 1 << 16) as usize);
                let mut r = Ok(());
                for k in a..b {
                    self.env[*var as usize] = Val::Int(k);
                    match self.real(*body) {
                        Ok(t) => parts.push(t),
                        Err(d) => {
                            r = Err(d);
                            break;
                        }
                    }
                }
                self.env[*var as usize] = saved;
                r?;
                let t = match op {
                    ReduceOp::Sum => self.terms.add_many(&parts),
                    ReduceOp::Prod => self.terms.mul_many(&parts),
                    ReduceOp::Max => {
                        if parts.is_empty() {
                            self.terms.neg_inf()
                        } else {
                            self.terms.max_many(&parts)
                        }
                    }
                    ReduceOp::Min => {
                        if parts.is_empty() {
                            self.terms.pos_inf()
                        } else {
                            self.terms.min_many(&parts)
                        }
                    }
                };
                self.memo.insert(key, t);
                Ok(t)
            }
            Node::Un(UnOp::Neg, a) => {
                let x = self.real(*a)?;
                Ok(self.terms.neg(x))
            }
            Node::Un(UnOp::Not, a) => {
                if let Some(b) = self.concrete_bool(n)? {
                    return Ok(self.terms.bool_const(b));
                }
                let x = self.real(*a)?;
                Ok(self.terms.not(x))
            }
            Node::Bin(op, a, b) => {
                if (op.is_comparison() || matches!(op, BinOp::And | BinOp::Or))
                    && let Some(v) = self.concrete_bool(n)?
                {
                    return Ok(self.terms.bool_const(v));
                }
                let x = self.real(*a)?;
                let y = self.real(*b)?;
                Ok(match op {
                    BinOp::Add => self.terms.add(x, y),
                    BinOp::Sub => self.terms.sub(x, y),
                    BinOp::Mul => self.terms.mul(x, y),
                    BinOp::Div => self.terms.div(x, y),
                    BinOp::Pow => self.terms.pow(x, y),
                    BinOp::Lt => self.terms.cmp(CmpOp::Lt, x, y),
                    BinOp::Le => self.terms.cmp(CmpOp::Le, x, y),
                    BinOp::Gt => self.terms.cmp(CmpOp::Gt, x, y),
                    BinOp::Ge => self.terms.cmp(CmpOp::Ge, x, y),
                    BinOp::Eq => self.terms.cmp(CmpOp::Eq, x, y),
                    BinOp::Ne => self.terms.cmp(CmpOp::Ne, x, y),
                    BinOp::And => self.terms.and(x, y),
                    BinOp::Or => self.terms.or(x, y),
                    BinOp::Rem => {
                        return Err(Diagnostic::new(info.span, "`%` is on integers only"));
                    }
                })
            }
        }
    }

    /// A closed real node that is a named constant ([`crate::named::fold`])
    /// as the rounding the decision procedure recovers; memoised per node.
    fn named_fold(&mut self, n: NodeId) -> Option<TermId> {
        if let Some(t) = self.folds.get(&n) {
            return *t;
        }
        let t = match closed_f64(self.hir, n) {
            Some((x, true)) => crate::named::fold(x).map(|r| self.terms.rational(r)),
            _ => None,
        };
        self.folds.insert(n, t);
        t
    }

    fn builtin(&mut self, f: Builtin, args: &[NodeId], span: Span) -> R<TermId> {
        if f == Builtin::Where {
            if let Some(c) = self.concrete_bool(args[0])? {
                return self.real(if c { args[1] } else { args[2] });
            }
            let c = self.real(args[0])?;
            let a = self.real(args[1])?;
            let b = self.real(args[2])?;
            return Ok(self.terms.select(c, a, b));
        }
        let mut xs = Vec::with_capacity(args.len());
        for &a in args {
            xs.push(self.real(a)?);
        }
        let t = &mut *self.terms;
        Ok(match f {
            Builtin::Exp => t.exp(xs[0]),
            Builtin::Exp2 => t.func(Func::Ex2, xs[0]),
            Builtin::Log => t.func(Func::Log, xs[0]),
            Builtin::Log2 => t.func(Func::Lg2, xs[0]),
            Builtin::Sqrt => t.sqrt(xs[0]),
            Builtin::Rsqrt => t.rsqrt(xs[0]),
            Builtin::Tanh => t.func(Func::Tanh, xs[0]),
            Builtin::Erf => t.func(Func::Erf, xs[0]),
            Builtin::Sin => t.func(Func::Sin, xs[0]),
            Builtin::Cos => t.func(Func::Cos, xs[0]),
            Builtin::Abs => t.abs(xs[0]),
            Builtin::Pow => t.pow(xs[0], xs[1]),
            Builtin::Max => t.max_many(&xs),
            Builtin::Min => t.min_many(&xs),
            Builtin::Where => {
                return Err(Diagnostic::new(span, "internal: where handled above"));
            }
        })
    }
}

/// The `f64` value of a closed real node built from numbers, `pi`, `e`
/// and arithmetic and elementary functions, and whether it involves a
/// transcendental (`pi`, `exp`, `exp2`, `log`, `log2`); `None` for
/// anything else (a tensor, a scalar, an index, a reduction, a call).
fn closed_f64(hir: &Hir, n: NodeId) -> Option<(f64, bool)> {
    use num_traits::ToPrimitive;
    let info = &hir.nodes[n as usize];
    if !info.free.is_empty() {
        return None;
    }
    Some(match &info.node {
        Node::Num(r) => (r.to_f64()?, false),
        Node::Pi => (std::f64::consts::PI, true),
        Node::Un(UnOp::Neg, a) => {
            let (x, t) = closed_f64(hir, *a)?;
            (-x, t)
        }
        Node::Bin(op, a, b) => {
            let (x, s) = closed_f64(hir, *a)?;
            let (y, t) = closed_f64(hir, *b)?;
            let v = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Pow => x.powf(y),
                _ => return None,
            };
            (v, s || t)
        }
        Node::Builtin { f, args } if args.len() == 1 => {
            let (x, t) = closed_f64(hir, args[0])?;
            let (v, trans) = match f {
                Builtin::Exp => (x.exp(), true),
                Builtin::Exp2 => (x.exp2(), true),
                Builtin::Log => (x.ln(), true),
                Builtin::Log2 => (x.log2(), true),
                Builtin::Sqrt => (x.sqrt(), false),
                Builtin::Rsqrt => (1.0 / x.sqrt(), false),
                _ => return None,
            };
            (v, t || trans)
        }
        _ => return None,
    })
    .filter(|(v, _)| v.is_finite())
}

fn unreachable_vec<T>() -> R<T> {
    Err(Diagnostic::new(
        Span::default(),
        "internal error: a vector argument does not match its parameter",
    ))
}

/// A closed integer node (no free variables), evaluated at resolution
/// time (`let` ranges).
pub(crate) fn const_int(hir: &Hir, ctx: &Context, n: NodeId) -> R<i64> {
    let mut terms = Terms::new();
    let mut inst = Instance::new(hir, ctx, &mut terms);
    inst.int(n)
}
