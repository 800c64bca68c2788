//! Parser events and the tree builder that turns them into a rowan tree.
//!
//! The grammar never touches rowan: it records a flat list of events. This
//! keeps the grammar free of tree bookkeeping, lets a finished node be wrapped
//! in a parent after the fact (`precede`, via `forward_parent`), and gives one
//! place — the builder — that decides where trivia goes.

use crate::SyntaxKind;
use crate::lexer::Token;
use rowan::{GreenNode, GreenToken, NodeOrToken, TextRange, TextSize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One step of the parse. Kept to 8 bytes because a large file produces
/// millions of events; syntax errors therefore do not travel as events but
/// are recorded by the parser in a side list (they carry a message and a
/// range fixed at parse time and never affect the tree's shape).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    /// Start a node. `forward_parent`, when non-zero, is the distance (in
    /// events) to a later `Start` that must become this node's parent (see
    /// `precede`).
    Start {
        kind: SyntaxKind,
        forward_parent: u32,
    },
    /// Consume one non-trivia token.
    Token,
    /// Finish the innermost open node.
    Finish,
    /// An abandoned or already-replayed `Start`.
    Tombstone,
}

const _: () = assert!(std::mem::size_of::<Event>() <= 8);

/// Replays `events` over `tokens` (all tokens, trivia included) into a green
/// tree. Trivia is emitted lazily: before a token, and before a node starts
/// (so whitespace and comments go to the enclosing node, not the new one);
/// anything left at the end goes into the root. Every byte of `text` ends up
/// in the tree no matter what the events say.
pub(crate) fn build(text: &str, tokens: &[Token], mut events: Vec<Event>) -> GreenNode {
    let mut b = Builder {
        text,
        tokens,
        pos: 0,
        offset: 0,
        depth: 0,
        started: false,
        children: Vec::with_capacity(64),
        open: Vec::with_capacity(16),
        interner: Interner::new(tokens.len() / 16 + 16),
    };
    let mut parents: Vec<SyntaxKind> = Vec::new();
    let mut i = 0;
    while i < events.len() {
        // Fast path for the commonest shape, a node wrapping exactly one
        // token (`REG_OPERAND(%r1)`): build or reuse it in one step.
        if let [
            Event::Start {
                kind,
                forward_parent: 0,
            },
            Event::Token,
            Event::Finish,
            ..,
        ] = events[i..]
            && b.single_token_node(kind)
        {
            i += 3;
            continue;
        }
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start {
                kind,
                forward_parent,
            } => {
                // Collect the chain of forward parents, outermost last.
                parents.push(kind);
                let mut idx = i;
                let mut fp = forward_parent;
                while fp != 0 {
                    idx += fp as usize;
                    fp = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start {
                            kind,
                            forward_parent,
                        } => {
                            parents.push(kind);
                            forward_parent
                        }
                        _ => 0,
                    };
                }
                for kind in parents.drain(..).rev() {
                    b.start(kind);
                }
            }
            Event::Finish => b.finish(),
            Event::Token => b.token(),
            Event::Tombstone => {}
        }
        i += 1;
    }
    // Defensive: close anything left open and flush remaining input into the
    // root, so losslessness never depends on the grammar being perfect.
    if !b.started {
        b.start(SyntaxKind::SOURCE_FILE);
    }
    while b.depth > 0 {
        b.finish();
    }
    match b.children.pop() {
        Some(NodeOrToken::Node(root)) => root,
        _ => GreenNode::new(SyntaxKind::SOURCE_FILE.into(), std::iter::empty()),
    }
}

struct Builder<'a> {
    text: &'a str,
    tokens: &'a [Token],
    pos: usize,
    offset: usize,
    depth: usize,
    /// The root has been opened; a second root would be lost.
    started: bool,
    /// Children of all open nodes, innermost last.
    children: Vec<NodeOrToken<GreenNode, GreenToken>>,
    /// Open nodes: kind and index of their first child in `children`.
    open: Vec<(SyntaxKind, usize)>,
    interner: Interner<'a>,
}

