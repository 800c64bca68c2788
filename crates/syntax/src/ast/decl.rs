//! Declarations: parameters, variables, registers, initialisers.

use super::{ast_node, int_value, token, tokens, words};
use crate::SyntaxKind::*;
use crate::literal;
use crate::{SyntaxNode, TextRange};

/// State-space words (without dot).
const SPACES: &[&str] = &["param", "shared", "local", "const", "global", "reg", "tex"];

/// Is `w` (without dot) a PTX fundamental type: `b8`..`b128`, `u16`, `s32`,
/// `f16`, `f16x2`, `bf16`, `tf32`, `pred`, `e4m3`, ...?
fn is_type_word(w: &str) -> bool {
    match w {
        "pred" | "bf16" | "bf16x2" | "tf32" | "e4m3" | "e5m2" | "e4m3x2" | "e5m2x2" | "e2m1"
        | "e2m1x2" | "e3m2" | "e2m3" | "ue8m0" => true,
        _ => {
            let mut chars = w.chars();
            let first_ok = matches!(chars.next(), Some('b' | 's' | 'u' | 'f'));
            let rest = chars.as_str();
            let digits = rest.strip_suffix("x2").unwrap_or(rest);
            first_ok && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
    }
}

/// Accessors common to every declaration-like node (a sequence of dotted
/// modifiers, a name, array dimensions).
fn state_space(node: &SyntaxNode) -> Option<String> {
    words(node).find(|w| SPACES.contains(&w.as_str()))
}

fn align(node: &SyntaxNode) -> Option<u32> {
    let mut it = tokens(node);
    it.find(|t| t.kind() == DOT_WORD && t.text() == ".align")?;
    it.next()
        .as_ref()
        .and_then(int_value)
        .and_then(|v| u32::try_from(v).ok())
}

fn ty(node: &SyntaxNode) -> Option<String> {
    words(node).find(|w| is_type_word(w))
}

fn vector_width(node: &SyntaxNode) -> Option<u32> {
    words(node).find_map(|w| w.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()))
}

fn name_token(node: &SyntaxNode) -> Option<crate::SyntaxToken> {
    tokens(node).find(|t| matches!(t.kind(), IDENT | REG))
}

fn array_dims(node: &SyntaxNode) -> Vec<Option<u64>> {
    node.children()
        .filter(|n| n.kind() == ARRAY_DIM)
        .map(|d| token(&d, INT_NUMBER).as_ref().and_then(int_value))
        .collect()
}

macro_rules! decl_accessors {
    () => {
        /// `"param"`, `"shared"`, `"local"`, `"const"`, `"global"` (the first state space).
        pub fn state_space(&self) -> Option<String> {
            state_space(&self.0)
        }

        /// The value after the first `.align`.
        pub fn align(&self) -> Option<u32> {
            align(&self.0)
        }

        /// Element type without the dot: `"f32"`, `"b8"`, `"u64"`.
        pub fn ty(&self) -> Option<String> {
            ty(&self.0)
        }

        /// `2`/`4`/`8` for `.v2`/`.v4`/`.v8`.
        pub fn vector_width(&self) -> Option<u32> {
            vector_width(&self.0)
        }

        /// The (first) declared name.
        pub fn name(&self) -> Option<String> {
            name_token(&self.0).map(|t| t.text().to_owned())
        }

        pub fn name_range(&self) -> Option<TextRange> {
            name_token(&self.0).map(|t| t.text_range())
        }

        /// `[16][4]` → `[Some(16), Some(4)]`; `[]` → `[None]`.
        pub fn array_dims(&self) -> Vec<Option<u64>> {
            array_dims(&self.0)
        }

        /// Triton's `.ptr` attribute on a pointer parameter.
        pub fn is_ptr(&self) -> bool {
            words(&self.0).any(|w| w == "ptr")
        }

        /// The pointee state space after `.ptr` (`.ptr .global` → `"global"`).
        pub fn ptr_space(&self) -> Option<String> {
            let mut it = words(&self.0);
            it.find(|w| w == "ptr")?;
            it.find(|w| SPACES.contains(&w.as_str()))
        }

        /// Every dotted word of the declaration, without dots, in order.
        pub fn modifiers(&self) -> Vec<String> {
            words(&self.0).collect()
        }
    };
}

ast_node!(
    /// A function or prototype parameter.
    ParamDecl,
    PARAM_DECL
);

impl ParamDecl {
    decl_accessors!();

    /// Parameters have no initialisers; present for symmetry with [`VarDecl`].
    pub fn initializer(&self) -> Option<Initializer> {
        None
    }
}

