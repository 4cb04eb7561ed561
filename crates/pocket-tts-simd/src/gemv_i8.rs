//! Int8 weights for the memory-bound GEMVs (groundwork of `--quantize`, reference:
//! `pocket_tts/quantization.py`, which quantizes the FlowLM transformer's attention and FFN
//! linears to int8 with per-output-channel scales).
//!
//! [`QuantizedRows`] stores a row-major `[rows, cols]` matrix as `i8` with one `f32` scale
//! per row (symmetric: `w ≈ q · scale`, `scale = max|w_row| / 127`), a quarter of the f32
//! bytes. [`gemv_i8`] computes `y = (q · scale)·x` with `f32` activations: the weights are
//! widened to `f32` in registers and multiplied in `f32`, so the only error against the
//! f32 GEMV is the weights' rounding to int8 (at most `scale / 2` per weight).
//!
//! [`gemv_i8_q8`] also quantizes the activations: [`QuantizedVector`] holds `x` as `i8` with
//! one symmetric scale (`x ≈ q · scale`, per token, as torch's dynamic quantization
//! does per tensor), so the dot products are exact integer sums (`maddubs`/`madd` on
//! AVX2), a quarter of the instructions of the widening kernel: the product is then bound
//! by memory, not by the conversions. The error adds the activations' rounding (at most
//! `scale / 2` per value) to the weights'.
//!
//! Kernels: [`gemv_i8`] has AVX2 (also used on AVX-512 hosts), NEON and scalar ones;
//! [`gemv_i8_q8`] has AVX2 (`maddubs`/`madd`), AVX-512 VNNI (`vpdpbusd`, on
//! [`Isa::Avx512`] hosts with `avx512vnni`, else AVX2), NEON and scalar ones, all giving the same
//! bits (exact integer sums). On NEON, [`gemv_i8`] widens to `f32` and uses `vfmaq_f32`;
//! [`gemv_i8_q8`] uses `smull`/`smlal2`/`sadalp` (not the dot-product extension's `sdot`,
//! whose intrinsic is unstable in Rust). Tests compare every available ISA with an `f64`
//! sum.

use crate::{detected, Isa};

/// `v` rounded half away from zero (as `f32::round`) and clamped to `[-127, 127]`, for
/// `|v|` up to about 128 (the quantizers' range). Truncation and a compare instead of
/// `round`, which without SSE4.1 in the baseline is a libm call per value (3 % of a
/// quantized FlowLM step); LLVM vectorizes this form.
#[inline(always)]
fn to_i8(v: f32) -> i8 {
    let t = v as i32;
    let frac = v - t as f32;
    let r = t + i32::from(frac >= 0.5) - i32::from(frac <= -0.5);
    r.clamp(-127, 127) as i8
}

/// A row-major `[rows, cols]` matrix quantized to `i8` per row (symmetric, one `f32` scale
/// per row: `w[r][c] ≈ q[r][c] · scales[r]`).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedRows {
    q: Vec<i8>,
    scales: Vec<f32>,
    rows: usize,
    cols: usize,
}

impl QuantizedRows {
    /// Quantizes `w` (`[rows, cols]`, row-major): per row, `scale = max|w| / 127` and
    /// `q = round(w / scale)` (ties away from zero), clamped to `[-127, 127]`. A row of
    /// zeros gets scale 0. Non-finite weights are not supported (checkpoints are checked
    /// at load).
    ///
    /// # Panics
    /// If `w.len() != rows * cols`.
    pub fn quantize(w: &[f32], rows: usize, cols: usize) -> Self {
        assert_eq!(
            w.len(),
            rows * cols,
            "QuantizedRows::quantize: w has {} elements, expected {rows} × {cols}",
            w.len()
        );
        let mut q = vec![0i8; w.len()];
        let mut scales = vec![0f32; rows];
        for r in 0..rows {
            let row = &w[r * cols..(r + 1) * cols];
            let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
            if max == 0.0 {
                continue;
            }
            let scale = max / 127.0;
            scales[r] = scale;
            let inv = 1.0 / scale;
            for (o, v) in q[r * cols..(r + 1) * cols].iter_mut().zip(row) {
                *o = to_i8(v * inv);
            }
        }
        Self {
            q,
            scales,
            rows,
            cols,
        }
    }

