#!/usr/bin/env python3
"""Draws of torch's default CPU generator, for the torch-compatible noise of
crates/pocket-tts-core/src/torch_rng (tests/fixtures/torch_noise.safetensors).

Run inside the reference venv (scripts/reference/setup_venv.sh):

    .venv-reference/bin/python scripts/reference/make_noise_fixtures.py

Each case seeds the default generator with torch.manual_seed(seed) and then draws, as the
reference's FlowLMModel._sample_next_latent does once per frame, `frames` consecutive
float32 tensors of shape [1, ldim] with torch.nn.init.normal_ (no clamp) or
torch.nn.init.trunc_normal_ (noise_clamp set). The tensor "<case>" is [frames, ldim]; the
case's parameters are in the metadata (JSON under the key "cases"), with the torch version
and the CPU capability torch ran with (its AVX2 Box-Muller kernel is used for float32
tensors of 16 or more elements on x86-64 with AVX2).
"""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import safetensors.torch
import torch

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = REPO_ROOT / "tests" / "fixtures" / "torch_noise.safetensors"

SEEDS = [0, 1, 42, 4242, 2**32 + 7]  # the last one: torch keeps the low 32 bits
FRAMES = 24


def cases():
    # (name, seed, ldim, temperature, noise_clamp)
    for seed in SEEDS:
        for ldim in (16, 32):
            yield (f"normal_s{seed}_d{ldim}_t0.7", seed, ldim, 0.7, None)
    for seed in SEEDS[:2]:
        yield (f"normal_s{seed}_d32_t0.3", seed, 32, 0.3, None)
        yield (f"normal_s{seed}_d128_t1", seed, 128, 1.0, None)
        # Not a multiple of 16: torch redraws the last 16 values.
        yield (f"normal_s{seed}_d40_t0.7", seed, 40, 0.7, None)
        # Fewer than 16 values: torch's per-element Box-Muller in double, one value cached.
        yield (f"normal_s{seed}_d7_t0.7", seed, 7, 0.7, None)
    for seed in SEEDS[:3]:
        # Rejection branch of trunc_normal_ (mass inside the bounds > 0.3).
        yield (f"trunc_s{seed}_d32_t0.7_c1", seed, 32, 0.7, 1.0)
        yield (f"trunc_s{seed}_d16_t0.3_c0.5", seed, 16, 0.3, 0.5)
        yield (f"trunc_s{seed}_d32_t0.7_c2.5", seed, 32, 0.7, 2.5)
        # Uniform-proposal branch (mass inside the bounds <= 0.3).
        yield (f"trunc_s{seed}_d32_t0.7_c0.2", seed, 32, 0.7, 0.2)


def draw(seed: int, ldim: int, temp: float, clamp: float | None) -> torch.Tensor:
    torch.manual_seed(seed)
    std = temp**0.5  # as FlowLMModel._sample_next_latent
    frames = []
    for _ in range(FRAMES):
        noise = torch.empty((1, ldim), dtype=torch.float32)
        if clamp is None:
            torch.nn.init.normal_(noise, mean=0.0, std=std)
        else:
            torch.nn.init.trunc_normal_(noise, mean=0.0, std=std, a=-clamp, b=clamp)
        frames.append(noise)
    return torch.cat(frames, dim=0).contiguous()


def main() -> None:
    tensors, meta = {}, []
    for name, seed, ldim, temp, clamp in cases():
        tensors[name] = draw(seed, ldim, temp, clamp)
        meta.append({"name": name, "seed": seed, "ldim": ldim, "temperature": temp,
                     "noise_clamp": clamp, "frames": FRAMES})  # fmt: skip
    info = {
        "cases": meta,
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "machine": platform.machine(),
        "made_by": "scripts/reference/make_noise_fixtures.py",
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    safetensors.torch.save_file(tensors, str(OUT), metadata={"info": json.dumps(info)})
    print(f"wrote {OUT.relative_to(REPO_ROOT)}: {len(tensors)} cases, torch {torch.__version__}, "
          f"{info['cpu_capability']}")  # fmt: skip
    # Sanity: the truncated cases stay inside their bounds.
    for name, seed, ldim, temp, clamp in cases():
        if clamp is not None:
            assert tensors[name].abs().max().item() <= clamp, name
    assert math.isfinite(sum(t.abs().sum().item() for t in tensors.values()))


if __name__ == "__main__":
    main()
