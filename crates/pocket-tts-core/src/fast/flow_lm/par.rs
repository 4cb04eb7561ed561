//! Threading: the step's GEMVs split by weight rows and attention split by heads over
//! [`pocket_tts_simd::Team`]s, the prefill GEMM split by weight rows, and the teams'
//! settings (Python package pocket-tts 4.0.1: the matrix products of
//! `modules/transformer.py` and `modules/mlp.py`, the attention of `modules/attention.py`).
//!
//! Outputs are shared out with [`SplitMut`] (the GEMV's rows, the attention's per-head
//! scores and outputs) and, for the prefill GEMM whose parts write interleaved columns,
//! with [`ColumnSplit`].

use std::ops::Range;

use pocket_tts_simd::{self as simd, SplitMut};

use super::{FlowLmFast, LayerLin, Lin, LinW, W};
use crate::fast::columns::{ColumnBlock, ColumnSplit};

/// GEMVs smaller than this many weights run on one thread even with a team.
const PAR_MIN_WEIGHTS: usize = 64 * 1024;
/// Attention over fewer cached values (heads × positions × head_dim) runs on one thread.
const PAR_MIN_ATTENTION: usize = 64 * 1024;
/// Row chunks per team thread in a split GEMV (dynamic scheduling, see
/// `Team::run_chunks`).
const CHUNKS_PER_THREAD: usize = 4;

/// Tokens per pass of `pocket_tts_simd::gemv_multi` in prefill GEMMs: the token block
/// (`[32, inp]`, 128–512 KB) stays in L2 while the weights stream past once per block.
const MULTI_TOKENS: usize = 32;

/// Runs `block` on every part of `y` (`[t, out]`) split by 16-aligned blocks of output
/// columns over `team` (each part reads its own weight rows and writes its own columns),
/// after checking the shapes; one part when the matrix (`out × inp` weights) is small or
/// the team has one thread. Nothing runs when `t` or `out` is 0.
fn for_each_column_block(
    x: &[f32],
    t: usize,
    out: usize,
    inp: usize,
    y: &mut [f32],
    team: &simd::Team,
    block: impl Fn(ColumnBlock) + Sync,
) {
    assert_eq!(x.len(), t * inp);
    assert_eq!(y.len(), t * out);
    if t == 0 || out == 0 {
        return;
    }
    let n = team.threads();
    let chunks = if n == 1 || out * inp < PAR_MIN_WEIGHTS {
        1
    } else {
        (2 * n).min(out.div_ceil(16)).min(ColumnSplit::MAX_PARTS)
    };
    let split = ColumnSplit::new(y, t, out, out, chunks, 16);
    team.run_chunks(chunks, |i| block(split.take(i)));
}

/// `y[:, rows] (+)= x · wᵀ (+ bias[rows])` for the weight rows `rows` (`w` holds exactly
/// those rows, `[rows.len(), inp]`; `bias`, when given, all `out` of them) and every token
/// of `x` (`[t, inp]`), with `pocket_tts_simd::gemv_multi` over blocks of [`MULTI_TOKENS`]
/// tokens.
///
/// # Panics
/// If `rows` is not inside the block's columns, or the sizes disagree.
#[allow(clippy::too_many_arguments)]
fn gemv_multi_rows(
    isa: simd::Isa,
    w: &[f32],
    rows: Range<usize>,
    inp: usize,
    x: &[f32],
    t: usize,
    blk: &ColumnBlock,
    bias: Option<&[f32]>,
    acc: bool,
) {
    let cols = blk.cols();
    assert!(rows.start >= cols.start && rows.end <= cols.end && rows.end <= blk.width());
    let bias = bias.map(|b| &b[rows.clone()]);
    assert!(t <= blk.rows() && x.len() == t * inp && w.len() == rows.len() * inp);
    let out = blk.ld();
    let mut t0 = 0;
    while t0 < t {
        let tb = MULTI_TOKENS.min(t - t0);
        // SAFETY: the pointer is element `(t0, rows.start)` of `y` (`t0 < t ≤ rows()`,
        // checked), and from it `gemv_multi_ptr` reads and writes only
        // `y[t0 + i, rows.start + r]` (`i < tb`, `r < rows.len()`, row stride `ld()`):
        // rows below `t`, columns in `rows ⊆ cols()` (checked), which this block alone may
        // access (`ColumnBlock::base`). `w` and `x` are shared slices, so not `y`.
        unsafe {
            isa.gemv_multi_ptr(
                w,
                rows.len(),
                inp,
                &x[t0 * inp..(t0 + tb) * inp],
                tb,
                blk.base().add(t0 * out + rows.start),
                out,
                bias,
                acc,
            );
        }
        t0 += tb;
    }
}

