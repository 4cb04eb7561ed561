//! The text-to-speech model: FlowLM + Mimi + tokenizer, voice prompting and streaming
//! generation (reference: `models/tts_model.py`, `TTSModel`).

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

use crate::audio;
use crate::config::Config;
use crate::fast::flow_lm::{FlowLmFast, FlowLmFastState};
use crate::fast::mimi::{MimiDecoderFast, MimiDecoderFastState, MimiEncoderFast};
use crate::hub;
use crate::models::flow_lm::{FlowLm, FlowLmStep};
use crate::models::mimi::Mimi;
use crate::models::model_state::VoiceState;
use crate::text_chunking::{prepare_text_prompt, split_into_best_sentences, TextOptions};
use crate::tokenizer::Tokenizer;
use crate::weights::Checkpoint;
use crate::{Error, Result};

/// Tokens per second of speech assumed when sizing a generation (reference:
/// `TTSModel._TOKENS_PER_SECOND_ESTIMATE`).
pub const TOKENS_PER_SECOND_ESTIMATE: f64 = 3.0;
/// Seconds added to the estimate (reference: `_GEN_SECONDS_PADDING`).
pub const GEN_SECONDS_PADDING: f64 = 2.0;
/// EOS is ignored on the first frames (reference: `_MIN_FRAMES_BEFORE_EOS`).
pub const MIN_FRAMES_BEFORE_EOS: usize = 6;
/// Default maximum tokens per text chunk (reference: `MAX_TOKEN_PER_CHUNK`).
pub const MAX_TOKENS_PER_CHUNK: usize = 50;
/// Voice prompts are cut to this many seconds when truncation is asked for
/// (reference: `get_state_for_audio_prompt(truncate=True)`).
pub const MAX_VOICE_PROMPT_SECONDS: usize = 30;
/// Revision of the predefined voice embeddings (reference: `utils.get_predefined_voice`).
const PREDEFINED_VOICES_REVISION: &str = "a7056f505a4a8ca72d8b5fb1440071d6f1a35739";

/// Names of the predefined voices (reference: `_ORIGINS_OF_PREDEFINED_VOICES`).
pub const PREDEFINED_VOICES: &[&str] = &[
    "cosette",
    "marius",
    "javert",
    "alba",
    "jean",
    "anna",
    "vera",
    "fantine",
    "charles",
    "paul",
    "eponine",
    "azelma",
    "george",
    "mary",
    "jane",
    "michael",
    "eve",
    "bill_boerst",
    "peter_yearsley",
    "stuart_bell",
    "caro_davy",
    "giovanni",
    "lola",
    "juergen",
    "rafael",
    "daan",
    "estelle",
];

/// Sampling and stopping parameters of a generation (the reference's `generate` flags).
#[derive(Debug, Clone, PartialEq)]
pub struct GenerationParams {
    /// Noise variance of the flow sampler; 0 is deterministic.
    pub temperature: f32,
    /// Flow-head decode steps per frame (LSD: 1).
    pub sampler_decode_steps: usize,
    /// Truncate the noise to `[-clamp, clamp]`.
    pub noise_clamp: Option<f32>,
    /// A frame whose EOS logit exceeds this marks the end of speech.
    pub eos_threshold: f32,
    /// Frames generated after EOS; guessed from the text length when `None`.
    pub frames_after_eos: Option<usize>,
    /// Maximum tokens per text chunk.
    pub max_tokens: usize,
    /// Seed of the sampling noise; random when `None`.
    pub seed: Option<u64>,
}

impl GenerationParams {
    /// The config's defaults (`default_temperature`, `default_eos_threshold`, …).
    pub fn for_config(config: &Config) -> Self {
        Self {
            temperature: config.default_temperature,
            sampler_decode_steps: 1,
            noise_clamp: None,
            eos_threshold: config.default_eos_threshold,
            frames_after_eos: None,
            max_tokens: MAX_TOKENS_PER_CHUNK,
            seed: None,
        }
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the parameter (as its command-line flag).
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidArgument(m.to_string()));
        if !self.temperature.is_finite() || self.temperature < 0.0 {
            return bad("--temperature must be a finite number >= 0");
        }
        if self.temperature > MAX_TEMPERATURE {
            return Err(Error::InvalidArgument(format!(
                "--temperature {} is above {MAX_TEMPERATURE}: the sampling noise's standard \
                 deviation is its square root, so the output would be noise; the models' \
                 defaults are below 1",
                self.temperature
            )));
        }
        if self.sampler_decode_steps == 0 {
            return bad("--sampler-decode-steps must be at least 1");
        }
        if let Some(c) = self.noise_clamp {
            if !c.is_finite() || c <= 0.0 {
                return bad("--noise-clamp must be a finite number > 0");
            }
        }
        if self.eos_threshold.is_nan() {
            return bad("--eos-threshold must be a number");
        }
        if self.max_tokens == 0 {
            return bad("--max-tokens must be at least 1");
        }
        Ok(())
    }
}

/// The highest sampling temperature [`GenerationParams::validate`] accepts. The noise's
/// standard deviation is the square root of the temperature; far above the models' defaults
/// (0.3 to 0.7) the output is only noise.
pub const MAX_TEMPERATURE: f32 = 10.0;

/// Where the model's files came from.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// The checkpoint.
    pub weights: PathBuf,
    /// The tokenizer.
    pub tokenizer: PathBuf,
    /// False when the gated voice-cloning checkpoint was refused and the fallback used.
    pub has_voice_cloning: bool,
}

