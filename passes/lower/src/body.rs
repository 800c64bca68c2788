//! Lowering one function: params, nested blocks, instructions, `.loc`.

use std::collections::{HashMap, VecDeque};

use ptxeq_ir::{
    AddrBase, Address, Decoded, Guard, Imm, Instr, InstrData, KernelIr, Label, LabelId, Operand,
    ParamDecl, ParamId, RegId, RegInfo, SourceLoc, SourceMap, Span, SpecialReg, StateSpace, Symbol,
    VarDecl, VarId, VarScope, decode,
};
use ptxeq_syntax::TextRange;
use ptxeq_syntax::ast::{self, Stmt};

use crate::regs::{expand_reg_names, param_decl, reg_info, span_of, var_decl};
use crate::scopes::Scopes;
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
    loc_by_pos: HashMap<(u32, u32, u32), SourceLoc>,
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
        loc_by_pos: HashMap::new(),
    };
    for (i, g) in ctx.globals.iter().enumerate() {
        let _ = l.scopes.declare_sym(&g.name, Symbol::Var(VarId(i as u32)));
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
        l.block(b);
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

impl FnLower<'_> {
    fn param(&mut self, decl: &ast::ParamDecl, is_return: bool) {
        let mut p = param_decl(decl, is_return, self.diags);
        let id = ParamId(self.params.len() as u32);
        let sp = span_of(decl.syntax());
        let clash = if p.space == StateSpace::Reg {
            let r = self.new_reg(RegInfo {
                name: p.name.clone(),
                ty: p.ty,
                vector: p.vector,
            });
            p.reg = Some(r);
            self.scopes.declare_reg(&p.name, r).is_err()
        } else {
            self.scopes.declare_sym(&p.name, Symbol::Param(id)).is_err()
        };
        if clash {
            self.diags
                .push(format!("parameter `{}` declared twice", p.name), sp);
        }
        self.params.push(p);
        self.param_spans.push(sp);
    }

    fn new_reg(&mut self, info: RegInfo) -> RegId {
        let id = RegId(self.regs.len() as u32);
        self.regs.push(info);
        id
    }

    /// Lowers a `{ }` block in its own scope. Declarations and labels of the
    /// block are entered first, so forward branches and (tolerated)
    /// use-before-declaration resolve.
    fn block(&mut self, b: &ast::Block) {
        self.scopes.push();
        let stmts: Vec<Stmt> = b.statements().collect();
        let mut pending: VecDeque<LabelId> = VecDeque::new();
        for s in &stmts {
            match s {
                Stmt::RegDecl(d) => self.reg_decl(d),
                Stmt::VarDecl(d) => self.local_var(d),
                Stmt::Label(lbl) => {
                    if let Some(id) = self.declare_label(lbl.name(), span_of(lbl.syntax()), false) {
                        pending.push_back(id);
                    }
                }
                Stmt::Other(n) => {
                    if let Some(p) = ast::CallPrototype::cast(n.clone())
                        && let Some(id) = self.declare_label(p.name(), span_of(n), true)
                    {
                        pending.push_back(id);
                    }
                }
                _ => {}
            }
        }
        for s in stmts {
            match s {
                Stmt::Instruction(i) => self.instruction(&i),
                Stmt::Label(lbl) if lbl.name().is_some() => self.place_label(&mut pending),
                Stmt::Other(n)
                    if ast::CallPrototype::cast(n.clone()).is_some_and(|p| p.name().is_some()) =>
                {
                    self.place_label(&mut pending)
                }
                Stmt::Block(inner) => self.block(&inner),
                Stmt::Loc(l) => self.loc(&l),
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

    fn declare_label(
        &mut self,
        name: Option<String>,
        sp: Span,
        prototype: bool,
    ) -> Option<LabelId> {
        let name = name?;
        let id = LabelId(self.labels.len() as u32);
        self.labels.push(Label {
            name: name.clone(),
            target: 0,
            prototype,
        });
        if self.scopes.declare_label(&name, id).is_err() {
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
                name: name.clone(),
                ..template.clone()
            });
            if self.scopes.declare_reg(&name, id).is_err() {
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
        if self.scopes.declare_sym(&v.name, Symbol::Var(id)).is_err() {
            self.diags.push(
                format!("variable `{}` declared twice in one block", v.name),
                sp,
            );
        }
        self.vars.push(v);
        self.var_spans.push(sp);
    }

    fn loc(&mut self, l: &ast::LocDirective) {
        let (Some(file), Some(line)) = (l.file(), l.line()) else {
            return;
        };
        let col = l.column().unwrap_or(0);
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

    fn instruction(&mut self, i: &ast::Instruction) {
        let sp = span_of(i.syntax());
        let mut errors: Vec<String> = Vec::new();
        let guard = i.guard().and_then(|g| match self.resolve_reg_name(&g.reg) {
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
            let text = i.syntax().text().to_string();
            self.push(
                guard,
                sp,
                Instr::Unknown {
                    text: text.trim().to_string(),
                    reason: "malformed instruction (see syntax errors)".into(),
                },
                Vec::new(),
            );
            return;
        };
        let mods = i.modifiers();
        let ops: Vec<Operand> = i
            .operands()
            .iter()
            .map(|o| self.operand(o, sp, &mut errors))
            .collect();
        let decoded = if errors.is_empty() {
            let mods: Vec<&str> = mods.iter().map(String::as_str).collect();
            decode(&opcode, &mods, ops)
        } else {
            let mut text = opcode.clone();
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
        self.push(guard, sp, decoded.instr, decoded.operands.into_vec());
    }

    fn push(&mut self, guard: Option<Guard>, sp: Span, instr: Instr, operands: Vec<Operand>) {
        self.instrs.push(InstrData {
            guard,
            instr,
            operands: operands.into_iter().collect(),
            loc: self.loc.clone(),
        });
        self.instr_spans.push(sp);
    }

    /// A register named with or without `%` (inline asm declares `P1`, `p`).
    fn resolve_reg_name(&self, name: &str) -> Option<RegId> {
        self.scopes.reg(name)
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

    fn operand(&mut self, o: &ast::Operand, instr: Span, errors: &mut Vec<String>) -> Operand {
        match o {
            ast::Operand::Reg { name, range } => {
                if let Some(r) = self.scopes.reg(name) {
                    return Operand::Reg(r);
                }
                if let Some(s) = SpecialReg::parse(name) {
                    return Operand::Special(s);
                }
                if let Some((base, lane)) = name.rsplit_once('.')
                    && let Some(r) = self.scopes.reg(base)
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
                    Some(*range),
                    instr,
                    errors,
                )
            }
            ast::Operand::Imm(imm) => Operand::Imm(match imm {
                ast::Immediate::Int { value, .. } => Imm::Int(*value),
                ast::Immediate::F32Bits(b) => Imm::F32Bits(*b),
                ast::Immediate::F64Bits(b) => Imm::F64Bits(*b),
                ast::Immediate::Float(f) => Imm::F64Bits(f.to_bits()),
            }),
            ast::Operand::Symbol { name, range } => {
                if let Some(r) = self.scopes.reg(name) {
                    return Operand::Reg(r);
                }
                if let Some(l) = self.scopes.label(name) {
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
                        Some(*range),
                        instr,
                        errors,
                    ),
                }
            }
            ast::Operand::SymbolOffset {
                name,
                offset,
                range,
            } => match self.symbol(name) {
                Some(sym) => Operand::Symbol {
                    sym,
                    offset: *offset,
                },
                None => self.error(
                    format!("undeclared symbol `{name}`"),
                    Some(*range),
                    instr,
                    errors,
                ),
            },
            ast::Operand::Address {
                base,
                offset,
                range,
            } => {
                let base = match base {
                    ast::AddrBase::Reg(name) => match self.scopes.reg(name) {
                        Some(r) => AddrBase::Reg(r),
                        None => {
                            return self.error(
                                format!("undeclared register `{name}`"),
                                Some(*range),
                                instr,
                                errors,
                            );
                        }
                    },
                    ast::AddrBase::Symbol(name) => {
                        if let Some(r) = self.scopes.reg(name) {
                            AddrBase::Reg(r)
                        } else if let Some(sym) = self.symbol(name) {
                            AddrBase::Symbol(sym)
                        } else {
                            return self.error(
                                format!("undeclared symbol `{name}`"),
                                Some(*range),
                                instr,
                                errors,
                            );
                        }
                    }
                    // Absolute addresses are bit patterns; a negative literal wraps.
                    ast::AddrBase::Imm(v) => AddrBase::Imm(*v as u64),
                };
                Operand::Addr(Address {
                    base,
                    offset: *offset,
                })
            }
            ast::Operand::Vector { elems, .. } => Operand::Vector(
                elems
                    .iter()
                    .map(|e| self.operand(e, instr, errors))
                    .collect(),
            ),
            ast::Operand::Sink { .. } => Operand::Sink,
            ast::Operand::Not(x) => Operand::Not(Box::new(self.operand(x, instr, errors))),
            ast::Operand::Pair(a, b) => Operand::Pair(
                Box::new(self.operand(a, instr, errors)),
                Box::new(self.operand(b, instr, errors)),
            ),
            ast::Operand::List { elems, .. } => Operand::List(
                elems
                    .iter()
                    .map(|e| self.operand(e, instr, errors))
                    .collect(),
            ),
        }
    }

    /// Variable, param (innermost scope first), then module function.
    fn symbol(&self, name: &str) -> Option<Symbol> {
        self.scopes.sym(name).or_else(|| {
            self.ctx
                .funcs
                .contains(name)
                .then(|| Symbol::Func(name.to_string()))
        })
    }
}
