//! The term domain: the execution engine's data operations as hash-consed
//! real-valued terms.

use crate::input_ids::{CACHED, InputIds};
use ptxeq_exec::{BinOp, BoolOp, Cmp, Domain, Fmt, IntOp, IntRounding, UnOp};
use ptxeq_spec::DType;
use ptxeq_terms::{
    BigRational, CmpOp, IntCmpOp, IntFn, IntRound, IntTy, Sum, SumChains, TermId, Terms,
};

/// [`Domain`] over a [`Terms`] store. Every float value a kernel computes
/// becomes a term; equal terms are one node, so the reference's and the
/// candidate's sub-terms are shared when both run on one store.
#[derive(Default)]
pub struct TermDomain {
    /// The store. Read it or take it out at the end; do not swap in another
    /// store mid-run (`inputs` caches ids of this one).
    pub terms: Terms,
    /// Input terms by tensor and element, built so far: a kernel loads
    /// the same elements over and over, and this cache is far cheaper than
    /// a lookup in the store's large hash table (`input_ids.rs`).
    inputs: InputIds,
    /// The integer type of each integer tensor (by tensor number).
    int_types: Vec<Option<IntTy>>,
    /// Which instruction first built each term, when asked for
    /// ([`TermDomain::with_origins`]; `None` in the pipeline's replay).
    pub origins: Option<TermOrigins>,
    /// Pending accumulation sums (`ptxeq_terms::SumChains`): a partial sum
    /// is interned only when something other than another addition reads
    /// it. Off (`lazy == false`) only in the eager grid runs. When
    /// origins are recorded the chains tag each pending sum with the
    /// addition that made it, and a sum interned late (when read) is
    /// attributed to that addition, as an eager replay would have.
    chains: SumChains,
    lazy: bool,
}

/// Which instruction first built each term of a store: term ids are dense
/// and given in creation order, so the terms made while one instruction
/// ran are one range of ids, and one mark per such range is the whole
/// table (`(first id, packed instruction)`, ids increasing).
#[derive(Clone, Debug, Default)]
pub struct TermOrigins {
    marks: Vec<(u32, u32)>,
    /// Terms below this id are accounted for.
    mark: u32,
    /// The instruction running since `mark`.
    current: Option<u32>,
}

impl TermOrigins {
    fn starting_at(len: usize) -> Self {
        TermOrigins {
            marks: Vec::new(),
            mark: len as u32,
            current: None,
        }
    }

    /// The store has `len` terms and instruction `at` is about to run.
    #[inline]
    fn step(&mut self, len: usize, at: u32) {
        let len = len as u32;
        if len > self.mark {
            if let Some(cur) = self.current {
                self.marks.push((self.mark, cur));
            }
            self.mark = len;
        }
        self.current = Some(at);
    }

    /// The terms `from..to`, made while the current instruction ran, were
    /// built for instruction `at` (a pending sum it completed, interned
    /// when read): a range of their own, and the terms after them go to
    /// the current instruction again.
    fn attribute(&mut self, from: usize, to: usize, at: u32) {
        let (from, to) = (from as u32, to as u32);
        if from > self.mark {
            if let Some(cur) = self.current {
                self.marks.push((self.mark, cur));
            }
            self.mark = from;
        }
        if to > self.mark {
            self.marks.push((self.mark, at));
            self.mark = to;
        }
    }

    /// Closes the last range (the terms made after the last instruction,
    /// while outputs were collected, go to that instruction).
    pub fn finish(&mut self, len: usize) {
        let len = len as u32;
        if len > self.mark
            && let Some(cur) = self.current
        {
            self.marks.push((self.mark, cur));
            self.mark = len;
        }
    }

