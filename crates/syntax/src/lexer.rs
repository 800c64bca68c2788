//! Hand-written PTX lexer.
//!
//! Works over bytes (PTX is ASCII in practice) and produces only `(kind, len)`
//! pairs: token texts are slices of the input taken later by the tree builder,
//! so lexing allocates nothing per token. It never fails: anything it does not
//! understand becomes an [`ERROR_TOKEN`](SyntaxKind::ERROR_TOKEN) plus an
//! error, which keeps the tree lossless for arbitrary input.
//!
//! Decisions that shape the parser:
//! - a register keeps one dotted component (`%tid.x` is a single `REG`), so
//!   special registers need no joining later;
//! - `.word` (directives and modifiers alike) is one `DOT_WORD`, including
//!   `::` segments (`.shared::cta`, `.mbarrier::complete_tx::bytes`);
//! - numbers swallow trailing identifier characters (`4U`, `12abc`), so bad
//!   literals are one token the parser can report on as a whole.

use crate::SyntaxKind::{self, *};
use rowan::{TextRange, TextSize};

/// One lexed token: its kind and its length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: SyntaxKind,
    pub(crate) len: u32,
}

/// A lexical problem: message and byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LexError {
    pub(crate) message: &'static str,
    pub(crate) range: TextRange,
}

/// Splits `text` into tokens covering every byte, plus the lexical errors.
pub(crate) fn lex(text: &str) -> (Vec<Token>, Vec<LexError>) {
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        pos: 0,
        tokens: Vec::with_capacity(text.len() / 3),
        errors: Vec::new(),
    };
    lexer.run();
    (lexer.tokens, lexer.errors)
}

struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    tokens: Vec<Token>,
    errors: Vec<LexError>,
}

const FOLLOW: u8 = 1;
const IDENT_START: u8 = 2;
const SPACE: u8 = 4;

/// Byte classes, so the hot predicates are one table load.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let alpha = b.is_ascii_alphabetic() || b == b'_' || b == b'$';
        if alpha || b.is_ascii_digit() {
            t[i] |= FOLLOW;
        }
        if alpha {
            t[i] |= IDENT_START;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            t[i] |= SPACE;
        }
        i += 1;
    }
    t
};

/// Characters that may continue an identifier (PTX `followsym`).
#[inline]
fn is_follow(b: u8) -> bool {
    CLASS[b as usize] & FOLLOW != 0
}

#[inline]
fn is_ident_start(b: u8) -> bool {
    CLASS[b as usize] & IDENT_START != 0
}

#[inline]
fn is_space(b: u8) -> bool {
    CLASS[b as usize] & SPACE != 0
}

/// Length in bytes of the UTF-8 character starting with `b`.
#[inline]
fn utf8_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

