//! [`TransformerBuilder`]: a Candle projected transformer (`modules/transformer.py`
//! `ProjectedTransformer` of `pocket-tts` 4.0.1) repacked into a [`TransformerF`] one
//! layer at a time, so that a caller can read each layer's weights, repack them and drop
//! them before reading the next (peak memory while Mimi's encoder is built).

use pocket_tts_simd::gemm::PackedMatrix;

use super::super::{dims, tensor_vec, with_tensor_values};
use super::{LayerF, NormF, TransformerF};
use crate::modules::weights_view::{LinearView, TransformerLayerView};
use crate::{Error, Result};

/// The attention and feed-forward widths every layer shares (read from the first).
#[derive(Debug, Clone, Copy)]
struct Geometry {
    d_model: usize,
    num_heads: usize,
    num_kv_heads: usize,
    head_dim: usize,
    attn_dim: usize,
    kv_dim: usize,
    ff: usize,
    context: Option<usize>,
}

/// Repacks a projected transformer's layers as they are pushed, then its projections
/// ([`Self::finish`]).
#[derive(Debug)]
pub(in crate::fast::mimi) struct TransformerBuilder {
    /// The module's name (`encoder_transformer`), for messages.
    prefix: String,
    geometry: Option<Geometry>,
    layers: Vec<LayerF>,
}

/// `[m, k]` of a bias-free float linear (`what` names it in errors).
fn linear_dims(l: &LinearView<'_>, what: &str) -> Result<(usize, usize)> {
    let Some(w) = l.weight.float() else {
        return Err(Error::Unsupported(format!(
            "Mimi fast path: {what} is {}; Mimi's linears stay in float",
            l.weight.kind_name()
        )));
    };
    let d = dims(w);
    if d.len() != 2 || l.bias.is_some() {
        return Err(Error::InvalidData(format!(
            "Mimi fast path: {what} is not a bias-free linear ({d:?})"
        )));
    }
    Ok((d[0], d[1]))
}

/// A bias-free float linear packed for the GEMM, row `r` of its weight scaled by
/// `scale(r)`; the weight is read in place (no copy next to the packed one).
fn pack_linear(
    l: &LinearView<'_>,
    what: &str,
    scale: impl Fn(usize) -> f32,
) -> Result<PackedMatrix> {
    let (m, k) = linear_dims(l, what)?;
    let w = l.weight.float().ok_or_else(|| {
        Error::Internal(format!(
            "Mimi fast path: {what} stopped being a float linear"
        ))
    })?;
    with_tensor_values(w, what, |v| PackedMatrix::from_linear(v, m, k, scale))
}

