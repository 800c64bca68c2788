//! The operators: semantic mutations (a correct checker must refute them
//! unless the changed instruction is dead) and equivalence-preserving
//! rewrites (a correct checker must keep proving them).
//!
//! Every operator decides from the decoded instruction ([`Site::data`])
//! and edits the PTX text at the syntax ranges, so a mutant is ordinary
//! PTX that goes through the whole pipeline. Enumeration is
//! deterministic: the same kernel text gives the same mutants, in
//! instruction order, with stable ids (`op:instr[:variant]`).

use ptxeq_ir::{
    BarKind, Carry, CmpOp, Imm, Instr, MulMode, Operand, RegId, ScalarType, StateSpace,
};
use ptxeq_syntax::ast::{AddrBase, Immediate, Operand as SynOp};
use serde::Serialize;

use crate::edit::{Edit, apply};
use crate::site::{Kernel, Site};

/// A mutation operator or a rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    // ---- semantic mutations ----
    /// An integer immediate `v` → `v + 1` (`v − 1` at the type's maximum).
    ImmInt,
    /// A float immediate `x` → `1.5·x` (`1` for zero).
    ImmFloat,
    /// The two sources of a non-commutative operation swapped (`sub`,
    /// `div`, `rem`, shifts, an asymmetric compare, `selp`, `fma`'s
    /// addend with a factor, ...).
    SwapOperands,
    /// `add` ↔ `sub`.
    AddSub,
    /// `mul` → `add`.
    MulToAdd,
    /// `fma`/`mad` `d, a, b, c` → `add d, a, c`.
    FmaToAdd,
    /// `max` ↔ `min`.
    MaxMin,
    /// A comparison negated (`lt` → `ge`) or moved across its boundary
    /// (`lt` → `le`).
    FlipCmp,
    /// One `bar.sync`/`barrier.sync`/`bar.warp.sync` deleted.
    DeleteBarrier,
    /// A `shfl` lane / offset immediate ± 1.
    ShflLane,
    /// A shared/global (or generic) address offset ± the access size.
    AddrOffset,
    /// A store's source register replaced by another register of the same
    /// type written just before.
    StoreSource,
    // ---- equivalence-preserving rewrites ----
    /// Two registers of one type swapped everywhere in the kernel.
    RenameRegs,
    /// Two adjacent independent instructions swapped.
    Reorder,
    /// `mul x, 2` → `add x, x` (and back; `shl x, 1` → `add x, x`).
    MulTwo,
    /// The sources of a commutative operation swapped (a compare mirrored).
    Commute,
}

impl Op {
    pub const ALL: [Op; 16] = [
        Op::ImmInt,
        Op::ImmFloat,
        Op::SwapOperands,
        Op::AddSub,
        Op::MulToAdd,
        Op::FmaToAdd,
        Op::MaxMin,
        Op::FlipCmp,
        Op::DeleteBarrier,
        Op::ShflLane,
        Op::AddrOffset,
        Op::StoreSource,
        Op::RenameRegs,
        Op::Reorder,
        Op::MulTwo,
        Op::Commute,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::ImmInt => "imm-int",
            Op::ImmFloat => "imm-float",
            Op::SwapOperands => "swap-operands",
            Op::AddSub => "add-sub",
            Op::MulToAdd => "mul-to-add",
            Op::FmaToAdd => "fma-to-add",
            Op::MaxMin => "max-min",
            Op::FlipCmp => "flip-cmp",
            Op::DeleteBarrier => "delete-barrier",
            Op::ShflLane => "shfl-lane",
            Op::AddrOffset => "addr-offset",
            Op::StoreSource => "store-source",
            Op::RenameRegs => "rename-regs",
            Op::Reorder => "reorder",
            Op::MulTwo => "mul-two",
            Op::Commute => "commute",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Whether this is an equivalence-preserving rewrite (the checker must
    /// keep `equivalent`), not a mutation.
    pub fn is_rewrite(self) -> bool {
        matches!(
            self,
            Op::RenameRegs | Op::Reorder | Op::MulTwo | Op::Commute
        )
    }
}

/// Which instruction's coverage tells whether a surviving mutant is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// This instruction of the mutant.
    Mutant(u32),
    /// This instruction of the original (a deleted instruction).
    Original(u32),
    /// No single instruction (a rewrite).
    None,
}

/// One mutant (or rewrite) of the candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Mutant {
    /// Stable id: `op:instr[:variant]`.
    pub id: String,
    pub op: Op,
    /// The instruction changed (the first one, for two-instruction edits).
    pub instr: u32,
    /// Its 1-based PTX line.
    pub line: u32,
    /// What changed, in words: `` `add.f32 …` → `sub.f32 …` ``.
    pub desc: String,
    #[serde(skip)]
    pub edits: Vec<Edit>,
    pub probe: Probe,
}

