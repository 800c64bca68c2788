//! The term domain's cache of input-element ids: which `TermId` the store
//! gave element `index` of input tensor `tensor`.
//!
//! A kernel loads the same input elements over and over (a scalar GEMM
//! reference reads every element of a 64-row tile of `A` and a 64-column
//! tile of `B` 64 times), and each load must find the element's node.
//! The store's own hash table is hundreds of MiB on a full-size GEMM, one
//! cache miss per probe; this cache is a few MiB. It is only a cache: a
//! miss interns the element (`Terms::input`, hash-consed), so what it
//! holds never changes a term.
//!
//! Layout: per tensor, a dense directory over blocks of 64 elements
//! (`dir[i >> 6]` = 1 + the block's page, 0 = none yet) and the pages in
//! one vector, so a hit costs two loads, the directory's (4 bytes per 64
//! elements: 1 MiB for a 4096 × 4096 tensor, at most 4 MiB) and the
//! page's. A column walk down a row-major matrix touches one directory
//! word and one page per row. Elements past the dense range (2^26) use a
//! sparse page table ([`SparseVec`]), which costs one more dependent load.

use ptxeq_exec::sparse::SparseVec;
use ptxeq_terms::TermId;

/// Elements per page: log2.
const PAGE_BITS: u32 = 6;
const PAGE: usize = 1 << PAGE_BITS;
/// Elements the dense directory covers (its size is at most
/// `DENSE / PAGE` words, 4 MiB).
const DENSE: u64 = 1 << 26;
/// Elements the cache covers at all; the domain interns elements past it
/// directly (bounds the sparse table's top-level directory).
pub(crate) const CACHED: u64 = 1 << 32;
/// A page entry not filled yet. (A store never reaches 2^32 − 1 nodes;
/// if it did, the cache would only miss for that id.)
const ABSENT: u32 = u32::MAX;

/// See the module docs.
#[derive(Default)]
pub(crate) struct InputIds {
    tensors: Vec<TensorIds>,
}

#[derive(Default)]
struct TensorIds {
    dir: Vec<u32>,
    pages: Vec<[u32; PAGE]>,
    far: Option<SparseVec<Option<TermId>>>,
}

impl InputIds {
    /// The id of element `index` of tensor `tensor`, from the cache or
    /// made by `make` (then cached). `index < CACHED`.
    #[inline]
    pub(crate) fn get_or_make(
        &mut self,
        tensor: u32,
        index: u64,
        make: impl FnOnce() -> TermId,
    ) -> TermId {
        debug_assert!(index < CACHED);
        let t = tensor as usize;
        if self.tensors.len() <= t {
            self.tensors.resize_with(t + 1, TensorIds::default);
        }
        let ids = &mut self.tensors[t];
        if index >= DENSE {
            let far = ids
                .far
                .get_or_insert_with(|| SparseVec::new(CACHED as usize, None));
            let i = index as usize;
            return match far.get(i) {
                Some(id) => id,
                None => {
                    let id = make();
                    far.set(i, Some(id));
                    id
                }
            };
        }
        let block = (index >> PAGE_BITS) as usize;
        let slot = (index as usize) & (PAGE - 1);
        if let Some(&p) = ids.dir.get(block)
            && p != 0
        {
            let raw = ids.pages[p as usize - 1][slot];
            if raw != ABSENT {
                return TermId::from_raw(raw);
            }
            let id = make();
            ids.pages[p as usize - 1][slot] = id.raw();
            return id;
        }
        if ids.dir.len() <= block {
            ids.dir.resize(block + 1, 0);
        }
        let id = make();
        let mut page = [ABSENT; PAGE];
        page[slot] = id.raw();
        ids.pages.push(page);
        ids.dir[block] = ids.pages.len() as u32;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element gets the id `make` gave it the first time, in the
    /// dense and the far range, and `make` runs once per element.
    #[test]
    fn caches_each_element_once() {
        let mut c = InputIds::default();
        let mut made = 0u32;
        let elems = [
            (0u32, 0u64),
            (0, 63),
            (0, 64),
            (1, 4096 * 4095 + 7),
            (0, DENSE - 1),
            (0, DENSE),
            (2, CACHED - 1),
            (1, 5),
        ];
        let mut first = Vec::new();
        for &(t, i) in &elems {
            first.push(c.get_or_make(t, i, || {
                made += 1;
                TermId::from_raw(made)
            }));
        }
        assert_eq!(made, elems.len() as u32);
        for (k, &(t, i)) in elems.iter().enumerate() {
            let id = c.get_or_make(t, i, || panic!("element {t}/{i} made twice"));
            assert_eq!(id, first[k]);
        }
    }
}
