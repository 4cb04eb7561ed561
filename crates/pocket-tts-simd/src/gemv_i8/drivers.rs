//! The generic drivers of the int8 kernels, written once over each ISA's primitives:
//! [`Widen16`] and [`rows_widen`] for [`super::gemv_i8`] (weights widened to `f32`),
//! [`DotI8`] and [`rows_q8`] for [`super::gemv_i8_q8`] (exact integer dot products).
//! The ISA files (`x86.rs`, `arm.rs`, `wasm.rs`) implement the traits; `tokens.rs` runs
//! [`DotI8`] over several tokens.

use super::*;

/// The widening int8 × `f32` product of one ISA ([`gemv_i8`]): 16 int8 weights widened to
/// `f32` in registers and multiplied with 16 activations. Implemented per ISA and run by
/// [`rows_widen`] inside the ISA's `#[target_feature]` entry point.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
pub(super) trait Widen16 {
    /// A row's accumulator.
    type Acc: Copy;
    /// 16 activations in registers, shared by the rows of a block.
    type X: Copy;

    /// An accumulator of zeros.
    ///
    /// # Safety
    /// The CPU has the ISA's features and the caller enables them.
    unsafe fn zero() -> Self::Acc;
    /// The 16 activations at `x`.
    ///
    /// # Safety
    /// As [`Self::zero`]; `x` is readable for 16 elements.
    unsafe fn load_x(x: *const f32) -> Self::X;
    /// `acc` plus the products of the 16 weights at `w` with `x`.
    ///
    /// # Safety
    /// As [`Self::zero`]; `w` is readable for 16 elements.
    unsafe fn dot16(acc: Self::Acc, w: *const i8, x: Self::X) -> Self::Acc;
    /// The sum of the accumulator's lanes, in the ISA's fixed order.
    ///
    /// # Safety
    /// As [`Self::zero`].
    unsafe fn sum(acc: Self::Acc) -> f32;
}

/// Rows per block of [`rows_widen`]: independent weight streams sharing the loads of `x`.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
pub(super) const WIDEN_ROWS: usize = 4;

/// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and written
/// like [`scalar`]: blocks of 4 rows, 16 columns per [`Widen16::dot16`], then a scalar
/// `mul_add` tail of `cols mod 16` after the reduction.
///
/// # Safety
/// The CPU has `K`'s features and the caller enables them; `q.len() == y.len() *
/// x.len()` and `scales` (and `bias` when given) have `y.len()` elements.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
#[inline(always)]
pub(super) unsafe fn rows_widen<K: Widen16>(
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
    let mut r = 0;
    while r < rows {
        let nr = WIDEN_ROWS.min(rows - r);
        // SAFETY: `K`'s features are enabled (caller).
        let mut acc = [unsafe { K::zero() }; WIDEN_ROWS];
        let mut c = 0;
        while c < n16 {
            // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of `x` and of each of the
            // rows `r..r + nr` of `q` (`r + nr <= rows`); `K`'s features are enabled.
            unsafe {
                let xv = K::load_x(x.as_ptr().add(c));
                for (k, a) in acc.iter_mut().enumerate().take(nr) {
                    *a = K::dot16(*a, q.as_ptr().add((r + k) * cols + c), xv);
                }
            }
            c += 16;
        }
        for (k, a) in acc.iter().enumerate().take(nr) {
            // SAFETY: `K`'s features are enabled (caller).
            let mut s = unsafe { K::sum(*a) };
            let row = &q[(r + k) * cols..(r + k + 1) * cols];
            for j in n16..cols {
                s = f32::from(row[j]).mul_add(x[j], s);
            }
            finish(s, scales[r + k], r + k, y, bias, accumulate);
        }
        r += nr;
    }
}

