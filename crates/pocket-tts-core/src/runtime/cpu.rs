//! The CPU runtime ([`Backend::Cpu`]): the allocation-free runtimes of [`crate::internals::fast`]
//! behind the [`Runtime`] traits.

use std::sync::{Arc, OnceLock};

use super::batch::{check_outputs, close_slot, no_slot, put_in_free_slot, slot_mut};
use super::{Backend, BatchStep, FlowLmBatch, FlowLmSession, MimiJob, MimiSession, Runtime};
use crate::fast::flow_lm::{BatchInput, BatchItem, BatchScratch, FlowLmFast, FlowLmFastState};
use crate::fast::mimi::{
    MimiDecoderFast, MimiDecoderFastState, MimiEncoderFast, MimiFrame, MimiScratch,
};
use crate::models::flow_lm::FlowLm;
use crate::models::mimi::MimiSource;
use crate::models::model_state::VoiceState;
use crate::Result;

/// `FlowLmFast`, `MimiDecoderFast` and `MimiEncoderFast` over one model's weights.
pub(crate) struct CpuRuntime {
    flow_lm: FlowLmFast,
    /// `None` for a model loaded without Mimi ([`crate::LoadOptions::without_mimi`]).
    decoder: Option<Arc<MimiDecoderFast>>,
    /// Built on the first voice prompt to encode: a model given voice states or
    /// predefined voices never holds the encoder's repacked weights (~40 MB at full size).
    encoder: OnceLock<MimiEncoderFast>,
    /// Where the encoder's weights are read from when it is built (the Candle encoder is
    /// loaded, repacked and dropped: only the repacked copy stays); `None` without Mimi.
    source: Option<MimiSource>,
    /// Threads of the encoder (see `Runtime::set_threads`).
    encoder_threads: usize,
    /// Whether `encoder` keeps the encoder between prompts (see
    /// `Runtime::set_keep_voice_encoder`).
    keep_encoder: bool,
}

impl std::fmt::Debug for CpuRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CpuRuntime")
    }
}

/// The Mimi half of the CPU runtime: the repacked decoder (which holds no Candle tensor)
/// and where to read the encoder from.
pub(crate) struct CpuMimiParts {
    decoder: MimiDecoderFast,
    source: MimiSource,
}

/// Threads for the work that runs alone: voice encoding, and the stream's first frame,
/// decoded while the FlowLM waits for it.
fn wide_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2))
}

impl CpuMimiParts {
    /// Reads the decoder from `source` part by part into its repacked form
    /// ([`MimiDecoderFast::from_source`]); the encoder is read on first use.
    pub(crate) fn new(source: MimiSource) -> Result<Self> {
        let mut decoder = MimiDecoderFast::from_source(&source, 1)?;
        decoder.set_wide_threads(wide_threads())?;
        Ok(Self { decoder, source })
    }
}

/// Mimi alone on the CPU runtime (the core's `MimiCodec`, beside a model loaded without
/// Mimi): the repacked decoder, and the encoder read from the source on first use, one
/// thread.
pub(crate) struct CpuMimiHalf {
    decoder: Arc<MimiDecoderFast>,
    source: MimiSource,
    encoder: OnceLock<MimiEncoderFast>,
}

impl CpuMimiHalf {
    pub(crate) fn new(parts: CpuMimiParts) -> Self {
        Self {
            decoder: Arc::new(parts.decoder),
            source: parts.source,
            encoder: OnceLock::new(),
        }
    }

    /// A decoder session for one stream.
    pub(crate) fn session(&self) -> Box<dyn MimiSession> {
        mimi_session(&self.decoder)
    }

    /// The latents of mono samples at the model rate, `[frames, dim]`, and `dim`.
    pub(crate) fn encode(&self, samples: &[f32]) -> Result<(Vec<f32>, usize)> {
        let encoder = match self.encoder.get() {
            Some(e) => e,
            None => {
                let e = MimiEncoderFast::from_source(&self.source, 1)?;
                crate::memory::release_freed_memory();
                let _ = self.encoder.set(e);
                self.encoder
                    .get()
                    .ok_or_else(|| crate::Error::Internal("the Mimi encoder was not kept".into()))?
            }
        };
        Ok((encoder.encode(samples)?, encoder.latent_dim()))
    }
}

/// The error of a Mimi operation on a model loaded without Mimi.
fn no_mimi(what: &str) -> crate::Error {
    crate::Error::Unsupported(format!(
        "{what} needs Mimi, and this model was loaded without it (LoadOptions::without_mimi): \
         use the MimiCodec loaded beside it"
    ))
}

