//! Sparse arrays: the engine's per-byte (per-word, per-element) state of a
//! memory region, allocated in small pages on first write.
//!
//! A kernel touches a sliver of its tensors (one CTA of a 4096×4096 GEMM
//! reads 64 rows of `A`, 64 columns of `B` and writes a 64×64 tile of
//! `C`), so every piece of state the engine keeps per byte of a region —
//! the contents ([`crate::memory::Slot`]), race shadows, global-memory
//! footprints — is a [`SparseVec`]: a logical array of `len` elements that
//! all hold `fill` until written. Storage is a three-level page table:
//! pages of 64 elements, tables of 64 pages (one per 4 Ki elements of
//! address range that holds a page), directories of 256 tables (one per
//! 1 Mi elements), and a top-level vector that grows with the highest
//! directory written. So an untouched region costs a few words whatever
//! its size, and a touched one its touched pages plus at most 512 bytes
//! of table per touched 4 Ki-element window (a strided walk down a
//! column of a 4096-wide matrix costs one table per row).
//!
//! Reads never allocate: a read of an absent page sees `fill`. Every
//! allocation is counted on an optional shared [`Meter`], which the engine
//! checks against its memory limit (`Limits::max_memory_state_bytes`).

use std::cell::Cell;
use std::rc::Rc;

/// Elements per page: log2.
pub const PAGE_BITS: u32 = 6;
/// Elements per page.
pub const PAGE: usize = 1 << PAGE_BITS;
/// Pages per table: log2.
const TABLE_BITS: u32 = 6;
const TABLE: usize = 1 << TABLE_BITS;
/// Tables per directory: log2.
const DIR_BITS: u32 = 8;
const DIR: usize = 1 << DIR_BITS;

type Page<T> = Box<[T; PAGE]>;
type Table<T> = Box<[Option<Page<T>>; TABLE]>;
type Dir<T> = Box<[Option<Table<T>>; DIR]>;

/// A shared counter of the bytes all metered [`SparseVec`]s hold.
#[derive(Clone, Default, Debug)]
pub struct Meter(Rc<Cell<u64>>);

impl Meter {
    pub fn new() -> Self {
        Meter::default()
    }

    /// Bytes held now.
    pub fn bytes(&self) -> u64 {
        self.0.get()
    }

    fn add(&self, n: u64) {
        self.0.set(self.0.get().saturating_add(n));
    }

    fn sub(&self, n: u64) {
        self.0.set(self.0.get().saturating_sub(n));
    }
}

/// How a range of a [`SparseVec`] is stored.
pub enum Span<'a, T> {
    /// Inside one allocated page.
    Slice(&'a [T]),
    /// Entirely in absent pages: every element is the fill value.
    Fill(T),
    /// Crosses a page boundary with at least one page present.
    Mixed,
}

/// A logical array of `len` elements, all `fill` until written; see the
/// module documentation.
pub struct SparseVec<T: Copy> {
    len: usize,
    fill: T,
    dirs: Vec<Option<Dir<T>>>,
    pages: usize,
    tables: usize,
    meter: Option<Meter>,
}

impl<T: Copy> SparseVec<T> {
    /// `len` elements of `fill`, nothing allocated.
    pub fn new(len: usize, fill: T) -> Self {
        SparseVec {
            len,
            fill,
            dirs: Vec::new(),
            pages: 0,
            tables: 0,
            meter: None,
        }
    }

    /// Like [`SparseVec::new`], counting its storage on `meter`.
    pub fn metered(len: usize, fill: T, meter: &Meter) -> Self {
        let mut v = SparseVec::new(len, fill);
        v.meter = Some(meter.clone());
        v
    }

