//! Control-flow graph of one function: basic blocks, successors, reverse
//! post-order, dominators and natural loops.
//!
//! Built from the IR alone: labels are already resolved to instruction
//! indices. A block ends after every `bra`/`brx`/`ret`/`exit`/`trap` (guarded
//! or not) and before every label target. `call` does not end a block: the
//! callee returns to the next instruction. Malformed operands (a branch
//! without a label) lose their edge rather than panic; for this pass a lost
//! edge can only hide a problem, never invent one.

use ptxeq_ir::{Instr, KernelIr, Operand};

/// A maximal straight-line run of instructions `start..end`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Block {
    pub start: u32,
    pub end: u32,
    /// Successor blocks, without duplicates, taken edge first.
    pub succs: Vec<u32>,
    /// Control can leave the function by falling off its end (or branching
    /// to a label at the very end): an implicit `ret`.
    pub falls_off: bool,
}

/// The CFG. Block 0 is the entry (when there is any instruction).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// Block of each instruction.
    pub block_of: Vec<u32>,
    pub preds: Vec<Vec<u32>>,
    /// Blocks reachable from the entry, in reverse post-order.
    pub rpo: Vec<u32>,
}

/// Marks "no block" in [`Cfg::dominators`].
pub const NO_BLOCK: u32 = u32::MAX;

/// A natural loop: the header and every block of its body (header included).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Loop {
    pub header: u32,
    /// Indexed by block.
    pub body: Vec<bool>,
}

impl Loop {
    pub fn contains(&self, b: u32) -> bool {
        self.body.get(b as usize).copied().unwrap_or(false)
    }
}

/// The instruction index a branch-like operand names, when it is a label of
/// a non-prototype target.
fn label_target(f: &KernelIr, op: Option<&Operand>) -> Option<u32> {
    match op? {
        Operand::Label(l) => f
            .labels
            .get(l.index())
            .filter(|l| !l.prototype)
            .map(|l| l.target),
        _ => None,
    }
}

impl Cfg {
    /// Builds the CFG of `f`'s body.
    pub fn build(f: &KernelIr) -> Cfg {
        let n = f.instrs.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        leader[n] = true;
        for l in &f.labels {
            if !l.prototype && (l.target as usize) < n {
                leader[l.target as usize] = true;
            }
        }
        for (i, d) in f.instrs.iter().enumerate() {
            if d.instr.is_terminator() {
                leader[i + 1] = true;
            }
        }
        let mut blocks = Vec::new();
        let mut block_of = vec![0u32; n];
        let mut start = 0usize;
        for i in 1..=n {
            if leader[i] {
                if start < i {
                    for slot in &mut block_of[start..i] {
                        *slot = blocks.len() as u32;
                    }
                    blocks.push(Block {
                        start: start as u32,
                        end: i as u32,
                        succs: Vec::new(),
                        falls_off: false,
                    });
                }
                start = i;
            }
        }
        // Brx targets are a `.branchtargets` list the IR does not keep: take
        // every label (an over-approximation of the edges, so every block a
        // `brx` can reach is analysed).
        let all_labels: Vec<u32> = f
            .labels
            .iter()
            .filter(|l| !l.prototype)
            .map(|l| l.target)
            .collect();
        for b in &mut blocks {
            let last = &f.instrs[b.end as usize - 1];
            let guarded = last.guard.is_some();
            let mut targets: Vec<u32> = Vec::new();
            let mut falls_through = true;
            match &last.instr {
                Instr::Bra { .. } => {
                    targets.extend(label_target(f, last.operands.first()));
                    falls_through = guarded;
                }
                Instr::Brx { .. } => {
                    targets.extend(all_labels.iter().copied());
                    falls_through = guarded;
                }
                Instr::Ret { .. } | Instr::Exit | Instr::Trap => falls_through = guarded,
                _ => {}
            }
            if falls_through {
                targets.push(b.end);
            }
            for t in targets {
                if (t as usize) >= n {
                    // A label at the very end: leaving the function.
                    b.falls_off = true;
                } else {
                    let s = block_of[t as usize];
                    if !b.succs.contains(&s) {
                        b.succs.push(s);
                    }
                }
            }
        }
        let mut preds = vec![Vec::new(); blocks.len()];
        for (i, b) in blocks.iter().enumerate() {
            for &s in &b.succs {
                preds[s as usize].push(i as u32);
            }
        }
        let rpo = reverse_post_order(&blocks);
        Cfg {
            blocks,
            block_of,
            preds,
            rpo,
        }
    }

