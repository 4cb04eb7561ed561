//! `FlowLmFast`: the FlowLM ([`crate::models::flow_lm::FlowLm`]) on plain `f32` buffers,
//! allocation-free per autoregressive step.
//!
//! It runs the same computation as the Candle model (reference: `models/flow_lm.py`,
//! `modules/transformer.py`, `attention.py`, `rope.py`, `mlp.py`): text/voice prefill through
//! the transformer, then one step per frame — `input_linear`, the pre-norm layers
//! (interleaved RoPE self-attention over the KV cache, tanh-GELU feed-forward),
//! `out_norm`, optional `z_proj`, the EOS logit and the flow head (`SimpleMLPAdaLN`) with
//! LSD, flow-matching, drifting or pointwise decoding. Grouped-query attention
//! (`num_kv_heads`), `attn_dim` and `z_dim` are supported as in the Candle code.
//!
//! # Weights
//! Weights are not copied: [`FlowLmFast`] keeps clones of the Candle [`Tensor`]s (sharing
//! their storage) and reads their CPU `f32` storage in place, taking the storage's read
//! lock for the duration of each use (~60 uncontended lock acquisitions per step).
//!
//! # Usage
//! ```no_run
//! # fn demo(model: &pocket_tts_core::models::tts_model::TtsModel,
//! #         voice: &pocket_tts_core::models::model_state::VoiceState) -> pocket_tts_core::Result<()> {
//! use pocket_tts_core::fast::flow_lm::FlowLmFast;
//! let fast = FlowLmFast::new(&model.flow_lm)?;
//! let mut state = fast.new_state(voice.len() + 512);
//! fast.load_voice(voice, &mut state, 512)?;            // copies the voice KV caches
//! let mut emb = Vec::new();
//! fast.embed_tokens(&model.tokenizer.encode("Hello."), &mut emb)?;
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
//! voice prompts or when the FlowLM runs alone. See `docs/optimization/flow_lm.md`.
//!
//! # Numerics
//! Same operations and rounding order as the Candle model except the summation order of
//! dot products (blocked SIMD partial sums); the tests bound the difference at 1e-4 on
//! the tiny model (30+ autoregressive steps) and 1e-3 on the full-size one.

use std::ops::{Deref, Range};

use candle_core::{CpuStorage, DType, Device, Storage, Tensor};
use pocket_tts_simd as simd;

use crate::models::flow_lm::{FlowKind, FlowLm};
use crate::models::model_state::VoiceState;
use crate::modules::attention::KvCache;
use crate::modules::layers::{LayerNorm, RmsNorm};
use crate::modules::transformer::TransformerState;
use crate::{Error, Result};

/// GEMVs smaller than this many weights run on one thread even with a team.
const PAR_MIN_WEIGHTS: usize = 64 * 1024;
/// Attention over fewer cached values (heads × positions × head_dim) runs on one thread.
const PAR_MIN_ATTENTION: usize = 64 * 1024;
/// Row chunks per team thread in a split GEMV (dynamic scheduling, see
/// `Team::run_chunks`).
const CHUNKS_PER_THREAD: usize = 4;
/// Decode steps whose time embeddings fit in a fresh state without reallocating.
const RESERVED_DECODE_STEPS: usize = 8;

// ---------------------------------------------------------------------------------------
// Borrowed weights
// ---------------------------------------------------------------------------------------

/// A contiguous `f32` CPU tensor, read in place.
#[derive(Debug, Clone)]
struct W {
    tensor: Tensor,
    offset: usize,
    len: usize,
}

/// The storage read guard of a [`W`], dereferencing to its `f32` slice.
struct WRef<'a> {
    guard: candle_core::StorageRef<'a>,
    offset: usize,
    len: usize,
}

impl Deref for WRef<'_> {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match &*self.guard {
            Storage::Cpu(CpuStorage::F32(v)) => &v[self.offset..self.offset + self.len],
            // `W::new` checked the storage kind; a tensor's storage never changes kind.
            _ => unreachable!("FlowLmFast weight storage is not CPU f32"),
        }
    }
}

impl W {
    /// Checks that `t` is a contiguous f32 CPU tensor of shape `dims`.
    fn new(t: &Tensor, name: &str, dims: &[usize]) -> Result<Self> {
        if t.dims() != dims {
            return Err(Error::InvalidData(format!(
                "FlowLmFast: {name} has shape {:?}, expected {dims:?}",
                t.dims()
            )));
        }
        if t.dtype() != DType::F32 || !t.device().is_cpu() {
            return Err(Error::Unsupported(format!(
                "FlowLmFast: {name} is {:?} on {:?}; the fast path needs f32 CPU weights",
                t.dtype(),
                t.device()
            )));
        }
        let (storage, layout) = t.storage_and_layout();
        let Some((start, end)) = layout.contiguous_offsets() else {
            return Err(Error::Unsupported(format!(
                "FlowLmFast: {name} is not contiguous"
            )));
        };
        match &*storage {
            Storage::Cpu(CpuStorage::F32(v)) if end <= v.len() => {}
            _ => {
                return Err(Error::Unsupported(format!(
                    "FlowLmFast: {name} does not have f32 CPU storage"
                )))
            }
        }
        drop(storage);
        Ok(Self {
            tensor: t.clone(),
            offset: start,
            len: end - start,
        })
    }

    fn get(&self) -> WRef<'_> {
        let (guard, _) = self.tensor.storage_and_layout();
        WRef {
            guard,
            offset: self.offset,
            len: self.len,
        }
    }
}

/// A layer norm's parameters.
#[derive(Debug, Clone)]
struct Norm {
    weight: Option<W>,
    bias: Option<W>,
    eps: f32,
}

impl Norm {
    fn new(n: &LayerNorm, name: &str) -> Result<Self> {
        let d = n.dim;
        Ok(Self {
            weight: n
                .weight
                .as_ref()
                .map(|t| W::new(t, &format!("{name}.weight"), &[d]))
                .transpose()?,
            bias: n
                .bias
                .as_ref()
                .map(|t| W::new(t, &format!("{name}.bias"), &[d]))
                .transpose()?,
            eps: n.eps as f32,
        })
    }

    /// `out = layer_norm(x)` over rows of `cols`.
    fn apply(&self, x: &[f32], out: &mut [f32], cols: usize) {
        let w = self.weight.as_ref().map(W::get);
        let b = self.bias.as_ref().map(W::get);
        simd::layer_norm_rows(x, out, cols, w.as_deref(), b.as_deref(), self.eps);
    }
}

/// A linear layer: weight `[out, in]`, optional bias `[out]`.
#[derive(Debug, Clone)]
struct Lin {
    w: W,
    b: Option<W>,
    out: usize,
    inp: usize,
}