/// `y[t, out] (+)= x[t, inp] · w[out, inp]ᵀ (+ bias[out])`, the `out` columns split in 16-aligned
/// blocks over `team` (each block reads its own rows of `w` and writes its own columns of
/// `y`), with `pocket_tts_simd::gemv_multi` over blocks of [`MULTI_TOKENS`] tokens. The
/// weights are read in place: a GEMM library would pack them on every call, i.e. copy
/// the FlowLM's 340 MB for every text prefill (measured: prefill 98 → 36–63 ms for a
/// short text, voice prompt 1.25 → 1.1 s; see OPTIMIZATION_LOG.md).
#[allow(clippy::too_many_arguments)]
pub(super) fn matmul_wt(
    x: &[f32],
    t: usize,
    w: &[f32],
    out: usize,
    inp: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
    team: &simd::Team,
) {
    assert_eq!(w.len(), out * inp);
    assert!(bias.is_none_or(|b| b.len() == out));
    let isa = simd::detected();
    for_each_column_block(x, t, out, inp, y, team, |blk| {
        let cols = blk.cols();
        if !cols.is_empty() {
            let wb = &w[cols.start * inp..cols.end * inp];
            gemv_multi_rows(isa, wb, cols, inp, x, t, &blk, bias, acc);
        }
    });
}

/// Bytes of int8 weight rows multiplied by every token before the next rows are read in
/// [`matmul_wt_i8`]: the rows stay in L1 while the tokens pass over them.
const I8_BLOCK_BYTES: usize = 16 * 1024;

/// [`matmul_wt`] for int8 weights (`--quantize`), computing exactly what the step's
/// `gemv_i8_q8` computes: every token is quantized to int8 with its own scale and each
/// output is an exact integer dot product (VNNI, AVX2 `maddubs`, NEON), so a prefilled
/// token and a stepped one give the same bits. Each block of output columns reads its
/// weight rows once from memory, [`I8_BLOCK_BYTES`] at a time, and multiplies every
/// token by them (`gemv_i8_q8_tokens`: four tokens per pass over the rows with VNNI).
/// Allocates the quantized tokens (prefill may allocate).
fn matmul_wt_i8(
    x: &[f32],
    t: usize,
    w: &simd::QuantizedRows,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
    team: &simd::Team,
) {
    let isa = simd::detected();
    // With AMX tiles, the kernel takes a part's rows in one call (it rearranges the tokens
    // once per call; its weight tiles need not fit in L1); else L1-sized blocks of rows.
    let rows_per_block = if simd::amx_int8_available() {
        w.rows()
    } else {
        (I8_BLOCK_BYTES / w.cols().max(1)).max(1)
    };
    matmul_wt_tokens(
        x,
        t,
        w.rows(),
        w.cols(),
        y,
        bias,
        acc,
        team,
        rows_per_block,
        |r0, nr, tokens, out| isa.gemv_i8_q8_tokens(w, r0, nr, tokens, out),
    );
}

