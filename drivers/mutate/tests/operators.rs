//! Each operator on a small hand-written kernel: the mutants it makes, and
//! that every mutant is PTX that lowers with its changed instruction
//! decoded (never `Unknown`), the rest of the kernel untouched.

use ptxeq_ir::Instr;
use ptxeq_mutate::{Kernel, Mutant, Op, Probe, enumerate};

const PTX: &str = "\
.version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 x, .param .u64 y)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<16>;
\t.reg .f32 %f<16>;
\t.reg .b64 %rd<8>;
\t.shared .align 4 .b8 sm[512];

\tld.param.u64 %rd1, [x];
\tld.param.u64 %rd2, [y];
\tcvta.to.global.u64 %rd3, %rd1;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd4, %r1, 4;
\tadd.s64 %rd5, %rd3, %rd4;
\tld.global.f32 %f1, [%rd5+8];
\tmul.f32 %f2, %f1, 0f40000000;
\tsub.f32 %f3, %f2, %f1;
\tfma.rn.f32 %f4, %f3, %f1, %f2;
\tmax.f32 %f5, %f4, %f1;
\tsetp.lt.s32 %p1, %r1, 7;
\tselp.f32 %f6, %f5, %f4, %p1;
\tshl.b32 %r2, %r1, 2;
\tmov.u32 %r3, sm;
\tadd.s32 %r4, %r3, %r2;
\tst.shared.f32 [%r4], %f6;
\tbar.sync 0;
\tshfl.sync.bfly.b32 %r5|%p2, %r2, 16, 31, -1;
\tld.shared.f32 %f7, [%r4+4];
\tadd.f32 %f8, %f7, %f7;
\tcvta.to.global.u64 %rd6, %rd2;
\tadd.s64 %rd7, %rd6, %rd4;
\tst.global.f32 [%rd7], %f8;
\tret;
}
";

fn kernel() -> Kernel {
    Kernel::load(PTX, None).expect("kernel loads")
}

fn of(all: &[Mutant], op: Op) -> Vec<&Mutant> {
    all.iter().filter(|m| m.op == op).collect()
}

#[test]
fn every_mutant_lowers_and_decodes() {
    let k = kernel();
    let all = enumerate(&k);
    assert!(all.len() > 30, "{} mutants", all.len());
    let mut ids = std::collections::HashSet::new();
    for m in &all {
        assert!(ids.insert(m.id.clone()), "duplicate id {}", m.id);
        let text = m
            .text(PTX)
            .unwrap_or_else(|| panic!("{}: edits do not apply", m.id));
        assert_ne!(text, PTX, "{} changes nothing", m.id);
        let lowered = ptxeq_lower::lower_source(&text);
        assert!(
            lowered.diagnostics.is_empty(),
            "{} ({}): {:?}",
            m.id,
            m.desc,
            lowered.diagnostics
        );
        let ir = &lowered.module.kernels[0];
        for (i, d) in ir.instrs.iter().enumerate() {
            assert!(
                !matches!(d.instr, Instr::Unknown { .. }),
                "{} ({}): instruction {i} does not decode: {:?}",
                m.id,
                m.desc,
                d.instr
            );
        }
        let expected_len = if m.op == Op::DeleteBarrier {
            k.ir.instrs.len() - 1
        } else {
            k.ir.instrs.len()
        };
        assert_eq!(ir.instrs.len(), expected_len, "{}", m.id);
        // Only the probed instruction differs (mutations of one instruction).
        if let Probe::Mutant(i) = m.probe {
            for (j, (a, b)) in k.ir.instrs.iter().zip(&ir.instrs).enumerate() {
                if j != i as usize {
                    assert_eq!(a.instr, b.instr, "{}: instruction {j} changed", m.id);
                    assert_eq!(a.operands, b.operands, "{}: instruction {j} changed", m.id);
                }
            }
            let (a, b) = (&k.ir.instrs[i as usize], &ir.instrs[i as usize]);
            assert!(
                a.instr != b.instr || a.operands != b.operands,
                "{}: the probed instruction is unchanged",
                m.id
            );
        }
    }
}

