//! Error recovery: malformed inputs give errors with sensible ranges, a
//! lossless tree, and enough structure around the error to keep going.

use ptxeq_syntax::ast::Stmt;
use ptxeq_syntax::{Parse, SyntaxError, TextRange, parse};

/// Parses, checks losslessness and that every error range lies within the
/// text, and returns the parse.
fn check(text: &str) -> Parse {
    let p = parse(text);
    assert_eq!(p.syntax().to_string(), text);
    for e in p.errors() {
        assert!(
            usize::from(e.range.end()) <= text.len(),
            "{e:?} out of bounds"
        );
        assert!(text.is_char_boundary(usize::from(e.range.start())));
    }
    p
}

fn slice<'a>(text: &'a str, e: &SyntaxError) -> &'a str {
    &text[usize::from(e.range.start())..usize::from(e.range.end())]
}

/// The single error of `text`, asserting there is exactly one.
fn one_error(text: &str) -> SyntaxError {
    let p = check(text);
    assert_eq!(p.errors().len(), 1, "{:#?}", p.errors());
    p.errors()[0].clone()
}

const HEADER: &str = ".version 9.5\n.target sm_80\n.address_size 64\n";

#[test]
fn empty_input() {
    // An empty file is an error (issue 19: `parse` used to call it ok),
    // with a range inside the text and still a lossless, empty tree.
    let e = one_error("");
    assert!(e.message.starts_with("empty PTX file"), "{e:?}");
    assert_eq!(check("").tree().functions().count(), 0);
    let text = "  \n// only a comment\n/* block */";
    let e = one_error(text);
    assert!(e.message.starts_with("empty PTX file"), "{e:?}");
    assert_eq!(slice(text, &e), text);
}

#[test]
fn truncated_file() {
    let full = format!(
        "{HEADER}.visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\tld.param.u64 %rd1, [k_param_0];\n\tret;\n}}\n"
    );
    // Every prefix parses losslessly; prefixes that cut a construct report it.
    for end in 0..=full.len() {
        let p = check(&full[..end]);
        let cut_inside_function = end > HEADER.len() && end < full.len() - 1;
        if cut_inside_function {
            assert!(
                !p.errors().is_empty(),
                "no error for prefix {:?}",
                &full[..end]
            );
        }
    }
    let text = format!("{HEADER}.entry k()\n{{\n\tret;\n");
    let p = check(&text);
    let msgs: Vec<_> = p.errors().iter().map(|e| e.message.as_str()).collect();
    assert!(msgs.contains(&"unclosed `{`"), "{msgs:?}");
    let unclosed = p
        .errors()
        .iter()
        .find(|e| e.message == "unclosed `{`")
        .unwrap();
    assert_eq!(slice(&text, unclosed), "{");
}

#[test]
fn missing_semicolon() {
    let text = ".entry k()\n{\n\tmov.u32 %r1, %r2\n\tadd.s32 %r3, %r1, 1;\n}\n";
    let e = one_error(text);
    assert_eq!(e.message, "expected `;`, found `add`");
    // Points just after `%r2`.
    assert_eq!(
        e.range,
        TextRange::empty((text.find("%r2").unwrap() as u32 + 3).into())
    );
    // Both instructions are still there.
    let p = parse(text);
    let body = p.tree().functions().next().unwrap().body().unwrap();
    let opcodes: Vec<_> = body
        .statements()
        .filter_map(|s| match s {
            Stmt::Instruction(i) => i.opcode(),
            _ => None,
        })
        .collect();
    assert_eq!(opcodes, vec!["mov", "add"]);
    // Operand-less opcode followed by a label on the next line.
    let e = one_error(".entry k()\n{\n\tret\n$L__BB0_1:\n\texit;\n}\n");
    assert!(e.message.starts_with("expected `;`"), "{e:?}");
}

#[test]
fn unbalanced_braces_and_brackets() {
    let text = ".entry k()\n{\n\tld.global.f32 %f1, [%rd1;\n\tret;\n}\n";
    let e = one_error(text);
    assert_eq!(e.message, "expected `]`, found `;`");
    assert_eq!(slice(text, &e), ";");

    let text = ".entry k()\n{\n\tmov.b64 {%r1, %r2, %rd1;\n}\n";
    let e = one_error(text);
    assert_eq!(e.message, "expected `}`, found `;`");

    let text = ".entry k()\n{\n\tcall.uni foo, (param0;\n}\n";
    assert_eq!(one_error(text).message, "expected `)`, found `;`");

    // A missing `}` before the next function: the next function still parses.
    let text = ".entry a()\n{\n\tret;\n.entry b()\n{\n\tret;\n}\n";
    let p = check(text);
    assert_eq!(p.errors().len(), 1);
    assert_eq!(p.errors()[0].message, "expected `}`, found `.entry`");
    let names: Vec<_> = p.tree().functions().filter_map(|f| f.name()).collect();
    assert_eq!(names, vec!["a", "b"]);
}

