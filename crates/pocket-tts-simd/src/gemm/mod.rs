//! Tiled `f32` GEMM with packed weights: `C[n, m] (+)= Σ_k B[n, k] · A[k, m]`, the matrix
//! product behind every conv and linear layer of the Mimi fast path of `pocket-tts-core`
//! (it stands in for the products under the reference's `modules/conv.py`,
//! `modules/transformer.py` and `modules/attention.py` of `pocket-tts` 4.0.1).
//!
//! # Shapes
//!
//! `B` is `[n, k]` (the activations, one row per time step), `A` is `[k, m]` (the
//! weights), `C` is `[n, m]` with row `i` at `c[i·ldc ..]` (`ldc ≥ m`, so `C` can be a
//! column block of a wider matrix). A linear layer `y = x·Wᵀ` (`W` row-major `[m, k]`)
//! is `A = Wᵀ`, packed by [`PackedMatrix::from_linear`].
//!
//! * `A` is either a [`PackedMatrix`], packed once into column panels of [`PANEL`]
//!   columns (`[k][PANEL]` each, the last panel rounded up to a multiple of 16 columns
//!   with zeros), or a plain strided row-major matrix ([`gemm_strided`]; attention's `Kᵀ`
//!   and `V`).
//! * `B` is a [`BView`]: a strided row-major matrix read in place, possibly as several
//!   "taps" (`B[i, (j, c)] = data[i·ldb + j·tap_stride + c]`), so that a causal conv reads
//!   its im2col rows straight from the time-major input buffer, without a copy.
//! * [`Init`] says how `C` starts: zero, its current values (accumulate) or a bias row.
//!
//! Every output is one `k`-ordered chain of fused multiply-adds (`acc = b·a + acc` for
//! `k = 0, 1, …`, starting from the [`Init`] value), on every ISA: the results are
//! bit-identical on AVX-512F, AVX2 + FMA, NEON and the scalar kernel (asserted by the
//! tests), and do not depend on the threads a caller splits the product over.
//!
//! # Kernels
//!
//! The loops here are blocked over `n` (`NC` = 192 rows) and `k` (`KC` = 256) so a
//! panel block stays in L1/L2; each block goes to a micro-kernel of `kernels.rs`: AVX-512F
//! (up to four 16-lane vectors × 6–16 rows in registers, the last vector masked), AVX2 +
//! FMA (16-column groups of two 8-lane vectors × 6 rows), NEON (16-column groups of four
//! 4-lane vectors × 6–16 rows, the last `width mod 4` columns scalar) or the portable
//! scalar loop. The free functions run on the ISA of [`crate::detected`] (so
//! [`crate::ENV_VAR`]`=scalar` selects the scalar kernel); the [`Isa`] methods on an
//! explicit one (see [`Isa::resolve`]).
//!
//! # Panics
//!
//! Every function checks its operands' sizes and panics on a mismatch (a programming
//! error, never a data error): `B` and `A` disagreeing on `k`, `B`, `A`, `C` or a bias too
//! short for the shapes, `ldc < m` with more than one row. Values are not checked
//! (NaN and infinities propagate as in IEEE arithmetic).

use std::ops::Range;

use kernels::{block, Mode, Tile};

use crate::gemv_half::widen_into;
use crate::{detected, HalfKind, Isa};

mod kernels;
mod packed;

pub use kernels::add_assign;
use packed::panel_geometry;
pub use packed::{HalfOutOfRange, PackedMatrix};

/// Columns per packed panel of `A` (four AVX-512 vectors). A caller that splits one
/// GEMM by columns ([`gemm_packed_cols`]) cuts `C` at multiples of it.
pub const PANEL: usize = 64;
/// `k` block: a `KC × PANEL` block of `A` is 64 KiB.
const KC: usize = 256;
/// `n` block: rows of `B`/`C` processed per pass over the panels (a multiple of every
/// micro-tile height).
const NC: usize = 192;

/// How a GEMM initialises `C` before adding `B·A`.
#[derive(Clone, Copy, Debug)]
pub enum Init<'a> {
    /// `C = B·A`.
    Zero,
    /// `C += B·A` (the residual connection, the overlap-adds).
    Accumulate,
    /// `C = B·A + bias`, the same `bias` row (at least `m` entries; entry `j` for column
    /// `j`) added to every row.
    Bias(&'a [f32]),
}