#[test]
fn operators_make_the_expected_mutants() {
    let k = kernel();
    let all = enumerate(&k);
    let descs = |op: Op| -> Vec<String> { of(&all, op).iter().map(|m| m.desc.clone()).collect() };
    let has = |op: Op, s: &str| {
        let d = descs(op);
        assert!(
            d.iter().any(|x| x.contains(s)),
            "{op:?}: no `{s}` in {d:#?}"
        );
    };
    has(Op::ImmInt, "`setp.lt.s32 %p1, %r1, 8;`");
    has(Op::ImmInt, "`shl.b32 %r2, %r1, 3;`");
    has(Op::ImmFloat, "`mul.f32 %f2, %f1, 0f40400000;`"); // 2 → 3
    has(Op::SwapOperands, "`sub.f32 %f3, %f1, %f2;`");
    has(Op::SwapOperands, "`fma.rn.f32 %f4, %f3, %f2, %f1;`");
    has(Op::SwapOperands, "`selp.f32 %f6, %f4, %f5, %p1;`");
    has(Op::AddSub, "`sub.s64 %rd5, %rd3, %rd4;`");
    has(Op::AddSub, "`add.f32 %f3, %f2, %f1;`");
    has(Op::MulToAdd, "`add.f32 %f2, %f1, 0f40000000;`");
    has(Op::FmaToAdd, "`add.rn.f32 %f4, %f3, %f2;`");
    has(Op::MaxMin, "`min.f32 %f5, %f4, %f1;`");
    has(Op::FlipCmp, "`setp.ge.s32 %p1, %r1, 7;`");
    has(Op::FlipCmp, "`setp.le.s32 %p1, %r1, 7;`");
    has(Op::DeleteBarrier, "`bar.sync 0;` deleted");
    has(Op::ShflLane, "%r2, 17, 31, -1;`");
    has(Op::ShflLane, "%r2, 15, 31, -1;`");
    has(Op::AddrOffset, "`ld.global.f32 %f1, [%rd5+12];`");
    has(Op::AddrOffset, "`ld.global.f32 %f1, [%rd5+4];`");
    has(Op::AddrOffset, "`st.shared.f32 [%r4+4], %f6;`");
    has(Op::StoreSource, "`st.shared.f32 [%r4], %f5;`");
    // `ld.param` offsets are not touched (param space).
    assert!(
        descs(Op::AddrOffset)
            .iter()
            .all(|d| !d.contains("ld.param"))
    );
    // Rewrites.
    has(Op::MulTwo, "`add.f32 %f2, %f1, %f1;`");
    has(Op::MulTwo, "`mul.f32 %f8, %f7, 0f40000000;`");
    has(Op::Commute, "`max.f32 %f5, %f1, %f4;`");
    has(Op::Commute, "`setp.gt.s32 %p1, 7, %r1;`");
    has(Op::Commute, "`fma.rn.f32 %f4, %f1, %f3, %f2;`");
    assert!(!of(&all, Op::Reorder).is_empty());
    assert!(!of(&all, Op::RenameRegs).is_empty());
    // `sub` is not commuted and `add.f32 %f8, %f7, %f7` has nothing to swap.
    assert!(descs(Op::Commute).iter().all(|d| !d.contains("sub.f32")));
    assert!(descs(Op::Commute).iter().all(|d| !d.contains("%f8")));
}

#[test]
fn reorders_only_independent_neighbours() {
    let k = kernel();
    let all = enumerate(&k);
    let r: Vec<String> = of(&all, Op::Reorder)
        .iter()
        .map(|m| m.desc.clone())
        .collect();
    // mov %r3 (line of `sm`) and shl %r2 share no register: swappable.
    assert!(
        r.iter()
            .any(|d| d.contains("`shl.b32 %r2, %r1, 2;` and `mov.u32 %r3, sm;`")),
        "{r:#?}"
    );
    // sub %f3 reads %f2 written by mul: never swapped.
    assert!(
        r.iter()
            .all(|d| !d.contains("`mul.f32 %f2, %f1, 0f40000000;` and `sub"))
    );
    // Nothing moves across the barrier or a store/load pair.
    assert!(r.iter().all(|d| !d.contains("bar.sync")));
    assert!(
        r.iter()
            .all(|d| !(d.contains("st.shared") && d.contains("ld.shared")))
    );
}

#[test]
fn renaming_swaps_every_occurrence() {
    let k = kernel();
    let all = enumerate(&k);
    let m = all
        .iter()
        .find(|m| m.id == "rename-regs:%f1:%f2")
        .expect("a rename of %f1 and %f2");
    let text = m.text(PTX).unwrap();
    assert!(text.contains("ld.global.f32 %f2, [%rd5+8];"));
    assert!(text.contains("mul.f32 %f1, %f2, 0f40000000;"));
    assert!(text.contains("sub.f32 %f3, %f1, %f2;"));
    // The declaration `%f<16>` is untouched.
    assert!(text.contains(".reg .f32 %f<16>;"));
}
