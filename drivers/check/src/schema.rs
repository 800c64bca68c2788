//! The versioned JSON report schemas, as their own serde types.
//!
//! Each report carries its schema word in `"schema"`: `ptxeq.check/1`
//! ([`CheckReport`]), `ptxeq.race/1` ([`RaceReport`]), `ptxeq.lift/1`
//! ([`LiftReport`]). The renderers build these types, so the shape of a
//! report is spelled here once and a consumer (the Python bindings, CI
//! scripts) can deserialise it back ([`parse`]) — every type rejects
//! fields it does not know, so a report that drifts from its schema fails
//! the round-trip test instead of growing silently.
//!
//! Versioning: adding an optional field keeps the version; removing or
//! renaming a field, or changing a field's type, bumps it (`/2`).
//!
//! Leaves that are engine data are kept as they serialise today: a
//! finding is `ptxeq_exec::Finding` plus its resolved `positions`; an
//! element failure's `failure` object and a lifted tensor are typed in
//! their own crates (see README "JSON reports").

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Verdict;

/// `ptxeq check --format json`.
pub const CHECK: &str = "ptxeq.check/1";
/// `ptxeq race --format json`.
pub const RACE: &str = "ptxeq.race/1";
/// `ptxeq lift --format json`.
pub const LIFT: &str = "ptxeq.lift/1";

/// The `ptxeq.check/1` report: an equivalence check.
///
/// `F` is the form of each failure's `failure` object: a JSON value when
/// a report is read back (the default); the CLI writes the verdicts' own
/// typed failure, whose serialisation is that same JSON, so a report with
/// tens of thousands of witness inputs per failure is written out without
/// first being built as a tree of JSON values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckReport<F = Value> {
    /// Always [`CHECK`].
    pub schema: String,
    pub verdict: Verdict,
    /// The verdict is `unsupported` because an element or a CTA could not
    /// be decided (not because a kernel's race check was).
    pub undecided: bool,
    /// The kernel (`reference` / `candidate`) whose race check decided the
    /// verdict; null when the outputs were compared.
    pub failing_kernel: Option<String>,
    pub kernels: Vec<Kernel>,
    /// The name of every input number (tensors, then symbolic scalars),
    /// as counterexamples use them.
    pub tensor_numbers: Vec<String>,
    pub symbolic_scalars: Vec<String>,
    /// Per output tensor: element counts and the first failing elements.
    pub outputs: Vec<Output<F>>,
    /// The reference's CTAs compared (null when nothing was compared).
    pub ctas: Option<Vec<[u32; 3]>>,
    pub candidate_ctas: Option<Vec<[u32; 3]>>,
    pub all_ctas_checked: Option<bool>,
    pub stats: Option<Stats>,
    /// Why a CTA could not be compared.
    pub problems: Vec<String>,
    pub reference: Reference,
    pub assumptions: Vec<String>,
    pub ctas_checked: String,
    pub scope_assumptions: Vec<String>,
    pub constant_recoveries: Vec<String>,
    pub idiom_assumptions: Vec<String>,
    pub binding_assumptions: Vec<String>,
    pub time_ms: f64,
}

/// What the candidate is compared against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Reference {
    Kernel,
    Formula {
        formula: String,
        file: Option<String>,
    },
}

/// One output tensor of a check (`F`: see [`CheckReport`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output<F = Value> {
    /// Its input number.
    pub tensor: u32,
    pub name: String,
    pub shape: Vec<u64>,
    /// The compared region (half-open ranges per dimension), if limited.
    pub compare_region: Option<Vec<[u64; 2]>>,
    /// Written elements outside the compared region.
    pub outside: u64,
    pub compared: u64,
    pub proved: u64,
    pub refuted: u64,
    pub unknown: u64,
    /// Proved because both kernels built the same term.
    pub identical: u64,
    /// Not decided: enough elements were refuted that the verdict was
    /// already final (`--max-refuted`; `--all-elements` decides all).
    #[serde(default)]
    pub not_decided: u64,
    pub failures: Vec<ElementFailure<F>>,
}