impl TransformerBuilder {
    /// An empty builder for the module `prefix` (named in messages).
    pub(in crate::fast::mimi) fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_string(),
            geometry: None,
            layers: Vec::new(),
        }
    }

    /// Repacks the next layer (LayerScale and the attention scale folded into the
    /// weights).
    ///
    /// # Errors
    /// [`Error::Unsupported`] for an odd head width, query heads not a multiple of the
    /// key/value heads or non-float linears, [`Error::InvalidData`] for weights whose
    /// shapes disagree with the first layer's.
    pub(in crate::fast::mimi) fn push(&mut self, l: &TransformerLayerView<'_>) -> Result<()> {
        let i = self.layers.len();
        let prefix = &self.prefix;
        let what = |s: &str| format!("{prefix}.transformer.layers.{i}.{s}");
        let g = match self.geometry {
            Some(g) => g,
            None => {
                let a = &l.self_attn;
                let (ff, d_model) = linear_dims(&l.linear1, &what("linear1"))?;
                if !a.head_dim.is_multiple_of(2) || !a.num_heads.is_multiple_of(a.num_kv_heads) {
                    return Err(Error::Unsupported(format!(
                        "Mimi fast path: {prefix}: head_dim {}, heads {}/{}",
                        a.head_dim, a.num_heads, a.num_kv_heads
                    )));
                }
                let g = Geometry {
                    d_model,
                    num_heads: a.num_heads,
                    num_kv_heads: a.num_kv_heads,
                    head_dim: a.head_dim,
                    attn_dim: a.attn_dim,
                    kv_dim: a.num_kv_heads * a.head_dim,
                    ff,
                    context: a.context,
                };
                self.geometry = Some(g);
                g
            }
        };
        let scale = (1.0 / (g.head_dim as f64).sqrt()) as f32;
        let ls = |s: Option<&_>, name: &str| -> Result<Option<Vec<f32>>> {
            s.map(|t| tensor_vec(t, &what(name))).transpose()
        };
        let ls1 = ls(l.layer_scale_1, "layer_scale_1.scale")?;
        let ls2 = ls(l.layer_scale_2, "layer_scale_2.scale")?;
        let (m, k) = linear_dims(&l.self_attn.in_proj, &what("self_attn.in_proj"))?;
        if m != g.attn_dim + 2 * g.kv_dim || k != g.d_model {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: {} has shape [{m}, {k}]",
                what("self_attn.in_proj.weight")
            )));
        }
        let attn_dim = g.attn_dim;
        let in_proj = pack_linear(&l.self_attn.in_proj, &what("self_attn.in_proj"), |r| {
            if r < attn_dim {
                scale
            } else {
                1.0
            }
        })?;
        let out_proj = pack_linear(&l.self_attn.out_proj, &what("self_attn.out_proj"), |r| {
            ls1.as_ref().map_or(1.0, |s| s[r])
        })?;
        let linear1 = pack_linear(&l.linear1, &what("linear1"), |_| 1.0)?;
        let linear2 = pack_linear(&l.linear2, &what("linear2"), |r| {
            ls2.as_ref().map_or(1.0, |s| s[r])
        })?;
        self.layers.push(LayerF {
            norm1: NormF::from_view(&l.norm1, &what("norm1"))?,
            norm2: NormF::from_view(&l.norm2, &what("norm2"))?,
            in_proj,
            out_proj,
            linear1,
            linear2,
        });
        Ok(())
    }

    /// The transformer: the layers pushed, the input and (first) output projections,
    /// RoPE of maximum period `max_period` (reference: `RotaryEmbedding`).
    ///
    /// # Errors
    /// [`Error::InvalidData`] without any layer, [`Error::Unsupported`] for non-float
    /// projections.
    pub(in crate::fast::mimi) fn finish(
        self,
        input_proj: Option<&LinearView<'_>>,
        output_proj: Option<&LinearView<'_>>,
        max_period: f64,
    ) -> Result<TransformerF> {
        let prefix = &self.prefix;
        let g = self
            .geometry
            .ok_or_else(|| Error::InvalidData(format!("Mimi fast path: {prefix} has no layers")))?;
        let input_proj = input_proj
            .map(|l| pack_linear(l, &format!("{prefix}.input_proj"), |_| 1.0))
            .transpose()?;
        let output_proj = output_proj
            .map(|l| pack_linear(l, &format!("{prefix}.output_projs.0"), |_| 1.0))
            .transpose()?;
        let din = input_proj.as_ref().map_or(g.d_model, |p| p.k());
        let dout = output_proj.as_ref().map_or(g.d_model, |p| p.m());
        // Same arithmetic as `RotaryEmbedding::build`.
        let half = g.head_dim / 2;
        let rscale = (-(max_period.ln()) * 2.0 / g.head_dim as f64) as f32;
        let freqs = (0..half).map(|d| (d as f32 * rscale).exp()).collect();
        Ok(TransformerF {
            din,
            dout,
            d_model: g.d_model,
            num_heads: g.num_heads,
            num_kv_heads: g.num_kv_heads,
            head_dim: g.head_dim,
            attn_dim: g.attn_dim,
            kv_dim: g.kv_dim,
            ff: g.ff,
            context: g.context,
            freqs,
            input_proj,
            output_proj,
            layers: self.layers,
        })
    }
}
