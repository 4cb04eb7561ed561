//! Voices: predefined voices from the hub, voice states (`.safetensors`) and voice
//! cloning from an audio prompt (reference: `TTSModel.get_state_for_audio_prompt`,
//! `utils.get_predefined_voice`).

use std::path::Path;

use super::TtsModel;
use crate::audio;
use crate::hub;
use crate::models::model_state::VoiceState;
use crate::{Error, Result};

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

impl TtsModel {
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
        let (latents, c) = self.runtime.encode_audio(&prompt)?;
        self.runtime.voice_state_from_latents(&latents, c)
    }

    /// Mimi latents of mono audio at the model rate (reference:
    /// `MimiModel.encode_to_latent`): [`Latents`] `[frames, dim]`, 12.5 frames per second.
    ///
    /// # Errors
    /// The runtime's errors (a prompt too short for the encoder's first frame).
    pub fn encode_audio(&self, samples: &[f32]) -> Result<Latents> {
        let (values, dim) = self.runtime.encode_audio(samples)?;
        Ok(Latents { values, dim })
    }

    /// Prompts the FlowLM with the Mimi latents of a voice (reference:
    /// `TTSModel._encode_audio` then the prompt of `get_state_for_audio_prompt`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for latents that are not whole frames of the model's
    /// latent dimension.
    pub fn voice_state_from_latents(&self, latents: &Latents) -> Result<VoiceState> {
        self.runtime
            .voice_state_from_latents(&latents.values, latents.dim)
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
        )
    }

    /// A voice state from the bytes of a `.safetensors` voice state (ours or the
    /// reference's export), for callers without files (the WebAssembly build); `name` names
    /// it in messages.
    ///
    /// # Errors
    /// See [`VoiceState::from_safetensors_bytes`].
    pub fn voice_state_from_safetensors_bytes(
        &self,
        bytes: &[u8],
        name: &str,
    ) -> Result<VoiceState> {
        let (kv_heads, head_dim) = self.flow_lm.transformer.cache_geometry();
        VoiceState::from_safetensors_bytes(
            bytes,
            self.flow_lm.transformer.num_layers(),
            kv_heads,
            head_dim,
            name,
        )
    }

    /// Resolves a voice (the CLI's `--voice`): a `.safetensors` voice state (local or `hf://`), a
    /// predefined voice name (downloaded from the hub, built-in language configs only),
    /// or an audio file (local or `hf://`; WAV, MP3, FLAC, OGG), resampled to the model
    /// rate. With `truncate`, audio is cut to 30 s (as `export-voice` does). `hf://` files
    /// are downloaded only if the model was built with [`super::TtsModelBuilder::download`].
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::InvalidData`] or [`Error::Unsupported`] naming the voice.
    pub fn voice_state(&self, voice: &str, truncate: bool) -> Result<VoiceState> {
        let base = voice.split('@').next().unwrap_or(voice);
        if base.ends_with(".safetensors") {
            let path = hub::resolve_with(voice, None, self.download)?;
            return self.load_voice_state(&path);
        }
        if PREDEFINED_VOICES.contains(&voice) && !Path::new(voice).exists() {
            let Some(lang) = &self.language else {
                return Err(Error::invalid_argument(format!(
                    "predefined voice {voice:?} needs one of the built-in language models; \
                     with a custom config pass an audio file or a .safetensors voice state"
                )));
            };
            let spec = format!(
                "hf://kyutai/pocket-tts-without-voice-cloning/languages/{lang}/embeddings/{voice}.safetensors@{PREDEFINED_VOICES_REVISION}"
            );
            let path = hub::resolve_with(&spec, None, self.download)?;
            return self.load_voice_state(&path);
        }
        let path = hub::resolve_with(voice, None, self.download).map_err(|e| match e {
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
        let (latents, c) = self.runtime.encode_audio(&samples)?;
        self.runtime.voice_state_from_latents(&latents, c)
    }

    /// Clones a voice from an audio file held in memory (an upload; WAV, MP3, FLAC, OGG),
    /// as [`Self::voice_state`] does from a file: cut to 30 s with `truncate`, resampled to
    /// the model rate, ended on a pause. `name` (the upload's file name) names it in
    /// messages and its extension hints the format. Nothing is written to disk.
    ///
    /// # Errors
    /// [`Error::InvalidData`] or [`Error::Unsupported`] naming `name` (unreadable or silent
    /// audio), [`Error::Unsupported`] when the model has no voice cloning.
    pub fn voice_state_from_audio_bytes(
        &self,
        bytes: &[u8],
        name: &str,
        truncate: bool,
    ) -> Result<VoiceState> {
        if !self.has_voice_cloning {
            return Err(Error::Unsupported(
                "this model was loaded without voice cloning: use a predefined voice or a .safetensors voice state".into(),
            ));
        }
        let samples =
            audio::voice_prompt_from_bytes(bytes, name, self.sample_rate() as u32, truncate)?;
        let (latents, c) = self.runtime.encode_audio(&samples)?;
        self.runtime.voice_state_from_latents(&latents, c)
    }
}

/// Mimi latents of an audio prompt ([`TtsModel::encode_audio`]): `values` holds
/// `[frames, dim]` row-major, one frame per 80 ms (12.5 Hz).
#[derive(Debug, Clone, PartialEq)]
pub struct Latents {
    /// `[frames, dim]`, row-major.
    pub values: Vec<f32>,
    /// Values per frame (the model's latent dimension, 32 for the released models).
    pub dim: usize,
}

impl Latents {
    /// Frames held (`values.len() / dim`).
    pub fn frames(&self) -> usize {
        self.values.len().checked_div(self.dim).unwrap_or(0)
    }
}
