//! What `generate` and `stream` share: the text, voice, model and generation flags, model
//! and voice loading, and the generation loop with its timings and progress bar.

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::config::Config;
use pocket_tts_core::tts_model::MAX_TOKENS_PER_CHUNK;
use pocket_tts_core::tts_model::{AudioStream, GenerationParams, GenerationStats, TtsModel};
use pocket_tts_core::VoiceState;

use crate::defaults;
use crate::model::{self, ModelArgs, ModelChoice};
use crate::outputs::Named;
use crate::progress::Progress;
use crate::text_args::TextArgs;
use crate::threads::ThreadsArgs;

/// Flags of `generate` and `stream` (the reference's `generate` flags, plus `--seed`,
/// `--threads` and `--stats-json`).
#[derive(Args, Debug)]
pub struct SpeechArgs {
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
    #[command(flatten)]
    pub generation: GenerationArgs,
    #[command(flatten)]
    pub text_prep: TextArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
    /// Write the run's timings (load, voice, prefill, first audio, per-frame FlowLM and
    /// Mimi times, real-time factor, peak memory) as one JSON object to this file.
    #[arg(long, value_name = "PATH")]
    pub stats_json: Option<PathBuf>,
    /// Use the whole voice prompt audio. By default only its first 30 s are used (a warning
    /// says so), as export-voice and the reference's server do; the reference's generate
    /// keeps all of it, which takes minutes and gigabytes for a long recording.
    #[arg(long)]
    pub no_truncate_voice: bool,
}

/// Sampling and stopping flags (the reference's `generate` flags).
#[derive(Args, Debug)]
pub struct GenerationArgs {
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
    /// Device (only `cpu`).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Maximum number of tokens per chunk of text.
    #[arg(long, default_value_t = MAX_TOKENS_PER_CHUNK)]
    pub max_tokens: usize,
    /// Seed of the sampling noise, for reproducible output: the noise the reference draws
    /// after `torch.manual_seed(SEED)` (so the same audio as the reference's, at any
    /// temperature). Default: random.
    #[arg(long)]
    pub seed: Option<u64>,
}

impl GenerationArgs {
    /// The generation parameters of a run on a model with `config`: the config's defaults
    /// ([`GenerationParams::for_config`]: temperature, EOS threshold) with these flags
    /// over them, checked once (before the model loads).
    ///
    /// # Errors
    /// A flag out of range, named as a flag (`--max-tokens ...`); `--device` other than
    /// `cpu`.
    pub fn params(&self, config: &Config) -> Result<GenerationParams> {
        if self.device != "cpu" {
            bail!(
                "--device {}: this build runs on the CPU only; use --device cpu (the default)",
                self.device
            );
        }
        let mut params = GenerationParams::for_config(config);
        params.sampler_decode_steps = match self.lsd_decode_steps {
            Some(n) => {
                tracing::warn!("--lsd-decode-steps is deprecated, use --sampler-decode-steps");
                n
            }
            None => self.sampler_decode_steps,
        };
        if let Some(t) = self.temperature {
            params.temperature = t;
        }
        if let Some(t) = self.eos_threshold {
            params.eos_threshold = t;
        }
        params.noise_clamp = self.noise_clamp;
        params.frames_after_eos = self.frames_after_eos;
        params.max_tokens = self.max_tokens;
        params.seed = self.seed;
        validate_params(&params)?;
        Ok(params)
    }
}

/// A checked command line, before the model is loaded.
pub struct Plan {
    pub text: String,
    params: GenerationParams,
    pub threads: usize,
    /// The model config chosen, read but not loaded.
    model: ModelChoice,
    /// The `--voice` argument, or the model's default voice.
    voice: String,
    /// When the command started (the model load time counts from here).
    started: Instant,
}

impl Plan {
    /// The files the run will read that exist on this machine (config, weights, tokenizer,
    /// voice), named by their flag or config field: outputs are checked against them.
    pub fn inputs(&self) -> Vec<Named> {
        let mut inputs: Vec<Named> = self
            .model
            .input_files()
            .into_iter()
            .map(|(what, path)| Named::new(what, path))
            .collect();
        if let Some(path) = pocket_tts_core::hub::resolve_cached(&self.voice, None) {
            inputs.push(Named::new("--voice", path));
        }
        inputs
    }
}

