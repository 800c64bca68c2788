//! `check_case` on tiny synthetic cases written to a temporary directory:
//! each consistency rule is shown to fire, with a message a corpus author
//! can act on.

use std::path::Path;

use ptxeq_spec::{Status, Verdict};

use super::*;
use crate::report::Outcome;

/// Doubles `x` into `y`; `n` is unused by the body but declared.
const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u64 scale_param_1,
	.param .u32 scale_param_2
)
.reqntid 128, 1, 1
{
	.reg .b32 	%r<2>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.u64 	%rd2, [scale_param_1];
	mov.u32 	%r1, %tid.x;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.u32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	add.f32 	%f2, %f1, %f1;
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.f32 	[%rd7], %f2;
	ret;
}
"#;

const SPEC: &str = r#"
note = "doubling, written twice"

[reference]
ptx = "k.ptx"
params = ["x", "y", "n"]

[candidate]
ptx = "k.ptx"
entry = "scale"
params = ["x", "y", "n"]

[tensors]
x = { role = "input", dtype = "f32", shape = [128] }
y = { role = "output", dtype = "f32", shape = [128] }

[scalars]
n = 128

[expect]
verdict = "equivalent"
"#;

/// Writes a case (spec + `k.ptx`) and checks it.
fn run(spec: &str, ptx: &str) -> CaseReport {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("family/case");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("check.toml"), spec).unwrap();
    std::fs::write(dir.join("k.ptx"), ptx).unwrap();
    let cases = crate::discover(tmp.path()).unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].name, "family/case");
    check_case(&cases[0])
}

/// The 1-based line of `spec` holding the first occurrence of `needle`
/// (what a problem about that key must point at), found in the text.
fn line_of(spec: &str, needle: &str) -> u32 {
    let at = spec
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in the spec"));
    spec[..at].matches('\n').count() as u32 + 1
}

/// Expects exactly one problem, containing every needle.
fn one_problem(report: &CaseReport, needles: &[&str]) -> Problem {
    assert_eq!(
        report.problems.len(),
        1,
        "expected one problem, got {:#?}",
        report.problems
    );
    let p = report.problems[0].clone();
    for n in needles {
        assert!(p.message.contains(n), "{:?} lacks {n:?}", p.message);
    }
    p
}

#[test]
fn consistent_case() {
    let r = run(SPEC, PTX);
    assert!(r.is_consistent(), "{:#?}", r.problems);
    assert_eq!(r.block, Some([128, 1, 1]), "block from .reqntid");
    assert_eq!(r.status, Status::Active);
    // The checker ran the full check: the same kernel twice is equivalent.
    assert_eq!(
        r.checked,
        Some(crate::Checked::Verdict(Verdict::Equivalent))
    );
    assert_eq!(r.outcome(), Outcome::Pass);
    assert_eq!(r.spec.unwrap().expect.unwrap().verdict, Verdict::Equivalent);
}

