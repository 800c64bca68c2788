//! Functions: `[.visible|.extern|.weak] (.entry|.func) [(ret)] name [(params)]
//! perf-directives* ({ body } | ;)`.

use super::{LINKAGE, decl, directive, stmt};
use crate::SyntaxKind::*;
use crate::parser::Parser;

/// Performance-tuning and attribute directives allowed between a function's
/// parameters and its body, with the minimum and maximum number of integer
/// arguments each takes.
const PERF_DIRECTIVES: &[(&str, usize, usize)] = &[
    (".reqntid", 1, 3),
    (".maxntid", 1, 3),
    (".minnctapersm", 1, 1),
    (".maxnctapersm", 1, 1),
    (".maxnreg", 1, 1),
    (".explicitcluster", 0, 0),
    (".reqnctapercluster", 1, 3),
    (".noreturn", 0, 0),
    (".maxclusterrank", 1, 1),
    (".blocksareclusters", 0, 0),
    (".abi_preserve", 1, 1),
    (".abi_preserve_control", 1, 1),
];

fn perf_arity(p: &Parser<'_>) -> Option<(usize, usize)> {
    if !p.at(DOT_WORD) {
        return None;
    }
    let word = p.current_text();
    PERF_DIRECTIVES
        .iter()
        .find(|(name, ..)| *name == word)
        .map(|&(_, min, max)| (min, max))
}

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
        if let Some((min, max)) = perf_arity(p) {
            perf_directive(p, min, max);
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
fn perf_directive(p: &mut Parser<'_>, min: usize, max: usize) {
    let m = p.start();
    let name_range = p.current_range();
    let name = p.current_text();
    p.bump();
    let mut count = 0;
    if super::bump_int(p) {
        count += 1;
        while p.at(COMMA) && p.nth(1) == INT_NUMBER {
            p.bump();
            super::bump_int(p);
            count += 1;
        }
    }
    if count < min || count > max {
        let msg = match (min, max) {
            (0, 0) => format!("`{name}` takes no arguments"),
            (a, b) if a == b => format!("`{name}` takes {a} argument(s), found {count}"),
            (a, b) => format!("`{name}` takes {a} to {b} arguments, found {count}"),
        };
        p.error_at(name_range, msg);
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
                p.err_and_bump(format!(
                    "expected a parameter, found `{}`",
                    p.current_text()
                ));
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
