//! aarch64 NEON kernels of the int8 GEMVs: the widening product ([`WidenNeon`]), the
//! int8 × int8 products ([`Smull`], [`Sdot`]), and their `#[target_feature]` entry points,
//! which run the drivers of `mod.rs`.

use std::arch::aarch64::*;

use super::{rows_widen, DotI8, Q8Job, Widen16};

/// NEON: 16 weights widened to `i16`, `i32`, then `f32` in four 4-lane vectors,
/// multiplied into two accumulators per row (vectors 0 and 2 into the first, 1 and 3 into
/// the second).
struct WidenNeon;

impl Widen16 for WidenNeon {
    type Acc = [float32x4_t; 2];
    type X = [float32x4_t; 4];

    #[inline(always)]
    unsafe fn zero() -> [float32x4_t; 2] {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { [vdupq_n_f32(0.0); 2] }
    }
    #[inline(always)]
    unsafe fn load_x(x: *const f32) -> [float32x4_t; 4] {
        // SAFETY: 16 readable values (caller); NEON is enabled.
        unsafe {
            [
                vld1q_f32(x),
                vld1q_f32(x.add(4)),
                vld1q_f32(x.add(8)),
                vld1q_f32(x.add(12)),
            ]
        }
    }
    #[inline(always)]
    unsafe fn dot16(a: [float32x4_t; 2], w: *const i8, xv: [float32x4_t; 4]) -> [float32x4_t; 2] {
        // SAFETY: 16 readable bytes (caller); NEON is enabled.
        unsafe {
            let v = vld1q_s8(w);
            let lo = vmovl_s8(vget_low_s8(v));
            let hi = vmovl_high_s8(v);
            let f = [
                vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))),
                vcvtq_f32_s32(vmovl_high_s16(lo)),
                vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))),
                vcvtq_f32_s32(vmovl_high_s16(hi)),
            ];
            let a0 = vfmaq_f32(a[0], f[0], xv[0]);
            let a1 = vfmaq_f32(a[1], f[1], xv[1]);
            [vfmaq_f32(a0, f[2], xv[2]), vfmaq_f32(a1, f[3], xv[3])]
        }
    }
    #[inline(always)]
    unsafe fn sum(a: [float32x4_t; 2]) -> f32 {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { vaddvq_f32(vaddq_f32(a[0], a[1])) }
    }
}

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
/// written like [`super::scalar`] (see [`super::rows_widen`]).
///
/// # Safety
/// NEON is available; `q.len() == y.len() * x.len()` and `scales` (and `bias` when
/// given) have `y.len()` elements.
#[target_feature(enable = "neon")]
pub(super) unsafe fn rows_neon(
    q: &[i8],
    scales: &[f32],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: NEON is available and enabled here; lengths as required (caller).
    unsafe { rows_widen::<WidenNeon>(q, scales, x, y, bias, accumulate) }
}

/// How the int8 × int8 kernels multiply 16 pairs of `i8` and add the products to the four
/// `i32` lanes of an accumulator. Which lane receives which product depends on the
/// implementation; the kernels only use the sum of the lanes, the exact dot product with
/// either (`|w|, |x| ≤ 127`: no intermediate sum can overflow, see each implementation).
pub(crate) trait Dot16 {
    /// `acc` plus the 16 products `w[i]·x[i]`, spread over its lanes.
    ///
    /// # Safety
    /// The CPU has the implementation's features (and the function this is inlined into
    /// enables them, or the build fails).
    unsafe fn dot16(acc: int32x4_t, w: int8x16_t, x: int8x16_t) -> int32x4_t;
}

/// Base NEON: `smull` and `smlal2` multiply the low and high halves and add them in `i16`
/// (`2 · 127² < 2¹⁵`: no overflow), `sadalp` adds neighbouring pairs into the `i32`
/// lanes. Three instructions per 16 products.
pub(crate) struct Smull;

impl Dot16 for Smull {
    #[inline(always)]
    unsafe fn dot16(acc: int32x4_t, w: int8x16_t, x: int8x16_t) -> int32x4_t {
        // SAFETY: NEON is present (caller); register arithmetic only.
        unsafe {
            let p = vmull_s8(vget_low_s8(w), vget_low_s8(x));
            vpadalq_s16(acc, vmlal_high_s8(p, w, x))
        }
    }
}

/// The dot-product extension (`dotprod`, Armv8.2+, mandatory from Armv8.4): one `sdot`
/// adds four products to each `i32` lane.
pub(crate) struct Sdot;

