//! The facts about a PTX file that the consistency checks need, extracted
//! from the syntax tree once. Keeping the checks on this small summary
//! (rather than on the AST) makes them plain functions that are easy to
//! test, and isolates this crate from changes in the typed AST.

use ptxeq_syntax::{LineIndex, parse};
use serde::Serialize;

/// One syntax error, with its 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PtxError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// One kernel param as declared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamInfo {
    pub name: String,
    /// The type without the dot (`u64`, `b32`, `f32`); empty when missing.
    pub ty: String,
    /// Declared with `.ptr`.
    pub is_ptr: bool,
    /// A by-value array (`.b8 p[16]`): a struct passed by value.
    pub is_array: bool,
}

/// One `.entry` or `.func`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionInfo {
    pub name: String,
    pub is_entry: bool,
    pub params: Vec<ParamInfo>,
    /// `.reqntid` extents as written.
    pub reqntid: Option<Vec<u64>>,
    /// `.maxntid` extents as written.
    pub maxntid: Option<Vec<u64>>,
}

/// What a PTX file declares, and its syntax errors.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PtxSummary {
    pub errors: Vec<PtxError>,
    pub functions: Vec<FunctionInfo>,
}

impl PtxSummary {
    /// The `.entry` functions.
    pub fn entries(&self) -> impl Iterator<Item = &FunctionInfo> {
        self.functions.iter().filter(|f| f.is_entry)
    }
}

/// Parses `text` and summarises it.
pub fn summarize(text: &str) -> PtxSummary {
    let parsed = parse(text);
    let index = LineIndex::new(text);
    let errors = parsed
        .errors()
        .iter()
        .map(|e| {
            let (line, col) = index.line_col(e.range.start());
            PtxError {
                line,
                col,
                message: e.message.clone(),
            }
        })
        .collect();
    let functions = parsed
        .tree()
        .functions()
        .map(|f| {
            let mut reqntid = None;
            let mut maxntid = None;
            for (name, values) in f.perf_directives() {
                match name.trim_start_matches('.') {
                    "reqntid" => reqntid = Some(values),
                    "maxntid" => maxntid = Some(values),
                    _ => {}
                }
            }
            FunctionInfo {
                name: f.name().unwrap_or_default(),
                is_entry: f.is_entry(),
                params: f
                    .params()
                    .iter()
                    .map(|p| ParamInfo {
                        name: p.name().unwrap_or_default(),
                        ty: p
                            .ty()
                            .unwrap_or_default()
                            .trim_start_matches('.')
                            .to_owned(),
                        is_ptr: p.is_ptr(),
                        is_array: !p.array_dims().is_empty(),
                    })
                    .collect(),
                reqntid,
                maxntid,
            }
        })
        .collect();
    PtxSummary { errors, functions }
}
