//! `tcgen05` Tensor Memory on concrete data: the `.32x32b` lane/column
//! layout of `tcgen05.st` / `tcgen05.ld` (lane `32·(warp % 4) + laneid`,
//! register `i` = column `taddr.col + i`), and the allocation,
//! bounds and `wait::ld` findings. The MMA itself is checked end to end by
//! the corpus (`corpus/blackwell/`: equivalence with a scalar reference,
//! a race, an uninitialised accumulator).

mod common;

use common::{kernel_run, kinds, no_findings, out_bits};
use ptxeq_exec::{CVal, CtaRun, FindingKind};

const DECLS: &str = ".shared .align 4 .b32 slot;";

/// Warp 0 allocates `ALLOC` columns; every thread stores `(2·tid,
/// 2·tid + 1)` into columns 0 and 1 of its lane and reads column 1 back
/// into `out[tid]`; warp 0 deallocates. `edit` injects a bug.
fn kernel(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    let body = "\
mov.u32 %r0, %tid.x;\n\
shr.u32 %r1, %r0, 5;\n\
setp.ne.u32 %p0, %r1, 0;\n\
@%p0 bra ALLOCATED;\n\
mov.u32 %r2, slot;\n\
tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], ALLOC;\n\
RELINQUISH\n\
ALLOCATED:\n\
tcgen05.fence::before_thread_sync;\n\
bar.sync 0;\n\
tcgen05.fence::after_thread_sync;\n\
ld.shared.u32 %r3, [slot];\n\
shl.b32 %r4, %r1, 21;\n\
add.u32 %r5, %r3, %r4;\n\
mul.lo.u32 %r6, %r0, 2;\n\
add.u32 %r7, %r6, 1;\n\
tcgen05.st.sync.aligned.32x32b.x2.b32 [%r5], {%r6, %r7};\n\
tcgen05.wait::st.sync.aligned;\n\
add.u32 %r8, %r5, COL;\n\
tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r9}, [%r8];\n\
WAITLD: tcgen05.wait::ld.sync.aligned;\n\
mul.wide.u32 %rd1, %r0, 4;\n\
add.s64 %rd1, %rd0, %rd1;\n\
st.global.u32 [%rd1], %r9;\n\
tcgen05.fence::before_thread_sync;\n\
bar.sync 0;\n\
@%p0 bra DONE;\n\
tcgen05.fence::after_thread_sync;\n\
DEALLOC: tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, ALLOC;\n\
DONE:\n";
    let body = body
        .replace("ALLOC;", "32;")
        .replace(
            "RELINQUISH",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;",
        )
        .replace("COL;", "1;");
    kernel_run(&edit(body), 128, 128, DECLS)
}

fn finding(r: &CtaRun<CVal>, k: FindingKind) -> String {
    r.findings
        .iter()
        .find(|f| f.kind == k)
        .unwrap_or_else(|| panic!("no {k:?} finding: {:#?}", r.findings))
        .message
        .clone()
}

#[test]
fn st_then_ld_follows_the_32x32b_layout() {
    let r = kernel(&|s| s);
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(*g, Some(2 * t as u64 + 1), "thread {t}");
    }
}

#[test]
fn ld_column_zero_reads_the_first_register() {
    let r = kernel(&|s| s.replace("add.u32 %r8, %r5, 1;", "add.u32 %r8, %r5, 0;"));
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(*g, Some(2 * t as u64), "thread {t}");
    }
}

#[test]
fn use_before_wait_ld_is_a_register_race() {
    let r = kernel(&|s| s.replace("WAITLD: tcgen05.wait::ld.sync.aligned;\n", ""));
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("before a tcgen05.wait::ld"), "{m}");
}

#[test]
fn missing_dealloc_is_reported_at_exit() {
    let r = kernel(&|s| {
        s.replace(
            "DEALLOC: tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n",
            "",
        )
    });
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("still allocated"), "{m}");
}

#[test]
fn double_dealloc_is_reported() {
    let r = kernel(&|s| {
        s.replace(
            "DEALLOC: tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n",
            "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\ntcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n",
        )
    });
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("already deallocated"), "{m}");
}

#[test]
fn alloc_after_relinquish_is_reported() {
    let r = kernel(&|s| {
        s.replace(
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n",
            "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\ntcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 32;\n",
        )
    });
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("relinquish_alloc_permit"), "{m}");
}

#[test]
fn invalid_column_count_is_reported() {
    let r = kernel(&|s| s.replace("[%r2], 32;", "[%r2], 48;"));
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("power of two"), "{m}");
}

#[test]
fn access_outside_the_allocation_is_out_of_bounds() {
    // Column 32 of a 32-column allocation.
    let r = kernel(&|s| s.replace("add.u32 %r8, %r5, 1;", "add.u32 %r8, %r5, 32;"));
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("column 32 is not allocated"), "{m}");
}

