//! Lifting: one formula for all the element terms of an output tensor
//! (issue 16 item 3, the simplest sound version).
//!
//! [`lift_tensor`] generalises the element terms by anti-unification:
//! every element's term is walked in lock step with the others; nodes of
//! one kind with the same operator recurse, equal constants stay, and the
//! input leaves `x[flat]` that differ across elements must have a flat
//! index that is affine in the element's coordinates (solved exactly and
//! checked at every element), which becomes subscripts of `x`. The
//! operands of a sum, product, max or min (nested ones of the same
//! operator flattened: the term store caps flattening) are grouped by
//! their shape (the term with input indices erased): a group of one
//! operand is generalised in place, a group of several is tried as a
//! reduction over a new index running over the group
//! (`sum(i2 in 0..K, …)`), its operands ordered by their smallest input
//! leaf, and else operand by operand.
//!
//! The result is a *candidate*: it is printed as lifted only after the
//! caller has instantiated it at every element and proved each instance
//! equal to the element's term (`ptxeq lift` does so with the formula
//! check). What does not lift (a `select`, booleans, operands whose shapes
//! differ between elements, a non-affine index) is an error naming it.

use std::collections::{HashMap, HashSet};

use num_rational::BigRational;
use num_traits::{One, Zero};
use ptxeq_terms::{Func, Node, Rat, TermId, Terms};

use crate::lifted::{self, Def};

/// The names and shapes of the input numbers (the check's tensors, then
/// its symbolic scalars from `first_symbol` on).
pub struct Naming<'a> {
    pub names: &'a [String],
    pub shapes: &'a [Vec<u64>],
    pub first_symbol: u32,
}

/// Operands of one shape generalised one by one (not as a reduction) at
/// most: beyond it the formula would be a list of elements, not a formula.
const MAX_POSITIONAL: usize = 4;

/// Instances of one sub-term generalised at most: beyond it a
/// deterministic pseudo-random sample of this many (the first and last
/// kept) stands for them. Anti-unification only proposes the formula —
/// every element is then proved equal to its instance — so a sample
/// costs nothing in soundness, while nested reductions (attention:
/// elements × keys × head dimensions) would otherwise multiply the
/// instances into the billions.
const SAMPLE: usize = 512;

/// An input leaf: tensor number and flat index.
type Leaf = (u32, u64);

/// Why a tensor did not lift.
pub type Why = String;

#[derive(Clone, Debug)]
enum G {
    Const(Rat),
    Inf(bool),
    /// Input `tensor` at the flat index `c0 + Σ coef[v]·var[v]`; `subs`:
    /// the same read as one affine subscript per dimension, when each
    /// dimension's coordinate fits on its own (it then prints as is, and
    /// its bounds can guard a reduction).
    Input {
        tensor: u32,
        c0: i64,
        coef: Vec<i64>,
        subs: Option<Vec<Aff>>,
    },
    Recip(Box<G>),
    Exp(Box<G>),
    Func(Func, Box<G>),
    Pow(Box<G>, Box<G>),
    Nary(Op, Vec<G>),
    /// `op(v0 in 0..n0, v1 in 0..n1, …, where(guard, body, identity))`:
    /// one range per index (several when a group's rank splits into a
    /// convolution's channel and taps); an upper bound `n` may be affine in
    /// the enclosing indices (a causal prefix `0..i0 + 1`); every `guard`
    /// condition is `aff >= 0` (a padded convolution's in-bounds taps).
    Reduce {
        op: Op,
        ranges: Vec<(usize, Aff)>,
        guard: Vec<Aff>,
        body: Box<G>,
    },
}

/// An affine integer expression `c0 + Σ coef[v]·var_v` over the index
/// variables (element coordinates, then enclosing reduction indices).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Aff {
    c0: i64,
    coef: Vec<i64>,
}

impl Aff {
    fn constant(c0: i64) -> Aff {
        Aff {
            c0,
            coef: Vec::new(),
        }
    }

    fn as_const(&self) -> Option<i64> {
        self.coef.iter().all(|&c| c == 0).then_some(self.c0)
    }

    fn at(&self, vars: &[i64]) -> i64 {
        self.c0 + self.coef.iter().zip(vars).map(|(c, v)| c * v).sum::<i64>()
    }

    fn uses(&self, v: usize) -> bool {
        self.coef.get(v).is_some_and(|&c| c != 0)
    }