/// The model and voice, ready to speak.
pub struct Session {
    pub model: TtsModel,
    /// The voice state; `None` once [`Session::run_last`] has handed it to its stream.
    pub voice: Option<VoiceState>,
    pub text: String,
    pub params: GenerationParams,
    pub threads: usize,
    pub load: Duration,
    /// Peak resident memory right after the model load (MiB; `None` off Linux).
    pub load_peak_rss_mb: Option<f64>,
    pub voice_time: Duration,
}

/// The `--text` argument: the text, `-` for stdin, or (`None`) the greeting of the
/// `--language` model. Refuses a blank text.
pub fn read_text(text: Option<&str>, language: Option<&str>) -> Result<String> {
    let text = match text {
        None => defaults::default_text(language).to_string(),
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

impl SpeechArgs {
    /// `--stats-json` as a named output, for the checks against inputs and other outputs.
    pub fn stats_output(&self) -> Option<Named> {
        self.stats_json
            .as_ref()
            .map(|path| Named::new("--stats-json", path))
    }

    /// Checks the flags and reads the text, before the (slower) model load. Sets the
    /// Candle thread count (`--threads`): call it before any tensor operation.
    pub fn plan(&self) -> Result<Plan> {
        let started = Instant::now();
        let g = &self.generation;
        let threads = self.threads.configure()?;
        let model = model::choose(&self.model)?;
        let voice = self.voice.clone().unwrap_or_else(|| {
            defaults::default_voice(self.model.language.as_deref(), self.model.config.is_some())
                .to_string()
        });
        let text = read_text(self.text.as_deref(), self.model.language.as_deref())?;
        let mut params = g.params(&model.config)?;
        self.text_prep.apply(&mut params, &model)?;
        if params.markup {
            // A malformed pause tag fails before the model loads.
            pocket_tts_text::markup::parse_markup(&text).context("--text")?;
        }
        Ok(Plan {
            text,
            params,
            threads,
            model,
            voice,
            started,
        })
    }

    /// Loads the model and the voice.
    pub fn load(&self, plan: Plan) -> Result<Session> {
        let (mut model, load_s) = plan.model.load(plan.started)?;
        let load_peak_rss_mb = crate::memory::peak_rss_mb();
        if model.sample_rate() != 24000 {
            bail!(
                "this build writes 24 kHz audio; the model's rate is {} Hz",
                model.sample_rate()
            );
        }
        model.set_threads(plan.threads)?;
        // One voice per run: an audio voice's Mimi encoder is freed once it has encoded
        // the prompt (peak memory, OPTIMIZATION_LOG §37).
        model.set_keep_voice_encoder(false);
        let params = plan.params;
        tracing::info!("model loaded in {:.0} ms", load_s * 1000.0);

        let voice_arg = plan.voice;
        let t_voice = Instant::now();
        let voice = model
            .voice_state(&voice_arg, !self.no_truncate_voice)
            .with_context(|| format!("--voice {voice_arg}"))?;
        let voice_time = t_voice.elapsed();
        tracing::info!(
            "voice {voice_arg} ready in {:.0} ms ({} prompt positions)",
            voice_time.as_secs_f64() * 1000.0,
            voice.len()
        );
        Ok(Session {
            model,
            voice: Some(voice),
            text: plan.text,
            params,
            threads: plan.threads,
            load: Duration::from_secs_f64(load_s),
            load_peak_rss_mb,
            voice_time,
        })
    }
}

/// What a sink does with a frame's samples.
pub enum Sink {
    /// Keep generating.
    Continue,
    /// Stop: the reader has gone (stdout closed).
    Stop,
}

/// One generation's timings.
pub struct RunResult {
    /// From the text handed to the model to the first decoded samples.
    pub first_chunk: Option<Duration>,
    /// From the text handed to the model to the last frame written.
    pub generation: Duration,
    /// Samples generated.
    pub samples: usize,
    /// The core's timings.
    pub stats: GenerationStats,
    /// False when the sink stopped the generation early.
    pub complete: bool,
}

impl Session {
    /// Seconds of audio per frame.
    pub fn frame_seconds(&self) -> f64 {
        let m = &self.model;
        m.config().mimi.frame_rate.recip()
    }

    /// The voice state, unless [`Self::run_last`] has used it.
    pub fn voice(&self) -> Result<&VoiceState> {
        self.voice
            .as_ref()
            .context("internal error: the voice state was already handed to a generation")
    }

    /// Generates the text once, handing each frame's samples to `sink` as soon as it is
    /// decoded. The clock starts when the text is handed to the model.
    pub fn run(&self, quiet: bool, sink: impl FnMut(&[f32]) -> Result<Sink>) -> Result<RunResult> {
        let t0 = Instant::now();
        let stream = self
            .model
            .generate_stream(self.voice()?, &self.text, &self.params)?;
        self.drive(t0, stream, quiet, sink)
    }

    /// [`Self::run`] for the last run of a session: the voice state is handed to the
    /// stream, which frees it once the last text chunk has started
    /// ([`TtsModel::generate_stream_owned`]): less peak memory (4.9 MiB for a
    /// 105-position prompt at full size).
    pub fn run_last(
        &mut self,
        quiet: bool,
        sink: impl FnMut(&[f32]) -> Result<Sink>,
    ) -> Result<RunResult> {
        let voice = self
            .voice
            .take()
            .context("internal error: the voice state was already handed to a generation")?;
        let t0 = Instant::now();
        let stream = self
            .model
            .generate_stream_owned(voice, &self.text, &self.params)?;
        self.drive(t0, stream, quiet, sink)
    }

    /// Runs `stream` (started at `t0`) to its end or until `sink` stops it.
    fn drive(
        &self,
        t0: Instant,
        mut stream: AudioStream<'_>,
        quiet: bool,
        mut sink: impl FnMut(&[f32]) -> Result<Sink>,
    ) -> Result<RunResult> {
        let progress = Progress::new(stream.max_frames(), self.frame_seconds(), quiet);
        let mut first_chunk = None;
        let mut samples = 0usize;
        let mut complete = true;
        for frame in stream.by_ref() {
            let frame = frame?;
            if first_chunk.is_none() {
                first_chunk = Some(t0.elapsed());
            }
            samples += frame.samples.len();
            progress.inc();
            if let Sink::Stop = sink(&frame.samples)? {
                complete = false;
                break;
            }
        }
        let generation = t0.elapsed();
        drop(progress);
        let stats = stream.stats().clone();
        drop(stream);
        Ok(RunResult {
            first_chunk,
            generation,
            samples,
            stats,
            complete,
        })
    }

    /// Logs a run's timings (at INFO).
    pub fn log_run(&self, run: &RunResult) {
        let stats = &run.stats;
        tracing::info!(
            "text prefill {:.0} ms, first audio after {:.0} ms, generation {:.0} ms ({} frames in {} chunks: FlowLM {:.0} ms, Mimi {:.0} ms, {} thread{})",
            stats.prefill.as_secs_f64() * 1000.0,
            run.first_chunk.unwrap_or_default().as_secs_f64() * 1000.0,
            run.generation.as_secs_f64() * 1000.0,
            stats.frames,
            stats.chunks,
            stats.lm.as_secs_f64() * 1000.0,
            stats.decode.as_secs_f64() * 1000.0,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
        );
        let audio_s = run.samples as f64 / self.model.sample_rate() as f64;
        let rtf = if audio_s > 0.0 {
            run.generation.as_secs_f64() / audio_s
        } else {
            f64::NAN
        };
        tracing::info!(
            "audio {:.2} s, real-time factor {:.3} ({:.1}x faster than real time)",
            audio_s,
            rtf,
            1.0 / rtf
        );
    }
}

/// [`GenerationParams::validate`], with the message naming the command-line flag: the
/// library names the field (`max_tokens`), whose flag is `--max-tokens`.
pub fn validate_params(params: &GenerationParams) -> Result<()> {
    match params.validate() {
        Ok(()) => Ok(()),
        Err(pocket_tts_core::Error::InvalidArgument {
            field: Some(field),
            message,
        }) => bail!("--{} {message}", field.replace('_', "-")),
        Err(e) => Err(e.into()),
    }
}
