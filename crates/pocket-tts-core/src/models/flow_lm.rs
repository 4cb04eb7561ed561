//! FlowLM: a causal transformer over text embeddings, the voice prompt and audio
//! latents, with an LSD flow head that samples the next latent and a linear EOS head
//! (reference: `models/flow_lm.py`, `FlowLMModel`).

use candle_core::{DType, Device, Module, Result, Tensor};
use candle_nn::VarBuilder;

use crate::config::FlowLmConfig;
use crate::models::model_state::{LayerKv, VoiceState};
use crate::modules::attention::KvCache;
use crate::modules::layers::LayerNorm;
use crate::modules::linear::{LinearStorage, MaybeQuantizedLinear};
use crate::modules::mlp::SimpleMlpAdaLn;
use crate::modules::text_conditioner::LutConditioner;
use crate::modules::transformer::{StreamingTransformer, TransformerSpec, TransformerState};
use crate::modules::weights_view::FlowLmView;

/// The flow head's sampler (the config's [`FlowType`](crate::config::FlowType), under the
/// name the runtimes use).
pub use crate::config::FlowType as FlowKind;

/// The FlowLM. Tensor names are those of the reference's `flow_lm.*` state dict.
#[derive(Debug, Clone)]
pub struct FlowLm {
    /// Text lookup table.
    pub conditioner: LutConditioner,
    /// Flow head.
    pub flow_net: SimpleMlpAdaLn,
    /// Backbone.
    pub transformer: StreamingTransformer,
    input_linear: MaybeQuantizedLinear,
    out_norm: LayerNorm,
    z_proj: Option<MaybeQuantizedLinear>,
    out_eos: MaybeQuantizedLinear,
    bos_emb: Tensor,
    bos_before_voice: Option<Tensor>,
    speaker_proj_weight: Tensor,
    /// Latent standard deviation `[ldim]` (latents are denormalised with it before Mimi).
    pub emb_std: Tensor,
    /// Latent mean `[ldim]`.
    pub emb_mean: Tensor,
    flow_kind: FlowKind,
    ldim: usize,
    dim: usize,
}

/// One sampled frame.
#[derive(Debug, Clone)]
pub struct FlowLmStep {
    /// The next latent, normalised, `[1, ldim]`.
    pub latent: Tensor,
    /// The EOS logit (compare with the threshold).
    pub eos_logit: f32,
}

/// How the flow head stores its linears: the FlowLM's `dtype` (`half`), except with
/// `quantize`. The reference's `--quantize` leaves the head in float (`quantization.py`,
/// `RECOMMENDED_CONFIG`); the head is 9.3 M of the FlowLM's weights (37 MB in `f32`), and
/// a quantized model is about memory (OPTIMIZATION_LOG.md §34, §38):
/// - `int8`: the head in `f16` (computed in `f32` on the exactly widened weights): half
///   its bytes for 0.1 dB of SNR against our `f32` (62.1 dB against 62.2 with an `f32`
///   head, with the default `f16` Mimi; int8 rows would give 57.7).
/// - `q4`, the smallest mode: the head in 4-bit blocks too (inputs quantized per vector as
///   the transformer's are; a linear whose input width is not a multiple of 32 in int8):
///   32 MB less than `f32`, which brings a voice-state run under 100 MB, for 43.9 dB of SNR
///   (53.2 with an `f16` head).
///
/// `float_head` (the dtype asked for explicitly) keeps `half` for int8.
fn flow_head_storage(
    quantize: Option<crate::config::Quantization>,
    half: LinearStorage,
    float_head: bool,
) -> LinearStorage {
    match (quantize, half) {
        (Some(crate::config::Quantization::Q4), _) => LinearStorage::Q4,
        (Some(_), LinearStorage::Float) if !float_head => {
            LinearStorage::Half(pocket_tts_simd::HalfKind::F16)
        }
        _ => half,
    }
}

