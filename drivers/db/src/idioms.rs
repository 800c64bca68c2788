//! `recognised`: the bound kernel with its math-library expansions
//! replaced by exact functions (`passes/idioms`), between lowering and
//! validation. `cta_input` — and so `structured`, `unrolled`, `symbolic`
//! and everything after — sees the recognised IR; instruction indices are
//! unchanged by the rewrite, so the kernel's `SourceMap` still names the
//! original PTX lines. The recognitions (with their assumptions) are kept
//! beside the input for the report.
//!
//! The IR verifier (`ptxeq_ir::verify`) runs here on every function twice:
//! on the lowered IR and on the recognised IR. A broken invariant is an
//! internal error, kept as [`RecognisedInput::verify_error`]; `race_check`
//! turns it into an `unsupported` finding naming the instruction.

use std::sync::Arc;

use ptxeq_exec::CtaInput;
use ptxeq_idioms::Recognition;

use crate::Db;
use crate::kernel_check::KernelSlot;

/// A bound kernel after idiom recognition.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct RecognisedInput {
    pub input: Arc<CtaInput>,
    /// Every replaced expansion, by function name (the entry's, or a
    /// called `.func`'s).
    pub found: Vec<(String, Recognition)>,
    /// The first invariant the IR verifier found broken, if any.
    pub verify_error: Option<VerifyFailure>,
}

/// A broken IR invariant: an internal error, reported `unsupported`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct VerifyFailure {
    /// `0` for the kernel, `k` for `funcs[k-1]` (as `InstrRef::func`).
    pub func: u32,
    /// The function's name.
    pub name: String,
    /// `"lowering"` or `"idiom recognition"`: the pass whose output broke it.
    pub after: &'static str,
    /// The offending instruction's canonical mnemonic, if the problem is
    /// at one.
    pub mnemonic: Option<String>,
    pub problem: ptxeq_ir::verify::Problem,
}

impl VerifyFailure {
    fn of(
        func: u32,
        ir: &ptxeq_ir::KernelIr,
        after: &'static str,
        r: &ptxeq_ir::verify::Report,
    ) -> Option<VerifyFailure> {
        let problem = r.errors.first()?.clone();
        let mnemonic = problem
            .instr
            .and_then(|i| ir.instrs.get(i as usize))
            .map(|d| d.instr.mnemonic());
        Some(VerifyFailure {
            func,
            name: ir.name.clone(),
            after,
            mnemonic,
            problem,
        })
    }

    /// The `unsupported` finding that reports it.
    pub fn finding(&self) -> ptxeq_exec::Finding {
        let at = match (&self.mnemonic, self.problem.instr) {
            (Some(m), Some(i)) => format!(" at instruction {i} (`{m}`)"),
            _ => String::new(),
        };
        ptxeq_exec::Finding {
            kind: ptxeq_exec::FindingKind::Unsupported,
            message: format!(
                "internal error: the IR of {} after {} breaks an invariant{at}: {}; this is a \
                 bug in ptxeq, not in the kernel (nothing was checked)",
                self.name, self.after, self.problem.message
            ),
            reason: "IR verifier".into(),
            thread: None,
            instr: self.problem.instr.map(|index| ptxeq_exec::InstrRef {
                func: self.func,
                index,
            }),
            location: None,
            accesses: Vec::new(),
            waiting: Vec::new(),
        }
    }
}

/// Verifies `before` (as lowered) and `after` (recognised) of function
/// `func`: the first broken invariant.
fn verified(
    func: u32,
    before: &ptxeq_ir::KernelIr,
    after: &ptxeq_ir::KernelIr,
) -> Option<VerifyFailure> {
    let lowered = ptxeq_ir::verify::verify(before);
    if let Some(e) = VerifyFailure::of(func, before, "lowering", &lowered) {
        return Some(e);
    }
    let rewritten = ptxeq_ir::verify::verify_rewrite(before, after);
    VerifyFailure::of(func, after, "idiom recognition", &rewritten)
}

/// The kernel of `k` bound to its spec, math idioms recognised.
#[salsa::tracked(returns(ref))]
pub fn recognised<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Result<RecognisedInput, String> {
    let mut input = crate::kernel_check::bind(db, k)?;
    let _span = tracing::info_span!("idioms").entered();
    crate::disk::idiom_catalogue(db);
    let mut found = Vec::new();
    // Calls in an expansion (f64 sin) are matched against the module's
    // functions as written, before any of them is rewritten.
    let funcs: Vec<_> = input.funcs.iter().map(|f| (**f).clone()).collect();
    let r = ptxeq_idioms::recognise_in(&input.kernel, &funcs);
    let mut verify_error = verified(0, &input.kernel, &r.ir);
    found.extend(r.found.into_iter().map(|f| (input.kernel.name.clone(), f)));
    input.kernel = Arc::new(r.ir);
    for (k, f) in input.funcs.iter_mut().enumerate() {
        let r = ptxeq_idioms::recognise_in(f, &funcs);
        if verify_error.is_none() {
            verify_error = verified(k as u32 + 1, f, &r.ir);
        }
        if !r.found.is_empty() {
            found.extend(r.found.into_iter().map(|x| (f.name.clone(), x)));
            *f = Arc::new(r.ir);
        }
    }
    Ok(RecognisedInput {
        input: Arc::new(input),
        found,
        verify_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .f32 %f<3>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.f32 %f1, 0f3F800000;
    add.f32 %f2, %f1, %f1;
    st.global.f32 [%rd1], %f2;
    ret;
}
"#;

    /// A rewrite that breaks the IR is reported as an `unsupported`
    /// finding naming the pass, the instruction and the problem.
    #[test]
    fn a_broken_rewrite_is_an_unsupported_finding() {
        let lowered = ptxeq_lower::lower_source(PTX);
        let before = &lowered.module.kernels[0];
        assert_eq!(verified(0, before, before), None);
        let mut after = before.clone();
        // `mov %f1` absorbed into an idiom that does not exist: %f1 is
        // now undefined where `add` reads it.
        after.instrs[1].instr = ptxeq_ir::Instr::Absorbed { at: 2 };
        after.instrs[1].operands.clear();
        let v = verified(0, before, &after).expect("the verifier objects");
        assert_eq!(v.after, "idiom recognition");
        let f = v.finding();
        assert_eq!(f.kind, ptxeq_exec::FindingKind::Unsupported);
        assert_eq!(f.reason, "IR verifier");
        assert_eq!(f.instr.map(|i| (i.func, i.index)), Some((0, 1)));
        assert!(f.message.contains("internal error"), "{}", f.message);
    }
}
