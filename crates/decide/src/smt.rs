//! SMT-LIB2 export of one verification condition (`--emit-smt DIR`), so a
//! user can replay `reference = candidate` in another solver.
//!
//! The query asserts the *negation* of the equality: `unsat` means equal.
//! Inputs are declared `Real` constants (`x<tensor>_<index>`); every other
//! node is a `define-fun` emitted once, in dependency order, so the text is
//! linear in the DAG (kernel terms are huge trees but small DAGs).
//! `max`/`min`/`select` become `ite`; `exp`, `log`, `sqrt`, `sin`, `cos`,
//! `tanh`, `erf`, `ex2`, `lg2` are uninterpreted functions `f_<name>`
//! (a solver with transcendental support can substitute its own — cvc5's
//! `exp`, for instance); the logic is `ALL`. Division is SMT-LIB's total
//! `/` (any value at 0), where ptxeq's terms are undefined. The
//! infinities are not reals: a VC that mentions one declares `pos_inf` /
//! `neg_inf` as unconstrained constants and says so in a comment, since
//! the exported query then over-approximates the term semantics.
//!
//! Integer terms are bit-vectors `(_ BitVec w)` (`bvadd`, `bvmul`,
//! extensions, shifts, comparisons); an integer input is a declared
//! bit-vector constant `i<tensor>_<index>` of its type's width (every bit
//! pattern is a value of the type); `IntToReal` is `bv2nat` read as
//! signed or unsigned; the integer functions without an SMT-LIB operator
//! (`popc`, `prmt`, real-to-integer rounding, ...) are uninterpreted
//! `f_<name>_<width>`. SMT-LIB's division by zero is total where PTX's is
//! unspecified.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::{CmpOp, Func, Node, Rat, TermId, Terms};

/// The SMT-LIB2 symbol of an uninterpreted function: `u_<name>` quoted
/// (`|…|`) so any PTX name is a valid symbol.
fn uninterpreted_symbol(name: &str) -> String {
    format!("|u_{}|", name.replace(['|', '\\'], "_"))
}

/// The SMT-LIB2 text of `reference ≠ candidate` (see the module docs).
pub fn smtlib(terms: &Terms, reference: TermId, candidate: TermId) -> String {
    let order = terms.post_order(&[reference, candidate]);
    let mut funcs: BTreeSet<&'static str> = BTreeSet::new();
    let mut inputs = Vec::new();
    let mut infinities = BTreeSet::new();
    let mut pow = false;
    let mut int_inputs = Vec::new();
    let mut int_funcs: BTreeSet<String> = BTreeSet::new();
    let mut applied: BTreeSet<(String, usize)> = BTreeSet::new();
    for &t in &order {
        match terms.node(t) {
            Node::Func(f, _) => {
                funcs.insert(f.name());
            }
            Node::Exp(_) => {
                funcs.insert("exp");
            }
            Node::Pow(..) => {
                pow = true;
            }
            Node::Apply(app) => {
                applied.insert((app.name.to_string(), app.args.len()));
            }
            Node::Input { tensor, index } => inputs.push((*tensor, *index)),
            Node::IntInput { tensor, index, ty } => int_inputs.push((*tensor, *index, *ty)),
            Node::IntOp(..) => {
                if let Some(d) = int_decl(terms, terms.node(t)) {
                    int_funcs.insert(d);
                }
            }
            Node::PosInf => {
                infinities.insert("pos_inf");
            }
            Node::NegInf => {
                infinities.insert("neg_inf");
            }
            _ => {}
        }
    }
    let mut out = String::new();
    out.push_str("; ptxeq verification condition: unsat <=> reference = candidate\n");
    out.push_str("; real arithmetic (docs/semantics.md §2); f_* are uninterpreted functions\n");
    out.push_str("(set-logic ALL)\n");
    let names = terms.tensor_names();
    for (tensor, index) in inputs {
        let _ = write!(out, "(declare-const x{tensor}_{index} Real)");
        if names.get(tensor as usize).is_some() {
            let _ = write!(out, " ; {}", terms.input_label(tensor, index));
        }
        out.push('\n');
    }
    for (tensor, index, ty) in int_inputs {
        let _ = write!(
            out,
            "(declare-const i{tensor}_{index} (_ BitVec {}))",
            ty.bits
        );
        if let Some(n) = names.get(tensor as usize) {
            let _ = write!(out, " ; {n}[{index}], {}", ty.name());
        }
        out.push('\n');
    }
    for d in &int_funcs {
        out.push_str(d);
        out.push('\n');
    }
    for c in &infinities {
        let _ = writeln!(
            out,
            "(declare-const {c} Real) ; WARNING: an infinity, modelled as an unconstrained real"
        );
    }
    for f in &funcs {
        let _ = writeln!(out, "(declare-fun f_{f} (Real) Real)");
    }
    if pow {
        out.push_str("(declare-fun f_pow (Real Real) Real)\n");
    }
    for (name, arity) in &applied {
        let _ = writeln!(
            out,
            "(declare-fun {} ({}) Real) ; uninterpreted (spec [functions])",
            uninterpreted_symbol(name),
            vec!["Real"; *arity].join(" ")
        );
    }
    out.push_str("(define-fun max2 ((a Real) (b Real)) Real (ite (>= a b) a b))\n");
    out.push_str("(define-fun min2 ((a Real) (b Real)) Real (ite (<= a b) a b))\n");
    for &t in &order {
        let node = terms.node(t);
        if matches!(
            node,
            Node::Input { .. }
                | Node::Const(_)
                | Node::PosInf
                | Node::NegInf
                | Node::BoolConst(_)
                | Node::IntConst { .. }
                | Node::IntInput { .. }
        ) {
            continue;
        }
        let sort = match terms.int_width(t) {
            Some(w) => format!("(_ BitVec {w})"),
            None if terms.is_bool(t) => "Bool".into(),
            None => "Real".into(),
        };
        let _ = writeln!(
            out,
            "(define-fun t{} () {sort} {})",
            t.raw(),
            expr(terms, node)
        );
    }
    let _ = writeln!(
        out,
        "(assert (not (= {} {})))",
        atom(terms, reference),
        atom(terms, candidate)
    );
    out.push_str("(check-sat)\n(exit)\n");
    out
}

