//! Loading a model: resolving the config's files (local or `hf://`), reading the
//! checkpoint into the Candle model definition and building the runtime (reference:
//! `TTSModel.load_model`, `_from_pydantic_config_with_weights`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;

use super::TtsModel;
use crate::config::{Config, Quantization, WeightDtype};
use crate::hub;
use crate::models::flow_lm::FlowLm;
use crate::models::mimi::MimiSource;
use crate::runtime;
use crate::weights::Checkpoint;
use crate::{Error, Result};
use pocket_tts_text::tokenizer::Tokenizer;

/// Where the model's files came from.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// The checkpoint.
    pub weights: PathBuf,
    /// The tokenizer.
    pub tokenizer: PathBuf,
    /// False when the gated voice-cloning checkpoint was refused and the fallback used.
    pub has_voice_cloning: bool,
}

/// How to load the weights (reference: `TTSModel.load_model`'s `quantize`, and the
/// config's `flow_lm.dtype`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// Quantized weights for the FlowLM transformer's attention and feed-forward linears
    /// ([`Quantization::Int8`]: one scale per output channel, as the reference's
    /// `quantization.py`; [`Quantization::Q4`]: 4-bit blocks), converted as the checkpoint
    /// is read, or read as stored from a pre-quantized checkpoint (`export-model`). The
    /// flow head is then stored in `f16` with int8 (computed in `f32`; the reference keeps
    /// it in `f32`), unless [`LoadOptions::flow_lm_dtype`] is set (the head then takes that
    /// dtype: `float32` is the reference's choice, 19 MB more), and in 4-bit blocks with
    /// q4 (the smallest footprint); Mimi as [`LoadOptions::mimi_dtype`] says; the
    /// activations are quantized to int8 per token for exact integer products. `None`:
    /// float.
    pub quantize: Option<Quantization>,
    /// The FlowLM's weight dtype, replacing the config's `flow_lm.dtype` (`None`: the
    /// config's). With `float16` or `bfloat16`, the FlowLM's linears (those not int8 with
    /// [`LoadOptions::quantize`]) are stored in 16 bits, converted as the checkpoint is
    /// read (half the bytes), and computed in `f32`; see
    /// [`crate::internals::models::flow_lm::FlowLm::new`]. Mimi stays `f32`. The loaded model's
    /// [`TtsModel::config`] holds the dtype in effect.
    pub flow_lm_dtype: Option<WeightDtype>,
    /// How the CPU runtime's Mimi decoder stores its weights (the transformer's linears,
    /// the SEANet's convs and transposed convs): `float32`, or `float16` / `bfloat16`
    /// (half the decoder's ~40 MB; every product computed in `f32` on the exactly widened
    /// weights, so only the weights' rounding differs). `None`: `float16` with
    /// [`LoadOptions::quantize`] (63 dB SNR against `f32` and a faster frame, measured in
    /// OPTIMIZATION_LOG.md §34), `float32` (the reference's) without.
    /// The config's `mimi.dtype` is not read (the reference ignores it too), the encoder
    /// stays `f32`, and the Candle backend ignores this.
    pub mimi_dtype: Option<WeightDtype>,
    /// Loads the FlowLM, the tokenizer and the text pipeline, and no part of Mimi: the
    /// checkpoint's `mimi.` tensors are neither needed nor read. Such a model makes voice
    /// states (from `.safetensors` voice states or from Mimi latents,
    /// [`TtsModel::voice_state_from_latents`]) and generates latents
    /// ([`TtsModel::generate_latent_stream`]); decoding and encoding audio return
    /// [`Error::Unsupported`]. The other half is a [`super::MimiCodec`]: the browser
    /// build runs the two in two Web Workers.
    pub without_mimi: bool,
}

impl LoadOptions {
    /// Sets [`LoadOptions::quantize`] to int8 (`true`) or float (`false`), the
    /// reference's `quantize` flag.
    pub fn with_quantize(mut self, quantize: bool) -> Self {
        self.quantize = quantize.then_some(Quantization::Int8);
        self
    }

    /// Sets [`LoadOptions::quantize`].
    pub fn with_quantization(mut self, quantize: Option<Quantization>) -> Self {
        self.quantize = quantize;
        self
    }

    /// The checkpoint's tensor prefixes these options read (a tensor under one of them
    /// that is not read is reported as unexpected).
    fn checked_prefixes(&self) -> &'static [&'static str] {
        if self.without_mimi {
            &["flow_lm."]
        } else {
            &["flow_lm.", "mimi."]
        }
    }

    /// Sets [`LoadOptions::flow_lm_dtype`].
    pub fn with_flow_lm_dtype(mut self, dtype: Option<WeightDtype>) -> Self {
        self.flow_lm_dtype = dtype;
        self
    }

    /// Sets [`LoadOptions::mimi_dtype`].
    pub fn with_mimi_dtype(mut self, dtype: Option<WeightDtype>) -> Self {
        self.mimi_dtype = dtype;
        self
    }

    /// The Mimi decoder's weight dtype in effect: [`LoadOptions::mimi_dtype`]; when unset,
    /// `float16` with [`LoadOptions::quantize`], `float32` without.
    pub fn effective_mimi_dtype(&self) -> WeightDtype {
        self.mimi_dtype.unwrap_or(if self.quantize.is_some() {
            WeightDtype::Float16
        } else {
            WeightDtype::Float32
        })
    }
}

