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
    // x[999] is first built by the reference's one global load, and the
    // element is stored by each kernel's one global store: the lines are
    // found in the PTX files here, not taken from the tool.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let reference = read("corpus/reduction/common/reduce0.ptx");
    let candidate = read("corpus/bugs/reduce-drop-last-element/reduce_drop_last.ptx");
    let (load, _) = store_line_in_ptx(&reference, "reduce0", "ld.global.f32");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("built in the reference by")
                && l.contains(&format!("(ptx:{load}, "))),
        "{out}"
    );
    let (st_ref, _) = store_line_in_ptx(&reference, "reduce0", "st.global.f32");
    let (st_cand, _) = store_line_in_ptx(&candidate, "reduce_drop_last", "st.global.f32");
    let stored = |who: &str, line: u32| {
        out.lines().any(|l| {
            l.contains(&format!("stored by the {who}:")) && l.contains(&format!("(ptx:{line}, "))
        })
    };
    assert!(
        stored("reference", st_ref) && stored("candidate", st_cand),
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

/// The PTX line of the one instruction starting with `needle` in the
/// body of `.entry entry` — found in the file, not taken from the tool —
/// and the source file (from `.file`) and line of the `.loc` before it
/// (its `inlined_at` position when the store was inlined: the user's own
/// code).
fn store_line_in_ptx(ptx: &str, entry: &str, needle: &str) -> (u32, Option<(String, u32)>) {
    let lines: Vec<&str> = ptx.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains(".entry") && l.contains(entry))
        .unwrap_or_else(|| panic!("no entry {entry}"));
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.contains(".entry"))
        .map_or(lines.len(), |p| start + 1 + p);
    let hits: Vec<usize> = (start..end)
        .filter(|&i| lines[i].trim_start().starts_with(needle))
        .collect();
    assert_eq!(hits.len(), 1, "`{needle}` in {entry}: {hits:?}");
    let at = hits[0];
    let file_path = |n: &str| -> String {
        lines
            .iter()
            .map(|l| l.trim())
            .find_map(|l| {
                let rest = l.strip_prefix(".file")?.trim_start();
                let (num, path) = rest.split_once(char::is_whitespace)?;
                (num == n).then(|| path.trim().trim_matches('"').to_string())
            })
            .unwrap_or_else(|| panic!("no .file {n}"))
    };
    let loc = lines[start..at]
        .iter()
        .rev()
        .find(|l| l.trim_start().starts_with(".loc"))
        .map(|l| {
            let l = l.trim();
            // `.loc F L C[, function_name …, inlined_at F L C]`
            let outer = l.rsplit_once("inlined_at").map_or(l, |(_, o)| o);
            let nums: Vec<&str> = outer
                .trim_start_matches(".loc")
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .collect();
            (file_path(nums[0]), nums[1].parse::<u32>().unwrap())
        });
    (at as u32 + 1, loc)
}

/// A refuted element names the store that wrote it in both kernels: the
/// PTX instruction and line (computed here from the PTX file), the CUDA
/// line from `.loc` and its text.
#[test]
fn a_refuted_element_names_the_store_in_both_kernels() {
    let case = "corpus/bugs/misc-relu6-dropped-clamp";
    let (v, _) = json_report(&["check", &format!("{case}/check.toml")], 1);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ptx = std::fs::read_to_string(root.join(case).join("kernels.ptx")).unwrap();
    let f = &v["outputs"][0]["failures"][0];
    assert_eq!(f["failure"]["kind"], "refuted", "{f}");
    for (side, entry, needle) in [
        ("reference_store", "relu6_ref", "st.global.f32"),
        (
            "candidate_store",
            "_Z10relu6_vec4ILi1EEvPK6float4PS0_",
            "st.global.v4.f32",
        ),
    ] {
        let st = &f[side];
        let (line, src) = store_line_in_ptx(&ptx, entry, needle);
        assert_eq!(st["ptx_line"], line, "{side}: {st}");
        assert_eq!(st["function"], entry, "{st}");
        assert!(
            st["instruction"].as_str().unwrap().starts_with(needle),
            "{st}"
        );
        assert!(st["ptx"].as_str().unwrap().ends_with("kernels.ptx"), "{st}");
        let (file, src) = src.expect("the case's PTX has line info");
        assert_eq!(st["source_line"], src, "{st}");
        let source = std::fs::read_to_string(root.join(case).join(&file)).unwrap();
        let text = source.lines().nth(src as usize - 1).unwrap().trim();
        assert_eq!(st["source_text"], text, "{st}");
        // The element's index says which thread stored it: y[i] by
        // thread i (reference), y[4j..4j+3] by thread j (float4).
        let i = f["index"].as_u64().unwrap();
        let tid = if side == "reference_store" { i } else { i / 4 };
        assert_eq!(st["thread"], serde_json::json!([tid, 0, 0]), "{st}");
    }
}

