//! 16-bit weights for the memory-bound GEMVs: [`HalfRows`] stores a row-major
//! `[rows, cols]` matrix as IEEE 754 binary16 (`f16`) or bfloat16 (`bf16`) bits, half the
//! bytes of `f32`, and [`gemv_half`] computes `y = W·x` with `f32` activations. The weights
//! are converted to `f32` in registers (F16C `vcvtph2ps` on x86, `fcvtl` on NEON; a bf16 is
//! the upper half of an `f32`, so it is widened by a 16-bit shift) and multiplied in `f32`, so the only error against the `f32` GEMV is the weights'
//! rounding to 16 bits: at most 2⁻¹¹ relative for `f16` (normal range) and 2⁻⁸ for `bf16`.
//!
//! Reference: PyTorch's `Tensor.half()` / `Tensor.bfloat16()` (round to nearest, ties to
//! even) followed by an `f32` `nn.Linear`.
//!
//! The kernels read each row as one sequential stream with a software prefetch ahead (on
//! x86; `_prefetch` is unstable on aarch64), four vector accumulators per row, like
//! `gemv_i8_q8`. AVX-512 hosts run the 8-lane AVX2 + F16C GEMV kernel, which was faster
//! from DRAM on Zen 4 (see `x86::rows_avx2`); [`HalfRows::dequantize_rows_into`] converts
//! 16 lanes at a time there. Sums are in `f32` with per-lane partial sums, so results differ from a
//! sequential sum by a few ulp of `Σ|wᵢ·xᵢ|` (as [`crate::gemv`]); tests compare every
//! available ISA with an `f64` sum of the converted weights.

use half::{bf16, f16};

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use crate::arch::F32Simd;
use crate::{detected, Isa};

/// Which 16-bit format a [`HalfRows`] holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum HalfKind {
    /// IEEE 754 binary16: 5 exponent bits, 10 mantissa bits; largest finite value 65504,
    /// smallest normal 2⁻¹⁴ ≈ 6.1e-5 (subnormals down to 2⁻²⁴ ≈ 6e-8). Relative rounding
    /// error ≤ 2⁻¹¹ in the normal range.
    F16,
    /// bfloat16: the upper 16 bits of an `f32` (8 exponent bits, 7 mantissa bits); the
    /// range of `f32`, relative rounding error ≤ 2⁻⁸.
    Bf16,
}

/// A row-major `[rows, cols]` matrix stored as 16-bit floats ([`HalfKind`]), the weights of
/// [`gemv_half`]. Half the bytes of `f32`; every element converts back to `f32` exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfRows {
    bits: Vec<u16>,
    rows: usize,
    cols: usize,
    kind: HalfKind,
}

/// The `f32` value of one 16-bit element (exact).
#[inline]
fn to_f32(bits: u16, kind: HalfKind) -> f32 {
    match kind {
        HalfKind::F16 => f16::from_bits(bits).to_f32(),
        // The SIMD kernels' conversion: the bits become the upper half of an `f32`.
        HalfKind::Bf16 => f32::from_bits(u32::from(bits) << 16),
    }
}

impl HalfRows {
    /// Converts `w` (`[rows, cols]`, row-major) to `kind`, rounding each value to the
    /// nearest representable one, ties to even (as PyTorch's `.half()`/`.bfloat16()`; the
    /// scalar conversions of the [`half`] crate).
    ///
    /// Out-of-range values are not an error: with [`HalfKind::F16`], finite values of
    /// magnitude ≥ 65520 become `±inf`, and values below half the smallest subnormal
    /// (2⁻²⁵) become `±0`; with [`HalfKind::Bf16`], finite values within 2⁻⁹ relative of
    /// `f32::MAX` round to `±inf`. `±inf` stays `±inf` and NaN stays NaN (quiet). A caller
    /// that needs finite weights checks the source range first (`max |w| < 65504` for
    /// `f16`) or the result, e.g. with [`HalfRows::dequantize`].
    ///
    /// # Panics
    /// If `w.len() != rows * cols`.
    pub fn from_f32(w: &[f32], rows: usize, cols: usize, kind: HalfKind) -> Self {
        assert_eq!(
            w.len(),
            rows * cols,
            "HalfRows::from_f32: w has {} elements, expected {rows} × {cols}",
            w.len()
        );
        let bits = match kind {
            HalfKind::F16 => w.iter().map(|&v| f16::from_f32(v).to_bits()).collect(),
            HalfKind::Bf16 => w.iter().map(|&v| bf16::from_f32(v).to_bits()).collect(),
        };
        Self {
            bits,
            rows,
            cols,
            kind,
        }
    }

