//! Streaming transformer (reference: `modules/transformer.py`): pre-norm layers with
//! RoPE self-attention, a tanh-GELU feed-forward block and optional LayerScale.

use candle_core::{Device, Module, Result, Tensor};
use candle_nn::VarBuilder;

use super::attention::{KvCache, StreamingMultiheadAttention};
use super::layers::{linear_no_bias, LayerNorm};
use super::linear::{LinearStorage, MaybeQuantizedLinear};
use super::rope::RotaryEmbedding;
use crate::modules::weights_view::{
    ProjectedTransformerView, TransformerLayerView, TransformerView,
};

/// Shape of a [`StreamingTransformer`].
#[derive(Debug, Clone, PartialEq)]
pub struct TransformerSpec {
    /// Model width.
    pub d_model: usize,
    /// Query heads.
    pub num_heads: usize,
    /// Layers.
    pub num_layers: usize,
    /// Feed-forward width.
    pub dim_feedforward: usize,
    /// LayerScale present (Mimi) or not (FlowLM).
    pub layer_scale: bool,
    /// Attention window in steps, unbounded when `None`.
    pub context: Option<usize>,
    /// RoPE maximum period.
    pub max_period: f64,
    /// Query/output width of attention (`d_model` when `None`).
    pub attn_dim: Option<usize>,
    /// Key/value heads (`num_heads` when `None`).
    pub num_kv_heads: Option<usize>,
    /// How the attention and feed-forward linears store their weights: int8 with
    /// `--quantize` (reference: `quantization.py`), 16 bits with the FlowLM's `dtype`
    /// `float16`/`bfloat16`; see [`MaybeQuantizedLinear`].
    pub linears: LinearStorage,
}

/// One pre-norm layer (reference: `StreamingTransformerLayer`).
#[derive(Debug, Clone)]
pub struct StreamingTransformerLayer {
    self_attn: StreamingMultiheadAttention,
    norm1: LayerNorm,
    norm2: LayerNorm,
    linear1: MaybeQuantizedLinear,
    linear2: MaybeQuantizedLinear,
    layer_scale_1: Option<Tensor>,
    layer_scale_2: Option<Tensor>,
}

impl StreamingTransformerLayer {
    /// Loads one layer (`self_attn.…`, `norm1/2.…`, `linear1/2.…`, `layer_scale_1/2.…`
    /// under `vb`).
    pub(crate) fn new(spec: &TransformerSpec, vb: VarBuilder) -> Result<Self> {
        let d = spec.d_model;
        let (ls1, ls2) = if spec.layer_scale {
            (
                Some(vb.pp("layer_scale_1").get(d, "scale")?),
                Some(vb.pp("layer_scale_2").get(d, "scale")?),
            )
        } else {
            (None, None)
        };
        Ok(Self {
            self_attn: StreamingMultiheadAttention::new(
                d,
                spec.num_heads,
                spec.attn_dim,
                spec.num_kv_heads,
                spec.context,
                spec.linears,
                vb.pp("self_attn"),
            )?,
            norm1: LayerNorm::new(d, 1e-5, vb.pp("norm1"))?,
            norm2: LayerNorm::new(d, 1e-5, vb.pp("norm2"))?,
            linear1: MaybeQuantizedLinear::load(
                d,
                spec.dim_feedforward,
                false,
                spec.linears,
                vb.pp("linear1"),
            )?,
            linear2: MaybeQuantizedLinear::load(
                spec.dim_feedforward,
                d,
                false,
                spec.linears,
                vb.pp("linear2"),
            )?,
            layer_scale_1: ls1,
            layer_scale_2: ls2,
        })
    }

    /// The weights and hyper-parameters, read-only.
    pub fn view(&self) -> TransformerLayerView<'_> {
        TransformerLayerView {
            self_attn: self.self_attn.view(),
            norm1: self.norm1.view(),
            norm2: self.norm2.view(),
            linear1: self.linear1.view(),
            linear2: self.linear2.view(),
            layer_scale_1: self.layer_scale_1.as_ref(),
            layer_scale_2: self.layer_scale_2.as_ref(),
        }
    }

    fn forward(&self, x: &Tensor, rope: &RotaryEmbedding, cache: &mut KvCache) -> Result<Tensor> {
        let update = self
            .self_attn
            .forward(&self.norm1.forward(x)?, rope, cache)?;
        let update = match &self.layer_scale_1 {
            Some(s) => update.broadcast_mul(s)?,
            None => update,
        };
        let x = (x + update)?;
        let h = self.linear1.forward(&self.norm2.forward(&x)?)?.gelu()?;
        let update = self.linear2.forward(&h)?;
        let update = match &self.layer_scale_2 {
            Some(s) => update.broadcast_mul(s)?,
            None => update,
        };
        x + update
    }
}

/// Streaming state of a [`StreamingTransformer`]: one KV cache per layer.
#[derive(Debug)]
pub struct TransformerState {
    /// Per-layer caches, in layer order.
    pub caches: Vec<KvCache>,
}

impl TransformerState {
    /// Absolute position of the next token (all layers agree).
    pub fn offset(&self) -> usize {
        self.caches.first().map_or(0, |c| c.offset())
    }

