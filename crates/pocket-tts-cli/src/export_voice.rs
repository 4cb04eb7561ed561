//! `export-voice`: encode voice prompts into .safetensors voice states
//! (reference: `main.py`, `export_voice`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;

use crate::model::{self, ModelArgs};
use crate::threads::ThreadsArgs;

/// Audio file extensions `export-voice` picks up in a folder.
const AUDIO_EXTENSIONS: &[&str] = &["wav", "mp3", "flac", "ogg"];

/// Arguments of `export-voice`.
#[derive(Args, Debug)]
pub struct ExportVoiceArgs {
    /// Audio file (or hf:// location) to encode, or a folder of audio files.
    pub audio_path: String,
    /// Output .safetensors file, or a folder when AUDIO_PATH is a folder.
    pub export_path: String,
    /// Only print errors.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// Checks a single-file export path before the model is loaded, so that the usual
/// mistakes fail at once with a message that says what to do.
fn check_export_file(export_path: &str) -> Result<()> {
    let path = Path::new(export_path);
    if path.is_dir() {
        bail!(
            "EXPORT_PATH {export_path}: is a folder; give a file name, e.g. {}",
            path.join("voice.safetensors").display()
        );
    }
    if !export_path.ends_with(".safetensors") {
        bail!(
            "EXPORT_PATH {export_path}: a voice state file should end with .safetensors, \
             e.g. voice.safetensors"
        );
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "EXPORT_PATH {export_path}: the folder {} does not exist; create it first or \
             choose another path",
            dir.display()
        );
    }
    Ok(())
}

/// Runs `export-voice`.
pub fn run(args: ExportVoiceArgs) -> Result<()> {
    let threads = args.threads.configure()?;
    let input = Path::new(&args.audio_path);
    let jobs: Vec<(String, PathBuf)> = if input.is_dir() {
        let out_dir = PathBuf::from(&args.export_path);
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("cannot create the output folder {}", out_dir.display()))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(input)
            .with_context(|| format!("cannot list {}", input.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| AUDIO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
            })
            .collect();
        files.sort();
        if files.is_empty() {
            bail!(
                "{} has no audio files ({})",
                input.display(),
                AUDIO_EXTENSIONS.join(", ")
            );
        }
        files
            .into_iter()
            .map(|p| {
                let stem = p
                    .file_stem()
                    .map(|s| s.to_string_lossy().to_string())
                    .unwrap_or_default();
                (
                    p.display().to_string(),
                    out_dir.join(format!("{stem}.safetensors")),
                )
            })
            .collect()
    } else {
        check_export_file(&args.export_path)?;
        vec![(args.audio_path.clone(), PathBuf::from(&args.export_path))]
    };

    let (mut model, load_s) = model::load(&args.model)?;
    model.set_threads(threads)?;
    tracing::info!("model loaded in {:.0} ms", load_s * 1000.0);
    for (audio, out) in jobs {
        let t0 = Instant::now();
        let state = model
            .voice_state(&audio, true)
            .with_context(|| format!("voice prompt {audio}"))?;
        state
            .save(&out)
            .with_context(|| format!("cannot write the voice state {}", out.display()))?;
        tracing::info!(
            "{audio} -> {} ({} positions) in {:.0} ms",
            out.display(),
            state.len(),
            t0.elapsed().as_secs_f64() * 1000.0
        );
    }
    Ok(())
}
