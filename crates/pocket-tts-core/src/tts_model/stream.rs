//! Streaming generation: the FlowLM loop over text chunks with the EOS rule, overlapped
//! with the Mimi decoder, yielding one audio frame per latent (reference:
//! `TTSModel.generate_audio_stream`, `_generate`, `_autoregressive_generation`).

use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Duration;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
use std::time::Instant;
// std's clock panics in a browser; web-time reads `performance.now()`.
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
use web_time::Instant;

use super::decoder::{decoder_lost, Decoded, DecoderWorker, FrameDecoder, LatentFrame};
use super::params::GenerationParams;
use super::plan::{next_pause_frame, Planned};
use super::sampling::{ChunkProgress, NoiseSource, PreparedChunk, StepOutcome};
use super::TtsModel;
use crate::models::model_state::VoiceState;
use crate::runtime::FlowLmSession;
use crate::torch_rng::TorchRngState;
use crate::{Error, Result};

/// Latents handed to the decoder and not yet received back, at most: the one being
/// decoded and the next one, so the FlowLM is never more than one frame ahead.
const MAX_IN_FLIGHT: usize = 2;

impl TtsModel {
    /// iterator yields one [`AudioFrame`] per generated latent frame (1920 samples at
    /// 24 kHz, 80 ms), each as soon as it is decoded; see [`AudioStream`] for the threads.
    ///
    /// The text is split into chunks and tokenized here (with the opt-in normalization and
    /// pause markup of `params`, see [`TtsModel::model_inputs`]); the FlowLM and Mimi run
    /// when the stream is iterated. A pause is yielded in order as frames of silence
    /// ([`AudioFrame::pause`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for empty text, a malformed pause tag, normalization
    /// without a known language, or out-of-range parameters.
    pub fn generate_stream<'a>(
        &'a self,
        voice: &'a VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<AudioStream<'a>> {
        self.stream(StreamVoice::Borrowed(voice), text, params, true)
    }

    /// [`Self::generate_stream`] from a voice state the stream takes over: it is freed as
    /// soon as the last text chunk has started (its FlowLM state holds a copy from then
    /// on), instead of staying resident for the whole generation beside that copy. A
    /// full-size state holds 48 KiB per prompt position (4.9 MiB for a 105-position
    /// prompt): one-shot callers such as the CLI's `generate` use this to lower their peak
    /// memory. Same frames as [`Self::generate_stream`].
    ///
    /// # Errors
    /// As [`Self::generate_stream`].
    pub fn generate_stream_owned(
        &self,
        voice: VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<AudioStream<'_>> {
        self.stream(StreamVoice::Owned(Some(voice)), text, params, true)
    }

    /// The FlowLM side of [`Self::generate_stream`] alone: the same stream (chunks, EOS
    /// rule, noise, pauses), whose frames carry their [`AudioFrame::latent`] and no samples
    /// (`samples` is empty, but for a pause's zeros), for a [`super::MimiCodec`]'s
    /// [`super::LatentDecoder`] elsewhere (the browser's second Web Worker) to decode in
    /// order: it gives each frame the samples [`Self::generate_stream`] would. Nothing of
    /// Mimi is needed: the model may be loaded [`super::LoadOptions::without_mimi`].
    ///
    /// # Errors
    /// As [`Self::generate_stream`].
    pub fn generate_latent_stream<'a>(
        &'a self,
        voice: &'a VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<AudioStream<'a>> {
        self.stream(StreamVoice::Borrowed(voice), text, params, false)
    }

