//! The Mimi side of a generation: latents in, audio frames out, on the calling thread or
//! on a decoder thread of its own (reference: `TTSModel._decode_audio_worker`).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::runtime::{decode_frames, MimiJob, MimiSession};
use crate::{Error, Result};

/// Name of the decoder threads (at most 15 bytes: the Linux thread-name limit).
pub const DECODER_THREAD_NAME: &str = "pocket-tts-mimi";

/// A latent produced by the FlowLM, on its way to the decoder.
#[derive(Debug)]
pub(super) struct LatentFrame {
    pub(super) chunk: usize,
    pub(super) frame: usize,
    /// Normalised, `[ldim]`.
    pub(super) latent: Vec<f32>,
    pub(super) eos_logit: f32,
    /// Samples of silence when this is a piece of a pause (then `latent` is empty and
    /// nothing is decoded), else 0.
    pub(super) pause: usize,
}

impl LatentFrame {
    /// A piece of a pause of `samples` samples, before chunk `chunk`.
    pub(super) fn pause(chunk: usize, samples: usize) -> Self {
        Self {
            chunk,
            frame: 0,
            latent: Vec::new(),
            eos_logit: f32::NEG_INFINITY,
            pause: samples,
        }
    }
}

/// One latent in, one frame of audio out, with its own decoder session, so that it can
/// run on the decoder thread (`Send + 'static`). Each chunk starts from a fresh decoder
/// state and fades its first 5 ms in.
pub(super) struct FrameDecoder {
    session: Box<dyn MimiSession>,
    emb_std: Vec<f32>,
    emb_mean: Vec<f32>,
    fade_len: usize,
    /// The denormalised latent (reused).
    latent: Vec<f32>,
}

impl FrameDecoder {
    /// `emb_std` and `emb_mean` (`[ldim]`) denormalise the FlowLM's latents for Mimi;
    /// `fade_len` samples fade in at the start of each chunk.
    pub(super) fn new(
        session: Box<dyn MimiSession>,
        emb_std: Vec<f32>,
        emb_mean: Vec<f32>,
        fade_len: usize,
    ) -> Result<Self> {
        if emb_std.len() != emb_mean.len() {
            return Err(Error::Internal(format!(
                "emb_std has {} values and emb_mean {}",
                emb_std.len(),
                emb_mean.len()
            )));
        }
        Ok(Self {
            session,
            latent: vec![0.0; emb_std.len()],
            emb_std,
            emb_mean,
            fade_len,
        })
    }

    /// Decodes frame `frame` of chunk `chunk`; frame 0 starts from a fresh decoder state.
    pub(super) fn decode_frame(
        &mut self,
        chunk: usize,
        frame: usize,
        latent: &[f32],
    ) -> Result<Vec<f32>> {
        let mut samples = vec![0f32; self.frame_len()];
        self.decode_frame_into(chunk, frame, latent, &mut samples)?;
        Ok(samples)
    }

    /// The samples of a job: its frame decoded, or a piece of a pause (zeros, the decoder
    /// state untouched).
    pub(super) fn decode_job(&mut self, job: &LatentFrame) -> Result<Vec<f32>> {
        if job.pause > 0 {
            return Ok(vec![0.0; job.pause]);
        }
        self.decode_frame(job.chunk, job.frame, &job.latent)
    }

    /// Values per latent (`[ldim]`).
    pub(super) fn latent_dim(&self) -> usize {
        self.latent.len()
    }

    /// Samples per frame.
    pub(super) fn frame_len(&self) -> usize {
        self.session.frame_len()
    }

    /// [`Self::decode_frame`] into `samples` (`[frame_len]`), allocating nothing: the
    /// engine allocates the frames on its scheduler thread, so that the decoding threads
    /// do not each grow a malloc arena.
    pub(super) fn decode_frame_into(
        &mut self,
        chunk: usize,
        frame: usize,
        latent: &[f32],
        samples: &mut [f32],
    ) -> Result<()> {
        self.prepare(chunk, frame, latent, samples)?;
        let first = chunk == 0 && frame == 0;
        self.session.decode(&self.latent, first, samples)?;
        self.fade_in(frame, samples);
        Ok(())
    }

    /// Checks the lengths, resets the session at a chunk's first frame (after the
    /// first chunk) and denormalises `latent` into `self.latent`.
    fn prepare(
        &mut self,
        chunk: usize,
        frame: usize,
        latent: &[f32],
        samples: &[f32],
    ) -> Result<()> {
        if samples.len() != self.frame_len() {
            return Err(Error::Internal(format!(
                "a Mimi frame buffer has {} samples, expected {}",
                samples.len(),
                self.frame_len()
            )));
        }
        if latent.len() != self.latent.len() {
            return Err(Error::Internal(format!(
                "latent has {} values, expected {}",
                latent.len(),
                self.latent.len()
            )));
        }
        if frame == 0 && chunk > 0 {
            self.session.reset()?;
        }
        // FlowLm::denormalize: x * emb_std + emb_mean.
        for (((o, v), s), m) in self
            .latent
            .iter_mut()
            .zip(latent)
            .zip(&self.emb_std)
            .zip(&self.emb_mean)
        {
            *o = v * s + m;
        }
        Ok(())
    }

