//! Mimi's projected transformer on time-major `[T, C]` buffers, mirroring
//! `modules/transformer.py` (`ProjectedTransformer`, `StreamingTransformer`,
//! `StreamingTransformerLayer`) with `modules/attention.py`
//! (`StreamingMultiheadAttention`), `modules/rope.py` and `modules/layer_scale.py` of
//! `pocket-tts` 4.0.1.
//!
//! Every linear layer is a packed GEMM, LayerScale and the attention scale folded into the
//! weights. The decoder runs [`TransformerF::stream_begin`] / `stream_layer` / `stream_end` (a fixed ring of the last
//! keys and values per layer, [`TransformerStreamF`]); the encoder runs
//! [`TransformerF::forward_chunk`] (`chunked.rs`: the whole sequence in chunks of
//! positions, causal attention in query blocks across the threads).

use pocket_tts_simd::gemm::{self, BView, Init, PackedMatrix};
use pocket_tts_simd::HalfKind;

use super::par::{par_gemm, par_map, part_count, Par};
use super::tensor_vec;
use crate::modules::weights_view::{LayerNormView, ProjectedTransformerView};
use crate::{Error, Result};

mod build;
mod chunked;
#[cfg(test)]
mod tests;

pub(super) use build::TransformerBuilder;
pub(super) use chunked::QB;

#[derive(Debug, Clone)]
struct NormF {
    w: Option<Vec<f32>>,
    b: Option<Vec<f32>>,
    eps: f32,
}

impl NormF {
    fn from_view(n: &LayerNormView<'_>, what: &str) -> Result<Self> {
        Ok(Self {
            w: n.weight.map(|t| tensor_vec(t, what)).transpose()?,
            b: n.bias.map(|t| tensor_vec(t, what)).transpose()?,
            eps: n.eps as f32,
        })
    }

    fn apply(&self, par: &Par, x: &[f32], out: &mut [f32], cols: usize) {
        let rows = x.len() / cols;
        let parts = part_count(par);
        if parts == 1 || rows < 256 {
            pocket_tts_simd::layer_norm_rows(
                x,
                out,
                cols,
                self.w.as_deref(),
                self.b.as_deref(),
                self.eps,
            );
            return;
        }
        // 16-aligned blocks of rows.
        par.for_each_split(out, rows, cols, parts, 16, |r, o| {
            pocket_tts_simd::layer_norm_rows(
                &x[r.start * cols..r.end * cols],
                o,
                cols,
                self.w.as_deref(),
                self.b.as_deref(),
                self.eps,
            );
        });
    }
}

#[derive(Debug, Clone)]
struct LayerF {
    norm1: NormF,
    norm2: NormF,
    /// `[q·scale | k | v]` projection.
    in_proj: PackedMatrix,
    /// Output projection with LayerScale 1 folded in.
    out_proj: PackedMatrix,
    linear1: PackedMatrix,
    /// Second feed-forward linear with LayerScale 2 folded in.
    linear2: PackedMatrix,
}

/// A projected transformer (input projection, layers, first output projection).
#[derive(Debug, Clone)]
pub(super) struct TransformerF {
    pub(super) din: usize,
    pub(super) dout: usize,
    d_model: usize,
    num_heads: usize,
    num_kv_heads: usize,
    head_dim: usize,
    attn_dim: usize,
    kv_dim: usize,
    ff: usize,
    context: Option<usize>,
    freqs: Vec<f32>,
    input_proj: Option<PackedMatrix>,
    output_proj: Option<PackedMatrix>,
    layers: Vec<LayerF>,
}

impl TransformerF {
    /// Stores every linear's weights as 16-bit `kind` (`prefix` names the module in
    /// messages, as in [`Self::from_view`]).
    ///
    /// # Errors
    /// [`Error::WeightOutOfRange`] for a weight `kind` cannot hold.
    pub(super) fn store_half(&mut self, kind: HalfKind, prefix: &str) -> Result<()> {
        if let Some(p) = &mut self.input_proj {
            super::store_half(p, kind, &format!("{prefix}.input_proj"))?;
        }
        if let Some(p) = &mut self.output_proj {
            super::store_half(p, kind, &format!("{prefix}.output_projs.0"))?;
        }
        for (i, l) in self.layers.iter_mut().enumerate() {
            let what = |s: &str| format!("{prefix}.transformer.layers.{i}.{s}");
            super::store_half(&mut l.in_proj, kind, &what("self_attn.in_proj"))?;
            super::store_half(&mut l.out_proj, kind, &what("self_attn.out_proj"))?;
            super::store_half(&mut l.linear1, kind, &what("linear1"))?;
            super::store_half(&mut l.linear2, kind, &what("linear2"))?;
        }
        Ok(())
    }

