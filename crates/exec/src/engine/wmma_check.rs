//! Layout independence of wmma fragment use.
//!
//! The hardware's wmma fragment layout is implementation-defined, and
//! ptxeq models it with one fixed layout (`fragments::wmma_element`).
//! Runs of kernels with wmma use the tagging domain
//! ([`crate::layout_tags::Tagged`]): every value computed from a fragment
//! element carries its fragment class, its position (lane, slot) and a
//! position-free form. This module is the engine's side of it:
//!
//! - [`Engine::wmma_leaf`]: a fragment element fresh from `wmma.load` /
//!   `wmma.mma` becomes a leaf of the warp's current wmma instance;
//! - [`Engine::wmma_element`]: where a fragment is consumed (`wmma.mma`
//!   operands, `wmma.store`), each element must have the consumer's class,
//!   sit at its own position and have the form of every other element —
//!   the same element-wise function of whole fragments of that class and of
//!   uniform values. Then the fragment holds the same matrix under any
//!   layout, and the fixed layout computes it exactly. Otherwise: the
//!   unsupported finding "wmma fragment used element-wise", naming where
//!   the offending value was computed;
//! - [`Engine::layout_escape`]: a tagged value stored to CTA-wide memory
//!   (global, shared), combined in an atomic, or turned into an integer
//!   leaves the element-wise world (which element went where depends on
//!   the layout): the same unsupported finding.

use ptxeq_ir::{Frag, Layout, Shape};
use rustc_hash::FxHashMap;

use super::{Engine, R};
use crate::domain::{Domain, Fmt};
use crate::layout_tags::LayoutTag;
use crate::value::Value;

/// Bytes a wmma access covered: `(view, region, offset, width)`.
pub(crate) type TileRange = (u64, u32, u64, u64);

/// Per-run state.
pub(crate) struct WmmaState {
    /// Per warp, the number of wmma instructions it completed (the
    /// instance that names fresh fragment elements).
    pub seq: Vec<u64>,
    /// The view (warp, view id) of the wmma.load / wmma.store whose memory
    /// accesses are being made (race judgement, [`WmmaState::same_view`]).
    pub cur_view: Option<(u32, u64)>,
    /// Per (warp, instruction): the byte ranges `(view, region, offset,
    /// width)` its executions accessed in CTA-wide memory.
    pub tiles: FxHashMap<(u32, u32), Vec<TileRange>>,
}

impl WmmaState {
    pub(crate) fn new(warps: usize) -> Self {
        WmmaState {
            seq: vec![0; warps],
            cur_view: None,
            tiles: FxHashMap::default(),
        }
    }

    /// Records that the current wmma access (of warp `w`, view `view`, at
    /// `instr`) covers `[off, off + width)` of CTA-wide region `region`.
    pub(crate) fn record(&mut self, instr: u32, region: u32, off: u64, width: u64) {
        let Some((w, view)) = self.cur_view else {
            return;
        };
        let list = self.tiles.entry((w, instr)).or_default();
        let e = (view, region, off, width);
        if !list.contains(&e) {
            list.push(e);
        }
    }

    /// Whether the earlier access `a` to byte `byte` of `region` and the
    /// current one are wmma accesses of one warp through the same view:
    /// every execution of `a`'s instruction by that warp that touched the
    /// byte did so through the current view. ptxeq takes every lane to
    /// access a wmma tile whole (the real holder of an element is unknown),
    /// but through one view each byte is the same fragment element, held by
    /// the same lane under any layout, so the two accesses are that lane's,
    /// in program order: not a race (`wmma.load` of a C tile, element-wise
    /// update, `wmma.store` back).
    pub(crate) fn same_view(&self, region: u32, byte: u64, a: &crate::race::Acc) -> bool {
        let Some((w, view)) = self.cur_view else {
            return false;
        };
        if a.tid / 32 != w {
            return false;
        }
        let Some(list) = self.tiles.get(&(w, a.instr)) else {
            return false;
        };
        let mut covering = list
            .iter()
            .filter(|(_, r, off, width)| *r == region && (*off..off + width).contains(&byte))
            .peekable();
        covering.peek().is_some() && covering.all(|(v, ..)| *v == view)
    }
}

