//! Streaming multi-head attention with a pre-allocated KV cache
//! (reference: `modules/attention.py`, `StreamingMultiheadAttention`).

use candle_core::{DType, Device, Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use super::linear::{LinearStorage, MaybeQuantizedLinear};
use super::rope::RotaryEmbedding;
use crate::modules::weights_view::AttentionView;

/// Key/value cache of one attention layer.
///
/// Keys and values are stored `[B, H_kv, capacity, D]`, pre-allocated and filled in
/// place. `offset` is the absolute position of the next token (the RoPE offset);
/// the buffer holds the last `len` positions, `offset - len .. offset`. With a finite
/// attention `context` (Mimi), old positions are dropped when the buffer is full,
/// since the mask never lets a query see them again.
#[derive(Debug)]
pub struct KvCache {
    k: Tensor,
    v: Tensor,
    len: usize,
    offset: usize,
    context: Option<usize>,
}

impl KvCache {
    /// An empty cache with room for `capacity` positions.
    pub fn new(
        batch: usize,
        kv_heads: usize,
        head_dim: usize,
        capacity: usize,
        context: Option<usize>,
        dtype: DType,
        device: &Device,
    ) -> Result<Self> {
        let capacity = capacity.max(1);
        let k = Tensor::zeros((batch, kv_heads, capacity, head_dim), dtype, device)?;
        let v = Tensor::zeros((batch, kv_heads, capacity, head_dim), dtype, device)?;
        Ok(Self {
            k,
            v,
            len: 0,
            offset: 0,
            context,
        })
    }

    /// Builds a cache holding `k`, `v` (`[B, H_kv, T, D]`) for positions
    /// `offset - T .. offset`, with room for `capacity` positions.
    pub fn from_kv(k: &Tensor, v: &Tensor, offset: usize, capacity: usize) -> Result<Self> {
        let (b, h, t, d) = k.dims4()?;
        let mut cache = Self::new(b, h, d, capacity.max(t), None, k.dtype(), k.device())?;
        if t > 0 {
            cache.k.slice_set(&k.contiguous()?, 2, 0)?;
            cache.v.slice_set(&v.contiguous()?, 2, 0)?;
        }
        cache.len = t;
        cache.offset = offset;
        Ok(cache)
    }

    /// Absolute position of the next token.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of cached positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Allocated positions.
    pub fn capacity(&self) -> usize {
        self.k.dim(2).unwrap_or(0)
    }

    /// The cached keys and values, each `[B, H_kv, len, D]`.
    pub fn kv(&self) -> Result<(Tensor, Tensor)> {
        Ok((
            self.k.narrow(2, 0, self.len)?,
            self.v.narrow(2, 0, self.len)?,
        ))
    }

    /// A deep copy (the buffers are not shared), with room for at least `capacity`.
    pub fn deep_clone(&self, capacity: usize) -> Result<Self> {
        let (k, v) = self.kv()?;
        let mut c = Self::from_kv(&k, &v, self.offset, capacity.max(self.capacity()))?;
        c.context = self.context;
        Ok(c)
    }

    /// Makes room for `extra` more positions without reallocating during them.
    pub fn reserve(&mut self, extra: usize) -> Result<()> {
        let needed = self.len + extra;
        if needed <= self.capacity() {
            return Ok(());
        }
        let keep = match self.context {
            Some(ctx) => self.len.min(ctx.saturating_sub(1)),
            None => self.len,
        };
        let new_cap = match self.context {
            Some(ctx) => (ctx + extra).max(keep + extra),
            None => needed.max(self.capacity() * 2),
        };
        let (b, h, _, d) = self.k.dims4()?;
        let k = Tensor::zeros((b, h, new_cap, d), self.k.dtype(), self.k.device())?;
        let v = Tensor::zeros((b, h, new_cap, d), self.v.dtype(), self.v.device())?;
        if keep > 0 {
            let start = self.len - keep;
            k.slice_set(&self.k.narrow(2, start, keep)?.contiguous()?, 2, 0)?;
            v.slice_set(&self.v.narrow(2, start, keep)?.contiguous()?, 2, 0)?;
        }
        self.k = k;
        self.v = v;
        self.len = keep;
        Ok(())
    }

    /// Appends `k`, `v` (`[B, H_kv, T, D]`) and returns all cached keys and values.
    pub fn append(&mut self, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let t = k.dim(2)?;
        self.reserve(t)?;
        self.k.slice_set(&k.contiguous()?, 2, self.len)?;
        self.v.slice_set(&v.contiguous()?, 2, self.len)?;
        self.len += t;
        self.offset += t;
        self.kv()
    }
}

/// Streaming self-attention with RoPE, optional grouped-query heads and an optional
/// finite context (in steps).
#[derive(Debug, Clone)]
pub struct StreamingMultiheadAttention {
    in_proj: MaybeQuantizedLinear,
    out_proj: MaybeQuantizedLinear,
    num_heads: usize,
    num_kv_heads: usize,
    head_dim: usize,
    attn_dim: usize,
    context: Option<usize>,
}

impl StreamingMultiheadAttention {
    /// Loads `in_proj.weight` `[attn_dim + 2 * kv_dim, embed_dim]` and
    /// `out_proj.weight` `[embed_dim, attn_dim]`, both stored as `storage` (see
    /// [`MaybeQuantizedLinear`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        embed_dim: usize,
        num_heads: usize,
        attn_dim: Option<usize>,
        num_kv_heads: Option<usize>,
        context: Option<usize>,
        storage: LinearStorage,
        vb: VarBuilder,
    ) -> Result<Self> {
        let attn_dim = attn_dim.unwrap_or(embed_dim);
        let num_kv_heads = num_kv_heads.unwrap_or(num_heads);
        let head_dim = attn_dim / num_heads;
        let kv_dim = head_dim * num_kv_heads;
        Ok(Self {
            in_proj: MaybeQuantizedLinear::load(
                embed_dim,
                attn_dim + 2 * kv_dim,
                false,
                storage,
                vb.pp("in_proj"),
            )?,
            out_proj: MaybeQuantizedLinear::load(
                attn_dim,
                embed_dim,
                false,
                storage,
                vb.pp("out_proj"),
            )?,
            num_heads,
            num_kv_heads,
            head_dim,
            attn_dim,
            context,
        })
    }

    /// The weights and hyper-parameters, read-only.
    pub fn view(&self) -> AttentionView<'_> {
        AttentionView {
            in_proj: self.in_proj.view(),
            out_proj: self.out_proj.view(),
            num_heads: self.num_heads,
            num_kv_heads: self.num_kv_heads,
            head_dim: self.head_dim,
            attn_dim: self.attn_dim,
            context: self.context,
        }
    }

    /// Key/value heads.
    pub fn num_kv_heads(&self) -> usize {
        self.num_kv_heads
    }

    /// Width of one head.
    pub fn head_dim(&self) -> usize {
        self.head_dim
    }

    /// A fresh cache for this layer.
    pub fn init_cache(&self, batch: usize, capacity: usize, device: &Device) -> Result<KvCache> {
        KvCache::new(
            batch,
            self.num_kv_heads,
            self.head_dim,
            capacity,
            self.context,
            DType::F32,
            device,
        )
    }

    /// `x`: `[B, T, embed_dim]` → `[B, T, embed_dim]`, appending to `cache`.
    pub fn forward(
        &self,
        x: &Tensor,
        rope: &RotaryEmbedding,
        cache: &mut KvCache,
    ) -> Result<Tensor> {
        let (b, t, _) = x.dims3()?;
        let projected = self.in_proj.forward(x)?;
        let kv_dim = self.head_dim * self.num_kv_heads;
        let q = projected
            .narrow(D::Minus1, 0, self.attn_dim)?
            .reshape((b, t, self.num_heads, self.head_dim))?
            .transpose(1, 2)?;
        let kv = projected
            .narrow(D::Minus1, self.attn_dim, 2 * kv_dim)?
            .reshape((b, t, 2, self.num_kv_heads, self.head_dim))?;
        let k = kv.narrow(2, 0, 1)?.squeeze(2)?.transpose(1, 2)?;
        let v = kv.narrow(2, 1, 1)?.squeeze(2)?.transpose(1, 2)?;
        let offset = cache.offset();
        let q = rope.apply(&q, offset)?;
        let k = rope.apply(&k, offset)?;
        let (mut k_all, mut v_all) = cache.append(&k, &v.contiguous()?)?;
        let mut kv_len = k_all.dim(2)?;
        // Position of the first cached key.
        let mut first_pos = cache.offset() - kv_len;
        if t == 1 {
            if let Some(ctx) = self.context {
                if kv_len > ctx {
                    k_all = k_all.narrow(2, kv_len - ctx, ctx)?;
                    v_all = v_all.narrow(2, kv_len - ctx, ctx)?;
                    first_pos += kv_len - ctx;
                    kv_len = ctx;
                }
            }
        }
        if self.num_kv_heads != self.num_heads {
            let rep = self.num_heads / self.num_kv_heads;
            k_all = repeat_kv(&k_all, rep)?;
            v_all = repeat_kv(&v_all, rep)?;
        }
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let mut scores = (q.contiguous()?.matmul(&k_all.t()?)? * scale)?;
        if t > 1 || self.context.is_some_and(|c| kv_len > c) {
            let mask = attention_mask(offset, t, first_pos, kv_len, self.context, x.device())?;
            scores = scores.broadcast_add(&mask)?;
        }
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let out = probs.matmul(&v_all.contiguous()?)?;
        let out = out.transpose(1, 2)?.reshape((b, t, self.attn_dim))?;
        self.out_proj.forward(&out)
    }
}

