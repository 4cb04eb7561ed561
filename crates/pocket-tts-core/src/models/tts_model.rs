//! The text-to-speech model: FlowLM + Mimi + tokenizer, voice prompting and streaming
//! generation (reference: `models/tts_model.py`, `TTSModel`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

use crate::audio;
use crate::config::Config;
use crate::hub;
use crate::models::flow_lm::FlowLm;
use crate::models::mimi::{Mimi, MimiDecoderState};
use crate::models::model_state::VoiceState;
use crate::modules::transformer::TransformerState;
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
    /// Mimi.
    pub mimi: Mimi,
    /// Tokenizer.
    pub tokenizer: Tokenizer,
    /// Text preparation options from the config.
    pub text_options: TextOptions,
    /// Built-in language the config came from (enables predefined voices).
    pub language: Option<String>,
    pub(crate) has_voice_cloning: bool,
    pub(crate) device: Device,
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
        let text_options = text_options(&config)?;
        Ok(Self {
            config,
            flow_lm,
            mimi,
            tokenizer,
            text_options,
            language: None,
            has_voice_cloning: true,
            device,
        })
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
        let text_options = text_options(&config)?;
        Ok(Self {
            config,
            flow_lm,
            mimi,
            tokenizer,
            text_options,
            language: None,
            has_voice_cloning: true,
            device,
        })
    }

    /// Audio sample rate in Hz.
    pub fn sample_rate(&self) -> usize {
        self.config.mimi.sample_rate
    }

    /// The device tensors live on.
    pub fn device(&self) -> &Device {
        &self.device
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
        let x = Tensor::from_slice(samples, (1, 1, samples.len()), &self.device)?;
        Ok(self.mimi.encode_to_latent(&x)?)
    }

    /// Prompts the FlowLM with Mimi latents `[1, F, C]` of a voice.
    pub fn voice_state_from_latents(&self, latents: &Tensor) -> Result<VoiceState> {
        let cond = self.flow_lm.voice_conditioning(latents)?;
        let mut state = self.flow_lm.init_state(cond.dim(1)?, &self.device)?;
        self.flow_lm.prefill(&cond, &mut state)?;
        Ok(VoiceState { state })
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

    /// Starts a streaming generation of `text` in the voice `voice`. The returned
    /// iterator yields one [`AudioFrame`] per generated latent frame (1920 samples at
    /// 24 kHz, 80 ms).
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
        let chunks = self.text_chunks(text, params.max_tokens)?;
        let rng = match params.seed {
            Some(s) => rand::rngs::StdRng::seed_from_u64(s),
            None => rand::rngs::StdRng::from_os_rng(),
        };
        Ok(AudioStream {
            model: self,
            voice,
            params: params.clone(),
            chunks: chunks.into_iter().collect(),
            chunk_index: 0,
            current: None,
            rng,
            stats: GenerationStats::default(),
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
#[derive(Debug, Clone, Default)]
pub struct GenerationStats {
    /// Text prefill time (all chunks).
    pub prefill: Duration,
    /// FlowLM step time (all frames).
    pub lm: Duration,
    /// Mimi decoding time (all frames).
    pub decode: Duration,
    /// Frames generated.
    pub frames: usize,
    /// Text chunks started.
    pub chunks: usize,
    /// Chunks that ended at the length limit without EOS.
    pub chunks_without_eos: usize,
}

pub(crate) struct ChunkGen {
    pub(crate) state: TransformerState,
    pub(crate) mimi: MimiDecoderState,
    pub(crate) step: usize,
    pub(crate) max_gen_len: usize,
    pub(crate) frames_after_eos: usize,
    pub(crate) eos_step: Option<usize>,
    pub(crate) previous: Option<Tensor>,
    pub(crate) fade_pending: bool,
}

/// A streaming generation: an iterator of [`AudioFrame`]s (reference:
/// `generate_audio_stream`). Each text chunk starts from a copy of the voice state
/// and a fresh Mimi decoder; its first 5 ms fade in.
pub struct AudioStream<'a> {
    pub(crate) model: &'a TtsModel,
    pub(crate) voice: &'a VoiceState,
    pub(crate) params: GenerationParams,
    pub(crate) chunks: VecDeque<String>,
    pub(crate) chunk_index: usize,
    pub(crate) current: Option<ChunkGen>,
    pub(crate) rng: rand::rngs::StdRng,
    pub(crate) stats: GenerationStats,
}

impl AudioStream<'_> {
    /// Timings so far.
    pub fn stats(&self) -> &GenerationStats {
        &self.stats
    }

    /// The text chunks not started yet.
    pub fn pending_chunks(&self) -> impl Iterator<Item = &str> {
        self.chunks.iter().map(|s| s.as_str())
    }

    fn start_chunk(&mut self, chunk: &str) -> Result<ChunkGen> {
        let m = self.model;
        let (prepared, guess) = prepare_text_prompt(chunk, &m.text_options)?;
        let tokens = m.tokenizer.encode(&prepared);
        let max_gen_len = m.max_gen_len(tokens.len());
        let frames_after_eos = self
            .params
            .frames_after_eos
            .or(m.config.model_recommended_frames_after_eos)
            .unwrap_or(guess + 2);
        let t0 = Instant::now();
        let mut state = self.voice.fork(tokens.len() + max_gen_len)?;
        let emb = m.flow_lm.embed_text(&tokens, &m.device)?;
        m.flow_lm.prefill(&emb, &mut state)?;
        self.stats.prefill += t0.elapsed();
        self.stats.chunks += 1;
        Ok(ChunkGen {
            state,
            mimi: m.mimi.init_decoder_state(1, &m.device)?,
            step: 0,
            max_gen_len,
            frames_after_eos,
            eos_step: None,
            previous: None,
            fade_pending: true,
        })
    }

    fn noise(&mut self) -> Result<Tensor> {
        let ldim = self.model.flow_lm.ldim();
        let temp = self.params.temperature;
        let dev = &self.model.device;
        if temp == 0.0 {
            return Ok(Tensor::zeros((1, ldim), DType::F32, dev)?);
        }
        let std = temp.sqrt();
        let normal = Normal::new(0.0f32, std)
            .map_err(|e| Error::InvalidArgument(format!("--temperature: {e}")))?;
        let mut v = Vec::with_capacity(ldim);
        for _ in 0..ldim {
            let mut x = normal.sample(&mut self.rng);
            if let Some(c) = self.params.noise_clamp {
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
        Ok(Tensor::from_vec(v, (1, ldim), dev)?)
    }

    /// Runs one step of the current chunk; `Ok(None)` when the chunk is finished.
    fn step(&mut self, mut gen: ChunkGen) -> Result<Option<(ChunkGen, AudioFrame)>> {
        let m = self.model;
        if gen.step >= gen.max_gen_len {
            self.stats.chunks_without_eos += 1;
            tracing::warn!(
                "maximum generation length reached without EOS, this very often indicates an error"
            );
            return Ok(None);
        }
        let t0 = Instant::now();
        let noise = self.noise()?;
        let out = m.flow_lm.step(
            gen.previous.as_ref(),
            &noise,
            self.params.sampler_decode_steps,
            &mut gen.state,
        )?;
        self.stats.lm += t0.elapsed();
        let step = gen.step;
        if out.eos_logit > self.params.eos_threshold
            && gen.eos_step.is_none()
            && step >= MIN_FRAMES_BEFORE_EOS
        {
            gen.eos_step = Some(step);
        }
        if let Some(e) = gen.eos_step {
            if step >= e + gen.frames_after_eos {
                return Ok(None);
            }
        }
        let t1 = Instant::now();
        let latent = m
            .flow_lm
            .denormalize(&out.latent)?
            .reshape((1, 1, m.flow_lm.ldim()))?;
        let audio = m.mimi.decode_from_latent(&latent, &mut gen.mimi)?;
        let mut samples = audio.flatten_all()?.to_vec1::<f32>()?;
        if gen.fade_pending {
            let n_fade = m.sample_rate() / 200;
            let n = n_fade.min(samples.len());
            let denom = (n_fade.max(2) - 1) as f32;
            for (i, s) in samples.iter_mut().take(n).enumerate() {
                *s *= i as f32 / denom;
            }
            gen.fade_pending = false;
        }
        self.stats.decode += t1.elapsed();
        self.stats.frames += 1;
        gen.step += 1;
        let frame = AudioFrame {
            samples,
            chunk: self.chunk_index.saturating_sub(1),
            frame: step,
            latent: out.latent.clone(),
            eos_logit: out.eos_logit,
        };
        gen.previous = Some(out.latent);
        Ok(Some((gen, frame)))
    }
}

impl Iterator for AudioStream<'_> {
    type Item = Result<AudioFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let gen = match self.current.take() {
                Some(g) => g,
                None => {
                    let chunk = self.chunks.pop_front()?;
                    self.chunk_index += 1;
                    match self.start_chunk(&chunk) {
                        Ok(g) => g,
                        Err(e) => {
                            self.chunks.clear();
                            return Some(Err(e));
                        }
                    }
                }
            };
            match self.step(gen) {
                Ok(Some((gen, frame))) => {
                    self.current = Some(gen);
                    return Some(Ok(frame));
                }
                Ok(None) => continue,
                Err(e) => {
                    self.chunks.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}
