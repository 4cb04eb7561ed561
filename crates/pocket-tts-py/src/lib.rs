//! `pocket_tts_rs._native`: the compiled half of the `pocket_tts_rs` Python package.
//!
//! The package's public API (`pocket_tts_rs.TTSModel`, `export_model_state`) is Python code
//! in `python/pocket_tts_rs/` that mirrors the reference's `pocket_tts` 4.0.1
//! (`models/tts_model.py`); it calls the classes here, which hold the Rust model:
//!
//! - `model::NativeModel`: a loaded [`pocket_tts_core::TtsModel`], its voices and its
//!   generations (one directly on the model, concurrent ones batched by an
//!   [`pocket_tts_core::Engine`]);
//! - `state::NativeState`: a voice state (the reference's `ModelState`);
//! - `stream::NativeStream`: the frames of one generation, as 1-D `float32` numpy arrays.
//!
//! Every call that computes releases the GIL. Errors become the Python exceptions the
//! reference documents (`errors.rs`); the core's log records go to Python's `logging`
//! (`logging.rs`).

use pyo3::prelude::*;

mod errors;
mod logging;
mod model;
mod state;
mod stream;

/// The extension module `pocket_tts_rs._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install(m.py())?;
    m.add_class::<model::NativeModel>()?;
    m.add_class::<state::NativeState>()?;
    m.add_class::<stream::NativeStream>()?;
    let languages: Vec<&str> = pocket_tts_core::config::BUILTIN_CONFIGS
        .iter()
        .map(|(name, _)| *name)
        .collect();
    m.add("LANGUAGES", languages)?;
    m.add(
        "PREDEFINED_VOICES",
        pocket_tts_core::tts_model::PREDEFINED_VOICES.to_vec(),
    )?;
    Ok(())
}
