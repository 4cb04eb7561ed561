//! [`gemv_multi`]: `Y[t] = W·X[t]` for a few vectors at once (`X` `[tokens, cols]`,
//! `Y` `[tokens, rows]`, `W` row-major `[rows, cols]`): the text prefill of the FlowLM,
//! where a handful of tokens go through every linear layer.
//!
//! A GEMM library packs `W` before multiplying, which for the FlowLM means copying its
//! 340 MB of weights on every prefill, while the product of ~10–30 tokens is only a few
//! GFLOP. Here `W` is read in place, once: a block of weight rows (3 on AVX2, 4 on
//! AVX-512 and NEON) is multiplied with 4 tokens at a time, the `rows × 4` dot products
//! kept in vector accumulators (12 or 16 registers) and reduced once at the end, so the
//! rows stay in L1 while the tokens (`X`, a few tens of KB) come from L1/L2. Each output
//! is a dot product summed in `f32` with per-lane partial sums (like [`crate::gemv`]); the
//! last `cols % lanes` columns are masked loads on AVX-512 and a scalar `mul_add` tail on
//! AVX2 and NEON. The scalar ISA runs one [`crate::gemv`] per token.
//!
//! Meant for small `tokens` (up to a few tens: `X` should fit in L2); the caller
//! parallelises by splitting `W`'s rows (see [`crate::Team`]).

use crate::{detected, Isa};

/// `Y[i] = W·X[i] + bias` (or `Y[i] += …` with `accumulate`) for every token `i`, where
/// `W` is row-major `[rows, cols]`, `X` row-major `[tokens, cols]` and `Y` `[tokens, ldy]`
/// with the `rows` outputs of token `i` at `Y[i·ldy ..][.. rows]` (`ldy ≥ rows`, so a
/// caller can write a column block of a wider matrix). Rounding as in [`crate::gemv`]:
/// dot product, then `+ bias`, then `y + …`.
///
/// # Panics
/// If `w.len() != rows·cols`, `x.len() != tokens·cols`, `ldy < rows`, `y` is shorter than
/// `(tokens − 1)·ldy + rows`, or `bias` is given with a length other than `rows`.
#[allow(clippy::too_many_arguments)]
pub fn gemv_multi(
    w: &[f32],
    rows: usize,
    cols: usize,
    x: &[f32],
    tokens: usize,
    y: &mut [f32],
    ldy: usize,
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    detected().gemv_multi(w, rows, cols, x, tokens, y, ldy, bias, accumulate)
}

impl Isa {
    /// [`gemv_multi`] on this ISA (see [`Isa::resolve`] for unsupported ISAs).
    ///
    /// # Panics
    /// Same as [`gemv_multi`].
    #[allow(clippy::too_many_arguments)]
    pub fn gemv_multi(
        self,
        w: &[f32],
        rows: usize,
        cols: usize,
        x: &[f32],
        tokens: usize,
        y: &mut [f32],
        ldy: usize,
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        if tokens == 0 || rows == 0 {
            return;
        }
        assert!(
            y.len() >= (tokens - 1) * ldy + rows,
            "gemv_multi: y has {} elements, expected at least (tokens − 1) × ldy + rows = {}",
            y.len(),
            (tokens - 1) * ldy + rows
        );
        // SAFETY: lengths checked above; `y` is exclusively borrowed.
        unsafe {
            self.gemv_multi_ptr(
                w,
                rows,
                cols,
                x,
                tokens,
                y.as_mut_ptr(),
                ldy,
                bias,
                accumulate,
            )
        }
    }

