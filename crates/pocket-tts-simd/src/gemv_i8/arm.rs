//! aarch64 NEON kernels of the int8 GEMVs.

use std::arch::aarch64::*;

use super::finish;

/// Rows per block of [`rows_neon`]: independent weight streams sharing the loads of `x`.
const R: usize = 4;

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
/// written like [`super::scalar`]: 16 weights at a time widened to `i16`, `i32`, then
/// `f32` in registers and multiplied with `vfmaq_f32`, blocks of 4 rows.
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
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    let n16 = cols / 16 * 16;
    let xp = x.as_ptr();
    let mut r = 0;
    while r < rows {
        let nr = R.min(rows - r);
        let mut acc = [[vdupq_n_f32(0.0); 2]; R];
        let mut c = 0;
        while c < n16 {
            // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of `x` and of each of the
            // rows `r..r + nr` of `q` (`r + nr <= rows`).
            unsafe {
                let xv = [
                    vld1q_f32(xp.add(c)),
                    vld1q_f32(xp.add(c + 4)),
                    vld1q_f32(xp.add(c + 8)),
                    vld1q_f32(xp.add(c + 12)),
                ];
                for (k, a) in acc.iter_mut().enumerate().take(nr) {
                    let v = vld1q_s8(q.as_ptr().add((r + k) * cols + c));
                    let lo = vmovl_s8(vget_low_s8(v));
                    let hi = vmovl_high_s8(v);
                    let f = [
                        vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))),
                        vcvtq_f32_s32(vmovl_high_s16(lo)),
                        vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))),
                        vcvtq_f32_s32(vmovl_high_s16(hi)),
                    ];
                    a[0] = vfmaq_f32(a[0], f[0], xv[0]);
                    a[1] = vfmaq_f32(a[1], f[1], xv[1]);
                    a[0] = vfmaq_f32(a[0], f[2], xv[2]);
                    a[1] = vfmaq_f32(a[1], f[3], xv[3]);
                }
            }
            c += 16;
        }
        for (k, a) in acc.iter().enumerate().take(nr) {
            let mut s = vaddvq_f32(vaddq_f32(a[0], a[1]));
            let row = &q[(r + k) * cols..(r + k + 1) * cols];
            for j in n16..cols {
                s = f32::from(row[j]).mul_add(x[j], s);
            }
            finish(s, scales[r + k], r + k, y, bias, accumulate);
        }
        r += nr;
    }
}

/// How the int8 × int8 kernels multiply 16 pairs of `i8` and add the products to the four
/// `i32` lanes of an accumulator. Which lane receives which product depends on the
/// implementation; the kernels only use the sum of the lanes, the exact dot product with
/// either (`|w|, |x| ≤ 127`: no intermediate sum can overflow, see each implementation).
pub(super) trait Dot16 {
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
pub(super) struct Smull;

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
pub(super) struct Sdot;

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

/// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`,
/// scaled and written like [`super::scalar_q8`], 16 columns per [`Dot16::dot16`]. One row
/// at a time (one sequential weight stream), four accumulators of 16 columns each, a
/// scalar tail of `cols % 16`. No software prefetch: `_prefetch` is unstable in Rust's
/// `std::arch::aarch64`.
///
/// # Safety
/// The CPU has `D`'s features and the caller enables them; `q.len() == y.len() * x.len()`
/// and `scales` (and `bias` when given) have `y.len()` elements.
#[inline(always)]
unsafe fn rows_q8<D: Dot16>(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    let n64 = cols / 64 * 64;
    let n16 = cols / 16 * 16;
    let xp = x.as_ptr();
    // Elements `c..c + 16` of `x` and of the row at `wp`, added to `acc`.
    macro_rules! dot {
        ($acc:expr, $wp:expr, $c:expr) => {{
            $acc = D::dot16($acc, vld1q_s8($wp.add($c)), vld1q_s8(xp.add($c)));
        }};
    }
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        // SAFETY (here and in the reduction below): NEON is present (`D`'s features
        // include it; caller).
        let mut acc = [unsafe { vdupq_n_s32(0) }; 4];
        let mut c = 0;
        while c < n64 {
            // SAFETY: `c + 64 <= n64 <= cols`: elements `c..c + 64` of `x` and of
            // row `r` of `q` exist; `D`'s features are present (caller).
            unsafe {
                dot!(acc[0], wp, c);
                dot!(acc[1], wp, c + 16);
                dot!(acc[2], wp, c + 32);
                dot!(acc[3], wp, c + 48);
            }
            c += 64;
        }
        while c < n16 {
            // SAFETY: `c + 16 <= n16 <= cols`, as above.
            unsafe { dot!(acc[0], wp, c) };
            c += 16;
        }
        // SAFETY: as above.
        let mut s = unsafe {
            vaddvq_s32(vaddq_s32(
                vaddq_s32(acc[0], acc[1]),
                vaddq_s32(acc[2], acc[3]),
            ))
        };
        for j in n16..cols {
            s += i32::from(row[j]) * i32::from(x[j]);
        }
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}

/// [`rows_q8`] with `smull`/`smlal2`/`sadalp` ([`Smull`]), three instructions per 16
/// columns.
///
/// # Safety
/// NEON is available; `q.len() == y.len() * x.len()` and `scales` (and `bias` when
/// given) have `y.len()` elements.
#[target_feature(enable = "neon")]
pub(super) unsafe fn rows_q8_neon(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: NEON is present and enabled here; lengths as required (caller).
    unsafe { rows_q8::<Smull>(q, scales, x, x_scale, y, bias, accumulate) }
}

/// [`rows_q8`] with `sdot` ([`Sdot`]), one instruction per 16 columns.
///
/// # Safety
/// NEON and the dot-product extension are available; `q.len() == y.len() * x.len()`
/// and `scales` (and `bias` when given) have `y.len()` elements.
#[target_feature(enable = "neon,dotprod")]
pub(super) unsafe fn rows_q8_neondot(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: NEON and dotprod are present and enabled here; lengths as required
    // (caller).
    unsafe { rows_q8::<Sdot>(q, scales, x, x_scale, y, bias, accumulate) }
}
