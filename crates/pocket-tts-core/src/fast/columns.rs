//! [`ColumnSplit`]: a row-major matrix cut into blocks of whole columns, for the parallel
//! jobs whose parts each write every row of their own columns: the FlowLM prefill
//! (`matmul_wt`, `y[t, out]` split by output columns so that each part streams only its
//! own weight rows) and the column-panel split of the Mimi GEMM (`par_gemm`).
//!
//! Row blocks of one buffer are disjoint sub-slices, which
//! [`pocket_tts_simd::SplitMut`] hands out safely. Column blocks are not: the columns of
//! every part interleave row by row, so no part owns a contiguous range and a block
//! cannot be a `&mut [f32]`. A [`ColumnBlock`] is therefore a raw pointer to the matrix
//! that comes with the right to touch one block of columns. [`ColumnSplit`] does the part
//! that must be trusted everywhere else: it holds the exclusive borrow of the buffer for
//! its lifetime, checks the buffer's size once, and hands out every block at most once,
//! so blocks of one split never overlap. What remains unsafe is the kernel call at each
//! use, which must stay inside its block's columns (see [`ColumnBlock::base`]).
//!
//! No counterpart in the reference (`pocket-tts` 4.0.1), which leaves threading to
//! PyTorch.

use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use pocket_tts_simd::split_range;

/// A `&'a mut [f32]` viewed as a `rows × cols` matrix with leading dimension `ld`
/// (element `(r, c)` at `r·ld + c`, `cols ≤ ld`), cut into `parts` blocks of whole
/// columns: block `i` holds the columns `split_range(cols, parts, align, i)` of every row.
/// Each block can be taken once, from any thread sharing `&ColumnSplit`.
///
/// # Panics
/// [`ColumnSplit::new`] panics on a bad geometry (see there); [`ColumnSplit::take`]
/// panics if a block is taken twice or `i >= parts`.
pub(crate) struct ColumnSplit<'a> {
    /// Element `(0, 0)`; valid for `(rows − 1)·ld + cols` elements (checked in `new`).
    ptr: NonNull<f32>,
    rows: usize,
    ld: usize,
    cols: usize,
    parts: usize,
    align: usize,
    /// Bit `i` set: block `i` was handed out.
    taken: AtomicU64,
    /// The split stands for the `&'a mut [f32]` it was built from.
    _borrow: PhantomData<&'a mut [f32]>,
}

// SAFETY: the only operation through `&ColumnSplit` is `take`, which hands each block out
// at most once (atomic bitmask) to the calling thread; blocks are pairwise disjoint sets
// of elements (disjoint column ranges, `cols <= ld`). Handing exclusive access to `f32`s
// to another thread is sound (`f32: Send`), and no shared `&f32` is ever given out.
unsafe impl Sync for ColumnSplit<'_> {}

impl<'a> ColumnSplit<'a> {
    /// Largest number of blocks (one bit each in the "taken" mask).
    pub(crate) const MAX_PARTS: usize = 64;

    /// Views `data` as `rows × cols` with leading dimension `ld`, cut into `parts` column
    /// blocks whose boundaries are multiples of `align` columns (`align == 0` acts as 1),
    /// exactly as `pocket_tts_simd::split_range(cols, parts, align, i)`.
    ///
    /// # Panics
    /// If `parts` is not in `1..=MAX_PARTS`, `cols > ld`, or `data` is shorter than
    /// `(rows − 1)·ld + cols` (or that overflows).
    pub(crate) fn new(
        data: &'a mut [f32],
        rows: usize,
        ld: usize,
        cols: usize,
        parts: usize,
        align: usize,
    ) -> Self {
        assert!(
            (1..=Self::MAX_PARTS).contains(&parts),
            "ColumnSplit: parts = {parts}, expected 1 ..= {}",
            Self::MAX_PARTS
        );
        assert!(cols <= ld, "ColumnSplit: {cols} columns exceed ld = {ld}");
        let needed = match rows {
            0 => 0,
            _ => (rows - 1)
                .checked_mul(ld)
                .and_then(|n| n.checked_add(cols))
                .expect("ColumnSplit: matrix size overflows usize"),
        };
        assert!(
            data.len() >= needed,
            "ColumnSplit: buffer has {} elements, {rows} rows × {cols} columns (ld {ld}) \
             need {needed}",
            data.len()
        );
        Self {
            ptr: NonNull::from(data).cast(),
            rows,
            ld,
            cols,
            parts,
            align: align.max(1),
            taken: AtomicU64::new(0),
            _borrow: PhantomData,
        }
    }

