//! The corpus through `unroll`: every case whose expected verdict is about
//! races, deadlocks, divergence, bounds, initialisation or unsupported
//! constructs must reach it; every case expected `equivalent`,
//! `not-equivalent` or `race-free` must produce no such finding
//! (unsupported constructs are allowed there: they are other issues').
//!
//! One test per case, named by its path. Pending cases run too but only
//! report (kind `pending`). `PTXEQ_UNROLL_VERBOSE=1` prints each case's
//! findings, `PTXEQ_UNROLL_SUMMARY=1` one line per passing case.

use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use ptxeq_exec::{Finding, FindingKind};
use ptxeq_spec::{CheckSpec, Status, Verdict};
use ptxeq_unroll::{select_ctas, unroll_ctas};

fn corpus_root() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    root.canonicalize().unwrap_or(root)
}

fn cases(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "check.toml")
        .map(|e| e.path().to_path_buf())
        .collect();
    v.sort();
    v
}

/// All findings of all kernels of a case (with the kernel role).
fn run_case(spec_path: &Path) -> Result<(CheckSpec, Vec<(String, Finding)>), String> {
    let spec = CheckSpec::load(spec_path).map_err(|e| format!("spec: {e}"))?;
    let mut all = Vec::new();
    for (role, kref) in spec.kernels.iter() {
        let text = std::fs::read_to_string(&kref.ptx)
            .map_err(|e| format!("{}: {e}", kref.ptx.display()))?;
        let lowered = ptxeq_lower::lower_source(&text);
        let input = ptxeq_bind::cta_input(&spec, kref, &lowered.module)
            .map_err(|e| format!("{role}: {e}"))?;
        // The db refuses a launch over the CTA bound before listing its
        // CTAs (`ptxeq_db::cta_limit_finding`); this walker sits below the
        // db, so it applies the same bound rather than list a huge grid.
        let asked = kref.launch.asked_ctas();
        if asked > spec.limits.max_ctas {
            all.push((
                role.to_string(),
                Finding {
                    kind: FindingKind::ResourceLimit,
                    message: format!(
                        "CTA limit: {asked} CTAs over the limit of {}",
                        spec.limits.max_ctas
                    ),
                    reason: "CTA limit".into(),
                    thread: None,
                    instr: None,
                    location: None,
                    accesses: Vec::new(),
                    waiting: Vec::new(),
                },
            ));
            continue;
        }
        let ctas = select_ctas(&kref.launch.ctas, input.grid);
        let (runs, cross) = unroll_ctas(&input, &ctas);
        for r in runs {
            for f in r.findings {
                all.push((role.to_string(), f));
            }
        }
        for f in cross {
            all.push((role.to_string(), f));
        }
    }
    Ok((spec, all))
}

fn is_bug(k: FindingKind) -> bool {
    matches!(
        k,
        FindingKind::Race
            | FindingKind::OrderDependent
            | FindingKind::Deadlock
            | FindingKind::Divergence
            | FindingKind::OutOfBounds
            | FindingKind::Uninitialised
    )
}

fn judge(spec: &CheckSpec, findings: &[(String, Finding)]) -> Result<String, String> {
    let Some(expect) = &spec.expect else {
        return Err("no [expect]".into());
    };
    let listing = || {
        findings
            .iter()
            .map(|(r, f)| format!("  [{r}] {:?}: {}", f.kind, f.message))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let has_word = |w: &str| {
        findings
            .iter()
            .any(|(_, f)| f.kind.verdict_word() == w && is_bug(f.kind))
    };
    match expect.verdict {
        Verdict::Race
        | Verdict::OrderDependent
        | Verdict::Deadlock
        | Verdict::Divergence
        | Verdict::OutOfBounds
        | Verdict::Uninitialised => {
            let w = expect.verdict.as_str();
            if has_word(w) {
                Ok(w.to_string())
            } else {
                Err(format!("expected {w}, findings:\n{}", listing()))
            }
        }
        Verdict::Unsupported => {
            let want = expect.reason.clone().unwrap_or_default().to_lowercase();
            // A resource limit (step budget, memory state) is undecided
            // too: `unsupported` in the verdict vocabulary.
            let ok = findings.iter().any(|(_, f)| {
                matches!(
                    f.kind,
                    FindingKind::Unsupported | FindingKind::ResourceLimit
                ) && (want.is_empty()
                    || f.reason.to_lowercase().contains(&want)
                    || want.contains(&f.reason.to_lowercase()))
            });
            if ok {
                Ok("unsupported".into())
            } else {
                Err(format!(
                    "expected unsupported ({want}), findings:\n{}",
                    listing()
                ))
            }
        }
        Verdict::Equivalent | Verdict::NotEquivalent | Verdict::RaceFree => {
            let bugs: Vec<_> = findings.iter().filter(|(_, f)| is_bug(f.kind)).collect();
            if bugs.is_empty() {
                let unsupported = findings.iter().find(|(_, f)| !is_bug(f.kind));
                Ok(match unsupported {
                    Some((_, f)) => format!("clean (stopped: {:?}: {})", f.kind, f.reason),
                    None => "clean".into(),
                })
            } else {
                Err(format!(
                    "expected {} but:\n{}",
                    expect.verdict.as_str(),
                    listing()
                ))
            }
        }
        // Spec validation rejects it as an expected verdict.
        Verdict::InvalidInput => Err("a case cannot expect invalid-input".into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = corpus_root();
    let verbose = std::env::var_os("PTXEQ_UNROLL_VERBOSE").is_some();
    let summary = std::env::var_os("PTXEQ_UNROLL_SUMMARY").is_some();
    let trials: Vec<Trial> = cases(&root)
        .into_iter()
        .map(|p| {
            let name = p
                .parent()
                .and_then(|d| d.strip_prefix(&root).ok())
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let expect = CheckSpec::load(&p).ok().and_then(|s| s.expect);
            let pending = expect.as_ref().is_some_and(|e| e.status == Status::Pending);
            // Full-size cases run on request (`-- --include-ignored`).
            let heavy = expect.as_ref().is_some_and(|e| e.heavy);
            let kind = match (pending, heavy) {
                (true, _) => "pending",
                (false, true) => "heavy",
                (false, false) => "",
            };
            Trial::test(name.clone(), move || {
                let (spec, findings) = run_case(&p).map_err(Failed::from)?;
                if verbose {
                    for (r, f) in &findings {
                        eprintln!("{name} [{r}] {:?} {}", f.kind, f.message);
                    }
                }
                match judge(&spec, &findings) {
                    Ok(what) => {
                        if summary {
                            eprintln!("SUMMARY {name}: {what}");
                        }
                        Ok(())
                    }
                    Err(e) if pending => {
                        eprintln!("{name} (pending): {}", e.lines().next().unwrap_or(""));
                        Ok(())
                    }
                    Err(e) => Err(Failed::from(e)),
                }
            })
            .with_kind(kind)
            .with_ignored_flag(heavy)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
