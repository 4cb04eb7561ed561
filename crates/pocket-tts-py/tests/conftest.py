"""Shared fixtures: the tiny random-weight model made by the reference (the repository's
``tests/fixtures/tiny``, see ``scripts/reference/README.md``) and its recorded outputs.

A missing fixture fails the test that needs it (never a skip)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "fixtures" / "tiny"
TOKENIZER = REPO / "crates" / "pocket-tts-core" / "tests" / "fixtures" / "assets" / "tokenizer.model"

#: Tolerance for audio against the reference (the project's rule: 1e-3 for audio).
AUDIO_TOL = 1e-3


def fixture(path: Path) -> Path:
    assert path.is_file(), f"fixture {path} is missing; regenerate it with scripts/reference/"
    return path


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (float32/int64/uint8 only), without the safetensors
    package: an 8-byte header length, a JSON header, then the raw little-endian data."""
    data = fixture(path).read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    dtypes = {"F32": "<f4", "I64": "<i8", "U8": "u1"}
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] not in dtypes:
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(body[start:end], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
    return out


@pytest.fixture(scope="session")
def meta() -> dict:
    return json.loads(fixture(TINY / "meta.json").read_text())


@pytest.fixture(scope="session")
def stages() -> dict[str, np.ndarray]:
    return read_safetensors(TINY / "stages.safetensors")


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model's config in a folder of its own, next to its weights and the
    committed tokenizer (the config names both by relative path, as the reference ran
    it)."""
    d = tmp_path_factory.mktemp("tiny")
    shutil.copy(fixture(TINY / "config.yaml"), d / "config.yaml")
    (d / "model.safetensors").symlink_to(fixture(TINY / "model.safetensors"))
    (d / "tokenizer.model").symlink_to(fixture(TOKENIZER))
    return d


@pytest.fixture(scope="session")
def model(tiny_dir: Path, meta: dict):
    """The tiny model at temperature 0 with the fixtures' EOS threshold."""
    from pocket_tts_rs import TTSModel

    return TTSModel.load_model(
        config=tiny_dir / "config.yaml", temp=0.0,
        eos_threshold=meta["generation"]["eos_threshold"],
    )


@pytest.fixture(scope="session")
def voice_wav() -> Path:
    return fixture(TINY / "voice_excerpt.wav")


@pytest.fixture(scope="session")
def reference_state_file() -> Path:
    """A voice state exported by the reference's ``export_model_state``."""
    return fixture(TINY / "voice_state.safetensors")


@pytest.fixture(scope="session")
def state(model, reference_state_file: Path):
    return model.get_state_for_audio_prompt(reference_state_file)


def max_abs_diff(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"
    return float(np.max(np.abs(a - b))) if a.size else 0.0