/// Pocket TTS: tokenizer, FlowLM and Mimi.
#[derive(Debug)]
pub struct TtsModel {
    /// The config the model was built from.
    pub config: Config,
    /// FlowLM.
    pub flow_lm: FlowLm,
    /// Mimi (shared with the decoder thread of a generation).
    pub mimi: Arc<Mimi>,
    /// Tokenizer.
    pub tokenizer: Tokenizer,
    /// Text preparation options from the config.
    pub text_options: TextOptions,
    /// Built-in language the config came from (enables predefined voices).
    pub language: Option<String>,
    pub(crate) has_voice_cloning: bool,
    pub(crate) device: Device,
    /// Generation threads: 1 sequential, 2 or more FlowLM and Mimi decoder overlapped.
    pub(crate) threads: usize,
    /// Allocation-free runtimes over the same weights, used for generation and voices.
    pub(crate) fast: FastRuntimes,
}

/// The allocation-free runtimes of [`crate::fast`], built once over the model's weights.
pub(crate) struct FastRuntimes {
    pub(crate) flow_lm: FlowLmFast,
    pub(crate) decoder: Arc<MimiDecoderFast>,
    pub(crate) encoder: MimiEncoderFast,
}

impl std::fmt::Debug for FastRuntimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FastRuntimes")
    }
}

impl FastRuntimes {
    fn new(flow_lm: &FlowLm, mimi: &Mimi) -> Result<Self> {
        // Voice encoding runs alone, so it may use both cores.
        let encoder_threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        Ok(Self {
            flow_lm: FlowLmFast::new(flow_lm)?,
            decoder: Arc::new({
                // The stream's first frame is decoded while the FlowLM waits for it
                // (`AudioStream::next_overlapped`), so it may use both cores.
                let mut d = MimiDecoderFast::new(mimi)?;
                d.set_wide_threads(encoder_threads)?;
                d
            }),
            encoder: MimiEncoderFast::new(mimi, encoder_threads)?,
        })
    }
}

fn text_options(config: &Config) -> Result<TextOptions> {
    let mut replace = Vec::new();
    for (k, v) in &config.replace_characters {
        let mut chars = k.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => replace.push((c, v.clone())),
            _ => {
                return Err(Error::InvalidData(format!(
                    "config replace_characters: key {k:?} must be exactly one character"
                )))
            }
        }
    }
    Ok(TextOptions {
        pad_with_spaces_for_short_inputs: config.pad_with_spaces_for_short_inputs,
        remove_semicolons: config.remove_semicolons,
        append_terminal_punctuation: config.append_terminal_punctuation,
        capitalize_first_letter: config.capitalize_first_letter,
        replace_characters: replace,
    })
}

impl TtsModel {
    /// Resolves the config's files (`hf://` through the hub, relative paths against
    /// `config_dir`) and loads the model. Like the reference, `weights_path` falls back
    /// to `weights_path_without_voice_cloning` when the gated repository is refused.
    ///
    /// # Errors
    /// [`Error::NotFound`] when a file cannot be found or downloaded,
    /// [`Error::Unsupported`] for configs that split the weights (`flow_lm.weights_path`,
    /// `mimi.weights_path`), and the errors of [`TtsModel::from_files`].
    pub fn load(
        config: Config,
        config_dir: Option<&Path>,
        language: Option<String>,
    ) -> Result<Self> {
        let files = Self::resolve_files(&config, config_dir)?;
        let mut model = Self::from_files(config, &files.weights, &files.tokenizer)?;
        model.has_voice_cloning = files.has_voice_cloning;
        model.language = language;
        Ok(model)
    }

    /// Resolves (downloading if needed) the weights and tokenizer a config names.
    ///
    /// # Errors
    /// See [`TtsModel::load`].
    pub fn resolve_files(config: &Config, config_dir: Option<&Path>) -> Result<ModelFiles> {
        if config.flow_lm.weights_path.is_some() || config.mimi.weights_path.is_some() {
            return Err(Error::Unsupported(
                "configs with separate flow_lm.weights_path / mimi.weights_path (training layouts) \
                 are not supported yet: export a whole-model checkpoint and set weights_path"
                    .into(),
            ));
        }
        let Some(weights_spec) = &config.weights_path else {
            return Err(Error::InvalidArgument(
                "the config has no weights_path: set it to a local .safetensors file or an hf:// location"
                    .into(),
            ));
        };
        let in_field = |field: &str, spec: &str, e: Error| match e {
            Error::NotFound(m) => Error::NotFound(format!(
                "{field} {spec}: {m} (relative paths are resolved against the config's folder)"
            )),
            other => other,
        };
        let (weights, has_voice_cloning) = match hub::resolve(weights_spec, config_dir)
            .map_err(|e| in_field("weights_path", weights_spec, e))
        {
            Ok(p) => (p, true),
            Err(first) => match &config.weights_path_without_voice_cloning {
                Some(fallback) => {
                    tracing::warn!(
                        "could not get {weights_spec} ({first}); using the model without voice cloning"
                    );
                    let p = hub::resolve(fallback, config_dir)
                        .map_err(|e| in_field("weights_path_without_voice_cloning", fallback, e))?;
                    (p, false)
                }
                None => return Err(first),
            },
        };
        let tok_spec = &config.flow_lm.lookup_table.tokenizer_path;
        let tokenizer = hub::resolve(tok_spec, config_dir)
            .map_err(|e| in_field("flow_lm.lookup_table.tokenizer_path", tok_spec, e))?;
        Ok(ModelFiles {
            weights,
            tokenizer,
            has_voice_cloning,
        })
    }