impl Lexer<'_> {
    #[inline]
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn error(&mut self, start: usize, message: &'static str) {
        self.errors.push(LexError {
            message,
            range: TextRange::new(
                TextSize::from(start as u32),
                TextSize::from(self.pos as u32),
            ),
        });
    }

    #[inline]
    fn eat_while(&mut self, pred: impl Fn(u8) -> bool) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.pos += rest.iter().position(|&b| !pred(b)).unwrap_or(rest.len());
    }

    fn run(&mut self) {
        while self.pos < self.bytes.len() {
            let start = self.pos;
            let kind = self.token();
            debug_assert!(self.pos > start);
            self.tokens.push(Token {
                kind,
                len: (self.pos - start) as u32,
            });
        }
    }

    /// Lexes one token starting at `self.pos` and returns its kind; always
    /// advances by at least one whole character.
    fn token(&mut self) -> SyntaxKind {
        let start = self.pos;
        let b = self.bytes[self.pos];
        if is_space(b) {
            self.eat_while(is_space);
            return WHITESPACE;
        }
        if is_ident_start(b) {
            self.pos += 1;
            self.eat_while(is_follow);
            return IDENT;
        }
        if b.is_ascii_digit() {
            return self.number();
        }
        match b {
            b'/' if self.peek(1) == b'/' => {
                self.eat_while(|c| c != b'\n' && c != b'\r');
                COMMENT
            }
            b'/' if self.peek(1) == b'*' => {
                self.pos += 2;
                loop {
                    if self.pos >= self.bytes.len() {
                        self.error(start, "unterminated block comment");
                        break;
                    }
                    if self.bytes[self.pos] == b'*' && self.peek(1) == b'/' {
                        self.pos += 2;
                        break;
                    }
                    self.pos += 1;
                }
                COMMENT
            }
            b'.' if is_follow(self.peek(1)) => {
                self.pos += 1;
                self.eat_while(is_follow);
                while self.peek(0) == b':' && self.peek(1) == b':' && is_follow(self.peek(2)) {
                    self.pos += 2;
                    self.eat_while(is_follow);
                }
                DOT_WORD
            }
            b'%' if is_follow(self.peek(1)) => {
                self.pos += 1;
                self.eat_while(is_follow);
                // One dotted component: `%tid.x`, `%v.w`.
                if self.peek(0) == b'.' && self.peek(1).is_ascii_alphabetic() {
                    self.pos += 1;
                    self.eat_while(is_follow);
                }
                REG
            }
            b'"' => {
                self.pos += 1;
                loop {
                    match self.peek(0) {
                        b'"' => {
                            self.pos += 1;
                            break;
                        }
                        b'\\'
                            if self.pos + 1 < self.bytes.len()
                                && !matches!(self.peek(1), b'\n' | b'\r') =>
                        {
                            self.pos += 1;
                            self.pos += utf8_len(self.bytes[self.pos]);
                        }
                        b'\n' | b'\r' => {
                            self.error(start, "unterminated string literal");
                            break;
                        }
                        _ if self.pos >= self.bytes.len() => {
                            self.error(start, "unterminated string literal");
                            break;
                        }
                        c => self.pos += utf8_len(c),
                    }
                }
                self.pos = self.pos.min(self.bytes.len());
                STRING
            }
            _ => {
                self.pos += 1;
                match b {
                    b',' => COMMA,
                    b';' => SEMICOLON,
                    b':' => COLON,
                    b'(' => L_PAREN,
                    b')' => R_PAREN,
                    b'[' => L_BRACK,
                    b']' => R_BRACK,
                    b'{' => L_CURLY,
                    b'}' => R_CURLY,
                    b'<' => L_ANGLE,
                    b'>' => R_ANGLE,
                    b'+' => PLUS,
                    b'-' => MINUS,
                    b'*' => STAR,
                    b'/' => SLASH,
                    b'%' => PERCENT,
                    b'&' => AMP,
                    b'|' => PIPE,
                    b'^' => CARET,
                    b'~' => TILDE,
                    b'!' => BANG,
                    b'@' => AT,
                    b'=' => EQ,
                    b'?' => QUESTION,
                    _ => {
                        // Unknown character(s): take the whole run so one
                        // stretch of garbage is one token and one error.
                        self.pos = start + utf8_len(b);
                        while self.pos < self.bytes.len() && is_garbage(self.bytes[self.pos]) {
                            self.pos += utf8_len(self.bytes[self.pos]);
                        }
                        self.pos = self.pos.min(self.bytes.len());
                        self.error(start, "unexpected character");
                        ERROR_TOKEN
                    }
                }
            }
        }
    }

    /// Numbers: decimal, `0x` hex, `0b` binary, leading-zero octal, `U`
    /// suffix, `0f`/`0d` float bit patterns and decimal floats. Validation of
    /// the digits happens in [`crate::literal`]; here we only find the extent.
    fn number(&mut self) -> SyntaxKind {
        let first = self.bytes[self.pos];
        let second = self.peek(1);
        if first == b'0'
            && matches!(second, b'f' | b'F' | b'd' | b'D')
            && self.peek(2).is_ascii_hexdigit()
        {
            self.pos += 2;
            self.eat_while(is_follow);
            return FLOAT_NUMBER;
        }
        if first == b'0' && matches!(second, b'x' | b'X' | b'b' | b'B') {
            self.pos += 2;
            self.eat_while(is_follow);
            return INT_NUMBER;
        }
        self.eat_while(|c| c.is_ascii_digit());
        let mut float = false;
        if self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
            float = true;
            self.pos += 1;
            self.eat_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek(0), b'e' | b'E')
            && (self.peek(1).is_ascii_digit()
                || (matches!(self.peek(1), b'+' | b'-') && self.peek(2).is_ascii_digit()))
        {
            float = true;
            self.pos += 2;
            self.eat_while(|c| c.is_ascii_digit());
        }
        self.eat_while(is_follow);
        if float { FLOAT_NUMBER } else { INT_NUMBER }
    }
}

