//! Name resolution and kind checking: [`Program`] (plus the prelude) to
//! [`Hir`], with a located diagnostic for every problem.
//!
//! Scoping: inside an expression, names are looked up as reduction
//! variables (innermost first), then the enclosing definition's index
//! variables or function parameters, then earlier `let` bindings, then
//! the context's tensors and scalars, then the constants `pi`, `e`,
//! `inf`. Functions: the user's earlier `fn`s, the prelude's, the
//! builtins. Nothing may be used before it is defined, so there is no
//! recursion.

use std::collections::HashMap;

use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

use crate::ast::{self, BinOp, Expr, ExprKind, Item, Program, Sub, UnOp};
use crate::diag::Diagnostic;
use crate::hir::*;
use crate::span::Span;
use crate::{Context, ScalarValue};

#[derive(Clone, Copy)]
enum Local {
    /// An index or reduction variable, or a vector length: an integer.
    Index(VarId),
    /// A scalar function parameter: a real.
    Scalar(VarId),
    /// A vector function parameter.
    Vector(VarId),
}

pub(crate) struct Resolver<'c> {
    ctx: &'c Context,
    pub hir: Hir,
    scopes: Vec<Vec<(String, Local)>>,
    lets: HashMap<String, LetId>,
    fns: HashMap<String, FnId>,
    /// Functions defined by the prelude (a user `fn` may not redefine them).
    prelude_fns: usize,
    pub diags: Vec<Diagnostic>,
}

type R<T> = Result<T, Diagnostic>;

impl<'c> Resolver<'c> {
    pub fn new(ctx: &'c Context) -> Self {
        Resolver {
            ctx,
            hir: Hir::default(),
            scopes: Vec::new(),
            lets: HashMap::new(),
            fns: HashMap::new(),
            prelude_fns: 0,
            diags: Vec::new(),
        }
    }

    /// Resolves the prelude's functions (its `let`s and outputs are not
    /// allowed).
    pub fn prelude(&mut self, prog: &Program) {
        for item in &prog.items {
            if let Item::Fn { .. } = item {
                self.item(item);
            }
        }
        self.prelude_fns = self.hir.fns.len();
    }

    pub fn program(&mut self, prog: &Program) {
        for item in &prog.items {
            self.item(item);
        }
    }

    fn new_var(&mut self, name: &str) -> VarId {
        self.hir.var_names.push(name.to_string());
        (self.hir.var_names.len() - 1) as VarId
    }

    fn push(&mut self, node: Node, span: Span, kind: Kind, free: Vec<VarId>) -> NodeId {
        self.hir.nodes.push(NodeInfo {
            node,
            span,
            kind,
            free,
        });
        (self.hir.nodes.len() - 1) as NodeId
    }

