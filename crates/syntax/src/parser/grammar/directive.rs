//! Module directives and debug information: `.version`, `.target`,
//! `.address_size`, `.file`, `.loc`, `.pragma`, `.section`, and the
//! catch-all for directives we keep without interpreting.
//!
//! Most of these are line-oriented in practice and carry no `;` (PTX's
//! grammar ends them implicitly), so each parses exactly its arguments and
//! stops.

use super::{bump_int, bump_number, expect_int, is_number};
use crate::SyntaxKind::*;
use crate::parser::Parser;

/// `.version 9.5`
pub(super) fn version(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if !bump_number(p) {
        p.error_expected("a version number");
    }
    m.complete(p, VERSION_DIRECTIVE);
}

/// `.target sm_90a, texmode_independent, debug`
pub(super) fn target(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if p.expect(IDENT, "a target name") {
        while p.at(COMMA) {
            p.bump();
            if !p.expect(IDENT, "a target name") {
                break;
            }
        }
    }
    m.complete(p, TARGET_DIRECTIVE);
}

/// `.address_size 64`
pub(super) fn address_size(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if p.at(INT_NUMBER) {
        let ok = matches!(p.current_text(), "32" | "64");
        if !ok {
            p.error("address size must be 32 or 64");
        }
        bump_int(p);
    } else {
        p.error_expected("32 or 64");
    }
    m.complete(p, ADDRESS_SIZE_DIRECTIVE);
}

/// `.file 1 "path"` and `.file 1 "path", 1700000000, 1234`
pub(super) fn file(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if expect_int(p, "a file index") && p.expect(STRING, "a file name") {
        while p.at(COMMA) && p.nth(1) == INT_NUMBER {
            p.bump();
            bump_int(p);
        }
    }
    m.complete(p, FILE_DIRECTIVE);
}

/// `.loc 1 5 0` and `.loc 1 5 0, function_name $L__info_string0, inlined_at 1 3 0`
pub(crate) fn loc(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    for what in ["a file index", "a line number", "a column number"] {
        if !expect_int(p, what) {
            m.complete(p, LOC_DIRECTIVE);
            return;
        }
    }
    while p.at(COMMA) && p.nth(1) == IDENT {
        p.bump();
        match p.current_text() {
            "function_name" => {
                p.bump();
                p.expect(IDENT, "a function name symbol");
            }
            "inlined_at" => {
                p.bump();
                for what in ["a file index", "a line number", "a column number"] {
                    if !expect_int(p, what) {
                        break;
                    }
                }
            }
            other => {
                let msg = format!("unknown `.loc` attribute `{other}`");
                p.error(msg);
                p.bump();
                while p.at(INT_NUMBER) || p.at(IDENT) {
                    p.bump();
                }
            }
        }
    }
    m.complete(p, LOC_DIRECTIVE);
}

/// `.pragma "nounroll";`
pub(crate) fn pragma(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if p.expect(STRING, "a pragma string") {
        while p.at(COMMA) && p.nth(1) == STRING {
            p.bump();
            p.bump();
        }
    }
    if !p.eat(SEMICOLON) {
        p.error_expected("`;`");
        super::recover_to_semicolon(p);
    }
    m.complete(p, PRAGMA_DIRECTIVE);
}

/// A directive we do not interpret (`.alias a, b;`, or an unknown one, in
/// which case `error` is reported): everything up to the next `;`.
pub(crate) fn other(p: &mut Parser<'_>, error: Option<String>) {
    if let Some(msg) = error {
        p.error(msg);
    }
    let m = p.start();
    p.bump();
    while !p.at_eof()
        && !p.at(SEMICOLON)
        && !p.at(L_CURLY)
        && !p.at(R_CURLY)
        && !super::at_module_only_directive(p)
    {
        p.bump();
    }
    p.eat(SEMICOLON);
    m.complete(p, OTHER_DIRECTIVE);
}

/// `.section .debug_info { ... }`: DWARF data emitted for `-G`/`-lineinfo`.
/// Content is loose: labels, and data lines `.b8 1, 2` whose values are
/// constant expressions over numbers, labels, section names and strings.
pub(super) fn section(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    if p.at(DOT_WORD) || p.at(IDENT) {
        p.bump();
    } else {
        p.error_expected("a section name");
    }
    if p.at(L_CURLY) {
        let body = p.start();
        p.bump();
        while !p.at_eof() && !p.at(R_CURLY) {
            section_item(p);
        }
        p.expect(R_CURLY, "`}`");
        body.complete(p, SECTION_BODY);
    } else {
        p.error_expected("`{`");
    }
    m.complete(p, SECTION_DIRECTIVE);
}

fn section_item(p: &mut Parser<'_>) {
    match p.current() {
        IDENT if p.nth(1) == COLON => {
            let m = p.start();
            p.bump();
            p.bump();
            m.complete(p, LABEL);
        }
        DOT_WORD => {
            let m = p.start();
            p.bump();
            if at_section_value(p) {
                section_expr(p);
                while p.at(COMMA) {
                    p.bump();
                    if at_section_value(p) {
                        section_expr(p);
                    } else {
                        p.error_expected("a value");
                        break;
                    }
                }
            }
            m.complete(p, SECTION_DATA);
        }
        _ => p.err_and_bump(format!("unexpected `{}` in section", p.current_text())),
    }
}

fn at_section_value(p: &Parser<'_>) -> bool {
    matches!(
        p.current(),
        MINUS | TILDE | BANG | L_PAREN | IDENT | STRING | REG | DOT_WORD
    ) || is_number(p.current())
}

/// `$L__a - $L__b`, `.debug_abbrev`, `12`, `"str"`, `(a+4)`.
fn section_expr(p: &mut Parser<'_>) {
    let m = p.start();
    section_operand(p);
    while matches!(
        p.current(),
        PLUS | MINUS | STAR | SLASH | PERCENT | AMP | PIPE | CARET
    ) {
        p.bump();
        section_operand(p);
    }
    m.complete(p, SECTION_EXPR);
}

fn section_operand(p: &mut Parser<'_>) {
    while matches!(p.current(), MINUS | TILDE | BANG) {
        p.bump();
    }
    match p.current() {
        IDENT | STRING | REG | DOT_WORD => p.bump(),
        k if is_number(k) => {
            bump_number(p);
        }
        L_PAREN => {
            if p.enter() {
                p.bump();
                section_expr(p);
                p.expect(R_PAREN, "`)`");
                p.leave();
            }
        }
        _ => p.error_expected("a value"),
    }
}
