//! Instructions and their operands.

use super::decl::offset_value;
use super::view::ImmValue;
use super::{ast_node, int_value, token, tokens, words};
use crate::SyntaxKind::*;
use crate::{SyntaxNode, TextRange, TextSize};

ast_node!(
    /// `[@[!]pred] opcode.mods operands;`
    Instruction,
    INSTRUCTION
);

/// `@%p1` (`negated: false`) or `@!%p1` (`negated: true`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub negated: bool,
    pub reg: String,
}

impl Instruction {
    pub fn guard(&self) -> Option<Guard> {
        let g = self.0.children().find(|n| n.kind() == GUARD)?;
        let reg = tokens(&g)
            .find(|t| matches!(t.kind(), REG | IDENT))?
            .text()
            .to_owned();
        Some(Guard {
            negated: token(&g, BANG).is_some(),
            reg,
        })
    }

    fn opcode_node(&self) -> Option<SyntaxNode> {
        self.0.children().find(|n| n.kind() == OPCODE)
    }

    /// The opcode word without modifiers: `"ld"` for `ld.global.f32`.
    pub fn opcode(&self) -> Option<String> {
        token(&self.opcode_node()?, IDENT).map(|t| t.text().to_owned())
    }

    /// The dotted modifiers in source order, without dots:
    /// `["global", "nc", "v4", "f32"]`. `::` stays inside one modifier
    /// (`"shared::cta"`).
    pub fn modifiers(&self) -> Vec<String> {
        self.opcode_node()
            .map(|n| words(&n).collect())
            .unwrap_or_default()
    }

    /// Range of the opcode with its modifiers (`ld.global.nc.v4.f32`).
    pub fn opcode_range(&self) -> Option<TextRange> {
        self.opcode_node().map(|n| n.text_range())
    }

    /// Operands in order.
    pub fn operands(&self) -> Vec<Operand> {
        self.0
            .children()
            .filter_map(|n| Operand::from_node(&n))
            .collect()
    }

    /// Exact source range of each operand, parallel to [`Self::operands`]
    /// (immediates included, which [`Operand::range`] cannot give).
    pub fn operand_ranges(&self) -> Vec<TextRange> {
        self.0
            .children()
            .filter(|n| Operand::from_node(n).is_some())
            .map(|n| n.text_range())
            .collect()
    }
}

/// The base of an address operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AddrBase {
    /// `[%rd1]`
    Reg(String),
    /// `[sym]`, `[foo_param_0]`
    Symbol(String),
    /// `[0x100]` (absolute address)
    Imm(i128),
}

/// A decoded immediate.
#[derive(Clone, Debug, PartialEq)]
pub enum Immediate {
    /// Integer with sign applied; `text` is the literal as written (`-1`,
    /// `0x1F`, `4U`, without whitespace). A malformed literal (reported as a
    /// syntax error) decodes as 0.
    Int { value: i128, text: String },
    /// `0f3F800000`: exact single-precision bits (sign folded in for `-0f..`).
    F32Bits(u32),
    /// `0d3FF0000000000000`: exact double-precision bits.
    F64Bits(u64),
    /// A decimal literal such as `1.0` or `1e-3`.
    Float(f64),
}

// Floats compared by bits, so `Eq`/`Hash` are lawful (NaN == NaN here).
impl Eq for Immediate {}

impl std::hash::Hash for Immediate {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Immediate::Int { value, text } => (value, text).hash(state),
            Immediate::F32Bits(b) => b.hash(state),
            Immediate::F64Bits(b) => b.hash(state),
            Immediate::Float(f) => f.to_bits().hash(state),
        }
    }
}

/// An instruction operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// `%r1`, `%tid.x`, or a plain identifier declared with `.reg` is a
    /// `Symbol` (the parser cannot tell; lowering resolves it).
    Reg {
        name: String,
        range: TextRange,
    },
    Imm(Immediate),
    /// Labels, functions, variables, params: `$L__BB0_2`, `vprintf`.
    Symbol {
        name: String,
        range: TextRange,
    },
    /// `sym+8` (as a `mov` source).
    SymbolOffset {
        name: String,
        offset: i64,
        range: TextRange,
    },
    /// `[base+offset]`. Extra tensor-coordinate operands (`[%rd1, {...}]`)
    /// stay in the syntax tree only.
    Address {
        base: AddrBase,
        offset: i64,
        range: TextRange,
    },
    /// `{%f1, %f2, _, %f4}`
    Vector {
        elems: Vec<Operand>,
        range: TextRange,
    },
    /// `_`
    Sink {
        range: TextRange,
    },
    /// `!%p1`
    Not(Box<Operand>),
    /// `%p1|%p2`
    Pair(Box<Operand>, Box<Operand>),
    /// `(param0, param1)` in a call.
    List {
        elems: Vec<Operand>,
        range: TextRange,
    },
}

