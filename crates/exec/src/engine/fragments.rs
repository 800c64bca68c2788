//! Fragment layouts of the warp-level matrix instructions: which element
//! of which matrix a lane's register holds.
//!
//! `mma.sync` and `ldmatrix`/`stmatrix`/`movmatrix` layouts are the ones
//! the PTX ISA fixes ("Matrix Fragments for mma.m16n8k*", "ldmatrix"); a
//! kernel that builds fragments by hand relies on them, so they must be
//! exact. `wmma` fragments are implementation-defined (the ISA does not
//! say which lane holds which element), so ptxeq fixes one layout, used
//! consistently by `wmma.load`, `wmma.mma` and `wmma.store` (see
//! [`wmma_element`]).
//!
//! Coordinates are `(row, col)` in the logical matrix: A is M×K, B is K×N,
//! C and D are M×N, whatever the memory layout (`.row`/`.col`) was.

/// The operand of an `mma`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    A,
    B,
    /// C and D share one layout.
    C,
}

/// The `mma.sync` shapes and element kinds whose layouts are modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MmaKind {
    /// `.m16n8k16` with `.f16`/`.bf16` A and B.
    M16n8k16Half,
    /// `.m16n8k8` with `.f16`/`.bf16` A and B.
    M16n8k8Half,
    /// `.m16n8k8` with `.tf32` A and B.
    M16n8k8Tf32,
    /// `.m16n8k4` with `.tf32` A and B.
    M16n8k4Tf32,
    /// `.m16n8k32` with one-byte A and B (`.e4m3`/`.e5m2`): four elements
    /// per register, lowest byte first (the A fragment of fp8 `wgmma`).
    M16n8k32Byte,
}

impl MmaKind {
    /// `(m, n, k)`.
    pub(crate) fn mnk(self) -> (usize, usize, usize) {
        match self {
            MmaKind::M16n8k16Half => (16, 8, 16),
            MmaKind::M16n8k8Half | MmaKind::M16n8k8Tf32 => (16, 8, 8),
            MmaKind::M16n8k4Tf32 => (16, 8, 4),
            MmaKind::M16n8k32Byte => (16, 8, 32),
        }
    }

    /// Elements of `op` held by each lane.
    pub(crate) fn per_lane(self, op: Operand) -> usize {
        let (m, n, k) = self.mnk();
        match op {
            Operand::A => m * k / 32,
            Operand::B => k * n / 32,
            Operand::C => m * n / 32,
        }
    }
}

/// Element `i` of operand `op` held by `lane` for an `mma.sync` of `kind`
/// (A `.row`, B `.col`, the only layouts these shapes allow), as
/// `(row, col)`. `i` counts elements in register order, low half first.
pub(crate) fn mma_element(kind: MmaKind, op: Operand, lane: usize, i: usize) -> (usize, usize) {
    let g = lane >> 2; // groupID
    let q = lane & 3; // threadID_in_group
    match (kind, op) {
        // C/D: c0,c1 row g; c2,c3 row g+8; cols 2q, 2q+1 (every shape).
        (_, Operand::C) => (g + 8 * (i >> 1), 2 * q + (i & 1)),
        (MmaKind::M16n8k16Half, Operand::A) => {
            (g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2))
        }
        (MmaKind::M16n8k16Half, Operand::B) => (2 * q + (i & 1) + 8 * (i >> 1), g),
        (MmaKind::M16n8k8Half, Operand::A) => (g + 8 * (i >> 1), 2 * q + (i & 1)),
        (MmaKind::M16n8k8Half, Operand::B) => (2 * q + i, g),
        (MmaKind::M16n8k8Tf32, Operand::A) => (g + 8 * (i & 1), q + 4 * (i >> 1)),
        (MmaKind::M16n8k8Tf32, Operand::B) => (q + 4 * i, g),
        (MmaKind::M16n8k4Tf32, Operand::A) => (g + 8 * i, q),
        (MmaKind::M16n8k4Tf32, Operand::B) => (q, g),
        // Registers a0..a3: rows g, g+8, g, g+8; cols 4q.. (+16 for a2, a3).
        (MmaKind::M16n8k32Byte, Operand::A) => {
            (g + 8 * ((i >> 2) & 1), 4 * q + (i & 3) + 16 * (i >> 3))
        }
        (MmaKind::M16n8k32Byte, Operand::B) => (4 * q + (i & 3) + 16 * (i >> 2), g),
    }
}

/// The 8×8 fragment of `ldmatrix` (without `.trans`), `stmatrix` and
/// `movmatrix`: half `h` (0 low, 1 high) of a lane's register holds
/// `(row, col)`.
pub(crate) fn m8n8_element(lane: usize, h: usize) -> (usize, usize) {
    (lane >> 2, 2 * (lane & 3) + h)
}

/// The lane and half holding `(row, col)` of an 8×8 fragment (inverse of
/// [`m8n8_element`]).
pub(crate) fn m8n8_holder(row: usize, col: usize) -> (usize, usize) {
    (4 * row + col / 2, col & 1)
}