#[test]
fn param_count_mismatch() {
    let spec = SPEC.replacen(r#"params = ["x", "y", "n"]"#, r#"params = ["x", "y"]"#, 1);
    let p = one_problem(
        &run(&spec, PTX),
        &[
            "`reference.params` has 2 names",
            "entry `scale` has 3 params",
        ],
    );
    assert!(p.file.as_ref().unwrap().ends_with("family/case/check.toml"));
    // At the `params` key of the reference's table.
    let line = line_of(&spec, r#"params = ["x", "y"]"#);
    assert_eq!(p.location.map(|(l, _)| l), Some(line), "{p}");
}

#[test]
fn missing_entry() {
    let spec = SPEC.replace(r#"entry = "scale""#, r#"entry = "scal""#);
    let p = one_problem(
        &run(&spec, PTX),
        &[
            "`candidate.entry`",
            "no .entry named `scal`",
            "entries: scale",
        ],
    );
    let line = line_of(&spec, r#"entry = "scal""#);
    assert_eq!(p.location.map(|(l, _)| l), Some(line), "{p}");
}

#[test]
fn ambiguous_entry() {
    let two = format!(
        "{PTX}\n{}",
        PTX.replace("scale", "other")
            .replace(".version 8.0\n.target sm_80\n.address_size 64\n", "")
    );
    one_problem(
        &run(SPEC, &two),
        &["`reference`", "2 entries", "scale, other", "`entry`"],
    );
}

#[test]
fn reqntid_mismatch() {
    let spec = SPEC.replace("[reference]", "[launch]\nblock = [256, 1, 1]\n[reference]");
    let r = run(&spec, PTX);
    assert_eq!(r.problems.len(), 2, "{:#?}", r.problems);
    assert!(r.problems[0].message.contains(
        "`reference`: entry `scale` declares .reqntid [128, 1, 1] but `launch.block` is [256, 1, 1]"
    ));
}

#[test]
fn maxntid_exceeded_and_no_block() {
    let ptx = PTX.replace(".reqntid 128, 1, 1", ".maxntid 64, 1, 1");
    let spec = SPEC.replace("[reference]", "[launch]\nblock = [128]\n[reference]");
    let r = run(&spec, &ptx);
    assert_eq!(r.problems.len(), 2, "{:#?}", r.problems);
    assert!(
        r.problems[0]
            .message
            .contains(".maxntid [64, 1, 1] (64 threads)")
    );
    // without launch.block, .maxntid provides the block
    let r = run(SPEC, &ptx);
    assert!(r.is_consistent(), "{:#?}", r.problems);
    assert_eq!(r.block, Some([64, 1, 1]));

    let bare = PTX.replace(".reqntid 128, 1, 1", "");
    one_problem(&run(SPEC, &bare), &["no block size", "launch.block"]);
}

#[test]
fn syntax_error_has_a_location() {
    let bad = PTX.replace("add.f32 \t%f2, %f1, %f1;", "add.f32 \t%f2, %f1 %f1 ]];");
    let r = run(SPEC, &bad);
    assert!(!r.is_consistent());
    let p = &r.problems[0];
    assert!(p.message.starts_with("syntax error"), "{p}");
    assert!(
        p.file.as_ref().unwrap().ends_with("family/case/k.ptx"),
        "{p}"
    );
    let (line, _) = p.location.expect("a location");
    assert_eq!(line, 24, "{p}");
    // the shared file is parsed, and its errors reported, once
    assert!(r.problems.len() <= 4, "{:#?}", r.problems);
}

#[test]
fn param_kinds() {
    let spec = SPEC.replacen(
        r#"params = ["x", "y", "n"]"#,
        r#"params = ["n", "y", "x"]"#,
        1,
    );
    let p = one_problem(
        &run(&spec, PTX),
        &[
            "`reference.params[2]` (`x`) is a tensor",
            "`scale_param_2` (.u32)",
            "64-bit",
        ],
    );
    // At the list's third entry: its line, and the column of `"x"`.
    let list = r#"params = ["n", "y", "x"]"#;
    let line = line_of(&spec, list);
    let col = list.find(r#""x""#).unwrap() as u32 + 1;
    assert_eq!(p.location, Some((line, col)), "{p}");
    let spec = SPEC.replace("n = 128", "n = 1.5");
    let r = run(&spec, PTX);
    assert_eq!(r.problems.len(), 2, "{:#?}", r.problems);
    assert!(
        r.problems[0]
            .message
            .contains("is a float but the param is .u32")
    );
    let spec = SPEC.replace("n = 128", "n = -1");
    assert!(
        run(&spec, PTX).problems[0]
            .message
            .contains("does not fit a .u32")
    );
}

#[test]
fn corpus_fields_and_tensor_rules() {
    let spec = SPEC.replace(
        "note = \"doubling, written twice\"",
        "note = \"two\\nlines\"",
    );
    one_problem(&run(&spec, PTX), &["one line"]);
    let spec = SPEC.replace("note = \"doubling, written twice\"", "");
    one_problem(&run(&spec, PTX), &["no `note`"]);
    let spec = SPEC.replace("[expect]\nverdict = \"equivalent\"", "");
    let r = run(&spec, PTX);
    one_problem(&r, &["no [expect]"]);
    assert!(matches!(r.outcome(), Outcome::Problems(_)));
    let spec = SPEC.replace("role = \"output\"", "role = \"input\"");
    one_problem(&run(&spec, PTX), &["no output tensor"]);
    let spec = SPEC.replace("shape = [128] }\ny", "shape = [1073741824] }\ny");
    let p = one_problem(&run(&spec, PTX), &["tensor `x` is 4294967296 bytes"]);
    let line = line_of(&spec, "x = { role");
    assert_eq!(p.location.map(|(l, _)| l), Some(line), "{p}");
}

#[test]
fn spec_errors_and_missing_files() {
    let spec = SPEC.replace("[scalars]", "[scalar]");
    let p = one_problem(&run(&spec, PTX), &["unknown field `scalar`"]);
    assert!(p.location.is_some());
    assert!(p.file.unwrap().ends_with("check.toml"));

    // A missing PTX file is a spec error at its `ptx` key, naming the
    // path it resolved to (issue 19).
    let spec = SPEC.replace("ptx = \"k.ptx\"", "ptx = \"../common/gone.ptx\"");
    let r = run(&spec, PTX);
    let p = &r.problems[0];
    assert!(p.message.contains("`reference.ptx`: no such file"), "{p}");
    assert!(p.message.contains("family/common/gone.ptx"), "{p}");
    assert!(p.location.is_some(), "{p}");
    assert!(p.file.as_ref().unwrap().ends_with("check.toml"), "{p}");
}

#[test]
fn pending_status_is_reported() {
    let spec = SPEC.replace(
        "verdict = \"equivalent\"",
        "verdict = \"equivalent\"\nstatus = \"pending\"\npending = \"needs X\"",
    );
    let r = run(&spec, PTX);
    assert!(r.is_consistent(), "{:#?}", r.problems);
    assert_eq!(r.status, Status::Pending);
}

#[test]
fn tidy_paths() {
    assert_eq!(tidy(Path::new("/a/b/../c/./d")), Path::new("/a/c/d"));
    assert_eq!(tidy(Path::new("../x")), Path::new("../x"));
}
