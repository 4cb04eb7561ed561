//! [`MimiCodec`]: Mimi alone, apart from the FlowLM, for a process (a browser's Web
//! Worker) that decodes the latents another one generates
//! ([`TtsModel::generate_latent_stream`], [`super::LoadOptions::without_mimi`]) and
//! encodes voice prompts for it (reference: `TTSModel.mimi`, `_decode_audio_worker`,
//! `_encode_audio`).

use candle_core::{DType, Device};

use super::decoder::FrameDecoder;
use super::{AudioFrame, Latents, TtsModel};
use crate::audio;
use crate::config::Config;
use crate::models::mimi::MimiSource;
use crate::runtime::{CpuMimiHalf, CpuMimiParts};
use crate::weights::Checkpoint;
use crate::{Error, Result};

/// Mimi's decoder (repacked, as the CPU runtime holds it), its encoder (read on the first
/// voice prompt) and the FlowLM's latent statistics (`flow_lm.emb_std`, `emb_mean`,
/// `[ldim]`), which turn the FlowLM's normalised latents into Mimi's: no FlowLM weight.
pub struct MimiCodec {
    config: Config,
    half: CpuMimiHalf,
    emb_std: Vec<f32>,
    emb_mean: Vec<f32>,
}

impl std::fmt::Debug for MimiCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MimiCodec")
    }
}

impl MimiCodec {
    /// Reads Mimi from the bytes of a safetensors checkpoint (`weights_name` names it in
    /// messages): the `mimi.` tensors and `flow_lm.emb_std`, `flow_lm.emb_mean`; other
    /// `flow_lm.` tensors may be there and are not read. The bytes are kept (the encoder is
    /// read from them on the first voice prompt). One thread.
    ///
    /// # Errors
    /// [`Error::InvalidData`] naming the checkpoint and every missing, extra or
    /// mis-shaped `mimi.` tensor.
    pub fn from_bytes(config: Config, weights: Vec<u8>, weights_name: &str) -> Result<Self> {
        let device = Device::Cpu;
        let ckpt = Checkpoint::from_bytes(weights, weights_name)?;
        let vb = ckpt.var_builder(DType::F32, &device);
        let shapes = ckpt.shape_var_builder(DType::F32, &device);
        let context =
            |e: candle_core::Error| Error::InvalidData(format!("checkpoint {weights_name}: {e}"));
        let source =
            MimiSource::new(config.mimi.clone(), vb.pp("mimi")).with_shape_check(shapes.pp("mimi"));
        let parts = CpuMimiParts::new(source.clone())
            .and_then(|p| source.check_encoder_shapes().map_err(&context).map(|()| p));
        let ldim = config.latent_dim();
        let stats = vb.pp("flow_lm");
        let read = |name: &str| -> Result<Vec<f32>> {
            stats
                .get(ldim, name)
                .and_then(|t| t.to_vec1::<f32>())
                .map_err(&context)
        };
        let emb = read("emb_std").and_then(|s| Ok((s, read("emb_mean")?)));
        // Name and shape problems first: they explain most build failures.
        ckpt.finish(&["mimi."])?;
        let half = CpuMimiHalf::new(parts?);
        let (emb_std, emb_mean) = emb?;
        crate::memory::release_freed_memory();
        Ok(Self {
            config,
            half,
            emb_std,
            emb_mean,
        })
    }

    /// The config it was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Audio sample rate in Hz (24000).
    pub fn sample_rate(&self) -> usize {
        self.config.mimi.sample_rate
    }

    /// Samples per frame (1920: 80 ms at 24 kHz).
    pub fn frame_samples(&self) -> usize {
        self.config.mimi.frame_size()
    }

    /// A decoder for one generation, from a fresh state: give it the frames of one
    /// [`TtsModel::generate_latent_stream`] in order.
    ///
    /// # Errors
    /// [`Error::Internal`] if the latent statistics do not fit the decoder.
    pub fn decoder(&self) -> Result<LatentDecoder> {
        Ok(LatentDecoder {
            inner: FrameDecoder::new(
                self.half.session(),
                self.emb_std.clone(),
                self.emb_mean.clone(),
                self.sample_rate() / 200,
            )?,
        })
    }

    /// The Mimi latents of a voice prompt in an audio file's bytes (WAV, MP3, FLAC, OGG;
    /// `name`, the file's name, names it in messages and hints its format): decoded, cut
    /// to 30 s with `truncate`, resampled to the model rate, ended on a pause and encoded,
    /// as [`TtsModel::voice_state_from_audio_bytes`] does; give them to
    /// [`TtsModel::voice_state_from_latents`] for the same voice state.
    ///
    /// # Errors
    /// [`Error::InvalidData`] or [`Error::Unsupported`] naming `name` (unreadable or silent
    /// audio).
    pub fn voice_latents_from_audio_bytes(
        &self,
        bytes: &[u8],
        name: &str,
        truncate: bool,
    ) -> Result<Latents> {
        let samples =
            audio::voice_prompt_from_bytes(bytes, name, self.sample_rate() as u32, truncate)?;
        let (values, dim) = self.half.encode(&samples)?;
        Ok(Latents { values, dim })
    }
}

/// One generation's Mimi decoder ([`MimiCodec::decoder`]): the frames of a
/// [`TtsModel::generate_latent_stream`] in, their samples out.
pub struct LatentDecoder {
    inner: FrameDecoder,
}

impl std::fmt::Debug for LatentDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LatentDecoder")
    }
}

impl LatentDecoder {
    /// The samples of `frame` (1920 at 24 kHz; a pause's piece: its zeros), exactly those
    /// [`TtsModel::generate_stream`] gives it. Frames must come in the stream's order
    /// (each chunk's first frame resets the decoder and fades in).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`frame`) for a latent of the wrong width.
    pub fn decode(&mut self, frame: &AudioFrame) -> Result<Vec<f32>> {
        if frame.pause {
            return Ok(vec![0.0; frame.samples.len()]);
        }
        self.decode_latent(frame.chunk, frame.frame, &frame.latent)
    }

    /// [`Self::decode`] of frame `frame` of chunk `chunk`, with its normalised latent
    /// `[ldim]` (32 values).
    ///
    /// # Errors
    /// As [`Self::decode`].
    pub fn decode_latent(
        &mut self,
        chunk: usize,
        frame: usize,
        latent: &[f32],
    ) -> Result<Vec<f32>> {
        if latent.len() != self.inner.latent_dim() {
            return Err(Error::InvalidArgument {
                field: Some("frame"),
                message: format!(
                    "a latent has {} values, expected {}",
                    latent.len(),
                    self.inner.latent_dim()
                ),
            });
        }
        self.inner.decode_frame(chunk, frame, latent)
    }
}

impl TtsModel {
    /// The latent width of the FlowLM (32 for the released models).
    pub fn latent_dim(&self) -> usize {
        self.flow_lm.ldim()
    }
}