    /// A deep copy with room for at least `capacity` positions per layer.
    pub fn deep_clone(&self, capacity: usize) -> Result<Self> {
        Ok(Self {
            caches: self
                .caches
                .iter()
                .map(|c| c.deep_clone(capacity))
                .collect::<Result<_>>()?,
        })
    }

    /// Makes room for `extra` more positions in every layer.
    pub fn reserve(&mut self, extra: usize) -> Result<()> {
        self.caches.iter_mut().try_for_each(|c| c.reserve(extra))
    }
}

/// A stack of [`StreamingTransformerLayer`]s sharing one RoPE
/// (reference: `StreamingTransformer`).
#[derive(Debug, Clone)]
pub struct StreamingTransformer {
    layers: Vec<StreamingTransformerLayer>,
    rope: RotaryEmbedding,
}

impl StreamingTransformer {
    /// Loads `layers.{i}.…` under `vb`.
    pub fn new(spec: &TransformerSpec, vb: VarBuilder) -> Result<Self> {
        let layers = (0..spec.num_layers)
            .map(|i| StreamingTransformerLayer::new(spec, vb.pp(format!("layers.{i}"))))
            .collect::<Result<_>>()?;
        let head_dim = spec.attn_dim.unwrap_or(spec.d_model) / spec.num_heads;
        Ok(Self {
            layers,
            rope: RotaryEmbedding::new(spec.max_period, head_dim),
        })
    }

    /// A fresh state with room for `capacity` positions.
    pub fn init_state(
        &self,
        batch: usize,
        capacity: usize,
        device: &Device,
    ) -> Result<TransformerState> {
        Ok(TransformerState {
            caches: self
                .layers
                .iter()
                .map(|l| l.self_attn.init_cache(batch, capacity, device))
                .collect::<Result<_>>()?,
        })
    }

    /// The layers' weights and the RoPE period, read-only.
    pub fn view(&self) -> TransformerView<'_> {
        TransformerView {
            layers: self
                .layers
                .iter()
                .map(StreamingTransformerLayer::view)
                .collect(),
            max_period: self.rope.max_period(),
        }
    }

    /// Number of layers.
    pub fn num_layers(&self) -> usize {
        self.layers.len()
    }

    /// Key/value heads and head width of the layers' caches.
    pub fn cache_geometry(&self) -> (usize, usize) {
        self.layers.first().map_or((0, 0), |l| {
            (l.self_attn.num_kv_heads(), l.self_attn.head_dim())
        })
    }

    /// `x`: `[B, T, d_model]` → `[B, T, d_model]`, advancing `state` by `T` steps.
    pub fn forward(&self, x: &Tensor, state: &mut TransformerState) -> Result<Tensor> {
        let mut x = x.clone();
        for (layer, cache) in self.layers.iter().zip(state.caches.iter_mut()) {
            x = layer.forward(&x, &self.rope, cache)?;
        }
        Ok(x)
    }
}

/// A transformer with input/output projections working on `[B, C, T]`
/// (reference: `ProjectedTransformer`, used by Mimi).
#[derive(Debug, Clone)]
pub struct ProjectedTransformer {
    transformer: StreamingTransformer,
    input_proj: Option<candle_nn::Linear>,
    output_projs: Vec<Option<candle_nn::Linear>>,
}

impl ProjectedTransformer {
    /// Loads `transformer.…`, `input_proj.weight` (when `input_dimension != d_model`) and
    /// `output_projs.{i}.weight` (when an output dimension differs from `d_model`).
    pub fn new(
        input_dimension: usize,
        output_dimensions: &[usize],
        spec: &TransformerSpec,
        vb: VarBuilder,
    ) -> Result<Self> {
        let d = spec.d_model;
        let input_proj = if input_dimension != d {
            Some(linear_no_bias(input_dimension, d, vb.pp("input_proj"))?)
        } else {
            None
        };
        let output_projs = output_dimensions
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                if o == d {
                    Ok(None)
                } else {
                    linear_no_bias(d, o, vb.pp(format!("output_projs.{i}"))).map(Some)
                }
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            transformer: StreamingTransformer::new(spec, vb.pp("transformer"))?,
            input_proj,
            output_projs,
        })
    }

    /// The inner transformer.
    pub fn transformer(&self) -> &StreamingTransformer {
        &self.transformer
    }

    /// The projections' and the transformer's weights, read-only.
    pub fn view(&self) -> ProjectedTransformerView<'_> {
        ProjectedTransformerView {
            input_proj: self.input_proj.as_ref().map(Into::into),
            transformer: self.transformer.view(),
            output_proj: self
                .output_projs
                .first()
                .and_then(Option::as_ref)
                .map(Into::into),
        }
    }

    /// `x`: `[B, C_in, T]` → first output `[B, C_out, T]`.
    pub fn forward(&self, x: &Tensor, state: &mut TransformerState) -> Result<Tensor> {
        let mut x = x.transpose(1, 2)?;
        if let Some(p) = &self.input_proj {
            x = p.forward(&x)?;
        }
        let z = self.transformer.forward(&x, state)?;
        let y = match self.output_projs.first() {
            Some(Some(p)) => p.forward(&z)?,
            _ => z,
        };
        y.transpose(1, 2)
    }
}
