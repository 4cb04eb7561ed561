//! The engine's scheduler thread: admission, one batched FlowLM pass per iteration, the
//! EOS rule per stream, the Mimi frames of the pass decoded over the model's threads,
//! and streams leaving (reference, per stream: `TTSModel._generate`,
//! `_autoregressive_generation`, `_decode_audio_worker`).

use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use pocket_tts_simd as simd;

use super::{lock, EngineOptions, Event, Pending, Shared, StreamStats};
use crate::models::model_state::VoiceState;
use crate::runtime::{BatchStep, FlowLmBatch};
use crate::tts_model::decoder::{panic_error, FrameDecoder, ManyJob};
use crate::tts_model::plan::{next_pause_frame, Planned};
use crate::tts_model::sampling::{ChunkProgress, NoiseSource, StepOutcome};
use crate::tts_model::{AudioFrame, TtsModel};
use crate::{Error, Result};

/// How many times [`EngineOptions::prefill_per_pass`] positions a pass may prefill while
/// no stream is generating (nothing to delay then; fewer passes, earlier first audio).
const PREFILL_BURST: usize = 8;

/// One stream the scheduler holds.
struct Active {
    slot: usize,
    voice: Arc<VoiceState>,
    chunks: VecDeque<Planned>,
    chunk_index: usize,
    current: Option<ChunkProgress>,
    /// The last latent, fed back as the next step's input (BOS when `!has_previous`).
    previous: Vec<f32>,
    has_previous: bool,
    noise: NoiseSource,
    decoder: FrameDecoder,
    eos_threshold: f32,
    decode_steps: usize,
    events: mpsc::Sender<Event>,
    cancel: Arc<AtomicBool>,
    submitted: Instant,
    stats: StreamStats,
    /// Set when the stream is over (done, failed or cancelled): it leaves after the pass.
    over: bool,
    /// The stream's last event, sent by `leave` once its slot is free (a client that
    /// sees its stream end can count on its place being available).
    end: Option<Event>,
}

impl Active {
    /// Ends the stream with `e` (sent once its slot is free, see `leave`).
    fn fail(&mut self, e: Error) {
        self.end = Some(Event::Failed(e));
        self.over = true;
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Acquire)
    }

    /// Sends the frames of silence of the pauses at the front of the plan (all of them:
    /// the frames before them have been sent). False when the handle is gone.
    fn send_pauses(&mut self) -> bool {
        let frame_len = self.decoder.frame_len();
        while let Some(n) = next_pause_frame(&mut self.chunks, frame_len) {
            let frame = AudioFrame::silence(self.chunk_index, n);
            if self.events.send(Event::Frame(frame)).is_err() {
                return false;
            }
            self.stats.pause_samples += n;
            if self.stats.time_to_first_audio.is_none() {
                self.stats.time_to_first_audio = Some(self.submitted.elapsed());
            }
        }
        true
    }

    /// Moves to the stream's next chunk if it has none (starting its prefill, after
    /// sending the pauses before it), skipping chunks that used their whole budget; marks
    /// the stream over when no chunk is left.
    fn advance(&mut self, batch: &mut dyn FlowLmBatch) -> Result<()> {
        loop {
            match self.current {
                Some(cur) if cur.exhausted() => {
                    self.stats.chunks_without_eos += 1;
                    tracing::warn!(
                        "maximum generation length reached without EOS, this very often indicates an error"
                    );
                    self.end_chunk();
                }
                Some(_) => return Ok(()),
                None => {
                    if !self.send_pauses() {
                        // The handle is gone: nobody listens, stop generating.
                        self.over = true;
                        return Ok(());
                    }
                    let Some(Planned::Speech(chunk)) = self.chunks.pop_front() else {
                        self.stats.total = self.submitted.elapsed();
                        self.end = Some(Event::Done(
                            self.stats.clone(),
                            self.noise.torch_rng_state(),
                        ));
                        self.over = true;
                        return Ok(());
                    };
                    batch.start_chunk(self.slot, &self.voice, &chunk.tokens, chunk.max_gen_len)?;
                    self.noise.skip_prefill_draw();
                    self.current = Some(ChunkProgress::new(self.chunk_index, &chunk));
                    self.chunk_index += 1;
                    self.stats.chunks += 1;
                    self.has_previous = false;
                }
            }
        }
    }

    fn end_chunk(&mut self) {
        self.current = None;
        self.has_previous = false;
    }
}

