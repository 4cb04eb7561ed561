//! Matrix–vector products for single-token inference: [`gemv`] (`y = W·x`, `W` row-major
//! `[rows, cols]`, e.g. an `nn.Linear` weight `[out, in]`) and [`gemv_t`] (`y = Mᵀ·a`, a
//! weighted sum of the rows of `M`, e.g. attention probabilities times cached values).
//!
//! Both are memory-bound when `W` does not fit in cache (a FlowLM step streams ~340 MB of
//! weights), so [`gemv`] is organised around the weight stream: blocks of 8 rows (4 on
//! NEON) are read concurrently (8 independent sequential streams keep enough cache-line
//! requests in flight for one core to reach its DRAM bandwidth), each row with its own
//! vector accumulator, sharing one load of `x` per column block. On x86 the first two
//! cache lines of each row of the *next* block are prefetched when a block starts (+5–8 %
//! on Zen 5: a new row is a new stream, often a new 4 KiB page, that the hardware
//! prefetcher only picks up after a few misses); continuous software prefetching (same
//! column one block ahead, +1/+2 KiB ahead, non-temporal) was slower, and 4 or 16 rows
//! per block, or 2 MiB pages (`MADV_COLLAPSE`), did not beat 8 rows. The row sums are
//! reduced once per row.
//!
//! Rounding: every row is summed in `f32` with per-lane partial sums (16 lanes on AVX-512,
//! 8 on AVX2, 4 on NEON, 8 interleaved partial sums on scalar) and a final horizontal
//! reduction, so results differ from a sequential sum by a few ulp of `Σ|wᵢ·xᵢ|`, as
//! any BLAS does. The scalar version is written for speed (it is the fallback on CPUs
//! without AVX2), not as an `f64` reference; tests compare against `f64` sums.
//!
//! Row ranges are independent, so callers parallelise by splitting `W`/`y` (and `bias`)
//! into row blocks; see [`crate::Team`].

use crate::{detected, Isa};

/// `y = W·x + bias` (or `y += W·x + bias` with `accumulate`), where `W` is row-major
/// `[y.len(), x.len()]`. Each output is computed as `dot(W[r], x)`, then `+ bias[r]`,
/// then `y[r] + …` when accumulating: the rounding order of `x + linear(h)` with a
/// residual `x`.
///
/// # Panics
/// If `w.len() != y.len() * x.len()` or `bias` is given with a length other than `y.len()`.
pub fn gemv(w: &[f32], x: &[f32], y: &mut [f32], bias: Option<&[f32]>, accumulate: bool) {
    detected().gemv(w, x, y, bias, accumulate)
}

/// `y = Mᵀ·a` (or `y += Mᵀ·a` with `accumulate`), where `M` is row-major
/// `[a.len(), y.len()]`: `y[c] = Σ_r a[r]·M[r][c]`.
///
/// # Panics
/// If `m.len() != a.len() * y.len()`.
pub fn gemv_t(a: &[f32], m: &[f32], y: &mut [f32], accumulate: bool) {
    detected().gemv_t(a, m, y, accumulate)
}

