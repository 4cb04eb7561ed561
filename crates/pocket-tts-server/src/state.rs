//! What every request shares: the engine, the voices, the limits and the metrics; and
//! [`Synthesis`], one engine stream seen from async code.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use pocket_tts_core::{Engine, Error as CoreError, GenerationParams, StreamCanceller, VoiceState};
use tokio::sync::mpsc;

use crate::error::{ErrorKind, RequestError};
use crate::metrics::Metrics;
use crate::sessions::Sessions;
use crate::voices::Voices;
use crate::{Limits, ServerOptions, SettingNames};

/// The state behind every route.
pub struct AppState {
    /// The batched engine every request is a stream of.
    pub engine: Engine,
    /// Generation parameters of every request ([`ServerOptions::params`]).
    pub params: GenerationParams,
    /// The voices.
    pub voices: Arc<Voices>,
    /// Request limits.
    pub limits: Limits,
    /// The metrics.
    pub metrics: Metrics,
    /// The default text of the web page (the reference's per-language text).
    pub default_text: String,
    /// The bearer token requests must carry ([`ServerOptions::api_key`]).
    pub api_key: Option<String>,
    /// What messages call the settings.
    pub names: SettingNames,
    /// The open sessions of Kyutai's streaming websocket (`/api/tts_streaming`).
    pub kyutai: Sessions,
    /// Streams running, so that shutdown can cancel them.
    running: Mutex<HashMap<u64, StreamCanceller>>,
    next_id: AtomicU64,
}

/// A request's own options (the `normalize`, `markup` and `seed` fields); `None` keeps the
/// server's ([`GenerationParams::normalize`], [`GenerationParams::markup`] of
/// [`ServerOptions::params`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextRequest {
    /// Normalize the text (numbers, dates, … into words).
    pub normalize: Option<bool>,
    /// Read pause markup.
    pub markup: Option<bool>,
    /// Seed of the sampling noise ([`GenerationParams::seed`]: the reference's noise after
    /// `torch.manual_seed(seed)`); `None` keeps the server's (random unless it was started
    /// with one).
    pub seed: Option<u64>,
}

/// What a [`Synthesis`] yields.
#[derive(Debug)]
pub enum SynthEvent {
    /// The samples of one frame (1920 at 24 kHz, 80 ms).
    Frame(Vec<f32>),
    /// The stream failed, hit the time limit or was cancelled (shutdown): the response
    /// must end as incomplete.
    Failed(String),
}

/// Where a frame sits in its stream, besides its samples (what the websocket route times
/// words from; the other routes ignore it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameInfo {
    /// Index of the text chunk the frame belongs to ([`pocket_tts_core::AudioFrame::chunk`]).
    pub chunk: usize,
    /// Index of the frame within its chunk ([`pocket_tts_core::AudioFrame::frame`]).
    pub frame: usize,
    /// The frame's EOS logit (negative infinity for a pause).
    pub eos_logit: f32,
    /// Silence from pause markup.
    pub pause: bool,
}

/// What the pump sends: a frame, another event, or the end of a stream that completed.
enum Pumped {
    Frame(Vec<f32>, FrameInfo),
    Event(SynthEvent),
    Done,
}

/// One engine stream, received from async code. Dropping it (the client went away)
/// cancels the stream: its slot is free at the engine's next pass.
pub struct Synthesis {
    rx: mpsc::Receiver<Pumped>,
    /// Whether the stream completed or failed (nothing more to receive).
    over: bool,
    canceller: StreamCanceller,
    /// Frames received so far.
    pub frames: usize,
    /// Where the last frame received sits in the stream (`None` before the first).
    pub last_frame: Option<FrameInfo>,
}

