//! The pocket-tts-rs speech server, as a library: the reference's web app and `/tts`, an
//! OpenAI-compatible `/v1/audio/speech` and the Wyoming protocol (Home Assistant), from
//! one process, every request a stream of one batched [`Engine`]. Reference: `main.py`
//! `serve` of `pocket-tts` 4.0.1 (FastAPI, one request at a time).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use pocket_tts_core::{Engine, EngineOptions, GenerationParams, TtsModel};
//! use pocket_tts_server::{Server, ServerOptions, VoiceOptions, Voices};
//!
//! let model = Arc::new(TtsModel::builder().language("english").download(true).load()?);
//! let params = GenerationParams::for_config(model.config());
//! let voices = Voices::load(Arc::clone(&model), "alba", None, VoiceOptions::default())?;
//! let engine = Engine::new(model, EngineOptions::default())?;
//! let options = ServerOptions {
//!     port: 0,
//!     wyoming_port: Some(0),
//!     ..ServerOptions::new(params)
//! };
//! let server = Server::start(engine, voices, options)?;
//! println!("http://{}", server.http_addr());
//! server.shutdown()?;
//! # Ok(())
//! # }
//! ```
//!
//! Layout, one file per job: `http/` (the router: body limit, API key, CORS, access log
//! and request metrics; `reference.rs`: `/`, `/health`, `/tts` and the streamed response;
//! `openai.rs`: `/v1/...`; `error.rs`: statuses and the reference's and OpenAI's error
//! shapes), `wyoming/` (the protocol's framing, connections, streamed text), `state.rs`
//! (what every request shares; `Synthesis`: one engine stream seen from async code, a
//! blocking pump per stream, cancelled on drop), `kyutai/` (Kyutai's streaming TTS
//! websocket, `/api/tts_streaming`: text in word by word, speech and word times out;
//! `sessions.rs` counts its sessions),
//! `voices.rs` (default, folder, predefined,
//! `hf://`, uploads), `encode.rs` (streaming WAV, PCM, FLAC), `metrics.rs` (Prometheus),
//! `error.rs` ([`ServerError`], and the protocol-neutral request errors both protocols
//! answer with).

#![warn(missing_docs)]

mod encode;
mod error;
mod http;
mod kyutai;
mod metrics;
mod sessions;
mod state;
mod voices;
mod wyoming;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pocket_tts_core::{Engine, GenerationParams};
use tokio_util::sync::CancellationToken;

pub use error::{Listener, ServerError};
pub use voices::{VoiceOptions, Voices, OPENAI_VOICE_ALIASES};

use state::AppState;

/// Request limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest text of one request, in characters (OpenAI's limit is 4096). Default: 4096.
    pub max_text_chars: usize,
    /// Largest request body (voice uploads, Wyoming event data and payloads) and fetched
    /// voice file, in bytes; larger ones are refused (HTTP 413). Default: 10 MiB.
    pub max_body_bytes: usize,
    /// Longest generation of one request; the stream is then cut. Default: 300 s.
    pub request_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_text_chars: 4096,
            max_body_bytes: 10 * 1024 * 1024,
            request_timeout: Duration::from_secs(300),
        }
    }
}

/// What the server's messages to clients call its settings, when they tell the client
/// what the server's operator would change ("more than this server's limit of 4096
/// (max_text_chars)"). By default the names of the fields of [`ServerOptions`]; a program
/// with its own names (command-line flags) gives those.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingNames {
    /// [`Limits::max_text_chars`].
    pub max_text_chars: String,
    /// [`Limits::max_body_bytes`].
    pub max_body_bytes: String,
    /// [`Limits::request_timeout`].
    pub request_timeout: String,
    /// [`VoiceOptions::allow_urls`].
    pub allow_urls: String,
    /// [`GenerationParams::text_language`] of [`ServerOptions::params`].
    pub text_language: String,
    /// [`ServerOptions::api_key`].
    pub api_key: String,
}

