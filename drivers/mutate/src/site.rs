//! The candidate kernel as the mutation operators see it: each lowered
//! instruction (what it is: [`InstrData`]) beside its syntax (where its
//! opcode and each operand are in the PTX text), so an operator can decide
//! from the decoded form and then edit the exact bytes.

use ptxeq_ir::{InstrData, KernelIr, RegId};
use ptxeq_syntax::ast::{self, Operand as SynOp};
use ptxeq_syntax::{LineIndex, SyntaxKind, TextRange};

/// One operand as written.
#[derive(Clone, Debug)]
pub struct SynOperand {
    pub op: SynOp,
    pub start: u32,
    pub end: u32,
    pub text: String,
}

/// One instruction of the kernel.
#[derive(Clone, Debug)]
pub struct Site {
    /// Index into the kernel's instruction list (the engine's
    /// `InstrRef::kernel(index)`).
    pub index: u32,
    pub data: InstrData,
    /// The instruction's bytes (guard to `;`).
    pub start: u32,
    pub end: u32,
    /// 1-based PTX line.
    pub line: u32,
    /// The opcode with its modifiers as written (`setp.lt.s32`) and where.
    pub opcode: String,
    pub opcode_start: u32,
    pub opcode_end: u32,
    /// Operands in source order (a `%p|%q` pair is one operand here).
    pub operands: Vec<SynOperand>,
}

impl Site {
    /// The dotted words of the opcode: `["setp", "lt", "s32"]`.
    pub fn words(&self) -> Vec<&str> {
        self.opcode.split('.').collect()
    }

    /// The opcode with `words` joined back.
    pub fn with_words(words: &[&str]) -> String {
        words.join(".")
    }
}

/// The candidate kernel: its text, lowered IR and one [`Site`] per
/// instruction.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub text: String,
    pub entry: String,
    pub ir: KernelIr,
    pub sites: Vec<Site>,
    /// The kernel function's bytes (for whole-function rewrites).
    pub func_start: u32,
    pub func_end: u32,
    /// Every register token of the function: (start, end, name).
    pub reg_tokens: Vec<(u32, u32, String)>,
}

fn bounds(r: TextRange) -> (u32, u32) {
    (u32::from(r.start()), u32::from(r.end()))
}

impl Kernel {
    /// Lowers `text` and pairs entry `entry`'s instructions (the file's
    /// only entry when `None`) with their syntax.
    pub fn load(text: &str, entry: Option<&str>) -> Result<Kernel, String> {
        let lowered = ptxeq_lower::lower_source(text);
        let idx = match entry {
            Some(name) => lowered
                .module
                .kernels
                .iter()
                .position(|k| k.name == name)
                .ok_or_else(|| format!("no .entry `{name}`"))?,
            None if lowered.module.kernels.len() == 1 => 0,
            None => return Err("the file has several entries and the spec names none".into()),
        };
        let ir = lowered.module.kernels[idx].clone();
        let map = &lowered.kernel_maps[idx];
        let parse = ptxeq_syntax::parse(text);
        let root = parse.syntax();
        let file = parse.tree();
        let func = file
            .functions()
            .find(|f| f.name().as_deref() == Some(ir.name.as_str()) && f.body().is_some())
            .ok_or_else(|| format!("no body for `{}`", ir.name))?;
        let (func_start, func_end) = bounds(func.syntax().text_range());
        let mut by_start = std::collections::HashMap::new();
        for n in root.descendants() {
            if let Some(i) = ast::Instruction::cast(n) {
                by_start.insert(i.syntax().text_range(), i);
            }
        }
        let lines = LineIndex::new(text);
        let mut sites = Vec::with_capacity(ir.instrs.len());
        for (i, data) in ir.instrs.iter().enumerate() {
            let span = map.instr(i);
            let range = TextRange::new(span.start.into(), span.end.into());
            let Some(node) = by_start.get(&range) else {
                return Err(format!("instruction {i} has no syntax node at {span:?}"));
            };
            let (opcode_start, opcode_end) = node.opcode_range().map(bounds).unwrap_or((0, 0));
            let operands = node
                .operands()
                .into_iter()
                .zip(node.operand_ranges())
                .map(|(op, r)| {
                    let (s, e) = bounds(r);
                    SynOperand {
                        op,
                        start: s,
                        end: e,
                        text: text[s as usize..e as usize].to_string(),
                    }
                })
                .collect();
            sites.push(Site {
                index: i as u32,
                data: data.clone(),
                start: span.start,
                end: span.end,
                line: lines.line_col(range.start()).0,
                opcode: text[opcode_start as usize..opcode_end as usize].to_string(),
                opcode_start,
                opcode_end,
                operands,
            });
        }
        let reg_tokens = func
            .syntax()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| t.kind() == SyntaxKind::REG)
            .map(|t| {
                let (s, e) = bounds(t.text_range());
                (s, e, t.text().to_string())
            })
            .collect();
        Ok(Kernel {
            text: text.to_string(),
            entry: ir.name.clone(),
            ir,
            sites,
            func_start,
            func_end,
            reg_tokens,
        })
    }

    /// The instruction's text.
    pub fn instr_text(&self, s: &Site) -> &str {
        &self.text[s.start as usize..s.end as usize]
    }

    /// Whether the register's name is declared once in the function (a
    /// name shadowed in a nested `{ }` scope cannot be edited by name).
    pub fn unique_name(&self, r: RegId) -> bool {
        let name = &self.ir.reg(r).name;
        self.ir.regs.iter().filter(|x| &x.name == name).count() == 1
    }
}