    /// Wraps 16-bit values already in `kind` (e.g. a `float16`/`bfloat16` tensor of a
    /// checkpoint), row-major `[rows, cols]`.
    ///
    /// # Panics
    /// If `bits.len() != rows * cols`.
    pub fn from_bits(bits: Vec<u16>, rows: usize, cols: usize, kind: HalfKind) -> Self {
        assert_eq!(
            bits.len(),
            rows * cols,
            "HalfRows::from_bits: {} values, expected {rows} × {cols}",
            bits.len()
        );
        Self {
            bits,
            rows,
            cols,
            kind,
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

    /// The storage format.
    pub fn kind(&self) -> HalfKind {
        self.kind
    }

    /// Bytes held by the values (`2 · rows · cols`).
    pub fn bytes(&self) -> usize {
        2 * self.bits.len()
    }

    /// The raw 16-bit values, row-major `[rows, cols]`, in the format [`Self::kind`].
    pub fn bits(&self) -> &[u16] {
        &self.bits
    }

    /// The whole matrix in `f32`, row-major `[rows, cols]` (exact; for tests and error
    /// reports; see [`Self::dequantize_rows_into`] to convert a panel without allocating).
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = vec![0f32; self.bits.len()];
        self.dequantize_rows_into(0, &mut out);
        out
    }

    /// Converts the rows `first..first + out.len() / cols` to `f32` into `out` (row-major,
    /// exact), e.g. a panel of weights for a prefill GEMM, on the ISA of [`detected`]
    /// (see [`Isa::dequantize_half_rows`]).
    ///
    /// # Panics
    /// If `out.len()` is not a multiple of `cols` (or `cols == 0` and `out` is not empty),
    /// or the rows end past the matrix.
    pub fn dequantize_rows_into(&self, first: usize, out: &mut [f32]) {
        detected().dequantize_half_rows(self, first, out)
    }
}

/// `y = W·x + bias` (or `y += W·x + bias` with `accumulate`) for 16-bit `W` (see the
/// module docs), rows `0..y.len()` of `w`, on the ISA of [`detected`]. Each output is
/// `dot(W[r], x)` in `f32`, then `+ bias[r]`, then `y[r] + …` (the rounding order of
/// [`crate::gemv`]). Non-finite weights or activations propagate (IEEE arithmetic).
///
/// # Panics
/// If `x.len() != w.cols()`, `y.len() > w.rows()`, or `bias` is given with a length other
/// than `y.len()`.
pub fn gemv_half(w: &HalfRows, x: &[f32], y: &mut [f32], bias: Option<&[f32]>, accumulate: bool) {
    detected().gemv_half(w, 0, x, y, bias, accumulate)
}

/// The kernels of [`gemv_half`] and [`HalfRows::dequantize_rows_into`] for a resolved ISA.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kernel {
    Scalar,
    /// AVX2 + FMA + F16C.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512F (+ AVX2, FMA, F16C): 16-lane conversions for
    /// [`Isa::dequantize_half_rows`]; the GEMV runs the AVX2 kernel (see
    /// `x86::rows_avx2`).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// NEON (`fcvtl` is base Advanced SIMD).
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Kernel {
    /// The kernel of a resolved `isa`. The x86 kernels also need F16C (`vcvtph2ps`), which
    /// every AVX2 CPU has, but a virtual machine may hide: without it, the scalar kernel
    /// runs.
    fn for_isa(isa: Isa) -> Kernel {
        #[cfg(target_arch = "x86_64")]
        let f16c = || {
            is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c")
        };
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 if f16c() => Kernel::Avx512,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 if f16c() => Kernel::Avx2,
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => Kernel::Neon,
            _ => Kernel::Scalar,
        }
    }
}

