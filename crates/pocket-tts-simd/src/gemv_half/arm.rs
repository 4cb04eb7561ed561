//! The aarch64 kernels of `gemv_half`: NEON dot products and widening of 16-bit values.

use std::arch::aarch64::*;

use super::{convert, rows, HalfDot, Widen};
use crate::arch::Neon;

/// Eight 16-bit values at `p` as two vectors of four `f32`: `fcvtl`/`fcvtl2` for f16,
/// `shll`/`shll2` by 16 for bf16.
///
/// # Safety
/// NEON is available; `p` is valid for reads of 8 `u16`.
#[inline]
#[target_feature(enable = "neon")]
unsafe fn load8<const BF16: bool>(p: *const u16) -> [float32x4_t; 2] {
    // SAFETY: 16 readable bytes (caller).
    let h = unsafe { vld1q_u16(p) };
    if BF16 {
        [
            vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(h))),
            vreinterpretq_f32_u32(vshll_high_n_u16::<16>(h)),
        ]
    } else {
        let f = vreinterpretq_f16_u16(h);
        [vcvt_f32_f16(vget_low_f16(f)), vcvt_high_f32_f16(f)]
    }
}

impl HalfDot for Neon {
    const BLOCK: usize = 16;
    #[inline(always)]
    unsafe fn block<const BF16: bool>(acc: &mut [float32x4_t; 4], w: *const u16, x: *const f32) {
        // SAFETY: 16 elements of both (caller); NEON is enabled (caller).
        unsafe {
            let [a, b] = load8::<BF16>(w);
            let [d, e] = load8::<BF16>(w.add(8));
            acc[0] = vfmaq_f32(acc[0], a, vld1q_f32(x));
            acc[1] = vfmaq_f32(acc[1], b, vld1q_f32(x.add(4)));
            acc[2] = vfmaq_f32(acc[2], d, vld1q_f32(x.add(8)));
            acc[3] = vfmaq_f32(acc[3], e, vld1q_f32(x.add(12)));
        }
    }
    #[inline(always)]
    unsafe fn step8<const BF16: bool>(acc: &mut [float32x4_t; 4], w: *const u16, x: *const f32) {
        // SAFETY: 8 elements of both (caller); NEON is enabled (caller).
        unsafe {
            let [a, b] = load8::<BF16>(w);
            acc[0] = vfmaq_f32(acc[0], a, vld1q_f32(x));
            acc[1] = vfmaq_f32(acc[1], b, vld1q_f32(x.add(4)));
        }
    }
}

/// Dot products of the rows of `bits` (`[y.len(), x.len()]`, f16 or bf16 per `BF16`)
/// with `x`, written like [`super::scalar`] (see [`super::rows`]; no software
/// prefetch, `_prefetch` is unstable on aarch64): four accumulators of 4 columns, 16
/// columns per iteration.
///
/// # Safety
/// NEON is available; `bits.len() == y.len() * x.len()`; `bias`, when given, has
/// `y.len()` elements.
#[target_feature(enable = "neon")]
pub(super) unsafe fn rows_neon<const BF16: bool>(
    bits: &[u16],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: NEON is available and enabled here; lengths as required (caller).
    unsafe { rows::<Neon, BF16>(bits, x, y, bias, accumulate) }
}

/// NEON: 8 values per two `fcvtl` (or `shll`).
struct WidenNeon;

impl Widen for WidenNeon {
    const N: usize = 8;
    #[inline(always)]
    unsafe fn widen<const BF16: bool>(bits: *const u16, out: *mut f32) {
        // SAFETY: 8 values of each (caller); NEON is enabled (caller).
        unsafe {
            let [a, b] = load8::<BF16>(bits);
            vst1q_f32(out, a);
            vst1q_f32(out.add(4), b);
        }
    }
}

/// `out[i] = bits[i]` as `f32` (f16 or bf16 per `bf16`).
///
/// # Safety
/// NEON is available.
///
/// # Panics
/// If `bits.len() != out.len()`.
#[target_feature(enable = "neon")]
pub(super) unsafe fn convert_neon(bits: &[u16], out: &mut [f32], bf16: bool) {
    // SAFETY: NEON is available and enabled here.
    unsafe { convert::<WidenNeon>(bits, out, bf16) }
}
