//! Parser events and the tree builder that turns them into a rowan tree.
//!
//! The grammar never touches rowan: it records a flat list of events. This
//! keeps the grammar free of tree bookkeeping, lets a finished node be wrapped
//! in a parent after the fact (`precede`, via `forward_parent`), and gives one
//! place — the builder — that decides where trivia goes.

use crate::lexer::Token;
use crate::{SyntaxError, SyntaxKind};
use rowan::{GreenNode, GreenNodeBuilder, TextRange, TextSize};

/// One step of the parse.
#[derive(Debug)]
pub(crate) enum Event {
    /// Start a node. `forward_parent` is the distance (in events) to a later
    /// `Start` that must become this node's parent (see `precede`).
    Start {
        kind: SyntaxKind,
        forward_parent: Option<u32>,
    },
    /// Consume one non-trivia token.
    Token,
    /// Finish the innermost open node.
    Finish,
    /// Record a syntax error.
    Error(SyntaxError),
    /// An abandoned or already-replayed `Start`.
    Tombstone,
}

/// Replays `events` over `tokens` (all tokens, trivia included) into a green
/// tree. Trivia is emitted lazily: before a token, and before a node starts
/// (so whitespace and comments go to the enclosing node, not the new one);
/// anything left at the end goes into the root. Every byte of `text` ends up
/// in the tree no matter what the events say.
pub(crate) fn build(text: &str, tokens: &[Token], mut events: Vec<Event>) -> (GreenNode, Vec<SyntaxError>) {
    let mut b = Builder {
        text,
        tokens,
        pos: 0,
        offset: 0,
        depth: 0,
        started: false,
        inner: GreenNodeBuilder::new(),
        errors: Vec::new(),
    };
    let mut parents: Vec<SyntaxKind> = Vec::new();
    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start { kind, forward_parent } => {
                // Collect the chain of forward parents, outermost last.
                parents.push(kind);
                let mut idx = i;
                let mut fp = forward_parent;
                while let Some(delta) = fp {
                    idx += delta as usize;
                    fp = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start { kind, forward_parent } => {
                            parents.push(kind);
                            forward_parent
                        }
                        _ => None,
                    };
                }
                for kind in parents.drain(..).rev() {
                    b.start(kind);
                }
            }
            Event::Finish => b.finish(),
            Event::Token => b.token(),
            Event::Error(e) => b.errors.push(e),
            Event::Tombstone => {}
        }
    }
    // Defensive: close anything left open and flush remaining input into the
    // root, so losslessness never depends on the grammar being perfect.
    if !b.started {
        b.start(SyntaxKind::SOURCE_FILE);
    }
    while b.depth > 0 {
        b.finish();
    }
    (b.inner.finish(), b.errors)
}

struct Builder<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    offset: usize,
    depth: usize,
    /// The root has been opened; a second root would make rowan panic.
    started: bool,
    inner: GreenNodeBuilder<'static>,
    errors: Vec<SyntaxError>,
}

impl Builder<'_> {
    fn emit_raw(&mut self) {
        let t = self.tokens[self.pos];
        let end = self.offset + t.len as usize;
        self.inner.token(t.kind.into(), &self.text[self.offset..end]);
        self.offset = end;
        self.pos += 1;
    }

    fn flush_trivia(&mut self) {
        while self.pos < self.tokens.len() && self.tokens[self.pos].kind.is_trivia() {
            self.emit_raw();
        }
    }

    fn start(&mut self, kind: SyntaxKind) {
        if self.depth == 0 && self.started {
            return; // never open a second root
        }
        self.started = true;
        if self.depth > 0 {
            self.flush_trivia();
        }
        self.inner.start_node(kind.into());
        self.depth += 1;
    }

    fn finish(&mut self) {
        if self.depth == 1 {
            // Root: everything not yet consumed belongs to it.
            while self.pos < self.tokens.len() {
                self.emit_raw();
            }
        }
        if self.depth > 0 {
            self.inner.finish_node();
            self.depth -= 1;
        }
    }

    fn token(&mut self) {
        if self.depth == 0 {
            return; // the root's finish flushes it
        }
        self.flush_trivia();
        if self.pos < self.tokens.len() {
            self.emit_raw();
        }
    }
}

/// An empty range at byte `offset`.
pub(crate) fn empty_range(offset: usize) -> TextRange {
    TextRange::empty(TextSize::from(offset as u32))
}