/// The `B` operand `[rows, k]`, read in place: `B[i, (j, c)] = data[i·ldb + j·tap_stride
/// + c]` for `i < rows`, `j < taps`, `c < tap_len` (so `k = taps · tap_len`, and column
/// `j·tap_len + c` of `B` meets row `j·tap_len + c` of `A`). A plain matrix is one tap
/// ([`BView::dense`]); a causal conv of kernel `K` over a time-major `[T, C_in]` buffer is
/// one tap of `K·C_in` with `ldb = stride·C_in` (dilation 1), or `K` taps of `C_in` with
/// `tap_stride = dilation·C_in`.
///
/// The GEMMs check that `data` holds every element the view names (and panic if not).
#[derive(Clone, Copy, Debug)]
pub struct BView<'a> {
    /// The elements.
    pub data: &'a [f32],
    /// Rows `n`.
    pub rows: usize,
    /// Elements from one row to the next.
    pub ldb: usize,
    /// Runs of `tap_len` contiguous elements per row.
    pub taps: usize,
    /// Elements from one tap to the next within a row.
    pub tap_stride: usize,
    /// Elements per tap.
    pub tap_len: usize,
}

impl<'a> BView<'a> {
    /// A plain row-major `[rows, k]` matrix with row stride `ldb`.
    pub fn dense(data: &'a [f32], rows: usize, k: usize, ldb: usize) -> Self {
        Self {
            data,
            rows,
            ldb,
            taps: 1,
            tap_stride: 0,
            tap_len: k,
        }
    }

    /// The depth `k = taps · tap_len`.
    pub fn k(&self) -> usize {
        self.taps * self.tap_len
    }

    /// Elements from the first to one past the last the view names (0 when empty).
    fn extent(&self) -> usize {
        if self.rows == 0 || self.k() == 0 {
            return 0;
        }
        (self.rows - 1) * self.ldb + (self.taps - 1) * self.tap_stride + self.tap_len
    }

    /// Panics unless `data` holds every element of the view.
    fn check(&self) {
        if self.rows == 0 || self.k() == 0 {
            return;
        }
        let last = (self.rows - 1) * self.ldb + (self.taps - 1) * self.tap_stride + self.tap_len;
        assert!(
            last <= self.data.len(),
            "gemm: B view needs {last} elements, has {}",
            self.data.len()
        );
    }
}

/// `C[n, m] (+)= Σ_k B[n, k]·A[k, m]` with packed `A`, on the ISA of [`detected`]; `C`
/// row `i` at `c[i·ldc ..]`, `n = b.rows`, `k = a.k()`, `m = a.m()`. See
/// [`Isa::gemm_packed`].
///
/// # Panics
/// If `b.k() != a.k()`, `b.data` is too short for the view, `ldc < m` with more than one
/// row, `c.len() < (n − 1)·ldc + m`, or a bias has fewer than `m` entries.
pub fn gemm_packed(a: &PackedMatrix, b: BView, c: &mut [f32], ldc: usize, init: Init) {
    detected().gemm_packed(a, b, c, ldc, init)
}

/// Many products with one weight matrix: `count` groups of `B` rows and `C` rows at
/// fixed distances, computed as one GEMM (each block of `A` is loaded once for the rows
/// of every group). Group `g`'s `B` is the view moved `g·b_step` elements into its data,
/// its `C` rows start `g·c_step` elements into `C`. With `count = 1` it is a plain GEMM.
///
/// This is how the streams of a batch share a causal conv (each stream's rows follow its
/// own conv history in a stacked buffer, so the groups are not one strided matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Groups {
    /// Groups (at least 1 to compute anything).
    pub count: usize,
    /// Elements of `B`'s data from one group to the next.
    pub b_step: usize,
    /// Elements of `C` from one group to the next.
    pub c_step: usize,
}

impl Groups {
    /// One group: a plain GEMM.
    pub const ONE: Groups = Groups {
        count: 1,
        b_step: 0,
        c_step: 0,
    };
}

