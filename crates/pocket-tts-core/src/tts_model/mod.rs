//! The text-to-speech pipeline: tokenizer, FlowLM and Mimi put together, voices, text
//! chunking, sampling and EOS, and streaming generation with its decoder thread
//! (reference: `models/tts_model.py`, `TTSModel`).
//!
//! - [`loading`](self): resolving the config's files and loading the checkpoint;
//! - `voices`: predefined voices, voice states and voice cloning;
//! - `params`: [`GenerationParams`] and the reference's sizing constants;
//! - `plan`: the text turned into chunks (tokens, frame budgets) and pauses, with the
//!   opt-in normalization and pause markup;
//! - `sampling`: frame budgets, noise, the EOS rule;
//! - `stream`: [`AudioStream`], the generation loop;
//! - `decoder`: the Mimi decoder (inline or on its own thread);
//! - `engine`: [`Engine`], many generations at once (continuous batching).
//!
//! The model's computation runs on a [`crate::internals::runtime`] ([`Backend`]); this module sees
//! only its traits, and every per-frame value is an `f32` slice.

mod builder;
mod codec;
mod decoder;
mod engine;
mod loading;
mod params;
mod plan;
mod sampling;
mod stream;
mod voices;

use std::sync::{Arc, OnceLock};

use candle_core::Device;

pub use crate::config::Quantization;
pub use crate::weights::prequantized::ExportSummary;
pub use builder::TtsModelBuilder;
pub use codec::{LatentDecoder, MimiCodec};
/// Thread names, for tests that count threads (not part of the API).
#[doc(hidden)]
pub use decoder::DECODER_THREAD_NAME;
/// Thread names, for tests that count threads (not part of the API).
#[doc(hidden)]
pub use engine::ENGINE_THREAD_NAME;
pub use engine::{Engine, EngineOptions, StreamCanceller, StreamHandle, StreamStats};
pub use loading::{LoadOptions, ModelFiles};
pub use params::{
    GenerationParams, GEN_SECONDS_PADDING, MAX_TEMPERATURE, MAX_TOKENS_PER_CHUNK,
    MIN_FRAMES_BEFORE_EOS, TOKENS_PER_SECOND_ESTIMATE,
};
pub use stream::{AudioFrame, AudioStream, GenerationStats};
pub use voices::{Latents, MAX_VOICE_PROMPT_SECONDS, PREDEFINED_VOICES};

use crate::config::Config;
use crate::models::flow_lm::FlowLm;
use crate::models::mimi::{Mimi, MimiSource};
use crate::runtime::{self, Backend, Runtime};
use crate::{Error, Result};
use pocket_tts_text::chunking::TextOptions;
use pocket_tts_text::tokenizer::Tokenizer;

/// Pocket TTS: tokenizer, FlowLM and Mimi, and the runtime that executes them.
///
/// Load it with [`TtsModel::builder`] (a built-in language or a config, files resolved
/// locally or through the hub); get a voice with [`TtsModel::voice_state`]; generate with
/// [`TtsModel::generate_stream`] or [`TtsModel::generate`].
#[derive(Debug)]
pub struct TtsModel {
    config: Config,
    flow_lm: FlowLm,
    /// The Candle Mimi, loaded from `mimi_source` when first asked for ([`Self::mimi`],
    /// the Candle backend): the CPU runtime holds only its repacked copy.
    mimi: OnceLock<Arc<Mimi>>,
    mimi_source: MimiSource,
    tokenizer: Tokenizer,
    text_options: TextOptions,
    /// Built-in language the config came from (enables predefined voices).
    language: Option<String>,
    has_voice_cloning: bool,
    /// `hf://` files (predefined voices, voice states) may be downloaded
    /// ([`TtsModelBuilder::download`]).
    download: bool,
    device: Device,
    /// Generation threads: 1 sequential, 2 or more FlowLM and Mimi decoder overlapped.
    threads: usize,
    /// What executes the model ([`Backend::Cpu`] unless set).
    runtime: Box<dyn Runtime>,
    /// How the weights were loaded.
    options: LoadOptions,
}

impl TtsModel {
    /// The config the model was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The FlowLM (Candle modules: the model definition). For this crate's tests and
    /// benchmarks ([`crate::internals`]).
    #[doc(hidden)]
    pub fn flow_lm(&self) -> &FlowLm {
        &self.flow_lm
    }

    /// Mimi (Candle modules: the model definition). The CPU runtime does not keep these
    /// tensors (it repacks what it needs), so the first call loads them again from the
    /// checkpoint (about 80 MB at full size, held from then on).
    ///
    /// # Errors
    /// [`Error::InvalidData`] if the checkpoint can no longer be read.
    #[doc(hidden)]
    pub fn mimi(&self) -> Result<&Mimi> {
        Ok(self.mimi_arc()?.as_ref())
    }

