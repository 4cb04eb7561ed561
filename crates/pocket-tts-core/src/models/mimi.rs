//! Mimi, the neural audio codec (reference: `models/mimi.py`, `MimiModel`): a SEANet
//! encoder and decoder around projected transformers, with a downsampling conv from
//! the encoder frame rate (200 Hz) to the latent frame rate (12.5 Hz) and a depthwise
//! transposed-conv upsampler back.

use candle_core::{Device, Result, Tensor, D};
use candle_nn::VarBuilder;

use crate::config::{MimiConfig, MimiTransformerConfig, WeightDtype};
use crate::modules::conv::{ConvState, ConvTrState};
use crate::modules::linear::LinearStorage;
use crate::modules::resample::{ConvDownsample1d, ConvTrUpsample1d};
use crate::modules::seanet::{SeanetDecoder, SeanetEncoder, SeanetState};
use crate::modules::transformer::{
    ProjectedTransformer, StreamingTransformerLayer, TransformerSpec, TransformerState,
};
use crate::modules::weights_view::{MimiEncoderView, MimiView};

fn transformer_spec(t: &MimiTransformerConfig) -> TransformerSpec {
    TransformerSpec {
        d_model: t.d_model,
        num_heads: t.num_heads,
        num_layers: t.num_layers,
        dim_feedforward: t.dim_feedforward,
        layer_scale: true,
        context: Some(t.context),
        max_period: t.max_period,
        attn_dim: None,
        num_kv_heads: None,
        // Mimi stays in float with int8 or 16-bit FlowLM weights, as in the reference.
        linears: LinearStorage::Float,
    }
}

/// Streaming state of the Mimi decoder: upsampler overlap, transformer KV caches and
/// SEANet conv histories.
#[derive(Debug)]
pub struct MimiDecoderState {
    upsample: ConvTrState,
    transformer: TransformerState,
    decoder: SeanetState,
}

/// The SEANet encoder (`mimi.encoder.*`; `vb` points at `mimi`).
fn encoder_seanet(cfg: &MimiConfig, vb: &VarBuilder) -> Result<SeanetEncoder> {
    SeanetEncoder::new(&cfg.seanet, vb.pp("encoder"))
}

/// The encoder transformer (`mimi.encoder_transformer.*`).
fn encoder_transformer(cfg: &MimiConfig, vb: &VarBuilder) -> Result<ProjectedTransformer> {
    let enc_t = &cfg.transformer;
    ProjectedTransformer::new(
        enc_t.input_dimension,
        &enc_t.output_dimensions,
        &transformer_spec(enc_t),
        vb.pp("encoder_transformer"),
    )
}

/// The downsampling conv (`mimi.downsample.*`), absent at one transformer step per latent.
fn downsample(cfg: &MimiConfig, vb: &VarBuilder) -> Result<Option<ConvDownsample1d>> {
    let stride = cfg.steps_per_latent();
    if stride <= 1 {
        return Ok(None);
    }
    let dim = cfg.seanet.dimension;
    Ok(Some(ConvDownsample1d::new(
        stride,
        dim,
        cfg.inner_dim.unwrap_or(dim),
        vb.pp("downsample"),
    )?))
}

/// The SEANet decoder (`mimi.decoder.*`).
fn decoder_seanet(cfg: &MimiConfig, vb: &VarBuilder) -> Result<SeanetDecoder> {
    SeanetDecoder::new(cfg.decoder_seanet(), vb.pp("decoder"))
}

/// The decoder transformer (`mimi.decoder_transformer.*`).
fn decoder_transformer(cfg: &MimiConfig, vb: &VarBuilder) -> Result<ProjectedTransformer> {
    let dec_t = cfg.decoder_transformer();
    ProjectedTransformer::new(
        dec_t.input_dimension,
        &dec_t.output_dimensions,
        &transformer_spec(dec_t),
        vb.pp("decoder_transformer"),
    )
}

/// The quantizer's output projection (`mimi.quantizer.output_proj.weight`, a 1x1 conv),
/// as a matrix `[outer_dim, ldim]`.
fn quantizer_proj(cfg: &MimiConfig, vb: &VarBuilder) -> Result<Tensor> {
    let q = &cfg.quantizer;
    vb.pp("quantizer.output_proj")
        .get((q.output_dimension, q.dimension, 1), "weight")?
        .squeeze(2)
}

