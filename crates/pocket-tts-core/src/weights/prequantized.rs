//! Pre-quantized checkpoints (ours, `pocket-tts-cli export-model`): the reference's
//! checkpoint with the FlowLM transformer's attention and feed-forward weights replaced by
//! their quantized form, so that `--quantize` loads them as stored instead of quantizing
//! 75 M weights at every start.
//!
//! # Format (`format_version` 1)
//!
//! A safetensors file whose `__metadata__` holds `format = "pocket-tts-rs-quantized"`,
//! `format_version = "1"` and `quantization = "int8"` or `"q4"`. Every tensor of the
//! source checkpoint is kept with its name, dtype and values, except the weights of the
//! quantized linears (`flow_lm.transformer.layers.N.{self_attn.in_proj, self_attn.out_proj,
//! linear1, linear2}.weight`, the linears the reference's `quantization.py` quantizes),
//! each replaced by two tensors next to it:
//!
//! | quantization | tensors (for `P.weight` of shape `[out, in]`) |
//! |---|---|
//! | `int8` | `P.weight_int8` `U8` `[out, in]` (the `i8` values' bytes, two's complement), `P.weight_int8_scale` `F32` `[out]` (`pocket_tts_simd::QuantizedRows`) |
//! | `q4` | `P.weight_q4` `U8` `[out, in / 2]` (nibbles), `P.weight_q4_scale` `BF16` `[out, in / 32]` (`pocket_tts_simd::Q4Rows`, whose docs give the layout) |
//!
//! The values are exactly what quantizing the source's weights at load gives, so a model
//! loaded from the export computes the same bits as one quantized at load. A loader that
//! does not know the format refuses it: the reference's `load_state_dict(strict=True)` and
//! older builds of ours miss the `P.weight` tensors, and this build refuses an unknown
//! `format` or version ([`crate::Error::CheckpointFormat`]).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use candle_core::safetensors::Load;
use candle_core::{DType, Device};
use pocket_tts_simd::{Q4Rows, QuantizedRows, Q4_BLOCK};
use safetensors::tensor::{Dtype, TensorView};
use safetensors::SafeTensors;

use crate::config::Quantization;
use crate::{Error, Result};

/// The metadata key naming the format.
pub const FORMAT_KEY: &str = "format";
/// Our format's name.
pub const FORMAT: &str = "pocket-tts-rs-quantized";
/// The metadata key of the format's version.
pub const VERSION_KEY: &str = "format_version";
/// The version this build writes and reads.
pub const VERSION: &str = "1";
/// The metadata key of the quantization (`int8`, `q4`).
pub const QUANTIZATION_KEY: &str = "quantization";

/// The names (below the linear's prefix) of the tensors that replace its `weight`:
/// values, scales.
pub fn tensor_suffixes(q: Quantization) -> (&'static str, &'static str) {
    match q {
        Quantization::Int8 => ("weight_int8", "weight_int8_scale"),
        _ => ("weight_q4", "weight_q4_scale"),
    }
}

/// The full names of the tensors that replace `prefix.weight`: values, scales.
pub fn tensor_names(prefix: &str, q: Quantization) -> (String, String) {
    let (v, s) = tensor_suffixes(q);
    (format!("{prefix}.{v}"), format!("{prefix}.{s}"))
}

/// Whether `name` is the weight of a linear that `--quantize` quantizes (the FlowLM
/// transformer's attention and feed-forward linears), returning its prefix (`P` of
/// `P.weight`).
pub fn quantized_linear_prefix(name: &str) -> Option<&str> {
    let prefix = name.strip_suffix(".weight")?;
    let rest = prefix.strip_prefix("flow_lm.transformer.layers.")?;
    let (layer, linear) = rest.split_once('.')?;
    let is_layer = !layer.is_empty() && layer.bytes().all(|b| b.is_ascii_digit());
    let is_linear = matches!(
        linear,
        "self_attn.in_proj" | "self_attn.out_proj" | "linear1" | "linear2"
    );
    (is_layer && is_linear).then_some(prefix)
}

/// The safetensors `__metadata__` of the file at `path` (empty when it has none), read
/// from its header alone.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read, [`Error::InvalidData`] for a header that is
/// not safetensors'.
pub fn read_metadata(path: &Path) -> Result<HashMap<String, String>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).map_err(io)?;
    let len = u64::from_le_bytes(len);
    let bad = |why: &str| {
        Error::InvalidData(format!(
            "{} is not a readable safetensors checkpoint: {why}",
            path.display()
        ))
    };
    if len > 100 << 20 {
        return Err(bad("its header is larger than 100 MB"));
    }
    let mut header = vec![0u8; len as usize];
    f.read_exact(&mut header).map_err(io)?;
    let v: serde_json::Value =
        serde_json::from_slice(&header).map_err(|e| bad(&format!("its header: {e}")))?;
    let mut out = HashMap::new();
    if let Some(m) = v.get("__metadata__").and_then(|m| m.as_object()) {
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                out.insert(k.clone(), s.to_string());
            }
        }
    }
    Ok(out)
}

