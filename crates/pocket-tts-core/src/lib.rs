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
pub(crate) mod fast;
pub mod hub;
pub mod memory;
pub(crate) mod models;
pub(crate) mod modules;
pub mod output;
pub(crate) mod runtime;
pub(crate) mod torch_rng;
pub mod tts_model;
pub(crate) mod weights;

/// The crate's insides, for its own tests and benchmarks (and the fuzz targets): the Candle
/// model definition, the CPU runtime's buffers and kernels, checkpoint helpers. Not part of
/// the API: no stability promise, and nothing here is needed to use the library.
#[doc(hidden)]
pub mod internals {
    /// The CPU runtime: allocation-free FlowLM and Mimi on plain buffers.
    pub mod fast {
        pub use crate::fast::*;
    }
    /// The Candle model definition: FlowLM, Mimi, voice states.
    pub mod models {
        pub use crate::models::*;
    }
    /// The Candle modules: attention, transformer, SEANet, convolutions, linears, views.
    pub mod modules {
        pub use crate::modules::*;
    }
    /// The runtime traits' public side.
    pub mod runtime {
        pub use crate::runtime::*;
    }
    /// torch's default CPU generator and its float32 normal and truncated normal draws.
    pub mod torch_rng {
        pub use crate::torch_rng::*;
    }
    /// Checkpoints: memory-mapped safetensors, random weights.
    pub mod weights {
        pub use crate::weights::*;
    }
}

pub use error::{Error, Result};
pub use models::model_state::{LayerKv, VoiceState};
pub use runtime::Backend;
pub use torch_rng::TorchRngState;
pub use tts_model::{
    AudioFrame, AudioStream, Engine, EngineOptions, GenerationParams, GenerationStats,
    LatentDecoder, Latents, LoadOptions, MimiCodec, Quantization, StreamCanceller, StreamHandle,
    StreamStats, TtsModel, TtsModelBuilder,
};

/// The README's Rust examples, compiled as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