impl FlowLm {
    /// Loads the FlowLM from `vb` (pointing at `flow_lm`). `latent_dim` is Mimi's
    /// quantizer dimension, `speaker_dim` the width of Mimi's latents. With `quantize`,
    /// the transformer's attention and feed-forward linears are converted to int8 (or
    /// 4-bit blocks) as they are read (reference: `quantization.py`, `apply_dynamic_int8` with
    /// `RECOMMENDED_CONFIG`, which leaves the flow head in float; here the flow head is
    /// then stored in `f16`, or in 4 bits with `q4`, see `flow_head_storage`).
    ///
    /// `cfg.dtype` (reference: `FlowLMModel` built with `dtype=getattr(torch,
    /// config.dtype)`) sets how the other linears store their weights: with `float16` or
    /// `bfloat16`, every linear that a step reads (the transformer's attention and
    /// feed-forward linears unless they are int8, the flow head's, `input_linear`,
    /// `z_proj`, `out_eos`) is converted to 16 bits as it is read, and computed in `f32`
    /// (the reference computes in the 16-bit type). Biases, norms, embeddings, the lookup
    /// table (and its projection) and `speaker_proj_weight` stay `f32`.
    pub fn new(
        cfg: &FlowLmConfig,
        latent_dim: usize,
        speaker_dim: usize,
        quantize: Option<crate::config::Quantization>,
        vb: VarBuilder,
    ) -> Result<Self> {
        Self::with_float_head(cfg, latent_dim, speaker_dim, quantize, false, vb)
    }

