//! [`NativeStream`]: the frames of one generation, produced either by a thread of its
//! own on the model ([`Source::Direct`], the request that found the model idle) or by the
//! model's batched engine ([`Source::Engine`], requests made while another runs).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use numpy::PyArray1;
use pocket_tts_core::{AudioFrame, StreamCanceller, StreamHandle, TorchRngState};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_py;

/// What the thread of a direct generation sends.
pub enum DirectMsg {
    /// A frame, or the error that ends the stream.
    Frame(pocket_tts_core::Result<AudioFrame>),
    /// The generation ran to its end; its noise generator stands here.
    End(TorchRngState),
}

/// Where a stream's frames come from.
pub enum Source {
    /// A thread running [`pocket_tts_core::TtsModel::generate_stream`] sends them (it
    /// stops when the flag is set or this end is dropped).
    Direct {
        /// The thread's messages.
        rx: Receiver<DirectMsg>,
        /// Its generator state, once it has sent [`DirectMsg::End`].
        end: Option<TorchRngState>,
    },
    /// An engine stream (cancelled when dropped).
    Engine(StreamHandle),
}

impl Source {
    fn next(&mut self) -> Option<pocket_tts_core::Result<AudioFrame>> {
        match self {
            Source::Direct { rx, end } => match rx.recv().ok()? {
                DirectMsg::Frame(frame) => Some(frame),
                DirectMsg::End(state) => {
                    *end = Some(state);
                    None
                }
            },
            Source::Engine(handle) => handle.next(),
        }
    }

    /// The noise generator's state after a generation that ran to its end.
    fn torch_rng_state(&self) -> Option<TorchRngState> {
        match self {
            Source::Direct { end, .. } => end.clone(),
            Source::Engine(handle) => handle.torch_rng_state().cloned(),
        }
    }
}

/// How to stop a stream from another thread than the one reading it.
pub enum Stopper {
    /// The direct thread's flag.
    Flag(Arc<AtomicBool>),
    /// The engine stream's canceller.
    Engine(StreamCanceller),
}

/// Counts of a stream, for the Python side's log line and tests.
#[derive(Default, Clone, Copy)]
struct Counts {
    samples: usize,
    first_chunk: Option<Duration>,
    finished: Option<Duration>,
}

/// One generation's audio, frame by frame: an iterator of 1-D `float32` numpy arrays
/// (1920 samples = 80 ms at 24 kHz per frame; a pause's silence in longer or shorter
/// pieces), each handed over without a copy. Iterating releases the GIL while it waits.
/// `cancel()` (from any thread) or dropping it stops the generation at its next frame.
#[pyclass(module = "pocket_tts_rs._native", frozen)]
pub struct NativeStream {
    source: Mutex<Option<Source>>,
    stopper: Stopper,
    started: Instant,
    counts: Mutex<Counts>,
    batched: bool,
    /// The generator state after the generation ran to its end.
    end_rng_state: Mutex<Option<TorchRngState>>,
}

impl NativeStream {
    /// A stream over `source`, stopped by `stopper`; `batched` when it is an engine
    /// stream.
    pub fn new(source: Source, stopper: Stopper, started: Instant, batched: bool) -> Self {
        Self {
            source: Mutex::new(Some(source)),
            stopper,
            started,
            counts: Mutex::new(Counts::default()),
            batched,
            end_rng_state: Mutex::new(None),
        }
    }

    fn stop(&self) {
        match &self.stopper {
            Stopper::Flag(flag) => flag.store(true, Ordering::Release),
            Stopper::Engine(c) => c.cancel(),
        }
    }

    /// The next frame's samples (GIL released while waiting); `None` at the end, after
    /// which the source is dropped (its thread or engine slot freed).
    fn next_samples(&self, py: Python<'_>) -> PyResult<Option<Vec<f32>>> {
        let result = py.detach(|| {
            let mut guard = self
                .source
                .lock()
                .map_err(|_| "a thread reading this stream panicked".to_string())?;
            let Some(source) = guard.as_mut() else {
                return Ok(None);
            };
            let item = source.next();
            if item.is_none() {
                if let Ok(mut end) = self.end_rng_state.lock() {
                    *end = source.torch_rng_state();
                }
            }
            if !matches!(item, Some(Ok(_))) {
                *guard = None;
            }
            Ok::<_, String>(item)
        });
        let item = result.map_err(PyRuntimeError::new_err)?;
        let mut counts = self
            .counts
            .lock()
            .map_err(|_| PyRuntimeError::new_err("poisoned"))?;
        match item {
            Some(Ok(frame)) => {
                if counts.first_chunk.is_none() {
                    counts.first_chunk = Some(self.started.elapsed());
                }
                counts.samples += frame.samples.len();
                Ok(Some(frame.samples))
            }
            Some(Err(e)) => {
                counts.finished = Some(self.started.elapsed());
                Err(to_py(e))
            }
            None => {
                if counts.finished.is_none() {
                    counts.finished = Some(self.started.elapsed());
                }
                Ok(None)
            }
        }
    }
}

impl Drop for NativeStream {
    fn drop(&mut self) {
        self.stop();
    }
}

#[pymethods]
impl NativeStream {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray1<f32>>>> {
        Ok(self
            .next_samples(py)?
            .map(|samples| PyArray1::from_vec(py, samples)))
    }

    /// Every remaining frame, concatenated into one 1-D `float32` array (the GIL is
    /// released until the generation ends).
    fn collect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let mut all = Vec::new();
        while let Some(samples) = self.next_samples(py)? {
            if all.is_empty() {
                all = samples;
            } else {
                all.extend_from_slice(&samples);
            }
        }
        Ok(PyArray1::from_vec(py, all))
    }

    /// Stops the generation at its next frame; the iterator then ends. Safe from any
    /// thread, while another one waits in `next`.
    fn cancel(&self) {
        self.stop();
    }

    /// Whether the stream runs in the batched engine (it was started while another
    /// generation ran on the model).
    #[getter]
    fn batched(&self) -> bool {
        self.batched
    }

    /// Samples yielded so far.
    #[getter]
    fn samples(&self) -> usize {
        self.counts.lock().map(|c| c.samples).unwrap_or(0)
    }

    /// Seconds from the call to the first frame (time to first audio), `None` before it.
    #[getter]
    fn first_chunk_s(&self) -> Option<f64> {
        self.counts
            .lock()
            .ok()
            .and_then(|c| c.first_chunk)
            .map(|d| d.as_secs_f64())
    }

    /// `torch.get_rng_state()`'s bytes for the sampling-noise generator after the
    /// generation (5056 bytes, for `torch.set_rng_state`): `None` until the stream has run
    /// to its end, and for a stream stopped or failed before it.
    #[getter]
    fn torch_rng_state<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        let state = self.end_rng_state.lock().ok()?.clone()?;
        Some(PyBytes::new(py, &state.to_bytes()))
    }

    /// Seconds from the call to the end of the stream, `None` before it.
    #[getter]
    fn elapsed_s(&self) -> Option<f64> {
        self.counts
            .lock()
            .ok()
            .and_then(|c| c.finished)
            .map(|d| d.as_secs_f64())
    }
}
