//! Several int8 tokens against the same int8 weight rows: the text prefill of `--quantize`
//! (reference: `pocket_tts/quantization.py`, torch's dynamic int8 linears applied to every
//! prompt token). Each output is exactly what [`crate::gemv_i8_q8`] gives for that token
//! (the same exact integer dot product, scaled the same way), but a block of weight rows is
//! read once for up to four tokens at a time, and one call covers every token: with AVX-512
//! VNNI, one weight load and one offset per 64 weights serve four `vpdpbusd`s; on NEON, one
//! weight load per 16 weights serves four `sdot`s (or four `smull`/`smlal2`/`sadalp`
//! without the dot-product extension). The AVX2 and scalar kernels run
//! [`crate::gemv_i8_q8`]'s kernel once per token.

use super::Q8Kernel;
use crate::{QuantizedRows, QuantizedVector};

impl crate::Isa {
    /// `out[t · rows + r] = (Σ_c q[first + r][c] · x_t[c]) · scales[first + r] · x_t.scale`
    /// for every token `x_t` of `xs` and `r < rows`: `out` is `[xs.len(), rows]`
    /// row-major, bit-identical to [`crate::Isa::gemv_i8_q8`] on each token without bias
    /// and without accumulation. Meant for blocks of rows that fit in L1 (a few KiB).
    ///
    /// # Panics
    /// If a token's length is not `w.cols()`, `first + rows > w.rows()`, or
    /// `out.len() != xs.len() * rows`.
    pub fn gemv_i8_q8_tokens(
        self,
        w: &QuantizedRows,
        first: usize,
        rows: usize,
        xs: &[QuantizedVector],
        out: &mut [f32],
    ) {
        let cols = w.cols();
        crate::check_row_range("gemv_i8_q8_tokens", first, rows, w.rows());
        assert_eq!(
            out.len(),
            xs.len() * rows,
            "gemv_i8_q8_tokens: out has {} elements, expected {} tokens × {rows} rows",
            out.len(),
            xs.len()
        );
        for (t, x) in xs.iter().enumerate() {
            assert_eq!(
                x.len(),
                cols,
                "gemv_i8_q8_tokens: token {t} has {} elements, expected {cols}",
                x.len()
            );
        }
        let q = &w.values()[first * cols..(first + rows) * cols];
        let scales = &w.scales()[first..first + rows];
        Q8Kernel::for_isa(self.resolve()).run_tokens(q, scales, cols, xs, out);
    }
}

