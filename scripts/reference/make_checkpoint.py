#!/usr/bin/env python3
"""Build a random-weight Pocket TTS checkpoint with the reference's own classes.

Usage:
    python make_checkpoint.py --size {tiny,full} --seed N --out OUT_DIR [--config OUT_DIR/config.yaml]

What it does (pocket-tts==4.0.1, see scripts/reference/README.md):

1. Writes a config WITHOUT any weights_path to a temporary directory and calls
   ``TTSModel.load_model(config=...)``: the reference then builds an uninitialised
   (random, PyTorch default init) model. ``torch.manual_seed(seed)`` is called first, so
   the default init is reproducible.
2. Randomises what the default init leaves trivial, so the parity tests exercise it:
   - ``flow_lm.speaker_proj_weight`` (zeros after load_model): normal, std 1/sqrt(in_features);
   - ``flow_lm.emb_std`` buffer (ones): uniform [0.5, 1.5);
   - ``flow_lm.emb_mean`` buffer (zeros): normal, std 0.1;
   - every LayerNorm weight/bias (torch's nn.LayerNorm and the flow head's own LayerNorm):
     1 + 0.1*randn / 0.1*randn;
   - every RMSNorm alpha of the flow head's time embedders: 1 + 0.1*randn;
   - every LayerScale scale (Mimi transformers, init 0.01 everywhere): 0.01 * (1 + 0.5*randn),
     i.e. per channel, some negative;
   - ``flow_lm.out_eos``: weight ~ N(0, 1), bias ~ N(0, 0.01) (the default init makes the EOS
     logit of a random model drift by ~0.01 per frame; this makes it ~0.1, so that an EOS
     threshold can be chosen with a wide margin).
3. Saves ``OUT_DIR/model.safetensors`` = ``tts_model.state_dict()`` (contiguous; the key
   names of the released files, ``flow_lm.*`` and ``mimi.*``).
4. Writes ``OUT_DIR/config.yaml`` (or --config) with ``weights_path: model.safetensors`` and
   ``tokenizer_path: tokenizer.model`` (both relative to the config's directory; the Python
   reference resolves them against its cwd, so run it with cwd=OUT_DIR, where
   ``tokenizer.model`` is a symlink to the asset: this script creates that symlink, which is
   NOT committed).
5. Reloads the written config with the reference (cwd=OUT_DIR) and checks that every
   tensor round-trips bit-exactly.

The tokenizer is the official SentencePiece model from the assets directory
($POCKET_TTS_ASSETS, default <repo>/../shared/assets).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import math
import os
import sys
import tempfile
from pathlib import Path

import safetensors.torch
import torch
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
TOKENIZER_FILE_NAME = "tokenizer.model"
WEIGHTS_FILE_NAME = "model.safetensors"


def assets_dir() -> Path:
    env = os.environ.get("POCKET_TTS_ASSETS")
    path = Path(env) if env else REPO_ROOT.parent / "shared" / "assets"
    path = path.resolve()
    if not (path / TOKENIZER_FILE_NAME).is_file():
        sys.exit(f"tokenizer.model not found in assets dir {path} (set POCKET_TTS_ASSETS)")
    return path


def english_config() -> dict:
    from pocket_tts.utils.config import CONFIGS_DIR

    with open(CONFIGS_DIR / "english.yaml", encoding="utf-8") as f:
        return yaml.safe_load(f)


def build_config_dict(size: str, tokenizer_path: str) -> dict:
    """The config of a random model: english.yaml's, minus its weights, plus our tokenizer."""
    english = english_config()
    cfg: dict = {}
    # Top-level generation settings as in english.yaml (replace_characters, default_temperature);
    # the weights paths point at the Hugging Face hub and are dropped.
    for key, value in english.items():
        if key in ("weights_path", "weights_path_without_voice_cloning", "flow_lm", "mimi"):
            continue
        cfg[key] = copy.deepcopy(value)
    if size == "full":
        flow_lm = copy.deepcopy(english["flow_lm"])
        mimi = copy.deepcopy(english["mimi"])
    elif size == "tiny":
        flow_lm = {
            "insert_bos_before_voice": True,
            "dtype": "float32",
            "flow": {"depth": 2, "dim": 32},
            "transformer": {
                "d_model": 64,
                "hidden_scale": 4,
                "max_period": 10000,
                "num_heads": 4,
                "num_layers": 2,
            },
            "lookup_table": {"dim": 64, "n_bins": 4000},
        }
        mimi = {
            "dtype": "float32",
            "sample_rate": 24000,
            "inner_dim": 16,
            "outer_dim": 48,
            "channels": 1,
            "frame_rate": 12.5,
            "seanet": {
                "dimension": 48,
                "channels": 1,
                "n_filters": 8,
                "n_residual_layers": 1,
                "ratios": [6, 5, 4],
                "kernel_size": 7,
                "residual_kernel_size": 3,
                "last_kernel_size": 3,
                "dilation_base": 2,
                "pad_mode": "constant",
                "compress": 2,
            },
            "transformer": {
                "d_model": 32,
                "num_heads": 4,
                "num_layers": 2,
                "layer_scale": 0.01,
                "context": 250,
                "dim_feedforward": 64,
                "input_dimension": 48,
                "output_dimensions": [48],
            },
            "quantizer": {"dimension": 16, "output_dimension": 48},
        }
    else:
        raise ValueError(size)
    flow_lm.pop("weights_path", None)
    mimi.pop("weights_path", None)
    flow_lm["lookup_table"]["tokenizer"] = "sentencepiece"
    flow_lm["lookup_table"]["tokenizer_path"] = tokenizer_path
    cfg["flow_lm"] = flow_lm
    cfg["mimi"] = mimi
    return cfg


