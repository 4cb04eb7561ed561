//! The backbone: [`FlowLmFast::prefill`] (GEMM over a block of positions) and
//! [`FlowLmFast::step`] (one position, then the output norm, the EOS logit and the flow
//! head) through the pre-norm transformer layers — RoPE self-attention over the KV cache and
//! the tanh-GELU feed-forward (Python package pocket-tts 4.0.1: `models/flow_lm.py`,
//! `modules/transformer.py`, `modules/attention.py`, `modules/rope.py`).

use pocket_tts_simd as simd;

use super::par::matmul_layer;
use super::{FlowLmFast, FlowLmFastState};
use crate::{Error, Result};

/// Interleaved RoPE on one head: pairs `(x[2i], x[2i+1])` rotated by `(cos[i], sin[i])`.
#[inline]
pub(super) fn rope(x: &mut [f32], cos: &[f32], sin: &[f32]) {
    for ((p, c), s) in x.chunks_exact_mut(2).zip(cos).zip(sin) {
        let (a, b) = (p[0], p[1]);
        p[0] = a * c - b * s;
        p[1] = a * s + b * c;
    }
}

impl FlowLmFastState {
    /// RoPE on the query and key heads of `row` (one `[qkv_dim]` row of `in_proj`'s
    /// output) at position `pos`, and its key and value stored at `pos` in layer `l`'s
    /// cache.
    pub(super) fn rope_and_store(&mut self, l: usize, pos: usize, row: &mut [f32]) {
        let dm = self.dims;
        let (hd, half, cap, kv_dim) = (dm.head_dim, dm.head_dim / 2, self.capacity, dm.kv_dim());
        let cos = &self.rope_cos[pos * half..(pos + 1) * half];
        let sin = &self.rope_sin[pos * half..(pos + 1) * half];
        for h in 0..dm.heads {
            rope(&mut row[h * hd..(h + 1) * hd], cos, sin);
        }
        for h in 0..dm.kv_heads {
            let k = &mut row[dm.attn_dim + h * hd..dm.attn_dim + (h + 1) * hd];
            rope(k, cos, sin);
            let at = h * cap * hd + pos * hd;
            self.k[l][at..at + hd].copy_from_slice(k);
            let v = &row[dm.attn_dim + kv_dim + h * hd..][..hd];
            self.v[l][at..at + hd].copy_from_slice(v);
        }
    }
}

impl FlowLmFast {
    /// Feeds `t` conditioning embeddings (`[t, dim]` row-major: text from
    /// [`Self::embed_tokens`] or voice from [`Self::voice_conditioning`]) through the
    /// transformer, appending `t` positions to `state` (growing it if needed). Uses GEMM;
    /// allocates scratch on first use.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `embeddings.len() != t · dim` or the state belongs to
    /// another model.
    pub fn prefill(&self, embeddings: &[f32], t: usize, state: &mut FlowLmFastState) -> Result<()> {
        self.check_state(state)?;
        let dm = self.dims;
        if embeddings.len() != t * dm.d {
            return Err(Error::invalid_argument(format!(
                "FlowLmFast::prefill: {} values for {t} positions of width {}",
                embeddings.len(),
                dm.d
            )));
        }
        if t == 0 {
            return Ok(());
        }
        self.grow(state, state.len + t);
        let s = state;
        let (d, cap, pos0, qkv_dim) = (dm.d, s.capacity, s.len, dm.qkv_dim());
        // (taken out of the state for the call: the layers also write its caches)
        let mut scratch = std::mem::take(&mut s.prefill);
        let p = &mut scratch;
        let fit = |v: &mut Vec<f32>, n: usize| {
            v.clear();
            v.resize(n, 0.0);
        };
        fit(&mut p.x, t * d);
        fit(&mut p.h, t * d);
        fit(&mut p.qkv, t * qkv_dim);
        fit(&mut p.att, t * dm.attn_dim);
        fit(&mut p.ff, t * dm.ff);
        p.x.copy_from_slice(embeddings);
        let team = &self.prefill_team;
        for (l, lw) in self.layers.iter().enumerate() {
            lw.norm1.apply(&p.x, &mut p.h, d);
            matmul_layer(&p.h, t, &lw.in_proj, &mut p.qkv, false, team);
            for (i, row) in p.qkv.chunks_exact_mut(qkv_dim).enumerate() {
                s.rope_and_store(l, pos0 + i, row);
            }
            for i in 0..t {
                let q = &p.qkv[i * qkv_dim..i * qkv_dim + dm.attn_dim];
                let out = &mut p.att[i * dm.attn_dim..(i + 1) * dm.attn_dim];
                self.attention(
                    team,
                    q,
                    &s.k[l],
                    &s.v[l],
                    pos0 + i + 1,
                    cap,
                    &mut s.scores,
                    out,
                );
            }
            matmul_layer(&p.att, t, &lw.out_proj, &mut p.x, true, team);
            lw.norm2.apply(&p.x, &mut p.h, d);
            matmul_layer(&p.h, t, &lw.linear1, &mut p.ff, false, team);
            simd::gelu_tanh(&mut p.ff);
            matmul_layer(&p.ff, t, &lw.linear2, &mut p.x, true, team);
        }
        s.prefill = scratch;
        s.len += t;
        Ok(())
    }