impl Q8Kernel {
    /// [`crate::Isa::gemv_i8_q8_tokens`] with this kernel on the rows `q`
    /// (`[scales.len(), cols]`): `out[t · rows + r]` for every token `t` of `xs`.
    ///
    /// # Panics
    /// If the CPU lacks the kernel's features, or the lengths disagree:
    /// `q.len() != scales.len() · cols`, a token's length is not `cols`, or
    /// `out.len() != xs.len() · scales.len()`.
    pub(super) fn run_tokens(
        self,
        q: &[i8],
        scales: &[f32],
        cols: usize,
        xs: &[QuantizedVector],
        out: &mut [f32],
    ) {
        let rows = scales.len();
        assert!(self.is_supported(), "{self:?} is not supported by this CPU");
        assert_eq!(
            q.len(),
            rows * cols,
            "gemv_i8_q8_tokens: weights and scales disagree"
        );
        assert!(
            xs.iter().all(|x| x.len() == cols),
            "gemv_i8_q8_tokens: token length"
        );
        assert_eq!(out.len(), xs.len() * rows, "gemv_i8_q8_tokens: out length");
        if rows == 0 || xs.is_empty() {
            return;
        }
        match self {
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx512Vnni => {
                for (i, group) in xs.chunks(4).enumerate() {
                    // SAFETY: AVX-512F/BW/VNNI are present (checked above); `q` holds
                    // `rows` rows of `cols` values, every token has `cols` values and
                    // `out` holds `xs.len() · rows` values (all checked above); `group`
                    // has 1 to 4 tokens (`chunks(4)` of a non-empty slice).
                    unsafe { x86::rows_vnni(q, scales, cols, group, 4 * i, out) };
                }
            }
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::Neon => {
                for (i, group) in xs.chunks(4).enumerate() {
                    // SAFETY: NEON is present (checked above); lengths as for VNNI.
                    unsafe { arm::rows_neon(q, scales, cols, group, 4 * i, out) };
                }
            }
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::NeonDot => {
                for (i, group) in xs.chunks(4).enumerate() {
                    // SAFETY: NEON and dotprod are present (checked above); lengths as
                    // for VNNI.
                    unsafe { arm::rows_neondot(q, scales, cols, group, 4 * i, out) };
                }
            }
            _ => {
                for (x, y) in xs.iter().zip(out.chunks_exact_mut(rows)) {
                    self.run(q, scales, &x.q, x.sum, x.scale, y, None, false);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use crate::QuantizedVector;

    /// The tokens of `group` (at most 4; token `t0 + k` of the call) against every row of
    /// `q` (`[rows, cols]`): per 64 columns one weight load, offset by 128 to unsigned
    /// (`vpdpbusd` multiplies unsigned by signed bytes; `128 · Σ x` is subtracted at the
    /// end, as in `rows_q8_avx512vnni`), and one `vpdpbusd` per token. Writes
    /// `out[(t0 + k) · rows + r]` like `gemv_i8_q8`'s `finish` without bias.
    ///
    /// # Safety
    /// AVX-512F, AVX-512BW and AVX-512 VNNI are available; `q.len() == rows · cols` with
    /// `rows = scales.len()`, every token of `group` has `cols` values, `group.len() ≤ 4`
    /// and `out.len() ≥ (t0 + group.len()) · rows`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn rows_vnni(
        q: &[i8],
        scales: &[f32],
        cols: usize,
        group: &[QuantizedVector],
        t0: usize,
        out: &mut [f32],
    ) {
        let rows = scales.len();
        debug_assert_eq!(q.len(), rows * cols);
        debug_assert!(group.len() <= 4);
        let nt = group.len();
        let n64 = cols / 64 * 64;
        let tail: __mmask64 = (1u64 << (cols % 64)).wrapping_sub(1);
        let offset = _mm512_set1_epi8(-128);
        // Unused token slots point at the first token; their sums are never read.
        let xp: [*const i8; 4] = std::array::from_fn(|k| group[k.min(nt - 1)].values().as_ptr());
        for r in 0..rows {
            let wp = q[r * cols..(r + 1) * cols].as_ptr();
            let mut acc = [_mm512_setzero_si512(); 4];
            let mut c = 0;
            while c < n64 {
                // SAFETY: `c + 64 <= cols`: 64 bytes of row `r` and of every token.
                unsafe {
                    let wv =
                        _mm512_xor_si512(_mm512_loadu_si512(wp.add(c) as *const __m512i), offset);
                    for k in 0..4 {
                        let xv = _mm512_loadu_si512(xp[k].add(c) as *const __m512i);
                        acc[k] = _mm512_dpbusd_epi32(acc[k], wv, xv);
                    }
                }
                c += 64;
            }
            if tail != 0 {
                // SAFETY: the `cols % 64` bytes `c..cols` exist; masked-off bytes are not
                // accessed.
                unsafe {
                    let wv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, wp.add(c)), offset);
                    for k in 0..4 {
                        let xv = _mm512_maskz_loadu_epi8(tail, xp[k].add(c));
                        acc[k] = _mm512_dpbusd_epi32(acc[k], wv, xv);
                    }
                }
            }
            for (k, x) in group.iter().enumerate() {
                let s = _mm512_reduce_add_epi32(acc[k]).wrapping_sub(x.sum().wrapping_mul(128));
                let v = s as f32 * (scales[r] * x.scale()) + 0.0;
                out[(t0 + k) * rows + r] = v;
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    use super::super::arm::{Dot16, Sdot, Smull};
    use super::super::finish;
    use crate::QuantizedVector;

    /// The `T` tokens of `group` (token `t0 + k` of the call) against every row of `q`
    /// (`[rows, cols]`): per 32 columns two weight loads and, per token, two activation
    /// loads and two [`Dot16::dot16`] into two accumulators (`2·T` in all), then one step
    /// of 16 columns and a scalar tail of `cols % 16`. Writes `out[(t0 + k) · rows + r]`
    /// like `gemv_i8_q8`'s `finish` without bias.
    ///
    /// # Safety
    /// The CPU has `D`'s features and the caller enables them; `q.len() == rows · cols`
    /// with `rows = scales.len()`, `group.len() == T`, every token of `group` has `cols`
    /// values and `out.len() ≥ (t0 + T) · rows`.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // acc and xp are indexed by token together
    unsafe fn tile<D: Dot16, const T: usize>(
        q: &[i8],
        scales: &[f32],
        cols: usize,
        group: &[QuantizedVector],
        t0: usize,
        out: &mut [f32],
    ) {
        let rows = scales.len();
        debug_assert_eq!(q.len(), rows * cols);
        debug_assert_eq!(group.len(), T);
        let (n32, n16) = (cols / 32 * 32, cols / 16 * 16);
        let xp: [*const i8; T] = std::array::from_fn(|k| group[k].values().as_ptr());
        for r in 0..rows {
            let row = &q[r * cols..(r + 1) * cols];
            let wp = row.as_ptr();
            // SAFETY (here and in the reductions below): NEON is present (`D`'s features
            // include it; caller).
            let mut acc = [[unsafe { vdupq_n_s32(0) }; 2]; T];
            let mut c = 0;
            while c < n32 {
                // SAFETY: `c + 32 <= cols`: 32 values of row `r` and of every token;
                // `D`'s features are present (caller).
                unsafe {
                    let w0 = vld1q_s8(wp.add(c));
                    let w1 = vld1q_s8(wp.add(c + 16));
                    for k in 0..T {
                        acc[k][0] = D::dot16(acc[k][0], w0, vld1q_s8(xp[k].add(c)));
                        acc[k][1] = D::dot16(acc[k][1], w1, vld1q_s8(xp[k].add(c + 16)));
                    }
                }
                c += 32;
            }
            if c < n16 {
                // SAFETY: `c + 16 <= cols`, as above.
                unsafe {
                    let w0 = vld1q_s8(wp.add(c));
                    for k in 0..T {
                        acc[k][0] = D::dot16(acc[k][0], w0, vld1q_s8(xp[k].add(c)));
                    }
                }
                c += 16;
            }
            for (k, x) in group.iter().enumerate() {
                // SAFETY: as above.
                let mut s = unsafe { vaddvq_s32(vaddq_s32(acc[k][0], acc[k][1])) };
                for (&a, &b) in row[c..].iter().zip(&x.values()[c..]) {
                    s += i32::from(a) * i32::from(b);
                }
                let y = &mut out[(t0 + k) * rows..];
                finish(s as f32, scales[r] * x.scale(), r, y, None, false);
            }
        }
    }

    /// [`tile`] for a `group` of 1 to 4 tokens.
    ///
    /// # Safety
    /// As [`tile`], with `1 <= group.len() <= 4` for `T`.
    #[inline(always)]
    unsafe fn group<D: Dot16>(
        q: &[i8],
        scales: &[f32],
        cols: usize,
        group: &[QuantizedVector],
        t0: usize,
        out: &mut [f32],
    ) {
        // SAFETY: `T == group.len()`; the rest as required (caller).
        unsafe {
            match group.len() {
                1 => tile::<D, 1>(q, scales, cols, group, t0, out),
                2 => tile::<D, 2>(q, scales, cols, group, t0, out),
                3 => tile::<D, 3>(q, scales, cols, group, t0, out),
                4 => tile::<D, 4>(q, scales, cols, group, t0, out),
                n => unreachable!("a group of {n} tokens"),
            }
        }
    }

    /// The tokens of `group` (at most 4) against every row of `q` with
    /// `smull`/`smlal2`/`sadalp` ([`Smull`]); see [`tile`].
    ///
    /// # Safety
    /// NEON is available; `q.len() == rows · cols` with `rows = scales.len()`, every
    /// token of `group` has `cols` values, `1 <= group.len() <= 4` and
    /// `out.len() ≥ (t0 + group.len()) · rows`.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn rows_neon(
        q: &[i8],
        scales: &[f32],
        cols: usize,
        group: &[QuantizedVector],
        t0: usize,
        out: &mut [f32],
    ) {
        // SAFETY: NEON is present and enabled here; the rest as required (caller).
        unsafe { self::group::<Smull>(q, scales, cols, group, t0, out) }
    }

    /// [`rows_neon`] with `sdot` ([`Sdot`]).
    ///
    /// # Safety
    /// NEON and the dot-product extension are available; the rest as [`rows_neon`].
    #[target_feature(enable = "neon,dotprod")]
    pub(super) unsafe fn rows_neondot(
        q: &[i8],
        scales: &[f32],
        cols: usize,
        group: &[QuantizedVector],
        t0: usize,
        out: &mut [f32],
    ) {
        // SAFETY: NEON and dotprod are present and enabled here; the rest as required
        // (caller).
        unsafe { self::group::<Sdot>(q, scales, cols, group, t0, out) }
    }
}