    /// `self - other`.
    fn minus(&self, other: &Aff) -> Aff {
        let n = self.coef.len().max(other.coef.len());
        Aff {
            c0: self.c0 - other.c0,
            coef: (0..n)
                .map(|k| {
                    self.coef.get(k).copied().unwrap_or(0) - other.coef.get(k).copied().unwrap_or(0)
                })
                .collect(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Mul,
    Max,
    Min,
}

/// One instance of a sub-term: the values of the index variables (the
/// element's coordinates, then enclosing reduction indices) and the term.
type Inst = (Vec<i64>, TermId);

struct Lifter<'t> {
    terms: &'t Terms,
    /// Input shapes by input number (scalars: none).
    shapes: &'t [Vec<u64>],
    shape: HashMap<TermId, u64>,
    least: HashMap<TermId, (u32, u64)>,
}

/// The candidate formula of output `name` (rank `rank`) from its element
/// terms (`(coordinates, term)`), as one definition `name[i0, …] = …;`
/// with its repeated reductions bound by `let`s ([`Def::text`] is its
/// spec text).
pub fn lift_tensor(
    terms: &Terms,
    name: &str,
    rank: usize,
    elements: &[(Vec<u64>, TermId)],
    naming: &Naming<'_>,
) -> Result<Def, Why> {
    if elements.is_empty() {
        return Err("no element written".into());
    }
    let mut l = Lifter {
        terms,
        shapes: naming.shapes,
        shape: HashMap::new(),
        least: HashMap::new(),
    };
    let insts: Vec<Inst> = elements
        .iter()
        .map(|(c, t)| (c.iter().map(|&x| x as i64).collect(), *t))
        .collect();
    let g = match l.generalise(&insts, rank) {
        Ok(g) => g,
        Err(why) => match l.majority(&insts, rank) {
            Some(g) => g,
            None if why.contains("not affine") => {
                return lift_tiled(terms, name, rank, &insts, naming).ok_or(why);
            }
            None => return Err(why),
        },
    };
    let def = Def {
        tensor: name.to_string(),
        vars: (0..rank).map(var_name).collect(),
        lets: Vec::new(),
        value: to_ast(&g, naming)?,
    };
    Ok(def.folded(naming.names))
}

/// Tile sizes tried when an index is not affine in the coordinates.
const TILES: [u64; 4] = [64, 32, 16, 8];

/// A retry for reads whose index is piecewise affine by tiles (a tiled
/// transpose writing tiles at swapped offsets): each coordinate `c` of an
/// axis that `T` divides into several tiles is split into `c / T` and
/// `c % T`, the elements are generalised over the split coordinates, and
/// the formula's subscripts are written back over the original ones
/// (`inp[(i0 % 32), 32 * (i0 / 32) + i1]`). The tiled coordinates appear
/// in the tree as variables named `(i0 / 32)` and `(i0 % 32)`. Like any
/// generalisation, only a proposal: the caller verifies it.
fn lift_tiled(
    terms: &Terms,
    name: &str,
    rank: usize,
    insts: &[Inst],
    naming: &Naming<'_>,
) -> Option<Def> {
    let extent: Vec<i64> = (0..rank)
        .map(|d| insts.iter().map(|(c, _)| c[d]).max().unwrap_or(0) + 1)
        .collect();
    for t in TILES {
        let t = t as i64;
        let split: Vec<bool> = extent.iter().map(|&e| e > t && e % t == 0).collect();
        if !split.contains(&true) {
            continue;
        }
        // The split coordinates' names over the original ones.
        let mut names = Vec::new();
        for (d, &s) in split.iter().enumerate() {
            if s {
                names.push(format!("({} / {t})", var_name(d)));
                names.push(format!("({} % {t})", var_name(d)));
            } else {
                names.push(var_name(d));
            }
        }
        let tiled: Vec<Inst> = insts
            .iter()
            .map(|(c, term)| {
                let mut v = Vec::with_capacity(names.len());
                for (d, &s) in split.iter().enumerate() {
                    if s {
                        v.push(c[d].div_euclid(t));
                        v.push(c[d].rem_euclid(t));
                    } else {
                        v.push(c[d]);
                    }
                }
                (v, *term)
            })
            .collect();
        let n = names.len();
        let mut l = Lifter {
            terms,
            shapes: naming.shapes,
            shape: HashMap::new(),
            least: HashMap::new(),
        };
        let Ok(g) = l.generalise(&tiled, n) else {
            continue;
        };
        let Ok(mut value) = to_ast(&g, naming) else {
            continue;
        };
        // Reductions would name their indices after the split coordinates;
        // keep this retry to reductions-free formulas, whose variables
        // are exactly the split coordinates.
        if has_reduce(&value) {
            continue;
        }
        let map: HashMap<String, String> = (0..n).map(var_name).zip(names).collect();
        rename(&mut value, &map);
        let def = Def {
            tensor: name.to_string(),
            vars: (0..rank).map(var_name).collect(),
            lets: Vec::new(),
            value,
        };
        return Some(def);
    }
    None
}

fn has_reduce(e: &lifted::Expr) -> bool {
    use lifted::Expr;
    match e {
        Expr::Reduce { .. } => true,
        Expr::Recip { arg } => has_reduce(arg),
        Expr::Call { args, .. } | Expr::Nary { args, .. } => args.iter().any(has_reduce),
        _ => false,
    }
}

/// Renames the index variables of every subscript in `e` by `map`.
fn rename(e: &mut lifted::Expr, map: &HashMap<String, String>) {
    use lifted::Expr;
    let fix = |i: &mut lifted::Index| {
        for (v, _) in &mut i.terms {
            if let Some(n) = map.get(v.as_str()) {
                v.clone_from(n);
            }
        }
    };
    match e {
        Expr::Read { index, .. } => index.iter_mut().for_each(fix),
        Expr::Ref { args, .. } => args.iter_mut().for_each(fix),
        Expr::Recip { arg } => rename(arg, map),
        Expr::Call { args, .. } | Expr::Nary { args, .. } => {
            args.iter_mut().for_each(|a| rename(a, map))
        }
        _ => {}
    }
}

fn op_of(n: &Node) -> Option<(Op, &[TermId])> {
    match n {
        Node::Add(o) => Some((Op::Add, o)),
        Node::Mul(o) => Some((Op::Mul, o)),
        Node::Max(o) => Some((Op::Max, o)),
        Node::Min(o) => Some((Op::Min, o)),
        _ => None,
    }
}

impl Lifter<'_> {
    fn node(&self, t: TermId) -> &Node {
        self.terms.node(t)
    }

    /// The operands of `t` for operator `op`, nested nodes of the same
    /// operator flattened (associativity).
    fn operands(&self, t: TermId, op: Op, out: &mut Vec<TermId>) {
        match op_of(self.node(t)) {
            Some((o, ops)) if o == op => {
                for &c in ops {
                    self.operands(c, op, out);
                }
            }
            _ => out.push(t),
        }
    }

    /// A hash of `t` with input indices erased (nested same-operator
    /// nodes flattened, operands unordered).
    fn shape(&mut self, t: TermId) -> u64 {
        if let Some(&h) = self.shape.get(&t) {
            return h;
        }
        use std::hash::{Hash, Hasher};
        let mut s = std::collections::hash_map::DefaultHasher::new();
        let n = self.node(t).clone();
        match &n {
            Node::Input { tensor, .. } => (0u8, *tensor).hash(&mut s),
            Node::Const(r) => (1u8, r.to_string()).hash(&mut s),
            _ => {
                std::mem::discriminant(&n).hash(&mut s);
                if let Node::Func(f, _) = &n {
                    f.name().hash(&mut s);
                }
                let kids = match op_of(&n) {
                    Some((op, _)) => {
                        let mut v = Vec::new();
                        self.operands(t, op, &mut v);
                        v
                    }
                    None => children(&n),
                };
                let mut hs: Vec<u64> = kids.into_iter().map(|c| self.shape(c)).collect();
                if op_of(&n).is_some() {
                    // Operands unordered, and counted only as one or
                    // several: a reduction's length may vary between
                    // elements (a causal prefix, a padded border).
                    hs.sort_unstable();
                    let mut counted: Vec<(u64, bool)> = Vec::new();
                    for h in hs {
                        match counted.last_mut() {
                            Some((l, many)) if *l == h => *many = true,
                            _ => counted.push((h, false)),
                        }
                    }
                    counted.hash(&mut s);
                } else {
                    hs.hash(&mut s);
                }
            }
        }
        let h = s.finish();
        self.shape.insert(t, h);
        h
    }

    /// `ops` ordered by their shallowest distinguishing input leaf: each
    /// operand's leaves with their least depth, pairs common to every
    /// operand set aside, the least remaining `(depth, leaf)` as the key. A
    /// softmax denominator's summands `exp(x[j] - max(…))` all reach every
    /// `x` through the max, deeper down; their own `x[j]` is shallow.
    fn ordered(&mut self, ops: &[TermId]) -> Vec<TermId> {
        if ops.len() < 2 {
            return ops.to_vec();
        }
        let depths: Vec<HashMap<Leaf, u32>> = ops.iter().map(|&o| self.leaf_depths(o)).collect();
        let common: HashSet<(Leaf, u32)> = depths.iter().skip(1).fold(
            depths[0]
                .iter()
                .map(|(&l, &d)| (l, d))
                .collect::<HashSet<_>>(),
            |acc, m| {
                acc.into_iter()
                    .filter(|(l, d)| m.get(l) == Some(d))
                    .collect()
            },
        );
        let mut keyed: Vec<((u32, Leaf), Leaf, TermId)> = ops
            .iter()
            .zip(&depths)
            .map(|(&o, m)| {
                let own = m
                    .iter()
                    .filter(|(l, d)| !common.contains(&(**l, **d)))
                    .map(|(&l, &d)| (d, l))
                    .min()
                    .unwrap_or((u32::MAX, (u32::MAX, u64::MAX)));
                (own, self.least(o), o)
            })
            .collect();
        keyed.sort();
        keyed.into_iter().map(|(_, _, o)| o).collect()
    }

    /// Every input leaf of `t` with its least depth (breadth first, each
    /// node once).
    fn leaf_depths(&self, t: TermId) -> HashMap<Leaf, u32> {
        let mut out = HashMap::new();
        let mut seen = HashSet::new();
        let mut queue = std::collections::VecDeque::from([(t, 0u32)]);
        while let Some((n, d)) = queue.pop_front() {
            if !seen.insert(n) {
                continue;
            }
            match self.node(n) {
                Node::Input { tensor, index } => {
                    out.entry((*tensor, *index)).or_insert(d);
                }
                other => queue.extend(children(other).into_iter().map(|c| (c, d + 1))),
            }
        }
        out
    }

    /// The smallest input leaf of `t` (ordering key of reduction operands).
    fn least(&mut self, t: TermId) -> (u32, u64) {
        if let Some(&k) = self.least.get(&t) {
            return k;
        }
        let k = match self.node(t).clone() {
            Node::Input { tensor, index } => (tensor, index),
            n => children(&n)
                .into_iter()
                .map(|c| self.least(c))
                .min()
                .unwrap_or((u32::MAX, u64::MAX)),
        };
        self.least.insert(t, k);
        k
    }

    /// The elements whose terms share the most common shape, generalised
    /// alone when the others differ (the first row of a causal attention
    /// reduces to `v[0, c]`). Only a candidate: the caller verifies it at
    /// every element, the others included.
    fn majority(&mut self, insts: &[Inst], rank: usize) -> Option<G> {
        let mut classes: Vec<(u64, Vec<Inst>)> = Vec::new();
        for i in insts {
            let s = self.shape(i.1);
            match classes.iter_mut().find(|c| c.0 == s) {
                Some(c) => c.1.push(i.clone()),
                None => classes.push((s, vec![i.clone()])),
            }
        }
        if classes.len() < 2 {
            return None;
        }
        let most = classes.into_iter().max_by_key(|c| c.1.len())?.1;
        (most.len() > 1).then(|| self.generalise(&most, rank).ok())?
    }

    fn differ(&self, insts: &[Inst], what: &str) -> Why {
        let a = insts[0].1;
        let b = insts
            .iter()
            .map(|(_, t)| *t)
            .find(|&t| std::mem::discriminant(self.node(t)) != std::mem::discriminant(self.node(a)))
            .unwrap_or(a);
        format!(
            "{what}: `{}` vs `{}`",
            self.terms.display_limited(a, 80),
            self.terms.display_limited(b, 80)
        )
    }

    fn generalise(&mut self, insts: &[Inst], nvars: usize) -> Result<G, Why> {
        if insts.len() > SAMPLE {
            let s = sample(insts, SAMPLE);
            return self.generalise(&s, nvars);
        }
        let first = self.node(insts[0].1).clone();
        let same_kind = insts
            .iter()
            .all(|(_, t)| std::mem::discriminant(self.node(*t)) == std::mem::discriminant(&first));
        if !same_kind {
            return Err(self.differ(insts, "the elements' terms differ in kind"));
        }
        match first {
            Node::Const(r) => {
                if insts
                    .iter()
                    .all(|(_, t)| matches!(self.node(*t), Node::Const(q) if *q == r))
                {
                    Ok(G::Const(r))
                } else {
                    Err("a constant differs between elements".into())
                }
            }
            Node::PosInf => Ok(G::Inf(true)),
            Node::NegInf => Ok(G::Inf(false)),
            Node::Input { tensor, .. } => {
                let mut rows = Vec::with_capacity(insts.len());
                for (v, t) in insts {
                    match self.node(*t) {
                        Node::Input { tensor: k, index } if *k == tensor => {
                            rows.push((v.clone(), *index as i64))
                        }
                        _ => return Err("the elements read different tensors at one place".into()),
                    }
                }
                let subs = self.fit_subscripts(tensor, &rows, nvars);
                let (c0, coef) = fit_affine(&rows, nvars).ok_or_else(|| {
                    let shown: Vec<String> = rows
                        .iter()
                        .take(4)
                        .map(|(v, f)| format!("{v:?} → {f}"))
                        .collect();
                    format!(
                        "an input index is not affine in the element's coordinates and \
                         reduction indices (input #{tensor}: {}, …)",
                        shown.join(", ")
                    )
                })?;
                Ok(G::Input {
                    tensor,
                    c0,
                    coef,
                    subs,
                })
            }
            Node::Recip(_) | Node::Exp(_) | Node::Func(..) => {
                let mut kids = Vec::with_capacity(insts.len());
                for (v, t) in insts {
                    let a = match (self.node(*t), &first) {
                        (Node::Recip(a), _) | (Node::Exp(a), _) => *a,
                        (Node::Func(f, a), Node::Func(g, _)) if f == g => *a,
                        _ => {
                            return Err(
                                "the elements apply different functions at one place".into()
                            );
                        }
                    };
                    kids.push((v.clone(), a));
                }
                let g = Box::new(self.generalise(&kids, nvars)?);
                Ok(match first {
                    Node::Recip(_) => G::Recip(g),
                    Node::Exp(_) => G::Exp(g),
                    Node::Func(f, _) => G::Func(f, g),
                    _ => return Err("internal: unary kind".into()),
                })
            }
            Node::Pow(..) => {
                let mut a = Vec::new();
                let mut b = Vec::new();
                for (v, t) in insts {
                    if let Node::Pow(x, y) = self.node(*t) {
                        a.push((v.clone(), *x));
                        b.push((v.clone(), *y));
                    }
                }
                Ok(G::Pow(
                    Box::new(self.generalise(&a, nvars)?),
                    Box::new(self.generalise(&b, nvars)?),
                ))
            }
            ref n if op_of(n).is_some() => {
                let op = op_of(n).map(|(o, _)| o).unwrap_or(Op::Add);
                if insts
                    .iter()
                    .any(|(_, t)| op_of(self.node(*t)).map(|(o, _)| o) != Some(op))
                {
                    return Err(self.differ(insts, "the elements' operators differ"));
                }
                self.nary(insts, nvars, op)
            }
            other => Err(format!(
                "a {} does not lift (selects, comparisons, booleans and uninterpreted \
                 functions are not generalised)",
                kind_word(&other)
            )),
        }
    }

    /// A flattened n-ary node: operands grouped by shape; singletons in
    /// place, larger groups as reductions (else operand by operand). A
    /// group whose size differs between elements is a reduction over a
    /// range that varies ([`Lifter::varying`]).
    fn nary(&mut self, insts: &[Inst], nvars: usize, op: Op) -> Result<G, Why> {
        let mut grouped: Vec<Vec<(u64, Vec<TermId>)>> = Vec::with_capacity(insts.len());
        for (_, t) in insts {
            let mut ops = Vec::new();
            self.operands(*t, op, &mut ops);
            let mut groups: Vec<(u64, Vec<TermId>)> = Vec::new();
            for o in ops {
                let s = self.shape(o);
                match groups.iter_mut().find(|g| g.0 == s) {
                    Some(g) => g.1.push(o),
                    None => groups.push((s, vec![o])),
                }
            }
            for g in &mut groups {
                g.1 = self.ordered(&g.1);
            }
            grouped.push(groups);
        }
        // The groups in the first element's order (singletons first), every
        // element's groups aligned to it by shape.
        grouped[0].sort_by_key(|g| (g.1.len(), g.0));
        let layout: Vec<u64> = grouped[0].iter().map(|g| g.0).collect();
        for g in grouped.iter_mut().skip(1) {
            let mut shapes: Vec<u64> = g.iter().map(|x| x.0).collect();
            let mut want = layout.clone();
            shapes.sort_unstable();
            want.sort_unstable();
            if shapes != want {
                return Err(format!(
                    "the operands of a {} differ in shape between elements",
                    op_word(op)
                ));
            }
            g.sort_by_key(|x| layout.iter().position(|&s| s == x.0));
        }
        let mut parts = Vec::with_capacity(layout.len());
        for gi in 0..layout.len() {
            let lens: Vec<usize> = grouped.iter().map(|g| g[gi].1.len()).collect();
            let len = lens[0];
            if lens.iter().any(|&l| l != len) {
                parts.push(self.varying(insts, &grouped, gi, nvars, op, &lens)?);
                continue;
            }
            let at = |r: usize| -> Vec<Inst> {
                insts
                    .iter()
                    .zip(&grouped)
                    .map(|((v, _), g)| (v.clone(), g[gi].1[r]))
                    .collect()
            };
            if len == 1 {
                parts.push(self.generalise(&at(0), nvars)?);
                continue;
            }
            // A reduction over the group: its index is the operand's rank.
            match self.ranked(insts, &grouped, gi, nvars, &[len]) {
                Ok(body) => parts.push(G::Reduce {
                    op,
                    ranges: vec![(nvars, Aff::constant(len as i64))],
                    guard: Vec::new(),
                    body: Box::new(body),
                }),
                Err(_) if let Some(g) = self.factored(insts, &grouped, gi, nvars, op, len) => {
                    parts.push(g)
                }
                Err(why) if len > MAX_POSITIONAL => {
                    return Err(format!(
                        "{len} operands of a {} of one shape are not a reduction over an \
                         affine range: {why}",
                        op_word(op)
                    ));
                }
                Err(why) => {
                    for r in 0..len {
                        let g = self
                            .generalise(&at(r), nvars)
                            .map_err(|e| format!("{why}; operand by operand: {e}"))?;
                        parts.push(g);
                    }
                }
            }
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(G::Const(Rat::from_i64(0)))
        } else {
            G::Nary(op, parts)
        })
    }

