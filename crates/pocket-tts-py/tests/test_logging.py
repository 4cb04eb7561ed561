"""Log records go to the ``pocket_tts_rs`` logger: the Python side's and the Rust core's."""

import logging


def test_generation_logs_rtf_and_core_warnings_to_pocket_tts_rs(model, state, caplog):
    with caplog.at_level(logging.INFO, logger="pocket_tts_rs"):
        # max_tokens=50, no EOS within the chunk's length limit at this threshold: the
        # core warns, as the reference does.
        saved = model.eos_threshold
        model.eos_threshold = 1e9
        try:
            model.generate_audio(state, "Hello.")
        finally:
            model.eos_threshold = saved
    records = [r for r in caplog.records if r.name == "pocket_tts_rs"]
    assert any("faster than real-time" in r.getMessage() for r in records)
    warnings = [r for r in records if r.levelno == logging.WARNING]
    assert any("without EOS" in r.getMessage() for r in warnings)
    assert all(getattr(r, "rust_target", "pocket_tts").startswith("pocket_tts") for r in records)


def test_quiet_by_default(model, state, capfd):
    logging.getLogger("pocket_tts_rs").setLevel(logging.ERROR)
    try:
        model.generate_audio(state, "Hello.")
    finally:
        logging.getLogger("pocket_tts_rs").setLevel(logging.NOTSET)
    out, err = capfd.readouterr()
    assert out == "" and err == ""
