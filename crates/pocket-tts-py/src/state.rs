//! [`NativeState`]: a voice state, what the reference's `get_state_for_audio_prompt`
//! returns (its `ModelState`, a dict of KV caches) and `generate_audio` reads.

use std::path::PathBuf;
use std::sync::Arc;

use pocket_tts_core::VoiceState;
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// A voice: the FlowLM's KV caches after the voice prompt (per layer, keys and values
/// `[kv_heads, positions, head_dim]` `float32`). Immutable and shared: every generation
/// reads it, none changes it, so one state serves any number of threads at once.
#[pyclass(module = "pocket_tts_rs._native", frozen)]
pub struct NativeState {
    /// The state, shared with the generations using it.
    pub inner: Arc<VoiceState>,
}

#[pymethods]
impl NativeState {
    /// Prompt length in positions (the voice prompt's latent frames at 12.5 Hz, plus
    /// the BOS position when the model inserts one).
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// Attention layers.
    #[getter]
    fn num_layers(&self) -> usize {
        self.inner.layers().len()
    }

    /// Key/value heads per layer.
    #[getter]
    fn kv_heads(&self) -> usize {
        self.inner.kv_heads()
    }

    /// Width of a head.
    #[getter]
    fn head_dim(&self) -> usize {
        self.inner.head_dim()
    }

    /// Writes the state in the reference's `export_model_state` format (safetensors:
    /// `transformer.layers.N.self_attn/cache` `[2, 1, T, H, D]` and `/offset`); a regular
    /// file is replaced atomically. Raises `OSError` (naming the path) when it cannot be
    /// written.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let state = Arc::clone(&self.inner);
        py.detach(move || state.save(&path)).py_err()
    }

    fn __repr__(&self) -> String {
        format!(
            "ModelState(positions={}, layers={}, kv_heads={}, head_dim={})",
            self.inner.len(),
            self.inner.layers().len(),
            self.inner.kv_heads(),
            self.inner.head_dim()
        )
    }
}