    /// The body of group `gi` generalised with the operand's rank as the
    /// new indices: the rank split into mixed-radix digits over `dims`
    /// (outermost first; one dimension: the rank itself).
    fn ranked(
        &mut self,
        insts: &[Inst],
        grouped: &[Vec<(u64, Vec<TermId>)>],
        gi: usize,
        nvars: usize,
        dims: &[usize],
    ) -> Result<G, Why> {
        let mut sub: Vec<Inst> = Vec::new();
        for ((v, _), g) in insts.iter().zip(grouped) {
            for (r, &o) in g[gi].1.iter().enumerate() {
                let mut w = v.clone();
                w.extend(digits(r, dims));
                sub.push((w, o));
            }
        }
        self.generalise(&sub, nvars + dims.len())
    }

    /// The group `gi` as a reduction over several indices: the operand's
    /// rank split into mixed-radix digits, for each way of writing `len` as
    /// a product of two or three factors (outermost first), the first
    /// that generalises.
    fn factored(
        &mut self,
        insts: &[Inst],
        grouped: &[Vec<(u64, Vec<TermId>)>],
        gi: usize,
        nvars: usize,
        op: Op,
        len: usize,
    ) -> Option<G> {
        for dims in factorizations(len) {
            if let Ok(body) = self.ranked(insts, grouped, gi, nvars, &dims) {
                return Some(G::Reduce {
                    op,
                    ranges: ranges_of(nvars, &dims),
                    guard: Vec::new(),
                    body: Box::new(body),
                });
            }
        }
        None
    }

