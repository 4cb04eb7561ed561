//! The encoder transformer's whole-sequence causal forward, run over the time axis in
//! chunks of positions ([`TransformerF::forward_chunk`], state [`ChunkedF`]): every buffer
//! is sized by the chunk and the attention window (`context − 1` positions of keys and
//! values per layer), not by the length of the voice prompt. It computes
//! `StreamingTransformer.forward` of `modules/transformer.py` over a fresh state
//! (`pocket-tts` 4.0.1, `MimiModel.encode_to_latent` of `models/mimi.py`).
//!
//! The result does not depend on the chunking, bit for bit: every row-wise step (norms,
//! linears, GELU, RoPE) computes each row alone (one `k`-ordered FMA chain per output of
//! [`pocket_tts_simd::gemm`]), and the attention runs in query blocks of [`QB`] rows
//! aligned on absolute positions, each block reading the same run of keys
//! (`[q0 + 1 − context, q0 + QB)`) and values whatever chunk it falls in.

use pocket_tts_simd::gemm::{self, BView, Init};

use super::super::par::{par_gemm, par_map, part_count, Par};
use super::TransformerF;
use crate::{Error, Result};

/// Query rows per attention block. Chunks start on multiples of it, so that a block never
/// straddles two chunks.
pub(in crate::fast::mimi) const QB: usize = 64;

/// The state of a chunked whole-sequence forward of a [`TransformerF`] (fresh at position
/// 0): per layer, the keys (transposed, `[kv_dim, cap]`) and values (`[cap, kv_dim]`) of
/// positions `base .. pos`, and the activations of one chunk of at most `rows` positions.
#[derive(Debug)]
pub(in crate::fast::mimi) struct ChunkedF {
    /// Most positions per chunk (a multiple of [`QB`]).
    rows: usize,
    /// Positions done.
    pos: usize,
    /// Position of column 0 of the key/value windows.
    base: usize,
    /// Positions of history a chunk's queries can see before the chunk: `context − 1`
    /// (every position of the sequence without a context).
    keep: usize,
    /// Positions a window holds: `keep + rows`.
    cap: usize,
    /// Per layer `[kv_dim, cap]`: `kt[c, j]` is channel `c` of the key of position
    /// `base + j`.
    kt: Vec<f32>,
    /// Per layer `[cap, kv_dim]`: row `j` is the value of position `base + j`.
    v: Vec<f32>,
    /// `[rows, d_model]`: the residual stream.
    x: Vec<f32>,
    /// The normed residual stream `[rows, d_model]`, then the attention output
    /// `[rows, attn_dim]`, then (after the last layer) the output `[rows, dout]`: each is
    /// dead when the next is written.
    a: Vec<f32>,
    /// `q·scale | k | v` `[rows, attn_dim + 2·kv_dim]`, then the feed-forward hidden
    /// layer `[rows, ff]` (`q|k|v` is dead once the attention has run).
    b: Vec<f32>,
    /// `[rows, head_dim / 2]`: RoPE tables of the chunk's positions.
    cos: Vec<f32>,
    sin: Vec<f32>,
}

impl ChunkedF {
    /// Most positions [`TransformerF::forward_chunk`] takes at once.
    pub(in crate::fast::mimi) fn rows(&self) -> usize {
        self.rows
    }
}

impl TransformerF {
    /// A fresh state for a whole-sequence forward of at most `total` positions in
    /// chunks of at most `rows` positions (rounded up to a multiple of [`QB`]; at most
    /// `total` rounded up the same way).
    pub(in crate::fast::mimi) fn new_chunked(&self, rows: usize, total: usize) -> ChunkedF {
        let rows = rows.min(total).max(1).next_multiple_of(QB);
        let keep = self
            .context
            .map_or(total, |c| c.saturating_sub(1))
            .min(total);
        let cap = keep + rows;
        let nl = self.layers.len();
        let half = self.head_dim / 2;
        ChunkedF {
            rows,
            pos: 0,
            base: 0,
            keep,
            cap,
            kt: vec![0.0; nl * self.kv_dim * cap],
            v: vec![0.0; nl * cap * self.kv_dim],
            x: vec![0.0; rows * self.d_model],
            a: vec![0.0; rows * self.d_model.max(self.attn_dim).max(self.dout)],
            b: vec![0.0; rows * self.qkv_width().max(self.ff)],
            cos: vec![0.0; rows * half],
            sin: vec![0.0; rows * half],
        }
    }

