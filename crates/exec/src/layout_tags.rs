//! Layout tags: the data domain wrapper that makes element-wise use of
//! `wmma` fragments checkable.
//!
//! The hardware's wmma fragment layout (which lane and register slot holds
//! which matrix element) is implementation-defined; the engine models it
//! with one fixed layout (`engine/fragments.rs`). A program that only
//! moves whole fragments between `wmma.load`, `wmma.mma` and `wmma.store`
//! does not depend on that choice. Neither does one that applies the *same*
//! element-wise function to every element of a fragment, with operands
//! drawn from the *same position* of other fragments of the same class
//! (shape, operand, element type, and for A/B the layout) or from values
//! that are the same in every element: selecting whole fragments by one
//! predicate, spilling them to `.local` and back, scaling by one value,
//! `fill_fragment`, `c[i] = α·c[i] + β·d[i]`. Under any layout σ such a
//! fragment holds, at element `e`, `F(X₁[e], …, X_k[e], scalars)` — the
//! same matrix as under the fixed layout. See `docs/semantics.md`
//! ("wmma fragments").
//!
//! [`Tagged`] wraps a domain and attaches to every real value computed
//! from a fragment element a [`LayoutTag`]: the fragment class and the
//! position (lane, slot) the value belongs to, and a position-free
//! *form* — a hash of the operations that computed it, with fragment
//! elements as leaves named by the wmma instruction instance that produced
//! them and every other operand by its value. Tags ride inside the values,
//! so they follow every register move, pack/unpack, `selp`, and
//! thread-private memory (`.local`, call params) without further code.
//! The engine (`engine/wmma_check.rs`) then checks, where a fragment is
//! consumed (`wmma.mma`, `wmma.store`), that every element has the
//! consumer's class, sits at the position it was computed for, and has one
//! form throughout; and it refuses tagged values wherever they would leave
//! the element-wise world (stores to shared/global memory, atomics,
//! conversions to integers). A tagged boolean is never a constant to the
//! engine ([`Domain::as_bool`] is `None`), so no control flow depends on a
//! fragment element.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use crate::domain::{BinOp, BoolOp, Cmp, Domain, Fmt, UnOp};
use crate::result::{CtaRun, OutputValue, TensorOutput};
use crate::trace::mix;

/// What a value computed from wmma fragment elements is (see the module
/// doc).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LayoutTag {
    /// The fragment class (`engine/wmma_check.rs` packs shape, operand,
    /// element type and layout).
    pub class: u32,
    /// The position: lane and slot (element index in register order, low
    /// half first) of the fragment the value belongs to.
    pub lane: u8,
    pub slot: u8,
    /// Position-free hash of the element-wise computation.
    pub form: u64,
    /// The instruction (packed id) that computed the value, for messages.
    pub at: u32,
    /// The value combines elements of different positions or classes
    /// (`at` is where that happened): it depends on the layout.
    pub mixed: bool,
}

/// A value of the wrapped domain with its tag (`0`: none).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TVal<V> {
    pub v: V,
    tag: u32,
}

/// The tagging wrapper around a domain `D` (see the module doc).
pub struct Tagged<D: Domain> {
    pub inner: D,
    tags: Vec<LayoutTag>,
    index: FxHashMap<LayoutTag, u32>,
    /// The instruction being executed (`Domain::layout_at`).
    at: u32,
}

/// Form codes of the operations (distinct from each other and from the
/// leaf and scalar codes).
#[derive(Hash)]
enum Code {
    Scalar,
    Un(UnOp),
    Bin(BinOp),
    Fma,
    Cmp(Cmp),
    CmpUnordered(Cmp),
    Unordered,
    Not,
    Bool(BoolOp),
    Select,
    /// An uninterpreted function, by name.
    Apply(u64),
}

/// A value's 64-bit digest (Fx on one small value, then the splitmix
/// finalizer of `trace::mix`).
fn hash_of(x: impl Hash) -> u64 {
    let mut h = FxHasher::default();
    x.hash(&mut h);
    mix(0x6c61_796f_7574, h.finish())
}

