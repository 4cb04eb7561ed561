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
    /// The frame of the last pass, decoded by Mimi during the next pass (see `run`).
    queued: Option<Queued>,
}

/// A frame whose latent the FlowLM produced and Mimi has not decoded yet.
struct Queued {
    chunk: usize,
    frame: usize,
    /// Normalised, `[ldim]`.
    latent: Vec<f32>,
    eos_logit: f32,
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

    /// The stream must move to its next chunk before it can step again.
    fn needs_advance(&self) -> bool {
        self.current.is_none_or(|c| c.exhausted())
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
///
/// With two threads or more, the Mimi frames of a pass are decoded during the next pass:
/// its FlowLM pass runs on one thread while the other decodes the first part of the
/// frames, and the FlowLM's thread then decodes the rest (`MimiSplit` balances the two
/// parts from the times measured). A stream's frames are sent in order, each before the
/// stream moves to its next chunk or ends.
pub(super) fn run(model: &TtsModel, shared: &Shared, options: &EngineOptions) {
    let mut batch = model.runtime.flow_lm_batch();
    let team = simd::Team::new(model.threads());
    let overlap = team.threads() >= 2;
    let mut split = MimiSplit::default();
    let ldim = model.flow_lm.ldim();
    let mut streams: Vec<Active> = Vec::new();
    let mut latents: Vec<f32> = Vec::new();
    let mut eos: Vec<f32> = Vec::new();
    let mut noise: Vec<f32> = Vec::new();
    let mut previous: Vec<f32> = Vec::new();
    loop {
        let Some(newcomers) = wait_for_work(shared, &streams, options) else {
            for s in &mut streams {
                s.queued = None;
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
            } else if s.queued.is_some() && s.needs_advance() {
                // Its last frame is decoded in this pass: it moves on in the next.
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
        let ready = |s: &Active| !s.over && !s.needs_advance();
        let generating = streams
            .iter()
            .any(|s| ready(s) && batch.pending_prefill(s.slot) == 0);
        let mut budget = if generating {
            options.prefill_per_pass
        } else {
            options.prefill_per_pass.saturating_mul(PREFILL_BURST)
        };
        let mut prefill = Vec::new();
        let mut stepping = Vec::new();
        for (i, s) in streams.iter().enumerate() {
            if !ready(s) {
                continue;
            }
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
        previous.resize(stepping.len() * ldim, 0.0);
        for (k, &i) in stepping.iter().enumerate() {
            noise[k * ldim..(k + 1) * ldim].copy_from_slice(streams[i].noise.sample());
            previous[k * ldim..(k + 1) * ldim].copy_from_slice(&streams[i].previous);
        }
        let steps: Vec<BatchStep<'_>> = stepping
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let s = &streams[i];
                BatchStep {
                    slot: s.slot,
                    previous: s
                        .has_previous
                        .then_some(&previous[k * ldim..(k + 1) * ldim]),
                    noise: &noise[k * ldim..(k + 1) * ldim],
                    decode_steps: s.decode_steps,
                }
            })
            .collect();
        latents.resize(steps.len() * ldim, 0.0);
        eos.resize(steps.len(), 0.0);
        let flow_work = !(prefill.is_empty() && steps.is_empty());
        // Frames decoded beside the pass (two threads): the pass takes one thread, as
        // `generate`'s FlowLM step does beside its decoder thread.
        batch.set_wide(!(overlap && streams.iter().any(|s| s.queued.is_some())));
        let mut flow_pass = || {
            if !flow_work {
                return Ok(());
            }
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                batch.run(&prefill, &steps, &mut latents, &mut eos)
            }))
            .unwrap_or_else(|p| Err(panic_error(p.as_ref())))
        };
        let ran = if overlap {
            decode_queued_during(&mut streams, &team, &mut split, flow_work, flow_pass)
        } else {
            // One thread: every frame was decoded right after its pass (below).
            flow_pass()
        };
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
        record_steps(&mut streams, &stepping, &latents, &eos, ldim);
        if !overlap {
            // Only the frames run here (no FlowLM pass): no error comes back.
            let _ = decode_queued_during(&mut streams, &team, &mut split, false, || Ok(()));
        }
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
        queued: None,
    })
}

