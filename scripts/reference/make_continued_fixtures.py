#!/usr/bin/env python3
"""Generations with `copy_state=False` of the tiny model (tests/fixtures/tiny/continued.*).

Run inside the reference venv after make_fixtures.py (it reads that script's checkpoint,
config, voice state and EOS threshold, and changes none of its files):

    .venv-reference/bin/python scripts/reference/make_continued_fixtures.py

At temperature 0, one voice state, two calls one after the other, as a user runs them:

    state = model.get_state_for_audio_prompt("voice_state.safetensors")
    first = model.generate_audio_stream(state, TEXT_C, copy_state=False)   # 3 chunks
    second = model.generate_audio_stream(state, TEXT_B, copy_state=False)  # continues

With `copy_state=False` every chunk continues from the FlowLM state the previous one left
(the reference mutates `state` in place), and so does the second call. The audio of both
calls (Mimi one frame per call, as our decoder runs) goes to continued.safetensors as
"first.audio" and "second.audio", with "first.copied.audio", the first call with
`copy_state=True`, to show the chaining changes the output; the texts, token limits and
the state's final length (`current_end` positions) to continued.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import safetensors.torch
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_checkpoint as mc  # noqa: E402
import make_fixtures as mf  # noqa: E402

from pocket_tts.models.tts_model import TTSModel  # noqa: E402

OUT_DIR = mf.DEFAULT_OUT


def generate(model: TTSModel, state, text: str, max_tokens: int, copy_state: bool) -> torch.Tensor:
    model.max_decoder_frames_per_call = 1
    chunks = [
        c.clone()
        for c in model.generate_audio_stream(
            model_state=state, text_to_generate=text, max_tokens=max_tokens,
            copy_state=copy_state,
        )
    ]  # fmt: skip
    return torch.cat(chunks, dim=0).contiguous()


@torch.no_grad()
def main() -> None:
    mc.ensure_tokenizer_symlink(OUT_DIR, mc.assets_dir())
    meta = json.loads((OUT_DIR / mf.META_FILE).read_text())
    eos_threshold = meta["generation"]["eos_threshold"]
    with mc.working_directory(OUT_DIR):
        model = TTSModel.load_model(config=mf.CONFIG_FILE, temp=0.0, eos_threshold=eos_threshold)
        model.eval()
        state = model.get_state_for_audio_prompt(mf.VOICE_STATE_FILE)
        fresh = model.get_state_for_audio_prompt(mf.VOICE_STATE_FILE)
    start = model._flow_lm_current_end(state)
    tensors = {
        "first.copied.audio": generate(model, fresh, mf.TEXT_C, mf.MAX_TOKENS_C, True),
        "first.audio": generate(model, state, mf.TEXT_C, mf.MAX_TOKENS_C, False),
    }
    after_first = model._flow_lm_current_end(state)
    tensors["second.audio"] = generate(model, state, mf.TEXT_B, mf.MAX_TOKENS_B, False)
    after_second = model._flow_lm_current_end(state)
    safetensors.torch.save_file(tensors, str(OUT_DIR / "continued.safetensors"))
    info = {
        "first": {"text": mf.TEXT_C, "max_tokens": mf.MAX_TOKENS_C},
        "second": {"text": mf.TEXT_B, "max_tokens": mf.MAX_TOKENS_B},
        "eos_threshold": eos_threshold,
        "positions": {"voice": start, "after_first": after_first, "after_second": after_second},
        "made_by": "<reference venv>/bin/python scripts/reference/make_continued_fixtures.py",
    }
    (OUT_DIR / "continued.json").write_text(json.dumps(info, indent=2) + "\n")
    print(json.dumps(info["positions"]), {k: tuple(v.shape) for k, v in tensors.items()})


if __name__ == "__main__":
    main()