    /// Loads the model from a local checkpoint and tokenizer.
    ///
    /// # Errors
    /// [`Error::NotFound`] for missing files, [`Error::InvalidData`] for a checkpoint that
    /// does not match the config (naming every missing, extra or mis-shaped tensor) or a
    /// tokenizer whose vocabulary differs from `n_bins`.
    pub fn from_files(config: Config, weights: &Path, tokenizer_path: &Path) -> Result<Self> {
        let device = Device::Cpu;
        let lt = &config.flow_lm.lookup_table;
        let tokenizer = Tokenizer::from_file(tokenizer_path, &lt.tokenizer, lt.n_bins)?;
        let ckpt = Checkpoint::open(weights)?;
        let vb = ckpt.var_builder(DType::F32, &device);
        let built = (|| -> candle_core::Result<(FlowLm, Mimi)> {
            let flow_lm = FlowLm::new(
                &config.flow_lm,
                config.latent_dim(),
                config.speaker_dim(),
                vb.pp("flow_lm"),
            )?;
            let mimi = Mimi::new(&config.mimi, vb.pp("mimi"))?;
            Ok((flow_lm, mimi))
        })();
        // Shape and name problems are reported first: they explain most build failures.
        ckpt.finish(&["flow_lm.", "mimi."])?;
        let (flow_lm, mimi) = built
            .map_err(|e| Error::InvalidData(format!("checkpoint {}: {e}", weights.display())))?;
        Self::assemble(config, flow_lm, mimi, tokenizer, device)
    }

    /// A model with the config's architecture and seeded random weights
    /// ([`crate::weights::random_var_builder`]): for benchmarks and tests without the
    /// released weights. The tokenizer is still a real file.
    ///
    /// # Errors
    /// The tokenizer's errors, and [`Error::InvalidData`] if the config cannot be built.
    pub fn random(config: Config, seed: u64, tokenizer_path: &Path) -> Result<Self> {
        let device = Device::Cpu;
        let lt = &config.flow_lm.lookup_table;
        let tokenizer = Tokenizer::from_file(tokenizer_path, &lt.tokenizer, lt.n_bins)?;
        let vb = crate::weights::random_var_builder(seed, &device);
        let flow_lm = FlowLm::new(
            &config.flow_lm,
            config.latent_dim(),
            config.speaker_dim(),
            vb.pp("flow_lm"),
        )
        .map_err(|e| Error::InvalidData(format!("random model: {e}")))?;
        let mimi = Mimi::new(&config.mimi, vb.pp("mimi"))
            .map_err(|e| Error::InvalidData(format!("random model: {e}")))?;
        Self::assemble(config, flow_lm, mimi, tokenizer, device)
    }

    /// Puts a model together from its built parts (and builds the fast runtimes).
    fn assemble(
        config: Config,
        flow_lm: FlowLm,
        mimi: Mimi,
        tokenizer: Tokenizer,
        device: Device,
    ) -> Result<Self> {
        let text_options = text_options(&config)?;
        let mut model = Self {
            config,
            fast: FastRuntimes::new(&flow_lm, &mimi)?,
            flow_lm,
            mimi: Arc::new(mimi),
            tokenizer,
            text_options,
            language: None,
            has_voice_cloning: true,
            device,
            threads: 1,
        };
        model.set_threads(default_threads())?;
        Ok(model)
    }

    /// Audio sample rate in Hz.
    pub fn sample_rate(&self) -> usize {
        self.config.mimi.sample_rate
    }

