//! The reports as their readers see them: every JSON report deserialises
//! into its versioned schema type (and back, losing nothing), and the
//! human reports of a race, an out-of-bounds access and a refuted element
//! — plus a JSON and a SARIF sample — are pinned as snapshots, so a change
//! of what a user reads is a reviewed diff.

mod support;

use ptxeq_check::schema::{self, AnyReport};
use support::ptxeq;

/// Wall times (and how many decisions the disk cache served) vary
/// between runs: replace the time line before comparing.
fn redact_human(out: &str) -> String {
    out.lines()
        .map(|l| {
            if l.starts_with("time: ") {
                "time: [redacted]"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "time_ms" || k == "micros" {
                    *x = serde_json::Value::from(0);
                } else {
                    redact_json(x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_json),
        _ => {}
    }
}

/// Runs `ptxeq ARGS --format json` and reads the report through its
/// schema type; the report re-serialised from the type equals the one
/// printed (no field dropped, renamed or retyped).
fn json_report(args: &[&str], code: i32) -> (serde_json::Value, AnyReport) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (got, out, err) = ptxeq(&all);
    assert_eq!(got, code, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let parsed = schema::parse(&v).unwrap_or_else(|e| panic!("{e}\n{out}"));
    let back = match &parsed {
        AnyReport::Check(r) => serde_json::to_value(r),
        AnyReport::Race(r) => serde_json::to_value(r),
        AnyReport::Lift(r) => serde_json::to_value(r),
    }
    .unwrap();
    assert_eq!(back, v, "the schema type lost or changed a field");
    (v, parsed)
}

#[test]
fn every_json_report_validates_against_its_schema_type() {
    let (_, r) = json_report(
        &["race", "corpus/races/missing-barrier-reverse/check.toml"],
        1,
    );
    assert!(matches!(r, AnyReport::Race(ref r) if r.schema == schema::RACE));
    let (_, r) = json_report(
        &["check", "corpus/bugs/reduce-drop-last-element/check.toml"],
        1,
    );
    let AnyReport::Check(c) = r else {
        panic!("not a check report")
    };
    assert_eq!(c.schema, schema::CHECK);
    assert_eq!(c.verdict, ptxeq_check::Verdict::NotEquivalent);
    assert_eq!(c.reference, schema::Reference::Kernel);
    // A check stopped by a race in one kernel.
    let (_, r) = json_report(
        &[
            "check",
            "corpus/bugs/softmax-missing-sync-before-reuse/check.toml",
        ],
        1,
    );
    let AnyReport::Check(c) = r else {
        panic!("not a check report")
    };
    assert_eq!(c.verdict, ptxeq_check::Verdict::Race);
    assert!(c.failing_kernel.is_some() && c.outputs.is_empty());
    let (_, r) = json_report(
        &[
            "lift",
            "corpus/races/missing-barrier-reverse-fixed/check.toml",
        ],
        0,
    );
    assert!(matches!(r, AnyReport::Lift(ref l) if l.kernels.len() == 1));
}

#[test]
fn json_keeps_the_mangled_entry_and_adds_the_demangled_one() {
    let (v, _) = json_report(
        &["race", "corpus/races/oob-shared-last-thread/check.toml"],
        1,
    );
    let k = &v["kernels"][0];
    assert_eq!(k["entry"], "_Z17forward_diff_smemILi128EEvPKfPf");
    assert_eq!(
        k["entry_demangled"],
        "void forward_diff_smem<128>(float const*, float*)"
    );
}

#[test]
fn json_sample_of_a_race_report() {
    let (mut v, _) = json_report(
        &["race", "corpus/races/missing-barrier-reverse/check.toml"],
        1,
    );
    redact_json(&mut v);
    insta::assert_snapshot!(serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn sarif_sample_of_a_race() {
    let (code, out, err) = ptxeq(&[
        "race",
        "corpus/races/missing-barrier-reverse/check.toml",
        "--format",
        "sarif",
    ]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["version"], "2.1.0");
    insta::assert_snapshot!(serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn human_report_of_a_race() {
    let (code, out, _) = ptxeq(&["race", "corpus/races/missing-barrier-reverse/check.toml"]);
    assert_eq!(code, 1, "{out}");
    insta::assert_snapshot!(redact_human(&out));
}

#[test]
fn human_report_of_an_out_of_bounds_access() {
    let (code, out, _) = ptxeq(&["race", "corpus/races/oob-shared-last-thread/check.toml"]);
    assert_eq!(code, 1, "{out}");
    // Demangled, by its own name, element in the access's type first.
    assert!(
        out.contains("memory: tile[128] as 4-byte elements (shared byte offset 512)"),
        "{out}"
    );
    insta::assert_snapshot!(redact_human(&out));
}

#[test]
fn human_report_of_a_refuted_element() {
    let (code, out, _) = ptxeq(&["check", "corpus/bugs/reduce-drop-last-element/check.toml"]);
    assert_eq!(code, 1, "{out}");
    // The candidate drops the last element of the reduction: the first
    // difference is that one summand, not two 250-character sums.
    assert!(
        out.contains("first difference: the reference has x[999]\n"),
        "{out}"
    );
    insta::assert_snapshot!(redact_human(&out));
}

#[test]
fn usage_errors_exit_3_and_help_exits_0() {
    let (code, _, err) = ptxeq(&["check", "--no-such-flag"]);
    assert_eq!(
        code, 3,
        "a usage error is invalid input, not undecided: {err}"
    );
    let (code, _, err) = ptxeq(&["no-such-command"]);
    assert_eq!(code, 3, "{err}");
    let (code, out, _) = ptxeq(&["--help"]);
    assert_eq!(code, 0, "{out}");
}

/// `--max-refuted` (default 8) stops deciding once the verdict is final
/// and the JSON report says so; `--all-elements` decides every element;
/// the verdict is the same.
#[test]
fn deciding_stops_after_max_refuted_and_the_report_says_so() {
    let spec = "corpus/bugs/misc-linear-bias-added-twice/check.toml";
    let run = |extra: &[&str]| {
        let mut args = vec!["check", spec, "--format", "json", "--no-cache"];
        args.extend_from_slice(extra);
        let (code, out, err) = ptxeq(&args);
        assert_eq!(code, 1, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "not-equivalent");
        v
    };
    let stopped = run(&[]);
    let stats = &stopped["stats"];
    assert_eq!(stats["max_refuted"], 8);
    assert_eq!(stats["stopped_early"], true, "{stats}");
    let y = &stopped["outputs"][0];
    let (refuted, not_decided) = (
        y["refuted"].as_u64().unwrap(),
        y["not_decided"].as_u64().unwrap(),
    );
    assert!(refuted >= 8 && not_decided > 0, "{y}");
    assert_eq!(stats["not_decided"], not_decided);

    let two = run(&["--max-refuted", "2"]);
    assert!(two["outputs"][0]["not_decided"].as_u64().unwrap() >= not_decided);

    let all = run(&["--all-elements"]);
    let stats = &all["stats"];
    assert_eq!(stats["max_refuted"], serde_json::Value::Null);
    assert_eq!(
        (stats["stopped_early"].clone(), stats["not_decided"].clone()),
        (false.into(), 0.into())
    );
    let y = &all["outputs"][0];
    assert_eq!(y["not_decided"], 0);
    assert_eq!(
        y["compared"].as_u64(),
        Some(
            y["refuted"].as_u64().unwrap()
                + y["proved"].as_u64().unwrap()
                + y["unknown"].as_u64().unwrap()
        )
    );
    assert!(y["refuted"].as_u64().unwrap() > refuted, "{y}");
}
