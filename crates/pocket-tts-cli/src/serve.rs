//! `serve`: the flags, the model and voices loaded before the first connection, then the
//! server of `pocket-tts-server` (the reference's web app and `/tts`, an OpenAI-compatible
//! `/v1/audio/speech` and the Wyoming protocol), until SIGTERM or SIGINT (a graceful
//! shutdown, exit status 0).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use pocket_tts_core::config::Config;
use pocket_tts_core::{Engine, EngineOptions, GenerationParams};
use pocket_tts_server::{
    Limits, Listener, Server, ServerError, ServerOptions, SettingNames, VoiceOptions, Voices,
};
use pocket_tts_text::normalize::Language;

use crate::defaults;
use crate::model::{self, ModelArgs};
use crate::speech::GenerationArgs;
use crate::text_args::TextArgs;
use crate::threads::ThreadsArgs;

/// Flags of `serve` (the reference's, plus limits, voices, Wyoming and security).
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on. The default serves this machine only; use 0.0.0.0 to serve
    /// the network (then consider --api-key).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// HTTP port (0: any free port, printed at start-up).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Voice of requests that name none: a predefined voice name, an audio file or a
    /// .safetensors voice state (local or hf://). Default: the language's voice (alba
    /// for english). Loaded before the server accepts connections.
    #[arg(long, visible_alias = "default-voice")]
    pub voice: Option<String>,
    /// A folder whose audio files (.wav, .mp3, .flac, .ogg) and .safetensors voice states
    /// become voices named by their file stem (anna.wav → "anna"), loaded at start-up.
    #[arg(long, value_name = "DIR")]
    pub voices_dir: Option<PathBuf>,
    /// Another name for a voice, NAME=VOICE (repeat for several): requests naming NAME get
    /// VOICE (a predefined voice, a --voices-dir voice, the default voice's name,
    /// `default`, or an hf:// voice). Overrides the built-in table of OpenAI's voice names
    /// (alloy=alba, ash=marius, ballad=jean, cedar=paul, coral=cosette, echo=javert,
    /// fable=george, marin=mary, nova=fantine, onyx=charles, sage=eponine,
    /// shimmer=azelma, verse=michael; all `default` with a --config model, which has no
    /// predefined voices). GET /v1/audio/voices lists them.
    #[arg(long = "voice-alias", value_name = "NAME=VOICE", value_parser = parse_alias)]
    pub voice_aliases: Vec<(String, String)>,
    /// Streams generated at once (the batched engine's slots).
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_streams: usize,
    /// Requests that may wait for a slot; beyond, requests get HTTP 429 with Retry-After.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_queued: usize,
    /// Also serve the Wyoming protocol (Home Assistant) on this TCP port, same --host.
    #[arg(long, value_name = "PORT")]
    pub wyoming_port: Option<u16>,
    /// Largest request body (voice uploads), in MiB; larger ones get 413.
    #[arg(long, default_value_t = 10, value_name = "MIB")]
    pub max_upload_mb: usize,
    /// Longest text of one request, in characters (OpenAI's limit is 4096).
    #[arg(long, default_value_t = 4096, value_name = "N")]
    pub max_text_chars: usize,
    /// Longest generation of one request, in seconds; the stream is then cut.
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub request_timeout: u64,
    /// On SIGTERM/SIGINT, seconds given to running streams to finish before they are
    /// cancelled.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub shutdown_timeout: u64,
    /// Fetch http:// and https:// voice_url addresses (off: the server never makes a
    /// request to an address a client chose).
    #[arg(long)]
    pub allow_voice_urls: bool,
    /// Require `Authorization: Bearer KEY` on every route but / and /health (also read
    /// from POCKET_TTS_API_KEY).
    #[arg(
        long,
        env = "POCKET_TTS_API_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub api_key: Option<String>,
    /// Origin allowed to call the API from a browser (CORS); repeat for several, `*` for
    /// any. Default: none (same-origin only).
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub cors_origins: Vec<String>,
    /// Use the whole voice prompt (default: its first 30 s, as the reference).
    #[arg(long)]
    pub no_truncate_voice: bool,
    /// Only log errors (no access log).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub generation: GenerationArgs,
    // The text options of every request (a request may set its own `normalize` and
    // `markup`).
    #[command(flatten)]
    pub text_prep: TextArgs,
    #[command(flatten)]
    pub threads: ThreadsArgs,
}