impl Mutant {
    /// The mutated PTX text (`None` if the edits do not apply: a bug).
    pub fn text(&self, original: &str) -> Option<String> {
        apply(original, &self.edits)
    }
}

/// Every mutant and rewrite of `k`, in instruction order.
pub fn enumerate(k: &Kernel) -> Vec<Mutant> {
    let mut out = Vec::new();
    for s in &k.sites {
        let mut g = Gen {
            k,
            s,
            out: &mut out,
        };
        g.imm();
        g.swap();
        g.add_sub();
        g.mul_to_add();
        g.fma_to_add();
        g.max_min();
        g.flip_cmp();
        g.delete_barrier();
        g.shfl_lane();
        g.addr_offset();
        g.store_source();
        g.commute();
        g.mul_two();
    }
    reorders(k, &mut out);
    renames(k, &mut out);
    out
}

struct Gen<'a> {
    k: &'a Kernel,
    s: &'a Site,
    out: &'a mut Vec<Mutant>,
}

/// The type an instruction computes in (for immediate widths).
fn instr_ty(i: &Instr) -> Option<ScalarType> {
    use Instr::*;
    Some(match i {
        Add { ty, .. } | Sub { ty, .. } | Mul { ty, .. } | Mad { ty, .. } | Fma { ty, .. } => *ty,
        Mul24 { ty, .. } | Mad24 { ty, .. } | Div { ty, .. } | Rem { ty } => *ty,
        Neg { ty, .. } | Abs { ty, .. } | Min { ty, .. } | Max { ty, .. } => *ty,
        Copysign { ty } | And { ty } | Or { ty } | Xor { ty } | Not { ty } => *ty,
        Shl { ty } | Shr { ty } | Selp { ty } | Mov { ty } => *ty,
        Setp { ty, .. } => *ty,
        Set { src_ty, .. } | Slct { src_ty, .. } => *src_ty,
        St(m) => m.ty,
        _ => return None,
    })
}

/// Instructions whose immediates are data (arithmetic, compare, select,
/// move, stored constants) rather than structure (barrier ids, masks,
/// sizes, which other operators or nothing should touch).
fn imm_is_data(i: &Instr) -> bool {
    use Instr::*;
    matches!(
        i,
        Add { .. }
            | Sub { .. }
            | Mul { .. }
            | Mad { .. }
            | Mul24 { .. }
            | Mad24 { .. }
            | Fma { .. }
            | Div { .. }
            | Rem { .. }
            | Min { .. }
            | Max { .. }
            | Copysign { .. }
            | And { .. }
            | Or { .. }
            | Xor { .. }
            | Shl { .. }
            | Shr { .. }
            | Setp { .. }
            | Set { .. }
            | Selp { .. }
            | Slct { .. }
            | Mov { .. }
            | St(_)
    )
}

fn hex_or_dec(orig: &str, v: i128, width: u32) -> String {
    if orig.starts_with("0x") || orig.starts_with("0X") {
        let m = if width >= 128 {
            v as u128
        } else {
            (v as u128) & ((1u128 << width) - 1)
        };
        format!("0x{m:x}")
    } else {
        v.to_string()
    }
}

fn cmp_negated(c: CmpOp) -> Option<CmpOp> {
    use CmpOp::*;
    Some(match c {
        Eq => Ne,
        Ne => Eq,
        Lt => Ge,
        Ge => Lt,
        Le => Gt,
        Gt => Le,
        Lo => Hs,
        Hs => Lo,
        Ls => Hi,
        Hi => Ls,
        Equ => Ne,
        Neu => Eq,
        Ltu => Ge,
        Geu => Lt,
        Leu => Gt,
        Gtu => Le,
        Num => Nan,
        Nan => Num,
    })
}