    /// A group whose number of operands (`lens`, per element) differs
    /// between elements, tried two ways:
    ///
    /// - a prefix: operand `r` is index `r`, the length is affine in the
    ///   enclosing indices (causal attention's `0..i0 + 1`);
    /// - a guarded range: the elements with the most operands give the
    ///   body over one or several indices; the reads of the body whose
    ///   subscripts involve those indices must stay inside their tensors
    ///   (`0 <= h + r - 1 <= 15`, a zero-padded convolution), and at every
    ///   element the operands must be exactly the index tuples where those
    ///   bounds hold (in order).
    ///
    /// Either is a candidate like the rest: verified at every element by
    /// the caller.
    fn varying(
        &mut self,
        insts: &[Inst],
        grouped: &[Vec<(u64, Vec<TermId>)>],
        gi: usize,
        nvars: usize,
        op: Op,
        lens: &[usize],
    ) -> Result<G, Why> {
        let prefix = self
            .ranked(insts, grouped, gi, nvars, &[0])
            .and_then(|body| {
                let rows: Vec<(Vec<i64>, i64)> = insts
                    .iter()
                    .zip(lens)
                    .map(|((v, _), &l)| (v.clone(), l as i64))
                    .collect();
                let (c0, coef) = fit_affine(&rows, nvars)
                    .ok_or("the number of operands is not affine in the enclosing indices")?;
                Ok(G::Reduce {
                    op,
                    ranges: vec![(nvars, Aff { c0, coef })],
                    guard: Vec::new(),
                    body: Box::new(body),
                })
            });
        let why = match prefix {
            Ok(g) => return Ok(g),
            Err(why) => why,
        };
        let most = lens.iter().copied().max().unwrap_or(0);
        let full: Vec<usize> = (0..insts.len()).filter(|&e| lens[e] == most).collect();
        let full_insts: Vec<Inst> = full.iter().map(|&e| insts[e].clone()).collect();
        let full_grouped: Vec<Vec<(u64, Vec<TermId>)>> =
            full.iter().map(|&e| grouped[e].clone()).collect();
        let mut candidates = vec![vec![most]];
        candidates.extend(factorizations(most));
        for dims in candidates {
            let Ok(body) = self.ranked(&full_insts, &full_grouped, gi, nvars, &dims) else {
                continue;
            };
            let new: Vec<usize> = (nvars..nvars + dims.len()).collect();
            // Bounds that hold over the whole range at every element (a
            // subscript that is the index itself) say nothing: dropped.
            let mut tuples: Vec<Vec<i64>> = Vec::with_capacity(insts.len() * most);
            for (v, _) in insts {
                for r in 0..most {
                    let mut w = v.clone();
                    w.extend(digits(r, &dims));
                    tuples.push(w);
                }
            }
            let guard: Vec<Aff> = self
                .bounds(&body, &new)
                .into_iter()
                .filter(|a| tuples.iter().any(|w| a.at(w) < 0))
                .collect();
            if guard.is_empty() {
                continue;
            }
            // Every element's operands against the index tuples that
            // pass the guard, in order.
            let mut sub: Vec<Inst> = Vec::new();
            let mut fits = true;
            'elements: for ((v, _), g) in insts.iter().zip(grouped) {
                let mut present = Vec::new();
                for r in 0..most {
                    let mut w = v.clone();
                    w.extend(digits(r, &dims));
                    if guard.iter().all(|a| a.at(&w) >= 0) {
                        present.push(w);
                    }
                }
                if present.len() != g[gi].1.len() {
                    fits = false;
                    break 'elements;
                }
                sub.extend(present.into_iter().zip(g[gi].1.iter().copied()));
            }
            if !fits {
                continue;
            }
            if let Ok(body) = self.generalise(&sub, nvars + dims.len()) {
                return Ok(G::Reduce {
                    op,
                    ranges: ranges_of(nvars, &dims),
                    guard,
                    body: Box::new(body),
                });
            }
        }
        Err(format!(
            "the operands of a {} differ in number between elements ({} to {most}) and are \
             neither a prefix whose length is affine in the indices ({why}) nor the in-bounds \
             part of a range",
            op_word(op),
            lens.iter().copied().min().unwrap_or(0)
        ))
    }

    /// The bounds `0 <= s` and `s <= n - 1` of every subscript `s` of an
    /// input read in `g` that involves one of the indices `vars` (`n`: the
    /// dimension), as conditions `aff >= 0`, without repeats.
    fn bounds(&self, g: &G, vars: &[usize]) -> Vec<Aff> {
        let mut out: Vec<Aff> = Vec::new();
        let mut add = |a: Aff| {
            if !out.contains(&a) {
                out.push(a);
            }
        };
        let mut stack = vec![g];
        while let Some(g) = stack.pop() {
            match g {
                G::Input {
                    tensor,
                    subs: Some(subs),
                    ..
                } => {
                    let Some(shape) = self.shapes.get(*tensor as usize) else {
                        continue;
                    };
                    for (s, &n) in subs.iter().zip(shape) {
                        if vars.iter().any(|&v| s.uses(v)) {
                            add(s.clone());
                            add(Aff::constant(n as i64 - 1).minus(s));
                        }
                    }
                }
                G::Const(_) | G::Inf(_) | G::Input { .. } => {}
                G::Recip(a) | G::Exp(a) | G::Func(_, a) => stack.push(a),
                G::Pow(a, b) => stack.extend([&**a, &**b]),
                G::Nary(_, parts) => stack.extend(parts),
                G::Reduce { body, .. } => stack.push(body),
            }
        }
        out
    }

    /// One affine subscript per dimension of input `tensor` read at the
    /// flat indices of `rows`, when every dimension's coordinate fits.
    fn fit_subscripts(
        &self,
        tensor: u32,
        rows: &[(Vec<i64>, i64)],
        nvars: usize,
    ) -> Option<Vec<Aff>> {
        let shape = self.shapes.get(tensor as usize)?;
        if shape.is_empty() {
            return None;
        }
        let mut per_dim: Vec<Vec<(Vec<i64>, i64)>> =
            vec![Vec::with_capacity(rows.len()); shape.len()];
        for (v, f) in rows {
            let mut rest = u64::try_from(*f).ok()?;
            for d in (0..shape.len()).rev() {
                let n = shape[d].max(1);
                per_dim[d].push((v.clone(), (rest % n) as i64));
                rest /= n;
            }
            if rest != 0 {
                return None;
            }
        }
        per_dim
            .iter()
            .map(|rows| fit_affine(rows, nvars).map(|(c0, coef)| Aff { c0, coef }))
            .collect()
    }
}

