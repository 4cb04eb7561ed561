//! x86_64 kernels of the int8 GEMVs: the AVX2 widening product ([`Widen256`]), AVX2
//! `maddubs` ([`Maddubs`]) and AVX-512 VNNI ([`Vnni`]) dot products, and their
//! `#[target_feature]` entry points, which run the drivers of `mod.rs`.

use std::arch::x86_64::*;

use super::{rows_widen, DotI8, Q8Job, Widen16};
use crate::arch::x86::hsum256;

/// AVX2 + FMA: 16 weights sign-extended to `i32` and converted to `f32` in two 8-lane
/// vectors, multiplied into one accumulator per row.
struct Widen256;

impl Widen16 for Widen256 {
    type Acc = __m256;
    type X = (__m256, __m256);

    #[inline(always)]
    unsafe fn zero() -> __m256 {
        // SAFETY: AVX is enabled (trait contract).
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn load_x(x: *const f32) -> (__m256, __m256) {
        // SAFETY: 16 readable values (caller); AVX is enabled.
        unsafe { (_mm256_loadu_ps(x), _mm256_loadu_ps(x.add(8))) }
    }
    #[inline(always)]
    unsafe fn dot16(acc: __m256, w: *const i8, (x0, x1): (__m256, __m256)) -> __m256 {
        // SAFETY: 16 readable bytes (caller); AVX2 and FMA are enabled.
        unsafe {
            let v = _mm_loadu_si128(w as *const __m128i);
            let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
            let hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(v)));
            _mm256_fmadd_ps(hi, x1, _mm256_fmadd_ps(lo, x0, acc))
        }
    }
    #[inline(always)]
    unsafe fn sum(acc: __m256) -> f32 {
        // SAFETY: AVX2 and FMA are enabled (trait contract).
        unsafe { hsum256(acc) }
    }
}

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
/// written like [`super::scalar`] (see [`super::rows_widen`]).
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
    // SAFETY: AVX2 and FMA are available and enabled here; lengths as required (caller).
    unsafe { rows_widen::<Widen256>(q, scales, x, y, bias, accumulate) }
}

/// AVX2: 32 products per step, `maddubs` on `|x|` and the weights negated where `x < 0`
/// (`vpsignb`), summed in pairs (`i16`: `2 · 127² < 2¹⁵`, no saturation), then `madd`
/// with ones into eight `i32` lanes.
struct Maddubs;

impl DotI8 for Maddubs {
    type Acc = __m256i;
    type Wv = __m256i;
    const W: usize = 32;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = true;

