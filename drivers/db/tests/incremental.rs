//! Incrementality, proven from salsa's event log (which queries executed),
//! not from timing.

use ptxeq_db::{Database, EntryKey, SourceFile, kernel_summary};
use salsa::Setter;
use salsa::plumbing::AsId;

const KERNEL_A: &str = r#".version 8.5
.target sm_80
.address_size 64

.visible .entry scale(
	.param .u64 scale_param_0,
	.param .u64 scale_param_1
)
{
	.reg .f32 	%f<3>;
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [scale_param_0];
	ld.param.u64 	%rd2, [scale_param_1];
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	mul.f32 	%f2, %f1, 0f40000000;
	add.s64 	%rd5, %rd2, %rd3;
	st.global.f32 	[%rd5], %f2;
	ret;
}

.visible .entry copy(
	.param .u64 copy_param_0,
	.param .u64 copy_param_1
)
{
	.reg .f32 	%f<2>;
	.reg .b32 	%r<2>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [copy_param_0];
	ld.param.u64 	%rd2, [copy_param_1];
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd1, %rd3;
	ld.global.f32 	%f1, [%rd4];
	add.s64 	%rd5, %rd2, %rd3;
	st.global.f32 	[%rd5], %f1;
	ret;
}
"#;

/// Names of the executed queries, without their keys (`parse`, ...).
fn names(log: &[String]) -> Vec<String> {
    log.iter()
        .map(|e| e.split('(').next().unwrap_or_default().to_string())
        .collect()
}

fn count(log: &[String], query: &str) -> usize {
    names(log).iter().filter(|n| *n == query).count()
}

struct Fixture {
    db: Database,
    log: ptxeq_db::ExecutionLog,
    a: SourceFile,
    b: SourceFile,
}

impl Fixture {
    fn new() -> Self {
        let (db, log) = Database::with_execution_log();
        let a = db.add_file("a.ptx", KERNEL_A.to_string());
        let b = db.add_file("b.ptx", KERNEL_A.replace("scale", "twice"));
        let f = Fixture { db, log, a, b };
        f.summaries();
        f.log.take();
        f
    }

    /// Demands the summary of every entry of both files.
    fn summaries(&self) {
        for (file, names) in [(self.a, ["scale", "copy"]), (self.b, ["twice", "copy"])] {
            for n in names {
                let key = EntryKey::new(&self.db, file, n.to_string());
                assert!(kernel_summary(&self.db, key).is_some(), "{n}");
            }
        }
    }
}

#[test]
fn nothing_changed_nothing_runs() {
    let f = Fixture::new();
    f.summaries();
    assert_eq!(f.log.take(), Vec::<String>::new());
}

#[test]
fn editing_one_file_reruns_only_that_files_queries() {
    let mut f = Fixture::new();
    let edited = KERNEL_A.replace("0f40000000", "0f40400000");
    f.a.set_text(&mut f.db).to(edited);
    f.summaries();
    let log = f.log.take();
    // File a: parsed and lowered again, exactly once.
    assert_eq!(count(&log, "parse"), 1, "{log:#?}");
    assert_eq!(count(&log, "lowered_module"), 1, "{log:#?}");
    // Both of a's kernels re-derive their IR from the new module, but only
    // the edited one (scale) changed, so only its summary re-runs.
    assert_eq!(count(&log, "kernel_ir"), 2, "{log:#?}");
    assert_eq!(count(&log, "kernel_summary"), 1, "{log:#?}");
    // ... and those are a's, keyed by a's ids: nothing of file b ran.
    let a_id = f.a.as_id();
    assert!(log.contains(&format!("parse({a_id:?})")), "{log:#?}");
    assert!(
        log.contains(&format!("lowered_module({a_id:?})")),
        "{log:#?}"
    );
    let scale = EntryKey::new(&f.db, f.a, "scale".to_string()).as_id();
    assert!(
        log.contains(&format!("kernel_summary({scale:?})")),
        "{log:#?}"
    );
}

#[test]
fn a_comment_edit_is_cut_off_after_lowering() {
    let mut f = Fixture::new();
    // A comment and blank lines shift every byte offset of the file.
    let edited = KERNEL_A.replacen(".address_size 64\n", ".address_size 64\n// tuned\n\n", 1);
    f.a.set_text(&mut f.db).to(edited);
    f.summaries();
    let log = f.log.take();
    assert_eq!(count(&log, "parse"), 1, "{log:#?}");
    assert_eq!(count(&log, "lowered_module"), 1, "{log:#?}");
    // The IR is position-free, so both kernels' IR comes out equal and is
    // backdated: nothing downstream of kernel_ir runs.
    assert_eq!(count(&log, "kernel_summary"), 0, "{log:#?}");
}

#[test]
fn source_map_follows_the_edit() {
    let mut f = Fixture::new();
    let key = EntryKey::new(&f.db, f.a, "scale".to_string());
    let before = ptxeq_db::source_map(&f.db, key).clone().unwrap();
    let edited = KERNEL_A.replacen(".address_size 64\n", ".address_size 64\n// tuned\n", 1);
    f.a.set_text(&mut f.db).to(edited);
    let key = EntryKey::new(&f.db, f.a, "scale".to_string());
    let after = ptxeq_db::source_map(&f.db, key).clone().unwrap();
    assert_eq!(
        after.instrs[0].start,
        before.instrs[0].start + "// tuned\n".len() as u32
    );
}

#[test]
fn parallel_handles_share_storage() {
    let f = Fixture::new();
    let handles: Vec<Database> = (0..2).map(|_| f.db.clone()).collect();
    std::thread::scope(|s| {
        for (db, file) in handles.into_iter().zip([f.a, f.b]) {
            s.spawn(move || {
                assert_eq!(ptxeq_db::entry_names(&db, file).len(), 2);
            });
        }
    });
    // Each worker computed only the new query; the lowered modules the
    // fixture computed were shared, not recomputed per handle.
    let log = f.log.take();
    assert_eq!(count(&log, "entry_names"), 2, "{log:#?}");
    assert_eq!(count(&log, "lowered_module"), 0, "{log:#?}");
    assert_eq!(count(&log, "parse"), 0, "{log:#?}");
}