/// The scheduler loop; returns when the engine is dropped.
pub(super) fn run(model: &TtsModel, shared: &Shared, options: &EngineOptions) {
    let mut batch = model.runtime.flow_lm_batch();
    let team = simd::Team::new(model.threads());
    let ldim = model.flow_lm.ldim();
    let mut streams: Vec<Active> = Vec::new();
    let mut latents: Vec<f32> = Vec::new();
    let mut eos: Vec<f32> = Vec::new();
    let mut noise: Vec<f32> = Vec::new();
    loop {
        let Some(newcomers) = wait_for_work(shared, &streams, options) else {
            for s in &mut streams {
                s.fail(Error::Internal("the engine was shut down".into()));
            }
            leave(&mut streams, &mut *batch, shared);
            return;
        };
        for p in newcomers {
            if let Some(a) = admit(model, &mut *batch, p, ldim) {
                streams.push(a);
            }
        }
        // Requests refused at admission no longer count.
        lock(&shared.queue).active = streams.len();
        for s in streams.iter_mut() {
            if s.cancelled() {
                s.over = true;
            } else if let Err(e) = s.advance(&mut *batch) {
                s.fail(e);
            }
        }
        leave(&mut streams, &mut *batch, shared);
        if streams.is_empty() {
            continue;
        }
        // The pass: prefill pieces (oldest stream first) and one step per generating one.
        // While none generates, a burst of newcomers is prefilled in one pass (up to
        // `PREFILL_BURST` times the budget, which bounds the pass's scratch memory).
        let generating = streams.iter().any(|s| batch.pending_prefill(s.slot) == 0);
        let mut budget = if generating {
            options.prefill_per_pass
        } else {
            options.prefill_per_pass.saturating_mul(PREFILL_BURST)
        };
        let mut prefill = Vec::new();
        let mut stepping = Vec::new();
        for (i, s) in streams.iter().enumerate() {
            let pending = batch.pending_prefill(s.slot);
            if pending == 0 {
                stepping.push(i);
            } else if budget > 0 {
                let n = pending.min(budget);
                budget -= n;
                prefill.push((s.slot, n));
            }
        }
        noise.resize(stepping.len() * ldim, 0.0);
        for (k, &i) in stepping.iter().enumerate() {
            noise[k * ldim..(k + 1) * ldim].copy_from_slice(streams[i].noise.sample());
        }
        let steps: Vec<BatchStep<'_>> = stepping
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let s = &streams[i];
                BatchStep {
                    slot: s.slot,
                    previous: s.has_previous.then_some(s.previous.as_slice()),
                    noise: &noise[k * ldim..(k + 1) * ldim],
                    decode_steps: s.decode_steps,
                }
            })
            .collect();
        latents.resize(steps.len() * ldim, 0.0);
        eos.resize(steps.len(), 0.0);
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            batch.run(&prefill, &steps, &mut latents, &mut eos)
        }))
        .unwrap_or_else(|p| Err(panic_error(p.as_ref())));
        drop(steps);
        if let Err(e) = ran {
            // A failed pass leaves its streams' states undefined: end all of them.
            let msg = format!("a batched FlowLM pass failed: {e}");
            for s in streams.iter_mut() {
                s.fail(Error::Internal(msg.clone()));
            }
            leave(&mut streams, &mut *batch, shared);
            continue;
        }
        let frames = record_steps(&mut streams, &stepping, &latents, &eos, ldim);
        decode_and_send(&mut streams, frames, &team);
        leave(&mut streams, &mut *batch, shared);
    }
}

