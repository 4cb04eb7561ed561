//! Typed, read-only views of the loaded weights: the contract between the model
//! definition ([`crate::internals::modules`], [`crate::internals::models`]) and the runtimes that execute it
//! ([`crate::internals::fast`], and any future one, e.g. a quantized runtime).
//!
//! A runtime builds itself from [`FlowLm::view`] and [`Mimi::view`] instead of reaching
//! into the Candle modules: the modules keep their fields private and each one exposes a
//! `view()` returning the types below. A view borrows the model's tensors (no copy) and
//! holds only what a runtime needs to reproduce the Candle forward pass: tensors (with the
//! shapes documented on each field, as loaded and checked by the module's constructor)
//! and the hyper-parameters that change the computation.
//!
//! All the types are defined here, in one file, so that the whole contract can be read in
//! one place; the `view()` methods live next to the structs they describe, the only
//! place that can see those structs' private fields.
//!
//! Tensors are whatever the checkpoint was loaded as (dtype and device of the
//! [`candle_nn::VarBuilder`]); a runtime checks what it supports. Shapes use `out`/`in`
//! for linear widths, `C`/`K` for conv channels and kernel sizes, `d` for a transformer's
//! `d_model`.
//!
//! [`FlowLm::view`]: crate::internals::models::flow_lm::FlowLm::view
//! [`Mimi::view`]: crate::internals::models::mimi::Mimi::view

use std::sync::Arc;

use candle_core::Tensor;
use pocket_tts_simd::{HalfRows, Q4Rows, QuantizedRows};

use crate::config::{FlowType as FlowKind, PadMode};

/// A linear layer `y = x · weightᵀ + bias` (reference: `nn.Linear`).
#[derive(Debug, Clone, Copy)]
pub struct LinearView<'a> {
    /// `[out, in]`.
    pub weight: WeightView<'a>,
    /// `[out]`, absent for a bias-free layer.
    pub bias: Option<&'a Tensor>,
}

/// A linear layer's weight `[out, in]`: a tensor as loaded, 16-bit float rows (the
/// FlowLM's `dtype` `float16`/`bfloat16`) int8 rows or 4-bit blocks (`--quantize int8|q4`), see
/// [`crate::internals::modules::linear::MaybeQuantizedLinear`].
#[derive(Debug, Clone, Copy)]
pub enum WeightView<'a> {
    /// The checkpoint's tensor.
    Float(&'a Tensor),
    /// `f16` or `bf16` values, computed in `f32`, shared (runtimes clone the `Arc`).
    Half(&'a Arc<HalfRows>),
    /// Int8 per output row with `f32` scales, shared (runtimes clone the `Arc`).
    Int8(&'a Arc<QuantizedRows>),
    /// 4-bit blocks of 32 with `bf16` scales, shared (runtimes clone the `Arc`).
    Q4(&'a Arc<Q4Rows>),
}

impl<'a> WeightView<'a> {
    /// `(out, in)`.
    ///
    /// # Errors
    /// Candle's error for a tensor that is not 2-D.
    pub fn dims2(&self) -> candle_core::Result<(usize, usize)> {
        match self {
            WeightView::Float(t) => t.dims2(),
            WeightView::Half(h) => Ok((h.rows(), h.cols())),
            WeightView::Int8(q) => Ok((q.rows(), q.cols())),
            WeightView::Q4(q) => Ok((q.rows(), q.cols())),
        }
    }

    /// The tensor, or `None` for a 16-bit, int8 or 4-bit weight.
    pub fn float(&self) -> Option<&'a Tensor> {
        match self {
            WeightView::Float(t) => Some(t),
            WeightView::Half(_) | WeightView::Int8(_) | WeightView::Q4(_) => None,
        }
    }

    /// The storage's name for messages: `f32` (whatever the tensor holds), `f16`, `bf16`,
    /// `int8` or `q4`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            WeightView::Float(_) => "f32",
            WeightView::Half(h) => match h.kind() {
                pocket_tts_simd::HalfKind::F16 => "f16",
                pocket_tts_simd::HalfKind::Bf16 => "bf16",
            },
            WeightView::Int8(_) => "int8",
            WeightView::Q4(_) => "q4",
        }
    }
}

