//! Loading the model from `--language` / `--config`, shared by the commands.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use pocket_tts_core::config::{Config, WeightDtype};
use pocket_tts_core::hub;
use pocket_tts_core::tts_model::TtsModel;
use pocket_tts_core::{Backend, Error as CoreError, Quantization};

/// Model selection flags.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Language of a built-in model (english, french, german, portuguese, italian,
    /// spanish, dutch, and the dated/24l variants of the reference). Incompatible with
    /// --config. Default: english.
    #[arg(long)]
    pub language: Option<String>,
    /// Model config .yaml: a local path or hf://org/repo/path.yaml (optionally @revision).
    /// Relative paths inside it are resolved against its folder. Incompatible with --language.
    #[arg(long)]
    pub config: Option<String>,
    /// What runs the model: `cpu`, the allocation-free CPU runtime (fast), or `candle`, the
    /// Candle modules tensor by tensor (the reference implementation inside pocket-tts-rs;
    /// slower, for checking and debugging).
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    /// Quantize the FlowLM transformer's attention and feed-forward weights: `int8` (the
    /// bare flag, as the reference's --quantize: one scale per output channel, speech very
    /// close to the float model's) or `q4` (4-bit blocks of 32 with a scale each: half of
    /// int8's memory, further from the float speech). Less memory and faster steps. The
    /// flow head is then stored in f16 with int8 (computed in f32; the reference keeps it
    /// in f32, as --dtype f32 does) and in 4-bit blocks with q4 (under 100 MB with a voice
    /// state). A checkpoint
    /// written by `export-model` is already quantized: it needs no flag (or the same one).
    #[arg(
        long,
        value_enum,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "int8",
        value_name = "MODE"
    )]
    pub quantize: Option<QuantizeArg>,
    /// How the FlowLM's weights are stored: `f32`, or `f16` / `bf16` (16 bits: half the
    /// memory, faster steps; computed in f32). With --quantize int8, the flow head takes
    /// this dtype when it is given, else f16 (--quantize --dtype f32 keeps the reference's
    /// f32 head: 19 MB more, 0.1 dB closer to the float speech). Mimi: see --mimi-dtype.
    /// Default: the config's
    /// flow_lm.dtype (float32 for every built-in model).
    #[arg(long, value_enum)]
    pub dtype: Option<DtypeArg>,
    /// How the Mimi decoder stores its weights: `f32` (the reference's), or `f16` / `bf16`
    /// (16 bits: half the decoder's ~40 MB, every product still computed in f32; f16 keeps
    /// the audio at ~63 dB SNR against f32 with a faster frame, bf16 ~56 dB). The voice
    /// encoder stays f32. Default: f16 with --quantize, f32 (the reference's) without.
    #[arg(long, value_enum, value_name = "DTYPE")]
    pub mimi_dtype: Option<DtypeArg>,
}

/// The command line with `--quantize MODE` joined into `--quantize=MODE` when the next
/// word is a mode (`int8`, `q4`, any case), and a bare `--quantize` made `--quantize=int8`
/// otherwise: the flag takes an optional value, yet a word after a bare `--quantize` stays
/// what it was (`export-voice --quantize AUDIO OUT`, the reference's form). Words after
/// `--` are left alone.
pub fn quantize_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        if a != "--quantize" {
            out.push(a);
            continue;
        }
        let mode = it
            .peek()
            .and_then(|n| n.to_str())
            .filter(|n| <QuantizeArg as ValueEnum>::from_str(n, true).is_ok())
            .map(str::to_string);
        match mode {
            Some(m) => {
                it.next();
                out.push(format!("--quantize={m}").into());
            }
            None => out.push("--quantize=int8".into()),
        }
    }
    out
}

/// `--quantize` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantizeArg {
    /// Int8 per output channel (the reference's `--quantize`).
    Int8,
    /// 4-bit blocks of 32 weights with a bf16 scale each.
    Q4,
}

impl From<QuantizeArg> for Quantization {
    fn from(q: QuantizeArg) -> Self {
        match q {
            QuantizeArg::Int8 => Quantization::Int8,
            QuantizeArg::Q4 => Quantization::Q4,
        }
    }
}