/// The upsampling transposed conv (`mimi.upsample.*`; `None` at one transformer step per
/// latent).
fn upsample(cfg: &MimiConfig, vb: &VarBuilder) -> Result<Option<ConvTrUpsample1d>> {
    let stride = cfg.steps_per_latent();
    if stride <= 1 {
        return Ok(None);
    }
    let dim = cfg.decoder_seanet().dimension;
    ConvTrUpsample1d::new(stride, dim, cfg.outer_dim.unwrap_or(dim), vb.pp("upsample")).map(Some)
}

/// The encoder half of Mimi (audio → latents): the SEANet encoder, the encoder
/// transformer and the downsampling conv (reference: `MimiModel.encode_to_latent`).
/// Loadable on its own ([`MimiEncoder::new`]), so that a runtime can build its voice
/// encoder without holding the decoder's tensors, and drop it afterwards.
#[derive(Debug, Clone)]
pub struct MimiEncoder {
    encoder: SeanetEncoder,
    encoder_transformer: ProjectedTransformer,
    downsample: Option<ConvDownsample1d>,
    frame_size: usize,
    steps_per_latent: usize,
}

impl MimiEncoder {
    /// Loads the encoder half from `vb` (pointing at `mimi`: reads `mimi.encoder.*`,
    /// `mimi.encoder_transformer.*` and `mimi.downsample.*`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn new(cfg: &MimiConfig, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            encoder: encoder_seanet(cfg, &vb)?,
            encoder_transformer: encoder_transformer(cfg, &vb)?,
            downsample: downsample(cfg, &vb)?,
            frame_size: cfg.frame_size(),
            steps_per_latent: cfg.steps_per_latent(),
        })
    }

    /// The encoder's weights and hyper-parameters, read-only.
    pub fn view(&self) -> MimiEncoderView<'_> {
        MimiEncoderView {
            frame_size: self.frame_size,
            steps_per_latent: self.steps_per_latent,
            encoder: self.encoder.view(),
            encoder_transformer: self.encoder_transformer.view(),
            downsample: self.downsample.as_ref().map(ConvDownsample1d::view),
        }
    }

    /// Encodes audio `[1, channels, samples]` at the model sample rate into unquantised
    /// latents `[1, frames, inner_dim]` (frames at 12.5 Hz), padding the end to a whole
    /// frame (reference: `MimiModel.encode_to_latent`).
    ///
    /// # Errors
    /// Candle's errors (e.g. a wrongly shaped input).
    pub fn encode_to_latent(&self, audio: &Tensor) -> Result<Tensor> {
        let len = audio.dim(D::Minus1)?;
        let frames = len.div_ceil(self.frame_size).max(1);
        let pad = frames * self.frame_size - len;
        let x = if pad > 0 {
            audio.pad_with_zeros(D::Minus1, 0, pad)?
        } else {
            audio.clone()
        };
        let mut enc_state = self.encoder.init_state();
        let emb = self.encoder.forward(&x, &mut enc_state)?;
        let steps = emb.dim(D::Minus1)?;
        let mut tstate = self
            .encoder_transformer
            .transformer()
            .init_state(1, steps, x.device())?;
        let emb = self.encoder_transformer.forward(&emb, &mut tstate)?;
        let emb = match &self.downsample {
            Some(d) => d.forward(&emb, &mut ConvState::new())?,
            None => emb,
        };
        emb.transpose(1, 2)
    }
}

/// The Mimi codec. Tensor names are those of the reference's `mimi.*` state dict.
#[derive(Debug, Clone)]
pub struct Mimi {
    encoder: MimiEncoder,
    decoder: SeanetDecoder,
    decoder_transformer: ProjectedTransformer,
    quantizer_proj: Tensor,
    upsample: Option<ConvTrUpsample1d>,
    frame_size: usize,
    channels: usize,
    steps_per_latent: usize,
    context: usize,
}

