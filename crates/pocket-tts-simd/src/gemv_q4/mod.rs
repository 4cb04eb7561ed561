//! 4-bit weights in blocks of 32 with one scale per block (`--quantize q4`): a quarter
//! of int8's memory traffic per step halved again, for the memory-bound FlowLM GEMVs.
//!
//! # Layout ([`Q4Rows`])
//!
//! Each row of `cols` weights (`cols` a multiple of [`Q4_BLOCK`] = 32) is cut into blocks
//! of 32. A block stores 16 bytes of *nibbles* and one scale `d`:
//!
//! * byte `j` of a block holds weight `j` in its low nibble and weight `j + 16` in its high
//!   nibble, each as `u = q + 8` with `q ∈ [-8, 7]` (so `w ≈ (u − 8) · d`). One 16-byte
//!   load, a mask and a shift give the block's 32 weights in order, on every ISA.
//! * `d` is a `bf16` (little-endian `u16`): `d = bf16(m / −8)` with `m` the block's weight
//!   of largest magnitude (its sign kept), so that `m` itself is exactly `−8 · d` and the
//!   16 levels are all used (the Q4_0 scheme of GGML), and each `q = round(w / d)` is
//!   taken against the *stored* `d`.
//!
//! Why this layout (Q4_0-like, with a `bf16` scale) rather than Q4_K's super-blocks or an
//! `f16`/`f32` scale: it is 4.5 bits per weight (the `f32` scale would cost 5), the dot
//! product of a block is one exact integer sum on every ISA (no per-block minimum to
//! multiply in, as Q4_1/Q4_K have), `bf16` keeps `f32`'s range (an `f16` scale underflows
//! to subnormals for blocks whose weights are below ~5e-4, losing precision, and
//! overflows above 5e5) and decodes with a 16-bit shift everywhere (no F16C), and since
//! the nibbles are rounded against the stored scale its 8-bit mantissa only changes the
//! step size by ≤ 0.4 %, not the error bound (half a step).
//!
//! The nibbles and the scales are two [`SharedBytes`]: on the heap after
//! [`Q4Rows::quantize`], or read in place from a memory-mapped checkpoint
//! ([`Q4Rows::from_parts`]).
//!
//! # Products ([`gemv_q4`])
//!
//! The activations are a [`QuantizedVector`] (int8, one scale per token, as `--quantize`
//! int8 does). Per row and block `b`: `s_b = Σ u·x − 8 · Σ x` (exact in `i32`: `u8 × i8`
//! products with `maddubs` on AVX2, `vpdpbusd` on AVX-512 VNNI hosts, `(u − 8) × x` with
//! `sdot` or `smull`/`sadalp` on NEON), then in `f32`, fixed order on every ISA: eight
//! accumulators, block `b` going to accumulator `b mod 8` as `acc = fma(s_b, d_b, acc)`
//! (`s_b` is exact in `f32`: `|s_b| ≤ 32 · 8 · 127`), reduced as
//! `((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7))`, times the token's scale, plus the
//! bias. So every kernel gives the same bits (tests compare each variant with the scalar
//! kernel).

use crate::{detected, Isa, QuantizedVector, SharedBytes};

/// Weights per block of [`Q4Rows`] (one scale each).
pub const Q4_BLOCK: usize = 32;

/// Bytes of nibbles per block.
const BLOCK_BYTES: usize = Q4_BLOCK / 2;

/// Accumulators of the fixed summation order (see the module docs).
const LANES: usize = 8;

/// A row-major `[rows, cols]` matrix in 4-bit blocks of [`Q4_BLOCK`] with a `bf16` scale
/// per block (see the module docs for the layout and why).
#[derive(Debug, Clone, PartialEq)]
pub struct Q4Rows {
    /// `rows · cols / 2` bytes: per row, per block, 16 bytes of nibbles.
    values: SharedBytes,
    /// `rows · cols / 32` little-endian `bf16`: per row, one per block.
    scales: SharedBytes,
    rows: usize,
    cols: usize,
}

/// `w` rounded to `bf16` (nearest even), as its bits.
fn bf16_bits(w: f32) -> u16 {
    half::bf16::from_f32(w).to_bits()
}

/// The `f32` value of `bf16` bits (exact).
#[inline(always)]
fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

