//! Recursive-descent parser: tokens to [`Program`], collecting every
//! syntax error (it resynchronises at the next `;`) and never panicking.
//!
//! Precedence, loosest first: `||`, `&&`, comparisons (not chained),
//! `+ -`, `* / %`, unary `- !`, `^` (right-associative, so `-x^2` is
//! `-(x^2)`), subscripts `[…]`.

use num_bigint::BigInt;
use num_rational::BigRational;

use crate::ast::*;
use crate::diag::Diagnostic;
use crate::lexer::{Tok, Token, lex};

/// How deeply expressions may nest (bounds the parser's stack; a formula
/// nested deeper is rejected with a located error).
pub const MAX_DEPTH: usize = 200;

/// Parses source `file` (`span::USER` or `span::PRELUDE`).
pub fn parse(text: &str, file: u16) -> (Program, Vec<Diagnostic>) {
    let mut p = Parser {
        text,
        toks: lex(text, file),
        pos: 0,
        diags: Vec::new(),
        depth: 0,
    };
    let mut prog = Program::default();
    while p.peek() != Tok::Eof {
        let start = p.pos;
        match p.item() {
            Ok(item) => prog.items.push(item),
            Err(d) => {
                p.diags.push(d);
                p.recover();
            }
        }
        if p.pos == start {
            // No progress: skip one token so the loop ends.
            p.pos += 1;
        }
    }
    (prog, p.diags)
}

type PResult<T> = Result<T, Diagnostic>;

struct Parser<'a> {
    text: &'a str,
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    depth: usize,
}

