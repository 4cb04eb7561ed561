//! `generate`: text in, WAV out (reference: `main.py`, `generate`).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::audio::{AtomicWavFile, WavWriter};
use pocket_tts_core::models::tts_model::{GenerationParams, MAX_TOKENS_PER_CHUNK};

use crate::defaults;
use crate::model::{self, ModelArgs};

/// Flags of `generate` (the reference's, plus `--seed`).
#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// Text to speak; `-` reads it from stdin. Default: a greeting in the model's language.
    #[arg(long)]
    pub text: Option<String>,
    /// Voice: a predefined voice name (alba, marius, javert, jean, …), an audio file
    /// (WAV, MP3, FLAC, OGG; any sample rate), a .safetensors voice state from
    /// export-voice, or an hf:// location of one. Default: the language's voice (alba),
    /// or alba's audio file with --config.
    #[arg(long)]
    pub voice: Option<String>,
    /// Only print errors.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Flow-head decode steps per frame.
    #[arg(long, default_value_t = 1)]
    pub sampler_decode_steps: usize,
    /// Deprecated alias of --sampler-decode-steps.
    #[arg(long, hide = true)]
    pub lsd_decode_steps: Option<usize>,
    /// Sampling temperature (0 = deterministic). Default: the model's (0.3).
    #[arg(long, allow_negative_numbers = true)]
    pub temperature: Option<f32>,
    /// Clamp the sampling noise to [-x, x].
    #[arg(long, allow_negative_numbers = true)]
    pub noise_clamp: Option<f32>,
    /// EOS threshold: generation stops once the EOS logit exceeds it. Default: the model's (-4).
    #[arg(long, allow_negative_numbers = true)]
    pub eos_threshold: Option<f32>,
    /// Frames (80 ms each) generated after EOS. Default: 1-3 depending on text length, plus 2.
    #[arg(long)]
    pub frames_after_eos: Option<usize>,
    /// Output WAV path, or `-` for stdout (streamed as it is generated).
    #[arg(long, default_value = "./tts_output.wav")]
    pub output_path: String,
    /// Device (only `cpu`).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Maximum number of tokens per chunk of text.
    #[arg(long, default_value_t = MAX_TOKENS_PER_CHUNK)]
    pub max_tokens: usize,
    /// Seed of the sampling noise, for reproducible output. Default: random.
    #[arg(long)]
    pub seed: Option<u64>,
}

fn read_text(args: &GenerateArgs) -> Result<String> {
    let text = match args.text.as_deref() {
        None => defaults::default_text(args.model.language.as_deref()).to_string(),
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("--text -: cannot read text from stdin")?;
            s
        }
        Some(t) => t.to_string(),
    };
    if text.trim().is_empty() {
        bail!("--text is empty: give some words to speak (or pipe them with --text -)");
    }
    Ok(text)
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
    if args.device != "cpu" {
        bail!(
            "--device {}: this build runs on the CPU only; use --device cpu (the default)",
            args.device
        );
    }
    let text = read_text(&args)?;
    let decode_steps = match args.lsd_decode_steps {
        Some(n) => {
            tracing::warn!("--lsd-decode-steps is deprecated, use --sampler-decode-steps");
            n
        }
        None => args.sampler_decode_steps,
    };
    // Check the numbers before the (slower) model load; the config's defaults are
    // filled in after it.
    let mut params = GenerationParams {
        temperature: args.temperature.unwrap_or(0.0),
        sampler_decode_steps: decode_steps,
        noise_clamp: args.noise_clamp,
        eos_threshold: args.eos_threshold.unwrap_or(0.0),
        frames_after_eos: args.frames_after_eos,
        max_tokens: args.max_tokens,
        seed: args.seed,
    };
    params.validate()?;

    // Open an output file first: an unwritable path fails before any work, and the file
    // is only moved into place once complete. Stdout gets its header only once the voice
    // and text are ready, so a failing run writes nothing there.
    let mut file = if args.output_path == "-" {
        None
    } else {
        Some(open_output_file(&args.output_path)?)
    };

    let (model, load_s) = model::load(&args.model)?;
    if model.sample_rate() != 24000 {
        bail!(
            "this build writes 24 kHz WAV; the model's rate is {} Hz",
            model.sample_rate()
        );
    }
    params.temperature = args.temperature.unwrap_or(model.config.default_temperature);
    params.eos_threshold = args
        .eos_threshold
        .unwrap_or(model.config.default_eos_threshold);
    tracing::info!("model loaded in {:.0} ms", load_s * 1000.0);

    let voice_arg = args.voice.clone().unwrap_or_else(|| {
        defaults::default_voice(args.model.language.as_deref(), args.model.config.is_some())
            .to_string()
    });
    let t_voice = Instant::now();
    let voice = model
        .voice_state(&voice_arg, false)
        .with_context(|| format!("--voice {voice_arg}"))?;
    let voice_s = t_voice.elapsed().as_secs_f64();
    tracing::info!(
        "voice {voice_arg} ready in {:.0} ms ({} prompt positions)",
        voice_s * 1000.0,
        voice.len()
    );

    let t_gen = Instant::now();
    let mut stream = model.generate_stream(&voice, &text, &params)?;
    let mut output = match file.take() {
        Some(f) => Output::File(f),
        None => Output::Stdout(
            WavWriter::new_streaming(std::io::stdout().lock(), 24000)
                .context("writing the WAV header to stdout")?,
        ),
    };
    let mut samples = 0usize;
    let mut first_audio_s = None;
    for frame in stream.by_ref() {
        let frame = frame?;
        if first_audio_s.is_none() {
            first_audio_s = Some(t_gen.elapsed().as_secs_f64());
        }
        samples += frame.samples.len();
        output.write(&frame.samples)?;
    }
    let gen_s = t_gen.elapsed().as_secs_f64();
    let stats = stream.stats().clone();
    output.finish()?;

    let audio_s = samples as f64 / model.sample_rate() as f64;
    tracing::info!(
        "text prefill {:.0} ms, first audio after {:.0} ms, generation {:.0} ms ({} frames in {} chunks: FlowLM {:.0} ms, Mimi {:.0} ms)",
        stats.prefill.as_secs_f64() * 1000.0,
        first_audio_s.unwrap_or(0.0) * 1000.0,
        gen_s * 1000.0,
        stats.frames,
        stats.chunks,
        stats.lm.as_secs_f64() * 1000.0,
        stats.decode.as_secs_f64() * 1000.0,
    );
    let rtf = if audio_s > 0.0 {
        gen_s / audio_s
    } else {
        f64::NAN
    };
    tracing::info!(
        "audio {:.2} s, real-time factor {:.3} ({:.1}x faster than real time)",
        audio_s,
        rtf,
        1.0 / rtf
    );
    if args.output_path != "-" {
        tracing::info!("results written in {}", args.output_path);
    }
    Ok(())
}
