//! The x86 kernels of `gemv_half`: AVX2 + F16C dot products (also run on AVX-512 hosts),
//! the multi-token kernel, and the AVX2 / AVX-512 widening of 16-bit values.

use std::arch::x86_64::*;

use super::{convert, rows, HalfDot, Widen};
use crate::arch::Avx2;

/// Eight 16-bit values at `p` as `f32`.
///
/// # Safety
/// AVX2 and F16C are available; `p` is valid for reads of 8 `u16`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load8<const BF16: bool>(p: *const u16) -> __m256 {
    // SAFETY: 16 readable bytes (caller); no alignment needed.
    let h = unsafe { _mm_loadu_si128(p as *const __m128i) };
    if BF16 {
        _mm256_castsi256_ps(_mm256_slli_epi32::<16>(_mm256_cvtepu16_epi32(h)))
    } else {
        _mm256_cvtph_ps(h)
    }
}

impl HalfDot for Avx2 {
    const BLOCK: usize = 32;
    #[inline(always)]
    unsafe fn block<const BF16: bool>(acc: &mut [__m256; 4], w: *const u16, x: *const f32) {
        for (k, a) in acc.iter_mut().enumerate() {
            // SAFETY: elements `8k .. 8k + 8 < 32` of both (caller); AVX2, FMA and
            // F16C are enabled (caller).
            unsafe {
                *a = _mm256_fmadd_ps(
                    load8::<BF16>(w.add(8 * k)),
                    _mm256_loadu_ps(x.add(8 * k)),
                    *a,
                );
            }
        }
    }
    #[inline(always)]
    unsafe fn step8<const BF16: bool>(acc: &mut [__m256; 4], w: *const u16, x: *const f32) {
        // SAFETY: 8 elements of both (caller); the features are enabled (caller).
        unsafe { acc[0] = _mm256_fmadd_ps(load8::<BF16>(w), _mm256_loadu_ps(x), acc[0]) };
    }
}

/// Dot products of the rows of `bits` (`[y.len(), x.len()]`, f16 or bf16 per `BF16`)
/// with `x`, written like [`super::scalar`] (see [`super::rows`]): four accumulators of
/// 8 columns, 32 columns per iteration.
///
/// Also the kernel of AVX-512 hosts: on Zen 4 (FlowLM layer shapes from DRAM, `cargo
/// bench -p pocket-tts-simd --bench kernels -- "gemv f32 vs int8"`, interleaved), the
/// same loop on 16 lanes (`vcvtph2ps zmm`, or `vpmovzxwd zmm` + `vpslld` for bf16;
/// 32 or 64 columns per iteration; prefetch 1–8 KiB ahead) took 9.0–12.1 ms per pass
/// for f16 and 9.0–13.5 ms for bf16, against 7.4–8.7 ms here, although it was 5–10 %
/// faster with the matrix in L2.
///
/// # Safety
/// AVX2, FMA and F16C are available; `bits.len() == y.len() * x.len()`; `bias`, when
/// given, has `y.len()` elements.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn rows_avx2<const BF16: bool>(
    bits: &[u16],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: the features are available and enabled here; lengths as required.
    unsafe { rows::<Avx2, BF16>(bits, x, y, bias, accumulate) }
}

/// [`super::Isa::gemv_half_tokens`] on AVX2: up to three tokens per pass over a row,
/// each 8-column weight vector widened once and multiplied into every token's
/// accumulators in the order of [`rows_avx2`] (four accumulators, 32 columns an
/// iteration, then 8, the same reduction and scalar tail): each token's sums are
/// bit-identical to [`rows_avx2`]'s before `finish`.
///
/// # Safety
/// AVX2, FMA and F16C are available; `bits.len() == rows · cols` for `rows =
/// out.len() / tokens`, `xs.len() == tokens · cols`.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn tokens_avx2<const BF16: bool>(
    bits: &[u16],
    cols: usize,
    xs: &[f32],
    out: &mut [f32],
) {
    let tokens = xs.len().checked_div(cols).unwrap_or(0);
    if tokens == 0 {
        return;
    }
    let rows = out.len() / tokens;
    let mut t0 = 0;
    while t0 < tokens {
        let n = (tokens - t0).min(3);
        // SAFETY: the features are enabled; the token group `t0..t0 + n` and every
        // row are in range (caller).
        unsafe {
            match n {
                3 => group::<BF16, 3>(bits, cols, rows, xs, t0, out),
                2 => group::<BF16, 2>(bits, cols, rows, xs, t0, out),
                _ => group::<BF16, 1>(bits, cols, rows, xs, t0, out),
            }
        }
        t0 += n;
    }
}