    fn lookup_local(&self, name: &str) -> Option<Local> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|&(_, l)| l)
    }

    fn tensor(&self, name: &str) -> Option<u32> {
        self.ctx
            .tensors
            .iter()
            .position(|t| t.name == name)
            .map(|k| k as u32)
    }

    fn scalar(&self, name: &str) -> Option<u32> {
        self.ctx
            .scalars
            .iter()
            .position(|t| t.name == name)
            .map(|k| k as u32)
    }

    /// A name that would clash with a definition of `name`.
    fn clash(&self, name: &ast::Ident, what: &str) -> Option<Diagnostic> {
        let taken = if self.lets.contains_key(&name.name) {
            Some("an earlier `let`")
        } else if self.tensor(&name.name).is_some() {
            Some("a tensor of the spec")
        } else if self.scalar(&name.name).is_some() {
            Some("a scalar of the spec")
        } else if matches!(name.name.as_str(), "pi" | "e" | "inf" | "in" | "let" | "fn") {
            Some("a reserved word")
        } else {
            None
        };
        taken.map(|t| {
            Diagnostic::new(name.span, format!("`{}` is already {t}", name.name))
                .label(format!("this {what}"))
        })
    }

    fn item(&mut self, item: &Item) {
        let r = match item {
            Item::Let {
                name,
                idx,
                ranges,
                value,
                span,
            } => self.let_item(name, idx, ranges, value, *span),
            Item::Fn {
                name,
                params,
                out,
                body,
                span,
            } => self.fn_item(name, params, out.as_ref(), body, *span),
            Item::Def {
                tensor,
                idx,
                value,
                span,
            } => self.def_item(tensor, idx, value, *span),
        };
        if let Err(d) = r {
            self.diags.push(d);
        }
        self.scopes.clear();
    }

    fn bind_indices(&mut self, idx: &[ast::Ident]) -> R<Vec<VarId>> {
        let mut vars = Vec::new();
        let mut scope = Vec::new();
        for (k, i) in idx.iter().enumerate() {
            if idx[..k].iter().any(|j| j.name == i.name) {
                return Err(
                    Diagnostic::new(i.span, format!("index `{}` appears twice", i.name))
                        .label("repeated"),
                );
            }
            let v = self.new_var(&i.name);
            vars.push(v);
            scope.push((i.name.clone(), Local::Index(v)));
        }
        self.scopes.push(scope);
        Ok(vars)
    }

    fn let_item(
        &mut self,
        name: &ast::Ident,
        idx: &[ast::Ident],
        ranges: &[Option<(Expr, Expr)>],
        value: &Expr,
        span: Span,
    ) -> R<()> {
        if let Some(d) = self.clash(name, "binding") {
            return Err(d);
        }
        let mut extents = Vec::new();
        for r in ranges {
            extents.push(match r {
                None => None,
                Some((lo, hi)) => {
                    let lo_v = self.const_int(lo)?;
                    let hi_v = self.const_int(hi)?;
                    if lo_v != 0 || hi_v < 0 {
                        return Err(Diagnostic::new(
                            lo.span.to(hi.span),
                            "a binding's index range must be `0..N` with N ≥ 0",
                        ));
                    }
                    Some(hi_v as u64)
                }
            });
        }
        let vars = self.bind_indices(idx)?;
        let body = self.expr(value)?;
        if self.hir.info(body).kind == Kind::Bool {
            // Allowed: a named condition.
        }
        self.hir.lets.push(LetDef {
            name: name.name.clone(),
            idx: vars,
            extents,
            body,
            span,
        });
        self.lets
            .insert(name.name.clone(), (self.hir.lets.len() - 1) as LetId);
        Ok(())
    }

    /// A closed integer expression (literals, integer scalars, integer
    /// `let`s without indices), evaluated now.
    fn const_int(&mut self, e: &Expr) -> R<i64> {
        let n = self.expr(e)?;
        let info = self.hir.info(n);
        if info.kind != Kind::Int || !info.free.is_empty() {
            return Err(Diagnostic::new(e.span, "expected a constant integer")
                .label("not a constant integer"));
        }
        crate::eval::const_int(&self.hir, self.ctx, n)
    }

    fn fn_item(
        &mut self,
        name: &ast::Ident,
        params: &[ast::Param],
        out: Option<&ast::Ident>,
        body: &Expr,
        span: Span,
    ) -> R<()> {
        if Builtin::of(&name.name).is_some()
            || matches!(name.name.as_str(), "sum" | "prod")
            || self.fns.contains_key(&name.name)
        {
            return Err(Diagnostic::new(
                name.span,
                format!("a function `{}` already exists", name.name),
            )
            .label("redefined here"));
        }
        let mut scope = Vec::new();
        let mut defs = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        let mut check = |n: &ast::Ident| -> R<()> {
            if seen.contains(&n.name) {
                return Err(
                    Diagnostic::new(n.span, format!("`{}` is bound twice", n.name))
                        .label("repeated"),
                );
            }
            seen.push(n.name.clone());
            Ok(())
        };
        for p in params {
            check(&p.name)?;
            match &p.len {
                None => {
                    let v = self.new_var(&p.name.name);
                    scope.push((p.name.name.clone(), Local::Scalar(v)));
                    defs.push(ParamDef::Scalar(v));
                }
                Some(len) => {
                    // A length named twice (`layernorm(v[n], g[n], …)`)
                    // is one variable: the vectors must be as long.
                    let shared = scope.iter().find_map(|(n, l)| match l {
                        Local::Index(x) if *n == len.name => Some(*x),
                        _ => None,
                    });
                    let v = self.new_var(&p.name.name);
                    let l = match shared {
                        Some(l) => l,
                        None => {
                            check(len)?;
                            let l = self.new_var(&len.name);
                            scope.push((len.name.clone(), Local::Index(l)));
                            l
                        }
                    };
                    scope.push((p.name.name.clone(), Local::Vector(v)));
                    defs.push(ParamDef::Vector { var: v, len: l });
                }
            }
        }
        let out_var = match out {
            Some(j) => {
                check(j)?;
                let v = self.new_var(&j.name);
                scope.push((j.name.clone(), Local::Index(v)));
                Some(v)
            }
            None => None,
        };
        self.scopes.push(scope);
        let body = self.expr(body)?;
        if out_var.is_some() && !defs.iter().any(|d| matches!(d, ParamDef::Vector { .. })) {
            return Err(Diagnostic::new(
                span,
                "a function returning a vector needs a vector parameter (its length is the result's)",
            ));
        }
        self.hir.fns.push(FnDef {
            name: name.name.clone(),
            params: defs,
            out: out_var,
            body,
            span,
        });
        self.fns
            .insert(name.name.clone(), (self.hir.fns.len() - 1) as FnId);
        Ok(())
    }

    fn def_item(
        &mut self,
        tensor: &ast::Ident,
        idx: &[ast::Ident],
        value: &Expr,
        span: Span,
    ) -> R<()> {
        let Some(t) = self.tensor(&tensor.name) else {
            let known: Vec<&str> = self
                .ctx
                .tensors
                .iter()
                .filter(|t| t.writable)
                .map(|t| t.name.as_str())
                .collect();
            return Err(Diagnostic::new(
                tensor.span,
                format!("no output tensor `{}` in the spec", tensor.name),
            )
            .label("defined here")
            .note(format!("the spec's output tensors: {}", known.join(", "))));
        };
        let decl = &self.ctx.tensors[t as usize];
        if !decl.writable {
            return Err(Diagnostic::new(
                tensor.span,
                format!(
                    "`{}` is an input tensor; only outputs are defined",
                    tensor.name
                ),
            ));
        }
        if decl.shape.len() != idx.len() {
            return Err(Diagnostic::new(
                tensor.span.to(idx.last().map_or(tensor.span, |i| i.span)),
                format!(
                    "`{}` has {} dimensions ({:?}) but is defined with {} indices",
                    tensor.name,
                    decl.shape.len(),
                    decl.shape,
                    idx.len()
                ),
            ));
        }
        if self.hir.outs.iter().any(|o| o.tensor == t) {
            return Err(Diagnostic::new(
                tensor.span,
                format!("`{}` is defined twice", tensor.name),
            ));
        }
        let vars = self.bind_indices(idx)?;
        let mut body = self.expr_top(value)?;
        // `y[i, j] = softmax(x[i, :])`: a vector-valued call is indexed by
        // the output index at the position of its first open axis.
        if let Node::Call { f, args, out: None } = &self.hir.info(body).node
            && self.hir.fns[*f as usize].out.is_some()
        {
            let (f, args) = (*f, args.clone());
            let axis = args.iter().find_map(|a| match a {
                Arg::Vector(VecRef::Slice { axis, lo: None, .. }) => Some(*axis),
                Arg::Vector(VecRef::Slice {
                    axis, lo: Some(lo), ..
                }) if matches!(&self.hir.info(*lo).node, Node::Num(r) if r.is_zero()) => {
                    Some(*axis)
                }
                _ => None,
            });
            let Some(axis) = axis.filter(|&a| a < vars.len()) else {
                return Err(Diagnostic::new(
                    value.span,
                    format!(
                        "`{}` returns a vector: index it (`{}(…)[j]`)",
                        self.hir.fns[f as usize].name, self.hir.fns[f as usize].name
                    ),
                ));
            };
            let span = self.hir.info(body).span;
            let v = vars[axis];
            let out = self.push(Node::Var(v), span, Kind::Int, vec![v]);
            let free = self.union_free(args.iter().flat_map(|a| self.arg_free(a)).chain([v]));
            body = self.push(
                Node::Call {
                    f,
                    args,
                    out: Some(out),
                },
                span,
                Kind::Real,
                free,
            );
        }
        if self.hir.info(body).kind == Kind::Bool {
            return Err(
                Diagnostic::new(value.span, "an output is a number, not a condition")
                    .note("use `where(cond, a, b)`"),
            );
        }
        self.hir.outs.push(OutDef {
            tensor: t,
            idx: vars,
            body,
            span,
        });
        Ok(())
    }

    fn union_free(&self, it: impl IntoIterator<Item = VarId>) -> Vec<VarId> {
        let mut v: Vec<VarId> = it.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn arg_free(&self, a: &Arg) -> Vec<VarId> {
        match a {
            Arg::Scalar(n) => self.hir.info(*n).free.clone(),
            Arg::Vector(VecRef::Param(v)) => vec![*v],
            Arg::Vector(VecRef::Slice { subs, lo, hi, .. }) => subs
                .iter()
                .flatten()
                .chain(lo)
                .chain(hi)
                .flat_map(|&n| self.hir.info(n).free.clone())
                .collect(),
        }
    }

    /// A top-level right-hand side (a vector-valued call may stay
    /// unindexed: `def_item` indexes it).
    fn expr_top(&mut self, e: &Expr) -> R<NodeId> {
        if let ExprKind::Call { func, args } = &e.kind
            && let Some(&f) = self.fns.get(&func.name)
            && self.hir.fns[f as usize].out.is_some()
        {
            return self.call(func, f, args, None, e.span);
        }
        self.expr(e)
    }

    fn require(&self, n: NodeId, want: &[Kind], what: &str) -> R<()> {
        let info = self.hir.info(n);
        if want.contains(&info.kind) {
            return Ok(());
        }
        let is = match info.kind {
            Kind::Int => "an integer",
            Kind::Real => "a real number (it depends on tensor data or real scalars)",
            Kind::Bool => "a condition",
        };
        Err(
            Diagnostic::new(info.span, format!("expected {what}, but this is {is}"))
                .label(format!("expected {what}")),
        )
    }

    fn subscript(&mut self, e: &Expr) -> R<NodeId> {
        let n = self.expr(e)?;
        self.require(
            n,
            &[Kind::Int],
            "an integer subscript (index variables, integer literals and integer scalars)",
        )?;
        Ok(n)
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> R<NodeId> {
        match &e.kind {
            ExprKind::Num { value, integer } => Ok(self.push(
                Node::Num(value.clone()),
                e.span,
                if *integer { Kind::Int } else { Kind::Real },
                vec![],
            )),
            ExprKind::Name(id) => self.name(id),
            ExprKind::Index { base, subs } => self.index(base, subs, e.span),
            ExprKind::Call { func, args } => {
                if let Some(&f) = self.fns.get(&func.name) {
                    if self.hir.fns[f as usize].out.is_some() {
                        return Err(Diagnostic::new(
                            e.span,
                            format!(
                                "`{}` returns a vector: index it (`{}(…)[j]`)",
                                func.name, func.name
                            ),
                        ));
                    }
                    return self.call(func, f, args, None, e.span);
                }
                self.builtin(func, args, e.span)
            }
            ExprKind::Reduce {
                op, binders, body, ..
            } => {
                // Nested reductions, one per binder, outermost first.
                let mut vars = Vec::new();
                let mut bounds = Vec::new();
                let mut scope = Vec::new();
                for b in binders {
                    self.scopes.push(scope.clone());
                    let lo = self.subscript(&b.lo);
                    let hi = self.subscript(&b.hi);
                    self.scopes.pop();
                    let (lo, hi) = (lo?, hi?);
                    let v = self.new_var(&b.var.name);
                    scope.push((b.var.name.clone(), Local::Index(v)));
                    vars.push(v);
                    bounds.push((lo, hi));
                }
                self.scopes.push(scope);
                let body = self.expr(body);
                self.scopes.pop();
                let mut node = body?;
                self.require(node, &[Kind::Int, Kind::Real], "a number to reduce")?;
                for (v, (lo, hi)) in vars.into_iter().zip(bounds).rev() {
                    let free = self.union_free(
                        self.hir
                            .info(node)
                            .free
                            .iter()
                            .copied()
                            .filter(|&x| x != v)
                            .chain(self.hir.info(lo).free.iter().copied())
                            .chain(self.hir.info(hi).free.iter().copied()),
                    );
                    node = self.push(
                        Node::Reduce {
                            op: *op,
                            var: v,
                            lo,
                            hi,
                            body: node,
                        },
                        e.span,
                        Kind::Real,
                        free,
                    );
                }
                Ok(node)
            }
            ExprKind::Unary { op, e: inner } => {
                let n = self.expr(inner)?;
                let kind = self.hir.info(n).kind;
                let kind = match op {
                    UnOp::Neg => {
                        self.require(n, &[Kind::Int, Kind::Real], "a number after `-`")?;
                        kind
                    }
                    UnOp::Not => {
                        self.require(n, &[Kind::Bool], "a condition after `!`")?;
                        Kind::Bool
                    }
                };
                let free = self.hir.info(n).free.clone();
                Ok(self.push(Node::Un(*op, n), e.span, kind, free))
            }
            ExprKind::Binary { op, l, r } => {
                let a = self.expr(l)?;
                let b = self.expr(r)?;
                let (ka, kb) = (self.hir.info(a).kind, self.hir.info(b).kind);
                let kind = match op {
                    BinOp::And | BinOp::Or => {
                        self.require(a, &[Kind::Bool], "a condition")?;
                        self.require(b, &[Kind::Bool], "a condition")?;
                        Kind::Bool
                    }
                    _ if op.is_comparison() => {
                        self.require(a, &[Kind::Int, Kind::Real], "a number to compare")?;
                        self.require(b, &[Kind::Int, Kind::Real], "a number to compare")?;
                        Kind::Bool
                    }
                    BinOp::Rem => {
                        self.require(a, &[Kind::Int], "an integer (`%` is on integers)")?;
                        self.require(b, &[Kind::Int], "an integer (`%` is on integers)")?;
                        Kind::Int
                    }
                    BinOp::Pow => {
                        self.require(a, &[Kind::Int, Kind::Real], "a number")?;
                        self.require(b, &[Kind::Int, Kind::Real], "a number")?;
                        Kind::Real
                    }
                    _ => {
                        self.require(a, &[Kind::Int, Kind::Real], "a number")?;
                        self.require(b, &[Kind::Int, Kind::Real], "a number")?;
                        if ka == Kind::Int && kb == Kind::Int {
                            Kind::Int
                        } else {
                            Kind::Real
                        }
                    }
                };
                let free = self.union_free(
                    self.hir
                        .info(a)
                        .free
                        .iter()
                        .chain(&self.hir.info(b).free)
                        .copied(),
                );
                Ok(self.push(Node::Bin(*op, a, b), e.span, kind, free))
            }
        }
    }

    fn name(&mut self, id: &ast::Ident) -> R<NodeId> {
        match self.lookup_local(&id.name) {
            Some(Local::Index(v)) => {
                return Ok(self.push(Node::Var(v), id.span, Kind::Int, vec![v]));
            }
            Some(Local::Scalar(v)) => {
                return Ok(self.push(Node::Var(v), id.span, Kind::Real, vec![v]));
            }
            Some(Local::Vector(_)) => {
                return Err(Diagnostic::new(
                    id.span,
                    format!(
                        "`{}` is a vector: index it (`{}[k]`) or pass it to a function",
                        id.name, id.name
                    ),
                ));
            }
            None => {}
        }
        if let Some(&l) = self.lets.get(&id.name) {
            let def = &self.hir.lets[l as usize];
            if !def.idx.is_empty() {
                return Err(Diagnostic::new(
                    id.span,
                    format!("`{}` has {} indices: subscript it", id.name, def.idx.len()),
                ));
            }
            let kind = self.hir.info(def.body).kind;
            return Ok(self.push(
                Node::Elem {
                    target: Target::Let(l),
                    subs: vec![],
                },
                id.span,
                kind,
                vec![],
            ));
        }
        if let Some(t) = self.tensor(&id.name) {
            let decl = &self.ctx.tensors[t as usize];
            if !decl.shape.is_empty() {
                return Err(Diagnostic::new(
                    id.span,
                    format!(
                        "`{}` is a tensor of shape {:?}: subscript it",
                        id.name, decl.shape
                    ),
                ));
            }
            self.readable(t, id.span)?;
            return Ok(self.push(
                Node::Elem {
                    target: Target::Tensor(t),
                    subs: vec![],
                },
                id.span,
                Kind::Real,
                vec![],
            ));
        }
        if let Some(s) = self.scalar(&id.name) {
            let kind = match self.ctx.scalars[s as usize].value {
                ScalarValue::Int(_) => Kind::Int,
                _ => Kind::Real,
            };
            return Ok(self.push(Node::Scalar(s), id.span, kind, vec![]));
        }
        match id.name.as_str() {
            "pi" => Ok(self.push(Node::Pi, id.span, Kind::Real, vec![])),
            "inf" => Ok(self.push(Node::Inf, id.span, Kind::Real, vec![])),
            "e" => {
                let one = self.push(
                    Node::Num(BigRational::from_integer(1.into())),
                    id.span,
                    Kind::Int,
                    vec![],
                );
                Ok(self.push(
                    Node::Builtin {
                        f: Builtin::Exp,
                        args: vec![one],
                    },
                    id.span,
                    Kind::Real,
                    vec![],
                ))
            }
            _ => Err(self.unknown_name(id)),
        }
    }

    fn unknown_name(&self, id: &ast::Ident) -> Diagnostic {
        let mut names: Vec<&str> = self
            .scopes
            .iter()
            .flatten()
            .map(|(n, _)| n.as_str())
            .chain(self.ctx.tensors.iter().map(|t| t.name.as_str()))
            .chain(self.ctx.scalars.iter().map(|t| t.name.as_str()))
            .chain(self.lets.keys().map(String::as_str))
            .collect();
        names.sort_unstable();
        names.dedup();
        Diagnostic::new(id.span, format!("unknown name `{}`", id.name))
            .label("not defined")
            .note(format!("names in scope here: {}", names.join(", ")))
    }

    fn readable(&self, t: u32, span: Span) -> R<()> {
        let decl = &self.ctx.tensors[t as usize];
        if decl.readable {
            Ok(())
        } else {
            Err(Diagnostic::new(
                span,
                format!(
                    "`{}` is an output: a formula reads only inputs (and inout tensors' values at launch)",
                    decl.name
                ),
            ))
        }
    }

    /// The extent of axis `axis` of `target`, when known.
    fn extent(&self, target: Target, axis: usize) -> Option<u64> {
        match target {
            Target::Tensor(t) => self.ctx.tensors[t as usize].shape.get(axis).copied(),
            Target::Let(l) => self.hir.lets[l as usize]
                .extents
                .get(axis)
                .copied()
                .flatten(),
        }
    }

    fn index(&mut self, base: &Expr, subs: &[Sub], span: Span) -> R<NodeId> {
        // `f(…)[j]`: the element of a vector-valued call.
        if let ExprKind::Call { func, args } = &base.kind
            && let Some(&f) = self.fns.get(&func.name)
        {
            if self.hir.fns[f as usize].out.is_none() {
                return Err(Diagnostic::new(
                    span,
                    format!("`{}` returns a number, not a vector", func.name),
                ));
            }
            let [Sub::At(j)] = subs else {
                return Err(Diagnostic::new(
                    span,
                    "a function's vector result takes exactly one subscript",
                ));
            };
            let j = self.subscript(j)?;
            return self.call(func, f, args, Some(j), span);
        }
        let ExprKind::Name(id) = &base.kind else {
            return Err(Diagnostic::new(
                base.span,
                "only tensors, bindings, vectors and vector-valued calls can be subscripted",
            ));
        };
        if subs.iter().any(|s| !matches!(s, Sub::At(_))) {
            return Err(Diagnostic::new(
                span,
                "a slice (`:` or `lo..hi`) is a vector: pass it to a function such as `softmax(x[i, :])`",
            ));
        }
        let at: Vec<&Expr> = subs
            .iter()
            .filter_map(|s| match s {
                Sub::At(e) => Some(e),
                _ => None,
            })
            .collect();
        if let Some(Local::Vector(v)) = self.lookup_local(&id.name) {
            let [k] = at.as_slice() else {
                return Err(Diagnostic::new(
                    span,
                    format!("`{}` is a vector: one subscript", id.name),
                ));
            };
            let k = self.subscript(k)?;
            let free = self.union_free(self.hir.info(k).free.iter().copied().chain([v]));
            return Ok(self.push(Node::VecElem { var: v, sub: k }, span, Kind::Real, free));
        }
        let (target, rank, kind) = if let Some(&l) = self.lets.get(&id.name) {
            let def = &self.hir.lets[l as usize];
            (Target::Let(l), def.idx.len(), self.hir.info(def.body).kind)
        } else if let Some(t) = self.tensor(&id.name) {
            self.readable(t, id.span)?;
            (
                Target::Tensor(t),
                self.ctx.tensors[t as usize].shape.len(),
                Kind::Real,
            )
        } else if self.lookup_local(&id.name).is_some() || self.scalar(&id.name).is_some() {
            return Err(Diagnostic::new(
                id.span,
                format!("`{}` is a number and cannot be subscripted", id.name),
            ));
        } else {
            return Err(self.unknown_name(id));
        };
        if at.len() != rank {
            return Err(Diagnostic::new(
                span,
                format!(
                    "`{}` has {rank} dimensions but {} subscripts are given",
                    id.name,
                    at.len()
                ),
            ));
        }
        let mut nodes = Vec::new();
        for e in at {
            nodes.push(self.subscript(e)?);
        }
        let free = self.union_free(nodes.iter().flat_map(|&n| self.hir.info(n).free.clone()));
        Ok(self.push(
            Node::Elem {
                target,
                subs: nodes,
            },
            span,
            kind,
            free,
        ))
    }

    /// A call argument for a vector parameter.
    fn vector_arg(&mut self, e: &Expr) -> R<VecRef> {
        match &e.kind {
            ExprKind::Name(id) => match self.lookup_local(&id.name) {
                Some(Local::Vector(v)) => Ok(VecRef::Param(v)),
                _ => {
                    if let Some(t) = self.tensor(&id.name)
                        && self.ctx.tensors[t as usize].shape.len() == 1
                    {
                        self.readable(t, id.span)?;
                        return Ok(VecRef::Slice {
                            target: Target::Tensor(t),
                            subs: vec![None],
                            axis: 0,
                            lo: None,
                            hi: None,
                            span: e.span,
                        });
                    }
                    Err(
                        Diagnostic::new(e.span, "expected a vector (a slice such as `x[i, :]`)")
                            .label("not a vector"),
                    )
                }
            },
            ExprKind::Index { base, subs } => {
                let ExprKind::Name(id) = &base.kind else {
                    return Err(Diagnostic::new(
                        e.span,
                        "expected a vector (a slice such as `x[i, :]`)",
                    ));
                };
                let target = if let Some(&l) = self.lets.get(&id.name) {
                    Target::Let(l)
                } else if let Some(t) = self.tensor(&id.name) {
                    self.readable(t, id.span)?;
                    Target::Tensor(t)
                } else {
                    return Err(Diagnostic::new(
                        id.span,
                        format!(
                            "`{}` cannot be sliced (only tensors and bindings can)",
                            id.name
                        ),
                    ));
                };
                let rank = match target {
                    Target::Tensor(t) => self.ctx.tensors[t as usize].shape.len(),
                    Target::Let(l) => self.hir.lets[l as usize].idx.len(),
                };
                if subs.len() != rank {
                    return Err(Diagnostic::new(
                        e.span,
                        format!(
                            "`{}` has {rank} dimensions but {} subscripts are given",
                            id.name,
                            subs.len()
                        ),
                    ));
                }
                let open: Vec<usize> = subs
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| !matches!(s, Sub::At(_)))
                    .map(|(k, _)| k)
                    .collect();
                let [axis] = open.as_slice() else {
                    return Err(Diagnostic::new(
                        e.span,
                        "a vector argument needs exactly one open axis (`:` or `lo..hi`)",
                    ));
                };
                let axis = *axis;
                let mut nodes = Vec::new();
                let (mut lo, mut hi) = (None, None);
                for s in subs {
                    match s {
                        Sub::At(x) => nodes.push(Some(self.subscript(x)?)),
                        Sub::All(sp) => {
                            if self.extent(target, axis).is_none() {
                                return Err(Diagnostic::new(
                                    *sp,
                                    format!("the extent of this axis of `{}` is not declared", id.name),
                                )
                                .note(format!(
                                    "write a range (`{}[…, 0..N]`) or declare it: `let {}[i in 0..M, j in 0..N] = …`",
                                    id.name, id.name
                                )));
                            }
                            nodes.push(None);
                        }
                        Sub::Range(a, b) => {
                            lo = Some(self.subscript(a)?);
                            hi = Some(self.subscript(b)?);
                            nodes.push(None);
                        }
                    }
                }
                Ok(VecRef::Slice {
                    target,
                    subs: nodes,
                    axis,
                    lo,
                    hi,
                    span: e.span,
                })
            }
            _ => Err(
                Diagnostic::new(e.span, "expected a vector (a slice such as `x[i, :]`)")
                    .label("not a vector"),
            ),
        }
    }

    fn call(
        &mut self,
        func: &ast::Ident,
        f: FnId,
        args: &[Expr],
        out: Option<NodeId>,
        span: Span,
    ) -> R<NodeId> {
        let params = self.hir.fns[f as usize].params.clone();
        if params.len() != args.len() {
            return Err(Diagnostic::new(
                span,
                format!(
                    "`{}` takes {} arguments but {} are given",
                    func.name,
                    params.len(),
                    args.len()
                ),
            ));
        }
        let mut hargs = Vec::new();
        for (p, a) in params.iter().zip(args) {
            hargs.push(match p {
                ParamDef::Scalar(_) => {
                    let n = self.expr(a)?;
                    self.require(n, &[Kind::Int, Kind::Real], "a number")?;
                    Arg::Scalar(n)
                }
                ParamDef::Vector { .. } => Arg::Vector(self.vector_arg(a)?),
            });
        }
        let free = self.union_free(
            hargs
                .iter()
                .flat_map(|a| self.arg_free(a))
                .chain(out.iter().flat_map(|&o| self.hir.info(o).free.clone())),
        );
        let kind = match self.hir.info(self.hir.fns[f as usize].body).kind {
            Kind::Bool => Kind::Bool,
            _ => Kind::Real,
        };
        Ok(self.push(
            Node::Call {
                f,
                args: hargs,
                out,
            },
            span,
            kind,
            free,
        ))
    }

    fn builtin(&mut self, func: &ast::Ident, args: &[Expr], span: Span) -> R<NodeId> {
        let Some(b) = Builtin::of(&func.name) else {
            let mut known: Vec<&str> = self.fns.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(Diagnostic::new(func.span, format!("unknown function `{}`", func.name))
                .label("not defined")
                .note(format!(
                    "builtins: exp exp2 log log2 sqrt rsqrt tanh erf sin cos abs pow max min where; \
                     reductions: sum prod max min (`sum(j in 0..N, e)`); defined: {}",
                    known.join(" ")
                )));
        };
        let (lo, hi) = b.arity();
        if args.len() < lo || args.len() > hi {
            return Err(Diagnostic::new(
                span,
                format!(
                    "`{}` takes {} arguments but {} are given",
                    func.name,
                    if lo == hi {
                        lo.to_string()
                    } else {
                        format!("at least {lo}")
                    },
                    args.len()
                ),
            ));
        }
        let mut nodes = Vec::new();
        for a in args {
            nodes.push(self.expr(a)?);
        }
        let kind = match b {
            Builtin::Where => {
                self.require(nodes[0], &[Kind::Bool], "a condition")?;
                self.require(nodes[1], &[Kind::Int, Kind::Real], "a number")?;
                self.require(nodes[2], &[Kind::Int, Kind::Real], "a number")?;
                if nodes[1..]
                    .iter()
                    .all(|&n| self.hir.info(n).kind == Kind::Int)
                {
                    Kind::Int
                } else {
                    Kind::Real
                }
            }
            Builtin::Max | Builtin::Min | Builtin::Abs => {
                for &n in &nodes {
                    self.require(n, &[Kind::Int, Kind::Real], "a number")?;
                }
                if nodes.iter().all(|&n| self.hir.info(n).kind == Kind::Int) {
                    Kind::Int
                } else {
                    Kind::Real
                }
            }
            _ => {
                for &n in &nodes {
                    self.require(n, &[Kind::Int, Kind::Real], "a number")?;
                }
                Kind::Real
            }
        };
        let free = self.union_free(nodes.iter().flat_map(|&n| self.hir.info(n).free.clone()));
        Ok(self.push(Node::Builtin { f: b, args: nodes }, span, kind, free))
    }
}

/// `v` as an `i64`, when it is an integer that fits.
pub(crate) fn rat_to_i64(v: &BigRational) -> Option<i64> {
    if v.is_integer() {
        v.to_integer().to_i64()
    } else {
        None
    }
}