/// An exact int8 × int8 dot product of one kernel variant ([`gemv_i8_q8`] and
/// [`Isa::gemv_i8_q8_tokens`]): `W` weights times `W` activations added into `i32` lanes.
/// Which lane receives which product is the implementation's; the kernels only use the
/// sum of the lanes, which is exact on every variant (`|w|, |x| ≤ 127`, and a row's sum
/// fits `i32` for `cols < 133 000`; lanes wrap modulo 2³², so the order of the additions
/// does not matter). Implemented per kernel variant and run by [`rows_q8`] (and
/// `tokens::tile`) inside the variant's `#[target_feature]` entry point.
///
/// # Safety of the methods
/// Every method is `unsafe`: the CPU has the variant's features and the caller is
/// compiled with them; pointers are readable for the lengths each method names.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
pub(super) trait DotI8 {
    /// `i32` lanes.
    type Acc: Copy;
    /// `W` weights in registers, as [`Self::dot`] takes them.
    type Wv: Copy;
    /// Weights (and activations) per [`Self::dot`].
    const W: usize;
    /// Whether the last `cols mod W` columns are one [`Self::dot_first`] (masked loads)
    /// rather than a scalar tail.
    const MASKED_TAIL: bool;
    /// Whether the weight stream is prefetched `AHEAD` bytes ahead (x86).
    const PREFETCH: bool;

    /// Lanes of zeros.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn zero() -> Self::Acc;
    /// `a + b`, lane by lane (wrapping).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The `W` weights at `p`.
    ///
    /// # Safety
    /// See the trait; `p` is readable for `W` elements.
    unsafe fn load_w(p: *const i8) -> Self::Wv;
    /// The first `n < W` weights at `p`, the others 0 (only with [`Self::MASKED_TAIL`]).
    ///
    /// # Safety
    /// See the trait; `p` is readable for `n` elements.
    unsafe fn load_w_first(p: *const i8, n: usize) -> Self::Wv;
    /// `acc` plus the `W` products of `w` with the activations at `x`.
    ///
    /// # Safety
    /// See the trait; `x` is readable for `W` elements.
    unsafe fn dot(acc: Self::Acc, w: Self::Wv, x: *const i8) -> Self::Acc;
    /// `acc` plus the products of `w` (from [`Self::load_w_first`]) with the first
    /// `n < W` activations at `x` (only with [`Self::MASKED_TAIL`]).
    ///
    /// # Safety
    /// See the trait; `x` is readable for `n` elements.
    unsafe fn dot_first(acc: Self::Acc, w: Self::Wv, x: *const i8, n: usize) -> Self::Acc;
    /// The sum of the lanes (wrapping), minus the variant's offset correction for
    /// activations summing to `x_sum` (`128 · x_sum` for VNNI's offset weights, else 0).
    ///
    /// # Safety
    /// See the trait.
    unsafe fn sum(acc: Self::Acc, x_sum: i32) -> i32;
    /// A hint to bring the cache line of `p` into L1 (prefetches never fault); nothing
    /// where [`Self::PREFETCH`] is false.
    ///
    /// # Safety
    /// See the trait.
    unsafe fn prefetch(p: *const i8);
}

/// One call of an int8 × int8 kernel written once over [`DotI8`] (its operands and the
/// generic driver), run by [`Q8Kernel::run_job`].
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
pub(super) trait Q8Job {
    /// Runs the driver with `D`.
    ///
    /// # Safety
    /// The CPU has `D`'s features and the caller enables them; the operands are valid
    /// (as the job documents).
    unsafe fn run<D: DotI8>(self);
}

/// The operands of one [`gemv_i8_q8`] call on `y.len()` rows, as [`scalar_q8`] takes
/// them: int8 weights `q` (`[y.len(), x.len()]`) with their row scales, the int8
/// activations `x` with their sum `x_sum = Σ x` and scale, the output and its bias.
/// *Valid*: `q.len() == y.len() · x.len()`, `scales` (and `bias` when given) have
/// `y.len()` elements, and `x_sum` is `Σ x`.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
pub(super) struct Q8Rows<'a> {
    pub(super) q: &'a [i8],
    pub(super) scales: &'a [f32],
    pub(super) x: &'a [i8],
    pub(super) x_sum: i32,
    pub(super) x_scale: f32,
    pub(super) y: &'a mut [f32],
    pub(super) bias: Option<&'a [f32]>,
    pub(super) accumulate: bool,
}

