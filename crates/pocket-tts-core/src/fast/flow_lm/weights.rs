//! Weight views: the Candle [`FlowLm`]'s tensors, taken from its [`FlowLmView`], read in
//! place as `f32` slices (no copy), grouped like the reference's modules (Python package
//! pocket-tts 4.0.1: `models/flow_lm.py` `FlowLMModel`, `modules/transformer.py` layers,
//! `modules/attention.py` projections, `modules/mlp.py` `SimpleMLPAdaLN`), and
//! [`FlowLmFast::new`], which checks and collects them.

use std::ops::Deref;
use std::sync::Arc;

use candle_core::{CpuStorage, DType, Storage, Tensor};
use pocket_tts_simd as simd;

use super::{Dims, FlowLmFast};
use crate::models::flow_lm::FlowLm;
use crate::modules::weights_view::{FlowLmView, LayerNormView, LinearView, LutTable, WeightView};
use crate::weights::MappedF32;
use crate::{Error, Result};

/// A contiguous `f32` CPU tensor, read in place.
#[derive(Debug, Clone)]
pub(super) struct W {
    tensor: Tensor,
    offset: usize,
    len: usize,
}

/// The storage read guard of a [`W`], dereferencing to its `f32` slice.
pub(super) struct WRef<'a> {
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

    pub(super) fn get(&self) -> WRef<'_> {
        let (guard, _) = self.tensor.storage_and_layout();
        WRef {
            guard,
            offset: self.offset,
            len: self.len,
        }
    }
}

/// The text lookup table `[rows, width]`: a Candle tensor's storage, or left in the
/// checkpoint's memory map (only the rows read are resident).
#[derive(Debug, Clone)]
pub(super) enum Lut {
    Tensor(W),
    Mapped(MappedF32),
}

/// The read guard of a [`Lut`], dereferencing to its `f32` rows.
pub(super) enum LutRef<'a> {
    Tensor(WRef<'a>),
    Mapped(&'a [f32]),
}

impl Deref for LutRef<'_> {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match self {
            Self::Tensor(w) => w,
            Self::Mapped(m) => m,
        }
    }
}

impl Lut {
    pub(super) fn get(&self) -> LutRef<'_> {
        match self {
            Self::Tensor(w) => LutRef::Tensor(w.get()),
            Self::Mapped(m) => LutRef::Mapped(m.as_slice()),
        }
    }
}

/// A layer norm's parameters.
#[derive(Debug, Clone)]
pub(super) struct Norm {
    weight: Option<W>,
    bias: Option<W>,
    eps: f32,
}

impl Norm {
    fn new(n: &LayerNormView<'_>, name: &str) -> Result<Self> {
        let d = n.dim;
        Ok(Self {
            weight: n
                .weight
                .map(|t| W::new(t, &format!("{name}.weight"), &[d]))
                .transpose()?,
            bias: n
                .bias
                .map(|t| W::new(t, &format!("{name}.bias"), &[d]))
                .transpose()?,
            eps: n.eps as f32,
        })
    }

    /// `out = layer_norm(x)` over rows of `cols`.
    pub(super) fn apply(&self, x: &[f32], out: &mut [f32], cols: usize) {
        let w = self.weight.as_ref().map(W::get);
        let b = self.bias.as_ref().map(W::get);
        simd::layer_norm_rows(x, out, cols, w.as_deref(), b.as_deref(), self.eps);
    }
}

/// A linear layer's weight: `f32` read in place, 16-bit rows (the FlowLM's `dtype`
/// `float16`/`bfloat16`), or int8 rows / 4-bit blocks (the flow head with `--quantize`),
/// the last three shared with the model definition (see
/// [`crate::internals::modules::linear`]).
#[derive(Debug, Clone)]
pub(super) enum LinW {
    F32(W),
    Half(Arc<simd::HalfRows>),
    I8(Arc<simd::QuantizedRows>),
    Q4(Arc<simd::Q4Rows>),
}

/// A linear layer: weight `[out, in]`, optional bias `[out]` (`f32`).
#[derive(Debug, Clone)]
pub(super) struct Lin {
    pub(super) w: LinW,
    pub(super) b: Option<W>,
    pub(super) out: usize,
    pub(super) inp: usize,
}

impl Lin {
    /// A linear of any weight kind, with its optional bias.
    ///
    /// # Errors
    /// [`Error::InvalidData`] when the weight is not `[out, inp]` or the bias not `[out]`.
    fn new(l: &LinearView<'_>, name: &str, out: usize, inp: usize) -> Result<Self> {
        let shape_error = |(rows, cols): (usize, usize)| {
            Error::InvalidData(format!(
                "FlowLmFast: {name}.weight is a [{rows}, {cols}] {} matrix, expected [{out}, {inp}]",
                l.weight.kind_name()
            ))
        };
        let w = match l.weight {
            WeightView::Float(weight) => {
                LinW::F32(W::new(weight, &format!("{name}.weight"), &[out, inp])?)
            }
            WeightView::Half(h) if (h.rows(), h.cols()) == (out, inp) => LinW::Half(Arc::clone(h)),
            WeightView::Half(h) => return Err(shape_error((h.rows(), h.cols()))),
            WeightView::Int8(q) if (q.rows(), q.cols()) == (out, inp) => LinW::I8(Arc::clone(q)),
            WeightView::Int8(q) => return Err(shape_error((q.rows(), q.cols()))),
            WeightView::Q4(q) if (q.rows(), q.cols()) == (out, inp) => LinW::Q4(Arc::clone(q)),
            WeightView::Q4(q) => return Err(shape_error((q.rows(), q.cols()))),
        };
        Ok(Self {
            w,
            b: l.bias
                .map(|b| W::new(b, &format!("{name}.bias"), &[out]))
                .transpose()?,
            out,
            inp,
        })
    }