impl Dot16 for Sdot {
    #[inline(always)]
    unsafe fn dot16(acc: int32x4_t, w: int8x16_t, x: int8x16_t) -> int32x4_t {
        // SAFETY: the CPU has `dotprod` (caller).
        unsafe { sdot(acc, w, x) }
    }
}

/// `sdot acc.4s, a.16b, b.16b`: lane `i` of `acc` plus `Σ_{k<4} a[4i + k]·b[4i + k]`, in
/// `i32` (wrapping; four products of `i8` add at most `4 · 128²` per call). Inline
/// assembly because the intrinsic, `vdotq_s32`, is unstable in Rust's `std::arch`
/// (`stdarch_neon_dotprod`). Always inlined: the assembler accepts `sdot` only in a
/// function compiled with `dotprod` enabled, so a caller without it fails to build.
///
/// # Safety
/// The CPU has the dot-product extension (`is_aarch64_feature_detected!("dotprod")`).
#[inline(always)]
unsafe fn sdot(mut acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
    // SAFETY: `sdot` exists on this CPU (caller); it reads `a` and `b` and reads/writes
    // `acc`, all registers: no memory or stack access, no flags (the options below).
    unsafe {
        std::arch::asm!(
            "sdot {acc:v}.4s, {a:v}.16b, {b:v}.16b",
            acc = inout(vreg) acc,
            a = in(vreg) a,
            b = in(vreg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    acc
}

/// Every [`Dot16`] as a [`DotI8`] of 16 columns: 16 weights and 16 activations loaded,
/// multiplied and added into four `i32` lanes; a scalar tail; no software prefetch
/// (`_prefetch` is unstable in Rust's `std::arch::aarch64`).
impl<D: Dot16> DotI8 for D {
    type Acc = int32x4_t;
    type Wv = int8x16_t;
    const W: usize = 16;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = false;

    #[inline(always)]
    unsafe fn zero() -> int32x4_t {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { vdupq_n_s32(0) }
    }
    #[inline(always)]
    unsafe fn add(a: int32x4_t, b: int32x4_t) -> int32x4_t {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { vaddq_s32(a, b) }
    }
    #[inline(always)]
    unsafe fn load_w(p: *const i8) -> int8x16_t {
        // SAFETY: 16 readable bytes (caller); NEON is enabled.
        unsafe { vld1q_s8(p) }
    }
    #[inline(always)]
    unsafe fn load_w_first(p: *const i8, n: usize) -> int8x16_t {
        let mut b = [0i8; 16];
        // SAFETY: `n < 16` readable bytes (caller) into a zeroed buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), n);
            vld1q_s8(b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: int32x4_t, w: int8x16_t, x: *const i8) -> int32x4_t {
        // SAFETY: 16 readable bytes (caller); `D`'s features are enabled.
        unsafe { D::dot16(acc, w, vld1q_s8(x)) }
    }
    #[inline(always)]
    unsafe fn dot_first(acc: int32x4_t, w: int8x16_t, x: *const i8, n: usize) -> int32x4_t {
        let mut b = [0i8; 16];
        // SAFETY: `n < 16` readable bytes (caller) into a zeroed buffer, whose zeros add
        // nothing.
        unsafe {
            std::ptr::copy_nonoverlapping(x, b.as_mut_ptr(), n);
            Self::dot(acc, w, b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn sum(acc: int32x4_t, _x_sum: i32) -> i32 {
        // SAFETY: NEON is enabled (trait contract).
        unsafe { vaddvq_s32(acc) }
    }
    #[inline(always)]
    unsafe fn prefetch(_p: *const i8) {}
}

/// Runs an int8 × int8 `job` with [`Smull`] (`smull`/`smlal2`/`sadalp`, three
/// instructions per 16 columns).
///
/// # Safety
/// NEON is available; the job's operands are valid.
#[target_feature(enable = "neon")]
pub(super) unsafe fn with_smull<J: Q8Job>(job: J) {
    // SAFETY: NEON is available (caller) and enabled here; operands valid (caller).
    unsafe { job.run::<Smull>() }
}

/// Runs an int8 × int8 `job` with [`Sdot`] (`sdot`, one instruction per 16 columns).
///
/// # Safety
/// NEON and the dot-product extension are available; the job's operands are valid.
#[target_feature(enable = "neon,dotprod")]
pub(super) unsafe fn with_sdot<J: Q8Job>(job: J) {
    // SAFETY: NEON and dotprod are available (caller) and enabled here; operands valid.
    unsafe { job.run::<Sdot>() }
}
