//! SEANet encoder and decoder (reference: `modules/seanet.py`), the convolutional
//! halves of Mimi: the encoder downsamples 24 kHz audio by the product of the ratios
//! (120 → 200 Hz), the decoder upsamples back.

use candle_core::{Result, Tensor};
use candle_nn::VarBuilder;

use super::conv::{
    Conv1dSpec, ConvState, ConvTrState, PadMode, StreamingConv1d, StreamingConvTranspose1d,
};
use crate::config::SeanetConfig;
use crate::modules::weights_view::{SeanetLayerView, SeanetView};

/// Residual block: `x + conv_k1(elu(conv_k(elu(x))))` with a hidden width of
/// `dim / compress` (reference: `SEANetResnetBlock`). Loads `block.1.conv.…` and
/// `block.3.conv.…`.
#[derive(Debug, Clone)]
pub struct SeanetResnetBlock {
    convs: Vec<StreamingConv1d>,
}

impl SeanetResnetBlock {
    fn new(
        dim: usize,
        kernel_sizes: &[usize],
        dilations: &[usize],
        pad_mode: PadMode,
        compress: usize,
        vb: VarBuilder,
    ) -> Result<Self> {
        let hidden = dim / compress;
        let n = kernel_sizes.len();
        let convs = kernel_sizes
            .iter()
            .zip(dilations)
            .enumerate()
            .map(|(i, (&k, &d))| {
                let in_chs = if i == 0 { dim } else { hidden };
                let out_chs = if i == n - 1 { dim } else { hidden };
                let spec = Conv1dSpec {
                    dilation: d,
                    ..Conv1dSpec::simple(in_chs, out_chs, k, pad_mode)
                };
                StreamingConv1d::new(spec, vb.pp(format!("block.{}", 2 * i + 1)))
            })
            .collect::<Result<_>>()?;
        Ok(Self { convs })
    }

    fn forward(&self, x: &Tensor, states: &mut [ConvState]) -> Result<Tensor> {
        let mut v = x.clone();
        for (conv, state) in self.convs.iter().zip(states.iter_mut()) {
            v = conv.forward(&v.elu(1.0)?, state)?;
        }
        x + v
    }
}

#[derive(Debug, Clone)]
enum Layer {
    Elu,
    Conv(StreamingConv1d),
    ConvTr(StreamingConvTranspose1d),
    Res(SeanetResnetBlock),
}

/// Streaming state of a SEANet stack: one entry per stateful layer.
#[derive(Debug, Clone)]
pub struct SeanetState {
    layers: Vec<LayerState>,
}

#[derive(Debug, Clone)]
enum LayerState {
    None,
    Conv(ConvState),
    ConvTr(ConvTrState),
    Res(Vec<ConvState>),
}

fn view(layers: &[Layer]) -> SeanetView<'_> {
    SeanetView {
        layers: layers
            .iter()
            .map(|l| match l {
                Layer::Elu => SeanetLayerView::Elu,
                Layer::Conv(c) => SeanetLayerView::Conv(c.view()),
                Layer::ConvTr(c) => SeanetLayerView::ConvTr(c.view()),
                Layer::Res(r) => SeanetLayerView::Res(r.convs.iter().map(|c| c.view()).collect()),
            })
            .collect(),
    }
}

fn init_state(layers: &[Layer]) -> SeanetState {
    SeanetState {
        layers: layers
            .iter()
            .map(|l| match l {
                Layer::Elu => LayerState::None,
                Layer::Conv(_) => LayerState::Conv(ConvState::new()),
                Layer::ConvTr(_) => LayerState::ConvTr(ConvTrState::default()),
                Layer::Res(r) => LayerState::Res(vec![ConvState::new(); r.convs.len()]),
            })
            .collect(),
    }
}

fn run(layers: &[Layer], x: &Tensor, state: &mut SeanetState) -> Result<Tensor> {
    let mut x = x.clone();
    for (layer, st) in layers.iter().zip(state.layers.iter_mut()) {
        x = match (layer, st) {
            (Layer::Elu, _) => x.elu(1.0)?,
            (Layer::Conv(c), LayerState::Conv(s)) => c.forward(&x, s)?,
            (Layer::ConvTr(c), LayerState::ConvTr(s)) => c.forward(&x, s)?,
            (Layer::Res(r), LayerState::Res(s)) => r.forward(&x, s)?,
            _ => candle_core::bail!("SEANet state does not match its layers"),
        };
    }
    Ok(x)
}

/// SEANet encoder: `[B, channels, T]` → `[B, dimension, T / hop]`
/// (reference: `SEANetEncoder`). Loads `model.{i}.…`.
#[derive(Debug, Clone)]
pub struct SeanetEncoder {
    layers: Vec<Layer>,
}