/// Repeats each key/value head `rep` times: `[B, H_kv, T, D]` → `[B, H_kv * rep, T, D]`
/// (`repeat_interleave` on the head axis).
fn repeat_kv(x: &Tensor, rep: usize) -> Result<Tensor> {
    let (b, h, t, d) = x.dims4()?;
    x.unsqueeze(2)?
        .expand((b, h, rep, t, d))?
        .reshape((b, h * rep, t, d))
}

/// Additive mask `[T, L]`: 0 where query `offset + i` may see key `first_pos + j`
/// (causal, and within `context` steps), `-inf` elsewhere.
/// Reference: `_build_attention_mask`.
fn attention_mask(
    offset: usize,
    t: usize,
    first_pos: usize,
    kv_len: usize,
    context: Option<usize>,
    device: &Device,
) -> Result<Tensor> {
    let mut m = vec![0f32; t * kv_len];
    for i in 0..t {
        let pq = (offset + i) as i64;
        for j in 0..kv_len {
            let delta = pq - (first_pos + j) as i64;
            let ok = delta >= 0 && context.is_none_or(|c| delta < c as i64);
            if !ok {
                m[i * kv_len + j] = f32::NEG_INFINITY;
            }
        }
    }
    Tensor::from_vec(m, (t, kv_len), device)
}
