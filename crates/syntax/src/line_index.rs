//! Byte offset → (line, column) conversion for diagnostics.

use rowan::TextSize;

/// Maps byte offsets of one text to 1-based line and column numbers.
///
/// Columns count characters (not bytes), which is what editors and
/// rustc-style diagnostics show. Built once per file in O(n); each lookup is
/// a binary search plus a scan of one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of every line; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
    text: String,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex {
            line_starts,
            text: text.to_owned(),
        }
    }

    /// 1-based `(line, column)` of `offset`. Offsets past the end clamp to
    /// the end; offsets inside a multi-byte character count that character.
    pub fn line_col(&self, offset: TextSize) -> (u32, u32) {
        let offset = u32::from(offset).min(self.text.len() as u32);
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let col = self.text[start..]
            .char_indices()
            .take_while(|&(i, _)| start + i < offset as usize)
            .count();
        (line as u32 + 1, col as u32 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let idx = LineIndex::new("ab\nc\u{e9}d\n\nx");
        let lc = |o: u32| idx.line_col(TextSize::from(o));
        assert_eq!(lc(0), (1, 1));
        assert_eq!(lc(1), (1, 2));
        assert_eq!(lc(2), (1, 3));
        assert_eq!(lc(3), (2, 1));
        assert_eq!(lc(6), (2, 3)); // after the two-byte é
        assert_eq!(lc(8), (3, 1));
        assert_eq!(lc(9), (4, 1));
        assert_eq!(lc(100), (4, 2));
        assert_eq!(LineIndex::new("").line_col(TextSize::from(0)), (1, 1));
    }
}
