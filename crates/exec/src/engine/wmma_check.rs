//! Guards for ptxeq's fixed wmma fragment layout.
//!
//! The hardware's wmma fragment layout is implementation-defined, and
//! ptxeq models it with one fixed layout (`fragments::wmma_element`). That
//! is exact for programs that only move fragments between `wmma.load`,
//! `wmma.mma` and `wmma.store` (and copy them with `mov`), and for
//! fragments filled with one value (`wmma::fill_fragment`). A program that
//! touches fragment elements individually depends on the layout, so it is
//! reported unsupported:
//!
//! - statically ([`fragment_misuse`]): a register written by `wmma.load` /
//!   `wmma.mma` (or a `mov` copy of one) that any instruction other than
//!   `wmma.*` / `mov` reads or writes;
//! - dynamically (`WmmaState`): a fragment consumed by `wmma.mma` /
//!   `wmma.store` whose registers are neither all values some wmma
//!   instruction of the warp produced nor one value throughout.

use ptxeq_ir::{Instr, KernelIr, RegId};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::value::Value;

/// The first instruction (index, register name) that uses a wmma
/// fragment register element-wise, if any.
pub(crate) fn fragment_misuse(ir: &KernelIr) -> Option<(u32, String)> {
    let mut frag: FxHashSet<RegId> = FxHashSet::default();
    for ins in &ir.instrs {
        if matches!(
            ins.instr,
            Instr::Wmma(ptxeq_ir::WmmaOp::Load { .. } | ptxeq_ir::WmmaOp::Mma { .. })
        ) && let Some(d) = ins.operands.first()
        {
            let mut v = Vec::new();
            d.collect_regs(&mut v);
            frag.extend(v);
        }
    }
    if frag.is_empty() {
        return None;
    }
    // Close over mov copies.
    loop {
        let mut grew = false;
        for ins in &ir.instrs {
            if !matches!(ins.instr, Instr::Mov { .. }) {
                continue;
            }
            let mut src = Vec::new();
            for o in ins.operands.iter().skip(1) {
                o.collect_regs(&mut src);
            }
            if src.iter().any(|r| frag.contains(r)) {
                let mut dst = Vec::new();
                if let Some(d) = ins.operands.first() {
                    d.collect_regs(&mut dst);
                }
                for r in dst {
                    grew |= frag.insert(r);
                }
            }
        }
        if !grew {
            break;
        }
    }
    for (i, ins) in ir.instrs.iter().enumerate() {
        if matches!(ins.instr, Instr::Wmma(_) | Instr::Mov { .. }) {
            continue;
        }
        let mut used = Vec::new();
        for o in &ins.operands {
            o.collect_regs(&mut used);
        }
        if let Some(g) = ins.guard {
            used.push(g.reg);
        }
        if let Some(r) = used.into_iter().find(|r| frag.contains(r)) {
            return Some((i as u32, ir.reg(r).name.clone()));
        }
    }
    None
}

/// Per-run state: the static verdict per function and, per warp, the
/// register values wmma instructions produced.
pub(crate) struct WmmaState<V> {
    pub checked: FxHashMap<u32, Option<(u32, String)>>,
    pub produced: Vec<FxHashSet<Value<V>>>,
}

impl<V: Copy + Eq + std::hash::Hash> WmmaState<V> {
    pub(crate) fn new(warps: usize) -> Self {
        WmmaState {
            checked: FxHashMap::default(),
            produced: (0..warps).map(|_| FxHashSet::default()).collect(),
        }
    }

    /// Whether a fragment (registers of every lane) is one wmma produced
    /// or a fill with a single value.
    pub(crate) fn acceptable<'a>(
        &self,
        warp: usize,
        mut regs: impl Iterator<Item = &'a Value<V>> + Clone,
    ) -> bool
    where
        V: 'a,
    {
        let produced = &self.produced[warp];
        let first = regs.clone().next();
        regs.clone().all(|v| produced.contains(v)) || regs.all(|v| Some(v) == first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn misuse(body: &str) -> Option<(u32, String)> {
        let ptx = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<16>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<4>;\n\
             ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
        );
        let lowered = ptxeq_lower::lower_source(&ptx);
        fragment_misuse(&lowered.module.kernels[0])
    }

    const LOAD: &str = "wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%rd1], 16;\n";

    #[test]
    fn copies_and_wmma_uses_are_fine() {
        assert_eq!(
            misuse(&format!(
                "{LOAD}mov.f32 %f8, %f0;\nwmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%rd1], {{%f8, %f1, %f2, %f3, %f4, %f5, %f6, %f7}}, 16;"
            )),
            None
        );
    }

    #[test]
    fn element_wise_use_is_found_through_copies() {
        let m = misuse(&format!(
            "{LOAD}mov.f32 %f8, %f0;\nmul.f32 %f9, %f8, 0f40000000;\nst.global.f32 [%rd1], %f9;"
        ));
        assert_eq!(m.map(|(_, r)| r), Some("%f8".to_string()));
        let m = misuse(&format!("{LOAD}st.global.f32 [%rd1], %f3;"));
        assert_eq!(m.map(|(_, r)| r), Some("%f3".to_string()));
    }
}
