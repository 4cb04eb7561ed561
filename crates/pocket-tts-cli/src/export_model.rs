//! `export-model`: write a pre-quantized checkpoint (ours): the model's checkpoint with
//! the FlowLM transformer's linears stored int8 or 4-bit, which `--quantize` then loads as
//! stored (`TtsModel::export_quantized`).

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::tts_model::TtsModel;

use crate::model::{self, ModelArgs};
use crate::outputs::{self, Named};

/// Arguments of `export-model`.
#[derive(Args, Debug)]
pub struct ExportModelArgs {
    /// Output .safetensors file; an existing file is replaced only once the new one is
    /// complete. Name it in a config's weights_path (with the source's tokenizer) to use
    /// it.
    pub export_path: String,
    /// Only print errors.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Runs `export-model`.
pub fn run(args: ExportModelArgs) -> Result<()> {
    let t0 = Instant::now();
    let Some(quantize) = args.model.quantize else {
        bail!("export-model needs --quantize int8 or --quantize q4: the format it writes");
    };
    if args.model.dtype.is_some() {
        bail!(
            "export-model --dtype: not supported; the exported checkpoint keeps the float \
             weights as the source stores them (pass --dtype when loading it)"
        );
    }
    if args.model.mimi_dtype.is_some() {
        bail!(
            "export-model --mimi-dtype: not supported; the exported checkpoint keeps Mimi's \
             weights as the source stores them (pass --mimi-dtype when loading it)"
        );
    }
    let out = Path::new(&args.export_path);
    if !args.export_path.ends_with(".safetensors") {
        bail!(
            "EXPORT_PATH {:?}: a checkpoint should end with .safetensors, e.g. model-q4.safetensors",
            args.export_path
        );
    }
    if out.is_dir() {
        bail!(
            "EXPORT_PATH {}: is a folder; give a file name",
            out.display()
        );
    }
    let choice = model::choose(&args.model)?;
    let files = TtsModel::resolve_files(&choice.config, choice.dir.as_deref(), true)
        .context("cannot find the model's checkpoint")?;
    let inputs: Vec<Named> = choice
        .input_files()
        .into_iter()
        .map(|(what, path)| Named::new(what, path))
        .chain([Named::new("the checkpoint", &files.weights)])
        .collect();
    outputs::check_distinct(&[Named::new("EXPORT_PATH", out)], &inputs)?;
    let summary =
        TtsModel::export_quantized(&files.weights, quantize.into(), out).with_context(|| {
            format!(
                "cannot export {} to {}",
                files.weights.display(),
                out.display()
            )
        })?;
    if !args.quiet {
        eprintln!(
            "wrote {} ({:.1} MB, {} linears {}, {} tensors copied) in {:.1} s",
            out.display(),
            summary.bytes as f64 / 1e6,
            summary.quantized,
            pocket_tts_core::Quantization::from(quantize).name(),
            summary.copied,
            t0.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