/// [`matmul_wt_i8`] for 4-bit weights (`--quantize q4`): every token quantized to int8 with
/// its own scale, each output the exact integer block sums `gemv_q4` computes (so a
/// prefilled token and a stepped one give the same bits); each block of output columns
/// reads its weight rows once from memory, [`I8_BLOCK_BYTES`] of `f32`-equivalent width
/// at a time, and multiplies every token by them (`gemv_q4_tokens`). Allocates the
/// quantized tokens (prefill may allocate).
fn matmul_wt_q4(
    x: &[f32],
    t: usize,
    w: &simd::Q4Rows,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
    team: &simd::Team,
) {
    let isa = simd::detected();
    // Half a byte per weight: twice int8's rows for the same bytes.
    let rows_per_block = (2 * I8_BLOCK_BYTES / w.cols().max(1)).max(1);
    matmul_wt_tokens(
        x,
        t,
        w.rows(),
        w.cols(),
        y,
        bias,
        acc,
        team,
        rows_per_block,
        |r0, nr, tokens, out| isa.gemv_q4_tokens(w, r0, nr, tokens, out),
    );
}

/// The driver of [`matmul_wt_i8`] and [`matmul_wt_q4`]: every token of `x` (`[t, inp]`)
/// quantized to int8 with its own scale, then for each block of output columns,
/// `rows_per_block` weight rows at a time, `kernel(r0, nr, tokens, out)` writes the
/// `[t, nr]` products of rows `r0..r0 + nr` with every token, which, plus `bias` (`[out]`)
/// when given, go to (or are added to, `acc`) `y` (`[t, out]`): the order of the GEMV
/// kernels' own finish (product, `+ bias`, then `y + …`), so each token gets the step's
/// bits. Allocates the quantized tokens and a block's products.
#[allow(clippy::too_many_arguments)]
fn matmul_wt_tokens(
    x: &[f32],
    t: usize,
    out: usize,
    inp: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
    team: &simd::Team,
    rows_per_block: usize,
    kernel: impl Fn(usize, usize, &[simd::QuantizedVector], &mut [f32]) + Sync,
) {
    assert!(bias.is_none_or(|b| b.len() == out));
    let tokens: Vec<simd::QuantizedVector> = x
        .chunks_exact(inp)
        .map(|src| {
            let mut q = simd::QuantizedVector::with_capacity(inp);
            q.quantize(src);
            q
        })
        .collect();
    for_each_column_block(x, t, out, inp, y, team, |mut blk| {
        let cols = blk.cols();
        // `[t, rows]` products of one block of rows (allocated per part: prefill may).
        let mut tmp = vec![0f32; t * rows_per_block.min(cols.len())];
        let mut r0 = cols.start;
        while r0 < cols.end {
            let r1 = (r0 + rows_per_block).min(cols.end);
            let nr = r1 - r0;
            let tmp = &mut tmp[..t * nr];
            kernel(r0, nr, &tokens, tmp);
            if let Some(b) = bias {
                for v in tmp.chunks_exact_mut(nr) {
                    for (v, b) in v.iter_mut().zip(&b[r0..r1]) {
                        *v += b;
                    }
                }
            }
            for (i, v) in tmp.chunks_exact(nr).enumerate() {
                let dst = blk.row_mut(i, r0..r1);
                if acc {
                    for (d, &v) in dst.iter_mut().zip(v) {
                        *d += v;
                    }
                } else {
                    dst.copy_from_slice(v);
                }
            }
            r0 = r1;
        }
    });
}

/// Rows of 16-bit weights multiplied by every token before the next rows are read in
/// [`matmul_wt_half`] (a `[16, inp]` block of 16-bit weights, 32–128 KB, stays in L2
/// while the tokens pass over it).
const HALF_PANEL_ROWS: usize = 16;

