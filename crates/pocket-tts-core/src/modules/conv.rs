//! Streaming 1-d convolutions (reference: `modules/conv.py`).
//!
//! A [`StreamingConv1d`] keeps the last `effective_kernel - stride` input samples of the
//! previous call and prepends them, so feeding a signal in pieces gives the same output
//! as feeding it whole (causal left padding, zeros or the first sample repeated).
//! A [`StreamingConvTranspose1d`] keeps the overlapping tail of its output and adds it
//! to the start of the next call.

use candle_core::{Result, Tensor, D};
use candle_nn::VarBuilder;

pub use crate::config::PadMode;
use crate::modules::weights_view::{ConvTrView, ConvView};

/// Hyper-parameters of a [`StreamingConv1d`].
#[derive(Debug, Clone, Copy)]
pub struct Conv1dSpec {
    /// Input channels.
    pub in_channels: usize,
    /// Output channels.
    pub out_channels: usize,
    /// Kernel size.
    pub kernel_size: usize,
    /// Stride.
    pub stride: usize,
    /// Dilation.
    pub dilation: usize,
    /// Groups.
    pub groups: usize,
    /// Has a bias.
    pub bias: bool,
    /// First-call padding.
    pub pad_mode: PadMode,
}

impl Conv1dSpec {
    /// A stride-1, dilation-1, single-group conv with bias.
    pub fn simple(
        in_channels: usize,
        out_channels: usize,
        kernel_size: usize,
        pad_mode: PadMode,
    ) -> Self {
        Self {
            in_channels,
            out_channels,
            kernel_size,
            stride: 1,
            dilation: 1,
            groups: 1,
            bias: true,
            pad_mode,
        }
    }
}

/// Streaming state of a [`StreamingConv1d`]: the previous `[B, C_in, K_eff - S]` inputs.
#[derive(Debug, Clone)]
pub struct ConvState {
    previous: Option<Tensor>,
    first: bool,
}

impl ConvState {
    /// A fresh state (nothing seen yet).
    pub fn new() -> Self {
        Self {
            previous: None,
            first: true,
        }
    }
}

impl Default for ConvState {
    fn default() -> Self {
        Self::new()
    }
}

/// Conv1d with causal streaming padding (reference: `StreamingConv1d`); loads
/// `conv.weight` `[C_out, C_in / groups, K]` and `conv.bias` `[C_out]`.
#[derive(Debug, Clone)]
pub struct StreamingConv1d {
    weight: Tensor,
    bias: Option<Tensor>,
    spec: Conv1dSpec,
}

impl StreamingConv1d {
    /// Loads the conv under `vb` (which should point at the module, not at `conv`).
    pub fn new(spec: Conv1dSpec, vb: VarBuilder) -> Result<Self> {
        let vb = vb.pp("conv");
        let weight = vb.get(
            (
                spec.out_channels,
                spec.in_channels / spec.groups,
                spec.kernel_size,
            ),
            "weight",
        )?;
        let bias = if spec.bias {
            Some(vb.get(spec.out_channels, "bias")?)
        } else {
            None
        };
        Ok(Self { weight, bias, spec })
    }