    /// The device tensors live on.
    pub fn device(&self) -> &Device {
        &self.device
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
            return Err(Error::InvalidArgument(
                "--threads must be at least 1".into(),
            ));
        }
        self.threads = threads;
        // The text prefill runs before the first frame, when the decoder thread is idle.
        self.fast.flow_lm.set_prefill_threads(threads.min(2));
        // Voice prompts are encoded while nothing else runs.
        self.fast.encoder.set_threads(threads)?;
        Ok(())
    }

    /// [`Self::set_threads`], builder style.
    ///
    /// # Errors
    /// See [`Self::set_threads`].
    pub fn with_threads(mut self, threads: usize) -> Result<Self> {
        self.set_threads(threads)?;
        Ok(self)
    }

    /// False when the model was loaded without voice cloning.
    pub fn has_voice_cloning(&self) -> bool {
        self.has_voice_cloning
    }

    /// Encodes a voice prompt (mono samples at [`Self::sample_rate`]) and runs it
    /// through the FlowLM. The prompt is first made to end on a pause
    /// ([`audio::end_on_pause`]). Reference: `get_state_for_audio_prompt`.
    ///
    /// # Errors
    /// [`Error::InvalidData`] for an empty prompt, [`Error::Unsupported`] when the model
    /// has no voice cloning.
    pub fn voice_state_from_samples(&self, samples: &[f32]) -> Result<VoiceState> {
        if !self.has_voice_cloning {
            return Err(Error::Unsupported(
                "this model was loaded without voice cloning (the gated checkpoint was refused): \
                 use a predefined voice or a .safetensors voice state"
                    .into(),
            ));
        }
        if samples.is_empty() {
            return Err(Error::InvalidData("the voice prompt has no samples".into()));
        }
        let prompt = audio::end_on_pause(samples, self.sample_rate() as u32);
        let latents = self.encode_audio(&prompt)?;
        self.voice_state_from_latents(&latents)
    }

    /// Mimi latents `[1, F, C]` of mono audio at the model rate (reference:
    /// `MimiModel.encode_to_latent`).
    pub fn encode_audio(&self, samples: &[f32]) -> Result<Tensor> {
        let latents = self.fast.encoder.encode(samples)?;
        let c = self.fast.encoder.latent_dim();
        let frames = latents.len() / c.max(1);
        Ok(Tensor::from_vec(latents, (1, frames, c), &self.device)?)
    }

    /// Prompts the FlowLM with Mimi latents `[1, F, C]` of a voice.
    pub fn voice_state_from_latents(&self, latents: &Tensor) -> Result<VoiceState> {
        let flat = latents.flatten_all()?.to_vec1::<f32>()?;
        let mut cond = Vec::new();
        self.fast.flow_lm.voice_conditioning(&flat, &mut cond)?;
        let t = cond.len() / self.flow_lm.dim();
        let mut state = self.fast.flow_lm.new_state(t);
        self.fast.flow_lm.prefill(&cond, t, &mut state)?;
        self.fast.flow_lm.export_voice(&state)
    }

    /// Loads a voice state exported by `export-voice` (ours or the reference's).
    ///
    /// # Errors
    /// See [`VoiceState::load`].
    pub fn load_voice_state(&self, path: &Path) -> Result<VoiceState> {
        let (kv_heads, head_dim) = self.flow_lm.transformer.cache_geometry();
        VoiceState::load(
            path,
            self.flow_lm.transformer.num_layers(),
            kv_heads,
            head_dim,
            &self.device,
        )
    }

    /// Resolves a `--voice` argument: a `.safetensors` voice state (local or `hf://`), a
    /// predefined voice name (downloaded from the hub, built-in language configs only),
    /// or an audio file (local or `hf://`; WAV, MP3, FLAC, OGG), resampled to the model
    /// rate. With `truncate`, audio is cut to 30 s (as `export-voice` does).
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::InvalidData`] or [`Error::Unsupported`] naming the voice.
    pub fn voice_state(&self, voice: &str, truncate: bool) -> Result<VoiceState> {
        let base = voice.split('@').next().unwrap_or(voice);
        if base.ends_with(".safetensors") {
            let path = hub::resolve(voice, None)?;
            return self.load_voice_state(&path);
        }
        if PREDEFINED_VOICES.contains(&voice) && !Path::new(voice).exists() {
            let Some(lang) = &self.language else {
                return Err(Error::InvalidArgument(format!(
                    "predefined voice {voice:?} needs a built-in language model (--language); \
                     with a custom config pass an audio file or a .safetensors voice state"
                )));
            };
            let spec = format!(
                "hf://kyutai/pocket-tts-without-voice-cloning/languages/{lang}/embeddings/{voice}.safetensors@{PREDEFINED_VOICES_REVISION}"
            );
            let path = hub::resolve(&spec, None)?;
            return self.load_voice_state(&path);
        }
        let path = hub::resolve(voice, None).map_err(|e| match e {
            Error::NotFound(m) => Error::NotFound(format!(
                "voice {m}: pass an audio file, a .safetensors voice state or one of the predefined voices ({})",
                PREDEFINED_VOICES.join(", ")
            )),
            other => other,
        })?;
        if !self.has_voice_cloning {
            return Err(Error::Unsupported(
                "this model was loaded without voice cloning: use a predefined voice or a .safetensors voice state".into(),
            ));
        }
        // Read, truncate, resample and end on a pause, as the reference does.
        let samples = audio::load_voice_prompt_audio(&path, self.sample_rate() as u32, truncate)?;
        let latents = self.encode_audio(&samples)?;
        self.voice_state_from_latents(&latents)
    }

    /// Frames generated at most for a chunk of `token_count` tokens
    /// (reference: `_estimate_max_gen_len`).
    pub fn max_gen_len(&self, token_count: usize) -> usize {
        let secs = token_count as f64 / TOKENS_PER_SECOND_ESTIMATE + GEN_SECONDS_PADDING;
        (secs * self.config.mimi.frame_rate).ceil() as usize
    }

    /// Splits `text` into the chunks generated one at a time (reference:
    /// `split_into_best_sentences`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for empty or whitespace-only text.
    pub fn text_chunks(&self, text: &str, max_tokens: usize) -> Result<Vec<String>> {
        if text.trim().is_empty() {
            return Err(Error::InvalidArgument(
                "the text is empty: give some words to speak (--text)".into(),
            ));
        }
        split_into_best_sentences(&self.tokenizer, text, max_tokens, &self.text_options)
    }

    /// Prepares a text chunk: its tokens and frame budget (reference:
    /// `_generate_audio_stream_short_text`).
    fn prepare_chunk(&self, text: String, params: &GenerationParams) -> Result<PreparedChunk> {
        let (prepared, guess) = prepare_text_prompt(&text, &self.text_options)?;
        let tokens = self.tokenizer.encode(&prepared);
        let max_gen_len = self.max_gen_len(tokens.len());
        let frames_after_eos = params
            .frames_after_eos
            .or(self.config.model_recommended_frames_after_eos)
            .unwrap_or(guess + 2);
        Ok(PreparedChunk {
            text,
            tokens,
            max_gen_len,
            frames_after_eos,
        })
    }

    /// Starts a streaming generation of `text` in the voice `voice`. The returned
    /// iterator yields one [`AudioFrame`] per generated latent frame (1920 samples at
    /// 24 kHz, 80 ms), each as soon as it is decoded; see [`AudioStream`] for the threads.
    ///
    /// The text is split into chunks and tokenized here; the FlowLM and Mimi run when the
    /// stream is iterated.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for empty text or out-of-range parameters.
    pub fn generate_stream<'a>(
        &'a self,
        voice: &'a VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<AudioStream<'a>> {
        params.validate()?;
        let chunks = self
            .text_chunks(text, params.max_tokens)?
            .into_iter()
            .map(|c| self.prepare_chunk(c, params))
            .collect::<Result<VecDeque<_>>>()?;
        let max_frames: usize = chunks.iter().map(|c| c.max_gen_len).sum();
        let noise = NoiseSource::new(params, self.flow_lm.ldim(), &self.device)?;
        let (inline, worker) = if self.threads >= 2 {
            match DecoderWorker::spawn(FrameDecoder::new(self)) {
                Ok(w) => (None, Some(w)),
                Err(e) => {
                    tracing::warn!(
                        "cannot start the Mimi decoder thread ({e}); decoding on this thread"
                    );
                    (Some(FrameDecoder::new(self)), None)
                }
            }
        } else {
            (Some(FrameDecoder::new(self)), None)
        };
        let threads = if worker.is_some() { 2 } else { 1 };
        Ok(AudioStream {
            voice,
            eos_threshold: params.eos_threshold,
            chunk_count: chunks.len(),
            chunk_index: 0,
            max_frames,
            current: None,
            lm: LmRunner::new(self, params.sampler_decode_steps),
            noise,
            inline,
            worker,
            threads,
            in_flight: 0,
            lm_finished: false,
            pending_error: None,
            finished: false,
            stats: GenerationStats {
                prefill_times: Vec::with_capacity(chunks.len()),
                lm_step_times: Vec::with_capacity(max_frames),
                decode_times: Vec::with_capacity(max_frames),
                ..GenerationStats::default()
            },
            chunks,
        })
    }

    /// Generates the whole audio of `text` (mono samples at [`Self::sample_rate`]).
    ///
    /// # Errors
    /// See [`Self::generate_stream`].
    pub fn generate(
        &self,
        voice: &VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<Vec<f32>> {
        let mut out = Vec::new();
        for frame in self.generate_stream(voice, text, params)? {
            out.extend_from_slice(&frame?.samples);
        }
        Ok(out)
    }
}

/// One decoded frame of audio.
#[derive(Debug, Clone)]
pub struct AudioFrame {
    /// Mono samples at the model rate.
    pub samples: Vec<f32>,
    /// Index of the text chunk this frame belongs to.
    pub chunk: usize,
    /// Index of the frame within its chunk.
    pub frame: usize,
    /// The FlowLM's latent for this frame, normalised, `[1, ldim]`.
    pub latent: Tensor,
    /// The EOS logit of this frame's FlowLM step.
    pub eos_logit: f32,
}

/// Timing of a generation so far.
///
/// The per-step lists are allocated once, when the stream starts, for the longest
/// generation the text allows ([`AudioStream::max_frames`]): recording a frame never
/// allocates.
#[derive(Debug, Clone, Default)]
pub struct GenerationStats {
    /// Text prefill time (all chunks): voice-state copy, text embedding, FlowLM prefill.
    pub prefill: Duration,
    /// FlowLM step time (all steps, noise sampling included).
    pub lm: Duration,
    /// Mimi decoding time (all frames yielded), measured on the thread that decodes.
    pub decode: Duration,
    /// Frames yielded.
    pub frames: usize,
    /// Text chunks started.
    pub chunks: usize,
    /// Chunks that ended at the length limit without EOS.
    pub chunks_without_eos: usize,
    /// Text prefill time of each chunk started, in order.
    pub prefill_times: Vec<Duration>,
    /// Time of each FlowLM step, in order. A chunk that ends after EOS ends on a step
    /// whose latent is not decoded, so there can be one more step than frames per chunk.
    pub lm_step_times: Vec<Duration>,
    /// Mimi decoding time of each frame yielded, in order.
    pub decode_times: Vec<Duration>,
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

/// A text chunk ready for generation.
#[derive(Debug)]
struct PreparedChunk {
    text: String,
    tokens: Vec<u32>,
    max_gen_len: usize,
    frames_after_eos: usize,
}

/// Where generation stands in the current chunk (reference: `_autoregressive_generation`).
#[derive(Debug, Clone, Copy)]
struct ChunkProgress {
    index: usize,
    step: usize,
    max_gen_len: usize,
    frames_after_eos: usize,
    eos_step: Option<usize>,
}

/// A latent produced by the FlowLM, on its way to the decoder.
#[derive(Debug)]
struct LatentFrame {
    chunk: usize,
    frame: usize,
    /// Normalised, `[1, ldim]`.
    latent: Tensor,
    eos_logit: f32,
}

/// The sampling noise of the flow head: `N(0, temperature)`, optionally truncated
/// (reference: `FlowLMModel._sample_next_latent`).
struct NoiseSource {
    rng: rand::rngs::StdRng,
    /// `None` at temperature 0: the noise is zero and the generator is not consumed.
    normal: Option<Normal<f32>>,
    clamp: Option<f32>,
    ldim: usize,
    device: Device,
}

impl NoiseSource {
    fn new(params: &GenerationParams, ldim: usize, device: &Device) -> Result<Self> {
        let rng = match params.seed {
            Some(s) => rand::rngs::StdRng::seed_from_u64(s),
            None => rand::rngs::StdRng::from_os_rng(),
        };
        let normal = if params.temperature == 0.0 {
            None
        } else {
            Some(
                Normal::new(0.0f32, params.temperature.sqrt())
                    .map_err(|e| Error::InvalidArgument(format!("--temperature: {e}")))?,
            )
        };
        Ok(Self {
            rng,
            normal,
            clamp: params.noise_clamp,
            ldim,
            device: device.clone(),
        })
    }

    /// Noise `[1, ldim]` for one FlowLM step.
    fn sample(&mut self) -> Result<Tensor> {
        let Some(normal) = self.normal else {
            return Ok(Tensor::zeros((1, self.ldim), DType::F32, &self.device)?);
        };
        let mut v = Vec::with_capacity(self.ldim);
        for _ in 0..self.ldim {
            let mut x = normal.sample(&mut self.rng);
            if let Some(c) = self.clamp {
                // Truncated normal by rejection, like torch's trunc_normal_ bounds.
                let mut tries = 0;
                while x.abs() > c && tries < 1000 {
                    x = normal.sample(&mut self.rng);
                    tries += 1;
                }
                if x.abs() > c {
                    x = self.rng.random_range(-c..=c);
                }
            }
            v.push(x);
        }
        Ok(Tensor::from_vec(v, (1, self.ldim), &self.device)?)
    }
}

/// The FlowLM side of a generation, on the thread that drives the stream: the text
/// prefill of a chunk and one autoregressive step, each one call (the place where an
/// allocation-free FlowLM runtime plugs in).
pub(crate) struct LmRunner<'a> {
    fast: &'a FlowLmFast,
    decode_steps: usize,
    /// The chunk's KV caches (a copy of the voice state, then the text, then the frames),
    /// reused from chunk to chunk.
    state: Option<FlowLmFastState>,
    /// Whether `state` holds a started chunk.
    active: bool,
    /// The last latent, fed back as the next step's input (`None`: BOS).
    previous: Option<Vec<f32>>,
    embeddings: Vec<f32>,
    noise: Vec<f32>,
}

impl<'a> LmRunner<'a> {
    fn new(model: &'a TtsModel, decode_steps: usize) -> Self {
        Self {
            fast: &model.fast.flow_lm,
            decode_steps,
            state: None,
            active: false,
            previous: None,
            embeddings: Vec::new(),
            noise: Vec::new(),
        }
    }

    /// Starts a chunk: copies the voice state with room for the text and `max_gen_len`
    /// frames, and prefills the text (reference: `_generate`, "Prompting text").
    fn start_chunk(
        &mut self,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()> {
        self.end_chunk();
        let extra = tokens.len() + max_gen_len;
        let state = self
            .state
            .get_or_insert_with(|| self.fast.new_state(voice.len() + extra));
        self.fast.load_voice(voice, state, extra)?;
        self.fast.embed_tokens(tokens, &mut self.embeddings)?;
        self.fast.prefill(&self.embeddings, tokens.len(), state)?;
        self.active = true;
        Ok(())
    }

    /// One autoregressive step from the previous latent (BOS at the start of a chunk).
    fn step(&mut self, noise: &Tensor) -> Result<FlowLmStep> {
        let (Some(state), true) = (self.state.as_mut(), self.active) else {
            return Err(Error::InvalidArgument(
                "FlowLM step without a text chunk (start_chunk first)".into(),
            ));
        };
        self.noise.clear();
        self.noise.extend(noise.flatten_all()?.to_vec1::<f32>()?);
        let mut latent = vec![0f32; self.fast.ldim()];
        // The first step of a chunk runs before the decoder thread has anything to do,
        // so it may use the prefill threads (both cores).
        let step = if self.previous.is_none() {
            FlowLmFast::step_wide
        } else {
            FlowLmFast::step
        };
        let eos_logit = step(
            self.fast,
            self.previous.as_deref(),
            &self.noise,
            self.decode_steps,
            state,
            &mut latent,
        )?;
        let tensor = Tensor::from_slice(&latent, (1, latent.len()), noise.device())?;
        self.previous = Some(latent);
        Ok(FlowLmStep {
            latent: tensor,
            eos_logit,
        })
    }

    /// Ends the chunk (the cache buffers are kept for the next one).
    fn end_chunk(&mut self) {
        self.active = false;
        self.previous = None;
    }
}

/// The Mimi side of a generation: one latent in, one frame of audio out, with its own
/// decoder state, so that it can run on the decoder thread (`Send + 'static`). Each chunk
/// starts from a fresh decoder state and fades its first 5 ms in (reference:
/// `_decode_audio_worker`). Decoding runs on [`MimiDecoderFast`], which allocates nothing
/// per frame.
pub(crate) struct FrameDecoder {
    decoder: Arc<MimiDecoderFast>,
    emb_std: Vec<f32>,
    emb_mean: Vec<f32>,
    fade_len: usize,
    state: Option<MimiDecoderFastState>,
    latent: Vec<f32>,
    fade_pending: bool,
    /// Decode the stream's first frame over the decoder's wide threads (the model has 2
    /// or more threads; `--threads 1` keeps everything on one).
    wide_first_frame: bool,
}