#[test]
fn a_warp_outside_its_lane_window_is_out_of_bounds() {
    // Every warp addresses lanes 0..32 (only warp 0 may).
    let r = kernel(&|s| s.replace("shl.b32 %r4, %r1, 21;", "mov.u32 %r4, 0;"));
    let m = finding(&r, FindingKind::OutOfBounds);
    assert!(m.contains("may access only lanes 32..64"), "{m}");
}

#[test]
fn unwritten_cells_read_uninitialised() {
    // Column 2 was allocated but never stored.
    let r = kernel(&|s| s.replace("add.u32 %r8, %r5, 1;", "add.u32 %r8, %r5, 2;"));
    assert!(
        kinds(&r).contains(&FindingKind::Uninitialised),
        "{:#?}",
        r.findings
    );
}

#[test]
fn lanes_skipping_a_tcgen05_ld_diverge() {
    let r = kernel(&|s| {
        s.replace(
            "tcgen05.ld.sync.aligned",
            "setp.lt.u32 %p1, %r0, 16;\n@%p1 bra SKIP;\ntcgen05.ld.sync.aligned",
        )
        .replace("WAITLD:", "SKIP:")
    });
    let m = finding(&r, FindingKind::Divergence);
    assert!(m.contains("warp-collective"), "{m}");
}

#[test]
fn dealloc_not_ordered_after_other_warps_reads_races() {
    // Without the last barrier, warp 0 frees the columns while the other
    // warps may still be reading them.
    let r = kernel(&|s| {
        let i = s.rfind("bar.sync 0;\n").expect("last barrier");
        let mut s = s;
        s.replace_range(i..i + "bar.sync 0;\n".len(), "");
        s
    });
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tensor memory"), "{m}");
}

/// The tcgen05 ordering rule across threads (PTX ISA, "Memory consistency
/// model for 5th generation of TensorCore operations"): 256 threads, so
/// warps `w` and `w + 4` share TMEM lanes `32·(w % 4)..`. Warps 0–3 store
/// `tid + 100` into column 0 of their lanes (`tcgen05.st`, `wait::st`),
/// then `tcgen05.fence::before_thread_sync` (BEFORE), `bar.sync`,
/// `tcgen05.fence::after_thread_sync` (AFTER), and warps 4–7 load the cell
/// back into `out[tid - 128]`. Then every thread fences, synchronises and
/// warp 0 deallocates. `edit` injects a bug.
const HANDOFF: &str = "\
mov.u32 %r0, %tid.x;\n\
shr.u32 %r1, %r0, 5;\n\
setp.ne.u32 %p0, %r1, 0;\n\
@%p0 bra ALLOCATED;\n\
mov.u32 %r2, slot;\n\
tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 32;\n\
tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\
ALLOCATED:\n\
tcgen05.fence::before_thread_sync;\n\
bar.sync 0;\n\
tcgen05.fence::after_thread_sync;\n\
ld.shared.u32 %r3, [slot];\n\
and.b32 %r10, %r1, 3;\n\
shl.b32 %r4, %r10, 21;\n\
add.u32 %r5, %r3, %r4;\n\
setp.lt.u32 %p1, %r1, 4;\n\
@!%p1 bra CONSUME;\n\
add.u32 %r6, %r0, 100;\n\
tcgen05.st.sync.aligned.32x32b.x1.b32 [%r5], {%r6};\n\
WAITST: tcgen05.wait::st.sync.aligned;\n\
CONSUME:\n\
BEFORE: tcgen05.fence::before_thread_sync;\n\
bar.sync 0;\n\
AFTER: tcgen05.fence::after_thread_sync;\n\
@%p1 bra SKIPLD;\n\
tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r9}, [%r5];\n\
tcgen05.wait::ld.sync.aligned;\n\
sub.u32 %r11, %r0, 128;\n\
mul.wide.u32 %rd1, %r11, 4;\n\
add.s64 %rd1, %rd0, %rd1;\n\
st.global.u32 [%rd1], %r9;\n\
SKIPLD:\n\
LAST: tcgen05.fence::before_thread_sync;\n\
bar.sync 0;\n\
@%p0 bra DONE;\n\
tcgen05.fence::after_thread_sync;\n\
tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n\
DONE:\n";

fn handoff(edit: &dyn Fn(String) -> String) -> CtaRun<CVal> {
    kernel_run(&edit(HANDOFF.to_string()), 128, 256, DECLS)
}

