//! A linear layer whose weight is stored as `f32`, as 16-bit floats (`f16`/`bf16`) or as
//! int8 with one scale per output channel: the layers `--quantize` and the FlowLM's
//! `dtype` convert (reference: Python package pocket-tts 4.0.1, `pocket_tts/quantization.py`,
//! which swaps the FlowLM transformer's attention `in_proj`/`out_proj` and FFN
//! `linear1`/`linear2` for dynamic int8 linears, and `models/flow_lm.py`, which builds the
//! FlowLM with `dtype=getattr(torch, config.dtype)`).
//!
//! A converted weight is converted while the checkpoint is read, one tensor at a time, and
//! the `f32` tensor is dropped right away: such a model never holds the `f32` weights of
//! these layers. It lives in an [`Arc`] so that the runtimes share it with the model
//! definition instead of copying it. 16-bit weights are only a storage format: every
//! product is computed in `f32` on the exactly widened weights (the reference computes in
//! the 16-bit type itself).

use std::sync::Arc;

use candle_core::{Module, Result, Tensor};
use candle_nn::VarBuilder;
use pocket_tts_simd::{HalfKind, HalfRows, Q4Rows, QuantizedRows, Q4_BLOCK};

use super::weights_view::{LinearView, WeightView};
use crate::config::WeightDtype;

/// Largest magnitude that rounds to a finite `f16` (65504 is the largest `f16`; values
/// from 65520 on round to infinity).
const F16_ROUNDS_TO_INF: f32 = 65520.0;

/// How a [`MaybeQuantizedLinear`] stores its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LinearStorage {
    /// `f32` (the checkpoint's tensor, as loaded).
    #[default]
    Float,
    /// 16-bit floats ([`HalfRows`]), widened to `f32` for every product.
    Half(HalfKind),
    /// Int8 per output row with `f32` scales ([`QuantizedRows`], `--quantize int8`).
    Int8,
    /// 4-bit blocks of 32 with a `bf16` scale each ([`Q4Rows`], `--quantize q4`).
    Q4,
}

impl LinearStorage {
    /// The storage of a config weight dtype (`flow_lm.dtype`): `float32` → [`Self::Float`],
    /// `float16` / `bfloat16` → [`Self::Half`].
    pub fn for_dtype(dtype: WeightDtype) -> Self {
        match dtype {
            WeightDtype::Float32 => Self::Float,
            WeightDtype::Float16 => Self::Half(HalfKind::F16),
            WeightDtype::Bfloat16 => Self::Half(HalfKind::Bf16),
        }
    }
}

/// How a layer stores its weight.
#[derive(Debug, Clone)]
enum Weight {
    /// `f32` (or whatever the checkpoint was loaded as), `[out, in]`.
    Float(Tensor),
    /// 16-bit floats, `[out, in]`.
    Half(Arc<HalfRows>),
    /// Int8 per output row with `f32` scales, `[out, in]`.
    Int8(Arc<QuantizedRows>),
    /// 4-bit blocks with `bf16` scales, `[out, in]`.
    Q4(Arc<Q4Rows>),
}

/// `y = x · Wᵀ (+ b)` with `W` `[out, in]` stored as [`LinearStorage`] says (see the
/// module docs); the bias `[out]`, when present, stays in `f32`.
#[derive(Debug, Clone)]
pub struct MaybeQuantizedLinear {
    weight: Weight,
    bias: Option<Tensor>,
}

impl MaybeQuantizedLinear {
    /// Loads `weight` `[out_dim, in_dim]` (and `bias` `[out_dim]` with `bias`) from `vb`
    /// and converts the weight to `storage`, dropping the `f32` tensor: int8 per output row
    /// ([`QuantizedRows::quantize`]), 4-bit blocks ([`Q4Rows::quantize`]) or 16-bit floats
    /// ([`HalfRows::from_f32`], round to nearest even, as PyTorch's `.half()` /
    /// `.bfloat16()`). With int8 or 4-bit storage, a pre-quantized checkpoint's tensors
    /// (`weight_int8`… or `weight_q4`…, [`crate::internals::weights::prequantized`]) are
    /// read as stored instead of `weight`.
    ///
    /// # Errors
    /// A missing or mis-shaped tensor (Candle's error, naming it); with `f16` storage, a
    /// weight holding a value that `f16` cannot represent (`|w| ≥ 65520` would become
    /// infinite), naming the tensor; with 4-bit storage, an `in_dim` that is not a
    /// multiple of 32 ([`crate::Error::Unsupported`]).
    pub fn load(
        in_dim: usize,
        out_dim: usize,
        bias: bool,
        storage: LinearStorage,
        vb: VarBuilder,
    ) -> Result<Self> {
        let stored = match storage {
            LinearStorage::Int8 => crate::weights::prequantized::load_int8(&vb, out_dim, in_dim)?
                .map(|q| Weight::Int8(Arc::new(q))),
            LinearStorage::Q4 => crate::weights::prequantized::load_q4(&vb, out_dim, in_dim)?
                .map(|q| Weight::Q4(Arc::new(q))),
            _ => None,
        };
        let bias = if bias {
            Some(vb.get(out_dim, "bias")?)
        } else {
            None
        };
        if let Some(weight) = stored {
            // A pre-quantized checkpoint (`export-model`): the values as stored.
            return Ok(Self { weight, bias });
        }
        if storage == LinearStorage::Q4 && !in_dim.is_multiple_of(Q4_BLOCK) {
            return Err(crate::Error::Unsupported(format!(
                "{}.weight: 4-bit quantization needs input widths that are multiples of \
                 {Q4_BLOCK}, this one is {in_dim}: use --quantize int8",
                vb.prefix()
            ))
            .into_candle());
        }
        if storage == LinearStorage::Float {
            return Ok(Self {
                weight: Weight::Float(vb.get((out_dim, in_dim), "weight")?),
                bias,
            });
        }
        let name = format!("{}.weight", vb.prefix());
        // Read in place from the checkpoint's memory map when it is being loaded (no f32
        // copy on the heap: peak memory), else through the VarBuilder.
        let converted = match crate::weights::with_mapped_f32(&name, &[out_dim, in_dim], |v| {
            convert(v, storage, out_dim, in_dim, &name)
        })? {
            Some(converted) => converted?,
            None => {
                let weight = vb
                    .get((out_dim, in_dim), "weight")?
                    .to_dtype(candle_core::DType::F32)?
                    .flatten_all()?;
                let converted = {
                    // The values are read in place from the tensor's storage, not copied
                    // once more.
                    let (held, layout) = weight.storage_and_layout();
                    match (&*held, layout.contiguous_offsets()) {
                        (candle_core::Storage::Cpu(cpu), Some((start, end))) => convert(
                            &cpu.as_slice::<f32>()?[start..end],
                            storage,
                            out_dim,
                            in_dim,
                            &name,
                        ),
                        _ => convert(&weight.to_vec1::<f32>()?, storage, out_dim, in_dim, &name),
                    }
                };
                drop(weight);
                converted?
            }
        };
        // The f32 copies are freed: return their pages now, so that they do not pile up
        // in the heap while the next layers load (peak memory).
        crate::weights::release_freed_memory();
        Ok(Self {
            weight: converted,
            bias,
        })
    }

