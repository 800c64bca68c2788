//! Event-based, error-tolerant recursive-descent parser.
//!
//! The parser sees only non-trivia tokens (plus, per token, whether trivia
//! and a newline precede it — PTX modifiers must be glued to their opcode and
//! a few recovery heuristics look at line breaks). It records [`Event`]s; the
//! builder in [`event`] turns them into a lossless rowan tree.
//!
//! Invariants that make "never panics, always terminates" hold:
//! - every loop in the grammar either consumes a token or exits;
//! - errors are recorded (in order, beside the events), never returned as
//!   `Result`s, and reading past the end yields the `EOF` kind instead of
//!   panicking;
//! - recursion into nested braces/brackets/parens is capped (`MAX_DEPTH`), so
//!   adversarial nesting cannot overflow the stack.

pub(crate) mod event;
mod grammar;

use crate::lexer::Token;
use crate::{SyntaxError, SyntaxKind};
use event::{Event, empty_range};
use rowan::{TextRange, TextSize};

pub(crate) use grammar::source_file;

/// A non-trivia token as the parser sees it.
#[derive(Clone, Copy, Debug)]
struct PToken {
    kind: SyntaxKind,
    start: u32,
    end: u32,
    /// Whitespace or a comment directly precedes this token.
    trivia_before: bool,
    /// A line break precedes this token (in whitespace or a block comment).
    newline_before: bool,
}

pub(crate) struct Parser<'t> {
    text: &'t str,
    tokens: Vec<PToken>,
    pos: usize,
    events: Vec<Event>,
    errors: Vec<SyntaxError>,
    /// Current nesting of recursive constructs (blocks, braces, parens).
    depth: u32,
}

/// Deeper nesting than this is reported instead of recursed into, so
/// adversarial input like `{{{{...` cannot overflow the stack.
const MAX_DEPTH: u32 = 128;

impl<'t> Parser<'t> {
    pub(crate) fn new(text: &'t str, raw: &[Token]) -> Self {
        let mut tokens = Vec::with_capacity(raw.len() / 2 + 1);
        let mut offset = 0u32;
        let mut trivia = false;
        let mut newline = false;
        for t in raw {
            let end = offset + t.len;
            if t.kind.is_trivia() {
                trivia = true;
                newline |= text.as_bytes()[offset as usize..end as usize].contains(&b'\n');
            } else {
                tokens.push(PToken {
                    kind: t.kind,
                    start: offset,
                    end,
                    trivia_before: trivia,
                    newline_before: newline,
                });
                trivia = false;
                newline = false;
            }
            offset = end;
        }
        Parser {
            text,
            tokens,
            pos: 0,
            events: Vec::with_capacity(raw.len()),
            errors: Vec::new(),
            depth: 0,
        }
    }

    pub(crate) fn finish(self) -> (Vec<Event>, Vec<SyntaxError>) {
        (self.events, self.errors)
    }

    // ---- looking ----

