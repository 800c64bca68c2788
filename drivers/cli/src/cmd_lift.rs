//! `ptxeq lift`: each output tensor of a kernel as one verified formula in
//! the formula language (paste it into a spec as `[reference] formula`).

use std::path::Path;

use ptxeq_db::{Database, FormulaOptions, LiftReport};
use serde_json::json;

use crate::exit::Exit;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, SpecFlagArgs};

/// JSON report schema of `ptxeq lift`.
pub const SCHEMA: &str = "ptxeq.lift/1";

pub fn run(target: &Path, args: &SpecFlagArgs, format: ReportFormat) -> Exit {
    let db = Database::default();
    let Some(loaded) = spec_args::load_checked(&db, target, args) else {
        return Exit::Invalid;
    };
    let reports: Vec<LiftReport> = loaded
        .kernels
        .iter()
        .map(|&(slot, file)| {
            ptxeq_db::lift(&db, loaded.spec, slot, file, FormulaOptions::default())
        })
        .collect();
    match format {
        ReportFormat::Json => {
            let out = report_json(&reports);
            outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
        _ => {
            for r in &reports {
                outln!(
                    "// {} `{}` ({})",
                    r.kernel.slot.word(),
                    r.kernel.entry,
                    r.kernel.ptx.display()
                );
                if let Some(p) = &r.problem {
                    outln!("// not lifted: {p}");
                    continue;
                }
                if r.tensors.is_empty() {
                    outln!("// the kernel writes no output element in the CTAs run");
                }
                for t in &r.tensors {
                    match (&t.formula, &t.why_not) {
                        (Some(f), _) => {
                            outln!(
                                "// {}: verified at all {} element(s) written",
                                t.name,
                                t.elements
                            );
                            outln!("{f}");
                        }
                        (None, why) => {
                            outln!(
                                "// {}: not lifted: {}",
                                t.name,
                                why.as_deref().unwrap_or("no formula found")
                            );
                            if let Some(c) = &t.candidate {
                                outln!("//   generalised (unverified): {c}");
                            }
                        }
                    }
                }
            }
        }
    }
    let all = reports.iter().all(|r| {
        r.problem.is_none()
            && !r.tensors.is_empty()
            && r.tensors.iter().all(|t| t.formula.is_some())
    });
    let any_problem = reports.iter().any(|r| {
        r.problem
            .as_deref()
            .is_some_and(|p| p.starts_with("the spec does not fit"))
    });
    if any_problem {
        Exit::Invalid
    } else if all {
        Exit::Ok
    } else {
        Exit::Undecided
    }
}

/// The `ptxeq.lift/1` JSON report (`--format json`; also what the Python
/// bindings return from `ptxeq.lift`).
pub fn report_json(reports: &[LiftReport]) -> serde_json::Value {
    let kernels: Vec<_> = reports
        .iter()
        .map(|r| {
            json!({
                "role": r.kernel.slot.word(),
                "entry": r.kernel.entry,
                "ptx": r.kernel.ptx.display().to_string(),
                "problem": r.problem,
                "tensors": r.tensors,
                "formula": ptxeq_db::lifted_text(r),
            })
        })
        .collect();
    json!({ "schema": SCHEMA, "kernels": kernels })
}