/// `n` of `insts` (the first and last among them), chosen by a fixed
/// pseudo-random sequence so that no index is sampled on a stride (a
/// stride that divides a reduction's length would hide its index), in
/// their original order.
fn sample(insts: &[Inst], n: usize) -> Vec<Inst> {
    let len = insts.len();
    let mut idx: Vec<usize> = (0..len).collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    // Partial Fisher-Yates over positions 1..len-1 (0 and len-1 kept).
    let inner = len.saturating_sub(2);
    let take = n.saturating_sub(2).min(inner);
    for k in 0..take {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = k + (x % (inner - k) as u64) as usize;
        idx.swap(1 + k, 1 + j);
    }
    let mut chosen: Vec<usize> = idx[1..1 + take].to_vec();
    chosen.push(0);
    chosen.push(len - 1);
    chosen.sort_unstable();
    chosen.dedup();
    chosen.into_iter().map(|i| insts[i].clone()).collect()
}

/// `r` as mixed-radix digits over `dims` (outermost first); a single
/// dimension (whatever its size) is `r` itself.
fn digits(r: usize, dims: &[usize]) -> Vec<i64> {
    if dims.len() == 1 {
        return vec![r as i64];
    }
    let mut out = vec![0i64; dims.len()];
    let mut rest = r;
    for (d, &n) in dims.iter().enumerate().rev() {
        out[d] = (rest % n) as i64;
        rest /= n;
    }
    out
}