/// The wmma fragment layout fixed by ptxeq (the ISA leaves it to the
/// implementation). A fragment of a `rows`×`cols` matrix with `slots`
/// elements per lane (registers × elements per register) is spread over
/// `L = rows·cols / slots` lanes; lane `l` slot `e` holds flat row-major
/// element `(l mod L)·slots + e`. When `L < 32` lanes `l` and `l + L` hold
/// the same elements (as the hardware's m16n16k16 A/B fragments do: 16
/// halves per lane for 256 elements). `None` when the counts do not fit.
pub(crate) fn wmma_element(
    rows: usize,
    cols: usize,
    slots: usize,
    lane: usize,
    e: usize,
) -> Option<(usize, usize)> {
    let lanes = wmma_lanes(rows, cols, slots)?;
    let idx = (lane % lanes) * slots + e;
    (e < slots).then_some((idx / cols, idx % cols))
}

/// Lanes holding distinct elements in [`wmma_element`]'s layout.
pub(crate) fn wmma_lanes(rows: usize, cols: usize, slots: usize) -> Option<usize> {
    let n = rows * cols;
    if slots == 0 || !n.is_multiple_of(slots) {
        return None;
    }
    let lanes = n / slots;
    (lanes > 0 && lanes <= 32 && 32 % lanes == 0).then_some(lanes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element of every operand is held exactly once per warp.
    #[test]
    fn mma_layouts_cover_each_element_once() {
        for kind in [
            MmaKind::M16n8k16Half,
            MmaKind::M16n8k8Half,
            MmaKind::M16n8k8Tf32,
            MmaKind::M16n8k4Tf32,
            MmaKind::M16n8k32Byte,
        ] {
            let (m, n, k) = kind.mnk();
            for (op, r, c) in [(Operand::A, m, k), (Operand::B, k, n), (Operand::C, m, n)] {
                let mut seen = vec![0u32; r * c];
                for lane in 0..32 {
                    for i in 0..kind.per_lane(op) {
                        let (row, col) = mma_element(kind, op, lane, i);
                        assert!(row < r && col < c, "{kind:?} {op:?} lane {lane} elem {i}");
                        seen[row * c + col] += 1;
                    }
                }
                assert!(seen.iter().all(|&s| s == 1), "{kind:?} {op:?}: {seen:?}");
            }
        }
    }

    /// Spot checks against the ISA's fragment tables.
    #[test]
    fn mma_layouts_match_the_isa_tables() {
        // m16n8k32 8-bit A: a9 of lane 6 (g=1, q=2) is register a2's
        // second byte: row 1, col 4·2 + 1 + 16 = 25; a5 is row 9, col 9.
        assert_eq!(
            mma_element(MmaKind::M16n8k32Byte, Operand::A, 6, 9),
            (1, 25)
        );
        assert_eq!(mma_element(MmaKind::M16n8k32Byte, Operand::A, 6, 5), (9, 9));
        // m16n8k16 A: a4,a5 of lane 5 (g=1, q=1) are row 1, cols 10, 11;
        // a6 is row 9, col 10.
        assert_eq!(
            mma_element(MmaKind::M16n8k16Half, Operand::A, 5, 4),
            (1, 10)
        );
        assert_eq!(
            mma_element(MmaKind::M16n8k16Half, Operand::A, 5, 5),
            (1, 11)
        );
        assert_eq!(
            mma_element(MmaKind::M16n8k16Half, Operand::A, 5, 6),
            (9, 10)
        );
        // B: b2 of lane 5 is row 2q+8 = 10, col g = 1.
        assert_eq!(
            mma_element(MmaKind::M16n8k16Half, Operand::B, 5, 2),
            (10, 1)
        );
        // C: c3 of lane 31 (g=7, q=3) is row 15, col 7.
        assert_eq!(
            mma_element(MmaKind::M16n8k16Half, Operand::C, 31, 3),
            (15, 7)
        );
        // tf32 m16n8k8 A: a1 is row g+8, a2 col q+4.
        assert_eq!(mma_element(MmaKind::M16n8k8Tf32, Operand::A, 6, 1), (9, 2));
        assert_eq!(mma_element(MmaKind::M16n8k8Tf32, Operand::A, 6, 2), (1, 6));
    }

    #[test]
    fn m8n8_holder_inverts_the_layout() {
        for lane in 0..32 {
            for h in 0..2 {
                let (r, c) = m8n8_element(lane, h);
                assert_eq!(m8n8_holder(r, c), (lane, h));
            }
        }
    }

    #[test]
    fn wmma_layout_is_a_covering_with_duplicates() {
        // m16n16k16 A f16: 8 regs × 2 halves, 256 elements: 16 lanes,
        // lanes l and l+16 hold the same row.
        assert_eq!(wmma_lanes(16, 16, 16), Some(16));
        assert_eq!(wmma_element(16, 16, 16, 3, 5), Some((3, 5)));
        assert_eq!(wmma_element(16, 16, 16, 19, 5), Some((3, 5)));
        // C f32: 8 per lane, each element once.
        let mut seen = [false; 256];
        for l in 0..32 {
            for e in 0..8 {
                let (r, c) = wmma_element(16, 16, 8, l, e).expect("fits");
                assert!(!seen[r * 16 + c]);
                seen[r * 16 + c] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(wmma_lanes(16, 16, 7), None);
        assert_eq!(wmma_lanes(32, 16, 8), None); // 64 lanes would be needed
    }
}