    /// Fades a chunk's first frame in: torch.linspace(0, 1, sample_rate // 200) over its
    /// first samples.
    fn fade_in(&self, frame: usize, samples: &mut [f32]) {
        if frame == 0 {
            let n = self.fade_len.min(samples.len());
            let denom = (self.fade_len.max(2) - 1) as f32;
            for (i, s) in samples.iter_mut().take(n).enumerate() {
                *s *= i as f32 / denom;
            }
        }
    }
}

/// One frame of [`FrameDecoder::decode_many`]: a stream's decoder, the frame's place and
/// latent, and where its samples go.
pub(super) struct ManyJob<'a> {
    pub(super) decoder: &'a mut FrameDecoder,
    pub(super) chunk: usize,
    pub(super) frame: usize,
    /// Normalised, `[ldim]`.
    pub(super) latent: &'a [f32],
    /// `[frame_len]`.
    pub(super) samples: &'a mut [f32],
}

impl FrameDecoder {
    /// Decodes one frame of each of many streams: on the CPU runtime together, every layer
    /// one GEMM over all the frames' rows (`runtime::decode_frames`), else one by one. Each frame gets what [`Self::decode_frame_into`] gives it. Returns one
    /// result per job, in order.
    pub(super) fn decode_many(jobs: &mut [ManyJob<'_>]) -> Vec<Result<()>> {
        let mut results: Vec<Result<()>> = jobs
            .iter_mut()
            .map(|j| j.decoder.prepare(j.chunk, j.frame, j.latent, j.samples))
            .collect();
        let mut ready = Vec::with_capacity(jobs.len());
        let mut mimi_jobs: Vec<MimiJob<'_>> = Vec::with_capacity(jobs.len());
        for (k, j) in jobs.iter_mut().enumerate() {
            if results[k].is_err() {
                continue;
            }
            let FrameDecoder {
                session, latent, ..
            } = &mut *j.decoder;
            mimi_jobs.push(MimiJob {
                session: session.as_mut(),
                latent,
                out: &mut *j.samples,
                first: j.chunk == 0 && j.frame == 0,
            });
            ready.push(k);
        }
        for (k, r) in ready.into_iter().zip(decode_frames(&mut mimi_jobs)) {
            results[k] = r;
        }
        drop(mimi_jobs);
        for (k, j) in jobs.iter_mut().enumerate() {
            if results[k].is_ok() {
                j.decoder.fade_in(j.frame, j.samples);
            }
        }
        results
    }
}

/// A decoded latent coming back from the decoder thread.
pub(super) struct Decoded {
    pub(super) job: LatentFrame,
    pub(super) samples: Result<Vec<f32>>,
    pub(super) time: Duration,
}

/// The decoder thread of an overlapped generation and its two channels.
pub(super) struct DecoderWorker {
    pub(super) jobs: Option<mpsc::Sender<LatentFrame>>,
    pub(super) results: mpsc::Receiver<Decoded>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl DecoderWorker {
    /// Starts the decoder thread.
    ///
    /// # Errors
    /// The OS's error when the thread cannot be spawned.
    pub(super) fn spawn(mut decoder: FrameDecoder) -> std::io::Result<Self> {
        let (jobs, job_rx) = mpsc::channel::<LatentFrame>();
        let (result_tx, results) = mpsc::channel::<Decoded>();
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(DECODER_THREAD_NAME.into())
            .spawn(move || {
                while let Ok(job) = job_rx.recv() {
                    if stop_flag.load(Ordering::Acquire) {
                        break;
                    }
                    let t0 = Instant::now();
                    let samples =
                        std::panic::catch_unwind(AssertUnwindSafe(|| decoder.decode_job(&job)))
                            .unwrap_or_else(|p| Err(panic_error(p.as_ref())));
                    let failed = samples.is_err();
                    let time = t0.elapsed();
                    if result_tx.send(Decoded { job, samples, time }).is_err() || failed {
                        break;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            results,
            stop,
            handle: Some(handle),
        })
    }

    /// Stops the thread: it finishes at most the frame it is decoding. Returns its panic,
    /// if it panicked.
    pub(super) fn shutdown(mut self) -> Option<Error> {
        self.stop.store(true, Ordering::Release);
        self.jobs = None;
        let handle = self.handle.take()?;
        drop(self);
        handle.join().err().map(|p| panic_error(p.as_ref()))
    }
}

/// The error standing for a panic of the decoder thread.
pub(super) fn panic_error(payload: &(dyn std::any::Any + Send)) -> Error {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    Error::Internal(format!("the Mimi decoder thread panicked: {msg}"))
}

/// The error when the decoder thread is gone without a result.
pub(super) fn decoder_lost() -> Error {
    Error::Internal("the Mimi decoder thread stopped unexpectedly".into())
}