    /// Kind of the token `n` ahead (`EOF` past the end).
    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        self.tokens
            .get(self.pos + n)
            .map_or(SyntaxKind::EOF, |t| t.kind)
    }

    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn at_eof(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    /// Text of the token `n` ahead (empty past the end).
    pub(crate) fn nth_text(&self, n: usize) -> &'t str {
        self.tokens
            .get(self.pos + n)
            .map_or("", |t| &self.text[t.start as usize..t.end as usize])
    }

    pub(crate) fn current_text(&self) -> &'t str {
        self.nth_text(0)
    }

    /// The token `n` ahead is a `DOT_WORD` with exactly this text.
    pub(crate) fn nth_at_word(&self, n: usize, word: &str) -> bool {
        self.nth(n) == SyntaxKind::DOT_WORD && self.nth_text(n) == word
    }

    pub(crate) fn at_word(&self, word: &str) -> bool {
        self.nth_at_word(0, word)
    }

    /// Trivia separates the token `n` ahead from the one before it.
    pub(crate) fn nth_trivia_before(&self, n: usize) -> bool {
        self.tokens
            .get(self.pos + n)
            .is_none_or(|t| t.trivia_before)
    }

    /// A line break separates the current token from the one before it.
    pub(crate) fn newline_before(&self) -> bool {
        self.tokens.get(self.pos).is_none_or(|t| t.newline_before)
    }

    /// Byte range of the current token (empty at the end of input).
    pub(crate) fn current_range(&self) -> TextRange {
        match self.tokens.get(self.pos) {
            Some(t) => TextRange::new(TextSize::from(t.start), TextSize::from(t.end)),
            None => empty_range(self.text.len()),
        }
    }

    /// Empty range just after the previous non-trivia token: where a missing
    /// `;` or `}` belongs.
    fn after_previous(&self) -> TextRange {
        match self.pos.checked_sub(1).and_then(|i| self.tokens.get(i)) {
            Some(t) => empty_range(t.end as usize),
            None => empty_range(0),
        }
    }

    // ---- consuming ----

    pub(crate) fn bump(&mut self) {
        if self.pos < self.tokens.len() {
            self.pos += 1;
            self.events.push(Event::Token);
        }
    }

    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// Consumes `kind` or reports `expected <what>` just after the previous
    /// token, consuming nothing.
    pub(crate) fn expect(&mut self, kind: SyntaxKind, what: &str) -> bool {
        if self.eat(kind) {
            return true;
        }
        self.error_expected(what);
        false
    }

    // ---- errors ----

    pub(crate) fn error_at(&mut self, range: TextRange, message: impl Into<String>) {
        self.errors.push(SyntaxError {
            message: message.into(),
            range,
        });
    }

    /// Error on the current token.
    pub(crate) fn error(&mut self, message: impl Into<String>) {
        let range = self.current_range();
        self.error_at(range, message);
    }

    /// `expected X`: points at the gap after the previous token, or at the
    /// current token when that is on the same line (so the user sees what was
    /// found instead).
    pub(crate) fn error_expected(&mut self, what: &str) {
        let message = if self.at_eof() {
            format!("expected {what}, found end of input")
        } else {
            format!("expected {what}, found `{}`", self.current_text())
        };
        let range = if self.at_eof() || self.newline_before() {
            self.after_previous()
        } else {
            self.current_range()
        };
        self.error_at(range, message);
    }

    /// Reports `message` on the current token and wraps it in an `ERROR`
    /// node, guaranteeing progress.
    pub(crate) fn err_and_bump(&mut self, message: impl Into<String>) {
        // The lexer already reported an unknown character; one error is enough.
        if !self.at(SyntaxKind::ERROR_TOKEN) {
            self.error(message);
        }
        if !self.at_eof() {
            let m = self.start();
            self.bump();
            m.complete(self, SyntaxKind::ERROR);
        }
    }

    // ---- recursion guard ----

    /// Enters a nested construct. At the depth limit, reports an error,
    /// consumes the current token and returns false (the caller must then
    /// not recurse and not call [`Parser::leave`]).
    pub(crate) fn enter(&mut self) -> bool {
        if self.depth >= MAX_DEPTH {
            self.err_and_bump("nesting too deep");
            return false;
        }
        self.depth += 1;
        true
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- nodes ----

    pub(crate) fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Start {
            kind: SyntaxKind::TOMBSTONE_KIND,
            forward_parent: 0,
        });
        Marker { pos }
    }
}

impl SyntaxKind {
    /// Placeholder kind of a `Start` event that has not been completed yet.
    const TOMBSTONE_KIND: SyntaxKind = SyntaxKind::ERROR;
}

/// An open node. Must be completed or abandoned.
pub(crate) struct Marker {
    pos: u32,
}

impl Marker {
    pub(crate) fn complete(self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        if let Some(Event::Start { kind: slot, .. }) = p.events.get_mut(self.pos as usize) {
            *slot = kind;
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos }
    }

    /// Drops the node; its tokens go to the parent.
    pub(crate) fn abandon(self, p: &mut Parser<'_>) {
        let idx = self.pos as usize;
        if idx + 1 == p.events.len() {
            p.events.pop();
        } else if let Some(slot) = p.events.get_mut(idx) {
            *slot = Event::Tombstone;
        }
    }
}

/// A finished node, which may still get a parent wrapped around it.
#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
}

impl CompletedMarker {
    /// Starts a node that will become the parent of this one (`a | b`).
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        let new = p.start();
        if let Some(Event::Start { forward_parent, .. }) = p.events.get_mut(self.pos as usize) {
            *forward_parent = new.pos - self.pos;
        }
        new
    }
}