impl Lin {
    fn new(l: &candle_nn::Linear, name: &str, out: usize, inp: usize) -> Result<Self> {
        Ok(Self {
            w: W::new(l.weight(), &format!("{name}.weight"), &[out, inp])?,
            b: l.bias()
                .map(|b| W::new(b, &format!("{name}.bias"), &[out]))
                .transpose()?,
            out,
            inp,
        })
    }

    fn dims_of(l: &candle_nn::Linear) -> Result<(usize, usize)> {
        Ok(l.weight().dims2()?)
    }
}

// ---------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Layer {
    norm1: Norm,
    norm2: Norm,
    in_proj: Lin,
    out_proj: Lin,
    linear1: Lin,
    linear2: Lin,
}

#[derive(Debug, Clone)]
struct TimeEmbed {
    freqs: W,
    linear1: Lin,
    linear2: Lin,
    alpha: W,
    eps: f32,
}

#[derive(Debug, Clone)]
struct ResBlock {
    in_ln: Norm,
    mlp1: Lin,
    mlp2: Lin,
    ada: Lin,
}

#[derive(Debug, Clone)]
struct FlowHead {
    time: Vec<TimeEmbed>,
    cond: Lin,
    input: Lin,
    blocks: Vec<ResBlock>,
    final_norm: Norm,
    final_ada: Lin,
    final_linear: Lin,
    /// Model width of the head.
    dim: usize,
}

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
    lut: W,
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
    flow: FlowScratch,
    prefill: PrefillScratch,
}

#[derive(Debug, Clone, Default)]
struct FlowScratch {
    cond: Vec<f32>,
    y: Vec<f32>,
    ys: Vec<f32>,
    h: Vec<f32>,
    t1: Vec<f32>,
    t2: Vec<f32>,
    ada: Vec<f32>,
    dir: Vec<f32>,
    /// Time-embedding inputs and temporaries.
    emb: Vec<f32>,
    te: Vec<f32>,
    te_sum: Vec<f32>,
    /// `[decode_steps, flow_dim]`: mean of the time embeddings of each decode step.
    time_cache: Vec<f32>,
    /// The `decode_steps` `time_cache` holds (0: none).
    time_cache_steps: usize,
}

#[derive(Debug, Clone, Default)]
struct PrefillScratch {
    x: Vec<f32>,
    h: Vec<f32>,
    qkv: Vec<f32>,
    att: Vec<f32>,
    ff: Vec<f32>,
}

/// A raw pointer shared with team threads that write disjoint ranges through it.
#[derive(Clone, Copy)]
struct SyncPtr(*mut f32);
// SAFETY: only used to hand disjoint sub-slices of one buffer to team threads, while the
// buffer is exclusively borrowed by the caller of `Team::run`.
unsafe impl Send for SyncPtr {}
// SAFETY: as above.
unsafe impl Sync for SyncPtr {}

impl SyncPtr {
    /// The pointer (a method, so that closures capture the whole `SyncPtr`).
    fn ptr(&self) -> *mut f32 {
        self.0
    }

    /// `len` elements from `start`.
    ///
    /// # Safety
    /// The range lies in the buffer and no other live slice overlaps it.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slice(&self, start: usize, len: usize) -> &mut [f32] {
        std::slice::from_raw_parts_mut(self.0.add(start), len)
    }
}

fn silu_into(src: &[f32], dst: &mut [f32]) {
    dst.copy_from_slice(src);
    simd::silu(dst);
}

/// `x * (1 + scale) + shift`, in place (the reference's `modulate`).
fn modulate(x: &mut [f32], shift: &[f32], scale: &[f32]) {
    for ((x, sh), sc) in x.iter_mut().zip(shift).zip(scale) {
        *x = *x * (*sc + 1.0) + *sh;
    }
}

/// Interleaved RoPE on one head: pairs `(x[2i], x[2i+1])` rotated by `(cos[i], sin[i])`.
fn rope(x: &mut [f32], cos: &[f32], sin: &[f32]) {
    for ((p, c), s) in x.chunks_exact_mut(2).zip(cos).zip(sin) {
        let (a, b) = (p[0], p[1]);
        p[0] = a * c - b * s;
        p[1] = a * s + b * c;
    }
}

/// Tokens per pass of `pocket_tts_simd::gemv_multi` in prefill GEMMs: the token block
/// (`[32, inp]`, 128–512 KB) stays in L2 while the weights stream past once per block.
const MULTI_TOKENS: usize = 32;

/// `y[t, out] (+)= x[t, inp] · w[out, inp]ᵀ`, the `out` columns split in 16-aligned
/// blocks over `team` (each block reads its own rows of `w` and writes its own columns of
/// `y`), with `pocket_tts_simd::gemv_multi` over blocks of [`MULTI_TOKENS`] tokens. The
/// weights are read in place: a GEMM library would pack them on every call, i.e. copy
/// the FlowLM's 340 MB for every text prefill (measured: prefill 98 → 36–63 ms for a
/// short text, voice prompt 1.25 → 1.1 s; see OPTIMIZATION_LOG.md).
#[allow(clippy::too_many_arguments)]
fn matmul_wt(
    x: &[f32],
    t: usize,
    w: &[f32],
    out: usize,
    inp: usize,
    y: &mut [f32],
    acc: bool,
    team: &simd::Team,
) {
    assert_eq!(x.len(), t * inp);
    assert_eq!(w.len(), out * inp);
    assert_eq!(y.len(), t * out);
    if t == 0 || out == 0 {
        return;
    }
    let yp = SyncPtr(y.as_mut_ptr());
    let isa = simd::detected();
    let block = |cols: Range<usize>| {
        let wb = &w[cols.start * inp..cols.end * inp];
        let mut t0 = 0;
        while t0 < t {
            let tb = MULTI_TOKENS.min(t - t0);
            // SAFETY: `y` is `[t, out]` (checked above); columns `cols` of its rows
            // `t0..t0 + tb` belong to this block only.
            unsafe {
                isa.gemv_multi_ptr(
                    wb,
                    cols.len(),
                    inp,
                    &x[t0 * inp..(t0 + tb) * inp],
                    tb,
                    yp.ptr().add(t0 * out + cols.start),
                    out,
                    None,
                    acc,
                );
            }
            t0 += tb;
        }
    };
    let n = team.threads();
    if n == 1 || out * inp < PAR_MIN_WEIGHTS {
        block(0..out);
        return;
    }
    let chunks = (2 * n).min(out.div_ceil(16));
    team.run_chunks(chunks, |i| block(simd::split_range(out, chunks, 16, i)));
}

