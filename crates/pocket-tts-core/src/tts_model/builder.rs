//! [`TtsModelBuilder`]: the one way to load a [`TtsModel`] (reference:
//! `TTSModel.load_model(language, config, quantize, …)`).

use std::path::{Path, PathBuf};

use super::loading::LoadOptions;
use super::TtsModel;
use crate::config::{Config, WeightDtype};
use crate::runtime::Backend;
use crate::Result;

/// Which model a [`TtsModelBuilder`] loads.
#[derive(Debug, Clone)]
enum Model {
    /// A built-in language config (`english`, `french`, …; see [`Config::builtin`]).
    Language(String),
    /// A config, with the folder its relative paths are resolved against.
    Config {
        config: Box<Config>,
        dir: Option<PathBuf>,
    },
}

/// Where the weights and tokenizer come from.
#[derive(Debug, Clone)]
enum Files {
    /// The ones the config names (`weights_path`, `flow_lm.lookup_table.tokenizer_path`).
    FromConfig,
    /// These local files, whatever the config names.
    Local {
        weights: PathBuf,
        tokenizer: PathBuf,
    },
    /// The bytes of a safetensors checkpoint and of a tokenizer file (the WebAssembly
    /// build, which has no files), with the names messages give them.
    Bytes {
        weights: Vec<u8>,
        weights_name: String,
        tokenizer: Vec<u8>,
        tokenizer_name: String,
    },
    /// Seeded random weights with the config's architecture (tests and benchmarks
    /// without the released weights) and this tokenizer.
    Random { seed: u64, tokenizer: PathBuf },
}

/// Loads a [`TtsModel`]: which model (a built-in language or a config), where its files
/// are, and how to run it. Nothing is downloaded unless [`Self::download`] allows it.
///
/// ```no_run
/// use pocket_tts_core::{Backend, TtsModel};
/// # fn main() -> pocket_tts_core::Result<()> {
/// let model = TtsModel::builder()
///     .language("english")
///     .download(true) // the weights and tokenizer from the Hugging Face hub
///     .quantize(true)
///     .backend(Backend::Cpu)
///     .threads(2)
///     .load()?;
/// # let _ = model;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `load` is called"]
pub struct TtsModelBuilder {
    model: Model,
    files: Files,
    options: LoadOptions,
    backend: Backend,
    threads: Option<usize>,
    download: bool,
}

impl Default for TtsModelBuilder {
    fn default() -> Self {
        Self {
            model: Model::Language("english".into()),
            files: Files::FromConfig,
            options: LoadOptions::default(),
            backend: Backend::default(),
            threads: None,
            download: false,
        }
    }
}

impl TtsModel {
    /// A [`TtsModelBuilder`]: the English model (the reference's default) on the CPU
    /// runtime, float weights, [`super::default_threads`] threads, no downloads.
    pub fn builder() -> TtsModelBuilder {
        TtsModelBuilder::default()
    }
}

impl TtsModelBuilder {
    /// A built-in language's model (`english`, `french`, `german`, …;
    /// [`Config::builtin`]): its config, its files on the hub, its predefined voices.
    pub fn language(mut self, language: impl Into<String>) -> Self {
        self.model = Model::Language(language.into());
        self
    }

    /// A model described by `config`; relative paths in it are resolved against `dir`
    /// (the config file's folder), then the working directory. Predefined voices need a
    /// built-in language ([`Self::language`]).
    pub fn config(mut self, config: Config, dir: Option<&Path>) -> Self {
        self.model = Model::Config {
            config: Box::new(config),
            dir: dir.map(Path::to_path_buf),
        };
        self
    }

    /// Reads the checkpoint and tokenizer from these local files instead of the ones the
    /// config names.
    pub fn files(mut self, weights: impl Into<PathBuf>, tokenizer: impl Into<PathBuf>) -> Self {
        self.files = Files::Local {
            weights: weights.into(),
            tokenizer: tokenizer.into(),
        };
        self
    }

