//! Building blocks of the Mimi fast path on time-major `[T, C]` `f32` buffers: weight
//! extraction, the threading helper, streaming convs / transposed convs, the SEANet
//! program and the projected transformer (streaming ring-buffer attention for the
//! decoder, blocked causal attention for the encoder).

use candle_core::{DType, Tensor};

use super::gemm::{self, BView, Init, PackedMatrix};
use crate::modules::conv::{PadMode, StreamingConv1d, StreamingConvTranspose1d};
use crate::modules::layers::LayerNorm;
use crate::modules::seanet::Layer;
use crate::modules::transformer::ProjectedTransformer;
use crate::{Error, Result};

/// Copies a tensor's values (any shape, converted to `f32`) into a `Vec`.
pub(crate) fn tensor_vec(t: &Tensor, what: &str) -> Result<Vec<f32>> {
    t.to_dtype(DType::F32)
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(|e| Error::InvalidData(format!("Mimi fast path: reading {what}: {e}")))
}

fn dims(t: &Tensor) -> Vec<usize> {
    t.dims().to_vec()
}

// ---------------------------------------------------------------------------------------
// Threads.

/// A raw pointer that may cross threads (the users guarantee disjoint access).
#[derive(Clone, Copy)]
struct SyncPtr(*mut f32);
// SAFETY: only used to hand disjoint regions of one buffer to the parts of a parallel job.
unsafe impl Send for SyncPtr {}
// SAFETY: as above.
unsafe impl Sync for SyncPtr {}

impl SyncPtr {
    /// The pointer (a method, so closures capture the whole `SyncPtr`, not its field).
    fn get(&self) -> *mut f32 {
        self.0
    }
}

/// The threading knob: `threads == 1` runs everything inline; more threads use a
/// [`pocket_tts_simd::Team`] (helpers spin briefly between jobs, no allocation per job).
#[derive(Debug)]
pub(crate) struct Par {
    threads: usize,
    team: Option<pocket_tts_simd::Team>,
}

impl Par {
    pub(crate) fn new(threads: usize) -> Result<Self> {
        let threads = threads.max(1);
        let team = (threads > 1).then(|| pocket_tts_simd::Team::new(threads));
        Ok(Self { threads, team })
    }

    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `f(0..threads)`, in parallel when there is a team.
    pub(crate) fn run<F: Fn(usize) + Sync + Send>(&self, f: F) {
        match &self.team {
            None => f(0),
            Some(team) => team.run(f),
        }
    }
}

/// Splits `0..n` into `parts` ranges with boundaries multiple of `align`; returns range `i`.
fn split_range(n: usize, parts: usize, align: usize, i: usize) -> std::ops::Range<usize> {
    let blocks = n.div_ceil(align);
    let per = blocks / parts;
    let extra = blocks % parts;
    let start = i * per + i.min(extra);
    let end = start + per + usize::from(i < extra);
    (start * align).min(n)..(end * align).min(n)
}

/// Below this many multiply-adds a GEMM is not worth splitting.
const PAR_MIN_WORK: usize = 1 << 21;

/// [`gemm::gemm_packed`], split across `par`'s threads by rows (tall `B`) or by column
/// panels.
pub(crate) fn par_gemm(
    par: &Par,
    a: &PackedMatrix,
    b: BView,
    c: &mut [f32],
    ldc: usize,
    init: Init,
) {
    let parts = par.threads();
    let work = b.rows * a.m() * a.k();
    if parts == 1 || work < PAR_MIN_WORK {
        gemm::gemm_packed(a, b, c, ldc, init);
        return;
    }
    let m = a.m();
    assert!(
        ldc >= m && c.len() >= (b.rows - 1) * ldc + m,
        "par_gemm: C too short"
    );
    let cp = SyncPtr(c.as_mut_ptr());
    if b.rows >= 96 * parts {
        par.run(|i| {
            let r = split_range(b.rows, parts, 48, i);
            if r.is_empty() {
                return;
            }
            let sub_b = BView {
                data: &b.data[r.start * b.ldb..],
                rows: r.len(),
                ..b
            };
            let len = (r.len() - 1) * ldc + m;
            // SAFETY: rows `r` of C are disjoint from the other parts' rows (ldc >= m).
            let sub_c = unsafe { std::slice::from_raw_parts_mut(cp.get().add(r.start * ldc), len) };
            gemm::gemm_packed(a, sub_b, sub_c, ldc, init);
        });
    } else {
        let panels = gemm::panel_count(a);
        par.run(|i| {
            let pr = split_range(panels, parts, 1, i);
            if pr.is_empty() {
                return;
            }
            // SAFETY: C was bounds-checked above; each part writes its own column panels.
            unsafe { gemm::gemm_packed_panels(a, b, cp.get(), ldc, init, pr) };
        });
    }
}

/// Applies `f` to `x` in chunks, in parallel when `x` is large.
fn par_map(par: &Par, x: &mut [f32], f: impl Fn(&mut [f32]) + Sync + Send) {
    let parts = par.threads();
    if parts == 1 || x.len() < 1 << 16 {
        f(x);
        return;
    }
    let n = x.len();
    let p = SyncPtr(x.as_mut_ptr());
    par.run(|i| {
        let r = split_range(n, parts, 64, i);
        if r.is_empty() {
            return;
        }
        // SAFETY: disjoint ranges of `x`.
        f(unsafe { std::slice::from_raw_parts_mut(p.get().add(r.start), r.len()) });
    });
}

fn elu_inplace(par: &Par, x: &mut [f32]) {
    par_map(par, x, |c| pocket_tts_simd::elu(c, 1.0));
}

