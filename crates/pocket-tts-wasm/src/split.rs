//! The model in two Web Workers: [`FlowLmModel`] (the FlowLM: text in, latents out, one
//! [`crate::LatentFrame`] per 80 ms) in one, [`MimiModel`] (Mimi: latents in, audio out, and
//! voice prompts encoded) in the other, each loaded from its own part of the checkpoint,
//! so that two cores work without wasm threads (reference: `generate_audio_stream`,
//! whose decoder runs on a thread of its own).

use std::rc::Rc;

use pocket_tts_core::{LatentDecoder, Latents, MimiCodec, TtsModel};
use wasm_bindgen::prelude::*;

use crate::error::js_error;
use crate::generation::Generation;
use crate::model::{config_from, generation_params, Voice};

/// The FlowLM half of a model (reference: `TTSModel.flow_lm` with the tokenizer), one
/// thread: voice states and latents, no Mimi weight.
#[wasm_bindgen]
pub struct FlowLmModel {
    inner: Rc<TtsModel>,
}

#[wasm_bindgen]
impl FlowLmModel {
    /// Loads the FlowLM from bytes: as [`crate::Model::new`], but `weights` needs only the
    /// `flow_lm.` tensors (any `mimi.` tensor is not read).
    ///
    /// # Errors
    /// An `Error` naming the config field, checkpoint tensor or tokenizer at fault.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_yaml: Option<String>,
        weights: Vec<u8>,
        weights_name: &str,
        tokenizer: Vec<u8>,
        tokenizer_name: &str,
        quantize: bool,
    ) -> Result<FlowLmModel, JsError> {
        let inner = TtsModel::builder()
            .config(config_from(config_yaml)?, None)
            .from_bytes(weights, weights_name, tokenizer, tokenizer_name)
            .quantize(quantize)
            .without_mimi(true)
            .threads(1)
            .load()
            .map_err(js_error)?;
        Ok(FlowLmModel {
            inner: Rc::new(inner),
        })
    }

    /// The config's default temperature (`default_temperature`).
    #[wasm_bindgen(getter, js_name = defaultTemperature)]
    pub fn default_temperature(&self) -> f32 {
        self.inner.config().default_temperature
    }

    /// A voice state from the bytes of a `.safetensors` voice state (ours or the
    /// reference's `export_model_state`); `name` names it in messages.
    ///
    /// # Errors
    /// An `Error` naming the file and tensor when it does not fit this model.
    #[wasm_bindgen(js_name = voiceFromSafetensors)]
    pub fn voice_from_safetensors(&self, bytes: &[u8], name: &str) -> Result<Voice, JsError> {
        self.inner
            .voice_state_from_safetensors_bytes(bytes, name)
            .map(Voice::new)
            .map_err(js_error)
    }

    /// A voice state from the Mimi latents of a voice prompt
    /// ([`MimiModel::voice_latents`]: `values` `[frames, dim]` row-major) run through the
    /// FlowLM (reference: the prompt of `get_state_for_audio_prompt`).
    ///
    /// # Errors
    /// An `Error` for latents that are not whole frames of the model's latent width.
    #[wasm_bindgen(js_name = voiceFromLatents)]
    pub fn voice_from_latents(&self, values: Vec<f32>, dim: u32) -> Result<Voice, JsError> {
        let latents = Latents {
            values,
            dim: dim as usize,
        };
        self.inner
            .voice_state_from_latents(&latents)
            .map(Voice::new)
            .map_err(js_error)
    }

    /// Starts speaking `text` in `voice`: pull the latents with
    /// [`Generation::next_latent`] and decode them in order with a [`MimiDecoder`]
    /// (arguments and errors as [`crate::Model::generate`]).
    ///
    /// # Errors
    /// An `Error` naming the field for empty text or an out-of-range temperature.
    pub fn generate(
        &self,
        voice: &Voice,
        text: &str,
        temperature: Option<f32>,
        seed: Option<u32>,
    ) -> Result<Generation, JsError> {
        let params = generation_params(self.inner.config(), temperature, seed);
        Generation::start(self.inner.clone(), voice.shared(), text, &params, false)
    }
}