impl TtsModel {
    /// Resolves the config's files (`hf://` through the hub, downloaded only with
    /// `download`; relative paths against `config_dir`) and loads the model. Like the
    /// reference, `weights_path` falls back to `weights_path_without_voice_cloning` when the
    /// gated repository is refused. Public as [`TtsModel::builder`].
    ///
    /// # Errors
    /// [`Error::NotFound`] when a file cannot be found or downloaded,
    /// [`Error::Unsupported`] for configs that split the weights (`flow_lm.weights_path`,
    /// `mimi.weights_path`), and the errors of [`TtsModel::from_files`].
    pub(crate) fn load_resolved(
        config: Config,
        config_dir: Option<&Path>,
        options: LoadOptions,
        download: bool,
    ) -> Result<Self> {
        let files = Self::resolve_files(&config, config_dir, download)?;
        let mut model = Self::from_files(config, &files.weights, &files.tokenizer, options)?;
        model.has_voice_cloning = files.has_voice_cloning;
        Ok(model)
    }

    /// Resolves the weights and tokenizer a config names: local paths (relative ones
    /// against `config_dir`), `hf://` files from the local hub cache, downloaded first when
    /// `download` is true.
    ///
    /// # Errors
    /// See [`TtsModel::builder`]; without `download`, [`Error::NotFound`] for an `hf://` file
    /// not in the cache.
    pub fn resolve_files(
        config: &Config,
        config_dir: Option<&Path>,
        download: bool,
    ) -> Result<ModelFiles> {
        if config.flow_lm.weights_path.is_some() || config.mimi.weights_path.is_some() {
            return Err(Error::Unsupported(
                "configs with separate flow_lm.weights_path / mimi.weights_path (training layouts) \
                 are not supported yet: export a whole-model checkpoint and set weights_path"
                    .into(),
            ));
        }
        let Some(weights_spec) = &config.weights_path else {
            return Err(Error::invalid_argument(
                "the config has no weights_path: set it to a local .safetensors file or an hf:// location",
            ));
        };
        let in_field = |field: &str, spec: &str, e: Error| match e {
            Error::NotFound(m) => Error::NotFound(format!(
                "{field} {spec}: {m} (relative paths are resolved against the config's folder)"
            )),
            other => other,
        };
        let (weights, has_voice_cloning) = match hub::resolve_with(
            weights_spec,
            config_dir,
            download,
        )
        .map_err(|e| in_field("weights_path", weights_spec, e))
        {
            Ok(p) => (p, true),
            Err(first) => match &config.weights_path_without_voice_cloning {
                Some(fallback) => {
                    tracing::warn!(
                        "could not get {weights_spec} ({first}); using the model without voice cloning"
                    );
                    let p = hub::resolve_with(fallback, config_dir, download)
                        .map_err(|e| in_field("weights_path_without_voice_cloning", fallback, e))?;
                    (p, false)
                }
                None => return Err(first),
            },
        };
        let tokenizer = Self::resolve_tokenizer(config, config_dir, download)?;
        Ok(ModelFiles {
            weights,
            tokenizer,
            has_voice_cloning,
        })
    }

    /// Resolves the tokenizer a config names (`flow_lm.lookup_table.tokenizer_path`), and
    /// nothing else: what preparing text needs ([`pocket_tts_text::prep`]), without the
    /// weights. An `hf://` file is downloaded only when `download` is true.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the field when the file cannot be found (or downloaded).
    pub fn resolve_tokenizer(
        config: &Config,
        config_dir: Option<&Path>,
        download: bool,
    ) -> Result<PathBuf> {
        let tok_spec = &config.flow_lm.lookup_table.tokenizer_path;
        hub::resolve_with(tok_spec, config_dir, download).map_err(|e| match e {
            Error::NotFound(m) => Error::NotFound(format!(
                "flow_lm.lookup_table.tokenizer_path {tok_spec}: {m} (relative paths are \
                 resolved against the config's folder)"
            )),
            other => other,
        })
    }

