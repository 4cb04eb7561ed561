//! A bias-free linear layer whose weight is stored either as `f32` or as int8 with one
//! scale per output channel: the layers `--quantize` converts (reference: Python package
//! pocket-tts 4.0.1, `pocket_tts/quantization.py`, which swaps the FlowLM transformer's
//! attention `in_proj`/`out_proj` and FFN `linear1`/`linear2` for dynamic int8 linears).
//!
//! The int8 weight is quantized while the checkpoint is read, one tensor at a time, and
//! the `f32` tensor is dropped right away: a quantized model never holds the `f32`
//! weights of these layers. It lives in an [`Arc`] so that the runtimes share it with the
//! model definition instead of copying it.

use std::sync::Arc;

use candle_core::{Module, Result, Tensor};
use candle_nn::VarBuilder;
use pocket_tts_simd::QuantizedRows;

use super::layers::linear_no_bias;
use super::weights_view::{LinearView, WeightView};

/// How a quantizable layer stores its weight.
#[derive(Debug, Clone)]
enum Weight {
    /// `f32` (or whatever the checkpoint was loaded as), `[out, in]`.
    Float(candle_nn::Linear),
    /// Int8 per output row with `f32` scales, `[out, in]`.
    Int8(Arc<QuantizedRows>),
}

/// `y = x · Wᵀ` with `W` `[out, in]` in `f32` or int8 (see the module docs).
#[derive(Debug, Clone)]
pub struct MaybeQuantizedLinear {
    weight: Weight,
}

impl MaybeQuantizedLinear {
    /// Loads `weight` `[out_dim, in_dim]` from `vb`; with `quantize`, converts it to int8
    /// per output row ([`QuantizedRows::quantize`]) and drops the `f32` tensor.
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it).
    pub fn load(in_dim: usize, out_dim: usize, quantize: bool, vb: VarBuilder) -> Result<Self> {
        let linear = linear_no_bias(in_dim, out_dim, vb)?;
        if !quantize {
            return Ok(Self {
                weight: Weight::Float(linear),
            });
        }
        let values = linear
            .weight()
            .to_dtype(candle_core::DType::F32)?
            .flatten_all()?
            .to_vec1::<f32>()?;
        Ok(Self {
            weight: Weight::Int8(Arc::new(QuantizedRows::quantize(&values, out_dim, in_dim))),
        })
    }

    /// True when the weight is int8.
    pub fn is_quantized(&self) -> bool {
        matches!(self.weight, Weight::Int8(_))
    }

    /// The weight, read-only.
    pub fn view(&self) -> LinearView<'_> {
        match &self.weight {
            Weight::Float(l) => l.into(),
            Weight::Int8(q) => LinearView {
                weight: WeightView::Int8(q),
                bias: None,
            },
        }
    }
}

impl Module for MaybeQuantizedLinear {
    /// `x` `[…, in]` → `[…, out]`. An int8 weight is dequantized (`q · scale`) to an
    /// `f32` tensor on `x`'s device for each call: the Candle backend computes the same
    /// quantized model as the CPU runtime, slowly.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match &self.weight {
            Weight::Float(l) => l.forward(x),
            Weight::Int8(q) => {
                let w = Tensor::from_vec(q.dequantize(), (q.rows(), q.cols()), x.device())?
                    .to_dtype(x.dtype())?;
                candle_nn::Linear::new(w, None).forward(x)
            }
        }
    }
}