impl<'a> From<&'a candle_nn::Linear> for LinearView<'a> {
    fn from(l: &'a candle_nn::Linear) -> Self {
        Self {
            weight: WeightView::Float(l.weight()),
            bias: l.bias(),
        }
    }
}

/// A layer norm over the last dimension with the biased variance
/// (reference: `nn.LayerNorm`): `(x − mean) / sqrt(var + eps) · weight + bias`.
#[derive(Debug, Clone, Copy)]
pub struct LayerNormView<'a> {
    /// Scale `[dim]`; absent (all ones) for a norm without affine parameters.
    pub weight: Option<&'a Tensor>,
    /// Shift `[dim]`; absent (all zeros) for a norm without affine parameters.
    pub bias: Option<&'a Tensor>,
    /// Added to the variance.
    pub eps: f64,
    /// Normalised width (the length of the last dimension).
    pub dim: usize,
}

/// The reference's `mlp.RMSNorm`: `x · alpha / sqrt(var(x) + eps)`, `var` the *unbiased*
/// variance over the last dimension (`x` itself is not centred).
#[derive(Debug, Clone, Copy)]
pub struct RmsNormView<'a> {
    /// Scale `[dim]`.
    pub alpha: &'a Tensor,
    /// Added to the variance.
    pub eps: f64,
}

/// A causal streaming 1-d convolution (reference: `StreamingConv1d`). Each call is
/// left-padded with the last `(kernel_size − 1) · dilation + 1 − stride` input steps of
/// the previous call; on the first call with those steps set to zeros
/// ([`PadMode::Constant`]) or to the first input step ([`PadMode::Replicate`]). No right
/// padding: `T` input steps (a multiple of `stride`) give `T / stride` output steps.
#[derive(Debug, Clone, Copy)]
pub struct ConvView<'a> {
    /// `[C_out, C_in / groups, K]`.
    pub weight: &'a Tensor,
    /// `[C_out]`, absent for a bias-free conv.
    pub bias: Option<&'a Tensor>,
    /// Input channels `C_in`.
    pub in_channels: usize,
    /// Output channels `C_out`.
    pub out_channels: usize,
    /// Kernel size `K`.
    pub kernel_size: usize,
    /// Stride.
    pub stride: usize,
    /// Dilation (spacing of the kernel taps).
    pub dilation: usize,
    /// Groups (`C_in` and `C_out` are split into this many independent groups).
    pub groups: usize,
    /// Padding of the first call.
    pub pad_mode: PadMode,
}

/// A streaming transposed 1-d convolution (reference: `StreamingConvTranspose1d`). A call
/// on `T` steps computes the full transposed conv (`(T − 1) · stride + K` steps), returns
/// the first `T · stride` steps and keeps the last `K − stride` (without the bias) to add
/// to the start of the next call's output.
#[derive(Debug, Clone, Copy)]
pub struct ConvTrView<'a> {
    /// `[C_in, C_out / groups, K]` (PyTorch's transposed-conv layout).
    pub weight: &'a Tensor,
    /// `[C_out]`, absent for a bias-free conv.
    pub bias: Option<&'a Tensor>,
    /// Kernel size `K`.
    pub kernel_size: usize,
    /// Stride (upsampling factor).
    pub stride: usize,
    /// Groups (`C_in` groups: depthwise, as in Mimi's upsampler).
    pub groups: usize,
}

/// Self-attention with interleaved RoPE and a KV cache (reference:
/// `StreamingMultiheadAttention`). With `h = head_dim`, `kv = num_kv_heads · h`: the
/// input projection gives `[q (attn_dim) | k (kv) | v (kv)]`, each `num_heads` /
/// `num_kv_heads` heads of width `h` (grouped-query attention repeats each key/value head
/// `num_heads / num_kv_heads` times), scores are scaled by `1 / sqrt(h)`, causal, and the
/// output projection maps the concatenated heads back to `d`.
#[derive(Debug, Clone, Copy)]
pub struct AttentionView<'a> {
    /// Bias-free input projection, weight `[attn_dim + 2 · kv, d]`.
    pub in_proj: LinearView<'a>,
    /// Bias-free output projection, weight `[d, attn_dim]`.
    pub out_proj: LinearView<'a>,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads (divides `num_heads`).
    pub num_kv_heads: usize,
    /// Width of one head (`attn_dim / num_heads`, even for RoPE).
    pub head_dim: usize,
    /// Width of the queries and of the attention output.
    pub attn_dim: usize,
    /// Attention window in steps: a query at position `p` sees the keys at positions
    /// `p − context < k ≤ p` (always causal); unbounded (`None`) in FlowLM, finite in Mimi.
    pub context: Option<usize>,
}