    /// [`Isa::gemv_multi`] writing through a raw pointer, so that threads can fill
    /// disjoint column blocks of one `[tokens, ldy]` output: only the elements
    /// `y[i·ldy + r]` (`i < tokens`, `r < rows`) are read or written.
    ///
    /// # Safety
    /// Those elements are valid for reads and writes, and nothing else (in particular not
    /// `w`, `x` or `bias`) accesses them during the call. No CPU feature is required: the
    /// ISA is resolved like every kernel method (see [`Isa::resolve`]).
    ///
    /// # Panics
    /// If `w.len() != rows·cols`, `x.len() != tokens·cols`, `ldy < rows` or `bias` is
    /// given with a length other than `rows`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemv_multi_ptr(
        self,
        w: &[f32],
        rows: usize,
        cols: usize,
        x: &[f32],
        tokens: usize,
        y: *mut f32,
        ldy: usize,
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        assert_eq!(
            w.len(),
            rows * cols,
            "gemv_multi: w has {} elements, expected {rows} × {cols}",
            w.len()
        );
        assert_eq!(
            x.len(),
            tokens * cols,
            "gemv_multi: x has {} elements, expected {tokens} × {cols}",
            x.len()
        );
        assert!(ldy >= rows, "gemv_multi: ldy = {ldy} < rows = {rows}");
        if let Some(b) = bias {
            assert_eq!(
                b.len(),
                rows,
                "gemv_multi: bias has {} elements, expected rows = {rows}",
                b.len()
            );
        }
        if tokens == 0 || rows == 0 {
            return;
        }
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        let p = Ptrs {
            w: w.as_ptr(),
            x: x.as_ptr(),
            y,
            bias: bias.map_or(std::ptr::null(), |b| b.as_ptr()),
            cols,
            ldy,
            accumulate,
        };
        match self.resolve() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx512f is present (resolved); `p` is valid for `rows` × `tokens`:
            // lengths checked above, `y` by the caller.
            Isa::Avx512 => unsafe { x86::multi_avx512(&p, rows, tokens) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: avx2 and fma are present (resolved); as above.
            Isa::Avx2 => unsafe { x86::multi_avx2(&p, rows, tokens) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: neon is present (resolved); as above.
            Isa::Neon => unsafe { arm::multi_neon(&p, rows, tokens) },
            isa => {
                // One GEMV per token: W is streamed once per token, still exact.
                for i in 0..tokens {
                    // SAFETY: `y[i·ldy ..][.. rows]` are elements of token `i` that the
                    // caller guarantees valid and unaliased during the call.
                    let yi = unsafe { std::slice::from_raw_parts_mut(y.add(i * ldy), rows) };
                    isa.gemv(w, &x[i * cols..(i + 1) * cols], yi, bias, accumulate);
                }
            }
        }
    }
}

/// The operands of one call, as raw pointers for the kernels.
///
/// *Valid for `rows` × `tokens`* (the kernels' safety requirement) means: `w` is readable
/// for `rows·cols` elements, `x` for `tokens·cols`, `bias` is null or readable for
/// `rows`, `ldy >= rows`, and the elements `y[i·ldy + r]` (`i < tokens`, `r < rows`) are
/// valid for reads and writes and accessed by nothing else during the call.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
struct Ptrs {
    w: *const f32,
    x: *const f32,
    y: *mut f32,
    bias: *const f32,
    cols: usize,
    ldy: usize,
    accumulate: bool,
}

