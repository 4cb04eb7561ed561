//! Text chunks and their frame budgets, the flow head's sampling noise, and the EOS rule
//! (reference: `TTSModel._generate_audio_stream_short_text`, `_autoregressive_generation`,
//! `_estimate_max_gen_len`, `FlowLMModel._sample_next_latent`).

use super::params::{
    GenerationParams, GEN_SECONDS_PADDING, MIN_FRAMES_BEFORE_EOS, TOKENS_PER_SECOND_ESTIMATE,
};
use super::TtsModel;
use crate::torch_rng::{TorchGenerator, TorchRngState};
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

/// The sampling noise of the flow head: `N(0, temperature)`, truncated to
/// `[-noise_clamp, noise_clamp]` when set (reference: `FlowLMModel._sample_next_latent`),
/// drawn as the reference's torch draws it ([`TorchGenerator`]): from
/// [`GenerationParams::torch_rng_state`] when given; else with [`GenerationParams::seed`]
/// `N`, the noise is the reference's after `torch.manual_seed(N)`; else the generator is
/// seeded from the operating system. Written into a reused buffer.
pub(super) struct NoiseSource {
    generator: TorchGenerator,
    /// The standard deviation `sqrt(temperature)`.
    std: f64,
    clamp: Option<f64>,
    values: Vec<f32>,
}

impl NoiseSource {
    /// # Errors
    /// None today; the `Result` keeps room for parameters the generator could refuse.
    pub(super) fn new(params: &GenerationParams, ldim: usize) -> Result<Self> {
        let generator = match &params.torch_rng_state {
            Some(state) => TorchGenerator::from_state(state),
            None => TorchGenerator::manual_seed(params.seed.unwrap_or_else(rand::random)),
        };
        Ok(Self {
            generator,
            std: as_typed(params.temperature).sqrt(),
            clamp: params.noise_clamp.map(as_typed),
            values: vec![0.0; ldim],
        })
    }

    /// Noise `[ldim]` for one FlowLM step (allocation-free after the first call).
    ///
    /// At temperature 0 the noise is zero, but drawn all the same (`normal_` with a
    /// standard deviation of 0), as the reference draws it: the generator advances as
    /// torch's does. With a clamp at temperature 0 the reference fails (a division by the
    /// zero standard deviation in `trunc_normal_`); here the clamp is moot and the draw is
    /// that of `normal_`.
    pub(super) fn sample(&mut self) -> &[f32] {
        match self.clamp {
            Some(c) if self.std > 0.0 => {
                self.generator
                    .trunc_normal_(&mut self.values, 0.0, self.std, c)
            }
            _ => self.generator.normal_(&mut self.values, 0.0, self.std),
        }
        &self.values
    }

    /// The reference's text prefill of a chunk runs the flow head too and drops its latent
    /// (`_generate` → `_run_flow_lm_and_increment_step` with the text tokens): its noise is
    /// drawn, so the chunk's frames start from the same generator state as the reference's.
    pub(super) fn skip_prefill_draw(&mut self) {
        self.sample();
    }

    /// Where the generator stands: the state torch's would have after the same draws.
    pub(super) fn torch_rng_state(&self) -> TorchRngState {
        self.generator.state()
    }
}

/// The `f64` a user wrote for an `f32` parameter: the shortest decimal that reads back as
/// this `f32`, read as `f64` (0.7 stays 0.7, not 0.699999988079071). The reference computes
/// `temp ** 0.5` and the truncation bounds from Python floats, i.e. doubles.
fn as_typed(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}
