//! `ptxeq lift`: each output tensor of a kernel as one verified formula in
//! the formula language (paste it into a spec as `[reference] formula`).

use std::path::Path;

use ptxeq_check::{Checker, Mode, Report, Request, schema};
use ptxeq_db::LiftReport;

use crate::exit::Exit;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, SpecFlagArgs};

/// JSON report schema of `ptxeq lift`.
pub use ptxeq_check::schema::LIFT as SCHEMA;

pub fn run(target: &Path, args: &SpecFlagArgs, format: ReportFormat) -> Exit {
    let checker = Checker::new();
    let Some(loaded) = spec_args::load_checked(checker.db(), target, args) else {
        return Exit::Invalid;
    };
    let outcome = checker.run(&Request::new(&loaded, Mode::Lift));
    let Report::Lift(reports) = &outcome.report else {
        return Exit::of_verdict(outcome.verdict);
    };
    match format {
        ReportFormat::Json => {
            let out = report_json(reports);
            outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        }
        _ => {
            for r in reports {
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
                            if let Some(st) = &t.structural {
                                outln!("// {}: written out (verified too):", t.name);
                                for line in st.lines() {
                                    outln!("//   {line}");
                                }
                            }
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
    Exit::of_verdict(outcome.verdict)
}

/// The `ptxeq.lift/1` JSON report (`--format json`; also what the Python
/// bindings return from `ptxeq.lift`).
pub fn report_json(reports: &[LiftReport]) -> serde_json::Value {
    let report = schema::LiftReport {
        schema: SCHEMA.to_string(),
        kernels: reports
            .iter()
            .map(|r| schema::LiftKernel {
                role: r.kernel.slot.word().to_string(),
                entry: r.kernel.entry.clone(),
                ptx: r.kernel.ptx.display().to_string(),
                problem: r.problem.clone(),
                tensors: r
                    .tensors
                    .iter()
                    .map(|t| schema::LiftTensor {
                        name: t.name.clone(),
                        elements: t.elements,
                        formula: t.formula.clone(),
                        why_not: t.why_not.clone(),
                        candidate: t.candidate.clone(),
                        ast: t.ast.clone(),
                        structural: t.structural.clone(),
                    })
                    .collect(),
                formula: ptxeq_db::lifted_text(r),
            })
            .collect(),
    };
    serde_json::to_value(report).unwrap_or_default()
}