    /// Loads the model from a local checkpoint and tokenizer.
    ///
    /// # Errors
    /// [`Error::NotFound`] for missing files, [`Error::InvalidData`] for a checkpoint that
    /// does not match the config (naming every missing, extra or mis-shaped tensor) or a
    /// tokenizer whose vocabulary differs from `n_bins`.
    pub(crate) fn from_files(
        config: Config,
        weights: &Path,
        tokenizer_path: &Path,
        options: LoadOptions,
    ) -> Result<Self> {
        let device = Device::Cpu;
        let lt = &config.flow_lm.lookup_table;
        let tokenizer = Tokenizer::from_file(tokenizer_path, &lt.tokenizer, lt.n_bins)?;
        let ckpt = Checkpoint::open(weights)?;
        let options = Self::reconcile_quantization(weights, options)?;
        let vb = ckpt.var_builder(DType::F32, &device);
        // Shape and name problems are reported first: they explain most build failures.
        let finish = || ckpt.finish(options.checked_prefixes());
        let context = |e: candle_core::Error| {
            Error::InvalidData(format!("checkpoint {}: {e}", weights.display()))
        };
        let shapes = Some(ckpt.shape_var_builder(DType::F32, &device));
        // The linears converted as they load read their f32 values in place from the map.
        let _mapped = ckpt.map_scope();
        Self::assemble(
            config, vb, shapes, tokenizer, device, options, finish, context,
        )
    }

    /// Writes the checkpoint `weights` (the reference's format) to `out` as a pre-quantized
    /// checkpoint (ours): the FlowLM transformer's attention and feed-forward weights
    /// stored as `quantize` makes them, every other tensor as it was, and safetensors
    /// metadata naming the format (`format = "pocket-tts-rs-quantized"`, `format_version`,
    /// `quantization`). Loading it (with the same or no [`LoadOptions::quantize`]) reads
    /// the quantized weights as stored and gives the same bits as quantizing at load. The
    /// file is written to a temporary file in `out`'s folder and renamed into place; an
    /// error leaves nothing behind. Used by `pocket-tts-cli export-model`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`quantize`) for a source that is already pre-quantized,
    /// [`Error::Unsupported`] for `q4` with a linear whose input width is not a multiple of
    /// 32, [`Error::InvalidData`] for a source that is not a Pocket TTS safetensors
    /// checkpoint or holds non-finite weights, [`Error::CheckpointFormat`] for a source in
    /// a format this build does not know, and I/O errors naming the file.
    pub fn export_quantized(
        weights: &Path,
        quantize: Quantization,
        out: &Path,
    ) -> Result<crate::weights::prequantized::ExportSummary> {
        crate::weights::prequantized::export_quantized(weights, quantize, out)
    }

    /// `options` with the quantization of a pre-quantized checkpoint (`export-model`):
    /// taken when none was asked for, refused when another was.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`quantize`) when `options` asks for a quantization other
    /// than the checkpoint's; [`Error::CheckpointFormat`] for a format this build does not
    /// know.
    fn reconcile_quantization(weights: &Path, mut options: LoadOptions) -> Result<LoadOptions> {
        let stored = crate::weights::prequantized::stored_quantization(weights)?;
        match (options.quantize, stored) {
            (None, Some(q)) => {
                tracing::info!("{} is pre-quantized ({q})", weights.display());
                options.quantize = Some(q);
            }
            (Some(asked), Some(q)) if asked != q => {
                return Err(Error::InvalidArgument {
                    field: Some("quantize"),
                    message: format!(
                        "{} is quantized as {q}, not {asked}: load it with --quantize {q} (or \
                         without --quantize), or export a {asked} checkpoint",
                        weights.display()
                    ),
                })
            }
            _ => {}
        }
        Ok(options)
    }

    /// Loads the model from the bytes of a safetensors checkpoint and of a tokenizer file
    /// ([`super::TtsModelBuilder::from_bytes`]); the names name them in messages.
    ///
    /// # Errors
    /// As [`TtsModel::from_files`], but for missing files.
    pub(crate) fn from_bytes(
        config: Config,
        weights: Vec<u8>,
        weights_name: &str,
        tokenizer: &[u8],
        tokenizer_name: &str,
        options: LoadOptions,
    ) -> Result<Self> {
        let device = Device::Cpu;
        let lt = &config.flow_lm.lookup_table;
        let tokenizer = Tokenizer::from_bytes(
            tokenizer,
            Path::new(tokenizer_name),
            &lt.tokenizer,
            lt.n_bins,
        )?;
        let ckpt = Checkpoint::from_bytes(weights, weights_name)?;
        let vb = ckpt.var_builder(DType::F32, &device);
        let finish = || ckpt.finish(options.checked_prefixes());
        let context =
            |e: candle_core::Error| Error::InvalidData(format!("checkpoint {weights_name}: {e}"));
        let shapes = Some(ckpt.shape_var_builder(DType::F32, &device));
        Self::assemble(
            config, vb, shapes, tokenizer, device, options, finish, context,
        )
    }