/// A refuted or undecided element (`F`: see [`CheckReport`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElementFailure<F = Value> {
    pub index: u64,
    pub coords: Vec<u64>,
    /// The reference's formula of the element.
    pub reference: String,
    pub candidate: String,
    /// `{"kind": "refuted" | "written-by-one" | "bits-differ" | "unknown"
    /// | "unsupported", …}` with the counterexample or the reason.
    pub failure: F,
    /// The store that wrote the reference kernel's value (absent for a
    /// formula reference, an element the reference does not write, or a
    /// writer not recorded). Optional, added within `/1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_store: Option<Store>,
    /// The store that wrote the candidate kernel's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_store: Option<Store>,
    /// The whole formulas, when `reference` or `candidate` was cut at the
    /// display width. Optional, added within `/1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<FullFormulas>,
    /// Where the two formulas first differ and which instructions built
    /// the differing sub-terms (a refuted or unknown element of a pair
    /// check, among the first `--show` failures of its tensor). Optional,
    /// added within `/1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<FirstDifference>,
}

/// The smallest sub-terms in which a failing element's two formulas part
/// ways (sums and products compared as multisets of operands), as the
/// human report's "first difference" line shows them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirstDifference {
    /// The reference's differing sub-terms (display text, cut at the
    /// human report's width); empty: the candidate has operands where the
    /// reference has none.
    pub reference: Vec<String>,
    pub candidate: Vec<String>,
    /// For each differing sub-term, the instruction that first built it
    /// in the CTA that wrote the element (a sub-term with no recorded
    /// origin, e.g. an input read directly, has none).
    pub built: Vec<BuiltBy>,
}

/// The instruction that first built a differing sub-term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltBy {
    /// `reference` or `candidate`.
    pub kernel: String,
    /// The sub-term, when its side has several.
    pub term: Option<String>,
    /// The `.entry` or `.func` holding the instruction, its index there,
    /// the decoded instruction, the PTX file and line, and the CUDA/Python
    /// position as in [`Store`].
    pub function: String,
    pub index: u32,
    pub instruction: String,
    pub ptx: String,
    pub ptx_line: Option<u32>,
    pub source: Option<String>,
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    pub source_text: Option<String>,
    /// `%ctaid` of the CTA whose run built it.
    pub cta: [u32; 3],
}

/// A failing element's whole formulas: as text when each fits
/// `--json-formula-chars`, else as one DAG with sharing (README "JSON
/// reports").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FullFormulas {
    /// The reference's formula text (null: not a kernel term — a formula
    /// reference, an unwritten element — or given as the DAG).
    pub reference: Option<String>,
    pub candidate: Option<String>,
    /// Both formulas as one DAG, when either text is too long.
    pub dag: Option<FormulaDag>,
    /// Why neither text nor DAG is given: the DAG would have taken the
    /// report past `--json-dag-nodes` (an optional field added to
    /// `ptxeq.check/1`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<String>,
}

/// Terms as a DAG: every node once, children before parents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormulaDag {
    /// `{"op": "add" | "mul" | "input" | "const" | …, "args": [ids of
    /// earlier nodes], …}`: leaves carry their `text`, operators what
    /// they need beside their operands (`width`, `name`, `cmp`).
    pub nodes: Vec<Value>,
    /// The id of the reference's root (null: not a kernel term).
    pub reference: Option<u32>,
    pub candidate: Option<u32>,
}

