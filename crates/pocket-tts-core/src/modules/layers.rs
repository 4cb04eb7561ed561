//! Small shared layers: linear projections and layer norms as the reference uses them.

use candle_core::{Module, Result, Tensor, D};
use candle_nn::VarBuilder;

use crate::modules::weights_view::{LayerNormView, RmsNormView};

/// `nn.Linear` without bias: weight `[out, in]`, input `[..., in]` → `[..., out]`.
pub fn linear_no_bias(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<candle_nn::Linear> {
    let w = vb.get((out_dim, in_dim), "weight")?;
    Ok(candle_nn::Linear::new(w, None))
}

/// `nn.Linear` with bias: weight `[out, in]`, bias `[out]`.
pub fn linear(in_dim: usize, out_dim: usize, vb: VarBuilder) -> Result<candle_nn::Linear> {
    let w = vb.get((out_dim, in_dim), "weight")?;
    let b = vb.get(out_dim, "bias")?;
    Ok(candle_nn::Linear::new(w, Some(b)))
}

/// Layer norm over the last dimension with the biased variance, like `torch.nn.LayerNorm`
/// and the reference's `mlp.LayerNorm`. Affine parameters are optional
/// (`FinalLayer.norm_final` has none).
#[derive(Debug, Clone)]
pub struct LayerNorm {
    weight: Option<Tensor>,
    bias: Option<Tensor>,
    eps: f64,
    dim: usize,
}

impl LayerNorm {
    /// Loads `weight` and `bias` of shape `[dim]`.
    pub fn new(dim: usize, eps: f64, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            weight: Some(vb.get(dim, "weight")?),
            bias: Some(vb.get(dim, "bias")?),
            eps,
            dim,
        })
    }

    /// A layer norm without affine parameters.
    pub fn no_affine(dim: usize, eps: f64) -> Self {
        Self {
            weight: None,
            bias: None,
            eps,
            dim,
        }
    }

    /// The parameters, read-only.
    pub fn view(&self) -> LayerNormView<'_> {
        LayerNormView {
            weight: self.weight.as_ref(),
            bias: self.bias.as_ref(),
            eps: self.eps,
            dim: self.dim,
        }
    }
}

impl Module for LayerNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match (&self.weight, &self.bias) {
            (Some(w), Some(b)) => {
                candle_nn::ops::layer_norm(&x.contiguous()?, w, b, self.eps as f32)
            }
            _ => {
                let ones = Tensor::ones(self.dim, x.dtype(), x.device())?;
                let zeros = Tensor::zeros(self.dim, x.dtype(), x.device())?;
                candle_nn::ops::layer_norm(&x.contiguous()?, &ones, &zeros, self.eps as f32)
            }
        }
    }
}

/// The reference's `mlp.RMSNorm`: `x * alpha / sqrt(var(x) + eps)` where `var` is the
/// *unbiased* variance over the last dimension (no mean subtraction of `x` itself).
#[derive(Debug, Clone)]
pub struct RmsNorm {
    alpha: Tensor,
    eps: f64,
}

impl RmsNorm {
    /// Loads `alpha` of shape `[dim]`.
    pub fn new(dim: usize, eps: f64, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            alpha: vb.get(dim, "alpha")?,
            eps,
        })
    }

    /// The parameters, read-only.
    pub fn view(&self) -> RmsNormView<'_> {
        RmsNormView {
            alpha: &self.alpha,
            eps: self.eps,
        }
    }
}

impl Module for RmsNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let n = x.dim(D::Minus1)?;
        let mean = x.mean_keepdim(D::Minus1)?;
        let centered = x.broadcast_sub(&mean)?;
        let var = (centered.sqr()?.sum_keepdim(D::Minus1)? / (n.max(2) - 1) as f64)?;
        let inv = (var + self.eps)?.sqrt()?.recip()?;
        x.broadcast_mul(&inv)?.broadcast_mul(&self.alpha)
    }
}