impl Q4Rows {
    /// Quantizes `w` (`[rows, cols]`, row-major) block by block (see the module docs).
    /// A block of zeros gets scale 0. Non-finite weights are not supported (checkpoints
    /// are checked at load).
    ///
    /// # Panics
    /// If `w.len() != rows * cols` or `cols` is not a multiple of [`Q4_BLOCK`].
    pub fn quantize(w: &[f32], rows: usize, cols: usize) -> Self {
        assert_eq!(
            w.len(),
            rows * cols,
            "Q4Rows::quantize: w has {} elements, expected {rows} × {cols}",
            w.len()
        );
        assert!(
            cols.is_multiple_of(Q4_BLOCK),
            "Q4Rows::quantize: cols = {cols} is not a multiple of {Q4_BLOCK}"
        );
        let blocks = w.len() / Q4_BLOCK;
        let mut values = vec![0u8; blocks * BLOCK_BYTES];
        let mut scales = vec![0u8; blocks * 2];
        for (b, block) in w.chunks_exact(Q4_BLOCK).enumerate() {
            let m = block
                .iter()
                .fold(0f32, |m, &v| if v.abs() > m.abs() { v } else { m });
            let bits = bf16_bits(m / -8.0);
            let d = bf16_to_f32(bits);
            scales[2 * b..2 * b + 2].copy_from_slice(&bits.to_le_bytes());
            let inv = if d == 0.0 { 0.0 } else { 1.0 / d };
            let nib = |v: f32| -> u8 {
                let q = (v * inv).round().clamp(-8.0, 7.0) as i32;
                (q + 8) as u8
            };
            let out = &mut values[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES];
            for j in 0..BLOCK_BYTES {
                out[j] = nib(block[j]) | (nib(block[j + BLOCK_BYTES]) << 4);
            }
        }
        Self {
            values: SharedBytes::from_vec(values),
            scales: SharedBytes::from_vec(scales),
            rows,
            cols,
        }
    }

    /// A matrix over stored nibbles and scales in the layout of the module docs (e.g.
    /// read in place from a memory-mapped checkpoint written from [`Self::values`] and
    /// [`Self::scales`]).
    ///
    /// # Errors
    /// A message naming the mismatch when `cols` is not a multiple of [`Q4_BLOCK`] or the
    /// byte lengths are not `rows · cols / 2` and `rows · cols / 16`.
    pub fn from_parts(
        values: SharedBytes,
        scales: SharedBytes,
        rows: usize,
        cols: usize,
    ) -> Result<Self, String> {
        if !cols.is_multiple_of(Q4_BLOCK) {
            return Err(format!("cols = {cols} is not a multiple of {Q4_BLOCK}"));
        }
        let n = rows * cols;
        if values.len() != n / 2 || scales.len() != n / Q4_BLOCK * 2 {
            return Err(format!(
                "{} bytes of nibbles and {} of scales for [{rows}, {cols}], expected {} and {}",
                values.len(),
                scales.len(),
                n / 2,
                n / Q4_BLOCK * 2
            ));
        }
        Ok(Self {
            values,
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

    /// The nibbles, `rows · cols / 2` bytes (layout in the module docs).
    pub fn values(&self) -> &[u8] {
        self.values.as_slice()
    }

    /// The block scales, `rows · cols / 32` little-endian `bf16` (`2 · rows · cols / 32`
    /// bytes).
    pub fn scales(&self) -> &[u8] {
        self.scales.as_slice()
    }

    /// Bytes held (nibbles and scales).
    pub fn bytes(&self) -> usize {
        self.values.len() + self.scales.len()
    }

    /// The dequantized matrix `(u − 8) · d`, row-major (for the Candle backend, tests and
    /// error reports).
    pub fn dequantize(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.rows * self.cols);
        for (nib, d) in self
            .values()
            .chunks_exact(BLOCK_BYTES)
            .zip(self.scales().chunks_exact(2))
        {
            let d = bf16_to_f32(u16::from_le_bytes([d[0], d[1]]));
            out.extend(nib.iter().map(|&v| (f32::from(v & 15) - 8.0) * d));
            out.extend(nib.iter().map(|&v| (f32::from(v >> 4) - 8.0) * d));
        }
        out
    }
}

/// `y = W·x + bias` (or `y += …` with `accumulate`) for 4-bit `W` and int8 `x` (see the
/// module docs), rows `0..y.len()` of `w`, on the best ISA of this CPU.
///
/// # Panics
/// If `x.len() != w.cols()`, `y.len() > w.rows()`, or `bias` is shorter than `y`.
pub fn gemv_q4(
    w: &Q4Rows,
    x: &QuantizedVector,
    y: &mut [f32],
    bias: Option<&[f32]>,
    accumulate: bool,
) {
    detected().gemv_q4(w, 0, x, y, bias.map(|b| &b[..y.len()]), accumulate)
}

/// One call's rows: nibbles `[rows, cols / 2]`, scales `[rows, cols / 32]` (bf16 bytes).
#[derive(Clone, Copy)]
struct Rows<'a> {
    values: &'a [u8],
    scales: &'a [u8],
    cols: usize,
}

impl Isa {
    /// [`gemv_q4`] on this ISA, for the rows `first..first + y.len()` of `w` (so that a
    /// caller can split the rows over threads); `bias`, when given, holds the biases of
    /// those rows.
    ///
    /// # Panics
    /// If `x.len() != w.cols()`, `first + y.len() > w.rows()`, or `bias` has a length other
    /// than `y.len()`.
    pub fn gemv_q4(
        self,
        w: &Q4Rows,
        first: usize,
        x: &QuantizedVector,
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        crate::check_gemv_rows("gemv_q4", (w.rows, w.cols), first, x.len(), y.len(), bias);
        let rows = w.rows_range(first, y.len());
        Q4Kernel::for_isa(self.resolve()).run(rows, x, y, bias, accumulate);
    }