/// [`gemm_packed`] over the `groups` of `B` and `C` (see [`Groups`]), on the ISA of
/// [`detected`]. Each output is bit for bit what [`gemm_packed`] gives that group alone.
///
/// # Panics
/// As [`gemm_packed`] for every group (the last group's `B` and `C` must fit in `b.data`
/// and `c`), and if groups overlap in `C` (`c_step` smaller than a group's extent, with
/// more than one group).
pub fn gemm_packed_grouped(
    a: &PackedMatrix,
    b: BView,
    groups: Groups,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    detected().gemm_packed_grouped(a, b, groups, c, ldc, init)
}

/// [`gemm_packed`] for the columns `cols` of `C` only, on the ISA of [`detected`]: one
/// block of a GEMM split across threads by columns. See [`Isa::gemm_packed_cols`].
///
/// # Safety
/// As [`Isa::gemm_packed_cols`].
///
/// # Panics
/// As [`Isa::gemm_packed_cols`].
pub unsafe fn gemm_packed_cols(
    a: &PackedMatrix,
    b: BView,
    c: *mut f32,
    ldc: usize,
    cols: Range<usize>,
    init: Init,
) {
    // SAFETY: the caller's guarantees are those of `Isa::gemm_packed_cols`.
    unsafe { detected().gemm_packed_cols(a, b, c, ldc, cols, init) }
}

/// `C[n, m] (+)= Σ_k B[n, k]·A[k, m]` with a strided row-major `A` (`A[kk, mm] =
/// a[kk·lda + mm]`), on the ISA of [`detected`]. See [`Isa::gemm_strided`].
///
/// # Panics
/// If `b.k() != k`, `a` is shorter than `(k − 1)·lda + m` (when `k, m > 0`), `b.data` is
/// too short for the view, `ldc < m` with more than one row, `c.len() < (n − 1)·ldc + m`,
/// or a bias has fewer than `m` entries.
#[allow(clippy::too_many_arguments)]
pub fn gemm_strided(
    a: &[f32],
    lda: usize,
    k: usize,
    m: usize,
    b: BView,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    detected().gemm_strided(a, lda, k, m, b, c, ldc, init)
}

impl Isa {
    /// [`gemm_packed`] on this ISA (see [`Isa::resolve`] for unsupported ISAs): `C[n, m]
    /// (+)= Σ_k B[n, k]·A[k, m]`, `n = b.rows`, `k = a.k()`, `m = a.m()`, `C` row `i` at
    /// `c[i·ldc ..]` (only its first `m` elements are touched). Nothing is done when `n`
    /// or `m` is 0; with `k = 0`, `C` is set to its [`Init`] value.
    ///
    /// # Panics
    /// As [`gemm_packed`].
    pub fn gemm_packed(self, a: &PackedMatrix, b: BView, c: &mut [f32], ldc: usize, init: Init) {
        check_k(b.k(), a.k());
        b.check();
        check_c(c.len(), b.rows, a.m(), ldc);
        check_init(&init, a.m());
        // SAFETY: the ISA is resolved; `a` is a whole packed matrix with `k` matching
        // `b`, `b` and `c` were checked to hold `b.rows` rows (`check_c`: `(rows − 1)·ldc
        // + m <= c.len()`, so every column of every row), `init`'s bias has `m` entries,
        // and `c` is exclusively borrowed.
        unsafe {
            drive(
                self.resolve(),
                a.src(),
                BRaw::from_view(&b),
                Groups::ONE,
                c.as_mut_ptr(),
                ldc,
                init,
                0..a.panels(),
            )
        }
    }