impl SeanetEncoder {
    /// Builds the encoder from the config, the ratios applied in reverse order.
    pub fn new(cfg: &SeanetConfig, vb: VarBuilder) -> Result<Self> {
        let pad = cfg.pad_mode;
        let vb = vb.pp("model");
        let nf = cfg.n_filters;
        let mut mult = 1;
        let mut layers = vec![Layer::Conv(StreamingConv1d::new(
            Conv1dSpec::simple(cfg.channels, mult * nf, cfg.kernel_size, pad),
            vb.pp("0"),
        )?)];
        for &ratio in cfg.ratios.iter().rev() {
            for j in 0..cfg.n_residual_layers {
                let block = SeanetResnetBlock::new(
                    mult * nf,
                    &[cfg.residual_kernel_size, 1],
                    &[cfg.dilation_base.pow(j as u32), 1],
                    pad,
                    cfg.compress,
                    vb.pp(layers.len().to_string()),
                )?;
                layers.push(Layer::Res(block));
            }
            layers.push(Layer::Elu);
            let spec = Conv1dSpec {
                stride: ratio,
                ..Conv1dSpec::simple(mult * nf, mult * nf * 2, ratio * 2, pad)
            };
            layers.push(Layer::Conv(StreamingConv1d::new(
                spec,
                vb.pp(layers.len().to_string()),
            )?));
            mult *= 2;
        }
        layers.push(Layer::Elu);
        layers.push(Layer::Conv(StreamingConv1d::new(
            Conv1dSpec::simple(mult * nf, cfg.dimension, cfg.last_kernel_size, pad),
            vb.pp(layers.len().to_string()),
        )?));
        Ok(Self { layers })
    }

    /// The layers' weights and hyper-parameters, read-only.
    pub fn view(&self) -> SeanetView<'_> {
        view(&self.layers)
    }

    /// A fresh streaming state.
    pub fn init_state(&self) -> SeanetState {
        init_state(&self.layers)
    }

    /// Encodes `[B, channels, T]` (T a multiple of the hop length).
    pub fn forward(&self, x: &Tensor, state: &mut SeanetState) -> Result<Tensor> {
        run(&self.layers, x, state)
    }
}

/// SEANet decoder: `[B, dimension, T]` → `[B, channels, T * hop]`
/// (reference: `SEANetDecoder`). Loads `model.{i}.…`.
#[derive(Debug, Clone)]
pub struct SeanetDecoder {
    layers: Vec<Layer>,
}

impl SeanetDecoder {
    /// Builds the decoder from the config.
    pub fn new(cfg: &SeanetConfig, vb: VarBuilder) -> Result<Self> {
        let pad = cfg.pad_mode;
        let vb = vb.pp("model");
        let nf = cfg.n_filters;
        let mut mult = 1usize << cfg.ratios.len();
        let mut layers = vec![Layer::Conv(StreamingConv1d::new(
            Conv1dSpec::simple(cfg.dimension, mult * nf, cfg.kernel_size, pad),
            vb.pp("0"),
        )?)];
        for &ratio in &cfg.ratios {
            layers.push(Layer::Elu);
            let convtr = StreamingConvTranspose1d::new(
                mult * nf,
                mult * nf / 2,
                ratio * 2,
                ratio,
                1,
                true,
                vb.pp(layers.len().to_string()),
            )?;
            layers.push(Layer::ConvTr(convtr));
            for j in 0..cfg.n_residual_layers {
                let block = SeanetResnetBlock::new(
                    mult * nf / 2,
                    &[cfg.residual_kernel_size, 1],
                    &[cfg.dilation_base.pow(j as u32), 1],
                    pad,
                    cfg.compress,
                    vb.pp(layers.len().to_string()),
                )?;
                layers.push(Layer::Res(block));
            }
            mult /= 2;
        }
        layers.push(Layer::Elu);
        layers.push(Layer::Conv(StreamingConv1d::new(
            Conv1dSpec::simple(nf, cfg.channels, cfg.last_kernel_size, pad),
            vb.pp(layers.len().to_string()),
        )?));
        Ok(Self { layers })
    }

    /// The layers' weights and hyper-parameters, read-only.
    pub fn view(&self) -> SeanetView<'_> {
        view(&self.layers)
    }

    /// A fresh streaming state.
    pub fn init_state(&self) -> SeanetState {
        init_state(&self.layers)
    }

    /// Decodes `[B, dimension, T]`, continuing from `state`.
    pub fn forward(&self, x: &Tensor, state: &mut SeanetState) -> Result<Tensor> {
        run(&self.layers, x, state)
    }
}
