//! Several int8 tokens against the same int8 weight rows: the text prefill of `--quantize`
//! (reference: `pocket_tts/quantization.py`, torch's dynamic int8 linears applied to every
//! prompt token). Each output is exactly what [`crate::gemv_i8_q8`] gives for that token
//! (the same exact integer dot product, scaled the same way), but a block of weight rows is
//! read once for up to four tokens at a time: one weight load and one offset per 64 weights
//! serve four `vpdpbusd`s, and one call covers every token.

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
        if rows == 0 || xs.is_empty() {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.resolve() == crate::Isa::Avx512 && vnni() {
            let q = &w.values()[first * cols..(first + rows) * cols];
            let scales = &w.scales()[first..first + rows];
            for (i, group) in xs.chunks(4).enumerate() {
                // SAFETY: AVX-512F/BW/VNNI are present (`vnni()`); `q` holds `rows` rows of
                // `cols` values, every token has `cols` values and `out` holds
                // `xs.len() · rows` values (all checked above).
                unsafe { x86::rows_vnni(q, scales, cols, group, 4 * i, out) };
            }
            return;
        }
        for (x, y) in xs.iter().zip(out.chunks_exact_mut(rows)) {
            self.gemv_i8_q8(w, first, x, y, None, false);
        }
    }
}

/// Whether this CPU has AVX-512F, BW and VNNI (detected once).
#[cfg(target_arch = "x86_64")]
fn vnni() -> bool {
    static VNNI: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *VNNI.get_or_init(|| {
        is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
    })
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
