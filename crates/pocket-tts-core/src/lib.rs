//! Pure-Candle port of Kyutai's Pocket TTS (reference: `pocket-tts` 4.0.1 on PyPI).
//!
//! Module names mirror the reference package so the two can be read side by side.

pub mod error;

pub use error::{Error, Result};
