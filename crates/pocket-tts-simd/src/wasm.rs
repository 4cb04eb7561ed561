//! WebAssembly SIMD128 back-end (4 × f32) of the element-wise and row kernels: the
//! NEON back-end's arithmetic (`neon.rs`) in SIMD128 operations, with relaxed SIMD's
//! multiply-add (`f32x4.relaxed_madd`, fused where the hardware has FMA). SIMD128 is
//! compiled into the whole program (`.cargo/config.toml`), so every primitive is always
//! available.

use core::arch::wasm32::*;

use crate::consts::*;

const LANES: usize = 4;
type V = v128;

#[inline]
#[target_feature(enable = "simd128")]
fn splat(a: f32) -> V {
    f32x4_splat(a)
}

#[inline]
#[target_feature(enable = "simd128")]
fn load(s: &[f32]) -> V {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES readable f32s (checked above); no alignment need.
    unsafe { v128_load(s.as_ptr() as *const v128) }
}

#[inline]
#[target_feature(enable = "simd128")]
fn store(s: &mut [f32], v: V) {
    assert!(s.len() >= LANES);
    // SAFETY: at least LANES writable f32s (checked above).
    unsafe { v128_store(s.as_mut_ptr() as *mut v128, v) }
}

buffered_partials!("simd128");

#[inline]
#[target_feature(enable = "simd128")]
fn add(a: V, b: V) -> V {
    f32x4_add(a, b)
}

#[inline]
#[target_feature(enable = "simd128")]
fn sub(a: V, b: V) -> V {
    f32x4_sub(a, b)
}

#[inline]
#[target_feature(enable = "simd128")]
fn mul(a: V, b: V) -> V {
    f32x4_mul(a, b)
}

/// `a·b + c` (relaxed SIMD: one rounding where the hardware has FMA).
#[inline]
#[target_feature(enable = "simd128")]
fn fmadd(a: V, b: V, c: V) -> V {
    f32x4_relaxed_madd(a, b, c)
}

/// `a − b·c` (relaxed SIMD's negated multiply-add).
#[inline]
#[target_feature(enable = "simd128")]
fn fmsub_from(a: V, b: V, c: V) -> V {
    f32x4_relaxed_nmadd(b, c, a)
}

/// Lane-wise maximum; WebAssembly's `f32x4.max` propagates NaN.
#[inline]
#[target_feature(enable = "simd128")]
fn max(a: V, b: V) -> V {
    f32x4_max(a, b)
}

#[inline]
#[target_feature(enable = "simd128")]
fn hsum(v: V) -> f32 {
    let s = f32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
    f32x4_extract_lane::<0>(s) + f32x4_extract_lane::<1>(s)
}

#[inline]
#[target_feature(enable = "simd128")]
fn hmax(v: V) -> f32 {
    let m = f32x4_max(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
    let m = f32x4_max(m, i32x4_shuffle::<1, 0, 3, 2>(m, m));
    f32x4_extract_lane::<0>(m)
}

/// `min(hi, max(lo, x))`; `f32x4.min`/`max` propagate NaN.
#[inline]
#[target_feature(enable = "simd128")]
fn clamp(x: V, lo: f32, hi: f32) -> V {
    f32x4_min(f32x4_max(x, splat(lo)), splat(hi))
}

/// Range reduction shared by `exp_v` and `expm1_nonpos_v`: returns `(n, expm1(r))` with
/// `x = n·ln2 + r`, `|r| ≤ ln2/2`, `n` integral (as f32).
#[inline]
#[target_feature(enable = "simd128")]
fn reduce(x: V) -> (V, V) {
    let n = f32x4_nearest(mul(x, splat(LOG2E)));
    let r = fmsub_from(x, n, splat(LN2_HI));
    let r = fmsub_from(r, n, splat(LN2_LO));
    let p = fmadd(splat(P5), r, splat(P4));
    let p = fmadd(p, r, splat(P3));
    let p = fmadd(p, r, splat(P2));
    let p = fmadd(p, r, splat(P1));
    let p = fmadd(p, r, splat(P0));
    (n, fmadd(p, mul(r, r), r))
}

/// `2^k` for integral `k` in [-126, 127] given as i32 lanes.
#[inline]
#[target_feature(enable = "simd128")]
fn pow2i(k: V) -> V {
    i32x4_shl(i32x4_add(k, i32x4_splat(127)), 23)
}

/// Vector `exp`, ≈1 ulp; gradual underflow, +inf on overflow, NaN → NaN.
#[inline]
#[target_feature(enable = "simd128")]
fn exp_v(x: V) -> V {
    let x = clamp(x, EXP_LO, EXP_HI);
    let (n, em) = reduce(x);
    let p = add(em, splat(1.0));
    // 2^n = 2^n1 · 2^n2 with n1, n2 in [-75, 64]: both normal, and the second multiply
    // rounds once (correctly into the denormal range, or to +inf). NaN converts to 0.
    let ni = i32x4_trunc_sat_f32x4(n);
    let n1 = i32x4_shr(ni, 1);
    let n2 = i32x4_sub(ni, n1);
    mul(mul(p, pow2i(n1)), pow2i(n2))
}

/// `expm1(min(x, 0))`: accurate near 0, -1 for very negative inputs, NaN → NaN.
#[inline]
#[target_feature(enable = "simd128")]
fn expm1_nonpos_v(x: V) -> V {
    let x = clamp(x, EXPM1_LO, 0.0);
    let (n, em) = reduce(x);
    let s = pow2i(i32x4_trunc_sat_f32x4(n));
    // 2^n·(1 + em) − 1 = 2^n·em + (2^n − 1).
    fmadd(s, em, sub(s, splat(1.0)))
}

/// `x·σ(z)` without cancellation: with `q = σ(−|z|) = e/(1+e)`, `e = exp(−|z|)`, the
/// result is `x·q` for `z < 0` and `x − x·q` for `z ≥ 0`.
#[inline]
#[target_feature(enable = "simd128")]
fn mul_sigmoid(x: V, z: V) -> V {
    let e = exp_v(f32x4_neg(f32x4_abs(z)));
    let q = f32x4_div(e, add(e, splat(1.0)));
    let xq = mul(x, q);
    // x − x·q, with x clamped to finite values in the product so that x = ±inf with
    // q = 0 gives ±inf rather than inf − NaN.
    let pos = fmsub_from(x, clamp(x, f32::MIN, f32::MAX), q);
    let neg = f32x4_lt(z, splat(0.0));
    v128_bitselect(xq, pos, neg)
}

#[inline]
#[target_feature(enable = "simd128")]
fn gelu_v(x: V) -> V {
    let z = mul(x, fmadd(mul(x, x), splat(GELU_C2), splat(GELU_C1)));
    mul_sigmoid(x, z)
}

#[inline]
#[target_feature(enable = "simd128")]
fn silu_v(x: V) -> V {
    mul_sigmoid(x, x)
}

#[inline]
#[target_feature(enable = "simd128")]
fn elu_v(x: V, alpha: V) -> V {
    let neg = mul(alpha, expm1_nonpos_v(x));
    let pos = f32x4_gt(x, splat(0.0));
    v128_bitselect(x, neg, pos)
}

simd_drivers!("simd128");
