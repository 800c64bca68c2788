//! `ptxeq race`: single-kernel races, order dependence, deadlocks, barrier
//! divergence, out-of-bounds and uninitialised accesses.

use std::path::Path;
use std::time::Instant;

use ptxeq_db::{Database, KernelRaceReport, RaceVerdict};
use ptxeq_exec::{Finding, FindingKind, format_ranges};
use serde_json::json;

use crate::exit::Exit;
use crate::positions::Resolver;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, SpecFlagArgs};

/// Printed with every result: what "race-free" rests on.
pub const ASSUMPTIONS: &[&str] = &[
    "distinct pointer params do not alias",
    "all thread schedules: races are judged on one schedule with vector clocks (docs/semantics.md §10); a race-free run is schedule-independent",
    "exited threads count as arrived at barriers that expect them",
    "only the CTAs named by the spec are run (ctas = first | all | auto | list, per kernel); several CTAs run over one global memory and their accesses are judged like those of threads of one CTA, ordered only by release/acquire through a ticket atomic (docs/semantics.md)",
    "memory model (docs/semantics.md): atomics and .relaxed/.acquire/.release accesses of a common scope do not race with each other, plain and .volatile accesses race with everything unordered",
];

/// What several CTAs run together rest on (the grid-level exploration),
/// per kernel.
pub fn grid_notes(reports: &[KernelRaceReport]) -> Vec<String> {
    reports
        .iter()
        .flat_map(|r| {
            r.grid_notes
                .iter()
                .map(move |n| format!("{}: {n}", r.slot.word()))
        })
        .collect()
}

pub fn run(target: &Path, args: &SpecFlagArgs, format: ReportFormat) -> Exit {
    let db = Database::default();
    let Some(loaded) = spec_args::load_checked(&db, target, args) else {
        return Exit::Invalid;
    };
    let start = Instant::now();
    let reports = ptxeq_db::race_check(&db, loaded.spec, &loaded.kernels);
    let elapsed = start.elapsed();
    if let Some(e) = reports.iter().find_map(|r| r.input_error.as_ref()) {
        eprintln!("error: the spec does not fit the kernel: {e}");
        return Exit::Invalid;
    }
    let verdict = RaceVerdict::most_telling(reports.iter().map(|r| r.verdict))
        .unwrap_or(RaceVerdict::Unsupported);
    match format {
        ReportFormat::Human => print_human(&db, &reports, verdict, elapsed),
        ReportFormat::Json => print_json(&db, &reports, verdict, elapsed),
        ReportFormat::Sarif => outln!(
            "{}",
            serde_json::to_string_pretty(&crate::sarif::render(&db, &reports)).unwrap_or_default()
        ),
    }
    Exit::of_class(verdict.exit_class())
}

fn print_human(
    db: &Database,
    reports: &[KernelRaceReport],
    verdict: RaceVerdict,
    elapsed: std::time::Duration,
) {
    outln!("{}", verdict.word());
    print_kernels(db, reports);
    outln!();
    outln!("assumptions: {}", ASSUMPTIONS.join("; "));
    for r in reports {
        for a in r.plan.assumptions() {
            outln!("  {}: {a}", r.slot.word());
        }
    }
    for a in idiom_assumptions(reports) {
        outln!("  math idiom: {a}");
    }
    for n in grid_notes(reports) {
        outln!("  grid: {n}");
    }
    for a in binding_assumptions(reports) {
        outln!("  binding: {a}");
    }
    outln!("time: {:.1} ms", elapsed.as_secs_f64() * 1e3);
}

/// Each kernel's race verdict, its findings with positions, and counters
/// (shared with `ptxeq check`, which reports a racy kernel this way).
pub fn print_kernels(db: &Database, reports: &[KernelRaceReport]) {
    for r in reports {
        let res = Resolver::new(db, r.file, r.input.as_deref());
        outln!();
        outln!(
            "{} `{}` ({}): {}",
            r.slot.word(),
            r.entry,
            r.ptx.display(),
            r.verdict.word()
        );
        if let Some(s) = &r.structured {
            for p in &s.problems {
                let pos = res.resolve_named(&p.function, p.instr);
                outln!("  unsupported: {}", p.message);
                outln!("    at {pos}");
            }
        }
        outln!("  launch: {}", launch_line(r));
        for (form, lines) in idiom_summary(&res, r) {
            outln!("  math idiom recognised: {form} at {lines}");
        }
        for (cta, findings, _) in &r.ctas {
            for f in findings {
                print_finding(&res, f, Some(*cta));
            }
        }
        for f in &r.cross_cta {
            print_finding(&res, f, None);
        }
        let threads: u64 = r.ctas.iter().map(|(_, _, s)| u64::from(s.threads)).sum();
        let instrs: u64 = r.ctas.iter().map(|(_, _, s)| s.instructions_executed).sum();
        let bars: u64 = r.ctas.iter().map(|(_, _, s)| s.barriers_completed).sum();
        if !r.ctas.is_empty() {
            outln!(
                "  checked {} CTA(s): {threads} threads, {instrs} thread-instructions, {bars} barriers completed",
                r.ctas.len()
            );
        }
    }
}