impl Synthesis {
    /// The next event; `None` once the stream has completed. A stream that ends any
    /// other way (failure, time limit, cancellation by shutdown) ends with
    /// [`SynthEvent::Failed`] first.
    pub async fn next(&mut self) -> Option<SynthEvent> {
        if self.over {
            return None;
        }
        match self.rx.recv().await {
            Some(Pumped::Frame(samples, info)) => {
                self.frames += 1;
                self.last_frame = Some(info);
                Some(SynthEvent::Frame(samples))
            }
            Some(Pumped::Event(e)) => {
                match e {
                    SynthEvent::Frame(_) => self.frames += 1,
                    SynthEvent::Failed(_) => self.over = true,
                }
                Some(e)
            }
            Some(Pumped::Done) => {
                self.over = true;
                None
            }
            None => {
                self.over = true;
                Some(SynthEvent::Failed(
                    "the stream was cancelled (the server is shutting down)".into(),
                ))
            }
        }
    }
}

impl Synthesis {
    /// Waits for the first frame: the response's status depends on it.
    ///
    /// # Errors
    /// [`ErrorKind::Internal`] with the failure's message when the stream ends before any
    /// audio.
    pub async fn first_frame(&mut self) -> Result<Vec<f32>, RequestError> {
        match self.next().await {
            Some(SynthEvent::Frame(f)) => Ok(f),
            Some(SynthEvent::Failed(m)) => Err(RequestError::new(ErrorKind::Internal, m)),
            None => Err(RequestError::new(
                ErrorKind::Internal,
                "the generation ended without audio",
            )),
        }
    }
}

impl Drop for Synthesis {
    fn drop(&mut self) {
        self.canceller.cancel();
    }
}

/// Compares without stopping at the first difference (the key's bytes do not leak
/// through timing).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl AppState {
    /// Builds the state.
    pub fn new(engine: Engine, voices: Arc<Voices>, options: &ServerOptions) -> Self {
        Self {
            engine,
            params: options.params.clone(),
            voices,
            limits: options.limits.clone(),
            metrics: Metrics::new(),
            default_text: options.default_text.clone(),
            api_key: options.api_key.clone(),
            names: options.setting_names.clone(),
            kyutai: Sessions::default(),
            running: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        }
    }

    /// Checks a request's text (`param` is its field): not blank, within the length limit.
    ///
    /// # Errors
    /// A bad request naming `param`.
    pub fn check_text(&self, param: &'static str, text: &str) -> Result<(), RequestError> {
        if text.trim().is_empty() {
            return Err(RequestError::bad_request(
                param,
                format!("{param} is empty: give some words to speak"),
            ));
        }
        let n = text.chars().count();
        if n > self.limits.max_text_chars {
            return Err(RequestError::bad_request(
                param,
                format!(
                    "{param} has {n} characters, more than this server's limit of {} \
                     ({}): split it into several requests",
                    self.limits.max_text_chars, self.names.max_text_chars
                ),
            ));
        }
        Ok(())
    }

    /// The generation parameters of a request: the server's, with the request's own text
    /// options.
    ///
    /// # Errors
    /// A bad request naming `normalize` when it is asked for and the model has no text
    /// language.
    pub fn params_for(&self, request: TextRequest) -> Result<GenerationParams, RequestError> {
        let mut params = self.params.clone();
        if request.seed.is_some() {
            params.seed = request.seed;
        }
        if let Some(markup) = request.markup {
            params.markup = markup;
        }
        if let Some(normalize) = request.normalize {
            if normalize && params.text_language.is_none() {
                return Err(RequestError::bad_request(
                    "normalize",
                    format!(
                        "normalize: this server's model has no text language (its config has \
                         no `language` field); start the server with {}, or add `language:` \
                         to the config",
                        self.names.text_language
                    ),
                ));
            }
            params.normalize = normalize;
        }
        Ok(params)
    }

    /// Starts a stream of `text` spoken by `voice` (`protocol` labels its metrics), with
    /// the request's own text options.
    ///
    /// # Errors
    /// Busy when every slot is taken and the queue is full; a bad request for a text the
    /// model cannot speak (a malformed pause tag with markup) or a `normalize` without a
    /// language.
    pub fn synthesize(
        self: &Arc<Self>,
        voice: Arc<VoiceState>,
        text: &str,
        protocol: &'static str,
        request: TextRequest,
    ) -> Result<Synthesis, RequestError> {
        let params = self.params_for(request)?;
        // Chunking and tokenizing the text takes milliseconds (more for very long texts):
        // let the runtime move other tasks off this worker meanwhile.
        let handle = tokio::task::block_in_place(|| self.engine.submit(&voice, text, &params))
            .map_err(|e| {
                if matches!(e, CoreError::Busy(_)) {
                    self.metrics
                        .streams
                        .with_label_values(&[protocol, "busy"])
                        .inc();
                    RequestError::new(ErrorKind::Busy, format!("the server is busy: {e}"))
                } else {
                    // The field holding the text: OpenAI's `input`, else `text`.
                    let field = if protocol == "openai" {
                        "input"
                    } else {
                        "text"
                    };
                    RequestError::from_core(field, &e)
                }
            })?;
        let canceller = handle.canceller();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.running).insert(id, canceller.clone());
        let (tx, rx) = mpsc::channel(64);
        let state = Arc::clone(self);
        let sample_rate = self.engine.model().sample_rate() as f64;
        let cancel = canceller.clone();
        tokio::task::spawn_blocking(move || {
            let outcome = pump(handle, &tx, &cancel, &state, protocol, sample_rate);
            state
                .metrics
                .streams
                .with_label_values(&[protocol, outcome])
                .inc();
            lock(&state.running).remove(&id);
        });
        Ok(Synthesis {
            rx,
            over: false,
            canceller,
            frames: 0,
            last_frame: None,
        })
    }

    /// Cancels every running stream (shutdown past its grace period); returns how many.
    pub fn cancel_all(&self) -> usize {
        let running = lock(&self.running);
        for c in running.values() {
            c.cancel();
        }
        running.len()
    }

    /// Streams running now.
    pub fn running(&self) -> usize {
        lock(&self.running).len()
    }
}

