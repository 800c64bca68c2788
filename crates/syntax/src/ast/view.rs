//! Borrowed, allocation-free views over the green tree.
//!
//! The owned accessors of [`super`] build a rowan cursor node for every
//! child they visit and return `String`s, which is convenient but costs an
//! allocation or two per step. Hot consumers (lowering walks every
//! instruction of every file) use these views instead: [`NodeRef`] is a
//! green node plus its absolute offset, `Copy`, and everything it returns
//! borrows the tree's text (`&'a str`). The views decode exactly like the
//! owned accessors they mirror ([`Instruction::view`], [`LocDirective::view`],
//! [`OperandRef::from_node`] ⇔ [`super::Operand::from_node`]).

use rowan::{GreenNodeData, NodeOrToken};

use super::{Instruction, LocDirective};
use crate::SyntaxKind::{self, *};
use crate::literal::{self, FloatLit};
use crate::{SyntaxNode, TextRange, TextSize};

/// A node of the tree without a cursor: its green data and start offset.
#[derive(Clone, Copy, Debug)]
pub struct NodeRef<'a> {
    green: &'a GreenNodeData,
    start: TextSize,
}

/// A token of the tree: kind, text and start offset.
#[derive(Clone, Copy, Debug)]
pub struct TokenRef<'a> {
    kind: SyntaxKind,
    text: &'a str,
    start: TextSize,
}

/// A child of a [`NodeRef`].
#[derive(Clone, Copy, Debug)]
pub enum ElementRef<'a> {
    Node(NodeRef<'a>),
    Token(TokenRef<'a>),
}

impl<'a> TokenRef<'a> {
    pub fn kind(self) -> SyntaxKind {
        self.kind
    }

    pub fn text(self) -> &'a str {
        self.text
    }

    pub fn text_range(self) -> TextRange {
        TextRange::at(self.start, TextSize::of(self.text))
    }
}

impl<'a> NodeRef<'a> {
    /// The view of a cursor node (borrows it).
    pub fn new(node: &'a SyntaxNode) -> Self {
        NodeRef {
            green: node.green(),
            start: node.text_range().start(),
        }
    }

    pub fn kind(self) -> SyntaxKind {
        SyntaxKind::from_raw(self.green.kind().0)
    }

    pub fn text_range(self) -> TextRange {
        TextRange::at(self.start, self.green.text_len())
    }

    /// The node's text (allocates; for messages and rare paths).
    pub fn text(self) -> String {
        let mut out = String::with_capacity(u32::from(self.green.text_len()) as usize);
        push_text(self.green, &mut out);
        out
    }

    /// Direct children, nodes and tokens (trivia included), in order.
    pub fn children_with_tokens(self) -> impl Iterator<Item = ElementRef<'a>> + use<'a> {
        let mut offset = self.start;
        self.green.children().map(move |c| {
            let start = offset;
            match c {
                NodeOrToken::Node(n) => {
                    offset += n.text_len();
                    ElementRef::Node(NodeRef { green: n, start })
                }
                NodeOrToken::Token(t) => {
                    offset += t.text_len();
                    ElementRef::Token(TokenRef {
                        kind: SyntaxKind::from_raw(t.kind().0),
                        text: t.text(),
                        start,
                    })
                }
            }
        })
    }

    /// Direct child nodes.
    pub fn children(self) -> impl Iterator<Item = NodeRef<'a>> + use<'a> {
        self.children_with_tokens().filter_map(|e| match e {
            ElementRef::Node(n) => Some(n),
            ElementRef::Token(_) => None,
        })
    }

    /// Direct child tokens that are not trivia.
    pub fn tokens(self) -> impl Iterator<Item = TokenRef<'a>> + use<'a> {
        self.children_with_tokens().filter_map(|e| match e {
            ElementRef::Token(t) if !t.kind.is_trivia() => Some(t),
            _ => None,
        })
    }

    /// First direct child token of `kind`.
    pub fn token(self, kind: SyntaxKind) -> Option<TokenRef<'a>> {
        self.tokens().find(|t| t.kind == kind)
    }

    /// First direct child node of `kind`.
    pub fn child(self, kind: SyntaxKind) -> Option<NodeRef<'a>> {
        self.children().find(|n| n.kind() == kind)
    }

    /// Child nodes that are operands, decoded.
    pub fn operands(self) -> impl Iterator<Item = OperandRef<'a>> + use<'a> {
        self.children().filter_map(OperandRef::from_node)
    }
}

fn push_text(green: &GreenNodeData, out: &mut String) {
    for c in green.children() {
        match c {
            NodeOrToken::Node(n) => push_text(n, out),
            NodeOrToken::Token(t) => out.push_str(t.text()),
        }
    }
}

// ---- instructions ----

