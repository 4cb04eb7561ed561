//! Many streams through the FlowLM in one pass ([`FlowLmFast::forward_batch`]): the
//! autoregressive steps of every active stream and the text prefill of newcomers share
//! each weight read (Python package pocket-tts 4.0.1: the same computation as
//! `FlowLMModel.forward` / `_sample_next_latent` per stream; batching is ours, scheduled
//! per step as in vLLM's continuous batching with chunked prefill).
//!
//! Every row of the pass (a stream's step, or one position of a prefill) goes through
//! the same linears as [`FlowLmFast::step`] and [`FlowLmFast::prefill`] compute it:
//! `gemv_multi` gives each token the dot products `gemv` gives it (same kernels, same
//! rounding order), int8 layers the same integer products, so a stream's latents do not
//! depend on the streams it is batched with. Attention, RoPE and the KV cache writes
//! stay per stream, at each stream's own position.

use pocket_tts_simd as simd;

use super::par::{matmul_layer, matmul_lin};
use super::state::FlowScratch;
use super::{flow_head::modulate, FlowLmFast, FlowLmFastState};
use crate::models::flow_lm::FlowKind;
use crate::{Error, Result};

/// What one stream feeds a batched pass.
#[derive(Debug, Clone, Copy)]
pub enum BatchInput<'a> {
    /// One autoregressive step, as [`FlowLmFast::step`]: the previous latent `[ldim]`
    /// (`None`: BOS, a chunk's first step), the flow's noise `[ldim]` and its decode
    /// steps. Produces a latent and an EOS logit.
    Step {
        /// The previous normalised latent, `[ldim]`; `None` for the BOS embedding.
        previous: Option<&'a [f32]>,
        /// The flow's starting point `[ldim]` (`N(0, temperature)` or zeros).
        noise: &'a [f32],
        /// Flow decode steps (LSD: 1).
        decode_steps: usize,
    },
    /// Prefill positions, as [`FlowLmFast::prefill`]: conditioning embeddings `[t, dim]`
    /// (from [`FlowLmFast::embed_tokens`]); a long prompt may be fed a piece per pass.
    Prefill {
        /// Row-major `[t, dim]`.
        embeddings: &'a [f32],
    },
}

/// One stream of a batched pass: its state and what it feeds.
#[derive(Debug)]
pub struct BatchItem<'a> {
    /// The stream's KV caches and position (from [`FlowLmFast::new_state`]).
    pub state: &'a mut FlowLmFastState,
    /// Its input this pass.
    pub input: BatchInput<'a>,
}

/// Reused buffers of [`FlowLmFast::forward_batch`] (grown to the largest pass so far).
#[derive(Debug, Default)]
pub struct BatchScratch {
    inp: Vec<f32>,
    x: Vec<f32>,
    h: Vec<f32>,
    qkv: Vec<f32>,
    att: Vec<f32>,
    ff: Vec<f32>,
    z: Vec<f32>,
    zn: Vec<f32>,
    eos: Vec<f32>,
    flow: BatchFlow,
    /// Time embeddings, one scratch per decode-step count seen.
    times: Vec<FlowScratch>,
}

/// Buffers of the batched flow head, `[rows, …]`.
#[derive(Debug, Default)]
struct BatchFlow {
    z: Vec<f32>,
    noise: Vec<f32>,
    out: Vec<f32>,
    cond: Vec<f32>,
    y: Vec<f32>,
    ys: Vec<f32>,
    h: Vec<f32>,
    t1: Vec<f32>,
    t2: Vec<f32>,
    ada: Vec<f32>,
    dir: Vec<f32>,
}

/// Resizes `v` to `n` values (contents unspecified).
fn fit(v: &mut Vec<f32>, n: usize) {
    v.resize(n, 0.0);
}

/// Where a stream's rows sit in the pass.
#[derive(Debug, Clone, Copy)]
struct Rows {
    start: usize,
    len: usize,
}