fn cmp_boundary(c: CmpOp) -> Option<CmpOp> {
    use CmpOp::*;
    Some(match c {
        Lt => Le,
        Le => Lt,
        Gt => Ge,
        Ge => Gt,
        Lo => Ls,
        Ls => Lo,
        Hi => Hs,
        Hs => Hi,
        Ltu => Leu,
        Leu => Ltu,
        Gtu => Geu,
        Geu => Gtu,
        _ => return None,
    })
}

/// `a op b` = `b op' a`.
fn cmp_mirrored(c: CmpOp) -> CmpOp {
    use CmpOp::*;
    match c {
        Lt => Gt,
        Gt => Lt,
        Le => Ge,
        Ge => Le,
        Lo => Hi,
        Hi => Lo,
        Ls => Hs,
        Hs => Ls,
        Ltu => Gtu,
        Gtu => Ltu,
        Leu => Geu,
        Geu => Leu,
        c => c,
    }
}

fn is_symmetric(c: CmpOp) -> bool {
    cmp_mirrored(c) == c
}

impl Gen<'_> {
    fn push(&mut self, op: Op, variant: &str, edits: Vec<Edit>, probe: Probe) {
        let s = self.s;
        let id = if variant.is_empty() {
            format!("{}:{}", op.name(), s.index)
        } else {
            format!("{}:{}:{variant}", op.name(), s.index)
        };
        let orig = self.k.instr_text(s);
        let inside: Vec<Edit> = edits
            .iter()
            .map(|e| Edit::new(e.start - s.start, e.end - s.start, e.text.clone()))
            .collect();
        let desc = match apply(orig, &inside) {
            Some(n) if n.trim().is_empty() => format!("`{}` deleted", oneline(orig)),
            Some(n) => format!("`{}` → `{}`", oneline(orig), oneline(&n)),
            None => return,
        };
        self.out.push(Mutant {
            id,
            op,
            instr: s.index,
            line: s.line,
            desc,
            edits,
            probe,
        });
    }

    fn mutation(&mut self, op: Op, variant: &str, edits: Vec<Edit>) {
        let probe = Probe::Mutant(self.s.index);
        self.push(op, variant, edits, probe);
    }

    fn rewrite(&mut self, op: Op, variant: &str, edits: Vec<Edit>) {
        self.push(op, variant, edits, Probe::None);
    }

    fn opcode(&self, text: String) -> Edit {
        Edit::new(self.s.opcode_start, self.s.opcode_end, text)
    }

    fn swap_ops(&self, a: usize, b: usize) -> Option<Vec<Edit>> {
        let ops = &self.s.operands;
        let (x, y) = (ops.get(a)?, ops.get(b)?);
        if x.text == y.text {
            return None;
        }
        Some(vec![
            Edit::new(x.start, x.end, y.text.clone()),
            Edit::new(y.start, y.end, x.text.clone()),
        ])
    }

    /// The opcode with its first word (the mnemonic) replaced and the
    /// words in `drop` removed.
    fn renamed(&self, mnemonic: &str, drop: &[&str]) -> String {
        let w = self.s.words();
        let mut out = vec![mnemonic];
        out.extend(w.iter().skip(1).filter(|x| !drop.contains(x)));
        out.join(".")
    }

    fn imm(&mut self) {
        let d = &self.s.data;
        if !imm_is_data(&d.instr) {
            return;
        }
        let width = instr_ty(&d.instr).map_or(64, |t| t.bit_width().max(1));
        let first_src = 1; // `st [addr], v` and `op d, a, ...` alike
        for (i, o) in self.s.operands.iter().enumerate().skip(first_src) {
            let SynOp::Imm(imm) = &o.op else { continue };
            match imm {
                Immediate::Int { value, text } => {
                    let max = if width >= 64 {
                        i128::from(u64::MAX)
                    } else {
                        (1i128 << width) - 1
                    };
                    let new = if *value >= max { value - 1 } else { value + 1 };
                    let e = Edit::new(o.start, o.end, hex_or_dec(text, new, width));
                    self.mutation(Op::ImmInt, &format!("op{i}"), vec![e]);
                }
                Immediate::F32Bits(b) => {
                    let x = f32::from_bits(*b);
                    let Some(n) = scaled(f64::from(x)) else {
                        continue;
                    };
                    let n = n as f32;
                    if !n.is_finite() || n == x {
                        continue;
                    }
                    let e = Edit::new(o.start, o.end, format!("0f{:08X}", n.to_bits()));
                    self.mutation(Op::ImmFloat, &format!("op{i}"), vec![e]);
                }
                Immediate::F64Bits(b) => {
                    let x = f64::from_bits(*b);
                    let Some(n) = scaled(x) else { continue };
                    let e = Edit::new(o.start, o.end, format!("0d{:016X}", n.to_bits()));
                    self.mutation(Op::ImmFloat, &format!("op{i}"), vec![e]);
                }
                Immediate::Float(_) => {}
            }
        }
    }

    fn swap(&mut self) {
        use Instr::*;
        let (a, b) = match &self.s.data.instr {
            Sub { carry, .. } if *carry == Carry::None => (1, 2),
            Div { .. } | Rem { .. } | Shl { .. } | Shr { .. } | Copysign { .. } => (1, 2),
            Setp { cmp, .. } | Set { cmp, .. } if !is_symmetric(*cmp) => (1, 2),
            Selp { .. } | Slct { .. } => (1, 2),
            Fma { .. } => (2, 3),
            Mad { carry, .. } if *carry == Carry::None => (2, 3),
            _ => return,
        };
        if let Some(e) = self.swap_ops(a, b) {
            self.mutation(Op::SwapOperands, "", e);
        }
    }

    fn add_sub(&mut self) {
        let to = match &self.s.data.instr {
            Instr::Add { carry, .. } if *carry == Carry::None => "sub",
            Instr::Sub { carry, .. } if *carry == Carry::None => "add",
            _ => return,
        };
        let e = self.opcode(self.renamed(to, &[]));
        self.mutation(Op::AddSub, "", vec![e]);
    }

    fn mul_to_add(&mut self) {
        match &self.s.data.instr {
            Instr::Mul {
                mode: None | Some(MulMode::Lo),
                ..
            } => {}
            _ => return,
        }
        let e = self.opcode(self.renamed("add", &["lo"]));
        self.mutation(Op::MulToAdd, "", vec![e]);
    }

    fn fma_to_add(&mut self) {
        let ok = match &self.s.data.instr {
            Instr::Fma { relu, .. } => !relu,
            Instr::Mad { mode, carry, .. } => {
                *carry == Carry::None && matches!(mode, None | Some(MulMode::Lo))
            }
            _ => false,
        };
        let ops = &self.s.operands;
        if !ok || ops.len() != 4 {
            return;
        }
        let e1 = self.opcode(self.renamed("add", &["lo"]));
        let e2 = Edit::new(
            ops[0].start,
            ops[3].end,
            format!("{}, {}, {}", ops[0].text, ops[1].text, ops[3].text),
        );
        self.mutation(Op::FmaToAdd, "", vec![e1, e2]);
    }

    fn max_min(&mut self) {
        let to = match &self.s.data.instr {
            Instr::Max { .. } => "min",
            Instr::Min { .. } => "max",
            _ => return,
        };
        let e = self.opcode(self.renamed(to, &[]));
        self.mutation(Op::MaxMin, "", vec![e]);
    }

    /// The opcode with the compare word replaced.
    fn with_cmp(&self, from: CmpOp, to: CmpOp) -> Option<String> {
        let mut w = self.s.words();
        let i = w.iter().position(|x| *x == from.as_str())?;
        w[i] = to.as_str();
        Some(w.join("."))
    }

    fn flip_cmp(&mut self) {
        let cmp = match &self.s.data.instr {
            Instr::Setp { cmp, .. } | Instr::Set { cmp, .. } => *cmp,
            _ => return,
        };
        for (variant, to) in [("neg", cmp_negated(cmp)), ("bound", cmp_boundary(cmp))] {
            if let Some(to) = to
                && let Some(text) = self.with_cmp(cmp, to)
            {
                let e = self.opcode(text);
                self.mutation(Op::FlipCmp, variant, vec![e]);
            }
        }
    }

    fn delete_barrier(&mut self) {
        let ok = matches!(
            self.s.data.instr,
            Instr::Bar {
                kind: BarKind::Sync,
                ..
            } | Instr::BarWarpSync
        );
        if ok {
            let e = Edit::new(self.s.start, self.s.end, "");
            self.push(
                Op::DeleteBarrier,
                "",
                vec![e],
                Probe::Original(self.s.index),
            );
        }
    }

    fn shfl_lane(&mut self) {
        if !matches!(self.s.data.instr, Instr::Shfl { .. }) {
            return;
        }
        let Some(o) = self.s.operands.get(2) else {
            return;
        };
        let SynOp::Imm(Immediate::Int { value, text }) = &o.op else {
            return;
        };
        let mut variants = vec![("up", value + 1)];
        if *value > 0 {
            variants.push(("down", value - 1));
        }
        for (v, n) in variants {
            let e = Edit::new(o.start, o.end, hex_or_dec(text, n, 32));
            self.mutation(Op::ShflLane, v, vec![e]);
        }
    }

    fn addr_offset(&mut self) {
        use Instr::*;
        let (space, size) = match &self.s.data.instr {
            Ld(m) | Ldu(m) | St(m) => (
                m.space,
                m.ty.size_bytes() * u64::from(m.vector.unwrap_or(1)),
            ),
            Atom(m) | Red(m) => (m.space, m.ty.size_bytes()),
            _ => return,
        };
        if !matches!(
            space,
            StateSpace::Global | StateSpace::Shared | StateSpace::Generic
        ) {
            return;
        }
        let size = size.max(1) as i64;
        for (i, o) in self.s.operands.iter().enumerate() {
            let SynOp::Address { base, offset, .. } = &o.op else {
                continue;
            };
            let base = match base {
                AddrBase::Reg(n) | AddrBase::Symbol(n) => n.clone(),
                AddrBase::Imm(_) => continue,
            };
            let mut variants = vec![("plus", offset + size)];
            if *offset >= size {
                variants.push(("minus", offset - size));
            }
            for (v, n) in variants {
                let text = match n {
                    0 => format!("[{base}]"),
                    n if n > 0 => format!("[{base}+{n}]"),
                    n => format!("[{base}+{n}]"),
                };
                let e = Edit::new(o.start, o.end, text);
                self.mutation(Op::AddrOffset, &format!("op{i}:{v}"), vec![e]);
            }
        }
    }

    fn store_source(&mut self) {
        let Instr::St(_) = &self.s.data.instr else {
            return;
        };
        // The stored value: a register, or the first element of a vector.
        let (start, end, reg) = match (self.s.operands.get(1), self.s.data.operands.get(1)) {
            (Some(o), Some(Operand::Reg(r))) => (o.start, o.end, *r),
            (Some(o), Some(Operand::Vector(v))) => match (&o.op, v.first()) {
                (SynOp::Vector { elems, .. }, Some(Operand::Reg(r))) => {
                    let Some(SynOp::Reg { range, .. }) = elems.first() else {
                        return;
                    };
                    (u32::from(range.start()), u32::from(range.end()), *r)
                }
                _ => return,
            },
            _ => return,
        };
        let Some(other) = self.previous_def(reg) else {
            return;
        };
        let e = Edit::new(start, end, self.k.ir.reg(other).name.clone());
        self.mutation(Op::StoreSource, "", vec![e]);
    }

    /// The register of `reg`'s type written last before this instruction
    /// (not `reg` itself), if its name is unambiguous.
    fn previous_def(&self, reg: RegId) -> Option<RegId> {
        let ty = self.k.ir.reg(reg);
        for s in self.k.sites[..self.s.index as usize].iter().rev() {
            let Some(Operand::Reg(d)) = s.data.operands.first() else {
                continue;
            };
            if matches!(s.data.instr, Instr::St(_) | Instr::Red(_)) || *d == reg {
                continue;
            }
            let info = self.k.ir.reg(*d);
            if info.ty == ty.ty && info.vector == ty.vector && self.k.unique_name(*d) {
                return Some(*d);
            }
        }
        None
    }

    fn commute(&mut self) {
        use Instr::*;
        match &self.s.data.instr {
            Add { carry, .. } if *carry == Carry::None => {}
            Mul { .. } | Min { .. } | Max { .. } | And { .. } | Or { .. } | Xor { .. } => {}
            Fma { .. } => {}
            Mad { carry, .. } if *carry == Carry::None => {}
            Setp { cmp, .. } | Set { cmp, .. } => {
                let Some(e) = self.swap_ops(1, 2) else { return };
                if is_symmetric(*cmp) {
                    self.rewrite(Op::Commute, "", e);
                } else if let Some(t) = self.with_cmp(*cmp, cmp_mirrored(*cmp)) {
                    let mut e = e;
                    e.push(self.opcode(t));
                    self.rewrite(Op::Commute, "mirror", e);
                }
                return;
            }
            _ => return,
        }
        if let Some(e) = self.swap_ops(1, 2) {
            self.rewrite(Op::Commute, "", e);
        }
    }

    fn mul_two(&mut self) {
        use Instr::*;
        let d = &self.s.data;
        let ops = &self.s.operands;
        if ops.len() != 3 || d.operands.len() != 3 {
            return;
        }
        let two = |o: &Operand| match o {
            Operand::Imm(Imm::Int(2)) => true,
            Operand::Imm(Imm::F32Bits(b)) => f32::from_bits(*b) == 2.0,
            Operand::Imm(Imm::F64Bits(b)) => f64::from_bits(*b) == 2.0,
            _ => false,
        };
        let one = |o: &Operand| matches!(o, Operand::Imm(Imm::Int(1)));
        let x_of = |i: usize| ops[i].text.clone();
        match &d.instr {
            Mul { ty, mode, .. } if matches!(mode, None | Some(MulMode::Lo)) => {
                let x = if two(&d.operands[2]) {
                    x_of(1)
                } else if two(&d.operands[1]) {
                    x_of(2)
                } else {
                    return;
                };
                if !ty.is_float() && mode.is_none() {
                    return;
                }
                let e1 = self.opcode(self.renamed("add", &["lo"]));
                let e2 = Edit::new(ops[1].start, ops[2].end, format!("{x}, {x}"));
                self.rewrite(Op::MulTwo, "", vec![e1, e2]);
            }
            Shl { ty } if one(&d.operands[2]) && ty.bit_width() >= 16 => {
                let x = x_of(1);
                let t = format!("add.u{}", ty.bit_width());
                let e1 = self.opcode(t);
                let e2 = Edit::new(ops[1].start, ops[2].end, format!("{x}, {x}"));
                self.rewrite(Op::MulTwo, "shl", vec![e1, e2]);
            }
            Add { ty, carry, fp } if *carry == Carry::None && ops[1].text == ops[2].text => {
                if fp.sat || ty.is_packed() {
                    return;
                }
                let x = x_of(1);
                let (opcode, two) = if ty.is_float() {
                    let two = match ty {
                        ScalarType::F32 => "0f40000000",
                        ScalarType::F64 => "0d4000000000000000",
                        _ => return,
                    };
                    (self.renamed("mul", &[]), two)
                } else {
                    let w = self.s.words();
                    let mut o = vec!["mul", "lo"];
                    o.extend(w.iter().skip(1));
                    (o.join("."), "2")
                };
                let e1 = self.opcode(opcode);
                let e2 = Edit::new(ops[1].start, ops[2].end, format!("{x}, {two}"));
                self.rewrite(Op::MulTwo, "back", vec![e1, e2]);
            }
            _ => {}
        }
    }
}