/// Bytes that continue a run of unknown characters: anything that cannot
/// start a real token (non-ASCII, control characters, stray `#`, ...).
fn is_garbage(b: u8) -> bool {
    !(b.is_ascii_alphanumeric() || is_space(b) || b"_$.%\"/,;:()[]{}<>+-*&|^~!@=?".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(SyntaxKind, &str)> {
        let (tokens, _) = lex(text);
        let mut pos = 0usize;
        tokens
            .iter()
            .map(|t| {
                let s = &text[pos..pos + t.len as usize];
                pos += t.len as usize;
                (t.kind, s)
            })
            .filter(|(k, _)| *k != WHITESPACE)
            .collect()
    }

    #[test]
    fn basic_tokens() {
        assert_eq!(
            kinds("ld.global.nc.v4.f32 {%f1, _}, [%rd1+-4]; // c"),
            vec![
                (IDENT, "ld"),
                (DOT_WORD, ".global"),
                (DOT_WORD, ".nc"),
                (DOT_WORD, ".v4"),
                (DOT_WORD, ".f32"),
                (L_CURLY, "{"),
                (REG, "%f1"),
                (COMMA, ","),
                (IDENT, "_"),
                (R_CURLY, "}"),
                (COMMA, ","),
                (L_BRACK, "["),
                (REG, "%rd1"),
                (PLUS, "+"),
                (MINUS, "-"),
                (INT_NUMBER, "4"),
                (R_BRACK, "]"),
                (SEMICOLON, ";"),
                (COMMENT, "// c"),
            ]
        );
    }

    #[test]
    fn numbers_and_registers() {
        assert_eq!(
            kinds("0f3F800000 0D3FF0000000000000 9.5 1e-3 0x1F 017 0b101 4U %tid.x %r<5>"),
            vec![
                (FLOAT_NUMBER, "0f3F800000"),
                (FLOAT_NUMBER, "0D3FF0000000000000"),
                (FLOAT_NUMBER, "9.5"),
                (FLOAT_NUMBER, "1e-3"),
                (INT_NUMBER, "0x1F"),
                (INT_NUMBER, "017"),
                (INT_NUMBER, "0b101"),
                (INT_NUMBER, "4U"),
                (REG, "%tid.x"),
                (REG, "%r"),
                (L_ANGLE, "<"),
                (INT_NUMBER, "5"),
                (R_ANGLE, ">"),
            ]
        );
    }

    #[test]
    fn scoped_modifiers_and_strings() {
        assert_eq!(
            kinds(".shared::cta \"a\\\"b\" /* x */"),
            vec![
                (DOT_WORD, ".shared::cta"),
                (STRING, "\"a\\\"b\""),
                (COMMENT, "/* x */")
            ]
        );
    }

    #[test]
    fn garbage_is_lossless() {
        for text in [
            "\u{e9}\u{1F600}#",
            "\"abc",
            "/* abc",
            "\"a\\",
            "%",
            ".",
            "\"\\\u{e9}",
        ] {
            let (tokens, errors) = lex(text);
            let total: u32 = tokens.iter().map(|t| t.len).sum();
            assert_eq!(total as usize, text.len(), "{text:?}");
            let mut pos = 0;
            for t in &tokens {
                pos += t.len as usize;
                assert!(text.is_char_boundary(pos));
            }
            let _ = errors;
        }
        assert!(!lex("#").1.is_empty());
    }
}