    /// Block `i` (possibly with no columns, when `cols` is small). Can be called from
    /// any thread sharing `&self`.
    ///
    /// # Panics
    /// If `i >= parts` or block `i` was already taken.
    pub(crate) fn take(&self, i: usize) -> ColumnBlock<'a> {
        assert!(
            i < self.parts,
            "ColumnSplit: block {i} out of range (parts = {})",
            self.parts
        );
        let bit = 1u64 << i;
        // Relaxed: uniqueness needs only the atomicity of the read-modify-write; the data
        // is synchronised by the team that runs the parts.
        let before = self.taken.fetch_or(bit, Ordering::Relaxed);
        assert!(
            before & bit == 0,
            "ColumnSplit: block {i} was already taken"
        );
        ColumnBlock {
            base: self.ptr,
            rows: self.rows,
            ld: self.ld,
            width: self.cols,
            cols: split_range(self.cols, self.parts, self.align, i),
            _borrow: PhantomData,
        }
    }
}

/// The right to read and write the columns [`ColumnBlock::cols`] of every row of the
/// matrix of a [`ColumnSplit`], for `'a`. Not `Send`: it is used by the part that took it.
pub(crate) struct ColumnBlock<'a> {
    base: NonNull<f32>,
    rows: usize,
    ld: usize,
    width: usize,
    cols: Range<usize>,
    _borrow: PhantomData<&'a mut [f32]>,
}

impl ColumnBlock<'_> {
    /// The columns of this block (a sub-range of `0..width()`; may be empty).
    pub(crate) fn cols(&self) -> Range<usize> {
        self.cols.clone()
    }

    /// Rows of the matrix.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Leading dimension: element `(r, c)` is at `base() + r·ld + c`.
    pub(crate) fn ld(&self) -> usize {
        self.ld
    }

    /// Columns of the whole matrix.
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Pointer to element `(0, 0)` of the whole matrix. Through it, the holder may read
    /// and write exactly the elements `(r, c)` with `r < rows()` and `c` in `cols()`,
    /// while the block is alive: they lie in the buffer (checked by
    /// [`ColumnSplit::new`]) and no other block of the split, nor anything else, accesses
    /// them. Every other element may belong to another thread.
    pub(crate) fn base(&self) -> *mut f32 {
        self.base.as_ptr()
    }

    /// Elements `(r, c)` for `c` in `cols` of row `r`, as a slice.
    ///
    /// # Panics
    /// If `r >= rows()` or `cols` is not inside [`Self::cols`].
    pub(crate) fn row_mut(&mut self, r: usize, cols: Range<usize>) -> &mut [f32] {
        assert!(
            r < self.rows && cols.start >= self.cols.start && cols.end <= self.cols.end,
            "ColumnBlock::row_mut: row {r}, columns {cols:?} outside rows 0..{} × columns {:?}",
            self.rows,
            self.cols
        );
        // SAFETY: `(r, c)` for `c` in `cols` are elements this block may read and write
        // (checked above, see `base`); the slice borrows `self` mutably, so no other
        // slice of this block aliases it while it lives.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.base.as_ptr().add(r * self.ld + cols.start),
                cols.len(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_each_column_once() {
        let team = pocket_tts_simd::Team::new(2);
        for (rows, ld, cols, parts, align) in [
            (3, 10, 7, 2, 1),
            (5, 64, 64, 4, 16),
            (1, 5, 5, 3, 4),
            (0, 4, 4, 2, 1),
        ] {
            let mut m = vec![0u32; rows * ld];
            {
                let mut f = vec![0f32; rows * ld];
                let split = ColumnSplit::new(&mut f, rows, ld, cols, parts, align);
                let seen: Vec<AtomicU64> = (0..cols).map(|_| AtomicU64::new(0)).collect();
                team.run_chunks(parts, |i| {
                    let b = split.take(i);
                    assert_eq!((b.rows(), b.ld(), b.width()), (rows, ld, cols));
                    let c = b.cols();
                    assert!(c.start == cols || c.start.is_multiple_of(align));
                    for j in c {
                        seen[j].fetch_add(1, Ordering::Relaxed);
                        for r in 0..rows {
                            // SAFETY: row `r < rows`, column `j` in this block's columns.
                            unsafe { *b.base().add(r * ld + j) = (i + 1) as f32 };
                        }
                    }
                });
                assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
                for (d, s) in m.iter_mut().zip(&f) {
                    *d = *s as u32;
                }
            }
            for r in 0..rows {
                for j in 0..ld {
                    let want = if j < cols {
                        (0..parts)
                            .position(|i| split_range(cols, parts, align, i).contains(&j))
                            .unwrap() as u32
                            + 1
                    } else {
                        0
                    };
                    assert_eq!(m[r * ld + j], want, "({r}, {j})");
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "already taken")]
    fn a_block_is_taken_once() {
        let mut v = vec![0f32; 8];
        let s = ColumnSplit::new(&mut v, 2, 4, 4, 2, 1);
        let _a = s.take(1);
        let _b = s.take(1);
    }

    #[test]
    #[should_panic(expected = "need 7")]
    fn short_buffers_are_refused() {
        let mut v = vec![0f32; 6];
        let _ = ColumnSplit::new(&mut v, 2, 4, 3, 1, 1);
    }
}
