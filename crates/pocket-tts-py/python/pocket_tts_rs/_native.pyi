"""Type stubs of the compiled module ``pocket_tts_rs._native`` (src/*.rs). Use the
public API in ``pocket_tts_rs`` instead: these classes are its building blocks."""

from os import PathLike
from typing import Iterator, Optional, Union

import numpy as np
import numpy.typing as npt

#: Built-in model names accepted by ``TTSModel.load_model(language=...)``.
LANGUAGES: list[str]
#: Predefined voice names (built-in languages only).
PREDEFINED_VOICES: list[str]

class NativeState:
    """A voice state: the FlowLM's KV caches after the voice prompt; shared, replaced only
    by a generation with ``copy_state=False`` that ran to its end."""

    def __len__(self) -> int:
        """Prompt length in positions (latent frames at 12.5 Hz, plus BOS)."""
    @property
    def num_layers(self) -> int: ...
    @property
    def kv_heads(self) -> int: ...
    @property
    def head_dim(self) -> int: ...
    def save(self, path: Union[str, PathLike[str]]) -> None:
        """Writes the reference's ``export_model_state`` format; raises ``OSError``."""

class NativeStream(Iterator[npt.NDArray[np.float32]]):
    """One generation's frames: 1-D ``float32`` arrays of 1920 samples (80 ms at 24 kHz)."""

    def __iter__(self) -> "NativeStream": ...
    def __next__(self) -> npt.NDArray[np.float32]: ...
    def collect(self) -> npt.NDArray[np.float32]:
        """Every remaining frame concatenated, ``[samples]``."""
    def cancel(self) -> None:
        """Stops the generation at its next frame (any thread)."""
    @property
    def batched(self) -> bool: ...
    @property
    def samples(self) -> int: ...
    @property
    def first_chunk_s(self) -> Optional[float]: ...
    @property
    def elapsed_s(self) -> Optional[float]: ...
    @property
    def torch_rng_state(self) -> Optional[bytes]:
        """``torch.get_rng_state()`` bytes after a generation that ran to its end."""

class NativeModel:
    """A loaded model; thread-safe."""

    @staticmethod
    def load(
        language: Optional[str] = None,
        config: Optional[str] = None,
        quantize: Optional[str] = None,
        dtype: Optional[str] = None,
        threads: Optional[int] = None,
        max_streams: int = 8,
        mimi_dtype: Optional[str] = None,
    ) -> "NativeModel": ...
    @property
    def sample_rate(self) -> int: ...
    @property
    def default_temperature(self) -> float: ...
    @property
    def default_eos_threshold(self) -> float: ...
    @property
    def language(self) -> Optional[str]: ...
    @property
    def quantize(self) -> bool: ...
    @property
    def quantization(self) -> Optional[str]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def mimi_dtype(self) -> str: ...
    @property
    def threads(self) -> int: ...
    @property
    def has_voice_cloning(self) -> bool: ...
    def voice_from_source(self, source: str, truncate: bool) -> NativeState: ...
    def voice_from_samples(self, samples: npt.NDArray[np.float32]) -> NativeState: ...
    def load_state(self, path: Union[str, PathLike[str]]) -> NativeState: ...
    def stream(
        self,
        state: NativeState,
        text: str,
        *,
        temperature: float,
        sampler_decode_steps: int,
        noise_clamp: Optional[float],
        eos_threshold: float,
        max_tokens: int,
        frames_after_eos: Optional[int],
        seed: Optional[int],
        normalize: bool,
        markup: bool,
        torch_rng_state: Optional[bytes] = None,
        copy_state: bool = True,
    ) -> NativeStream: ...
    def generate_in_rust(
        self, state: NativeState, text: str, *, temperature: float, eos_threshold: float,
        max_tokens: int,
    ) -> tuple[int, float, float]:
        """Benchmarks: the generation run inside Rust: (samples, first frame s, total s)."""
    def busy(self) -> tuple[int, int, int]:
        """(direct, engine active, engine queued) generations."""