impl Operand {
    /// Source range. `Imm` carries no range (the variant is just the value),
    /// so for a bare immediate this is an empty range at offset 0: use
    /// [`Instruction::operand_ranges`] for exact ranges of every operand. For
    /// `Not` it is the inner range extended by the one-byte `!`.
    pub fn range(&self) -> TextRange {
        match self {
            Operand::Reg { range, .. }
            | Operand::Symbol { range, .. }
            | Operand::SymbolOffset { range, .. }
            | Operand::Address { range, .. }
            | Operand::Vector { range, .. }
            | Operand::Sink { range }
            | Operand::List { range, .. } => *range,
            Operand::Imm(_) => TextRange::empty(TextSize::from(0)),
            Operand::Not(inner) => {
                let r = inner.range();
                TextRange::new(
                    r.start()
                        .checked_sub(TextSize::from(1))
                        .unwrap_or(r.start()),
                    r.end(),
                )
            }
            Operand::Pair(a, b) => a.range().cover(b.range()),
        }
    }

    /// Decodes an operand node; `None` for nodes that are not operands
    /// (opcode, guard, `ERROR`).
    pub fn from_node(node: &SyntaxNode) -> Option<Operand> {
        let range = node.text_range();
        let op = match node.kind() {
            REG_OPERAND => Operand::Reg {
                name: token(node, REG)?.text().to_owned(),
                range,
            },
            IMM_OPERAND => Operand::Imm(immediate(node)),
            SYMBOL_OPERAND => {
                let name = token(node, IDENT)?.text().to_owned();
                match node.children().find(|n| n.kind() == OFFSET) {
                    Some(o) => Operand::SymbolOffset {
                        name,
                        offset: offset_value(&o),
                        range,
                    },
                    None => Operand::Symbol { name, range },
                }
            }
            ADDRESS_OPERAND => {
                let base_tok = tokens(node).find(|t| matches!(t.kind(), REG | IDENT | INT_NUMBER));
                let base = match base_tok {
                    Some(t) if t.kind() == INT_NUMBER => {
                        AddrBase::Imm(int_value(&t).unwrap_or(0) as i128)
                    }
                    Some(t) if t.kind() == REG => AddrBase::Reg(t.text().to_owned()),
                    Some(t) => AddrBase::Symbol(t.text().to_owned()),
                    None => AddrBase::Imm(0),
                };
                let offset = node
                    .children()
                    .find(|n| n.kind() == OFFSET)
                    .map_or(0, |o| offset_value(&o));
                Operand::Address {
                    base,
                    offset,
                    range,
                }
            }
            VECTOR_OPERAND => Operand::Vector {
                elems: node
                    .children()
                    .filter_map(|n| Operand::from_node(&n))
                    .collect(),
                range,
            },
            LIST_OPERAND => Operand::List {
                elems: node
                    .children()
                    .filter_map(|n| Operand::from_node(&n))
                    .collect(),
                range,
            },
            SINK_OPERAND => Operand::Sink { range },
            NOT_OPERAND => Operand::Not(Box::new(
                node.children().find_map(|n| Operand::from_node(&n))?,
            )),
            PAIR_OPERAND => {
                let mut it = node.children().filter_map(|n| Operand::from_node(&n));
                let a = it.next()?;
                let b = it.next()?;
                Operand::Pair(Box::new(a), Box::new(b))
            }
            _ => return None,
        };
        Some(op)
    }
}

/// Decodes an `IMM_OPERAND` node (optional sign + number).
pub(crate) fn immediate(node: &SyntaxNode) -> Immediate {
    let negative = token(node, MINUS).is_some();
    let Some(num) = tokens(node).find(|t| matches!(t.kind(), INT_NUMBER | FLOAT_NUMBER)) else {
        return Immediate::Int {
            value: 0,
            text: String::new(),
        };
    };
    match super::view::literal_value(negative, num.kind(), num.text()) {
        ImmValue::Int(value) => Immediate::Int {
            value,
            text: if negative {
                format!("-{}", num.text())
            } else {
                num.text().to_owned()
            },
        },
        ImmValue::F32Bits(b) => Immediate::F32Bits(b),
        ImmValue::F64Bits(b) => Immediate::F64Bits(b),
        ImmValue::Float(f) => Immediate::Float(f),
    }
}
