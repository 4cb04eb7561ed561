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
use pocket_tts_simd::{HalfKind, HalfRows, Q4Rows, QuantizedRows, SharedBytes, Q4_BLOCK};

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
        // Read in place from the checkpoint's memory map when it is being loaded, part by
        // part (no f32 copy on the heap, and only one part's pages of the map resident at
        // a time: peak memory), else through the VarBuilder.
        let mut parts = Converter::new(storage, out_dim, in_dim, &name);
        let rows_per_part = (CONVERT_PART_BYTES / (4 * in_dim.max(1))).max(1);
        let mapped = crate::weights::with_mapped_f32_rows(
            &name,
            (out_dim, in_dim),
            rows_per_part,
            |part, _| parts.push(part),
        )?;
        let converted = match mapped {
            true => parts.finish()?,
            false => {
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
        crate::memory::release_freed_memory();
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

/// Bytes of `f32` weights converted per part when a weight is read from the checkpoint's
/// memory map ([`crate::weights::with_mapped_f32_rows`]): 1 MiB of map pages resident at
/// a time instead of a whole weight (16 MiB for the FlowLM's `linear1`).
const CONVERT_PART_BYTES: usize = 1 << 20;

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
    let mut parts = Converter::new(storage, out_dim, in_dim, name);
    parts.push(values);
    parts.finish()
}

/// A weight converted part by part (blocks of whole rows, in order): every storage
/// converts rows independently (16-bit: each value; int8: each row's scale; 4-bit: blocks
/// inside a row), so the parts give exactly the bits of converting the whole matrix.
struct Converter<'n> {
    rows: usize,
    cols: usize,
    name: &'n str,
    /// Rows converted so far.
    done: usize,
    parts: Parts,
}

/// The converted values gathered so far, by storage.
enum Parts {
    /// 16-bit bits, and the first value `f16` cannot hold.
    Half(HalfKind, Vec<u16>, Option<f32>),
    /// Int8 values and row scales.
    Int8(Vec<i8>, Vec<f32>),
    /// 4-bit nibbles and block scales' bytes.
    Q4(Vec<u8>, Vec<u8>),
    /// Not a converted storage (refused by `finish`).
    Float,
}

impl<'n> Converter<'n> {
    fn new(storage: LinearStorage, rows: usize, cols: usize, name: &'n str) -> Self {
        let n = rows * cols;
        let parts = match storage {
            LinearStorage::Half(kind) => Parts::Half(kind, Vec::with_capacity(n), None),
            LinearStorage::Int8 => Parts::Int8(Vec::with_capacity(n), Vec::with_capacity(rows)),
            LinearStorage::Q4 => Parts::Q4(
                Vec::with_capacity(n / 2),
                Vec::with_capacity(n / Q4_BLOCK * 2),
            ),
            LinearStorage::Float => Parts::Float,
        };
        Self {
            rows,
            cols,
            name,
            done: 0,
            parts,
        }
    }

    /// Converts the next rows (`part`: whole rows).
    fn push(&mut self, part: &[f32]) {
        // A matrix without columns is handed over in one (empty) part.
        let nr = part.len().checked_div(self.cols).unwrap_or(self.rows);
        self.done += nr;
        match &mut self.parts {
            Parts::Half(kind, bits, out_of_range) => {
                if *kind == HalfKind::F16 && out_of_range.is_none() {
                    *out_of_range = part.iter().copied().find(|v| v.abs() >= F16_ROUNDS_TO_INF);
                }
                bits.extend_from_slice(HalfRows::from_f32(part, nr, self.cols, *kind).bits());
            }
            Parts::Int8(values, scales) => {
                let q = QuantizedRows::quantize(part, nr, self.cols);
                values.extend_from_slice(q.values());
                scales.extend_from_slice(q.scales());
            }
            Parts::Q4(values, scales) => {
                let q = Q4Rows::quantize(part, nr, self.cols);
                values.extend_from_slice(q.values());
                scales.extend_from_slice(q.scales());
            }
            Parts::Float => {}
        }
    }