    fn mimi_arc(&self) -> Result<&Arc<Mimi>> {
        if let Some(m) = self.mimi.get() {
            return Ok(m);
        }
        let m = self
            .mimi_source
            .load()
            .map_err(|e| Error::InvalidData(format!("loading Mimi again: {e}")))?;
        let _ = self.mimi.set(Arc::new(m));
        self.mimi
            .get()
            .ok_or_else(|| Error::Internal("Mimi was not kept".into()))
    }

    /// How the weights were loaded (e.g. [`LoadOptions::quantize`]).
    pub fn load_options(&self) -> LoadOptions {
        self.options
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Text preparation options from the config.
    pub fn text_options(&self) -> &TextOptions {
        &self.text_options
    }

    /// The built-in language the model was loaded for (predefined voices need one).
    pub fn language(&self) -> Option<&str> {
        self.language.as_deref()
    }

    /// Audio sample rate in Hz.
    pub fn sample_rate(&self) -> usize {
        self.config.mimi.sample_rate
    }

    /// The device tensors live on (the CPU).
    #[doc(hidden)]
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The runtime executing the model.
    pub fn backend(&self) -> Backend {
        self.runtime.backend()
    }

    /// Switches the runtime for the generations and voices made afterwards (the weights
    /// are shared, not copied).
    ///
    /// # Errors
    /// The runtime's construction errors.
    pub fn set_backend(&mut self, backend: Backend) -> Result<()> {
        if backend != self.runtime.backend() {
            if self.options.without_mimi {
                return Err(Error::Unsupported(format!(
                    "the {backend} runtime needs Mimi, and this model was loaded without it \
                     (LoadOptions::without_mimi)"
                )));
            }
            let mimi =
                runtime::prepare_mimi(backend, &self.mimi_source, || self.mimi_arc().cloned())?;
            let mut rt = runtime::build(Some(mimi), &self.flow_lm)?;
            rt.set_threads(self.threads)?;
            self.runtime = rt;
        }
        Ok(())
    }

    /// [`Self::set_backend`], builder style.
    ///
    /// # Errors
    /// See [`Self::set_backend`].
    pub fn with_backend(mut self, backend: Backend) -> Result<Self> {
        self.set_backend(backend)?;
        Ok(self)
    }

    /// Threads a generation uses ([`default_threads`] unless set): 1 runs the FlowLM and
    /// the Mimi decoder one after the other on the thread that iterates the
    /// [`AudioStream`]; 2 or more runs the decoder on a thread of its own, overlapped with
    /// the FlowLM (there are two stages, so more than 2 is the same as 2). The text
    /// prefill, the first FlowLM step and the first Mimi frame of a stream use up to 2
    /// threads, and voice prompts are encoded on this many threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets [`Self::threads`] for the generations started afterwards.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for 0.
    pub fn set_threads(&mut self, threads: usize) -> Result<()> {
        if threads == 0 {
            return Err(Error::invalid_field("threads", "must be at least 1"));
        }
        self.threads = threads;
        self.runtime.set_threads(threads)
    }

    /// [`Self::set_threads`], builder style.
    ///
    /// # Errors
    /// See [`Self::set_threads`].
    pub fn with_threads(mut self, threads: usize) -> Result<Self> {
        self.set_threads(threads)?;
        Ok(self)
    }

    /// Whether the Mimi encoder that an audio voice prompt needs is kept for the next
    /// prompt (`true`, the default: it is built on the first prompt, its repacked weights
    /// about 37 MiB at full size) or built for each prompt and freed as soon as the
    /// prompt is encoded, before the FlowLM reads it (`false`; frees one already kept).
    /// `false` suits a caller with one audio prompt, such as the CLI's `generate`: its
    /// peak memory is lower; each later audio prompt then reads the encoder's weights
    /// again, with the same results. Voice states and predefined voices never need the
    /// encoder. The CPU backend only: the Candle backend keeps its Mimi whole.
    pub fn set_keep_voice_encoder(&mut self, keep: bool) {
        self.runtime.set_keep_voice_encoder(keep);
    }

    /// False when the model was loaded without voice cloning.
    pub fn has_voice_cloning(&self) -> bool {
        self.has_voice_cloning
    }
}

/// Generation threads used when none are asked for: two (the FlowLM and the Mimi decoder
/// overlapped, as the reference does), or one on a machine with a single hardware thread.
///
/// [`std::thread::available_parallelism`] counts hardware threads (logical CPUs, within
/// the process's CPU affinity and cgroup quota), so on a machine with simultaneous
/// multithreading this can exceed the physical cores it stands for.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

#[cfg(test)]
mod tests;