/// One pre-norm transformer layer (reference: `StreamingTransformerLayer`):
/// `x += ls1 · attn(norm1(x))`, then `x += ls2 · linear2(gelu_tanh(linear1(norm2(x))))`.
#[derive(Debug, Clone, Copy)]
pub struct TransformerLayerView<'a> {
    /// Self-attention.
    pub self_attn: AttentionView<'a>,
    /// Norm before the attention, `[d]` (eps `1e-5`).
    pub norm1: LayerNormView<'a>,
    /// Norm before the feed-forward block, `[d]`.
    pub norm2: LayerNormView<'a>,
    /// Bias-free feed-forward in, weight `[ff, d]`.
    pub linear1: LinearView<'a>,
    /// Bias-free feed-forward out, weight `[d, ff]`.
    pub linear2: LinearView<'a>,
    /// LayerScale of the attention update, `[d]` (Mimi); absent: 1.
    pub layer_scale_1: Option<&'a Tensor>,
    /// LayerScale of the feed-forward update, `[d]` (Mimi); absent: 1.
    pub layer_scale_2: Option<&'a Tensor>,
}

/// A stack of transformer layers sharing one RoPE (reference: `StreamingTransformer`).
#[derive(Debug, Clone)]
pub struct TransformerView<'a> {
    /// The layers, in order.
    pub layers: Vec<TransformerLayerView<'a>>,
    /// RoPE maximum period `P`: the pair `(x[2i], x[2i+1])` of a head at position `t` is
    /// rotated by `t · P^(−2i / head_dim)` (frequencies computed in `f32`).
    pub max_period: f64,
}

/// A transformer on `[C, T]` signals with optional projections (reference:
/// `ProjectedTransformer`, Mimi): `output_proj(transformer(input_proj(xᵀ)))ᵀ`.
#[derive(Debug, Clone)]
pub struct ProjectedTransformerView<'a> {
    /// Bias-free projection `[d, C_in]`; absent when `C_in = d`.
    pub input_proj: Option<LinearView<'a>>,
    /// The transformer.
    pub transformer: TransformerView<'a>,
    /// Bias-free projection of the (first, and only used) output `[C_out, d]`; absent when
    /// `C_out = d`.
    pub output_proj: Option<LinearView<'a>>,
}

/// One layer of a SEANet stack, in the order the stack runs them.
#[derive(Debug, Clone)]
pub enum SeanetLayerView<'a> {
    /// ELU with `alpha = 1`.
    Elu,
    /// A streaming conv.
    Conv(ConvView<'a>),
    /// A streaming transposed conv.
    ConvTr(ConvTrView<'a>),
    /// A residual block `x + conv_n(elu(… conv_1(elu(x))))` (reference:
    /// `SEANetResnetBlock`): stride-1 convs, `d → d / compress → … → d` channels.
    Res(Vec<ConvView<'a>>),
}

/// A SEANet encoder or decoder (reference: `SEANetEncoder`, `SEANetDecoder`): its layers
/// applied one after the other to `[C, T]` signals.
#[derive(Debug, Clone)]
pub struct SeanetView<'a> {
    /// The layers, in order.
    pub layers: Vec<SeanetLayerView<'a>>,
}

/// Sinusoidal time embedding (reference: `TimestepEmbedder`): for a time `t`,
/// `e = [cos(t · freqs), sin(t · freqs)]`, then `norm(linear2(silu(linear1(e))))`.
#[derive(Debug, Clone, Copy)]
pub struct TimestepEmbedderView<'a> {
    /// Frequencies `[F / 2]` (`F` = 256, the width of `e`).
    pub freqs: &'a Tensor,
    /// Weight `[hidden, F]`, bias `[hidden]`.
    pub linear1: LinearView<'a>,
    /// Weight `[hidden, hidden]`, bias `[hidden]`.
    pub linear2: LinearView<'a>,
    /// The final RMS norm, `[hidden]`.
    pub norm: RmsNormView<'a>,
}