/// Borrowed view of an [`Instruction`].
#[derive(Clone, Copy, Debug)]
pub struct InstructionRef<'a>(NodeRef<'a>);

/// `@%p1` / `@!%p1`, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GuardRef<'a> {
    pub negated: bool,
    pub reg: &'a str,
}

impl Instruction {
    /// Allocation-free view of this instruction.
    pub fn view(&self) -> InstructionRef<'_> {
        InstructionRef(NodeRef::new(&self.0))
    }
}

impl<'a> InstructionRef<'a> {
    /// Wraps `node` if it is an `INSTRUCTION`.
    pub fn cast(node: NodeRef<'a>) -> Option<Self> {
        (node.kind() == INSTRUCTION).then_some(InstructionRef(node))
    }

    pub fn syntax(self) -> NodeRef<'a> {
        self.0
    }

    /// Like [`Instruction::guard`].
    pub fn guard(self) -> Option<GuardRef<'a>> {
        let g = self.0.child(GUARD)?;
        let reg = g.tokens().find(|t| matches!(t.kind, REG | IDENT))?.text;
        Some(GuardRef {
            negated: g.token(BANG).is_some(),
            reg,
        })
    }

    fn opcode_node(self) -> Option<NodeRef<'a>> {
        self.0.child(OPCODE)
    }

    /// Like [`Instruction::opcode`].
    pub fn opcode(self) -> Option<&'a str> {
        Some(self.opcode_node()?.token(IDENT)?.text)
    }

    /// Like [`Instruction::modifiers`], without allocating.
    pub fn modifiers(self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.opcode_node()
            .into_iter()
            .flat_map(|n| n.tokens())
            .filter(|t| t.kind == DOT_WORD)
            .map(|t| &t.text[1..])
    }

    /// Like [`Instruction::operands`], lazily.
    pub fn operands(self) -> impl Iterator<Item = OperandRef<'a>> + use<'a> {
        self.0.operands()
    }
}

/// A numeric immediate (the value of [`super::Immediate`] without its text).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImmValue {
    Int(i128),
    F32Bits(u32),
    F64Bits(u64),
    Float(f64),
}

/// The base of an address operand, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrBaseRef<'a> {
    Reg(&'a str),
    Symbol(&'a str),
    Imm(i128),
}

/// An operand node known to decode to an operand (the inside of `!x` and
/// the halves of `a|b`).
#[derive(Clone, Copy, Debug)]
pub struct InnerOperand<'a>(NodeRef<'a>);

impl<'a> InnerOperand<'a> {
    pub fn get(self) -> OperandRef<'a> {
        OperandRef::from_node(self.0).unwrap_or(OperandRef::Sink {
            range: self.0.text_range(),
        })
    }
}

