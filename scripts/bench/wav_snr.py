"""SNR of one 16-bit WAV against another, whole and per 80 ms frame (1920 samples at
24 kHz): the accuracy figures of scripts/bench/accuracy.sh quantize and scripts/bench/accuracy.sh dtype.
Needs numpy and soundfile (the reference venv has both)."""

from __future__ import annotations

import numpy as np
import soundfile as sf

FRAME = 1920


def load(path: str) -> np.ndarray:
    x, _ = sf.read(path, dtype="int16", always_2d=False)
    return x.astype(np.float64) / 32768


def snr(a: np.ndarray, b: np.ndarray) -> float:
    noise = np.sum((a - b) ** 2)
    return float("inf") if noise == 0 else 10 * np.log10(np.sum(a ** 2) / noise)


def compare(reference: str, other: str, what: str) -> tuple[float, float, float, float, int]:
    """(whole-WAV SNR, per-frame median, 10th percentile, worst, frames) of `other`
    against `reference` (frames of silence in `reference` are skipped)."""
    a, b = load(reference), load(other)
    assert a.size == b.size, f"{what}: lengths differ ({a.size} vs {b.size})"
    frames = np.array([snr(a[i:i + FRAME], b[i:i + FRAME])
                       for i in range(0, a.size - FRAME + 1, FRAME) if np.any(a[i:i + FRAME])])
    return snr(a, b), float(np.median(frames)), float(np.percentile(frames, 10)), \
        float(frames.min()), a.size // FRAME