    /// The instruction that first built `t` (`None`: a term made before the
    /// run started, or after [`TermOrigins::finish`]).
    pub fn of(&self, t: TermId) -> Option<ptxeq_exec::InstrRef> {
        let id = t.raw();
        if id >= self.mark {
            return None;
        }
        let i = self.marks.partition_point(|&(first, _)| first <= id);
        let (_, at) = *self.marks.get(i.checked_sub(1)?)?;
        Some(ptxeq_exec::InstrRef::from_packed(at))
    }
}

impl TermDomain {
    pub fn new(terms: Terms) -> Self {
        TermDomain {
            terms,
            inputs: InputIds::default(),
            int_types: Vec::new(),
            origins: None,
            chains: SumChains::new(),
            lazy: true,
        }
    }

    /// The store, the rest of the domain (pending-sum arena, input cache)
    /// freed.
    pub fn into_terms(self) -> Terms {
        self.terms
    }

    /// The interned term of a value (building a pending sum's node; with
    /// origins, the node is attributed to the addition that completed the
    /// sum, not to the instruction that reads it).
    pub fn force(&mut self, v: Sum) -> TermId {
        let Some(origins) = &mut self.origins else {
            return self.chains.force(&mut self.terms, v);
        };
        let before = self.terms.len();
        let t = self.chains.force(&mut self.terms, v);
        if let Some(at) = self.chains.tag(v) {
            origins.attribute(before, self.terms.len(), at);
        }
        t
    }

    /// Counters of the deferred sums (profiles, benches).
    pub fn chain_stats(&self) -> ptxeq_terms::ChainStats {
        self.chains.stats()
    }

    /// `a + b`, deferred when it extends an accumulation (see `chains`).
    fn add(&mut self, a: Sum, b: Sum) -> Sum {
        if self.lazy {
            if self.origins.is_none() {
                return self.chains.add(&mut self.terms, a, b);
            }
            // `SumChains::add`, forcing through `force` so that a full
            // chain's sum is attributed to the addition that completed it.
            if let Some(s) = self.chains.extend(&self.terms, a, b) {
                return s;
            }
        }
        let (a, b) = (self.force(a), self.force(b));
        Sum::Term(self.terms.add(a, b))
    }

    /// A domain that interns every sum as it is built (no pending sums):
    /// for runs whose outputs the engine compares by handle (the ticket
    /// grid's orders).
    pub fn eager(terms: Terms) -> Self {
        TermDomain {
            lazy: false,
            ..TermDomain::new(terms)
        }
    }

    /// A domain that records which instruction first built each term
    /// ([`TermOrigins`]).
    pub fn with_origins(terms: Terms) -> Self {
        let origins = Some(TermOrigins::starting_at(terms.len()));
        let mut chains = SumChains::new();
        chains.record_tags();
        TermDomain {
            origins,
            chains,
            ..TermDomain::new(terms)
        }
    }
}

/// The integer type of a tensor dtype.
fn int_ty(d: DType) -> Option<IntTy> {
    let (bits, signed) = match d {
        DType::S8 => (8, true),
        DType::U8 => (8, false),
        DType::S16 => (16, true),
        DType::U16 => (16, false),
        DType::S32 => (32, true),
        DType::U32 => (32, false),
        DType::S64 => (64, true),
        DType::U64 => (64, false),
        _ => return None,
    };
    Some(IntTy { bits, signed })
}

