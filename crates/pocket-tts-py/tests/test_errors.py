"""Every error class, as the reference documents them, with a message naming the
file, argument or value."""

import shutil

import numpy as np
import pytest

from pocket_tts_rs import TTSModel, export_model_state


def test_missing_config_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.yaml"):
        TTSModel.load_model(config=tmp_path / "nowhere.yaml")


def test_unknown_language_is_file_not_found():
    with pytest.raises(FileNotFoundError, match="klingon"):
        TTSModel.load_model(language="klingon")


def test_missing_weights_is_file_not_found(tiny_dir, tmp_path):
    shutil.copy(tiny_dir / "config.yaml", tmp_path / "config.yaml")
    (tmp_path / "tokenizer.model").symlink_to(tiny_dir / "tokenizer.model")
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        TTSModel.load_model(config=tmp_path / "config.yaml")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"language": "english", "config": "x.yaml"}, "both config and language"),
        ({"config": "model.json"}, "YAML"),
        ({"language": "english", "checkpoint": "run.pt"}, "checkpoint"),
        ({"language": "english", "dtype": "int4"}, "dtype"),
        ({"language": "english", "mimi_dtype": "f8"}, "mimi_dtype"),
        ({"language": "english", "threads": 0}, "threads"),
        ({"language": "english", "quantize": "q3"}, "quantize"),
    ],
)
def test_bad_load_arguments_are_value_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TTSModel.load_model(**kwargs)


@pytest.mark.parametrize(
    "quantize, name", [(True, "int8"), ("int8", "int8"), ("Q4", "q4"), (False, None)]
)
def test_quantize_modes(tiny_dir, quantize, name):
    m = TTSModel.load_model(config=tiny_dir / "config.yaml", quantize=quantize)
    assert m.quantization == name
    assert m.quantize == (name is not None)


def test_invalid_config_is_value_error(tiny_dir, tmp_path):
    text = (tiny_dir / "config.yaml").read_text() + "\nnot_a_field: 1\n"
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(ValueError, match="not_a_field"):
        TTSModel.load_model(config=tmp_path / "config.yaml")


def test_missing_voice_file_is_file_not_found(model, tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.wav"):
        model.get_state_for_audio_prompt(str(tmp_path / "absent.wav"))


def test_corrupt_voice_state_is_value_error(model, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    with pytest.raises(ValueError, match="bad.safetensors"):
        model.get_state_for_audio_prompt(bad)


def test_unreadable_audio_is_value_error(model, tmp_path):
    bad = tmp_path / "noise.wav"
    bad.write_bytes(b"RIFF0000WAVEjunkjunkjunk")
    with pytest.raises(ValueError, match="noise.wav"):
        model.get_state_for_audio_prompt(bad)


def test_predefined_voice_with_a_custom_config_is_value_error(model):
    with pytest.raises(ValueError, match="alba"):
        model.get_state_for_audio_prompt("alba")


@pytest.mark.parametrize(
    "audio, match",
    [
        (np.zeros((1, 1, 10), np.float32), "shape"),
        (np.zeros((1, 0), np.float32), "empty"),
        (np.array([[0.0, np.nan]], np.float32), "NaN"),
        (object(), "array"),
    ],
)
def test_bad_audio_arrays_are_value_errors(model, audio, match):
    with pytest.raises(ValueError, match=match):
        model.get_state_for_audio_prompt(audio)


def test_empty_text_is_value_error(model, state):
    with pytest.raises(ValueError, match="text"):
        model.generate_audio(state, "   ")
    with pytest.raises(ValueError, match="text"):
        list(model.generate_audio_stream(state, ""))


def test_out_of_range_parameter_is_value_error_naming_it(model, state):
    saved = model.temp
    model.temp = -1.0
    try:
        with pytest.raises(ValueError, match="temp"):
            model.generate_audio(state, "Hello.")
    finally:
        model.temp = saved
    with pytest.raises(ValueError, match="max_tokens"):
        model.generate_audio(state, "Hello.", max_tokens=0)


def test_wrong_state_type_is_type_error(model):
    with pytest.raises(TypeError, match="model_state"):
        model.generate_audio({"transformer": {}}, "Hello.")


def test_unwritable_export_is_os_error(state, tmp_path):
    with pytest.raises(OSError, match="missing_dir"):
        export_model_state(state, tmp_path / "missing_dir" / "v.safetensors")
