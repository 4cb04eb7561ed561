//! x86_64 kernels of the int8 GEMVs (AVX2 widening and `maddubs`, AVX-512 VNNI).

use std::arch::x86_64::*;

use super::finish;
use crate::gemv::x86::hsum256;

/// Rows per block: independent weight streams read together.
const R: usize = 4;

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
/// written like [`super::scalar`].
///
/// # Safety
/// AVX2 and FMA are available; `q.len() == y.len() * x.len()` and `scales` (and `bias`
/// when given) have `y.len()` elements.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn rows_avx2(
    q: &[i8],
    scales: &[f32],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    let n16 = cols / 16 * 16;
    let mut r = 0;
    while r < rows {
        let nr = R.min(rows - r);
        let mut acc = [_mm256_setzero_ps(); R];
        let mut c = 0;
        while c < n16 {
            // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of `x` and of each of the
            // rows `r..r + nr` of `q` (`r + nr <= rows`).
            unsafe {
                let x0 = _mm256_loadu_ps(x.as_ptr().add(c));
                let x1 = _mm256_loadu_ps(x.as_ptr().add(c + 8));
                for (k, a) in acc.iter_mut().enumerate().take(nr) {
                    let p = q.as_ptr().add((r + k) * cols + c) as *const __m128i;
                    let v = _mm_loadu_si128(p);
                    let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
                    let hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(v)));
                    *a = _mm256_fmadd_ps(lo, x0, *a);
                    *a = _mm256_fmadd_ps(hi, x1, *a);
                }
            }
            c += 16;
        }
        for (k, a) in acc.iter().enumerate().take(nr) {
            let mut s = hsum256(*a);
            let row = &q[(r + k) * cols..(r + k + 1) * cols];
            for j in n16..cols {
                s = f32::from(row[j]).mul_add(x[j], s);
            }
            finish(s, scales[r + k], r + k, y, bias, accumulate);
        }
        r += nr;
    }
}

/// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`
/// (`|x| ≤ 127`, `|q| ≤ 127`, so a `maddubs` pair sum cannot saturate), scaled by
/// `scales[r] · x_scale` and written like [`super::scalar_q8`]. One row at a time, so
/// that the weights are read as one sequential stream (rows are short: a block of
/// rows read side by side was 30 % slower from DRAM) with a software prefetch
/// `AHEAD` bytes ahead, and four independent
/// accumulators of 32 columns each; `x` stays in L1.
///
/// # Safety
/// AVX2 is available; `q.len() == y.len() * x.len()` and `scales` (and `bias` when
/// given) have `y.len()` elements.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn rows_q8_avx2(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    // Software prefetch distance in bytes (of the sequential weight stream): on Zen 3,
    // the FlowLM layers' GEMVs ran at 18.5 GB/s without it, 21.1 (1 KiB ahead),
    // 24.1 (2 KiB) and 21.8 GB/s (4 KiB) (`cargo bench -p pocket-tts-simd --bench
    // kernels -- "gemv f32 vs int8"`). Prefetches never fault.
    const AHEAD: usize = 2048;
    let n128 = cols / 128 * 128;
    let n32 = cols / 32 * 32;
    let ones = _mm256_set1_epi16(1);
    let xp = x.as_ptr();
    // Elements `c..c + 32` of `x` and of the row at `wp`, multiplied and summed in
    // pairs, then in fours (eight `i32` lanes).
    macro_rules! dot {
        ($wp:expr, $c:expr) => {{
            let xv = _mm256_loadu_si256(xp.add($c) as *const __m256i);
            let wv = _mm256_sign_epi8(_mm256_loadu_si256($wp.add($c) as *const __m256i), xv);
            _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(xv), wv), ones)
        }};
    }
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        let mut acc = [_mm256_setzero_si256(); 4];
        let mut c = 0;
        while c < n128 {
            // SAFETY: `c + 128 <= n128 <= cols`: elements `c..c + 128` of `x` and of
            // row `r` of `q` exist.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD));
                _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD + 64));
                acc[0] = _mm256_add_epi32(acc[0], dot!(wp, c));
                acc[1] = _mm256_add_epi32(acc[1], dot!(wp, c + 32));
                acc[2] = _mm256_add_epi32(acc[2], dot!(wp, c + 64));
                acc[3] = _mm256_add_epi32(acc[3], dot!(wp, c + 96));
            }
            c += 128;
        }
        while c < n32 {
            // SAFETY: `c + 32 <= n32 <= cols`.
            unsafe {
                acc[0] = _mm256_add_epi32(acc[0], dot!(wp, c));
            }
            c += 32;
        }
        let sum = _mm256_add_epi32(
            _mm256_add_epi32(acc[0], acc[1]),
            _mm256_add_epi32(acc[2], acc[3]),
        );
        // SAFETY: plain register arithmetic (AVX2 is enabled).
        let mut s = unsafe { hsum256_epi32(sum) };
        for j in n32..cols {
            s += i32::from(row[j]) * i32::from(x[j]);
        }
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}

/// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`,
/// scaled and written like [`super::scalar_q8`], with AVX-512 VNNI. `vpdpbusd`
/// multiplies 64 `u8 × i8` pairs and adds them in fours to sixteen `i32` lanes (no
/// saturation). It needs one unsigned operand: the weights are offset to
/// `w + 128 ∈ [1, 255]` (`w ^ 0x80` read as `u8`) and `128 · Σx` is subtracted from each
/// row's sum, one `xor` per 64 weights. (The sign trick of [`rows_q8_avx2`], `|x|` times
/// the weights negated under the mask of the negative activations — AVX-512 has no
/// `vpsignb` — needs three more instructions per 64 weights and was 8 % slower with
/// the matrix in L2.) All sums are exact: the lanes wrap modulo 2³², and the
/// result fits `i32` (`|Σ w·x| ≤ 127² · cols`, cols < 133 000).
///
/// One row at a time, read as one sequential stream with a software prefetch `AHEAD`
/// bytes ahead (as [`rows_q8_avx2`]), four accumulators of 64 columns each; the last
/// `cols % 64` columns are read with masked loads (the masked-off lanes are zeros and
/// add nothing), so there is no scalar tail.
///
/// # Safety
/// AVX-512F, AVX-512BW and AVX-512 VNNI are available; `x_sum` is `Σ x`;
/// `q.len() == y.len() * x.len()` and `scales` (and `bias` when given) have `y.len()`
/// elements.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn rows_q8_avx512vnni(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_sum: i32,
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    /// Prefetch distance in bytes (see `rows_q8_avx2`).
    const AHEAD: usize = 2048;
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    let n256 = cols / 256 * 256;
    let n64 = cols / 64 * 64;
    let tail: __mmask64 = (1u64 << (cols % 64)).wrapping_sub(1);
    let offset = _mm512_set1_epi8(-128);
    debug_assert_eq!(x_sum, super::sum_i8(x));
    let x_sum_128 = x_sum.wrapping_mul(128);
    let xp = x.as_ptr();
    // Adds the products of 64 weights at `$wp + $c` and 64 activations at `xp + $c`
    // (offset weights, see above) to `$acc`; `$load` reads 64 bytes.
    macro_rules! dot {
        ($acc:expr, $wp:expr, $c:expr, $load:expr) => {{
            let wv = _mm512_xor_si512($load($wp.add($c)), offset);
            $acc = _mm512_dpbusd_epi32($acc, wv, $load(xp.add($c)));
        }};
    }
    let full = |p: *const i8| {
        // SAFETY: the callers below pass 64 readable bytes.
        unsafe { _mm512_loadu_si512(p as *const __m512i) }
    };
    let masked = |p: *const i8| {
        // SAFETY: the callers below pass `cols % 64` readable bytes; the masked-off
        // bytes are not accessed (fault suppression).
        unsafe { _mm512_maskz_loadu_epi8(tail, p) }
    };
    for r in 0..rows {
        let wp = q[r * cols..(r + 1) * cols].as_ptr();
        let mut acc = [_mm512_setzero_si512(); 4];
        let mut c = 0;
        while c < n256 {
            // SAFETY: `c + 256 <= n256 <= cols`: elements `c..c + 256` of `x` and of
            // row `r` of `q` exist; prefetches never fault.
            unsafe {
                for k in 0..4 {
                    _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD + 64 * k));
                }
                dot!(acc[0], wp, c, full);
                dot!(acc[1], wp, c + 64, full);
                dot!(acc[2], wp, c + 128, full);
                dot!(acc[3], wp, c + 192, full);
            }
            c += 256;
        }
        while c < n64 {
            // SAFETY: `c + 64 <= n64 <= cols`.
            unsafe { dot!(acc[0], wp, c, full) };
            c += 64;
        }
        if tail != 0 {
            // SAFETY: `c == n64`: the `cols % 64` elements `c..cols` exist.
            unsafe { dot!(acc[1], wp, c, masked) };
        }
        let sum = _mm512_add_epi32(
            _mm512_add_epi32(acc[0], acc[1]),
            _mm512_add_epi32(acc[2], acc[3]),
        );
        let s = _mm512_reduce_add_epi32(sum).wrapping_sub(x_sum_128);
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}

/// Sum of the eight `i32` lanes.
#[target_feature(enable = "avx2")]
unsafe fn hsum256_epi32(v: __m256i) -> i32 {
    let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
    let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
    _mm_cvtsi128_si32(s)
}
