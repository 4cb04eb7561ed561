//! Voice states: the FlowLM's KV caches after the voice prompt, as plain `f32` buffers,
//! saved and loaded in the reference's `export-voice` format (reference:
//! `models/model_state.py`, `TTSModel.get_state_for_audio_prompt`).
//!
//! A file holds, for each attention layer `transformer.layers.{i}.self_attn`, the
//! tensors `…/cache` `[2, 1, T, H_kv, D]` (keys then values; f32, f16 or bf16 are read),
//! `…/offset` `[1]` i64 (positions used) and `…/pad` `[1]` i64 (zero). Files from older
//! versions carry `…/current_end` instead of `offset`; its first dimension is the offset.
//! Files are read and written with the `safetensors` crate alone: a voice state is data,
//! not tensors of any runtime.

use std::collections::HashMap;
use std::path::Path;

use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;

use crate::{Error, Result};

/// One attention layer of a [`VoiceState`]: keys and values, each `[H_kv, T, D]`
/// row-major (head, position, channel), `T` = [`VoiceState::len`].
#[derive(Debug, Clone, PartialEq)]
pub struct LayerKv {
    /// Keys `[H_kv, T, D]`.
    pub keys: Vec<f32>,
    /// Values `[H_kv, T, D]`.
    pub values: Vec<f32>,
}

/// The FlowLM state after a voice prompt: what generation starts from. Plain data: per
/// attention layer, the keys and values of the prompt's `len()` positions
/// ([`LayerKv`], `[H_kv, T, D]` each), so that any runtime (or a binding) can copy it in.
/// Cloning is a deep copy.
#[derive(Debug, Clone, PartialEq)]
pub struct VoiceState {
    layers: Vec<LayerKv>,
    kv_heads: usize,
    head_dim: usize,
    len: usize,
}

fn layer_prefix(i: usize) -> String {
    format!("transformer.layers.{i}.self_attn")
}

impl VoiceState {
    /// A state of `len` positions from its layers (`[H_kv, T, D]` keys and values each).
    ///
    /// # Errors
    /// [`Error::InvalidData`] when a layer's buffers do not hold `kv_heads * len *
    /// head_dim` values, or a value is not finite.
    pub fn new(layers: Vec<LayerKv>, kv_heads: usize, head_dim: usize, len: usize) -> Result<Self> {
        let want = kv_heads * len * head_dim;
        for (i, l) in layers.iter().enumerate() {
            for (what, buf) in [("keys", &l.keys), ("values", &l.values)] {
                if buf.len() != want {
                    return Err(Error::InvalidData(format!(
                        "voice state layer {i}: {what} hold {} values, expected {want} \
                         ([{kv_heads}, {len}, {head_dim}])",
                        buf.len()
                    )));
                }
                if let Some(k) = buf.iter().position(|x| !x.is_finite()) {
                    return Err(Error::InvalidData(format!(
                        "voice state layer {i}: {what} hold a non-finite value (NaN or \
                         infinity) at index {k}"
                    )));
                }
            }
        }
        Ok(Self {
            layers,
            kv_heads,
            head_dim,
            len,
        })
    }

    /// Prompt length in positions (the offset of the next token).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the state holds no prompt.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The attention layers, first to last.
    pub fn layers(&self) -> &[LayerKv] {
        &self.layers
    }

    /// Key/value heads per layer (`H_kv`).
    pub fn kv_heads(&self) -> usize {
        self.kv_heads
    }

    /// Channels per head (`D`).
    pub fn head_dim(&self) -> usize {
        self.head_dim
    }

