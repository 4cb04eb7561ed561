//! [`NativeState`]: a voice state, what the reference's `get_state_for_audio_prompt`
//! returns (its `ModelState`, a dict of KV caches) and `generate_audio` reads.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pocket_tts_core::VoiceState;
use pyo3::prelude::*;

use crate::errors::IntoPy;

/// A voice: the FlowLM's KV caches after the voice prompt (per layer, keys and values
/// `[kv_heads, positions, head_dim]` `float32`). Shared: every generation reads the state
/// it finds when it starts, so one state serves any number of threads at once. Only a
/// generation with `copy_state=False` replaces it, when it has run to its end, by the
/// state it left (as the reference's changes its `model_state` in place).
#[pyclass(module = "pocket_tts_rs._native", frozen)]
pub struct NativeState {
    cell: Arc<Mutex<Arc<VoiceState>>>,
}

impl NativeState {
    /// A state holding `state`.
    pub fn new(state: VoiceState) -> Self {
        Self {
            cell: Arc::new(Mutex::new(Arc::new(state))),
        }
    }

    /// The state now (a generation keeps this one, whatever replaces it later).
    pub fn get(&self) -> Arc<VoiceState> {
        Arc::clone(&self.cell.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Where a generation with `copy_state=False` puts the state it leaves.
    pub fn cell(&self) -> Arc<Mutex<Arc<VoiceState>>> {
        Arc::clone(&self.cell)
    }
}

#[pymethods]
impl NativeState {
    /// Prompt length in positions (the voice prompt's latent frames at 12.5 Hz, plus
    /// the BOS position when the model inserts one).
    fn __len__(&self) -> usize {
        self.get().len()
    }

    /// Attention layers.
    #[getter]
    fn num_layers(&self) -> usize {
        self.get().layers().len()
    }

    /// Key/value heads per layer.
    #[getter]
    fn kv_heads(&self) -> usize {
        self.get().kv_heads()
    }

    /// Width of a head.
    #[getter]
    fn head_dim(&self) -> usize {
        self.get().head_dim()
    }

    /// Writes the state in the reference's `export_model_state` format (safetensors:
    /// `transformer.layers.N.self_attn/cache` `[2, 1, T, H, D]` and `/offset`); a regular
    /// file is replaced atomically. Raises `OSError` (naming the path) when it cannot be
    /// written.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let state = self.get();
        py.detach(move || state.save(&path)).py_err()
    }

    fn __repr__(&self) -> String {
        let state = self.get();
        format!(
            "ModelState(positions={}, layers={}, kv_heads={}, head_dim={})",
            state.len(),
            state.layers().len(),
            state.kv_heads(),
            state.head_dim()
        )
    }
}