/// Tokens `t0..t0 + T` of [`tokens_avx2`].
///
/// # Safety
/// As [`tokens_avx2`], with `t0 + T <= tokens`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn group<const BF16: bool, const T: usize>(
    bits: &[u16],
    cols: usize,
    rows: usize,
    xs: &[f32],
    t0: usize,
    out: &mut [f32],
) {
    let (n32, n8) = (cols / 32 * 32, cols / 8 * 8);
    let xp: [*const f32; T] = std::array::from_fn(|t| xs[(t0 + t) * cols..].as_ptr());
    for r in 0..rows {
        let row = &bits[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        // SAFETY (all intrinsics): the features are enabled; every load reads columns
        // `c..c + 8 <= cols` of the row and of the tokens.
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); 4]; T];
            let mut c = 0;
            while c < n32 {
                // The single-token kernel's prefetch of the weight stream.
                _mm_prefetch::<_MM_HINT_T0>((wp as *const i8).wrapping_add(2 * c + 2048));
                for k in 0..4 {
                    let w = load8::<BF16>(wp.add(c + 8 * k));
                    for (a, x) in acc.iter_mut().zip(xp) {
                        a[k] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x.add(c + 8 * k)), a[k]);
                    }
                }
                c += 32;
            }
            while c < n8 {
                let w = load8::<BF16>(wp.add(c));
                for (a, x) in acc.iter_mut().zip(xp) {
                    a[0] = _mm256_fmadd_ps(w, _mm256_loadu_ps(x.add(c)), a[0]);
                }
                c += 8;
            }
            for (t, a) in acc.iter().enumerate() {
                let v = _mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3]));
                let mut s = <Avx2 as crate::arch::F32Simd>::hsum(v);
                let x = &xs[(t0 + t) * cols..(t0 + t + 1) * cols];
                for j in n8..cols {
                    s = super::to_f32(row[j], super::kind(BF16)).mul_add(x[j], s);
                }
                out[(t0 + t) * rows + r] = s;
            }
        }
    }
}

/// Sixteen 16-bit values at `p` as `f32`.
///
/// # Safety
/// AVX-512F is available; `p` is valid for reads of 16 `u16`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn load16<const BF16: bool>(p: *const u16) -> __m512 {
    // SAFETY: 32 readable bytes (caller); no alignment needed.
    let h = unsafe { _mm256_loadu_si256(p as *const __m256i) };
    if BF16 {
        _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(h)))
    } else {
        _mm512_cvtph_ps(h)
    }
}

/// AVX2 + F16C: 8 values per `vcvtph2ps` (or `vpmovzxwd` + `vpslld`).
struct Widen256;

impl Widen for Widen256 {
    const N: usize = 8;
    #[inline(always)]
    unsafe fn widen<const BF16: bool>(bits: *const u16, out: *mut f32) {
        // SAFETY: 8 values of each (caller); AVX2 and F16C are enabled (caller).
        unsafe { _mm256_storeu_ps(out, load8::<BF16>(bits)) }
    }
}

/// AVX-512F: 16 values per `vcvtph2ps zmm` (or `vpmovzxwd zmm` + `vpslld`).
struct Widen512;

impl Widen for Widen512 {
    const N: usize = 16;
    #[inline(always)]
    unsafe fn widen<const BF16: bool>(bits: *const u16, out: *mut f32) {
        // SAFETY: 16 values of each (caller); AVX-512F is enabled (caller).
        unsafe { _mm512_storeu_ps(out, load16::<BF16>(bits)) }
    }
}

/// `out[i] = bits[i]` as `f32` (f16 or bf16 per `bf16`).
///
/// # Safety
/// AVX2, FMA and F16C are available.
///
/// # Panics
/// If `bits.len() != out.len()`.
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn convert_avx2(bits: &[u16], out: &mut [f32], bf16: bool) {
    // SAFETY: the features are available and enabled here.
    unsafe { convert::<Widen256>(bits, out, bf16) }
}

/// [`convert_avx2`] with AVX-512F.
///
/// # Safety
/// AVX-512F is available.
///
/// # Panics
/// If `bits.len() != out.len()`.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn convert_avx512(bits: &[u16], out: &mut [f32], bf16: bool) {
    // SAFETY: AVX-512F is available and enabled here.
    unsafe { convert::<Widen512>(bits, out, bf16) }
}
