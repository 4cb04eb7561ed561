//! A server for the tests, in this process: started on an ephemeral loopback port with
//! the tiny model and the settings of `pocket-tts-cli serve`'s tests, its log (what it
//! writes through `tracing`) captured apart from the other tests' servers, stopped on drop.

use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use pocket_tts_core::{Engine, EngineOptions};
use pocket_tts_server::{RunningServer, ServerError, ServerOptions, VoiceOptions, Voices};
use pocket_tts_text::normalize::Language;

use super::{params, tiny, utf8, Sandbox};

/// How a test server is set up: the voices', engine's and server's options, with the
/// deterministic settings of [`super::params`], the fixture voice and an ephemeral
/// loopback port (HTTP only; [`Setup::wyoming`] adds the Wyoming listener).
pub struct Setup {
    /// The default voice.
    pub voice: String,
    /// The voices folder.
    pub voices_dir: Option<PathBuf>,
    /// The voices' options.
    pub voice_options: VoiceOptions,
    /// The engine's options.
    pub engine: EngineOptions,
    /// The server's options.
    pub options: ServerOptions,
}

/// Names each server's threads, so that its log can be told apart.
static NEXT_SERVER: AtomicUsize = AtomicUsize::new(0);

impl Setup {
    pub fn new(sb: &Sandbox) -> Self {
        let mut options = ServerOptions::new(params(&sb.config()));
        options.host = "127.0.0.1".into();
        options.port = 0;
        Self {
            voice: utf8(&tiny("voice_excerpt.wav")).to_string(),
            voices_dir: None,
            voice_options: VoiceOptions::default(),
            engine: EngineOptions::default(),
            options,
        }
    }

    /// Also listens for Wyoming, on an ephemeral port.
    pub fn wyoming(mut self) -> Self {
        self.options.wyoming_port = Some(0);
        self
    }

    /// The text language of every request (`--text-language`).
    pub fn text_language(mut self, language: &str) -> Self {
        let language: Language = language.parse().expect("a language");
        self.options.params.text_language = Some(language);
        self
    }

    /// Loads the model and voices and starts the server, or returns why it cannot.
    pub fn try_start(self, sb: &Sandbox) -> Result<Server, ServerError> {
        let model = sb.model();
        let mut options = self.options;
        let n = NEXT_SERVER.fetch_add(1, Ordering::Relaxed);
        let thread = format!("test-server-{n}");
        options.thread_name = thread.clone();
        capture_logs();
        let voices = Voices::load(
            Arc::clone(&model),
            &self.voice,
            self.voices_dir.as_deref(),
            self.voice_options,
        )?;
        let engine = Engine::new(model, self.engine).map_err(|e| ServerError::InvalidOption {
            option: "engine",
            message: e.to_string(),
        })?;
        let running = pocket_tts_server::Server::start(engine, voices, options)?;
        Ok(Server {
            base: format!("http://{}", running.http_addr()),
            wyoming: running.wyoming_addr(),
            running: Some(running),
            exited: None,
            thread,
        })
    }

    /// [`Self::try_start`], which must succeed.
    pub fn start(self, sb: &Sandbox) -> Server {
        self.try_start(sb)
            .unwrap_or_else(|e| panic!("the server did not start: {e}"))
    }
}

/// A running server.
pub struct Server {
    running: Option<RunningServer>,
    /// How [`RunningServer::wait`] ended, once the shutdown is started.
    exited: Option<mpsc::Receiver<Result<(), ServerError>>>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    wyoming: Option<SocketAddr>,
    /// The name of its threads, whose log lines are its log.
    thread: String,
}

impl Server {
    /// The address of the Wyoming listener (panics if it was not started).
    pub fn wyoming_addr(&self) -> SocketAddr {
        self.wyoming.expect("the server runs without Wyoming")
    }

    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Everything the server logged so far.
    pub fn log(&self) -> String {
        lock(logs()).get(&self.thread).cloned().unwrap_or_default()
    }

