//! aarch64 NEON kernels of the 4-bit GEMV: eight blocks per step; per block the nibbles
//! become signed `u − 8` and two [`Dot16`] (`sdot`, or `smull`/`smlal2`/`sadalp`) give
//! four `i32` lanes whose sum is the block's exact dot product; pairwise additions make
//! two vectors of the eight block sums, converted to `f32` and fused-multiply-added with
//! the block scales into the eight accumulators (block `b` in lane `b mod 8`, the fixed
//! order of `mod.rs`).

use std::arch::aarch64::*;

use super::{BLOCK_BYTES, LANES, Q4_BLOCK};
use crate::gemv_i8::arm::{Dot16, Sdot, Smull};

/// The blocks `0..8·⌊n/8⌋` of one row (`nib`: `n · 16` bytes, `sc`: `n` bf16 scales,
/// `xq`: `32 n` activations) into `acc`; returns the blocks done.
///
/// # Safety
/// NEON and `D`'s features are enabled in the caller; the lengths are as stated.
#[inline(always)]
unsafe fn row<D: Dot16>(nib: &[u8], sc: &[u8], xq: &[i8], acc: &mut [f32; LANES]) -> usize {
    let n = sc.len() / 2;
    let groups = n / LANES;
    debug_assert!(nib.len() == n * BLOCK_BYTES && xq.len() == n * Q4_BLOCK);
    // SAFETY: NEON and `D`'s features are enabled (caller); group `g` reads bytes
    // `g·128..(g + 1)·128` of `nib`, `g·16..(g + 1)·16` of `sc` and values
    // `g·256..(g + 1)·256` of `xq`, `g < n / 8`.
    unsafe {
        let mask = vdupq_n_u8(0x0F);
        let eight = vdupq_n_s8(8);
        let mut a0 = vld1q_f32(acc.as_ptr());
        let mut a1 = vld1q_f32(acc.as_ptr().add(4));
        for g in 0..groups {
            let np = nib.as_ptr().add(g * LANES * BLOCK_BYTES);
            let xp = xq.as_ptr().add(g * LANES * Q4_BLOCK);
            let mut v = [vdupq_n_s32(0); LANES];
            for (k, vk) in v.iter_mut().enumerate() {
                let b = vld1q_u8(np.add(k * BLOCK_BYTES));
                let lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(b, mask)), eight);
                let hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8::<4>(b)), eight);
                let x = xp.add(k * Q4_BLOCK);
                let s = D::dot16(vdupq_n_s32(0), lo, vld1q_s8(x));
                *vk = D::dot16(s, hi, vld1q_s8(x.add(BLOCK_BYTES)));
            }
            let s0 = vpaddq_s32(vpaddq_s32(v[0], v[1]), vpaddq_s32(v[2], v[3]));
            let s1 = vpaddq_s32(vpaddq_s32(v[4], v[5]), vpaddq_s32(v[6], v[7]));
            let d = vld1q_u16(sc.as_ptr().add(g * LANES * 2) as *const u16);
            let d0 = vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(d)));
            let d1 = vreinterpretq_f32_u32(vshll_high_n_u16::<16>(d));
            a0 = vfmaq_f32(a0, vcvtq_f32_s32(s0), d0);
            a1 = vfmaq_f32(a1, vcvtq_f32_s32(s1), d1);
        }
        vst1q_f32(acc.as_mut_ptr(), a0);
        vst1q_f32(acc.as_mut_ptr().add(4), a1);
    }
    groups * LANES
}

/// [`row`] with [`Smull`].
///
/// # Safety
/// NEON is available; the lengths are as [`row`] states.
#[target_feature(enable = "neon")]
pub(super) unsafe fn row_smull(nib: &[u8], sc: &[u8], xq: &[i8], acc: &mut [f32; LANES]) -> usize {
    // SAFETY: NEON is enabled here; lengths as stated (caller).
    unsafe { row::<Smull>(nib, sc, xq, acc) }
}

/// [`row`] with [`Sdot`].
///
/// # Safety
/// NEON and the dot-product extension are available; the lengths are as [`row`] states.
#[target_feature(enable = "neon,dotprod")]
pub(super) unsafe fn row_sdot(nib: &[u8], sc: &[u8], xq: &[i8], acc: &mut [f32; LANES]) -> usize {
    // SAFETY: NEON and dotprod are enabled here; lengths as stated (caller).
    unsafe { row::<Sdot>(nib, sc, xq, acc) }
}