ast_node!(
    /// A `.global/.const/.shared/.local/.param` variable.
    VarDecl,
    VAR_DECL
);

impl VarDecl {
    decl_accessors!();

    /// `"extern"`, `"visible"`, `"weak"` or `"common"`, if present.
    pub fn linkage(&self) -> Option<String> {
        words(&self.0).find(|w| matches!(w.as_str(), "visible" | "extern" | "weak" | "common"))
    }

    pub fn initializer(&self) -> Option<Initializer> {
        self.0.children().find_map(Initializer::cast)
    }
}

ast_node!(
    /// `= value` or `= { ... }`.
    Initializer,
    INITIALIZER
);

/// One scalar of an initialiser.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InitValue {
    /// An integer literal, sign applied.
    Int(i128),
    /// A float: `(bits, width)`. `0f..` gives 32-bit bits, `0d..` 64-bit
    /// bits; a decimal literal (`1.5`) gives the bits of the `f64` value with
    /// width 64 (PTX reads decimal literals as double precision).
    Float(u64, u32),
    /// `sym` or `sym+off`: the address of a symbol plus a byte offset.
    Symbol(String, i64),
    /// `generic(sym)` (or `generic(sym)+off`): the generic address of a
    /// symbol plus a byte offset.
    Generic(String, i64),
}

impl Initializer {
    /// All scalars in source order, nested braces flattened.
    pub fn values(&self) -> Vec<InitValue> {
        self.0
            .descendants()
            .filter_map(|n| match n.kind() {
                IMM_OPERAND => Some(match super::instruction::immediate(&n) {
                    super::Immediate::Int { value, .. } => InitValue::Int(value),
                    super::Immediate::F32Bits(b) => InitValue::Float(b as u64, 32),
                    super::Immediate::F64Bits(b) => InitValue::Float(b, 64),
                    super::Immediate::Float(f) => InitValue::Float(f.to_bits(), 64),
                }),
                SYMBOL_OPERAND => {
                    let name = token(&n, IDENT)?.text().to_owned();
                    Some(InitValue::Symbol(name, offsets(&n)))
                }
                GENERIC_EXPR => {
                    let name = tokens(&n)
                        .filter(|t| t.kind() == IDENT)
                        .nth(1)?
                        .text()
                        .to_owned();
                    Some(InitValue::Generic(name, offsets(&n)))
                }
                _ => None,
            })
            .collect()
    }

    /// Whether the initialiser is a brace list (`{...}`) rather than a scalar.
    pub fn is_list(&self) -> bool {
        self.0.children().any(|n| n.kind() == INIT_LIST)
    }
}

/// Sum of the `OFFSET` children of `node`.
fn offsets(node: &SyntaxNode) -> i64 {
    node.children()
        .filter(|n| n.kind() == OFFSET)
        .map(|o| offset_value(&o))
        .fold(0i64, i64::wrapping_add)
}

/// Value of one `OFFSET` node (`+ 8`, `+ -4`, `- 4`), modulo 2^64.
pub(crate) fn offset_value(node: &SyntaxNode) -> i64 {
    let negative = tokens(node).filter(|t| t.kind() == MINUS).count() % 2 == 1;
    let magnitude = token(node, INT_NUMBER)
        .as_ref()
        .and_then(int_value)
        .unwrap_or(0) as i64;
    if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    }
}

ast_node!(
    /// `.reg .b32 %r<4>, %x;`
    RegDecl,
    REG_DECL
);

/// One register name of a `.reg` declaration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegName {
    /// `%r` for `%r<8>`, `%x` for `%x`.
    pub name: String,
    /// `Some(8)` for `%r<8>`: the registers `%r0` .. `%r7`.
    pub range: Option<u32>,
}

impl RegDecl {
    /// Type without dot: `"pred"`, `"b32"`, `"f32"`.
    pub fn ty(&self) -> Option<String> {
        ty(&self.0)
    }

    pub fn vector_width(&self) -> Option<u32> {
        vector_width(&self.0)
    }

    pub fn align(&self) -> Option<u32> {
        align(&self.0)
    }

    pub fn names(&self) -> Vec<RegName> {
        self.0
            .children()
            .filter(|n| n.kind() == REG_NAME)
            .filter_map(|n| {
                let name = name_token(&n)?.text().to_owned();
                let range = token(&n, INT_NUMBER)
                    .filter(|_| token(&n, L_ANGLE).is_some())
                    .and_then(|t| literal::parse_int(t.text()).ok())
                    .and_then(|l| u32::try_from(l.value).ok());
                Some(RegName { name, range })
            })
            .collect()
    }
}
