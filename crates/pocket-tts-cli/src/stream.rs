//! `stream`: text in, audio on stdout as it is generated; `--measure-first-chunk` measures
//! the time to first audio.

use std::io::{self, IsTerminal, Write};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use pocket_tts_audio::{Codec, TimeStretch};
use pocket_tts_core::audio::WavWriter;

use crate::audio_out::{Encoded, SpeedArgs};
use crate::outputs;
use crate::speech::{RunResult, Session, Sink, SpeechArgs};
use crate::stats;

/// Audio formats of `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// WAV, mono 16-bit PCM, with the header of an unseekable stream (the reference's: it
    /// claims 1e9 frames and is never patched) and 200 ms of silence at the end.
    Wav,
    /// Raw mono 16-bit little-endian PCM at 24 kHz, converted like the WAV's; no header, no
    /// trailing silence.
    PcmS16le,
    /// Raw mono 32-bit float little-endian PCM at 24 kHz, the model's samples unchanged; no
    /// header, no trailing silence.
    PcmF32le,
    /// MP3 (LAME, 64 kbit/s, mono), written frame by frame.
    Mp3,
    /// Ogg Opus (libopus, 32 kbit/s), a page per 80 ms.
    Opus,
    /// AAC-LC in ADTS frames (FDK AAC, 64 kbit/s).
    Aac,
    /// FLAC, 16-bit mono: written whole at the end (its header holds the length).
    Flac,
}

impl Format {
    fn codec(self) -> Option<Codec> {
        match self {
            Format::Mp3 => Some(Codec::Mp3),
            Format::Opus => Some(Codec::Opus),
            Format::Aac => Some(Codec::Aac),
            Format::Flac => Some(Codec::Flac),
            Format::Wav | Format::PcmS16le | Format::PcmF32le => None,
        }
    }
}

/// Flags of `stream`: those of `generate` (but the output path), plus the format and the
/// time-to-first-audio measurement.
#[derive(Args, Debug)]
pub struct StreamArgs {
    #[command(flatten)]
    pub speech: SpeechArgs,
    /// Format of the audio written to stdout.
    #[arg(long, value_enum, default_value_t = Format::Wav)]
    pub format: Format,
    #[command(flatten)]
    pub speed: SpeedArgs,
    /// Measure the time to first audio: from the text handed to the loaded model (voice
    /// ready) to the first decoded samples, over --runs generations of the text; prints
    /// min / median / max and its parts (text prefill, first FlowLM step, first Mimi
    /// decode) on stderr. The audio is discarded unless --keep-audio.
    #[arg(long)]
    pub measure_first_chunk: bool,
    /// Generations measured by --measure-first-chunk. Default: 5.
    #[arg(long, value_name = "N")]
    pub runs: Option<usize>,
    /// With --measure-first-chunk, write the first run's audio to stdout.
    #[arg(long)]
    pub keep_audio: bool,
}

/// A writer that flushes after every write: each frame reaches the reader at once.
struct Flushing<W: Write>(W);

impl<W: Write> Write for Flushing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf)?;
        self.0.flush()?;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)?;
        self.0.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

type Stdout = Flushing<io::StdoutLock<'static>>;

/// Audio on stdout in one of the [`Format`]s, after the time-stretch of `--speed`.
struct AudioOut {
    stretch: TimeStretch,
    out: Out,
}

impl AudioOut {
    fn finish(self) -> io::Result<()> {
        let Self { stretch, mut out } = self;
        out.write(&stretch.finish())?;
        out.finish()
    }
}

impl AudioOut {
    fn new(format: Format, sample_rate: u32, speed: SpeedArgs) -> Result<Self> {
        Ok(Self {
            stretch: speed.stretcher(sample_rate)?,
            out: Out::new(format, sample_rate).context("writing to stdout")?,
        })
    }

    fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        let stretched = self.stretch.process(samples);
        self.out.write(&stretched)
    }
}

enum Out {
    Wav(WavWriter<Stdout>),
    Encoded(Encoded<Stdout>),
    Raw {
        out: Stdout,
        format: Format,
        buf: Vec<u8>,
    },
}

impl Out {
    fn new(format: Format, sample_rate: u32) -> io::Result<Self> {
        let out = Flushing(io::stdout().lock());
        if let Some(codec) = format.codec() {
            return Encoded::new(codec, sample_rate, out)
                .map(Out::Encoded)
                .map_err(io::Error::other);
        }
        Ok(match format {
            Format::Wav => Out::Wav(WavWriter::new_streaming(out, sample_rate)?),
            _ => Out::Raw {
                out,
                format,
                buf: Vec::new(),
            },
        })
    }

    fn write(&mut self, samples: &[f32]) -> io::Result<()> {
        match self {
            Out::Wav(w) => w.write_samples(samples),
            Out::Encoded(e) => e.write(samples),
            Out::Raw { out, format, buf } => {
                buf.clear();
                if *format == Format::PcmS16le {
                    for &x in samples {
                        // As the WAV writer (and the reference's): truncated toward zero.
                        let v = (x.clamp(-1.0, 1.0) * 32767.0) as i16;
                        buf.extend_from_slice(&v.to_le_bytes());
                    }
                } else {
                    for &x in samples {
                        buf.extend_from_slice(&x.to_le_bytes());
                    }
                }
                out.write_all(buf)
            }
        }
    }

