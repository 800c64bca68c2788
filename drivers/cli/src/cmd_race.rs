//! `ptxeq race`: single-kernel races, order dependence, deadlocks, barrier
//! divergence, out-of-bounds and uninitialised accesses.

use std::path::Path;

use ptxeq_check::{Checker, Mode, Outcome, Request, schema};
use ptxeq_db::{Database, KernelRaceReport};
use ptxeq_exec::{Finding, FindingKind, format_ranges};

use crate::exit::Exit;
use crate::positions::Resolver;
use crate::sarif::ReportFormat;
use crate::spec_args::{self, SpecFlagArgs};

/// Printed with every result: what "race-free" rests on.
pub use ptxeq_check::assumptions::RACE as ASSUMPTIONS;

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
    let checker = Checker::new();
    let db = checker.db();
    let Some(loaded) = spec_args::load_checked(db, target, args) else {
        return Exit::Invalid;
    };
    let outcome = checker.run(&Request::new(&loaded, Mode::Race));
    if let Some(why) = &outcome.invalid {
        eprintln!("error: {why}");
        return Exit::Invalid;
    }
    match format {
        ReportFormat::Human => print_human(db, &outcome),
        ReportFormat::Json => print_json(db, &outcome),
        ReportFormat::Sarif => outln!(
            "{}",
            serde_json::to_string_pretty(&crate::sarif::render(db, outcome.race_reports()))
                .unwrap_or_default()
        ),
    }
    Exit::of_verdict(outcome.verdict)
}

/// The human report of a race check (`ptxeq race`).
fn print_human(db: &Database, outcome: &Outcome) {
    let reports = outcome.race_reports();
    outln!("{}", outcome.verdict);
    print_kernels(db, reports);
    outln!();
    outln!("assumptions: {}", outcome.assumptions.join("; "));
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
    outln!("time: {:.1} ms", outcome.elapsed.as_secs_f64() * 1e3);
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
            crate::names::readable(&r.entry),
            r.ptx.display(),
            r.verdict.as_str()
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
        let all = r
            .ctas
            .iter()
            .flat_map(|(cta, fs, _)| fs.iter().map(move |f| (Some(*cta), f)))
            .chain(r.cross_cta.iter().map(|f| (None, f)));
        for group in group_findings(all) {
            let (cta, f) = group[0];
            print_finding(&res, f, cta);
            if group.len() > 1 {
                outln!("    {}", more_like_it(&group[1..]));
            }
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
    // The cluster shape bound (spec key or `.reqnctapercluster`).
    let cluster = r
        .input
        .as_ref()
        .and_then(|i| i.cluster)
        .or(p.launch.cluster)
        .map_or_else(String::new, |c| format!(", clusters {}", dims(c)));
    format!(
        "block {block}, grid {}{cluster}{shared}; {}; runs {}",
        dims(p.launch.grid),
        p.how,
        crate::cmd_check::cta_list(&p.ctas, 8)
    )
}

/// Findings that are the same bug seen again: the same kind at the same
/// instructions (with the same access kinds) in the same memory region,
/// in another thread or CTA. One missing barrier gives one entry per
/// conflicting thread pair and CTA; a reader needs one, with a count.
fn group_key(f: &Finding) -> impl PartialEq + '_ {
    (
        f.kind,
        f.accesses
            .iter()
            .map(|a| (a.instr, a.kind))
            .collect::<Vec<_>>(),
        f.accesses.is_empty().then_some(f.instr).flatten(),
        f.location.as_ref().map(|l| (&l.region, &l.space)),
        f.accesses.is_empty().then_some(f.message.as_str()),
    )
}

/// A finding with the CTA it was found in (`None`: between CTAs).
type Located<'a> = (Option<[u32; 3]>, &'a Finding);

/// `findings` in order, identical ones ([`group_key`]) gathered under
/// their first occurrence.
fn group_findings<'a>(findings: impl Iterator<Item = Located<'a>>) -> Vec<Vec<Located<'a>>> {
    let mut groups: Vec<Vec<Located<'a>>> = Vec::new();
    for (cta, f) in findings {
        match groups
            .iter_mut()
            .find(|g| group_key(g[0].1) == group_key(f))
        {
            Some(g) => g.push((cta, f)),
            None => groups.push(vec![(cta, f)]),
        }
    }
    groups
}