    /// A new, unwritten array of `len` elements with this one's fill and
    /// meter.
    pub fn empty_like(&self, len: usize) -> Self {
        let mut v = SparseVec::new(len, self.fill);
        v.meter = self.meter.clone();
        v
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value every unwritten element holds.
    pub fn fill(&self) -> T {
        self.fill
    }

    /// Pages allocated.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Heap bytes of the pages and tables (not the top-level vector,
    /// one word per 1 Mi elements up to the highest one written).
    pub fn bytes(&self) -> u64 {
        let dirs = self.dirs.iter().filter(|d| d.is_some()).count();
        (self.pages * Self::page_bytes()
            + self.tables * Self::table_bytes()
            + dirs * Self::dir_bytes()) as u64
    }

    fn page_bytes() -> usize {
        std::mem::size_of::<[T; PAGE]>()
    }

    fn table_bytes() -> usize {
        std::mem::size_of::<[Option<Page<T>>; TABLE]>()
    }

    fn dir_bytes() -> usize {
        std::mem::size_of::<[Option<Table<T>>; DIR]>()
    }

    #[inline]
    fn page(&self, p: usize) -> Option<&[T; PAGE]> {
        let t = p >> TABLE_BITS;
        let dir = self.dirs.get(t >> DIR_BITS)?.as_ref()?;
        dir[t & (DIR - 1)].as_ref()?[p & (TABLE - 1)].as_deref()
    }

    /// Element `i` (`fill` when never written).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len, "index {i} out of {}", self.len);
        match self.page(i >> PAGE_BITS) {
            Some(p) => p[i & (PAGE - 1)],
            None => self.fill,
        }
    }

    /// The page holding element `i`, allocated (filled) if absent.
    #[inline]
    fn page_mut(&mut self, i: usize) -> &mut [T; PAGE] {
        debug_assert!(i < self.len, "index {i} out of {}", self.len);
        let p = i >> PAGE_BITS;
        let t = p >> TABLE_BITS;
        let d = t >> DIR_BITS;
        if d >= self.dirs.len() {
            self.dirs.resize_with(d + 1, || None);
        }
        let meter = &self.meter;
        let charge = |n: usize| {
            if let Some(m) = meter {
                m.add(n as u64);
            }
        };
        let dir = self.dirs[d].get_or_insert_with(|| {
            charge(Self::dir_bytes());
            Box::new(std::array::from_fn(|_| None))
        });
        let tables = &mut self.tables;
        let table = dir[t & (DIR - 1)].get_or_insert_with(|| {
            *tables += 1;
            charge(Self::table_bytes());
            Box::new(std::array::from_fn(|_| None))
        });
        let fill = self.fill;
        let pages = &mut self.pages;
        table[p & (TABLE - 1)].get_or_insert_with(|| {
            *pages += 1;
            charge(Self::page_bytes());
            Box::new([fill; PAGE])
        })
    }

    /// Element `i` for writing (allocates its page).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.page_mut(i)[i & (PAGE - 1)]
    }

    /// Sets element `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: T) {
        *self.get_mut(i) = v;
    }

    /// How `[off, off + n)` is stored (`n ≥ 1`).
    #[inline]
    pub fn span(&self, off: usize, n: usize) -> Span<'_, T> {
        debug_assert!(n >= 1 && off + n <= self.len);
        let (p0, p1) = (off >> PAGE_BITS, (off + n - 1) >> PAGE_BITS);
        if p0 == p1 {
            match self.page(p0) {
                Some(p) => {
                    let at = off & (PAGE - 1);
                    Span::Slice(&p[at..at + n])
                }
                None => Span::Fill(self.fill),
            }
        } else if (p0..=p1).all(|p| self.page(p).is_none()) {
            Span::Fill(self.fill)
        } else {
            Span::Mixed
        }
    }

    /// `[off, off + n)` as one mutable slice when it lies in one page
    /// (allocating it); `None` when it crosses a page boundary.
    #[inline]
    pub fn span_mut(&mut self, off: usize, n: usize) -> Option<&mut [T]> {
        debug_assert!(n >= 1 && off + n <= self.len);
        if off >> PAGE_BITS != (off + n - 1) >> PAGE_BITS {
            return None;
        }
        let at = off & (PAGE - 1);
        Some(&mut self.page_mut(off)[at..at + n])
    }

    /// The allocated pages in index order: `(first element index, its
    /// elements)`, the last one clipped to `len`.
    pub fn allocated(&self) -> impl Iterator<Item = (usize, &[T])> + '_ {
        let dirs = self
            .dirs
            .iter()
            .enumerate()
            .filter_map(|(d, dir)| Some((d, dir.as_ref()?)));
        let tables = dirs.flat_map(|(d, dir)| {
            dir.iter()
                .enumerate()
                .filter_map(move |(k, t)| Some(((d << DIR_BITS) + k, t.as_ref()?)))
        });
        tables.flat_map(move |(t, table)| {
            table.iter().enumerate().filter_map(move |(k, p)| {
                let p = p.as_ref()?;
                let start = ((t << TABLE_BITS) + k) << PAGE_BITS;
                let end = (start + PAGE).min(self.len);
                (start < end).then(|| (start, &p[..end - start]))
            })
        })
    }

    /// Copies `other[..n]` over `self[..n]` (absent source pages become
    /// absent here only where this array's fill is the same).
    pub fn copy_prefix(&mut self, other: &SparseVec<T>, n: usize)
    where
        T: PartialEq,
    {
        let n = n.min(self.len).min(other.len);
        for i in 0..n {
            let v = other.get(i);
            if v != self.get(i) {
                self.set(i, v);
            }
        }
    }
}

