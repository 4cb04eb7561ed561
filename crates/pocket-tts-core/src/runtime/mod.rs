//! Runtimes: what executes the model definition ([`crate::internals::models`]) during generation and
//! voice encoding, behind one small set of traits.
//!
//! Two runtimes exist:
//! - [`Backend::Cpu`] (the default): the allocation-free runtimes of [`crate::internals::fast`]
//!   (`FlowLmFast`, `MimiDecoderFast`, `MimiEncoderFast`), plain `f32` buffers and
//!   run-time-dispatched SIMD kernels;
//! - [`Backend::Candle`]: the Candle modules themselves ([`crate::internals::models::flow_lm::FlowLm`],
//!   [`crate::internals::models::mimi::Mimi`]), the reference implementation inside this crate and the
//!   road to Candle's other devices.
//!
//! The pipeline ([`crate::tts_model`]) only sees the crate-private traits of this module:
//! a `Runtime` builds one `FlowLmSession` per generation (its KV caches) and one
//! `MimiSession` per generation (the decoder's streaming state, movable to the decoder
//! thread), and encodes voice prompts. Every per-frame value crosses these traits as an
//! `f32` slice.
//!
//! To add a runtime: implement the four traits (`Runtime`, `FlowLmSession`, `MimiSession`,
//! `FlowLmBatch`) in a file of this folder, add a
//! [`Backend`] variant and build it in `runtime::build`.

mod batch;
mod candle;
mod cpu;

pub(crate) use cpu::{CpuMimiHalf, CpuMimiParts};

use std::fmt;
use std::str::FromStr;

use crate::models::flow_lm::FlowLm;
use std::sync::Arc;

use crate::models::mimi::{Mimi, MimiSource};
use crate::models::model_state::VoiceState;
use crate::{Error, Result};

/// Which runtime executes the model (`--backend` on the command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Backend {
    /// The allocation-free CPU runtime ([`crate::internals::fast`]): the fast one.
    #[default]
    Cpu,
    /// The Candle modules, tensor by tensor: the reference implementation, slower.
    Candle,
}

impl Backend {
    /// Every backend, in the order of [`Backend::name`]'s documentation.
    pub const ALL: &'static [Backend] = &[Backend::Cpu, Backend::Candle];

    /// The backend's name: `cpu` or `candle`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Candle => "candle",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = Error;

    /// Parses `cpu` or `candle`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for any other name.
    fn from_str(s: &str) -> Result<Self> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                Error::invalid_argument(format!("unknown backend {s:?}: expected cpu or candle"))
            })
    }
}

/// A runtime built over a loaded model's weights.
pub(crate) trait Runtime: Send + Sync + fmt::Debug {
    /// Which backend this is.
    fn backend(&self) -> Backend;

    /// Sets the threads of the work that runs alone (text prefill, the first step and
    /// frame of a stream, voice encoding); see `TtsModel::threads`.
    fn set_threads(&mut self, threads: usize) -> Result<()>;

    /// Mimi latents `[frames, latent_dim]` (row-major) of mono audio at the model rate
    /// (reference: `MimiModel.encode_to_latent`). Returns the values and `latent_dim`.
    fn encode_audio(&self, samples: &[f32]) -> Result<(Vec<f32>, usize)>;

    /// Whether what [`Runtime::encode_audio`] builds on first use (the CPU runtime's
    /// repacked Mimi encoder) is kept for the next prompt (`true`, the default) or built
    /// for each prompt and freed as soon as the prompt is encoded (`false`; also frees
    /// one already kept). Nothing for a runtime that builds no such thing.
    fn set_keep_voice_encoder(&mut self, _keep: bool) {}

    /// Runs Mimi latents `[frames, latent_dim]` of a voice prompt through the FlowLM
    /// (reference: `TTSModel.get_state_for_audio_prompt`).
    fn voice_state_from_latents(&self, latents: &[f32], latent_dim: usize) -> Result<VoiceState>;

    /// A FlowLM session for one generation.
    fn flow_lm_session(&self) -> Result<Box<dyn FlowLmSession + '_>>;

    /// A Mimi decoder session for one generation; `wide_first_frame` lets the stream's
    /// very first frame use the wide threads (nothing else runs then).
    fn mimi_session(&self, wide_first_frame: bool) -> Result<Box<dyn MimiSession>>;

    /// The FlowLM side of many generations stepped together (the batched engine): the
    /// CPU runtime's batched pass, or each generation's own [`FlowLmSession`] in turn.
    fn flow_lm_batch(&self) -> Box<dyn FlowLmBatch + '_>;
}

pub(crate) use batch::{BatchStep, FlowLmBatch};

/// The FlowLM side of one generation: its KV caches and the autoregressive loop
/// (reference: `TTSModel._generate` and `FlowLMModel.forward`).
pub(crate) trait FlowLmSession: Send {
    /// Starts a text chunk: copies the voice state with room for the text and
    /// `max_gen_len` frames, then prefills the text tokens.
    fn start_chunk(&mut self, voice: &VoiceState, tokens: &[u32], max_gen_len: usize)
        -> Result<()>;