/// A decoder session ([`MimiSession`]) of `decoder` for one stream (one thread: its
/// first frame is decoded like the others).
fn mimi_session(decoder: &Arc<MimiDecoderFast>) -> Box<dyn MimiSession> {
    Box::new(CpuMimi {
        state: decoder.new_state(),
        decoder: Arc::clone(decoder),
        wide_first_frame: false,
    })
}

impl CpuRuntime {
    /// `mimi`: `None` for a model without Mimi ([`crate::LoadOptions::without_mimi`]).
    pub(crate) fn new(flow_lm: &FlowLm, mimi: Option<CpuMimiParts>) -> Result<Self> {
        let (decoder, source) = match mimi {
            Some(m) => (Some(Arc::new(m.decoder)), Some(m.source)),
            None => (None, None),
        };
        Ok(Self {
            flow_lm: FlowLmFast::new(flow_lm)?,
            decoder,
            encoder: OnceLock::new(),
            source,
            encoder_threads: wide_threads(),
            keep_encoder: true,
        })
    }

    /// A voice encoder read from the source (`encoder_threads` threads).
    fn build_encoder(&self) -> Result<MimiEncoderFast> {
        let source = self
            .source
            .as_ref()
            .ok_or_else(|| no_mimi("encoding a voice prompt"))?;
        let mut e = MimiEncoderFast::from_source(source, self.encoder_threads)?;
        crate::memory::release_freed_memory();
        e.set_threads(self.encoder_threads)?;
        Ok(e)
    }

    /// The voice encoder, built on first use and kept.
    fn encoder(&self) -> Result<&MimiEncoderFast> {
        if let Some(e) = self.encoder.get() {
            return Ok(e);
        }
        let e = self.build_encoder()?;
        // Two threads racing to build it keep the first one; both are the same.
        let _ = self.encoder.set(e);
        self.encoder
            .get()
            .ok_or_else(|| crate::Error::Internal("the Mimi encoder was not kept".into()))
    }
}

impl Runtime for CpuRuntime {
    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    fn set_threads(&mut self, threads: usize) -> Result<()> {
        // The text prefill runs before the first frame, when the decoder thread is idle.
        self.flow_lm.set_prefill_threads(threads.min(2));
        // Voice prompts are encoded while nothing else runs.
        self.encoder_threads = threads.max(1);
        match self.encoder.get_mut() {
            Some(e) => e.set_threads(threads),
            None => Ok(()),
        }
    }

    fn encode_audio(&self, samples: &[f32]) -> Result<(Vec<f32>, usize)> {
        if self.keep_encoder {
            let encoder = self.encoder()?;
            return Ok((encoder.encode(samples)?, encoder.latent_dim()));
        }
        // Built for this prompt alone and freed before the caller goes on.
        let encoder = self.build_encoder()?;
        let latents = encoder.encode(samples)?;
        let dim = encoder.latent_dim();
        drop(encoder);
        crate::memory::release_freed_memory();
        Ok((latents, dim))
    }

    fn set_keep_voice_encoder(&mut self, keep: bool) {
        self.keep_encoder = keep;
        if !keep && self.encoder.take().is_some() {
            crate::memory::release_freed_memory();
        }
    }

    fn voice_state_from_latents(&self, latents: &[f32], _latent_dim: usize) -> Result<VoiceState> {
        let mut cond = Vec::new();
        self.flow_lm.voice_conditioning(latents, &mut cond)?;
        let t = cond.len() / self.flow_lm.dim();
        let mut state = self.flow_lm.new_state(t);
        self.flow_lm.prefill(&cond, t, &mut state)?;
        self.flow_lm.export_voice(&state)
    }

    fn flow_lm_session(&self) -> Result<Box<dyn FlowLmSession + '_>> {
        Ok(Box::new(CpuFlowLm {
            fast: &self.flow_lm,
            state: None,
            embeddings: Vec::new(),
        }))
    }

    fn flow_lm_batch(&self) -> Box<dyn FlowLmBatch + '_> {
        Box::new(CpuBatch {
            fast: &self.flow_lm,
            slots: Vec::new(),
            scratch: BatchScratch::default(),
            narrow: None,
            wide: true,
        })
    }

    fn mimi_session(&self, wide_first_frame: bool) -> Result<Box<dyn MimiSession>> {
        let decoder = self
            .decoder
            .as_ref()
            .ok_or_else(|| no_mimi("decoding audio"))?;
        Ok(Box::new(CpuMimi {
            state: decoder.new_state(),
            decoder: Arc::clone(decoder),
            wide_first_frame,
        }))
    }
}

/// [`FlowLmSession`] on `FlowLmFast`: the state's buffers are reused from chunk to chunk.
struct CpuFlowLm<'a> {
    fast: &'a FlowLmFast,
    state: Option<FlowLmFastState>,
    embeddings: Vec<f32>,
}