    /// [`Self::generate_stream`] (`decode`) or [`Self::generate_latent_stream`].
    fn stream<'a>(
        &'a self,
        voice: StreamVoice<'a>,
        text: &str,
        params: &GenerationParams,
        decode: bool,
    ) -> Result<AudioStream<'a>> {
        params.validate()?;
        let chunks = self.plan(text, params)?;
        let frame_len = self.config.mimi.frame_size();
        let max_frames: usize = chunks.iter().map(|c| c.max_frames(frame_len)).sum();
        let chunk_count = chunks
            .iter()
            .filter(|c| matches!(c, Planned::Speech(_)))
            .count();
        let ldim = self.flow_lm.ldim();
        let noise = NoiseSource::new(params, ldim)?;
        let (inline, worker) = if !decode {
            (None, None)
        } else if self.threads >= 2 {
            match DecoderWorker::spawn(self.frame_decoder(true)?) {
                Ok(w) => (None, Some(w)),
                Err(e) => {
                    tracing::warn!(
                        "cannot start the Mimi decoder thread ({e}); decoding on this thread"
                    );
                    (Some(self.frame_decoder(true)?), None)
                }
            }
        } else {
            (Some(self.frame_decoder(false)?), None)
        };
        let threads = if worker.is_some() { 2 } else { 1 };
        Ok(AudioStream {
            decode,
            voice,
            copy_state: params.copy_state,
            continued: None,
            eos_threshold: params.eos_threshold,
            chunk_count,
            frame_len,
            chunk_index: 0,
            max_frames,
            current: None,
            lm: self.runtime.flow_lm_session()?,
            decode_steps: params.sampler_decode_steps,
            previous: vec![0.0; ldim],
            has_previous: false,
            noise,
            inline,
            worker,
            threads,
            in_flight: 0,
            lm_finished: false,
            pending_error: None,
            finished: false,
            yielded: false,
            stats: GenerationStats {
                prefill_times: Vec::with_capacity(chunk_count),
                lm_step_times: Vec::with_capacity(max_frames),
                decode_times: Vec::with_capacity(max_frames),
                ..GenerationStats::default()
            },
            chunks,
        })
    }

    /// The Mimi side of a new generation; `wide_first_frame`: its first frame may use
    /// the wide threads (nothing else runs then).
    pub(super) fn frame_decoder(&self, wide_first_frame: bool) -> Result<FrameDecoder> {
        FrameDecoder::new(
            self.runtime.mimi_session(wide_first_frame)?,
            self.flow_lm.emb_std_values()?,
            self.flow_lm.emb_mean_values()?,
            self.sample_rate() / 200,
        )
    }

    /// Generates the whole audio of `text` (mono samples at [`Self::sample_rate`]).
    ///
    /// # Errors
    /// See [`Self::generate_stream`].
    pub fn generate(
        &self,
        voice: &VoiceState,
        text: &str,
        params: &GenerationParams,
    ) -> Result<Vec<f32>> {
        let mut out = Vec::new();
        for frame in self.generate_stream(voice, text, params)? {
            out.extend_from_slice(&frame?.samples);
        }
        Ok(out)
    }
}

/// One decoded frame of audio, or a piece of a pause.
#[derive(Debug, Clone)]
pub struct AudioFrame {
    /// Mono samples at the model rate (one frame: 1920 at 24 kHz; a pause's piece: at most
    /// that many). Empty for a generated frame of [`TtsModel::generate_latent_stream`].
    pub samples: Vec<f32>,
    /// Index of the text chunk this frame belongs to (a pause: the index of the chunk
    /// after it).
    pub chunk: usize,
    /// Index of the frame within its chunk (a pause: 0).
    pub frame: usize,
    /// The FlowLM's latent for this frame, normalised, `[ldim]` (a pause: empty).
    pub latent: Vec<f32>,
    /// The EOS logit of this frame's FlowLM step (a pause: negative infinity).
    pub eos_logit: f32,
    /// True for silence from pause markup ([`GenerationParams::markup`]): `samples` are
    /// zeros, at most one frame's worth each; a pause is split into as many as it takes.
    pub pause: bool,
}

impl AudioFrame {
    /// A piece of a pause: `samples` zeros, placed before chunk `chunk`.
    pub(super) fn silence(chunk: usize, samples: usize) -> Self {
        Self {
            samples: vec![0.0; samples],
            chunk,
            frame: 0,
            latent: Vec::new(),
            eos_logit: f32::NEG_INFINITY,
            pause: true,
        }
    }
}

/// Timing of a generation so far.
///
/// The per-step lists are allocated once, when the stream starts, for the longest
/// generation the text allows ([`AudioStream::max_frames`]): recording a frame never
/// allocates.
#[derive(Debug, Clone, Default)]
pub struct GenerationStats {
    /// Text prefill time (all chunks): voice-state copy, text embedding, FlowLM prefill.
    pub prefill: Duration,
    /// FlowLM step time (all steps, noise sampling included).
    pub lm: Duration,
    /// Mimi decoding time (all frames yielded), measured on the thread that decodes.
    pub decode: Duration,
    /// Frames yielded (generated ones; the pieces of pauses are not counted).
    pub frames: usize,
    /// Samples of silence yielded for pauses ([`GenerationParams::markup`]).
    pub pause_samples: usize,
    /// Text chunks started.
    pub chunks: usize,
    /// Chunks that ended at the length limit without EOS.
    pub chunks_without_eos: usize,
    /// Text prefill time of each chunk started, in order.
    pub prefill_times: Vec<Duration>,
    /// Time of each FlowLM step, in order. A chunk that ends after EOS ends on a step
    /// whose latent is not decoded, so there can be one more step than frames per chunk.
    pub lm_step_times: Vec<Duration>,
    /// Mimi decoding time of each frame yielded, in order.
    pub decode_times: Vec<Duration>,
}

