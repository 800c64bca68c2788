//! Warp-level matrix instructions: `mma.sync`, `ldmatrix`, `stmatrix`,
//! `movmatrix` and `wmma.load/mma/store`.
//!
//! Each is a warp collective (the `.sync.aligned` forms): every lane of
//! the warp arrives at the same instruction, then the values are
//! exchanged — the same rendezvous as `shfl.sync` (`sync.rs`), keyed by
//! the instruction with a full member mask. A lane that exited, or a warp
//! with fewer than 32 threads, makes the collective impossible: a
//! divergence finding. Arithmetic is over the reals (docs/semantics.md §2):
//! `D = A·B + C` is built as `fma` chains in `k` order, so f16/bf16/tf32
//! rounding is the identity, and every domain builds the same values.
//!
//! Memory: `ldmatrix` lanes read the rows they address at arrival;
//! `stmatrix` lanes write the rows they address at completion (the row
//! values come from all lanes). `wmma.load` / `wmma.store` use ptxeq's
//! fixed fragment layout ([`super::fragments::wmma_element`]); consumed
//! fragments must not depend on it (`wmma_check`, checked in
//! `gather_wmma`). Because the real layout is implementation-defined,
//! which lane touches which element is unknown, so for race judgement every
//! lane is taken to read (load) or write (store, the same values: benign
//! among themselves) the whole tile. An access by another lane of the warp
//! that is not ordered by `bar.warp.sync` therefore races, as it may on
//! hardware — except a wmma access of the same warp through the same view
//! (`WmmaState::same_view`), which is the same lane's.

use ptxeq_ir::{
    Address, Frag, Instr, InstrData, Layout, MatrixMods, MmaMods, Operand, ScalarType, Shape,
    StateSpace, WmmaOp,
};

use super::fragments::{self, MmaKind, Operand as MOp};
use super::sync::{Coll, CollArg};
use super::values::IntArg;
use super::wmma_check::frag_class;
use super::{Engine, Flow, Halt, R, Status, Wait};
use crate::domain::{Domain, Fmt};
use crate::finding::FindingKind;
use crate::funcinfo::FuncInfo;
use crate::value::Value;

/// `addr` moved by `delta` bytes.
fn offset_addr(addr: &Address, delta: i64) -> Address {
    Address {
        base: addr.base.clone(),
        offset: addr.offset.wrapping_add(delta),
    }
}

/// Elements of format `fmt` packed in one 32-bit register.
fn per_reg(fmt: Fmt) -> usize {
    match fmt.size() {
        1 => 4,
        2 => 2,
        _ => 1,
    }
}

/// The real formats of `mma` operands: `(kind, a/b format, c format, d
/// format)`, or why the form is not modelled.
fn mma_form(m: &MmaMods) -> Result<(MmaKind, Fmt, Fmt, Fmt), String> {
    if m.sparse || m.b1_op.is_some() {
        return Err("sparse and single-bit mma".into());
    }
    if m.a_ty != m.b_ty {
        return Err(format!("mixed A/B types .{}/.{}", m.a_ty, m.b_ty));
    }
    // fp8 (`.e4m3`/`.e5m2`, one type for A and B): m16n8k32, f32 or f16
    // accumulators, exact values (crate::narrow).
    if let Some(f8) = Fmt::fp8_of(m.a_ty) {
        let k32 = (m.shape.m, m.shape.n, m.shape.k) == (16, 8, 32);
        if !k32 || m.a_layout != Layout::Row || m.b_layout != Layout::Col {
            return Err(format!("shape .{} with .{} inputs", m.shape, m.a_ty));
        }
        let acc = |ty: ScalarType| match ty {
            ScalarType::F32 => Some(Fmt::F32),
            ScalarType::F16 => Some(Fmt::F16),
            _ => None,
        };
        let (Some(c), Some(d)) = (acc(m.c_ty), acc(m.d_ty)) else {
            return Err(format!("accumulator types .{}/.{}", m.d_ty, m.c_ty));
        };
        return Ok((MmaKind::M16n8k32Byte, f8, c, d));
    }
    let (k16, k8, k4) = (
        (m.shape.m, m.shape.n, m.shape.k) == (16, 8, 16),
        (m.shape.m, m.shape.n, m.shape.k) == (16, 8, 8),
        (m.shape.m, m.shape.n, m.shape.k) == (16, 8, 4),
    );
    let (kind, ab) = match m.a_ty {
        ScalarType::F16 | ScalarType::Bf16 if k16 => (MmaKind::M16n8k16Half, m.a_ty),
        ScalarType::F16 | ScalarType::Bf16 if k8 => (MmaKind::M16n8k8Half, m.a_ty),
        ScalarType::Tf32 if k8 => (MmaKind::M16n8k8Tf32, ScalarType::F32),
        ScalarType::Tf32 if k4 => (MmaKind::M16n8k4Tf32, ScalarType::F32),
        _ => return Err(format!("shape .{} with .{} inputs", m.shape, m.a_ty)),
    };
    if m.a_layout != Layout::Row || m.b_layout != Layout::Col {
        return Err(format!(".{}.{} layouts", m.a_layout, m.b_layout));
    }
    let acc = |ty: ScalarType| match ty {
        ScalarType::F32 => Some(Fmt::F32),
        ScalarType::F16 if m.a_ty == ScalarType::F16 => Some(Fmt::F16),
        _ => None,
    };
    let (Some(c), Some(d), Some(ab)) = (acc(m.c_ty), acc(m.d_ty), Fmt::of(ab)) else {
        return Err(format!("accumulator types .{}/.{}", m.d_ty, m.c_ty));
    };
    Ok((kind, ab, c, d))
}

