//! Lossless, error-tolerant syntax tree for NVIDIA PTX.
//!
//! [`parse`] turns any text into a rowan tree that contains every byte of the
//! input (whitespace and comments as trivia tokens) plus a list of
//! [`SyntaxError`]s. It never fails and never panics: malformed input yields
//! `ERROR` nodes and errors, so later passes always have a tree to report
//! spans against. The typed layer in [`ast`] gives named accessors over the
//! untyped tree.
//!
//! ```
//! use ptxeq_syntax::{ast::Stmt, parse};
//!
//! let text = ".version 9.5\n.target sm_80\n.address_size 64\n\
//!             .visible .entry k(.param .u64 k_param_0) { ld.param.u64 %rd1, [k_param_0]; ret; }\n";
//! let parse = parse(text);
//! assert!(parse.errors().is_empty());
//! assert_eq!(parse.syntax().to_string(), text); // lossless
//! let file = parse.tree();
//! assert_eq!(file.targets(), ["sm_80"]);
//! let kernel = file.functions().next().unwrap();
//! assert_eq!(kernel.name().as_deref(), Some("k"));
//! let Some(Stmt::Instruction(ld)) = kernel.body().unwrap().statements().next() else { panic!() };
//! assert_eq!(ld.modifiers(), ["param", "u64"]);
//! ```
//!
//! Pipeline: `lexer` (bytes → `(kind, len)` tokens) → `parser` (tokens →
//! events) → `parser::event::build` (events → green tree).

pub mod ast;
mod lexer;
mod line_index;
mod literal;
mod parser;
mod syntax_kind;

use std::fmt::Write as _;

pub use line_index::LineIndex;
pub use rowan::{TextRange, TextSize};
pub use syntax_kind::{PtxLanguage, SyntaxElement, SyntaxKind, SyntaxNode, SyntaxToken};

/// A syntax error: what is wrong and where.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SyntaxError {
    pub message: String,
    pub range: TextRange,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {:?}", self.message, self.range)
    }
}

/// The result of parsing: a green tree (cheap to clone, `Send`, `Eq + Hash`,
/// so it can live in salsa) and the errors, sorted by position.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Parse {
    green: rowan::GreenNode,
    errors: Vec<SyntaxError>,
}

impl Parse {
    pub fn green(&self) -> &rowan::GreenNode {
        &self.green
    }

    /// A fresh red tree over the green one (not `Send`; build it where used).
    pub fn syntax(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    pub fn errors(&self) -> &[SyntaxError] {
        &self.errors
    }

    /// The typed root.
    pub fn tree(&self) -> ast::SourceFile {
        // The builder always produces a SOURCE_FILE root.
        ast::SourceFile(self.syntax())
    }

    /// Indented dump of kinds, ranges and token texts, followed by the
    /// errors; stable across versions, for snapshot tests.
    pub fn debug_tree(&self) -> String {
        let mut out = String::new();
        let mut indent = 0usize;
        for event in self.syntax().preorder_with_tokens() {
            match event {
                rowan::WalkEvent::Enter(element) => {
                    let _ = match &element {
                        SyntaxElement::Node(n) => writeln!(
                            out,
                            "{:indent$}{}@{:?}",
                            "",
                            n.kind().name(),
                            n.text_range()
                        ),
                        SyntaxElement::Token(t) => {
                            writeln!(
                                out,
                                "{:indent$}{}@{:?} {:?}",
                                "",
                                t.kind().name(),
                                t.text_range(),
                                t.text()
                            )
                        }
                    };
                    indent += 2;
                }
                rowan::WalkEvent::Leave(_) => indent -= 2,
            }
        }
        for e in &self.errors {
            let _ = writeln!(out, "error {:?}: {}", e.range, e.message);
        }
        out
    }
}

/// Parses PTX source text. Total: every input gives a tree whose text is the
/// input, plus zero or more errors.
pub fn parse(text: &str) -> Parse {
    let (tokens, lex_errors) = lexer::lex(text);
    let mut p = parser::Parser::new(text, &tokens);
    parser::source_file(&mut p);
    let (events, mut errors) = p.finish();
    let green = parser::event::build(text, &tokens, events);
    // A file with nothing but whitespace and comments is not a module
    // (truncated output, the wrong file): an error, not an empty "ok".
    if tokens.iter().all(|t| t.kind.is_trivia()) {
        errors.push(SyntaxError {
            message: "empty PTX file: no directives, no functions (a PTX module starts with \
                      `.version`)"
                .to_owned(),
            range: TextRange::new(0.into(), TextSize::of(text)),
        });
    }
    errors.extend(lex_errors.into_iter().map(|e| SyntaxError {
        message: e.message.to_owned(),
        range: e.range,
    }));
    // Stable sort keeps grammar order for errors at the same position.
    errors.sort_by_key(|e| e.range.start());
    Parse { green, errors }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_an_error_not_an_empty_module() {
        for text in ["", "   \n\t\n", "// nothing here\n/* at all */\n"] {
            let p = parse(text);
            assert_eq!(p.errors().len(), 1, "{text:?}: {:?}", p.errors());
            assert!(p.errors()[0].message.starts_with("empty PTX file"));
        }
        // A module with only a header is not empty (a library may have no
        // entry; the check that needs one says so).
        assert!(parse(".version 8.5\n").errors().is_empty());
    }

    #[test]
    fn parse_is_send_sync_and_cheap_to_share() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Parse>();
        assert_send_sync::<SyntaxError>();
        let a = parse(".version 9.5\n");
        let b = parse(".version 9.5\n");
        assert_eq!(a, b); // structural equality, as salsa backdating needs
        assert_ne!(a, parse(".version 9.4\n"));
    }
}
