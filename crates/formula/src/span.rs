//! Source positions: which text (the user's formula or the prelude) and a
//! byte range in it.

/// Byte range `start..end` in source `file` (0: the formula being checked,
/// 1: the prelude).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: u16,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: u16, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.end == self.start
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The source number of the user's formula.
pub const USER: u16 = 0;
/// The source number of the prelude.
pub const PRELUDE: u16 = 1;