/// The fragment class: fragments of one class share one (unknown) layout.
/// Accumulators (C/D) have no layout of their own (`.row`/`.col` of
/// `wmma.load.c`/`wmma.store.d` is the memory's); A and B fragments do.
pub(crate) fn frag_class(frag: Frag, shape: Shape, fmt: Fmt, layout: Layout) -> u32 {
    let op = match frag {
        Frag::A => 0u32,
        Frag::B => 1,
        Frag::C => 2,
    };
    let ty = match fmt {
        Fmt::F16 => 0u32,
        Fmt::Bf16 => 1,
        Fmt::F32 => 2,
        Fmt::F64 => 3,
        Fmt::I8 => 4,
        Fmt::I16 => 5,
        Fmt::I32 => 6,
        Fmt::I64 => 7,
        Fmt::E4m3 => 8,
        Fmt::E5m2 => 9,
    };
    let lay = match (frag, layout) {
        (Frag::C, _) => 0u32,
        (_, Layout::Row) => 1,
        (_, Layout::Col) => 2,
    };
    let dim = |x: u16| u32::from(x.min(255) as u8);
    // op: 2 bits, ty: 4 bits, layout: 2 bits, then m, n, k: 8 bits each.
    op | ty << 2 | lay << 6 | dim(shape.m) << 8 | dim(shape.n) << 16 | dim(shape.k) << 24
}

/// `m16n16k16 matrix_a .f16 row_major` and the like.
pub(crate) fn describe_class(c: u32) -> String {
    let op = ["matrix_a", "matrix_b", "accumulator", "?"][(c & 3) as usize];
    let ty = [
        "f16", "bf16", "f32", "f64", "s8", "s16", "s32", "s64", "e4m3", "e5m2", "?", "?", "?", "?",
        "?", "?",
    ][(c >> 2 & 15) as usize];
    let lay = ["", " row_major", " col_major", ""][(c >> 6 & 3) as usize];
    let (m, n, k) = (c >> 8 & 255, c >> 16 & 255, c >> 24 & 255);
    format!("m{m}n{n}k{k} {op} .{ty}{lay}")
}

/// The closing words of every message here (today's wording).
const LAYOUT_NOTE: &str = "the wmma fragment layout is implementation-defined, so a program that \
     reads or writes fragment elements individually is not modelled (element-wise operations \
     applied alike to every element of whole fragments are)";

/// What a checked element turned out to be.
pub(crate) struct Element<V> {
    /// The value without its tag.
    pub val: V,
    pub form: u64,
    pub tag: Option<LayoutTag>,
}