/// Softmax attention of one query per head over positions `0..len` of one layer's cache.
/// `q` holds all query heads; `scores` is `[heads, cap]`; `out` is `[heads·head_dim]`.
/// Only heads in `heads` are computed.
#[allow(clippy::too_many_arguments)]
fn attend(
    heads: Range<usize>,
    q: &[f32],
    kc: &[f32],
    vc: &[f32],
    len: usize,
    cap: usize,
    head_dim: usize,
    rep: usize,
    scale: f32,
    scores: SyncPtr,
    out: SyncPtr,
) {
    for h in heads {
        let kvh = h / rep;
        let base = kvh * cap * head_dim;
        let keys = &kc[base..base + len * head_dim];
        let values = &vc[base..base + len * head_dim];
        // SAFETY: head `h` owns scores[h·cap..][..len] and out[h·head_dim..][..head_dim];
        // callers give each head to one thread only.
        let (s, o) = unsafe {
            (
                scores.slice(h * cap, len),
                out.slice(h * head_dim, head_dim),
            )
        };
        simd::gemv(keys, &q[h * head_dim..(h + 1) * head_dim], s, None, false);
        for v in s.iter_mut() {
            *v *= scale;
        }
        simd::softmax_rows(s, len);
        simd::gemv_t(s, values, o, false);
    }
}