/// Index `nvars + k` over `0..dims[k]`.
fn ranges_of(nvars: usize, dims: &[usize]) -> Vec<(usize, Aff)> {
    dims.iter()
        .enumerate()
        .map(|(k, &n)| (nvars + k, Aff::constant(n as i64)))
        .collect()
}

/// The ways of writing `n` as an ordered product of two, then three,
/// factors of at least 2.
fn factorizations(n: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for a in 2..n {
        if n.is_multiple_of(a) && n / a >= 2 {
            out.push(vec![a, n / a]);
        }
    }
    for a in 2..n {
        if !n.is_multiple_of(a) {
            continue;
        }
        let m = n / a;
        for b in 2..m {
            if m.is_multiple_of(b) && m / b >= 2 {
                out.push(vec![a, b, m / b]);
            }
        }
    }
    out
}

fn children(n: &Node) -> Vec<TermId> {
    match n {
        Node::Add(o)
        | Node::Mul(o)
        | Node::Max(o)
        | Node::Min(o)
        | Node::And(o)
        | Node::Or(o)
        | Node::Xor(o) => o.to_vec(),
        Node::Recip(a) | Node::Exp(a) | Node::Func(_, a) | Node::Not(a) => vec![*a],
        Node::Pow(a, b) | Node::Cmp(_, a, b) => vec![*a, *b],
        Node::Select(c, a, b) => vec![*c, *a, *b],
        Node::Apply(app) => app.args.to_vec(),
        _ => Vec::new(),
    }
}

fn kind_word(n: &Node) -> &'static str {
    match n {
        Node::Select(..) => "select",
        Node::Cmp(..) => "comparison",
        Node::Not(_) | Node::And(_) | Node::Or(_) | Node::Xor(_) | Node::BoolConst(_) => "boolean",
        Node::Apply(_) => "uninterpreted function",
        _ => "term",
    }
}

fn op_word(op: Op) -> &'static str {
    match op {
        Op::Add => "sum",
        Op::Mul => "product",
        Op::Max => "max",
        Op::Min => "min",
    }
}

