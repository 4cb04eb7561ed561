//! The batched engine: many generations at once on one shared model, with continuous
//! batching (ours; the reference serves one generation at a time).
//!
//! An [`Engine`] owns an `Arc<TtsModel>` and one scheduler thread. [`Engine::submit`]
//! prepares a request's text (chunks, tokens, frame budgets, as
//! [`TtsModel::generate_stream`]) and queues it; the caller gets a [`StreamHandle`], an
//! iterator of [`AudioFrame`]s that is `Send + 'static`. The scheduler works per step,
//! as vLLM schedules per iteration:
//!
//! 1. queued requests join between passes, up to [`EngineOptions::max_streams`];
//! 2. one batched FlowLM pass advances every generating stream by one frame and feeds
//!    the newcomers' text prefill in pieces (at most
//!    [`EngineOptions::prefill_per_pass`] positions per pass while others generate, so a
//!    long text does not stall them); each weight is read once per pass;
//! 3. the Mimi decoder frames of the streams that produced a latent are decoded during
//!    the next pass (with 2 threads: one thread decodes a share of them beside the FlowLM
//!    pass, whose thread then decodes the rest; each share is one batched decode, every
//!    layer one GEMM over its frames' rows) and sent to their handles, each before its
//!    stream moves to its next chunk or ends;
//! 4. streams that ended, failed, or whose handle was dropped leave; their slots are free
//!    for the next pass.
//!
//! A stream's frames are those of [`TtsModel::generate_stream`] run alone with the same
//! parameters (same text chunks, EOS rule, noise sequence for a seed, fade-in): the
//! batched FlowLM pass gives each stream the bits of its solo step. An error in one
//! stream (a voice state that does not fit the model, …) fails that stream only.

mod scheduler;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::plan::Planned;
use super::{AudioFrame, GenerationParams, TtsModel};
use crate::models::model_state::VoiceState;
use crate::torch_rng::TorchRngState;
use crate::{Error, Result};

/// Name of the engine's scheduler thread (at most 15 bytes: the Linux limit).
pub const ENGINE_THREAD_NAME: &str = "pocket-tts-eng";

/// Limits and scheduling of an [`Engine`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// Streams generating at once (batch size of a pass). Default 8.
    pub max_streams: usize,
    /// Requests waiting for a stream slot; one more makes [`Engine::submit`] return
    /// [`Error::Busy`]. Default 16.
    pub max_queued: usize,
    /// Text positions prefilled per pass, all newcomers together (oldest first), while
    /// other streams are generating: each position costs about what a stream's step
    /// costs, so this bounds how long a newcomer's prefill delays the others' next frame.
    /// While no stream is generating, a pass may prefill 8 times as many (fewer passes,
    /// earlier first audio). The pass's scratch takes ~40 KB per position at full size.
    /// Default 64.
    pub prefill_per_pass: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            max_streams: 8,
            max_queued: 16,
            prefill_per_pass: 64,
        }
    }
}

impl EngineOptions {
    /// # Errors
    /// [`Error::InvalidArgument`] whose `field` names an option that is 0
    /// (`"max_streams"`, `"prefill_per_pass"`).
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("max_streams", self.max_streams),
            ("prefill_per_pass", self.prefill_per_pass),
        ] {
            if v == 0 {
                return Err(Error::invalid_field(name, "must be at least 1"));
            }
        }
        Ok(())
    }
}

/// Timing of one stream of an [`Engine`], complete once its handle has yielded its last
/// frame ([`StreamHandle::stats`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamStats {
    /// From [`Engine::submit`] to the pass that took the stream in (waiting for a slot).
    pub queued: Duration,
    /// From [`Engine::submit`] to the first frame sent (time to first audio).
    pub time_to_first_audio: Option<Duration>,
    /// From [`Engine::submit`] to the last frame sent.
    pub total: Duration,
    /// Frames sent (80 ms each at 12.5 Hz; the pieces of pauses are not counted).
    pub frames: usize,
    /// Samples of silence sent for pauses ([`GenerationParams::markup`]).
    pub pause_samples: usize,
    /// Text chunks started.
    pub chunks: usize,
    /// Chunks that ended at the length limit without EOS.
    pub chunks_without_eos: usize,
}

