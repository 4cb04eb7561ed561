//! The AVX-512 VNNI kernel of [`crate::Isa::gemv_i8_q8_tokens`] (the text prefill of
//! `--quantize`): tiles of four weight rows × four tokens, sixteen `i32` accumulators.
//!
//! The per-row kernel of `tokens.rs` keeps one token's products of one row in a vector
//! and reduces it horizontally for every (row, token) pair, and offsets the weights with
//! one `xor` per 64 of them. Here:
//! - each 64 columns load four weight vectors and four token vectors for sixteen
//!   `vpdpbusd`s (half a load per product, no other instruction in the loop);
//! - the tokens are the unsigned operand: [`QuantizedVector::offset_values`] holds
//!   `x + 128`, and `128 · Σ_c w[r][c]` (each row's sum, computed once per call) is
//!   subtracted from the row's sums, so the weights are read as stored;
//! - the sixteen accumulators are reduced together by one tree of `unpack`/`shuffle` and
//!   `add` (45 instructions for 16 sums instead of ~10 per sum).
//!
//! Every sum is the exact integer dot product, so each output is bit-identical to
//! [`crate::Isa::gemv_i8_q8`] on that token: `(s as f32) · (scale[r] · x.scale) + 0`.

use std::arch::x86_64::*;

use crate::QuantizedVector;

/// Rows and tokens of a full tile.
const TILE: usize = 4;

/// `out[t · rows + r]` for every token `t` of `xs` and row `r` of `q` (`[rows, cols]`,
/// `rows = scales.len()`), as [`crate::Isa::gemv_i8_q8_tokens`] defines it.
///
/// # Safety
/// AVX-512F, AVX-512BW and AVX-512 VNNI are available; `q.len() == rows · cols`, every
/// token has `cols` values and `out.len() == xs.len() · rows`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) unsafe fn run(
    q: &[i8],
    scales: &[f32],
    cols: usize,
    xs: &[QuantizedVector],
    out: &mut [f32],
) {
    let rows = scales.len();
    debug_assert_eq!(q.len(), rows * cols);
    debug_assert_eq!(out.len(), xs.len() * rows);
    // `128 · Σ_c w[r][c]` for every row (wrapping as the sums do).
    // (A loop, not a closure: a closure would not inherit the target features.)
    let mut offsets = Vec::with_capacity(rows);
    for r in 0..rows {
        // SAFETY: row `r` has `cols` values; the features are enabled.
        offsets.push(unsafe { row_sum(&q[r * cols..(r + 1) * cols]) }.wrapping_mul(128));
    }
    let ctx = Ctx {
        q: q.as_ptr(),
        cols,
        rows,
        scales,
        offsets: &offsets,
        out: out.as_mut_ptr(),
    };
    let mut t0 = 0;
    while t0 < xs.len() {
        let tt = TILE.min(xs.len() - t0);
        let group = &xs[t0..t0 + tt];
        let mut r0 = 0;
        while r0 < rows {
            let rr = TILE.min(rows - r0);
            // SAFETY: rows `r0..r0 + rr` and tokens `t0..t0 + tt` are in range; the rest
            // as the caller vouches for.
            unsafe {
                match (rr, tt) {
                    (4, 4) => tile::<4, 4>(&ctx, r0, t0, group),
                    (4, 3) => tile::<4, 3>(&ctx, r0, t0, group),
                    (4, 2) => tile::<4, 2>(&ctx, r0, t0, group),
                    (4, 1) => tile::<4, 1>(&ctx, r0, t0, group),
                    (3, 4) => tile::<3, 4>(&ctx, r0, t0, group),
                    (3, 3) => tile::<3, 3>(&ctx, r0, t0, group),
                    (3, 2) => tile::<3, 2>(&ctx, r0, t0, group),
                    (3, 1) => tile::<3, 1>(&ctx, r0, t0, group),
                    (2, 4) => tile::<2, 4>(&ctx, r0, t0, group),
                    (2, 3) => tile::<2, 3>(&ctx, r0, t0, group),
                    (2, 2) => tile::<2, 2>(&ctx, r0, t0, group),
                    (2, 1) => tile::<2, 1>(&ctx, r0, t0, group),
                    (1, 4) => tile::<1, 4>(&ctx, r0, t0, group),
                    (1, 3) => tile::<1, 3>(&ctx, r0, t0, group),
                    (1, 2) => tile::<1, 2>(&ctx, r0, t0, group),
                    (1, 1) => tile::<1, 1>(&ctx, r0, t0, group),
                    (r, t) => unreachable!("a tile of {r} rows × {t} tokens"),
                }
            }
            r0 += rr;
        }
        t0 += tt;
    }
}