fn scaled(x: f64) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    Some(if x == 0.0 { 1.0 } else { x * 1.5 })
}

fn oneline(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Registers an instruction writes (destinations) and mentions at all.
fn regs_of(s: &Site) -> (Vec<RegId>, Vec<RegId>) {
    (s.data.writes(), s.data.mentions())
}

/// Plain computations and memory accesses that may be swapped with a
/// neighbour when no register links them.
fn movable(i: &Instr) -> Option<bool> {
    use Instr::*;
    Some(match i {
        Ld(_) | Ldu(_) | St(_) => true,
        Add { carry, .. } | Sub { carry, .. } | Mad { carry, .. } if *carry != Carry::None => {
            return None;
        }
        Add { .. } | Sub { .. } | Mul { .. } | Mad { .. } | Mul24 { .. } | Mad24 { .. } => false,
        Fma { .. } | Div { .. } | Rem { .. } | Neg { .. } | Abs { .. } | Min { .. } => false,
        Max { .. } | Copysign { .. } | Math { .. } | And { .. } | Or { .. } | Xor { .. } => false,
        Not { .. } | Cnot { .. } | Lop3 { .. } | Shl { .. } | Shr { .. } | Shf { .. } => false,
        Bfe { .. } | Bfi { .. } | Prmt { .. } | Popc { .. } | Clz { .. } | Brev { .. } => false,
        Setp { .. } | Set { .. } | Selp { .. } | Slct { .. } | Mov { .. } | Cvt { .. } => false,
        Cvta { .. } => false,
        _ => return None,
    })
}

/// Whether `text` (between two instructions) holds only whitespace,
/// comments and `.loc`-style directives (no scope brace, no statement).
fn only_trivia(text: &str) -> bool {
    text.lines().all(|l| {
        let l = l.split("//").next().unwrap_or("").trim();
        l.is_empty() || (l.starts_with('.') && !l.contains(['{', '}']))
    })
}

fn reorders(k: &Kernel, out: &mut Vec<Mutant>) {
    let label_at: std::collections::HashSet<u32> = k.ir.labels.iter().map(|l| l.target).collect();
    for w in k.sites.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        if label_at.contains(&b.index) {
            continue;
        }
        // Not across a `{ }` scope (inline-asm blocks declare registers of
        // their own) or anything but comments, directives and whitespace.
        let between = &k.text[a.end as usize..b.start as usize];
        if !only_trivia(between) {
            continue;
        }
        let (Some(ma), Some(mb)) = (movable(&a.data.instr), movable(&b.data.instr)) else {
            continue;
        };
        // Two memory accesses may alias unless both only read.
        if ma && mb {
            let store = |i: &Instr| matches!(i, Instr::St(_));
            if store(&a.data.instr) || store(&b.data.instr) {
                continue;
            }
        }
        let (da, ra) = regs_of(a);
        let (db, rb) = regs_of(b);
        if da.iter().any(|r| rb.contains(r)) || db.iter().any(|r| ra.contains(r)) {
            continue;
        }
        let ta = k.instr_text(a).to_string();
        let tb = k.instr_text(b).to_string();
        let edits = vec![
            Edit::new(a.start, a.end, tb.clone()),
            Edit::new(b.start, b.end, ta.clone()),
        ];
        out.push(Mutant {
            id: format!("{}:{}", Op::Reorder.name(), a.index),
            op: Op::Reorder,
            instr: a.index,
            line: a.line,
            desc: format!(
                "`{}` and `{}` (lines {}, {}) swapped",
                oneline(&ta),
                oneline(&tb),
                a.line,
                b.line
            ),
            edits,
            probe: Probe::None,
        });
    }
}

