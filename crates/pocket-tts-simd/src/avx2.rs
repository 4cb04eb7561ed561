//! AVX2 + FMA back-end (8 × f32). Only called after `avx2` and `fma` were detected.

use core::arch::x86_64::*;

use crate::consts::*;

const LANES: usize = 8;
type V = __m256;

#[inline]
#[target_feature(enable = "avx2,fma")]
fn splat(a: f32) -> V {
    _mm256_set1_ps(a)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn load(s: &[f32]) -> V {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES readable f32s (checked above); unaligned load.
    unsafe { _mm256_loadu_ps(s.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn store(s: &mut [f32], v: V) {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES writable f32s (checked above); unaligned store.
    unsafe { _mm256_storeu_ps(s.as_mut_ptr(), v) }
}

buffered_partials!("avx2,fma");

#[inline]
#[target_feature(enable = "avx2,fma")]
fn add(a: V, b: V) -> V {
    _mm256_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn sub(a: V, b: V) -> V {
    _mm256_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul(a: V, b: V) -> V {
    _mm256_mul_ps(a, b)
}

/// `a·b + c` with one rounding.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn fmadd(a: V, b: V, c: V) -> V {
    _mm256_fmadd_ps(a, b, c)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn max(a: V, b: V) -> V {
    _mm256_max_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn hsum(v: V) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
    _mm_cvtss_f32(s)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn hmax(v: V) -> f32 {
    let s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_max_ss(s, _mm_shuffle_ps::<0b01>(s, s));
    _mm_cvtss_f32(s)
}

/// `min(hi, max(lo, x))`, passing NaN through (x86 min/max return the *second* operand
/// when either is NaN).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn clamp(x: V, lo: f32, hi: f32) -> V {
    _mm256_min_ps(splat(hi), _mm256_max_ps(splat(lo), x))
}

/// Range reduction shared by `exp_v` and `expm1_nonpos_v`: returns `(n, expm1(r))` with
/// `x = n·ln2 + r`, `|r| ≤ ln2/2`, `n` integral (as f32).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn reduce(x: V) -> (V, V) {
    let n =
        _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(mul(x, splat(LOG2E)));
    let r = _mm256_fnmadd_ps(n, splat(LN2_HI), x);
    let r = _mm256_fnmadd_ps(n, splat(LN2_LO), r);
    let p = fmadd(splat(P5), r, splat(P4));
    let p = fmadd(p, r, splat(P3));
    let p = fmadd(p, r, splat(P2));
    let p = fmadd(p, r, splat(P1));
    let p = fmadd(p, r, splat(P0));
    (n, fmadd(p, mul(r, r), r))
}

/// `2^k` for integral `k` in [-126, 127] given as i32 lanes.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn pow2i(k: __m256i) -> V {
    _mm256_castsi256_ps(_mm256_slli_epi32::<23>(_mm256_add_epi32(
        k,
        _mm256_set1_epi32(127),
    )))
}

/// Vector `exp`, ≈1 ulp; gradual underflow, +inf on overflow, NaN → NaN.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp_v(x: V) -> V {
    let x = clamp(x, EXP_LO, EXP_HI);
    let (n, em) = reduce(x);
    let p = add(em, splat(1.0));
    // 2^n = 2^n1 · 2^n2 with n1, n2 in [-75, 64]: both normal, and the second multiply
    // rounds once (correctly into the denormal range, or to +inf).
    let ni = _mm256_cvtps_epi32(n);
    let n1 = _mm256_srai_epi32::<1>(ni);
    let n2 = _mm256_sub_epi32(ni, n1);
    mul(mul(p, pow2i(n1)), pow2i(n2))
}

/// `expm1(min(x, 0))`: accurate near 0, -1 for very negative inputs, NaN → NaN.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn expm1_nonpos_v(x: V) -> V {
    let x = clamp(x, EXPM1_LO, 0.0);
    let (n, em) = reduce(x);
    let s = pow2i(_mm256_cvtps_epi32(n));
    // 2^n·(1 + em) − 1 = 2^n·em + (2^n − 1), one rounding in the FMA; 2^n − 1 is exact
    // for n ≥ −24 (below that the result is −1 after rounding anyway).
    fmadd(s, em, sub(s, splat(1.0)))
}

/// `x·σ(z)` where σ is the logistic sigmoid, without cancellation: with
/// `q = σ(−|z|) = e/(1+e)`, `e = exp(−|z|)`, the result is `x·q` for `z < 0` and
/// `x − x·q` for `z ≥ 0`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn mul_sigmoid(x: V, z: V) -> V {
    let neg_abs = _mm256_or_ps(z, splat(-0.0));
    let e = exp_v(neg_abs);
    let q = _mm256_div_ps(e, add(e, splat(1.0)));
    let xq = mul(x, q);
    // x − x·q, with x clamped to finite values in the product so that x = ±inf with
    // q = 0 gives ±inf rather than inf − NaN.
    let pos = _mm256_fnmadd_ps(clamp(x, f32::MIN, f32::MAX), q, x);
    // blendv picks the second operand where the sign bit of `z` is set.
    _mm256_blendv_ps(pos, xq, z)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn gelu_v(x: V) -> V {
    let z = mul(x, fmadd(mul(x, x), splat(GELU_C2), splat(GELU_C1)));
    mul_sigmoid(x, z)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn silu_v(x: V) -> V {
    mul_sigmoid(x, x)
}

#[inline]
#[target_feature(enable = "avx2,fma")]
fn elu_v(x: V, alpha: V) -> V {
    let neg = mul(alpha, expm1_nonpos_v(x));
    let pos = _mm256_cmp_ps::<_CMP_GT_OQ>(x, splat(0.0));
    _mm256_blendv_ps(neg, x, pos)
}

simd_drivers!("avx2,fma");