impl FlowLmSession for CpuFlowLm<'_> {
    fn start_chunk(
        &mut self,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()> {
        let extra = tokens.len() + max_gen_len;
        let state = self
            .state
            .get_or_insert_with(|| self.fast.new_state(voice.len() + extra));
        self.fast.load_voice(voice, state, extra)?;
        self.fast.embed_tokens(tokens, &mut self.embeddings)?;
        self.fast.prefill(&self.embeddings, tokens.len(), state)
    }

    fn step(
        &mut self,
        previous: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        wide: bool,
        latent: &mut [f32],
    ) -> Result<f32> {
        let Some(state) = self.state.as_mut() else {
            return Err(crate::Error::Internal(
                "FlowLM step before the first text chunk".into(),
            ));
        };
        let step = if wide {
            FlowLmFast::step_wide
        } else {
            FlowLmFast::step
        };
        step(self.fast, previous, noise, decode_steps, state, latent)
    }

    fn export_state(&self) -> Result<Option<VoiceState>> {
        self.state
            .as_ref()
            .map(|state| self.fast.export_voice(state))
            .transpose()
    }
}

/// One generation of a [`CpuBatch`]: its FlowLM state and the text embeddings still to
/// prefill.
struct CpuSlot {
    state: Option<FlowLmFastState>,
    embeddings: Vec<f32>,
    /// Positions of `embeddings` already prefilled.
    fed: usize,
}

/// [`FlowLmBatch`] on `FlowLmFast::forward_batch`: every slot's prefill piece and step
/// in one pass that reads each weight once.
struct CpuBatch<'a> {
    fast: &'a FlowLmFast,
    slots: Vec<Option<CpuSlot>>,
    scratch: BatchScratch,
    /// One thread for the passes, made on the first `set_wide(false)`: the pass then
    /// leaves the other core to the Mimi frames decoded beside it.
    narrow: Option<pocket_tts_simd::Team>,
    wide: bool,
}

impl CpuBatch<'_> {
    fn slot(&mut self, slot: usize) -> Result<&mut CpuSlot> {
        slot_mut(&mut self.slots, slot)
    }
}

impl FlowLmBatch for CpuBatch<'_> {
    fn open(&mut self) -> Result<usize> {
        let slot = CpuSlot {
            state: None,
            embeddings: Vec::new(),
            fed: 0,
        };
        Ok(put_in_free_slot(&mut self.slots, slot))
    }

    fn close(&mut self, slot: usize) {
        close_slot(&mut self.slots, slot);
    }

    fn start_chunk(
        &mut self,
        slot: usize,
        voice: &VoiceState,
        tokens: &[u32],
        max_gen_len: usize,
    ) -> Result<()> {
        let fast = self.fast;
        let s = self.slot(slot)?;
        let extra = tokens.len() + max_gen_len;
        let state = s
            .state
            .get_or_insert_with(|| fast.new_state(voice.len() + extra));
        fast.load_voice(voice, state, extra)?;
        fast.embed_tokens(tokens, &mut s.embeddings)?;
        s.fed = 0;
        Ok(())
    }

    fn pending_prefill(&self, slot: usize) -> usize {
        self.slots
            .get(slot)
            .and_then(Option::as_ref)
            .map_or(0, |s| s.embeddings.len() / self.fast.dim() - s.fed)
    }

    fn set_wide(&mut self, wide: bool) {
        self.wide = wide;
        if !wide && self.narrow.is_none() {
            self.narrow = Some(pocket_tts_simd::Team::new(1));
        }
    }

    fn run(
        &mut self,
        prefill: &[(usize, usize)],
        steps: &[BatchStep<'_>],
        latents: &mut [f32],
        eos: &mut [f32],
    ) -> Result<()> {
        let (d, ldim) = (self.fast.dim(), self.fast.ldim());
        check_outputs(steps.len(), ldim, latents, eos)?;
        for &(slot, _) in prefill {
            self.slot(slot)?;
        }
        // Items in slot order; `order[k]`: the caller's index of the k-th step item.
        let mut items = Vec::with_capacity(prefill.len() + steps.len());
        let mut order = Vec::with_capacity(steps.len());
        for (i, s) in self.slots.iter_mut().enumerate() {
            let Some(s) = s.as_mut() else { continue };
            let Some(state) = s.state.as_mut() else {
                if prefill.iter().any(|p| p.0 == i) || steps.iter().any(|p| p.slot == i) {
                    return Err(crate::Error::Internal(format!(
                        "FlowLM batch: slot {i} has no text chunk"
                    )));
                }
                continue;
            };
            let step = steps.iter().position(|p| p.slot == i);
            let piece = prefill.iter().find(|p| p.0 == i).map(|p| p.1);
            let input = match (step, piece) {
                (Some(k), None) => {
                    let st = &steps[k];
                    order.push(k);
                    BatchInput::Step {
                        previous: st.previous,
                        noise: st.noise,
                        decode_steps: st.decode_steps,
                    }
                }
                (None, Some(n)) => {
                    let rows = s.embeddings.len() / d;
                    let n = n.min(rows - s.fed);
                    if n == 0 {
                        continue;
                    }
                    let e = &s.embeddings[s.fed * d..(s.fed + n) * d];
                    s.fed += n;
                    BatchInput::Prefill { embeddings: e }
                }
                (None, None) => continue,
                (Some(_), Some(_)) => {
                    return Err(crate::Error::Internal(format!(
                        "FlowLM batch: slot {i} given a step and a prefill in one pass"
                    )))
                }
            };
            items.push(BatchItem { state, input });
        }
        if order.len() != steps.len() {
            return Err(no_slot(steps.iter().map(|s| s.slot).max().unwrap_or(0)));
        }
        let mut out = vec![0f32; steps.len() * ldim];
        let mut out_eos = vec![0f32; steps.len()];
        let team = match (&self.narrow, self.wide) {
            (Some(narrow), false) => narrow,
            _ => self.fast.wide_team(),
        };
        self.fast
            .forward_batch_on(&mut items, &mut self.scratch, &mut out, &mut out_eos, team)?;
        for (j, &k) in order.iter().enumerate() {
            latents[k * ldim..(k + 1) * ldim].copy_from_slice(&out[j * ldim..(j + 1) * ldim]);
            eos[k] = out_eos[j];
        }
        Ok(())
    }
}