/// `dst = src`, then ELU when `elu`, in cache-sized pieces (one pass over memory),
/// in parallel for large buffers.
fn copy_elu(par: &Par, src: &[f32], dst: &mut [f32], elu: bool) {
    assert_eq!(src.len(), dst.len(), "copy_elu: length mismatch");
    let piece = |s: &[f32], d: &mut [f32]| {
        for (sc, dc) in s.chunks(4096).zip(d.chunks_mut(4096)) {
            dc.copy_from_slice(sc);
            if elu {
                pocket_tts_simd::elu(dc, 1.0);
            }
        }
    };
    let parts = par.threads();
    let n = dst.len();
    if parts == 1 || n < 1 << 16 {
        piece(src, dst);
        return;
    }
    let p = SyncPtr(dst.as_mut_ptr());
    par.run(|i| {
        let r = split_range(n, parts, 64, i);
        if r.is_empty() {
            return;
        }
        // SAFETY: disjoint ranges of `dst`.
        let d = unsafe { std::slice::from_raw_parts_mut(p.get().add(r.start), r.len()) };
        piece(&src[r.clone()], d);
    });
}

// ---------------------------------------------------------------------------------------
// Convolutions.

/// A causal streaming conv as one GEMM over the time-major input buffer.
#[derive(Debug, Clone)]
pub(crate) struct ConvF {
    pub cin: usize,
    pub cout: usize,
    pub kernel: usize,
    pub stride: usize,
    pub dilation: usize,
    /// Input rows kept between calls (`k_eff - stride`).
    pub hist: usize,
    pub pad_mode: PadMode,
    /// `A[(j, ci), co] = W[co, ci, j]`.
    pub w: PackedMatrix,
    pub bias: Option<Vec<f32>>,
}

impl ConvF {
    pub(crate) fn from_candle(c: &StreamingConv1d, what: &str) -> Result<Self> {
        let s = c.spec;
        if s.groups != 1 {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: grouped conv {what} (groups = {})",
                s.groups
            )));
        }
        let w = tensor_vec(&c.weight, what)?;
        let (cout, cin, k) = (s.out_channels, s.in_channels, s.kernel_size);
        if w.len() != cout * cin * k {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: {what} weight has shape {:?}, expected [{cout}, {cin}, {k}]",
                dims(&c.weight)
            )));
        }
        let packed = PackedMatrix::from_fn(k * cin, cout, |kk, co| {
            let (j, ci) = (kk / cin, kk % cin);
            w[(co * cin + ci) * k + j]
        });
        let bias = c.bias.as_ref().map(|b| tensor_vec(b, what)).transpose()?;
        let k_eff = (k - 1) * s.dilation + 1;
        Ok(Self {
            cin,
            cout,
            kernel: k,
            stride: s.stride,
            dilation: s.dilation,
            hist: k_eff.saturating_sub(s.stride),
            pad_mode: s.pad_mode,
            w: packed,
            bias,
        })
    }

    fn out_len(&self, t_in: usize) -> Result<usize> {
        if t_in == 0 || !t_in.is_multiple_of(self.stride) {
            return Err(Error::InvalidArgument(format!(
                "Mimi fast path: {t_in} steps is not a positive multiple of the conv stride {}",
                self.stride
            )));
        }
        Ok(t_in / self.stride)
    }

    /// [`ConvF::forward`] after checking `t_in` against the stride and the buffer sizes.
    pub(crate) fn forward_once(
        &self,
        par: &Par,
        inbuf: &mut [f32],
        first: &mut bool,
        t_in: usize,
        dst: &mut [f32],
    ) -> Result<()> {
        let t_out = self.out_len(t_in)?;
        if inbuf.len() < (self.hist + t_in) * self.cin || dst.len() < t_out * self.cout {
            return Err(Error::InvalidArgument(
                "Mimi fast path: conv buffers too small".into(),
            ));
        }
        self.forward(par, inbuf, first, t_in, dst, false);
        Ok(())
    }

    /// `inbuf` holds `hist` history rows followed by the `T_in` new input rows (already
    /// written). Computes the output into `dst` (or adds it, with `accumulate`) and rolls
    /// the history.
    fn forward(
        &self,
        par: &Par,
        inbuf: &mut [f32],
        first: &mut bool,
        t_in: usize,
        dst: &mut [f32],
        accumulate: bool,
    ) {
        let (cin, hist) = (self.cin, self.hist);
        if hist > 0 && *first && self.pad_mode == PadMode::Replicate {
            let (h, x) = inbuf.split_at_mut(hist * cin);
            for row in h.chunks_exact_mut(cin) {
                row.copy_from_slice(&x[..cin]);
            }
        }
        let t_out = t_in / self.stride;
        let b = if self.dilation == 1 {
            BView::dense(inbuf, t_out, self.kernel * cin, self.stride * cin)
        } else {
            BView {
                data: inbuf,
                rows: t_out,
                ldb: self.stride * cin,
                taps: self.kernel,
                tap_stride: self.dilation * cin,
                tap_len: cin,
            }
        };
        let init = match (&self.bias, accumulate) {
            (Some(bias), false) => Init::Bias(bias),
            (None, false) => Init::Zero,
            (bias, true) => {
                if let Some(bias) = bias {
                    for row in dst[..t_out * self.cout].chunks_exact_mut(self.cout) {
                        add_assign(row, bias);
                    }
                }
                Init::Accumulate
            }
        };
        par_gemm(par, &self.w, b, dst, self.cout, init);
        if hist > 0 {
            inbuf.copy_within(t_in * cin..(t_in + hist) * cin, 0);
        }
        *first = false;
    }
}

/// A transposed conv (groups = 1) as `Z = X·A` (`[T, K·C_out]`) plus an overlap-add.
#[derive(Debug, Clone)]
pub(crate) struct ConvTrF {
    pub cin: usize,
    pub cout: usize,
    pub kernel: usize,
    pub stride: usize,
    /// `A[ci, (j, co)] = W[ci, co, j]`.
    pub w: PackedMatrix,
    pub bias: Option<Vec<f32>>,
}