    /// [`gemm_packed_grouped`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// As [`gemm_packed_grouped`].
    pub fn gemm_packed_grouped(
        self,
        a: &PackedMatrix,
        b: BView,
        groups: Groups,
        c: &mut [f32],
        ldc: usize,
        init: Init,
    ) {
        check_k(b.k(), a.k());
        check_init(&init, a.m());
        if groups.count == 0 || b.rows == 0 || a.m() == 0 {
            return;
        }
        let last = groups.count - 1;
        b.check();
        let b_need = last * groups.b_step + b.extent();
        assert!(
            b_need <= b.data.len(),
            "gemm: B groups need {b_need} elements, have {}",
            b.data.len()
        );
        check_c(
            c.len().saturating_sub(last * groups.c_step),
            b.rows,
            a.m(),
            ldc,
        );
        assert!(
            last == 0 || groups.c_step >= (b.rows - 1) * ldc + a.m(),
            "gemm: C groups {} apart overlap ({} rows of {} at stride {ldc})",
            groups.c_step,
            b.rows,
            a.m()
        );
        assert!(
            last * groups.c_step <= c.len(),
            "gemm: C has {} elements, {} groups {} apart",
            c.len(),
            groups.count,
            groups.c_step
        );
        // SAFETY: the ISA is resolved; `a` is a whole packed matrix with `k` matching
        // `b`; every group's `B` lies in `b.data` (its extent after `g·b_step`, checked for
        // the last group) and every group's `C` rows in `c` (checked for the last group,
        // the groups disjoint), `init`'s bias has `m` entries, `c` is exclusively borrowed.
        unsafe {
            drive(
                self.resolve(),
                a.src(),
                BRaw::from_view(&b),
                groups,
                c.as_mut_ptr(),
                ldc,
                init,
                0..a.panels(),
            )
        }
    }

    /// [`gemm_packed`] on this ISA for the columns `cols` of `C` only (one block of a GEMM
    /// split across threads by columns, each thread writing every row of its own
    /// columns): `C[i, j] (+)= Σ_k B[i, k]·A[k, j]` for `i < b.rows` and `j` in `cols`,
    /// `C[i, j]` at `c + i·ldc + j`. `cols` must be whole panels: it starts at a multiple
    /// of [`PANEL`] and ends at one or at `m = a.m()`. Bits as [`Isa::gemm_packed`] gives
    /// for those columns.
    ///
    /// # Safety
    /// For every `i < b.rows` and `j` in `cols`, `c + i·ldc + j` is valid for reads and
    /// writes, and nothing else (no other thread, not `a`, `b` or the bias) accesses it
    /// during the call. No other element of `C` is touched.
    ///
    /// # Panics
    /// If `b.k() != a.k()`, `b.data` is too short for the view, `cols` is not whole panels
    /// of `0..m`, `ldc < cols.end` with more than one row, or a bias has fewer than `m`
    /// entries.
    pub unsafe fn gemm_packed_cols(
        self,
        a: &PackedMatrix,
        b: BView,
        c: *mut f32,
        ldc: usize,
        cols: Range<usize>,
        init: Init,
    ) {
        if cols.is_empty() {
            return;
        }
        check_k(b.k(), a.k());
        assert!(
            cols.start.is_multiple_of(PANEL)
                && (cols.end == a.m() || (cols.end < a.m() && cols.end.is_multiple_of(PANEL))),
            "gemm: columns {cols:?} are not whole panels of {PANEL} in 0..{}",
            a.m()
        );
        assert!(
            ldc >= cols.end || b.rows <= 1,
            "gemm: ldc {ldc} < end of columns {}",
            cols.end
        );
        b.check();
        check_init(&init, a.m());
        // SAFETY: the ISA is resolved. `drive` touches, for each panel `p` of the range,
        // the elements `c + i·ldc + j` for `i < b.rows` and `j` in `p·PANEL .. p·PANEL +
        // width(p)`, `width(p) = min(PANEL, m − p·PANEL)`; those columns lie in `cols`
        // (whole panels, checked above), which the caller lets this call read and write
        // exclusively. `A` and `B` are read within their bounds (packed `A` holds every
        // panel of `a`, `b` checked above), the bias has `m` entries.
        unsafe {
            drive(
                self.resolve(),
                a.src(),
                BRaw::from_view(&b),
                Groups::ONE,
                c,
                ldc,
                init,
                cols.start / PANEL..cols.end.div_ceil(PANEL),
            )
        }
    }

