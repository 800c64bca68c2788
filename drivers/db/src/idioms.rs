//! `recognised`: the bound kernel with its math-library expansions
//! replaced by exact functions (`passes/idioms`), between lowering and
//! validation. `cta_input` — and so `structured`, `unrolled`, `symbolic`
//! and everything after — sees the recognised IR; instruction indices are
//! unchanged by the rewrite, so the kernel's `SourceMap` still names the
//! original PTX lines. The recognitions (with their assumptions) are kept
//! beside the input for the report.

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
}

/// The kernel of `k` bound to its spec, math idioms recognised.
#[salsa::tracked(returns(ref))]
pub fn recognised<'db>(db: &'db dyn Db, k: KernelSlot<'db>) -> Result<RecognisedInput, String> {
    let mut input = crate::kernel_check::bind(db, k)?;
    let _span = tracing::info_span!("idioms").entered();
    let mut found = Vec::new();
    // Calls in an expansion (f64 sin) are matched against the module's
    // functions as written, before any of them is rewritten.
    let funcs: Vec<_> = input.funcs.iter().map(|f| (**f).clone()).collect();
    let r = ptxeq_idioms::recognise_in(&input.kernel, &funcs);
    found.extend(r.found.into_iter().map(|f| (input.kernel.name.clone(), f)));
    input.kernel = Arc::new(r.ir);
    for f in &mut input.funcs {
        let r = ptxeq_idioms::recognise_in(f, &funcs);
        if !r.found.is_empty() {
            found.extend(r.found.into_iter().map(|x| (f.name.clone(), x)));
            *f = Arc::new(r.ir);
        }
    }
    Ok(RecognisedInput {
        input: Arc::new(input),
        found,
    })
}