/// What the scheduler sends a handle.
enum Event {
    Frame(AudioFrame),
    Failed(Error),
    /// The stream's timing and where its noise generator ended.
    Done(StreamStats, TorchRngState),
}

/// A request waiting for a slot.
struct Pending {
    voice: Arc<VoiceState>,
    chunks: VecDeque<Planned>,
    params: GenerationParams,
    submitted: Instant,
    events: mpsc::Sender<Event>,
    cancel: Arc<AtomicBool>,
}

/// State shared by the [`Engine`], its handles and the scheduler thread.
struct Shared {
    queue: Mutex<Queue>,
    wake: Condvar,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Pending>,
    /// Streams the scheduler holds (generating or prefilling).
    active: usize,
    stop: bool,
}

/// Many generations at once on one model (see the module docs). Dropping the engine
/// stops the scheduler after its current pass; streams still running end with an
/// [`Error::Internal`] naming the shutdown.
pub struct Engine {
    model: Arc<TtsModel>,
    options: EngineOptions,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Starts the scheduler thread over `model` (its backend and threads: the Mimi
    /// frames of a pass are spread over [`TtsModel::threads`] threads, and the FlowLM pass
    /// uses up to two).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for bad options; [`Error::Io`] when the thread cannot be
    /// spawned.
    pub fn new(model: Arc<TtsModel>, options: EngineOptions) -> Result<Self> {
        options.validate()?;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
        });
        let thread = {
            let (model, shared, options) =
                (Arc::clone(&model), Arc::clone(&shared), options.clone());
            std::thread::Builder::new()
                .name(ENGINE_THREAD_NAME.into())
                .spawn(move || scheduler::run(&model, &shared, &options))
                .map_err(|e| Error::io(ENGINE_THREAD_NAME, e))?
        };
        Ok(Self {
            model,
            options,
            shared,
            thread: Some(thread),
        })
    }

    /// The model the engine runs.
    pub fn model(&self) -> &Arc<TtsModel> {
        &self.model
    }

    /// The engine's limits.
    pub fn options(&self) -> &EngineOptions {
        &self.options
    }

    /// Streams generating now, and requests waiting for a slot.
    pub fn load(&self) -> (usize, usize) {
        let q = lock(&self.shared.queue);
        (q.active, q.pending.len())
    }

    /// Queues the generation of `text` with `voice` (shared with the engine until the
    /// stream ends) and `params`; its frames arrive on the returned handle as they are
    /// decoded.
    ///
    /// # Errors
    /// At once, without queuing: [`Error::InvalidArgument`] for empty text, a malformed
    /// pause tag, normalization without a language, or out-of-range parameters (as
    /// [`TtsModel::generate_stream`]); [`Error::Busy`] when
    /// `max_streams` streams run and `max_queued` requests wait; [`Error::Unsupported`]
    /// for [`GenerationParams::copy_state`] `false` (chained chunk states run on
    /// [`TtsModel::generate_stream`]); [`Error::Internal`] when the scheduler has stopped.
    pub fn submit(
        &self,
        voice: &Arc<VoiceState>,
        text: &str,
        params: &GenerationParams,
    ) -> Result<StreamHandle> {
        params.validate()?;
        if !params.copy_state {
            return Err(Error::Unsupported(
                "copy_state = false: the batched engine starts every chunk from the voice \
                 state; generate with TtsModel::generate_stream to chain the chunks' states"
                    .into(),
            ));
        }
        let chunks = self.model.plan(text, params)?;
        let (events, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let submitted = Instant::now();
        {
            let mut q = lock(&self.shared.queue);
            if q.stop {
                return Err(Error::Internal("the engine has stopped".into()));
            }
            let slots = self.options.max_streams.saturating_sub(q.active);
            if q.pending.len() >= slots + self.options.max_queued {
                return Err(Error::Busy(format!(
                    "{} streams are generating and {} requests wait (max_streams {}, \
                     max_queued {}): retry later",
                    q.active,
                    q.pending.len(),
                    self.options.max_streams,
                    self.options.max_queued
                )));
            }
            q.pending.push_back(Pending {
                voice: Arc::clone(voice),
                chunks,
                params: params.clone(),
                submitted,
                events,
                cancel: Arc::clone(&cancel),
            });
        }
        self.shared.wake.notify_all();
        Ok(StreamHandle {
            events: rx,
            cancel,
            stats: StreamStats::default(),
            torch_rng_state: None,
            finished: false,
            submitted,
        })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        lock(&self.shared.queue).stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                tracing::warn!("the engine's scheduler thread panicked");
            }
        }
    }
}

