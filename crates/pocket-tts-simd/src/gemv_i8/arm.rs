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

/// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`,
/// scaled and written like [`super::scalar_q8`]. Per 16 columns: `smull` and `smlal2`
/// multiply the low and high halves and add them in `i16` (`2 · 127² < 2¹⁵`: no
/// overflow), `sadalp` adds neighbouring pairs into four `i32` lanes. One row at a time
/// (one sequential weight stream), four accumulators of 16 columns each. No software
/// prefetch: `_prefetch` is unstable in Rust's `std::arch::aarch64`.
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
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    let n64 = cols / 64 * 64;
    let n16 = cols / 16 * 16;
    let xp = x.as_ptr();
    // Elements `c..c + 16` of `x` and of the row at `wp`, added to `acc`.
    macro_rules! dot {
        ($acc:expr, $wp:expr, $c:expr) => {{
            let xv = vld1q_s8(xp.add($c));
            let wv = vld1q_s8($wp.add($c));
            let p = vmull_s8(vget_low_s8(wv), vget_low_s8(xv));
            $acc = vpadalq_s16($acc, vmlal_high_s8(p, wv, xv));
        }};
    }
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        let mut acc = [vdupq_n_s32(0); 4];
        let mut c = 0;
        while c < n64 {
            // SAFETY: `c + 64 <= n64 <= cols`: elements `c..c + 64` of `x` and of
            // row `r` of `q` exist.
            unsafe {
                dot!(acc[0], wp, c);
                dot!(acc[1], wp, c + 16);
                dot!(acc[2], wp, c + 32);
                dot!(acc[3], wp, c + 48);
            }
            c += 64;
        }
        while c < n16 {
            // SAFETY: `c + 16 <= n16 <= cols`.
            unsafe { dot!(acc[0], wp, c) };
            c += 16;
        }
        let sum = vaddq_s32(vaddq_s32(acc[0], acc[1]), vaddq_s32(acc[2], acc[3]));
        let mut s = vaddvq_s32(sum);
        for j in n16..cols {
            s += i32::from(row[j]) * i32::from(x[j]);
        }
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}