impl Mimi {
    /// Loads Mimi from `vb` (pointing at `mimi`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn new(cfg: &MimiConfig, vb: VarBuilder) -> Result<Self> {
        let encoder = MimiEncoder::new(cfg, vb.clone())?;
        let decoder = decoder_seanet(cfg, &vb)?;
        let decoder_transformer = decoder_transformer(cfg, &vb)?;
        let quantizer_proj = quantizer_proj(cfg, &vb)?;
        let upsample = upsample(cfg, &vb)?;
        let stride = cfg.steps_per_latent();
        let dec_t = cfg.decoder_transformer();
        Ok(Self {
            encoder,
            decoder,
            decoder_transformer,
            quantizer_proj,
            upsample,
            frame_size: cfg.frame_size(),
            channels: cfg.decoder_seanet().channels,
            steps_per_latent: stride,
            context: dec_t.context,
        })
    }

    /// The weights and hyper-parameters a runtime needs, read-only (see
    /// [`crate::internals::modules::weights_view`]).
    pub fn view(&self) -> MimiView<'_> {
        let enc = self.encoder.view();
        MimiView {
            frame_size: self.frame_size,
            steps_per_latent: self.steps_per_latent,
            encoder: enc.encoder,
            encoder_transformer: enc.encoder_transformer,
            downsample: enc.downsample,
            quantizer_proj: &self.quantizer_proj,
            upsample: self.upsample.as_ref().map(ConvTrUpsample1d::view),
            decoder_transformer: self.decoder_transformer.view(),
            decoder: self.decoder.view(),
        }
    }

    /// Samples per latent frame (1920 at 24 kHz, 12.5 Hz).
    pub fn frame_size(&self) -> usize {
        self.frame_size
    }

    /// Channels of the decoded audio (1: mono).
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// Decoder transformer steps per latent frame (16).
    pub fn steps_per_latent(&self) -> usize {
        self.steps_per_latent
    }

    /// A fresh decoder state. The transformer caches hold the attention context plus
    /// room for `frames_per_call` frames, so steady-state decoding never reallocates.
    pub fn init_decoder_state(
        &self,
        frames_per_call: usize,
        device: &Device,
    ) -> Result<MimiDecoderState> {
        let capacity = self.context + self.steps_per_latent * frames_per_call.max(1);
        Ok(MimiDecoderState {
            upsample: ConvTrState::default(),
            transformer: self
                .decoder_transformer
                .transformer()
                .init_state(1, capacity, device)?,
            decoder: self.decoder.init_state(),
        })
    }

    /// Decodes denormalised latents `[1, T, ldim]` to audio `[1, channels, T * frame_size]`,
    /// continuing from `state` (reference: `MimiModel.decode_from_latent`).
    pub fn decode_from_latent(
        &self,
        latent: &Tensor,
        state: &mut MimiDecoderState,
    ) -> Result<Tensor> {
        let x = latent.transpose(1, 2)?;
        let x = self.quantizer_proj.broadcast_matmul(&x)?;
        let x = match &self.upsample {
            Some(u) => u.forward(&x, &mut state.upsample)?,
            None => x,
        };
        let x = self
            .decoder_transformer
            .forward(&x, &mut state.transformer)?;
        self.decoder.forward(&x, &mut state.decoder)
    }

    /// The encoder half.
    pub fn encoder(&self) -> &MimiEncoder {
        &self.encoder
    }

    /// Encodes audio `[1, channels, samples]` at the model sample rate into unquantised
    /// latents `[1, frames, inner_dim]`, padding the end to a whole frame
    /// (reference: `MimiModel.encode_to_latent`; see [`MimiEncoder::encode_to_latent`]).
    ///
    /// # Errors
    /// Candle's errors (e.g. a wrongly shaped input).
    pub fn encode_to_latent(&self, audio: &Tensor) -> Result<Tensor> {
        self.encoder.encode_to_latent(audio)
    }
}

/// Where Mimi's weights come from, kept after loading so that a part can be loaded again
/// when it is needed (e.g. the encoder half on the first voice prompt to encode) instead
/// of being held for the model's whole life. Cloning shares the source (a memory-mapped
/// checkpoint, or seeded random weights).
#[derive(Clone)]
pub struct MimiSource {
    config: MimiConfig,
    vb: VarBuilder<'static>,
    /// Checks names and shapes without reading values
    /// ([`crate::internals::weights::Checkpoint::shape_var_builder`]); `None` for weights
    /// that need no check (seeded random ones).
    shapes: Option<VarBuilder<'static>>,
    /// How the CPU runtime stores the decoder's weights (`--mimi-dtype`; see
    /// [`Self::with_decoder_dtype`]).
    decoder_dtype: WeightDtype,
}

impl std::fmt::Debug for MimiSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MimiSource")
    }
}

impl MimiSource {
    /// A source reading Mimi from `vb` (pointing at `mimi`) with the architecture of
    /// `config`.
    pub fn new(config: MimiConfig, vb: VarBuilder<'static>) -> Self {
        Self {
            config,
            vb,
            shapes: None,
            decoder_dtype: WeightDtype::Float32,
        }
    }

    /// Sets how the CPU runtime's decoder stores its GEMM weights (the transformer's
    /// linears, the SEANet's convs and transposed convs, the quantizer's projection):
    /// `float32` (the default, the reference's), or `float16` / `bfloat16` (half the
    /// bytes, widened exactly to `f32` for every product, accumulated in `f32`). The
    /// encoder, the upsampler, biases and norms stay `f32`; the Candle backend ignores it.
    pub fn with_decoder_dtype(mut self, dtype: WeightDtype) -> Self {
        self.decoder_dtype = dtype;
        self
    }