def write_yaml(cfg: dict, path: Path, header: str = "") -> None:
    text = yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True, default_flow_style=False)
    path.write_text(header + text, encoding="utf-8")


@contextlib.contextmanager
def working_directory(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def ensure_tokenizer_symlink(out_dir: Path, assets: Path) -> Path:
    link = out_dir / TOKENIZER_FILE_NAME
    target = assets / TOKENIZER_FILE_NAME
    if link.is_symlink() or link.exists():
        if link.resolve() == target.resolve():
            return link
        link.unlink()
    link.symlink_to(target)
    return link


@torch.no_grad()
def randomise(tts_model, seed: int) -> list[str]:
    """Make the parameters the default init leaves trivial non-trivial. Returns what changed."""
    from pocket_tts.modules.layer_scale import LayerScale
    from pocket_tts.modules.mlp import LayerNorm as FlowLayerNorm
    from pocket_tts.modules.mlp import RMSNorm

    gen = torch.Generator().manual_seed(seed + 1)
    changed = []
    flow_lm = tts_model.flow_lm

    w = flow_lm.speaker_proj_weight
    flow_lm.speaker_proj_weight.copy_(
        torch.randn(w.shape, generator=gen, dtype=w.dtype) / math.sqrt(w.shape[1])
    )
    changed.append("flow_lm.speaker_proj_weight ~ N(0, 1/in_features)")

    ldim = flow_lm.emb_std.shape[0]
    flow_lm.emb_std.copy_(0.5 + torch.rand(ldim, generator=gen, dtype=flow_lm.emb_std.dtype))
    changed.append("flow_lm.emb_std ~ U[0.5, 1.5)")
    flow_lm.emb_mean.copy_(0.1 * torch.randn(ldim, generator=gen, dtype=flow_lm.emb_mean.dtype))
    changed.append("flow_lm.emb_mean ~ N(0, 0.1^2)")

    for top_name, top in (("flow_lm", tts_model.flow_lm), ("mimi", tts_model.mimi)):
        for name, module in top.named_modules():
            full = f"{top_name}.{name}"
            if isinstance(module, torch.nn.LayerNorm) or (
                isinstance(module, FlowLayerNorm) and hasattr(module, "weight")
            ):
                if getattr(module, "weight", None) is not None:
                    n = module.weight.shape
                    module.weight.copy_(1.0 + 0.1 * torch.randn(n, generator=gen))
                if getattr(module, "bias", None) is not None:
                    n = module.bias.shape
                    module.bias.copy_(0.1 * torch.randn(n, generator=gen))
                changed.append(f"{full} (LayerNorm) weight 1+0.1*randn, bias 0.1*randn")
            elif isinstance(module, RMSNorm):
                module.alpha.copy_(1.0 + 0.1 * torch.randn(module.alpha.shape, generator=gen))
                changed.append(f"{full} (RMSNorm) alpha 1+0.1*randn")
            elif isinstance(module, LayerScale):
                module.scale.mul_(1.0 + 0.5 * torch.randn(module.scale.shape, generator=gen))
                changed.append(f"{full} (LayerScale) scale *= 1+0.5*randn")

    # The EOS head only feeds the stop decision. Its default init (uniform +-1/sqrt(d)) makes
    # the logit drift by ~0.01 per frame on a random model; a larger weight makes it move by
    # ~0.1, so an EOS threshold can be picked with a wide margin on both sides.
    eos = flow_lm.out_eos
    eos.weight.copy_(torch.randn(eos.weight.shape, generator=gen))
    eos.bias.copy_(0.1 * torch.randn(eos.bias.shape, generator=gen))
    changed.append("flow_lm.out_eos weight ~ N(0, 1), bias ~ N(0, 0.1^2)")
    return changed


def contiguous_state_dict(tts_model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone().contiguous() for k, v in tts_model.state_dict().items()}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def make_checkpoint(size: str, seed: int, out_dir: Path, config_path: Path | None = None) -> dict:
    """Build, save and verify the checkpoint. Returns a small report (dict)."""
    from pocket_tts.models.tts_model import TTSModel

    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    config_path = (config_path or out_dir / "config.yaml").resolve()
    if config_path.parent != out_dir:
        sys.exit("--config must be inside --out (weights_path is relative to the config's dir)")
    assets = assets_dir()

    # 1. Random model from a weightless config (absolute tokenizer path).
    with tempfile.TemporaryDirectory() as tmp:
        random_cfg = build_config_dict(size, str(assets / TOKENIZER_FILE_NAME))
        random_cfg_path = Path(tmp) / "random_model.yaml"
        write_yaml(random_cfg, random_cfg_path)
        torch.manual_seed(seed)
        tts_model = TTSModel.load_model(config=random_cfg_path)
    tts_model.eval()

    # 2. Non-trivial norms, scales, statistics, speaker projection.
    changed = randomise(tts_model, seed)

    # 3. Weights with the released key names.
    state = contiguous_state_dict(tts_model)
    weights_path = out_dir / WEIGHTS_FILE_NAME
    safetensors.torch.save_file(state, str(weights_path))

    # 4. Portable config: relative weights and tokenizer paths.
    final_cfg = {"weights_path": WEIGHTS_FILE_NAME, **build_config_dict(size, TOKENIZER_FILE_NAME)}
    header = (
        f"# Random-weight Pocket TTS checkpoint ({size}, seed {seed}), written by\n"
        f"# scripts/reference/make_checkpoint.py with pocket-tts==4.0.1.\n"
        f"# Relative paths are relative to this file's directory; the Python reference\n"
        f"# resolves them against its cwd, so run it from this directory, with\n"
        f"# {TOKENIZER_FILE_NAME} a symlink to the official asset (not committed).\n"
    )
    write_yaml(final_cfg, config_path, header)
    ensure_tokenizer_symlink(out_dir, assets)

    # 5. Round trip through the reference's own loader.
    with working_directory(out_dir):
        reloaded = TTSModel.load_model(config=config_path.name)
    reloaded_state = reloaded.state_dict()
    assert set(reloaded_state) == set(state), set(reloaded_state) ^ set(state)
    for key, value in state.items():
        other = reloaded_state[key]
        assert other.dtype == value.dtype and torch.equal(other, value), key

    n_params = sum(v.numel() for v in state.values())
    report = {
        "size": size,
        "seed": seed,
        "config": str(config_path),
        "weights": str(weights_path),
        "weights_bytes": weights_path.stat().st_size,
        "weights_sha256": sha256_file(weights_path),
        "num_tensors": len(state),
        "num_values": n_params,
        "randomised": changed,
    }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=["tiny", "full"], required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument(
        "--config", type=Path, default=None, help="config to write (default OUT/config.yaml)"
    )
    args = parser.parse_args()
    report = make_checkpoint(args.size, args.seed, args.out, args.config)
    print(f"wrote {report['weights']} ({report['weights_bytes'] / 1e6:.2f} MB, "
          f"{report['num_tensors']} tensors, {report['num_values']:,} values, "
          f"sha256 {report['weights_sha256']})")
    print(f"wrote {report['config']}")
    if args.size == "tiny" and report["weights_bytes"] >= 3_000_000:
        sys.exit("tiny checkpoint is not < 3 MB")


if __name__ == "__main__":
    main()