/// The voice state an [`AudioStream`]'s chunks start from.
enum StreamVoice<'a> {
    /// The caller's ([`TtsModel::generate_stream`]).
    Borrowed(&'a VoiceState),
    /// The stream's own ([`TtsModel::generate_stream_owned`]): `None` once the last text
    /// chunk has started.
    Owned(Option<VoiceState>),
}

impl StreamVoice<'_> {
    fn get(&self) -> Result<&VoiceState> {
        match self {
            Self::Borrowed(v) => Ok(v),
            Self::Owned(Some(v)) => Ok(v),
            Self::Owned(None) => Err(Error::Internal(
                "the stream's voice state was freed before its last chunk".into(),
            )),
        }
    }
}

/// A streaming generation: an iterator of [`AudioFrame`]s (reference:
/// `generate_audio_stream`). Each text chunk starts from a copy of the voice state
/// and a fresh Mimi decoder; its first 5 ms fade in.
///
/// With [`TtsModel::threads`] ≥ 2 the Mimi decoder runs on its own thread
/// ([`DECODER_THREAD_NAME`](super::DECODER_THREAD_NAME)) while the FlowLM runs on the thread that calls
/// [`next`](Iterator::next): the decoder decodes latent *n* while the FlowLM computes latent
/// *n + 1*, and a frame is yielded as soon as it is decoded (the first frame of the stream
/// never waits for a second FlowLM step). Frames, their order and content are those of the
/// sequential generation (`threads == 1`). Dropping the stream stops the decoder thread
/// (after at most the frame it is decoding) and joins it. An error on either side is
/// yielded as `Err` in its place in the frame order, and ends the stream.
pub struct AudioStream<'a> {
    /// False for [`TtsModel::generate_latent_stream`]: frames carry latents, not samples.
    decode: bool,
    voice: StreamVoice<'a>,
    /// `GenerationParams::copy_state`: `false` chains the chunks' FlowLM states.
    copy_state: bool,
    /// With `copy_state == false`, the state the previous chunk left (the current chunk
    /// started from it).
    continued: Option<VoiceState>,
    eos_threshold: f32,
    chunks: VecDeque<Planned>,
    chunk_count: usize,
    /// Samples per frame (at most this many per piece of a pause).
    frame_len: usize,
    chunk_index: usize,
    max_frames: usize,
    current: Option<ChunkProgress>,
    lm: Box<dyn FlowLmSession + 'a>,
    decode_steps: usize,
    /// The last latent, fed back as the next step's input (BOS when `!has_previous`).
    previous: Vec<f32>,
    has_previous: bool,
    noise: NoiseSource,
    /// Sequential decoding on the calling thread (`threads == 1`).
    inline: Option<FrameDecoder>,
    /// Overlapped decoding (`threads >= 2`).
    worker: Option<DecoderWorker>,
    threads: usize,
    in_flight: usize,
    lm_finished: bool,
    pending_error: Option<Error>,
    finished: bool,
    /// Whether any frame (generated or pause) has been yielded.
    yielded: bool,
    stats: GenerationStats,
}