#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
impl Q8Job for Q8Rows<'_> {
    #[inline(always)]
    unsafe fn run<D: DotI8>(self) {
        // SAFETY: as the caller vouches for.
        unsafe { rows_q8::<D>(self) }
    }
}

/// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`,
/// scaled by `scales[r] · x_scale` and written like [`scalar_q8`]. One row at a time, so
/// that the weights are read as one sequential stream (rows are short: a block of rows
/// read side by side was 30 % slower from DRAM on AVX2), four independent accumulators of
/// `W` columns each, with a software prefetch `AHEAD` bytes ahead where
/// [`DotI8::PREFETCH`]; then single `W`-column steps and the tail (masked or scalar). `x`
/// stays in L1.
///
/// # Safety
/// The CPU has `D`'s features and the caller enables them; `x_sum` is `Σ x`;
/// `q.len() == y.len() * x.len()` and `scales` (and `bias` when given) have `y.len()`
/// elements.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "wasm32"
))]
#[inline(always)]
pub(super) unsafe fn rows_q8<D: DotI8>(call: Q8Rows) {
    let Q8Rows {
        q,
        scales,
        x,
        x_sum,
        x_scale,
        y,
        bias,
        accumulate,
    } = call;
    // Software prefetch distance in bytes (of the sequential weight stream): on Zen 3,
    // the FlowLM layers' GEMVs ran at 18.5 GB/s without it, 21.1 (1 KiB ahead),
    // 24.1 (2 KiB) and 21.8 GB/s (4 KiB) with AVX2 (`cargo bench -p pocket-tts-simd
    // --bench kernels -- "gemv f32 vs int8"`).
    const AHEAD: usize = 2048;
    let cols = x.len();
    let rows = y.len();
    debug_assert_eq!(q.len(), rows * cols);
    debug_assert_eq!(x_sum, sum_i8(x), "x_sum is not Σx");
    let w = D::W;
    let (n4, n1) = (cols / (4 * w) * (4 * w), cols / w * w);
    let xp = x.as_ptr();
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        // SAFETY (the primitives, here and below): `D`'s features are enabled (caller).
        let mut acc = [unsafe { D::zero() }; 4];
        let mut c = 0;
        while c < n4 {
            // SAFETY: `c + 4·W <= cols`: elements `c..c + 4·W` of `x` and of row `r`
            // exist; prefetches never fault.
            unsafe {
                if D::PREFETCH {
                    for k in 0..4 * w / 64 {
                        D::prefetch(wp.wrapping_add(c + AHEAD + 64 * k));
                    }
                }
                for (k, a) in acc.iter_mut().enumerate() {
                    *a = D::dot(*a, D::load_w(wp.add(c + k * w)), xp.add(c + k * w));
                }
            }
            c += 4 * w;
        }
        while c < n1 {
            // SAFETY: `c + W <= cols`, as above.
            unsafe { acc[0] = D::dot(acc[0], D::load_w(wp.add(c)), xp.add(c)) };
            c += w;
        }
        if D::MASKED_TAIL && c < cols {
            // SAFETY: the `cols − c < W` elements `c..cols`, as above.
            unsafe {
                let n = cols - c;
                acc[1] = D::dot_first(acc[1], D::load_w_first(wp.add(c), n), xp.add(c), n);
            }
        }
        // The scalar tail (none after a masked one).
        let tail = if D::MASKED_TAIL { cols } else { n1 };
        // SAFETY: as above.
        let mut s = unsafe {
            D::sum(
                D::add(D::add(acc[0], acc[1]), D::add(acc[2], acc[3])),
                x_sum,
            )
        };
        for j in tail..cols {
            s += i32::from(row[j]) * i32::from(x[j]);
        }
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}