/// Locks `m`, taking over a lock poisoned by a panicking holder (the queue stays
/// consistent: every change to it is a single push, pop or counter update).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One stream of an [`Engine`]: an iterator of its [`AudioFrame`]s (1920 samples, 80 ms
/// at 24 kHz each), in order, as they are decoded. An error ends it (`Some(Err)`, then
/// `None`). `Send + 'static`: move it to the thread (or task) that consumes it. Dropping
/// it, or [`Self::cancel`], frees its engine slot at the next pass.
#[derive(Debug)]
pub struct StreamHandle {
    events: mpsc::Receiver<Event>,
    cancel: Arc<AtomicBool>,
    stats: StreamStats,
    torch_rng_state: Option<TorchRngState>,
    finished: bool,
    submitted: Instant,
}

impl StreamHandle {
    /// Stops the stream: the scheduler drops it at its next pass; the iterator ends.
    pub fn cancel(&mut self) {
        self.cancel.store(true, Ordering::Release);
        self.finished = true;
    }

    /// A handle that cancels this stream from elsewhere (another thread or task: a server
    /// whose client disconnected while this handle waits for a frame). Cancelling frees
    /// the engine slot at the next pass; this handle's iterator then ends.
    pub fn canceller(&self) -> StreamCanceller {
        StreamCanceller(Arc::clone(&self.cancel))
    }

    /// The stream's timing; complete once the iterator has returned `None` after its
    /// last frame.
    pub fn stats(&self) -> &StreamStats {
        &self.stats
    }

    /// Where the stream's sampling-noise generator ended: the state torch's default
    /// generator has after the reference's same generation (for `torch.set_rng_state`,
    /// [`TorchRngState::to_bytes`]). `None` until the iterator has returned `None` after
    /// the last frame, and for a stream that failed or was cancelled.
    pub fn torch_rng_state(&self) -> Option<&TorchRngState> {
        self.torch_rng_state.as_ref()
    }

    /// When the request was submitted.
    pub fn submitted(&self) -> Instant {
        self.submitted
    }

    fn lost(&mut self) -> Error {
        self.finished = true;
        Error::Internal("the engine stopped before the stream ended".into())
    }

    fn on_event(&mut self, e: Event) -> Option<Result<AudioFrame>> {
        match e {
            Event::Frame(f) => Some(Ok(f)),
            Event::Failed(err) => {
                self.finished = true;
                Some(Err(err))
            }
            Event::Done(stats, rng) => {
                self.finished = true;
                self.stats = stats;
                self.torch_rng_state = Some(rng);
                None
            }
        }
    }
}

impl Iterator for StreamHandle {
    type Item = Result<AudioFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match self.events.recv() {
            Ok(e) => self.on_event(e),
            // Cancelled from elsewhere (a `StreamCanceller`): the scheduler dropped the
            // stream without a last event; the iterator just ends.
            Err(_) if self.cancel.load(Ordering::Acquire) => {
                self.finished = true;
                None
            }
            Err(_) => Some(Err(self.lost())),
        }
    }
}

/// Cancels one [`StreamHandle`]'s stream from another thread or task (see
/// [`StreamHandle::canceller`]). Cloning shares the same stream.
#[derive(Debug, Clone)]
pub struct StreamCanceller(Arc<AtomicBool>);

impl StreamCanceller {
    /// Asks the scheduler to drop the stream at its next pass (its handle's iterator ends
    /// with the frames already sent). Idempotent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the stream was cancelled (by this, its handle, or the handle's drop).
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Release);
    }
}
