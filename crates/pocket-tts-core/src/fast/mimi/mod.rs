//! Mimi on plain `f32` buffers: [`MimiDecoderFast`] (one latent frame → one audio frame,
//! allocation-free after construction) and [`MimiEncoderFast`] (whole-signal voice
//! encoding, multi-threaded).
//!
//! Both run the computation of the Candle [`Mimi`](crate::internals::models::mimi::Mimi) (reference: `models/mimi.py`,
//! `modules/conv.py`, `seanet.py`, `resample.py`, `transformer.py`, `attention.py`) with
//! every activation stored time-major (`[T, C]`), so that:
//!
//! * every causal conv is one GEMM read in place from a buffer holding the conv's history
//!   rows followed by the new input rows (the im2col row of an output step is a contiguous
//!   run of input rows); the history roll is one `copy_within`;
//! * every transposed conv is one GEMM to `[T, K·C_out]` and an overlap-add;
//! * the transformer's linear layers are GEMMs over the step rows, LayerScale and the
//!   attention scale folded into the packed weights.
//!
//! Every kernel comes from `pocket-tts-simd`: the GEMM ([`pocket_tts_simd::gemm`]: weights
//! packed once in 64-column panels, an AVX-512 / AVX2+FMA / NEON / scalar micro-kernel
//! chosen at run time, bit-identical on all), ELU, tanh-GELU, softmax and layer norm.
//!
//! The decoder transformer keeps, per layer, a ring of the last `context − 1 + 16` keys
//! and values: a frame's 16 queries never see anything older (the reference's mask), so
//! the state stays fixed-size forever. Weights are copied and re-packed once at
//! construction (≈ 40 MB for the decoder of the released model; ≈ 20 MB with 16-bit weights,
//! [`MimiSource::with_decoder_dtype`](crate::internals::models::mimi::MimiSource::with_decoder_dtype)).
//!
//! # Example
//! ```no_run
//! # fn demo(mimi: &pocket_tts_core::internals::models::mimi::Mimi, latents: &[[f32; 32]]) -> pocket_tts_core::Result<()> {
//! use pocket_tts_core::internals::fast::mimi::MimiDecoderFast;
//! let dec = MimiDecoderFast::new(mimi)?;
//! let mut state = dec.new_state();
//! let mut audio = vec![0f32; dec.frame_size()];
//! for latent in latents {
//!     dec.decode_frame(latent, &mut state, &mut audio)?; // no allocation
//! }
//! # Ok(()) }
//! ```
//!
//! # Layout
//!
//! Each file names the part of the reference (`pocket-tts` 4.0.1) it mirrors.
//!
//! - `decoder.rs`: [`MimiDecoderFast`] and [`MimiDecoderFastState`]
//!   (`models/mimi.py`, `decode_from_latent`).
//! - `encoder.rs`: [`MimiEncoderFast`] (`models/mimi.py`, `encode_to_latent`).
//! - `seanet.rs`: the SEANet stacks compiled to a program of ops (`modules/seanet.py`).
//! - `conv.rs`: streaming conv, transposed conv and the depthwise upsampler
//!   (`modules/conv.py`, `modules/resample.py`).
//! - `transformer.rs`: the projected transformer, streaming (decoder) and whole-sequence
//!   (encoder) (`modules/transformer.py`, `modules/attention.py`); `transformer/chunked.rs`:
//!   the encoder's whole-sequence forward in chunks of positions (a key/value window per
//!   layer), `transformer/build.rs`: repacking layer by layer.
//! - `par.rs`: threading ([`pocket_tts_simd::Team`] jobs, GEMMs of
//!   [`pocket_tts_simd::gemm`] split across threads by rows or column panels, parallel
//!   element-wise passes).

mod conv;
mod decoder;
mod encoder;
mod par;
mod seanet;
mod transformer;

pub use decoder::{MimiDecoderFast, MimiDecoderFastState, MimiFrame, MimiScratch};
pub use encoder::MimiEncoderFast;

use candle_core::{CpuStorage, DType, Storage, Tensor};
use pocket_tts_simd::gemm::PackedMatrix;
use pocket_tts_simd::HalfKind;

use crate::config::WeightDtype;
use crate::{Error, Result};

/// The 16-bit format of a decoder weight dtype (`--mimi-dtype`), `None` for `float32`.
fn half_kind(dtype: WeightDtype) -> Option<HalfKind> {
    match dtype {
        WeightDtype::Float32 => None,
        WeightDtype::Float16 => Some(HalfKind::F16),
        WeightDtype::Bfloat16 => Some(HalfKind::Bf16),
    }
}

/// Stores the packed weights `m` (the checkpoint tensor `what`) as 16-bit `kind`.
///
/// # Errors
/// [`Error::WeightOutOfRange`] for a value `kind` cannot hold (`f16`: `|v| ≥ 65520`).
fn store_half(m: &mut PackedMatrix, kind: HalfKind, what: &str) -> Result<()> {
    *m = m.to_half(kind).map_err(|e| Error::WeightOutOfRange {
        tensor: format!("mimi.{what}.weight"),
        value: e.value,
        dtype: match kind {
            HalfKind::F16 => WeightDtype::Float16.name(),
            HalfKind::Bf16 => WeightDtype::Bfloat16.name(),
        },
    })?;
    Ok(())
}

/// Runs `f` over a tensor's values (any shape, flattened, as `f32`): borrowed in place
/// when the tensor is a contiguous `f32` CPU tensor, otherwise converted into a
/// temporary copy. Repacking a weight through it holds no second copy of the weight
/// (peak memory while Mimi's encoder is built on the first voice prompt).
///
/// # Errors
/// [`Error::InvalidData`] naming `what` when the values cannot be read.
fn with_tensor_values<R>(t: &Tensor, what: &str, f: impl FnOnce(&[f32]) -> R) -> Result<R> {
    if t.dtype() == DType::F32 {
        let (storage, layout) = t.storage_and_layout();
        if let (Storage::Cpu(CpuStorage::F32(v)), Some((start, end))) =
            (&*storage, layout.contiguous_offsets())
        {
            if let Some(values) = v.get(start..end) {
                return Ok(f(values));
            }
        }
    }
    Ok(f(&tensor_vec(t, what)?))
}

/// Copies a tensor's values (any shape, converted to `f32`) into a `Vec`.
fn tensor_vec(t: &Tensor, what: &str) -> Result<Vec<f32>> {
    t.to_dtype(DType::F32)
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(|e| Error::InvalidData(format!("Mimi fast path: reading {what}: {e}")))
}

fn dims(t: &Tensor) -> Vec<usize> {
    t.dims().to_vec()
}