/// Applies the EOS rule to each step of the pass; queues the latents to decode (in each
/// stream's `queued`).
fn record_steps(
    streams: &mut [Active],
    stepping: &[usize],
    latents: &[f32],
    eos: &[f32],
    ldim: usize,
) {
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
                s.queued = Some(Queued {
                    chunk: cur.index,
                    frame,
                    latent: latent.to_vec(),
                    eos_logit: eos[k],
                });
            }
        }
    }
}

/// The two threads' shares of a pass's Mimi frames when the FlowLM pass runs beside them:
/// running means of the FlowLM pass's time and of a frame's.
#[derive(Debug, Default)]
struct MimiSplit {
    /// Seconds.
    flow: f64,
    frame: f64,
}

impl MimiSplit {
    /// Frames (of `n`) for the thread that does not run the FlowLM pass: as many as make
    /// both threads finish together, at least one.
    fn helper_share(&self, n: usize, flow: bool) -> usize {
        if n == 0 {
            return 0;
        }
        if !flow {
            return n.div_ceil(2);
        }
        if self.frame <= 0.0 {
            return n.div_ceil(2).max(1);
        }
        let k = (n as f64 * self.frame + self.flow) / (2.0 * self.frame);
        (k.round() as usize).clamp(1, n)
    }

    fn record_flow(&mut self, secs: f64) {
        self.flow = mean(self.flow, secs);
    }

    fn record_frames(&mut self, secs: f64, frames: usize) {
        if frames > 0 {
            self.frame = mean(self.frame, secs / frames as f64);
        }
    }
}

/// A running mean that follows the last ~8 values (the first value as is).
fn mean(old: f64, new: f64) -> f64 {
    if old <= 0.0 {
        new
    } else {
        old + (new - old) / 8.0
    }
}

