//! WebAssembly SIMD128 kernels of the int8 GEMVs: the widening product
//! ([`WidenSimd128`]) and the int8 × int8 product ([`WidenDot`], widened to 16 bits), run by the drivers of
//! `mod.rs`. SIMD128 is compiled into the whole program, so the entry points need no
//! `#[target_feature]`.

use std::arch::wasm32::*;

use super::{rows_widen, DotI8, Q8Job, Widen16};

/// 16 weights widened to `i16`, `i32`, then `f32` in four 4-lane vectors, multiplied
/// (relaxed SIMD's multiply-add) into two accumulators per row (vectors 0 and 2 into the
/// first, 1 and 3 into the second), as NEON does.
struct WidenSimd128;

impl Widen16 for WidenSimd128 {
    type Acc = [v128; 2];
    type X = [v128; 4];

    #[inline(always)]
    unsafe fn zero() -> [v128; 2] {
        [f32x4_splat(0.0); 2]
    }
    #[inline(always)]
    unsafe fn load_x(x: *const f32) -> [v128; 4] {
        // SAFETY: 16 readable values (caller); no alignment needed.
        unsafe {
            [
                v128_load(x as *const v128),
                v128_load(x.add(4) as *const v128),
                v128_load(x.add(8) as *const v128),
                v128_load(x.add(12) as *const v128),
            ]
        }
    }
    #[inline(always)]
    unsafe fn dot16(a: [v128; 2], w: *const i8, xv: [v128; 4]) -> [v128; 2] {
        // SAFETY: 16 readable bytes (caller).
        let v = unsafe { v128_load(w as *const v128) };
        let lo = i16x8_extend_low_i8x16(v);
        let hi = i16x8_extend_high_i8x16(v);
        let f = [
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(lo)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(lo)),
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(hi)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(hi)),
        ];
        let a0 = f32x4_relaxed_madd(f[0], xv[0], a[0]);
        let a1 = f32x4_relaxed_madd(f[1], xv[1], a[1]);
        [
            f32x4_relaxed_madd(f[2], xv[2], a0),
            f32x4_relaxed_madd(f[3], xv[3], a1),
        ]
    }
    #[inline(always)]
    unsafe fn sum(a: [v128; 2]) -> f32 {
        let s = f32x4_add(a[0], a[1]);
        let s = f32x4_add(s, i32x4_shuffle::<2, 3, 0, 1>(s, s));
        f32x4_extract_lane::<0>(s) + f32x4_extract_lane::<1>(s)
    }
}

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
/// written like [`super::scalar`] (see [`super::rows_widen`]).
///
/// # Safety
/// `q.len() == y.len() * x.len()` and `scales` (and `bias` when given) have `y.len()`
/// elements.
pub(super) unsafe fn rows_simd128(
    q: &[i8],
    scales: &[f32],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    // SAFETY: SIMD128 is compiled in; lengths as required (caller).
    unsafe { rows_widen::<WidenSimd128>(q, scales, x, y, bias, accumulate) }
}

/// The int8 × int8 product: the 16 weights widened to two `i16x8` once per load
/// ([`DotI8::load_w`], shared by every token of a tile), each token's 16 activations
/// widened the same way, then `i32x4.dot_i16x8_s` (pairs of products summed into the `i32`
/// lanes; exact: `|w·x| ≤ 127²`, a pair ≤ 2·127²). On x86-64, V8 makes each
/// `dot_i16x8_s` one `pmaddwd`: about half the instructions per 16 products of
/// `i16x8.extmul_{low,high}_i8x16` followed by `i32x4.extadd_pairwise_i16x8` (measured
/// in OPTIMIZATION_LOG.md §33). Same integers, so the same bits.
struct WidenDot;

/// `v`'s 16 `i8` lanes as two `i16x8` (low half, high half).
#[inline(always)]
fn widen(v: v128) -> [v128; 2] {
    [i16x8_extend_low_i8x16(v), i16x8_extend_high_i8x16(v)]
}

impl DotI8 for WidenDot {
    type Acc = v128;
    type Wv = [v128; 2];
    const W: usize = 16;
    const MASKED_TAIL: bool = false;
    const PREFETCH: bool = false;

