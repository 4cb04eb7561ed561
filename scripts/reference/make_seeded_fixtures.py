#!/usr/bin/env python3
"""Seeded generations at temperature > 0 of the tiny model (tests/fixtures/tiny/seeded.*).

Run inside the reference venv after make_fixtures.py (it reads that script's checkpoint,
config, voice state and EOS threshold, and changes none of its files):

    .venv-reference/bin/python scripts/reference/make_seeded_fixtures.py

Each case is the reference's own generation, as a user runs it:

    model = TTSModel.load_model(config, temp=T, noise_clamp=C, eos_threshold=E)
    torch.manual_seed(seed)
    model.generate_audio_stream(voice_state, text, max_tokens=...)

The latents of every step (raw, before emb_std/emb_mean), the EOS logits and the audio
(Mimi one frame per call) go to seeded.safetensors under "<case>.latents", "<case>.eos_logits"
and "<case>.audio"; the cases' parameters and per-chunk frame counts to seeded.json.
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
TENSORS_FILE = "seeded.safetensors"
META_FILE = "seeded.json"

# (name, seed, temperature, noise_clamp, text, max_tokens)
# clamp 1.0 at T=0.7: trunc_normal_'s rejection branch; clamp 0.2 at T=0.3 (0.37 standard
# deviations): its uniform-proposal branch. The multi-chunk case checks that the text
# prefill of every chunk draws (and drops) one noise tensor, as the reference's does.
CASES = [
    ("t07", 42, 0.7, None, mf.TEXT_B, mf.MAX_TOKENS_B),
    ("t07_clamp1", 7, 0.7, 1.0, mf.TEXT_B, mf.MAX_TOKENS_B),
    ("t03_clamp02", 3, 0.3, 0.2, mf.TEXT_B, mf.MAX_TOKENS_B),
    ("t07_multi", 1234, 0.7, None, mf.TEXT_C, mf.MAX_TOKENS_C),
]


@torch.no_grad()
def main() -> None:
    mc.ensure_tokenizer_symlink(OUT_DIR, mc.assets_dir())
    meta = json.loads((OUT_DIR / mf.META_FILE).read_text())
    eos_threshold = meta["generation"]["eos_threshold"]
    tensors: dict[str, torch.Tensor] = {}
    cases = []
    for name, seed, temp, clamp, text, max_tokens in CASES:
        with mc.working_directory(OUT_DIR):
            model = TTSModel.load_model(
                config=mf.CONFIG_FILE, temp=temp, noise_clamp=clamp, eos_threshold=eos_threshold
            )
            model.eval()
            voice_state = model.get_state_for_audio_prompt(mf.VOICE_STATE_FILE)
        torch.manual_seed(seed)
        audio_chunks, rec = mf.run_generation(model, voice_state, text, max_tokens)
        frame_size = model.mimi.frame_size
        assert all(a.shape[0] == frame_size for a in audio_chunks)
        per_chunk, latents, eos = [], [], []
        total = 0
        for calls in rec.chunks():
            queued = len(calls) - (1 if mf._eos_fired(model, calls) else 0)
            per_chunk.append(queued)
            latents += [c["latent"] for c in calls[:queued]]
            eos += [c["eos_logit"] for c in calls[:queued]]
            total += queued
        assert total == len(audio_chunks), (total, len(audio_chunks))
        tensors[f"{name}.latents"] = torch.cat(latents, dim=1).contiguous()
        tensors[f"{name}.eos_logits"] = torch.stack(eos).contiguous()
        tensors[f"{name}.audio"] = torch.cat(audio_chunks, dim=0).contiguous()
        cases.append({
            "name": name, "seed": seed, "temperature": temp, "noise_clamp": clamp,
            "text": text, "max_tokens": max_tokens, "frames_per_chunk": per_chunk,
        })  # fmt: skip
        print(f"{name}: seed {seed}, T={temp}, clamp={clamp}: frames per chunk {per_chunk}")
    safetensors.torch.save_file(tensors, str(OUT_DIR / TENSORS_FILE))
    info = {
        "cases": cases,
        "eos_threshold": eos_threshold,
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "made_by": "<reference venv>/bin/python scripts/reference/make_seeded_fixtures.py",
    }
    (OUT_DIR / META_FILE).write_text(json.dumps(info, indent=2) + "\n")


if __name__ == "__main__":
    main()
