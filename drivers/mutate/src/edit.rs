//! Text edits: a mutant is the candidate's PTX with a few byte ranges
//! replaced, so the whole pipeline — parsing included — runs on it.

use serde::Serialize;

/// Replace bytes `start..end` by `text`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub start: u32,
    pub end: u32,
    pub text: String,
}

impl Edit {
    pub fn new(start: u32, end: u32, text: impl Into<String>) -> Self {
        Edit {
            start,
            end,
            text: text.into(),
        }
    }
}

/// `text` with `edits` applied; `None` when two edits overlap or one lies
/// outside the text (a generator bug, never a mutant).
pub fn apply(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut at = 0usize;
    for e in sorted {
        let (s, t) = (e.start as usize, e.end as usize);
        if s < at || t < s || t > text.len() {
            return None;
        }
        out.push_str(text.get(at..s)?);
        out.push_str(&e.text);
        at = t;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_in_order_and_rejects_overlaps() {
        let t = "add.f32 %f1, %f2, %f3;";
        let e = [Edit::new(0, 3, "sub"), Edit::new(13, 16, "%f3")];
        assert_eq!(apply(t, &e).as_deref(), Some("sub.f32 %f1, %f3, %f3;"));
        assert_eq!(
            apply(t, &[Edit::new(0, 5, "x"), Edit::new(4, 6, "y")]),
            None
        );
        assert_eq!(apply(t, &[Edit::new(0, 99, "x")]), None);
    }
}