impl Isa {
    /// [`gemv_half`] on this ISA (see [`Isa::resolve`] for unsupported ISAs), for the rows
    /// `first..first + y.len()` of `w` (so that a caller can split the rows over threads);
    /// `bias`, when given, holds the biases of those rows. Same contract as
    /// [`Isa::gemv_i8`].
    ///
    /// # Panics
    /// If `x.len() != w.cols()`, `first + y.len() > w.rows()`, or `bias` has a length other
    /// than `y.len()`.
    pub fn gemv_half(
        self,
        w: &HalfRows,
        first: usize,
        x: &[f32],
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        let cols = w.cols;
        crate::check_gemv_rows("gemv_half", (w.rows, cols), first, x.len(), y.len(), bias);
        let bits = &w.bits[first * cols..(first + y.len()) * cols];
        #[cfg_attr(target_arch = "wasm32", allow(unused_variables))]
        let bf = w.kind == HalfKind::Bf16;
        match Kernel::for_isa(self.resolve()) {
            Kernel::Scalar => scalar(bits, w.kind, x, y, bias, accumulate),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX2, FMA and F16C are present (checked by `for_isa` for both
            // kernels); `bits` holds `y.len()` rows of `cols = x.len()` values (checked
            // above).
            Kernel::Avx2 | Kernel::Avx512 => unsafe {
                if bf {
                    x86::rows_avx2::<true>(bits, x, y, bias, accumulate)
                } else {
                    x86::rows_avx2::<false>(bits, x, y, bias, accumulate)
                }
            },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: NEON is present (resolved); lengths as above.
            Kernel::Neon => unsafe {
                if bf {
                    arm::rows_neon::<true>(bits, x, y, bias, accumulate)
                } else {
                    arm::rows_neon::<false>(bits, x, y, bias, accumulate)
                }
            },
        }
    }

    /// `out[t · rows + r] = W[first + r] · x_t` (no bias, no accumulation) for every token
    /// `x_t` of `xs` (`[tokens, w.cols()]`, row-major) and `r < rows`: each value
    /// bit-identical to [`Isa::gemv_half`] on that token before its bias (add the bias, then
    /// accumulate, to finish as it does). On x86 the weights of each 32 columns are widened
    /// once for three tokens (the `--dtype f16` prefill and the engine's batched flow head);
    /// elsewhere, and for a single token, one token at a time.
    ///
    /// # Panics
    /// If `xs.len()` is not a multiple of `w.cols()` (unless both are 0), `first + rows >
    /// w.rows()`, or `out.len() != tokens · rows`.
    pub fn gemv_half_tokens(
        self,
        w: &HalfRows,
        first: usize,
        rows: usize,
        xs: &[f32],
        out: &mut [f32],
    ) {
        let cols = w.cols;
        crate::check_row_range("gemv_half_tokens", first, rows, w.rows);
        let tokens = xs.len().checked_div(cols).unwrap_or(0);
        assert_eq!(
            tokens * cols,
            xs.len(),
            "gemv_half_tokens: xs is not whole tokens"
        );
        assert_eq!(out.len(), tokens * rows, "gemv_half_tokens: out length");
        #[cfg(target_arch = "x86_64")]
        if tokens > 1
            && matches!(
                Kernel::for_isa(self.resolve()),
                Kernel::Avx2 | Kernel::Avx512
            )
        {
            let bits = &w.bits[first * cols..(first + rows) * cols];
            // SAFETY: AVX2, FMA and F16C are present (`for_isa`); `bits` holds `rows`
            // rows of `cols` values, `xs` `tokens` tokens, `out` `tokens · rows` values.
            unsafe {
                if w.kind == HalfKind::Bf16 {
                    x86::tokens_avx2::<true>(bits, cols, xs, out)
                } else {
                    x86::tokens_avx2::<false>(bits, cols, xs, out)
                }
            }
            return;
        }
        for (x, o) in xs
            .chunks_exact(cols.max(1))
            .zip(out.chunks_exact_mut(rows.max(1)))
        {
            self.gemv_half(w, first, x, o, None, false);
        }
    }

    /// [`HalfRows::dequantize_rows_into`] on this ISA (see [`Isa::resolve`] for
    /// unsupported ISAs): the rows `first..first + out.len() / w.cols()` of `w` in `f32`
    /// (exact; the same values on every ISA).
    ///
    /// # Panics
    /// If `out.len()` is not a multiple of `w.cols()` (or `w.cols() == 0` and `out` is not
    /// empty), or the rows end past the matrix.
    pub fn dequantize_half_rows(self, w: &HalfRows, first: usize, out: &mut [f32]) {
        crate::check_rows("dequantize_half_rows", out.len(), w.cols);
        let n = out.len().checked_div(w.cols).unwrap_or(0);
        crate::check_row_range("dequantize_half_rows", first, n, w.rows);
        let bits = &w.bits[first * w.cols..first * w.cols + out.len()];
        #[cfg_attr(target_arch = "wasm32", allow(unused_variables))]
        let bf = w.kind == HalfKind::Bf16;
        match Kernel::for_isa(self.resolve()) {
            Kernel::Scalar => {
                for (o, &b) in out.iter_mut().zip(bits) {
                    *o = to_f32(b, w.kind);
                }
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX2, FMA and F16C are present (checked by `for_isa`).
            Kernel::Avx2 => unsafe { x86::convert_avx2(bits, out, bf) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: AVX-512F is present (resolved).
            Kernel::Avx512 => unsafe { x86::convert_avx512(bits, out, bf) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: NEON is present (resolved).
            Kernel::Neon => unsafe { arm::convert_neon(bits, out, bf) },
        }
    }
}

/// `out[i] = bits[i]` widened to `f32` (exact; the same values on every ISA) with the
/// conversion kernel of the resolved `isa`: the GEMM's 16-bit weight blocks
/// ([`crate::gemm::PackedMatrix::to_half`]).
///
/// # Panics
/// If `bits.len() != out.len()`.
pub(crate) fn widen_into(isa: Isa, bits: &[u16], kind: HalfKind, out: &mut [f32]) {
    assert_eq!(bits.len(), out.len(), "widen_into: lengths differ");
    #[cfg_attr(target_arch = "wasm32", allow(unused_variables))]
    let bf = kind == HalfKind::Bf16;
    match Kernel::for_isa(isa) {
        Kernel::Scalar => {
            for (o, &b) in out.iter_mut().zip(bits) {
                *o = to_f32(b, kind);
            }
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX2, FMA and F16C are present (checked by `for_isa`).
        Kernel::Avx2 => unsafe { x86::convert_avx2(bits, out, bf) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: AVX-512F is present (`isa` resolved), F16C too (`for_isa`).
        Kernel::Avx512 => unsafe { x86::convert_avx512(bits, out, bf) },
        #[cfg(target_arch = "aarch64")]
        // SAFETY: NEON is present (resolved).
        Kernel::Neon => unsafe { arm::convert_neon(bits, out, bf) },
    }
}

/// Rounds `v` to `kind`'s bits, to nearest, ties to even (PyTorch's `.half()` /
/// `.bfloat16()`).
pub(crate) fn round_to_half(v: f32, kind: HalfKind) -> u16 {
    match kind {
        HalfKind::F16 => f16::from_f32(v).to_bits(),
        HalfKind::Bf16 => bf16::from_f32(v).to_bits(),
    }
}

/// The `f32` value of `bits` (exact).
pub(crate) fn half_to_f32(bits: u16, kind: HalfKind) -> f32 {
    to_f32(bits, kind)
}

/// Writes the finished dot product `s` of row `r`: `+ bias`, then `y + …`.
#[inline(always)]
fn finish(s: f32, r: usize, y: &mut [f32], bias: Option<&[f32]>, accumulate: bool) {
    let v = bias.map_or(s, |b| s + b[r]);
    y[r] = if accumulate { y[r] + v } else { v };
}

/// The portable kernel: 8 partial sums per row, weights converted one at a time.
fn scalar(
    bits: &[u16],
    kind: HalfKind,
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    let cols = x.len();
    for r in 0..y.len() {
        let row = &bits[r * cols..(r + 1) * cols];
        let mut acc = [0f32; 8];
        let mut rc = row.chunks_exact(8);
        let mut xc = x.chunks_exact(8);
        for (w8, x8) in (&mut rc).zip(&mut xc) {
            for k in 0..8 {
                acc[k] = to_f32(w8[k], kind).mul_add(x8[k], acc[k]);
            }
        }
        let mut s =
            ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
        for (&w, &xv) in rc.remainder().iter().zip(xc.remainder()) {
            s = to_f32(w, kind).mul_add(xv, s);
        }
        finish(s, r, y, bias, accumulate);
    }
}

/// The kind of a kernel's `bf16` flag (or const parameter).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn kind(bf16: bool) -> HalfKind {
    if bf16 {
        HalfKind::Bf16
    } else {
        HalfKind::F16
    }
}

/// One ISA's 16-bit × `f32` products for [`gemv_half`], on top of its vector primitives:
/// run by [`rows`] inside the ISA's `#[target_feature]` entry point.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
trait HalfDot: F32Simd {
    /// Columns per [`Self::block`] (four vectors).
    const BLOCK: usize;
    /// Adds the products of the `BLOCK` 16-bit weights at `w` (f16 or bf16 per `BF16`)
    /// with the activations at `x` to the four accumulators, vector `k` into `acc[k]`.
    ///
    /// # Safety
    /// The CPU has the ISA's features and the caller enables them; `w` and `x` are
    /// readable for `BLOCK` elements.
    unsafe fn block<const BF16: bool>(acc: &mut [Self::V; 4], w: *const u16, x: *const f32);
    /// Adds the products of 8 weights at `w` with the activations at `x` (one 8-lane
    /// vector into `acc[0]` on AVX2; two 4-lane vectors into `acc[0]` and `acc[1]` on
    /// NEON).
    ///
    /// # Safety
    /// As [`Self::block`], for 8 elements.
    unsafe fn step8<const BF16: bool>(acc: &mut [Self::V; 4], w: *const u16, x: *const f32);
}

/// Dot products of the rows of `bits` (`[y.len(), x.len()]`, f16 or bf16 per `BF16`)
/// with `x`, written like [`scalar`]: one row at a time (a sequential stream, prefetched
/// `AHEAD` bytes ahead where [`F32Simd::PREFETCH`]), four accumulators, `BLOCK` columns
/// per iteration, then steps of 8 columns, then a scalar `mul_add` tail after the
/// reduction.
///
/// # Safety
/// The CPU has `K`'s features and the caller enables them; `bits.len() == y.len() *
/// x.len()`; `bias`, when given, has `y.len()` elements.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
unsafe fn rows<K: HalfDot, const BF16: bool>(
    bits: &[u16],
    x: &[f32],
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    /// Software prefetch distance in bytes of the weight stream (as in `gemv_i8_q8`).
    const AHEAD: usize = 2048;
    let cols = x.len();
    debug_assert_eq!(bits.len(), y.len() * cols);
    let (n_block, n8) = (cols / K::BLOCK * K::BLOCK, cols / 8 * 8);
    let xp = x.as_ptr();
    for r in 0..y.len() {
        let row = &bits[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        // SAFETY: `K`'s features are enabled (caller).
        let mut acc = [unsafe { K::zero() }; 4];
        let mut c = 0;
        while c < n_block {
            // SAFETY: `c + BLOCK <= cols`: elements `c..c + BLOCK` of `x` and of the row;
            // prefetches never fault; `K`'s features are enabled.
            unsafe {
                if K::PREFETCH {
                    K::prefetch((wp as *const u8).wrapping_add(2 * c + AHEAD));
                }
                K::block::<BF16>(&mut acc, wp.add(c), xp.add(c));
            }
            c += K::BLOCK;
        }
        while c < n8 {
            // SAFETY: `c + 8 <= cols`, as above.
            unsafe { K::step8::<BF16>(&mut acc, wp.add(c), xp.add(c)) };
            c += 8;
        }
        // SAFETY: `K`'s features are enabled (caller).
        let mut s = unsafe { K::hsum(K::add(K::add(acc[0], acc[1]), K::add(acc[2], acc[3]))) };
        for j in n8..cols {
            s = to_f32(row[j], kind(BF16)).mul_add(x[j], s);
        }
        finish(s, r, y, bias, accumulate);
    }
}

/// One ISA's conversion of `N` 16-bit values to `f32` ([`Isa::dequantize_half_rows`]),
/// run by [`convert`] inside the ISA's `#[target_feature]` entry point.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
trait Widen {
    /// Values per [`Self::widen`].
    const N: usize;
    /// `out[i] = bits[i]` as `f32` for `i < N` (f16 or bf16 per `BF16`).
    ///
    /// # Safety
    /// The CPU has the ISA's features and the caller enables them; `bits` is readable and
    /// `out` writable for `N` elements.
    unsafe fn widen<const BF16: bool>(bits: *const u16, out: *mut f32);
}

/// `out[i] = bits[i]` as `f32` (f16 or bf16 per `bf16`): `K::N` values at a time, then
/// one at a time.
///
/// # Safety
/// The CPU has `K`'s features and the caller enables them.
///
/// # Panics
/// If `bits.len() != out.len()`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
unsafe fn convert<K: Widen>(bits: &[u16], out: &mut [f32], bf16: bool) {
    assert_eq!(bits.len(), out.len());
    let n = bits.len() / K::N * K::N;
    let mut c = 0;
    while c < n {
        // SAFETY: `c + N <= len` elements of both; `K`'s features are enabled (caller).
        unsafe {
            let (b, o) = (bits.as_ptr().add(c), out.as_mut_ptr().add(c));
            if bf16 {
                K::widen::<true>(b, o);
            } else {
                K::widen::<false>(b, o);
            }
        }
        c += K::N;
    }
    for (o, &b) in out[n..].iter_mut().zip(&bits[n..]) {
        *o = to_f32(b, kind(bf16));
    }
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
mod arm;