/// A kernel's launch and the CTAs it runs, in words: `block 64x1x1, grid
/// 4x4x1; ctas = "auto": 1 of 16 CTAs write ... ; runs (0,0,0)`.
fn launch_line(r: &KernelRaceReport) -> String {
    let p = &r.plan;
    let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
    let block = r
        .input
        .as_ref()
        .map(|i| i.block)
        .or(p.launch.block)
        .map_or_else(|| "?".to_owned(), dims);
    let shared = if p.launch.dynamic_shared > 0 {
        format!(
            ", {} bytes of dynamic shared memory",
            p.launch.dynamic_shared
        )
    } else {
        String::new()
    };
    format!(
        "block {block}, grid {}{shared}; {}; runs {}",
        dims(p.launch.grid),
        p.how,
        crate::cmd_check::cta_list(&p.ctas, 8)
    )
}

fn print_finding(res: &Resolver<'_>, f: &Finding, cta: Option<[u32; 3]>) {
    let word = match f.kind {
        FindingKind::Race => "race",
        FindingKind::OrderDependent => "order-dependent",
        FindingKind::Deadlock => "deadlock",
        FindingKind::Divergence => "divergence",
        FindingKind::OutOfBounds => "out-of-bounds",
        FindingKind::Uninitialised => "uninitialised",
        FindingKind::Unsupported => "unsupported",
        FindingKind::ResourceLimit => "resource limit",
        FindingKind::Trap => "trap",
        FindingKind::DivisionByZero => "division by zero",
    };
    let at = cta
        .filter(|c| *c != [0, 0, 0])
        .map(|c| format!(" [CTA ({},{},{})]", c[0], c[1], c[2]))
        .unwrap_or_default();
    // Messages that already start with their kind word are not prefixed twice.
    if f.message.starts_with(word) {
        outln!("  {}{at}", f.message);
    } else {
        outln!("  {word}{at}: {}", f.message);
    }
    if let Some(loc) = &f.location {
        outln!("    memory: {loc}");
    }
    for a in &f.accesses {
        let cta = a
            .cta
            .map(|c| format!(" of CTA ({},{},{})", c[0], c[1], c[2]))
            .unwrap_or_default();
        let pos = res.resolve(a.instr);
        outln!("    {:<6} by {}{cta} at {pos}", a.kind.word(), a.thread);
        print_source(res, &pos);
    }
    if f.accesses.is_empty()
        && let Some(i) = f.instr
    {
        let who = f.thread.map(|t| format!(" by {t}")).unwrap_or_default();
        let pos = res.resolve(i);
        outln!("    at {pos}{who}");
        print_source(res, &pos);
    }
    for w in &f.waiting {
        outln!(
            "    waiting on {}: threads {} at {} ({} of {} arrived)",
            w.what,
            format_ranges(&w.threads),
            res.resolve(w.instr),
            w.arrived,
            w.expected
        );
    }
}

/// The CUDA/Python line under a finding's position, when the source file
/// is on disk.
fn print_source(res: &Resolver<'_>, pos: &crate::positions::Position) {
    if let Some(line) = res.source_excerpt(pos) {
        outln!("           {line}");
    }
}

fn print_json(
    db: &Database,
    reports: &[KernelRaceReport],
    verdict: RaceVerdict,
    elapsed: std::time::Duration,
) {
    let out = report_json(db, reports, verdict, elapsed);
    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}

/// The `ptxeq.race/1` JSON report (`--format json`; also what the Python
/// bindings convert into a `CheckResult`).
pub fn report_json(
    db: &Database,
    reports: &[KernelRaceReport],
    verdict: RaceVerdict,
    elapsed: std::time::Duration,
) -> serde_json::Value {
    json!({
        "schema": "ptxeq.race/1",
        "verdict": verdict.word(),
        "kernels": kernels_json(db, reports),
        "assumptions": ASSUMPTIONS,
        "grid_notes": grid_notes(reports),
        "binding_assumptions": binding_assumptions(reports),
        "time_ms": elapsed.as_secs_f64() * 1e3,
    })
}