impl ConvTrF {
    pub(crate) fn from_candle(c: &StreamingConvTranspose1d, what: &str) -> Result<Self> {
        if c.groups != 1 {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: grouped transposed conv {what} (groups = {})",
                c.groups
            )));
        }
        let d = dims(&c.weight);
        if d.len() != 3 || d[2] != c.kernel_size {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: {what} weight has shape {d:?}"
            )));
        }
        let (cin, cout, k) = (d[0], d[1], d[2]);
        if k < c.stride {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: {what} kernel {k} < stride {}",
                c.stride
            )));
        }
        let w = tensor_vec(&c.weight, what)?;
        let packed = PackedMatrix::from_fn(cin, k * cout, |ci, m| {
            let (j, co) = (m / cout, m % cout);
            w[(ci * cout + co) * k + j]
        });
        let bias = c.bias.as_ref().map(|b| tensor_vec(b, what)).transpose()?;
        Ok(Self {
            cin,
            cout,
            kernel: k,
            stride: c.stride,
            w: packed,
            bias,
        })
    }

    fn overlap(&self) -> usize {
        self.kernel - self.stride
    }

    /// `x`: `[T, C_in]` → `ext`: `[T·S + (K − S), C_out]`, of which the first `T·S` rows
    /// are the output; the last `K − S` rows become the new `partial`.
    fn forward(
        &self,
        par: &Par,
        x: &[f32],
        t_in: usize,
        z: &mut [f32],
        partial: &mut [f32],
        ext: &mut [f32],
    ) {
        let (s, k, co) = (self.stride, self.kernel, self.cout);
        let pt = self.overlap();
        par_gemm(
            par,
            &self.w,
            BView::dense(x, t_in, self.cin, self.cin),
            z,
            k * co,
            Init::Zero,
        );
        let out_rows = t_in * s;
        let ext = &mut ext[..(out_rows + pt) * co];
        ext.fill(0.0);
        add_assign(&mut ext[..pt * co], partial);
        for t in 0..t_in {
            let zrow = &z[t * k * co..(t + 1) * k * co];
            add_assign(&mut ext[t * s * co..(t * s + k) * co], zrow);
        }
        partial.copy_from_slice(&ext[out_rows * co..]);
        if let Some(bias) = &self.bias {
            for row in ext[..out_rows * co].chunks_exact_mut(co) {
                add_assign(row, bias);
            }
        }
    }
}

use gemm::add_assign;

/// Depthwise transposed conv (the 12.5 Hz → 200 Hz upsampler), no bias.
#[derive(Debug, Clone)]
pub(crate) struct UpsampleF {
    pub channels: usize,
    pub kernel: usize,
    pub stride: usize,
    /// `w[j·C + c] = W[c, 0, j]`.
    pub w: Vec<f32>,
}

impl UpsampleF {
    pub(crate) fn from_candle(c: &StreamingConvTranspose1d) -> Result<Self> {
        let d = dims(&c.weight);
        let (cin, per_group, k) = (d[0], d[1], d[2]);
        if per_group != 1 || c.groups != cin || c.bias.is_some() || k < c.stride {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: upsampler must be depthwise without bias (weight {d:?}, groups {})",
                c.groups
            )));
        }
        let w = tensor_vec(&c.weight, "upsample.convtr.convtr.weight")?;
        let mut wt = vec![0f32; k * cin];
        for ch in 0..cin {
            for j in 0..k {
                wt[j * cin + ch] = w[ch * k + j];
            }
        }
        Ok(Self {
            channels: cin,
            kernel: k,
            stride: c.stride,
            w: wt,
        })
    }

    /// `x`: `[T, C]` → `dst`: `[T·S, C]`, with the overlap in `partial` (`[K − S, C]`).
    pub(crate) fn forward(&self, x: &[f32], t_in: usize, partial: &mut [f32], ext: &mut [f32]) {
        let (c, s, k) = (self.channels, self.stride, self.kernel);
        let out_rows = t_in * s;
        let pt = k - s;
        let ext = &mut ext[..(out_rows + pt) * c];
        ext.fill(0.0);
        add_assign(&mut ext[..pt * c], partial);
        for t in 0..t_in {
            let xr = &x[t * c..(t + 1) * c];
            for j in 0..k {
                let row = &mut ext[(t * s + j) * c..(t * s + j + 1) * c];
                let wr = &self.w[j * c..(j + 1) * c];
                for ((o, &xv), &wv) in row.iter_mut().zip(xr).zip(wr) {
                    *o += xv * wv;
                }
            }
        }
        partial.copy_from_slice(&ext[out_rows * c..]);
    }
}

// ---------------------------------------------------------------------------------------
// SEANet program.

#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// A conv, its input ELU'd first when `elu_in`.
    Conv { conv: ConvF, elu_in: bool },
    /// A transposed conv, its input ELU'd first when `elu_in`.
    ConvTr { ct: ConvTrF, elu_in: bool },
    /// `x + conv_n(elu(… conv_1(elu(x))))`.
    Res { convs: Vec<ConvF> },
    /// A standalone ELU (not followed by a conv).
    Elu,
}

/// A SEANet stack compiled for the fast path.
#[derive(Debug, Clone)]
pub(crate) struct SeanetF {
    pub ops: Vec<Op>,
    pub cin: usize,
    pub cout: usize,
}

impl SeanetF {
    pub(crate) fn from_layers(layers: &[Layer], prefix: &str) -> Result<Self> {
        let mut ops = Vec::new();
        let mut pending_elu = false;
        for (i, layer) in layers.iter().enumerate() {
            let what = format!("{prefix}.model.{i}");
            match layer {
                Layer::Elu => {
                    if pending_elu {
                        ops.push(Op::Elu);
                    }
                    pending_elu = true;
                }
                Layer::Conv(c) => {
                    ops.push(Op::Conv {
                        conv: ConvF::from_candle(c, &what)?,
                        elu_in: pending_elu,
                    });
                    pending_elu = false;
                }
                Layer::ConvTr(c) => {
                    ops.push(Op::ConvTr {
                        ct: ConvTrF::from_candle(c, &what)?,
                        elu_in: pending_elu,
                    });
                    pending_elu = false;
                }
                Layer::Res(r) => {
                    if pending_elu {
                        ops.push(Op::Elu);
                        pending_elu = false;
                    }
                    let convs = r
                        .convs
                        .iter()
                        .enumerate()
                        .map(|(j, c)| ConvF::from_candle(c, &format!("{what}.block.{}", 2 * j + 1)))
                        .collect::<Result<Vec<_>>>()?;
                    ops.push(Op::Res { convs });
                }
            }
        }
        if pending_elu {
            ops.push(Op::Elu);
        }
        let mut chans: Option<(usize, usize)> = None;
        let mut cur = 0;
        for op in &ops {
            let (i, o) = match op {
                Op::Conv { conv, .. } => (conv.cin, conv.cout),
                Op::ConvTr { ct, .. } => (ct.cin, ct.cout),
                Op::Res { convs } => {
                    let d = convs.first().map_or(cur, |c| c.cin);
                    (d, d)
                }
                Op::Elu => (cur, cur),
            };
            if chans.is_none() {
                chans = Some((i, i));
            } else if i != cur {
                return Err(Error::InvalidData(format!(
                    "Mimi fast path: {prefix} channel mismatch ({cur} → {i})"
                )));
            }
            cur = o;
        }
        let (cin, _) = chans
            .ok_or_else(|| Error::InvalidData(format!("Mimi fast path: {prefix} has no layers")))?;
        Ok(Self {
            ops,
            cin,
            cout: cur,
        })
    }

