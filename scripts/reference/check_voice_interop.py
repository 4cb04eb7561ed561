#!/usr/bin/env python3
"""Voice-state interoperability between our Rust CLI and the Python reference (pocket-tts 4.0.1).

Usage (from anywhere, with the reference venv's python; the .sh wrapper builds the CLI first):

    <venv>/bin/python scripts/reference/check_voice_interop.py [--cli target/release/pocket-tts-cli]
        [--work-dir /tmp/pocket-tts-interop]

Uses the tiny fixture model (tests/fixtures/tiny: config.yaml, model.safetensors,
voice_excerpt.wav; tokenizer.model is symlinked from $POCKET_TTS_ASSETS, default
<repo>/../shared/assets, as scripts/reference/README.md says) at temperature 0 with the
fixtures' EOS threshold (meta.json: -12.56).

(a) Rust-exported state, used by Python. `pocket-tts-cli export-voice voice_excerpt.wav
    ours.safetensors` and `python -m pocket_tts export-voice voice_excerpt.wav py.safetensors`;
    the two files are compared tensor by tensor (informative); then the reference generates
    in process from `TTSModel.get_state_for_audio_prompt("ours.safetensors")` and from
    `get_state_for_audio_prompt("py.safetensors")`: the float audio must match within 1e-4,
    with the same number of samples.
(b) Python-exported state, used by Rust. `pocket-tts-cli generate --voice py.safetensors` vs
    `pocket-tts-cli generate --voice voice_excerpt.wav`: the WAVs must have the same length
    and differ by at most 1 LSB.

Both parts use text B (one chunk, EOS at step 47) and the 3-chunk text C of the fixtures
(EOS fires in every chunk), so the stop decisions are exercised too. Exit status 1 on any
mismatch, 2 on a setup error.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
from safetensors.numpy import load_file

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "tiny"
AUDIO_TOL = 1e-4
LSB = 1.0 / 32768


def setup_error(msg: str) -> None:
    print(f"check_voice_interop: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd: list[str], cwd: Path) -> None:
    print(f"$ {shlex.join(cmd)}   (cwd {cwd})", flush=True)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        setup_error(f"command failed with exit status {proc.returncode}")


def ensure_tokenizer() -> None:
    link = FIXTURE / "tokenizer.model"
    assets = Path(os.environ.get("POCKET_TTS_ASSETS", REPO.parent / "shared" / "assets")).resolve()
    target = assets / "tokenizer.model"
    if not target.is_file():
        setup_error(f"{target} not found (set POCKET_TTS_ASSETS)")
    if link.is_symlink() or link.exists():
        if link.resolve() == target.resolve():
            return
        link.unlink()
    link.symlink_to(target)
    print(f"symlinked {link} -> {target}")


def compare_states(ours: Path, ref: Path) -> None:
    a, b = load_file(str(ours)), load_file(str(ref))
    if set(a) != set(b):
        print(f"  state keys differ: only ours {sorted(set(a) - set(b))}, "
              f"only reference {sorted(set(b) - set(a))}")
    worst = 0.0
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if x.shape != y.shape or x.dtype != y.dtype:
            print(f"  {key}: ours {x.dtype}{list(x.shape)} vs reference {y.dtype}{list(y.shape)}")
            continue
        if x.dtype.kind == "f":
            both_nan = np.isnan(x) & np.isnan(y)
            d = np.where(both_nan, 0.0, np.abs(x.astype(np.float64) - y.astype(np.float64)))
            d = float(np.nan_to_num(d, nan=np.inf).max()) if d.size else 0.0
            worst = max(worst, d)
            print(f"  {key}: {x.dtype}{list(x.shape)} max abs diff {d:.3e}")
        else:
            print(f"  {key}: {x.dtype}{list(x.shape)} equal={np.array_equal(x, y)} "
                  f"(ours {x.ravel()[:4].tolist()}, reference {y.ravel()[:4].tolist()})")
    print(f"  state max abs diff (float tensors): {worst:.3e}")


def python_generate(model, voice: str, text: str, max_tokens: int) -> np.ndarray:
    state = model.get_state_for_audio_prompt(voice)
    chunks = model.generate_audio_stream(state, text, max_tokens=max_tokens)
    return torch.cat(list(chunks)).numpy().astype(np.float64)


def read_wav(path: Path) -> np.ndarray:
    data, sr = sf.read(str(path), dtype="int16")
    assert sr == 24000, (path, sr)
    return data.astype(np.float64) / 32768


def check(name: str, x: np.ndarray, y: np.ndarray, tol: float, unit: str = "") -> bool:
    n = min(x.size, y.size)
    err = float(np.abs(x[:n] - y[:n]).max()) if n else 0.0
    ok = x.size == y.size and err <= tol
    extra = f" ({err / LSB:.2f} LSB)" if unit == "lsb" else ""
    print(f"  {name}: samples {x.size} vs {y.size}, max abs error {err:.3e}{extra}, "
          f"tolerance {tol:.3e} -> {'OK' if ok else 'MISMATCH'}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cli", type=Path, default=REPO / "target" / "release" / "pocket-tts-cli")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/pocket-tts-interop"))
    args = parser.parse_args()
    cli = args.cli.resolve()
    if not os.access(cli, os.X_OK):
        setup_error(f"{cli} not found: cargo build --release -p pocket-tts-cli")
    work = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ensure_tokenizer()

    meta = json.loads((FIXTURE / "meta.json").read_text())
    eos = meta["generation"]["eos_threshold"]
    texts = [  # (label, text, max_tokens)
        ("text B", meta["generation"]["text"], meta["generation"]["max_tokens"]),
        ("text C", meta["multi_chunk"]["text"], meta["multi_chunk"]["max_tokens"]),
    ]
    config = FIXTURE / "config.yaml"
    audio = FIXTURE / "voice_excerpt.wav"
    ours_state = work / "ours.safetensors"
    py_state = work / "py.safetensors"
    for p in (ours_state, py_state):
        p.unlink(missing_ok=True)

    print("== export the voice state with both tools")
    run([str(cli), "export-voice", str(audio), str(ours_state), "--config", str(config)], FIXTURE)
    # The reference resolves the config's relative paths against its cwd.
    run([sys.executable, "-m", "pocket_tts", "export-voice", audio.name, str(py_state),
         "--config", config.name], FIXTURE)
    print("ours vs reference state files:")
    compare_states(ours_state, py_state)

    ok = True
    print(f"\n== (a) reference generates from our state vs its own (temperature 0, EOS {eos})")
    from pocket_tts.models.tts_model import TTSModel

    cwd = Path.cwd()
    os.chdir(FIXTURE)
    try:
        model = TTSModel.load_model(config=config.name, temp=0.0, eos_threshold=eos)
    finally:
        os.chdir(cwd)
    model.eval()
    # Frame-by-frame Mimi decoding: the CLI's default groups frames by thread timing,
    # which changes float rounding (~1e-7) between runs.
    model.max_decoder_frames_per_call = 1
    with torch.no_grad():
        for label, text, max_tokens in texts:
            from_ours = python_generate(model, str(ours_state), text, max_tokens)
            from_py = python_generate(model, str(py_state), text, max_tokens)
            ok &= check(f"{label} (max_tokens {max_tokens})", from_ours, from_py, AUDIO_TOL)

    print("\n== (b) our CLI generates from the reference's state vs from the audio file")
    for i, (label, text, max_tokens) in enumerate(texts):
        outs = {}
        for kind, voice in (("pystate", py_state), ("audio", audio)):
            out = work / f"ours_{i}_{kind}.wav"
            out.unlink(missing_ok=True)
            run([str(cli), "generate", "--config", str(config), "--voice", str(voice),
                 "--text", text, "--temperature", "0", "--eos-threshold", str(eos),
                 "--max-tokens", str(max_tokens), "--output-path", str(out)], work)
            outs[kind] = read_wav(out)
        ok &= check(f"{label} (max_tokens {max_tokens})", outs["pystate"], outs["audio"],
                    LSB * 1.000001, unit="lsb")
        if label == "text C":
            # Informative: the committed reference CLI output of the same command.
            ref = read_wav(FIXTURE / "multi_chunk.wav")
            n = min(ref.size, outs["pystate"].size)
            err = float(np.abs(ref[:n] - outs["pystate"][:n]).max()) if n else 0.0
            print(f"  (info) text C from py.safetensors vs the reference CLI's multi_chunk.wav: "
                  f"samples {outs['pystate'].size} vs {ref.size}, max abs error {err / LSB:.0f} LSB")

    print("\nPASS" if ok else "\nFAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