/// Writes [`smtlib`] of one VC to `dir/<name>.smt2` (creating `dir`), for
/// `--emit-smt DIR`; `name` is sanitised to `[A-Za-z0-9_.-]`.
pub fn write_vc(
    dir: &std::path::Path,
    name: &str,
    terms: &Terms,
    reference: TermId,
    candidate: TermId,
) -> std::io::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)?;
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{safe}.smt2"));
    std::fs::write(&path, smtlib(terms, reference, candidate))?;
    Ok(path)
}

/// A reference to node `t`: a literal, an input or a defined name.
fn atom(terms: &Terms, t: TermId) -> String {
    match terms.node(t) {
        Node::Const(r) => rational(r),
        Node::Input { tensor, index } => format!("x{tensor}_{index}"),
        Node::PosInf => "pos_inf".into(),
        Node::NegInf => "neg_inf".into(),
        Node::BoolConst(b) => b.to_string(),
        Node::IntConst { w, v } => format!("(_ bv{v} {w})"),
        Node::IntInput { tensor, index, .. } => format!("i{tensor}_{index}"),
        _ => format!("t{}", t.raw()),
    }
}

/// The declaration of the uninterpreted function an integer operation
/// becomes, if it has no SMT-LIB operator.
fn int_decl(terms: &Terms, node: &Node) -> Option<String> {
    let Node::IntOp(f, w, ops) = node else {
        return None;
    };
    if exact_bv(*f) {
        return None;
    }
    let sorts: Vec<String> = ops
        .iter()
        .map(|o| match terms.int_width(*o) {
            Some(u) => format!("(_ BitVec {u})"),
            None => "Real".into(),
        })
        .collect();
    Some(format!(
        "(declare-fun {} ({}) (_ BitVec {w}))",
        int_fn_name(terms, *f, *w, ops),
        sorts.join(" ")
    ))
}

/// Whether `f` is written with SMT-LIB bit-vector operators.
fn exact_bv(f: crate::IntFn) -> bool {
    use crate::IntFn as F;
    matches!(
        f,
        F::Zext { .. }
            | F::Sext { .. }
            | F::Trunc
            | F::And
            | F::Or
            | F::Xor
            | F::Shl
            | F::Shr { .. }
            | F::Div { .. }
            | F::Rem { .. }
            | F::Min { .. }
            | F::Max { .. }
    )
}

/// The name of an uninterpreted integer function (with its operand and
/// result widths, so that one name has one signature).
fn int_fn_name(terms: &Terms, f: crate::IntFn, w: u8, ops: &[TermId]) -> String {
    let base: String = f
        .name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let widths: Vec<String> = ops
        .iter()
        .map(|o| terms.int_width(*o).map_or("r".into(), |u| u.to_string()))
        .collect();
    format!("f_{base}_{}_{w}", widths.join("_"))
}