    /// `out[t · rows + r] = W[first + r] · x_t` (no bias, no accumulation) for every
    /// token `x_t` of `xs` and `r < rows`: `out` is `[xs.len(), rows]` row-major,
    /// bit-identical to [`Isa::gemv_q4`] on each token. The rows are read from memory
    /// once for all the tokens: meant for blocks of rows that fit in L1 (a few KiB), the
    /// text prefill.
    ///
    /// # Panics
    /// If a token's length is not `w.cols()`, `first + rows > w.rows()`, or
    /// `out.len() != xs.len() * rows`.
    pub fn gemv_q4_tokens(
        self,
        w: &Q4Rows,
        first: usize,
        rows: usize,
        xs: &[QuantizedVector],
        out: &mut [f32],
    ) {
        crate::check_row_range("gemv_q4_tokens", first, rows, w.rows);
        assert_eq!(
            out.len(),
            xs.len() * rows,
            "gemv_q4_tokens: out has {} elements, expected {} tokens × {rows} rows",
            out.len(),
            xs.len()
        );
        if rows == 0 {
            return;
        }
        for (t, x) in xs.iter().enumerate() {
            assert_eq!(
                x.len(),
                w.cols,
                "gemv_q4_tokens: token {t} has {} elements, expected {}",
                x.len(),
                w.cols
            );
        }
        let k = Q4Kernel::for_isa(self.resolve());
        let r = w.rows_range(first, rows);
        #[cfg(target_arch = "x86_64")]
        if k == Q4Kernel::Vnni && k.is_supported() {
            run_tokens_vnni(r, xs, out);
            return;
        }
        for (x, y) in xs.iter().zip(out.chunks_exact_mut(rows)) {
            k.run(r, x, y, None, false);
        }
    }
}

impl Q4Rows {
    /// The bytes of rows `first..first + n` (in range: checked by the callers).
    fn rows_range(&self, first: usize, n: usize) -> Rows<'_> {
        let (vb, sb) = (self.cols / 2, self.cols / Q4_BLOCK * 2);
        Rows {
            values: &self.values()[first * vb..(first + n) * vb],
            scales: &self.scales()[first * sb..(first + n) * sb],
            cols: self.cols,
        }
    }
}

/// The kernels of [`gemv_q4`]; [`Q4Kernel::for_isa`] picks one for a resolved [`Isa`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Q4Kernel {
    Scalar,
    /// AVX2 `maddubs`/`madd`, one block per instruction pair.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 VNNI (`vpdpbusd` on `zmm`, four blocks per vector): two instructions per
    /// four blocks.
    #[cfg(target_arch = "x86_64")]
    Vnni,
    /// NEON `smull`/`smlal2`/`sadalp`.
    #[cfg(target_arch = "aarch64")]
    Neon,
    /// NEON `sdot` (the dot-product extension).
    #[cfg(target_arch = "aarch64")]
    NeonDot,
}