    /// Reads the checkpoint and tokenizer from these bytes (the contents of a safetensors
    /// file and of a tokenizer file) instead of files: for the WebAssembly build, which has
    /// no files. `weights_name` and `tokenizer_name` (e.g. the files' names) name them in
    /// messages; the tokenizer name's suffix chooses its kind as a path's would
    /// (`.model`: SentencePiece, `.json`: `tokenizer.json`; see
    /// [`Tokenizer::from_file`](pocket_tts_text::tokenizer::Tokenizer::from_file)). The
    /// checkpoint's bytes stay in memory while the model lives (Mimi's encoder is read from
    /// them on the first voice prompt).
    pub fn from_bytes(
        mut self,
        weights: Vec<u8>,
        weights_name: impl Into<String>,
        tokenizer: Vec<u8>,
        tokenizer_name: impl Into<String>,
    ) -> Self {
        self.files = Files::Bytes {
            weights,
            weights_name: weights_name.into(),
            tokenizer,
            tokenizer_name: tokenizer_name.into(),
        };
        self
    }

    /// Seeded random weights with the config's architecture instead of a checkpoint (for
    /// tests and benchmarks without the released weights); `tokenizer` is still a real
    /// file.
    pub fn random_weights(mut self, seed: u64, tokenizer: impl Into<PathBuf>) -> Self {
        self.files = Files::Random {
            seed,
            tokenizer: tokenizer.into(),
        };
        self
    }

    /// Allows downloading `hf://` files (the weights, the tokenizer, later predefined voices)
    /// that are not in the local hub cache yet. Off by default: only local files and the
    /// cache are read.
    pub fn download(mut self, download: bool) -> Self {
        self.download = download;
        self
    }

    /// Which runtime executes the model ([`Backend::Cpu`] by default).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// Int8 FlowLM linears (reference: `quantize=True`) or float (`false`); see
    /// [`LoadOptions::quantize`].
    pub fn quantize(mut self, quantize: bool) -> Self {
        self.options = self.options.with_quantize(quantize);
        self
    }

    /// Int8 or 4-bit FlowLM linears, or float (`None`); see [`LoadOptions::quantize`].
    pub fn quantization(mut self, quantize: Option<super::Quantization>) -> Self {
        self.options.quantize = quantize;
        self
    }

    /// The FlowLM's weight dtype, replacing the config's `flow_lm.dtype`; see
    /// [`LoadOptions::flow_lm_dtype`].
    pub fn dtype(mut self, dtype: WeightDtype) -> Self {
        self.options.flow_lm_dtype = Some(dtype);
        self
    }

    /// How the CPU runtime's Mimi decoder stores its weights (`float32` by default,
    /// `float16` with [`Self::quantize`]; see [`LoadOptions::mimi_dtype`]).
    pub fn mimi_dtype(mut self, dtype: WeightDtype) -> Self {
        self.options.mimi_dtype = Some(dtype);
        self
    }

    /// Loads no part of Mimi (`true`); see [`LoadOptions::without_mimi`].
    pub fn without_mimi(mut self, without_mimi: bool) -> Self {
        self.options.without_mimi = without_mimi;
        self
    }

    /// Generation threads ([`TtsModel::set_threads`]); [`super::default_threads`] unless
    /// set.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Loads the model.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for an unknown language or 0 threads (`field`
    /// `"threads"`); [`crate::Error::NotFound`] for a missing file, or an `hf://` file not in
    /// the cache without [`Self::download`]; [`crate::Error::InvalidData`] for a checkpoint
    /// or tokenizer that does not fit the config; [`crate::Error::WeightOutOfRange`] for a
    /// weight `float16` cannot hold.
    pub fn load(self) -> Result<TtsModel> {
        let (config, dir, language) = match self.model {
            Model::Language(language) => (Config::builtin(&language)?, None, Some(language)),
            Model::Config { config, dir } => (*config, dir, None),
        };
        let mut model = match self.files {
            Files::FromConfig => {
                TtsModel::load_resolved(config, dir.as_deref(), self.options, self.download)?
            }
            Files::Local { weights, tokenizer } => {
                TtsModel::from_files(config, &weights, &tokenizer, self.options)?
            }
            Files::Bytes {
                weights,
                weights_name,
                tokenizer,
                tokenizer_name,
            } => TtsModel::from_bytes(
                config,
                weights,
                &weights_name,
                &tokenizer,
                &tokenizer_name,
                self.options,
            )?,
            Files::Random { seed, tokenizer } => {
                TtsModel::random(config, seed, &tokenizer, self.options)?
            }
        };
        model.language = language;
        model.download = self.download;
        model.set_backend(self.backend)?;
        if let Some(threads) = self.threads {
            model.set_threads(threads)?;
        }
        Ok(model)
    }
}
