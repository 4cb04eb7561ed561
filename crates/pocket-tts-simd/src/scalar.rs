//! Portable scalar reference kernels.
//!
//! These define the expected results for the SIMD back-ends: each value is computed in
//! `f64` from the `f32` inputs (transcendentals from the platform's `f64` libm) and
//! rounded once to `f32`, so they are typically correctly rounded. They are also what
//! [`Isa::Scalar`](crate::Isa::Scalar) runs, i.e. the fallback on CPUs without a SIMD
//! back-end. Semantics, shapes and panics are exactly those of the dispatching functions
//! of the same name in the crate root.

use crate::{check_layer_norm, check_rows};

/// Reference for [`crate::softmax_rows`]: row-wise softmax of a `[rows, cols]` buffer in
/// place (maximum taken in `f32`, ignoring NaN; exponentials and sum in `f64`).
///
/// # Panics
/// If `x.len()` is not a multiple of `cols` (or `cols == 0` and `x` is non-empty).
pub fn softmax_rows(x: &mut [f32], cols: usize) {
    check_rows("softmax_rows", x.len(), cols);
    if x.is_empty() {
        return;
    }
    for row in x.chunks_exact_mut(cols) {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let sum: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        for v in row.iter_mut() {
            *v = ((*v as f64 - m).exp() / sum) as f32;
        }
    }
}

/// Reference for [`crate::layer_norm_rows`]: two-pass mean and biased variance in `f64`,
/// `out = (x - mean) / sqrt(var + eps) * weight + bias` per row of a `[rows, cols]` buffer.
///
/// # Panics
/// If `out.len() != x.len()`, if `x.len()` is not a multiple of `cols` (or `cols == 0`
/// and `x` is non-empty), or if `weight`/`bias` is given with a length other than `cols`.
pub fn layer_norm_rows(
    x: &[f32],
    out: &mut [f32],
    cols: usize,
    weight: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
) {
    check_layer_norm(x.len(), out.len(), cols, weight, bias);
    if x.is_empty() {
        return;
    }
    let n = cols as f64;
    for (row, orow) in x.chunks_exact(cols).zip(out.chunks_exact_mut(cols)) {
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / n;
        let var = row
            .iter()
            .map(|&v| {
                let d = v as f64 - mean;
                d * d
            })
            .sum::<f64>()
            / n;
        let rstd = 1.0 / (var + eps as f64).sqrt();
        for (j, (o, &v)) in orow.iter_mut().zip(row).enumerate() {
            let w = weight.map_or(1.0, |w| w[j] as f64);
            let b = bias.map_or(0.0, |b| b[j] as f64);
            *o = ((v as f64 - mean) * rstd * w + b) as f32;
        }
    }
}

/// Reference for [`crate::gelu_tanh`]: PyTorch's tanh-approximation formula
/// `0.5·x·(1 + tanh(u))`, `u = √(2/π)·(x + 0.044715·x³)`, evaluated in `f64` through the
/// exact identity `0.5·(1 + tanh(u)) = 1 / (1 + exp(−2u))`, which avoids the cancellation
/// of `1 + tanh(u)` for negative `x` (the literal form returns 0 for `x ≲ −5.6` even in
/// `f64`, where the true value is still a normal `f32`). Results are identical to the
/// literal formula elsewhere, including NaN → NaN, `+inf` → `+inf`, `−inf` → NaN.
pub fn gelu_tanh(x: &mut [f32]) {
    let k = (2.0 / std::f64::consts::PI).sqrt();
    for v in x.iter_mut() {
        let t = *v as f64;
        let u = k * (t + 0.044715 * t * t * t);
        *v = (t / (1.0 + (-2.0 * u).exp())) as f32;
    }
}

/// Reference for [`crate::elu`]: `x` for `x > 0`, else `alpha·expm1(x)` in `f64`.
pub fn elu(x: &mut [f32], alpha: f32) {
    for v in x.iter_mut() {
        if *v <= 0.0 || v.is_nan() {
            *v = (alpha as f64 * (*v as f64).exp_m1()) as f32;
        }
    }
}

/// Reference for [`crate::silu`]: `x / (1 + exp(−x))` in `f64`.
pub fn silu(x: &mut [f32]) {
    for v in x.iter_mut() {
        let t = *v as f64;
        *v = (t / (1.0 + (-t).exp())) as f32;
    }
}

/// Reference for [`crate::exp`]: `exp` in `f64`, rounded to `f32`.
pub fn exp(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = (*v as f64).exp() as f32;
    }
}
