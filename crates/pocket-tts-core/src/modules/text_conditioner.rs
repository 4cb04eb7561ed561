//! Lookup-table text conditioner (reference: `modules/text_conditioner.py`,
//! `LUTConditioner`): token ids → embeddings, optionally low-rank.

use candle_core::{Module, Result, Tensor};
use candle_nn::VarBuilder;

use super::layers::linear_no_bias;
use crate::modules::weights_view::LutView;

/// Embedding table `[n_bins + 1, rank or dim]` (the extra row is padding) and, for a
/// low-rank table, a bias-free projection `rank → dim`. Loads `embed.weight` and
/// `proj.weight`.
#[derive(Debug, Clone)]
pub struct LutConditioner {
    embed: candle_nn::Embedding,
    proj: Option<candle_nn::Linear>,
    n_bins: usize,
}

impl LutConditioner {
    /// Builds the table for `n_bins` tokens of width `dim` (or `rank`).
    pub fn new(n_bins: usize, dim: usize, rank: Option<usize>, vb: VarBuilder) -> Result<Self> {
        let width = rank.unwrap_or(dim);
        let table = vb.pp("embed").get((n_bins + 1, width), "weight")?;
        let proj = match rank {
            Some(r) => Some(linear_no_bias(r, dim, vb.pp("proj"))?),
            None => None,
        };
        Ok(Self {
            embed: candle_nn::Embedding::new(table, width),
            proj,
            n_bins,
        })
    }

    /// Vocabulary size.
    pub fn n_bins(&self) -> usize {
        self.n_bins
    }

    /// The table and projection, read-only.
    pub fn view(&self) -> LutView<'_> {
        LutView {
            table: self.embed.embeddings(),
            proj: self.proj.as_ref().map(Into::into),
        }
    }

    /// `tokens`: `[B, T]` u32 → `[B, T, dim]`.
    pub fn forward(&self, tokens: &Tensor) -> Result<Tensor> {
        let x = self.embed.forward(tokens)?;
        match &self.proj {
            Some(p) => p.forward(&x),
            None => Ok(x),
        }
    }
}