    /// Output steps for `t_in` input steps.
    pub(crate) fn out_len(&self, mut t: usize) -> Result<usize> {
        for op in &self.ops {
            t = match op {
                Op::Conv { conv, .. } => conv.out_len(t)?,
                Op::ConvTr { ct, .. } => t * ct.stride,
                Op::Res { convs } => {
                    for c in convs {
                        if c.out_len(t)? != t {
                            return Err(Error::Unsupported(
                                "Mimi fast path: strided conv in a residual block".into(),
                            ));
                        }
                    }
                    t
                }
                Op::Elu => t,
            };
        }
        Ok(t)
    }

    /// Buffers for running `t_in` steps at a time.
    pub(crate) fn new_state(&self, t_in: usize) -> Result<SeanetStateF> {
        let mut t = t_in;
        let mut states = Vec::with_capacity(self.ops.len());
        let mut cur_chans = self.cin;
        for op in &self.ops {
            let st = match op {
                Op::Conv { conv, .. } => {
                    let t_out = conv.out_len(t)?;
                    let s = OpState::Conv {
                        inbuf: vec![0.0; (conv.hist + t) * conv.cin],
                        first: true,
                        out: vec![0.0; t_out * conv.cout],
                    };
                    t = t_out;
                    cur_chans = conv.cout;
                    s
                }
                Op::ConvTr { ct, elu_in } => {
                    let s = OpState::ConvTr {
                        tmp: if *elu_in {
                            vec![0.0; t * ct.cin]
                        } else {
                            Vec::new()
                        },
                        z: vec![0.0; t * ct.kernel * ct.cout],
                        partial: vec![0.0; ct.overlap() * ct.cout],
                        ext: vec![0.0; (t * ct.stride + ct.overlap()) * ct.cout],
                    };
                    t *= ct.stride;
                    cur_chans = ct.cout;
                    s
                }
                Op::Res { convs } => {
                    let n = convs.len();
                    OpState::Res {
                        inbufs: convs
                            .iter()
                            .map(|c| vec![0.0; (c.hist + t) * c.cin])
                            .collect(),
                        firsts: vec![true; n],
                        hidden: convs
                            .iter()
                            .take(n.saturating_sub(1))
                            .map(|c| vec![0.0; t * c.cout])
                            .collect(),
                    }
                }
                Op::Elu => OpState::None,
            };
            states.push(st);
        }
        let _ = cur_chans;
        Ok(SeanetStateF { ops: states })
    }

    /// Runs `t_in` steps of `input` (`[t_in, cin]`) and returns the output `[t_out, cout]`
    /// (a slice of a state buffer).
    pub(crate) fn run<'s>(
        &self,
        par: &Par,
        input: &'s [f32],
        t_in: usize,
        state: &'s mut SeanetStateF,
    ) -> Result<&'s [f32]> {
        // Index of the op whose output buffer holds the current activation (None: `input`).
        let mut owner: Option<usize> = None;
        let mut t = t_in;
        let mut chans = self.cin;
        for (i, op) in self.ops.iter().enumerate() {
            let (before, rest) = state.ops.split_at_mut(i);
            let me = &mut rest[0];
            let cur_len = t * chans;
            match (op, me) {
                (Op::Conv { conv, elu_in }, OpState::Conv { inbuf, first, out }) => {
                    let cur = current(before, owner, input, cur_len);
                    let dst = &mut inbuf[conv.hist * conv.cin..(conv.hist + t) * conv.cin];
                    copy_elu(par, cur, dst, *elu_in);
                    conv.forward(par, inbuf, first, t, out, false);
                    t /= conv.stride;
                    chans = conv.cout;
                    owner = Some(i);
                }
                (
                    Op::ConvTr { ct, elu_in },
                    OpState::ConvTr {
                        tmp,
                        z,
                        partial,
                        ext,
                    },
                ) => {
                    let cur = current(before, owner, input, cur_len);
                    let x: &[f32] = if *elu_in {
                        let tmp = &mut tmp[..cur_len];
                        copy_elu(par, cur, tmp, true);
                        tmp
                    } else {
                        cur
                    };
                    ct.forward(par, x, t, z, partial, ext);
                    t *= ct.stride;
                    chans = ct.cout;
                    owner = Some(i);
                }
                (
                    Op::Res { convs },
                    OpState::Res {
                        inbufs,
                        firsts,
                        hidden,
                    },
                ) => {
                    let n = convs.len();
                    let x: &mut [f32] = match owner {
                        Some(o) => before[o].out_mut(),
                        None => {
                            return Err(Error::Unsupported(
                                "Mimi fast path: SEANet starting with a residual block".into(),
                            ))
                        }
                    };
                    let x = &mut x[..cur_len];
                    for j in 0..n {
                        let conv = &convs[j];
                        let (src, dst_hidden) = {
                            let split = j.min(hidden.len());
                            let (h_before, h_rest) = hidden.split_at_mut(split);
                            let src: &[f32] = if j == 0 {
                                &*x
                            } else {
                                &h_before[j - 1][..t * conv.cin]
                            };
                            (src, h_rest.first_mut())
                        };
                        let inbuf = &mut inbufs[j];
                        let dst = &mut inbuf[conv.hist * conv.cin..(conv.hist + t) * conv.cin];
                        copy_elu(par, src, dst, true);
                        if j + 1 < n {
                            let out = dst_hidden.expect("hidden buffer");
                            conv.forward(par, inbuf, &mut firsts[j], t, out, false);
                        } else {
                            // The skip connection: accumulate into x.
                            conv.forward(par, inbuf, &mut firsts[j], t, x, true);
                        }
                    }
                }
                (Op::Elu, OpState::None) => match owner {
                    Some(o) => elu_inplace(par, &mut before[o].out_mut()[..cur_len]),
                    None => {
                        return Err(Error::Unsupported(
                            "Mimi fast path: SEANet starting with an ELU".into(),
                        ))
                    }
                },
                _ => {
                    return Err(Error::InvalidArgument(
                        "Mimi fast path: SEANet state does not match its layers".into(),
                    ))
                }
            }
        }
        let len = t * chans;
        Ok(match owner {
            Some(o) => &state.ops[o].out()[..len],
            None => &input[..len],
        })
    }
}