impl<D: Domain> Tagged<D> {
    pub fn new(inner: D) -> Self {
        Tagged {
            inner,
            tags: Vec::new(),
            index: FxHashMap::default(),
            at: 0,
        }
    }

    fn intern(&mut self, t: LayoutTag) -> u32 {
        if let Some(&i) = self.index.get(&t) {
            return i;
        }
        self.tags.push(t);
        let i = self.tags.len() as u32;
        self.index.insert(t, i);
        i
    }

    fn tag_of(&self, v: TVal<D::Val>) -> Option<LayoutTag> {
        (v.tag != 0).then(|| self.tags[(v.tag - 1) as usize])
    }

    fn plain(v: D::Val) -> TVal<D::Val> {
        TVal { v, tag: 0 }
    }

    /// The form of an operand: its tag's, or its value's for an untagged
    /// one (the same value in every element is a uniform scalar).
    fn form(&self, v: TVal<D::Val>) -> u64 {
        match self.tag_of(v) {
            Some(t) => t.form,
            None => mix(hash_of(Code::Scalar), hash_of(v.v)),
        }
    }

    /// The tag of `code(args)`: none when no argument is tagged; `mixed`
    /// when tagged arguments disagree on class or position (or one is
    /// mixed already); else the common position and the combined form.
    /// `commutative` sorts the forms of the first two arguments.
    fn combine(&mut self, code: Code, args: &[TVal<D::Val>], commutative: bool) -> u32 {
        if args.iter().all(|a| a.tag == 0) {
            return 0;
        }
        let mut pos: Option<LayoutTag> = None;
        let mut mixed: Option<LayoutTag> = None;
        for a in args {
            let Some(t) = self.tag_of(*a) else { continue };
            if t.mixed {
                mixed.get_or_insert(t);
                continue;
            }
            match pos {
                None => pos = Some(t),
                Some(p) if (p.class, p.lane, p.slot) != (t.class, t.lane, t.slot) => {
                    mixed.get_or_insert(LayoutTag {
                        at: self.at,
                        mixed: true,
                        ..p
                    });
                }
                Some(_) => {}
            }
        }
        if let Some(m) = mixed {
            return self.intern(LayoutTag { form: 0, ..m });
        }
        let Some(p) = pos else { return 0 };
        let mut forms: Vec<u64> = args.iter().map(|a| self.form(*a)).collect();
        if commutative && forms.len() >= 2 && forms[1] < forms[0] {
            forms.swap(0, 1);
        }
        let form = forms.iter().fold(hash_of(code), |h, &f| mix(h, f));
        self.intern(LayoutTag {
            form,
            at: self.at,
            mixed: false,
            ..p
        })
    }
}

impl<D: Domain> Domain for Tagged<D> {
    type Val = TVal<D::Val>;

    const BIT_EXACT: bool = D::BIT_EXACT;
    const LAYOUT_TAGS: bool = true;

    fn set_mode(&mut self, mode: crate::ieee::FpMode) {
        self.inner.set_mode(mode);
    }

    /// A tagged value keeps its real form (bit-exact domains): integer
    /// operations on it are then refused as bit manipulation.
    fn to_bits(&mut self, v: Self::Val, fmt: Fmt) -> Option<u64> {
        if v.tag != 0 {
            return None;
        }
        self.inner.to_bits(v.v, fmt)
    }

    fn float_const(&mut self, fmt: Fmt, bits: u64) -> Option<Self::Val> {
        self.inner.float_const(fmt, bits).map(Self::plain)
    }

    fn int_const(&mut self, v: i128) -> Self::Val {
        Self::plain(self.inner.int_const(v))
    }

    fn input(&mut self, tensor: u32, index: u64, fmt: Fmt) -> Self::Val {
        Self::plain(self.inner.input(tensor, index, fmt))
    }

