//! Per-generation state: [`FlowLmFastState`]'s KV caches (plain buffers laid out like the
//! Candle `KvCache`), RoPE table and scratch buffers; growing it, importing a voice prompt
//! state, copying and exporting it (Python package pocket-tts 4.0.1: the
//! streaming state of `modules/transformer.py` and `modules/attention.py`, the voice
//! prompt state of `models/flow_lm.py`).

use pocket_tts_simd as simd;

use super::{Dims, FlowLmFast, FlowLmFastState};
use crate::models::model_state::{LayerKv, VoiceState};
use crate::{Error, Result};

/// Decode steps whose time embeddings fit in a fresh state without reallocating.
const RESERVED_DECODE_STEPS: usize = 8;

/// Scratch buffers of the flow head (see `flow_head`).
#[derive(Debug, Clone, Default)]
pub(super) struct FlowScratch {
    pub(super) cond: Vec<f32>,
    pub(super) y: Vec<f32>,
    pub(super) ys: Vec<f32>,
    pub(super) h: Vec<f32>,
    pub(super) t1: Vec<f32>,
    pub(super) t2: Vec<f32>,
    pub(super) ada: Vec<f32>,
    pub(super) dir: Vec<f32>,
    /// Time-embedding inputs and temporaries.
    pub(super) emb: Vec<f32>,
    pub(super) te: Vec<f32>,
    pub(super) te_sum: Vec<f32>,
    /// `[decode_steps, flow_dim]`: mean of the time embeddings of each decode step.
    pub(super) time_cache: Vec<f32>,
    /// The `decode_steps` `time_cache` holds (0: none).
    pub(super) time_cache_steps: usize,
    /// A linear's input quantized to int8 (the flow head's int8 or 4-bit linears with
    /// `--quantize`).
    pub(super) xq: simd::QuantizedVector,
}

/// Scratch buffers of [`FlowLmFast::prefill`], sized for the longest prefill so far.
#[derive(Debug, Clone, Default)]
pub(super) struct PrefillScratch {
    pub(super) x: Vec<f32>,
    pub(super) h: Vec<f32>,
    pub(super) qkv: Vec<f32>,
    pub(super) att: Vec<f32>,
    pub(super) ff: Vec<f32>,
}

impl FlowScratch {
    /// Buffers for one latent of a model of sizes `dm`.
    pub(super) fn new(dm: Dims) -> Self {
        let f = dm.flow_dim;
        Self {
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
            xq: simd::QuantizedVector::with_capacity(dm.z.max(f).max(dm.freq_dim)),
        }
    }
}

impl FlowLmFast {
    /// A state with room for `capacity` positions (prompt + text + frames): KV caches,
    /// RoPE table and all scratch buffers. Allocates ~`8·layers·kv_dim·capacity` bytes.
    pub fn new_state(&self, capacity: usize) -> FlowLmFastState {
        let dm = self.dims;
        let cap = capacity.max(1);
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
            xq: simd::QuantizedVector::with_capacity(dm.d.max(dm.attn_dim).max(dm.ff)),
            flow: FlowScratch::new(dm),
            prefill: PrefillScratch::default(),
        };
        self.grow(&mut s, cap);
        s
    }

    /// Makes room for at least `needed` positions (doubling), keeping the cached ones.
    pub(super) fn grow(&self, s: &mut FlowLmFastState, needed: usize) {
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

    pub(super) fn check_state(&self, s: &FlowLmFastState) -> Result<()> {
        if s.dims != self.dims {
            return Err(Error::invalid_argument(
                "FlowLmFast: the state was made by a FlowLmFast of another model",
            ));
        }
        Ok(())
    }

    /// Copies a voice prompt state (e.g. from
    /// [`crate::tts_model::TtsModel::voice_state`]) into `state`, replacing its
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
        let dm = self.dims;
        if voice.layers().len() != dm.layers {
            return Err(Error::invalid_argument(format!(
                "FlowLmFast: the voice state has {} layers, the model {}",
                voice.layers().len(),
                dm.layers
            )));
        }
        if voice.kv_heads() != dm.kv_heads || voice.head_dim() != dm.head_dim {
            return Err(Error::invalid_argument(format!(
                "FlowLmFast: the voice state has {} heads of {} channels, the model {} of {}",
                voice.kv_heads(),
                voice.head_dim(),
                dm.kv_heads,
                dm.head_dim
            )));
        }
        let len = voice.len();
        state.len = 0;
        self.grow(state, len + extra_capacity);
        let hd = dm.head_dim;
        for (l, layer) in voice.layers().iter().enumerate() {
            for (src, dst) in [
                (&layer.keys, &mut state.k[l]),
                (&layer.values, &mut state.v[l]),
            ] {
                for h in 0..dm.kv_heads {
                    dst[h * state.capacity * hd..][..len * hd]
                        .copy_from_slice(&src[h * len * hd..][..len * hd]);
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

    /// The state as a [`VoiceState`] (e.g. to save it with `VoiceState::save`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a state of another model.
    pub fn export_voice(&self, state: &FlowLmFastState) -> Result<VoiceState> {
        self.check_state(state)?;
        let dm = self.dims;
        let (len, hd) = (state.len, dm.head_dim);
        let gather = |buf: &[f32]| -> Vec<f32> {
            let mut out = Vec::with_capacity(dm.kv_heads * len * hd);
            for h in 0..dm.kv_heads {
                out.extend_from_slice(&buf[h * state.capacity * hd..][..len * hd]);
            }
            out
        };
        let layers = (0..dm.layers)
            .map(|l| LayerKv {
                keys: gather(&state.k[l]),
                values: gather(&state.v[l]),
            })
            .collect();
        VoiceState::new(layers, dm.kv_heads, hd, len)
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
