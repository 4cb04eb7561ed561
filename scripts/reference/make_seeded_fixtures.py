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

torch's generator state (`torch.get_rng_state()`, 5056 bytes) right before and right after
each generation goes to "<case>.rng_before" and "<case>.rng_after": the state a program's
torch generator is in after the reference's generation, which ours must hand back. Cases
with a "prelude" draw from the generator between `manual_seed` and the generation, so the
generation starts mid-way through the Mersenne Twister's words and with torch's cached
double normal set (a `normal_` of fewer than 16 values caches the second value of its last
Box-Muller pair); the generation is then reproduced from "<case>.rng_before", not the seed.
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
# (name, seed, temperature, noise_clamp, text, max_tokens, prelude): generated from the
# state the prelude leaves. At temperature 0 the noise is zero, but torch draws it all the
# same: the state after the generation shows it.
PRELUDE = "torch.nn.init.normal_(torch.empty(7)); torch.rand(100)"
STATE_CASES = [
    ("t07_state", 99, 0.7, None, mf.TEXT_B, mf.MAX_TOKENS_B, PRELUDE),
    ("t0_state", 5, 0.0, None, mf.TEXT_B, mf.MAX_TOKENS_B, PRELUDE),
]


def rng_state() -> torch.Tensor:
    return torch.get_rng_state().clone()


@torch.no_grad()
def main() -> None:
    mc.ensure_tokenizer_symlink(OUT_DIR, mc.assets_dir())
    meta = json.loads((OUT_DIR / mf.META_FILE).read_text())
    eos_threshold = meta["generation"]["eos_threshold"]
    tensors: dict[str, torch.Tensor] = {}
    cases = []
    for name, seed, temp, clamp, text, max_tokens, prelude in [
        (*c, None) for c in CASES
    ] + STATE_CASES:
        with mc.working_directory(OUT_DIR):
            model = TTSModel.load_model(
                config=mf.CONFIG_FILE, temp=temp, noise_clamp=clamp, eos_threshold=eos_threshold
            )
            model.eval()
            voice_state = model.get_state_for_audio_prompt(mf.VOICE_STATE_FILE)
        torch.manual_seed(seed)
        if prelude is not None:
            exec(prelude)
        tensors[f"{name}.rng_before"] = rng_state()
        audio_chunks, rec = mf.run_generation(model, voice_state, text, max_tokens)
        tensors[f"{name}.rng_after"] = rng_state()
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
            "prelude": prelude,
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
