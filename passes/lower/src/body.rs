//! Lowering one function: params, nested blocks, instructions, `.loc`.

use std::collections::VecDeque;

use ptxeq_ir::{
    AddrBase, Address, Decoded, Guard, Imm, Instr, InstrData, KernelIr, Label, LabelId, Operand,
    ParamDecl, ParamId, RegId, RegInfo, SourceLoc, SourceMap, Span, SpecialReg, StateSpace, Symbol,
    VarDecl, VarId, VarScope, decode,
};
use ptxeq_syntax::ast::{
    self,
    view::{AddrBaseRef, ImmValue, InstructionRef, LocRef, NodeRef, OperandRef},
};
use ptxeq_syntax::{SyntaxKind, SyntaxNode, TextRange};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::regs::{expand_reg_names, param_decl, reg_info, span_of, var_decl};
use crate::scopes::{Scopes, Tables};
use crate::{Diags, ModuleCtx};

fn span(r: TextRange) -> Span {
    Span {
        start: r.start().into(),
        end: r.end().into(),
    }
}

/// Register-file limit per function: far above anything a compiler emits
/// (nvcc numbers a few thousand), low enough that `%r<4000000000>` is a
/// diagnostic rather than an out-of-memory abort.
const MAX_REGS: usize = 1 << 20;

struct FnLower<'a> {
    ctx: &'a ModuleCtx,
    diags: &'a mut Diags,
    scopes: Scopes,
    regs: Vec<RegInfo>,
    vars: Vec<VarDecl>,
    params: Vec<ParamDecl>,
    labels: Vec<Label>,
    instrs: Vec<InstrData>,
    /// PTX ranges, parallel to `instrs`, `vars`, `params`.
    instr_spans: Vec<Span>,
    var_spans: Vec<Span>,
    param_spans: Vec<Span>,
    loc: Option<SourceLoc>,
    /// Last full location seen at each `(file, line, col)`, to rebuild
    /// `inlined_at` chains: `.loc 3 476 13, inlined_at 2 304 9` refers to the
    /// earlier `.loc 2 304 9, ..., inlined_at 1 17 5`.
    loc_by_pos: FxHashMap<(u32, u32, u32), SourceLoc>,
}

/// The function's name tables (a macro, so that the borrow is of the
/// fields and `self.scopes` stays mutably borrowable).
macro_rules! tables {
    ($l:expr) => {
        Tables {
            regs: &$l.regs,
            vars: &$l.vars,
            params: &$l.params,
            labels: &$l.labels,
        }
    };
}

pub(crate) fn lower_fn(
    ctx: &ModuleCtx,
    f: &ast::Function,
    diags: &mut Diags,
) -> (KernelIr, SourceMap) {
    let name_span = f
        .name_range()
        .map(span)
        .unwrap_or_else(|| span_of(f.syntax()));
    let name = f.name().unwrap_or_else(|| {
        diags.push("function without a name".into(), name_span);
        String::from("<unnamed>")
    });
    let mut l = FnLower {
        ctx,
        diags,
        scopes: Scopes::new(),
        regs: Vec::new(),
        vars: ctx.globals.clone(),
        params: Vec::new(),
        labels: Vec::new(),
        instrs: Vec::new(),
        instr_spans: Vec::new(),
        var_spans: ctx.global_spans.clone(),
        param_spans: Vec::new(),
        loc: None,
        loc_by_pos: FxHashMap::default(),
    };
    for (i, g) in l.vars.iter().enumerate() {
        let _ = l
            .scopes
            .declare_sym(&g.name, Symbol::Var(VarId(i as u32)), tables!(l));
    }
    l.scopes.push();
    for (decl, is_return) in f
        .params()
        .iter()
        .map(|p| (p, false))
        .chain(f.return_params().iter().map(|p| (p, true)))
        .collect::<Vec<_>>()
    {
        l.param(decl, is_return);
    }
    let directives = f.perf_directives();
    let dims3 = |key: &str| -> Option<[u32; 3]> {
        let (_, v) = directives.iter().find(|(n, _)| n == key)?;
        let get = |i: usize| {
            v.get(i)
                .map_or(1, |x| u32::try_from(*x).unwrap_or(u32::MAX))
        };
        Some([get(0), get(1), get(2)])
    };
    let reqntid = dims3("reqntid");
    let maxntid = dims3("maxntid");
    let body = f.body();
    if let Some(b) = &body {
        l.block(b.syntax());
    }
    let ir = KernelIr {
        name,
        is_entry: f.is_entry(),
        linkage: f.linkage(),
        has_body: body.is_some(),
        params: l.params,
        reqntid,
        maxntid,
        directives,
        regs: l.regs,
        vars: l.vars,
        instrs: l.instrs,
        labels: l.labels,
        files: ctx.files.clone(),
    };
    let map = SourceMap {
        name: name_span,
        instrs: l.instr_spans,
        vars: l.var_spans,
        params: l.param_spans,
    };
    (ir, map)
}