/// The operands shared by every tile of one [`run`].
struct Ctx<'a> {
    /// `[rows, cols]` weights.
    q: *const i8,
    cols: usize,
    rows: usize,
    scales: &'a [f32],
    /// `128 · Σ_c w[r][c]` per row.
    offsets: &'a [i32],
    /// `[tokens, rows]` outputs.
    out: *mut f32,
}

/// `Σ_c w[c]` of one row, exactly (`vpdpbusd` of the row with ones).
///
/// # Safety
/// AVX-512F, AVX-512BW and AVX-512 VNNI are enabled.
#[inline(always)]
unsafe fn row_sum(row: &[i8]) -> i32 {
    let n = row.len();
    let p = row.as_ptr();
    // SAFETY: loads inside the row (full vectors below `n`, masked for the tail); the
    // features are enabled (caller).
    unsafe {
        let ones = _mm512_set1_epi8(1);
        let mut acc = _mm512_setzero_si512();
        let mut c = 0;
        while c + 64 <= n {
            acc = _mm512_dpbusd_epi32(acc, ones, _mm512_loadu_si512(p.add(c).cast()));
            c += 64;
        }
        if c < n {
            let m = (1u64 << (n - c)) - 1;
            acc = _mm512_dpbusd_epi32(acc, ones, _mm512_maskz_loadu_epi8(m, p.add(c)));
        }
        _mm512_reduce_add_epi32(acc)
    }
}

