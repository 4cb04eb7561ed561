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
//! [`Isa::Avx512`] hosts with `avx512vnni`, else AVX2), NEON `sdot` (on [`Isa::Neon`]
//! hosts with the dot-product extension, `dotprod`), NEON `smull`/`smlal2`/`sadalp`
//! (without it) and scalar ones, all giving the same bits (exact integer sums). On NEON,
//! [`gemv_i8`] widens to `f32` and uses `vfmaq_f32`; `sdot` is emitted with inline
//! assembly, its intrinsic (`vdotq_s32`) being unstable in Rust. The kernel variant is
//! detected once per process. Tests compare every available ISA with an `f64` sum, and
//! every kernel variant the CPU has with the scalar kernel's bits.

use crate::{detected, Isa};

mod tokens;
#[cfg(target_arch = "x86_64")]
mod tokens_amx;
#[cfg(target_arch = "x86_64")]
mod tokens_vnni;

/// Whether the int8 prefill ([`crate::Isa::gemv_i8_q8_tokens`] with AVX-512 VNNI) runs on
/// the CPU's AMX tiles: an Intel Xeon from Sapphire Rapids on, whose operating system
/// grants the AMX state (Linux), unless `POCKET_TTS_NO_AMX=1` is set. Same bits either
/// way. With AMX a call is best given many rows at once (the tokens are rearranged for the
/// tiles once per call), and a block of rows needs no longer fit in L1.
pub fn amx_int8_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::amx::int8();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

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

    /// A matrix over stored values (`[rows, cols]`, row-major) and row scales (`[rows]`),
    /// e.g. read from a checkpoint written from [`Self::values`] and [`Self::scales`].
    ///
    /// # Errors
    /// A message naming the lengths when they are not `rows · cols` and `rows`.
    pub fn from_parts(
        q: Vec<i8>,
        scales: Vec<f32>,
        rows: usize,
        cols: usize,
    ) -> Result<Self, String> {
        if q.len() != rows * cols || scales.len() != rows {
            return Err(format!(
                "{} values and {} scales for [{rows}, {cols}], expected {} and {rows}",
                q.len(),
                scales.len(),
                rows * cols
            ));
        }
        Ok(Self {
            q,
            scales,
            rows,
            cols,
        })
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
    /// `Σ q` over each block of [`crate::Q4_BLOCK`] values (the last one possibly
    /// shorter), kept for the 4-bit kernels, which offset the weights.
    block_sums: Vec<i32>,
    /// `q + 128` as `u8` (`q ^ 0x80`): the unsigned operand of the VNNI multi-token
    /// kernel, which offsets the activations instead of the weights (empty off x86_64).
    offset: Vec<u8>,
}

/// `Σ v` (at most 2²⁴ values of magnitude ≤ 128 fit an `i32` exactly).
pub(crate) fn sum_i8(v: &[i8]) -> i32 {
    v.iter().map(|&x| i32::from(x)).sum()
}

impl QuantizedVector {
    /// An empty vector with room for `len` values.
    pub fn with_capacity(len: usize) -> Self {
        Self {
            q: Vec::with_capacity(len),
            scale: 0.0,
            sum: 0,
            block_sums: Vec::with_capacity(len.div_ceil(crate::Q4_BLOCK)),
            offset: Vec::with_capacity(if cfg!(target_arch = "x86_64") { len } else { 0 }),
        }
    }

    /// Quantizes `x` into `self` (round half away from zero, clamped to `[-127, 127]`;
    /// all zeros give scale 0). Non-finite values are not supported.
    pub fn quantize(&mut self, x: &[f32]) {
        let max = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        self.q.clear();
        self.block_sums.clear();
        if max == 0.0 {
            self.scale = 0.0;
            self.sum = 0;
            self.q.resize(x.len(), 0);
            self.block_sums.resize(x.len().div_ceil(crate::Q4_BLOCK), 0);
        } else {
            self.scale = max / 127.0;
            let inv = 1.0 / self.scale;
            self.q.extend(x.iter().map(|v| to_i8(v * inv)));
            self.sum = sum_i8(&self.q);
            self.block_sums
                .extend(self.q.chunks(crate::Q4_BLOCK).map(sum_i8));
        }
        self.fill_offset();
    }

    /// Sets [`Self::offset_values`] from the values (x86_64 only: the one kernel that
    /// reads them is AVX-512 VNNI's; elsewhere nothing is done on this hot path).
    fn fill_offset(&mut self) {
        #[cfg(target_arch = "x86_64")]
        {
            self.offset.clear();
            self.offset.extend(self.q.iter().map(|&v| (v as u8) ^ 0x80));
        }
    }

