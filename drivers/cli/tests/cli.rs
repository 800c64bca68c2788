//! End-to-end tests of the `ptxeq` binary: exit codes, diagnostics, dumps.

mod support;
use support::{ptxeq, repo, tmp_file};

const GOOD: &str = ".version 8.5
.target sm_80
.address_size 64

.visible .entry scale(
\t.param .u64 scale_param_0
)
{
\t.reg .f32 \t%f<3>;
\t.reg .b32 \t%r<2>;
\t.reg .b64 \t%rd<4>;

\tld.param.u64 \t%rd1, [scale_param_0];
\tmov.u32 \t%r1, %tid.x;
\tmul.wide.u32 \t%rd2, %r1, 4;
\tadd.s64 \t%rd3, %rd1, %rd2;
\tld.global.f32 \t%f1, [%rd3];
\tmul.f32 \t%f2, %f1, 0f40000000;
\tst.global.f32 \t[%rd3], %f2;
\tret;
}
";

#[test]
fn parse_accepts_the_corpus_softmax_files() {
    let (code, out, err) = ptxeq(&[
        "parse",
        "corpus/softmax/common/naive_fast.ptx",
        "corpus/softmax/common/online_fast.ptx",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().count(), 2);
    assert!(out.lines().all(|l| l.contains(": ok: ")), "{out}");
}

/// Every PTX file in the repository (corpus and front-end test data) parses
/// and lowers with no error through the binary.
#[test]
fn parse_accepts_every_ptx_file_in_the_repository() {
    let mut files = Vec::new();
    let mut stack = vec![
        repo().join("corpus"),
        repo().join("crates"),
        repo().join("passes"),
    ];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "ptx") {
                files.push(p.to_string_lossy().into_owned());
            }
        }
    }
    assert!(files.len() >= 40, "only {} PTX files", files.len());
    let mut args = vec!["parse"];
    args.extend(files.iter().map(String::as_str));
    let (code, out, err) = ptxeq(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().filter(|l| l.contains(": ok: ")).count(),
        files.len(),
        "{out}"
    );
}

#[test]
fn parse_reports_located_errors_with_exit_3() {
    let bad = GOOD.replace("mov.u32 \t%r1, %tid.x;", "mov.u32 \t%r1 %tid.x;");
    let p = tmp_file("bad.ptx", &bad);
    let (code, out, err) = ptxeq(&["parse", p.to_str().unwrap()]);
    assert_eq!(code, 3, "{out}{err}");
    // rustc style: message, `--> file:line:col`-like location, excerpt.
    assert!(err.contains("error: expected `;`"), "{err}");
    assert!(err.contains("bad.ptx:14:"), "{err}");
    assert!(
        err.contains("mov.u32 \t%r1 %tid.x;") || err.contains("mov.u32"),
        "{err}"
    );
    assert!(out.contains("1 error(s)"), "{out}");
}

