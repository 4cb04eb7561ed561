//! aarch64 NEON back-end (4 × f32). Only called after `neon` was detected (it is part of
//! the baseline of every aarch64 Linux/macOS target).

use core::arch::aarch64::*;

use crate::consts::*;

const LANES: usize = 4;
type V = float32x4_t;

#[inline]
#[target_feature(enable = "neon")]
fn splat(a: f32) -> V {
    vdupq_n_f32(a)
}

#[inline]
#[target_feature(enable = "neon")]
fn load(s: &[f32]) -> V {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES readable f32s (checked above); vld1q has no alignment need.
    unsafe { vld1q_f32(s.as_ptr()) }
}

#[inline]
#[target_feature(enable = "neon")]
fn store(s: &mut [f32], v: V) {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES writable f32s (checked above).
    unsafe { vst1q_f32(s.as_mut_ptr(), v) }
}

buffered_partials!("neon");

#[inline]
#[target_feature(enable = "neon")]
fn add(a: V, b: V) -> V {
    vaddq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn sub(a: V, b: V) -> V {
    vsubq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn mul(a: V, b: V) -> V {
    vmulq_f32(a, b)
}

/// `a·b + c` with one rounding (note `vfmaq_f32(acc, x, y) = acc + x·y`).
#[inline]
#[target_feature(enable = "neon")]
fn fmadd(a: V, b: V, c: V) -> V {
    vfmaq_f32(c, a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn max(a: V, b: V) -> V {
    vmaxq_f32(a, b)
}

#[inline]
#[target_feature(enable = "neon")]
fn hsum(v: V) -> f32 {
    vaddvq_f32(v)
}

#[inline]
#[target_feature(enable = "neon")]
fn hmax(v: V) -> f32 {
    vmaxvq_f32(v)
}

/// `min(hi, max(lo, x))`; NEON `fmax`/`fmin` propagate NaN.
#[inline]
#[target_feature(enable = "neon")]
fn clamp(x: V, lo: f32, hi: f32) -> V {
    vminq_f32(vmaxq_f32(x, splat(lo)), splat(hi))
}

/// Range reduction shared by `exp_v` and `expm1_nonpos_v`: returns `(n, expm1(r))` with
/// `x = n·ln2 + r`, `|r| ≤ ln2/2`, `n` integral (as f32).
#[inline]
#[target_feature(enable = "neon")]
fn reduce(x: V) -> (V, V) {
    let n = vrndnq_f32(mul(x, splat(LOG2E)));
    // vfmsq_f32(a, b, c) = a − b·c
    let r = vfmsq_f32(x, n, splat(LN2_HI));
    let r = vfmsq_f32(r, n, splat(LN2_LO));
    let p = fmadd(splat(P5), r, splat(P4));
    let p = fmadd(p, r, splat(P3));
    let p = fmadd(p, r, splat(P2));
    let p = fmadd(p, r, splat(P1));
    let p = fmadd(p, r, splat(P0));
    (n, fmadd(p, mul(r, r), r))
}

/// `2^k` for integral `k` in [-126, 127] given as i32 lanes.
#[inline]
#[target_feature(enable = "neon")]
fn pow2i(k: int32x4_t) -> V {
    vreinterpretq_f32_s32(vshlq_n_s32::<23>(vaddq_s32(k, vdupq_n_s32(127))))
}

/// Vector `exp`, ≈1 ulp; gradual underflow, +inf on overflow, NaN → NaN.
#[inline]
#[target_feature(enable = "neon")]
fn exp_v(x: V) -> V {
    let x = clamp(x, EXP_LO, EXP_HI);
    let (n, em) = reduce(x);
    let p = add(em, splat(1.0));
    // 2^n = 2^n1 · 2^n2 with n1, n2 in [-75, 64]: both normal, and the second multiply
    // rounds once (correctly into the denormal range, or to +inf). NaN converts to 0.
    let ni = vcvtq_s32_f32(n);
    let n1 = vshrq_n_s32::<1>(ni);
    let n2 = vsubq_s32(ni, n1);
    mul(mul(p, pow2i(n1)), pow2i(n2))
}

/// `expm1(min(x, 0))`: accurate near 0, -1 for very negative inputs, NaN → NaN.
#[inline]
#[target_feature(enable = "neon")]
fn expm1_nonpos_v(x: V) -> V {
    let x = clamp(x, EXPM1_LO, 0.0);
    let (n, em) = reduce(x);
    let s = pow2i(vcvtq_s32_f32(n));
    // 2^n·(1 + em) − 1 = 2^n·em + (2^n − 1), one rounding in the FMA; 2^n − 1 is exact
    // for n ≥ −24 (below that the result is −1 after rounding anyway).
    fmadd(s, em, sub(s, splat(1.0)))
}

/// `x·σ(z)` where σ is the logistic sigmoid, without cancellation: with
/// `q = σ(−|z|) = e/(1+e)`, `e = exp(−|z|)`, the result is `x·q` for `z < 0` and
/// `x − x·q` for `z ≥ 0`.
#[inline]
#[target_feature(enable = "neon")]
fn mul_sigmoid(x: V, z: V) -> V {
    let e = exp_v(vnegq_f32(vabsq_f32(z)));
    let q = vdivq_f32(e, add(e, splat(1.0)));
    let xq = mul(x, q);
    // x − x·q, with x clamped to finite values in the product so that x = ±inf with
    // q = 0 gives ±inf rather than inf − NaN.
    let pos = vfmsq_f32(x, clamp(x, f32::MIN, f32::MAX), q);
    let neg = vcltq_f32(z, splat(0.0));
    // vbslq_f32(mask, a, b) picks `a` where the mask is set.
    vbslq_f32(neg, xq, pos)
}

#[inline]
#[target_feature(enable = "neon")]
fn gelu_v(x: V) -> V {
    let z = mul(x, fmadd(mul(x, x), splat(GELU_C2), splat(GELU_C1)));
    mul_sigmoid(x, z)
}

#[inline]
#[target_feature(enable = "neon")]
fn silu_v(x: V) -> V {
    mul_sigmoid(x, x)
}

#[inline]
#[target_feature(enable = "neon")]
fn elu_v(x: V, alpha: V) -> V {
    let neg = mul(alpha, expm1_nonpos_v(x));
    let pos = vcgtq_f32(x, splat(0.0));
    vbslq_f32(pos, x, neg)
}

simd_drivers!("neon");
