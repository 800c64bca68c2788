//! The `--help` text says what the commands do today: every exit code
//! (docs/semantics.md §1), no promise of future work, and `watch`
//! running the check it runs. (Issue 19 counted stale statements here:
//! "symbolic execution in later milestones", "watch only race-checks".)

mod support;
use support::{ptxeq, tmp_file};

/// Every exit code word the top-level help must explain, from the
/// semantics' exit-code list.
const EXIT_CODES: [(&str, &str); 5] = [
    ("0", "proved"),
    ("1", "bug"),
    ("2", "undecided"),
    ("3", "invalid input"),
    ("4", "order-dependent"),
];

#[test]
fn the_top_level_help_lists_every_exit_code_and_no_future_work() {
    let (code, out, _) = ptxeq(&["--help"]);
    assert_eq!(code, 0);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for (n, word) in EXIT_CODES {
        assert!(
            flat.contains(&format!("{n} {word}")) || flat.contains(&format!("{n} a real {word}")),
            "exit code {n} ({word}) missing from --help:\n{out}"
        );
    }
    for stale in ["later milestone", "not yet", "will be"] {
        assert!(!flat.contains(stale), "`{stale}` in --help:\n{out}");
    }
    assert!(flat.contains("symbolic execution"), "{out}");
}

#[test]
fn check_and_race_help_name_order_dependent() {
    for cmd in ["check", "race"] {
        let (code, out, _) = ptxeq(&[cmd, "--help"]);
        assert_eq!(code, 0);
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("4 order-dependent"), "{cmd} --help:\n{out}");
    }
}

#[test]
fn watch_help_says_it_runs_check_for_a_pair() {
    let (code, out, _) = ptxeq(&["watch", "--help"]);
    assert_eq!(code, 0);
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("`ptxeq check` for a spec with a reference and a candidate"),
        "{out}"
    );
    assert!(
        !flat.contains("Today the report is the race check"),
        "{out}"
    );
}

#[test]
fn an_empty_ptx_file_is_invalid_input() {
    let empty = tmp_file("help_text_empty.ptx", "// nothing\n");
    let (code, _, err) = ptxeq(&["parse", empty.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("empty PTX file"), "{err}");
}

/// A module of `.func`s only (a device library, `nvcc -rdc=true`) is valid
/// PTX, so `parse` accepts it and says it has no entry; a check of it is
/// bad input located at the spec line that names the file (or the entry).
#[test]
fn a_func_only_module_parses_but_cannot_be_checked() {
    let dir = support::scratch("func_only");
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\n\
               .visible .func (.param .b32 r) twice(.param .b32 a)\n{\n\
               \t.reg .b32 %r<3>;\n\tld.param.b32 %r1, [a];\n\
               \tadd.s32 %r2, %r1, %r1;\n\tst.param.b32 [r], %r2;\n\tret;\n}\n";
    std::fs::write(dir.join("lib.ptx"), ptx).unwrap();
    let (code, out, err) = ptxeq(&["parse", dir.join("lib.ptx").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok: 0 entries (), 1 function(s)"), "{out}");
    for (entry_line, key_line) in [("", 2), ("entry = \"twice\"\n", 3)] {
        let spec = format!(
            "[kernel]\nptx = \"lib.ptx\"\n{entry_line}params = [\"x\"]\n[launch]\nblock = [32]\n\
             [tensors]\nx = {{ role = \"output\", dtype = \"f32\", shape = [32] }}\n"
        );
        let path = dir.join("check.toml");
        std::fs::write(&path, spec).unwrap();
        let (code, _, err) = ptxeq(&["race", path.to_str().unwrap()]);
        assert_eq!(code, 3, "{err}");
        assert!(err.contains(&format!("check.toml:{key_line}:")), "{err}");
        assert!(err.contains("no .entry"), "{err}");
    }
}

/// Log lines (`-v`, `RUST_LOG`) on a pipe carry no ANSI colour codes: a CI
/// page or a log file shows them as noise (issue 19: a read-only cache
/// printed 16 coloured warnings to a non-terminal).
#[test]
fn log_output_on_a_pipe_has_no_colour() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptxeq"))
        .args([
            "-vv",
            "race",
            "corpus/races/barrier-in-divergent-branch-fixed/check.toml",
        ])
        .env("PTXEQ_CACHE_DIR", support::scratch("nocolour-cache"))
        .current_dir(support::repo())
        .output()
        .expect("run ptxeq");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().count() > 2,
        "-vv logs something to stderr:\n{err}"
    );
    assert!(!err.contains('\x1b'), "colour codes on a pipe:\n{err:?}");
}
