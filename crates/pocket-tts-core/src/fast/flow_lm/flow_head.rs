//! The flow head: `SimpleMLPAdaLN` (time embeddings, adaLN residual blocks, final layer)
//! and the latent sampling around it — LSD / flow-matching Euler steps, drifting and
//! pointwise heads (Python package pocket-tts 4.0.1: `modules/mlp.py`, and
//! `models/flow_lm.py` for the decoding).

use pocket_tts_simd as simd;

use super::state::FlowScratch;
use super::{FlowLmFast, FlowLmFastState};
use crate::models::flow_lm::FlowKind;
#[cfg(doc)]
use crate::models::flow_lm::FlowLm;
#[cfg(doc)]
use crate::modules::layers::RmsNorm;
use crate::{Error, Result};

fn silu_into(src: &[f32], dst: &mut [f32]) {
    dst.copy_from_slice(src);
    simd::silu(dst);
}

/// `x * (1 + scale) + shift`, in place (the reference's `modulate`).
#[inline]
pub(super) fn modulate(x: &mut [f32], shift: &[f32], scale: &[f32]) {
    for ((x, sh), sc) in x.iter_mut().zip(shift).zip(scale) {
        *x = *x * (*sc + 1.0) + *sh;
    }
}

impl FlowLmFast {
    /// The flow head alone: samples a latent from a backbone output `z` (`[z_dim]`) and
    /// `noise` (`[ldim]`) into `latent_out` (Candle: [`FlowLm::decode_flow`]). Allocation-free
    /// like [`Self::step`], which calls it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for wrong slice lengths or `decode_steps == 0` with an
    /// LSD/flow-matching head.
    pub fn decode_flow(
        &self,
        z: &[f32],
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<()> {
        self.check_state(state)?;
        let dm = self.dims;
        if z.len() != dm.z || noise.len() != dm.ldim || latent_out.len() != dm.ldim {
            return Err(Error::invalid_argument(format!(
                "FlowLmFast::decode_flow: z must have {} values, noise and latent_out {}",
                dm.z, dm.ldim
            )));
        }
        if decode_steps == 0 && self.kind.num_time_conds() > 0 {
            return Err(Error::invalid_argument(
                "FlowLmFast::decode_flow: decode_steps must be at least 1",
            ));
        }
        let team = &self.team;
        self.flow_decode(team, z, noise, decode_steps, &mut state.flow, latent_out);
        Ok(())
    }

    /// Fills `f.time_cache` with the mean time embedding of each of `steps` decode steps.
    pub(super) fn fill_time_cache(&self, team: &simd::Team, steps: usize, f: &mut FlowScratch) {
        if f.time_cache_steps == steps {
            return;
        }
        let fd = self.flow.dim;
        f.time_cache.clear();
        f.time_cache.resize(steps * fd, 0.0);
        let n = self.flow.time.len();
        for i in 0..steps {
            let times = [
                (i as f64 / steps as f64) as f32,
                ((i + 1) as f64 / steps as f64) as f32,
            ];
            for (k, te) in self.flow.time.iter().enumerate() {
                let t = times[k];
                let freqs = te.freqs.get();
                let half = freqs.len();
                for (j, fr) in freqs.iter().enumerate() {
                    let arg = t * fr;
                    f.emb[j] = arg.cos();
                    f.emb[half + j] = arg.sin();
                }
                drop(freqs);
                self.gemv(team, &te.linear1, &f.emb, &mut f.xq, &mut f.t1, false);
                simd::silu(&mut f.t1);
                self.gemv(team, &te.linear2, &f.t1, &mut f.xq, &mut f.te, false);
                rms_norm(&mut f.te, &te.alpha.get(), te.eps);
                if k == 0 {
                    f.te_sum.copy_from_slice(&f.te);
                } else {
                    for (a, b) in f.te_sum.iter_mut().zip(&f.te) {
                        *a += b;
                    }
                }
            }
            let inv = (1.0 / n as f64) as f32;
            for (dst, src) in f.time_cache[i * fd..(i + 1) * fd].iter_mut().zip(&f.te_sum) {
                *dst = src * inv + 0.0;
            }
        }
        f.time_cache_steps = steps;
    }

    /// The flow head `v(c, t, x)` with the condition `y` (already `cond + time`): `x` →
    /// `out` (`[ldim]`).
    fn head(&self, team: &simd::Team, x: &[f32], f: &mut FlowScratch, out: &mut [f32]) {
        let fd = self.flow.dim;
        silu_into(&f.y, &mut f.ys);
        self.gemv(team, &self.flow.input, x, &mut f.xq, &mut f.h, false);
        for b in &self.flow.blocks {
            self.gemv(team, &b.ada, &f.ys, &mut f.xq, &mut f.ada, false);
            let (shift, rest) = f.ada.split_at(fd);
            let (scale, gate) = rest.split_at(fd);
            b.in_ln.apply(&f.h, &mut f.t1, fd);
            modulate(&mut f.t1, shift, scale);
            self.gemv(team, &b.mlp1, &f.t1, &mut f.xq, &mut f.t2, false);
            simd::silu(&mut f.t2);
            self.gemv(team, &b.mlp2, &f.t2, &mut f.xq, &mut f.t1, false);
            for ((h, u), g) in f.h.iter_mut().zip(&f.t1).zip(gate) {
                *h += u * g;
            }
        }
        let ada = &mut f.ada[..2 * fd];
        self.gemv(team, &self.flow.final_ada, &f.ys, &mut f.xq, ada, false);
        let (shift, scale) = ada.split_at(fd);
        self.flow.final_norm.apply(&f.h, &mut f.t1, fd);
        modulate(&mut f.t1, shift, scale);
        self.gemv(team, &self.flow.final_linear, &f.t1, &mut f.xq, out, false);
    }

    /// Samples a latent from the backbone output `z` (Candle: [`FlowLm::decode_flow`]).
    pub(super) fn flow_decode(
        &self,
        team: &simd::Team,
        z: &[f32],
        noise: &[f32],
        steps: usize,
        f: &mut FlowScratch,
        out: &mut [f32],
    ) {
        let mut cond = std::mem::take(&mut f.cond);
        self.gemv(team, &self.flow.cond, z, &mut f.xq, &mut cond, false);
        let fd = self.flow.dim;
        match self.kind {
            FlowKind::Lsd | FlowKind::FlowMatching => {
                self.fill_time_cache(team, steps, f);
                out.copy_from_slice(noise);
                let inv = (1.0 / steps as f64) as f32;
                let mut dir = std::mem::take(&mut f.dir);
                for i in 0..steps {
                    for ((y, c), t) in f.y.iter_mut().zip(&cond).zip(&f.time_cache[i * fd..]) {
                        *y = c + t;
                    }
                    self.head(team, out, f, &mut dir);
                    for (o, d) in out.iter_mut().zip(&dir) {
                        *o += d * inv + 0.0;
                    }
                }
                f.dir = dir;
            }
            FlowKind::Drifting => {
                f.y.copy_from_slice(&cond);
                self.head(team, noise, f, out);
            }
            FlowKind::Pointwise => {
                f.y.copy_from_slice(&cond);
                let mut dir = std::mem::take(&mut f.dir);
                self.head(team, noise, f, &mut dir);
                for ((o, n), d) in out.iter_mut().zip(noise).zip(&dir) {
                    *o = n + d;
                }
                f.dir = dir;
            }
        }
        f.cond = cond;
    }
}

/// The reference's `RMSNorm` in place: `x · alpha / sqrt(var(x) + eps)`, unbiased variance
/// (same operation order as [`RmsNorm`]).
fn rms_norm(x: &mut [f32], alpha: &[f32], eps: f32) {
    let n = x.len();
    let mean = x.iter().sum::<f32>() * (1.0 / n as f64) as f32;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>()
        * (1.0 / (n.max(2) - 1) as f64) as f32;
    let inv = 1.0 / (var + eps).sqrt();
    for (v, a) in x.iter_mut().zip(alpha) {
        *v = *v * inv * a;
    }
}