    /// The converted weight.
    ///
    /// # Errors
    /// [`crate::Error::WeightOutOfRange`] for an `f16` storage and a value it cannot hold.
    fn finish(self) -> Result<Weight> {
        let internal =
            |what: String| crate::Error::Internal(format!("{}: {what}", self.name)).into_candle();
        if self.done != self.rows {
            return Err(internal(format!(
                "{} of {} rows were converted",
                self.done, self.rows
            )));
        }
        let (rows, cols) = (self.rows, self.cols);
        Ok(match self.parts {
            Parts::Half(_, _, Some(v)) => {
                return Err(crate::Error::WeightOutOfRange {
                    tensor: self.name.to_string(),
                    value: v,
                    dtype: WeightDtype::Float16.name(),
                }
                .into_candle());
            }
            Parts::Half(kind, bits, None) => {
                Weight::Half(Arc::new(HalfRows::from_bits(bits, rows, cols, kind)))
            }
            Parts::Int8(values, scales) => Weight::Int8(Arc::new(
                QuantizedRows::from_parts(values, scales, rows, cols).map_err(internal)?,
            )),
            Parts::Q4(values, scales) => Weight::Q4(Arc::new(
                Q4Rows::from_parts(
                    SharedBytes::from_vec(values),
                    SharedBytes::from_vec(scales),
                    rows,
                    cols,
                )
                .map_err(internal)?,
            )),
            Parts::Float => return Err(internal("f32 weights are not converted".into())),
        })
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

#[cfg(test)]
mod tests {
    //! A weight converted part by part (as read from the checkpoint's memory map) gives the
    //! bits of converting it whole.

    use super::{convert, Converter, LinearStorage, Weight};
    use crate::weights::{with_mapped_f32_rows, Checkpoint};
    use pocket_tts_simd::HalfKind;

    fn stored_bytes(w: &Weight) -> (Vec<u8>, Vec<u8>) {
        match w {
            Weight::Half(h) => (
                h.bits().iter().flat_map(|b| b.to_le_bytes()).collect(),
                vec![],
            ),
            Weight::Int8(q) => (
                q.values().iter().map(|&v| v as u8).collect(),
                q.scales().iter().flat_map(|s| s.to_le_bytes()).collect(),
            ),
            Weight::Q4(q) => (q.values().to_vec(), q.scales().to_vec()),
            Weight::Float(_) => unreachable!("not converted"),
        }
    }

    #[test]
    fn parts_of_rows_give_the_bits_of_the_whole_conversion() {
        let (rows, cols) = (10, 64);
        let w: Vec<f32> = (0..rows * cols)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 1e-3)
            .collect();
        for storage in [
            LinearStorage::Int8,
            LinearStorage::Q4,
            LinearStorage::Half(HalfKind::F16),
            LinearStorage::Half(HalfKind::Bf16),
        ] {
            let whole = convert(&w, storage, rows, cols, "w").unwrap();
            let mut parts = Converter::new(storage, rows, cols, "w");
            for r in [0..3, 3..8, 8..10] {
                parts.push(&w[r.start * cols..r.end * cols]);
            }
            let parted = parts.finish().unwrap();
            assert_eq!(stored_bytes(&parted), stored_bytes(&whole), "{storage:?}");
            // Missing rows are an internal error, not a short weight.
            let mut short = Converter::new(storage, rows, cols, "w");
            short.push(&w[..3 * cols]);
            assert!(short.finish().is_err(), "{storage:?}");
        }
        // An f16 overflow in a later part is still reported, naming the tensor.
        let mut big = w.clone();
        big[9 * cols] = 1e6;
        let mut parts = Converter::new(LinearStorage::Half(HalfKind::F16), rows, cols, "big.w");
        parts.push(&big[..5 * cols]);
        parts.push(&big[5 * cols..]);
        let e = parts.finish().expect_err("out of range").to_string();
        assert!(e.contains("big.w"), "{e}");
    }

    #[test]
    fn a_mapped_weight_is_handed_over_in_parts_of_whole_rows() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/tiny/model.safetensors");
        let ckpt = Checkpoint::open(&path).expect("tiny checkpoint");
        let name = "flow_lm.transformer.layers.0.linear1.weight";
        let whole = ckpt
            .var_builder(candle_core::DType::F32, &candle_core::Device::Cpu)
            .get((256, 64), name)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        // Outside a map scope nothing is mapped.
        assert!(!with_mapped_f32_rows(name, (256, 64), 7, |_, _| unreachable!()).unwrap());
        let _scope = ckpt.map_scope();
        let mut seen = Vec::new();
        let mut firsts = Vec::new();
        assert!(with_mapped_f32_rows(name, (256, 64), 7, |part, first| {
            assert_eq!(part.len() % 64, 0);
            firsts.push(first);
            seen.extend_from_slice(part);
        })
        .unwrap());
        assert_eq!(seen, whole);
        assert_eq!(firsts, (0..256).step_by(7).collect::<Vec<_>>());
        // Another shape than the tensor's is not handed over.
        assert!(!with_mapped_f32_rows(name, (64, 256), 7, |_, _| unreachable!()).unwrap());
    }
}