/// `… and 15 more like it (same instructions): in CTAs (1,0,0), (2,0,0)
/// and 1 more; threads 0-3, 64-67`.
fn more_like_it(rest: &[Located<'_>]) -> String {
    let mut ctas: Vec<[u32; 3]> = rest
        .iter()
        .flat_map(|(c, f)| {
            c.iter()
                .copied()
                .chain(f.accesses.iter().filter_map(|a| a.cta))
        })
        .collect();
    ctas.sort();
    ctas.dedup();
    let threads: Vec<u32> = rest
        .iter()
        .flat_map(|(_, f)| {
            f.accesses
                .iter()
                .map(|a| a.thread.linear)
                .chain(f.thread.map(|t| t.linear))
        })
        .collect();
    let mut out = format!("… and {} more like it (same instructions)", rest.len());
    let mut parts = Vec::new();
    if !ctas.is_empty() {
        parts.push(format!("in CTAs {}", crate::cmd_check::cta_list(&ctas, 4)));
    }
    if !threads.is_empty() {
        parts.push(format!(
            "threads {}",
            format_ranges(&ptxeq_exec::thread_ranges(threads))
        ));
    }
    if !parts.is_empty() {
        out.push_str(": ");
        out.push_str(&parts.join("; "));
    }
    out
}

/// The width in bytes of an instruction's scalar type (`ld.shared.f32` →
/// 4, `st.v2.f64` → 8), from its decoded text.
fn access_width(text: &str) -> Option<u64> {
    let op = text.split_whitespace().next()?;
    op.split('.').rev().find_map(|part| {
        let (kind, bits) = part.split_at(1.min(part.len()));
        let bits: u64 = bits.parse().ok()?;
        (matches!(kind, "f" | "b" | "u" | "s") && bits.is_multiple_of(8) && bits > 0)
            .then_some(bits / 8)
    })
}

/// A memory location as a kernel engineer reads it: the variable
/// demangled, the element coordinate first and the byte offset second.
/// PTX declares a CUDA `__shared__ float part_s[N]` as bytes (`.b8
/// part_s[4N]`), so a byte-typed variable's element is counted in units of
/// the access's own type (`part_s[1] as f32` for byte offset 4).
fn location_text(res: &Resolver<'_>, f: &Finding, loc: &ptxeq_exec::MemLocation) -> String {
    let region = crate::names::demangle_words(&loc.region);
    let instr = f.accesses.first().map(|a| a.instr).or(f.instr);
    let width = instr.and_then(|i| access_width(&res.resolve(i).text));
    match (loc.element, width) {
        (Some(e), Some(w))
            if e == loc.byte_offset && e > 0 && w > 1 && loc.byte_offset.is_multiple_of(w) =>
        {
            format!(
                "{region}[{}] as {w}-byte elements ({} byte offset {})",
                loc.byte_offset / w,
                loc.space,
                loc.byte_offset
            )
        }
        (Some(e), _) => format!(
            "{region}[{e}] ({} byte offset {})",
            loc.space, loc.byte_offset
        ),
        (None, _) => format!("{region} ({} byte offset {})", loc.space, loc.byte_offset),
    }
}

fn print_finding(res: &Resolver<'_>, f: &Finding, cta: Option<[u32; 3]>) {
    // The verdict word of the finding's kind; the kinds that only make a
    // run undecided say what they are.
    let word = match f.kind {
        FindingKind::ResourceLimit => "resource limit",
        FindingKind::Trap => "trap",
        FindingKind::DivisionByZero => "division by zero",
        k => k.verdict().as_str(),
    };
    let at = cta
        .filter(|c| *c != [0, 0, 0])
        .map(|c| format!(" [CTA ({},{},{})]", c[0], c[1], c[2]))
        .unwrap_or_default();
    // Messages that already start with their kind word are not prefixed twice.
    let message = crate::names::demangle_words(&f.message);
    if message.starts_with(word) {
        outln!("  {message}{at}");
    } else {
        outln!("  {word}{at}: {message}");
    }
    if let Some(loc) = &f.location {
        outln!("    memory: {}", location_text(res, f, loc));
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

fn print_json(db: &Database, outcome: &Outcome) {
    let out = report_json(db, outcome);
    outln!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
}

/// The `ptxeq.race/1` JSON report (`--format json`; also what the Python
/// bindings convert into a `CheckResult`).
pub fn report_json(db: &Database, outcome: &Outcome) -> serde_json::Value {
    let reports = outcome.race_reports();
    let report = schema::RaceReport {
        schema: schema::RACE.to_string(),
        verdict: outcome.verdict,
        kernels: kernels_json(db, reports),
        assumptions: outcome.assumptions.iter().map(|a| a.to_string()).collect(),
        grid_notes: grid_notes(reports),
        binding_assumptions: binding_assumptions(reports),
        time_ms: outcome.elapsed.as_secs_f64() * 1e3,
    };
    serde_json::to_value(report).unwrap_or_default()
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
pub fn kernels_json(db: &Database, reports: &[KernelRaceReport]) -> Vec<schema::Kernel> {
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
            schema::Kernel {
                role: r.slot.word().to_string(),
                ptx: r.ptx.clone(),
                entry: r.entry.clone(),
                entry_demangled: crate::names::demangled(&r.entry),
                verdict: r.verdict,
                structured_problems: r
                    .structured
                    .as_ref()
                    .map(|s| serde_json::to_value(&s.problems).unwrap_or_default()),
                idioms: r
                    .idioms
                    .iter()
                    .map(|(func, rec)| schema::Idiom {
                        function: func.clone(),
                        form: rec.form.clone(),
                        first_instruction: rec.first,
                        last_instruction: rec.last,
                        assumptions: rec.assumptions.clone(),
                    })
                    .collect(),
                ctas: r
                    .ctas
                    .iter()
                    .map(|(c, f, s)| schema::Cta {
                        cta: *c,
                        stats: serde_json::to_value(s).unwrap_or_default(),
                        findings: f.iter().map(finding).collect(),
                    })
                    .collect(),
                cross_cta: r.cross_cta.iter().map(finding).collect(),
                launch: schema::Launch {
                    block: r.input.as_ref().map(|i| i.block).or(r.plan.launch.block),
                    grid: r.plan.launch.grid,
                    dynamic_shared: r.plan.launch.dynamic_shared,
                    ctas_rule: r.plan.how.clone(),
                    ctas_run: r.plan.ctas.clone(),
                    covers_compared: r.plan.covers,
                    assumptions: r.plan.assumptions(),
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod render_tests {
    use super::{access_width, group_findings, more_like_it};
    use ptxeq_exec::{AccessKind, AccessRef, Finding, FindingKind, InstrRef, ThreadRef};

    fn race(cta: [u32; 3], t: u32, instrs: [u32; 2]) -> Finding {
        let access = |linear: u32, index: u32, kind| AccessRef {
            thread: ThreadRef {
                tid: [linear, 0, 0],
                linear,
            },
            instr: InstrRef { func: 0, index },
            kind,
            cta: Some(cta),
        };
        Finding {
            kind: FindingKind::Race,
            message: format!("data race on s[{t}]"),
            reason: String::new(),
            thread: None,
            instr: None,
            location: None,
            accesses: vec![
                access(t, instrs[0], AccessKind::Write),
                access(t + 1, instrs[1], AccessKind::Read),
            ],
            waiting: Vec::new(),
        }
    }

    /// One missing barrier seen by 4 thread pairs in each of 4 CTAs is one
    /// entry with a count; a race at other instructions stays its own.
    #[test]
    fn identical_races_across_ctas_and_threads_are_grouped() {
        let mut all = Vec::new();
        for c in 0..4u32 {
            for t in [0, 2, 4, 6] {
                all.push(([c, 0, 0], race([c, 0, 0], t, [14, 19])));
            }
        }
        all.push(([0, 0, 0], race([0, 0, 0], 8, [20, 21])));
        let groups = group_findings(all.iter().map(|(c, f)| (Some(*c), f)));
        assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [16, 1]);
        assert_eq!(
            more_like_it(&groups[0][1..]),
            "… and 15 more like it (same instructions): in CTAs (0,0,0), (1,0,0), (2,0,0), (3,0,0); threads t0..t7"
        );
    }

    #[test]
    fn access_widths_from_instruction_text() {
        assert_eq!(access_width("ld.shared.f32 %f2, [%r4+4]"), Some(4));
        assert_eq!(
            access_width("st.shared.v2.f64 [%r1], {%fd1, %fd2}"),
            Some(8)
        );
        assert_eq!(access_width("ld.global.nc.u8 %rs1, [%rd2]"), Some(1));
        assert_eq!(access_width("bar.sync 0"), None);
    }
}