/// [`matmul_wt`] for 16-bit weights (the FlowLM's `dtype` `float16`/`bfloat16`, and the
/// flow head's `f16` with `--quantize`): each block of [`HALF_PANEL_ROWS`] rows through
/// `gemv_half_tokens`, which gives every token the step's own `gemv_half` sums (on x86
/// widening each weight vector once for three tokens), finished as `gemv_half` finishes
/// (bias, then accumulate): a batched or prefilled token gives the step's bits (the
/// engine's streams equal their solo runs). The block is read from memory once and from
/// cache for the other tokens. Allocates a panel's products.
fn matmul_wt_half(
    x: &[f32],
    t: usize,
    w: &simd::HalfRows,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
    team: &simd::Team,
) {
    let (out, inp) = (w.rows(), w.cols());
    assert!(bias.is_none_or(|b| b.len() == out));
    let isa = simd::detected();
    for_each_column_block(x, t, out, inp, y, team, |mut blk| {
        let cols = blk.cols();
        // `[t, rows]` products of one panel (allocated per part: prefill may).
        let mut tmp = vec![0f32; t * HALF_PANEL_ROWS];
        let mut r0 = cols.start;
        while r0 < cols.end {
            let r1 = (r0 + HALF_PANEL_ROWS).min(cols.end);
            let nr = r1 - r0;
            let tmp = &mut tmp[..t * nr];
            isa.gemv_half_tokens(w, r0, nr, x, tmp);
            // `gemv_half`'s finish: `+ bias`, then `y + …`.
            for (i, v) in tmp.chunks_exact(nr).enumerate() {
                let dst = blk.row_mut(i, r0..r1);
                for (j, (d, &v)) in dst.iter_mut().zip(v).enumerate() {
                    let v = bias.map_or(v, |b| v + b[r0 + j]);
                    *d = if acc { *d + v } else { v };
                }
            }
            r0 = r1;
        }
    });
}

/// `y[t, out] (+)= x[t, inp] · Wᵀ` for a transformer layer's linear, `f32`, 16-bit,
/// int8 or 4-bit (bias-free: layers have no bias).
pub(super) fn matmul_layer(
    x: &[f32],
    t: usize,
    lin: &LayerLin,
    y: &mut [f32],
    acc: bool,
    team: &simd::Team,
) {
    match lin {
        LayerLin::Float(l) => matmul_lin(x, t, l, y, acc, team),
        LayerLin::I8(q) => matmul_wt_i8(x, t, q, y, None, acc, team),
        LayerLin::Q4(q) => matmul_wt_q4(x, t, q, y, None, acc, team),
    }
}

/// `y[t, out] (+)= x[t, inp] · Wᵀ (+ b)` for a linear with an optional bias, `f32`,
/// 16-bit, int8 or 4-bit: per token the same value as [`FlowLmFast::gemv`] (same kernels,
/// same rounding order).
pub(super) fn matmul_lin(
    x: &[f32],
    t: usize,
    l: &Lin,
    y: &mut [f32],
    acc: bool,
    team: &simd::Team,
) {
    let b = l.b.as_ref().map(W::get);
    let b = b.as_deref();
    match &l.w {
        LinW::F32(w) => {
            let w = w.get();
            matmul_wt(x, t, &w, l.out, l.inp, y, b, acc, team);
        }
        LinW::Half(h) => matmul_wt_half(x, t, h, y, b, acc, team),
        LinW::I8(q) => matmul_wt_i8(x, t, q, y, b, acc, team),
        LinW::Q4(q) => matmul_wt_q4(x, t, q, y, b, acc, team),
    }
}

/// Softmax attention of one query per head over positions `0..len` of one layer's cache,
/// for the heads in `heads`. `q` holds all query heads; `scores` holds one row of `cap`
/// values per head of `heads` (row `i` for head `heads.start + i`), `out` one row of
/// `head_dim` values per head.
#[allow(clippy::too_many_arguments)]
fn attend(
    heads: Range<usize>,
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    len: usize,
    cap: usize,
    head_dim: usize,
    rep: usize,
    scale: f32,
    scores: &mut [f32],
    out: &mut [f32],
) {
    for (i, h) in heads.enumerate() {
        let kvh = h / rep;
        let base = kvh * cap * head_dim;
        let keys = &kc[base..base + len * head_dim];
        let values = &vc[base..base + len * head_dim];
        let s = &mut scores[i * cap..i * cap + len];
        let o = &mut out[i * head_dim..(i + 1) * head_dim];
        simd::gemv(keys, &q[h * head_dim..(h + 1) * head_dim], s, None, false);
        for v in s.iter_mut() {
            *v *= scale;
        }
        simd::softmax_rows(s, len);
        simd::gemv_t(s, values, o, false);
    }
}