impl Isa {
    /// [`gemv`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`gemv`].
    pub fn gemv(self, w: &[f32], x: &[f32], y: &mut [f32], bias: Option<&[f32]>, accumulate: bool) {
        let (rows, cols) = (y.len(), x.len());
        assert_eq!(
            w.len(),
            rows * cols,
            "gemv: w has {} elements, expected rows × cols = {rows} × {cols}",
            w.len()
        );
        if let Some(b) = bias {
            assert_eq!(
                b.len(),
                rows,
                "gemv: bias has {} elements, expected rows = {rows}",
                b.len()
            );
        }
        if rows == 0 {
            return;
        }
        let bias = bias.map_or(std::ptr::null(), |b| b.as_ptr());
        let (w, x, y) = (w.as_ptr(), x.as_ptr(), y.as_mut_ptr());
        match self.resolve() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx512f is present (resolved); lengths checked above.
            Isa::Avx512 => unsafe { x86::gemv_avx512(w, x, y, bias, rows, cols, accumulate) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx2 and fma are present (resolved); lengths checked above.
            Isa::Avx2 => unsafe { x86::gemv_avx2(w, x, y, bias, rows, cols, accumulate) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: neon is present (resolved); lengths checked above.
            Isa::Neon => unsafe { arm::gemv_neon(w, x, y, bias, rows, cols, accumulate) },
            // SAFETY: lengths checked above.
            _ => unsafe { gemv_scalar(w, x, y, bias, rows, cols, accumulate) },
        }
    }

    /// [`gemv_t`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`gemv_t`].
    pub fn gemv_t(self, a: &[f32], m: &[f32], y: &mut [f32], accumulate: bool) {
        let (rows, cols) = (a.len(), y.len());
        assert_eq!(
            m.len(),
            rows * cols,
            "gemv_t: m has {} elements, expected rows × cols = {rows} × {cols}",
            m.len()
        );
        if !accumulate {
            y.fill(0.0);
        }
        if rows == 0 || cols == 0 {
            return;
        }
        let (a, m, y) = (a.as_ptr(), m.as_ptr(), y.as_mut_ptr());
        match self.resolve() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx512f is present (resolved); lengths checked above.
            Isa::Avx512 => unsafe { x86::gemv_t_avx512(a, m, y, rows, cols) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx2 and fma are present (resolved); lengths checked above.
            Isa::Avx2 => unsafe { x86::gemv_t_avx2(a, m, y, rows, cols) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: neon is present (resolved); lengths checked above.
            Isa::Neon => unsafe { arm::gemv_t_neon(a, m, y, rows, cols) },
            // SAFETY: lengths checked above.
            _ => unsafe { gemv_t_scalar(a, m, y, rows, cols) },
        }
    }
}

/// Writes the finished dot product `s` of row `r`: `+ bias`, then `y + …`.
///
/// # Safety
/// `y` is valid for reads and writes of element `r` (`y.add(r)`), `bias` is null or
/// valid for reads of element `r`, and nothing else accesses `y[r]` during the call.
#[inline(always)]
unsafe fn finish(s: f32, r: usize, y: *mut f32, bias: *const f32, accumulate: bool) {
    // SAFETY: element `r` of `bias` (when non-null) and of `y` is valid (caller).
    unsafe {
        let s = if bias.is_null() { s } else { s + *bias.add(r) };
        *y.add(r) = if accumulate { *y.add(r) + s } else { s };
    }
}

/// Scalar [`gemv`] on raw pointers (see [`Isa::gemv`]).
///
/// # Safety
/// `w` is valid for reads of `rows·cols` elements, `x` of `cols`, `bias` (unless null)
/// of `rows`; `y` is valid for reads and writes of `rows` elements and overlaps none of
/// the others; nothing else writes to any of them during the call.
unsafe fn gemv_scalar(
    w: *const f32,
    x: *const f32,
    y: *mut f32,
    bias: *const f32,
    rows: usize,
    cols: usize,
    accumulate: bool,
) {
    // SAFETY: `x` holds `cols` elements, not written during the call (caller).
    let x = unsafe { std::slice::from_raw_parts(x, cols) };
    for r in 0..rows {
        // SAFETY: row `r < rows` of `w`: `cols` elements from `r·cols` (caller).
        let row = unsafe { std::slice::from_raw_parts(w.add(r * cols), cols) };
        let mut acc = [0f32; 8];
        let mut rc = row.chunks_exact(8);
        let mut xc = x.chunks_exact(8);
        for (wc, xv) in (&mut rc).zip(&mut xc) {
            for k in 0..8 {
                acc[k] += wc[k] * xv[k];
            }
        }
        let mut s =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for (a, b) in rc.remainder().iter().zip(xc.remainder()) {
            s += a * b;
        }
        // SAFETY: `r < rows`; `y` and `bias` (unless null) hold `rows` elements (caller).
        unsafe { finish(s, r, y, bias, accumulate) };
    }
}

/// Scalar [`gemv_t`] on raw pointers (accumulating into `y`; see [`Isa::gemv_t`]).
///
/// # Safety
/// `a` is valid for reads of `rows` elements and `m` of `rows·cols`; `y` is valid for
/// reads and writes of `cols` elements and overlaps neither; nothing else writes to any
/// of them during the call.
unsafe fn gemv_t_scalar(a: *const f32, m: *const f32, y: *mut f32, rows: usize, cols: usize) {
    // SAFETY: `y` holds `cols` elements, exclusively ours during the call (caller).
    let y = unsafe { std::slice::from_raw_parts_mut(y, cols) };
    for r in 0..rows {
        // SAFETY: `r < rows`: element `r` of `a` and row `r` of `m` (`cols` elements from
        // `r·cols`) are valid and not written during the call (caller).
        let (ar, row) = unsafe { (*a.add(r), std::slice::from_raw_parts(m.add(r * cols), cols)) };
        for (yc, mc) in y.iter_mut().zip(row) {
            *yc += ar * mc;
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use core::arch::x86_64::*;

    use super::finish;

    /// Prefetches the first two cache lines of each of the 8 rows starting at `w` (the
    /// next row block): each row is a new stream (often a new 4 KiB page) that the
    /// hardware prefetcher would otherwise only pick up after a few demand misses.
    /// Measured +5–8 % GEMV throughput on Zen 5 (more lines, or a whole block ahead, did
    /// not help). Prefetches never fault, so any `w` is allowed.
    #[inline]
    #[target_feature(enable = "sse")]
    fn prefetch_block_heads(w: *const f32, cols: usize) {
        for k in 0..8 {
            let p = w.wrapping_add(k * cols);
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(16) as *const i8);
        }
    }

    /// Dot products of the `R` rows starting at `w` (stride `cols`) with `x`.
    ///
    /// # Safety
    /// AVX-512F is available; `x` is valid for reads of `cols` elements and `w` of
    /// `R·cols` elements.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn rows_avx512<const R: usize>(w: *const f32, x: *const f32, cols: usize) -> [f32; R] {
        let mut acc = [_mm512_setzero_ps(); R];
        let n = cols / 16 * 16;
        let mut c = 0;
        while c < n {
            // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of `x` and of each row.
            unsafe {
                let xv = _mm512_loadu_ps(x.add(c));
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = _mm512_fmadd_ps(_mm512_loadu_ps(w.add(k * cols + c)), xv, *a);
                }
            }
            c += 16;
        }
        if c < cols {
            let m: __mmask16 = (1u16 << (cols - c)) - 1;
            // SAFETY: the mask enables lanes `c..cols` only, which are in bounds; masked-off
            // lanes are not accessed (fault suppression).
            unsafe {
                let xv = _mm512_maskz_loadu_ps(m, x.add(c));
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, w.add(k * cols + c)), xv, *a);
                }
            }
        }
        let mut out = [0f32; R];
        for (o, a) in out.iter_mut().zip(acc) {
            *o = _mm512_reduce_add_ps(a);
        }
        out
    }

    /// [`super::gemv_scalar`] with AVX-512F.
    ///
    /// # Safety
    /// AVX-512F is available, and the pointer requirements of [`super::gemv_scalar`] hold.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemv_avx512(
        w: *const f32,
        x: *const f32,
        y: *mut f32,
        bias: *const f32,
        rows: usize,
        cols: usize,
        accumulate: bool,
    ) {
        let mut r = 0;
        while r + 8 <= rows {
            if r + 16 <= rows {
                // SAFETY: rows `r + 8 .. r + 16` are in `w` (`r + 16 <= rows`).
                prefetch_block_heads(unsafe { w.add((r + 8) * cols) }, cols);
            }
            // SAFETY: rows `r .. r + 8` are in `w` and `y` (`r + 8 <= rows`; caller).
            unsafe {
                let s = rows_avx512::<8>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 8;
        }
        if r + 4 <= rows {
            // SAFETY: rows `r .. r + 4` are in `w` and `y` (`r + 4 <= rows`; caller).
            unsafe {
                let s = rows_avx512::<4>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 4;
        }
        while r < rows {
            // SAFETY: row `r < rows` is in `w` and `y` (caller).
            unsafe {
                let [s] = rows_avx512::<1>(w.add(r * cols), x, cols);
                finish(s, r, y, bias, accumulate);
            }
            r += 1;
        }
    }

    /// Horizontal sum of the 8 lanes of `v` (also used by `gemv_multi`).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn hsum256(v: __m256) -> f32 {
        let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
        let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
        _mm_cvtss_f32(s)
    }

    /// Dot products of the `R` rows starting at `w` (stride `cols`) with `x`.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `x` is valid for reads of `cols` elements and `w` of
    /// `R·cols` elements.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_avx2<const R: usize>(w: *const f32, x: *const f32, cols: usize) -> [f32; R] {
        let mut acc = [_mm256_setzero_ps(); R];
        let n = cols / 8 * 8;
        let mut c = 0;
        while c < n {
            // SAFETY: `c + 8 <= cols`: elements `c..c + 8` of `x` and of each row.
            unsafe {
                let xv = _mm256_loadu_ps(x.add(c));
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = _mm256_fmadd_ps(_mm256_loadu_ps(w.add(k * cols + c)), xv, *a);
                }
            }
            c += 8;
        }
        let mut out = [0f32; R];
        for (k, (o, a)) in out.iter_mut().zip(acc).enumerate() {
            let mut s = hsum256(a);
            for j in n..cols {
                // SAFETY: `j < cols`: element `j` of `x` and of row `k < R`.
                s = unsafe { (*w.add(k * cols + j)).mul_add(*x.add(j), s) };
            }
            *o = s;
        }
        out
    }

    /// [`super::gemv_scalar`] with AVX2 and FMA.
    ///
    /// # Safety
    /// AVX2 and FMA are available, and the pointer requirements of [`super::gemv_scalar`]
    /// hold.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemv_avx2(
        w: *const f32,
        x: *const f32,
        y: *mut f32,
        bias: *const f32,
        rows: usize,
        cols: usize,
        accumulate: bool,
    ) {
        let mut r = 0;
        while r + 8 <= rows {
            if r + 16 <= rows {
                // SAFETY: rows `r + 8 .. r + 16` are in `w` (`r + 16 <= rows`).
                prefetch_block_heads(unsafe { w.add((r + 8) * cols) }, cols);
            }
            // SAFETY: rows `r .. r + 8` are in `w` and `y` (`r + 8 <= rows`; caller).
            unsafe {
                let s = rows_avx2::<8>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 8;
        }
        if r + 4 <= rows {
            // SAFETY: rows `r .. r + 4` are in `w` and `y` (`r + 4 <= rows`; caller).
            unsafe {
                let s = rows_avx2::<4>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 4;
        }
        while r < rows {
            // SAFETY: row `r < rows` is in `w` and `y` (caller).
            unsafe {
                let [s] = rows_avx2::<1>(w.add(r * cols), x, cols);
                finish(s, r, y, bias, accumulate);
            }
            r += 1;
        }
    }

    /// `y[c..c + 16·V] += Σ_r a[r]·m[r][c..]` (`V` full vectors, `mask` on the last one),
    /// even and odd rows in separate accumulators.
    ///
    /// # Safety
    /// AVX-512F is available; `a` is valid for reads of `rows` elements; for every row
    /// `r < rows`, the lanes of `m.add(r·cols)` selected by the vectors (`16·V` elements,
    /// the last vector restricted to `mask`) are valid for reads, and the same lanes of
    /// `y` for reads and writes, not overlapping `a` or `m`.
    #[inline]
    #[allow(clippy::needless_range_loop)] // e, o and the mask advance together
    #[target_feature(enable = "avx512f")]
    unsafe fn cols_avx512<const V: usize>(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
        mask: __mmask16,
    ) {
        let mut e = [_mm512_setzero_ps(); V];
        let mut o = [_mm512_setzero_ps(); V];
        let mut r = 0;
        while r + 2 <= rows {
            // SAFETY: rows `r` and `r + 1` are `< rows`; the loads read the selected lanes
            // of each (masked-off lanes are not accessed).
            unsafe {
                let a0 = _mm512_set1_ps(*a.add(r));
                let a1 = _mm512_set1_ps(*a.add(r + 1));
                let p0 = m.add(r * cols);
                let p1 = p0.add(cols);
                for j in 0..V {
                    let k = if j + 1 == V { mask } else { !0 };
                    e[j] = _mm512_fmadd_ps(a0, _mm512_maskz_loadu_ps(k, p0.add(16 * j)), e[j]);
                    o[j] = _mm512_fmadd_ps(a1, _mm512_maskz_loadu_ps(k, p1.add(16 * j)), o[j]);
                }
            }
            r += 2;
        }
        if r < rows {
            // SAFETY: row `r < rows`, as above.
            unsafe {
                let a0 = _mm512_set1_ps(*a.add(r));
                let p0 = m.add(r * cols);
                for j in 0..V {
                    let k = if j + 1 == V { mask } else { !0 };
                    e[j] = _mm512_fmadd_ps(a0, _mm512_maskz_loadu_ps(k, p0.add(16 * j)), e[j]);
                }
            }
        }
        for j in 0..V {
            let k = if j + 1 == V { mask } else { !0 };
            // SAFETY: the selected lanes of `y` are valid for reads and writes (caller).
            unsafe {
                let p = y.add(16 * j);
                let s = _mm512_add_ps(e[j], o[j]);
                _mm512_mask_storeu_ps(p, k, _mm512_add_ps(_mm512_maskz_loadu_ps(k, p), s));
            }
        }
    }

    /// [`super::gemv_t_scalar`] with AVX-512F.
    ///
    /// # Safety
    /// AVX-512F is available, and the pointer requirements of [`super::gemv_t_scalar`]
    /// hold.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gemv_t_avx512(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let mut c = 0;
        while c + 64 <= cols {
            // SAFETY: columns `c .. c + 64` are `<= cols`, in every row of `m` and in `y`.
            unsafe { cols_avx512::<4>(a, m.add(c), y.add(c), rows, cols, !0) };
            c += 64;
        }
        while c < cols {
            let left = cols - c;
            let mask: __mmask16 = if left >= 16 { !0 } else { (1u16 << left) - 1 };
            // SAFETY: the mask selects columns `c .. min(c + 16, cols)`, in every row of `m`
            // and in `y`.
            unsafe { cols_avx512::<1>(a, m.add(c), y.add(c), rows, cols, mask) };
            c += 16;
        }
    }

    /// `y[c..c + 8·V] += Σ_r a[r]·m[r][c..]`, even and odd rows in separate accumulators.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `a` is valid for reads of `rows` elements; for every row
    /// `r < rows`, `8·V` elements from `m.add(r·cols)` are valid for reads, and `8·V`
    /// elements of `y` for reads and writes, not overlapping `a` or `m`.
    #[inline]
    #[allow(clippy::needless_range_loop)] // e and o advance together
    #[target_feature(enable = "avx2,fma")]
    unsafe fn cols_avx2<const V: usize>(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let mut e = [_mm256_setzero_ps(); V];
        let mut o = [_mm256_setzero_ps(); V];
        let mut r = 0;
        while r + 2 <= rows {
            // SAFETY: rows `r` and `r + 1` are `< rows`; `8·V` elements of each.
            unsafe {
                let a0 = _mm256_set1_ps(*a.add(r));
                let a1 = _mm256_set1_ps(*a.add(r + 1));
                let p0 = m.add(r * cols);
                let p1 = p0.add(cols);
                for j in 0..V {
                    e[j] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(p0.add(8 * j)), e[j]);
                    o[j] = _mm256_fmadd_ps(a1, _mm256_loadu_ps(p1.add(8 * j)), o[j]);
                }
            }
            r += 2;
        }
        if r < rows {
            // SAFETY: row `r < rows`, as above.
            unsafe {
                let a0 = _mm256_set1_ps(*a.add(r));
                let p0 = m.add(r * cols);
                for j in 0..V {
                    e[j] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(p0.add(8 * j)), e[j]);
                }
            }
        }
        for j in 0..V {
            // SAFETY: `8·V` elements of `y` are valid for reads and writes (caller).
            unsafe {
                let p = y.add(8 * j);
                _mm256_storeu_ps(
                    p,
                    _mm256_add_ps(_mm256_loadu_ps(p), _mm256_add_ps(e[j], o[j])),
                );
            }
        }
    }

    /// [`super::gemv_t_scalar`] with AVX2 and FMA.
    ///
    /// # Safety
    /// AVX2 and FMA are available, and the pointer requirements of
    /// [`super::gemv_t_scalar`] hold.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn gemv_t_avx2(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let mut c = 0;
        while c + 32 <= cols {
            // SAFETY: columns `c .. c + 32` are `<= cols`, in every row of `m` and in `y`.
            unsafe { cols_avx2::<4>(a, m.add(c), y.add(c), rows, cols) };
            c += 32;
        }
        while c + 8 <= cols {
            // SAFETY: columns `c .. c + 8`, as above.
            unsafe { cols_avx2::<1>(a, m.add(c), y.add(c), rows, cols) };
            c += 8;
        }
        if c < cols {
            for r in 0..rows {
                // SAFETY: `r < rows` and `c <= j < cols`: in `a`, `m` and `y` (caller).
                unsafe {
                    let ar = *a.add(r);
                    for j in c..cols {
                        *y.add(j) = ar.mul_add(*m.add(r * cols + j), *y.add(j));
                    }
                }
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use core::arch::aarch64::*;

    use super::finish;

    /// Dot products of the `R` rows starting at `w` (stride `cols`) with `x`.
    ///
    /// # Safety
    /// NEON is available; `x` is valid for reads of `cols` elements and `w` of `R·cols`
    /// elements.
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn rows_neon<const R: usize>(w: *const f32, x: *const f32, cols: usize) -> [f32; R] {
        let mut acc = [vdupq_n_f32(0.0); R];
        let n = cols / 4 * 4;
        let mut c = 0;
        while c < n {
            // SAFETY: `c + 4 <= cols`: elements `c..c + 4` of `x` and of each row.
            unsafe {
                let xv = vld1q_f32(x.add(c));
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = vfmaq_f32(*a, vld1q_f32(w.add(k * cols + c)), xv);
                }
            }
            c += 4;
        }
        let mut out = [0f32; R];
        for (k, (o, a)) in out.iter_mut().zip(acc).enumerate() {
            let mut s = vaddvq_f32(a);
            for j in n..cols {
                // SAFETY: `j < cols`: element `j` of `x` and of row `k < R`.
                s = unsafe { (*w.add(k * cols + j)).mul_add(*x.add(j), s) };
            }
            *o = s;
        }
        out
    }

    /// [`super::gemv_scalar`] with NEON.
    ///
    /// # Safety
    /// NEON is available, and the pointer requirements of [`super::gemv_scalar`] hold.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn gemv_neon(
        w: *const f32,
        x: *const f32,
        y: *mut f32,
        bias: *const f32,
        rows: usize,
        cols: usize,
        accumulate: bool,
    ) {
        let mut r = 0;
        while r + 4 <= rows {
            // SAFETY: rows `r .. r + 4` are in `w` and `y` (`r + 4 <= rows`; caller).
            unsafe {
                let s = rows_neon::<4>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 4;
        }
        while r < rows {
            // SAFETY: row `r < rows` is in `w` and `y` (caller).
            unsafe {
                let [s] = rows_neon::<1>(w.add(r * cols), x, cols);
                finish(s, r, y, bias, accumulate);
            }
            r += 1;
        }
    }

    /// `y[c..c + 4·V] += Σ_r a[r]·m[r][c..]`.
    ///
    /// # Safety
    /// NEON is available; `a` is valid for reads of `rows` elements; for every row
    /// `r < rows`, `4·V` elements from `m.add(r·cols)` are valid for reads, and `4·V`
    /// elements of `y` for reads and writes, not overlapping `a` or `m`.
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn cols_neon<const V: usize>(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let mut e = [vdupq_n_f32(0.0); V];
        for r in 0..rows {
            // SAFETY: row `r < rows`: element `r` of `a`, `4·V` elements of row `r` of `m`.
            unsafe {
                let ar = vdupq_n_f32(*a.add(r));
                let p = m.add(r * cols);
                for (j, ej) in e.iter_mut().enumerate() {
                    *ej = vfmaq_f32(*ej, ar, vld1q_f32(p.add(4 * j)));
                }
            }
        }
        for (j, ej) in e.into_iter().enumerate() {
            // SAFETY: `4·V` elements of `y` are valid for reads and writes (caller).
            unsafe {
                let p = y.add(4 * j);
                vst1q_f32(p, vaddq_f32(vld1q_f32(p), ej));
            }
        }
    }

    /// [`super::gemv_t_scalar`] with NEON.
    ///
    /// # Safety
    /// NEON is available, and the pointer requirements of [`super::gemv_t_scalar`] hold.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn gemv_t_neon(
        a: *const f32,
        m: *const f32,
        y: *mut f32,
        rows: usize,
        cols: usize,
    ) {
        let mut c = 0;
        while c + 16 <= cols {
            // SAFETY: columns `c .. c + 16` are `<= cols`, in every row of `m` and in `y`.
            unsafe { cols_neon::<4>(a, m.add(c), y.add(c), rows, cols) };
            c += 16;
        }
        while c + 4 <= cols {
            // SAFETY: columns `c .. c + 4`, as above.
            unsafe { cols_neon::<1>(a, m.add(c), y.add(c), rows, cols) };
            c += 4;
        }
        if c < cols {
            for r in 0..rows {
                // SAFETY: `r < rows` and `c <= j < cols`: in `a`, `m` and `y` (caller).
                unsafe {
                    let ar = *a.add(r);
                    for j in c..cols {
                        *y.add(j) = ar.mul_add(*m.add(r * cols + j), *y.add(j));
                    }
                }
            }
        }
    }
}