/// Waits until there is work: returns the requests to admit now (possibly none when
/// streams are running), or `None` when the engine stops.
fn wait_for_work(
    shared: &Shared,
    streams: &[Active],
    options: &EngineOptions,
) -> Option<Vec<Pending>> {
    let mut q = lock(&shared.queue);
    loop {
        if q.stop {
            for p in q.pending.drain(..) {
                let _ = p.events.send(Event::Failed(Error::Internal(
                    "the engine was shut down".into(),
                )));
            }
            return None;
        }
        let mut taken = Vec::new();
        while streams.len() + taken.len() < options.max_streams {
            let Some(p) = q.pending.pop_front() else {
                break;
            };
            if !p.cancel.load(Ordering::Acquire) {
                taken.push(p);
            }
        }
        q.active = streams.len() + taken.len();
        if q.active > 0 {
            return Some(taken);
        }
        q = shared
            .wake
            .wait(q)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Takes a request in: a FlowLM slot and a Mimi decoder of its own. A failure fails
/// that request only.
fn admit(model: &TtsModel, batch: &mut dyn FlowLmBatch, p: Pending, ldim: usize) -> Option<Active> {
    let parts = (|| {
        let noise = NoiseSource::new(&p.params, ldim)?;
        let decoder = model.frame_decoder(false)?;
        let slot = batch.open()?;
        Ok::<_, Error>((noise, decoder, slot))
    })();
    let (noise, decoder, slot) = match parts {
        Ok(v) => v,
        Err(e) => {
            let _ = p.events.send(Event::Failed(e));
            return None;
        }
    };
    Some(Active {
        slot,
        voice: p.voice,
        chunks: p.chunks,
        chunk_index: 0,
        current: None,
        previous: vec![0.0; ldim],
        has_previous: false,
        noise,
        decoder,
        eos_threshold: p.params.eos_threshold,
        decode_steps: p.params.sampler_decode_steps,
        events: p.events,
        cancel: p.cancel,
        stats: StreamStats {
            queued: p.submitted.elapsed(),
            ..StreamStats::default()
        },
        submitted: p.submitted,
        over: false,
        end: None,
    })
}

/// Applies the EOS rule to each step of the pass; returns `(stream, chunk, frame,
/// latent, eos)` of the latents to decode.
fn record_steps(
    streams: &mut [Active],
    stepping: &[usize],
    latents: &[f32],
    eos: &[f32],
    ldim: usize,
) -> Vec<LatentJob> {
    let mut frames = Vec::with_capacity(stepping.len());
    for (k, &i) in stepping.iter().enumerate() {
        let s = &mut streams[i];
        let latent = &latents[k * ldim..(k + 1) * ldim];
        s.previous.copy_from_slice(latent);
        s.has_previous = true;
        let Some(mut cur) = s.current else { continue };
        match cur.record(eos[k], s.eos_threshold) {
            StepOutcome::EndOfChunk => s.end_chunk(),
            StepOutcome::Frame(frame) => {
                s.current = Some(cur);
                frames.push((i, cur.index, frame, latent.to_vec(), eos[k]));
            }
        }
    }
    frames
}

/// A latent of the pass to decode: `(stream, chunk, frame, latent, eos logit)`.
type LatentJob = (usize, usize, usize, Vec<f32>, f32);

/// The frames one thread decodes together, and their results.
type Group<'g, 'j> = (&'g mut [ManyJob<'j>], Vec<Result<()>>);

/// Decodes the pass's latents and sends the frames: the frames are split into one group
/// per thread of `team`, and each group is decoded together, layer by layer
/// (`FrameDecoder::decode_many`). The frames are allocated here, on the scheduler thread,
/// so that the decoding threads do not each grow a malloc arena.
fn decode_and_send(streams: &mut [Active], frames: Vec<LatentJob>, team: &simd::Team) {
    if frames.is_empty() {
        return;
    }
    let mut buffers: Vec<Vec<f32>> = frames
        .iter()
        .map(|f| vec![0f32; streams[f.0].decoder.frame_len()])
        .collect();
    let results = {
        let mut decoders: Vec<Option<&mut FrameDecoder>> =
            streams.iter_mut().map(|s| Some(&mut s.decoder)).collect();
        // One frame per stream and pass: every decoder is taken once.
        let mut jobs: Vec<ManyJob<'_>> = frames
            .iter()
            .zip(buffers.iter_mut())
            .filter_map(|((i, chunk, frame, latent, _), samples)| {
                Some(ManyJob {
                    decoder: decoders[*i].take()?,
                    chunk: *chunk,
                    frame: *frame,
                    latent,
                    samples,
                })
            })
            .collect();
        let per_group = jobs.len().div_ceil(team.threads().max(1)).max(1);
        let groups: Vec<Mutex<Group<'_, '_>>> = jobs
            .chunks_mut(per_group)
            .map(|g| Mutex::new((g, Vec::new())))
            .collect();
        team.run_chunks(groups.len(), |g| {
            let mut guard = lock(&groups[g]);
            let (jobs, out) = &mut *guard;
            let n = jobs.len();
            *out = std::panic::catch_unwind(AssertUnwindSafe(|| FrameDecoder::decode_many(jobs)))
                .unwrap_or_else(|p| {
                    let msg = panic_error(p.as_ref()).to_string();
                    (0..n).map(|_| Err(Error::Internal(msg.clone()))).collect()
                });
        });
        let mut results: Vec<Result<()>> = groups
            .into_iter()
            .flat_map(|g| {
                g.into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .1
            })
            .collect();
        results.resize_with(frames.len(), || {
            Err(Error::Internal("a Mimi frame was not decoded".into()))
        });
        results
    };
    for (((i, chunk, frame, latent, eos_logit), samples), result) in
        frames.into_iter().zip(buffers).zip(results)
    {
        let s = &mut streams[i];
        match result {
            Ok(()) => {
                let f = AudioFrame {
                    samples,
                    chunk,
                    frame,
                    latent,
                    eos_logit,
                    pause: false,
                };
                if s.events.send(Event::Frame(f)).is_err() {
                    // The handle is gone: nobody listens, stop generating.
                    s.over = true;
                    continue;
                }
                s.stats.frames += 1;
                if s.stats.time_to_first_audio.is_none() {
                    s.stats.time_to_first_audio = Some(s.submitted.elapsed());
                }
            }
            Err(e) => s.fail(e),
        }
    }
}

/// Removes the streams that are over and frees their slots.
fn leave(streams: &mut Vec<Active>, batch: &mut dyn FlowLmBatch, shared: &Shared) {
    if !streams.iter().any(|s| s.over) {
        return;
    }
    let mut ends = Vec::new();
    streams.retain_mut(|s| {
        if s.over {
            batch.close(s.slot);
            if let Some(e) = s.end.take() {
                ends.push((s.events.clone(), e));
            }
        }
        !s.over
    });
    lock(&shared.queue).active = streams.len();
    for (events, e) in ends {
        // A handle dropped meanwhile no longer listens: nothing to tell.
        let _ = events.send(e);
    }
}