    /// Repacks a whole Candle projected transformer (see [`TransformerBuilder`]).
    ///
    /// # Errors
    /// As [`TransformerBuilder::push`] and [`TransformerBuilder::finish`].
    pub(super) fn from_view(p: &ProjectedTransformerView<'_>, prefix: &str) -> Result<Self> {
        let mut b = TransformerBuilder::new(prefix);
        for l in &p.transformer.layers {
            b.push(l)?;
        }
        b.finish(
            p.input_proj.as_ref(),
            p.output_proj.as_ref(),
            p.transformer.max_period,
        )
    }

    fn qkv_width(&self) -> usize {
        self.attn_dim + 2 * self.kv_dim
    }

    /// `x[..rows · d_model]` = the `rows` rows of `input` (`[rows, din]`) through the input
    /// projection, or copied when there is none.
    fn project_in(&self, par: &Par, input: &[f32], rows: usize, x: &mut [f32]) {
        let d = self.d_model;
        match &self.input_proj {
            Some(p) => par_gemm(
                par,
                p,
                BView::dense(input, rows, self.din, self.din),
                x,
                d,
                Init::Zero,
            ),
            None => x[..rows * d].copy_from_slice(&input[..rows * d]),
        }
    }

    /// The transformer's output for the `rows` rows of `x` (`[rows, d_model]`): through the
    /// output projection into `out` (`[rows, dout]`), or `x` itself when there is none.
    fn project_out<'a>(
        &self,
        par: &Par,
        x: &'a [f32],
        rows: usize,
        out: &'a mut [f32],
    ) -> &'a [f32] {
        let d = self.d_model;
        match &self.output_proj {
            Some(p) => {
                par_gemm(
                    par,
                    p,
                    BView::dense(x, rows, d, d),
                    out,
                    self.dout,
                    Init::Zero,
                );
                &out[..rows * self.dout]
            }
            None => &x[..rows * d],
        }
    }

    /// Fills `cos`/`sin` (`[t, head_dim / 2]`) for positions `pos0..pos0 + t`.
    fn rope_tables(&self, pos0: usize, t: usize, cos: &mut [f32], sin: &mut [f32]) {
        let half = self.head_dim / 2;
        for i in 0..t {
            let p = (pos0 + i) as f32;
            for (d, &f) in self.freqs.iter().enumerate() {
                let angle = (f * p) as f64;
                cos[i * half + d] = angle.cos() as f32;
                sin[i * half + d] = angle.sin() as f32;
            }
        }
    }

    /// Interleaved RoPE on the q and k parts of `qkv` rows.
    fn apply_rope(&self, qkv: &mut [f32], t: usize, cos: &[f32], sin: &[f32]) {
        let w = self.qkv_width();
        let half = self.head_dim / 2;
        let heads = self.num_heads + self.num_kv_heads;
        for i in 0..t {
            let (c, s) = (
                &cos[i * half..(i + 1) * half],
                &sin[i * half..(i + 1) * half],
            );
            let row = &mut qkv[i * w..i * w + heads * self.head_dim];
            for head in row.chunks_exact_mut(self.head_dim) {
                for (d, pair) in head.chunks_exact_mut(2).enumerate() {
                    let (x0, x1) = (pair[0], pair[1]);
                    pair[0] = x0 * c[d] - x1 * s[d];
                    pair[1] = x0 * s[d] + x1 * c[d];
                }
            }
        }
    }

    /// A fresh streaming state for frames of `t` steps: per layer, a ring of the last
    /// `context − 1 + t` keys and values.
    ///
    /// # Errors
    /// [`Error::Unsupported`] without a finite context.
    pub(super) fn new_stream_state(&self, t: usize) -> Result<TransformerStreamF> {
        let context = self.context.ok_or_else(|| {
            Error::Unsupported(
                "Mimi fast path: streaming decoder transformer needs a finite context".into(),
            )
        })?;
        let r = context.saturating_sub(1) + t;
        let nl = self.layers.len();
        Ok(TransformerStreamF {
            t,
            r,
            pos: 0,
            kt: vec![0.0; nl * self.kv_dim * r],
            v: vec![0.0; nl * self.kv_dim * r],
            slot_pos: vec![-1; r],
        })
    }

    /// Grows `sc` to hold the frames (`t` steps each) of `streams` streams.
    pub(super) fn fit_scratch(&self, sc: &mut TransformerScratchF, streams: usize, t: usize) {
        let rows = streams * t;
        if rows <= sc.rows && t <= sc.t {
            return;
        }
        let rows = rows.max(sc.rows);
        let t = t.max(sc.t);
        let r = self.context.unwrap_or(0).saturating_sub(1) + t;
        let grow = |v: &mut Vec<f32>, n: usize| {
            if v.len() < n {
                v.resize(n, 0.0);
            }
        };
        let half = self.head_dim / 2;
        grow(&mut sc.x, rows * self.d_model);
        grow(&mut sc.h, rows * self.d_model);
        grow(&mut sc.qkv, rows * self.qkv_width());
        grow(&mut sc.attn, rows * self.attn_dim);
        grow(&mut sc.ff, rows * self.ff);
        grow(&mut sc.out, rows * self.dout);
        grow(&mut sc.cos, rows * half);
        grow(&mut sc.sin, rows * half);
        grow(&mut sc.scores, t * r);
        sc.rows = rows;
        sc.t = t;
    }

    /// Runs one frame (`t` new steps each) of every stream of `sts`, stream `s`'s input
    /// `[t, din]` at `input[s·t·din ..]`, each attending to its own last `context`
    /// positions; every linear is one GEMM over the rows of all the streams (in `sc`).
    /// Returns the output `[streams·t, dout]`, stream by stream. Each stream's output
    /// and state are those of the stream run alone, bit for bit.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `sc` is too small (see [`Self::fit_scratch`]) or
    /// the streams' frames differ in length.
    pub(super) fn stream_many<'s>(
        &self,
        par: &Par,
        input: &[f32],
        sts: &mut [&mut TransformerStreamF],
        sc: &'s mut TransformerScratchF,
    ) -> Result<&'s [f32]> {
        let t = sts.first().map_or(0, |s| s.t);
        let n = sts.len();
        let rows = n * t;
        if rows > sc.rows
            || t > sc.t
            || sts.iter().any(|s| s.t != t)
            || input.len() < rows * self.din
        {
            return Err(Error::invalid_argument(
                "Mimi fast path: transformer scratch too small for the frames",
            ));
        }
        let half = self.head_dim / 2;
        self.project_in(par, input, rows, &mut sc.x);
        for (s, st) in sts.iter_mut().enumerate() {
            let (pos0, r) = (st.pos, st.r);
            self.rope_tables(
                pos0,
                t,
                &mut sc.cos[s * t * half..(s + 1) * t * half],
                &mut sc.sin[s * t * half..(s + 1) * t * half],
            );
            for i in 0..t {
                st.slot_pos[(pos0 + i) % r] = (pos0 + i) as i64;
            }
        }
        for li in 0..self.layers.len() {
            self.stream_layer(par, li, sts, sc, rows);
        }
        for st in sts.iter_mut() {
            st.pos += t;
        }
        Ok(self.project_out(par, &sc.x, rows, &mut sc.out))
    }

    /// Layer `li` of [`Self::stream_many`] (`rows`: the streams' rows).
    fn stream_layer(
        &self,
        par: &Par,
        li: usize,
        sts: &mut [&mut TransformerStreamF],
        sc: &mut TransformerScratchF,
        rows: usize,
    ) {
        let d = self.d_model;
        let context = self.context.unwrap_or(usize::MAX);
        let w = self.qkv_width();
        let hd = self.head_dim;
        let half = hd / 2;
        let rep = self.num_heads / self.num_kv_heads;
        let layer = &self.layers[li];
        let TransformerScratchF {
            x,
            h,
            qkv,
            attn,
            ff,
            cos,
            sin,
            scores,
            ..
        } = sc;
        let (x, h, qkv, attn, ff) = (
            &mut x[..rows * d],
            &mut h[..rows * d],
            &mut qkv[..rows * w],
            &mut attn[..rows * self.attn_dim],
            &mut ff[..rows * self.ff],
        );
        layer.norm1.apply(par, x, h, d);
        par_gemm(
            par,
            &layer.in_proj,
            BView::dense(h, rows, d, d),
            qkv,
            w,
            Init::Zero,
        );
        for (s, st) in sts.iter_mut().enumerate() {
            let (t, r, pos0) = (st.t, st.r, st.pos);
            let qkv = &mut qkv[s * t * w..(s + 1) * t * w];
            let attn = &mut attn[s * t * self.attn_dim..(s + 1) * t * self.attn_dim];
            let scores = &mut scores[..t * r];
            self.apply_rope(
                qkv,
                t,
                &cos[s * t * half..(s + 1) * t * half],
                &sin[s * t * half..(s + 1) * t * half],
            );
            let kt = &mut st.kt[li * self.kv_dim * r..(li + 1) * self.kv_dim * r];
            let vv = &mut st.v[li * self.kv_dim * r..(li + 1) * self.kv_dim * r];
            for i in 0..t {
                let slot = (pos0 + i) % r;
                let row = &qkv[i * w..(i + 1) * w];
                for kh in 0..self.num_kv_heads {
                    let k = &row[self.attn_dim + kh * hd..self.attn_dim + (kh + 1) * hd];
                    let v = &row[self.attn_dim + self.kv_dim + kh * hd..][..hd];
                    for (dd, &kv) in k.iter().enumerate() {
                        kt[(kh * hd + dd) * r + slot] = kv;
                    }
                    vv[(kh * r + slot) * hd..(kh * r + slot + 1) * hd].copy_from_slice(v);
                }
            }
            for hh in 0..self.num_heads {
                let kh = hh / rep;
                gemm::gemm_strided(
                    &kt[kh * hd * r..(kh + 1) * hd * r],
                    r,
                    hd,
                    r,
                    BView::dense(&qkv[hh * hd..], t, hd, w),
                    scores,
                    r,
                    Init::Zero,
                );
                for i in 0..t {
                    let q = (pos0 + i) as i64;
                    let row = &mut scores[i * r..(i + 1) * r];
                    for (sc, &p) in row.iter_mut().zip(&st.slot_pos) {
                        if p < 0 || p > q || (q - p) as usize >= context {
                            *sc = f32::NEG_INFINITY;
                        }
                    }
                }
                pocket_tts_simd::softmax_rows(scores, r);
                gemm::gemm_strided(
                    &vv[kh * r * hd..(kh + 1) * r * hd],
                    hd,
                    r,
                    hd,
                    BView::dense(scores, t, r, r),
                    &mut attn[hh * hd..],
                    self.attn_dim,
                    Init::Zero,
                );
            }
        }
        par_gemm(
            par,
            &layer.out_proj,
            BView::dense(attn, rows, self.attn_dim, self.attn_dim),
            x,
            d,
            Init::Accumulate,
        );
        layer.norm2.apply(par, x, h, d);
        par_gemm(
            par,
            &layer.linear1,
            BView::dense(h, rows, d, d),
            ff,
            self.ff,
            Init::Zero,
        );
        par_map(par, ff, pocket_tts_simd::gelu_tanh);
        par_gemm(
            par,
            &layer.linear2,
            BView::dense(ff, rows, self.ff, self.ff),
            x,
            d,
            Init::Accumulate,
        );
    }
}