/// The cursor node of `parent`'s child `n` (for the few statements whose
/// accessors need one).
fn red_child(parent: &SyntaxNode, n: NodeRef<'_>) -> Option<SyntaxNode> {
    let range = n.text_range();
    let kind = n.kind();
    let matches = |c: &SyntaxNode| c.text_range() == range && c.kind() == kind;
    parent
        .child_or_token_at_range(range)
        .and_then(|e| e.into_node())
        .filter(matches)
        .or_else(|| parent.children().find(matches))
}

impl FnLower<'_> {
    fn param(&mut self, decl: &ast::ParamDecl, is_return: bool) {
        let mut p = param_decl(decl, is_return, self.diags);
        let id = ParamId(self.params.len() as u32);
        let sp = span_of(decl.syntax());
        if p.space == StateSpace::Reg {
            let r = self.new_reg(RegInfo {
                name: p.name.clone(),
                ty: p.ty,
                vector: p.vector,
            });
            p.reg = Some(r);
        }
        self.params.push(p);
        self.param_spans.push(sp);
        let p = &self.params[id.0 as usize];
        let clash = match p.reg {
            Some(r) => self.scopes.declare_reg(&p.name, r, tables!(self)),
            None => self
                .scopes
                .declare_sym(&p.name, Symbol::Param(id), tables!(self)),
        }
        .is_err();
        if clash {
            self.diags
                .push(format!("parameter `{}` declared twice", p.name), sp);
        }
    }

    fn new_reg(&mut self, info: RegInfo) -> RegId {
        let id = RegId(self.regs.len() as u32);
        self.regs.push(info);
        id
    }

    /// Lowers a `{ }` block in its own scope. Declarations and labels of the
    /// block are entered first, so forward branches and (tolerated)
    /// use-before-declaration resolve.
    ///
    /// The walk is over borrowed green nodes ([`NodeRef`]); only the rare
    /// declarations and nested blocks get a cursor node ([`red_child`]).
    fn block(&mut self, b: &SyntaxNode) {
        self.scopes.push();
        let view = NodeRef::new(b);
        let mut pending: VecDeque<LabelId> = VecDeque::new();
        for n in view.children() {
            match n.kind() {
                SyntaxKind::REG_DECL => {
                    if let Some(d) = red_child(b, n).and_then(ast::RegDecl::cast) {
                        self.reg_decl(&d);
                    }
                }
                SyntaxKind::VAR_DECL => {
                    if let Some(d) = red_child(b, n).and_then(ast::VarDecl::cast) {
                        self.local_var(&d);
                    }
                }
                SyntaxKind::LABEL | SyntaxKind::CALL_PROTOTYPE => {
                    let name = n.token(SyntaxKind::IDENT).map(|t| t.text());
                    let prototype = n.kind() == SyntaxKind::CALL_PROTOTYPE;
                    if let Some(id) = self.declare_label(name, span(n.text_range()), prototype) {
                        pending.push_back(id);
                    }
                }
                _ => {}
            }
        }
        for n in view.children() {
            match n.kind() {
                SyntaxKind::INSTRUCTION => {
                    if let Some(i) = InstructionRef::cast(n) {
                        self.instruction(i);
                    }
                }
                SyntaxKind::LABEL | SyntaxKind::CALL_PROTOTYPE
                    if n.token(SyntaxKind::IDENT).is_some() =>
                {
                    self.place_label(&mut pending);
                }
                SyntaxKind::BLOCK => {
                    if let Some(inner) = red_child(b, n) {
                        self.block(&inner);
                    }
                }
                SyntaxKind::LOC_DIRECTIVE => {
                    if let Some(l) = LocRef::cast(n) {
                        self.loc(l);
                    }
                }
                _ => {}
            }
        }
        self.scopes.pop();
    }

    fn place_label(&mut self, pending: &mut VecDeque<LabelId>) {
        if let Some(id) = pending.pop_front() {
            self.labels[id.index()].target = self.instrs.len() as u32;
        }
    }

    fn declare_label(&mut self, name: Option<&str>, sp: Span, prototype: bool) -> Option<LabelId> {
        let name = name?;
        let id = LabelId(self.labels.len() as u32);
        self.labels.push(Label {
            name: name.to_owned(),
            target: 0,
            prototype,
        });
        if self.scopes.declare_label(name, id, tables!(self)).is_err() {
            self.diags
                .push(format!("label `{name}` declared twice in one block"), sp);
        }
        Some(id)
    }

    fn reg_decl(&mut self, d: &ast::RegDecl) {
        let sp = span_of(d.syntax());
        let template = reg_info(d, sp, self.diags);
        let names = expand_reg_names(d, MAX_REGS.saturating_sub(self.regs.len()));
        let Some(names) = names else {
            self.diags.push(
                format!("more than {MAX_REGS} registers in one function"),
                sp,
            );
            return;
        };
        for name in names {
            let id = self.new_reg(RegInfo {
                name,
                ..template.clone()
            });
            let name = &self.regs[id.index()].name;
            if self.scopes.declare_reg(name, id, tables!(self)).is_err() {
                self.diags
                    .push(format!("register `{name}` declared twice in one block"), sp);
            }
        }
    }

    fn local_var(&mut self, d: &ast::VarDecl) {
        let Some((v, sp)) = var_decl(d, VarScope::Function, self.diags) else {
            return;
        };
        let id = VarId(self.vars.len() as u32);
        self.vars.push(v);
        self.var_spans.push(sp);
        let name = &self.vars[id.0 as usize].name;
        if self
            .scopes
            .declare_sym(name, Symbol::Var(id), tables!(self))
            .is_err()
        {
            self.diags
                .push(format!("variable `{name}` declared twice in one block"), sp);
        }
    }

    fn loc(&mut self, l: LocRef<'_>) {
        let (Some(file), Some(line), col) = l.position() else {
            return;
        };
        let col = col.unwrap_or(0);
        let inlined_at = l.inlined_at().map(|(f, li, c)| {
            Box::new(
                self.loc_by_pos
                    .get(&(f, li, c))
                    .cloned()
                    .unwrap_or(SourceLoc {
                        file: f,
                        line: li,
                        col: c,
                        inlined_at: None,
                    }),
            )
        });
        let loc = SourceLoc {
            file,
            line,
            col,
            inlined_at,
        };
        self.loc_by_pos.insert((file, line, col), loc.clone());
        self.loc = Some(loc);
    }

    fn instruction(&mut self, i: InstructionRef<'_>) {
        let sp = span(i.syntax().text_range());
        let mut errors: Vec<String> = Vec::new();
        let guard = i
            .guard()
            .and_then(|g| match self.scopes.reg(g.reg, tables!(self)) {
                Some(reg) => Some(Guard {
                    negated: g.negated,
                    reg,
                }),
                None => {
                    let msg = format!("undeclared guard register `{}`", g.reg);
                    self.diags.push(msg.clone(), sp);
                    errors.push(msg);
                    None
                }
            });
        let Some(opcode) = i.opcode() else {
            let text = i.syntax().text();
            self.push(
                guard,
                sp,
                Instr::Unknown {
                    text: text.trim().to_string(),
                    reason: "malformed instruction (see syntax errors)".into(),
                },
                SmallVec::new(),
            );
            return;
        };
        let mods: SmallVec<[&str; 8]> = i.modifiers().collect();
        if let Some(msg) = oversized_immediate(opcode, &mods, i.operands()) {
            self.diags.push(msg.clone(), sp);
            errors.push(msg);
        }
        let ops: Vec<Operand> = i
            .operands()
            .map(|o| self.operand(o, sp, &mut errors))
            .collect();
        let decoded = if errors.is_empty() {
            decode(opcode, &mods, ops)
        } else {
            let mut text = opcode.to_owned();
            for m in &mods {
                text.push('.');
                text.push_str(m);
            }
            Decoded {
                instr: Instr::Unknown {
                    text,
                    reason: errors.join("; "),
                },
                operands: ops.into_iter().collect(),
            }
        };
        self.push(guard, sp, decoded.instr, decoded.operands);
    }

    fn push(
        &mut self,
        guard: Option<Guard>,
        sp: Span,
        instr: Instr,
        operands: SmallVec<[Operand; 4]>,
    ) {
        self.instrs.push(InstrData {
            guard,
            instr,
            operands,
            loc: self.loc.clone(),
        });
        self.instr_spans.push(sp);
    }

    fn reg(&self, name: &str) -> Option<RegId> {
        self.scopes.reg(name, tables!(self))
    }

    fn error(
        &mut self,
        msg: String,
        range: Option<TextRange>,
        instr: Span,
        errors: &mut Vec<String>,
    ) -> Operand {
        self.diags
            .push(msg.clone(), range.map(span).unwrap_or(instr));
        errors.push(msg);
        Operand::Sink
    }

    fn operand(&mut self, o: OperandRef<'_>, instr: Span, errors: &mut Vec<String>) -> Operand {
        match o {
            OperandRef::Reg { name, range } => {
                if let Some(r) = self.reg(name) {
                    return Operand::Reg(r);
                }
                if let Some(s) = SpecialReg::parse(name) {
                    return Operand::Special(s);
                }
                if let Some((base, lane)) = name.rsplit_once('.')
                    && let Some(r) = self.reg(base)
                    && self.regs[r.index()].vector.is_some()
                    && let Some(lane) = ["x", "y", "z", "w"].iter().position(|l| *l == lane)
                {
                    return Operand::RegLane {
                        reg: r,
                        lane: lane as u8,
                    };
                }
                self.error(
                    format!("undeclared register `{name}`"),
                    Some(range),
                    instr,
                    errors,
                )
            }
            OperandRef::Imm(imm) => Operand::Imm(match imm {
                ImmValue::Int(value) => Imm::Int(value),
                ImmValue::F32Bits(b) => Imm::F32Bits(b),
                ImmValue::F64Bits(b) => Imm::F64Bits(b),
                ImmValue::Float(f) => Imm::F64Bits(f.to_bits()),
            }),
            OperandRef::Symbol { name, range } => {
                if let Some(r) = self.reg(name) {
                    return Operand::Reg(r);
                }
                if let Some(l) = self.scopes.label(name, tables!(self)) {
                    return Operand::Label(l);
                }
                // PTX's one predefined constant.
                if name == "WARP_SZ" {
                    return Operand::Imm(Imm::Int(32));
                }
                match self.symbol(name) {
                    Some(sym) => Operand::Symbol { sym, offset: 0 },
                    None => self.error(
                        format!("undeclared symbol `{name}`"),
                        Some(range),
                        instr,
                        errors,
                    ),
                }
            }
            OperandRef::SymbolOffset {
                name,
                offset,
                range,
            } => match self.symbol(name) {
                Some(sym) => Operand::Symbol { sym, offset },
                None => self.error(
                    format!("undeclared symbol `{name}`"),
                    Some(range),
                    instr,
                    errors,
                ),
            },
            OperandRef::Address {
                base,
                offset,
                range,
                node,
            } => {
                let base = match base {
                    AddrBaseRef::Reg(name) => match self.reg(name) {
                        Some(r) => AddrBase::Reg(r),
                        None => {
                            return self.error(
                                format!("undeclared register `{name}`"),
                                Some(range),
                                instr,
                                errors,
                            );
                        }
                    },
                    AddrBaseRef::Symbol(name) => {
                        if let Some(r) = self.reg(name) {
                            AddrBase::Reg(r)
                        } else if let Some(sym) = self.symbol(name) {
                            AddrBase::Symbol(sym)
                        } else {
                            return self.error(
                                format!("undeclared symbol `{name}`"),
                                Some(range),
                                instr,
                                errors,
                            );
                        }
                    }
                    // Absolute addresses are bit patterns; a negative literal wraps.
                    AddrBaseRef::Imm(v) => AddrBase::Imm(v as u64),
                };
                let tmap = Address { base, offset };
                let coords: Vec<Operand> = node
                    .operands()
                    .map(|e| self.operand(e, instr, errors))
                    .collect();
                if coords.is_empty() {
                    Operand::Addr(tmap)
                } else {
                    Operand::TensorAddr { tmap, coords }
                }
            }
            OperandRef::Vector(node) => Operand::Vector(
                node.operands()
                    .map(|e| self.operand(e, instr, errors))
                    .collect(),
            ),
            OperandRef::Sink { .. } => Operand::Sink,
            OperandRef::Not(x) => Operand::Not(Box::new(self.operand(x.get(), instr, errors))),
            OperandRef::Pair(a, b) => Operand::Pair(
                Box::new(self.operand(a.get(), instr, errors)),
                Box::new(self.operand(b.get(), instr, errors)),
            ),
            OperandRef::List(node) => Operand::List(
                node.operands()
                    .map(|e| self.operand(e, instr, errors))
                    .collect(),
            ),
        }
    }

    /// Variable, param (innermost scope first), then module function.
    fn symbol(&self, name: &str) -> Option<Symbol> {
        self.scopes.sym(name, tables!(self)).or_else(|| {
            self.ctx
                .funcs
                .contains(name)
                .then(|| Symbol::Func(name.to_string()))
        })
    }
}

