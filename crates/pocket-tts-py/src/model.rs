//! [`NativeModel`]: a loaded model, its voices and its generations.
//!
//! A generation asked for while the model is idle runs directly on it
//! ([`pocket_tts_core::TtsModel::generate_stream`] on a thread of its own: FlowLM there,
//! Mimi on its decoder thread, as the CLI's `generate`). One asked for while another runs
//! goes to the model's [`Engine`] (made on first need), which advances all of its streams
//! by one batched FlowLM pass per frame. Both give the same frames, bit for bit, so which
//! one ran a request never shows in its audio.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Instant;

use numpy::PyReadonlyArray1;
use pocket_tts_core::config::{Config, WeightDtype};
use pocket_tts_core::hub;
use pocket_tts_core::{
    Engine, EngineOptions, Error, GenerationParams, Quantization, TorchRngState, TtsModel,
    VoiceState,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{to_py, IntoPy};
use crate::state::NativeState;
use crate::stream::{DirectMsg, NativeStream, Source, Stopper};

/// Requests the engine holds waiting for a slot before refusing with `Error::Busy` (a
/// Python program's threads wait instead of failing; each waiting request holds only its
/// text and a reference to its voice).
const ENGINE_MAX_QUEUED: usize = 4096;

/// A loaded Pocket TTS model (reference: `TTSModel`), safe to share between threads.
#[pyclass(module = "pocket_tts_rs._native", frozen)]
pub struct NativeModel {
    model: Arc<TtsModel>,
    engine: OnceLock<Engine>,
    max_streams: usize,
    /// A direct generation runs (see the module docs).
    direct_busy: Arc<AtomicBool>,
    /// Direct generation threads alive (the flag above is released when one's last frame
    /// has been handed over; its thread may still be ending).
    direct_threads: Arc<AtomicUsize>,
}

/// Clears the direct flag and the thread count when a direct generation's thread ends,
/// however it ends.
struct DirectGuard {
    /// The model's direct slot, when this generation took it.
    busy: Option<Arc<AtomicBool>>,
    threads: Arc<AtomicUsize>,
}

impl Drop for DirectGuard {
    fn drop(&mut self) {
        if let Some(busy) = &self.busy {
            busy.store(false, Ordering::Release);
        }
        self.threads.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How a generation on a thread of its own was started.
struct Direct {
    /// It took the model's direct slot (`direct_busy`): the first call on an idle model.
    claimed: bool,
    /// With `copy_state=False`: the voice state to replace by the state it leaves.
    chain: Option<Arc<Mutex<Arc<VoiceState>>>>,
    /// When the call was made.
    started: Instant,
}

#[pymethods]
impl NativeModel {
    /// Loads a model (GIL released): a built-in `language`, or the YAML file `config`
    /// (its relative paths resolved against its folder). `hf://` files are downloaded
    /// when not in the local cache (as the reference does). `dtype`: `"float32"`,
    /// `"float16"` or `"bfloat16"` FlowLM weights (`None`: the config's). `threads`:
    /// generation threads (`None`: the CPUs available, at most 2). `max_streams`:
    /// concurrent generations batched together. `quantize`: `"int8"`, `"q4"` or `None`.
    /// `mimi_dtype`: how the Mimi decoder stores its weights, as `dtype` (`None`:
    /// `"float16"` with `quantize`, else `"float32"`; the CLI's `--mimi-dtype`).
    #[staticmethod]
    #[pyo3(signature = (language=None, config=None, quantize=None, dtype=None, threads=None, max_streams=8, mimi_dtype=None))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        py: Python<'_>,
        language: Option<String>,
        config: Option<String>,
        quantize: Option<String>,
        dtype: Option<String>,
        threads: Option<usize>,
        max_streams: usize,
        mimi_dtype: Option<String>,
    ) -> PyResult<Self> {
        let parse = |name: &str, d: Option<String>| {
            d.map(|d| {
                WeightDtype::try_from(d).map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
            })
            .transpose()
        };
        let dtype = parse("dtype", dtype)?;
        let mimi_dtype = parse("mimi_dtype", mimi_dtype)?;
        let quantize = quantize
            .map(|q| {
                q.parse::<Quantization>()
                    .map_err(|e| PyValueError::new_err(format!("quantize: {e}")))
            })
            .transpose()?;
        let options = EngineOptions {
            max_streams,
            max_queued: ENGINE_MAX_QUEUED,
            ..EngineOptions::default()
        };
        options.validate().py_err()?;
        let model = py
            .detach(move || load_model(language, config, quantize, dtype, mimi_dtype, threads))
            .py_err()?;
        Ok(Self {
            model: Arc::new(model),
            engine: OnceLock::new(),
            max_streams,
            direct_busy: Arc::new(AtomicBool::new(false)),
            direct_threads: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// Output sample rate in Hz (24000).
    #[getter]
    fn sample_rate(&self) -> usize {
        self.model.sample_rate()
    }

    /// The config's default temperature.
    #[getter]
    fn default_temperature(&self) -> f32 {
        self.model.config().default_temperature
    }

    /// The config's default EOS threshold.
    #[getter]
    fn default_eos_threshold(&self) -> f32 {
        self.model.config().default_eos_threshold
    }

    /// The built-in language the model was loaded as, `None` for a config.
    #[getter]
    fn language(&self) -> Option<String> {
        self.model.language().map(str::to_string)
    }

    /// Whether the FlowLM transformer is quantized (int8 or 4-bit).
    #[getter]
    fn quantize(&self) -> bool {
        self.model.load_options().quantize.is_some()
    }

    /// `"int8"`, `"q4"` or `None` (float).
    #[getter]
    fn quantization(&self) -> Option<&'static str> {
        self.model.load_options().quantize.map(|q| q.name())
    }

    /// The FlowLM's weight dtype in effect (`"float32"`, `"float16"`, `"bfloat16"`).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.model.config().flow_lm.dtype.name()
    }

    /// The Mimi decoder's weight dtype in effect (`"float32"`, `"float16"`,
    /// `"bfloat16"`).
    #[getter]
    fn mimi_dtype(&self) -> &'static str {
        self.model.load_options().effective_mimi_dtype().name()
    }

    /// Generation threads.
    #[getter]
    fn threads(&self) -> usize {
        self.model.threads()
    }

    /// Whether the checkpoint has the Mimi encoder (voice cloning from audio).
    #[getter]
    fn has_voice_cloning(&self) -> bool {
        self.model.has_voice_cloning()
    }

    /// A voice state from a local path or `hf://` location (GIL released): a
    /// `.safetensors` voice state (ours or the reference's `export_model_state`), a
    /// predefined voice name (built-in languages), or an audio file (WAV, MP3, FLAC, OGG;
    /// any rate and channels). `truncate`: keep the first 30 s of audio.
    fn voice_from_source(
        &self,
        py: Python<'_>,
        source: String,
        truncate: bool,
    ) -> PyResult<NativeState> {
        let model = Arc::clone(&self.model);
        let state = py
            .detach(move || model.voice_state(&source, truncate))
            .py_err()?;
        Ok(NativeState::new(state))
    }

    /// A voice state from mono samples `[samples]` at the model's sample rate (GIL
    /// released while encoding).
    fn voice_from_samples(
        &self,
        py: Python<'_>,
        samples: PyReadonlyArray1<'_, f32>,
    ) -> PyResult<NativeState> {
        let samples = samples.as_slice()?.to_vec();
        let model = Arc::clone(&self.model);
        let state = py
            .detach(move || model.voice_state_from_samples(&samples))
            .py_err()?;
        Ok(NativeState::new(state))
    }

    /// Reads a `.safetensors` voice state and checks it against this model.
    fn load_state(&self, py: Python<'_>, path: PathBuf) -> PyResult<NativeState> {
        let model = Arc::clone(&self.model);
        let state = py.detach(move || model.load_voice_state(&path)).py_err()?;
        Ok(NativeState::new(state))
    }

    /// Starts generating `text` with `state`; the frames come out of the returned
    /// stream. Parameters as `GenerationParams` (`temperature` is the reference's
    /// `temp`). Raises `ValueError` for empty text or a parameter out of range, naming it.
    #[pyo3(signature = (state, text, *, temperature, sampler_decode_steps, noise_clamp, eos_threshold, max_tokens, frames_after_eos, seed, normalize, markup, torch_rng_state=None, copy_state=true))]
    #[allow(clippy::too_many_arguments)]
    fn stream(
        &self,
        py: Python<'_>,
        state: &NativeState,
        text: String,
        temperature: f32,
        sampler_decode_steps: usize,
        noise_clamp: Option<f32>,
        eos_threshold: f32,
        max_tokens: usize,
        frames_after_eos: Option<usize>,
        seed: Option<u64>,
        normalize: bool,
        markup: bool,
        torch_rng_state: Option<Vec<u8>>,
        copy_state: bool,
    ) -> PyResult<NativeStream> {
        let started = Instant::now();
        let mut params = GenerationParams::for_config(self.model.config());
        params.temperature = temperature;
        params.sampler_decode_steps = sampler_decode_steps;
        params.noise_clamp = noise_clamp;
        params.eos_threshold = eos_threshold;
        params.max_tokens = max_tokens;
        params.frames_after_eos = frames_after_eos;
        params.seed = seed;
        params.torch_rng_state = torch_rng_state
            .map(|bytes| TorchRngState::from_bytes(&bytes))
            .transpose()
            .py_err()?;
        params.normalize = normalize;
        params.markup = markup;
        params.copy_state = copy_state;
        params.validate().py_err()?;
        let voice = state.get();
        // A generation that chains its state runs on a thread of its own (the engine
        // starts every chunk from the voice), batched or not.
        let chain = (!copy_state).then(|| state.cell());
        let engine_idle = self.engine.get().is_none_or(|e| e.load() == (0, 0));
        let claimed = engine_idle
            && self
                .direct_busy
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        if claimed || chain.is_some() {
            let direct = Direct {
                claimed,
                chain,
                started,
            };
            return py.detach(|| self.start_direct(voice, text, params, direct));
        }
        let engine = self.engine()?;
        let handle = py
            .detach(|| engine.submit(&voice, &text, &params))
            .py_err()?;
        let stopper = Stopper::Engine(handle.canceller());
        Ok(NativeStream::new(
            Source::Engine(handle),
            stopper,
            started,
            true,
        ))
    }

    /// For benchmarks (`scripts/bench/python_vs_reference.py`): the generation of `text`
    /// at `temperature` run to its end inside Rust on this thread, the GIL released, no
    /// frame handed to Python, as the CLI runs it. Returns `(samples, seconds to the first
    /// frame, seconds in all)`, to set the binding's cost against.
    #[pyo3(signature = (state, text, *, temperature, eos_threshold, max_tokens))]
    fn generate_in_rust(
        &self,
        py: Python<'_>,
        state: &NativeState,
        text: String,
        temperature: f32,
        eos_threshold: f32,
        max_tokens: usize,
    ) -> PyResult<(usize, f64, f64)> {
        let mut params = GenerationParams::for_config(self.model.config());
        params.temperature = temperature;
        params.eos_threshold = eos_threshold;
        params.max_tokens = max_tokens;
        let voice = state.get();
        let model = Arc::clone(&self.model);
        py.detach(move || {
            let started = Instant::now();
            let mut first = None;
            let mut samples = 0;
            for frame in model.generate_stream(&voice, &text, &params)? {
                samples += frame?.samples.len();
                first.get_or_insert_with(|| started.elapsed());
            }
            let first = first.unwrap_or_default().as_secs_f64();
            Ok::<_, Error>((samples, first, started.elapsed().as_secs_f64()))
        })
        .py_err()
    }

    /// `(direct, engine_active, engine_queued)`: generation threads of the direct path
    /// still alive, and the engine's streams generating and waiting. All 0 once every
    /// generation has ended or been stopped.
    fn busy(&self) -> (usize, usize, usize) {
        let (active, queued) = self.engine.get().map_or((0, 0), Engine::load);
        (self.direct_threads.load(Ordering::Acquire), active, queued)
    }
}

impl NativeModel {
    fn engine(&self) -> PyResult<&Engine> {
        if let Some(engine) = self.engine.get() {
            return Ok(engine);
        }
        let options = EngineOptions {
            max_streams: self.max_streams,
            max_queued: ENGINE_MAX_QUEUED,
            ..EngineOptions::default()
        };
        let engine = Engine::new(Arc::clone(&self.model), options).map_err(to_py)?;
        // Another thread may have made one meanwhile: keep the first, drop ours.
        Ok(self.engine.get_or_init(|| engine))
    }

    /// Runs `generate_stream` on a thread of its own; its frames go through a channel.
    /// The setup errors (empty text, …) come back from here, before the thread is left
    /// running. When `direct.claimed`, `direct_busy` is already set and is cleared when
    /// the thread ends.
    fn start_direct(
        &self,
        voice: Arc<VoiceState>,
        text: String,
        params: GenerationParams,
        direct: Direct,
    ) -> PyResult<NativeStream> {
        let Direct {
            claimed,
            chain,
            started,
        } = direct;
        let guard = DirectGuard {
            busy: claimed.then(|| Arc::clone(&self.direct_busy)),
            threads: Arc::clone(&self.direct_threads),
        };
        self.direct_threads.fetch_add(1, Ordering::AcqRel);
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), Error>>(1);
        let model = Arc::clone(&self.model);
        let flag = Arc::clone(&stop);
        let spawned = std::thread::Builder::new()
            .name("pocket-tts-py-generate".into())
            .spawn(move || {
                let guard = guard;
                let stream = match model.generate_stream(&voice, &text, &params) {
                    Ok(stream) => {
                        let _ = ready_tx.send(Ok(()));
                        stream
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let mut stream = stream;
                for frame in stream.by_ref() {
                    if flag.load(Ordering::Acquire) || tx.send(DirectMsg::Frame(frame)).is_err() {
                        return;
                    }
                }
                // Ran to its end. With copy_state=False, the voice state becomes the one
                // the generation left (before the end is reported, so that the caller's
                // next call starts from it); then where the noise generator stands.
                if let Some(cell) = chain {
                    match stream.model_state() {
                        Ok(state) => {
                            *cell.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(state)
                        }
                        Err(e) => {
                            let _ = tx.send(DirectMsg::Frame(Err(e)));
                            return;
                        }
                    }
                }
                let end = DirectMsg::End(stream.torch_rng_state());
                // Free the model's direct slot before the caller learns of the end, so
                // that its next call finds the model idle.
                drop(stream);
                drop(guard);
                let _ = tx.send(end);
            });
        if let Err(e) = spawned {
            // The guard went down with the closure: the flags are already released.
            return Err(to_py(Error::Internal(format!(
                "cannot start a generation thread: {e}"
            ))));
        }
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(NativeStream::new(
                Source::Direct { rx, end: None },
                Stopper::Flag(stop),
                started,
                false,
            )),
            Ok(Err(e)) => Err(to_py(e)),
            Err(_) => Err(to_py(Error::Internal(
                "the generation thread ended before starting".into(),
            ))),
        }
    }
}

/// Builds and loads the model (see [`NativeModel::load`]).
fn load_model(
    language: Option<String>,
    config: Option<String>,
    quantize: Option<Quantization>,
    dtype: Option<WeightDtype>,
    mimi_dtype: Option<WeightDtype>,
    threads: Option<usize>,
) -> pocket_tts_core::Result<TtsModel> {
    let mut builder = TtsModel::builder().download(true).quantization(quantize);
    if let Some(spec) = config {
        // A local path, or `hf://` (downloaded unless cached).
        let path = hub::resolve_with(&spec, None, true)?;
        let parsed = Config::from_yaml_file(&path)?;
        let dir = path.parent().map(Path::to_path_buf);
        builder = builder.config(parsed, dir.as_deref());
    } else if let Some(language) = language {
        builder = builder.language(language);
    }
    if let Some(dtype) = dtype {
        builder = builder.dtype(dtype);
    }
    if let Some(dtype) = mimi_dtype {
        builder = builder.mimi_dtype(dtype);
    }
    if let Some(threads) = threads {
        builder = builder.threads(threads);
    }
    builder.load()
}