/// Starts the server; returns once it has shut down (SIGTERM/SIGINT).
pub fn run(args: ServeArgs) -> Result<()> {
    let t0 = Instant::now();
    let threads = args.threads.configure()?;
    let limits = check_limits(&args)?;
    let choice = model::choose(&args.model)?;
    // The text language is resolved even without --normalize: a request may ask for it.
    let text_language = args.text_prep.language(&choice)?;
    if args.text_prep.normalize {
        args.text_prep.require_language(&choice)?;
    }
    let params = generation_params(&args, &choice.config, text_language)?;
    let custom = args.model.config.is_some();
    let language = choice.language.clone();
    let (mut model, load_s) = choice.load(t0)?;
    model.set_threads(threads)?;
    tracing::info!("model loaded in {:.0} ms", load_s * 1000.0);
    let model = Arc::new(model);
    let voice = args
        .voice
        .clone()
        .unwrap_or_else(|| defaults::default_voice(language.as_deref(), custom).to_string());
    let voices = Voices::load(
        Arc::clone(&model),
        &voice,
        args.voices_dir.as_deref(),
        VoiceOptions {
            allow_urls: args.allow_voice_urls,
            max_uploads: 64,
            truncate: !args.no_truncate_voice,
            aliases: args.voice_aliases.clone(),
        },
    )
    .map_err(flag_error)?;
    let engine = Engine::new(
        model,
        EngineOptions {
            max_streams: args.max_streams,
            max_queued: args.max_queued,
            ..EngineOptions::default()
        },
    )
    .context("--max-streams/--max-queued")?;
    let options = ServerOptions {
        host: args.host.clone(),
        port: args.port,
        wyoming_port: args.wyoming_port,
        limits,
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
        api_key: args.api_key.clone().filter(|k| !k.is_empty()),
        cors_origins: args.cors_origins.clone(),
        default_text: defaults::default_text(language.as_deref()).to_string(),
        setting_names: flag_names(),
        handle_signals: true,
        ..ServerOptions::new(params)
    };
    Server::run(engine, voices, options, |server| {
        if let Some(waddr) = server.wyoming_addr() {
            eprintln!("wyoming listening on tcp://{waddr}");
        }
        // Tests and scripts read this line to find the port (with --port 0).
        eprintln!("listening on http://{}", server.http_addr());
    })
    .map_err(flag_error)
}

/// The generation parameters of every request (a request may set its own `normalize`
/// and `markup`): the config's defaults with the sampling flags over them, checked once
/// (`GenerationArgs::params`, as for `generate`), and the text flags.
fn generation_params(
    args: &ServeArgs,
    config: &Config,
    text_language: Option<Language>,
) -> Result<GenerationParams> {
    let mut params = args.generation.params(config)?;
    params.text_language = text_language;
    params.normalize = args.text_prep.normalize;
    params.markup = args.text_prep.markup;
    Ok(params)
}

fn check_limits(args: &ServeArgs) -> Result<Limits> {
    if args.max_upload_mb == 0 {
        bail!("--max-upload-mb 0: allow at least 1 MiB (voice uploads need it)");
    }
    if args.max_text_chars == 0 {
        bail!("--max-text-chars 0: allow at least 1 character");
    }
    if args.request_timeout == 0 {
        bail!("--request-timeout 0: allow at least 1 second");
    }
    if args.api_key.as_deref() == Some("") {
        bail!("--api-key is empty: give a secret, or leave the flag out");
    }
    Ok(Limits {
        max_text_chars: args.max_text_chars,
        max_body_bytes: args.max_upload_mb.saturating_mul(1024 * 1024),
        request_timeout: Duration::from_secs(args.request_timeout),
    })
}

/// The flags the server's messages to clients name.
fn flag_names() -> SettingNames {
    SettingNames {
        max_text_chars: "--max-text-chars".into(),
        max_body_bytes: "--max-upload-mb".into(),
        request_timeout: "--request-timeout".into(),
        allow_urls: "--allow-voice-urls".into(),
        text_language: "--text-language".into(),
        api_key: "--api-key".into(),
    }
}

/// A server error with the flag at fault named.
/// `--voice-alias NAME=VOICE`.
fn parse_alias(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, voice)) if !name.trim().is_empty() && !voice.trim().is_empty() => {
            Ok((name.trim().to_string(), voice.trim().to_string()))
        }
        _ => Err(format!(
            "{s:?}: give NAME=VOICE, e.g. --voice-alias alloy=marius"
        )),
    }
}

fn flag_error(e: ServerError) -> anyhow::Error {
    match e {
        ServerError::Bind {
            listener,
            host,
            port,
            source,
        } => {
            let flag = match listener {
                Listener::Http => "--port",
                Listener::Wyoming => "--wyoming-port",
            };
            anyhow::Error::new(source)
                .context(format!("--host {host} {flag} {port}: cannot listen there"))
        }
        ServerError::DefaultVoice { voice, source } => {
            anyhow::Error::new(source).context(format!("--voice {voice}"))
        }
        ServerError::VoicesDir {
            dir,
            problem,
            source,
        } => {
            let message = format!("--voices-dir {}: {problem}", dir.display());
            match source {
                Some(source) => anyhow::Error::from_boxed(source).context(message),
                None => anyhow!(message),
            }
        }
        ServerError::InvalidOption {
            option: "cors_origins",
            message,
        } => anyhow!("--cors-origin {message}"),
        ServerError::InvalidOption {
            option: "voice_options.aliases",
            message,
        } => anyhow!("--voice-alias {message}"),
        e => e.into(),
    }
}