    /// True when the weight is int8 or 4-bit.
    pub fn is_quantized(&self) -> bool {
        matches!(self.weight, Weight::Int8(_) | Weight::Q4(_))
    }

    /// How the weight is stored.
    pub fn storage(&self) -> LinearStorage {
        match &self.weight {
            Weight::Float(_) => LinearStorage::Float,
            Weight::Half(h) => LinearStorage::Half(h.kind()),
            Weight::Int8(_) => LinearStorage::Int8,
            Weight::Q4(_) => LinearStorage::Q4,
        }
    }

    /// The weight and bias, read-only.
    pub fn view(&self) -> LinearView<'_> {
        LinearView {
            weight: match &self.weight {
                Weight::Float(t) => WeightView::Float(t),
                Weight::Half(h) => WeightView::Half(h),
                Weight::Int8(q) => WeightView::Int8(q),
                Weight::Q4(q) => WeightView::Q4(q),
            },
            bias: self.bias.as_ref(),
        }
    }
}

/// `values` (`[out_dim, in_dim]`, row-major, the `f32` weight `name`) stored as `storage`
/// asks (16-bit, int8 or 4-bit; not [`LinearStorage::Float`]).
///
/// # Errors
/// [`crate::Error::WeightOutOfRange`] for an `f16` storage and a value it cannot hold.
fn convert(
    values: &[f32],
    storage: LinearStorage,
    out_dim: usize,
    in_dim: usize,
    name: &str,
) -> Result<Weight> {
    Ok(match storage {
        LinearStorage::Half(kind) => {
            if kind == HalfKind::F16 {
                if let Some(v) = values
                    .iter()
                    .copied()
                    .find(|v| v.abs() >= F16_ROUNDS_TO_INF)
                {
                    return Err(crate::Error::WeightOutOfRange {
                        tensor: name.to_string(),
                        value: v,
                        dtype: WeightDtype::Float16.name(),
                    }
                    .into_candle());
                }
            }
            Weight::Half(Arc::new(HalfRows::from_f32(values, out_dim, in_dim, kind)))
        }
        LinearStorage::Q4 => Weight::Q4(Arc::new(Q4Rows::quantize(values, out_dim, in_dim))),
        LinearStorage::Int8 => {
            Weight::Int8(Arc::new(QuantizedRows::quantize(values, out_dim, in_dim)))
        }
        LinearStorage::Float => {
            return Err(
                crate::Error::Internal(format!("{name}: f32 weights are not converted"))
                    .into_candle(),
            )
        }
    })
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
    /// `x` `[…, in]` → `[…, out]`. A 16-bit weight is widened to `f32` (exact) and the
    /// product computed in `f32`. With an int8 or 4-bit weight, each token (row of `x`) is
    /// quantized to int8 with its own symmetric scale (`max|x| / 127`, as
    /// `pocket_tts_simd::QuantizedVector`) and the weight dequantized (`q · scale`), both
    /// held in `f32` for the product. Either way the Candle backend computes the same model
    /// as the CPU runtime's kernels, slowly (the weight is converted per call).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let bias = self.bias.clone();
        match &self.weight {
            Weight::Float(w) => candle_nn::Linear::new(w.clone(), bias).forward(x),
            Weight::Half(h) => {
                let w = Tensor::from_vec(h.dequantize(), (h.rows(), h.cols()), x.device())?
                    .to_dtype(x.dtype())?;
                candle_nn::Linear::new(w, bias).forward(x)
            }
            Weight::Int8(q) => {
                let w = Tensor::from_vec(q.dequantize(), (q.rows(), q.cols()), x.device())?
                    .to_dtype(x.dtype())?;
                candle_nn::Linear::new(w, bias).forward(&quantize_tokens(x)?)
            }
            Weight::Q4(q) => {
                let w = Tensor::from_vec(q.dequantize(), (q.rows(), q.cols()), x.device())?
                    .to_dtype(x.dtype())?;
                candle_nn::Linear::new(w, bias).forward(&quantize_tokens(x)?)
            }
        }
    }
}
