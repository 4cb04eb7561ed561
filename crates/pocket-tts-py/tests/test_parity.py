"""Parity with the reference's recorded outputs on the tiny model, at temperature 0."""

import numpy as np

from conftest import AUDIO_TOL, max_abs_diff


def test_generate_audio_from_reference_voice_state_matches_reference(model, state, meta, stages):
    gen = meta["generation"]
    audio = model.generate_audio(state, gen["text"], max_tokens=gen["max_tokens"])
    assert isinstance(audio, np.ndarray) and audio.dtype == np.float32 and audio.ndim == 1
    assert max_abs_diff(audio, stages["gen.audio"]) <= AUDIO_TOL


def test_multi_chunk_generation_from_audio_prompt_matches_reference(model, voice_wav, meta, stages):
    mc = meta["multi_chunk"]
    voice = model.get_state_for_audio_prompt(str(voice_wav), truncate=True)
    audio = model.generate_audio(voice, mc["text"], max_tokens=mc["max_tokens"])
    assert max_abs_diff(audio, stages["multi.audio"]) <= AUDIO_TOL


def test_audio_prompt_as_array_equals_the_file(model, voice_wav, meta):
    # The excerpt is 24 kHz mono PCM16: the array the reference's audio_read gives.
    data = voice_wav.read_bytes()
    pcm = np.frombuffer(data[44:], dtype="<i2").astype(np.float32) / 32768.0
    from_file = model.get_state_for_audio_prompt(voice_wav)
    from_array = model.get_state_for_audio_prompt(pcm[None, :])
    text = meta["multi_chunk"]["chunks"][0]
    assert len(from_file) == len(from_array)
    np.testing.assert_array_equal(
        model.generate_audio(from_file, text), model.generate_audio(from_array, text)
    )


def test_audio_is_numpy_without_torch_and_not_copied(model, state):
    audio = model.generate_audio(state, "Hello.")
    assert isinstance(audio, np.ndarray)
    # Owned by the Rust buffer, handed over without a copy.
    assert not audio.flags.owndata
    # torch's .numpy() works too, for code written for the reference.
    plain = audio.numpy()
    assert type(plain) is np.ndarray and np.shares_memory(plain, audio)


def test_sample_rate_and_device(model):
    assert model.sample_rate == 24000
    assert model.device == "cpu"


def test_mimi_dtype_stores_the_decoder_in_16_bits_close_to_f32(model, tiny_dir, state, meta):
    """``mimi_dtype`` (the CLI's ``--mimi-dtype``): f32 by default without ``quantize``;
    an f16 decoder gives audio within 1e-3 of the f32 one (only the weights' rounding
    differs), and the choice shows on the model."""
    from pocket_tts_rs import TTSModel

    gen = meta["generation"]
    half = TTSModel.load_model(
        config=tiny_dir / "config.yaml", temp=0.0, eos_threshold=gen["eos_threshold"],
        mimi_dtype="f16",
    )
    assert model._native.mimi_dtype == "float32"
    assert half._native.mimi_dtype == "float16"
    assert "mimi_dtype=float16" in repr(half)
    a = model.generate_audio(state, gen["text"], max_tokens=gen["max_tokens"])
    b = half.generate_audio(state, gen["text"], max_tokens=gen["max_tokens"])
    assert len(a) == len(b)
    assert 0 < max_abs_diff(a, b) <= 1e-3
