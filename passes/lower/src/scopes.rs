//! Lexical scopes of a function body.
//!
//! PTX names are block-scoped: a nested `{ ... }` (inline asm, call
//! sequences) may declare `.reg`s, `.param`s and labels that reuse outer
//! names. Each declaration gets its own id; lookup walks from the innermost
//! frame outwards. The outermost frame holds module variables, the next the
//! function's params, then one frame per block.

use std::collections::HashMap;

use ptxeq_ir::{LabelId, RegId, Symbol};

#[derive(Default)]
struct Frame {
    regs: HashMap<String, RegId>,
    syms: HashMap<String, Symbol>,
    labels: HashMap<String, LabelId>,
}

/// A stack of frames; never empty.
pub(crate) struct Scopes {
    frames: Vec<Frame>,
}

/// Something declared twice in one frame.
pub(crate) struct Redeclared;

impl Scopes {
    pub(crate) fn new() -> Self {
        Scopes {
            frames: vec![Frame::default()],
        }
    }

    pub(crate) fn push(&mut self) {
        self.frames.push(Frame::default());
    }

    pub(crate) fn pop(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
        }
    }

    fn top(&mut self) -> &mut Frame {
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    pub(crate) fn declare_reg(&mut self, name: &str, id: RegId) -> Result<(), Redeclared> {
        match self.top().regs.insert(name.to_string(), id) {
            Some(_) => Err(Redeclared),
            None => Ok(()),
        }
    }

    pub(crate) fn declare_sym(&mut self, name: &str, sym: Symbol) -> Result<(), Redeclared> {
        match self.top().syms.insert(name.to_string(), sym) {
            Some(_) => Err(Redeclared),
            None => Ok(()),
        }
    }

    pub(crate) fn declare_label(&mut self, name: &str, id: LabelId) -> Result<(), Redeclared> {
        match self.top().labels.insert(name.to_string(), id) {
            Some(_) => Err(Redeclared),
            None => Ok(()),
        }
    }

    pub(crate) fn reg(&self, name: &str) -> Option<RegId> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.regs.get(name).copied())
    }

    pub(crate) fn sym(&self, name: &str) -> Option<Symbol> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.syms.get(name).cloned())
    }

    pub(crate) fn label(&self, name: &str) -> Option<LabelId> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.labels.get(name).copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_shadows_outer_and_pops() {
        let mut s = Scopes::new();
        assert!(s.declare_reg("%t", RegId(0)).is_ok());
        s.push();
        assert!(s.declare_reg("%t", RegId(1)).is_ok());
        assert!(s.declare_reg("%t", RegId(2)).is_err());
        assert_eq!(s.reg("%t"), Some(RegId(2)));
        s.pop();
        assert_eq!(s.reg("%t"), Some(RegId(0)));
        s.pop();
        s.pop();
        assert_eq!(
            s.reg("%t"),
            Some(RegId(0)),
            "the base frame is never popped"
        );
        assert_eq!(s.label("L"), None);
    }
}