/// `--dtype` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DtypeArg {
    /// 32-bit floats (the config's `float32`).
    F32,
    /// IEEE half precision (`float16`).
    F16,
    /// bfloat16 (`bfloat16`).
    Bf16,
}

impl From<DtypeArg> for WeightDtype {
    fn from(d: DtypeArg) -> Self {
        match d {
            DtypeArg::F32 => WeightDtype::Float32,
            DtypeArg::F16 => WeightDtype::Float16,
            DtypeArg::Bf16 => WeightDtype::Bfloat16,
        }
    }
}

/// The `--dtype` spelling of a config weight dtype (for `--stats-json`).
pub fn dtype_name(d: WeightDtype) -> &'static str {
    match d {
        WeightDtype::Float32 => "f32",
        WeightDtype::Float16 => "f16",
        WeightDtype::Bfloat16 => "bf16",
    }
}

/// `--backend` values.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendArg {
    /// The allocation-free CPU runtime.
    Cpu,
    /// The Candle modules.
    Candle,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Cpu => Backend::Cpu,
            BackendArg::Candle => Backend::Candle,
        }
    }
}

/// A model config chosen by `--language` / `--config`, read but not yet loaded.
pub struct ModelChoice {
    /// The parsed config.
    pub config: Config,
    /// The config file's folder (relative paths inside it are resolved against it).
    pub dir: Option<PathBuf>,
    /// The config file itself (`--config`), once resolved.
    pub file: Option<PathBuf>,
    /// The built-in language, without `--config`.
    pub language: Option<String>,
    /// `--config` as given.
    spec: Option<String>,
    /// `--backend`.
    backend: Backend,
    /// `--quantize`.
    quantize: Option<Quantization>,
    /// `--dtype`.
    dtype: Option<DtypeArg>,
    /// `--mimi-dtype`.
    mimi_dtype: Option<DtypeArg>,
}

/// Reads the config `--language` / `--config` name, without loading the model.
pub fn choose(args: &ModelArgs) -> Result<ModelChoice> {
    match (&args.config, &args.language) {
        (Some(_), Some(_)) => bail!(
            "--config and --language are incompatible: choose one (a config picks its own language)"
        ),
        (Some(spec), None) => {
            let stem = spec.split('@').next().unwrap_or(spec);
            if !(stem.ends_with(".yaml") || stem.ends_with(".yml")) {
                bail!("--config {spec}: the config should be a YAML file ending with .yaml");
            }
            let path = hub::resolve(spec, None).with_context(|| format!("--config {spec}"))?;
            let config = Config::from_yaml_file(&path).map_err(|e| {
                let context = match &e {
                    CoreError::Io { source, .. }
                        if source.kind() == std::io::ErrorKind::InvalidData =>
                    {
                        format!(
                            "--config {spec}: not a text file; give a Pocket TTS config in YAML"
                        )
                    }
                    CoreError::InvalidData(_) => {
                        format!("--config {spec}: not a valid Pocket TTS config")
                    }
                    _ => format!("--config {spec}"),
                };
                anyhow::Error::new(e).context(context)
            })?;
            Ok(ModelChoice {
                config,
                dir: path.parent().map(Path::to_path_buf),
                file: Some(path),
                language: None,
                spec: Some(spec.clone()),
                backend: args.backend.into(),
                quantize: args.quantize.map(Into::into),
                dtype: args.dtype,
                mimi_dtype: args.mimi_dtype,
            })
        }
        (None, lang) => {
            let lang = lang.clone().unwrap_or_else(|| "english".to_string());
            Ok(ModelChoice {
                config: Config::builtin(&lang).with_context(|| format!("--language {lang}"))?,
                dir: None,
                file: None,
                language: Some(lang),
                spec: None,
                backend: args.backend.into(),
                quantize: args.quantize.map(Into::into),
                dtype: args.dtype,
                mimi_dtype: args.mimi_dtype,
            })
        }
    }
}