impl Default for SettingNames {
    fn default() -> Self {
        Self {
            max_text_chars: "max_text_chars".into(),
            max_body_bytes: "max_body_bytes".into(),
            request_timeout: "request_timeout".into(),
            allow_urls: "allow_urls".into(),
            text_language: "text_language".into(),
            api_key: "api_key".into(),
        }
    }
}

/// How the server listens and what it allows. Build it with [`ServerOptions::new`] and
/// change the fields needed. (`Debug` does not show the API key.)
#[derive(Clone)]
pub struct ServerOptions {
    /// Address to listen on: an IP address or a host name. Default: `127.0.0.1` (this
    /// machine only; `0.0.0.0` serves the network, then consider [`Self::api_key`]).
    pub host: String,
    /// HTTP port; 0 picks a free one ([`RunningServer::http_addr`]). Default: 8000.
    pub port: u16,
    /// Also serve the Wyoming protocol on this TCP port of [`Self::host`] (0: a free one,
    /// [`RunningServer::wyoming_addr`]). Default: none.
    pub wyoming_port: Option<u16>,
    /// Request limits.
    pub limits: Limits,
    /// On shutdown, how long running streams get to finish before they are cancelled.
    /// Default: 10 s.
    pub shutdown_timeout: Duration,
    /// Require `Authorization: Bearer KEY` on every HTTP route but `/` and `/health`.
    /// Default: none.
    pub api_key: Option<String>,
    /// Origins allowed to call the API from a browser (CORS); `*` for any. Default: none
    /// (same-origin only).
    pub cors_origins: Vec<String>,
    /// Generation parameters of every request. A request may set its own `normalize` and
    /// `markup`; these are the defaults, and the web page's checkboxes start as they are
    /// (the normalize box disabled when `text_language` is `None`).
    pub params: GenerationParams,
    /// The web page's initial text (the reference's per-language greeting). Default:
    /// empty.
    pub default_text: String,
    /// What messages call the settings.
    pub setting_names: SettingNames,
    /// Shut down gracefully on SIGTERM and SIGINT (Ctrl-C), the handlers installed before
    /// [`Server::start`] returns; they stay installed for the life of the process (for a
    /// program that exits when the server stops). Default: off (the embedding program
    /// decides, with [`ShutdownHandle`]).
    pub handle_signals: bool,
    /// Name of the server's threads (the async runtime's workers and blocking pool).
    /// Default: `pocket-tts-http`.
    pub thread_name: String,
    /// Async worker threads (generation runs on the engine's own thread). Default: 2.
    pub worker_threads: usize,
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("wyoming_port", &self.wyoming_port)
            .field("limits", &self.limits)
            .field("shutdown_timeout", &self.shutdown_timeout)
            .field("api_key", &self.api_key.as_ref().map(|_| "(hidden)"))
            .field("cors_origins", &self.cors_origins)
            .field("params", &self.params)
            .field("default_text", &self.default_text)
            .field("setting_names", &self.setting_names)
            .field("handle_signals", &self.handle_signals)
            .field("thread_name", &self.thread_name)
            .field("worker_threads", &self.worker_threads)
            .finish()
    }
}

