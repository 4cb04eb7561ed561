//! `generate`: text in, audio out (reference: `main.py`, `generate`, which writes WAV;
//! ours also MP3, Ogg Opus, AAC and FLAC, by `--format` or the file's extension, and
//! `--speed`).

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::audio::{WavFile, WavWriter};
use pocket_tts_core::output::OutputFile;

use crate::audio_out::{Encoded, FileFormat, SpeedArgs};
use crate::outputs::{self, Named};
use crate::speech::{Sink, SpeechArgs};
use crate::stats;

/// Flags of `generate` (the reference's, plus `--seed`, `--threads` and `--stats-json`).
#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(flatten)]
    pub speech: SpeechArgs,
    /// Output path, or `-` for stdout (streamed as it is generated). Its extension picks
    /// the format: .mp3, .opus or .ogg (Ogg Opus), .aac (ADTS), .flac; any other is WAV.
    /// An existing regular file is replaced only once the audio is complete; a device or
    /// FIFO is written in place.
    #[arg(long, default_value = "./tts_output.wav")]
    pub output_path: String,
    /// Output format, whatever the extension (default: by the extension; WAV on stdout).
    #[arg(long, value_enum)]
    pub format: Option<FileFormat>,
    #[command(flatten)]
    pub speed: SpeedArgs,
}

enum Output {
    File(WavFile),
    Stdout(WavWriter<io::StdoutLock<'static>>),
    EncodedFile(Encoded<io::BufWriter<OutputFile>>),
    EncodedStdout(Encoded<io::StdoutLock<'static>>),
}

impl Output {
    fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        match self {
            Output::File(f) => f.write_samples(samples).map_err(io::Error::other),
            Output::Stdout(w) => w.write_samples(samples),
            Output::EncodedFile(e) => e.write(samples),
            Output::EncodedStdout(e) => e.write(samples),
        }
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
            Output::EncodedFile(e) => {
                let file = e
                    .finish()
                    .and_then(|w| w.into_inner().map_err(io::IntoInnerError::into_error));
                let file = file.context("--output-path: cannot write the audio")?;
                let path = file.path().display().to_string();
                file.finish()
                    .with_context(|| format!("--output-path {path}: cannot write the audio"))?
            }
            Output::EncodedStdout(e) => {
                drop(e.finish().context("writing to stdout")?);
            }
        }
        Ok(())
    }
}

/// Opens the output file before any work (see `pocket_tts_core::output` for where the
/// bytes go), refusing a terminal.
fn open_output_file(path: &str) -> Result<OutputFile> {
    let out = OutputFile::create(Path::new(path))
        .with_context(|| format!("--output-path {path:?}: cannot write there"))?;
    if out.is_terminal() {
        bail!(
            "--output-path {path}: is a terminal; write the WAV to a file or pipe it to a \
             player (e.g. `--output-path - | aplay`)"
        );
    }
    Ok(out)
}

/// Runs `generate`.
pub fn run(args: GenerateArgs) -> Result<()> {
    let to_stdout = args.output_path == "-";
    if to_stdout && io::stdout().is_terminal() {
        bail!(
            "--output-path -: stdout is a terminal; pipe the audio to a player or a file \
             (e.g. `| aplay`, `> speech.wav`) or give a file name"
        );
    }
    // Check the flags, the text and the config before the (slower) model load.
    args.speed.check()?;
    let format = FileFormat::choose(args.format, &args.output_path);
    format.check_built(if args.format.is_some() {
        "--format"
    } else {
        "--output-path"
    })?;
    let plan = args.speech.plan()?;
    let mut outputs = vec![if to_stdout {
        outputs::stdout()
    } else {
        Named::new("--output-path", &args.output_path)
    }];
    outputs.extend(args.speech.stats_output());
    outputs::check_distinct(&outputs, &plan.inputs())?;
    // Open the outputs first: an unwritable path fails before any work, and a file is only
    // moved into place once complete. Stdout gets its header only once the voice and text
    // are ready, so a failing run writes nothing there.
    let file = if to_stdout {
        None
    } else {
        Some(open_output_file(&args.output_path)?)
    };
    let stats_out = crate::stats::open_if_asked(args.speech.stats_json.as_deref())?;
    let mut session = args.speech.load(plan)?;

    let rate = 24000;
    let mut output = match (file, format.codec()) {
        (Some(f), None) => Output::File(
            WavFile::from_output(f, rate)
                .with_context(|| format!("--output-path {}", args.output_path))?,
        ),
        (None, None) => Output::Stdout(
            WavWriter::new_streaming(io::stdout().lock(), rate)
                .context("writing the WAV header to stdout")?,
        ),
        (Some(f), Some(codec)) => {
            Output::EncodedFile(Encoded::new(codec, rate, io::BufWriter::new(f))?)
        }
        (None, Some(codec)) => {
            Output::EncodedStdout(Encoded::new(codec, rate, io::stdout().lock())?)
        }
    };
    let mut stretch = args.speed.stretcher(rate)?;
    let run = session.run_last(args.speech.quiet, |samples| {
        match output.write(&stretch.process(samples)) {
            Ok(()) => Ok(Sink::Continue),
            // The reader went away (`| head`): stop quietly, as `stream` does.
            Err(e) if to_stdout && e.kind() == io::ErrorKind::BrokenPipe => {
                tracing::info!("stdout was closed: generation stopped");
                Ok(Sink::Stop)
            }
            Err(e) if to_stdout => Err(e).context("writing the WAV to stdout"),
            Err(e) => Err(e).with_context(|| {
                format!("--output-path {}: cannot write the WAV", args.output_path)
            }),
        }
    })?;
    if run.complete {
        let tail = stretch.finish();
        match output
            .write(&tail)
            .map_err(anyhow::Error::from)
            .and_then(|()| output.finish())
        {
            Err(e)
                if to_stdout
                    && e.downcast_ref::<io::Error>()
                        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) => {}
            r => r?,
        }
    }
    session.log_run(&run);
    if let Some(out) = stats_out {
        stats::write(out, &stats::report(&session, &[run], false))?;
    }
    if !to_stdout {
        tracing::info!("results written in {}", args.output_path);
    }
    Ok(())
}
