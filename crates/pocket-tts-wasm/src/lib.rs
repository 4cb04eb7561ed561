//! Pocket TTS in the browser: the pocket-tts-rs core compiled to WebAssembly, driven from
//! JavaScript through `wasm-bindgen` (the page and its workers are `web/`, built by
//! `scripts/wasm/build.sh`).
//!
//! * [`Model`]: loaded from the bytes of a checkpoint, a tokenizer and (optionally) a
//!   config (reference: `TTSModel.load_model`), `f32` or int8 FlowLM linears computed at
//!   load (`quantize`).
//! * [`Voice`]: a voice state from an audio file's bytes (voice cloning: decoded,
//!   resampled to 24 kHz and encoded by Mimi here) or from a `.safetensors` voice state
//!   (reference: `get_state_for_audio_prompt`, `export_model_state`).
//! * [`Generation`]: one text being spoken, pulled frame by frame
//!   ([`Generation::next_frame`]: 1920 samples, 80 ms at 24 kHz), so that the caller
//!   (a Web Worker) can return to its event loop between frames, post each frame, and
//!   stop ([`Generation::cancel`]) when asked (reference: `generate_audio_stream`).
//!
//! * The same in two Web Workers ([`FlowLmModel`] and [`MimiModel`], each from its part of
//!   the checkpoint): one runs the FlowLM and posts each frame's latent
//!   ([`Generation::next_latent`], [`LatentFrame`]: 32 values per 80 ms) to the other,
//!   whose [`MimiDecoder`] turns it into samples, so that two cores work without wasm
//!   threads; the page `web/` does this. Voice prompts are encoded by Mimi
//!   ([`MimiModel::voice_latents`]) and prompted into the FlowLM
//!   ([`FlowLmModel::voice_from_latents`]).
//!
//! Everything runs on the calling thread (a browser has no threads without
//! cross-origin isolation): the model is built with one thread, and Mimi decodes each
//! frame right after the FlowLM step that made it. Errors reach JavaScript as `Error`s
//! whose message is one line naming the file or field at fault.

mod error;
mod generation;
mod model;
mod split;

pub use generation::{Generation, LatentFrame};
pub use model::{Model, Voice};
pub use split::{FlowLmModel, MimiDecoder, MimiModel, VoiceLatents};