/// The quantization of a checkpoint: `None` for the reference's (no `format` in its
/// metadata), the stored one for ours.
///
/// # Errors
/// [`Error::CheckpointFormat`] for a format, version or quantization this build does not
/// know; the errors of [`read_metadata`].
pub fn stored_quantization(path: &Path) -> Result<Option<Quantization>> {
    let meta = read_metadata(path)?;
    let Some(format) = meta.get(FORMAT_KEY) else {
        return Ok(None);
    };
    let version = meta.get(VERSION_KEY).map_or("none", String::as_str);
    let quant = meta.get(QUANTIZATION_KEY).map_or("none", String::as_str);
    let unknown = || Error::CheckpointFormat {
        path: path.to_path_buf(),
        format: format!("{format:?} version {version:?} quantization {quant:?}"),
    };
    if format != FORMAT || version != VERSION {
        return Err(unknown());
    }
    quant
        .parse::<Quantization>()
        .map(Some)
        .map_err(|_| unknown())
}

/// What [`export_quantized`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// Linears quantized.
    pub quantized: usize,
    /// Tensors copied as they were.
    pub copied: usize,
    /// Bytes of the file written.
    pub bytes: usize,
}

/// A tensor to write: its dtype, shape and bytes.
struct Out {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl safetensors::View for &Out {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The `f32` values of a checkpoint tensor, converted as the loader converts them
/// (Candle's `to_dtype`), so that quantizing them gives what quantizing at load gives.
fn f32_values(name: &str, view: &TensorView<'_>) -> Result<Vec<f32>> {
    let t = view
        .load(&Device::Cpu)
        .and_then(|t| t.to_dtype(DType::F32))
        .and_then(|t| t.flatten_all())
        .and_then(|t| t.to_vec1::<f32>())
        .map_err(|e| Error::InvalidData(format!("tensor {name}: {e}")))?;
    if let Some(i) = t.iter().position(|v| !v.is_finite()) {
        return Err(Error::InvalidData(format!(
            "tensor {name} holds a non-finite value (NaN or infinity) at flat index {i}: the \
             checkpoint is corrupt"
        )));
    }
    Ok(t)
}

/// Writes the checkpoint `src` (the reference's format) to `out` with the FlowLM
/// transformer's linears quantized as `q` (see the module docs), atomically
/// ([`crate::output::write_file`]: a temporary file in `out`'s folder renamed into place,
/// removed on error).
///
/// # Errors
/// [`Error::InvalidArgument`] (`quantize`) for a source that is already pre-quantized,
/// [`Error::Unsupported`] for a linear whose input width is not a multiple of 32 with
/// `q4`, [`Error::InvalidData`] for a source that is not a readable safetensors file, has
/// no quantizable linear, or holds non-finite weights, and the I/O errors of reading
/// `src` and writing `out`.
pub fn export_quantized(src: &Path, q: Quantization, out: &Path) -> Result<ExportSummary> {
    if let Some(stored) = stored_quantization(src)? {
        return Err(Error::InvalidArgument {
            field: Some("quantize"),
            message: format!(
                "{} is already quantized ({stored}): export from the reference's checkpoint",
                src.display()
            ),
        });
    }
    let bytes = std::fs::read(src).map_err(|source| Error::Io {
        path: src.to_path_buf(),
        source,
    })?;
    let st = SafeTensors::deserialize(&bytes).map_err(|e| {
        Error::InvalidData(format!(
            "{} is not a readable safetensors checkpoint: {e}",
            src.display()
        ))
    })?;
    let mut tensors: Vec<(String, Out)> = Vec::new();
    let (mut quantized, mut copied) = (0, 0);
    for (name, view) in st.tensors() {
        let prefix = quantized_linear_prefix(&name);
        let (Some(prefix), [rows, cols]) = (prefix, view.shape()) else {
            tensors.push((
                name.clone(),
                Out {
                    dtype: view.dtype(),
                    shape: view.shape().to_vec(),
                    data: view.data().to_vec(),
                },
            ));
            copied += 1;
            continue;
        };
        let (rows, cols) = (*rows, *cols);
        let w = f32_values(&name, &view)?;
        let (values, scales) = tensor_names(prefix, q);
        match q {
            Quantization::Int8 => {
                let r = QuantizedRows::quantize(&w, rows, cols);
                let data = r.values().iter().map(|&v| v as u8).collect();
                let scale_bytes = r.scales().iter().flat_map(|s| s.to_le_bytes()).collect();
                tensors.push((
                    values,
                    Out {
                        dtype: Dtype::U8,
                        shape: vec![rows, cols],
                        data,
                    },
                ));
                tensors.push((
                    scales,
                    Out {
                        dtype: Dtype::F32,
                        shape: vec![rows],
                        data: scale_bytes,
                    },
                ));
            }
            _ => {
                if !cols.is_multiple_of(Q4_BLOCK) {
                    return Err(Error::Unsupported(format!(
                        "{name}: 4-bit quantization needs input widths that are multiples \
                         of {Q4_BLOCK}, this one is {cols}: use --quantize int8"
                    )));
                }
                let r = Q4Rows::quantize(&w, rows, cols);
                tensors.push((
                    values,
                    Out {
                        dtype: Dtype::U8,
                        shape: vec![rows, cols / 2],
                        data: r.values().to_vec(),
                    },
                ));
                tensors.push((
                    scales,
                    Out {
                        dtype: Dtype::BF16,
                        shape: vec![rows, cols / Q4_BLOCK],
                        data: r.scales().to_vec(),
                    },
                ));
            }
        }
        quantized += 1;
    }
    if quantized == 0 {
        return Err(Error::InvalidData(format!(
            "{} has no FlowLM transformer linear (flow_lm.transformer.layers.N.linear1.weight, \
             …): it is not a Pocket TTS checkpoint",
            src.display()
        )));
    }
    drop(st);
    drop(bytes);
    let metadata = HashMap::from([
        (FORMAT_KEY.to_string(), FORMAT.to_string()),
        (VERSION_KEY.to_string(), VERSION.to_string()),
        (QUANTIZATION_KEY.to_string(), q.name().to_string()),
    ]);
    let views = tensors.iter().map(|(n, t)| (n.clone(), t));
    let data = safetensors::serialize(views, Some(metadata))
        .map_err(|e| Error::Internal(format!("cannot serialize the checkpoint: {e}")))?;
    crate::output::write_file(out, &data)?;
    Ok(ExportSummary {
        quantized,
        copied,
        bytes: data.len(),
    })
}

/// The int8 rows stored for the linear of `vb` (`[rows, cols]`), or `None` when the
/// checkpoint has none; read through `vb` (at the linear's prefix), so that they are
/// recorded as read.
///
/// # Errors
/// A tensor of the wrong shape or dtype (Candle's error, naming it).
pub(crate) fn load_int8(
    vb: &candle_nn::VarBuilder,
    rows: usize,
    cols: usize,
) -> candle_core::Result<Option<QuantizedRows>> {
    let (values, scales) = tensor_suffixes(Quantization::Int8);
    if !vb.contains_tensor(values) {
        return Ok(None);
    }
    let v = vb
        .get_with_hints_dtype((rows, cols), values, Default::default(), DType::U8)?
        .flatten_all()?
        .to_vec1::<u8>()?;
    let s = vb.get(rows, scales)?.to_vec1::<f32>()?;
    let q = v.into_iter().map(|b| b as i8).collect();
    QuantizedRows::from_parts(q, s, rows, cols)
        .map(Some)
        .map_err(|e| candle_core::Error::Msg(format!("{values}: {e}")))
}

/// The 4-bit rows stored for the linear of `vb` (`[rows, cols]`), or `None` when the
/// checkpoint has none (see [`load_int8`]).
///
/// # Errors
/// A tensor of the wrong shape or dtype (Candle's error, naming it).
pub(crate) fn load_q4(
    vb: &candle_nn::VarBuilder,
    rows: usize,
    cols: usize,
) -> candle_core::Result<Option<Q4Rows>> {
    let (values, scales) = tensor_suffixes(Quantization::Q4);
    if !vb.contains_tensor(values) || !cols.is_multiple_of(Q4_BLOCK) {
        return Ok(None);
    }
    let v = vb
        .get_with_hints_dtype((rows, cols / 2), values, Default::default(), DType::U8)?
        .flatten_all()?
        .to_vec1::<u8>()?;
    let s: Vec<u8> = vb
        .get_with_hints_dtype(
            (rows, cols / Q4_BLOCK),
            scales,
            Default::default(),
            DType::BF16,
        )?
        .flatten_all()?
        .to_vec1::<half::bf16>()?
        .into_iter()
        .flat_map(|d| d.to_bits().to_le_bytes())
        .collect();
    Q4Rows::from_parts(
        pocket_tts_simd::SharedBytes::from_vec(v),
        pocket_tts_simd::SharedBytes::from_vec(s),
        rows,
        cols,
    )
    .map(Some)
    .map_err(|e| candle_core::Error::Msg(format!("{values}: {e}")))
}