/// Residual block of the flow head (reference: `ResBlock`): with
/// `(shift, scale, gate) = ada_ln(silu(y))` split in three,
/// `x += gate · mlp2(silu(mlp1(in_ln(x) · (1 + scale) + shift)))`.
#[derive(Debug, Clone, Copy)]
pub struct FlowResBlockView<'a> {
    /// Norm `[w]` (eps `1e-6`).
    pub in_ln: LayerNormView<'a>,
    /// Weight `[w, w]`, bias `[w]`.
    pub mlp1: LinearView<'a>,
    /// Weight `[w, w]`, bias `[w]`.
    pub mlp2: LinearView<'a>,
    /// Modulation, weight `[3w, w]`, bias `[3w]`.
    pub ada_ln: LinearView<'a>,
}

/// Final layer of the flow head (reference: `FinalLayer`): with
/// `(shift, scale) = ada_ln(silu(y))`, `linear(norm(x) · (1 + scale) + shift)`.
#[derive(Debug, Clone, Copy)]
pub struct FlowFinalLayerView<'a> {
    /// Norm `[w]` without affine parameters (eps `1e-6`).
    pub norm: LayerNormView<'a>,
    /// Output, weight `[ldim, w]`, bias `[ldim]`.
    pub linear: LinearView<'a>,
    /// Modulation, weight `[2w, w]`, bias `[2w]`.
    pub ada_ln: LinearView<'a>,
}

/// The flow head `v(c, t_1..t_n, x)` (reference: `SimpleMLPAdaLN`), `w` its width: with
/// `y = cond_embed(c) + mean_i(time_embed[i](t_i))` (no time term when `n = 0`),
/// `h = input_proj(x)`, every residual block, then the final layer.
#[derive(Debug, Clone)]
pub struct FlowHeadView<'a> {
    /// One embedder per time condition (`FlowKind::num_time_conds`).
    pub time_embed: Vec<TimestepEmbedderView<'a>>,
    /// Condition embedding, weight `[w, z]`, bias `[w]`.
    pub cond_embed: LinearView<'a>,
    /// Latent input, weight `[w, ldim]`, bias `[w]`.
    pub input_proj: LinearView<'a>,
    /// The residual blocks, in order.
    pub res_blocks: Vec<FlowResBlockView<'a>>,
    /// The final layer.
    pub final_layer: FlowFinalLayerView<'a>,
}

/// Where a lookup table's `f32` rows `[n_bins + 1, width]` are.
#[derive(Debug, Clone, Copy)]
pub enum LutTable<'a> {
    /// A Candle tensor.
    Tensor(&'a Tensor),
    /// Left in the checkpoint's memory map.
    Mapped(&'a crate::weights::MappedF32),
}

/// Text lookup table (reference: `LUTConditioner`): token id `i` → row `i` of `table`,
/// then `proj` when the table is low-rank.
#[derive(Debug, Clone, Copy)]
pub struct LutView<'a> {
    /// `[n_bins + 1, width]` (one extra row for padding); `width = d` without `proj`.
    pub table: LutTable<'a>,
    /// Bias-free projection, weight `[d, width]`.
    pub proj: Option<LinearView<'a>>,
}

