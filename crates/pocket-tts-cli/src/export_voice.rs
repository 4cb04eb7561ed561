//! `export-voice`: encode voice prompts into .safetensors voice states
//! (reference: `main.py`, `export_voice`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::output::OutputFile;
use pocket_tts_core::tts_model::TtsModel;

use crate::model::{self, ModelArgs};
use crate::outputs::{self, Named};
use crate::threads::ThreadsArgs;

/// Audio file extensions `export-voice` picks up in a folder.
const AUDIO_EXTENSIONS: &[&str] = &["wav", "mp3", "flac", "ogg"];

/// Arguments of `export-voice`.
#[derive(Args, Debug)]
pub struct ExportVoiceArgs {
    /// Audio file (or hf:// location) to encode, or a folder of audio files.
    pub audio_path: String,
    /// Output .safetensors file, or a folder when AUDIO_PATH is a folder (one
    /// NAME.safetensors per audio file NAME.*). An existing file is replaced only once the
    /// new one is complete.
    pub export_path: String,
    /// Only print errors.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// One voice to encode: the audio (as given) and where its state goes.
struct Job {
    audio: String,
    out: PathBuf,
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
            "EXPORT_PATH {export_path:?}: a voice state file should end with .safetensors, \
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

/// The jobs for a folder of audio files: every audio file in it (sorted), each to
/// `export_dir/STEM.safetensors`.
fn folder_jobs(input: &Path, export_dir: &str) -> Result<Vec<Job>> {
    let out_dir = Path::new(export_dir);
    if export_dir.ends_with(".safetensors") || out_dir.is_file() {
        bail!(
            "EXPORT_PATH {export_dir}: AUDIO_PATH {} is a folder, so EXPORT_PATH must be a \
             folder to write one voice state per audio file into (e.g. voices/)",
            input.display()
        );
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(input)
        .with_context(|| format!("AUDIO_PATH {}: cannot list the folder", input.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| AUDIO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "AUDIO_PATH {}: the folder has no audio files ({}); nothing was written",
            input.display(),
            AUDIO_EXTENSIONS.join(", ")
        );
    }
    let mut jobs: Vec<Job> = Vec::with_capacity(files.len());
    for p in files {
        let stem = p
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let out = out_dir.join(format!("{stem}.safetensors"));
        if let Some(other) = jobs.iter().find(|j| j.out == out) {
            bail!(
                "AUDIO_PATH {}: {} and {} would both be written to {}; rename one of them",
                input.display(),
                other.audio,
                p.display(),
                out.display()
            );
        }
        jobs.push(Job {
            audio: p.display().to_string(),
            out,
        });
    }
    Ok(jobs)
}

/// Encodes one voice and writes its state; `make_folder` creates the state's folder first
/// (folder mode: the output folder is made once a voice is ready).
fn export_one(model: &TtsModel, job: &Job, make_folder: bool) -> Result<()> {
    let t0 = Instant::now();
    let state = model
        .voice_state(&job.audio, true)
        .with_context(|| format!("voice prompt {}", job.audio))?;
    let bytes = state.to_safetensors_bytes()?;
    if let Some(dir) = job
        .out
        .parent()
        .filter(|d| make_folder && !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
    }
    let shown = job.out.display();
    let mut out = OutputFile::create(&job.out)
        .with_context(|| format!("cannot write the voice state {shown}"))?;
    out.write_all(&bytes)
        .with_context(|| format!("cannot write the voice state {shown}"))?;
    out.finish()
        .with_context(|| format!("cannot write the voice state {shown}"))?;
    tracing::info!(
        "{} -> {shown} ({} positions) in {:.0} ms",
        job.audio,
        state.len(),
        t0.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}

/// Runs `export-voice`.
pub fn run(args: ExportVoiceArgs) -> Result<()> {
    let started = Instant::now();
    let threads = args.threads.configure()?;
    let input = Path::new(&args.audio_path);
    let folder = input.is_dir();
    let jobs = if folder {
        folder_jobs(input, &args.export_path)?
    } else {
        check_export_file(&args.export_path)?;
        vec![Job {
            audio: args.audio_path.clone(),
            out: PathBuf::from(&args.export_path),
        }]
    };
    let choice = model::choose(&args.model)?;
    let mut inputs: Vec<Named> = choice
        .input_files()
        .into_iter()
        .map(|(what, path)| Named::new(what, path))
        .collect();
    for job in &jobs {
        if let Some(path) = pocket_tts_core::hub::resolve_cached(&job.audio, None) {
            inputs.push(Named::new("AUDIO_PATH", path));
        }
    }
    let outs: Vec<Named> = jobs
        .iter()
        .map(|j| Named::new("EXPORT_PATH", &j.out))
        .collect();
    outputs::check_distinct(&outs, &inputs)?;

    let (mut model, load_s) = choice.load(started)?;
    model.set_threads(threads)?;
    tracing::info!("model loaded in {:.0} ms", load_s * 1000.0);
    if !folder {
        return export_one(&model, &jobs[0], false);
    }
    let mut failed = Vec::new();
    for job in &jobs {
        if let Err(e) = export_one(&model, job, true) {
            tracing::error!("{}: {e:#}", job.audio);
            failed.push(job.audio.as_str());
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} voice prompts could not be exported: {}",
            failed.len(),
            jobs.len(),
            failed.join(", ")
        );
    }
    Ok(())
}