    /// Rows (outputs).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns (inputs).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The quantized values, row-major `[rows, cols]`.
    pub fn values(&self) -> &[i8] {
        &self.q
    }

    /// The per-row scales `[rows]`.
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }

    /// Bytes held (values and scales).
    pub fn bytes(&self) -> usize {
        self.q.len() + 4 * self.scales.len()
    }

    /// The dequantized matrix `q · scale`, row-major (for tests and error reports).
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.q.len());
        for r in 0..self.rows {
            let s = self.scales[r];
            out.extend(
                self.q[r * self.cols..(r + 1) * self.cols]
                    .iter()
                    .map(|&v| f32::from(v) * s),
            );
        }
        out
    }
}

/// A vector quantized to `i8` with one symmetric scale (`x[i] ≈ q[i] · scale`,
/// `scale = max|x| / 127`), the activations of [`gemv_i8_q8`]. Reusable: [`Self::quantize`]
/// allocates only when the vector is longer than any before.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuantizedVector {
    q: Vec<i8>,
    scale: f32,
    /// `Σ q`, kept for the kernels that offset the weights (VNNI).
    sum: i32,
}

/// `Σ v` (at most 2²⁴ values of magnitude ≤ 128 fit an `i32` exactly).
fn sum_i8(v: &[i8]) -> i32 {
    v.iter().map(|&x| i32::from(x)).sum()
}

impl QuantizedVector {
    /// An empty vector with room for `len` values.
    pub fn with_capacity(len: usize) -> Self {
        Self {
            q: Vec::with_capacity(len),
            scale: 0.0,
            sum: 0,
        }
    }

    /// Quantizes `x` into `self` (round half away from zero, clamped to `[-127, 127]`;
    /// all zeros give scale 0). Non-finite values are not supported.
    pub fn quantize(&mut self, x: &[f32]) {
        let max = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        self.q.clear();
        if max == 0.0 {
            self.scale = 0.0;
            self.sum = 0;
            self.q.resize(x.len(), 0);
            return;
        }
        self.scale = max / 127.0;
        let inv = 1.0 / self.scale;
        self.q.extend(x.iter().map(|v| to_i8(v * inv)));
        self.sum = sum_i8(&self.q);
    }

    /// The quantized values.
    pub fn values(&self) -> &[i8] {
        &self.q
    }

    /// The scale.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// `Σ values`.
    pub(crate) fn sum(&self) -> i32 {
        self.sum
    }