/// Decodes the queued frames of `streams` (one per stream at most) while `flow` (the
/// FlowLM pass, `flow_work` when it has anything to do) runs, and sends them: the frames
/// are split into two groups, each decoded together (`FrameDecoder::decode_many`); the
/// second group is decoded on `flow`'s thread after it. Returns `flow`'s result. The
/// frames are allocated here, on the scheduler thread, so that the decoding threads do
/// not each grow a malloc arena.
fn decode_queued_during(
    streams: &mut [Active],
    team: &simd::Team,
    split: &mut MimiSplit,
    flow_work: bool,
    flow: impl FnOnce() -> Result<()> + Send,
) -> Result<()> {
    let queued: Vec<usize> = (0..streams.len())
        .filter(|&i| streams[i].queued.is_some())
        .collect();
    if queued.is_empty() {
        let t0 = Instant::now();
        let r = flow();
        if flow_work {
            split.record_flow(t0.elapsed().as_secs_f64());
        }
        return r;
    }
    let mut buffers: Vec<Vec<f32>> = queued
        .iter()
        .map(|&i| vec![0f32; streams[i].decoder.frame_len()])
        .collect();
    let n = queued.len();
    let helper = if team.threads() >= 2 {
        split.helper_share(n, flow_work)
    } else {
        n
    };
    let (results, timings) = {
        let mut jobs: Vec<ManyJob<'_>> = streams
            .iter_mut()
            .filter_map(|s| {
                let Active {
                    decoder, queued, ..
                } = s;
                let q = queued.as_ref()?;
                Some((decoder, q))
            })
            .zip(buffers.iter_mut())
            .map(|((decoder, q), samples)| ManyJob {
                decoder,
                chunk: q.chunk,
                frame: q.frame,
                latent: &q.latent,
                samples,
            })
            .collect();
        let (a, b) = jobs.split_at_mut(helper);
        // (jobs, results, seconds) of each group; the FlowLM pass and its time.
        let groups = [
            Mutex::new((a, Vec::new(), 0.0)),
            Mutex::new((b, Vec::new(), 0.0)),
        ];
        let flow = Mutex::new((Some(flow), Ok(()), 0.0));
        let decode = |g: usize| {
            let mut guard = lock(&groups[g]);
            let (jobs, out, secs) = &mut *guard;
            let t0 = Instant::now();
            *out = decode_group(jobs);
            *secs = t0.elapsed().as_secs_f64();
        };
        let work = |c: usize| {
            if c == 0 {
                decode(0);
            } else {
                {
                    let mut f = lock(&flow);
                    if let Some(run) = f.0.take() {
                        let t0 = Instant::now();
                        f.1 = run();
                        f.2 = t0.elapsed().as_secs_f64();
                    }
                }
                decode(1);
            }
        };
        if team.threads() >= 2 {
            team.run_chunks(2, work);
        } else {
            work(1);
            work(0);
        }
        let [ga, gb] = groups.map(|g| {
            g.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        let (_, flow_result, flow_secs) = flow
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut results = ga.1;
        results.extend(gb.1);
        (
            results,
            (flow_result, flow_secs, [(ga.2, helper), (gb.2, n - helper)]),
        )
    };
    let (flow_result, flow_secs, group_times) = timings;
    if flow_work {
        split.record_flow(flow_secs);
    }
    for (secs, frames) in group_times {
        split.record_frames(secs, frames);
    }
    let mut results = results.into_iter();
    for (&i, samples) in queued.iter().zip(buffers) {
        let result = results
            .next()
            .unwrap_or_else(|| Err(Error::Internal("a Mimi frame was not decoded".into())));
        send_frame(&mut streams[i], samples, result);
    }
    flow_result
}

/// Decodes one group of frames together, a panic becoming every frame's error.
fn decode_group(jobs: &mut [ManyJob<'_>]) -> Vec<Result<()>> {
    let n = jobs.len();
    if n == 0 {
        return Vec::new();
    }
    std::panic::catch_unwind(AssertUnwindSafe(|| FrameDecoder::decode_many(jobs))).unwrap_or_else(
        |p| {
            let msg = panic_error(p.as_ref()).to_string();
            (0..n).map(|_| Err(Error::Internal(msg.clone()))).collect()
        },
    )
}

/// Sends a stream's decoded queued frame (or fails the stream with the frame's error).
fn send_frame(s: &mut Active, samples: Vec<f32>, result: Result<()>) {
    let Some(q) = s.queued.take() else { return };
    match result {
        Ok(()) => {
            let f = AudioFrame {
                samples,
                chunk: q.chunk,
                frame: q.frame,
                latent: q.latent,
                eos_logit: q.eos_logit,
                pause: false,
            };
            if s.events.send(Event::Frame(f)).is_err() {
                // The handle is gone: nobody listens, stop generating.
                s.over = true;
                return;
            }
            s.stats.frames += 1;
            if s.stats.time_to_first_audio.is_none() {
                s.stats.time_to_first_audio = Some(s.submitted.elapsed());
            }
        }
        Err(e) => s.fail(e),
    }
}

/// Removes the streams that are over and frees their slots.
fn leave(streams: &mut Vec<Active>, batch: &mut dyn FlowLmBatch, shared: &Shared) {
    // A stream whose last frame is still queued leaves once it is sent.
    let leaving = |s: &Active| s.over && s.queued.is_none();
    if !streams.iter().any(leaving) {
        return;
    }
    let mut ends = Vec::new();
    streams.retain_mut(|s| {
        if leaving(s) {
            batch.close(s.slot);
            if let Some(e) = s.end.take() {
                ends.push((s.events.clone(), e));
            }
        }
        !leaving(s)
    });
    lock(&shared.queue).active = streams.len();
    for (events, e) in ends {
        // A handle dropped meanwhile no longer listens: nothing to tell.
        let _ = events.send(e);
    }
}
