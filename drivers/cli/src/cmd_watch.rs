//! `ptxeq watch SPEC.toml`: re-check on every save, reusing everything
//! that did not change.
//!
//! One salsa [`Database`] lives for the whole session. When a watched file
//! (the spec or a PTX file it names) changes on disk, its input is updated
//! (`SourceFile::set_text`, `SpecInput::set_spec`) and the report runs
//! again: salsa re-runs only the queries the edit reaches (a comment edit
//! stops after lowering; an edit of the candidate leaves the reference's
//! runs alone), and the disk cache serves whatever an earlier session
//! already computed. Each round prints which files changed, the verdict
//! and how long it took.
//!
//! The report is behind [`recheck`], one function: `ptxeq check` for a
//! pair, `ptxeq race` for a single kernel.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};
use ptxeq_check::{Checker, Mode, Request, Verdict};
use ptxeq_db::Database;
use ptxeq_spec::CheckSpec;
use salsa::Setter;

use crate::exit::Exit;
use crate::spec_args::{self, LoadedSpec, SpecFlagArgs};

/// Quiet time after the last file event before re-checking (editors write
/// a file in several steps).
const DEBOUNCE: Duration = Duration::from_millis(150);

/// What one round concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recheck {
    pub verdict: Verdict,
    pub exit: Exit,
}

/// The report of one round, printed in human form: the facade's
/// [`Mode::Auto`] — the equivalence check (as `ptxeq check` runs it) for a
/// spec with a reference and a candidate, else the race check (as `ptxeq
/// race`). `None` when the input is invalid (syntax errors, a spec that
/// does not fit), which is printed.
pub fn recheck(checker: &Checker, loaded: &LoadedSpec) -> Option<Recheck> {
    let db = checker.db();
    for &(_, file) in &loaded.kernels {
        if crate::cmd_parse::report_errors(db, file, file.path(db)) > 0 {
            return None;
        }
    }
    let outcome = checker.run(&Request::new(loaded, Mode::Auto));
    if let Some(why) = &outcome.invalid {
        eprintln!("error: {why}");
        return None;
    }
    if outcome.check_report().is_some() {
        crate::cmd_check::print_human(
            db,
            loaded,
            &outcome,
            3,
            crate::formula_diff::DEFAULT_ORIGINS_MAX_STEPS,
        );
    } else {
        outln!("{}", outcome.verdict);
        crate::cmd_race::print_kernels(db, outcome.race_reports());
    }
    Some(Recheck {
        verdict: outcome.verdict,
        exit: Exit::of_verdict(outcome.verdict),
    })
}

/// A watch session: the spec target, its flags, and what is loaded.
pub struct Session {
    target: PathBuf,
    args: SpecFlagArgs,
    pub loaded: LoadedSpec,
}

impl Session {
    pub fn start(db: &Database, target: &Path, args: &SpecFlagArgs) -> Option<Session> {
        let loaded = spec_args::load(db, target, args)?;
        Some(Session {
            target: target.to_path_buf(),
            args: args.clone(),
            loaded,
        })
    }

    /// The files whose change triggers a round.
    pub fn watched(&self, db: &Database) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .loaded
            .kernels
            .iter()
            .map(|(_, f)| f.path(db).clone())
            .collect();
        if self.target.extension().is_some_and(|e| e == "toml") {
            v.push(self.target.clone());
        } else if let Some(s) = &self.args.spec {
            v.push(s.clone());
        }
        v.sort();
        v.dedup();
        v
    }

    /// Re-reads every watched file and updates the inputs that changed;
    /// returns the changed files. A spec that now names other PTX files
    /// is loaded afresh (new inputs in the same database).
    pub fn refresh(&mut self, db: &mut Database) -> Vec<PathBuf> {
        let mut changed = Vec::new();
        let spec_path = self.loaded.spec.path(db).clone();
        if spec_path.extension().is_some_and(|e| e == "toml") {
            match CheckSpec::load(&spec_path) {
                Ok(spec) if &spec != self.loaded.spec.spec(db) => {
                    changed.push(spec_path.clone());
                    let same_files = spec.kernels.iter().len() == self.loaded.kernels.len()
                        && spec
                            .kernels
                            .iter()
                            .iter()
                            .zip(&self.loaded.kernels)
                            .all(|((_, k), (_, f))| &k.ptx == f.path(db));
                    if same_files {
                        self.loaded.spec.set_spec(db).to(spec);
                    } else if let Some(l) = spec_args::load(db, &self.target, &self.args) {
                        self.loaded = l;
                    }
                }
                Ok(_) => {}
                Err(e) => eprintln!("error: {e}"),
            }
        }
        for &(_, file) in &self.loaded.kernels {
            let path = file.path(db).clone();
            match std::fs::read_to_string(&path) {
                Ok(text) if &text != file.text(db) => {
                    file.set_text(db).to(text);
                    changed.push(path);
                }
                Ok(_) => {}
                Err(e) => eprintln!("error: cannot read {}: {e}", path.display()),
            }
        }
        changed.sort();
        changed.dedup();
        changed
    }
}