    /// One autoregressive step: feeds `previous_latent` (`[ldim]`; `None` for the first
    /// frame, which uses the BOS embedding) and samples the next latent from `noise`
    /// (`[ldim]`, the flow's starting point: `N(0, temperature)` or zeros) with
    /// `decode_steps` flow steps (LSD / flow matching; ignored by drifting and pointwise
    /// heads) into `latent_out` (`[ldim]`, normalised like the Candle step's latent).
    /// Returns the EOS logit. Allocation-free (see the module docs).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for wrong slice lengths, `decode_steps == 0` with an
    /// LSD/flow-matching head, or a state of another model.
    pub fn step(
        &self,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        self.step_on(
            &self.team,
            previous_latent,
            noise,
            decode_steps,
            state,
            latent_out,
        )
    }

    /// [`Self::step`] on the prefill threads ([`Self::set_prefill_threads`]) instead of
    /// the step threads: for a step taken while nothing else runs, such as the first
    /// frame of a generation, before the Mimi decoder thread has any work (it shortens
    /// the time to first audio). Same result as [`Self::step`].
    ///
    /// # Errors
    /// As [`Self::step`].
    pub fn step_wide(
        &self,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        let team = &self.prefill_team;
        self.step_on(
            team,
            previous_latent,
            noise,
            decode_steps,
            state,
            latent_out,
        )
    }

    fn step_on(
        &self,
        team: &simd::Team,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        self.check_state(state)?;
        let dm = self.dims;
        let ldim = dm.ldim;
        if noise.len() != ldim
            || latent_out.len() != ldim
            || previous_latent.is_some_and(|p| p.len() != ldim)
        {
            return Err(Error::invalid_argument(format!(
                "FlowLmFast::step: noise, latent_out and previous_latent must have {ldim} values"
            )));
        }
        if decode_steps == 0 && self.kind.num_time_conds() > 0 {
            return Err(Error::invalid_argument(
                "FlowLmFast::step: decode_steps must be at least 1",
            ));
        }
        self.grow(state, state.len + 1);
        let s = state;
        let pos = s.len;
        {
            let bos;
            let input: &[f32] = match previous_latent {
                Some(p) => p,
                None => {
                    bos = self.bos_emb.get();
                    &bos[..]
                }
            };
            self.gemv(team, &self.input_linear, input, &mut s.xq, &mut s.x, false);
        }
        let cap = s.capacity;
        for (l, lw) in self.layers.iter().enumerate() {
            lw.norm1.apply(&s.x, &mut s.hn, dm.d);
            self.gemv_layer(team, &lw.in_proj, &s.hn, &mut s.xq, &mut s.qkv, false);
            // (taken out of the state for the call, without allocating)
            let mut qkv = std::mem::take(&mut s.qkv);
            s.rope_and_store(l, pos, &mut qkv);
            s.qkv = qkv;
            self.attention(
                team,
                &s.qkv[..dm.attn_dim],
                &s.k[l],
                &s.v[l],
                pos + 1,
                cap,
                &mut s.scores,
                &mut s.att,
            );
            self.gemv_layer(team, &lw.out_proj, &s.att, &mut s.xq, &mut s.x, true);
            lw.norm2.apply(&s.x, &mut s.hn, dm.d);
            self.gemv_layer(team, &lw.linear1, &s.hn, &mut s.xq, &mut s.ff, false);
            simd::gelu_tanh(&mut s.ff);
            self.gemv_layer(team, &lw.linear2, &s.ff, &mut s.xq, &mut s.x, true);
        }
        s.len += 1;
        self.out_norm.apply(&s.x, &mut s.zn, dm.d);
        match &self.z_proj {
            Some(p) => self.gemv(team, p, &s.zn, &mut s.xq, &mut s.z, false),
            None => s.z.copy_from_slice(&s.zn),
        }
        self.gemv(team, &self.out_eos, &s.z, &mut s.xq, &mut s.eos, false);
        self.flow_decode(team, &s.z, noise, decode_steps, &mut s.flow, latent_out);
        Ok(s.eos[0])
    }
}