#[test]
fn json_sample_of_a_refuted_element() {
    let (mut v, _) = json_report(
        &[
            "check",
            "corpus/bugs/misc-relu6-dropped-clamp/check.toml",
            "--max-refuted",
            "1",
        ],
        1,
    );
    redact_json(&mut v);
    insta::assert_snapshot!(serde_json::to_string_pretty(&v["outputs"][0]["failures"][0]).unwrap());
}

#[test]
fn sarif_sample_of_a_refuted_element() {
    let (code, out, err) = ptxeq(&[
        "check",
        "corpus/bugs/misc-relu6-dropped-clamp/check.toml",
        "--max-refuted",
        "1",
        "--format",
        "sarif",
    ]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    let results = v["runs"][0]["results"].as_array().unwrap();
    let refuted: Vec<&serde_json::Value> = results
        .iter()
        .filter(|r| r["ruleId"] == "not-equivalent")
        .collect();
    assert!(!refuted.is_empty(), "{out}");
    // Located at the candidate's store: its CUDA line (the PTX has
    // `.loc` info: the header both kernels include), with a region.
    let loc = &refuted[0]["locations"][0]["physicalLocation"];
    assert!(
        loc["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("relu6.cuh"),
        "{loc}"
    );
    assert!(loc["region"]["startLine"].as_u64().is_some(), "{loc}");
    insta::assert_snapshot!(serde_json::to_string_pretty(refuted[0]).unwrap());
}

/// JSON carries the whole formula of a failure whose `reference` /
/// `candidate` was cut at the display width: as text when it fits
/// `--json-formula-chars`, else as a DAG whose nodes refer only to
/// earlier nodes.
#[test]
fn json_carries_whole_formulas_as_text_or_a_dag() {
    let spec = "corpus/bugs/softmax-swapped-subtraction/check.toml";
    let (v, _) = json_report(&["check", spec, "--max-refuted", "1"], 1);
    let f = &v["outputs"][0]["failures"][0];
    let cut = f["reference"].as_str().unwrap();
    assert!(cut.ends_with('…'), "this case's formula is long: {cut}");
    let full = f["full"]["reference"].as_str().expect("whole text");
    assert!(!full.ends_with('…') && full.chars().count() > cut.chars().count());
    assert!(full.starts_with(cut.trim_end_matches('…')), "{full}");
    assert!(f["full"]["dag"].is_null());
    let n = full.chars().count();

    let bound = (n - 1).to_string();
    let (v, _) = json_report(
        &[
            "check",
            spec,
            "--max-refuted",
            "1",
            "--json-formula-chars",
            &bound,
        ],
        1,
    );
    let f = &v["outputs"][0]["failures"][0];
    assert!(f["full"]["reference"].is_null(), "{}", f["full"]);
    let dag = &f["full"]["dag"];
    let nodes = dag["nodes"].as_array().expect("a DAG");
    for (i, node) in nodes.iter().enumerate() {
        for a in node["args"].as_array().into_iter().flatten() {
            assert!(a.as_u64().unwrap() < i as u64, "node {i}: {node}");
        }
    }
    for side in ["reference", "candidate"] {
        let root = dag[side].as_u64().unwrap() as usize;
        assert!(root < nodes.len());
    }
    // Shared sub-terms are listed once: fewer nodes than the text has
    // characters.
    assert!(nodes.len() < n, "{} nodes for {n} characters", nodes.len());
}

/// The first difference of a refuted element — the differing sub-terms
/// and the instructions that built them — is in the JSON report and among
/// the SARIF result's related locations, not only in the human report.
/// The candidate drops the reduction's last summand, x[999], which only
/// the reference's one global load builds: its PTX line, `.loc` line and
/// source text are read from the PTX and `.cu` files here.
#[test]
fn the_first_difference_is_in_json_and_sarif() {
    let case = "corpus/bugs/reduce-drop-last-element/check.toml";
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ptx_path = "corpus/reduction/common/reduce0.ptx";
    let ptx = std::fs::read_to_string(root.join(ptx_path)).unwrap();
    let (load, src) = store_line_in_ptx(&ptx, "reduce0", "ld.global.f32");
    let (file, src_line) = src.expect("reduce0.ptx has line info");
    let cu = root.join("corpus/reduction/common").join(&file);
    let text = std::fs::read_to_string(&cu).unwrap();
    let src_text = text.lines().nth(src_line as usize - 1).unwrap().trim();

    let (v, _) = json_report(&["check", case, "--max-refuted", "1"], 1);
    let f = &v["outputs"][0]["failures"][0];
    let d = &f["first_difference"];
    assert_eq!(d["reference"], serde_json::json!(["x[999]"]), "{d}");
    assert_eq!(d["candidate"], serde_json::json!([]), "{d}");
    let built = d["built"].as_array().expect("built");
    let by_ref: Vec<_> = built
        .iter()
        .filter(|b| b["kernel"] == "reference")
        .collect();
    assert_eq!(by_ref.len(), 1, "{d}");
    let b = by_ref[0];
    assert_eq!(b["ptx_line"], load, "{b}");
    assert!(b["ptx"].as_str().unwrap().ends_with("reduce0.ptx"), "{b}");
    assert!(
        b["instruction"]
            .as_str()
            .unwrap()
            .starts_with("ld.global.f32"),
        "{b}"
    );
    assert_eq!(b["source_line"], src_line, "{b}");
    assert_eq!(b["source_text"], src_text, "{b}");
    assert!(b["term"].is_null(), "one sub-term: not repeated: {b}");

    // `--show 0`: no failure is explained (and no CTA replayed).
    let (v, _) = json_report(&["check", case, "--max-refuted", "1", "--show", "0"], 1);
    assert!(v["outputs"][0]["failures"][0]["first_difference"].is_null());

    let r = first_refuted_sarif_result(case);
    let related = r["relatedLocations"].as_array().expect("related locations");
    let at = |uri_end: &str, line: u32| {
        related.iter().any(|l| {
            let p = &l["physicalLocation"];
            p["artifactLocation"]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with(uri_end))
                && p["region"]["startLine"] == line
                && l["message"]["text"]
                    .as_str()
                    .is_some_and(|m| m.contains("first differ") && m.contains("reference"))
        })
    };
    assert!(at("reduce0.ptx", load), "{r}");
    assert!(at(&file, src_line), "{r}");
}

/// `ptxeq check --format json` writes its report as it serialises it,
/// never as a tree of JSON values (an attention row's witness names tens
/// of thousands of inputs): what it writes is, field for field and times
/// aside, the report the in-process API builds as a value
/// (`api::run_json`, what the Python bindings read).
#[test]
fn the_streamed_json_report_is_the_api_report() {
    use ptxeq_cli::api;
    let path = support::repo().join("corpus/bugs/misc-relu6-dropped-clamp/check.toml");
    let (mut written, _) = json_report(&["check", path.to_str().unwrap(), "--no-cache"], 1);
    let spec = ptxeq_spec::CheckSpec::load(&path).expect("spec");
    let checker = ptxeq_check::Checker::with_cache(None);
    let loaded = api::load(checker.db(), spec, &path, &Default::default()).expect("loads");
    let mut built = api::run_json(
        &checker,
        api::Mode::Auto,
        &loaded,
        api::RunOptions::default(),
    )
    .expect("a check report");
    assert!(
        built["outputs"][0]["failures"][0]["failure"]["counterexample"]["inputs"]
            .as_array()
            .is_some_and(|a| !a.is_empty()),
        "a refuted element with its witness: {built}"
    );
    // The text form (what the Python bindings read), serialised from the
    // typed report too.
    let mut text: serde_json::Value = serde_json::from_str(
        &api::run_json_text(
            &checker,
            api::Mode::Auto,
            &loaded,
            api::RunOptions::default(),
        )
        .expect("a check report"),
    )
    .expect("valid JSON");
    redact_json(&mut written);
    redact_json(&mut built);
    redact_json(&mut text);
    assert_eq!(written, built);
    assert_eq!(text, built);
}

/// A SARIF result's message shows a counterexample as the human report
/// does: the first inputs and how many more the JSON report lists, not
/// every input (an attention row's witness names tens of thousands).
#[test]
fn sarif_messages_elide_long_witnesses() {
    let case = "corpus/bugs/softmax-online-missing-rescale/check.toml";
    let text = first_refuted_sarif_result(case)["message"]["text"]
        .as_str()
        .expect("a message")
        .to_string();
    let (_, report) = json_report(&["check", case, "--max-refuted", "1"], 1);
    let AnyReport::Check(report) = report else {
        panic!("a check report")
    };
    let inputs = report.outputs[0].failures[0].failure["counterexample"]["inputs"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(inputs > 12, "the case's witness has {inputs} inputs");
    assert!(
        text.contains(&format!("({} more in --format json)", inputs - 12)),
        "{text}"
    );
    let shown = text
        .split(" gives ")
        .next()
        .map_or(0, |cx| cx.matches(" = ").count());
    assert_eq!(shown, 12, "{text}");
}

/// The first `not-equivalent` result of `ptxeq check CASE --max-refuted 1
/// --format sarif` (which must exit 1).
fn first_refuted_sarif_result(case: &str) -> serde_json::Value {
    let (code, out, err) = ptxeq(&["check", case, "--max-refuted", "1", "--format", "sarif"]);
    assert_eq!(code, 1, "{err}");
    let s: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    s["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "not-equivalent")
        .cloned()
        .expect("a refuted element")
}