impl FrameDecoder {
    fn new(model: &TtsModel) -> Self {
        let vec = |t: &Tensor| {
            t.flatten_all()
                .and_then(|t| t.to_vec1::<f32>())
                .unwrap_or_default()
        };
        Self {
            decoder: Arc::clone(&model.fast.decoder),
            emb_std: vec(&model.flow_lm.emb_std),
            emb_mean: vec(&model.flow_lm.emb_mean),
            fade_len: model.sample_rate() / 200,
            state: None,
            latent: vec![0.0; model.flow_lm.ldim()],
            fade_pending: false,
            wide_first_frame: model.threads() >= 2,
        }
    }

    /// Decodes frame `frame` of chunk `chunk`; frame 0 starts from a fresh decoder state.
    /// Nothing else runs during the stream's very first frame (the FlowLM waits for it,
    /// see `AudioStream::next_overlapped`), so that one is split over the decoder's wide
    /// threads.
    fn decode_frame(&mut self, chunk: usize, frame: usize, latent: &Tensor) -> Result<Vec<f32>> {
        let alone = self.wide_first_frame && chunk == 0 && frame == 0;
        let state = match self.state.as_mut() {
            Some(st) if frame != 0 => st,
            Some(st) => {
                self.decoder.reset(st);
                self.fade_pending = true;
                st
            }
            None => {
                self.fade_pending = true;
                self.state.insert(self.decoder.new_state())
            }
        };
        // FlowLm::denormalize: x * emb_std + emb_mean.
        let x = latent.flatten_all()?.to_vec1::<f32>()?;
        if x.len() != self.latent.len() || self.emb_std.len() != x.len() {
            return Err(Error::InvalidArgument(format!(
                "latent has {} values, expected {}",
                x.len(),
                self.latent.len()
            )));
        }
        for (((o, v), s), m) in self
            .latent
            .iter_mut()
            .zip(&x)
            .zip(&self.emb_std)
            .zip(&self.emb_mean)
        {
            *o = v * s + m;
        }
        let mut samples = vec![0f32; self.decoder.channels() * self.decoder.frame_size()];
        if alone {
            self.decoder
                .decode_frame_wide(&self.latent, state, &mut samples)?;
        } else {
            self.decoder
                .decode_frame(&self.latent, state, &mut samples)?;
        }
        if self.fade_pending {
            // torch.linspace(0, 1, sample_rate // 200) over the first samples.
            let n = self.fade_len.min(samples.len());
            let denom = (self.fade_len.max(2) - 1) as f32;
            for (i, s) in samples.iter_mut().take(n).enumerate() {
                *s *= i as f32 / denom;
            }
            self.fade_pending = false;
        }
        Ok(samples)
    }
}