    /// [`gemm_strided`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// As [`gemm_strided`].
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_strided(
        self,
        a: &[f32],
        lda: usize,
        k: usize,
        m: usize,
        b: BView,
        c: &mut [f32],
        ldc: usize,
        init: Init,
    ) {
        check_k(b.k(), k);
        if k > 0 && m > 0 {
            assert!(
                (k - 1) * lda + m <= a.len(),
                "gemm: A has {} elements, {k} rows of {m} at stride {lda} need {}",
                a.len(),
                (k - 1) * lda + m
            );
        }
        b.check();
        check_c(c.len(), b.rows, m, ldc);
        check_init(&init, m);
        // SAFETY: the ISA is resolved; `a` holds `k` rows of `m` columns at stride `lda`
        // (checked when both are non-zero; with `k = 0` nothing of `A` or `B` is read),
        // `b` and `c` were checked to hold `b.rows` rows, `init`'s bias has `m` entries,
        // and `c` is exclusively borrowed.
        unsafe {
            drive(
                self.resolve(),
                ASrc::Strided(a.as_ptr(), lda, m),
                BRaw::from_view(&b),
                Groups::ONE,
                c.as_mut_ptr(),
                ldc,
                init,
                0..m.div_ceil(PANEL),
            )
        }
    }
}

/// Raw description of `A` for the drivers.
#[derive(Clone, Copy)]
enum ASrc {
    /// Packed panels: base pointer, k, m.
    Packed(*const f32, usize, usize),
    /// Strided row-major `[k, m]`: base pointer, lda, m.
    Strided(*const f32, usize, usize),
    /// Packed panels of 16-bit values: base pointer, k, m, format.
    PackedHalf(*const u16, usize, usize, HalfKind),
}

impl ASrc {
    fn m(&self) -> usize {
        match *self {
            ASrc::Packed(_, _, m) | ASrc::Strided(_, _, m) | ASrc::PackedHalf(_, _, m, _) => m,
        }
    }

    /// `(pointer to row 0 of panel p, lda, real width)`, for `p` below the panel count
    /// (`m.div_ceil(PANEL)`), of an `f32` matrix; the 16-bit one's panel pointer is
    /// [`Self::half_panel`]. Only computes the pointer (wrapping: with `k = 0` it may point
    /// past an empty matrix, and is then never read).
    fn panel(&self, p: usize) -> (*const f32, usize, usize) {
        match *self {
            ASrc::Packed(ptr, k, m) => {
                let (off, lda, w) = panel_geometry(k, m, p);
                (ptr.wrapping_add(off), lda, w)
            }
            ASrc::Strided(ptr, lda, m) => {
                (ptr.wrapping_add(p * PANEL), lda, (m - p * PANEL).min(PANEL))
            }
            ASrc::PackedHalf(_, k, m, _) => {
                let (_, lda, w) = panel_geometry(k, m, p);
                (std::ptr::null(), lda, w)
            }
        }
    }

    /// For a 16-bit matrix: the pointer to row 0 of panel `p` and the format (as
    /// [`Self::panel`], wrapping).
    fn half_panel(&self, p: usize) -> Option<(*const u16, HalfKind)> {
        match *self {
            ASrc::PackedHalf(ptr, k, m, kind) => {
                let (off, _, _) = panel_geometry(k, m, p);
                Some((ptr.wrapping_add(off), kind))
            }
            _ => None,
        }
    }
}

#[derive(Clone, Copy)]
struct BRaw {
    ptr: *const f32,
    rows: usize,
    ldb: usize,
    taps: usize,
    tap_stride: usize,
    tap_len: usize,
}

impl BRaw {
    fn from_view(b: &BView) -> Self {
        Self {
            ptr: b.data.as_ptr(),
            rows: b.rows,
            ldb: b.ldb,
            taps: b.taps,
            tap_stride: b.tap_stride,
            tap_len: b.tap_len,
        }
    }
}

fn check_k(b_k: usize, a_k: usize) {
    assert_eq!(b_k, a_k, "gemm: B has k = {b_k} but A has k = {a_k}");
}

fn check_c(len: usize, rows: usize, m: usize, ldc: usize) {
    if rows == 0 || m == 0 {
        return;
    }
    assert!(ldc >= m || rows == 1, "gemm: ldc {ldc} < m {m}");
    let need = (rows - 1) * ldc + m;
    assert!(need <= len, "gemm: C needs {need} elements, has {len}");
}