/// The store instruction that wrote an output element's final value, as
/// a kernel engineer finds it: the PTX instruction, its file and line,
/// the CUDA/Python line `.loc` names, and the thread and CTA that ran it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Store {
    /// The `.entry` or `.func` holding the instruction.
    pub function: String,
    /// Its index among that function's instructions (as `ptxeq ir`
    /// prints them).
    pub index: u32,
    /// The decoded instruction.
    pub instruction: String,
    /// The PTX file.
    pub ptx: String,
    /// 1-based line in the PTX file.
    pub ptx_line: Option<u32>,
    /// `file.cu:line:col` from `.loc`, when the PTX has line info.
    pub source: Option<String>,
    /// The `.file` path and line of the outermost `.loc` (the user's code
    /// when the store was inlined) and that line's text when the file is
    /// found on disk.
    pub source_file: Option<String>,
    pub source_line: Option<u32>,
    pub source_text: Option<String>,
    /// `%tid` of the thread that executed the store.
    pub thread: [u32; 3],
    /// `%ctaid` of its CTA.
    pub cta: [u32; 3],
}

/// Element decisions of a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub decided: u64,
    pub memo_hits: u64,
    /// Element pairs left undecided because the verdict was already final.
    #[serde(default)]
    pub not_decided: u64,
    /// The stop rule in force: deciding stops once this many elements are
    /// refuted (`null`: every element is decided, `--all-elements`).
    #[serde(default)]
    pub max_refuted: Option<u64>,
    /// Deciding stopped early: the refutations found make the verdict
    /// `not-equivalent` whatever the undecided elements are.
    #[serde(default)]
    pub stopped_early: bool,
    pub micros: u64,
}

/// The `ptxeq.race/1` report: a race check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaceReport {
    /// Always [`RACE`].
    pub schema: String,
    pub verdict: Verdict,
    pub kernels: Vec<Kernel>,
    pub assumptions: Vec<String>,
    pub grid_notes: Vec<String>,
    pub binding_assumptions: Vec<String>,
    pub time_ms: f64,
}

/// One kernel's race check (in both reports).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    /// `reference`, `candidate` or `kernel`.
    pub role: String,
    pub ptx: PathBuf,
    /// The entry's name as in the PTX (mangled for C++ kernels).
    pub entry: String,
    /// The demangled entry name, when it is a mangled C++ name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_demangled: Option<String>,
    pub verdict: Verdict,
    /// Why the kernel is outside the structured class, if it is.
    pub structured_problems: Option<Value>,
    pub idioms: Vec<Idiom>,
    pub ctas: Vec<Cta>,
    /// Conflicts between CTAs run together.
    pub cross_cta: Vec<Value>,
    pub launch: Launch,
}

/// A recognised math-library expansion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Idiom {
    pub function: String,
    pub form: String,
    pub first_instruction: u32,
    pub last_instruction: u32,
    pub assumptions: Vec<String>,
}

/// One CTA run: its counters and findings (each a `ptxeq_exec::Finding`
/// with `positions`: the instructions involved, resolved to PTX and source
/// lines).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cta {
    pub cta: [u32; 3],
    pub stats: Value,
    pub findings: Vec<Value>,
}

/// The launch a kernel ran with and the CTAs it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub block: Option<[u32; 3]>,
    pub grid: [u32; 3],
    pub dynamic_shared: u32,
    /// How the CTAs were chosen, in words.
    pub ctas_rule: String,
    pub ctas_run: Vec<[u32; 3]>,
    /// Whether the CTAs run cover every compared element.
    pub covers_compared: bool,
    pub assumptions: Vec<String>,
}

/// The `ptxeq.lift/1` report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiftReport {
    /// Always [`LIFT`].
    pub schema: String,
    pub kernels: Vec<LiftKernel>,
}

/// One kernel's lifted formulas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiftKernel {
    pub role: String,
    pub entry: String,
    pub ptx: String,
    /// Why nothing was lifted.
    pub problem: Option<String>,
    pub tensors: Vec<LiftTensor>,
    /// Every lifted formula, as spec text.
    pub formula: String,
}