/// Watches `target` and re-checks on every change; with `timings`
/// (`--timings`), each round prints its own pass timings.
pub fn run(target: &Path, args: &SpecFlagArgs, timings: bool) -> Exit {
    let mut checker = Checker::new();
    let Some(mut session) = Session::start(checker.db(), target, args) else {
        return Exit::Invalid;
    };
    let (tx, rx) = mpsc::channel();
    let mut watcher = match watcher(tx) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("error: cannot watch files: {e}");
            return Exit::Invalid;
        }
    };
    let mut dirs = BTreeSet::new();
    let mut watch_dirs =
        |session: &Session, db: &Database, watcher: &mut notify::RecommendedWatcher| {
            // Directories, not files: editors save by writing a new file and
            // renaming it over the old one.
            for f in session.watched(db) {
                let dir = f
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                if dirs.insert(dir.clone())
                    && let Err(e) = watcher.watch(&dir, RecursiveMode::NonRecursive)
                {
                    eprintln!("warning: cannot watch {}: {e}", dir.display());
                }
            }
        };
    watch_dirs(&session, checker.db(), &mut watcher);
    round(&checker, &session, &[], timings);
    let names = |s: &Session, db: &Database| -> BTreeSet<PathBuf> {
        s.watched(db).iter().map(|p| canonical(p)).collect()
    };
    let mut interesting = names(&session, checker.db());
    loop {
        let Some(hit) = next_batch(&rx, &interesting) else {
            return Exit::Ok;
        };
        if !hit {
            continue;
        }
        let changed = session.refresh(checker.db_mut());
        if changed.is_empty() {
            continue;
        }
        watch_dirs(&session, checker.db(), &mut watcher);
        interesting = names(&session, checker.db());
        round(&checker, &session, &changed, timings);
    }
}

/// One round: what changed, the report, the time.
fn round(checker: &Checker, session: &Session, changed: &[PathBuf], timings: bool) {
    outln!();
    if changed.is_empty() {
        outln!("== checking {}", session.target.display());
    } else {
        let list: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
        outln!("== changed: {}", list.join(", "));
    }
    let start = Instant::now();
    let result = recheck(checker, &session.loaded);
    let elapsed = start.elapsed();
    match result {
        Some(r) => outln!(
            "== {} in {:.1} ms; watching for changes (Ctrl-C to stop)",
            r.verdict,
            elapsed.as_secs_f64() * 1e3
        ),
        None => outln!("== invalid input; watching for changes (Ctrl-C to stop)"),
    }
    if timings {
        eprint!(
            "{}",
            crate::timings::report(&crate::timings::take(), elapsed, None)
        );
    }
}

/// The longest a burst of modifications may postpone a round: a file
/// rewritten continuously is still re-checked this often.
const MAX_SETTLE: Duration = Duration::from_secs(2);

/// A watcher that sends the paths of every event that may change a
/// file's contents (created, modified, removed, renamed). Reads (an
/// editor or language server opening the files, `Access` events) are not
/// sent: they change nothing and must not keep a round waiting.
pub fn watcher(tx: mpsc::Sender<Vec<PathBuf>>) -> notify::Result<notify::RecommendedWatcher> {
    notify::recommended_watcher(move |ev: notify::Result<notify::Event>| {
        if let Ok(ev) = ev
            && is_modification(&ev.kind)
        {
            let _ = tx.send(ev.paths);
        }
    })
}

/// Whether an event may change a file's contents.
fn is_modification(kind: &notify::EventKind) -> bool {
    use notify::EventKind;
    matches!(
        kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
    ) && !matches!(
        kind,
        EventKind::Modify(notify::event::ModifyKind::Metadata(
            notify::event::MetadataKind::AccessTime
        ))
    )
}

