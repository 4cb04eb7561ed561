//! Streaming convolutions on time-major `[T, C]` buffers, mirroring `modules/conv.py`
//! (`StreamingConv1d`, `StreamingConvTranspose1d`) and the depthwise transposed conv of
//! `modules/resample.py` (`ConvTrUpsample1d`) in `pocket-tts` 4.0.1.
//!
//! [`ConvF`] is one GEMM read in place from a buffer of history rows followed by the new
//! input rows, then a roll of the history; [`ConvTrF`] is one GEMM to `[T, K·C_out]` and
//! an overlap-add carried between calls; [`UpsampleF`] is the 12.5 Hz → 200 Hz
//! depthwise upsampler of the decoder.

use pocket_tts_simd::gemm::{add_assign, BView, Groups, Init, PackedMatrix};
use pocket_tts_simd::HalfKind;

use super::par::{par_gemm_grouped, Par};
use super::{dims, tensor_vec, with_tensor_values};
use crate::modules::conv::PadMode;
use crate::modules::weights_view::{ConvTrView, ConvView};
use crate::{Error, Result};

/// A causal streaming conv as one GEMM over the time-major input buffer.
#[derive(Debug, Clone)]
pub(super) struct ConvF {
    pub(super) cin: usize,
    pub(super) cout: usize,
    kernel: usize,
    pub(super) stride: usize,
    dilation: usize,
    /// Input rows kept between calls (`k_eff - stride`).
    pub(super) hist: usize,
    pad_mode: PadMode,
    /// `A[(j, ci), co] = W[co, ci, j]`.
    w: PackedMatrix,
    bias: Option<Vec<f32>>,
    /// The module's name (`decoder.model.3`), for messages.
    name: String,
}

impl ConvF {
    pub(super) fn from_view(c: &ConvView<'_>, what: &str) -> Result<Self> {
        if c.groups != 1 {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: grouped conv {what} (groups = {})",
                c.groups
            )));
        }
        let (cout, cin, k) = (c.out_channels, c.in_channels, c.kernel_size);
        if c.weight.elem_count() != cout * cin * k {
            return Err(Error::InvalidData(format!(
                "Mimi fast path: {what} weight has shape {:?}, expected [{cout}, {cin}, {k}]",
                dims(c.weight)
            )));
        }
        // Read in place: no copy of the weight next to the packed one.
        let packed = with_tensor_values(c.weight, what, |w| {
            PackedMatrix::from_fn(k * cin, cout, |kk, co| {
                let (j, ci) = (kk / cin, kk % cin);
                w[(co * cin + ci) * k + j]
            })
        })?;
        let bias = c.bias.map(|b| tensor_vec(b, what)).transpose()?;
        let k_eff = (k - 1) * c.dilation + 1;
        Ok(Self {
            cin,
            cout,
            kernel: k,
            stride: c.stride,
            dilation: c.dilation,
            hist: k_eff.saturating_sub(c.stride),
            pad_mode: c.pad_mode,
            w: packed,
            bias,
            name: what.to_string(),
        })
    }

    /// Stores the weights as 16-bit `kind` (see [`super::store_half`]).
    pub(super) fn store_half(&mut self, kind: HalfKind) -> Result<()> {
        super::store_half(&mut self.w, kind, &self.name)
    }

    pub(super) fn out_len(&self, t_in: usize) -> Result<usize> {
        if t_in == 0 || !t_in.is_multiple_of(self.stride) {
            return Err(Error::invalid_argument(format!(
                "Mimi fast path: {t_in} steps is not a positive multiple of the conv stride {}",
                self.stride
            )));
        }
        Ok(t_in / self.stride)
    }

    /// [`ConvF::forward`] after checking `t_in` against the stride and the buffer sizes.
    pub(super) fn forward_once(
        &self,
        par: &Par,
        inbuf: &mut [f32],
        first: &mut bool,
        t_in: usize,
        dst: &mut [f32],
    ) -> Result<()> {
        let t_out = self.out_len(t_in)?;
        if inbuf.len() < (self.hist + t_in) * self.cin || dst.len() < t_out * self.cout {
            return Err(Error::invalid_argument(
                "Mimi fast path: conv buffers too small",
            ));
        }
        self.forward(par, inbuf, first, t_in, dst, false);
        Ok(())
    }

    /// `inbuf` holds `hist` history rows followed by the `T_in` new input rows (already
    /// written). Computes the output into `dst` (or adds it, with `accumulate`) and rolls
    /// the history.
    pub(super) fn forward(
        &self,
        par: &Par,
        inbuf: &mut [f32],
        first: &mut bool,
        t_in: usize,
        dst: &mut [f32],
        accumulate: bool,
    ) {
        let (cin, hist) = (self.cin, self.hist);
        if *first {
            self.pad_first(inbuf);
        }
        self.product(par, inbuf, Groups::ONE, t_in, dst, accumulate);
        if hist > 0 {
            inbuf.copy_within(t_in * cin..(t_in + hist) * cin, 0);
        }
        *first = false;
    }

    /// The history rows of a stream's first frame: copies of its first input row with
    /// replicate padding (the zeros already there otherwise). `inbuf` as in
    /// [`Self::forward`].
    pub(super) fn pad_first(&self, inbuf: &mut [f32]) {
        let (cin, hist) = (self.cin, self.hist);
        if hist > 0 && self.pad_mode == PadMode::Replicate {
            let (h, x) = inbuf.split_at_mut(hist * cin);
            for row in h.chunks_exact_mut(cin) {
                row.copy_from_slice(&x[..cin]);
            }
        }
    }

    /// The conv's GEMM for `groups.count` streams: stream `g`'s input buffer (`hist`
    /// history rows then `t_in` input rows) starts at `inbuf[g·groups.b_step]`, its
    /// `[t_in / stride, cout]` output at `dst[g·groups.c_step]` (added to it with
    /// `accumulate`, the bias added first). The history is not rolled.
    pub(super) fn product(
        &self,
        par: &Par,
        inbuf: &[f32],
        groups: Groups,
        t_in: usize,
        dst: &mut [f32],
        accumulate: bool,
    ) {
        let cin = self.cin;
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
                    for g in 0..groups.count {
                        let rows = &mut dst[g * groups.c_step..][..t_out * self.cout];
                        for row in rows.chunks_exact_mut(self.cout) {
                            add_assign(row, bias);
                        }
                    }
                }
                Init::Accumulate
            }
        };
        par_gemm_grouped(par, &self.w, b, groups, dst, self.cout, init);
    }
}

