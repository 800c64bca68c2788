//! Lexical scopes of a function body.
//!
//! PTX names are block-scoped: a nested `{ ... }` (inline asm, call
//! sequences) may declare `.reg`s, `.param`s and labels that reuse outer
//! names. Each declaration gets its own id; lookup walks from the innermost
//! frame outwards. The outermost frame holds module variables, the next the
//! function's params, then one frame per block.
//!
//! The frames store only ids: a name is hashed once per lookup and compared
//! against the name in the function's tables (`regs`, `vars`, `params`,
//! `labels`), so declaring a name copies no string. Every id must therefore
//! be in its table (with that name) before it is declared.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use ptxeq_ir::{Label, LabelId, ParamDecl, ParamId, RegId, RegInfo, Symbol, VarDecl, VarId};
use rustc_hash::FxBuildHasher;

/// A variable or parameter (functions are module-level, never in a frame).
#[derive(Clone, Copy)]
enum SymId {
    Var(u32),
    Param(u32),
}

#[derive(Default)]
struct Frame {
    regs: HashTable<RegId>,
    syms: HashTable<SymId>,
    labels: HashTable<LabelId>,
}

impl Frame {
    fn clear(&mut self) {
        self.regs.clear();
        self.syms.clear();
        self.labels.clear();
    }
}

/// The function's name tables the frames' ids point into.
#[derive(Clone, Copy)]
pub(crate) struct Tables<'t> {
    pub(crate) regs: &'t [RegInfo],
    pub(crate) vars: &'t [VarDecl],
    pub(crate) params: &'t [ParamDecl],
    pub(crate) labels: &'t [Label],
}

impl Tables<'_> {
    fn reg_name(&self, r: RegId) -> &str {
        self.regs.get(r.index()).map_or("", |x| x.name.as_str())
    }

    fn sym_name(&self, s: SymId) -> &str {
        match s {
            SymId::Var(i) => self.vars.get(i as usize).map_or("", |x| x.name.as_str()),
            SymId::Param(i) => self.params.get(i as usize).map_or("", |x| x.name.as_str()),
        }
    }

    fn label_name(&self, l: LabelId) -> &str {
        self.labels.get(l.index()).map_or("", |x| x.name.as_str())
    }
}

/// A stack of frames; never empty.
pub(crate) struct Scopes {
    frames: Vec<Frame>,
    /// Popped frames kept for reuse (their tables keep their capacity).
    spare: Vec<Frame>,
}

/// Something declared twice in one frame.
pub(crate) struct Redeclared;

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Inserts `id` under `name` into `table`, replacing (and reporting) an
/// earlier declaration of the same name.
fn declare<T: Copy>(
    table: &mut HashTable<T>,
    name: &str,
    id: T,
    name_of: impl Fn(T) -> u64 + Copy,
    eq: impl Fn(T) -> bool,
) -> Result<(), Redeclared> {
    match table.entry(hash(name), |x| eq(*x), |x| name_of(*x)) {
        Entry::Occupied(mut e) => {
            *e.get_mut() = id;
            Err(Redeclared)
        }
        Entry::Vacant(e) => {
            e.insert(id);
            Ok(())
        }
    }
}

impl Scopes {
    pub(crate) fn new() -> Self {
        Scopes {
            frames: vec![Frame::default()],
            spare: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self) {
        let f = self.spare.pop().unwrap_or_default();
        self.frames.push(f);
    }

    pub(crate) fn pop(&mut self) {
        if self.frames.len() > 1
            && let Some(mut f) = self.frames.pop()
        {
            f.clear();
            self.spare.push(f);
        }
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    /// Declares register `id` (already in `t.regs`) under `name`.
    pub(crate) fn declare_reg(
        &mut self,
        name: &str,
        id: RegId,
        t: Tables<'_>,
    ) -> Result<(), Redeclared> {
        declare(
            &mut self.top().regs,
            name,
            id,
            |r| hash(t.reg_name(r)),
            |r| t.reg_name(r) == name,
        )
    }

    /// Declares a variable or param (already in `t.vars` / `t.params`).
    pub(crate) fn declare_sym(
        &mut self,
        name: &str,
        sym: Symbol,
        t: Tables<'_>,
    ) -> Result<(), Redeclared> {
        let id = match sym {
            Symbol::Var(VarId(i)) => SymId::Var(i),
            Symbol::Param(ParamId(i)) => SymId::Param(i),
            // Functions live in the module context, not in frames.
            Symbol::Func(_) => return Ok(()),
        };
        declare(
            &mut self.top().syms,
            name,
            id,
            |s| hash(t.sym_name(s)),
            |s| t.sym_name(s) == name,
        )
    }

    /// Declares label `id` (already in `t.labels`) under `name`.
    pub(crate) fn declare_label(
        &mut self,
        name: &str,
        id: LabelId,
        t: Tables<'_>,
    ) -> Result<(), Redeclared> {
        declare(
            &mut self.top().labels,
            name,
            id,
            |l| hash(t.label_name(l)),
            |l| t.label_name(l) == name,
        )
    }

    pub(crate) fn reg(&self, name: &str, t: Tables<'_>) -> Option<RegId> {
        let h = hash(name);
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.regs.find(h, |r| t.reg_name(*r) == name).copied())
    }

    pub(crate) fn sym(&self, name: &str, t: Tables<'_>) -> Option<Symbol> {
        let h = hash(name);
        self.frames.iter().rev().find_map(|f| {
            f.syms
                .find(h, |s| t.sym_name(*s) == name)
                .map(|s| match *s {
                    SymId::Var(i) => Symbol::Var(VarId(i)),
                    SymId::Param(i) => Symbol::Param(ParamId(i)),
                })
        })
    }

    pub(crate) fn label(&self, name: &str, t: Tables<'_>) -> Option<LabelId> {
        let h = hash(name);
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.labels.find(h, |l| t.label_name(*l) == name).copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptxeq_ir::ScalarType;

    #[test]
    fn inner_shadows_outer_and_pops() {
        let regs: Vec<RegInfo> = (0..3)
            .map(|_| RegInfo {
                name: "%t".into(),
                ty: ScalarType::B32,
                vector: None,
            })
            .collect();
        let t = Tables {
            regs: &regs,
            vars: &[],
            params: &[],
            labels: &[],
        };
        let mut s = Scopes::new();
        assert!(s.declare_reg("%t", RegId(0), t).is_ok());
        s.push();
        assert!(s.declare_reg("%t", RegId(1), t).is_ok());
        assert!(s.declare_reg("%t", RegId(2), t).is_err());
        assert_eq!(s.reg("%t", t), Some(RegId(2)));
        s.pop();
        assert_eq!(s.reg("%t", t), Some(RegId(0)));
        s.pop();
        s.pop();
        assert_eq!(
            s.reg("%t", t),
            Some(RegId(0)),
            "the base frame is never popped"
        );
        assert_eq!(s.label("L", t), None);
        assert_eq!(s.reg("%u", t), None);
    }
}