/// The term function of an engine integer operation (the ring operations
/// have their own constructors).
fn int_fn(op: IntOp) -> Option<IntFn> {
    Some(match op {
        IntOp::Add | IntOp::Sub | IntOp::Mul | IntOp::Neg | IntOp::Not => return None,
        IntOp::Zext { from } => IntFn::Zext { from },
        IntOp::Sext { from } => IntFn::Sext { from },
        IntOp::Trunc => IntFn::Trunc,
        IntOp::And => IntFn::And,
        IntOp::Or => IntFn::Or,
        IntOp::Xor => IntFn::Xor,
        IntOp::Shl => IntFn::Shl,
        IntOp::Shr { signed } => IntFn::Shr { signed },
        IntOp::Div { signed } => IntFn::Div { signed },
        IntOp::Rem { signed } => IntFn::Rem { signed },
        IntOp::MulHi { signed } => IntFn::MulHi { signed },
        IntOp::Min { signed } => IntFn::Min { signed },
        IntOp::Max { signed } => IntFn::Max { signed },
        IntOp::Abs => IntFn::Abs,
        IntOp::Popc => IntFn::Popc,
        IntOp::Clz => IntFn::Clz,
        IntOp::Brev => IntFn::Brev,
        IntOp::Bfind { signed, shiftamt } => IntFn::Bfind { signed, shiftamt },
        IntOp::Bfe { signed } => IntFn::Bfe { signed },
        IntOp::Bfi => IntFn::Bfi,
        IntOp::Prmt { mode } => IntFn::Prmt { mode },
        IntOp::Lop3 { lut } => IntFn::Lop3 { lut },
        IntOp::AddSat => IntFn::AddSat,
        IntOp::SubSat => IntFn::SubSat,
    })
}

fn cmp_op(c: Cmp) -> CmpOp {
    match c {
        Cmp::Eq => CmpOp::Eq,
        Cmp::Ne => CmpOp::Ne,
        Cmp::Lt => CmpOp::Lt,
        Cmp::Le => CmpOp::Le,
        Cmp::Gt => CmpOp::Gt,
        Cmp::Ge => CmpOp::Ge,
    }
}

impl Domain for TermDomain {
    /// A term, or a pending accumulation sum (interned on first use by
    /// anything but another addition: [`TermDomain::force`]).
    type Val = Sum;

    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<Sum> {
        // The low bits hold the pattern; truncating casts pick them out.
        let t = match fmt {
            Fmt::F16 => self.terms.from_f16_bits(bits as u16),
            Fmt::Bf16 => self.terms.from_bf16_bits(bits as u16),
            Fmt::F32 => self.terms.from_f32_bits(bits as u32),
            Fmt::F64 => self.terms.from_f64_bits(bits),
            // Not float formats: integer data has no real constant.
            Fmt::I8 | Fmt::I16 | Fmt::I32 | Fmt::I64 => None,
            // fp8: the exact rational of the encoding (`ptxeq_exec::narrow`).
            Fmt::E4m3 | Fmt::E5m2 => match ptxeq_exec::decode_float(fmt, bits)? {
                ptxeq_exec::ExtReal::Finite(r) => Some(self.terms.rational(r)),
                ptxeq_exec::ExtReal::PosInf => Some(self.terms.pos_inf()),
                ptxeq_exec::ExtReal::NegInf => Some(self.terms.neg_inf()),
            },
        };
        t.map(Sum::Term)
    }

    fn int_const(&mut self, v: i128) -> Sum {
        Sum::Term(match i64::try_from(v) {
            Ok(small) => self.terms.int(small),
            Err(_) => self.terms.rational(BigRational::from_integer(v.into())),
        })
    }

    fn input(&mut self, tensor: u32, index: u64, _fmt: Fmt) -> Sum {
        if index >= CACHED {
            return Sum::Term(self.terms.input(tensor, index));
        }
        let terms = &mut self.terms;
        Sum::Term(
            self.inputs
                .get_or_make(tensor, index, || terms.input(tensor, index)),
        )
    }

    fn set_tensor_types(&mut self, dtypes: &[DType]) {
        self.int_types = dtypes.iter().map(|&d| int_ty(d)).collect();
    }

    fn int_data(&mut self, tensor: u32, index: u64, fmt: Fmt) -> Option<Sum> {
        let ty = (*self.int_types.get(tensor as usize)?)?;
        if u32::from(ty.bits) != fmt.bits() {
            return None;
        }
        let t = &mut self.terms;
        Some(Sum::Term(t.int_input(tensor, index, ty)))
    }

    fn int_lit(&mut self, w: u8, bits: u64) -> Option<Sum> {
        Some(Sum::Term(self.terms.int_const(w, bits)))
    }