impl FlowLmFast {
    /// One batched pass: each item's step or prefill positions go through the transformer
    /// together (each weight read once for all rows), on the prefill threads
    /// ([`Self::set_prefill_threads`]). Step items then get their latent and EOS logit:
    /// the `k`-th step item (in `items` order) writes `latents[k·ldim..][..ldim]` and
    /// `eos[k]`. A stream's results are those of [`Self::step`] / [`Self::prefill`] on it
    /// alone. Allocates only when the pass is larger than any before.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a state of another model, wrong slice lengths
    /// (`latents` must hold `steps · ldim` values, `eos` `steps`), an empty or ragged
    /// prefill, or `decode_steps == 0` with an LSD/flow-matching head. Nothing is changed
    /// then.
    pub fn forward_batch(
        &self,
        items: &mut [BatchItem<'_>],
        scratch: &mut BatchScratch,
        latents: &mut [f32],
        eos: &mut [f32],
    ) -> Result<()> {
        self.forward_batch_on(items, scratch, latents, eos, &self.prefill_team)
    }

    /// The threads [`Self::forward_batch`] uses (the model's generation threads).
    pub fn wide_team(&self) -> &simd::Team {
        &self.prefill_team
    }

    /// [`Self::forward_batch`] on the threads of `team` (the engine passes a one-thread
    /// team while another thread decodes Mimi frames beside the pass). The bits do not
    /// depend on the team: each output row is computed whole by one thread.
    pub fn forward_batch_on(
        &self,
        items: &mut [BatchItem<'_>],
        scratch: &mut BatchScratch,
        latents: &mut [f32],
        eos: &mut [f32],
        team: &simd::Team,
    ) -> Result<()> {
        let dm = self.dims;
        let (rows, steps) = self.plan_batch(items, latents.len(), eos.len())?;
        let total: usize = rows.iter().map(|r| r.len).sum();
        if total == 0 {
            return Ok(());
        }
        for (it, r) in items.iter_mut().zip(&rows) {
            self.grow(it.state, it.state.len + r.len);
        }
        let sc = scratch;
        let d = dm.d;
        fit(&mut sc.x, total * d);
        fit(&mut sc.h, total * d);
        fit(&mut sc.qkv, total * dm.qkv_dim());
        fit(&mut sc.att, total * dm.attn_dim);
        fit(&mut sc.ff, total * dm.ff);
        // Inputs: the steps' `input_linear` rows first, then the prefill embeddings.
        fit(&mut sc.inp, steps * dm.ldim);
        for (it, r) in items.iter().zip(&rows) {
            match it.input {
                BatchInput::Step { previous, .. } => {
                    let dst = &mut sc.inp[r.start * dm.ldim..(r.start + 1) * dm.ldim];
                    match previous {
                        Some(p) => dst.copy_from_slice(p),
                        None => dst.copy_from_slice(&self.bos_emb.get()),
                    }
                }
                BatchInput::Prefill { embeddings } => {
                    sc.x[r.start * d..(r.start + r.len) * d].copy_from_slice(embeddings);
                }
            }
        }
        if steps > 0 {
            let x = &mut sc.x[..steps * d];
            matmul_lin(&sc.inp, steps, &self.input_linear, x, false, team);
        }
        self.layers_batch(items, &rows, sc, total, team);
        for (it, r) in items.iter_mut().zip(&rows) {
            it.state.len += r.len;
        }
        if steps > 0 {
            self.heads_batch(items, &rows, steps, sc, latents, eos, team);
        }
        Ok(())
    }

    /// Checks every item and places its rows: step rows first (in item order), then the
    /// prefill rows. Returns the rows of each item and the number of steps.
    fn plan_batch(
        &self,
        items: &[BatchItem<'_>],
        latents_len: usize,
        eos_len: usize,
    ) -> Result<(Vec<Rows>, usize)> {
        let dm = self.dims;
        let bad = |m: String| {
            Err(Error::invalid_argument(format!(
                "FlowLmFast::forward_batch: {m}"
            )))
        };
        let mut steps = 0;
        for (k, it) in items.iter().enumerate() {
            self.check_state(it.state)?;
            match it.input {
                BatchInput::Step {
                    previous,
                    noise,
                    decode_steps,
                } => {
                    if noise.len() != dm.ldim || previous.is_some_and(|p| p.len() != dm.ldim) {
                        return bad(format!(
                            "item {k}: noise and previous must have {} values",
                            dm.ldim
                        ));
                    }
                    if decode_steps == 0 && self.kind.num_time_conds() > 0 {
                        return bad(format!("item {k}: decode_steps must be at least 1"));
                    }
                    steps += 1;
                }
                BatchInput::Prefill { embeddings } => {
                    if embeddings.is_empty() || !embeddings.len().is_multiple_of(dm.d) {
                        return bad(format!(
                            "item {k}: {} prefill values are not a whole, non-zero number of \
                             rows of width {}",
                            embeddings.len(),
                            dm.d
                        ));
                    }
                }
            }
        }
        if latents_len != steps * dm.ldim || eos_len != steps {
            return bad(format!(
                "{steps} steps need {} latent values and {steps} EOS logits, got {latents_len} \
                 and {eos_len}",
                steps * dm.ldim
            ));
        }
        let (mut next_step, mut next_prefill) = (0, steps);
        let rows = items
            .iter()
            .map(|it| match it.input {
                BatchInput::Step { .. } => {
                    next_step += 1;
                    Rows {
                        start: next_step - 1,
                        len: 1,
                    }
                }
                BatchInput::Prefill { embeddings } => {
                    let len = embeddings.len() / dm.d;
                    next_prefill += len;
                    Rows {
                        start: next_prefill - len,
                        len,
                    }
                }
            })
            .collect();
        Ok((rows, steps))
    }

    /// The transformer layers over the `total` rows of `sc.x`: linears batched, RoPE, KV
    /// cache writes and attention per stream at its own positions.
    fn layers_batch(
        &self,
        items: &mut [BatchItem<'_>],
        rows: &[Rows],
        sc: &mut BatchScratch,
        total: usize,
        team: &simd::Team,
    ) {
        let dm = self.dims;
        let (d, qkv_dim) = (dm.d, dm.qkv_dim());
        for (l, lw) in self.layers.iter().enumerate() {
            lw.norm1.apply(&sc.x, &mut sc.h, d);
            matmul_layer(&sc.h, total, &lw.in_proj, &mut sc.qkv, false, team);
            for (it, r) in items.iter_mut().zip(rows) {
                let s = &mut *it.state;
                let cap = s.capacity;
                for i in 0..r.len {
                    let row = &mut sc.qkv[(r.start + i) * qkv_dim..(r.start + i + 1) * qkv_dim];
                    s.rope_and_store(l, s.len + i, row);
                }
                for i in 0..r.len {
                    let row = r.start + i;
                    let q = &sc.qkv[row * qkv_dim..row * qkv_dim + dm.attn_dim];
                    let out = &mut sc.att[row * dm.attn_dim..(row + 1) * dm.attn_dim];
                    let len = s.len + i + 1;
                    self.attention(team, q, &s.k[l], &s.v[l], len, cap, &mut s.scores, out);
                }
            }
            matmul_layer(&sc.att, total, &lw.out_proj, &mut sc.x, true, team);
            lw.norm2.apply(&sc.x, &mut sc.h, d);
            matmul_layer(&sc.h, total, &lw.linear1, &mut sc.ff, false, team);
            simd::gelu_tanh(&mut sc.ff);
            matmul_layer(&sc.ff, total, &lw.linear2, &mut sc.x, true, team);
        }
    }

    /// Output norm, EOS logits and the flow head of the `steps` step rows (rows
    /// `0..steps` of `sc.x`), the flow head batched over the steps that share a decode-step
    /// count.
    #[allow(clippy::too_many_arguments)]
    fn heads_batch(
        &self,
        items: &[BatchItem<'_>],
        rows: &[Rows],
        steps: usize,
        sc: &mut BatchScratch,
        latents: &mut [f32],
        eos: &mut [f32],
        team: &simd::Team,
    ) {
        let dm = self.dims;
        let (d, zd, ldim) = (dm.d, dm.z, dm.ldim);
        fit(&mut sc.zn, steps * d);
        self.out_norm.apply(&sc.x[..steps * d], &mut sc.zn, d);
        match &self.z_proj {
            Some(p) => {
                fit(&mut sc.z, steps * zd);
                matmul_lin(&sc.zn, steps, p, &mut sc.z, false, team);
            }
            None => {
                sc.z.clear();
                sc.z.extend_from_slice(&sc.zn);
            }
        }
        fit(&mut sc.eos, steps);
        matmul_lin(&sc.z, steps, &self.out_eos, &mut sc.eos, false, team);
        eos.copy_from_slice(&sc.eos);
        // The flow head, once per distinct decode-step count.
        let mut counts: Vec<usize> = Vec::new();
        for it in items.iter() {
            if let BatchInput::Step { decode_steps, .. } = it.input {
                if !counts.contains(&decode_steps) {
                    counts.push(decode_steps);
                }
            }
        }
        for ds in counts {
            let group: Vec<(usize, &[f32])> = items
                .iter()
                .zip(rows)
                .filter_map(|(it, r)| match it.input {
                    BatchInput::Step {
                        noise,
                        decode_steps,
                        ..
                    } if decode_steps == ds => Some((r.start, noise)),
                    _ => None,
                })
                .collect();
            let f = &mut sc.flow;
            let n = group.len();
            fit(&mut f.z, n * zd);
            fit(&mut f.noise, n * ldim);
            for (g, (row, noise)) in group.iter().enumerate() {
                f.z[g * zd..(g + 1) * zd].copy_from_slice(&sc.z[row * zd..(row + 1) * zd]);
                f.noise[g * ldim..(g + 1) * ldim].copy_from_slice(noise);
            }
            let times = self.time_scratch(&mut sc.times, ds, team);
            self.flow_decode_batch(team, n, ds, times, f);
            for (g, (row, _)) in group.iter().enumerate() {
                latents[row * ldim..(row + 1) * ldim]
                    .copy_from_slice(&f.out[g * ldim..(g + 1) * ldim]);
            }
        }
    }

    /// The time-embedding cache for `steps` decode steps (computed once per count).
    fn time_scratch<'s>(
        &self,
        times: &'s mut Vec<FlowScratch>,
        steps: usize,
        team: &simd::Team,
    ) -> &'s FlowScratch {
        let i = match times.iter().position(|f| f.time_cache_steps == steps) {
            Some(i) => i,
            None => {
                let mut f = FlowScratch::new(self.dims);
                if self.kind.num_time_conds() > 0 {
                    self.fill_time_cache(team, steps, &mut f);
                }
                f.time_cache_steps = steps;
                times.push(f);
                times.len() - 1
            }
        };
        &times[i]
    }

    /// [`Self::flow_decode`] over `n` rows: `f.z` `[n, z_dim]` and `f.noise` `[n, ldim]`
    /// in, `f.out` `[n, ldim]` out.
    fn flow_decode_batch(
        &self,
        team: &simd::Team,
        n: usize,
        steps: usize,
        times: &FlowScratch,
        f: &mut BatchFlow,
    ) {
        let (fd, ldim) = (self.flow.dim, self.dims.ldim);
        fit(&mut f.cond, n * fd);
        matmul_lin(&f.z, n, &self.flow.cond, &mut f.cond, false, team);
        fit(&mut f.out, n * ldim);
        fit(&mut f.dir, n * ldim);
        fit(&mut f.y, n * fd);
        match self.kind {
            FlowKind::Lsd | FlowKind::FlowMatching => {
                f.out.copy_from_slice(&f.noise);
                let inv = (1.0 / steps as f64) as f32;
                for i in 0..steps {
                    let t = &times.time_cache[i * fd..(i + 1) * fd];
                    for (y, c) in f.y.chunks_exact_mut(fd).zip(f.cond.chunks_exact(fd)) {
                        for ((y, c), t) in y.iter_mut().zip(c).zip(t) {
                            *y = c + t;
                        }
                    }
                    let x = std::mem::take(&mut f.out);
                    let mut dir = std::mem::take(&mut f.dir);
                    self.head_batch(team, n, &x, f, &mut dir);
                    f.out = x;
                    for (o, d) in f.out.iter_mut().zip(&dir) {
                        *o += d * inv + 0.0;
                    }
                    f.dir = dir;
                }
            }
            FlowKind::Drifting => {
                f.y.copy_from_slice(&f.cond);
                let x = std::mem::take(&mut f.noise);
                let mut out = std::mem::take(&mut f.out);
                self.head_batch(team, n, &x, f, &mut out);
                f.noise = x;
                f.out = out;
            }
            FlowKind::Pointwise => {
                f.y.copy_from_slice(&f.cond);
                let x = std::mem::take(&mut f.noise);
                let mut dir = std::mem::take(&mut f.dir);
                self.head_batch(team, n, &x, f, &mut dir);
                for ((o, nz), d) in f.out.iter_mut().zip(&x).zip(&dir) {
                    *o = nz + d;
                }
                f.noise = x;
                f.dir = dir;
            }
        }
    }

    /// [`Self::head`] over `n` rows: `x` `[n, ldim]` and `f.y` `[n, flow_dim]` in, `out`
    /// `[n, ldim]`.
    fn head_batch(
        &self,
        team: &simd::Team,
        n: usize,
        x: &[f32],
        f: &mut BatchFlow,
        out: &mut [f32],
    ) {
        let fd = self.flow.dim;
        f.ys.clear();
        f.ys.extend_from_slice(&f.y);
        simd::silu(&mut f.ys);
        fit(&mut f.h, n * fd);
        fit(&mut f.t1, n * fd);
        fit(&mut f.t2, n * fd);
        fit(&mut f.ada, n * 3 * fd);
        matmul_lin(x, n, &self.flow.input, &mut f.h, false, team);
        for b in &self.flow.blocks {
            matmul_lin(&f.ys, n, &b.ada, &mut f.ada, false, team);
            b.in_ln.apply(&f.h, &mut f.t1, fd);
            for (t1, ada) in f.t1.chunks_exact_mut(fd).zip(f.ada.chunks_exact(3 * fd)) {
                modulate(t1, &ada[..fd], &ada[fd..2 * fd]);
            }
            matmul_lin(&f.t1, n, &b.mlp1, &mut f.t2, false, team);
            simd::silu(&mut f.t2);
            matmul_lin(&f.t2, n, &b.mlp2, &mut f.t1, false, team);
            for ((h, u), ada) in
                f.h.chunks_exact_mut(fd)
                    .zip(f.t1.chunks_exact(fd))
                    .zip(f.ada.chunks_exact(3 * fd))
            {
                for ((h, u), g) in h.iter_mut().zip(u).zip(&ada[2 * fd..]) {
                    *h += u * g;
                }
            }
        }
        let ada = &mut f.ada[..n * 2 * fd];
        matmul_lin(&f.ys, n, &self.flow.final_ada, ada, false, team);
        self.flow.final_norm.apply(&f.h, &mut f.t1, fd);
        for (t1, ada) in f.t1.chunks_exact_mut(fd).zip(ada.chunks_exact(2 * fd)) {
            modulate(t1, &ada[..fd], &ada[fd..]);
        }
        matmul_lin(&f.t1, n, &self.flow.final_linear, out, false, team);
    }
}