impl Q4Kernel {
    /// The kernel for `isa`, which must have been resolved. AVX-512 hosts use VNNI when
    /// the CPU has `avx512vnni`, `avx512bw` and `avx512vl` (else AVX2); NEON hosts use `sdot` with
    /// `dotprod` (else `smull`).
    fn for_isa(isa: Isa) -> Q4Kernel {
        match isa {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => Q4Kernel::Avx2,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                static AVX512: std::sync::OnceLock<Q4Kernel> = std::sync::OnceLock::new();
                *AVX512.get_or_init(|| {
                    if Q4Kernel::Vnni.is_supported() {
                        Q4Kernel::Vnni
                    } else {
                        Q4Kernel::Avx2
                    }
                })
            }
            #[cfg(target_arch = "aarch64")]
            Isa::Neon => {
                static NEON: std::sync::OnceLock<Q4Kernel> = std::sync::OnceLock::new();
                *NEON.get_or_init(|| {
                    if Q4Kernel::NeonDot.is_supported() {
                        Q4Kernel::NeonDot
                    } else {
                        Q4Kernel::Neon
                    }
                })
            }
            _ => Q4Kernel::Scalar,
        }
    }

    /// Whether this CPU has the kernel's features.
    fn is_supported(self) -> bool {
        match self {
            Q4Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Q4Kernel::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            #[cfg(target_arch = "x86_64")]
            Q4Kernel::Vnni => {
                is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("fma")
                    && is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512vnni")
            }
            #[cfg(target_arch = "aarch64")]
            Q4Kernel::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[cfg(target_arch = "aarch64")]
            Q4Kernel::NeonDot => {
                std::arch::is_aarch64_feature_detected!("neon")
                    && std::arch::is_aarch64_feature_detected!("dotprod")
            }
        }
    }

    /// Runs the kernel on the `y.len()` rows of `w`.
    ///
    /// # Panics
    /// If the CPU lacks the kernel's features, or the lengths disagree.
    fn run(
        self,
        w: Rows<'_>,
        x: &QuantizedVector,
        y: &mut [f32],
        bias: Option<&[f32]>,
        accumulate: bool,
    ) {
        assert!(self.is_supported(), "{self:?} is not supported by this CPU");
        let cols = w.cols;
        assert!(cols.is_multiple_of(Q4_BLOCK) && x.len() == cols);
        assert_eq!(w.values.len(), y.len() * cols / 2, "gemv_q4: nibbles and y");
        assert_eq!(
            w.scales.len(),
            y.len() * cols / Q4_BLOCK * 2,
            "gemv_q4: scales and y"
        );
        assert!(bias.is_none_or(|b| b.len() >= y.len()));
        assert_eq!(x.block_sums().len(), cols / Q4_BLOCK);
        let xq = x.values();
        let xs = x.block_sums();
        let (vb, sb) = (cols / 2, cols / Q4_BLOCK * 2);
        for r in 0..y.len() {
            let nib = &w.values[r * vb..(r + 1) * vb];
            let sc = &w.scales[r * sb..(r + 1) * sb];
            let mut acc = [0f32; LANES];
            // SAFETY (each arm): the kernel's features are present (asserted above); `nib`
            // holds `cols / 2` bytes, `sc` `cols / 16`, `xq` `cols` values and `xs`
            // `cols / 32` sums (asserted above).
            let done = match self {
                Q4Kernel::Scalar => 0,
                #[cfg(target_arch = "x86_64")]
                Q4Kernel::Avx2 => unsafe { x86::row_maddubs(nib, sc, xq, xs, &mut acc) },
                #[cfg(target_arch = "x86_64")]
                Q4Kernel::Vnni => unsafe { x86::row_vnni(nib, sc, xq, xs, &mut acc) },
                #[cfg(target_arch = "aarch64")]
                Q4Kernel::Neon => unsafe { arm::row_smull(nib, sc, xq, &mut acc) },
                #[cfg(target_arch = "aarch64")]
                Q4Kernel::NeonDot => unsafe { arm::row_sdot(nib, sc, xq, &mut acc) },
            };
            blocks_scalar(nib, sc, xq, xs, done, &mut acc);
            let s = reduce(&acc);
            let v = s * x.scale() + bias.map_or(0.0, |b| b[r]);
            y[r] = if accumulate { y[r] + v } else { v };
        }
    }
}