    /// Length.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// `y = W·x + bias` (or `y += …` with `accumulate`) for int8 `W` and int8 `x` (see the
/// module docs), rows `0..y.len()` of `w`, on the best ISA of this CPU.
///
/// # Panics
/// If `x.len() != w.cols()`, `y.len() > w.rows()`, or `bias` is shorter than `y`.
pub fn gemv_i8_q8(
    w: &QuantizedRows,
    x: &QuantizedVector,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    detected().gemv_i8_q8(w, 0, x, y, bias, accumulate)
}

/// `y = W·x + bias` (or `y += …` with `accumulate`) for int8 `W` (see the module docs),
/// rows `0..y.len()` of `w`, on the best ISA of this CPU.
///
/// # Panics
/// If `x.len() != w.cols()`, `y.len() > w.rows()`, or `bias` is shorter than `y`.
pub fn gemv_i8(
    w: &QuantizedRows,
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    detected().gemv_i8(w, 0, x, y, bias, accumulate)
}

impl Isa {
    /// [`gemv_i8`] on this ISA, for the rows `first..first + y.len()` of `w` (so that a
    /// caller can split the rows over threads); `bias`, when given, holds the biases of
    /// those rows.
    ///
    /// # Panics
    /// If `x.len() != w.cols()`, `first + y.len() > w.rows()`, or `bias` has a length other
    /// than `y.len()`.
    pub fn gemv_i8(
        self,
        w: &QuantizedRows,
        first: usize,
        x: &[f32],
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        let cols = w.cols;
        crate::check_gemv_rows("gemv_i8", (w.rows, cols), first, x.len(), y.len(), bias);
        let q = &w.q[first * cols..(first + y.len()) * cols];
        let scales = &w.scales[first..first + y.len()];
        match self.resolve() {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX2 and FMA are present (an AVX-512 host has them too); `q` holds
            // `y.len()` rows of `cols` values, `x` has `cols` elements (checked above).
            Isa::Avx2 | Isa::Avx512 => unsafe { x86::rows_avx2(q, scales, x, y, bias, accumulate) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: NEON is present (resolved); `q` holds `y.len()` rows of `cols`
            // values, `x` has `cols` elements (checked above).
            Isa::Neon => unsafe { arm::rows_neon(q, scales, x, y, bias, accumulate) },
            _ => scalar(q, scales, x, y, bias, accumulate),
        }
    }
}

impl Isa {
    /// [`gemv_i8_q8`] on this ISA, for the rows `first..first + y.len()` of `w`; `bias`,
    /// when given, holds the biases of those rows.
    ///
    /// # Panics
    /// If `x.len() != w.cols()`, `first + y.len() > w.rows()`, or `bias` has a length other
    /// than `y.len()`.
    pub fn gemv_i8_q8(
        self,
        w: &QuantizedRows,
        first: usize,
        x: &QuantizedVector,
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        let cols = w.cols;
        crate::check_gemv_rows("gemv_i8_q8", (w.rows, cols), first, x.len(), y.len(), bias);
        let q = &w.q[first * cols..(first + y.len()) * cols];
        let scales = &w.scales[first..first + y.len()];
        Q8Kernel::for_isa(self.resolve()).run(q, scales, &x.q, x.sum, x.scale, y, bias, accumulate);
    }
}

/// The kernels of [`gemv_i8_q8`]; [`Q8Kernel::for_isa`] picks one for a resolved [`Isa`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Q8Kernel {
    Scalar,
    /// AVX2 `maddubs`/`madd`, 32 columns per instruction.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 VNNI `vpdpbusd`: the `u8 × i8` products summed in fours into `i32` lanes in
    /// one instruction.
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
    /// NEON `smull`/`smlal` into `i16` pairs, `sadalp` into `i32` lanes, 16 columns per
    /// three instructions. (`sdot`, `vdotq_s32`, is still unstable in Rust's
    /// `std::arch`, so the dot-product extension is not used.)
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Q8Kernel {
    /// The kernel for `isa`, which must have been resolved (its features present).
    /// AVX-512 hosts use VNNI when the CPU has it (`avx512vnni` + `avx512bw`), else AVX2
    /// (detected once per process). There is no AVX-512BW kernel (`maddubs`/`madd` on 512
    /// bits) for AVX-512 hosts without VNNI: on Zen 4 it was 6 % slower than AVX2 with the
    /// matrix in L2 and no faster from DRAM.
    fn for_isa(isa: Isa) -> Q8Kernel {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Q8Kernel::Avx2,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                static AVX512: std::sync::OnceLock<Q8Kernel> = std::sync::OnceLock::new();
                *AVX512.get_or_init(|| {
                    if Q8Kernel::Avx512Vnni.is_supported() {
                        Q8Kernel::Avx512Vnni
                    } else {
                        Q8Kernel::Avx2
                    }
                })
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => Q8Kernel::Neon,
            _ => Q8Kernel::Scalar,
        }
    }

    /// Whether this CPU has the kernel's features.
    fn is_supported(self) -> bool {
        match self {
            Q8Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx512Vnni => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::Neon => std::arch::is_aarch64_feature_detected!("neon"),
        }
    }

