//! Pass: PTX syntax tree → kernel IR.
//!
//! [`lower_module`] lowers every `.entry` and `.func` of a parsed file;
//! [`lower_function`] lowers one by name (what the `kernel_ir` query needs,
//! without paying for the rest of the module). Lowering
//!
//! - numbers registers densely, expanding `%r<8>` into `%r0..%r7`; every
//!   declaration gets its own id, so an inline-asm block's `.reg .pred p;`
//!   shadows an outer `p` without clashing with it;
//! - resolves labels per block (a label inside `{ }` is local to it, and
//!   forward references work), variables, params and function symbols;
//! - attaches the `.loc` in effect (with its `inlined_at` chain) to each
//!   instruction;
//! - decodes each instruction with [`ptxeq_ir::decode()`].
//!
//! It never panics on bad input: an undeclared name is a
//! [`LowerDiagnostic`] with the source range, and the instruction becomes
//! [`ptxeq_ir::Instr::Unknown`] with the same reason, so a later pass can
//! report it as unsupported if it is ever executed. Syntax errors are the
//! parser's to report and are not repeated here.

mod body;
mod regs;
mod scopes;

use std::collections::HashMap;

use rustc_hash::FxHashSet;

use ptxeq_ir::{KernelIr, ModuleIr, SourceMap, Span, VarDecl, VarScope};
use ptxeq_syntax::{Parse, ast};
use serde::{Deserialize, Serialize};

/// A lowering problem with the byte range it concerns.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct LowerDiagnostic {
    pub message: String,
    pub range: Span,
}

impl std::fmt::Display for LowerDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {}..{}",
            self.message, self.range.start, self.range.end
        )
    }
}

/// The lowered module plus everything that went wrong.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct LowerResult {
    pub module: ModuleIr,
    /// PTX positions, parallel to `module.kernels` and `module.funcs`
    /// (kept out of the IR so that IR equality ignores positions).
    pub kernel_maps: Vec<SourceMap>,
    pub func_maps: Vec<SourceMap>,
    pub diagnostics: Vec<LowerDiagnostic>,
}

/// One lowered function with its PTX positions and problems.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct LoweredFunction {
    pub ir: KernelIr,
    pub map: SourceMap,
    pub diagnostics: Vec<LowerDiagnostic>,
}

/// Diagnostic sink shared by the lowering modules.
#[derive(Default)]
pub(crate) struct Diags(Vec<LowerDiagnostic>);

impl Diags {
    pub(crate) fn push(&mut self, message: String, range: Span) {
        self.0.push(LowerDiagnostic { message, range });
    }
}

/// Module-level context every function sees.
pub(crate) struct ModuleCtx {
    pub(crate) globals: Vec<VarDecl>,
    /// PTX ranges of `globals`, parallel to it.
    pub(crate) global_spans: Vec<Span>,
    pub(crate) funcs: FxHashSet<String>,
    pub(crate) files: Vec<(u32, String)>,
}

impl ModuleCtx {
    fn new(file: &ast::SourceFile, diags: &mut Diags) -> Self {
        let mut globals: Vec<VarDecl> = Vec::new();
        let mut global_spans: Vec<Span> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        for d in file.global_vars() {
            let Some((v, sp)) = regs::var_decl(&d, VarScope::Module, diags) else {
                continue;
            };
            match seen.get(&v.name) {
                // `.extern` declaration plus definition: keep the definition.
                Some(&i) if globals[i].linkage.as_deref() == Some("extern") => {
                    globals[i] = v;
                    global_spans[i] = sp;
                }
                Some(_) if v.linkage.as_deref() == Some("extern") => {}
                Some(_) => diags.push(format!("variable `{}` declared twice", v.name), sp),
                None => {
                    seen.insert(v.name.clone(), globals.len());
                    globals.push(v);
                    global_spans.push(sp);
                }
            }
        }
        let funcs = file.functions().filter_map(|f| f.name()).collect();
        let files = file
            .files()
            .filter_map(|f| Some((f.index()?, f.path()?)))
            .collect();
        ModuleCtx {
            globals,
            global_spans,
            funcs,
            files,
        }
    }
}

/// Lowers every function of the module.
pub fn lower_module(parse: &Parse) -> LowerResult {
    let file = parse.tree();
    let mut diags = Diags::default();
    let ctx = ModuleCtx::new(&file, &mut diags);
    let mut kernels: Vec<KernelIr> = Vec::new();
    let mut funcs: Vec<KernelIr> = Vec::new();
    let mut kernel_maps: Vec<SourceMap> = Vec::new();
    let mut func_maps: Vec<SourceMap> = Vec::new();
    for f in file.functions() {
        let (k, map) = body::lower_fn(&ctx, &f, &mut diags);
        let (list, maps) = if k.is_entry {
            (&mut kernels, &mut kernel_maps)
        } else {
            (&mut funcs, &mut func_maps)
        };
        match list.iter().position(|x| x.name == k.name) {
            Some(i) if !list[i].has_body => {
                list[i] = k;
                maps[i] = map;
            }
            Some(_) if !k.has_body => {}
            Some(_) => diags.push(format!("`{}` defined twice", k.name), map.name),
            None => {
                list.push(k);
                maps.push(map);
            }
        }
    }
    LowerResult {
        module: ModuleIr {
            version: file.version(),
            targets: file.targets(),
            address_size: file.address_size(),
            files: ctx.files.clone(),
            globals: ctx.globals.clone(),
            kernels,
            funcs,
        },
        kernel_maps,
        func_maps,
        diagnostics: diags.0,
    }
}

/// Parses and lowers `text` (convenience for tools and tests).
pub fn lower_source(text: &str) -> LowerResult {
    lower_module(&ptxeq_syntax::parse(text))
}

/// Lowers the one `.entry` or `.func` called `name` (its definition when
/// the file also declares it). `None` when there is no such function.
pub fn lower_function(parse: &Parse, name: &str) -> Option<LoweredFunction> {
    let file = parse.tree();
    let candidates: Vec<ast::Function> = file
        .functions()
        .filter(|f| f.name().as_deref() == Some(name))
        .collect();
    let f = candidates
        .iter()
        .find(|f| f.body().is_some())
        .or_else(|| candidates.first())?;
    let mut diags = Diags::default();
    let ctx = ModuleCtx::new(&file, &mut diags);
    let (ir, map) = body::lower_fn(&ctx, f, &mut diags);
    Some(LoweredFunction {
        ir,
        map,
        diagnostics: diags.0,
    })
}

/// Names of the `.entry` kernels, in source order.
pub fn entry_names(parse: &Parse) -> Vec<String> {
    parse
        .tree()
        .functions()
        .filter(|f| f.is_entry())
        .filter_map(|f| f.name())
        .collect()
}