fn current<'a>(
    before: &'a [OpState],
    owner: Option<usize>,
    input: &'a [f32],
    len: usize,
) -> &'a [f32] {
    match owner {
        Some(o) => &before[o].out()[..len],
        None => &input[..len],
    }
}

/// Buffers and streaming state of one [`Op`].
#[derive(Debug, Clone)]
pub(crate) enum OpState {
    Conv {
        /// `hist` history rows, then the current input rows.
        inbuf: Vec<f32>,
        first: bool,
        out: Vec<f32>,
    },
    ConvTr {
        tmp: Vec<f32>,
        z: Vec<f32>,
        partial: Vec<f32>,
        /// Output rows followed by the overlap rows.
        ext: Vec<f32>,
    },
    Res {
        inbufs: Vec<Vec<f32>>,
        firsts: Vec<bool>,
        hidden: Vec<Vec<f32>>,
    },
    None,
}

impl OpState {
    fn out(&self) -> &[f32] {
        match self {
            OpState::Conv { out, .. } => out,
            OpState::ConvTr { ext, .. } => ext,
            _ => unreachable!("op without an output buffer"),
        }
    }

    fn out_mut(&mut self) -> &mut [f32] {
        match self {
            OpState::Conv { out, .. } => out,
            OpState::ConvTr { ext, .. } => ext,
            _ => unreachable!("op without an output buffer"),
        }
    }
}

/// Streaming state of a [`SeanetF`].
#[derive(Debug, Clone)]
pub(crate) struct SeanetStateF {
    pub ops: Vec<OpState>,
}

