//! Loading the model from `--language` / `--config`, shared by the commands.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::config::Config;
use pocket_tts_core::hub;
use pocket_tts_core::models::tts_model::TtsModel;
use pocket_tts_core::Error as CoreError;

/// Model selection flags.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Language of a built-in model (english, french, german, portuguese, italian,
    /// spanish, dutch, and the dated/24l variants of the reference). Incompatible with
    /// --config. Default: english.
    #[arg(long)]
    pub language: Option<String>,
    /// Model config .yaml: a local path or hf://org/repo/path.yaml[@revision].
    /// Relative paths inside it are resolved against its folder. Incompatible with --language.
    #[arg(long)]
    pub config: Option<String>,
}

/// Loads the model and reports how long it took.
pub fn load(args: &ModelArgs) -> Result<(TtsModel, f64)> {
    let t0 = Instant::now();
    let (config, dir, language) = match (&args.config, &args.language) {
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
            let dir = path.parent().map(Path::to_path_buf);
            (config, dir, None)
        }
        (None, lang) => {
            let lang = lang.clone().unwrap_or_else(|| "english".to_string());
            (Config::builtin(&lang)?, None, Some(lang))
        }
    };
    let model = TtsModel::load(config, dir.as_deref(), language).map_err(|e| {
        let context = match (&e, &args.config) {
            (CoreError::NotFound(_), Some(spec)) => format!(
                "--config {spec}: a file it names is missing (check weights_path and \
                 flow_lm.lookup_table.tokenizer_path; relative paths are resolved against \
                 the config's folder)"
            ),
            (_, Some(spec)) => format!("--config {spec}: cannot load the model"),
            (_, None) => "cannot load the model".to_string(),
        };
        anyhow::Error::new(e).context(context)
    })?;
    Ok((model, t0.elapsed().as_secs_f64()))
}