    /// A model with the config's architecture and seeded random weights
    /// ([`crate::internals::weights::random_var_builder`]): for benchmarks and tests without the
    /// released weights. The tokenizer is still a real file.
    ///
    /// # Errors
    /// The tokenizer's errors, and [`Error::InvalidData`] if the config cannot be built.
    pub(crate) fn random(
        config: Config,
        seed: u64,
        tokenizer_path: &Path,
        options: LoadOptions,
    ) -> Result<Self> {
        let device = Device::Cpu;
        let lt = &config.flow_lm.lookup_table;
        let tokenizer = Tokenizer::from_file(tokenizer_path, &lt.tokenizer, lt.n_bins)?;
        let vb = crate::weights::random_var_builder(seed, &device);
        let context = |e: candle_core::Error| Error::InvalidData(format!("random model: {e}"));
        Self::assemble(
            config,
            vb,
            None,
            tokenizer,
            device,
            options,
            || Ok(()),
            context,
        )
    }

    /// Builds the model definition from `vb` (the checkpoint's root) and the default
    /// runtime ([`Backend::Cpu`]). Mimi comes first: the CPU runtime reads its decoder part
    /// by part into the repacked form, so that no whole Candle decoder ever exists and its
    /// transient copies are freed before the FlowLM's weights are read (peak memory). The
    /// Candle Mimi is built only if asked for ([`TtsModel::mimi`], the Candle backend).
    /// `shapes` (the checkpoint's names and shapes, no values) checks the parts read
    /// later (Mimi's encoder). `finish` reports the checkpoint's name and shape problems
    /// before any build error (`context` wraps the latter).
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        mut config: Config,
        vb: VarBuilder<'static>,
        shapes: Option<VarBuilder<'static>>,
        tokenizer: Tokenizer,
        device: Device,
        options: LoadOptions,
        finish: impl FnOnce() -> Result<()>,
        context: impl Fn(candle_core::Error) -> Error,
    ) -> Result<Self> {
        let text_options = config.text_options()?;
        if let Some(dtype) = options.flow_lm_dtype {
            config.flow_lm.dtype = dtype;
        }
        if config.mimi.dtype != WeightDtype::Float32 {
            // The reference reads only flow_lm.dtype (models/flow_lm.py); say so rather
            // than silently run a config that asks for something else.
            tracing::warn!(
                "mimi.dtype {} is ignored, as in the reference: the Mimi decoder's weights are \
                 {} (chosen by the load option mimi_dtype, the CLI's --mimi-dtype)",
                config.mimi.dtype,
                options.effective_mimi_dtype()
            );
        }
        let mimi_source = MimiSource::new(config.mimi.clone(), vb.pp("mimi"))
            .with_decoder_dtype(options.effective_mimi_dtype());
        let mimi_source = match shapes {
            Some(shapes) => mimi_source.with_shape_check(shapes.pp("mimi")),
            None => mimi_source,
        };
        // The CPU runtime reads Mimi's decoder straight into its repacked form, one part
        // at a time; the encoder's names and shapes are checked now and its values read on
        // the first voice prompt to encode. Errors wait for `finish`'s list of the
        // checkpoint's name and shape problems, which explains most of them.
        let prepared = if options.without_mimi {
            Ok(None)
        } else {
            runtime::prepare_cpu_mimi(&mimi_source).and_then(|p| {
                mimi_source
                    .check_encoder_shapes()
                    .map_err(&context)
                    .map(|()| Some(p))
            })
        };
        // The parts' Candle tensors are gone (only the repacked copies remain): their
        // pages go back to the system before the FlowLM's weights are read.
        crate::memory::release_freed_memory();
        let flow_lm = FlowLm::with_float_head(
            &config.flow_lm,
            config.latent_dim(),
            config.speaker_dim(),
            options.quantize,
            options.flow_lm_dtype.is_some(),
            vb.pp("flow_lm"),
        );
        // A weight that the 16-bit dtype cannot hold stopped the load: say so, rather than
        // listing the tensors left unread as unexpected.
        let flow_lm = match flow_lm.map_err(Error::from) {
            Ok(flow_lm) => Ok(flow_lm),
            Err(Error::Tensor(e)) => Err(e.into_candle()),
            // Ours (a weight out of the dtype's range): it names the tensor already.
            Err(ours) => return Err(ours),
        };
        finish()?;
        let prepared = prepared?;
        let flow_lm = flow_lm.map_err(&context)?;
        let mut model = Self {
            config,
            runtime: runtime::build(prepared, &flow_lm)?,
            flow_lm,
            mimi: OnceLock::new(),
            mimi_source,
            tokenizer,
            text_options,
            language: None,
            has_voice_cloning: true,
            download: false,
            device,
            threads: 1,
            options,
        };
        model.set_threads(super::default_threads())?;
        crate::memory::release_freed_memory();
        Ok(model)
    }
}
