//! Property tests: any input, however broken, parses without panicking and
//! round-trips byte for byte; error ranges stay inside the text.

use proptest::prelude::*;
use ptxeq_syntax::parse;

fn check(text: &str) {
    let p = parse(text);
    assert_eq!(p.syntax().to_string(), text);
    for e in p.errors() {
        assert!(usize::from(e.range.end()) <= text.len());
        assert!(e.range.start() <= e.range.end());
    }
    // The typed layer must not panic either.
    let file = p.tree();
    let _ = (file.version(), file.targets(), file.address_size());
    for v in file.global_vars() {
        let _ = (
            v.name(),
            v.ty(),
            v.array_dims(),
            v.initializer().map(|i| i.values()),
        );
    }
    for f in file.functions() {
        let _ = (
            f.name(),
            f.params(),
            f.return_params(),
            f.perf_directives(),
            f.linkage(),
        );
        if let Some(b) = f.body() {
            for s in b.statements() {
                if let ptxeq_syntax::ast::Stmt::Instruction(i) = s {
                    let _ = (
                        i.guard(),
                        i.opcode(),
                        i.modifiers(),
                        i.operands(),
                        i.operand_ranges(),
                    );
                }
            }
        }
    }
    let _ = p.debug_tree();
}

/// A real nvcc file, mutated below.
const SEED: &str = include_str!("../testdata/calls.ptx");
/// PTX-flavoured alphabet, so random strings hit interesting parser paths.
const PIECES: &[&str] = &[
    ".entry",
    ".func",
    ".visible",
    ".extern",
    ".reg",
    ".param",
    ".global",
    ".shared",
    ".b32",
    ".f32",
    ".v4",
    ".align",
    ".loc",
    ".file",
    ".section",
    ".pragma",
    ".reqntid",
    ".callprototype",
    "%r1",
    "%tid.x",
    "%p<3>",
    "$L__BB0_1",
    "_",
    "foo",
    "ld",
    ".global.nc",
    "@",
    "!",
    "|",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    ",",
    ";",
    ":",
    "+",
    "-",
    "=",
    "0f3F800000",
    "0x1F",
    "017",
    "0b1",
    "1.5",
    "42",
    "\"s\"",
    "\"",
    "//c\n",
    "/*",
    "*/",
    " ",
    "\n",
    "\t",
    "#",
    "\u{e9}",
];

fn piece_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..80).prop_map(|v| v.concat())
}

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), prop::sample::select(PIECES))
            .prop_map(|(a, s)| Edit::Insert(a, s.to_owned())),
        (any::<usize>(), any::<String>()).prop_map(|(a, s)| Edit::Insert(a, s)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

/// Largest char boundary `<= i % (len + 1)`.
fn boundary(text: &str, i: usize) -> usize {
    let mut i = i % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut text: String, edits: &[Edit]) -> String {
    for e in edits {
        match e {
            Edit::Delete(at, n) => {
                let a = boundary(&text, *at);
                let b = boundary(&text, (a + n).min(text.len()));
                text.replace_range(a..b.max(a), "");
            }
            Edit::Insert(at, s) => {
                let a = boundary(&text, *at);
                text.insert_str(a, s);
            }
            Edit::Truncate(at) => {
                let a = boundary(&text, *at);
                text.truncate(a);
            }
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_unicode_round_trips(text in any::<String>()) {
        check(&text);
    }

    #[test]
    fn ptx_like_noise_round_trips(text in piece_string()) {
        check(&text);
    }

    #[test]
    fn mutated_real_ptx_round_trips(edits in prop::collection::vec(edit(), 1..8)) {
        check(&apply(SEED.to_owned(), &edits));
    }
}