/// How many instructions of `body` lie between the lines starting with
/// `from` and `to` (label-only lines are not instructions): the
/// distance of their instruction indices.
fn distance(body: &str, from: &str, to: &str) -> u32 {
    let at = |n: &str| {
        body.find(&format!("\n{n}"))
            .expect("needle at a line start")
    };
    body[at(from)..at(to)]
        .lines()
        .filter(|l| l.contains(';'))
        .count() as u32
}

/// The race finding's two accesses: (thread, mnemonic of the instruction)
/// each, read from the kernel text by instruction index.
fn race_pair(r: &CtaRun<CVal>) -> Vec<(u32, u32)> {
    let f = r
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Race)
        .unwrap_or_else(|| panic!("no race: {:#?}", r.findings));
    f.accesses
        .iter()
        .map(|a| (a.thread.linear, a.instr.index))
        .collect()
}

#[test]
fn fenced_handoff_is_ordered() {
    let r = handoff(&|s| s);
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(*g, Some(t as u64 + 100), "thread {}", t + 128);
    }
}

#[test]
fn handoff_without_before_thread_sync_races() {
    let edit = |s: String| s.replace("BEFORE: tcgen05.fence::before_thread_sync;\n", "BEFORE:\n");
    let r = handoff(&edit);
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tcgen05.fence::before_thread_sync"), "{m}");
    let pair = race_pair(&r);
    assert_eq!(pair.len(), 2, "{pair:?}");
    // The producer's tcgen05.st (warp w < 4) and the consumer's tcgen05.ld
    // (warp w + 4, same TMEM lane).
    assert!(pair[0].0 < 128 && pair[1].0 >= 128, "{pair:?}");
    assert_eq!(pair[0].0 + 128, pair[1].0, "{pair:?}");
    let d = distance(&edit(HANDOFF.into()), "tcgen05.st.", "tcgen05.ld.");
    assert_eq!(pair[1].1 - pair[0].1, d, "the st and the ld: {pair:?}");
    assert!(m.contains("write by") && m.contains("read by"), "{m}");
}

#[test]
fn handoff_without_after_thread_sync_races() {
    let edit = |s: String| s.replace("AFTER: tcgen05.fence::after_thread_sync;\n", "AFTER:\n");
    let r = handoff(&edit);
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tcgen05.fence::after_thread_sync"), "{m}");
    let pair = race_pair(&r);
    assert_eq!(pair.len(), 2, "{pair:?}");
    assert_eq!(pair[0].0 + 128, pair[1].0, "{pair:?}");
    let d = distance(&edit(HANDOFF.into()), "tcgen05.st.", "tcgen05.ld.");
    assert_eq!(pair[1].1 - pair[0].1, d, "the st and the ld: {pair:?}");
}

#[test]
fn handoff_without_wait_st_races_with_the_store_in_flight() {
    // The fence without the wait does not complete the store.
    let r = handoff(&|s| s.replace("WAITST: tcgen05.wait::st.sync.aligned;\n", "WAITST:\n"));
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tcgen05.wait::st"), "{m}");
}

#[test]
fn dealloc_without_before_thread_sync_races_with_the_reads() {
    // The consumers' tcgen05.ld is not released before the last barrier:
    // the dealloc (a synchronous tcgen05 instruction, ordered by the
    // barrier itself) is not ordered after it.
    let edit = |s: String| s.replace("LAST: tcgen05.fence::before_thread_sync;\n", "LAST:\n");
    let r = handoff(&edit);
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tensor memory"), "{m}");
    let pair = race_pair(&r);
    assert!(pair[1].0 < 32, "the dealloc by warp 0: {pair:?}");
    let d = distance(&edit(HANDOFF.into()), "tcgen05.ld.", "tcgen05.dealloc");
    assert_eq!(pair[1].1 - pair[0].1, d, "the ld and the dealloc: {pair:?}");
}

#[test]
fn dealloc_needs_no_after_thread_sync() {
    // tcgen05.dealloc is synchronous: the barrier orders it.
    let r = handoff(&|s| {
        let i = s
            .rfind("tcgen05.fence::after_thread_sync;\n")
            .expect("last fence");
        let mut s = s;
        s.replace_range(i..i + "tcgen05.fence::after_thread_sync;\n".len(), "");
        s
    });
    no_findings(&r);
}

#[test]
fn st_over_a_cell_still_being_loaded_races() {
    // Same thread: tcgen05.ld then tcgen05.st of the same cell without
    // tcgen05.wait::ld between them (not a pipelined pair).
    let r = kernel(&|s| {
        s.replace(
            "WAITLD: tcgen05.wait::ld.sync.aligned;\n",
            "tcgen05.st.sync.aligned.32x32b.x1.b32 [%r8], {%r6};\nWAITLD: tcgen05.wait::ld.sync.aligned;\n",
        )
    });
    let m = finding(&r, FindingKind::Race);
    assert!(m.contains("tcgen05.wait::ld"), "{m}");
}

