//! Text chunks and their frame budgets, the flow head's sampling noise, and the EOS rule
//! (reference: `TTSModel._generate_audio_stream_short_text`, `_autoregressive_generation`,
//! `_estimate_max_gen_len`, `FlowLMModel._sample_next_latent`).

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

use super::params::{
    GenerationParams, GEN_SECONDS_PADDING, MIN_FRAMES_BEFORE_EOS, TOKENS_PER_SECOND_ESTIMATE,
};
use super::TtsModel;
use crate::{Error, Result};
use pocket_tts_text::chunking::split_into_best_sentences;

/// A text chunk ready for generation (built by `plan.rs`).
#[derive(Debug)]
pub(super) struct PreparedChunk {
    pub(super) text: String,
    pub(super) tokens: Vec<u32>,
    pub(super) max_gen_len: usize,
    pub(super) frames_after_eos: usize,
}

impl TtsModel {
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
            return Err(Error::invalid_argument(
                "the text is empty: give some words to speak",
            ));
        }
        Ok(split_into_best_sentences(
            &self.tokenizer,
            text,
            max_tokens,
            &self.text_options,
        )?)
    }
}

/// Where generation stands in the current chunk, and the EOS rule (reference:
/// `_autoregressive_generation`).
#[derive(Debug, Clone, Copy)]
pub(super) struct ChunkProgress {
    pub(super) index: usize,
    pub(super) step: usize,
    pub(super) max_gen_len: usize,
    pub(super) frames_after_eos: usize,
    pub(super) eos_step: Option<usize>,
}

/// What to do with the latent of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StepOutcome {
    /// Decode it: frame `frame` of the chunk.
    Frame(usize),
    /// The chunk is over (EOS seen `frames_after_eos` steps ago); drop the latent.
    EndOfChunk,
}

impl ChunkProgress {
    pub(super) fn new(index: usize, chunk: &PreparedChunk) -> Self {
        Self {
            index,
            step: 0,
            max_gen_len: chunk.max_gen_len,
            frames_after_eos: chunk.frames_after_eos,
            eos_step: None,
        }
    }

    /// True when the chunk has used its whole frame budget without EOS.
    pub(super) fn exhausted(&self) -> bool {
        self.step >= self.max_gen_len
    }

    /// Applies the EOS rule to the step just taken (its EOS logit): EOS counts from
    /// [`MIN_FRAMES_BEFORE_EOS`] on, and the chunk ends `frames_after_eos` steps after it.
    pub(super) fn record(&mut self, eos_logit: f32, eos_threshold: f32) -> StepOutcome {
        let step = self.step;
        if eos_logit > eos_threshold && self.eos_step.is_none() && step >= MIN_FRAMES_BEFORE_EOS {
            self.eos_step = Some(step);
        }
        if let Some(e) = self.eos_step {
            if step >= e + self.frames_after_eos {
                return StepOutcome::EndOfChunk;
            }
        }
        self.step += 1;
        StepOutcome::Frame(step)
    }
}

/// The sampling noise of the flow head: `N(0, temperature)`, optionally truncated
/// (reference: `FlowLMModel._sample_next_latent`). Written into a reused buffer.
pub(super) struct NoiseSource {
    rng: rand::rngs::StdRng,
    /// `None` at temperature 0: the noise is zero and the generator is not consumed.
    normal: Option<Normal<f32>>,
    clamp: Option<f32>,
    values: Vec<f32>,
}

impl NoiseSource {
    /// # Errors
    /// [`Error::InvalidArgument`] for a temperature the normal distribution refuses.
    pub(super) fn new(params: &GenerationParams, ldim: usize) -> Result<Self> {
        let rng = match params.seed {
            Some(s) => rand::rngs::StdRng::seed_from_u64(s),
            None => rand::rngs::StdRng::from_os_rng(),
        };
        let normal = if params.temperature == 0.0 {
            None
        } else {
            Some(
                Normal::new(0.0f32, params.temperature.sqrt())
                    .map_err(|e| Error::invalid_field("temperature", e.to_string()))?,
            )
        };
        Ok(Self {
            rng,
            normal,
            clamp: params.noise_clamp,
            values: vec![0.0; ldim],
        })
    }

    /// Noise `[ldim]` for one FlowLM step (allocation-free).
    pub(super) fn sample(&mut self) -> &[f32] {
        let Some(normal) = self.normal else {
            return &self.values;
        };
        for v in self.values.iter_mut() {
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
            *v = x;
        }
        &self.values
    }
}