/// A decoded latent coming back from the decoder thread.
struct Decoded {
    job: LatentFrame,
    samples: Result<Vec<f32>>,
    time: Duration,
}

/// The decoder thread of an overlapped generation and its two channels.
struct DecoderWorker {
    jobs: Option<mpsc::Sender<LatentFrame>>,
    results: mpsc::Receiver<Decoded>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Name of the decoder threads (at most 15 bytes: the Linux thread-name limit).
pub const DECODER_THREAD_NAME: &str = "pocket-tts-mimi";

/// Latents handed to the decoder and not yet received back, at most: the one being
/// decoded and the next one, so the FlowLM is never more than one frame ahead.
const MAX_IN_FLIGHT: usize = 2;

impl DecoderWorker {
    fn spawn(mut decoder: FrameDecoder) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel::<LatentFrame>();
        let (result_tx, results) = mpsc::channel::<Decoded>();
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(DECODER_THREAD_NAME.into())
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    if stop_flag.load(Ordering::Acquire) {
                        break;
                    }
                    let t0 = Instant::now();
                    let samples = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        decoder.decode_frame(job.chunk, job.frame, &job.latent)
                    }))
                    .unwrap_or_else(|p| Err(panic_error(p.as_ref())));
                    let failed = samples.is_err();
                    let time = t0.elapsed();
                    if result_tx.send(Decoded { job, samples, time }).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            results,
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread: it finishes at most the frame it is decoding.
    fn shutdown(mut self) -> Option<Error> {
        self.stop.store(true, Ordering::Release);
        self.jobs = None;
        let handle = self.handle.take()?;
        drop(self);
        handle.join().err().map(|p| panic_error(p.as_ref()))
    }
}

