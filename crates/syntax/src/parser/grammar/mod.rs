//! The PTX grammar, split by area. Entry point: [`source_file`].
//!
//! PTX has no real expression grammar and few keywords, so the grammar is a
//! set of small recursive-descent functions dispatching on the first token
//! (mostly the text of a `DOT_WORD`). Recovery is local: a construct that
//! lacks its terminator reports it and stops, letting the enclosing loop
//! resynchronise at the next statement or directive.

mod decl;
mod directive;
mod function;
mod instruction;
mod stmt;

use super::Parser;
use crate::SyntaxKind::{self, *};
use crate::literal;

/// Parses a whole file.
pub(crate) fn source_file(p: &mut Parser<'_>) {
    let m = p.start();
    while !p.at_eof() {
        module_item(p);
    }
    m.complete(p, SOURCE_FILE);
}

/// Linkage directives that may precede a function or variable.
const LINKAGE: &[&str] = &[".visible", ".extern", ".weak", ".common"];

/// State spaces that start a variable declaration.
pub(super) const STATE_SPACES: &[&str] =
    &[".global", ".const", ".shared", ".local", ".param", ".tex"];

/// Directives that can only start a new module-level item: seeing one inside
/// a function body means a `}` is missing.
fn at_module_only_directive(p: &Parser<'_>) -> bool {
    p.at(DOT_WORD)
        && matches!(
            p.current_text(),
            ".version"
                | ".target"
                | ".address_size"
                | ".entry"
                | ".func"
                | ".visible"
                | ".weak"
                | ".section"
                | ".file"
        )
}

fn module_item(p: &mut Parser<'_>) {
    match p.current() {
        DOT_WORD => match p.current_text() {
            ".version" => directive::version(p),
            ".target" => directive::target(p),
            ".address_size" => directive::address_size(p),
            ".file" => directive::file(p),
            ".section" => directive::section(p),
            ".loc" => directive::loc(p),
            ".pragma" => directive::pragma(p),
            ".alias" => directive::other(p, None),
            ".entry" | ".func" => function::function(p),
            w if LINKAGE.contains(&w) => {
                let mut n = 1;
                while p.nth(n) == DOT_WORD && LINKAGE.contains(&p.nth_text(n)) {
                    n += 1;
                }
                if p.nth_at_word(n, ".entry") || p.nth_at_word(n, ".func") {
                    function::function(p);
                } else {
                    decl::var_decl(p);
                }
            }
            w if STATE_SPACES.contains(&w) => decl::var_decl(p),
            ".reg" => {
                p.error("`.reg` declarations are only allowed inside a function");
                decl::reg_decl(p);
            }
            w => {
                let msg = format!("unknown directive `{w}`");
                directive::other(p, Some(msg));
            }
        },
        R_CURLY => p.err_and_bump("unmatched `}`"),
        L_CURLY => {
            p.error("block outside of a function");
            stmt::block(p);
        }
        IDENT | AT => {
            p.error("instruction outside of a function");
            stmt::statement(p);
        }
        _ => p.err_and_bump(format!(
            "expected a directive, found `{}`",
            p.current_text()
        )),
    }
}

/// Consumes an `INT_NUMBER`, reporting it if malformed or out of range.
/// Returns false (consuming nothing) if the current token is not an integer.
pub(super) fn bump_int(p: &mut Parser<'_>) -> bool {
    if !p.at(INT_NUMBER) {
        return false;
    }
    if let Err(msg) = literal::parse_int(p.current_text()) {
        p.error(msg);
    }
    p.bump();
    true
}

/// Consumes an integer or reports `expected <what>`.
pub(super) fn expect_int(p: &mut Parser<'_>, what: &str) -> bool {
    if bump_int(p) {
        return true;
    }
    p.error_expected(what);
    false
}

/// Consumes an `INT_NUMBER` or `FLOAT_NUMBER`, validating it.
pub(super) fn bump_number(p: &mut Parser<'_>) -> bool {
    match p.current() {
        INT_NUMBER => bump_int(p),
        FLOAT_NUMBER => {
            if let Err(msg) = literal::parse_float(p.current_text()) {
                p.error(msg);
            }
            p.bump();
            true
        }
        _ => false,
    }
}

/// Is `kind` a number token?
pub(super) fn is_number(kind: SyntaxKind) -> bool {
    matches!(kind, INT_NUMBER | FLOAT_NUMBER)
}

/// Skips to (and over) the next `;`, or up to a token that clearly starts
/// something else (`{`, `}`, a module-level directive), wrapping what was
/// skipped in an `ERROR` node. Used after an error inside a `;`-terminated
/// construct.
pub(super) fn recover_to_semicolon(p: &mut Parser<'_>) {
    if p.at_eof() || p.at(R_CURLY) || p.at(L_CURLY) || at_module_only_directive(p) {
        return;
    }
    if p.eat(SEMICOLON) {
        return;
    }
    let m = p.start();
    while !p.at_eof()
        && !p.at(SEMICOLON)
        && !p.at(R_CURLY)
        && !p.at(L_CURLY)
        && !at_module_only_directive(p)
    {
        p.bump();
    }
    m.complete(p, ERROR);
    p.eat(SEMICOLON);
}
