//! `generate`: text in, WAV out (reference: `main.py`, `generate`).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::audio::{AtomicWavFile, WavWriter};

use crate::speech::{Sink, SpeechArgs};
use crate::stats;

/// Flags of `generate` (the reference's, plus `--seed`, `--threads` and `--stats-json`).
#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub speech: SpeechArgs,
    /// Output WAV path, or `-` for stdout (streamed as it is generated).
    #[arg(long, default_value = "./tts_output.wav")]
    pub output_path: String,
}

enum Output {
    File(AtomicWavFile),
    Stdout(WavWriter<std::io::StdoutLock<'static>>),
}

impl Output {
    fn write(&mut self, samples: &[f32]) -> Result<()> {
        match self {
            Output::File(f) => {
                let path = f.path().display().to_string();
                f.write_samples(samples)
                    .with_context(|| format!("--output-path {path}: cannot write the WAV"))?
            }
            Output::Stdout(w) => w.write_samples(samples).context("writing to stdout")?,
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        match self {
            Output::File(f) => {
                let path = f.path().display().to_string();
                f.finish()
                    .with_context(|| format!("--output-path {path}: cannot write the WAV"))?
            }
            Output::Stdout(w) => {
                let mut out = w.finalize().context("writing to stdout")?;
                out.flush().context("writing to stdout")?;
            }
        }
        Ok(())
    }
}

/// Opens the output WAV file after checking the path, so that the usual mistakes get a
/// message that says what to do. Nothing appears at `path` until the WAV is complete.
fn open_output_file(path: &str) -> Result<AtomicWavFile> {
    let p = Path::new(path);
    if p.is_dir() {
        bail!(
            "--output-path {path}: is a folder; give a file name, e.g. {}",
            p.join("tts_output.wav").display()
        );
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "--output-path {path}: the folder {} does not exist; create it first or choose \
             another path",
            dir.display()
        );
    }
    AtomicWavFile::create(p, 24000).with_context(|| {
        format!("--output-path {path}: cannot create the file (is the folder writable?)")
    })
}

/// Runs `generate`.
pub fn run(args: GenerateArgs) -> Result<()> {
    // Check the flags before the (slower) model load.
    let plan = args.speech.plan()?;
    // Open an output file first: an unwritable path fails before any work, and the file
    // is only moved into place once complete. Stdout gets its header only once the voice
    // and text are ready, so a failing run writes nothing there.
    let mut file = if args.output_path == "-" {
        None
    } else {
        Some(open_output_file(&args.output_path)?)
    };
    let session = args.speech.load(plan)?;

    let mut output = match file.take() {
        Some(f) => Output::File(f),
        None => Output::Stdout(
            WavWriter::new_streaming(std::io::stdout().lock(), 24000)
                .context("writing the WAV header to stdout")?,
        ),
    };
    let run = session.run(args.speech.quiet, |samples| {
        output.write(samples)?;
        Ok(Sink::Continue)
    })?;
    output.finish()?;
    session.log_run(&run);
    if let Some(path) = &args.speech.stats_json {
        stats::write(path, &stats::report(&session, &[run], false))?;
    }
    if args.output_path != "-" {
        tracing::info!("results written in {}", args.output_path);
    }
    Ok(())
}