impl<D: Domain> Engine<'_, D> {
    /// `x` as element `slot` of `lane` of a fresh fragment of `class`
    /// produced by the current wmma instruction of `warp`.
    pub(crate) fn wmma_leaf(
        &mut self,
        x: D::Val,
        class: u32,
        warp: usize,
        lane: usize,
        slot: usize,
    ) -> D::Val {
        let seq = self.cta.wmma.seq.get(warp).copied().unwrap_or(0);
        let tag = LayoutTag {
            class,
            lane: lane as u8,
            slot: slot as u8,
            form: crate::layout_tags::leaf_form(warp as u32, seq),
            at: self.cur_instr,
            mixed: false,
        };
        self.d.with_layout_tag(x, Some(tag))
    }

    /// Marks a wmma instruction of warp `w` complete: later fragments are
    /// another instance.
    pub(crate) fn wmma_done(&mut self, w: usize) {
        if let Some(s) = self.cta.wmma.seq.get_mut(w) {
            *s += 1;
        }
    }

    /// Element `slot` of `lane`'s part of a consumed fragment of `class`:
    /// its class and position must be the consumer's (see the module
    /// doc). Uniformity across elements is checked by the caller, which
    /// compares the returned forms.
    pub(crate) fn wmma_element(
        &mut self,
        t: u32,
        x: D::Val,
        class: u32,
        lane: usize,
        slot: usize,
        what: &str,
    ) -> R<Element<D::Val>> {
        let tag = self.d.layout_tag(x);
        let form = self.d.layout_form(x);
        let val = self.d.with_layout_tag(x, None);
        let Some(tg) = tag else {
            return Ok(Element { val, form, tag });
        };
        let at = self.describe_at(tg.at);
        let problem = if tg.mixed {
            Some(format!(
                "{what}: lane {lane} element {slot} was computed at {at} from elements at different positions of wmma fragments"
            ))
        } else if tg.class != class {
            Some(format!(
                "{what}: lane {lane} element {slot} holds an element of a {} fragment (computed at {at}), used as a {} fragment, whose layout may differ",
                describe_class(tg.class),
                describe_class(class)
            ))
        } else if (usize::from(tg.lane), usize::from(tg.slot)) != (lane, slot) {
            Some(format!(
                "{what}: lane {lane} element {slot} holds lane {} element {} of a fragment (computed at {at})",
                tg.lane, tg.slot
            ))
        } else {
            None
        };
        match problem {
            Some(p) => Err(self.unsupported(
                t,
                "wmma fragment used element-wise",
                format!("{p}; {LAYOUT_NOTE}"),
            )),
            None => Ok(Element { val, form, tag }),
        }
    }

    /// `instruction 12 (mul.f32)`: where a tagged value was computed.
    fn describe_at(&self, at: u32) -> String {
        let r = super::unpack_instr(at);
        match self
            .funcs
            .get(r.func as usize)
            .and_then(|f| f.ir.instrs.get(r.index as usize))
        {
            Some(ins) => format!("{r} ({})", ins.instr.mnemonic()),
            None => r.to_string(),
        }
    }

    /// Starts the memory accesses of a wmma.load / wmma.store of warp `w`
    /// through `view` (a hash of the fragment class, state space, address,
    /// stride and memory layout: which fragment element each byte is).
    pub(crate) fn wmma_view_begin(&mut self, w: u32, view: u64) {
        self.cta.wmma.cur_view = Some((w, view));
    }

    pub(crate) fn wmma_view_end(&mut self) {
        self.cta.wmma.cur_view = None;
    }

    /// Two elements of one consumed fragment computed differently.
    pub(crate) fn wmma_not_uniform(
        &mut self,
        t: u32,
        what: &str,
        a: (usize, usize, Option<LayoutTag>),
        b: (usize, usize, Option<LayoutTag>),
    ) -> super::Halt {
        let say = |(l, s, tag): (usize, usize, Option<LayoutTag>)| match tag {
            Some(tg) => format!(
                "lane {l} element {s} was last computed at {}",
                self.describe_at(tg.at)
            ),
            None => format!("lane {l} element {s} holds a value not computed from a fragment"),
        };
        let detail = if a.2.is_none() && b.2.is_none() {
            format!(
                "lane {} element {} and lane {} element {} hold different values not computed from a fragment (a fill must be one value)",
                b.0, b.1, a.0, a.1
            )
        } else {
            format!("{} but {}", say(b), say(a))
        };
        self.unsupported(
            t,
            "wmma fragment used element-wise",
            format!(
                "{what}: {detail}: not the same element-wise operation on every element; {LAYOUT_NOTE}"
            ),
        )
    }

    /// Refuses a value computed from wmma fragment elements where it would
    /// leave the element-wise world (`what`: "stored to shared memory", …).
    #[inline]
    pub(crate) fn layout_escape(&mut self, t: u32, v: &Value<D::Val>, what: &str) -> R<()> {
        if !D::LAYOUT_TAGS {
            return Ok(());
        }
        match self.tag_in(v) {
            None => Ok(()),
            Some(tg) => {
                let desc = if tg.mixed {
                    format!(
                        "combined from elements at different positions of wmma fragments at {}",
                        self.describe_at(tg.at)
                    )
                } else {
                    format!(
                        "lane {} element {} of a {} fragment, last computed at {}",
                        tg.lane,
                        tg.slot,
                        describe_class(tg.class),
                        self.describe_at(tg.at)
                    )
                };
                Err(self.unsupported(
                    t,
                    "wmma fragment used element-wise",
                    format!("a value computed from a wmma fragment element ({desc}) is {what}; {LAYOUT_NOTE}"),
                ))
            }
        }
    }

    /// The first layout tag inside a register value.
    fn tag_in(&self, v: &Value<D::Val>) -> Option<LayoutTag> {
        match v {
            Value::Data { v, .. } | Value::Bool(v) => self.d.layout_tag(*v),
            Value::Pack(parts) => parts.iter().find_map(|p| self.tag_in(&p.val)),
            _ => None,
        }
    }

    /// Refuses a data predicate computed from fragment elements where it
    /// becomes an integer.
    #[inline]
    pub(crate) fn layout_escape_bool(&mut self, t: u32, c: D::Val, what: &str) -> R<()> {
        if !D::LAYOUT_TAGS {
            return Ok(());
        }
        self.layout_escape(t, &Value::Bool(c), what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_distinct_and_described() {
        let s = Shape {
            m: 16,
            n: 16,
            k: 16,
        };
        let a_row = frag_class(Frag::A, s, Fmt::F16, Layout::Row);
        let a_col = frag_class(Frag::A, s, Fmt::F16, Layout::Col);
        let c_row = frag_class(Frag::C, s, Fmt::F32, Layout::Row);
        let c_col = frag_class(Frag::C, s, Fmt::F32, Layout::Col);
        let c16 = frag_class(Frag::C, s, Fmt::F16, Layout::Row);
        assert_ne!(a_row, a_col);
        assert_eq!(c_row, c_col, "accumulators have no layout of their own");
        assert_ne!(c_row, c16);
        let t = Shape { m: 32, n: 8, k: 16 };
        assert_ne!(frag_class(Frag::C, t, Fmt::F32, Layout::Row), c_row);
        assert_eq!(describe_class(a_row), "m16n16k16 matrix_a .f16 row_major");
        assert_eq!(describe_class(c_col), "m16n16k16 accumulator .f32");
    }
}