/// A bit-vector operand `t` (of width `from`) brought to width `to`.
fn resize(x: String, from: u8, to: u8) -> String {
    use std::cmp::Ordering::*;
    match from.cmp(&to) {
        Equal => x,
        Less => format!("((_ zero_extend {}) {x})", to - from),
        Greater => format!("((_ extract {} 0) {x})", to - 1),
    }
}

/// The defining expression of an integer node.
fn int_expr(terms: &Terms, node: &Node) -> String {
    use crate::{IntCmpOp as C, IntFn as F};
    let a = |t: &TermId| atom(terms, *t);
    let wd = |t: &TermId| terms.int_width(*t).unwrap_or(1);
    match node {
        Node::IntAdd(_, ops) | Node::IntMul(_, ops) => {
            let f = if matches!(node, Node::IntAdd(..)) {
                "bvadd"
            } else {
                "bvmul"
            };
            let mut acc = a(&ops[0]);
            for o in &ops[1..] {
                acc = format!("({f} {acc} {})", a(o));
            }
            acc
        }
        Node::IntOp(f, w, ops) if exact_bv(*f) => {
            let w = *w;
            let x = || a(&ops[0]);
            let y = || resize(a(&ops[1]), wd(&ops[1]), w);
            let bin = |op: &str| format!("({op} {} {})", x(), y());
            match f {
                F::Zext { from } => format!("((_ zero_extend {}) {})", w - from, x()),
                F::Sext { from } => format!("((_ sign_extend {}) {})", w - from, x()),
                F::Trunc => format!("((_ extract {} 0) {})", w - 1, x()),
                F::And => bin("bvand"),
                F::Or => bin("bvor"),
                F::Xor => bin("bvxor"),
                F::Shl | F::Shr { .. } => {
                    let op = match f {
                        F::Shl => "bvshl",
                        F::Shr { signed: true } => "bvashr",
                        _ => "bvlshr",
                    };
                    let nw = wd(&ops[1]);
                    if nw <= w {
                        bin(op)
                    } else {
                        // An amount wider than the operand: `w` or more
                        // shifts everything out (PTX clamps).
                        let n = a(&ops[1]);
                        let fill = if op == "bvashr" {
                            format!("(bvashr {} (_ bv{} {w}))", x(), w - 1)
                        } else {
                            format!("(_ bv0 {w})")
                        };
                        format!(
                            "(ite (bvuge {n} (_ bv{w} {nw})) {fill} ({op} {} ((_ extract {} 0) {n})))",
                            x(),
                            w - 1
                        )
                    }
                }
                F::Div { signed: true } => bin("bvsdiv"),
                F::Div { signed: false } => bin("bvudiv"),
                F::Rem { signed: true } => bin("bvsrem"),
                F::Rem { signed: false } => bin("bvurem"),
                F::Min { signed } | F::Max { signed } => {
                    let le = if *signed { "bvsle" } else { "bvule" };
                    let (p, q) = if matches!(f, F::Min { .. }) {
                        (x(), y())
                    } else {
                        (y(), x())
                    };
                    format!("(ite ({le} {} {}) {p} {q})", x(), y())
                }
                _ => unreachable!("exact_bv"),
            }
        }
        Node::IntOp(f, w, ops) => {
            let args: Vec<String> = ops.iter().map(a).collect();
            format!("({} {})", int_fn_name(terms, *f, *w, ops), args.join(" "))
        }
        Node::IntCmp(op, x, y) => {
            let (x, y) = (a(x), a(y));
            let s = |signed: bool, sop: &str, uop: &str| {
                format!("({} {x} {y})", if signed { sop } else { uop })
            };
            match op {
                C::Eq => format!("(= {x} {y})"),
                C::Ne => format!("(not (= {x} {y}))"),
                C::Lt { signed } => s(*signed, "bvslt", "bvult"),
                C::Le { signed } => s(*signed, "bvsle", "bvule"),
                C::Gt { signed } => s(*signed, "bvsgt", "bvugt"),
                C::Ge { signed } => s(*signed, "bvsge", "bvuge"),
            }
        }
        Node::IntToReal(signed, x) => {
            let w = wd(x);
            let nat = format!("(to_real (bv2nat {}))", a(x));
            if *signed {
                format!(
                    "(ite (= ((_ extract {m} {m}) {v}) #b1) (- {nat} {p}.0) {nat})",
                    m = w - 1,
                    v = a(x),
                    p = num_bigint::BigInt::from(1) << usize::from(w)
                )
            } else {
                nat
            }
        }
        _ => String::new(),
    }
}

