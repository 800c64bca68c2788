//! Grid-level runs: CTAs judged together over one global memory, and the
//! ticket ("last block") pattern with and without the fences the PTX
//! memory model requires. Expected verdicts follow from how the kernels
//! are written (see each test).

mod common;
use common::{input, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{CtaInput, Finding, FindingKind, GridRun, OVal, Opaque, ParamValue, run_grid};
use ptxeq_spec::DType;

const G: u32 = 4;

fn all_ctas() -> Vec<[u32; 3]> {
    (0..G).map(|x| [x, 0, 0]).collect()
}

/// The "last block" reduction: thread 0 of each CTA copies x[cta] to
/// part[cta], then `fence1`, then draws a ticket with
/// `atom.global.inc.u32` (bound gridDim.x) on `count` and publishes "last"
/// in shared memory, then (if last) `fence2`; after a barrier, `fence3`
/// (every thread of the last CTA), then thread i < G of the last CTA
/// copies part[i] to out[i]. `count` is a zero-initialised global
/// variable, or with `count_input` an element of an `inout` tensor.
fn ticket_kernel(fence1: &str, fence2: &str, fence3: &str, count_input: bool) -> CtaInput {
    let fence2 = if fence2.is_empty() {
        String::new()
    } else {
        format!("@%p2 {fence2}")
    };
    let (decl, load_cnt) = if count_input {
        (
            "",
            "ld.param.u64 %rd3, [cnt];\n cvta.to.global.u64 %rd3, %rd3;",
        )
    } else {
        (".global .align 4 .u32 count;", "mov.u64 %rd3, count;")
    };
    let ptx = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n{decl}\n\
         .visible .entry k(.param .u64 x, .param .u64 part, .param .u64 cnt, .param .u64 out)\n{{\n\
         .reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n.reg .f32 %f<8>;\n.reg .pred %p<8>;\n\
         .shared .align 4 .u32 amlast;\n\
         ld.param.u64 %rd1, [x];\n cvta.to.global.u64 %rd1, %rd1;\n\
         ld.param.u64 %rd2, [part];\n cvta.to.global.u64 %rd2, %rd2;\n\
         {load_cnt}\n\
         ld.param.u64 %rd4, [out];\n cvta.to.global.u64 %rd4, %rd4;\n\
         mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %nctaid.x;\n\
         setp.ne.u32 %p1, %r1, 0;\n @%p1 bra WAIT;\n\
         mul.wide.u32 %rd5, %r2, 4;\n add.s64 %rd6, %rd1, %rd5;\n ld.global.f32 %f1, [%rd6];\n\
         add.s64 %rd7, %rd2, %rd5;\n st.global.f32 [%rd7], %f1;\n\
         {fence1}\n\
         atom.global.inc.u32 %r4, [%rd3], %r3;\n\
         sub.u32 %r5, %r3, 1;\n setp.eq.u32 %p2, %r4, %r5;\n selp.u32 %r6, 1, 0, %p2;\n\
         st.shared.u32 [amlast], %r6;\n\
         {fence2}\n\
         WAIT:\n bar.sync 0;\n\
         ld.shared.u32 %r7, [amlast];\n setp.eq.u32 %p3, %r7, 0;\n @%p3 bra END;\n\
         {fence3}\n\
         setp.ge.u32 %p4, %r1, %r3;\n @%p4 bra END;\n\
         mul.wide.u32 %rd8, %r1, 4;\n add.s64 %rd9, %rd2, %rd8;\n ld.global.f32 %f2, [%rd9];\n\
         add.s64 %rd10, %rd4, %rd8;\n st.global.f32 [%rd10], %f2;\n\
         END:\n ret;\n}}\n"
    );
    let mut inp = input(
        &ptx,
        [32, 1, 1],
        vec![
            tensor("x", Role::Input, DType::F32, &[G as u64]),
            tensor("part", Role::Output, DType::F32, &[G as u64]),
            tensor("cnt", Role::InOut, DType::U32, &[1]),
            tensor("out", Role::Output, DType::F32, &[G as u64]),
        ],
        (0..4).map(|t| ParamValue::Tensor { tensor: t }).collect(),
    );
    inp.grid = [G, 1, 1];
    inp
}

fn grid(inp: &CtaInput) -> GridRun<OVal> {
    run_grid(inp, &all_ctas(), Opaque::new()).0
}

fn findings(g: &GridRun<OVal>) -> Vec<&Finding> {
    g.runs
        .iter()
        .flat_map(|r| &r.findings)
        .chain(&g.cross)
        .collect()
}

