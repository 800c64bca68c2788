//! Frames: kernel entry, `call` of a `.func` (inlined: a new frame with
//! its own registers, `.local` variables and `.param` regions), `ret`.

use ptxeq_ir::{Operand, StateSpace, Symbol};

use super::{Engine, Flow, Frame, Halt, Private, R, RetBind, Status};
use crate::domain::Domain;
use crate::finding::FindingKind;
use crate::funcinfo::FuncInfo;
use crate::memory::{FUNC_WINDOW, Init, PRIVATE_GAP, Region, Slot, Slots, Space, store_value};
use crate::value::Value;

/// Copies the first `n` bytes (at most) of private region `from` over
/// private region `to` of one thread.
fn copy_private<V: Copy + Eq>(private: &mut [Private<V>], from: usize, to: usize, n: usize) {
    if from == to {
        return;
    }
    let (src, dst) = if from < to {
        let (a, b) = private.split_at_mut(to);
        (&a[from], &mut b[0])
    } else {
        let (a, b) = private.split_at_mut(from);
        (&b[0], &mut a[to])
    };
    dst.slots.copy_prefix(&src.slots, n);
}

/// What a caller passes for one callee argument.
pub(crate) enum ArgVal<V> {
    /// A value (register, immediate, or the content of a caller `.param`).
    Value(Value<V>),
    /// The bytes of a caller `.param` variable (private index).
    Region(usize),
}