/// A transposed conv (groups = 1) as `Z = X·A` (`[T, K·C_out]`) plus an overlap-add.
#[derive(Debug, Clone)]
pub(super) struct ConvTrF {
    pub(super) cin: usize,
    pub(super) cout: usize,
    pub(super) kernel: usize,
    pub(super) stride: usize,
    /// `A[ci, (j, co)] = W[ci, co, j]`.
    w: PackedMatrix,
    bias: Option<Vec<f32>>,
    /// The module's name (`decoder.model.2`), for messages.
    name: String,
}

impl ConvTrF {
    pub(super) fn from_view(c: &ConvTrView<'_>, what: &str) -> Result<Self> {
        if c.groups != 1 {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: grouped transposed conv {what} (groups = {})",
                c.groups
            )));
        }
        let d = dims(c.weight);
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
        let packed = with_tensor_values(c.weight, what, |w| {
            PackedMatrix::from_fn(cin, k * cout, |ci, m| {
                let (j, co) = (m / cout, m % cout);
                w[(ci * cout + co) * k + j]
            })
        })?;
        let bias = c.bias.map(|b| tensor_vec(b, what)).transpose()?;
        Ok(Self {
            cin,
            cout,
            kernel: k,
            stride: c.stride,
            w: packed,
            bias,
            name: what.to_string(),
        })
    }

    /// Stores the weights as 16-bit `kind` (see [`super::store_half`]).
    pub(super) fn store_half(&mut self, kind: HalfKind) -> Result<()> {
        super::store_half(&mut self.w, kind, &self.name)
    }

    pub(super) fn overlap(&self) -> usize {
        self.kernel - self.stride
    }

    /// The GEMM of `groups.count` streams: stream `g`'s `x` (`[t_in, C_in]`) at
    /// `x[g·groups.b_step]` → its `[t_in, K·C_out]` at `z[g·groups.c_step]`.
    pub(super) fn product(&self, par: &Par, x: &[f32], groups: Groups, t_in: usize, z: &mut [f32]) {
        let (k, co) = (self.kernel, self.cout);
        par_gemm_grouped(
            par,
            &self.w,
            BView::dense(x, t_in, self.cin, self.cin),
            groups,
            z,
            k * co,
            Init::Zero,
        );
    }

    /// One stream's overlap-add after [`Self::product`]: `z` (`[t_in, K·C_out]`) →
    /// `ext`: `[T·S + (K − S), C_out]`, of which the first `T·S` rows are the output
    /// (bias added); the last `K − S` rows become the new `partial`.
    pub(super) fn overlap_add(&self, z: &[f32], t_in: usize, partial: &mut [f32], ext: &mut [f32]) {
        let (s, k, co) = (self.stride, self.kernel, self.cout);
        let pt = self.overlap();
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

/// Depthwise transposed conv (the 12.5 Hz → 200 Hz upsampler), no bias.
#[derive(Debug, Clone)]
pub(super) struct UpsampleF {
    pub(super) channels: usize,
    pub(super) kernel: usize,
    pub(super) stride: usize,
    /// `w[j·C + c] = W[c, 0, j]`.
    w: Vec<f32>,
}

impl UpsampleF {
    pub(super) fn from_view(c: &ConvTrView<'_>) -> Result<Self> {
        let d = dims(c.weight);
        let (cin, per_group, k) = (d[0], d[1], d[2]);
        if per_group != 1 || c.groups != cin || c.bias.is_some() || k < c.stride {
            return Err(Error::Unsupported(format!(
                "Mimi fast path: upsampler must be depthwise without bias (weight {d:?}, groups {})",
                c.groups
            )));
        }
        let w = tensor_vec(c.weight, "upsample.convtr.convtr.weight")?;
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
    pub(super) fn forward(&self, x: &[f32], t_in: usize, partial: &mut [f32], ext: &mut [f32]) {
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