/// [`MimiSession`] on `MimiDecoderFast` (allocation-free per frame).
struct CpuMimi {
    decoder: Arc<MimiDecoderFast>,
    state: MimiDecoderFastState,
    wide_first_frame: bool,
}

impl MimiSession for CpuMimi {
    fn frame_len(&self) -> usize {
        self.decoder.channels() * self.decoder.frame_size()
    }

    fn reset(&mut self) -> Result<()> {
        self.decoder.reset(&mut self.state);
        Ok(())
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }

    fn decode(&mut self, latent: &[f32], first: bool, out: &mut [f32]) -> Result<()> {
        if first && self.wide_first_frame {
            self.decoder.decode_frame_wide(latent, &mut self.state, out)
        } else {
            self.decoder.decode_frame(latent, &mut self.state, out)
        }
    }
}

thread_local! {
    /// The buffers of the Mimi frames this thread decodes together: one per thread that
    /// decodes batches (the engine's threads), not one per stream.
    static SCRATCH: std::cell::RefCell<MimiScratch> = std::cell::RefCell::new(MimiScratch::default());
}

/// [`super::decode_frames`]: the jobs whose sessions are [`CpuMimi`] on the same decoder
/// (the first such job's) are decoded together (`MimiDecoderFast::decode_frames`), the
/// others one by one.
pub(super) fn decode_frames(jobs: &mut [MimiJob<'_>]) -> Vec<Result<()>> {
    let mut results: Vec<Result<()>> = Vec::with_capacity(jobs.len());
    let mut shared: Option<Arc<MimiDecoderFast>> = None;
    let mut batch: Vec<MimiFrame<'_>> = Vec::with_capacity(jobs.len());
    let mut in_batch = Vec::with_capacity(jobs.len());
    for (k, job) in jobs.iter_mut().enumerate() {
        let MimiJob {
            session,
            latent,
            out,
            first,
        } = job;
        let joins = match session.as_any_mut().downcast_mut::<CpuMimi>() {
            Some(cpu) => {
                let decoder = shared.get_or_insert_with(|| Arc::clone(&cpu.decoder));
                Arc::ptr_eq(decoder, &cpu.decoder)
            }
            None => false,
        };
        if joins {
            let cpu = session
                .as_any_mut()
                .downcast_mut::<CpuMimi>()
                .expect("checked above");
            batch.push(MimiFrame {
                latent,
                state: &mut cpu.state,
                out,
            });
            in_batch.push(k);
            results.push(Ok(()));
        } else {
            results.push(session.decode(latent, *first, out));
        }
    }
    if let Some(decoder) = shared {
        let decoded = SCRATCH.with(|sc| decoder.decode_frames(&mut batch, &mut sc.borrow_mut()));
        if let Err(e) = decoded {
            let msg = e.to_string();
            for &k in &in_batch {
                results[k] = Err(crate::Error::Internal(msg.clone()));
            }
        }
    }
    results
}