impl ModelChoice {
    /// The files the model will read that are already on this machine (local paths, or
    /// hub files in the local cache), each with the flag or config field that names it.
    pub fn input_files(&self) -> Vec<(String, PathBuf)> {
        let mut inputs = Vec::new();
        if let Some(file) = &self.file {
            inputs.push(("--config".to_string(), file.clone()));
        }
        let origin = match &self.spec {
            Some(spec) => format!("config {spec}"),
            None => format!(
                "the {} model",
                self.language.as_deref().unwrap_or("built-in")
            ),
        };
        let c = &self.config;
        let fields = [
            ("weights_path", c.weights_path.as_deref()),
            (
                "weights_path_without_voice_cloning",
                c.weights_path_without_voice_cloning.as_deref(),
            ),
            (
                "flow_lm.lookup_table.tokenizer_path",
                Some(c.flow_lm.lookup_table.tokenizer_path.as_str()),
            ),
        ];
        for (field, spec) in fields {
            if let Some(path) = spec.and_then(|s| hub::resolve_cached(s, self.dir.as_deref())) {
                inputs.push((format!("the {field} of {origin}"), path));
            }
        }
        inputs
    }

    /// Loads the model and reports how long it took (seconds), `t0` being when the
    /// command started choosing it.
    pub fn load(self, t0: Instant) -> Result<(TtsModel, f64)> {
        let dtype_flag = self.dtype;
        // The CLI downloads what it needs (the default model, predefined voices).
        let mut builder = match self.language {
            Some(language) => TtsModel::builder().language(language),
            None => TtsModel::builder().config(self.config, self.dir.as_deref()),
        }
        .download(true)
        .quantization(self.quantize);
        if let Some(dtype) = self.dtype {
            builder = builder.dtype(dtype.into());
        }
        if let Some(dtype) = self.mimi_dtype {
            builder = builder.mimi_dtype(dtype.into());
        }
        let mimi_f16 = self.mimi_dtype == Some(DtypeArg::F16);
        let model = builder.load().map_err(|e| {
            let context = match (&e, &self.spec) {
                (CoreError::NotFound(_), Some(spec)) => format!(
                    "--config {spec}: a file it names is missing (check weights_path and \
                         flow_lm.lookup_table.tokenizer_path; relative paths are resolved against \
                         the config's folder)"
                ),
                (_, Some(spec)) => format!("--config {spec}: cannot load the model"),
                (_, None) => "cannot load the model".to_string(),
            };
            // A weight the 16-bit dtype cannot hold: name the flag that chose it.
            let context = if dtype_flag == Some(DtypeArg::F16)
                && matches!(e, CoreError::WeightOutOfRange { .. })
            {
                format!("{context} with --dtype f16 (try --dtype bf16)")
            } else if mimi_f16
                && matches!(&e, CoreError::WeightOutOfRange { tensor, .. } if tensor.starts_with("mimi."))
            {
                format!("{context} with --mimi-dtype f16 (try --mimi-dtype bf16)")
            } else {
                context
            };
            anyhow::Error::new(e).context(context)
        })?;
        let model = model
            .with_backend(self.backend)
            .with_context(|| format!("--backend {}", self.backend))?;
        Ok((model, t0.elapsed().as_secs_f64()))
    }
}

#[cfg(test)]
mod tests {
    use super::quantize_args;

    fn run(args: &[&str]) -> Vec<String> {
        quantize_args(args.iter().map(|a| a.into()))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn quantize_takes_a_mode_only_when_one_follows() {
        assert_eq!(
            run(&["x", "generate", "--quantize", "q4", "--text", "hi"]),
            ["x", "generate", "--quantize=q4", "--text", "hi"]
        );
        assert_eq!(run(&["x", "--quantize", "INT8"]), ["x", "--quantize=INT8"]);
        assert_eq!(
            run(&["x", "export-voice", "--quantize", "a.wav", "o.safetensors"]),
            [
                "x",
                "export-voice",
                "--quantize=int8",
                "a.wav",
                "o.safetensors"
            ]
        );
        assert_eq!(run(&["x", "--quantize"]), ["x", "--quantize=int8"]);
        assert_eq!(
            run(&["x", "--quantize=q4", "--", "--quantize"]),
            ["x", "--quantize=q4", "--", "--quantize"]
        );
    }
}
