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
        let q = QuantizedRows::quantize(&values, out_dim, in_dim);
        drop((values, linear));
        // The f32 copies are freed: return their pages now, so that they do not pile up
        // in the heap while the next layers load (peak memory).
        crate::weights::release_freed_memory();
        Ok(Self {
            weight: Weight::Int8(Arc::new(q)),
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

/// `x` with each row (last dimension) rounded to int8 steps of its own symmetric scale
/// `max|row| / 127` (a row of zeros stays zero), returned in `f32`.
fn quantize_tokens(x: &Tensor) -> Result<Tensor> {
    let scale = (x.abs()?.max_keepdim(candle_core::D::Minus1)? / 127.0)?;
    // A zero row has scale 0: divide by anything non-zero instead (its values are 0).
    let safe = scale.maximum(f32::MIN_POSITIVE)?;
    x.broadcast_div(&safe)?
        .round()?
        .clamp(-127f32, 127f32)?
        .broadcast_mul(&safe)
}

impl Module for MaybeQuantizedLinear {
    /// `x` `[…, in]` → `[…, out]`. With an int8 weight, each token (row of `x`) is
    /// quantized to int8 with its own symmetric scale (`max|x| / 127`, as
    /// `pocket_tts_simd::QuantizedVector`) and the weight dequantized (`q · scale`), both
    /// held in `f32` for the product: the Candle backend computes the same quantized model
    /// as the CPU runtime's integer kernels, slowly (the weight is dequantized per call).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match &self.weight {
            Weight::Float(l) => l.forward(x),
            Weight::Int8(q) => {
                let w = Tensor::from_vec(q.dequantize(), (q.rows(), q.cols()), x.device())?
                    .to_dtype(x.dtype())?;
                candle_nn::Linear::new(w, None).forward(&quantize_tokens(x)?)
            }
        }
    }
}