/// Waits for the next modification and lets its burst settle (quiet for
/// [`DEBOUNCE`], at most [`MAX_SETTLE`]): whether it touched an
/// `interesting` file; `None` when the watcher is gone.
pub fn next_batch(
    rx: &mpsc::Receiver<Vec<PathBuf>>,
    interesting: &BTreeSet<PathBuf>,
) -> Option<bool> {
    let paths = rx.recv().ok()?;
    let touches = |ps: &[PathBuf]| ps.iter().any(|p| interesting.contains(&canonical(p)));
    let mut hit = touches(&paths);
    let deadline = Instant::now() + MAX_SETTLE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match rx.recv_timeout(DEBOUNCE.min(left)) {
            Ok(more) => hit |= touches(&more),
            Err(_) => break,
        }
    }
    Some(hit)
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/races")
            .join(name)
    }

    /// The re-check step: editing the kernel on disk (adding the missing
    /// barrier) turns the verdict from race to race-free, and an unchanged
    /// file is not reported as changed.
    #[test]
    fn an_edit_on_disk_changes_the_verdict() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["check.toml", "k.ptx"] {
            std::fs::copy(case("missing-barrier-reverse").join(f), dir.path().join(f)).unwrap();
        }
        let spec = dir.path().join("check.toml");
        let mut checker = Checker::new();
        let mut s = Session::start(checker.db(), &spec, &SpecFlagArgs::default()).unwrap();
        assert_eq!(recheck(&checker, &s.loaded).unwrap().verdict, Verdict::Race);
        assert!(
            s.refresh(checker.db_mut()).is_empty(),
            "nothing changed yet"
        );

        let fixed =
            std::fs::read_to_string(case("missing-barrier-reverse-fixed").join("k.ptx")).unwrap();
        std::fs::write(dir.path().join("k.ptx"), fixed).unwrap();
        let changed = s.refresh(checker.db_mut());
        assert_eq!(changed.len(), 1);
        assert!(changed[0].ends_with("k.ptx"), "{changed:?}");
        let r = recheck(&checker, &s.loaded).unwrap();
        assert_eq!(r.verdict, Verdict::RaceFree);
        assert_eq!(r.exit, Exit::Ok);
    }

    /// A spec edit is picked up too (here: a smaller block that no longer
    /// fits the kernel's `.reqntid`, or a still-valid change of tensors).
    #[test]
    fn a_spec_edit_is_an_input_change() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["check.toml", "k.ptx"] {
            std::fs::copy(case("missing-barrier-reverse").join(f), dir.path().join(f)).unwrap();
        }
        let spec = dir.path().join("check.toml");
        let mut checker = Checker::new();
        let mut s = Session::start(checker.db(), &spec, &SpecFlagArgs::default()).unwrap();
        let text = std::fs::read_to_string(&spec).unwrap();
        std::fs::write(
            &spec,
            text.replace("verdict = \"race\"", "verdict = \"race-free\""),
        )
        .unwrap();
        let changed = s.refresh(checker.db_mut());
        assert_eq!(changed, vec![spec.clone()]);
        assert_eq!(
            s.loaded
                .spec
                .spec(checker.db())
                .expect
                .as_ref()
                .map(|e| e.verdict.as_str()),
            Some("race-free")
        );
    }

    /// A spec with a reference and a candidate is re-checked for
    /// equivalence, not only for races.
    #[test]
    fn a_pair_is_rechecked_for_equivalence() {
        let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../corpus/softmax/naive-vs-online-n4/check.toml");
        let checker = Checker::new();
        let s = Session::start(checker.db(), &spec, &SpecFlagArgs::default()).unwrap();
        let r = recheck(&checker, &s.loaded).unwrap();
        assert_eq!(r.verdict, Verdict::Equivalent);
        assert_eq!(r.exit, Exit::Ok);
    }

    /// A process reading the watched files all the time (an editor, a
    /// language server) neither triggers nor starves a round: the write
    /// that happens meanwhile is seen, within the settle bound.
    #[test]
    fn a_polling_reader_does_not_hide_a_modification() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("k.ptx");
        std::fs::write(&file, "// v1\n").unwrap();
        let (tx, rx) = mpsc::channel();
        let mut w = watcher(tx).unwrap();
        w.watch(dir.path(), RecursiveMode::NonRecursive).unwrap();
        let interesting: BTreeSet<PathBuf> = [canonical(&file)].into_iter().collect();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (stop, dir, file) = (stop.clone(), dir.path().to_path_buf(), file.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::read_to_string(&file);
                    let _ = std::fs::read_dir(&dir).map(|d| d.count());
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        // Reads alone send nothing.
        std::thread::sleep(Duration::from_millis(300));
        assert!(rx.try_recv().is_err(), "a read was taken for a change");
        let start = Instant::now();
        std::fs::write(&file, "// v2\n").unwrap();
        let hit = next_batch(&rx, &interesting);
        let waited = start.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().unwrap();
        assert_eq!(hit, Some(true));
        assert!(waited < MAX_SETTLE + Duration::from_secs(1), "{waited:?}");
    }
}