    fn int_input(&mut self, tensor: u32, index: u64) -> Option<u64> {
        self.inner.int_input(tensor, index)
    }

    /// The inner domain's `apply` (the term domain keeps a symbol; the
    /// default interpretation would be built from this wrapper's ops).
    fn apply(&mut self, name: &str, args: &[Self::Val]) -> Self::Val {
        let tag = self.combine(Code::Apply(hash_of(name)), args, false);
        let inner: Vec<D::Val> = args.iter().map(|a| a.v).collect();
        TVal {
            v: self.inner.apply(name, &inner),
            tag,
        }
    }

    fn unary(&mut self, op: UnOp, a: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Un(op), &[a], false);
        TVal {
            v: self.inner.unary(op, a.v),
            tag,
        }
    }

    fn binary(&mut self, op: BinOp, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Bin(op), &[a, b], op.is_commutative());
        TVal {
            v: self.inner.binary(op, a.v, b.v),
            tag,
        }
    }

    fn fma(&mut self, a: Self::Val, b: Self::Val, c: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Fma, &[a, b, c], true);
        TVal {
            v: self.inner.fma(a.v, b.v, c.v),
            tag,
        }
    }

    fn cmp(&mut self, op: Cmp, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Cmp(op), &[a, b], false);
        TVal {
            v: self.inner.cmp(op, a.v, b.v),
            tag,
        }
    }

    fn cmp_unordered(&mut self, op: Cmp, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::CmpUnordered(op), &[a, b], false);
        TVal {
            v: self.inner.cmp_unordered(op, a.v, b.v),
            tag,
        }
    }

    fn unordered(&mut self, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Unordered, &[a, b], true);
        TVal {
            v: self.inner.unordered(a.v, b.v),
            tag,
        }
    }

    fn bool_const(&mut self, b: bool) -> Self::Val {
        Self::plain(self.inner.bool_const(b))
    }

    fn not(&mut self, a: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Not, &[a], false);
        TVal {
            v: self.inner.not(a.v),
            tag,
        }
    }

    fn bool_op(&mut self, op: BoolOp, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Bool(op), &[a, b], true);
        TVal {
            v: self.inner.bool_op(op, a.v, b.v),
            tag,
        }
    }

    fn select(&mut self, cond: Self::Val, a: Self::Val, b: Self::Val) -> Self::Val {
        let tag = self.combine(Code::Select, &[cond, a, b], false);
        TVal {
            v: self.inner.select(cond.v, a.v, b.v),
            tag,
        }
    }

    /// Never a constant when tagged: no control flow may depend on a
    /// fragment element.
    fn as_bool(&self, v: Self::Val) -> Option<bool> {
        if v.tag != 0 {
            return None;
        }
        self.inner.as_bool(v.v)
    }

    fn same_value(&self, a: Self::Val, b: Self::Val) -> bool {
        self.inner.same_value(a.v, b.v)
    }

    const UNIQUE_HANDLES: bool = D::UNIQUE_HANDLES;

    fn describe(&self, v: Self::Val) -> String {
        self.inner.describe(v.v)
    }

    fn layout_tag(&self, v: Self::Val) -> Option<LayoutTag> {
        self.tag_of(v)
    }

    fn layout_form(&self, v: Self::Val) -> u64 {
        self.form(v)
    }

    fn with_layout_tag(&mut self, v: Self::Val, tag: Option<LayoutTag>) -> Self::Val {
        TVal {
            v: v.v,
            tag: tag.map_or(0, |t| self.intern(t)),
        }
    }

    fn layout_at(&mut self, at: u32) {
        self.at = at;
    }
}