/// Exact integer solution of `flat = c0 + Σ coef·vars` over every row, if
/// one exists (variables that never vary get coefficient 0).
fn fit_affine(rows: &[(Vec<i64>, i64)], nvars: usize) -> Option<(i64, Vec<i64>)> {
    let n = nvars + 1;
    // Echelon rows (at most n) chosen by elimination.
    let mut basis: Vec<Vec<BigRational>> = Vec::new();
    for r in rows {
        if basis.len() == n {
            break;
        }
        let mut v: Vec<BigRational> = vec![BigRational::one()];
        v.extend(r.0.iter().map(|&x| BigRational::from_integer(x.into())));
        v.push(BigRational::from_integer(r.1.into()));
        for b in &basis {
            let p = b.iter().position(|x| !x.is_zero())?;
            if !v[p].is_zero() {
                let f = &v[p] / &b[p];
                for k in 0..=n {
                    let d = &f * &b[k];
                    v[k] -= d;
                }
            }
        }
        if v[..n].iter().any(|x| !x.is_zero()) {
            basis.push(v);
        } else if !v[n].is_zero() {
            return None;
        }
    }
    // Back-substitution, pivots from the last; free variables are 0.
    let mut sol = vec![BigRational::zero(); n];
    basis.sort_by_key(|b| std::cmp::Reverse(b.iter().position(|x| !x.is_zero())));
    for b in &basis {
        let p = b.iter().position(|x| !x.is_zero())?;
        let mut rhs = b[n].clone();
        for k in p + 1..n {
            rhs -= &b[k] * &sol[k];
        }
        sol[p] = rhs / &b[p];
    }
    if sol.iter().any(|x| !x.is_integer()) {
        return None;
    }
    let ints: Vec<i64> = sol
        .iter()
        .map(|x| i64::try_from(x.to_integer()).ok())
        .collect::<Option<_>>()?;
    for (v, f) in rows {
        let mut acc = ints[0];
        for (c, x) in ints[1..].iter().zip(v) {
            acc = acc.checked_add(c.checked_mul(*x)?)?;
        }
        if acc != *f {
            return None;
        }
    }
    Some((ints[0], ints[1..].to_vec()))
}

/// Whether `g` reads index variable `v`.
fn uses(g: &G, v: usize) -> bool {
    match g {
        G::Const(_) | G::Inf(_) => false,
        G::Input { coef, .. } => coef.get(v).is_some_and(|&c| c != 0),
        G::Recip(a) | G::Exp(a) | G::Func(_, a) => uses(a, v),
        G::Pow(a, b) => uses(a, v) || uses(b, v),
        G::Nary(_, parts) => parts.iter().any(|p| uses(p, v)),
        G::Reduce {
            ranges,
            guard,
            body,
            ..
        } => {
            ranges.iter().any(|(_, n)| n.uses(v))
                || guard.iter().any(|a| a.uses(v))
                || uses(body, v)
        }
    }
}

/// Index variable `v`: the element's coordinates are `i0, i1, …`, the
/// reduction indices continue the numbering.
fn var_name(v: usize) -> String {
    format!("i{v}")
}

/// `a` with the index variables named.
fn index_of(a: &Aff) -> lifted::Index {
    lifted::Index {
        constant: a.c0,
        terms: a
            .coef
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(v, c)| (var_name(v), *c))
            .collect(),
    }
}

fn lifted_op(op: Op) -> lifted::Op {
    match op {
        Op::Add => lifted::Op::Sum,
        Op::Mul => lifted::Op::Prod,
        Op::Max => lifted::Op::Max,
        Op::Min => lifted::Op::Min,
    }
}

/// `g` as a formula tree. Operands of `+` and `*` are put in a reading
/// order: in a product the constant first, in a sum the negated terms
/// (printed as subtractions) and then the constant last; otherwise by the
/// first tensor they read (the spec's order), then by their text.
fn to_ast(g: &G, naming: &Naming<'_>) -> Result<lifted::Expr, Why> {
    use lifted::Expr;
    Ok(match g {
        G::Const(r) => {
            let value = r.to_string();
            match value
                .parse::<num_rational::BigRational>()
                .ok()
                .and_then(|b| crate::named::name_of(&b))
            {
                Some(text) => Expr::Named { value, text },
                None => Expr::Num { value },
            }
        }
        G::Inf(pos) => Expr::Inf { negative: !pos },
        G::Input {
            tensor,
            c0,
            coef,
            subs,
        } => {
            let name = naming
                .names
                .get(*tensor as usize)
                .ok_or_else(|| format!("input number {tensor} has no name"))?
                .clone();
            if *tensor >= naming.first_symbol {
                return Ok(Expr::Scalar { name });
            }
            let subs = match subs {
                Some(s) => s.clone(),
                None => {
                    let shape = naming
                        .shapes
                        .get(*tensor as usize)
                        .ok_or_else(|| format!("input number {tensor} has no shape"))?;
                    subscripts(*c0, coef, shape).ok_or_else(|| {
                        format!(
                            "an index of `{name}` does not split into subscripts of its \
                             shape {shape:?}"
                        )
                    })?
                }
            };
            Expr::Read {
                tensor: name,
                index: subs.iter().map(index_of).collect(),
            }
        }
        G::Recip(a) => Expr::Recip {
            arg: Box::new(to_ast(a, naming)?),
        },
        G::Exp(a) => Expr::Call {
            func: "exp".into(),
            args: vec![to_ast(a, naming)?],
        },
        G::Func(f, a) => Expr::Call {
            func: match f {
                Func::Ex2 => "exp2",
                Func::Lg2 => "log2",
                f => f.name(),
            }
            .into(),
            args: vec![to_ast(a, naming)?],
        },
        G::Pow(a, b) => Expr::Call {
            func: "pow".into(),
            args: vec![to_ast(a, naming)?, to_ast(b, naming)?],
        },
        G::Nary(op, parts) => {
            let mut keyed: Vec<((u8, u32, String), Expr)> = Vec::with_capacity(parts.len());
            for p in parts {
                let e = to_ast(p, naming)?;
                let constant = matches!(p, G::Const(_));
                let negated = matches!(p, G::Nary(Op::Mul, f)
                    if f.iter().any(|x| matches!(x, G::Const(r) if r.is_negative())));
                let class = match (op, constant) {
                    (Op::Mul, true) => 0,
                    (Op::Add, false) if negated => 1,
                    (Op::Add | Op::Max | Op::Min, false) => 0,
                    (Op::Mul, false) => 1,
                    _ => 2,
                };
                let mut text = String::new();
                e.write(&mut text);
                keyed.push(((class, first_read(p), text), e));
            }
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            Expr::Nary {
                op: lifted_op(*op),
                args: keyed.into_iter().map(|(_, e)| e).collect(),
            }
        }
        // A reduction whose body does not use its index: `x * x` is a
        // product of two equal operands, written `x^2`.
        G::Reduce {
            op,
            ranges,
            guard,
            body,
        } if guard.is_empty()
            && ranges.len() == 1
            && !uses(body, ranges[0].0)
            && ranges[0].1.as_const().is_some() =>
        {
            let len = ranges[0].1.as_const().unwrap_or(0);
            let b = to_ast(body, naming)?;
            let n = Expr::Num {
                value: len.to_string(),
            };
            match op {
                Op::Mul => Expr::Call {
                    func: "pow".into(),
                    args: vec![b, n],
                },
                Op::Add => Expr::Nary {
                    op: lifted::Op::Prod,
                    args: vec![n, b],
                },
                Op::Max | Op::Min => b,
            }
        }
        G::Reduce {
            op,
            ranges,
            guard,
            body,
        } => Expr::Reduce {
            op: lifted_op(*op),
            ranges: ranges
                .iter()
                .map(|(v, n)| lifted::Range {
                    var: var_name(*v),
                    hi: index_of(n),
                })
                .collect(),
            guard: guard.iter().map(index_of).collect(),
            body: Box::new(to_ast(body, naming)?),
        },
    })
}

