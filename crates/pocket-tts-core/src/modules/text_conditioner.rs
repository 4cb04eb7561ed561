//! Lookup-table text conditioner (reference: `modules/text_conditioner.py`,
//! `LUTConditioner`): token ids → embeddings, optionally low-rank.

use candle_core::{Module, Result, Tensor};
use candle_nn::VarBuilder;

use super::layers::linear_no_bias;
use crate::modules::weights_view::{LutTable, LutView};
use crate::weights::MappedF32;

/// Embedding table `[n_bins + 1, rank or dim]` (the extra row is padding) and, for a
/// low-rank table, a bias-free projection `rank → dim`. Loads `embed.weight` and
/// `proj.weight`.
#[derive(Debug, Clone)]
pub struct LutConditioner {
    table: Table,
    proj: Option<candle_nn::Linear>,
    n_bins: usize,
}

impl LutConditioner {
    /// Builds the table for `n_bins` tokens of width `dim` (or `rank`).
    pub fn new(n_bins: usize, dim: usize, rank: Option<usize>, vb: VarBuilder) -> Result<Self> {
        let width = rank.unwrap_or(dim);
        // Left in the checkpoint's memory map when it is being loaded: only the rows of the
        // text tokens read become resident (16 MB at full size otherwise).
        let name = format!("{}.weight", vb.pp("embed").prefix());
        let table = match crate::weights::mapped_f32(&name, n_bins + 1, width)? {
            Some(mapped) => Table::Mapped(mapped),
            None => Table::Tensor(candle_nn::Embedding::new(
                vb.pp("embed").get((n_bins + 1, width), "weight")?,
                width,
            )),
        };
        let proj = match rank {
            Some(r) => Some(linear_no_bias(r, dim, vb.pp("proj"))?),
            None => None,
        };
        Ok(Self {
            table,
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
            table: match &self.table {
                Table::Tensor(e) => LutTable::Tensor(e.embeddings()),
                Table::Mapped(m) => LutTable::Mapped(m),
            },
            proj: self.proj.as_ref().map(Into::into),
        }
    }

    /// `tokens`: `[B, T]` u32 → `[B, T, dim]`.
    pub fn forward(&self, tokens: &Tensor) -> Result<Tensor> {
        let x = match &self.table {
            Table::Tensor(e) => e.forward(tokens)?,
            Table::Mapped(m) => gather_rows(m, tokens)?,
        };
        match &self.proj {
            Some(p) => p.forward(&x),
            None => Ok(x),
        }
    }
}

/// Where the lookup table's rows live.
#[derive(Debug, Clone)]
enum Table {
    /// A Candle tensor (models built without a checkpoint map).
    Tensor(candle_nn::Embedding),
    /// In the checkpoint's memory map.
    Mapped(MappedF32),
}

/// The rows `tokens` (`u32` ids, any shape `[…]`) of `table` as a tensor `[…, width]`, as
/// `candle_nn::Embedding::forward` gives them.
fn gather_rows(table: &MappedF32, tokens: &Tensor) -> Result<Tensor> {
    let (rows, width) = table.dims();
    let values = table.as_slice();
    let ids = tokens.flatten_all()?.to_vec1::<u32>()?;
    let mut out = Vec::with_capacity(ids.len() * width);
    for &id in &ids {
        let r = id as usize;
        if r >= rows {
            return Err(candle_core::Error::Msg(format!(
                "token id {id} is outside the lookup table ({rows} rows)"
            )));
        }
        out.extend_from_slice(&values[r * width..(r + 1) * width]);
    }
    let mut dims = tokens.dims().to_vec();
    dims.push(width);
    Tensor::from_vec(out, dims, tokens.device())
}