/// A rational as an SMT-LIB real literal: `3.0`, `(- 3.0)`, `(/ 1.0 3.0)`.
fn rational(r: &Rat) -> String {
    let (n, d) = r.parts();
    let mag = n.magnitude().to_string();
    let num = if r.is_negative() {
        format!("(- {mag}.0)")
    } else {
        format!("{mag}.0")
    };
    if d == 1.into() {
        num
    } else {
        format!("(/ {num} {d}.0)")
    }
}

/// The defining expression of a non-leaf node.
fn expr(terms: &Terms, node: &Node) -> String {
    let a = |t: &TermId| atom(terms, *t);
    let list = |ops: &[TermId]| ops.iter().map(a).collect::<Vec<_>>().join(" ");
    let fold = |f: &str, ops: &[TermId]| {
        let mut acc = a(&ops[0]);
        for o in &ops[1..] {
            acc = format!("({f} {acc} {})", a(o));
        }
        acc
    };
    match node {
        Node::Add(ops) => format!("(+ {})", list(ops)),
        Node::Mul(ops) => format!("(* {})", list(ops)),
        Node::Recip(x) => format!("(/ 1.0 {})", a(x)),
        Node::Exp(x) => format!("(f_exp {})", a(x)),
        Node::Func(f, x) => format!("(f_{} {})", func_name(*f), a(x)),
        Node::Pow(x, y) => format!("(f_pow {} {})", a(x), a(y)),
        Node::Apply(app) => format!("({} {})", uninterpreted_symbol(&app.name), list(&app.args)),
        Node::Max(ops) => fold("max2", ops),
        Node::Min(ops) => fold("min2", ops),
        Node::Cmp(op, x, y) => {
            let (x, y) = (a(x), a(y));
            match op {
                CmpOp::Eq => format!("(= {x} {y})"),
                CmpOp::Ne => format!("(not (= {x} {y}))"),
                CmpOp::Lt => format!("(< {x} {y})"),
                CmpOp::Le => format!("(<= {x} {y})"),
                CmpOp::Gt => format!("(> {x} {y})"),
                CmpOp::Ge => format!("(>= {x} {y})"),
            }
        }
        Node::Not(x) => format!("(not {})", a(x)),
        Node::And(ops) => format!("(and {})", list(ops)),
        Node::Or(ops) => format!("(or {})", list(ops)),
        Node::Xor(ops) => fold("xor", ops),
        Node::Select(c, x, y) => format!("(ite {} {} {})", a(c), a(x), a(y)),
        Node::IntAdd(..)
        | Node::IntMul(..)
        | Node::IntOp(..)
        | Node::IntCmp(..)
        | Node::IntToReal(..) => int_expr(terms, node),
        Node::Const(_)
        | Node::Input { .. }
        | Node::PosInf
        | Node::NegInf
        | Node::BoolConst(_)
        | Node::IntConst { .. }
        | Node::IntInput { .. } => {
            unreachable!("leaves are referenced inline")
        }
    }
}

