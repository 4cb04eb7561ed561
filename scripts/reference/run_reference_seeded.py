#!/usr/bin/env python3
"""The reference CLI's `generate`, with the sampling noise seeded like a Python user does it.

    python run_reference_seeded.py SEED [pocket_tts generate flags...]

runs `python -m pocket_tts generate ...` unchanged, except that `torch.manual_seed(SEED)` is
called right before the generation (after the model load and the voice prompt, which draw
from torch's generator too), as in

    model = TTSModel.load_model(...); state = model.get_state_for_audio_prompt(voice)
    torch.manual_seed(SEED); model.generate_audio(state, text)

so that its output is comparable with `pocket-tts-cli generate --seed SEED`.
"""

from __future__ import annotations

import sys

import torch

from pocket_tts.main import cli_app
from pocket_tts.models.tts_model import TTSModel


def main() -> None:
    seed = int(sys.argv[1])
    original = TTSModel.generate_audio_stream

    def seeded(self, *args, **kwargs):
        torch.manual_seed(seed)
        return original(self, *args, **kwargs)

    TTSModel.generate_audio_stream = seeded
    sys.argv = ["pocket-tts", "generate", *sys.argv[2:]]
    cli_app()


if __name__ == "__main__":
    main()
