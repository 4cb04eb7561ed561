"""``copy_state=False``, as the reference's: the chunks chain their states and the
``ModelState`` is left with the state the generation ends with, so the next call continues
from it. Compared with the reference's two calls on one state
(``tests/fixtures/tiny/continued.*``, ``scripts/reference/make_continued_fixtures.py``) at
temperature 0, within 1e-3."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import AUDIO_TOL, TINY, fixture, max_abs_diff, read_safetensors


@pytest.fixture(scope="module")
def continued():
    return (
        json.loads(fixture(TINY / "continued.json").read_text()),
        read_safetensors(TINY / "continued.safetensors"),
    )


def test_two_calls_continue_as_the_reference(model, reference_state_file, continued):
    meta, tensors = continued
    state = model.get_state_for_audio_prompt(reference_state_file)
    assert len(state) == meta["positions"]["voice"]
    first = model.generate_audio(
        state, meta["first"]["text"], max_tokens=meta["first"]["max_tokens"], copy_state=False
    )
    assert max_abs_diff(first, tensors["first.audio"]) <= AUDIO_TOL
    assert len(state) == meta["positions"]["after_first"]
    chunks = list(model.generate_audio_stream(
        state, meta["second"]["text"], max_tokens=meta["second"]["max_tokens"], copy_state=False
    ))  # fmt: skip
    assert max_abs_diff(np.concatenate(chunks), tensors["second.audio"]) <= AUDIO_TOL
    assert len(state) == meta["positions"]["after_second"]


def test_copy_state_true_leaves_the_state_and_a_stopped_call_too(
    model, reference_state_file, continued
):
    meta, tensors = continued
    state = model.get_state_for_audio_prompt(reference_state_file)
    text, max_tokens = meta["first"]["text"], meta["first"]["max_tokens"]
    copied = model.generate_audio(state, text, max_tokens=max_tokens)
    assert max_abs_diff(copied, tensors["first.copied.audio"]) <= AUDIO_TOL
    assert len(state) == meta["positions"]["voice"]
    stream = model.generate_audio_stream(state, text, max_tokens=max_tokens, copy_state=False)
    next(stream)
    stream.close()
    assert len(state) == meta["positions"]["voice"]