fn func_name(f: Func) -> &'static str {
    f.name()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parenthesis balance, and every symbol used after its declaration.
    fn check_structure(s: &str) {
        let mut depth = 0i64;
        for ch in s.chars() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    assert!(depth >= 0, "unbalanced: {s}");
                }
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced: {s}");
        let builtin = [
            "set-logic",
            "ALL",
            "declare-const",
            "declare-fun",
            "define-fun",
            "Real",
            "Bool",
            "assert",
            "not",
            "check-sat",
            "exit",
            "ite",
            "and",
            "or",
            "xor",
            "a",
            "b",
            "true",
            "false",
            "+",
            "*",
            "/",
            "-",
            "=",
            "<",
            "<=",
            ">",
            ">=",
        ];
        let mut known: std::collections::HashSet<String> =
            builtin.iter().map(|s| s.to_string()).collect();
        for line in s.lines() {
            let code = line.split(';').next().unwrap_or("");
            let toks: Vec<&str> = code
                .split(|c: char| c == '(' || c == ')' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .collect();
            if let [kw, name, ..] = toks.as_slice()
                && matches!(*kw, "declare-const" | "declare-fun" | "define-fun")
            {
                for t in &toks[2..] {
                    assert!(
                        known.contains(*t) || t.parse::<f64>().is_ok(),
                        "{t} used before it is declared: {line}"
                    );
                }
                known.insert(name.to_string());
                continue;
            }
            for t in toks {
                assert!(
                    known.contains(t) || t.parse::<f64>().is_ok(),
                    "{t} undeclared: {line}"
                );
            }
        }
    }

    #[test]
    fn softmax_vc_is_well_formed() {
        let mut t = Terms::new();
        let xs: Vec<TermId> = (0..4).map(|i| t.input(0, i)).collect();
        let m = t.max_many(&xs);
        let es: Vec<TermId> = xs
            .iter()
            .map(|&x| {
                let d = t.sub(x, m);
                t.exp(d)
            })
            .collect();
        let s = t.add_many(&es);
        let y = t.div(es[0], s);
        let third = t.rational(num_rational::BigRational::new((-1).into(), 3.into()));
        let c = t.cmp(CmpOp::Lt, xs[0], third);
        let l = t.func(Func::Log, xs[1]);
        let z = t.select(c, l, y);
        let smt = smtlib(&t, y, z);
        check_structure(&smt);
        assert!(smt.contains("(declare-fun f_exp (Real) Real)"));
        assert!(smt.contains("(declare-fun f_log (Real) Real)"));
        assert!(smt.contains("(/ (- 1.0) 3.0)"));
        assert!(smt.contains("(assert (not (="));
        assert!(smt.trim_end().ends_with("(exit)"));
    }

    #[test]
    fn pow_is_a_binary_function() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let p = t.pow(x, y);
        let smt = smtlib(&t, p, x);
        check_structure(&smt);
        assert!(smt.contains("(declare-fun f_pow (Real Real) Real)"));
        assert!(smt.contains("(f_pow x0_0 x0_1)"), "{smt}");
    }

    #[test]
    fn shared_subterms_are_defined_once() {
        // A chain of 10 000 additions where each step reuses the previous
        // one twice: a tree of 2^10000 nodes, a DAG of 10 000.
        let mut t = Terms::new();
        let mut acc = t.input(0, 0);
        for i in 1..10_000u64 {
            let x = t.input(0, i % 7);
            let p = t.mul(acc, x);
            acc = t.add(p, acc);
        }
        let x = t.input(0, 0);
        let smt = smtlib(&t, acc, x);
        check_structure(&smt);
        let defs = smt.matches("define-fun t").count();
        assert!(defs < 25_000, "{defs}");
        assert!(smt.len() < 2_000_000);
    }

    #[test]
    fn written_to_a_sanitised_file() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let dir = std::env::temp_dir().join(format!("ptxeq-smt-{}", std::process::id()));
        let p = write_vc(&dir, "y[3]/elem", &t, x, y).unwrap();
        assert_eq!(p.file_name().unwrap(), "y_3__elem.smt2");
        check_structure(&std::fs::read_to_string(&p).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn infinities_are_flagged() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let inf = t.pos_inf();
        let zero = t.int(0);
        let c = t.cmp(CmpOp::Lt, x, zero);
        let s = t.select(c, inf, x);
        let smt = smtlib(&t, s, x);
        check_structure(&smt);
        assert!(smt.contains("WARNING"));
    }
}

#[cfg(test)]
mod int_tests {
    use super::*;
    use crate::{IntCmpOp, IntFn, IntTy};

    fn balanced(s: &str) -> bool {
        let mut depth = 0i64;
        for ch in s.chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }

    #[test]
    fn integer_vc_is_bit_vectors() {
        let mut t = Terms::new();
        let ty = IntTy {
            bits: 32,
            signed: true,
        };
        let (x, y) = (t.int_input(0, 0, ty), t.int_input(0, 1, ty));
        let s = t.int_add(32, x, y);
        let k = t.int_const(32, 3);
        let sh = t.int_op(IntFn::Shr { signed: true }, 32, &[s, k]);
        let p = t.int_op(IntFn::Popc, 32, &[x]);
        let c = t.int_cmp(IntCmpOp::Lt { signed: false }, x, y);
        let sel = t.select(c, sh, p);
        let a = t.int_to_real(true, sel);
        let b = t.int_to_real(false, y);
        let text = smtlib(&t, a, b);
        assert!(balanced(&text), "{text}");
        assert!(
            text.contains("(declare-const i0_0 (_ BitVec 32))"),
            "{text}"
        );
        assert!(text.contains("bvadd") && text.contains("bvashr") && text.contains("bvult"));
        assert!(text.contains("(declare-fun f_popc_32_32 ((_ BitVec 32)) (_ BitVec 32))"));
        assert!(text.contains("bv2nat"), "{text}");
        // An 8-bit shift by a 32-bit amount clamps.
        let z = t.int_input(
            1,
            0,
            IntTy {
                bits: 8,
                signed: false,
            },
        );
        let n = t.int_input(2, 0, ty);
        let zs = t.int_op(IntFn::Shl, 8, &[z, n]);
        let zr = t.int_to_real(false, zs);
        let text = smtlib(&t, zr, a);
        assert!(balanced(&text) && text.contains("bvuge"), "{text}");
    }
}