fn kinds(g: &GridRun<OVal>) -> Vec<FindingKind> {
    let mut k: Vec<FindingKind> = findings(g).iter().map(|f| f.kind).collect();
    k.sort();
    k.dedup();
    k
}

#[test]
fn ticket_with_release_and_acquire_fences_is_race_free() {
    let inp = ticket_kernel("membar.gl;", "membar.gl;", "", false);
    let g = grid(&inp);
    assert!(g.explored, "{:?}", g.notes);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    // out[i] = x[i] in every order: written, the same everywhere.
    assert_eq!(
        g.outputs
            .iter()
            .find(|o| o.name == "out")
            .unwrap()
            .elements
            .len(),
        G as usize
    );
}

#[test]
fn ticket_with_fence_sc_by_every_reader_is_race_free() {
    // The acquire fence is executed by the reading threads after the
    // barrier: fence.sc orders them after the writers' fence.sc.
    let inp = ticket_kernel("fence.sc.gpu;", "", "fence.sc.gpu;", false);
    let g = grid(&inp);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
}

#[test]
fn ticket_with_acq_rel_fence_by_other_threads_races() {
    // fence.acq_rel is an acquire only after a read of the same thread.
    let inp = ticket_kernel("fence.acq_rel.gpu;", "", "fence.acq_rel.gpu;", false);
    let g = grid(&inp);
    assert_eq!(kinds(&g), vec![FindingKind::Race], "{:#?}", findings(&g));
}

#[test]
fn ticket_without_fences_races() {
    let inp = ticket_kernel("", "", "", false);
    let g = grid(&inp);
    assert_eq!(kinds(&g), vec![FindingKind::Race], "{:#?}", findings(&g));
    let f = g
        .cross
        .iter()
        .find(|f| f.kind == FindingKind::Race)
        .unwrap();
    assert_eq!(f.location.as_ref().unwrap().region, "part");
    assert!(f.accesses.iter().all(|a| a.cta.is_some()));
}

#[test]
fn ticket_with_release_fence_only_races() {
    // The Programming Guide's single __threadfence before the ticket: the
    // ticket read is not followed by an acquire.
    let inp = ticket_kernel("membar.gl;", "", "", false);
    let g = grid(&inp);
    assert_eq!(kinds(&g), vec![FindingKind::Race], "{:#?}", findings(&g));
}

#[test]
fn ticket_with_cta_scoped_fences_races() {
    let inp = ticket_kernel("membar.cta;", "membar.cta;", "", false);
    let g = grid(&inp);
    assert_eq!(kinds(&g), vec![FindingKind::Race], "{:#?}", findings(&g));
}

#[test]
fn ticket_start_value_from_an_input_is_judged() {
    // With a start value of gridDim.x - 1 the first CTA believes it is
    // last and reads partials nobody wrote yet.
    let inp = ticket_kernel("membar.gl;", "membar.gl;", "", true);
    let g = grid(&inp);
    assert!(
        kinds(&g).contains(&FindingKind::Race),
        "{:#?}",
        findings(&g)
    );
    let notes = g.notes.join("\n");
    assert!(notes.contains("start value of this report: 3"), "{notes}");
}

#[test]
fn without_the_whole_grid_the_branch_is_unsupported() {
    let inp = ticket_kernel("membar.gl;", "membar.gl;", "", false);
    let g = run_grid(&inp, &[[0, 0, 0], [1, 0, 0]], Opaque::new()).0;
    assert!(!g.explored);
    let f = findings(&g);
    assert!(
        f.iter().any(|f| f.kind == FindingKind::Unsupported
            && f.reason.ends_with("depends on an atomic's returned value")),
        "{f:#?}"
    );
}

/// Every CTA stores the same value to out[0] with one instruction: benign
/// as within a CTA; different values (the CTA id) race.
#[test]
fn same_value_stores_across_ctas_follow_the_cta_rule() {
    let k = |src: &str| {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
             mov.u32 %r1, %ctaid.x;\n st.global.u32 [%rd1], {src};\n ret;\n}}\n"
        );
        let mut inp = input(
            &ptx,
            [32, 1, 1],
            vec![tensor("out", Role::Output, DType::U32, &[1])],
            vec![ParamValue::Tensor { tensor: 0 }],
        );
        inp.grid = [G, 1, 1];
        grid(&inp)
    };
    assert!(findings(&k("7")).is_empty());
    assert_eq!(kinds(&k("%r1")), vec![FindingKind::Race]);
}