fn panic_error(payload: &(dyn std::any::Any + Send)) -> Error {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::Candle(candle_core::Error::Msg(format!(
        "the Mimi decoder thread panicked: {msg}"
    )))
}

fn decoder_lost() -> Error {
    Error::Candle(candle_core::Error::Msg(
        "the Mimi decoder thread stopped unexpectedly".into(),
    ))
}

/// A streaming generation: an iterator of [`AudioFrame`]s (reference:
/// `generate_audio_stream`). Each text chunk starts from a copy of the voice state
/// and a fresh Mimi decoder; its first 5 ms fade in.
///
/// With [`TtsModel::threads`] ≥ 2 the Mimi decoder runs on its own thread
/// ([`DECODER_THREAD_NAME`]) while the FlowLM runs on the thread that calls
/// [`next`](Iterator::next): the decoder decodes latent *n* while the FlowLM computes latent
/// *n + 1*, and a frame is yielded as soon as it is decoded (the first frame of the stream
/// never waits for a second FlowLM step). Frames, their order and content are those of the
/// sequential generation (`threads == 1`). Dropping the stream stops the decoder thread
/// (after at most the frame it is decoding) and joins it. An error on either side is
/// yielded as `Err` in its place in the frame order, and ends the stream.
pub struct AudioStream<'a> {
    voice: &'a VoiceState,
    eos_threshold: f32,
    chunks: VecDeque<PreparedChunk>,
    chunk_count: usize,
    chunk_index: usize,
    max_frames: usize,
    current: Option<ChunkProgress>,
    lm: LmRunner<'a>,
    noise: NoiseSource,
    /// Sequential decoding on the calling thread (`threads == 1`).
    inline: Option<FrameDecoder>,
    /// Overlapped decoding (`threads >= 2`).
    worker: Option<DecoderWorker>,
    threads: usize,
    in_flight: usize,
    lm_finished: bool,
    pending_error: Option<Error>,
    finished: bool,
    stats: GenerationStats,
}