impl Builder<'_> {
    fn emit_raw(&mut self) {
        let t = self.tokens[self.pos];
        let end = self.offset + t.len as usize;
        let token = self.interner.token(t.kind, self.text, self.offset, end);
        self.children.push(NodeOrToken::Token(token));
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
        self.open.push((kind, self.children.len()));
        self.depth += 1;
    }

    fn finish(&mut self) {
        if self.depth == 1 {
            // Root: everything not yet consumed belongs to it.
            while self.pos < self.tokens.len() {
                self.emit_raw();
            }
        }
        if let Some((kind, first)) = self.open.pop() {
            let node = GreenNode::new(kind.into(), self.children.drain(first..));
            self.children.push(NodeOrToken::Node(node));
            self.depth -= 1;
        }
    }

    /// Emits a complete node of `kind` around the next non-trivia token,
    /// shared with identical earlier ones. False (nothing done) at the root
    /// level or at the end of input, where the general path applies.
    fn single_token_node(&mut self, kind: SyntaxKind) -> bool {
        if self.depth == 0 {
            return false;
        }
        self.flush_trivia();
        let Some(t) = self.tokens.get(self.pos).copied() else {
            return false;
        };
        let end = self.offset + t.len as usize;
        let node = self
            .interner
            .single_node(kind, t.kind, self.text, self.offset, end);
        self.children.push(NodeOrToken::Node(node));
        self.offset = end;
        self.pos += 1;
        true
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

/// Deduplicates green tokens within one tree: PTX repeats the same few
/// hundred token texts (`,`, `;`, `%r1`, `\n\t`) over and over, so sharing
/// them saves most token allocations. Single-character punctuation, the
/// bulk of all tokens, is looked up by kind without hashing; everything else
/// goes through an Fx-hashed map keyed by slices of the input (no key
/// allocation). This replaces rowan's `NodeCache`, which was the dominant
/// cost of parsing.
struct Interner<'a> {
    by_kind: Vec<Option<GreenToken>>,
    /// Whitespace tokens of one or two bytes, indexed by their bytes.
    whitespace: Vec<Option<GreenToken>>,
    map: HashMap<(SyntaxKind, &'a str), GreenToken, BuildHasherDefault<FxHasher>>,
    /// Tokens of at most 8 bytes, keyed by text bytes, kind and length.
    short: HashMap<u128, GreenToken, BuildHasherDefault<FxHasher>>,
    /// Nodes with exactly one short token child, keyed by the token's
    /// [`short_key`] plus the node kind.
    single: HashMap<u128, GreenNode, BuildHasherDefault<FxHasher>>,
}

impl<'a> Interner<'a> {
    fn new(capacity: usize) -> Self {
        Interner {
            by_kind: vec![None; SyntaxKind::EOF as usize + 1],
            whitespace: vec![None; 32 * 33],
            map: HashMap::with_capacity_and_hasher(capacity / 4, BuildHasherDefault::default()),
            short: HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::default()),
            single: HashMap::with_capacity_and_hasher(capacity / 2, BuildHasherDefault::default()),
        }
    }

    /// The token of `kind` spanning `source[start..end]`.
    #[inline]
    fn token(&mut self, kind: SyntaxKind, source: &'a str, start: usize, end: usize) -> GreenToken {
        let text = &source[start..end];
        let fixed = text.len() == 1
            && !matches!(
                kind,
                SyntaxKind::IDENT
                    | SyntaxKind::INT_NUMBER
                    | SyntaxKind::WHITESPACE
                    | SyntaxKind::ERROR_TOKEN
            );
        if fixed {
            if let Some(Some(t)) = self.by_kind.get(kind as usize) {
                return t.clone();
            }
            let t = GreenToken::new(kind.into(), text);
            if let Some(slot) = self.by_kind.get_mut(kind as usize) {
                *slot = Some(t.clone());
            }
            return t;
        }
        if kind == SyntaxKind::WHITESPACE && text.len() <= 2 {
            // A third of all tokens are short whitespace (`" "`, `"\n\t"`):
            // index a table directly. Whitespace bytes are distinct mod 32.
            let b = text.as_bytes();
            let slot = (b[0] & 31) as usize * 33 + b.get(1).map_or(32, |c| (c & 31) as usize);
            if let Some(Some(t)) = self.whitespace.get(slot) {
                return t.clone();
            }
            let t = GreenToken::new(kind.into(), text);
            if let Some(entry) = self.whitespace.get_mut(slot) {
                *entry = Some(t.clone());
            }
            return t;
        }
        if let Some(key) = short_key(kind, source, start, end) {
            return self
                .short
                .entry(key)
                .or_insert_with(|| GreenToken::new(kind.into(), text))
                .clone();
        }
        self.map
            .entry((kind, text))
            .or_insert_with(|| GreenToken::new(kind.into(), text))
            .clone()
    }
}

impl<'a> Interner<'a> {
    /// A node of `node_kind` whose only child is the token of `token_kind`
    /// spanning `source[start..end]`, shared when seen before.
    fn single_node(
        &mut self,
        node_kind: SyntaxKind,
        token_kind: SyntaxKind,
        source: &'a str,
        start: usize,
        end: usize,
    ) -> GreenNode {
        let key = match short_key(token_kind, source, start, end) {
            Some(k) => k | ((node_kind as u128) << 96),
            None => {
                let token = self.token(token_kind, source, start, end);
                return GreenNode::new(node_kind.into(), [NodeOrToken::Token(token)]);
            }
        };
        if let Some(node) = self.single.get(&key) {
            return node.clone();
        }
        let token = self.token(token_kind, source, start, end);
        let node = GreenNode::new(node_kind.into(), [NodeOrToken::Token(token)]);
        self.single.insert(key, node.clone());
        node
    }
}

/// Packs a token of at most 8 bytes into an integer key (text bytes, kind,
/// length): hashing and comparing it is one or two word operations instead
/// of a string hash and `memcmp`. `None` for longer tokens.
#[inline]
fn short_key(kind: SyntaxKind, source: &str, start: usize, end: usize) -> Option<u128> {
    let len = end - start;
    if len == 0 || len > 8 {
        return None;
    }
    let bytes = source.as_bytes();
    let word = match bytes.get(start..start + 8) {
        // Common case: read 8 bytes at once and mask off the excess.
        Some(w) => {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            w & (u64::MAX >> (8 * (8 - len)))
        }
        None => {
            let mut w = [0u8; 8];
            w[..len].copy_from_slice(&bytes[start..end]);
            u64::from_le_bytes(w)
        }
    };
    Some(word as u128 | ((kind as u128) << 64) | ((len as u128) << 80))
}

/// The Fx hash (rustc's): a multiply-rotate over 8-byte words. Not
/// DoS-resistant, which does not matter for a per-parse intern table.
#[derive(Default)]
struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(buf));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits weak; hashbrown indexes buckets
        // by low bits, so rotate the strong high bits down.
        self.hash.rotate_left(26)
    }
}

/// An empty range at byte `offset`.
pub(crate) fn empty_range(offset: usize) -> TextRange {
    TextRange::empty(TextSize::from(offset as u32))
}
