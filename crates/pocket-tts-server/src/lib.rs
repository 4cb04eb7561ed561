//! `serve`: the reference's web app and `/tts`, an OpenAI-compatible `/v1/audio/speech`
//! and the Wyoming protocol, from one process, every request a stream of one batched
//! [`Engine`]. Reference: `main.py` `serve` (FastAPI, one request at a time).

mod encode;
mod error;
mod metrics;
mod openai;
mod reference;
mod routes;
mod state;
mod voices;
mod wyoming;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use pocket_tts_core::{Engine, EngineOptions};

use crate::defaults;
use crate::model::{self, ModelArgs};
use crate::speech::GenerationArgs;
use crate::text_args::TextArgs;
use crate::threads::ThreadsArgs;
use state::{AppState, Limits};
use voices::{VoiceLimits, Voices};

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
    let mut params = args.generation.params()?;
    let limits = check_limits(&args)?;
    let choice = model::choose(&args.model)?;
    // The text language is resolved even without --normalize: a request may ask for it.
    params.text_language = args.text_prep.language(&choice)?;
    if args.text_prep.normalize {
        args.text_prep.require_language(&choice)?;
    }
    params.normalize = args.text_prep.normalize;
    params.markup = args.text_prep.markup;
    let custom = args.model.config.is_some();
    let language = choice.language.clone();
    let (mut model, load_s) = choice.load(t0)?;
    model.set_threads(threads)?;
    args.generation.fill_model_defaults(&mut params, &model);
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
        VoiceLimits {
            allow_urls: args.allow_voice_urls,
            max_bytes: limits.max_body_bytes,
            max_uploads: 64,
            truncate: !args.no_truncate_voice,
        },
    )?;
    let engine = Engine::new(
        Arc::clone(&model),
        EngineOptions {
            max_streams: args.max_streams,
            max_queued: args.max_queued,
            ..EngineOptions::default()
        },
    )
    .context("--max-streams/--max-queued")?;
    let state = Arc::new(AppState::new(
        engine,
        params,
        Arc::new(voices),
        limits,
        defaults::default_text(language.as_deref()).to_string(),
        args.api_key.clone().filter(|k| !k.is_empty()),
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("pocket-tts-http")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = runtime.block_on(serve(args, state));
    // Connections closed by force leave their stream pumps to notice; do not wait on them.
    runtime.shutdown_timeout(FORCED_CLOSE_DELAY);
    result
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

/// After the shutdown grace period and the cancellation of the streams, how long open
/// connections get before they are closed.
const FORCED_CLOSE_DELAY: Duration = Duration::from_secs(1);

async fn bind(host: &str, port: u16, flag: &str) -> Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind((host, port))
        .await
        .with_context(|| format!("--host {host} {flag} {port}: cannot listen there"))?;
    Ok(listener)
}

async fn serve(args: ServeArgs, state: Arc<AppState>) -> Result<()> {
    let app = routes::router(Arc::clone(&state), &args.cors_origins)?;
    let listener = bind(&args.host, args.port, "--port").await?;
    let addr: SocketAddr = listener.local_addr()?;
    let stop = tokio_util::sync::CancellationToken::new();
    let wyoming = match args.wyoming_port {
        Some(port) => {
            let l = bind(&args.host, port, "--wyoming-port").await?;
            let waddr = l.local_addr()?;
            tracing::info!("Wyoming on tcp://{waddr}");
            eprintln!("wyoming listening on tcp://{waddr}");
            Some(tokio::spawn(wyoming::serve(
                l,
                Arc::clone(&state),
                stop.clone(),
            )))
        }
        None => None,
    };
    // Installed before the line below: a SIGTERM sent as soon as it is read is graceful.
    let signal = shutdown_signal();
    // Tests and scripts read this line to find the port (with --port 0).
    eprintln!("listening on http://{addr}");
    tracing::info!(
        "serving on http://{addr} ({} streams at once, {} queued)",
        args.max_streams,
        args.max_queued
    );
    let grace = Duration::from_secs(args.shutdown_timeout);
    let watchdog = {
        let (stop, state) = (stop.clone(), Arc::clone(&state));
        tokio::spawn(async move {
            let signal = signal.await;
            tracing::info!(
                "{signal}: no new connections; {} streams running get {} s to finish",
                state.running(),
                grace.as_secs()
            );
            stop.cancel();
            tokio::time::sleep(grace).await;
            let n = state.cancel_all();
            if n > 0 {
                tracing::warn!(
                    "shutdown: {n} streams cancelled after {} s",
                    grace.as_secs()
                );
            }
        })
    };
    let stopped = stop.clone();
    let server =
        axum::serve(listener, app).with_graceful_shutdown(async move { stopped.cancelled().await });
    // Past the grace period the streams are cancelled; a connection still open a moment
    // later (a client that stopped reading) is closed with the runtime.
    let forced = async {
        stop.cancelled().await;
        tokio::time::sleep(grace + FORCED_CLOSE_DELAY).await;
    };
    tokio::select! {
        r = server => r.context("the HTTP server failed")?,
        () = forced => tracing::warn!("shutdown: closing the connections still open"),
    }
    if let Some(w) = wyoming {
        let _ = w.await;
    }
    watchdog.abort();
    tracing::info!("stopped");
    Ok(())
}

/// Installs the SIGTERM and SIGINT (Ctrl-C) handlers now; the future waits for either and
/// returns its name.
fn shutdown_signal() -> impl std::future::Future<Output = &'static str> {
    #[cfg(unix)]
    let handlers = {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(t), Ok(i)) => Some((t, i)),
            _ => {
                tracing::warn!("cannot install the SIGTERM/SIGINT handlers");
                None
            }
        }
    };
    async move {
        #[cfg(unix)]
        {
            let Some((mut term, mut int)) = handlers else {
                return std::future::pending().await;
            };
            tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