/// Rows `r0..r0 + R` × the `T` tokens of `group` (tokens `t0..t0 + T` of the call).
///
/// # Safety
/// The features of [`run`] are enabled; `r0 + R <= ctx.rows`, `group.len() == T`, every
/// token has `ctx.cols` values, and `ctx` describes valid buffers (see [`run`]).
#[inline(always)]
unsafe fn tile<const R: usize, const T: usize>(
    ctx: &Ctx<'_>,
    r0: usize,
    t0: usize,
    group: &[QuantizedVector],
) {
    let cols = ctx.cols;
    let xp: [*const u8; T] = std::array::from_fn(|k| group[k].offset_values().as_ptr());
    // SAFETY: row `r0 + r < rows` starts `(r0 + r) · cols` values into `q`.
    let wp: [*const i8; R] = std::array::from_fn(|r| unsafe { ctx.q.add((r0 + r) * cols) });
    // SAFETY (all intrinsics): the features are enabled (caller); every load below reads
    // columns `c..c + 64` (`c + 64 <= cols`) or the masked `c..cols` of a row or token.
    unsafe {
        let mut acc = [[_mm512_setzero_si512(); T]; R];
        let mut c = 0;
        while c + 64 <= cols {
            let mut xv = [_mm512_setzero_si512(); T];
            for (v, x) in xv.iter_mut().zip(xp) {
                *v = _mm512_loadu_si512(x.add(c).cast());
            }
            for (a, w) in acc.iter_mut().zip(wp) {
                let w = _mm512_loadu_si512(w.add(c).cast());
                for (a, &x) in a.iter_mut().zip(&xv) {
                    *a = _mm512_dpbusd_epi32(*a, x, w);
                }
            }
            c += 64;
        }
        if c < cols {
            let m = (1u64 << (cols - c)) - 1;
            let mut xv = [_mm512_setzero_si512(); T];
            for (v, x) in xv.iter_mut().zip(xp) {
                *v = _mm512_maskz_loadu_epi8(m, x.add(c).cast());
            }
            for (a, w) in acc.iter_mut().zip(wp) {
                let w = _mm512_maskz_loadu_epi8(m, w.add(c));
                for (a, &x) in a.iter_mut().zip(&xv) {
                    *a = _mm512_dpbusd_epi32(*a, x, w);
                }
            }
        }
        // The 16 sums: element `4k + r` is row `r0 + r`, token `t0 + k` (zeros outside
        // the tile).
        let mut v = [[_mm512_setzero_si512(); 4]; 4];
        for (r, a) in acc.iter().enumerate() {
            for (k, &a) in a.iter().enumerate() {
                v[k][r] = a;
            }
        }
        let s = reduce16(v);
        let mut offs = [0i32; 4];
        let mut sc = [0f32; 4];
        offs[..R].copy_from_slice(&ctx.offsets[r0..r0 + R]);
        sc[..R].copy_from_slice(&ctx.scales[r0..r0 + R]);
        let mut xsc = [0f32; 16];
        for (k, x) in group.iter().enumerate() {
            xsc[4 * k..4 * k + 4].fill(x.scale());
        }
        let s = _mm512_sub_epi32(
            s,
            _mm512_broadcast_i32x4(_mm_loadu_si128(offs.as_ptr().cast())),
        );
        // `scale[r] · x.scale`, then `s · that + 0` as `finish` computes it (no FMA).
        let scale = _mm512_mul_ps(
            _mm512_broadcast_f32x4(_mm_loadu_ps(sc.as_ptr())),
            _mm512_loadu_ps(xsc.as_ptr()),
        );
        let y = _mm512_add_ps(
            _mm512_mul_ps(_mm512_cvtepi32_ps(s), scale),
            _mm512_setzero_ps(),
        );
        let mut ys = [0f32; 16];
        _mm512_storeu_ps(ys.as_mut_ptr(), y);
        for k in 0..T {
            // SAFETY: token `t0 + k` < tokens and rows `r0..r0 + R` <= rows: inside `out`.
            let dst = ctx.out.add((t0 + k) * ctx.rows + r0);
            std::ptr::copy_nonoverlapping(ys.as_ptr().add(4 * k), dst, R);
        }
    }
}

/// Sums each of sixteen `i32` vectors `v[k][r]` into element `4k + r` of one vector.
///
/// # Safety
/// AVX-512F is enabled.
#[inline(always)]
unsafe fn reduce16(v: [[__m512i; 4]; 4]) -> __m512i {
    // SAFETY: register-only AVX-512F operations (enabled by the caller).
    unsafe {
        let [u0, u1, u2, u3] = v;
        let p = pair(rows4(u0), rows4(u1));
        let q = pair(rows4(u2), rows4(u3));
        pair(p, q)
    }
}

/// One token's four rows: rows 0,1 and 2,3 interleaved and added, then the pairs, so each
/// 128-bit lane holds the four rows' partial sums over that lane (no closures: they would
/// not inherit the caller's target features and the intrinsics would not be inlined).
///
/// # Safety
/// AVX-512F is enabled.
#[inline(always)]
unsafe fn rows4([a, b, c, d]: [__m512i; 4]) -> __m512i {
    // SAFETY: register-only AVX-512F operations (enabled by the caller).
    unsafe {
        let ab = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
        let cd = _mm512_add_epi32(_mm512_unpacklo_epi32(c, d), _mm512_unpackhi_epi32(c, d));
        _mm512_add_epi32(_mm512_unpacklo_epi64(ab, cd), _mm512_unpackhi_epi64(ab, cd))
    }
}

/// Lanes `[a0+a1, a2+a3, b0+b1, b2+b3]` of two vectors of four 128-bit lanes.
///
/// # Safety
/// AVX-512F is enabled.
#[inline(always)]
unsafe fn pair(a: __m512i, b: __m512i) -> __m512i {
    // SAFETY: register-only AVX-512F operations (enabled by the caller).
    unsafe {
        _mm512_add_epi32(
            _mm512_shuffle_i32x4::<0x88>(a, b),
            _mm512_shuffle_i32x4::<0xDD>(a, b),
        )
    }
}