    /// Runs the kernel on `y.len()` rows of `q` (see [`scalar_q8`]).
    ///
    /// # Panics
    /// If the CPU lacks the kernel's features (never for a kernel from [`Self::for_isa`]
    /// of a resolved ISA), or the lengths disagree: `q.len() != y.len() * x.len()`, or
    /// `scales` (or `bias`) shorter than `y`.
    #[allow(clippy::too_many_arguments)]
    fn run(
        self,
        q: &[i8],
        scales: &[f32],
        x: &[i8],
        x_sum: i32,
        x_scale: f32,
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        assert!(self.is_supported(), "{self:?} is not supported by this CPU");
        assert_eq!(
            q.len(),
            y.len() * x.len(),
            "gemv_i8_q8: weights and y disagree"
        );
        assert!(scales.len() >= y.len() && bias.is_none_or(|b| b.len() >= y.len()));
        match self {
            Q8Kernel::Scalar => scalar_q8(q, scales, x, x_scale, y, bias, accumulate),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX2 is present (checked above); lengths checked above.
            Q8Kernel::Avx2 => unsafe {
                x86::rows_q8_avx2(q, scales, x, x_scale, y, bias, accumulate)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX-512F, BW and VNNI are present (checked above); lengths checked
            // above.
            Q8Kernel::Avx512Vnni => unsafe {
                x86::rows_q8_avx512vnni(q, scales, x, x_sum, x_scale, y, bias, accumulate)
            },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: NEON is present (checked above); lengths checked above.
            Q8Kernel::Neon => unsafe {
                arm::rows_q8_neon(q, scales, x, x_scale, y, bias, accumulate)
            },
        }
    }
}

/// The portable kernel of [`gemv_i8_q8`]: exact `i32` dot products.
fn scalar_q8(
    q: &[i8],
    scales: &[f32],
    x: &[i8],
    x_scale: f32,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    for r in 0..y.len() {
        let row = &q[r * cols..(r + 1) * cols];
        let s: i32 = row
            .iter()
            .zip(x)
            .map(|(&a, &b)| i32::from(a) * i32::from(b))
            .sum();
        finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
    }
}

/// Writes the finished dot product `s` of row `r`: `· scale`, `+ bias`, then `y + …`.
#[inline(always)]
fn finish(s: f32, scale: f32, r: usize, y: &mut [f32], bias: Option<&[f32]>, accumulate: bool) {
    let v = s * scale + bias.map_or(0.0, |b| b[r]);
    y[r] = if accumulate { y[r] + v } else { v };
}

/// The portable kernel: 4 partial sums per row.
fn scalar(
    q: &[i8],
    scales: &[f32],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    for r in 0..y.len() {
        let row = &q[r * cols..(r + 1) * cols];
        let mut acc = [0f32; 4];
        let mut rc = row.chunks_exact(4);
        let mut xc = x.chunks_exact(4);
        for (w4, x4) in (&mut rc).zip(&mut xc) {
            for k in 0..4 {
                acc[k] = f32::from(w4[k]).mul_add(x4[k], acc[k]);
            }
        }
        let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for (w, x) in rc.remainder().iter().zip(xc.remainder()) {
            s = f32::from(*w).mul_add(*x, s);
        }
        finish(s, scales[r], r, y, bias, accumulate);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::finish;
    use crate::gemv::x86::hsum256;

    /// Rows per block: independent weight streams read together.
    const R: usize = 4;

    /// Dot products of rows of int8 `q` (`[y.len(), x.len()]`) with `x`, scaled and
    /// written like [`super::scalar`].
    ///
    /// # Safety
    /// AVX2 and FMA are available; `q.len() == y.len() * x.len()` and `scales` (and `bias`
    /// when given) have `y.len()` elements.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn rows_avx2(
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
            let nr = R.min(rows - r);
            let mut acc = [_mm256_setzero_ps(); R];
            let mut c = 0;
            while c < n16 {
                // SAFETY: `c + 16 <= cols`: elements `c..c + 16` of `x` and of each of the
                // rows `r..r + nr` of `q` (`r + nr <= rows`).
                unsafe {
                    let x0 = _mm256_loadu_ps(x.as_ptr().add(c));
                    let x1 = _mm256_loadu_ps(x.as_ptr().add(c + 8));
                    for (k, a) in acc.iter_mut().enumerate().take(nr) {
                        let p = q.as_ptr().add((r + k) * cols + c) as *const __m128i;
                        let v = _mm_loadu_si128(p);
                        let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
                        let hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(v)));
                        *a = _mm256_fmadd_ps(lo, x0, *a);
                        *a = _mm256_fmadd_ps(hi, x1, *a);
                    }
                }
                c += 16;
            }
            for (k, a) in acc.iter().enumerate().take(nr) {
                let mut s = hsum256(*a);
                let row = &q[(r + k) * cols..(r + k + 1) * cols];
                for j in n16..cols {
                    s = f32::from(row[j]).mul_add(x[j], s);
                }
                finish(s, scales[r + k], r + k, y, bias, accumulate);
            }
            r += nr;
        }
    }

    /// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`
    /// (`|x| ≤ 127`, `|q| ≤ 127`, so a `maddubs` pair sum cannot saturate), scaled by
    /// `scales[r] · x_scale` and written like [`super::scalar_q8`]. One row at a time, so
    /// that the weights are read as one sequential stream (rows are short: a block of
    /// rows read side by side was 30 % slower from DRAM) with a software prefetch
    /// `AHEAD` bytes ahead, and four independent
    /// accumulators of 32 columns each; `x` stays in L1.
    ///
    /// # Safety
    /// AVX2 is available; `q.len() == y.len() * x.len()` and `scales` (and `bias` when
    /// given) have `y.len()` elements.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rows_q8_avx2(
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
        // Software prefetch distance in bytes (of the sequential weight stream): on Zen 3,
        // the FlowLM layers' GEMVs ran at 18.5 GB/s without it, 21.1 (1 KiB ahead),
        // 24.1 (2 KiB) and 21.8 GB/s (4 KiB) (`cargo bench -p pocket-tts-simd --bench
        // kernels -- "gemv f32 vs int8"`). Prefetches never fault.
        const AHEAD: usize = 2048;
        let n128 = cols / 128 * 128;
        let n32 = cols / 32 * 32;
        let ones = _mm256_set1_epi16(1);
        let xp = x.as_ptr();
        // Elements `c..c + 32` of `x` and of the row at `wp`, multiplied and summed in
        // pairs, then in fours (eight `i32` lanes).
        macro_rules! dot {
            ($wp:expr, $c:expr) => {{
                let xv = _mm256_loadu_si256(xp.add($c) as *const __m256i);
                let wv = _mm256_sign_epi8(_mm256_loadu_si256($wp.add($c) as *const __m256i), xv);
                _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(xv), wv), ones)
            }};
        }
        for r in 0..rows {
            let row = &q[r * cols..(r + 1) * cols];
            let wp = row.as_ptr();
            let mut acc = [_mm256_setzero_si256(); 4];
            let mut c = 0;
            while c < n128 {
                // SAFETY: `c + 128 <= n128 <= cols`: elements `c..c + 128` of `x` and of
                // row `r` of `q` exist.
                unsafe {
                    _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD));
                    _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD + 64));
                    acc[0] = _mm256_add_epi32(acc[0], dot!(wp, c));
                    acc[1] = _mm256_add_epi32(acc[1], dot!(wp, c + 32));
                    acc[2] = _mm256_add_epi32(acc[2], dot!(wp, c + 64));
                    acc[3] = _mm256_add_epi32(acc[3], dot!(wp, c + 96));
                }
                c += 128;
            }
            while c < n32 {
                // SAFETY: `c + 32 <= n32 <= cols`.
                unsafe {
                    acc[0] = _mm256_add_epi32(acc[0], dot!(wp, c));
                }
                c += 32;
            }
            let sum = _mm256_add_epi32(
                _mm256_add_epi32(acc[0], acc[1]),
                _mm256_add_epi32(acc[2], acc[3]),
            );
            // SAFETY: plain register arithmetic (AVX2 is enabled).
            let mut s = unsafe { hsum256_epi32(sum) };
            for j in n32..cols {
                s += i32::from(row[j]) * i32::from(x[j]);
            }
            finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
        }
    }

    /// Exact `i32` dot products of rows of int8 `q` (`[y.len(), x.len()]`) with int8 `x`,
    /// scaled and written like [`super::scalar_q8`], with AVX-512 VNNI. `vpdpbusd`
    /// multiplies 64 `u8 × i8` pairs and adds them in fours to sixteen `i32` lanes (no
    /// saturation). It needs one unsigned operand: the weights are offset to
    /// `w + 128 ∈ [1, 255]` (`w ^ 0x80` read as `u8`) and `128 · Σx` is subtracted from each
    /// row's sum, one `xor` per 64 weights. (The sign trick of [`rows_q8_avx2`], `|x|` times
    /// the weights negated under the mask of the negative activations — AVX-512 has no
    /// `vpsignb` — needs three more instructions per 64 weights and was 8 % slower with
    /// the matrix in L2.) All sums are exact: the lanes wrap modulo 2³², and the
    /// result fits `i32` (`|Σ w·x| ≤ 127² · cols`, cols < 133 000).
    ///
    /// One row at a time, read as one sequential stream with a software prefetch `AHEAD`
    /// bytes ahead (as [`rows_q8_avx2`]), four accumulators of 64 columns each; the last
    /// `cols % 64` columns are read with masked loads (the masked-off lanes are zeros and
    /// add nothing), so there is no scalar tail.
    ///
    /// # Safety
    /// AVX-512F, AVX-512BW and AVX-512 VNNI are available; `x_sum` is `Σ x`;
    /// `q.len() == y.len() * x.len()` and `scales` (and `bias` when given) have `y.len()`
    /// elements.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn rows_q8_avx512vnni(
        q: &[i8],
        scales: &[f32],
        x: &[i8],
        x_sum: i32,
        x_scale: f32,
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        /// Prefetch distance in bytes (see `rows_q8_avx2`).
        const AHEAD: usize = 2048;
        let cols = x.len();
        let rows = y.len();
        debug_assert_eq!(q.len(), rows * cols);
        let n256 = cols / 256 * 256;
        let n64 = cols / 64 * 64;
        let tail: __mmask64 = (1u64 << (cols % 64)).wrapping_sub(1);
        let offset = _mm512_set1_epi8(-128);
        debug_assert_eq!(x_sum, super::sum_i8(x));
        let x_sum_128 = x_sum.wrapping_mul(128);
        let xp = x.as_ptr();
        // Adds the products of 64 weights at `$wp + $c` and 64 activations at `xp + $c`
        // (offset weights, see above) to `$acc`; `$load` reads 64 bytes.
        macro_rules! dot {
            ($acc:expr, $wp:expr, $c:expr, $load:expr) => {{
                let wv = _mm512_xor_si512($load($wp.add($c)), offset);
                $acc = _mm512_dpbusd_epi32($acc, wv, $load(xp.add($c)));
            }};
        }
        let full = |p: *const i8| {
            // SAFETY: the callers below pass 64 readable bytes.
            unsafe { _mm512_loadu_si512(p as *const __m512i) }
        };
        let masked = |p: *const i8| {
            // SAFETY: the callers below pass `cols % 64` readable bytes; the masked-off
            // bytes are not accessed (fault suppression).
            unsafe { _mm512_maskz_loadu_epi8(tail, p) }
        };
        for r in 0..rows {
            let wp = q[r * cols..(r + 1) * cols].as_ptr();
            let mut acc = [_mm512_setzero_si512(); 4];
            let mut c = 0;
            while c < n256 {
                // SAFETY: `c + 256 <= n256 <= cols`: elements `c..c + 256` of `x` and of
                // row `r` of `q` exist; prefetches never fault.
                unsafe {
                    for k in 0..4 {
                        _mm_prefetch::<_MM_HINT_T0>(wp.wrapping_add(c + AHEAD + 64 * k));
                    }
                    dot!(acc[0], wp, c, full);
                    dot!(acc[1], wp, c + 64, full);
                    dot!(acc[2], wp, c + 128, full);
                    dot!(acc[3], wp, c + 192, full);
                }
                c += 256;
            }
            while c < n64 {
                // SAFETY: `c + 64 <= n64 <= cols`.
                unsafe { dot!(acc[0], wp, c, full) };
                c += 64;
            }
            if tail != 0 {
                // SAFETY: `c == n64`: the `cols % 64` elements `c..cols` exist.
                unsafe { dot!(acc[1], wp, c, masked) };
            }
            let sum = _mm512_add_epi32(
                _mm512_add_epi32(acc[0], acc[1]),
                _mm512_add_epi32(acc[2], acc[3]),
            );
            let s = _mm512_reduce_add_epi32(sum).wrapping_sub(x_sum_128);
            finish(s as f32, scales[r] * x_scale, r, y, bias, accumulate);
        }
    }

    /// Sum of the eight `i32` lanes.
    #[target_feature(enable = "avx2")]
    unsafe fn hsum256_epi32(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel variant this CPU has, including those the dispatch does not pick here
    /// (e.g. AVX2 on an AVX-512 host).
    fn kernels() -> Vec<Q8Kernel> {
        let all = [
            Q8Kernel::Scalar,
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx2,
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx512Vnni,
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::Neon,
        ];
        all.into_iter().filter(|k| k.is_supported()).collect()
    }

    /// Deterministic `i8` values in `[-127, 127]`.
    fn values(n: usize, seed: u64) -> Vec<i8> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (((s >> 32) % 255) as i32 - 127) as i8
            })
            .collect()
    }

    #[test]
    fn every_q8_kernel_gives_the_scalar_bits() {
        let ks = kernels();
        eprintln!("q8 kernels on this CPU: {ks:?}");
        for cols in [
            1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300, 1024, 4096,
        ] {
            for rows in [1, 3, 8] {
                let q = values(rows * cols, (rows * 31 + cols) as u64);
                let x = values(cols, cols as u64 + 5);
                let scales: Vec<f32> = (0..rows).map(|r| 0.01 + r as f32 * 1e-3).collect();
                let bias: Vec<f32> = (0..rows).map(|r| r as f32 - 1.5).collect();
                for (b, acc) in [(None, false), (Some(&bias[..]), true)] {
                    let mut want = vec![0.25f32; rows];
                    scalar_q8(&q, &scales, &x, 0.03, &mut want, b, acc);
                    for &k in &ks {
                        let mut got = vec![0.25f32; rows];
                        k.run(&q, &scales, &x, sum_i8(&x), 0.03, &mut got, b, acc);
                        assert_eq!(got, want, "{k:?} {rows}x{cols}");
                    }
                }
            }
        }
    }

    #[test]
    fn q8_kernels_do_not_overflow_at_the_extremes() {
        // |q|, |x| = 127 everywhere: 4096 · 127² = 66 064 384 per row, in either sign.
        let cols = 4096;
        let x: Vec<i8> = (0..cols)
            .map(|i| if i % 3 == 0 { -127 } else { 127 })
            .collect();
        let mut q = vec![127i8; cols];
        q.extend(x.iter().map(|&v| -v));
        q.extend(x.iter().copied());
        let scales = [1.0f32; 3];
        for k in kernels() {
            let mut y = [0f32; 3];
            k.run(&q, &scales, &x, sum_i8(&x), 1.0, &mut y, None, false);
            let xs: i64 = x.iter().map(|&v| i64::from(v) * 127).sum();
            assert_eq!(y, [xs as f32, -66_064_384.0, 66_064_384.0], "{k:?}");
        }
    }

    #[test]
    fn avx512_hosts_dispatch_to_the_best_q8_kernel() {
        let k = Q8Kernel::for_isa(Isa::Avx512.resolve());
        assert!(k.is_supported());
        #[cfg(target_arch = "x86_64")]
        {
            if Isa::Avx512.is_supported() && is_x86_feature_detected!("avx512vnni") {
                assert_eq!(k, Q8Kernel::Avx512Vnni);
            }
            if Isa::Avx2.is_supported() {
                assert_eq!(Q8Kernel::for_isa(Isa::Avx2), Q8Kernel::Avx2);
            }
        }
        #[cfg(target_arch = "aarch64")]
        if Isa::Neon.is_supported() {
            assert_eq!(k, Q8Kernel::Neon);
            assert_eq!(Q8Kernel::for_isa(Isa::Neon), Q8Kernel::Neon);
        }
        assert_eq!(Q8Kernel::for_isa(Isa::Scalar), Q8Kernel::Scalar);
    }
}