    fn dims_of(l: &LinearView<'_>) -> Result<(usize, usize)> {
        Ok(l.weight.dims2()?)
    }

    /// Bytes of weights (and bias) one product reads.
    pub(super) fn weight_bytes(&self) -> usize {
        let w = match &self.w {
            LinW::F32(_) => 4 * self.out * self.inp,
            LinW::Half(h) => h.bytes(),
            LinW::I8(q) => q.bytes(),
            LinW::Q4(q) => q.bytes(),
        };
        w + self.b.as_ref().map_or(0, |_| 4 * self.out)
    }

    /// `y (+)= W·x (+ b)` on the calling thread; an int8 or 4-bit weight quantizes `x`
    /// into `xq` first (one scale, as the step does).
    pub(super) fn apply(
        &self,
        x: &[f32],
        xq: &mut simd::QuantizedVector,
        y: &mut [f32],
        acc: bool,
    ) {
        let b = self.b.as_ref().map(W::get);
        let b = b.as_deref();
        match &self.w {
            LinW::F32(w) => simd::gemv(&w.get(), x, y, b, acc),
            LinW::Half(h) => simd::gemv_half(h, x, y, b, acc),
            LinW::I8(q) => {
                xq.quantize(x);
                simd::gemv_i8_q8(q, xq, y, b, acc);
            }
            LinW::Q4(q) => {
                xq.quantize(x);
                simd::gemv_q4(q, xq, y, b, acc);
            }
        }
    }
}

/// A transformer layer's bias-free linear: `f32` read in place or 16-bit rows ([`Lin`]),
/// or int8 rows or 4-bit blocks shared with the model definition (`--quantize`, see
/// [`crate::internals::modules::linear`]).
#[derive(Debug, Clone)]
pub(super) enum LayerLin {
    Float(Lin),
    I8(Arc<simd::QuantizedRows>),
    Q4(Arc<simd::Q4Rows>),
}

impl LayerLin {
    fn new(l: &LinearView<'_>, name: &str, out: usize, inp: usize) -> Result<Self> {
        match l.weight {
            WeightView::Float(_) | WeightView::Half(_) => {
                Ok(Self::Float(Lin::new(l, name, out, inp)?))
            }
            WeightView::Int8(q) => {
                if (q.rows(), q.cols()) != (out, inp) || l.bias.is_some() {
                    return Err(Error::InvalidData(format!(
                        "FlowLmFast: {name} is an int8 [{}, {}] linear{}, expected a bias-free [{out}, {inp}]",
                        q.rows(),
                        q.cols(),
                        if l.bias.is_some() { " with a bias" } else { "" }
                    )));
                }
                Ok(Self::I8(Arc::clone(q)))
            }
            WeightView::Q4(q) => {
                if (q.rows(), q.cols()) != (out, inp) || l.bias.is_some() {
                    return Err(Error::InvalidData(format!(
                        "FlowLmFast: {name} is a 4-bit [{}, {}] linear{}, expected a bias-free [{out}, {inp}]",
                        q.rows(),
                        q.cols(),
                        if l.bias.is_some() { " with a bias" } else { "" }
                    )));
                }
                Ok(Self::Q4(Arc::clone(q)))
            }
        }
    }