/// `(m, n, k)` of a wmma shape ptxeq models.
fn wmma_mnk(s: Shape) -> Option<(usize, usize, usize)> {
    match (s.m, s.n, s.k) {
        (16, 16, 16) => Some((16, 16, 16)),
        (32, 8, 16) => Some((32, 8, 16)),
        (8, 32, 16) => Some((8, 32, 16)),
        _ => None,
    }
}

/// The format of a wmma fragment element type.
fn wmma_fmt(ty: ScalarType, accumulator: bool) -> Option<Fmt> {
    match ty {
        ScalarType::F16 => Some(Fmt::F16),
        ScalarType::Bf16 if !accumulator => Some(Fmt::Bf16),
        ScalarType::F32 if accumulator => Some(Fmt::F32),
        _ => None,
    }
}

/// A fragment matrix being assembled from (or split into) lanes.
struct Tile<V> {
    rows: usize,
    cols: usize,
    cells: Vec<Option<V>>,
}

impl<V: Copy> Tile<V> {
    fn new(rows: usize, cols: usize) -> Self {
        Tile {
            rows,
            cols,
            cells: vec![None; rows * cols],
        }
    }
    fn get(&self, r: usize, c: usize) -> Option<V> {
        self.cells.get(r * self.cols + c).copied().flatten()
    }
    fn set(&mut self, r: usize, c: usize, v: V) {
        if let Some(x) = self.cells.get_mut(r * self.cols + c) {
            *x = Some(v);
        }
    }
}