/// Streaming state of one stream of [`TransformerF::stream_many`]: per layer, a ring of
/// the last `context − 1 + t` keys (transposed, `[kv_dim, r]`) and values
/// (`[kv_heads, r, head_dim]`), and the position of each ring slot.
#[derive(Debug, Clone)]
pub(super) struct TransformerStreamF {
    t: usize,
    r: usize,
    pos: usize,
    kt: Vec<f32>,
    v: Vec<f32>,
    slot_pos: Vec<i64>,
}

impl TransformerStreamF {
    pub(super) fn reset(&mut self) {
        self.pos = 0;
        self.slot_pos.fill(-1);
        self.kt.fill(0.0);
        self.v.fill(0.0);
    }
}

/// The buffers of a [`TransformerF::stream_many`] frame for up to `rows` rows (the
/// streams' steps, stacked), shared by the streams a thread decodes: activations,
/// `q|k|v`, attention output, feed-forward hidden, output, RoPE tables, one head's scores.
#[derive(Debug, Clone, Default)]
pub(super) struct TransformerScratchF {
    rows: usize,
    t: usize,
    x: Vec<f32>,
    h: Vec<f32>,
    qkv: Vec<f32>,
    attn: Vec<f32>,
    ff: Vec<f32>,
    out: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
    scores: Vec<f32>,
}
