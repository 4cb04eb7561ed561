//! Several int8 tokens against the same int8 weight rows: the text prefill of `--quantize`
//! (reference: `pocket_tts/quantization.py`, torch's dynamic int8 linears applied to every
//! prompt token). Each output is exactly what [`crate::gemv_i8_q8`] gives for that token
//! (the same exact integer dot product, scaled the same way), but a block of weight rows is
//! read once for up to four tokens at a time, and one call covers every token: with AVX-512
//! VNNI, tiles of four rows × four tokens (`tokens_vnni.rs`: four weight and four token
//! loads per 64 columns serve sixteen `vpdpbusd`s); on NEON, one
//! weight load per 16 weights serves four `sdot`s (or four `smull`/`smlal2`/`sadalp`
//! without the dot-product extension); on WebAssembly SIMD128, each token widened to 16
//! bits once, then one widened weight load per 16 weights serves four tokens'
//! `i32x4.dot_i16x8_s` pairs (`wasm.rs`). The AVX2 and scalar kernels run
//! [`crate::gemv_i8_q8`]'s kernel once per token.

use super::Q8Kernel;
#[cfg(target_arch = "aarch64")]
use super::{finish, DotI8, Q8Job};
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
            // SAFETY: VNNI is present (asserted above), the lengths are checked. (One
            // token goes to the GEMV below: the tiles' per-row offsets would double its
            // integer work.)
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx512Vnni if super::tokens_amx::takes(xs.len(), rows, cols) => unsafe {
                // SAFETY: AMX is granted and the sizes suit it (`takes`); VNNI is present
                // for its tail rows; the lengths are checked.
                super::tokens_amx::run(q, scales, cols, xs, out)
            },
            #[cfg(target_arch = "x86_64")]
            Q8Kernel::Avx512Vnni if xs.len() > 1 => unsafe {
                super::tokens_vnni::run(q, scales, cols, xs, out)
            },
            #[cfg(target_arch = "aarch64")]
            Q8Kernel::Neon | Q8Kernel::NeonDot => self.run_groups(q, scales, cols, xs, out),
            // SAFETY: SIMD128 is compiled in; lengths checked above.
            #[cfg(target_arch = "wasm32")]
            Q8Kernel::Simd128 => unsafe { super::wasm::tokens_simd128(q, scales, cols, xs, out) },
            _ => {
                for (x, y) in xs.iter().zip(out.chunks_exact_mut(rows)) {
                    self.run(q, scales, &x.q, x.sum, x.scale, y, None, false);
                }
            }
        }
    }

    /// [`Self::run_tokens`] with [`tile`], four tokens at a time, for a kernel whose
    /// features are present and lengths checked by [`Self::run_tokens`].
    #[cfg(target_arch = "aarch64")]
    fn run_groups(
        self,
        q: &[i8],
        scales: &[f32],
        cols: usize,
        xs: &[QuantizedVector],
        out: &mut [f32],
    ) {
        for (i, group) in xs.chunks(4).enumerate() {
            let job = Group {
                q,
                scales,
                cols,
                group,
                t0: 4 * i,
                out: &mut *out,
            };
            // SAFETY: the kernel's features are present, `q` holds `rows` rows of `cols`
            // values, every token has `cols` values and `out` holds `xs.len() · rows`
            // values (all checked by `run_tokens`); `group` has 1 to 4 tokens (`chunks(4)`
            // of a non-empty slice).
            unsafe { self.run_job(job) };
        }
    }
}

/// The operands of [`tile`]: up to four tokens `group` (tokens `t0..` of the call)
/// against the rows `q` (`[scales.len(), cols]`), written to `out`. *Valid*:
/// `q.len() == rows · cols` with `rows = scales.len()`, every token of `group` has `cols`
/// values, `1 <= group.len() <= 4` and `out.len() ≥ (t0 + group.len()) · rows`.
#[cfg(target_arch = "aarch64")]
struct Group<'a> {
    q: &'a [i8],
    scales: &'a [f32],
    cols: usize,
    group: &'a [QuantizedVector],
    t0: usize,
    out: &'a mut [f32],
}

#[cfg(target_arch = "aarch64")]
impl Q8Job for Group<'_> {
    #[inline(always)]
    unsafe fn run<D: DotI8>(self) {
        let Group {
            q,
            scales,
            cols,
            group,
            t0,
            out,
        } = self;
        // SAFETY: `T == group.len()`; the rest as the caller vouches for.
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
}

/// The `T` tokens of `group` (token `t0 + k` of the call) against every row of `q`
/// (`[rows, cols]`): per `2·W` columns two weight loads ([`DotI8::load_w`]: one load, and
/// for VNNI one offset, serve every token) and, per token, two [`DotI8::dot`] into two
/// accumulators (`2·T` in all); then one step of `W` columns and the tail (masked, or
/// scalar after the reduction). Writes `out[(t0 + k) · rows + r]` like `gemv_i8_q8`'s
/// `finish` without bias.
///
/// # Safety
/// The CPU has `D`'s features and the caller enables them; `q.len() == rows · cols` with
/// `rows = scales.len()`, `group.len() == T`, every token of `group` has `cols` values
/// and `out.len() ≥ (t0 + T) · rows`.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn tile<D: DotI8, const T: usize>(
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
    let w = D::W;
    let (n2, n1) = (cols / (2 * w) * (2 * w), cols / w * w);
    let xp: [*const i8; T] = std::array::from_fn(|k| group[k].values().as_ptr());
    for r in 0..rows {
        let row = &q[r * cols..(r + 1) * cols];
        let wp = row.as_ptr();
        // SAFETY (the primitives, here and below): `D`'s features are enabled (caller).
        let mut acc = [[unsafe { D::zero() }; 2]; T];
        let mut c = 0;
        while c < n2 {
            // SAFETY: `c + 2·W <= cols`: `2·W` values of row `r` and of every token.
            unsafe {
                let w0 = D::load_w(wp.add(c));
                let w1 = D::load_w(wp.add(c + w));
                for (a, x) in acc.iter_mut().zip(xp) {
                    a[0] = D::dot(a[0], w0, x.add(c));
                    a[1] = D::dot(a[1], w1, x.add(c + w));
                }
            }
            c += 2 * w;
        }
        if c < n1 {
            // SAFETY: `c + W <= cols`, as above.
            unsafe {
                let w0 = D::load_w(wp.add(c));
                for (a, x) in acc.iter_mut().zip(xp) {
                    a[0] = D::dot(a[0], w0, x.add(c));
                }
            }
            c += w;
        }
        if D::MASKED_TAIL && c < cols {
            let n = cols - c;
            // SAFETY: the `n < W` values `c..cols` of row `r` and of every token.
            unsafe {
                let w0 = D::load_w_first(wp.add(c), n);
                for (a, x) in acc.iter_mut().zip(xp) {
                    a[1] = D::dot_first(a[1], w0, x.add(c), n);
                }
            }
        }
        // The scalar tail (none after a masked one).
        let tail = if D::MASKED_TAIL { cols } else { n1 };
        for (k, x) in group.iter().enumerate() {
            // SAFETY: as above.
            let mut s = unsafe { D::sum(D::add(acc[k][0], acc[k][1]), x.sum()) };
            for (&a, &b) in row[tail..].iter().zip(&x.values()[tail..]) {
                s += i32::from(a) * i32::from(b);
            }
            let y = &mut out[(t0 + k) * rows..];
            finish(s as f32, scales[r] * x.scale(), r, y, None, false);
        }
    }
}