#[test]
fn parse_reports_undeclared_names() {
    let bad = GOOD.replace("mul.f32 \t%f2, %f1,", "mul.f32 \t%f2, %f9x,");
    let p = tmp_file("undeclared.ptx", &bad);
    let (code, _out, err) = ptxeq(&["parse", p.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("%f9x"), "{err}");
    assert!(err.contains("undeclared.ptx:18:"), "{err}");
}

#[test]
fn missing_file_is_invalid_input() {
    let (code, _out, err) = ptxeq(&["parse", "no/such/file.ptx"]);
    assert_eq!(code, 3);
    assert!(err.contains("cannot read no/such/file.ptx"), "{err}");
}

#[test]
fn ir_dump_names_ptx_lines() {
    let p = tmp_file("good.ptx", GOOD);
    let (code, out, err) = ptxeq(&["ir", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let body: String = out.lines().skip(1).collect::<Vec<_>>().join("\n");
    insta::assert_snapshot!(body);
}

#[test]
fn ir_unknown_entry_is_invalid_input() {
    let p = tmp_file("good2.ptx", GOOD);
    let (code, _out, err) = ptxeq(&["ir", p.to_str().unwrap(), "--entry", "nope"]);
    assert_eq!(code, 3);
    assert!(err.contains("no `.entry nope` (entries: scale)"), "{err}");
}

#[test]
fn ir_of_malformed_file_prints_diagnostics_not_a_dump() {
    let p = tmp_file("trunc.ptx", &GOOD[..GOOD.len() / 2]);
    let (code, out, err) = ptxeq(&["ir", p.to_str().unwrap()]);
    assert_eq!(code, 3);
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("error"), "{err}");
}

#[test]
fn help_explains_exit_codes() {
    let (code, out, _) = ptxeq(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Exit codes"), "{out}");
}

#[test]
fn race_reports_both_accesses_with_positions() {
    let (code, out, err) = ptxeq(&["race", "corpus/races/missing-barrier-reverse/check.toml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out.lines().next(),
        Some("race"),
        "verdict line first: {out}"
    );
    // Both accesses: kind, thread, instruction, PTX line, CUDA line.
    let accesses: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("read ") || l.trim_start().starts_with("write "))
        .collect();
    assert_eq!(accesses.len(), 2, "{out}");
    for a in accesses {
        assert!(a.contains("by thread "), "{a}");
        assert!(a.contains("(ptx:") && a.contains("k.cu:"), "{a}");
    }
    assert!(out.contains("memory: "), "{out}");
}

#[test]
fn race_free_kernel_exits_0_and_flags_form_agrees() {
    let (code, out, _) = ptxeq(&[
        "race",
        "corpus/races/missing-barrier-reverse-fixed/check.toml",
    ]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().next(), Some("race-free"));
    // The same check written as flags.
    let (code, out, err) = ptxeq(&[
        "race",
        "corpus/races/missing-barrier-reverse-fixed/k.ptx",
        "--block",
        "128",
        "--tensor",
        "x:f32[128]:in",
        "--tensor",
        "y:f32[128]:out",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().next(), Some("race-free"));
    // And the buggy kernel with the fixed kernel's flags is a race.
    let (code, out, _) = ptxeq(&[
        "race",
        "corpus/races/missing-barrier-reverse/k.ptx",
        "--block",
        "128",
        "--tensor",
        "x:f32[128]:in",
        "--tensor",
        "y:f32[128]:out",
    ]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn race_json_has_schema_and_corpus_words() {
    let (code, out, err) = ptxeq(&[
        "race",
        "corpus/warp-specialized/deadlock-producer-waits-first/check.toml",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["schema"], "ptxeq.race/1");
    assert_eq!(v["verdict"], "deadlock");
    let waiting = &v["kernels"][0]["ctas"][0]["findings"][0]["waiting"];
    assert_eq!(waiting.as_array().map(Vec::len), Some(2), "{out}");
}

#[test]
fn race_on_gather_is_unsupported_with_exit_2() {
    let (code, out, _) = ptxeq(&["race", "corpus/unsupported/gather-embedding/check.toml"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(out.lines().next(), Some("unsupported"));
    assert!(out.contains("address depends on tensor data"), "{out}");
}

#[test]
fn race_with_a_bad_spec_is_invalid_input() {
    let p = tmp_file("bad.toml", "[launch]\nblock = [0]\n");
    let (code, _out, err) = ptxeq(&["race", p.to_str().unwrap()]);
    assert_eq!(code, 3);
    assert!(err.contains("error"), "{err}");
    let (code, _, err) = ptxeq(&[
        "race",
        "corpus/races/missing-barrier-reverse/k.ptx",
        "--tensor",
        "x:f99[4]:in",
    ]);
    assert_eq!(code, 3, "{err}");
}

#[test]
fn terms_prints_softmax_formulas() {
    let (code, out, err) = ptxeq(&["terms", "corpus/softmax/naive-vs-online-n4/check.toml"]);
    assert_eq!(code, 0, "{err}");
    let y0: Vec<&str> = out.lines().filter(|l| l.starts_with("y[0] = ")).collect();
    assert_eq!(y0.len(), 2, "one formula per kernel: {out}");
    for l in y0 {
        assert!(
            // `ex2(x·log2e)` with the rounded constant reads as `exp(x)`.
            l.contains("exp(") && l.contains("x[0]") && (l.contains("max(") || l.contains("max_{")),
            "{l}"
        );
    }
}

#[test]
fn terms_refuses_a_racy_kernel() {
    let (code, _out, err) = ptxeq(&["terms", "corpus/races/missing-barrier-reverse/check.toml"]);
    assert_eq!(code, 1);
    assert!(err.contains("not race-free"), "{err}");
}

#[test]
fn check_proves_naive_vs_online_softmax_and_flags_form_agrees() {
    let (code, out, err) = ptxeq(&["check", "corpus/softmax/naive-vs-online-n4/check.toml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.lines().next(),
        Some("equivalent"),
        "verdict line first: {out}"
    );
    assert!(out.contains("output y: 4 element(s): 4 proved"), "{out}");
    assert!(
        out.contains("assumptions:") && out.contains("real arithmetic"),
        "{out}"
    );
    // The same check as flags.
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/softmax/common/naive_fast.ptx",
        "corpus/softmax/common/online_fast.ptx",
        "--entry",
        "_Z13softmax_naiveILi32EEvPKfPfi",
        "--candidate-entry",
        "_Z14softmax_onlineILi32EEvPKfPfi",
        "--block",
        "32",
        "--tensor",
        "x:f32[4]:in",
        "--tensor",
        "y:f32[4]:out",
        "--scalar",
        "n=4",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().next(), Some("equivalent"), "{out}");
}

#[test]
fn check_refutes_a_dropped_element_with_a_replayable_counterexample() {
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/bugs/reduce-drop-last-element/check.toml",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["schema"], "ptxeq.check/1");
    assert_eq!(v["verdict"], "not-equivalent");
    let outputs = v["outputs"].as_array().expect("outputs");
    let failing = outputs
        .iter()
        .flat_map(|t| t["failures"].as_array().cloned().unwrap_or_default())
        .find(|f| f["failure"]["kind"] == "refuted")
        .expect("a refuted element");
    let cx = &failing["failure"]["counterexample"];
    assert!(!cx["inputs"].as_array().unwrap().is_empty(), "{cx}");
    assert_ne!(cx["reference"], cx["candidate"], "{cx}");
}

#[test]
fn check_reports_a_race_in_either_kernel_before_any_vc() {
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/bugs/softmax-missing-sync-before-reuse/check.toml",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with("race"), "{out}");
    assert!(
        out.contains("no verification condition was checked"),
        "{out}"
    );
}

#[test]
fn check_needs_two_kernels() {
    let (code, _out, err) = ptxeq(&[
        "check",
        "corpus/races/missing-barrier-reverse-fixed/check.toml",
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("reference and a candidate"), "{err}");
}

#[test]
fn check_sarif_names_the_failing_element() {
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/bugs/reduce-drop-last-element/check.toml",
        "--format",
        "sarif",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().expect("results");
    let r = results
        .iter()
        .find(|r| r["ruleId"] == "not-equivalent")
        .expect("a not-equivalent result");
    assert_eq!(r["level"], "error");
    let text = r["message"]["text"].as_str().unwrap();
    assert!(
        text.contains("counterexample") && text.contains("x["),
        "{text}"
    );
}

#[test]
fn a_problem_inside_a_called_func_is_located_in_that_func() {
    // f64 pow calls `.func __internal_accurate_pow`, whose data-dependent
    // branches are unsupported when the expansion is not recognised
    // (`pow(v, v + 1.0)`'s schedule): each must be shown at the callee's
    // own instruction and PTX line, not at the kernel's instruction with
    // the same index.
    let (code, out, _) = ptxeq(&[
        "check",
        "corpus/math/pow-f64-shifted-unsupported-sm80/check.toml",
    ]);
    assert_eq!(code, 2, "{out}");
    let first = out
        .lines()
        .skip_while(|l| !l.contains("in .func `__internal_accurate_pow`"))
        .nth(1)
        .expect("a located problem");
    assert!(first.contains("`@%p") && first.contains(" bra "), "{first}");
    let ptx = std::fs::read_to_string(repo().join("corpus/math/common/default_sm90.ptx")).unwrap();
    let line: usize = first
        .split("(ptx:")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .expect("a PTX line");
    let func_start = ptx
        .lines()
        .collect::<Vec<_>>()
        .iter()
        .rposition(|l| l.contains(".func") && l.contains("__internal_accurate_pow"))
        .expect("the callee's definition")
        + 1;
    assert!(
        line > func_start,
        "line {line} is before the callee at {func_start}"
    );
    assert!(
        ptx.lines().nth(line - 1).is_some_and(|l| l.contains("bra")),
        "{first}"
    );
}