    /// [`Self::new`]; with `float_head` and int8 `quantize`, the flow head keeps `cfg.dtype`
    /// (`float32`: the reference's `--quantize`, 0.1–0.2 dB closer to the float speech
    /// than `f16` for 19 MB more, OPTIMIZATION_LOG.md §38) instead of `f16`. The loader sets it
    /// when the dtype was asked for explicitly (`--quantize --dtype f32`).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn with_float_head(
        cfg: &FlowLmConfig,
        latent_dim: usize,
        speaker_dim: usize,
        quantize: Option<crate::config::Quantization>,
        float_head: bool,
        vb: VarBuilder,
    ) -> Result<Self> {
        let t = &cfg.transformer;
        let d = t.d_model;
        let half = LinearStorage::for_dtype(cfg.dtype);
        let spec = TransformerSpec {
            d_model: d,
            num_heads: t.num_heads,
            num_layers: t.num_layers,
            dim_feedforward: t.dim_feedforward.unwrap_or(d * t.hidden_scale),
            layer_scale: false,
            context: None,
            max_period: t.max_period,
            attn_dim: t.attn_dim,
            num_kv_heads: t.num_kv_heads,
            linears: match quantize {
                Some(crate::config::Quantization::Int8) => LinearStorage::Int8,
                Some(crate::config::Quantization::Q4) => LinearStorage::Q4,
                None => half,
            },
        };
        let flow_kind = cfg.flow.kind;
        let z = cfg.z_dim.unwrap_or(d);
        Ok(Self {
            conditioner: LutConditioner::new(
                cfg.lookup_table.n_bins,
                cfg.lookup_table.dim,
                cfg.lookup_table.rank,
                vb.pp("conditioner"),
            )?,
            flow_net: SimpleMlpAdaLn::new(
                latent_dim,
                cfg.flow.dim,
                z,
                cfg.flow.depth,
                flow_kind.num_time_conds(),
                flow_head_storage(quantize, half, float_head),
                vb.pp("flow_net"),
            )?,
            transformer: StreamingTransformer::new(&spec, vb.pp("transformer"))?,
            input_linear: MaybeQuantizedLinear::load(
                latent_dim,
                d,
                false,
                half,
                vb.pp("input_linear"),
            )?,
            out_norm: LayerNorm::new(d, 1e-5, vb.pp("out_norm"))?,
            z_proj: match cfg.z_dim {
                Some(zd) => Some(MaybeQuantizedLinear::load(
                    d,
                    zd,
                    false,
                    half,
                    vb.pp("z_proj"),
                )?),
                None => None,
            },
            out_eos: MaybeQuantizedLinear::load(z, 1, true, half, vb.pp("out_eos"))?,
            bos_emb: vb.get(latent_dim, "bos_emb")?,
            bos_before_voice: if cfg.insert_bos_before_voice {
                Some(vb.get((1, 1, d), "bos_before_voice")?)
            } else {
                None
            },
            speaker_proj_weight: vb.get((d, speaker_dim), "speaker_proj_weight")?,
            emb_std: vb.get(latent_dim, "emb_std")?,
            emb_mean: vb.get(latent_dim, "emb_mean")?,
            flow_kind,
            ldim: latent_dim,
            dim: d,
        })
    }

    /// The weights and hyper-parameters a runtime needs, read-only (see
    /// [`crate::internals::modules::weights_view`]).
    pub fn view(&self) -> FlowLmView<'_> {
        FlowLmView {
            ldim: self.ldim,
            dim: self.dim,
            flow_kind: self.flow_kind,
            conditioner: self.conditioner.view(),
            speaker_proj_weight: &self.speaker_proj_weight,
            bos_before_voice: self.bos_before_voice.as_ref(),
            bos_emb: &self.bos_emb,
            input_linear: self.input_linear.view(),
            transformer: self.transformer.view(),
            out_norm: self.out_norm.view(),
            z_proj: self.z_proj.as_ref().map(MaybeQuantizedLinear::view),
            out_eos: self.out_eos.view(),
            flow_net: self.flow_net.view(),
        }
    }

    /// Latent width.
    pub fn ldim(&self) -> usize {
        self.ldim
    }

    /// Backbone width.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The flow type.
    pub fn flow_kind(&self) -> FlowKind {
        self.flow_kind
    }

    /// A fresh backbone state with room for `capacity` positions.
    pub fn init_state(&self, capacity: usize, device: &Device) -> Result<TransformerState> {
        self.transformer.init_state(1, capacity, device)
    }

    /// Projects Mimi latents `[1, F, speaker_dim]` to voice conditioning `[1, F, dim]`,
    /// prefixed with the learnt BOS embedding when the model has one
    /// (reference: `TTSModel._encode_audio` and `get_state_for_audio_prompt`).
    pub fn voice_conditioning(&self, latents: &Tensor) -> Result<Tensor> {
        let cond = latents.broadcast_matmul(&self.speaker_proj_weight.t()?)?;
        match &self.bos_before_voice {
            Some(bos) => Tensor::cat(&[bos, &cond], 1),
            None => Ok(cond),
        }
    }

    /// Backbone without the heads: `x` `[1, T, dim]` → normalised output `[1, T, z]`.
    /// Reference: `FlowLMModel.backbone`.
    pub fn backbone(&self, x: &Tensor, state: &mut TransformerState) -> Result<Tensor> {
        let out = self
            .out_norm
            .forward(&self.transformer.forward(x, state)?)?;
        match &self.z_proj {
            Some(p) => p.forward(&out),
            None => Ok(out),
        }
    }

    /// Feeds conditioning embeddings `[1, T, dim]` (text or voice) into the backbone,
    /// advancing `state` by `T` (the prefill; its sampled latent is discarded by the
    /// reference, so it is not computed here).
    pub fn prefill(&self, embeddings: &Tensor, state: &mut TransformerState) -> Result<()> {
        if embeddings.dim(1)? > 0 {
            self.transformer.forward(embeddings, state)?;
        }
        Ok(())
    }

    /// Text token ids → embeddings `[1, T, dim]`.
    pub fn embed_text(&self, tokens: &[u32], device: &Device) -> Result<Tensor> {
        let t = Tensor::from_slice(tokens, (1, tokens.len()), device)?;
        self.conditioner.forward(&t)
    }

    /// The EOS logit of backbone outputs `[N, z]` → `[N, 1]`.
    pub fn eos_logits(&self, z: &Tensor) -> Result<Tensor> {
        self.out_eos.forward(z)
    }

    /// Samples a latent `[N, ldim]` from the flow head given backbone outputs `c`
    /// `[N, z]` and starting noise `x0` `[N, ldim]` with `steps` decode steps.
    pub fn decode_flow(&self, c: &Tensor, x0: &Tensor, steps: usize) -> Result<Tensor> {
        let cond = self.flow_net.embed_condition(c)?;
        let n = x0.dim(0)?;
        let dev = x0.device();
        let full = |v: f64| Tensor::full(v as f32, (n, 1), dev);
        match self.flow_kind {
            FlowKind::Lsd => {
                let mut current = x0.clone();
                for i in 0..steps {
                    let s = full(i as f64 / steps as f64)?;
                    let t = full((i + 1) as f64 / steps as f64)?;
                    let dir = self.flow_net.forward_embedded(&cond, &[&s, &t], &current)?;
                    current = (current + (dir / steps as f64)?)?;
                }
                Ok(current)
            }
            FlowKind::FlowMatching => {
                let mut current = x0.clone();
                for i in 0..steps {
                    let t = full(i as f64 / steps as f64)?;
                    let dir = self.flow_net.forward_embedded(&cond, &[&t], &current)?;
                    current = (current + (dir / steps as f64)?)?;
                }
                Ok(current)
            }
            FlowKind::Drifting => self.flow_net.forward_embedded(&cond, &[], x0),
            FlowKind::Pointwise => x0 + self.flow_net.forward_embedded(&cond, &[], x0)?,
        }
    }

    /// One autoregressive step: feeds the previous latent (`None` for the first step,
    /// which uses the BOS embedding) and samples the next one from `noise` `[1, ldim]`.
    /// Reference: `FlowLMModel.forward` in generation mode.
    pub fn step(
        &self,
        previous: Option<&Tensor>,
        noise: &Tensor,
        decode_steps: usize,
        state: &mut TransformerState,
    ) -> Result<FlowLmStep> {
        let input = match previous {
            Some(p) => p.reshape((1, 1, self.ldim))?,
            None => self.bos_emb.reshape((1, 1, self.ldim))?,
        };
        let x = self.input_linear.forward(&input)?;
        let z = self.backbone(&x, state)?.squeeze(1)?.to_dtype(DType::F32)?;
        let eos_logit = self.eos_logits(&z)?.flatten_all()?.to_vec1::<f32>()?[0];
        let latent = self.decode_flow(&z, noise, decode_steps)?;
        Ok(FlowLmStep { latent, eos_logit })
    }

    /// `emb_std` `[ldim]` as values.
    ///
    /// # Errors
    /// A tensor error if the weights cannot be read (a bug: they are checked at load).
    pub fn emb_std_values(&self) -> Result<Vec<f32>> {
        self.emb_std.flatten_all()?.to_vec1::<f32>()
    }

    /// `emb_mean` `[ldim]` as values.
    ///
    /// # Errors
    /// As [`Self::emb_std_values`].
    pub fn emb_mean_values(&self) -> Result<Vec<f32>> {
        self.emb_mean.flatten_all()?.to_vec1::<f32>()
    }

    /// Denormalises latents `[.., ldim]` for Mimi: `x * emb_std + emb_mean`.
    pub fn denormalize(&self, latents: &Tensor) -> Result<Tensor> {
        latents
            .broadcast_mul(&self.emb_std)?
            .broadcast_add(&self.emb_mean)
    }
}