impl ServerOptions {
    /// The defaults (see each field), with `params` for every request.
    pub fn new(params: GenerationParams) -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 8000,
            wyoming_port: None,
            limits: Limits::default(),
            shutdown_timeout: Duration::from_secs(10),
            api_key: None,
            cors_origins: Vec::new(),
            params,
            default_text: String::new(),
            setting_names: SettingNames::default(),
            handle_signals: false,
            thread_name: "pocket-tts-http".into(),
            worker_threads: 2,
        }
    }

    /// Checks ranges.
    ///
    /// # Errors
    /// [`ServerError::InvalidOption`] naming the field: a zero limit, an empty API key, no
    /// worker thread, or generation parameters out of range.
    pub fn validate(&self) -> Result<(), ServerError> {
        let bad = |option: &'static str, message: &str| {
            Err(ServerError::InvalidOption {
                option,
                message: message.to_string(),
            })
        };
        if self.limits.max_text_chars == 0 {
            return bad("max_text_chars", "allow at least 1 character");
        }
        if self.limits.max_body_bytes == 0 {
            return bad(
                "max_body_bytes",
                "allow at least 1 byte (voice uploads need a few MiB)",
            );
        }
        if self.limits.request_timeout.is_zero() {
            return bad("request_timeout", "allow some time to generate");
        }
        if self.api_key.as_deref() == Some("") {
            return bad("api_key", "the key is empty: give a secret, or none");
        }
        if self.worker_threads == 0 {
            return bad("worker_threads", "use at least 1 thread");
        }
        self.params
            .validate()
            .map_err(|e| ServerError::InvalidOption {
                option: "params",
                message: e.to_string(),
            })
    }
}

/// After the shutdown grace period and the cancellation of the streams, how long open
/// connections get before they are closed.
const FORCED_CLOSE_DELAY: Duration = Duration::from_secs(1);

/// Starts the server ([`Server::start`]) or runs it until it stops ([`Server::run`]).
#[derive(Debug)]
pub struct Server {
    _private: (),
}

impl Server {
    /// Binds the HTTP listener (and the Wyoming one if asked) and starts serving on an
    /// async runtime of its own; returns once both listen. `voices` must have been loaded
    /// for `engine`'s model.
    ///
    /// Call it from synchronous code (the runtime cannot be started, nor later stopped,
    /// from within another async runtime).
    ///
    /// # Errors
    /// [`ServerError::InvalidOption`] for options out of range
    /// ([`ServerOptions::validate`]), a malformed CORS origin, or voices of another model;
    /// [`ServerError::Bind`] for an address the server cannot listen on;
    /// [`ServerError::Io`] when the async runtime cannot start.
    pub fn start(
        engine: Engine,
        mut voices: Voices,
        options: ServerOptions,
    ) -> Result<RunningServer, ServerError> {
        options.validate()?;
        if !Arc::ptr_eq(engine.model(), voices.model()) {
            return Err(ServerError::InvalidOption {
                option: "voices",
                message: "loaded for another model than the engine's: give Voices::load the \
                          engine's model"
                    .into(),
            });
        }
        voices.configure(options.limits.max_body_bytes, &options.setting_names);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.worker_threads)
            .thread_name(options.thread_name.clone())
            .enable_all()
            .build()
            .map_err(|source| ServerError::Io {
                what: "cannot start the async runtime",
                source,
            })?;
        let state = Arc::new(AppState::new(engine, Arc::new(voices), &options));
        let app = http::router(Arc::clone(&state), &options.cors_origins)?;
        let (listener, wyoming) = runtime.block_on(async {
            let listener = bind(&options.host, options.port, Listener::Http).await?;
            let wyoming = match options.wyoming_port {
                Some(port) => Some(bind(&options.host, port, Listener::Wyoming).await?),
                None => None,
            };
            Ok::<_, ServerError>((listener, wyoming))
        })?;
        let local = |l: &tokio::net::TcpListener, listener, port| {
            l.local_addr().map_err(|source| ServerError::Bind {
                listener,
                host: options.host.clone(),
                port,
                source,
            })
        };
        let http_addr = local(&listener, Listener::Http, options.port)?;
        let wyoming_addr = match (&wyoming, options.wyoming_port) {
            (Some(l), Some(port)) => Some(local(l, Listener::Wyoming, port)?),
            _ => None,
        };
        if let Some(waddr) = wyoming_addr {
            tracing::info!("Wyoming on tcp://{waddr}");
        }
        let handle = ShutdownHandle::new();
        state.kyutai.follow(handle.token.clone());
        if options.handle_signals {
            // Installed now: a SIGTERM sent as soon as `start` returns is graceful.
            let signal = {
                let _guard = runtime.enter();
                shutdown_signal()
            };
            let handle = handle.clone();
            runtime.spawn(async move { handle.shutdown(signal.await) });
        }
        let engine_options = state.engine.options();
        tracing::info!(
            "serving on http://{http_addr} ({} streams at once, {} queued)",
            engine_options.max_streams,
            engine_options.max_queued
        );
        let task = runtime.spawn(serve(
            listener,
            app,
            wyoming,
            Arc::clone(&state),
            handle.clone(),
            options.shutdown_timeout,
        ));
        Ok(RunningServer {
            runtime: Some(runtime),
            task: Some(task),
            http_addr,
            wyoming_addr,
            handle,
            state,
        })
    }

    /// [`Server::start`], then `listening` (with the bound addresses, e.g. to print them),
    /// then serves until the server shuts down: on SIGTERM or SIGINT with
    /// [`ServerOptions::handle_signals`], or a [`ShutdownHandle::shutdown`] from another
    /// thread. Returns `Ok` after a graceful shutdown.
    ///
    /// # Errors
    /// [`Server::start`]'s, and [`ServerError::Io`] if the HTTP server fails.
    pub fn run(
        engine: Engine,
        voices: Voices,
        options: ServerOptions,
        listening: impl FnOnce(&RunningServer),
    ) -> Result<(), ServerError> {
        let server = Self::start(engine, voices, options)?;
        listening(&server);
        server.wait()
    }
}

