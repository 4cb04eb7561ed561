//! Pure-Candle port of Kyutai's Pocket TTS (reference: `pocket-tts` 4.0.1 on PyPI).
//!
//! Module names mirror the reference package so the two can be read side by side. The text
//! pipeline (tokenizer, chunking, pause markup, normalization) is the `pocket-tts-text`
//! crate, which this one uses.

#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod audio;
pub mod config;
pub mod error;
pub mod fast;
pub mod hub;
pub mod models;
pub mod modules;
pub mod output;
pub mod runtime;
pub mod tts_model;
pub mod weights;

pub use error::{Error, Result};
pub use models::model_state::VoiceState;
pub use runtime::Backend;
pub use tts_model::{
    AudioFrame, AudioStream, Engine, EngineOptions, GenerationParams, GenerationStats, LoadOptions,
    StreamCanceller, StreamHandle, StreamStats, TtsModel,
};

/// The README's Rust examples, compiled as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