/// Moves one stream's frames from its engine handle (blocking) to the async side, until
/// it ends, fails, is cancelled or runs past the time limit. Returns the outcome label.
fn pump(
    handle: pocket_tts_core::StreamHandle,
    tx: &mpsc::Sender<Pumped>,
    cancel: &StreamCanceller,
    state: &AppState,
    protocol: &'static str,
    sample_rate: f64,
) -> &'static str {
    let started = handle.submitted();
    let deadline = started + state.limits.request_timeout;
    let mut handle = handle;
    let mut samples = 0usize;
    let mut first = true;
    while let Some(item) = handle.next() {
        match item {
            Ok(frame) => {
                if first {
                    first = false;
                    state
                        .metrics
                        .ttfa
                        .with_label_values(&[protocol])
                        .observe(started.elapsed().as_secs_f64());
                }
                samples += frame.samples.len();
                let info = FrameInfo {
                    chunk: frame.chunk,
                    frame: frame.frame,
                    eos_logit: frame.eos_logit,
                    pause: frame.pause,
                };
                if tx
                    .blocking_send(Pumped::Frame(frame.samples, info))
                    .is_err()
                {
                    return "cancelled";
                }
                if Instant::now() > deadline {
                    handle.cancel();
                    let _ = tx.blocking_send(Pumped::Event(SynthEvent::Failed(format!(
                        "the generation ran past the server's time limit of {} s ({})",
                        state.limits.request_timeout.as_secs(),
                        state.names.request_timeout
                    ))));
                    return "timeout";
                }
            }
            Err(e) => {
                if cancel.is_cancelled() {
                    return "cancelled";
                }
                tracing::error!("a stream failed: {e}");
                let failed = SynthEvent::Failed(format!("generation failed: {e}"));
                let _ = tx.blocking_send(Pumped::Event(failed));
                return "failed";
            }
        }
    }
    if cancel.is_cancelled() {
        return "cancelled";
    }
    let _ = tx.blocking_send(Pumped::Done);
    let audio_s = samples as f64 / sample_rate;
    if audio_s > 0.0 {
        state
            .metrics
            .rtf
            .with_label_values(&[protocol])
            .observe(started.elapsed().as_secs_f64() / audio_s);
    }
    "completed"
}
