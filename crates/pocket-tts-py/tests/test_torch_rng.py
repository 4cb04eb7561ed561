"""The sampling noise drawn from torch's default generator, as the reference draws it.

CI has no torch (gigabytes), so these tests stand a small fake ``torch`` module in for it:
it holds the bytes of ``torch.get_rng_state()`` and takes them back in
``torch.set_rng_state``, which is all the package asks of torch's generator. The states
and audio come from the reference run under real torch
(``scripts/reference/make_seeded_fixtures.py``): each case's ``rng_before`` is torch's
state right before the reference's ``generate_audio_stream``, ``rng_after`` right after it.
With our package given ``rng_before``, the audio must equal the reference's within 1e-3
and the state handed back to torch must be ``rng_after`` byte for byte.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import pocket_tts_rs._model as pm
from conftest import AUDIO_TOL, TINY, fixture, max_abs_diff, read_safetensors


class FakeTensor:
    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)

    def numpy(self) -> np.ndarray:
        return np.frombuffer(self.data, dtype=np.uint8)


class FakeTorch:
    """torch's generator API as the package uses it (state bytes in, state bytes out)."""

    uint8 = "uint8"

    def __init__(self, state: bytes) -> None:
        self.state = bytes(state)
        self.gets = 0
        self.sets = 0

    def get_rng_state(self) -> FakeTensor:
        self.gets += 1
        return FakeTensor(self.state)

    def set_rng_state(self, tensor: FakeTensor) -> None:
        self.sets += 1
        self.state = tensor.data

    def frombuffer(self, buffer: bytearray, dtype: str) -> FakeTensor:
        assert dtype == self.uint8
        return FakeTensor(bytes(buffer))

    def from_numpy(self, array: np.ndarray) -> np.ndarray:
        return array


@pytest.fixture(scope="module")
def seeded() -> tuple[dict, dict[str, np.ndarray]]:
    meta = json.loads(fixture(TINY / "seeded.json").read_text())
    return meta, read_safetensors(TINY / "seeded.safetensors")


def install(monkeypatch: pytest.MonkeyPatch, state: bytes) -> FakeTorch:
    fake = FakeTorch(state)
    monkeypatch.setattr(pm, "_torch_module", fake)
    monkeypatch.setattr(pm, "_torch_checked", True)
    return fake


def load(tiny_dir, case: dict, eos_threshold: float, **kwargs):
    from pocket_tts_rs import TTSModel

    return TTSModel.load_model(
        config=tiny_dir / "config.yaml", temp=case["temperature"],
        noise_clamp=case["noise_clamp"], eos_threshold=eos_threshold, **kwargs,
    )


def test_every_case_draws_torchs_noise_and_leaves_torchs_state(
    monkeypatch, tiny_dir, reference_state_file, seeded
):
    meta, tensors = seeded
    assert any(c["prelude"] for c in meta["cases"]), "a case that starts mid-state"
    assert any(c["temperature"] == 0 for c in meta["cases"]), "a temperature-0 case"
    for case in meta["cases"]:
        name = case["name"]
        before = tensors[f"{name}.rng_before"].tobytes()
        after = tensors[f"{name}.rng_after"].tobytes()
        assert len(before) == 5056 and before != after
        fake = install(monkeypatch, before)
        model = load(tiny_dir, case, meta["eos_threshold"])
        voice = model.get_state_for_audio_prompt(reference_state_file)
        audio = model.generate_audio(voice, case["text"], max_tokens=case["max_tokens"])
        err = max_abs_diff(audio, tensors[f"{name}.audio"])
        assert err <= AUDIO_TOL, f"{name}: audio differs by {err}"
        assert fake.state == after, f"{name}: torch's state after the call is not the reference's"


def test_a_stream_read_to_its_end_advances_torch_and_a_stopped_one_does_not(
    monkeypatch, tiny_dir, reference_state_file, seeded
):
    meta, tensors = seeded
    case = next(c for c in meta["cases"] if c["name"] == "t07_state")
    before = tensors["t07_state.rng_before"].tobytes()
    fake = install(monkeypatch, before)
    model = load(tiny_dir, case, meta["eos_threshold"])
    voice = model.get_state_for_audio_prompt(reference_state_file)

    chunks = list(model.generate_audio_stream(voice, case["text"], max_tokens=case["max_tokens"]))
    assert max_abs_diff(np.concatenate(chunks), tensors["t07_state.audio"]) <= AUDIO_TOL
    assert fake.state == tensors["t07_state.rng_after"].tobytes()

    fake.state = before
    stream = model.generate_audio_stream(voice, case["text"], max_tokens=case["max_tokens"])
    next(stream)
    stream.close()
    assert fake.state == before, "a generation stopped early left torch's state changed"

    # The generator was given back: the next call draws from torch again, the same noise.
    again = model.generate_audio(voice, case["text"], max_tokens=case["max_tokens"])
    np.testing.assert_array_equal(again, np.concatenate(chunks))


def test_with_a_seed_torchs_generator_is_left_alone(
    monkeypatch, tiny_dir, reference_state_file, seeded
):
    meta, tensors = seeded
    case = next(c for c in meta["cases"] if c["name"] == "t07")
    fake = install(monkeypatch, tensors["t07_state.rng_before"].tobytes())
    model = load(tiny_dir, case, meta["eos_threshold"], seed=case["seed"])
    voice = model.get_state_for_audio_prompt(reference_state_file)
    audio = model.generate_audio(voice, case["text"], max_tokens=case["max_tokens"])
    assert max_abs_diff(audio, tensors["t07.audio"]) <= AUDIO_TOL
    assert (fake.gets, fake.sets) == (0, 0)


def test_a_call_made_while_another_holds_the_generator_draws_its_own_noise(
    monkeypatch, tiny_dir, reference_state_file, seeded
):
    meta, tensors = seeded
    case = next(c for c in meta["cases"] if c["name"] == "t07_state")
    before = tensors["t07_state.rng_before"].tobytes()
    fake = install(monkeypatch, before)
    model = load(tiny_dir, case, meta["eos_threshold"])
    voice = model.get_state_for_audio_prompt(reference_state_file)
    holder = model.generate_audio_stream(voice, case["text"], max_tokens=case["max_tokens"])
    first = [next(holder)]  # holds torch's generator until it ends
    results = []
    worker = threading.Thread(
        target=lambda: results.append(
            model.generate_audio(voice, case["text"], max_tokens=case["max_tokens"])
        )
    )
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive() and len(results) == 1
    assert fake.gets == 1, "the concurrent call read torch's generator"
    assert fake.state == before
    first += list(holder)
    assert max_abs_diff(np.concatenate(first), tensors["t07_state.audio"]) <= AUDIO_TOL
    assert fake.state == tensors["t07_state.rng_after"].tobytes()
    # Its own random noise: not the held generator's.
    held = tensors["t07_state.audio"]
    assert results[0].shape != held.shape or max_abs_diff(results[0], held) > AUDIO_TOL