    fn int_op(&mut self, op: IntOp, w: u8, args: &[(Sum, u8)]) -> Option<Sum> {
        let args: Vec<TermId> = args.iter().map(|&(v, _)| self.force(v)).collect();
        let t = &mut self.terms;
        let a = |i: usize| args.get(i).copied();
        Some(Sum::Term(match op {
            IntOp::Add => t.int_add(w, a(0)?, a(1)?),
            IntOp::Sub => t.int_sub(w, a(0)?, a(1)?),
            IntOp::Mul => t.int_mul(w, a(0)?, a(1)?),
            IntOp::Neg => t.int_neg(w, a(0)?),
            // ~a = −1 − a.
            IntOp::Not => {
                let m1 = t.int_const(w, u64::MAX);
                let na = t.int_neg(w, a(0)?);
                t.int_add(w, m1, na)
            }
            other => {
                let f = int_fn(other)?;
                t.int_op(f, w, &args)
            }
        }))
    }

    fn int_cmp(&mut self, op: Cmp, signed: bool, a: Sum, b: Sum) -> Option<Sum> {
        let op = match op {
            Cmp::Eq => IntCmpOp::Eq,
            Cmp::Ne => IntCmpOp::Ne,
            Cmp::Lt => IntCmpOp::Lt { signed },
            Cmp::Le => IntCmpOp::Le { signed },
            Cmp::Gt => IntCmpOp::Gt { signed },
            Cmp::Ge => IntCmpOp::Ge { signed },
        };
        let (a, b) = (self.force(a), self.force(b));
        Some(Sum::Term(self.terms.int_cmp(op, a, b)))
    }

    fn int_to_real(&mut self, a: Sum, signed: bool) -> Option<Sum> {
        let a = self.force(a);
        Some(Sum::Term(self.terms.int_to_real(signed, a)))
    }

    fn real_to_int(&mut self, a: Sum, rnd: IntRounding, signed: bool, w: u8) -> Option<Sum> {
        let rnd = match rnd {
            IntRounding::Nearest => IntRound::Nearest,
            IntRounding::Zero => IntRound::Zero,
            IntRounding::Down => IntRound::Down,
            IntRounding::Up => IntRound::Up,
        };
        let a = self.force(a);
        Some(Sum::Term(self.terms.int_op(
            IntFn::FromReal { rnd, signed },
            w,
            &[a],
        )))
    }

    fn apply(&mut self, name: &str, args: &[Sum]) -> Sum {
        let args: Vec<TermId> = args.iter().map(|&v| self.force(v)).collect();
        Sum::Term(self.terms.apply(name, &args))
    }

    fn unary(&mut self, op: UnOp, a: Sum) -> Sum {
        let a = self.force(a);
        let t = &mut self.terms;
        Sum::Term(match (op, op.math()) {
            // The exact term of each math function is in the one table
            // (`MathFn::term`).
            (_, Some(f)) => f.term(t, &[a]),
            (UnOp::Abs, None) => t.abs(a),
            (_, None) => t.neg(a),
        })
    }

    fn binary(&mut self, op: BinOp, a: Sum, b: Sum) -> Sum {
        match op {
            BinOp::Add => return self.add(a, b),
            // `a − b` = `a + (−1)·b`, as `Terms::sub` builds it.
            BinOp::Sub => {
                let b = self.force(b);
                let nb = Sum::Term(self.terms.neg(b));
                return self.add(a, nb);
            }
            _ => {}
        }
        let (a, b) = (self.force(a), self.force(b));
        let t = &mut self.terms;
        Sum::Term(match op {
            BinOp::Add | BinOp::Sub => unreachable!("handled above"),
            BinOp::Mul => t.mul(a, b),
            BinOp::Div => t.div(a, b),
            BinOp::Min => t.min(a, b),
            BinOp::Max => t.max(a, b),
            BinOp::Pow => ptxeq_terms::MathFn::Pow.term(t, &[a, b]),
        })
    }

