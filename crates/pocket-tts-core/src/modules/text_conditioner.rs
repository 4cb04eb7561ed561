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

#[cfg(test)]
mod mapped_tests {
    //! Weights read in place from the memory map (`Checkpoint::map_scope`) give the bits
    //! of the same weights read through the `VarBuilder` (a heap copy).

    use candle_core::{DType, Device, Module, Tensor};

    use super::LutConditioner;
    use crate::modules::linear::{LinearStorage, MaybeQuantizedLinear};
    use crate::modules::weights_view::LutTable;
    use crate::weights::Checkpoint;
    use pocket_tts_simd::HalfKind;

    fn tiny() -> Checkpoint {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/tiny/model.safetensors");
        Checkpoint::open(&path).expect("tiny checkpoint")
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        t.flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }

    #[test]
    fn mapped_converted_linears_and_lookup_table_give_the_heap_bits() {
        let ckpt = tiny();
        let dev = Device::Cpu;
        let x = Tensor::arange(0f32, 3.0 * 64.0, &dev)
            .unwrap()
            .affine(0.01, -0.9)
            .unwrap()
            .reshape((3, 64))
            .unwrap();
        let tokens = Tensor::new(&[[0u32, 7, 4000, 12, 7]], &dev).unwrap();
        let storages = [
            LinearStorage::Int8,
            LinearStorage::Q4,
            LinearStorage::Half(HalfKind::Bf16),
            LinearStorage::Half(HalfKind::F16),
        ];
        let load = |storage| {
            let vb = ckpt.var_builder(DType::F32, &dev);
            MaybeQuantizedLinear::load(
                64,
                256,
                true,
                storage,
                vb.pp("flow_lm.transformer.layers.0.linear1"),
            )
            .unwrap()
        };
        let lut = || {
            let vb = ckpt.var_builder(DType::F32, &dev);
            LutConditioner::new(4000, 64, None, vb.pp("flow_lm.conditioner")).unwrap()
        };
        let heap: Vec<_> = storages
            .iter()
            .map(|&s| bits(&load(s).forward(&x).unwrap()))
            .collect();
        let heap_lut = lut();
        assert!(matches!(heap_lut.view().table, LutTable::Tensor(_)));
        let _scope = ckpt.map_scope();
        for (s, want) in storages.iter().zip(&heap) {
            assert_eq!(&bits(&load(*s).forward(&x).unwrap()), want, "{s:?}");
        }
        let mapped_lut = lut();
        assert!(matches!(mapped_lut.view().table, LutTable::Mapped(_)));
        assert_eq!(
            bits(&mapped_lut.forward(&tokens).unwrap()),
            bits(&heap_lut.forward(&tokens).unwrap())
        );
        assert_eq!(mapped_lut.forward(&tokens).unwrap().dims(), &[1, 5, 64]);
        assert!(mapped_lut
            .forward(&Tensor::new(&[4001u32], &dev).unwrap())
            .is_err());
    }

    #[test]
    fn a_non_finite_mapped_weight_is_reported_by_finish() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.safetensors");
        let mut table = vec![0.5f32; 3 * 32];
        table[40] = f32::NAN;
        let t = Tensor::from_vec(table, (3, 32), &Device::Cpu).unwrap();
        candle_core::safetensors::save(
            &std::collections::HashMap::from([("c.embed.weight".to_string(), t)]),
            &path,
        )
        .unwrap();
        let ckpt = Checkpoint::open(&path).unwrap();
        let _scope = ckpt.map_scope();
        let vb = ckpt.var_builder(DType::F32, &Device::Cpu);
        let lut = LutConditioner::new(2, 32, None, vb.pp("c")).unwrap();
        assert!(matches!(lut.view().table, LutTable::Mapped(_)));
        let err = ckpt.finish(&["c."]).unwrap_err().to_string();
        assert!(
            err.contains("c.embed.weight") && err.contains("flat index 40"),
            "{err}"
        );
    }
}
