//! Function bodies: blocks and the statements inside them.

use super::{STATE_SPACES, at_module_only_directive, decl, directive, function, instruction};
use crate::SyntaxKind::*;
use crate::parser::Parser;

/// `{ statement* }`. Nested blocks are scopes (inline asm, call sequences).
pub(crate) fn block(p: &mut Parser<'_>) {
    if !p.enter() {
        return;
    }
    let m = p.start();
    let open = p.current_range();
    p.bump(); // {
    loop {
        if p.at(R_CURLY) {
            p.bump();
            break;
        }
        if p.at_eof() {
            p.error_at(open, "unclosed `{`");
            p.error_expected("`}`");
            break;
        }
        if at_module_only_directive(p) {
            // A new function or module directive: the `}` is missing. Stop
            // here so the outer item parses normally.
            p.error_expected("`}`");
            break;
        }
        statement(p);
    }
    m.complete(p, BLOCK);
    p.leave();
}

/// One statement. Always consumes at least one token (callers loop on it).
pub(crate) fn statement(p: &mut Parser<'_>) {
    match p.current() {
        L_CURLY => block(p),
        IDENT if p.nth(1) == COLON => {
            if p.nth_at_word(2, ".callprototype") {
                call_prototype(p);
            } else {
                let m = p.start();
                p.bump();
                p.bump();
                m.complete(p, LABEL);
            }
        }
        IDENT | AT => instruction::instruction(p),
        DOT_WORD => match p.current_text() {
            ".reg" => decl::reg_decl(p),
            ".loc" => directive::loc(p),
            ".pragma" => directive::pragma(p),
            w if STATE_SPACES.contains(&w) || w == ".extern" => decl::var_decl(p),
            // `$L_tbl: .branchtargets $L1, $L2;` (for `brx.idx`), and the
            // `.calltargets` analogue: kept verbatim for lowering to read.
            ".branchtargets" | ".calltargets" => directive::other(p, None),
            w => {
                let msg = format!("unexpected directive `{w}` in a function body");
                directive::other(p, Some(msg));
            }
        },
        SEMICOLON => p.err_and_bump("empty statement"),
        _ => p.err_and_bump(format!(
            "expected an instruction, found `{}`",
            p.current_text()
        )),
    }
}

/// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`
fn call_prototype(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(); // name
    p.bump(); // :
    p.bump(); // .callprototype
    if p.at(L_PAREN) {
        function::param_list(p, RETURN_PARAM_LIST);
    }
    if !p.eat(IDENT) {
        p.error_expected("`_`");
    }
    if p.at(L_PAREN) {
        function::param_list(p, PARAM_LIST);
    }
    while p.at(DOT_WORD) && !at_module_only_directive(p) {
        p.bump(); // .noreturn, .abi_preserve N, ...
        super::bump_int(p);
    }
    if !p.eat(SEMICOLON) {
        p.error_expected("`;`");
        super::recover_to_semicolon(p);
    }
    m.complete(p, CALL_PROTOTYPE);
}