    fn finish(self) -> io::Result<()> {
        match self {
            Out::Wav(w) => w.finalize()?.flush(),
            Out::Encoded(e) => e.finish().map(drop),
            Out::Raw { mut out, .. } => out.flush(),
        }
    }
}

/// Writes a frame; a reader that went away (broken pipe) stops the generation quietly.
fn write_frame(out: &mut AudioOut, samples: &[f32]) -> Result<Sink> {
    match out.write(samples) {
        Ok(()) => Ok(Sink::Continue),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            tracing::info!("stdout was closed: generation stopped");
            Ok(Sink::Stop)
        }
        Err(e) => Err(e).context("writing the audio to stdout"),
    }
}

/// Runs `stream`.
pub fn run(args: StreamArgs) -> Result<()> {
    crate::audio_out::check_built(args.format.codec(), "--format")?;
    let runs = match (args.runs, args.measure_first_chunk) {
        (Some(0), _) => bail!("--runs 0: measure at least 1 run (e.g. --runs 5)"),
        (Some(n), true) => n,
        (None, true) => 5,
        (Some(_), false) => bail!("--runs only applies with --measure-first-chunk"),
        (None, false) => 1,
    };
    if args.keep_audio && !args.measure_first_chunk {
        bail!(
            "--keep-audio only applies with --measure-first-chunk (stream writes its audio anyway)"
        );
    }
    let writes_audio = !args.measure_first_chunk || args.keep_audio;
    if writes_audio && io::stdout().is_terminal() {
        bail!(
            "stdout is a terminal: pipe the audio to a player or a file (e.g. `| aplay`, \
             `> speech.wav`)"
        );
    }
    args.speed.check()?;
    let plan = args.speech.plan()?;
    let mut outputs = Vec::new();
    if writes_audio {
        outputs.push(outputs::stdout());
    }
    outputs.extend(args.speech.stats_output());
    outputs::check_distinct(&outputs, &plan.inputs())?;
    let mut stats_out = crate::stats::open_if_asked(args.speech.stats_json.as_deref())?;
    let mut session = args.speech.load(plan)?;
    let rate = session.model.sample_rate() as u32;

    if !args.measure_first_chunk {
        let mut out = AudioOut::new(args.format, rate, args.speed)?;
        let run = session.run_last(args.speech.quiet, |s| write_frame(&mut out, s))?;
        if run.complete {
            match out.finish() {
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
                r => r.context("writing the audio to stdout")?,
            }
        }
        session.log_run(&run);
        if let Some(out) = stats_out.take() {
            stats::write(out, &stats::report(&session, &[run], false))?;
        }
        return Ok(());
    }

    let mut results = Vec::with_capacity(runs);
    let mut out = if args.keep_audio {
        Some(AudioOut::new(args.format, rate, args.speed)?)
    } else {
        None
    };
    for i in 0..runs {
        let run = match (i, out.as_mut()) {
            (0, Some(o)) => session.run(true, |s| write_frame(o, s))?,
            _ => session.run(true, |_| Ok(Sink::Continue))?,
        };
        tracing::info!(
            "run {}/{runs}: first audio after {:.1} ms",
            i + 1,
            run.first_chunk.unwrap_or_default().as_secs_f64() * 1000.0
        );
        results.push(run);
    }
    if let Some(o) = out {
        match o.finish() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
            r => r.context("writing the audio to stdout")?,
        }
    }
    print_first_chunk_report(&session, &results);
    if let Some(out) = stats_out {
        stats::write(out, &stats::report(&session, &results, true))?;
    }
    Ok(())
}

/// Prints min / median / max of the time to first audio and its parts on stderr.
fn print_first_chunk_report(session: &Session, runs: &[RunResult]) {
    let line = |name: &str, values: Vec<f64>| {
        let (Some(min), Some(p50), Some(max)) =
            (values.first(), stats::quantile(&values, 0.5), values.last())
        else {
            return format!("{name:<22} n/a");
        };
        format!("{name:<22} min {min:8.1}   median {p50:8.1}   max {max:8.1}")
    };
    let first = |f: fn(&RunResult) -> Option<std::time::Duration>| {
        stats::sorted_ms(runs.iter().filter_map(f).collect::<Vec<_>>().iter())
    };
    let total = first(|r| r.first_chunk);
    let prefill = first(|r| r.stats.prefill_times.first().copied());
    let lm = first(|r| r.stats.lm_step_times.first().copied());
    let decode = first(|r| r.stats.decode_times.first().copied());
    let audio_s: f64 =
        runs.iter().map(|r| r.samples).sum::<usize>() as f64 / session.model.sample_rate() as f64;
    let gen_s: f64 = runs.iter().map(|r| r.generation.as_secs_f64()).sum();
    eprintln!(
        "time to first audio over {} run{} ({} generation thread{}), ms:",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        session.threads.min(2),
        if session.threads == 1 { "" } else { "s" },
    );
    eprintln!("  {}", line("first audio", total));
    eprintln!("  {}", line("  text prefill", prefill));
    eprintln!("  {}", line("  first FlowLM step", lm));
    eprintln!("  {}", line("  first Mimi decode", decode));
    if audio_s > 0.0 {
        eprintln!(
            "  whole generations: {:.2} s of audio in {:.2} s, real-time factor {:.3}",
            audio_s,
            gen_s,
            gen_s / audio_s
        );
    }
}