/// Runs `part(rows, y_part, bias_part)` over the rows of `y` (a GEMV's outputs, `bias` its
/// biases): split in 8-aligned blocks over `team` (a few per thread, dynamically
/// scheduled) when the weights are `bytes` ≥ `4 · PAR_MIN_WEIGHTS` long, else once over
/// every row on the calling thread. Int8, 4-bit and 16-bit weights thus split at the same
/// byte count as `f32` ones.
fn for_row_parts(
    team: &simd::Team,
    bytes: usize,
    y: &mut [f32],
    bias: Option<&[f32]>,
    part: impl Fn(Range<usize>, &mut [f32], Option<&[f32]>) + Sync,
) {
    let (n, rows) = (team.threads(), y.len());
    if n == 1 || bytes < 4 * PAR_MIN_WEIGHTS {
        part(0..rows, y, bias);
        return;
    }
    let chunks = (CHUNKS_PER_THREAD * n)
        .min(rows.div_ceil(8))
        .min(SplitMut::<f32>::MAX_PARTS);
    team.for_each_split(y, rows, 1, chunks, 8, |r, yi| {
        part(r.clone(), yi, bias.map(|b| &b[r]));
    });
}

/// `y (+)= W·x (+ bias)` for int8 `W`: `x` quantized into `xq`, `gemv_i8_q8` split by
/// rows over the team when large.
fn gemv_i8_rows(
    team: &simd::Team,
    q: &simd::QuantizedRows,
    x: &[f32],
    xq: &mut simd::QuantizedVector,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
) {
    assert_eq!(y.len(), q.rows());
    xq.quantize(x);
    let (xq, isa) = (&*xq, simd::detected());
    for_row_parts(team, q.bytes(), y, bias, |r, yi, b| {
        isa.gemv_i8_q8(q, r.start, xq, yi, b, acc)
    });
}

/// [`gemv_i8_rows`] for 4-bit `W` (`gemv_q4`).
fn gemv_q4_rows(
    team: &simd::Team,
    q: &simd::Q4Rows,
    x: &[f32],
    xq: &mut simd::QuantizedVector,
    y: &mut [f32],
    bias: Option<&[f32]>,
    acc: bool,
) {
    assert_eq!(y.len(), q.rows());
    xq.quantize(x);
    let (xq, isa) = (&*xq, simd::detected());
    for_row_parts(team, q.bytes(), y, bias, |r, yi, b| {
        isa.gemv_q4(q, r.start, xq, yi, b, acc)
    });
}

impl FlowLmFast {
    /// Uses `threads` threads (≥ 1) for steps (GEMV rows, attention heads) and prefill
    /// (GEMM). Spawns `threads - 1` helper threads, which spin for 200 µs after each job
    /// before parking: use more than 1 only when the other cores are otherwise idle.
    pub fn set_threads(&mut self, threads: usize) {
        if threads.max(1) != self.team.threads() {
            self.team = simd::Team::new(threads);
        }
    }

    /// Threads for [`Self::prefill`] (text and voice prompts), independent of the step's
    /// [`Self::set_threads`]: a prefill runs before the first frame, while the Mimi
    /// decoder thread has nothing to do, so it can use both cores even when steps use one.
    /// Each thread multiplies the whole input by its own block of weight rows; results do
    /// not depend on the count.
    pub fn set_prefill_threads(&mut self, threads: usize) {
        if threads.max(1) != self.prefill_team.threads() {
            self.prefill_team = simd::Team::new(threads);
        }
    }

    /// Threads of [`Self::prefill`] (see [`Self::set_prefill_threads`]).
    pub fn prefill_threads(&self) -> usize {
        self.prefill_team.threads()
    }

    /// Threads in use (see [`Self::set_threads`]).
    pub fn threads(&self) -> usize {
        self.team.threads()
    }

