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

use crate::arch::{self, F32Simd, Job};
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
        let p = Gemv {
            w: w.as_ptr(),
            x: x.as_ptr(),
            y: y.as_mut_ptr(),
            bias: bias.map_or(std::ptr::null(), |b| b.as_ptr()),
            rows,
            cols,
            accumulate,
        };
        // SAFETY: `p` is valid (lengths checked above, `y` exclusively borrowed); the ISA
        // is resolved.
        unsafe { arch::run(self.resolve(), p) }
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
        let p = GemvT {
            a: a.as_ptr(),
            m: m.as_ptr(),
            y: y.as_mut_ptr(),
            rows,
            cols,
        };
        // SAFETY: `p` is valid (lengths checked above, `y` exclusively borrowed); the ISA
        // is resolved.
        unsafe { arch::run(self.resolve(), p) }
    }
}

/// The operands of one [`gemv`] call, `y = W·x + bias` (or `y += …`) with `W` row-major
/// `[rows, cols]`, as raw pointers for the kernels. *Valid* (the kernels' safety
/// requirement) means: `w` is readable for `rows·cols` elements, `x` for `cols`, `bias`
/// is null or readable for `rows`; `y` is readable and writable for `rows` elements and
/// overlaps none of the others; nothing else writes to any of them during the call.
#[derive(Clone, Copy)]
struct Gemv {
    w: *const f32,
    x: *const f32,
    y: *mut f32,
    bias: *const f32,
    rows: usize,
    cols: usize,
    accumulate: bool,
}

/// The operands of one [`gemv_t`] call, `y += Mᵀ·a` with `M` row-major `[rows, cols]`,
/// as raw pointers for the kernels. *Valid* means: `a` is readable for `rows` elements
/// and `m` for `rows·cols`; `y` is readable and writable for `cols` elements and overlaps
/// neither; nothing else writes to any of them during the call.
#[derive(Clone, Copy)]
struct GemvT {
    a: *const f32,
    m: *const f32,
    y: *mut f32,
    rows: usize,
    cols: usize,
}

impl Job for Gemv {
    #[inline(always)]
    unsafe fn simd<S: F32Simd>(self) {
        // SAFETY: as the caller vouches for.
        unsafe { gemv_rows::<S>(self) }
    }
    unsafe fn scalar(self) {
        // SAFETY: as the caller vouches for.
        unsafe { gemv_scalar(self) }
    }
}

