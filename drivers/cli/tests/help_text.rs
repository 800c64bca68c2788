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