    /// Immediate dominator of each block ([`NO_BLOCK`] for the entry and for
    /// unreachable blocks). Cooper, Harvey & Kennedy's iterative algorithm
    /// over the reverse post-order.
    pub fn dominators(&self) -> Vec<u32> {
        let nb = self.blocks.len();
        let mut idom = vec![NO_BLOCK; nb];
        let Some(&entry) = self.rpo.first() else {
            return idom;
        };
        let mut order = vec![u32::MAX; nb];
        for (k, &b) in self.rpo.iter().enumerate() {
            order[b as usize] = k as u32;
        }
        idom[entry as usize] = entry;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in self.rpo.iter().skip(1) {
                let mut new = NO_BLOCK;
                for &p in &self.preds[b as usize] {
                    if idom[p as usize] == NO_BLOCK {
                        continue;
                    }
                    new = if new == NO_BLOCK {
                        p
                    } else {
                        intersect(&idom, &order, p, new)
                    };
                }
                if new != NO_BLOCK && idom[b as usize] != new {
                    idom[b as usize] = new;
                    changed = true;
                }
            }
        }
        idom[entry as usize] = NO_BLOCK;
        idom
    }

    /// Natural loops of the back edges `u -> h` (h dominates u), one per
    /// header (bodies of back edges sharing a header are merged).
    pub fn loops(&self, idom: &[u32]) -> Vec<Loop> {
        let nb = self.blocks.len();
        let mut loops: Vec<Loop> = Vec::new();
        for &u in &self.rpo {
            for &h in &self.blocks[u as usize].succs {
                if !dominates(idom, h, u) {
                    continue;
                }
                let li = match loops.iter().position(|l| l.header == h) {
                    Some(i) => i,
                    None => {
                        let mut body = vec![false; nb];
                        body[h as usize] = true;
                        loops.push(Loop { header: h, body });
                        loops.len() - 1
                    }
                };
                let body = &mut loops[li].body;
                let mut stack = vec![u];
                while let Some(x) = stack.pop() {
                    if body[x as usize] {
                        continue;
                    }
                    body[x as usize] = true;
                    stack.extend(self.preds[x as usize].iter().copied());
                }
            }
        }
        loops
    }
}

/// Whether `a` dominates `b` (every block dominates itself).
pub fn dominates(idom: &[u32], a: u32, b: u32) -> bool {
    let mut x = b;
    // A chain is at most as long as the number of blocks.
    for _ in 0..=idom.len() {
        if x == a {
            return true;
        }
        match idom.get(x as usize) {
            Some(&up) if up != NO_BLOCK => x = up,
            _ => return false,
        }
    }
    false
}

fn intersect(idom: &[u32], order: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while order[a as usize] > order[b as usize] {
            a = idom[a as usize];
        }
        while order[b as usize] > order[a as usize] {
            b = idom[b as usize];
        }
    }
    a
}

fn reverse_post_order(blocks: &[Block]) -> Vec<u32> {
    if blocks.is_empty() {
        return Vec::new();
    }
    let mut seen = vec![false; blocks.len()];
    let mut post = Vec::with_capacity(blocks.len());
    // Iterative DFS: (block, next successor index).
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some(top) = stack.last_mut() {
        let (b, k) = *top;
        if let Some(&s) = blocks[b as usize].succs.get(k) {
            top.1 += 1;
            if !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg_of(body: &str) -> Cfg {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n{body}");
        let lowered = ptxeq_lower::lower_source(&text);
        assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
        Cfg::build(&lowered.module.kernels[0])
    }

    #[test]
    fn rotated_loop_blocks_dominators_and_loops() {
        let cfg = cfg_of(
            r#".visible .entry k(.param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [n];               // 0
    setp.lt.s32 %p1, %r1, 1;             // 1
    @%p1 bra $L_done;                    // 2
    mov.u32 %r2, 0;                      // 3
$L_loop:
    add.s32 %r2, %r2, 1;                 // 4
    setp.lt.s32 %p2, %r2, %r1;           // 5
    @%p2 bra $L_loop;                    // 6
$L_done:
    ret;                                 // 7
}
"#,
        );
        let spans: Vec<(u32, u32)> = cfg.blocks.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(spans, vec![(0, 3), (3, 4), (4, 7), (7, 8)]);
        let succs: Vec<Vec<u32>> = cfg.blocks.iter().map(|b| b.succs.clone()).collect();
        assert_eq!(succs, vec![vec![3, 1], vec![2], vec![2, 3], vec![]]);
        assert_eq!(cfg.block_of, vec![0, 0, 0, 1, 2, 2, 2, 3]);
        assert_eq!(cfg.rpo, vec![0, 1, 2, 3]);
        let idom = cfg.dominators();
        assert_eq!(idom, vec![NO_BLOCK, 0, 1, 0]);
        assert!(dominates(&idom, 0, 2) && dominates(&idom, 2, 2) && !dominates(&idom, 2, 3));
        let loops = cfg.loops(&idom);
        assert_eq!(loops.len(), 1);
        assert_eq!(loops[0].header, 2);
        assert_eq!(loops[0].body, vec![false, false, true, false]);
        assert!(!cfg.blocks[3].falls_off);
    }

    #[test]
    fn falling_off_the_end_and_branching_to_it_leave_the_function() {
        let cfg = cfg_of(
            r#".visible .entry k(.param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    ld.param.u32 %r1, [n];               // 0
    setp.lt.s32 %p1, %r1, 1;             // 1
    @%p1 bra $L_end;                     // 2
    add.s32 %r1, %r1, 1;                 // 3
$L_end:
}
"#,
        );
        let spans: Vec<(u32, u32)> = cfg.blocks.iter().map(|b| (b.start, b.end)).collect();
        assert_eq!(spans, vec![(0, 3), (3, 4)]);
        assert!(cfg.blocks[0].falls_off && cfg.blocks[1].falls_off);
        assert_eq!(cfg.blocks[0].succs, vec![1]);
        assert!(cfg.blocks[1].succs.is_empty());
    }

    #[test]
    fn unreachable_blocks_are_outside_the_rpo() {
        let cfg = cfg_of(
            r#".visible .entry k()
{
    .reg .b32 %r<2>;
    exit;                                // 0
    mov.u32 %r1, 1;                      // 1
}
"#,
        );
        assert_eq!(cfg.blocks.len(), 2);
        assert_eq!(cfg.rpo, vec![0]);
        assert_eq!(cfg.dominators(), vec![NO_BLOCK, NO_BLOCK]);
    }
}