    /// The values plus 128, as `u8` (`q ^ 0x80`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub(crate) fn offset_values(&self) -> &[u8] {
        &self.offset
    }

    /// `Σ values` over each block of [`crate::Q4_BLOCK`] values.
    pub(crate) fn block_sums(&self) -> &[i32] {
        &self.block_sums
    }

    /// A vector holding `q` with scale `scale` (tests of the kernels).
    #[cfg(test)]
    pub(crate) fn from_parts(q: Vec<i8>, scale: f32) -> Self {
        let sum = sum_i8(&q);
        let block_sums = q.chunks(crate::Q4_BLOCK).map(sum_i8).collect();
        let mut v = Self {
            q,
            scale,
            sum,
            block_sums,
            offset: Vec::new(),
        };
        v.fill_offset();
        v
    }

    /// The quantized values.
    pub fn values(&self) -> &[i8] {
        &self.q
    }

    /// The scale.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// `Σ values` (read by the multi-token kernels that offset the weights).
    #[cfg(any(target_arch = "aarch64", target_arch = "wasm32"))]
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
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
            #[cfg(target_arch = "wasm32")]
            // SAFETY: SIMD128 is compiled in (resolved); lengths checked above.
            Isa::Simd128 => unsafe { wasm::rows_simd128(q, scales, x, y, bias, accumulate) },
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
    /// three instructions.
    #[cfg(target_arch = "aarch64")]
    Neon,
    /// NEON with the dot-product extension: `sdot` adds the products of 16 `i8` pairs in
    /// fours into `i32` lanes in one instruction (inline assembly: `vdotq_s32` is
    /// unstable in Rust).
    #[cfg(target_arch = "aarch64")]
    NeonDot,
    /// WebAssembly SIMD128: 16 `i8` pairs widened to `i16`, `i32x4.dot_i16x8_s`.
    #[cfg(target_arch = "wasm32")]
    Simd128,
}

impl Q8Kernel {
    /// The kernel for `isa`, which must have been resolved (its features present).
    /// AVX-512 hosts use VNNI when the CPU has it (`avx512vnni` + `avx512bw`), else AVX2
    /// (detected once per process). There is no AVX-512BW kernel (`maddubs`/`madd` on 512
    /// bits) for AVX-512 hosts without VNNI: on Zen 4 it was 6 % slower than AVX2 with the
    /// matrix in L2 and no faster from DRAM. NEON hosts use `sdot` when the CPU has the
    /// dot-product extension (`dotprod`), else `smull`/`sadalp` (detected once too).
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
            Isa::Neon => {
                static NEON: std::sync::OnceLock<Q8Kernel> = std::sync::OnceLock::new();
                *NEON.get_or_init(|| {
                    if Q8Kernel::NeonDot.is_supported() {
                        Q8Kernel::NeonDot
                    } else {
                        Q8Kernel::Neon
                    }
                })
            }
            #[cfg(target_arch = "wasm32")]
            Isa::Simd128 => Q8Kernel::Simd128,
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
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::NeonDot => {
                std::arch::is_aarch64_feature_detected!("neon")
                    && std::arch::is_aarch64_feature_detected!("dotprod")
            }
            #[cfg(target_arch = "wasm32")]
            Q8Kernel::Simd128 => Isa::Simd128.is_supported(),
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
        #[cfg(any(
            target_arch = "x86_64",
            target_arch = "aarch64",
            target_arch = "wasm32"
        ))]
        let call = Q8Rows {
            q,
            scales,
            x,
            x_sum,
            x_scale,
            y,
            bias,
            accumulate,
        };
        match self {
            Q8Kernel::Scalar => {
                debug_assert_eq!(x_sum, sum_i8(x), "x_sum is not Σx");
                #[cfg(any(
                    target_arch = "x86_64",
                    target_arch = "aarch64",
                    target_arch = "wasm32"
                ))]
                let Q8Rows { y, .. } = call;
                scalar_q8(q, scales, x, x_scale, y, bias, accumulate)
            }
            // SAFETY: the kernel's features are present (checked above); lengths checked
            // above.
            #[cfg(any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "wasm32"
            ))]
            simd => unsafe { simd.run_job(call) },
        }
    }

    /// Runs `job` with this kernel's [`DotI8`], in the kernel's `#[target_feature]`
    /// entry point.
    ///
    /// # Safety
    /// The CPU has the kernel's features ([`Self::is_supported`]) and the job's operands
    /// are valid (as the job documents).
    ///
    /// # Panics
    /// For [`Q8Kernel::Scalar`], which has no [`DotI8`] (its callers run the scalar
    /// kernels).
    #[cfg(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "wasm32"
    ))]
    unsafe fn run_job<J: Q8Job>(self, job: J) {
        // SAFETY: the features are present (caller) and each entry point enables them;
        // the operands are valid (caller).
        unsafe {
            match self {
                Q8Kernel::Scalar => unreachable!("the scalar kernel runs no job"),
                #[cfg(target_arch = "x86_64")]
                Q8Kernel::Avx2 => x86::with_maddubs(job),
                #[cfg(target_arch = "x86_64")]
                Q8Kernel::Avx512Vnni => x86::with_vnni(job),
                #[cfg(target_arch = "aarch64")]
                Q8Kernel::Neon => arm::with_smull(job),
                #[cfg(target_arch = "aarch64")]
                Q8Kernel::NeonDot => arm::with_sdot(job),
                #[cfg(target_arch = "wasm32")]
                Q8Kernel::Simd128 => wasm::with_widen_dot(job),
            }
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

mod drivers;
use drivers::*;

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
pub(crate) mod arm;

#[cfg(target_arch = "wasm32")]
mod wasm;

#[cfg(test)]
mod tests;
