//! Functions: `[.visible|.extern|.weak] (.entry|.func) [(ret)] name [(params)]
//! perf-directives* ({ body } | ;)`.

use super::{LINKAGE, decl, directive, stmt};
use crate::SyntaxKind::*;
use crate::parser::Parser;

/// Performance-tuning and attribute directives allowed between a function's
/// parameters and its body.
const PERF_DIRECTIVES: &[&str] = &[
    ".reqntid",
    ".maxntid",
    ".minnctapersm",
    ".maxnctapersm",
    ".maxnreg",
    ".explicitcluster",
    ".reqnctapercluster",
    ".noreturn",
    ".maxclusterrank",
    ".blocksareclusters",
    ".abi_preserve",
    ".abi_preserve_control",
];

pub(super) fn function(p: &mut Parser<'_>) {
    let m = p.start();
    while p.at(DOT_WORD) && LINKAGE.contains(&p.current_text()) {
        p.bump();
    }
    let is_func = p.at_word(".func");
    p.bump(); // .entry / .func
    if is_func && p.at(L_PAREN) {
        param_list(p, RETURN_PARAM_LIST);
    }
    if !p.eat(IDENT) {
        p.error_expected("a function name");
    }
    if p.at(L_PAREN) {
        param_list(p, PARAM_LIST);
    }
    loop {
        if p.at(DOT_WORD) && PERF_DIRECTIVES.contains(&p.current_text()) {
            perf_directive(p);
        } else if p.at_word(".pragma") {
            directive::pragma(p);
        } else {
            break;
        }
    }
    match p.current() {
        L_CURLY => stmt::block(p),
        SEMICOLON => p.bump(),
        _ => p.error_expected("a function body or `;`"),
    }
    m.complete(p, FUNCTION);
}

/// `.reqntid 128, 1, 1`, `.noreturn`, ...
fn perf_directive(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if super::bump_int(p) {
        while p.at(COMMA) && p.nth(1) == INT_NUMBER {
            p.bump();
            super::bump_int(p);
        }
    }
    m.complete(p, PERF_DIRECTIVE);
}

/// `( decl, decl )` as a `PARAM_LIST` or `RETURN_PARAM_LIST`.
pub(super) fn param_list(p: &mut Parser<'_>, kind: crate::SyntaxKind) {
    let m = p.start();
    p.bump(); // (
    if !p.at(R_PAREN) {
        loop {
            if p.at(DOT_WORD) {
                decl::param_decl(p);
            } else if p.at(COMMA) || p.at(R_PAREN) {
                p.error_expected("a parameter");
            } else if matches!(p.current(), L_CURLY | R_CURLY | SEMICOLON) || p.at_eof() {
                break;
            } else {
                p.err_and_bump(format!("expected a parameter, found `{}`", p.current_text()));
                continue;
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    p.expect(R_PAREN, "`)`");
    m.complete(p, kind);
}