/// [`Isa::gemv_q4_tokens`] with the AVX-512 VNNI kernel, four tokens at a time per row
/// (`x86::row_vnni_tokens`: each group of nibbles unpacked once for the four), then each
/// token's tail, reduction and scale as [`Q4Kernel::run`]: the same bits per token.
/// `out` is `[xs.len(), rows]`; the tokens' lengths are checked by the caller.
#[cfg(target_arch = "x86_64")]
fn run_tokens_vnni(w: Rows<'_>, xs: &[QuantizedVector], out: &mut [f32]) {
    let cols = w.cols;
    assert!(cols.is_multiple_of(Q4_BLOCK));
    let rows = w.scales.len() / (cols / Q4_BLOCK * 2).max(1);
    assert_eq!(out.len(), xs.len() * rows, "gemv_q4_tokens: out length");
    let (vb, sb) = (cols / 2, cols / Q4_BLOCK * 2);
    for r in 0..rows {
        let nib = &w.values[r * vb..(r + 1) * vb];
        let sc = &w.scales[r * sb..(r + 1) * sb];
        let mut t0 = 0;
        while t0 < xs.len() {
            let group = &xs[t0..(t0 + 4).min(xs.len())];
            let mut acc = [[0f32; LANES]; 4];
            // SAFETY: VNNI and the rest of the kernel's features are present (checked by
            // the caller); `nib` holds `cols / 2` bytes, `sc` `cols / 16`, and every token
            // `cols` values and `cols / 32` sums (checked by the caller).
            let done = unsafe {
                match group {
                    [a] => tokens_vnni::<1>([a], nib, sc, &mut acc),
                    [a, b] => tokens_vnni::<2>([a, b], nib, sc, &mut acc),
                    [a, b, c] => tokens_vnni::<3>([a, b, c], nib, sc, &mut acc),
                    [a, b, c, d] => tokens_vnni::<4>([a, b, c, d], nib, sc, &mut acc),
                    _ => unreachable!("groups of 1 to 4 tokens"),
                }
            };
            for (k, x) in group.iter().enumerate() {
                let acc = &mut acc[k];
                blocks_scalar(nib, sc, x.values(), x.block_sums(), done, acc);
                out[(t0 + k) * rows + r] = reduce(acc) * x.scale() + 0.0;
            }
            t0 += group.len();
        }
    }
}

/// `x86::row_vnni_tokens` for the `T` tokens of `group`, into `acc[..T]`.
///
/// # Safety
/// As `x86::row_vnni_tokens`.
#[cfg(target_arch = "x86_64")]
unsafe fn tokens_vnni<const T: usize>(
    group: [&QuantizedVector; T],
    nib: &[u8],
    sc: &[u8],
    acc: &mut [[f32; LANES]; 4],
) -> usize {
    let mut a = [[0f32; LANES]; T];
    // SAFETY: as the caller vouches for.
    let done = unsafe {
        x86::row_vnni_tokens::<T>(
            nib,
            sc,
            group.map(QuantizedVector::values),
            group.map(QuantizedVector::block_sums),
            &mut a,
        )
    };
    acc[..T].copy_from_slice(&a);
    done
}

/// The exact integer dot product of block `b`: `Σ (u − 8)·x`.
#[inline(always)]
fn block_dot(nib: &[u8], xq: &[i8], xs: &[i32], b: usize) -> i32 {
    let n = &nib[b * BLOCK_BYTES..(b + 1) * BLOCK_BYTES];
    let x = &xq[b * Q4_BLOCK..(b + 1) * Q4_BLOCK];
    let mut s = 0i32;
    for j in 0..BLOCK_BYTES {
        s += i32::from(n[j] & 15) * i32::from(x[j]);
        s += i32::from(n[j] >> 4) * i32::from(x[j + BLOCK_BYTES]);
    }
    s - 8 * xs[b]
}

/// The blocks `first..` of one row into the accumulators, in the fixed order (the
/// portable kernel, and the tail of the SIMD ones).
#[inline(always)]
fn blocks_scalar(
    nib: &[u8],
    sc: &[u8],
    xq: &[i8],
    xs: &[i32],
    first: usize,
    acc: &mut [f32; LANES],
) {
    for b in first..xs.len() {
        let d = bf16_to_f32(u16::from_le_bytes([sc[2 * b], sc[2 * b + 1]]));
        let s = block_dot(nib, xq, xs, b) as f32;
        acc[b % LANES] = s.mul_add(d, acc[b % LANES]);
    }
}

/// The fixed reduction of the accumulators: `((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 +
/// a7))` (the order of the AVX2 horizontal sum).
#[inline(always)]
fn reduce(a: &[f32; LANES]) -> f32 {
    let s = [a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7]];
    (s[0] + s[2]) + (s[1] + s[3])
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(target_arch = "aarch64")]
mod arm;

#[cfg(test)]
mod tests;
