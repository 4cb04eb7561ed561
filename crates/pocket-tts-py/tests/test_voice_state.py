"""Voice states: the reference's exported states load here, ours load back."""

import numpy as np
import pytest

from conftest import TINY, read_safetensors


def test_reference_state_loads_with_its_geometry(state, meta):
    shape = meta["voice"]["state_tensors"]["transformer.layers.0.self_attn/cache"]
    assert len(state) == shape[2]  # positions: 1 BOS + 20 latent frames
    assert state.kv_heads == shape[3] and state.head_dim == shape[4]


def test_exported_state_round_trips_and_keeps_the_reference_format(model, state, tmp_path):
    from pocket_tts_rs import export_model_state

    out = tmp_path / "voice.safetensors"
    export_model_state(state, out)
    ours = read_safetensors(out)
    ref = read_safetensors(TINY / "voice_state.safetensors")
    assert set(ours) == set(ref)
    for name in ref:
        if name.endswith("/cache"):
            # The reference's cache is sized to the prompt; same values.
            np.testing.assert_array_equal(ours[name], ref[name])
    again = model.get_state_for_audio_prompt(str(out))
    text = "Hello, voice."
    np.testing.assert_array_equal(
        model.generate_audio(state, text), model.generate_audio(again, text)
    )


def test_state_from_audio_exports_and_reloads(model, voice_wav, tmp_path):
    from pocket_tts_rs import export_model_state

    voice = model.get_state_for_audio_prompt(voice_wav)
    path = tmp_path / "cloned.safetensors"
    export_model_state(voice, str(path))
    again = model.get_state_for_audio_prompt(path)
    np.testing.assert_array_equal(
        model.generate_audio(voice, "Same voice."), model.generate_audio(again, "Same voice.")
    )


def test_export_refuses_what_is_not_a_state(tmp_path):
    from pocket_tts_rs import export_model_state

    with pytest.raises(TypeError, match="ModelState"):
        export_model_state({"transformer": {}}, tmp_path / "x.safetensors")
