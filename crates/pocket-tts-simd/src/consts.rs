//! Constants shared by the SIMD back-ends' `exp`/`expm1`/sigmoid implementations.
//!
//! `exp(x) = 2^n · exp(r)` with `n = round(x·log2(e))` and `r = x − n·ln2` computed in two
//! Cody–Waite steps (`LN2_HI` has 9 significant bits, so `n·LN2_HI` and `x − n·LN2_HI` are
//! exact for |n| ≤ 150). On `|r| ≤ ln2/2`, `expm1(r) ≈ r + r²·P(r)` with the Cephes `expf`
//! minimax polynomial `P` (degree 5), ≈1 ulp after adding 1.

// Not every back-end uses every constant.
#![allow(dead_code)]

/// Inputs are clamped to `[EXP_LO, EXP_HI]` before range reduction. exp(-104) < 2^-150
/// rounds to 0 and exp(89) > f32::MAX overflows to +inf, so the clamp does not change
/// results; it only keeps `n` in [-150, 128] (NaN is passed through the clamp).
pub(crate) const EXP_HI: f32 = 89.0;
pub(crate) const EXP_LO: f32 = -104.0;
/// Lower clamp for `expm1` on non-positive inputs: expm1(-87) rounds to exactly -1.0 and
/// keeps `n >= -126`, so `2^n` is a normal float.
pub(crate) const EXPM1_LO: f32 = -87.0;

pub(crate) const LOG2E: f32 = std::f32::consts::LOG2_E;
pub(crate) const LN2_HI: f32 = 0.693_359_4; // 0x3F31_8000 = 0.693359375
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;

// Cephes expf polynomial: expm1(r) ≈ r + r²·(P0 + r·(P1 + r·(P2 + r·(P3 + r·(P4 + r·P5))))).
pub(crate) const P0: f32 = 0.5; // Cephes: 5.0000001201e-1, which rounds to 0.5 in f32
pub(crate) const P1: f32 = 1.666_666_5e-1;
pub(crate) const P2: f32 = 4.166_579_6e-2;
pub(crate) const P3: f32 = 8.333_452e-3;
pub(crate) const P4: f32 = 1.398_2e-3;
pub(crate) const P5: f32 = 1.987_569_1e-4;

/// tanh-GELU: `0.5·x·(1 + tanh(u)) = x·σ(2u)` with `2u = x·(GELU_C1 + GELU_C2·x²)`,
/// `GELU_C1 = 2·√(2/π)`, `GELU_C2 = 2·√(2/π)·0.044715`.
pub(crate) const GELU_C1: f32 = 1.595_769;
pub(crate) const GELU_C2: f32 = 0.071_354_82;