/// One warp fills Tensor Memory lanes 0..32, columns 0..8 with
/// `8·lane + col + 1` (`.32x32b.x8`), hands them over (wait::st, the two
/// fences around a barrier: the lanes read cells other lanes wrote), then
/// loads them back with `shape`
/// (`regs` registers per thread, at TMEM lane 0) and writes register `i`
/// of lane `l` to `out[l·regs + i]`.
fn reload(shape: &str, regs: usize) -> CtaRun<CVal> {
    let mut body = String::from(
        "mov.u32 %r0, %tid.x;\n\
         mov.u32 %r2, slot;\n\
         tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 32;\n\
         tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n\
         tcgen05.fence::before_thread_sync;\n\
         bar.sync 0;\n\
         tcgen05.fence::after_thread_sync;\n\
         ld.shared.u32 %r3, [slot];\n\
         mul.lo.u32 %r4, %r0, 8;\n",
    );
    for c in 0..8 {
        body += &format!("add.u32 %r{}, %r4, {};\n", 10 + c, c + 1);
    }
    body += "tcgen05.st.sync.aligned.32x32b.x8.b32 [%r3], {%r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17};\n\
             tcgen05.wait::st.sync.aligned;\n\
             tcgen05.fence::before_thread_sync;\nbar.sync 0;\ntcgen05.fence::after_thread_sync;\n";
    let dst: Vec<String> = (0..regs).map(|i| format!("%r{}", 20 + i)).collect();
    body += &format!(
        "tcgen05.ld.sync.aligned.{shape}.b32 {{{}}}, [%r3];\ntcgen05.wait::ld.sync.aligned;\n",
        dst.join(", ")
    );
    body += &format!("mul.lo.u32 %r5, %r0, {};\n", regs * 4);
    body += "cvt.u64.u32 %rd1, %r5;\nadd.s64 %rd1, %rd0, %rd1;\n";
    for (i, d) in dst.iter().enumerate() {
        body += &format!("st.global.u32 [%rd1+{}], {d};\n", 4 * i);
    }
    body += "tcgen05.fence::before_thread_sync;\nbar.sync 0;\ntcgen05.fence::after_thread_sync;\n\
             tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, 32;\n";
    kernel_run(&body, 32 * regs, 32, DECLS)
}

/// The cell value `reload` stored at (lane, col).
fn filled(lane: u64, col: u64) -> Option<u64> {
    Some(8 * lane + col + 1)
}

#[test]
fn ld_16x256b_follows_the_mma_accumulator_layout() {
    // PTX ISA "Matrix fragments for mma.m16n8k*" (f32 C/D): register j of
    // lane l is row l/4 (+8 for j >= 2), column 2·(l%4) + j%2; .16x256b
    // maps rows to TMEM lanes and columns to TMEM columns.
    let r = reload("16x256b.x1", 4);
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for l in 0..32u64 {
        for j in 0..4u64 {
            let (row, col) = (l / 4 + 8 * (j / 2), 2 * (l % 4) + j % 2);
            assert_eq!(
                got[(l * 4 + j) as usize],
                filled(row, col),
                "lane {l} reg {j}"
            );
        }
    }
}

#[test]
fn ld_16x128b_and_16x64b_follow_their_layouts() {
    // .16x128b.x2: register i of lane l is TMEM lane l/4 + 8·(i%2),
    // column 4·(i/2) + l%4.
    let r = reload("16x128b.x2", 4);
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for l in 0..32u64 {
        for i in 0..4u64 {
            let want = filled(l / 4 + 8 * (i % 2), 4 * (i / 2) + l % 4);
            assert_eq!(got[(l * 4 + i) as usize], want, "16x128b lane {l} reg {i}");
        }
    }
    // .16x64b.x4: register i of lane l is TMEM lane 8·(l%2) + l/4,
    // column 2i + (l/2)%2.
    let r = reload("16x64b.x4", 4);
    no_findings(&r);
    let got = out_bits(&r, 0, 128);
    for l in 0..32u64 {
        for i in 0..4u64 {
            let want = filled(8 * (l % 2) + l / 4, 2 * i + (l / 2) % 2);
            assert_eq!(got[(l * 4 + i) as usize], want, "16x64b lane {l} reg {i}");
        }
    }
}

#[test]
fn wrong_register_count_for_a_16_lane_shape_is_unsupported() {
    // .16x256b.x1 needs 4 registers per thread.
    let r = reload("16x256b.x1", 2);
    assert!(
        r.findings.iter().any(|f| f.message.contains("4 expected")),
        "{:#?}",
        r.findings
    );
}