/// A server started by [`Server::start`]. Dropping it stops the server at once (streams
/// cancelled, connections closed); [`RunningServer::shutdown`] stops it gracefully.
pub struct RunningServer {
    runtime: Option<tokio::runtime::Runtime>,
    task: Option<tokio::task::JoinHandle<Result<(), ServerError>>>,
    http_addr: SocketAddr,
    wyoming_addr: Option<SocketAddr>,
    handle: ShutdownHandle,
    state: Arc<AppState>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("http_addr", &self.http_addr)
            .field("wyoming_addr", &self.wyoming_addr)
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The address the HTTP listener is bound to (with the port chosen for port 0).
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The address the Wyoming listener is bound to, if one was asked for.
    pub fn wyoming_addr(&self) -> Option<SocketAddr> {
        self.wyoming_addr
    }

    /// A handle that starts the graceful shutdown from anywhere (another thread, a signal
    /// handler); [`Self::wait`] then returns once it is done.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Shuts down gracefully and waits: no new connections; idle Wyoming connections are
    /// closed; running streams get [`ServerOptions::shutdown_timeout`] to finish, then
    /// are cancelled; connections still open a second later are closed.
    ///
    /// # Errors
    /// [`ServerError::Io`] if the HTTP server had failed.
    pub fn shutdown(self) -> Result<(), ServerError> {
        self.handle.shutdown("shutdown requested");
        self.wait()
    }

    /// Blocks until the server has stopped (after a [`ShutdownHandle::shutdown`], or a
    /// signal with [`ServerOptions::handle_signals`]). Call it from synchronous code.
    ///
    /// # Errors
    /// [`ServerError::Io`] if the HTTP server failed.
    pub fn wait(mut self) -> Result<(), ServerError> {
        let (Some(runtime), Some(task)) = (self.runtime.take(), self.task.take()) else {
            return Ok(());
        };
        let result = runtime.block_on(task).unwrap_or_else(|e| {
            Err(ServerError::Io {
                what: "the server task failed",
                source: std::io::Error::other(e.to_string()),
            })
        });
        // Connections closed by force leave their stream pumps to notice; do not wait on
        // them.
        runtime.shutdown_timeout(FORCED_CLOSE_DELAY);
        result
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            self.handle.shutdown("the server was dropped");
            self.state.cancel_all();
            runtime.shutdown_timeout(FORCED_CLOSE_DELAY);
        }
    }
}

/// Starts a running server's graceful shutdown ([`RunningServer::shutdown_handle`]).
#[derive(Debug, Clone)]
pub struct ShutdownHandle {
    token: CancellationToken,
    reason: Arc<Mutex<Option<String>>>,
}