/// Voice states in and out of the Candle caches (the Candle backend's side of
/// [`VoiceState`]).
impl TransformerState {
    /// The Candle caches of a voice state (batch 1, whole unwindowed caches, as
    /// `TTSModel.get_state_for_audio_prompt` leaves them), with room for at least `capacity`
    /// positions per layer: what the Candle backend generates from.
    pub fn from_voice(voice: &VoiceState, capacity: usize, device: &Device) -> Result<Self> {
        let shape = (1, voice.kv_heads(), voice.len(), voice.head_dim());
        let caches = voice
            .layers()
            .iter()
            .map(|layer| {
                let k = Tensor::from_slice(&layer.keys, shape, device)?;
                let v = Tensor::from_slice(&layer.values, shape, device)?;
                KvCache::from_kv(&k, &v, voice.len(), capacity.max(voice.len()))
            })
            .collect::<Result<_>>()?;
        Ok(Self { caches })
    }

    /// These caches as a [`VoiceState`] (batch 1): the positions each layer holds.
    ///
    /// # Errors
    /// A Candle error for caches of another batch size or dtype, and
    /// [`VoiceState::new`]'s checks (as a wrapped [`crate::Error`]).
    pub fn to_voice(&self) -> Result<VoiceState> {
        let mut layers = Vec::with_capacity(self.caches.len());
        let (mut heads, mut head_dim) = (0, 0);
        for cache in &self.caches {
            let (k, v) = cache.kv()?;
            let (_, h, _, d) = k.dims4()?;
            (heads, head_dim) = (h, d);
            let flat = |t: Tensor| -> Result<Vec<f32>> {
                t.to_dtype(candle_core::DType::F32)?
                    .flatten_all()?
                    .to_vec1::<f32>()
            };
            layers.push(LayerKv {
                keys: flat(k)?,
                values: flat(v)?,
            });
        }
        let len = self.caches.first().map_or(0, |c| c.len());
        VoiceState::new(layers, heads, head_dim, len).map_err(crate::Error::into_candle)
    }
}
