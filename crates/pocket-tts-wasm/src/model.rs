//! [`Model`] and [`Voice`]: a model and voice states built from bytes.

use std::rc::Rc;

use pocket_tts_core::{GenerationParams, TtsModel, VoiceState};
use wasm_bindgen::prelude::*;

use pocket_tts_core::config::Config;

use crate::error::js_error;
use crate::generation::Generation;

/// A loaded Pocket TTS model (reference: `TTSModel`), on the CPU runtime with one thread.
#[wasm_bindgen]
pub struct Model {
    inner: Rc<TtsModel>,
}

#[wasm_bindgen]
impl Model {
    /// Loads a model from bytes (reference: `TTSModel.load_model`).
    ///
    /// * `config_yaml`: the text of a config file in the reference's schema, or
    ///   `undefined` for the built-in English config. Its file paths are not read: the
    ///   checkpoint and tokenizer are the bytes below.
    /// * `weights`: a whole-model safetensors checkpoint (`flow_lm.…`, `mimi.…`);
    ///   `weights_name` names it in messages.
    /// * `tokenizer`: the tokenizer file (`tokenizer.model` or `tokenizer.json`);
    ///   `tokenizer_name` is its file name, whose suffix chooses its kind.
    /// * `quantize`: int8 FlowLM linears, computed at load (reference: `quantize=True`).
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
    ) -> Result<Model, JsError> {
        let config = config_from(config_yaml)?;
        let inner = TtsModel::builder()
            .config(config, None)
            .from_bytes(weights, weights_name, tokenizer, tokenizer_name)
            .quantize(quantize)
            .threads(1)
            .load()
            .map_err(js_error)?;
        Ok(Model {
            inner: Rc::new(inner),
        })
    }

    /// Samples per second of the audio (24000).
    #[wasm_bindgen(getter, js_name = sampleRate)]
    pub fn sample_rate(&self) -> u32 {
        self.inner.sample_rate() as u32
    }

    /// Samples per frame (1920: 80 ms at 24 kHz).
    #[wasm_bindgen(getter, js_name = frameSamples)]
    pub fn frame_samples(&self) -> u32 {
        self.inner.config().mimi.frame_size() as u32
    }

    /// The config's default temperature (`default_temperature`).
    #[wasm_bindgen(getter, js_name = defaultTemperature)]
    pub fn default_temperature(&self) -> f32 {
        self.inner.config().default_temperature
    }

    /// A voice state from the bytes of an audio file (WAV, MP3, FLAC, OGG; `name` is its
    /// file name, which names it in messages and hints its format): decoded, cut to 30 s,
    /// resampled to 24 kHz and encoded by Mimi (reference: `get_state_for_audio_prompt`).
    ///
    /// # Errors
    /// An `Error` naming the file when it is not audio, is silent, or the model has no
    /// voice cloning.
    #[wasm_bindgen(js_name = voiceFromAudio)]
    pub fn voice_from_audio(&self, bytes: &[u8], name: &str) -> Result<Voice, JsError> {
        let state = self
            .inner
            .voice_state_from_audio_bytes(bytes, name, true)
            .map_err(js_error)?;
        Ok(Voice {
            inner: Rc::new(state),
        })
    }

    /// A voice state from the bytes of a `.safetensors` voice state (ours or the
    /// reference's `export_model_state`); `name` names it in messages.
    ///
    /// # Errors
    /// An `Error` naming the file and tensor when it does not fit this model.
    #[wasm_bindgen(js_name = voiceFromSafetensors)]
    pub fn voice_from_safetensors(&self, bytes: &[u8], name: &str) -> Result<Voice, JsError> {
        let state = self
            .inner
            .voice_state_from_safetensors_bytes(bytes, name)
            .map_err(js_error)?;
        Ok(Voice {
            inner: Rc::new(state),
        })
    }

    /// Starts speaking `text` in `voice` (reference: `generate_audio_stream`); pull the
    /// frames with [`Generation::next_frame`].
    ///
    /// * `temperature`: the flow sampler's noise variance (0: deterministic); `undefined`
    ///   for the config's default.
    /// * `seed`: the sampling noise's seed (torch's `manual_seed`); `undefined` for a
    ///   random one.
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
        Generation::start(self.inner.clone(), voice.inner.clone(), text, &params, true)
    }
}

/// The generation parameters of a page's request: the config's defaults, the
/// `temperature` when given, the noise `seed` when given (else random). Shared by
/// [`Model::generate`] and [`crate::FlowLmModel::generate`].
pub(crate) fn generation_params(
    config: &Config,
    temperature: Option<f32>,
    seed: Option<u32>,
) -> GenerationParams {
    let mut params = GenerationParams::for_config(config);
    if let Some(t) = temperature {
        params.temperature = t;
    }
    params.seed = seed.map(u64::from);
    params
}

/// A voice state (reference: the model state after the voice prompt), plain data.
#[wasm_bindgen]
pub struct Voice {
    inner: Rc<VoiceState>,
}

impl Voice {
    pub(crate) fn new(state: VoiceState) -> Voice {
        Voice {
            inner: Rc::new(state),
        }
    }

    pub(crate) fn shared(&self) -> Rc<VoiceState> {
        self.inner.clone()
    }
}

#[wasm_bindgen]
impl Voice {
    /// The voice prompt's length in frames (12.5 per second).
    #[wasm_bindgen(getter)]
    pub fn frames(&self) -> u32 {
        self.inner.len() as u32
    }

    /// The voice state as a `.safetensors` file's bytes (reference: `export_model_state`).
    ///
    /// # Errors
    /// An `Error` if the state cannot be serialized.
    #[wasm_bindgen(js_name = toSafetensors)]
    pub fn to_safetensors(&self) -> Result<Vec<u8>, JsError> {
        self.inner.to_safetensors_bytes().map_err(js_error)
    }
}

/// The config given as YAML text, or the built-in English one.
pub(crate) fn config_from(config_yaml: Option<String>) -> Result<Config, JsError> {
    match config_yaml {
        Some(text) => Config::from_yaml_str(&text, "config").map_err(js_error),
        None => Ok(Config::english()),
    }
}