/// The Mimi half of a model (reference: `TTSModel.mimi`), one thread: decodes latents
/// and encodes voice prompts, no FlowLM weight.
#[wasm_bindgen]
pub struct MimiModel {
    inner: MimiCodec,
}

#[wasm_bindgen]
impl MimiModel {
    /// Loads Mimi from bytes: `weights` needs the `mimi.` tensors and `flow_lm.emb_std`,
    /// `flow_lm.emb_mean` (other `flow_lm.` tensors are not read); `config_yaml` as
    /// [`crate::Model::new`].
    ///
    /// # Errors
    /// An `Error` naming the config field or checkpoint tensor at fault.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_yaml: Option<String>,
        weights: Vec<u8>,
        weights_name: &str,
    ) -> Result<MimiModel, JsError> {
        let inner = MimiCodec::from_bytes(config_from(config_yaml)?, weights, weights_name)
            .map_err(js_error)?;
        Ok(MimiModel { inner })
    }

    /// Samples per second of the audio (24000).
    #[wasm_bindgen(getter, js_name = sampleRate)]
    pub fn sample_rate(&self) -> u32 {
        self.inner.sample_rate() as u32
    }

    /// Samples per frame (1920: 80 ms at 24 kHz).
    #[wasm_bindgen(getter, js_name = frameSamples)]
    pub fn frame_samples(&self) -> u32 {
        self.inner.frame_samples() as u32
    }

    /// The Mimi latents of a voice prompt in an audio file's bytes (WAV, MP3, FLAC, OGG;
    /// `name` is its file name): decoded, cut to 30 s, resampled to 24 kHz and encoded
    /// (reference: `get_state_for_audio_prompt`); give them to
    /// [`FlowLmModel::voice_from_latents`].
    ///
    /// # Errors
    /// An `Error` naming the file when it is not audio or is silent.
    #[wasm_bindgen(js_name = voiceLatents)]
    pub fn voice_latents(&self, bytes: &[u8], name: &str) -> Result<VoiceLatents, JsError> {
        self.inner
            .voice_latents_from_audio_bytes(bytes, name, true)
            .map(|l| VoiceLatents { inner: l })
            .map_err(js_error)
    }

    /// A decoder for one generation, from a fresh state.
    ///
    /// # Errors
    /// An `Error` if the model's parts do not fit together.
    pub fn decoder(&self) -> Result<MimiDecoder, JsError> {
        Ok(MimiDecoder {
            inner: self.inner.decoder().map_err(js_error)?,
        })
    }
}

/// The Mimi latents of a voice prompt: `[frames, dim]` row-major, 12.5 frames per second.
#[wasm_bindgen]
pub struct VoiceLatents {
    inner: Latents,
}

#[wasm_bindgen]
impl VoiceLatents {
    /// The values, `[frames, dim]` row-major.
    #[wasm_bindgen(getter)]
    pub fn values(&self) -> Vec<f32> {
        self.inner.values.clone()
    }

    /// Values per frame.
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> u32 {
        self.inner.dim as u32
    }
}

/// One generation's Mimi decoder ([`MimiModel::decoder`]).
#[wasm_bindgen]
pub struct MimiDecoder {
    inner: LatentDecoder,
}

#[wasm_bindgen]
impl MimiDecoder {
    /// The samples (1920 at 24 kHz) of frame `frame` of chunk `chunk` from its latent
    /// `[32]` ([`crate::LatentFrame`]'s fields), or `pause` zeros when `pause` is not 0 (then
    /// `latent` is not read). Frames must come in their generation's order.
    ///
    /// # Errors
    /// An `Error` for a latent of the wrong width.
    pub fn decode(
        &mut self,
        chunk: u32,
        frame: u32,
        pause: u32,
        latent: &[f32],
    ) -> Result<Vec<f32>, JsError> {
        if pause > 0 {
            return Ok(vec![0.0; pause as usize]);
        }
        self.inner
            .decode_latent(chunk as usize, frame as usize, latent)
            .map_err(js_error)
    }
}