impl Job for GemvT {
    #[inline(always)]
    unsafe fn simd<S: F32Simd>(self) {
        // SAFETY: as the caller vouches for.
        unsafe { gemv_t_cols::<S>(self) }
    }
    unsafe fn scalar(self) {
        // SAFETY: as the caller vouches for.
        unsafe { gemv_t_scalar(self) }
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

/// Scalar [`gemv`] (see [`Isa::gemv`]).
///
/// # Safety
/// `p` is valid (see [`Gemv`]).
unsafe fn gemv_scalar(p: Gemv) {
    let Gemv {
        w,
        x,
        y,
        bias,
        rows,
        cols,
        accumulate,
    } = p;
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

/// Scalar [`gemv_t`] (accumulating into `y`; see [`Isa::gemv_t`]).
///
/// # Safety
/// `p` is valid (see [`GemvT`]).
unsafe fn gemv_t_scalar(p: GemvT) {
    let GemvT {
        a,
        m,
        y,
        rows,
        cols,
    } = p;
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

/// Dot products of the `R` rows starting at `w` (stride `cols`) with `x`: one vector
/// accumulator per row, sharing each load of `x`, reduced once; the last `cols mod LANES`
/// columns by a masked load ([`F32Simd::MASKED_TAIL`]) or a scalar `mul_add` tail after
/// the reduction.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `x` is valid for reads of
/// `cols` elements and `w` of `R·cols` elements.
#[inline(always)]
unsafe fn dot_rows<S: F32Simd, const R: usize>(
    w: *const f32,
    x: *const f32,
    cols: usize,
) -> [f32; R] {
    // SAFETY (the primitives, here and below): `S`'s features are enabled (caller).
    let mut acc = [unsafe { S::zero() }; R];
    let n = cols / S::LANES * S::LANES;
    let mut c = 0;
    while c < n {
        // SAFETY: `c + LANES <= cols`: elements `c..c + LANES` of `x` and of each row.
        unsafe {
            let xv = S::load(x.add(c));
            for (k, a) in acc.iter_mut().enumerate() {
                *a = S::fmadd(S::load(w.add(k * cols + c)), xv, *a);
            }
        }
        c += S::LANES;
    }
    if S::MASKED_TAIL && c < cols {
        // SAFETY: the `cols − c < LANES` elements `c..cols` of `x` and of each row.
        unsafe {
            let xv = S::load_first(x.add(c), cols - c);
            for (k, a) in acc.iter_mut().enumerate() {
                *a = S::fmadd(S::load_first(w.add(k * cols + c), cols - c), xv, *a);
            }
        }
    }
    // The scalar tail (none after a masked one), from a bound the compiler knows to be
    // less than `LANES` below `cols`.
    let tail = if S::MASKED_TAIL { cols } else { n };
    let mut out = [0f32; R];
    for (k, (o, a)) in out.iter_mut().zip(acc).enumerate() {
        // SAFETY: as above.
        let mut s = unsafe { S::hsum(a) };
        for j in tail..cols {
            // SAFETY: `j < cols`: element `j` of `x` and of row `k < R`.
            s = unsafe { (*w.add(k * cols + j)).mul_add(*x.add(j), s) };
        }
        *o = s;
    }
    out
}

/// [`gemv_scalar`] with `S`: blocks of rows read together (8 with the next block's
/// first cache lines prefetched where [`F32Simd::PREFETCH`], else 4), then single rows.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `p` is valid (see [`Gemv`]).
#[inline(always)]
unsafe fn gemv_rows<S: F32Simd>(p: Gemv) {
    let Gemv {
        w,
        x,
        y,
        bias,
        rows,
        cols,
        accumulate,
    } = p;
    let mut r = 0;
    if S::PREFETCH {
        while r + 8 <= rows {
            if r + 16 <= rows {
                // Each row of the next block is a new stream (often a new 4 KiB page)
                // that the hardware prefetcher would only pick up after a few demand
                // misses: its first two cache lines are prefetched now. Measured +5–8 %
                // GEMV throughput on Zen 5 (more lines, or a whole block ahead, did not
                // help).
                for k in 0..8 {
                    let head = w.wrapping_add((r + 8 + k) * cols) as *const u8;
                    // SAFETY: prefetches never fault; `S`'s features are enabled.
                    unsafe {
                        S::prefetch(head);
                        S::prefetch(head.wrapping_add(64));
                    }
                }
            }
            // SAFETY: rows `r .. r + 8` are in `w` and `y` (`r + 8 <= rows`; caller).
            unsafe {
                let s = dot_rows::<S, 8>(w.add(r * cols), x, cols);
                for (k, v) in s.into_iter().enumerate() {
                    finish(v, r + k, y, bias, accumulate);
                }
            }
            r += 8;
        }
    }
    while r + 4 <= rows {
        // SAFETY: rows `r .. r + 4` are in `w` and `y` (`r + 4 <= rows`; caller).
        unsafe {
            let s = dot_rows::<S, 4>(w.add(r * cols), x, cols);
            for (k, v) in s.into_iter().enumerate() {
                finish(v, r + k, y, bias, accumulate);
            }
        }
        r += 4;
    }
    while r < rows {
        // SAFETY: row `r < rows` is in `w` and `y` (caller).
        unsafe {
            let [s] = dot_rows::<S, 1>(w.add(r * cols), x, cols);
            finish(s, r, y, bias, accumulate);
        }
        r += 1;
    }
}

/// Vector `j` of `V` at `p`: all `LANES` lanes, or only the first `last` for the last
/// vector when `last < LANES` (only with [`F32Simd::MASKED_TAIL`]).
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; the lanes read are readable.
#[inline(always)]
unsafe fn load_vec<S: F32Simd, const V: usize>(p: *const f32, j: usize, last: usize) -> S::V {
    // SAFETY: as the caller vouches for.
    unsafe {
        if S::MASKED_TAIL && j + 1 == V && last < S::LANES {
            S::load_first(p.add(j * S::LANES), last)
        } else {
            S::load(p.add(j * S::LANES))
        }
    }
}

/// `y[c..c + V·LANES] += Σ_r a[r]·m[r][c..]` (the last vector holding only `last` lanes),
/// even and odd rows in separate accumulators when [`F32Simd::PAIRED_ROWS`].
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `1 <= last <= LANES`, and
/// `last < LANES` only with [`F32Simd::MASKED_TAIL`]; `a` is valid for reads of `rows`
/// elements; for every row `r < rows`, the `(V − 1)·LANES + last` elements from
/// `m.add(r·cols)` are valid for reads, and as many of `y` for reads and writes, not
/// overlapping `a` or `m`.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // e and o advance together
unsafe fn cols_t<S: F32Simd, const V: usize>(
    a: *const f32,
    m: *const f32,
    y: *mut f32,
    rows: usize,
    cols: usize,
    last: usize,
) {
    // SAFETY (the primitives, here and below): `S`'s features are enabled (caller).
    let mut e = [unsafe { S::zero() }; V];
    let mut o = e;
    let mut r = 0;
    if S::PAIRED_ROWS {
        while r + 2 <= rows {
            // SAFETY: rows `r` and `r + 1` are `< rows`; the loads read the lanes the
            // caller vouches for.
            unsafe {
                let a0 = S::splat(*a.add(r));
                let a1 = S::splat(*a.add(r + 1));
                let p0 = m.add(r * cols);
                let p1 = p0.add(cols);
                for j in 0..V {
                    e[j] = S::fmadd(a0, load_vec::<S, V>(p0, j, last), e[j]);
                    o[j] = S::fmadd(a1, load_vec::<S, V>(p1, j, last), o[j]);
                }
            }
            r += 2;
        }
    }
    while r < rows {
        // SAFETY: row `r < rows`, as above.
        unsafe {
            let a0 = S::splat(*a.add(r));
            let p0 = m.add(r * cols);
            for j in 0..V {
                e[j] = S::fmadd(a0, load_vec::<S, V>(p0, j, last), e[j]);
            }
        }
        r += 1;
    }
    for j in 0..V {
        // SAFETY: the lanes of `y` of vector `j` are valid for reads and writes (caller).
        unsafe {
            let s = if S::PAIRED_ROWS {
                S::add(e[j], o[j])
            } else {
                e[j]
            };
            let p = y.add(j * S::LANES);
            let sum = S::add(load_vec::<S, V>(y, j, last), s);
            if S::MASKED_TAIL && j + 1 == V && last < S::LANES {
                S::store_first(p, last, sum);
            } else {
                S::store(p, sum);
            }
        }
    }
}

/// [`gemv_t_scalar`] with `S`: blocks of `4·LANES` columns, then single vectors, then the
/// last `cols mod LANES` columns as one partial vector ([`F32Simd::MASKED_TAIL`]) or with
/// scalar `mul_add`s.
///
/// # Safety
/// The CPU has `S`'s features and the caller enables them; `p` is valid (see [`GemvT`]).
#[inline(always)]
unsafe fn gemv_t_cols<S: F32Simd>(p: GemvT) {
    let GemvT {
        a,
        m,
        y,
        rows,
        cols,
    } = p;
    let l = S::LANES;
    let mut c = 0;
    while c + 4 * l <= cols {
        // SAFETY: columns `c .. c + 4·LANES` are `<= cols`, in every row of `m` and in
        // `y`.
        unsafe { cols_t::<S, 4>(a, m.add(c), y.add(c), rows, cols, l) };
        c += 4 * l;
    }
    while c + l <= cols {
        // SAFETY: columns `c .. c + LANES`, as above.
        unsafe { cols_t::<S, 1>(a, m.add(c), y.add(c), rows, cols, l) };
        c += l;
    }
    if c < cols && S::MASKED_TAIL {
        // SAFETY: the `cols − c < LANES` columns `c..cols`, as above.
        unsafe { cols_t::<S, 1>(a, m.add(c), y.add(c), rows, cols, cols - c) };
    } else if c < cols {
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
