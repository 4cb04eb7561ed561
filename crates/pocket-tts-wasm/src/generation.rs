//! [`Generation`]: one text being spoken, pulled frame by frame from JavaScript.

use std::rc::Rc;

use pocket_tts_core::{AudioStream, GenerationParams, TtsModel, VoiceState};
use wasm_bindgen::prelude::*;

use crate::error::js_error;

/// What a generation borrows: the model and the voice.
struct Owner {
    model: Rc<TtsModel>,
    voice: Rc<VoiceState>,
}

type Stream<'a> = AudioStream<'a>;

self_cell::self_cell!(
    /// The core's stream beside the model and voice it borrows.
    struct Cell {
        owner: Owner,
        #[not_covariant]
        dependent: Stream,
    }
);

/// One text being spoken (reference: `generate_audio_stream`): [`Self::next_frame`]
/// runs one FlowLM step and one Mimi decode and returns the frame's samples (a
/// [`crate::Model`] generation); [`Self::next_latent`] runs one FlowLM step and returns its
/// latent (a [`crate::FlowLmModel`] generation, decoded by a [`crate::MimiDecoder`]).
#[wasm_bindgen]
pub struct Generation {
    cell: Option<Cell>,
    max_frames: usize,
}

impl Generation {
    /// `f` of the stream's timings, or 0 once the generation is over.
    fn stats(&self, f: impl FnOnce(&pocket_tts_core::GenerationStats) -> f64) -> f64 {
        self.cell
            .as_ref()
            .map_or(0.0, |c| c.with_dependent(|_, s| f(s.stats())))
    }

    /// Plans `text` and prepares the stream (nothing runs until the first frame):
    /// decoded frames (`decode`, [`Self::next_frame`]) or latents ([`Self::next_latent`]).
    pub(crate) fn start(
        model: Rc<TtsModel>,
        voice: Rc<VoiceState>,
        text: &str,
        params: &GenerationParams,
        decode: bool,
    ) -> Result<Generation, JsError> {
        let mut max_frames = 0;
        let cell = Cell::try_new(Owner { model, voice }, |o| {
            let stream = if decode {
                o.model.generate_stream(&o.voice, text, params)?
            } else {
                o.model.generate_latent_stream(&o.voice, text, params)?
            };
            max_frames = stream.max_frames();
            Ok::<_, pocket_tts_core::Error>(stream)
        })
        .map_err(js_error)?;
        Ok(Generation {
            cell: Some(cell),
            max_frames,
        })
    }
}

#[wasm_bindgen]
impl Generation {
    /// The next frame's samples (1920 at 24 kHz, 80 ms; a pause's piece may be shorter),
    /// or `undefined` once the text is spoken or the generation was cancelled.
    ///
    /// # Errors
    /// An `Error` if the model fails; the generation is over then.
    #[wasm_bindgen(js_name = nextFrame)]
    pub fn next_frame(&mut self) -> Result<Option<Vec<f32>>, JsError> {
        let Some(cell) = self.cell.as_mut() else {
            return Ok(None);
        };
        match cell.with_dependent_mut(|_, stream| stream.next()) {
            Some(Ok(frame)) => Ok(Some(frame.samples)),
            Some(Err(e)) => {
                self.cell = None;
                Err(js_error(e))
            }
            None => {
                self.cell = None;
                Ok(None)
            }
        }
    }

    /// The next frame's latent (a [`crate::FlowLmModel`] generation: one FlowLM step, no
    /// decoding), or `undefined` once the text is spoken or the generation was cancelled.
    ///
    /// # Errors
    /// An `Error` if the model fails; the generation is over then.
    #[wasm_bindgen(js_name = nextLatent)]
    pub fn next_latent(&mut self) -> Result<Option<LatentFrame>, JsError> {
        let Some(cell) = self.cell.as_mut() else {
            return Ok(None);
        };
        match cell.with_dependent_mut(|_, stream| stream.next()) {
            Some(Ok(f)) => Ok(Some(LatentFrame {
                chunk: f.chunk,
                frame: f.frame,
                pause: if f.pause { f.samples.len() } else { 0 },
                latent: f.latent,
            })),
            Some(Err(e)) => {
                self.cell = None;
                Err(js_error(e))
            }
            None => {
                self.cell = None;
                Ok(None)
            }
        }
    }

    /// Stops the generation: frees its state; [`Self::next_frame`] returns `undefined`.
    pub fn cancel(&mut self) {
        self.cell = None;
    }

    /// Text prefill time so far, in ms (every chunk started: the voice state's copy,
    /// the text embedding and the FlowLM prefill); 0 once the generation is over.
    #[wasm_bindgen(getter, js_name = prefillMs)]
    pub fn prefill_ms(&self) -> f64 {
        self.stats(|s| s.prefill.as_secs_f64() * 1e3)
    }

    /// The first FlowLM step's time, in ms (noise sampling and the flow head included);
    /// 0 before it or once the generation is over.
    #[wasm_bindgen(getter, js_name = firstStepMs)]
    pub fn first_step_ms(&self) -> f64 {
        self.stats(|s| {
            s.lm_step_times
                .first()
                .map_or(0.0, |d| d.as_secs_f64() * 1e3)
        })
    }

    /// The first Mimi frame's decoding time, in ms; 0 before it or once the generation is
    /// over.
    #[wasm_bindgen(getter, js_name = firstDecodeMs)]
    pub fn first_decode_ms(&self) -> f64 {
        self.stats(|s| {
            s.decode_times
                .first()
                .map_or(0.0, |d| d.as_secs_f64() * 1e3)
        })
    }

    /// The most frames this generation can make (each text chunk's budget; it usually
    /// ends earlier, at the end of speech).
    #[wasm_bindgen(getter, js_name = maxFrames)]
    pub fn max_frames(&self) -> u32 {
        self.max_frames as u32
    }
}

/// One frame of a latent generation ([`Generation::next_latent`]): where it goes and
/// its latent, or a piece of a pause.
#[wasm_bindgen]
pub struct LatentFrame {
    pub(crate) chunk: usize,
    pub(crate) frame: usize,
    pub(crate) pause: usize,
    pub(crate) latent: Vec<f32>,
}

#[wasm_bindgen]
impl LatentFrame {
    /// The text chunk it belongs to.
    #[wasm_bindgen(getter)]
    pub fn chunk(&self) -> u32 {
        self.chunk as u32
    }

    /// Its index in the chunk (0 starts the chunk's audio).
    #[wasm_bindgen(getter)]
    pub fn frame(&self) -> u32 {
        self.frame as u32
    }

    /// Samples of silence when this is a piece of a pause, else 0.
    #[wasm_bindgen(getter)]
    pub fn pause(&self) -> u32 {
        self.pause as u32
    }

    /// The FlowLM's normalised latent `[32]` (empty for a pause).
    #[wasm_bindgen(getter)]
    pub fn latent(&self) -> Vec<f32> {
        self.latent.clone()
    }
}