/// A run of the tagging domain with plain values. Outputs never carry a
/// tag (stores of tagged values are refused, `Engine::layout_escape`);
/// one that did would be reported rather than passed on.
pub(crate) fn untag_run<V: Copy>(run: CtaRun<TVal<V>>) -> CtaRun<V> {
    let outputs = run
        .outputs
        .into_iter()
        .map(|t| TensorOutput {
            tensor: t.tensor,
            name: t.name,
            writers: t.writers,
            elements: t
                .elements
                .into_iter()
                .map(|(i, v)| {
                    let v = match v {
                        OutputValue::Data(x) if x.tag == 0 => OutputValue::Data(x.v),
                        OutputValue::Data(_) => OutputValue::Unsupported(
                            "value computed from a wmma fragment element".into(),
                        ),
                        OutputValue::Bits(b) => OutputValue::Bits(b),
                        OutputValue::Unsupported(r) => OutputValue::Unsupported(r),
                    };
                    (i, v)
                })
                .collect(),
        })
        .collect();
    CtaRun {
        cta: run.cta,
        findings: run.findings,
        dropped_findings: run.dropped_findings,
        stats: run.stats,
        outputs,
        footprint: run.footprint,
        trace: run.trace,
    }
}

/// The form of a fragment element fresh from a wmma instruction: a leaf
/// named by the instruction instance (warp, that warp's wmma sequence
/// number).
pub(crate) fn leaf_form(warp: u32, seq: u64) -> u64 {
    mix(mix(0x6c65_6166, u64::from(warp)), seq)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Opaque;

    fn leaf(d: &mut Tagged<Opaque>, lane: u8, slot: u8, seq: u64) -> TVal<crate::OVal> {
        let x = d.input(0, u64::from(lane) * 8 + u64::from(slot), Fmt::F32);
        let t = LayoutTag {
            class: 7,
            lane,
            slot,
            form: leaf_form(0, seq),
            at: 1,
            mixed: false,
        };
        d.with_layout_tag(x, Some(t))
    }

    #[test]
    fn the_same_operation_on_every_element_has_one_form() {
        let mut d = Tagged::new(Opaque::new());
        let alpha = d.input(1, 0, Fmt::F32);
        let forms: Vec<u64> = (0..4)
            .map(|s| {
                let a = leaf(&mut d, 0, s, 0);
                let b = leaf(&mut d, 0, s, 1);
                let ab = d.binary(BinOp::Mul, alpha, a);
                let r = d.fma(b, alpha, ab);
                let t = d.layout_tag(r).expect("tagged");
                assert!(!t.mixed);
                assert_eq!(t.slot, s);
                t.form
            })
            .collect();
        assert!(forms.windows(2).all(|w| w[0] == w[1]));
    }

    #[test]
    fn different_positions_mix_and_scalars_count() {
        let mut d = Tagged::new(Opaque::new());
        let a0 = leaf(&mut d, 0, 0, 0);
        let a1 = leaf(&mut d, 0, 1, 0);
        let s = d.binary(BinOp::Add, a0, a1);
        assert!(d.layout_tag(s).expect("tagged").mixed);
        // Mixed stays mixed.
        let two = d.int_const(2);
        let s2 = d.binary(BinOp::Mul, s, two);
        assert!(d.layout_tag(s2).expect("tagged").mixed);
        // Different scalars give different forms.
        let three = d.int_const(3);
        let x = d.binary(BinOp::Mul, a0, two);
        let y = d.binary(BinOp::Mul, a1, three);
        let (tx, ty) = (d.layout_tag(x).unwrap(), d.layout_tag(y).unwrap());
        assert_ne!(tx.form, ty.form);
        // Commuted operands give the same form.
        let p = d.binary(BinOp::Mul, two, a0);
        assert_eq!(d.layout_tag(p).unwrap().form, tx.form);
        // Untagged arithmetic stays untagged; tagged booleans are never constants.
        let c = d.binary(BinOp::Add, two, three);
        assert_eq!(d.layout_tag(c), None);
        let zero = d.int_const(0);
        let z = d.binary(BinOp::Mul, a0, zero);
        let b = d.cmp(Cmp::Eq, z, two);
        assert_eq!(d.as_bool(b), None);
    }
}
