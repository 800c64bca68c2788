//! Classification on a hand-written pair whose mutants' fates are known
//! from how the kernels were written: `y[i] = 2·x[i]` as `x·2` (reference)
//! and as `max(x + x, x·2)` (candidate), plus a dead `mov` and an
//! instruction no thread runs. Shows the harness can fail: an unreviewed
//! survivor is a failure until the allow-list gives a reason.

use std::path::Path;

use ptxeq_corpus::CaseDir;
use ptxeq_mutate::{AllowList, Op, Options, Outcome, Summary, run_case};

const HEAD: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

fn kernel(name: &str, body: &str) -> String {
    format!(
        ".visible .entry {name}(.param .u64 px, .param .u64 py)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b32 %r<8>;\n\t.reg .f32 %f<8>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd1, [px];\n\tld.param.u64 %rd2, [py];\n\
         \tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n\
         \tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd5, %r1, 4;\n\
         \tadd.s64 %rd6, %rd3, %rd5;\n\tadd.s64 %rd7, %rd4, %rd5;\n\
         \tld.global.f32 %f1, [%rd6];\n{body}\tret;\n}}\n"
    )
}

const SPEC: &str = r#"note = "y = 2x written as x*2 and as max(x+x, x*2): equivalent"
[launch]
block = [32, 1, 1]
[reference]
ptx = "k.ptx"
entry = "reference"
params = ["x", "y"]
[candidate]
ptx = "k.ptx"
entry = "candidate"
params = ["x", "y"]
[tensors]
x = { role = "input", dtype = "f32", shape = [32] }
y = { role = "output", dtype = "f32", shape = [32] }
[expect]
verdict = "equivalent"
"#;

fn case_dir(dir: &Path) -> CaseDir {
    let reference = kernel(
        "reference",
        "\tmul.f32 %f2, %f1, 0f40000000;\n\tst.global.f32 [%rd7], %f2;\n",
    );
    // Instruction indices: 0..=8 as in `kernel`, then
    // 9 mov (dead), 10 setp (never true), 11 guarded add (never runs),
    // 12 add (x + x), 13 mul (x · 2), 14 max of the two, 15 st.
    let candidate = kernel(
        "candidate",
        "\tmov.f32 %f5, 0f3F800000;\n\
         \tsetp.gt.u32 %p1, %r1, 1000;\n\
         \t@%p1 add.f32 %f6, %f1, 0f3F800000;\n\
         \tadd.f32 %f2, %f1, %f1;\n\
         \tmul.f32 %f7, %f1, 0f40000000;\n\
         \tmax.f32 %f3, %f2, %f7;\n\
         \tst.global.f32 [%rd7], %f3;\n",
    );
    std::fs::write(dir.join("k.ptx"), format!("{HEAD}{reference}{candidate}")).unwrap();
    std::fs::write(dir.join("check.toml"), SPEC).unwrap();
    CaseDir {
        name: "synthetic/twice".into(),
        dir: dir.to_path_buf(),
    }
}

fn outcome<'a>(r: &'a ptxeq_mutate::CaseResult, id: &str) -> &'a Outcome {
    &r.results
        .iter()
        .find(|m| m.mutant.id == id)
        .unwrap_or_else(|| panic!("no mutant {id} in {:#?}", r.results))
        .outcome
}

#[test]
fn mutants_of_a_known_pair_are_classified_from_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let case = case_dir(tmp.path());
    let opts = Options {
        mutants: None,
        rewrites: None,
        ops: vec![
            Op::ImmFloat,
            Op::AddSub,
            Op::MaxMin,
            Op::Commute,
            Op::MulTwo,
        ],
        ..Options::default()
    };
    let r = run_case(&case, &opts, &AllowList::default());
    assert!(r.skipped.is_none(), "{:?}", r.skipped);

    // The dead `mov`: proved, its result never read.
    assert!(matches!(
        outcome(&r, "imm-float:9:op1"),
        Outcome::EquivalentByConstruction { why } if why.contains("never read")
    ));
    // The guarded add no thread runs.
    assert!(matches!(
        outcome(&r, "imm-float:11:op2"),
        Outcome::EquivalentByConstruction { why } if why.contains("never executed")
    ));
    assert!(matches!(
        outcome(&r, "add-sub:11"),
        Outcome::EquivalentByConstruction { .. }
    ));
    // x - x = 0 ≠ 2x.
    assert_eq!(
        outcome(&r, "add-sub:12"),
        &Outcome::Killed {
            by: "not-equivalent".into()
        }
    );
    // min(x + x, 2x) = max(x + x, 2x): a live survivor, equal only over
    // the reals (the engine's values differ), and nobody has reviewed it.
    assert_eq!(
        outcome(&r, "max-min:14"),
        &Outcome::SurvivedLive {
            allowed: None,
            in_idiom: false
        }
    );
    // Rewrites: x + x → x · 2 and a commuted address add stay proved.
    assert_eq!(outcome(&r, "mul-two:12:back"), &Outcome::Preserved);
    assert_eq!(outcome(&r, "commute:7"), &Outcome::Preserved);

    let summary = Summary::new(1, vec![r], &AllowList::default());
    let failures = summary.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].1, "max-min:14");

    // Reviewed: the same survivor is allowed, and nothing fails.
    let allow = AllowList::parse(
        "[[allow]]\ncase = \"synthetic/twice\"\nmutant = \"max-min:14\"\n\
         reason = \"both operands are 2x\"\n",
    )
    .unwrap();
    let r = run_case(&case, &opts, &allow);
    assert!(matches!(
        outcome(&r, "max-min:14"),
        Outcome::SurvivedLive {
            allowed: Some(_),
            ..
        }
    ));
    assert!(Summary::new(1, vec![r], &allow).failures().is_empty());
}