    /// `a·b + c` as `Terms::fma` builds it (the product, then the sum),
    /// the sum deferred when it extends an accumulation.
    fn fma(&mut self, a: Sum, b: Sum, c: Sum) -> Sum {
        let (a, b) = (self.force(a), self.force(b));
        let p = Sum::Term(self.terms.mul(a, b));
        self.add(p, c)
    }

    fn cmp(&mut self, op: Cmp, a: Sum, b: Sum) -> Sum {
        let (a, b) = (self.force(a), self.force(b));
        Sum::Term(self.terms.cmp(cmp_op(op), a, b))
    }

    fn bool_const(&mut self, b: bool) -> Sum {
        Sum::Term(self.terms.bool_const(b))
    }

    fn not(&mut self, a: Sum) -> Sum {
        let a = self.force(a);
        Sum::Term(self.terms.not(a))
    }

    fn bool_op(&mut self, op: BoolOp, a: Sum, b: Sum) -> Sum {
        let (a, b) = (self.force(a), self.force(b));
        Sum::Term(match op {
            BoolOp::And => self.terms.and(a, b),
            BoolOp::Or => self.terms.or(a, b),
            BoolOp::Xor => self.terms.xor(a, b),
        })
    }

    fn select(&mut self, cond: Sum, a: Sum, b: Sum) -> Sum {
        let (cond, a, b) = (self.force(cond), self.force(a), self.force(b));
        Sum::Term(self.terms.select(cond, a, b))
    }

    /// A pending sum is a real sum, never a boolean constant.
    fn as_bool(&self, v: Sum) -> Option<bool> {
        match v {
            Sum::Term(t) => self.terms.as_bool(t),
            Sum::Pending(_) => None,
        }
    }

    /// Hash-consing makes this exact: one node per distinct term (a
    /// pending sum is compared by the operands of its would-be node).
    fn same_value(&self, a: Sum, b: Sum) -> bool {
        self.chains.same(&self.terms, a, b)
    }

    const UNIQUE_HANDLES: bool = false;

    fn describe(&self, v: Sum) -> String {
        match v {
            Sum::Term(t) => self.terms.display_limited(t, 80).to_string(),
            // Not interned (no `&mut` here): its operands, as the sum prints.
            Sum::Pending(_) => {
                let ops = self
                    .chains
                    .pending_operands(&self.terms, v)
                    .unwrap_or_default();
                let parts: Vec<String> = ops
                    .iter()
                    .map(|&o| self.terms.display_limited(o, 80).to_string())
                    .collect();
                let mut s = parts.join(" + ");
                if s.chars().count() > 80 {
                    s = s.chars().take(79).collect::<String>() + "…";
                }
                s
            }
        }
    }

    const AT_INSTR: bool = true;

