//! `FlowLmFast`: the FlowLM ([`crate::internals::models::flow_lm::FlowLm`]) on plain `f32` buffers,
//! allocation-free per autoregressive step.
//!
//! It runs the same computation as the Candle model (reference: Python package pocket-tts
//! 4.0.1, `models/flow_lm.py`, `modules/transformer.py`, `attention.py`, `rope.py`,
//! `mlp.py`): text/voice prefill through the transformer, then one step per frame —
//! `input_linear`, the pre-norm layers (interleaved RoPE self-attention over the KV cache,
//! tanh-GELU feed-forward), `out_norm`, optional `z_proj`, the EOS logit and the flow head
//! (`SimpleMLPAdaLN`) with LSD, flow-matching, drifting or pointwise decoding.
//! Grouped-query attention (`num_kv_heads`), `attn_dim` and `z_dim` are supported as in
//! the Candle code.
//!
//! # Weights
//! Weights are not copied: [`FlowLmFast`] keeps clones of the Candle [`Tensor`]s (sharing
//! their storage) and reads their CPU `f32` storage in place, taking the storage's read
//! lock for the duration of each use (~60 uncontended lock acquisitions per step).
//!
//! # Usage
//! ```no_run
//! # fn demo(model: &pocket_tts_core::tts_model::TtsModel,
//! #         voice: &pocket_tts_core::VoiceState) -> pocket_tts_core::Result<()> {
//! use pocket_tts_core::internals::fast::flow_lm::FlowLmFast;
//! let fast = FlowLmFast::new(model.flow_lm())?;
//! let mut state = fast.new_state(voice.len() + 512);
//! fast.load_voice(voice, &mut state, 512)?;            // copies the voice KV caches
//! let mut emb = Vec::new();
//! fast.embed_tokens(&model.tokenizer().encode("Hello."), &mut emb)?;
//! fast.prefill(&emb, emb.len() / fast.dim(), &mut state)?;
//! let ldim = fast.ldim();
//! let (mut latent, noise) = (vec![0f32; ldim], vec![0f32; ldim]);
//! let mut prev: Option<Vec<f32>> = None;
//! for _ in 0..100 {
//!     let eos = fast.step(prev.as_deref(), &noise, 1, &mut state, &mut latent)?;
//!     prev = Some(latent.clone()); // (a real loop would reuse a buffer)
//!     # let _ = eos;
//! }
//! # Ok(()) }
//! ```
//!
//! # Allocation
//! [`FlowLmFast::step`] allocates nothing once the state has room for the position
//! (`capacity`, see [`FlowLmFast::new_state`]) and the time-embedding cache holds the
//! requested `decode_steps` (room for 8 is reserved up front). When the cache is full the
//! state grows (doubling), which allocates; size states so that this does not happen in
//! the loop. Prefill, voice loading and embedding may allocate (they grow scratch buffers
//! that are then reused).
//!
//! # Threads
//! [`FlowLmFast::set_threads`] (default 1) splits every large GEMV into 8-row-aligned
//! chunks (4 per thread), and attention into heads, handed out dynamically over a
//! [`pocket_tts_simd::Team`] (helper threads spin for 200 µs after each job, then park; a
//! descheduled helper is skipped, see `Team::run_chunks`). Results do not depend on the
//! thread count: every row and head is computed by the same kernel either way. Prefill
//! GEMMs use `pocket_tts_simd::gemv_multi` (weights read in place), split by weight rows
//! over a second team ([`FlowLmFast::set_prefill_threads`]). During generation the Mimi
//! decoder normally runs on the other core, so keep 1 there; use 2 for prefill of long
//! voice prompts or when the FlowLM runs alone. Measurements: OPTIMIZATION_LOG.md §2, §7, §8.
//!
//! # Numerics
//! Same operations and rounding order as the Candle model except the summation order of
//! dot products (blocked SIMD partial sums); the tests bound the difference at 1e-4 on
//! the tiny model (30+ autoregressive steps) and 1e-3 on the full-size one.
//!
//! # Layout
//! - `weights`: the weight views read in place from the Candle model, and [`FlowLmFast::new`].
//! - `state`: [`FlowLmFastState`]'s buffers, voice state import/export and copies.
//! - `conditioning`: text token and voice latent embeddings fed to [`FlowLmFast::prefill`].
//! - `transformer`: [`FlowLmFast::prefill`] and [`FlowLmFast::step`] through the layers.
//! - `flow_head`: the flow head (`SimpleMLPAdaLN`) and its LSD / flow-matching / drifting /
//!   pointwise decoding.
//! - `par`: GEMV, prefill GEMM and attention split over the thread teams, and the
//!   teams' settings.
//! - `batch`: [`FlowLmFast::forward_batch`], many states' steps and prefill pieces in one
//!   pass (the batched engine, [`crate::tts_model::Engine`]).