/// The FlowLM (reference: `FlowLMModel`), what a runtime needs to run text/voice prefill
/// and autoregressive steps. One step: `x = input_linear(previous latent or bos_emb)`,
/// the transformer, `out_norm`, optional `z_proj`, giving `z` `[zdim]`; the EOS logit is
/// `out_eos(z)` and the next latent is sampled by the flow head conditioned on `z`.
#[derive(Debug, Clone)]
pub struct FlowLmView<'a> {
    /// Latent width `ldim`.
    pub ldim: usize,
    /// Backbone width `d`.
    pub dim: usize,
    /// How the flow head is decoded.
    pub flow_kind: FlowKind,
    /// Text embeddings `[·, d]` fed to the prefill.
    pub conditioner: LutView<'a>,
    /// Bias-free projection of Mimi latents to voice conditioning, `[d, speaker_dim]`
    /// (applied as `latents · speaker_proj_weightᵀ`).
    pub speaker_proj_weight: &'a Tensor,
    /// Embedding `[1, 1, d]` prepended to the voice conditioning, when the model has one.
    pub bos_before_voice: Option<&'a Tensor>,
    /// Input of the first step (no previous latent), `[ldim]`.
    pub bos_emb: &'a Tensor,
    /// Bias-free latent input projection, weight `[d, ldim]`.
    pub input_linear: LinearView<'a>,
    /// The backbone (no LayerScale, unbounded context).
    pub transformer: TransformerView<'a>,
    /// Norm of the backbone output, `[d]`.
    pub out_norm: LayerNormView<'a>,
    /// Bias-free projection `[zdim, d]` after `out_norm`; absent: `zdim = d`.
    pub z_proj: Option<LinearView<'a>>,
    /// EOS head, weight `[1, zdim]`, bias `[1]`.
    pub out_eos: LinearView<'a>,
    /// The flow head, condition width `zdim`.
    pub flow_net: FlowHeadView<'a>,
}

/// The Mimi codec (reference: `MimiModel`), what a runtime needs to encode voice prompts
/// and decode latents. Signals are `[C, T]`.
///
/// Encoding (audio, zero-padded to whole frames → latents `[inner_dim, frames]`):
/// `encoder`, `encoder_transformer`, `downsample`. Decoding (denormalised latents
/// `[ldim, frames]` → audio `[channels, frames · frame_size]`): `quantizer_proj ·` latents,
/// `upsample`, `decoder_transformer`, `decoder`.
#[derive(Debug, Clone)]
pub struct MimiView<'a> {
    /// Audio samples per latent frame (1920 at 24 kHz, 12.5 Hz).
    pub frame_size: usize,
    /// Transformer steps per latent frame: the stride of `downsample` and `upsample`
    /// (1 when they are absent).
    pub steps_per_latent: usize,
    /// SEANet encoder, audio → `[dimension, T / hop]`.
    pub encoder: SeanetView<'a>,
    /// Encoder transformer.
    pub encoder_transformer: ProjectedTransformerView<'a>,
    /// Bias-free downsampling conv (kernel `2 · stride`, replicate padding) to the latent
    /// frame rate; absent when `steps_per_latent = 1`.
    pub downsample: Option<ConvView<'a>>,
    /// Quantizer output projection (a 1×1 conv), `[outer_dim, ldim]`.
    pub quantizer_proj: &'a Tensor,
    /// Bias-free depthwise transposed conv (kernel `2 · stride`, `groups = C`) back to the
    /// transformer frame rate; absent when `steps_per_latent = 1`.
    pub upsample: Option<ConvTrView<'a>>,
    /// Decoder transformer.
    pub decoder_transformer: ProjectedTransformerView<'a>,
    /// SEANet decoder, `[dimension, T]` → audio `[channels, T · hop]`.
    pub decoder: SeanetView<'a>,
}

/// The encoder half of Mimi (reference: `MimiModel.encode_to_latent`): audio
/// `[channels, T]`, zero-padded to whole frames → latents `[inner_dim, T / frame_size]`
/// through `encoder`, `encoder_transformer` and `downsample`. The same fields as in
/// [`MimiView`], for a runtime that loads only this half.
#[derive(Debug, Clone)]
pub struct MimiEncoderView<'a> {
    /// Audio samples per latent frame (1920 at 24 kHz, 12.5 Hz).
    pub frame_size: usize,
    /// Transformer steps per latent frame: the stride of `downsample` (1 when absent).
    pub steps_per_latent: usize,
    /// SEANet encoder, audio → `[dimension, T / hop]`.
    pub encoder: SeanetView<'a>,
    /// Encoder transformer.
    pub encoder_transformer: ProjectedTransformerView<'a>,
    /// Bias-free downsampling conv (kernel `2 · stride`, replicate padding) to the latent
    /// frame rate; absent when `steps_per_latent = 1`.
    pub downsample: Option<ConvView<'a>>,
}
