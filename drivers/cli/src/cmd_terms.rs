//! `ptxeq terms`: the output terms of a kernel, one line per element.

use std::path::Path;

use ptxeq_check::{Checker, Mode, Request, Verdict};
use ptxeq_db::{CtaKey, KernelSlot};
use ptxeq_exec::OutputValue;
use ptxeq_terms::Terms;

use crate::exit::Exit;
use crate::spec_args::{self, SpecFlagArgs};

pub fn run(target: &Path, args: &SpecFlagArgs, limit: usize, width: usize) -> Exit {
    let checker = Checker::new();
    let db = checker.db();
    let Some(loaded) = spec_args::load_checked(db, target, args) else {
        return Exit::Invalid;
    };
    // Terms of a racy or stuck run mean nothing: race-check first.
    let outcome = checker.run(&Request::new(&loaded, Mode::Terms));
    if let Some(why) = &outcome.invalid {
        eprintln!("error: {why}");
        return Exit::Invalid;
    }
    let reports = outcome.race_reports();
    if outcome.verdict != Verdict::RaceFree
        && let Some(bad) = reports.iter().find(|r| Some(r.slot) == outcome.decided_by)
    {
        eprintln!(
            "error: {} `{}` is not race-free ({}); run `ptxeq race` for the details",
            bad.slot.word(),
            bad.entry,
            outcome.verdict
        );
        return Exit::of_verdict(outcome.verdict);
    }
    let (tensor_names, first_symbol, shapes) = match reports.iter().find_map(|r| r.input.as_ref()) {
        Some(i) => (
            i.input_names(),
            i.first_symbol(),
            i.tensors.iter().map(|t| t.shape.clone()).collect(),
        ),
        None => {
            let names: Vec<String> = loaded.spec.spec(db).tensors.keys().cloned().collect();
            let n = names.len() as u32;
            (names, n, Vec::new())
        }
    };
    for r in reports {
        for (cta, _, _) in &r.ctas {
            let k = KernelSlot::new(db, loaded.spec, r.slot, r.file);
            let key = CtaKey::new(db, k, *cta);
            let Some(state) = ptxeq_db::symbolic(db, key) else {
                continue;
            };
            outln!(
                "// {} `{}`, CTA ({},{},{})",
                r.slot.word(),
                r.entry,
                cta[0],
                cta[1],
                cta[2]
            );
            for f in &state.findings {
                outln!("//   {}", f.message);
            }
            let mut terms = Terms::new();
            terms.set_tensor_names(tensor_names.clone());
            terms.set_tensor_shapes(shapes.clone());
            terms.set_scalar_inputs(first_symbol);
            let roots = terms.import(&state.graph);
            for t in &state.outputs {
                let total = t.elements.len();
                for (i, v) in t.elements.iter().take(limit) {
                    match v {
                        OutputValue::Data(root) => match roots.get(*root as usize) {
                            Some(&id) => {
                                outln!("{}[{i}] = {}", t.name, terms.display_limited(id, width))
                            }
                            None => outln!("{}[{i}] = <missing term>", t.name),
                        },
                        OutputValue::Bits(b) => outln!("{}[{i}] = bits {b:#x}", t.name),
                        OutputValue::Unsupported(why) => {
                            outln!("{}[{i}] = unsupported: {why}", t.name)
                        }
                    }
                }
                if total > limit {
                    outln!(
                        "... {} more element(s) of {} (--limit)",
                        total - limit,
                        t.name
                    );
                }
            }
        }
    }
    Exit::Ok
}