/// An integer immediate too wide for the integer instruction that uses it
/// (`add.s32 %r1, %r2, 4294967296`): the message, or `None`. PTX gives such
/// a constant no meaning we could rely on (truncating it silently would
/// check a different kernel than the one written), so it is an error with
/// the instruction's location, as an undeclared register is. A value fits
/// `W` bits when it is a signed or an unsigned `W`-bit number
/// (`-2^(W-1)` to `2^W - 1`), so `0xFFFFFFFF` and `-1` both fit `.b32`.
/// Checked for the instructions whose sources all have the width of their
/// one integer type suffix (for `mul.wide`/`mad.wide` that is the source
/// width); conversions, shifts and the rest have several widths and are
/// left to their decoders.
pub(crate) fn oversized_immediate<'a>(
    opcode: &str,
    mods: &[&str],
    operands: impl Iterator<Item = OperandRef<'a>>,
) -> Option<String> {
    const SAME_WIDTH: [&str; 16] = [
        "add", "sub", "mul", "mad", "min", "max", "and", "or", "xor", "not", "mov", "setp", "selp",
        "div", "rem", "neg",
    ];
    if !SAME_WIDTH.contains(&opcode) {
        return None;
    }
    let mut widths = mods.iter().filter_map(|m| match *m {
        "s16" | "u16" | "b16" => Some((*m, 16u32)),
        "s32" | "u32" | "b32" => Some((*m, 32)),
        _ => None,
    });
    let (ty, w) = widths.next()?;
    let (lo, hi) = (-(1i128 << (w - 1)), (1i128 << w) - 1);
    operands.into_iter().find_map(|o| match o {
        OperandRef::Imm(ImmValue::Int(v)) if v < lo || v > hi => Some(format!(
            "the immediate {v} does not fit the {w}-bit operands of `{opcode}.{ty}` \
             ({lo} to {hi}); write it in range, or use a 64-bit instruction"
        )),
        _ => None,
    })
}