    /// Writes the state as a safetensors file readable by the reference's
    /// `get_state_for_audio_prompt`, under the [output rules](crate::output): a regular file
    /// is replaced atomically (a failure leaves nothing behind), a device or FIFO is written
    /// in place.
    ///
    /// # Errors
    /// [`Error::Io`] naming the path when it cannot be written, and the errors of
    /// [`crate::output::OutputFile::create`].
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = self.to_safetensors_bytes()?;
        crate::output::write_file(path, &bytes)
    }

    /// The state in the export format (`…/cache` `[2, 1, T, H_kv, D]` f32, `…/offset` and
    /// `…/pad` `[1]` i64 per layer), serialized as a safetensors file.
    ///
    /// # Errors
    /// [`Error::Internal`] if the safetensors writer refuses the tensors (a bug).
    pub fn to_safetensors_bytes(&self) -> Result<Vec<u8>> {
        let (h, t, d) = (self.kv_heads, self.len, self.head_dim);
        let mut owned: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
        for (i, layer) in self.layers.iter().enumerate() {
            // [H, T, D] keys and values -> [2, 1, T, H, D].
            let mut cache = Vec::with_capacity(2 * t * h * d * 4);
            for buf in [&layer.keys, &layer.values] {
                for pos in 0..t {
                    for head in 0..h {
                        let row = &buf[(head * t + pos) * d..][..d];
                        for x in row {
                            cache.extend_from_slice(&x.to_le_bytes());
                        }
                    }
                }
            }
            let p = layer_prefix(i);
            owned.push((format!("{p}/cache"), Dtype::F32, vec![2, 1, t, h, d], cache));
            owned.push((
                format!("{p}/offset"),
                Dtype::I64,
                vec![1],
                (t as i64).to_le_bytes().to_vec(),
            ));
            owned.push((
                format!("{p}/pad"),
                Dtype::I64,
                vec![1],
                0i64.to_le_bytes().to_vec(),
            ));
        }
        owned.sort_by(|a, b| a.0.cmp(&b.0));
        let views = owned
            .iter()
            .map(|(name, dtype, shape, data)| {
                TensorView::new(*dtype, shape.clone(), data)
                    .map(|v| (name.as_str(), v))
                    .map_err(|e| Error::Internal(format!("voice state tensor {name}: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        safetensors::serialize(views, None)
            .map_err(|e| Error::Internal(format!("cannot serialize a voice state: {e}")))
    }

    /// Parses a voice state file held in memory, checking it against a model of
    /// `num_layers` attention layers of `kv_heads` heads of width `head_dim`; `origin` names
    /// it in messages.
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the file and tensor for bytes that are not safetensors,
    /// a missing layer, a shape that does not fit the model, an offset beyond the cache or
    /// a non-finite value; [`Error::Unsupported`] for batch padding.
    pub fn from_safetensors_bytes(
        bytes: &[u8],
        num_layers: usize,
        kv_heads: usize,
        head_dim: usize,
        origin: &str,
    ) -> Result<Self> {
        let bad = |m: String| Error::InvalidData(format!("voice state {origin}: {m}"));
        let file = SafeTensors::deserialize(bytes)
            .map_err(|e| bad(format!("not a readable safetensors file: {e}")))?;
        let tensors: HashMap<String, TensorView<'_>> = file.tensors().into_iter().collect();
        let mut layers = Vec::with_capacity(num_layers);
        let mut offsets = Vec::with_capacity(num_layers);
        for i in 0..num_layers {
            let p = layer_prefix(i);
            let cache = tensors.get(&format!("{p}/cache")).ok_or_else(|| {
                bad(format!(
                    "missing tensor {p}/cache: this is not a voice state exported for this model"
                ))
            })?;
            let dims = cache.shape().to_vec();
            if dims.len() != 5
                || dims[0] != 2
                || dims[1] != 1
                || dims[3] != kv_heads
                || dims[4] != head_dim
            {
                return Err(bad(format!(
                    "tensor {p}/cache has shape {dims:?}, expected [2, 1, T, {kv_heads}, {head_dim}]: \
                     the voice was exported for a different model"
                )));
            }
            let offset = if let Some(o) = tensors.get(&format!("{p}/offset")) {
                let v = integers(o)
                    .map_err(|m| bad(format!("tensor {p}/offset: {m}")))?
                    .first()
                    .copied()
                    .ok_or_else(|| bad(format!("tensor {p}/offset is empty")))?;
                usize::try_from(v)
                    .map_err(|_| bad(format!("tensor {p}/offset is negative ({v})")))?
            } else if let Some(ce) = tensors.get(&format!("{p}/current_end")) {
                ce.shape().first().copied().unwrap_or(0)
            } else {
                return Err(bad(format!("missing tensor {p}/offset")));
            };
            if let Some(pad) = tensors.get(&format!("{p}/pad")) {
                let pad = integers(pad).map_err(|m| bad(format!("tensor {p}/pad: {m}")))?;
                if pad.iter().any(|&x| x != 0) {
                    return Err(Error::Unsupported(format!(
                        "voice state {origin}: {p}/pad is non-zero (batched padding is not supported)"
                    )));
                }
            }
            let cap = dims[2];
            if offset > cap {
                return Err(bad(format!(
                    "{p}/offset {offset} exceeds the cache length {cap}"
                )));
            }
            let values = floats(cache).map_err(|m| bad(format!("tensor {p}/cache: {m}")))?;
            // [2, 1, cap, H, D] -> keys and values [H, offset, D].
            let (h, d) = (kv_heads, head_dim);
            let mut kv = [Vec::with_capacity(h * offset * d), Vec::new()];
            kv[1].reserve(h * offset * d);
            for (which, out) in kv.iter_mut().enumerate() {
                let base = which * cap * h * d;
                for head in 0..h {
                    for pos in 0..offset {
                        out.extend_from_slice(&values[base + (pos * h + head) * d..][..d]);
                    }
                }
            }
            let [keys, values] = kv;
            for (what, buf) in [("keys", &keys), ("values", &values)] {
                if let Some(k) = buf.iter().position(|x| !x.is_finite()) {
                    return Err(bad(format!(
                        "tensor {p}/cache holds a non-finite value (NaN or infinity) in its \
                         {what} (value {k} of the first {offset} positions): the file is \
                         corrupt; export the voice again"
                    )));
                }
            }
            layers.push(LayerKv { keys, values });
            offsets.push(offset);
        }
        if offsets.windows(2).any(|w| w[0] != w[1]) {
            return Err(bad(format!("layers disagree on the offset: {offsets:?}")));
        }
        let len = offsets.first().copied().unwrap_or(0);
        Self::new(layers, kv_heads, head_dim, len)
    }

    /// Loads a voice state file (see [`Self::from_safetensors_bytes`]).
    ///
    /// # Errors
    /// [`Error::NotFound`] for a missing file, [`Error::InvalidData`] for a file that is
    /// not safetensors or does not fit the model.
    pub fn load(path: &Path, num_layers: usize, kv_heads: usize, head_dim: usize) -> Result<Self> {
        if !path.exists() {
            return Err(Error::NotFound(format!(
                "voice state {} does not exist",
                path.display()
            )));
        }
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| {
            Error::InvalidData(format!(
                "voice state {origin} is not a readable safetensors file: {e}"
            ))
        })?;
        Self::from_safetensors_bytes(&bytes, num_layers, kv_heads, head_dim, &origin)
    }
}

/// The values of a float tensor (f32, f16 or bf16) as `f32`, in order.
fn floats(t: &TensorView<'_>) -> std::result::Result<Vec<f32>, String> {
    let data = t.data();
    let half = |f: fn([u8; 2]) -> f32| data.chunks_exact(2).map(|c| f([c[0], c[1]])).collect();
    Ok(match t.dtype() {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::F16 => half(|b| half::f16::from_le_bytes(b).to_f32()),
        Dtype::BF16 => half(|b| half::bf16::from_le_bytes(b).to_f32()),
        other => return Err(format!("dtype {other:?}, expected F32, F16 or BF16")),
    })
}

/// The values of an integer tensor as `i64`, in order.
fn integers(t: &TensorView<'_>) -> std::result::Result<Vec<i64>, String> {
    let data = t.data();
    Ok(match t.dtype() {
        Dtype::I64 => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        Dtype::I32 => data
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")) as i64)
            .collect(),
        Dtype::U8 => data.iter().map(|&b| b as i64).collect(),
        other => return Err(format!("dtype {other:?}, expected an integer")),
    })
}