impl<D: Domain> Engine<'_, D> {
    /// Entry point for the matrix instructions: checks the form, gathers
    /// this lane's contribution and joins the warp's rendezvous.
    pub(crate) fn matrix(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Flow> {
        let w = (t / 32) as usize;
        let what = ins.instr.mnemonic();
        if self.cta.live[w] != u32::MAX {
            let missing: Vec<u32> = (0..32)
                .filter(|l| self.cta.live[w] & (1 << l) == 0)
                .collect();
            return Err(self.fail(
                t,
                FindingKind::Divergence,
                "",
                format!(
                    "{what} is a warp-wide collective, but lanes {missing:?} of warp {w} have exited or do not exist, so it can never complete"
                ),
            ));
        }
        if matches!(ins.instr, Instr::Wmma(_)) && !D::LAYOUT_TAGS {
            // `run_cta` runs every kernel with wmma in the tagging domain.
            return Err(self.unsupported(
                t,
                "wmma without layout tracking",
                "wmma fragments are modelled only in runs that track their layout (crate::layout_tags)".into(),
            ));
        }
        let arg = self.matrix_arrive(t, info, ins)?;
        let key = (self.cur_instr, u32::MAX);
        let lane = t % 32;
        let idx = match self.cta.warps[w].pending.iter().position(|c| c.key == key) {
            Some(i) => i,
            None => {
                let first_instr = self.cur_instr;
                let ws = &mut self.cta.warps[w];
                ws.pending.push(Coll {
                    key,
                    arrived: 0,
                    args: Vec::with_capacity(32),
                    what: format!("{what} (all 32 lanes)"),
                    first_instr,
                });
                ws.pending.len() - 1
            }
        };
        let c = &mut self.cta.warps[w].pending[idx];
        c.arrived |= 1 << lane;
        c.args.push((lane, CollArg::Regs(arg)));
        if c.arrived != u32::MAX {
            self.cta.threads[t as usize].status = Status::Blocked(Wait::Collective);
            return Ok(Flow::Block);
        }
        let coll = self.cta.warps[w].pending.remove(idx);
        self.stats.warp_collectives += 1;
        let mut lanes: Vec<Vec<Value<D::Val>>> = vec![Vec::new(); 32];
        for (l, a) in coll.args {
            if let CollArg::Regs(v) = a {
                lanes[l as usize] = v;
            }
        }
        let base = (w * 32) as u32;
        self.matrix_complete(base, info, ins, lanes)?;
        for l in 0..32 {
            let x = base + l;
            if x != t && self.cta.threads[x as usize].status == Status::Blocked(Wait::Collective) {
                self.wake(x);
            }
        }
        Ok(Flow::Next)
    }

    /// A fragment that does not fit its shape (never for the modelled
    /// forms, which are checked on arrival): reported, never silent.
    #[cold]
    fn malformed(&mut self, t: u32) -> Halt {
        self.unsupported(t, "matrix fragment does not fit its shape", String::new())
    }

    /// Reads the registers of a vector operand.
    fn read_regs(&mut self, t: u32, info: &FuncInfo, op: &Operand) -> R<Vec<Value<D::Val>>> {
        let mut out = Vec::new();
        for p in op.parts() {
            out.push(self.read(t, info, p, 32)?);
        }
        Ok(out)
    }

    /// A concrete `u32` operand (stride, size).
    pub(crate) fn matrix_u32(
        &mut self,
        t: u32,
        info: &FuncInfo,
        op: &Operand,
        what: &str,
    ) -> R<u32> {
        match self.read_int(t, info, op, 32)? {
            IntArg::Known(v) => Ok(v as u32),
            IntArg::Undef => Err(self.uninit_register(t, what)),
            IntArg::Tainted(_) => Err(self.unsupported(
                t,
                "address depends on tensor data",
                format!("{what} is computed from tensor values"),
            )),
            IntArg::Data(_) => Err(self.unsupported(
                t,
                "address depends on tensor data",
                format!(
                    "integer tensor data used as an address: {what} is computed from tensor values"
                ),
            )),
        }
    }

    /// This lane's contribution (and, for `wmma.load`, its whole effect).
    fn matrix_arrive(&mut self, t: u32, info: &FuncInfo, ins: &InstrData) -> R<Vec<Value<D::Val>>> {
        let ops = &ins.operands;
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        let lane = (t % 32) as usize;
        match &ins.instr {
            Instr::Mma(m) => {
                if let Err(e) = mma_form(m) {
                    return Err(self.unsupported(t, "mma form not modelled", e));
                }
                let mut regs = self.read_regs(t, info, op(1))?;
                regs.extend(self.read_regs(t, info, op(2))?);
                regs.extend(self.read_regs(t, info, op(3))?);
                Ok(regs)
            }
            Instr::Ldmatrix(mm) => {
                self.check_m8n8(t, mm)?;
                let n = usize::from(mm.num.count());
                if lane >= 8 * n {
                    return Ok(Vec::new());
                }
                let Operand::Addr(addr) = op(1) else {
                    return Err(self.unsupported(t, "ldmatrix without an address", String::new()));
                };
                let addr = addr.clone();
                let row = self.load(t, info, mm.space, &addr, 16)?;
                Ok(vec![row.unwrap_or(Value::Undef)])
            }
            Instr::Stmatrix(mm) => {
                self.check_m8n8(t, mm)?;
                self.read_regs(t, info, op(1))
            }
            Instr::Movmatrix { .. } => Ok(vec![self.read(t, info, op(1), 32)?]),
            Instr::Wmma(WmmaOp::Load {
                frag,
                layout,
                shape,
                space,
                ty,
            }) => {
                self.wmma_load(t, info, ins, *frag, *layout, *shape, *space, *ty)?;
                Ok(Vec::new())
            }
            Instr::Wmma(WmmaOp::Store { shape, ty, .. }) => {
                if wmma_mnk(*shape).is_none() || wmma_fmt(*ty, true).is_none() {
                    return Err(self.unsupported(
                        t,
                        "wmma form not modelled",
                        format!(".{shape}.{ty} store"),
                    ));
                }
                self.read_regs(t, info, op(1))
            }
            Instr::Wmma(WmmaOp::Mma {
                shape,
                a_ty,
                b_ty,
                c_ty,
                d_ty,
                ..
            }) => {
                let ok = wmma_mnk(*shape).is_some()
                    && a_ty == b_ty
                    && wmma_fmt(*a_ty, false).is_some()
                    && wmma_fmt(*c_ty, true).is_some()
                    && wmma_fmt(*d_ty, true).is_some();
                if !ok {
                    return Err(self.unsupported(
                        t,
                        "wmma form not modelled",
                        format!(".{shape}.{d_ty}.{a_ty}.{b_ty}.{c_ty} mma"),
                    ));
                }
                let mut regs = self.read_regs(t, info, op(1))?;
                regs.extend(self.read_regs(t, info, op(2))?);
                regs.extend(self.read_regs(t, info, op(3))?);
                Ok(regs)
            }
            other => Err(self.unsupported(t, "matrix instruction not modelled", other.mnemonic())),
        }
    }

    fn check_m8n8(&mut self, t: u32, mm: &MatrixMods) -> R<()> {
        if mm.shape != (8, 8) || mm.ty != ScalarType::B16 {
            return Err(self.unsupported(
                t,
                "matrix instruction form not modelled",
                format!(
                    ".m{}n{}.{} (only .m8n8.b16 is modelled)",
                    mm.shape.0, mm.shape.1, mm.ty
                ),
            ));
        }
        Ok(())
    }

    /// Element `i` of a fragment held in `regs` (low half first).
    fn frag_elem(
        &mut self,
        t: u32,
        regs: &[Value<D::Val>],
        i: usize,
        fmt: Fmt,
        what: &str,
    ) -> R<D::Val> {
        let per = per_reg(fmt);
        let Some(reg) = regs.get(i / per) else {
            return Err(self.unsupported(
                t,
                "matrix fragment has too few registers",
                what.to_string(),
            ));
        };
        let v = if per > 1 {
            let size = fmt.size();
            reg.slice(size * (i % per) as u8, size, 4)
        } else {
            reg.clone()
        };
        self.fp8_format_check(t, &v, fmt)?;
        match self.as_real(t, &v, fmt)? {
            Some(x) => Ok(x),
            None => Err(self.uninit_register(t, what)),
        }
    }

    /// Packs fragment elements into registers of format `fmt`.
    fn pack_frag(vals: &[D::Val], fmt: Fmt) -> Vec<Value<D::Val>> {
        if per_reg(fmt) == 2 {
            vals.chunks(2)
                .map(|p| {
                    let parts: Vec<(Value<D::Val>, u8)> =
                        p.iter().map(|&v| (Value::data(v, fmt), 2u8)).collect();
                    Value::concat(&parts)
                })
                .collect()
        } else {
            vals.iter().map(|&v| Value::data(v, fmt)).collect()
        }
    }

    /// Writes `vals` to the parts of vector operand `op` of lane `x`.
    fn write_regs(
        &mut self,
        x: u32,
        info: &FuncInfo,
        op: &Operand,
        vals: Vec<Value<D::Val>>,
    ) -> R<()> {
        let ps = op.parts().to_vec();
        for (p, v) in ps.iter().zip(vals) {
            self.write(x, info, p, v)?;
        }
        Ok(())
    }

    /// All lanes have arrived: exchange and write back.
    fn matrix_complete(
        &mut self,
        base: u32,
        info: &FuncInfo,
        ins: &InstrData,
        lanes: Vec<Vec<Value<D::Val>>>,
    ) -> R<()> {
        let ops = &ins.operands;
        let sink = Operand::Sink;
        let op = |i: usize| ops.get(i).unwrap_or(&sink);
        match &ins.instr {
            Instr::Mma(m) => {
                let (kind, ab, cf, df) = match mma_form(m) {
                    Ok(f) => f,
                    Err(e) => return Err(self.unsupported(base, "mma form not modelled", e)),
                };
                let (mm, nn, kk) = kind.mnk();
                let na = op(1).parts().len();
                let nb = op(2).parts().len();
                let counts_ok = na * per_reg(ab) == kind.per_lane(MOp::A)
                    && nb * per_reg(ab) == kind.per_lane(MOp::B)
                    && op(3).parts().len() * per_reg(cf) == kind.per_lane(MOp::C)
                    && op(0).parts().len() * per_reg(df) == kind.per_lane(MOp::C);
                if !counts_ok {
                    return Err(self.unsupported(
                        base,
                        "mma operand register counts do not match the shape",
                        ins.instr.mnemonic(),
                    ));
                }
                let mut a = Tile::new(mm, kk);
                let mut b = Tile::new(kk, nn);
                let mut c = Tile::new(mm, nn);
                for (l, regs) in lanes.iter().enumerate() {
                    let x = base + l as u32;
                    let (ra, rest) = regs.split_at(na.min(regs.len()));
                    let (rb, rc) = rest.split_at(nb.min(rest.len()));
                    for i in 0..kind.per_lane(MOp::A) {
                        let v = self.frag_elem(x, ra, i, ab, "an mma A register")?;
                        let (r, cc) = fragments::mma_element(kind, MOp::A, l, i);
                        a.set(r, cc, v);
                    }
                    for i in 0..kind.per_lane(MOp::B) {
                        let v = self.frag_elem(x, rb, i, ab, "an mma B register")?;
                        let (r, cc) = fragments::mma_element(kind, MOp::B, l, i);
                        b.set(r, cc, v);
                    }
                    for i in 0..kind.per_lane(MOp::C) {
                        let v = self.frag_elem(x, rc, i, cf, "an mma C register")?;
                        let (r, cc) = fragments::mma_element(kind, MOp::C, l, i);
                        c.set(r, cc, v);
                    }
                }
                let d = self
                    .product(&a, &b, &c)
                    .ok_or_else(|| self.malformed(base))?;
                for l in 0..32 {
                    let vals: Vec<D::Val> = (0..kind.per_lane(MOp::C))
                        .filter_map(|i| {
                            let (r, cc) = fragments::mma_element(kind, MOp::C, l, i);
                            d.get(r, cc)
                        })
                        .collect();
                    let regs = Self::pack_frag(&vals, df);
                    self.write_regs(base + l as u32, info, op(0), regs)?;
                }
                Ok(())
            }
            Instr::Ldmatrix(mm) => {
                let n = usize::from(mm.num.count());
                let row = |j: usize| {
                    lanes
                        .get(j)
                        .and_then(|v| v.first())
                        .cloned()
                        .unwrap_or(Value::Undef)
                };
                for l in 0..32usize {
                    let mut vals = Vec::with_capacity(n);
                    for i in 0..n {
                        let v = if mm.trans {
                            // Element (r, c) of the fragment is (c, r) in memory.
                            let mut halves = Vec::with_capacity(2);
                            for h in 0..2 {
                                let (r, c) = fragments::m8n8_element(l, h);
                                halves.push((row(8 * i + c).slice(2 * r as u8, 2, 16), 2u8));
                            }
                            Value::concat(&halves)
                        } else {
                            row(8 * i + l / 4).slice(4 * (l % 4) as u8, 4, 16)
                        };
                        vals.push(v);
                    }
                    self.write_regs(base + l as u32, info, op(0), vals)?;
                }
                Ok(())
            }
            Instr::Stmatrix(mm) => {
                let n = usize::from(mm.num.count());
                let Operand::Addr(addr) = op(0) else {
                    return Err(self.unsupported(
                        base,
                        "stmatrix without an address",
                        String::new(),
                    ));
                };
                let addr = addr.clone();
                for i in 0..n {
                    for r in 0..8 {
                        let mut pieces = Vec::with_capacity(8);
                        for c in 0..8 {
                            let (hl, h) = if mm.trans {
                                fragments::m8n8_holder(c, r)
                            } else {
                                fragments::m8n8_holder(r, c)
                            };
                            let reg = lanes
                                .get(hl)
                                .and_then(|v| v.get(i))
                                .cloned()
                                .unwrap_or(Value::Undef);
                            pieces.push((reg.slice(2 * h as u8, 2, 4), 2u8));
                        }
                        let v = Value::concat(&pieces);
                        let x = base + (8 * i + r) as u32;
                        self.guard = None;
                        self.store(x, info, mm.space, &addr, v, 16)?;
                    }
                }
                Ok(())
            }
            Instr::Movmatrix { .. } => {
                for l in 0..32usize {
                    let mut halves = Vec::with_capacity(2);
                    for h in 0..2 {
                        let (r, c) = fragments::m8n8_element(l, h);
                        let (sl, sh) = fragments::m8n8_holder(c, r);
                        let reg = lanes
                            .get(sl)
                            .and_then(|v| v.first())
                            .cloned()
                            .unwrap_or(Value::Undef);
                        halves.push((reg.slice(2 * sh as u8, 2, 4), 2u8));
                    }
                    let v = Value::concat(&halves);
                    self.write(base + l as u32, info, op(0), v)?;
                }
                Ok(())
            }
            Instr::Wmma(WmmaOp::Load { .. }) => {
                self.wmma_done((base / 32) as usize);
                Ok(())
            }
            Instr::Wmma(WmmaOp::Mma {
                shape,
                a_ty,
                c_ty,
                d_ty,
                a_layout,
                b_layout,
                ..
            }) => {
                let (m, n, k) = wmma_mnk(*shape).ok_or_else(|| self.malformed(base))?;
                let ab = wmma_fmt(*a_ty, false).ok_or_else(|| self.malformed(base))?;
                let cf = wmma_fmt(*c_ty, true).ok_or_else(|| self.malformed(base))?;
                let df = wmma_fmt(*d_ty, true).ok_or_else(|| self.malformed(base))?;
                let (na, nb, nc) = (
                    op(1).parts().len(),
                    op(2).parts().len(),
                    op(3).parts().len(),
                );
                let mut split: Vec<[Vec<Value<D::Val>>; 3]> = Vec::with_capacity(32);
                for regs in &lanes {
                    let ra = regs.iter().take(na).cloned().collect();
                    let rb = regs.iter().skip(na).take(nb).cloned().collect();
                    let rc = regs.iter().skip(na + nb).take(nc).cloned().collect();
                    split.push([ra, rb, rc]);
                }
                let class_a = frag_class(Frag::A, *shape, ab, *a_layout);
                let class_b = frag_class(Frag::B, *shape, ab, *b_layout);
                let class_c = frag_class(Frag::C, *shape, cf, Layout::Row);
                let a = self.gather_wmma(
                    base,
                    &split,
                    0,
                    (m, k),
                    ab,
                    class_a,
                    "the wmma.mma A fragment",
                )?;
                let b = self.gather_wmma(
                    base,
                    &split,
                    1,
                    (k, n),
                    ab,
                    class_b,
                    "the wmma.mma B fragment",
                )?;
                let c = self.gather_wmma(
                    base,
                    &split,
                    2,
                    (m, n),
                    cf,
                    class_c,
                    "the wmma.mma C fragment",
                )?;
                let d = self
                    .product(&a, &b, &c)
                    .ok_or_else(|| self.malformed(base))?;
                let slots = op(0).parts().len() * per_reg(df);
                if fragments::wmma_lanes(m, n, slots).is_none() {
                    return Err(self.unsupported(
                        base,
                        "wmma fragment register count does not fit the shape",
                        ins.instr.mnemonic(),
                    ));
                }
                let class_d = frag_class(Frag::C, *shape, df, Layout::Row);
                let w = (base / 32) as usize;
                for l in 0..32 {
                    let mut vals: Vec<D::Val> = Vec::with_capacity(slots);
                    for e in 0..slots {
                        let Some((r, c)) = fragments::wmma_element(m, n, slots, l, e) else {
                            continue;
                        };
                        let Some(x) = d.get(r, c) else { continue };
                        vals.push(self.wmma_leaf(x, class_d, w, l, e));
                    }
                    let regs = Self::pack_frag(&vals, df);
                    self.write_regs(base + l as u32, info, op(0), regs)?;
                }
                self.wmma_done(w);
                Ok(())
            }
            Instr::Wmma(WmmaOp::Store {
                layout,
                shape,
                space,
                ty,
            }) => {
                let (m, n, _) = wmma_mnk(*shape).ok_or_else(|| self.malformed(base))?;
                let fmt = wmma_fmt(*ty, true).ok_or_else(|| self.malformed(base))?;
                let split: Vec<[Vec<Value<D::Val>>; 3]> = lanes
                    .into_iter()
                    .map(|r| [r, Vec::new(), Vec::new()])
                    .collect();
                let class = frag_class(Frag::C, *shape, fmt, Layout::Row);
                let tile = self.gather_wmma(
                    base,
                    &split,
                    0,
                    (m, n),
                    fmt,
                    class,
                    "the wmma.store fragment",
                )?;
                self.wmma_done((base / 32) as usize);
                let Operand::Addr(addr) = op(0) else {
                    return Err(self.unsupported(
                        base,
                        "wmma.store without an address",
                        String::new(),
                    ));
                };
                let addr = addr.clone();
                let stride = match ops.get(2) {
                    Some(s) => self.matrix_u32(base, info, s, "the wmma stride")? as usize,
                    None if *layout == Layout::Row => n,
                    None => m,
                };
                let es = usize::from(fmt.size());
                let (lines, len) = if *layout == Layout::Row {
                    (m, n)
                } else {
                    (n, m)
                };
                let mut values = Vec::with_capacity(lines);
                for line in 0..lines {
                    let mut pieces = Vec::with_capacity(len);
                    for p in 0..len {
                        let (r, c) = if *layout == Layout::Row {
                            (line, p)
                        } else {
                            (p, line)
                        };
                        let v = tile.get(r, c).ok_or_else(|| self.malformed(base))?;
                        pieces.push((Value::data(v, fmt), es as u8));
                    }
                    values.push(Value::concat(&pieces));
                }
                // Every lane writes the whole tile (see the module doc).
                let view = self.wmma_view(base, info, class, *space, &addr, stride, *layout)?;
                self.wmma_view_begin(base / 32, view);
                let mut done = Ok(());
                'lanes: for l in 0..32u32 {
                    for (line, v) in values.iter().enumerate() {
                        let a = offset_addr(&addr, (line * stride * es) as i64);
                        self.guard = None;
                        done = self.store(base + l, info, *space, &a, v.clone(), (len * es) as u8);
                        if done.is_err() {
                            break 'lanes;
                        }
                    }
                }
                self.wmma_view_end();
                done
            }
            _ => Ok(()),
        }
    }

    /// `D = A·B + C` as `fma` chains in `k` order; `None` if a cell is
    /// missing (a malformed layout: never for the modelled ones).
    fn product(
        &mut self,
        a: &Tile<D::Val>,
        b: &Tile<D::Val>,
        c: &Tile<D::Val>,
    ) -> Option<Tile<D::Val>> {
        let mut d = Tile::new(a.rows, b.cols);
        for i in 0..a.rows {
            for j in 0..b.cols {
                let mut acc = c.get(i, j)?;
                for k in 0..a.cols {
                    acc = self.d.fma(a.get(i, k)?, b.get(k, j)?, acc);
                }
                d.set(i, j, acc);
            }
        }
        Some(d)
    }

    /// Assembles a consumed wmma fragment (`which` of each lane's register
    /// groups) of `class` into its `rows`×`cols` matrix with ptxeq's
    /// layout. Every element must be the same element-wise function of
    /// whole fragments of `class` at its own position (`wmma_check`), so
    /// the matrix is the same under any layout; the tile holds the values
    /// without their layout tags. Lanes holding the same element then
    /// agree (checked all the same).
    #[allow(clippy::too_many_arguments)]
    fn gather_wmma(
        &mut self,
        base: u32,
        lanes: &[[Vec<Value<D::Val>>; 3]],
        which: usize,
        (rows, cols): (usize, usize),
        fmt: Fmt,
        class: u32,
        what: &str,
    ) -> R<Tile<D::Val>> {
        let nregs = lanes.first().map_or(0, |l| l[which].len());
        let slots = nregs * per_reg(fmt);
        if fragments::wmma_lanes(rows, cols, slots).is_none() {
            return Err(self.unsupported(
                base,
                "wmma fragment register count does not fit the shape",
                format!(
                    "{what}: {nregs} registers for a {rows}x{cols} .{} matrix",
                    fmt.name()
                ),
            ));
        }
        let mut tile = Tile::new(rows, cols);
        let mut seen: Vec<Option<D::Val>> = vec![None; rows * cols];
        let mut first: Option<(u64, usize, usize, Option<crate::layout_tags::LayoutTag>)> = None;
        for (l, groups) in lanes.iter().enumerate() {
            let regs = &groups[which];
            let x = base + l as u32;
            for e in 0..slots {
                let Some((r, c)) = fragments::wmma_element(rows, cols, slots, l, e) else {
                    continue;
                };
                let raw = match regs.get(e / per_reg(fmt)) {
                    Some(reg) if per_reg(fmt) == 2 => reg.slice(2 * (e % 2) as u8, 2, 4),
                    Some(reg) => reg.clone(),
                    None => Value::Undef,
                };
                let v = match self.as_real(x, &raw, fmt)? {
                    Some(v) => v,
                    None => return Err(self.uninit_register(x, what)),
                };
                let el = self.wmma_element(x, v, class, l, e, what)?;
                match first {
                    None => first = Some((el.form, l, e, el.tag)),
                    Some((f, fl, fe, ft)) if f != el.form => {
                        return Err(self.wmma_not_uniform(x, what, (fl, fe, ft), (l, e, el.tag)));
                    }
                    Some(_) => {}
                }
                match seen[r * cols + c] {
                    Some(prev) if prev != el.val => {
                        return Err(self.unsupported(
                            x,
                            "wmma fragment depends on the implementation-defined layout",
                            format!(
                                "{what}: lanes that hold the same element in ptxeq's fixed wmma layout have different values (fragment registers changed element-wise)"
                            ),
                        ));
                    }
                    Some(_) => continue,
                    None => seen[r * cols + c] = Some(el.val),
                }
                tile.set(r, c, el.val);
            }
        }
        Ok(tile)
    }

    /// The view of a wmma.load / wmma.store: which fragment element each
    /// byte it accesses is — the fragment class, the state space, the
    /// address (a register's value or a variable and offset), the stride
    /// and the memory layout, hashed.
    #[allow(clippy::too_many_arguments)]
    fn wmma_view(
        &mut self,
        t: u32,
        info: &FuncInfo,
        class: u32,
        space: StateSpace,
        addr: &Address,
        stride: usize,
        layout: Layout,
    ) -> R<u64> {
        use std::hash::{Hash, Hasher};
        let base = match &addr.base {
            ptxeq_ir::AddrBase::Reg(r) => match self.read(t, info, &Operand::Reg(*r), 64)? {
                Value::Bits(b) => (0u8, b),
                // Not a concrete address: a view of its own (no ordering).
                _ => (1, u64::from(self.cur_instr) << 32 | u64::from(t)),
            },
            ptxeq_ir::AddrBase::Imm(a) => (0, *a),
            ptxeq_ir::AddrBase::Symbol(s) => {
                let mut h = rustc_hash::FxHasher::default();
                s.hash(&mut h);
                (2, h.finish())
            }
        };
        let mut h = rustc_hash::FxHasher::default();
        (class, space, base, addr.offset, stride, layout).hash(&mut h);
        Ok(h.finish())
    }

    /// `wmma.load`: this lane reads the whole tile (race judgement, see
    /// the module doc) and keeps its own elements.
    #[allow(clippy::too_many_arguments)]
    fn wmma_load(
        &mut self,
        t: u32,
        info: &FuncInfo,
        ins: &InstrData,
        frag: Frag,
        layout: Layout,
        shape: Shape,
        space: StateSpace,
        ty: ScalarType,
    ) -> R<()> {
        let ops = &ins.operands;
        let fmt = wmma_fmt(ty, frag == Frag::C);
        let (Some((m, n, k)), Some(fmt)) = (wmma_mnk(shape), fmt) else {
            return Err(self.unsupported(
                t,
                "wmma form not modelled",
                format!("wmma.load.{frag}.{shape}.{ty}"),
            ));
        };
        let (rows, cols) = match frag {
            Frag::A => (m, k),
            Frag::B => (k, n),
            Frag::C => (m, n),
        };
        let Some(dst) = ops.first() else {
            return Err(self.malformed(t));
        };
        let slots = dst.parts().len() * per_reg(fmt);
        if fragments::wmma_lanes(rows, cols, slots).is_none() {
            return Err(self.unsupported(
                t,
                "wmma fragment register count does not fit the shape",
                ins.instr.mnemonic(),
            ));
        }
        let Some(Operand::Addr(addr)) = ops.get(1) else {
            return Err(self.unsupported(t, "wmma.load without an address", String::new()));
        };
        let addr = addr.clone();
        let stride = match ops.get(2) {
            Some(s) => self.matrix_u32(t, info, s, "the wmma stride")? as usize,
            None if layout == Layout::Row => cols,
            None => rows,
        };
        let es = usize::from(fmt.size());
        let (lines, len) = if layout == Layout::Row {
            (rows, cols)
        } else {
            (cols, rows)
        };
        let class = frag_class(frag, shape, fmt, layout);
        let view = self.wmma_view(t, info, class, space, &addr, stride, layout)?;
        self.wmma_view_begin(t / 32, view);
        let mut loaded = Vec::with_capacity(lines);
        for line in 0..lines {
            let a = offset_addr(&addr, (line * stride * es) as i64);
            let v = self.load(t, info, space, &a, (len * es) as u8);
            let v = match v {
                Ok(v) => v,
                Err(h) => {
                    self.wmma_view_end();
                    return Err(h);
                }
            };
            loaded.push(v.unwrap_or(Value::Undef));
        }
        self.wmma_view_end();
        let lane = (t % 32) as usize;
        let w = (t / 32) as usize;
        let mut vals = Vec::with_capacity(slots);
        for e in 0..slots {
            let (r, c) = fragments::wmma_element(rows, cols, slots, lane, e)
                .ok_or_else(|| self.malformed(t))?;
            let (line, p) = if layout == Layout::Row {
                (r, c)
            } else {
                (c, r)
            };
            let raw = loaded[line].slice((p * es) as u8, es as u8, (len * es) as u8);
            // Each element is a leaf of this load, whatever it holds (a
            // padding zero is an element like any other).
            vals.push(match self.as_real(t, &raw, fmt)? {
                Some(x) => {
                    // Thread-private memory may hold fragment elements
                    // stored one by one; which tile element each became
                    // depends on the layout.
                    self.layout_escape(t, &raw, "read back by a wmma.load")?;
                    Value::data(self.wmma_leaf(x, class, w, lane, e), fmt)
                }
                None => Value::Undef,
            });
        }
        let regs: Vec<Value<D::Val>> = if per_reg(fmt) == 2 {
            vals.chunks(2)
                .map(|p| {
                    let parts: Vec<(Value<D::Val>, u8)> =
                        p.iter().map(|v| (v.clone(), 2)).collect();
                    Value::concat(&parts)
                })
                .collect()
        } else {
            vals
        };
        self.write_regs(t, info, dst, regs)
    }
}
