//! Naming instructions the way a kernel engineer reads them: the decoded
//! instruction, its PTX line and its CUDA/Python source line.

use ptxeq_db::{Database, SourceFile};
use ptxeq_exec::{CtaInput, InstrRef};
use ptxeq_syntax::{LineIndex, TextSize};
use serde::Serialize;

/// Where an instruction is.
#[derive(Clone, Debug, Serialize)]
pub struct Position {
    /// The `.entry` or `.func` it belongs to.
    pub function: String,
    /// Index into that function's instructions (as `ptxeq ir` prints them).
    pub index: u32,
    /// The decoded instruction.
    pub text: String,
    /// 1-based line in the PTX file.
    pub ptx_line: Option<u32>,
    /// `file.cu:line:col` from `.loc`, when the PTX has line info.
    pub source: Option<String>,
    /// The `.file` path and line of the outermost `.loc` (the user's own
    /// code when the instruction was inlined), for SARIF and source
    /// excerpts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<u32>,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "instruction {}", self.index)?;
        if let Some(l) = self.ptx_line {
            write!(f, " (ptx:{l}")?;
            if let Some(s) = &self.source {
                write!(f, ", {s}")?;
            }
            f.write_str(")")?;
        }
        if self.function.is_empty() {
            return write!(f, " `{}`", self.text);
        }
        write!(f, " `{}`", self.text)
    }
}

/// Resolves instruction references of one kernel's runs.
pub struct Resolver<'a> {
    db: &'a Database,
    file: SourceFile,
    input: Option<&'a CtaInput>,
    lines: LineIndex,
}

impl<'a> Resolver<'a> {
    /// `k.cu:11 | s[t] = x[t];`: the source line of `pos` when its `.file`
    /// exists on disk (see `source_lines`).
    pub fn source_excerpt(&self, pos: &Position) -> Option<String> {
        let (file, line) = (pos.source_file.as_deref()?, pos.source_line?);
        let (path, text) = crate::source_lines::source_line(self.file.path(self.db), file, line)?;
        let name = path.file_name()?.to_string_lossy().into_owned();
        Some(format!("{name}:{line} | {text}"))
    }

    /// Instruction `index` of the function called `function` — the kernel
    /// or one of its `.func`s (a structural problem found inside a callee
    /// names the callee, and its index counts there, not in the kernel).
    pub fn resolve_named(&self, function: &str, index: u32) -> Position {
        let func = self
            .input
            .filter(|i| i.kernel.name != function)
            .and_then(|i| i.funcs.iter().position(|f| f.name == function))
            .map_or(0, |p| p as u32 + 1);
        self.resolve(InstrRef { func, index })
    }

    pub fn new(db: &'a Database, file: SourceFile, input: Option<&'a CtaInput>) -> Self {
        Resolver {
            db,
            file,
            input,
            lines: LineIndex::new(file.text(db)),
        }
    }

    pub fn resolve(&self, r: InstrRef) -> Position {
        let Some(input) = self.input else {
            return Position {
                function: String::new(),
                index: r.index,
                text: String::new(),
                ptx_line: None,
                source: None,
                source_file: None,
                source_line: None,
            };
        };
        let k = if r.func == 0 {
            Some(&input.kernel)
        } else {
            input.funcs.get(r.func as usize - 1)
        };
        let Some(k) = k else {
            return Position {
                function: format!("function #{}", r.func),
                index: r.index,
                text: String::new(),
                ptx_line: None,
                source: None,
                source_file: None,
                source_line: None,
            };
        };
        let lowered = ptxeq_db::lowered_module(self.db, self.file);
        let ptx_line = lowered.map_of(&k.name).map(|(_, map)| {
            self.lines
                .line_col(TextSize::from(map.instr(r.index as usize).start))
                .0
        });
        let loc = k.instrs.get(r.index as usize).and_then(|d| d.loc.as_ref());
        let source = loc.map(|l| k.loc_text(l));
        let outer = loc.map(|l| l.outermost());
        let source_file = outer.and_then(|l| k.file_path(l.file)).map(str::to_string);
        let source_line = outer.filter(|_| source_file.is_some()).map(|l| l.line);
        Position {
            function: k.name.clone(),
            index: r.index,
            text: k.instr_text(r.index as usize),
            ptx_line,
            source,
            source_file,
            source_line,
        }
    }
}