impl AudioStream<'_> {
    /// Timings so far.
    pub fn stats(&self) -> &GenerationStats {
        &self.stats
    }

    /// The text chunks not started yet.
    pub fn pending_chunks(&self) -> impl Iterator<Item = &str> {
        self.chunks.iter().map(|c| c.text.as_str())
    }

    /// Number of text chunks of the whole text.
    pub fn chunk_count(&self) -> usize {
        self.chunk_count
    }

    /// Frames generated at most (sum of [`TtsModel::max_gen_len`] over the chunks); EOS
    /// usually ends each chunk well before.
    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// Threads generating: 1 (sequential) or 2 (FlowLM and Mimi decoder overlapped).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Starts the next chunk: FlowLM prefill of its text.
    fn start_chunk(&mut self, chunk: &PreparedChunk) -> Result<ChunkProgress> {
        let t0 = Instant::now();
        self.lm
            .start_chunk(self.voice, &chunk.tokens, chunk.max_gen_len)?;
        let dt = t0.elapsed();
        self.stats.prefill += dt;
        self.stats.prefill_times.push(dt);
        self.stats.chunks += 1;
        let index = self.chunk_index;
        self.chunk_index += 1;
        Ok(ChunkProgress {
            index,
            step: 0,
            max_gen_len: chunk.max_gen_len,
            frames_after_eos: chunk.frames_after_eos,
            eos_step: None,
        })
    }

    /// Runs the FlowLM until it produces the next latent to decode (starting chunks as
    /// needed and applying the EOS rules); `Ok(None)` once every chunk is done.
    fn produce(&mut self) -> Result<Option<LatentFrame>> {
        loop {
            let mut cur = match self.current {
                Some(c) => c,
                None => {
                    let Some(chunk) = self.chunks.pop_front() else {
                        return Ok(None);
                    };
                    let c = self.start_chunk(&chunk)?;
                    self.current = Some(c);
                    c
                }
            };
            if cur.step >= cur.max_gen_len {
                self.stats.chunks_without_eos += 1;
                tracing::warn!(
                    "maximum generation length reached without EOS, this very often indicates an error"
                );
                self.end_chunk();
                continue;
            }
            let t0 = Instant::now();
            let noise = self.noise.sample()?;
            let out = self.lm.step(&noise)?;
            let dt = t0.elapsed();
            self.stats.lm += dt;
            self.stats.lm_step_times.push(dt);
            let step = cur.step;
            if out.eos_logit > self.eos_threshold
                && cur.eos_step.is_none()
                && step >= MIN_FRAMES_BEFORE_EOS
            {
                cur.eos_step = Some(step);
            }
            if let Some(e) = cur.eos_step {
                if step >= e + cur.frames_after_eos {
                    self.end_chunk();
                    continue;
                }
            }
            cur.step += 1;
            self.current = Some(cur);
            return Ok(Some(LatentFrame {
                chunk: cur.index,
                frame: step,
                latent: out.latent,
                eos_logit: out.eos_logit,
            }));
        }
    }

    fn end_chunk(&mut self) {
        self.current = None;
        self.lm.end_chunk();
    }

    /// Records a decoded frame and makes it an [`AudioFrame`].
    fn deliver(&mut self, job: LatentFrame, samples: Vec<f32>, time: Duration) -> AudioFrame {
        self.stats.decode += time;
        self.stats.decode_times.push(time);
        self.stats.frames += 1;
        AudioFrame {
            samples,
            chunk: job.chunk,
            frame: job.frame,
            latent: job.latent,
            eos_logit: job.eos_logit,
        }
    }

    /// `threads == 1`: one FlowLM step, then one decode, on this thread.
    fn next_sequential(&mut self) -> Option<Result<AudioFrame>> {
        let job = match self.produce() {
            Ok(Some(job)) => job,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let decoder = self.inline.as_mut()?;
        let t0 = Instant::now();
        let samples = decoder.decode_frame(job.chunk, job.frame, &job.latent);
        let time = t0.elapsed();
        Some(samples.map(|s| self.deliver(job, s, time)))
    }

    fn receive(&mut self, d: Decoded) -> Result<AudioFrame> {
        self.in_flight -= 1;
        let samples = d.samples?;
        Ok(self.deliver(d.job, samples, d.time))
    }

    /// `threads >= 2`: the FlowLM runs here, at most one latent ahead of the decoder
    /// thread; a decoded frame is returned as soon as there is one.
    fn next_overlapped(&mut self) -> Option<Result<AudioFrame>> {
        loop {
            let worker = self.worker.as_ref()?;
            if self.in_flight > 0 {
                match worker.results.try_recv() {
                    Ok(d) => return Some(self.receive(d)),
                    Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => return Some(Err(self.lost())),
                }
            }
            // The first audio of the stream must not wait for a second FlowLM step.
            let first_frame_pending = self.stats.frames == 0 && self.in_flight > 0;
            if !self.lm_finished && self.in_flight < MAX_IN_FLIGHT && !first_frame_pending {
                match self.produce() {
                    Ok(Some(job)) => {
                        let sent = self
                            .worker
                            .as_ref()
                            .and_then(|w| w.jobs.as_ref())
                            .is_some_and(|j| j.send(job).is_ok());
                        if !sent {
                            return Some(Err(self.lost()));
                        }
                        self.in_flight += 1;
                    }
                    Ok(None) => self.lm_finished = true,
                    Err(e) => {
                        // Frames already handed to the decoder come first.
                        self.lm_finished = true;
                        self.pending_error = Some(e);
                    }
                }
                continue;
            }
            if self.in_flight > 0 {
                let worker = self.worker.as_ref()?;
                return match worker.results.recv() {
                    Ok(d) => Some(self.receive(d)),
                    Err(_) => Some(Err(self.lost())),
                };
            }
            return self.pending_error.take().map(Err);
        }
    }

    /// The decoder thread is gone without a result: its panic, if any.
    fn lost(&mut self) -> Error {
        self.worker
            .take()
            .and_then(DecoderWorker::shutdown)
            .unwrap_or_else(decoder_lost)
    }

    /// Ends the stream: frees the caches and stops the decoder thread.
    fn finish(&mut self) {
        self.finished = true;
        self.chunks.clear();
        self.end_chunk();
        self.inline = None;
        if let Some(w) = self.worker.take() {
            if let Some(e) = w.shutdown() {
                tracing::warn!("{e}");
            }
        }
    }
}

impl Iterator for AudioStream<'_> {
    type Item = Result<AudioFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let item = if self.worker.is_some() {
            self.next_overlapped()
        } else {
            self.next_sequential()
        };
        if !matches!(item, Some(Ok(_))) {
            self.finish();
        }
        item
    }
}

impl Drop for AudioStream<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            // A panic on the decoder thread was already reported, or no longer matters.
            let _ = w.shutdown();
        }
    }
}