#[cfg(doc)]
use candle_core::Tensor;
use pocket_tts_simd as simd;

use crate::models::flow_lm::FlowKind;

mod batch;
mod conditioning;
mod flow_head;
mod par;
mod state;
mod transformer;
mod weights;

pub use batch::{BatchInput, BatchItem, BatchScratch};
use state::{FlowScratch, PrefillScratch};
use weights::{FlowHead, Layer, LayerLin, Lin, LinW, Norm, W};

/// Sizes a state must agree with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dims {
    d: usize,
    layers: usize,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    attn_dim: usize,
    ff: usize,
    z: usize,
    ldim: usize,
    flow_dim: usize,
    freq_dim: usize,
}

impl Dims {
    fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }

    fn qkv_dim(&self) -> usize {
        self.attn_dim + 2 * self.kv_dim()
    }
}

/// The FlowLM on `f32` buffers; built once per model (see the module docs).
#[derive(Debug)]
pub struct FlowLmFast {
    dims: Dims,
    kind: FlowKind,
    max_period: f64,
    input_linear: Lin,
    bos_emb: W,
    layers: Vec<Layer>,
    out_norm: Norm,
    z_proj: Option<Lin>,
    out_eos: Lin,
    flow: FlowHead,
    lut: weights::Lut,
    lut_width: usize,
    lut_rows: usize,
    lut_proj: Option<Lin>,
    speaker_proj: W,
    speaker_dim: usize,
    bos_before_voice: Option<W>,
    team: simd::Team,
    /// Threads of [`Self::prefill`]'s GEMMs (see [`Self::set_prefill_threads`]).
    prefill_team: simd::Team,
}

/// KV caches, RoPE table and scratch buffers of one generation (see
/// [`FlowLmFast::new_state`]).
#[derive(Debug, Clone)]
pub struct FlowLmFastState {
    dims: Dims,
    capacity: usize,
    len: usize,
    /// Per layer `[kv_heads, capacity, head_dim]`.
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
    /// `[capacity, head_dim / 2]`.
    rope_cos: Vec<f32>,
    rope_sin: Vec<f32>,
    /// `[heads, capacity]`.
    scores: Vec<f32>,
    x: Vec<f32>,
    hn: Vec<f32>,
    qkv: Vec<f32>,
    att: Vec<f32>,
    ff: Vec<f32>,
    zn: Vec<f32>,
    z: Vec<f32>,
    eos: Vec<f32>,
    /// The input of an int8 layer's GEMV, quantized (`--quantize`).
    xq: simd::QuantizedVector,
    flow: FlowScratch,
    prefill: PrefillScratch,
}

impl FlowLmFast {
    /// Backbone width (`d_model`); [`Self::prefill`] takes rows of this width.
    pub fn dim(&self) -> usize {
        self.dims.d
    }

    /// Latent width.
    pub fn ldim(&self) -> usize {
        self.dims.ldim
    }

    /// The flow type.
    pub fn flow_kind(&self) -> FlowKind {
        self.kind
    }

    /// Width of the voice latents [`Self::voice_conditioning`] takes (Mimi's).
    pub fn speaker_dim(&self) -> usize {
        self.speaker_dim
    }

    /// Width of the backbone output the flow and EOS heads read (`z_dim` or `dim`).
    pub fn z_dim(&self) -> usize {
        self.dims.z
    }
}