    #[inline(always)]
    unsafe fn zero() -> v128 {
        i32x4_splat(0)
    }
    #[inline(always)]
    unsafe fn add(a: v128, b: v128) -> v128 {
        i32x4_add(a, b)
    }
    #[inline(always)]
    unsafe fn load_w(p: *const i8) -> [v128; 2] {
        // SAFETY: 16 readable bytes (caller).
        widen(unsafe { v128_load(p as *const v128) })
    }
    #[inline(always)]
    unsafe fn load_w_first(p: *const i8, n: usize) -> [v128; 2] {
        let mut b = [0i8; 16];
        // SAFETY: `n < 16` readable bytes (caller) into the buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), n);
            Self::load_w(b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn dot(acc: v128, w: [v128; 2], x: *const i8) -> v128 {
        // SAFETY: 16 readable bytes (caller).
        let x = widen(unsafe { v128_load(x as *const v128) });
        let lo = i32x4_dot_i16x8(w[0], x[0]);
        let hi = i32x4_dot_i16x8(w[1], x[1]);
        i32x4_add(acc, i32x4_add(lo, hi))
    }
    #[inline(always)]
    unsafe fn dot_first(acc: v128, w: [v128; 2], x: *const i8, n: usize) -> v128 {
        let mut b = [0i8; 16];
        // SAFETY: `n < 16` readable bytes (caller) into the buffer, then 16 from it.
        unsafe {
            std::ptr::copy_nonoverlapping(x, b.as_mut_ptr(), n);
            Self::dot(acc, w, b.as_ptr())
        }
    }
    #[inline(always)]
    unsafe fn sum(acc: v128, _x_sum: i32) -> i32 {
        let s = i32x4_add(acc, i32x4_shuffle::<2, 3, 0, 1>(acc, acc));
        i32x4_extract_lane::<0>(s).wrapping_add(i32x4_extract_lane::<1>(s))
    }
    #[inline(always)]
    unsafe fn prefetch(_p: *const i8) {}
}

/// Runs an int8 × int8 `job` with [`WidenDot`].
///
/// # Safety
/// The job's operands are valid.
pub(super) unsafe fn with_widen_dot<J: Q8Job>(job: J) {
    // SAFETY: SIMD128 is compiled in; operands valid (caller).
    unsafe { job.run::<WidenDot>() }
}

thread_local! {
    /// The activations of [`tokens_simd128`]'s group of tokens widened to `i16` (reused).
    static WIDE: std::cell::RefCell<Vec<i16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`crate::Isa::gemv_i8_q8_tokens`] on SIMD128 (the text prefill of `--quantize`): the
/// tokens four at a time, each token's values widened to `i16` once for every row (not
/// once per row, as the generic tile's [`WidenDot`] would), then per 16 columns one
/// weight load widened and, per token, two `i32x4.dot_i16x8_s` on the widened values.
/// The same exact integer sums as [`crate::Isa::gemv_i8_q8`] on each token, scaled by
/// the same `finish`: the same bits.
///
/// # Safety
/// `q.len() == scales.len() · cols`, every token of `xs` has `cols` values and
/// `out.len() == xs.len() · scales.len()` (checked by the caller, `run_tokens`).
pub(super) unsafe fn tokens_simd128(
    q: &[i8],
    scales: &[f32],
    cols: usize,
    xs: &[crate::QuantizedVector],
    out: &mut [f32],
) {
    let n16 = cols / 16 * 16;
    WIDE.with(|wide| {
        let mut wide = wide.borrow_mut();
        for (g, group) in xs.chunks(4).enumerate() {
            wide.clear();
            wide.resize(group.len() * n16, 0);
            for (k, x) in group.iter().enumerate() {
                let dst = &mut wide[k * n16..(k + 1) * n16];
                for (d, s) in dst.chunks_exact_mut(16).zip(x.values().chunks_exact(16)) {
                    // SAFETY: 16 readable `i8` and 16 writable `i16` (`chunks_exact`).
                    unsafe {
                        let v = widen(v128_load(s.as_ptr() as *const v128));
                        v128_store(d.as_mut_ptr() as *mut v128, v[0]);
                        v128_store(d.as_mut_ptr().add(8) as *mut v128, v[1]);
                    }
                }
            }
            // SAFETY: `wide` holds `group.len()` tokens of `n16` values; the rest as the
            // caller vouches for.
            unsafe {
                match group.len() {
                    1 => wide_tile::<1>(q, scales, cols, group, &wide, 4 * g, out),
                    2 => wide_tile::<2>(q, scales, cols, group, &wide, 4 * g, out),
                    3 => wide_tile::<3>(q, scales, cols, group, &wide, 4 * g, out),
                    _ => wide_tile::<4>(q, scales, cols, group, &wide, 4 * g, out),
                }
            }
        }
    });
}

/// The `T` tokens `group` (token `t0 + k` of the call; `wide`: their first
/// `cols / 16 · 16` values as `i16`, token after token) against every row of `q`.
///
/// # Safety
/// As [`tokens_simd128`], with `group.len() == T` and `wide.len() == T · (cols / 16 · 16)`.
#[inline(always)]
unsafe fn wide_tile<const T: usize>(
    q: &[i8],
    scales: &[f32],
    cols: usize,
    group: &[crate::QuantizedVector],
    wide: &[i16],
    t0: usize,
    out: &mut [f32],
) {
    let rows = scales.len();
    let n16 = cols / 16 * 16;
    let xp: [*const i16; T] = std::array::from_fn(|k| wide[k * n16..].as_ptr());
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        let mut acc = [i32x4_splat(0); T];
        let mut c = 0;
        while c < n16 {
            // SAFETY: `c + 16 <= n16 <= cols`: 16 weights of row `r`, 16 widened values
            // of every token.
            unsafe {
                let w = widen(v128_load(wp.add(c) as *const v128));
                for (a, x) in acc.iter_mut().zip(xp) {
                    let lo = i32x4_dot_i16x8(w[0], v128_load(x.add(c) as *const v128));
                    let hi = i32x4_dot_i16x8(w[1], v128_load(x.add(c + 8) as *const v128));
                    *a = i32x4_add(*a, i32x4_add(lo, hi));
                }
            }
            c += 16;
        }
        for (k, x) in group.iter().enumerate() {
            let a = acc[k];
            let s = i32x4_add(a, i32x4_shuffle::<2, 3, 0, 1>(a, a));
            let mut s = i32x4_extract_lane::<0>(s).wrapping_add(i32x4_extract_lane::<1>(s));
            for (&w, &v) in row[n16..].iter().zip(&x.values()[n16..]) {
                s += i32::from(w) * i32::from(v);
            }
            let y = &mut out[(t0 + k) * rows..];
            super::finish(s as f32, scales[r] * x.scale(), r, y, None, false);
        }
    }
}