/// Writes the finished dot product `s` of row `r` for token `i`.
///
/// # Safety
/// `p` is valid for some `rows` × `tokens` (see [`Ptrs`]) with `r < rows` and
/// `i < tokens`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
unsafe fn finish(p: &Ptrs, r: usize, i: usize, s: f32) {
    // SAFETY: `r < rows` and `i < tokens`: `bias[r]` (when non-null) and
    // `y[i·ldy + r]` are valid and ours (caller).
    unsafe {
        let s = if p.bias.is_null() {
            s
        } else {
            s + *p.bias.add(r)
        };
        let dst = p.y.add(i * p.ldy + r);
        *dst = if p.accumulate { *dst + s } else { s };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::*;

    use super::{finish, Ptrs};
    use crate::gemv::x86::hsum256;

    /// Rows `r..r + R` × tokens `i..i + T` on AVX2.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`])
    /// with `r + R <= rows` and `i + T <= tokens`.
    #[inline]
    #[allow(clippy::needless_range_loop)] // acc is indexed by row and token together
    #[target_feature(enable = "avx2,fma")]
    unsafe fn tile_avx2<const R: usize, const T: usize>(p: &Ptrs, r: usize, i: usize) {
        let cols = p.cols;
        // SAFETY: rows `r..r + R` of `w` and tokens `i..i + T` of `x` exist (caller), so
        // their starts are in bounds.
        let (w, x) = unsafe { (p.w.add(r * cols), p.x.add(i * cols)) };
        let mut acc = [[_mm256_setzero_ps(); T]; R];
        let n = cols / 8 * 8;
        let mut c = 0;
        while c < n {
            let mut wv = [_mm256_setzero_ps(); R];
            // SAFETY: `c + 8 <= cols`: elements `c..c + 8` of each of the `R` rows of `w`
            // and of the `T` rows of `x`.
            unsafe {
                for (k, v) in wv.iter_mut().enumerate() {
                    *v = _mm256_loadu_ps(w.add(k * cols + c));
                }
                for j in 0..T {
                    let xv = _mm256_loadu_ps(x.add(j * cols + c));
                    for k in 0..R {
                        acc[k][j] = _mm256_fmadd_ps(wv[k], xv, acc[k][j]);
                    }
                }
            }
            c += 8;
        }
        for k in 0..R {
            for j in 0..T {
                let mut s = hsum256(acc[k][j]);
                // SAFETY: `q < cols` in row `k < R` of `w` and `j < T` of `x`; output
                // `(r + k, i + j)` is inside the call (caller).
                unsafe {
                    for q in n..cols {
                        s = (*w.add(k * cols + q)).mul_add(*x.add(j * cols + q), s);
                    }
                    finish(p, r + k, i + j, s);
                }
            }
        }
    }

    /// Rows `r..r + R`, every token, `T` tokens at a time on AVX2.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`])
    /// with `r + R <= rows`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn rows_avx2<const R: usize>(p: &Ptrs, r: usize, tokens: usize) {
        let mut i = 0;
        while i + 4 <= tokens {
            // SAFETY: tokens `i..i + 4` are `<= tokens`; rows as given (caller).
            unsafe { tile_avx2::<R, 4>(p, r, i) };
            i += 4;
        }
        // SAFETY: tokens `i..tokens`; rows as given (caller).
        unsafe {
            match tokens - i {
                0 => {}
                1 => tile_avx2::<R, 1>(p, r, i),
                2 => tile_avx2::<R, 2>(p, r, i),
                3 => tile_avx2::<R, 3>(p, r, i),
                _ => unreachable!(),
            }
        }
    }

    /// [`super::gemv_multi`] on AVX2 + FMA.
    ///
    /// # Safety
    /// AVX2 and FMA are available; `p` is valid for `rows` × `tokens` (see [`Ptrs`]).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn multi_avx2(p: &Ptrs, rows: usize, tokens: usize) {
        let mut r = 0;
        while r + 3 <= rows {
            // SAFETY: rows `r..r + 3` are `<= rows` (caller: valid for `rows` × `tokens`).
            unsafe { rows_avx2::<3>(p, r, tokens) };
            r += 3;
        }
        while r < rows {
            // SAFETY: row `r < rows`, as above.
            unsafe { rows_avx2::<1>(p, r, tokens) };
            r += 1;
        }
    }

    /// Rows `r..r + R` × tokens `i..i + T` on AVX-512.
    ///
    /// # Safety
    /// AVX-512F is available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`]) with
    /// `r + R <= rows` and `i + T <= tokens`.
    #[inline]
    #[allow(clippy::needless_range_loop)] // acc is indexed by row and token together
    #[target_feature(enable = "avx512f")]
    unsafe fn tile_avx512<const R: usize, const T: usize>(p: &Ptrs, r: usize, i: usize) {
        let cols = p.cols;
        // SAFETY: rows `r..r + R` of `w` and tokens `i..i + T` of `x` exist (caller), so
        // their starts are in bounds.
        let (w, x) = unsafe { (p.w.add(r * cols), p.x.add(i * cols)) };
        let mut acc = [[_mm512_setzero_ps(); T]; R];
        let n = cols / 16 * 16;
        let mut c = 0;
        while c < n {
            let mut wv = [_mm512_setzero_ps(); R];
            // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of each of the `R` rows of `w`
            // and of the `T` rows of `x`.
            unsafe {
                for (k, v) in wv.iter_mut().enumerate() {
                    *v = _mm512_loadu_ps(w.add(k * cols + c));
                }
                for j in 0..T {
                    let xv = _mm512_loadu_ps(x.add(j * cols + c));
                    for k in 0..R {
                        acc[k][j] = _mm512_fmadd_ps(wv[k], xv, acc[k][j]);
                    }
                }
            }
            c += 16;
        }
        if c < cols {
            let m: __mmask16 = (1u16 << (cols - c)) - 1;
            let mut wv = [_mm512_setzero_ps(); R];
            // SAFETY: the mask enables elements `c..cols` of each row only; masked-off
            // lanes are not accessed (fault suppression).
            unsafe {
                for (k, v) in wv.iter_mut().enumerate() {
                    *v = _mm512_maskz_loadu_ps(m, w.add(k * cols + c));
                }
                for j in 0..T {
                    let xv = _mm512_maskz_loadu_ps(m, x.add(j * cols + c));
                    for k in 0..R {
                        acc[k][j] = _mm512_fmadd_ps(wv[k], xv, acc[k][j]);
                    }
                }
            }
        }
        for k in 0..R {
            for j in 0..T {
                // SAFETY: output `(r + k, i + j)` is inside the call (caller).
                unsafe { finish(p, r + k, i + j, _mm512_reduce_add_ps(acc[k][j])) };
            }
        }
    }

    /// Rows `r..r + R`, every token, `T` tokens at a time on AVX-512.
    ///
    /// # Safety
    /// AVX-512F is available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`]) with
    /// `r + R <= rows`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn rows_avx512<const R: usize>(p: &Ptrs, r: usize, tokens: usize) {
        let mut i = 0;
        while i + 4 <= tokens {
            // SAFETY: tokens `i..i + 4` are `<= tokens`; rows as given (caller).
            unsafe { tile_avx512::<R, 4>(p, r, i) };
            i += 4;
        }
        // SAFETY: tokens `i..tokens`; rows as given (caller).
        unsafe {
            match tokens - i {
                0 => {}
                1 => tile_avx512::<R, 1>(p, r, i),
                2 => tile_avx512::<R, 2>(p, r, i),
                3 => tile_avx512::<R, 3>(p, r, i),
                _ => unreachable!(),
            }
        }
    }

    /// [`super::gemv_multi`] on AVX-512F.
    ///
    /// # Safety
    /// AVX-512F is available; `p` is valid for `rows` × `tokens` (see [`Ptrs`]).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn multi_avx512(p: &Ptrs, rows: usize, tokens: usize) {
        let mut r = 0;
        while r + 4 <= rows {
            // SAFETY: rows `r..r + 4` are `<= rows` (caller: valid for `rows` × `tokens`).
            unsafe { rows_avx512::<4>(p, r, tokens) };
            r += 4;
        }
        while r < rows {
            // SAFETY: row `r < rows`, as above.
            unsafe { rows_avx512::<1>(p, r, tokens) };
            r += 1;
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use core::arch::aarch64::*;

    use super::{finish, Ptrs};

    /// Rows `r..r + R` × tokens `i..i + T` on NEON: `R·T` accumulators (16 for 4 × 4, of
    /// the 32 vector registers), 8 columns per iteration (two 4-lane steps: `2·R` weight
    /// vectors and `2·T` token vectors loaded, `2·R·T` FMAs), then one 4-column step and a
    /// scalar tail of `cols % 4`.
    ///
    /// # Safety
    /// NEON is available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`]) with
    /// `r + R <= rows` and `i + T <= tokens`.
    #[inline]
    #[allow(clippy::needless_range_loop)] // acc is indexed by row and token together
    #[target_feature(enable = "neon")]
    unsafe fn tile_neon<const R: usize, const T: usize>(p: &Ptrs, r: usize, i: usize) {
        let cols = p.cols;
        // SAFETY: rows `r..r + R` of `w` and tokens `i..i + T` of `x` exist (caller), so
        // their starts are in bounds.
        let (w, x) = unsafe { (p.w.add(r * cols), p.x.add(i * cols)) };
        let mut acc = [[vdupq_n_f32(0.0); T]; R];
        let (n8, n4) = (cols / 8 * 8, cols / 4 * 4);
        let mut c = 0;
        while c < n8 {
            let mut wv = [[vdupq_n_f32(0.0); 2]; R];
            // SAFETY: `c + 8 <= cols`: elements `c..c + 8` of each of the `R` rows of `w`
            // and of the `T` rows of `x`.
            unsafe {
                for (k, v) in wv.iter_mut().enumerate() {
                    *v = [
                        vld1q_f32(w.add(k * cols + c)),
                        vld1q_f32(w.add(k * cols + c + 4)),
                    ];
                }
                for j in 0..T {
                    let x0 = vld1q_f32(x.add(j * cols + c));
                    let x1 = vld1q_f32(x.add(j * cols + c + 4));
                    for k in 0..R {
                        acc[k][j] = vfmaq_f32(acc[k][j], wv[k][0], x0);
                        acc[k][j] = vfmaq_f32(acc[k][j], wv[k][1], x1);
                    }
                }
            }
            c += 8;
        }
        if c < n4 {
            // SAFETY: `c + 4 <= cols`: elements `c..c + 4` of the same rows.
            unsafe {
                let mut wv = [vdupq_n_f32(0.0); R];
                for (k, v) in wv.iter_mut().enumerate() {
                    *v = vld1q_f32(w.add(k * cols + c));
                }
                for j in 0..T {
                    let xv = vld1q_f32(x.add(j * cols + c));
                    for k in 0..R {
                        acc[k][j] = vfmaq_f32(acc[k][j], wv[k], xv);
                    }
                }
            }
            c += 4;
        }
        for k in 0..R {
            for j in 0..T {
                let mut s = vaddvq_f32(acc[k][j]);
                // SAFETY: `q < cols` in row `k < R` of `w` and `j < T` of `x`; output
                // `(r + k, i + j)` is inside the call (caller).
                unsafe {
                    for q in c..cols {
                        s = (*w.add(k * cols + q)).mul_add(*x.add(j * cols + q), s);
                    }
                    finish(p, r + k, i + j, s);
                }
            }
        }
    }

    /// Rows `r..r + R`, every token, `T` tokens at a time on NEON.
    ///
    /// # Safety
    /// NEON is available; `p` is valid for some `rows` × `tokens` (see [`Ptrs`]) with
    /// `r + R <= rows`.
    #[inline]
    #[target_feature(enable = "neon")]
    unsafe fn rows_neon<const R: usize>(p: &Ptrs, r: usize, tokens: usize) {
        let mut i = 0;
        while i + 4 <= tokens {
            // SAFETY: tokens `i..i + 4` are `<= tokens`; rows as given (caller).
            unsafe { tile_neon::<R, 4>(p, r, i) };
            i += 4;
        }
        // SAFETY: tokens `i..tokens`; rows as given (caller).
        unsafe {
            match tokens - i {
                0 => {}
                1 => tile_neon::<R, 1>(p, r, i),
                2 => tile_neon::<R, 2>(p, r, i),
                3 => tile_neon::<R, 3>(p, r, i),
                _ => unreachable!(),
            }
        }
    }

    /// [`super::gemv_multi`] on NEON.
    ///
    /// # Safety
    /// NEON is available; `p` is valid for `rows` × `tokens` (see [`Ptrs`]).
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn multi_neon(p: &Ptrs, rows: usize, tokens: usize) {
        let mut r = 0;
        while r + 4 <= rows {
            // SAFETY: rows `r..r + 4` are `<= rows` (caller: valid for `rows` × `tokens`).
            unsafe { rows_neon::<4>(p, r, tokens) };
            r += 4;
        }
        while r < rows {
            // SAFETY: row `r < rows`, as above.
            unsafe { rows_neon::<1>(p, r, tokens) };
            r += 1;
        }
    }
}