/// One output tensor of a lift.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiftTensor {
    pub name: String,
    /// Elements the kernel writes in the CTAs run (each one proved).
    pub elements: u64,
    /// The verified formula, as spec text.
    pub formula: Option<String>,
    /// Why it did not lift.
    pub why_not: Option<String>,
    /// The generalised formula that did not verify (never a lift).
    pub candidate: Option<String>,
    /// The verified formula as a tree (`formula` is its text): an
    /// optional field added within `/1`; see README "Lifting a kernel".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ast: Option<ptxeq_formula::lifted::Def>,
    /// The verified structural formula when `formula` is a prelude form
    /// of it (`softmax(x[i0, :])[i1]`); `ast` is then this text's tree.
    /// An optional field added within `/1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structural: Option<String>,
}

/// Any report, told apart by its `"schema"`.
#[derive(Clone, Debug, PartialEq)]
pub enum AnyReport {
    Check(Box<CheckReport>),
    Race(RaceReport),
    Lift(LiftReport),
}

/// Reads a report of any schema: its `"schema"` word picks the type, and
/// a field the type does not know, or a missing one, is an error.
pub fn parse(json: &Value) -> Result<AnyReport, String> {
    let schema = json
        .get("schema")
        .and_then(Value::as_str)
        .ok_or("the report has no \"schema\" word")?;
    let err = |e: serde_json::Error| format!("not a {schema} report: {e}");
    match schema {
        CHECK => serde_json::from_value(json.clone())
            .map(|r| AnyReport::Check(Box::new(r)))
            .map_err(err),
        RACE => serde_json::from_value(json.clone())
            .map(AnyReport::Race)
            .map_err(err),
        LIFT => serde_json::from_value(json.clone())
            .map(AnyReport::Lift)
            .map_err(err),
        other => Err(format!(
            "unknown report schema `{other}` (this ptxeq reads {CHECK}, {RACE}, {LIFT})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lift_report_with_its_tree_round_trips() {
        let lift = serde_json::json!({
            "schema": LIFT,
            "kernels": [{
                "role": "candidate", "entry": "k", "ptx": "k.ptx", "problem": null,
                "formula": "y[i0] = sum(i1 in 0..i0 + 1, x[i1]);",
                "tensors": [{
                    "name": "y", "elements": 8,
                    "formula": "y[i0] = sum(i1 in 0..i0 + 1, x[i1]);",
                    "why_not": null, "candidate": null,
                    "ast": {
                        "tensor": "y", "vars": ["i0"],
                        "value": {
                            "kind": "reduce", "op": "sum",
                            "ranges": [{"var": "i1", "hi": {"constant": 1, "terms": [["i0", 1]]}}],
                            "guard": [],
                            "body": {"kind": "read", "tensor": "x",
                                     "index": [{"constant": 0, "terms": [["i1", 1]]}]},
                        },
                    },
                }],
            }],
        });
        let Ok(AnyReport::Lift(r)) = parse(&lift) else {
            panic!("not a lift report: {:?}", parse(&lift))
        };
        let t = &r.kernels[0].tensors[0];
        let ast = t.ast.as_ref().expect("a tree");
        assert_eq!(Some(ast.text()), t.formula);
        assert_eq!(serde_json::to_value(&r).expect("serialises"), lift);
        let mut bad = lift;
        bad["kernels"][0]["tensors"][0]["ast"]["value"]["kind"] = "lambda".into();
        assert!(parse(&bad).is_err());
    }

    #[test]
    fn unknown_fields_and_schemas_are_rejected() {
        let race = serde_json::json!({
            "schema": RACE, "verdict": "race-free", "kernels": [],
            "assumptions": [], "grid_notes": [], "binding_assumptions": [],
            "time_ms": 1.0,
        });
        assert!(matches!(parse(&race), Ok(AnyReport::Race(_))));
        let mut extra = race.clone();
        extra["surprise"] = Value::Bool(true);
        let e = parse(&extra).unwrap_err();
        assert!(e.contains("surprise"), "{e}");
        let mut bad = race.clone();
        bad["verdict"] = Value::from("maybe");
        assert!(parse(&bad).is_err());
        let mut other = race;
        other["schema"] = Value::from("ptxeq.race/9");
        assert!(parse(&other).unwrap_err().contains("unknown report schema"));
    }
}
