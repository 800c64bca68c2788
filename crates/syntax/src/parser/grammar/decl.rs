//! Declarations: parameters, state-space variables and registers.

use super::{LINKAGE, bump_int, bump_number, is_number, recover_to_semicolon};
use crate::SyntaxKind::*;
use crate::parser::Parser;

/// `.align N` and the other dotted words of a declaration (state space,
/// vector width, type, `.ptr`, pointer state space). Stops at the name.
fn modifiers(p: &mut Parser<'_>) {
    while p.at(DOT_WORD) {
        let align = p.at_word(".align");
        p.bump();
        if align && !bump_int(p) {
            p.error_expected("an alignment");
        }
    }
}

/// `[16]`, `[]`, `[4][8]`.
fn array_dims(p: &mut Parser<'_>) {
    while p.at(L_BRACK) {
        let m = p.start();
        p.bump();
        bump_int(p);
        p.expect(R_BRACK, "`]`");
        m.complete(p, ARRAY_DIM);
    }
}

/// `.param .align 16 .b8 foo_param_1[16]`, `.param .u64 .ptr .global .align 1 x`,
/// `.param .b64 _` (call prototypes).
pub(super) fn param_decl(p: &mut Parser<'_>) {
    let m = p.start();
    modifiers(p);
    if !(p.eat(IDENT) || p.eat(REG)) {
        p.error_expected("a parameter name");
    }
    array_dims(p);
    m.complete(p, PARAM_DECL);
}

/// `[.extern|.visible|.weak] .global .align 4 .f32 x[4] = {...};`
pub(crate) fn var_decl(p: &mut Parser<'_>) {
    let m = p.start();
    while p.at(DOT_WORD) && LINKAGE.contains(&p.current_text()) {
        p.bump();
    }
    modifiers(p);
    let mut ok = declarator(p);
    while ok && p.at(COMMA) {
        p.bump();
        ok = declarator(p);
    }
    if ok && !p.eat(SEMICOLON) {
        ok = false;
        p.error_expected("`;`");
    }
    if !ok {
        recover_to_semicolon(p);
    }
    m.complete(p, VAR_DECL);
}

/// `name[dims] [= init]`; false after an error.
fn declarator(p: &mut Parser<'_>) -> bool {
    if !(p.eat(IDENT) || p.eat(REG)) {
        p.error_expected("a variable name");
        return false;
    }
    array_dims(p);
    if p.at(EQ) {
        let m = p.start();
        p.bump();
        let ok = init_value(p);
        m.complete(p, INITIALIZER);
        return ok;
    }
    true
}

/// One initialiser value: a number, `sym`, `sym+off`, `generic(sym)`, or a
/// nested `{...}` list.
fn init_value(p: &mut Parser<'_>) -> bool {
    match p.current() {
        L_CURLY => {
            if !p.enter() {
                return false;
            }
            let m = p.start();
            p.bump();
            let mut ok = true;
            if !p.at(R_CURLY) {
                ok = init_value(p);
                while ok && p.eat(COMMA) {
                    ok = init_value(p);
                }
            }
            ok &= p.expect(R_CURLY, "`}`");
            m.complete(p, INIT_LIST);
            p.leave();
            ok
        }
        IDENT if p.current_text() == "generic" && p.nth(1) == L_PAREN => {
            let m = p.start();
            p.bump();
            p.bump();
            let mut ok = p.expect(IDENT, "a symbol");
            if ok {
                offset(p);
                ok = p.expect(R_PAREN, "`)`");
            }
            if ok {
                offset(p);
            }
            m.complete(p, GENERIC_EXPR);
            ok
        }
        IDENT => {
            let m = p.start();
            p.bump();
            offset(p);
            m.complete(p, SYMBOL_OPERAND);
            true
        }
        MINUS | PLUS if is_number(p.nth(1)) => {
            let m = p.start();
            p.bump();
            bump_number(p);
            m.complete(p, IMM_OPERAND);
            true
        }
        k if is_number(k) => {
            let m = p.start();
            bump_number(p);
            m.complete(p, IMM_OPERAND);
            true
        }
        _ => {
            p.error_expected("an initializer value");
            false
        }
    }
}

/// Optional `+ 8`, `+ -4`, `- 4` offset after a symbol or address base.
pub(super) fn offset(p: &mut Parser<'_>) {
    let sign_then_int = match p.current() {
        PLUS => p.nth(1) == INT_NUMBER || (p.nth(1) == MINUS && p.nth(2) == INT_NUMBER),
        MINUS => p.nth(1) == INT_NUMBER,
        _ => false,
    };
    if !sign_then_int {
        return;
    }
    let m = p.start();
    p.bump();
    p.eat(MINUS);
    bump_int(p);
    m.complete(p, OFFSET);
}

/// `.reg .pred %p<5>;`, `.reg .v4 .f32 %v;`, `.reg .b32 %r1, %r2;`,
/// `.reg .pred p;` (inline asm uses plain identifiers).
pub(crate) fn reg_decl(p: &mut Parser<'_>) {
    let m = p.start();
    modifiers(p);
    let mut ok = reg_name(p);
    while ok && p.at(COMMA) {
        p.bump();
        ok = reg_name(p);
    }
    if ok && !p.eat(SEMICOLON) {
        ok = false;
        p.error_expected("`;`");
    }
    if !ok {
        recover_to_semicolon(p);
    }
    m.complete(p, REG_DECL);
}

fn reg_name(p: &mut Parser<'_>) -> bool {
    if !(p.at(REG) || p.at(IDENT)) {
        p.error_expected("a register name");
        return false;
    }
    let m = p.start();
    p.bump();
    let mut ok = true;
    if p.at(L_ANGLE) {
        p.bump();
        if !bump_int(p) {
            p.error_expected("a register count");
            ok = false;
        }
        ok = ok && p.expect(R_ANGLE, "`>`");
    }
    array_dims(p);
    m.complete(p, REG_NAME);
    ok
}
