//! [`SplitMut`]: one mutable buffer cut into disjoint row blocks that the parts of a
//! parallel job ([`crate::Team::run_chunks`], [`crate::Team::run`]) take from a shared
//! reference, without raw pointers in the caller and without allocating.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::split_range;

/// A `&'a mut [T]` viewed as `rows` rows and cut into `parts` pieces of whole rows, each
/// of which can be taken once, from any thread, through a shared `&SplitMut`.
///
/// Row `r` starts at element `r · stride`. Piece `i` holds the rows
/// [`split_range`]`(rows, parts, align, i)` (contiguous, boundaries multiple of `align`
/// rows, the last piece ending at `rows`; pieces beyond the last row are empty).
/// [`SplitMut::take`] returns the rows of piece `i` and its elements as a `&'a mut [T]`:
///
/// * built with [`SplitMut::new`] (`stride = unit`), piece `i` with rows `r` is
///   `data[r.start·unit .. r.end·unit]`; the pieces tile `data[.. rows·unit]`;
/// * built with [`SplitMut::with_stride`] (rows of `row_len ≤ stride` elements, as in a
///   matrix with a leading dimension), a non-empty piece is
///   `data[r.start·stride .. (r.end − 1)·stride + row_len]`: its own rows and the gaps
///   between them, so that the last row of the buffer may be short.
///
/// An empty piece is an empty slice. Elements past the last row are never handed out.
///
/// # Sharing
///
/// `SplitMut<T>` is `Sync` (and `Send`) when `T: Send`, so one `&SplitMut` can be
/// captured by the closure of a team job, each chunk taking the piece with its own index.
/// Several buffers written by the same chunks (attention writing scores and outputs per
/// head) are several `SplitMut`s with the same `parts`, each chunk taking the same index
/// from all of them. Elements that must not move to another thread cannot be shared:
///
/// ```compile_fail,E0277
/// use pocket_tts_simd::{SplitMut, Team};
///
/// let mut v = vec![std::rc::Rc::new(0u8); 4];
/// let s = SplitMut::new(&mut v, 4, 1, 2, 1);
/// Team::new(2).run_chunks(2, |i| drop(s.take(i))); // error: `Rc` is not `Send`
/// ```
///
/// # Panics
///
/// [`take`](SplitMut::take) panics if piece `i` was already taken (from any thread) or if
/// `i >= parts`: each piece is handed out at most once, enforced by an atomic bitmask
/// (hence `parts ≤` [`SplitMut::MAX_PARTS`]). Nothing allocates.
///
/// # Soundness
///
/// `SplitMut` owns the exclusive borrow of the buffer for `'a`, so nothing else can
/// access it while a piece (also living for `'a`) exists. The pieces are pairwise
/// disjoint (the row ranges of [`split_range`] are disjoint and increasing, and a row
/// block `r` spans at most `[r.start·stride, r.end·stride)` because `row_len ≤ stride`),
/// every piece lies inside the buffer (checked when the `SplitMut` is built), and each
/// piece is returned at most once (the bitmask), so no two live `&mut` overlap. Handing
/// a `&mut [T]` to another thread requires `T: Send`, hence the bound on the `Sync`
/// and `Send` impls.
///
/// # Example
///
/// Two buffers filled per head by a team, as attention does (scores `[heads, cap]`,
/// outputs `[heads, dim]`):
///
/// ```
/// use pocket_tts_simd::{SplitMut, Team};
///
/// let (heads, cap, dim) = (6, 10, 4);
/// let mut scores = vec![0f32; heads * cap];
/// let mut out = vec![0f32; heads * dim];
/// let team = Team::new(2);
/// {
///     let s = SplitMut::new(&mut scores, heads, cap, heads, 1);
///     let o = SplitMut::new(&mut out, heads, dim, heads, 1);
///     team.run_chunks(heads, |h| {
///         let (rows, sh) = s.take(h);
///         let (_, oh) = o.take(h);
///         assert_eq!(rows, h..h + 1);
///         sh.fill(h as f32);
///         oh.fill(sh.iter().sum());
///     });
/// }
/// assert_eq!(scores[3 * cap], 3.0);
/// assert_eq!(out[3 * dim], 30.0);
/// ```
///
/// A piece borrows the buffer for as long as it is used:
///
/// ```compile_fail,E0499
/// use pocket_tts_simd::SplitMut;
///
/// let mut v = vec![0u8; 8];
/// let s = SplitMut::new(&mut v, 8, 1, 2, 1);
/// let (_, piece) = s.take(0);
/// v[0] = 1; // error: `v` is still mutably borrowed by `piece`
/// piece[0] = 2;
/// ```
pub struct SplitMut<'a, T> {
    /// Start of the buffer (valid for `needed` elements, see `with_stride`).
    ptr: NonNull<T>,
    rows: usize,
    stride: usize,
    row_len: usize,
    parts: usize,
    align: usize,
    /// Bit `i` set: piece `i` was handed out.
    taken: AtomicU64,
    /// `SplitMut` acts as the `&'a mut [T]` it was built from.
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `SplitMut` is a `&mut [T]` plus plain data; moving it to another thread moves
// the exclusive borrow, which is sound exactly when `&mut [T]: Send`, i.e. `T: Send`.
unsafe impl<T: Send> Send for SplitMut<'_, T> {}
// SAFETY: the only operation through `&SplitMut` that touches the buffer is `take`, which
// hands each disjoint piece out at most once (atomic bitmask), i.e. moves a `&mut [T]`
// to the calling thread: sound when `T: Send`. No `&T` is ever shared.
unsafe impl<T: Send> Sync for SplitMut<'_, T> {}

