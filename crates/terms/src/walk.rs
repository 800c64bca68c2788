//! The one traversal of the term DAG: every term reachable from a set of
//! roots, each once. Users that only need "what is reachable" (the inputs
//! a term reads, the functions it applies, the nodes of one kind) iterate
//! [`Terms::reachable`]; users that need children before parents take
//! [`Terms::post_order`]. Both are iterative (a deep term does not
//! overflow the stack) and visit each shared sub-term once.

use hashbrown::HashSet;

use crate::node::{Node, TermId};
use crate::store::Terms;

/// Iterator over the terms reachable from some roots (depth first, each
/// once, roots included); see [`Terms::reachable`].
pub struct Reachable<'a> {
    terms: &'a Terms,
    seen: HashSet<TermId>,
    stack: Vec<TermId>,
}

impl<'a> Iterator for Reachable<'a> {
    type Item = (TermId, &'a Node);

    fn next(&mut self) -> Option<Self::Item> {
        while let Some(t) = self.stack.pop() {
            if !self.seen.insert(t) {
                continue;
            }
            let node = self.terms.node(t);
            self.stack.extend(node.children());
            return Some((t, node));
        }
        None
    }
}

impl Terms {
    /// Every term reachable from `roots`, each once, with its node, in an
    /// unspecified order (sort what you collect when order matters). Stops
    /// early when the caller stops iterating.
    pub fn reachable(&self, roots: &[TermId]) -> Reachable<'_> {
        Reachable {
            terms: self,
            seen: HashSet::new(),
            stack: roots.to_vec(),
        }
    }

    /// Every term reachable from `roots`, each once, children before
    /// parents; roots and children in their stored order.
    pub fn post_order(&self, roots: &[TermId]) -> Vec<TermId> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut stack: Vec<(TermId, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((t, expanded)) = stack.pop() {
            if expanded {
                out.push(t);
                continue;
            }
            if !seen.insert(t) {
                continue;
            }
            stack.push((t, true));
            let children: Vec<TermId> = self.node(t).children().collect();
            for c in children.into_iter().rev() {
                if !seen.contains(&c) {
                    stack.push((c, false));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::{Rat, Terms};

    #[test]
    fn shared_terms_are_visited_once_and_children_come_first() {
        let mut t = Terms::new();
        let x = t.input(0, 0);
        let y = t.input(0, 1);
        let s = t.add(x, y);
        let e = t.exp(s);
        let p = t.mul(e, s);
        let two = t.constant(Rat::from_i64(2));
        let q = t.mul(p, two);
        let all: Vec<_> = t.reachable(&[q, s]).map(|(id, _)| id).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "each term once");
        let post = t.post_order(&[q, s]);
        assert_eq!(post.len(), all.len());
        assert_eq!(post.last(), Some(&q));
        let pos = |id| post.iter().position(|&p| p == id);
        for &id in &post {
            for c in t.node(id).children() {
                assert!(pos(c) < pos(id), "{c} before {id}");
            }
        }
        // Early exit: the iterator is lazy.
        assert!(t.reachable(&[q]).any(|(id, _)| id == x));
    }
}