impl SeanetStateF {
    /// Back to a fresh state (zero history, `first` set), without allocating.
    pub(crate) fn reset(&mut self) {
        for op in &mut self.ops {
            match op {
                OpState::Conv { inbuf, first, .. } => {
                    inbuf.fill(0.0);
                    *first = true;
                }
                OpState::ConvTr { partial, .. } => partial.fill(0.0),
                OpState::Res { inbufs, firsts, .. } => {
                    inbufs.iter_mut().for_each(|b| b.fill(0.0));
                    firsts.iter_mut().for_each(|f| *f = true);
                }
                OpState::None => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Transformer.

#[derive(Debug, Clone)]
struct NormF {
    w: Option<Vec<f32>>,
    b: Option<Vec<f32>>,
    eps: f32,
}

impl NormF {
    fn from_candle(n: &LayerNorm, what: &str) -> Result<Self> {
        Ok(Self {
            w: n.weight.as_ref().map(|t| tensor_vec(t, what)).transpose()?,
            b: n.bias.as_ref().map(|t| tensor_vec(t, what)).transpose()?,
            eps: n.eps as f32,
        })
    }

    fn apply(&self, par: &Par, x: &[f32], out: &mut [f32], cols: usize) {
        let rows = x.len() / cols;
        let parts = par.threads();
        if parts == 1 || rows < 256 {
            pocket_tts_simd::layer_norm_rows(
                x,
                out,
                cols,
                self.w.as_deref(),
                self.b.as_deref(),
                self.eps,
            );
            return;
        }
        let op = SyncPtr(out.as_mut_ptr());
        par.run(|i| {
            let r = split_range(rows, parts, 16, i);
            if r.is_empty() {
                return;
            }
            // SAFETY: disjoint row ranges of `out`.
            let o = unsafe {
                std::slice::from_raw_parts_mut(op.get().add(r.start * cols), r.len() * cols)
            };
            pocket_tts_simd::layer_norm_rows(
                &x[r.start * cols..r.end * cols],
                o,
                cols,
                self.w.as_deref(),
                self.b.as_deref(),
                self.eps,
            );
        });
    }
}

#[derive(Debug, Clone)]
struct LayerF {
    norm1: NormF,
    norm2: NormF,
    /// `[q·scale | k | v]` projection.
    in_proj: PackedMatrix,
    /// Output projection with LayerScale 1 folded in.
    out_proj: PackedMatrix,
    linear1: PackedMatrix,
    /// Second feed-forward linear with LayerScale 2 folded in.
    linear2: PackedMatrix,
}

/// A projected transformer (input projection, layers, first output projection).
#[derive(Debug, Clone)]
pub(crate) struct TransformerF {
    pub din: usize,
    pub dout: usize,
    d_model: usize,
    num_heads: usize,
    num_kv_heads: usize,
    head_dim: usize,
    attn_dim: usize,
    kv_dim: usize,
    ff: usize,
    pub context: Option<usize>,
    freqs: Vec<f32>,
    input_proj: Option<PackedMatrix>,
    output_proj: Option<PackedMatrix>,
    layers: Vec<LayerF>,
}

fn linear_weight(l: &candle_nn::Linear, what: &str) -> Result<(Vec<f32>, usize, usize)> {
    let w = l.weight();
    let d = dims(w);
    if d.len() != 2 || l.bias().is_some() {
        return Err(Error::InvalidData(format!(
            "Mimi fast path: {what} is not a bias-free linear ({d:?})"
        )));
    }
    Ok((tensor_vec(w, what)?, d[0], d[1]))
}

impl TransformerF {
    pub(crate) fn from_candle(p: &ProjectedTransformer, prefix: &str) -> Result<Self> {
        let t = &p.transformer;
        let first = t
            .layers
            .first()
            .ok_or_else(|| Error::InvalidData(format!("Mimi fast path: {prefix} has no layers")))?;
        let a = &first.self_attn;
        let (num_heads, num_kv_heads, head_dim, attn_dim) =
            (a.num_heads, a.num_kv_heads, a.head_dim, a.attn_dim);
        let kv_dim = num_kv_heads * head_dim;
        let (w1, ff, d_model) = linear_weight(&first.linear1, "linear1")?;
        drop(w1);
        if head_dim % 2 != 0 || num_heads % num_kv_heads != 0 {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: {prefix}: head_dim {head_dim}, heads {num_heads}/{num_kv_heads}"
            )));
        }
        let scale = (1.0 / (head_dim as f64).sqrt()) as f32;
        let mut layers = Vec::with_capacity(t.layers.len());
        for (i, l) in t.layers.iter().enumerate() {
            let what = |s: &str| format!("{prefix}.transformer.layers.{i}.{s}");
            let ls = |s: &Option<Tensor>, name: &str| -> Result<Option<Vec<f32>>> {
                s.as_ref().map(|t| tensor_vec(t, &what(name))).transpose()
            };
            let ls1 = ls(&l.layer_scale_1, "layer_scale_1.scale")?;
            let ls2 = ls(&l.layer_scale_2, "layer_scale_2.scale")?;
            let (w, m, k) = linear_weight(&l.self_attn.in_proj, &what("self_attn.in_proj"))?;
            if m != attn_dim + 2 * kv_dim || k != d_model {
                return Err(Error::InvalidData(format!(
                    "Mimi fast path: {} has shape [{m}, {k}]",
                    what("self_attn.in_proj.weight")
                )));
            }
            let in_proj =
                PackedMatrix::from_linear(&w, m, k, |r| if r < attn_dim { scale } else { 1.0 });
            let (w, m, k) = linear_weight(&l.self_attn.out_proj, &what("self_attn.out_proj"))?;
            let out_proj =
                PackedMatrix::from_linear(&w, m, k, |r| ls1.as_ref().map_or(1.0, |s| s[r]));
            let (w, m, k) = linear_weight(&l.linear1, &what("linear1"))?;
            let linear1 = PackedMatrix::from_linear(&w, m, k, |_| 1.0);
            let (w, m, k) = linear_weight(&l.linear2, &what("linear2"))?;
            let linear2 =
                PackedMatrix::from_linear(&w, m, k, |r| ls2.as_ref().map_or(1.0, |s| s[r]));
            layers.push(LayerF {
                norm1: NormF::from_candle(&l.norm1, &what("norm1"))?,
                norm2: NormF::from_candle(&l.norm2, &what("norm2"))?,
                in_proj,
                out_proj,
                linear1,
                linear2,
            });
        }
        let input_proj = p
            .input_proj
            .as_ref()
            .map(|l| {
                linear_weight(l, &format!("{prefix}.input_proj"))
                    .map(|(w, m, k)| PackedMatrix::from_linear(&w, m, k, |_| 1.0))
            })
            .transpose()?;
        let output_proj = match p.output_projs.first() {
            Some(Some(l)) => Some(
                linear_weight(l, &format!("{prefix}.output_projs.0"))
                    .map(|(w, m, k)| PackedMatrix::from_linear(&w, m, k, |_| 1.0))?,
            ),
            _ => None,
        };
        let din = input_proj.as_ref().map_or(d_model, |p| p.k());
        let dout = output_proj.as_ref().map_or(d_model, |p| p.m());
        // Same arithmetic as `RotaryEmbedding::build`.
        let half = head_dim / 2;
        let rscale = (-(t.rope.max_period.ln()) * 2.0 / head_dim as f64) as f32;
        let freqs = (0..half).map(|d| (d as f32 * rscale).exp()).collect();
        Ok(Self {
            din,
            dout,
            d_model,
            num_heads,
            num_kv_heads,
            head_dim,
            attn_dim,
            kv_dim,
            ff,
            context: a.context,
            freqs,
            input_proj,
            output_proj,
            layers,
        })
    }

    fn qkv_width(&self) -> usize {
        self.attn_dim + 2 * self.kv_dim
    }

    /// Fills `cos`/`sin` (`[t, head_dim / 2]`) for positions `pos0..pos0 + t`.
    fn rope_tables(&self, pos0: usize, t: usize, cos: &mut [f32], sin: &mut [f32]) {
        let half = self.head_dim / 2;
        for i in 0..t {
            let p = (pos0 + i) as f32;
            for (d, &f) in self.freqs.iter().enumerate() {
                let angle = (f * p) as f64;
                cos[i * half + d] = angle.cos() as f32;
                sin[i * half + d] = angle.sin() as f32;
            }
        }
    }

    /// Interleaved RoPE on the q and k parts of `qkv` rows.
    fn apply_rope(&self, qkv: &mut [f32], t: usize, cos: &[f32], sin: &[f32]) {
        let w = self.qkv_width();
        let half = self.head_dim / 2;
        let heads = self.num_heads + self.num_kv_heads;
        for i in 0..t {
            let (c, s) = (
                &cos[i * half..(i + 1) * half],
                &sin[i * half..(i + 1) * half],
            );
            let row = &mut qkv[i * w..i * w + heads * self.head_dim];
            for head in row.chunks_exact_mut(self.head_dim) {
                for (d, pair) in head.chunks_exact_mut(2).enumerate() {
                    let (x0, x1) = (pair[0], pair[1]);
                    pair[0] = x0 * c[d] - x1 * s[d];
                    pair[1] = x0 * s[d] + x1 * c[d];
                }
            }
        }
    }

    pub(crate) fn new_stream_state(&self, t: usize) -> Result<TransformerStreamF> {
        let context = self.context.ok_or_else(|| {
            Error::Unsupported(
                "Mimi fast path: streaming decoder transformer needs a finite context".into(),
            )
        })?;
        let r = context.saturating_sub(1) + t;
        let nl = self.layers.len();
        Ok(TransformerStreamF {
            t,
            r,
            pos: 0,
            x: vec![0.0; t * self.d_model],
            h: vec![0.0; t * self.d_model],
            qkv: vec![0.0; t * self.qkv_width()],
            attn: vec![0.0; t * self.attn_dim],
            ff: vec![0.0; t * self.ff],
            out: vec![0.0; t * self.dout],
            cos: vec![0.0; t * self.head_dim / 2],
            sin: vec![0.0; t * self.head_dim / 2],
            scores: vec![0.0; t * r],
            kt: vec![0.0; nl * self.kv_dim * r],
            v: vec![0.0; nl * self.kv_dim * r],
            slot_pos: vec![-1; r],
        })
    }

    /// Runs `st.t` new steps (`input`: `[t, din]`), attending to the last `context`
    /// positions; returns `[t, dout]`.
    pub(crate) fn forward_stream<'s>(
        &self,
        par: &Par,
        input: &[f32],
        st: &'s mut TransformerStreamF,
    ) -> &'s [f32] {
        let (t, r, d) = (st.t, st.r, self.d_model);
        let context = self.context.unwrap_or(usize::MAX);
        let w = self.qkv_width();
        let hd = self.head_dim;
        match &self.input_proj {
            Some(p) => par_gemm(
                par,
                p,
                BView::dense(input, t, self.din, self.din),
                &mut st.x,
                d,
                Init::Zero,
            ),
            None => st.x.copy_from_slice(&input[..t * d]),
        }
        let pos0 = st.pos;
        self.rope_tables(pos0, t, &mut st.cos, &mut st.sin);
        for i in 0..t {
            st.slot_pos[(pos0 + i) % r] = (pos0 + i) as i64;
        }
        let rep = self.num_heads / self.num_kv_heads;
        for (li, layer) in self.layers.iter().enumerate() {
            layer.norm1.apply(par, &st.x, &mut st.h, d);
            par_gemm(
                par,
                &layer.in_proj,
                BView::dense(&st.h, t, d, d),
                &mut st.qkv,
                w,
                Init::Zero,
            );
            self.apply_rope(&mut st.qkv, t, &st.cos, &st.sin);
            let kt = &mut st.kt[li * self.kv_dim * r..(li + 1) * self.kv_dim * r];
            let vv = &mut st.v[li * self.kv_dim * r..(li + 1) * self.kv_dim * r];
            for i in 0..t {
                let slot = (pos0 + i) % r;
                let row = &st.qkv[i * w..(i + 1) * w];
                for kh in 0..self.num_kv_heads {
                    let k = &row[self.attn_dim + kh * hd..self.attn_dim + (kh + 1) * hd];
                    let v = &row[self.attn_dim + self.kv_dim + kh * hd..][..hd];
                    for (dd, &kv) in k.iter().enumerate() {
                        kt[(kh * hd + dd) * r + slot] = kv;
                    }
                    vv[(kh * r + slot) * hd..(kh * r + slot + 1) * hd].copy_from_slice(v);
                }
            }
            for h in 0..self.num_heads {
                let kh = h / rep;
                gemm::gemm_strided(
                    &kt[kh * hd * r..(kh + 1) * hd * r],
                    r,
                    hd,
                    r,
                    BView::dense(&st.qkv[h * hd..], t, hd, w),
                    &mut st.scores,
                    r,
                    Init::Zero,
                );
                for i in 0..t {
                    let q = (pos0 + i) as i64;
                    let row = &mut st.scores[i * r..(i + 1) * r];
                    for (sc, &p) in row.iter_mut().zip(&st.slot_pos) {
                        if p < 0 || p > q || (q - p) as usize >= context {
                            *sc = f32::NEG_INFINITY;
                        }
                    }
                }
                pocket_tts_simd::softmax_rows(&mut st.scores, r);
                gemm::gemm_strided(
                    &vv[kh * r * hd..(kh + 1) * r * hd],
                    hd,
                    r,
                    hd,
                    BView::dense(&st.scores, t, r, r),
                    &mut st.attn[h * hd..],
                    self.attn_dim,
                    Init::Zero,
                );
            }
            par_gemm(
                par,
                &layer.out_proj,
                BView::dense(&st.attn, t, self.attn_dim, self.attn_dim),
                &mut st.x,
                d,
                Init::Accumulate,
            );
            layer.norm2.apply(par, &st.x, &mut st.h, d);
            par_gemm(
                par,
                &layer.linear1,
                BView::dense(&st.h, t, d, d),
                &mut st.ff,
                self.ff,
                Init::Zero,
            );
            pocket_tts_simd::gelu_tanh(&mut st.ff);
            par_gemm(
                par,
                &layer.linear2,
                BView::dense(&st.ff, t, self.ff, self.ff),
                &mut st.x,
                d,
                Init::Accumulate,
            );
        }
        st.pos += t;
        match &self.output_proj {
            Some(p) => {
                par_gemm(
                    par,
                    p,
                    BView::dense(&st.x, t, d, d),
                    &mut st.out,
                    self.dout,
                    Init::Zero,
                );
                &st.out
            }
            None => &st.x,
        }
    }

    /// Whole-sequence causal forward (fresh state), `input`: `[t, din]` → `[t, dout]`.
    pub(crate) fn forward_full(&self, par: &Par, input: &[f32], t: usize) -> Vec<f32> {
        let d = self.d_model;
        let w = self.qkv_width();
        let hd = self.head_dim;
        let mut x = match &self.input_proj {
            Some(p) => {
                let mut x = vec![0.0; t * d];
                par_gemm(
                    par,
                    p,
                    BView::dense(input, t, self.din, self.din),
                    &mut x,
                    d,
                    Init::Zero,
                );
                x
            }
            None => input[..t * d].to_vec(),
        };
        let half = hd / 2;
        let mut cos = vec![0.0; t * half];
        let mut sin = vec![0.0; t * half];
        self.rope_tables(0, t, &mut cos, &mut sin);
        let mut h = vec![0.0; t * d];
        let mut qkv = vec![0.0; t * w];
        let mut attn = vec![0.0; t * self.attn_dim];
        let mut ff = vec![0.0; t * self.ff];
        let mut kt = vec![0.0; self.kv_dim * t];
        let context = self.context.unwrap_or(usize::MAX);
        let rep = self.num_heads / self.num_kv_heads;
        for layer in &self.layers {
            layer.norm1.apply(par, &x, &mut h, d);
            par_gemm(
                par,
                &layer.in_proj,
                BView::dense(&h, t, d, d),
                &mut qkv,
                w,
                Init::Zero,
            );
            self.apply_rope(&mut qkv, t, &cos, &sin);
            // kt[c, i] = k[i, c], in 16 × 16 tiles.
            for i0 in (0..t).step_by(16) {
                let i1 = (i0 + 16).min(t);
                for c0 in (0..self.kv_dim).step_by(16) {
                    let c1 = (c0 + 16).min(self.kv_dim);
                    for c in c0..c1 {
                        let col = self.attn_dim + c;
                        for (i, dst) in (i0..i1).zip(&mut kt[c * t + i0..c * t + i1]) {
                            *dst = qkv[i * w + col];
                        }
                    }
                }
            }
            // Blocked causal attention: query block `[q0, q0 + QB)` sees keys
            // `[q0 + 1 − context, q0 + QB)`.
            const QB: usize = 64;
            let blocks = t.div_ceil(QB);
            let parts = par.threads().min(blocks).max(1);
            let ap = SyncPtr(attn.as_mut_ptr());
            let attn_dim = self.attn_dim;
            let (qkv_r, kt_r) = (&qkv, &kt);
            let job = |part: usize| {
                let br = split_range(blocks, parts, 1, part);
                let mut scores = vec![0f32; QB * (QB + context.min(t))];
                for blk in br {
                    let q0 = blk * QB;
                    let nq = QB.min(t - q0);
                    let k0 = (q0 + 1).saturating_sub(context);
                    let nk = q0 + nq - k0;
                    // SAFETY: rows `q0..q0 + nq` of `attn` belong to this block only.
                    let out = unsafe {
                        std::slice::from_raw_parts_mut(ap.get().add(q0 * attn_dim), nq * attn_dim)
                    };
                    for hh in 0..self.num_heads {
                        let kh = hh / rep;
                        let sc = &mut scores[..nq * nk];
                        gemm::gemm_strided(
                            &kt_r[kh * hd * t + k0..],
                            t,
                            hd,
                            nk,
                            BView::dense(&qkv_r[q0 * w + hh * hd..], nq, hd, w),
                            sc,
                            nk,
                            Init::Zero,
                        );
                        // Query q sees keys max(k0, q + 1 − context) ..= q: a contiguous
                        // run of the row; softmax over it, zeros elsewhere.
                        for i in 0..nq {
                            let q = q0 + i;
                            let lo = (q + 1).saturating_sub(context).max(k0) - k0;
                            let hi = q - k0 + 1;
                            let row = &mut sc[i * nk..(i + 1) * nk];
                            row[..lo].fill(0.0);
                            row[hi..].fill(0.0);
                            pocket_tts_simd::softmax_rows(&mut row[lo..hi], hi - lo);
                        }
                        let voff = k0 * w + self.attn_dim + self.kv_dim + kh * hd;
                        gemm::gemm_strided(
                            &qkv_r[voff..],
                            w,
                            nk,
                            hd,
                            BView::dense(sc, nq, nk, nk),
                            &mut out[hh * hd..],
                            attn_dim,
                            Init::Zero,
                        );
                    }
                }
            };
            if parts == 1 {
                job(0);
            } else {
                par.run(|i| {
                    if i < parts {
                        job(i)
                    }
                });
            }
            par_gemm(
                par,
                &layer.out_proj,
                BView::dense(&attn, t, attn_dim, attn_dim),
                &mut x,
                d,
                Init::Accumulate,
            );
            layer.norm2.apply(par, &x, &mut h, d);
            par_gemm(
                par,
                &layer.linear1,
                BView::dense(&h, t, d, d),
                &mut ff,
                self.ff,
                Init::Zero,
            );
            par_map(par, &mut ff, pocket_tts_simd::gelu_tanh);
            par_gemm(
                par,
                &layer.linear2,
                BView::dense(&ff, t, self.ff, self.ff),
                &mut x,
                d,
                Init::Accumulate,
            );
        }
        match &self.output_proj {
            Some(p) => {
                let mut out = vec![0.0; t * self.dout];
                par_gemm(
                    par,
                    p,
                    BView::dense(&x, t, d, d),
                    &mut out,
                    self.dout,
                    Init::Zero,
                );
                out
            }
            None => x,
        }
    }
}

/// Streaming state of [`TransformerF::forward_stream`]: scratch for `t` steps and, per
/// layer, a ring of the last `context − 1 + t` keys (transposed, `[kv_dim, r]`) and values
/// (`[kv_heads, r, head_dim]`).
#[derive(Debug, Clone)]
pub(crate) struct TransformerStreamF {
    t: usize,
    r: usize,
    pos: usize,
    x: Vec<f32>,
    h: Vec<f32>,
    qkv: Vec<f32>,
    attn: Vec<f32>,
    ff: Vec<f32>,
    out: Vec<f32>,
    cos: Vec<f32>,
    sin: Vec<f32>,
    scores: Vec<f32>,
    kt: Vec<f32>,
    v: Vec<f32>,
    slot_pos: Vec<i64>,
}

impl TransformerStreamF {
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.slot_pos.fill(-1);
        self.kt.fill(0.0);
        self.v.fill(0.0);
    }
}