    /// Bytes of weights one product reads.
    pub(super) fn weight_bytes(&self) -> usize {
        match self {
            Self::Float(l) => l.weight_bytes(),
            Self::I8(q) => q.bytes(),
            Self::Q4(q) => q.bytes(),
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Layer {
    pub(super) norm1: Norm,
    pub(super) norm2: Norm,
    pub(super) in_proj: LayerLin,
    pub(super) out_proj: LayerLin,
    pub(super) linear1: LayerLin,
    pub(super) linear2: LayerLin,
}

#[derive(Debug, Clone)]
pub(super) struct TimeEmbed {
    pub(super) freqs: W,
    pub(super) linear1: Lin,
    pub(super) linear2: Lin,
    pub(super) alpha: W,
    pub(super) eps: f32,
}

#[derive(Debug, Clone)]
pub(super) struct ResBlock {
    pub(super) in_ln: Norm,
    pub(super) mlp1: Lin,
    pub(super) mlp2: Lin,
    pub(super) ada: Lin,
}

#[derive(Debug, Clone)]
pub(super) struct FlowHead {
    pub(super) time: Vec<TimeEmbed>,
    pub(super) cond: Lin,
    pub(super) input: Lin,
    pub(super) blocks: Vec<ResBlock>,
    pub(super) final_norm: Norm,
    pub(super) final_ada: Lin,
    pub(super) final_linear: Lin,
    /// Model width of the head.
    pub(super) dim: usize,
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
        let v: FlowLmView<'_> = flow_lm.view();
        let t = &v.transformer;
        let first = t.layers.first().ok_or_else(|| {
            Error::InvalidData("FlowLmFast: the transformer has no layers".into())
        })?;
        let a = &first.self_attn;
        let d = v.dim;
        let ldim = v.ldim;
        let (ff, _) = Lin::dims_of(&first.linear1)?;
        let z = match &v.z_proj {
            Some(p) => Lin::dims_of(p)?.0,
            None => d,
        };
        let fh = &v.flow_net;
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
        if fh.time_embed.len() != v.flow_kind.num_time_conds() {
            return Err(Error::InvalidData(format!(
                "FlowLmFast: the flow head has {} time embedders, flow type {:?} needs {}",
                fh.time_embed.len(),
                v.flow_kind,
                v.flow_kind.num_time_conds()
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
                in_proj: LayerLin::new(
                    &sa.in_proj,
                    &format!("{p}.self_attn.in_proj"),
                    dims.qkv_dim(),
                    d,
                )?,
                out_proj: LayerLin::new(
                    &sa.out_proj,
                    &format!("{p}.self_attn.out_proj"),
                    d,
                    dims.attn_dim,
                )?,
                linear1: LayerLin::new(&l.linear1, &format!("{p}.linear1"), ff, d)?,
                linear2: LayerLin::new(&l.linear2, &format!("{p}.linear2"), d, ff)?,
            });
        }
        let time = fh
            .time_embed
            .iter()
            .enumerate()
            .map(|(i, te)| {
                let p = format!("flow_net.time_embed.{i}");
                Ok(TimeEmbed {
                    freqs: W::new(te.freqs, &format!("{p}.freqs"), &[freq_dim / 2])?,
                    linear1: Lin::new(&te.linear1, &format!("{p}.mlp.0"), flow_dim, freq_dim)?,
                    linear2: Lin::new(&te.linear2, &format!("{p}.mlp.2"), flow_dim, flow_dim)?,
                    alpha: W::new(te.norm.alpha, &format!("{p}.mlp.3.alpha"), &[flow_dim])?,
                    eps: te.norm.eps as f32,
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
        let table = v.conditioner.table;
        let (lut_rows, lut_width) = match table {
            LutTable::Tensor(t) => t.dims2()?,
            LutTable::Mapped(m) => m.dims(),
        };
        let lut_proj = match &v.conditioner.proj {
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
        let (_, speaker_dim) = v.speaker_proj_weight.dims2()?;
        Ok(Self {
            dims,
            kind: v.flow_kind,
            max_period: t.max_period,
            input_linear: Lin::new(&v.input_linear, "input_linear", d, ldim)?,
            bos_emb: W::new(v.bos_emb, "bos_emb", &[ldim])?,
            layers,
            out_norm: Norm::new(&v.out_norm, "out_norm")?,
            z_proj: v
                .z_proj
                .as_ref()
                .map(|p| Lin::new(p, "z_proj", z, d))
                .transpose()?,
            out_eos: Lin::new(&v.out_eos, "out_eos", 1, z)?,
            flow,
            lut: match table {
                LutTable::Tensor(t) => Lut::Tensor(W::new(
                    t,
                    "conditioner.embed.weight",
                    &[lut_rows, lut_width],
                )?),
                LutTable::Mapped(m) => Lut::Mapped(m.clone()),
            },
            lut_width,
            lut_rows,
            lut_proj,
            speaker_proj: W::new(
                v.speaker_proj_weight,
                "speaker_proj_weight",
                &[d, speaker_dim],
            )?,
            speaker_dim,
            bos_before_voice: v
                .bos_before_voice
                .map(|b| W::new(&b.flatten_all()?, "bos_before_voice", &[d]))
                .transpose()?,
            team: simd::Team::new(1),
            prefill_team: simd::Team::new(1),
        })
    }

    /// Bytes of weights one [`Self::step`] reads with `decode_steps` flow steps, once
    /// the time embeddings are cached: the memory traffic that bounds its speed (the KV
    /// cache adds `2 · layers · kv_heads · head_dim · len` `f32` values). Int8 layers
    /// (`--quantize`) count one byte per weight plus their scales, 16-bit ones two bytes.
    pub fn weight_bytes_per_step(&self, decode_steps: usize) -> usize {
        let lin = Lin::weight_bytes;
        let mut n = lin(&self.input_linear) + lin(&self.out_eos);
        n += self.z_proj.as_ref().map_or(0, lin);
        for l in &self.layers {
            n += [&l.in_proj, &l.out_proj, &l.linear1, &l.linear2]
                .iter()
                .map(|l| l.weight_bytes())
                .sum::<usize>();
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
}