/// Atomics of different CTAs: commuting adds are fine; exchanges of
/// different values are order-dependent; a .cta-scoped add races.
#[test]
fn atomics_across_ctas() {
    let k = |ins: &str| {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
             mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %tid.x;\n setp.ne.u32 %p1, %r2, 0;\n\
             @%p1 bra END;\n {ins}\n END:\n ret;\n}}\n"
        )
        .replace(".reg .b64 %rd<4>;", ".reg .b64 %rd<4>;\n.reg .pred %p<2>;");
        let mut inp = input(
            &ptx,
            [32, 1, 1],
            vec![tensor("out", Role::InOut, DType::U32, &[1])],
            vec![ParamValue::Tensor { tensor: 0 }],
        );
        inp.grid = [G, 1, 1];
        grid(&inp)
    };
    assert!(findings(&k("red.global.add.u32 [%rd1], %r1;")).is_empty());
    assert_eq!(
        kinds(&k("atom.global.exch.b32 %r3, [%rd1], %r1;")),
        vec![FindingKind::OrderDependent]
    );
    assert_eq!(
        kinds(&k("red.global.cta.add.u32 [%rd1], %r1;")),
        vec![FindingKind::Race]
    );
}

/// The last CTA resets the counter for the next launch: the RMWs before
/// its own are ordered before what its RMW is ordered before (PTX
/// causality: observation order, then program order), so the plain store
/// does not race with them.
#[test]
fn last_cta_may_reset_the_ticket() {
    let inp = ticket_kernel(
        "membar.gl;",
        "membar.gl;\n @%p2 st.global.u32 [%rd3], 0;",
        "",
        false,
    );
    let g = grid(&inp);
    assert!(g.explored);
    assert!(findings(&g).is_empty(), "{:#?}", findings(&g));
    // A non-last CTA resetting it races with the others' atomics.
    let inp = ticket_kernel(
        "membar.gl;",
        "membar.gl;\n @!%p2 st.global.u32 [%rd3], 0;",
        "",
        false,
    );
    assert!(kinds(&grid(&inp)).contains(&FindingKind::Race));
}

/// Each CTA draws a slot with an atomic and writes its value there (stream
/// compaction): the output layout depends on the order of the atomics.
#[test]
fn slot_drawn_from_a_ticket_is_order_dependent() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.global .align 4 .u32 next;\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<2>;\n\
        ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
        mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %tid.x;\n setp.ne.u32 %p1, %r2, 0;\n @%p1 bra END;\n\
        mov.u64 %rd2, next;\n atom.global.add.u32 %r3, [%rd2], 1;\n\
        mul.wide.u32 %rd3, %r3, 4;\n add.s64 %rd4, %rd1, %rd3;\n st.global.u32 [%rd4], %r1;\n\
        END:\n ret;\n}\n";
    let mut inp = input(
        ptx,
        [32, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[G as u64])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    inp.grid = [G, 1, 1];
    let g = grid(&inp);
    assert!(g.explored);
    assert!(
        kinds(&g).contains(&FindingKind::OrderDependent),
        "{:#?}",
        findings(&g)
    );
}

/// Flag synchronisation within a CTA: thread 0 writes data and publishes a
/// flag with st.release; thread 32 branches on ld.acquire of the flag. The
/// value the acquire reads depends on the schedule, so the branch is
/// outside what ptxeq explores: unsupported, naming the load.
#[test]
fn branch_on_a_strong_load_is_unsupported() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .pred %p<4>;\n\
        .shared .align 4 .u32 data;\n.shared .align 4 .u32 flag;\n\
        mov.u32 %r1, %tid.x;\n setp.ne.u32 %p1, %r1, 0;\n @%p1 bra CONSUMER;\n\
        st.shared.u32 [data], 42;\n st.release.cta.shared.u32 [flag], 1;\n bra.uni END;\n\
        CONSUMER:\n setp.ne.u32 %p2, %r1, 32;\n @%p2 bra END;\n\
        ld.acquire.cta.shared.u32 %r2, [flag];\n setp.eq.u32 %p3, %r2, 0;\n @%p3 bra END;\n\
        ld.shared.u32 %r3, [data];\n\
        END:\n ret;\n}\n";
    let inp = input(
        ptx,
        [64, 1, 1],
        vec![tensor("out", Role::Output, DType::U32, &[1])],
        vec![ParamValue::Tensor { tensor: 0 }],
    );
    let run = ptxeq_exec::run_cta(&inp, [0, 0, 0], Opaque::new()).0;
    assert!(
        run.findings
            .iter()
            .any(|f| f.kind == FindingKind::Unsupported
                && f.reason == "branch depends on an atomic's returned value"),
        "{:#?}",
        run.findings
    );
}