impl AudioStream<'_> {
    /// Timings so far.
    pub fn stats(&self) -> &GenerationStats {
        &self.stats
    }

    /// The FlowLM state as it stands: the voice state followed by every chunk's text and
    /// frames generated so far (reference: the `model_state` a generation with
    /// `copy_state=False` leaves; with `copy_state`, the reference's copy is dropped, but
    /// the state is the same). After the last frame it is the state a next generation
    /// continues from (pass it as the voice with [`GenerationParams::copy_state`] `false`).
    /// Before the first chunk, the voice state itself. The FlowLM may run one step ahead
    /// of the frames yielded.
    ///
    /// # Errors
    /// [`Error::Tensor`] if the KV caches cannot be read back.
    pub fn model_state(&self) -> Result<VoiceState> {
        match self.lm.export_state()? {
            Some(state) => Ok(state),
            None => Ok(self.voice.get()?.clone()),
        }
    }

    /// Where the sampling noise's generator stands: after the last frame, the state
    /// torch's default generator has after the reference's same generation (give its
    /// [`TorchRngState::to_bytes`] to `torch.set_rng_state`). The FlowLM may run one step
    /// ahead of the frames yielded, so before the end it can include a step not yet seen.
    pub fn torch_rng_state(&self) -> TorchRngState {
        self.noise.torch_rng_state()
    }

    /// The text chunks not started yet.
    pub fn pending_chunks(&self) -> impl Iterator<Item = &str> {
        self.chunks.iter().filter_map(|c| match c {
            Planned::Speech(c) => Some(c.text.as_str()),
            Planned::Pause(_) => None,
        })
    }

    /// Number of text chunks of the whole text (pauses not counted).
    pub fn chunk_count(&self) -> usize {
        self.chunk_count
    }

    /// Frames generated at most (sum of [`TtsModel::max_gen_len`] over the chunks, plus
    /// the pieces of the pauses); EOS usually ends each chunk well before.
    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// Threads generating: 1 (sequential) or 2 (FlowLM and Mimi decoder overlapped).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Starts the next chunk: FlowLM prefill of its text.
    fn start_chunk(&mut self, chunk: &PreparedChunk) -> Result<ChunkProgress> {
        let t0 = Instant::now();
        self.has_previous = false;
        if !self.copy_state {
            if let Some(state) = self.lm.export_state()? {
                self.continued = Some(state);
            }
        }
        let voice = match &self.continued {
            Some(c) => c,
            None => self.voice.get()?,
        };
        self.lm
            .start_chunk(voice, &chunk.tokens, chunk.max_gen_len)?;
        let last = !self.chunks.iter().any(|c| matches!(c, Planned::Speech(_)));
        if let (true, StreamVoice::Owned(v)) = (last, &mut self.voice) {
            // The FlowLM state holds its copy: nothing reads the voice state any more.
            *v = None;
        }
        self.noise.skip_prefill_draw();
        let dt = t0.elapsed();
        self.stats.prefill += dt;
        self.stats.prefill_times.push(dt);
        self.stats.chunks += 1;
        let index = self.chunk_index;
        self.chunk_index += 1;
        Ok(ChunkProgress::new(index, chunk))
    }

    /// Runs the FlowLM until it produces the next latent to decode (starting chunks as
    /// needed and applying the EOS rules); `Ok(None)` once every chunk is done.
    fn produce(&mut self) -> Result<Option<LatentFrame>> {
        loop {
            let mut cur = match self.current {
                Some(c) => c,
                None => {
                    if let Some(n) = next_pause_frame(&mut self.chunks, self.frame_len) {
                        return Ok(Some(LatentFrame::pause(self.chunk_index, n)));
                    }
                    let Some(Planned::Speech(chunk)) = self.chunks.pop_front() else {
                        return Ok(None);
                    };
                    let c = self.start_chunk(&chunk)?;
                    self.current = Some(c);
                    c
                }
            };
            if cur.exhausted() {
                self.stats.chunks_without_eos += 1;
                tracing::warn!(
                    "maximum generation length reached without EOS, this very often indicates an error"
                );
                self.end_chunk();
                continue;
            }
            let t0 = Instant::now();
            let noise = self.noise.sample();
            let mut latent = vec![0f32; self.previous.len()];
            // The first step of a chunk runs before the decoder has anything to do, so it
            // may use the wide (prefill) threads.
            let previous = self.has_previous.then_some(self.previous.as_slice());
            let eos_logit = self.lm.step(
                previous,
                noise,
                self.decode_steps,
                previous.is_none(),
                &mut latent,
            )?;
            self.previous.copy_from_slice(&latent);
            self.has_previous = true;
            let dt = t0.elapsed();
            self.stats.lm += dt;
            self.stats.lm_step_times.push(dt);
            match cur.record(eos_logit, self.eos_threshold) {
                StepOutcome::EndOfChunk => {
                    self.end_chunk();
                    continue;
                }
                StepOutcome::Frame(frame) => {
                    self.current = Some(cur);
                    return Ok(Some(LatentFrame {
                        chunk: cur.index,
                        frame,
                        latent,
                        eos_logit,
                        pause: 0,
                    }));
                }
            }
        }
    }

    fn end_chunk(&mut self) {
        self.current = None;
        self.has_previous = false;
    }

    /// Records a decoded frame and makes it an [`AudioFrame`].
    fn deliver(&mut self, job: LatentFrame, samples: Vec<f32>, time: Duration) -> AudioFrame {
        self.yielded = true;
        if job.pause > 0 {
            self.stats.pause_samples += samples.len();
            return AudioFrame::silence(job.chunk, samples.len());
        }
        self.stats.decode += time;
        self.stats.decode_times.push(time);
        self.stats.frames += 1;
        AudioFrame {
            samples,
            chunk: job.chunk,
            frame: job.frame,
            latent: job.latent,
            eos_logit: job.eos_logit,
            pause: false,
        }
    }

    /// [`TtsModel::generate_latent_stream`]: one FlowLM step, its latent yielded undecoded.
    fn next_latent(&mut self) -> Option<Result<AudioFrame>> {
        match self.produce() {
            Ok(Some(job)) if job.pause > 0 => {
                let samples = vec![0.0; job.pause];
                Some(Ok(self.deliver(job, samples, Duration::ZERO)))
            }
            Ok(Some(job)) => {
                self.yielded = true;
                self.stats.frames += 1;
                Some(Ok(AudioFrame {
                    samples: Vec::new(),
                    chunk: job.chunk,
                    frame: job.frame,
                    latent: job.latent,
                    eos_logit: job.eos_logit,
                    pause: false,
                }))
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// `threads == 1`: one FlowLM step, then one decode, on this thread.
    fn next_sequential(&mut self) -> Option<Result<AudioFrame>> {
        let job = match self.produce() {
            Ok(Some(job)) => job,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let decoder = self.inline.as_mut()?;
        let t0 = Instant::now();
        let samples = decoder.decode_job(&job);
        let time = t0.elapsed();
        Some(samples.map(|s| self.deliver(job, s, time)))
    }

    fn receive(&mut self, d: Decoded) -> Result<AudioFrame> {
        self.in_flight -= 1;
        let samples = d.samples?;
        Ok(self.deliver(d.job, samples, d.time))
    }

    /// `threads >= 2`: the FlowLM runs here, at most one latent ahead of the decoder
    /// thread; a decoded frame is returned as soon as there is one.
    fn next_overlapped(&mut self) -> Option<Result<AudioFrame>> {
        loop {
            let worker = self.worker.as_ref()?;
            if self.in_flight > 0 {
                match worker.results.try_recv() {
                    Ok(d) => return Some(self.receive(d)),
                    Err(mpsc::TryRecvError::Empty) => {}
                    Err(mpsc::TryRecvError::Disconnected) => return Some(Err(self.lost())),
                }
            }
            // The first audio of the stream must not wait for a second FlowLM step.
            let first_frame_pending = !self.yielded && self.in_flight > 0;
            if !self.lm_finished && self.in_flight < MAX_IN_FLIGHT && !first_frame_pending {
                match self.produce() {
                    Ok(Some(job)) => {
                        let sent = self
                            .worker
                            .as_ref()
                            .and_then(|w| w.jobs.as_ref())
                            .is_some_and(|j| j.send(job).is_ok());
                        if !sent {
                            return Some(Err(self.lost()));
                        }
                        self.in_flight += 1;
                    }
                    Ok(None) => self.lm_finished = true,
                    Err(e) => {
                        // Frames already handed to the decoder come first.
                        self.lm_finished = true;
                        self.pending_error = Some(e);
                    }
                }
                continue;
            }
            if self.in_flight > 0 {
                let worker = self.worker.as_ref()?;
                return match worker.results.recv() {
                    Ok(d) => Some(self.receive(d)),
                    Err(_) => Some(Err(self.lost())),
                };
            }
            return self.pending_error.take().map(Err);
        }
    }

    /// The decoder thread is gone without a result: its panic, if any.
    fn lost(&mut self) -> Error {
        self.worker
            .take()
            .and_then(DecoderWorker::shutdown)
            .unwrap_or_else(decoder_lost)
    }

    /// Ends the stream: frees the caches and stops the decoder thread.
    fn finish(&mut self) {
        self.finished = true;
        self.chunks.clear();
        self.end_chunk();
        self.inline = None;
        if let Some(w) = self.worker.take() {
            if let Some(e) = w.shutdown() {
                tracing::warn!("{e}");
            }
        }
    }
}

impl Iterator for AudioStream<'_> {
    type Item = Result<AudioFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let item = if !self.decode {
            self.next_latent()
        } else if self.worker.is_some() {
            self.next_overlapped()
        } else {
            self.next_sequential()
        };
        if !matches!(item, Some(Ok(_))) {
            self.finish();
        }
        item
    }
}

impl Drop for AudioStream<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            // A panic on the decoder thread was already reported, or no longer matters.
            let _ = w.shutdown();
        }
    }
}
