//! AVX-512F back-end (16 × f32). Only called after `avx512f` was detected.

use core::arch::x86_64::*;

use crate::consts::*;

const LANES: usize = 16;
type V = __m512;

#[inline]
#[target_feature(enable = "avx512f")]
fn splat(a: f32) -> V {
    _mm512_set1_ps(a)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load(s: &[f32]) -> V {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES readable f32s (checked above); unaligned load.
    unsafe { _mm512_loadu_ps(s.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store(s: &mut [f32], v: V) {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES writable f32s (checked above); unaligned store.
    unsafe { _mm512_storeu_ps(s.as_mut_ptr(), v) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load_partial(s: &[f32], fill: f32) -> V {
    assert!(s.len() < LANES);
    let k: __mmask16 = (1u16 << s.len()) - 1;
    // SAFETY: masked-off lanes are not accessed (fault suppression); the first
    // `s.len()` lanes are in bounds.
    unsafe { _mm512_mask_loadu_ps(splat(fill), k, s.as_ptr()) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store_partial(s: &mut [f32], v: V) {
    assert!(s.len() < LANES);
    let k: __mmask16 = (1u16 << s.len()) - 1;
    // SAFETY: only the first `s.len()` lanes are written.
    unsafe { _mm512_mask_storeu_ps(s.as_mut_ptr(), k, v) }
}

#[inline]
#[target_feature(enable = "avx512f")]
fn add(a: V, b: V) -> V {
    _mm512_add_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn sub(a: V, b: V) -> V {
    _mm512_sub_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn mul(a: V, b: V) -> V {
    _mm512_mul_ps(a, b)
}

/// `a·b + c` with one rounding.
#[inline]
#[target_feature(enable = "avx512f")]
fn fmadd(a: V, b: V, c: V) -> V {
    _mm512_fmadd_ps(a, b, c)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn max(a: V, b: V) -> V {
    _mm512_max_ps(a, b)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn hsum(v: V) -> f32 {
    _mm512_reduce_add_ps(v)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn hmax(v: V) -> f32 {
    _mm512_reduce_max_ps(v)
}

/// `min(hi, max(lo, x))`, passing NaN through (vminps/vmaxps return the *second*
/// operand when either is NaN).
#[inline]
#[target_feature(enable = "avx512f")]
fn clamp(x: V, lo: f32, hi: f32) -> V {
    _mm512_min_ps(splat(hi), _mm512_max_ps(splat(lo), x))
}

/// Range reduction shared by `exp_v` and `expm1_nonpos_v`: returns `(n, expm1(r))` with
/// `x = n·ln2 + r`, `|r| ≤ ln2/2`, `n` integral (as f32).
#[inline]
#[target_feature(enable = "avx512f")]
fn reduce(x: V) -> (V, V) {
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(mul(
        x,
        splat(LOG2E),
    ));
    let r = _mm512_fnmadd_ps(n, splat(LN2_HI), x);
    let r = _mm512_fnmadd_ps(n, splat(LN2_LO), r);
    let p = fmadd(splat(P5), r, splat(P4));
    let p = fmadd(p, r, splat(P3));
    let p = fmadd(p, r, splat(P2));
    let p = fmadd(p, r, splat(P1));
    let p = fmadd(p, r, splat(P0));
    (n, fmadd(p, mul(r, r), r))
}

/// Vector `exp`, ≈1 ulp; gradual underflow, +inf on overflow, NaN → NaN.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp_v(x: V) -> V {
    let x = clamp(x, EXP_LO, EXP_HI);
    let (n, em) = reduce(x);
    let p = add(em, splat(1.0));
    // vscalefps computes p·2^n with a single rounding, including gradual underflow into
    // the denormal range and overflow to +inf.
    _mm512_scalef_ps(p, n)
}

/// `expm1(min(x, 0))`: accurate near 0, -1 for very negative inputs, NaN → NaN.
#[inline]
#[target_feature(enable = "avx512f")]
fn expm1_nonpos_v(x: V) -> V {
    let x = clamp(x, EXPM1_LO, 0.0);
    let (n, em) = reduce(x);
    let s = _mm512_scalef_ps(splat(1.0), n);
    // 2^n·(1 + em) − 1 = 2^n·em + (2^n − 1), one rounding in the FMA; 2^n − 1 is exact
    // for n ≥ −24 (below that the result is −1 after rounding anyway).
    fmadd(s, em, sub(s, splat(1.0)))
}

/// `x·σ(z)` where σ is the logistic sigmoid, without cancellation: with
/// `q = σ(−|z|) = e/(1+e)`, `e = exp(−|z|)`, the result is `x·q` for `z < 0` and
/// `x − x·q` for `z ≥ 0`.
#[inline]
#[target_feature(enable = "avx512f")]
fn mul_sigmoid(x: V, z: V) -> V {
    let neg_abs = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(z),
        _mm512_set1_epi32(i32::MIN),
    ));
    let e = exp_v(neg_abs);
    let q = _mm512_div_ps(e, add(e, splat(1.0)));
    let xq = mul(x, q);
    // x − x·q, with x clamped to finite values in the product so that x = ±inf with
    // q = 0 gives ±inf rather than inf − NaN.
    let pos = _mm512_fnmadd_ps(clamp(x, f32::MIN, f32::MAX), q, x);
    // mask_blend picks the second operand where the mask bit (sign of `z`) is set.
    let neg = _mm512_test_epi32_mask(_mm512_castps_si512(z), _mm512_set1_epi32(i32::MIN));
    _mm512_mask_blend_ps(neg, pos, xq)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn gelu_v(x: V) -> V {
    let z = mul(x, fmadd(mul(x, x), splat(GELU_C2), splat(GELU_C1)));
    mul_sigmoid(x, z)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn silu_v(x: V) -> V {
    mul_sigmoid(x, x)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn elu_v(x: V, alpha: V) -> V {
    let neg = mul(alpha, expm1_nonpos_v(x));
    let pos = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(x, splat(0.0));
    _mm512_mask_blend_ps(pos, neg, x)
}

simd_drivers!("avx512f");