    /// The decoder's weight dtype ([`Self::with_decoder_dtype`]).
    pub fn decoder_dtype(&self) -> WeightDtype {
        self.decoder_dtype
    }

    /// Adds a builder over the same tensors that checks names and shapes without reading
    /// values (pointing at `mimi`), used by [`Self::check_encoder_shapes`].
    pub fn with_shape_check(mut self, shapes: VarBuilder<'static>) -> Self {
        self.shapes = Some(shapes);
        self
    }

    /// Checks the encoder half's tensor names and shapes against the config without reading
    /// their values (the encoder itself is read on the first voice prompt to encode), so
    /// that a checkpoint that does not match the config is refused at load. A no-op
    /// without [`Self::with_shape_check`].
    ///
    /// # Errors
    /// Candle's errors; problems are recorded by the checking builder's checkpoint.
    pub fn check_encoder_shapes(&self) -> Result<()> {
        if let Some(vb) = &self.shapes {
            MimiEncoder::new(&self.config, vb.clone())?;
        }
        Ok(())
    }

    /// Loads the SEANet decoder alone (`mimi.decoder.*`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_decoder_seanet(&self) -> Result<SeanetDecoder> {
        decoder_seanet(&self.config, &self.vb)
    }

    /// Loads the decoder transformer alone (`mimi.decoder_transformer.*`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_decoder_transformer(&self) -> Result<ProjectedTransformer> {
        decoder_transformer(&self.config, &self.vb)
    }

    /// Loads the quantizer's output projection alone, `[outer_dim, ldim]`
    /// (`mimi.quantizer.output_proj.weight`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_quantizer_proj(&self) -> Result<Tensor> {
        quantizer_proj(&self.config, &self.vb)
    }

    /// Loads the upsampling transposed conv alone (`mimi.upsample.*`; `None` at one
    /// transformer step per latent).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_upsample(&self) -> Result<Option<ConvTrUpsample1d>> {
        upsample(&self.config, &self.vb)
    }

    /// The architecture.
    pub fn config(&self) -> &MimiConfig {
        &self.config
    }

    /// Loads the whole codec ([`Mimi::new`]).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load(&self) -> Result<Mimi> {
        Mimi::new(&self.config, self.vb.clone())
    }

    /// Loads the SEANet encoder alone (`mimi.encoder.*`), e.g. to repack it before the
    /// other parts are read.
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_encoder_seanet(&self) -> Result<SeanetEncoder> {
        encoder_seanet(&self.config, &self.vb)
    }

    /// Loads the encoder transformer alone (`mimi.encoder_transformer.*`).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_encoder_transformer(&self) -> Result<ProjectedTransformer> {
        encoder_transformer(&self.config, &self.vb)
    }

    /// Layers of the encoder transformer.
    pub fn encoder_transformer_layers(&self) -> usize {
        self.config.transformer.num_layers
    }

    /// Loads layer `i` of the encoder transformer alone
    /// (`mimi.encoder_transformer.transformer.layers.{i}.*`): the CPU runtime repacks
    /// the layers one at a time.
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_encoder_transformer_layer(&self, i: usize) -> Result<StreamingTransformerLayer> {
        StreamingTransformerLayer::new(
            &transformer_spec(&self.config.transformer),
            self.vb
                .pp(format!("encoder_transformer.transformer.layers.{i}")),
        )
    }

    /// Loads the encoder transformer without its layers: the input and output
    /// projections (`mimi.encoder_transformer.{input_proj,output_projs}.*`, when present)
    /// and the RoPE period.
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_encoder_transformer_projections(&self) -> Result<ProjectedTransformer> {
        let enc_t = &self.config.transformer;
        let spec = TransformerSpec {
            num_layers: 0,
            ..transformer_spec(enc_t)
        };
        ProjectedTransformer::new(
            enc_t.input_dimension,
            &enc_t.output_dimensions,
            &spec,
            self.vb.pp("encoder_transformer"),
        )
    }

    /// Loads the downsampling conv alone (`mimi.downsample.*`; `None` at one transformer
    /// step per latent).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_downsample(&self) -> Result<Option<ConvDownsample1d>> {
        downsample(&self.config, &self.vb)
    }

    /// Loads the encoder half only ([`MimiEncoder::new`]).
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load_encoder(&self) -> Result<MimiEncoder> {
        MimiEncoder::new(&self.config, self.vb.clone())
    }
}