    #[inline(always)]
    unsafe fn zero() -> __m256i {
        // SAFETY: AVX is enabled (trait contract).
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: AVX2 is enabled (trait contract).
        unsafe { _mm256_add_epi32(a, b) }
    }
    #[inline(always)]
    unsafe fn load_w(p: *const i8) -> __m256i {
        // SAFETY: 32 readable bytes (caller); AVX is enabled.
        unsafe { _mm256_loadu_si256(p as *const __m256i) }
    }
    #[inline(always)]
    unsafe fn load_w_first(p: *const i8, n: usize) -> __m256i {
        let mut b = [0i8; 32];
        // SAFETY: `n < 32` readable bytes (caller) into a zeroed buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), n);
            Self::load_w(b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: __m256i, w: __m256i, x: *const i8) -> __m256i {
        // SAFETY: 32 readable bytes (caller); AVX2 is enabled.
        unsafe {
            let xv = _mm256_loadu_si256(x as *const __m256i);
            let p = _mm256_maddubs_epi16(_mm256_abs_epi8(xv), _mm256_sign_epi8(w, xv));
            _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)))
        }
    }
    #[inline(always)]
    unsafe fn dot_first(acc: __m256i, w: __m256i, x: *const i8, n: usize) -> __m256i {
        let mut b = [0i8; 32];
        // SAFETY: `n < 32` readable bytes (caller) into a zeroed buffer, whose zeros add
        // nothing.
        unsafe {
            std::ptr::copy_nonoverlapping(x, b.as_mut_ptr(), n);
            Self::dot(acc, w, b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn sum(acc: __m256i, _x_sum: i32) -> i32 {
        // SAFETY: AVX2 is enabled (trait contract).
        unsafe {
            let s = _mm_add_epi32(
                _mm256_castsi256_si128(acc),
                _mm256_extracti128_si256::<1>(acc),
            );
            let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
            let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
            _mm_cvtsi128_si32(s)
        }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const i8) {
        // SAFETY: SSE is part of x86_64; prefetches never fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
    }
}

/// AVX-512 VNNI: `vpdpbusd` multiplies 64 `u8 × i8` pairs and adds them in fours to
/// sixteen `i32` lanes (no saturation). It needs one unsigned operand: the weights are
/// offset to `w + 128 ∈ [1, 255]` (`w ^ 0x80` read as `u8`) and `128 · Σx` is subtracted
/// from each row's sum, one `xor` per 64 weights. (The sign trick of [`Maddubs`], `|x|`
/// times the weights negated under the mask of the negative activations — AVX-512 has no
/// `vpsignb` — needs three more instructions per 64 weights and was 8 % slower with the
/// matrix in L2.) The last `cols mod 64` columns are masked loads (the masked-off lanes
/// are zeros: `0 ^ 0x80 = 128` times `x = 0` adds nothing), so there is no scalar tail.
struct Vnni;

impl DotI8 for Vnni {
    type Acc = __m512i;
    type Wv = __m512i;
    const W: usize = 64;
    const MASKED_TAIL: bool = true;
    const PREFETCH: bool = true;

    #[inline(always)]
    unsafe fn zero() -> __m512i {
        // SAFETY: AVX-512F is enabled (trait contract).
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: AVX-512F is enabled (trait contract).
        unsafe { _mm512_add_epi32(a, b) }
    }
    #[inline(always)]
    unsafe fn load_w(p: *const i8) -> __m512i {
        // SAFETY: 64 readable bytes (caller); AVX-512F is enabled.
        unsafe {
            _mm512_xor_si512(
                _mm512_loadu_si512(p as *const __m512i),
                _mm512_set1_epi8(-128),
            )
        }
    }
    #[inline(always)]
    unsafe fn load_w_first(p: *const i8, n: usize) -> __m512i {
        // SAFETY: the mask enables the `n < 64` readable bytes (caller), the masked-off
        // bytes are not accessed; AVX-512F/BW are enabled.
        unsafe {
            let w = _mm512_maskz_loadu_epi8((1u64 << n) - 1, p);
            _mm512_xor_si512(w, _mm512_set1_epi8(-128))
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: __m512i, w: __m512i, x: *const i8) -> __m512i {
        // SAFETY: 64 readable bytes (caller); AVX-512F and VNNI are enabled.
        unsafe { _mm512_dpbusd_epi32(acc, w, _mm512_loadu_si512(x as *const __m512i)) }
    }
    #[inline(always)]
    unsafe fn dot_first(acc: __m512i, w: __m512i, x: *const i8, n: usize) -> __m512i {
        // SAFETY: the mask enables the `n < 64` readable bytes (caller), the masked-off
        // bytes are not accessed (they read as 0: `128 · 0` adds nothing); AVX-512F/BW
        // and VNNI are enabled.
        unsafe { _mm512_dpbusd_epi32(acc, w, _mm512_maskz_loadu_epi8((1u64 << n) - 1, x)) }
    }
    #[inline(always)]
    unsafe fn sum(acc: __m512i, x_sum: i32) -> i32 {
        // SAFETY: AVX-512F is enabled (trait contract).
        unsafe { _mm512_reduce_add_epi32(acc).wrapping_sub(x_sum.wrapping_mul(128)) }
    }
    #[inline(always)]
    unsafe fn prefetch(p: *const i8) {
        // SAFETY: SSE is part of x86_64; prefetches never fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p) }
    }
}

/// Runs an int8 × int8 `job` with [`Maddubs`].
///
/// # Safety
/// AVX2 is available; the job's operands are valid.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn with_maddubs<J: Q8Job>(job: J) {
    // SAFETY: AVX2 is available (caller) and enabled here; operands valid (caller).
    unsafe { job.run::<Maddubs>() }
}

/// Runs an int8 × int8 `job` with [`Vnni`].
///
/// # Safety
/// AVX-512F, AVX-512BW and AVX-512 VNNI are available; the job's operands are valid.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) unsafe fn with_vnni<J: Q8Job>(job: J) {
    // SAFETY: the features are available (caller) and enabled here; operands valid.
    unsafe { job.run::<Vnni>() }
}
