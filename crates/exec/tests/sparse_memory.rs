//! Memory follows what a run touches, not the sizes of its tensors.
//!
//! One CTA updates a 41-column strip (1%) of a 3×4096×4096 f32 tensor
//! (192 MiB) while a 16 GiB input tensor and a 4 GiB output tensor sit
//! untouched beside it. The engine's metered state
//! (`Stats::peak_memory_state_bytes`) must stay within a small multiple of
//! the touched bytes, and so must the process's peak resident memory
//! (Linux: `VmHWM`), which would also catch per-byte state allocated
//! outside the metered sparse arrays. Kept alone in its own test binary so
//! the resident-memory reading is this test's.

mod common;

use common::{input, no_findings, tensor};
use ptxeq_exec::Role;
use ptxeq_exec::{Concrete, FindingKind, ParamValue, run_cta};
use ptxeq_spec::DType;

const ROWS: u64 = 3 * 4096;
const COLS: u64 = 4096;
const STRIP: u64 = 41;

/// Thread `t` doubles `x[r][0..41]` for rows `r = t, t + 256, …`.
const KERNEL: &str = r"
.version 8.0
.target sm_80
.address_size 64
.visible .entry strip(.param .u64 x, .param .u64 big_in, .param .u64 big_out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<4>;
  .reg .pred %p<4>;
  ld.param.u64 %rd0, [x];
  cvta.to.global.u64 %rd0, %rd0;
  mov.u32 %r1, %tid.x;
ROW:
  setp.ge.u32 %p0, %r1, 12288;
  @%p0 bra DONE;
  mov.u32 %r2, 0;
COL:
  setp.ge.u32 %p1, %r2, 41;
  @%p1 bra NEXT;
  mad.lo.s32 %r3, %r1, 4096, %r2;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.f32 %f0, [%rd2];
  add.f32 %f1, %f0, %f0;
  st.global.f32 [%rd2], %f1;
  add.s32 %r2, %r2, 1;
  bra COL;
NEXT:
  add.s32 %r1, %r1, 256;
  bra ROW;
DONE:
  ret;
}
";

/// Peak resident set of this process in bytes (Linux), if readable.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn touched_strip_of_huge_tensors_costs_its_share() {
    let tensors = vec![
        tensor("x", Role::InOut, DType::F32, &[3, 4096, 4096]),
        tensor("big_in", Role::Input, DType::U8, &[1 << 34]),
        tensor("big_out", Role::Output, DType::F32, &[1 << 30]),
    ];
    let params = (0..3).map(|t| ParamValue::Tensor { tensor: t }).collect();
    let inp = input(KERNEL, [256, 1, 1], tensors, params);
    let before = peak_rss();
    let (run, _) = run_cta(&inp, [0, 0, 0], Concrete::new(Vec::new()));
    let after = peak_rss();
    no_findings(&run);
    let written: usize = run
        .outputs
        .iter()
        .filter(|o| o.tensor == 0)
        .map(|o| o.elements.len())
        .sum();
    assert_eq!(written as u64, ROWS * STRIP);
    let touched = ROWS * STRIP * 4;
    let tensor_bytes = ROWS * COLS * 4;
    assert!(touched * 100 < tensor_bytes * 2, "the strip is about 1%");
    // Contents (16 B per byte here), shadows (10 B), footprints (28 B),
    // pages rounded up to 64 elements and their tables: about 80 B per
    // touched byte. Any eager per-byte array over `x` alone would be
    // 192 MiB times its element size.
    let state = run.stats.peak_memory_state_bytes;
    assert!(
        state >= touched,
        "state {state} below the touched {touched} bytes"
    );
    assert!(
        state <= 100 * touched,
        "engine state {state} bytes for {touched} touched bytes"
    );
    if let (Some(b), Some(a)) = (before, after) {
        let grew = a.saturating_sub(b);
        assert!(
            grew <= 400 << 20,
            "peak resident memory grew by {grew} bytes for {touched} touched bytes"
        );
    }
}

#[test]
fn memory_state_limit_names_what_hit_it() {
    let tensors = vec![
        tensor("x", Role::InOut, DType::F32, &[3, 4096, 4096]),
        tensor("big_in", Role::Input, DType::U8, &[16]),
        tensor("big_out", Role::Output, DType::F32, &[16]),
    ];
    let params = (0..3).map(|t| ParamValue::Tensor { tensor: t }).collect();
    let mut inp = input(KERNEL, [256, 1, 1], tensors, params);
    inp.limits.max_memory_state_bytes = 1 << 20;
    let (run, _) = run_cta(&inp, [0, 0, 0], Concrete::new(Vec::new()));
    let f: Vec<_> = run.of(FindingKind::ResourceLimit).collect();
    assert_eq!(f.len(), 1, "{:#?}", run.findings);
    assert!(
        f[0].message.contains("max_memory_state_bytes"),
        "{}",
        f[0].message
    );
    assert!(f[0].message.contains("tensor `x`"), "{}", f[0].message);
    assert!(run.stats.peak_memory_state_bytes > 1 << 20);
}
