//! Typed view of the syntax tree (rust-analyzer style).
//!
//! Each type is a newtype over a [`SyntaxNode`] of one kind, with `cast` and
//! `syntax()`, and accessors that return owned values (`String`, numbers)
//! decoded from the tokens. Accessors never panic: on a malformed tree they
//! return `None`/empty, and the corresponding [`crate::SyntaxError`] tells
//! the user why.

mod decl;
mod instruction;
pub mod view;

pub use decl::{InitValue, Initializer, ParamDecl, RegDecl, RegName, VarDecl};
pub use instruction::{AddrBase, Guard, Immediate, Instruction, Operand};

use crate::literal;
use crate::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange};
use SyntaxKind::*;

macro_rules! ast_node {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name(pub(crate) $crate::SyntaxNode);

        impl $name {
            /// Wraps `node` if it has the right kind.
            pub fn cast(node: $crate::SyntaxNode) -> Option<Self> {
                (node.kind() == $crate::SyntaxKind::$kind).then_some(Self(node))
            }

            /// The underlying untyped node.
            pub fn syntax(&self) -> &$crate::SyntaxNode {
                &self.0
            }
        }
    };
}
pub(crate) use ast_node;

// ---- small helpers shared by the ast modules ----

/// Direct child tokens that are not trivia.
pub(crate) fn tokens(node: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> + '_ {
    node.children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia())
}

/// First direct child token of `kind`.
pub(crate) fn token(node: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    tokens(node).find(|t| t.kind() == kind)
}

/// Direct child nodes that cast to `T`.
pub(crate) fn children<T>(
    node: &SyntaxNode,
    cast: fn(SyntaxNode) -> Option<T>,
) -> impl Iterator<Item = T> + use<T> {
    node.children().filter_map(cast)
}

/// Direct `DOT_WORD` children, without the leading dot.
pub(crate) fn words(node: &SyntaxNode) -> impl Iterator<Item = String> + '_ {
    tokens(node)
        .filter(|t| t.kind() == DOT_WORD)
        .map(|t| t.text()[1..].to_owned())
}

/// Decodes an `INT_NUMBER` token as an unsigned 64-bit value.
pub(crate) fn int_value(t: &SyntaxToken) -> Option<u64> {
    (t.kind() == INT_NUMBER)
        .then(|| literal::parse_int(t.text()).ok())
        .flatten()
        .map(|l| l.value)
}

/// The `n`-th direct integer child, as `u32`.
fn nth_int_u32(tokens: &[SyntaxToken], n: usize) -> Option<u32> {
    tokens
        .get(n)
        .and_then(int_value)
        .and_then(|v| u32::try_from(v).ok())
}