    /// Waits (up to 10 s) until the server's log contains `needle`: a line written by
    /// another thread than the one that updated a metric may come a little later.
    pub fn wait_log(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "the log never said {needle:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the graceful shutdown (as SIGTERM does for `serve`).
    pub fn shutdown(&mut self) {
        let running = self.running.take().expect("the server runs");
        running.shutdown_handle().shutdown("test shutdown");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(running.wait());
        });
        self.exited = Some(rx);
    }

    /// Waits up to `timeout` for the server to stop after [`Self::shutdown`]; how it
    /// ended, or `None` if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<Result<(), ServerError>> {
        self.exited
            .as_ref()
            .expect("the shutdown was started")
            .recv_timeout(timeout)
            .ok()
    }

    /// A metric's value from `/metrics` (the sum over its label sets whose line contains
    /// `labels`).
    pub fn metric(&self, name: &str, labels: &str) -> f64 {
        let text = get(&self.url("/metrics")).1;
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| l.split([' ', '{']).next() == Some(name) && l.contains(labels))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// Waits (up to 10 s) until `/metrics` shows `n` active streams.
    pub fn wait_active(&self, n: f64) {
        self.wait_metric("pocket_tts_active_streams", "", n);
    }

    /// Waits (up to 10 s) until [`Self::metric`] gives `value`: a stream's counters are
    /// updated by its pump thread, just after the client has seen the stream end.
    pub fn wait_metric(&self, name: &str, labels: &str, value: f64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.metric(name, labels);
            if got == value {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{name}{{{labels}}} stayed at {got}, expected {value}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Log lines by the name of the thread that wrote them.
fn logs() -> &'static Mutex<HashMap<String, String>> {
    static LOGS: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    LOGS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Writes to the log of the current thread's name.
struct ThreadLog;

impl std::io::Write for ThreadLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let name = std::thread::current().name().unwrap_or("").to_string();
        lock(logs())
            .entry(name)
            .or_default()
            .push_str(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Installs (once) the subscriber that keeps every thread's log at INFO (as `serve`).
fn capture_logs() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(|| ThreadLog)
            .try_init();
    });
}

/// A response: status, headers we check, and the body.
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
}

fn reply(r: Result<ureq::Response, ureq::Error>) -> Reply {
    let r = match r {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("request failed: {e}"),
    };
    let status = r.status();
    let content_type = r.header("content-type").unwrap_or_default().to_string();
    let retry_after = r.header("retry-after").map(str::to_string);
    let mut body = Vec::new();
    r.into_reader()
        .read_to_end(&mut body)
        .expect("read the body");
    Reply {
        status,
        content_type,
        retry_after,
        body,
    }
}

/// `GET url`: status and body text.
pub fn get(url: &str) -> (u16, String) {
    let r = reply(ureq::get(url).timeout(Duration::from_secs(30)).call());
    (r.status, r.text())
}

/// `GET url` with headers.
pub fn get_with(url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut req = ureq::get(url).timeout(Duration::from_secs(30));
    for (k, v) in headers {
        req = req.set(k, v);
    }
    reply(req.call())
}

/// `POST url` with a JSON (or any) body.
pub fn post_json(url: &str, body: &str) -> Reply {
    reply(
        ureq::post(url)
            .timeout(Duration::from_secs(60))
            .set("Content-Type", "application/json")
            .send_bytes(body.as_bytes()),
    )
}

/// One multipart field: name, optional file name, content.
pub type Part<'a> = (&'a str, Option<&'a str>, &'a [u8]);

const BOUNDARY: &str = "pocket-tts-test-boundary-7d41";

/// A `multipart/form-data` body.
pub fn multipart(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, file, content) in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// A multipart request, not yet sent.
pub fn multipart_request(url: &str) -> ureq::Request {
    ureq::post(url).timeout(Duration::from_secs(60)).set(
        "Content-Type",
        &format!("multipart/form-data; boundary={BOUNDARY}"),
    )
}

/// `POST url` with a multipart form.
pub fn post_form(url: &str, parts: &[Part]) -> Reply {
    reply(multipart_request(url).send_bytes(&multipart(parts)))
}

/// `POST url` with a multipart form, returning the response unread (to read it slowly
/// or drop it midway).
pub fn open_form(url: &str, parts: &[Part]) -> ureq::Response {
    multipart_request(url)
        .send_bytes(&multipart(parts))
        .unwrap_or_else(|e| panic!("POST {url} failed: {e}"))
}
