//! The facade end to end on corpus cases: one request per mode, the
//! outcome's verdict, which kernel decided it, and invalid input as a
//! verdict with its reason.

use std::path::{Path, PathBuf};

use ptxeq_check::{Checker, Loaded, Mode, Report, Request, Verdict};
use ptxeq_db::{Slot, SpecInput};
use ptxeq_spec::CheckSpec;

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(name)
        .join("check.toml")
}

fn load(checker: &Checker, spec_path: &Path, edit: impl FnOnce(&mut CheckSpec)) -> Loaded {
    let mut spec = CheckSpec::load(spec_path).expect("spec loads");
    edit(&mut spec);
    let db = checker.db();
    let kernels = spec
        .kernels
        .iter()
        .into_iter()
        .map(|(word, k)| {
            let text = std::fs::read_to_string(&k.ptx).expect("ptx");
            (Slot::of(word), db.add_file(&k.ptx, text))
        })
        .collect();
    Loaded {
        spec: SpecInput::new(db, spec_path.to_path_buf(), spec),
        kernels,
    }
}

#[test]
fn auto_runs_the_race_check_for_one_kernel() {
    let checker = Checker::with_cache(None);
    let loaded = load(&checker, &case("races/missing-barrier-reverse"), |_| {});
    let out = checker.run(&Request::new(&loaded, Mode::Auto));
    assert_eq!(out.mode, Mode::Race);
    assert_eq!(out.verdict, Verdict::Race);
    assert_eq!(out.exit_code(), 1);
    assert_eq!(out.decided_by, Some(Slot::Kernel));
    assert!(matches!(out.report, Report::Race(ref r) if r.len() == 1));
    assert!(!out.assumptions.is_empty());
}

#[test]
fn auto_runs_the_equivalence_check_for_a_pair() {
    let checker = Checker::with_cache(None);
    let loaded = load(&checker, &case("bugs/reduce-drop-last-element"), |_| {});
    let out = checker.run(&Request::new(&loaded, Mode::Auto));
    assert_eq!(out.mode, Mode::Check);
    assert_eq!(out.verdict, Verdict::NotEquivalent);
    assert_eq!(out.decided_by, None);
    assert_eq!(out.tensors().iter().map(|t| t.refuted).sum::<u64>(), 1);
    // A race in one kernel decides the check, naming that kernel.
    let loaded = load(
        &checker,
        &case("bugs/softmax-missing-sync-before-reuse"),
        |_| {},
    );
    let out = checker.run(&Request::new(&loaded, Mode::Check));
    assert_eq!(out.verdict, Verdict::Race);
    assert!(out.decided_by.is_some() && out.stopped_at_kernel());
}

#[test]
fn a_spec_that_does_not_fit_is_invalid_input_with_its_reason() {
    let checker = Checker::with_cache(None);
    // One param too few for the kernel.
    let loaded = load(&checker, &case("races/missing-barrier-reverse"), |s| {
        if let ptxeq_spec::Kernels::Single(k) = &mut s.kernels {
            k.params.pop();
        }
    });
    let out = checker.run(&Request::new(&loaded, Mode::Race));
    assert_eq!(out.verdict, Verdict::InvalidInput);
    assert_eq!(out.exit_code(), 3);
    let why = out.invalid.expect("a reason");
    assert!(why.starts_with(ptxeq_check::DOES_NOT_FIT), "{why}");
}

/// A kernel with a tcgen05.mma is checked under the printed assumption on
/// the MMA's shared-memory operand reads (Tensor Memory ordering is
/// modelled: the GEMM without tcgen05.fence::after_thread_sync races); a
/// kernel without tcgen05 is not.
#[test]
fn tcgen05_kernels_print_the_operand_read_assumption() {
    let checker = Checker::with_cache(None);
    let loaded = load(
        &checker,
        &case("blackwell/tcgen05-no-fence-after-wait"),
        |_| {},
    );
    let out = checker.run(&Request::new(&loaded, Mode::Race));
    assert_eq!(out.verdict, Verdict::Race);
    assert!(out.assumptions.contains(&ptxeq_check::assumptions::TCGEN05));
    assert!(ptxeq_check::assumptions::TCGEN05.contains("operand reads"));
    let loaded = load(&checker, &case("races/missing-barrier-reverse"), |_| {});
    let out = checker.run(&Request::new(&loaded, Mode::Race));
    assert!(!out.assumptions.contains(&ptxeq_check::assumptions::TCGEN05));
}

/// A kernel with wgmma.mma_async and mbarriers is checked under the
/// printed execution-order assumption (the elected-thread stage release
/// is race-free only through it); a kernel without wgmma is not.
#[test]
fn wgmma_mbarrier_kernels_print_the_execution_order_assumption() {
    let checker = Checker::with_cache(None);
    let loaded = load(
        &checker,
        &case("hopper/tma-wgmma-pipeline-elected-release"),
        |_| {},
    );
    let out = checker.run(&Request::new(&loaded, Mode::Race));
    assert_eq!(out.verdict, Verdict::RaceFree);
    assert!(
        out.assumptions
            .contains(&ptxeq_check::assumptions::WGMMA_EXEC)
    );
    let loaded = load(&checker, &case("races/missing-barrier-reverse"), |_| {});
    let out = checker.run(&Request::new(&loaded, Mode::Race));
    assert!(
        !out.assumptions
            .contains(&ptxeq_check::assumptions::WGMMA_EXEC)
    );
}
