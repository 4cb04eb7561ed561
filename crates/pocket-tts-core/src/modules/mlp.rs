//! The flow head: an MLP with adaptive layer norm conditioned on the backbone output
//! and on flow times (reference: `modules/mlp.py`, `SimpleMLPAdaLN`, after MAR's
//! diffusion loss, arXiv:2406.11838).

use candle_core::{Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use super::layers::{LayerNorm, RmsNorm};
use super::linear::{LinearStorage, MaybeQuantizedLinear};
use crate::modules::weights_view::{
    FlowFinalLayerView, FlowHeadView, FlowResBlockView, TimestepEmbedderView,
};

/// [`MaybeQuantizedLinear::load`] for a flow-head linear: 4-bit storage falls back to int8
/// for an input width that is not a multiple of [`pocket_tts_simd::Q4_BLOCK`] (the head's
/// storage follows `--quantize`, which asked for the transformer's linears to be 4-bit;
/// the head's narrow input projection should not refuse the model).
fn head_linear(
    in_dim: usize,
    out_dim: usize,
    bias: bool,
    storage: LinearStorage,
    vb: VarBuilder,
) -> Result<MaybeQuantizedLinear> {
    let storage = match storage {
        LinearStorage::Q4 if !in_dim.is_multiple_of(pocket_tts_simd::Q4_BLOCK) => {
            LinearStorage::Int8
        }
        s => s,
    };
    MaybeQuantizedLinear::load(in_dim, out_dim, bias, storage, vb)
}

/// `x * (1 + scale) + shift`.
fn modulate(x: &Tensor, shift: &Tensor, scale: &Tensor) -> Result<Tensor> {
    x.broadcast_mul(&(scale + 1.0)?)?.broadcast_add(shift)
}

/// Sinusoidal embedding of a scalar time followed by an MLP and the reference's
/// RMS norm (reference: `TimestepEmbedder`). Loads `freqs` `[F/2]`, `mlp.0`, `mlp.2`,
/// `mlp.3.alpha`.
#[derive(Debug, Clone)]
pub struct TimestepEmbedder {
    freqs: Tensor,
    linear1: MaybeQuantizedLinear,
    linear2: MaybeQuantizedLinear,
    norm: RmsNorm,
}

impl TimestepEmbedder {
    /// Frequency embedding width 256, like the reference; the two linears' weights stored
    /// as `storage`.
    pub fn new(hidden: usize, storage: LinearStorage, vb: VarBuilder) -> Result<Self> {
        let freq_dim = 256;
        Ok(Self {
            freqs: vb.get(freq_dim / 2, "freqs")?,
            linear1: head_linear(freq_dim, hidden, true, storage, vb.pp("mlp.0"))?,
            linear2: head_linear(hidden, hidden, true, storage, vb.pp("mlp.2"))?,
            norm: RmsNorm::new(hidden, 1e-5, vb.pp("mlp.3"))?,
        })
    }

    /// The weights, read-only.
    pub fn view(&self) -> TimestepEmbedderView<'_> {
        TimestepEmbedderView {
            freqs: &self.freqs,
            linear1: self.linear1.view(),
            linear2: self.linear2.view(),
            norm: self.norm.view(),
        }
    }

    /// `t`: `[N, 1]` → `[N, hidden]`.
    pub fn forward(&self, t: &Tensor) -> Result<Tensor> {
        let args = t.broadcast_mul(&self.freqs.unsqueeze(0)?)?;
        let emb = Tensor::cat(&[args.cos()?, args.sin()?], D::Minus1)?;
        let h = self.linear1.forward(&emb)?.silu()?;
        self.norm.forward(&self.linear2.forward(&h)?)
    }
}

/// Residual block modulated by the condition (reference: `ResBlock`).
#[derive(Debug, Clone)]
pub struct ResBlock {
    in_ln: LayerNorm,
    mlp1: MaybeQuantizedLinear,
    mlp2: MaybeQuantizedLinear,
    ada_ln: MaybeQuantizedLinear,
}

impl ResBlock {
    fn new(channels: usize, storage: LinearStorage, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            in_ln: LayerNorm::new(channels, 1e-6, vb.pp("in_ln"))?,
            mlp1: head_linear(channels, channels, true, storage, vb.pp("mlp.0"))?,
            mlp2: head_linear(channels, channels, true, storage, vb.pp("mlp.2"))?,
            ada_ln: head_linear(
                channels,
                3 * channels,
                true,
                storage,
                vb.pp("adaLN_modulation.1"),
            )?,
        })
    }

    /// The weights, read-only.
    pub fn view(&self) -> FlowResBlockView<'_> {
        FlowResBlockView {
            in_ln: self.in_ln.view(),
            mlp1: self.mlp1.view(),
            mlp2: self.mlp2.view(),
            ada_ln: self.ada_ln.view(),
        }
    }

    fn forward(&self, x: &Tensor, y: &Tensor) -> Result<Tensor> {
        let m = self.ada_ln.forward(&y.silu()?)?.chunk(3, D::Minus1)?;
        let h = modulate(&self.in_ln.forward(x)?, &m[0], &m[1])?;
        let h = self.mlp2.forward(&self.mlp1.forward(&h)?.silu()?)?;
        x + h.broadcast_mul(&m[2])?
    }
}