impl<'a, T> SplitMut<'a, T> {
    /// Largest number of pieces (one bit each in the "taken" mask).
    pub const MAX_PARTS: usize = 64;

    /// Views `data` as `rows` rows of `unit` elements (row `r` is
    /// `data[r·unit .. (r + 1)·unit]`) cut into `parts` pieces of whole rows, with piece
    /// boundaries at multiples of `align` rows (`align == 0` is treated as 1), exactly
    /// as [`split_range`]`(rows, parts, align, i)`. `data` may be longer than
    /// `rows·unit`; the elements past it are not part of any piece.
    ///
    /// # Panics
    /// If `parts == 0`, `parts >` [`SplitMut::MAX_PARTS`], `rows·unit` overflows, or
    /// `data.len() < rows·unit`.
    pub fn new(data: &'a mut [T], rows: usize, unit: usize, parts: usize, align: usize) -> Self {
        Self::with_stride(data, rows, unit, unit, parts, align)
    }

    /// Like [`SplitMut::new`] for rows of `row_len` elements that start every `stride`
    /// elements (`row_len ≤ stride`, e.g. the rows of a matrix with leading dimension
    /// `stride`): a non-empty piece with rows `r` is
    /// `data[r.start·stride .. (r.end − 1)·stride + row_len]`, so `data` needs only
    /// `(rows − 1)·stride + row_len` elements (none when `rows == 0`).
    ///
    /// # Panics
    /// If `parts == 0`, `parts >` [`SplitMut::MAX_PARTS`], `row_len > stride`, the
    /// needed length overflows, or `data` is shorter than it.
    pub fn with_stride(
        data: &'a mut [T],
        rows: usize,
        stride: usize,
        row_len: usize,
        parts: usize,
        align: usize,
    ) -> Self {
        assert!(
            (1..=Self::MAX_PARTS).contains(&parts),
            "SplitMut: parts = {parts}, expected 1 ..= {}",
            Self::MAX_PARTS
        );
        assert!(
            row_len <= stride,
            "SplitMut: row_len = {row_len} exceeds stride = {stride}"
        );
        let needed = match rows {
            0 => 0,
            _ => (rows - 1)
                .checked_mul(stride)
                .and_then(|n| n.checked_add(row_len))
                .unwrap_or_else(|| {
                    panic!("SplitMut: {rows} rows of stride {stride} overflow usize")
                }),
        };
        assert!(
            data.len() >= needed,
            "SplitMut: buffer has {} elements, {rows} rows of stride {stride} \
             (last row {row_len}) need {needed}",
            data.len()
        );
        Self {
            ptr: NonNull::from(data).cast(),
            rows,
            stride,
            row_len,
            parts,
            align: align.max(1),
            taken: AtomicU64::new(0),
            _borrow: PhantomData,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of pieces.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// The rows of piece `i`, without taking it.
    ///
    /// # Panics
    /// If `i >= parts`.
    pub fn range(&self, i: usize) -> Range<usize> {
        assert!(
            i < self.parts,
            "SplitMut: piece {i} out of range (parts = {})",
            self.parts
        );
        split_range(self.rows, self.parts, self.align, i)
    }

    /// Piece `i`: its rows and its elements (see the type docs). Can be called from any
    /// thread sharing `&self`.
    ///
    /// # Panics
    /// If `i >= parts`, or if piece `i` was already taken.
    pub fn take(&self, i: usize) -> (Range<usize>, &'a mut [T]) {
        let rows = self.range(i);
        debug_assert!(rows.start <= rows.end && rows.end <= self.rows);
        let bit = 1u64 << i;
        // Relaxed suffices: uniqueness only needs the atomicity of the read-modify-write
        // (exactly one `fetch_or` sees the bit clear); the elements themselves are
        // synchronised by whatever hands the pieces to threads (e.g. `Team`).
        let before = self.taken.fetch_or(bit, Ordering::Relaxed);
        assert!(
            before & bit == 0,
            "SplitMut: piece {i} was already taken (each piece can be taken once)"
        );
        if rows.is_empty() {
            return (rows, Default::default());
        }
        let start = rows.start * self.stride;
        let len = (rows.len() - 1) * self.stride + self.row_len;
        // SAFETY: `rows.end <= self.rows`, so `start + len = (rows.end − 1)·stride +
        // row_len <= (self.rows − 1)·stride + row_len <= data.len()` (checked, without
        // overflow, in `with_stride`): the piece lies in the buffer borrowed for `'a`. It
        // is disjoint from every other piece (its rows are, and it ends before
        // `rows.end·stride` since `row_len <= stride`), and this is the only time it is
        // handed out (the bit was clear), so it aliases no other live reference.
        let piece = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(start), len) };
        (rows, piece)
    }
}

impl<T> fmt::Debug for SplitMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SplitMut")
            .field("rows", &self.rows)
            .field("stride", &self.stride)
            .field("row_len", &self.row_len)
            .field("parts", &self.parts)
            .field("align", &self.align)
            .field(
                "taken",
                &format_args!("{:#b}", self.taken.load(Ordering::Relaxed)),
            )
            .finish()
    }
}
