//! A generation's text turned into what it goes through, in order: text chunks with their
//! tokens and frame budgets, and pauses (reference: `TTSModel.generate_audio_stream`'s
//! `split_into_best_sentences` and `_generate_audio_stream_short_text`; the opt-in
//! normalization and pause markup are ours, see [`pocket_tts_text::prep`]).

use std::collections::VecDeque;

use super::params::GenerationParams;
use super::sampling::PreparedChunk;
use super::TtsModel;
use crate::Result;
use pocket_tts_text::markup::pause_samples;
use pocket_tts_text::normalize::Language;
use pocket_tts_text::prep::{self, ModelInput, TextPrep};

/// One step of a generation's plan.
#[derive(Debug)]
pub(super) enum Planned {
    /// A text chunk to generate.
    Speech(PreparedChunk),
    /// Silence not yet yielded, in samples (never 0).
    Pause(usize),
}

impl Planned {
    /// Frames this step yields at most: the chunk's frame budget, or the pause's frames of
    /// at most `frame_len` samples.
    pub(super) fn max_frames(&self, frame_len: usize) -> usize {
        match self {
            Planned::Speech(c) => c.max_gen_len,
            Planned::Pause(n) => n.div_ceil(frame_len.max(1)),
        }
    }
}

/// Takes the next frame of silence off a pause at the front of `plan`: at most
/// `frame_len` samples; the pause leaves the plan with its last frame. `None` when the
/// front is not a pause.
pub(super) fn next_pause_frame(plan: &mut VecDeque<Planned>, frame_len: usize) -> Option<usize> {
    let Some(Planned::Pause(left)) = plan.front_mut() else {
        return None;
    };
    let n = (*left).min(frame_len.max(1));
    *left -= n;
    if *left == 0 {
        plan.pop_front();
    }
    Some(n)
}

impl TtsModel {
    /// The language of this model's text, for normalization: `explicit` if given, else the
    /// config's `language`, else the built-in config name's (see
    /// [`prep::text_language`]).
    ///
    /// # Errors
    /// [`crate::Error::InvalidData`] for a config `language` that is not a language.
    pub fn text_language(&self, explicit: Option<Language>) -> Result<Option<Language>> {
        Ok(prep::text_language(
            explicit,
            self.config.language.as_deref(),
            self.language.as_deref(),
        )?)
    }

    /// The opt-in text steps `params` ask for, the normalization's language resolved.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] when `params.normalize` is set and no language
    /// resolves ([`prep::require_text_language`]).
    pub fn text_prep(&self, params: &GenerationParams) -> Result<TextPrep> {
        let normalize = if params.normalize {
            Some(prep::require_text_language(
                params.text_language,
                self.config.language.as_deref(),
                self.language.as_deref(),
            )?)
        } else {
            None
        };
        Ok(TextPrep {
            normalize,
            markup: params.markup,
        })
    }

    /// The chunks and pauses of `text` exactly as the model reads them with `params`
    /// (`max_tokens`, `normalize`, `text_language`, `markup`): each chunk prepared and
    /// tokenized, in order (see [`prep::model_inputs`]).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for a text with nothing to speak or a malformed
    /// pause tag, and the errors of [`Self::text_prep`].
    pub fn model_inputs(&self, text: &str, params: &GenerationParams) -> Result<Vec<ModelInput>> {
        let prep = self.text_prep(params)?;
        Ok(prep::model_inputs(
            &self.tokenizer,
            text,
            params.max_tokens,
            &self.text_options,
            &prep,
        )?)
    }

    /// What a generation of `text` goes through: its chunks with their tokens and frame
    /// budgets (reference: `_generate_audio_stream_short_text`), and its pauses in samples.
    ///
    /// # Errors
    /// See [`Self::model_inputs`].
    pub(super) fn plan(&self, text: &str, params: &GenerationParams) -> Result<VecDeque<Planned>> {
        let rate = self.sample_rate();
        Ok(self
            .model_inputs(text, params)?
            .into_iter()
            .filter_map(|input| match input {
                ModelInput::Pause(ms) => {
                    let n = pause_samples(ms, rate);
                    (n > 0).then_some(Planned::Pause(n))
                }
                ModelInput::Chunk {
                    chunk,
                    tokens,
                    frames_after_eos_guess,
                    ..
                } => {
                    let max_gen_len = self.max_gen_len(tokens.len());
                    let frames_after_eos = params
                        .frames_after_eos
                        .or(self.config.model_recommended_frames_after_eos)
                        .unwrap_or(frames_after_eos_guess + 2);
                    Some(Planned::Speech(PreparedChunk {
                        text: chunk,
                        tokens,
                        max_gen_len,
                        frames_after_eos,
                    }))
                }
            })
            .collect())
    }
}