/// The DiT-style final layer (reference: `FinalLayer`).
#[derive(Debug, Clone)]
pub struct FinalLayer {
    norm: LayerNorm,
    linear: MaybeQuantizedLinear,
    ada_ln: MaybeQuantizedLinear,
}

impl FinalLayer {
    fn new(channels: usize, out: usize, storage: LinearStorage, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            norm: LayerNorm::no_affine(channels, 1e-6),
            linear: head_linear(channels, out, true, storage, vb.pp("linear"))?,
            ada_ln: head_linear(
                channels,
                2 * channels,
                true,
                storage,
                vb.pp("adaLN_modulation.1"),
            )?,
        })
    }

    /// The weights, read-only.
    pub fn view(&self) -> FlowFinalLayerView<'_> {
        FlowFinalLayerView {
            norm: self.norm.view(),
            linear: self.linear.view(),
            ada_ln: self.ada_ln.view(),
        }
    }

    fn forward(&self, x: &Tensor, c: &Tensor) -> Result<Tensor> {
        let m = self.ada_ln.forward(&c.silu()?)?.chunk(2, D::Minus1)?;
        self.linear
            .forward(&modulate(&self.norm.forward(x)?, &m[0], &m[1])?)
    }
}

/// The flow network `v(c, t_1..t_k, x)` (reference: `SimpleMLPAdaLN`).
#[derive(Debug, Clone)]
pub struct SimpleMlpAdaLn {
    time_embed: Vec<TimestepEmbedder>,
    cond_embed: MaybeQuantizedLinear,
    input_proj: MaybeQuantizedLinear,
    res_blocks: Vec<ResBlock>,
    final_layer: FinalLayer,
}

impl SimpleMlpAdaLn {
    /// `in_channels` latent width (also the output width), `model_channels` MLP width,
    /// `cond_channels` backbone width, `depth` residual blocks, `num_time_conds`
    /// time inputs (2 for LSD). Every linear's weight is stored as `storage` (16 bits
    /// with the FlowLM's `dtype` `float16`/`bfloat16`; biases stay `f32`).
    pub fn new(
        in_channels: usize,
        model_channels: usize,
        cond_channels: usize,
        depth: usize,
        num_time_conds: usize,
        storage: LinearStorage,
        vb: VarBuilder,
    ) -> Result<Self> {
        Ok(Self {
            time_embed: (0..num_time_conds)
                .map(|i| {
                    TimestepEmbedder::new(model_channels, storage, vb.pp(format!("time_embed.{i}")))
                })
                .collect::<Result<_>>()?,
            cond_embed: head_linear(
                cond_channels,
                model_channels,
                true,
                storage,
                vb.pp("cond_embed"),
            )?,
            input_proj: head_linear(
                in_channels,
                model_channels,
                true,
                storage,
                vb.pp("input_proj"),
            )?,
            res_blocks: (0..depth)
                .map(|i| ResBlock::new(model_channels, storage, vb.pp(format!("res_blocks.{i}"))))
                .collect::<Result<_>>()?,
            final_layer: FinalLayer::new(
                model_channels,
                in_channels,
                storage,
                vb.pp("final_layer"),
            )?,
        })
    }

    /// The weights, read-only.
    pub fn view(&self) -> FlowHeadView<'_> {
        FlowHeadView {
            time_embed: self.time_embed.iter().map(TimestepEmbedder::view).collect(),
            cond_embed: self.cond_embed.view(),
            input_proj: self.input_proj.view(),
            res_blocks: self.res_blocks.iter().map(ResBlock::view).collect(),
            final_layer: self.final_layer.view(),
        }
    }

    /// Number of time conditions the head expects.
    pub fn num_time_conds(&self) -> usize {
        self.time_embed.len()
    }

    /// The condition embedding `cond_embed(c)`: `[N, cond]` → `[N, model]`. Constant
    /// across the decode steps of one frame, so callers may compute it once.
    pub fn embed_condition(&self, c: &Tensor) -> Result<Tensor> {
        self.cond_embed.forward(c)
    }

    /// `c`: `[N, cond]`, `ts`: `num_time_conds` tensors `[N, 1]`, `x`: `[N, in]` → `[N, in]`.
    pub fn forward(&self, c: &Tensor, ts: &[&Tensor], x: &Tensor) -> Result<Tensor> {
        let y = self.embed_condition(c)?;
        self.forward_embedded(&y, ts, x)
    }

    /// Like [`Self::forward`] with the condition already embedded.
    pub fn forward_embedded(&self, cond: &Tensor, ts: &[&Tensor], x: &Tensor) -> Result<Tensor> {
        if ts.len() != self.time_embed.len() {
            candle_core::bail!(
                "flow head expects {} time conditions, got {}",
                self.time_embed.len(),
                ts.len()
            );
        }
        let mut x = self.input_proj.forward(x)?;
        let mut y = cond.clone();
        if !ts.is_empty() {
            let mut sum: Option<Tensor> = None;
            for (emb, t) in self.time_embed.iter().zip(ts) {
                let e = emb.forward(t)?;
                sum = Some(match sum {
                    Some(s) => (s + e)?,
                    None => e,
                });
            }
            if let Some(s) = sum {
                y = (y + (s / ts.len() as f64)?)?;
            }
        }
        for block in &self.res_blocks {
            x = block.forward(&x, &y)?;
        }
        self.final_layer.forward(&x, &y)
    }
}