/// Borrowed counterpart of [`super::Operand`]; composite operands keep
/// their node and decode their elements on demand.
#[derive(Clone, Copy, Debug)]
pub enum OperandRef<'a> {
    Reg {
        name: &'a str,
        range: TextRange,
    },
    Imm(ImmValue),
    Symbol {
        name: &'a str,
        range: TextRange,
    },
    SymbolOffset {
        name: &'a str,
        offset: i64,
        range: TextRange,
    },
    Address {
        base: AddrBaseRef<'a>,
        offset: i64,
        range: TextRange,
        /// The address node: its operand children, via
        /// [`NodeRef::operands`], are the operands after the base of a
        /// tensor-map address `[tmap, {c0, c1}]` (none for a plain one).
        node: NodeRef<'a>,
    },
    /// `{...}`: elements via [`NodeRef::operands`].
    Vector(NodeRef<'a>),
    Sink {
        range: TextRange,
    },
    Not(InnerOperand<'a>),
    Pair(InnerOperand<'a>, InnerOperand<'a>),
    /// `(...)`: elements via [`NodeRef::operands`].
    List(NodeRef<'a>),
}

impl<'a> OperandRef<'a> {
    /// Decodes an operand node; `None` exactly where
    /// [`super::Operand::from_node`] gives `None`.
    pub fn from_node(node: NodeRef<'a>) -> Option<OperandRef<'a>> {
        let op = match node.kind() {
            REG_OPERAND => OperandRef::Reg {
                name: node.token(REG)?.text,
                range: node.text_range(),
            },
            IMM_OPERAND => OperandRef::Imm(imm_value(node)),
            SYMBOL_OPERAND => {
                let name = node.token(IDENT)?.text;
                let range = node.text_range();
                match node.child(OFFSET) {
                    Some(o) => OperandRef::SymbolOffset {
                        name,
                        offset: offset_value(o),
                        range,
                    },
                    None => OperandRef::Symbol { name, range },
                }
            }
            ADDRESS_OPERAND => {
                let base = match node
                    .tokens()
                    .find(|t| matches!(t.kind, REG | IDENT | INT_NUMBER))
                {
                    Some(t) if t.kind == INT_NUMBER => {
                        AddrBaseRef::Imm(literal::parse_int(t.text).map_or(0, |l| l.value) as i128)
                    }
                    Some(t) if t.kind == REG => AddrBaseRef::Reg(t.text),
                    Some(t) => AddrBaseRef::Symbol(t.text),
                    None => AddrBaseRef::Imm(0),
                };
                OperandRef::Address {
                    base,
                    offset: node.child(OFFSET).map_or(0, offset_value),
                    range: node.text_range(),
                    node,
                }
            }
            VECTOR_OPERAND => OperandRef::Vector(node),
            LIST_OPERAND => OperandRef::List(node),
            SINK_OPERAND => OperandRef::Sink {
                range: node.text_range(),
            },
            NOT_OPERAND => {
                let inner = node
                    .children()
                    .find(|n| OperandRef::from_node(*n).is_some())?;
                OperandRef::Not(InnerOperand(inner))
            }
            PAIR_OPERAND => {
                let mut it = node
                    .children()
                    .filter(|n| OperandRef::from_node(*n).is_some());
                let a = it.next()?;
                let b = it.next()?;
                OperandRef::Pair(InnerOperand(a), InnerOperand(b))
            }
            _ => return None,
        };
        Some(op)
    }
}

/// Value of an `OFFSET` node, as `decl::offset_value`.
fn offset_value(node: NodeRef<'_>) -> i64 {
    let negative = node.tokens().filter(|t| t.kind == MINUS).count() % 2 == 1;
    let magnitude = node
        .token(INT_NUMBER)
        .and_then(|t| literal::parse_int(t.text).ok())
        .map_or(0, |l| l.value) as i64;
    if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    }
}

/// Value of an `IMM_OPERAND` node, as `instruction::immediate`.
fn imm_value(node: NodeRef<'_>) -> ImmValue {
    let negative = node.token(MINUS).is_some();
    let Some(num) = node
        .tokens()
        .find(|t| matches!(t.kind, INT_NUMBER | FLOAT_NUMBER))
    else {
        return ImmValue::Int(0);
    };
    literal_value(negative, num.kind, num.text)
}

/// Decodes a (possibly negated) number token.
pub(crate) fn literal_value(negative: bool, kind: SyntaxKind, text: &str) -> ImmValue {
    if kind == INT_NUMBER {
        let magnitude = literal::parse_int(text).map_or(0, |l| l.value) as i128;
        return ImmValue::Int(if negative { -magnitude } else { magnitude });
    }
    match literal::parse_float(text) {
        Ok(FloatLit::F32Bits(b)) => ImmValue::F32Bits(if negative { b ^ 0x8000_0000 } else { b }),
        Ok(FloatLit::F64Bits(b)) => ImmValue::F64Bits(if negative { b ^ (1 << 63) } else { b }),
        Ok(FloatLit::Decimal(f)) => ImmValue::Float(if negative { -f } else { f }),
        Err(_) => ImmValue::Float(0.0),
    }
}

// ---- .loc ----

/// Borrowed view of a [`LocDirective`].
#[derive(Clone, Copy, Debug)]
pub struct LocRef<'a>(NodeRef<'a>);

impl LocDirective {
    /// Allocation-free view of this directive.
    pub fn view(&self) -> LocRef<'_> {
        LocRef(NodeRef::new(&self.0))
    }
}

fn int_u32(t: TokenRef<'_>) -> Option<u32> {
    if t.kind != INT_NUMBER {
        return None;
    }
    literal::parse_int(t.text)
        .ok()
        .and_then(|l| u32::try_from(l.value).ok())
}

impl<'a> LocRef<'a> {
    /// Wraps `node` if it is a `LOC_DIRECTIVE`.
    pub fn cast(node: NodeRef<'a>) -> Option<Self> {
        (node.kind() == LOC_DIRECTIVE).then_some(LocRef(node))
    }

    /// `(file, line, column)` as [`LocDirective::file`], `line`, `column`.
    pub fn position(self) -> (Option<u32>, Option<u32>, Option<u32>) {
        let mut it = self.0.tokens().skip(1).take_while(|t| t.kind == INT_NUMBER);
        let file = it.next().and_then(int_u32);
        let line = it.next().and_then(int_u32);
        let col = it.next().and_then(int_u32);
        (file, line, col)
    }

    /// Like [`LocDirective::inlined_at`].
    pub fn inlined_at(self) -> Option<(u32, u32, u32)> {
        let mut it = self.0.tokens();
        it.find(|t| t.kind == IDENT && t.text == "inlined_at")?;
        let a = it.next();
        let b = it.next();
        let c = it.next();
        Some((
            a.and_then(int_u32)?,
            b.and_then(int_u32)?,
            c.and_then(int_u32)?,
        ))
    }
}
