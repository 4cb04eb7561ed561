"""``TTSModel`` and ``export_model_state``: the reference's API (``pocket_tts`` 4.0.1,
``models/tts_model.py`` and ``models/model_state.py``) over the Rust model in
``pocket_tts_rs._native``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator, Iterator, Optional, Union

import numpy as np

from pocket_tts_rs import _native

logger = logging.getLogger("pocket_tts_rs")

#: A voice state: what :meth:`TTSModel.get_state_for_audio_prompt` returns.
ModelState = _native.NativeState

# The reference's defaults (pocket_tts/default_parameters.py).
DEFAULT_LANGUAGE = "english"
DEFAULT_SAMPLER_DECODE_STEPS = 1
DEFAULT_NOISE_CLAMP = None
MAX_TOKEN_PER_CHUNK = 50

_DTYPES = {
    "f32": "float32",
    "float32": "float32",
    "f16": "float16",
    "float16": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
}

# Threads that wait for the next frame of async streams (each wait releases the GIL).
# Separate from asyncio's default executor, whose few workers would make concurrent
# streams wait for each other.
_ASYNC_POOL = concurrent.futures.ThreadPoolExecutor(
    max_workers=256, thread_name_prefix="pocket_tts_rs-async"
)

_torch_module: Any = None
_torch_checked = False


def _torch() -> Any:
    """torch if it can be imported (imported once, on the first audio returned)."""
    global _torch_module, _torch_checked
    if not _torch_checked:
        try:
            import torch  # type: ignore[import-not-found]

            _torch_module = torch
        except ImportError:
            _torch_module = None
        _torch_checked = True
    return _torch_module


# The generation drawing from torch's default generator (one at a time, see _TorchRng).
_torch_rng_lock = threading.Lock()
_torch_rng_busy = False


class _TorchRng:
    """The sampling noise drawn from torch's default CPU generator, as the reference draws
    it: a generation starts from ``torch.get_rng_state()`` and, once it has run to its end,
    leaves the generator where the reference's would (``torch.set_rng_state``). So
    ``torch.manual_seed(N)`` right before a call gives the reference's audio for that seed,
    and the next call continues from there.

    Used when the model has no ``seed`` and torch is importable. One generation at a time
    holds torch's generator: a call made while another holds it gets its own random noise
    (two concurrent calls would otherwise start from the same state and draw the same
    noise)."""

    def __init__(self) -> None:
        self.torch: Any = None

    def take(self) -> Optional[bytes]:
        """The generator's state for a new generation, or ``None`` (no torch, or another
        generation holds it)."""
        global _torch_rng_busy
        torch = _torch()
        if torch is None:
            return None
        with _torch_rng_lock:
            if _torch_rng_busy:
                return None
            _torch_rng_busy = True
        self.torch = torch
        try:
            return torch.get_rng_state().numpy().tobytes()
        except BaseException:
            self.give_back(None)
            raise

    def give_back(self, native: Any) -> None:
        """Sets torch's generator to the state after the generation, if it ran to its end;
        releases the generator either way. Idempotent."""
        global _torch_rng_busy
        torch, self.torch = self.torch, None
        if torch is None:
            return
        try:
            state = None if native is None else native.torch_rng_state
            if state is not None:
                torch.set_rng_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))
        finally:
            with _torch_rng_lock:
                _torch_rng_busy = False


class _Audio(np.ndarray):
    """A ``float32`` numpy array with torch's ``.numpy()``, so that code written for the
    reference (``audio.numpy()``) runs without torch."""

    def numpy(self) -> np.ndarray:
        return self.view(np.ndarray)


def _output(samples: np.ndarray) -> Any:
    """The array as the reference returns audio: a torch tensor sharing its memory when
    torch is importable, else the array itself."""
    torch = _torch()
    if torch is not None:
        return torch.from_numpy(samples)
    return samples.view(_Audio)


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _download(url: str) -> tuple[Path, Path]:
    """Downloads ``url`` into a new temporary folder, keeping the file name (its
    extension tells the format). Returns (file, folder); the caller removes the folder."""
    name = Path(urllib.parse.urlsplit(url).path).name or "download"
    folder = Path(tempfile.mkdtemp(prefix="pocket_tts_rs-"))
    dest = folder / name
    try:
        with urllib.request.urlopen(url, timeout=60) as response, open(dest, "wb") as f:
            shutil.copyfileobj(response, f)
    except Exception as e:
        shutil.rmtree(folder, ignore_errors=True)
        raise FileNotFoundError(f"cannot download {url}: {e}") from e
    return dest, folder


def _mono_samples(audio: Any) -> np.ndarray:
    """A ``[channels, samples]`` (or ``[samples]``) torch tensor or array as mono
    ``float32`` samples (channels averaged)."""
    if hasattr(audio, "detach"):  # a torch tensor, without importing torch
        audio = audio.detach().cpu().float().numpy()
    try:
        array = np.asarray(audio, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise ValueError(
            "audio_conditioning: expected a path, a URL, a voice name or an array "
            f"[channels, samples], got {type(audio).__name__}"
        ) from e
    if array.ndim == 2:
        array = array[0] if array.shape[0] == 1 else array.mean(axis=0)
    elif array.ndim != 1:
        raise ValueError(
            f"audio_conditioning: an array of shape {list(array.shape)}; expected "
            "[channels, samples] or [samples] at the model's sample rate"
        )
    if array.size == 0:
        raise ValueError("audio_conditioning: the audio is empty")
    if not np.isfinite(array).all():
        raise ValueError("audio_conditioning: the audio holds NaN or infinite samples")
    return np.ascontiguousarray(array, dtype=np.float32)


class TTSModel:
    """A Pocket TTS model (reference: ``pocket_tts.TTSModel``).

    Load it with :meth:`load_model`. Generation parameters set at load time are attributes
    read by every call (``temp``, ``sampler_decode_steps``, ``noise_clamp``,
    ``eos_threshold``, and ours: ``normalize``, ``markup``, ``seed``); changing one affects
    the calls made afterwards.

    Unlike the reference, a model is thread-safe: any number of threads may generate with
    it at once. The first call on an idle model runs on it directly; calls made while
    another runs are batched (one FlowLM pass per frame for all of them), each giving the
    audio it would give alone.
    """

    def __init__(self, native: Any, temp: float, sampler_decode_steps: int,
                 noise_clamp: Optional[float], eos_threshold: float, normalize: bool,
                 markup: bool, seed: Optional[int]) -> None:
        self._native = native
        self.temp = temp
        self.sampler_decode_steps = sampler_decode_steps
        self.noise_clamp = noise_clamp
        self.eos_threshold = eos_threshold
        self.normalize = normalize
        self.markup = markup
        self.seed = seed

    @classmethod
    def load_model(
        cls,
        language: Optional[str] = None,
        config: Union[str, Path, None] = None,
        temp: Optional[float] = None,
        sampler_decode_steps: int = DEFAULT_SAMPLER_DECODE_STEPS,
        noise_clamp: Optional[float] = DEFAULT_NOISE_CLAMP,
        eos_threshold: Optional[float] = None,
        quantize: Union[bool, str] = False,
        checkpoint: Union[str, Path, None] = None,
        lsd_decode_steps: Optional[int] = None,
        *,
        dtype: Optional[str] = None,
        mimi_dtype: Optional[str] = None,
        threads: Optional[int] = None,
        normalize: bool = False,
        markup: bool = False,
        seed: Optional[int] = None,
        max_streams: int = 8,
    ) -> "TTSModel":
        """Loads a model (reference: ``TTSModel.load_model``). The GIL is released while
        the weights are read.

        Args:
            language: a built-in model (``"english"``, ``"french"``, ``"german_24l"``, …);
                incompatible with ``config``. Neither: ``"english"``.
            config: a model config YAML file: a local path, an ``hf://repo/path[@rev]`` or
                an ``https://`` URL. Relative paths in it are resolved against its folder.
            temp: sampling temperature (``None``: the config's ``default_temperature``,
                0.3); 0 is deterministic.
            sampler_decode_steps: flow-head (LSD) steps per frame.
            noise_clamp: truncate the sampling noise to ±this (``None``: no clamp).
            eos_threshold: end of speech once the EOS logit exceeds this (``None``: the
                config's ``default_eos_threshold``, -4).
            quantize: quantized weights for the FlowLM transformer's linears: ``True`` or
                ``"int8"``, int8 as the reference's (about 2x faster steps, less
                memory); ours: ``"q4"``, 4-bit blocks of 32 (half of int8's memory). A
                checkpoint written by ``pocket-tts-cli export-model`` is already
                quantized and loads as it is.
            checkpoint: training ``.pt`` checkpoints cannot be loaded here (``ValueError``);
                export the weights to safetensors and name them in a config.
            lsd_decode_steps: deprecated name of ``sampler_decode_steps``.
            dtype: ours: ``"f32"``, ``"f16"`` or ``"bf16"`` storage of the FlowLM's
                weights (``None``: the config's ``flow_lm.dtype``).
            mimi_dtype: ours: ``"f32"``, ``"f16"`` or ``"bf16"`` storage of the Mimi
                decoder's weights, computed in f32 (``None``: ``"f16"`` with
                ``quantize``, 63 dB SNR against f32; else ``"f32"``, the reference's).
            threads: ours: generation threads (``None``: the CPUs available, at most 2).
            normalize: ours: read numbers, dates, money, units and abbreviations aloud.
            markup: ours: ``[pause 500ms]`` / ``<break time="500ms"/>`` become silence.
            seed: ours: seed of the sampling noise (``None``: random).
            max_streams: ours: concurrent generations batched together.

        Raises:
            FileNotFoundError: the config, weights or tokenizer do not exist (or, with
                ``language``, there is no such built-in model).
            ValueError: invalid arguments or a config/checkpoint that does not fit.
        """
        if config is not None and language is not None:
            raise ValueError(
                "Cannot specify both config and language, please choose one or the other."
            )
        if checkpoint is not None:
            raise ValueError(
                f"checkpoint={str(checkpoint)!r}: training checkpoints (.pt) are not "
                "supported by pocket_tts_rs; export the weights to safetensors and name "
                "them in a config (weights_path)"
            )
        if lsd_decode_steps is not None:
            logger.warning("lsd_decode_steps is deprecated, use sampler_decode_steps")
            sampler_decode_steps = lsd_decode_steps
        if dtype is not None:
            if dtype not in _DTYPES:
                raise ValueError(
                    f"dtype={dtype!r}: expected one of f32, f16, bf16 (or float32, "
                    "float16, bfloat16)"
                )
            dtype = _DTYPES[dtype]
        if mimi_dtype is not None:
            if mimi_dtype not in _DTYPES:
                raise ValueError(
                    f"mimi_dtype={mimi_dtype!r}: expected one of f32, f16, bf16 (or float32, "
                    "float16, bfloat16)"
                )
            mimi_dtype = _DTYPES[mimi_dtype]
        if quantize is True:
            quantize = "int8"
        elif quantize is False or quantize is None:
            quantize = None
        elif not isinstance(quantize, str) or quantize.lower() not in ("int8", "q4"):
            raise ValueError(f"quantize={quantize!r}: expected True, False, 'int8' or 'q4'")
        else:
            quantize = quantize.lower()
        if threads is not None and threads < 1:
            raise ValueError(f"threads={threads}: must be at least 1")
        if max_streams < 1:
            raise ValueError(f"max_streams={max_streams}: must be at least 1")
        if seed is not None and not 0 <= seed < 2**64:
            raise ValueError(f"seed={seed}: must be in [0, 2**64)")

        config_path: Optional[str] = None
        folder: Optional[Path] = None
        if config is None:
            language = language if language is not None else DEFAULT_LANGUAGE
            if language not in _native.LANGUAGES:
                raise FileNotFoundError(
                    f"no built-in model for language {language!r}; the built-in models "
                    f"are {', '.join(_native.LANGUAGES)}"
                )
        else:
            config_path = os.fspath(config)
            suffix_source = (
                config_path.split("@")[0] if config_path.startswith("hf://") else config_path
            )
            if _is_url(config_path):
                suffix_source = urllib.parse.urlsplit(config_path).path
            if Path(suffix_source).suffix not in (".yaml", ".yml"):
                raise ValueError("Config should be a path to a YAML file ending with .yaml")
        try:
            if config_path is not None and _is_url(config_path):
                local, folder = _download(config_path)
                config_path = str(local)
            logger.info("Loading model from %s...", config_path or f"language {language}")
            started = time.monotonic()
            native = _native.NativeModel.load(
                language=language if config_path is None else None,
                config=config_path,
                quantize=quantize,
                dtype=dtype,
                threads=threads,
                max_streams=max_streams,
                mimi_dtype=mimi_dtype,
            )
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        logger.info("Model loaded in %d ms", int((time.monotonic() - started) * 1000))
        return cls(
            native,
            temp=native.default_temperature if temp is None else temp,
            sampler_decode_steps=sampler_decode_steps,
            noise_clamp=noise_clamp,
            eos_threshold=native.default_eos_threshold if eos_threshold is None else eos_threshold,
            normalize=normalize,
            markup=markup,
            seed=seed,
        )

    @property
    def sample_rate(self) -> int:
        """Output sample rate in Hz (24000)."""
        return self._native.sample_rate

    @property
    def device(self) -> str:
        """Where the model runs: always ``"cpu"``."""
        return "cpu"

    @property
    def has_voice_cloning(self) -> bool:
        """Whether voices can be cloned from audio (the checkpoint has the Mimi encoder)."""
        return self._native.has_voice_cloning

    @property
    def quantize(self) -> bool:
        """Whether the FlowLM transformer's weights are quantized (int8 or 4-bit)."""
        return self._native.quantize

    @property
    def quantization(self) -> Optional[str]:
        """``"int8"``, ``"q4"`` or ``None`` (float)."""
        return self._native.quantization

    @property
    def threads(self) -> int:
        """Generation threads."""
        return self._native.threads

    def __repr__(self) -> str:
        what = self._native.language or "config"
        return (
            f"TTSModel({what}, quantize={self._native.quantization!r}, dtype={self._native.dtype}, "
            f"mimi_dtype={self._native.mimi_dtype}, "
            f"threads={self._native.threads}, temp={self.temp})"
        )

    def get_state_for_audio_prompt(
        self, audio_conditioning: Union[Path, str, Any], truncate: bool = False
    ) -> ModelState:
        """A voice state for generation (reference: ``get_state_for_audio_prompt``). The
        GIL is released while the audio is encoded.

        Args:
            audio_conditioning: one of
                - a predefined voice name (``"alba"``, …; built-in languages only);
                - a local path or ``hf://`` / ``http(s)://`` location of an audio file
                  (WAV, MP3, FLAC, OGG; any rate and channels, resampled to 24 kHz) or of a
                  ``.safetensors`` voice state (ours or the reference's
                  ``export_model_state``);
                - an array ``[channels, samples]`` or ``[samples]`` (numpy or torch) at
                  the model's sample rate (channels are averaged).
            truncate: keep only the first 30 s of an audio file.

        Returns:
            A :class:`ModelState` (share it between calls and threads; only a call with
            ``copy_state=False`` changes it).

        Raises:
            FileNotFoundError: the file or voice does not exist.
            ValueError: unreadable audio or voice state, a state that does not fit this
                model, an empty or non-finite array, a model without voice cloning.
        """
        if isinstance(audio_conditioning, ModelState):
            return audio_conditioning
        if isinstance(audio_conditioning, (str, os.PathLike)):
            source = os.fspath(audio_conditioning)
            started = time.monotonic()
            if _is_url(source):
                local, folder = _download(source)
                try:
                    state = self._native.voice_from_source(str(local), truncate)
                finally:
                    shutil.rmtree(folder, ignore_errors=True)
            else:
                state = self._native.voice_from_source(source, truncate)
        else:
            samples = _mono_samples(audio_conditioning)
            started = time.monotonic()
            state = self._native.voice_from_samples(samples)
        logger.info(
            "Voice state of %d positions in %d ms", len(state),
            int((time.monotonic() - started) * 1000),
        )
        return state

    def _start(self, model_state: ModelState, text_to_generate: str, max_tokens: int,
               frames_after_eos: Optional[int], rng: _TorchRng, copy_state: bool) -> Any:
        """Starts a native stream; with no ``seed``, ``rng`` may lend it torch's generator
        state (the caller gives it back with ``rng.give_back(native)``)."""
        if not isinstance(model_state, ModelState):
            raise TypeError(
                "model_state: expected a ModelState from get_state_for_audio_prompt, got "
                f"{type(model_state).__name__} (a reference state dict can be loaded after "
                "export_model_state with get_state_for_audio_prompt('file.safetensors'))"
            )
        if not isinstance(text_to_generate, str):
            raise TypeError(
                f"text_to_generate: expected a str, got {type(text_to_generate).__name__}"
            )
        for name, value in (("max_tokens", max_tokens), ("frames_after_eos", frames_after_eos)):
            if value is not None and value < 0:
                raise ValueError(f"{name}: {value} is negative")
        torch_state = rng.take() if self.seed is None else None
        try:
            return self._native.stream(
                model_state,
                text_to_generate,
                temperature=float(self.temp),
                sampler_decode_steps=int(self.sampler_decode_steps),
                noise_clamp=None if self.noise_clamp is None else float(self.noise_clamp),
                eos_threshold=float(self.eos_threshold),
                max_tokens=int(max_tokens),
                frames_after_eos=None if frames_after_eos is None else int(frames_after_eos),
                seed=self.seed,
                normalize=bool(self.normalize),
                markup=bool(self.markup),
                torch_rng_state=torch_state,
                copy_state=bool(copy_state),
            )
        except BaseException:
            rng.give_back(None)
            raise

    def _log_done(self, native: Any) -> None:
        elapsed = native.elapsed_s
        if elapsed is None or not logger.isEnabledFor(logging.INFO):
            return
        audio_ms = native.samples * 1000 // self.sample_rate
        generation_ms = max(int(elapsed * 1000), 1)
        logger.info(
            "Generated: %d ms of audio in %d ms so %.2fx faster than real-time "
            "(first chunk after %d ms%s)",
            audio_ms,
            generation_ms,
            audio_ms / generation_ms,
            int((native.first_chunk_s or 0) * 1000),
            ", batched" if native.batched else "",
        )

    def generate_audio(
        self,
        model_state: ModelState,
        text_to_generate: str,
        max_tokens: int = MAX_TOKEN_PER_CHUNK,
        frames_after_eos: Optional[int] = None,
        copy_state: bool = True,
    ) -> Any:
        """The whole audio of ``text_to_generate`` (reference: ``generate_audio``). The GIL
        is released until it is complete; other threads may generate at the same time.

        Args:
            model_state: from :meth:`get_state_for_audio_prompt`.
            text_to_generate: the text; long texts are split into sentence chunks of at
                most ``max_tokens`` tokens.
            max_tokens: tokens per chunk.
            frames_after_eos: frames (80 ms each) generated after the end of speech is
                detected (``None``: from the text's length, as the reference).
            copy_state: ``True`` (default): every text chunk starts from ``model_state``,
                which is left unchanged. ``False``, as the reference: each chunk continues
                from the state the previous one left, and ``model_state`` is replaced in
                place by the state the generation leaves once it has run to its end (a
                generation stopped early leaves it unchanged), so the next call continues
                from it. Such a call runs on a thread of its own, not batched.

        The sampling noise (temperature > 0) is drawn as the reference draws it: with the
        model's ``seed``, from the generator ``torch.manual_seed(seed)`` makes, anew for
        every call; without one, when torch is importable, from torch's default generator,
        which the call advances as the reference's would once it has run to its end (so
        ``torch.manual_seed(N)`` right before the call gives the reference's audio; one
        call at a time holds it, others draw their own random noise); else at random.

        Returns:
            1-D ``float32`` samples ``[samples]`` at :attr:`sample_rate`: a
            ``torch.Tensor`` when torch is importable, else a ``numpy.ndarray``; no copy.

        Raises:
            ValueError: empty text or a parameter out of range (named).
            RuntimeError: a failure of the model.
        """
        rng = _TorchRng()
        native = self._start(
            model_state, text_to_generate, max_tokens, frames_after_eos, rng, copy_state
        )
        try:
            samples = native.collect()
        finally:
            native.cancel()
            rng.give_back(native)
        self._log_done(native)
        return _output(samples)

    def generate_audio_stream(
        self,
        model_state: ModelState,
        text_to_generate: str,
        max_tokens: int = MAX_TOKEN_PER_CHUNK,
        frames_after_eos: Optional[int] = None,
        copy_state: bool = True,
        stop: Optional[threading.Event] = None,
    ) -> Iterator[Any]:
        """Yields the audio as it is decoded (reference: ``generate_audio_stream``): 1-D
        ``float32`` chunks of 1920 samples (80 ms at 24 kHz), torch tensors when torch is
        importable, else numpy arrays. Their concatenation is :meth:`generate_audio`'s
        result. The GIL is released while waiting for a chunk.

        Generation stops (within a frame) when ``stop`` is set, when the iterator is
        closed or garbage-collected, or when the consumer breaks out of its loop.
        Arguments and errors as :meth:`generate_audio`.
        """
        rng = _TorchRng()
        native = self._start(
            model_state, text_to_generate, max_tokens, frames_after_eos, rng, copy_state
        )
        done = threading.Event()
        if stop is not None:
            _watch_stop(stop, native, done)
        try:
            for samples in native:
                if stop is not None and stop.is_set():
                    break
                yield _output(samples)
        finally:
            done.set()
            native.cancel()
            rng.give_back(native)
        self._log_done(native)

    async def agenerate_audio_stream(
        self,
        model_state: ModelState,
        text_to_generate: str,
        max_tokens: int = MAX_TOKEN_PER_CHUNK,
        frames_after_eos: Optional[int] = None,
        copy_state: bool = True,
        stop: Optional[threading.Event] = None,
    ) -> AsyncIterator[Any]:
        """:meth:`generate_audio_stream` for asyncio: an async iterator of the same chunks;
        the event loop is never blocked (each chunk is awaited on a worker thread).
        Cancelling the task, or closing the iterator (``aclose``, leaving ``async for``),
        stops the generation."""
        loop = asyncio.get_running_loop()
        rng = _TorchRng()
        native = await loop.run_in_executor(
            _ASYNC_POOL,
            lambda: self._start(
                model_state, text_to_generate, max_tokens, frames_after_eos, rng, copy_state
            ),
        )
        done = threading.Event()
        if stop is not None:
            _watch_stop(stop, native, done)
        try:
            while True:
                samples = await loop.run_in_executor(_ASYNC_POOL, _next_or_none, native)
                if samples is None or (stop is not None and stop.is_set()):
                    break
                yield _output(samples)
        finally:
            done.set()
            native.cancel()
            rng.give_back(native)
        self._log_done(native)

    def busy(self) -> tuple[int, int, int]:
        """Ours: ``(direct, batched, queued)``: generations running directly on the model,
        in its batched engine, and waiting for a slot. All 0 when nothing runs."""
        return self._native.busy()


def _next_or_none(native: Any) -> Optional[np.ndarray]:
    return next(native, None)


def _watch_stop(stop: threading.Event, native: Any, done: threading.Event) -> None:
    """Cancels ``native`` as soon as ``stop`` is set (checked every 20 ms), even while no
    one reads the stream, as the reference's generation thread checks it every frame."""

    def watch() -> None:
        while not done.is_set():
            if stop.wait(0.02):
                native.cancel()
                return

    threading.Thread(target=watch, name="pocket_tts_rs-stop", daemon=True).start()


def export_model_state(model_state: ModelState, dest: Union[str, Path]) -> None:
    """Writes a voice state as a safetensors file in the reference's format
    (``pocket_tts.export_model_state``): the reference's ``get_state_for_audio_prompt``
    loads it, and so does ours. A regular file is replaced atomically.

    Raises:
        TypeError: ``model_state`` is not a :class:`ModelState`.
        OSError: ``dest`` cannot be written (named).
    """
    if not isinstance(model_state, ModelState):
        raise TypeError(
            f"model_state: expected a ModelState, got {type(model_state).__name__}"
        )
    model_state.save(os.fspath(dest))