/// Removes the quotes of a string literal and resolves `\"`, `\\`, `\n`, `\t`.
pub(crate) fn unquote(text: &str) -> String {
    let inner = text.strip_prefix('"').unwrap_or(text);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

// ---- module level ----

ast_node!(
    /// The whole file.
    SourceFile,
    SOURCE_FILE
);

impl SourceFile {
    /// `.version 9.5` → `"9.5"`.
    pub fn version(&self) -> Option<String> {
        let d = self.0.children().find(|n| n.kind() == VERSION_DIRECTIVE)?;
        tokens(&d)
            .find(|t| matches!(t.kind(), FLOAT_NUMBER | INT_NUMBER))
            .map(|t| t.text().to_owned())
    }

    /// All targets of all `.target` directives, in order: `["sm_90a", "texmode_independent"]`.
    pub fn targets(&self) -> Vec<String> {
        self.0
            .children()
            .filter(|n| n.kind() == TARGET_DIRECTIVE)
            .flat_map(|d| {
                tokens(&d)
                    .filter(|t| t.kind() == IDENT)
                    .map(|t| t.text().to_owned())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// `.address_size 64` → `Some(64)`.
    pub fn address_size(&self) -> Option<u32> {
        let d = self
            .0
            .children()
            .find(|n| n.kind() == ADDRESS_SIZE_DIRECTIVE)?;
        token(&d, INT_NUMBER)
            .as_ref()
            .and_then(int_value)
            .and_then(|v| u32::try_from(v).ok())
    }

    /// Functions and kernels, declarations (no body) included.
    pub fn functions(&self) -> impl Iterator<Item = Function> + use<> {
        self.0.children().filter_map(Function::cast)
    }

    /// Module-scope variables (`.global`, `.const`, `.shared`, ...).
    pub fn global_vars(&self) -> impl Iterator<Item = VarDecl> + use<> {
        self.0.children().filter_map(VarDecl::cast)
    }

    /// `.file` directives.
    pub fn files(&self) -> impl Iterator<Item = FileDirective> + use<> {
        self.0.children().filter_map(FileDirective::cast)
    }
}

ast_node!(
    /// `.file 1 "path"[, timestamp, size]`.
    FileDirective,
    FILE_DIRECTIVE
);

impl FileDirective {
    fn ints(&self) -> Vec<SyntaxToken> {
        tokens(&self.0).filter(|t| t.kind() == INT_NUMBER).collect()
    }

    pub fn index(&self) -> Option<u32> {
        nth_int_u32(&self.ints(), 0)
    }

    /// The path, unquoted.
    pub fn path(&self) -> Option<String> {
        token(&self.0, STRING).map(|t| unquote(t.text()))
    }

    /// Optional modification timestamp.
    pub fn timestamp(&self) -> Option<u64> {
        self.ints().get(1).and_then(int_value)
    }

    /// Optional file size.
    pub fn size(&self) -> Option<u64> {
        self.ints().get(2).and_then(int_value)
    }
}

ast_node!(
    /// `.entry` or `.func`, with or without a body.
    Function,
    FUNCTION
);

impl Function {
    /// A kernel (`.entry`) rather than a device function (`.func`).
    pub fn is_entry(&self) -> bool {
        tokens(&self.0).any(|t| t.kind() == DOT_WORD && t.text() == ".entry")
    }

    /// `"visible"`, `"extern"`, `"weak"` (or `"common"`), if present.
    pub fn linkage(&self) -> Option<String> {
        words(&self.0).find(|w| matches!(w.as_str(), "visible" | "extern" | "weak" | "common"))
    }

    pub fn name(&self) -> Option<String> {
        token(&self.0, IDENT).map(|t| t.text().to_owned())
    }

    pub fn name_range(&self) -> Option<TextRange> {
        token(&self.0, IDENT).map(|t| t.text_range())
    }

    /// Input parameters, in order.
    pub fn params(&self) -> Vec<ParamDecl> {
        param_list(&self.0, PARAM_LIST)
    }

    /// Return parameters of a `.func` (`(.param .b32 func_retval0)`).
    pub fn return_params(&self) -> Vec<ParamDecl> {
        param_list(&self.0, RETURN_PARAM_LIST)
    }

    /// `.reqntid 128, 1, 1` → `("reqntid", [128, 1, 1])`; `.noreturn` →
    /// `("noreturn", [])`.
    pub fn perf_directives(&self) -> Vec<(String, Vec<u64>)> {
        self.0
            .children()
            .filter(|n| n.kind() == PERF_DIRECTIVE)
            .filter_map(|d| {
                let name = words(&d).next()?;
                let values = tokens(&d).filter_map(|t| int_value(&t)).collect();
                Some((name, values))
            })
            .collect()
    }

    /// The body; `None` for a declaration ending in `;`.
    pub fn body(&self) -> Option<Block> {
        self.0.children().find_map(Block::cast)
    }
}

fn param_list(node: &SyntaxNode, kind: SyntaxKind) -> Vec<ParamDecl> {
    node.children()
        .find(|n| n.kind() == kind)
        .map(|l| children(&l, ParamDecl::cast).collect())
        .unwrap_or_default()
}

// ---- statements ----

ast_node!(
    /// `{ ... }`: a function body or a nested scope.
    Block,
    BLOCK
);

impl Block {
    /// Statements in order (nested blocks are one `Stmt::Block` each).
    pub fn statements(&self) -> impl Iterator<Item = Stmt> + use<> {
        self.0.children().map(Stmt::from_node)
    }
}

/// One statement of a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    Instruction(Instruction),
    Label(Label),
    RegDecl(RegDecl),
    VarDecl(VarDecl),
    Block(Block),
    Loc(LocDirective),
    Pragma(Pragma),
    /// Any other node: `.callprototype` ([`CallPrototype::cast`]), unknown
    /// directives, `ERROR` nodes.
    Other(SyntaxNode),
}

impl Stmt {
    fn from_node(node: SyntaxNode) -> Stmt {
        match node.kind() {
            INSTRUCTION => Stmt::Instruction(Instruction(node)),
            LABEL => Stmt::Label(Label(node)),
            REG_DECL => Stmt::RegDecl(RegDecl(node)),
            VAR_DECL => Stmt::VarDecl(VarDecl(node)),
            BLOCK => Stmt::Block(Block(node)),
            LOC_DIRECTIVE => Stmt::Loc(LocDirective(node)),
            PRAGMA_DIRECTIVE => Stmt::Pragma(Pragma(node)),
            _ => Stmt::Other(node),
        }
    }

    pub fn syntax(&self) -> &SyntaxNode {
        match self {
            Stmt::Instruction(n) => n.syntax(),
            Stmt::Label(n) => n.syntax(),
            Stmt::RegDecl(n) => n.syntax(),
            Stmt::VarDecl(n) => n.syntax(),
            Stmt::Block(n) => n.syntax(),
            Stmt::Loc(n) => n.syntax(),
            Stmt::Pragma(n) => n.syntax(),
            Stmt::Other(n) => n,
        }
    }
}

ast_node!(
    /// `$L__BB0_2:`
    Label,
    LABEL
);

impl Label {
    pub fn name(&self) -> Option<String> {
        token(&self.0, IDENT).map(|t| t.text().to_owned())
    }

    pub fn name_range(&self) -> Option<TextRange> {
        token(&self.0, IDENT).map(|t| t.text_range())
    }
}

ast_node!(
    /// `.loc 1 5 0[, function_name sym, inlined_at 2 3 4]`
    LocDirective,
    LOC_DIRECTIVE
);

impl LocDirective {
    fn leading_ints(&self) -> Vec<SyntaxToken> {
        tokens(&self.0)
            .skip(1)
            .take_while(|t| t.kind() == INT_NUMBER)
            .collect()
    }

    pub fn file(&self) -> Option<u32> {
        nth_int_u32(&self.leading_ints(), 0)
    }

    pub fn line(&self) -> Option<u32> {
        nth_int_u32(&self.leading_ints(), 1)
    }

    pub fn column(&self) -> Option<u32> {
        nth_int_u32(&self.leading_ints(), 2)
    }

    /// The symbol after `function_name` (a label into `.debug_str`).
    pub fn function_name(&self) -> Option<String> {
        let mut it = tokens(&self.0);
        it.find(|t| t.kind() == IDENT && t.text() == "function_name")?;
        it.next()
            .filter(|t| t.kind() == IDENT)
            .map(|t| t.text().to_owned())
    }

    /// `inlined_at file line column`.
    pub fn inlined_at(&self) -> Option<(u32, u32, u32)> {
        let mut it = tokens(&self.0);
        it.find(|t| t.kind() == IDENT && t.text() == "inlined_at")?;
        let ints: Vec<SyntaxToken> = it.take(3).collect();
        Some((
            nth_int_u32(&ints, 0)?,
            nth_int_u32(&ints, 1)?,
            nth_int_u32(&ints, 2)?,
        ))
    }
}

ast_node!(
    /// `.pragma "nounroll";`
    Pragma,
    PRAGMA_DIRECTIVE
);

impl Pragma {
    /// The pragma strings, unquoted: `["nounroll"]`.
    pub fn values(&self) -> Vec<String> {
        tokens(&self.0)
            .filter(|t| t.kind() == STRING)
            .map(|t| unquote(t.text()))
            .collect()
    }
}

ast_node!(
    /// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`
    CallPrototype,
    CALL_PROTOTYPE
);

impl CallPrototype {
    pub fn name(&self) -> Option<String> {
        token(&self.0, IDENT).map(|t| t.text().to_owned())
    }

    pub fn params(&self) -> Vec<ParamDecl> {
        param_list(&self.0, PARAM_LIST)
    }

    pub fn return_params(&self) -> Vec<ParamDecl> {
        param_list(&self.0, RETURN_PARAM_LIST)
    }
}

#[cfg(test)]
mod tests;
