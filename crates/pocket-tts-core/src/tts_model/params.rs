//! Generation parameters and the reference's sizing constants (reference:
//! `models/tts_model.py`, `TTSModel.generate_audio` and its class constants).

use crate::config::Config;
use crate::torch_rng::TorchRngState;
use crate::{Error, Result};
use pocket_tts_text::normalize::Language;

/// Tokens per second of speech assumed when sizing a generation (reference:
/// `TTSModel._TOKENS_PER_SECOND_ESTIMATE`).
pub const TOKENS_PER_SECOND_ESTIMATE: f64 = 3.0;
/// Seconds added to the estimate (reference: `_GEN_SECONDS_PADDING`).
pub const GEN_SECONDS_PADDING: f64 = 2.0;
/// EOS is ignored on the first frames (reference: `_MIN_FRAMES_BEFORE_EOS`).
pub const MIN_FRAMES_BEFORE_EOS: usize = 6;
/// Default maximum tokens per text chunk (reference: `MAX_TOKEN_PER_CHUNK`).
pub const MAX_TOKENS_PER_CHUNK: usize = 50;

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
    /// Seed of the sampling noise: the noise is the reference's after
    /// `torch.manual_seed(seed)` (torch's default CPU generator, its float32 `normal_` and
    /// `trunc_normal_`, draw for draw; torch keeps the seed's low 32 bits). Random when
    /// `None`.
    pub seed: Option<u64>,
    /// Draw the sampling noise from this torch generator state (`torch.get_rng_state()`)
    /// instead of [`Self::seed`], which it overrides: the noise is what the reference draws
    /// with torch's default generator in that state. The state after the generation is
    /// handed back by [`AudioStream::torch_rng_state`](crate::AudioStream::torch_rng_state)
    /// and [`StreamHandle::torch_rng_state`](crate::StreamHandle::torch_rng_state).
    pub torch_rng_state: Option<TorchRngState>,
    /// The reference's `copy_state`. `true` (the default): every text chunk starts from
    /// the voice state. `false`: as the reference with `copy_state=False`, each chunk
    /// continues from the FlowLM state the previous one left (the voice, then each
    /// chunk's text and frames), and [`AudioStream::model_state`](crate::AudioStream::model_state)
    /// gives that state after the generation, for a next generation to continue from.
    /// Only [`TtsModel::generate_stream`](super::TtsModel::generate_stream) and
    /// [`TtsModel::generate`](super::TtsModel::generate) take `false`; the batched
    /// [`Engine`](crate::Engine) refuses it.
    pub copy_state: bool,
    /// Rewrite numbers, dates, money, abbreviations and symbols into words
    /// ([`pocket_tts_text::normalize`]) before the reference's text preparation. Ours; `false`
    /// (the default) keeps the reference's behaviour.
    pub normalize: bool,
    /// The language [`Self::normalize`] uses; `None`: the model's
    /// ([`TtsModel::text_language`](super::TtsModel::text_language): the config's
    /// `language`, else the built-in config name's).
    pub text_language: Option<Language>,
    /// Read pause markup ([`pocket_tts_text::markup`]: `[pause 500ms]`,
    /// `<break time="500ms"/>`) as silences of that length. Ours; `false` (the default):
    /// tags are text, as in the reference.
    pub markup: bool,
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
            torch_rng_state: None,
            copy_state: true,
            normalize: false,
            text_language: None,
            markup: false,
        }
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] whose `field` names the parameter (`"temperature"`,
    /// `"sampler_decode_steps"`, `"noise_clamp"`, `"eos_threshold"`, `"max_tokens"`).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, m: &str| Err(Error::invalid_field(field, m));
        if !self.temperature.is_finite() || self.temperature < 0.0 {
            return bad("temperature", "must be a finite number >= 0");
        }
        if self.temperature > MAX_TEMPERATURE {
            return Err(Error::invalid_field(
                "temperature",
                format!(
                    "{} is above {MAX_TEMPERATURE}: the sampling noise's standard deviation is \
                     its square root, so the output would be noise; the models' defaults are \
                     below 1",
                    self.temperature
                ),
            ));
        }
        if self.sampler_decode_steps == 0 {
            return bad("sampler_decode_steps", "must be at least 1");
        }
        if let Some(c) = self.noise_clamp {
            if !c.is_finite() || c <= 0.0 {
                return bad("noise_clamp", "must be a finite number > 0");
            }
        }
        if self.eos_threshold.is_nan() {
            return bad("eos_threshold", "must be a number");
        }
        if self.max_tokens == 0 {
            return bad("max_tokens", "must be at least 1");
        }
        Ok(())
    }
}

/// The highest sampling temperature [`GenerationParams::validate`] accepts. The noise's
/// standard deviation is the square root of the temperature; far above the models' defaults
/// (0.3 to 0.7) the output is only noise.
pub const MAX_TEMPERATURE: f32 = 10.0;
