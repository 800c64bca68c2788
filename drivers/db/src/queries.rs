//! The tracked queries of the front end: `parse` → `lowered_module` →
//! (`kernel_ir`, `source_map`) → `kernel_summary`.

use std::collections::BTreeMap;
use std::sync::Arc;

use ptxeq_ir::{Instr, KernelIr, ModuleIr, SourceMap, Span};
use ptxeq_lower::{LowerDiagnostic, LowerResult};
use ptxeq_syntax::{Parse, TextRange, TextSize};

use crate::{Db, SourceFile};

/// `parse`: file → green tree + syntax errors (error-tolerant, lossless).
#[salsa::tracked(returns(ref))]
pub fn parse(db: &dyn Db, file: SourceFile) -> Parse {
    let _span = tracing::info_span!("parse").entered();
    ptxeq_syntax::parse(file.text(db))
}

/// The whole file lowered: every entry and `.func`, their source maps and
/// the lowering diagnostics. Re-runs on every edit of the file; the per-entry
/// [`kernel_ir`] below is where unchanged kernels are cut off.
#[salsa::tracked(returns(ref))]
pub fn lowered_module(db: &dyn Db, file: SourceFile) -> LoweredModule {
    let parsed = parse(db, file);
    let _span = tracing::info_span!("lower").entered();
    LoweredModule::from(ptxeq_lower::lower_module(parsed))
}

/// Names of the `.entry` kernels of a file, in source order.
#[salsa::tracked(returns(ref))]
pub fn entry_names(db: &dyn Db, file: SourceFile) -> Vec<String> {
    lowered_module(db, file)
        .module
        .kernels
        .iter()
        .map(|k| k.name.clone())
        .collect()
}

/// Identifies one `.entry` (or `.func`) of one file.
#[salsa::interned(debug)]
pub struct EntryKey<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(ref)]
    pub name: String,
}

/// `kernel_ir`: file, entry → the entry's IR (`None` if the file has no such
/// entry). Position-free, so an edit elsewhere in the file — or a comment —
/// backdates it and nothing downstream re-runs.
#[salsa::tracked(returns(ref))]
pub fn kernel_ir<'db>(db: &'db dyn Db, key: EntryKey<'db>) -> Option<Arc<KernelIr>> {
    let lowered = lowered_module(db, key.file(db));
    lowered
        .module
        .kernel(key.name(db))
        .map(|k| Arc::new(k.clone()))
}

/// The PTX positions of an entry's instructions, for diagnostics.
#[salsa::tracked(returns(ref))]
pub fn source_map<'db>(db: &'db dyn Db, key: EntryKey<'db>) -> Option<SourceMap> {
    let lowered = lowered_module(db, key.file(db));
    let m = &lowered.module;
    let i = m.kernels.iter().position(|k| &k.name == key.name(db))?;
    lowered.kernel_maps.get(i).cloned()
}

/// A per-entry digest derived from the IR alone: instruction counts per
/// opcode and the instructions ptxeq does not decode. Used by `ptxeq parse`
/// and `ptxeq ir --stats`; it is also the first query downstream of
/// [`kernel_ir`], so it shows the early cutoff in tests.
#[salsa::tracked(returns(ref))]
pub fn kernel_summary<'db>(db: &'db dyn Db, key: EntryKey<'db>) -> Option<KernelSummary> {
    let k = kernel_ir(db, key).as_ref()?;
    let mut opcodes: BTreeMap<String, usize> = BTreeMap::new();
    let mut unknown = Vec::new();
    for (i, d) in k.instrs.iter().enumerate() {
        let mnemonic = d.instr.mnemonic();
        let family = mnemonic.split('.').next().unwrap_or_default().to_string();
        *opcodes.entry(family).or_default() += 1;
        if let Instr::Unknown { reason, .. } = &d.instr {
            unknown.push((i, reason.clone()));
        }
    }
    Some(KernelSummary {
        instructions: k.instrs.len(),
        registers: k.regs.len(),
        opcodes,
        unknown,
    })
}

/// See [`kernel_summary`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct KernelSummary {
    pub instructions: usize,
    pub registers: usize,
    /// Instruction count per opcode family (`ld`, `fma`, `bar`, ...).
    pub opcodes: BTreeMap<String, usize>,
    /// `(instruction index, reason)` of every undecoded instruction.
    pub unknown: Vec<(usize, String)>,
}

/// The artifact of [`lowered_module`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct LoweredModule {
    pub module: ModuleIr,
    pub kernel_maps: Vec<SourceMap>,
    pub func_maps: Vec<SourceMap>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A lowering problem at a PTX range.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Diagnostic {
    pub message: String,
    pub range: TextRange,
}

/// An undecoded instruction somewhere in the module.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct UnknownInstruction {
    pub function: String,
    pub index: usize,
    pub reason: String,
    pub range: TextRange,
}

fn range(s: Span) -> TextRange {
    TextRange::new(TextSize::from(s.start), TextSize::from(s.end.max(s.start)))
}

impl From<LowerResult> for LoweredModule {
    fn from(r: LowerResult) -> Self {
        let diagnostics = r
            .diagnostics
            .into_iter()
            .map(|LowerDiagnostic { message, range: r }| Diagnostic {
                message,
                range: range(r),
            })
            .collect();
        LoweredModule {
            module: r.module,
            kernel_maps: r.kernel_maps,
            func_maps: r.func_maps,
            diagnostics,
        }
    }
}

impl LoweredModule {
    /// Every undecoded instruction of every entry and function, with its
    /// PTX range.
    pub fn unknown_instructions(&self) -> Vec<UnknownInstruction> {
        let fns = self.module.kernels.iter().zip(&self.kernel_maps);
        let fns = fns.chain(self.module.funcs.iter().zip(&self.func_maps));
        let mut out = Vec::new();
        for (k, map) in fns {
            for (i, d) in k.instrs.iter().enumerate() {
                if let Instr::Unknown { reason, .. } = &d.instr {
                    out.push(UnknownInstruction {
                        function: k.name.clone(),
                        index: i,
                        reason: reason.clone(),
                        range: range(map.instr(i)),
                    });
                }
            }
        }
        out
    }

    /// The source map of a kernel or function by name.
    pub fn map_of(&self, name: &str) -> Option<(&KernelIr, &SourceMap)> {
        let k = self.module.kernels.iter().zip(&self.kernel_maps);
        let mut all = k.chain(self.module.funcs.iter().zip(&self.func_maps));
        all.find(|(k, _)| k.name == name)
    }
}