impl<T: Copy> Drop for SparseVec<T> {
    fn drop(&mut self) {
        if let Some(m) = &self.meter {
            m.sub(self.bytes());
        }
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for SparseVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseVec")
            .field("len", &self.len)
            .field("fill", &self.fill)
            .field("pages", &self.pages)
            .finish()
    }
}

impl<T: Copy> std::ops::Index<usize> for SparseVec<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < self.len, "index {i} out of {}", self.len);
        match self.page(i >> PAGE_BITS) {
            Some(p) => &p[i & (PAGE - 1)],
            None => &self.fill,
        }
    }
}

impl<T: Copy> std::ops::IndexMut<usize> for SparseVec<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_costs_nothing() {
        let m = Meter::new();
        let v: SparseVec<u64> = SparseVec::metered(64 << 30, 7, &m);
        assert_eq!(v.get((64 << 30) - 1), 7);
        assert_eq!(v[12345], 7);
        assert_eq!(v.pages(), 0);
        assert_eq!(m.bytes(), 0);
        assert!(matches!(v.span(100, 8), Span::Fill(7)));
        assert!(matches!(v.span(60, 8), Span::Fill(7)));
    }

    #[test]
    fn writes_allocate_their_page_only() {
        let m = Meter::new();
        let mut v: SparseVec<u8> = SparseVec::metered(1 << 30, 0, &m);
        v.set(1 << 29, 5);
        v[3] = 9;
        assert_eq!(v.pages(), 2);
        assert_eq!(v.get(1 << 29), 5);
        assert_eq!(v.get(3), 9);
        assert_eq!(v.get(4), 0);
        // two pages, two tables, two directories
        assert_eq!(m.bytes(), v.bytes());
        assert_eq!(v.bytes(), (2 * PAGE + 2 * TABLE * 8 + 2 * DIR * 8) as u64);
        let pages: Vec<usize> = v.allocated().map(|(s, _)| s).collect();
        assert_eq!(pages, vec![0, 1 << 29]);
        drop(v);
        assert_eq!(m.bytes(), 0);
    }

    #[test]
    fn spans() {
        let mut v: SparseVec<u16> = SparseVec::new(1000, 0);
        if let Some(s) = v.span_mut(10, 4) {
            s.copy_from_slice(&[1, 2, 3, 4]);
        }
        match v.span(11, 2) {
            Span::Slice(s) => assert_eq!(s, &[2, 3]),
            _ => panic!("expected a slice"),
        }
        assert!(v.span_mut(PAGE - 2, 4).is_none());
        assert!(matches!(v.span(PAGE - 2, 4), Span::Mixed));
        assert!(matches!(v.span(PAGE * 3 - 2, 4), Span::Fill(0)));
        // the last page is clipped to len
        v.set(999, 1);
        let last = v.allocated().last().map(|(s, p)| (s, p.len()));
        assert_eq!(last, Some((960, 40)));
    }

    #[test]
    fn copy_prefix_keeps_absent_pages_absent() {
        let mut a: SparseVec<u8> = SparseVec::new(4096, 0);
        a.set(5, 1);
        let mut b: SparseVec<u8> = SparseVec::new(4096, 0);
        b.copy_prefix(&a, 4096);
        assert_eq!(b.get(5), 1);
        assert_eq!(b.pages(), 1);
    }
}