/// Consistent renamings: two registers of the same type (first uses in
/// order, consecutive pairs) swapped at every occurrence in the kernel.
fn renames(k: &Kernel, out: &mut Vec<Mutant>) {
    let mut first_use: Vec<RegId> = Vec::new();
    for s in &k.sites {
        let mut regs = Vec::new();
        for o in &s.data.operands {
            o.collect_regs(&mut regs);
        }
        if let Some(g) = s.data.guard {
            regs.push(g.reg);
        }
        for r in regs {
            if !first_use.contains(&r) && k.unique_name(r) && k.ir.reg(r).vector.is_none() {
                first_use.push(r);
            }
        }
    }
    let mut by_ty: Vec<(ScalarType, Vec<RegId>)> = Vec::new();
    for r in first_use {
        let ty = k.ir.reg(r).ty;
        match by_ty.iter_mut().find(|(t, _)| *t == ty) {
            Some((_, v)) => v.push(r),
            None => by_ty.push((ty, vec![r])),
        }
    }
    for (_, regs) in &by_ty {
        for p in regs.windows(2) {
            let (a, b) = (&k.ir.reg(p[0]).name, &k.ir.reg(p[1]).name);
            let edits: Vec<Edit> = k
                .reg_tokens
                .iter()
                .filter_map(|(s, e, n)| {
                    if n == a {
                        Some(Edit::new(*s, *e, b.clone()))
                    } else if n == b {
                        Some(Edit::new(*s, *e, a.clone()))
                    } else {
                        None
                    }
                })
                .collect();
            if edits.is_empty() {
                continue;
            }
            out.push(Mutant {
                id: format!("{}:{}:{}", Op::RenameRegs.name(), a, b),
                op: Op::RenameRegs,
                instr: 0,
                line: 0,
                desc: format!("`{a}` and `{b}` swapped everywhere in the kernel"),
                edits,
                probe: Probe::None,
            });
        }
    }
}
