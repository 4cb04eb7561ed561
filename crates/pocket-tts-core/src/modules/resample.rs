//! Frame-rate conversion inside Mimi (reference: `modules/resample.py`).

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;

use super::conv::{
    Conv1dSpec, ConvState, ConvTrState, PadMode, StreamingConv1d, StreamingConvTranspose1d,
};
use crate::modules::weights_view::{ConvTrView, ConvView};

/// Downsampling by an integer `stride` with a kernel of `2 * stride`, no bias,
/// replicate padding (reference: `ConvDownsample1d`). Loads `conv.conv.weight`.
#[derive(Debug, Clone)]
pub struct ConvDownsample1d {
    conv: StreamingConv1d,
}

impl ConvDownsample1d {
    /// `dimension` → `out_dimension` channels.
    pub fn new(
        stride: usize,
        dimension: usize,
        out_dimension: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        let spec = Conv1dSpec {
            in_channels: dimension,
            out_channels: out_dimension,
            kernel_size: 2 * stride,
            stride,
            dilation: 1,
            groups: 1,
            bias: false,
            pad_mode: PadMode::Replicate,
        };
        Ok(Self {
            conv: StreamingConv1d::new(spec, vb.pp("conv"))?,
        })
    }

    /// The conv's weights and hyper-parameters, read-only.
    pub fn view(&self) -> ConvView<'_> {
        self.conv.view()
    }

    /// `[B, C, T]` → `[B, C_out, T / stride]`.
    pub fn forward(&self, x: &Tensor, state: &mut ConvState) -> Result<Tensor> {
        self.conv.forward(x, state)
    }
}

/// Depthwise upsampling by an integer `stride` with a transposed conv of kernel
/// `2 * stride`, no bias (reference: `ConvTrUpsample1d`). Loads `convtr.convtr.weight`.
#[derive(Debug, Clone)]
pub struct ConvTrUpsample1d {
    convtr: StreamingConvTranspose1d,
}

impl ConvTrUpsample1d {
    /// `in_dimension` → `dimension` channels, `dimension` groups.
    pub fn new(
        stride: usize,
        dimension: usize,
        in_dimension: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        Ok(Self {
            convtr: StreamingConvTranspose1d::new(
                in_dimension,
                dimension,
                2 * stride,
                stride,
                dimension,
                false,
                vb.pp("convtr"),
            )?,
        })
    }

    /// The transposed conv's weights and hyper-parameters, read-only.
    pub fn view(&self) -> ConvTrView<'_> {
        self.convtr.view()
    }

    /// `[B, C, T]` → `[B, C, T * stride]`.
    pub fn forward(&self, x: &Tensor, state: &mut ConvTrState) -> Result<Tensor> {
        self.convtr.forward(x, state)
    }
}