    /// One autoregressive step: feeds `previous` (`None`: BOS, the chunk's first step),
    /// samples the next normalised latent `[ldim]` into `latent` from `noise` `[ldim]`
    /// with `decode_steps` flow steps, and returns the EOS logit. `wide`: nothing else
    /// runs now (the chunk's first step), so the step may use the prefill threads.
    fn step(
        &mut self,
        previous: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        wide: bool,
        latent: &mut [f32],
    ) -> Result<f32>;

    /// The KV caches as they stand (the voice, the chunk's text and the steps taken so
    /// far) as a voice state a later chunk can start from (reference: the `model_state`
    /// a generation with `copy_state=False` leaves). `None` before the first chunk.
    fn export_state(&self) -> Result<Option<VoiceState>>;
}

/// The Mimi decoder side of one generation (sent to the decoder thread).
pub(crate) trait MimiSession: Send + 'static {
    /// Samples per decoded frame (all channels, 1920 at 24 kHz mono).
    fn frame_len(&self) -> usize;

    /// Forgets the streaming state (a new text chunk starts from silence).
    fn reset(&mut self) -> Result<()>;

    /// Decodes one denormalised latent `[ldim]` into `out` (`[frame_len]`). `first`:
    /// the stream's very first frame.
    fn decode(&mut self, latent: &[f32], first: bool, out: &mut [f32]) -> Result<()>;

    /// This session as [`Any`](std::any::Any), so that its runtime can find its own
    /// sessions among others in [`decode_frames`].
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// One frame of one stream for [`decode_frames`]: its session, the denormalised latent
/// `[ldim]`, where the samples go (`[frame_len]`) and whether it is the stream's very first
/// frame.
pub(crate) struct MimiJob<'a> {
    /// The stream's decoder session.
    pub(crate) session: &'a mut dyn MimiSession,
    /// Denormalised latent `[ldim]`.
    pub(crate) latent: &'a [f32],
    /// `[frame_len]` samples out.
    pub(crate) out: &'a mut [f32],
    /// The stream's very first frame.
    pub(crate) first: bool,
}

/// Decodes one frame of each job, as [`MimiSession::decode`] would one by one: the CPU
/// runtime decodes the frames of sessions that share a decoder together, every linear and
/// conv one GEMM over all their rows (each weight read once for all, bit-identical to
/// each frame alone); other sessions decode alone. Returns one result
/// per job, in order.
pub(crate) fn decode_frames(jobs: &mut [MimiJob<'_>]) -> Vec<Result<()>> {
    cpu::decode_frames(jobs)
}

/// The Mimi half of a runtime, prepared before the FlowLM is loaded: the CPU runtime
/// reads the decoder's weights into its repacked form here (part by part, never the whole
/// Candle decoder), before the FlowLM's are read.
pub(crate) enum PreparedMimi {
    /// [`Backend::Cpu`]: the repacked decoder, and where to load the encoder from.
    Cpu(Box<cpu::CpuMimiParts>),
    /// [`Backend::Candle`]: the Candle modules themselves.
    Candle(Arc<Mimi>),
}

/// Prepares the Mimi half of `backend`'s runtime: the CPU runtime reads `source`; the Candle
/// runtime takes the Candle modules from `candle_mimi`, called only for it.
///
/// # Errors
/// The runtime's construction errors (weights it cannot read), and `candle_mimi`'s.
pub(crate) fn prepare_mimi(
    backend: Backend,
    source: &MimiSource,
    candle_mimi: impl FnOnce() -> Result<Arc<Mimi>>,
) -> Result<PreparedMimi> {
    match backend {
        Backend::Cpu => prepare_cpu_mimi(source),
        Backend::Candle => Ok(PreparedMimi::Candle(candle_mimi()?)),
    }
}

/// The Mimi half of the CPU runtime ([`Backend::Cpu`], the one a model loads with): the
/// decoder read from `source` part by part into its repacked form.
///
/// # Errors
/// The decoder's construction errors (weights it cannot read, widths that do not chain).
pub(crate) fn prepare_cpu_mimi(source: &MimiSource) -> Result<PreparedMimi> {
    Ok(PreparedMimi::Cpu(Box::new(cpu::CpuMimiParts::new(
        source.clone(),
    )?)))
}

/// Builds the runtime over the model definition and its prepared Mimi half (`None`: a
/// model without Mimi, [`crate::LoadOptions::without_mimi`], on the CPU runtime).
///
/// # Errors
/// The runtime's construction errors (weights it cannot read).
pub(crate) fn build(mimi: Option<PreparedMimi>, flow_lm: &FlowLm) -> Result<Box<dyn Runtime>> {
    Ok(match mimi {
        Some(PreparedMimi::Cpu(parts)) => Box::new(cpu::CpuRuntime::new(flow_lm, Some(*parts))?),
        None => Box::new(cpu::CpuRuntime::new(flow_lm, None)?),
        Some(PreparedMimi::Candle(mimi)) => Box::new(candle::CandleRuntime::new(flow_lm, mimi)),
    })
}