    #[inline]
    fn at_instr(&mut self, at: u32) {
        if let Some(o) = &mut self.origins {
            o.step(self.terms.len(), at);
            self.chains.set_tag(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Terms made while an instruction ran are attributed to it; a term
    /// the store already held keeps its first instruction; terms made
    /// before the run or after `finish` have none.
    #[test]
    fn origins_name_the_instruction_that_first_built_a_term() {
        let mut d = TermDomain::with_origins(Terms::new());
        let pre = d.terms.input(0, 9);
        let (i1, i2) = (
            ptxeq_exec::InstrRef { func: 0, index: 1 },
            ptxeq_exec::InstrRef { func: 1, index: 2 },
        );
        let packed = |r: ptxeq_exec::InstrRef| (r.func << 22) | r.index;
        // `pre` was made before the run started.
        d.origins = Some(TermOrigins::starting_at(d.terms.len()));
        d.at_instr(packed(i1));
        let x = d.terms.input(0, 0);
        let y = d.terms.input(0, 1);
        d.at_instr(packed(ptxeq_exec::InstrRef { func: 0, index: 5 }));
        // Builds nothing new: no range.
        let again = d.terms.input(0, 0);
        d.at_instr(packed(i2));
        let s = d.terms.add(x, y);
        let mut o = d.origins.take().unwrap();
        o.finish(d.terms.len());
        assert_eq!(again, x);
        assert_eq!(o.of(x), Some(i1));
        assert_eq!(o.of(y), Some(i1));
        assert_eq!(o.of(s), Some(i2));
        assert_eq!(o.of(pre), None);
        let later = d.terms.input(0, 2);
        assert_eq!(o.of(later), None);
    }

    /// With origins, a pending sum interned when it is read is attributed
    /// to the addition that completed it (as an eager replay would have
    /// built it there), and what the reader builds to the reader.
    #[test]
    fn a_sum_interned_when_read_is_attributed_to_its_last_addition() {
        let mut d = TermDomain::with_origins(Terms::new());
        let at = |index| ptxeq_exec::InstrRef { func: 0, index };
        let packed = |r: ptxeq_exec::InstrRef| (r.func << 22) | r.index;
        d.at_instr(packed(at(1)));
        let p: Vec<Sum> = (0..3)
            .map(|i| {
                let a = d.terms.input(0, i);
                let b = d.terms.input(1, i);
                Sum::Term(d.terms.mul(a, b))
            })
            .collect();
        d.at_instr(packed(at(2)));
        let s = d.binary(BinOp::Add, p[0], p[1]);
        d.at_instr(packed(at(3)));
        let s = d.binary(BinOp::Add, s, p[2]);
        assert!(matches!(s, Sum::Pending(_)), "deferred");
        d.at_instr(packed(at(4)));
        let m = d.binary(BinOp::Mul, s, p[0]);
        let (m, s) = (d.force(m), d.force(s));
        let mut o = d.origins.take().unwrap();
        o.finish(d.terms.len());
        assert_eq!(o.of(s), Some(at(3)));
        assert_eq!(o.of(m), Some(at(4)));
        let first = d.force(p[0]);
        assert_eq!(o.of(first), Some(at(1)));
    }

    use ptxeq_terms::{Func, Rat};

    /// The idioms without atoms of their own are their exact terms: the
    /// same nodes as the naive forms (`expm1f(x)` ≡ `expf(x) - 1`), and
    /// their values those of the functions.
    #[test]
    fn idioms_lower_to_exact_terms() {
        let mut d = TermDomain::default();
        let x = d.terms.input(0, 0);
        let one = d.terms.constant(Rat::ONE);
        let (x, one) = (Sum::Term(x), Sum::Term(one));
        let e = d.unary(UnOp::Exp, x);
        let naive = d.binary(BinOp::Sub, e, one);
        assert_eq!(d.unary(UnOp::Expm1, x), naive);
        let s = d.binary(BinOp::Add, one, x);
        let s = d.force(s);
        let naive = Sum::Term(d.terms.func(Func::Log, s));
        assert_eq!(d.unary(UnOp::Log1p, x), naive);
        let v = 0.37;
        for (op, want) in [
            (UnOp::Log10, f64::log10(v)),
            (UnOp::Exp10, 10f64.powf(v)),
            (UnOp::Sinh, v.sinh()),
            (UnOp::Cosh, v.cosh()),
            (UnOp::Erf, erf_series(v)),
        ] {
            let t = d.unary(op, x);
            let t = d.force(t);
            let got = d.terms.eval_f64(t, &|_, _| v);
            assert!((got - want).abs() < 1e-12, "{op:?}: {got} vs {want}");
        }
    }

    /// erf(0.37) by its Taylor series (no libm dependency here).
    fn erf_series(x: f64) -> f64 {
        let mut sum = 0.0;
        let mut term = x;
        for n in 0..30 {
            sum += term / f64::from(2 * n + 1);
            term *= -x * x / f64::from(n + 1);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }
}
