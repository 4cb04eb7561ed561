//! The Candle runtime ([`Backend::Candle`]): the model definition's own Candle modules
//! ([`FlowLm`], [`Mimi`]) run tensor by tensor behind the [`Runtime`] traits. It is the
//! reference implementation inside this crate (the parity tests check it against the
//! Python package) and the way to Candle's other devices; the tensors it builds per frame
//! stay inside this file.

use std::sync::Arc;

use candle_core::{Device, Tensor};

use super::batch::SerialBatch;
use super::{Backend, FlowLmBatch, FlowLmSession, MimiSession, Runtime};
use crate::models::flow_lm::FlowLm;
use crate::models::mimi::{Mimi, MimiDecoderState};
use crate::models::model_state::VoiceState;
use crate::modules::transformer::TransformerState;
use crate::{Error, Result};

/// The Candle modules of one model (clones share the weights' storage).
#[derive(Debug)]
pub(crate) struct CandleRuntime {
    flow_lm: FlowLm,
    mimi: Arc<Mimi>,
    device: Device,
}

impl CandleRuntime {
    pub(crate) fn new(flow_lm: &FlowLm, mimi: Arc<Mimi>) -> Self {
        Self {
            device: flow_lm.emb_std.device().clone(),
            flow_lm: flow_lm.clone(),
            mimi,
        }
    }
}

/// Copies a 1-D or `[1, n]` tensor into `out`, checking its length.
fn copy_out(t: &Tensor, out: &mut [f32], what: &str) -> Result<()> {
    let v = t.flatten_all()?.to_vec1::<f32>()?;
    if v.len() != out.len() {
        return Err(Error::Internal(format!(
            "Candle runtime: {what} has {} values, expected {}",
            v.len(),
            out.len()
        )));
    }
    out.copy_from_slice(&v);
    Ok(())
}

impl Runtime for CandleRuntime {
    fn backend(&self) -> Backend {
        Backend::Candle
    }

    fn set_threads(&mut self, _threads: usize) -> Result<()> {
        // Candle's CPU kernels use their own thread pool.
        Ok(())
    }

    fn encode_audio(&self, samples: &[f32]) -> Result<(Vec<f32>, usize)> {
        let audio = Tensor::from_slice(samples, (1, 1, samples.len()), &self.device)?;
        let latents = self.mimi.encode_to_latent(&audio)?;
        let dim = latents.dim(2)?;
        Ok((latents.flatten_all()?.to_vec1::<f32>()?, dim))
    }

    fn voice_state_from_latents(&self, latents: &[f32], latent_dim: usize) -> Result<VoiceState> {
        if latent_dim == 0 || !latents.len().is_multiple_of(latent_dim) {
            return Err(Error::invalid_argument(format!(
                "voice latents: {} values are not whole frames of {latent_dim}",
                latents.len()
            )));
        }
        let frames = latents.len() / latent_dim;
        let latents = Tensor::from_slice(latents, (1, frames, latent_dim), &self.device)?;
        let cond = self.flow_lm.voice_conditioning(&latents)?;
        let mut state = self.flow_lm.init_state(cond.dim(1)?, &self.device)?;
        self.flow_lm.prefill(&cond, &mut state)?;
        Ok(state.to_voice()?)
    }

    fn flow_lm_session(&self) -> Result<Box<dyn FlowLmSession + '_>> {
        Ok(Box::new(CandleFlowLm {
            flow_lm: &self.flow_lm,
            device: &self.device,
            state: None,
        }))
    }

    fn flow_lm_batch(&self) -> Box<dyn FlowLmBatch + '_> {
        Box::new(SerialBatch::new(self, self.flow_lm.ldim()))
    }

    fn mimi_session(&self, _wide_first_frame: bool) -> Result<Box<dyn MimiSession>> {
        Ok(Box::new(CandleMimi {
            state: self.mimi.init_decoder_state(1, &self.device)?,
            mimi: Arc::clone(&self.mimi),
            device: self.device.clone(),
        }))
    }
}

/// [`FlowLmSession`] on the Candle [`FlowLm`]: each chunk forks the voice state.
struct CandleFlowLm<'a> {
    flow_lm: &'a FlowLm,
    device: &'a Device,
    state: Option<TransformerState>,
}

impl FlowLmSession for CandleFlowLm<'_> {
    fn start_chunk(
        &mut self,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()> {
        // Free the previous chunk's caches before forking the next.
        self.state = None;
        let capacity = voice.len() + tokens.len() + max_gen_len;
        let mut state = TransformerState::from_voice(voice, capacity, self.device)?;
        let embeddings = self.flow_lm.embed_text(tokens, self.device)?;
        self.flow_lm.prefill(&embeddings, &mut state)?;
        self.state = Some(state);
        Ok(())
    }

    fn step(
        &mut self,
        previous: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        _wide: bool,
        latent: &mut [f32],
    ) -> Result<f32> {
        let Some(state) = self.state.as_mut() else {
            return Err(Error::Internal(
                "FlowLM step before the first text chunk".into(),
            ));
        };
        let ldim = self.flow_lm.ldim();
        let previous = previous
            .map(|p| Tensor::from_slice(p, (1, ldim), self.device))
            .transpose()?;
        let noise = Tensor::from_slice(noise, (1, ldim), self.device)?;
        let out = self
            .flow_lm
            .step(previous.as_ref(), &noise, decode_steps, state)?;
        copy_out(&out.latent, latent, "the FlowLM latent")?;
        Ok(out.eos_logit)
    }

    fn export_state(&self) -> Result<Option<VoiceState>> {
        Ok(self.state.as_ref().map(|s| s.to_voice()).transpose()?)
    }
}

/// [`MimiSession`] on the Candle [`Mimi`].
struct CandleMimi {
    mimi: Arc<Mimi>,
    state: MimiDecoderState,
    device: Device,
}

impl MimiSession for CandleMimi {
    fn frame_len(&self) -> usize {
        self.mimi.channels() * self.mimi.frame_size()
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn reset(&mut self) -> Result<()> {
        self.state = self.mimi.init_decoder_state(1, &self.device)?;
        Ok(())
    }

    fn decode(&mut self, latent: &[f32], _first: bool, out: &mut [f32]) -> Result<()> {
        let x = Tensor::from_slice(latent, (1, 1, latent.len()), &self.device)?;
        let audio = self.mimi.decode_from_latent(&x, &mut self.state)?;
        copy_out(&audio, out, "the decoded Mimi frame")
    }
}