impl<D: Domain> Engine<'_, D> {
    fn alloc_private(
        &mut self,
        t: u32,
        space: Space,
        name: String,
        size: u64,
        elem: u32,
    ) -> R<usize> {
        let th = &self.cta.threads[t as usize];
        let base = if space == Space::Local {
            th.cursor_local
        } else {
            th.cursor_param
        };
        // A private region must stay inside its space's generic window
        // (2^57 bytes for .param, the smaller one).
        let end = base
            .checked_add(size)
            .map(|e| e.div_ceil(PRIVATE_GAP) * PRIVATE_GAP + PRIVATE_GAP)
            .filter(|&e| e < 1 << 57);
        let Some(end) = end else {
            return Err(self.fail(
                t,
                FindingKind::ResourceLimit,
                "address map",
                format!(
                    "`{name}` ({size} bytes, per thread) does not fit the engine's address map of per-thread .{} memory",
                    space.name()
                ),
            ));
        };
        let th = &mut self.cta.threads[t as usize];
        let cursor = if space == Space::Local {
            &mut th.cursor_local
        } else {
            &mut th.cursor_param
        };
        *cursor = end;
        th.private.push(Private {
            region: Region {
                name,
                space,
                base,
                size,
                elem,
                init: Init::Uninit,
                tensor: None,
            },
            slots: Slots::metered(size as usize, Slot::Unwritten, &self.mem.meter),
        });
        Ok(th.private.len() - 1)
    }

    /// Pushes a frame of function `func` with its private regions and the
    /// argument values bound to its params.
    pub(crate) fn push_frame(&mut self, t: u32, func: u32, args: Vec<ArgVal<D::Val>>) -> R<()> {
        let funcs = self.funcs.clone();
        let info = &funcs[func as usize];
        if self.cta.threads[t as usize].frames.len() as u32 >= self.input.limits.max_call_depth {
            return Err(self.fail(
                t,
                FindingKind::ResourceLimit,
                "call depth",
                format!("call depth over {}", self.input.limits.max_call_depth),
            ));
        }
        let private_base = self.cta.threads[t as usize].private.len();
        for &v in &info.private_vars {
            let var = &info.ir.vars[v as usize];
            let space = if var.space == StateSpace::Local {
                Space::Local
            } else {
                Space::Param
            };
            let elem = (var.ty.size_bytes() * u64::from(var.vector.unwrap_or(1))) as u32;
            self.alloc_private(
                t,
                space,
                var.name.clone(),
                var.size_bytes.unwrap_or(0),
                elem,
            )?;
        }
        let mut regs = vec![Value::Undef; info.nslots];
        if func != 0 {
            for p in info.ir.params.iter() {
                if p.space == StateSpace::Param {
                    let size = p.size_bytes.unwrap_or_else(|| p.ty.size_bytes());
                    self.alloc_private(
                        t,
                        Space::Param,
                        p.name.clone(),
                        size,
                        p.ty.size_bytes() as u32,
                    )?;
                }
            }
            // Bind arguments (non-return params in order).
            let mut priv_ix = private_base + info.private_vars.len();
            let mut arg_iter = args.into_iter();
            for p in info.ir.params.iter() {
                let is_param_space = p.space == StateSpace::Param;
                let here = priv_ix;
                if is_param_space {
                    priv_ix += 1;
                }
                if p.is_return {
                    continue;
                }
                let Some(a) = arg_iter.next() else {
                    return Err(self.unsupported(
                        t,
                        "call with missing arguments",
                        format!("`{}` expects more arguments", info.ir.name),
                    ));
                };
                let width = p.ty.size_bytes() as u8;
                match (is_param_space, a) {
                    (true, ArgVal::Value(v)) => {
                        let th = &mut self.cta.threads[t as usize];
                        let n = th.private[here].slots.len();
                        if usize::from(width) <= n {
                            store_value(&mut th.private[here].slots, 0, &v, width);
                        }
                    }
                    (true, ArgVal::Region(src)) => {
                        let th = &mut self.cta.threads[t as usize];
                        copy_private(&mut th.private, src, here, usize::MAX);
                    }
                    (false, a) => {
                        let v = match a {
                            ArgVal::Value(v) => v,
                            ArgVal::Region(src) => {
                                let th = &self.cta.threads[t as usize];
                                let p = &th.private[src];
                                let (v, _) = crate::memory::load_value(
                                    &p.slots,
                                    &p.region.clone(),
                                    0,
                                    width.min(p.slots.len().min(255) as u8),
                                    &mut self.d,
                                    self.cur_instr,
                                );
                                v
                            }
                        };
                        if let Some(r) = p.reg {
                            let s = Self::slot(info, r);
                            if let Some(x) = regs.get_mut(s) {
                                *x = v;
                            }
                        }
                    }
                }
            }
        }
        let prov = if self.cov.is_some() {
            vec![0; regs.len()]
        } else {
            Vec::new()
        };
        self.cta.threads[t as usize].frames.push(Frame {
            func,
            pc: 0,
            regs,
            private_base,
            rets: Vec::new(),
            prov,
        });
        Ok(())
    }

    /// `call (rets), target, (args)`.
    pub(crate) fn do_call(
        &mut self,
        funcs: &[FuncInfo],
        info: &FuncInfo,
        t: u32,
        pc: u32,
    ) -> R<Flow> {
        let ins = &info.ir.instrs[pc as usize];
        let callee = match (info.callee[pc as usize], ins.operands.get(1)) {
            (Some(c), _) => c,
            (
                None,
                Some(Operand::Symbol {
                    sym: Symbol::Func(name),
                    ..
                }),
            ) => {
                return Err(self.unsupported(
                    t,
                    "call of an external function",
                    format!(
                        "`{name}` has no body in this module; declare it (.extern .func) and bind \
                         it in the spec: [functions] {name} = \"exp\" (or another function, or \
                         \"uninterpreted\")"
                    ),
                ));
            }
            (None, Some(op @ Operand::Reg(_))) => {
                let v = self.read(t, info, op, 64)?;
                match v {
                    Value::Bits(a) if a >= FUNC_WINDOW && (a - FUNC_WINDOW).is_multiple_of(16) => {
                        let k = ((a - FUNC_WINDOW) / 16) as usize;
                        if k < funcs.len() && k > 0 {
                            k as u32
                        } else {
                            return Err(self.unsupported(
                                t,
                                "indirect call to an unknown address",
                                format!("{a:#x}"),
                            ));
                        }
                    }
                    Value::Undef => return Err(self.uninit_register(t, "the indirect call target")),
                    _ => {
                        return Err(self.unsupported(
                            t,
                            "indirect call through a non-constant address",
                            String::new(),
                        ));
                    }
                }
            }
            _ => return Err(self.unsupported(t, "call form not supported", String::new())),
        };
        // Callee index k refers to the engine table: 0 is the kernel.
        let cinfo = &funcs[callee as usize];
        if let Some(b) = self.input.bindings.function(&cinfo.ir.name) {
            let b = b.clone();
            return self.bound_call(t, info, pc, &b);
        }
        if !cinfo.ir.has_body {
            let name = &cinfo.ir.name;
            let key = crate::bindings::unmangled(name).unwrap_or(name);
            return Err(self.unsupported(
                t,
                "call of an external function",
                format!(
                    "`{name}` has no body; bind it in the spec: [functions] {key} = \"exp\" \
                     (or another real function, or \"uninterpreted\"), flag form \
                     --function {key}=exp"
                ),
            ));
        }
        let list = |i: usize| -> Vec<Operand> {
            match ins.operands.get(i) {
                Some(Operand::List(v)) => v.clone(),
                _ => Vec::new(),
            }
        };
        let rets = list(0);
        let args = list(2);
        let mut argv = Vec::with_capacity(args.len());
        let callee_args: Vec<_> = cinfo.ir.params.iter().filter(|p| !p.is_return).collect();
        for (i, a) in args.iter().enumerate() {
            let w = callee_args.get(i).map_or(32, |p| p.ty.bit_width());
            match a {
                Operand::Symbol {
                    sym: Symbol::Var(v),
                    offset: 0,
                } => match self.private_of_var(t, info, v.index()) {
                    Some(p) => argv.push(ArgVal::Region(p)),
                    None => {
                        let val = self.read(t, info, a, w)?;
                        argv.push(ArgVal::Value(val));
                    }
                },
                _ => {
                    let val = self.read(t, info, a, w)?;
                    argv.push(ArgVal::Value(val));
                }
            }
        }
        self.push_frame(t, callee, argv)?;
        // Return bindings.
        let (private_base, nvars) = {
            let fr = self.cta.threads[t as usize].frames.last().ok_or(Halt)?;
            (fr.private_base, cinfo.private_vars.len())
        };
        let mut binds = Vec::new();
        let mut priv_ix = private_base + nvars;
        let mut ret_ix = 0usize;
        for p in cinfo.ir.params.iter() {
            let here = priv_ix;
            if p.space == StateSpace::Param {
                priv_ix += 1;
            }
            if !p.is_return {
                continue;
            }
            let Some(dst) = rets.get(ret_ix) else {
                ret_ix += 1;
                continue;
            };
            ret_ix += 1;
            let width = p.ty.size_bytes() as u8;
            let caller_region = match dst {
                Operand::Symbol {
                    sym: Symbol::Var(v),
                    ..
                } => {
                    // The caller's frame is one below the callee's.
                    let th = &self.cta.threads[t as usize];
                    let caller = &th.frames[th.frames.len() - 2];
                    info.private_vars
                        .iter()
                        .position(|&x| x as usize == v.index())
                        .map(|pos| caller.private_base + pos)
                }
                _ => None,
            };
            let bind = match (p.space == StateSpace::Param, caller_region, p.reg) {
                (true, Some(to), _) => RetBind::RegionToRegion {
                    from: here,
                    to,
                    size: p.size_bytes.unwrap_or(u64::from(width)),
                },
                (true, None, _) => RetBind::RegionToReg {
                    from: here,
                    to: dst.clone(),
                    width,
                },
                (false, Some(to), Some(r)) => RetBind::RegToRegion {
                    from_slot: Self::slot(cinfo, r) as u32,
                    to,
                    width,
                },
                (false, None, Some(r)) => RetBind::RegToReg {
                    from_slot: Self::slot(cinfo, r) as u32,
                    to: dst.clone(),
                },
                _ => continue,
            };
            binds.push(bind);
        }
        let th = &mut self.cta.threads[t as usize];
        let n = th.frames.len();
        th.frames[n - 2].pc = pc + 1;
        th.frames[n - 1].rets = binds;
        Ok(Flow::Transfer)
    }

    /// A call of a `.func` bound by the spec's `[functions]`: the
    /// arguments are read as reals, the result is the bound function of
    /// them (or an uninterpreted application), written where the call's
    /// return operand says; the body, if any, is not run.
    fn bound_call(
        &mut self,
        t: u32,
        info: &FuncInfo,
        pc: u32,
        b: &crate::bindings::BoundFunction,
    ) -> R<Flow> {
        use crate::bindings::BoundOp;
        let ins = &info.ir.instrs[pc as usize];
        let list = |i: usize| -> Vec<Operand> {
            match ins.operands.get(i) {
                Some(Operand::List(v)) => v.clone(),
                _ => Vec::new(),
            }
        };
        let (rets, args) = (list(0), list(2));
        if args.len() != b.args.len() || rets.len() != 1 {
            return Err(self.unsupported(
                t,
                "call of a bound function",
                format!(
                    "`{}` is called with {} argument(s) and {} result(s); its declaration has {} and 1",
                    b.func,
                    args.len(),
                    rets.len(),
                    b.args.len()
                ),
            ));
        }
        let mut vals = Vec::with_capacity(args.len());
        for (a, &fmt) in args.iter().zip(&b.args) {
            let width = fmt.size();
            let v = match a {
                Operand::Symbol {
                    sym: Symbol::Var(v),
                    offset: 0,
                } if self.private_of_var(t, info, v.index()).is_some() => {
                    let p = self.private_of_var(t, info, v.index()).ok_or(Halt)?;
                    let pr = &self.cta.threads[t as usize].private[p];
                    let (len, region) = (pr.slots.len(), pr.region.clone());
                    if len < usize::from(width) {
                        return Err(self.unsupported(
                            t,
                            "call of a bound function",
                            format!(
                                "argument `{}` is smaller than its .{}",
                                region.name,
                                fmt.name()
                            ),
                        ));
                    }
                    let (v, li) = crate::memory::load_value(
                        &self.cta.threads[t as usize].private[p].slots,
                        &region,
                        0,
                        width,
                        &mut self.d,
                        self.cur_instr,
                    );
                    if li.uninit {
                        return Err(self.uninit_register(t, "an argument of the bound function"));
                    }
                    v
                }
                _ => self.read(t, info, a, u32::from(width) * 8)?,
            };
            match self.as_real(t, &v, fmt)? {
                Some(x) => vals.push(x),
                None => return Err(self.uninit_register(t, "an argument of the bound function")),
            }
        }
        let r = match (b.binding, vals.as_slice()) {
            (BoundOp::Uninterpreted, _) => self.d.apply(&b.key, &vals),
            (BoundOp::Unary(u), [a]) => self.d.unary(u, *a),
            (BoundOp::Binary(op), [a, c]) => self.d.binary(op, *a, *c),
            _ => {
                return Err(self.unsupported(t, "call of a bound function", "arity".into()));
            }
        };
        let out = Value::data(r, b.ret);
        let dst = &rets[0];
        match dst {
            Operand::Symbol {
                sym: Symbol::Var(v),
                offset: 0,
            } if self.private_of_var(t, info, v.index()).is_some() => {
                let p = self.private_of_var(t, info, v.index()).ok_or(Halt)?;
                let slots = &mut self.cta.threads[t as usize].private[p].slots;
                if slots.len() < usize::from(b.ret.size()) {
                    return Err(self.unsupported(
                        t,
                        "call of a bound function",
                        "the return variable is smaller than the result".into(),
                    ));
                }
                store_value(slots, 0, &out, b.ret.size());
            }
            _ => self.write(t, info, dst, out)?,
        }
        Ok(Flow::Next)
    }

    /// `ret` (or falling off the end of a body).
    pub(crate) fn do_return(&mut self, funcs: &[FuncInfo], t: u32) -> R<Flow> {
        let depth = self.cta.threads[t as usize].frames.len();
        if depth <= 1 {
            return Ok(Flow::Exit);
        }
        let frame = self.cta.threads[t as usize].frames.pop().ok_or(Halt)?;
        let caller_func = self.cta.threads[t as usize].frames.last().ok_or(Halt)?.func;
        let caller_info = &funcs[caller_func as usize];
        for b in &frame.rets {
            match b {
                RetBind::RegionToRegion { from, to, size } => {
                    let th = &mut self.cta.threads[t as usize];
                    copy_private(&mut th.private, *from, *to, *size as usize);
                }
                RetBind::RegionToReg { from, to, width } => {
                    let th = &self.cta.threads[t as usize];
                    let p = &th.private[*from];
                    let region = p.region.clone();
                    let slots = &p.slots;
                    let w = (*width).min(slots.len().min(255) as u8);
                    let (v, _) = crate::memory::load_value(
                        slots,
                        &region,
                        0,
                        w,
                        &mut self.d,
                        self.cur_instr,
                    );
                    self.write(t, caller_info, to, v)?;
                }
                RetBind::RegToReg { from_slot, to } => {
                    if let Some(c) = self.cov.as_deref_mut() {
                        c.read_from(frame.prov.get(*from_slot as usize));
                    }
                    let v = frame
                        .regs
                        .get(*from_slot as usize)
                        .cloned()
                        .unwrap_or(Value::Undef);
                    self.write(t, caller_info, to, v)?;
                }
                RetBind::RegToRegion {
                    from_slot,
                    to,
                    width,
                } => {
                    if let Some(c) = self.cov.as_deref_mut() {
                        c.read_from(frame.prov.get(*from_slot as usize));
                    }
                    let v = frame
                        .regs
                        .get(*from_slot as usize)
                        .cloned()
                        .unwrap_or(Value::Undef);
                    let th = &mut self.cta.threads[t as usize];
                    let dst = &mut th.private[*to].slots;
                    if usize::from(*width) <= dst.len() {
                        store_value(dst, 0, &v, *width);
                    }
                }
            }
        }
        // Free the frame's private regions (their storage leaves the
        // meter as it drops) and their address ranges.
        let th = &mut self.cta.threads[t as usize];
        th.private.truncate(frame.private_base);
        let end_of = |space: Space, th: &super::Thread<D::Val>| {
            th.private
                .iter()
                .rev()
                .find(|p| p.region.space == space)
                .map_or(crate::memory::PRIVATE_START, |p| {
                    (p.region.base + p.region.size).div_ceil(PRIVATE_GAP) * PRIVATE_GAP
                        + PRIVATE_GAP
                })
        };
        th.cursor_local = end_of(Space::Local, th);
        th.cursor_param = end_of(Space::Param, th);
        Ok(Flow::Transfer)
    }

    /// A thread terminates (`exit`, or `ret` from the kernel).
    pub(crate) fn exit_thread(&mut self, t: u32) {
        let th = &mut self.cta.threads[t as usize];
        th.status = Status::Exited;
        let w = (t / 32) as usize;
        self.cta.live[w] &= !(1u32 << (t % 32));
        if self.unit.is_some() {
            self.dsmem_after_exit(t);
        }
        self.after_exit(t);
    }
}