fn check_init(init: &Init, m: usize) {
    if let Init::Bias(b) = init {
        assert!(b.len() >= m, "gemm: bias has {} entries, need {m}", b.len());
    }
}

/// Blocked loops shared by every ISA: the columns of panels `panels` of
/// `C[n, m] (+)= Σ B[n, k]·A[k, m]` for each of the `groups` (`n = b.rows` rows each,
/// `k = b.taps·b.tap_len`).
///
/// # Safety
/// * the CPU supports `isa` (it was resolved);
/// * `a` describes a readable matrix with `k` rows: every panel `p` of `panels` (below
///   `m.div_ceil(PANEL)`) has its `k` rows of `width(p)` values at `a.panel(p)` (a
///   16-bit matrix: its `k` rows of `lda` values at `a.half_panel(p)`);
/// * `b` is readable: `b.ptr[g·b_step + i·ldb + j·tap_stride + c]` for `g <
///   groups.count`, `i < n`, `j < taps`, `c < tap_len`;
/// * `c[g·c_step + i·ldc + col]` is readable and writable for `g < groups.count`, `i < n`
///   and every column `col` of the panels `panels` (`p·PANEL .. p·PANEL + width(p)`,
///   `width(p) = min(PANEL, m − p·PANEL)`), these elements are distinct for distinct
///   `(g, i, col)`, and nothing else accesses them during the call;
/// * a bias in `init` has at least `m` entries.
#[allow(clippy::too_many_arguments)]
unsafe fn drive(
    isa: Isa,
    a: ASrc,
    b: BRaw,
    groups: Groups,
    c: *mut f32,
    ldc: usize,
    init: Init,
    panels: Range<usize>,
) {
    // Rows of all groups, one after the other: row `r` is row `r mod rows` of group
    // `r / rows`.
    let rows = b.rows;
    let n = rows * groups.count;
    if n == 0 || a.m() == 0 || panels.is_empty() {
        return;
    }
    // A small 16-bit matrix used by several row blocks: widened once for the call (the
    // panels asked for, at their packed offsets) instead of once per row block; then the
    // `f32` path over the same values (same bits).
    if let ASrc::PackedHalf(bits, k, m, kind) = a {
        let start = panel_geometry(k, m, panels.start).0;
        let (last, last_lda, _) = panel_geometry(k, m, panels.end - 1);
        let end = last + k * last_lda;
        if n > NC && end - start <= WHOLE_WIDEN_MAX {
            let mut buf = WHOLE.with(|w| w.take()).unwrap_or_default();
            buf.clear();
            buf.resize(end - start, 0.0);
            // SAFETY: the panels `panels` of the packed matrix are `bits[start..end]`
            // (caller: every panel's `k` rows of `lda` values are readable).
            let src = unsafe { std::slice::from_raw_parts(bits.wrapping_add(start), end - start) };
            widen_into(isa, src, kind, &mut buf);
            // Panel `p` of the widened copy at the same offset as in the packed matrix.
            let wide = ASrc::Packed(buf.as_ptr().wrapping_sub(start), k, m);
            // SAFETY: as the caller's, with `A`'s panels `panels` now `f32` values at the
            // same offsets from `wide`'s base (only those panels are read).
            unsafe { drive(isa, wide, b, groups, c, ldc, init, panels) };
            WHOLE.with(|w| w.set(Some(buf)));
            return;
        }
    }
    let (first_mode, bias) = match init {
        Init::Zero => (Mode::Zero, std::ptr::null()),
        Init::Accumulate => (Mode::Load, std::ptr::null()),
        Init::Bias(bs) => (Mode::Bias, bs.as_ptr()),
    };
    // k blocks: (offset in A rows, offset in a B row, depth).
    let tap_blocks = b.tap_len.div_ceil(KC).max(1);
    // A 16-bit `A`: each `kc × lda` block widened here before the micro-kernels read it
    // (this thread's buffer, taken for the call so that a nested call gets its own).
    let mut widened = a.half_panel(0).map(|_| {
        WIDE.with(|w| w.take())
            .unwrap_or_else(|| vec![0f32; KC * PANEL].into_boxed_slice())
    });
    let mut nc0 = 0;
    while nc0 < n {
        let nc = NC.min(n - nc0);
        for p in panels.clone() {
            let (ap, lda, width) = a.panel(p);
            for tap in 0..b.taps {
                for blk in 0..tap_blocks {
                    let c0 = blk * KC;
                    let kc = KC.min(b.tap_len - c0.min(b.tap_len));
                    let first = tap == 0 && blk == 0;
                    // Where the micro-kernels read the block's `kc` rows of `A`: in place,
                    // or widened from 16 bits into `widened` (rows at the same `lda`).
                    let ablock = match (a.half_panel(p), widened.as_deref_mut()) {
                        (Some((hp, kind)), Some(buf)) => {
                            let len = kc * lda;
                            // SAFETY: rows `tap·tap_len + c0 .. + kc < k` of panel `p`,
                            // `lda` values each, are in the packed matrix (caller).
                            let bits = unsafe {
                                std::slice::from_raw_parts(
                                    hp.wrapping_add((tap * b.tap_len + c0) * lda),
                                    len,
                                )
                            };
                            widen_into(isa, bits, kind, &mut buf[..len]);
                            buf.as_ptr()
                        }
                        _ => ap.wrapping_add((tap * b.tap_len + c0) * lda),
                    };
                    // Rows `nc0..nc0 + nc` of the groups' rows, in pieces within one
                    // group each.
                    let mut r = nc0;
                    while r < nc0 + nc {
                        let (g, i) = (r / rows, r % rows);
                        let len = (rows - i).min(nc0 + nc - r);
                        // Rows `i..i + len` of group `g` of `B`/`C`, `A` rows
                        // `tap·tap_len + c0 .. + kc` of panel `p`. The pointers are only
                        // computed here (wrapping: with `kc = 0` they may point past
                        // empty operands, never read).
                        let tile = Tile {
                            a: ablock,
                            lda,
                            b: b.ptr.wrapping_add(
                                g * groups.b_step + i * b.ldb + tap * b.tap_stride + c0,
                            ),
                            ldb: b.ldb,
                            c: c.wrapping_add(g * groups.c_step + i * ldc + p * PANEL),
                            ldc,
                            kc,
                            width,
                            mode: if first { first_mode } else { Mode::Load },
                            bias: if bias.is_null() {
                                bias
                            } else {
                                bias.wrapping_add(p * PANEL)
                            },
                        };
                        // SAFETY: the tile is valid for `len` rows (see `Tile`): its rows
                        // `i + j < rows` of group `g < count` of `B` and `C`, its depth
                        // `c0 + kc <= tap_len` within tap `tap < taps`, its columns the
                        // `width <= PANEL` real columns of panel `p`, and its bias entries
                        // `p·PANEL + j < m`, all of which the caller vouches for, `C`'s
                        // exclusively (groups disjoint); the CPU supports `isa` (caller).
                        unsafe { block(isa, len, tile) };
                        r += len;
                    }
                }
            }
        }
        nc0 += nc;
    }
    if let Some(buf) = widened {
        WIDE.with(|w| w.set(Some(buf)));
    }
}

/// Elements of the largest 16-bit matrix part (the panels of one call) widened whole for a
/// call with several row blocks (256 KiB of `f32`: the SEANet's later convs, whose rows
/// span many blocks; the transformer's linears are larger and have one block per frame).
const WHOLE_WIDEN_MAX: usize = 64 * 1024;

/// A widened `KC × PANEL` block of 16-bit weights.
type WideBlock = Box<[f32]>;

thread_local! {
    /// Each thread's buffer for the widened blocks of 16-bit weights (allocated by the
    /// thread's first 16-bit GEMM, then reused).
    static WIDE: std::cell::Cell<Option<WideBlock>> = const { std::cell::Cell::new(None) };
    /// Each thread's buffer for a small 16-bit matrix widened whole (`WHOLE_WIDEN_MAX`).
    static WHOLE: std::cell::Cell<Option<Vec<f32>>> = const { std::cell::Cell::new(None) };
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod perf;