impl Parser<'_> {
    fn tok(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> Tok {
        self.tok().tok
    }

    fn peek_at(&self, k: usize) -> Tok {
        self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }

    fn text_of(&self, t: Token) -> &str {
        &self.text[t.span.range()]
    }

    fn is_word(&self, w: &str) -> bool {
        self.peek() == Tok::Ident && self.text_of(self.tok()) == w
    }

    fn bump(&mut self) -> Token {
        let t = self.tok();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn unexpected(&self, what: &str) -> Diagnostic {
        let t = self.tok();
        let found = match t.tok {
            Tok::Ident | Tok::Int | Tok::Float => format!("`{}`", self.text_of(t)),
            Tok::Error => format!("unexpected character `{}`", self.text_of(t)),
            other => other.describe().to_string(),
        };
        Diagnostic::new(t.span, format!("expected {what}, found {found}"))
            .label(format!("expected {what}"))
    }

    fn expect(&mut self, tok: Tok) -> PResult<Token> {
        if self.peek() == tok {
            Ok(self.bump())
        } else {
            Err(self.unexpected(tok.describe()))
        }
    }

    fn ident(&mut self) -> PResult<Ident> {
        if self.peek() == Tok::Ident {
            let t = self.bump();
            Ok(Ident {
                name: self.text_of(t).to_string(),
                span: t.span,
            })
        } else {
            Err(self.unexpected("a name"))
        }
    }

    /// Skips past the next `;` (or to the end).
    fn recover(&mut self) {
        while !matches!(self.peek(), Tok::Semi | Tok::Eof) {
            self.bump();
        }
        if self.peek() == Tok::Semi {
            self.bump();
        }
    }

    fn idents_in_brackets(&mut self) -> PResult<Vec<Ident>> {
        let mut out = Vec::new();
        if self.peek() == Tok::LBracket {
            self.bump();
            loop {
                out.push(self.ident()?);
                if self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            self.expect(Tok::RBracket)?;
        }
        Ok(out)
    }

    fn item(&mut self) -> PResult<Item> {
        let start = self.tok().span;
        if self.is_word("let") && self.peek_at(1) == Tok::Ident {
            self.bump();
            let name = self.ident()?;
            let mut idx = Vec::new();
            let mut ranges = Vec::new();
            if self.peek() == Tok::LBracket {
                self.bump();
                loop {
                    idx.push(self.ident()?);
                    if self.is_word("in") {
                        self.bump();
                        let lo = self.add_expr()?;
                        self.expect(Tok::DotDot)?;
                        let hi = self.add_expr()?;
                        ranges.push(Some((lo, hi)));
                    } else {
                        ranges.push(None);
                    }
                    if self.peek() == Tok::Comma {
                        self.bump();
                    } else {
                        break;
                    }
                }
                self.expect(Tok::RBracket)?;
            }
            self.expect(Tok::Eq)?;
            let value = self.expr()?;
            let end = self.expect(Tok::Semi)?.span;
            return Ok(Item::Let {
                name,
                idx,
                ranges,
                value,
                span: start.to(end),
            });
        }
        if self.is_word("fn") && self.peek_at(1) == Tok::Ident {
            self.bump();
            let name = self.ident()?;
            self.expect(Tok::LParen)?;
            let mut params = Vec::new();
            if self.peek() != Tok::RParen {
                loop {
                    let pname = self.ident()?;
                    let len = if self.peek() == Tok::LBracket {
                        self.bump();
                        let n = self.ident()?;
                        self.expect(Tok::RBracket)?;
                        Some(n)
                    } else {
                        None
                    };
                    params.push(Param { name: pname, len });
                    if self.peek() == Tok::Comma {
                        self.bump();
                    } else {
                        break;
                    }
                }
            }
            self.expect(Tok::RParen)?;
            let out = if self.peek() == Tok::LBracket {
                self.bump();
                let j = self.ident()?;
                self.expect(Tok::RBracket)?;
                Some(j)
            } else {
                None
            };
            self.expect(Tok::Eq)?;
            let body = self.expr()?;
            let end = self.expect(Tok::Semi)?.span;
            return Ok(Item::Fn {
                name,
                params,
                out,
                body,
                span: start.to(end),
            });
        }
        if self.peek() != Tok::Ident {
            return Err(
                self.unexpected("a definition (`y[i] = …;`, `let m[i] = …;` or `fn f(x) = …;`)")
            );
        }
        let tensor = self.ident()?;
        let idx = self.idents_in_brackets()?;
        self.expect(Tok::Eq)?;
        let value = self.expr()?;
        let end = self.expect(Tok::Semi)?.span;
        Ok(Item::Def {
            tensor,
            idx,
            value,
            span: start.to(end),
        })
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                self.tok().span,
                format!("expression nested more than {MAX_DEPTH} levels deep"),
            )
            .label("too deep"));
        }
        Ok(())
    }

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.or_expr();
        self.depth -= 1;
        r
    }

    fn binary(l: Expr, op: BinOp, r: Expr) -> Expr {
        let span = l.span.to(r.span);
        Expr {
            kind: ExprKind::Binary {
                op,
                l: Box::new(l),
                r: Box::new(r),
            },
            span,
        }
    }

    fn or_expr(&mut self) -> PResult<Expr> {
        let mut l = self.and_expr()?;
        while self.peek() == Tok::OrOr {
            self.bump();
            let r = self.and_expr()?;
            l = Self::binary(l, BinOp::Or, r);
        }
        Ok(l)
    }

    fn and_expr(&mut self) -> PResult<Expr> {
        let mut l = self.cmp_expr()?;
        while self.peek() == Tok::AndAnd {
            self.bump();
            let r = self.cmp_expr()?;
            l = Self::binary(l, BinOp::And, r);
        }
        Ok(l)
    }

    fn cmp_expr(&mut self) -> PResult<Expr> {
        let l = self.add_expr()?;
        let op = match self.peek() {
            Tok::Lt => BinOp::Lt,
            Tok::Le => BinOp::Le,
            Tok::Gt => BinOp::Gt,
            Tok::Ge => BinOp::Ge,
            Tok::EqEq => BinOp::Eq,
            Tok::Ne => BinOp::Ne,
            _ => return Ok(l),
        };
        self.bump();
        let r = self.add_expr()?;
        if matches!(
            self.peek(),
            Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge | Tok::EqEq | Tok::Ne
        ) {
            return Err(
                Diagnostic::new(self.tok().span, "comparisons cannot be chained")
                    .label("second comparison")
                    .note("write `a < b && b < c`"),
            );
        }
        Ok(Self::binary(l, op, r))
    }

    fn add_expr(&mut self) -> PResult<Expr> {
        let mut l = self.mul_expr()?;
        loop {
            let op = match self.peek() {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.mul_expr()?;
            l = Self::binary(l, op, r);
        }
    }

    fn mul_expr(&mut self) -> PResult<Expr> {
        let mut l = self.unary()?;
        loop {
            let op = match self.peek() {
                Tok::Star => BinOp::Mul,
                Tok::Slash => BinOp::Div,
                Tok::Percent => BinOp::Rem,
                _ => return Ok(l),
            };
            self.bump();
            let r = self.unary()?;
            l = Self::binary(l, op, r);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Bang => UnOp::Not,
            _ => return self.power(),
        };
        let start = self.bump().span;
        self.enter()?;
        let e = self.unary();
        self.depth -= 1;
        let e = e?;
        Ok(Expr {
            span: start.to(e.span),
            kind: ExprKind::Unary { op, e: Box::new(e) },
        })
    }

    fn power(&mut self) -> PResult<Expr> {
        let base = self.postfix()?;
        if self.peek() == Tok::Caret {
            self.bump();
            self.enter()?;
            // Right-associative, and the exponent may carry a sign.
            let exp = self.unary();
            self.depth -= 1;
            return Ok(Self::binary(base, BinOp::Pow, exp?));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        while self.peek() == Tok::LBracket {
            self.bump();
            let mut subs = Vec::new();
            loop {
                if self.peek() == Tok::Colon {
                    subs.push(Sub::All(self.bump().span));
                } else {
                    let lo = self.expr()?;
                    if self.peek() == Tok::DotDot {
                        self.bump();
                        let hi = self.expr()?;
                        subs.push(Sub::Range(lo, hi));
                    } else {
                        subs.push(Sub::At(lo));
                    }
                }
                if self.peek() == Tok::Comma {
                    self.bump();
                } else {
                    break;
                }
            }
            let end = self.expect(Tok::RBracket)?.span;
            e = Expr {
                span: e.span.to(end),
                kind: ExprKind::Index {
                    base: Box::new(e),
                    subs,
                },
            };
        }
        Ok(e)
    }

    fn primary(&mut self) -> PResult<Expr> {
        match self.peek() {
            Tok::Int | Tok::Float => {
                let t = self.bump();
                let text = self.text_of(t).to_string();
                match parse_number(&text) {
                    Some(value) => Ok(Expr {
                        kind: ExprKind::Num {
                            value,
                            integer: t.tok == Tok::Int,
                        },
                        span: t.span,
                    }),
                    None => Err(Diagnostic::new(
                        t.span,
                        format!("`{text}` is not a number I can read exactly"),
                    )
                    .label("this number")),
                }
            }
            Tok::LParen => {
                let open = self.bump().span;
                let mut e = self.expr()?;
                let close = self.expect(Tok::RParen)?.span;
                e.span = open.to(close);
                Ok(e)
            }
            Tok::Ident => {
                let name = self.ident()?;
                if self.peek() != Tok::LParen {
                    return Ok(Expr {
                        span: name.span,
                        kind: ExprKind::Name(name),
                    });
                }
                let op = match name.name.as_str() {
                    "sum" => Some(ReduceOp::Sum),
                    "prod" => Some(ReduceOp::Prod),
                    "max" => Some(ReduceOp::Max),
                    "min" => Some(ReduceOp::Min),
                    _ => None,
                };
                self.bump(); // (
                // `op(j in lo..hi, …, body)` is a reduction.
                if let Some(op) = op
                    && self.peek() == Tok::Ident
                    && self.peek_at(1) == Tok::Ident
                    && self.text_of(self.toks[(self.pos + 1).min(self.toks.len() - 1)]) == "in"
                {
                    let mut binders = Vec::new();
                    while self.peek() == Tok::Ident
                        && self.peek_at(1) == Tok::Ident
                        && self.text_of(self.toks[(self.pos + 1).min(self.toks.len() - 1)]) == "in"
                    {
                        let var = self.ident()?;
                        self.bump(); // in
                        let lo = self.add_expr()?;
                        self.expect(Tok::DotDot)?;
                        let hi = self.add_expr()?;
                        self.expect(Tok::Comma)?;
                        binders.push(Binder { var, lo, hi });
                    }
                    let body = self.expr()?;
                    let close = self.expect(Tok::RParen)?.span;
                    return Ok(Expr {
                        span: name.span.to(close),
                        kind: ExprKind::Reduce {
                            op,
                            op_span: name.span,
                            binders,
                            body: Box::new(body),
                        },
                    });
                }
                let mut args = Vec::new();
                if self.peek() != Tok::RParen {
                    loop {
                        args.push(self.arg()?);
                        if self.peek() == Tok::Comma {
                            self.bump();
                        } else {
                            break;
                        }
                    }
                }
                let close = self.expect(Tok::RParen)?.span;
                Ok(Expr {
                    span: name.span.to(close),
                    kind: ExprKind::Call { func: name, args },
                })
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// A call argument: an expression (slices such as `x[i, :]` are
    /// subscripts, parsed by `postfix`).
    fn arg(&mut self) -> PResult<Expr> {
        self.expr()
    }
}

/// An exact rational from a decimal literal: `0.1` is 1/10, `1e-5` is
/// 1/100000. `None` for exponents too large to expand.
pub fn parse_number(text: &str) -> Option<BigRational> {
    let (mant, exp) = match text.find(['e', 'E']) {
        Some(k) => (&text[..k], text[k + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(k) => (&mant[..k], &mant[k + 1..]),
        None => (mant, ""),
    };
    let digits = format!("{int_part}{frac_part}");
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    let n: BigInt = digits.parse().ok()?;
    let scale = exp - frac_part.len() as i64;
    if scale.abs() > 4096 {
        return None;
    }
    let ten = BigInt::from(10u32);
    let p = num_traits::pow(ten, scale.unsigned_abs() as usize);
    Some(if scale >= 0 {
        BigRational::from_integer(n * p)
    } else {
        BigRational::new(n, p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Program {
        let (p, d) = parse(s, 0);
        assert!(d.is_empty(), "{d:?}");
        p
    }

    #[test]
    fn numbers_are_exact() {
        assert_eq!(
            parse_number("0.1").unwrap(),
            BigRational::new(1.into(), 10.into())
        );
        assert_eq!(
            parse_number("1e-5").unwrap(),
            BigRational::new(1.into(), 100000.into())
        );
        assert_eq!(
            parse_number("2.5e2").unwrap(),
            BigRational::from_integer(250.into())
        );
        assert!(parse_number("1e99999").is_none());
    }

    #[test]
    fn items() {
        let p = ok("let m[i] = max(j in 0..N, x[i, j]);\n\
                    fn f(v[n])[j] = v[j] / sum(k in 0..n, v[k]);\n\
                    y[i, j] = exp(x[i, j] - m[i]) / sum(k in 0..N, exp(x[i, k] - m[i]));");
        assert_eq!(p.items.len(), 3);
        assert!(matches!(p.items[1], Item::Fn { ref out, .. } if out.is_some()));
    }

    #[test]
    fn precedence() {
        let p = ok("y = -x^2 + a*b;");
        let Item::Def { value, .. } = &p.items[0] else {
            panic!()
        };
        let ExprKind::Binary {
            op: BinOp::Add, l, ..
        } = &value.kind
        else {
            panic!()
        };
        assert!(matches!(l.kind, ExprKind::Unary { op: UnOp::Neg, .. }));
    }

    #[test]
    fn errors_are_located_and_recovered() {
        let (p, d) = parse("y[i] = x[i] +;\nz[i] = x[i];", 0);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line_col("y[i] = x[i] +;\nz[i] = x[i];"), (1, 14));
        assert_eq!(p.items.len(), 1);
        let (_, d) = parse("y = a < b < c;", 0);
        assert!(d[0].message.contains("chained"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let s = format!("y = {}x{};", "(".repeat(10_000), ")".repeat(10_000));
        let (_, d) = parse(&s, 0);
        assert!(d[0].message.contains("nested"));
        let s = format!("y = {}x;", "-".repeat(10_000));
        let (_, d) = parse(&s, 0);
        assert!(d[0].message.contains("nested"));
    }
}
