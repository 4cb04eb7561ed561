//! Voice states: the FlowLM's KV caches after the voice prompt, saved and loaded in the
//! reference's `export-voice` format (reference: `models/model_state.py`).
//!
//! A file holds, for each attention layer `transformer.layers.{i}.self_attn`, the
//! tensors `…/cache` `[2, 1, T, H_kv, D]` (keys then values, f32), `…/offset` `[1]` i64
//! (positions used) and `…/pad` `[1]` i64 (zero). Files from older versions carry
//! `…/current_end` instead of `offset`; its first dimension is the offset.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{DType, Device, Tensor};

use crate::modules::attention::KvCache;
use crate::modules::transformer::TransformerState;
use crate::{Error, Result};

/// The FlowLM state after a voice prompt: what generation starts from.
#[derive(Debug)]
pub struct VoiceState {
    /// Per-layer KV caches.
    pub state: TransformerState,
}

fn layer_prefix(i: usize) -> String {
    format!("transformer.layers.{i}.self_attn")
}

impl VoiceState {
    /// Prompt length in positions (the offset of the next token).
    pub fn len(&self) -> usize {
        self.state.offset()
    }

    /// True when the state holds no prompt.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A deep copy with room for `extra` more positions per layer (the reference's
    /// `copy.deepcopy` followed by `_expand_kv_cache`).
    pub fn fork(&self, extra: usize) -> Result<TransformerState> {
        Ok(self.state.deep_clone(self.len() + extra)?)
    }

    /// The tensors of the reference's export format, keyed `module/key`.
    pub fn to_tensors(&self) -> Result<HashMap<String, Tensor>> {
        let mut out = HashMap::new();
        for (i, cache) in self.state.caches.iter().enumerate() {
            let (k, v) = cache.kv()?;
            // [B, H, T, D] -> [B, T, H, D], then stack keys and values.
            let k = k.transpose(1, 2)?.contiguous()?;
            let v = v.transpose(1, 2)?.contiguous()?;
            let cache_t = Tensor::stack(&[&k, &v], 0)?;
            let p = layer_prefix(i);
            let dev = cache_t.device().clone();
            out.insert(format!("{p}/cache"), cache_t);
            out.insert(
                format!("{p}/offset"),
                Tensor::from_slice(&[cache.offset() as i64], 1, &dev)?,
            );
            out.insert(format!("{p}/pad"), Tensor::from_slice(&[0i64], 1, &dev)?);
        }
        Ok(out)
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

    /// The state in the export format, serialized as a safetensors file.
    ///
    /// # Errors
    /// [`Error::Candle`] if a tensor cannot be serialized (a bug).
    pub fn to_safetensors_bytes(&self) -> Result<Vec<u8>> {
        let tensors = self.to_tensors()?;
        let mut named: Vec<(&String, &Tensor)> = tensors.iter().collect();
        named.sort_by(|a, b| a.0.cmp(b.0));
        safetensors::serialize(named, None)
            .map_err(|e| Error::Candle(candle_core::Error::Msg(e.to_string())))
    }

    /// Builds a state from export-format tensors, checking them against the model's
    /// `num_layers` layers of `kv_heads` heads of width `head_dim`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the tensor when a layer is missing, a shape does not
    /// match the model, or the offset exceeds the cache.
    pub fn from_tensors(
        tensors: &HashMap<String, Tensor>,
        num_layers: usize,
        kv_heads: usize,
        head_dim: usize,
        origin: &str,
        device: &Device,
    ) -> Result<Self> {
        let bad = |m: String| Error::InvalidData(format!("voice state {origin}: {m}"));
        let mut caches = Vec::with_capacity(num_layers);
        for i in 0..num_layers {
            let p = layer_prefix(i);
            let cache = tensors.get(&format!("{p}/cache")).ok_or_else(|| {
                bad(format!(
                    "missing tensor {p}/cache: this is not a voice state exported for this model"
                ))
            })?;
            let dims = cache.dims().to_vec();
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
                let v = o
                    .to_dtype(DType::I64)?
                    .flatten_all()?
                    .to_vec1::<i64>()?
                    .first()
                    .copied()
                    .ok_or_else(|| bad(format!("tensor {p}/offset is empty")))?;
                usize::try_from(v)
                    .map_err(|_| bad(format!("tensor {p}/offset is negative ({v})")))?
            } else if let Some(ce) = tensors.get(&format!("{p}/current_end")) {
                ce.dims().first().copied().unwrap_or(0)
            } else {
                return Err(bad(format!("missing tensor {p}/offset")));
            };
            if let Some(pad) = tensors.get(&format!("{p}/pad")) {
                let any_pad = pad
                    .to_dtype(DType::I64)?
                    .flatten_all()?
                    .to_vec1::<i64>()?
                    .iter()
                    .any(|&x| x != 0);
                if any_pad {
                    return Err(Error::Unsupported(format!(
                        "voice state {origin}: {p}/pad is non-zero (batched padding is not supported)"
                    )));
                }
            }
            if offset > dims[2] {
                return Err(bad(format!(
                    "{p}/offset {offset} exceeds the cache length {}",
                    dims[2]
                )));
            }
            let cache = cache.to_dtype(DType::F32)?.to_device(device)?;
            let used = cache
                .narrow(2, 0, offset)?
                .flatten_all()?
                .to_vec1::<f32>()?;
            if let Some(i) = used.iter().position(|x| !x.is_finite()) {
                return Err(bad(format!(
                    "tensor {p}/cache holds a non-finite value (NaN or infinity) at flat index \
                     {i} of its first {offset} positions: the file is corrupt; export the voice again"
                )));
            }
            let k = cache.get(0)?.narrow(1, 0, offset)?.transpose(1, 2)?;
            let v = cache.get(1)?.narrow(1, 0, offset)?.transpose(1, 2)?;
            caches.push(KvCache::from_kv(&k, &v, offset, offset)?);
        }
        let offsets: Vec<usize> = caches.iter().map(|c| c.offset()).collect();
        if offsets.windows(2).any(|w| w[0] != w[1]) {
            return Err(bad(format!("layers disagree on the offset: {offsets:?}")));
        }
        Ok(Self {
            state: TransformerState { caches },
        })
    }

    /// Parses a voice state file held in memory (see [`Self::load`]); `origin` names it in
    /// messages.
    ///
    /// # Errors
    /// [`Error::InvalidData`] for bytes that are not safetensors or do not fit the model (see
    /// [`Self::from_tensors`]).
    pub fn from_safetensors_bytes(
        bytes: &[u8],
        num_layers: usize,
        kv_heads: usize,
        head_dim: usize,
        origin: &str,
        device: &Device,
    ) -> Result<Self> {
        let tensors = candle_core::safetensors::load_buffer(bytes, device).map_err(|e| {
            Error::InvalidData(format!(
                "voice state {origin} is not a readable safetensors file: {e}"
            ))
        })?;
        Self::from_tensors(&tensors, num_layers, kv_heads, head_dim, origin, device)
    }

    /// Loads a voice state file.
    ///
    /// # Errors
    /// [`Error::NotFound`] for a missing file, [`Error::InvalidData`] for a file that is
    /// not safetensors or does not fit the model (see [`Self::from_tensors`]).
    pub fn load(
        path: &Path,
        num_layers: usize,
        kv_heads: usize,
        head_dim: usize,
        device: &Device,
    ) -> Result<Self> {
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
        Self::from_safetensors_bytes(&bytes, num_layers, kv_heads, head_dim, &origin, device)
    }
}