#[test]
fn stray_closing_brace() {
    let text = format!("{HEADER}}}\n.entry k() {{ ret; }}\n}}");
    let p = check(&text);
    assert_eq!(p.errors().len(), 2);
    for e in p.errors() {
        assert_eq!(e.message, "unmatched `}`");
        assert_eq!(slice(&text, e), "}");
    }
    assert_eq!(p.tree().functions().count(), 1);
}

#[test]
fn garbage_bytes() {
    let text = ".entry k()\n{\n\t# \u{1F600}\u{e9} ret;\n}\n";
    let p = check(text);
    assert!(!p.errors().is_empty());
    let e = p
        .errors()
        .iter()
        .find(|e| e.message == "unexpected character")
        .unwrap();
    assert_eq!(
        slice(text, e),
        "# \u{1F600}\u{e9}".split(' ').next().unwrap()
    );
    let p = check("\u{0}\u{1}\u{7f}\u{feff}");
    assert!(!p.errors().is_empty());
}

#[test]
fn unknown_directive() {
    let text = format!("{HEADER}.frobnicate 1, 2;\n.entry k() {{ ret; }}\n");
    let e = one_error(&text);
    assert_eq!(e.message, "unknown directive `.frobnicate`");
    assert_eq!(slice(&text, &e), ".frobnicate");
    assert_eq!(parse(&text).tree().functions().count(), 1);

    let text = ".entry k()\n{\n\t.frob %r1;\n\tret;\n}\n";
    let e = one_error(text);
    assert_eq!(e.message, "unexpected directive `.frob` in a function body");
}

#[test]
fn bad_immediates() {
    let cases = [
        ("0x", "integer literal has no digits"),
        ("09", "invalid digit in octal literal"),
        ("0b12", "invalid digit in binary literal"),
        ("12abc", "invalid digit in integer literal"),
        (
            "99999999999999999999",
            "integer literal does not fit in 64 bits",
        ),
        ("0f3F80", "0f float literal needs exactly 8 hex digits"),
        ("0d3FF0", "0d float literal needs exactly 16 hex digits"),
        ("1.5x", "invalid float literal"),
    ];
    for (lit, msg) in cases {
        let text = format!(".entry k()\n{{\n\tmov.b32 %r1, {lit};\n}}\n");
        let e = one_error(&text);
        assert_eq!(e.message, msg, "{lit}");
        assert_eq!(slice(&text, &e), lit);
    }
    let text = ".entry k() { ld.f32 %f1, [%rd1+0x]; }";
    assert_eq!(one_error(text).message, "integer literal has no digits");
}

#[test]
fn instruction_outside_function() {
    let text = format!("{HEADER}mov.u32 %r1, %r2;\n");
    let e = one_error(&text);
    assert_eq!(e.message, "instruction outside of a function");
    assert_eq!(slice(&text, &e), "mov");
    let p = check("@%p1 bra $L;");
    assert_eq!(p.errors()[0].message, "instruction outside of a function");
}

#[test]
fn misc_malformed() {
    for text in [
        ".entry",
        ".entry (",
        ".func (.param",
        ".visible",
        ".global .u32 x = {1, 2",
        ".global .u32 x = ;",
        ".global .align .b8 x;",
        ".reg .b32 %r<;",
        ".entry k() { .reg .b32 %r<4 ; }",
        ".entry k() { @ 5 bra L; }",
        ".entry k() { @%p1 ; }",
        ".entry k() { ld.f32 %f1, [; }",
        ".entry k() { add.s32 %r1, , %r2; }",
        ".entry k() { add.s32 %r1, %r2 %r3; }",
        ".entry k() { ; }",
        ".entry k() { L: .callprototype ( _ ; }",
        ".entry k() .reqntid { }",
        ".section .debug_info { .b32 $a - ; }",
        ".section { }",
        ".loc 1",
        ".loc 1 2 3, inlined_at 1",
        ".file \"x\"",
        ".version",
        ".target",
        ".target sm_80,",
        ".address_size 48",
        ".pragma nounroll;",
        "\"unterminated",
        "/* unterminated",
        "{",
        "[",
        "(",
        ")",
        "%",
        ".",
        "k:",
    ] {
        let p = check(text);
        assert!(!p.errors().is_empty(), "no error for {text:?}");
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    for open in ["{", "(", "[", ".entry k() { mov.b32 %r1, {"] {
        let text = open.repeat(50_000);
        let p = check(&text);
        assert!(!p.errors().is_empty());
    }
    let text = format!(".global .b8 x = {};", "{".repeat(50_000));
    assert!(!check(&text).errors().is_empty());
    let text = format!(".section .a {{ .b8 {} }}", "(".repeat(50_000));
    assert!(!check(&text).errors().is_empty());
}

#[test]
fn errors_are_sorted_by_position() {
    let p = check(".entry k() { mov.b32 %r1, 0x; \u{e9} add.s32 %r1, 09; }");
    let starts: Vec<_> = p.errors().iter().map(|e| e.range.start()).collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted);
    assert!(p.errors().len() >= 3);
}