impl ShutdownHandle {
    fn new() -> Self {
        Self {
            token: CancellationToken::new(),
            reason: Arc::new(Mutex::new(None)),
        }
    }

    /// Starts the graceful shutdown ([`RunningServer::shutdown`] describes it); `reason`
    /// is logged ("SIGTERM"). Later calls do nothing.
    pub fn shutdown(&self, reason: &str) {
        {
            let mut r = self
                .reason
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if r.is_none() {
                *r = Some(reason.to_string());
            }
        }
        self.token.cancel();
    }

    /// Whether the shutdown has started.
    pub fn is_shutting_down(&self) -> bool {
        self.token.is_cancelled()
    }

    fn reason(&self) -> String {
        self.reason
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .unwrap_or_default()
    }
}

async fn bind(
    host: &str,
    port: u16,
    listener: Listener,
) -> Result<tokio::net::TcpListener, ServerError> {
    tokio::net::TcpListener::bind((host, port))
        .await
        .map_err(|source| ServerError::Bind {
            listener,
            host: host.to_string(),
            port,
            source,
        })
}

/// Serves until the shutdown: HTTP, and Wyoming if it has a listener; past `grace` the
/// streams still running are cancelled, and a moment later the connections closed.
async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    wyoming: Option<tokio::net::TcpListener>,
    state: Arc<AppState>,
    handle: ShutdownHandle,
    grace: Duration,
) -> Result<(), ServerError> {
    let stop = handle.token.clone();
    let wyoming =
        wyoming.map(|l| tokio::spawn(wyoming::serve(l, Arc::clone(&state), stop.clone())));
    let watchdog = {
        let (stop, state) = (stop.clone(), Arc::clone(&state));
        tokio::spawn(async move {
            stop.cancelled().await;
            tracing::info!(
                "{}: no new connections; {} streams running get {} s to finish",
                handle.reason(),
                state.running(),
                grace.as_secs()
            );
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
        r = server => r.map_err(|source| ServerError::Io {
            what: "the HTTP server failed",
            source,
        })?,
        () = forced => tracing::warn!("shutdown: closing the connections still open"),
    }
    if let Some(w) = wyoming {
        let _ = w.await;
    }
    // Websocket sessions (`/api/tts_streaming`) left the HTTP server at their upgrade.
    let open = state.kyutai.wait_closed(grace + FORCED_CLOSE_DELAY).await;
    if open > 0 {
        tracing::warn!("shutdown: closing {open} websocket sessions still open");
    }
    watchdog.abort();
    tracing::info!("stopped");
    Ok(())
}

/// Installs the SIGTERM and SIGINT (Ctrl-C) handlers now (within a runtime); the future
/// waits for either and returns its name.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> ServerOptions {
        let config = pocket_tts_core::config::Config::builtin("english").unwrap();
        ServerOptions::new(GenerationParams::for_config(&config))
    }

    #[test]
    fn options_are_checked_naming_the_field() {
        assert!(options().validate().is_ok());
        type Change = fn(&mut ServerOptions);
        let cases: [(Change, &str); 5] = [
            (|o| o.limits.max_text_chars = 0, "max_text_chars"),
            (|o| o.limits.max_body_bytes = 0, "max_body_bytes"),
            (
                |o| o.limits.request_timeout = Duration::ZERO,
                "request_timeout",
            ),
            (|o| o.api_key = Some(String::new()), "api_key"),
            (|o| o.params.temperature = -1.0, "temperature"),
        ];
        for (change, needle) in cases {
            let mut o = options();
            change(&mut o);
            let e = o.validate().unwrap_err();
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    #[test]
    fn debug_hides_the_api_key() {
        let mut o = options();
        o.api_key = Some("s3cret".into());
        let shown = format!("{o:?}");
        assert!(
            !shown.contains("s3cret") && shown.contains("hidden"),
            "{shown}"
        );
    }
}