impl FlowLmFast {
    /// Builds the fast path over `flow_lm`'s weights (no copy). Single-threaded; see
    /// [`Self::set_threads`].
    ///
    /// # Errors
    /// [`Error::Unsupported`] for weights that are not contiguous f32 CPU tensors or a
    /// model feature the fast path lacks (LayerScale, finite attention context — neither
    /// occurs in FlowLM), [`Error::InvalidData`] for inconsistent shapes.
    pub fn new(flow_lm: &FlowLm) -> Result<Self> {
        let t = &flow_lm.transformer;
        let first = t.layers.first().ok_or_else(|| {
            Error::InvalidData("FlowLmFast: the transformer has no layers".into())
        })?;
        let a = &first.self_attn;
        let d = flow_lm.dim;
        let ldim = flow_lm.ldim;
        let (ff, _) = Lin::dims_of(&first.linear1)?;
        let z = match &flow_lm.z_proj {
            Some(p) => Lin::dims_of(p)?.0,
            None => d,
        };
        let fh = &flow_lm.flow_net;
        let (flow_dim, _) = Lin::dims_of(&fh.cond_embed)?;
        let freq_dim = match fh.time_embed.first() {
            Some(te) => Lin::dims_of(&te.linear1)?.1,
            None => 0,
        };
        let dims = Dims {
            d,
            layers: t.layers.len(),
            heads: a.num_heads,
            kv_heads: a.num_kv_heads,
            head_dim: a.head_dim,
            attn_dim: a.attn_dim,
            ff,
            z,
            ldim,
            flow_dim,
            freq_dim,
        };
        if !dims.head_dim.is_multiple_of(2) || !dims.heads.is_multiple_of(dims.kv_heads) {
            return Err(Error::InvalidData(format!(
                "FlowLmFast: head_dim {} must be even and heads {} a multiple of kv heads {}",
                dims.head_dim, dims.heads, dims.kv_heads
            )));
        }
        if fh.time_embed.len() != flow_lm.flow_kind.num_time_conds() {
            return Err(Error::InvalidData(format!(
                "FlowLmFast: the flow head has {} time embedders, flow type {:?} needs {}",
                fh.time_embed.len(),
                flow_lm.flow_kind,
                flow_lm.flow_kind.num_time_conds()
            )));
        }
        let mut layers = Vec::with_capacity(dims.layers);
        for (i, l) in t.layers.iter().enumerate() {
            let p = format!("transformer.layers.{i}");
            let sa = &l.self_attn;
            if l.layer_scale_1.is_some() || l.layer_scale_2.is_some() || sa.context.is_some() {
                return Err(Error::Unsupported(format!(
                    "FlowLmFast: {p} has LayerScale or a finite attention context (Mimi-style), \
                     which the FlowLM fast path does not implement"
                )));
            }
            if (sa.num_heads, sa.num_kv_heads, sa.head_dim, sa.attn_dim)
                != (dims.heads, dims.kv_heads, dims.head_dim, dims.attn_dim)
            {
                return Err(Error::InvalidData(format!(
                    "FlowLmFast: {p} has a different attention geometry than layer 0"
                )));
            }
            layers.push(Layer {
                norm1: Norm::new(&l.norm1, &format!("{p}.norm1"))?,
                norm2: Norm::new(&l.norm2, &format!("{p}.norm2"))?,
                in_proj: Lin::new(
                    &sa.in_proj,
                    &format!("{p}.self_attn.in_proj"),
                    dims.qkv_dim(),
                    d,
                )?,
                out_proj: Lin::new(
                    &sa.out_proj,
                    &format!("{p}.self_attn.out_proj"),
                    d,
                    dims.attn_dim,
                )?,
                linear1: Lin::new(&l.linear1, &format!("{p}.linear1"), ff, d)?,
                linear2: Lin::new(&l.linear2, &format!("{p}.linear2"), d, ff)?,
            });
        }
        let time = fh
            .time_embed
            .iter()
            .enumerate()
            .map(|(i, te)| {
                let p = format!("flow_net.time_embed.{i}");
                Ok(TimeEmbed {
                    freqs: W::new(&te.freqs, &format!("{p}.freqs"), &[freq_dim / 2])?,
                    linear1: Lin::new(&te.linear1, &format!("{p}.mlp.0"), flow_dim, freq_dim)?,
                    linear2: Lin::new(&te.linear2, &format!("{p}.mlp.2"), flow_dim, flow_dim)?,
                    alpha: W::new(&te.norm.alpha, &format!("{p}.mlp.3.alpha"), &[flow_dim])?,
                    eps: rms_eps(&te.norm),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let blocks = fh
            .res_blocks
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let p = format!("flow_net.res_blocks.{i}");
                Ok(ResBlock {
                    in_ln: Norm::new(&b.in_ln, &format!("{p}.in_ln"))?,
                    mlp1: Lin::new(&b.mlp1, &format!("{p}.mlp.0"), flow_dim, flow_dim)?,
                    mlp2: Lin::new(&b.mlp2, &format!("{p}.mlp.2"), flow_dim, flow_dim)?,
                    ada: Lin::new(
                        &b.ada_ln,
                        &format!("{p}.adaLN_modulation.1"),
                        3 * flow_dim,
                        flow_dim,
                    )?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let fl = &fh.final_layer;
        let flow = FlowHead {
            time,
            cond: Lin::new(&fh.cond_embed, "flow_net.cond_embed", flow_dim, z)?,
            input: Lin::new(&fh.input_proj, "flow_net.input_proj", flow_dim, ldim)?,
            blocks,
            final_norm: Norm::new(&fl.norm, "flow_net.final_layer.norm_final")?,
            final_ada: Lin::new(
                &fl.ada_ln,
                "flow_net.final_layer.adaLN_modulation.1",
                2 * flow_dim,
                flow_dim,
            )?,
            final_linear: Lin::new(&fl.linear, "flow_net.final_layer.linear", ldim, flow_dim)?,
            dim: flow_dim,
        };
        let table = flow_lm.conditioner.embed.embeddings();
        let (lut_rows, lut_width) = table.dims2()?;
        let lut_proj = match &flow_lm.conditioner.proj {
            Some(p) => Some(Lin::new(p, "conditioner.proj", d, lut_width)?),
            None => {
                if lut_width != d {
                    return Err(Error::InvalidData(format!(
                        "FlowLmFast: lookup table width {lut_width} differs from d_model {d}"
                    )));
                }
                None
            }
        };
        let (_, speaker_dim) = flow_lm.speaker_proj_weight.dims2()?;
        Ok(Self {
            dims,
            kind: flow_lm.flow_kind,
            max_period: t.rope.max_period,
            input_linear: Lin::new(&flow_lm.input_linear, "input_linear", d, ldim)?,
            bos_emb: W::new(&flow_lm.bos_emb, "bos_emb", &[ldim])?,
            layers,
            out_norm: Norm::new(&flow_lm.out_norm, "out_norm")?,
            z_proj: flow_lm
                .z_proj
                .as_ref()
                .map(|p| Lin::new(p, "z_proj", z, d))
                .transpose()?,
            out_eos: Lin::new(&flow_lm.out_eos, "out_eos", 1, z)?,
            flow,
            lut: W::new(table, "conditioner.embed.weight", &[lut_rows, lut_width])?,
            lut_width,
            lut_rows,
            lut_proj,
            speaker_proj: W::new(
                &flow_lm.speaker_proj_weight,
                "speaker_proj_weight",
                &[d, speaker_dim],
            )?,
            speaker_dim,
            bos_before_voice: flow_lm
                .bos_before_voice
                .as_ref()
                .map(|b| W::new(&b.flatten_all()?, "bos_before_voice", &[d]))
                .transpose()?,
            team: simd::Team::new(1),
            prefill_team: simd::Team::new(1),
        })
    }

    /// Uses `threads` threads (≥ 1) for steps (GEMV rows, attention heads) and prefill
    /// (GEMM). Spawns `threads - 1` helper threads, which spin for 200 µs after each job
    /// before parking: use more than 1 only when the other cores are otherwise idle.
    pub fn set_threads(&mut self, threads: usize) {
        if threads.max(1) != self.team.threads() {
            self.team = simd::Team::new(threads);
        }
    }

    /// Threads for [`Self::prefill`] (text and voice prompts), independent of the step's
    /// [`Self::set_threads`]: a prefill runs before the first frame, while the Mimi
    /// decoder thread has nothing to do, so it can use both cores even when steps use one.
    /// Each thread multiplies the whole input by its own block of weight rows; results do
    /// not depend on the count.
    pub fn set_prefill_threads(&mut self, threads: usize) {
        if threads.max(1) != self.prefill_team.threads() {
            self.prefill_team = simd::Team::new(threads);
        }
    }

    /// Threads of [`Self::prefill`] (see [`Self::set_prefill_threads`]).
    pub fn prefill_threads(&self) -> usize {
        self.prefill_team.threads()
    }

    /// Threads in use (see [`Self::set_threads`]).
    pub fn threads(&self) -> usize {
        self.team.threads()
    }

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

    /// A state with room for `capacity` positions (prompt + text + frames): KV caches,
    /// RoPE table and all scratch buffers. Allocates ~`8·layers·kv_dim·capacity` bytes.
    pub fn new_state(&self, capacity: usize) -> FlowLmFastState {
        let dm = self.dims;
        let cap = capacity.max(1);
        let f = dm.flow_dim;
        let mut s = FlowLmFastState {
            dims: dm,
            capacity: 0,
            len: 0,
            k: vec![Vec::new(); dm.layers],
            v: vec![Vec::new(); dm.layers],
            rope_cos: Vec::new(),
            rope_sin: Vec::new(),
            scores: Vec::new(),
            x: vec![0.0; dm.d],
            hn: vec![0.0; dm.d],
            qkv: vec![0.0; dm.qkv_dim()],
            att: vec![0.0; dm.attn_dim],
            ff: vec![0.0; dm.ff],
            zn: vec![0.0; dm.d],
            z: vec![0.0; dm.z],
            eos: vec![0.0; 1],
            flow: FlowScratch {
                cond: vec![0.0; f],
                y: vec![0.0; f],
                ys: vec![0.0; f],
                h: vec![0.0; f],
                t1: vec![0.0; f],
                t2: vec![0.0; f],
                ada: vec![0.0; 3 * f],
                dir: vec![0.0; dm.ldim],
                emb: vec![0.0; dm.freq_dim],
                te: vec![0.0; f],
                te_sum: vec![0.0; f],
                time_cache: Vec::with_capacity(RESERVED_DECODE_STEPS * f),
                time_cache_steps: 0,
            },
            prefill: PrefillScratch::default(),
        };
        self.grow(&mut s, cap);
        s
    }

    /// Makes room for at least `needed` positions (doubling), keeping the cached ones.
    fn grow(&self, s: &mut FlowLmFastState, needed: usize) {
        if needed <= s.capacity {
            return;
        }
        let dm = self.dims;
        let new_cap = needed.max(2 * s.capacity);
        let hd = dm.head_dim;
        for buf in s.k.iter_mut().chain(s.v.iter_mut()) {
            let mut nb = vec![0f32; dm.kv_heads * new_cap * hd];
            for h in 0..dm.kv_heads {
                let src = &buf[h * s.capacity * hd..][..s.len * hd];
                nb[h * new_cap * hd..][..s.len * hd].copy_from_slice(src);
            }
            *buf = nb;
        }
        // RoPE table, the same arithmetic as `RotaryEmbedding::build`.
        let half = hd / 2;
        let scale = (-(self.max_period.ln()) * 2.0 / hd as f64) as f32;
        let freqs: Vec<f32> = (0..half).map(|i| (i as f32 * scale).exp()).collect();
        s.rope_cos.resize(new_cap * half, 0.0);
        s.rope_sin.resize(new_cap * half, 0.0);
        for t in s.capacity..new_cap {
            for (i, f) in freqs.iter().enumerate() {
                let angle = f * t as f32;
                s.rope_cos[t * half + i] = (angle as f64).cos() as f32;
                s.rope_sin[t * half + i] = (angle as f64).sin() as f32;
            }
        }
        s.scores = vec![0f32; dm.heads * new_cap];
        s.capacity = new_cap;
    }

    fn check_state(&self, s: &FlowLmFastState) -> Result<()> {
        if s.dims != self.dims {
            return Err(Error::InvalidArgument(
                "FlowLmFast: the state was made by a FlowLmFast of another model".into(),
            ));
        }
        Ok(())
    }

    /// Copies a voice prompt state (Candle KV caches, e.g. from
    /// [`crate::models::tts_model::TtsModel::voice_state`]) into `state`, replacing its
    /// content, and makes room for `extra_capacity` more positions (allocating only if
    /// the state is too small).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the voice state does not fit the model.
    pub fn load_voice(
        &self,
        voice: &VoiceState,
        state: &mut FlowLmFastState,
        extra_capacity: usize,
    ) -> Result<()> {
        self.check_state(state)?;
        let caches = &voice.state.caches;
        let dm = self.dims;
        if caches.len() != dm.layers {
            return Err(Error::InvalidArgument(format!(
                "FlowLmFast: the voice state has {} layers, the model {}",
                caches.len(),
                dm.layers
            )));
        }
        let len = caches[0].len();
        for (i, c) in caches.iter().enumerate() {
            if c.len() != len || c.offset() != len {
                return Err(Error::InvalidArgument(format!(
                    "FlowLmFast: voice state layer {i} holds positions {}..{} (layer 0: 0..{len}); \
                     only whole, unwindowed caches are supported",
                    c.offset() - c.len(),
                    c.offset()
                )));
            }
        }
        state.len = 0;
        self.grow(state, len + extra_capacity);
        let hd = dm.head_dim;
        for (l, c) in caches.iter().enumerate() {
            for (src, dst) in [(&c.k, &mut state.k[l]), (&c.v, &mut state.v[l])] {
                let dims = src.dims();
                if dims.len() != 4 || dims[0] != 1 || dims[1] != dm.kv_heads || dims[3] != hd {
                    return Err(Error::InvalidArgument(format!(
                        "FlowLmFast: voice state layer {l} cache has shape {dims:?}, expected \
                         [1, {}, T, {hd}]",
                        dm.kv_heads
                    )));
                }
                let src = src.to_dtype(DType::F32)?.contiguous()?;
                let cap_src = dims[2];
                let (storage, layout) = src.storage_and_layout();
                let Storage::Cpu(CpuStorage::F32(data)) = &*storage else {
                    return Err(Error::Unsupported(
                        "FlowLmFast: the voice state is not on the CPU".into(),
                    ));
                };
                let data = &data[layout.start_offset()..];
                for h in 0..dm.kv_heads {
                    dst[h * state.capacity * hd..][..len * hd]
                        .copy_from_slice(&data[h * cap_src * hd..][..len * hd]);
                }
            }
        }
        state.len = len;
        Ok(())
    }

    /// Copies `src` (e.g. a prefilled voice) into `dst`, making room for `extra_capacity`
    /// more positions; allocates only if `dst` is too small.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for states of another model.
    pub fn copy_state(
        &self,
        src: &FlowLmFastState,
        dst: &mut FlowLmFastState,
        extra_capacity: usize,
    ) -> Result<()> {
        self.check_state(src)?;
        self.check_state(dst)?;
        dst.len = 0;
        self.grow(dst, src.len + extra_capacity);
        let hd = self.dims.head_dim;
        for l in 0..self.dims.layers {
            for h in 0..self.dims.kv_heads {
                let (a, b) = (h * src.capacity * hd, h * dst.capacity * hd);
                let n = src.len * hd;
                dst.k[l][b..b + n].copy_from_slice(&src.k[l][a..a + n]);
                dst.v[l][b..b + n].copy_from_slice(&src.v[l][a..a + n]);
            }
        }
        dst.len = src.len;
        Ok(())
    }

    /// The state as a Candle [`VoiceState`] (e.g. to save it with `VoiceState::save`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a state of another model.
    pub fn export_voice(&self, state: &FlowLmFastState) -> Result<VoiceState> {
        self.check_state(state)?;
        let dm = self.dims;
        let (len, hd) = (state.len, dm.head_dim);
        let mut caches = Vec::with_capacity(dm.layers);
        for l in 0..dm.layers {
            let gather = |buf: &[f32]| -> Vec<f32> {
                let mut out = Vec::with_capacity(dm.kv_heads * len * hd);
                for h in 0..dm.kv_heads {
                    out.extend_from_slice(&buf[h * state.capacity * hd..][..len * hd]);
                }
                out
            };
            let shape = (1, dm.kv_heads, len, hd);
            let k = Tensor::from_vec(gather(&state.k[l]), shape, &Device::Cpu)?;
            let v = Tensor::from_vec(gather(&state.v[l]), shape, &Device::Cpu)?;
            caches.push(KvCache::from_kv(&k, &v, len, len)?);
        }
        Ok(VoiceState {
            state: TransformerState { caches },
        })
    }

    /// Text token ids → embeddings `[tokens.len(), dim]` in `out` (replaced): lookup-table
    /// rows, projected when the table is low-rank (reference: `LUTConditioner`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a token id outside the table.
    pub fn embed_tokens(&self, tokens: &[u32], out: &mut Vec<f32>) -> Result<()> {
        let (d, w) = (self.dims.d, self.lut_width);
        out.clear();
        out.resize(tokens.len() * d, 0.0);
        let table = self.lut.get();
        let proj = self.lut_proj.as_ref().map(|p| p.w.get());
        for (i, &tok) in tokens.iter().enumerate() {
            let t = tok as usize;
            if t >= self.lut_rows {
                return Err(Error::InvalidArgument(format!(
                    "token id {tok} is outside the lookup table ({} rows)",
                    self.lut_rows
                )));
            }
            let row = &table[t * w..(t + 1) * w];
            let dst = &mut out[i * d..(i + 1) * d];
            match &proj {
                Some(p) => simd::gemv(p, row, dst, None, false),
                None => dst.copy_from_slice(row),
            }
        }
        Ok(())
    }

    /// Voice conditioning: Mimi latents `[frames, speaker_dim]` → `[(1 +) frames, dim]` in
    /// `out` (replaced), prefixed with the learnt BOS row when the model has one
    /// (Candle: [`FlowLm::voice_conditioning`]). Feed it to [`Self::prefill`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `latents` is not a whole number of frames.
    pub fn voice_conditioning(&self, latents: &[f32], out: &mut Vec<f32>) -> Result<()> {
        let (d, sd) = (self.dims.d, self.speaker_dim);
        if sd == 0 || !latents.len().is_multiple_of(sd) {
            return Err(Error::InvalidArgument(format!(
                "voice latents have {} values, not a multiple of the latent width {sd}",
                latents.len()
            )));
        }
        let frames = latents.len() / sd;
        let head = usize::from(self.bos_before_voice.is_some());
        out.clear();
        out.resize((head + frames) * d, 0.0);
        if let Some(b) = &self.bos_before_voice {
            out[..d].copy_from_slice(&b.get());
        }
        let w = self.speaker_proj.get();
        matmul_wt(
            latents,
            frames,
            &w,
            d,
            sd,
            &mut out[head * d..],
            false,
            &self.prefill_team,
        );
        Ok(())
    }

    /// `y (+)= W·x (+ b)`, split by rows over the team when large.
    fn gemv(&self, team: &simd::Team, lin: &Lin, x: &[f32], y: &mut [f32], acc: bool) {
        let w = lin.w.get();
        let b = lin.b.as_ref().map(W::get);
        let b = b.as_deref();
        let n = team.threads();
        if n == 1 || w.len() < PAR_MIN_WEIGHTS {
            simd::gemv(&w, x, y, b, acc);
            return;
        }
        let (rows, cols) = (lin.out, lin.inp);
        assert_eq!(y.len(), rows);
        let yp = SyncPtr(y.as_mut_ptr());
        let w: &[f32] = &w;
        let chunks = (CHUNKS_PER_THREAD * n).min(rows.div_ceil(8));
        team.run_chunks(chunks, |i| {
            let r = simd::split_range(rows, chunks, 8, i);
            if r.is_empty() {
                return;
            }
            // SAFETY: `split_range` gives each chunk a disjoint row range of `y`.
            let yi = unsafe { yp.slice(r.start, r.len()) };
            simd::gemv(
                &w[r.start * cols..r.end * cols],
                x,
                yi,
                b.map(|b| &b[r.clone()]),
                acc,
            );
        });
    }

    /// Attention of the query heads in `q` over positions `0..len` of layer `l`, into `out`.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        team: &simd::Team,
        q: &[f32],
        kc: &[f32],
        vc: &[f32],
        len: usize,
        cap: usize,
        scores: &mut [f32],
        out: &mut [f32],
    ) {
        let dm = self.dims;
        let rep = dm.heads / dm.kv_heads;
        let scale = (1.0 / (dm.head_dim as f64).sqrt()) as f32;
        assert!(scores.len() >= dm.heads * cap && out.len() >= dm.heads * dm.head_dim);
        assert!(kc.len() >= dm.kv_heads * cap * dm.head_dim && len <= cap);
        let (sp, op) = (SyncPtr(scores.as_mut_ptr()), SyncPtr(out.as_mut_ptr()));
        let n = team.threads();
        if n == 1 || dm.heads * len * dm.head_dim < PAR_MIN_ATTENTION {
            attend(
                0..dm.heads,
                q,
                kc,
                vc,
                len,
                cap,
                dm.head_dim,
                rep,
                scale,
                sp,
                op,
            );
        } else {
            team.run_chunks(dm.heads, |h| {
                attend(
                    h..h + 1,
                    q,
                    kc,
                    vc,
                    len,
                    cap,
                    dm.head_dim,
                    rep,
                    scale,
                    sp,
                    op,
                );
            });
        }
    }

    /// Feeds `t` conditioning embeddings (`[t, dim]` row-major: text from
    /// [`Self::embed_tokens`] or voice from [`Self::voice_conditioning`]) through the
    /// transformer, appending `t` positions to `state` (growing it if needed). Uses GEMM;
    /// allocates scratch on first use.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `embeddings.len() != t · dim` or the state belongs to
    /// another model.
    pub fn prefill(&self, embeddings: &[f32], t: usize, state: &mut FlowLmFastState) -> Result<()> {
        self.check_state(state)?;
        let dm = self.dims;
        if embeddings.len() != t * dm.d {
            return Err(Error::InvalidArgument(format!(
                "FlowLmFast::prefill: {} values for {t} positions of width {}",
                embeddings.len(),
                dm.d
            )));
        }
        if t == 0 {
            return Ok(());
        }
        self.grow(state, state.len + t);
        let s = state;
        let (d, hd, half, cap, pos0) = (dm.d, dm.head_dim, dm.head_dim / 2, s.capacity, s.len);
        let (qkv_dim, kv_dim) = (dm.qkv_dim(), dm.kv_dim());
        let p = &mut s.prefill;
        let fit = |v: &mut Vec<f32>, n: usize| {
            v.clear();
            v.resize(n, 0.0);
        };
        fit(&mut p.x, t * d);
        fit(&mut p.h, t * d);
        fit(&mut p.qkv, t * qkv_dim);
        fit(&mut p.att, t * dm.attn_dim);
        fit(&mut p.ff, t * dm.ff);
        p.x.copy_from_slice(embeddings);
        let team = &self.prefill_team;
        for (l, lw) in self.layers.iter().enumerate() {
            lw.norm1.apply(&p.x, &mut p.h, d);
            let w = lw.in_proj.w.get();
            matmul_wt(&p.h, t, &w, qkv_dim, d, &mut p.qkv, false, team);
            drop(w);
            for i in 0..t {
                let pos = pos0 + i;
                let (cos, sin) = (
                    &s.rope_cos[pos * half..(pos + 1) * half],
                    &s.rope_sin[pos * half..(pos + 1) * half],
                );
                let row = &mut p.qkv[i * qkv_dim..(i + 1) * qkv_dim];
                for h in 0..dm.heads {
                    rope(&mut row[h * hd..(h + 1) * hd], cos, sin);
                }
                for h in 0..dm.kv_heads {
                    let k = &mut row[dm.attn_dim + h * hd..dm.attn_dim + (h + 1) * hd];
                    rope(k, cos, sin);
                    let at = h * cap * hd + pos * hd;
                    s.k[l][at..at + hd].copy_from_slice(k);
                    let v = &row[dm.attn_dim + kv_dim + h * hd..][..hd];
                    s.v[l][at..at + hd].copy_from_slice(v);
                }
            }
            for i in 0..t {
                let q = &p.qkv[i * qkv_dim..i * qkv_dim + dm.attn_dim];
                let out = &mut p.att[i * dm.attn_dim..(i + 1) * dm.attn_dim];
                self.attention(
                    team,
                    q,
                    &s.k[l],
                    &s.v[l],
                    pos0 + i + 1,
                    cap,
                    &mut s.scores,
                    out,
                );
            }
            let w = lw.out_proj.w.get();
            matmul_wt(&p.att, t, &w, d, dm.attn_dim, &mut p.x, true, team);
            drop(w);
            lw.norm2.apply(&p.x, &mut p.h, d);
            let w = lw.linear1.w.get();
            matmul_wt(&p.h, t, &w, dm.ff, d, &mut p.ff, false, team);
            drop(w);
            simd::gelu_tanh(&mut p.ff);
            let w = lw.linear2.w.get();
            matmul_wt(&p.ff, t, &w, d, dm.ff, &mut p.x, true, team);
        }
        s.len += t;
        Ok(())
    }

    /// One autoregressive step: feeds `previous_latent` (`[ldim]`; `None` for the first
    /// frame, which uses the BOS embedding) and samples the next latent from `noise`
    /// (`[ldim]`, the flow's starting point: `N(0, temperature)` or zeros) with
    /// `decode_steps` flow steps (LSD / flow matching; ignored by drifting and pointwise
    /// heads) into `latent_out` (`[ldim]`, normalised like the Candle step's latent).
    /// Returns the EOS logit. Allocation-free (see the module docs).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for wrong slice lengths, `decode_steps == 0` with an
    /// LSD/flow-matching head, or a state of another model.
    pub fn step(
        &self,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        self.step_on(
            &self.team,
            previous_latent,
            noise,
            decode_steps,
            state,
            latent_out,
        )
    }

    /// [`Self::step`] on the prefill threads ([`Self::set_prefill_threads`]) instead of
    /// the step threads: for a step taken while nothing else runs, such as the first
    /// frame of a generation, before the Mimi decoder thread has any work (it shortens
    /// the time to first audio). Same result as [`Self::step`].
    ///
    /// # Errors
    /// As [`Self::step`].
    pub fn step_wide(
        &self,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        let team = &self.prefill_team;
        self.step_on(
            team,
            previous_latent,
            noise,
            decode_steps,
            state,
            latent_out,
        )
    }

    fn step_on(
        &self,
        team: &simd::Team,
        previous_latent: Option<&[f32]>,
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<f32> {
        self.check_state(state)?;
        let dm = self.dims;
        let ldim = dm.ldim;
        if noise.len() != ldim
            || latent_out.len() != ldim
            || previous_latent.is_some_and(|p| p.len() != ldim)
        {
            return Err(Error::InvalidArgument(format!(
                "FlowLmFast::step: noise, latent_out and previous_latent must have {ldim} values"
            )));
        }
        if decode_steps == 0 && self.kind.num_time_conds() > 0 {
            return Err(Error::InvalidArgument(
                "FlowLmFast::step: decode_steps must be at least 1".into(),
            ));
        }
        self.grow(state, state.len + 1);
        let s = state;
        let pos = s.len;
        {
            let bos;
            let input: &[f32] = match previous_latent {
                Some(p) => p,
                None => {
                    bos = self.bos_emb.get();
                    &bos[..]
                }
            };
            self.gemv(team, &self.input_linear, input, &mut s.x, false);
        }
        let (hd, half, cap) = (dm.head_dim, dm.head_dim / 2, s.capacity);
        let kv_dim = dm.kv_dim();
        for (l, lw) in self.layers.iter().enumerate() {
            lw.norm1.apply(&s.x, &mut s.hn, dm.d);
            self.gemv(team, &lw.in_proj, &s.hn, &mut s.qkv, false);
            let cos = &s.rope_cos[pos * half..(pos + 1) * half];
            let sin = &s.rope_sin[pos * half..(pos + 1) * half];
            for h in 0..dm.heads {
                rope(&mut s.qkv[h * hd..(h + 1) * hd], cos, sin);
            }
            for h in 0..dm.kv_heads {
                let k = &mut s.qkv[dm.attn_dim + h * hd..dm.attn_dim + (h + 1) * hd];
                rope(k, cos, sin);
                let at = h * cap * hd + pos * hd;
                s.k[l][at..at + hd].copy_from_slice(k);
                let v = &s.qkv[dm.attn_dim + kv_dim + h * hd..][..hd];
                s.v[l][at..at + hd].copy_from_slice(v);
            }
            self.attention(
                team,
                &s.qkv[..dm.attn_dim],
                &s.k[l],
                &s.v[l],
                pos + 1,
                cap,
                &mut s.scores,
                &mut s.att,
            );
            self.gemv(team, &lw.out_proj, &s.att, &mut s.x, true);
            lw.norm2.apply(&s.x, &mut s.hn, dm.d);
            self.gemv(team, &lw.linear1, &s.hn, &mut s.ff, false);
            simd::gelu_tanh(&mut s.ff);
            self.gemv(team, &lw.linear2, &s.ff, &mut s.x, true);
        }
        s.len += 1;
        self.out_norm.apply(&s.x, &mut s.zn, dm.d);
        match &self.z_proj {
            Some(p) => self.gemv(team, p, &s.zn, &mut s.z, false),
            None => s.z.copy_from_slice(&s.zn),
        }
        self.gemv(team, &self.out_eos, &s.z, &mut s.eos, false);
        self.flow_decode(team, &s.z, noise, decode_steps, &mut s.flow, latent_out);
        Ok(s.eos[0])
    }

    /// The flow head alone: samples a latent from a backbone output `z` (`[z_dim]`) and
    /// `noise` (`[ldim]`) into `latent_out` (Candle: [`FlowLm::decode_flow`]). Allocation-free
    /// like [`Self::step`], which calls it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for wrong slice lengths or `decode_steps == 0` with an
    /// LSD/flow-matching head.
    pub fn decode_flow(
        &self,
        z: &[f32],
        noise: &[f32],
        decode_steps: usize,
        state: &mut FlowLmFastState,
        latent_out: &mut [f32],
    ) -> Result<()> {
        self.check_state(state)?;
        let dm = self.dims;
        if z.len() != dm.z || noise.len() != dm.ldim || latent_out.len() != dm.ldim {
            return Err(Error::InvalidArgument(format!(
                "FlowLmFast::decode_flow: z must have {} values, noise and latent_out {}",
                dm.z, dm.ldim
            )));
        }
        if decode_steps == 0 && self.kind.num_time_conds() > 0 {
            return Err(Error::InvalidArgument(
                "FlowLmFast::decode_flow: decode_steps must be at least 1".into(),
            ));
        }
        let team = &self.team;
        self.flow_decode(team, z, noise, decode_steps, &mut state.flow, latent_out);
        Ok(())
    }

    /// Width of the backbone output the flow and EOS heads read (`z_dim` or `dim`).
    pub fn z_dim(&self) -> usize {
        self.dims.z
    }

    /// Weights (f32 values) one [`Self::step`] reads with `decode_steps` flow steps, once
    /// the time embeddings are cached: the memory traffic that bounds its speed (the KV
    /// cache adds `2 · layers · kv_heads · head_dim · len` values).
    pub fn weights_per_step(&self, decode_steps: usize) -> usize {
        let lin = |l: &Lin| l.out * l.inp + l.b.as_ref().map_or(0, |_| l.out);
        let mut n = lin(&self.input_linear) + lin(&self.out_eos);
        n += self.z_proj.as_ref().map_or(0, lin);
        for l in &self.layers {
            n += lin(&l.in_proj) + lin(&l.out_proj) + lin(&l.linear1) + lin(&l.linear2);
        }
        let f = &self.flow;
        let per_head = lin(&f.input)
            + f.blocks
                .iter()
                .map(|b| lin(&b.ada) + lin(&b.mlp1) + lin(&b.mlp2))
                .sum::<usize>()
            + lin(&f.final_ada)
            + lin(&f.final_linear);
        let heads = if self.kind.num_time_conds() > 0 {
            decode_steps.max(1)
        } else {
            1
        };
        n + lin(&f.cond) + heads * per_head
    }

    /// Fills `f.time_cache` with the mean time embedding of each of `steps` decode steps.
    fn fill_time_cache(&self, team: &simd::Team, steps: usize, f: &mut FlowScratch) {
        if f.time_cache_steps == steps {
            return;
        }
        let fd = self.flow.dim;
        f.time_cache.clear();
        f.time_cache.resize(steps * fd, 0.0);
        let n = self.flow.time.len();
        for i in 0..steps {
            let times = [
                (i as f64 / steps as f64) as f32,
                ((i + 1) as f64 / steps as f64) as f32,
            ];
            for (k, te) in self.flow.time.iter().enumerate() {
                let t = times[k];
                let freqs = te.freqs.get();
                let half = freqs.len();
                for (j, fr) in freqs.iter().enumerate() {
                    let arg = t * fr;
                    f.emb[j] = arg.cos();
                    f.emb[half + j] = arg.sin();
                }
                drop(freqs);
                self.gemv(team, &te.linear1, &f.emb, &mut f.t1, false);
                simd::silu(&mut f.t1);
                self.gemv(team, &te.linear2, &f.t1, &mut f.te, false);
                rms_norm(&mut f.te, &te.alpha.get(), te.eps);
                if k == 0 {
                    f.te_sum.copy_from_slice(&f.te);
                } else {
                    for (a, b) in f.te_sum.iter_mut().zip(&f.te) {
                        *a += b;
                    }
                }
            }
            let inv = (1.0 / n as f64) as f32;
            for (dst, src) in f.time_cache[i * fd..(i + 1) * fd].iter_mut().zip(&f.te_sum) {
                *dst = src * inv + 0.0;
            }
        }
        f.time_cache_steps = steps;
    }

    /// The flow head `v(c, t, x)` with the condition `y` (already `cond + time`): `x` →
    /// `out` (`[ldim]`).
    fn head(&self, team: &simd::Team, x: &[f32], f: &mut FlowScratch, out: &mut [f32]) {
        let fd = self.flow.dim;
        silu_into(&f.y, &mut f.ys);
        self.gemv(team, &self.flow.input, x, &mut f.h, false);
        for b in &self.flow.blocks {
            self.gemv(team, &b.ada, &f.ys, &mut f.ada, false);
            let (shift, rest) = f.ada.split_at(fd);
            let (scale, gate) = rest.split_at(fd);
            b.in_ln.apply(&f.h, &mut f.t1, fd);
            modulate(&mut f.t1, shift, scale);
            self.gemv(team, &b.mlp1, &f.t1, &mut f.t2, false);
            simd::silu(&mut f.t2);
            self.gemv(team, &b.mlp2, &f.t2, &mut f.t1, false);
            for ((h, u), g) in f.h.iter_mut().zip(&f.t1).zip(gate) {
                *h += u * g;
            }
        }
        let ada = &mut f.ada[..2 * fd];
        self.gemv(team, &self.flow.final_ada, &f.ys, ada, false);
        let (shift, scale) = ada.split_at(fd);
        self.flow.final_norm.apply(&f.h, &mut f.t1, fd);
        modulate(&mut f.t1, shift, scale);
        self.gemv(team, &self.flow.final_linear, &f.t1, out, false);
    }

    /// Samples a latent from the backbone output `z` (Candle: [`FlowLm::decode_flow`]).
    fn flow_decode(
        &self,
        team: &simd::Team,
        z: &[f32],
        noise: &[f32],
        steps: usize,
        f: &mut FlowScratch,
        out: &mut [f32],
    ) {
        let mut cond = std::mem::take(&mut f.cond);
        self.gemv(team, &self.flow.cond, z, &mut cond, false);
        let fd = self.flow.dim;
        match self.kind {
            FlowKind::Lsd | FlowKind::FlowMatching => {
                self.fill_time_cache(team, steps, f);
                out.copy_from_slice(noise);
                let inv = (1.0 / steps as f64) as f32;
                let mut dir = std::mem::take(&mut f.dir);
                for i in 0..steps {
                    for ((y, c), t) in f.y.iter_mut().zip(&cond).zip(&f.time_cache[i * fd..]) {
                        *y = c + t;
                    }
                    self.head(team, out, f, &mut dir);
                    for (o, d) in out.iter_mut().zip(&dir) {
                        *o += d * inv + 0.0;
                    }
                }
                f.dir = dir;
            }
            FlowKind::Drifting => {
                f.y.copy_from_slice(&cond);
                self.head(team, noise, f, out);
            }
            FlowKind::Pointwise => {
                f.y.copy_from_slice(&cond);
                let mut dir = std::mem::take(&mut f.dir);
                self.head(team, noise, f, &mut dir);
                for ((o, n), d) in out.iter_mut().zip(noise).zip(&dir) {
                    *o = n + d;
                }
                f.dir = dir;
            }
        }
        f.cond = cond;
    }
}

fn rms_eps(n: &RmsNorm) -> f32 {
    n.eps as f32
}

/// The reference's `RMSNorm` in place: `x · alpha / sqrt(var(x) + eps)`, unbiased variance
/// (same operation order as [`RmsNorm`]).
fn rms_norm(x: &mut [f32], alpha: &[f32], eps: f32) {
    let n = x.len();
    let mean = x.iter().sum::<f32>() * (1.0 / n as f64) as f32;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>()
        * (1.0 / (n.max(2) - 1) as f64) as f32;
    let inv = 1.0 / (var + eps).sqrt();
    for (v, a) in x.iter_mut().zip(alpha) {
        *v = *v * inv * a;
    }
}

impl FlowLmFastState {
    /// Positions held (the offset of the next one).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was fed yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions the state can hold without growing.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Forgets every position (keeps the buffers).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}