    /// `y (+)= W·x (+ b)`, split by rows over the team when large (`f32`, 16-bit, int8 or
    /// 4-bit `W`). An int8 or 4-bit `W` (the flow head with `--quantize`) quantizes `x`
    /// into `xq` first (one scale per vector) and multiplies in integers, as
    /// [`Self::gemv_layer`] does.
    pub(super) fn gemv(
        &self,
        team: &simd::Team,
        lin: &Lin,
        x: &[f32],
        xq: &mut simd::QuantizedVector,
        y: &mut [f32],
        acc: bool,
    ) {
        let b = lin.b.as_ref().map(W::get);
        let b = b.as_deref();
        assert_eq!(y.len(), lin.out);
        match &lin.w {
            LinW::F32(w) => {
                let (w, cols) = (w.get(), lin.inp);
                let w: &[f32] = &w;
                // Each part: a block of rows of `y` and of `w`.
                for_row_parts(team, 4 * w.len(), y, b, |r, yi, b| {
                    simd::gemv(&w[r.start * cols..r.end * cols], x, yi, b, acc)
                });
            }
            LinW::Half(h) => {
                let isa = simd::detected();
                for_row_parts(team, h.bytes(), y, b, |r, yi, b| {
                    isa.gemv_half(h, r.start, x, yi, b, acc)
                });
            }
            LinW::I8(q) => gemv_i8_rows(team, q, x, xq, y, b, acc),
            LinW::Q4(q) => gemv_q4_rows(team, q, x, xq, y, b, acc),
        }
    }

    /// `y (+)= W·x` for a transformer layer's linear, split by rows over the team when
    /// large. An int8 layer (`--quantize`) quantizes `x` into `xq` (one scale per token,
    /// like the reference's dynamic quantization) and multiplies in integers
    /// (`gemv_i8_q8`); a 4-bit one likewise (`gemv_q4`).
    pub(super) fn gemv_layer(
        &self,
        team: &simd::Team,
        lin: &LayerLin,
        x: &[f32],
        xq: &mut simd::QuantizedVector,
        y: &mut [f32],
        acc: bool,
    ) {
        match lin {
            LayerLin::Float(l) => self.gemv(team, l, x, xq, y, acc),
            LayerLin::I8(q) => gemv_i8_rows(team, q, x, xq, y, None, acc),
            LayerLin::Q4(q) => gemv_q4_rows(team, q, x, xq, y, None, acc),
        }
    }

    /// Attention of the query heads in `q` over positions `0..len` of layer `l`, into `out`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention(
        &self,
        team: &simd::Team,
        q: &[f32],
        kc: &[f32],
        vc: &[f32],
        len: usize,
        cap: usize,
        scores: &mut [f32],
        out: &mut [f32],
    ) {
        let dm = self.dims;
        let rep = dm.heads / dm.kv_heads;
        let scale = (1.0 / (dm.head_dim as f64).sqrt()) as f32;
        assert!(scores.len() >= dm.heads * cap && out.len() >= dm.heads * dm.head_dim);
        assert!(kc.len() >= dm.kv_heads * cap * dm.head_dim && len <= cap);
        let n = team.threads();
        let (heads, hd) = (dm.heads, dm.head_dim);
        if n == 1 || heads * len * hd < PAR_MIN_ATTENTION {
            attend(0..heads, q, kc, vc, len, cap, hd, rep, scale, scores, out);
        } else {
            // One head per chunk (a few heads per chunk past `MAX_PARTS` heads); chunk `i`
            // takes piece `i` of both outputs.
            let parts = heads.min(SplitMut::<f32>::MAX_PARTS);
            let scores = SplitMut::new(scores, heads, cap, parts, 1);
            let out = SplitMut::new(out, heads, hd, parts, 1);
            team.run_chunks(parts, |i| {
                let (hs, s) = scores.take(i);
                let (_, o) = out.take(i);
                attend(hs, q, kc, vc, len, cap, hd, rep, scale, s, o);
            });
        }
    }
}
