//! Instructions: `[@[!]pred] opcode.mod.mod operand, operand, ...;`.
//!
//! The opcode's modifiers are the `DOT_WORD`s glued to it (no trivia in
//! between); operand shapes are decided by their first token, so the parser
//! needs no per-opcode knowledge. Interpretation is left to lowering.

use super::decl::offset;
use super::{bump_int, bump_number, is_number, recover_to_semicolon};
use crate::SyntaxKind::{self, *};
use crate::parser::Parser;

pub(super) fn instruction(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(AT) {
        let g = p.start();
        p.bump();
        p.eat(BANG);
        if !(p.eat(REG) || p.eat(IDENT)) {
            p.error_expected("a predicate register");
        }
        g.complete(p, GUARD);
    }
    if p.at(IDENT) {
        let op = p.start();
        p.bump();
        while p.at(DOT_WORD) && !p.nth_trivia_before(0) {
            p.bump();
        }
        op.complete(p, OPCODE);
    } else {
        p.error_expected("an opcode");
        recover_to_semicolon(p);
        m.complete(p, INSTRUCTION);
        return;
    }
    if !p.at(SEMICOLON) && at_first_operand(p) {
        operand(p);
        while p.at(COMMA) {
            p.bump();
            if at_operand(p) {
                operand(p);
            } else {
                p.error_expected("an operand");
                break;
            }
        }
    }
    if !p.eat(SEMICOLON) {
        p.error_expected("`;`");
        // Skip junk on the same line only; a new line most likely starts the
        // next statement, which we would rather parse than swallow.
        if !p.at_eof() && !p.newline_before() && !matches!(p.current(), L_CURLY | R_CURLY) {
            recover_to_semicolon(p);
        }
    }
    m.complete(p, INSTRUCTION);
}

fn at_operand(p: &Parser<'_>) -> bool {
    matches!(
        p.current(),
        REG | IDENT | MINUS | PLUS | BANG | L_CURLY | L_BRACK | L_PAREN | INT_NUMBER | FLOAT_NUMBER
    )
}

/// Like [`at_operand`], but an identifier on a new line that looks like the
/// start of a statement (a label, or an opcode with glued modifiers) means the
/// previous instruction lacks its `;`.
fn at_first_operand(p: &Parser<'_>) -> bool {
    if !at_operand(p) {
        return false;
    }
    if p.newline_before() && p.at(IDENT) {
        let looks_like_stmt =
            p.nth(1) == COLON || (p.nth(1) == DOT_WORD && !p.nth_trivia_before(1));
        return !looks_like_stmt;
    }
    true
}

/// One operand, including `!p` and the `a|b` pair form.
fn operand(p: &mut Parser<'_>) {
    if p.at(BANG) {
        let m = p.start();
        p.bump();
        atom(p);
        m.complete(p, NOT_OPERAND);
        return;
    }
    let Some(first) = atom(p) else { return };
    if p.at(PIPE) {
        let m = first.precede(p);
        p.bump();
        atom(p);
        m.complete(p, PAIR_OPERAND);
    }
}

fn atom(p: &mut Parser<'_>) -> Option<crate::parser::CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        REG => {
            p.bump();
            REG_OPERAND
        }
        IDENT if p.current_text() == "_" => {
            p.bump();
            SINK_OPERAND
        }
        IDENT => {
            p.bump();
            offset(p);
            SYMBOL_OPERAND
        }
        k if is_number(k) => {
            bump_number(p);
            IMM_OPERAND
        }
        MINUS | PLUS if is_number(p.nth(1)) => {
            p.bump();
            bump_number(p);
            IMM_OPERAND
        }
        L_CURLY => delimited(p, R_CURLY, "`}`", VECTOR_OPERAND),
        L_PAREN => delimited(p, R_PAREN, "`)`", LIST_OPERAND),
        L_BRACK => address(p),
        _ => {
            m.abandon(p);
            if matches!(p.current(), COMMA | SEMICOLON | R_CURLY | R_BRACK | R_PAREN) || p.at_eof()
            {
                p.error_expected("an operand");
            } else {
                p.err_and_bump(format!("expected an operand, found `{}`", p.current_text()));
            }
            return None;
        }
    };
    Some(m.complete(p, kind))
}

/// `{a, b}` vector or `(a, b)` call list; returns the node kind to use.
fn delimited(p: &mut Parser<'_>, close: SyntaxKind, what: &str, kind: SyntaxKind) -> SyntaxKind {
    if !p.enter() {
        return ERROR;
    }
    p.bump();
    if !p.at(close) {
        loop {
            if at_operand(p) {
                operand(p);
            } else {
                p.error_expected("an operand");
            }
            if !p.eat(COMMA) {
                break;
            }
        }
    }
    p.expect(close, what);
    p.leave();
    kind
}

/// `[%rd1]`, `[%rd1+16]`, `[%rd1+-4]`, `[sym+8]`, `[0x100]`, and tensor forms
/// with extra operands `[%rd1, {%r1, %r2}]`.
fn address(p: &mut Parser<'_>) -> SyntaxKind {
    if !p.enter() {
        return ERROR;
    }
    p.bump(); // [
    match p.current() {
        REG | IDENT => {
            p.bump();
            offset(p);
        }
        INT_NUMBER => {
            bump_int(p);
        }
        _ => p.error_expected("an address"),
    }
    while p.at(COMMA) {
        p.bump();
        if at_operand(p) {
            operand(p);
        } else {
            p.error_expected("an operand");
            break;
        }
    }
    if !p.eat(R_BRACK) {
        p.error_expected("`]`");
    }
    p.leave();
    ADDRESS_OPERAND
}