    /// The next `n` positions of the causal forward of `st`: `input` `[n, din]` →
    /// `[n, dout]` (in `st`). Every chunk but the last must be whole [`QB`] blocks; the
    /// outputs, chunk after chunk, are those of the whole sequence run at once, bit for
    /// bit.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `n` above [`ChunkedF::rows`], `input` shorter than
    /// `n·din`, a chunk after one that was not whole [`QB`] blocks, or more positions
    /// than `st` was made for without a context.
    pub(in crate::fast::mimi) fn forward_chunk<'s>(
        &self,
        par: &Par,
        input: &[f32],
        n: usize,
        st: &'s mut ChunkedF,
    ) -> Result<&'s [f32]> {
        if n > st.rows
            || input.len() < n * self.din
            || !st.pos.is_multiple_of(QB)
            || (self.context.is_none() && st.pos + n > st.keep)
        {
            return Err(Error::invalid_argument(format!(
                "Mimi fast path: encoder transformer chunk of {n} positions at position {} \
                 (at most {} per chunk, whole blocks of {QB} but the last)",
                st.pos, st.rows
            )));
        }
        self.slide_window(st);
        let half = self.head_dim / 2;
        self.project_in(par, input, n, &mut st.x);
        self.rope_tables(st.pos, n, &mut st.cos[..n * half], &mut st.sin[..n * half]);
        for li in 0..self.layers.len() {
            self.chunk_layer(par, li, n, st);
        }
        st.pos += n;
        Ok(self.project_out(par, &st.x, n, &mut st.a))
    }

    /// Moves the last `keep` positions' keys and values (the history a new chunk's
    /// queries can see) to the front of each layer's window.
    fn slide_window(&self, st: &mut ChunkedF) {
        let held = st.pos - st.base;
        let kept = st.keep.min(st.pos);
        let drop = held - kept;
        if drop == 0 {
            return;
        }
        let (cap, kv) = (st.cap, self.kv_dim);
        for kt in st.kt.chunks_exact_mut(kv * cap) {
            for row in kt.chunks_exact_mut(cap) {
                row.copy_within(drop..held, 0);
            }
        }
        for v in st.v.chunks_exact_mut(cap * kv) {
            v.copy_within(drop * kv..held * kv, 0);
        }
        st.base += drop;
    }

    /// Layer `li` over the `n` positions of the current chunk of `st`.
    fn chunk_layer(&self, par: &Par, li: usize, n: usize, st: &mut ChunkedF) {
        let d = self.d_model;
        let w = self.qkv_width();
        let hd = self.head_dim;
        let half = hd / 2;
        let (kv, cap, pos, base) = (self.kv_dim, st.cap, st.pos, st.base);
        let layer = &self.layers[li];
        let ChunkedF {
            kt,
            v,
            x,
            a,
            b,
            cos,
            sin,
            ..
        } = st;
        let x = &mut x[..n * d];
        let h = &mut a[..n * d];
        let qkv = &mut b[..n * w];
        let kt = &mut kt[li * kv * cap..(li + 1) * kv * cap];
        let v = &mut v[li * cap * kv..(li + 1) * cap * kv];
        layer.norm1.apply(par, x, h, d);
        par_gemm(
            par,
            &layer.in_proj,
            BView::dense(h, n, d, d),
            qkv,
            w,
            Init::Zero,
        );
        self.apply_rope(qkv, n, &cos[..n * half], &sin[..n * half]);
        // The chunk's keys (transposed, in 16 × 16 tiles) and values join the window
        // after the history: column `pos − base` on.
        let j0 = pos - base;
        for i0 in (0..n).step_by(16) {
            let i1 = (i0 + 16).min(n);
            for c0 in (0..kv).step_by(16) {
                for c in c0..(c0 + 16).min(kv) {
                    let col = self.attn_dim + c;
                    let dst = &mut kt[c * cap + j0 + i0..c * cap + j0 + i1];
                    for (i, d) in (i0..i1).zip(dst) {
                        *d = qkv[i * w + col];
                    }
                }
            }
        }
        for i in 0..n {
            let src = &qkv[i * w + self.attn_dim + kv..][..kv];
            v[(j0 + i) * kv..(j0 + i + 1) * kv].copy_from_slice(src);
        }
        let context = self.context.unwrap_or(usize::MAX);
        let rep = self.num_heads / self.num_kv_heads;
        let attn_dim = self.attn_dim;
        let blocks = n.div_ceil(QB);
        let parts = part_count(par).min(blocks).max(1);
        let (qkv_r, kt_r, v_r) = (&*qkv, &*kt, &*v);
        let attn = &mut a[..n * attn_dim];
        // Each part: a run of whole query blocks (chunk rows `rows` of `attn`, in `piece`);
        // query block `[q0, q0 + QB)` sees keys `[q0 + 1 − context, q0 + QB)`.
        let job = |rows: std::ops::Range<usize>, piece: &mut [f32]| {
            // A block sees at most `QB + context − 1` keys, all in the window.
            let mut scores = vec![0f32; QB * cap.min(QB.saturating_add(context))];
            for r0 in rows.clone().step_by(QB) {
                let q0 = pos + r0;
                let nq = QB.min(n - r0);
                let k0 = (q0 + 1).saturating_sub(context);
                let nk = q0 + nq - k0;
                let o0 = (r0 - rows.start) * attn_dim;
                let out = &mut piece[o0..o0 + nq * attn_dim];
                for hh in 0..self.num_heads {
                    let kh = hh / rep;
                    let sc = &mut scores[..nq * nk];
                    gemm::gemm_strided(
                        &kt_r[kh * hd * cap + (k0 - base)..],
                        cap,
                        hd,
                        nk,
                        BView::dense(&qkv_r[r0 * w + hh * hd..], nq, hd, w),
                        sc,
                        nk,
                        Init::Zero,
                    );
                    // Query q sees keys max(k0, q + 1 − context) ..= q: a contiguous run
                    // of the row; softmax over it, zeros elsewhere.
                    for i in 0..nq {
                        let q = q0 + i;
                        let lo = (q + 1).saturating_sub(context).max(k0) - k0;
                        let hi = q - k0 + 1;
                        let row = &mut sc[i * nk..(i + 1) * nk];
                        row[..lo].fill(0.0);
                        row[hi..].fill(0.0);
                        pocket_tts_simd::softmax_rows(&mut row[lo..hi], hi - lo);
                    }
                    gemm::gemm_strided(
                        &v_r[(k0 - base) * kv + kh * hd..],
                        kv,
                        nk,
                        hd,
                        BView::dense(sc, nq, nk, nk),
                        &mut out[hh * hd..],
                        attn_dim,
                        Init::Zero,
                    );
                }
            }
        };
        // Block boundaries are multiples of `QB` rows; one part runs inline.
        par.for_each_split(attn, n, attn_dim, parts, QB, job);
        par_gemm(
            par,
            &layer.out_proj,
            BView::dense(attn, n, attn_dim, attn_dim),
            x,
            d,
            Init::Accumulate,
        );
        let h = &mut a[..n * d];
        layer.norm2.apply(par, x, h, d);
        let ff = &mut b[..n * self.ff];
        par_gemm(
            par,
            &layer.linear1,
            BView::dense(h, n, d, d),
            ff,
            self.ff,
            Init::Zero,
        );
        par_map(par, ff, pocket_tts_simd::gelu_tanh);
        par_gemm(
            par,
            &layer.linear2,
            BView::dense(ff, n, self.ff, self.ff),
            x,
            d,
            Init::Accumulate,
        );
    }
}