/// Recognised math idioms grouped by function and form: `(what, where)`,
/// e.g. `("expf (nvcc, default flags) ×2 in `k`", "ptx:41-58, ptx:60-77")`.
pub fn idiom_summary(res: &Resolver<'_>, r: &KernelRaceReport) -> Vec<(String, String)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for (func, rec) in &r.idioms {
        let key = format!("{} in `{func}`", rec.form);
        let range = if *func == r.entry {
            let a = res
                .resolve(ptxeq_exec::InstrRef::kernel(rec.first))
                .ptx_line;
            let b = res.resolve(ptxeq_exec::InstrRef::kernel(rec.last)).ptx_line;
            match (a, b) {
                (Some(a), Some(b)) => format!("ptx:{a}-{b}"),
                _ => format!("instructions {}-{}", rec.first, rec.last),
            }
        } else {
            format!("instructions {}-{}", rec.first, rec.last)
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(range),
            None => groups.push((key, vec![range])),
        }
    }
    groups
        .into_iter()
        .map(|(k, v)| {
            let shown: Vec<&str> = v.iter().take(4).map(String::as_str).collect();
            let more = if v.len() > 4 {
                format!(" and {} more", v.len() - 4)
            } else {
                String::new()
            };
            (
                format!("{k} ×{}", v.len()),
                format!("{}{more}", shown.join(", ")),
            )
        })
        .collect()
}

/// What the recognised idioms of `reports` assume (deduplicated).
pub fn idiom_assumptions(reports: &[KernelRaceReport]) -> Vec<String> {
    let mut a: Vec<String> = reports
        .iter()
        .flat_map(|r| r.idioms.iter())
        .flat_map(|(_, rec)| rec.assumptions.iter().map(|x| format!("{}: {x}", rec.form)))
        .collect();
    a.sort();
    a.dedup();
    a
}

/// What the spec's bindings (`values`, `[functions]`, `[globals]`) and
/// the module variables read as their initialisers make the verdict rest
/// on (deduplicated, in kernel order).
pub fn binding_assumptions(reports: &[KernelRaceReport]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in reports {
        let Some(input) = &r.input else { continue };
        let vars = ptxeq_exec::initialised_vars_read(&input.kernel, &input.funcs, &input.bindings);
        let lines = input
            .bindings
            .assumptions
            .iter()
            .cloned()
            .chain(vars.into_iter().map(|(name, space)| {
            format!(
                "module variable `{name}` (.{space}) holds its initialiser at launch (the host may \
                     overwrite it, e.g. with cudaMemcpyToSymbol; give it values or declare it an \
                     input in [globals])"
            )
        }));
        for l in lines {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// The JSON form of each kernel's race report (shared with `ptxeq check`).
pub fn kernels_json(db: &Database, reports: &[KernelRaceReport]) -> Vec<serde_json::Value> {
    reports
        .iter()
        .map(|r| {
            let res = Resolver::new(db, r.file, r.input.as_deref());
            let finding = |f: &Finding| {
                let mut v = serde_json::to_value(f).unwrap_or_default();
                let positions: Vec<_> = f
                    .accesses
                    .iter()
                    .map(|a| res.resolve(a.instr))
                    .chain(
                        f.instr
                            .filter(|_| f.accesses.is_empty())
                            .map(|i| res.resolve(i)),
                    )
                    .chain(f.waiting.iter().map(|w| res.resolve(w.instr)))
                    .collect();
                v["positions"] = serde_json::to_value(positions).unwrap_or_default();
                v
            };
            json!({
                "role": r.slot.word(),
                "ptx": r.ptx,
                "entry": r.entry,
                "verdict": r.verdict.word(),
                "structured_problems": r.structured.as_ref().map(|s| &s.problems),
                "idioms": r.idioms.iter().map(|(func, rec)| json!({
                    "function": func,
                    "form": rec.form,
                    "first_instruction": rec.first,
                    "last_instruction": rec.last,
                    "assumptions": rec.assumptions,
                })).collect::<Vec<_>>(),
                "ctas": r.ctas.iter().map(|(c, f, s)| json!({
                    "cta": c,
                    "stats": s,
                    "findings": f.iter().map(finding).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "cross_cta": r.cross_cta.iter().map(finding).collect::<Vec<_>>(),
                "launch": json!({
                    "block": r.input.as_ref().map(|i| i.block).or(r.plan.launch.block),
                    "grid": r.plan.launch.grid,
                    "dynamic_shared": r.plan.launch.dynamic_shared,
                    "ctas_rule": r.plan.how,
                    "ctas_run": r.plan.ctas,
                    "covers_compared": r.plan.covers,
                    "assumptions": r.plan.assumptions(),
                }),
            })
        })
        .collect()
}