/// The least input number `g` reads (ordering key of operands).
fn first_read(g: &G) -> u32 {
    match g {
        G::Const(_) | G::Inf(_) => u32::MAX,
        G::Input { tensor, .. } => *tensor,
        G::Recip(a) | G::Exp(a) | G::Func(_, a) => first_read(a),
        G::Pow(a, b) => first_read(a).min(first_read(b)),
        G::Nary(_, parts) => parts.iter().map(first_read).min().unwrap_or(u32::MAX),
        G::Reduce { body, .. } => first_read(body),
    }
}

/// The subscripts of a flat index `c0 + Σ coef[v]·i_v` into `shape`: each
/// variable's coefficient must be a multiple of one dimension's stride
/// (its multiplier below the next outer stride), the constant splits by
/// mixed radix. The lifted formula is verified, so a split that reads the
/// wrong element cannot pass.
fn subscripts(c0: i64, coef: &[i64], shape: &[u64]) -> Option<Vec<Aff>> {
    let rank = shape.len();
    let mut strides = vec![1i64; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].checked_mul(i64::try_from(shape[d + 1]).ok()?)?;
    }
    let mut out: Vec<Aff> = vec![
        Aff {
            c0: 0,
            coef: vec![0; coef.len()],
        };
        rank
    ];
    for (v, &a) in coef.iter().enumerate() {
        if a == 0 {
            continue;
        }
        let d = (0..rank).rev().find(|&d| {
            a % strides[d] == 0 && (d == 0 || (a / strides[d]).abs() < shape[d] as i64)
        })?;
        out[d].coef[v] += a / strides[d];
    }
    let mut rest = c0;
    for d in 0..rank {
        out[d].c0 = rest.div_euclid(strides[d]);
        rest = rest.rem_euclid(strides[d]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_fits() {
        let rows: Vec<(Vec<i64>, i64)> = (0..4)
            .flat_map(|i| (0..3).map(move |k| (vec![i, k], 3 * i + k + 5)))
            .collect();
        assert_eq!(fit_affine(&rows, 2), Some((5, vec![3, 1])));
        let bad: Vec<(Vec<i64>, i64)> = (0..4).map(|i| (vec![i], i * i)).collect();
        assert_eq!(fit_affine(&bad, 1), None);
        let flat: Vec<(Vec<i64>, i64)> = (0..4).map(|i| (vec![i, 0], 2 * i)).collect();
        assert_eq!(fit_affine(&flat, 2), Some((0, vec![2, 0])));
    }

    #[test]
    fn subscripts_split_by_stride() {
        let text = |s: Option<Vec<Aff>>| -> Vec<String> {
            s.expect("splits")
                .iter()
                .map(|a| index_of(a).text())
                .collect()
        };
        assert_eq!(text(subscripts(1, &[8, 1], &[4, 8])), ["i0", "i1 + 1"]);
        assert_eq!(text(subscripts(0, &[1, 4], &[8, 4])), ["i1", "i0"]);
    }

    fn naming<'a>(names: &'a [String], shapes: &'a [Vec<u64>]) -> Naming<'a> {
        Naming {
            names,
            shapes,
            first_symbol: names.len() as u32,
        }
    }

    #[test]
    fn a_row_sum_lifts_to_a_reduction() {
        // y[i] = Σ_k x[i, k] · w[k] + b[i], x: [3, 40] (over the flatten cap).
        let mut t = Terms::new();
        let mut elems = Vec::new();
        for i in 0..3u64 {
            let mut acc = t.input(2, i);
            for k in 0..40u64 {
                let x = t.input(0, i * 40 + k);
                let w = t.input(1, k);
                let p = t.mul(x, w);
                acc = t.add(acc, p);
            }
            elems.push((vec![i], acc));
        }
        let names = ["x".to_string(), "w".into(), "b".into()];
        let shapes = [vec![3, 40], vec![40], vec![3]];
        let f = lift_tensor(&t, "y", 1, &elems, &naming(&names, &shapes))
            .expect("lifts")
            .text();
        assert_eq!(
            f,
            "y[i0] = (sum(i1 in 0..40, (x[i0, i1] * w[i1])) + b[i0]);"
        );
    }

    #[test]
    fn a_select_names_what_does_not_lift() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let z = t.int(0);
        let c = t.cmp(ptxeq_terms::CmpOp::Lt, x, z);
        let s = t.select(c, x, z);
        let names = ["x".to_string()];
        let shapes = [vec![1]];
        let e = lift_tensor(&t, "y", 1, &[(vec![0], s)], &naming(&names, &shapes)).unwrap_err();
        assert!(e.contains("select"), "{e}");
    }
}
