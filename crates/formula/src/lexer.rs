//! The lexer: formula text to tokens with byte spans.
//!
//! Total over any input: an unexpected character becomes an
//! [`Tok::Error`] token (reported by the parser with its span), never a
//! panic. Comments run from `#` or `//` to the end of the line.

use crate::span::Span;

/// One token kind. Identifiers and numbers keep their text in the source
/// (the parser slices it by span).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident,
    /// An integer literal (`128`).
    Int,
    /// A decimal or scientific literal (`0.5`, `1e-5`, `3.0e2`).
    Float,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Comma,
    Semi,
    Colon,
    DotDot,
    Eq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Bang,
    /// A character that starts no token.
    Error,
    Eof,
}

impl Tok {
    /// How the token is named in "expected …" messages.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Ident => "a name",
            Tok::Int => "an integer",
            Tok::Float => "a number",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::Colon => "`:`",
            Tok::DotDot => "`..`",
            Tok::Eq => "`=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Caret => "`^`",
            Tok::Lt => "`<`",
            Tok::Le => "`<=`",
            Tok::Gt => "`>`",
            Tok::Ge => "`>=`",
            Tok::EqEq => "`==`",
            Tok::Ne => "`!=`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Bang => "`!`",
            Tok::Error => "an unexpected character",
            Tok::Eof => "the end of the formula",
        }
    }
}

/// A token and where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Splits `text` (source number `file`) into tokens, ending with `Eof`.
pub fn lex(text: &str, file: u16) -> Vec<Token> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0usize;
    let sp = |s: usize, e: usize| Span::new(file, s, e);
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' || (c == b'/' && b.get(i + 1) == Some(&b'/')) {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident,
                span: sp(start, i),
            });
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut float = false;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            // `0..N` is a range, not the number `0.`.
            if i < b.len() && b[i] == b'.' && b.get(i + 1) != Some(&b'.') {
                float = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    float = true;
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            out.push(Token {
                tok: if float { Tok::Float } else { Tok::Int },
                span: sp(start, i),
            });
            continue;
        }
        let two = |x: u8| b.get(i + 1) == Some(&x);
        let (tok, len) = match c {
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b',' => (Tok::Comma, 1),
            b';' => (Tok::Semi, 1),
            b':' => (Tok::Colon, 1),
            b'.' if two(b'.') => (Tok::DotDot, 2),
            b'=' if two(b'=') => (Tok::EqEq, 2),
            b'=' => (Tok::Eq, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' if two(b'*') => (Tok::Caret, 2),
            b'*' => (Tok::Star, 1),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'^' => (Tok::Caret, 1),
            b'<' if two(b'=') => (Tok::Le, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if two(b'=') => (Tok::Ge, 2),
            b'>' => (Tok::Gt, 1),
            b'!' if two(b'=') => (Tok::Ne, 2),
            b'!' => (Tok::Bang, 1),
            b'&' if two(b'&') => (Tok::AndAnd, 2),
            b'|' if two(b'|') => (Tok::OrOr, 2),
            _ => {
                // One whole (possibly multi-byte) character.
                let len = text[i..].chars().next().map_or(1, char::len_utf8);
                (Tok::Error, len)
            }
        };
        i += len;
        out.push(Token {
            tok,
            span: sp(start, i),
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        span: sp(b.len(), b.len()),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        lex(s, 0).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn ranges_are_not_floats() {
        assert_eq!(
            kinds("0..N"),
            vec![Tok::Int, Tok::DotDot, Tok::Ident, Tok::Eof]
        );
        assert_eq!(
            kinds("0.5 1e-5 2"),
            vec![Tok::Float, Tok::Float, Tok::Int, Tok::Eof]
        );
    }

    #[test]
    fn comments_and_operators() {
        assert_eq!(
            kinds("a <= b # c\n // d\n x**2 != y"),
            vec![
                Tok::Ident,
                Tok::Le,
                Tok::Ident,
                Tok::Ident,
                Tok::Caret,
                Tok::Int,
                Tok::Ne,
                Tok::Ident,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn unknown_characters_are_error_tokens() {
        let t = lex("a @ é", 0);
        assert_eq!(t[1].tok, Tok::Error);
        assert_eq!(t[2].tok, Tok::Error);
        assert_eq!(t[2].span.len(), 2);
    }
}