    /// The weights and hyper-parameters, read-only.
    pub fn view(&self) -> ConvView<'_> {
        let s = &self.spec;
        ConvView {
            weight: &self.weight,
            bias: self.bias.as_ref(),
            in_channels: s.in_channels,
            out_channels: s.out_channels,
            kernel_size: s.kernel_size,
            stride: s.stride,
            dilation: s.dilation,
            groups: s.groups,
            pad_mode: s.pad_mode,
        }
    }

    fn effective_kernel(&self) -> usize {
        (self.spec.kernel_size - 1) * self.spec.dilation + 1
    }

    /// Samples kept between calls.
    pub fn history(&self) -> usize {
        self.effective_kernel().saturating_sub(self.spec.stride)
    }

    /// `x`: `[B, C_in, T]` with `T` a multiple of the stride → `[B, C_out, T / stride]`.
    pub fn forward(&self, x: &Tensor, state: &mut ConvState) -> Result<Tensor> {
        let (b, c, t) = x.dims3()?;
        if t == 0 || t % self.spec.stride != 0 {
            candle_core::bail!(
                "StreamingConv1d: {t} steps is not a positive multiple of the stride {}",
                self.spec.stride
            );
        }
        let tp = self.history();
        let x = if tp > 0 {
            let previous = match (&state.previous, self.spec.pad_mode, state.first) {
                (_, PadMode::Replicate, true) => {
                    x.narrow(D::Minus1, 0, 1)?.broadcast_as((b, c, tp))?
                }
                (Some(p), _, _) => p.clone(),
                (None, _, _) => Tensor::zeros((b, c, tp), x.dtype(), x.device())?,
            };
            Tensor::cat(&[&previous, x], D::Minus1)?
        } else {
            x.clone()
        };
        let mut y = x.conv1d(
            &self.weight,
            0,
            self.spec.stride,
            self.spec.dilation,
            self.spec.groups,
        )?;
        if let Some(bias) = &self.bias {
            y = y.broadcast_add(&bias.reshape((1, (), 1))?)?;
        }
        if tp > 0 {
            let total = x.dim(D::Minus1)?;
            state.previous = Some(x.narrow(D::Minus1, total - tp, tp)?.contiguous()?);
        }
        state.first = false;
        Ok(y)
    }
}

/// Streaming state of a [`StreamingConvTranspose1d`]: the partial output `[B, C_out, K - S]`.
#[derive(Debug, Clone, Default)]
pub struct ConvTrState {
    partial: Option<Tensor>,
}

/// Transposed conv1d with streaming overlap-add (reference: `StreamingConvTranspose1d`);
/// loads `convtr.weight` `[C_in, C_out / groups, K]` and `convtr.bias` `[C_out]`.
#[derive(Debug, Clone)]
pub struct StreamingConvTranspose1d {
    weight: Tensor,
    bias: Option<Tensor>,
    kernel_size: usize,
    stride: usize,
    groups: usize,
}

impl StreamingConvTranspose1d {
    /// Loads the transposed conv under `vb` (pointing at the module, not at `convtr`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: usize,
        stride: usize,
        groups: usize,
        bias: bool,
        vb: VarBuilder,
    ) -> Result<Self> {
        let vb = vb.pp("convtr");
        let weight = vb.get((in_channels, out_channels / groups, kernel_size), "weight")?;
        let bias = if bias {
            Some(vb.get(out_channels, "bias")?)
        } else {
            None
        };
        Ok(Self {
            weight,
            bias,
            kernel_size,
            stride,
            groups,
        })
    }

    /// The weights and hyper-parameters, read-only.
    pub fn view(&self) -> ConvTrView<'_> {
        ConvTrView {
            weight: &self.weight,
            bias: self.bias.as_ref(),
            kernel_size: self.kernel_size,
            stride: self.stride,
            groups: self.groups,
        }
    }

    /// `x`: `[B, C_in, T]` → `[B, C_out, T * stride]`.
    pub fn forward(&self, x: &Tensor, state: &mut ConvTrState) -> Result<Tensor> {
        let y = x.conv_transpose1d(&self.weight, 0, 0, self.stride, 1, self.groups)?;
        let y = match &self.bias {
            Some(b) => y.broadcast_add(&b.reshape((1, (), 1))?)?,
            None => y,
        };
        let pt = self.kernel_size.saturating_sub(self.stride);
        if pt == 0 {
            return Ok(y);
        }
        let total = y.dim(D::Minus1)?;
        let head = y.narrow(D::Minus1, 0, pt)?;
        let head = match &state.partial {
            Some(p) => (head + p)?,
            None => head,
        };
        let body = y.narrow(D::Minus1, pt, total - 2 * pt)?;
        let tail = y.narrow(D::Minus1, total - pt, pt)?;
        let tail = match &self.bias {
            Some(b) => tail.broadcast_sub(&b.reshape((1, (), 1))?)?,
            None => tail,
        };
        state.partial = Some(tail.contiguous()?);
        Tensor::cat(&[&head, &body], D::Minus1)
    }
}
